"""The serving calculator: the throughput-latency curve, its limits and rates."""

from __future__ import annotations

from dataclasses import dataclass

from ..advice import recommend
from ..core import limits, vocab
from ..core.errors import (
    AdvisorError,
)
from ..memory import estimate as memory
from ..perf import efficiency, timing
from .common import (
    INFER_WEIGHTS,
    MAX_GPUS,
    MAX_SEQ,
    _bands,
    _cheapest_offer,
    _f,
    _gpu,
    _gpu_info,
    _model,
    _model_info,
    _Request,
    get_catalog,
)


@dataclass(frozen=True)
class ServingRequest(_Request):
    model: str = _f("llama-3.1-8b", "name")
    config: str = _f("", "text")
    gpu: str = _f("h100-sxm", "name")
    tensor_parallel: int = _f(1, "int", maximum=72)
    # pipeline stages per replica: a replica is tensor_parallel x pipeline_parallel GPUs
    # (advisor.perf.serving, module docstring "Pipeline parallelism")
    pipeline_parallel: int = _f(1, "int", maximum=1024)
    gpus: int = _f(1, "int", maximum=MAX_GPUS)
    input_tokens: int = _f(1024, "int", maximum=MAX_SEQ)
    output_tokens: int = _f(256, "int", maximum=MAX_SEQ)
    weights: str = _f("bf16", "choice", choices=INFER_WEIGHTS)
    kv_dtype: str = _f("bf16", "choice", choices=memory.KV_DTYPES)
    engine: str = _f("vllm", "choice", choices=vocab.SERVING_ENGINES)
    ttft_ms: float | None = _f("", "optnum", bounds=(0.0, 3_600_000.0), exclusive_low=True)
    tpot_ms: float | None = _f("", "optnum", bounds=(0.0, 3_600_000.0), exclusive_low=True)
    # issue 35: requests arriving at random (advisor.perf.queueing): TTFT and TPOT at this rate
    request_rate: float | None = _f("", "optnum", bounds=(0.0, 1e7), exclusive_low=True)
    # speculative decoding / MTP (advisor.perf.speculative): 0 drafted tokens = off; the default
    # acceptance is DeepSeek-V3's published figure for its MTP module
    draft_tokens: int = _f(0, "int", minimum=0, maximum=16)
    acceptance: float = _f(0.85, "num", bounds=(0.0, 0.999))
    draft_layers: float = _f(1.0, "num", bounds=(0.0, 1000.0))
    # prefix caching (advisor.perf.prefix_cache): the fraction of prompt tokens found cached
    prefix_hit_rate: float = _f(0.0, "num", bounds=(0.0, 0.999))
    # prefill and decode on one pool or on separate pools (advisor.perf.disaggregated)
    pools: str = _f("colocated", "choice", choices=vocab.SERVING_POOLS)
    # MoE: expert parallelism over `ep` GPUs with data-parallel attention (0 = off)
    # (advisor.perf.expert_parallel); `imbalance`: the busiest GPU's expert load over the mean
    ep: int = _f(0, "int", minimum=0, maximum=4096)
    imbalance: float = _f(1.2, "num", bounds=(1.0, 16.0))
    # two micro-batches, one's all-to-all behind the other's compute (DeepSeek-V3 §3.4,
    # SGLang's TBO; advisor.perf.expert_parallel)
    two_batch_overlap: bool = _f(False, "flag")
    # how the engine is run (the CLI's --no-cuda-graphs, --kv-on-demand; advisor.commands.time):
    # `cuda_graphs` off: each engine iteration waits efficiency.Stack.eager_iteration_ms of host
    # time (fitted; serving.point's cuda_graphs=False); `kv_on_demand`: the load model admits
    # requests while KV blocks remain, a running request holding its prompt + half its answer
    # (TensorRT-LLM's max_utilization; serving.max_concurrency, queueing)
    cuda_graphs: bool = _f(True, "flag")
    kv_on_demand: bool = _f(False, "flag")
    # owned hardware's cost per million tokens (advisor.money.interactivity.owned_usd_per_gpu_hour):
    # the budget calculator's defaults
    utilisation: float = _f(0.6, "num", bounds=limits.FRACTION, exclusive_low=True)
    horizon_months: int = _f(36, "int", maximum=limits.MONTHS[1])


