"""Issue 40: `time train` refuses a layout that does not fit the card by the planner's own
stage memory (never prices it) and a run past the horizon; token suffixes end in a one-line
error on overflow or non-ASCII digits; MFU never above 100 %; cluster memory by precision; the
CP time in the breakdown; the plan never chooses a run past the horizon."""

from __future__ import annotations

import pytest

from advisor.cli import main
from advisor.data.catalog import load_catalog
from advisor.perf import cluster, training
from advisor.perf.parallel import Layout

CAT = load_catalog()


def _cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize(
    "argv",
    [
        # 1,235 GiB on a 96 GB card: was priced at MFU 131.5 %
        (
            "--model", "gemma-2-27b", "--gpu", "gaudi2", "--precision", "fp8",
            "--micro-batch", "16", "--micro-batches", "256", "--seq", "2048",
        ),
        # was 326,720 days and 2.7 M USD on one 24 GB card
        ("--model", "llama-3.1-405b", "--gpu", "rtx-4090", "--tokens", "1T"),
        ("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--tokens", "1e18"),
    ],
)  # fmt: skip
def test_train_layout_that_does_not_fit_is_refused(capsys, argv):
    rc, out, err = _cli(capsys, "time", "train", *argv)
    assert rc == 2 and out == ""
    assert err.startswith("error: layout: TP 1 x PP 1 x DP 1 needs ") and err.count("\n") == 1
    assert "GiB per GPU, more than the" in err


def test_train_past_the_horizon_is_refused(capsys):
    argv = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--dp", "8", "--sharding", "zero3"]
    rc, out, err = _cli(capsys, "time", "train", *argv, "--tokens", "1e18")
    assert rc == 2 and err.startswith("error: tokens: 1e+18 tokens take ") and "horizon" in err
    rc, out, err = _cli(capsys, "time", "train", *argv, "--tokens", "1T", "--json")
    assert rc == 0 and '"days"' in out


@pytest.mark.parametrize(
    ("command", "option", "value", "expected"),
    [
        ("train", "--tokens", "1.0e300T", "must be at most 1e+18"),
        ("plan", "--global-batch-tokens", "9.0e307K", "must be at most 1e+18"),
        ("train", "--tokens", "\u0661.\u0665T", "expected a number"),  # Arabic-Indic 1.5
        ("train", "--tokens", "\u0661\u0665", "expected a number"),
        ("train", "--tokens", "infT", "must be a finite number"),
        ("train", "--tokens", "nanK", "must be a finite number"),
    ],
)
def test_token_suffix_errors_are_one_line(capsys, command, option, value, expected):
    argv = ["time", command, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", option, value]
    if command == "plan":
        argv += ["--tokens", "1T"]
    rc, out, err = _cli(capsys, *argv)
    assert rc == 2 and err.count("\n") == 1 and expected in err, err
    assert "Traceback" not in err


def test_token_suffix_still_reads_figures():
    from advisor.commands.time import _tokens

    parse = _tokens("tokens")
    assert parse("1.5T") == 1_500_000_000_000
    assert parse("15T") == 15 * 10**12
    assert parse("2e3K") == 2_000_000
    assert parse("1e18") == 10**18


def test_fp8_mfu_against_the_fp8_peak_and_never_above_one():
    spec = CAT.model("gemma-2-27b").spec
    gpu = CAT.gpu("gaudi2")
    lay = Layout(micro_batch=16, micro_batches=256)
    st = training.train_step(spec, gpu, lay, seq=2048, precision="fp8")
    assert 0 < st.mfu <= 1.0  # was 1.315
    assert any("fp8 peak" in n for n in st.notes)
    bf16 = training.train_step(spec, gpu, lay, seq=2048, precision="bf16")
    assert bf16.mfu <= 1.0


def test_breakdown_has_context_parallel_time_and_sums_to_the_step():
    spec = CAT.model("llama-3.2-1b").spec
    gpu = CAT.gpu("rtx-4090")  # PCIe: short sequences do not hide the ring attention traffic
    lay = Layout(cp=8, micro_batch=1, micro_batches=1)
    st = training.train_step(spec, gpu, lay, seq=2048)
    assert "cp_comm" in st.parts_s and st.parts_s["cp_comm"] > 0
    assert sum(st.parts_s.values()) == pytest.approx(st.step_time_s, rel=1e-9)


def test_cluster_memory_follows_precision():
    spec = CAT.model("llama-3.1-70b").spec
    lay = Layout(tp=8, pp=2, dp=2, micro_batch=1, micro_batches=64, sharding="zero1")
    bf16 = cluster.stage_memory_bytes(spec, lay, 4096, "bf16", "none")
    fp32 = cluster.stage_memory_bytes(spec, lay, 4096, "fp32", "none")
    amp = cluster.stage_memory_bytes(spec, lay, 4096, "amp-bf16", "none")
    assert fp32 > bf16 and amp > bf16
    lora = cluster.stage_memory_bytes(spec, lay, 4096, "bf16", "none", task="lora")
    qlora = cluster.stage_memory_bytes(spec, lay, 4096, "bf16", "none", task="qlora")
    assert qlora < lora < bf16


def test_plan_never_chooses_past_the_horizon(capsys):
    gpu = CAT.gpu("h100-sxm")
    spec = CAT.model("llama-3.1-70b").spec
    p = cluster.plan(
        spec, gpu, tokens=15 * 10**12, precision="fp32", network=CAT.network("ib-ndr-400")
    )
    assert p.chosen is not None and p.chosen.hours <= cluster.HORIZON_HOURS  # was 54,460 days
    one_node = cluster.plan(CAT.model("llama-3.1-8b").spec, gpu, tokens=10**16)
    assert one_node.chosen is None and one_node.reason_key == "beyond_horizon"


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        ("3", "3 does not divide the model's 32 attention heads"),
        ("72", "72 is more than the 8 GPUs a h100-sxm node links"),
        ("16", "16 is more than the 8 GPUs"),
    ],
)
def test_serving_refuses_impossible_tensor_parallelism(capsys, tp, expected):
    argv = ["time", "serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--tp", tp]
    rc, out, err = _cli(capsys, *argv, "--gpus", "72" if tp == "72" else tp)
    assert rc == 2 and err.startswith("error: tensor_parallel: ") and expected in err, err
    from advisor import webapi

    got = webapi.run("serving", {"model": "llama-3.1-8b", "gpu": "h100-sxm", "tensor_parallel": tp})
    assert got["error"]["field"] == "tensor_parallel", got


def test_serve_weights_that_do_not_fit_are_an_error(capsys):
    rc, out, err = _cli(capsys, "time", "serve", "--model", "llama-3.1-405b", "--gpu", "rtx-4090")
    assert rc == 2 and out == "" and err.startswith("error: gpu: the weights of ")  # was exit 0
