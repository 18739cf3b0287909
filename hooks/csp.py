"""A Content-Security-Policy on every built page (issue 40: the site sent none), as
`<meta http-equiv="Content-Security-Policy">` right after `<meta charset>` (a meta policy
covers only what follows it, so it comes before boot.js and Material's inline scripts; static
hosts such as GitHub Pages cannot send headers).

The policy allows only the site's own origin:
- `script-src 'self'` plus the sha256 of every inline script the site has (Material's
  `__md_scope` set-up, whose text differs with the page's depth, its palette and anchor
  scripts, and the inlined boot.js): the hashes are collected over the whole site, because
  Material's instant navigation keeps the first page's policy for the pages it brings in.
  No 'unsafe-inline' for scripts: a script injected from data would not run.
- `'wasm-unsafe-eval'`: compiling WebAssembly (Pyodide); the calculators' worker is a
  same-origin module worker (`worker-src 'self'`; its own requests, the `blob:` standard
  library included, fall under the worker's policy, which a meta tag does not set).
- `'unsafe-hashes'` with the hash of `return false`: the one inline event handler, the
  calculators' `<form onsubmit="return false">` (calcruntime/browser/render.mjs), allowed by its
  exact text only.
- `style-src 'self' 'unsafe-inline'`: the site's stylesheets are inline `<style>` elements
  (hooks/inline_css.py) and tables carry `style="text-align: ..."` attributes (15,000 of them,
  Python-Markdown's), which a hash cannot allow; styles cannot run script, and data in pages is
  escaped (hooks/templating.py).
- `img-src 'self' data:` (the report's inlined logo), `object-src 'none'`, `base-uri 'self'`,
  `form-action 'self'`; everything else `default-src 'self'`.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

_SCRIPT = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script\s*>", re.S | re.I)
_SRC = re.compile(r"\ssrc\s*=", re.I)
_DATA_TYPE = re.compile(r"""\stype\s*=\s*["']?application/(?:ld\+)?json""", re.I)
META = '<meta http-equiv="Content-Security-Policy" content="{}">'
_HAS_META = re.compile(r'<meta http-equiv="Content-Security-Policy"', re.I)
HANDLERS = ("return false",)  # inline event handlers the site writes (render.mjs's form)


def sha256(text: str) -> str:
    return (
        "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"
    )


def inline_scripts(html: str) -> list[str]:
    """The text of every inline script of `html` that a browser runs (no `src`, not JSON)."""
    return [
        m.group("body")
        for m in _SCRIPT.finditer(html)
        if not _SRC.search(m.group("attrs")) and not _DATA_TYPE.search(m.group("attrs"))
    ]


def policy(script_hashes) -> str:
    scripts = " ".join(sorted(set(script_hashes)))
    handlers = " ".join(sha256(h) for h in HANDLERS)
    return "; ".join(
        (
            "default-src 'self'",
            f"script-src 'self' 'wasm-unsafe-eval' 'unsafe-hashes' {handlers} {scripts}".strip(),
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "worker-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
        )
    )


def with_meta(html: str, csp: str) -> str:
    """`html` with the policy's meta tag after `<meta charset>` (else after `<head>`); a page
    that already has one is left as it is."""
    if _HAS_META.search(html):
        return html
    tag = META.format(csp)
    m = re.search(r"<meta charset=[^>]*>", html, re.I) or re.search(r"<head[^>]*>", html, re.I)
    if m is None:
        return html
    return html[: m.end()] + tag + html[m.end() :]


def apply(site_dir: Path) -> int:
    """Add the site-wide policy to every HTML file under `site_dir`; returns the pages done."""
    pages = sorted(Path(site_dir).rglob("*.html"))
    texts = {p: p.read_text(encoding="utf-8") for p in pages}
    hashes = {sha256(s) for text in texts.values() for s in inline_scripts(text)}
    csp = policy(hashes)
    done = 0
    for path, text in texts.items():
        new = with_meta(text, csp)
        if new != text:
            path.write_text(new, encoding="utf-8")
            done += 1
    return done
