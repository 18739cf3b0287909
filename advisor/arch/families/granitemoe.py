"""Granite 3 MoE (`granitemoe`): GQA (`attention_bias` on q/k/v/o), MoE on every layer with
`num_local_experts` experts of `intermediate_size`, no shared expert (transformers
`GraniteMoeConfig`, `modeling_granitemoe.py`)."""

from __future__ import annotations

from .. import layers as L
from ._read import Reader

MODEL_TYPES = ("granitemoe",)

# GraniteMoeConfig (transformers 5.x configuration_granitemoe.py); num_key_value_heads None: = heads
DEFAULTS = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "max_position_embeddings": 2048,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
}


def build(cfg: dict, name: str, display_name: str):
    r = Reader(cfg, DEFAULTS)
    h = r.int("hidden_size")
    heads, kv, hd = r.heads(h)
    attn = r.attention(heads, kv, hd)
    e, k = r.experts("num_local_experts")
    layer = L.Layer(attn, L.Mlp(width=r.int("intermediate_size"), experts=e, experts_per_token=k))
    return r.spec(
        name=name,
        display_name=display_name,
        family="granitemoe",
        layers=(layer,) * r.int("num_hidden_layers"),
        hidden_size=h,
    )
