"""Inference and serving memory, KV cache, GPUs per served model (serving page, FAQ).

Part of hooks/facts/ (the guide's figures; see its __init__)."""

from __future__ import annotations

from functools import cache, lru_cache
from types import MappingProxyType

from . import sizes as _sizes
from .common import _frozen, _mem, gpu, model


@cache
def inference(
    key: str,
    batch: int = 1,
    seq: int = 4096,
    weights: str = "bf16",  # noqa: A002 - matches InferenceSetup
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
) -> MappingProxyType:
    """One inference setup through `advisor.memory.estimate.inference_memory` (per GPU)."""
    m = _mem()
    est = m.inference_memory(
        m.InferenceSetup(
            model(key).spec,
            batch=batch,
            seq=seq,
            weights=weights,
            kv_dtype=kv_dtype,
            tensor_parallel=tensor_parallel,
        )
    )
    c = dict(est.components)
    return _frozen(
        batch=batch,
        seq=seq,
        components=MappingProxyType(c),
        weights_bytes=c.get("weights", 0) + c.get("quant_scales", 0),
        kv_bytes=c.get("kv_cache", 0),
        peak_bytes=est.peak_allocated_bytes,
        overhead_bytes=est.overhead_bytes,
        total_bytes=est.total_bytes,
    )


@cache
def kv_per_token(key: str, kv_dtype: str = "bf16") -> int:
    """KV-cache bytes per token of context (advisor.memory.estimate.kv_cache_bytes_per_token)."""
    return _mem().kv_cache_bytes_per_token(model(key).spec, kv_dtype)


@lru_cache(maxsize=1)
def kv_table() -> MappingProxyType:
    """KV bytes per token for the guide's models, and the naive MHA figure for Llama 3.1 8B.

    The MHA figure (2 x layers x hidden x 2 bytes) is what a calculator that ignores grouped-query
    attention computes: K and V for every query head (Ainslie et al. 2023, arXiv:2305.13245).
    """
    spec = model("llama8b").spec
    mha = 2 * spec.num_layers * spec.num_heads * spec.head_dim * 2
    return _frozen(
        llama8b=kv_per_token("llama8b"),
        llama8b_fp8=kv_per_token("llama8b", "fp8"),
        llama70b=kv_per_token("llama70b"),
        llama405b=kv_per_token("llama405b"),
        mixtral=kv_per_token("mixtral"),
        llama8b_mha=mha,
        gqa_factor=mha / kv_per_token("llama8b"),
        kv_heads_8b=spec.num_kv_heads,
        heads_8b=spec.num_heads,
        layers_8b=spec.num_layers,
        head_dim_8b=spec.head_dim,
    )


@cache
def serving(
    key: str,
    gpu_key: str,
    context: int = 8192,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
    utilisation: float = 0.9,
) -> MappingProxyType:
    """vLLM-style serving capacity (advisor.memory.estimate.serving_capacity)."""
    g = gpu(gpu_key)
    s = _mem().serving_capacity(
        model(key).spec,
        g.memory_bytes,
        context=context,
        weights=weights,
        kv_dtype=kv_dtype,
        gpu_memory_utilization=utilisation,
        tensor_parallel=tensor_parallel,
    )
    return _frozen(
        gpu_name=g.name,
        gpu_bytes=g.memory_bytes,
        context=context,
        utilisation=utilisation,
        tensor_parallel=tensor_parallel,
        weights_bytes=s.weights_bytes,
        kv_bytes_per_token=s.kv_bytes_per_token,
        kv_budget_bytes=s.kv_budget_bytes,
        sequences=s.max_concurrent_sequences,
        max_context=s.max_context_tokens,
        tokens_in_cache=s.kv_cache_tokens,
    )


TP_DEGREES = (1, 2, 4, 8)  # tensor parallelism inside one 8-GPU server


@cache
def serving_gpus(key: str, gpu_key: str, users: int, context: int, w: str, kv: str):
    """Fewest GPUs (tensor-parallel degree within one 8-GPU server) whose vLLM memory plan
    (advisor.memory.estimate.serving_capacity) holds `users` concurrent sequences of `context` tokens;
    None if eight are not enough."""
    for t in TP_DEGREES:
        if model(key).spec.num_kv_heads % t:
            continue
        s = serving(key, gpu_key, context=context, weights=w, kv_dtype=kv, tensor_parallel=t)
        if s["sequences"] >= users:
            return t
    return None


@lru_cache(maxsize=1)
def serve_70b_users() -> MappingProxyType:
    """Serving Llama 3.1 70B to 100 concurrent users, each with 4k tokens of context.

    Weights and KV bytes from advisor.memory.estimate (weights incl. scales; KV = users x context x bytes
    per token); GPU counts from the vLLM plan (`serving_gpus`) on H100 and H200.
    """
    users, ctx = 100, 4096
    rows = {}
    for name, w, kv in (("bf16", "bf16", "bf16"), ("fp8", "fp8", "fp8"), ("int4", "awq", "fp8")):
        wb = _sizes.weights("llama70b", w)["bytes"]
        kvb = users * ctx * kv_per_token("llama70b", kv)
        h100 = serving_gpus("llama70b", "h100", users, ctx, w, kv)
        h200 = serving_gpus("llama70b", "h200", users, ctx, w, kv)
        rows[name] = _frozen(
            weights_bytes=wb,
            kv_bytes=kvb,
            total_bytes=wb + kvb,
            h100s=h100 or 0,
            h200s=h200 or 0,
        )
    return _frozen(users=users, context=ctx, h100_gib=gpu("h100").memory_gib, **rows)


@lru_cache(maxsize=1)
def serving_examples() -> MappingProxyType:
    """Concurrent 8k-token sequences of Llama 3.1 8B on common cards (bf16 weights and KV)."""
    return _frozen(
        context=8192,
        rtx4090=serving("llama8b", "rtx4090"),
        l40s=serving("llama8b", "l40s"),
        h100=serving("llama8b", "h100"),
        h100_fp8=serving("llama8b", "h100", weights="fp8", kv_dtype="fp8"),
    )
