"""The kernel-level time model: collectives, layouts, GEMM roofline, serving, training steps,
cluster plans, and the published-measurement validation that guards them."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from advisor.core.errors import AdvisorError
from advisor.data import achievable, fabrics
from advisor.data.catalog import load_catalog
from advisor.perf import cluster, network, serving, timing, training
from advisor.perf import efficiency as eff
from advisor.perf.parallel import Layout

ROOT = Path(__file__).resolve().parent.parent
CAT = load_catalog()
H100 = CAT.gpu("h100-sxm")
A100 = CAT.gpu("a100-80gb-sxm")
L8B = CAT.model("llama-3.1-8b").spec
L70B = CAT.model("llama-3.1-70b").spec
L405B = CAT.model("llama-3.1-405b").spec
IB = CAT.network("ib-ndr-400")


# --- collectives (alpha-beta) ---------------------------------------------------------------

FAB = network.Fabric("f", "f", "intra", gb_per_s_per_gpu=100.0, latency_us=10.0, bus_efficiency=1.0)


def test_collectives_by_hand():
    # ring all-reduce of 1 GB over 4 ranks: 2*3 steps of 10 us + 2*3/4 * 1e9 / 1e11 s
    assert network.allreduce_time(1e9, 4, FAB) == pytest.approx(6 * 10e-6 + 0.015)
    assert network.gather_time(1e9, 4, FAB) == pytest.approx(3 * 10e-6 + 0.0075)
    assert network.alltoall_time(1e9, 4, FAB) == pytest.approx(3 * 10e-6 + 0.0075)
    assert network.p2p_time(1e9, FAB) == pytest.approx(10e-6 + 0.01)
    assert network.allreduce_time(1e9, 1, FAB) == 0.0
    slow = replace(FAB, id="s", kind="inter", gb_per_s_per_gpu=10.0)
    # hierarchical: 2 gathers in the node of 8, then 1/8 of the buffer across 4 nodes
    want = 2 * network.gather_time(1e9, 8, FAB) + network.allreduce_time(1e9 / 8, 4, slow)
    assert network.hierarchical_allreduce_time(1e9, 8, 4, FAB, slow) == pytest.approx(want)
    assert network.slowest(FAB, slow) is slow


def test_inference_allreduce_is_one_or_two_shot_on_nvlink_and_a_ring_over_pcie():
    # one-shot: alpha + (n-1) * bytes / bw; two-shot: 2 alpha + 2(n-1)/n * bytes / bw
    small, big = 64e3, 64e6
    assert network.tp_allreduce_time(small, 8, FAB) == pytest.approx(10e-6 + 7 * small / 1e11)
    assert network.tp_allreduce_time(big, 8, FAB) == pytest.approx(20e-6 + 1.75 * big / 1e11)
    assert network.tp_allreduce_time(small, 8, FAB) < network.allreduce_time(small, 8, FAB)
    pcie = replace(FAB, id="p", name="pcie4")
    assert network.tp_allreduce_time(small, 4, pcie) == network.allreduce_time(small, 4, pcie)
    assert network.tp_allreduce_time(small, 1, FAB) == 0.0


def test_a_kernel_without_grouped_kv_reads_the_cache_once_per_query_head():
    assert serving.kv_reads(L70B) == 1
    assert serving.kv_reads(L70B, grouped_kv_kernel=False) == L70B.num_heads // L70B.num_kv_heads
    mha = CAT.model("llama-2-7b").spec
    assert serving.kv_reads(mha, grouped_kv_kernel=False) == 1  # MHA: nothing to share
    kw = dict(concurrency=64, input_tokens=128, output_tokens=2048, weights="fp8", kv_dtype="fp8")
    grouped = serving.point(L70B, CAT.gpu("h200"), engine="trtllm", **kw)
    per_head = serving.point(L70B, CAT.gpu("h200"), engine="trtllm", grouped_kv_kernel=False, **kw)
    # TensorRT-LLM's XQA blog: 2.4x the throughput once the group shares its KV reads
    assert 1.5 < grouped.tokens_per_s / per_head.tokens_per_s < 3.5


def test_unfused_attention_costs_the_score_matrix_traffic():
    stack = eff.DEFAULT_STACK
    dev = timing.Device.of(A100, "bf16", stack)
    old = timing.Device.of(A100, "bf16", replace(stack, fused_attention=False))
    spec = CAT.model("llama-2-7b").spec
    a_f, a_b = timing.unfused_attention_times(spec, old, seqs=4, seq=2048, tp=1)
    scores = 4 * spec.num_heads * 2048 * 2048 * 2  # bytes of the 16-bit score matrices
    flops = 4 * 4 * 2048 * 2048 * spec.q_dim
    assert a_f == pytest.approx(
        flops / old.matmul_flops + 4 * scores / old.bandwidth + 3 * old.kernel_s
    )
    assert a_b == pytest.approx(
        2 * flops / old.matmul_flops + 6 * scores / old.bandwidth + 5 * old.kernel_s
    )
    kw = dict(tokens=8192, seq=2048, tp=1, ep=1, tp_fabric=None, ep_fabric=None)
    fused = timing.train_layer(spec, dev, **kw)
    unfused = timing.train_layer(spec, old, **kw)
    assert unfused.attention_fwd > 2 * fused.attention_fwd
    assert unfused.gemm_fwd == fused.gemm_fwd


def test_validation_gives_2021_megatron_its_own_stack():
    from bench import throughput_validation as tv

    notes: list[str] = []
    st = tv._software_stack("Megatron-LM (PTD-P, interleaved schedule per paper)", notes)
    assert not st.fused_attention and st.tp_overlap == 0.0 and notes
    assert tv._software_stack("NeMo 24.07 container", []) is eff.DEFAULT_STACK


def test_validation_knows_which_tensorrt_llm_releases_predate_xqa():
    from bench import throughput_validation as tv

    assert tv._trtllm_before_xqa("TensorRT-LLM v0.5.0, TensorRT v9.1.0.4")
    assert tv._trtllm_before_xqa("TensorRT-LLM v0.6.1 (gptSessionBenchmark)")
    assert not tv._trtllm_before_xqa("TensorRT-LLM 0.17, trtllm-bench")
    assert not tv._trtllm_before_xqa("TensorRT-LLM 1.0")
    assert not tv._trtllm_before_xqa(None)


def test_intra_node_fabric_halves_the_bidirectional_figure():
    f = network.intra_node_fabric(H100)  # NVLink 4: 900 GB/s both ways
    assert f.gb_per_s_per_gpu == pytest.approx(450.0)
    assert network.intra_node_fabric(CAT.gpu("l40s")).latency_us > f.latency_us  # PCIe


def test_fabric_documents_are_validated():
    with pytest.raises(AdvisorError) as e:
        fabrics.fabric_from_dict({"id": "x", "name": "x", "kind": "wan"}, "networks/x.yaml")
    assert "networks/x.yaml" in str(e.value)
    doc = {
        "id": "x",
        "name": "x",
        "kind": "inter",
        "gb_per_s_per_gpu": 50,
        "latency_us": 10,
        "source": {"url": "javascript:alert(1)"},
    }
    with pytest.raises(AdvisorError) as e:
        fabrics.fabric_from_dict(doc, "networks/x.yaml")
    assert e.value.field == "source.url"


# --- layouts ----------------------------------------------------------------------------


def test_layout_spans_and_bubble():
    lay = Layout(tp=8, pp=16, dp=64, micro_batches=32, virtual_stages=2).validated()
    assert lay.gpus == 8192 and lay.nodes == 1024
    assert lay.tp_span() == (8, 1)  # TP inside the node
    assert lay.pp_crosses_nodes()
    assert lay.dp_span() == (1, 64)  # one rank per node
    assert lay.bubble_fraction() == pytest.approx(15 / (2 * 32))  # (p-1)/(v*m)
    with pytest.raises(AdvisorError) as e:
        Layout(tp=16, gpus_per_node=8).validated()
    assert e.value.key == "layout.tp_node"
    with pytest.raises(AdvisorError):
        Layout(tp=8, dp=3, ep=2).validated()  # EP must divide DP


# --- kernels ---------------------------------------------------------------------------


def test_gemm_time_is_a_roofline_plus_a_kernel_cost():
    dev = timing.Device(
        matmul_flops=100e12,
        peak16_flops=100e12,
        bandwidth=1e12,
        kernel_s=1e-6,
        attention_fwd=0.5,
        attention_bwd=0.5,
        decode_bandwidth=1.0,
    )
    # big square GEMM: compute-bound, 2*4096^3 / 1e14
    assert timing.gemm_time(4096, 4096, 4096, dev) == pytest.approx(2 * 4096**3 / 1e14 + 1e-6)
    # GEMV (m = 1): memory-bound on the 4096x4096 bf16 weight
    t = timing.gemm_time(1, 4096, 4096, dev)
    assert t == pytest.approx((4096 + 4096) * 2 / 1e12 + 4096 * 4096 * 2 / 1e12 + 1e-6)
    # int4 weights read a quarter of the bytes, at the dequantisation factor
    t4 = timing.gemm_time(1, 4096, 4096, dev, weight_bytes=0.5, dequant=0.5)
    assert t4 < t


# DeepGEMM's published FP8 grouped GEMMs for MoE models (README "Performance", 2025: "We test
# all shapes potentially used in DeepSeek-V3/R1 inference ... on H800 with NVCC 12.8";
# https://github.com/deepseek-ai/DeepGEMM, read 2026-12-06): (layout, groups, M per group, N,
# K, measured TFLOPS). Stated assumption: an H800 SXM has the H100 SXM's SMs, FP8 tensor cores
# and HBM3 (3.35 TB/s); only its NVLink is narrower, which a one-GPU GEMM does not use.
DEEPGEMM_GROUPED_H800 = (
    ("contiguous", 4, 8192, 4096, 7168, 1297),
    ("contiguous", 4, 8192, 7168, 2048, 1099),
    ("contiguous", 8, 4096, 4096, 7168, 1288),
    ("contiguous", 8, 4096, 7168, 2048, 1093),
    ("masked", 1, 1024, 4096, 7168, 1233),
    ("masked", 1, 1024, 7168, 2048, 925),
    ("masked", 2, 512, 4096, 7168, 1040),
    ("masked", 2, 512, 7168, 2048, 916),
    ("masked", 4, 256, 4096, 7168, 932),
    ("masked", 4, 256, 7168, 2048, 815),
)


def test_grouped_expert_gemms_match_deepgemms_published_moe_shapes():
    """timing.grouped_gemm_time (the routed experts' kernel) against DeepGEMM's measured FP8
    grouped GEMMs at DeepSeek-V3's expert shapes, from 256 to 8192 rows per expert: each within
    20 % of the measured time, median within 10 %. The roofline with the catalog's achievable
    FP8 and bandwidth ceilings already carries what a grouped kernel reaches at these M per
    expert, so TensorRT-LLM's MoE serving gap (50-200 % before the fitted
    efficiency.Stack.trtllm_moe_factor) is not the grouped GEMM's efficiency (issue 35)."""
    dev = timing.Device.of(H100, timing.matmul_peak_key(H100, "fp8"))
    ratios = []
    for _layout, groups, m, n, k, tflops in DEEPGEMM_GROUPED_H800:
        measured_s = 2.0 * groups * m * n * k / (tflops * 1e12)
        predicted_s = timing.grouped_gemm_time(groups, m, k, n, dev, weight_bytes=1.0, dequant=1.0)
        ratios.append(predicted_s / measured_s)
        assert 0.8 <= predicted_s / measured_s <= 1.2, (groups, m, n, k)
    assert abs(math.log(sorted(ratios)[len(ratios) // 2])) <= 0.10


def test_decode_is_bandwidth_bound_and_quantised_weights_decode_faster():
    rates = {
        w: serving.point(
            L8B, H100, concurrency=1, input_tokens=128, output_tokens=128, weights=w
        ).tokens_per_s
        for w in ("bf16", "int8", "int4")
    }
    assert rates["bf16"] < rates["int8"] < rates["int4"]
    # batch 1 bf16: within the bandwidth roofline (16 GB of weights at 3.35 TB/s)
    ceiling = H100.memory_bandwidth_gb_per_s * 1e9 / (2 * 8.03e9)
    assert 0.5 * ceiling < rates["bf16"] < ceiling


# --- serving -------------------------------------------------------------------------------


def test_serving_curve_trades_latency_for_throughput():
    p = serving.plan(L8B, H100, input_tokens=1024, output_tokens=256)
    assert p.max_concurrency == min(p.kv_limited_concurrency, serving.MAX_NUM_SEQS)
    tps = [x.tokens_per_s for x in p.points]
    tpot = [x.tpot_s for x in p.points]
    assert tps == sorted(tps) and tpot == sorted(tpot)
    assert all(x.tokens_per_s_per_user == pytest.approx(1 / x.tpot_s) for x in p.points)
    best = p.best_under(tpot_s=p.points[2].tpot_s)
    assert best is not None and best.tpot_s <= p.points[2].tpot_s
    # a tighter latency limit never allows more throughput
    tighter = p.best_under(tpot_s=p.points[1].tpot_s)
    assert tighter.tokens_per_s <= best.tokens_per_s


def test_serving_refuses_encoders_and_contexts_past_the_model():
    bert = CAT.model("bert-base-uncased").spec
    with pytest.raises(AdvisorError) as e:
        serving.point(bert, H100, concurrency=1, input_tokens=128, output_tokens=16)
    assert e.value.key == "serving.encoder"
    with pytest.raises(AdvisorError) as e:
        serving.point(L8B, H100, concurrency=1, input_tokens=130_000, output_tokens=2000)
    assert e.value.key == "seq.too_long"


def test_kv_cache_limits_concurrency_and_trtllm_plans_more_room():
    vllm = serving.max_concurrency(
        L70B, H100, input_tokens=128, output_tokens=2048, weights="fp8", kv_dtype="fp8"
    )
    trt = serving.max_concurrency(
        L70B,
        H100,
        input_tokens=128,
        output_tokens=2048,
        weights="fp8",
        kv_dtype="fp8",
        engine="trtllm",
    )
    assert 0 < vllm < trt


# --- training ---------------------------------------------------------------------------


def test_training_step_is_sane_across_scales():
    one = training.train_step(L8B, H100, Layout(micro_batch=1), seq=4096, checkpointing="full")
    assert 0.2 < one.mfu < 0.7
    eight = training.train_step(
        L8B, H100, Layout(dp=8, sharding="zero3"), seq=4096, checkpointing="full"
    )
    assert eight.tokens_per_s > 6 * one.tokens_per_s  # near-linear on one node
    big = training.train_step(
        L405B,
        H100,
        Layout(tp=8, pp=16, dp=64, micro_batches=32, virtual_stages=2, sharding="zero1"),
        seq=8192,
        inter=IB,
    )
    assert 0.25 < big.mfu < 0.6
    assert big.parts_s["bubble"] > 0 and big.parts_s["tp_comm"] > 0
    for part in big.parts_s.values():
        assert math.isfinite(part) and part >= 0


def test_training_layout_errors_are_named():
    with pytest.raises(AdvisorError) as e:
        training.train_step(L8B, H100, Layout(tp=8, dp=2), seq=4096)
    assert e.value.key == "layout.needs_network"
    with pytest.raises(AdvisorError) as e:
        training.train_step(L8B, H100, Layout(ep=2, dp=2), seq=4096)
    assert e.value.key == "layout.ep_experts"
    with pytest.raises(AdvisorError) as e:
        training.train_step(L8B, H100, Layout(tp=3), seq=4096)
    assert e.value.key == "layout.heads"


# --- cluster plans ---------------------------------------------------------------------------


def test_cluster_plan_meets_a_deadline_with_the_fewest_gpus():
    p = cluster.plan(
        L70B,
        H100,
        tokens=int(2e12),
        seq=8192,
        deadline_hours=24 * 30,
        network=IB,
        price_usd_per_gpu_hour=2.5,
    )
    assert p.chosen is not None and p.chosen.meets_deadline
    faster = [o for o in p.options if o.meets_deadline]
    assert p.chosen.gpus == min(o.gpus for o in faster)
    assert p.chosen.memory_per_gpu_bytes <= H100.memory_bytes
    assert p.chosen.cost_usd == pytest.approx(p.chosen.gpu_hours * 2.5)
    assert p.chosen.energy_kwh == pytest.approx(p.chosen.gpu_hours * 700 * 1.2 / 1000)
    hours = [o.hours for o in p.options]
    assert hours == sorted(hours, reverse=True)  # more GPUs, sooner


def test_cluster_plan_without_a_network_stays_in_one_node_and_says_so():
    p = cluster.plan(L405B, H100, tokens=int(1e12), seq=8192)
    assert p.chosen is None and "network" in p.reason
    small = cluster.plan(CAT.model("gpt2-124m").spec, H100, tokens=int(1e9), seq=1024)
    assert small.chosen is not None and small.chosen.gpus <= 8


# --- efficiency catalog -----------------------------------------------------------------------


def test_achievable_ceilings_come_from_the_catalog_with_sources():
    a = H100.achievable
    assert a.matmul("bf16") == pytest.approx(794.5 / 989.4, rel=1e-3)  # stas00 MAMF table
    assert a.sources["matmul_tflops.bf16"].startswith("https://")
    rtx = CAT.gpu("rtx-4090").achievable
    assert "median of measured nvidia" in rtx.source
    with pytest.raises(AdvisorError):
        achievable.achievable_from_dict(
            {"id": "h100-sxm", "matmul_tflops": {"bf16": 2000}}, "x", H100
        )
    with pytest.raises(AdvisorError):
        achievable.achievable_from_dict({"id": "h100-sxm", "typo": 1}, "x", H100)


def test_blackwell_ultra_fp4_ceiling_is_its_own_and_leaves_its_peers_alone():
    """GB300/B300 store one measured figure, CUTLASS's SM103 FP4 GEMM at 8.342 PFLOP/s
    (ThunderKittens' B300 NVFP4 handoff, M=N=8192, K=33024): a fraction of each card's own dense
    FP4 peak. A card that measured only FP4 takes the NVIDIA medians for its 16-bit and FP8
    rates and its peers' bandwidth, and does not enter those medians (issue 35)."""
    gb300, b300, gb200 = (CAT.gpu(g).achievable for g in ("gb300", "b300", "gb200"))
    assert gb300.matmul("fp4") == pytest.approx(8342.0 / 15000.0, rel=1e-6)
    assert b300.matmul("fp4") == pytest.approx(8342.0 / 13125.0, rel=1e-6)
    assert gb300.sources["matmul_tflops.fp4"].startswith("https://github.com/HazyResearch/")
    # its other rates are the unmeasured NVIDIA card's (GB200's), its fp4 is not theirs
    assert gb300.matmul("bf16") == pytest.approx(gb200.matmul("bf16"))
    assert gb300.matmul("fp8") == pytest.approx(gb200.matmul("fp8"))
    assert gb300.bandwidth_fraction == pytest.approx(gb200.bandwidth_fraction)
    assert "gb300" not in gb200.peers and "b300" not in gb200.peers
    # GB200's FP4 stays its 16-bit fraction (Achievable.matmul's convention)
    assert gb200.matmul("fp4") == pytest.approx(gb200.matmul("bf16"))


def test_b200_fp4_ceiling_is_measured_and_stays_its_own():
    """B200 stores cuBLAS's NVFP4 GEMM at M=N=K=8192, 5,589.8 TFLOP/s (triton-lang/triton PR
    9697): 0.621 of its 9,000 dense FP4 peak, not the 0.776 of its bf16 MAMF that FP4 took
    before. A measured FP4 fraction never enters a peer's median (achievable.OWN_ONLY): GB200,
    the GeForce and RTX PRO Blackwell cards keep their 16-bit median for FP4 (issue 35)."""
    b200 = CAT.gpu("b200").achievable
    assert b200.matmul("fp4") == pytest.approx(5589.8 / 9000.0, rel=1e-6)
    assert b200.basis_of("fp4") == "measured"
    assert b200.sources["matmul_tflops.fp4"] == "https://github.com/triton-lang/triton/pull/9697"
    assert b200.matmul("bf16") == pytest.approx(1745.0 / 2250.0, rel=1e-6)
    for gid in ("gb200", "rtx-5090", "rtx-pro-6000-blackwell", "dgx-spark"):
        a = CAT.gpu(gid).achievable
        assert "b200" in a.peers
        assert a.matmul("fp4") == pytest.approx(a.matmul("bf16")), gid


def test_tpu_apple_and_trainium_ceilings_are_measured_a_median_or_a_stated_search():
    """Issue 34: TPU v5e (JAX's Pallas matmul guide: XLA bf16 8192^3 at 181.8 TFLOP/s of 197),
    v6e (gpu-tpu-pedia, trace-timed: 728 of 918) and TPU7x (Google's accelerator-microbenchmarks:
    956.38 TFLOP/s per logical device, 2 per chip, of 2307; an 8 GiB HBM copy at 6421 GB/s of
    7370) are measured; v5p, unmeasured, takes the Google median, its band the three's spread;
    Trainium2, the only AWS card, keeps the assumption and its file says where a measurement was
    sought. M3 Ultra's own fp16 figure (MLX, 17.4 of 28 TFLOPS) stands for its bf16 too, not the
    M4 Max's 0.92."""
    ids = ("tpu-v5e", "tpu-v6e", "tpu-7x")
    v5e, v6e, tpu7x = (CAT.gpu(g).achievable for g in ids)
    assert v5e.matmul("bf16") == pytest.approx(181.8 / 197.0, rel=1e-6)
    assert v6e.matmul("bf16") == pytest.approx(728.0 / 918.0, rel=1e-6)
    assert tpu7x.matmul("bf16") == pytest.approx(2 * 956.38 / 2307.0, rel=1e-4)
    assert tpu7x.bandwidth_fraction == pytest.approx(6421.0 / 7370.0, rel=1e-6)
    v5p = CAT.gpu("tpu-v5p").achievable
    assert v5p.peers == tuple(sorted(ids)) and "median of measured google" in v5p.source
    band = sorted(a.matmul("bf16") for a in (v5e, v6e, tpu7x))
    assert v5p.matmul("bf16") == pytest.approx(band[1]) and band[0] < band[1] < band[2]
    trn2 = CAT.gpu("trainium2").achievable
    assert trn2.source == "assumed" and not trn2.matmul_fraction and not trn2.peers
    assert trn2.sources == {"searched": "catalog/efficiency/trainium2.yaml"}
    assert trn2.matmul("bf16") == achievable.FALLBACK_MATMUL_FRACTION
    m3u, m4max = CAT.gpu("m3-ultra").achievable, CAT.gpu("m4-max").achievable
    assert m3u.matmul("bf16") == m3u.matmul("fp16") == pytest.approx(17.4 / 28.0)
    assert m4max.matmul("bf16") == pytest.approx(13.18 / 14.3)
    assert m4max.bandwidth_fraction == pytest.approx(396.0 / 546.0)


def test_each_ceiling_says_whether_it_is_measured_a_median_or_the_assumption():
    """Issue 34: a card with a measured matmul and no measured bandwidth (TPU v5e, MI325X, B200)
    runs at the assumed FALLBACK_BANDWIDTH_FRACTION, and its page said "the median of its
    vendor's measured cards". `basis_of` names each figure's origin and the hardware page
    (hooks/sitedata.SiteData.achievable) shows it figure by figure, naming the band's cards
    whose bandwidth is the assumption."""
    from hooks.sitedata import SiteData

    v5e, h200, v5p = (CAT.gpu(g).achievable for g in ("tpu-v5e", "h200", "tpu-v5p"))
    assert v5e.bandwidth_fraction == achievable.FALLBACK_BANDWIDTH_FRACTION
    assert (v5e.basis_of("bf16"), v5e.basis_of("bandwidth")) == ("measured", "assumed")
    # H200 measured fp8 and bandwidth; its bf16 is the NVIDIA median
    assert (h200.basis_of("fp8"), h200.basis_of("bf16")) == ("measured", "median")
    assert h200.basis_of("bandwidth") == "measured"
    # v5p's bandwidth is a median over peers of which one (TPU7x) measured it
    assert (v5p.basis_of("bf16"), v5p.basis_of("bandwidth")) == ("median", "median")
    # GB300 measured only FP4: its bandwidth is its peers' median, not the assumption
    gb300 = CAT.gpu("gb300").achievable
    assert (gb300.basis_of("fp4"), gb300.basis_of("bandwidth")) == ("measured", "median")
    trn2 = CAT.gpu("trainium2").achievable
    assert (trn2.basis_of("bf16"), trn2.basis_of("bandwidth")) == ("assumed", "assumed")
    # a median over cards none of which measured bandwidth is the assumption
    only = achievable.achievable_from_dict(
        {
            "id": "tpu-v5e",
            "matmul_tflops": {"bf16": 180.0},
            "sources": {"matmul_tflops.bf16": {"url": "https://x.test/a", "read": "2026-12-06"}},
        },
        "x",
        CAT.gpu("tpu-v5e"),
    )
    table = achievable.vendor_defaults([CAT.gpu("tpu-v5e"), CAT.gpu("tpu-v5p")], {"tpu-v5e": only})
    assert table["tpu-v5p"].basis_of("bandwidth") == "assumed"
    assert table["tpu-v5p"].basis_of("bf16") == "median"
    # a CUDA bench run's bandwidth is measured
    cal = eff.achievable_with(CAT.gpu("tpu-v5e"), achievable.Measured("tpu-v5e", "r", None, 0.8))
    assert cal.basis_of("bandwidth") == "measured"
    page = SiteData(CAT, "en", {}).achievable(CAT.gpu("tpu-v5e"))
    assert (page["matmul_kind"], page["bandwidth_kind"]) == ("measured", "assumed")
    page = SiteData(CAT, "en", {}).achievable(CAT.gpu("tpu-v5p"))
    assert page["assumed_peers"] == ", ".join(CAT.gpu(g).name for g in ("tpu-v5e", "tpu-v6e"))


def test_an_efficiency_file_without_a_figure_must_say_where_it_looked(tmp_path):
    """A file with no figure records a search that found none: without notes it is refused
    naming the field; with them the card keeps its median or assumption and joins no median."""
    trn2 = CAT.gpu("trainium2")
    with pytest.raises(AdvisorError) as err:
        achievable.achievable_from_dict({"id": "trainium2"}, "efficiency/trainium2.yaml", trn2)
    assert err.value.field == "notes"
    a = achievable.achievable_from_dict(
        {"id": "trainium2", "notes": "searched X"}, "efficiency/trainium2.yaml", trn2
    )
    assert not a.sources and not a.matmul_fraction
    # the note-only v5p file does not enter the Google median that v5p itself takes
    assert "tpu-v5p" not in CAT.gpu("tpu-v5p").achievable.peers


# --- the published set (golden) ----------------------------------------------------------------


def test_published_validation_is_current_and_reports_its_targets():
    """bench_results/validation/throughput.json is what the builder makes from the committed
    model (rerun `make bench-throughput` after changing it); the median |error| stays within the
    issue's 15 %. The worst-error target (40 %) is a figure the benchmark prints and the
    methodology page states as met or missed (the guide: accuracy targets are checked by the
    benchmark scripts, tests check correctness); here: the summary's verdicts match its figures,
    so a missed target is never shown as met. Since the MLPerf v5.1 Server/Interactive entries
    are counted, the worst is missed (the Llama 2 70B Interactive entry on 8 x B200, about +92 %:
    NVIDIA's logged step is longer than the model's, its cause not sourced; the Llama 3.1 405B
    ones came within 11 % once prompts queue for the prefill): issue 35 says so."""
    from bench import throughput_validation as tv

    fresh = tv.build(CAT)
    stored = json.loads((ROOT / "bench_results/validation/throughput.json").read_text())
    got = {r["id"]: r.get("predicted") for r in fresh["entries"]}
    want = {r["id"]: r.get("predicted") for r in stored["entries"]}
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert (got[k] is None) == (v is None), k
        if v is not None:
            assert got[k] == pytest.approx(v, rel=1e-9), k
    s = fresh["summary"]
    assert s["validation_entries"] >= 30
    assert s["by_kind"]["all"]["median_abs_error"] <= 0.15
    assert s["targets"]["median_met"]
    assert s["targets"]["worst_met"] == (s["by_kind"]["all"]["worst_abs_error"] <= tv.TARGET_WORST)
    assert s["targets"]["median_met"] == (
        s["by_kind"]["all"]["median_abs_error"] <= tv.TARGET_MEDIAN
    )
    for r in fresh["entries"]:
        assert r["expressible"] or r["reason"], r["id"]
        assert r["source"]["url"].startswith("https://"), r["id"]
        assert r["source"]["quote"], r["id"]


def test_a_cuda_bench_run_calibrates_its_accelerator():
    from advisor.data.benchresults import result_from_dict

    doc = json.loads((ROOT / "bench_results/20261202T155651Z_matmul_vm_965885.json").read_text())
    doc["environment"]["device"] = "cuda"
    doc["configuration"]["catalog_gpu"] = "h100-sxm"
    for d in doc["derived"]:
        if d["name"] == "best_tflops_bf16":
            d["value"] = 700.0
    run = result_from_dict(doc, "bench_results/fake-h100.json")
    (h100,) = eff.calibrated_gpus((H100,), [run])
    assert h100.achievable.matmul("bf16") == pytest.approx(700.0 / 989.4)
    assert h100.achievable.source.startswith("measured: bench_results/")
    slower = training.train_step(L8B, h100, Layout(), seq=4096, checkpointing="full")
    base = training.train_step(L8B, H100, Layout(), seq=4096, checkpointing="full")
    assert slower.tokens_per_s < base.tokens_per_s
    (same,) = eff.calibrated_gpus((A100,), [run])
    assert same is A100


# --- CLI ------------------------------------------------------------------------------------


def _cli(*argv):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "advisor", *argv], capture_output=True, text=True, cwd=ROOT
    )


def test_cli_time_commands_json_and_errors():
    r = _cli("time", "serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["plan"]["points"] and doc["accuracy"]["kind"] == "serving"
    r = _cli(
        "time",
        "train",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--dp",
        "8",
        "--sharding",
        "zero3",
        "--tokens",
        "1T",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["run"]["hours"] > 0 and 0 < doc["step"]["mfu"] < 1
    r = _cli("time", "plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--tokens", "1e11")
    assert r.returncode == 0 and "chosen:" in r.stdout
    for argv, field in (
        (("time", "serve", "--model", "bert-base-uncased", "--gpu", "h100-sxm"), "model"),
        (
            (
                "time",
                "serve",
                "--model",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--concurrency",
                "99999",
            ),
            "concurrency",
        ),
        (
            ("time", "train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--dp", "16"),
            "network",
        ),
        (("time", "train", "--model", "llama-3.1-8b", "--gpu", "h100-sxmm"), "gpu"),
    ):
        r = _cli(*argv)
        assert r.returncode == 2, argv
        assert r.stderr.count("\n") == 1 and field in r.stderr, r.stderr


def test_recommend_cluster_plans_cheapest_first():
    from advisor.advice import recommend

    w = recommend.Workload(
        model=L70B, task="train", seq=8192, dataset_tokens=int(2e12), deadline_hours=24 * 60
    )
    plans = recommend.cluster_plans(w, CAT)
    chosen = [p for p in plans if p.chosen]
    assert chosen, "some data-centre accelerator meets a 60-day deadline"
    costs = [p.chosen.cost_usd for p in chosen]
    assert costs == sorted(costs)
    for p in chosen:
        assert p.chosen.hours <= 24 * 60 and p.chosen.gpus > 8
    with pytest.raises(AdvisorError):
        recommend.cluster_plans(recommend.Workload(model=L70B), CAT)
    r = _cli(
        "recommend", "--model", "llama-3.1-8b", "--cluster", "--no-bench"
    )  # inference: --cluster does not apply
    assert r.returncode == 2 and "cluster" in r.stderr


def test_webapi_serving_and_cluster():
    from advisor import webapi

    s = webapi.run("serving", {})
    assert s["points"] and s["accuracy"]["serving"]["n"] > 0
    assert s["max_concurrency"] >= s["points"][-1]["concurrency"]
    tight = webapi.run("serving", {"tpot_ms": s["points"][1]["tpot_s"] * 1e3})
    assert tight["best"]["tpot_s"] <= s["points"][1]["tpot_s"] + 1e-12
    c = webapi.run("cluster", {"tokens": "2e12", "deadline_days": 30})
    assert c["chosen"]["meets_deadline"] and c["chosen"]["gpus"] > 8
    assert c["accuracy"]["training"]["median_abs_error"] > 0
    for name, params, field in (
        ("serving", {"model": "bert-base-uncased"}, "model"),
        ("serving", {"model": "llama-3.1-405b", "gpu": "rtx-4090"}, "gpu"),
        ("serving", {"gpus": 3, "tensor_parallel": 2}, "gpus"),
        ("cluster", {"tokens": "abc"}, "tokens"),
        ("cluster", {"network": "tin-cans"}, "network"),
        ("cluster", {"deadline_days": -1}, "deadline_days"),
    ):
        r = webapi.run(name, params)
        assert r["error"]["field"] == field, (name, params, r)
    assert json.loads(webapi.call("cluster", "{}"))["chosen"]


PRETRAIN_PROFILE = """
organisation: "Example Lab"
prepared_for: "CTO"
date: "2026-12-03"
workloads:
  - name: "Pre-training an 8B model"
    model: llama-3.1-8b
    task: training
    dataset_tokens: 1000000000000
    epochs: 1
    seq: 4096
    batch: 2
    deadline_hours: 720
constraints:
  horizon_months: 36
  acquire: rent
  currency: USD
  language: en
"""


@pytest.mark.parametrize("lang", ["az", "en"])
def test_reports_show_the_serving_curve_and_cluster_plans_with_bands(lang):
    from advisor import report
    from advisor.advice.profile import parse_profile

    bank = parse_profile((ROOT / "examples/bank-serving-70b.yaml").read_text(), CAT)
    data = report.build_report(bank, CAT, lang=lang)
    wd = data["workloads"][0]
    assert wd["serving_curve"]["points"]
    html = report.render_fragment(data, report.load_publisher(ROOT / "publisher.yaml"))
    assert 'data-table="curve-0"' in html and "ar-band" in html
    pre = parse_profile(PRETRAIN_PROFILE, CAT)
    data = report.build_report(pre, CAT, lang=lang)
    cl = data["workloads"][0]["cluster"]
    assert cl and cl["chosen"]["gpus"] > 8 and cl["chosen"]["hours"] <= 720
    html = report.render_fragment(data, report.load_publisher(ROOT / "publisher.yaml"))
    words = {"en": "Past one node", "az": "Bir qovşaqdan artıq"}[lang]
    assert words in html


def test_median_is_statistics_median():
    """efficiency's own median (the browser's start does without `statistics`) gives what
    statistics.median gives, for odd and even counts, and refuses no values."""
    import random
    import statistics

    from advisor.data.achievable import _median

    rng = random.Random(12)
    for n in range(1, 12):
        xs = [rng.uniform(0.1, 1.0) for _ in range(n)]
        assert _median(iter(xs)) == statistics.median(xs)
    with pytest.raises(ValueError):
        _median([])


def test_qlora_pays_for_dequantising_its_base():
    """Issue 38: QLoRA is not as fast as LoRA: bitsandbytes dequantises every NF4 weight to bf16
    before each forward and backward matmul (and the recomputed forward): the difference is
    those passes' bytes at the memory bandwidth."""
    from advisor.advice import recommend as rec
    from advisor.data.catalog import load_catalog
    from advisor.memory import estimate as mem

    cat = load_catalog()
    spec = cat.model("llama-3.1-8b").spec
    times = {}
    for task in ("lora", "qlora"):
        w = rec.Workload(model=spec, task=task, batch=1, seq=2048, dataset_tokens=10**8)
        r = next(x for x in rec.recommend(w, cat) if (x.gpu_id, x.count) == ("h100-sxm", 1))
        times[task] = r.hours
    assert times["qlora"] > times["lora"]
    # at least the dequantisation's bytes: 3 passes (forward, backward, full recompute) of
    # 2.53 B per linear weight per layer per micro-batch of 2048 tokens
    steps = 10**8 / 2048
    g = cat.gpu("h100-sxm")
    floor_s = (
        steps
        * 3
        * mem.linear_params_per_layer(spec)
        * spec.num_layers
        * 2.53
        / (g.memory_bandwidth_gb_per_s * 1e9)
    )
    assert (times["qlora"] - times["lora"]) * 3600 >= floor_s * 0.99


def test_mxfp4_upcast_on_hopper_streams_at_the_measured_triton_rate(capsys):
    """Issue 35: on Hopper the MoE's MXFP4 weights are upcast to bf16 inside Triton's grouped
    matmul (TensorRT-LLM's TRITON backend; vLLM and SGLang likewise): triton-lang/triton PR 9248
    measured that bf16 x mxfp4 MoE at 2290 GB/s on H200 before its January 2026 changes, 0.571
    of H200's 4010 GB/s device copy. The fraction slows the weights' streaming only there: a
    card whose FP4 tensor cores take the format (B200, MI355X) streams at 1.0, as do the other
    dequantising cards (no published rate: the stated assumption) and non-FP4 formats."""
    h200 = CAT.gpu("h200")
    copy_gb_per_s = h200.achievable.bandwidth_fraction * h200.memory_bandwidth_gb_per_s
    reference, fraction = eff.MXFP4_HOPPER_REFERENCE_COPY_GB_PER_S, eff.MXFP4_HOPPER_DEQUANT
    assert reference == pytest.approx(copy_gb_per_s)
    assert fraction == pytest.approx(2290.0 / copy_gb_per_s, abs=5e-4)
    for gid in ("h100-sxm", "h200"):
        gpu = CAT.gpu(gid)
        assert eff.fp4_weight_stream(gpu, "mxfp4") == pytest.approx(0.571)
        assert eff.fp4_stream_note(gpu, "mxfp4")["source"].startswith("triton-lang/triton PR 9248")
        for other in ("nvfp4", "bf16", "fp8", "int4"):
            assert eff.fp4_weight_stream(gpu, other) == 1.0
    for gid in ("b200", "mi355x", "a100-80gb-sxm", "mi300x"):
        assert eff.fp4_weight_stream(CAT.gpu(gid), "mxfp4") == 1.0, gid
        assert eff.fp4_stream_note(CAT.gpu(gid), "mxfp4") is None
    # the routed experts' weights stream 1 / 0.571 times slower where memory bounds their GEMMs
    # (one token: every GEMM memory-bound); the dense layers keep the full bandwidth
    spec = CAT.model("gpt-oss-20b").spec
    stack = eff.DEFAULT_STACK
    dev = timing.Device.of(H100, timing.matmul_peak_key(H100, "mxfp4", "bf16"), stack)
    assert timing.weight_dequant(stack, "mxfp4", dev) == pytest.approx(0.571)
    assert timing.weight_dequant(stack, "mxfp4", dev, experts=False) == 1.0
    assert timing.weight_dequant(stack, "int4", dev) == stack.dequant_factor("int4")
    native = replace(dev, fp4_stream=(("nvfp4", 1.0), ("mxfp4", 1.0)))
    kw = dict(rows=1, tp=1, weights="mxfp4")
    slow, fast = (timing.routed_expert_s(spec, d, stack, **kw) for d in (dev, native))
    kernels = 2 * sum(c for lay, c in timing.layer_groups(spec) if lay.mlp.is_moe) * dev.kernel_s
    assert (slow - kernels) / (fast - kernels) == pytest.approx(1 / 0.571, rel=0.03)
    step = dict(batch=1, context=1536, weights="mxfp4", kv_bytes=2, tp=1, tp_fabric=None)
    whole = timing.decode_step_time(spec, dev, stack, **step)["gemm_s"]
    assert whole - timing.decode_step_time(spec, native, stack, **step)["gemm_s"] == (
        pytest.approx(slow - fast)
    )
    # said with the figure: time serve and the serving web API
    from advisor.cli import main

    capsys.readouterr()
    assert main(["time", "serve", "--model", "gpt-oss-20b", "--gpu", "h100-sxm",
                 "--weights", "mxfp4", "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["fp4_weight_stream"]["fraction"] == pytest.approx(0.571)
    assert main(["time", "serve", "--model", "gpt-oss-20b", "--gpu", "h100-sxm",
                 "--weights", "mxfp4"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert (
        "routed experts' mxfp4 weights stream at 0.571 of the copy bandwidth" in text
        and "PR 9248" in text
    )
    assert main(["time", "serve", "--model", "gpt-oss-20b", "--gpu", "b200",
                 "--weights", "mxfp4", "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["fp4_weight_stream"] is None
    from advisor import webapi

    params = {"model": "gpt-oss-20b", "gpu": "h100-sxm", "weights": "mxfp4"}
    got = json.loads(webapi.call("serving", json.dumps(params)))
    assert got["fp4_weight_stream"]["fraction"] == pytest.approx(0.571)
    assert (got["fp4_weight_stream"]["gb_per_s"], got["fp4_weight_stream"]["reference_gpu"]) == (
        2290.0,
        "H200",
    )
    params["gpu"] = "b200"
    assert json.loads(webapi.call("serving", json.dumps(params)))["fp4_weight_stream"] is None
    # a dense model: the measured rate is the MoE kernel's, nothing streams slower, nothing said
    params.update(gpu="h100-sxm", model="llama-3.1-8b")
    assert json.loads(webapi.call("serving", json.dumps(params)))["fp4_weight_stream"] is None
    assert eff.fp4_stream_note(H100, "mxfp4", L8B) is None
