"""Parameter counts and weight sizes (every guide page that names a model).

Part of hooks/facts/ (the guide's figures; see its __init__)."""

from __future__ import annotations

from functools import cache, lru_cache
from types import MappingProxyType

from .common import _frozen, _mem, model


@cache
def params(key: str) -> MappingProxyType:
    """Total and active parameter counts (advisor.arch.models, exact per transformers)."""
    from advisor.arch.models import active_param_count, param_count

    spec = model(key).spec
    total = param_count(spec)
    active = active_param_count(spec)
    return _frozen(
        name=model(key).display_name,
        total=total,
        active=active,
        total_billions=total / 1e9,
        active_billions=active / 1e9,
        active_share=active / total,
    )


@cache
def weights(key: str, fmt: str = "bf16") -> MappingProxyType:
    """Weight bytes (with quantisation scales) of a model in one weight format, and per parameter.

    From `advisor.memory.estimate.inference_memory` at batch 1 and a 1-token context, so that only the
    weights count.
    """
    m = _mem()
    est = m.inference_memory(m.InferenceSetup(model(key).spec, batch=1, seq=1, weights=fmt))
    w = est.components.get("weights", 0) + est.components.get("quant_scales", 0)
    n = params(key)["total"]
    return _frozen(bytes=w, bytes_per_param=w / n, bits_per_param=8 * w / n, params=n)


@lru_cache(maxsize=1)
def weight_formats() -> MappingProxyType:
    """Bytes per parameter of each weight format, measured on Llama 3.1 8B's weights."""
    return _frozen(
        **{
            f: weights("llama8b", f)
            for f in ("fp32", "bf16", "fp8", "int8", "int4", "nf4", "gptq", "awq", "nvfp4", "mxfp4")
        }
    )
