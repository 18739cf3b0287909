"""The budget calculator: rent vs buy, a training run's cloud cost, cost per token."""

from __future__ import annotations

from dataclasses import dataclass

from ..advice import recommend
from ..core import limits
from ..core.errors import (
    AdvisorError,
)
from ..memory import estimate as memory
from ..money import cost
from ..perf import serving_fit as sfit
from ..perf import training as perf_training
from .common import (
    MAX_BATCH,
    MAX_GPUS,
    MAX_SEQ,
    _bands,
    _cheapest_offer,
    _f,
    _gpu,
    _gpu_info,
    _model,
    _Request,
    get_catalog,
)


@dataclass(frozen=True)
class BudgetRequest(_Request):
    gpu: str = _f("rtx-4090", "name")
    gpus: int = _f(4, "int", maximum=MAX_GPUS)
    price_usd: float | None = _f("", "optnum", bounds=limits.USD_PER_CARD)
    cloud_usd_per_gpu_hour: float | None = _f("", "optnum", bounds=limits.USD_PER_GPU_HOUR)
    utilisation: float = _f(0.6, "num", bounds=limits.FRACTION, exclusive_low=True)
    horizon_months: int = _f(36, "int", maximum=limits.MONTHS[1])
    electricity_usd_per_kwh: float = _f(
        recommend.DEFAULT_ELECTRICITY_USD_PER_KWH, "num", bounds=limits.USD_PER_KWH
    )
    pue: float = _f(cost.DEFAULT_PUE, "num", bounds=limits.PUE)
    # empty: the catalog's system for these cards (advisor.data.systems.purchase_for), as the reports
    server_usd: float | None = _f("", "optnum", bounds=limits.USD_PER_SERVER)
    # empty: the catalog's figures (catalog/owning: resale by the months owned, colocation per kW)
    resale_fraction: float | None = _f("", "optnum", bounds=limits.FRACTION)
    hosting_usd_per_kw_month: float | None = _f("", "optnum", bounds=limits.USD_PER_KW_MONTH)
    software_support: bool = _f(True, "flag")
    currency: str = _f("USD", "choice", choices=cost.CURRENCIES)
    model: str = _f("llama-3.2-1b", "name")  # "" (and no config): no training / token figures
    config: str = _f("", "text")
    train_tokens: int = _f(1_000_000_000, "tokens", maximum=limits.TOKENS[1])
    batch: int = _f(8, "int", maximum=MAX_BATCH)
    seq: int = _f(2048, "int", maximum=MAX_SEQ)


def _no_fit_reason(need: int, g) -> dict:
    return AdvisorError(
        "budget.does_not_fit",
        f"does not fit: needs {need / 2**30:,.1f} GiB per GPU, {g.id} has "
        f"{g.memory_bytes / 2**30:,.1f} GiB; no price for a run that cannot start",
        field="gpu",
        needs_gib=round(need / 2**30, 1),
        has_gib=round(g.memory_bytes / 2**30, 1),
    ).to_dict()


