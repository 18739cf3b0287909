"""Assembling the fields of a `ModelSpec` from a family's layer list: the uniform fields the older
paths read (heads, widths, experts, window) are taken from the layers (an MoE layer where there
is one). The fields, not the type: advisor.arch.models makes the `ModelSpec`, so that the
families never import the module that dispatches to them (no import circle, issue 36)."""

from __future__ import annotations


def assemble(
    *,
    name: str,
    display_name: str,
    family: str,
    cfg: dict,
    layers: tuple,
    vocab_size: int,
    hidden_size: int,
    max_position_embeddings: int,
    tie_word_embeddings: bool,
    hidden_act: str,
    mtp_layers: int = 0,
    final_logit_softcap: float | None = None,
    norm_plus_one: bool = False,
    norm: str = "rmsnorm",
    qkv_layout: str = "separate",
    qkv_module: str = "qkv_proj",
) -> dict:
    moe = next((lay for lay in layers if lay.mlp.is_moe), None)
    rep = moe or layers[0]
    a = rep.attention
    windows = [lay.attention.window for lay in layers if lay.attention.span != "full"]
    return dict(
        name=name,
        family=family,
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_layers=len(layers),
        num_heads=a.num_heads,
        num_kv_heads=a.num_kv_heads,
        head_dim=a.head_dim,
        intermediate_size=rep.mlp.width,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=tie_word_embeddings,
        gated_mlp=rep.mlp.gated,
        norm=norm,
        qkv_layout=qkv_layout,
        qkv_module=qkv_module,
        norms_per_layer=rep.norms,
        qkv_bias=a.qkv_bias,
        o_bias=a.o_bias,
        mlp_bias=rep.mlp.bias,
        num_experts=rep.mlp.experts,
        experts_per_token=rep.mlp.experts_per_token,
        sliding_window=max(windows) if windows else None,
        final_logit_softcap=final_logit_softcap,
        norm_plus_one=norm_plus_one,
        hidden_act=hidden_act,
        display_name=display_name,
        layers=tuple(layers),
        mtp_layers=mtp_layers,
        hf_config=dict(cfg),
    )
