"""What runs where: a method or format is offered on an accelerator only where its vendor's
software runs it. Each check returns a tuple of `Reason`s (empty: supported); a caller rejects
the candidate with the first one.

Serving formats (vLLM, the engine the serving model describes; its "Supported Hardware" table,
https://docs.vllm.ai/en/v0.14.0/features/quantization/, read 2026-12-06):
- FP8 (W8A8) needs FP8 tensor cores: Ada, Hopper, Blackwell, AMD CDNA 3 (MI300X/MI325X), and
  Gaudi 2/3 through Intel Neural Compressor (vLLM-Gaudi); the catalog's `peak_tflops.fp8` says
  which cards have them (none on MI250X, A100, V100, T4). vLLM runs FP8 checkpoints on Turing /
  Ampere as weight-only W8A16 (Marlin), a path the time model does not describe: refused here.
- AWQ (4-bit): NVIDIA Turing and newer (not Volta); not AMD GPUs, not Gaudi.
- GPTQ / INT4: NVIDIA; not AMD GPUs, not Gaudi. INT8 (W8A8): NVIDIA Turing and newer.
- bitsandbytes (NF4) for serving: NVIDIA only.
- An FP8 KV cache: on cards with FP8 (above) and NVIDIA Ampere / Turing (vLLM "Quantized KV
  Cache": fp8_e5m2 stored, upcast for attention).

Fine-tuning (bitsandbytes, https://huggingface.co/docs/bitsandbytes/v0.50.2/en/installation.md,
read 2026-12-06: "official support for NVIDIA GPUs, AMD GPUs, Intel XPUs, Apple Silicon, and
Intel Gaudi"; NVIDIA from compute capability 6.0; version 0.48 called AMD ROCm experimental):
QLoRA's NF4 base runs with bitsandbytes 0.50 or later on NVIDIA, AMD, Gaudi and Apple Silicon
(the report names that version for AMD, Gaudi and Apple: `notes_for_training`); bitsandbytes has
no JAX/XLA (TPU) or Neuron (Trainium) backend, so QLoRA is refused there (`training`). FP8 training needs FP8 tensor
cores (as above).

Engines (serving.ENGINES and the ones a buyer asks about):
- vLLM: NVIDIA (CUDA, compute capability 7.0+), AMD Instinct MI200/MI300 and Radeon RX 7900
  (ROCm), Intel Gaudi (the vLLM-Gaudi plugin) (docs.vllm.ai "Installation: GPU" and
  "Intel Gaudi", read 2026-12-06);
- TensorRT-LLM: NVIDIA only (github.com/NVIDIA/TensorRT-LLM);
- SGLang: NVIDIA and AMD Instinct (github.com/sgl-project/sglang, "AMD GPUs" install guide).
FP4 block formats (NVFP4, MXFP4; issue 34): native where the card's FP4 tensor cores take the
format (catalog `fp4_formats`, `GPU.runs_fp4`). Elsewhere only where an engine dequantises them:
- NVIDIA Ampere, Ada, Hopper (and Blackwell without that format): vLLM's Marlin FP4 kernels,
  weight-only, compute capability 8.0 or newer, both NVFP4 and MXFP4 (vLLM
  model_executor/layers/quantization/utils/marlin_utils_fp4.py, `is_fp4_marlin_supported`; its
  warning "Your GPU does not have native support for FP4 computation but FP4 quantization is
  being used. Weight-only FP4 compression will be used leveraging the Marlin kernel", seen with
  gpt-oss's MXFP4 weights on Hopper and Ampere; TensorRT-LLM examples/models/core/gpt_oss/README.md
  "MoE Support Matrix": Hopper bf16 x mxfp4);
- AMD CDNA 3 (MI300X, MI325X): MXFP4 only, emulated (dequantised to bf16) through AMD Quark in
  vLLM (docs.vllm.ai "AMD Quark": "MXFP4 ... emulated on MI300"; native on MI350/MI355X);
- nothing else (Volta, Turing, CDNA 2, Gaudi, TPU, Trainium, Apple, Radeon): not offered.
An FP4 KV cache is offered only where the card's FP4 tensor cores take its format: NVFP4
(TensorRT-LLM's FP4 KV cache; flashinfer's `nvfp4_kv_quantize` "Requires SM100+ (Blackwell)") and
MXFP4 (SGLang's `--kv-cache-dtype fp4_e2m1`, "OCP ... MXFP4", 32-element blocks with an 8-bit
exponent scale, experimental; docs.sglang.io advanced_features/quantized_kv_cache, read
2026-12-06): never dequantised from a card without them.
Local runtimes (issue 34: one user's inference on a desktop or unified-memory box):
- llama.cpp GGUF (Q8_0, Q4_K_M): ggml's GPU backends, llama.cpp README "Supported backends"
  (github.com/ggml-org/llama.cpp, read 2026-12-06): CUDA (NVIDIA GPU), HIP (AMD GPU), Metal
  (Apple Silicon), Vulkan (GPU; AMD Ryzen AI Max / Radeon run either HIP or Vulkan), SYCL (Intel
  GPU), CANN (Ascend). In the catalog's software stacks: CUDA, ROCm and Metal/MLX; not Gaudi
  (SynapseAI), TPU (XLA) or Trainium (Neuron), which no ggml backend targets.
- MLX 4-bit: MLX, "an array framework for machine learning on Apple silicon" (ml-explore.github.io
  /mlx): Metal/MLX only. MLX's CUDA backend (Linux) is not counted: mlx-lm's 4-bit serving on it is
  not what a buyer of an NVIDIA card runs, and no source here measures it.
FlashAttention 2: NVIDIA Ampere, Ada and Hopper (FA3: Hopper), AMD MI200/MI300 through ROCm's
port (github.com/Dao-AILab/flash-attention README); elsewhere PyTorch's memory-efficient
attention runs instead (the memory model's `sdpa` holds no s x s matrix either way).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import AdvisorError

ENGINES = ("vllm", "trtllm", "sglang")
FLASH_ATTENTION_ARCH = ("Ampere", "Ada Lovelace", "Hopper", "Blackwell", "CDNA 2", "CDNA 3")
NVIDIA_FP8_ARCH = ("Ada Lovelace", "Hopper", "Blackwell")
NVIDIA_NO_AWQ = ("Volta",)
NVIDIA_NO_W8A8 = ("Volta",)
FP4_WEIGHTS = ("nvfp4", "mxfp4")
MARLIN_FP4_ARCH = ("Ampere", "Ada Lovelace", "Hopper", "Blackwell")  # compute capability 8.0+
ROCM_MXFP4_EMULATED_ARCH = ("CDNA 3",)  # AMD Quark's MXFP4 emulation in vLLM
# the local runtimes' formats and the software stacks that run them (module docstring)
LOCAL_RUNTIME = {"q8_0": "llama.cpp", "q4_k_m": "llama.cpp", "mlx-4bit": "MLX"}
# the weight formats a form lists only for a card with a path for them (`fp4_choices`)
GATED_WEIGHTS = (*FP4_WEIGHTS, *LOCAL_RUNTIME)
LOCAL_SOFTWARE = {"llama.cpp": ("CUDA", "ROCm", "Metal/MLX"), "MLX": ("Metal/MLX",)}


@dataclass(frozen=True)
class Reason:
    key: str
    params: dict
    message: str

    def to_dict(self) -> dict:
        return {"key": self.key, "params": dict(self.params), "message": self.message}


def has_fp8(gpu) -> bool:
    """FP8 tensor cores: a dense FP8 rate in the catalog."""
    return bool((gpu.peak_tflops or {}).get("fp8"))


def _software(gpu) -> str:
    return str(getattr(gpu, "software", "") or "")


def _arch(gpu) -> str:
    return str(getattr(gpu, "architecture", "") or "")


def _no(key: str, gpu, fmt: str, why: str) -> Reason:
    return Reason(
        key,
        {"gpu": gpu.id, "format": fmt, "why": why},
        f"{fmt} is not supported on {gpu.name}: {why}",
    )


def fp4_path(gpu, fmt: str, kv: bool = False) -> str | None:
    """How `gpu` runs FP4 block format `fmt` (nvfp4 | mxfp4): "native" (its FP4 tensor cores
    take it), "dequantised" (an engine's software path, module docstring) or None (not offered).
    `kv`: as the KV cache's format (native only)."""
    runs = getattr(gpu, "runs_fp4", None)
    if runs is not None and runs(fmt):
        return "native"
    if kv:
        return None
    sw, arch = _software(gpu), _arch(gpu)
    if sw == "CUDA" and arch in MARLIN_FP4_ARCH:
        return "dequantised"
    if fmt == "mxfp4" and sw == "ROCm" and arch in ROCM_MXFP4_EMULATED_ARCH:
        return "dequantised"
    return None


def fp4_choices(gpu) -> dict:
    """{"weights": {fmt: path}, "kv_dtype": {fmt: path}}: the FP4 formats a form offers for
    `gpu` (those with a path, `fp4_path`)."""
    out = {"weights": {}, "kv_dtype": {}}
    for f in FP4_WEIGHTS:
        if (p := fp4_path(gpu, f)) is not None:
            out["weights"][f] = p
    for f in FP4_WEIGHTS:
        if fp4_path(gpu, f, kv=True) is not None:
            out["kv_dtype"][f] = "native"
    return out


def form_paths(gpu) -> dict:
    """What the calculators' selects follow for `gpu` (calcruntime/build/pages.py ships it): the
    FP4 formats with a path (`fp4_choices`) and the local runtimes' formats whose runtime has a
    backend for the card's software (`local_format`, path "native"). The formats in
    `GATED_WEIGHTS` are listed only where the card has a path for them."""
    out = fp4_choices(gpu)
    for f in LOCAL_RUNTIME:
        if not local_format(gpu, f):
            out["weights"][f] = "native"
    return out


def _no_fp4(gpu, fmt: str, field: str) -> Reason:
    return Reason(
        "support.fp4_unavailable",
        {"gpu": gpu.id, "format": fmt, "field": field},
        f"{field}: {fmt} is not offered on {gpu.name}: no FP4 tensor cores for it and no engine "
        "that dequantises it there",
    )


def fp4_format(gpu, weights: str, kv_dtype: str = "bf16") -> tuple[Reason, ...]:
    """Reasons FP4 `weights` / an FP4 `kv_dtype` cannot run on `gpu` (`fp4_path`)."""
    out = []
    if weights in FP4_WEIGHTS and fp4_path(gpu, weights) is None:
        out.append(_no_fp4(gpu, weights, "weights"))
    if kv_dtype in FP4_WEIGHTS and fp4_path(gpu, kv_dtype, kv=True) is None:
        out.append(_no_fp4(gpu, kv_dtype, "kv_dtype"))
    return tuple(out)


def check_fp4(gpu, weights: str, kv_dtype: str = "bf16") -> None:
    """Raise the first `fp4_format` reason as an error naming its field."""
    for why in fp4_format(gpu, weights, kv_dtype):
        raise AdvisorError(why.key, why.message, **why.params)


def local_format(gpu, weights: str) -> tuple[Reason, ...]:
    """Reasons a local runtime's `weights` (llama.cpp GGUF, MLX 4-bit) cannot run on `gpu`:
    the runtime has no backend for its software stack (module docstring)."""
    runtime = LOCAL_RUNTIME.get(weights)
    if runtime is None:
        return ()
    sw = _software(gpu)
    if sw in LOCAL_SOFTWARE[runtime]:
        return ()
    return (
        Reason(
            "support.runtime",
            {
                "gpu": gpu.id,
                "format": weights,
                "runtime": runtime,
                "software": sw,
                "field": "weights",
            },
            f"weights: {weights} is not offered on {gpu.name}: {runtime} has no {sw} backend",
        ),
    )


def check_local(gpu, weights: str) -> None:
    """Raise `local_format`'s reason as an error naming the field `weights`."""
    for why in local_format(gpu, weights):
        raise AdvisorError(why.key, why.message, **why.params)


def check_weights(gpu, weights: str, kv_dtype: str = "bf16") -> None:
    """Raise the first reason `weights` / `kv_dtype` are not offered on `gpu` (FP4 block
    formats: `check_fp4`; local runtimes' formats: `check_local`), naming its field."""
    check_fp4(gpu, weights, kv_dtype)
    check_local(gpu, weights)


def serving_format(gpu, weights: str, kv_dtype: str = "bf16") -> tuple[Reason, ...]:
    """Reasons `weights` / `kv_dtype` cannot be served on `gpu` (module docstring)."""
    sw, arch = _software(gpu), _arch(gpu)
    out = list(fp4_format(gpu, weights, kv_dtype)) + list(local_format(gpu, weights))
    if weights == "fp8" and not has_fp8(gpu):
        out.append(_no("support.no_fp8", gpu, "fp8", "no FP8 tensor cores"))
    elif weights == "awq" and (sw != "CUDA" or arch in NVIDIA_NO_AWQ):
        out.append(_no("support.format", gpu, "awq", f"vLLM has no AWQ kernels for {arch or sw}"))
    elif weights in ("gptq", "int4") and sw != "CUDA":
        out.append(_no("support.format", gpu, weights, f"vLLM has no GPTQ kernels for {sw}"))
    elif weights == "int8" and (sw != "CUDA" or arch in NVIDIA_NO_W8A8):
        out.append(_no("support.format", gpu, "int8", f"vLLM has no INT8 kernels for {arch or sw}"))
    elif weights == "nf4" and sw != "CUDA":
        out.append(_no("support.format", gpu, "nf4", "vLLM runs bitsandbytes on NVIDIA only"))
    if kv_dtype == "fp8" and not has_fp8(gpu) and sw != "CUDA":
        out.append(_no("support.no_fp8", gpu, "fp8 KV cache", "no FP8 tensor cores"))
    return tuple(out)


# Software stacks bitsandbytes has a backend for (its 0.50 installation page: NVIDIA, AMD, Intel
# XPU and Gaudi, Apple Silicon); a TPU (JAX/XLA) or Trainium (Neuron) has none, so no QLoRA.
BNB_SOFTWARE = ("CUDA", "ROCm", "SynapseAI", "Metal/MLX")


def training(gpu, task: str, precision: str | None = None) -> tuple[Reason, ...]:
    """Reasons `task` (train | lora | qlora) at `precision` cannot run on `gpu`."""
    out = []
    if precision in ("fp8", "amp-fp8") and not has_fp8(gpu):
        out.append(_no("support.no_fp8", gpu, "fp8", "no FP8 tensor cores"))
    sw = _software(gpu)
    if task == "qlora" and sw and sw not in BNB_SOFTWARE:
        out.append(
            Reason(
                "support.no_bnb",
                {"gpu": gpu.id, "software": sw},
                f"QLoRA is not supported on {gpu.name}: bitsandbytes has no {sw} backend",
            )
        )
    return tuple(out)


def notes_for_training(gpu, task: str) -> tuple[Reason, ...]:
    """What a buyer must know for `task` on `gpu` though it runs (module docstring)."""
    sw = _software(gpu)
    out = ()
    if sw == "CUDA" and not flash_attention(gpu):
        out = (
            Reason(
                "support.no_flash",
                {"gpu": gpu.id},
                f"{gpu.name} has no FlashAttention 2 kernels (Ampere or newer): PyTorch's "
                "memory-efficient attention runs instead, slower",
            ),
        )
    if task == "qlora" and sw in ("ROCm", "SynapseAI", "Metal/MLX"):
        return out + (
            Reason(
                "support.bnb_version",
                {"gpu": gpu.id, "software": sw, "version": "0.50"},
                f"QLoRA on {sw} needs bitsandbytes 0.50 or later (official support for AMD "
                "GPUs and Intel Gaudi)",
            ),
        )
    return out


def engine(gpu, name: str) -> tuple[Reason, ...]:
    """Reasons serving engine `name` does not run on `gpu` (module docstring)."""
    sw, arch = _software(gpu), _arch(gpu)
    ok = {
        "vllm": sw in ("CUDA", "ROCm", "SynapseAI"),
        "trtllm": sw == "CUDA",
        "sglang": sw == "CUDA" or (sw == "ROCm" and arch.startswith("CDNA")),
    }.get(name, True)
    if ok:
        return ()
    return (
        Reason(
            "support.engine",
            {"gpu": gpu.id, "engine": name, "software": sw},
            f"{name} does not run on {gpu.name} ({sw})",
        ),
    )


def flash_attention(gpu) -> bool:
    """FlashAttention 2 kernels for `gpu` (module docstring)."""
    return _arch(gpu) in FLASH_ATTENTION_ARCH
