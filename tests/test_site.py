"""The built site: language parity, data tables equal to the catalog, strict failures that name
the file, search folding, number formats, determinism. Uses the session build (conftest.py)."""

from __future__ import annotations

import filecmp
import importlib.util
import json
import re
from pathlib import Path

import pytest
from conftest import ROOT, build_project, build_site

from advisor.arch import models
from advisor.data.catalog import load_catalog

NON_PAGES = {"assets", "search", "en"}


def _hook(name: str):
    return importlib.import_module(f"hooks.{name}")


def pages(root: Path) -> set[str]:
    """Relative paths of the HTML pages of one language tree."""
    out = set()
    for path in root.rglob("index.html"):
        rel = path.relative_to(root)
        if rel.parts and rel.parts[0] in NON_PAGES:
            continue
        out.add(rel.as_posix())
    return out


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(ROOT / "catalog")


def html(site: Path, rel: str) -> str:
    return (site / rel).read_text(encoding="utf-8")


def article(text: str) -> str:
    return re.search(r"<article.*?</article>", text, re.S).group(0)


def table_links(text: str, prefix: str) -> list[str]:
    """Link targets (first cell of each table row) that start with `prefix` in the article."""
    rows = re.findall(r"<tr>\s*<td[^>]*><a href=\"([^\"]+)\"", article(text))
    return [r for r in rows if r.startswith(prefix)]


def test_page_parity_between_languages(built_site):
    az, en = pages(built_site), pages(built_site / "en")
    assert az == en
    assert len(az) > 20
    for rel in ("index.html", "hardware/index.html", "prices/index.html", "charts/index.html"):
        assert rel in az


def test_lang_attributes_and_strings(built_site):
    assert '<html lang="az"' in html(built_site, "index.html")
    assert '<html lang="en"' in html(built_site, "en/index.html")
    # overrides/partials/languages/custom.html fixes material's az strings
    assert "dəfə oxunub" not in html(built_site, "index.html")
    assert 'placeholder="Axtar"' in html(built_site, "index.html")


def test_nothing_from_outside_the_origin(built_site):
    pattern = re.compile(r"""(?:src|href)=["'](?:https?:)?//(?!127\.0\.0\.1:8000)[^"']+["']""")
    for path in [built_site / "index.html", built_site / "en/charts/index.html"]:
        head = path.read_text(encoding="utf-8").split("<body", 1)[0]
        assert not pattern.findall(head), path
    assert "fonts.googleapis" not in html(built_site, "index.html")


def test_own_stylesheets_inline_and_report_script_not_on_every_page(built_site):
    """Every page carries site.css and calc.css inside its <head> (hooks/inline_css.py) and
    links neither; no page has a <script> for the report form (loader.mjs imports it on the
    form's page), and neither stylesheet is left in the built site."""
    inline = _hook("inline_css")
    want = [inline.inline_css(n) for n in ("site", "calc")]
    for root in (built_site, built_site / "en"):
        for rel in pages(root):
            head = (root / rel).read_text(encoding="utf-8").split("</head>", 1)[0]
            assert all(w in head for w in want), rel
            assert not re.search(r'href="[^"]*(site|calc)\.css"', head), rel
            assert "reports/form.js" not in head, rel
    assert not (built_site / "assets/site.css").exists()
    assert not (built_site / "assets/calc/calc.css").exists()
    with pytest.raises(Exception, match="no stylesheet 'nope'"):
        inline.inline_css("nope")


def test_model_tables_equal_catalog(built_site, catalog):
    for lang in ("", "en/"):
        text = html(built_site, f"{lang}models/index.html")
        assert table_links(text, "../") == [f"../{m.id}/" for m in catalog.models] or table_links(
            text, ""
        ) == [f"{m.id}/" for m in catalog.models]
        for m in catalog.models:
            page = html(built_site, f"{lang}models/{m.id}/index.html")
            count = models.param_count(m.spec)
            shown = f"{count:,}" if lang else f"{count:,}".replace(",", ".")
            assert shown in article(page), (m.id, shown)


