"""How accurate advisor is: memory validation and the time model's measured error (methodology page, VRAM page).

Part of hooks/facts/ (the guide's figures; see its __init__)."""

from __future__ import annotations

import json
import math
import statistics
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

from advisor.core import units

from .common import _frozen, root

VALIDATION_FILE = Path("bench_results") / "validation" / "memory.json"  # under root()


@lru_cache(maxsize=1)
def validation():
    """The committed estimate-vs-measured table, or None before it exists."""
    path = root() / VALIDATION_FILE
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def validation_rows() -> tuple:
    """One row per validation case of bench_results/validation/memory.json (schema 1).

    Each row: the case name, its setup (task, precision, optimizer, checkpointing, LoRA rank,
    batch, seq, whether shapes ran under FakeTensorMode), the estimated and measured peak
    allocated bytes with the signed error (estimate - measured) / measured, and the worst
    absolute error over the other measured components (weights, gradients, optimizer states...).
    """
    doc = validation()
    if doc is None:
        return ()
    rows = []
    for c in doc["cases"]:
        comps = c["components"]
        peak = comps["peak_allocated_bytes"]
        others = [abs(v["error"]) for k, v in comps.items() if k != "peak_allocated_bytes"]
        st = c["setup"]
        rows.append(
            _frozen(
                case=c["case"],
                family=c.get("family", st.get("family", "")),
                task=st.get("task", ""),
                precision=st.get("precision", ""),
                optimizer=st.get("optimizer", ""),
                checkpointing=st.get("checkpointing", ""),
                lora_rank=st.get("lora_rank", 0),
                batch=st.get("batch", 0),
                seq=st.get("seq", 0),
                fake=bool(st.get("fake", False)),
                gpus=st.get("gpus", 1),
                sharding=st.get("sharding", "ddp"),
                bnb=st.get("optimizer") == "adamw-8bit" or bool(st.get("quant")),
                quant=st.get("quant") or "",
                lora_targets=", ".join(st.get("lora_targets", ())) if st.get("lora_rank") else "",
                method=c.get("method", ""),
                estimated=peak["estimate"],
                measured=peak["measured"],
                error=(peak["estimate"] - peak["measured"]) / peak["measured"],
                component_worst=max(others) if others else 0.0,
            )
        )
    return tuple(rows)


@lru_cache(maxsize=1)
def validation_summary() -> MappingProxyType:
    """Median and worst absolute error of the peak over the validation cases."""
    rows = validation_rows()
    errs = [abs(r["error"]) for r in rows]
    if not errs:
        return _frozen(cases=0, median=0.0, worst=0.0, component_worst=0.0, bound=0.0)
    doc = validation()
    return _frozen(
        families=len({r["family"] for r in rows}),
        cases=len(errs),
        median=statistics.median(errs),
        worst=max(errs),
        component_worst=max(r["component_worst"] for r in rows),
        bound=doc.get("bounds", {}).get("peak_allocated_bytes", 0.0),
        component_bound=doc.get("bounds", {}).get("components", 0.0),
        date=doc.get("date", ""),
        torch=doc.get("environment", {}).get("torch", ""),
    )


def units_note() -> MappingProxyType:
    """GB and GiB as the site uses them (advisor.core.units)."""
    return _frozen(gb=units.GB, gib=units.GIB, ratio=units.GIB / units.GB)


def finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


THROUGHPUT_FILE = "bench_results/validation/throughput.json"
KIND_ORDER = ("decode", "prefill", "serving", "latency", "training", "matmul", "bandwidth")


@lru_cache(maxsize=1)
def throughput_validation():
    """bench_results/validation/throughput.json (bench/throughput_validation.py), or None."""
    path = root() / THROUGHPUT_FILE
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _workload_text(w: dict) -> str:
    """The published workload in one short line: accelerator x count, TP/PP/DP, precision,
    batch or concurrency, ISL/OSL or seq (only the fields the source stated)."""
    parts = []
    acc = w.get("accelerator") or w.get("accelerator_as_named") or "?"
    parts.append(f"{w['count']} × {acc}" if w.get("count") else acc)
    lay = [
        f"{k} {w[f]}"
        for k, f in (
            ("TP", "tensor_parallel"),
            ("PP", "pipeline_parallel"),
            ("CP", "context_parallel"),
            ("EP", "expert_parallel"),
        )
        if w.get(f) and w.get(f) != 1
    ]
    parts += lay
    prec = w.get("weights") or w.get("precision")
    if prec:
        parts.append(str(prec).upper())  # a format as datasheets write it: FP8, BF16
    if w.get("batch"):
        parts.append(f"b {w['batch']}")
    if w.get("concurrency"):
        parts.append(f"c {w['concurrency']}")
    if w.get("input_tokens") and w.get("output_tokens"):
        parts.append(f"{w['input_tokens']}/{w['output_tokens']}")
    elif w.get("input_tokens"):
        parts.append(f"in {w['input_tokens']}")
    elif w.get("seq"):
        parts.append(f"seq {w['seq']}")
    return ", ".join(parts)


