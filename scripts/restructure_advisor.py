"""Moves advisor's flat modules into sub-packages and rewrites every reference to them (issue 36).

The scripted commit "advisor in sub-packages (scripted)" is this script's output on the tree it
ran on; it is kept so that the same step can be replayed on a later tree (other branches merged
first):

    .venv/bin/python scripts/restructure_advisor.py          # moves, rewrites, formats
    .venv/bin/python scripts/restructure_advisor.py --check  # exit 1 if anything would change

What it does, in this order, each step a no-op where already done (a second run changes nothing):
1. `git mv advisor/OLD.py advisor/PKG/NEW.py` for every module in MOVES whose old file exists;
   each sub-package gets an `__init__.py` (its one-line description) if it has none. A moved
   module's `Path(__file__).parent` gains one `.parent` (it lies one folder deeper).
2. Rewrites the import statements of every .py file under advisor/, hooks/, bench/, scripts/ and
   tests/ (found by `ast`, so only real statements): `from .OLD import x`, `from ..OLD import x`,
   `from . import OLD`, `from advisor import OLD`, `from advisor.OLD import x`,
   `import advisor.OLD [as y]`. A module under advisor/ keeps relative imports relative,
   recomputed from its new place (its imports of modules that did not move too); a name keeps
   its local binding (`from . import memory` becomes `from .memory import estimate as memory`).
3. Rewrites the dotted names `advisor.OLD` and paths `advisor/OLD.py` outside import statements:
   code (`advisor.memory.max_batch`), strings (mock/patch targets, `sys.modules` keys, module
   names in the Pyodide scripts' Python), comments and docstrings, in those folders' .py and
   .mjs/.js files (scripts/, calcruntime/node/, calcruntime/browser/) and in README.md and DEVELOPERS.md;
   `__import__("advisor.OLD").OLD` becomes `__import__("advisor.PKG.NEW", fromlist=[""])`.
4. pyproject.toml's `packages`: advisor's sub-packages as found on disk.
5. `ruff check --select I --fix` and `ruff format` on the files it changed (import order).

A top-level module of advisor/ that MOVES does not name (new work) stays where it is; its imports
are rewritten all the same, and it is listed at the end so that a person can place it (add it to
MOVES and run again). Nothing else is changed: the module's text is moved as it is.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = "advisor"

# old top-level module -> new dotted path under advisor. A wing may import its own modules and
# those of the wings before it in LAYERS, never one after it (tests/test_layers.py).
MOVES: dict[str, str] = {
    # core: the ground every wing stands on
    "errors": "core.errors",
    "units": "core.units",
    "numfmt": "core.numfmt",
    "vocab": "core.vocab",
    "limits": "core.limits",
    "markup": "core.markup",
    "files": "core.files",
    "yamlsafe": "core.yamlsafe",
    "counts": "core.counts",
    "ids": "core.ids",
    # arch: what a model is
    "models": "arch.models",
    "quant": "arch.quant",
    "layers": "arch.layers",
    # data: the catalog and its hardware, price and bench-result types
    "catalog": "data.catalog",
    "hardware": "data.hardware",
    "prices": "data.prices",
    "benchresults": "data.benchresults",
    "systems": "data.systems",
    "support": "data.support",
    "source_kind": "data.source_kind",
    # memory: what fits
    "memory": "memory.estimate",
    "activations": "memory.activations",
    # perf: how long it takes
    "timing": "perf.timing",
    "training": "perf.training",
    "serving": "perf.serving",
    "cluster": "perf.cluster",
    "parallel": "perf.parallel",
    "network": "perf.network",
    "efficiency": "perf.efficiency",
    "accuracy": "perf.accuracy",
    "queueing": "perf.queueing",
    "speculative": "perf.speculative",
    "prefix_cache": "perf.prefix_cache",
    "expert_parallel": "perf.expert_parallel",
    "disaggregated": "perf.disaggregated",
    "serving_fit": "perf.serving_fit",
    # money: what it costs
    "cost": "money.cost",
    "interactivity": "money.interactivity",
    # advice: what to buy or rent
    "recommend": "advice.recommend",
    "profile": "advice.profile",
    "shortfall": "advice.shortfall",
    # report: the client report (report.py is the package's entry points)
    "report": "report",
    "report_data": "report.data",
    "report_format": "report.format",
    "report_i18n": "report.i18n",
    "report_publisher": "report.publisher",
    "report_render": "report.render",
    "report_sections": "report.sections",
}

# Modules that stay at advisor's top level: the faces (CLI, web API) and the package's own files.
STAYS = {"__init__", "__main__", "cli", "webapi"}

LAYERS = ("core", "arch", "data", "memory", "perf", "money", "advice", "report")

PACKAGE_DOCS = {
    "core": "The ground: errors, units, number format, choice lists, plausible ranges, markup, "
    "capped file and YAML reading.",
    "arch": "What a model is: its description from a config.json, parameter counts, weight formats.",
    "data": "The catalog (models, accelerators, clouds, fabrics, efficiencies) and its record "
    "types, prices, bench results.",
    "memory": "What fits: training and inference memory, activations, serving capacity.",
    "perf": "How long it takes: kernel timing, training steps, serving, clusters, parallel "
    "layouts, networks, efficiencies, the time model's accuracy.",
    "money": "What it costs: cloud cost, TCO, rent vs buy.",
    "advice": "What to choose: accelerator ranking, client workload profiles.",
    "report": "Client advisory reports: entry points here, content, sections, formats, texts, "
    "rendering.",
}

CODE_DIRS = ("advisor", "hooks", "bench", "scripts", "tests")
TEXT_GLOBS = (
    "scripts/*.mjs",
    "calcruntime/node/*.mjs",
    "calcruntime/browser/*.mjs",
    "calcruntime/browser/*.js",
)
TEXT_FILES = ("README.md", "DEVELOPERS.md")
SKIP_PARTS = {"node_modules", ".venv", "site", "__pycache__", "build"}
# files that name old modules on purpose (the script's own test builds a flat tree)
SKIP_FILES = {"tests/test_layers.py"}


def new_path(old: str) -> Path:
    """advisor/OLD.py's new file (a package's entry module is its __init__.py)."""
    dotted = MOVES[old]
    parts = dotted.split(".")
    if parts == [old] and old in _package_names():
        return Path(PKG, *parts, "__init__.py")
    return Path(PKG, *parts[:-1], parts[-1] + ".py")


def _package_names() -> set[str]:
    return {v.split(".")[0] for v in MOVES.values() if "." in v}


def old_names() -> dict[str, str]:
    """advisor.NEW -> advisor.OLD for every move."""
    return {f"{PKG}.{n}": f"{PKG}.{o}" for o, n in MOVES.items()}


OLD_NAMES = old_names()


def abs_map() -> dict[str, str]:
    """advisor.OLD -> advisor.NEW for every move that changes the name."""
    return {f"{PKG}.{o}": f"{PKG}.{n}" for o, n in MOVES.items() if o != n}


# ---------------------------------------------------------------- step 1: moves


def git(*args: str) -> None:
    subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True)


def move_files(dry: bool) -> list[str]:
    done = []
    for pkg in sorted(_package_names()):
        init = ROOT / PKG / pkg / "__init__.py"
        if not init.exists() and MOVES.get(pkg) != pkg:
            done.append(f"create {init.relative_to(ROOT)}")
            if not dry:
                init.parent.mkdir(parents=True, exist_ok=True)
                init.write_text(f'"""{PACKAGE_DOCS[pkg]}"""\n')
                git("add", str(init.relative_to(ROOT)))
    for old in MOVES:
        src, dst = ROOT / PKG / f"{old}.py", ROOT / new_path(old)
        if src.exists() and dst.exists():
            sys.exit(
                f"both {src.relative_to(ROOT)} and {dst.relative_to(ROOT)} exist: merge by hand"
            )
        if src.exists():
            done.append(f"git mv {src.relative_to(ROOT)} {dst.relative_to(ROOT)}")
            if not dry:
                dst.parent.mkdir(parents=True, exist_ok=True)
                git("mv", str(src.relative_to(ROOT)), str(dst.relative_to(ROOT)))
                deeper_file_paths(dst)
    return done


FILE_PARENT = re.compile(r"\bPath\(__file__\)(\.resolve\(\))?\.parent\b")


def deeper_file_paths(path: Path) -> None:
    """A moved module lies one folder deeper: `Path(__file__)[.resolve()].parent` (the folder its
    paths start from: catalog/, publisher.yaml, validation_data/, report_templates/) gains one
    `.parent`. Done once, at the move (a second run moves nothing)."""
    text = path.read_text()
    new = FILE_PARENT.sub(lambda m: m.group(0) + ".parent", text)
    path.write_text(new)


def unknown_modules() -> list[str]:
    return sorted(
        p.stem for p in (ROOT / PKG).glob("*.py") if p.stem not in STAYS and p.stem not in MOVES
    )


# ---------------------------------------------------------------- step 2: import statements


def module_name(path: Path) -> tuple[str, bool]:
    """(dotted name, is a package) of a .py file under ROOT."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def existing_modules() -> set[str]:
    out = set()
    for p in (ROOT / PKG).rglob("*.py"):
        if not SKIP_PARTS & set(p.parts):
            out.add(module_name(p)[0])
    return out


