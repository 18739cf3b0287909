"""advisor's house rules, read from the imports of every module (issue 36): a wing imports its
own modules and those of the wings below it (LAYERS, from the ground up), never one above it,
and no two modules import each other, directly or round a circle. Every import counts, those
inside functions too (a lazy import is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "advisor"

# From the ground up. The top level (cli, commands/, webapi/, __main__) stands on all of them.
LAYERS = ("core", "arch", "data", "memory", "perf", "money", "advice", "report")
TOP = len(LAYERS)


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (p, is_pkg)
    return out


MODULES = _modules()


def _resolve(module: str | None, level: int, here: str, is_pkg: bool) -> str:
    if level == 0:
        return module or ""
    base = here.split(".") if is_pkg else here.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imports_of(name: str) -> set[str]:
    """The advisor modules that module `name` imports (a package's module when `from pkg import
    mod` names one, else the package itself)."""
    path, is_pkg = MODULES[name]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module, node.level, name, is_pkg)
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in MODULES:
                    out.add(sub)
                elif base in MODULES:
                    out.add(base)
    out.discard(name)
    return out


GRAPH = {m: imports_of(m) for m in MODULES}


def layer(name: str) -> int:
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    if name == "advisor":
        return -1  # the package's own __init__: imports nothing of advisor
    return TOP


def test_every_module_sits_in_a_known_place():
    """A new module goes into a wing (or is a face at the top); a stray top-level module is a
    decision to make, not a default (scripts/restructure_advisor.py lists them)."""
    top = {m for m in MODULES if m.count(".") == 1 and not MODULES[m][1]}
    faces = {"advisor.__main__", "advisor.cli", "advisor.webapi"}
    assert top <= faces, f"top-level modules outside the wings: {sorted(top - faces)}"
    wings = {m.split(".")[1] for m in MODULES if m.count(".") >= 1 and MODULES[m][1]}
    # the faces' packages: the CLI's sub-commands, the web API (one module per calculator)
    assert wings <= set(LAYERS) | {"commands", "webapi"}, f"unknown sub-packages: {sorted(wings)}"


def test_no_module_imports_one_above_it():
    upward = sorted(
        f"{m} ({LAYERS[layer(m)] if layer(m) < TOP else 'top'}) imports {d} ({LAYERS[layer(d)]})"
        for m, deps in GRAPH.items()
        for d in deps
        if layer(d) > layer(m)
    )
    assert not upward, "upward imports:\n" + "\n".join(upward)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan 1972, SIAM J.
    Comput. 1(2)), each a circle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    found = cycles(GRAPH)
    assert not found, f"import circles: {found}"


def test_cycle_finder_finds_a_circle():
    """The finder itself: a -> b -> c -> a is one circle, d -> a is none."""
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(g) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_relative_and_absolute_imports():
    """Known edges, one of each form: `from ..core.errors import` (perf.timing), `from . import
    timing` (perf.training), `from .core.errors import` (cli, from the top), `from .common
    import` (a package's sibling: webapi.vram)."""
    assert "advisor.core.errors" in GRAPH["advisor.perf.network"]
    assert "advisor.perf.timing" in GRAPH["advisor.perf.training"]
    assert "advisor.core.errors" in GRAPH["advisor.cli"]
    assert "advisor.webapi.common" in GRAPH["advisor.webapi.vram"]


def test_the_restructure_script_finds_nothing_left_to_move():
    """scripts/restructure_advisor.py --check: no flat module waits to move and no import,
    dotted name or path still names an old place (a merge of older work would show here)."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "restructure_advisor.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_restructure_script_on_a_later_flat_tree(tmp_path):
    """The script replayed on a small flat tree with a module it does not know (new work): the
    known modules move, every form of import is rewritten (relative, `from . import`, absolute,
    dotted in a string), the unknown module stays and is listed, and a second run changes
    nothing."""
    import shutil
    import subprocess
    import sys

    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "restructure_advisor.py", tmp_path / "scripts")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools]\npackages = ["advisor", "advisor.commands"]\n'
    )
    pkg = tmp_path / "advisor"
    (pkg / "commands").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "commands" / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("class AdvisorError(Exception):\n    pass\n")
    (pkg / "memory.py").write_text("from .errors import AdvisorError\n\nX = AdvisorError\n")
    (pkg / "newwork.py").write_text(
        "from . import memory\nfrom .errors import AdvisorError\n\nY = (memory.X, AdvisorError)\n"
    )
    (pkg / "commands" / "mem.py").write_text("from ..memory import X\n\nZ = X\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        'import advisor.memory as m\nfrom advisor import errors\n\nT = ("advisor.memory", m, errors)\n'
    )
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    run = [sys.executable, "scripts/restructure_advisor.py"]
    out = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "left in place" in out and "advisor/newwork.py" in out
    assert (
        (pkg / "memory" / "estimate.py")
        .read_text()
        .startswith("from ..core.errors import AdvisorError")
    )
    new = (pkg / "newwork.py").read_text()
    assert "from .memory import estimate as memory" in new
    assert "from .core.errors import AdvisorError" in new
    assert "from ..memory.estimate import X" in (pkg / "commands" / "mem.py").read_text()
    t = (tmp_path / "tests" / "test_x.py").read_text()
    assert "import advisor.memory.estimate as m" in t and '"advisor.memory.estimate"' in t
    assert "from advisor.core import errors" in t
    assert '"advisor.core"' in (tmp_path / "pyproject.toml").read_text()
    before = {p: p.read_text() for p in tmp_path.rglob("*.py")}
    again = subprocess.run([*run, "--check"], cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout
    subprocess.run(run, cwd=tmp_path, check=True, capture_output=True)
    assert {p: p.read_text() for p in tmp_path.rglob("*.py")} == before
