"""Achievable efficiencies: what real kernels reach of an accelerator's datasheet peaks.

Two kinds of figures, kept apart:

- **Per accelerator** (`Achievable`, from `catalog/efficiency/<gpu-id>.yaml`, each figure with its
  source): the maximum achievable matmul FLOP/s by dtype (MAMF: the best large-GEMM rate,
  Bekman, ml-engineering, compute/accelerator/README.md "Maximum Achievable Matmul FLOPS
  comparison table", measured with mamf-finder.py) and the achievable memory bandwidth (a
  device-to-device copy). An accelerator with no measurement takes the median fraction of the
  measured accelerators of its vendor (`vendor_default`), and says so in `source`. A CUDA run
  of `bench/` in bench_results/ (matmul and bandwidth workloads) replaces both (`calibrated`).
- **Per software stack** (`Stack`): fractions of those ceilings that the kernels of an LLM
  reach: flash attention forward and backward (Dao 2023, FlashAttention-2, arXiv:2307.08691
  §4.1: forward 50-73 % of A100 peak, backward 35-63 %; Shah et al. 2024, FlashAttention-3,
  arXiv:2407.08608 §4.1: up to 75 % of H100 FP16 peak forward), the bandwidth a decode step
  streams weights at, the extra cost of dequantising weight-only formats, and a fixed
  per-kernel cost. The stack figures are fitted on the calibration half of
  `bench_results/validation/throughput.json` and checked on the other half (the builder,
  `bench/throughput_validation.py`, prints both).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..core.errors import AdvisorError, check_positive

# ---------------------------------------------------------------------------------------------
# Per-accelerator ceilings
# ---------------------------------------------------------------------------------------------

# Fallbacks when not one accelerator of a vendor has a measurement: the fractions the
# ml-engineering MAMF table shows for data-centre parts of the generation before (NVIDIA A100
# bf16 MAMF about 0.9 of peak); bandwidth: device copies reach 0.8-0.9 of the datasheet (same
# README, "Accelerator memory size and speed"). Replaced by the vendor median once one card of
# the vendor is measured.
FALLBACK_MATMUL_FRACTION = 0.75
FALLBACK_BANDWIDTH_FRACTION = 0.85


def _median(values) -> float:
    """The median as `statistics.median` defines it (the middle value, or the mean of the two
    middle ones), here so that the browser's start does not import `statistics` (and through
    it `fractions`, `decimal`, `numbers`: 22 kB of the runtime's standard library; issue 12)."""
    xs = sorted(values)
    if not xs:
        raise ValueError("median of no values")
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


@dataclass(frozen=True)
class Achievable:
    """Achievable ceilings of one accelerator, as fractions of its dense datasheet peaks.

    `matmul_fraction` maps a peak key (bf16, fp16, fp8, fp32, tf32, int8) to MAMF / peak;
    keys it lacks take the bf16 fraction (the same tensor cores). `bandwidth_fraction`:
    achievable / datasheet memory bandwidth. `source` says where each came from."""

    gpu_id: str
    matmul_fraction: Mapping[str, float] = field(default_factory=dict, hash=False)
    bandwidth_fraction: float = FALLBACK_BANDWIDTH_FRACTION
    source: str = "assumed"
    sources: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)

    def matmul(self, key: str) -> float:
        f = self.matmul_fraction
        return f.get(key) or f.get("bf16") or f.get("fp16") or FALLBACK_MATMUL_FRACTION

    def to_dict(self) -> dict:
        return {
            "gpu_id": self.gpu_id,
            "matmul_fraction": dict(self.matmul_fraction),
            "bandwidth_fraction": self.bandwidth_fraction,
            "source": self.source,
            "sources": dict(self.sources),
        }


