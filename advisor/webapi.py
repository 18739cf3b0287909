"""JSON-in / JSON-out entry points for the in-browser calculators (and for build-time prerendering
and tests): the same functions run in CPython and in Pyodide.

Each public function takes a plain dict of parameters (what the page's form holds: numbers as
numbers or strings, choices as strings) and returns a plain JSON-able dict. Bad input never
raises: it returns ``{"error": AdvisorError.to_dict()}`` so the page can show the translated
message (its ``key`` and ``params``) next to the offending ``field``.

Each calculator reads its form through one frozen request type (`VramRequest`,
`RooflineRequest`, `BudgetRequest`, `PickerRequest`) whose field defaults are the calculator's
only defaults (`DEFAULTS`, the prerendered first paint): a field left out of a direct call and of
`run()` takes the same value. Field defaults that are "" mean "not given" (e.g. budget's
`price_usd`: the catalog price).

`call(name, params_json)` is the one function the Web Worker calls: JSON text in, JSON text out,
so that every runtime returns byte-identical results. `run` and `call` never raise.

The formulas live in advisor.memory.estimate, advisor.perf.compute, advisor.money.cost and advisor.advice.recommend (their
docstrings cite the sources); this module only validates, dispatches and shapes the output.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field, fields, replace

from .advice import recommend, shortfall
from .arch.models import from_config_json
from .core import limits, vocab
from .core.counts import parse_count
from .core.errors import (
    AdvisorError,
    check_choice,
    check_int,
    clip,
    parse_number,
    shown,
    yaml_error,
)
from .core.files import MAX_FILE_BYTES, check_json_depth
from .data.catalog import Catalog, catalog_from_documents, load_catalog
from .memory import estimate as memory
from .money import cost
from .perf import compute
from .perf import serving_fit as sfit

TASKS = vocab.TASKS
INFER_WEIGHTS = vocab.WEIGHT_FORMATS
ROOFLINE_PHASES = vocab.ROOFLINE_PHASES
MAX_BATCH = 65_536
MAX_SEQ = 16_777_216
MAX_GPUS = 1024
MAX_CONFIG_CHARS = MAX_FILE_BYTES  # pasted config.json / profile text: 1 MB, like the CLI's files

# ---------------------------------------------------------------------------------------------
# Requests: one frozen type per calculator; its field defaults are THE defaults (the prerendered
# result at first paint, a direct call such as vram({"model": ...}) and run() all use them).
# ---------------------------------------------------------------------------------------------


def _f(default, kind: str, **meta):
    """A request field: its default and how a form value is read (`kind`: name, text, choice,
    int, tokens (a count that takes K/M/B/T), num, optnum, flag; `meta`: choices, maximum,
    bounds)."""
    return field(default=default, metadata={"kind": kind, **meta})


class _Request:
    """Reads a form dict into the frozen request: every field is type- and range-checked here,
    before anything is computed or cached (keys the request does not know are ignored: the page
    may send its whole state)."""

    @classmethod
    def defaults(cls) -> dict:
        return {f.name: f.default for f in fields(cls)}

    @classmethod
    def from_params(cls, params) -> _Request:
        if not isinstance(params, dict):
            raise AdvisorError("field.not_object", "params: expected an object", field="params")
        values = {}
        for f in fields(cls):
            values[f.name] = _read(f.name, params.get(f.name, f.default), f.metadata)
        return cls(**values)


def _read(name: str, v, meta):
    kind = meta["kind"]
    if kind in ("name", "text"):
        if v is None:
            v = ""
        if not isinstance(v, str):
            raise AdvisorError(
                "field.not_text", f"{name}: expected text, got {shown(v)}", field=name
            )
        limit = MAX_CONFIG_CHARS if kind == "text" else 200
        if len(v) > limit:
            raise AdvisorError(
                "field.too_large", f"{name}: at most {limit} characters", field=name, maximum=limit
            )
        return v.strip() if kind == "name" else v
    if kind == "choice":
        return check_choice(name, v, meta["choices"])
    if kind == "flag":
        return _flag(v)
    if kind == "optnum" and (v is None or (isinstance(v, str) and not v.strip())):
        return None
    if kind in ("int", "tokens"):
        # whole counts as people type them: "8,192", "2 000 000"; token counts also "2T"
        # (advisor.core.counts, the CLI's --tokens reading)
        if v is None or (isinstance(v, str) and not v.strip()):
            raise AdvisorError("field.required", f"{name}: a value is required", field=name)
        v = parse_count(name, v, suffixes=kind == "tokens")
        return check_int(name, v, minimum=meta.get("minimum", 1), maximum=meta.get("maximum"))
    v = _num_value(name, v)
    return limits.check_range(
        name, v, meta["bounds"], exclusive_low=meta.get("exclusive_low", False)
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


@dataclass(frozen=True)
class RooflineRequest(_Request):
    model: str = _f("llama-3.1-8b", "name")
    config: str = _f("", "text")
    phase: str = _f("decode", "choice", choices=ROOFLINE_PHASES)
    gpu: str = _f("h100-sxm", "name")
    batch: int = _f(1, "int", maximum=MAX_BATCH)
    seq: int = _f(4096, "int", maximum=MAX_SEQ)
    weights: str = _f("bf16", "choice", choices=INFER_WEIGHTS)
    precision: str = _f("bf16", "choice", choices=("bf16", "fp16", "fp8", "fp32", "tf32"))


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


@dataclass(frozen=True)
class PickerRequest(_Request):
    model: str = _f("llama-3.1-8b", "name")
    config: str = _f("", "text")
    task: str = _f("inference", "choice", choices=recommend.TASKS)
    batch: int = _f(8, "int", maximum=MAX_BATCH)
    seq: int = _f(4096, "int", maximum=MAX_SEQ)
    acquire: str = _f("either", "choice", choices=recommend.ACQUIRE)
    currency: str = _f("USD", "choice", choices=cost.CURRENCIES)
    horizon_months: int = _f(36, "int", maximum=limits.MONTHS[1])
    max_gpus: int = _f(8, "int", maximum=MAX_GPUS)
    budget: float | None = _f("", "optnum", bounds=limits.BUDGET, exclusive_low=True)
    target_tokens_per_s: float | None = _f(
        "", "optnum", bounds=limits.TOKENS_PER_S, exclusive_low=True
    )
    # inference: the speed each of the `batch` requests in flight must see; the formats searched
    per_user_tokens_per_s: float | None = _f(
        "", "optnum", bounds=limits.TOKENS_PER_S, exclusive_low=True
    )
    weights: str = _f("auto", "choice", choices=vocab.PICKER_WEIGHTS)


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


@dataclass(frozen=True)
class ClusterRequest(_Request):
    model: str = _f("llama-3.1-70b", "name")
    config: str = _f("", "text")
    gpu: str = _f("h100-sxm", "name")
    tokens: int = _f(1_000_000_000_000, "tokens", maximum=limits.TOKENS[1])
    seq: int = _f(8192, "int", maximum=1 << 20)
    deadline_days: float | None = _f(30, "optnum", bounds=(0.0, 3650.0), exclusive_low=True)
    budget_usd: float | None = _f("", "optnum", bounds=limits.BUDGET, exclusive_low=True)
    price_usd_per_gpu_hour: float | None = _f("", "optnum", bounds=limits.PRICE_USD_PER_GPU_HOUR)
    network: str = _f("ib-ndr-400", "name")
    precision: str = _f("bf16", "choice", choices=vocab.CLUSTER_PRECISIONS)
    max_gpus: int = _f(16_384, "int", maximum=16_384)


REQUESTS = {
    "vram": VramRequest,
    "roofline": RooflineRequest,
    "budget": BudgetRequest,
    "picker": PickerRequest,
    "serving": ServingRequest,
    "cluster": ClusterRequest,
}
DEFAULTS = {name: req.defaults() for name, req in REQUESTS.items()}

_catalog: Catalog | None = None


# ---------------------------------------------------------------------------------------------
# Catalog
# ---------------------------------------------------------------------------------------------


def set_catalog(catalog: Catalog) -> None:
    global _catalog
    _catalog = catalog


_CATALOG_FILE = re.compile(
    r"(?:(?:models|gpus|clouds|efficiency|networks|systems|owning)/)?[A-Za-z0-9][A-Za-z0-9._-]*\.yaml"
)


def load_catalog_documents(docs: dict) -> Catalog:
    """Build the catalog from `docs` (from advisor.data.catalog.read_documents, e.g. through JSON) and make it
    the one `get_catalog` returns."""
    if not isinstance(docs, dict):
        raise AdvisorError(
            "field.not_object", "catalog documents: expected an object", field="documents"
        )
    for rel in docs:
        # only catalog/-shaped names, as read_documents gives them
        if not isinstance(rel, str) or not _CATALOG_FILE.fullmatch(rel) or ".." in rel:
            raise AdvisorError(
                "catalog.bad_name",
                f"catalog documents: {shown(rel)} is not a catalog file name",
                field="documents",
            )
    cat = catalog_from_documents(docs)
    set_catalog(cat)
    return cat


def get_catalog() -> Catalog:
    global _catalog
    if _catalog is None:
        _catalog = load_catalog()
    return _catalog


# ---------------------------------------------------------------------------------------------
# Parameter parsing (form values arrive as strings or numbers)
# ---------------------------------------------------------------------------------------------


def _num_value(name: str, v):
    """A form value as a number: numbers as they are, text in ASCII digits ("0,5" too)."""
    if v is None or (isinstance(v, str) and not v.strip()):
        raise AdvisorError("field.required", f"{name}: a value is required", field=name)
    return parse_number(name, v)


def _model(req):
    """A ModelSpec from pasted config.json text (`config`) or else a catalog preset (`model`)."""
    if req.config.strip():
        try:
            return from_config_json(req.config, name="custom")
        except AdvisorError as exc:
            if exc.field and not exc.field.startswith("config"):
                exc.field = "config"
            raise
    if not req.model:
        raise AdvisorError("field.required", "model: a value is required", field="model")
    return get_catalog().model(req.model).spec


def _gpu(gid: str, name: str = "gpu"):
    cat = get_catalog()
    if not cat.gpus:
        raise AdvisorError("catalog.no_gpus", "the catalog lists no accelerators", field=name)
    if not gid:
        raise AdvisorError("field.required", f"{name}: a value is required", field=name)
    return cat.gpu(gid)


def _model_info(spec) -> dict:
    from .arch.models import active_param_count, describe, param_count

    return {
        "layers": describe(spec),
        "name": spec.name,
        "display_name": spec.display_name or spec.name,
        "family": spec.family,
        "params": param_count(spec),
        "active_params": active_param_count(spec),
        "num_layers": spec.num_layers,
        "hidden_size": spec.hidden_size,
        "attention": spec.attention_kind,
        "max_position_embeddings": spec.max_position_embeddings,
    }


def _gpu_info(g) -> dict:
    return {"id": g.id, "name": g.name, "tier": g.tier, "memory_bytes": g.memory_bytes}


# ---------------------------------------------------------------------------------------------
# VRAM
# ---------------------------------------------------------------------------------------------


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


def _flag(v) -> bool:
    if isinstance(v, (list, dict)):
        raise AdvisorError("field.not_bool", "expected true or false", field="limits")
    return v not in (False, 0, "0", "false", "no", "", None)


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
    degrees = sfit.tp_degrees(spec, req.gpus)
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
    from .arch.models import require_causal

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


def _memory_band() -> dict | None:
    """The memory model's measured error band (advisor.perf.accuracy.memory_band)."""
    from .perf import accuracy

    return accuracy.memory_band()