def budget(params: dict) -> dict:
    """Rent vs buy over a horizon (advisor.money.cost.tco) with the break-even series; the cloud cost
    of a training run (advisor.perf.training.setup_step, the kernel-level step) and per 1M
    generated tokens (advisor.perf.serving_fit, advisor.money.cost.cost_per_million_tokens). A workload
    that does not fit gets no price: its `reason` says why."""
    req = BudgetRequest.from_params(params)
    cat = get_catalog()
    g = _gpu(req.gpu)
    n = req.gpus
    from ..data import systems

    bought = systems.purchase_for(g, n, cat.systems)
    whole = bought.prices(g, n) if bought.system_usd is not None else None
    price = req.price_usd
    if price is None:
        # a rack or a desktop box priced whole: its price over its accelerators (Purchase.prices)
        price = whole[0] if whole else g.price_usd
        if price is None:
            raise AdvisorError(
                "budget.no_price",
                f"price_usd: no public price for {g.id}; enter one",
                field="price_usd",
                gpu=g.id,
            )
    hourly = req.cloud_usd_per_gpu_hour
    offer = None
    if hourly is None:
        offer = _cheapest_offer(g.id)
        note = cost.no_price_note(o for o in get_catalog().offers if o.gpu_id == g.id)
        if offer is None and note:
            raise AdvisorError(
                "budget.no_on_demand",
                f"cloud_usd_per_gpu_hour: no on-demand price published for {g.id}; spot or "
                f"capacity block only ({note}): enter a price",
                field="cloud_usd_per_gpu_hour",
                gpu=g.id,
            )
        if offer is None:
            raise AdvisorError(
                "budget.no_offer",
                f"cloud_usd_per_gpu_hour: no cloud offer for {g.id}; enter a price",
                field="cloud_usd_per_gpu_hour",
                gpu=g.id,
            )
        hourly = offer.on_demand_usd_per_gpu_hour
    plan = cost.owning_plan(
        g,
        n,
        electricity_usd_per_kwh=req.electricity_usd_per_kwh,
        horizon_months=req.horizon_months,
        systems=cat.systems,
        figures=cat.owning,
        pue=req.pue,
        price_usd=price,
        server_usd=req.server_usd,
        hosting_usd_per_kw_month=req.hosting_usd_per_kw_month,
        software_support=req.software_support,
        resale_fraction=req.resale_fraction,
    )
    own = plan.own
    t = cost.tco(
        own,
        hourly,
        utilisation=req.utilisation,
        horizon_months=req.horizon_months,
        currency=req.currency,
        rates=cat.currency,
    )
    td = t.to_dict()
    rate = td["rate"]
    out = {
        "gpu": _gpu_info(g),
        "gpus": n,
        "price_usd": price,
        "cloud_usd_per_gpu_hour": hourly,
        "offer": None
        if offer is None
        else {
            "provider": offer.provider,
            "instance": offer.instance,
            "region": offer.region,
            "read": offer.read,
        },
        "tco": td,
        "system": bought.to_dict(),
        "owning": plan.to_dict(),
        "server_usd": own.server_usd,
    }
    # Training run and per-token cost for the model (optional: model "" and no config).
    if req.model or req.config.strip():
        spec = _model(req)
        setup = memory.TrainingSetup(
            model=spec, batch=req.batch, seq=req.seq, precision="amp-bf16", gpus=n, sharding="zero3"
        )
        est = memory.training_memory(setup)
        fits = est.total_bytes <= g.memory_bytes
        training = {
            "tokens": req.train_tokens,
            "fits": fits,
            "total_bytes": est.total_bytes,
            "hours": None,
            "gpu_hours": None,
            "cloud_cost": None,
        }
        if fits:
            tt = perf_training.run(perf_training.setup_step(setup, g), req.train_tokens)
            training.update(
                hours=tt.hours, gpu_hours=tt.gpu_hours, cloud_cost=tt.gpu_hours * hourly * rate
            )
        else:
            training["reason"] = _no_fit_reason(est.total_bytes, g)
        out["training"] = training
        # Serving (advisor.perf.serving_fit, as everywhere): `batch` requests in flight on the n
        # GPUs, the layout with the most tokens/s; priced rented and owned at that point.
        inference = {
            "tokens_per_s_per_gpu": None,
            "per_million_tokens": None,
            "own_per_million_tokens": None,
            "tokens_per_s_per_user": None,
            "layout": None,
        }
        if not spec.causal:
            from ..arch.models import require_causal

            try:
                require_causal(spec)
            except AdvisorError as exc:
                inference["reason"] = exc.to_dict()
        else:
            i, o = sfit.split_context(req.seq)
            try:
                f = sfit.best_fit(
                    spec, g, gpus=n, concurrency=req.batch, input_tokens=i, output_tokens=o
                )
            except AdvisorError as exc:
                inference["reason"] = exc.to_dict()
                f = None
            if f is not None and not f.fits:
                inference["reason"] = _no_fit_reason(f.total_bytes, g)
            elif f is not None:
                tps = f.point.tokens_per_s
                busy_h = req.horizon_months * cost.HOURS_PER_MONTH * req.utilisation
                inference.update(
                    tokens_per_s_per_gpu=tps / n,
                    tokens_per_s_per_user=f.point.tokens_per_s_per_user,
                    per_million_tokens=cost.cost_per_million_tokens(tps, hourly * n) * rate,
                    own_per_million_tokens=td["own_total"] / (tps * 3600 * busy_h) * 1e6,
                    layout={
                        "label": f.label,
                        "tensor_parallel": f.tensor_parallel,
                        "replicas": f.replicas,
                        "per_replica": f.per_replica,
                    },
                )
        out["inference"] = inference
        out["accuracy"] = _bands("training", "decode")
    return out
