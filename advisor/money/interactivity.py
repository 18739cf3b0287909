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
    )
