"""Issue 40: Markdown from bench_results data never becomes a link; the built pages link only
http(s), mailto and relative URLs (hooks/safe_links.py, checked on every page by
hooks/render.py); a bench result's numbers are range-checked and a bad summary names the file."""

from __future__ import annotations

import json
from pathlib import Path

import markdown
import pytest

from advisor.core.errors import AdvisorError
from advisor.data.benchresults import load_result
from hooks import bench_text, safe_links
from hooks.templating import load_strings, make_t

ROOT = Path(__file__).resolve().parent.parent
MD_LINKS = [
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[x]: javascript:alert(1)\n\n[x]",
    "<javascript:alert(1)>",
    "[click](data:text/html,<script>alert(1)</script>)",
    "see [a](javascript:alert(1)); no train-step result for this device in the output folder: "
    "no feed ratio",
]


@pytest.fixture(scope="module")
def strings():
    return load_strings(ROOT / "templates" / "i18n")


@pytest.mark.parametrize("lang", ["az", "en"])
@pytest.mark.parametrize("kind", ["formula", "note"])
@pytest.mark.parametrize("text", MD_LINKS)
def test_bench_text_from_data_never_becomes_a_link(strings, lang, kind, text):
    tr = bench_text.translator(make_t(lang, strings), lang)
    shown = str(tr(kind, text))
    page = markdown.markdown(f"| a |\n|---|\n| {shown} |\n\n{shown}", extensions=["tables"])
    assert "<a " not in page, page
    assert not safe_links.unsafe_links(page)
    assert "alert(1)" in page  # shown as text, not dropped


@pytest.mark.parametrize(
    "html",
    [
        '<a href="javascript:alert(1)">x</a>',
        "<a href='JAVASCRIPT:alert(1)'>x</a>",
        "<a href=javascript:alert(1)>x</a>",
        '<a href="jav&#x09;ascript:alert(1)">x</a>',
        '<a href="&#106;avascript:alert(1)">x</a>',
        '<a href=" javascript:alert(1)">x</a>',
        '<a href="vbscript:x">x</a>',
        '<a href="data:text/html,x">x</a>',
        '<iframe src="data:text/html,x"></iframe>',
        '<form action="javascript:x"></form>',
        '<svg><a xlink:href="javascript:x">x</a></svg>',
    ],
)
def test_unsafe_links_found(html):
    assert safe_links.unsafe_links(html)


@pytest.mark.parametrize(
    "html",
    [
        '<a href="https://example.org/a?b=1&amp;c=2">x</a>',
        '<a href="http://127.0.0.1:8000/">x</a>',
        '<a href="../hardware/h100-sxm/">x</a>',
        '<a href="#time-validation">x</a>',
        '<a href="mailto:a@example.org">x</a>',
        '<img src="data:image/svg+xml;base64,PHN2Zz4=">',
        '<a href="guide/x:y/">relative with a colon after a slash</a>',
        "<p>javascript:alert(1) as text</p>",
    ],
)
def test_safe_links_pass(html):
    assert safe_links.unsafe_links(html) == []


def _result(tmp_path: Path, mutate) -> Path:
    src = sorted((ROOT / "bench_results").glob("*_train-step_*.json"))[0]
    doc = json.loads(src.read_text(encoding="utf-8"))
    mutate(doc)
    path = tmp_path / src.name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _first_summary(doc):
    return next(iter(doc["summary"].values()))


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: _first_summary(d).update(median="fast"), "median: expected a number"),
        (lambda d: _first_summary(d).update(p90=None), "p90: expected a number"),
        (lambda d: _first_summary(d).update(n="five"), ".n: expected a count"),
        (lambda d: d["summary"].update(x=[1]), "summary.x: expected an object"),
        (lambda d: d["derived"][0].update(value=1e300), "1e+300 is not a plausible figure"),
        (lambda d: _first_summary(d).update(median=-1e19), "is not a plausible figure"),
    ],
)
def test_bad_bench_numbers_name_the_file(tmp_path, mutate, expected):
    path = _result(tmp_path, mutate)
    with pytest.raises(AdvisorError) as info:
        load_result(path)
    msg = str(info.value)
    assert msg.startswith(path.name) and expected in msg, msg
