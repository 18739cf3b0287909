"""OLMo 2: GQA with RMSNorm over the whole q (q_dim) and k (kv_dim) projections, norms after
attention and after the MLP (transformers `Olmo2Config`, `modeling_olmo2.py`)."""

from __future__ import annotations

from .. import layers as L
from ._read import Reader
from ._spec import assemble

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
    bias = r.flag("attention_bias", False)
    attn = L.Attention(
        kind="gqa",
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=hd,
        qk_norm="full",
        qkv_bias=bias,
        o_bias=bias,
    )
    layer = L.Layer(attn, L.Mlp(width=r.int("intermediate_size")))
    return assemble(
        name=name,
        display_name=display_name,
        family="olmo2",
        cfg=cfg,
        layers=(layer,) * r.int("num_hidden_layers"),
        vocab_size=r.int("vocab_size"),
        hidden_size=h,
        max_position_embeddings=r.int("max_position_embeddings"),
        tie_word_embeddings=r.flag("tie_word_embeddings", False),
        hidden_act=cfg.get("hidden_act") or "silu",
    )