# ---------------------------------------------------------------------------------------------
# Roofline
# ---------------------------------------------------------------------------------------------


def roofline(params: dict) -> dict:
    """The workload's arithmetic intensity against the chosen accelerator's roofline
    (Williams, Waterman, Patterson 2009, CACM 52(4)); FLOPs and bytes from advisor.perf.compute."""
    req = RooflineRequest.from_params(params)
    spec = _model(req)
    g = _gpu(req.gpu)
    phase, batch, seq, weights, precision = (
        req.phase,
        req.batch,
        req.seq,
        req.weights,
        req.precision,
    )
    if phase == "decode":
        from .arch.models import require_causal

        require_causal(spec)  # an encoder has no decode step
        flops = compute.decode_flops(spec, seq, batch)
        nbytes = compute.decode_weight_bytes(spec, weights, batch) + compute.kv_read_bytes(
            spec, seq, batch
        )
        est = memory.inference_memory(
            memory.InferenceSetup(model=spec, batch=batch, seq=seq, weights=weights)
        )
    elif phase == "prefill":
        flops = compute.prefill_flops(spec, seq, batch)
        nbytes = compute.decode_weight_bytes(spec, weights, batch) + compute.kv_read_bytes(
            spec, seq, batch
        )
        est = memory.inference_memory(
            memory.InferenceSetup(model=spec, batch=batch, seq=seq, weights=weights)
        )
    else:
        setup = memory.TrainingSetup(model=spec, batch=batch, seq=seq, precision="amp-bf16")
        est = memory.training_memory(setup)
        flops = compute.training_flops(spec, batch * seq, seq).hardware_flops
        nbytes = compute.training_bytes(est.components)
    r = compute.roofline(flops, nbytes, g, precision, fits=est.total_bytes <= g.memory_bytes)
    out = r.to_dict()
    if math.isinf(out["intensity_flop_per_byte"]):
        out["intensity_flop_per_byte"] = None
    out.update(
        model=_model_info(spec),
        gpu=_gpu_info(g),
        phase=phase,
        total_bytes=est.total_bytes,
        accuracy=_bands({"decode": "decode", "prefill": "prefill"}.get(phase, "training")),
    )
    return out


