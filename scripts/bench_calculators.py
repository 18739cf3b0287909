"""Benchmark of the in-browser calculators (a script, not a test).

    .venv/bin/python scripts/bench_calculators.py [--site site] [--runs 20] [--mobile] [--no-desktop]

Serves the built site (`make site` first) on a local port as a static host does (a precompressed
`NAME.br` next to a file when the browser accepts brotli, as nginx `brotli_static` / Caddy
`precompressed br gzip` do; else a precompressed `NAME.gz`, else gzip on the fly for text and
wasm, as every static host does; `--gzip-only`: no brotli, the issue's first profile; versioned assets
cacheable; sitemap.xml with this server's origin in place of site_url's, so that Material's
instant navigation works here as on the real host), drives headless Chromium (Debian's
/usr/bin/chromium through Playwright).

Desktop profile (always, unless --no-desktop), per calculator page: cold time to interactive
(new browser profile: navigation start -> the worker's ready-promise resolved and the calculator
wired), reload time to interactive (same profile: HTTP cache warm), input change -> updated
result p50/p90 (in the page: event dispatch -> result in the DOM; and -> the frame showing it
painted), with a pause of GAP_MS between changes as between keystrokes and a value not used
before each time, and bytes transferred. The last column splits the input p50 (medians of each
part): reading the form and writing the URL / Python in the worker (advisor.webapi.call) / the
rest of the round trip (messages, JSON.parse) / writing the result's HTML.

Mobile profile (--mobile): a phone reader on a mobile network. 390x844 viewport (touch, DPR 3),
CDP `Network.emulateNetworkConditions` (MOBILE_NET: 9 Mbit/s down, 1.5 Mbit/s up, 60 ms round
trip) and `Emulation.setCPUThrottlingRate` 4, on the page and on its workers (the calculators'
Pyodide worker, Material's search worker), a persistent browser profile in a folder (a real disk
cache). Per calculator page, each in a new profile: first visit (bytes over the network, first
contentful paint with the prerendered figure, time to interactive), reload (same profile), and
a reader who opened a guide page first (GUIDE_PAGE; READ_S seconds of reading, in which the site
may fetch the runtime in idle time) and then follows a link to the calculator (Material's
instant navigation) - bytes and time to interactive from the click. Every request that crossed
the network is listed per page (path, bytes as sent, encoding).
"""

from __future__ import annotations

import argparse
import contextlib
import email.utils
import functools
import gzip
import http.server
import os
import statistics
import sys
import tempfile
import threading
import time
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
# The phone profile of issue 12 (CDP units: bytes per second, milliseconds).
MOBILE_NET = {
    "offline": False,
    "latency": 60,
    "downloadThroughput": 9_000_000 / 8,
    "uploadThroughput": 1_500_000 / 8,
}
MOBILE_CPU_SLOWDOWN = 4
MOBILE_VIEWPORT = {"width": 390, "height": 844}
GUIDE_PAGE = "en/guide/vram-and-bandwidth/"
NEVER_MS = 60_000  # a calculator not interactive after this long is reported as never
SETTLE_S = 3  # desktop: the wait before the later reload
READ_S = 20  # how long the reader reads the guide page before opening the calculator
# What static hosts compress on the fly (GitHub Pages, Netlify, nginx `gzip_types`): text,
# JavaScript, JSON, SVG, XML and WebAssembly; never files that are compressed already (.gz,
# .zip, .whl, images).
GZIP_TYPES = (".html", ".css", ".js", ".mjs", ".json", ".svg", ".xml", ".txt", ".wasm", ".map")
SITE_URL_ORIGIN = "http://127.0.0.1:8000/"  # mkdocs.yml site_url, rewritten in sitemap.xml

LOG_LOCK = threading.Lock()
SENT: list[tuple[str, int, int, str]] = []  # (path, status, body bytes, content-encoding)
IN_FLIGHT = [0]  # responses being sent now