def resolve(module: str | None, level: int, here: str, is_pkg: bool) -> str:
    if level == 0:
        return module or ""
    base = here.split(".") if is_pkg else here.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def relative(target: str, here: str, is_pkg: bool) -> str:
    """`target` (dotted, absolute) written relative to module `here`: "..memory.estimate"."""
    base = here.split(".") if is_pkg else here.split(".")[:-1]
    t = target.split(".")
    common = 0
    while common < min(len(base), len(t)) and base[common] == t[common]:
        common += 1
    return "." * (len(base) - common + 1) + ".".join(t[common:])


def _alias(a: ast.alias) -> str:
    return a.name + (f" as {a.asname}" if a.asname else "")


def rewrite_import(node, here: str, is_pkg: bool, old_here, mods: set[str], amap: dict[str, str]):
    """The statement's new text, or None when it needs none. `old_here`: the module's name before
    it moved (its relative imports may still be written from there), or None."""
    if isinstance(node, ast.Import):
        if not any(a.name in amap for a in node.names):
            return None
        return "import " + ", ".join(
            amap.get(a.name, a.name) + (f" as {a.asname}" if a.asname else "") for a in node.names
        )
    base = resolve(node.module, node.level, here, is_pkg)
    if node.level and old_here and not _valid(base, node, mods, amap):
        base = resolve(node.module, node.level, old_here, False)
    if not base.startswith(PKG):
        return None

    def spell(target: str) -> str:
        return relative(target, here, is_pkg) if node.level else target

    def unchanged_or_respelled(target: str, names) -> str | None:
        text = f"from {spell(target)} import " + ", ".join(map(_alias, names))
        if node.level and spell(target) != "." * node.level + (node.module or ""):
            return text
        return None

    # `from X import name` where X.name is a module (old or new): one import per moved module.
    modules = [a for a in node.names if f"{base}.{a.name}" in mods or f"{base}.{a.name}" in amap]
    if any(f"{base}.{a.name}" in amap for a in modules):
        lines, rest = [], [a for a in node.names if f"{base}.{a.name}" not in amap]
        if rest:
            lines.append(f"from {spell(base)} import " + ", ".join(map(_alias, rest)))
        for a in node.names:
            if f"{base}.{a.name}" not in amap:
                continue
            target = amap[f"{base}.{a.name}"]
            parent, leaf = target.rsplit(".", 1)
            local = a.asname or a.name
            lines.append(
                f"from {spell(parent)} import {leaf}" + (f" as {local}" if local != leaf else "")
            )
        return lines
    if modules:  # imports modules of a package that exists: nothing moves
        return unchanged_or_respelled(base, node.names)
    target = amap.get(base, base)
    if target == base:
        return unchanged_or_respelled(base, node.names)
    return f"from {spell(target)} import " + ", ".join(map(_alias, node.names))


