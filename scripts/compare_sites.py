"""Compares two built sites (issue 36: "nothing a user sees changes"): the file lists (every URL),
every HTML/XML/JSON page byte for byte after masking asset hashes (Material's
`main.<8 hex>.min.css`, 32-64 hex digit digests), and lists the other files that differ.

    .venv/bin/python scripts/compare_sites.py /tmp/site-before /tmp/site-after

Exit 1 when a URL appears or goes, or a page differs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MASK = [
    (re.compile(rb"\.[0-9a-f]{8}\.min\.(css|js)"), rb".HASH.min.\1"),
    (re.compile(rb"\b[0-9a-f]{32,64}\b"), rb"HEX"),
]
PAGES = (".html", ".xml", ".json")


def norm(b: bytes) -> bytes:
    for pat, rep in MASK:
        b = pat.sub(rep, b)
    return b


def compare(a: Path, b: Path) -> int:
    fa = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    fb = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    pages, assets = [], []
    for rel in sorted(fa & fb):
        x, y = (a / rel).read_bytes(), (b / rel).read_bytes()
        if x == y:
            continue
        page = rel.suffix in PAGES and rel.parts[:2] != ("assets", "pyodide")
        if page and norm(x) != norm(y):
            pages.append(rel)
        elif not page:
            assets.append(rel)
    n_html = sum(1 for r in fa & fb if r.suffix == ".html")
    print(f"files: {len(fa)} before, {len(fb)} after")
    for r in sorted(fa - fb):
        print("  only before:", r)
    for r in sorted(fb - fa):
        print("  only after:", r)
    print(f"pages differing after masking hashes: {len(pages)} (of {n_html} HTML pages)")
    for r in pages:
        print("  differs:", r)
    print(f"other files differing: {len(assets)}")
    for r in assets:
        print("  asset:", r)
    return 1 if (fa != fb or pages) else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(compare(Path(sys.argv[1]), Path(sys.argv[2])))
