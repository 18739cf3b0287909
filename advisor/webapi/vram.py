"""The VRAM calculator: memory per GPU for training, fine-tuning, inference and serving."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from ..core import vocab
from ..core.errors import (
    AdvisorError,
)
from ..memory import estimate as memory
from ..perf import serving_fit as sfit
from .common import (
    INFER_WEIGHTS,
    MAX_BATCH,
    MAX_GPUS,
    MAX_SEQ,
    TASKS,
    _f,
    _gpu,
    _gpu_info,
    _memory_band,
    _model,
    _model_info,
    _Request,
    get_catalog,
)


@dataclass(frozen=True)
class VramRequest(_Request):
    model: str = _f("llama-3.1-8b", "name")
    config: str = _f("", "text")
    task: str = _f("inference", "choice", choices=TASKS)
    precision: str = _f("amp-bf16", "choice", choices=memory.PRECISIONS)
    weights: str = _f("bf16", "choice", choices=INFER_WEIGHTS)
    kv_dtype: str = _f("bf16", "choice", choices=memory.KV_DTYPES)
    batch: int = _f(1, "int", maximum=MAX_BATCH)
    seq: int = _f(4096, "int", maximum=MAX_SEQ)
    optimizer: str = _f("adamw", "choice", choices=memory.OPTIMIZERS)
    checkpointing: str = _f("default", "choice", choices=vocab.CHECKPOINTING_CHOICES)
    lora_rank: int = _f(16, "int", maximum=65_536)
    gpus: int = _f(1, "int", maximum=MAX_GPUS)
    sharding: str = _f("ddp", "choice", choices=memory.SHARDING)
    gpu: str = _f("h100-sxm", "name")
    limits: bool = _f(True, "flag")
    # inference: "serving" (batch = requests in flight over `gpus`, advisor.perf.serving_fit) or
    # "static" (one prefill of the whole batch on each GPU, advisor.memory.estimate.inference_memory)
    mode: str = _f("serving", "choice", choices=vocab.INFERENCE_MODES)


def _setup(req: VramRequest, spec):
    if req.task == "inference":
        s = memory.InferenceSetup(
            model=spec, batch=req.batch, seq=req.seq, weights=req.weights, kv_dtype=req.kv_dtype
        )
        return req.task, s
    precision = req.precision
    rank = req.lora_rank if req.task in ("lora", "qlora") else 0
    quant = None
    if req.task == "qlora":
        quant = "nf4"
        if precision.startswith("amp-") or precision == "fp32":
            precision = "bf16"  # QLoRA computes in bf16 over the NF4 base (Dettmers et al. 2023)
    s = memory.TrainingSetup(
        model=spec,
        batch=req.batch,
        seq=req.seq,
        precision=precision,
        optimizer=req.optimizer,
        checkpointing=memory.resolve_checkpointing(req.checkpointing, rank),
        lora_rank=rank,
        quant=quant,
        gpus=req.gpus,
        sharding=req.sharding,
    )
    return req.task, s


def _estimate(task, setup):
    if task == "inference":
        return memory.inference_memory(setup)
    return memory.training_memory(setup)


# The inverse questions search over many estimates (tens of ms in Pyodide); the largest batch
# does not depend on the batch, nor the longest context on the context, so they are cached by
# the setup with that field normalised: changing the batch re-uses the largest batch.
@functools.lru_cache(maxsize=256)
def _max_batch(setup, capacity: int) -> int:
    return memory.max_batch(setup, capacity)


@functools.lru_cache(maxsize=256)
def _max_seq(setup, capacity: int) -> int:
    return memory.max_seq(setup, capacity)


def _serving_layout(spec, g, req: VramRequest):
    """A serving layout of `req` on `req.gpus` x `g` that fits (the smallest tensor-parallel
    degree that does), else the one needing the least memory per GPU: whether it fits at all
    (the chosen card then shows `best_fit`'s layout, the one the picker runs)."""
    i, o = sfit.split_context(req.seq)
    degrees = sfit.tp_degrees(spec, req.gpus, g)
    if not degrees:
        raise AdvisorError(
            "serving.no_tp",
            f"gpus: no tensor-parallel degree divides both {req.gpus} GPUs and the model's "
            f"{spec.num_heads} attention heads",
            field="gpus",
            gpus=req.gpus,
            heads=spec.num_heads,
        )
    layouts = [
        sfit.fit(
            spec,
            g,
            gpus=req.gpus,
            concurrency=req.batch,
            input_tokens=i,
            output_tokens=o,
            weights=req.weights,
            kv_dtype=req.kv_dtype,
            tensor_parallel=tp,
            speed=False,
        )
        for tp in degrees
    ]
    return next((x for x in layouts if x.fits), min(layouts, key=lambda x: x.total_bytes))


def _vram_serving(req: VramRequest, spec) -> dict:
    """The VRAM calculator's inference as a continuous-batching server (advisor.perf.serving_fit):
    `batch` requests in flight over `gpus` GPUs, weights and KV split over tensor parallelism
    within a node, replicas beyond."""
    from ..arch.models import require_causal

    require_causal(spec)
    cat = get_catalog()
    fits = []
    for g in sorted(cat.gpus, key=lambda g: (g.memory_bytes, g.id)):
        x = _serving_layout(spec, g, req)
        fits.append(
            {
                **_gpu_info(g),
                "fits": x.fits,
                "headroom_bytes": g.memory_bytes - x.total_bytes,
                "unsupported": [u.to_dict() for u in x.unsupported],
            }
        )
    g = _gpu(req.gpu)
    x = _serving_layout(spec, g, req)
    if x.fits:
        # the layout the picker and `recommend` would run on these GPUs (the most tokens/s)
        x = sfit.best_fit(
            spec,
            g,
            gpus=req.gpus,
            concurrency=req.batch,
            input_tokens=x.input_tokens,
            output_tokens=x.output_tokens,
            formats=(req.weights,),
            kv_dtype=req.kv_dtype,
        )
    chosen = {**_gpu_info(g), "fits": x.fits}
    if req.limits:
        # the most requests the KV cache holds at this context, all replicas; the longest
        # context one request can have
        chosen["max_batch"] = x.kv_limited_concurrency * x.replicas
        cap = memory.serving_capacity(
            spec,
            g.memory_bytes,
            context=min(req.seq, spec.max_position_embeddings),
            weights=req.weights,
            kv_dtype=req.kv_dtype,
            gpu_memory_utilization=sfit.GPU_MEMORY_UTILIZATION,
            tensor_parallel=x.tensor_parallel,
        )
        chosen["max_seq"] = cap.max_context_tokens
    used = x.total_bytes - x.headroom_bytes
    return {
        "model": _model_info(spec),
        "task": "inference",
        "mode": "serving",
        "checkpointing": None,
        "checkpointing_default": False,
        "components": {
            "weights": x.weights_bytes,
            "kv_cache": x.kv_bytes,
            "workspace": x.workspace_bytes,
        },
        "overhead": {"engine_headroom": x.headroom_bytes},
        "peak_allocated_bytes": used,
        "overhead_bytes": x.headroom_bytes,
        "total_bytes": x.total_bytes,
        "assumptions": [
            "vLLM memory plan: weights and KV over tensor parallelism, the KV cache of every "
            "request at its whole context, 90% of the card for the engine"
        ],
        "serving": {
            "tensor_parallel": x.tensor_parallel,
            "replicas": x.replicas,
            "per_replica": x.per_replica,
            "input_tokens": x.input_tokens,
            "output_tokens": x.output_tokens,
            "kv_limited_concurrency": x.kv_limited_concurrency,
        },
        "fits": fits,
        "chosen": chosen,
        # the measured band is of PyTorch runs (static prefills and training steps), not of a
        # serving engine's plan: none shown rather than a borrowed one
        "memory_accuracy": None,
    }


def vram(params: dict) -> dict:
    """Memory per GPU of a workload, whether it fits on each catalog accelerator, and the largest
    batch and longest context that fit on the chosen one. Inference is sized as a serving
    engine (advisor.perf.serving_fit) unless `mode` is "static" (one prefill of the whole batch per
    GPU, advisor.memory.estimate.inference_memory, labelled so in the result's `mode`)."""
    req = VramRequest.from_params(params)
    spec = _model(req)
    if req.task == "inference" and req.gpu and get_catalog().gpus:
        from ..data import support

        support.check_weights(_gpu(req.gpu), req.weights, req.kv_dtype)
    if req.task == "inference" and req.mode == "serving":
        return _vram_serving(req, spec)
    task, setup = _setup(req, spec)
    est = _estimate(task, setup)
    cat = get_catalog()
    fits = [
        {
            **_gpu_info(g),
            "fits": est.total_bytes <= g.memory_bytes,
            "headroom_bytes": g.memory_bytes - est.total_bytes,
        }
        for g in sorted(cat.gpus, key=lambda g: (g.memory_bytes, g.id))
    ]
    chosen = None
    if req.gpu and cat.gpus:
        g = _gpu(req.gpu)
        chosen = {**_gpu_info(g), "fits": est.total_bytes <= g.memory_bytes}
        if req.limits:
            chosen["max_batch"] = _max_batch(replace(setup, batch=1), g.memory_bytes)
            chosen["max_seq"] = _max_seq(replace(setup, seq=1), g.memory_bytes)
    d = est.to_dict()
    return {
        "model": _model_info(spec),
        "task": task,
        "mode": "static" if task == "inference" else None,
        # training only: the checkpointing used, and whether it is the rule's default
        "checkpointing": getattr(setup, "checkpointing", None),
        "checkpointing_default": task != "inference" and req.checkpointing == "default",
        "components": d["components"],
        "overhead": d["overhead"],
        "peak_allocated_bytes": d["peak_allocated_bytes"],
        "overhead_bytes": d["overhead_bytes"],
        "total_bytes": d["total_bytes"],
        "assumptions": d["assumptions"],
        "fits": fits,
        "chosen": chosen,
        "memory_accuracy": _memory_band(),
    }
