"""Kernel-level time model of a transformer on one accelerator: each matrix multiply, attention
core, element-wise pass and collective of a layer, timed against the accelerator's achievable
ceilings (advisor.perf.efficiency) and the links it crosses (advisor.perf.network), then summed into a
training step, a prefill and a decode step.

Sources
- A GEMM of (m x k) by (k x n) does 2mkn FLOPs and moves (mk + kn + mn) elements at least;
  its time is the larger of the two over the achievable rates, plus a fixed kernel cost
  (the roofline of Williams et al. 2009 applied per kernel, as in Yuan et al. 2024, "LLM
  Inference Unveiled: Survey and Roofline Model Insights", arXiv:2402.16363 §3).
- Backward of a linear layer: two GEMMs of the forward's size (input and weight gradients;
  Narayanan et al. 2021, arXiv:2104.04473 §5.1: backward = 2x forward FLOPs).
- Flash attention executes the causal half of the score matrix (Dao 2023, arXiv:2307.08691
  §3.1.1 "causal masking ... skip about half the blocks"); backward does 2.5x the forward's
  matrix FLOPs (5 GEMMs against 2, ibid. §2.2).
- Megatron tensor parallelism: 2 all-reduces of the layer's b*s*h activations in forward and 2
  in backward (Shoeybi et al. 2019, arXiv:1909.08053 §3; with sequence parallelism the same
  bytes as reduce-scatter + all-gather, Korthikanti et al. 2022, arXiv:2205.05198 §4.2.2);
  decode: 2 all-reduces of b*h per layer (Pope et al. 2022, arXiv:2211.05102 §3.1).
- Element-wise traffic per token and layer, forward, in activation elements: two norms (read
  + write h each), two residual adds (2 reads + 1 write of h each), rotary embedding on q and
  k (read + write), the MLP activation (gated: read 2*ffn, write ffn; else read + write ffn):
  10h + 2(q + kv) + 3 ffn (2 ffn ungated); backward about twice that (counted from the
  Llama / GPT-2 layer definitions in transformers; fused kernels only lower it).
- Roofline (Williams, Waterman, Patterson 2009, CACM 52(4)): attainable = min(peak,
  intensity * bandwidth); ridge point = peak / bandwidth (FLOP per byte). `roofline` places a
  workload on it at datasheet peaks (the roofline calculator) or at the achievable ceilings the
  kernel-level model uses (`decode_roofline`; advisor.perf.training.step_roofline).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from types import MappingProxyType

from ..arch import layers as L
from ..arch.flops import expected_experts_touched, matmul_params
from ..arch.models import ModelSpec
from ..core.errors import check_int
from . import efficiency as eff
from . import network as net

# Which dense peak (GPU.peak_tflops key) a precision runs its matrix multiplies at.
# fp32: PyTorch leaves TF32 off for matmuls by default (torch.backends.cuda.matmul.allow_tf32 is
# False since 1.12; https://pytorch.org/docs/stable/notes/cuda.html#tf32-on-ampere), so fp32
# training runs at the non-tensor fp32 rate. Weight-only quantised formats (int8 LLM.int8/
# weight-only, int4, nf4, GPTQ, AWQ) dequantise to 16-bit and multiply at the fp16 rate
# (Dettmers et al. 2023, arXiv:2305.14314 §3 "compute data type BFloat16"; Frantar et al. 2022,
# arXiv:2210.17323 §5; Lin et al. 2023, arXiv:2306.00978 §4); fp8 weights use fp8 tensor cores
# where the card has them.
PEAK_KEY = {
    "fp32": "fp32",
    "tf32": "tf32",
    "bf16": "bf16",
    "fp16": "fp16",
    "amp-bf16": "bf16",
    "amp-fp16": "fp16",
    "fp8": "fp8",
    "int8": "fp16",
    "int4": "fp16",
    "nf4": "bf16",
    "gptq": "fp16",
    "awq": "fp16",
    # FP4 block formats: the FP4 peak where the card's tensor cores take the format natively,
    # else dequantised (`weight_peak_key`)
    "nvfp4": "fp4",
    "mxfp4": "fp4",
    # llama.cpp GGUF (Q8_0, Q4_K_M) and MLX 4-bit: weight-only, dequantised inside the matmul
    # kernel, activations and accumulation in 16 bits or wider (llama.cpp's Metal/CUDA
    # mul_mat kernels dequantise blocks to half; MLX `quantized_matmul` takes activations in
    # the scales' dtype): the 16-bit rate
    "q8_0": "fp16",
    "q4_k_m": "fp16",
    "mlx-4bit": "fp16",
    # MXFP8 training (FP8 E4M3 with one E8M0 scale per 32 elements, OCP MX v1.0): the FP8 peak,
    # on cards whose tensor cores take MX block scales (`weight_peak_key`)
    "mxfp8": "fp8",
}


def weight_peak_key(gpu, weights: str) -> str:
    """The catalog peak a GEMM over `weights` runs at on `gpu`: PEAK_KEY, except that FP4
    weights (nvfp4, mxfp4) reach the FP4 peak only where the card's FP4 tensor cores take that
    block format (`GPU.runs_fp4`: NVFP4 and MXFP4 on Blackwell, MXFP4 on CDNA 4; NVIDIA,
    "Introducing NVFP4...", 2025; AMD CDNA 4 whitepaper, 2025); elsewhere an engine
    dequantises them and multiplies at 16 bits: the paths advisor.data.support names for such
    cards are weight-only, bf16 activations (vLLM's Marlin FP4 kernels, "Weight-only FP4
    compression will be used leveraging the Marlin kernel"; TensorRT-LLM's gpt-oss MoE support
    matrix, Hopper "bf16 x mxfp4"; AMD Quark's MXFP4 "emulated on MI300", dequantised to bf16)."""
    key = PEAK_KEY[weights]
    if weights == "mxfp8":
        # MX block scaling needs Blackwell or CDNA 4 tensor cores (Transformer Engine's MXFP8
        # recipe requires Blackwell; Hopper scales FP8 per tensor): the cards that take MXFP4
        if "mxfp4" not in getattr(gpu, "fp4_formats", ()):
            raise AdvisorError(
                "gpu.mx_unsupported",
                f"{gpu.id}: no tensor cores for MXFP8 (block-scaled FP8 needs Blackwell or "
                "CDNA 4); choose fp8",
                field="precision",
                gpu=gpu.id,
                precision="mxfp8",
            )
        return key
    if key != "fp4":
        return key
    runs = getattr(gpu, "runs_fp4", None)
    if runs is not None and runs(weights):
        return "fp4"
    return "bf16" if "bf16" in (gpu.peak_tflops or {}) else "fp16"


ACTIVATIONS = ("bf16", "fp16", "fp8")


def matmul_peak_key(gpu, weights: str, activations: str | None = None) -> str:
    """The peak a run's matrix multiplies reach: `weight_peak_key`, or, where the engine keeps
    the activations in another precision, the slower of the two (a tensor core multiplies at
    its wider operand's rate: MXFP4 weights with bf16 activations run at the bf16 rate, with
    MXFP8 activations on Blackwell at the FP8 rate; TensorRT-LLM examples/models/core/gpt_oss/
    README.md "MoE Support Matrix": Hopper bf16 x mxfp4, Blackwell mxfp8 x mxfp4)."""
    key = weight_peak_key(gpu, weights)
    if activations is None:
        return key
    if activations not in ACTIVATIONS:
        from ..core.errors import unknown_name

        raise unknown_name("activations", activations, ACTIVATIONS)
    order = {"fp4": 0, "fp8": 1, "fp16": 2, "bf16": 2}
    act = PEAK_KEY[activations]
    return act if order.get(act, 2) > order.get(key, 2) else key


def fp4_dequantised(gpu, weights: str) -> bool:
    """True when FP4 weights are dequantised on this card (said next to the figure)."""
    return PEAK_KEY.get(weights) == "fp4" and weight_peak_key(gpu, weights) != "fp4"


# memory._DTYPE_BYTES (NVFP4: 16-element blocks with an E4M3 scale; MXFP4: 32 with an E8M0 one)
KV_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "nvfp4": 0.5 + 1 / 16, "mxfp4": 0.5 + 1 / 32}


