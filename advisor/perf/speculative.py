"""Speculative decoding and multi-token prediction (MTP): more than one output token per decode
step of the target model, at the cost of drafting and of verifying the drafted tokens.

A draft (a small model, or MTP modules that share the target's embedding and output head)
proposes `draft_tokens` tokens; the target verifies them in one forward pass over
`draft_tokens + 1` positions per sequence and keeps the accepted prefix plus one token of its
own. With each drafted token accepted with probability `acceptance`, independently, the
expected tokens per step are

    E = (1 - a^(k+1)) / (1 - a)

(Leviathan, Kalman and Matias 2023, "Fast Inference from Transformers via Speculative
Decoding", arXiv:2211.17192, eq. 1; Chen et al. 2023, arXiv:2302.01318). The default
acceptance is DeepSeek-V3's published figure for its one MTP module: "the acceptance rate of
the second token prediction ranges between 85% and 90%", giving "1.8 times TPS" (DeepSeek-AI
2024, DeepSeek-V3 Technical Report, arXiv:2412.19437 §5.4.3); we take the low end, 0.85.

Cost of one step (`time_per_token`): the verification pass reads the weights once and computes
`k + 1` positions per sequence (a decode step at batch `c * (k + 1)`), while the KV cache of
each sequence is read once, as in a normal step (its attention part is that of batch `c`);
the draft costs `draft_tokens` passes of `draft_layers` layers plus the output head (an MTP
module is one transformer block sharing the head, DeepSeek-V3 §2.2; `num_nextn_predict_layers:
1` in its config.json). A separate draft model is described by its layer count relative to the
target (`draft_layers` of the target's layers); its own KV cache is not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..core.errors import AdvisorError

# DeepSeek-V3 Technical Report (arXiv:2412.19437) §5.4.3: 85-90 % for the second token
DEFAULT_ACCEPTANCE = 0.85
MAX_DRAFT_TOKENS = 16


@dataclass(frozen=True)
class Speculation:
    """`draft_tokens` drafted per step, each accepted with probability `acceptance`; the
    draft costs `draft_layers` target-sized layers per drafted token (1: one MTP module)."""

    draft_tokens: int = 1
    acceptance: float = DEFAULT_ACCEPTANCE
    draft_layers: float = 1.0

    def __post_init__(self):
        k = self.draft_tokens
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_DRAFT_TOKENS:
            raise AdvisorError(
                "speculative.draft_tokens",
                f"draft_tokens: {k!r} must be a whole number from 1 to {MAX_DRAFT_TOKENS}",
                field="draft_tokens",
                maximum=MAX_DRAFT_TOKENS,
            )
        a = self.acceptance
        if isinstance(a, bool) or not isinstance(a, int | float) or not 0.0 <= a < 1.0:
            raise AdvisorError(
                "speculative.acceptance",
                f"acceptance: {a!r} must be a fraction from 0 to below 1",
                field="acceptance",
            )
        d = self.draft_layers
        if isinstance(d, bool) or not isinstance(d, int | float) or not 0.0 <= d <= 1000.0:
            raise AdvisorError(
                "speculative.draft_layers",
                f"draft_layers: {d!r} must be a number of layers from 0 to 1000",
                field="draft_layers",
            )

    @property
    def tokens_per_step(self) -> float:
        return tokens_per_step(self.draft_tokens, self.acceptance)

    def to_dict(self) -> dict:
        return {
            "draft_tokens": self.draft_tokens,
            "acceptance": self.acceptance,
            "draft_layers": self.draft_layers,
            "tokens_per_step": self.tokens_per_step,
        }


def tokens_per_step(draft_tokens: int, acceptance: float) -> float:
    """Expected tokens a sequence gains per target step (module docstring, Leviathan et al.
    2023 eq. 1): 1 + a + a^2 + ... + a^k."""
    return sum(acceptance**i for i in range(draft_tokens + 1))


def time_per_token(
    step: Callable[[int], Mapping[str, float]], batch: int, s: Speculation, num_layers: int
) -> float:
    """Seconds of target-GPU time per output token of each sequence with speculation `s`:
    (verification step + drafting) / tokens per step. `step(b)` is the decode step at batch
    `b` by parts (timing.decode_step_time: "seconds", "attention_s", "head_s")."""
    one = step(batch)
    wide = step(batch * (s.draft_tokens + 1))
    verify = wide["seconds"] - wide["attention_s"] + one["attention_s"]
    layer = max(0.0, one["seconds"] - one["head_s"]) / max(1, num_layers)
    draft = s.draft_tokens * (s.draft_layers * layer + one["head_s"])
    return (verify + draft) / s.tokens_per_step
