"""Splits advisor/webapi.py (the calculators' JSON API) into the package advisor/webapi/, one
module per calculator (its request type and its handler with the helpers only it uses), what
they share in `common.py` (the request-parsing machinery, the catalog the calculators use,
model and accelerator lookup) and the entry points in `dispatch.py` (`run`, `call`, `dumps`,
`REQUESTS`, `DEFAULTS`, `FUNCTIONS`). Issue 36; kept, like scripts/split_facts.py, so that the
step can be replayed on a later webapi.py (another branch adding fields merged first):

    .venv/bin/python scripts/split_webapi.py          # split, format
    .venv/bin/python scripts/split_webapi.py --check  # exit 1 if advisor/webapi.py would split

Every top-level name of webapi.py is placed by a rule, in this order (a name no rule places
stops the script, listing it: add it to a rule):
1. `SHARED` and `DISPATCH`: explicit lists for common.py and dispatch.py;
2. a class `<Name>Request` goes to the module of calculator `<name>` (`CALCULATORS` maps
   class-name prefixes to modules), a function named as a calculator to its module;
3. `HELPERS`: helpers named explicitly for a calculator's module;
4. any other function, class or constant goes to the one calculator module whose names use
   it, or to common.py when names of several modules use it (a helper added later lands next
   to the handler that calls it); one that no placed name uses stops the script.
Before that, a webapi.py written before issue 36 removed advisor/perf/compute.py gets the same
rewrites as this branch's (`COMPUTE_REWRITES`). A module's text is moved as it is (with the
comments just above each definition); relative
imports gain a dot (the package is one level deeper); each module imports webapi.py's imports
and the names it takes from the other modules, and `ruff --fix` drops what it does not use.
`__init__.py` keeps webapi.py's docstring and re-exports every top-level name, so that
`advisor.webapi.run`, `call`, `DEFAULTS`, the request types and the handlers keep their
import path. Does nothing where advisor/webapi.py is gone (already split).
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "advisor" / "webapi.py"
PKG = ROOT / "advisor" / "webapi"

# calculator module -> the prefix of its request class (VramRequest -> vram) and its handler
CALCULATORS = {
    "vram": "Vram",
    "roofline": "Roofline",
    "budget": "Budget",
    "picker": "Picker",
    "serving": "Serving",
    "cluster": "Cluster",
    "report": "Report",
}
SHARED = {
    "TASKS",
    "INFER_WEIGHTS",
    "ROOFLINE_PHASES",
    "MAX_BATCH",
    "MAX_SEQ",
    "MAX_GPUS",
    "MAX_CONFIG_CHARS",
    "_f",
    "_Request",
    "_read",
    "_catalog",
    "set_catalog",
    "_CATALOG_FILE",
    "load_catalog_documents",
    "get_catalog",
    "_num_value",
    "_model",
    "_gpu",
    "_model_info",
    "_gpu_info",
    "_bands",
    "_memory_band",
}
DISPATCH = {"REQUESTS", "DEFAULTS", "FUNCTIONS", "run", "_clean", "dumps", "call"}
HELPERS: dict[str, str] = {}
DOCS = {
    "common": "What the calculators share: the request-parsing machinery (`_f` field metadata, "
    "`_Request.from_params`, `_read`), the plausible-size limits, the catalog the calculators "
    "use (`set_catalog`, `load_catalog_documents`, `get_catalog`), model and accelerator "
    "lookup, the measured error bands.",
    "dispatch": "The entry points: `run(name, params)` and `call(name, params_json)` (never "
    "raise), `dumps`, and the tables `REQUESTS`, `DEFAULTS`, `FUNCTIONS`.",
    "vram": "The VRAM calculator: memory per GPU for training, fine-tuning, inference and serving.",
    "roofline": "The roofline calculator.",
    "budget": "The budget calculator: rent vs buy, a training run's cloud cost, cost per token.",
    "picker": "The accelerator picker: every accelerator and count ranked, with rejections.",
    "serving": "The serving calculator: the throughput-latency curve, its limits and rates.",
    "cluster": "The cluster planner: GPUs, nodes and the parallel layout for a token budget.",
    "report": "The client report in the browser.",
}
ORDER = ("common", *CALCULATORS, "dispatch")

# Issue 36's one time model (advisor/perf/compute.py removed), replayed on a webapi.py written
# before it: each old text becomes the new one where it is found (regular expressions; a
# webapi.py that no longer names perf.compute is left as it is). A use of `compute.` that none
# of these rewrites stops the script.
COMPUTE_REWRITES = (
    (
        r"^from \.perf import compute(, timing)?\n",
        "from .arch import flops\nfrom .perf import timing\n"
        "from .perf import training as perf_training\n",
    ),
    (r"advisor\.perf\.compute\.time_to_train", "advisor.perf.training.setup_step"),
    (r"advisor\.perf\.compute\.decode_tokens_per_s", "advisor.perf.serving_fit"),
    (
        r"FLOPs and bytes from advisor\.perf\.compute",
        "FLOPs from advisor.arch.flops, bytes from advisor.perf.timing",
    ),
    (r"advisor\.perf\.compute", "advisor.arch.flops, advisor.perf.timing"),
    (r"\bflops = compute\.(decode_flops|prefill_flops|training_flops)\(", r"fl = flops.\1("),
    (r"compute\.roofline\(flops, ", "timing.roofline(fl, "),
    (
        r"compute\.(decode_weight_bytes|kv_read_bytes|training_bytes|roofline|weight_peak_key|"
        r"fp4_dequantised|PEAK_KEY|peak_flops)\b",
        r"timing.\1",
    ),
    (
        r"compute\.time_to_train\(setup, g, req\.train_tokens, memory=est\)",
        "perf_training.run(perf_training.setup_step(setup, g), req.train_tokens)",
    ),
)


def one_time_model(text: str) -> str:
    """`COMPUTE_REWRITES` applied; exits naming any `compute.` use left."""
    for old, new in COMPUTE_REWRITES:
        text = re.sub(old, new, text, flags=re.M)
    left = sorted(set(re.findall(r"\bcompute\.\w+", text)))
    if left:
        sys.exit(
            f"split_webapi: advisor/webapi.py still uses {', '.join(left)} (perf.compute is gone)"
        )
    return text


def top_level(tree: ast.Module):
    """(name, node) of every top-level definition (imports and the docstring left out)."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    yield t.id, node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node


