"""Prices: cloud rates, spot, rent vs buy, a training run's cost (budget page, FAQ).

Part of hooks/facts/ (the guide's figures; see its __init__)."""

from __future__ import annotations

import statistics
from functools import cache, lru_cache
from types import MappingProxyType

from . import hardware as _hardware
from . import sizes as _sizes
from .common import GPUS, HOURS_PER_YEAR, _frozen, catalog, gpu, model


@cache
def prices(key: str) -> MappingProxyType:
    """On-demand and spot prices per GPU-hour for one accelerator across the catalog's offers."""
    offers = catalog().offers_for(GPUS.get(key, key))
    # an offer with no on-demand price (on_demand_note: spot/capacity only) is left out of the
    # on-demand figures and of the discount (nothing to discount from)
    od = sorted(o.on_demand_usd_per_gpu_hour for o in offers if o.on_demand_usd_per_gpu_hour)
    spot = [o for o in offers if o.spot_usd_per_gpu_hour]
    disc = [
        1 - o.spot_usd_per_gpu_hour / o.on_demand_usd_per_gpu_hour
        for o in spot
        if o.on_demand_usd_per_gpu_hour
    ]
    return _frozen(
        offers=len(offers),
        providers=len({o.provider for o in offers}),
        min=od[0] if od else 0.0,
        median=statistics.median(od) if od else 0.0,
        max=od[-1] if od else 0.0,
        spot_offers=len(spot),
        spot_discount_median=statistics.median(disc) if disc else 0.0,
        spot_min=min((o.spot_usd_per_gpu_hour for o in spot), default=0.0),
    )


@lru_cache(maxsize=1)
def spot() -> MappingProxyType:
    """Spot discount (1 - spot / on-demand) over every catalog offer that lists a spot price and
    an on-demand one (a spot-only offer has nothing to discount from)."""
    offers = [
        o for o in catalog().offers if o.spot_usd_per_gpu_hour and o.on_demand_usd_per_gpu_hour
    ]
    disc = sorted(1 - o.spot_usd_per_gpu_hour / o.on_demand_usd_per_gpu_hour for o in offers)
    return _frozen(
        offers=len(offers),
        providers=len({o.provider for o in offers}),
        median=statistics.median(disc) if disc else 0.0,
        min=disc[0] if disc else 0.0,
        max=disc[-1] if disc else 0.0,
    )


BREAK_EVEN_CARDS = ("rtx4090", "rtx5090", "rtx3090", "rtxa6000", "rtx6000ada", "l40s", "h100")


def _break_even(key: str) -> MappingProxyType:
    c, p = _hardware.card(key), prices(key)
    hours = c["price_usd"] / p["median"]
    return _frozen(
        name=c["name"],
        tier=c["tier"],
        price_usd=c["price_usd"],
        usd_per_gpu_hour=p["median"],
        offers=p["offers"],
        hours=hours,
        years_full=hours / HOURS_PER_YEAR,
        years_half=hours / (HOURS_PER_YEAR * 0.5),
        months_full=12 * hours / HOURS_PER_YEAR,
    )


@lru_cache(maxsize=1)
def rent_vs_buy() -> MappingProxyType:
    """Simple break-even: hours of median on-demand rent that cost what the card costs.

    break-even hours = card price / hourly price; years at a utilisation u = hours / (8760 u).
    The full TCO (power, hosting, resale) is advisor.money.cost.tco; the budget calculator runs it.
    Rows: every guide card with both a catalog price and cloud offers. Data-centre cards have no
    list price (they are sold through quotes): for the H100 SXM the figures are hours of rent per
    10,000 USD of purchase price and for the catalog's dated street estimate.
    """
    rows = []
    for k in BREAK_EVEN_CARDS:
        if _hardware.card(k)["price_usd"] and prices(k)["median"]:
            rows.append(_break_even(k))
    ph = prices("h100")
    per = 10_000.0
    g = gpu("h100")
    street = g.price_usd or 0.0  # the catalog's street estimate (price_kind, price_date, source)
    return _frozen(
        rows=tuple(rows),
        first=rows[0],
        h100_usd_per_gpu_hour=ph["median"],
        h100_price_usd=_hardware.card("h100")["price_usd"],
        h100_price_kind=g.price_kind or "",
        h100_price_date=g.price_date or "",
        h100_street_hours=street / ph["median"],
        h100_street_months=12 * street / ph["median"] / HOURS_PER_YEAR,
        per_usd=per,
        h100_hours_per=per / ph["median"],
        h100_months_per=12 * per / ph["median"] / HOURS_PER_YEAR,
    )


@lru_cache(maxsize=1)
def training_run() -> MappingProxyType:
    """Llama 3.1 8B trained on 1e12 tokens on 8 H100: FLOPs (6ND, Kaplan et al. 2020) and the
    time, MFU and tokens/s of advisor's time model (advisor.perf.training.train_step: FSDP over 8
    GPUs, micro-batch 2 of 4,096 tokens, selective recomputation), with the measured error band
    of training predictions (advisor.perf.accuracy)."""
    from advisor.perf import accuracy, training
    from advisor.perf.parallel import Layout

    tokens, n_gpu = 1e12, 8
    n = _sizes.params("llama8b")["total"]
    flops = 6 * n * tokens
    st = training.train_step(
        model("llama8b").spec,
        gpu("h100"),
        Layout(dp=n_gpu, micro_batch=2, sharding="zero3"),
        seq=4096,
        precision="bf16",
        checkpointing="selective",
    )
    hours = tokens / st.tokens_per_s / 3600
    seconds = hours * 3600
    p = prices("h100")
    ft_tokens = 1e9  # a fine-tune on one billion tokens
    band = accuracy.band("training")
    return _frozen(
        tokens=tokens,
        ft_tokens=ft_tokens,
        ft_hours=ft_tokens / st.tokens_per_s / 3600,
        gpus=n_gpu,
        mfu=st.mfu,
        flops=flops,
        days=seconds / 86400,
        gpu_hours=hours * n_gpu,
        tokens_per_s=st.tokens_per_s,
        tokens_per_s_per_gpu=st.tokens_per_s_per_gpu,
        cost_usd=hours * n_gpu * p["median"],
        usd_per_gpu_hour=p["median"],
        band=_frozen(**band.to_dict())
        if band
        else _frozen(n=0, median_abs_error=0.0, worst_abs_error=0.0),
    )
