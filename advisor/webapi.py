"""JSON-in / JSON-out entry points for the in-browser calculators (and for build-time prerendering
and tests): the same functions run in CPython and in Pyodide.

Each public function takes a plain dict of parameters (what the page's form holds: numbers as
numbers or strings, choices as strings) and returns a plain JSON-able dict. Bad input never
raises: it returns ``{"error": AdvisorError.to_dict()}`` so the page can show the translated
message (its ``key`` and ``params``) next to the offending ``field``.

`call(name, params_json)` is the one function the Web Worker calls: JSON text in, JSON text out,
so that every runtime returns byte-identical results.

The formulas live in advisor.memory, advisor.compute, advisor.cost and advisor.recommend (their
docstrings cite the sources); this module only validates, dispatches and shapes the output.
"""

from __future__ import annotations

import functools
import json
import math
import os
import tempfile
from dataclasses import replace
from pathlib import Path

from . import compute, cost, memory, recommend, vocab
from .catalog import Catalog, load_catalog
from .errors import AdvisorError, check_choice, check_int, check_non_negative, check_positive
from .models import from_config_json

TASKS = vocab.TASKS
INFER_WEIGHTS = vocab.WEIGHT_FORMATS
ROOFLINE_PHASES = vocab.ROOFLINE_PHASES
MAX_BATCH = 65_536
MAX_SEQ = 16_777_216
MAX_GPUS = 1024

# Defaults of every calculator: the prerendered result at first paint uses exactly these.
DEFAULTS = {
    "vram": {
        "model": "llama-3.1-8b",
        "config": "",
        "task": "inference",
        "precision": "amp-bf16",
        "weights": "bf16",
        "kv_dtype": "bf16",
        "batch": 1,
        "seq": 4096,
        "optimizer": "adamw",
        "checkpointing": "none",
        "lora_rank": 16,
        "gpus": 1,
        "sharding": "ddp",
        "gpu": "h100-sxm",
        "limits": True,
    },
    "roofline": {
        "model": "llama-3.1-8b",
        "phase": "decode",
        "gpu": "h100-sxm",
        "batch": 1,
        "seq": 4096,
        "weights": "bf16",
        "precision": "bf16",
    },
    "budget": {
        "gpu": "rtx-4090",
        "gpus": 4,
        "price_usd": "",
        "cloud_usd_per_gpu_hour": "",
        "utilisation": 0.6,
        "horizon_months": 36,
        "electricity_usd_per_kwh": 0.127,
        "pue": cost.DEFAULT_PUE,
        "server_usd": 0,
        "resale_fraction": 0.2,
        "currency": "USD",
        "model": "llama-3.2-1b",
        "train_tokens": 1_000_000_000,
        "batch": 8,
        "seq": 2048,
    },
    "picker": {
        "model": "llama-3.1-8b",
        "task": "inference",
        "batch": 8,
        "seq": 4096,
        "acquire": "either",
        "currency": "USD",
        "horizon_months": 36,
        "max_gpus": 8,
        "budget": "",
        "target_tokens_per_s": "",
    },
}

_catalog: Catalog | None = None


# ---------------------------------------------------------------------------------------------
# Catalog
# ---------------------------------------------------------------------------------------------


def set_catalog(catalog: Catalog) -> None:
    global _catalog
    _catalog = catalog


def catalog_files(root: str | os.PathLike) -> dict[str, str]:
    """Every catalog YAML under `root` as {relative path: text} (shipped to the browser, where
    `load_catalog_files` rebuilds the catalog with the very same loader)."""
    root = Path(root)
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*.yaml"))
    }