def _valid(base: str, node, mods: set[str], amap: dict[str, str]) -> bool:
    """Whether `from base import names` names what exists now (a module, or modules of a
    package that has no code of its own)."""
    if base not in mods:
        return False
    init = ROOT / Path(*base.split(".")) / "__init__.py"
    if not init.exists():
        return True  # a module: its names are its attributes
    bound = _bound_names(init)
    return all(f"{base}.{a.name}" in mods or a.name in bound for a in node.names)


def _bound_names(path: Path) -> set[str]:
    """Names a module binds at its top level (defs, classes, assignments, imports)."""
    out = set()
    for n in ast.parse(path.read_text()).body:
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(n.name)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.Assign | ast.AnnAssign):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                out.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
    return out


def import_spans(tree) -> list:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


def rewrite_imports(text: str, path: Path, mods: set[str], amap: dict[str, str]) -> str:
    tree = ast.parse(text)
    here, is_pkg = module_name(path)
    old_here = OLD_NAMES.get(here)
    inside = path.relative_to(ROOT).parts[0] == PKG
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    edits = []
    for node in import_spans(tree):
        if not inside and getattr(node, "level", 0):
            continue
        new = rewrite_import(node, here, is_pkg, old_here, mods, amap)
        if new is None:
            continue
        start = offsets[node.lineno - 1] + len(lines[node.lineno - 1][: node.col_offset])
        end = offsets[node.end_lineno - 1] + len(
            lines[node.end_lineno - 1].encode()[: node.end_col_offset].decode()
        )
        indent = " " * node.col_offset
        if isinstance(new, list):
            # a trailing noqa comment applies to every statement the one becomes
            tail = lines[node.end_lineno - 1].encode()[node.end_col_offset :].decode()
            noqa = re.match(r"\s*(#\s*noqa\b.*?)\s*$", tail)
            sep = f"  {noqa.group(1)}\n{indent}" if noqa else "\n" + indent
            new = sep.join(new)
        edits.append((start, end, new))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


