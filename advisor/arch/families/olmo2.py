"""OLMo 2: GQA with RMSNorm over the whole q (q_dim) and k (kv_dim) projections, norms after
attention and after the MLP (transformers `Olmo2Config`, `modeling_olmo2.py`)."""

from __future__ import annotations

from .. import layers as L
from ._read import Reader

MODEL_TYPES = ("olmo2",)

# Olmo2Config (transformers 5.x configuration_olmo2.py); num_key_value_heads None: = heads
DEFAULTS = {
    "vocab_size": 50304,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "max_position_embeddings": 2048,
}


def build(cfg: dict, name: str, display_name: str):
    r = Reader(cfg, DEFAULTS)
    h = r.int("hidden_size")
    heads, kv, hd = r.heads(h)
    attn = r.attention(heads, kv, hd, qk_norm="full")
    layer = L.Layer(attn, L.Mlp(width=r.int("intermediate_size")))
    return r.spec(
        name=name,
        display_name=display_name,
        family="olmo2",
        layers=(layer,) * r.int("num_hidden_layers"),
        hidden_size=h,
    )
