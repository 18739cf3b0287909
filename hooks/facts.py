"""Figures the guide cites, computed by advisor at site build time.

The guide pages are Jinja2 templates; every number in their prose comes from a function here
(`{{ facts.full_training().total_bytes | gib }}`), so the text can never drift from advisor or
the catalog. Each function is small, pure and cached; it returns a read-only mapping of plain
numbers (sizes in bytes, bandwidths in GB/s, powers in W, prices in USD) so that the page's
filters (`gib`, `gb`, `num`, `pct`, `money`) format them per language.

Inputs a reader should see (batch, context, user count) are returned alongside the results, so
the prose renders them too instead of typing them.

The only arithmetic done here, beyond calling advisor, is stated in each docstring with its source.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from functools import cache, lru_cache
from pathlib import Path
from types import MappingProxyType

from advisor.core import units

ROOT = Path(__file__).resolve().parent.parent

# Catalog ids the guide uses (one place to change them).
MODELS = {
    "gpt2": "gpt2-124m",
    "llama1b": "llama-3.2-1b",
    "qwen05": "qwen2.5-0.5b",
    "llama8b": "llama-3.1-8b",
    "llama70b": "llama-3.1-70b",
    "llama405b": "llama-3.1-405b",
    "mixtral": "mixtral-8x7b",
    "dsv3": "deepseek-v3",
    "qwen3moe": "qwen3-30b-a3b",
    "gptoss20": "gpt-oss-20b",
    "gptoss120": "gpt-oss-120b",
    "gemma3": "gemma-3-27b",
}
GPUS = {
    "h100": "h100-sxm",
    "h100pcie": "h100-pcie",
    "h200": "h200",
    "b200": "b200",
    "a100": "a100-80gb-sxm",
    "mi300x": "mi300x",
    "l40s": "l40s",
    "rtx6000ada": "rtx-6000-ada",
    "rtx4090": "rtx-4090",
    "rtx3090": "rtx-3090",
    "rtxa6000": "rtx-a6000",
    "rtx5090": "rtx-5090",
    "rtx3060": "rtx-3060-12gb",
    # issue 34: the accelerators of 2026
    "b300": "b300",
    "gb200": "gb200",
    "gb300": "gb300",
    "h20": "h20",
    "mi355x": "mi355x",
    "mi350x": "mi350x",
    "tpuv5e": "tpu-v5e",
    "tpuv5p": "tpu-v5p",
    "tpuv6e": "tpu-v6e",
    "tpu7x": "tpu-7x",
    "trn2": "trainium2",
    "m3ultra": "m3-ultra",
    "m4max": "m4-max",
    "spark": "dgx-spark",
    "strix": "ryzen-ai-max-395",
}

# Thermal conversion: 1 W = 3.412 BTU/h (NIST SP 811, appendix B.8).
BTU_PER_H_PER_W = 3.412
HOURS_PER_YEAR = 8760


def _frozen(**kw) -> MappingProxyType:
    return MappingProxyType(kw)


_SOURCE: dict = {}  # "catalog", "root": what the build handed over (hooks.state.load)


def use_catalog(cat, root: Path) -> None:
    """Compute every figure from `cat` (the build's one catalog) and files under `root`; the
    cached figures of a previous build are dropped."""
    reset()
    _SOURCE.update(catalog=cat, root=root)


def reset() -> None:
    """Back to the default catalog (loaded on first use)."""
    _SOURCE.clear()
    for value in list(globals().values()):
        if callable(value) and hasattr(value, "cache_clear"):
            value.cache_clear()


def root() -> Path:
    return _SOURCE.get("root", ROOT)


def catalog():
    """The build's catalog; outside a build (tests of this module) `$ADVISOR_CATALOG` or the
    repository's catalog/, loaded once."""
    if "catalog" not in _SOURCE:
        from advisor.data.catalog import load_catalog

        _SOURCE["catalog"] = load_catalog(os.environ.get("ADVISOR_CATALOG") or ROOT / "catalog")
    return _SOURCE["catalog"]


def model(key: str):
    """The catalog preset for a guide key (or a catalog id)."""
    return catalog().model(MODELS.get(key, key))


def gpu(key: str):
    """The catalog accelerator for a guide key (or a catalog id)."""
    return catalog().gpu(GPUS.get(key, key))


def _mem():
    from advisor.memory import estimate as memory

    return memory


# ---------------------------------------------------------------------------------------------
# Parameters and weights
# ---------------------------------------------------------------------------------------------


@cache
def params(key: str) -> MappingProxyType:
    """Total and active parameter counts (advisor.arch.models, exact per transformers)."""
    from advisor.arch.models import active_param_count, param_count

    spec = model(key).spec
    total = param_count(spec)
    active = active_param_count(spec)
    return _frozen(
        name=model(key).display_name,
        total=total,
        active=active,
        total_billions=total / 1e9,
        active_billions=active / 1e9,
        active_share=active / total,
    )


@cache
def weights(key: str, fmt: str = "bf16") -> MappingProxyType:
    """Weight bytes (with quantisation scales) of a model in one weight format, and per parameter.

    From `advisor.memory.estimate.inference_memory` at batch 1 and a 1-token context, so that only the
    weights count.
    """
    m = _mem()
    est = m.inference_memory(m.InferenceSetup(model(key).spec, batch=1, seq=1, weights=fmt))
    w = est.components.get("weights", 0) + est.components.get("quant_scales", 0)
    n = params(key)["total"]
    return _frozen(bytes=w, bytes_per_param=w / n, bits_per_param=8 * w / n, params=n)


@lru_cache(maxsize=1)
def weight_formats() -> MappingProxyType:
    """Bytes per parameter of each weight format, measured on Llama 3.1 8B's weights."""
    return _frozen(
        **{
            f: weights("llama8b", f)
            for f in ("fp32", "bf16", "fp8", "int8", "int4", "nf4", "gptq", "awq", "nvfp4", "mxfp4")
        }
    )


# ---------------------------------------------------------------------------------------------
# Training memory
# ---------------------------------------------------------------------------------------------


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
    n = params(key)["total"]
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
    w16 = weights("llama8b", "bf16")["bytes"]
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
    e = inference("llama8b", batch=1, seq=8192)
    w16 = weights("llama8b", "bf16")["bytes"]
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


# ---------------------------------------------------------------------------------------------
# LoRA / QLoRA
# ---------------------------------------------------------------------------------------------


@cache
def qlora(key: str, gpu_key: str, seq: int = 2048, rank: int = 16) -> MappingProxyType:
    """QLoRA (NF4 base, bf16 adapters, full checkpointing) of a model on one card."""
    t = training(
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
        lora8=training(
            "llama8b", batch=1, seq=2048, precision="bf16", lora_rank=16, checkpointing="full"
        ),
        full8=full_training(),
    )


# ---------------------------------------------------------------------------------------------
# Inference and serving
# ---------------------------------------------------------------------------------------------


@cache
def inference(
    key: str,
    batch: int = 1,
    seq: int = 4096,
    weights: str = "bf16",  # noqa: A002 - matches InferenceSetup
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
) -> MappingProxyType:
    """One inference setup through `advisor.memory.estimate.inference_memory` (per GPU)."""
    m = _mem()
    est = m.inference_memory(
        m.InferenceSetup(
            model(key).spec,
            batch=batch,
            seq=seq,
            weights=weights,
            kv_dtype=kv_dtype,
            tensor_parallel=tensor_parallel,
        )
    )
    c = dict(est.components)
    return _frozen(
        batch=batch,
        seq=seq,
        components=MappingProxyType(c),
        weights_bytes=c.get("weights", 0) + c.get("quant_scales", 0),
        kv_bytes=c.get("kv_cache", 0),
        peak_bytes=est.peak_allocated_bytes,
        overhead_bytes=est.overhead_bytes,
        total_bytes=est.total_bytes,
    )


@cache
def kv_per_token(key: str, kv_dtype: str = "bf16") -> int:
    """KV-cache bytes per token of context (advisor.memory.estimate.kv_cache_bytes_per_token)."""
    return _mem().kv_cache_bytes_per_token(model(key).spec, kv_dtype)


@lru_cache(maxsize=1)
def kv_table() -> MappingProxyType:
    """KV bytes per token for the guide's models, and the naive MHA figure for Llama 3.1 8B.

    The MHA figure (2 x layers x hidden x 2 bytes) is what a calculator that ignores grouped-query
    attention computes: K and V for every query head (Ainslie et al. 2023, arXiv:2305.13245).
    """
    spec = model("llama8b").spec
    mha = 2 * spec.num_layers * spec.num_heads * spec.head_dim * 2
    return _frozen(
        llama8b=kv_per_token("llama8b"),
        llama8b_fp8=kv_per_token("llama8b", "fp8"),
        llama70b=kv_per_token("llama70b"),
        llama405b=kv_per_token("llama405b"),
        mixtral=kv_per_token("mixtral"),
        llama8b_mha=mha,
        gqa_factor=mha / kv_per_token("llama8b"),
        kv_heads_8b=spec.num_kv_heads,
        heads_8b=spec.num_heads,
        layers_8b=spec.num_layers,
        head_dim_8b=spec.head_dim,
    )


@cache
def serving(
    key: str,
    gpu_key: str,
    context: int = 8192,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
    utilisation: float = 0.9,
) -> MappingProxyType:
    """vLLM-style serving capacity (advisor.memory.estimate.serving_capacity)."""
    g = gpu(gpu_key)
    s = _mem().serving_capacity(
        model(key).spec,
        g.memory_bytes,
        context=context,
        weights=weights,
        kv_dtype=kv_dtype,
        gpu_memory_utilization=utilisation,
        tensor_parallel=tensor_parallel,
    )
    return _frozen(
        gpu_name=g.name,
        gpu_bytes=g.memory_bytes,
        context=context,
        utilisation=utilisation,
        tensor_parallel=tensor_parallel,
        weights_bytes=s.weights_bytes,
        kv_bytes_per_token=s.kv_bytes_per_token,
        kv_budget_bytes=s.kv_budget_bytes,
        sequences=s.max_concurrent_sequences,
        max_context=s.max_context_tokens,
        tokens_in_cache=s.kv_cache_tokens,
    )


TP_DEGREES = (1, 2, 4, 8)  # tensor parallelism inside one 8-GPU server


@cache
def serving_gpus(key: str, gpu_key: str, users: int, context: int, w: str, kv: str):
    """Fewest GPUs (tensor-parallel degree within one 8-GPU server) whose vLLM memory plan
    (advisor.memory.estimate.serving_capacity) holds `users` concurrent sequences of `context` tokens;
    None if eight are not enough."""
    for t in TP_DEGREES:
        if model(key).spec.num_kv_heads % t:
            continue
        s = serving(key, gpu_key, context=context, weights=w, kv_dtype=kv, tensor_parallel=t)
        if s["sequences"] >= users:
            return t
    return None


@lru_cache(maxsize=1)
def serve_70b_users() -> MappingProxyType:
    """Serving Llama 3.1 70B to 100 concurrent users, each with 4k tokens of context.

    Weights and KV bytes from advisor.memory.estimate (weights incl. scales; KV = users x context x bytes
    per token); GPU counts from the vLLM plan (`serving_gpus`) on H100 and H200.
    """
    users, ctx = 100, 4096
    rows = {}
    for name, w, kv in (("bf16", "bf16", "bf16"), ("fp8", "fp8", "fp8"), ("int4", "awq", "fp8")):
        wb = weights("llama70b", w)["bytes"]
        kvb = users * ctx * kv_per_token("llama70b", kv)
        h100 = serving_gpus("llama70b", "h100", users, ctx, w, kv)
        h200 = serving_gpus("llama70b", "h200", users, ctx, w, kv)
        rows[name] = _frozen(
            weights_bytes=wb,
            kv_bytes=kvb,
            total_bytes=wb + kvb,
            h100s=h100 or 0,
            h200s=h200 or 0,
        )
    return _frozen(users=users, context=ctx, h100_gib=gpu("h100").memory_gib, **rows)


@lru_cache(maxsize=1)
def serving_examples() -> MappingProxyType:
    """Concurrent 8k-token sequences of Llama 3.1 8B on common cards (bf16 weights and KV)."""
    return _frozen(
        context=8192,
        rtx4090=serving("llama8b", "rtx4090"),
        l40s=serving("llama8b", "l40s"),
        h100=serving("llama8b", "h100"),
        h100_fp8=serving("llama8b", "h100", weights="fp8", kv_dtype="fp8"),
    )


# ---------------------------------------------------------------------------------------------
# Hardware
# ---------------------------------------------------------------------------------------------


@cache
def card(key: str) -> MappingProxyType:
    """The catalog figures of one accelerator the prose cites."""
    g = gpu(key)
    tf = g.peak_tflops
    return _frozen(
        name=g.name,
        vendor=g.vendor,
        tier=g.tier,
        memory_bytes=g.memory_bytes,
        memory_gib=g.memory_gib,
        memory_type=g.memory_type,
        bandwidth_gb_per_s=g.memory_bandwidth_gb_per_s,
        bf16_tflops=tf.get("bf16", 0.0),
        fp8_tflops=tf.get("fp8", 0.0),
        fp4_tflops=tf.get("fp4", 0.0),
        fp32_tflops=tf.get("fp32", 0.0),
        tdp_w=g.tdp_w or 0.0,  # 0: unpublished (TPU, Trainium); pages do not cite it
        interconnect=g.interconnect,
        interconnect_gb_per_s=g.interconnect_gb_per_s,
        price_usd=g.price_usd or 0.0,
        ridge_bf16=g.ridge_point("bf16"),
        fp4_formats=", ".join(f.upper() for f in g.fp4_formats),
        unified_fraction=g.unified_memory.default_fraction if g.unified_memory else 1.0,
        usable_bytes=g.usable_memory_bytes,
        physical_bytes=round(g.memory_gib * units.GIB),
        domain_size=g.scale_up.domain_size if g.scale_up else 1,
        domain_gb_per_s=g.scale_up.gb_per_s if g.scale_up else 0.0,
        software=g.software,
    )


@cache
def rack(key: str) -> MappingProxyType:
    """One scale-up domain of `key` taken whole (a GB200/GB300 NVL72 rack, a TPU pod): its GPU
    count, memory, dense peaks and GPU power, each the per-GPU catalog figure x the domain size."""
    c = card(key)
    n = c["domain_size"]
    return _frozen(
        gpus=n,
        memory_bytes=n * c["memory_bytes"],
        fp4_pflops=n * c["fp4_tflops"] / 1000,
        fp8_pflops=n * c["fp8_tflops"] / 1000,
        bf16_pflops=n * c["bf16_tflops"] / 1000,
        gpu_kw=n * c["tdp_w"] / 1000,
        nvlink_tb_per_s=n * c["domain_gb_per_s"] / 1000,
    )


@lru_cache(maxsize=1)
def fp4() -> MappingProxyType:
    """What FP4 weights change: bytes per parameter of NVFP4 and MXFP4 against FP8 and BF16 on
    Llama 3.1 70B, and the serving rate of 70B on one B200 (advisor.perf.serving) in NVFP4 against
    FP8, and on an H100, which dequantises NVFP4."""
    from advisor.arch import quant
    from advisor.perf import serving as srv

    def rate(gpu_key, w, kv="fp8"):
        p = srv.plan(
            model("llama70b").spec,
            gpu(gpu_key),
            input_tokens=1000,
            output_tokens=1000,
            weights=w,
            kv_dtype=kv,
            tensor_parallel=1,
        )
        return max(pt.tokens_per_s for pt in p.points) if p.points else 0.0

    b_fp4, b_fp8 = rate("b200", "nvfp4"), rate("b200", "fp8")
    return _frozen(
        nvfp4=weights("llama70b", "nvfp4"),
        mxfp4=weights("llama70b", "mxfp4"),
        fp8=weights("llama70b", "fp8"),
        bf16=weights("llama70b", "bf16"),
        b200_nvfp4_tokens_s=b_fp4,
        b200_fp8_tokens_s=b_fp8,
        b200_fp4_x=b_fp4 / b_fp8 if b_fp8 else 0.0,
        b200=card("b200"),
        mi355x=card("mi355x"),
        # one 1-byte scale per block (advisor.arch.quant): the block is 1 / scale bytes per weight
        nvfp4_block=round(1 / quant.FORMATS["nvfp4"].scale_bytes_per_param),
        mxfp4_block=round(1 / quant.FORMATS["mxfp4"].scale_bytes_per_param),
    )


@lru_cache(maxsize=1)
def flagships() -> MappingProxyType:
    """H100 SXM vs H200 vs B200 vs MI300X: the ratios the FAQ cites."""
    h, h2, b, mi = card("h100"), card("h200"), card("b200"), card("mi300x")
    return _frozen(
        h100=h,
        h200=h2,
        b200=b,
        mi300x=mi,
        h200_mem_x=h2["memory_bytes"] / h["memory_bytes"],
        h200_bw_x=h2["bandwidth_gb_per_s"] / h["bandwidth_gb_per_s"],
        b200_mem_x=b["memory_bytes"] / h["memory_bytes"],
        b200_bw_x=b["bandwidth_gb_per_s"] / h["bandwidth_gb_per_s"],
        b200_bf16_x=b["bf16_tflops"] / h["bf16_tflops"],
        mi300x_mem_x=mi["memory_bytes"] / h["memory_bytes"],
        mi300x_bw_x=mi["bandwidth_gb_per_s"] / h["bandwidth_gb_per_s"],
        llama70b_bf16_bytes=weights("llama70b", "bf16")["bytes"],
    )


def _half(g) -> float:
    """Dense 16-bit tensor rate: BF16, or FP16 on cards without BF16 (T4, V100)."""
    return g.peak_tflops.get("bf16") or g.peak_tflops.get("fp16", 0.0)


@lru_cache(maxsize=1)
def tiers() -> MappingProxyType:
    """Per catalog tier: number of cards and the range of memory, bandwidth, bf16 rate and price."""
    out = {}
    for tier in ("datacenter", "workstation", "consumer"):
        gs = [g for g in catalog().gpus if g.tier == tier]
        prices = [g.price_usd for g in gs if g.price_usd]
        out[tier] = _frozen(
            count=len(gs),
            memory_bytes_min=min(g.memory_bytes for g in gs),
            memory_bytes_max=max(g.memory_bytes for g in gs),
            bandwidth_gb_per_s_min=min(g.memory_bandwidth_gb_per_s for g in gs),
            bandwidth_gb_per_s_max=max(g.memory_bandwidth_gb_per_s for g in gs),
            bf16_tflops_min=min(_half(g) for g in gs),
            bf16_tflops_max=max(_half(g) for g in gs),
            tdp_w_min=min(g.tdp_w for g in gs if g.tdp_w),
            tdp_w_max=max(g.tdp_w for g in gs if g.tdp_w),
            price_usd_min=min(prices) if prices else 0.0,
            price_usd_max=max(prices) if prices else 0.0,
        )
    return _frozen(total=len(catalog().gpus), **out)


@lru_cache(maxsize=1)
def interconnect() -> MappingProxyType:
    """NVLink vs PCIe per GPU (catalog), and the time of one ring all-reduce of 8B bf16 gradients.

    Ring all-reduce sends (and receives) 2(n-1)/n x the buffer through each GPU's link (NCCL
    tests, doc/PERFORMANCE.md "bus bandwidth"); the catalog states links as bidirectional
    aggregates (NVLink 4: 900 GB/s), so one direction carries half. Time = bytes sent / one-way
    bandwidth: an ideal lower bound.
    """
    nv, pc = card("h100"), card("h100pcie")
    grad = weights("llama8b", "bf16")["bytes"]
    n = 8
    moved = 2 * (n - 1) / n * grad
    return _frozen(
        nvlink_gb_per_s=nv["interconnect_gb_per_s"],
        pcie_gb_per_s=pc["interconnect_gb_per_s"],
        ratio=nv["interconnect_gb_per_s"] / pc["interconnect_gb_per_s"],
        gpus=n,
        grad_bytes=grad,
        nvlink_s=moved / (nv["interconnect_gb_per_s"] / 2 * 1e9),
        pcie_s=moved / (pc["interconnect_gb_per_s"] / 2 * 1e9),
        hbm_gb_per_s=nv["bandwidth_gb_per_s"],
        hbm_over_nvlink=nv["bandwidth_gb_per_s"] / nv["interconnect_gb_per_s"],
    )


@lru_cache(maxsize=1)
def decode_bound() -> MappingProxyType:
    """Why single-stream decoding is memory-bound.

    Each generated token reads every weight once and does ~2 FLOPs per parameter (Kaplan et al.
    2020, arXiv:2001.08361), so its arithmetic intensity is 2 / bytes-per-parameter FLOP/byte,
    far under the card's ridge point (peak FLOP/s / bandwidth). The upper bound on tokens/s at
    batch 1 is bandwidth / weight bytes.
    """
    from advisor.perf import compute

    w = weights("llama8b", "bf16")
    h, r = card("h100"), card("rtx4090")
    spec = model("llama8b").spec
    est_h = compute.decode_tokens_per_s(spec, gpu("h100"), batch=1, context=2048)
    est_r = compute.decode_tokens_per_s(spec, gpu("rtx4090"), batch=1, context=2048)
    return _frozen(
        bandwidth_efficiency=compute.FLAT_DEFAULTS["decode_bandwidth"],
        est_context=2048,
        h100_est_tok_s=est_h.tokens_per_s,
        rtx4090_est_tok_s=est_r.tokens_per_s,
        intensity=2 / w["bytes_per_param"],
        ridge_h100=h["ridge_bf16"],
        ridge_rtx4090=r["ridge_bf16"],
        weights_bytes=w["bytes"],
        h100_tok_s=h["bandwidth_gb_per_s"] * 1e9 / w["bytes"],
        rtx4090_tok_s=r["bandwidth_gb_per_s"] * 1e9 / w["bytes"],
        h100_fp8_tok_s=h["bandwidth_gb_per_s"] * 1e9 / weights("llama8b", "fp8")["bytes"],
        batch_to_ridge=h["ridge_bf16"] / (2 / w["bytes_per_param"]),
    )


@lru_cache(maxsize=1)
def moe() -> MappingProxyType:
    """Mixtral 8x7B: memory holds every expert, compute uses the active ones."""
    p = params("mixtral")
    return _frozen(
        **p,
        bf16_bytes=weights("mixtral", "bf16")["bytes"],
        int4_bytes=weights("mixtral", "awq")["bytes"],
        kv_per_token=kv_per_token("mixtral"),
        experts=model("mixtral").spec.num_experts,
        top_k=model("mixtral").spec.experts_per_token,
        dense8b_bf16_bytes=weights("llama8b", "bf16")["bytes"],
    )


CTX_SHORT, CTX_LONG = 32 * 1024, 128 * 1024  # the contexts the MoE/MLA/hybrid page compares


@lru_cache(maxsize=1)
def layered() -> MappingProxyType:
    """The guide page on MoE, MLA and hybrid attention (guide/moe-mla-hybrid.md): total vs
    active parameters and routed-expert weights (advisor.arch.models.describe), DeepSeek-V3's KV per
    token stored as MLA's latent against the per-head K and V it stands for, and the KV of the
    windowed models at 32k and 128k against the same layers all global."""
    from dataclasses import replace

    from advisor.arch import models
    from advisor.memory import estimate as memory

    def moe_row(key):
        spec = model(key).spec
        d = models.describe(spec)
        return _frozen(
            name=model(key).display_name,
            total=d["params"],
            active=d["active_params"],
            experts_weights=d["expert_params"],
            active_share=d["active_params"] / d["params"],
            experts=d["experts"],
            top_k=d["experts_per_token"],
            moe_layers=d["moe_layers"],
            dense_layers=d["dense_layers"],
            mtp=d["mtp_params"],
            bf16_bytes=weights(key, "bf16")["bytes"],
            active_bf16_bytes=2 * d["active_params"],
        )

    ds = model("dsv3").spec
    a = ds.stack[0].attention
    latent = memory.kv_cache_bytes_per_token(ds, "bf16")
    # per head, materialised: K (qk_nope + qk_rope) and V (v_head_dim) for every head, bf16
    per_head = ds.num_layers * a.num_heads * (a.head_dim + a.v_head_dim) * 2

    def window_row(key):
        spec = model(key).spec
        d = models.describe(spec)
        unwindowed = replace(
            spec,
            layers=tuple(
                replace(lay, attention=replace(lay.attention, span="full", window=None))
                for lay in spec.stack
            ),
        )
        out = {}
        for name, ctx in (("short", CTX_SHORT), ("long", CTX_LONG)):
            out[f"kv_{name}"] = memory.kv_cache_bytes(spec, ctx, "bf16")
            out[f"full_{name}"] = memory.kv_cache_bytes(unwindowed, ctx, "bf16")
        return _frozen(
            name=model(key).display_name,
            windowed=d["windowed_layers"],
            layers=d["layers"],
            window=d["window_tokens"],
            ratio_short=out["full_short"] / out["kv_short"],
            ratio_long=out["full_long"] / out["kv_long"],
            **out,
        )

    return _frozen(
        dsv3=moe_row("dsv3"),
        qwen3moe=moe_row("qwen3moe"),
        gptoss120=moe_row("gptoss120"),
        mixtral=moe_row("mixtral"),
        dsv3_kv_latent=latent,
        dsv3_kv_per_head=per_head,
        dsv3_kv_ratio=per_head / latent,
        dsv3_kv_lora=a.kv_lora_rank,
        dsv3_rope=a.qk_rope_head_dim,
        dsv3_heads=a.num_heads,
        dsv3_layers=ds.num_layers,
        dsv3_kv_long=memory.kv_cache_bytes(ds, CTX_LONG, "bf16"),
        ctx_short_k=CTX_SHORT // 1024,
        ctx_long_k=CTX_LONG // 1024,
        gemma3=window_row("gemma3"),
        gptoss20=window_row("gptoss20"),
        h100_bytes=gpu("h100").memory_bytes,
        h100_name=gpu("h100").name,
    )


@lru_cache(maxsize=1)
def quant_70b() -> MappingProxyType:
    """Llama 3.1 70B weights by format, against one 80 GB card."""
    return _frozen(
        **{
            f: weights("llama70b", f)["bytes"]
            for f in ("bf16", "fp8", "int8", "awq", "nf4", "nvfp4", "mxfp4")
        },
        h100_bytes=card("h100")["memory_bytes"],
        rtx4090_bytes=card("rtx4090")["memory_bytes"],
    )


@lru_cache(maxsize=1)
def workstation_power() -> MappingProxyType:
    """Four RTX 4090 in one workstation: board power, heat and energy at full load.

    Card power: catalog TDP. Host (CPU, drives, fans, PSU loss) is an assumption of 600 W.
    Heat: 1 W = 3.412 BTU/h (NIST SP 811). Current at 230 V: P / V, against a common 16 A
    circuit (IEC 60884 sockets).
    """
    n, host_w = 4, 600.0
    tdp = card("rtx4090")["tdp_w"]
    total = n * tdp + host_w
    return _frozen(
        gpus=n,
        gpu_w=tdp,
        host_w=host_w,
        total_w=total,
        btu_h=total * BTU_PER_H_PER_W,
        amps_230=total / 230.0,
        circuit_share=total / 230.0 / 16.0,
        kwh_year=total * HOURS_PER_YEAR / 1000.0,
        memory_bytes=n * card("rtx4090")["memory_bytes"],
        rtx6000_tdp_w=card("rtx6000ada")["tdp_w"],
        rtx6000_total_w=n * card("rtx6000ada")["tdp_w"] + host_w,
    )


# ---------------------------------------------------------------------------------------------
# Prices
# ---------------------------------------------------------------------------------------------


@cache
def prices(key: str) -> MappingProxyType:
    """On-demand and spot prices per GPU-hour for one accelerator across the catalog's offers."""
    offers = catalog().offers_for(GPUS.get(key, key))
    od = sorted(o.on_demand_usd_per_gpu_hour for o in offers)
    spot = [o for o in offers if o.spot_usd_per_gpu_hour]
    disc = [1 - o.spot_usd_per_gpu_hour / o.on_demand_usd_per_gpu_hour for o in spot]
    return _frozen(
        offers=len(offers),
        providers=len({o.provider for o in offers}),
        min=od[0] if od else 0.0,
        median=statistics.median(od) if od else 0.0,
        max=od[-1] if od else 0.0,
        spot_offers=len(spot),
        spot_discount_median=statistics.median(disc) if disc else 0.0,
        spot_min=min((o.spot_usd_per_gpu_hour for o in spot), default=0.0),
    )


@lru_cache(maxsize=1)
def spot() -> MappingProxyType:
    """Spot discount (1 - spot / on-demand) over every catalog offer that lists a spot price."""
    offers = [o for o in catalog().offers if o.spot_usd_per_gpu_hour]
    disc = sorted(1 - o.spot_usd_per_gpu_hour / o.on_demand_usd_per_gpu_hour for o in offers)
    return _frozen(
        offers=len(offers),
        providers=len({o.provider for o in offers}),
        median=statistics.median(disc) if disc else 0.0,
        min=disc[0] if disc else 0.0,
        max=disc[-1] if disc else 0.0,
    )


BREAK_EVEN_CARDS = ("rtx4090", "rtx5090", "rtx3090", "rtxa6000", "rtx6000ada", "l40s", "h100")


def _break_even(key: str) -> MappingProxyType:
    c, p = card(key), prices(key)
    hours = c["price_usd"] / p["median"]
    return _frozen(
        name=c["name"],
        tier=c["tier"],
        price_usd=c["price_usd"],
        usd_per_gpu_hour=p["median"],
        offers=p["offers"],
        hours=hours,
        years_full=hours / HOURS_PER_YEAR,
        years_half=hours / (HOURS_PER_YEAR * 0.5),
        months_full=12 * hours / HOURS_PER_YEAR,
    )


@lru_cache(maxsize=1)
def rent_vs_buy() -> MappingProxyType:
    """Simple break-even: hours of median on-demand rent that cost what the card costs.

    break-even hours = card price / hourly price; years at a utilisation u = hours / (8760 u).
    The full TCO (power, hosting, resale) is advisor.money.cost.tco; the budget calculator runs it.
    Rows: every guide card with both a catalog price and cloud offers. Data-centre cards have no
    list price (they are sold through quotes): for the H100 SXM the figures are hours of rent per
    10,000 USD of purchase price and for the catalog's dated street estimate.
    """
    rows = []
    for k in BREAK_EVEN_CARDS:
        if card(k)["price_usd"] and prices(k)["median"]:
            rows.append(_break_even(k))
    ph = prices("h100")
    per = 10_000.0
    g = gpu("h100")
    street = g.price_usd or 0.0  # the catalog's street estimate (price_kind, price_date, source)
    return _frozen(
        rows=tuple(rows),
        first=rows[0],
        h100_usd_per_gpu_hour=ph["median"],
        h100_price_usd=card("h100")["price_usd"],
        h100_price_kind=g.price_kind or "",
        h100_price_date=g.price_date or "",
        h100_street_hours=street / ph["median"],
        h100_street_months=12 * street / ph["median"] / HOURS_PER_YEAR,
        per_usd=per,
        h100_hours_per=per / ph["median"],
        h100_months_per=12 * per / ph["median"] / HOURS_PER_YEAR,
    )


@lru_cache(maxsize=1)
def training_run() -> MappingProxyType:
    """Llama 3.1 8B trained on 1e12 tokens on 8 H100: FLOPs (6ND, Kaplan et al. 2020) and the
    time, MFU and tokens/s of advisor's time model (advisor.perf.training.train_step: FSDP over 8
    GPUs, micro-batch 2 of 4,096 tokens, selective recomputation), with the measured error band
    of training predictions (advisor.perf.accuracy)."""
    from advisor.perf import accuracy, training
    from advisor.perf.parallel import Layout

    tokens, n_gpu = 1e12, 8
    n = params("llama8b")["total"]
    flops = 6 * n * tokens
    st = training.train_step(
        model("llama8b").spec,
        gpu("h100"),
        Layout(dp=n_gpu, micro_batch=2, sharding="zero3"),
        seq=4096,
        precision="bf16",
        checkpointing="selective",
    )
    hours = tokens / st.tokens_per_s / 3600
    seconds = hours * 3600
    p = prices("h100")
    ft_tokens = 1e9  # a fine-tune on one billion tokens
    band = accuracy.band("training")
    return _frozen(
        tokens=tokens,
        ft_tokens=ft_tokens,
        ft_hours=ft_tokens / st.tokens_per_s / 3600,
        gpus=n_gpu,
        mfu=st.mfu,
        flops=flops,
        days=seconds / 86400,
        gpu_hours=hours * n_gpu,
        tokens_per_s=st.tokens_per_s,
        tokens_per_s_per_gpu=st.tokens_per_s_per_gpu,
        cost_usd=hours * n_gpu * p["median"],
        usd_per_gpu_hour=p["median"],
        band=_frozen(**band.to_dict())
        if band
        else _frozen(n=0, median_abs_error=0.0, worst_abs_error=0.0),
    )


# ---------------------------------------------------------------------------------------------
# Validation (bench_results/validation/: advisor's estimates against measured allocations)
# ---------------------------------------------------------------------------------------------

VALIDATION_FILE = Path("bench_results") / "validation" / "memory.json"  # under root()


@lru_cache(maxsize=1)
def validation():
    """The committed estimate-vs-measured table, or None before it exists."""
    path = root() / VALIDATION_FILE
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def validation_rows() -> tuple:
    """One row per validation case of bench_results/validation/memory.json (schema 1).

    Each row: the case name, its setup (task, precision, optimizer, checkpointing, LoRA rank,
    batch, seq, whether shapes ran under FakeTensorMode), the estimated and measured peak
    allocated bytes with the signed error (estimate - measured) / measured, and the worst
    absolute error over the other measured components (weights, gradients, optimizer states...).
    """
    doc = validation()
    if doc is None:
        return ()
    rows = []
    for c in doc["cases"]:
        comps = c["components"]
        peak = comps["peak_allocated_bytes"]
        others = [abs(v["error"]) for k, v in comps.items() if k != "peak_allocated_bytes"]
        st = c["setup"]
        rows.append(
            _frozen(
                case=c["case"],
                family=c.get("family", st.get("family", "")),
                task=st.get("task", ""),
                precision=st.get("precision", ""),
                optimizer=st.get("optimizer", ""),
                checkpointing=st.get("checkpointing", ""),
                lora_rank=st.get("lora_rank", 0),
                batch=st.get("batch", 0),
                seq=st.get("seq", 0),
                fake=bool(st.get("fake", False)),
                gpus=st.get("gpus", 1),
                sharding=st.get("sharding", "ddp"),
                bnb=st.get("optimizer") == "adamw-8bit" or bool(st.get("quant")),
                quant=st.get("quant") or "",
                lora_targets=", ".join(st.get("lora_targets", ())) if st.get("lora_rank") else "",
                method=c.get("method", ""),
                estimated=peak["estimate"],
                measured=peak["measured"],
                error=(peak["estimate"] - peak["measured"]) / peak["measured"],
                component_worst=max(others) if others else 0.0,
            )
        )
    return tuple(rows)


@lru_cache(maxsize=1)
def validation_summary() -> MappingProxyType:
    """Median and worst absolute error of the peak over the validation cases."""
    rows = validation_rows()
    errs = [abs(r["error"]) for r in rows]
    if not errs:
        return _frozen(cases=0, median=0.0, worst=0.0, component_worst=0.0, bound=0.0)
    doc = validation()
    return _frozen(
        families=len({r["family"] for r in rows}),
        cases=len(errs),
        median=statistics.median(errs),
        worst=max(errs),
        component_worst=max(r["component_worst"] for r in rows),
        bound=doc.get("bounds", {}).get("peak_allocated_bytes", 0.0),
        component_bound=doc.get("bounds", {}).get("components", 0.0),
        date=doc.get("date", ""),
        torch=doc.get("environment", {}).get("torch", ""),
    )


def units_note() -> MappingProxyType:
    """GB and GiB as the site uses them (advisor.core.units)."""
    return _frozen(gb=units.GB, gib=units.GIB, ratio=units.GIB / units.GB)


def finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


# --------------------------------------------------------------------------- time model accuracy

THROUGHPUT_FILE = "bench_results/validation/throughput.json"
KIND_ORDER = ("decode", "prefill", "serving", "latency", "training", "matmul", "bandwidth")


@lru_cache(maxsize=1)
def throughput_validation():
    """bench_results/validation/throughput.json (bench/throughput_validation.py), or None."""
    path = root() / THROUGHPUT_FILE
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _workload_text(w: dict) -> str:
    """The published workload in one short line: accelerator x count, TP/PP/DP, precision,
    batch or concurrency, ISL/OSL or seq (only the fields the source stated)."""
    parts = []
    acc = w.get("accelerator") or w.get("accelerator_as_named") or "?"
    parts.append(f"{w['count']} × {acc}" if w.get("count") else acc)
    lay = [
        f"{k} {w[f]}"
        for k, f in (
            ("TP", "tensor_parallel"),
            ("PP", "pipeline_parallel"),
            ("CP", "context_parallel"),
            ("EP", "expert_parallel"),
        )
        if w.get(f) and w.get(f) != 1
    ]
    parts += lay
    prec = w.get("weights") or w.get("precision")
    if prec:
        parts.append(str(prec).upper())  # a format as datasheets write it: FP8, BF16
    if w.get("batch"):
        parts.append(f"b {w['batch']}")
    if w.get("concurrency"):
        parts.append(f"c {w['concurrency']}")
    if w.get("input_tokens") and w.get("output_tokens"):
        parts.append(f"{w['input_tokens']}/{w['output_tokens']}")
    elif w.get("input_tokens"):
        parts.append(f"in {w['input_tokens']}")
    elif w.get("seq"):
        parts.append(f"seq {w['seq']}")
    return ", ".join(parts)


@lru_cache(maxsize=1)
def throughput_rows() -> tuple:
    """One row per published measurement the model can express (validation and calibration
    roles), in kind order: id, kind, role, half (fit / check), model, workload line, metric,
    measured, predicted, signed error, source URL and title."""
    doc = throughput_validation()
    if doc is None:
        return ()
    rows = []
    for r in doc["entries"]:
        if not r["expressible"] or r["role"] == "derived":
            continue
        w = r["workload"]
        rows.append(
            _frozen(
                id=r["id"],
                kind=r["kind"],
                role=r["role"],
                half=r.get("half") or "",
                model=w.get("model") or w.get("model_hf") or "",
                workload=_workload_text(w),
                metric=r["metric"],
                measured=r["measured"],
                predicted=r["predicted"],
                error=r["error"],
                url=r["source"]["url"],
                title=r["source"].get("title") or r["source"]["url"],
            )
        )
    order = {k: i for i, k in enumerate(KIND_ORDER)}
    rows.sort(key=lambda x: (order.get(x["kind"], 99), x["role"] != "validation", x["id"]))
    return tuple(rows)


@lru_cache(maxsize=1)
def throughput_unexpressed() -> MappingProxyType:
    """The published measurements the model cannot express (`rows`: id, kind, the English reason,
    its key and params for the page's translation `tv.reason.<key>`, source URL) and how many
    (`count`)."""
    doc = throughput_validation()
    rows = tuple(
        _frozen(
            id=r["id"],
            kind=r["kind"],
            reason=r["reason"],
            key=r.get("reason_key") or "other",
            params=MappingProxyType(dict(r.get("reason_params") or {})),
            url=r["source"]["url"],
        )
        for r in (doc["entries"] if doc else ())
        if not r["expressible"]
    )
    return _frozen(count=len(rows), rows=rows)


@lru_cache(maxsize=1)
def throughput_summary() -> MappingProxyType:
    """The validation summary: entries, roles, per-kind median / worst |error|, the held-out
    half, the targets, and the fitted stack fractions."""
    doc = throughput_validation()
    if doc is None:
        return _frozen(entries=0)
    s = doc["summary"]
    kinds = [_frozen(kind=k, **s["by_kind"][k]) for k in (*KIND_ORDER, "all") if k in s["by_kind"]]
    return _frozen(
        entries=s["entries"],
        validation=s["validation_entries"],
        calibration=s["calibration"],
        derived=s["derived"],
        not_expressible=s["not_expressible"],
        kinds=tuple(kinds),
        all=_frozen(**s["by_kind"]["all"]),
        held_out=_frozen(**s["held_out"]) if s.get("held_out") else None,
        target_median=s["targets"]["median_abs_error"],
        target_worst=s["targets"]["worst_abs_error"],
        median_met=s["targets"]["median_met"],
        worst_met=s["targets"]["worst_met"],
        stack=_frozen(**doc["model"]["stack"]),
        date=doc["generated_utc"][:10],
        # the 2025-26 part (bench/published entries with `period: 2025-26`) and the
        # whole-source hold-out (a refit without each source family), where the JSON has them
        period=_frozen(
            **{k: v for k, v in s["period_2025_26"].items() if k != "unanswered_by_reason"}
        )
        if s.get("period_2025_26", {}).get("entries")
        else None,
        holdout=tuple(
            _frozen(family=f, held=_frozen(**v["held_out"]), seen=_frozen(**v["committed_fit"]))
            for f, v in s["source_holdout"]["families"].items()
        )
        if s.get("source_holdout")
        else (),
    )
