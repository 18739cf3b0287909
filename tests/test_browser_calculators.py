"""The calculators in real headless Chromium (Debian's /usr/bin/chromium through Playwright):
filled inputs give the numbers CPython's advisor.webapi gives; bad inputs show the localised
message next to the field and the page keeps working; only the site's origin is requested;
instant navigation re-wires the page; screenshots of every calculator in both languages go to
out/screenshots/."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest

from advisor import webapi
from advisor.core import numfmt, yamlsafe

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "out" / "screenshots"
CALCS = ("vram", "budget", "picker", "roofline", "serving", "cluster")
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
    # the memory model's measured band, as CPython reports it
    band = page.locator('[data-out="mband"]').inner_text()
    assert f"{want['memory_accuracy']['n']} measured PyTorch runs" in band
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


def _result_html(page, calc: str) -> str:
    """The result's HTML with every link's address resolved (Material makes the prerendered
    page's relative links absolute; the browser's renderer writes them relative)."""
    return page.locator(f'.calc[data-calc="{calc}"] .calc-result').evaluate(
        "el => { const c = el.cloneNode(true);"
        " c.querySelectorAll('a[href]').forEach((a) => a.setAttribute('href', a.href));"
        " return c.innerHTML; }"
    )


@pytest.mark.parametrize(
    "lang,calc,name,value,key,params",
    [
        ("en", "vram", "batch", "-1", "err.field.too_small", {"minimum": "1"}),
        ("az", "vram", "batch", "", "err.field.required", {}),
        ("en", "vram", "batch", "99999999", "err.field.too_large", {"maximum": "65536"}),
        ("az", "budget", "utilisation", "2", "err.field.too_large", {"maximum": "1"}),
        ("en", "serving", "input_tokens", "-1", "err.field.too_small", {"minimum": "1"}),
        ("az", "serving", "ttft_ms", "abc", "err.field.not_number", {}),
        ("az", "cluster", "deadline_days", "0", "err.field.positive", {}),
        ("en", "cluster", "max_gpus", "99999", "err.field.too_large", {"maximum": "16384"}),
    ],
)
def test_bad_input_shows_localised_error_and_recovers(
    browser_page, site_server, lang, calc, name, value, key, params
):
    page = browser_page
    _open(page, site_server, lang, calc)
    good = _result_html(page, calc)
    _set(page, calc, name, value)
    msg = STRINGS[lang][key]
    for k, v in params.items():
        msg = msg.replace("{" + k + "}", v)
    assert page.locator(f'.calc-err[data-err="{name}"]').inner_text() == msg
    # the page keeps working: a valid value clears the error and updates the result
    default = str(webapi.DEFAULTS[calc][name])
    _set(page, calc, name, default)
    assert page.locator(f'.calc-err[data-err="{name}"]').inner_text() == ""
    assert _result_html(page, calc) == good


def _band_en(result: dict, kind: str) -> str:
    """The error band's text as the page prints it (templates/i18n/en.yaml calc.band)."""
    a = result["accuracy"][kind]
    return (
        STRINGS["en"]["calc.band"]
        .replace("{median}", numfmt.percent(a["median_abs_error"], 0, "en"))
        .replace("{worst}", numfmt.percent(a["worst_abs_error"], 0, "en"))
        .replace("{n}", numfmt.number(a["n"], 0, "en"))
    )


def test_vram_qlora_defaults_to_checkpointing_and_says_so(browser_page, site_server):
    """QLoRA of a 70B model at batch 1: the tools' default (full checkpointing) gives the figure
    users expect, and the note next to it says it is the default, in the page's language."""
    page = browser_page
    params = {"model": "llama-3.1-70b", "task": "qlora", "seq": 2048}
    want = webapi.run("vram", params)
    assert want["checkpointing"] == "full" and want["checkpointing_default"]
    for lang, gib in (("en", _gib_en), ("az", lambda b: _gib_en(b).replace(".", ","))):
        _open(page, site_server, lang, "vram")
        for name, value in params.items():
            _set(page, "vram", name, value)
        assert page.locator('[data-out="total"]').inner_text() == gib(want["total_bytes"])
        note = _out(page, "checkpointing")
        assert STRINGS[lang]["calc.o.full"] in note
        assert STRINGS[lang]["calc.ck_default_adapter"] in note
    _set(page, "vram", "checkpointing", "none")
    asked = webapi.run("vram", {**params, "checkpointing": "none"})
    assert page.locator('[data-out="total"]').inner_text() == _gib_en(asked["total_bytes"]).replace(
        ".", ","
    )
    assert STRINGS["az"]["calc.ck_default_adapter"] not in _out(page, "checkpointing")


