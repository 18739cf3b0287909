"""Compute and time: FLOPs and bytes moved for training steps, prefill and decode; the roofline
bound; step times, token rates and time to train.

Conventions and sources
- Training FLOPs per token: ``6 * N`` for the matrix-multiply parameters ``N`` (forward 2N,
  backward 4N; Kaplan et al. 2020, arXiv:2001.08361 §2.1; Hoffmann et al. 2022,
  arXiv:2203.15556), with ``N`` the *active* parameters for mixture-of-experts models, plus the
  attention term ``6 * 2 * layers * seq * d_attn`` (``12 * L * H * Q * T`` in PaLM, Chowdhery et
  al. 2022, arXiv:2204.02311 appendix B; the ``s/6h`` term of Narayanan et al. 2021,
  arXiv:2104.04473 eq. 3). This is the "model FLOPs" convention of published MFU figures
  (no causal halving, no recompute).
- Hardware FLOPs add recomputation: full activation checkpointing re-runs the forward pass
  (``8 * N`` per token, Narayanan et al. 2021 §3.5); selective checkpointing re-runs only the
  attention core (Korthikanti et al. 2022, arXiv:2205.05198 §5).
- Inference counts the real causal work: prefill ``2 * N`` per token plus ``4 * d_attn`` per
  (query, key) pair per layer over the causal triangle; decode ``2 * N`` per new token plus
  attention over the cached context (Pope et al. 2022, arXiv:2211.05102 §2).
- Roofline (Williams, Waterman, Patterson 2009, CACM 52(4)): attainable = min(peak,
  intensity * bandwidth); ridge point = peak / bandwidth (FLOP per byte).
- Collectives: ring all-reduce moves ``2(n-1)/n * bytes`` per GPU, reduce-scatter and all-gather
  ``(n-1)/n * bytes`` (NVIDIA nccl-tests, doc/PERFORMANCE.md, "bus bandwidth"); ZeRO-3 moves
  1.5x the data of DDP (Rajbhandari et al. 2020, arXiv:1910.02054 §7); Megatron tensor
  parallelism all-reduces activations 4 times per layer per training step and twice per layer
  per forward (Shoeybi et al. 2019, arXiv:1909.08053 §3).

Every time here is an estimate from stated efficiency assumptions (`Efficiency`), replaced by
measured ones (`MeasuredEfficiency`, e.g. from bench_results/) when present.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from ..arch.flops import (  # noqa: F401  (moved; compute's callers keep their names)
    TrainingFlops,
    _layer_spans,
    _total_params,
    attention_flops_per_token_train,
    decode_flops,
    expected_experts_touched,
    matmul_params,
    prefill_flops,
    training_flops,
)
from ..arch.models import ModelSpec
from ..core import vocab
from ..core.errors import AdvisorError, check_int, check_non_negative, check_positive
from .timing import (  # noqa: F401
    KV_BYTES,
    PEAK_KEY,
    decode_weight_bytes,
    fp4_dequantised,
    kv_read_bytes,
    weight_peak_key,
)

BOUNDS = ("compute", "memory_bandwidth", "interconnect", "vram_capacity")
TASKS = vocab.TRAINING_TASKS


# Bytes per activation element for each training precision (autocast runs matmuls in 16 bits).
_ACT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "amp-bf16": 2, "amp-fp16": 2}


# ---------------------------------------------------------------------------------------------
# Efficiency assumptions
# ---------------------------------------------------------------------------------------------

EFFICIENCY_SOURCES = {
    "train_mfu": (
        "0.40: PaLM 540B reaches 46.2 % MFU (Chowdhery et al. 2022, arXiv:2204.02311 Table 3); "
        "Llama 3 405B 38-43 % BF16 MFU on 8k-16k H100 (Dubey et al. 2024, arXiv:2407.21783 "
        "Table 4); a single well-tuned node does no better than these"
    ),
    "prefill_mfu": (
        "0.40: prefill is a batch of large matrix multiplies like a training forward pass; the "
        "training figure is used until a measurement replaces it"
    ),
    "decode_bandwidth": (
        "0.80: device-copy benchmarks reach 80-90 % of the HBM datasheet bandwidth (stas00, "
        "ml-engineering, compute/accelerator README, 'Accelerator memory size and speed'); "
        "decode kernels (weights + KV cache streamed once per step) reach somewhat less"
    ),
    "interconnect": (
        "0.75: nccl-tests all-reduce bus bandwidth on 8 A100 NVLink3 is about 230 of 300 GB/s "
        "per direction (NVIDIA nccl-tests doc/PERFORMANCE.md defines busbw; it is unidirectional)"
    ),
}


@dataclass(frozen=True)
class Efficiency:
    """Efficiency overrides. A field left None is computed by the kernel-level model
    (advisor.perf.timing / advisor.perf.training, the accelerator's achievable ceilings from
    advisor.perf.efficiency); a number replaces it with the flat textbook estimate at that fraction:

    - `train_mfu`: fraction of the dense peak a training step sustains (the user's --mfu or a
      measured train-step MFU);
    - `prefill_mfu`: the same for a prefill;
    - `decode_bandwidth`: fraction of the datasheet bandwidth a decode step streams at;
    - `interconnect`: fraction of the stated per-direction link bandwidth collectives reach;
    - `source`: "model" or where the numbers came from.
    """

    train_mfu: float | None = None
    prefill_mfu: float | None = None
    decode_bandwidth: float | None = None
    interconnect: float | None = None
    source: str = "model"

    def __post_init__(self):
        for name in ("train_mfu", "prefill_mfu", "decode_bandwidth", "interconnect"):
            v = getattr(self, name)
            if v is not None:
                check_positive(f"efficiency.{name}", v, maximum=1.0)

    def flat(self, name: str) -> float:
        """The value of `name`, or its flat textbook default (FLAT_DEFAULTS) when None."""
        v = getattr(self, name)
        return FLAT_DEFAULTS[name] if v is None else v

    def to_dict(self) -> dict:
        d = asdict(self)
        d["sources"] = {k: EFFICIENCY_SOURCES[k] for k in FLAT_DEFAULTS if d.get(k) is not None}
        d["model"] = (
            "kernel-level: achievable matmul and bandwidth per accelerator (catalog/efficiency), "
            "flash-attention and decode fractions fitted on published measurements "
            "(bench_results/validation/throughput.json)"
        )
        return d


# The flat fractions of the textbook estimate, used only where an Efficiency field is set or
# where a caller asks for `ideal` figures (sources in EFFICIENCY_SOURCES).
FLAT_DEFAULTS = {
    "train_mfu": 0.40,
    "prefill_mfu": 0.40,
    "decode_bandwidth": 0.80,
    "interconnect": 0.75,
}

DEFAULT_EFFICIENCY = Efficiency()
FLAT = Efficiency(**FLAT_DEFAULTS, source="flat textbook fractions")
"""The textbook estimate (one MFU, one bandwidth fraction for every accelerator), kept for
comparison with the kernel-level model and for the --mfu override."""


class _WithEfficiency:
    """to_dict for the results that carry the Efficiency they were computed with (its sources
    included)."""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["efficiency"] = self.efficiency.to_dict()
        return d


@dataclass(frozen=True)
class MeasuredEfficiency:
    """Measured fractions for one accelerator (e.g. read from a bench_results/ run). Any field
    left None keeps the assumption it would replace."""

    gpu_id: str
    source: str
    train_mfu: float | None = None
    prefill_mfu: float | None = None
    decode_bandwidth: float | None = None
    interconnect: float | None = None


def efficiency_for(
    gpu_id: str,
    measured=None,
    base: Efficiency = DEFAULT_EFFICIENCY,
) -> Efficiency:
    """`base` with every field a measurement for `gpu_id` supplies replaced.

    `measured` is None, one `MeasuredEfficiency`-like object, or an iterable of them (objects
    with `gpu_id`, `source` and optional fraction attributes; duck-typed so that the benchmark
    reader need not be imported). Later entries win.
    """
    if measured is None:
        return base
    items = [measured] if hasattr(measured, "gpu_id") else list(measured)
    out = base
    for m in items:
        if getattr(m, "gpu_id", None) != gpu_id:
            continue
        changes = {}
        for name in ("train_mfu", "prefill_mfu", "decode_bandwidth", "interconnect"):
            v = getattr(m, name, None)
            if v is not None:
                changes[name] = v
        if changes:
            out = replace(out, source=f"measured: {m.source}", **changes)
    return out


# ---------------------------------------------------------------------------------------------
# GPU figures (duck-typed on advisor.data.hardware.GPU)
# ---------------------------------------------------------------------------------------------


def peak_flops(gpu, precision: str) -> float:
    """Dense peak in FLOP/s for the precision a workload multiplies at (see `PEAK_KEY`).

    Raises `AdvisorError` (key ``gpu.precision_unsupported``) when the catalog lists no dense
    rate for it (e.g. bf16 on V100 or T4)."""
    if precision not in PEAK_KEY:
        from ..core.errors import unknown_name

        raise unknown_name("precision", precision, PEAK_KEY)
    key = weight_peak_key(gpu, precision)
    peaks = gpu.peak_tflops or {}
    if key == "fp8" and key not in peaks:
        key = "fp16"  # fp8 weights on a card without fp8 tensor cores are upcast
    value = peaks.get(key)
    if not value:
        raise AdvisorError(
            "gpu.precision_unsupported",
            f"{gpu.id}: no dense {key} throughput in the catalog",
            field="precision",
            gpu=gpu.id,
            precision=key,
        )
    return float(value) * 1e12


def bandwidth_bytes_per_s(gpu) -> float:
    """Datasheet memory bandwidth in bytes/s (GB/s * 10^9)."""
    return float(gpu.memory_bandwidth_gb_per_s) * 1e9


def link_bytes_per_s(gpu) -> float:
    """Per-direction GPU-to-GPU bandwidth in bytes/s.

    NVIDIA states NVLink as the bidirectional sum (H100: 900 GB/s = 450 each way) and PCIe x16
    likewise (Gen5: 128 GB/s = 64 each way); nccl-tests' bus bandwidth is unidirectional
    (doc/PERFORMANCE.md). A catalog entry may say `interconnect_direction: unidirectional`
    in its document to opt out of the halving."""
    stated = float(gpu.interconnect_gb_per_s or 0)
    doc = gpu.doc or {}
    direction = doc.get("interconnect_direction", "bidirectional")
    per_dir = stated if direction == "unidirectional" else stated / 2
    return per_dir * 1e9


def ridge_point(gpu, precision: str) -> float:
    """FLOP per byte at which the roofline turns: peak FLOP/s / bandwidth bytes/s (Williams 2009)."""
    return peak_flops(gpu, precision) / bandwidth_bytes_per_s(gpu)


# ---------------------------------------------------------------------------------------------
# FLOPs
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Bytes moved
# ---------------------------------------------------------------------------------------------


def training_bytes(components: dict) -> float:
    """DRAM bytes one training step moves, from a memory breakdown (advisor.memory.estimate components,
    per GPU): weights read in forward and backward and written by the optimizer (3x); gradients
    written and read (2x); optimizer states and master weights read and written (2x); saved
    activations written in forward and read in backward (2x). A lower bound: traffic inside a
    layer (fused kernels) is not counted."""
    c = components
    return float(
        3 * c.get("weights", 0)
        + c.get("quant_scales", 0)
        + 3 * c.get("lora_adapters", 0)
        + 2 * c.get("gradients", 0)
        + 2 * c.get("master_weights", 0)
        + 2 * c.get("optimizer_states", 0)
        + 2 * c.get("activations", 0)
        + 2 * c.get("logits", 0)
    )


# ---------------------------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------------------------


def allreduce_bytes(nbytes: float, n: int) -> float:
    """Bytes each GPU sends in a ring all-reduce of `nbytes`: 2(n-1)/n * nbytes (nccl-tests
    doc/PERFORMANCE.md: busbw = algbw * 2(n-1)/n)."""
    return 0.0 if n <= 1 else 2.0 * (n - 1) / n * nbytes


def gather_bytes(nbytes: float, n: int) -> float:
    """Bytes each GPU sends in a ring all-gather or reduce-scatter: (n-1)/n * nbytes."""
    return 0.0 if n <= 1 else (n - 1) / n * nbytes


# ---------------------------------------------------------------------------------------------
# Roofline
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Roofline:
    """Where a workload sits on a GPU's roofline (Williams et al. 2009)."""

    flops: float
    bytes_moved: float
    intensity_flop_per_byte: float
    ridge_point: float
    bound: str  # one of BOUNDS
    peak_tflops: float
    bandwidth_gb_per_s: float
    attainable_tflops: float  # min(peak, intensity * bandwidth)
    compute_time_s: float  # flops / (peak * efficiency)
    memory_time_s: float  # bytes / (bandwidth * efficiency)
    comm_time_s: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def roofline(
    flops: float,
    bytes_moved: float,
    gpu,
    precision: str,
    *,
    compute_efficiency: float = 1.0,
    bandwidth_efficiency: float = 1.0,
    comm_time_s: float = 0.0,
    fits: bool = True,
) -> Roofline:
    """Arithmetic intensity (FLOP/byte) against the ridge point; the bound is `vram_capacity`
    when the workload does not fit, `interconnect` when communication takes longer than both
    compute and memory traffic, else `compute` or `memory_bandwidth` by the slower of the two
    (at the stated efficiencies; at efficiency 1 this is intensity vs ridge point)."""
    check_non_negative("flops", flops)
    check_non_negative("bytes_moved", bytes_moved)
    check_non_negative("comm_time_s", comm_time_s)
    peak = peak_flops(gpu, precision)
    bw = bandwidth_bytes_per_s(gpu)
    intensity = flops / bytes_moved if bytes_moved else math.inf
    t_c = flops / (peak * compute_efficiency)
    t_m = bytes_moved / (bw * bandwidth_efficiency)
    if not fits:
        bound = "vram_capacity"
    elif comm_time_s > max(t_c, t_m):
        bound = "interconnect"
    else:
        bound = "compute" if t_c >= t_m else "memory_bandwidth"
    attainable = min(peak, intensity * bw) if bytes_moved else peak
    return Roofline(
        flops=float(flops),
        bytes_moved=float(bytes_moved),
        intensity_flop_per_byte=intensity,
        ridge_point=peak / bw,
        bound=bound,
        peak_tflops=peak / 1e12,
        bandwidth_gb_per_s=bw / 1e9,
        attainable_tflops=attainable / 1e12,
        compute_time_s=t_c,
        memory_time_s=t_m,
        comm_time_s=float(comm_time_s),
    )