def load_catalog_files(files: dict[str, str]) -> Catalog:
    """Write `files` (from `catalog_files`) to a temporary folder and load it with load_catalog."""
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in files.items():
            path = Path(tmp, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        cat = load_catalog(tmp)
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


def _num(params: dict, name: str, default=None):
    v = params.get(name, default)
    if isinstance(v, str):
        s = v.strip().replace(",", ".")
        if s == "":
            raise AdvisorError("field.required", f"{name}: a value is required", field=name)
        try:
            v = float(s)
        except ValueError:
            raise AdvisorError(
                "field.not_number", f"{name}: expected a number, got {v!r}", field=name, value=v
            ) from None
    if v is None:
        raise AdvisorError("field.required", f"{name}: a value is required", field=name)
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        raise AdvisorError(
            "field.not_finite", f"{name}: must be a finite number, got {v}", field=name
        )
    return v


def _int(params, name, default=None, *, minimum=1, maximum=None) -> int:
    return check_int(name, _num(params, name, default), minimum=minimum, maximum=maximum)


def _opt_num(params, name):
    v = params.get(name)
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    return _num(params, name)


def _choice(params, name, default, choices) -> str:
    return check_choice(name, params.get(name, default), choices)


def _model(params: dict):
    """A ModelSpec from pasted config.json text (`config`) or else a catalog preset (`model`)."""
    text = params.get("config") or ""
    if isinstance(text, str) and text.strip():
        if len(text) > 1_000_000:
            raise AdvisorError(
                "field.too_large", "config: at most 1000000 characters", field="config"
            )
        try:
            return from_config_json(text, name="custom")
        except AdvisorError as exc:
            if exc.field and not exc.field.startswith("config"):
                exc.field = "config"
            raise
    name = params.get("model")
    if not name:
        raise AdvisorError("field.required", "model: a value is required", field="model")
    return get_catalog().model(str(name)).spec


def _gpu(params: dict, name: str = "gpu"):
    cat = get_catalog()
    gid = params.get(name)
    if not cat.gpus:
        raise AdvisorError("catalog.no_gpus", "the catalog lists no accelerators", field=name)
    if not gid:
        raise AdvisorError("field.required", f"{name}: a value is required", field=name)
    return cat.gpu(str(gid))


def _model_info(spec) -> dict:
    from .models import active_param_count, param_count

    return {
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


def _setup(params: dict, spec):
    task = _choice(params, "task", "inference", TASKS)
    batch = _int(params, "batch", 1, maximum=MAX_BATCH)
    seq = _int(params, "seq", 2048, maximum=MAX_SEQ)
    if task == "inference":
        s = memory.InferenceSetup(
            model=spec,
            batch=batch,
            seq=seq,
            weights=_choice(params, "weights", "bf16", INFER_WEIGHTS),
            kv_dtype=_choice(params, "kv_dtype", "bf16", memory.KV_DTYPES),
        )
        return task, s
    gpus = _int(params, "gpus", 1, maximum=MAX_GPUS)
    sharding = _choice(params, "sharding", "ddp", memory.SHARDING)
    precision = _choice(params, "precision", "amp-bf16", memory.PRECISIONS)
    optimizer = _choice(params, "optimizer", "adamw", memory.OPTIMIZERS)
    ckpt = _choice(params, "checkpointing", "none", memory.CHECKPOINTING)
    rank = 0
    quant = None
    if task in ("lora", "qlora"):
        rank = _int(params, "lora_rank", 16, maximum=65_536)
    if task == "qlora":
        quant = "nf4"
        if precision.startswith("amp-") or precision == "fp32":
            precision = "bf16"  # QLoRA computes in bf16 over the NF4 base (Dettmers et al. 2023)
    s = memory.TrainingSetup(
        model=spec,
        batch=batch,
        seq=seq,
        precision=precision,
        optimizer=optimizer,
        checkpointing=ckpt,
        lora_rank=rank,
        quant=quant,
        gpus=gpus,
        sharding=sharding,
    )
    return task, s


def _estimate(task, setup):
    if task == "inference":
        return memory.inference_memory(setup)
    return memory.training_memory(setup)


def _flag(v) -> bool:
    return v not in (False, 0, "0", "false", "no", "")


# The inverse questions search over many estimates (tens of ms in Pyodide); the largest batch
# does not depend on the batch, nor the longest context on the context, so they are cached by
# the setup with that field normalised: changing the batch re-uses the largest batch.
@functools.lru_cache(maxsize=256)
def _max_batch(setup, capacity: int) -> int:
    return memory.max_batch(setup, capacity)


@functools.lru_cache(maxsize=256)
def _max_seq(setup, capacity: int) -> int:
    return memory.max_seq(setup, capacity)


def vram(params: dict) -> dict:
    """Memory per GPU of a workload, whether it fits on each catalog accelerator, and the largest
    batch and longest context that fit on the chosen one (advisor.memory)."""
    spec = _model(params)
    task, setup = _setup(params, spec)
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
    if params.get("gpu") and cat.gpus:
        g = _gpu(params)
        chosen = {**_gpu_info(g), "fits": est.total_bytes <= g.memory_bytes}
        if _flag(params.get("limits", True)):
            chosen["max_batch"] = _max_batch(replace(setup, batch=1), g.memory_bytes)
            chosen["max_seq"] = _max_seq(replace(setup, seq=1), g.memory_bytes)
    d = est.to_dict()
    return {
        "model": _model_info(spec),
        "task": task,
        "components": d["components"],
        "overhead": d["overhead"],
        "peak_allocated_bytes": d["peak_allocated_bytes"],
        "overhead_bytes": d["overhead_bytes"],
        "total_bytes": d["total_bytes"],
        "assumptions": d["assumptions"],
        "fits": fits,
        "chosen": chosen,
    }


# ---------------------------------------------------------------------------------------------
# Roofline
# ---------------------------------------------------------------------------------------------


def roofline(params: dict) -> dict:
    """The workload's arithmetic intensity against the chosen accelerator's roofline
    (Williams, Waterman, Patterson 2009, CACM 52(4)); FLOPs and bytes from advisor.compute."""
    spec = _model(params)
    g = _gpu(params)
    phase = _choice(params, "phase", "decode", ROOFLINE_PHASES)
    batch = _int(params, "batch", 1, maximum=MAX_BATCH)
    seq = _int(params, "seq", 2048, maximum=MAX_SEQ)
    weights = _choice(params, "weights", "bf16", INFER_WEIGHTS)
    precision = _choice(params, "precision", "bf16", ("bf16", "fp16", "fp8", "fp32", "tf32"))
    if phase == "decode":
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
    out.update(model=_model_info(spec), gpu=_gpu_info(g), phase=phase, total_bytes=est.total_bytes)
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


def budget(params: dict) -> dict:
    """Rent vs buy over a horizon (advisor.cost.tco) with the break-even series; the cloud cost
    of a training run (advisor.compute.time_to_train) and per 1M generated tokens
    (advisor.compute.decode_tokens_per_s, advisor.cost.cost_per_million_tokens)."""
    cat = get_catalog()
    g = _gpu(params)
    n = _int(params, "gpus", 1, maximum=MAX_GPUS)
    price = _opt_num(params, "price_usd")
    if price is None:
        price = g.price_usd
        if price is None:
            raise AdvisorError(
                "budget.no_price",
                f"price_usd: no public price for {g.id}; enter one",
                field="price_usd",
                gpu=g.id,
            )
    price = check_non_negative("price_usd", price, maximum=1e8)
    hourly = _opt_num(params, "cloud_usd_per_gpu_hour")
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
    hourly = check_non_negative("cloud_usd_per_gpu_hour", hourly, maximum=1e4)
    util = check_positive("utilisation", _num(params, "utilisation", 0.6), maximum=1.0)
    horizon = _int(params, "horizon_months", 36, maximum=600)
    currency = _choice(params, "currency", "USD", cost.CURRENCIES)
    own = cost.OwnHardware(
        gpu_price_usd=price,
        gpus=n,
        tdp_w=float(g.tdp_w or 0),
        electricity_usd_per_kwh=check_non_negative(
            "electricity_usd_per_kwh", _num(params, "electricity_usd_per_kwh", 0.127), maximum=10
        ),
        server_usd=check_non_negative("server_usd", _num(params, "server_usd", 0), maximum=1e9),
        pue=_num(params, "pue", cost.DEFAULT_PUE),
        resale_fraction=_num(params, "resale_fraction", 0.0),
    )
    t = cost.tco(
        own, hourly, utilisation=util, horizon_months=horizon, currency=currency, rates=cat.currency
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
    }
    # Training run and per-token cost for the model (optional fields).
    if params.get("model") or params.get("config"):
        spec = _model(params)
        tokens = _int(params, "train_tokens", 1_000_000_000, maximum=10**15)
        batch = _int(params, "batch", 8, maximum=MAX_BATCH)
        seq = _int(params, "seq", 2048, maximum=MAX_SEQ)
        setup = memory.TrainingSetup(
            model=spec, batch=batch, seq=seq, precision="amp-bf16", gpus=n, sharding="zero3"
        )
        est = memory.training_memory(setup)
        tt = compute.time_to_train(setup, g, tokens, memory=est)
        out["training"] = {
            "tokens": tokens,
            "hours": tt.hours,
            "gpu_hours": tt.gpu_hours,
            "fits": est.total_bytes <= g.memory_bytes,
            "total_bytes": est.total_bytes,
            "cloud_cost": tt.gpu_hours * hourly * rate,
        }
        dr = compute.decode_tokens_per_s(spec, g, batch=batch, context=seq)
        out["inference"] = {
            "tokens_per_s_per_gpu": dr.tokens_per_s,
            "per_million_tokens": cost.cost_per_million_tokens(dr.tokens_per_s, hourly) * rate,
        }
    return out


# ---------------------------------------------------------------------------------------------
# Picker
# ---------------------------------------------------------------------------------------------


def picker(params: dict) -> dict:
    """Ranked accelerators and counts for a workload, with the reason for every rejection
    (advisor.recommend.recommend)."""
    spec = _model(params)
    task = _choice(params, "task", "inference", recommend.TASKS)
    w = recommend.Workload(
        model=spec,
        task=task,
        batch=_int(params, "batch", 1, maximum=MAX_BATCH),
        seq=_int(params, "seq", 2048, maximum=MAX_SEQ),
        acquire=_choice(params, "acquire", "either", recommend.ACQUIRE),
        currency=_choice(params, "currency", "USD", cost.CURRENCIES),
        horizon_months=_int(params, "horizon_months", 36, maximum=600),
        max_gpus=_int(params, "max_gpus", 8, maximum=MAX_GPUS),
        budget=_opt_num(params, "budget"),
        target_tokens_per_s=_opt_num(params, "target_tokens_per_s"),
    )
    rows = recommend.ranked_rows(w, get_catalog())
    ok = [r for r in rows if r["ok"]]
    rejected = [r for r in rows if not r["ok"]]
    return {
        "model": _model_info(spec),
        "task": task,
        "recommended": [recommend.row_dict(r) for r in ok[:10]],
        "rejected": [recommend.row_dict(r) for r in rejected[:15]],
        "counts": {"ok": len(ok), "rejected": len(rejected)},
    }


# ---------------------------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------------------------


def report(params: dict) -> dict:
    """Client advisory report (advisor.report.web_report; reports engineer): {profile (YAML
    text), lang, publisher} -> {html, fragment, filename} or {"error": ...}."""
    from .report import web_report

    return web_report(params, get_catalog())


FUNCTIONS = {
    "vram": vram,
    "roofline": roofline,
    "budget": budget,
    "picker": picker,
    "report": report,
}


def run(name: str, params) -> dict:
    """Call calculator `name` with `params`; an AdvisorError becomes {"error": {...}}."""
    try:
        if name not in FUNCTIONS:
            from .errors import unknown_name

            raise unknown_name("calculator", str(name), FUNCTIONS)
        if not isinstance(params, dict):
            raise AdvisorError("field.not_object", "params: expected an object", field="params")
        merged = {**DEFAULTS.get(name, {}), **params}
        return FUNCTIONS[name](merged)
    except AdvisorError as exc:
        return {"error": exc.to_dict()}


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


def call(name: str, params_json: str) -> str:
    """JSON text in, JSON text out: what the Web Worker calls."""
    try:
        params = json.loads(params_json)
    except ValueError as exc:
        return dumps({"error": AdvisorError("field.bad_json", str(exc), field="params").to_dict()})
    return dumps(run(name, params))