def _out(page, name: str) -> str:
    return page.locator(f'[data-out="{name}"]').inner_text()


def _assert_outs(page, want: dict) -> None:
    """Each named output on the page shows the text CPython's result gives it."""
    for name, text in want.items():
        assert _out(page, name) == text, name


def _pm(band: dict) -> str:
    """render.mjs `pm`: the median error and the worst beside it (issue 38: never a bare
    ±median)."""
    med = numfmt.percent(band["median_abs_error"], 0, "en")
    return f"±{med} (worst ±{numfmt.percent(band['worst_abs_error'], 0, 'en')})"


def _serving_best(result: dict) -> dict:
    b = result["best"]
    pm = lambda kind: _pm(result["accuracy"][kind])  # noqa: E731
    return {
        "best_tokens_s": f"{numfmt.number(b['tokens_per_s'], 0, 'en', trim=True)} {pm('serving')}",
        "best_concurrency": numfmt.number(b["concurrency"], 0, "en"),
        "best_ttft": f"{numfmt.number(b['ttft_s'] * 1e3, 1, 'en', trim=True)} {pm('prefill')}",
        "best_tpot": f"{numfmt.number(b['tpot_s'] * 1e3, 1, 'en', trim=True)} {pm('decode')}",
        "kv_limit": numfmt.number(result["kv_limited_concurrency"], 0, "en"),
    }


def test_serving_equals_cpython_with_error_bands(browser_page, site_server):
    page = browser_page
    _open(page, site_server, "en", "serving")
    # the prerendered default equals CPython's default, with the measured error bands
    want = webapi.run("serving", {})
    _assert_outs(page, _serving_best(want))
    band = _out(page, "band")
    for kind in ("decode", "prefill", "serving"):
        assert _band_en(want, kind) in band, kind
    assert page.locator('.calc-band a[href$="methodology/#time-validation"]').count() == 1
    rows = page.locator('.calc[data-calc="serving"] table.calc-main tbody tr')
    assert rows.count() == len(want["points"])
    assert page.locator("svg [data-out=best_mark]").count() == 1
    # an input changes the curve as in CPython; a TPOT limit moves the best point
    _set(page, "serving", "input_tokens", "4096")
    _set(page, "serving", "tpot_ms", "20")
    want = webapi.run("serving", {"input_tokens": 4096, "tpot_ms": 20})
    _assert_outs(page, _serving_best(want))
    assert rows.count() == len(want["points"])
    assert "serving.input_tokens=4096" in page.url and "serving.tpot_ms=20" in page.url
    # an impossible limit: no best point, said in words
    _set(page, "serving", "tpot_ms", "0.001")
    assert _out(page, "best_tokens_s") == STRINGS["en"]["calc.sv.none"]
    # an error that names another field than the one typed in
    _set(page, "serving", "tpot_ms", "")
    _set(page, "serving", "tensor_parallel", "2")
    err = STRINGS["en"]["err.gpus.tp_divides"].replace("{gpus}", "1")
    assert page.locator('.calc-err[data-err="gpus"]').inner_text() == err.replace(
        "{tensor_parallel}", "2"
    )


def _cluster_head(result: dict) -> dict:
    c = result["chosen"]
    pm = _pm(result["accuracy"]["training"])
    return {
        "gpus": numfmt.number(c["gpus"], 0, "en"),
        "nodes": numfmt.number(c["nodes"], 0, "en"),
        "layout": c["label"].replace(" x ", " × "),
        "days": f"{numfmt.number(c['days'], 1, 'en', trim=True)} {pm}",
    }


def test_cluster_equals_cpython_and_the_picker_links_to_it(browser_page, site_server):
    page = browser_page
    _open(page, site_server, "en", "cluster")
    want = webapi.run("cluster", {})
    _assert_outs(page, _cluster_head(want))
    assert _out(page, "reason") == STRINGS["en"]["calc.cl.r.deadline"]
    assert _band_en(want, "training") in _out(page, "band")
    rows = page.locator('.calc[data-calc="cluster"] table.calc-main tbody tr')
    assert rows.count() == len(want["options"])
    # a longer deadline: fewer GPUs, as in CPython
    _set(page, "cluster", "deadline_days", "90")
    want = webapi.run("cluster", {"deadline_days": 90})
    _assert_outs(page, _cluster_head(want))
    # a deadline nothing meets: no plan, the reason translated
    _set(page, "cluster", "deadline_days", "0.01")
    want = webapi.run("cluster", {"deadline_days": 0.01})
    assert want["chosen"] is None
    assert _out(page, "gpus") == STRINGS["en"]["calc.cl.none"]
    assert _out(page, "reason").startswith(STRINGS["en"]["calc.cl.r.too_slow"].split("{")[0])
    # the picker, for a training task, links to the cluster plan for its model
    _open(page, site_server, "en", "picker")
    _set(page, "picker", "model", "llama-3.1-70b")
    _set(page, "picker", "task", "train")
    page.locator('[data-out="cluster_link"]').click()
    page.wait_for_selector('.calc[data-calc="cluster"][data-ready="1"][data-busy="0"]')
    page.wait_for_function("() => Number(document.querySelector('.calc').dataset.updates) >= 1")
    assert page.locator('[name="model"]').input_value() == "llama-3.1-70b"
    want = webapi.run("cluster", {"model": "llama-3.1-70b"})
    _assert_outs(page, _cluster_head(want))


