"""Bytes per parameter of stored weights, by number format, with the scale overhead of each
quantisation scheme.

Only the weight matrices of the transformer blocks' linear layers are quantised; embeddings, the
output head, norms and biases stay in 16 bits. This is what bitsandbytes (`Linear4bit`,
`Linear8bitLt` replace `nn.Linear` inside the blocks; `lm_head` is skipped by default in
transformers' `BitsAndBytesConfig`), AutoGPTQ/AutoAWQ (`modules_to_not_convert` defaults to the
head) and vLLM's fp8 do.

The local runtimes' formats (issue 34: one user's inference on a desktop or unified-memory box)
quantise every weight matrix, the token embedding and the output head included (`scope` "all"):
- llama.cpp GGUF (`llama-quantize`): Q8_0 stores every matrix as blocks of 32 int8 with one fp16
  scale (34 bytes per 32 weights = 8.5 bits/weight); Q4_K_M is a per-tensor mix (Q4_K super-blocks
  of 256 at 4.5 bits/weight for most tensors, Q6_K for the output head and part of attn_v /
  ffn_down), whose whole-model average llama.cpp reports: 4.8944 bits/weight for Llama 3.1 8B
  (Q8_0 8.5008, F16 16.0005) in tools/quantize/README.md "Quantization" table
  (github.com/ggml-org/llama.cpp, read 2026-12-06). That average is used here for every
  parameter (norms, kept in F32, are a negligible share and are counted at it too).
- MLX 4-bit (`mlx_lm.convert -q`, `mlx.nn.quantize`: every Linear and Embedding layer that has
  `to_quantized`): mode "affine", group size 64 and 4 bits by default, one scale and one bias
  per group in the input's dtype (16 bits): 4 + 32/64 = 4.5 bits/weight (MLX docs,
  `mlx.core.quantize`, "Quantization modes" table, ml-explore.github.io/mlx, read 2026-12-06).
All three are weight-only: the kernels dequantise in the GEMM and multiply at 16 bits
(advisor.perf.timing.PEAK_KEY).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import check_choice

WEIGHT_FORMATS = (
    "fp32",
    "bf16",
    "fp16",
    "fp8",
    "int8",
    "int4",
    "nf4",
    "gptq",
    "awq",
    "nvfp4",
    "mxfp4",
    "q8_0",
    "q4_k_m",
    "mlx-4bit",
)


@dataclass(frozen=True)
class WeightFormat:
    """A stored weight format: data bits per parameter, scale bytes per parameter and how it is
    applied (`quantised`: quantised weights; `scope` "blocks": only the blocks' linear weights
    are, the rest stays 16-bit; "all": every parameter is, embedding and head included)."""

    name: str
    data_bits: float
    scale_bytes_per_param: float
    quantised: bool
    source: str
    scope: str = "blocks"

    @property
    def bits_per_weight(self) -> float:
        """Bits per quantised weight, scales included."""
        return self.data_bits + (8 * self.scale_bytes_per_param if self.quantised else 0.0)

    def bytes_per_param(self) -> tuple[float, float]:
        """(bytes per block linear weight, bytes per other parameter), scales included."""
        b = self.bits_per_weight / 8
        if not self.quantised or self.scope == "all":
            return b, b
        return b, 2.0


# Sources are per format; numbers below are derived in each `source` string.
FORMATS: dict[str, WeightFormat] = {
    "fp32": WeightFormat("fp32", 32, 0.0, False, "IEEE 754 binary32"),
    "bf16": WeightFormat("bf16", 16, 0.0, False, "bfloat16 (16 bits)"),
    "fp16": WeightFormat("fp16", 16, 0.0, False, "IEEE 754 binary16"),
    # fp8 e4m3 with one fp32 scale per tensor (vLLM fp8, per-tensor scaling): negligible scales.
    "fp8": WeightFormat(
        "fp8",
        8,
        0.0,
        True,
        "FP8 E4M3 weights with a per-tensor fp32 scale (Micikevicius et al. 2022, arXiv:2209.05433; "
        "vLLM docs 'FP8 W8A8')",
    ),
    # LLM.int8(): int8 weights with one fp32 absmax scale per output row (vector-wise), modelled
    # here as per-parameter 4 / in_features; we use the block-size-free bound 4 bytes per row of a
    # 4096-wide layer = 1/1024 byte/param.
    "int8": WeightFormat(
        "int8",
        8,
        4 / 4096,
        True,
        "LLM.int8(): int8 weights, one fp32 scale per row (Dettmers et al. 2022, arXiv:2208.07339); "
        "4 bytes per 4096-wide row",
    ),
    # bitsandbytes 4-bit without double quantisation: one fp32 absmax per 64-weight block.
    "int4": WeightFormat(
        "int4",
        4,
        4 / 64,
        True,
        "bitsandbytes 4-bit (fp4/int4), block size 64, one fp32 absmax per block = 0.5 bit/param "
        "(Dettmers et al. 2023, arXiv:2305.14314 §2)",
    ),
    # NF4 with double quantisation: 8-bit absmax per 64 weights + fp32 per 256 absmax:
    # 8/64 + 32/(64*256) = 0.127 bits/param (QLoRA §3, 'Double Quantization').
    "nf4": WeightFormat(
        "nf4",
        4,
        (8 / 64 + 32 / (64 * 256)) / 8,
        True,
        "QLoRA NF4 with double quantisation: 4 bits + 8/64 + 32/(64*256) = 0.127 bits/param of "
        "scales (Dettmers et al. 2023, arXiv:2305.14314 §3)",
    ),
    # GPTQ / AWQ, group size 128: one fp16 scale and one 4-bit zero point (packed in int32
    # qzeros) per group of 128 weights: (16 + 4) / 128 bits... in bytes: (2 + 0.5) / 128.
    "gptq": WeightFormat(
        "gptq",
        4,
        (2 + 0.5) / 128,
        True,
        "GPTQ 4-bit, group size 128: fp16 scale + packed 4-bit zero per group (Frantar et al. "
        "2022, arXiv:2210.17323; AutoGPTQ qweight/qzeros/scales layout)",
    ),
    "awq": WeightFormat(
        "awq",
        4,
        (2 + 0.5) / 128,
        True,
        "AWQ 4-bit, group size 128: fp16 scale + packed 4-bit zero per group (Lin et al. 2023, "
        "arXiv:2306.00978; AutoAWQ GEMM layout)",
    ),
    # Microscaling FP4 (issue 34). Both store E2M1 elements (4 bits) with one scale per block.
    # NVFP4: 16-element blocks, one FP8 E4M3 scale each (8/16 = 0.5 bit/param), plus one FP32
    # scale per tensor (negligible): NVIDIA, "Introducing NVFP4 for efficient and accurate
    # low-precision inference", developer.nvidia.com/blog, 2025-06-24.
    "nvfp4": WeightFormat(
        "nvfp4",
        4,
        1 / 16,
        True,
        "NVFP4: E2M1 elements, one FP8 E4M3 scale per 16 elements + one FP32 per tensor = "
        "4.5 bits/param (NVIDIA, 'Introducing NVFP4 for efficient and accurate low-precision "
        "inference', 2025)",
    ),
    # MXFP4: 32-element blocks with one E8M0 (8-bit power-of-two) scale: 8/32 = 0.25 bit/param
    # (OCP Microscaling Formats (MX) Specification v1.0, 2023, §5 Table 1).
    "mxfp4": WeightFormat(
        "mxfp4",
        4,
        1 / 32,
        True,
        "MXFP4: E2M1 elements, one E8M0 scale per 32 elements = 4.25 bits/param (OCP "
        "Microscaling Formats (MX) Specification v1.0, 2023, Table 1)",
    ),
    # llama.cpp GGUF (module docstring): every matrix quantised, embedding and head included.
    # Q8_0: blocks of 32 int8 + one fp16 scale: (32 + 2) bytes / 32 weights = 8.5 bits/weight
    # (ggml-common.h `block_q8_0`; llama.cpp tools/quantize/README.md: Q8_0 8.5008 bpw).
    "q8_0": WeightFormat(
        "q8_0",
        8,
        2 / 32,
        True,
        "llama.cpp GGUF Q8_0: blocks of 32 int8 weights with one fp16 scale = 8.5 bits/weight, "
        "every matrix incl. embedding and output head (llama.cpp tools/quantize/README.md: "
        "Q8_0 8.5008 bpw on Llama 3.1 8B)",
        scope="all",
    ),
    # Q4_K_M: the whole-model average llama.cpp reports for Llama 3.1 8B, 4.8944 bits/weight:
    # 4 data bits + 0.8944 of super-block scales (Q4_K: 4.5 bpw) and the Q6_K tensors of the mix.
    # Llama 3.1 70B: 43.1 GB (same README) / 70.6e9 params = 4.88 bits/weight, the same average.
    "q4_k_m": WeightFormat(
        "q4_k_m",
        4,
        (4.8944 - 4) / 8,
        True,
        "llama.cpp GGUF Q4_K_M: mix of Q4_K (4.5 bpw) and Q6_K tensors, whole-model average "
        "4.8944 bits/weight (llama.cpp tools/quantize/README.md, Llama 3.1 8B), every matrix "
        "incl. embedding and output head",
        scope="all",
    ),
    # MLX affine 4-bit, group 64, a 16-bit scale and bias per group: 4 + 32/64 = 4.5 bits/weight.
    "mlx-4bit": WeightFormat(
        "mlx-4bit",
        4,
        (2 + 2) / 64,
        True,
        "MLX 4-bit (affine, group size 64, 16-bit scale and bias per group) = 4.5 bits/weight, "
        "Linear and Embedding layers (MLX docs mlx.core.quantize; mlx.nn.quantize)",
        scope="all",
    ),
}

# Formats of the local runtimes (llama.cpp GGUF, MLX): weight-only, every matrix quantised
LOCAL_WEIGHT_FORMATS = ("q8_0", "q4_k_m", "mlx-4bit")

# Formats whose elements are FP4 (E2M1): they run at a card's FP4 peak where its tensor cores
# take the block format natively (GPU.runs_fp4), and are dequantised elsewhere.
FP4_WEIGHT_FORMATS = ("nvfp4", "mxfp4")


def weight_format(name: str) -> WeightFormat:
    """The `WeightFormat` called `name` (AdvisorError with suggestions otherwise)."""
    return FORMATS[check_choice("weights", name, WEIGHT_FORMATS)]


def stored_bytes(fmt: WeightFormat, quantisable_params: int, other_params: int) -> tuple[int, int]:
    """(weight bytes, scale bytes) for `quantisable_params` block linear weights and
    `other_params` parameters kept in 16 bits (or in fp32 for the fp32 format; quantised with
    the rest where the format's `scope` is "all")."""
    if not fmt.quantised:
        return round((quantisable_params + other_params) * fmt.data_bits / 8), 0
    if fmt.scope == "all":
        n = quantisable_params + other_params
        return round(n * fmt.data_bits / 8), round(n * fmt.scale_bytes_per_param)
    data = round(quantisable_params * fmt.data_bits / 8) + other_params * 2
    return data, round(quantisable_params * fmt.scale_bytes_per_param)


# NVIDIA ModelOpt's per-layer search (`mtq.auto_quantize`, "Perform optimal per-layer
# quantization by searching for the best quantization formats per-layer") picks one format
# per group of linear layers under an `effective_bits` budget; its default candidates are
# NVFP4 and FP8 ("quantization_formats": ["NVFP4_DEFAULT_CFG", "FP8_DEFAULT_CFG"]) beside
# leaving a layer unquantised (modelopt/torch/quantization/algorithms.py,
# NVIDIA/TensorRT-Model-Optimizer).
MODELOPT_SEARCH_FORMATS = ("nvfp4", "fp8")


def modelopt_mix(
    effective_bits: float, formats: tuple[str, str] = MODELOPT_SEARCH_FORMATS
) -> tuple[tuple[str, float], ...]:
    """The share of the quantised linear weights in each of two formats that a ModelOpt
    `auto_quantize` search with constraint `effective_bits` ends at, ((format, share), ...).

    ModelOpt counts a format's bits as its elements' bits without scales
    (`estimate_quant_compression`: num_bits (E, M) -> (E + M + 1) / 16 of 16 bits: NVFP4's
    E2M1 4, FP8's E4M3 8) and the search's result as the parameter-weighted mean
    ("effective_bits_from_search = (best_constraints / total_weight_size) * 16", each
    group's cost its weights' numel x compression; modelopt/torch/quantization/algorithms.py).
    With two candidate formats of a and b data bits (a < b) the shares follow:
    share_a = (b - effective_bits) / (b - a). Which layers take which format is not known from
    the budget alone; a caller spreads the mix evenly over the layers (advisor.perf.serving.
    mixed_point). A budget outside [a, b] is refused naming `weights_effective_bits`."""
    from ..core.errors import AdvisorError, check_positive

    lo, hi = (weight_format(f) for f in formats)
    if lo.data_bits > hi.data_bits:
        lo, hi = hi, lo
    bits = check_positive("weights_effective_bits", effective_bits, maximum=32.0)
    if not lo.data_bits <= bits <= hi.data_bits:
        raise AdvisorError(
            "weights.mix_bits",
            f"weights_effective_bits: {bits:g} is outside the {lo.data_bits:g} to "
            f"{hi.data_bits:g} bits a mix of {lo.name} and {hi.name} reaches",
            field="weights_effective_bits",
            value=bits,
            minimum=lo.data_bits,
            maximum=hi.data_bits,
        )
    share_lo = (hi.data_bits - bits) / (hi.data_bits - lo.data_bits)
    return ((lo.name, share_lo), (hi.name, 1.0 - share_lo))
