"""The accelerator picker: every accelerator and count ranked, with rejections."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..advice import recommend, shortfall
from ..core import limits, vocab
from ..money import cost
from ..perf import serving_fit as sfit
from .common import (
    MAX_BATCH,
    MAX_GPUS,
    MAX_SEQ,
    _bands,
    _f,
    _model,
    _model_info,
    _Request,
    get_catalog,
)


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


def _finite_or_none(x: float) -> float | None:
    return round(x, 4) if math.isfinite(x) else None


def _regulated(row: dict) -> list[dict]:
    """The report's regulated-data flags (advisor.report.data.regulated_flags) of the picker's
    first choice: a consumer card, a community cloud's price."""
    from ..data.prices import is_community_cloud

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
