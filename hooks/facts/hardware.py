"""Accelerators: cards, tiers, interconnects, decode bounds, power (tiers, multi-GPU, why-hardware pages, FAQ).

Part of hooks/facts/ (the guide's figures; see its __init__)."""

from __future__ import annotations

from functools import cache, lru_cache
from types import MappingProxyType

from advisor.core import units

from . import serving_memory as _serving_memory
from . import sizes as _sizes
from .common import BTU_PER_H_PER_W, HOURS_PER_YEAR, _frozen, catalog, gpu, model


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


@cache
def system(system_id: str) -> MappingProxyType:
    """One catalog/systems document as the prose cites it (issue 34: a rack or a desktop box
    bought whole): price (0 where not priced) and its reported range, whole power in kW,
    cooling, CPUs, rack units."""
    s = next(x for x in catalog().systems if x.id == system_id)
    lo, hi = s.system_usd_range or (0.0, 0.0)
    return _frozen(
        name=s.name,
        gpus=s.gpus,
        price_usd=s.system_usd or 0.0,
        price_low_usd=lo,
        price_high_usd=hi,
        kw=(s.system_power_w or 0.0) / 1000,
        cooling=s.cooling or "",
        cpus=s.cpus or 0,
        rack_units=s.rack_units or 0,
        max_systems=s.max_systems or 0,
    )


