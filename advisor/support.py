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
QLoRA's NF4 base runs on every catalog accelerator with bitsandbytes 0.50 or later; the report
names that version for AMD and Gaudi (`notes_for_training`). FP8 training needs FP8 tensor
cores (as above).
"""

from __future__ import annotations

from dataclasses import dataclass

NVIDIA_FP8_ARCH = ("Ada Lovelace", "Hopper", "Blackwell")
NVIDIA_NO_AWQ = ("Volta",)
NVIDIA_NO_W8A8 = ("Volta",)


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


def serving_format(gpu, weights: str, kv_dtype: str = "bf16") -> tuple[Reason, ...]:
    """Reasons `weights` / `kv_dtype` cannot be served on `gpu` (module docstring)."""
    sw, arch = _software(gpu), _arch(gpu)
    out = []
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


def training(gpu, task: str, precision: str | None = None) -> tuple[Reason, ...]:
    """Reasons `task` (train | lora | qlora) at `precision` cannot run on `gpu`."""
    out = []
    if precision in ("fp8", "amp-fp8") and not has_fp8(gpu):
        out.append(_no("support.no_fp8", gpu, "fp8", "no FP8 tensor cores"))
    return tuple(out)


def notes_for_training(gpu, task: str) -> tuple[Reason, ...]:
    """What a buyer must know for `task` on `gpu` though it runs (module docstring)."""
    sw = _software(gpu)
    if task == "qlora" and sw in ("ROCm", "SynapseAI"):
        return (
            Reason(
                "support.bnb_version",
                {"gpu": gpu.id, "software": sw, "version": "0.50"},
                f"QLoRA on {sw} needs bitsandbytes 0.50 or later (official support for AMD "
                "GPUs and Intel Gaudi)",
            ),
        )
    return ()
