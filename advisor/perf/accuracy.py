"""How accurate the time model is, as measured: the error band every time or throughput figure
carries, read from the published-measurement validation (bench/throughput_validation.py ->
bench_results/validation/throughput-summary.json).

A band is the median and the worst |predicted / measured - 1| over the validation entries of a
kind (training, serving, decode, prefill) that the model can express; a figure printed with
it reads "1,234 tokens/s (±12 % median, ±40 % worst on 31 published runs)".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

KINDS = ("training", "serving", "decode", "prefill")
SUMMARY = "throughput-summary.json"
# an installed wheel carries the summary as advisor/validation_data/ (pyproject.toml); a
# checkout reads it from bench_results/validation/ (written by bench/throughput_validation.py)
DEFAULT_PATHS = (
    Path(__file__).resolve().parent.parent / "validation_data" / SUMMARY,
    Path(__file__).resolve().parent.parent.parent / "bench_results" / "validation" / SUMMARY,
)


@dataclass(frozen=True)
class Band:
    kind: str
    n: int
    median_abs_error: float
    worst_abs_error: float

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "n": self.n,
            "median_abs_error": self.median_abs_error,
            "worst_abs_error": self.worst_abs_error,
        }


def bands_from_summary(summary: dict) -> dict[str, Band]:
    """Bands by kind from a validation summary; kinds with no entries are left out. Latency
    entries count as serving. The serving, decode and prefill bands are those of the models
    served layer by layer without routed experts (`summary.by_kind_dense`; `by_kind` in a
    summary written before it): a layer-list MoE model's serving figure takes the `moe_serving`
    band (`serving_kind`), so neither band borrows the other's errors."""
    by = (summary or {}).get("by_kind_dense") or (summary or {}).get("by_kind") or {}
    out = {}
    for kind in KINDS:
        v = by.get(kind)
        if not isinstance(v, dict) or not v.get("n"):
            continue
        out[kind] = Band(
            kind, int(v["n"]), float(v["median_abs_error"]), float(v["worst_abs_error"])
        )
    # MoE serving over the layer list (expert parallelism): its own band, from the validation's
    # layer-list MoE serving entries (`moe_serving`, issue 35: TensorRT-LLM's with the fitted
    # efficiency.Stack.trtllm_moe_factor, SGLang's without)
    moe = (summary or {}).get("moe_serving") or {}
    if isinstance(moe, dict) and moe.get("n"):
        out["moe_serving"] = Band(
            "moe_serving",
            int(moe["n"]),
            float(moe["median_abs_error"]),
            float(moe["worst_abs_error"]),
        )
    trt = moe.get("trtllm") if isinstance(moe, dict) else None
    held = (trt or {}).get("held_out") or {}
    if held.get("n"):
        # the fitted TensorRT-LLM MoE term's band: its held-out half's errors
        out["trtllm_moe"] = Band(
            "trtllm_moe",
            int(held["n"]),
            float(held["median_abs_error"]),
            float(held["worst_abs_error"]),
        )
    return out


_bands: dict[str, Band] | None = None


def bands(path: str | Path | None = None) -> dict[str, Band]:
    """The bands of the committed validation summary (cached); {} when no summary is found."""
    global _bands
    if path is None and _bands is not None:
        return _bands
    got: dict[str, Band] = {}
    for p in [Path(path)] if path is not None else DEFAULT_PATHS:
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        got = bands_from_summary(doc.get("summary") if isinstance(doc, dict) else None)
        break
    if path is None:
        _bands = got
    return got


def set_bands(summary: dict) -> None:
    """Install bands from a summary dict (the browser worker, which has no repository)."""
    global _bands
    _bands = bands_from_summary(summary)


MEMORY_SUMMARY = "memory-summary.json"
_memory: dict | None = None


def memory_band() -> dict | None:
    """The memory model's measured band: median and worst |estimate / measured - 1| of the peak
    allocated bytes over the validation cases of bench/memory_validation.py (real PyTorch runs
    on CPU and FakeTensorMode shapes), with the number of cases and families; None when the
    summary is missing."""
    global _memory
    if _memory is None:
        _memory = {}
        for p in DEFAULT_PATHS:
            try:
                doc = json.loads(p.with_name(MEMORY_SUMMARY).read_text(encoding="utf-8"))
                m = doc["summary"]["memory"]
                _memory = {
                    "n": int(m["n"]),
                    "families": int(m["families"]),
                    "median_abs_error": float(m["median_abs_error"]),
                    "worst_abs_error": float(m["worst_abs_error"]),
                }
                break
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return dict(_memory) if _memory else None


def band(kind: str) -> Band | None:
    return bands().get(kind)


def serving_kind(spec) -> str:
    """The band a serving figure of model `spec` carries: "moe_serving" for a model described
    layer by layer with routed experts (DeepSeek-V3, Qwen3-MoE, gpt-oss, Llama 4) where that
    band is measured, else "serving"."""
    layers = getattr(spec, "layers", None) or ()
    moe = any(getattr(layer.mlp, "experts", 0) for layer in layers)
    return "moe_serving" if moe and band("moe_serving") else "serving"


def band_dict(kind: str) -> dict | None:
    b = band(kind)
    return b.to_dict() if b else None