# ---------------------------------------------------------------------------------------------
# Training step time
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepTime(_WithEfficiency):
    """One optimizer step on `gpus` GPUs."""

    step_time_s: float
    compute_time_s: float
    memory_time_s: float
    comm_time_s: float  # total collective time per step
    exposed_comm_s: float  # the part not hidden behind compute
    tokens_per_step: int
    tokens_per_s: float
    flops: TrainingFlops
    model_flops_utilisation: float  # achieved MFU (model FLOPs / (time * peak * gpus))
    roofline: Roofline
    efficiency: Efficiency
    fits: bool
    assumptions: tuple[str, ...] = field(default=())


def training_step_time(
    setup,
    gpu,
    *,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    memory=None,
) -> StepTime:
    """Time of one training step of `setup` (an advisor.memory.estimate.TrainingSetup; `batch` is the
    micro-batch per data-parallel rank, `gpus` the total, `tensor_parallel` the TP degree).

    compute = hardware FLOPs per GPU / (peak * efficiency.train_mfu);
    memory = training_bytes(per-GPU breakdown) / (bandwidth * efficiency.decode_bandwidth);
    comm per GPU (per-direction link bandwidth * efficiency.interconnect):
      DDP, ZeRO-1/2: all-reduce (or reduce-scatter + all-gather) of the trainable gradients,
        overlapped with the backward pass (2/3 of compute) by bucketing (Li et al. 2020,
        arXiv:2006.15704 §3.2.3);
      ZeRO-3: 1.5x that (all-gather forward, all-gather backward, reduce-scatter), overlapped
        with the whole step by prefetching (Rajbhandari et al. 2020 §7);
      tensor parallel: 4 all-reduces of b*s*h activations per layer, on the critical path
        (Shoeybi et al. 2019 §3).
    step = max(compute, memory) + exposed comm. `memory` (a MemoryEstimate) avoids recomputing
    the breakdown; it is also used to tell whether the setup fits (`fits` is set by callers via
    `memory_fits`; here True unless total > the GPU's memory).
    """
    from ..memory import estimate as mem

    est = memory if memory is not None else mem.training_memory(setup)
    spec = setup.model
    gpus = check_int("gpus", setup.gpus)
    tp = check_int("tensor_parallel", setup.tensor_parallel)
    if gpus % tp:
        raise AdvisorError(
            "gpus.tp_divides",
            f"gpus: {gpus} is not a multiple of tensor_parallel {tp}",
            field="tensor_parallel",
            gpus=gpus,
            tensor_parallel=tp,
        )
    dp = gpus // tp
    task = "train"
    lora = 0
    if setup.lora_rank:
        task = "qlora" if setup.quant else "lora"
        lora = _lora_params(spec, setup.lora_rank, setup.lora_targets)
    tokens_per_step = setup.batch * setup.seq * dp
    fl = training_flops(
        spec,
        tokens_per_step,
        setup.seq,
        task=task,
        checkpointing=setup.checkpointing,
        lora_params=lora,
    )
    precision = setup.precision
    peak = peak_flops(gpu, precision)
    mfu_flat = efficiency.flat("train_mfu")
    bw_flat = efficiency.flat("decode_bandwidth")
    t_compute = fl.hardware_flops / gpus / (peak * mfu_flat)
    bytes_moved = training_bytes(est.components)
    t_memory = bytes_moved / (bandwidth_bytes_per_s(gpu) * bw_flat)

    link = link_bytes_per_s(gpu) * efficiency.flat("interconnect")
    weight_bytes, grad_bytes = _sync_bytes(setup, lora)
    sharding = setup.sharding
    if sharding == "zero3":
        # all-gather the weights in forward and in backward, reduce-scatter the gradients
        dp_bytes = 2 * gather_bytes(weight_bytes, dp) + gather_bytes(grad_bytes, dp)
    else:
        # DDP all-reduce; ZeRO-1/2 reduce-scatter + all-gather: the same volume
        dp_bytes = allreduce_bytes(grad_bytes, dp)
    tp_bytes = (
        4
        * spec.num_layers
        * allreduce_bytes(
            setup.batch * setup.seq * spec.hidden_size * _ACT_BYTES.get(precision, 2), tp
        )
    )
    t_dp = dp_bytes / link if link else (math.inf if dp_bytes else 0.0)
    t_tp = tp_bytes / link if link else (math.inf if tp_bytes else 0.0)
    t_core = max(t_compute, t_memory)
    hidden = t_core if sharding == "zero3" else t_core * 2 / 3
    exposed = max(0.0, t_dp - hidden) + t_tp
    step = t_core + exposed
    comm_total = t_dp + t_tp
    if efficiency.train_mfu is None:
        detailed = _detailed_step(setup, gpu, task, dp, tp)
        step = detailed.step_time_s
        t_compute = detailed.parts_s["compute"]
        comm_total = detailed.parts_s["tp_comm"] + detailed.parts_s["dp_exposed"]
        exposed = comm_total
        assumptions = (
            "kernel-level model: each GEMM, attention and element-wise pass at the "
            "accelerator's achievable matmul and bandwidth ceilings (advisor.perf.timing)",
            "data-parallel gradient traffic overlapped with the backward pass; tensor-parallel "
            "traffic on the critical path",
        )
    else:
        assumptions = (
            f"compute at {mfu_flat:.0%} of the dense {PEAK_KEY[precision]} peak "
            f"({efficiency.source})",
            f"links at {efficiency.flat('interconnect'):.0%} of the per-direction bandwidth",
            "data-parallel gradient traffic overlapped with backward; tensor-parallel traffic not",
        )
    fits = est.total_bytes <= gpu.memory_bytes
    rl = roofline(
        fl.hardware_flops / gpus,
        bytes_moved,
        gpu,
        precision,
        compute_efficiency=fl.hardware_flops / gpus / peak / max(t_compute, 1e-30),
        bandwidth_efficiency=bw_flat,
        comm_time_s=comm_total,
        fits=fits,
    )
    mfu = fl.model_flops / (step * peak * gpus)
    return StepTime(
        step_time_s=step,
        compute_time_s=t_compute,
        memory_time_s=t_memory,
        comm_time_s=t_dp + t_tp,
        exposed_comm_s=exposed,
        tokens_per_step=tokens_per_step,
        tokens_per_s=tokens_per_step / step,
        flops=fl,
        model_flops_utilisation=mfu,
        roofline=rl,
        efficiency=efficiency,
        fits=fits,
        assumptions=assumptions,
    )


