"""Falcon (`model_type` falcon: Falcon-7B/40B/180B, transformers `FalconConfig`,
`modeling_falcon.py`): one fused `query_key_value` projection, LayerNorms with biases, a plain
(ungated) GELU MLP of `ffn_hidden_size` (4 h by default), attention and MLP in parallel.

Attention heads: the new decoder architecture (Falcon-40B/180B, `new_decoder_architecture`)
has `num_kv_heads` grouped K/V heads and two LayerNorms per layer (`ln_attn`, `ln_mlp`);
otherwise `multi_query` gives one K/V head (Falcon-7B) or, when off, one per query head, and
one LayerNorm per layer in parallel mode (two when `parallel_attn` is off). `bias` adds biases
to every linear map; ALiBi (`alibi`) adds no parameters. Embeddings are tied to the output head
(`tie_word_embeddings` true by default).

The KV cache here holds `num_kv_heads` heads per layer, as vLLM and TGI keep it; transformers'
own Falcon attention broadcasts grouped K/V to every query head before caching
(`FalconAttention._split_heads`), which is an implementation choice, not the model's."""

from __future__ import annotations

from ...core.errors import AdvisorError
from .. import layers as L
from ._read import Reader
from ._spec import assemble

MODEL_TYPES = ("falcon",)

# FalconConfig (transformers 5.x configuration_falcon.py)
DEFAULTS = {
    "vocab_size": 65024,
    "hidden_size": 4544,
    "num_hidden_layers": 32,
    "num_attention_heads": 71,
    "max_position_embeddings": 2048,
}


def build(cfg: dict, name: str, display_name: str):
    r = Reader(cfg, DEFAULTS)
    h = r.int("hidden_size")
    n = r.int("num_hidden_layers")
    heads = r.int("num_attention_heads")
    if h % heads:
        raise AdvisorError(
            "config.heads",
            f"config.num_attention_heads: {heads} does not divide hidden_size {h}",
            field=r.field("num_attention_heads"),
            heads=heads,
            hidden_size=h,
        )
    new_arch = r.flag("new_decoder_architecture", False)
    parallel = r.flag("parallel_attn", True)
    if new_arch:
        kv = r.int("num_kv_heads") if r.has("num_kv_heads") else heads
        if heads % kv:
            raise AdvisorError(
                "config.kv_heads",
                f"config.num_kv_heads: {kv} does not divide num_attention_heads {heads}",
                field=r.field("num_kv_heads"),
            )
    elif r.flag("multi_query", True):
        kv = 1
    else:
        kv = heads
    ln_parallel = r.opt_int("num_ln_in_parallel_attn", maximum=2)
    if ln_parallel is None and new_arch:
        ln_parallel = 2
    norms = 2 if (not parallel or ln_parallel == 2) else 1
    bias = r.flag("bias", False)
    ffn = r.int("ffn_hidden_size") if r.has("ffn_hidden_size") else 4 * h
    attn = L.Attention(
        kind="gqa",
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=h // heads,
        qkv_bias=bias,
        o_bias=bias,
    )
    mlp = L.Mlp(width=ffn, gated=False, bias=bias)
    layers = tuple(L.Layer(attn, mlp, norms=norms) for _ in range(n))
    return assemble(
        name=name,
        display_name=display_name,
        family="falcon",
        cfg=cfg,
        layers=layers,
        vocab_size=r.int("vocab_size"),
        hidden_size=h,
        max_position_embeddings=r.int("max_position_embeddings"),
        tie_word_embeddings=r.flag("tie_word_embeddings", True),
        hidden_act=cfg.get("activation") or "gelu",
        norm="layernorm",
        qkv_layout="fused",
        qkv_module="query_key_value",  # modeling_falcon.py FalconAttention
    )
