"""Issue 35's faces: the serving calculator's fields (request rate, speculative decoding / MTP,
prefix cache, disaggregated pools, expert parallelism, owned cost) through the web API, and
`advisor time serve` giving the same figures for the same options."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from advisor import cli, webapi
from advisor.advice import recommend
from advisor.core import numfmt
from advisor.data.catalog import load_catalog
from advisor.money import cost, interactivity
from advisor.perf import disaggregated, queueing, speculative

CAT = load_catalog()
SPEC = CAT.model("llama-3.1-8b").spec
GPU = CAT.gpu("h100-sxm")


@pytest.fixture(autouse=True)
def _catalog():
    webapi.set_catalog(CAT)


def _serve(**params) -> dict:
    r = json.loads(webapi.call("serving", json.dumps(params)))
    assert "error" not in r, r
    return r


def _error(**params) -> dict:
    r = json.loads(webapi.call("serving", json.dumps(params)))
    assert "error" in r, sorted(r)
    return r["error"]


def test_defaults_are_off_and_the_acceptance_is_deepseek_v3s():
    d = webapi.DEFAULTS["serving"]
    assert d["request_rate"] == "" and d["draft_tokens"] == 0 and d["prefix_hit_rate"] == 0.0
    assert d["pools"] == "colocated" and d["ep"] == 0
    # DeepSeek-V3 Technical Report §5.4.3 (advisor.perf.speculative)
    assert d["acceptance"] == speculative.DEFAULT_ACCEPTANCE == 0.85
    r = _serve()
    assert r["load"] is None and r["speculative"] is None and r["disaggregated"] is None
    assert r["expert_parallel"] is None


def test_request_rate_gives_ttft_and_tpot_under_queueing():
    r = _serve(request_rate="12", ttft_ms="200", tpot_ms="25")
    kw = dict(input_tokens=1024, output_tokens=256, weights="bf16", kv_dtype="bf16")
    want = queueing.at_rate(SPEC, GPU, request_rate=12.0, tensor_parallel=1, gpus=1, **kw)
    assert r["load"] == pytest.approx(want.to_dict())
    # a queue only adds waiting: TTFT at a rate is at least the lone request's
    assert r["load"]["ttft_s"] >= r["points"][0]["ttft_s"]
    best = queueing.max_rate(SPEC, GPU, ttft_s=0.2, tpot_s=0.025, **kw)
    assert r["max_rate"]["request_rate_per_s"] == pytest.approx(best.request_rate_per_s)
    assert r["max_rate"]["ttft_s"] <= 0.2 and r["max_rate"]["tpot_s"] <= 0.025
    # a higher rate waits longer
    assert _serve(request_rate="18")["load"]["ttft_s"] > r["load"]["ttft_s"]


def test_speculative_decoding_and_prefix_cache_change_the_curve():
    plain = _serve()
    mtp = _serve(draft_tokens=1)
    assert mtp["speculative"]["tokens_per_step"] == pytest.approx(1.85)
    # a lone user reads faster with MTP at 85 % acceptance
    assert mtp["points"][0]["tpot_s"] < plain["points"][0]["tpot_s"]
    # nothing accepted: slower than no speculation (the draft and the verification cost)
    none = _serve(draft_tokens=1, acceptance=0)
    assert none["points"][0]["tpot_s"] > plain["points"][0]["tpot_s"]
    cached = _serve(prefix_hit_rate="0.75")
    assert cached["points"][0]["prefill_s"] < plain["points"][0]["prefill_s"]
    assert cached["prefix_hit_rate"] == 0.75


def test_disaggregated_pools_are_the_split_that_meets_both_limits():
    r = _serve(pools="disaggregated", gpus=8, ttft_ms=500, tpot_ms=30)
    want = disaggregated.split(
        SPEC, GPU, gpus=8, input_tokens=1024, output_tokens=256, ttft_s=0.5, tpot_s=0.03
    )
    d = r["disaggregated"]["plan"]
    assert d == pytest.approx(want.to_dict())
    assert d["prefill_instances"] + d["decode_instances"] <= 8
    assert d["ttft_s"] <= 0.5 and d["tpot_s"] <= 0.03
    # limits no split can meet: said, not an error
    assert _serve(pools="disaggregated", gpus=2, ttft_ms=1, tpot_ms=1)["disaggregated"] == {
        "plan": None
    }


def test_expert_parallelism_for_an_moe_model():
    r = _serve(model="mixtral-8x7b", ep=8, gpus=8)
    assert r["expert_parallel"]["ep"] == 8 and r["expert_parallel"]["in_domain"]
    pts = r["points"]
    assert [p["concurrency"] for p in pts][:3] == [1, 2, 4]
    per_gpu = [p["tokens_per_s_per_gpu"] for p in pts]
    assert per_gpu == sorted(per_gpu) and all(0 < p["all_to_all_share"] < 1 for p in pts)
    # the less balanced the experts, the slower a step
    worse = _serve(model="mixtral-8x7b", ep=8, gpus=8, imbalance=2)
    assert worse["points"][-1]["tpot_s"] > pts[-1]["tpot_s"]


def test_cost_per_million_rented_and_owned_along_the_curve():
    r = _serve(gpus=8)
    owned = interactivity.owned_usd_per_gpu_hour(
        GPU,
        8,
        CAT.systems,
        utilisation=0.6,
        horizon_months=36,
        electricity_usd_per_kwh=recommend.DEFAULT_ELECTRICITY_USD_PER_KWH,
    )
    assert r["owned"] == pytest.approx(owned.to_dict())
    # the owning total is cost.owning's (the budget calculator's, recommend's, the reports')
    assert owned.own_total_usd == pytest.approx(
        owned.usd_per_gpu_hour * 36 * cost.HOURS_PER_MONTH * 0.6 * owned.gpus_bought
    )
    for c, p in zip(r["curve"], r["points"], strict=True):
        assert c["own_usd_per_million_tokens"] == pytest.approx(
            owned.usd_per_gpu_hour * 8 / (p["tokens_per_s"] * 3600) * 1e6
        )
        if r["usd_per_gpu_hour"] is not None:
            assert c["usd_per_million_tokens"] == pytest.approx(
                r["usd_per_gpu_hour"] * 8 / (p["tokens_per_s"] * 3600) * 1e6
            )
    # busier hardware costs less per token
    busy = _serve(gpus=8, utilisation=0.9)
    assert (
        busy["curve"][-1]["own_usd_per_million_tokens"]
        < r["curve"][-1]["own_usd_per_million_tokens"]
    )
    # one SXM card is bought as a whole board (advisor.data.systems): the hour is that board's
    assert _serve()["owned"]["gpus_bought"] in (4, 8)


@pytest.mark.parametrize(
    ("params", "field", "key"),
    [
        ({"request_rate": "-1"}, "request_rate", "field.positive"),
        ({"request_rate": "0"}, "request_rate", "field.positive"),
        ({"request_rate": "fast"}, "request_rate", "field.not_number"),
        ({"request_rate": "1e6"}, "request_rate", "serving.rate_above_capacity"),
        ({"request_rate": "<b>1</b>"}, "request_rate", "field.not_number"),
        ({"draft_tokens": "17"}, "draft_tokens", "field.too_large"),
        ({"draft_tokens": "-1"}, "draft_tokens", "field.too_small"),
        ({"acceptance": "1"}, "acceptance", "field.too_large"),
        ({"acceptance": "nan"}, "acceptance", "field.not_finite"),
        ({"draft_layers": "-2"}, "draft_layers", "field.non_negative"),
        ({"prefix_hit_rate": "1"}, "prefix_hit_rate", "field.too_large"),
        ({"prefix_hit_rate": "-0.1"}, "prefix_hit_rate", "field.non_negative"),
        ({"pools": "split"}, "pools", "name.unknown"),
        ({"pools": "disaggregated", "gpus": 8}, "ttft_ms", "disagg.needs_limits"),
        ({"pools": "disaggregated", "gpus": 8, "ttft_ms": 500}, "tpot_ms", "disagg.needs_limits"),
        (
            {"pools": "disaggregated", "gpus": 8, "ttft_ms": 500, "tpot_ms": 30, "draft_tokens": 1},
            "draft_tokens",
            "disagg.plain_only",
        ),
        ({"pools": "disaggregated", "ttft_ms": 500, "tpot_ms": 30}, "gpus", "disagg.too_few_gpus"),
        ({"ep": "8", "gpus": 8}, "ep", "ep.dense_model"),
        ({"ep": "-1"}, "ep", "field.too_small"),
        ({"model": "mixtral-8x7b", "ep": 8, "gpus": 4}, "gpus", "ep.gpus_multiple"),
        ({"model": "mixtral-8x7b", "ep": 16, "gpus": 16}, "ep", "ep.too_wide"),
        (
            {"model": "mixtral-8x7b", "ep": 8, "gpus": 8, "tensor_parallel": 2},
            "tensor_parallel",
            "ep.tp_one",
        ),
        (
            {"model": "mixtral-8x7b", "ep": 8, "gpus": 8, "request_rate": 1},
            "request_rate",
            "ep.not_with",
        ),
        (
            {"model": "mixtral-8x7b", "ep": 8, "gpus": 8, "imbalance": "0.5"},
            "imbalance",
            "field.too_small",
        ),
        # the engine settings: on/off only, and refused where the model would ignore them
        # (as the CLI refuses --no-cuda-graphs and --kv-on-demand)
        ({"cuda_graphs": "maybe"}, "cuda_graphs", "field.not_bool"),
        ({"kv_on_demand": 2}, "kv_on_demand", "field.not_bool"),
        ({"kv_on_demand": True}, "kv_on_demand", "serving.flag_needs_load"),
        (
            {"model": "mixtral-8x7b", "ep": 8, "gpus": 8, "cuda_graphs": False},
            "cuda_graphs",
            "serving.flag_needs_plain",
        ),
        (
            {"model": "mixtral-8x7b", "ep": 8, "gpus": 8, "kv_on_demand": "1", "ttft_ms": 500},
            "kv_on_demand",
            "serving.flag_needs_plain",
        ),
        (
            {"pools": "disaggregated", "gpus": 8, "ttft_ms": 500, "tpot_ms": 30, "cuda_graphs": 0},
            "cuda_graphs",
            "serving.flag_needs_plain",
        ),
        ({"utilisation": "0"}, "utilisation", "field.positive"),
        ({"utilisation": "1.5"}, "utilisation", "field.too_large"),
        ({"horizon_months": "0"}, "horizon_months", "field.too_small"),
    ],
)
def test_bad_serving_input_names_its_field(params, field, key):
    from hooks.templating import load_strings
    from tests.conftest import ROOT

    err = _error(**params)
    assert (err["field"], err["key"]) == (field, key), err
    strings = load_strings(ROOT / "templates" / "i18n")
    for lang in ("az", "en"):
        # the page names the field by its label and says what is wrong in its language
        assert f"err.{key}" in strings[lang] and f"calc.f.{field}" in strings[lang]


def _cli_json(*args) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = cli.main(["time", "serve", "--json", *args])
    assert rc == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize(
    ("web", "argv"),
    [
        (
            {"request_rate": 9, "ttft_ms": 250, "tpot_ms": 25, "gpus": 2},
            ["--request-rate", "9", "--ttft-ms", "250", "--tpot-ms", "25", "--gpus", "2"],
        ),
        (
            {"draft_tokens": 2, "acceptance": 0.7, "prefix_hit_rate": 0.5, "utilisation": 0.8},
            ["--draft-tokens", "2", "--acceptance", "0.7", "--prefix-hit", "0.5"]
            + ["--utilisation", "0.8"],
        ),
        (
            {"model": "llama-3.1-70b", "tensor_parallel": 4, "gpus": 8, "weights": "fp8"},
            ["--model", "llama-3.1-70b", "--tp", "4", "--gpus", "8", "--weights", "fp8"],
        ),
        # the engine settings (the form's checkboxes, the CLI's flags): no CUDA graphs moves
        # the curve, the load and the largest rate; KV blocks on demand the load model's room
        (
            {"cuda_graphs": False, "kv_on_demand": True, "request_rate": 6, "tpot_ms": 40},
            ["--no-cuda-graphs", "--kv-on-demand", "--request-rate", "6", "--tpot-ms", "40"],
        ),
        (
            {"cuda_graphs": "0", "engine": "trtllm", "ttft_ms": 400, "gpus": 2},
            ["--no-cuda-graphs", "--engine", "trtllm", "--ttft-ms", "400", "--gpus", "2"],
        ),
        (
            {"kv_on_demand": "1", "request_rate": 9, "ttft_ms": 250, "tpot_ms": 25},
            ["--kv-on-demand", "--request-rate", "9", "--ttft-ms", "250", "--tpot-ms", "25"],
        ),
    ],
)
def test_cli_time_serve_gives_the_web_apis_figures(web, argv):
    """`advisor time serve` and the serving calculator are one computation: the same curve,
    load, largest rate, speculation and costs (rented at the cheapest offer, owned)."""
    if "--model" not in argv:
        argv = ["--model", "llama-3.1-8b", *argv]
    w = _serve(**web)
    c = _cli_json("--gpu", "h100-sxm", *argv)
    assert c["plan"]["points"] == w["points"]
    assert c["curve"] == w["curve"]
    assert c["load"] == w["load"] and c["max_rate"] == w["max_rate"]
    assert c["speculative"] == w["speculative"]
    assert c["owned"] == w["owned"] and c["usd_per_gpu_hour"] == w["usd_per_gpu_hour"]
    assert c["engine_settings"] == w["engine_settings"]


def test_cli_disaggregated_and_expert_parallel_match_the_web_api():
    w = _serve(pools="disaggregated", gpus=8, ttft_ms=500, tpot_ms=30)
    c = _cli_json(
        "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--disaggregate", "--gpus", "8",
        "--ttft-ms", "500", "--tpot-ms", "30",
    )  # fmt: skip
    assert c["disaggregated"] == w["disaggregated"]["plan"]
    w = _serve(model="mixtral-8x7b", ep=8, gpus=8)
    c = _cli_json(
        "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--ep", "8", "--batch-per-gpu", "16",
        "--domain", str(w["expert_parallel"]["domain"]),
    )  # fmt: skip
    at16 = next(p for p in w["points"] if p["concurrency"] == 16)
    for k in ("ttft_s", "tpot_s", "tokens_per_s_per_user", "tokens_per_s_per_gpu"):
        assert c["point"][k] == at16[k]
    # the whole expert-parallel curve and its costs, on 16 GPUs (two groups of 8)
    w = _serve(model="mixtral-8x7b", ep=8, gpus=16, imbalance=1.5)
    c = _cli_json(
        "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--ep", "8", "--gpus", "16",
        "--imbalance", "1.5",
    )  # fmt: skip
    assert c["curve"] == w["curve"] and c["owned"] == w["owned"]
    assert [p["batch_per_gpu"] for p in c["points"]] == [p["concurrency"] for p in w["points"]]
    assert [p["tpot_s"] for p in c["points"]] == [p["tpot_s"] for p in w["points"]]


def test_cli_engine_flags_reach_the_serving_and_load_models():
    """`--no-cuda-graphs`, `--kv-on-demand`, `--scheduler-steps`, `--prefill-min-queue`: the
    same figures as serving.point / queueing with those settings, and each refused, naming its
    field, where it would be ignored."""
    from advisor.perf import efficiency, serving

    base = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--concurrency", "32"]
    load = ["--request-rate", "6"]
    c = _cli_json(*base, *load, "--no-cuda-graphs", "--kv-on-demand")
    kw = dict(input_tokens=1024, output_tokens=256, weights="bf16", kv_dtype="bf16")
    eager = serving.point(SPEC, GPU, concurrency=32, cuda_graphs=False, **kw)
    graphs = serving.point(SPEC, GPU, concurrency=32, **kw)
    assert c["point"] == pytest.approx(eager.to_dict())
    # the host's launches cost one eager_iteration_ms per decode step
    assert eager.decode_step_s - graphs.decode_step_s == pytest.approx(
        efficiency.DEFAULT_STACK.eager_iteration_ms * 1e-3
    )
    assert c["plan"]["points"][-1]["tpot_s"] > _cli_json(*base)["plan"]["points"][-1]["tpot_s"]
    want = queueing.at_rate(SPEC, GPU, request_rate=6.0, cuda_graphs=False, kv_on_demand=True, **kw)
    assert c["load"] == pytest.approx(want.to_dict())
    assert c["engine_settings"]["eager_iteration_ms"] == efficiency.DEFAULT_STACK.eager_iteration_ms
    steps = _cli_json(*base, *load, "--scheduler-steps", "9", "--prefill-min-queue", "4")
    want = queueing.at_rate(
        SPEC, GPU, request_rate=6.0, scheduler_steps=9, prefill_min_queue=4, **kw
    )
    assert steps["load"] == pytest.approx(want.to_dict())
    assert steps["load"] != _cli_json(*base, *load)["load"]
    # CUDA graphs with padding on plain replicas: the curve as serving.plan gives it
    padded = _cli_json(*base, "--cuda-graph-batch-sizes", "16,64")
    want = serving.plan(SPEC, GPU, cuda_graph_batch_sizes=(16, 64), **kw)
    assert padded["plan"]["points"] == [p.to_dict() for p in want.points]
    assert padded["point"] == pytest.approx(
        serving.point(SPEC, GPU, concurrency=32, cuda_graph_batch_sizes=(16, 64), **kw).to_dict()
    )
    assert padded["point"]["tpot_s"] > _cli_json(*base)["point"]["tpot_s"]  # 32 runs as 64
    for argv, flag in (
        (["--cuda-graph-batch-sizes", "64", "--no-cuda-graphs"], "--cuda-graph-batch-sizes"),
        (["--scheduler-steps", "9"], "--scheduler-steps"),
        (["--kv-on-demand"], "--kv-on-demand"),
        ([*load, "--prefill-min-queue", "3"], "--prefill-min-queue"),
        (["--ep", "8", "--no-cuda-graphs"], "--no-cuda-graphs"),
        (
            ["--disaggregate", "--gpus", "8", "--ttft-ms", "500", "--no-cuda-graphs"],
            "--no-cuda-graphs",
        ),
    ):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = cli.main(["time", "serve", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", *argv])
        assert rc == 2 and f"{flag} applies" in err.getvalue(), (argv, err.getvalue())


def test_web_engine_settings_reach_the_serving_and_load_models():
    """The serving calculator's engine settings: `cuda_graphs` off gives serving.plan's curve
    and queueing's load and largest rate without CUDA graphs (the fitted host time per
    iteration, efficiency.Stack.eager_iteration_ms); `kv_on_demand` gives queueing's load with
    KV blocks on demand and the room serving.max_concurrency finds for it; both default to the
    engine run as before (CUDA graphs on, whole contexts reserved)."""
    from advisor.perf import efficiency, serving

    d = webapi.DEFAULTS["serving"]
    assert d["cuda_graphs"] is True and d["kv_on_demand"] is False
    kw = dict(input_tokens=1024, output_tokens=256, weights="bf16", kv_dtype="bf16")
    base = _serve(request_rate=6, tpot_ms=40)
    assert base["engine_settings"]["cuda_graphs"] and not base["engine_settings"]["kv_on_demand"]
    assert base["engine_settings"]["eager_iteration_ms"] is None
    w = _serve(request_rate=6, tpot_ms=40, cuda_graphs=False)
    plan = serving.plan(SPEC, GPU, cuda_graphs=False, **kw)
    assert w["points"] == [p.to_dict() for p in plan.points]
    assert w["points"][-1]["tpot_s"] > base["points"][-1]["tpot_s"]
    want = queueing.at_rate(SPEC, GPU, request_rate=6, cuda_graphs=False, **kw)
    assert w["load"] == want.to_dict() and w["load"]["tpot_s"] > base["load"]["tpot_s"]
    rate = queueing.max_rate(SPEC, GPU, ttft_s=None, tpot_s=0.04, cuda_graphs=False, **kw)
    assert w["max_rate"] == rate.to_dict()
    assert w["engine_settings"]["eager_iteration_ms"] == efficiency.DEFAULT_STACK.eager_iteration_ms
    k = _serve(request_rate=6, kv_on_demand=True)
    want = queueing.at_rate(SPEC, GPU, request_rate=6, kv_on_demand=True, **kw)
    assert k["load"] == want.to_dict()
    room = serving.max_concurrency(SPEC, GPU, kv_on_demand=True, **kw)
    assert k["engine_settings"]["kv_on_demand_concurrency"] == room > k["kv_limited_concurrency"]
    assert k["points"] == _serve(request_rate=6)["points"]  # the curve reserves whole contexts


def test_engine_settings_are_checkboxes_with_notes_in_both_languages():
    """The form offers the two engine settings as checkboxes labelled in the page's language
    (CUDA graphs checked by default); the result says the fitted host time per iteration with
    the figure from the web API's result, and the room KV blocks on demand leave."""
    import shutil

    from hooks.templating import load_strings
    from tests.conftest import ROOT

    if shutil.which("node") is None:
        pytest.skip("needs Node.js")
    from tests.node_helpers import node_module

    strings = load_strings(ROOT / "templates" / "i18n")
    result = webapi.run("serving", {"cuda_graphs": False, "kv_on_demand": True, "request_rate": 6})
    script = """
const m = await import(process.argv[1]);
const [S, state, result] = JSON.parse(process.argv[2]);
const L = { models: [["llama-3.1-8b", "Llama 3.1 8B"]], gpus: [["h100-sxm", "H100 SXM"]], networks: [], options: new Proxy({}, { get: () => [] }) };
process.stdout.write(JSON.stringify([m.renderCalc("serving", state, null, S, L), m.renderResult("serving", result, S)]));
"""
    es = result["engine_settings"]
    for lang in ("az", "en"):
        S = {"lang": lang, **strings[lang]}
        for state, on in (({}, (False, False)), (webapi.DEFAULTS["serving"], (True, False))):
            page, _ = json.loads(
                node_module(script, (ROOT / "calcruntime/browser/render.mjs").as_uri(),
                            json.dumps([S, state, result]))
            )  # fmt: skip
            for name, checked in zip(("cuda_graphs", "kv_on_demand"), on, strict=True):
                box = f'<input id="calc-serving-{name}" name="{name}" type="checkbox" value="1"'
                assert box in page, (lang, name)
                assert (box + " checked>" in page) is checked, (lang, name, state)
                label = strings[lang][f"calc.f.{name}"].replace("'", "&#39;")
                assert f'<label for="calc-serving-{name}">{label}</label>' in page
        _, out = json.loads(
            node_module(script, (ROOT / "calcruntime/browser/render.mjs").as_uri(),
                        json.dumps([S, {}, result]))
        )  # fmt: skip
        ms = numfmt.number(es["eager_iteration_ms"], 1, lang, trim=True)
        eager = strings[lang]["calc.sv.eager"].replace("{ms}", ms).replace("'", "&#39;")
        assert f'<p class="calc-note" data-out="eager">{eager}</p>' in out, lang
        kv = numfmt.number(es["kv_on_demand_concurrency"], 0, lang, trim=True)
        assert f'<strong data-out="kv_on_demand_limit">{kv}</strong>' in out, lang
    # off (the defaults), no note
    plain = webapi.run("serving", {})
    _, out = json.loads(
        node_module(script, (ROOT / "calcruntime/browser/render.mjs").as_uri(),
                    json.dumps([{"lang": "en", **strings["en"]}, {}, plain]))
    )  # fmt: skip
    assert 'data-out="eager"' not in out and 'data-out="kv_on_demand"' not in out


