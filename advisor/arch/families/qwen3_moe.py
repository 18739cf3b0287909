"""Qwen3-MoE: Qwen3's attention; MoE MLP (routed experts of `moe_intermediate_size`, no shared
expert) on layers with (i + 1) % decoder_sparse_step == 0 not in `mlp_only_layers`, dense
`intermediate_size` elsewhere (transformers `Qwen3MoeConfig`, `Qwen3MoeDecoderLayer`)."""

from __future__ import annotations

from .. import layers as L
from ._read import MAX, Reader
from .qwen3 import qwen_layer_types

MODEL_TYPES = ("qwen3_moe",)

# Qwen3MoeConfig (transformers 5.x configuration_qwen3_moe.py); head_dim falls back to
# hidden_size // num_attention_heads (Qwen3MoeAttention: getattr(config, "head_dim", ...)).
DEFAULTS = {
    "num_key_value_heads": 4,
    "max_position_embeddings": 32768,
    "max_window_layers": 28,
    "sliding_window": 4096,
    "decoder_sparse_step": 1,
    "moe_intermediate_size": 768,
    "num_experts_per_tok": 8,
    "num_experts": 128,
    "intermediate_size": 6144,
}


def build(cfg: dict, name: str, display_name: str):
    r = Reader(cfg, DEFAULTS)
    h = r.int("hidden_size")
    n = r.int("num_hidden_layers")
    heads, kv, hd = r.heads(h)
    types = qwen_layer_types(r, n)
    window = (
        r.int("sliding_window", maximum=MAX["max_position_embeddings"])
        if ("sliding_attention" in types)
        else None
    )
    e, k = r.experts("num_experts")
    step = r.int("decoder_sparse_step")
    dense_only = set(r.int_list("mlp_only_layers", n) or ())
    dense = L.Mlp(width=r.int("intermediate_size"))
    moe = L.Mlp(width=r.int("moe_intermediate_size"), experts=e, experts_per_token=k)
    layers = tuple(
        L.Layer(
            r.attention(heads, kv, hd, t, window, qk_norm="head"),
            moe if i not in dense_only and (i + 1) % step == 0 else dense,
        )
        for i, t in enumerate(types)
    )
    return r.spec(
        name=name,
        display_name=display_name,
        family="qwen3_moe",
        layers=layers,
        hidden_size=h,
    )