# ---------------------------------------------------------------- step 3: names in text


def text_patterns(amap: dict[str, str]) -> list[tuple[re.Pattern, str, str]]:
    """(pattern, replacement, a text every match contains: a line without it is not searched)."""
    pats = []
    children: dict[str, set[str]] = {}
    for new in amap.values():
        parent, leaf = new.rsplit(".", 1)
        children.setdefault(parent, set()).add(leaf)
    for old in sorted(amap, key=len, reverse=True):
        new = amap[old]
        name = old.split(".", 1)[1]
        pkg_children = children.get(old, set())  # advisor.memory is now also a package
        guard = rf"(?!\.(?:{'|'.join(sorted(pkg_children))})\b)" if pkg_children else ""
        pats.append(
            (
                re.compile(rf"__import__\((['\"]){re.escape(old)}\1\)\.{name}\b"),
                f'__import__("{new}", fromlist=[""])',
                old,
            )
        )
        pats.append((re.compile(rf"(?<![\w.]){re.escape(old)}\b{guard}"), new, old))
        pats.append(
            (
                re.compile(rf"(?<![\w/.]){PKG}/{name}\.py\b"),
                str(Path(PKG, *new.split(".")[1:-1], new.rsplit(".", 1)[1] + ".py").as_posix()),
                f"{PKG}/{name}.py",
            )
        )
    for old, new in MOVES.items():  # advisor/report.py -> advisor/report/__init__.py
        if old == new and old in _package_names():
            pats.append(
                (
                    re.compile(rf"(?<![\w/.]){PKG}/{old}\.py\b"),
                    f"{PKG}/{old}/__init__.py",
                    f"{PKG}/{old}.py",
                )
            )
    return pats


