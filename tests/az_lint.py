"""Checks of the Azerbaijani text a reader sees on the built site: glossary variants, stray
English words, "None" and numbers with a decimal point. Used by tests/test_az_text.py, and as a
command that prints the hits per page:

    .venv/bin/python tests/az_lint.py SITE_DIR [--words]

What is checked ("reader text"): the text of each Azerbaijani page's <title> and <body> (and the
texts a reader sees in attributes: tooltips, aria-labels, placeholders, alt texts and a text
field's shown value, `ATTR_TEXTS`), without
<script>, <style>, <code>, <pre>, <kbd>, <samp>, elements marked with another language
(`lang="en"`: source titles, the English name of a term) and text inside parentheses (the
convention "term (English term)" on first use).

- Glossary variants (tests/az_glossary.yaml): a phrase of stems; each word may carry
  Azerbaijani inflectional suffixes (`SUFFIX`), not derivational ones.
- Stray English: a word of ASCII letters that the built English pages use (their vocabulary,
  lower-cased) and that is not an accepted word (tests/az_allow.yaml: names, units, loanwords
  the glossary approves, Azerbaijani words spelt like English ones), not a catalog name (model,
  accelerator, vendor, cloud) and not an acronym or a code-like name (H100, NVLink, PyTorch).
- "None": Python's empty value printed into a page.
- Decimal point: a number like 24.5 (the Azerbaijani form is 24,5); dates, versions and
  dotted names are not numbers of that shape.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "tests" / "az_glossary.yaml"
ALLOW = ROOT / "tests" / "az_allow.yaml"

SKIP_TAGS = {"script", "style", "code", "pre", "kbd", "samp", "template", "noscript"}
BLOCK_TAGS = {
    "p", "li", "td", "th", "tr", "div", "section", "article", "header", "footer", "nav",
    "h1", "h2", "h3", "h4", "h5", "h6", "br", "ul", "ol", "table", "dt", "dd", "label",
    "option", "button", "figcaption", "caption", "summary", "details", "title", "tspan",
    "text", "span", "a", "small", "strong", "em", "sup", "sub", "output", "legend",
}  # fmt: skip
VOID_TAGS = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "col", "area"}
# Attributes whose text a reader sees or hears (tooltip, screen reader, empty field, missing
# image); a text field's `value` is its shown default ("0,6" on an az page, not "0.6").
ATTR_TEXTS = ("title", "aria-label", "placeholder", "alt")

# Azerbaijani inflectional suffixes (Mirzəyev, "Azərbaycan dilinin qrammatikası"; harmony is not
# checked, so one list serves both vowel rows): plural, possessive, case, with, copula, -ki.
_MORPHEMES = sorted(
    [
        "lar",
        "lər",
        "ı",
        "i",
        "u",
        "ü",
        "sı",
        "si",
        "su",
        "sü",
        "ım",
        "im",
        "um",
        "üm",
        "m",
        "ın",
        "in",
        "un",
        "ün",
        "n",
        "ımız",
        "imiz",
        "umuz",
        "ümüz",
        "mız",
        "miz",
        "muz",
        "müz",
        "ınız",
        "iniz",
        "unuz",
        "ünüz",
        "nız",
        "niz",
        "nuz",
        "nüz",
        "nın",
        "nin",
        "nun",
        "nün",
        "a",
        "ə",
        "ya",
        "yə",
        "na",
        "nə",
        "nı",
        "ni",
        "nu",
        "nü",
        "yı",
        "yi",
        "yu",
        "yü",
        "da",
        "də",
        "nda",
        "ndə",
        "ta",
        "tə",
        "dan",
        "dən",
        "ndan",
        "ndən",
        "tan",
        "tən",
        "la",
        "lə",
        "yla",
        "ylə",
        "dır",
        "dir",
        "dur",
        "dür",
        "tır",
        "tir",
        "tur",
        "tür",
        "kı",
        "ki",
        "dakı",
        "dəki",
        "ndakı",
        "ndəki",
        "dək",
    ],
    key=len,
    reverse=True,
)
SUFFIX = re.compile(r"(?:-?(?:" + "|".join(_MORPHEMES) + r")){0,5}")

WORD = re.compile(r"[0-9A-Za-zƏəĞğIıİiÖöÜüŞşÇçÂâ]+(?:['’][A-Za-z]+)?")
ASCII_WORD = re.compile(r"[A-Za-z]+")
DECIMAL_POINT = re.compile(r"(?<![\w.\-/:#])\d+\.\d+(?![\w.\-/:])")  # 3.11.7 is a version
AZ_GROUPED = re.compile(r"[1-9]\d{0,2}(?:\.\d{3})+")  # 48.721: dot groups of three (az)


def az_lower(text: str) -> str:
    """Lower case the Azerbaijani way: I -> ı, İ -> i."""
    return text.replace("I", "ı").replace("İ", "i").lower()


# Identifiers with dots, underscores or slashes (BM.GPU.H100.8, memory_gib, catalog/currency.yaml,
# token/s): ids and paths, not words; left out of the word checks.
IDENT = re.compile(r"[\w\-+]+(?:[._/][\w\-+]+)+")
URL = re.compile(
    r"(?:https?://|www\.)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[\w.-]+\.(?:com|org|net|gov|io|ai|dev|html|pdf)\b\S*"
)


def strip_parentheses(text: str) -> str:
    """Text without any (...) group, nested ones included, and without URLs."""
    text = URL.sub(" ", text)
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"\([^()]*\)", " ", text)
    return text


class _Text(HTMLParser):
    """The reader text of a page: title + body, without skipped and other-language elements."""

    def __init__(self, scopes=None):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.stack: list[bool] = []  # per open element: is it skipped?
        self.scoped: list[bool] = []  # per open element: does it open a checked scope?
        self.scopes = scopes  # None: the whole title + body; else [(tag, class prefix)]
        self.in_body_or_title = 0
        self.page_lang = None
        # Tables: per open table, [header texts, current column, in header cell]. A column
        # headed "English" (the glossary's) holds the English terms by design.
        self.tables: list[list] = []

    def _skipped(self) -> bool:
        return any(self.stack)

    def _in_scope(self) -> bool:
        return self.in_body_or_title > 0 if self.scopes is None else any(self.scoped)

    def _attribute_texts(self, tag, attrs: dict, skipped: bool) -> None:
        if skipped or not self._in_scope():
            return
        names = ATTR_TEXTS + (("value",) if tag == "input" and attrs.get("type") == "text" else ())
        for name in names:
            if attrs.get(name):
                self.parts.append(f" {attrs[name]} ")

    def handle_starttag(self, tag, attrs):
        if tag in VOID_TAGS:
            if tag == "br":
                self.parts.append(" ")
            self._attribute_texts(tag, dict(attrs), self._skipped())
            return
        attrs = dict(attrs)
        lang = attrs.get("lang")
        english_cell = False
        if tag == "table":
            self.tables.append([[], -1, False])
        elif tag == "tr" and self.tables:
            self.tables[-1][1] = -1
        elif tag in ("th", "td") and self.tables:
            table = self.tables[-1]
            table[1] += 1
            table[2] = tag == "th"
            if tag == "th":
                table[0].append("")
            else:
                heads = table[0]
                english_cell = table[1] < len(heads) and heads[table[1]].strip() == "English"
        if tag == "html":
            self.page_lang = lang
        other_lang = tag != "html" and lang is not None and lang != self.page_lang
        skip = tag in SKIP_TAGS or other_lang or english_cell
        # Material's hidden parts a reader never sees as text.
        if tag == "svg" and attrs.get("class") is None and "aria-hidden" in attrs:
            skip = True
        self.stack.append(skip)
        classes = (attrs.get("class") or "").split()
        self.scoped.append(
            self.scopes is not None
            and any(tag == t and any(c.startswith(p) for c in classes) for t, p in self.scopes)
        )
        if tag in ("body", "title"):
            self.in_body_or_title += 1
        if tag in BLOCK_TAGS:
            self.parts.append(" ")
        self._attribute_texts(tag, attrs, self._skipped())

    def handle_endtag(self, tag):
        if tag in VOID_TAGS or not self.stack:
            return
        self.stack.pop()
        self.scoped.pop()
        if tag == "table" and self.tables:
            self.tables.pop()
        elif tag == "th" and self.tables:
            self.tables[-1][2] = False
        if tag in ("body", "title"):
            self.in_body_or_title -= 1
        if tag in BLOCK_TAGS:
            self.parts.append(" ")

    def handle_data(self, data):
        if self.tables and self.tables[-1][2] and self.tables[-1][0]:
            self.tables[-1][0][-1] += data
        if self._in_scope() and not self._skipped():
            self.parts.append(data)


def reader_text(html: str) -> str:
    """The checked text of one page (parentheses kept: see `strip_parentheses`)."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return re.sub(r"\s+", " ", "".join(parser.parts))


