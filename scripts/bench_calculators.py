"""Benchmark of the in-browser calculators (a script, not a test).

    .venv/bin/python scripts/bench_calculators.py [--site site] [--runs 20]

Serves the built site (`make site` first) on a local port, drives headless Chromium (Debian's
/usr/bin/chromium through Playwright) and prints, per calculator page: cold time to interactive
(new browser profile: navigation start -> the worker's ready-promise resolved and the calculator
wired), reload time to interactive (same profile: HTTP cache warm), input change -> updated
result p50/p90 (in the page: event dispatch -> result in the DOM; and -> the frame showing it
painted), with a pause of GAP_MS between changes as between keystrokes and a value not used
before each time, and bytes transferred. The last column splits the input p50 (medians of each
part): reading the form and writing the URL / Python in the worker (advisor.webapi.call) / the
rest of the round trip (messages, JSON.parse) / writing the result's HTML.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PAGES = ("vram", "budget", "picker", "roofline", "serving", "cluster")
# One numeric field per calculator to vary, and its i-th value: every run a value not seen
# before in the page, so no cache of an earlier answer flatters the figure.
VARY = {
    "vram": ("batch", lambda i: 2 + i),
    "budget": ("utilisation", lambda i: round(0.31 + 0.01 * i, 2)),
    "picker": ("batch", lambda i: 2 + i),
    "roofline": ("batch", lambda i: 2 + i),
    "serving": ("input_tokens", lambda i: 1000 + i),
    "cluster": ("tokens", lambda i: 10**12 + 10**9 * (i + 1)),
}


SENT = {"bytes": 0, "requests": []}


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """Counts the body bytes it sends (what crossed the wire; a 304 or a cache hit is 0)."""

    def log_message(self, *a):
        pass

    def send_header(self, keyword, value):
        if keyword.lower() == "content-length":
            SENT["bytes"] += int(value)
            SENT["requests"].append((self.path, int(value)))
        super().send_header(keyword, value)

    def end_headers(self):
        # What a static host would send for versioned assets: cache them (reload test).
        if "/assets/" in self.path:
            self.send_header("Cache-Control", "public, max-age=3600")
        super().end_headers()


def serve(site: Path):
    handler = functools.partial(_Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


READY_JS = """() => new Promise((resolve) => {
  const el = document.querySelector('.calc[data-calc]');
  const done = () => resolve(performance.now());
  if (el && el.dataset.ready === '1') return done();
  document.addEventListener('calc:ready', done, {once: true});
})"""

# One input change, as a reader makes it: the calculator idle (its previous result painted and
# any follow-up work done, then GAP_MS more, about the pause between two keystrokes), the value
# set and an `input` event dispatched. Returns [ms until the result is in the DOM, ms until the
# frame that shows it has been painted (rAF, then a message posted from it runs after the
# paint), the update's phases].
GAP_MS = 120
CHANGE_JS = """async ([name, value, gap]) => {
  const root = document.querySelector('.calc[data-calc]');
  const el = root.querySelector(`[name="${name}"]`);
  if (root.dataset.busy === '1') await new Promise((r) => root.addEventListener('calc:settled', r, {once: true}));
  await new Promise((r) => setTimeout(r, gap));
  const t0 = performance.now();
  const shown = new Promise((resolve) => {
    root.addEventListener('calc:updated', () => {
      const dom = performance.now();
      requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => resolve([dom - t0, performance.now() - t0]);
        ch.port2.postMessage(0);
      });
    }, {once: true});
  });
  el.value = String(value);
  el.dispatchEvent(new Event('input', {bubbles: true}));
  const [dom, painted] = await shown;
  return [dom, painted, root.dataset.phases];
}"""


def measure(base: str, page: str, runs: int, pw) -> dict:
    url = f"{base}en/calculators/{page}/"
    with tempfile.TemporaryDirectory() as profile:
        ctx = pw.chromium.launch_persistent_context(
            profile, executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True
        )
        try:
            p = ctx.new_page()
            SENT["bytes"] = 0
            p.goto(url, wait_until="commit")
            cold = p.evaluate(READY_JS)
            cold_bytes = SENT["bytes"]
            print(
                page,
                "cold worker timings (ms since worker start):",
                p.evaluate(
                    "() => [document.querySelector('.calc').dataset.mode, JSON.stringify(window.__calcTimings)]"
                ),
                file=sys.stderr,
            )
            SENT["bytes"] = 0
            p.reload(wait_until="commit")
            reload_ms = p.evaluate(READY_JS)
            reload_bytes = SENT["bytes"]
            name, value = VARY[page]
            times, painted, phases = [], [], []
            for i in range(runs):
                ms, painted_ms, ph = p.evaluate(CHANGE_JS, [name, value(i), GAP_MS])
                times.append(ms)
                painted.append(painted_ms)
                phases.append([float(x) for x in ph.split("/")])
            times.sort()
            painted.sort()
            # form + URL / Python (timed in the worker) / the rest of the round trip / HTML render
            split = [statistics.median(col) for col in zip(*phases, strict=True)]
            return {
                "page": page,
                "cold_ms": cold,
                "reload_ms": reload_ms,
                "p50_ms": statistics.median(times),
                "p90_ms": times[int(0.9 * (len(times) - 1))],
                "painted_p50_ms": statistics.median(painted),
                "cold_bytes": cold_bytes,
                "reload_bytes": reload_bytes,
                "split": split,
            }
        finally:
            ctx.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", default=str(ROOT / "site"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--pages", default=",".join(PAGES))
    args = ap.parse_args(argv)
    site = Path(args.site)
    if not (site / "assets" / "pyodide" / "advisor.snapshot.gz").is_file():
        print(f"{site}: not a built site with the calculators (make site)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    httpd, base = serve(site)
    rows = []
    try:
        with sync_playwright() as pw:
            for page in args.pages.split(","):
                rows.append(measure(base, page, args.runs, pw))
    finally:
        httpd.shutdown()
    print(
        f"{'page':<10} {'cold TTI':>9} {'reload TTI':>11} {'input p50':>10} {'input p90':>10} "
        f"{'painted p50':>12} {'cold bytes':>12} {'reload bytes':>13}"
        "  input p50 split: form+URL / Python / messages / render"
    )
    for r in rows:
        print(
            f"{r['page']:<10} {r['cold_ms']:>7.0f}ms {r['reload_ms']:>9.0f}ms "
            f"{r['p50_ms']:>8.2f}ms {r['p90_ms']:>8.2f}ms {r['painted_p50_ms']:>10.2f}ms "
            f"{r['cold_bytes']:>12,} {r['reload_bytes']:>13,}  "
            + " / ".join(f"{x:.1f}" for x in r["split"])
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