def rewrite_text(text: str, pats, skip_lines: set[int] = frozenset()) -> str:
    out = []
    for i, line in enumerate(text.splitlines(keepends=True), 1):
        if i not in skip_lines and PKG in line:  # every pattern's match names the package
            for pat, repl, needed in pats:
                if needed in line:  # a line without it cannot match (a quick test, same result)
                    line = pat.sub(lambda m, r=repl: r, line)
        out.append(line)
    return "".join(out)


def rewrite_py(path: Path, mods, amap, pats) -> str:
    text = path.read_text()
    tree = ast.parse(text)
    skip = set()
    for node in import_spans(tree):
        skip.update(range(node.lineno, node.end_lineno + 1))
    text = rewrite_text(text, pats, skip)
    return rewrite_imports(text, path, mods, amap)


# ---------------------------------------------------------------- step 4: pyproject


def rewrite_pyproject(text: str) -> str:
    subs = sorted(
        module_name(p)[0]
        for p in (ROOT / PKG).rglob("__init__.py")
        if p.parent != ROOT / PKG and not SKIP_PARTS & set(p.parts)
    )
    m = re.search(r"^packages = \[(.*?)\]$", text, re.M | re.S)
    listed = re.findall(r'"([^"]+)"', m.group(1))
    keep = [p for p in listed if p != PKG and not (ROOT / Path(*p.split("."))).is_dir()]
    new = [PKG, *subs, *keep]
    line = "packages = [" + ", ".join(f'"{p}"' for p in new) + "]"
    if len(line) > 100:
        line = "packages = [\n" + "".join(f'  "{p}",\n' for p in new) + "]"
    return text[: m.start()] + line + text[m.end() :]


# ---------------------------------------------------------------- main


def files_to_rewrite() -> list[Path]:
    out = []
    for d in CODE_DIRS:
        out += [p for p in (ROOT / d).rglob("*.py") if not SKIP_PARTS & set(p.parts)]
    for g in TEXT_GLOBS:
        out += sorted(ROOT.glob(g))
    out += [ROOT / f for f in TEXT_FILES if (ROOT / f).exists()]
    return sorted(set(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a run would")
    args = ap.parse_args(argv)
    here = Path(__file__).resolve()
    report = move_files(args.check)
    if args.check and report:
        print("\n".join(report))
        return 1
    amap, mods = abs_map(), existing_modules()
    pats = text_patterns(amap)
    changed = []
    for path in files_to_rewrite():
        if path == here or path.relative_to(ROOT).as_posix() in SKIP_FILES:
            continue
        old = path.read_text()
        new = (
            rewrite_py(path, mods, amap, pats) if path.suffix == ".py" else rewrite_text(old, pats)
        )
        if new != old:
            changed.append(path)
            if not args.check:
                path.write_text(new)
    pyproject = ROOT / "pyproject.toml"
    old = pyproject.read_text()
    new = rewrite_pyproject(old)
    if new != old:
        changed.append(pyproject)
        if not args.check:
            pyproject.write_text(new)
    py = [str(p) for p in changed if p.suffix == ".py"]
    if py and not args.check:
        ruff = [sys.executable, "-m", "ruff"]
        subprocess.run([*ruff, "check", "--select", "I", "--fix", "-q", *py], cwd=ROOT)
        subprocess.run([*ruff, "format", "-q", *py], cwd=ROOT)
    for line in report:
        print(line)
    for p in changed:
        print(("would rewrite " if args.check else "rewrote ") + str(p.relative_to(ROOT)))
    unknown = unknown_modules()
    if unknown:
        print(
            "left in place (not in MOVES; their imports were rewritten): "
            + ", ".join(f"advisor/{u}.py" for u in unknown)
        )
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
