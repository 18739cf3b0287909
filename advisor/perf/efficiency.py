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

from ..data.achievable import (
    Achievable,
    Measured,
)

# ---------------------------------------------------------------------------------------------
# Per-accelerator ceilings: the catalog's records (advisor.data.achievable), calibrated here
# ---------------------------------------------------------------------------------------------


def calibrated(base: Achievable, gpu, results) -> Achievable:
    """`base` with the figures a CUDA bench run of this GPU measured (bench_results/: the
    `matmul` workload's best TFLOPS by dtype, the `bandwidth` workload's fraction of the
    datasheet), latest run winning. `results`: an advisor.data.benchresults.BenchResults."""
    out = base
    for r in results or ():
        if r.device != "cuda" or r.configuration.get("catalog_gpu") != gpu.id:
            continue
        if r.workload == "matmul":
            mm, basis = dict(out.matmul_fraction), dict(out.basis)
            for d in r.derived:
                name = d.name
                if name.startswith("best_tflops_"):
                    dtype = name.removeprefix("best_tflops_")
                    peak = (gpu.peak_tflops or {}).get(dtype)
                    if peak and d.value > 0:
                        mm[dtype] = min(1.0, d.value / peak)
                        basis[dtype] = "measured"
            out = replace(
                out, matmul_fraction=mm, source=f"measured: bench_results/{r.file}", basis=basis
            )
        elif r.workload == "bandwidth":
            v = r.value("fraction_of_datasheet_bandwidth")
            best = r.value("device_copy_best_gb_per_s")
            if not v and best:
                v = best / float(gpu.memory_bandwidth_gb_per_s)
            if v and 0 < v <= 1.02:
                out = replace(
                    out,
                    bandwidth_fraction=min(1.0, v),
                    source=f"measured: bench_results/{r.file}",
                    basis={**out.basis, "bandwidth": "measured"},
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
      behind (bucketed all-reduce, Li et al. 2020, arXiv:2006.15704 §3.2.3);
    - `eager_iteration_ms`: host time the GPU waits for in each engine iteration (one decode
      step with the prompt chunks riding in it) when the engine runs without CUDA graphs and
      without an overlapping scheduler (serving.point's `cuda_graphs=False`; its cause and fit
      in the comment at the field);
    - `moe_host_sync_ms`: host time the GPU waits for per MoE layer and micro-batch (forward,
      backward and recompute together) when Megatron-Core's dropless alltoall token
      dispatcher runs the layer (advisor.perf.training.MOE_DISPATCHERS, its source there).
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
    # FITTED (not a measured rate): on the `fit` half of the published training runs that name
    # Megatron-Core's alltoall dispatcher (bench/throughput_validation.py FIT_GRID, issue 35);
    # its cause and the evidence beside it are in advisor.perf.training.MOE_DISPATCHERS
    moe_host_sync_ms: float = 6.0
    # FITTED (not a measured rate) on the `fit` half of the published runs whose configuration
    # states that the engine runs without CUDA graphs (NVIDIA's MLPerf v5.0/v5.1 TensorRT-LLM
    # harness, `harness_fields.use_graphs: False`, the entries' `cuda_graphs: false`: Llama 2
    # 70B, Llama 3.1 405B and Mixtral on B200, GB200 and GB300; issue 35).
    # Cause: each iteration the host schedules the batch, prepares its inputs, launches every
    # kernel of the step one by one and checks the sampled tokens' stop criteria; the GPU idles
    # through the part that is not hidden. TensorRT-LLM's overlap scheduler exists to hide it
    # ("the scheduler overlaps CPU tasks (e.g., checking sampling stop criteria, updating
    # responses, scheduling the next batch) with GPU computation", nvidia.github.io/TensorRT-LLM
    # features/overlap-scheduler), CUDA graphs to remove the launches; no source states its
    # size. Evidence it is a per-iteration constant: the logged mean TPOT of NVIDIA's B200
    # Llama 2 70B runs less the model's TPOT at the concurrency Little's law gives from the
    # same log (rate x mean latency), with the runs' own mean answer of 272-273 tokens, is
    # 12.1 / 10.6 / 8.8 / 11.2 ms at 256 / 270 / 1,531 / 1,868 sequences in flight per GPU (v5.1
    # Interactive, v5.0 Interactive, v5.1 Server, v5.0 Server): flat across a 7x range of batch,
    # so neither a per-sequence nor a per-FLOP cost. The fit half's six runs that depend on it
    # (Llama 2 70B v5.0 Server tokens/s and mean TTFT, v5.1 Interactive; Llama 3.1 405B v5.0
    # B200 Offline, v5.1 GB300 Server, GB200 Interactive) give a mean |log error| of 0.268 /
    # 0.187 / 0.140 / 0.151 / 0.211 at 8 / 9 / 9.5 / 10 / 10.5 ms; the held-out half's eight
    # check it (worst 25 % at 9.5 ms).
    eager_iteration_ms: float = 9.5
    # FITTED (not a measured rate): TensorRT-LLM's MoE layer time over the model's, on Hopper
    # and Blackwell (`trtllm_moe_extra_s`: what it is fitted on, its band, what is not itemised)
    trtllm_moe_factor: float = 2.0
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
            "moe_host_sync_ms": self.moe_host_sync_ms,
            "trtllm_moe_factor": self.trtllm_moe_factor,
            "eager_iteration_ms": self.eager_iteration_ms,
            "source": self.source,
        }


