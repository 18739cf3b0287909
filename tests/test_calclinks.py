"""Links to the tools (hooks/calclinks.py, issue 39): every guide page links to the calculator
that answers its question, opened on the page's own example; each example is a valid state of
that calculator (the web API computes it without an error); the strings exist in both
languages; the nav lists the tools before the catalog pages."""

from __future__ import annotations

from types import SimpleNamespace
from urllib.parse import parse_qsl, urlsplit

import pytest
import yaml
from conftest import ROOT

from advisor import webapi
from hooks import calclinks
from hooks.templating import load_strings

GUIDE = sorted(p.stem for p in (ROOT / "docs/az/guide").glob("*.md"))
STRINGS = load_strings(ROOT / "templates" / "i18n")


def _page(src_uri):
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri))


def test_every_guide_page_has_its_links_and_the_marker():
    examples = calclinks.guide_examples()
    assert set(examples) == set(GUIDE)
    for lang in ("az", "en"):
        for stem in GUIDE:
            text = (ROOT / f"docs/{lang}/guide/{stem}.md").read_text(encoding="utf-8")
            assert "<!-- advisor:try -->" in text, (lang, stem)


@pytest.mark.parametrize("stem", GUIDE)
def test_each_example_is_a_valid_calculator_state(stem):
    for link in calclinks.for_page(_page(f"en/guide/{stem}.md")):
        url = urlsplit(link["href"])
        kind = link["kind"]
        assert url.path == f"../calculators/{kind}.md"
        params = {k.split(".", 1)[1]: v for k, v in parse_qsl(url.query)}
        assert all(k.startswith(kind + ".") for k, _ in parse_qsl(url.query))
        names = set(webapi.REQUESTS[kind].defaults())
        assert set(params) <= names, set(params) - names
        result = webapi.run(kind, params)
        assert "error" not in result, (stem, result)
        for lang in ("az", "en"):
            assert f"try.{link['example']}" in STRINGS[lang]
            assert f"tools.{kind}.name" in STRINGS[lang]


def test_relative_paths_from_each_folder():
    assert calclinks.calc_href(_page("az/index.md"), "vram") == "calculators/vram.md"
    assert calclinks.calc_href(_page("en/calculators/index.md"), "vram") == "../calculators/vram.md"
    assert calclinks.report_href(_page("en/guide/budget.md")) == "../reports/new.md"
    href = calclinks.calc_href(_page("az/guide/x.md"), "cluster", {"tokens": "1T"})
    assert href == "../calculators/cluster.md?cluster.tokens=1T"


def test_tools_have_names_and_questions_in_both_languages():
    for lang in ("az", "en"):
        for kind in (*calclinks.TOOLS, "report"):
            assert STRINGS[lang][f"tools.{kind}.name"] and STRINGS[lang][f"tools.{kind}.q"]
    assert set(calclinks.TOOLS) == set(webapi.REQUESTS)


def test_nav_lists_the_tools_first():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    assert nav[0] == "index.md"
    assert next(iter(nav[1])) == "Kalkulyatorlar"
    assert nav[1]["Kalkulyatorlar"][0] == "calculators/index.md"
    for lang in ("az", "en"):
        assert (ROOT / f"docs/{lang}/calculators/index.md").is_file()
        text = (ROOT / f"docs/{lang}/index.md").read_text(encoding="utf-8")
        assert "<!-- advisor:tools -->" in text
