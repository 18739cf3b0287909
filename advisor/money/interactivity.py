"""The curve serving benchmarks compare systems on: output tokens per second per GPU (what a
GPU earns) against output tokens per second per user (interactivity, 1 / TPOT), with the cost
of a million output tokens along it. SemiAnalysis's InferenceMAX/InferenceX plots
"Throughput Token per GPU" against "Latency Tok/s/user" and "Cost per Million Tokens" this way
(newsletter.semianalysis.com, "InferenceMAX: Open Source Inference Benchmarking", 2025-10-09);
NVIDIA's MLPerf Inference Interactive scenario sets a tokens/s/user floor on the same axes.

Each point of a serving plan (advisor.perf.serving.plan, concurrency 1, 2, 4, ...) is one point of
the curve; the cost is advisor.money.cost.cost_per_million_tokens at the plan's GPUs times the price
of one GPU-hour (none without a price).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cost import cost_per_million_tokens


@dataclass(frozen=True)
class CurvePoint:
    concurrency: int
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float
    usd_per_million_tokens: float | None

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def curve(plan, usd_per_gpu_hour: float | None = None) -> tuple[CurvePoint, ...]:
    """The plan's points as (interactivity, tokens/s per GPU, USD per million output tokens),
    from the most interactive (concurrency 1) to the highest throughput."""
    out = []
    for p in plan.points:
        gpus = p.tokens_per_s / p.tokens_per_s_per_gpu
        usd = None
        if usd_per_gpu_hour is not None:
            usd = cost_per_million_tokens(p.tokens_per_s, usd_per_gpu_hour * gpus)
        out.append(
            CurvePoint(
                concurrency=p.concurrency,
                tokens_per_s_per_user=p.tokens_per_s_per_user,
                tokens_per_s_per_gpu=p.tokens_per_s_per_gpu,
                usd_per_million_tokens=usd,
            )
        )
    return tuple(out)
