"""`python -m advisor recommend`: rank every catalog accelerator x count for a workload, with the
reason for each rejection."""

from __future__ import annotations

import json

from .. import cost, recommend
from ..catalog import load_catalog
from ..units import GIB
from .cost import bench_args, measured_from_args, model_from_args


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "recommend", help="rank accelerators and counts for a workload (fit, time, cost)"
    )
    p.add_argument("--model", help="catalog model id")
    p.add_argument("--config", help="a Hugging Face config.json")
    p.add_argument("--task", default="inference", choices=recommend.TASKS, help="default inference")
    p.add_argument("--batch", type=int, default=1, help="sequences per GPU / replica (default 1)")
    p.add_argument("--seq", type=int, default=2048, help="context length (default 2048)")
    p.add_argument("--precision", help="training precision (default amp-bf16; qlora bf16)")
    p.add_argument("--quant", help="inference weight format (default bf16) / qlora base (nf4)")
    p.add_argument("--kv-dtype", default="bf16", help="KV cache precision (default bf16)")
    p.add_argument("--optimizer", default="adamw", help="default adamw")
    p.add_argument("--checkpointing", default="none", help="none|selective|full (default none)")
    p.add_argument("--lora-rank", type=int, default=16, help="default 16")
    p.add_argument("--target-tps", type=float, help="decode tokens/s needed (inference)")
    p.add_argument("--deadline-hours", type=float, help="training must finish within (hours)")
    p.add_argument("--dataset-tokens", type=float, help="training tokens (e.g. 2e9)")
    p.add_argument("--budget", type=float, help="in --currency")
    p.add_argument("--horizon-months", type=int, default=36, help="default 36")
    p.add_argument("--acquire", default="either", choices=recommend.ACQUIRE, help="default either")
    p.add_argument("--max-gpus", type=int, default=8, help="default 8")
    p.add_argument("--utilisation", type=float, help="busy share 0-1 (default: see --help text)")
    p.add_argument("--pricing", default="on_demand", choices=cost.PRICINGS)
    p.add_argument("--currency", default="USD", choices=cost.CURRENCIES)
    p.add_argument(
        "--electricity",
        type=float,
        default=recommend.DEFAULT_ELECTRICITY_USD_PER_KWH,
        help=f"USD per kWh when owning (default {recommend.DEFAULT_ELECTRICITY_USD_PER_KWH})",
    )
    p.add_argument("--server-usd-per-gpu", type=float, default=0.0, help="default 0")
    p.add_argument("--tier", action="append", help="datacenter|workstation|consumer (repeatable)")
    p.add_argument("--top", type=int, default=10, help="how many accepted rows to print")
    p.add_argument("--all", action="store_true", help="also print every rejection")
    p.add_argument("--json", action="store_true", help="print JSON")
    bench_args(p)
    p.set_defaults(func=_run)


def _run(args) -> int:
    catalog = load_catalog(args.catalog)
    spec = model_from_args(args, catalog)
    tokens = args.dataset_tokens
    if tokens is not None and float(tokens).is_integer():
        tokens = int(tokens)
    w = recommend.Workload(
        model=spec,
        task=args.task,
        batch=args.batch,
        seq=args.seq,
        precision=args.precision,
        quant=args.quant,
        kv_dtype=args.kv_dtype,
        optimizer=args.optimizer,
        checkpointing=args.checkpointing,
        lora_rank=args.lora_rank,
        target_tokens_per_s=args.target_tps,
        deadline_hours=args.deadline_hours,
        dataset_tokens=tokens,
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
    if args.json:
        print(json.dumps([r.to_dict() for r in recs], ensure_ascii=False, sort_keys=True))
        return 0
    ok = [r for r in recs if r.ok]
    bad = [r for r in recs if not r.ok]
    cur = args.currency
    print(
        f"{spec.name}: {args.task}, batch {args.batch}, seq {args.seq}: {len(ok)} fit, {len(bad)} rejected"
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
    if args.all:
        for r in bad:
            print(f"  x {r.gpu_id:<22} {r.count:>2}: {r.reasons[0].message}")
    elif bad:
        print(f"({len(bad)} rejected; --all lists each with its reason)")
    return 0