def _detailed_step(setup, gpu, task: str, dp: int, tp: int):
    """advisor.perf.training.train_step for a memory.TrainingSetup on one node (DP ranks each run
    one micro-batch of `setup.batch` sequences)."""
    from . import training
    from .parallel import Layout

    layout = Layout(
        tp=tp,
        dp=dp,
        gpus_per_node=max(8, setup.gpus),
        micro_batch=setup.batch,
        sharding=setup.sharding,
    )
    precision = setup.precision if setup.precision in training.PRECISIONS else "bf16"
    return training.train_step(
        setup.model,
        gpu,
        layout,
        seq=setup.seq,
        precision=precision,
        checkpointing=setup.checkpointing,
        task=task,
    )


def _sync_bytes(setup, lora_params: int) -> tuple[float, float]:
    """(weight bytes, gradient bytes) of one tensor-parallel shard that data-parallel collectives
    move, in the dtypes advisor.memory.estimate keeps them: weights at the training precision (fp32
    under autocast) or the quantised base format plus 16-bit adapters; gradients of the
    trainable parameters in their dtype."""
    from ..arch import quant
    from ..memory.estimate import linear_params

    spec = setup.model
    tp = setup.tensor_parallel
    amp = setup.precision.startswith("amp")
    param_dt = 4 if (setup.precision == "fp32" or amp) else 2
    n_total = _total_params(spec)
    if setup.quant:
        linear = linear_params(spec)
        w, sc = quant.stored_bytes(quant.FORMATS[setup.quant], linear, n_total - linear)
        weights = float(w + sc)
        train_dt = 4 if amp else 2
    else:
        weights = float(n_total * param_dt)
        train_dt = param_dt
    if lora_params:
        weights += lora_params * train_dt
        grads = float(lora_params * train_dt)
    else:
        grads = float(n_total * param_dt)
    return weights / tp, grads / tp