def reader_text_in(html: str, scopes: list[tuple[str, str]]) -> str:
    """The checked text inside the elements `(tag, class prefix)` of `scopes` only."""
    parser = _Text(scopes)
    parser.feed(html)
    parser.close()
    return re.sub(r"\s+", " ", "".join(parser.parts))


@dataclass(frozen=True)
class Variant:
    concept: str
    approved: str
    words: tuple[str, ...]
    exact_case: bool

    @property
    def text(self) -> str:
        return " ".join(self.words)


@lru_cache(maxsize=1)
def glossary_variants() -> tuple[Variant, ...]:
    data = yaml.safe_load(GLOSSARY.read_text(encoding="utf-8"))
    out = []
    for concept in data["concepts"]:
        exact = concept.get("case") == "exact"
        for phrase in concept["replaced"]:
            words = tuple(re.split(r"[\s\-]+", phrase if exact else az_lower(phrase)))
            out.append(Variant(concept["en"], concept["az"], words, exact))
    return tuple(out)


def _word_matches(token: str, stem: str) -> bool:
    return token.startswith(stem) and SUFFIX.fullmatch(token[len(stem) :]) is not None


def variant_hits(text: str) -> Counter:
    """{variant phrase: count} in `text` (reader text): every position whose tokens match the
    phrase's words in turn (a word matches itself, or, case-folded, its stem + a suffix). A
    token that matches a word starts with it, and the tokens that start with a word lie side
    by side in sorted order: only those are tried as the phrase's first word (bisect), not
    every token of the page."""
    text = IDENT.sub(" ", strip_parentheses(text))
    # A hyphen separates words here ("GPU-saatı", "data-mərkəzi"), as in the phrases.
    tokens = WORD.findall(text)
    lower = [az_lower(t) for t in tokens]
    index: dict[bool, tuple[list[str], dict[str, list[int]]]] = {}
    hits: Counter = Counter()
    for v in glossary_variants():
        seq = tokens if v.exact_case else lower
        if v.exact_case not in index:
            where: dict[str, list[int]] = {}
            for i, t in enumerate(seq):
                where.setdefault(t, []).append(i)
            index[v.exact_case] = (sorted(where), where)
        names, where = index[v.exact_case]
        n = len(v.words)

        def matches(token: str, k: int, v=v) -> bool:
            return token == v.words[k] or (not v.exact_case and _word_matches(token, v.words[k]))

        starts = []
        for t in names[bisect_left(names, v.words[0]) :]:
            if not t.startswith(v.words[0]):
                break
            if matches(t, 0):
                starts += where[t]
        for i in sorted(starts):
            if i <= len(seq) - n and all(matches(seq[i + k], k) for k in range(1, n)):
                hits[v.text] += 1
    return hits


