"""Issue 34: the weight formats one user runs on a desktop or unified-memory box: llama.cpp GGUF
Q8_0 / Q4_K_M and MLX 4-bit (advisor.arch.quant, advisor.data.support, the serving search)."""

from __future__ import annotations

import json

import pytest

from advisor import webapi
from advisor.advice import recommend as rec
from advisor.arch import quant
from advisor.core import vocab
from advisor.core.errors import AdvisorError
from advisor.data import support
from advisor.data.catalog import load_catalog
from advisor.memory.estimate import inference_weight_bytes
from advisor.perf import serving_fit as sfit
from advisor.perf import timing

CAT = load_catalog()
GIB = 2**30


@pytest.mark.parametrize(
    "fmt,bpw,tol,cited",
    [
        # llama.cpp tools/quantize/README.md, "Quantization" table (Llama 3.1 8B): Q8_0 8.5008
        # bits/weight (34-byte blocks of 32: 8.5; the rest is F32 norms), Q4_K_M 4.8944
        ("q8_0", 8.5008, 0.001, "tools/quantize/README.md"),
        ("q4_k_m", 4.8944, 1e-9, "tools/quantize/README.md"),
        # MLX docs, mlx.core.quantize: affine, group 64, 4 bits, 16-bit scale and bias per group
        ("mlx-4bit", 4.5, 1e-9, "mlx.core.quantize"),
    ],
)
def test_bits_per_weight_match_the_cited_figures(fmt, bpw, tol, cited):
    f = quant.weight_format(fmt)
    assert f.bits_per_weight == pytest.approx(bpw, abs=tol)
    assert f.scope == "all" and f.quantised
    assert cited in f.source


@pytest.mark.parametrize(
    "model,fmt,size,unit,tol",
    [
        # llama.cpp tools/quantize/README.md: Llama 3.1 8B Q4_K_M 4.58 GiB, Q8_0 7.95 GiB,
        # F16 14.96 GiB ("Quantization" table); 70B Q4_K_M 43.1 GB, 405B 249.1 GB
        # ("Memory/Disk Requirements"). 1 % tolerance (GGUF metadata, rounding of the table).
        ("llama-3.1-8b", "q4_k_m", 4.58, GIB, 0.01),
        ("llama-3.1-8b", "q8_0", 7.95, GIB, 0.01),
        ("llama-3.1-8b", "fp16", 14.96, GIB, 0.01),
        ("llama-3.1-70b", "q4_k_m", 43.1, 1e9, 0.01),
        ("llama-3.1-405b", "q4_k_m", 249.1, 1e9, 0.01),
    ],
)
def test_gguf_file_sizes_match_llama_cpp_s_table(model, fmt, size, unit, tol):
    """The embedding and the output head are quantised with the rest (scope "all"): with them
    at 16 bits the 8B Q4_K_M file would be about 6 GB, not 4.58 GiB."""
    w, sc = inference_weight_bytes(CAT.model(model).spec, fmt)
    assert (w + sc) / unit == pytest.approx(size, rel=tol)


def test_the_formats_are_one_vocabulary():
    for f in quant.LOCAL_WEIGHT_FORMATS:
        assert f in vocab.WEIGHT_FORMATS and f in vocab.PICKER_WEIGHTS
        assert f in sfit.SEARCH_FORMATS and f in support.LOCAL_RUNTIME
        assert timing.PEAK_KEY[f] == "fp16"  # weight-only: dequantised, multiplied at 16 bits
    assert vocab.LOCAL_WEIGHT_FORMATS == quant.LOCAL_WEIGHT_FORMATS == sfit.LOCAL_WEIGHTS