class _Host(http.server.SimpleHTTPRequestHandler):
    """A static host: gzip when accepted (a precompressed NAME.gz first, else compressed here
    once and kept), Last-Modified / If-Modified-Since (304), Cache-Control for /assets/. Logs
    every response's body bytes (what crossed the wire; a 304 or a cache hit is 0)."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
        ".whl": "application/zip",
        ".gz": "application/gzip",
    }
    protocol_version = "HTTP/1.1"
    gz_cache: dict[tuple[str, float], bytes] = {}
    origin = ""
    brotli = True  # serve NAME.br where it exists and the browser accepts br

    def log_message(self, *a):
        pass

    def _log(self, status: int, n: int, enc: str) -> None:
        with LOG_LOCK:
            SENT.append((self.path.split("?")[0], status, n, enc))

    def end_headers(self):
        # What a static host would send for versioned assets: cache them (reload test).
        if "/assets/" in self.path:
            self.send_header("Cache-Control", "public, max-age=3600")
        super().end_headers()

    def do_GET(self):  # noqa: N802 - the base class's name
        with LOG_LOCK:
            IN_FLIGHT[0] += 1
        try:
            self._get()
        finally:
            with LOG_LOCK:
                IN_FLIGHT[0] -= 1

    def _get(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?")[0].endswith("/"):
                return super().do_GET()  # the redirect to NAME/
            path = path / "index.html"
        if not path.is_file():
            self.send_error(404)
            self._log(404, 0, "")
            return
        st = path.stat()
        ims = self.headers.get("If-Modified-Since")
        if ims:
            try:
                if email.utils.parsedate_to_datetime(ims).timestamp() >= int(st.st_mtime):
                    self.send_response(304)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    self._log(304, 0, "")
                    return
            except (TypeError, ValueError):
                pass
        body = path.read_bytes()
        if path.name == "sitemap.xml" and self.origin:
            body = body.replace(SITE_URL_ORIGIN.encode(), self.origin.encode())
        enc = ""
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        br = path.with_name(path.name + ".br")
        if self.brotli and "br" in self.headers.get("Accept-Encoding", "") and br.is_file():
            body, enc = br.read_bytes(), "br"
        elif accepts and path.suffix in GZIP_TYPES:
            pre = path.with_name(path.name + ".gz")
            if pre.is_file() and path.name != "sitemap.xml":
                body = pre.read_bytes()
            else:
                key = (str(path), st.st_mtime)
                if key not in self.gz_cache:
                    self.gz_cache[key] = gzip.compress(body, compresslevel=6, mtime=0)
                body = self.gz_cache[key]
            enc = "gzip"
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", self.date_time_string(int(st.st_mtime)))
        if enc:
            self.send_header("Content-Encoding", enc)
        if path.suffix in GZIP_TYPES or enc:
            self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        self.wfile.write(body)
        self._log(200, len(body), enc)


def serve(site: Path):
    handler = functools.partial(_Host, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    _Host.origin = f"http://127.0.0.1:{httpd.server_address[1]}/"
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, _Host.origin


def mark() -> int:
    with LOG_LOCK:
        return len(SENT)


def since(i: int) -> list[tuple[str, int, int, str]]:
    with LOG_LOCK:
        return list(SENT[i:])


def total(reqs) -> int:
    return sum(r[2] for r in reqs)


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


TIMINGS_JS = (
    "() => [document.querySelector('.calc').dataset.mode, JSON.stringify(window.__calcTimings)]"
)


def measure(base: str, page: str, runs: int, pw) -> dict:
    url = f"{base}en/calculators/{page}/"
    with tempfile.TemporaryDirectory() as profile:
        ctx = pw.chromium.launch_persistent_context(
            profile, executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True
        )
        try:
            p = ctx.new_page()
            m0 = mark()
            p.goto(url, wait_until="commit")
            cold = p.evaluate(READY_JS)
            cold_bytes = total(since(m0))
            print(
                page,
                "cold worker timings (ms since worker start):",
                p.evaluate(TIMINGS_JS),
                file=sys.stderr,
            )
            m0 = mark()
            p.reload(wait_until="commit")
            reload_ms = p.evaluate(READY_JS)
            reload_bytes = total(since(m0))
            print(page, "reload worker timings:", p.evaluate(TIMINGS_JS), file=sys.stderr)
            name, value = VARY[page]
            times, painted, phases = [], [], []
            for i in range(runs):
                ms, painted_ms, ph = p.evaluate(CHANGE_JS, [name, value(i), GAP_MS])
                times.append(ms)
                painted.append(painted_ms)
                phases.append([float(x) for x in ph.split("/")])
            # a later reload, once this page view has settled (the worker's warm-up calls and
            # V8's optimising compiles of the wasm done): the first reload above comes at once
            # after the cold start, while that work still runs
            time.sleep(SETTLE_S)
            p.reload(wait_until="commit")
            settled_ms = p.evaluate(READY_JS)
            times.sort()
            painted.sort()
            # form + URL / Python (timed in the worker) / the rest of the round trip / HTML render
            split = [statistics.median(col) for col in zip(*phases, strict=True)]
            return {
                "page": page,
                "cold_ms": cold,
                "reload_ms": reload_ms,
                "settled_reload_ms": settled_ms,
                "p50_ms": statistics.median(times),
                "p90_ms": times[int(0.9 * (len(times) - 1))],
                "painted_p50_ms": statistics.median(painted),
                "cold_bytes": cold_bytes,
                "reload_bytes": reload_bytes,
                "split": split,
            }
        finally:
            ctx.close()


def desktop(base: str, pages: list[str], runs: int, pw) -> None:
    rows = [measure(base, page, runs, pw) for page in pages]
    print(f"desktop (no throttling; {'gzip' if not _Host.brotli else 'br or gzip'} transport)")
    print(
        f"{'page':<10} {'cold TTI':>9} {'reload TTI':>11} {'later reload':>13} "
        f"{'input p50':>10} {'input p90':>10} "
        f"{'painted p50':>12} {'cold bytes':>12} {'reload bytes':>13}"
        "  input p50 split: form+URL / Python / messages / render"
    )
    for r in rows:
        print(
            f"{r['page']:<10} {r['cold_ms']:>7.0f}ms {r['reload_ms']:>9.0f}ms "
            f"{r['settled_reload_ms']:>11.0f}ms "
            f"{r['p50_ms']:>8.2f}ms {r['p90_ms']:>8.2f}ms {r['painted_p50_ms']:>10.2f}ms "
            f"{r['cold_bytes']:>12,} {r['reload_bytes']:>13,}  "
            + " / ".join(f"{x:.1f}" for x in r["split"])
        )
    print(
        "reload TTI: a reload at once after the cold start became interactive; later reload: "
        f"after the input changes and {SETTLE_S:g} s more"
    )


# --------------------------------------------------------------------------- mobile profile


def _renderers(profile: str) -> list[int]:
    """Process ids of the renderer processes of the Chromium that uses `profile`."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--type=renderer" in cmd and any(profile.encode() in c for c in cmd):
            pids.append(int(d.name))
    return pids


