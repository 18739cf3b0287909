"""`python -m advisor cost run|tokens|tco`: cloud cost of a run, cost per 1M generated tokens, and
own-vs-rent total cost of ownership with break-even."""

from __future__ import annotations

from ..core import limits
from ..core.errors import AdvisorError
from ..core.units import GIB
from ..data.catalog import load_catalog
from ..memory import estimate as mem
from ..money import cost
from ..perf import efficiency as perf_eff
from ..perf import serving_fit as sfit
from ..perf import timing, training
from ._common import (
    MODEL_DEFAULTS,
    add_bench_args,
    add_model_args,
    count,
    fill_defaults,
    gpu_from_catalog,
    measured_from_args,
    model_from_args,
    number,
    print_json,
    reject_inapplicable,
)


def _common(p):
    p.add_argument("--gpu", required=True, help="accelerator id (python -m advisor gpus)")
    p.add_argument(
        "--gpus", type=count("gpus", maximum=limits.GPUS[1]), default=1, help="default 1"
    )
    p.add_argument("--currency", default="USD", choices=cost.CURRENCIES, help="default USD")
    p.add_argument("--json", action="store_true", help="print JSON")


def _cloud(p):
    p.add_argument("--provider", help="only this provider's offers")
    p.add_argument("--pricing", choices=cost.PRICINGS, help="default on_demand")


RUN_DEFAULTS = {
    **MODEL_DEFAULTS,
    "precision": "amp-bf16",
    "sharding": "ddp",
    "checkpointing": "none",
    "pricing": "on_demand",
}
TOKENS_DEFAULTS = {**MODEL_DEFAULTS, "weights": "bf16", "kv_dtype": "bf16", "pricing": "on_demand"}


def _money_arg(p, flag, field, bounds, default, help_text):
    p.add_argument(flag, type=number(field, bounds), default=default, help=help_text)


