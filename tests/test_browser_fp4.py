"""Issue 34 in real headless Chromium: the weights and KV selects of the VRAM, serving and
roofline calculators follow the chosen card. A format the card's FP4 tensor cores take is
offered plainly, one an engine dequantises there says so (in the page's language), and one
the card has no path for is not offered (advisor.data.support.fp4_choices)."""

from __future__ import annotations

import pytest

from advisor.data import support
from advisor.data.catalog import load_catalog
from tests.test_browser_calculators import STRINGS, _open, _set

pytestmark = pytest.mark.browser

CAT = load_catalog()


@pytest.fixture(scope="module")
def page(site_server, chromium):
    p = chromium.new_page(viewport={"width": 1200, "height": 1600})
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.errors = errors
    yield p
    p.context.close()


def _options(page, calc: str, name: str) -> dict[str, str]:
    sel = page.locator(f'.calc[data-calc="{calc}"] select[name="{name}"] option')
    return dict(zip(sel.evaluate_all("os => os.map(o => o.value)"),
                    sel.evaluate_all("os => os.map(o => o.textContent)"), strict=True))  # fmt: skip


def _dequantised(lang: str, fmt: str) -> str:
    return STRINGS[lang]["calc.o.fp4_dequantised"].replace(
        "{label}", STRINGS[lang][f"calc.o.{fmt}"]
    )


def test_serving_selects_follow_the_card(page, site_server):
    _open(page, site_server, "en", "serving")
    # H100: no FP4 tensor cores; vLLM's Marlin dequantises both formats; no FP4 KV cache
    assert support.fp4_choices(CAT.gpu("h100-sxm"))["weights"] == {
        "nvfp4": "dequantised",
        "mxfp4": "dequantised",
    }
    w = _options(page, "serving", "weights")
    assert w["nvfp4"] == _dequantised("en", "nvfp4") and w["mxfp4"] == _dequantised("en", "mxfp4")
    assert "bf16" in w and "nvfp4" not in _options(page, "serving", "kv_dtype")
    # B200 takes both natively, and an NVFP4 KV cache
    _set(page, "serving", "gpu", "b200")
    w = _options(page, "serving", "weights")
    assert (w["nvfp4"], w["mxfp4"]) == (
        STRINGS["en"]["calc.o.nvfp4"],
        STRINGS["en"]["calc.o.mxfp4"],
    )
    assert "nvfp4" in _options(page, "serving", "kv_dtype")
    _set(page, "serving", "weights", "nvfp4")
    root = page.locator('.calc[data-calc="serving"]')
    assert root.get_attribute("data-state") == "ok"
    # MI355X: MXFP4 only; the chosen NVFP4 is no longer offered, and the select falls back
    _set(page, "serving", "gpu", "mi355x")
    w = _options(page, "serving", "weights")
    assert "nvfp4" not in w and w["mxfp4"] == STRINGS["en"]["calc.o.mxfp4"]
    assert root.locator('select[name="weights"]').input_value() == "bf16"
    assert root.get_attribute("data-state") == "ok"
    # Gaudi 3: no FP4 at all
    _set(page, "serving", "gpu", "gaudi3")
    assert not {"nvfp4", "mxfp4"} & set(_options(page, "serving", "weights"))
    # the local runtimes' formats follow the card too (support.form_paths): llama.cpp has no
    # Gaudi backend, MLX runs on Apple only
    assert not {"q8_0", "q4_k_m", "mlx-4bit"} & set(_options(page, "serving", "weights"))
    _set(page, "serving", "gpu", "m3-ultra")
    assert {"q4_k_m", "mlx-4bit"} <= set(_options(page, "serving", "weights"))
    assert page.errors == []


def test_vram_and_roofline_selects_in_azerbaijani(page, site_server):
    _open(page, site_server, "az", "vram")
    w = _options(page, "vram", "weights")
    assert w["mxfp4"] == _dequantised("az", "mxfp4")  # default H100
    _set(page, "vram", "gpu", "mi300x")  # AMD Quark dequantises MXFP4 only
    w = _options(page, "vram", "weights")
    assert "nvfp4" not in w and w["mxfp4"] == _dequantised("az", "mxfp4")
    _open(page, site_server, "az", "roofline")
    _set(page, "roofline", "gpu", "v100-sxm2-32gb")
    assert not {"nvfp4", "mxfp4"} & set(_options(page, "roofline", "weights"))
    _set(page, "roofline", "gpu", "b200")
    assert _options(page, "roofline", "weights")["nvfp4"] == STRINGS["az"]["calc.o.nvfp4"]
    assert page.errors == []


def test_a_link_with_a_card_and_its_format_opens_with_both(page, site_server):
    page.goto(f"{site_server}en/calculators/serving/?serving.gpu=mi355x&serving.weights=mxfp4")
    page.wait_for_selector('.calc[data-calc="serving"][data-ready="1"]', timeout=30_000)
    root = page.locator('.calc[data-calc="serving"]')
    page.wait_for_function(
        "() => document.querySelector('.calc[data-calc=\"serving\"]').dataset.busy === '0'"
    )
    assert root.locator('select[name="gpu"]').input_value() == "mi355x"
    assert root.locator('select[name="weights"]').input_value() == "mxfp4"
    assert "nvfp4" not in _options(page, "serving", "weights")


@pytest.mark.parametrize("lang", ["en", "az"])
def test_serving_says_the_hopper_mxfp4_streaming_rate(page, site_server, lang):
    """Issue 35: MXFP4 on H100 is upcast inside Triton's MoE kernel, whose weights stream at a
    measured 0.571 of the copy bandwidth (efficiency.fp4_weight_stream): the serving calculator
    says so next to the dequantised note, in the page's language; on B200 it does not."""
    _open(page, site_server, lang, "serving")
    _set(page, "serving", "gpu", "h100-sxm")
    _set(page, "serving", "weights", "mxfp4")
    root = page.locator('.calc[data-calc="serving"]')
    # a dense model: the rate is the MoE kernel's, so nothing is said
    _set(page, "serving", "model", "llama-3.1-8b")
    assert root.locator('[data-out="fp4_dequantised"]').count() == 1
    assert root.locator('[data-out="fp4_weight_stream"]').count() == 0
    _set(page, "serving", "model", "gpt-oss-20b")
    assert root.get_attribute("data-state") == "ok"
    note = root.locator('[data-out="fp4_weight_stream"]')
    text = note.text_content()
    head = STRINGS[lang]["calc.sv.fp4_stream"].split("{fraction}")[0].replace("{fmt}", "MXFP4")
    assert text.startswith(head), (text, head)
    assert text.startswith(head) and "PR 9248" in text and "H200" in text
    assert ("0.57" if lang == "en" else "0,57") in text
    _set(page, "serving", "gpu", "b200")
    assert root.locator('[data-out="fp4_weight_stream"]').count() == 0
    assert page.errors == []
