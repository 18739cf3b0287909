"""Azerbaijani pages in the glossary's words, without English, with Azerbaijani numbers.

The glossary (tests/az_glossary.yaml) is the single source of the replaced variants;
tests/az_lint.py holds the checks; tests/az_allow.yaml the words accepted although English pages
use them too (names, units, approved loanwords, Azerbaijani homographs).

- The checker itself: inflection, parentheses, code, other-language marks, identifiers.
- Every Azerbaijani string the site, the calculators and the reports can show (templates/i18n,
  advisor.report.i18n): no replaced variant.
- The generated text of the built site (data pages, calculator results, reports, the theme's
  footer): 0 variants, 0 English words, 0 "None", 0 decimal points.
- The whole built site, hand-written pages included (docs/az/**): the same counts, per page.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import yaml
from az_lint import (
    GLOSSARY,
    check_site,
    decimal_points,
    describe,
    english_vocabulary,
    english_words,
    none_count,
    reader_text,
    reader_text_in,
    strip_parentheses,
    totals,
    variant_hits,
    without_catalog_names,
)
from conftest import ROOT

from advisor.report.i18n import STRINGS

# ------------------------------------------------------------------------------ the checker


def _variants(text: str) -> dict:
    return dict(variant_hits(text))


def test_glossary_is_complete_and_consistent():
    data = yaml.safe_load(GLOSSARY.read_text(encoding="utf-8"))
    concepts = data["concepts"]
    names = [c["en"] for c in concepts]
    assert len(names) == len(set(names)), "one entry per concept"
    for c in concepts:
        assert c["az"] and c["replaced"], c["en"]
        # The approved term is never one of the replaced variants.
        assert not variant_hits(c["az"]), (c["en"], dict(variant_hits(c["az"])))
    # The term list's key concepts are in (az-terms.md: QPU, partiya, kəsişmə nöqtəsi, ...).
    approved = " ".join(c["az"] for c in concepts)
    for term in ("QPU", "partiya", "kəsişmə nöqtəsi", "optimizator vəziyyətləri", "özünüödəmə"):
        assert term in approved


@pytest.mark.parametrize(
    ("text", "hits"),
    [
        ("Ən böyük batçların sayı", {"batç": 1}),
        ("bu modeli xidmət etdirmək üçün", {"xidmət etdirmək": 1}),
        ("kvantlamanın təsiri", {"kvantlama": 1}),
        ("data mərkəzlərində", {"data mərkəz": 1}),
        ("data-mərkəzdə", {"data mərkəz": 1}),
        ("GPU-saatı başına", {"GPU": 1}),
        ("700 W güc", {"W": 1}),
        ("Laylar", {"lay": 1}),
        ("Optimallaşdırıcının halları", {"optimallaşdırıcı": 1}),
        # The second round of the native review (issue 37) and the 2026 work.
        ("Ümumi cəmləmənin şin ötürmə qabiliyyəti", {"ümumi cəmləmə": 1}),
        ("hər all-reduce növbəti bloku", {"all reduce": 1}),
        ("Konveyer boşluğu", {"konveyer": 1}),
        ("dekod addımı", {"dekod": 1}),
        ("1 mln generasiya tokeni", {"generasiya": 1}),
        ("uzun prefill sağda", {"prefill": 1}),
        ("Modelin FLOP istifadəsi", {"flop istifadəsi": 1}),
        ("Token başına vaxt, ms", {"token başına vaxt": 1}),
        ("Hugging Face implementasiyasının", {"implementasiya": 1}),
        ("susmaya görə 0,9", {"susmaya görə": 1}),
        ("Rajbhandari və həmmüəlliflər", {"həmmüəllif": 1}),
        ("qradiyentlər ortalanır", {"ortalanır": 1}),
        ("kodlayıcıdır", {"kodlayıcı": 1}),
        ("mütəxəssislər qarışığı modeli", {"mütəxəssis qarışığı": 1}),
        ("bf16 çəkilər", {"bf16": 1}),
        ("fp4 piki", {"fp4": 1}),
    ],
)
def test_variants_are_found_with_azerbaijani_suffixes(text, hits):
    assert _variants(text) == hits


@pytest.mark.parametrize(
    "text",
    [
        "kvantlaşdırma",  # the approved word: a derivational suffix is not inflection
        "layihənin planı",  # "lay" + "ihə" is another word
        "QPU-saat başına",
        "Wi-Fi yox, 700 Vt",  # "W" only as a word of its own
        "partiya (batch) ölçüsü",  # the English term in parentheses
        "nəticə çıxarma (inference)",
        "formula1",
        "BM.GPU.H100.8 instansı",  # an instance id
        "token yaradılması (decode) və ilkin emal (prefill)",
        "Ümumi reduksiyanın (all-reduce) şin ötürmə qabiliyyəti",
        "Boru kəmərinin boşluğu (bubble)",
        "Model FLOP-larının istifadə dərəcəsi (MFU)",
        "Bir çıxış tokeninin vaxtı, ms",
        "spekulyativ dekodlaşdırma",  # speculative decoding, a named technique
        "dekoderlər və bir enkoder",
        "ekspertlər qarışığı (MoE) və ekspert paralelliyi",
        "NVFP4 və MXFP4 çəkilər, BF16 KV keş",
    ],
)
def test_no_false_positives(text):
    assert _variants(text) == {}


def test_code_other_language_and_parentheses_are_not_checked():
    html = (
        '<html lang="az"><head><title>Sınaq</title></head><body>'
        "<p>Ölçü <code>batch_size</code>, <kbd>GPU</kbd>; partiya (batch)</p>"
        '<pre>allocator</pre><p><span lang="en">NVIDIA H100 Tensor Core GPU</span></p>'
        "<script>var batch = 1;</script><p>700 Vt</p></body></html>"
    )
    text = reader_text(html)
    assert "batch_size" not in text and "Tensor Core" not in text and "allocator" not in text
    assert _variants(text) == {}
    assert english_words(text, frozenset({"batch", "allocator", "tensor"})) == {}
    assert english_words("bu batch böyükdür", frozenset({"batch"})) == {"batch": 1}


def test_attribute_texts_a_reader_sees_are_checked():
    """Tooltips, aria-labels, placeholders, alt texts and a text field's shown value are reader
    text (Material's "Dark"/"Light" toggle, "Permanent link", a field's "0.6")."""
    html = (
        '<html lang="az"><body><label title="Dark" aria-label="Light">x</label>'
        '<a class="headerlink" href="#a" title="Permanent link">¶</a>'
        '<input type="text" value="0.6"><input type="hidden" value="0.5">'
        '<code title="ignored">y</code></body></html>'
    )
    text = reader_text(html)
    assert "Dark" in text and "Light" in text and "Permanent link" in text
    assert decimal_points(text) == ["0.6"]  # the hidden field is not shown
    assert "ignored" not in text


def test_heading_anchor_title_in_the_page_language():
    from hooks.permalink import localise_permalinks

    html = '<h2 id="a">A<a class="headerlink" href="#a" title="Permanent link">&para;</a></h2>'
    assert 'title="Daimi keçid"' in localise_permalinks(html, "Daimi keçid")
    assert localise_permalinks('<p title="Permanent link">', "x") == '<p title="Permanent link">'


def test_a_table_column_headed_english_holds_english():
    html = (
        '<html lang="az"><body><table><thead><tr><th>Azərbaycanca</th><th>English</th></tr>'
        "</thead><tbody><tr><td>partiya ölçüsü</td><td>batch size</td></tr></tbody></table>"
        "<table><tr><th>Göstərici</th><th>Dəyər</th></tr><tr><td>batch</td><td>1</td></tr>"
        "</table></body></html>"
    )
    text = reader_text(html)
    assert "batch size" not in text and "batch" in text


def test_none_and_parentheses_helpers():
    assert none_count("4,92 $ (None ay)") == 1
    assert strip_parentheses("a (b (c) d) e").split() == ["a", "e"]


# ----------------------------------------------------------- the strings the site can show


def _az_strings() -> dict[str, str]:
    """Every Azerbaijani string of the site, the calculators and the reports."""
    out = {}
    folder = ROOT / "templates" / "i18n"
    for path in [folder / "az.yaml", *sorted(folder.glob("*.az.yaml"))]:
        for key, value in yaml.safe_load(path.read_text(encoding="utf-8")).items():
            out[f"{path.name}:{key}"] = str(value)
    for key, value in STRINGS["az"].items():
        if isinstance(value, str):  # (a few entries are tuples of unit words: mln, mlrd)
            out[f"report_i18n:{key}"] = value
    return out


def _plain(text: str) -> str:
    """A translation without its code spans and {placeholders}."""
    return re.sub(r"`[^`]*`|\{\w+\}", " ", text)


def test_azerbaijani_strings_use_the_glossary_words():
    bad = {k: dict(variant_hits(_plain(v))) for k, v in _az_strings().items()}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, "replaced variants (tests/az_glossary.yaml) in:\n" + "\n".join(
        f"  {k}: {v}" for k, v in sorted(bad.items())
    )


def test_azerbaijani_strings_have_no_english():
    vocabulary: set[str] = set()
    folder = ROOT / "templates" / "i18n"
    for path in [folder / "en.yaml", *sorted(folder.glob("*.en.yaml"))]:
        for value in yaml.safe_load(path.read_text(encoding="utf-8")).values():
            vocabulary.update(w.lower() for w in re.findall(r"[A-Za-z]+", _plain(str(value))))
    for value in STRINGS["en"].values():
        if isinstance(value, str):
            vocabulary.update(w.lower() for w in re.findall(r"[A-Za-z]+", _plain(value)))
    bad = {
        k: dict(english_words(_plain(v), frozenset(vocabulary))) for k, v in _az_strings().items()
    }
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, "English words in Azerbaijani strings:\n" + "\n".join(
        f"  {k}: {v}" for k, v in sorted(bad.items())
    )


def test_every_bench_text_has_a_translation():
    """hooks/bench_text.py knows every formula, note and reason in bench_results/ (a text it
    does not know is shown in English, marked lang="en")."""
    import json

    from hooks.bench_text import known

    def known_note(text):
        return known("note", text) or all(known("note", p) for p in text.split("; "))

    unknown = []
    for path in sorted((ROOT / "bench_results").glob("*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        for d in run.get("derived", []):
            if not known("formula", d["formula"]):
                unknown.append((path.name, d["formula"]))
            if d.get("reason") and not known_note(d["reason"]):
                unknown.append((path.name, d["reason"]))
        for note in run.get("notes", []):
            if not known_note(note):
                unknown.append((path.name, note))
    assert not unknown, unknown


def test_every_network_has_a_name_in_both_languages():
    from advisor.data.catalog import load_catalog

    strings = {
        lang: yaml.safe_load((ROOT / "templates" / "i18n" / f"{lang}.yaml").read_text("utf-8"))
        for lang in ("az", "en")
    }
    for net in load_catalog(ROOT / "catalog").networks:
        if net.kind == "inter":
            for lang in ("az", "en"):
                assert f"calc.net.{net.id}" in strings[lang], (lang, net.id)


# ------------------------------------------------------------------------- the built site


def _generated_only(site: Path) -> set[str]:
    """Azerbaijani pages whose Markdown source is only includes and markers (the data pages:
    accelerators, models, prices, charts, indexes), generated stubs included."""
    out = set()
    for src in (ROOT / "docs" / "az").rglob("*.md"):
        body = re.sub(r"\A---\n.*?\n---\n", "", src.read_text(encoding="utf-8"), flags=re.S)
        lines = [ln for ln in body.splitlines() if ln.strip()]
        if lines and all(
            re.fullmatch(r"\s*(\{[%#].*[%#]\}|<!-- advisor:[\w:-]+ -->)\s*", ln) for ln in lines
        ):
            rel = src.relative_to(ROOT / "docs" / "az").with_suffix("")
            page = "index.html" if rel.as_posix() == "index" else f"{rel.as_posix()}/index.html"
            out.add(page.replace("/index/index.html", "/index.html"))
    return out


def _scoped_text(html: str, page: str, generated: set[str]) -> str:
    """The generated part of a built page: all of a data page's article, a calculator's result,
    a report's body, a standalone report; the theme's footer on every page."""
    if page.endswith(".az.html"):
        return reader_text(html)
    scopes = [("footer", "md-footer")]
    if page in generated or page == "404.html":
        scopes.append(("article", "md-content__inner"))
    else:
        scopes += [("div", "calc"), ("div", "ar-wrap"), ("div", "ar-form")]
    return reader_text_in(html, scopes)


def test_generated_azerbaijani_text_is_clean(built_site):
    generated = _generated_only(built_site)
    vocabulary = english_vocabulary(built_site)
    problems = []
    for path in sorted(built_site.rglob("*.html")):
        page = path.relative_to(built_site).as_posix()
        if page.startswith(("en/", "assets/")):
            continue
        text = _scoped_text(path.read_text("utf-8"), page, generated)
        found = {
            "variants": dict(variant_hits(without_catalog_names(text))),
            "english": dict(english_words(text, vocabulary)),
            "None": none_count(text),
        }
        found["decimal point"] = decimal_points(strip_parentheses(text))
        found = {k: v for k, v in found.items() if v}
        if found:
            problems.append(f"{page}: {found}")
    assert generated, "no generated page found"
    assert not problems, "\n".join(problems)


def test_whole_azerbaijani_site_is_clean(built_site):
    reports = check_site(built_site)
    counts = totals(reports)
    detail = "\n".join(
        f"== {what}\n{describe(reports, what)}"
        for what in ("variants", "english", "none", "decimal_point")
        if counts[what]
    )
    if any(counts[k] for k in ("variants", "english", "none", "decimal_point")):
        warnings.warn(f"Azerbaijani pages: {counts}\n{detail}", stacklevel=1)
    assert counts["variants"] == counts["english"] == counts["none"] == 0, detail
    assert counts["decimal_point"] == 0, detail