def achievable_from_dict(doc, source_name: str, gpu) -> Achievable:
    """An `Achievable` from a `catalog/efficiency/*.yaml` document and its catalog GPU:
    `matmul_tflops` (dtype -> measured TFLOPS) and `bandwidth_gb_per_s` become fractions of the
    GPU's dense peaks; each figure needs `sources.<field>.url` (https) and `read`."""

    def fail(fld: str, msg: str):
        return AdvisorError("catalog.efficiency", f"{source_name}: {fld}: {msg}", field=fld)

    if not isinstance(doc, dict):
        raise fail("document", "expected a mapping")
    allowed = {"id", "matmul_tflops", "bandwidth_gb_per_s", "sources", "notes"}
    for key in doc:
        if key not in allowed:
            raise fail(str(key), f"unknown field; expected one of {sorted(allowed)}")
    sources = doc.get("sources") or {}
    if not isinstance(sources, dict):
        raise fail("sources", "expected a mapping field -> {url, read}")
    fractions: dict[str, float] = {}
    urls: dict[str, str] = {}
    mm = doc.get("matmul_tflops") or {}
    if not isinstance(mm, dict):
        raise fail("matmul_tflops", "expected a mapping dtype -> TFLOPS")
    for dtype, value in mm.items():
        dtype = str(dtype)
        peak = (gpu.peak_tflops or {}).get(dtype)
        if not peak:
            raise fail(f"matmul_tflops.{dtype}", f"{gpu.id} has no dense {dtype} peak")
        v = check_positive(f"matmul_tflops.{dtype}", value)
        if v > peak * 1.02:
            raise fail(f"matmul_tflops.{dtype}", f"{v} TFLOPS is above the dense peak {peak}")
        fractions[dtype] = min(1.0, v / peak)
    bw_fraction = None
    if doc.get("bandwidth_gb_per_s") is not None:
        v = check_positive("bandwidth_gb_per_s", doc["bandwidth_gb_per_s"])
        stated = float(gpu.memory_bandwidth_gb_per_s)
        if v > stated * 1.02:
            raise fail("bandwidth_gb_per_s", f"{v} GB/s is above the datasheet {stated}")
        bw_fraction = min(1.0, v / stated)
    wanted = [f"matmul_tflops.{d}" for d in mm]
    if "bandwidth_gb_per_s" in doc:
        wanted.append("bandwidth_gb_per_s")
    for fld in wanted:
        src = sources.get(fld) if isinstance(sources, dict) else None
        if src is None and fld.startswith("matmul_tflops.") and isinstance(sources, dict):
            src = sources.get("matmul_tflops")
        url = src.get("url") if isinstance(src, dict) else None
        if not isinstance(url, str) or not url.startswith("https://") or not src.get("read"):
            raise fail(f"sources.{fld}", "needs url (https) and read (date)")
        urls[fld] = url
    return Achievable(
        gpu_id=gpu.id,
        matmul_fraction=fractions,
        bandwidth_fraction=bw_fraction or FALLBACK_BANDWIDTH_FRACTION,
        source=f"catalog/{source_name}",
        sources=urls,
    )


def vendor_defaults(gpus, measured: Mapping[str, Achievable]) -> dict[str, Achievable]:
    """An `Achievable` for every GPU: its own where measured, else the median fractions of the
    measured GPUs of its vendor (by dtype), else the fallbacks. `source` says which."""
    by_vendor: dict[str, list[Achievable]] = {}
    gpu_vendor = {g.id: g.vendor for g in gpus}
    for gid, a in measured.items():
        by_vendor.setdefault(gpu_vendor.get(gid, "?"), []).append(a)
    out: dict[str, Achievable] = {}
    for g in gpus:
        peers = by_vendor.get(g.vendor, [])
        if g.id in measured:
            own = measured[g.id]
            keys = {k for a in peers for k in a.matmul_fraction} - set(own.matmul_fraction)
            fill = {k: _median(a.matmul(k) for a in peers) for k in sorted(keys)}
            out[g.id] = replace(own, matmul_fraction={**fill, **own.matmul_fraction})
            continue
        if not peers:
            out[g.id] = Achievable(g.id, {}, FALLBACK_BANDWIDTH_FRACTION, "assumed")
            continue
        keys = {k for a in peers for k in a.matmul_fraction}
        mm = {k: _median(a.matmul(k) for a in peers) for k in sorted(keys)}
        bw = _median(a.bandwidth_fraction for a in peers)
        ids = ", ".join(sorted(a.gpu_id for a in peers))
        out[g.id] = Achievable(g.id, mm, bw, f"median of measured {g.vendor} cards ({ids})")
    return out