# ---------------------------------------------------------------------------------------------
# Budget
# ---------------------------------------------------------------------------------------------


def _cheapest_offer(gpu_id: str):
    best = None
    for o in get_catalog().offers:
        price = o.on_demand_usd_per_gpu_hour
        if o.gpu_id != gpu_id or price is None:
            continue
        if best is None or price < best.on_demand_usd_per_gpu_hour:
            best = o
    return best


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
    of a training run (advisor.perf.compute.time_to_train) and per 1M generated tokens
    (advisor.perf.compute.decode_tokens_per_s, advisor.money.cost.cost_per_million_tokens). A workload
    that does not fit gets no price: its `reason` says why."""
    req = BudgetRequest.from_params(params)
    cat = get_catalog()
    g = _gpu(req.gpu)
    n = req.gpus
    price = req.price_usd
    if price is None:
        price = g.price_usd
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
            tt = compute.time_to_train(setup, g, req.train_tokens, memory=est)
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
            from .arch.models import require_causal

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


# ---------------------------------------------------------------------------------------------
# Picker
# ---------------------------------------------------------------------------------------------


def _finite_or_none(x: float) -> float | None:
    return round(x, 4) if math.isfinite(x) else None


def _regulated(row: dict) -> list[dict]:
    """The report's regulated-data flags (advisor.report.data.regulated_flags) of the picker's
    first choice: a consumer card, a community cloud's price."""
    from .data.prices import is_community_cloud

    out = []
    if row.get("tier") == "consumer":
        out.append({"key": "regulated.consumer", "params": {"gpu": row["gpu_name"]}})
    if row.get("mode") == "rent" and is_community_cloud(row.get("offer")):
        out.append({"key": "regulated.community", "params": {}})
    return out