@lru_cache(maxsize=1)
def systems_ranked() -> MappingProxyType:
    """What the picker (advisor.advice.recommend, owning only, formats searched) says of racks
    and boxes for Llama 3.1 70B at a 4096-token context: 2048 requests in flight on up to 72 GPUs
    (the GB200 NVL72 rack's row: tokens/s, its own cost per million tokens over 36 months, its
    rank among the candidates that fit) and one user on the unified-memory boxes (tokens/s per
    user, the box's rank)."""
    from advisor.advice import recommend as rec

    spec = model("llama70b").spec
    many = rec.Workload(
        model=spec,
        batch=2048,
        seq=4096,
        max_gpus=72,
        acquire="own",
        formats=("bf16", "fp8", "nvfp4", "mxfp4", "awq"),
    )
    rows = [r for r in rec.ranked_rows(many, catalog()) if r["ok"]]
    rack_row = next(r for r in rows if r["gpu_id"] == "gb200" and r["count"] == 72)
    one = rec.Workload(
        model=spec,
        batch=1,
        seq=4096,
        max_gpus=1,
        acquire="own",
        tiers=("workstation",),
        formats=("bf16", "fp8", "nvfp4", "mxfp4", "awq"),
    )
    solo = [r for r in rec.ranked_rows(one, catalog()) if r["ok"]]
    box = {r["gpu_id"]: r for r in solo}
    first = solo[0]
    return _frozen(
        users=many.batch,
        seq=many.seq,
        rack_rank=rack_row["rank"],
        fitting=len(rows),
        rack_tokens_s=rack_row["tokens_per_s"],
        rack_per_million=rack_row["own_per_million_tokens"],
        rack_cost=rack_row["own_cost"],
        rack_weights=str(rack_row["weights"]).upper(),
        months=many.horizon_months,
        box_first=first["gpu_name"],
        box_first_tokens_s=first["tokens_per_s_per_user"],
        box_first_weights=str(first["weights"]).upper(),
        m3_tokens_s=box["m3-ultra"]["tokens_per_s_per_user"] if "m3-ultra" in box else 0.0,
        spark_tokens_s=box["dgx-spark"]["tokens_per_s_per_user"] if "dgx-spark" in box else 0.0,
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
        nvfp4=_sizes.weights("llama70b", "nvfp4"),
        mxfp4=_sizes.weights("llama70b", "mxfp4"),
        fp8=_sizes.weights("llama70b", "fp8"),
        bf16=_sizes.weights("llama70b", "bf16"),
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
        llama70b_bf16_bytes=_sizes.weights("llama70b", "bf16")["bytes"],
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
    grad = _sizes.weights("llama8b", "bf16")["bytes"]
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
    from advisor.perf import efficiency, timing

    w = _sizes.weights("llama8b", "bf16")
    h, r = card("h100"), card("rtx4090")
    spec = model("llama8b").spec

    def estimate(g):
        """The kernel-level decode step at batch 1 (advisor.perf.timing, as every serving
        figure) and the share of the stated bandwidth it streams at."""
        dev = timing.Device.of(g, timing.weight_peak_key(g, "bf16"))
        step = timing.decode_step_time(
            spec,
            dev,
            efficiency.DEFAULT_STACK,
            batch=1,
            context=2048,
            weights="bf16",
            kv_bytes=timing.KV_BYTES["bf16"],
            tp=1,
            tp_fabric=None,
        )
        share = dev.bandwidth * dev.decode_bandwidth / timing.bandwidth_bytes_per_s(g)
        return 1 / step["seconds"], share

    est_h, share_h = estimate(gpu("h100"))
    est_r, share_r = estimate(gpu("rtx4090"))
    return _frozen(
        h100_bandwidth_efficiency=share_h,
        rtx4090_bandwidth_efficiency=share_r,
        est_context=2048,
        h100_est_tok_s=est_h,
        rtx4090_est_tok_s=est_r,
        intensity=2 / w["bytes_per_param"],
        ridge_h100=h["ridge_bf16"],
        ridge_rtx4090=r["ridge_bf16"],
        weights_bytes=w["bytes"],
        h100_tok_s=h["bandwidth_gb_per_s"] * 1e9 / w["bytes"],
        rtx4090_tok_s=r["bandwidth_gb_per_s"] * 1e9 / w["bytes"],
        h100_fp8_tok_s=h["bandwidth_gb_per_s"] * 1e9 / _sizes.weights("llama8b", "fp8")["bytes"],
        batch_to_ridge=h["ridge_bf16"] / (2 / w["bytes_per_param"]),
    )


@lru_cache(maxsize=1)
def moe() -> MappingProxyType:
    """Mixtral 8x7B: memory holds every expert, compute uses the active ones."""
    p = _sizes.params("mixtral")
    return _frozen(
        **p,
        bf16_bytes=_sizes.weights("mixtral", "bf16")["bytes"],
        int4_bytes=_sizes.weights("mixtral", "awq")["bytes"],
        kv_per_token=_serving_memory.kv_per_token("mixtral"),
        experts=model("mixtral").spec.num_experts,
        top_k=model("mixtral").spec.experts_per_token,
        dense8b_bf16_bytes=_sizes.weights("llama8b", "bf16")["bytes"],
    )


CTX_SHORT, CTX_LONG = 32 * 1024, 128 * 1024  # the contexts the MoE/MLA/hybrid page compares


DECODE_BATCH = 64  # the guide's "many users" decode batch (moe-mla-hybrid page)


@lru_cache(maxsize=1)
def layered() -> MappingProxyType:
    """The guide page on MoE, MLA and hybrid attention (guide/moe-mla-hybrid.md): total vs
    active parameters and routed-expert weights (advisor.arch.models.describe), DeepSeek-V3's KV per
    token stored as MLA's latent against the per-head K and V it stands for, and the KV of the
    windowed models at 32k and 128k against the same layers all global."""
    from dataclasses import replace

    from advisor.arch import flops, models
    from advisor.memory import estimate as memory
    from advisor.perf import timing

    h100 = gpu("h100")
    bw = h100.memory_bandwidth_gb_per_s * 1e9

    def moe_row(key):
        spec = model(key).spec
        d = models.describe(spec)
        read_1 = timing.decode_weight_bytes(spec, "bf16", 1)
        read_64 = timing.decode_weight_bytes(spec, "bf16", DECODE_BATCH)
        return _frozen(
            # training compute per token: 6 x the parameters that multiply (Kaplan et al. 2020),
            # the active ones; the same total held by a dense model would cost the total
            train_flops_token=6 * flops.matmul_params(spec, active=True),
            train_flops_token_dense=6 * flops.matmul_params(spec, active=False),
            # decode: the weight bytes one step reads (experts the batch touches) and the time
            # to stream them from one H100's memory, the floor of a step's time
            read_1=read_1,
            read_64=read_64,
            read_1_ms=read_1 / bw * 1e3,
            read_64_ms=read_64 / bw * 1e3,
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
            bf16_bytes=_sizes.weights(key, "bf16")["bytes"],
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
        h100_bytes=h100.memory_bytes,
        h100_name=h100.name,
        h100_bw=h100.memory_bandwidth_gb_per_s,
        decode_batch=DECODE_BATCH,
    )


@lru_cache(maxsize=1)
def quant_70b() -> MappingProxyType:
    """Llama 3.1 70B weights by format, against one 80 GB card."""
    return _frozen(
        **{
            f: _sizes.weights("llama70b", f)["bytes"]
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