def used_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def place(defs: dict[str, ast.AST]) -> dict[str, str]:
    """name -> module by the rules of the module docstring; exits listing unplaced names."""
    where: dict[str, str] = {}
    for name in defs:
        if name in SHARED:
            where[name] = "common"
        elif name in DISPATCH:
            where[name] = "dispatch"
        elif name in HELPERS:
            where[name] = HELPERS[name]
        elif name.endswith("Request") and name[: -len("Request")] in CALCULATORS.values():
            prefix = name[: -len("Request")]
            where[name] = next(m for m, p in CALCULATORS.items() if p == prefix)
        elif name in CALCULATORS:
            where[name] = name
    uses = {name: used_names(node) for name, node in defs.items()}
    changed = True
    while changed:  # rule 4: by who uses it, until nothing moves
        changed = False
        for name in defs:
            if name in where:
                continue
            users = {where[u] for u, names in uses.items() if name in names and u in where}
            users.discard("dispatch")
            if len(users) == 1:
                where[name] = users.pop()
                changed = True
            elif len(users) > 1:
                where[name] = "common"
                changed = True
    missing = sorted(set(defs) - set(where))
    if missing:
        sys.exit(
            "split_webapi: no rule places these top-level names of advisor/webapi.py: "
            + ", ".join(missing)
            + " (add them to SHARED, DISPATCH or HELPERS)"
        )
    return where