def test_hardware_tables_equal_catalog(built_site, catalog):
    tier_of = {g.id: g.tier for g in catalog.gpus}
    for lang in ("", "en/"):
        text = html(built_site, f"{lang}hardware/index.html")
        links = table_links(text, "")
        assert sorted(links) == sorted(f"{g.id}/" for g in catalog.gpus)
        for g in catalog.gpus:
            assert (built_site / f"{lang}hardware/{g.id}/index.html").is_file()
        # rows sit in their tier's section
        for section in re.split(r'<h2 id="tier-', article(text))[1:]:
            tier = section.split('"', 1)[0]
            for link in re.findall(r'<td[^>]*><a href="([^"]+)/"', section):
                assert tier_of[link] == tier


def test_charts_are_inline_svg_with_text_alternatives(built_site, catalog):
    for lang in ("", "en/"):
        body = article(html(built_site, f"{lang}charts/index.html"))
        if catalog.gpus:
            assert body.count("<svg") >= 1
            assert body.count("<desc") == body.count("<svg")
            assert "<table" in body


def test_search_index_has_folded_azerbaijani(built_site):
    index = json.loads((built_site / "search/search_index.json").read_text(encoding="utf-8"))
    assert "folded" in index["config"]["fields"]
    docs = index["docs"]
    assert any(d["location"].startswith("en/") for d in docs)
    az = [d for d in docs if not d["location"].startswith("en/") and "ə" in d["text"]]
    assert az and all("folded" in d for d in az)
    fold = _hook("search_fold")
    assert fold.fold("Yaddaş ölçüsü, ğ ı ç ü Ə İ") == "Yaddas olcusu, g i c u E I"
    assert "yaddas" in fold.folded_words("<p>yaddaş <b>yaddaş</b> GPU</p>").split()


def test_number_formats():
    templating = _hook("templating")
    az, en = templating.make_filters("az", None), templating.make_filters("en", None)
    assert az["gib"](12.5 * 2**30) == "12,5\u00a0GiB"
    assert en["gib"](12.5 * 2**30) == "12.5\u00a0GiB"
    assert az["num"](1234567.891, 2) == "1.234.567,89"
    assert en["num"](1234567.891, 2) == "1,234,567.89"
    assert en["num"](-0.0001, 1) == "0.0"
    assert az["pct"](0.125, 1) == "12,5\u00a0%"
    assert en["pct"](0.125, 1) == "12.5%"
    assert en["money"](1234.5) == "$1,234.50"
    assert az["money"](1234.5, "USD", 0) == "1.235\u00a0$"
    assert az["gb"](80e9, 0) == "80\u00a0GB"
    with pytest.raises(ValueError):
        en["num"](float("nan"))


# ----------------------------------------------------------------- strict failures name the file


def _append(rel: str, text: str):
    def edit(project: Path):
        path = project / rel
        path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")

    return edit


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            _append("docs/az/charts.md", "\n{{ no_such_variable }}\n"),
            ["docs/az/charts.md", "no_such_variable"],
        ),
        (
            _append("docs/az/charts.md", "\n<!-- advisor:no-such-marker -->\n"),
            ["docs/az/charts.md", "advisor:no-such-marker"],
        ),
        (
            _append("docs/az/charts.md", '\n{{ t("no.such.key") }}\n'),
            ["docs/az/charts.md", "no.such.key", "templates/i18n/az.yaml"],
        ),
        (
            _append("templates/i18n/en.yaml", 'only.english: "x"\n'),
            ["templates/i18n", "only.english"],
        ),
        (
            lambda p: (p / "catalog/models/broken.yaml").write_text(
                "id: broken\ndisplay_name: Broken\n", encoding="utf-8"
            ),
            ["catalog/models/broken.yaml", "source"],
        ),
        (_append("docs/en/prices.md", "\n[gone](no-such-page.md)\n"), ["no-such-page.md"]),
        (
            lambda p: (p / "catalog/models/gpt2-124m.yaml").write_text(
                re.sub(
                    r"^(\s+url:).*$",
                    r"\1 javascript:alert(1)",
                    (p / "catalog/models/gpt2-124m.yaml").read_text(encoding="utf-8"),
                    count=1,
                    flags=re.M,
                ),
                encoding="utf-8",
            ),
            ["catalog/models/gpt2-124m.yaml", "source.url", "http(s)"],
        ),
    ],
    ids=[
        "undefined",
        "marker",
        "translation",
        "one-language-key",
        "catalog",
        "broken-link",
        "catalog-url",
    ],
)
def test_strict_failures_name_the_file(tmp_path, edit, expected):
    from mkdocs.exceptions import MkDocsException

    with pytest.raises((MkDocsException, SystemExit)) as info:
        _run_logged(tmp_path, edit)
    message = str(info.value) + "\n" + info.value.__dict__.get("log", "")
    for part in expected:
        assert part in message, (part, message)


