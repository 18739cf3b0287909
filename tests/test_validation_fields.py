"""Published entries whose missing field was read in a source (issue 35, MLPerf Inference v5.0):
the validator uses the field as stated, and a field the time model cannot express (a pipeline-
parallel layout, a per-layer mix of weight formats) is refused with its own reason, not as
"not stated"."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from advisor.data.catalog import load_catalog
from advisor.perf import queueing, serving

CAT = load_catalog()
ROOT = Path(__file__).resolve().parents[1]


def _entries():
    from bench import throughput_validation as tv

    return {e["id"]: e for e in tv._load_entries()}


def test_mlperf_server_latencies_are_predicted_at_the_logged_arrival_rate():
    """A mean TTFT/TPOT logged by an MLPerf Server run is predicted at the run's scheduled rate
    (LoadGen's Poisson schedule, stated as `request_rate`) with the engine's stated max batch
    as the slots per replica, the stated token budget, no CUDA graphs and the MAX_UTILIZATION
    scheduler's KV-cache limit: exactly queueing.at_rate with those arguments."""
    from bench import throughput_validation as tv

    e = _entries()["mlperf50-llama-2-70b-b200x8-server-tpot-mean"]
    w = e["workload"]
    assert w["request_rate"] == 364.33 and w["max_batch_size"] == 2048
    assert "Scheduled samples per second : 364.33" in w["request_rate_source"]
    notes: list[str] = []
    got = tv.predict_latency(e, CAT, notes)
    p = queueing.at_rate(
        CAT.model("llama-2-70b").spec,
        CAT.gpu("b200"),
        request_rate=364.33,
        max_num_seqs=2048,
        input_tokens=w["input_tokens"],
        output_tokens=w["output_tokens"],
        weights="nvfp4",
        kv_dtype="fp8",
        tensor_parallel=1,
        gpus=8,
        engine="trtllm",
        max_num_batched_tokens=3584,
        prompt_moment2=w["input_tokens_moment2"],
        cuda_graphs=False,
        kv_on_demand=True,
    )
    assert got == pytest.approx(p.tpot_s * 1e3)
    assert any("the stated schedule" in n for n in notes)
    assert any("no CUDA graphs" in n for n in notes)
    assert any("capacity scheduler max_util" in n for n in notes)
    assert any("2048 slots per replica" in n for n in notes)


def test_an_entry_without_a_stated_rate_or_concurrency_still_says_so():
    from bench import throughput_validation as tv

    e = _entries()["mlperf50-llama-2-70b-b200x8-server-ttft-mean"]
    bare = dict(e, workload={k: v for k, v in e["workload"].items() if k != "request_rate"})
    with pytest.raises(tv.NotExpressible) as exc:
        tv.predict_latency(bare, CAT, [])
    assert exc.value.key == "concurrency_unstated"


@pytest.mark.parametrize(
    "eid, tp, pp",
    [
        ("mlperf50-llama-2-70b-99-h100x8-offline", 1, 2),
        ("mlperf50-llama-3.1-405b-b200x8-offline", 2, 2),
    ],
)
def test_pipeline_parallel_serving_is_predicted_with_its_stages(eid, tp, pp):
    """NVIDIA's v5.0 configs run Llama 2 70B on H100 as TP1 x PP2 and Llama 3.1 405B on B200 as
    TP2 x PP2: both are predicted with TP x PP replicas (advisor.perf.serving's pipeline
    stages), exactly serving.point with the stated layout."""
    from bench import throughput_validation as tv

    e = _entries()[eid]
    w = e["workload"]
    assert w["tensor_parallel"] == tp and w["pipeline_parallel"] == pp
    (row,) = tv.evaluate([e], CAT)
    assert row["expressible"], row.get("reason")
    assert any(f"pipeline parallel {pp}" in a for a in row["assumptions"])


def test_the_engine_max_batch_caps_an_offline_replica():
    """The 405B TP2 x PP2 engine's gpu_batch_size 128 (the harness config) caps the sequences
    in flight per replica below the KV-cache limit; the harness runs without CUDA graphs."""
    from bench import throughput_validation as tv

    e = _entries()["mlperf50-llama-3.1-405b-b200x8-offline"]
    notes: list[str] = []
    got = tv.predict_serving(e, CAT, notes)
    assert any("stated max batch 128" in n for n in notes)
    w = e["workload"]
    p = serving.point(
        CAT.model("llama-3.1-405b").spec,
        CAT.gpu("b200"),
        concurrency=128,
        input_tokens=w["input_tokens"],
        output_tokens=w["output_tokens"],
        weights="nvfp4",
        kv_dtype="fp8",
        tensor_parallel=2,
        pipeline_parallel=2,
        gpus=8,
        engine="trtllm",
        cuda_graphs=False,
    )
    assert got == pytest.approx(p.tokens_per_s)


def test_a_per_layer_mix_of_weight_formats_is_predicted_as_its_shares():
    """NVIDIA's v5.0 Mixtral config asks ModelOpt's per-layer search for 7.25 effective bits:
    predicted as 18.75 % NVFP4 and 81.25 % FP8 of the linear weights (serving.mixed_point)."""
    from bench import throughput_validation as tv

    e = _entries()["mlperf50-mixtral-8x7b-b200x8-offline"]
    assert e["workload"]["weights"] is None and e["workload"]["weights_effective_bits"] == 7.25
    (row,) = tv.evaluate([e], CAT)
    assert row["expressible"], row.get("reason")
    assert any("18.8% nvfp4, 81.2% fp8" in a for a in row["assumptions"])


def test_fields_read_in_a_config_name_it_and_the_new_reasons_are_translated():
    entries = _entries()
    for eid in (
        "mlperf50-llama-2-70b-b200x8-offline",
        "mlperf50-llama-2-70b-b200x8-server",
        "mlperf50-llama-2-70b-interactive-b200x8-server",
        "mlperf50-llama-2-70b-mi325x8-server",
        "mlperf50-llama-2-70b-99-h100x8-offline",
    ):
        w = entries[eid]["workload"]
        assert w["tensor_parallel"] is not None, eid
        assert w["settings_source"].startswith("https://github.com/"), eid
        assert "read 2026-12-06" in w["settings_source"], eid
    for lang in ("en", "az"):
        strings = yaml.safe_load((ROOT / f"templates/i18n/{lang}.yaml").read_text("utf-8"))
        assert "{pp}" in strings["tv.reason.pipeline_parallel"]
        assert "{bits}" in strings["tv.reason.mixed_precision"]


def test_mlperf_server_with_expert_parallelism_is_predicted_and_counted():
    """NVIDIA's v5.1 DeepSeek-R1 Server on GB300 NVL72 (DEP8, 512 slots per rank read in its
    config): predicted as the largest Poisson rate within the p99 limits with each attention-
    DP rank a queue of 512 slots, on TensorRT-LLM's MoE step (the fitted
    efficiency.Stack.trtllm_moe_factor) with the measured attention-DP balance, and counted with the other layer-list MoE serving
    entries."""
    from bench import throughput_validation as tv

    e = _entries()["mlperf51-deepseek-r1-gb300x72-server"]
    assert e["workload"]["max_batch_size"] == 512
    assert "gpu_batch_size" in e["workload"]["max_batch_size_source"]
    notes: list[str] = []
    got = tv.predict_serving(e, CAT, notes)
    assert any("a queue of 512 slots" in n for n in notes)
    b = int(notes[-1].split(" in flight")[0].rsplit(" ", 1)[-1])
    assert 1 <= b <= 512
    from advisor.perf import expert_parallel as epm

    # the config's attention-DP balancer (timeout 6, batching wait 2 iterations) under random
    # arrivals: the group stalls on the busiest rank's prompts (expert_parallel.server_point),
    # the prompts of the dataset's spread, the first token at the p99 of the release wait
    w = e["workload"]
    assert (w["adp_balancing_timeout_iters"], w["adp_balancing_batching_wait_iters"]) == (6, 2)
    assert '"adp_balancing_timeout_iters: 6"' in w["adp_balancing_source"]
    assert w["input_tokens_moment2"] == 1.2547
    assert any("attention-DP balancer timeout 6 and batching wait 2" in n for n in notes)
    p = epm.server_point(
        CAT.model("deepseek-v3").spec,
        CAT.gpu("gb300"),
        batch_per_gpu=b,
        input_tokens=804,
        output_tokens=w["output_tokens"],
        weights="nvfp4",
        kv_dtype="fp8",
        layout=epm.EPLayout(ep=8, domain=8),
        timeout_iters=6,
        batching_wait_iters=2,
        prompt_moment2=1.2547,
        ttft_quantile=0.99,
        engine="trtllm",
        cuda_graph_batch_sizes=tuple(w["cuda_graph_batch_sizes"]),
    )
    plain = epm.point(
        CAT.model("deepseek-v3").spec,
        CAT.gpu("gb300"),
        batch_per_gpu=b,
        input_tokens=804,
        output_tokens=w["output_tokens"],
        weights="nvfp4",
        kv_dtype="fp8",
        layout=epm.EPLayout(ep=8, domain=8),
        engine="trtllm",
    )
    assert p.tpot_s > plain.tpot_s and p.ttft_s > plain.ttft_s
    # with the attention-DP balance TensorRT-LLM's ADP scheduler blog measured on NVIDIA's
    # MLPerf DeepSeek-R1 config (34,140 of 39,552 tok/s: tv.ADP_BALANCE_EFFICIENCY)
    eff = tv.ADP_BALANCE_EFFICIENCY
    assert any("bloc_x_adp-scheduler-opt.md" in n for n in notes)
    assert p.tpot_s / eff * tv._mlperf_tpot_tail([]) <= 0.080
    assert got == pytest.approx(72 * eff * p.tokens_per_s_per_gpu)
    (row,) = tv.evaluate([e], CAT)
    assert row["expressible"] and row["error"] == pytest.approx(got / e["value"] - 1)
    assert row["trtllm_moe_factor"] > 1 and any(
        "trtllm_moe_factor" in n for n in row["assumptions"]
    )
    # without the term the same queue is faster: the term lengthens the step
    assert row["without_term_predicted"] > row["predicted"]


NVIDIA_B200_LLAMA2 = (
    "mlperf50-llama-2-70b-b200x8-offline",
    "mlperf50-llama-2-70b-b200x8-server",
    "mlperf50-llama-2-70b-b200x8-server-ttft-mean",
    "mlperf50-llama-2-70b-b200x8-server-tpot-mean",
    "mlperf50-llama-2-70b-interactive-b200x8-server",
    "mlperf50-llama-2-70b-interactive-b200x8-tpot-mean",
    "mlperf51-llama-2-70b-b200x8-offline",
    "mlperf51-llama-2-70b-b200x8-interactive",
)


NVIDIA_TRTLLM_EAGER = NVIDIA_B200_LLAMA2 + (
    "mlperf50-mixtral-8x7b-b200x8-offline",
    "mlperf50-llama-3.1-405b-b200x8-offline",
    "mlperf51-llama-3.1-405b-gb300x72-offline",
    "mlperf51-llama-3.1-405b-gb300x72-server",
    "mlperf51-llama-3.1-405b-gb200x72-interactive",
    "mlperf51-llama-3.1-405b-b200x8-server",
)


def test_no_cuda_graphs_and_max_util_are_read_in_nvidias_config_and_only_there():
    """NVIDIA's MLPerf TensorRT-LLM configs state `harness_fields.use_graphs: False` and
    `'batch_scheduler_policy': 'max_util'` (mlcommons/inference_results_v5.1 965182b, read
    2026-12-06; assumed for v5.0, whose base class is not stored): those entries carry both,
    with the config as their source, and no other entry takes the fitted per-iteration term."""
    entries = _entries()
    for eid in NVIDIA_TRTLLM_EAGER:
        w = entries[eid]["workload"]
        assert w["cuda_graphs"] is False and "use_graphs: False" in w["cuda_graphs_source"], eid
        assert w["batch_scheduler_policy"] == "max_util", eid
        assert "965182b" in w["cuda_graphs_source"], eid
        assert "'max_util'" in w["batch_scheduler_policy_source"], eid
    others = [
        eid
        for eid, e in entries.items()
        if e["workload"].get("cuda_graphs") is False
        and eid not in NVIDIA_TRTLLM_EAGER
        and eid not in AMD_VLLM_MULTISTEP
    ]
    assert others == []


# AMD's MLPerf Llama 2 70B Server: vLLM in eager mode with multi-step scheduling and the prefill
# gate (harness_llm/models/llama2-70b/server_mi325x.yaml and setup/vllm_patches of
# mlcommons/inference_results_v5.1 965182b, read 2026-12-07; v5.1's stands in for v5.0's)
AMD_VLLM_MULTISTEP = ("mlperf50-llama-2-70b-mi325x8-server-ttft-mean",)


def test_amds_multi_step_scheduler_is_read_in_its_config():
    """The entry states the config's settings with the config and the patch as their source, and
    is predicted through queueing's gathered prefills (module docstring 5)."""
    entries = _entries()
    for eid in AMD_VLLM_MULTISTEP:
        w = entries[eid]["workload"]
        src = w["scheduler_source"]
        assert "965182b" in src and "server_mi325x.yaml" in src, eid
        assert w["cuda_graphs"] is False and "'enforce_eager: True'" in src, eid
        assert w["num_scheduler_steps"] == 9 and "'num_scheduler_steps: 9'" in src, eid
        assert w["enable_chunked_prefill"] is False, eid
        assert "'enable_chunked_prefill: False'" in src, eid
        assert w["max_batch_size"] == 1024 and "'max_num_seqs: 1024'" in src, eid
        assert w["max_num_tokens"] == 40960, eid
        assert w["prefill_min_queue"] == 10, eid
        assert "MIN_REQUIRE_PREFILL_QUERY: 10" in src, eid
        assert "add-MIN_REQUIRE_PREFILL_QUERY-condition.patch" in src, eid
        from bench import throughput_validation as tv

        notes: list[str] = []
        assert tv._multistep_kw(w, notes) == {"scheduler_steps": 9, "prefill_min_queue": 10}
        assert "multi-step scheduling" in notes[0]
        notes = []
        got = tv.predict_latency(entries[eid], CAT, notes)
        p = queueing.at_rate(
            CAT.model("llama-2-70b").spec,
            CAT.gpu("mi325x"),
            request_rate=w["request_rate"],
            max_num_seqs=1024,
            input_tokens=w["input_tokens"],
            output_tokens=w["output_tokens"],
            weights="fp8",
            kv_dtype="fp8",
            tensor_parallel=1,
            gpus=8,
            engine="vllm",
            max_num_batched_tokens=40960,
            prompt_moment2=w["input_tokens_moment2"],
            cuda_graphs=False,
            scheduler_steps=9,
            prefill_min_queue=10,
        )
        assert got == pytest.approx(p.ttft_s * 1e3)
        assert p.prefill_cycle_s == pytest.approx(9 * p.tpot_s)
    others = [
        eid
        for eid, e in entries.items()
        if e["workload"].get("num_scheduler_steps") and eid not in AMD_VLLM_MULTISTEP
    ]
    assert others == []


def test_nvidias_fp4_runs_take_their_own_mean_answer_length():
    """The NVIDIA FP4 runs return shorter answers than MLPerf's reference (TOKENS_PER_SAMPLE
    294.45): each entry's output length is its own log's tokens per second over samples per
    second (v5.0 Offline 98858 / 363.895 = 271.7, Server 98443.30 / 361.04 = 272.7)."""
    entries = _entries()
    assert entries["mlperf50-llama-2-70b-b200x8-offline"]["workload"]["output_tokens"] == round(
        98858 / 363.895
    )
    for eid in NVIDIA_B200_LLAMA2:
        w = entries[eid]["workload"]
        assert 270 <= w["output_tokens"] <= 275, eid
        assert "own mean output length" in w["output_tokens_source"], eid
    srv = entries["mlperf50-llama-2-70b-b200x8-server"]
    quote = srv["source"]["quote"]
    assert "Completed samples per second    : 361.04" in quote
    assert srv["workload"]["output_tokens"] == round(98443.30 / 361.04)


# NVIDIA's MLPerf v5.1 DeepSeek-R1 runs (mlcommons/inference_results_v5.1 965182b, closed/NVIDIA/
# results/<system>/deepseek-r1/<scenario>/performance/run_1/mlperf_log_summary.txt, read
# 2026-12-07): the logged tokens per second and samples per second (Server: the completed rate,
# not the scheduled 60.08), and the half each entry sat in before its length was read.
NVIDIA_DSR1_LOGGED = {
    "mlperf51-deepseek-r1-gb300x72-offline": (
        "GB300-NVL72_GB300-288GB_aarch64x72_TRT/deepseek-r1/Offline",
        "'Tokens per second: 420659' / 'Samples per second: 115.017'",
        420659 / 115.017,
        "fit",
    ),
    "mlperf51-deepseek-r1-gb300x72-server": (
        "GB300-NVL72_GB300-288GB_aarch64x72_TRT/deepseek-r1/Server",
        "'Completed tokens per second: 209327.68' / 'Completed samples per second    : 56.95'",
        209327.68 / 56.95,
        "check",
    ),
    "mlperf51-deepseek-r1-gb200x72-offline": (
        "GB200-NVL72_GB200-186GB_aarch64x72_TRT/deepseek-r1/Offline",
        "'Tokens per second: 289712' / 'Samples per second: 77.995'",
        289712 / 77.995,
        "check",
    ),
    "mlperf51-deepseek-r1-b200x8-offline": (
        "B200-SXM-180GBx8_TRT/deepseek-r1/Offline",
        "'Tokens per second: 33379' / 'Samples per second: 8.93431'",
        33379 / 8.93431,
        "fit",
    ),
}


def test_nvidias_deepseek_r1_runs_take_their_logged_answer_length():
    """NVIDIA's DeepSeek-R1 runs return shorter answers than MLPerf's reference
    (TOKENS_PER_SAMPLE 3886.2274), and its harness reports the re-encoded answer's tokens: each
    entry's output length is its own log's tokens per second over (completed) samples per second
    (GB300 Server 209327.68 / 56.95 = 3675.6, Offline GB300 3657.4, GB200 3714.5, B200 3736.0),
    with the quote and the log's address as its source; the halves stay as they were."""
    from bench import throughput_validation as tv

    entries = _entries()
    tv._assign_halves(entries.values())
    base = (
        "https://github.com/mlcommons/inference_results_v5.1/blob/"
        "965182b03376a00fcae415c54e560e1c83937932/closed/NVIDIA/results/"
    )
    for eid, (run, quote, length, half) in NVIDIA_DSR1_LOGGED.items():
        e = entries[eid]
        w = e["workload"]
        assert w["output_tokens"] == round(length) < 3886, eid
        src = w["output_tokens_source"]
        assert src.startswith("the run's own mean output length: " + quote), eid
        assert f"{base}{run}/performance/run_1/mlperf_log_summary.txt" in src, eid
        assert f"= {length:.1f} tokens per sample" in src, eid
        assert "self.tokenizer.encode" in src and "3886.2274" in src, eid
        assert w["scenario"].endswith(run.rsplit("/", 1)[1]), eid
        assert tv.fit_half(e) == half, eid
    srv = entries["mlperf51-deepseek-r1-gb300x72-server"]
    # the completed rate, not the scheduled one the Server run also logs
    assert "Scheduled samples per second : 60.08" in srv["workload"]["max_batch_size_source"]
    assert srv["workload"]["output_tokens"] != round(209327.68 / 60.08)
    assert srv["source"]["quote"].count("209328.00") == 1
    # the three Offline runs' lengths span what the logs give (3,657-3,736)
    offline = [
        entries[eid]["workload"]["output_tokens"] for eid in NVIDIA_DSR1_LOGGED if "offline" in eid
    ]
    assert (min(offline), max(offline)) == (3657, 3736)
