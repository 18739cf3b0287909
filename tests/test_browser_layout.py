"""Issue 39 in real headless Chromium (Debian's /usr/bin/chromium, Playwright): a phone
(390x844) and a desktop (1366x900).

- every key page fits the width (no horizontal overflow of the page), wide tables keep their
  first column in view and say that they scroll, screenshots to out/screenshots/layout-*.png;
- the tools are reachable: the nav lists the calculators before the catalog pages, a guide page
  links to its calculator opened on its own example;
- inputs: "2T" and "2,000,000,000,000" in a token field, 768 GPUs get a cluster plan;
- an error greys the previous result; the picker's rejected list is complete, nearest misses
  first, and filters;
- the report form: errors in the page's language named by the field's label; Ctrl+P prints only
  the report.
"""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

from advisor import webapi
from advisor.core import yamlsafe

# the scroll hint in each language, as templates/i18n gives it (overrides/main.html)
HINTS = {
    lang: yamlsafe.load_file(ROOT / "templates" / "i18n" / f"{lang}.yaml")["theme.scroll_hint"]
    for lang in ("az", "en")
}

pytestmark = pytest.mark.browser

SHOTS = ROOT / "out" / "screenshots"
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1366, "height": 900}}
PAGES = {
    "home": "",
    "calculators": "calculators/",
    "guide-vram": "guide/vram-and-bandwidth/",
    "guide-serving": "guide/serving/",
    "vram": "calculators/vram/",
    "picker": "calculators/picker/",
    "serving": "calculators/serving/",
    "cluster": "calculators/cluster/",
    "budget": "calculators/budget/",
    "roofline": "calculators/roofline/",
    "charts": "charts/",
    "prices": "prices/",
    "hardware": "hardware/",
    "gpu": "hardware/h100-sxm/",
    "model": "models/llama-3.1-8b/",
    "methodology": "methodology/",
    "report": "reports/bank-serving-70b/",
    "report-form": "reports/new/",
}
# pages whose first chart and table are worth a look of their own (all: the first screen)
FULL = {"charts", "report", "serving", "budget", "picker", "cluster", "prices"}

OVERFLOW = """() => {
  const w = document.documentElement.clientWidth;
  const bad = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= w + 1) continue;
    // inside a scroller of its own (a wide table, a code block): fine
    let p = el.parentElement, inside = false;
    while (p && p !== document.body) {
      const ox = getComputedStyle(p).overflowX;
      if (ox === 'auto' || ox === 'scroll' || ox === 'hidden') { inside = true; break; }
      p = p.parentElement;
    }
    if (!inside && getComputedStyle(el).position !== 'fixed') bad.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right));
  }
  return {scroll: document.documentElement.scrollWidth, width: w, bad: bad.slice(0, 5)};
}"""


# [data-more, the next sibling's class, its text] of every scroller wider than its box
WIDE_SCROLLERS = """() => [...document.querySelectorAll('.md-typeset__scrollwrap, .calc-result')]
  .filter(e => e.scrollWidth > e.clientWidth + 2)
  .map(e => { const n = e.nextElementSibling;
    return [e.getAttribute('data-more'), n && n.className, n ? n.textContent : null]; })"""


@pytest.fixture(scope="module")
def contexts(chromium):
    made = {
        name: chromium.new_context(viewport=vp, locale="az-AZ") for name, vp in VIEWPORTS.items()
    }
    yield made
    for c in made.values():
        c.close()


def _no_runtime(page):
    """Layout only: the calculators keep their prerendered result (no Pyodide start: 2 cores),
    and no search index (Material's search worker fetches the whole site's index and builds its
    lunr index on every page view: 20 of the 56 s of CPU of a viewport's 36 page views; the
    search box and its results are tested in tests/test_browser_site.py)."""
    page.route(re.compile(r".*/assets/pyodide/.*"), lambda route: route.abort())
    page.route(re.compile(r".*/search/search_index\.json(\?.*)?$"), lambda route: route.abort())


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_every_page_fits_and_wide_tables_say_they_scroll(contexts, site_server, viewport):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = contexts[viewport].new_page()
    _no_runtime(page)
    problems = []
    for lang, prefix in (("az", ""), ("en", "en/")):
        for name, rel in PAGES.items():
            page.goto(site_server + prefix + rel)
            page.wait_for_load_state()
            page.wait_for_timeout(150)  # site.js marks the scrollers after the page's emission
            got = page.evaluate(OVERFLOW)
            if got["scroll"] > got["width"] or got["bad"]:
                problems.append((lang, name, got))
            # every scroller that hides columns fades at its edge and says so under it (read
            # in one call per page: a call per scroller and per attribute cost more CPU)
            for more, hint, text in page.evaluate(WIDE_SCROLLERS):
                assert more == "1", (lang, name)
                assert hint == "x-scroll-hint", (lang, name)
                assert text == HINTS[lang], (lang, name, text)
            if lang == "en" or viewport == "phone":
                page.screenshot(path=str(SHOTS / f"layout-{viewport}-{lang}-{name}.png"))
                # the first chart and the first wide table, where the page has them
                for what, sel in (
                    ("chart", "figure.advisor-figure, .calc-svg"),
                    ("table", "table"),
                ):
                    el = page.locator(sel).first
                    if name in FULL and el.count():
                        el.scroll_into_view_if_needed()
                        el.screenshot(
                            path=str(SHOTS / f"layout-{viewport}-{lang}-{name}-{what}.png")
                        )
    assert problems == []
    page.close()