@pytest.mark.parametrize(
    "gpu,fmt,ok",
    [
        ("m3-ultra", "q4_k_m", True),  # llama.cpp Metal
        ("m3-ultra", "mlx-4bit", True),
        ("m4-max", "q8_0", True),
        ("ryzen-ai-max-395", "q4_k_m", True),  # HIP / Vulkan
        ("rtx-4090", "q8_0", True),  # CUDA
        ("dgx-spark", "q4_k_m", True),
        ("ryzen-ai-max-395", "mlx-4bit", False),  # MLX: Apple silicon only
        ("h100-sxm", "mlx-4bit", False),
        ("gaudi3", "q4_k_m", False),  # no ggml backend for SynapseAI
        ("tpu-v6e", "q8_0", False),
        ("trainium2", "q4_k_m", False),
    ],
)
def test_a_local_format_runs_only_where_its_runtime_has_a_backend(gpu, fmt, ok):
    reasons = support.serving_format(CAT.gpu(gpu), fmt)
    assert (not reasons) == ok
    if not ok:
        r = reasons[0]
        assert r.key == "support.runtime" and r.params["field"] == "weights"
        with pytest.raises(AdvisorError) as e:
            support.check_weights(CAT.gpu(gpu), fmt)
        assert e.value.field == "weights" and e.value.key == "support.runtime"


@pytest.mark.parametrize("kind", ["serving", "vram", "roofline"])
def test_calculators_refuse_mlx_on_an_nvidia_card_naming_the_field(kind):
    params = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "weights": "mlx-4bit"}
    if kind == "vram":
        params["task"] = "inference"
    if kind == "roofline":
        params["phase"] = "decode"
    err = json.loads(webapi.call(kind, json.dumps(params)))["error"]
    assert (err["key"], err["field"]) == ("support.runtime", "weights")


def test_four_bit_weights_speed_up_decode_on_a_unified_memory_box_by_their_bytes():
    """Decode on an M3 Ultra is bound by reading the weights: Q4_K_M reads 4.8944/16 of bf16's
    bytes, so one user's tokens/s rises by nearly that ratio (the KV cache and the fixed step
    overhead do not shrink)."""
    spec = CAT.model("llama-3.1-70b").spec
    g = CAT.gpu("m3-ultra")
    web = {}
    for f in ("bf16", "q8_0", "q4_k_m", "mlx-4bit"):
        fit = sfit.fit(
            spec,
            g,
            gpus=1,
            concurrency=1,
            input_tokens=1024,
            output_tokens=256,
            weights=f,
            tensor_parallel=1,
        )
        assert fit.fits and not fit.unsupported
        web[f] = fit.tokens_per_s_per_user
    assert web["bf16"] < web["q8_0"] < web["q4_k_m"] < web["mlx-4bit"]
    assert 2.0 < web["q4_k_m"] / web["bf16"] < 16 / 4.8944


def test_the_picker_ranks_unified_memory_boxes_in_four_bits_for_one_user():
    """One user of Llama 3.1 70B wanting 10 tokens/s: bf16 on an M3 Ultra gives about 4, so the
    'auto' search goes on to llama.cpp's Q4_K_M, which meets it; a datacenter card is never
    offered a local runtime's format in a search."""
    spec = CAT.model("llama-3.1-70b").spec
    w = rec.Workload(
        model=spec,
        task="inference",
        batch=1,
        seq=2048,
        max_gpus=4,
        acquire="own",
        formats=sfit.SEARCH_FORMATS,
        target_tokens_per_s_per_user=10.0,
    )
    rows = rec.recommend(w, CAT)
    by = {(r.gpu_id, r.count): r for r in rows}
    m3 = by[("m3-ultra", 1)]
    assert m3.ok and m3.weights == "q4_k_m"
    gpus = {g.id: g for g in CAT.gpus}
    for r in rows:
        if r.weights in sfit.LOCAL_WEIGHTS:
            assert gpus[r.gpu_id].tier != "datacenter", (r.gpu_id, r.weights)
    # named explicitly, MLX 4-bit ranks the Apple boxes and refuses the others with the reason
    mlx = rec.Workload(
        model=spec, task="inference", batch=1, seq=2048, max_gpus=4, weights="mlx-4bit"
    )
    rows = {(r.gpu_id, r.count): r for r in rec.recommend(mlx, CAT)}
    assert rows[("m3-ultra", 1)].ok and rows[("m3-ultra", 1)].weights == "mlx-4bit"
    assert rows[("ryzen-ai-max-395", 1)].reasons[0].key == "support.runtime"