def _lora_params(spec: ModelSpec, rank: int, targets) -> int:
    """LoRA adapter parameters: r * (in + out) per targeted projection per layer (Hu et al. 2021
    §4), as advisor.memory.estimate counts them."""
    from ..memory import estimate as mem

    return int(mem.lora_params(spec, rank, targets))


@dataclass(frozen=True)
class TrainingTime:
    """Time to train on `tokens` tokens."""

    tokens: int
    gpus: int
    hours: float
    days: float
    gpu_hours: float
    steps: int
    step: StepTime

    def to_dict(self) -> dict:
        d = asdict(self)
        d["step"] = self.step.to_dict()
        return d


def time_to_train(
    setup, gpu, tokens: int, *, efficiency: Efficiency = DEFAULT_EFFICIENCY, memory=None
) -> TrainingTime:
    """Wall time to train on `tokens` tokens: ceil(tokens / tokens per step) steps of
    `training_step_time`."""
    tokens = check_int("tokens", tokens)
    st = training_step_time(setup, gpu, efficiency=efficiency, memory=memory)
    steps = math.ceil(tokens / st.tokens_per_step)
    seconds = steps * st.step_time_s
    hours = seconds / 3600
    return TrainingTime(
        tokens=tokens,
        gpus=setup.gpus,
        hours=hours,
        days=hours / 24,
        gpu_hours=hours * setup.gpus,
        steps=steps,
        step=st,
    )


