"""Reports in Chromium: a PDF printed by Chromium (Playwright `page.pdf`) keeps every table whole
(the sources list may run over pages with its header repeated, each row whole) and starts every
section on a new page; the in-browser form (Pyodide) builds the same report as
the CLI. Needs /usr/bin/chromium, Playwright and poppler's pdftotext."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from advisor import report
from advisor.advice.profile import load_profile
from advisor.data.catalog import load_catalog

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
CATALOG = load_catalog()


@pytest.fixture(scope="module")
def browser(chromium):
    if shutil.which("pdftotext") is None:
        pytest.skip("needs pdftotext (apt-get install -y poppler-utils)")
    return chromium


# Each table gets a start marker in its first cell and an end marker in its last cell (the last
# cell of the last row: a clipped column would lose it); each section heading a marker too.
MARK_JS = """() => {
  const tables = [...document.querySelectorAll('.ar table')];
  tables.forEach((t, i) => {
    const cells = t.querySelectorAll('th, td');
    const tag = (cell, text) => {
      const s = document.createElement('span');
      s.textContent = text + ' ';
      s.style.cssText = 'font-size:6px;white-space:nowrap';
      cell.prepend(s);
    };
    tag(cells[0], `QQS${i}QQ`);
    tag(cells[cells.length - 1], `QQE${i}QQ`);
    // the sources list may run over pages (its header repeats): then each row stays whole
    if (t.dataset.table === 'sources') {
      t.querySelectorAll('tbody tr').forEach((r, j) => {
        const c = r.querySelectorAll('td');
        tag(c[0], `QQR${i}x${j}aQQ`);
        tag(c[c.length - 1], `QQR${i}x${j}bQQ`);
      });
    }
  });
  const long = tables.findIndex((t) => t.dataset.table === 'sources');
  document.querySelectorAll('.ar section.ar-sec > h2').forEach((h, i) => {
    const s = document.createElement('span');
    s.textContent = `QQH${i}QQ `;
    s.style.cssText = 'font-size:6px;white-space:nowrap';
    h.prepend(s);
  });
  return [tables.length, document.querySelectorAll('.ar section.ar-sec').length, long,
          long < 0 ? 0 : tables[long].querySelectorAll('tbody tr').length];
}"""


def _pages_text(pdf: Path) -> list[str]:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    n = int(
        next(line.split()[-1] for line in info.stdout.splitlines() if line.startswith("Pages:"))
    )
    out = []
    for i in range(1, n + 1):
        r = subprocess.run(
            ["pdftotext", "-f", str(i), "-l", str(i), "-layout", str(pdf), "-"],
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(r.stdout)
    return out


def _page_of(pages: list[str], marker: str) -> int:
    hits = [i for i, text in enumerate(pages) if marker in text.replace(" ", "")]
    assert len(hits) == 1, f"{marker} found on pages {hits}"
    return hits[0]


@pytest.mark.skipif(
    not CATALOG.gpus or CATALOG.currency is None, reason="catalog/gpus/ or currency.yaml missing"
)
@pytest.mark.parametrize("name,lang", [("university-lab", "az"), ("bank-serving-70b", "en")])
def test_pdf_keeps_every_table_whole(browser, tmp_path, name, lang):
    profile = load_profile(ROOT / "examples" / f"{name}.yaml", CATALOG)
    data = report.build_report(profile, CATALOG, lang=lang)
    html_path = tmp_path / f"{name}.{lang}.html"
    html_path.write_text(report.render_html(data, report.load_publisher(ROOT / "publisher.yaml")))
    page = browser.new_page()
    page.goto(html_path.as_uri())
    n_tables, n_sections, long, long_rows = page.evaluate(MARK_JS)
    pdf = tmp_path / f"{name}.{lang}.pdf"
    page.pdf(path=str(pdf), format="A4", print_background=True)
    page.close()
    pages = _pages_text(pdf)
    assert n_tables >= 8 and n_sections == len(report.SECTIONS)
    for i in range(n_tables):
        if i == long:
            continue
        start, end = _page_of(pages, f"QQS{i}QQ"), _page_of(pages, f"QQE{i}QQ")
        assert start == end, f"table {i} runs from page {start + 1} to page {end + 1}"
    if long >= 0:
        # the sources list: its header on every page it spans, no row cut in two
        heads = [k for k, text in enumerate(pages) if f"QQS{long}QQ" in text.replace(" ", "")]
        end = _page_of(pages, f"QQE{long}QQ")
        assert heads == list(range(heads[0], heads[0] + len(heads))) and end == heads[-1]
        for j in range(long_rows):
            a, b = _page_of(pages, f"QQR{long}x{j}aQQ"), _page_of(pages, f"QQR{long}x{j}bQQ")
            assert a == b, f"source row {j} runs from page {a + 1} to page {b + 1}"
    heads = [_page_of(pages, f"QQH{i}QQ") for i in range(n_sections)]
    # every section starts on a new page, in order
    assert heads == sorted(set(heads)), heads
    # a link's address is printed after it (print stylesheet)
    assert "https://" in "".join(pages)


def test_browser_form_report_equals_cli(browser, site_server, tmp_path):
    """The form on /en/reports/new/ builds, in Pyodide and from its fields alone (issue 39: no
    "write into YAML" step), the same HTML as the CLI for an example as the English page offers
    it (its words in English, hooks/reports.example_profile); only the site's origin is
    requested; an invalid profile lists each bad field by its label, in the page's language."""
    import json

    from advisor.cli import main
    from hooks.reports import example_profile

    if "calcruntime/build/mkdocs_hook.py" not in (ROOT / "mkdocs.yml").read_text(encoding="utf-8"):
        pytest.skip("the calculators' Pyodide assets hook is not registered in mkdocs.yml")
    name = "bank-serving-70b"
    out = tmp_path / "cli"
    profile = tmp_path / f"{name}.yaml"
    profile.write_text(json.dumps(example_profile(ROOT, name, "en")), encoding="utf-8")
    assert main(["report", str(profile), "--out", str(out)]) == 0
    (cli_file,) = out.glob("*.en.html")
    cli_html = cli_file.read_text(encoding="utf-8")

    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(site_server + "en/reports/new/")
    page.wait_for_selector("#ar-form[data-engine=ready]", timeout=30_000)
    page.select_option("#ar-example", name)
    assert page.input_value('[name="organisation"]') == "Example Bank OJSC"
    page.click("#ar-build")
    page.wait_for_selector("#ar-output .ar", timeout=20_000)
    with page.expect_download() as info:
        page.click("#ar-download")
    download = info.value
    assert download.suggested_filename == "example-bank-ojsc.en.html"  # the organisation's slug
    browser_html = Path(download.path()).read_text(encoding="utf-8")
    assert browser_html == cli_html
    # the fragment shown in the page is the same report
    shown = page.inner_text("#ar-output .ar")
    assert "Example Bank OJSC" in shown
    # an invalid profile typed as YAML: one message per bad field, named by the form's labels
    page.click("#ar-yaml-box summary")
    page.fill("#ar-yaml", "organisation: '<b>x</b>'\nworkloads:\n  - task: servng\n")
    page.click("#ar-build-yaml")
    page.wait_for_selector("#ar-errors li")
    items = page.locator("#ar-errors li").all_inner_texts()
    assert any(t.startswith("Workload 1 · Task: Unknown name “servng”") for t in items), items
    assert any(t.startswith("Workload 1 · Model: ") for t in items), items
    assert any(t.startswith("Workload 1 · Workload name: ") for t in items), items
    # the last report is greyed out: it does not answer these fields
    assert page.locator("#ar-output.ar-stale").count() == 1
    assert page.is_disabled("#ar-download")
    # the fields: built directly, every value shown as text
    evil = '<img src=x onerror="window.pwned=1">'
    page.fill('[name="organisation"]', evil)
    page.fill('[name="workload"]', "chat")
    page.select_option('[name="model"]', "qwen2.5-0.5b")
    page.click("#ar-build")
    page.wait_for_selector("#ar-output:not(.ar-stale) .ar")
    assert evil in page.inner_text("#ar-output .ar")
    assert page.locator("#ar-output img[src=x]").count() == 0
    assert page.evaluate("window.pwned") is None
    context.close()
    origin = site_server.rstrip("/")
    foreign = [
        u for u in requested if not (u.startswith(origin) or u.startswith(("blob:", "data:")))
    ]
    assert foreign == []