def picker(params: dict) -> dict:
    """Ranked accelerators and counts for a workload, with the reason for every rejection
    (advisor.advice.recommend.recommend)."""
    req = PickerRequest.from_params(params)
    spec = _model(req)
    serving = req.task == "inference"
    w = recommend.Workload(
        model=spec,
        task=req.task,
        batch=req.batch,
        seq=req.seq,
        acquire=req.acquire,
        currency=req.currency,
        horizon_months=req.horizon_months,
        max_gpus=req.max_gpus,
        budget=req.budget,
        target_tokens_per_s=req.target_tokens_per_s,
        target_tokens_per_s_per_user=req.per_user_tokens_per_s if serving else None,
        formats=(
            (sfit.SEARCH_FORMATS if req.weights == "auto" else (req.weights,)) if serving else ()
        ),
        kv_formats=sfit.SEARCH_KV if serving and req.weights == "auto" else (),
    )
    rows = recommend.ranked_rows(w, get_catalog())
    ok = [r for r in rows if r["ok"]]
    rejected = [r for r in rows if not r["ok"]]
    return {
        "model": _model_info(spec),
        "task": req.task,
        "recommended": [recommend.row_dict(r) for r in ok[:10]],
        # regulated data (issue 38): the first choice on a consumer card or a community cloud
        # is said above the table, as the report says it in its summary
        "regulated": _regulated(ok[0]) if ok else [],
        # every rejection, the nearest misses first, each with how close it came
        # (advisor.advice.shortfall; the page filters the list)
        "rejected": [
            {**recommend.row_dict(r), "shortfall": _finite_or_none(shortfall.shortfall(r))}
            for r in shortfall.nearest_first(rejected)
        ],
        "counts": {"ok": len(ok), "rejected": len(rejected)},
        "accuracy": _bands("decode" if req.task == "inference" else "training"),
    }