def test_the_picker_page_offers_mlx_only_on_apple_boxes():
    """The picker's weights select (vocab.PICKER_WEIGHTS) with MLX 4-bit: the Apple boxes rank,
    every other card is refused with support.runtime (translated: calc.r.support.runtime)."""
    params = {
        "model": "llama-3.1-70b",
        "task": "inference",
        "batch": 1,
        "seq": 2048,
        "acquire": "own",
        "max_gpus": 2,
        "weights": "mlx-4bit",
    }
    r = json.loads(webapi.call("picker", json.dumps(params)))
    gpus = {g.id: g for g in CAT.gpus}
    assert r["recommended"]
    assert all(gpus[x["gpu_id"]].software == "Metal/MLX" for x in r["recommended"])
    keys = {x["reasons"][0]["key"] for x in r["rejected"] if x["gpu_id"] == "h100-sxm"}
    assert "support.runtime" in keys or keys == {"recommend.platform"}
    ryzen = [x for x in r["rejected"] if x["gpu_id"] == "ryzen-ai-max-395"]
    assert ryzen and all(x["reasons"][0]["key"] == "support.runtime" for x in ryzen)


def test_a_report_profile_may_name_a_local_format():
    """A client profile's `weights` takes llama.cpp's and MLX's formats; the report ranks with
    them and names the format (advisor.advice.profile.WEIGHTS)."""
    from pathlib import Path

    from advisor import report
    from advisor.advice.profile import parse_profile

    root = Path(__file__).resolve().parent.parent
    text = (root / "examples" / "bank-serving-70b.yaml").read_text(encoding="utf-8")
    assert "weights: bf16" in text
    text = text.replace("weights: bf16", "weights: q4_k_m")
    data = report.build_report(parse_profile(text, CAT), CAT, lang="en")
    r = data["workloads"][0]["recommendation"]
    assert r["weights"] == "q4_k_m"
    assert support.LOCAL_RUNTIME[r["weights"]] == "llama.cpp"
    assert CAT.gpu(r["gpu_id"]).software in support.LOCAL_SOFTWARE["llama.cpp"]


def test_the_calculators_weights_select_lists_a_local_format_only_where_its_runtime_runs():
    """The serving / VRAM / roofline selects follow the chosen card (render.mjs formatOptions over
    the build's lists: each card's paths from support.form_paths and the gated formats,
    support.GATED_WEIGHTS): MLX 4-bit only on Apple, the GGUF formats where llama.cpp has a
    backend, none of them on a Gaudi or a TPU."""
    import shutil
    import subprocess

    from calcruntime.build import pages
    from tests.conftest import ROOT

    assert set(support.GATED_WEIGHTS) == {"nvfp4", "mxfp4", *vocab.LOCAL_WEIGHT_FORMATS}
    paths = {
        g: support.form_paths(CAT.gpu(g))["weights"] for g in ("m3-ultra", "h100-sxm", "gaudi3")
    }
    assert {"q8_0", "q4_k_m", "mlx-4bit"} <= set(paths["m3-ultra"])
    assert {"q8_0", "q4_k_m"} <= set(paths["h100-sxm"]) and "mlx-4bit" not in paths["h100-sxm"]
    assert not set(vocab.LOCAL_WEIGHT_FORMATS) & set(paths["gaudi3"])
    if shutil.which("node") is None:
        pytest.skip("needs Node.js")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pages.state, "current", lambda: type("S", (), {"catalog": CAT})())
        lists = pages._catalog_lists()
    assert lists["gated"] == list(support.GATED_WEIGHTS)
    script = """
const m = await import(process.argv[1]);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const L = JSON.parse(input);
const out = {};
for (const g of ["m3-ultra", "h100-sxm", "gaudi3"]) out[g] = m.formatOptions("weights", g, { lang: "en" }, L).map(([o]) => o);
process.stdout.write(JSON.stringify(out));
"""
    r = subprocess.run(
        ["node", "--input-type=module", "-e", script, (ROOT / "calcruntime/browser/render.mjs").as_uri()],
        input=json.dumps(lists), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    offered = json.loads(r.stdout)
    assert {"q4_k_m", "mlx-4bit"} <= set(offered["m3-ultra"])
    assert "q4_k_m" in offered["h100-sxm"] and "mlx-4bit" not in offered["h100-sxm"]
    assert not set(vocab.LOCAL_WEIGHT_FORMATS) & set(offered["gaudi3"])
    assert "bf16" in offered["gaudi3"]  # the other formats stay listed