class _ProcessSlowdown(threading.Thread):
    """Runs the renderer processes of a browser profile (the page's main thread AND its
    workers) a 1/`rate` share of the time: SIGSTOP / SIGCONT in PERIOD_S cycles. CDP's
    Emulation.setCPUThrottlingRate reaches the page's main thread only ("Operation is only
    supported for pages, not workers"), so the calculators' Pyodide worker would run at full
    speed."""

    PERIOD_S = 0.02

    def __init__(self, profile: str, rate: float):
        super().__init__(daemon=True)
        self.profile, self.rate, self.stop = profile, rate, threading.Event()

    def run(self):
        import signal

        run_s = self.PERIOD_S / self.rate
        while not self.stop.is_set():
            pids = _renderers(self.profile)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
            time.sleep(self.PERIOD_S - run_s)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
            time.sleep(run_s)

    def close(self):
        self.stop.set()
        self.join()
        import signal

        for pid in _renderers(self.profile):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


class _Phone:
    """A phone in a persistent browser profile: viewport, CDP network conditions (they apply to
    the page's workers' requests too) and the CPU slowdown, by CDP on the page's main thread
    (`cpu="cdp"`, what DevTools does) or on the whole renderer process (`cpu="process"`)."""

    def __init__(self, pw, profile: str, cpu: str):
        self.ctx = pw.chromium.launch_persistent_context(
            profile,
            executable_path="/usr/bin/chromium",
            args=CHROMIUM_ARGS,
            headless=True,
            viewport=MOBILE_VIEWPORT,
            device_scale_factor=3,
            is_mobile=True,
            has_touch=True,
        )
        self.page = self.ctx.pages[0] if self.ctx.pages else self.ctx.new_page()
        cdp = self.ctx.new_cdp_session(self.page)
        cdp.send("Network.enable", {})
        cdp.send("Network.emulateNetworkConditions", MOBILE_NET)
        self.slow = None
        if cpu == "cdp":
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": MOBILE_CPU_SLOWDOWN})
        else:
            self.slow = _ProcessSlowdown(profile, MOBILE_CPU_SLOWDOWN)
            self.slow.start()

    def close(self):
        if self.slow:
            self.slow.close()
        self.ctx.close()