@functools.lru_cache(maxsize=4096)
def decode_weight_bytes(spec: ModelSpec, weights: str = "bf16", batch: int = 1) -> float:
    """Weight bytes one decode step reads (whole model, before tensor-parallel division): the
    blocks' linear weights in `weights` format with their scales (advisor.arch.quant: only those are
    quantised; the output head, norms and biases stay 16-bit), only the experts the batch touches
    for MoE, and the output head. Embedding rows looked up are negligible and not counted."""
    from ..arch import quant
    from ..memory.estimate import linear_params

    fmt = quant.weight_format(weights)
    linear = linear_params(spec)
    other = matmul_params(spec, active=False) - linear  # head, norms, biases, router
    for layer in spec.stack:  # routed experts the batch does not touch are not read
        m = layer.mlp
        if m.is_moe:
            idle = m.experts - expected_experts_touched(m.experts, m.experts_per_token, batch)
            linear -= idle * (3 if m.gated else 2) * spec.hidden_size * m.width
    per_linear, per_other = fmt.bytes_per_param()  # head quantised too where scope is "all"
    return linear * per_linear + other * per_other


@functools.lru_cache(maxsize=4096)
def kv_read_bytes(spec: ModelSpec, context: int, batch: int = 1, kv_dtype: str = "bf16") -> float:
    """KV-cache bytes one decode step reads: per layer its KV elements per token (2 * kv_dim, or
    MLA's latent: `ModelSpec.kv_elems`) * bytes * span, per sequence (sliding and chunked layers
    keep only the window)."""
    if kv_dtype not in KV_BYTES:
        from ..core.errors import unknown_name

        raise unknown_name("kv_dtype", kv_dtype, KV_BYTES)
    if not spec.causal:
        return 0.0
    b = KV_BYTES[kv_dtype]
    return float(batch) * b * spec.kv_elems(context)


