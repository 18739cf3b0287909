"""The site's own stylesheets (docs/assets/site.css: the charts; calcruntime/browser/calc.css: the
calculators, on every page because instant navigation may bring one) travel inside each page's
<head> (overrides/main.html `extrahead`, `inline_css`), not as two more requests.

Why (issue 12): on a phone's first visit the browser's preload scanner queues every stylesheet,
module preload and script of a calculator page on HTTP/1.1's six connections before boot.js can
ask for the runtime, and the wasm waits behind them. Inlining these two (1.0 + 1.9 kB) and
importing the report form's script only on the report form's page (calcruntime/browser/loader.mjs)
takes 3 of those 14 requests out of the queue. Measured on the phone profile
(scripts/bench_calculators_ab.py --mobile, interleaved, 2026-12-06): the wasm's last byte comes
about 0.1 s sooner (median 3992 against 4100 ms, 10 runs each on five calculators; 4124 against
4225 ms, 14 runs each on all six), and reloads were quicker (1024 against 1146 ms; 1178 against
1205 ms); time to interactive moved less than the noise: 5232 against 5190 ms, then 5285
against 5539 ms (means 5251 against 5229, 5432 against 5522 ms).
Each page carries the 2.9 kB (about 1 kB with gzip).

Both files are excluded from the built site (mkdocs.yml exclude_docs): nothing links them."""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup
from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
STYLESHEETS = {
    "site": ROOT / "docs" / "assets" / "site.css",
    "calc": ROOT / "calcruntime" / "browser" / "calc.css",
}


def inline_css(name: str) -> Markup:
    """`<style>` holding the stylesheet `name` (a key of STYLESHEETS); an unknown name, or a
    text that could close the element early, fails the build."""
    if name not in STYLESHEETS:
        raise PluginError(f"inline_css: no stylesheet {name!r} (known: {sorted(STYLESHEETS)})")
    css = STYLESHEETS[name].read_text(encoding="utf-8")
    if "</" in css:
        raise PluginError(f"inline_css: {STYLESHEETS[name]} contains '</'")
    return Markup(f"<style>{css}</style>")  # our own file, checked above


def on_env(env, config, files):
    env.globals["inline_css"] = inline_css
    return env
