"""`python -m advisor time train|plan|serve`: training step time, tokens per second and time to
train a token budget on a parallel layout; the cluster plan that meets a deadline or a budget;
serving TTFT, TPOT and throughput at a concurrency (or the whole curve). Every figure carries
the error band the published-measurement validation measured (advisor.perf.accuracy)."""

from __future__ import annotations

import argparse
import math

from ..core import limits
from ..core.errors import AdvisorError, parse_number, shown
from ..core.units import GIB
from ..data.catalog import load_catalog
from ..money import interactivity
from ..perf import (
    accuracy,
    cluster,
    efficiency,
    parallel,
    queueing,
    serving,
    speculative,
    timing,
    training,
)
from ..perf.parallel import Layout
from ._common import (
    _bare,
    count,
    gpu_from_catalog,
    model_from_args,
    number,
    print_json,
    print_table,
)


def _graph_sizes(text: str) -> tuple[int, ...]:
    """An argparse type: comma-separated CUDA-graph batch sizes, each a whole number in
    [1, 65536] (timing.check_graph_batch_sizes)."""
    parse = count("cuda_graph_batch_sizes", maximum=1 << 16)
    parts = [p.strip() for p in text.split(",")]
    if not all(parts):
        raise argparse.ArgumentTypeError(
            f"cuda_graph_batch_sizes: expected whole numbers separated by commas, got {text!r}"
        )
    return tuple(sorted({parse(p) for p in parts}))


def _inputs(args):
    """(catalog, model spec, accelerator) of the --catalog, --model/--config and --gpu options."""
    cat = load_catalog(args.catalog) if getattr(args, "catalog", None) else load_catalog()
    return cat, model_from_args(args, cat), gpu_from_catalog(cat, args.gpu)


def _tokens(field: str):
    """An argparse type: a token count as digits or 2e12, or with a K/M/B/T suffix (15T)."""
    plain = count(field, *limits.TOKENS)
    mult = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}

    def parse(text: str) -> int:
        t = str(text).strip()
        suffix = t[-1:].upper()
        if suffix in mult and t[:-1]:
            # the figure before the suffix is an ASCII decimal (errors.parse_number: "١.٥T" is
            # refused, not read as 1.5T); its product is checked before it becomes an int
            # (issue 40: 1.0e300T and 9.0e307K overflowed into a traceback)
            try:
                v = parse_number(field, t[:-1]) * mult[suffix]
                if not math.isfinite(v) or v > limits.TOKENS[1]:
                    raise AdvisorError(
                        "field.too_large",
                        f"{field}: must be at most {limits.TOKENS[1]:g}, got {shown(t)}",
                        field=field,
                        maximum=limits.TOKENS[1],
                    )
            except AdvisorError as exc:
                raise argparse.ArgumentTypeError(_bare(exc, field)) from None
            return plain(str(round(v)))
        return plain(t)

    parse.__name__ = field
    return parse


def _band(kind: str) -> str:
    b = accuracy.band(kind)
    if not b:
        return ""
    return (
        f"  (measured accuracy for {kind.replace('_', ' ').replace('moe', 'MoE')}: median ±{b.median_abs_error:.0%}, worst "
        f"±{b.worst_abs_error:.0%} over {b.n} published runs)"
    )


def _engine_moe_text(note: dict) -> str:
    """The line `time serve` prints when TensorRT-LLM's fitted MoE term applies
    (serving.engine_moe_note)."""
    b = note.get("band")
    band = (
        f"; held-out error median ±{b['median_abs_error']:.0%}, worst ±{b['worst_abs_error']:.0%} "
        f"over {b['n']} published runs"
        if b
        else ""
    )
    return (
        f"TensorRT-LLM MoE layers: the routed experts' time x {note['factor']:g} (fitted on "
        f"published TensorRT-LLM runs, not itemised{band})"
    )