DEFAULT_STACK = Stack()

# the GPU generations Stack.trtllm_moe_factor was fitted on (a catalog GPU's `architecture`
# begins so; Blackwell Ultra included)
MOE_GENERATIONS = ("hopper", "blackwell")


def generation(gpu) -> str | None:
    """The generation of `gpu` that Stack.trtllm_moe_factor was fitted on ("hopper",
    "blackwell": the catalog's `architecture` field), else None."""
    arch = (getattr(gpu, "architecture", None) or "").strip().lower()
    return next((g for g in MOE_GENERATIONS if arch.startswith(g)), None)


def trtllm_moe_factor(stack: Stack, gpu, engine: str | None) -> float | None:
    """The fitted multiplier on an MoE layer's routed-expert time for `engine` on `gpu`
    (`trtllm_moe_extra_s`); None where it does not apply: another engine, or a generation
    it was not fitted on (Ampere, Ada, non-NVIDIA)."""
    if engine != "trtllm" or generation(gpu) is None:
        return None
    return stack.trtllm_moe_factor


def trtllm_moe_extra_s(stack: Stack, gpu, engine: str | None, *, expert_s: float) -> float:
    """Seconds TensorRT-LLM's MoE layers take beyond the model's kernels in a step whose routed
    experts (grouped GEMMs, and with expert parallelism the dispatch and combine) the model
    times at `expert_s`: (Stack.trtllm_moe_factor - 1) x expert_s, on Hopper and Blackwell
    with engine "trtllm"; 0 elsewhere.

    FITTED, not itemised. The factor is fitted (bench/throughput_validation.py FIT_GRID, mean
    |log error|) on the `fit` half of the TensorRT-LLM MoE serving entries over the models'
    layer lists (the perf overview's DeepSeek-V3, gpt-oss, Qwen3-MoE and Llama 4 Maverick
    runs on H100, H200, B200 and GB200 at the batch rule of advisor.perf.offline, and NVIDIA's
    MLPerf Inference v5.1 DeepSeek-R1 runs on B200, GB200 and GB300 at their configs' batch,
    with the mean decode batch and attention-DP balance TensorRT-LLM's ADP scheduler blog
    measured on that config: bench/throughput_validation.py ADP_BLOG): 2.0 (mean |log error|
    0.170 on the fit half; 0.178 at 1.9, 0.173 at 2.1: known to about ±0.1). One value for
    both generations: a factor per generation fit 2.1 on Hopper and 2.0 on Blackwell and did
    worse on the whole-source hold-out (w70a, before the ADP effects). Band, the held-out
    half's errors: -33 % to +105 %, median |error| 21 % (without the term: median 79 %, worst +209 %);
    the MLPerf Offline runs are now 12-20 % fast, the MLPerf GB300 Server run +105 % (its
    batch is the queue's: only the balance applies) and the perf overview's Blackwell runs
    1-34 % slow. Whole-source hold-out (every fraction refitted without one source family):
    without the tensorrt-llm family (its 65 counted entries, dense ones included) the factor
    goes to 2.25 (from the MLPerf runs alone; 4.0 before the ADP effects) and that family's
    median |error| is 15 %, worst 85 %; without mlperf-inference it goes to 1.75 and that
    family's is 11 %, worst 124 %.
    Why a multiplier on the routed experts: among the three forms compared on the held-out
    half (this multiplier; a time per routed token per MoE layer; a time per MoE layer per
    iteration) it had the smallest held-out median and worst (w70a, before the ADP effects:
    28 % / 138 % against 36 % / 198 % and 32 % / 184 %), and at the batch NVIDIA states for TensorRT-LLM its MoE decode
    step is 1.8-2x the model's (its DeepSeek-R1 best-practice guide, its ADP scheduler blog's
    MLPerf GB200 run), while SGLang's DeepEP decode pool on H100 is within +6 % of the same
    model: the gap is TensorRT-LLM's, not the kernels' everywhere.
    Not itemised: no stored source breaks TensorRT-LLM's MoE step into kernel times in text
    (its tech blogs give the breakdown only as figures; FlashInfer's benchmark of its NVFP4
    MoE puts the grouped GEMM within 15-22 % of the model; host work is hidden by its overlap
    scheduler; neither the perf overview nor the MLPerf configs use MTP; the all-to-all's
    fixed cost is already counted, expert_parallel.A2A_FIXED_IN_DOMAIN_US). The record of what
    was checked is the comment above bench/throughput_validation.py `_trtllm_moe`."""
    f = trtllm_moe_factor(stack, gpu, engine)
    if f is None:
        return 0.0
    return (f - 1.0) * expert_s


