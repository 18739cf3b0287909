"""DeepSeek-V3 / R1 and Kimi K2 (`model_type` deepseek_v3): multi-head latent attention (MLA),
dense MLP on the first `first_k_dense_replace` layers, then MoE with `n_routed_experts` routed
experts of `moe_intermediate_size` and `n_shared_experts` shared ones; `num_nextn_predict_layers`
MTP modules, counted apart (transformers `DeepseekV3Config`, `modeling_deepseek_v3.py`;
DeepSeek-V3 technical report, arXiv:2412.19437)."""

from __future__ import annotations

from .. import layers as L
from ._read import Reader

# Kimi K2's config.json names its own type (`kimi_k2`, DeepseekV3ForCausalLM in remote code that
# copies DeepSeek-V3's modelling): the same layers, read the same way
MODEL_TYPES = ("deepseek_v3", "kimi_k2")

# DeepseekV3Config (transformers 5.x configuration_deepseek_v3.py)
DEFAULTS = {
    "vocab_size": 129280,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "n_shared_experts": 1,
    "n_routed_experts": 256,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "qk_nope_head_dim": 128,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "max_position_embeddings": 4096,
    "num_nextn_predict_layers": 1,
}


def build(cfg: dict, name: str, display_name: str):
    r = Reader(cfg, DEFAULTS)
    h = r.int("hidden_size")
    n = r.int("num_hidden_layers")
    heads = r.int("num_attention_heads")
    # q_lora_rank null: a plain q_proj (DeepSeek-V2-Lite); the class default 1536 only when absent
    q_rank = r.opt_int("q_lora_rank") if "q_lora_rank" not in cfg or cfg["q_lora_rank"] else None
    nope, rope = r.int("qk_nope_head_dim"), r.int("qk_rope_head_dim")
    bias = r.flag("attention_bias", False)
    attn = L.Attention(
        kind="mla",
        num_heads=heads,
        num_kv_heads=heads,
        head_dim=nope + rope,
        q_lora_rank=q_rank,
        kv_lora_rank=r.int("kv_lora_rank"),
        qk_rope_head_dim=rope,
        v_head_dim=r.int("v_head_dim"),
        qkv_bias=bias,
        o_bias=bias,
    )
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
        family="deepseek_v3",
        layers=layers,
        hidden_size=h,
        mtp_layers=r.int("num_nextn_predict_layers", minimum=0),
    )
