"""Stored XSS: a site built from a poisoned catalog and bench folder shows the markup as text.

Markup in every text field a maintainer (or a pull request) can reach: a GPU name, a model's
display name (HTML and a Markdown link), a bench result's accelerator and derived formula. The
built pages must carry none of it raw (a `javascript:` source URL stops the build:
tests/test_site.py::test_strict_failures_name_the_file[catalog-url]).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import build_project

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
MD_LINK = "[click](javascript:alert(2))"
SVG = '<svg onload="alert(3)">'
FORMULA = '<b onmouseover="alert(4)">t</b>'
BENCH_LINK = "[run](javascript:alert(5))"  # issue 40: became a link from derived[].formula
NOTE_LINK = "[note](javascript:alert(6))"  # and from notes[]


def _replace_line(path: Path, key: str, value: str) -> None:
    text = path.read_text(encoding="utf-8")
    new, n = re.subn(rf"^{key}:.*$", f"{key}: {json.dumps(value)}", text, count=1, flags=re.M)
    assert n == 1, f"{path}: no {key}"
    path.write_text(new, encoding="utf-8")


def _poison(project: Path) -> None:
    _replace_line(project / "catalog/gpus/h100-sxm.yaml", "name", SCRIPT)
    _replace_line(project / "catalog/models/llama-3.1-8b.yaml", "display_name", IMG)
    _replace_line(project / "catalog/models/mistral-7b-v0.1.yaml", "display_name", MD_LINK)
    for path in sorted((project / "bench_results").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["environment"]["accelerator"] = SVG
        for i, d in enumerate(doc.get("derived", [])):
            d["formula"] = BENCH_LINK if i == 0 else FORMULA
        doc["notes"] = [NOTE_LINK, f"CPU ranks share this host's cores; {NOTE_LINK}"]
        path.write_text(json.dumps(doc), encoding="utf-8")


RAW = ("<script>alert", "<img src=x", "<svg onload", "<b onmouseover")


@pytest.fixture(scope="module")
def poisoned_site(tmp_path_factory) -> Path:
    from hooks import state

    try:
        site = build_project(tmp_path_factory.mktemp("poisoned"), _poison)
        yield site
    finally:
        state.release()


def test_one_catalog_reaches_every_part_of_the_build(poisoned_site):
    """The build state's catalog (the poisoned copy's) is what the guide's facts, the webapi
    behind the calculators' prerender and the catalog shipped to the browser use."""
    from advisor import webapi
    from hooks import facts, state

    cat = state.current().catalog
    assert cat.gpu("h100-sxm").name == SCRIPT
    assert facts.catalog() is cat and webapi.get_catalog() is cat
    shipped = json.loads((poisoned_site / "assets/calc/catalog.json").read_text(encoding="utf-8"))
    assert SCRIPT in json.dumps(shipped, ensure_ascii=False)
    vram = (poisoned_site / "en/calculators/vram/index.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in vram  # the prerendered form, escaped


def test_no_raw_markup_from_data_in_any_page(poisoned_site):
    pages = sorted(poisoned_site.rglob("*.html"))
    assert len(pages) > 40
    shown = {s: 0 for s in ("alert(1)", "alert(2)", "alert(3)", "alert(4)", "alert(5)", "alert(6)")}
    for path in pages:
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(poisoned_site).as_posix()
        for raw in RAW:
            assert raw not in text, f"{rel}: raw {raw!r}"
        assert not re.search(r"""href=["']?\s*javascript:""", text, re.I), rel
        for s in shown:
            shown[s] += s in text
    # the names are still shown, as text
    assert all(shown.values()), shown
    gpu = (poisoned_site / "en/hardware/h100-sxm/index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in gpu


def test_no_raw_markup_in_search_index(poisoned_site):
    """Material's search shows the index's `text` as HTML: data must be escaped there too."""
    for path in poisoned_site.rglob("search_index.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for entry in doc["docs"]:
            for raw in RAW:
                assert raw not in entry["text"] and raw not in entry["title"], entry["location"]
