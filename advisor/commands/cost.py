"""`python -m advisor cost run|tokens|tco`: cloud cost of a run, cost per 1M generated tokens, and
own-vs-rent total cost of ownership with break-even."""

from __future__ import annotations

import json
from pathlib import Path

from .. import compute, cost
from ..catalog import load_catalog
from ..errors import AdvisorError
from ..units import GIB


def model_from_args(args, catalog):
    """The model of `--model NAME` (catalog preset) or `--config FILE` (a config.json)."""
    from ..models import from_config_json

    if getattr(args, "config", None):
        path = Path(args.config)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise AdvisorError(
                "file.unreadable", f"config: cannot read {path} ({exc.strerror})", field="config"
            ) from None
        return from_config_json(text, name=path.stem)
    if getattr(args, "model", None):
        return catalog.model(args.model).spec
    raise AdvisorError("field.required", "model: give --model NAME or --config FILE", field="model")


def gpu_from_catalog(catalog, gpu_id: str):
    finder = getattr(catalog, "gpu", None)
    if finder is not None:
        return finder(gpu_id)
    from ..errors import unknown_name

    for g in catalog.gpus:
        if g.id == gpu_id:
            return g
    raise unknown_name("gpu", gpu_id, [g.id for g in catalog.gpus])


def measured_from_args(args):
    """Measured efficiencies from bench_results/ (or --bench DIR) unless --no-bench; None when
    the folder is absent. Imported lazily: the benchmark reader is optional for advisor."""
    if getattr(args, "no_bench", False):
        return None
    folder = getattr(args, "bench", None)
    folder = Path(folder) if folder else Path(__file__).resolve().parents[2] / "bench_results"
    if not folder.is_dir():
        return None
    from ..benchresults import load_results, measured_efficiencies

    return measured_efficiencies(load_results(folder)) or None


def bench_args(p):
    p.add_argument("--bench", help="measured results folder (default: bench_results/)")
    p.add_argument(
        "--no-bench", action="store_true", help="ignore measured results; use the assumptions"
    )


def _common(p):
    p.add_argument("--gpu", required=True, help="accelerator id (python -m advisor gpus)")
    p.add_argument("--gpus", type=int, default=1, help="number of GPUs (default 1)")
    p.add_argument("--currency", default="USD", choices=cost.CURRENCIES, help="default USD")
    p.add_argument("--json", action="store_true", help="print JSON")


def _cloud(p):
    p.add_argument("--provider", help="only this provider's offers")
    p.add_argument(
        "--pricing", default="on_demand", choices=cost.PRICINGS, help="default on_demand"
    )


def _model_args(p):
    p.add_argument("--model", help="catalog model id")
    p.add_argument("--config", help="a Hugging Face config.json")
    p.add_argument("--batch", type=int, default=1, help="sequences per GPU (default 1)")
    p.add_argument("--seq", type=int, default=2048, help="context length (default 2048)")


def register(subparsers) -> None:
    p = subparsers.add_parser("cost", help="cloud cost of a run, per 1M tokens, own vs rent (TCO)")
    sub = p.add_subparsers(dest="cost_command", metavar="WHAT")

    run = sub.add_parser("run", help="cloud cost of a training run")
    _common(run)
    _cloud(run)
    run.add_argument("--hours", type=float, help="wall-clock hours (else estimated from --tokens)")
    _model_args(run)
    run.add_argument("--tokens", type=int, help="training tokens (with --model/--config)")
    run.add_argument(
        "--precision", default="amp-bf16", help="training precision (default amp-bf16)"
    )
    run.add_argument("--sharding", default="ddp", help="ddp|zero1|zero2|zero3 (default ddp)")
    run.add_argument("--checkpointing", default="none", help="none|selective|full")
    run.add_argument(
        "--mfu", type=float, help=f"assumed MFU (default {compute.FLAT_DEFAULTS['train_mfu']})"
    )
    bench_args(run)
    run.set_defaults(func=_run)

    tok = sub.add_parser("tokens", help="cloud cost per 1M generated tokens")
    _common(tok)
    _cloud(tok)
    tok.add_argument("--tokens-per-s", type=float, help="measured tokens/s (else estimated)")
    _model_args(tok)
    tok.add_argument("--weights", default="bf16", help="weight format (default bf16)")
    tok.add_argument("--kv-dtype", default="bf16", help="KV cache precision (default bf16)")
    bench_args(tok)
    tok.set_defaults(func=_tokens)

    t = sub.add_parser("tco", help="own vs rent: total cost of ownership and break-even")
    _common(t)
    t.add_argument("--utilisation", type=float, required=True, help="busy share, 0-1 (e.g. 0.6)")
    t.add_argument("--horizon-months", type=int, default=36, help="default 36")
    t.add_argument("--electricity", type=float, required=True, help="USD per kWh")
    t.add_argument("--gpu-price", type=float, help="USD per card (default: the catalog price)")
    t.add_argument(
        "--cloud-price", type=float, help="USD per GPU-hour (default: cheapest catalog offer)"
    )
    _cloud(t)
    t.add_argument("--server-usd", type=float, default=0.0, help="server share, USD (default 0)")
    t.add_argument("--host-power-w", type=float, default=0.0, help="host draw, W (default 0)")
    t.add_argument(
        "--pue", type=float, default=cost.DEFAULT_PUE, help=f"default {cost.DEFAULT_PUE}"
    )
    t.add_argument("--hosting", type=float, default=0.0, help="USD per month (default 0)")
    t.add_argument(
        "--maintenance", type=float, default=0.0, help="share of price per year (default 0)"
    )
    t.add_argument(
        "--resale", type=float, default=0.0, help="share of price at the end (default 0)"
    )
    t.add_argument("--loan-rate", type=float, default=0.0, help="annual interest, 0-1 (default 0)")
    t.add_argument("--loan-months", type=int, default=0, help="loan term (default 0: cash)")
    t.add_argument("--down-payment", type=float, default=0.0, help="share paid up front")
    t.set_defaults(func=_tco)

    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _print(args, obj: dict, lines: list[str]) -> int:
    if args.json:
        print(json.dumps(obj, ensure_ascii=False, sort_keys=True))
    else:
        print("\n".join(lines))
    return 0