def test_sticky_first_column_on_a_phone(contexts, site_server):
    page = contexts["phone"].new_page()
    _no_runtime(page)
    page.goto(site_server + "en/prices/")
    wrap = page.locator(".md-typeset__scrollwrap").first
    assert wrap.evaluate("e => e.scrollWidth > e.clientWidth")
    first = wrap.locator("td:first-child").first
    x0 = first.bounding_box()["x"]
    wrap.evaluate("e => e.scrollLeft = 400")
    page.wait_for_timeout(100)
    # the key column stays in view (at the scroller's edge) while the others slide under it
    assert -1 <= first.bounding_box()["x"] <= x0 + 1
    second = wrap.locator("td:nth-child(2)").first
    assert second.bounding_box()["x"] < x0
    page.screenshot(path=str(SHOTS / "layout-phone-en-prices-scrolled.png"))
    page.close()


def test_nav_shows_the_tools_before_the_catalog(contexts, site_server):
    page = contexts["desktop"].new_page()
    _no_runtime(page)
    page.goto(site_server + "en/")
    nav = page.locator(".md-sidebar--primary")
    links = [
        t.strip() for t in nav.locator("a.md-nav__link:visible").all_inner_texts() if t.strip()
    ]
    assert "Calculators" in links and "Reports" in links, links[:12]
    # the per-item pages are folded away: the tools come within the first screen's links
    assert links.index("Calculators") < 8, links[:12]
    calc = nav.locator("a.md-nav__link:visible", has_text=re.compile(r"^\s*Calculators\s*$"))
    assert calc.first.bounding_box()["y"] < 900
    assert "NVIDIA H100 SXM5 80 GB" not in links  # inside the folded "All accelerators"
    # the home page lists every tool, the report form too
    body = page.locator("article").inner_text()
    for word in ("VRAM calculator", "GPU picker", "Cluster plan", "Report builder"):
        assert word in body
    page.close()


def _wait_updates(page, calc, before, timeout=60_000):
    page.wait_for_function(
        "([sel, n]) => { const r = document.querySelector(sel);"
        " return r && Number(r.dataset.updates || 0) > n && r.dataset.busy === '0'; }",
        arg=[f'.calc[data-calc="{calc}"]', before],
        timeout=timeout,
    )


def _set(page, calc, name, value):
    root = page.locator(f'.calc[data-calc="{calc}"]')
    before = int(root.get_attribute("data-updates") or 0)
    field = root.locator(f'[name="{name}"]')
    if field.evaluate("e => e.tagName") == "SELECT":
        field.select_option(str(value))
    else:
        field.fill(str(value))
    _wait_updates(page, calc, before)


