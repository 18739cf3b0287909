"""A model as a list of layers: what each decoder layer's attention and MLP are.

`Attention` (MHA/GQA/MQA, or MLA with its ranks; full, sliding-window or chunked; sinks, QK-norm,
biases), `Mlp` (dense, gated or not, or MoE with routed and shared experts) and `Layer` (the two
and its norms) are frozen descriptions. `layer_tensors` lists one layer's parameter tensors as
transformers 5.x builds them; parameters, active parameters, linear weights (what quantisation
touches), KV elements per token and the tokens a layer keeps all derive from it here, so the rest
of advisor never asks which family a model is.

Module structure per kind (huggingface/transformers src/transformers/models, 5.x):
- GQA: `LlamaAttention` q/k/v/o projections (`attention_bias`), Qwen3's and Gemma 3's per-head
  `q_norm`/`k_norm` (head_dim), OLMo 2's whole-width q_norm (q_dim) and k_norm (kv_dim),
  gpt-oss's `sinks` (one per head, `GptOssAttention`).
- MLA: `DeepseekV3Attention`: q_a_proj (h -> q_lora_rank), q_a_layernorm, q_b_proj
  (q_lora_rank -> heads * (qk_nope + qk_rope)) or q_proj without a q rank; kv_a_proj_with_mqa
  (h -> kv_lora_rank + qk_rope), kv_a_layernorm (kv_lora_rank), kv_b_proj
  (kv_lora_rank -> heads * (qk_nope + v_head_dim)), o_proj (heads * v_head_dim -> h).
- MoE: experts as `gate_up_proj` (E, 2i, h) and `down_proj` (E, h, i) (biases on gpt-oss),
  a router Linear(h, E) (bias on gpt-oss), shared experts a gated MLP of their own width
  (`DeepseekV3MoE.shared_experts`, `Llama4TextMoe.shared_expert`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..core.frozen import cached_hash, state_without_hash

SPANS = ("full", "sliding", "chunked")
QK_NORMS = ("", "head", "full")


@dataclass(frozen=True)
class Attention:
    """One layer's attention.

    `kind` "gqa" covers MHA (kv_heads == heads), GQA and MQA (kv_heads == 1); "mla" is DeepSeek's
    multi-head latent attention (its q/kv ranks and head dims). `span` "sliding" keeps the last
    `window` tokens, "chunked" attends within `window`-token chunks (Llama 4); both keep at most
    `window` tokens of KV in the decode steady state (vLLM's and transformers' sliding/chunked
    cache layers)."""

    __hash__ = cached_hash  # computed once (advisor.core.frozen)
    __getstate__ = state_without_hash

    kind: str  # "gqa" | "mla"
    num_heads: int
    num_kv_heads: int
    head_dim: int  # gqa: per head; mla: qk_nope + qk_rope (the query/key width per head)
    span: str = "full"
    window: int | None = None
    sinks: bool = False
    qk_norm: str = ""  # "" | "head" (a head_dim weight each) | "full" (q_dim and kv_dim weights)
    qkv_bias: bool = False
    o_bias: bool = False
    # MLA only
    q_lora_rank: int | None = None
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of K (and of V) per token when heads are materialised (MLA: heads * head_dim)."""
        return self.num_kv_heads * self.head_dim

    @property
    def o_dim(self) -> int:
        """Width entering o_proj: heads * head_dim (MLA: heads * v_head_dim)."""
        return self.num_heads * (self.v_head_dim if self.kind == "mla" else self.head_dim)

    @property
    def label(self) -> str:
        """'MLA', 'MHA', 'GQA' or 'MQA'."""
        if self.kind == "mla":
            return "MLA"
        if self.num_kv_heads == self.num_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else "GQA"


@dataclass(frozen=True)
class Mlp:
    """One layer's MLP: dense (`experts` 0) of `width`, or MoE with `experts` routed experts of
    `width` each, `experts_per_token` of them per token, and `shared_width` of always-active
    shared experts (n_shared_experts * moe_intermediate_size, one gated MLP)."""

    __hash__ = cached_hash  # computed once (advisor.core.frozen)
    __getstate__ = state_without_hash

    width: int
    gated: bool = True
    bias: bool = False
    experts: int = 0
    experts_per_token: int = 0
    shared_width: int = 0
    router_bias: bool = False
    # gpt-oss's expert activation: gate and up clamped to `swiglu_limit`, glu = gate * sigmoid(
    # alpha * gate), output (up + 1) * glu (`GptOssExperts._apply_gate`); else SwiGLU/GeGLU
    clamped: bool = False

    @property
    def is_moe(self) -> bool:
        return self.experts > 0


@dataclass(frozen=True)
class Layer:
    """One decoder layer: attention, MLP and `norms` hidden-size norms (2 pre-norms; Gemma 2/3
    4; OLMo 2 2 post-norms)."""

    __hash__ = cached_hash  # computed once (advisor.core.frozen)
    __getstate__ = state_without_hash

    attention: Attention
    mlp: Mlp
    norms: int = 2


def _dense_tensors(width: int, h: int, gated: bool, bias: bool) -> list[tuple[str, tuple]]:
    """gate/up/down (gated) or fc1/fc2, and their biases."""
    if gated:
        out = [("linear", (width, h)), ("linear", (width, h)), ("linear", (h, width))]
        if bias:
            out += [("bias", (width,)), ("bias", (width,)), ("bias", (h,))]
    else:
        out = [("linear", (width, h)), ("linear", (h, width))]
        if bias:
            out += [("bias", (width,)), ("bias", (h,))]
    return out