def chunk(lines: list[str], node: ast.AST) -> str:
    """The definition's text, with its decorators and the comment lines just above it."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    while (
        start > 0 and lines[start - 1].startswith("#") and not lines[start - 1].startswith("# ---")
    ):
        start -= 1
    return "\n".join(lines[start : node.end_lineno])


def deeper(text: str) -> str:
    """Relative imports one package level deeper (`from .x` -> `from ..x`)."""
    return re.sub(r"^(\s*from )\.(?=[\w.])", r"\1..", text, flags=re.M).replace(
        "from . import", "from .. import"
    )


def split(check: bool = False) -> int:
    if not SRC.is_file():
        print("split_webapi: advisor/webapi.py is gone (already split); nothing to do")
        return 0
    if check:
        print("split_webapi: advisor/webapi.py would be split")
        return 1
    text = one_time_model(SRC.read_text(encoding="utf-8"))
    tree = ast.parse(text)
    lines = text.split("\n")
    doc = ast.get_docstring(tree, clean=False) or ""
    imports = "\n".join(
        deeper("\n".join(lines[n.lineno - 1 : n.end_lineno]))
        for n in tree.body
        if isinstance(n, (ast.Import, ast.ImportFrom))
        and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")
    )
    defs: dict[str, ast.AST] = {}
    for name, node in top_level(tree):
        defs.setdefault(name, node)
    where = place(defs)
    body: dict[str, list[str]] = {m: [] for m in ORDER}
    simple: dict[str, bool] = {}  # the module's last chunk was an assignment
    seen_nodes: set[int] = set()
    for name, node in defs.items():
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        m = where[name]
        assign = isinstance(node, (ast.Assign, ast.AnnAssign))
        text_n = deeper(chunk(lines, node))
        if body[m] and assign and simple.get(m):
            body[m][-1] += "\n" + text_n  # consecutive constants stay together
        else:
            body[m].append(text_n)
        simple[m] = assign
    PKG.mkdir(exist_ok=True)
    for old in PKG.glob("*.py"):  # a package from an earlier split: written anew
        old.unlink()
    written = []
    for module in ORDER:
        if not body[module]:
            continue
        own = {n for n, m in where.items() if m == module}
        text_m = "\n\n\n".join(body[module])
        used = used_names(ast.parse(text_m))
        takes: dict[str, list[str]] = {}
        for n in sorted(used - own):
            if n in where and n != "_catalog":
                takes.setdefault(where[n], []).append(n)
        local = "\n".join(f"from .{m} import {', '.join(ns)}" for m, ns in sorted(takes.items()))
        out = (
            f'"""{textwrap.fill(DOCS[module], 96)}"""\n\nfrom __future__ import annotations\n\n'
            f"{imports}\n{local}\n\n\n{text_m}\n"
        )
        path = PKG / f"{module}.py"
        path.write_text(out, encoding="utf-8")
        written.append(path)
    names = sorted(where, key=lambda n: (ORDER.index(where[n]), n))
    by_module: dict[str, list[str]] = {}
    for n in names:
        if n != "_catalog":
            by_module.setdefault(where[n], []).append(n)
    reexports = "\n".join(
        f"from .{m} import {', '.join(by_module[m])}  # noqa: F401" for m in ORDER if m in by_module
    )
    package = textwrap.fill(
        f"The package (scripts/split_webapi.py): {', '.join(f'`{m}`' for m in ORDER)}; this file "
        "re-exports every name, so `advisor.webapi.run`, `call`, `DEFAULTS`, the request types "
        "and the handlers keep their import path.",
        96,
    )
    init = (
        f'"""{doc.rstrip()}\n\n{package}\n"""\n\nfrom __future__ import annotations\n\n'
        f"{reexports}\n"
    )
    (PKG / "__init__.py").write_text(init, encoding="utf-8")
    written.append(PKG / "__init__.py")
    SRC.unlink()
    ruff = [sys.executable, "-m", "ruff"]
    files = [str(p) for p in written]
    subprocess.run([*ruff, "check", "--fix", "--select", "F401,I", "--quiet", *files], check=False)
    subprocess.run([*ruff, "format", "--quiet", *files], check=True)
    left = subprocess.run([*ruff, "check", "--quiet", *files], check=False)
    for m in ORDER:
        if body[m]:
            print(f"advisor/webapi/{m}.py: {len(body[m])} definitions")
    return left.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if webapi.py would be split")
    return split(ap.parse_args().check)


if __name__ == "__main__":
    raise SystemExit(main())