def _speculation(req: ServingRequest):
    """The request's speculative decoding (advisor.perf.speculative), None when off."""
    if not req.draft_tokens:
        return None
    from ..perf import speculative

    return speculative.Speculation(
        draft_tokens=req.draft_tokens, acceptance=req.acceptance, draft_layers=req.draft_layers
    )


def _check_engine(req: ServingRequest) -> None:
    """The engine settings apply to plain tensor-parallel replicas (serving.point, queueing):
    each is refused, naming its field, where it would be ignored, as the CLI refuses its flags
    (advisor.commands.time._check_engine_flags): with expert parallelism or disaggregated pools,
    and `kv_on_demand` without a load (a request rate or a TTFT / TPOT limit)."""
    given = [
        name
        for name, on in (("cuda_graphs", not req.cuda_graphs), ("kv_on_demand", req.kv_on_demand))
        if on
    ]
    if given and (req.ep or req.pools == "disaggregated"):
        raise AdvisorError(
            "serving.flag_needs_plain",
            f"{given[0]}: applies to tensor-parallel replicas, not with ep or disaggregated pools",
            field=given[0],
        )
    load = req.request_rate is not None or req.ttft_ms is not None or req.tpot_ms is not None
    if req.kv_on_demand and not load:
        raise AdvisorError(
            "serving.flag_needs_load",
            "kv_on_demand: applies with request_rate, ttft_ms or tpot_ms",
            field="kv_on_demand",
        )


def _engine_settings(req: ServingRequest, spec, g, pp: int = 1) -> dict:
    """How the engine is run, as the CLI's JSON `engine_settings` gives it: the fitted host time
    per iteration where CUDA graphs are off (efficiency.Stack.eager_iteration_ms), and with KV
    blocks on demand the requests per replica the load model admits
    (serving.max_concurrency(kv_on_demand=True)). The form sets no multi-step scheduling."""
    from ..perf import serving as srv

    on_demand = None
    if req.kv_on_demand:
        on_demand = srv.max_concurrency(
            spec,
            g,
            input_tokens=req.input_tokens,
            output_tokens=req.output_tokens,
            weights=req.weights,
            kv_dtype=req.kv_dtype,
            tensor_parallel=req.tensor_parallel,
            engine=req.engine,
            pipeline_parallel=pp,
            kv_on_demand=True,
        )
    return {
        "cuda_graphs": req.cuda_graphs,
        "eager_iteration_ms": None
        if req.cuda_graphs
        else efficiency.DEFAULT_STACK.eager_iteration_ms,
        "cuda_graph_batch_sizes": None,  # the form captures no graph sizes (CLI only)
        "scheduler_steps": None,
        "prefill_min_queue": None,
        "kv_on_demand": req.kv_on_demand,
        "kv_on_demand_concurrency": on_demand,
    }


def _owned_hour(g, gpus: int, req: ServingRequest):
    """What a busy GPU-hour of owned `g` costs over the request's horizon and utilisation
    (advisor.money.interactivity.owned_usd_per_gpu_hour; electricity at recommend's default)."""
    from ..money import interactivity

    return interactivity.owned_usd_per_gpu_hour(
        g,
        gpus,
        get_catalog().systems,
        utilisation=req.utilisation,
        horizon_months=req.horizon_months,
        electricity_usd_per_kwh=recommend.DEFAULT_ELECTRICITY_USD_PER_KWH,
    )