# ---------------------------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------------------------


def _bands(*kinds: str) -> dict:
    """The time model's measured error bands (advisor.perf.accuracy) for the kinds a result shows."""
    from .perf import accuracy

    return {k: accuracy.band_dict(k) for k in kinds if accuracy.band(k)}


def serving(params: dict) -> dict:
    """Serving under continuous batching (advisor.perf.serving.plan): the throughput-latency curve
    from concurrency 1 to the largest the KV cache allows, and the best point within the
    optional TTFT / TPOT limits."""
    from .perf import serving as srv

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
    from .data import support

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
    from .money import interactivity
    from .perf import queueing

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
        compute_peak=compute.weight_peak_key(g, req.weights),
        fp4_dequantised=compute.fp4_dequantised(g, req.weights),
    )
    return out


def cluster(params: dict) -> dict:
    """A cluster plan for a training run (advisor.perf.cluster.plan): the best layout at each GPU
    count up to the choice, the chosen nodes x GPUs and TP x PP x DP layout, its time, cost and
    energy; the price is the catalog's cheapest on-demand offer unless one is given."""
    from .perf import cluster as cl

    req = ClusterRequest.from_params(params)
    spec = _model(req)
    g = _gpu(req.gpu)
    cat = get_catalog()
    price = req.price_usd_per_gpu_hour
    if price is None:
        offer = _cheapest_offer(g.id)
        price = offer.on_demand_usd_per_gpu_hour if offer else None
    p = cl.plan(
        spec,
        g,
        tokens=req.tokens,
        seq=req.seq,
        deadline_hours=req.deadline_days * 24 if req.deadline_days else None,
        budget_usd=req.budget_usd,
        price_usd_per_gpu_hour=price,
        network=cat.network(req.network),
        precision=req.precision,
        max_gpus=req.max_gpus,
    )
    out = p.to_dict()
    out.update(model=_model_info(spec), gpu=_gpu_info(g), accuracy=_bands("training"))
    return out


