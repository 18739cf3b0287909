"""The serving calculator: the throughput-latency curve, its limits and rates."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import vocab
from ..core.errors import (
    AdvisorError,
)
from ..memory import estimate as memory
from ..perf import timing
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
)


@dataclass(frozen=True)
class ServingRequest(_Request):
    model: str = _f("llama-3.1-8b", "name")
    config: str = _f("", "text")
    gpu: str = _f("h100-sxm", "name")
    tensor_parallel: int = _f(1, "int", maximum=72)
    gpus: int = _f(1, "int", maximum=MAX_GPUS)
    input_tokens: int = _f(1024, "int", maximum=MAX_SEQ)
    output_tokens: int = _f(256, "int", maximum=MAX_SEQ)
    weights: str = _f("bf16", "choice", choices=INFER_WEIGHTS)
    kv_dtype: str = _f("bf16", "choice", choices=memory.KV_DTYPES)
    engine: str = _f("vllm", "choice", choices=vocab.SERVING_ENGINES)
    ttft_ms: float | None = _f("", "optnum", bounds=(0.0, 3_600_000.0), exclusive_low=True)
    tpot_ms: float | None = _f("", "optnum", bounds=(0.0, 3_600_000.0), exclusive_low=True)


def serving(params: dict) -> dict:
    """Serving under continuous batching (advisor.perf.serving.plan): the throughput-latency curve
    from concurrency 1 to the largest the KV cache allows, and the best point within the
    optional TTFT / TPOT limits."""
    from ..perf import serving as srv

    req = ServingRequest.from_params(params)
    spec = _model(req)
    g = _gpu(req.gpu)
    srv.check_tensor_parallel(spec, g, req.tensor_parallel)
    if req.gpus % req.tensor_parallel:
        raise AdvisorError(
            "gpus.tp_divides",
            f"gpus: {req.gpus} is not a multiple of tensor_parallel {req.tensor_parallel}",
            field="gpus",
            gpus=req.gpus,
            tensor_parallel=req.tensor_parallel,
        )
    from ..data import support

    for why in support.engine(g, req.engine):
        raise AdvisorError(why.key, why.message, field="engine", **why.params)
    plan = srv.plan(
        spec,
        g,
        input_tokens=req.input_tokens,
        output_tokens=req.output_tokens,
        weights=req.weights,
        kv_dtype=req.kv_dtype,
        tensor_parallel=req.tensor_parallel,
        gpus=req.gpus,
        engine=req.engine,
    )
    if not plan.points:
        raise AdvisorError(
            "serving.no_room",
            f"gpu: the weights of {spec.name} leave no room for one request's KV cache on "
            f"{req.tensor_parallel} x {g.id}",
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
    rate = None
    if req.ttft_ms or req.tpot_ms:
        rate = queueing.max_rate(
            spec,
            g,
            ttft_s=req.ttft_ms / 1e3 if req.ttft_ms else None,
            tpot_s=req.tpot_ms / 1e3 if req.tpot_ms else None,
            input_tokens=req.input_tokens,
            output_tokens=req.output_tokens,
            weights=req.weights,
            kv_dtype=req.kv_dtype,
            tensor_parallel=req.tensor_parallel,
            gpus=req.gpus,
            engine=req.engine,
        )
    out = plan.to_dict()
    out.update(
        model=_model_info(spec),
        gpu=_gpu_info(g),
        best=best.to_dict() if best else None,
        limits={"ttft_ms": req.ttft_ms, "tpot_ms": req.tpot_ms},
        # tokens/s per GPU against tokens/s per user, USD per million output tokens at the
        # cheapest on-demand offer (advisor.money.interactivity)
        curve=[c.to_dict() for c in interactivity.curve(plan, price)],
        usd_per_gpu_hour=price,
        price_provider=offer.provider if offer else None,
        # the largest Poisson request rate within the limits (advisor.perf.queueing)
        max_rate=rate.to_dict() if rate else None,
        accuracy=_bands("serving", "decode", "prefill"),
        weights=req.weights,
        # FP4 weights on a card without FP4 tensor cores for that format are dequantised
        compute_peak=timing.weight_peak_key(g, req.weights),
        fp4_dequantised=timing.fp4_dequantised(g, req.weights),
    )
    return out