def attention_tensors(a: Attention, h: int) -> list[tuple[str, tuple]]:
    """(role, shape) of one attention block's parameters (module docstring)."""
    out: list[tuple[str, tuple]] = []
    if a.kind == "mla":
        qk = a.head_dim
        if a.q_lora_rank:
            out += [("linear", (a.q_lora_rank, h)), ("norm", (a.q_lora_rank,))]
            out += [("linear", (a.num_heads * qk, a.q_lora_rank))]
            if a.qkv_bias:
                out.append(("bias", (a.q_lora_rank,)))
        else:
            out.append(("linear", (a.num_heads * qk, h)))
        out += [("linear", (a.kv_lora_rank + a.qk_rope_head_dim, h)), ("norm", (a.kv_lora_rank,))]
        if a.qkv_bias:
            out.append(("bias", (a.kv_lora_rank + a.qk_rope_head_dim,)))
        nope = a.head_dim - a.qk_rope_head_dim
        out.append(("linear", (a.num_heads * (nope + a.v_head_dim), a.kv_lora_rank)))
        out.append(("linear", (h, a.o_dim)))
        if a.o_bias:
            out.append(("bias", (h,)))
        return out
    q, kv = a.q_dim, a.kv_dim
    out += [("linear", (q, h)), ("linear", (kv, h)), ("linear", (kv, h)), ("linear", (h, q))]
    if a.qkv_bias:
        out += [("bias", (q,)), ("bias", (kv,)), ("bias", (kv,))]
    if a.o_bias:
        out.append(("bias", (h,)))
    if a.qk_norm == "head":
        out += [("norm", (a.head_dim,)), ("norm", (a.head_dim,))]
    elif a.qk_norm == "full":
        out += [("norm", (q,)), ("norm", (kv,))]
    if a.sinks:
        out.append(("other", (a.num_heads,)))
    return out


def expert_tensors(m: Mlp, h: int) -> list[tuple[str, tuple]]:
    """One routed expert's tensors (or the whole dense MLP when `m` is dense)."""
    return _dense_tensors(m.width, h, m.gated, m.bias)


def mlp_tensors(m: Mlp, h: int) -> list[tuple[str, tuple]]:
    """(role, shape) of one MLP block: the dense MLP, or the routed experts (role "expert"), the
    router and the shared experts."""
    if not m.is_moe:
        return expert_tensors(m, h)
    out = [("expert", s) for _, s in expert_tensors(m, h)] * m.experts
    out.append(("router", (m.experts, h)))
    if m.router_bias:
        out.append(("router", (m.experts,)))
    if m.shared_width:
        out += _dense_tensors(m.shared_width, h, True, False)
    return out


def layer_tensors(layer: Layer, h: int, norm_tensors: tuple) -> list[tuple[str, tuple]]:
    """(role, shape) of every parameter of one decoder layer; `norm_tensors` is one hidden-size
    norm's shapes ((h,) for RMSNorm, (h,), (h,) for LayerNorm)."""
    out = attention_tensors(layer.attention, h) + mlp_tensors(layer.mlp, h)
    out += [("norm", s) for s in norm_tensors] * layer.norms
    return out


def _numel(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


@functools.lru_cache(maxsize=4096)  # a stack repeats one Layer; MoE layers list every expert
def layer_params(layer: Layer, h: int, norm_tensors: tuple) -> int:
    """All parameters of one layer (every expert)."""
    return sum(_numel(s) for _, s in layer_tensors(layer, h, norm_tensors))


@functools.lru_cache(maxsize=4096)  # a stack repeats one Layer; MoE layers list every expert
def expert_params(m: Mlp, h: int) -> int:
    """Parameters of one routed expert (weights and biases)."""
    return sum(_numel(s) for _, s in expert_tensors(m, h))


@functools.lru_cache(maxsize=4096)  # a stack repeats one Layer; MoE layers list every expert
def idle_expert_params(layer: Layer, h: int) -> int:
    """Parameters of the routed experts a token does not use: (E - k) experts (0 when dense).
    Active parameters = total - this (routed experts at k/E of their size, all else in full)."""
    m = layer.mlp
    if not m.is_moe:
        return 0
    return (m.experts - m.experts_per_token) * expert_params(m, h)


@functools.lru_cache(maxsize=4096)  # a stack repeats one Layer; MoE layers list every expert
def linear_weights(layer: Layer, h: int) -> int:
    """Weights of the layer's linear maps (attention projections, dense/shared MLP, every routed
    expert): what weight quantisation replaces; no biases, norms, sinks or router."""
    return sum(
        _numel(s)
        for role, s in layer_tensors(layer, h, ())
        if role in ("linear", "expert") and len(s) == 2
    )


@functools.lru_cache(maxsize=4096)  # a stack repeats one Layer; MoE layers list every expert
def linear_modules(layer: Layer) -> int:
    """Linear modules of one layer as a quantiser counts them (q, k, v, o or MLA's five, MLP's
    two or three, per expert and shared)."""
    return sum(1 for role, s in layer_tensors(layer, 1, ()) if role in ("linear", "expert"))


def kv_elems_per_token(a: Attention) -> int:
    """Elements one layer caches per token: K and V (2 * kv_dim) for MHA/GQA/MQA; for MLA the
    compressed latent and the shared rope key, kv_lora_rank + qk_rope_head_dim (DeepSeek-V2,
    arXiv:2405.04434 section 2.1; as vLLM's and SGLang's MLA caches store it)."""
    if a.kind == "mla":
        return a.kv_lora_rank + a.qk_rope_head_dim
    return 2 * a.kv_dim


def span(a: Attention, seq: int) -> int:
    """Tokens the layer keeps in its cache (and attends over, at most) for a `seq`-token sequence:
    `min(seq, window)` for sliding and chunked layers, else `seq`."""
    if a.span != "full" and a.window is not None:
        return min(seq, a.window)
    return seq