from ..core.errors import AdvisorError  # noqa: E402

ACT_BYTES = 2  # 16-bit activations (bf16/fp16 autocast and fp8 recipes keep them in 16 bits)


@dataclass(frozen=True)
class Device:
    """The ceilings one kernel sees: matmul FLOP/s at the workload's dtype, 16-bit peak (for
    attention), achievable bandwidth (bytes/s), per-kernel cost."""

    matmul_flops: float
    peak16_flops: float
    bandwidth: float
    kernel_s: float
    attention_fwd: float
    attention_bwd: float
    decode_bandwidth: float
    elementwise_factor: float = 1.0
    allreduce_s: float = 0.0  # software cost of one inference TP all-reduce (Stack.allreduce_us)
    fused_attention: bool = True  # Stack.fused_attention
    # (FP4 format, fraction of the bandwidth its weights stream at) on this card
    # (efficiency.fp4_weight_stream: below 1 where a weight-only kernel upcasts them)
    fp4_stream: tuple[tuple[str, float], ...] = ()

    @classmethod
    def of(cls, gpu, peak_key: str, stack: eff.Stack | None = None, achievable=None):
        stack = stack or eff.DEFAULT_STACK
        achievable = achievable or eff.achievable_of(gpu)  # in the key: a calibrated card differs
        try:
            return _device(gpu, peak_key, stack, achievable)
        except TypeError:  # an unhashable stand-in for a catalog GPU (tests): not cached
            return cls.build(gpu, peak_key, stack, achievable)

    @classmethod
    def build(cls, gpu, peak_key: str, stack: eff.Stack, achievable=None):
        a = achievable or eff.achievable_of(gpu)
        peaks = gpu.peak_tflops or {}
        peak = float(peaks.get(peak_key) or peaks.get("fp16") or peaks.get("bf16") or 0) * 1e12
        p16 = float(peaks.get("bf16") or peaks.get("fp16") or peak / 1e12) * 1e12
        if peak <= 0:
            from ..core.errors import AdvisorError

            raise AdvisorError(
                "gpu.precision_unsupported",
                f"{gpu.id}: no dense {peak_key} throughput in the catalog",
                field="precision",
                gpu=gpu.id,
                precision=peak_key,
            )
        return cls(
            matmul_flops=peak * a.matmul(peak_key) * stack.gemm_efficiency,
            peak16_flops=p16,
            bandwidth=float(gpu.memory_bandwidth_gb_per_s) * 1e9 * a.bandwidth_fraction,
            kernel_s=stack.kernel_us * 1e-6,
            attention_fwd=stack.attention_fwd,
            attention_bwd=stack.attention_bwd,
            decode_bandwidth=stack.decode_bandwidth,
            elementwise_factor=stack.elementwise_factor,
            allreduce_s=stack.allreduce_us * 1e-6,
            fused_attention=stack.fused_attention,
            fp4_stream=tuple((f, eff.fp4_weight_stream(gpu, f)) for f in ("nvfp4", "mxfp4")),
        )


def weight_dequant(stack: eff.Stack, weights: str, dev: Device, *, experts: bool = True) -> float:
    """The multiplier on the streaming bandwidth of `weights` in a GEMM on `dev`
    (`gemm_time`'s `dequant`): for an FP4 format the card's own rate for the routed experts'
    grouped GEMMs (`Device.fp4_stream`, efficiency.fp4_weight_stream: MXFP4 upcast on Hopper
    streams at a measured 0.571, a format its FP4 tensor cores take at 1.0) and 1.0 for the
    dense layers (`experts` False: the measured kernel is the MoE's; no rate is published for a
    dense FP4 path there), else `Stack.dequant_factor` (the weight-only formats)."""
    stream = dict(dev.fp4_stream)
    if weights in stream:
        return stream[weights] if experts else 1.0
    return stack.dequant_factor(weights)


@functools.lru_cache(maxsize=1024)
def _device(gpu, peak_key: str, stack: eff.Stack, achievable) -> Device:
    """Device.of, cached (the ceilings of one accelerator at one dtype never change)."""
    return Device.build(gpu, peak_key, stack, achievable)


def gemm_time(
    m: float, k: float, n: float, dev: Device, *, weight_bytes: float = 2.0, dequant: float = 1.0
) -> float:
    """max(2mkn / matmul rate, bytes / streaming bandwidth) + one kernel's fixed cost; the
    (k x n) operand is the weight, stored at `weight_bytes` per element and streamed at
    `dequant` x the bandwidth (weight-only formats)."""
    if m <= 0 or k <= 0 or n <= 0:
        return 0.0
    flops = 2.0 * m * k * n
    bw = dev.bandwidth * dev.decode_bandwidth
    t_mem = (m * k + m * n) * ACT_BYTES / bw + k * n * weight_bytes / (bw * dequant)
    return max(flops / dev.matmul_flops, t_mem) + dev.kernel_s


# ---------------------------------------------------------------------------------------------
# Layer inventory
# ---------------------------------------------------------------------------------------------


