"""advisor.arch.models: ModelSpec from Hugging Face configs, bad input, catalog presets, golden sizes."""

import json
import math

import pytest

from advisor import cli
from advisor.arch.models import (
    active_param_count,
    from_config_file,
    from_config_json,
    from_hf_config,
    param_count,
)
from advisor.core.errors import AdvisorError
from advisor.data.catalog import load_catalog

PRESETS = load_catalog().models
BY_ID = {p.id: p for p in PRESETS}

LLAMA = {
    "model_type": "llama",
    "vocab_size": 1000,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
}


def _err(cfg) -> AdvisorError:
    with pytest.raises(AdvisorError) as info:
        from_hf_config(cfg)
    return info.value


# -- from_hf_config edge cases -------------------------------------------------------------------


def test_llama1_config_without_kv_heads_is_mha():
    cfg = {k: v for k, v in LLAMA.items() if k != "num_key_value_heads"}
    spec = from_hf_config(cfg)
    assert spec.num_kv_heads == 8 and spec.attention_kind == "MHA"


def test_attention_kinds_and_head_dim():
    assert from_hf_config(LLAMA).attention_kind == "GQA"
    mqa = from_hf_config({**LLAMA, "num_key_value_heads": 1})
    assert mqa.attention_kind == "MQA" and mqa.kv_dim == 8
    assert from_hf_config({**LLAMA, "head_dim": 32}).q_dim == 256


def test_family_defaults_follow_transformers_config_classes():
    base = {k: v for k, v in LLAMA.items() if k not in ("num_key_value_heads", "model_type")}
    mistral = from_hf_config({**base, "model_type": "mistral"})
    assert mistral.num_kv_heads == 8 and mistral.sliding_window == 4096
    assert (
        from_hf_config({**base, "model_type": "mistral", "sliding_window": None}).sliding_window
        is None
    )
    gemma = from_hf_config({**base, "model_type": "gemma", "num_attention_heads": 16})
    assert gemma.head_dim == 256 and gemma.tie_word_embeddings
    assert from_hf_config({**LLAMA, "model_type": "qwen2"}).tie_word_embeddings is False


def test_biases_and_tying_change_counts_as_expected():
    h, i, v, layers = 64, 128, 1000, 2
    plain = param_count(from_hf_config(LLAMA))
    biased = param_count(from_hf_config({**LLAMA, "attention_bias": True, "mlp_bias": True}))
    q, kv = 64, 16
    assert biased - plain == layers * ((q + 2 * kv + h) + (2 * i + h))
    tied = param_count(from_hf_config({**LLAMA, "tie_word_embeddings": True}))
    assert plain - tied == v * h


def test_sliding_window_flags():
    qwen = {**LLAMA, "model_type": "qwen2", "sliding_window": 32, "max_window_layers": 1}
    assert from_hf_config(qwen).sliding_window is None  # use_sliding_window absent: unused
    on = from_hf_config({**qwen, "use_sliding_window": True})
    assert on.sliding_window == 32 and on.num_sliding_layers == 1
    assert BY_ID["mistral-7b-v0.1"].spec.sliding_window == 4096
    assert BY_ID["mistral-7b-v0.1"].spec.num_sliding_layers == 32
    assert BY_ID["gemma-2-9b"].spec.num_sliding_layers == 21  # 42 layers, alternating
    assert BY_ID["phi-3-mini-4k"].spec.sliding_window == 2047
    assert BY_ID["llama-3.1-8b"].spec.num_sliding_layers == 0


def test_qwen2_has_qkv_bias_but_no_o_bias():
    spec = from_hf_config({**LLAMA, "model_type": "qwen2"})
    assert spec.qkv_bias and not spec.o_bias


def test_config_file_and_json_text(tmp_path):
    path = tmp_path / "my-model.json"
    path.write_text(json.dumps(LLAMA))
    spec = from_config_file(path)
    assert spec.name == "my-model" and param_count(spec) == param_count(from_hf_config(LLAMA))
    with pytest.raises(AdvisorError) as info:
        from_config_file(tmp_path / "missing.json")
    assert info.value.key == "file.unreadable"


# -- bad configs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "missing", ["hidden_size", "num_hidden_layers", "vocab_size", "model_type"]
)
def test_missing_field_names_it(missing):
    e = _err({k: v for k, v in LLAMA.items() if k != missing})
    assert e.key == "config.missing" and missing in e.field


@pytest.mark.parametrize(
    "field,value,key",
    [
        ("hidden_size", -64, "field.too_small"),
        ("num_hidden_layers", 0, "field.too_small"),
        ("vocab_size", math.nan, "field.not_integer"),
        ("hidden_size", 10**9, "field.too_large"),
        ("intermediate_size", "128", "field.not_integer"),
        ("num_attention_heads", 8.5, "field.not_integer"),
        ("tie_word_embeddings", "false", "field.not_bool"),
    ],
)
def test_bad_sizes_are_rejected(field, value, key):
    e = _err({**LLAMA, field: value})
    assert e.key == key and e.field == f"config.{field}"