def _serving_ep(req: ServingRequest, spec, g) -> dict:
    """MoE serving with expert parallelism over `ep` GPUs and data-parallel attention
    (advisor.perf.expert_parallel.point) at 1, 2, 4, ... sequences per GPU up to the KV cache's
    limit: the same result shape as the tensor-parallel curve, one point per load."""
    from ..money import interactivity
    from ..perf import expert_parallel as epm

    if not spec.is_moe:
        raise AdvisorError(
            "ep.dense_model",
            f"ep: {spec.name} has no experts; expert parallelism needs an MoE model",
            field="ep",
        )
    if req.tensor_parallel != 1:
        raise AdvisorError(
            "ep.tp_one",
            f"tensor_parallel: with expert parallelism attention runs data-parallel, one GPU per "
            f"rank (tensor_parallel 1), got {req.tensor_parallel}",
            field="tensor_parallel",
        )
    if req.gpus % req.ep:
        raise AdvisorError(
            "ep.gpus_multiple",
            f"gpus: {req.gpus} is not a multiple of the expert-parallel group of {req.ep}",
            field="gpus",
            gpus=req.gpus,
            ep=req.ep,
        )
    # what the EP model does not take: refused by name, never ignored
    others = (
        ("request_rate", req.request_rate is not None),
        ("draft_tokens", bool(req.draft_tokens)),
        ("prefix_hit_rate", bool(req.prefix_hit_rate)),
        ("pools", req.pools != "colocated"),
    )
    for name, given in others:
        if given:
            raise AdvisorError(
                "ep.not_with", f"{name}: does not apply with expert parallelism", field=name
            )
    from ..data import support
    from ..perf import serving as srv

    for why in support.engine(g, req.engine):
        raise AdvisorError(why.key, why.message, field="engine", **why.params)
    domain = g.scale_up.domain_size if g.scale_up else 8
    layout = epm.EPLayout(
        ep=req.ep,
        domain=domain,
        imbalance=req.imbalance,
        two_batch_overlap=req.two_batch_overlap,
    )
    offer = _cheapest_offer(g.id)
    price = offer.on_demand_usd_per_gpu_hour if offer else None
    owned = _owned_hour(g, req.gpus, req)
    ec = interactivity.ep_curve(
        spec,
        g,
        layout=layout,
        gpus=req.gpus,
        input_tokens=req.input_tokens,
        output_tokens=req.output_tokens,
        weights=req.weights,
        kv_dtype=req.kv_dtype,
        usd_per_gpu_hour=price,
        own_usd_per_gpu_hour=owned.usd_per_gpu_hour if owned else None,
        engine=req.engine,
    )
    if not ec.points:
        raise AdvisorError(
            "serving.no_room",
            f"gpu: the weights of {spec.name} leave no room for one request's KV cache on "
            f"{req.ep} x {g.id} with expert parallelism",
            field="gpu",
            gpu=g.id,
        )
    points = []
    for p in ec.points:
        total = p.tokens_per_s_per_gpu * req.gpus
        points.append(
            {
                "concurrency": p.batch_per_gpu,
                "ttft_s": p.ttft_s,
                "tpot_s": p.tpot_s,
                "tokens_per_s_per_user": p.tokens_per_s_per_user,
                "tokens_per_s": total,
                "tokens_per_s_per_gpu": p.tokens_per_s_per_gpu,
                "requests_per_s": total / req.output_tokens,
                "all_to_all_share": p.all_to_all_share,
            }
        )
    ttft = req.ttft_ms / 1e3 if req.ttft_ms else None
    tpot = req.tpot_ms / 1e3 if req.tpot_ms else None
    ok = [
        p
        for p in points
        if (ttft is None or p["ttft_s"] <= ttft) and (tpot is None or p["tpot_s"] <= tpot)
    ]
    best = max(ok, key=lambda p: p["tokens_per_s"]) if ok else None
    top = ec.points[-1].batch_per_gpu
    cap = ec.kv_limited_batch_per_gpu
    curve = [c.to_dict() for c in ec.curve]
    return {
        "model": _model_info(spec),
        "gpu": _gpu_info(g),
        "tensor_parallel": 1,
        "replicas": req.gpus,
        "input_tokens": req.input_tokens,
        "output_tokens": req.output_tokens,
        "weights": req.weights,
        "kv_dtype": req.kv_dtype,
        "max_concurrency": top,
        "kv_limited_concurrency": cap,
        "points": points,
        "notes": [],
        "best": best,
        "limits": {"ttft_ms": req.ttft_ms, "tpot_ms": req.tpot_ms},
        "curve": curve,
        "usd_per_gpu_hour": price,
        "price_provider": offer.provider if offer else None,
        "owned": owned.to_dict() if owned else None,
        "max_rate": None,
        "load": None,
        "speculative": None,
        "prefix_hit_rate": 0.0,
        "disaggregated": None,
        "expert_parallel": {
            "ep": req.ep,
            "domain": domain,
            "in_domain": layout.in_domain,
            "imbalance": layout.load_factor,
            "two_batch_overlap": layout.two_batch_overlap,
        },
        "engine_settings": _engine_settings(req, spec, g),
        "accuracy": _bands("serving", "decode", "prefill", spec=spec),
        "compute_peak": timing.weight_peak_key(g, req.weights),
        "fp4_dequantised": timing.fp4_dequantised(g, req.weights),
        # the fraction of the bandwidth dequantised FP4 weights stream at, with its source
        "fp4_weight_stream": efficiency.fp4_stream_note(g, req.weights, spec),
        # TensorRT-LLM's MoE layers: the fitted term and its band (efficiency.trtllm_moe_extra_s)
        "engine_moe": srv.engine_moe_note(spec, g, req.engine),
    }