def register(subparsers) -> None:
    p = subparsers.add_parser("cost", help="cloud cost of a run, per 1M tokens, own vs rent (TCO)")
    sub = p.add_subparsers(dest="cost_command", metavar="WHAT")

    run = sub.add_parser("run", help="cloud cost of a training run")
    _common(run)
    _cloud(run)
    run.add_argument(
        "--hours",
        type=number("hours", limits.HOURS, exclusive_low=True),
        help="wall-clock hours (else estimated from --tokens)",
    )
    add_model_args(run)
    run.add_argument(
        "--tokens",
        type=count("tokens", *limits.TOKENS),
        help="training tokens (with --model/--config), e.g. 2e9",
    )
    run.add_argument("--precision", choices=mem.PRECISIONS, help="default amp-bf16")
    run.add_argument("--sharding", choices=mem.SHARDING, help="default ddp")
    run.add_argument("--checkpointing", choices=mem.CHECKPOINTING, help="default none")
    run.add_argument(
        "--mfu",
        type=number("mfu", limits.MFU),
        help="assumed MFU: step = model FLOPs / (GPUs x dense peak x MFU) "
        "(default: advisor's kernel-level model)",
    )
    add_bench_args(run)
    run.set_defaults(func=_run)

    tok = sub.add_parser("tokens", help="cloud cost per 1M generated tokens")
    _common(tok)
    _cloud(tok)
    tok.add_argument(
        "--tokens-per-s",
        type=number("tokens_per_s", limits.TOKENS_PER_S),
        help="measured tokens/s (else estimated)",
    )
    add_model_args(tok)
    tok.add_argument("--weights", choices=mem.WEIGHT_FORMATS, help="default bf16")
    tok.add_argument("--kv-dtype", choices=mem.KV_DTYPES, help="default bf16")
    add_bench_args(tok)
    tok.set_defaults(func=_tokens)

    t = sub.add_parser("tco", help="own vs rent: total cost of ownership and break-even")
    _common(t)
    frac = limits.FRACTION
    t.add_argument(
        "--utilisation",
        type=number("utilisation", frac, exclusive_low=True),
        required=True,
        help="busy share, 0-1 (e.g. 0.6)",
    )
    t.add_argument(
        "--horizon-months",
        type=count("horizon_months", *limits.MONTHS),
        default=36,
        help="default 36",
    )
    t.add_argument(
        "--electricity",
        type=number("electricity_usd_per_kwh", limits.USD_PER_KWH),
        required=True,
        help="USD per kWh",
    )
    t.add_argument(
        "--gpu-price",
        type=number("gpu_price", limits.USD_PER_CARD),
        help="USD per card (default: the catalog price)",
    )
    t.add_argument(
        "--cloud-price",
        type=number("cloud_price", limits.USD_PER_GPU_HOUR),
        help="USD per GPU-hour (default: cheapest catalog offer)",
    )
    _cloud(t)
    # Unset: the catalog's owning items (advisor.money.cost.owning_plan, as the budget
    # calculator, recommend and the reports): the server of catalog/systems, the network beyond
    # it, hosting per kW, support and resale of catalog/owning.
    _money_arg(
        t,
        "--server-usd",
        "server_usd",
        limits.USD_PER_SERVER,
        None,
        "server share, USD (default: the catalog's system)",
    )
    _money_arg(
        t,
        "--host-power-w",
        "host_power_w",
        limits.POWER_W,
        None,
        "host draw, W (default: the catalog's system)",
    )
    _money_arg(t, "--pue", "pue", limits.PUE, cost.DEFAULT_PUE, f"default {cost.DEFAULT_PUE}")
    _money_arg(
        t,
        "--hosting",
        "hosting_usd_per_month",
        limits.USD_PER_MONTH,
        None,
        "USD per month (default: colocation per kW, catalog/owning)",
    )
    _money_arg(
        t,
        "--hosting-per-kw",
        "hosting_usd_per_kw_month",
        limits.USD_PER_KW_MONTH,
        None,
        "colocation, USD per kW of IT power per month (default: catalog/owning)",
    )
    t.add_argument(
        "--no-software-support",
        action="store_true",
        help="leave the vendor's software subscription out (shown, not counted)",
    )
    _money_arg(t, "--maintenance", "maintenance", frac, 0.0, "share of price per year (default 0)")
    _money_arg(
        t, "--resale", "resale", frac, None, "share of price at the end (default: catalog/owning)"
    )
    _money_arg(t, "--loan-rate", "loan_rate", frac, 0.0, "annual interest, 0-1 (default 0)")
    t.add_argument(
        "--loan-months",
        type=count("loan_months", *limits.LOAN_MONTHS),
        default=0,
        help="loan term (default 0: cash)",
    )
    _money_arg(t, "--down-payment", "down_payment", frac, 0.0, "share paid up front")
    t.set_defaults(func=_tco)

    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _print(args, obj: dict, lines: list[str]) -> int:
    if args.json:
        return print_json(obj, sort_keys=True)
    print("\n".join(lines))
    return 0


def _money(v: float, currency: str) -> str:
    return f"{v:,.2f} {currency}"


def does_not_fit(what: str, need: int, gpu, hint: str) -> AdvisorError:
    """No price for a workload that does not fit: the error says why, and what to change."""
    return AdvisorError(
        "cost.does_not_fit",
        f"{what}: does not fit: needs {need / GIB:,.1f} GiB per GPU, {gpu.id} has "
        f"{gpu.memory_bytes / GIB:,.1f} GiB; no price for a run that cannot start ({hint})",
        field="gpu",
        gpu=gpu.id,
        needs_gib=round(need / GIB, 1),
        has_gib=round(gpu.memory_bytes / GIB, 1),
    )