def test_unknown_model_type_suggests():
    e = _err({**LLAMA, "model_type": "lama"})
    assert e.key == "config.unknown_model_type" and e.params["suggestions"] == ["llama"]
    assert "qwen3_moe" in e.params["known"] and "deepseek_v3" in e.params["known"]
    assert _err({**LLAMA, "model_type": "gpt-oss"}).params["suggestions"] == ["gpt_oss"]


@pytest.mark.parametrize(
    "model_type", ["qwen2_moe", "deepseek_v2", "qwen3_next", "gemma3n", "qwen3_vl_moe", "phimoe"]
)
def test_unknown_model_type_never_suggests_other_layers(model_type):
    """A type advisor does not read is never matched to one whose layers differ (issue 33: the
    old "did you mean qwen2?" for a Qwen3-MoE config gave a count 89 % low)."""
    e = _err({**LLAMA, "model_type": model_type})
    assert e.key == "config.unknown_model_type" and e.params["suggestions"] == []


def test_heads_not_dividing():
    assert _err({**LLAMA, "num_key_value_heads": 3}).key == "config.kv_heads"
    assert _err({**LLAMA, "num_attention_heads": 7}).key == "config.heads"
    gpt2 = {"model_type": "gpt2", "vocab_size": 100, "n_embd": 64, "n_layer": 1, "n_head": 6}
    assert _err(gpt2).key == "config.heads"