@lru_cache(maxsize=1)
def allow_list() -> frozenset[str]:
    data = yaml.safe_load(ALLOW.read_text(encoding="utf-8"))
    words: set[str] = set()
    for group in data.values():
        for w in group:
            words.add(w.lower())
    return frozenset(words)


# Catalog keys whose values are names: products, vendors, a provider's instance and region ids,
# architectures and interconnect product names (NVLink bridge, Infinity Fabric).
NAME_KEYS = ("name", "vendor", "family", "provider", "id", "display_name", "instance", "region",
             "architecture", "interconnect")  # fmt: skip


@lru_cache(maxsize=1)
def _catalog_documents() -> tuple:
    """Every catalog/ YAML document, parsed once for the name lists below (libyaml's safe loader
    where PyYAML has it: the same documents, a tenth of the time of the pure-Python one)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple(
        yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 - a safe loader
        for path in sorted((ROOT / "catalog").rglob("*.yaml"))
    )


def _catalog_name_values():
    """Every string under a NAME_KEYS key anywhere in catalog/ (names, vendors, families, ...)."""
    for document in _catalog_documents():
        stack = [document]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for key, value in node.items():
                    if key in NAME_KEYS:
                        if isinstance(value, str):
                            yield value
                    else:
                        stack.append(value)
            elif isinstance(node, list):
                stack.extend(node)


@lru_cache(maxsize=1)
def catalog_name_texts() -> tuple[str, ...]:
    """Every catalog name as written (e.g. "NVIDIA B200 (HGX, 1000 W)"), longest first: a
    product's name is not a wording choice, so the variant check reads the text without them."""
    return tuple(sorted(set(_catalog_name_values()), key=len, reverse=True))