def _run(args) -> int:
    catalog = load_catalog(args.catalog)
    gpu = gpu_from_catalog(catalog, args.gpu)
    estimate = None
    hours = args.hours
    if hours is not None:
        options = ("tokens", "model", "config", "mfu", "batch", "seq", "precision", "sharding")
        reject_inapplicable(args, (*options, "checkpointing"), "a run given in --hours")
    fill_defaults(args, RUN_DEFAULTS)
    if hours is None:
        if args.tokens is None:
            raise AdvisorError(
                "field.required", "hours: give --hours, or --tokens with --model", field="hours"
            )
        spec = model_from_args(args, catalog)
        setup = mem.TrainingSetup(
            model=spec,
            batch=args.batch,
            seq=args.seq,
            precision=args.precision,
            checkpointing=args.checkpointing,
            gpus=args.gpus,
            sharding=args.sharding,
        )
        est = mem.training_memory(setup)
        if est.total_bytes > gpu.memory_bytes:
            raise does_not_fit(
                "training",
                est.total_bytes,
                gpu,
                "try --sharding zero3, more --gpus, or --checkpointing full",
            )
        if args.mfu is not None:
            mfu, source = args.mfu, "--mfu"
        else:
            m = perf_eff.measured_for(gpu.id, measured_from_args(args))
            mfu, source = (m.train_mfu, m.source) if m else (None, "")
        step = training.setup_step(setup, gpu, mfu=mfu, mfu_source=source)
        estimate = training.run(step, args.tokens)
        bound = training.step_roofline(step, setup, gpu, est).bound
        hours = limits.check_range("hours", estimate.hours, limits.HOURS)
    c = cost.cloud_training_cost(
        hours,
        args.gpus,
        gpu.id,
        catalog.offers,
        provider=args.provider,
        pricing=args.pricing,
        currency=args.currency,
        rates=getattr(catalog, "currency", None),
    )
    training_d = None
    if estimate:
        training_d = {**estimate.to_dict(), "gpus": args.gpus, "bound": bound}
    obj = {"cost": c.to_dict(), "training": training_d}
    lines = []
    if estimate:
        lines.append(
            f"training: {estimate.hours:,.1f} h ({estimate.days:,.2f} days) on {args.gpus} x "
            f"{gpu.id}, {estimate.gpu_hours:,.0f} GPU-hours, MFU "
            f"{estimate.step.mfu:.0%}, {bound}-bound"
        )
    lines.append(f"cloud cost of {hours:,.1f} h on {args.gpus} x {gpu.id} ({args.pricing}):")
    for r in c.per_provider:
        lines.append(
            f"  {r.provider:<16} {r.instance:<28} {r.instances} x {r.gpus_per_instance} GPU "
            f"{r.usd_per_gpu_hour:>6.2f} USD/GPU-h  {_money(r.total, args.currency):>18}  "
            f"(read {r.read})"
        )
    lines.append(f"cheapest: {c.cheapest.provider} {_money(c.cheapest.total, args.currency)}")
    return _print(args, obj, lines)


