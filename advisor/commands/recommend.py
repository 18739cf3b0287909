"""`python -m advisor recommend`: rank every catalog accelerator x count for a workload, with the
reason for each rejection."""

from __future__ import annotations

from ..advice import recommend
from ..core import limits, vocab
from ..core.units import GIB
from ..data.catalog import load_catalog
from ..data.hardware import TIERS
from ..memory import estimate as mem
from ..money import cost
from ..perf import serving_fit as sfit
from ._common import (
    MODEL_DEFAULTS,
    add_bench_args,
    add_model_args,
    count,
    fill_defaults,
    measured_from_args,
    model_from_args,
    number,
    print_json,
    print_table,
    reject_inapplicable,
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "recommend", help="rank accelerators and counts for a workload (fit, time, cost)"
    )
    add_model_args(p)
    p.add_argument("--task", default="inference", choices=recommend.TASKS, help="default inference")
    p.add_argument(
        "--precision",
        choices=mem.PRECISIONS,
        help="training precision (default amp-bf16; qlora bf16)",
    )
    p.add_argument(
        "--weights",
        choices=vocab.WEIGHT_FORMATS,
        help="inference: weight format (default bf16)",
    )
    p.add_argument(
        "--quant",
        choices=tuple(dict.fromkeys((*mem.WEIGHT_FORMATS, *mem.QUANT))),
        help="qlora: the quantised base (default nf4); for inference, an older name of --weights",
    )
    p.add_argument("--kv-dtype", choices=mem.KV_DTYPES, help="inference, default bf16")
    p.add_argument("--optimizer", choices=mem.OPTIMIZERS, help="training, default adamw")
    p.add_argument(
        "--checkpointing",
        choices=mem.vocab.CHECKPOINTING_CHOICES,
        help="training; default: full for lora/qlora, else none",
    )
    p.add_argument("--lora-rank", type=count("lora_rank", 1, 65_536), help="lora/qlora, default 16")
    p.add_argument(
        "--target-tps",
        type=number("target_tokens_per_s", limits.TOKENS_PER_S),
        help="decode tokens/s needed (inference)",
    )
    p.add_argument(
        "--per-user-tps",
        type=number("target_tokens_per_s_per_user", limits.TOKENS_PER_S),
        help="inference: tokens/s each of the --batch requests in flight must see",
    )
    p.add_argument(
        "--formats",
        help="inference: weight formats to search, comma-separated in order of preference, "
        "or 'auto' (bf16,fp8,nvfp4,mxfp4,awq where the card runs them; FP4 only on FP4 tensor cores; "
        "then llama.cpp q8_0,q4_k_m and MLX mlx-4bit on desktop cards); default: --weights",
    )
    p.add_argument(
        "--deadline-hours",
        type=number("deadline_hours", limits.HOURS, exclusive_low=True),
        help="training must finish within (hours)",
    )
    p.add_argument(
        "--dataset-tokens",
        type=count("dataset_tokens", *limits.TOKENS),
        help="training tokens (2e9)",
    )
    p.add_argument(
        "--budget", type=number("budget", limits.BUDGET, exclusive_low=True), help="in --currency"
    )
    p.add_argument(
        "--horizon-months",
        type=count("horizon_months", *limits.MONTHS),
        default=36,
        help="default 36",
    )
    p.add_argument("--acquire", default="either", choices=recommend.ACQUIRE, help="default either")
    p.add_argument("--max-gpus", type=count("max_gpus", 1, 1024), default=8, help="default 8")
    p.add_argument(
        "--utilisation",
        type=number("utilisation", limits.FRACTION, exclusive_low=True),
        help="busy share 0-1 (default: a training run's own hours; serving 1)",
    )
    p.add_argument("--pricing", default="on_demand", choices=cost.PRICINGS)
    p.add_argument("--currency", default="USD", choices=cost.CURRENCIES)
    p.add_argument(
        "--electricity",
        type=number("electricity_usd_per_kwh", limits.USD_PER_KWH),
        help=f"USD per kWh when owning (default {recommend.DEFAULT_ELECTRICITY_USD_PER_KWH})",
    )
    p.add_argument(
        "--server-usd-per-gpu",
        type=number("server_usd_per_gpu", limits.USD_PER_SERVER),
        help="when owning, default 0",
    )
    p.add_argument("--tier", action="append", choices=TIERS, help="repeatable; default all")
    p.add_argument("--top", type=count("top", 1, 100_000), default=10, help="accepted rows shown")
    p.add_argument("--all", action="store_true", help="also print every rejection")
    p.add_argument(
        "--cluster",
        action="store_true",
        help="train: also plan clusters past one node (nodes x GPUs, TP x PP x DP) per accelerator",
    )
    p.add_argument("--network", default="ib-ndr-400", help="with --cluster: fabric between nodes")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_bench_args(p)
    p.set_defaults(func=_run)


TRAINING_ONLY = ("precision", "optimizer", "checkpointing", "dataset-tokens", "deadline-hours")


def _check_options(args) -> None:
    """Options that do not apply to the task are refused, not silently ignored."""
    if args.cluster and (args.task != "train" or not args.dataset_tokens):
        reject_inapplicable(args, ("cluster",), "a workload without --task train --dataset-tokens")
    if args.weights is not None and args.quant is not None:
        reject_inapplicable(args, ("quant",), "--weights (one name for the weight format)")
    if args.task == "inference":
        reject_inapplicable(args, (*TRAINING_ONLY, "lora-rank"), "--task inference")
    else:
        reject_inapplicable(
            args,
            ("target-tps", "per-user-tps", "formats", "kv-dtype", "weights"),
            f"--task {args.task}",
        )
        if args.task == "train":
            reject_inapplicable(args, ("lora-rank", "quant"), "--task train")
    if args.acquire == "rent":
        reject_inapplicable(args, ("electricity", "server-usd-per-gpu"), "--acquire rent")
    fill_defaults(
        args,
        {
            **MODEL_DEFAULTS,
            "kv_dtype": "bf16",
            "electricity": recommend.DEFAULT_ELECTRICITY_USD_PER_KWH,
            "server_usd_per_gpu": 0.0,
        },
    )