def ideal_training_hours(
    model_flops: float, gpus: int, peak_flops_per_gpu: float, mfu: float
) -> float:
    """Hours for `model_flops` on `gpus` GPUs at `mfu` of `peak_flops_per_gpu` (no communication
    model): the textbook estimate C / (n * peak * MFU) (Kaplan et al. 2020 §2.1)."""
    check_positive("model_flops", model_flops)
    check_int("gpus", gpus)
    check_positive("peak_flops", peak_flops_per_gpu)
    check_positive("mfu", mfu, maximum=1.0)
    return model_flops / (gpus * peak_flops_per_gpu * mfu) / 3600


# ---------------------------------------------------------------------------------------------
# Inference
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecodeRate(_WithEfficiency):
    """Decode throughput at a batch and context."""

    tokens_per_s: float  # all sequences together
    tokens_per_s_per_sequence: float
    step_time_s: float  # time per output token (inter-token latency)
    weight_bytes: float  # per GPU per step
    kv_bytes: float  # per GPU per step
    flops: float  # per GPU per step
    comm_time_s: float
    roofline: Roofline
    efficiency: Efficiency


def decode_tokens_per_s(
    spec: ModelSpec,
    gpu,
    *,
    batch: int = 1,
    context: int = 2048,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    fits: bool = True,
) -> DecodeRate:
    """Decode rate: each step streams the weights and the KV cache once
    (bytes / (bandwidth * efficiency.decode_bandwidth)) unless the FLOPs take longer
    (flops / (peak * efficiency.prefill_mfu)); under tensor parallelism each GPU reads 1/t of both
    and the step adds 2 all-reduces of batch*h activations per layer (Pope et al. 2022 §3)."""
    batch = check_int("batch", batch)
    context = check_int("seq", context)
    tp = check_int("tensor_parallel", tensor_parallel)
    w = decode_weight_bytes(spec, weights, batch) / tp
    kv = kv_read_bytes(spec, context, batch, kv_dtype) / tp
    fl = decode_flops(spec, context, batch) / tp
    t_c = fl / (peak_flops(gpu, weights) * efficiency.flat("prefill_mfu"))
    t_m = (w + kv) / (bandwidth_bytes_per_s(gpu) * efficiency.flat("decode_bandwidth"))
    link = link_bytes_per_s(gpu) * efficiency.flat("interconnect")
    comm = 2 * spec.num_layers * allreduce_bytes(batch * spec.hidden_size * 2, tp)
    t_comm = comm / link if comm else 0.0
    step = max(t_c, t_m) + t_comm
    if efficiency.decode_bandwidth is None:
        from . import timing

        dev = timing.Device.of(gpu, weight_peak_key(gpu, weights))
        fabric = _fabric(gpu) if tp > 1 else None
        d = timing.decode_step_time(
            spec,
            dev,
            _stack(),
            batch=batch,
            context=context,
            weights=weights,
            kv_bytes=KV_BYTES[kv_dtype],
            tp=tp,
            tp_fabric=fabric,
        )
        step, t_comm = d["seconds"], d["comm_s"]
    rl = roofline(
        fl,
        w + kv,
        gpu,
        weights,
        compute_efficiency=efficiency.flat("prefill_mfu"),
        bandwidth_efficiency=efficiency.flat("decode_bandwidth"),
        comm_time_s=t_comm,
        fits=fits,
    )
    return DecodeRate(
        tokens_per_s=batch / step,
        tokens_per_s_per_sequence=1 / step,
        step_time_s=step,
        weight_bytes=w,
        kv_bytes=kv,
        flops=fl,
        comm_time_s=t_comm,
        roofline=rl,
        efficiency=efficiency,
    )