def test_every_time_figure_carries_its_band(browser_page, site_server):
    """Budget, picker and roofline print the measured error band of their times and rates."""
    page = browser_page
    for calc, params in (("budget", {}), ("picker", {}), ("roofline", {})):
        _open(page, site_server, "en", calc)
        want = webapi.run(calc, params)
        band = _out(page, "band")
        for kind in want["accuracy"]:
            assert _band_en(want, kind) in band, (calc, kind)


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
    # this page's requests only (an earlier test's page may have released search after its 3 s)
    page.goto("about:blank")
    since = len(browser_page.requests)
    _open(page, site_server, "en", "picker")
    assert page.evaluate("window.__calcBoot && window.__calcBoot.worker !== null")
    page.wait_for_timeout(300)
    searches = [u for u in browser_page.requests[since:] if "/workers/search" in u]
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


def test_plain_start_as_a_phone_gets_it(chromium, site_server):
    """The start a phone's first visit gets (no snapshot: Python starts from the compiled
    standard library, the compiled copies of the lock's wheels are installed sha256-checked, the catalog is
    built from its JSON documents) gives CPython's numbers; on a host without brotli copies every
    zip comes as its NAME.zip.gz (the probe zip-encoding.zip, asked by the page and the worker,
    excepted);
    the report-only wheels (Jinja2, MarkupSafe, PyYAML) are fetched only when a report is asked
    for, and then the report is built."""
    ctx = chromium.new_context()
    requested: list[str] = []
    ctx.on("request", lambda r: requested.append(r.url))
    page = ctx.new_page()
    try:
        page.goto(f"{site_server}en/calculators/vram/?calc-start=plain")
        page.wait_for_selector('.calc[data-calc="vram"][data-ready="1"]', timeout=60_000)
        assert page.locator(".calc").get_attribute("data-mode") == "plain"
        _set(page, "vram", "batch", "3")
        want = webapi.run("vram", {"batch": 3})
        assert page.locator('[data-out="total"]').inner_text() == _gib_en(want["total_bytes"])
        wheels = sorted(
            u.rsplit("/", 1)[1].split("-")[0] for u in requested if u.endswith(".pyc.zip.gz")
        )
        assert wheels == ["advisor"], requested
        assert any(u.endswith("/python_stdlib.zip.gz") for u in requested), requested
        page.goto(f"{site_server}en/reports/new/?calc-start=plain")
        page.wait_for_selector("#ar-form[data-engine=ready]", timeout=60_000)
        page.select_option("#ar-example", "university-lab")
        page.click("#ar-build")
        page.wait_for_selector("#ar-output .ar", timeout=30_000)
        for name in ("jinja2", "markupsafe", "pyyaml"):
            assert any(u.endswith(".pyc.zip.gz") and f"/{name}-" in u for u in requested), name
        as_is = [u for u in requested if u.endswith((".whl", ".zip"))]
        assert {u.rsplit("/", 1)[1] for u in as_is} == {"zip-encoding.zip"}, as_is
    finally:
        ctx.close()


def test_a_host_with_brotli_copies_sends_the_zips_brotli_compressed(chromium, br_site_server):
    """Where the host sends NAME.br for NAME (`Content-Encoding: br`, as nginx brotli_static),
    the worker sees it on zip-encoding.zip and asks for every zip by its own name, never for a
    NAME.zip.gz; the page notes the answer, so the next start skips the probe. Both starts give
    CPython's numbers."""
    ctx = chromium.new_context()
    responses = []
    ctx.on("response", lambda r: responses.append((r.url, r.headers.get("content-encoding"))))
    page = ctx.new_page()
    try:
        for start in ("plain", "snapshot"):
            responses.clear()
            page.goto(f"{br_site_server}en/calculators/vram/?calc-start={start}")
            page.wait_for_selector('.calc[data-calc="vram"][data-ready="1"]', timeout=60_000)
            assert page.locator(".calc").get_attribute("data-mode") == start
            _set(page, "vram", "batch", "3")
            want = webapi.run("vram", {"batch": 3})
            assert page.locator('[data-out="total"]').inner_text() == _gib_en(want["total_bytes"])
            zips = {u.rsplit("/", 1)[1]: enc for u, enc in responses if ".zip" in u}
            assert not [z for z in zips if z.endswith(".gz")], zips
            assert zips["python_stdlib.zip"] == "br", zips
            if start == "plain":  # the first start asks the probe; the worker's answer is noted
                assert zips["zip-encoding.zip"] == "br", zips
                assert zips["advisor-0.1.0-py3-none-any.pyc.zip"] == "br", zips
                assert page.evaluate("localStorage.getItem('calc.zipbr')") == "1"
            else:  # the next start takes the note and does not ask again
                assert "zip-encoding.zip" not in zips, zips
    finally:
        ctx.close()