def _price(catalog, gpu_id: str, given):
    if given is not None:
        return given
    # cheapest on-demand first; an offer with no on-demand price (spot/capacity only) gives none
    prices = [o.on_demand_usd_per_gpu_hour for o in catalog.offers_for(gpu_id)]
    return next((p for p in prices if p is not None), None)


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

    usd_h = number("price", limits.PRICE_USD_PER_GPU_HOUR)
    t = tsub.add_parser("train", help="one layout: step time, tokens/s, MFU, time to train")
    common(t)
    t.add_argument("--tp", type=count("tp", maximum=72), default=1, help="tensor parallel")
    t.add_argument("--pp", type=count("pp", maximum=1024), default=1, help="pipeline parallel")
    t.add_argument("--dp", type=count("dp", maximum=131072), default=1, help="data parallel")
    t.add_argument("--ep", type=count("ep", maximum=1024), default=1, help="expert parallel")
    t.add_argument("--cp", type=count("cp", maximum=1024), default=1, help="context parallel")
    t.add_argument(
        "--gpus-per-node",
        type=count("gpus_per_node", maximum=72),
        help="GPUs one NVLink domain joins (default: the accelerator's: 8 in an HGX node, a "
        "GB200/GB300 NVL72 rack's 72, spread evenly over racks past one)",
    )
    t.add_argument("--micro-batch", type=count("micro_batch", maximum=65536), default=1)
    t.add_argument("--micro-batches", type=count("micro_batches", maximum=65536), default=1)
    t.add_argument("--virtual-stages", type=count("virtual_stages", maximum=64), default=1)
    t.add_argument("--sharding", default="zero1", choices=("ddp", "zero1", "zero2", "zero3"))
    t.add_argument("--seq", type=count("seq", maximum=1 << 24), default=4096)
    t.add_argument("--precision", default="bf16", choices=training.PRECISIONS)
    t.add_argument("--checkpointing", default="none", choices=training.CHECKPOINTING)
    t.add_argument("--task", default="train", choices=("train", "lora", "qlora"))
    t.add_argument("--network", help="fabric between nodes (catalog/networks), needed past a node")
    t.add_argument("--tokens", type=_tokens("tokens"), help="token budget: also the time to train")
    t.add_argument(
        "--run",
        choices=tuple(cluster.TOKEN_BUDGETS),
        help="a published run's token budget (MLPerf Training's reference convergence, a full "
        "pretraining): the time to train it",
    )
    t.add_argument(
        "--imbalance",
        type=number("imbalance", (1.0, 16.0)),
        help=f"MoE: busiest GPU's routed load over the mean (default {training.TRAIN_IMBALANCE}, "
        "assumed)",
    )
    t.add_argument(
        "--moe-dispatcher",
        default="alltoall",
        choices=training.MOE_DISPATCHERS,
        help="MoE token dispatcher: Megatron-Core's dropless alltoall (default; the GPU waits for "
        "the host once per MoE layer and micro-batch) or flex (DeepEP / HybridEP with CUDA graphs)",
    )
    t.add_argument("--price", type=usd_h, help="USD per GPU-hour (default: cheapest offer)")
    t.set_defaults(func=run_train)

    pl = tsub.add_parser("plan", help="cluster plan: GPUs and layout for a deadline or budget")
    common(pl)
    pl.add_argument("--tokens", type=_tokens("tokens"), help="e.g. 2e12 or 15T")
    pl.add_argument(
        "--run",
        choices=tuple(cluster.TOKEN_BUDGETS),
        help="a published run's token budget, sequence length, global batch and task instead "
        "of --tokens",
    )
    pl.add_argument("--task", default="train", choices=("train", "lora", "qlora"))
    pl.add_argument(
        "--ep",
        type=count("ep", maximum=4096),
        help="MoE: expert parallel degree of every layout (default: the plan searches it)",
    )
    pl.add_argument("--seq", type=count("seq", maximum=1 << 20), default=4096)
    pl.add_argument(
        "--deadline-days", type=number("deadline_days", (0.0, 3650.0), exclusive_low=True)
    )
    pl.add_argument(
        "--budget", type=number("budget", limits.BUDGET, exclusive_low=True), help="USD"
    )
    pl.add_argument("--price", type=usd_h, help="USD per GPU-hour (default: cheapest offer)")
    pl.add_argument("--network", default="ib-ndr-400", help="fabric between nodes")
    pl.add_argument("--precision", default="bf16", choices=training.PRECISIONS)
    pl.add_argument("--checkpointing", default="auto", choices=("auto", *training.CHECKPOINTING))
    pl.add_argument("--global-batch-tokens", type=_tokens("global_batch_tokens"))
    pl.add_argument(
        "--max-gpus",
        type=count("max_gpus", maximum=cluster.MAX_CLUSTER_GPUS),
        default=cluster.MAX_CLUSTER_GPUS,
    )
    pl.set_defaults(func=run_plan)

    s = tsub.add_parser("serve", help="serving: TTFT, TPOT, tokens/s at a concurrency")
    common(s)
    s.add_argument("--tp", type=count("tp", maximum=72), default=1, help="TP per replica")
    s.add_argument(
        "--pp",
        type=count("pipeline_parallel", maximum=1024),
        default=1,
        help="pipeline stages per replica (a replica is TP x PP GPUs)",
    )
    s.add_argument("--gpus", type=count("gpus", *limits.GPUS), help="GPUs in all")
    s.add_argument("--input", type=count("input_tokens", maximum=1 << 24), default=1024)
    s.add_argument("--output", type=count("output_tokens", maximum=1 << 24), default=256)
    s.add_argument("--concurrency", type=count("concurrency", maximum=1 << 16))
    s.add_argument(
        "--weights",
        default="bf16",
        help="bf16|fp16|fp8|int8|int4|awq|nvfp4|q8_0|q4_k_m|mlx-4bit|...",
    )
    s.add_argument(
        "--kv-dtype", default="bf16", choices=("bf16", "fp16", "fp8", "nvfp4", "mxfp4")
    )  # nvfp4: Blackwell only (support.fp4_path)
    s.add_argument("--engine", default="vllm", choices=serving.ENGINES)
    s.add_argument(
        "--request-rate",
        type=number("request_rate", (0.0, 1e7), exclusive_low=True),
        help="requests/s arriving at random (all replicas): TTFT and TPOT under queueing",
    )
    s.add_argument(
        "--ttft-ms",
        type=number("ttft_ms", (0.0, 3_600_000.0), exclusive_low=True),
        help="TTFT limit: the largest request rate that meets the limits",
    )
    s.add_argument(
        "--tpot-ms",
        type=number("tpot_ms", (0.0, 3_600_000.0), exclusive_low=True),
        help="TPOT limit: the largest request rate that meets the limits",
    )
    s.add_argument(
        "--draft-tokens",
        type=count("draft_tokens", maximum=speculative.MAX_DRAFT_TOKENS),
        help="speculative decoding / MTP: tokens drafted per step (1 = DeepSeek-V3's MTP)",
    )
    s.add_argument(
        "--acceptance",
        type=number("acceptance", (0.0, 0.999)),
        help=f"acceptance rate of a drafted token (default {speculative.DEFAULT_ACCEPTANCE})",
    )
    s.add_argument(
        "--draft-layers",
        type=number("draft_layers", (0.0, 1000.0)),
        help="draft cost per drafted token, in target layers (default 1: one MTP module)",
    )
    s.add_argument(
        "--prefix-hit",
        type=number("prefix_hit", (0.0, 0.999)),
        default=0.0,
        help="fraction of prompt tokens found in the prefix cache",
    )
    s.add_argument("--price", type=usd_h, help="USD per GPU-hour (default: cheapest offer)")
    s.add_argument(
        "--utilisation",
        type=number("utilisation", limits.FRACTION, exclusive_low=True),
        default=0.6,
        help="owned hardware: busy fraction of the hours, for its cost per million tokens",
    )
    s.add_argument(
        "--horizon-months",
        type=count("horizon_months", *limits.MONTHS),
        default=36,
        help="owned hardware: months its owning total is spread over",
    )
    s.add_argument(
        "--ep",
        type=count("ep", maximum=4096),
        help="MoE: expert parallel over this many GPUs with data-parallel attention",
    )
    s.add_argument(
        "--batch-per-gpu",
        type=count("batch_per_gpu", maximum=1 << 16),
        help="with --ep: sequences per GPU (default: the KV-cache limit, at most 1024)",
    )
    s.add_argument(
        "--domain",
        type=count("domain", maximum=4096),
        help="scale-up domain (GPUs; default: the accelerator's, else 8)",
    )
    s.add_argument(
        "--imbalance",
        type=number("imbalance", (1.0, 16.0)),
        help="with --ep: busiest GPU's expert load over the mean (default 1.2, assumed)",
    )
    s.add_argument(
        "--two-batch-overlap",
        action="store_true",
        help="with --ep: two micro-batches, one's all-to-all behind the other's compute "
        "(DeepSeek-V3 §3.4, SGLang's TBO)",
    )
    s.add_argument(
        "--adp-timeout-iters",
        type=count("adp_timeout_iters", maximum=100_000),
        help="with --ep: a Server load (random arrivals) under TensorRT-LLM's attention-DP "
        "balancer holding new prompts up to this many iterations: the group stalls on the "
        "busiest GPU's released prompts, the first token waits for the release",
    )
    s.add_argument(
        "--adp-batching-wait-iters",
        type=count("adp_batching_wait_iters", minimum=0, maximum=100_000),
        default=0,
        help="with --adp-timeout-iters: iterations the balancer still waits once every GPU "
        "holds a prompt (default 0)",
    )
    s.add_argument(
        "--cuda-graph-batch-sizes",
        type=_graph_sizes,
        help="the engine's CUDA-graph batch sizes with padding, comma-separated (e.g. "
        "128,256,384,512; with --ep, also --adp-timeout-iters): a decode iteration runs the "
        "rows of the next size up, its KV-cache read the real batch's",
    )
    s.add_argument(
        "--no-cuda-graphs",
        action="store_true",
        help="the engine launches each iteration's kernels from the host (no CUDA graphs, as "
        "NVIDIA's MLPerf TensorRT-LLM runs): a host cost per iteration (fitted)",
    )
    s.add_argument(
        "--scheduler-steps",
        type=count("scheduler_steps", maximum=1024),
        help="with --request-rate or limits: vLLM multi-step scheduling, decode steps per "
        "cycle with chunked prefill off (AMD's MLPerf runs: 9)",
    )
    s.add_argument(
        "--prefill-min-queue",
        type=count("prefill_min_queue", minimum=0, maximum=1 << 20),
        help="with --scheduler-steps: waiting prompts that start a prefill at once "
        "(AMD's MLPerf vLLM: 10)",
    )
    s.add_argument(
        "--kv-on-demand",
        action="store_true",
        help="with --request-rate or limits: the scheduler admits requests while KV blocks "
        "remain (TensorRT-LLM max_utilization) instead of reserving whole contexts",
    )
    s.add_argument(
        "--disaggregate",
        action="store_true",
        help="split --gpus into prefill and decode pools of --tp GPUs each meeting "
        "--ttft-ms and --tpot-ms",
    )
    s.set_defaults(func=run_serve)