@dataclass(frozen=True)
class PrefillTime(_WithEfficiency):
    seconds: float  # time to first token for the batch
    tokens_per_s: float
    flops: float  # per GPU
    roofline: Roofline
    efficiency: Efficiency


def prefill_time(
    spec: ModelSpec,
    gpu,
    *,
    batch: int = 1,
    prompt_tokens: int = 2048,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
    fits: bool = True,
) -> PrefillTime:
    """Prefill (time to first token): compute-bound at efficiency.prefill_mfu of the dense peak,
    unless streaming the weights once and writing the KV cache takes longer."""
    batch = check_int("batch", batch)
    prompt_tokens = check_int("seq", prompt_tokens)
    tp = check_int("tensor_parallel", tensor_parallel)
    fl = prefill_flops(spec, prompt_tokens, batch) / tp
    nbytes = (
        decode_weight_bytes(spec, weights, batch * prompt_tokens)
        + kv_read_bytes(spec, prompt_tokens, batch, kv_dtype)
    ) / tp
    t_c = fl / (peak_flops(gpu, weights) * efficiency.flat("prefill_mfu"))
    t_m = nbytes / (bandwidth_bytes_per_s(gpu) * efficiency.flat("decode_bandwidth"))
    link = link_bytes_per_s(gpu) * efficiency.flat("interconnect")
    comm = 2 * spec.num_layers * allreduce_bytes(batch * prompt_tokens * spec.hidden_size * 2, tp)
    t_comm = comm / link if comm else 0.0
    seconds = max(t_c, t_m) + t_comm
    if efficiency.prefill_mfu is None:
        from . import timing

        dev = timing.Device.of(gpu, weight_peak_key(gpu, weights))
        d = timing.prefill_time(
            spec,
            dev,
            _stack(),
            batch=batch,
            prompt=prompt_tokens,
            weights=weights,
            tp=tp,
            tp_fabric=_fabric(gpu) if tp > 1 else None,
        )
        seconds = d["seconds"]
    rl = roofline(
        fl,
        nbytes,
        gpu,
        weights,
        compute_efficiency=efficiency.flat("prefill_mfu"),
        bandwidth_efficiency=efficiency.flat("decode_bandwidth"),
        comm_time_s=t_comm,
        fits=fits,
    )
    return PrefillTime(
        seconds=seconds,
        tokens_per_s=batch * prompt_tokens / seconds,
        flops=fl,
        roofline=rl,
        efficiency=efficiency,
    )


def _stack():
    from . import efficiency

    return efficiency.DEFAULT_STACK


def _fabric(gpu):
    from .network import intra_node_fabric

    return intra_node_fabric(gpu)