def calibrated(base: Achievable, gpu, results) -> Achievable:
    """`base` with the figures a CUDA bench run of this GPU measured (bench_results/: the
    `matmul` workload's best TFLOPS by dtype, the `bandwidth` workload's fraction of the
    datasheet), latest run winning. `results`: an advisor.data.benchresults.BenchResults."""
    out = base
    for r in results or ():
        if r.device != "cuda" or r.configuration.get("catalog_gpu") != gpu.id:
            continue
        if r.workload == "matmul":
            mm = dict(out.matmul_fraction)
            for d in r.derived:
                name = d.name
                if name.startswith("best_tflops_"):
                    dtype = name.removeprefix("best_tflops_")
                    peak = (gpu.peak_tflops or {}).get(dtype)
                    if peak and d.value > 0:
                        mm[dtype] = min(1.0, d.value / peak)
            out = replace(out, matmul_fraction=mm, source=f"measured: bench_results/{r.file}")
        elif r.workload == "bandwidth":
            v = r.value("fraction_of_datasheet_bandwidth")
            best = r.value("device_copy_best_gb_per_s")
            if not v and best:
                v = best / float(gpu.memory_bandwidth_gb_per_s)
            if v and 0 < v <= 1.02:
                out = replace(
                    out, bandwidth_fraction=min(1.0, v), source=f"measured: bench_results/{r.file}"
                )
    return out