def _tokens(args) -> int:
    catalog = load_catalog(args.catalog)
    gpu = gpu_from_catalog(catalog, args.gpu)
    rate = None
    tps = args.tokens_per_s
    if tps is not None:
        options = ("model", "config", "batch", "seq", "weights", "kv-dtype")
        reject_inapplicable(args, options, "a measured --tokens-per-s")
    fill_defaults(args, TOKENS_DEFAULTS)
    if tps is None:
        from ..arch.models import require_causal

        spec = require_causal(model_from_args(args, catalog))
        m = perf_eff.measured_for(gpu.id, measured_from_args(args))
        achievable = perf_eff.achievable_with(gpu, m) if m and m.bandwidth_fraction else None
        input_tokens, output_tokens = sfit.split_context(args.seq)
        # the serving model of every answer (advisor.perf.serving_fit): `batch` requests in
        # flight on one replica over the --gpus (tensor parallel)
        rate = sfit.fit(
            spec,
            gpu,
            gpus=args.gpus,
            concurrency=args.batch,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            weights=args.weights,
            kv_dtype=args.kv_dtype,
            tensor_parallel=args.gpus,
            achievable=achievable,
        )
        if rate.unsupported:
            u = rate.unsupported[0]
            raise AdvisorError(u.key, u.message, **u.params)
        if not rate.fits:
            raise does_not_fit(
                "inference",
                rate.total_bytes,
                gpu,
                "try more --gpus (tensor parallel), --weights int4, or a shorter --seq",
            )
        bound = timing.decode_roofline(
            spec,
            gpu,
            batch=args.batch,
            context=args.seq,
            weights=args.weights,
            kv_dtype=args.kv_dtype,
            tensor_parallel=args.gpus,
            achievable=achievable,
        ).bound
        tps = rate.point.tokens_per_s
    t = cost.cloud_cost_per_million_tokens(
        tps,
        args.gpus,
        gpu.id,
        catalog.offers,
        provider=args.provider,
        pricing=args.pricing,
        currency=args.currency,
        rates=getattr(catalog, "currency", None),
    )
    obj = {"tokens": t.to_dict(), "serving": rate.to_dict() if rate else None}
    lines = []
    if rate:
        from ..perf import accuracy

        how = "kernel-level model"
        if achievable is not None:
            how += f", bandwidth measured ({m.source})"
        band = accuracy.band("serving")
        if band:
            how += (
                f"; measured accuracy median ±{band.median_abs_error:.0%}, worst "
                f"±{band.worst_abs_error:.0%} on {band.n} runs"
            )
        p = rate.point
        lines.append(
            f"serving: {p.tokens_per_s:,.0f} tokens/s ({p.tokens_per_s_per_user:,.1f} per "
            f"request, {args.batch} in flight, {input_tokens} + {output_tokens} tokens each), "
            f"{bound}-bound, {how}"
        )
    lines.append(f"cost per 1M generated tokens at {tps:,.0f} tokens/s on {args.gpus} x {gpu.id}:")
    for provider, v in t.per_provider:
        lines.append(f"  {provider:<16} {_money(v, args.currency)}")
    lines.append(f"cheapest: {t.cheapest.provider} {_money(t.per_million_tokens, args.currency)}")
    return _print(args, obj, lines)


def _item_lines(plan, rate: float, cur: str) -> list[str]:
    """The owning items (advisor.money.cost.OwningPlan), one line each, as the budget calculator
    and the reports show them."""
    out = []
    for i in plan.items:
        if not i.priced:
            amount = "not priced"
        elif i.usd is not None:
            amount = _money(i.usd * rate, cur)
        elif i.usd_per_month is not None:
            amount = _money(i.usd_per_month * rate, cur) + " /month"
        else:
            amount = _money((i.usd_per_year or 0.0) * rate, cur) + " /year"
        if not i.counted:
            amount += " (not counted)"
        kind = f" [{i.source['kind']}]" if i.source and i.source.get("kind") else ""
        out.append(f"  {i.key:<18} {amount:>26}  {i.note}{kind}")
    return out


def _system_lines(plan) -> list[str]:
    """A rack or a desktop box bought whole (issue 34): its kind, cooling and whole power, as
    the report's cost section shows them (OwningPlan.system_kind, cooling, system_power_w)."""
    if not plan.system_priced_whole:
        return []
    parts = [p for p in (plan.system_kind, plan.cooling and f"{plan.cooling} cooling") if p]
    if plan.system_power_w:
        parts.append(f"{plan.system_power_w / 1000:,.1f} kW")
    return [f"  system: {plan.nodes} x {plan.system_name} ({', '.join(parts)})"]