def _formats(text: str | None) -> tuple[str, ...]:
    """--formats: 'auto' or a comma-separated list of weight formats."""
    from ..core.errors import check_choice

    if not text:
        return ()
    if text.strip() == "auto":
        return sfit.SEARCH_FORMATS
    out = tuple(f.strip() for f in text.split(",") if f.strip())
    for f in out:
        check_choice("formats", f, vocab.WEIGHT_FORMATS)
    return out


def _run(args) -> int:
    _check_options(args)
    catalog = load_catalog(args.catalog)
    spec = model_from_args(args, catalog)
    w = recommend.Workload(
        model=spec,
        task=args.task,
        batch=args.batch,
        seq=args.seq,
        precision=args.precision,
        quant=args.quant,
        weights=args.weights,
        kv_dtype=args.kv_dtype,
        optimizer=args.optimizer or "adamw",
        checkpointing=args.checkpointing or "default",
        lora_rank=args.lora_rank or 16,
        target_tokens_per_s=args.target_tps,
        target_tokens_per_s_per_user=args.per_user_tps,
        formats=_formats(args.formats),
        kv_formats=sfit.SEARCH_KV if (args.formats or "").strip() == "auto" else (),
        deadline_hours=args.deadline_hours,
        dataset_tokens=args.dataset_tokens,
        budget=args.budget,
        horizon_months=args.horizon_months,
        acquire=args.acquire,
        max_gpus=args.max_gpus,
        utilisation=args.utilisation,
        pricing=args.pricing,
        currency=args.currency,
        electricity_usd_per_kwh=args.electricity,
        server_usd_per_gpu=args.server_usd_per_gpu,
        tiers=tuple(args.tier or ()),
    )
    recs = recommend.recommend(w, catalog, measured=measured_from_args(args))
    plans = recommend.cluster_plans(w, catalog, network_id=args.network) if args.cluster else ()
    if args.json:
        if args.cluster:
            return print_json(
                {
                    "candidates": [r.to_dict() for r in recs],
                    "cluster_plans": [p.to_dict() for p in plans],
                },
                sort_keys=True,
            )
        return print_json([r.to_dict() for r in recs], sort_keys=True)
    ok = [r for r in recs if r.ok]
    bad = [r for r in recs if not r.ok]
    cur = args.currency
    what = "requests in flight" if args.task == "inference" else "batch"
    print(
        f"{spec.name}: {args.task}, {what} {args.batch}, seq {args.seq}: {len(ok)} fit, "
        f"{len(bad)} rejected"
    )
    print(
        f"{'#':>3} {'accelerator':<22} {'n':>2} {'sharding':<10} {'GiB/GPU':>8} {'bound':<16} "
        f"{'time':>14} {'mode':<5} {'cost (' + cur + ')':>16}"
    )
    for r in ok[: args.top]:
        t = f"{r.hours:,.1f} h" if r.hours is not None else f"{r.tokens_per_s:,.0f} tok/s"
        print(
            f"{r.rank:>3} {r.gpu_id:<22} {r.count:>2} {r.sharding:<10} "
            f"{r.memory_per_gpu_bytes / GIB:>8.1f} {r.bound or '-':<16} {t:>14} {r.mode:<5} "
            f"{r.cost:>16,.0f}"
        )
        if r.tokens_per_s_per_user is not None:
            per_m = [
                f"{label} {v:,.2f} {cur}/Mtok"
                for label, v in (("rent", r.per_million_tokens), ("own", r.own_per_million_tokens))
                if v is not None
            ]
            print(
                f"      {r.weights} weights, {r.replicas} x TP{r.tensor_parallel}, "
                f"{r.concurrency_per_replica} in flight per replica: "
                f"{r.tokens_per_s_per_user:,.1f} tok/s per user, TTFT {r.ttft_s * 1e3:,.0f} ms; "
                + ", ".join(per_m)
            )
        for note in r.notes:
            print(f"      note: {note.message}")
    if args.all:
        for r in bad:
            print(f"  x {r.gpu_id:<22} {r.count:>2}: {r.reasons[0].message}")
    elif bad:
        print(f"({len(bad)} rejected; --all lists each with its reason)")
    if args.cluster:
        _print_plans(plans)
    return 0


def _print_plans(plans) -> None:
    from ..perf import accuracy

    b = accuracy.band("training")
    band = (
        f" (time: median ±{b.median_abs_error:.0%}, worst ±{b.worst_abs_error:.0%} on {b.n} "
        "published runs)"
        if b
        else ""
    )
    print(f"cluster plans, cheapest first{band}:")
    rows = []
    for p in plans:
        c = p.chosen
        if c is None:
            rows.append((p.gpu, "-", p.reason, "", "", "", ""))
            continue
        rows.append(
            (
                p.gpu,
                f"{c.gpus} ({c.nodes} nodes)",
                c.layout.label(),
                f"{c.step.mfu:.1%}",
                f"{c.hours / 24:,.1f}",
                f"{c.cost_usd:,.0f}" if c.cost_usd else "-",
                f"{c.energy_kwh / 1000:,.1f}" if c.energy_kwh is not None else "-",
            )
        )
    print_table(("accelerator", "GPUs", "layout", "MFU", "days", "cost USD", "MWh"), rows, left=3)
