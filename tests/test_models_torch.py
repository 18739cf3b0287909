"""Exact parameter counts: for every catalog preset (and a few synthetic configs) build the real
transformers model from the same config on the meta device (no weights, no download) and compare
`sum(p.numel())` with `advisor.arch.models.param_count`."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from advisor.arch.models import active_param_count, from_hf_config, param_count  # noqa: E402
from advisor.data.catalog import load_catalog  # noqa: E402

pytestmark = pytest.mark.torch

PRESETS = load_catalog().models


def torch_model(cfg: dict):
    """The transformers model of a preset's config on the meta device: a multimodal config's text
    model (vision not counted), a type transformers has no class for built by the class with the
    same layers (`families.TRANSFORMERS_TYPES`: Kimi K2 as DeepSeek-V3)."""
    from advisor.arch.families import TRANSFORMERS_TYPES, WRAPPERS

    cfg = dict(cfg)
    if isinstance(cfg.get("text_config"), dict):  # multimodal: the text model (vision not counted)
        cfg = {"model_type": WRAPPERS[cfg["model_type"]], **cfg["text_config"]}
    model_type = cfg.pop("model_type")
    model_type = TRANSFORMERS_TYPES.get(model_type, model_type)
    config = transformers.AutoConfig.for_model(model_type, **cfg)
    auto = transformers.AutoModelForMaskedLM if model_type == "bert" else None
    auto = auto or transformers.AutoModelForCausalLM
    with torch.device("meta"):
        return auto.from_config(config)


def _torch_count(cfg: dict) -> int:
    return sum(p.numel() for p in torch_model(cfg).parameters())


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_preset_param_count_is_exact(preset):
    assert param_count(preset.spec) == _torch_count(preset.doc["config"])


TINY = {"vocab_size": 97, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2}
SYNTHETIC = {
    "llama-biases": {
        "model_type": "llama",
        **TINY,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "attention_bias": True,
        "mlp_bias": True,
    },
    "llama-mqa-tied": {
        "model_type": "llama",
        **TINY,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "tie_word_embeddings": True,
    },
    "llama1-no-kv-heads": {"model_type": "llama", **TINY, "num_attention_heads": 4},
    "llama-head-dim": {"model_type": "llama", **TINY, "num_attention_heads": 4, "head_dim": 24},
    "mistral-defaults": {"model_type": "mistral", **TINY, "num_attention_heads": 8},
    "qwen2-untied-sliding": {
        "model_type": "qwen2",
        **TINY,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "use_sliding_window": True,
        "sliding_window": 16,
        "max_window_layers": 1,
    },
    "gemma-untied": {
        "model_type": "gemma",
        **TINY,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 16,
        "tie_word_embeddings": False,
    },
    "gemma2-tiny": {
        "model_type": "gemma2",
        **TINY,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
    },
    "mixtral-top1": {
        "model_type": "mixtral",
        **TINY,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "num_local_experts": 4,
        "num_experts_per_tok": 1,
    },
    "phi3-gqa": {
        "model_type": "phi3",
        **TINY,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "pad_token_id": None,
        "eos_token_id": None,
    },
    "gpt2-untied-inner": {
        "model_type": "gpt2",
        "vocab_size": 97,
        "n_embd": 64,
        "n_layer": 2,
        "n_head": 4,
        "n_positions": 32,
        "n_inner": 80,
        "tie_word_embeddings": False,
    },
    "bert-untied": {
        "model_type": "bert",
        **TINY,
        "num_attention_heads": 4,
        "tie_word_embeddings": False,
    },
}


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_param_count_is_exact(name):
    cfg = SYNTHETIC[name]
    assert param_count(from_hf_config(cfg)) == _torch_count(cfg)


def test_moe_active_params_match_the_modules_a_token_uses():
    """Active = a model with only k experts per layer, plus the router's weights for all E experts
    (every token runs the whole router)."""
    cfg = SYNTHETIC["mixtral-top1"]
    spec = from_hf_config(cfg)
    k, e = cfg["num_experts_per_tok"], cfg["num_local_experts"]
    only_k = _torch_count({**cfg, "num_local_experts": k})
    router_rest = (e - k) * cfg["hidden_size"] * cfg["num_hidden_layers"]
    assert active_param_count(spec) == only_k + router_rest
    assert param_count(spec) == _torch_count(cfg)


def _kv_width(attn, hidden: int) -> int:
    """Elements one attention module caches per token, read from its projections' shapes:
    K and V (k_proj + v_proj, or a fused projection less its query part), MLA's latent
    (kv_a_proj_with_mqa: kv_lora_rank + qk_rope_head_dim)."""
    if hasattr(attn, "kv_a_proj_with_mqa"):
        return attn.kv_a_proj_with_mqa.out_features
    if hasattr(attn, "k_proj"):
        return attn.k_proj.out_features + attn.v_proj.out_features
    if hasattr(attn, "c_attn"):  # GPT-2: q, k, v each hidden wide
        return 2 * hidden
    if hasattr(attn, "qkv_proj"):  # Phi-3: q heads x head_dim first
        return attn.qkv_proj.out_features - attn.o_proj.in_features
    return attn.query_key_value.out_features - hidden  # Falcon: q is hidden wide


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_preset_active_params_and_kv_match_the_torch_modules(preset):
    """Every preset against the model transformers builds on the meta device: active parameters
    (routed experts, the modules named `.experts.`, at k/E of their size; all else in full) and
    the KV elements per token (each layer's K/V projections or MLA latent, summed)."""
    from advisor.arch.models import expert_param_count

    spec = preset.spec
    model = torch_model(preset.doc["config"])
    routed = sum(p.numel() for n, p in model.named_parameters() if ".experts." in n)
    assert expert_param_count(spec) == routed
    idle = sum(
        layer.mlp.experts - layer.mlp.experts_per_token for layer in spec.stack if layer.mlp.is_moe
    )
    if routed:
        moe_layers = [layer for layer in spec.stack if layer.mlp.is_moe]
        per_expert = routed // sum(layer.mlp.experts for layer in moe_layers)
        assert active_param_count(spec) == param_count(spec) - idle * per_expert
    else:
        assert active_param_count(spec) == param_count(spec)
    if not spec.causal:
        return
    attns = [
        m for n, m in model.named_modules() if n.endswith(("self_attn", "self_attention", ".attn"))
    ]
    assert len(attns) == spec.num_layers
    assert spec.kv_elems_per_token == sum(_kv_width(a, spec.hidden_size) for a in attns)
