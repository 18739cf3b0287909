"""Llama 4 (text): GQA; three of every four layers attend within `attention_chunk_size`-token
chunks (no RoPE layers every `no_rope_layer_interval`-th are global); MoE on the layers
`moe_layers` (default every `interleave_moe_layer_step`-th from step - 1) with one shared expert
of `intermediate_size`, dense `intermediate_size_mlp` elsewhere (transformers
`Llama4TextConfig`, `modeling_llama4.py`). The multimodal `llama4` config is read through its
`text_config` (families.WRAPPERS)."""

from __future__ import annotations

from .. import layers as L
from ._read import MAX, Reader

MODEL_TYPES = ("llama4_text",)

# Llama4TextConfig (transformers 5.x configuration_llama4.py)
DEFAULTS = {
    "vocab_size": 202048,
    "hidden_size": 5120,
    "intermediate_size": 8192,
    "intermediate_size_mlp": 16384,
    "num_hidden_layers": 48,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 4096 * 32,
    "num_experts_per_tok": 1,
    "num_local_experts": 16,
    "interleave_moe_layer_step": 1,
    "no_rope_layer_interval": 4,
    "attention_chunk_size": 8192,
}


def build(cfg: dict, name: str, display_name: str):
    r = Reader(cfg, DEFAULTS)
    h = r.int("hidden_size")
    n = r.int("num_hidden_layers")
    heads, kv, hd = r.heads(h, DEFAULTS["head_dim"])
    types = r.layer_types(n, ("full_attention", "chunked_attention"))
    chunk = None
    if "attention_chunk_size" not in cfg or cfg["attention_chunk_size"] is not None:
        chunk = r.int("attention_chunk_size", maximum=MAX["max_position_embeddings"])
    if types is None:
        no_rope = r.int_list("no_rope_layers", 2)  # 0/1 flags per layer
        if not no_rope:
            every = r.int("no_rope_layer_interval")
            no_rope = tuple(int((i + 1) % every != 0) for i in range(n))
        types = tuple(
            "chunked_attention" if flag and chunk is not None else "full_attention"
            for flag in no_rope
        )
    moe_layers = r.int_list("moe_layers", n)
    if moe_layers is None:
        step = r.int("interleave_moe_layer_step")
        moe_layers = tuple(range(step - 1, n, step))
    e, k = r.experts("num_local_experts")
    width = r.int("intermediate_size")
    moe = L.Mlp(width=width, experts=e, experts_per_token=k, shared_width=width)
    dense = L.Mlp(width=r.int("intermediate_size_mlp"))
    layers = tuple(
        L.Layer(r.attention(heads, kv, hd, t, chunk), moe if i in set(moe_layers) else dense)
        for i, t in enumerate(types)
    )
    return r.spec(
        name=name,
        display_name=display_name,
        family="llama4",
        layers=layers,
        hidden_size=h,
    )
