"""The layer-list families (advisor/arch/families) against transformers 5.x, exactly: total
parameters and active parameters from the model transformers builds on the meta device from
the same config, and KV-cache elements per token from a tiny random-initialised model's real
cache after a prefill and one decode step (CPU)."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from advisor.arch import layers as L  # noqa: E402
from advisor.arch.models import (  # noqa: E402
    active_param_count,
    expert_param_count,
    from_hf_config,
    param_count,
)
from advisor.memory import estimate as memory  # noqa: E402

pytestmark = pytest.mark.torch

T = {
    "vocab_size": 97,
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
}
# Tiny configs that exercise each family's layer rules (dense first layers, interleaving,
# windows, shared experts, biases, QK-norm kinds); transformers fills the rest with its class
# defaults, as advisor does.
TINY = {
    "qwen3": {"model_type": "qwen3", **T, "head_dim": 16},
    "qwen3-sliding-bias": {
        "model_type": "qwen3",
        **T,
        "head_dim": 16,
        "attention_bias": True,
        "use_sliding_window": True,
        "sliding_window": 8,
        "max_window_layers": 2,
        "tie_word_embeddings": True,
    },
    "qwen3_moe-sparse-step": {
        "model_type": "qwen3_moe",
        **T,
        "head_dim": 16,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "decoder_sparse_step": 2,
        "mlp_only_layers": [0],
    },
    "qwen3_moe-defaults": {"model_type": "qwen3_moe", **T, "num_experts": 8},
    "deepseek_v3": {
        "model_type": "deepseek_v3",
        **T,
        "n_routed_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "n_shared_experts": 1,
        "first_k_dense_replace": 1,
        "q_lora_rank": 24,
        "kv_lora_rank": 16,
        "qk_nope_head_dim": 8,
        "qk_rope_head_dim": 4,
        "v_head_dim": 12,
        "n_group": 2,
        "topk_group": 1,
    },
    "deepseek_v3-no-q-rank-bias": {
        "model_type": "deepseek_v3",
        **T,
        "n_routed_experts": 4,
        "num_experts_per_tok": 4,
        "moe_intermediate_size": 32,
        "n_shared_experts": 2,
        "first_k_dense_replace": 0,
        "q_lora_rank": None,
        "kv_lora_rank": 16,
        "qk_nope_head_dim": 8,
        "qk_rope_head_dim": 4,
        "v_head_dim": 8,
        "attention_bias": True,
        "n_group": 1,
        "topk_group": 1,
    },
    "gpt_oss": {
        "model_type": "gpt_oss",
        **T,
        "head_dim": 16,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "sliding_window": 8,
    },
    "gemma3_text": {
        "model_type": "gemma3_text",
        **T,
        "num_hidden_layers": 7,
        "head_dim": 16,
        "sliding_window": 8,
    },
    "llama4_text": {
        "model_type": "llama4_text",
        **T,
        "head_dim": 16,
        "num_local_experts": 4,
        "num_experts_per_tok": 1,
        "intermediate_size_mlp": 80,
        "interleave_moe_layer_step": 2,
        "attention_chunk_size": 8,
    },
    "glm4_moe-qknorm-bias": {
        "model_type": "glm4_moe",
        **T,
        "head_dim": 16,
        "n_routed_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "n_shared_experts": 1,
        "first_k_dense_replace": 1,
        "attention_bias": True,
        "use_qk_norm": True,
        "n_group": 1,
        "topk_group": 1,
    },
    "olmo2": {"model_type": "olmo2", **T, "eos_token_id": None, "pad_token_id": None},
    # Falcon: multi-query (7B), the new decoder architecture's KV groups and two LayerNorms
    # (40B/180B), and sequential attention with biases and an explicit MLP width
    "falcon-multi-query": {"model_type": "falcon", **T},
    "falcon-new-decoder": {
        "model_type": "falcon",
        **T,
        "new_decoder_architecture": True,
        "num_kv_heads": 2,
    },
    "falcon-sequential-mha-bias": {
        "model_type": "falcon",
        **T,
        "multi_query": False,
        "parallel_attn": False,
        "bias": True,
        "ffn_hidden_size": 80,
        "tie_word_embeddings": False,
    },
    "granitemoe": {
        "model_type": "granitemoe",
        **T,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
        "attention_bias": True,
    },
}


def _model(cfg: dict, device: str = "meta"):
    cfg = dict(cfg)
    config = transformers.AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with torch.device(device):
        return transformers.AutoModelForCausalLM.from_config(config), config


def _experts_per_token(config) -> tuple[int, int]:
    e = next(
        getattr(config, k)
        for k in ("num_experts", "n_routed_experts", "num_local_experts")
        if hasattr(config, k)
    )
    return e, config.num_experts_per_tok


@pytest.mark.parametrize("name", TINY)
def test_params_and_active_params_are_exact(name):
    cfg = TINY[name]
    model, config = _model(cfg)
    spec = from_hf_config(cfg)
    total = sum(p.numel() for p in model.parameters())
    assert param_count(spec) == total
    # routed experts at k/E of their size, all else in full: from the torch modules' names
    routed = sum(p.numel() for n, p in model.named_parameters() if ".experts." in n)
    assert expert_param_count(spec) == routed
    if routed:
        e, k = _experts_per_token(config)
        assert (routed * (e - k)) % e == 0
        assert active_param_count(spec) == total - routed * (e - k) // e
    else:
        assert active_param_count(spec) == total
    assert sum(1 for _ in spec.stack) == config.num_hidden_layers
    # the parameter inventory (optimizer states per tensor) lists every tensor
    import math

    assert sum(math.prod(s) for s in memory.param_shapes(spec)) == total


def _cache_elems(cfg: dict, seq: int) -> list[int]:
    """Elements per layer in transformers' cache after a `seq`-token prefill and one decode step
    (keys and values, one sequence)."""
    torch.manual_seed(0)
    model, _ = _model(cfg, "cpu")
    model.eval()
    ids = torch.randint(0, cfg["vocab_size"], (1, seq))
    with torch.no_grad():
        cache = model(ids, use_cache=True).past_key_values
        cache = model(ids[:, :1], cache=cache, use_cache=True).past_key_values
    return [layer.keys.numel() + layer.values.numel() for layer in cache.layers]


@pytest.mark.parametrize(
    "name",
    ["qwen3", "deepseek_v3", "gpt_oss", "gemma3_text", "llama4_text", "glm4_moe-qknorm-bias"],
)
def test_kv_elements_match_the_cache_transformers_keeps(name):
    """Below the window every layer keeps every token; past it, sliding and chunked layers keep
    window - 1 tokens between steps (transformers' DynamicSlidingWindowLayer), advisor the
    window: the step's own token joins them (the decode-time peak, as vLLM allocates)."""
    cfg = TINY[name]
    spec = from_hf_config(cfg)
    short = 6  # + 1 decoded: 7 tokens, inside every window here (8)
    per_layer = _cache_elems(cfg, short)
    assert spec.kv_elems(short + 1) == sum(per_layer)
    assert memory.kv_cache_bytes_per_token(spec, "bf16") * (short + 1) == 2 * sum(per_layer)
    long = 20
    per_layer = _cache_elems(cfg, long)
    for layer, elems in zip(spec.stack, per_layer, strict=True):
        a = layer.attention
        kept = L.span(a, long + 1)
        if a.span == "full":
            assert elems == L.kv_elems_per_token(a) * kept
        else:
            assert elems == L.kv_elems_per_token(a) * (kept - 1)


def test_mla_caches_the_latent():
    """DeepSeek-V3 (MLA): kv_lora_rank + qk_rope_head_dim per layer per token, as transformers'
    cache holds it, not 2 x heads x head_dim."""
    spec = from_hf_config(TINY["deepseek_v3"])
    assert spec.kv_elems_per_token == 4 * (16 + 4)
    assert spec.attention_kind == "MLA"


WRAPPED = {
    "gemma3": {
        "model_type": "gemma3",
        "text_config": {k: v for k, v in TINY["gemma3_text"].items() if k != "model_type"},
    },
    "mistral3": {
        "model_type": "mistral3",
        "text_config": {"model_type": "mistral", **T, "head_dim": 16, "sliding_window": None},
    },
    "llama4": {
        "model_type": "llama4",
        "text_config": dict(TINY["llama4_text"], model_type="llama4_text"),
    },
}


@pytest.mark.parametrize("name", WRAPPED)
def test_multimodal_configs_count_the_text_model(name):
    cfg = WRAPPED[name]
    spec = from_hf_config(cfg)
    text = dict(cfg["text_config"])
    text.setdefault("model_type", "gemma3_text")
    model, _ = _model(text)
    assert spec.vision_not_counted
    assert param_count(spec) == sum(p.numel() for p in model.parameters())


def test_lora_targets_follow_each_layers_modules():
    """LoRA adapters sized from each layer's description equal r x (in + out) over the modules
    transformers builds: MLA's q_b_proj, kv_a_proj_with_mqa and kv_b_proj for the q/k/v roles,
    every routed expert and the shared experts for the MLP roles, the dense first layer at its
    own width."""
    cfg = TINY["deepseek_v3"]
    spec = from_hf_config(cfg)
    model, _ = _model(cfg)
    r = 4

    def lora(shapes):
        return sum(r * (fin + fout) for fin, fout in shapes)

    layers = model.model.layers
    attn = [(m.q_b_proj, m.kv_a_proj_with_mqa, m.kv_b_proj) for m in (x.self_attn for x in layers)]
    expect = lora((lin.in_features, lin.out_features) for mods in attn for lin in mods)
    assert memory.lora_params(spec, r, ("q_proj", "k_proj", "v_proj")) == expect
    down = 0
    for x in layers:
        mlp = x.mlp
        if hasattr(mlp, "experts"):
            e, h, i = mlp.experts.down_proj.shape  # (E, h, i)
            down += e * r * (i + h)
            sh = mlp.shared_experts.down_proj
            down += r * (sh.in_features + sh.out_features)
        else:
            down += r * (mlp.down_proj.in_features + mlp.down_proj.out_features)
    assert memory.lora_params(spec, r, ("down_proj",)) == down


def test_memory_never_asks_the_family():
    """Nothing outside advisor/arch branches on a family name: memory, LoRA targets and time
    read the layer description (issue 33)."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parent.parent / "advisor"
    pattern = re.compile(r"\.family\s*(==|!=|in\b|not in\b)")
    hits = [
        f"{p.relative_to(root)}:{n}"
        for p in root.rglob("*.py")
        if "arch" not in p.relative_to(root).parts
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == []
