"""Benchmark (not a test): how long the bilingual site build takes, with and without the data
hooks (hooks/render.py renders every page from the catalog and advisor; hooks/search_fold.py
folds the search index).

    .venv/bin/python scripts/bench_build.py [--runs 3]

Each build runs in a fresh Python process (what `make site` costs, imports included), into a
temporary folder: once with every hook of mkdocs.yml, once without each hook in turn, and once
with `hooks: []` (strict off: the pages then show their template source, unrendered, and the
generated per-item pages are not in the nav). The differences are what each hook costs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, logging, sys, time
t0 = time.perf_counter()
from mkdocs.commands.build import build
from mkdocs.config import load_config
logging.getLogger("mkdocs").setLevel(logging.ERROR)
mode, site = sys.argv[1], sys.argv[2]
kw = {} if mode == "all" else {"hooks": [h for h in mode.split(",") if h], "strict": False}
cfg = load_config("mkdocs.yml", site_dir=site, **kw)
t1 = time.perf_counter()
build(cfg)
t2 = time.perf_counter()
print(json.dumps({"import_config_s": t1 - t0, "build_s": t2 - t1, "cpu_s": time.process_time()}))
"""


def one(mode: str) -> dict:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", CHILD, mode, str(Path(tmp) / "site")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - start
        pages = sum(1 for _ in (Path(tmp) / "site").rglob("index.html"))
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["process_s"] = wall
    res["pages"] = pages
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"bilingual site build, {args.runs} run(s) each, fresh process per run")
    print("build/process s: wall-clock medians (min: fastest process); cpu s: the build process's")
    print("CPU time (less sensitive to other load on the machine)")
    print(f"{'mode':<24}{'build s':>10}{'process s':>11}{'min':>8}{'cpu s':>8}{'pages':>7}")
    import re

    listed = re.findall(r"^\s+- (hooks/\S+\.py)", (ROOT / "mkdocs.yml").read_text(), re.M)
    modes = [("all", "all hooks")]
    modes += [
        (",".join(h for h in listed if h != drop), f"without {Path(drop).stem}") for drop in listed
    ]
    modes += [("", "no hooks")]
    for mode, label in modes:
        runs = [one(mode) for _ in range(args.runs)]
        b = statistics.median(r["build_s"] for r in runs)
        p = statistics.median(r["process_s"] for r in runs)
        lo = min(r["process_s"] for r in runs)
        cpu = statistics.median(r["cpu_s"] for r in runs)
        print(f"{label:<24}{b:>10.2f}{p:>11.2f}{lo:>8.2f}{cpu:>8.2f}{runs[0]['pages']:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
