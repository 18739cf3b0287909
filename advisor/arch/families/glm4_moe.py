"""GLM-4.5 / GLM-4.5-Air (`glm4_moe`): GQA with q/k/v biases (`attention_bias`, o_proj without),
optional per-head QK-norm (`use_qk_norm`), dense first `first_k_dense_replace` layers, then MoE
with `n_routed_experts` of `moe_intermediate_size` and `n_shared_experts` shared ones;
`num_nextn_predict_layers` MTP modules counted apart (transformers `Glm4MoeConfig`,
`modeling_glm4_moe.py`)."""

from __future__ import annotations

from .. import layers as L
from ._read import Reader

MODEL_TYPES = ("glm4_moe",)

# Glm4MoeConfig (transformers 5.x configuration_glm4_moe.py)
DEFAULTS = {
    "vocab_size": 151552,
    "hidden_size": 4096,
    "intermediate_size": 10944,
    "num_hidden_layers": 46,
    "num_attention_heads": 96,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "moe_intermediate_size": 1408,
    "num_experts_per_tok": 8,
    "n_shared_experts": 1,
    "n_routed_experts": 128,
    "first_k_dense_replace": 1,
    "num_nextn_predict_layers": 1,
}


def build(cfg: dict, name: str, display_name: str):
    r = Reader(cfg, DEFAULTS)
    h = r.int("hidden_size")
    n = r.int("num_hidden_layers")
    heads, kv, hd = r.heads(h)
    qk_norm = "head" if r.flag("use_qk_norm", False) else ""
    attn = r.attention(heads, kv, hd, qk_norm=qk_norm, o_bias=False)
    e, k = r.experts("n_routed_experts")
    width = r.int("moe_intermediate_size")
    shared = r.int("n_shared_experts", minimum=0)
    moe = L.Mlp(width=width, experts=e, experts_per_token=k, shared_width=shared * width)
    dense = L.Mlp(width=r.int("intermediate_size"))
    first = r.int("first_k_dense_replace", minimum=0, maximum=n)
    layers = tuple(L.Layer(attn, dense if i < first else moe) for i in range(n))
    return r.spec(
        name=name,
        display_name=display_name,
        family="glm4_moe",
        layers=layers,
        hidden_size=h,
        mtp_layers=r.int("num_nextn_predict_layers", minimum=0),
    )
