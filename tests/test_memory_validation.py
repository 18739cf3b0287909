"""advisor.memory.estimate against real PyTorch allocations (bench/memory_validation.py): each case's
peak_allocated_bytes within 3 % of the measured peak, weights / gradients / optimizer states /
KV cache within 1 %."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from advisor.arch.models import from_hf_config, param_count  # noqa: E402
from advisor.memory import estimate as memory  # noqa: E402
from bench import memory_validation as mv  # noqa: E402

pytestmark = pytest.mark.torch

CASES = {c["name"]: c for c in mv.CASES}


@pytest.mark.parametrize("name", mv.QUICK)
def test_case_within_bounds(name):
    if name in mv.NEEDS_BNB:
        pytest.importorskip("bitsandbytes")
    result = mv.run_case(CASES[name])
    assert "peak_allocated_bytes" in result["components"]
    assert mv.within_bounds(result) == []


def test_tracker_counts_live_bytes():
    tr = mv.MemoryTracker()
    with tr:
        a = torch.empty(1000, dtype=torch.float32)
        b = a.view(10, 100)  # a view: no new storage
        c = torch.empty(500, dtype=torch.bfloat16)
        assert tr.current == 4000 + 1000
        del a, b
        assert tr.current == 1000
        del c
    assert tr.current == 0 and tr.peak == 5000


@pytest.mark.parametrize("family", sorted(mv.TINY))
def test_param_shapes_match_torch(family):
    spec = from_hf_config(mv.TINY[family], name=family)
    attention = "eager" if family in ("gemma2", "gpt_oss") else "sdpa"  # no SDPA path there
    _, model = mv.build(mv.case("x", family, "train", attention=attention))
    shapes = sorted(math.prod(p.shape) for p in model.parameters())
    assert sum(shapes) == param_count(spec)
    assert sum(math.prod(s) for s in memory.param_shapes(spec)) == param_count(spec)


def test_committed_validation_meets_the_target():
    """The committed bench output (make bench-memory): every case within its bounds, at least 45
    cases over 12 families, each with its measurement method."""
    import json

    doc = json.loads(mv.OUT.read_text())
    cases = doc["cases"]
    assert len(cases) >= 45
    assert len({c["family"] for c in cases}) >= 12
    assert {c["case"] for c in cases} == {c["name"] for c in mv.CASES}
    for c in cases:
        assert c["method"]
        assert mv.within_bounds(c) == [], c["case"]
    assert doc["bounds"]["peak_allocated_bytes"] == mv.PEAK_TOLERANCE


def test_fused_lora_targets_need_their_family():
    from advisor.core.errors import AdvisorError

    spec = from_hf_config(mv.TINY["llama"], name="llama")
    with pytest.raises(AdvisorError) as e:
        memory.training_memory(
            memory.TrainingSetup(spec, 1, 16, lora_rank=8, lora_targets=("qkv_proj",))
        )
    assert e.value.key == "lora.target_family"
    phi3 = from_hf_config(mv.TINY["phi3"], name="phi3")
    fused = memory.lora_params(phi3, 8, ("qkv_proj",))
    assert fused == 8 * (128 + 3 * 128) * phi3.num_layers


def test_falcon_lora_target_is_named_as_peft_names_it():
    """Falcon's fused projection is `query_key_value` (modeling_falcon.py FalconAttention; peft's
    default target for the family); Phi-3's name is refused on it, and the other way round."""
    from advisor.core.errors import AdvisorError
    from advisor.data.catalog import load_catalog

    falcon = load_catalog().model("falcon-40b").spec
    a = falcon.stack[0].attention
    got = memory.lora_params(falcon, 8, ("query_key_value",))
    assert got == 8 * (falcon.hidden_size + a.q_dim + 2 * a.kv_dim) * falcon.num_layers
    with pytest.raises(AdvisorError) as e:
        memory.training_memory(
            memory.TrainingSetup(falcon, 1, 16, lora_rank=8, lora_targets=("qkv_proj",))
        )
    assert e.value.key == "lora.target_family"
    phi3 = from_hf_config(mv.TINY["phi3"], name="phi3")
    with pytest.raises(AdvisorError):
        memory.training_memory(
            memory.TrainingSetup(phi3, 1, 16, lora_rank=8, lora_targets=("query_key_value",))
        )
