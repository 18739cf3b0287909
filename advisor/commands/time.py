"""`python -m advisor time train|plan|serve`: training step time, tokens per second and time to
train a token budget on a parallel layout; the cluster plan that meets a deadline or a budget;
serving TTFT, TPOT and throughput at a concurrency (or the whole curve). Every figure carries
the error band the published-measurement validation measured (advisor.accuracy)."""

from __future__ import annotations

import json
import math

from .. import accuracy, cluster, serving, training
from ..catalog import load_catalog
from ..errors import AdvisorError, check_positive
from ..parallel import Layout
from ..units import GIB
from .cost import gpu_from_catalog, model_from_args


def _catalog(args):
    return load_catalog(args.catalog) if getattr(args, "catalog", None) else load_catalog()


def _tokens(text: str) -> int:
    """A token count: digits, a float such as 2e12, or 4M / 15T style suffixes."""
    s = str(text).strip().upper()
    mult = {"K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
    try:
        v = float(s[:-1]) * mult[s[-1]] if s and s[-1] in mult else float(s)
    except ValueError:
        raise AdvisorError(
            "field.not_number",
            f"tokens: expected a number such as 2e12 or 15T, got {text!r}",
            field="tokens",
        ) from None
    if not math.isfinite(v) or v < 1 or v > 1e16:
        raise AdvisorError("field.range", f"tokens: {text} is outside 1 .. 1e16", field="tokens")
    return int(v)


def _band(kind: str) -> str:
    b = accuracy.band(kind)
    if not b:
        return ""
    return (
        f"  (measured accuracy for {kind}: median ±{b.median_abs_error:.0%}, worst "
        f"±{b.worst_abs_error:.0%} over {b.n} published runs)"
    )


def _price(catalog, gpu_id: str, given):
    if given is not None:
        return check_positive("price", given, maximum=1000)
    offers = catalog.offers_for(gpu_id)
    return offers[0].on_demand_usd_per_gpu_hour if offers else None


def _network(catalog, name):
    return catalog.network(name) if name else None


def register(sub) -> None:
    p = sub.add_parser("time", help="training time, cluster plans and serving latency/throughput")
    tsub = p.add_subparsers(dest="time_command", metavar="WHAT", required=True)

    def common(q):
        src = q.add_mutually_exclusive_group(required=True)
        src.add_argument("--model", help="catalog model id")
        src.add_argument("--config", help="a Hugging Face config.json")
        q.add_argument("--gpu", required=True, help="catalog accelerator id")
        q.add_argument("--json", action="store_true", help="print JSON")

    t = tsub.add_parser("train", help="one layout: step time, tokens/s, MFU, time to train")
    common(t)
    t.add_argument("--tp", type=int, default=1, help="tensor parallel (inside a node)")
    t.add_argument("--pp", type=int, default=1, help="pipeline parallel")
    t.add_argument("--dp", type=int, default=1, help="data parallel")
    t.add_argument("--ep", type=int, default=1, help="expert parallel (MoE; out of DP)")
    t.add_argument("--cp", type=int, default=1, help="context parallel")
    t.add_argument("--gpus-per-node", type=int, default=8)
    t.add_argument("--micro-batch", type=int, default=1, help="sequences per micro-batch")
    t.add_argument("--micro-batches", type=int, default=1, help="micro-batches per step")
    t.add_argument("--virtual-stages", type=int, default=1, help="interleaved pipeline chunks")
    t.add_argument("--sharding", default="zero1", help="ddp|zero1|zero2|zero3")
    t.add_argument("--seq", type=int, default=4096)
    t.add_argument("--precision", default="bf16", help="|".join(training.PRECISIONS))
    t.add_argument("--checkpointing", default="none", help="|".join(training.CHECKPOINTING))
    t.add_argument("--task", default="train", help="train|lora|qlora")
    t.add_argument("--network", help="fabric between nodes (catalog/networks), needed past a node")
    t.add_argument("--tokens", type=_tokens, help="token budget: also print the time to train")
    t.add_argument("--price", type=float, help="USD per GPU-hour (default: cheapest offer)")
    t.set_defaults(func=run_train)

    pl = tsub.add_parser("plan", help="cluster plan: GPUs and layout for a deadline or budget")
    common(pl)
    pl.add_argument("--tokens", type=_tokens, required=True, help="token budget, e.g. 2e12 or 15T")
    pl.add_argument("--seq", type=int, default=4096)
    pl.add_argument("--deadline-days", type=float)
    pl.add_argument("--budget", type=float, help="USD")
    pl.add_argument("--price", type=float, help="USD per GPU-hour (default: cheapest offer)")
    pl.add_argument("--network", default="ib-ndr-400", help="fabric between nodes")
    pl.add_argument("--precision", default="bf16", help="|".join(training.PRECISIONS))
    pl.add_argument("--checkpointing", default="auto", help="auto|none|selective|full")
    pl.add_argument("--global-batch-tokens", type=_tokens)
    pl.add_argument("--max-gpus", type=int, default=cluster.MAX_CLUSTER_GPUS)
    pl.set_defaults(func=run_plan)

    s = tsub.add_parser("serve", help="serving: TTFT, TPOT, tokens/s at a concurrency")
    common(s)
    s.add_argument("--tp", type=int, default=1, help="tensor parallel per replica")
    s.add_argument("--gpus", type=int, help="GPUs in all (replicas = gpus / tp)")
    s.add_argument("--input", type=int, default=1024, help="prompt tokens")
    s.add_argument("--output", type=int, default=256, help="generated tokens")
    s.add_argument("--concurrency", type=int, help="requests in flight per replica")
    s.add_argument("--weights", default="bf16", help="bf16|fp16|fp8|int8|int4|...")
    s.add_argument("--kv-dtype", default="bf16", help="bf16|fp16|fp8")
    s.add_argument("--engine", default="vllm", help="|".join(serving.ENGINES))
    s.set_defaults(func=run_serve)


def run_train(args) -> int:
    cat = _catalog(args)
    spec = model_from_args(args, cat)
    gpu = gpu_from_catalog(cat, args.gpu)
    layout = Layout(
        tp=args.tp,
        pp=args.pp,
        dp=args.dp,
        ep=args.ep,
        cp=args.cp,
        gpus_per_node=args.gpus_per_node,
        micro_batch=args.micro_batch,
        micro_batches=args.micro_batches,
        virtual_stages=args.virtual_stages,
        sharding=args.sharding,
    )
    st = training.train_step(
        spec,
        gpu,
        layout,
        seq=args.seq,
        precision=args.precision,
        checkpointing=args.checkpointing,
        task=args.task,
        inter=_network(cat, args.network),
    )
    out = {"step": st.to_dict(), "accuracy": accuracy.band_dict("training")}
    if args.tokens:
        steps = math.ceil(args.tokens / st.tokens_per_step)
        hours = steps * st.step_time_s / 3600
        price = _price(cat, gpu.id, args.price)
        out["run"] = {
            "tokens": args.tokens,
            "steps": steps,
            "hours": hours,
            "days": hours / 24,
            "gpu_hours": hours * layout.gpus,
            "cost_usd": hours * layout.gpus * price if price else None,
            "energy_kwh": hours * layout.gpus * float(gpu.tdp_w) * cluster.DEFAULT_PUE / 1000,
        }
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(f"{spec.name} on {layout.gpus} x {gpu.id} ({layout.label()}, {layout.nodes} node(s))")
    print(
        f"step {st.step_time_s:.3f} s, {st.tokens_per_s:,.0f} tokens/s "
        f"({st.tokens_per_s_per_gpu:,.0f} per GPU), MFU {st.mfu:.1%}" + _band("training")
    )
    parts = ", ".join(f"{k} {v:.3f} s" for k, v in st.parts_s.items() if v > 0)
    print(f"where the time goes: {parts}")
    if "run" in out:
        r = out["run"]
        cost = f", {r['cost_usd']:,.0f} USD" if r["cost_usd"] else ""
        print(
            f"{r['tokens']:.3g} tokens: {r['steps']:,} steps, {r['hours']:,.1f} h "
            f"({r['days']:,.1f} days), {r['gpu_hours']:,.0f} GPU-hours{cost}, "
            f"{r['energy_kwh']:,.0f} kWh"
        )
    return 0


def run_plan(args) -> int:
    cat = _catalog(args)
    spec = model_from_args(args, cat)
    gpu = gpu_from_catalog(cat, args.gpu)
    price = _price(cat, gpu.id, args.price)
    p = cluster.plan(
        spec,
        gpu,
        tokens=args.tokens,
        seq=args.seq,
        deadline_hours=args.deadline_days * 24 if args.deadline_days else None,
        budget_usd=args.budget,
        price_usd_per_gpu_hour=price,
        network=_network(cat, args.network),
        precision=args.precision,
        checkpointing=args.checkpointing,
        global_batch_tokens=args.global_batch_tokens,
        max_gpus=args.max_gpus,
    )
    if args.json:
        print(
            json.dumps(
                {"plan": p.to_dict(), "accuracy": accuracy.band_dict("training")},
                ensure_ascii=False,
            )
        )
        return 0
    print(f"{spec.name} on {gpu.id}, {p.tokens:.3g} tokens, seq {p.seq}:" + _band("training"))
    print(
        f"{'GPUs':>6} {'layout':<28} {'MFU':>6} {'days':>9} {'GPU-h':>12} {'USD':>14} {'GiB/GPU':>8}"
    )
    for o in p.options:
        mark = "*" if p.chosen is o else " "
        cost = f"{o.cost_usd:,.0f}" if o.cost_usd else "-"
        print(
            f"{mark}{o.gpus:>5} {o.layout.label():<28} {o.step.mfu:>6.1%} {o.hours / 24:>9,.1f} "
            f"{o.gpu_hours:>12,.0f} {cost:>14} {o.memory_per_gpu_bytes / GIB:>8.1f}"
        )
    print(("chosen: " if p.chosen else "no plan: ") + p.reason)
    return 0 if p.chosen else 2


def run_serve(args) -> int:
    cat = _catalog(args)
    spec = model_from_args(args, cat)
    gpu = gpu_from_catalog(cat, args.gpu)
    plan = serving.plan(
        spec,
        gpu,
        input_tokens=args.input,
        output_tokens=args.output,
        weights=args.weights,
        kv_dtype=args.kv_dtype,
        tensor_parallel=args.tp,
        gpus=args.gpus,
        engine=args.engine,
    )
    point = None
    if args.concurrency and args.concurrency > plan.kv_limited_concurrency:
        raise AdvisorError(
            "serving.kv_full",
            f"concurrency: {args.concurrency} requests of {args.input + args.output} tokens do "
            f"not fit the KV cache of one replica ({plan.kv_limited_concurrency} do)",
            field="concurrency",
            value=args.concurrency,
            maximum=plan.kv_limited_concurrency,
        )
    if args.concurrency:
        point = serving.point(
            spec,
            gpu,
            concurrency=args.concurrency,
            input_tokens=args.input,
            output_tokens=args.output,
            weights=args.weights,
            kv_dtype=args.kv_dtype,
            tensor_parallel=args.tp,
            gpus=args.gpus,
            engine=args.engine,
        )
    if args.json:
        print(
            json.dumps(
                {
                    "plan": plan.to_dict(),
                    "point": point.to_dict() if point else None,
                    "accuracy": accuracy.band_dict("serving"),
                },
                ensure_ascii=False,
            )
        )
        return 0
    print(
        f"{spec.name} on {gpu.id}, TP {args.tp} x {plan.replicas} replica(s), "
        f"{args.input} in / {args.output} out, {args.weights} weights" + _band("serving")
    )
    print(
        f"largest concurrency per replica: {plan.max_concurrency} ({'; '.join(plan.notes) or 'max_num_seqs'})"
    )
    if point and args.concurrency > plan.kv_limited_concurrency:
        print(
            f"note: {args.concurrency} requests do not fit the KV cache ({plan.kv_limited_concurrency} do)"
        )
    print(f"{'conc.':>6} {'TTFT ms':>9} {'TPOT ms':>9} {'tok/s/user':>11} {'tok/s total':>12}")
    for x in [point] if point else plan.points:
        print(
            f"{x.concurrency:>6} {x.ttft_s * 1e3:>9.1f} {x.tpot_s * 1e3:>9.1f} "
            f"{x.tokens_per_s_per_user:>11.1f} {x.tokens_per_s:>12,.0f}"
        )
    return 0