# ---------------------------------------------------------------------------------------------
# Per-stack fractions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    """Fractions of the achievable ceilings that an LLM's kernels reach (module docstring).

    - `gemm_efficiency`: fraction of MAMF (the best shape's rate) a model's own GEMM shapes
      reach inside a training or serving framework;
    - `attention_fwd`, `attention_bwd`: flash-attention FLOP/s as a fraction of the dense
      16-bit peak;
    - `elementwise_factor`: multiplier on the counted element-wise traffic (unfused kernels,
      casts, dropout and RNG that the count leaves out);
    - `decode_bandwidth`: fraction of the achievable bandwidth a decode step streams weights
      and KV cache at (16-bit weights);
    - `dequant`: weight-only format -> multiplier on that bandwidth (dequantising in the GEMV
      kernel costs instruction throughput; gpt-fast's int8/int4 rows show it);
    - `kernel_us`: fixed cost per kernel (launch and tail), `kernels_per_layer` of them;
    - `tp_overlap`: fraction of tensor-parallel communication hidden behind compute in
      training (Megatron/Transformer Engine overlap the TP collectives with GEMMs);
    - `tp_overlap_inference`: the same in decode and prefill, where each all-reduce feeds the
      next block and sits on the critical path (network.tp_allreduce_time);
    - `allreduce_us`: the software cost of one inference TP all-reduce beyond its alpha-beta
      time (kernel launch, the cross-GPU barrier of a custom all-reduce);
    - `fused_attention`: False for frameworks from before flash attention (2022), whose
      attention writes and reads the full score matrix;
    - `dp_overlap`: fraction of the backward pass data-parallel gradient traffic can hide
      behind (bucketed all-reduce, Li et al. 2020, arXiv:2006.15704 §3.2.3).
    """

    # Fitted by `python -m bench.throughput_validation --fit` on the `fit` half of the
    # published measurements (coordinate descent over FIT_GRID, mean |log error|); the `check`
    # half is held out. attention_bwd, seq_step_us.vllm and request_ms ended at a bound of their
    # grid: they absorb costs the model does not itemise, not measured rates of their own
    # (widening the last two overfits: the held-out prefill worst goes from 34 % to 92 %).
    # attention_fwd (0.75: FlashAttention-3's 740 of 989 TFLOP/s on H100, Shah et al. 2024,
    # arXiv:2407.08608 §4.1) and decode_bandwidth (1.0 of the measured copy bandwidth) sit at
    # the physical bound of their grids; tp_overlap_inference at 0 is the physics (the
    # all-reduce output feeds the next block).
    gemm_efficiency: float = 0.80
    attention_fwd: float = 0.75
    attention_bwd: float = 0.20
    elementwise_factor: float = 1.0
    decode_bandwidth: float = 1.00
    dequant: Mapping[str, float] = field(
        default_factory=lambda: {
            "int8": 0.60,
            "int4": 0.70,
            "gptq": 0.70,
            "awq": 0.70,
            "nf4": 0.45,
        },
        hash=False,
    )
    kernel_us: float = 4.0
    kernels_per_layer: int = 12
    # serving engine work per decode step outside the GPU kernels (scheduling, sampling,
    # detokenising) per sequence in the batch, and per request before its first token;
    # the vLLM 0.6 performance post (blog.vllm.ai, 2024-09-05) measured the CPU side at up
    # to half of a step. Fitted per engine.
    seq_step_us: Mapping[str, float] = field(
        default_factory=lambda: {"vllm": 20.0, "trtllm": 0.0}, hash=False
    )
    request_ms: float = 5.0
    tp_overlap: float = 0.8
    tp_overlap_inference: float = 0.0
    allreduce_us: float = 5.0
    # training attention: fused flash attention (Dao et al. 2022, arXiv:2205.14135) or the
    # unfused QK^T GEMM -> softmax -> PV GEMM that materialises the scores (timing.train_layer)
    fused_attention: bool = True
    dp_overlap: float = 1.0
    source: str = "fitted on the calibration half of bench_results/validation/throughput.json"

    def dequant_factor(self, weights: str) -> float:
        return self.dequant.get(weights, 1.0)

    def to_dict(self) -> dict:
        return {
            "gemm_efficiency": self.gemm_efficiency,
            "elementwise_factor": self.elementwise_factor,
            "attention_fwd": self.attention_fwd,
            "attention_bwd": self.attention_bwd,
            "decode_bandwidth": self.decode_bandwidth,
            "dequant": dict(self.dequant),
            "kernel_us": self.kernel_us,
            "seq_step_us": dict(self.seq_step_us),
            "request_ms": self.request_ms,
            "kernels_per_layer": self.kernels_per_layer,
            "tp_overlap": self.tp_overlap,
            "tp_overlap_inference": self.tp_overlap_inference,
            "allreduce_us": self.allreduce_us,
            "fused_attention": self.fused_attention,
            "dp_overlap": self.dp_overlap,
            "source": self.source,
        }


DEFAULT_STACK = Stack()


def achievable_of(gpu) -> Achievable:
    """The `Achievable` the catalog attached to `gpu`, else the fallbacks (a GPU built outside
    the catalog, e.g. in a test)."""
    a = getattr(gpu, "achievable", None)
    return a if isinstance(a, Achievable) else Achievable(gpu.id)


def calibrated_gpus(gpus, results) -> tuple:
    """`gpus` with each one's `achievable` replaced by `calibrated` from the CUDA bench runs in
    `results` that name it (configuration.catalog_gpu); the others unchanged."""
    out = []
    for g in gpus:
        base = achievable_of(g)
        new = calibrated(base, g, results)
        out.append(g if new is base else replace(g, achievable=new))
    return tuple(out)