def _budget(args):
    """The --run budget (None without one); --tokens and --run together are refused."""
    if not getattr(args, "run", None):
        return None
    if args.tokens:
        raise AdvisorError(
            "cli.run_and_tokens",
            "--run sets the token budget: leave out --tokens",
            field="tokens",
        )
    return cluster.token_budget(args.run)


def _budget_dict(budget, spec) -> dict:
    out = budget.to_dict()
    if budget.model != spec.name:
        out["note"] = f"the budget was measured for {budget.model}, not {spec.name}"
    return out


def run_train(args) -> int:
    cat, spec, gpu = _inputs(args)
    budget = _budget(args)
    if budget:
        args.tokens = budget.tokens
    if args.imbalance is not None and not spec.is_moe:
        raise AdvisorError(
            "cli.not_moe",
            "--imbalance applies to a mixture-of-experts model",
            field="imbalance",
        )
    _, domain = parallel.domain_of(gpu)
    per_domain = args.gpus_per_node or parallel.gpus_per_domain(
        gpu, args.tp * args.pp * args.cp * args.dp
    )
    layout = Layout(
        tp=args.tp,
        pp=args.pp,
        dp=args.dp,
        ep=args.ep,
        cp=args.cp,
        gpus_per_node=per_domain,
        domain=domain,
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
        imbalance=training.TRAIN_IMBALANCE if args.imbalance is None else args.imbalance,
        moe_dispatcher=args.moe_dispatcher,
    )
    _check_fits(spec, gpu, st.layout, args)
    out = {"step": st.to_dict(), "accuracy": accuracy.band_dict("training")}
    if budget:
        out["budget"] = _budget_dict(budget, spec)
    if args.tokens:
        steps = math.ceil(args.tokens / st.tokens_per_step)
        hours = steps * st.step_time_s / 3600
        if hours > cluster.HORIZON_HOURS:
            raise AdvisorError(
                "run.beyond_horizon",
                f"tokens: {args.tokens:.3g} tokens take {hours / 24:,.0f} days on this layout, "
                f"past the {cluster.HORIZON_HOURS / 8760:.0f}-year horizon; use more GPUs "
                "(time plan) or fewer tokens",
                field="tokens",
                days=round(hours / 24),
                maximum_days=cluster.HORIZON_HOURS // 24,
            )
        price = _price(cat, gpu.id, args.price)
        out["run"] = {
            "tokens": args.tokens,
            "steps": steps,
            "hours": hours,
            "days": hours / 24,
            "gpu_hours": hours * layout.gpus,
            "cost_usd": hours * layout.gpus * price if price else None,
            "energy_kwh": (
                hours * layout.gpus * float(gpu.tdp_w) * cluster.DEFAULT_PUE / 1000
                if gpu.tdp_w
                else None
            ),
        }
    if args.json:
        return print_json(out)
    # the domain's own fabric (NVLink, Infinity Fabric, ICI, NeuronLink), not always NVLink
    fabric = gpu.scale_up.fabric if getattr(gpu, "scale_up", None) else gpu.interconnect
    print(
        f"{spec.name} on {layout.gpus} x {gpu.id} ({layout.label()}, {layout.nodes} "
        f"{layout.domain}(s) of {layout.gpus_per_node} GPUs on one {fabric} domain each)"
    )
    print(
        f"step {st.step_time_s:.3f} s, {st.tokens_per_s:,.0f} tokens/s "
        f"({st.tokens_per_s_per_gpu:,.0f} per GPU), MFU {st.mfu:.1%}" + _band("training")
    )
    parts = ", ".join(f"{k} {v:.3f} s" for k, v in st.parts_s.items() if v > 0)
    print(f"where the time goes: {parts}")
    if st.collectives:
        print(f"collectives: {_collectives_text(st.collectives)}")
    for note in st.notes:
        print(f"note: {note}")
    if "budget" in out:
        b = out["budget"]
        print(f"run: {b['what']} ({b['source']})" + (f"; {b['note']}" if "note" in b else ""))
    if "run" in out:
        r = out["run"]
        cost = f", {r['cost_usd']:,.0f} USD" if r["cost_usd"] else ""
        print(
            f"{r['tokens']:.3g} tokens: {r['steps']:,} steps, {r['hours']:,.1f} h "
            f"({r['days']:,.1f} days), {r['gpu_hours']:,.0f} GPU-hours{cost}"
            + (f", {r['energy_kwh']:,.0f} kWh" if r["energy_kwh"] is not None else "")
        )
    return 0


