"""The calculators in real headless Chromium (Debian's /usr/bin/chromium through Playwright):
filled inputs give the numbers CPython's advisor.webapi gives; bad inputs show the localised
message next to the field and the page keeps working; only the site's origin is requested;
instant navigation re-wires the page; screenshots of every calculator in both languages go to
out/screenshots/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor import webapi, yamlsafe

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "out" / "screenshots"
CALCS = ("vram", "budget", "picker", "roofline")
pytestmark = pytest.mark.browser

STRINGS = {
    lang: yamlsafe.load_file(ROOT / "templates" / "i18n" / f"{lang}.yaml") for lang in ("az", "en")
}


@pytest.fixture(scope="module")
def browser_page(site_server, chromium):
    page = chromium.new_page(viewport={"width": 1200, "height": 1400})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.context.on("request", lambda r: requests.append(r.url))
    page.requests = requests
    yield page
    page.context.close()


def _open(page, base, lang, calc):
    prefix = "" if lang == "az" else "en/"
    page.goto(f"{base}{prefix}calculators/{calc}/")
    page.wait_for_selector(f'.calc[data-calc="{calc}"][data-ready="1"]', timeout=30_000)


def _set(page, calc, name, value):
    """Fill one field and wait until the result has settled."""
    root = page.locator(f'.calc[data-calc="{calc}"]')
    before = int(root.get_attribute("data-updates") or 0)
    field = root.locator(f'[name="{name}"]')
    if field.evaluate("e => e.tagName") == "SELECT":
        field.select_option(str(value))
    else:
        field.fill(str(value))
    page.wait_for_function(
        "([sel, n]) => { const r = document.querySelector(sel);"
        " return Number(r.dataset.updates || 0) > n && r.dataset.busy === '0'; }",
        arg=[f'.calc[data-calc="{calc}"]', before],
        timeout=20_000,
    )


def _gib_en(b: int) -> str:
    s = f"{b / 2**30:,.2f}".rstrip("0").rstrip(".")
    return f"{s} GiB"


def test_every_calculator_both_languages_and_screenshots(browser_page, site_server):
    page = browser_page
    SHOTS.mkdir(parents=True, exist_ok=True)
    for lang in ("az", "en"):
        for calc in CALCS:
            _open(page, site_server, lang, calc)
            root = page.locator(f'.calc[data-calc="{calc}"]')
            assert root.locator(".calc-result table").count() >= 1
            assert STRINGS[lang]["calc.private"] in page.content()
            root.screenshot(path=str(SHOTS / f"calc-{calc}-{lang}.png"))


def test_vram_inputs_equal_cpython(browser_page, site_server):
    page = browser_page
    _open(page, site_server, "en", "vram")
    # the prerendered default equals CPython's default
    want = webapi.run("vram", {})
    assert page.locator('[data-out="total"]').inner_text() == _gib_en(want["total_bytes"])
    for name, value in (
        ("task", "train"),
        ("batch", "2"),
        ("seq", "1024"),
        ("gpu", "a100-80gb-sxm"),
    ):
        _set(page, "vram", name, value)
    want = webapi.run("vram", {"task": "train", "batch": 2, "seq": 1024, "gpu": "a100-80gb-sxm"})
    assert page.locator('[data-out="total"]').inner_text() == _gib_en(want["total_bytes"])
    assert page.locator('[data-out="max_batch"]').inner_text() == f"{want['chosen']['max_batch']:,}"
    assert page.locator('[data-out="max_seq"]').inner_text() == f"{want['chosen']['max_seq']:,}"
    # state in the URL: a shared link reproduces the result
    url = page.url
    assert "vram.batch=2" in url
    page.goto(url)
    page.wait_for_selector('.calc[data-calc="vram"][data-ready="1"][data-busy="0"]', timeout=30_000)
    assert page.locator('[data-out="total"]').inner_text() == _gib_en(want["total_bytes"])
    # copy as Markdown / CSV: the table's rows
    page.locator('.calc-copy[data-copy="md"]').click()
    md = page.locator(".calc").get_attribute("data-copied")
    assert md.startswith("| Component | GiB | GB |") and "Total to provision" in md
    page.locator('.calc-copy[data-copy="csv"]').click()
    assert page.locator(".calc").get_attribute("data-copied").startswith("Component,GiB,GB")


def test_roofline_and_budget_equal_cpython(browser_page, site_server):
    page = browser_page
    _open(page, site_server, "en", "roofline")
    _set(page, "roofline", "phase", "train")
    want = webapi.run("roofline", {"phase": "train"})
    bound = STRINGS["en"][f"calc.b.{want['bound']}"]
    assert page.locator('[data-out="bound"]').inner_text() == bound
    _open(page, site_server, "en", "budget")
    _set(page, "budget", "utilisation", "0.9")
    want = webapi.run("budget", {"utilisation": 0.9})
    key = "calc.own_cheaper" if want["tco"]["savings"] > 0 else "calc.rent_cheaper"
    assert page.locator('[data-out="verdict"]').inner_text() == STRINGS["en"][key]


@pytest.mark.parametrize(
    "lang,calc,name,value,key,params",
    [
        ("en", "vram", "batch", "-1", "err.field.too_small", {"minimum": "1"}),
        ("az", "vram", "batch", "", "err.field.required", {}),
        ("en", "vram", "batch", "99999999", "err.field.too_large", {"maximum": "65536"}),
        ("az", "budget", "utilisation", "2", "err.field.too_large", {"maximum": "1"}),
    ],
)
def test_bad_input_shows_localised_error_and_recovers(
    browser_page, site_server, lang, calc, name, value, key, params
):
    page = browser_page
    _open(page, site_server, lang, calc)
    good = page.locator(f'.calc[data-calc="{calc}"] .calc-result').inner_html()
    _set(page, calc, name, value)
    msg = STRINGS[lang][key]
    for k, v in params.items():
        msg = msg.replace("{" + k + "}", v)
    assert page.locator(f'.calc-err[data-err="{name}"]').inner_text() == msg
    # the page keeps working: a valid value clears the error and updates the result
    default = str(webapi.DEFAULTS[calc][name])
    _set(page, calc, name, default)
    assert page.locator(f'.calc-err[data-err="{name}"]').inner_text() == ""
    assert page.locator(f'.calc[data-calc="{calc}"] .calc-result').inner_html() == good


def test_malformed_config_json(browser_page, site_server):
    page = browser_page
    _open(page, site_server, "az", "vram")
    _set(page, "vram", "config", "{ bu json deyil")
    text = page.locator('.calc-err[data-err="config"]').inner_text()
    assert text.startswith(STRINGS["az"]["err.config.bad_json"].split("{")[0])
    cfg = json.dumps(webapi.get_catalog().model("qwen2.5-0.5b").doc["config"])
    _set(page, "vram", "config", cfg)
    assert page.locator('.calc-err[data-err="config"]').inner_text() == ""
    want = webapi.run("vram", {"config": cfg})
    total = page.locator('[data-out="total"]').inner_text()
    assert total.replace(",", ".").split()[0] == _gib_en(want["total_bytes"]).split()[0]


def test_instant_navigation_rewires(browser_page, site_server):
    page = browser_page
    _open(page, site_server, "en", "vram")
    # a click on a site link (instant navigation where the sitemap matches the origin; the test
    # server's random port does not match site_url, so Material falls back to a full load)
    page.evaluate("document.querySelector('a[href$=\"calculators/roofline/\"]').click()")
    page.wait_for_selector('.calc[data-calc="roofline"][data-ready="1"]', timeout=30_000)
    _set(page, "roofline", "batch", "64")
    want = webapi.run("roofline", {"batch": 64})
    assert (
        page.locator('[data-out="bound"]').inner_text() == STRINGS["en"][f"calc.b.{want['bound']}"]
    )


def test_worker_started_from_head_and_search_held_back(browser_page, site_server):
    """boot.js (inlined in <head>) starts the Pyodide worker before the page is parsed and
    holds Material's search worker back; focusing the search field releases it, and search
    then works on a calculator page as on any other."""
    page = browser_page
    _open(page, site_server, "en", "picker")
    assert page.evaluate("window.__calcBoot && window.__calcBoot.worker !== null")
    page.wait_for_timeout(300)
    searches = [u for u in browser_page.requests if "/workers/search" in u]
    assert searches == [], searches  # calculators ready for 0.3 s: search still held back
    box = page.locator("input.md-search__input")
    box.click()
    box.press_sequentially("roofline", delay=30)
    # the results of the whole word (Material re-renders the list as each key's results arrive)
    page.wait_for_function(
        "() => { const f = document.querySelector('li.md-search-result__item:not([hidden])');"
        " return !!f && f.innerText.toLowerCase().includes('roofline'); }",
        timeout=15000,
    )
    assert [u for u in browser_page.requests if "/workers/search" in u]


def test_search_released_without_the_reader(browser_page, site_server):
    """Without any search interaction, the search worker starts a few seconds after the
    calculators are ready (boot.js), so it is not lost."""
    page = browser_page
    _open(page, site_server, "az", "roofline")
    page.wait_for_function(
        "() => performance.getEntriesByType('resource')"
        ".some(e => e.name.includes('/workers/search'))",
        timeout=15_000,
    )


def test_only_the_sites_origin_is_requested(browser_page, site_server):
    outside = [
        u
        for u in browser_page.requests
        if not u.startswith(site_server) and not u.startswith(("data:", "blob:"))
    ]
    assert outside == []