FCP_JS = """() => new Promise((resolve) => {
  const get = () => performance.getEntriesByName('first-contentful-paint')[0];
  const shown = () => {
    const r = document.querySelector('.calc-result');
    return r ? r.textContent.trim().length > 0 : false;
  };
  const e = get();
  if (e) return resolve([e.startTime, shown()]);
  new PerformanceObserver((l) => resolve([l.getEntries()[0].startTime, shown()]))
    .observe({type: 'paint', buffered: true});
})"""


def _quiet(seconds_min: float, seconds_max: float, still_s: float = 2.0) -> None:
    """Wait at least `seconds_min`, then until no response is being sent and none has ended
    for `still_s` (or `seconds_max` in all): the page's background fetches are done."""
    t0 = time.monotonic()
    last_n, last_t = mark(), time.monotonic()
    while time.monotonic() - t0 < seconds_max:
        time.sleep(0.25)
        n = mark()
        with LOG_LOCK:
            busy = IN_FLIGHT[0] > 0
        if n != last_n or busy:
            last_n, last_t = n, time.monotonic()
        if time.monotonic() - t0 >= seconds_min and time.monotonic() - last_t >= still_s:
            return


def mobile_page(base: str, page: str, pw, cpu: str) -> dict:
    url = f"{base}en/calculators/{page}/"
    out: dict = {"page": page}
    with tempfile.TemporaryDirectory() as profile:
        phone = _Phone(pw, profile, cpu)
        p = phone.page
        try:
            m0 = mark()
            p.goto(url, wait_until="commit")
            out["first_ms"] = p.evaluate(READY_JS)
            out["tti_bytes"] = total(since(m0))
            print(f"{page}: first visit interactive", file=sys.stderr)
            out["fcp_ms"], out["fcp_has_result"] = p.evaluate(FCP_JS)
            out["mode"] = p.evaluate("() => document.querySelector('.calc').dataset.mode")
            out["timings"] = p.evaluate("() => JSON.stringify(window.__calcTimings)")
            # late requests of the first visit (search worker, its index; after a plain start
            # the snapshot, for the next page view: the worker notes it in localStorage once
            # the browser has it all, which the server's side cannot tell)
            if out["mode"] == "plain":
                p.wait_for_function("() => !!localStorage.getItem('calc.snapshot')", timeout=90_000)
            _quiet(0.5, 60)
            out["first_reqs"] = since(m0)
            m0 = mark()
            p.reload(wait_until="commit")
            out["reload_ms"] = p.evaluate(READY_JS)
            out["reload_mode"] = p.evaluate(
                "() => [document.querySelector('.calc').dataset.mode, localStorage.getItem('calc.snapshot')]"
            )
            out["reload_reqs"] = since(m0)
            print(f"{page}: reloaded", file=sys.stderr)
        finally:
            phone.close()
    with tempfile.TemporaryDirectory() as profile:
        phone = _Phone(pw, profile, cpu)
        p = phone.page
        try:
            m0 = mark()
            p.goto(base + GUIDE_PAGE, wait_until="load")
            _quiet(READ_S, READ_S + 40)
            out["guide_reqs"] = since(m0)
            print(f"{page}: guide page read", file=sys.stderr)
            m0 = mark()
            # a link to the calculator, as in the guide's navigation: instant navigation
            t0 = p.evaluate("() => performance.now()")
            ok = p.evaluate(
                """(href) => { const a = [...document.querySelectorAll('a[href]')]
                  .find((a) => a.href === href); if (!a) return false;
                  window.__benchGuideMark = 1; a.click(); return true; }""",
                url,
            )
            if not ok:
                raise RuntimeError(f"{GUIDE_PAGE}: no link to {url}")
            p.wait_for_url(url)
            # after an instant navigation performance.now() keeps counting from the guide page
            # (same document); after a full load it restarts: then time from the new origin
            same_doc = p.evaluate("() => !!window.__benchGuideMark")
            t1 = p.evaluate(
                f"() => Promise.race([({READY_JS})(), new Promise((r) => setTimeout(() => r(null), {NEVER_MS}))])"
            )
            out["guide_calc_ms"] = None if t1 is None else t1 - t0 if same_doc else t1
            out["guide_calc_kind"] = "instant" if same_doc else "full load"
            out["guide_calc_mode"] = p.evaluate(
                "() => document.querySelector('.calc').dataset.mode"
            )
            out["guide_calc_reqs"] = since(m0)
        finally:
            phone.close()
    return out