def layer_linears(layer: L.Layer, h: int, tp: int) -> tuple[tuple[int, int], ...]:
    """(k, n) of each attention and dense-MLP weight one TP rank multiplies by in `layer`
    (column-parallel QKV and up/gate, row-parallel O and down: Shoeybi et al. 2019 §3). MLA:
    q_a and kv_a (h -> ranks) whole on each rank, q_b and kv_b column-parallel, o row-parallel
    (vLLM's DeepseekV2MLAAttention: ReplicatedLinear for the down projections). A MoE layer's
    shared experts are a dense MLP here; its routed experts are `expert_linears`."""
    a = layer.attention
    if a.kind == "mla":
        nope = a.head_dim - a.qk_rope_head_dim
        out = []
        if a.q_lora_rank:
            out += [(h, a.q_lora_rank), (a.q_lora_rank, a.q_dim / tp)]
        else:
            out.append((h, a.q_dim / tp))
        out += [
            (h, a.kv_lora_rank + a.qk_rope_head_dim),
            (a.kv_lora_rank, a.num_heads * (nope + a.v_head_dim) / tp),
            (a.o_dim / tp, h),
        ]
    else:
        out = [(h, (a.q_dim + 2 * a.kv_dim) / tp), (a.q_dim / tp, h)]
    m = layer.mlp
    width = m.shared_width if m.is_moe else m.width
    if width:
        gated = m.gated or m.is_moe
        out += [(h, (2 * width if gated else width) / tp), (width / tp, h)]
    return tuple(out)


def dense_linears(spec: ModelSpec, tp: int) -> tuple[tuple[int, int], ...]:
    """`layer_linears` of the first layer (the layers of the uniform families are all alike)."""
    return layer_linears(spec.stack[0], spec.hidden_size, tp)


def expert_linears(spec: ModelSpec, mlp: L.Mlp | None = None) -> tuple[tuple[int, int], ...]:
    """(k, n) of one routed expert's weights (gated: gate+up fused, then down); `mlp` a layer's
    MoE MLP (default: the model's uniform fields)."""
    h = spec.hidden_size
    f = mlp.width if mlp is not None else spec.intermediate_size
    gated = mlp.gated if mlp is not None else spec.gated_mlp
    up = 2 * f if gated else f
    return ((h, up), (f, h))


def grouped_gemm_time(
    groups: float, m: float, k: float, n: float, dev: Device, *, weight_bytes: float, dequant: float
) -> float:
    """`groups` GEMMs of the same (k x n) shape at M = `m` rows each, run as ONE grouped kernel
    (the routed experts of a MoE layer: vLLM's fused_moe Triton kernel and TensorRT-LLM's
    CUTLASS MoE GEMM launch one kernel per weight over all experts; Gale et al. 2022,
    "MegaBlocks", arXiv:2211.15841 §4 block-sparse grouped GEMM): each group's roofline time,
    one fixed kernel cost for the lot.

    Checked against DeepGEMM's published FP8 grouped GEMMs at DeepSeek-V3's expert shapes (H800,
    contiguous and masked layouts, 256 to 8192 rows per expert; deepseek-ai/DeepGEMM README
    "Performance", 2025): within 20 % of each measured time with the catalog's achievable
    ceilings (tests/test_time_model.py), so no separate grouped-kernel efficiency is applied.
    Below 256 rows per expert no grouped measurement is published; the roofline's
    memory-bound side then holds (DeepGEMM's dense M = 64 and 128 rows agree with it)."""
    if groups <= 0 or m <= 0:
        return 0.0
    one = gemm_time(m, k, n, dev, weight_bytes=weight_bytes, dequant=dequant)
    return groups * (one - dev.kernel_s) + dev.kernel_s


def attention_decode_flops(attention: L.Attention, span: int) -> float:
    """Matrix FLOPs of one decode token's attention core in one layer over `span` cached keys.

    GQA/MHA: QK^T and PV, 2 * 2 * q_dim per key (Dao et al. 2022, arXiv:2205.14135 §3: 4 N^2 d
    for a sequence; one query row here). MLA decoded with the absorbed projections (DeepSeek-V2,
    arXiv:2405.04434 §2.1.2 "W^UK can be absorbed into W^Q, and W^UV into W^O"; as FlashMLA and
    vLLM's MLA backend run it): every head scores the latent plus the rope key (kv_lora_rank +
    qk_rope_head_dim) and sums the latent values (kv_lora_rank), 2 * heads * (2 * kv_lora_rank +
    qk_rope_head_dim) per key: about 250 FLOPs per byte of an FP8 latent cache, so MLA decode
    attention is compute-bound where GQA's is bandwidth-bound (FlashMLA README: "up to 660
    TFLOPS in compute-bound configuration" on H800)."""
    if attention.kind == "mla":
        per_key = (
            2.0 * attention.num_heads * (2 * attention.kv_lora_rank + attention.qk_rope_head_dim)
        )
    else:
        per_key = 4.0 * attention.q_dim
    return per_key * span


