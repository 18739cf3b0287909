"""LoRA and QLoRA memory (quantisation page, FAQ).

Part of hooks/facts/ (the guide's figures; see its __init__)."""

from __future__ import annotations

from functools import cache, lru_cache
from types import MappingProxyType

from . import training_memory as _training_memory
from .common import _frozen, gpu


@cache
def qlora(key: str, gpu_key: str, seq: int = 2048, rank: int = 16) -> MappingProxyType:
    """QLoRA (NF4 base, bf16 adapters, full checkpointing) of a model on one card."""
    t = _training_memory.training(
        key,
        batch=1,
        seq=seq,
        precision="amp-bf16",
        checkpointing="full",
        lora_rank=rank,
        quant="nf4",
    )
    cap = gpu(gpu_key).memory_bytes
    return _frozen(
        **t,
        rank=rank,
        gpu_name=gpu(gpu_key).name,
        gpu_bytes=cap,
        fits=t["total_bytes"] <= cap,
        headroom_bytes=cap - t["total_bytes"],
        weights_bytes=t["components"].get("weights", 0) + t["components"].get("quant_scales", 0),
    )


@lru_cache(maxsize=1)
def qlora_24gb() -> MappingProxyType:
    """QLoRA on a 24 GB card (RTX 4090): 8B fits, 70B does not; 70B on a 48 GB card."""
    return _frozen(
        q8=qlora("llama8b", "rtx4090"),
        q70=qlora("llama70b", "rtx4090"),
        q70_48=qlora("llama70b", "rtx6000ada"),
        lora8=_training_memory.training(
            "llama8b", batch=1, seq=2048, precision="bf16", lora_rank=16, checkpointing="full"
        ),
        full8=_training_memory.full_training(),
    )