def test_moe_experts_per_token_bounded():
    moe = {**LLAMA, "model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 5}
    assert _err(moe).key == "field.too_large"


@pytest.mark.parametrize("text", ['{"model_type": "llama",', "[1, 2]", "", "null"])
def test_malformed_json_text(text):
    with pytest.raises(AdvisorError) as info:
        from_config_json(text)
    assert info.value.key in ("config.bad_json", "config.not_json", "config.not_object")


# -- catalog presets -----------------------------------------------------------------------------


def test_at_least_twenty_presets_covering_every_family():
    assert len(PRESETS) >= 20
    assert {p.spec.family for p in PRESETS} >= {
        "llama", "mistral", "mixtral", "qwen2", "gemma", "gemma2", "phi3", "gpt2", "bert"
    }  # fmt: skip


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_preset_is_sourced_and_matches_published_size(preset):
    assert preset.source_url.startswith("https://") and len(preset.source_read) == 10
    total, active = param_count(preset.spec), active_param_count(preset.spec)
    if preset.spec.is_moe:
        assert active < total
    else:
        assert active == total
    published = preset.doc.get("published_params")
    if published is not None:
        assert abs(total / published - 1) <= 0.02, (total, published)


def test_golden_published_sizes():
    """Mixtral 8x7B: 46.7B total, 12.9B active per token (Jiang et al. 2024, 'Mixtral of
    Experts', arXiv:2401.04088, section 2); Llama 3.1 8B: 8.03B (model card,
    https://huggingface.co/meta-llama/Llama-3.1-8B)."""
    mixtral = BY_ID["mixtral-8x7b"].spec
    assert round(param_count(mixtral) / 1e9, 1) == 46.7
    assert round(active_param_count(mixtral) / 1e9, 1) == 12.9
    assert round(param_count(BY_ID["llama-3.1-8b"].spec) / 1e9, 2) == 8.03


# -- CLI -----------------------------------------------------------------------------------------


def test_cli_list_json(capsys):
    assert cli.main(["models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    row = next(r for r in rows if r["id"] == "mixtral-8x7b")
    assert row["attention"] == "GQA" and row["active_params"] < row["total_params"]
    assert [r["id"] for r in rows] == [
        i for m in PRESETS for i in (m.id, *(v.id for v in m.variants))
    ]


def test_cli_show_and_errors(capsys, tmp_path):
    assert cli.main(["models", "show", "llama-3.1-8b", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total_params"] == 8_030_261_248 and out["num_kv_heads"] == 8
    assert cli.main(["models", "show", "lama-3.1-8b"]) == 2
    assert "did you mean llama-3.1-8b" in capsys.readouterr().err
    bad = tmp_path / "config.json"
    bad.write_text('{"model_type": "llama"')
    assert cli.main(["models", "show", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}: not valid JSON") and "Traceback" not in err


# -- the layer-list families (advisor/arch/families): bad configs name their field -------------------

QWEN3_MOE = {
    "model_type": "qwen3_moe",
    "vocab_size": 97,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 32,
}
GEMMA3 = {
    "model_type": "gemma3",
    "text_config": {"hidden_size": 64, "num_hidden_layers": 6, "num_attention_heads": 4},
}


@pytest.mark.parametrize(
    "cfg, key, field",
    [
        (
            {**QWEN3_MOE, "num_experts_per_tok": 9},
            "config.experts_per_token",
            "config.num_experts_per_tok",
        ),
        ({**QWEN3_MOE, "num_hidden_layers": 0}, "field.too_small", "config.num_hidden_layers"),
        ({**QWEN3_MOE, "num_experts": "many"}, "field.not_integer", "config.num_experts"),
        ({**QWEN3_MOE, "mlp_only_layers": [5]}, "field.too_large", "config.mlp_only_layers"),
        ({**QWEN3_MOE, "mlp_only_layers": "0"}, "field.not_list", "config.mlp_only_layers"),
        (
            {k: v for k, v in QWEN3_MOE.items() if k != "hidden_size"},
            "config.missing",
            "config.hidden_size",
        ),
        (
            {**QWEN3_MOE, "model_type": "gpt_oss", "layer_types": ["full_attention"]},
            "config.layer_types",
            "config.layer_types",
        ),
        (
            {**QWEN3_MOE, "model_type": "deepseek_v3", "first_k_dense_replace": 3},
            "field.too_large",
            "config.first_k_dense_replace",
        ),
        (
            {**QWEN3_MOE, "model_type": "deepseek_v3", "kv_lora_rank": 0},
            "field.too_small",
            "config.kv_lora_rank",
        ),
        ({"model_type": "gemma3"}, "config.missing", "config.text_config"),
        (
            {**GEMMA3, "text_config": {**GEMMA3["text_config"], "hidden_size": "big"}},
            "field.not_integer",
            "config.text_config.hidden_size",
        ),
        (
            {**GEMMA3, "text_config": {**GEMMA3["text_config"], "model_type": "llama4"}},
            "config.bad_text_config",
            "config.text_config.model_type",
        ),
        (
            {**QWEN3_MOE, "model_type": "olmo2", "attention_bias": "no"},
            "field.not_bool",
            "config.attention_bias",
        ),
        # the families added with the presets: Kimi K2 (deepseek_v3's layers), GLM-4.5, Falcon,
        # Llama 4 and Mistral 3 (nested text_config)
        (
            {**QWEN3_MOE, "model_type": "kimi_k2", "n_routed_experts": 4, "num_experts_per_tok": 8},
            "config.experts_per_token",
            "config.num_experts_per_tok",
        ),
        (
            {**QWEN3_MOE, "model_type": "glm4_moe", "n_routed_experts": 0},
            "field.too_small",
            "config.n_routed_experts",
        ),
        (
            {"model_type": "falcon", "num_hidden_layers": 0},
            "field.too_small",
            "config.num_hidden_layers",
        ),
        (
            {"model_type": "falcon", "hidden_size": 64, "num_attention_heads": 5},
            "config.heads",
            "config.num_attention_heads",
        ),
        (
            {
                "model_type": "falcon",
                "hidden_size": 64,
                "num_attention_heads": 4,
                "new_decoder_architecture": True,
                "num_kv_heads": 3,
            },
            "config.kv_heads",
            "config.num_kv_heads",
        ),
        (
            {"model_type": "falcon", "parallel_attn": "yes"},
            "field.not_bool",
            "config.parallel_attn",
        ),
        (
            {"model_type": "falcon", "activation": ["gelu"]},
            "field.not_text",
            "config.activation",
        ),
        (
            {
                "model_type": "llama4",
                "text_config": {
                    **QWEN3_MOE,
                    "model_type": "llama4_text",
                    "num_local_experts": 2,
                    "num_experts_per_tok": 3,
                },
            },
            "config.experts_per_token",
            "config.text_config.num_experts_per_tok",
        ),
        (
            {"model_type": "mistral3", "text_config": {"model_type": "mistral", "hidden_size": 64}},
            "config.missing",
            "config.text_config.num_attention_heads",
        ),
        (
            {
                "model_type": "mistral3",
                "text_config": {**QWEN3_MOE, "model_type": "mistral", "num_hidden_layers": 0},
            },
            "field.too_small",
            "config.text_config.num_hidden_layers",
        ),
    ],
)
def test_layer_families_refuse_bad_configs_naming_the_field(cfg, key, field):
    e = _err(cfg)
    assert (e.key, e.field) == (key, field), e.message


def test_multimodal_config_reads_its_text_model():
    spec = from_hf_config(GEMMA3)
    assert spec.vision_not_counted and spec.family == "gemma3"
    # Gemma3TextConfig defaults: 5 local layers to 1 global (sliding_window_pattern 6)
    assert [lay.attention.span for lay in spec.stack] == ["sliding"] * 5 + ["full"]
    assert spec.stack[0].attention.window == 4096 and spec.stack[0].norms == 4


def test_deepseek_layers_dense_first_then_moe_with_shared_experts():
    from advisor.arch.models import describe

    cfg = {**QWEN3_MOE, "model_type": "deepseek_v3", "num_hidden_layers": 4}
    cfg.update(n_routed_experts=8, first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=24)
    cfg.update(qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8, n_shared_experts=2)
    d = describe(from_hf_config(cfg))
    assert (d["dense_layers"], d["moe_layers"], d["attention"]) == (1, 3, "MLA")
    assert d["shared_expert_width"] == 2 * 32 and d["kv_elems_per_token"] == 4 * (16 + 4)
    assert d["mtp_params"] > 0  # num_nextn_predict_layers: class default 1, counted apart