def _run_logged(tmp_path, edit):
    """Build a copy; a strict abort (warnings) gets the warnings' text attached as `.log`."""
    import logging

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Keep(level=logging.WARNING)
    logging.getLogger("mkdocs").addHandler(handler)
    try:
        build_project(tmp_path, edit)
    except BaseException as exc:
        exc.log = "\n".join(records)
        raise
    finally:
        logging.getLogger("mkdocs").removeHandler(handler)


def test_two_builds_are_identical(built_site, tmp_path):
    again = build_site(ROOT / "mkdocs.yml", tmp_path / "site")
    cmp = filecmp.dircmp(built_site, again)

    def differences(c, prefix=""):
        out = [prefix + n for n in c.left_only + c.right_only + c.diff_files + c.funny_files]
        for name, sub in c.subdirs.items():
            out += differences(sub, f"{prefix}{name}/")
        return out

    # dircmp compares shallowly (size + mtime): compare the bytes of every file
    diffs = differences(cmp)
    for path in built_site.rglob("*"):
        if path.is_file():
            other = again / path.relative_to(built_site)
            if path.read_bytes() != other.read_bytes():
                diffs.append(path.relative_to(built_site).as_posix())
    assert not diffs, diffs[:10]


# ----------------------------------------------------------------- numbers equal advisor's


def _cells(body: str, href: str) -> list[str]:
    row = re.search(rf'<a href="{re.escape(href)}">[^<]*</a></td>(.*?)</tr>', body, re.S)
    return re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))


def _shown(n: int, lang: str) -> str:
    return f"{n:,}" if lang else f"{n:,}".replace(",", ".")


def test_fit_tables_equal_advisor(built_site, catalog):
    """Every accelerator page's "which models fit" row equals advisor.memory.estimate.max_batch."""
    memory = pytest.importorskip("advisor.memory.estimate")
    if not catalog.gpus:
        pytest.skip("no accelerators in the catalog yet")
    wants: dict = {}  # max_batch depends on the setup and the memory only: once per capacity

    def largest(kind, m, memory_bytes):
        key = (kind, m.id, memory_bytes)
        if key not in wants:
            if kind == "infer":
                seq = min(4096, m.spec.max_position_embeddings)
                setup = memory.InferenceSetup(model=m.spec, batch=1, seq=seq)
            else:
                setup = memory.TrainingSetup(
                    model=m.spec,
                    batch=1,
                    seq=min(2048, m.spec.max_position_embeddings),
                    precision="amp-bf16",
                    optimizer="adamw",
                )
            wants[key] = memory.max_batch(setup, memory_bytes)
        return wants[key]

    for gpu in catalog.gpus:
        for lang in ("", "en/"):
            body = article(html(built_site, f"{lang}hardware/{gpu.id}/index.html"))
            for m in catalog.models:
                cells = _cells(body, f"../../models/{m.id}/")
                want = largest("infer", m, gpu.memory_bytes)
                assert cells[0] == (_shown(want, lang) if want else "✗"), (gpu.id, m.id)
                if lang:
                    continue
                want = largest("train", m, gpu.memory_bytes)
                assert cells[3] == (_shown(want, lang) if want else "✗"), (gpu.id, m.id)


def test_price_rows_equal_catalog(built_site, catalog):
    for lang in ("", "en/"):
        body = article(html(built_site, f"{lang}prices/index.html"))
        rows = re.findall(
            r"<tr>\s*<td[^>]*>(.*?)</td>\s*<td[^>]*><a href=\"[^\"]*/([^/\"]+)/\"", body
        )
        got = sorted((provider, gpu) for provider, gpu in rows)
        want = sorted((o.provider_name or o.provider, o.gpu_id) for o in catalog.offers)
        assert got == want