def _collectives_text(coll: dict) -> str:
    """'TP 4 on nvlink5 (scale-up), EP 64 on nvlink5 + ib-ndr-400 (scale-up+network), ...'."""
    names = {"expert_dp": "expert DP"}
    return ", ".join(
        f"{names.get(k, k.upper())} {v['ranks']} on {v['fabric']} ({v['over']})"
        for k, v in coll.items()
    )


def _check_fits(spec, gpu, layout, args) -> None:
    """A layout whose pipeline stage does not fit the card's memory by the planner's own
    advisor.perf.cluster.stage_memory_bytes is refused, never priced (issue 40: 2,324 of 3,712
    accepted layouts did not fit and still got a step time, cost and energy)."""
    need = cluster.stage_memory_bytes(
        spec, layout, args.seq, args.precision, args.checkpointing, task=args.task
    )
    if need > gpu.memory_bytes:
        raise AdvisorError(
            "layout.no_fit",
            f"layout: {layout.label()} needs {need / GIB:,.1f} GiB per GPU, more than the "
            f"{gpu.memory_bytes / GIB:,.1f} GiB of a {gpu.id}; use more GPUs (time plan finds "
            "a layout), activation checkpointing or a smaller micro-batch",
            field="layout",
            need_bytes=need,
            memory_bytes=gpu.memory_bytes,
        )


def run_plan(args) -> int:
    cat, spec, gpu = _inputs(args)
    budget = _budget(args)
    if budget is None and not args.tokens:
        raise AdvisorError(
            "field.required", "--tokens (or --run): the token budget is required", field="tokens"
        )
    seq, task, gbt = args.seq, args.task, args.global_batch_tokens
    if budget:
        args.tokens, seq, task = budget.tokens, budget.seq, budget.task
        if gbt is None and budget.global_batch_seqs:
            gbt = budget.global_batch_seqs * budget.seq
    price = _price(cat, gpu.id, args.price)
    p = cluster.plan(
        spec,
        gpu,
        tokens=args.tokens,
        seq=seq,
        deadline_hours=args.deadline_days * 24 if args.deadline_days else None,
        budget_usd=args.budget,
        price_usd_per_gpu_hour=price,
        network=_network(cat, args.network),
        precision=args.precision,
        checkpointing=args.checkpointing,
        global_batch_tokens=gbt,
        max_gpus=args.max_gpus,
        task=task,
        expert_parallel=args.ep,
    )
    if args.json:
        doc = {"plan": p.to_dict(), "accuracy": accuracy.band_dict("training")}
        if budget:
            doc["budget"] = _budget_dict(budget, spec)
        print_json(doc)
        return 0 if p.chosen else 2
    print(f"{spec.name} on {gpu.id}, {p.tokens:.3g} tokens, seq {p.seq}" + _band("training"))
    if budget:
        b = _budget_dict(budget, spec)
        print(f"run: {b['what']} ({b['source']})" + (f"; {b['note']}" if "note" in b else ""))
    rows = [
        (
            "*" if p.chosen is o else "",
            o.gpus,
            f"{o.nodes} x {o.layout.gpus_per_node}",
            o.layout.label(),
            f"{o.step.mfu:.1%}",
            f"{o.hours:,.1f}",
            f"{o.hours / 24:,.1f}",
            f"{o.gpu_hours:,.0f}",
            f"{o.cost_usd:,.0f}" if o.cost_usd else "-",
            f"{o.memory_per_gpu_bytes / GIB:.1f}",
        )
        for o in p.options
    ]
    head = f"{p.domain}s x GPUs"
    print_table(
        ("", "GPUs", head, "layout", "MFU", "hours", "days", "GPU-hours", "USD", "GiB/GPU"), rows
    )
    print(("chosen: " if p.chosen else "no plan: ") + p.reason)
    if p.chosen and p.chosen.step.collectives:
        print(
            f"collectives ({p.domain} = {p.domain_gpus} GPUs on one NVLink domain): "
            + _collectives_text(p.chosen.step.collectives)
        )
    return 0 if p.chosen else 2


