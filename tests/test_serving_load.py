"""Serving under load (advisor.perf.queueing), speculative decoding and MTP (advisor.perf.speculative),
prefix caching (advisor.perf.prefix_cache), the interactivity curve with its cost
(advisor.money.interactivity), and the validation set's 2025-26 part and source hold-out."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from advisor.core.errors import AdvisorError
from advisor.data.catalog import load_catalog
from advisor.money import interactivity
from advisor.perf import queueing, serving, speculative
from advisor.perf.prefix_cache import uncached_tokens

CAT = load_catalog()
SPEC = CAT.model("llama-3.1-8b").spec
GPU = CAT.gpu("h100-sxm")
KW = dict(input_tokens=1024, output_tokens=256, weights="bf16")


def test_erlang_c_by_hand():
    # M/M/1: an arrival waits with probability rho
    assert queueing.erlang_c(1, 0.3) == pytest.approx(0.3)
    # M/M/2 at a = 1: (a^2/2! * 2/(2-a)) / (1 + a + a^2/2! * 2/(2-a)) = 1/3
    assert queueing.erlang_c(2, 1.0) == pytest.approx(1 / 3)
    assert queueing.erlang_c(256, 10.0) < 1e-12
    assert queueing.erlang_c(4, 4.0) == 1.0


def test_littles_law_and_monotone_latency():
    cap = queueing.capacity(SPEC, GPU, **KW)
    # at the completion rate of 32 requests in flight, 32 are in flight (N = lambda W)
    p32 = serving.point(SPEC, GPU, concurrency=32, **KW)
    at = queueing.at_rate(SPEC, GPU, request_rate=p32.requests_per_s, **KW)
    assert at.concurrency == pytest.approx(32, rel=1e-6)
    assert at.tpot_s == pytest.approx(p32.tpot_s, rel=1e-6)
    last = None
    for frac in (0.05, 0.3, 0.6, 0.9, 0.99):
        p = queueing.at_rate(SPEC, GPU, request_rate=frac * cap, **KW)
        assert p.tokens_per_s == pytest.approx(frac * cap * KW["output_tokens"])
        if last:
            assert p.ttft_s >= last.ttft_s and p.tpot_s >= last.tpot_s
            assert p.queue_wait_s >= last.queue_wait_s
        last = p
    # near the capacity the slots are full and the queue dominates TTFT
    assert last.wait_probability > 0.5 and last.queue_wait_s > 10 * p32.ttft_s


def test_p99_ttft_from_the_mm_m_waiting_time_tail():
    """The p99 of an M/M/m wait: P[W > t] = C e^(-(m - a) t / T) (Kleinrock 1975, §3.5), so
    t99 = T ln(C / 0.01) / (m - a); zero while at most 1 % of arrivals wait. A p99 TTFT limit
    admits a lower rate than the same limit on the mean."""
    cap = queueing.capacity(SPEC, GPU, **KW)
    hold = 256 / (cap)  # T(m) with one replica of MAX_NUM_SEQS slots: m / r(m)
    near = queueing.at_rate(SPEC, GPU, request_rate=0.98 * cap, **KW)
    assert near.wait_probability > 0.01
    t99 = queueing.wait_quantile_s(near, hold, 0.99)
    a = near.utilisation * near.max_concurrency
    assert t99 == pytest.approx(hold * math.log(near.wait_probability / 0.01) / (256 - a))
    # the survival function at t99 is 1 %, and the p99 lies above the mean wait
    assert near.wait_probability * math.exp(-(256 - a) * t99 / hold) == pytest.approx(0.01)
    assert t99 > near.queue_wait_s
    light = queueing.at_rate(SPEC, GPU, request_rate=0.3 * cap, **KW)
    assert queueing.wait_quantile_s(light, hold, 0.99) == 0.0
    limit = near.ttft_s
    mean_best = queueing.max_rate(SPEC, GPU, ttft_s=limit, **KW)
    p99_best = queueing.max_rate(SPEC, GPU, ttft_s=limit, ttft_quantile=0.99, **KW)
    assert p99_best.request_rate_per_s < mean_best.request_rate_per_s


def test_mlperf_latency_limits_are_loadgens():
    """bench/data/mlperf_latency_limits.yaml as LoadGen's mlperf.conf states them (stored
    commit 001712e, read 2026-12-06)."""
    from bench.throughput_validation import _mlperf_limits

    assert _mlperf_limits("llama-2-70b", False)[:3] == (2.0, 0.2, 0.99)
    assert _mlperf_limits("llama-2-70b", True)[:2] == (0.45, 0.04)
    assert _mlperf_limits("llama-3.1-405b", False)[:2] == (6.0, 0.175)
    assert _mlperf_limits("llama-3.1-405b", True)[:2] == (4.5, 0.08)
    assert _mlperf_limits("deepseek-v3", True)[:2] == (1.5, 0.015)


def test_mlperf_server_entries_are_the_largest_rate_within_loadgens_limits():
    """The MLPerf Server/Interactive entries are answered as queueing.max_rate with LoadGen's
    p99 limits (bench/data/mlperf_latency_limits.yaml) and the prefill queue the entry states
    (NVIDIA's max_num_tokens 2048, the dataset's E[L^2]/E[L]^2): the predicted tokens/s is that
    rate times the mean output length, and at that rate the p99 TTFT (slot wait + prefill wait)
    and the mean TPOT are within the limits while a rate a little higher breaks one of them."""
    from bench import throughput_validation as tv

    entries = {e["id"]: e for e in tv._load_entries()}
    e = entries["mlperf51-llama-3.1-405b-b200x8-server"]
    notes: list[str] = []
    got = tv._predict_mlperf_latency_bound(e, CAT, notes)
    assert any("p99 TTFT 6000 ms, TPOT 175 ms" in n for n in notes)
    w = e["workload"]
    kw = dict(
        input_tokens=w["input_tokens"],
        output_tokens=w["output_tokens"],
        weights="nvfp4",
        kv_dtype="fp8",
        tensor_parallel=4,
        gpus=8,
        engine="trtllm",
        max_num_batched_tokens=2048,
        prompt_moment2=w["input_tokens_moment2"],
        cuda_graphs=False,
        kv_on_demand=True,
    )
    assert w["max_num_tokens"] == 2048 and w["cuda_graphs"] is False
    spec, gpu = CAT.model("llama-3.1-405b").spec, CAT.gpu("b200")
    tail = tv._mlperf_tpot_tail([])
    best = queueing.max_rate(
        spec,
        gpu,
        ttft_s=6.0,
        tpot_s=0.175,
        ttft_quantile=0.99,
        tpot_tail_ratio=tail,
        max_num_seqs=256,
        **kw,
    )
    assert got == pytest.approx(best.request_rate_per_s * w["output_tokens"])
    hold = best.max_concurrency / (queueing.capacity(spec, gpu, max_num_seqs=256, **kw) / (8 // 4))

    def p99(p):
        return (
            p.ttft_s
            - p.queue_wait_s
            + queueing.wait_quantile_s(p, hold, 0.99)
            + queueing.prefill_wait_quantile_s(p, 0.99)
        )

    assert p99(best) <= 6.0 * (1 + 1e-9) and best.tpot_s * tail <= 0.175
    # the prefill queue is what binds: its wait is most of the p99
    assert queueing.prefill_wait_quantile_s(best, 0.99) > 3.0
    above = queueing.at_rate(
        spec, gpu, request_rate=best.request_rate_per_s * 1.01, **kw, max_num_seqs=256
    )
    assert p99(above) > 6.0 or above.tpot_s * tail > 0.175


def test_a_p99_tpot_limit_is_the_mean_times_the_logged_ratio(monkeypatch):
    """LoadGen limits the p99 TPOT; max_rate(tpot_tail_ratio=r) checks mean TPOT x r against
    the limit, i.e. the mean against limit / r, so the rate is the mean-limit rate at limit / r
    and below the mean-limit rate at the limit itself. The validation's ratio is the median
    p99 / mean of the fit half's NVIDIA logs (bench/data/mlperf_latency_limits.yaml, read in
    mlcommons/inference_results_v5.1 at 965182b: 1.090, 1.115, 1.322), and it moves the
    TPOT-bound Llama 2 70B Interactive entry down while the TTFT-bound 405B Server stays."""
    from bench import throughput_validation as tv

    tail = tv._mlperf_tpot_tail([])
    assert tail == pytest.approx(1.115)
    doc = tv.yaml.safe_load(tv.MLPERF_LIMITS.read_text(encoding="utf-8"))["tpot_p99_over_mean"]
    ratios = sorted(r["p99_ns"] / r["mean_ns"] for r in doc["logs"])
    assert ratios[len(ratios) // 2] == pytest.approx(tail, abs=5e-4)
    halves = {e["id"]: tv.fit_half(e) for e in tv._load_entries() if tv.role(e) == "validation"}
    for r in doc["logs"]:
        assert halves[r["run"].split("(")[1].rstrip(")")] == "fit"

    tail_best = queueing.max_rate(SPEC, GPU, tpot_s=0.025, tpot_tail_ratio=1.2, **KW)
    mean_best = queueing.max_rate(SPEC, GPU, tpot_s=0.025, **KW)
    same = queueing.max_rate(SPEC, GPU, tpot_s=0.025 / 1.2, **KW)
    assert tail_best.request_rate_per_s == pytest.approx(same.request_rate_per_s, rel=1e-9)
    assert tail_best.request_rate_per_s < mean_best.request_rate_per_s
    assert tail_best.tpot_s * 1.2 <= 0.025 < mean_best.tpot_s * 1.2
    for bad in (0.9, -1.0, float("nan"), 11.0):
        with pytest.raises(AdvisorError) as e:
            queueing.max_rate(SPEC, GPU, tpot_s=0.025, tpot_tail_ratio=bad, **KW)
        assert e.value.field == "tpot_tail_ratio"

    entries = {e["id"]: e for e in tv._load_entries()}
    inter = entries["mlperf51-llama-2-70b-b200x8-interactive"]
    server = entries["mlperf51-llama-3.1-405b-b200x8-server"]
    notes: list[str] = []
    got = tv._predict_mlperf_latency_bound(inter, CAT, notes)
    assert any("TPOT limit on the p99 = mean x 1.115" in n for n in notes)
    got_server = tv._predict_mlperf_latency_bound(server, CAT, [])
    monkeypatch.setattr(tv, "_mlperf_tpot_tail", lambda notes: 1.0)
    assert tv._predict_mlperf_latency_bound(inter, CAT, []) > got * 1.03
    assert tv._predict_mlperf_latency_bound(server, CAT, []) == pytest.approx(got_server)


def test_a_rate_past_capacity_is_refused_by_name():
    cap = queueing.capacity(SPEC, GPU, **KW)
    with pytest.raises(AdvisorError) as e:
        queueing.at_rate(SPEC, GPU, request_rate=cap * 1.01, **KW)
    assert e.value.field == "request_rate"
    with pytest.raises(AdvisorError) as e:
        queueing.at_rate(SPEC, GPU, request_rate=-1, **KW)
    assert e.value.field == "request_rate"


def test_more_replicas_serve_proportionally_more():
    one = queueing.capacity(SPEC, GPU, **KW)
    four = queueing.capacity(SPEC, GPU, gpus=4, **KW)
    assert four == pytest.approx(4 * one)


def test_max_rate_meets_the_limits_and_a_bit_more_does_not():
    best = queueing.max_rate(SPEC, GPU, ttft_s=0.2, tpot_s=0.025, **KW)
    assert best.ttft_s <= 0.2 and best.tpot_s <= 0.025
    more = queueing.at_rate(SPEC, GPU, request_rate=best.request_rate_per_s * 1.01, **KW)
    assert more.ttft_s > 0.2 or more.tpot_s > 0.025
    # a TPOT below one request's decode step can never be met
    assert queueing.max_rate(SPEC, GPU, tpot_s=1e-4, **KW) is None
    # a tighter limit never allows a higher rate
    tight = queueing.max_rate(SPEC, GPU, tpot_s=0.012, **KW)
    assert tight.request_rate_per_s < best.request_rate_per_s


def test_tokens_per_step_is_the_geometric_series():
    assert speculative.tokens_per_step(1, 0.85) == pytest.approx(1.85)
    assert speculative.tokens_per_step(3, 0.7) == pytest.approx(1 + 0.7 + 0.49 + 0.343)
    assert speculative.tokens_per_step(4, 0.0) == 1.0
    # DeepSeek-V3 §5.4.3: 85-90 % acceptance, "1.8 times TPS"
    assert speculative.Speculation().tokens_per_step == pytest.approx(1.85)


def test_speculation_speeds_a_lone_user_and_costs_when_nothing_is_accepted():
    base = serving.point(SPEC, GPU, concurrency=1, **KW)
    mtp = serving.point(SPEC, GPU, concurrency=1, speculative=speculative.Speculation(), **KW)
    assert 1.5 < base.tpot_s / mtp.tpot_s < 1.85  # near 1.85 tokens per step, less the cost
    bad = serving.point(SPEC, GPU, concurrency=1, speculative=speculative.Speculation(2, 0.0), **KW)
    assert bad.tpot_s > base.tpot_s
    # at a large batch the verification's compute eats most of the gain
    big = serving.point(SPEC, GPU, concurrency=256, **KW)
    bigm = serving.point(SPEC, GPU, concurrency=256, speculative=speculative.Speculation(), **KW)
    assert big.tpot_s / bigm.tpot_s < base.tpot_s / mtp.tpot_s


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"draft_tokens": 0}, "draft_tokens"),
        ({"draft_tokens": 1.5}, "draft_tokens"),
        ({"acceptance": 1.0}, "acceptance"),
        ({"acceptance": float("nan")}, "acceptance"),
        ({"draft_layers": -1}, "draft_layers"),
    ],
)
def test_bad_speculation_names_the_field(kw, field):
    with pytest.raises(AdvisorError) as e:
        speculative.Speculation(**kw)
    assert e.value.field == field


def test_prefix_cache_cuts_the_prefill_not_the_decode():
    assert uncached_tokens(1000, 0.75) == 250
    assert uncached_tokens(10, 0.99) == 1
    base = serving.point(SPEC, GPU, concurrency=8, **KW)
    hit = serving.point(SPEC, GPU, concurrency=8, prefix_hit_rate=0.75, **KW)
    assert hit.prefill_s < 0.5 * base.prefill_s
    assert hit.ttft_s < base.ttft_s
    assert hit.decode_step_s == pytest.approx(base.decode_step_s)
    assert hit.tokens_per_s > base.tokens_per_s
    for bad in (1.0, -0.1, float("nan"), True):
        with pytest.raises(AdvisorError) as e:
            serving.point(SPEC, GPU, concurrency=8, prefix_hit_rate=bad, **KW)
        assert e.value.field == "prefix_hit_rate"


def test_interactivity_curve_and_its_cost():
    plan = serving.plan(SPEC, GPU, tensor_parallel=1, gpus=2, **KW)
    pts = interactivity.curve(plan, 2.0)
    assert len(pts) == len(plan.points)
    for c, p in zip(pts, plan.points, strict=True):
        # 2 GPUs at 2 USD per hour each
        assert c.usd_per_million_tokens == pytest.approx(4.0 / (p.tokens_per_s * 3600) * 1e6)
        assert c.tokens_per_s_per_gpu == pytest.approx(p.tokens_per_s / 2)
    users = [c.tokens_per_s_per_user for c in pts]
    per_gpu = [c.tokens_per_s_per_gpu for c in pts]
    assert users == sorted(users, reverse=True) and per_gpu == sorted(per_gpu)
    assert all(c.usd_per_million_tokens is None for c in interactivity.curve(plan))


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "advisor", "time", "serve", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_serve_under_load_with_mtp_prefix_cache_and_cost():
    r = _cli(
        "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--request-rate", "5",
        "--ttft-ms", "300", "--tpot-ms", "30", "--draft-tokens", "1", "--prefix-hit", "0.5",
        "--price", "2.5", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["load"]["request_rate_per_s"] == 5
    assert d["max_rate"]["ttft_s"] <= 0.3 and d["max_rate"]["tpot_s"] <= 0.03
    assert d["speculative"]["tokens_per_step"] == pytest.approx(1.85)
    assert d["usd_per_gpu_hour"] == 2.5 and d["curve"][0]["usd_per_million_tokens"] > 0
    text = _cli("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--request-rate", "5")
    assert "USD/M tok" in text.stdout and "requests/s" in text.stdout
    bad = _cli("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--acceptance", "0.7")
    assert bad.returncode == 2 and "--draft-tokens" in bad.stderr
    over = _cli("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--request-rate", "1e6")
    assert over.returncode == 2 and "request_rate" in over.stderr


def test_webapi_serving_gives_the_curve_and_the_largest_rate():
    from advisor import webapi

    d = webapi.serving({"model": "llama-3.1-8b", "gpu": "h100-sxm", "tpot_ms": "30"})
    assert len(d["curve"]) == len(d["points"])
    assert d["max_rate"]["tpot_s"] <= 0.03
    if d["usd_per_gpu_hour"] is not None:
        assert all(c["usd_per_million_tokens"] > 0 for c in d["curve"])
    assert webapi.serving({"model": "llama-3.1-8b", "gpu": "h100-sxm"})["max_rate"] is None


def test_validation_reports_the_2025_26_part_and_source_families():
    from bench import throughput_validation as tv

    doc = tv.build(CAT)
    part = doc["summary"]["period_2025_26"]
    assert part["entries"] >= 40
    assert part["answered"] + sum(part["unanswered_by_reason"].values()) == part["entries"]
    # every unanswered entry carries its reason, pending catalog ids by name
    for r in doc["entries"]:
        if r.get("period") == "2025-26" and not r["expressible"]:
            assert r["reason"] and r["reason_key"], r["id"]
        if r["id"].startswith("trtllm-po-qwen3-30b"):
            # a layer-list MoE model served over its real layers on TensorRT-LLM: counted, with
            # the fitted MoE term named in its assumptions and its prediction without the term
            assert r["expressible"] and r["moe_layer_list"], r["id"]
            assert r["trtllm_moe_factor"] == tv.eff.DEFAULT_STACK.trtllm_moe_factor
            assert any("trtllm_moe_factor" in a for a in r["assumptions"])
            assert r["without_term_predicted"] > r["predicted"] > 0
        if r.get("reason_key") == "moe_unvalidated":
            # only MoE training still reaches the time model through one representative layer
            assert r["kind"] == "training", r["id"]
    assert "tensorrt-llm" in doc["summary"]["by_family"]
    e = {"source": {"url": "https://github.com/mlcommons/inference_results_v4.1/blob/x/y"}}
    assert tv.family(e) == "mlperf-inference"
    assert tv.family({**e, "family": "sglang-blog"}) == "sglang-blog"
    mid = tv.neutral_stack(tv.eff.DEFAULT_STACK)
    assert mid.gemm_efficiency == sorted(tv.FIT_GRID["gemm_efficiency"])[5]
    stored = json.loads(
        (tv.ROOT / "bench_results/validation/throughput.json").read_text(encoding="utf-8")
    )
    held = stored["summary"]["source_holdout"]["families"]
    assert len(held) >= 4
    for v in held.values():
        assert v["held_out"]["n"] >= tv.HOLDOUT_MIN
        assert math.isfinite(v["held_out"]["median_abs_error"])


# --- MoE expert parallelism and disaggregated serving -------------------------------------

MOE = CAT.model("mixtral-8x7b").spec


def test_expert_parallel_spreads_the_experts_and_pays_all_to_all():
    from advisor.perf import expert_parallel as ep

    kw = dict(input_tokens=1024, output_tokens=1024, weights="fp8", kv_dtype="fp8")
    lone = ep.point(MOE, GPU, batch_per_gpu=64, layout=ep.EPLayout(ep=1), **kw)
    eight = ep.point(MOE, GPU, batch_per_gpu=64, layout=ep.EPLayout(ep=8), **kw)
    assert lone.all_to_all_share == 0.0 and 0 < eight.all_to_all_share < 0.5
    # each GPU reads 1/8 of the experts: more tokens/s per GPU at the same batch per GPU
    assert eight.tokens_per_s_per_gpu > lone.tokens_per_s_per_gpu
    # 1/ep of the experts leaves room for more sequences per GPU
    caps = [
        ep.max_batch_per_gpu(
            MOE, GPU, context=2048, weights="fp8", kv_dtype="fp8", layout=ep.EPLayout(ep=e)
        )
        for e in (1, 2, 8)
    ]
    assert caps == sorted(caps) and caps[0] < caps[-1]
    # imbalance slows the busiest GPU; across nodes the all-to-all is slower than in a domain
    even = ep.point(MOE, GPU, batch_per_gpu=64, layout=ep.EPLayout(ep=8, imbalance=1.0), **kw)
    assert even.tpot_s < eight.tpot_s
    wide = ep.point(MOE, GPU, batch_per_gpu=64, layout=ep.EPLayout(ep=8, domain=4), **kw)
    assert wide.all_to_all_share > eight.all_to_all_share


def test_expert_parallel_refuses_by_name():
    from advisor.perf import expert_parallel as ep

    with pytest.raises(AdvisorError) as e:
        ep.decode_step(
            SPEC, GPU, batch=8, context=512, weights="bf16", kv_dtype="bf16",
            layout=ep.EPLayout(ep=2),
        )  # fmt: skip
    assert e.value.field == "model"
    with pytest.raises(AdvisorError) as e:
        ep.decode_step(
            MOE, GPU, batch=8, context=512, weights="bf16", kv_dtype="bf16",
            layout=ep.EPLayout(ep=16),
        )  # fmt: skip
    assert e.value.field == "ep"
    with pytest.raises(AdvisorError) as e:
        ep.EPLayout(ep=8, imbalance=0.5)
    assert e.value.field == "imbalance"
    with pytest.raises(AdvisorError) as e:
        ep.point(
            MOE, GPU, batch_per_gpu=60000, input_tokens=1024, output_tokens=1024,
            layout=ep.EPLayout(ep=8),
        )  # fmt: skip
    assert e.value.field == "batch_per_gpu"


def test_validator_predicts_dep_runs_through_expert_parallel():
    from bench import throughput_validation as tv

    e = {
        "id": "test-dep8",
        "kind": "serving",
        "metric": "tokens_per_s_per_gpu",
        "value": 1.0,
        "workload": {
            "model": "mixtral-8x7b", "weights": "fp8", "kv_dtype": "fp8",
            "accelerator": "h100-sxm", "count": 8, "tensor_parallel": 1,
            "expert_parallel": 8, "attention_data_parallel": 8,
            "input_tokens": 1024, "output_tokens": 1024,
            "software": "TensorRT-LLM (PyTorch backend)",
        },
    }  # fmt: skip
    notes: list[str] = []
    got = tv.predict_serving(e, CAT, notes)
    assert got > 0 and any("EP 8" in n for n in notes)


def test_disaggregated_split_meets_both_targets():
    from advisor.perf import disaggregated as dg

    spec70 = CAT.model("llama-3.1-70b").spec
    kw = dict(input_tokens=2048, output_tokens=256, weights="fp8", kv_dtype="fp8")
    p = dg.split(spec70, GPU, gpus=16, ttft_s=1.0, tpot_s=0.05, prefill_tp=2, decode_tp=2, **kw)
    assert p.ttft_s <= 1.0 + 1e-9 and p.tpot_s <= 0.05
    assert p.prefill_instances * 2 + p.decode_instances * 2 <= 16
    assert p.kv_transfer_s > 0 and p.tokens_per_s == pytest.approx(p.request_rate_per_s * 256)
    # a looser TTFT never serves less
    loose = dg.split(spec70, GPU, gpus=16, ttft_s=2.0, tpot_s=0.05, prefill_tp=2, decode_tp=2, **kw)
    assert loose.request_rate_per_s >= p.request_rate_per_s
    # a TPOT below a lone request's decode step cannot be met
    assert dg.split(spec70, GPU, gpus=16, ttft_s=1.0, tpot_s=1e-4, **kw) is None
    with pytest.raises(AdvisorError) as e:
        dg.split(spec70, GPU, gpus=2, ttft_s=1.0, tpot_s=0.05, prefill_tp=2, decode_tp=2, **kw)
    assert e.value.field == "gpus"


def test_cli_serve_expert_parallel_and_disaggregated():
    r = _cli(
        "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--ep", "8", "--weights", "fp8",
        "--kv-dtype", "fp8", "--batch-per-gpu", "64", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["point"]["batch_per_gpu"] == 64 and d["point"]["all_to_all_share"] > 0
    r = _cli(
        "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", "16", "--tp", "2",
        "--weights", "fp8", "--kv-dtype", "fp8", "--input", "2048", "--disaggregate",
        "--ttft-ms", "1000", "--tpot-ms", "50", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)["disaggregated"]
    assert p["ttft_s"] <= 1.0 + 1e-9 and p["tpot_s"] <= 0.05
    bad = _cli("--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--disaggregate")
    assert bad.returncode == 2 and "--ttft-ms" in bad.stderr
    bad = _cli("--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--ep", "8", "--request-rate", "1")
    assert bad.returncode == 2 and "--ep" in bad.stderr


def test_cli_serve_expert_parallel_under_the_attention_dp_balancer():
    """`time serve --ep --adp-timeout-iters N`: a Server load under TensorRT-LLM's attention-DP
    balancer, every point expert_parallel.server_point (median wait for the release); refused
    without --ep."""
    from advisor.perf import expert_parallel as ep

    r = _cli(
        "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--ep", "8", "--weights", "fp8",
        "--kv-dtype", "fp8", "--batch-per-gpu", "64", "--adp-timeout-iters", "6",
        "--adp-batching-wait-iters", "2", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["adp_balancer"] == {
        "timeout_iters": 6,
        "batching_wait_iters": 2,
        "cuda_graph_batch_sizes": None,
    }
    want = ep.server_point(
        CAT.model("mixtral-8x7b").spec,
        CAT.gpu("h100-sxm"),
        batch_per_gpu=64,
        input_tokens=1024,  # the CLI's defaults
        output_tokens=256,
        weights="fp8",
        kv_dtype="fp8",
        layout=ep.EPLayout(**d["layout"]),
        timeout_iters=6,
        batching_wait_iters=2,
        engine="vllm",
    )
    assert d["point"]["tpot_s"] == pytest.approx(want.tpot_s)
    assert d["point"]["ttft_s"] == pytest.approx(want.ttft_s)
    plain = json.loads(
        _cli(
            "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--ep", "8", "--weights", "fp8",
            "--kv-dtype", "fp8", "--batch-per-gpu", "64", "--json",
        ).stdout
    )  # fmt: skip
    assert plain["adp_balancer"] is None and plain["point"]["tpot_s"] < d["point"]["tpot_s"]
    bad = _cli("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--adp-timeout-iters", "6")
    assert bad.returncode == 2 and "--adp-timeout-iters applies with --ep only" in bad.stderr


def test_cuda_graph_padding_runs_the_decode_rows_at_the_next_graph_size():
    """TensorRT-LLM with `cuda_graph_padding_enabled` replays the graph of the next captured
    batch size up, padding with dummy requests (CUDAGraphRunner._get_padded_batch): the step's
    row work runs at that size P while the KV cache read is the real batch's, so a batch just
    above a graph size pays for the whole next size and one at a size pays nothing; the
    server point's TPOT gains the padding in every iteration but the release; the CLI and the
    MLPerf DeepSeek-R1 Server entry (config: 128, 256, 384, 512) carry it."""
    from advisor.perf import expert_parallel as ep
    from advisor.perf import timing
    from bench import throughput_validation as tv

    spec, gpu = CAT.model("deepseek-v3").spec, CAT.gpu("gb300")
    sizes = (128, 256, 384, 512)
    assert timing.padded_batch(195, sizes) == 256 and timing.padded_batch(256, sizes) == 256
    assert timing.padded_batch(513, sizes) == 513  # above the largest: no graph
    kw = dict(weights="nvfp4", kv_dtype="fp8", layout=ep.EPLayout(ep=8, domain=8), engine="trtllm")
    ctx = 804 + 3886 // 2

    def pad(b, g=sizes):
        return ep.padding_s(spec, gpu, batch_per_gpu=b, context=ctx, graph_batch_sizes=g, **kw)

    assert pad(256) == 0 and pad(128) == 0 and pad(600) == 0 and pad(195, None) == 0
    # the padded step: P rows over the real batch's KV cache
    real = ep.decode_step(spec, gpu, batch=195, context=ctx, **kw)["seconds"]
    rows = ep.decode_step(spec, gpu, batch=195, context=ctx, graph_batch_sizes=sizes, **kw)
    full = ep.decode_step(spec, gpu, batch=256, context=ctx, **kw)["seconds"]
    assert pad(195) == pytest.approx(rows["seconds"] - real) and 0 < pad(195) < full - real
    assert pad(129) > pad(250) > 0  # the further below the size, the more rows wasted
    skw = dict(input_tokens=804, output_tokens=3886, timeout_iters=6, batching_wait_iters=2, **kw)
    tpot = {}
    for b in (195, 256, 257):
        with_graphs = ep.server_point(
            spec, gpu, batch_per_gpu=b, cuda_graph_batch_sizes=sizes, **skw
        )
        without = ep.server_point(spec, gpu, batch_per_gpu=b, **skw)
        assert with_graphs.tpot_s >= without.tpot_s
        tpot[b] = with_graphs.tpot_s
        if b == 256:
            assert with_graphs.tpot_s == pytest.approx(without.tpot_s)
    assert tpot[257] - tpot[256] > 3 * (tpot[256] - tpot[195]) / 61  # the jump at a size
    for bad in ((0, 128), ("x",), "128"):
        with pytest.raises(AdvisorError) as e:
            pad(195, bad)
        assert e.value.field == "cuda_graph_batch_sizes"
    assert pad(195, ()) == 0  # an empty list: no graphs, no padding

    r = _cli(
        "--model", "deepseek-v3", "--gpu", "gb300", "--gpus", "8", "--ep", "8", "--weights",
        "nvfp4", "--kv-dtype", "fp8", "--input", "804", "--output", "3886", "--engine",
        "trtllm", "--batch-per-gpu", "195", "--adp-timeout-iters", "6",
        "--adp-batching-wait-iters", "2", "--cuda-graph-batch-sizes", "512,128,384,256",
        "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["adp_balancer"]["cuda_graph_batch_sizes"] == [128, 256, 384, 512]
    want = ep.server_point(
        spec,
        gpu,
        batch_per_gpu=195,
        cuda_graph_batch_sizes=sizes,
        **dict(skw, layout=ep.EPLayout(**d["layout"])),
    )
    assert d["point"]["tpot_s"] == pytest.approx(want.tpot_s)
    # with --ep the padding rides on the balancer's server point; on plain replicas it is
    # serving.point's (tests/test_serving_faces.py), with --disaggregate it is refused
    bad = _cli(
        "--model", "deepseek-v3", "--gpu", "gb300", "--gpus", "8", "--ep", "8", "--weights",
        "nvfp4", "--cuda-graph-batch-sizes", "128",
    )  # fmt: skip
    assert bad.returncode == 2 and "applies with --adp-timeout-iters only" in bad.stderr
    bad = _cli(
        "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8", "--disaggregate",
        "--ttft-ms", "500", "--tpot-ms", "30", "--cuda-graph-batch-sizes", "128",
    )  # fmt: skip
    assert bad.returncode == 2 and "not with --disaggregate" in bad.stderr
    bad = _cli(
        "--model", "deepseek-v3", "--gpu", "gb300", "--ep", "8", "--weights", "nvfp4",
        "--cuda-graph-batch-sizes", "128,,256",
    )  # fmt: skip
    assert bad.returncode == 2 and "cuda_graph_batch_sizes" in bad.stderr

    e = {x["id"]: x for x in tv._load_entries()}["mlperf51-deepseek-r1-gb300x72-server"]
    assert tuple(e["workload"]["cuda_graph_batch_sizes"]) == sizes
    assert "'cuda_graph_padding_enabled': True" in e["workload"]["cuda_graph_source"]
    notes: list[str] = []
    tv.predict_serving(e, CAT, notes)
    assert any("CUDA graphs of batch 128, 256, 384, 512 with padding" in n for n in notes)
    b = int(notes[-1].split(" in flight")[0].rsplit(" ", 1)[-1])
    assert b <= 256  # past 256 the step runs 384 rows and TPOT's p99 passes 80 ms


def test_grouped_expert_gemm_pays_one_kernel_cost():
    """The routed experts of a layer run as one grouped GEMM per weight (fused_moe, CUTLASS
    MoE): n experts cost n rooflines plus ONE fixed kernel cost, not n."""
    from advisor.perf import timing

    dev = timing.Device.of(GPU, "fp8")
    one = timing.gemm_time(16, 4096, 2048, dev, weight_bytes=1.0)
    many = timing.grouped_gemm_time(64, 16, 4096, 2048, dev, weight_bytes=1.0, dequant=1.0)
    assert many == pytest.approx(64 * (one - dev.kernel_s) + dev.kernel_s)
    assert timing.grouped_gemm_time(0, 16, 4096, 2048, dev, weight_bytes=1.0, dequant=1.0) == 0


def test_mla_decode_attention_is_compute_bound_and_gqa_is_not():
    """Absorbed MLA decode multiplies every head over the 576-wide latent (DeepSeek-V2 §2.1.2):
    by hand 2 * 128 * (2 * 512 + 64) FLOPs per cached key and layer; at a large batch the step's
    attention takes longer than streaming its FP8 cache. A GQA model's stays bandwidth-bound."""
    from advisor.perf import efficiency as eff
    from advisor.perf import timing

    ds = CAT.model("deepseek-v3").spec
    mla = ds.stack[0].attention
    assert timing.attention_decode_flops(mla, 1000) == 2 * 128 * (2 * 512 + 64) * 1000
    gpu = CAT.gpu("h200")
    dev = timing.Device.of(gpu, "fp8")
    kw = dict(batch=256, context=2048, weights="fp8", kv_bytes=1, tp=1, tp_fabric=None)
    d = timing.decode_step_time(ds, dev, eff.DEFAULT_STACK, **kw)
    stream = d["kv_read_bytes"] / (dev.bandwidth * dev.decode_bandwidth)
    assert d["attention_s"] > 2 * stream
    llama = CAT.model("llama-3.1-70b").spec
    g = timing.decode_step_time(llama, dev, eff.DEFAULT_STACK, **kw)
    g_stream = g["kv_read_bytes"] / (dev.bandwidth * dev.decode_bandwidth)
    assert g["attention_s"] == pytest.approx(g_stream + llama.num_layers * dev.kernel_s)