def _money(v: float, currency: str) -> str:
    return f"{v:,.2f} {currency}"


def _run(args) -> int:
    catalog = load_catalog(args.catalog)
    gpu = gpu_from_catalog(catalog, args.gpu)
    estimate = None
    hours = args.hours
    if hours is None:
        if args.tokens is None:
            raise AdvisorError(
                "field.required", "hours: give --hours, or --tokens with --model", field="hours"
            )
        from .. import memory as mem

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
        eff = compute.DEFAULT_EFFICIENCY
        if args.mfu is not None:
            eff = compute.Efficiency(train_mfu=args.mfu, source="--mfu")
        else:
            eff = compute.efficiency_for(gpu.id, measured_from_args(args), eff)
        est = mem.training_memory(setup)
        estimate = compute.time_to_train(setup, gpu, args.tokens, efficiency=eff, memory=est)
        hours = estimate.hours
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
    obj = {"cost": c.to_dict(), "training": estimate.to_dict() if estimate else None}
    lines = []
    if estimate and not estimate.step.fits:
        lines.append(
            f"warning: does not fit: needs {est.total_bytes / GIB:.1f} GiB per GPU, "
            f"{gpu.id} has {gpu.memory_bytes / GIB:.1f} GiB (try --sharding zero3, more --gpus, "
            "or --checkpointing full)"
        )
        obj["fits"] = False
    if estimate:
        lines.append(
            f"training: {estimate.hours:,.1f} h ({estimate.days:,.2f} days) on {args.gpus} x "
            f"{gpu.id}, {estimate.gpu_hours:,.0f} GPU-hours, MFU "
            f"{estimate.step.model_flops_utilisation:.0%}, {estimate.step.roofline.bound}-bound"
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
    if tps is None:
        spec = model_from_args(args, catalog)
        rate = compute.decode_tokens_per_s(
            spec,
            gpu,
            batch=args.batch,
            context=args.seq,
            weights=args.weights,
            kv_dtype=args.kv_dtype,
            tensor_parallel=args.gpus,
            efficiency=compute.efficiency_for(gpu.id, measured_from_args(args)),
        )
        tps = rate.tokens_per_s
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
    obj = {"tokens": t.to_dict(), "decode": rate.to_dict() if rate else None}
    lines = []
    if rate:
        lines.append(
            f"decode: {rate.tokens_per_s:,.0f} tokens/s ({rate.tokens_per_s_per_sequence:,.1f} per "
            f"sequence), {rate.roofline.bound}-bound, bandwidth efficiency "
            f"{rate.efficiency.decode_bandwidth:.0%} ({rate.efficiency.source})"
        )
    lines.append(f"cost per 1M generated tokens at {tps:,.0f} tokens/s on {args.gpus} x {gpu.id}:")
    for provider, v in t.per_provider:
        lines.append(f"  {provider:<16} {_money(v, args.currency)}")
    lines.append(f"cheapest: {t.cheapest.provider} {_money(t.per_million_tokens, args.currency)}")
    return _print(args, obj, lines)


def _tco(args) -> int:
    catalog = load_catalog(args.catalog)
    gpu = gpu_from_catalog(catalog, args.gpu)
    price = args.gpu_price if args.gpu_price is not None else getattr(gpu, "price_usd", None)
    if price is None:
        raise AdvisorError(
            "cost.no_price",
            f"gpu-price: the catalog has no price for {gpu.id}; give --gpu-price",
            field="gpu_price",
            gpu=gpu.id,
        )
    cloud_price = args.cloud_price
    offer_text = "--cloud-price"
    if cloud_price is None:
        c = cost.cloud_training_cost(
            1.0, args.gpus, gpu.id, catalog.offers, provider=args.provider, pricing=args.pricing
        )
        cloud_price = c.cheapest.usd_per_gpu_hour
        offer_text = f"{c.cheapest.provider} {c.cheapest.instance}, read {c.cheapest.read}"
    own = cost.OwnHardware(
        gpu_price_usd=float(price),
        gpus=args.gpus,
        tdp_w=float(gpu.tdp_w),
        electricity_usd_per_kwh=args.electricity,
        server_usd=args.server_usd,
        host_power_w=args.host_power_w,
        pue=args.pue,
        hosting_usd_per_month=args.hosting,
        maintenance_fraction_per_year=args.maintenance,
        resale_fraction=args.resale,
        financing_rate_per_year=args.loan_rate,
        financing_months=args.loan_months,
        down_payment_fraction=args.down_payment,
    )
    r = cost.tco(
        own,
        cloud_price,
        utilisation=args.utilisation,
        horizon_months=args.horizon_months,
        currency=args.currency,
        rates=getattr(catalog, "currency", None),
    )
    cur = args.currency
    obj = {"tco": r.to_dict(), "cloud_usd_per_gpu_hour": cloud_price, "cloud_offer": offer_text}
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
