"""The guide's figures (hooks/facts/): finite, consistent with the prose's claims, and equal to
what the built FAQ pages show in both languages."""

from __future__ import annotations

import html
import inspect
import math
import re
from collections.abc import Mapping
from pathlib import Path

import jinja2
import pytest

import hooks.facts as facts

ROOT = Path(__file__).resolve().parent.parent


SKIP = {"catalog", "model", "gpu", "finite", "validation", "root", "use_catalog", "reset"}


def _zero_arg_facts():
    """Public fact functions (plain or cached) callable without arguments."""
    out = []
    for name, obj in vars(facts).items():
        fn = getattr(obj, "__wrapped__", obj)
        if name.startswith("_") or name in SKIP or not inspect.isfunction(fn):
            continue
        if not fn.__module__.startswith(facts.__name__ + "."):
            continue
        params = inspect.signature(fn).parameters.values()
        if all(p.default is not inspect.Parameter.empty for p in params):
            out.append(name)
    return sorted(out)


def _numbers(value, path="") -> list[tuple[str, float]]:
    """Every number inside a fact's result (mappings and tuples walked)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [(path, value)]
    if isinstance(value, Mapping):
        return [n for k, v in value.items() for n in _numbers(v, f"{path}.{k}")]
    if isinstance(value, (tuple, list)):
        return [n for i, v in enumerate(value) for n in _numbers(v, f"{path}[{i}]")]
    raise AssertionError(f"{path}: unexpected type {type(value).__name__}")


@pytest.mark.parametrize("name", _zero_arg_facts())
def test_fact_returns_finite_numbers(name):
    result = getattr(facts, name)()
    nums = _numbers(result, name)
    assert nums or result == (), f"{name} returned no numbers"
    bad = [(p, v) for p, v in nums if not math.isfinite(v)]
    assert not bad, bad


def test_claims_the_prose_makes():
    """Sentences the pages state in words ("no", "fits", "far too small") hold for the numbers."""
    ft = facts.full_training()
    assert ft["times_rule"] > 2, "VRAM page: the 30-40 % rule is far too small for full training"
    assert ft["total_bytes"] > facts.card("h100")["memory_bytes"], (
        "VRAM page: the 8B full fine-tune exceeds one H100"
    )
    assert 16 <= ft["states_bytes_per_param"] <= 18, "outline: 16-18 bytes per parameter"
    assert facts.rule_inference()["ratio_to_weights"] < 1.4, "rule roughly right for inference"
    q = facts.qlora_24gb()
    assert q["q8"]["fits"] and not q["q70"]["fits"], "FAQ: QLoRA 8B fits 24 GB, 70B does not"
    q70 = facts.quant_70b()
    assert q70["fp8"] <= q70["h100_bytes"] < q70["bf16"], "70B fits one 80 GB card from FP8 down"
    assert q70["awq"] > q70["rtx4090_bytes"], "70B does not fit 24 GB even in 4 bits"
    f = facts.flagships()
    assert f["llama70b_bf16_bytes"] < f["mi300x"]["memory_bytes"], "70B BF16 fits one MI300X"
    assert f["h200_mem_x"] > 1 and f["b200_bf16_x"] > 1
    kv = facts.kv_table()
    assert kv["llama8b"] == 128 * 1024, "Llama 3 8B: 128 KiB per token in BF16 (GQA 32/8)"
    assert kv["gqa_factor"] == kv["heads_8b"] / kv["kv_heads_8b"]
    mo = facts.moe()
    assert mo["active"] < mo["total"]
    db = facts.decode_bound()
    assert db["intensity"] < db["ridge_h100"], "batch-1 decode is memory-bound"
    ic = facts.interconnect()
    assert ic["nvlink_gb_per_s"] > ic["pcie_gb_per_s"] and ic["pcie_s"] > ic["nvlink_s"]
    z = facts.sharding_8gpu()
    assert z["ddp"]["total_bytes"] > z["zero1"]["total_bytes"] > z["zero2"]["total_bytes"]
    assert z["zero2"]["total_bytes"] > z["zero3"]["total_bytes"]


def test_validation_rows_match_the_committed_file():
    doc = facts.validation()
    rows = facts.validation_rows()
    if doc is None:
        assert rows == ()
        return
    assert len(rows) == len(doc["cases"])
    for row, case in zip(rows, doc["cases"], strict=True):
        peak = case["components"]["peak_allocated_bytes"]
        assert row["estimated"] == peak["estimate"] and row["measured"] == peak["measured"]
        assert math.isclose(row["error"], peak["error"], rel_tol=1e-9, abs_tol=1e-12)


# ------------------------------------------------------------------ the built FAQ pages

EXPR = re.compile(r"\{\{(.*?)\}\}", re.S)
ANCHOR = re.compile(r"\{ #([a-z0-9-]+) \}")


def _expected_values(lang: str) -> list[str]:
    """Render faq.md with every `{{ expr }}` wrapped in markers; return the formatted values."""
    from hooks import templating

    src = (ROOT / "docs" / lang / "faq.md").read_text(encoding="utf-8")
    marked = EXPR.sub(lambda m: '{{ "\\x02" ~ (' + m.group(1) + ') ~ "\\x03" }}', src)
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(templating.make_filters(lang, facts.catalog().currency))
    text = env.from_string(marked).render(lang=lang, facts=facts)
    return re.findall("\x02(.*?)\x03", text, re.S)


def _page_text(built_site: Path, lang: str) -> str:
    page = built_site / ("faq" if lang == "az" else "en/faq") / "index.html"
    return html.unescape(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", ["az", "en"])
def test_every_faq_number_is_on_the_built_page(built_site, lang):
    values = [v for v in _expected_values(lang) if re.search(r"\d", v)]
    assert len(values) > 100, "the FAQ cites advisor's figures"
    page = _page_text(built_site, lang)
    missing = [v for v in values if html.unescape(v) not in page]
    assert not missing, f"{lang}/faq: not on the built page: {missing[:10]}"


def test_faq_anchors_are_the_same_in_both_languages(built_site):
    az = ANCHOR.findall((ROOT / "docs/az/faq.md").read_text(encoding="utf-8"))
    en = ANCHOR.findall((ROOT / "docs/en/faq.md").read_text(encoding="utf-8"))
    assert az == en and len(az) >= 17
    for lang in ("az", "en"):
        page = _page_text(built_site, lang)
        for slug in az:
            assert f'id="{slug}"' in page, f"{lang}/faq: no section #{slug}"