@functools.lru_cache(maxsize=1024)
def layer_groups(spec: ModelSpec) -> tuple[tuple[L.Layer, int], ...]:
    """The distinct layers of the stack and how many times each occurs, in first-seen order
    (DeepSeek-V3: 3 dense and 58 MoE; a uniform family: one layer, num_layers times)."""
    counts: dict = {}
    for layer in spec.stack:
        counts[layer] = counts.get(layer, 0) + 1
    return tuple(counts.items())


def _layer_gemm(
    spec, layer, dev, rows: float, tp: int, wb: float, dq: float, dq_dense: float | None = None
) -> float:
    """GEMM time of one layer at M = `rows` tokens: its dense weights, then the routed experts
    the rows touch (each at rows * k / touched tokens)."""
    gem = 0.0
    for k, n in layer_linears(layer, spec.hidden_size, tp):
        gem += gemm_time(
            rows, k, n, dev, weight_bytes=wb, dequant=dq if dq_dense is None else dq_dense
        )
    m = layer.mlp
    if m.is_moe:
        touched = expected_experts_touched(m.experts, m.experts_per_token, int(rows))
        per_expert = rows * m.experts_per_token / max(touched, 1e-9)
        for k, n in expert_linears(spec, m):
            gem += grouped_gemm_time(
                touched, per_expert, k, n / tp, dev, weight_bytes=wb, dequant=dq
            )
    return gem


def routed_expert_s(
    spec: ModelSpec, dev: Device, stack: eff.Stack, *, rows: float, tp: int, weights: str
) -> float:
    """Seconds of the routed experts' grouped GEMMs over every MoE layer at M = `rows` tokens on
    one TP rank, as `_layer_gemm` counts them (0 for a dense model)."""
    wb = _weight_bytes(weights)
    dq = weight_dequant(stack, weights, dev)
    total = 0.0
    for layer, count in layer_groups(spec):
        m = layer.mlp
        if not m.is_moe or rows <= 0:
            continue
        touched = expected_experts_touched(m.experts, m.experts_per_token, int(rows))
        per_expert = rows * m.experts_per_token / max(touched, 1e-9)
        total += count * sum(
            grouped_gemm_time(touched, per_expert, k, n / tp, dev, weight_bytes=wb, dequant=dq)
            for k, n in expert_linears(spec, m)
        )
    return total


def elementwise_elems(spec: ModelSpec) -> float:
    """Activation elements an LLM layer's element-wise kernels read and write per token in the
    forward pass (module docstring)."""
    h, q, kv, f = spec.hidden_size, spec.q_dim, spec.kv_dim, spec.intermediate_size
    return 10 * h + 2 * (q + kv) + (3 if spec.gated_mlp else 2) * f


def causal_pairs(spec: ModelSpec, seq: int) -> float:
    """(query, key) pairs a causal layer scores per sequence, averaged over layers (sliding
    layers keep only the window)."""
    total = 0.0
    for span in spec_layer_spans(spec, seq):
        if not spec.causal:
            total += seq * seq
        elif span >= seq:
            total += seq * (seq + 1) / 2
        else:
            total += span * (span + 1) / 2 + (seq - span) * span
    return total / max(1, spec.num_layers)


def spec_layer_spans(spec: ModelSpec, seq: int) -> tuple[int, ...]:
    from ..arch.flops import _layer_spans

    return _layer_spans(spec, seq)


@functools.lru_cache(maxsize=4096)
def span_sum(spec: ModelSpec, seq: int) -> int:
    """Keys attended over all layers at a context of `seq` (sliding layers keep the window)."""
    return sum(spec_layer_spans(spec, seq))


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerTimes:
    """One layer's forward and backward time for one micro-batch on one GPU (seconds)."""

    gemm_fwd: float
    attention_fwd: float
    elementwise_fwd: float
    gemm_bwd: float
    attention_bwd: float
    elementwise_bwd: float
    tp_comm: float  # forward + backward, before overlap
    ep_comm: float

    @property
    def fwd(self) -> float:
        return self.gemm_fwd + self.attention_fwd + self.elementwise_fwd

    @property
    def bwd(self) -> float:
        return self.gemm_bwd + self.attention_bwd + self.elementwise_bwd