def serving(params: dict) -> dict:
    """Serving under continuous batching (advisor.perf.serving.plan): the throughput-latency curve
    from concurrency 1 to the largest the KV cache allows, and the best point within the
    optional TTFT / TPOT limits; with speculative decoding / MTP and a prefix-cache hit rate
    when given; TTFT and TPOT at a request rate and the largest rate within the limits
    (advisor.perf.queueing); the prefill / decode split of disaggregated pools
    (advisor.perf.disaggregated); expert parallelism for an MoE model (`_serving_ep`); the
    interactivity curve with the cost per million tokens rented and owned
    (advisor.money.interactivity)."""
    from ..perf import serving as srv

    req = ServingRequest.from_params(params)
    spec = _model(req)
    g = _gpu(req.gpu)
    from ..data import support

    support.check_weights(g, req.weights, req.kv_dtype)
    if req.pipeline_parallel > 1 and (req.ep or req.pools == "disaggregated"):
        raise AdvisorError(  # expert parallelism and the disaggregated split have no stages
            "serving.pp_plain_only",
            "pipeline_parallel: applies to tensor-parallel replicas only (not with ep or "
            "disaggregated pools)",
            field="pipeline_parallel",
        )
    _check_engine(req)
    if req.ep:
        return _serving_ep(req, spec, g)
    if req.two_batch_overlap:
        raise AdvisorError(
            "ep.needs_ep",
            "two_batch_overlap: applies with expert parallelism only (set ep)",
            field="two_batch_overlap",
        )
    srv.check_tensor_parallel(spec, g, req.tensor_parallel)
    pp = srv.check_pipeline_parallel(spec, g, req.tensor_parallel, req.pipeline_parallel)
    if req.gpus % (req.tensor_parallel * pp):
        raise AdvisorError(
            "gpus.tp_divides",
            f"gpus: {req.gpus} is not a multiple of tensor_parallel {req.tensor_parallel}"
            + (f" x pipeline_parallel {pp}" if pp > 1 else ""),
            field="gpus",
            gpus=req.gpus,
            tensor_parallel=req.tensor_parallel * pp,
        )
    for why in support.engine(g, req.engine):
        raise AdvisorError(why.key, why.message, field="engine", **why.params)
    sp = _speculation(req)
    if req.pools == "disaggregated":
        # the split's model (advisor.perf.disaggregated) has neither: refused, never ignored
        if sp is not None or req.prefix_hit_rate:
            field_name = "draft_tokens" if sp is not None else "prefix_hit_rate"
            raise AdvisorError(
                "disagg.plain_only",
                f"{field_name}: the disaggregated split is computed without speculative "
                "decoding and prefix caching",
                field=field_name,
            )
        for name, v in (("ttft_ms", req.ttft_ms), ("tpot_ms", req.tpot_ms)):
            if not v:
                raise AdvisorError(
                    "disagg.needs_limits",
                    f"{name}: disaggregated pools are split to meet a TTFT and a TPOT limit",
                    field=name,
                )
    kw = dict(
        input_tokens=req.input_tokens,
        output_tokens=req.output_tokens,
        weights=req.weights,
        kv_dtype=req.kv_dtype,
        tensor_parallel=req.tensor_parallel,
        pipeline_parallel=pp,
        gpus=req.gpus,
        engine=req.engine,
        speculative=sp,
        prefix_hit_rate=req.prefix_hit_rate,
        cuda_graphs=req.cuda_graphs,
    )
    # KV blocks on demand reach the load model only, as in the CLI (queueing: module docstring 5)
    qkw = dict(kw, kv_on_demand=req.kv_on_demand)
    plan = srv.plan(spec, g, **kw)
    if not plan.points:
        raise AdvisorError(
            "serving.no_room",
            f"gpu: the weights of {spec.name} leave no room for one request's KV cache on "
            f"{req.tensor_parallel * pp} x {g.id}",
            field="gpu",
            gpu=g.id,
        )
    best = plan.best_under(
        req.ttft_ms / 1e3 if req.ttft_ms else None, req.tpot_ms / 1e3 if req.tpot_ms else None
    )
    from ..money import interactivity
    from ..perf import queueing

    offer = _cheapest_offer(g.id)
    price = offer.on_demand_usd_per_gpu_hour if offer else None
    owned = _owned_hour(g, req.gpus, req)
    rate = None
    if req.ttft_ms or req.tpot_ms:
        rate = queueing.max_rate(
            spec,
            g,
            ttft_s=req.ttft_ms / 1e3 if req.ttft_ms else None,
            tpot_s=req.tpot_ms / 1e3 if req.tpot_ms else None,
            **qkw,
        )
    load = None
    if req.request_rate is not None:
        load = queueing.at_rate(spec, g, request_rate=req.request_rate, **qkw)
    disagg = None
    if req.pools == "disaggregated":
        from ..perf import disaggregated

        split = disaggregated.split(
            spec,
            g,
            gpus=req.gpus,
            input_tokens=req.input_tokens,
            output_tokens=req.output_tokens,
            ttft_s=req.ttft_ms / 1e3,
            tpot_s=req.tpot_ms / 1e3,
            weights=req.weights,
            kv_dtype=req.kv_dtype,
            prefill_tp=req.tensor_parallel,
            decode_tp=req.tensor_parallel,
            engine=req.engine,
        )
        disagg = {"plan": split.to_dict() if split else None}
    out = plan.to_dict()
    out.update(
        model=_model_info(spec),
        gpu=_gpu_info(g),
        best=best.to_dict() if best else None,
        limits={"ttft_ms": req.ttft_ms, "tpot_ms": req.tpot_ms},
        # tokens/s per GPU against tokens/s per user, USD per million output tokens at the
        # cheapest on-demand offer and owned (advisor.money.interactivity)
        curve=[
            c.to_dict()
            for c in interactivity.curve(plan, price, owned.usd_per_gpu_hour if owned else None)
        ],
        usd_per_gpu_hour=price,
        price_provider=offer.provider if offer else None,
        owned=owned.to_dict() if owned else None,
        # the largest Poisson request rate within the limits (advisor.perf.queueing)
        max_rate=rate.to_dict() if rate else None,
        # TTFT and TPOT at the request rate (advisor.perf.queueing)
        load=load.to_dict() if load else None,
        speculative=sp.to_dict() if sp else None,
        prefix_hit_rate=req.prefix_hit_rate,
        disaggregated=disagg,
        expert_parallel=None,
        accuracy=_bands("serving", "decode", "prefill", spec=spec),
        weights=req.weights,
        # FP4 weights on a card without FP4 tensor cores for that format are dequantised
        compute_peak=timing.weight_peak_key(g, req.weights),
        fp4_dequantised=timing.fp4_dequantised(g, req.weights),
        fp4_weight_stream=efficiency.fp4_stream_note(g, req.weights, spec),
        # TensorRT-LLM's MoE layers: the fitted term and its band (efficiency.trtllm_moe_extra_s)
        engine_moe=srv.engine_moe_note(spec, g, req.engine),
        # how the engine is run (the CLI's JSON `engine_settings`)
        engine_settings=_engine_settings(req, spec, g, pp),
    )
    return out
