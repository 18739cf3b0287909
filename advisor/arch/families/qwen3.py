"""Qwen3 (dense): Llama-like GQA with per-head q_norm/k_norm (RMSNorm over head_dim), optional
sliding window from `max_window_layers` (transformers `Qwen3Config`, `modeling_qwen3.py`)."""

from __future__ import annotations

from .. import layers as L
from ._read import MAX, Reader

MODEL_TYPES = ("qwen3",)

# Qwen3Config (transformers 5.x configuration_qwen3.py)
DEFAULTS = {
    "num_key_value_heads": 32,
    "head_dim": 128,
    "max_position_embeddings": 32768,
    "max_window_layers": 28,
    "sliding_window": 4096,
}


def qwen_layer_types(r: Reader, n: int) -> tuple[str, ...]:
    """`layer_types` as given, else `Qwen3Config.__post_init__`: with `use_sliding_window`, layers
    i >= max_window_layers slide."""
    given = r.layer_types(n, ("full_attention", "sliding_attention"))
    if given:
        return given
    if not r.flag("use_sliding_window", False):
        return ("full_attention",) * n
    first = r.int("max_window_layers", minimum=0)
    return tuple("sliding_attention" if i >= first else "full_attention" for i in range(n))


def build(cfg: dict, name: str, display_name: str, defaults: dict = DEFAULTS):
    r = Reader(cfg, defaults)
    h = r.int("hidden_size")
    n = r.int("num_hidden_layers")
    heads, kv, hd = r.heads(h, defaults.get("head_dim"))
    types = qwen_layer_types(r, n)
    window = (
        r.int("sliding_window", maximum=MAX["max_position_embeddings"])
        if ("sliding_attention" in types)
        else None
    )
    mlp = L.Mlp(width=r.int("intermediate_size"))
    layers = tuple(
        L.Layer(r.attention(heads, kv, hd, t, window, qk_norm="head"), mlp) for t in types
    )
    return r.spec(
        name=name,
        display_name=display_name,
        family="qwen3",
        layers=layers,
        hidden_size=h,
    )