def report(params: dict) -> dict:
    """Client advisory report (advisor.report.web_report): {profile (YAML text), lang,
    publisher} -> {html, fragment, filename} or {"error": ...}. The request's shape is checked
    here (profile text of at most 1 MB, lang az/en/none, publisher an object)."""
    from .report import web_report

    if not isinstance(params, dict):
        raise AdvisorError("field.not_object", "params: expected an object", field="params")
    profile = params.get("profile")
    if not isinstance(profile, str):
        raise AdvisorError("field.required", "profile: expected YAML text", field="profile")
    if len(profile) > MAX_CONFIG_CHARS:
        raise AdvisorError(
            "field.too_large",
            f"profile: at most {MAX_CONFIG_CHARS} characters",
            field="profile",
            maximum=MAX_CONFIG_CHARS,
        )
    lang = params.get("lang")
    if lang not in (None, "", "az", "en"):
        raise AdvisorError(
            "name.unknown",
            f"lang: expected az or en, got {shown(lang)}",
            field="lang",
            name=shown(lang),
            suggestions=["az", "en"],
        )
    publisher = params.get("publisher")
    if publisher is not None and not isinstance(publisher, dict):
        raise AdvisorError("field.not_object", "publisher: expected an object", field="publisher")
    try:
        return web_report({**params, "lang": lang or None, "publisher": publisher}, get_catalog())
    except AdvisorError:
        raise
    except RecursionError:
        raise AdvisorError("file.too_deep", "profile: nested too deeply", field="profile") from None
    except ValueError as exc:  # the YAML reader's own failure on malformed text (e.g. "\uZZZZ")
        raise yaml_error("profile", exc) from None


FUNCTIONS = {
    "vram": vram,
    "roofline": roofline,
    "budget": budget,
    "picker": picker,
    "serving": serving,
    "cluster": cluster,
    "report": report,
}


def run(name, params) -> dict:
    """Call calculator `name` with `params`; never raises. An AdvisorError becomes
    {"error": {...}}; any other failure (a bug, or input nested too deeply) becomes an
    ``internal.error`` error object naming the calculator, so the page always gets JSON."""
    try:
        if not isinstance(name, str) or name not in FUNCTIONS:
            from .core.errors import unknown_name

            raise unknown_name(
                "calculator", shown(name) if not isinstance(name, str) else name, FUNCTIONS
            )
        if not isinstance(params, dict):
            raise AdvisorError("field.not_object", "params: expected an object", field="params")
        return FUNCTIONS[name](params)
    except AdvisorError as exc:
        return {"error": exc.to_dict()}
    except RecursionError:
        return {
            "error": AdvisorError(
                "file.too_deep", "params: nested too deeply", field="params", maximum=64
            ).to_dict()
        }
    except Exception as exc:  # noqa: BLE001 - the contract: bad input never raises
        detail = clip(f"{exc.__class__.__name__}: {exc}", 120)
        return {
            "error": AdvisorError(
                "internal.error",
                f"{name}: could not compute this input ({detail})",
                field=None,
                detail=detail,
                calculator=str(name)[:40],
            ).to_dict()
        }


def _clean(x):
    """JSON cannot carry NaN or infinity: they become null."""
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def dumps(result: dict) -> str:
    try:
        return json.dumps(result, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere: clean the (rare) result and retry
        return json.dumps(_clean(result), sort_keys=True, ensure_ascii=False, allow_nan=False)


def call(name, params_json) -> str:
    """JSON text in, JSON text out: what the Web Worker calls. Never raises."""
    try:
        if not isinstance(params_json, (str, bytes, bytearray)):
            raise TypeError(f"expected JSON text, got {type(params_json).__name__}")
        if len(params_json) > 2 * MAX_CONFIG_CHARS:
            raise ValueError(f"at most {2 * MAX_CONFIG_CHARS} characters")
        if isinstance(params_json, (bytes, bytearray)):
            params_json = bytes(params_json).decode("utf-8")
        check_json_depth(params_json, "params")  # before json.loads: Pyodide's stack is small
        params = json.loads(params_json)
    except AdvisorError as exc:
        return dumps({"error": exc.to_dict()})
    except (ValueError, TypeError, RecursionError) as exc:
        detail = clip(str(exc) or exc.__class__.__name__, 120)
        return dumps(
            {
                "error": AdvisorError(
                    "field.bad_json", detail, field="params", detail=detail
                ).to_dict()
            }
        )
    return dumps(run(name, params))