def without_catalog_names(text: str) -> str:
    for name in catalog_name_texts():
        text = text.replace(name, " ")
    return text


@lru_cache(maxsize=1)
def catalog_names() -> frozenset[str]:
    """Words of every catalog name (models, accelerators, vendors, families, clouds, fabrics)."""
    return frozenset(w.lower() for v in _catalog_name_values() for w in ASCII_WORD.findall(v))


def _code_like(word: str) -> bool:
    """An acronym or a name spelt with inner capitals (GPU is a glossary variant, not this)."""
    return (len(word) >= 2 and word.isupper()) or any(c.isupper() for c in word[1:])


def english_words(text: str, vocabulary: frozenset[str]) -> Counter:
    """{word: count} of stray English in `text` (reader text)."""
    text = IDENT.sub(" ", strip_parentheses(text))
    # An Azerbaijani case or ordinal suffix after a number ("10-cu", "90-cı") is no English word.
    text = re.sub(r"(?<=\d)-[a-zəğıöşüç]+", " ", text)
    allowed = allow_list() | catalog_names()
    # A hyphenated name the allow-list knows whole (nccl-tests, all-reduce) is one word.
    text = re.sub(
        r"[A-Za-z]+(?:-[A-Za-z]+)+",
        lambda m: " " if m.group().lower() in allowed else m.group(),
        text,
    )
    hits: Counter = Counter()
    for tok in WORD.findall(text):
        if not ASCII_WORD.fullmatch(tok) or _code_like(tok):
            continue
        low = tok.lower()
        if low in vocabulary and low not in allowed and len(low) > 1:
            hits[tok] += 1
    return hits


def none_count(text: str) -> int:
    return len(re.findall(r"\bNone\b", text))


@lru_cache(maxsize=1)
def catalog_full_names() -> tuple[str, ...]:
    """Catalog names with a dotted version in them ("Llama 3.1 8B", "RDNA 3.5"), longest first."""
    names: set[str] = set()
    for data in _catalog_documents():
        stack = [data]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for key, value in node.items():
                    named = ("name", "family", "display_name", "architecture", "scale_out_nic")
                    if key in named and isinstance(value, str):
                        if re.search(r"\d\.\d", value):
                            names.add(value)
                            names.add(value.split(" (")[0])  # parentheses are stripped first
                    else:
                        stack.append(value)
            elif isinstance(node, list):
                stack.extend(node)
    return tuple(sorted(names, key=len, reverse=True))


