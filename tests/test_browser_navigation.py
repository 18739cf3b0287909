"""Instant navigation and the site's requests, in real headless Chromium (Debian's
/usr/bin/chromium through Playwright):

- a reader on a guide page who follows a link to a calculator gets it by Material's instant
  navigation (the same document, no full load), and the calculator computes what CPython's
  advisor computes; on to another calculator and back, one worker serves them all;
- no page of a sample (home, a guide page, a calculator, a hardware page, a report page; both
  languages) gets a 4xx/5xx response or logs a console error (the sitemap.xml 404s that
  Material's alternate-language code caused: hooks/hreflang.py);
- the language switcher lands on the same page in the other language, also after an instant
  navigation.

Material enables instant navigation only for links listed in sitemap.xml, whose addresses are
site_url's (http://127.0.0.1:8000/); the test server has another port, so sitemap.xml is served
here with the test server's origin, as the real host serves it with its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor import webapi
from advisor.core import yamlsafe

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
EN = yamlsafe.load_file(ROOT / "templates" / "i18n" / "en.yaml")
SITE_URL = "http://127.0.0.1:8000/"
SAMPLE = (
    "",
    "guide/vram-and-bandwidth/",
    "calculators/vram/",
    "hardware/a100-80gb-sxm/",
    "reports/bank-serving-70b/",
)


@pytest.fixture()
def page(chromium, site_server):
    ctx = chromium.new_context(viewport={"width": 1200, "height": 1000})

    def sitemap(route):
        resp = route.fetch()
        route.fulfill(response=resp, body=resp.text().replace(SITE_URL, site_server))

    ctx.route("**/sitemap.xml", sitemap)
    # every Worker the page starts (the calculators' must be one for all page views)
    ctx.add_init_script(
        "(() => { const N = window.Worker; window.__workers = [];"
        " window.Worker = class extends N { constructor(u, o) { super(u, o);"
        " window.__workers.push(String(u)); } }; })()"
    )
    p = ctx.new_page()
    p.bad = []  # (what, detail) of every 4xx/5xx response, console error and page error
    p.on("response", lambda r: r.status >= 400 and p.bad.append(("HTTP", r.status, r.url)))
    p.on("console", lambda m: m.type == "error" and p.bad.append(("console", m.text)))
    p.on("pageerror", lambda e: p.bad.append(("pageerror", str(e))))
    yield p
    # a sitemap request still in flight would fail in its handler once the context is gone
    ctx.unroute_all(behavior="ignoreErrors")
    ctx.close()


def _gib_en(b: int) -> str:
    s = f"{b / 2**30:,.2f}".rstrip("0").rstrip(".")
    return f"{s} GiB"


def _click_link(page, path: str) -> None:
    """Click the first link on the page to `path` (an absolute URL's path)."""
    page.evaluate(
        "(p) => [...document.querySelectorAll('a[href]')]"
        ".find((a) => new URL(a.href).pathname === p).click()",
        path,
    )


def _ready(page, calc: str) -> None:
    page.wait_for_selector(f'.calc[data-calc="{calc}"][data-ready="1"]', timeout=30_000)


def _set(page, calc: str, name: str, value: str) -> None:
    root = page.locator(f'.calc[data-calc="{calc}"]')
    before = int(root.get_attribute("data-updates") or 0)
    field = root.locator(f'[name="{name}"]')
    if field.evaluate("e => e.tagName") == "SELECT":
        field.select_option(value)
    else:
        field.fill(value)
    page.wait_for_function(
        "([sel, n]) => { const r = document.querySelector(sel);"
        " return Number(r.dataset.updates || 0) > n && r.dataset.busy === '0'; }",
        arg=[f'.calc[data-calc="{calc}"]', before],
        timeout=20_000,
    )


def _on_guide_page(page, site_server) -> None:
    """A guide page, loaded, marked (`__sameDocument`: an instant navigation keeps the mark, a
    full load loses it), with Material ready to take its links over."""
    page.goto(f"{site_server}en/guide/vram-and-bandwidth/")
    page.wait_for_load_state("load")
    page.evaluate("window.__sameDocument = 1")
    # the sitemap is loaded by Material before it intercepts clicks
    page.wait_for_function(
        "() => performance.getEntriesByType('resource').some(e => e.name.endsWith('/sitemap.xml'))"
    )
    page.wait_for_timeout(300)


def test_guide_page_to_calculator_by_instant_navigation(page, site_server):
    _on_guide_page(page, site_server)
    _click_link(page, "/en/calculators/vram/")
    page.wait_for_url(f"{site_server}en/calculators/vram/")
    _ready(page, "vram")
    assert page.evaluate("window.__sameDocument") == 1, "a full page load, not instant navigation"
    # the prerendered default, then an input computed in the browser, as CPython computes them
    assert page.locator('[data-out="total"]').inner_text() == _gib_en(
        webapi.run("vram", {})["total_bytes"]
    )
    _set(page, "vram", "batch", "3")
    _set(page, "vram", "seq", "2048")
    want = webapi.run("vram", {"batch": 3, "seq": 2048})
    assert page.locator('[data-out="total"]').inner_text() == _gib_en(want["total_bytes"])
    assert page.locator('[data-out="max_batch"]').inner_text() == f"{want['chosen']['max_batch']:,}"
    # on to another calculator, through a guide page: the same document and the same worker
    _click_link(page, "/en/guide/tiers/")
    page.wait_for_url(f"{site_server}en/guide/tiers/")
    _click_link(page, "/en/calculators/roofline/")
    page.wait_for_url(f"{site_server}en/calculators/roofline/")
    _ready(page, "roofline")
    _set(page, "roofline", "batch", "64")
    want = webapi.run("roofline", {"batch": 64})
    assert page.locator('[data-out="bound"]').inner_text() == EN[f"calc.b.{want['bound']}"]
    assert page.evaluate("window.__sameDocument") == 1
    workers = page.evaluate(
        "window.__workers.filter((u) => new URL(u, location.href).pathname.endsWith('/worker.mjs'))"
    )
    assert len(workers) == 1, workers
    assert page.bad == []


def test_report_form_by_instant_navigation(page, site_server):
    """The report form's script comes only with the form (loader.mjs imports it): a reader who
    reaches the form by instant navigation from a guide page gets a working form, and a page
    without the form never asks for the script."""
    _on_guide_page(page, site_server)
    form_js = "() => performance.getEntriesByType('resource').some(e => e.name.endsWith('/reports/form.js'))"
    assert not page.evaluate(form_js)
    _click_link(page, "/en/reports/new/")
    page.wait_for_url(f"{site_server}en/reports/new/")
    page.wait_for_selector("#ar-form[data-engine=ready]", timeout=60_000)
    assert page.evaluate("window.__sameDocument") == 1, "a full page load, not instant navigation"
    assert page.evaluate(form_js)
    page.select_option("#ar-example", "university-lab")
    page.click("#ar-build")
    page.wait_for_selector("#ar-output .ar", timeout=30_000)
    assert page.bad == []


def test_guide_page_prefetches_the_runtime_in_idle_time(page, site_server):
    """A guide page fetches the calculators' runtime into the HTTP cache when idle."""
    page.goto(f"{site_server}guide/tiers/")
    page.wait_for_function("() => window.__calcPrefetched === true", timeout=30_000)
    names = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    for f in ("pyodide.asm.wasm", "python_stdlib.zip.gz", "advisor.snapshot.gz"):
        assert any(n.endswith(f"/assets/pyodide/{f}") for n in names), f
    assert page.bad == []


def test_save_data_skips_the_prefetch(chromium, site_server):
    ctx = chromium.new_context()
    ctx.add_init_script(
        "Object.defineProperty(navigator, 'connection',"
        " {value: {saveData: true, effectiveType: '4g'}, configurable: true})"
    )
    p = ctx.new_page()
    try:
        p.goto(f"{site_server}guide/tiers/")
        p.wait_for_timeout(2500)  # past the idle callback's fallback
        names = p.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
        assert not [n for n in names if "/assets/pyodide/" in n]
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", ["az", "en"])
def test_sample_pages_have_no_4xx_and_no_console_error(page, site_server, lang):
    prefix = "" if lang == "az" else "en/"
    for path in SAMPLE:
        page.goto(f"{site_server}{prefix}{path}")
        page.wait_for_load_state("load")
        if path.startswith("calculators/"):
            _ready(page, "vram")
        page.wait_for_timeout(800)  # Material's sitemap and alternate requests
    # and by instant navigation between two of them
    _click_link(page, f"/{prefix}guide/tiers/")
    page.wait_for_url(f"{site_server}{prefix}guide/tiers/")
    page.wait_for_timeout(800)
    assert page.bad == []


def test_language_switcher_lands_on_the_same_page(page, site_server):
    page.goto(f"{site_server}guide/tiers/")
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)
    # after an instant navigation the switcher follows the new page
    _click_link(page, "/guide/multi-gpu/")
    page.wait_for_url(f"{site_server}guide/multi-gpu/")
    page.locator(".md-select__link[hreflang=en]").dispatch_event("click")
    page.wait_for_url(f"{site_server}en/guide/multi-gpu/")
    assert page.evaluate("document.documentElement.lang") == "en"
    page.locator(".md-select__link[hreflang=az]").dispatch_event("click")
    page.wait_for_url(f"{site_server}guide/multi-gpu/")
    assert page.bad == []