def _speculation(args):
    if args.draft_tokens is None:
        for name in ("acceptance", "draft_layers"):
            if getattr(args, name) is not None:
                raise AdvisorError(
                    "cli.needs_draft_tokens",
                    f"--{name.replace('_', '-')} applies to speculative decoding: give "
                    "--draft-tokens too",
                    field=name,
                )
        return None
    return speculative.Speculation(
        draft_tokens=args.draft_tokens,
        acceptance=speculative.DEFAULT_ACCEPTANCE if args.acceptance is None else args.acceptance,
        draft_layers=1.0 if args.draft_layers is None else args.draft_layers,
    )


def _owned_hour(cat, gpu, gpus: int, args):
    """What a busy GPU-hour of owned `gpu` costs (advisor.money.interactivity.owned_usd_per_gpu_hour,
    the web API's `_owned_hour`; electricity at recommend's default)."""
    from ..advice import recommend

    return interactivity.owned_usd_per_gpu_hour(
        gpu,
        gpus,
        cat.systems,
        utilisation=args.utilisation,
        horizon_months=args.horizon_months,
        electricity_usd_per_kwh=recommend.DEFAULT_ELECTRICITY_USD_PER_KWH,
    )


def _one_point_plan(point):
    """A stand-in plan of one point, for interactivity.curve at --concurrency."""
    from types import SimpleNamespace

    return SimpleNamespace(points=(point,))


def _gpu_hour_price(cat, gpu, given):
    if given is not None:
        return given, "given"
    best = None
    for o in cat.offers:
        price = o.on_demand_usd_per_gpu_hour
        if o.gpu_id != gpu.id or price is None:
            continue
        if best is None or price < best.on_demand_usd_per_gpu_hour:
            best = o
    if best is None:
        return None, None
    return best.on_demand_usd_per_gpu_hour, f"cheapest on-demand offer ({best.provider})"


def _run_ep(args, cat, spec, gpu) -> int:
    from ..perf import expert_parallel as epm

    for name in ("request_rate", "draft_tokens", "ttft_ms", "tpot_ms", "concurrency"):
        if getattr(args, name) is not None:
            raise AdvisorError(
                "cli.not_with_ep",
                f"--{name.replace('_', '-')} does not apply with --ep",
                field=name,
            )
    gpus = args.gpus or args.ep
    if gpus % args.ep:
        raise AdvisorError(
            "ep.gpus_multiple",
            f"--gpus: {gpus} is not a multiple of the expert-parallel group of {args.ep}",
            field="gpus",
            gpus=gpus,
            ep=args.ep,
        )
    # the accelerator's scale-up domain unless given (the web API's choice)
    domain = args.domain or (gpu.scale_up.domain_size if gpu.scale_up else 8)
    layout = epm.EPLayout(
        ep=args.ep,
        domain=domain,
        imbalance=epm.DEFAULT_IMBALANCE if args.imbalance is None else args.imbalance,
        two_batch_overlap=bool(getattr(args, "two_batch_overlap", False)),
    )
    kv = args.kv_dtype
    price, price_from = _gpu_hour_price(cat, gpu, args.price)
    owned = _owned_hour(cat, gpu, gpus, args)
    timeout = getattr(args, "adp_timeout_iters", None)
    wait = getattr(args, "adp_batching_wait_iters", 0) or 0
    graphs = getattr(args, "cuda_graph_batch_sizes", None)
    if graphs and not timeout:
        raise AdvisorError(
            "ep.needs_ep",
            "--cuda-graph-batch-sizes applies with --adp-timeout-iters only",
            field="cuda_graph_batch_sizes",
        )
    ec = interactivity.ep_curve(
        spec,
        gpu,
        layout=layout,
        gpus=gpus,
        input_tokens=args.input,
        output_tokens=args.output,
        weights=args.weights,
        kv_dtype=kv,
        usd_per_gpu_hour=price,
        own_usd_per_gpu_hour=owned.usd_per_gpu_hour if owned else None,
        engine=args.engine,
        balancer_timeout_iters=timeout,
        balancer_batching_wait_iters=wait,
        cuda_graph_batch_sizes=graphs,
    )
    cap = ec.kv_limited_batch_per_gpu
    if cap < 1:
        raise AdvisorError(  # the web API's error (webapi.serving._serving_ep)
            "serving.no_room",
            f"gpu: the weights of {spec.name} leave no room for one request's KV cache on "
            f"{args.ep} x {gpu.id} with expert parallelism",
            field="gpu",
            gpu=gpu.id,
        )
    b = args.batch_per_gpu or min(cap, interactivity.EP_MAX_BATCH_PER_GPU)
    pkw = dict(
        batch_per_gpu=b,
        input_tokens=args.input,
        output_tokens=args.output,
        weights=args.weights,
        kv_dtype=kv,
        layout=layout,
        engine=args.engine,
    )
    if timeout:
        p = epm.server_point(
            spec,
            gpu,
            timeout_iters=timeout,
            batching_wait_iters=wait,
            cuda_graph_batch_sizes=graphs,
            **pkw,
        )
    else:
        p = epm.point(spec, gpu, **pkw)
    engine_moe = serving.engine_moe_note(spec, gpu, args.engine)
    if args.json:
        return print_json(
            {
                "engine_moe": engine_moe,
                "layout": layout.__dict__,
                "adp_balancer": (
                    {
                        "timeout_iters": timeout,
                        "batching_wait_iters": wait,
                        "cuda_graph_batch_sizes": list(graphs) if graphs else None,
                    }
                    if timeout
                    else None
                ),
                "kv_limited_batch_per_gpu": cap,
                "point": p.to_dict(),
                "points": [x.to_dict() for x in ec.points],
                "curve": [c.to_dict() for c in ec.curve],
                "usd_per_gpu_hour": price,
                "price_from": price_from,
                "owned": owned.to_dict() if owned else None,
            }
        )
    print(
        f"{spec.name} on {gpus} x {gpu.id}, expert parallel {args.ep} with data-parallel "
        f"attention, domain {domain}, imbalance {layout.load_factor}"
        + (", two-batch overlap" if layout.two_batch_overlap else "")
        + _band("moe_serving")
    )
    if engine_moe:
        print(_engine_moe_text(engine_moe))
    if timeout:
        print(
            f"Server load: TensorRT-LLM's attention-DP balancer holds new prompts up to {timeout} "
            f"iterations (then {wait} more once every GPU holds one); a release stalls the "
            "group on the busiest GPU's prompts; TTFT is the median wait for the release"
        )
        if graphs:
            print(
                f"CUDA graphs of batch {', '.join(str(g) for g in graphs)} with padding: a decode "
                "iteration runs the rows of the next size up, the KV cache of its real batch"
            )
    usd = {c.concurrency: c for c in ec.curve}

    def cell(v):
        return "-" if v is None else f"{v:.3f}"

    shown_pts = [p] if args.batch_per_gpu else list(ec.points)
    print_table(
        (
            "seq/GPU",
            "TTFT ms",
            "TPOT ms",
            "tok/s/user",
            "tok/s/GPU",
            "all-to-all",
            "USD/M tok rented",
            "USD/M tok owned",
        ),
        [
            (
                x.batch_per_gpu,
                f"{x.ttft_s * 1e3:.1f}",
                f"{x.tpot_s * 1e3:.1f}",
                f"{x.tokens_per_s_per_user:.1f}",
                f"{x.tokens_per_s_per_gpu:,.0f}",
                f"{x.all_to_all_share:.0%}",
                cell(getattr(usd.get(x.batch_per_gpu), "usd_per_million_tokens", None)),
                cell(getattr(usd.get(x.batch_per_gpu), "own_usd_per_million_tokens", None)),
            )
            for x in shown_pts
        ],
        left=0,
    )
    print(f"KV-cache limit per GPU: {cap} sequences")
    return 0


