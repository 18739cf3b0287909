"""Splits hooks/facts.py (the guide's figures) into the package hooks/facts/, one module per
group of pages, by the file's own section headers (issue 36). Kept, like
scripts/restructure_advisor.py, so that the step can be replayed on a later facts.py:

    .venv/bin/python scripts/split_facts.py

- What comes before the first section (catalog ids, the build's catalog, `use_catalog`,
  `reset`) goes to common.py; each section to the module SECTIONS names (a section title it
  does not know stops the script: add it). Functions move as they are.
- A name a module takes from another section is imported (`from . import hardware as
  _hardware`, the use written `_hardware.card`): module imports, so two modules may use each
  other's figures.
- `__init__.py` re-exports every public name, so that the pages' `facts.card(...)`,
  hooks/state.py's `facts.use_catalog` and the tests keep working; `reset` clears the caches
  of every module of the package.
- "hooks/facts.py" in comments and docs becomes "hooks/facts/"; tests/test_facts.py imports
  the package.
Does nothing where hooks/facts.py is gone (already split).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "hooks" / "facts.py"
PKG = ROOT / "hooks" / "facts"

# section title (its first words) -> module, with the pages it serves
SECTIONS = {
    "Parameters and weights": "sizes",
    "Training memory": "training_memory",
    "LoRA / QLoRA": "finetuning",
    "Inference and serving": "serving_memory",
    "Hardware": "hardware",
    "Prices": "costs",
    "Validation": "accuracy",
    "time model accuracy": "accuracy",
}
DOCS = {
    "common": "What every page's figures share: the catalog ids the guide uses, the build's "
    "catalog, cache reset.",
    "sizes": "Parameter counts and weight sizes (every guide page that names a model).",
    "training_memory": "Training memory (VRAM and bandwidth, training vs inference, multi-GPU "
    "pages, FAQ).",
    "finetuning": "LoRA and QLoRA memory (quantisation page, FAQ).",
    "serving_memory": "Inference and serving memory, KV cache, GPUs per served model (serving "
    "page, FAQ).",
    "hardware": "Accelerators: cards, tiers, interconnects, decode bounds, power (tiers, "
    "multi-GPU, why-hardware pages, FAQ).",
    "costs": "Prices: cloud rates, spot, rent vs buy, a training run's cost (budget page, FAQ).",
    "accuracy": "How accurate advisor is: memory validation and the time model's measured error "
    "(methodology page, VRAM page).",
}


def sections(lines: list[str]) -> list[tuple[int, str]]:
    out = []
    for i, line in enumerate(lines):
        if (
            re.match(r"# -{20,}\n", line)
            and i + 2 < len(lines)
            and re.match(r"# [^-]", lines[i + 1])
            and re.match(r"# -{20,}\n", lines[i + 2])
        ):
            out.append((i, lines[i + 1][2:].strip()))
        elif re.match(r"# -{20,} \S", line):
            out.append((i, line.strip("# -\n")))
    return out


def module_of(title: str) -> str:
    for key, mod in SECTIONS.items():
        if title.startswith(key):
            return mod
    sys.exit(f"hooks/facts.py: section {title!r} is not in SECTIONS: add it")


def bound(node) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _locals(fn) -> set[str]:
    """Names a function binds itself (parameters, assignments, loop and comprehension targets)."""
    a = fn.args
    out = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    out |= {x.arg for x in (a.vararg, a.kwarg) if x}
    for x in ast.walk(fn):
        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
            out.add(x.id)
        elif isinstance(x, ast.Import | ast.ImportFrom):
            out |= {(al.asname or al.name).split(".")[0] for al in x.names}
    return out


def global_uses(tree, names: set[str]):
    """(line, column, name) of each use of a module-level name in `names`, not where a function
    (or one around it) binds the same name locally."""
    out = []

    def visit(node, shadowed: frozenset):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for d in getattr(node, "decorator_list", []):
                visit(d, shadowed)
            for d in node.args.defaults + [d for d in node.args.kw_defaults if d]:
                visit(d, shadowed)
            inner = shadowed | _locals(node)
            for child in node.body if isinstance(node.body, list) else [node.body]:
                visit(child, inner)
            return
        if isinstance(node, ast.Name) and node.id in names and node.id not in shadowed:
            out.append((node.lineno, node.col_offset, node.id))
        for child in ast.iter_child_nodes(node):
            visit(child, shadowed)

    visit(tree, frozenset())
    return out


def main() -> int:
    if not SRC.exists():
        print("hooks/facts.py is gone: nothing to split")
        return 0
    text = SRC.read_text()
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    doc = ast.get_docstring(tree)
    heads = sections(lines)
    body_start = tree.body[1].lineno - 1  # after the docstring
    imports_end = max(n.end_lineno for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom))
    import_block = "".join(lines[body_start:imports_end])

    # which module each top-level statement goes to, and the names it binds
    chunks: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    nodes = [n for n in tree.body[1:] if not isinstance(n, ast.Import | ast.ImportFrom)]
    starts = []
    for n in nodes:
        start = (n.decorator_list[0].lineno if getattr(n, "decorator_list", None) else n.lineno) - 1
        starts.append(start)
    header_lines = set()
    for i, _title in heads:
        header_lines.update((i, i + 1, i + 2) if lines[i].rstrip().endswith("-") else (i,))
    for k, n in enumerate(nodes):
        start = starts[k]
        # the comments and blank lines since the statement before travel with it
        lead = nodes[k - 1].end_lineno if k else imports_end
        mod = "common"
        for i, title in heads:
            if start >= i:
                mod = module_of(title)
        chunks.setdefault(mod, []).append(
            "".join(lines[j] for j in range(lead, n.end_lineno) if j not in header_lines)
        )
        for name in bound(n):
            owner[name] = mod
    clash = set(chunks) & set(owner)
    if clash:
        sys.exit(f"module names clash with fact names: {sorted(clash)}")

    PKG.mkdir(exist_ok=True)
    written = []
    for mod, parts in chunks.items():
        body = "".join(parts).strip("\n") + "\n"
        used = {x.id for x in ast.walk(ast.parse(body)) if isinstance(x, ast.Name)}
        own = {nm for nm, m in owner.items() if m == mod}
        # other modules' names used here: written as _module.name
        foreign = sorted(nm for nm in used - own if owner.get(nm) not in (None, mod, "common"))
        mods_needed = sorted({owner[nm] for nm in foreign})
        if foreign:
            tree_b = ast.parse(body)
            blines = body.splitlines(keepends=True)
            edits = [(ln - 1, col, nm) for ln, col, nm in global_uses(tree_b, set(foreign))]
            for ln, col, nm in sorted(edits, reverse=True):
                s = blines[ln]
                blines[ln] = s[:col] + f"_{owner[nm]}.{nm}" + s[col + len(nm) :]
            body = "".join(blines)
        common_names = sorted(nm for nm in used if owner.get(nm) == "common" and mod != "common")
        head = f'"""{DOCS[mod]}\n\nPart of hooks/facts/ (the guide\'s figures; see its __init__)."""\n\n'
        imports = import_block
        if common_names:
            imports += "from .common import " + ", ".join(common_names) + "\n"
        for m in mods_needed:
            imports += f"from . import {m} as _{m}\n"
        if mod == "common":
            body = body.replace(
                "Path(__file__).resolve().parent.parent", "Path(__file__).resolve().parents[2]"
            )
            body = body.replace("list(globals().values())", "_all_values()")
            body += '''

def _all_values() -> list:
    """Everything the modules of this package define (`reset` clears their caches)."""
    pkg = __name__.rpartition(".")[0]
    return [
        v
        for name, m in list(sys.modules.items())
        if name == pkg or name.startswith(pkg + ".")
        for v in vars(m).values()
    ]
'''
            imports += "import sys\n"
        path = PKG / f"{mod}.py"
        path.write_text(head + imports + "\n\n" + body)
        written.append(path)

    order = ["common", *dict.fromkeys(m for m in SECTIONS.values() if m in chunks)]
    public = {
        m: sorted(nm for nm, o in owner.items() if o == m and not nm.startswith("_")) for m in order
    }
    init = f'"""{doc}\n\nOne module per group of pages (a fact\'s figures stay where its page looks):\n'
    init += "".join(f"- `{m}`: {DOCS[m]}\n" for m in order)
    init += '"""\n\nfrom __future__ import annotations\n\n'
    for m in order:
        init += f"from .{m} import (\n" + "".join(f"    {nm},\n" for nm in public[m]) + ")\n"
    init += "\n__all__ = [\n" + "".join(f'    "{nm}",\n' for m in order for nm in public[m]) + "]\n"
    (PKG / "__init__.py").write_text(init)
    written.append(PKG / "__init__.py")
    subprocess.run(["git", "rm", "-q", "hooks/facts.py"], cwd=ROOT, check=True)
    files = [str(p) for p in written]
    subprocess.run(["git", "add", *files], cwd=ROOT, check=True)
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run([*ruff, "check", "--select", "F401,I", "--fix", "-q", *files], cwd=ROOT)
    subprocess.run([*ruff, "format", "-q", *files], cwd=ROOT)

    # references elsewhere
    for p in [
        *ROOT.glob("hooks/*.py"),
        *ROOT.glob("tests/*.py"),
        ROOT / "DEVELOPERS.md",
        ROOT / "README.md",
        *ROOT.glob("scripts/*.py"),
    ]:
        if p.resolve() == Path(__file__).resolve():
            continue
        t = p.read_text()
        n = t.replace("hooks/facts.py", "hooks/facts/")
        if p.name == "test_facts.py":
            n = re.sub(
                r"\ndef _load\(name: str, path: Path\):\n(    .*\n)+\n\n"
                r'facts = _load\("guide_facts_under_test", ROOT / "hooks" / "facts.py"\)\n',
                "",
                n,
            )
            n = n.replace("import importlib.util\n", "").replace("import sys\n", "")
            n = n.replace("import pytest\n", "import pytest\n\nimport hooks.facts as facts\n", 1)
            n = n.replace(
                "if fn.__module__ != facts.__name__:",
                'if not fn.__module__.startswith(facts.__name__ + "."):',
            )
        if n != t:
            p.write_text(n)
            print("rewrote", p.relative_to(ROOT))
    for p in written:
        print("wrote", p.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