def test_plain_start_refuses_a_wheel_that_is_not_the_locks(chromium, site_server):
    """A compiled wheel whose bytes differ from advisor-lock.json's sha256 is not installed:
    the calculator says it could not start, naming the file, and never becomes ready."""
    ctx = chromium.new_context()

    def tampered(route):  # one byte more in the zip, gzip-compressed again
        resp = route.fetch()
        route.fulfill(response=resp, body=gzip.compress(gzip.decompress(resp.body()) + b"\0"))

    ctx.route("**/advisor-*-py3-none-any.pyc.zip.gz", tampered)
    page = ctx.new_page()
    try:
        page.goto(f"{site_server}en/calculators/vram/?calc-start=plain")
        page.wait_for_function(
            "() => /sha256/.test(document.querySelector('.calc').textContent)", timeout=60_000
        )
        text = page.locator(".calc").inner_text()
        assert "could not start" in text and "advisor-0.1.0-py3-none-any.pyc.zip" in text
        assert page.locator(".calc").get_attribute("data-ready") != "1"
    finally:
        ctx.unroute_all(behavior="ignoreErrors")
        ctx.close()


KEPT_JS = """async () => {
  const c = await caches.open("gpu-advisor-snapshot");
  const r = await c.match(new URL("/assets/pyodide/advisor.snapshot.gz", location.href).href);
  return r ? [r.headers.get("x-snapshot-tag"), (await r.arrayBuffer()).byteLength] : null;
}"""


def _kept(page, timeout_s: float = 30.0):
    """The Cache Storage entry [tag, bytes] once the worker has written a whole one (it waits for
    the reader to pause: worker.mjs keepWhenIdle)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        kept = page.evaluate(KEPT_JS)
        if kept and kept[1] > 10_000_000:
            return kept
        time.sleep(0.25)
    raise AssertionError(f"no snapshot kept in Cache Storage after {timeout_s} s: {kept}")


def test_snapshot_start_reuses_the_inflated_snapshot_and_survives_a_damaged_one(
    chromium, site_server
):
    """After a snapshot start the worker keeps the inflated snapshot in Cache Storage, tagged with
    the response's Last-Modified and length; the next start reads it from there (worker.mjs
    snapshotMemory) and gives CPython's numbers; a damaged entry with the right tag is ignored:
    the start inflates the gzip and writes the entry anew."""
    ctx = chromium.new_context()
    page = ctx.new_page()
    url = f"{site_server}en/calculators/vram/"
    ready = '.calc[data-calc="vram"][data-ready="1"]'
    want = _gib_en(webapi.run("vram", {"batch": 3})["total_bytes"])
    try:
        page.goto(url)
        page.wait_for_selector(ready, timeout=60_000)
        assert page.evaluate("() => window.__calcTimings.chosen") == "snapshot"
        assert page.evaluate("() => window.__calcTimings.snapshot_from") is None
        tag, size = _kept(page)
        assert tag and size > 10_000_000, (tag, size)

        page.reload()
        page.wait_for_selector(ready, timeout=60_000)
        assert page.evaluate("() => window.__calcTimings.snapshot_from") == "cache-storage"
        _set(page, "vram", "batch", "3")
        assert page.locator('[data-out="total"]').inner_text() == want

        page.evaluate(
            """async (tag) => { const c = await caches.open("gpu-advisor-snapshot");
              await c.put(new URL("/assets/pyodide/advisor.snapshot.gz", location.href).href,
                new Response(new Uint8Array(64), { headers: { "x-snapshot-tag": tag } })); }""",
            tag,
        )
        page.reload()
        page.wait_for_selector(ready, timeout=60_000)
        assert page.evaluate("() => window.__calcTimings.snapshot_from") is None
        _set(page, "vram", "batch", "3")
        assert page.locator('[data-out="total"]').inner_text() == want
        assert _kept(page)[1] > 10_000_000  # written anew
    finally:
        ctx.close()