def _tco(args) -> int:
    catalog = load_catalog(args.catalog)
    gpu = gpu_from_catalog(catalog, args.gpu)
    from ..data import systems as systems_data

    # a rack or a desktop box is priced whole (catalog/systems: GB200/GB300 NVL72, DGX Spark,
    # Mac Studio; issue 34): owning_plan takes its price over its accelerators
    bought = systems_data.purchase_for(gpu, args.gpus, getattr(catalog, "systems", ()))
    whole = getattr(bought, "system_usd", None) is not None
    if args.gpu_price is None and getattr(gpu, "price_usd", None) is None and not whole:
        raise AdvisorError(
            "cost.no_price",
            f"gpu-price: the catalog has no price for {gpu.id}; give --gpu-price",
            field="gpu_price",
            gpu=gpu.id,
        )
    cloud_price = args.cloud_price
    if cloud_price is not None:
        reject_inapplicable(args, ("provider", "pricing"), "a price given in --cloud-price")
    fill_defaults(args, {"pricing": "on_demand"})
    offer_text = "--cloud-price"
    if cloud_price is None:
        c = cost.cloud_training_cost(
            1.0, args.gpus, gpu.id, catalog.offers, provider=args.provider, pricing=args.pricing
        )
        cloud_price = c.cheapest.usd_per_gpu_hour
        offer_text = f"{c.cheapest.provider} {c.cheapest.instance}, read {c.cheapest.read}"
    import dataclasses

    plan = cost.owning_plan(
        gpu,
        args.gpus,
        electricity_usd_per_kwh=args.electricity,
        horizon_months=args.horizon_months,
        systems=getattr(catalog, "systems", ()),
        figures=getattr(catalog, "owning", None),
        pue=args.pue,
        price_usd=args.gpu_price,
        server_usd=args.server_usd,
        hosting_usd_per_kw_month=args.hosting_per_kw,
        software_support=not args.no_software_support,
        resale_fraction=args.resale,
    )
    over = {}
    if args.host_power_w is not None:
        over["host_power_w"] = args.host_power_w
    if args.hosting is not None:
        over["hosting_usd_per_month"] = args.hosting
    own = dataclasses.replace(
        plan.own,
        maintenance_fraction_per_year=args.maintenance,
        financing_rate_per_year=args.loan_rate,
        financing_months=args.loan_months,
        down_payment_fraction=args.down_payment,
        **over,
    ).validated()
    r = cost.tco(
        own,
        cloud_price,
        utilisation=args.utilisation,
        horizon_months=args.horizon_months,
        currency=args.currency,
        rates=getattr(catalog, "currency", None),
    )
    cur = args.currency
    obj = {
        "tco": r.to_dict(),
        "owning": plan.to_dict(),
        "cloud_usd_per_gpu_hour": cloud_price,
        "cloud_offer": offer_text,
    }
    be_u = (
        "never (renting is cheaper even at 100 %)"
        if r.break_even_utilisation is None
        else (f"{r.break_even_utilisation:.1%}")
    )
    be_m = (
        f"month {r.break_even_month}"
        if r.break_even_month is not None
        else f"not within {r.horizon_months} months"
    )
    lines = [
        f"own {args.gpus} x {gpu.id} vs rent at {cloud_price:.2f} USD/GPU-h ({offer_text}), "
        f"{r.utilisation:.0%} utilisation, {r.horizon_months} months:",
        *_item_lines(plan, r.rate, cur),
        *_system_lines(plan),
        f"  purchase            {_money(r.purchase, cur):>20}",
        f"  power per month     {_money(r.power_per_month, cur):>20}",
        f"  opex per month      {_money(r.opex_per_month, cur):>20}",
    ]
    if r.loan_payment_per_month:
        lines.append(f"  loan per month      {_money(r.loan_payment_per_month, cur):>20}")
    lines += [
        f"  resale at the end   {_money(r.resale_value, cur):>20}",
        f"  own total           {_money(r.own_total, cur):>20}",
        f"  cloud total         {_money(r.cloud_total, cur):>20}",
        f"  owning saves        {_money(r.savings, cur):>20}",
        f"  break-even utilisation: {be_u}; break-even (cash): {be_m}",
        "  year      own            cloud",
    ]
    for y in r.yearly:
        lines.append(f"  {y.year:>4} {_money(y.own, cur):>16} {_money(y.cloud, cur):>16}")
    return _print(args, obj, lines)