def test_expert_parallel_walks_the_layer_list():
    """DeepSeek-V3: 3 dense first layers and 58 MoE layers of 256 routed experts; EP spreads
    only the routed experts, and the KV cache per sequence is MLA's 576-element latent."""
    from advisor.perf import expert_parallel as ep

    ds = CAT.model("deepseek-v3").spec
    moe = ep.moe_layers(ds)
    assert sum(c for _, c in moe) == 58 and all(m.experts == 256 for m, _ in moe)
    lone = ep.weight_bytes_per_gpu(ds, "fp8", ep.EPLayout(ep=1))
    eight = ep.weight_bytes_per_gpu(ds, "fp8", ep.EPLayout(ep=8))
    routed = 58 * 256 * 3 * 7168 * 2048 * 1.0  # FP8: 1 byte, per-tensor scale negligible
    assert lone - eight == pytest.approx(routed * 7 / 8, rel=0.01)
    gpu = CAT.gpu("b200")
    cap = ep.max_batch_per_gpu(
        ds, gpu, context=2048, weights="fp8", kv_dtype="fp8", layout=ep.EPLayout(ep=8)
    )
    free = gpu.memory_bytes * 0.9 - eight
    assert cap == int(free // (61 * 576 * 2048))
    step = ep.decode_step(
        ds, gpu, batch=64, context=2048, weights="fp8", kv_dtype="fp8", layout=ep.EPLayout(ep=8)
    )
    assert step["seconds"] == pytest.approx(
        step["attention_dense_s"] + step["experts_s"] + step["all_to_all_s"]
    )
    # the all-to-all uses the catalog's NVLink figure and the kernels' fixed cost
    from advisor.perf import network as net

    fab = net.intra_node_fabric(gpu)
    one = ep.all_to_all_s(ds, gpu, 64, ep.EPLayout(ep=8, imbalance=1.0), moe[0][0])
    by_hand = 37.75e-6 + 64 * 8 * 7168 * 7 / 8 * (ep.DISPATCH_BYTES + 2) / fab.bytes_per_s
    assert one == pytest.approx(by_hand)


# TensorRT-LLM tech blog 18 (blog18_Optimizing_MoE_Communication_with_One_Sided_AlltoAll_Over_
# NVLink.md, stored commit 22de8b3), GB200 NVL72, DeepSeek-V3 profile, BF16, ep_size=8:
# tokens per rank -> (dispatch us, combine us)
BLOG18_EP8 = {
    1: (18.9, 31.0),
    64: (22.3, 34.1),
    128: (31.7, 38.1),
    256: (50.8, 53.0),
    512: (89.5, 91.7),
    1024: (166.3, 175.6),
    2048: (311.8, 322.6),
}


@pytest.mark.parametrize("tokens", sorted(BLOG18_EP8))
def test_in_domain_all_to_all_matches_trtllm_one_sided_kernels(tokens, monkeypatch):
    """Dispatch + combine of one DeepSeek-V3 MoE layer at EP 8 on GB200 NVL72 against TensorRT-
    LLM's measured NVLinkOneSided kernels (BF16 both ways, uniform routing): within 10 % from 64
    to 2048 tokens per rank; at one token the kernels' 50 us is 24 % above the fitted line's
    fixed cost (advisor.perf.expert_parallel module docstring)."""
    from advisor.perf import expert_parallel as ep

    monkeypatch.setattr(ep, "DISPATCH_BYTES", 2.0)
    ds = CAT.model("deepseek-v3").spec
    mlp = ep.moe_layers(ds)[0][0]
    got = ep.all_to_all_s(ds, CAT.gpu("gb200"), tokens, ep.EPLayout(ep=8, imbalance=1.0), mlp)
    want = sum(BLOG18_EP8[tokens]) * 1e-6
    assert got == pytest.approx(want, rel=0.25 if tokens == 1 else 0.10)


def test_across_nodes_prefill_forwards_by_node_and_decode_sends_per_expert():
    """DeepEP: normal (prefill) kernels cross the NIC once per destination node and spread
    over NVLink; low-latency (decode) kernels send one copy per remote expert over RDMA. With
    k = 8 experts over 4 nodes a token reaches 3 * (1 - (3/4)^8) = 2.70 other nodes on average."""
    from advisor.perf import expert_parallel as ep

    assert ep.remote_nodes(8, 4) == pytest.approx(3 * (1 - 0.75**8))
    assert ep.remote_nodes(8, 1) == 0.0
    ds = CAT.model("deepseek-v3").spec
    gpu = CAT.gpu("h100-sxm")
    lay = ep.EPLayout(ep=32, domain=8, imbalance=1.0)
    mlp = ep.moe_layers(ds)[0][0]
    node = ep.all_to_all_s(ds, gpu, 2000, lay, mlp, forward_by_node=True)
    expert = ep.all_to_all_s(ds, gpu, 2000, lay, mlp)
    nic = lay.scale_out_gb_per_s * 1e9 * ep.net.DEFAULT_BUS_EFFICIENCY
    per_token = 7168 * (ep.DISPATCH_BYTES + ep.COMBINE_BYTES)
    assert expert == pytest.approx(2 * 30e-6 + 2000 * 8 * 31 / 32 * per_token / nic)
    assert node == pytest.approx(2 * 30e-6 + 2000 * ep.remote_nodes(8, 4) * per_token / nic)
    assert node < expert


def test_mixed_precision_moe_multiplies_at_the_wider_operand():
    """gpt-oss: MXFP4 MoE weights with bf16 activations on Hopper run at the bf16 rate, with
    MXFP8 activations on Blackwell at the FP8 rate (TensorRT-LLM gpt_oss README support
    matrix); without `activations` the weight format decides."""
    from advisor.perf import timing

    h200, b200 = CAT.gpu("h200"), CAT.gpu("b200")
    assert timing.matmul_peak_key(b200, "mxfp4") == "fp4"
    assert timing.matmul_peak_key(b200, "mxfp4", "fp8") == "fp8"
    assert timing.matmul_peak_key(h200, "mxfp4", "bf16") == "bf16"
    assert timing.matmul_peak_key(h200, "bf16", "fp8") == "bf16"
    with pytest.raises(AdvisorError) as e:
        timing.matmul_peak_key(h200, "mxfp4", "int3")
    assert e.value.field == "activations"
    spec = CAT.model("gpt-oss-20b").spec
    kw = dict(concurrency=64, input_tokens=1024, output_tokens=1024, weights="mxfp4")
    fast = serving.point(spec, b200, **kw)
    slow = serving.point(spec, b200, activations="fp8", **kw)
    assert slow.tokens_per_s < fast.tokens_per_s


def test_moe_serving_band_comes_from_the_layer_list_moe_entries():
    """The expert-parallel serving output carries the MoE band (the validation's layer-list
    MoE serving entries), not the dense serving band; the fitted TensorRT-LLM MoE term has its
    own band, its held-out half's errors, shown where the term applies."""
    from advisor.perf import accuracy

    s = {
        "by_kind": {"serving": {"n": 40, "median_abs_error": 0.09, "worst_abs_error": 0.37}},
        "moe_serving": {
            "n": 23,
            "median_abs_error": 0.24,
            "worst_abs_error": 1.4,
            "trtllm": {"held_out": {"n": 10, "median_abs_error": 0.28, "worst_abs_error": 1.38}},
        },
    }
    got = accuracy.bands_from_summary(s)
    assert got["moe_serving"].n == 23 and got["moe_serving"].worst_abs_error == 1.4
    assert got["trtllm_moe"].n == 10 and got["trtllm_moe"].median_abs_error == 0.28
    assert got["serving"].n == 40
    assert "moe_serving" not in accuracy.bands_from_summary({"by_kind": {}})
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "time", "serve", "--model", "mixtral-8x7b",
         "--gpu", "h100-sxm", "--ep", "8", "--weights", "fp8", "--input", "512",
         "--output", "256"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    band = accuracy.band("moe_serving")
    assert band and band.n >= 20  # the committed summary's layer-list MoE entries
    assert f"MoE serving: median ±{band.median_abs_error:.0%}" in out
    assert "TensorRT-LLM MoE layers" not in out  # vLLM (the default engine): no fitted term


def test_dense_and_moe_serving_figures_carry_their_own_bands():
    """A dense model's serving figure takes the band of the entries without routed experts
    (`by_kind_dense`), a layer-list MoE model's the MoE serving band (accuracy.serving_kind), in
    the CLI and in the serving web API; neither band borrows the other's worst error."""
    from advisor.perf import accuracy
    from advisor.webapi.serving import serving as serve_api

    s = {
        "by_kind": {"serving": {"n": 63, "median_abs_error": 0.11, "worst_abs_error": 1.38}},
        "by_kind_dense": {"serving": {"n": 40, "median_abs_error": 0.09, "worst_abs_error": 0.6}},
        "moe_serving": {"n": 23, "median_abs_error": 0.24, "worst_abs_error": 1.38},
    }
    got = accuracy.bands_from_summary(s)
    assert (got["serving"].n, got["serving"].worst_abs_error) == (40, 0.6)
    cat = load_catalog()
    assert accuracy.serving_kind(cat.model("qwen3-30b-a3b").spec) == "moe_serving"
    assert accuracy.serving_kind(cat.model("llama-3.1-8b").spec) == "serving"
    committed = accuracy.bands()
    # the committed bands are the two halves of the set, not one band twice
    assert committed["serving"].n != committed["moe_serving"].n
    assert committed["serving"].median_abs_error < committed["moe_serving"].median_abs_error
    moe = serve_api({"model": "qwen3-30b-a3b", "gpu": "h100-sxm", "weights": "bf16"})
    dense = serve_api({"model": "llama-3.1-8b", "gpu": "h100-sxm", "weights": "bf16"})
    assert moe["accuracy"]["serving"]["kind"] == "moe_serving"
    assert dense["accuracy"]["serving"]["kind"] == "serving"
    assert dense["accuracy"]["serving"]["n"] == committed["serving"].n


def test_trtllm_moe_term_applies_on_hopper_and_blackwell_with_trtllm_only():
    """efficiency.trtllm_moe_extra_s: engine "trtllm" on a Hopper or Blackwell GPU lengthens an
    MoE model's step by (factor - 1) x the routed experts' time; vLLM, a dense model and other
    generations are as before; the faces say so (CLI line, web API `engine_moe` with the band)."""
    from dataclasses import replace

    from advisor import webapi
    from advisor.perf import efficiency as eff
    from advisor.perf import expert_parallel as ep
    from advisor.perf import timing

    f = eff.DEFAULT_STACK.trtllm_moe_factor
    assert f > 1
    gpt = CAT.model("gpt-oss-120b").spec
    kw = dict(concurrency=64, input_tokens=1024, output_tokens=1024, weights="mxfp4")
    for gid in ("h100-sxm", "b200"):
        g = CAT.gpu(gid)
        assert eff.generation(g) in ("hopper", "blackwell")
        vllm = serving.point(gpt, g, engine="vllm", **kw)
        trt = serving.point(gpt, g, engine="trtllm", **kw)
        one = serving.point(
            gpt, g, engine="trtllm", stack=replace(eff.DEFAULT_STACK, trtllm_moe_factor=1.0), **kw
        )
        # the term alone: TensorRT-LLM at factor 1 vs the fitted factor, by the routed time
        dev = timing.Device.of(g, timing.matmul_peak_key(g, "mxfp4"), eff.DEFAULT_STACK)
        routed = timing.routed_expert_s(gpt, dev, eff.DEFAULT_STACK, rows=64, tp=1, weights="mxfp4")
        assert trt.decode_step_s == pytest.approx(one.decode_step_s + (f - 1) * routed, rel=1e-9)
        assert trt.tokens_per_s < one.tokens_per_s and vllm.decode_step_s != trt.decode_step_s
    # a generation it was not fitted on, and a dense model: nothing added
    a100 = CAT.gpu("a100-80gb-sxm")
    assert eff.generation(a100) is None
    assert eff.trtllm_moe_extra_s(eff.DEFAULT_STACK, a100, "trtllm", expert_s=1.0) == 0.0
    assert serving.engine_moe_note(gpt, a100, "trtllm") is None
    dense = CAT.model("llama-3.1-8b").spec
    assert serving.engine_moe_note(dense, CAT.gpu("h100-sxm"), "trtllm") is None
    # expert parallelism: the busiest GPU's experts and all-to-all, times (factor - 1)
    ds, b200 = CAT.model("deepseek-v3").spec, CAT.gpu("b200")
    sk = dict(batch=256, context=1536, weights="nvfp4", kv_dtype="fp8", layout=ep.EPLayout(ep=8))
    plain = ep.decode_step(ds, b200, **sk)
    trt = ep.decode_step(ds, b200, engine="trtllm", **sk)
    assert plain["engine_moe_s"] == 0.0
    assert trt["engine_moe_s"] == pytest.approx((f - 1) * (trt["experts_s"] + trt["all_to_all_s"]))
    assert trt["seconds"] == pytest.approx(plain["seconds"] + trt["engine_moe_s"])
    # the faces
    note = serving.engine_moe_note(ds, b200, "trtllm")
    assert note["factor"] == f and note["fitted"]
    band = note["band"]
    assert band is not None and band["n"] >= 5
    base = dict(model="deepseek-v3", gpu="b200", gpus=8, ep=8, weights="nvfp4", kv_dtype="fp8",
                input_tokens=1024, output_tokens=1024)  # fmt: skip
    r = webapi.run("serving", {**base, "engine": "trtllm"})
    assert r["engine_moe"]["factor"] == f and r["engine_moe"]["band"]["n"] == band["n"]
    r0 = webapi.run("serving", base)
    assert r0["engine_moe"] is None
    assert r["points"][-1]["tokens_per_s_per_gpu"] < r0["points"][-1]["tokens_per_s_per_gpu"]
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "time", "serve", "--model", "gpt-oss-120b",
         "--gpu", "h100-sxm", "--weights", "mxfp4", "--input", "1024", "--output", "1024",
         "--engine", "trtllm"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert f"TensorRT-LLM MoE layers: the routed experts' time x {f:g} (fitted" in out
    assert f"median ±{band['median_abs_error']:.0%}" in out


def test_two_batch_overlap_hides_the_all_to_all_behind_the_other_micro_batch():
    """DeepSeek-V3 §3.4 / SGLang's TBO: the batch runs as two micro-batches (ceil and floor of
    half, each streaming the weights and paying its own all-to-all) in four phases per MoE
    layer (attention beside dispatch, experts beside dispatch, experts beside combine,
    attention beside combine: SGLang's yield points, LMSYS 2025-05-05), each phase the longer
    of the two; a prefill's DeepEP normal kernels hold 20 of 132 SMs while they run
    (DeepSeek-V3 §3.5.1), the decode's low-latency kernels none."""
    from advisor.perf import expert_parallel as ep

    ds = CAT.model("deepseek-v3").spec
    gpu = CAT.gpu("h100-sxm")
    kw = dict(context=2000, weights="fp8", kv_dtype="bf16")
    plain = ep.EPLayout(ep=72, domain=8)
    tbo = ep.EPLayout(ep=72, domain=8, two_batch_overlap=True)
    s0 = ep.decode_step(ds, gpu, batch=256, layout=plain, **kw)
    s1 = ep.decode_step(ds, gpu, batch=256, layout=tbo, **kw)
    halves = [ep.decode_step(ds, gpu, batch=128, layout=plain, **kw)] * 2
    compute = sum(h["attention_dense_s"] + h["experts_s"] for h in halves)
    comm = sum(h["all_to_all_s"] for h in halves)
    # the four phases by hand: DeepSeek-V3's 58 of 61 layers are MoE layers, the all-to-all
    # split into FP8 dispatch and BF16 combine by their bytes
    share = 58 / 61
    a = halves[0]["attention_dense_s"] * share
    e = halves[0]["experts_s"]
    d = halves[0]["all_to_all_s"] * ep.DISPATCH_BYTES / (ep.DISPATCH_BYTES + ep.COMBINE_BYTES)
    c = halves[0]["all_to_all_s"] - d
    alone = 2 * halves[0]["attention_dense_s"] * (1 - share)
    want = max(a, d) + max(e, d) + max(e, c) + max(a, c) + alone
    assert s1["seconds"] == pytest.approx(want)
    assert s1["all_to_all_exposed_s"] == pytest.approx(s1["seconds"] - compute)
    # phase by phase it is never shorter than max(all compute, all communication), never
    # longer than their sum; across nodes overlap still shortens the step
    assert max(compute, comm) <= s1["seconds"] < compute + comm
    assert s1["seconds"] < s0["seconds"] and s0["all_to_all_exposed_s"] == s0["all_to_all_s"]
    # an odd batch splits into 129 and 128; one sequence is not split
    odd = ep.decode_step(ds, gpu, batch=257, layout=tbo, **kw)
    parts = [ep.decode_step(ds, gpu, batch=b, layout=plain, **kw) for b in (129, 128)]
    assert odd["experts_s"] == pytest.approx(sum(p["experts_s"] for p in parts))
    one = ep.decode_step(ds, gpu, batch=1, layout=tbo, **kw)
    assert one == ep.decode_step(ds, gpu, batch=1, layout=plain, **kw)
    # prefill: two micro-batches of 1,000 tokens, each with its own all-to-all, the compute
    # short of 20 / 132 of the SMs while a dispatch or combine runs beside it
    lay = dict(ep=32, domain=8)
    p0 = ep.prefill_s(ds, gpu, prompt=2000, weights="fp8", layout=ep.EPLayout(**lay))
    p1 = ep.prefill_s(
        ds, gpu, prompt=2000, weights="fp8", layout=ep.EPLayout(**lay, two_batch_overlap=True)
    )

    def a2a(tokens):
        return sum(
            c * ep.all_to_all_s(ds, gpu, tokens, ep.EPLayout(**lay), m, forward_by_node=True)
            for m, c in ep.moe_layers(ds)
        )

    compute = p0 - a2a(2000.0)
    half = a2a(1000.0)
    assert abs(ep.COMM_SM_FRACTION - 20 / 132) < 1e-12
    lower = max(compute, 2 * half)  # perfect overlap and no SMs lost
    assert lower < p1 < compute + 2 * half
    # without the SMs the communication holds, the same phases are shorter
    mb = (compute / 2, 0.0, half)  # experts folded into attention: a bound, not the split
    free, _ = ep.overlapped_s(ds, (mb, mb), sm_fraction=0.0)
    held, _ = ep.overlapped_s(ds, (mb, mb), sm_fraction=ep.COMM_SM_FRACTION)
    assert held > free
    with pytest.raises(AdvisorError) as e:
        ep.EPLayout(ep=8, two_batch_overlap="yes")
    assert e.value.field == "two_batch_overlap"


def test_server_load_stalls_the_attention_dp_group_on_the_busiest_ranks_prefill():
    """Under random arrivals with TensorRT-LLM's attention-DP balancer (py_executor
    _balance_adp_requests: held context requests released when every rank has one or after
    timeout_iters), a release iteration lasts the busiest rank's prompts and stalls the whole
    group (ADP scheduler blog, commit b107017): per token E[max of ep Poisson(a R)] x prefill / R
    replaces the rank's own b x prefill / output; one rank alone is `point` again."""
    import math

    from advisor.perf import expert_parallel as ep

    # E[max of n Poisson(mu)] against a direct sum over the joint distribution's tail
    assert ep._poisson_max_mean(0.7, 1) == pytest.approx(0.7)
    mu, n = 0.4, 8
    cdf = [sum(math.exp(-mu) * mu**i / math.factorial(i) for i in range(j + 1)) for j in range(30)]
    assert ep._poisson_max_mean(mu, n) == pytest.approx(sum(1 - c**n for c in cdf))
    assert ep._poisson_max_mean(mu, 8) > ep._poisson_max_mean(mu, 2) > mu
    # sparse arrivals wait for the timeout; dense ones release as soon as all ranks hold one
    assert ep.balancer_release_iters(0.01, ep=8, timeout_iters=6) == pytest.approx(6, rel=1e-3)
    assert ep.balancer_release_iters(20.0, ep=8, timeout_iters=6, batching_wait_iters=2) == (
        pytest.approx(3.0, rel=1e-3)
    )
    ds = CAT.model("deepseek-v3").spec
    gpu = CAT.gpu("gb300")
    kw = dict(input_tokens=804, output_tokens=3886, weights="nvfp4", kv_dtype="fp8")
    lay = ep.EPLayout(ep=8, domain=72)
    base = ep.point(ds, gpu, batch_per_gpu=256, layout=lay, **kw)
    srv = ep.server_point(ds, gpu, batch_per_gpu=256, layout=lay, timeout_iters=6, **kw)
    pf = ep.prefill_s(ds, gpu, prompt=804, weights="nvfp4", layout=lay)
    step = base.tpot_s - 256 * pf / 3886
    a = 256 / 3886
    r = ep.balancer_release_iters(a, ep=8, timeout_iters=6)
    assert srv.tpot_s == pytest.approx(step + ep._poisson_max_mean(a * r, 8) * pf / r)
    assert srv.tpot_s > base.tpot_s  # the group waits on more prompts than the rank's own
    # prompts of spread lengths: the busiest rank holds more tokens (a gamma law of that spread,
    # checked against a direct simulation: 1.654 mean prompts at mu 0.4 over 8 ranks, E[L^2] /
    # E[L]^2 1.2547, the MLPerf DeepSeek-R1 prompts; 1.659 by 20,000 draws)
    assert ep.busiest_prompt_tokens(0.4, 8, 1.2547) == pytest.approx(1.6537, abs=2e-3)
    # as a request sees its own release: its rank holds its prompt besides the others (1.9587
    # by 20,000 draws); alone it is its own prompt
    assert ep.busiest_prompt_tokens(0.4, 8, 1.2547, True) == pytest.approx(1.9635, abs=2e-3)
    assert ep.busiest_prompt_tokens(0.0, 8, 1.2547, True) == pytest.approx(1.0, abs=1e-6)
    assert ep.busiest_prompt_tokens(0.4, 8, 1.0, True) == pytest.approx(1.6973, abs=1e-3)
    spread = ep.server_point(
        ds, gpu, batch_per_gpu=256, layout=lay, timeout_iters=6, prompt_moment2=1.2547, **kw
    )
    assert spread.tpot_s > srv.tpot_s
    with pytest.raises(AdvisorError) as e:
        ep.server_point(
            ds, gpu, batch_per_gpu=8, layout=lay, timeout_iters=6, prompt_moment2=0.9, **kw
        )
    assert e.value.field == "prompt_moment2"
    assert srv.tokens_per_s_per_gpu == pytest.approx(256 / srv.tpot_s)
    p99 = ep.server_point(
        ds, gpu, batch_per_gpu=256, layout=lay, timeout_iters=6, ttft_quantile=0.99, **kw
    )
    assert p99.ttft_s - srv.ttft_s == pytest.approx(0.49 * r * srv.tpot_s)
    # one rank: its own prompts only, the rank's prefill share of `point`
    small = CAT.model("qwen3-30b-a3b").spec
    one = ep.EPLayout(ep=1, domain=72)
    alone = ep.server_point(small, gpu, batch_per_gpu=64, layout=one, timeout_iters=6, **kw)
    assert alone.tpot_s == pytest.approx(
        ep.point(small, gpu, batch_per_gpu=64, layout=one, **kw).tpot_s
    )
    with pytest.raises(AdvisorError) as e:
        ep.server_point(ds, gpu, batch_per_gpu=8, layout=lay, timeout_iters=0, **kw)
    assert e.value.field == "timeout_iters"


def test_two_batch_overlap_in_the_faces():
    from advisor import webapi

    kw = {"model": "deepseek-v3", "gpu": "b200", "gpus": 8, "weights": "fp8", "kv_dtype": "fp8"}
    on = webapi.serving({**kw, "ep": 8, "two_batch_overlap": True})
    off = webapi.serving({**kw, "ep": 8})
    assert on["expert_parallel"]["two_batch_overlap"] is True
    assert off["expert_parallel"]["two_batch_overlap"] is False
    assert on["curve"] != off["curve"]
    bad = webapi.run("serving", {"model": "llama-3.1-8b", "two_batch_overlap": True})
    assert (bad["error"]["field"], bad["error"]["key"]) == ("two_batch_overlap", "ep.needs_ep")
    from hooks.templating import load_strings
    from tests.conftest import ROOT

    strings = load_strings(ROOT / "templates" / "i18n")
    for lang in ("az", "en"):
        assert "err.ep.needs_ep" in strings[lang] and "calc.f.two_batch_overlap" in strings[lang]
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "time", "serve", "--model", "mixtral-8x7b",
         "--gpu", "h100-sxm", "--two-batch-overlap"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode != 0 and "--two-batch-overlap applies with --ep only" in out.stderr
    # DeepSeek-V3 in FP8 fills 8 H100s: one clear refusal, as the web API gives
    full = subprocess.run(
        [sys.executable, "-m", "advisor", "time", "serve", "--model", "deepseek-v3",
         "--gpu", "h100-sxm", "--ep", "8", "--weights", "fp8", "--kv-dtype", "fp8"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert full.returncode != 0 and "leave no room for one request's KV cache" in full.stderr


def test_two_batch_overlap_is_a_checkbox_on_the_serving_form():
    """The serving calculator's form offers two-batch overlap as an on/off field: render.mjs draws a
    checkbox (checked as the state says, links carry 1/0) and the web API reads a checkbox's
    true/false, a link's 1/0 and the words people type; any other value is refused naming the
    field, never read as on."""
    import shutil

    from advisor import webapi
    from tests.conftest import ROOT

    kw = {
        "model": "deepseek-v3",
        "gpu": "b200",
        "gpus": 8,
        "weights": "fp8",
        "kv_dtype": "fp8",
        "ep": 8,
    }
    for v, want in (
        (True, True),
        ("1", True),
        ("on", True),
        (False, False),
        ("0", False),
        ("", False),
    ):
        out = webapi.run("serving", {**kw, "two_batch_overlap": v})
        assert out["expert_parallel"]["two_batch_overlap"] is want, v
    for bad in ("maybe", 2, [1]):
        err = webapi.run("serving", {**kw, "two_batch_overlap": bad})["error"]
        assert (err["key"], err["field"]) == ("field.not_bool", "two_batch_overlap"), bad
    if shutil.which("node") is None:
        pytest.skip("needs Node.js")
    script = """
const m = await import(process.argv[1]);
const L = { models: [["deepseek-v3", "DeepSeek-V3"]], gpus: [["b200", "B200"]], networks: [], options: new Proxy({}, { get: () => [] }) };
const S = { lang: "en", "calc.f.two_batch_overlap": "Two-batch overlap" };
const out = [];
for (const v of [false, true, "1", "0"]) out.push(m.renderCalc("serving", { two_batch_overlap: v }, null, S, L));
process.stdout.write(JSON.stringify(out));
"""
    r = subprocess.run(
        ["node", "--input-type=module", "-e", script, (ROOT / "calcruntime/browser/render.mjs").as_uri()],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    pages = json.loads(r.stdout)
    box = '<input id="calc-serving-two_batch_overlap" name="two_batch_overlap" type="checkbox" value="1"'
    for page, checked in zip(pages, (False, True, True, False), strict=True):
        assert (
            box in page and '<label for="calc-serving-two_batch_overlap">Two-batch overlap' in page
        )
        assert (box + " checked>" in page) is checked
    js = (ROOT / "calcruntime/browser/calc.mjs").read_text(encoding="utf-8")
    assert 'el.type === "checkbox" ? el.checked : el.value' in js  # the state sent is true/false


def test_layer_list_moe_entries_are_counted_with_the_batch_rule_or_their_stated_batch():
    """The validator counts every layer-list MoE serving entry: at the batch its source states
    (SGLang's decode pool: 256 sequences, EP 72, two-batch overlap), else at the batch rule of
    the dense perf-overview entries (a perf-overview run holds at most its stated number of
    requests per attention-DP rank); TensorRT-LLM's carry the fitted MoE term, SGLang's not."""
    from bench import throughput_validation as tv

    entries = {e["id"]: e for e in tv._load_entries()}
    dec = entries["sglang-deepseek-v3-fp8-h100-pd-ep-decode-per-node"]
    pre = entries["sglang-deepseek-v3-fp8-h100-pd-ep-prefill-per-node"]
    po = entries["trtllm-po-deepseek-v3-fp8-h200-dep8-1024-1024"]
    assert tv._batch_stated(dec) and not tv._batch_stated(pre) and not tv._batch_stated(po)
    notes: list[str] = []
    assert tv._requests_per_rank(po, 8, notes) == 3000 // 8 and "3000 requests" in notes[0]
    assert tv._requests_per_rank(dec, 72, []) is None
    rows = {r["id"]: r for r in tv.evaluate([dec, pre, po], CAT)}
    for r in rows.values():
        assert r["expressible"] and r["moe_layer_list"] and "reason_key" not in r, r["id"]
    assert any("two-batch overlap" in n for n in rows[dec["id"]]["assumptions"])
    assert any("375 sequences per GPU" in n for n in rows[po["id"]]["assumptions"])
    assert rows[po["id"]]["trtllm_moe_factor"] == tv.eff.DEFAULT_STACK.trtllm_moe_factor
    for eid in (dec["id"], pre["id"]):  # SGLang: no TensorRT-LLM term
        assert "trtllm_moe_factor" not in rows[eid]
        assert not any("trtllm_moe_factor" in a for a in rows[eid]["assumptions"])


def test_mlperf_deepseek_offline_runs_at_their_configs_batch_are_counted_with_the_engine_term():
    """NVIDIA's MLPerf v5.1 DeepSeek-R1 Offline configs state gpu_batch_size and
    max_concurrency per DEP8 engine: B200 512 and 5120 (512 per rank), GB300 1536 and 10240
    (1280 per rank); predicted at that batch for the whole system with TensorRT-LLM's fitted
    MoE term, and counted."""
    from bench import throughput_validation as tv

    entries = {e["id"]: e for e in tv._load_entries()}
    b200 = entries["mlperf51-deepseek-r1-b200x8-offline"]
    gb300 = entries["mlperf51-deepseek-r1-gb300x72-offline"]
    assert tv._config_batch_per_rank(b200, 8, []) == 512
    assert tv._config_batch_per_rank(gb300, 8, []) == 1280
    rows = {r["id"]: r for r in tv.evaluate([b200, gb300], CAT)}
    for r in rows.values():
        assert r["expressible"] and r["trtllm_moe_factor"] > 1
        # the term lengthens the step: the prediction without it is faster (and further off)
        assert r["without_term_predicted"] > r["predicted"]
        assert abs(r["without_term_error"]) > abs(r["error"])
    assert any("512 sequences per rank" in n for n in rows[b200["id"]]["assumptions"])


def test_the_prefill_queue_is_pollaczek_khinchine_over_the_engines_token_budget():
    """The prefill is one M/G/1 server per replica (queueing module docstring, 3): its mean wait
    is lambda E[S^2] / (2 (1 - rho)) with rho = lambda S, S the prompt's prefill plus the decode
    steps of the iterations its chunks ride in; a smaller token budget or a wider spread of
    prompt lengths waits longer; the p99 is 0 while rho <= 1 %, else (W / rho) ln(100 rho)."""
    spec, gpu = CAT.model("llama-3.1-70b").spec, CAT.gpu("h100-sxm")
    kw = dict(input_tokens=4000, output_tokens=200, tensor_parallel=4, gpus=4, engine="vllm")
    rate = 0.5 * queueing.capacity(spec, gpu, **kw)
    p = queueing.at_rate(spec, gpu, request_rate=rate, **kw)
    # S from the steady-state point at the same concurrency (interpolated between whole ones)
    lo = int(p.concurrency)
    a, b = (serving.point(spec, gpu, concurrency=c, **kw) for c in (lo, lo + 1))
    f = p.concurrency - lo

    def share(pt):
        return kw["output_tokens"] * (pt.tpot_s - pt.decode_step_s) / pt.concurrency

    step = a.decode_step_s + f * (b.decode_step_s - a.decode_step_s)
    room = serving.MAX_NUM_BATCHED_TOKENS - p.concurrency
    s = share(a) + f * (share(b) - share(a)) + step * kw["input_tokens"] / room
    assert p.prefill_utilisation == pytest.approx(rate * s, rel=1e-9)
    assert p.prefill_wait_s == pytest.approx(rate * s * s / (2 * (1 - rate * s)), rel=1e-9)
    assert p.queue_wait_s >= p.prefill_wait_s
    # a budget below the prompt: whole iterations per chunk, a longer service and wait
    small = queueing.at_rate(spec, gpu, request_rate=rate, max_num_batched_tokens=1024, **kw)
    assert small.prefill_utilisation > p.prefill_utilisation
    assert small.prefill_wait_s > p.prefill_wait_s
    # prompts of spread lengths wait E[L^2]/E[L]^2 times as long
    spread = queueing.at_rate(spec, gpu, request_rate=rate, prompt_moment2=1.5, **kw)
    assert spread.prefill_wait_s == pytest.approx(1.5 * p.prefill_wait_s, rel=1e-9)
    q = queueing.prefill_wait_quantile_s(p, 0.99)
    rho = p.prefill_utilisation
    want = 0.0 if rho <= 0.01 else p.prefill_wait_s / rho * math.log(rho / 0.01)
    assert q == pytest.approx(want, rel=1e-9)


def test_multi_step_scheduling_gathers_the_prompts_into_one_batch_per_cycle():
    """vLLM's multi-step scheduling with chunked prefill off (queueing module docstring, 5; AMD's
    MLPerf v5.1 Llama 2 70B Server config: num_scheduler_steps 9, enable_chunked_prefill False):
    the cycle is S TPOT, the batch P = C - S t_d, and TTFT = the slot wait + C / 2 + P + the
    engine's per-request cost; TPOT and throughput are those of the plain queue."""
    spec, gpu = CAT.model("llama-2-70b").spec, CAT.gpu("h100-sxm")
    kw = dict(input_tokens=222, output_tokens=294, weights="fp8", kv_dtype="fp8", gpus=1)
    rate = 0.6 * queueing.capacity(spec, gpu, max_num_seqs=1024, **kw)
    plain = queueing.at_rate(spec, gpu, request_rate=rate, max_num_seqs=1024, **kw)
    p = queueing.at_rate(
        spec,
        gpu,
        request_rate=rate,
        max_num_seqs=1024,
        scheduler_steps=9,
        prefill_min_queue=10,
        **kw,
    )
    assert p.tpot_s == plain.tpot_s and p.concurrency == plain.concurrency
    lo = int(p.concurrency)
    a, b = (serving.point(spec, gpu, concurrency=c, **kw) for c in (lo, lo + 1))
    f = p.concurrency - lo
    step = a.decode_step_s + f * (b.decode_step_s - a.decode_step_s)
    cycle = 9 * p.tpot_s
    batch = cycle - 9 * step
    slot_wait = plain.queue_wait_s - plain.prefill_wait_s
    request = a.ttft_s - a.prefill_s - a.decode_step_s  # the engine's per-request cost
    assert p.ttft_s == pytest.approx(slot_wait + cycle / 2 + batch + request, rel=1e-6)
    # gathering waits half a cycle: longer than the plain queue's prefill wait here
    assert p.ttft_s > plain.ttft_s
    # the wait for the next batch is uniform on [0, C]: its p99 is 0.99 C
    assert p.prefill_cycle_s == pytest.approx(cycle, rel=1e-12)
    assert queueing.prefill_wait_quantile_s(p, 0.99) == pytest.approx(
        0.99 * cycle + p.prefill_wait_s - cycle / 2, rel=1e-9
    )
    assert plain.prefill_cycle_s == 0.0
    for bad, field in (
        ({"scheduler_steps": 0}, "scheduler_steps"),
        ({"prefill_min_queue": -1}, "prefill_min_queue"),
        ({"scheduler_steps": 2.5}, "scheduler_steps"),
    ):
        with pytest.raises(AdvisorError) as exc:
            queueing.at_rate(spec, gpu, request_rate=rate, **bad, **kw)
        assert exc.value.field == field


def test_a_rate_the_prefill_cannot_keep_up_with_is_refused_by_name():
    """Long prompts saturate the prefill before the slots: at_rate refuses such a rate naming
    request_rate with the prefill's rate as the maximum; max_rate stays below it."""
    spec, gpu = CAT.model("llama-3.1-70b").spec, CAT.gpu("h100-sxm")
    kw = dict(
        input_tokens=30000,
        output_tokens=100,
        tensor_parallel=4,
        gpus=4,
        engine="vllm",
        max_num_batched_tokens=512,
    )
    cap = queueing.capacity(spec, gpu, **kw)
    with pytest.raises(AdvisorError) as e:
        queueing.at_rate(spec, gpu, request_rate=0.999 * cap, **kw)
    assert e.value.field == "request_rate" and e.value.params["maximum"] < cap
    best = queueing.max_rate(spec, gpu, ttft_s=3600.0, **kw)
    assert best is not None and best.prefill_utilisation < 1.0
    with pytest.raises(AdvisorError) as e:
        queueing.at_rate(spec, gpu, request_rate=1.0, prompt_moment2=0.5, **kw)
    assert e.value.field == "prompt_moment2"


def test_offline_schedule_follows_trtllm_scheduler_walkthrough():
    """Golden, exact (a schedule): TensorRT-LLM docs/source/performance/performance-tuning-guide/
    tuning-max-batch-size-and-max-num-tokens.md (read 2026-12-06), "Understanding the
    TensorRT-LLM scheduler": max batch size 4, max num tokens 12, prompts of 5 tokens. Requests
    1 and 2 take 10 of the 12 tokens and the 2 left hold no further prompt; once they generate
    (1 token each) requests 3 and 4 join, and request 5 waits for the batch limit of 4 until a
    request ends (there request 1's second token is its stop token: 2 output tokens here)."""
    from advisor.perf import offline

    got = offline.schedule(5, max_batch=4, max_num_tokens=12, input_tokens=5, output_tokens=2)
    assert got[:3] == ((0, 2), (2, 2), (2, 1))
    assert sum(p for _, p in got) == 5 and got[-1][1] == 0
    with pytest.raises(AdvisorError) as e:
        offline.schedule(5, max_batch=4, max_num_tokens=4, input_tokens=5, output_tokens=2)
    assert e.value.field == "max_num_tokens"
    with pytest.raises(AdvisorError) as e:
        offline.schedule(
            1 << 20, max_batch=1, max_num_tokens=4096, input_tokens=8, output_tokens=4096
        )  # fmt: skip
    assert e.value.field == "requests_per_gpu"


def test_offline_run_ramps_and_drains_below_the_steady_state():
    """A job of as many requests as the batch never reaches the steady state at that batch
    (it ramps up one prompt per iteration under a 2048-token budget and drains); a job of many
    more requests comes close to it."""
    from advisor.perf import expert_parallel as ep

    kw = dict(
        max_batch=64, max_num_tokens=2048, input_tokens=1024, output_tokens=256,
        weights="fp8", kv_dtype="fp8", layout=ep.EPLayout(ep=8),
    )  # fmt: skip
    short = ep.offline_run(MOE, GPU, requests_per_gpu=64, **kw)
    long = ep.offline_run(MOE, GPU, requests_per_gpu=64 * 40, **kw)
    # two prompts fill the first iteration's 2048 tokens, then one joins per iteration beside
    # the generating sequences: the last joins in iteration 63 and leaves 255 iterations later
    assert short.iterations == 63 + 255 and short.mean_batch < 64
    assert short.tokens_per_s_per_gpu < long.tokens_per_s_per_gpu
    assert long.tokens_per_s_per_gpu < long.steady_tokens_per_s_per_gpu
    assert long.tokens_per_s_per_gpu > 0.85 * long.steady_tokens_per_s_per_gpu
    with pytest.raises(AdvisorError) as e:
        ep.offline_run(MOE, GPU, requests_per_gpu=10, **dict(kw, max_batch=60000))
    assert e.value.field == "batch_per_gpu"


def test_trtllm_bench_max_num_tokens_follows_its_rule():
    """trtllm-bench's finetune_setting rounding and get_settings' prompt-plus-batch floor
    (tensorrt_llm/bench/build/tuning.py, benchmark/utils/general.py; exact)."""
    from bench import throughput_validation as tv

    assert tv.trtllm_bench_max_num_tokens(750, 1024, 1024) == 2048  # 1500 -> floor 2048
    assert tv.trtllm_bench_max_num_tokens(1500, 1024, 1024) == 3072  # 3000 -> 256s
    assert tv.trtllm_bench_max_num_tokens(500, 1024, 1024) == 2048
    assert tv.trtllm_bench_max_num_tokens(238, 8192, 1024) == 8192 + 238  # prompt + batch
    assert tv.trtllm_bench_max_num_tokens(3000, 1024, 1024) == 6144  # 6000 -> 512s


def test_offline_serving_run_tends_to_the_steady_state():
    """advisor.perf.offline.serving_run: a dense job of many more requests than its batch
    comes within a few per cent of serving.point at that batch; one of as many requests as the
    batch is below it (ramp and drain)."""
    from advisor.perf import offline

    spec70 = CAT.model("llama-3.1-70b").spec
    kw = dict(
        max_batch=128, max_num_tokens=2048, input_tokens=1024, output_tokens=512,
        weights="fp8", kv_dtype="fp8", tensor_parallel=2, engine="trtllm",
    )  # fmt: skip
    long = offline.serving_run(spec70, GPU, requests=128 * 30, **kw)
    short = offline.serving_run(spec70, GPU, requests=128, **kw)
    assert 0.9 * long.steady_tokens_per_s_per_gpu < long.tokens_per_s_per_gpu
    assert long.tokens_per_s_per_gpu <= long.steady_tokens_per_s_per_gpu * 1.0001
    assert short.tokens_per_s_per_gpu < 0.95 * short.steady_tokens_per_s_per_gpu
    assert short.mean_batch < 128 < short.iterations


def test_perf_overview_moe_runs_are_predicted_as_their_finite_job():
    """The perf overview's DEP runs queue 3000 fixed-length requests at once (750 per rank at
    DEP4): the validator predicts the job (advisor.perf.offline), below the steady state at the
    same batch, and counts the entry (the batch rule stands for the one trtllm-bench chose)."""
    from bench import throughput_validation as tv

    entries = {e["id"]: e for e in tv._load_entries()}
    e = entries["trtllm-po-deepseek-v3-fp4-b200-dep4-1024-1024"]
    row = tv.evaluate([e], CAT)[0]
    assert row["expressible"]
    job = [a for a in row["assumptions"] if a.startswith("offline job of 750 requests")]
    assert job and "max_num_tokens 2048" in job[0]
    steady = float(job[0].split("against ")[1].split()[0])
    assert row["metric"] == "tokens_per_s_per_gpu"
    per_gpu = row["predicted"]
    assert per_gpu < 0.95 * steady


def test_offline_run_interpolates_the_decode_step_within_one_per_cent():
    """advisor.perf.offline.run evaluates the decode step at STEP_NODES + 1 batch sizes and
    interpolates between them: within 1 % of the job timed at every batch it passes through
    (an MoE EP step with its expert-touch curve, a dense TP step)."""
    from advisor.perf import expert_parallel as ep
    from advisor.perf import offline, serving

    lay = ep.EPLayout(ep=8)
    spec70 = CAT.model("llama-3.1-70b").spec
    steps = (
        lambda n: ep.decode_step(
            MOE, GPU, batch=n, context=1536, weights="fp8", kv_dtype="fp8", layout=lay
        )["seconds"],
        lambda n: serving.point(
            spec70, GPU, concurrency=n, input_tokens=1024, output_tokens=1024, weights="fp8",
            kv_dtype="fp8", tensor_parallel=2, engine="trtllm",
        ).decode_step_s,
    )  # fmt: skip
    for f in steps:
        kw = dict(
            max_batch=700, max_num_tokens=2048, input_tokens=1024, output_tokens=1024,
            decode_step_s=f, prefill_per_prompt_s=0.02, steady_tokens_per_s_per_gpu=1.0,
        )  # fmt: skip
        fast = offline.run(1500, **kw)
        exact = offline.run(1500, exact_steps=True, **kw)
        assert fast.seconds == pytest.approx(exact.seconds, rel=0.01)


@pytest.mark.skipif(__import__("shutil").which("node") is None, reason="needs Node.js")
def test_the_serving_calculator_names_the_fitted_trtllm_moe_factor_in_both_languages():
    """The serving calculator's result (render.mjs `renderResult` under Node, the build's strings)
    says that TensorRT-LLM's MoE layers are timed with the fitted factor and gives its band;
    with vLLM the line is absent."""
    import html

    from advisor import webapi
    from hooks.templating import load_strings
    from tests.conftest import ROOT

    base = dict(model="gpt-oss-120b", gpu="h100-sxm", weights="mxfp4", input_tokens=1024,
                output_tokens=1024)  # fmt: skip
    trt = json.loads(webapi.dumps(webapi.run("serving", {**base, "engine": "trtllm"})))
    plain = json.loads(webapi.dumps(webapi.run("serving", base)))
    band = trt["engine_moe"]["band"]
    assert band and plain["engine_moe"] is None
    script = """
const m = await import(process.argv[1]);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { results, strings, lang } = JSON.parse(input);
process.stdout.write(JSON.stringify(results.map((r) => m.renderResult("serving", r, { ...strings, lang }))));
"""
    all_strings = load_strings(ROOT / "templates" / "i18n")
    want = {
        "en": ("TensorRT-LLM: its MoE layers", "2 times"),
        "az": ("TensorRT-LLM: onun MoE", "2 misli"),
    }
    for lang, (head, factor) in want.items():
        strings = {k: v for k, v in all_strings[lang].items() if k.startswith(("calc.", "err."))}
        r = subprocess.run(
            ["node", "--input-type=module", "-e", script, (ROOT / "calcruntime/browser/render.mjs").as_uri()],
            input=json.dumps({"results": [trt, plain], "strings": strings, "lang": lang}),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        with_term, without = (html.unescape(p) for p in json.loads(r.stdout))
        line = with_term[with_term.index('data-out="engine_moe"') :].split("</p>")[0]
        assert head in line and factor in line, line
        assert str(band["n"]) in line
        assert 'data-out="engine_moe"' not in without


def test_mlperf_deepseek_runs_carry_the_adp_blogs_measured_batch_and_balance():
    """NVIDIA's MLPerf v5.1 DeepSeek-R1 runs (attention DP) carry the two effects TensorRT-LLM's
    ADP scheduler blog measured on their GB200 config (docs/source/blogs/tech_blog/bloc_x_adp-
    scheduler-opt.md): 241.7 of 512 generated tokens per rank per iteration, and 34,140 of the
    speed of light's 39,552 tok/s with the balancer on. Only those runs; the Offline prediction
    is the point at the mean batch times the balance."""
    from advisor.perf import expert_parallel as epm
    from bench import throughput_validation as tv

    assert round(tv.ADP_MEAN_BATCH_FRACTION, 3) == 0.472  # 241.7 / 512
    assert round(tv.ADP_BALANCE_EFFICIENCY, 3) == 0.863  # 34,140 / 39,552
    entries = {e["id"]: e for e in tv._load_entries()}
    off = entries["mlperf51-deepseek-r1-b200x8-offline"]
    srv = entries["mlperf51-deepseek-r1-gb300x72-server"]
    assert tv._mlperf_deepseek_adp(off) and tv._mlperf_deepseek_adp(srv)
    assert not any(tv._mlperf_deepseek_adp(e) for i, e in entries.items() if "deepseek-r1" not in i)
    notes: list[str] = []
    pred = tv.PREDICT[off["kind"]](off, CAT, notes)
    assert any("bloc_x_adp-scheduler-opt.md" in n and "mean decode batch 242" in n for n in notes)
    w = off["workload"]
    p = epm.point(
        tv._model(CAT, w, []),
        tv._gpu(CAT, w, []),
        batch_per_gpu=242,
        input_tokens=int(w["input_tokens"]),
        output_tokens=int(w["output_tokens"]),
        weights=tv._weights(w),
        kv_dtype=w.get("kv_dtype") or "fp8",
        layout=epm.EPLayout(ep=int(w["expert_parallel"]), domain=8),
        activations=w.get("activations"),
        engine="trtllm",
    )
    # the whole system's tokens/s: 8 GPUs x the point at 242 per rank x the balance
    assert pred == pytest.approx(8 * tv.ADP_BALANCE_EFFICIENCY * p.tokens_per_s_per_gpu, rel=1e-9)
    snotes: list[str] = []
    assert tv.PREDICT[srv["kind"]](srv, CAT, snotes) > 0
    assert any("bloc_x_adp-scheduler-opt.md" in n for n in snotes)


def test_without_cuda_graphs_every_iteration_waits_the_host():
    """serving.point(cuda_graphs=False): each decode step (the iteration the prompt chunks ride
    in) waits efficiency.Stack.eager_iteration_ms more, so TPOT and TTFT grow by exactly that and
    the throughput falls; the default (CUDA graphs) is unchanged."""
    from advisor.perf import efficiency as eff

    spec, gpu = CAT.model("llama-2-70b").spec, CAT.gpu("b200")
    kw = dict(input_tokens=222, output_tokens=273, weights="nvfp4", kv_dtype="fp8")
    extra = eff.DEFAULT_STACK.eager_iteration_ms * 1e-3
    assert extra > 0
    for c in (1, 256, 1536):
        graphs = serving.point(spec, gpu, concurrency=c, engine="trtllm", **kw)
        eager = serving.point(spec, gpu, concurrency=c, engine="trtllm", cuda_graphs=False, **kw)
        assert eager.decode_step_s == pytest.approx(graphs.decode_step_s + extra)
        assert eager.tpot_s == pytest.approx(graphs.tpot_s + extra)
        assert eager.ttft_s == pytest.approx(graphs.ttft_s + extra)
        assert eager.tokens_per_s < graphs.tokens_per_s
    assert serving.point(spec, gpu, concurrency=8, **kw) == serving.point(
        spec, gpu, concurrency=8, cuda_graphs=True, **kw
    )


def test_a_scheduler_that_admits_while_blocks_remain_counts_the_mean_context():
    """serving.max_concurrency(kv_on_demand=True) (TensorRT-LLM's MAX_UTILIZATION): the KV-cache
    limit counts each running request at input + output / 2 tokens, the same as reserving that
    context up front, and more requests than reserving the whole context; queueing takes it for
    its slots."""
    spec, gpu = CAT.model("llama-2-70b").spec, CAT.gpu("b200")
    kw = dict(weights="nvfp4", kv_dtype="fp8", engine="trtllm")
    whole = serving.max_concurrency(spec, gpu, input_tokens=222, output_tokens=273, **kw)
    mean = serving.max_concurrency(
        spec, gpu, input_tokens=222, output_tokens=273, kv_on_demand=True, **kw
    )
    same = serving.max_concurrency(spec, gpu, input_tokens=222 + 137, output_tokens=0, **kw)
    assert mean == same > whole
    qkw = dict(input_tokens=222, output_tokens=273, **kw)
    assert queueing._setup(spec, gpu, dict(qkw, kv_on_demand=True), 1 << 15).top == mean
    assert queueing._setup(spec, gpu, dict(qkw), 1 << 15).top == whole


def test_cuda_graph_padding_rounds_the_batch_up_to_the_next_captured_size():
    """timing.padded_batch: the smallest captured size at least the batch (TensorRT-LLM's
    `enable_padding`, tech blog 20), the batch itself without sizes or above the largest."""
    from advisor.perf import timing

    sizes = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048)
    assert timing.padded_batch(631, sizes) == 1024
    assert timing.padded_batch(512, sizes) == 512
    assert timing.padded_batch(257, sizes) == 384
    assert timing.padded_batch(3000, sizes) == 3000
    assert timing.padded_batch(631, None) == 631
    assert timing.check_graph_batch_sizes([512, 1, 512, 64]) == (1, 64, 512)
    for bad in ("1,2", [0, 4], [2.5], 7):
        with pytest.raises(AdvisorError) as ei:
            timing.check_graph_batch_sizes(bad)
        assert ei.value.field == "cuda_graph_batch_sizes"


def test_a_padded_decode_step_runs_its_gemms_over_the_empty_slots_not_its_kv_read():
    """A step of 631 sequences replayed in the 1024 graph: GEMMs, element-wise kernels and head
    as at 1024 sequences, the KV-cache read and attention core as at 631 (timing.decode_step_time
    `graph_batch`); serving.point and expert_parallel.decode_step pass the sizes through, and a
    batch equal to a captured size is not padded."""
    from advisor.perf import efficiency as eff
    from advisor.perf import expert_parallel as ep
    from advisor.perf import timing

    spec, gpu = CAT.model("gpt-oss-20b").spec, CAT.gpu("h100-sxm")
    stack = eff.DEFAULT_STACK
    dev = timing.Device.of(gpu, timing.matmul_peak_key(gpu, "mxfp4", "bf16"), stack)
    kw = dict(context=1536, weights="mxfp4", kv_bytes=2, tp=1, tp_fabric=None)
    real = timing.decode_step_time(spec, dev, stack, batch=631, **kw)
    wide = timing.decode_step_time(spec, dev, stack, batch=1024, **kw)
    padded = timing.decode_step_time(spec, dev, stack, batch=631, graph_batch=1024, **kw)
    assert padded["gemm_s"] == pytest.approx(wide["gemm_s"])
    assert padded["head_s"] == pytest.approx(wide["head_s"])
    assert padded["attention_s"] == pytest.approx(real["attention_s"])
    assert padded["kv_read_bytes"] == pytest.approx(real["kv_read_bytes"])
    assert real["seconds"] < padded["seconds"] < wide["seconds"]

    sizes = (256, 512, 1024)
    pkw = dict(input_tokens=1024, output_tokens=1024, weights="mxfp4", activations="bf16",
               engine="trtllm")  # fmt: skip
    plain = serving.point(spec, gpu, concurrency=631, **pkw)
    graphs = serving.point(spec, gpu, concurrency=631, cuda_graph_batch_sizes=sizes, **pkw)
    assert graphs.decode_step_s > plain.decode_step_s
    assert graphs.tokens_per_s_per_gpu < plain.tokens_per_s_per_gpu
    on_size = serving.point(spec, gpu, concurrency=512, cuda_graph_batch_sizes=sizes, **pkw)
    assert on_size == serving.point(spec, gpu, concurrency=512, **pkw)
    # without CUDA graphs nothing is padded
    eager = dict(pkw, cuda_graphs=False)
    assert serving.point(
        spec, gpu, concurrency=631, cuda_graph_batch_sizes=sizes, **eager
    ) == serving.point(spec, gpu, concurrency=631, **eager)

    spec120 = CAT.model("gpt-oss-120b").spec
    lay = ep.EPLayout(ep=4)
    ekw = dict(context=1536, weights="mxfp4", kv_dtype="bf16", layout=lay, activations="bf16")
    step = ep.decode_step(spec120, gpu, batch=600, **ekw)
    pad = ep.decode_step(spec120, gpu, batch=600, graph_batch_sizes=sizes, **ekw)
    at_1024 = ep.decode_step(spec120, gpu, batch=1024, **ekw)
    assert pad["experts_s"] == pytest.approx(at_1024["experts_s"])
    assert pad["all_to_all_s"] == pytest.approx(at_1024["all_to_all_s"])
    assert step["seconds"] < pad["seconds"] < at_1024["seconds"]


def test_perf_overview_runs_replay_the_pages_cuda_graph_sizes():
    """The perf overview's llm_options capture CUDA graphs with padding: its entries carry the
    sizes (an assumption line), other sources do not."""
    from bench import throughput_validation as tv

    entries = {e["id"]: e for e in tv._load_entries()}
    for eid in (
        "trtllm-po-gpt-oss-20b-fp8-h100-sxm-tp1-1024-1024",
        "trtllm-po-gpt-oss-120b-fp8-h100-sxm-dep4-1024-1024",
    ):
        row = tv.evaluate([entries[eid]], CAT, before=False)[0]
        assert row["expressible"]
        assert any("CUDA graphs with padding" in a for a in row["assumptions"])
    notes: list[str] = []
    other = next(e for e in entries.values() if "perf-overview" not in e["source"]["url"])
    assert tv._graph_sizes(other, notes) is None and not notes
    assert tv.TRTLLM_PERF_OVERVIEW_GRAPH_SIZES[-4:] == (1024, 2048, 4096, 8192)


# gpt-oss-120b (config.json, openai/gpt-oss-120b): 36 layers, 8 KV heads of 64, every other
# layer a 128-token sliding window. KV elements per token and layer: 2 x 8 x 64 = 1024.
GPT_OSS = CAT.model("gpt-oss-120b").spec


def test_engine_keeps_window_rule():
    """advisor.memory.estimate.engine_keeps_window: vLLM V1's hybrid KV cache manager keeps the
    window on sliding layers (docs/design/hybrid_kv_cache_manager.md); TensorRT-LLM keeps the
    whole context unless the run states a per-layer max_attention_window (KvCacheConfig's
    default None; PR #4667's pools per window size only for a per-layer list)."""
    from advisor.memory import estimate as mem

    assert mem.engine_keeps_window("vllm") is True
    assert mem.engine_keeps_window("trtllm") is False
    assert mem.engine_keeps_window("trtllm", per_layer_window=True) is True
    with pytest.raises(AdvisorError) as exc:
        mem.engine_keeps_window("sglang-x")
    assert exc.value.field == "engine"


def test_sequence_kv_bytes_whole_and_windowed_by_hand():
    """gpt-oss-120b, 2048 tokens, FP8 KV (1 byte): whole context 36 x 1024 x 2048 bytes;
    windowed 18 full layers x 2048 + 18 sliding layers x 128 tokens, smaller; block rounding
    rounds each layer's tokens up to whole blocks; tensor parallelism splits the heads."""
    from advisor.memory import estimate as mem

    assert GPT_OSS.num_sliding_layers == 18 and GPT_OSS.sliding_window == 128
    whole = mem.sequence_kv_bytes(GPT_OSS, 2048, "fp8", windowed=False)
    windowed = mem.sequence_kv_bytes(GPT_OSS, 2048, "fp8", windowed=True)
    assert whole == 36 * 1024 * 2048
    assert windowed == 18 * 1024 * 2048 + 18 * 1024 * 128
    assert windowed < whole
    # below the window nothing differs
    assert mem.sequence_kv_bytes(GPT_OSS, 100, "fp8", windowed=True) == 36 * 1024 * 100
    # blocks of 16: 2050 tokens take 129 blocks on full layers, 8 on sliding ones
    blocked = mem.sequence_kv_bytes(GPT_OSS, 2050, "fp8", windowed=True, block_size=16)
    assert blocked == 18 * 1024 * 129 * 16 + 18 * 1024 * 8 * 16
    assert (
        mem.sequence_kv_bytes(GPT_OSS, 2048, "fp8", windowed=False, tensor_parallel=2) == whole // 2
    )
    # a model with no sliding layer: the same either way
    assert mem.sequence_kv_bytes(SPEC, 2048, windowed=True) == mem.sequence_kv_bytes(
        SPEC, 2048, windowed=False
    )


def test_both_paths_count_a_sequence_by_the_same_rule():
    """The expert-parallel path (expert_parallel.max_batch_per_gpu) and the tensor-parallel
    path (serving.max_concurrency -> memory.serving_capacity) divide their free memory by the
    same per-sequence bytes for the same engine: TensorRT-LLM counts gpt-oss's sliding layers
    at the whole context in both, vLLM at the window in both."""
    from advisor.memory import estimate as mem
    from advisor.perf import expert_parallel as ep

    gpu = CAT.gpu("h100-sxm")
    layout = ep.EPLayout(ep=4)
    kw = dict(weights="mxfp4", kv_dtype="fp8")
    ctx = 2048
    free = gpu.memory_bytes * 0.9 - ep.weight_bytes_per_gpu(GPT_OSS, "mxfp4", layout)
    caps = {}
    for engine, windowed in (("trtllm", False), ("vllm", True)):
        per_seq = mem.sequence_kv_bytes(GPT_OSS, ctx, "fp8", windowed=windowed)
        ep_cap = ep.max_batch_per_gpu(GPT_OSS, gpu, context=ctx, layout=layout, engine=engine, **kw)
        assert ep_cap == int(free // per_seq)
        cap = mem.serving_capacity(GPT_OSS, gpu.memory_bytes, context=ctx, engine=engine, **kw)
        blocked = mem.sequence_kv_bytes(GPT_OSS, ctx, "fp8", windowed=windowed, block_size=16)
        assert cap.max_concurrent_sequences == cap.kv_budget_bytes // blocked
        tp_cap = serving.max_concurrency(
            GPT_OSS, gpu, input_tokens=1024, output_tokens=1024, engine=engine, **kw
        )
        caps[engine] = (ep_cap, tp_cap)
    # TensorRT-LLM holds fewer sequences than vLLM on both paths (whole context vs window)
    assert caps["trtllm"][0] < caps["vllm"][0] and caps["trtllm"][1] < caps["vllm"][1]
    # TensorRT-LLM on the TP path: every layer at the whole context, as kv_cache_bytes_per_token
    cap = mem.serving_capacity(GPT_OSS, gpu.memory_bytes, context=ctx, engine="trtllm", **kw)
    assert cap.max_concurrent_sequences == cap.kv_budget_bytes // (36 * 1024 * 16) // (ctx // 16)


def test_callers_without_an_engine_keep_their_count():
    """No engine: the EP path keeps counting sliding layers at their window (as before the
    rule), serving_capacity (the memory calculator's plan) every layer at the whole context."""
    from advisor.memory import estimate as mem
    from advisor.perf import expert_parallel as ep

    gpu = CAT.gpu("h100-sxm")
    kw = dict(context=2048, weights="mxfp4", kv_dtype="fp8", layout=ep.EPLayout(ep=4))
    assert ep.max_batch_per_gpu(GPT_OSS, gpu, **kw) == ep.max_batch_per_gpu(
        GPT_OSS, gpu, engine="vllm", **kw
    )
    assert ep.max_batch_per_gpu(GPT_OSS, gpu, **kw) > ep.max_batch_per_gpu(
        GPT_OSS, gpu, engine="trtllm", **kw
    )
    plain = mem.serving_capacity(GPT_OSS, gpu.memory_bytes, context=2048, weights="mxfp4")
    trt = mem.serving_capacity(
        GPT_OSS, gpu.memory_bytes, context=2048, weights="mxfp4", engine="trtllm"
    )
    assert plain == trt
