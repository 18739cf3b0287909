"""Training memory (VRAM and bandwidth, training vs inference, multi-GPU pages, FAQ).

Part of hooks/facts/ (the guide's figures; see its __init__)."""

from __future__ import annotations

from functools import cache, lru_cache
from types import MappingProxyType

from . import serving_memory as _serving_memory
from . import sizes as _sizes
from .common import _frozen, _mem, gpu, model


@cache
def training(
    key: str = "llama8b",
    batch: int = 1,
    seq: int = 2048,
    precision: str = "amp-bf16",
    optimizer: str = "adamw",
    checkpointing: str = "none",
    attention: str = "sdpa",
    gpus: int = 1,
    sharding: str = "ddp",
    lora_rank: int = 0,
    quant: str | None = None,
) -> MappingProxyType:
    """One training setup through `advisor.memory.estimate.training_memory` (per GPU)."""
    m = _mem()
    setup = m.TrainingSetup(
        model=model(key).spec,
        batch=batch,
        seq=seq,
        precision=precision,
        optimizer=optimizer,
        checkpointing=checkpointing,
        attention=attention,
        gpus=gpus,
        sharding=sharding,
        lora_rank=lora_rank,
        quant=quant,
    )
    est = m.training_memory(setup)
    n = _sizes.params(key)["total"]
    c = dict(est.components)
    states = sum(
        c.get(k, 0) for k in ("weights", "gradients", "master_weights", "optimizer_states")
    )
    return _frozen(
        name=model(key).display_name,
        batch=batch,
        seq=seq,
        gpus=gpus,
        components=MappingProxyType(c),
        overhead=MappingProxyType(dict(est.overhead)),
        peak_bytes=est.peak_allocated_bytes,
        overhead_bytes=est.overhead_bytes,
        total_bytes=est.total_bytes,
        states_bytes=states,
        states_bytes_per_param=states / n,
        activations_bytes=c.get("activations", 0),
        logits_bytes=c.get("logits", 0),
        params=n,
    )


@lru_cache(maxsize=1)
def full_training() -> MappingProxyType:
    """The VRAM page's worked example: Llama 3.1 8B, full fine-tune, AdamW, bf16 autocast.

    Compared with the article's rule "bf16 weights plus 30-40 %": the rule's upper end
    (weights x 1.4) against advisor's total to provision.
    """
    t = training("llama8b", batch=1, seq=2048)
    w16 = _sizes.weights("llama8b", "bf16")["bytes"]
    rule = 1.4 * w16
    return _frozen(
        **t,
        bf16_weights_bytes=w16,
        rule_bytes=rule,
        rule_share_of_total=rule / t["total_bytes"],
        times_rule=t["total_bytes"] / rule,
        times_bf16_weights=t["total_bytes"] / w16,
    )


@lru_cache(maxsize=1)
def rule_inference() -> MappingProxyType:
    """Where the 30-40 % rule is about right: bf16 inference of Llama 3.1 8B, batch 1, 8k tokens."""
    e = _serving_memory.inference("llama8b", batch=1, seq=8192)
    w16 = _sizes.weights("llama8b", "bf16")["bytes"]
    return _frozen(**e, rule_bytes=1.4 * w16, ratio_to_weights=e["total_bytes"] / w16)


@lru_cache(maxsize=1)
def precision_options() -> MappingProxyType:
    """Llama 3.1 8B at batch 1, 2k context, by precision and optimizer (per GPU totals)."""
    rows = {
        "amp-bf16 adamw": training("llama8b", precision="amp-bf16", optimizer="adamw"),
        "bf16 adamw": training("llama8b", precision="bf16", optimizer="adamw"),
        "amp-bf16 adamw-8bit": training("llama8b", precision="amp-bf16", optimizer="adamw-8bit"),
        "bf16 adafactor": training("llama8b", precision="bf16", optimizer="adafactor"),
        "bf16 sgd": training("llama8b", precision="bf16", optimizer="sgd"),
    }
    return MappingProxyType(rows)


@lru_cache(maxsize=1)
def activations_options() -> MappingProxyType:
    """Activation memory of Llama 3.1 8B at batch 4, 4k context: attention kind and checkpointing."""
    base = dict(key="llama8b", batch=4, seq=4096)
    return _frozen(
        batch=4,
        seq=4096,
        sdpa=training(**base),
        eager=training(**base, attention="eager"),
        selective=training(**base, checkpointing="selective"),
        eager_selective=training(**base, attention="eager", checkpointing="selective"),
        full=training(**base, checkpointing="full"),
    )


@lru_cache(maxsize=1)
def small_model_logits() -> MappingProxyType:
    """GPT-2 small, batch 8, 1k context: the vocabulary-sized logits next to the weights."""
    t = training("gpt2", batch=8, seq=1024, precision="amp-bf16")
    return _frozen(**t, logits_share=t["logits_bytes"] / t["peak_bytes"])


@cache
def max_batch_train(key: str, gpu_key: str, seq: int = 2048) -> int:
    """Largest full-training batch (amp-bf16, AdamW) that fits one card (advisor.memory.estimate.max_batch)."""
    m = _mem()
    setup = m.TrainingSetup(model=model(key).spec, batch=1, seq=seq, precision="amp-bf16")
    return m.max_batch(setup, gpu(gpu_key).memory_bytes)


@lru_cache(maxsize=1)
def batch_vs_vram() -> MappingProxyType:
    """How VRAM bounds the training batch: Qwen2.5 0.5B, full fine-tune, 1k context.

    Cost of one more sample = (peak at batch 8 - peak at batch 4) / 4 (activations and logits
    grow linearly with the batch).
    """
    key, seq = "qwen05", 1024
    return _frozen(
        seq=seq,
        name=model(key).display_name,
        per_sample_bytes=(
            training(key, batch=8, seq=seq)["peak_bytes"]
            - training(key, batch=4, seq=seq)["peak_bytes"]
        )
        / 4,
        batch1_bytes=training(key, batch=1, seq=seq)["total_bytes"],
        rtx4090=max_batch_train(key, "rtx4090", seq),
        l40s=max_batch_train(key, "l40s", seq),
        h100=max_batch_train(key, "h100", seq),
        h200=max_batch_train(key, "h200", seq),
        rtx4090_gib=gpu("rtx4090").memory_gib,
        l40s_gib=gpu("l40s").memory_gib,
        h100_gib=gpu("h100").memory_gib,
        h200_gib=gpu("h200").memory_gib,
    )


@lru_cache(maxsize=1)
def sharding_8gpu() -> MappingProxyType:
    """Llama 3.1 8B full training on 8 GPUs: per-GPU memory under DDP and ZeRO-1/2/3."""
    return _frozen(
        gpus=8,
        single=training("llama8b", batch=1, seq=2048),
        **{
            s: training("llama8b", batch=1, seq=2048, gpus=8, sharding=s)
            for s in ("ddp", "zero1", "zero2", "zero3")
        },
    )


@lru_cache(maxsize=1)
def full_70b_gpus() -> MappingProxyType:
    """Fewest 80 GB H100 for a full Llama 3.1 70B fine-tune under ZeRO-3 (advisor.memory.estimate.min_gpus)."""
    m = _mem()
    setup = m.TrainingSetup(
        model=model("llama70b").spec,
        batch=1,
        seq=2048,
        precision="amp-bf16",
        checkpointing="full",
        sharding="zero3",
    )
    n = m.min_gpus(setup, gpu("h100").memory_bytes)
    return _frozen(gpus=n, seq=2048, single=training("llama70b", checkpointing="full"))
