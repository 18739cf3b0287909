"""Interleaved A/B of two (or more) built sites' calculators (a script, not a test).

    .venv/bin/python scripts/bench_calculators_ab.py SITE_A SITE_B [--mobile] [--rounds 12]

On this 2-core machine one phone-profile run of `scripts/bench_calculators.py` varies by
+-0.3 s from run to run and drifts over minutes, so a change worth 0.1 s cannot be seen by
comparing two bench runs made at different times. This script serves each site on its own port
as `bench_calculators.py` does (`_Host`: precompressed copies, cache headers) and alternates
them run by run (A, B, A, B...; the calculator pages in turn), each run in a new browser profile:
the first visit and a reload (phone: once the snapshot has been fetched for the next page view),
to interactive, and on a phone the moment the wasm's last byte arrived (the page's resource
timing of boot.js's early fetch). It prints every run, then per site the median, mean and range.
Build the sites first (for instance `git worktree add /tmp/base HEAD` and `mkdocs build` there;
copy both to /dev/shm, where this machine's disk adds no noise).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_calculators as bench  # noqa: E402

WASM_END_JS = """() => {
  const e = performance.getEntriesByType('resource')
    .filter((r) => r.name.endsWith('/pyodide.asm.wasm')).map((r) => r.responseEnd);
  return e.length ? Math.max(...e) : 0;
}"""


def one_run(pw, base: str, page: str, mobile: bool) -> tuple[float, float, float]:
    """(first visit ms, reload ms, the wasm's last byte ms) of one new browser profile."""
    bench._Host.origin = base  # sitemap.xml names this server
    with tempfile.TemporaryDirectory() as profile:
        if mobile:
            phone = bench._Phone(pw, profile, "cdp")
            p, close = phone.page, phone.close
        else:
            ctx = pw.chromium.launch_persistent_context(
                profile,
                executable_path="/usr/bin/chromium",
                args=bench.CHROMIUM_ARGS,
                headless=True,
            )
            p, close = ctx.new_page(), ctx.close
        try:
            p.goto(f"{base}en/calculators/{page}/", wait_until="commit")
            first = p.evaluate(bench.READY_JS)
            wasm_end = p.evaluate(WASM_END_JS)
            if mobile:  # the reload starts from the snapshot, as a phone's second page view
                p.wait_for_function(
                    "() => !!localStorage.getItem('calc.snapshot')", timeout=bench.NEVER_MS
                )
                time.sleep(2.5)
            p.reload(wait_until="commit")
            reload_ms = p.evaluate(bench.READY_JS)
        finally:
            close()
    return first, reload_ms, wasm_end


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sites", nargs="+", help="built site folders (at least two)")
    ap.add_argument("--mobile", action="store_true", help="the phone profile (issue 12)")
    ap.add_argument("--rounds", type=int, default=12, help="runs per site")
    ap.add_argument("--pages", default=",".join(bench.PAGES))
    args = ap.parse_args()
    if len(args.sites) < 2:
        ap.error("give two sites or more")
    from playwright.sync_api import sync_playwright

    pages = args.pages.split(",")
    bases = [bench.serve(Path(s))[1] for s in args.sites]
    runs: dict[str, list[tuple[float, float, float]]] = {s: [] for s in args.sites}
    with sync_playwright() as pw:
        for i in range(args.rounds):
            page = pages[i % len(pages)]
            for site, base in zip(args.sites, bases, strict=True):
                r = one_run(pw, base, page, args.mobile)
                runs[site].append(r)
                print(site, page, *(f"{x:.0f}" for x in r), flush=True)
    print(f"{'mobile' if args.mobile else 'desktop'}, {args.rounds} runs per site, interleaved")
    for site, rs in runs.items():
        first, reload_ms, wasm_end = zip(*rs, strict=True)
        line = {
            "first_median_ms": round(statistics.median(first)),
            "first_mean_ms": round(statistics.mean(first)),
            "first_range_ms": [round(min(first)), round(max(first))],
            "reload_median_ms": round(statistics.median(reload_ms)),
            "reload_range_ms": [round(min(reload_ms)), round(max(reload_ms))],
        }
        if args.mobile:
            line["wasm_last_byte_median_ms"] = round(statistics.median(wasm_end))
        print(site, json.dumps(line))


if __name__ == "__main__":
    main()
