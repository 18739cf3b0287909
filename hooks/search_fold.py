"""Makes Azerbaijani words findable with and without their letters ə, ğ, ı, ş, ç, ö, ü.

lunr has no Azerbaijani stemmer, and a reader often types "yaddas" for "yaddaş". After the
bilingual search index is written (mkdocs-static-i18n merges both languages into
site/search/search_index.json in its on_post_build, priority -100), each entry whose title or
text has letters outside ASCII gets a field `folded`: the same words ASCII-folded. mkdocs.yml
declares the field to the search plugin (`fields: {folded: {boost: 1.0}}`), so lunr indexes it
while the result list still shows the original text. The rewrite is idempotent and keeps the
entry order, so builds stay byte-identical.

It also drops the table text of the generated data pages (hardware/ and models/: spec, fit and
price tables, 70 % of the index; the search plugin has already flattened them to plain text, so
a section entry keeps only its <p> paragraphs) from their entries: their numbers are not search terms,
each item stays findable by its title and prose, and Material's search worker loads the whole
index on every page, where it competed with the calculators' Pyodide worker for the CPU
(reload 1.38 s -> 1.09 s with a small index, measured in headless Chromium).
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

from mkdocs.plugins import event_priority

# Letters NFKD does not decompose to ASCII.
_EXTRA = str.maketrans({"ə": "e", "Ə": "E", "ı": "i", "İ": "I", "ß": "ss", "ø": "o", "Ø": "O"})
_TAG = re.compile(r"<[^>]+>")
_PARA = re.compile(r"<p>.*?</p>", re.S)
_DATA_PAGE = re.compile(r"^(en/)?(hardware|models)/")


def fold(text: str) -> str:
    """'Yaddaş ölçüsü' -> 'Yaddas olcusu' (ə->e, ı->i, then accents dropped by NFKD)."""
    text = text.translate(_EXTRA)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def folded_words(*parts: str) -> str:
    """The distinct words of `parts` (HTML stripped) whose folded form differs, folded."""
    seen, out = set(), []
    for part in parts:
        for word in re.findall(r"\w+", _TAG.sub(" ", part)):
            f = fold(word)
            if f != word and f.lower() not in seen:
                seen.add(f.lower())
                out.append(f)
    return " ".join(out)


def fold_index(path: Path) -> int:
    """Add `folded` to every entry of the search index at `path`; returns entries changed."""
    data = json.loads(path.read_text(encoding="utf-8"))
    changed = 0
    for doc in data.get("docs", []):
        loc, text = doc.get("location", ""), doc.get("text", "")
        if _DATA_PAGE.match(loc) and "#" in loc:
            prose = " ".join(_PARA.findall(text))
            if prose != text:
                doc["text"] = prose
                changed += 1
        words = folded_words(doc.get("title", ""), doc.get("text", ""))
        if words and doc.get("folded") != words:
            doc["folded"] = words
            changed += 1
    if changed:
        path.write_text(json.dumps(data, separators=(",", ":"), default=str), encoding="utf-8")
    return changed


@event_priority(-200)  # after mkdocs-static-i18n (-100) wrote the merged index
def on_post_build(config):
    path = Path(config.site_dir) / "search" / "search_index.json"
    if path.is_file():
        fold_index(path)
