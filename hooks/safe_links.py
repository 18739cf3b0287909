"""The built pages link only http(s), `mailto:` and relative URLs (issue 40: a Markdown link in a
bench result's formula became `<a href="javascript:...">` on the benchmarks pages).

Data never becomes a link by itself (templating.escape_value neutralises Markdown link syntax,
bench_text quotes run texts the same way, the `url` filter passes http(s) only); this check of
every page's HTML is the second lock: hooks/render.py's `on_page_content` fails the build naming
the page and the address. `src` may also be a `data:image/` URI (the report's inlined logo).
"""

from __future__ import annotations

import html
import re

# href / src / action / formaction / xlink:href attributes, quoted or not
_ATTR = re.compile(
    r"""\s(?P<name>(?:xlink:)?href|src|action|formaction|srcset|poster)\s*=\s*"""
    r"""(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\s>"']+))""",
    re.IGNORECASE,
)
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
SAFE_SCHEMES = {"http", "https", "mailto"}


def link_scheme(value: str) -> str | None:
    """The scheme of an attribute's URL as a browser reads it (entities decoded; tabs, line
    breaks and leading spaces dropped: `jav&#x09;ascript:` is `javascript:`), lower case, or
    None for a relative URL."""
    url = html.unescape(value)
    url = re.sub(r"[\t\n\r]", "", url).lstrip("\x00 \x0c")
    m = _SCHEME.match(url)
    return m.group(1).lower() if m else None


def unsafe_links(page_html: str) -> list[str]:
    """Every attribute value of `page_html` that links a scheme other than http(s) / mailto
    (for `src`, `data:image/...` too)."""
    bad = []
    for m in _ATTR.finditer(page_html):
        value = m.group("dq") if m.group("dq") is not None else m.group("sq") or m.group("bare")
        value = value or ""
        scheme = link_scheme(value)
        if scheme is None or scheme in SAFE_SCHEMES:
            continue
        image = html.unescape(value).strip().lower().startswith("data:image/")
        if scheme == "data" and m.group("name").lower() == "src" and image:
            continue
        bad.append(f'{m.group("name")}="{value[:80]}"')
    return bad
