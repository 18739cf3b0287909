"""bench/: every workload at tiny sizes on CPU, a two-process gloo all-reduce through torchrun,
the batch search against an imposed memory limit, and advisor.data.benchresults' schema checks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from advisor.core.errors import AdvisorError  # noqa: E402
from advisor.data.benchresults import SCHEMA_VERSION, load_results  # noqa: E402
from bench import cli, results  # noqa: E402
from bench.measure import percentile, summarize  # noqa: E402

pytestmark = pytest.mark.torch

TINY = [
    "--device",
    "cpu",
    "--layers",
    "1",
    "--set",
    "n_embd=32",
    "--set",
    "n_head=2",
    "--set",
    "vocab_size=256",
    "--warmup",
    "1",
    "--iters",
    "2",
]
ROOT = Path(__file__).resolve().parent.parent


def run(tmp_path, *argv) -> dict:
    assert cli.main(["run", *argv, "--out", str(tmp_path)]) == 0
    files = sorted(tmp_path.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads(files[-1].read_text())


def fig(doc, name):
    return next(d for d in doc["derived"] if d["name"] == name)


def test_percentiles_match_numpy_linear():
    xs = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(xs, 50) == 3.0
    assert percentile(xs, 10) == pytest.approx(1.4)
    assert percentile(xs, 90) == pytest.approx(4.6)
    s = summarize(xs, "s")
    assert (s["median"], s["n"], s["min"], s["max"]) == (3.0, 5, 1.0, 5.0)


def test_train_step_figures_and_memory(tmp_path):
    doc = run(
        tmp_path, "train-step", *TINY, "--batch", "2", "--seq", "16", "--dataset-samples", "10"
    )
    assert doc["schema_version"] == SCHEMA_VERSION and doc["environment"]["device"] == "cpu"
    step = doc["samples"]["step_time_s"]
    assert len(step) == 2 and all(t > 0 for t in step)
    med = doc["summary"]["step_time_s"]["median"]
    assert fig(doc, "tokens_per_s")["value"] == pytest.approx(32 / med)
    assert fig(doc, "epoch_time_s")["value"] == pytest.approx(5 * med)  # ceil(10/2) steps
    assert fig(doc, "mfu")["value"] is None and "no catalog peak" in fig(doc, "mfu")["reason"]
    # FLOPs: advisor's 6N + attention for the model actually built
    n = doc["configuration"]["parameters"]
    assert 0 < fig(doc, "flops_per_step")["value"] < 6 * n * 32 * 2
    meas = doc["memory"]["measured"]["peak_allocated_bytes"]
    assert meas > 4 * n * 4  # weights, grads and two AdamW moments at least
    if doc["memory"]["predicted"].get("available"):
        assert math.isfinite(doc["memory"]["error_pct"])


def test_matmul_bandwidth_dataloader(tmp_path):
    m = run(
        tmp_path,
        "matmul",
        "--device",
        "cpu",
        "--shapes",
        "32x32x32,64x48x16",
        "--dtype",
        "fp32",
        "--iters",
        "2",
    )
    assert len(m["table"]) == 2
    best = max(r["tflops"] for r in m["table"])
    assert fig(m, "best_tflops_fp32")["value"] == best > 0
    row = m["table"][1]
    assert row["tflops"] == pytest.approx(2 * 64 * 48 * 16 / row["median_s"] / 1e12)
    b = run(tmp_path, "bandwidth", "--device", "cpu", "--sizes", "0.25,1", "--iters", "2")
    assert fig(b, "device_copy_gb_per_s")["value"] > 0 and len(b["table"]) == 2
    # the dataloader compares with the train-step rate it is given
    d = run(
        tmp_path,
        "dataloader",
        "--device",
        "cpu",
        "--text-bytes",
        "20000",
        "--iters",
        "2",
        "--batch",
        "2",
        "--seq",
        "64",
        "--train-tokens-per-s",
        "1000",
    )
    rate = fig(d, "byte_tokens_per_s")["value"]
    assert fig(d, "byte_feed_ratio")["value"] == pytest.approx(rate / 1000)
    assert {r["tokenizer"] for r in d["table"]} == {"byte", "regex-word"}


def test_regex_tokenizer_roundtrips_unknown_as_bytes():
    from bench.workloads import RegexTokenizer, byte_tokenize

    tok = RegexTokenizer("hello world hello")
    ids = tok("hello there")
    assert ids[0] >= 256 and bytes(ids[1:]) == b" there"
    assert byte_tokenize("ə") == [0xC9, 0x99]


def test_max_batch_search_against_imposed_limit(tmp_path):
    doc = run(
        tmp_path,
        "max-batch",
        *TINY,
        "--seq",
        "8",
        "--mem-budget-mib",
        "2",
        "--max-batch-cap",
        "256",
    )
    best = int(fig(doc, "max_batch")["value"])
    trials = doc["table"]
    assert any(not t["fits"] and "BudgetExceeded" in t["error"] for t in trials)
    fits = {t["batch"]: t["fits"] for t in trials}
    assert fits[best] and not fits.get(best + 1, False) and 1 <= best < 256
    assert all(t["peak_bytes"] <= 2 * 2**20 for t in trials if t["fits"])


def test_storage_tracker_counts_views_of_existing_storages_once():
    """A weight's `t()` view returned by an op is its existing storage, not a new allocation
    (the bug that put 211 MB of re-counted GPT-2 weights into the train-step peak)."""
    import torch

    from bench.memlimit import StorageTracker

    w = torch.zeros(64, 32)  # 8192 bytes
    x = torch.ones(4, 32)
    tracker = StorageTracker(existing=[w, x])
    assert tracker.baseline_bytes == tracker.live_bytes == 8192 + 512
    with tracker:
        y = torch.nn.functional.linear(x, w)  # aten.t(w) then mm: only y (4x64 fp32) is new
        w.t_().t_()
        w.add_(1.0)  # in-place: returns w itself
    assert tracker.peak_bytes == 8192 + 512 + 1024
    del y
    assert tracker.live_bytes == 8192 + 512


def test_search_logic_and_oom_recovery():
    from bench.memlimit import BudgetExceeded
    from bench.workloads import search_max_batch

    def fits_up_to(limit):
        def f(b):
            if b > limit:
                raise BudgetExceeded("too big")
            return b

        return f

    for limit, cap in ((1, 8), (37, 1000), (5, 5), (100, 64)):
        best, _ = search_max_batch(fits_up_to(limit), cap)
        assert best == min(limit, cap)
    assert search_max_batch(fits_up_to(0), 8)[0] == 0
    with pytest.raises(ValueError):  # only out-of-memory is swallowed
        search_max_batch(lambda b: (_ for _ in ()).throw(ValueError("bug")), 8)


def test_allreduce_two_process_gloo(tmp_path):
    doc = run(
        tmp_path,
        "allreduce",
        "--device",
        "cpu",
        "--nproc",
        "2",
        "--sizes",
        "0.0625,0.25",
        "--warmup",
        "1",
        "--iters",
        "3",
    )
    assert doc["configuration"]["world_size"] == 2 and doc["configuration"]["backend"] == "gloo"
    for r in doc["table"]:
        assert r["busbw_gb_per_s"] == pytest.approx(r["algbw_gb_per_s"] * 2 * (2 - 1) / 2)
        assert r["algbw_gb_per_s"] == pytest.approx(r["bytes"] / r["max_rank_median_s"] / 1e9)
    assert fig(doc, "busbw_gb_per_s")["value"] > 0


def test_ddp_one_process(tmp_path):
    doc = run(tmp_path, "ddp", *TINY, "--nproc", "1", "--batch", "1", "--seq", "8")
    assert doc["table"][0]["world_size"] == 1
    assert fig(doc, "scaling_efficiency")["value"] == pytest.approx(1.0)


def _doc():
    env = {
        "device": "cpu",
        "accelerator": "CPU: test",
        "torch": "x",
        "python": "3",
        "command_line": ["python"],
        "time_utc": "2026-12-02T00:00:00Z",
        "hostname": "h/o st",
    }
    return results.make_result(
        "matmul",
        env,
        {"a": 1},
        {"x": [1.0, 2.0]},
        {},
        [results.derived("f", 1.5, "s", "x")],
        telemetry={"source": "proc", "series": {"t_s": [0.0, 0.1], "cpu_util_pct": [1.0, 2.0]}},
    )


def test_schema_roundtrip_atomic_and_no_overwrite(tmp_path):
    paths = {results.write_result(_doc(), tmp_path) for _ in range(5)}
    assert len(paths) == 5 and not list(tmp_path.glob(".tmp-*"))
    assert all("_matmul_h-o-st_" in p.name for p in paths)
    runs = load_results(tmp_path)
    assert len(runs) == 5 and runs[0].value("f") == 1.5 and runs[0].samples["x"] == (1.0, 2.0)
    assert runs.by_workload("matmul") == tuple(runs)
    assert runs[0].series("cpu_util_pct") == ((0.0, 0.1), (1.0, 2.0))
    assert "<svg" in __import__("advisor.data.benchresults", fromlist=[""]).bar_svg(
        [("a", 1.0)], "t", "u"
    )
    (tmp_path / "validation").mkdir()
    (tmp_path / "validation" / "other.json").write_text("{}")  # its own schema: ignored
    assert len(load_results(tmp_path)) == 5


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(schema_version=99), "schema_version"),
        (lambda d: d.pop("environment"), "missing field 'environment'"),
        (lambda d: d["samples"].update(x=[1.0, "a"]), "samples.x"),
        (lambda d: d["derived"][0].update(value=None), "needs a reason"),
        (lambda d: d["derived"][0].update(value=float("nan")), "non-finite"),
        (lambda d: d["telemetry"]["series"].update(cpu_util_pct=[1.0]), "telemetry.series"),
    ],
)
def test_malformed_file_names_the_file(tmp_path, mutate, message):
    doc = _doc()
    mutate(doc)
    bad = tmp_path / "20261202T000000Z_bad.json"
    bad.write_text(json.dumps(doc))  # json.dumps writes NaN, which the loader must refuse
    with pytest.raises(AdvisorError) as err:
        load_results(tmp_path)
    assert bad.name in err.value.message and message in err.value.message


def test_malformed_json_and_committed_results(tmp_path):
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(AdvisorError, match=r"x\.json: not valid JSON"):
        load_results(tmp_path)
    committed = load_results(ROOT / "bench_results")  # the committed CPU runs must validate
    assert all(r.device in ("cpu", "cuda") for r in committed)


def test_cli_error_is_one_line(tmp_path, capsys):
    assert cli.main(["run", "max-batch", "--device", "cpu", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == "error: max-batch on CPU needs --mem-budget-mib"