def train_layer(
    spec: ModelSpec,
    dev: Device,
    *,
    tokens: int,
    seq: int,
    tp: int,
    ep: int,
    cp: int = 1,
    tp_fabric: net.Fabric | None,
    ep_fabric: net.Fabric | None,
    frozen: bool = False,
    weight_bytes: float = 2.0,
    dequant: float = 1.0,
) -> LayerTimes:
    """Times of one layer for `tokens` tokens (micro-batch x seq) on one TP rank. `frozen`
    (LoRA / QLoRA): no weight-gradient GEMMs."""
    T = float(tokens)
    g_f = g_b = 0.0
    for k, n in dense_linears(spec, tp):
        g_f += gemm_time(T, k, n, dev, weight_bytes=weight_bytes, dequant=dequant)
        g_b += gemm_time(T, n, k, dev, weight_bytes=weight_bytes, dequant=dequant)
        if not frozen:
            g_b += gemm_time(k, T, n, dev)
    ep_comm = 0.0
    if spec.is_moe:
        # each GPU of an EP group holds E/ep experts and, balanced, receives T*k/ep tokens
        # from each of the ep ranks: T*k tokens over E/ep experts
        local = max(1, spec.num_experts // ep)
        per_expert = T * spec.experts_per_token / local
        for k, n in expert_linears(spec):
            g_f += local * gemm_time(per_expert, k, n / tp, dev)
            g_b += local * gemm_time(per_expert, n / tp, k, dev)
            if not frozen:
                g_b += local * gemm_time(k, per_expert, n / tp, dev)
        if ep > 1 and ep_fabric is not None:
            buf = T * spec.experts_per_token * spec.hidden_size * ACT_BYTES
            ep_comm = 4 * net.alltoall_time(buf, ep, ep_fabric)  # dispatch+combine, fwd+bwd
    seqs = max(1.0, T * cp / seq)
    if dev.fused_attention:
        attn_flops = 4.0 * seqs * causal_pairs(spec, seq) * spec.q_dim / tp / cp
        a_f = attn_flops / (dev.peak16_flops * dev.attention_fwd) + dev.kernel_s
        a_b = 2.5 * attn_flops / (dev.peak16_flops * dev.attention_bwd) + dev.kernel_s
    else:
        a_f, a_b = unfused_attention_times(spec, dev, seqs=seqs, seq=seq, tp=tp * cp)
    e_f = T * elementwise_elems(spec) * ACT_BYTES * dev.elementwise_factor / tp / dev.bandwidth
    tp_comm = 0.0
    if tp > 1 and tp_fabric is not None:
        tp_comm = 4 * net.allreduce_time(T * spec.hidden_size * ACT_BYTES, tp, tp_fabric)
    return LayerTimes(g_f, a_f, e_f, g_b, a_b, 2 * e_f, tp_comm, ep_comm)


def unfused_attention_times(
    spec: ModelSpec, dev: Device, *, seqs: float, seq: int, tp: int
) -> tuple[float, float]:
    """Forward and backward of attention without flash attention (Megatron-LM before 2022,
    Shoeybi et al. 2019, arXiv:1909.08053 §3; Korthikanti et al. 2022, arXiv:2205.05198 §4.1
    count the same tensors): QK^T and PV as batched GEMMs over the whole s x s score matrix
    (the causal mask is applied after), and the score matrix of `heads / tp` heads at 2 bytes
    crosses memory 4 times forward (QK^T writes it, the fused scale-mask-softmax reads and
    writes it, PV reads it) and 6 times backward (the saved probabilities read twice, the
    score gradient written and read by the softmax backward and read by the dK/dQ GEMMs)."""
    scores = seqs * (spec.num_heads / tp) * float(seq) * seq * ACT_BYTES
    flops = 4.0 * seqs * float(seq) * seq * spec.q_dim / tp
    a_f = flops / dev.matmul_flops + 4 * scores / dev.bandwidth + 3 * dev.kernel_s
    a_b = 2 * flops / dev.matmul_flops + 6 * scores / dev.bandwidth + 5 * dev.kernel_s
    return a_f, a_b


def head_time(spec: ModelSpec, dev: Device, tokens: float, tp: int, train: bool) -> float:
    """Output head (h x V/tp GEMM) and its softmax / cross-entropy pass."""
    v = spec.vocab_size / tp
    t = gemm_time(tokens, spec.hidden_size, v, dev)
    if train:
        t += gemm_time(tokens, v, spec.hidden_size, dev) + gemm_time(
            spec.hidden_size, tokens, v, dev
        )
        t += 3 * tokens * v * 4 / dev.bandwidth  # fp32 logits: write, softmax read+write
    return t


# ---------------------------------------------------------------------------------------------
# Inference
# ---------------------------------------------------------------------------------------------


def _weight_bytes(fmt_name: str) -> float:
    """Bytes per weight element as a decode or prefill GEMM streams it: the format's data bits
    plus its scales for quantised formats (advisor.arch.quant)."""
    from ..arch import quant

    return quant.weight_format(fmt_name).bits_per_weight / 8


@functools.lru_cache(maxsize=8192)
def padded_batch(batch: int, graph_batch_sizes: tuple[int, ...] | None) -> int:
    """The batch a decode step runs at when the engine replays CUDA graphs captured for
    `graph_batch_sizes` with padding: the smallest captured size at least `batch` ("If true,
    batches are rounded up to the nearest cuda_graph_batch_size", TensorRT-LLM
    `CudaGraphConfig.enable_padding`; "if the batch size does not match any captured size, the
    runtime pads it up to the nearest larger captured size, running the model over some empty
    slots. The wasted computation is proportional to the gap between the actual batch and the
    next captured size", TensorRT-LLM tech blog 20, "Tuning CUDA Graph Batch Sizes for Higher
    Output Throughput", docs/source/blogs/tech_blog/blog20_Tuning_CUDA_Graph_Batch_Sizes_for_
    Higher_Output_Throughput.md, stored commit baf363e: up to 1.3x output throughput lost to the
    gaps of a doubling size list at high concurrency). `batch` itself with no sizes, or above the
    largest (no graph fits; the step runs without one)."""
    if not graph_batch_sizes:
        return batch
    fits = [s for s in graph_batch_sizes if s >= batch]
    return min(fits) if fits else batch


def check_graph_batch_sizes(sizes) -> tuple[int, ...] | None:
    """`sizes` as a sorted tuple of distinct positive batch sizes (None or empty: no padding);
    one clear error naming the field for anything else."""
    if sizes is None:
        return None
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise AdvisorError(
            "serving.graph_batch_sizes",
            f"cuda_graph_batch_sizes: expected a list of batch sizes, got {sizes!r}",
            field="cuda_graph_batch_sizes",
        )
    out = tuple(sorted({check_int("cuda_graph_batch_sizes", s, maximum=1 << 16) for s in sizes}))
    return out or None


def decode_step_time(
    spec: ModelSpec,
    dev: Device,
    stack: eff.Stack,
    *,
    batch: int,
    context: int,
    weights: str,
    kv_bytes: int,
    tp: int,
    tp_fabric: net.Fabric | None,
    kv_reads: int = 1,
    graph_batch: int | None = None,
) -> dict:
    """One decode step (one token for each of `batch` sequences with `context` cached tokens)
    on one TP rank: each layer's GEMMs at M = batch (weights streamed, dequantised for
    weight-only formats), the KV cache read, the element-wise kernels, 2 all-reduces of
    batch*h per layer under TP, the output head; seconds by part.

    `graph_batch`: the batch the step's CUDA graph was captured for when the engine pads a
    batch up to it (`padded_batch`): the GEMMs, element-wise kernels, all-reduces and head run
    over all its slots; the KV-cache read and the attention core only over the `batch`
    sequences that hold a cache (stated assumption: an empty slot attends over no context).

    `kv_reads`: how many times a step streams each KV head. 1 for kernels that serve a whole
    query group from one load (flash-decoding, Dao et al. 2023; TensorRT-LLM's XQA kernel;
    vLLM's paged attention). A kernel that runs one thread block per query head, as
    TensorRT-LLM's masked MHA did before XQA (v0.8, "New XQA-kernel provides 2.4x more
    Llama-70B throughput", TensorRT-LLM docs/source/blogs/XQA-kernel.md), streams it once per
    query head of the group: kv_reads = num_heads / num_kv_heads (serving.kv_reads)."""
    batch = check_int("batch", batch)
    rows = batch if graph_batch is None else max(batch, check_int("graph_batch", graph_batch))
    wb = _weight_bytes(weights)
    dq = weight_dequant(stack, weights, dev)
    dqd = weight_dequant(stack, weights, dev, experts=False)
    gem = sum(
        count * _layer_gemm(spec, layer, dev, rows, tp, wb, dq, dqd)
        for layer, count in layer_groups(spec)
    )
    bw = dev.bandwidth * dev.decode_bandwidth
    kv = kv_bytes * spec.kv_elems(context) * batch / tp if spec.causal else 0.0
    # the attention core streams the cache and multiplies over it: the slower of the two
    # (`attention_decode_flops`; 16-bit tensor cores at the fitted attention efficiency)
    attn_flops = decode_attention_flops(spec, context) * batch / tp
    attn_compute = attn_flops / (dev.peak16_flops * dev.attention_fwd)
    attn = max(kv * kv_reads / bw, attn_compute) + spec.num_layers * dev.kernel_s
    elem = rows * elementwise_elems(spec) * ACT_BYTES / tp / bw * spec.num_layers
    launch = spec.num_layers * max(0, stack.kernels_per_layer - 6) * dev.kernel_s
    head = gemm_time(rows, spec.hidden_size, spec.vocab_size / tp, dev)
    comm = 0.0
    if tp > 1 and tp_fabric is not None:
        comm = (
            2
            * spec.num_layers
            * (net.tp_allreduce_time(rows * spec.hidden_size * 2, tp, tp_fabric) + dev.allreduce_s)
        )
    total = gem + attn + elem + launch + head + comm * (1 - stack.tp_overlap_inference)
    return MappingProxyType(
        {
            "seconds": total,
            "gemm_s": gem,
            "attention_s": attn,
            "elementwise_s": elem + launch,
            "head_s": head,
            "comm_s": comm,
            "kv_read_bytes": kv,
        }
    )


@functools.lru_cache(maxsize=4096)
def decode_attention_flops(spec: ModelSpec, context: int) -> float:
    """Attention-core FLOPs of one decode token over `context` cached tokens, all layers (each
    layer over its own span: sliding and chunked layers only their window)."""
    if not spec.causal:
        return 0.0
    return sum(
        attention_decode_flops(layer.attention, L.span(layer.attention, context))
        for layer in spec.stack
    )


def prefill_time(
    spec: ModelSpec,
    dev: Device,
    stack: eff.Stack,
    *,
    batch: int,
    prompt: int,
    weights: str,
    tp: int,
    tp_fabric: net.Fabric | None,
) -> dict:
    """Prefill of `batch` prompts of `prompt` tokens on one TP rank (time to first token without
    queueing): GEMMs at M = batch*prompt, causal flash attention forward, element-wise passes,
    2 all-reduces per layer of the activations under TP, the head on the last tokens only
    (vLLM computes logits for the sampled positions)."""
    T = float(batch) * prompt
    wb = _weight_bytes(weights)
    dq = weight_dequant(stack, weights, dev)
    dqd = weight_dequant(stack, weights, dev, experts=False)
    # mean GEMM time per layer over the stack (its distinct layers, `layer_groups`)
    groups = layer_groups(spec)
    gem = _layer_gemm(spec, groups[0][0], dev, T, tp, wb, dq, dqd)
    if len(groups) > 1:
        gem = sum(c * _layer_gemm(spec, lay, dev, T, tp, wb, dq, dqd) for lay, c in groups)
        gem /= spec.num_layers
    attn_flops = 4.0 * batch * causal_pairs(spec, prompt) * spec.q_dim / tp
    attn = attn_flops / (dev.peak16_flops * dev.attention_fwd) + dev.kernel_s
    elem = T * elementwise_elems(spec) * ACT_BYTES * dev.elementwise_factor / tp / dev.bandwidth
    per_layer = gem + attn + elem
    comm = 0.0
    if tp > 1 and tp_fabric is not None:
        comm = 2 * (
            net.tp_allreduce_time(T * spec.hidden_size * ACT_BYTES, tp, tp_fabric) + dev.allreduce_s
        )
    layers = spec.num_layers * (per_layer + comm * (1 - stack.tp_overlap_inference))
    head = gemm_time(batch, spec.hidden_size, spec.vocab_size / tp, dev)
    total = layers + head
    return {
        "seconds": total,
        "gemm_s": gem * spec.num_layers,
        "attention_s": attn * spec.num_layers,
        "elementwise_s": elem * spec.num_layers,
        "comm_s": comm * spec.num_layers,
        "head_s": head,
    }


def finite(x: float) -> float:
    return x if math.isfinite(x) else math.inf


# ---------------------------------------------------------------------------------------------
# Datasheet figures and the roofline (duck-typed on advisor.data.hardware.GPU)
# ---------------------------------------------------------------------------------------------

BOUNDS = ("compute", "memory_bandwidth", "interconnect", "vram_capacity")


def peak_flops(gpu, precision: str) -> float:
    """Dense peak in FLOP/s for the precision a workload multiplies at (`weight_peak_key`).

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


def ridge_point(gpu, precision: str) -> float:
    """FLOP per byte at which the roofline turns: peak FLOP/s / bandwidth bytes/s (Williams 2009)."""
    return peak_flops(gpu, precision) / bandwidth_bytes_per_s(gpu)


def training_bytes(components: dict) -> float:
    """DRAM bytes one training step moves, from a memory breakdown (advisor.memory.estimate
    components, per GPU): weights read in forward and backward and written by the optimizer
    (3x); gradients written and read (2x); optimizer states and master weights read and written
    (2x); saved activations written in forward and read in backward (2x). A lower bound:
    traffic inside a layer (fused kernels) is not counted."""
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
    compute_time_s: float  # flops / (peak * compute efficiency)
    memory_time_s: float  # bytes / (bandwidth * bandwidth efficiency)
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
    (at the stated efficiencies; at efficiency 1, the datasheet roofline, this is intensity
    against the ridge point)."""
    from ..core.errors import check_non_negative

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


def decode_roofline(
    spec: ModelSpec,
    gpu,
    *,
    batch: int,
    context: int,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
    achievable=None,
    fits: bool = True,
) -> Roofline:
    """One decode step per GPU on the roofline at the kernel-level model's ceilings: its FLOPs
    (advisor.arch.flops.decode_flops) at the achievable matmul rate, the weights and KV cache it
    reads at the decode bandwidth `decode_step_time` uses, and that step's tensor-parallel
    all-reduces (2 per layer of batch*h, Pope et al. 2022 §3)."""
    from ..arch.flops import decode_flops

    batch = check_int("batch", batch)
    context = check_int("seq", context)
    tp = check_int("tensor_parallel", tensor_parallel)
    peak = peak_flops(gpu, weights)  # refuses a card with no dense rate for the format
    stack = eff.DEFAULT_STACK
    dev = Device.of(gpu, weight_peak_key(gpu, weights), stack, achievable)
    nbytes = decode_weight_bytes(spec, weights, batch) + kv_read_bytes(
        spec, context, batch, kv_dtype
    )
    step = decode_step_time(
        spec,
        dev,
        stack,
        batch=batch,
        context=context,
        weights=weights,
        kv_bytes=KV_BYTES[kv_dtype],
        tp=tp,
        tp_fabric=net.intra_node_fabric(gpu) if tp > 1 else None,
    )
    return roofline(
        decode_flops(spec, context, batch) / tp,
        nbytes / tp,
        gpu,
        weights,
        compute_efficiency=dev.matmul_flops / peak,
        bandwidth_efficiency=dev.bandwidth * dev.decode_bandwidth / bandwidth_bytes_per_s(gpu),
        comm_time_s=step["comm_s"],
        fits=fits,
    )