def test_report_interactivity_curve_with_cost_per_million():
    """The report's curve (section 4) carries tokens/s per GPU and the cost per million tokens,
    rented and owned, from the recommendation's own costs: at the users' point they are the
    recommendation row's figures, and a point with more tokens/s costs less per token."""
    from advisor import report
    from advisor.advice.profile import parse_profile
    from tests.conftest import ROOT

    text = (ROOT / "examples" / "bank-serving-70b.yaml").read_text(encoding="utf-8")
    profile = parse_profile(text, CAT)
    data = report.build_report(profile, CAT, lang="en")
    checked = 0
    for wd in data["workloads"]:
        r, curve = wd["recommendation"], wd["serving_curve"]
        if r is None or curve is None:
            continue
        users = curve["users_point"]
        assert users["per_million_tokens"] == r["per_million_tokens"]
        assert users["own_per_million_tokens"] == r["own_per_million_tokens"]
        priced = [p for p in curve["points"] if p["own_per_million_tokens"] is not None]
        assert priced, "the example is owned: its curve is priced"
        by_tps = sorted(priced, key=lambda p: p["tokens_per_s"])
        costs = [p["own_per_million_tokens"] for p in by_tps]
        assert costs == sorted(costs, reverse=True)
        html = report.render_html(data, report.Publisher("P"))
        assert "Tokens/s per GPU" in html and "Per million tokens, owned" in html
        assert report.tr("en", "rec.curve_cost")[:40] in html
        assert 'data-chart="interactivity-' in html
        checked += 1
    assert checked
    az = report.render_html(report.build_report(profile, CAT, lang="az"), report.Publisher("P"))
    assert "Milyon tokenə, alışda" in az
