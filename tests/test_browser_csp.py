"""Issue 40: the Content-Security-Policy (hooks/csp.py) is on every built page, allows what the
site runs (every calculator starts, also when instant navigation brings it in from a guide page;
the report form builds a report) and nothing else: no console report of a blocked resource, and
a script injected inline does not run."""

from __future__ import annotations

import re

import pytest

from hooks import csp

pytestmark = pytest.mark.browser
CALCS = ("vram", "budget", "picker", "roofline", "serving", "cluster")


def test_every_page_has_the_policy_before_any_script(built_site):
    pages = sorted(built_site.rglob("*.html"))
    assert len(pages) > 40
    hashes = set()
    for path in pages:
        text = path.read_text(encoding="utf-8")
        head = text.split("</head>")[0]
        at = head.find('<meta http-equiv="Content-Security-Policy"')
        assert at >= 0, path
        first_script = head.find("<script")
        assert first_script == -1 or at < first_script, path
        policy = re.search(r'Content-Security-Policy" content="([^"]*)"', text).group(1)
        assert "'unsafe-inline'" not in policy.split("; ")[1]  # script-src
        for body in csp.inline_scripts(text):
            hashes.add(csp.sha256(body))
            assert csp.sha256(body) in policy, path


def _watch(page):
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(m.text)
            if m.type == "error" and "Content Security Policy" in m.text
            else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(str(e)))
    return problems


def test_calculators_and_report_form_start_under_the_policy(chromium, site_server):
    context = chromium.new_context(viewport={"width": 1200, "height": 1400})
    page = context.new_page()
    problems = _watch(page)
    for lang in ("az", "en"):
        prefix = "" if lang == "az" else "en/"
        for calc in CALCS:
            page.goto(f"{site_server}{prefix}calculators/{calc}/")
            page.wait_for_selector(f'.calc[data-calc="{calc}"][data-ready="1"]', timeout=30_000)
            result = page.locator(f'.calc[data-calc="{calc}"] .calc-result table')
            assert result.count() >= 1, (lang, calc)
    # instant navigation: a guide page first, then a calculator through the nav link
    page.goto(f"{site_server}en/")
    page.evaluate(
        "u => { const a = document.createElement('a'); a.href = u; document.body.append(a);"
        " a.click(); }",
        f"{site_server}en/calculators/serving/",
    )
    page.wait_for_selector('.calc[data-calc="serving"][data-ready="1"]', timeout=30_000)
    # an inline script injected into the page does not run
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.__injected = 1'; document.head.append(s); }"
    )
    assert page.evaluate("window.__injected") is None
    # the report form builds a report
    page.goto(f"{site_server}en/reports/new/")
    page.wait_for_selector("#ar-form[data-engine=ready]", timeout=30_000)
    page.select_option("#ar-example", "bank-serving-70b")
    page.click("#ar-build")
    page.wait_for_selector("#ar-output .ar", timeout=20_000)
    context.close()
    # only the injected script was refused
    assert [p for p in problems if "__injected" not in p and "inline script" not in p] == [], (
        problems
    )
    assert any("inline script" in p for p in problems), problems
