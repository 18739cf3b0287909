"""Published entries whose missing field was read in a source (issue 35, MLPerf Inference v5.0):
the validator uses the field as stated, and a field the time model cannot express (a pipeline-
parallel layout, a per-layer mix of weight formats) is refused with its own reason, not as
"not stated"."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from advisor.data.catalog import load_catalog
from advisor.perf import queueing

CAT = load_catalog()
ROOT = Path(__file__).resolve().parents[1]


def _entries():
    from bench import throughput_validation as tv

    return {e["id"]: e for e in tv._load_entries()}


def test_mlperf_server_latencies_are_predicted_at_the_logged_arrival_rate():
    """A mean TTFT/TPOT logged by an MLPerf Server run is predicted at the run's scheduled rate
    (LoadGen's Poisson schedule, stated as `request_rate`) with the engine's stated max batch
    as the slots per replica: exactly queueing.at_rate with those arguments."""
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
    )
    assert got == pytest.approx(p.tpot_s * 1e3)
    assert any("the stated schedule" in n for n in notes)
    assert any("2048 slots per replica" in n for n in notes)


def test_an_entry_without_a_stated_rate_or_concurrency_still_says_so():
    from bench import throughput_validation as tv

    e = _entries()["mlperf50-llama-2-70b-b200x8-server-ttft-mean"]
    bare = dict(e, workload={k: v for k, v in e["workload"].items() if k != "request_rate"})
    with pytest.raises(tv.NotExpressible) as exc:
        tv.predict_latency(bare, CAT, [])
    assert exc.value.key == "concurrency_unstated"


@pytest.mark.parametrize(
    "eid, pp",
    [("mlperf50-llama-2-70b-99-h100x8-offline", 2), ("mlperf50-llama-3.1-405b-b200x8-offline", 2)],
)
def test_pipeline_parallel_serving_is_refused_by_its_own_reason(eid, pp):
    """NVIDIA's v5.0 configs run Llama 2 70B on H100 as TP1 x PP2 and Llama 3.1 405B on B200 as
    TP2 x PP2: the TP is stated now, and the pipeline split (not modelled) is the reason."""
    from bench import throughput_validation as tv

    e = _entries()[eid]
    assert e["workload"]["tensor_parallel"] is not None
    assert e["workload"]["pipeline_parallel"] == pp
    (row,) = tv.evaluate([e], CAT)
    assert not row["expressible"]
    assert row["reason_key"] == "pipeline_parallel" and row["reason_params"] == {"pp": pp}


def test_a_per_layer_mix_of_weight_formats_is_refused_by_its_own_reason():
    """NVIDIA's v5.0 Mixtral config names precision 'fp4' but asks ModelOpt's per-layer search
    for 7.25 effective bits: neither NVFP4 nor FP8 throughout, so it is refused, with the bits."""
    from bench import throughput_validation as tv

    e = _entries()["mlperf50-mixtral-8x7b-b200x8-offline"]
    assert e["workload"]["weights"] is None and e["workload"]["weights_effective_bits"] == 7.25
    (row,) = tv.evaluate([e], CAT)
    assert row["reason_key"] == "mixed_precision" and row["reason_params"] == {"bits": 7.25}


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
