"""advisor.webapi: the calculators' JSON functions equal the advisor modules they wrap, and bad
input comes back as an error object with a message key and the offending field."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import pytest

from advisor import webapi
from advisor.arch import flops
from advisor.data.catalog import load_catalog, read_documents
from advisor.memory import estimate as memory
from advisor.money import cost
from advisor.perf import timing

CAT = load_catalog()
webapi.set_catalog(CAT)

# The golden inputs (also used by tests/test_pyodide_node.py and the browser test).
GOLDEN = [
    ("vram", {}),
    (
        "vram",
        {"task": "train", "batch": 2, "seq": 1024, "precision": "bf16", "gpu": "a100-80gb-sxm"},
    ),
    (
        "vram",
        {"task": "qlora", "model": "llama-3.1-70b", "batch": 1, "seq": 2048, "gpu": "rtx-4090"},
    ),
    ("vram", {"task": "inference", "weights": "int4", "batch": 8, "seq": 8192, "gpu": "l40s"}),
    ("vram", {"config": json.dumps(CAT.model("qwen2.5-0.5b").doc["config"]), "task": "lora"}),
    ("roofline", {}),
    ("roofline", {"phase": "train", "batch": 4, "seq": 2048}),
    ("roofline", {"phase": "prefill", "gpu": "mi300x", "batch": 1, "seq": 8192}),
    ("budget", {}),
    ("budget", {"gpu": "h100-sxm", "gpus": 8, "price_usd": 30000, "utilisation": 0.9}),
    ("picker", {}),
]


def test_vram_equals_memory_model():
    spec = CAT.model("llama-3.1-8b").spec
    r = webapi.run("vram", {"batch": 4, "seq": 2048, "gpu": "h100-sxm", "mode": "static"})
    assert r["mode"] == "static"
    setup = memory.InferenceSetup(model=spec, batch=4, seq=2048)
    est = memory.inference_memory(setup).to_dict()
    assert r["components"] == est["components"]
    assert r["total_bytes"] == est["total_bytes"]
    g = CAT.gpu("h100-sxm")
    assert r["chosen"]["max_batch"] == memory.max_batch(setup, g.memory_bytes)
    assert r["chosen"]["max_seq"] == memory.max_seq(setup, g.memory_bytes)
    assert len(r["fits"]) == len(CAT.gpus)
    for row in r["fits"]:
        assert row["fits"] == (est["total_bytes"] <= row["memory_bytes"])


def test_vram_carries_the_measured_memory_band():
    """The band under the VRAM result is the committed memory validation's (memory.json)."""
    doc = json.loads(
        (
            Path(__file__).resolve().parent.parent / "bench_results/validation/memory.json"
        ).read_text()
    )
    errs = [abs(c["components"]["peak_allocated_bytes"]["error"]) for c in doc["cases"]]
    band = webapi.run("vram", {"mode": "static"})["memory_accuracy"]
    assert band["n"] == len(doc["cases"]) >= 45
    assert band["families"] == len({c["family"] for c in doc["cases"]}) >= 12
    assert band["worst_abs_error"] == pytest.approx(max(errs))
    assert band["median_abs_error"] == pytest.approx(sorted(errs)[len(errs) // 2], abs=0.01)


def test_vram_training_setup_and_limits_independent_of_the_varied_field():
    spec = CAT.model("llama-3.2-1b").spec
    params = {"model": "llama-3.2-1b", "task": "train", "batch": 3, "seq": 512}
    params.update(precision="amp-bf16", optimizer="adamw-8bit", checkpointing="full", gpu="l4")
    r = webapi.run("vram", params)
    setup = memory.TrainingSetup(
        model=spec,
        batch=3,
        seq=512,
        precision="amp-bf16",
        optimizer="adamw-8bit",
        checkpointing="full",
    )
    assert r["total_bytes"] == memory.training_memory(setup).total_bytes
    cap = CAT.gpu("l4").memory_bytes
    assert r["chosen"]["max_batch"] == memory.max_batch(setup, cap)
    assert r["chosen"]["max_seq"] == memory.max_seq(setup, cap)
    fast = webapi.run("vram", {**params, "limits": "0"})
    assert "max_batch" not in fast["chosen"] and fast["total_bytes"] == r["total_bytes"]


def test_roofline_equals_timing_roofline():
    spec = CAT.model("llama-3.1-8b").spec
    g = CAT.gpu("h100-sxm")
    r = webapi.run("roofline", {"batch": 2, "seq": 1024})
    fl = flops.decode_flops(spec, 1024, 2)
    nbytes = timing.decode_weight_bytes(spec, "bf16", 2) + timing.kv_read_bytes(spec, 1024, 2)
    ref = timing.roofline(fl, nbytes, g, "bf16")
    assert r["bound"] == ref.bound == "memory_bandwidth"
    assert r["intensity_flop_per_byte"] == ref.intensity_flop_per_byte
    assert r["ridge_point"] == ref.ridge_point


def test_budget_equals_tco():
    r = webapi.run(
        "budget",
        {
            "gpu": "h100-sxm",
            "gpus": 8,
            "price_usd": 30000,
            "cloud_usd_per_gpu_hour": 2.5,
            "utilisation": 0.7,
            "horizon_months": 36,
            "resale_fraction": 0.2,
        },
    )
    g = CAT.gpu("h100-sxm")
    # 8 x H100 SXM are bought as one 8-GPU HGX server (catalog/systems/hgx-8.yaml): its price
    # beside the cards and its own power count (advisor.data.systems, issue 38)
    server = next(s for s in CAT.systems if s.id == "hgx-8")
    assert r["owning"]["system_id"] == "hgx-8" and r["server_usd"] == server.server_usd
    # every item shown (issue 38): one server needs no network beyond it; hosting per kW of IT
    # power (catalog/owning/hosting.yaml); NVIDIA AI Enterprise per GPU per year
    items = {i["key"]: i for i in r["owning"]["items"]}
    assert set(items) >= {"cards", "server", "network", "hosting", "software_support", "resale"}
    assert items["network"]["usd"] == 0.0 and "one server" in items["network"]["note"]
    colo = CAT.owning.value("colocation_usd_per_kw_month")
    it_kw = (g.tdp_w * 8 + server.host_power_w) / 1000
    assert items["hosting"]["usd_per_month"] == pytest.approx(it_kw * colo)
    nvaie = CAT.owning.value("nvidia_ai_enterprise_usd_per_gpu_year")
    assert items["software_support"]["usd_per_year"] == 8 * nvaie
    # hardware support: a share of the purchase price per year (catalog/owning/support.yaml)
    hw_share = CAT.owning.value("hardware_support_fraction_per_year")
    purchase = 30000 * 8 + server.server_usd
    assert items["hardware_support"]["usd_per_year"] == pytest.approx(purchase * hw_share)
    own = cost.OwnHardware(
        gpu_price_usd=30000,
        gpus=8,
        tdp_w=g.tdp_w,
        electricity_usd_per_kwh=0.127,
        server_usd=server.server_usd,
        host_power_w=server.host_power_w,
        hosting_usd_per_month=it_kw * colo,
        support_usd_per_year=8 * nvaie + purchase * hw_share,
        resale_fraction=0.2,
    )
    ref = cost.tco(own, 2.5, utilisation=0.7, horizon_months=36, rates=CAT.currency)
    assert r["tco"]["own_total"] == pytest.approx(ref.own_total)
    assert r["tco"]["cumulative_cloud"] == pytest.approx(list(ref.cumulative_cloud))
    assert r["tco"]["break_even_month"] == ref.break_even_month
    assert r["training"]["cloud_cost"] == pytest.approx(r["training"]["gpu_hours"] * 2.5)


def test_picker_ranks_and_gives_reasons():
    r = webapi.run("picker", {"model": "llama-3.1-70b", "task": "inference", "batch": 4})
    assert r["recommended"], "some accelerator serves a 70B model"
    assert [x["rank"] for x in r["recommended"]] == sorted(x["rank"] for x in r["recommended"])
    assert all(x["reasons"] for x in r["rejected"])
    assert any(x["reasons"][0]["key"] == "recommend.vram" for x in r["rejected"])


@pytest.mark.parametrize("name,params", GOLDEN)
def test_golden_inputs_give_json_without_error(name, params):
    text = webapi.call(name, json.dumps(params))
    out = json.loads(text)
    assert "error" not in out, out
    assert text == webapi.dumps(webapi.run(name, params))  # call() is run() as JSON


BAD = [
    ("vram", {"batch": ""}, "field.required", "batch"),
    ("vram", {"batch": -1}, "field.too_small", "batch"),
    ("vram", {"batch": "-3"}, "field.too_small", "batch"),
    ("vram", {"batch": "NaN"}, "field.not_finite", "batch"),
    ("vram", {"batch": float("nan")}, "field.not_finite", "batch"),
    ("vram", {"batch": "abc"}, "field.not_number", "batch"),
    ("vram", {"batch": 1.5}, "field.not_integer", "batch"),
    ("vram", {"batch": 10**9}, "field.too_large", "batch"),
    ("vram", {"seq": 10**12}, "field.too_large", "seq"),
    ("vram", {"seq": 10**6}, "seq.too_long", "seq"),
    ("vram", {"model": "lama-3.1-8b"}, "name.unknown", "model"),
    ("vram", {"task": "fly"}, "name.unknown", "task"),
    ("vram", {"gpu": "h1000"}, "name.unknown", "gpu"),
    ("vram", {"config": "{not json"}, "config.bad_json", "config"),
    ("vram", {"config": "[1, 2]"}, "config.not_object", "config"),
    ("vram", {"config": '{"model_type": "llama"}'}, "config.missing", "config.hidden_size"),
    ("budget", {"utilisation": 1.5}, "field.too_large", "utilisation"),
    ("budget", {"price_usd": "-5"}, "field.non_negative", "price_usd"),
    ("budget", {"gpu": "h100-nvl", "price_usd": ""}, "budget.no_price", "price_usd"),
    ("roofline", {"phase": "x"}, "name.unknown", "phase"),
    ("picker", {"max_gpus": 0}, "field.too_small", "max_gpus"),
    ("serving", {"request_rate": "-1"}, "field.positive", "request_rate"),
    ("serving", {"pools": "disaggregated", "gpus": 8}, "disagg.needs_limits", "ttft_ms"),
    ("serving", {"ep": 8, "gpus": 8}, "ep.dense_model", "ep"),
]


@pytest.mark.parametrize("name,params,key,field", BAD)
def test_bad_inputs_return_error_keys(name, params, key, field):
    out = json.loads(webapi.call(name, json.dumps(params, allow_nan=True)))
    err = out["error"]
    assert err["key"] == key, err
    assert err["field"] == field, err
    assert err["message"]


def test_malformed_call():
    assert json.loads(webapi.call("vram", "{oops"))["error"]["key"] == "field.bad_json"
    assert json.loads(webapi.call("nope", "{}"))["error"]["key"] == "name.unknown"
    assert json.loads(webapi.call("vram", "[]"))["error"]["key"] == "field.not_object"


def test_results_are_strict_json():
    for name, params in GOLDEN:
        text = webapi.call(name, json.dumps(params))
        assert "NaN" not in text and "Infinity" not in text, name
        json.loads(text)
    assert webapi.dumps({"x": math.inf}) == '{"x": null}'


def test_catalog_documents_through_json_give_the_same_catalog():
    """What the site ships (the parsed documents as JSON) builds the very catalog the CLI reads
    from the YAML files: every model, GPU, offer, fabric and rate, equal field by field."""
    from advisor.data.catalog import load_catalog

    root = Path(__file__).resolve().parent.parent / "catalog"
    docs = json.loads(json.dumps(read_documents(root), ensure_ascii=False))
    assert list(docs) == sorted(docs) and "currency.yaml" in docs
    cat = webapi.load_catalog_documents(docs)
    try:
        assert cat == load_catalog(root)
        assert cat.to_json() == load_catalog(root).to_json()
    finally:
        webapi.set_catalog(CAT)


def test_catalog_documents_are_validated_like_the_files():
    from advisor.core.errors import AdvisorError

    root = Path(__file__).resolve().parent.parent / "catalog"
    docs = read_documents(root)
    gpu = next(k for k in docs if k.startswith("gpus/"))
    broken = {**docs, gpu: {**docs[gpu], "memory_gib": -1}}
    before = webapi.get_catalog()  # whichever an earlier test in this worker left
    with pytest.raises(AdvisorError) as info:
        webapi.load_catalog_documents(broken)
    assert gpu in info.value.message
    assert webapi.get_catalog() is before  # a refused catalog replaces nothing


def test_catalog_documents_refuse_names_outside_the_catalog():
    from advisor.core.errors import AdvisorError

    for rel in ("../../x.yaml", "/etc/x.yaml", "gpus/../../x.yaml", "gpus/x.yml"):
        with pytest.raises(AdvisorError) as info:
            webapi.load_catalog_documents({rel: {"id": "x"}})
        assert info.value.key == "catalog.bad_name"


@pytest.mark.parametrize(
    "text,key",
    [("١٢", "field.not_number"), ("１２", "field.not_number"), ("1_000", "field.not_number"),
     ("inf", "field.not_finite"), ("0x10", "field.not_number"), ("", "field.required")],
)  # fmt: skip
def test_form_numbers_are_ascii_decimals(text, key):
    err = webapi.run("vram", {"batch": text})["error"]
    assert err["key"] == key and err["field"] == "batch"
    assert webapi.run("vram", {"batch": " 2 "})["total_bytes"] > 0
    assert webapi.run("budget", {"utilisation": "0,5"})["tco"]["utilisation"] == 0.5


def test_budget_gives_no_price_for_what_does_not_fit_nor_for_an_encoder():
    r = webapi.run("budget", {"gpu": "rtx-4090", "gpus": 1, "model": "llama-3.1-70b"})
    assert r["training"]["fits"] is False and r["training"]["cloud_cost"] is None
    assert r["training"]["reason"]["key"] == "budget.does_not_fit"
    assert r["inference"]["per_million_tokens"] is None
    b = webapi.run("budget", {"model": "bert-base-uncased", "seq": 512})
    assert b["inference"]["reason"]["key"] == "model.not_causal"
    assert b["training"]["cloud_cost"] is not None  # an encoder still trains


@pytest.mark.parametrize(
    ("task", "rank", "expected"),
    [("qlora", 16, "full"), ("lora", 16, "full"), ("train", 0, "none")],
)
def test_vram_checkpointing_defaults_to_what_the_tools_apply(task, rank, expected):
    """One rule (memory.default_checkpointing): QLoRA/LoRA recipes (peft's
    prepare_model_for_kbit_training, the QLoRA paper) checkpoint; full training does not. The
    result says which one it used and that it was the default; an explicit choice is kept."""
    assert memory.default_checkpointing(rank) == expected
    base = {"model": "llama-3.1-70b", "task": task, "batch": 1, "seq": 2048}
    r = webapi.vram(base)
    assert (r["checkpointing"], r["checkpointing_default"]) == (expected, True)
    other = "none" if expected == "full" else "full"
    asked = webapi.vram({**base, "checkpointing": other})
    assert (asked["checkpointing"], asked["checkpointing_default"]) == (other, False)
    explicit = webapi.vram({**base, "checkpointing": expected})
    assert explicit["total_bytes"] == r["total_bytes"]
    if task == "qlora":
        # the case: QLoRA of a 70B model at batch 1 is about 47 GiB with checkpointing
        assert 40 < r["total_bytes"] / 2**30 < 50 < asked["total_bytes"] / 2**30


def test_recommend_and_cli_follow_the_same_checkpointing_rule():
    from advisor.advice import recommend
    from advisor.cli import main
    from advisor.core.errors import AdvisorError

    spec = CAT.model("llama-3.1-8b").spec
    w = recommend.Workload(model=spec, task="qlora", batch=1, seq=2048).validated()
    assert recommend._training_setup(w, 1, "ddp", 1).checkpointing == "full"
    w = recommend.Workload(model=spec, task="train", batch=1, seq=2048).validated()
    assert recommend._training_setup(w, 1, "ddp", 1).checkpointing == "none"
    with pytest.raises(AdvisorError) as e:
        memory.resolve_checkpointing("sometimes", 16)
    assert e.value.field == "checkpointing"
    args = ["memory", "--model", "llama-3.1-8b", "--task", "train", "--lora-rank", "16"]
    args += ["--batch", "1", "--seq", "2048", "--json"]
    outs = []
    for extra in ([], ["--checkpointing", "full"], ["--checkpointing", "none"]):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main([*args, *extra]) == 0
        outs.append(json.loads(buf.getvalue())["total_bytes"])
    assert outs[0] == outs[1] < outs[2]


def test_calculators_do_not_import_the_report_renderer():
    """The browser's plain start installs Jinja2, MarkupSafe and PyYAML only when a report is
    asked for (calcruntime/browser/worker.mjs, REPORT_ONLY): with the catalog built from its JSON
    documents, as the worker builds it, every other function must run without them, on good
    and bad input."""
    import subprocess
    import sys

    from advisor.data.catalog import read_documents

    docs = json.dumps(read_documents(Path(__file__).resolve().parent.parent / "catalog"))
    code = (
        "import sys, json, advisor.webapi as w\n"
        "w.load_catalog_documents(json.loads(sys.stdin.read()))\n"
        "for n in sorted(w.FUNCTIONS):\n"
        "    if n != 'report':\n"
        "        for p in ('{}', '{', json.dumps({'model': 'no-such-model'})):\n"
        "            json.loads(w.call(n, p))\n"
        "print(sorted(m for m in ('jinja2', 'markupsafe', 'yaml') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=docs, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_fp4_weights_run_at_the_fp4_peak_only_where_the_card_takes_the_format():
    """Issue 34: NVFP4/MXFP4 weights reach the FP4 peak on Blackwell (both) and CDNA 4 (MXFP4);
    elsewhere the result says they are dequantised, and at which peak they multiply."""

    def run(gpu, weights):
        params = {"model": "llama-3.1-70b", "gpu": gpu, "weights": weights}
        return json.loads(webapi.call("serving", json.dumps(params)))

    b200, h100 = run("b200", "nvfp4"), run("h100-sxm", "nvfp4")
    assert (b200["compute_peak"], b200["fp4_dequantised"]) == ("fp4", False)
    assert (h100["compute_peak"], h100["fp4_dequantised"]) == ("bf16", True)
    assert run("mi355x", "mxfp4")["fp4_dequantised"] is False
    # CDNA 4 takes MXFP4 only, and no engine dequantises NVFP4 on ROCm: refused (issue 34)
    assert run("mi355x", "nvfp4")["error"]["key"] == "support.fp4_unavailable"
    assert run("mi300x", "mxfp4")["fp4_dequantised"] is True  # AMD Quark's emulation
    # 4.5 bits per weight instead of bf16's 16: a B200 serves more than twice the int4 rate,
    # whose weights are dequantised to 16 bits before each matmul
    int4 = run("b200", "int4")
    assert b200["best"]["tokens_per_s"] > 2 * int4["best"]["tokens_per_s"]


def test_mxfp8_training_needs_mx_tensor_cores():
    """Issue 34: MXFP8 (block-scaled FP8) trains at the FP8 peak on Blackwell; a Hopper card is
    refused with a translated message naming the field, not a silent no-fit."""
    ok = json.loads(
        webapi.call(
            "cluster", json.dumps({"model": "llama-3.1-8b", "gpu": "b200", "precision": "mxfp8"})
        )
    )
    fp8 = json.loads(
        webapi.call(
            "cluster", json.dumps({"model": "llama-3.1-8b", "gpu": "b200", "precision": "fp8"})
        )
    )
    assert ok["chosen"]["days"] == pytest.approx(fp8["chosen"]["days"])
    bad = json.loads(
        webapi.call(
            "cluster",
            json.dumps({"model": "llama-3.1-8b", "gpu": "h100-sxm", "precision": "mxfp8"}),
        )
    )
    assert bad["error"]["key"] == "gpu.mx_unsupported" and bad["error"]["field"] == "precision"


def test_vram_inference_is_a_serving_engine_by_default():
    """Issue 38: the VRAM calculator's inference sizes a continuous-batching server the way the
    picker, recommend and the reports do (advisor.perf.serving_fit): 200 requests in flight at 4k on
    8 x H100 fit (the static prefill of all 200 on each GPU, 591.7 GiB, does not)."""
    from advisor.perf import serving_fit as sfit

    p = {"model": "llama-3.1-70b", "batch": 200, "seq": 4096, "gpus": 8, "gpu": "h100-sxm"}
    r = webapi.run("vram", p)
    assert r["mode"] == "serving" and r["chosen"]["fits"]
    i, o = sfit.split_context(4096)
    # the layout the picker and recommend run on these GPUs (one serving model)
    x = sfit.best_fit(
        CAT.model("llama-3.1-70b").spec,
        CAT.gpu("h100-sxm"),
        gpus=8,
        concurrency=200,
        input_tokens=i,
        output_tokens=o,
    )
    assert r["serving"]["tensor_parallel"] == x.tensor_parallel
    assert r["total_bytes"] == x.total_bytes
    assert sum(r["components"].values()) + r["overhead_bytes"] == r["total_bytes"]
    assert r["chosen"]["max_batch"] >= 200
    static = webapi.run("vram", {**p, "mode": "static"})
    assert static["mode"] == "static" and static["total_bytes"] > 500 * 2**30
    # the budget calculator prices the same server's tokens
    b = webapi.run(
        "budget",
        {"gpu": "h100-sxm", "gpus": 8, "model": "llama-3.1-70b", "batch": 200, "seq": 4096},
    )
    assert b["inference"]["per_million_tokens"] > 0 and b["inference"]["layout"]["replicas"] >= 1


def test_picker_flags_regulated_data_above_the_table():
    """Issue 38: the picker's first choice on a consumer card or a community cloud is flagged
    for regulated data (licence, data residency), as the report's summary does."""
    r = webapi.run("picker", {"model": "llama-3.2-1b", "task": "inference", "acquire": "rent"})
    top = r["recommended"][0]
    keys = {x["key"] for x in r["regulated"]}
    assert ("regulated.consumer" in keys) == (top["tier"] == "consumer")
    assert ("regulated.community" in keys) == ("community cloud" in (top["offer"] or "").lower())
    r = webapi.run("picker", {"model": "llama-3.1-70b", "task": "inference", "acquire": "own"})
    assert r["recommended"][0]["tier"] != "consumer" and r["regulated"] == []


@pytest.mark.parametrize("kind", ["vram", "serving", "roofline"])
@pytest.mark.parametrize(
    ("gpu", "weights", "kv", "field"),
    [
        ("v100-sxm2-32gb", "nvfp4", "bf16", "weights"),  # Volta: no Marlin FP4 (sm80+)
        ("gaudi3", "mxfp4", "bf16", "weights"),
        ("tpu-v6e", "nvfp4", "bf16", "weights"),
        ("mi355x", "nvfp4", "bf16", "weights"),  # CDNA 4 takes MXFP4, not NVFP4
        ("h100-sxm", "bf16", "nvfp4", "kv_dtype"),  # an NVFP4 KV cache: Blackwell only
        ("h100-sxm", "bf16", "mxfp4", "kv_dtype"),  # an MXFP4 KV cache: FP4 tensor cores only
        ("mi355x", "mxfp4", "nvfp4", "kv_dtype"),  # CDNA 4: MXFP4, not NVFP4
    ],
)
def test_fp4_formats_a_card_has_no_path_for_are_refused_naming_the_field(
    kind, gpu, weights, kv, field
):
    """Issue 34: an FP4 format is offered only where the card's tensor cores take it or an
    engine dequantises it (advisor.data.support.fp4_path); otherwise one error naming the field,
    the same on every calculator (roofline has no KV field)."""
    if kind == "roofline" and field == "kv_dtype":
        pytest.skip("roofline has no kv_dtype")
    params = {"model": "llama-3.1-8b", "gpu": gpu, "weights": weights, "kv_dtype": kv}
    if kind == "vram":
        params["task"] = "inference"
    if kind == "roofline":
        params = {"model": "llama-3.1-8b", "gpu": gpu, "weights": weights, "phase": "decode"}
    err = json.loads(webapi.call(kind, json.dumps(params)))["error"]
    assert (err["key"], err["field"]) == ("support.fp4_unavailable", field)
    assert err["params"]["format"] == (weights if field == "weights" else kv)


@pytest.mark.parametrize("kind", ["vram", "serving", "roofline"])
@pytest.mark.parametrize(
    ("gpu", "weights", "dequantised"),
    [
        ("b200", "nvfp4", False),
        ("mi355x", "mxfp4", False),
        ("h100-sxm", "mxfp4", True),  # gpt-oss's MXFP4 on Hopper: Marlin / TensorRT-LLM
        ("a100-80gb-sxm", "nvfp4", True),  # Marlin FP4, compute capability 8.0
        ("mi300x", "mxfp4", True),  # AMD Quark's MXFP4 emulation
    ],
)
def test_fp4_formats_run_where_native_or_dequantised(kind, gpu, weights, dequantised):
    params = {"model": "llama-3.1-8b", "gpu": gpu, "weights": weights}
    if kind == "vram":
        params["task"] = "inference"
    r = json.loads(webapi.call(kind, json.dumps(params)))
    assert "error" not in r, r.get("error")
    if kind == "serving":
        assert r["fp4_dequantised"] is dequantised


def test_fp4_choices_follow_the_card():
    """The lists the calculators' selects follow (calcruntime/build/pages.py ships them)."""
    from advisor.data import support

    def ch(gid):
        return support.fp4_choices(CAT.gpu(gid))

    assert ch("b200") == {
        "weights": {"nvfp4": "native", "mxfp4": "native"},
        "kv_dtype": {"nvfp4": "native", "mxfp4": "native"},
    }
    assert ch("mi355x") == {"weights": {"mxfp4": "native"}, "kv_dtype": {"mxfp4": "native"}}
    assert ch("h100-sxm") == {
        "weights": {"nvfp4": "dequantised", "mxfp4": "dequantised"},
        "kv_dtype": {},
    }
    assert ch("mi300x") == {"weights": {"mxfp4": "dequantised"}, "kv_dtype": {}}
    for gid in ("v100-sxm2-32gb", "t4", "gaudi3", "tpu-v6e", "trainium2", "m3-ultra", "mi250x"):
        assert ch(gid) == {"weights": {}, "kv_dtype": {}}, gid
    # every card whose catalog entry lists an FP4 format offers it natively
    for g in CAT.gpus:
        for f in g.fp4_formats:
            assert ch(g.id)["weights"][f] == "native", (g.id, f)


def test_picker_and_budget_flag_an_assumed_server_price():
    """Issue 38: the bank case (Llama 3.1 70B, 200 users, 4k, 20 tok/s each, owned) ranks
    8 x MI300X in an 8-OAM server first; that server has no published price, so the picker row
    and the budget calculator's owning items say it is a stated assumption (the page marks
    the row and its item), while an HGX row (a read price) does not."""
    from advisor.data.catalog import load_catalog

    webapi.set_catalog(load_catalog())
    p = webapi.run(
        "picker",
        {"model": "llama-3.1-70b", "task": "inference", "batch": 200, "seq": 4096,
         "acquire": "own", "per_user_tokens_per_s": 20},
    )  # fmt: skip
    rows = {(x["gpu_id"], x["count"]): x for x in p["recommended"]}
    assert rows[("mi300x", 8)]["server_assumed"] and rows[("mi300x", 8)]["system"] == "oam-8"
    assert rows[("h200", 8)]["server_assumed"] is False
    b = webapi.run(
        "budget",
        {"gpu": "mi300x", "gpus": 8, "utilisation": 0.7, "horizon_months": 36,
         "electricity_usd_per_kwh": 0.1, "currency": "USD", "model": ""},
    )  # fmt: skip
    assert b["owning"]["server_assumed"] and b["system"]["server_assumed"]
    server = next(i for i in b["owning"]["items"] if i["key"] == "server")
    assert server["usd"] == b["server_usd"] > 0 and server["source"]["kind"] == "assumption"
