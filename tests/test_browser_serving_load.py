"""Issue 35 in real headless Chromium: the serving calculator's request rate gives the TTFT and
TPOT under queueing that CPython's advisor.webapi gives; the largest rate within the limits,
speculative decoding, the interactivity table with its costs, and the new fields' errors in the
page's language next to the field."""

from __future__ import annotations

import pytest

from advisor import webapi
from advisor.core import numfmt
from tests.test_browser_calculators import STRINGS, _open, _out, _pm, _set

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page(site_server, chromium):
    p = chromium.new_page(viewport={"width": 1200, "height": 1600})
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.errors = errors
    yield p
    p.context.close()


def _ms(seconds: float, band: dict) -> str:
    return f"{numfmt.number(seconds * 1e3, 1, 'en', trim=True)} {_pm(band)}"


def test_request_rate_gives_ttft_and_tpot_as_cpython(page, site_server):
    _open(page, site_server, "en", "serving")
    root = page.locator('.calc[data-calc="serving"]')
    _set(page, "serving", "request_rate", "8")
    want = webapi.run("serving", {"request_rate": 8})
    acc = want["accuracy"]
    assert _out(page, "load_ttft") == _ms(want["load"]["ttft_s"], acc["prefill"])
    assert _out(page, "load_tpot") == _ms(want["load"]["tpot_s"], acc["decode"])
    assert "serving.request_rate=8" in page.url
    # limits: the largest rate that meets them, as CPython finds it
    _set(page, "serving", "ttft_ms", "200")
    _set(page, "serving", "tpot_ms", "25")
    want = webapi.run("serving", {"request_rate": 8, "ttft_ms": 200, "tpot_ms": 25})
    rate = numfmt.number(want["max_rate"]["request_rate_per_s"], 2, "en", trim=True)
    assert _out(page, "max_rate_value") == rate
    # MTP at DeepSeek-V3's acceptance: 1.85 tokens per step, and the figures move with it
    _set(page, "serving", "draft_tokens", "1")
    want = webapi.run(
        "serving", {"request_rate": 8, "ttft_ms": 200, "tpot_ms": 25, "draft_tokens": 1}
    )
    assert "1.85" in _out(page, "speculative")
    assert _out(page, "load_tpot") == _ms(want["load"]["tpot_s"], want["accuracy"]["decode"])
    # the interactivity table: one row per point, USD per million tokens rented and owned
    rows = root.locator("table.calc-curve tbody tr")
    assert rows.count() == len(want["curve"])
    last = rows.nth(rows.count() - 1).locator("td")
    own = want["curve"][-1]["own_usd_per_million_tokens"]
    assert last.nth(4).inner_text() == numfmt.number(own, 3, "en", trim=True)
    assert page.errors == []


def test_new_fields_errors_in_the_pages_language(page, site_server):
    _open(page, site_server, "az", "serving")
    _set(page, "serving", "request_rate", "sürətli")
    err = page.locator('.calc-err[data-err="request_rate"]')
    assert err.inner_text() == STRINGS["az"]["err.field.not_number"].replace("{field}", "")
    _set(page, "serving", "request_rate", "")
    assert err.inner_text() == ""
    # disaggregated pools need both limits: said at the TTFT field
    _set(page, "serving", "gpus", "8")
    _set(page, "serving", "pools", "disaggregated")
    ttft = page.locator('.calc-err[data-err="ttft_ms"]')
    assert ttft.inner_text() == STRINGS["az"]["err.disagg.needs_limits"]
    _set(page, "serving", "ttft_ms", "500")
    _set(page, "serving", "tpot_ms", "30")
    assert ttft.inner_text() == ""
    assert _out(page, "disagg_prefill") and _out(page, "disagg_decode")
    assert page.errors == []


def _tick(page, name: str, on: bool) -> None:
    """Set one of the serving form's checkboxes and wait until the result has settled."""
    root = page.locator('.calc[data-calc="serving"]')
    before = int(root.get_attribute("data-updates") or 0)
    box = root.locator(f'input[type="checkbox"][name="{name}"]')
    box.check() if on else box.uncheck()
    page.wait_for_function(
        "([sel, n]) => { const r = document.querySelector(sel);"
        " return Number(r.dataset.updates || 0) > n && r.dataset.busy === '0'; }",
        arg=['.calc[data-calc="serving"]', before],
        timeout=20_000,
    )


def test_engine_settings_checkboxes_in_the_pages_language(page, site_server):
    """The engine settings on the form: KV blocks on demand without a load is refused at its
    checkbox in the page's language, and with a request rate gives CPython's load; CUDA graphs
    off gives CPython's TPOT and the note with the fitted host time from the result."""
    _open(page, site_server, "az", "serving")
    root = page.locator('.calc[data-calc="serving"]')
    assert root.locator('input[name="cuda_graphs"]').is_checked()
    assert not root.locator('input[name="kv_on_demand"]').is_checked()
    _tick(page, "kv_on_demand", True)
    err = page.locator('.calc-err[data-err="kv_on_demand"]')
    assert err.inner_text() == STRINGS["az"]["err.serving.flag_needs_load"]
    _set(page, "serving", "request_rate", "6")
    assert err.inner_text() == ""
    _tick(page, "cuda_graphs", False)
    want = webapi.run("serving", {"request_rate": 6, "kv_on_demand": True, "cuda_graphs": False})
    tpot = numfmt.number(want["load"]["tpot_s"] * 1e3, 1, "az", trim=True)
    assert _out(page, "load_tpot").startswith(tpot + " ")
    ms = numfmt.number(want["engine_settings"]["eager_iteration_ms"], 1, "az", trim=True)
    assert _out(page, "eager") == STRINGS["az"]["calc.sv.eager"].replace("{ms}", ms)
    kv = numfmt.number(want["engine_settings"]["kv_on_demand_concurrency"], 0, "az")
    assert _out(page, "kv_on_demand_limit") == kv
    assert "serving.cuda_graphs=0" in page.url and "serving.kv_on_demand=1" in page.url
    # expert parallelism does not take them: said at the checkbox
    _set(page, "serving", "model", "mixtral-8x7b")
    _set(page, "serving", "gpus", "8")
    _set(page, "serving", "ep", "8")
    assert (
        page.locator('.calc-err[data-err="cuda_graphs"]').inner_text()
        == (STRINGS["az"]["err.serving.flag_needs_plain"])
    )
    assert page.errors == []