def decimal_points(text: str) -> list[str]:
    """Numbers written with a decimal point (az uses the comma), names with versions left out."""
    for name in catalog_full_names():
        text = text.replace(name, " ")
    text = re.sub(
        r"\b[A-Za-z][\w-]*\s+v?\d+\.\d+(?:\.\d+)*[A-Za-z]*\b(?=\s+\d+(?:\.\d+)?[BM]\b)", " ", text
    )
    # a software version keeps its dot ("bitsandbytes 0.50", "CUDA 12.4")
    text = re.sub(
        r"\b(?:bitsandbytes|CUDA|ROCm|PyTorch|vLLM|SGLang|TensorRT-LLM)\s+v?\d+(?:\.\d+)+",
        " ",
        text,
    )
    return [m for m in DECIMAL_POINT.findall(text) if not AZ_GROUPED.fullmatch(m)]


def pages(site: Path, lang: str) -> dict[str, Path]:
    """{url path: file} of the built pages of one language (az at /, en under /en/)."""
    out = {}
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        if rel.startswith("assets/"):
            continue
        is_en = rel.startswith("en/")
        if (lang == "en") == is_en:
            out[rel] = path
    return out


def english_vocabulary(site: Path) -> frozenset[str]:
    """Lower-cased ASCII words of the built English pages' reader text."""
    words: set[str] = set()
    for rel, path in pages(site, "en").items():
        if rel == "en/glossary/index.html":  # lists the Azerbaijani terms beside the English
            continue
        words.update(w.lower() for w in ASCII_WORD.findall(reader_text(path.read_text("utf-8"))))
    return frozenset(words - client_words())


@lru_cache(maxsize=1)
def client_words() -> frozenset[str]:
    """Words of the example client profiles (examples/*.yaml): their names are the client's own,
    in Azerbaijani, and appear as such on the English reports too."""
    words: set[str] = set()
    for path in (ROOT / "examples").glob("*.yaml"):
        words.update(w.lower() for w in ASCII_WORD.findall(path.read_text(encoding="utf-8")))
    return frozenset(words)


@dataclass(frozen=True)
class PageReport:
    page: str
    variants: Counter
    english: Counter
    nones: int
    decimals: list[str]


def check_site(site: Path) -> list[PageReport]:
    vocabulary = english_vocabulary(site)
    reports = []
    for rel, path in pages(site, "az").items():
        text = reader_text(path.read_text("utf-8"))
        stripped = strip_parentheses(text)
        reports.append(
            PageReport(
                rel,
                variant_hits(without_catalog_names(text)),
                english_words(text, vocabulary),
                none_count(text),
                decimal_points(stripped),
            )
        )
    return reports


def totals(reports: list[PageReport]) -> dict[str, int]:
    return {
        "pages": len(reports),
        "variants": sum(sum(r.variants.values()) for r in reports),
        "english": sum(sum(r.english.values()) for r in reports),
        "none": sum(r.nones for r in reports),
        "decimal_point": sum(len(r.decimals) for r in reports),
    }


def describe(reports: list[PageReport], what: str) -> str:
    lines = []
    for r in reports:
        if what == "variants" and r.variants:
            lines.append(f"{r.page}: {dict(r.variants.most_common())}")
        elif what == "english" and r.english:
            lines.append(f"{r.page}: {dict(r.english.most_common())}")
        elif what == "none" and r.nones:
            lines.append(f"{r.page}: None x{r.nones}")
        elif what == "decimal_point" and r.decimals:
            lines.append(f"{r.page}: {r.decimals}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    site = Path(argv[0])
    reports = check_site(site)
    for what in ("variants", "english", "none", "decimal_point"):
        print(f"== {what}")
        print(describe(reports, what))
    if "--words" in argv:
        words: Counter = Counter()
        for r in reports:
            words.update(r.english)
        print("== english words overall")
        print(dict(words.most_common()))
    print(totals(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