def _run_disagg(args, spec, gpu) -> int:
    from ..perf import disaggregated

    for name, given in (
        ("draft_tokens", args.draft_tokens is not None),
        ("prefix_hit", bool(args.prefix_hit)),
        ("request_rate", args.request_rate is not None),
        ("concurrency", args.concurrency is not None),
    ):
        if given:  # the split's model has none of them (the web API refuses them too)
            raise AdvisorError(
                "disagg.plain_only",
                f"--{name.replace('_', '-')} does not apply with --disaggregate",
                field=name,
            )
    if args.ttft_ms is None or args.tpot_ms is None or not args.gpus:
        raise AdvisorError(
            "cli.disagg_needs_targets",
            "--disaggregate needs --gpus, --ttft-ms and --tpot-ms",
            field="disaggregate",
        )
    p = disaggregated.split(
        spec,
        gpu,
        gpus=args.gpus,
        input_tokens=args.input,
        output_tokens=args.output,
        ttft_s=args.ttft_ms / 1e3,
        tpot_s=args.tpot_ms / 1e3,
        weights=args.weights,
        kv_dtype=args.kv_dtype,
        prefill_tp=args.tp,
        decode_tp=args.tp,
        engine=args.engine,
    )
    if args.json:
        return print_json({"disaggregated": p.to_dict() if p else None})
    if p is None:
        print("no split of prefill and decode GPUs meets the TTFT/TPOT targets")
        return 0
    print(
        f"{spec.name} on {args.gpus} x {gpu.id}: {p.prefill_instances} prefill x TP {p.prefill_tp}"
        f" + {p.decode_instances} decode x TP {p.decode_tp} ({p.decode_concurrency} sequences "
        "each)" + _band("serving")
    )
    print(
        f"{p.request_rate_per_s:.4g} requests/s, TTFT {p.ttft_s * 1e3:.1f} ms (prefill "
        f"{p.prefill_s * 1e3:.1f} ms, KV transfer {p.kv_transfer_s * 1e3:.2f} ms), TPOT "
        f"{p.tpot_s * 1e3:.1f} ms, {p.tokens_per_s_per_gpu:,.0f} tok/s/GPU"
    )
    return 0


def _kv_on_demand_concurrency(args, spec, gpu) -> int | None:
    """With --kv-on-demand: the requests per replica whose prompt + half answer fit the KV
    cache (serving.max_concurrency(kv_on_demand=True), what the load model admits); else None.
    The web API's `engine_settings` gives the same (webapi.serving._engine_settings)."""
    if not args.kv_on_demand:
        return None
    return serving.max_concurrency(
        spec,
        gpu,
        input_tokens=args.input,
        output_tokens=args.output,
        weights=args.weights,
        kv_dtype=args.kv_dtype,
        tensor_parallel=args.tp,
        engine=args.engine,
        pipeline_parallel=args.pp,
        kv_on_demand=True,
    )


def _engine_lines(args, on_demand: int | None = None) -> list[str]:
    """What the engine flags change, in the text output."""
    lines = []
    if args.no_cuda_graphs:
        lines.append(
            f"no CUDA graphs: {efficiency.DEFAULT_STACK.eager_iteration_ms:g} ms of host time "
            "per engine iteration (efficiency.Stack.eager_iteration_ms, fitted on NVIDIA's MLPerf "
            "runs)"
        )
    if args.cuda_graph_batch_sizes and not args.ep:
        lines.append(
            "CUDA graphs with padding at batch sizes "
            + ", ".join(str(g) for g in args.cuda_graph_batch_sizes)
            + ": a decode step runs the rows of the next size up (timing.padded_batch)"
        )
    if args.scheduler_steps is not None:
        gate = args.prefill_min_queue or 0
        lines.append(
            f"multi-step scheduling: {args.scheduler_steps} decode steps per cycle, chunked "
            "prefill off" + (f", a prefill starts once {gate} prompts wait" if gate else "")
        )
    if args.kv_on_demand:
        lines.append(
            "KV blocks on demand: a running request holds its prompt + half its answer"
            + (f" (room for {on_demand} per replica)" if on_demand is not None else "")
        )
    return lines


