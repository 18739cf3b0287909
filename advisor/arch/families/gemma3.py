"""Gemma 3 (text): GQA with per-head q_norm/k_norm, four norms per layer, five local
(sliding-window) layers to one global (`sliding_window_pattern` 6: layer i slides when
(i + 1) % 6 != 0), tied embeddings (transformers `Gemma3TextConfig`, `modeling_gemma3.py`).
The multimodal `gemma3` config is read through its `text_config` (families.WRAPPERS)."""

from __future__ import annotations

from .. import layers as L
from ._read import MAX, Reader

MODEL_TYPES = ("gemma3_text",)

# Gemma3TextConfig (transformers 5.x configuration_gemma3.py)
DEFAULTS = {
    "vocab_size": 262_208,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "max_position_embeddings": 131_072,
    "sliding_window": 4096,
    "sliding_window_pattern": 6,
}


def build(cfg: dict, name: str, display_name: str):
    r = Reader(cfg, DEFAULTS)
    h = r.int("hidden_size")
    n = r.int("num_hidden_layers")
    heads, kv, hd = r.heads(h, DEFAULTS["head_dim"])
    types = r.layer_types(n, ("full_attention", "sliding_attention"))
    if types is None:
        p = r.int("sliding_window_pattern")
        types = tuple("sliding_attention" if (i + 1) % p else "full_attention" for i in range(n))
    window = r.int("sliding_window", maximum=MAX["max_position_embeddings"])
    if r.flag("use_bidirectional_attention", False):
        window = window // 2 + 1  # Gemma3TextConfig.__post_init__ (exclusive bounds)
    mlp = L.Mlp(width=r.int("intermediate_size"))
    layers = tuple(
        L.Layer(r.attention(heads, kv, hd, t, window, qk_norm="head"), mlp, norms=4) for t in types
    )
    cap = cfg.get("final_logit_softcapping")
    return r.spec(
        name=name,
        display_name=display_name,
        family="gemma3",
        layers=layers,
        hidden_size=h,
        tie=True,
        act_keys=("hidden_activation", "hidden_act"),
        act="gelu_pytorch_tanh",
        final_logit_softcap=cap,
        norm_plus_one=True,  # Gemma3RMSNorm: fp32, x * (1 + weight)
    )