# Hopper's weight-only MXFP4 path: the MoE's MXFP4 weights are upcast to bf16 inside Triton's
# grouped matmul (triton_kernels `matmul_ogs`, bf16 x mxfp4, bf16 MMA): the kernel TensorRT-LLM's
# TRITON MoE backend runs on Hopper (examples/models/core/gpt_oss/README.md support matrix
# "Hopper | bf16 | mxfp4 | TRITON"), as vLLM and SGLang do for gpt-oss there. Measured on H200
# by Triton's maintainers, triton-lang/triton PR 9248 (2026-01-19, "[Kernels] Enable high
# occupancy persistent matmul"): "This brings persistent bf16 x mxfp4 MoE from 2290 GBps -> 2640
# GBps on h200, or a 15% improvement"; PR 9279 (2026-01-22) then 2650 -> 2800 GBps. The rate
# taken is 2290 GB/s, the kernel before those two changes: every Hopper gpt-oss measurement in
# the validation set (TensorRT-LLM's perf overview, 2025) ran an earlier Triton. As a fraction
# of H200's measured device copy (4010 GB/s, catalog/efficiency/h200.yaml): 2290 / 4010 = 0.571
# (the later 2800 GB/s would be 0.698). The fraction carries to the other Hopper parts (same
# SMs and kernel; H100's copy is 2900 GB/s, so about 1650 GB/s). It is a streaming rate: it
# slows the memory-bound side of the routed experts' grouped GEMMs (`timing.gemm_time`'s
# `dequant`, `timing.weight_dequant`), not their compute side, and not the dense layers (gpt-oss
# keeps those in bf16; no rate is published for a dense MXFP4 path on Hopper).
MXFP4_HOPPER_GB_PER_S = 2290.0
MXFP4_HOPPER_REFERENCE_COPY_GB_PER_S = 4010.0
MXFP4_HOPPER_DEQUANT = round(MXFP4_HOPPER_GB_PER_S / MXFP4_HOPPER_REFERENCE_COPY_GB_PER_S, 3)
MXFP4_HOPPER_SOURCE = (
    "triton-lang/triton PR 9248 (2026-01-19): Triton's bf16 x mxfp4 MoE kernel at 2290 GB/s "
    "on H200 (0.571 of its 4010 GB/s device copy)"
)


def fp4_weight_stream(gpu, weights: str) -> float:
    """The fraction of the achievable bandwidth at which `gpu` streams FP4 `weights` through
    its GEMMs (`timing.gemm_time`'s `dequant`): 1.0 where its FP4 tensor cores take the format
    (`GPU.runs_fp4`) or for a non-FP4 format; MXFP4_HOPPER_DEQUANT for MXFP4 on Hopper, which
    is upcast inside a weight-only kernel (the constant's comment: measured, sourced). Other
    cards that dequantise FP4 (Ampere, Ada, CDNA 3) have no published rate for their path
    (vLLM's Marlin FP4, AMD Quark's emulation): 1.0, the stated assumption."""
    runs = getattr(gpu, "runs_fp4", None)
    if weights not in ("nvfp4", "mxfp4") or (runs is not None and runs(weights)):
        return 1.0
    if weights == "mxfp4" and generation(gpu) == "hopper":
        return MXFP4_HOPPER_DEQUANT
    return 1.0


def fp4_stream_note(gpu, weights: str, spec=None) -> dict | None:
    """What `time serve` and the serving web API say where `fp4_weight_stream` is below 1 and
    the model (`spec`, when given) has routed experts, the only GEMMs the rate slows: the
    fraction and its source; None elsewhere."""
    f = fp4_weight_stream(gpu, weights)
    if f >= 1.0 or (spec is not None and not getattr(spec, "is_moe", False)):
        return None
    return {
        "fraction": f,
        "gb_per_s": MXFP4_HOPPER_GB_PER_S,
        "reference_gpu": "H200",
        "reference": "triton-lang/triton PR 9248",
        "source": MXFP4_HOPPER_SOURCE,
    }


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


def measured_for(gpu_id: str, measured) -> Measured | None:
    """The figures the bench runs in `measured` (advisor.data.achievable.Measured records, or
    None) give for `gpu_id`, later runs winning field by field; None when none names it."""
    out = None
    for m in measured or ():
        if m.gpu_id != gpu_id or (m.train_mfu is None and m.bandwidth_fraction is None):
            continue
        changes = {k: getattr(m, k) for k in ("train_mfu", "bandwidth_fraction") if getattr(m, k)}
        out = replace(out or Measured(gpu_id, m.source), source=m.source, **changes)
    return out


def achievable_with(gpu, measured: Measured | None) -> Achievable:
    """`gpu`'s achievable ceilings with a measured copy bandwidth in place of the catalog's."""
    a = achievable_of(gpu)
    if measured is None or not measured.bandwidth_fraction:
        return a
    return replace(
        a,
        bandwidth_fraction=measured.bandwidth_fraction,
        source=f"{a.source}; bandwidth measured: {measured.source}",
        basis={**a.basis, "bandwidth": "measured"},
    )