def test_calculator_flows(contexts, site_server):
    page = contexts["desktop"].new_page()
    # a guide page's link opens the calculator on the page's own example
    page.goto(site_server + "en/guide/vram-and-bandwidth/")
    page.locator(".admonition.tip a").first.click()
    page.wait_for_url(re.compile(r".*/en/calculators/vram/\?vram\.model=.*"))
    page.wait_for_selector('.calc[data-calc="vram"][data-ready="1"]', timeout=60_000)
    _wait_updates(page, "vram", 0)
    assert page.input_value('[name="task"]') == "train"
    want = webapi.run(
        "vram",
        {
            "model": "llama-3.1-8b",
            "task": "train",
            "batch": 1,
            "seq": 2048,
            "checkpointing": "none",
        },
    )
    assert (
        page.locator('[data-out="total"]')
        .inner_text()
        .startswith(f"{want['total_bytes'] / 2**30:,.2f}".rstrip("0").rstrip("."))
    )
    # an error greys the result out
    _set(page, "vram", "batch", "0")
    result = page.locator('.calc[data-calc="vram"] .calc-result')
    assert float(result.evaluate("e => getComputedStyle(e).opacity")) < 0.5
    _set(page, "vram", "batch", "1")
    assert float(result.evaluate("e => getComputedStyle(e).opacity")) == 1.0

    # token counts as people write them, and 768 GPUs
    page.goto(site_server + "en/calculators/cluster/")
    page.wait_for_selector('.calc[data-calc="cluster"][data-ready="1"]', timeout=60_000)
    for text in ("2T", "2,000,000,000,000"):
        _set(page, "cluster", "tokens", text)
        assert page.locator('.calc[data-calc="cluster"]').get_attribute("data-state") == "ok"
    _set(page, "cluster", "tokens", "1T")
    _set(page, "cluster", "max_gpus", "768")
    _set(page, "cluster", "deadline_days", "16")
    assert page.locator('[data-out="gpus"]').inner_text() == "768"
    page.locator(".calc").screenshot(path=str(SHOTS / "layout-desktop-en-cluster-768.png"))

    # the picker's rejected list: all of them, nearest first, a filter
    page.goto(site_server + "en/calculators/picker/")
    page.wait_for_selector('.calc[data-calc="picker"][data-ready="1"]', timeout=60_000)
    _set(page, "picker", "model", "llama-3.1-70b")
    _set(page, "picker", "task", "train")
    want = webapi.run("picker", {"model": "llama-3.1-70b", "task": "train"})
    page.locator(".calc-rejected summary").click()
    rows = page.locator("table.calc-rej tbody tr")
    assert rows.count() == want["counts"]["rejected"] == len(want["rejected"]) > 15
    first = rows.first.locator("td").all_inner_texts()
    assert first[0] == want["rejected"][0]["gpu_name"]
    page.fill(".calc-filter", "H100")
    visible = [t for t in rows.all() if t.is_visible()]
    assert 0 < len(visible) < rows.count()
    assert all("H100" in r.inner_text() for r in visible)
    page.locator(".calc").screenshot(path=str(SHOTS / "layout-desktop-en-picker-rejected.png"))
    page.close()


def test_report_form_errors_in_the_page_language_and_print(contexts, site_server):
    page = contexts["phone"].new_page()
    page.goto(site_server + "reports/new/")
    page.wait_for_selector("#ar-form[data-engine=ready]", timeout=60_000)
    page.select_option('[name="task"]', "serving")
    page.fill('[name="organisation"]', "Test MMC")
    page.fill('[name="workload"]', "Köməkçi")
    page.fill('[name="concurrent_users"]', "0")
    page.click("#ar-build")
    page.wait_for_selector("#ar-errors li")
    items = page.locator("#ar-errors li").all_inner_texts()
    from hooks.templating import load_strings

    az = load_strings(ROOT / "templates" / "i18n")["az"]
    from advisor.report.i18n import STRINGS as REPORT

    label = REPORT["az"]["form.concurrent_users"]
    text = az["err.field.too_small"].replace("{minimum}", "1")
    assert items == [f"{az['form.workload_n'].replace('{n}', '1')} · {label}: {text}"], items
    assert not any("workloads[" in t for t in items)
    bad = page.locator(".ar-field.ar-bad")
    assert bad.count() == 1 and bad.locator(".ar-err").inner_text()
    page.screenshot(path=str(SHOTS / "layout-phone-az-report-form-error.png"), full_page=True)
    # a second workload, then a report
    page.fill('[name="concurrent_users"]', "8")
    page.click("#ar-add")
    second = page.locator(".ar-workload").nth(1)
    second.locator('[name="workload"]').fill("Təlim")
    second.locator('[name="task"]').select_option("fine-tuning")
    second.locator('[name="dataset_tokens"]').fill("50 000 000")
    assert second.locator('[name="weights"]').is_hidden()
    page.click("#ar-build")
    page.wait_for_selector("#ar-output .ar", timeout=60_000)
    assert page.locator("#ar-errors li").count() == 0
    assert "Təlim" in page.inner_text("#ar-output .ar")
    # Ctrl+P: only the report
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    assert page.locator("#ar-output .ar").is_visible()
    for sel in (".ar-top", "#ar-workloads", "#ar-build", "article h1"):
        assert page.locator(sel).first.is_hidden(), sel
    page.emulate_media(media="screen")
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    assert page.locator(".ar-top").is_visible()
    page.close()
