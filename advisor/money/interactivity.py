"""The curve serving benchmarks compare systems on: output tokens per second per GPU (what a
GPU earns) against output tokens per second per user (interactivity, 1 / TPOT), with the cost
of a million output tokens along it. SemiAnalysis's InferenceMAX/InferenceX plots
"Throughput Token per GPU" against "Latency Tok/s/user" and "Cost per Million Tokens" this way
(newsletter.semianalysis.com, "InferenceMAX: Open Source Inference Benchmarking", 2025-10-09);
NVIDIA's MLPerf Inference Interactive scenario sets a tokens/s/user floor on the same axes.

Each point of a serving plan (advisor.perf.serving.plan, concurrency 1, 2, 4, ...) is one point of
the curve; the cost is advisor.money.cost.cost_per_million_tokens at the plan's GPUs times the price
of one GPU-hour (none without a price), rented (a cloud offer's price) and owned
(`owned_usd_per_gpu_hour`: the owning total of advisor.money.cost.owning / own_totals, as the
budget calculator, recommend and the reports count it, over the busy GPU-hours of the horizon).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..data import systems as sysm
from . import cost
from .cost import cost_per_million_tokens


@dataclass(frozen=True)
class CurvePoint:
    concurrency: int
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float
    usd_per_million_tokens: float | None
    own_usd_per_million_tokens: float | None = None

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def curve(
    plan, usd_per_gpu_hour: float | None = None, own_usd_per_gpu_hour: float | None = None
) -> tuple[CurvePoint, ...]:
    """The plan's points as (interactivity, tokens/s per GPU, USD per million output tokens
    rented at `usd_per_gpu_hour` and owned at `own_usd_per_gpu_hour`), from the most interactive
    (concurrency 1) to the highest throughput."""
    out = []
    for p in plan.points:
        gpus = p.tokens_per_s / p.tokens_per_s_per_gpu
        usd = own = None
        if usd_per_gpu_hour is not None:
            usd = cost_per_million_tokens(p.tokens_per_s, usd_per_gpu_hour * gpus)
        if own_usd_per_gpu_hour is not None:
            own = cost_per_million_tokens(p.tokens_per_s, own_usd_per_gpu_hour * gpus)
        out.append(
            CurvePoint(
                concurrency=p.concurrency,
                tokens_per_s_per_user=p.tokens_per_s_per_user,
                tokens_per_s_per_gpu=p.tokens_per_s_per_gpu,
                usd_per_million_tokens=usd,
                own_usd_per_million_tokens=own,
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class OwnedHour:
    """What one busy GPU-hour of owned hardware costs: the owning total of `gpus_bought` cards
    (whole boards and their servers) over the horizon, divided by their busy GPU-hours."""

    usd_per_gpu_hour: float
    gpus_bought: int
    own_total_usd: float
    utilisation: float
    horizon_months: int
    server_priced: bool
    server_assumed: bool = False  # the server counted is a stated assumption (not published)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def owned_usd_per_gpu_hour(
    gpu,
    gpus: int,
    systems=(),
    *,
    utilisation: float,
    horizon_months: int,
    electricity_usd_per_kwh: float,
    pue: float = cost.DEFAULT_PUE,
) -> OwnedHour | None:
    """USD per busy GPU-hour of owning `gpus` x `gpu` (None without a card price). SXM / OAM
    cards are bought as whole boards (advisor.data.systems.purchase_for): `gpus` is rounded up
    to the smallest board multiple, and the hour is that purchase's, per GPU (stated: the
    board's other GPUs are taken to do the same work). The owning total is
    advisor.money.cost.own_totals(cost.owning(...)), the one the budget calculator, recommend
    and the reports use; busy hours = horizon x 730 h x `utilisation`."""
    price = getattr(gpu, "price_usd", None)
    if not price:
        return None
    sizes = sysm.platform_sizes(gpu, systems)
    n = gpus
    if sizes and not sysm.ownable(gpu, n, systems):
        n = min(math.ceil(gpus / s) * s for s in sizes)
    bought = sysm.purchase_for(gpu, n, systems)
    totals = cost.own_totals(
        cost.owning(
            float(price),
            n,
            float(gpu.tdp_w or 0),
            electricity_usd_per_kwh=electricity_usd_per_kwh,
            server_usd=bought.server_usd or 0.0,
            host_power_w=bought.host_power_w,
            pue=pue,
        ),
        utilisation=utilisation,
        horizon_months=horizon_months,
    )
    busy_h = horizon_months * cost.HOURS_PER_MONTH * utilisation * n
    return OwnedHour(
        usd_per_gpu_hour=totals.own_total / busy_h,
        gpus_bought=n,
        own_total_usd=totals.own_total,
        utilisation=utilisation,
        horizon_months=horizon_months,
        server_priced=bought.server_usd is not None,
        server_assumed=bool(getattr(bought, "server_assumed", False)),
    )


EP_MAX_BATCH_PER_GPU = 1024  # the largest load the expert-parallel curve goes to


@dataclass(frozen=True)
class EPCurve:
    """An expert-parallel deployment's curve (advisor.perf.expert_parallel.point at 1, 2, 4, ...
    sequences per GPU up to the KV cache's limit, at most EP_MAX_BATCH_PER_GPU) with its costs
    per million output tokens over `gpus` GPUs."""

    kv_limited_batch_per_gpu: int
    points: tuple  # advisor.perf.expert_parallel.EPPoint
    curve: tuple[CurvePoint, ...]


def ep_curve(
    spec,
    gpu,
    *,
    layout,
    gpus: int,
    input_tokens: int,
    output_tokens: int,
    weights: str,
    kv_dtype: str,
    usd_per_gpu_hour: float | None = None,
    own_usd_per_gpu_hour: float | None = None,
    engine: str | None = None,
    balancer_timeout_iters: int | None = None,
    balancer_batching_wait_iters: int = 0,
    cuda_graph_batch_sizes: tuple[int, ...] | None = None,
) -> EPCurve:
    """The interactivity curve of MoE serving with expert parallelism (`layout`) on `gpus` GPUs:
    every GPU a data-parallel attention rank holding `batch_per_gpu` sequences, so the total
    is tokens/s per GPU x `gpus`; the web API's and `advisor time serve --ep`'s one curve.
    `engine` "trtllm" adds TensorRT-LLM's fitted MoE term (efficiency.trtllm_moe_extra_s).
    With `balancer_timeout_iters` the points are a Server load under TensorRT-LLM's attention-
    DP balancer (expert_parallel.server_point: the group stalls on the busiest rank's released
    prompts, the first token waits for the release, its median), and with
    `cuda_graph_batch_sizes` its decode iterations padded to the next captured graph batch
    (expert_parallel.padding_s)."""
    from ..perf import expert_parallel as epm

    cap = epm.max_batch_per_gpu(
        spec,
        gpu,
        context=input_tokens + output_tokens,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        engine=engine,
    )
    top = min(cap, EP_MAX_BATCH_PER_GPU)
    levels, b = [], 1
    while b < top:
        levels.append(b)
        b *= 2
    if top >= 1:
        levels.append(top)
    kw = dict(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        engine=engine,
    )
    if balancer_timeout_iters:
        pts = tuple(
            epm.server_point(
                spec,
                gpu,
                batch_per_gpu=b,
                timeout_iters=balancer_timeout_iters,
                batching_wait_iters=balancer_batching_wait_iters,
                cuda_graph_batch_sizes=cuda_graph_batch_sizes,
                **kw,
            )
            for b in levels
        )
    else:
        pts = tuple(epm.point(spec, gpu, batch_per_gpu=b, **kw) for b in levels)

    def per_m(p, usd_h):
        if usd_h is None:
            return None
        return cost_per_million_tokens(p.tokens_per_s_per_gpu * gpus, usd_h * gpus)

    curve = tuple(
        CurvePoint(
            concurrency=p.batch_per_gpu,
            tokens_per_s_per_user=p.tokens_per_s_per_user,
            tokens_per_s_per_gpu=p.tokens_per_s_per_gpu,
            usd_per_million_tokens=per_m(p, usd_per_gpu_hour),
            own_usd_per_million_tokens=per_m(p, own_usd_per_gpu_hour),
        )
        for p in pts
    )
    return EPCurve(kv_limited_batch_per_gpu=cap, points=pts, curve=curve)