@lru_cache(maxsize=1)
def throughput_rows() -> tuple:
    """One row per published measurement the model can express (validation and calibration
    roles), in kind order: id, kind, role, half (fit / check), model, workload line, metric,
    measured, predicted, signed error, source URL and title."""
    doc = throughput_validation()
    if doc is None:
        return ()
    rows = []
    for r in doc["entries"]:
        if not r["expressible"] or r["role"] == "derived":
            continue
        w = r["workload"]
        rows.append(
            _frozen(
                id=r["id"],
                kind=r["kind"],
                role=r["role"],
                half=r.get("half") or "",
                model=w.get("model") or w.get("model_hf") or "",
                workload=_workload_text(w),
                metric=r["metric"],
                measured=r["measured"],
                predicted=r["predicted"],
                error=r["error"],
                url=r["source"]["url"],
                title=r["source"].get("title") or r["source"]["url"],
            )
        )
    order = {k: i for i, k in enumerate(KIND_ORDER)}
    rows.sort(key=lambda x: (order.get(x["kind"], 99), x["role"] != "validation", x["id"]))
    return tuple(rows)


@lru_cache(maxsize=1)
def throughput_unexpressed() -> MappingProxyType:
    """The published measurements the model cannot express (`rows`: id, kind, the English reason,
    its key and params for the page's translation `tv.reason.<key>`, source URL) and how many
    (`count`)."""
    doc = throughput_validation()
    rows = tuple(
        _frozen(
            id=r["id"],
            kind=r["kind"],
            reason=r["reason"],
            key=r.get("reason_key") or "other",
            params=MappingProxyType(dict(r.get("reason_params") or {})),
            url=r["source"]["url"],
        )
        for r in (doc["entries"] if doc else ())
        if not r["expressible"]
    )
    return _frozen(count=len(rows), rows=rows)


@lru_cache(maxsize=1)
def throughput_summary() -> MappingProxyType:
    """The validation summary: entries, roles, per-kind median / worst |error|, the held-out
    half, the targets, and the fitted stack fractions."""
    doc = throughput_validation()
    if doc is None:
        return _frozen(entries=0)
    s = doc["summary"]
    kinds = [_frozen(kind=k, **s["by_kind"][k]) for k in (*KIND_ORDER, "all") if k in s["by_kind"]]
    return _frozen(
        entries=s["entries"],
        validation=s["validation_entries"],
        calibration=s["calibration"],
        derived=s["derived"],
        not_expressible=s["not_expressible"],
        kinds=tuple(kinds),
        all=_frozen(**s["by_kind"]["all"]),
        held_out=_frozen(**s["held_out"]) if s.get("held_out") else None,
        target_median=s["targets"]["median_abs_error"],
        target_worst=s["targets"]["worst_abs_error"],
        median_met=s["targets"]["median_met"],
        worst_met=s["targets"]["worst_met"],
        stack=_frozen(**doc["model"]["stack"]),
        date=doc["generated_utc"][:10],
        # the 2025-26 part (bench/published entries with `period: 2025-26`) and the
        # whole-source hold-out (a refit without each source family), where the JSON has them
        period=_frozen(
            **{k: v for k, v in s["period_2025_26"].items() if k != "unanswered_by_reason"}
        )
        if s.get("period_2025_26", {}).get("entries")
        else None,
        # MoE serving over the layer list, counted (issue 35): TensorRT-LLM's with the fitted
        # efficiency.Stack.trtllm_moe_factor, its held-out band and the errors without it
        moe=_frozen(**s["moe_serving"]) if s.get("moe_serving") else None,
        # the serving entries without routed experts: the band a dense model's serving figures
        # carry (advisor.perf.accuracy.bands_from_summary)
        dense_serving=_frozen(**s["by_kind_dense"]["serving"])
        if s.get("by_kind_dense", {}).get("serving")
        else None,
        holdout=tuple(
            _frozen(family=f, held=_frozen(**v["held_out"]), seen=_frozen(**v["committed_fit"]))
            for f, v in s["source_holdout"]["families"].items()
        )
        if s.get("source_holdout")
        else (),
    )
