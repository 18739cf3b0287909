"""gpt-oss: GQA with biases and one learned sink per head, layers alternating a 128-token sliding
window and full attention (even layers slide), MoE on every layer with biased experts and router
(transformers `GptOssConfig`, `modeling_gpt_oss.py`; OpenAI gpt-oss model card, 2025)."""

from __future__ import annotations

from .. import layers as L
from ._read import MAX, Reader

MODEL_TYPES = ("gpt_oss",)

# GptOssConfig (transformers 5.x configuration_gpt_oss.py)
DEFAULTS = {
    "num_hidden_layers": 36,
    "num_local_experts": 128,
    "vocab_size": 201088,
    "hidden_size": 2880,
    "intermediate_size": 2880,
    "head_dim": 64,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "sliding_window": 128,
    "max_position_embeddings": 131072,
    "num_experts_per_tok": 4,
}


def build(cfg: dict, name: str, display_name: str):
    r = Reader(cfg, DEFAULTS)
    h = r.int("hidden_size")
    n = r.int("num_hidden_layers")
    heads, kv, hd = r.heads(h, DEFAULTS["head_dim"])
    types = r.layer_types(n, ("full_attention", "sliding_attention")) or tuple(
        "sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)
    )
    window = r.int("sliding_window", maximum=MAX["max_position_embeddings"])
    e, k = r.experts("num_local_experts")
    mlp = L.Mlp(
        width=r.int("intermediate_size"),
        bias=True,
        experts=e,
        experts_per_token=k,
        router_bias=True,
        clamped=True,
    )
    layers = tuple(
        L.Layer(r.attention(heads, kv, hd, t, window, sinks=True, bias=True), mlp) for t in types
    )
    return r.spec(
        name=name,
        display_name=display_name,
        family="gpt_oss",
        layers=layers,
        hidden_size=h,
    )
