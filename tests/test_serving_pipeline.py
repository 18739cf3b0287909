"""Pipeline-parallel serving (advisor.perf.serving, module docstring "Pipeline parallelism") and
weights in a per-layer mix of formats (advisor.arch.quant.modelopt_mix, serving.mixed_point):
issue 35, the 2025-26 MLPerf entries that ran TP x PP replicas and a ModelOpt auto_quantize
checkpoint."""

from __future__ import annotations

import pytest

from advisor.arch import quant
from advisor.core.errors import AdvisorError
from advisor.data.catalog import load_catalog
from advisor.perf import efficiency as eff
from advisor.perf import network as net
from advisor.perf import queueing, serving, timing

CAT = load_catalog()
L70 = CAT.model("llama-2-70b").spec
H100 = CAT.gpu("h100-sxm")
KW = dict(input_tokens=222, output_tokens=294, weights="fp8", kv_dtype="fp8", engine="trtllm")


def _full_step(batch: int) -> dict:
    dev = timing.Device.of(H100, timing.matmul_peak_key(H100, "fp8", None), eff.DEFAULT_STACK)
    return timing.decode_step_time(
        L70,
        dev,
        eff.DEFAULT_STACK,
        batch=batch,
        context=222 + 294 // 2,
        weights="fp8",
        kv_bytes=timing.KV_BYTES["fp8"],
        tp=1,
        tp_fabric=None,
    )


def test_a_decode_round_is_pp_stage_steps_with_the_sends():
    """64 sequences on TP1 x PP2: two micro-batches of 32; every sequence gets a token per round
    of the pipe, 2 x (the slowest stage at 32 + one send of 32 x hidden x 2 bytes)."""
    p = serving.point(L70, H100, concurrency=64, tensor_parallel=1, pipeline_parallel=2, **KW)
    parts = _full_step(32)
    stage = (parts["seconds"] - parts["head_s"]) / 2 + parts["head_s"]
    send = net.p2p_time(32 * L70.hidden_size * 2, net.intra_node_fabric(H100))
    assert p.decode_step_s == pytest.approx(2 * (stage + send))


def test_fewer_sequences_than_stages_leave_the_pipe_idle():
    """One sequence on two stages: no other micro-batch fills the bubble, so a token costs the
    whole model's step plus the sends (GPipe's bubble with one micro-batch), never less than
    the same GPUs' tensor-parallel TPOT at PP 1 on one GPU."""
    one = serving.point(L70, H100, concurrency=1, tensor_parallel=1, pipeline_parallel=2, **KW)
    assert one.decode_step_s > _full_step(1)["seconds"]
    full = serving.point(L70, H100, concurrency=64, tensor_parallel=1, pipeline_parallel=2, **KW)
    # 64 in flight: the same round carries 64 tokens, not 1
    assert full.tokens_per_s > 30 * one.tokens_per_s


def test_stages_share_the_weights_and_kv_cache_like_tensor_parallel_ranks():
    """A TP1 x PP2 replica holds half the weights and half of each sequence's KV cache per GPU:
    the same KV-cache limit as TP2; in bf16 the 70B model does not fit one H100 and does fit
    two stages."""
    kw = dict(input_tokens=1024, output_tokens=256, weights="bf16")
    assert serving.max_concurrency(L70, H100, **kw) == 0
    pp2 = serving.max_concurrency(L70, H100, pipeline_parallel=2, **kw)
    assert pp2 > 0
    assert pp2 == serving.max_concurrency(L70, H100, tensor_parallel=2, **kw)
    plan = serving.plan(L70, H100, pipeline_parallel=2, gpus=8, **kw)
    assert plan.pipeline_parallel == 2 and plan.replicas == 4
    assert plan.to_dict()["pipeline_parallel"] == 2


def test_ttft_passes_every_stage():
    """TTFT of a PP2 replica: the whole prefill plus one send of the prompt's activations more
    than the TP1 replica's (same device, same prompt)."""
    kw = dict(KW, weights="fp8")
    big = CAT.gpu("h200")
    pp2 = serving.point(L70, big, concurrency=1, pipeline_parallel=2, **kw)
    pp1 = serving.point(L70, big, concurrency=1, **kw)
    send = net.p2p_time(222 * L70.hidden_size * 2, net.intra_node_fabric(big))
    assert pp2.prefill_s == pytest.approx(pp1.prefill_s + send)


def test_bad_pipeline_layouts_name_the_field():
    with pytest.raises(AdvisorError) as e:
        serving.point(L70, H100, concurrency=1, pipeline_parallel=81, **KW)
    assert e.value.key == "layout.pp_layers" and e.value.field == "pipeline_parallel"
    with pytest.raises(AdvisorError) as e:
        serving.point(L70, H100, concurrency=1, tensor_parallel=8, pipeline_parallel=2, **KW)
    assert e.value.key == "layout.pp_node" and e.value.field == "pipeline_parallel"
    with pytest.raises(AdvisorError) as e:
        serving.point(
            L70, H100, concurrency=1, tensor_parallel=2, pipeline_parallel=2, gpus=6, **KW
        )
    assert e.value.key == "gpus.tp_divides"
    with pytest.raises(AdvisorError) as e:
        serving.point(L70, H100, concurrency=1, pipeline_parallel=0, **KW)
    assert e.value.field == "pipeline_parallel"