def _check_engine_flags(args) -> None:
    """The engine flags apply to plain tensor-parallel replicas (serving.point, queueing); each
    is refused where it would be ignored (with --ep or --disaggregate, or a scheduler flag
    without a load)."""
    given = [
        (flag, field)
        for flag, field, on in (
            ("--no-cuda-graphs", "cuda_graphs", args.no_cuda_graphs),
            ("--scheduler-steps", "scheduler_steps", args.scheduler_steps is not None),
            ("--prefill-min-queue", "prefill_min_queue", args.prefill_min_queue is not None),
            ("--kv-on-demand", "kv_on_demand", args.kv_on_demand),
        )
        if on
    ]
    if given and (args.ep or args.disaggregate):
        flag, field = given[0]
        raise AdvisorError(
            "serving.flag_needs_plain",
            f"{flag} applies to tensor-parallel replicas, not with --ep or --disaggregate",
            field=field,
        )
    load = args.request_rate is not None or args.ttft_ms is not None or args.tpot_ms is not None
    for flag, field in given:
        if field != "cuda_graphs" and not load:
            raise AdvisorError(
                "serving.flag_needs_load",
                f"{flag} applies with --request-rate, --ttft-ms or --tpot-ms",
                field=field,
            )
    if args.prefill_min_queue is not None and args.scheduler_steps is None:
        raise AdvisorError(
            "serving.flag_needs_steps",
            "--prefill-min-queue applies with --scheduler-steps",
            field="prefill_min_queue",
        )
    if args.cuda_graph_batch_sizes and args.disaggregate:
        raise AdvisorError(
            "serving.flag_needs_plain",
            "--cuda-graph-batch-sizes applies to tensor-parallel replicas or --ep, not with "
            "--disaggregate",
            field="cuda_graph_batch_sizes",
        )
    if args.cuda_graph_batch_sizes and args.no_cuda_graphs:
        raise AdvisorError(
            "serving.graph_sizes_without_graphs",
            "--cuda-graph-batch-sizes applies with CUDA graphs: leave out --no-cuda-graphs",
            field="cuda_graph_batch_sizes",
        )


