"""The built site in real headless Chromium (Debian's /usr/bin/chromium, Playwright): key pages
in both languages, the language switcher (also after instant navigation), search for an
Azerbaijani word with and without its special letters, and only the site's own origin requested.
Screenshots go to out/screenshots/ (gitignored) to be looked at."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

pytestmark = pytest.mark.browser

SHOTS = ROOT / "out" / "screenshots"
KEY_PAGES = {
    "home": "",
    "hardware": "hardware/",
    "charts": "charts/",
    "prices": "prices/",
    "models": "models/",
    "model": "models/llama-3.1-8b/",
    "gpu": "hardware/h100-sxm/",
}


@pytest.fixture(scope="module")
def browser(chromium):
    return chromium


@pytest.fixture()
def page(browser, site_server):
    """A fresh page that records every request; fails the test on a foreign origin."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="az-AZ")
    pg = context.new_page()
    requests: list[str] = []
    pg.on("request", lambda r: requests.append(r.url))
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.requests = requests
    yield pg
    context.close()
    foreign = [
        u
        for u in requests
        if not u.startswith(site_server) and not u.startswith(("data:", "blob:"))
    ]
    assert not foreign, foreign
    assert not errors, errors


def test_key_pages_both_languages(page, site_server):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for lang, prefix in (("az", ""), ("en", "en/")):
        for name, rel in KEY_PAGES.items():
            page.goto(site_server + prefix + rel)
            assert page.locator("html").get_attribute("lang") == lang
            assert page.locator("article h1").count() == 1
            page.screenshot(
                path=str(SHOTS / f"{lang}-{name}.png"), full_page=name in ("charts", "gpu")
            )
    assert len(page.requests) > 10


def _switch(page, lang: str):
    page.locator(".md-header__option .md-select").hover()
    page.locator(f'a.md-select__link[hreflang="{lang}"]').click()
    page.wait_for_load_state()


def test_language_switch_keeps_the_page(page, site_server):
    page.goto(site_server + "models/llama-3.1-8b/")
    _switch(page, "en")
    page.wait_for_url(site_server + "en/models/llama-3.1-8b/")
    assert page.locator("html").get_attribute("lang") == "en"
    _switch(page, "az")
    page.wait_for_url(site_server + "models/llama-3.1-8b/")
    # after an instant navigation (no page reload) the switcher follows the new page
    page.goto(site_server + "en/")
    page.locator('article a[href$="prices/"]').first.click()
    page.wait_for_url(site_server + "en/prices/")
    _switch(page, "az")
    page.wait_for_url(site_server + "prices/")
    assert "Bulud qiymətləri" in page.locator("article h1").inner_text()


@pytest.mark.parametrize("query", ["yaddaş", "yaddas"])
def test_search_azerbaijani_word(page, site_server, query):
    page.goto(site_server)
    box = page.locator("input.md-search__input")
    box.click()
    box.press_sequentially(query, delay=30)  # material searches on key events
    items = page.locator("li.md-search-result__item:not([hidden])")
    items.first.wait_for(timeout=15000)
    # Material re-renders the list as each key's results arrive: wait for the results of the
    # whole word, then read them in one go (reading item by item raced a re-render).
    sel = "li.md-search-result__item:not([hidden])"
    page.wait_for_function(
        "sel => { const f = document.querySelector(sel); if (!f) return false;"
        " const t = f.innerText.toLowerCase(); return t.includes('yaddaş') || t.includes('yaddas'); }",
        arg=sel,
        timeout=15000,
    )
    hrefs = page.evaluate(
        "sel => [...document.querySelectorAll(sel)].map(li => li.querySelector('a').getAttribute('href'))",
        sel,
    )
    assert hrefs
    assert not [h for h in hrefs if re.search(r"(^|/)en/", h)], hrefs  # this language only
    page.screenshot(path=str(SHOTS / f"az-search-{'ascii' if query.isascii() else 'native'}.png"))