def _listing(title: str, reqs) -> None:
    print(f"  {title}: {total(reqs):,} bytes in {sum(1 for r in reqs if r[2])} responses")
    for path, status, n, enc in sorted(reqs, key=lambda r: -r[2]):
        if n or status >= 400:
            print(f"    {n:>11,}  {status}  {enc or '-':<5} {path}")


def mobile(base: str, pages: list[str], pw, verbose: bool, cpu: str) -> None:
    rows = []
    for page in pages:
        r = mobile_page(base, page, pw, cpu)
        rows.append(r)
        print(
            f"{page}: worker {r['mode']} {r['timings']}; reload {r['reload_mode']}; "
            f"after the guide page {r['guide_calc_mode']}",
            file=sys.stderr,
        )
    print(
        f"mobile: {MOBILE_VIEWPORT['width']}x{MOBILE_VIEWPORT['height']}, CPU x"
        f"{MOBILE_CPU_SLOWDOWN}, {MOBILE_NET['downloadThroughput'] * 8 / 1e6:g}/"
        f"{MOBILE_NET['uploadThroughput'] * 8 / 1e6:g} Mbit/s, {MOBILE_NET['latency']} ms RTT, "
        f"{'gzip' if not _Host.brotli else 'br (precompressed) or gzip'} transport, "
        "persistent profile; CPU slowdown on "
        + ("the page's main thread (CDP)" if cpu == "cdp" else "the renderer process")
    )
    print("bytes over the network, per page and request (first visit):")
    for r in rows:
        _listing(f"{r['page']} first visit", r["first_reqs"])
        if verbose:
            _listing(f"{r['page']} reload", r["reload_reqs"])
            _listing(f"guide page {GUIDE_PAGE} (read {READ_S} s)", r["guide_reqs"])
            _listing(f"{r['page']} after the guide page", r["guide_calc_reqs"])
    print(
        f"{'page':<10} {'bytes to TTI':>13} {'first bytes':>12} {'FCP':>7} {'first TTI':>10} "
        f"{'reload TTI':>11} "
        f"{'reload bytes':>13} {'guide bytes':>12} {'guide->calc TTI':>16} {'->calc bytes':>13}"
    )
    for r in rows:
        print(
            f"{r['page']:<10} {r['tti_bytes']:>13,} {total(r['first_reqs']):>12,} "
            f"{r['fcp_ms']:>5.0f}ms"
            f"{'' if r['fcp_has_result'] else '!'} {r['first_ms']:>8.0f}ms "
            f"{r['reload_ms']:>9.0f}ms {total(r['reload_reqs']):>13,} "
            f"{total(r['guide_reqs']):>12,} "
            + (
                f"{r['guide_calc_ms']:>14.0f}ms "
                if r["guide_calc_ms"] is not None
                else f"{'never':>16} "
            )
            + f"{total(r['guide_calc_reqs']):>13,}  ({r['guide_calc_kind']})"
        )
    print("FCP: first contentful paint, with the prerendered result in the page ('!' if not)")
    print(
        "bytes to TTI: what had crossed the network when the calculator became interactive; "
        "first bytes: the whole first visit, background fetches included"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", default=str(ROOT / "site"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--pages", default=",".join(PAGES))
    ap.add_argument("--mobile", action="store_true", help="also the phone profile (issue 12)")
    ap.add_argument("--no-desktop", action="store_true", help="skip the desktop profile")
    ap.add_argument(
        "--cpu",
        choices=("cdp", "process"),
        default="cdp",
        help="mobile CPU slowdown: CDP (main thread only) or the whole renderer process",
    )
    ap.add_argument("--verbose", action="store_true", help="list every scenario's requests")
    ap.add_argument(
        "--gzip-only", action="store_true", help="never serve the precompressed NAME.br files"
    )
    args = ap.parse_args(argv)
    _Host.brotli = not args.gzip_only
    site = Path(args.site)
    if not (site / "assets" / "pyodide" / "advisor.snapshot.gz").is_file():
        print(f"{site}: not a built site with the calculators (make site)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    pages = args.pages.split(",")
    httpd, base = serve(site)
    try:
        with sync_playwright() as pw:
            if not args.no_desktop:
                desktop(base, pages, args.runs, pw)
            if args.mobile:
                mobile(base, pages, pw, args.verbose, args.cpu)
    finally:
        httpd.shutdown()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    sys.exit(main())