def run_serve(args) -> int:
    from ..data import support

    cat, spec, gpu = _inputs(args)
    # an FP4 format only where the card runs it or an engine dequantises it (issue 34)
    support.check_weights(gpu, args.weights, args.kv_dtype)
    if args.pp > 1 and (args.ep or args.disaggregate):
        raise AdvisorError(  # expert parallelism and the disaggregated split have no stages
            "serving.pp_plain_only",
            "--pp applies to tensor-parallel replicas only (not with --ep or --disaggregate)",
            field="pipeline_parallel",
        )
    _check_engine_flags(args)
    if args.ep:
        return _run_ep(args, cat, spec, gpu)
    if args.two_batch_overlap:
        raise AdvisorError(
            "ep.needs_ep",
            "--two-batch-overlap applies with --ep only",
            field="two_batch_overlap",
        )
    if getattr(args, "adp_timeout_iters", None):
        raise AdvisorError(
            "ep.needs_ep",
            "--adp-timeout-iters applies with --ep only",
            field="adp_timeout_iters",
        )
    if args.disaggregate:
        return _run_disagg(args, spec, gpu)
    kw = dict(
        input_tokens=args.input,
        output_tokens=args.output,
        weights=args.weights,
        kv_dtype=args.kv_dtype,
        tensor_parallel=args.tp,
        pipeline_parallel=args.pp,
        gpus=args.gpus,
        engine=args.engine,
        speculative=_speculation(args),
        prefix_hit_rate=args.prefix_hit,
        cuda_graphs=not args.no_cuda_graphs,
        cuda_graph_batch_sizes=args.cuda_graph_batch_sizes,
    )
    # the scheduler's settings reach the load model only (queueing: module docstring 5)
    qkw = dict(
        kw,
        scheduler_steps=args.scheduler_steps,
        prefill_min_queue=args.prefill_min_queue,
        kv_on_demand=args.kv_on_demand,
    )
    plan = serving.plan(spec, gpu, **kw)
    if not plan.points:
        raise AdvisorError(  # the web API's error (webapi.serving); was an empty table, exit 0
            "serving.no_room",
            f"gpu: the weights of {spec.name} in {args.weights} leave no room for one request's "
            f"KV cache ({args.input + args.output} tokens) on {args.tp * args.pp} x {gpu.id}; use a "
            "higher tensor_parallel, smaller weights or a larger card",
            field="gpu",
            gpu=gpu.id,
        )
    price, price_from = _gpu_hour_price(cat, gpu, args.price)
    owned = _owned_hour(cat, gpu, args.gpus or args.tp * args.pp, args)
    own_h = owned.usd_per_gpu_hour if owned else None
    curve = interactivity.curve(plan, price, own_h) if plan.points else ()
    load = None
    if args.request_rate is not None:
        load = queueing.at_rate(spec, gpu, request_rate=args.request_rate, **qkw)
    best_rate = None
    limited = args.ttft_ms is not None or args.tpot_ms is not None
    if limited and plan.points:
        best_rate = queueing.max_rate(
            spec,
            gpu,
            ttft_s=args.ttft_ms / 1e3 if args.ttft_ms else None,
            tpot_s=args.tpot_ms / 1e3 if args.tpot_ms else None,
            **qkw,
        )
    point = None
    if args.concurrency:
        if args.concurrency > plan.kv_limited_concurrency:
            raise AdvisorError(
                "serving.kv_full",
                f"concurrency: {args.concurrency} requests of {args.input + args.output} tokens "
                f"do not fit the KV cache of one replica ({plan.kv_limited_concurrency} do)",
                field="concurrency",
                value=args.concurrency,
                maximum=plan.kv_limited_concurrency,
            )
        point = serving.point(spec, gpu, concurrency=args.concurrency, **kw)
    if args.json:
        return print_json(
            {
                "plan": plan.to_dict(),
                "point": point.to_dict() if point else None,
                "curve": [c.to_dict() for c in curve],
                "usd_per_gpu_hour": price,
                "price_from": price_from,
                "owned": owned.to_dict() if owned else None,
                "speculative": kw["speculative"].to_dict() if kw["speculative"] else None,
                "prefix_hit_rate": args.prefix_hit,
                "load": load.to_dict() if load else None,
                "max_rate": best_rate.to_dict() if best_rate else None,
                "limits": {"ttft_ms": args.ttft_ms, "tpot_ms": args.tpot_ms},
                "accuracy": accuracy.band_dict(accuracy.serving_kind(spec)),
                "compute_peak": timing.weight_peak_key(gpu, args.weights),
                "fp4_dequantised": timing.fp4_dequantised(gpu, args.weights),
                "fp4_weight_stream": efficiency.fp4_stream_note(gpu, args.weights, spec),
                "engine_moe": serving.engine_moe_note(spec, gpu, args.engine),
                "engine_settings": {
                    "cuda_graphs": not args.no_cuda_graphs,
                    "eager_iteration_ms": None
                    if not args.no_cuda_graphs
                    else efficiency.DEFAULT_STACK.eager_iteration_ms,
                    "cuda_graph_batch_sizes": list(args.cuda_graph_batch_sizes or ()) or None,
                    "scheduler_steps": args.scheduler_steps,
                    "prefill_min_queue": args.prefill_min_queue,
                    "kv_on_demand": args.kv_on_demand,
                    "kv_on_demand_concurrency": _kv_on_demand_concurrency(args, spec, gpu),
                },
            }
        )
    print(
        f"{spec.name} on {gpu.id}, TP {args.tp}"
        + (f" x PP {args.pp}" if args.pp > 1 else "")
        + f" x {plan.replicas} replica(s), "
        f"{args.input} in / {args.output} out, {args.weights} weights"
        + _band(accuracy.serving_kind(spec))
    )
    if timing.fp4_dequantised(gpu, args.weights):
        peak = timing.weight_peak_key(gpu, args.weights)
        print(
            f"{gpu.id} has no tensor cores for {args.weights}: weights dequantised, matmuls at {peak}"
        )
        stream = efficiency.fp4_stream_note(gpu, args.weights, spec)
        if stream:
            print(
                f"routed experts' {args.weights} weights stream at {stream['fraction']:.3f} of the "
                "copy bandwidth "
                f"(the weight-only kernel that upcasts them: {stream['source']})"
            )
    engine_moe = serving.engine_moe_note(spec, gpu, args.engine)
    if engine_moe:
        print(_engine_moe_text(engine_moe))
    for line in _engine_lines(args, _kv_on_demand_concurrency(args, spec, gpu)):
        print(line)
    limit = "; ".join(plan.notes) or f"max_num_seqs {serving.MAX_NUM_SEQS}"
    print(f"largest concurrency per replica: {plan.max_concurrency} ({limit})")
    if kw["speculative"]:
        sp = kw["speculative"]
        print(
            f"speculative decoding: {sp.draft_tokens} drafted token(s) per step, acceptance "
            f"{sp.acceptance:.2f}: {sp.tokens_per_step:.2f} tokens per step"
        )
    if args.prefix_hit:
        print(f"prefix cache: {args.prefix_hit:.0%} of prompt tokens skip the prefill")
    usd = {c.concurrency: c.usd_per_million_tokens for c in curve}
    own = {c.concurrency: c.own_usd_per_million_tokens for c in curve}
    if point is not None:
        one = interactivity.curve(_one_point_plan(point), price, own_h)[0]
        usd[point.concurrency], own[point.concurrency] = (
            one.usd_per_million_tokens,
            one.own_usd_per_million_tokens,
        )

    def cell(v):
        return "-" if v is None else f"{v:.3f}"

    rows = [
        (
            x.concurrency,
            f"{x.ttft_s * 1e3:.1f}",
            f"{x.tpot_s * 1e3:.1f}",
            f"{x.tokens_per_s_per_user:.1f}",
            f"{x.tokens_per_s:,.0f}",
            f"{x.tokens_per_s_per_gpu:,.0f}",
            cell(usd.get(x.concurrency)),
            cell(own.get(x.concurrency)),
        )
        for x in ([point] if point else plan.points)
    ]
    print_table(
        (
            "concurrency",
            "TTFT ms",
            "TPOT ms",
            "tok/s/user",
            "tok/s total",
            "tok/s/GPU",
            "USD/M tok rented",
            "USD/M tok owned",
        ),
        rows,
        left=0,
    )
    if price is not None:
        print(f"rented at {price:.2f} USD per GPU-hour ({price_from})")
    if owned is not None:
        print(
            f"owned at {owned.usd_per_gpu_hour:.2f} USD per busy GPU-hour ({owned.gpus_bought} "
            f"GPUs bought as whole systems, {owned.utilisation:.0%} busy over "
            f"{owned.horizon_months} months"
            + ("" if owned.server_priced else "; the server has no public price, not counted")
            + (
                "; the server's price is an assumption, not published: ask the vendor for a quote"
                if owned.server_assumed
                else ""
            )
            + ")"
        )
    if load is not None:
        print(
            f"at {load.request_rate_per_s:.4g} requests/s (random arrivals): "
            f"{load.concurrency:.1f} in flight per replica, TTFT {load.ttft_s * 1e3:.1f} ms "
            f"(queue {load.queue_wait_s * 1e3:.1f} ms), TPOT {load.tpot_s * 1e3:.1f} ms, "
            f"{load.tokens_per_s:,.0f} tok/s"
        )
    if limited:
        if best_rate is None:
            print("no request rate meets the TTFT/TPOT limits")
        else:
            print(
                f"largest request rate within the limits: {best_rate.request_rate_per_s:.4g}/s "
                f"(TTFT {best_rate.ttft_s * 1e3:.1f} ms, TPOT {best_rate.tpot_s * 1e3:.1f} ms, "
                f"{best_rate.tokens_per_s_per_gpu:,.0f} tok/s/GPU)"
            )
    return 0