def test_queueing_counts_replicas_of_tp_times_pp_gpus():
    """Eight H100s in TP1 x PP2 replicas are four replicas: the saturation rate is four times
    one replica's completion rate with every slot busy."""
    kw = dict(KW, tensor_parallel=1, pipeline_parallel=2)
    all8 = queueing.capacity(L70, H100, max_num_seqs=256, gpus=8, **kw)
    one = queueing.capacity(L70, H100, max_num_seqs=256, gpus=2, **kw)
    assert all8 == pytest.approx(4 * one)


def test_mlperf_h100_llama2_70b_tp1_pp2_offline_golden():
    """MLPerf Inference v5.0, NVIDIA DGX-H100 x8, llama2-70b-99 Offline: 31,306.8 tokens/s
    (mlperf_log_summary.txt, bench/published/serving-2025-26.yaml), four TP1 x PP2 replicas
    (the submission's harness config). Tolerance 15 %, the 2025-26 target median."""
    from bench import throughput_validation as tv

    e = {x["id"]: x for x in tv._load_entries()}["mlperf50-llama-2-70b-99-h100x8-offline"]
    (row,) = tv.evaluate([e], CAT)
    assert row["expressible"]
    assert row["predicted"] == pytest.approx(31306.8, rel=0.15)
    assert any("pipeline parallel 2" in a for a in row["assumptions"])


def test_modelopt_mix_from_effective_bits():
    """ModelOpt counts NVFP4 as 4 bits and FP8 as 8 (estimate_quant_compression): 7.25
    effective bits are 18.75 % NVFP4 and 81.25 % FP8 of the linear weights."""
    mix = quant.modelopt_mix(7.25)
    assert mix[0][0] == "nvfp4" and mix[1][0] == "fp8"
    assert mix[0][1] == pytest.approx(0.1875) and mix[1][1] == pytest.approx(0.8125)
    assert quant.modelopt_mix(8.0) == (("nvfp4", 0.0), ("fp8", 1.0))
    for bad in (3.5, 9.0, 0.0):
        with pytest.raises(AdvisorError) as e:
            quant.modelopt_mix(bad)
        assert e.value.field == "weights_effective_bits"


def test_a_mixed_point_lies_between_its_formats():
    b200 = CAT.gpu("b200")
    kw = dict(concurrency=256, input_tokens=1024, output_tokens=256, kv_dtype="fp8")
    fp8 = serving.point(L70, b200, weights="fp8", **kw)
    fp4 = serving.point(L70, b200, weights="nvfp4", **kw)
    mixed = serving.mixed_point(L70, b200, mix=quant.modelopt_mix(7.25), **kw)
    assert mixed.tpot_s == pytest.approx(0.1875 * fp4.tpot_s + 0.8125 * fp8.tpot_s)
    assert fp8.tokens_per_s < mixed.tokens_per_s < fp4.tokens_per_s
    assert mixed.tokens_per_s == pytest.approx(mixed.concurrency / mixed.tpot_s)
    only = serving.mixed_point(L70, b200, mix=(("fp8", 1.0),), **kw)
    assert only.tokens_per_s == pytest.approx(fp8.tokens_per_s)
    with pytest.raises(AdvisorError) as e:
        serving.mixed_point(L70, b200, mix=(("fp8", 0.5),), **kw)
    assert e.value.key == "weights.mix_shares"


def test_cli_time_serve_takes_pipeline_stages():
    """`advisor time serve --pp 2`: the plan and the point are serving.plan / serving.point of
    TP x PP replicas; --pp with --ep is refused naming pipeline_parallel."""
    import contextlib
    import io
    import json

    from advisor import cli

    args = ["--model", "llama-2-70b", "--gpu", "h100-sxm", "--pp", "2", "--gpus", "8"]
    args += ["--weights", "fp8", "--kv-dtype", "fp8", "--engine", "trtllm"]
    args += ["--input", "222", "--output", "294", "--concurrency", "64"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = cli.main(["time", "serve", "--json", *args])
    assert rc == 0
    got = json.loads(out.getvalue())
    assert got["plan"]["pipeline_parallel"] == 2 and got["plan"]["replicas"] == 4
    p = serving.point(
        L70, H100, concurrency=64, tensor_parallel=1, pipeline_parallel=2, gpus=8, **KW
    )
    assert got["point"]["tokens_per_s"] == pytest.approx(p.tokens_per_s)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli.main(["time", "serve", *args[:6], "--ep", "2"])
    assert rc != 0 and "--pp" in err.getvalue()


def test_web_api_serving_takes_pipeline_stages():
    """The serving calculator's `pipeline_parallel`: the same plan as serving.plan with TP x PP
    replicas; refused with expert parallelism; a GPU count that is not whole replicas is refused
    naming gpus."""
    import json

    from advisor import webapi

    webapi.set_catalog(CAT)
    params = dict(model="llama-2-70b", gpu="h100-sxm", pipeline_parallel=2, gpus=8)
    params.update(input_tokens=1024, output_tokens=256, weights="fp8", kv_dtype="fp8")
    r = json.loads(webapi.call("serving", json.dumps(params)))
    assert "error" not in r, r
    assert r["pipeline_parallel"] == 2 and r["replicas"] == 4
    plan = serving.plan(
        L70,
        H100,
        input_tokens=1024,
        output_tokens=256,
        weights="fp8",
        kv_dtype="fp8",
        pipeline_parallel=2,
        gpus=8,
    )
    assert [p["tokens_per_s"] for p in r["points"]] == pytest.approx(
        [p.tokens_per_s for p in plan.points]
    )
    for bad, field in ((dict(gpus=7), "gpus"), (dict(ep=2), "pipeline_parallel")):
        e = json.loads(webapi.call("serving", json.dumps(dict(params, **bad))))["error"]
        assert e["field"] == field, e
