"""Prefix caching: a prompt whose first tokens are already in the KV cache (a shared system
prompt, earlier turns of a conversation) is prefilled only from the first uncached token on.
vLLM's automatic prefix caching keeps full KV blocks keyed by the hash of the tokens up to them
and reuses them for a later request with the same prefix (docs.vllm.ai, "Automatic Prefix
Caching"; SGLang's RadixAttention, Zheng et al. 2024, arXiv:2312.07104 §3).

`hit_rate` is the fraction of prompt tokens found in the cache, averaged over requests (what
vLLM reports as its prefix cache hit rate). The prefill then processes
`input_tokens * (1 - hit_rate)` tokens. Stated simplifications: the attention of the new tokens
over the cached prefix is counted as attention among the new tokens only (it is a small part of
a prefill's FLOPs at the lengths where caching pays); the KV memory the shared prefix saves is
not counted (every request keeps its whole context, as without caching); decode is unchanged.
"""

from __future__ import annotations

import math

from ..core.errors import AdvisorError


def check_hit_rate(hit_rate: float) -> float:
    if (
        isinstance(hit_rate, bool)
        or not isinstance(hit_rate, int | float)
        or not math.isfinite(hit_rate)
        or not 0.0 <= hit_rate < 1.0
    ):
        raise AdvisorError(
            "serving.prefix_hit_rate",
            f"prefix_hit_rate: {hit_rate!r} must be a fraction from 0 to below 1",
            field="prefix_hit_rate",
        )
    return float(hit_rate)


def uncached_tokens(input_tokens: int, hit_rate: float) -> int:
    """Prompt tokens a prefill still computes: at least one (the last prompt token always runs,
    to give the first output token's logits)."""
    return max(1, round(input_tokens * (1.0 - check_hit_rate(hit_rate))))
