"""FLOP conventions (advisor.arch.flops), bytes a step reads and the roofline (advisor.perf.timing),
a memory model's training setup on the kernel-level step and a stated MFU (advisor.perf.training):
hand-computed cases and published figures."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from advisor.arch import flops
from advisor.arch.models import active_param_count, from_hf_config, param_count
from advisor.core.errors import AdvisorError
from advisor.data.catalog import load_catalog
from advisor.perf import efficiency, timing, training


def fake_gpu(**kw):
    d = dict(
        id="fake",
        name="Fake",
        tier="datacenter",
        peak_tflops={"bf16": 100.0, "fp16": 100.0, "fp32": 10.0},
        memory_bandwidth_gb_per_s=1000.0,
        memory_bytes=80 * 10**9,
        interconnect="nvlink4",
        interconnect_gb_per_s=100.0,
        tdp_w=500.0,
        price_usd=None,
        doc={},
    )
    d.update(kw)
    return SimpleNamespace(**d)


# h=64, 4 heads of 16, 2 KV heads (kv_dim 32), 2 layers, MLP 128, vocab 100, untied.
# per layer: attention 64*64 + 2*64*32 + 64*64 = 12,288; MLP 3*64*128 = 24,576; norms 128
#   -> 36,992; 2 layers 73,984; embeddings 6,400; head norm 64 + 6,400 -> total 86,848.
# matmul params (no embedding lookup) = 86,848 - 6,400 = 80,448.
TINY = from_hf_config(
    dict(
        model_type="llama",
        hidden_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_hidden_layers=2,
        intermediate_size=128,
        vocab_size=100,
        max_position_embeddings=64,
    ),
    name="tiny",
)


def test_tiny_counts():
    assert param_count(TINY) == 86_848
    assert flops.matmul_params(TINY) == 80_448


def test_training_flops_by_hand():
    # per token: 6 * 80,448 + 12 * layers 2 * seq 32 * d_attn 64 = 482,688 + 49,152 = 531,840
    f = flops.training_flops(TINY, tokens=1000, seq=32)
    assert f.model_flops_per_token == 531_840
    assert f.model_flops == 531_840 * 1000
    assert f.hardware_flops == f.model_flops
    # full checkpointing re-runs the forward: + 2N + attention forward (49,152 / 3 = 16,384)
    full = flops.training_flops(TINY, tokens=1000, seq=32, checkpointing="full")
    assert full.hardware_flops_per_token == 531_840 + 160_896 + 16_384
    assert full.model_flops == f.model_flops
    sel = flops.training_flops(TINY, tokens=1000, seq=32, checkpointing="selective")
    assert sel.hardware_flops_per_token == 531_840 + 16_384
    # LoRA: 4N for the frozen weights + 6 per adapter parameter
    lora = flops.training_flops(TINY, tokens=1, seq=32, task="lora", lora_params=1000)
    assert lora.model_flops_per_token == 4 * 80_448 + 6 * 1000 + 49_152


def test_prefill_and_decode_flops_by_hand():
    # prefill of 4 tokens: 2 * N * 4 + 4 * 64 * (1+2+3+4 = 10 pairs) * 2 layers
    assert flops.prefill_flops(TINY, 4) == 2 * 80_448 * 4 + 4 * 64 * 10 * 2
    # decode at context 10, batch 3: 3 * (2N + 4 * 64 * 10 * 2 layers)
    assert flops.decode_flops(TINY, 10, batch=3) == 3 * (2 * 80_448 + 4 * 64 * 10 * 2)


def test_decode_rate_by_hand():
    # weights read: 74,048 layer params * 2 B + head 6,400 * 2 B = 160,896 B
    # KV read: batch 3 * 2 layers * (K+V) 2 * kv_dim 32 * 2 B * 10 tokens = 7,680 B
    assert timing.decode_weight_bytes(TINY, "bf16") == 160_896
    assert timing.kv_read_bytes(TINY, 10, batch=3) == 7_680
    # on the roofline at the kernel-level ceilings: 2 matmul FLOPs per weight against 168,576 B
    r = timing.decode_roofline(TINY, fake_gpu(), batch=3, context=10)
    assert r.bytes_moved == 160_896 + 7_680
    assert r.flops == flops.decode_flops(TINY, 10, batch=3)
    assert r.bound == "memory_bandwidth" and r.comm_time_s == 0
    # int4 (bitsandbytes, advisor.arch.quant): block linear weights 73,728 at 0.5 B + 4/64 B of
    # absmax; head, norms (6,720 params) stay 16-bit
    assert timing.decode_weight_bytes(TINY, "int4") == pytest.approx(
        73_728 * (0.5 + 4 / 64) + 6_720 * 2
    )


def test_roofline_hand_cases():
    gpu = fake_gpu()  # 100 TFLOPS bf16, 1000 GB/s -> ridge 100 FLOP/B
    assert timing.ridge_point(gpu, "bf16") == pytest.approx(100.0)
    hi = timing.roofline(1e12, 1e9, gpu, "bf16")  # intensity 1000
    assert hi.intensity_flop_per_byte == pytest.approx(1000)
    assert hi.bound == "compute" and hi.attainable_tflops == pytest.approx(100)
    lo = timing.roofline(1e12, 1e11, gpu, "bf16")  # intensity 10
    assert lo.bound == "memory_bandwidth" and lo.attainable_tflops == pytest.approx(10)
    assert timing.roofline(1e12, 1e9, gpu, "bf16", fits=False).bound == "vram_capacity"
    # 1e12 FLOP at 100 TFLOPS = 10 ms; comms 50 ms dominate
    assert timing.roofline(1e12, 1e9, gpu, "bf16", comm_time_s=0.05).bound == "interconnect"
    # fp32 training runs at the non-tensor rate (10 TFLOPS): ridge 10
    assert timing.ridge_point(gpu, "fp32") == pytest.approx(10.0)
    with pytest.raises(AdvisorError) as e:
        timing.ridge_point(fake_gpu(peak_tflops={"fp16": 65.0}), "bf16")
    assert e.value.key == "gpu.precision_unsupported"


def test_moe_active_parameters_and_experts_read():
    spec = load_catalog().model("mixtral-8x7b").spec
    # Mixtral 8x7B: 12.9B active of 46.7B (Jiang et al. 2024, arXiv:2401.04088)
    assert active_param_count(spec) / 1e9 == pytest.approx(12.9, rel=0.01)
    f = flops.training_flops(spec, tokens=1, seq=1)
    assert f.model_flops_per_token / 6 == pytest.approx(flops.matmul_params(spec), rel=1e-3)
    assert flops.expected_experts_touched(8, 2, 1) == pytest.approx(2)
    assert flops.expected_experts_touched(8, 2, 64) == pytest.approx(8, rel=1e-6)
    one = timing.decode_weight_bytes(spec, "bf16", batch=1)
    many = timing.decode_weight_bytes(spec, "bf16", batch=256)
    # batch 1 reads the 2 routed experts: exactly the active matmul parameters in bf16
    assert one == pytest.approx(2 * flops.matmul_params(spec), rel=1e-9)
    assert many / 2 == pytest.approx(flops.matmul_params(spec, active=False), rel=1e-6)


# LLaMA-65B (Touvron et al. 2023, arXiv:2302.13971): dim 8192, 64 heads, 80 layers, FFN 22016,
# vocab 32000, context 2048; trained on 1.4T tokens on 2048 A100-80GB; Table 15: 1,022,362
# GPU-hours; §2.4: "around 380 tokens/sec/GPU", "approximately 21 days".
LLAMA_65B = from_hf_config(
    dict(
        model_type="llama",
        hidden_size=8192,
        num_attention_heads=64,
        num_hidden_layers=80,
        intermediate_size=22016,
        vocab_size=32000,
        max_position_embeddings=2048,
    ),
    name="llama-65b",
)
A100_BF16_PEAK = 312e12  # NVIDIA A100 datasheet, dense BF16 tensor core


def test_llama_65b_gpu_hours_from_implied_mfu():
    tokens, gpus, gpu_hours = 1.4e12, 2048, 1_022_362
    # the catalog's A100-80GB dense BF16 peak is the datasheet's 312 TFLOPS
    a100 = load_catalog().gpu("a100-80gb-sxm")
    assert timing.peak_flops(a100, "bf16") == A100_BF16_PEAK
    n = param_count(LLAMA_65B)
    assert n / 1e9 == pytest.approx(65.2, rel=0.005)
    implied_mfu = 6 * n * tokens / (gpu_hours * 3600 * A100_BF16_PEAK)
    assert implied_mfu == pytest.approx(0.477, abs=0.005)
    fl = flops.training_flops(LLAMA_65B, tokens=int(tokens), seq=2048)
    hours = fl.model_flops / (gpus * A100_BF16_PEAK * implied_mfu) / 3600  # C / (n peak MFU)
    assert hours * gpus == pytest.approx(gpu_hours, rel=0.10)
    assert hours / 24 == pytest.approx(21, rel=0.10)  # "approximately 21 days"
    # the paper's throughput: 380 tokens/s/GPU at that MFU with advisor's FLOPs per token
    tps = implied_mfu * A100_BF16_PEAK / fl.model_flops_per_token
    assert tps == pytest.approx(380, rel=0.10)


def test_llama3_405b_training_compute():
    # Llama 3 405B: 3.8e25 FLOPs on 15.6T tokens (Dubey et al. 2024, arXiv:2407.21783 §3.2.1)
    spec = load_catalog().model("llama-3.1-405b").spec
    fl = flops.training_flops(spec, tokens=int(15.6e12), seq=8192)
    assert 6 * param_count(spec) * 15.6e12 == pytest.approx(3.8e25, rel=0.02)
    # The paper's budget is 6ND; the attention term 12*L*s*d at the 8k pre-training context adds
    # 12 * 126 * 8192 * 16384 / (6 * 405.8e9) = 8.3 %: advisor's model FLOPs lie 0-10 % above.
    assert 1.0 <= fl.model_flops / 3.8e25 <= 1.10
    assert fl.model_flops / (6 * param_count(spec) * 15.6e12) == pytest.approx(1.083, abs=0.01)


def test_measured_figures_from_bench_runs():
    from advisor.data.achievable import Measured

    a = Measured("h100-sxm", "bench_results/run1.json", train_mfu=0.52)
    b = Measured("h100-sxm", "bench_results/run2.json", bandwidth_fraction=0.9)
    got = efficiency.measured_for("h100-sxm", [a, b])
    assert (got.train_mfu, got.bandwidth_fraction) == (0.52, 0.9)
    assert got.source == "bench_results/run2.json"
    assert efficiency.measured_for("a100-80gb", [a, b]) is None
    assert efficiency.measured_for("h100-sxm", None) is None
    gpu = load_catalog().gpu("h100-sxm")
    assert efficiency.achievable_with(gpu, got).bandwidth_fraction == 0.9
    assert efficiency.achievable_with(gpu, a) is efficiency.achievable_of(gpu)
    # a measured copy bandwidth moves the decode roofline's memory time by the ratio
    spec = load_catalog().model("llama-3.2-1b").spec
    base = timing.decode_roofline(spec, gpu, batch=1, context=1024)
    fast = timing.decode_roofline(
        spec, gpu, batch=1, context=1024, achievable=efficiency.achievable_with(gpu, got)
    )
    ratio = efficiency.achievable_of(gpu).bandwidth_fraction / 0.9
    assert fast.memory_time_s / base.memory_time_s == pytest.approx(ratio)


@pytest.mark.parametrize(
    "call",
    [
        lambda: flops.training_flops(TINY, tokens=0, seq=32),
        lambda: flops.training_flops(TINY, tokens=10, seq=32, task="pretrain"),
        lambda: flops.training_flops(TINY, tokens=10, seq=32, checkpointing="some"),
        lambda: timing.decode_roofline(TINY, fake_gpu(), batch=-1, context=10),
        lambda: timing.decode_weight_bytes(TINY, "int3"),
        lambda: timing.roofline(-1.0, 1.0, fake_gpu(), "bf16"),
        lambda: timing.roofline(math.nan, 1.0, fake_gpu(), "bf16"),
    ],
)
def test_bad_input_raises_advisor_error(call):
    with pytest.raises(AdvisorError) as e:
        call()
    assert e.value.field


# Maximum achievable matmul FLOPS, BF16, measured with mamf-finder.py (stas00, ml-engineering,
# compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison table",
# https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md, read
# 2026-12-02): (id pattern, MAMF TFLOPS, the table's theoretical dense peak).
MAMF_BF16 = (
    (("a100", "sxm"), 271.2, 312.0),
    (("a100", "pcie"), 252.9, 312.0),
    (("h100", "sxm"), 794.5, 989.0),
    (("h200",), 794.5, 989.0),  # "H200 is the same"
    (("b200",), 1745.0, 2250.0),
    (("mi300x",), 668.4, 1300.0),
    (("mi325x",), 784.9, 1300.0),
    (("gaudi", "2"), 418.7, 432.0),
    # The table's Gaudi 3 theory is 1677; the catalog stores Intel's 1835 dense BF16. The two
    # disagree (possibly different SKUs), so Gaudi 3 is checked against the ceiling only.
    (("gaudi", "3"), 1243.0, None),
)


def test_catalog_peaks_against_measured_matmul_ceilings():
    gpus = load_catalog().gpus
    if not gpus:
        pytest.skip("catalog/gpus is empty")
    seen = 0
    for parts, mamf, theory in MAMF_BF16:
        for g in gpus:
            # "b200" names the HGX B200, not the GB200 (a faster bin of the same GPU)
            if not all(p in g.id for p in parts) or "nvl" in g.id or g.id.startswith("gb"):
                continue
            seen += 1
            peak = g.peak_tflops["bf16"]
            # the catalog stores the same dense datasheet peak (no 2:4-sparse figure)
            if theory is not None:
                assert peak == pytest.approx(theory, rel=0.01), g.id
            ceiling = mamf / peak
            assert 0.5 < ceiling <= 1.0, g.id
    assert seen >= 3


def test_setup_step_is_the_kernel_level_step_and_a_stated_mfu_by_hand():
    from advisor.memory import estimate as mem
    from advisor.perf.parallel import Layout

    cat = load_catalog()
    spec, gpu = cat.model("llama-3.2-1b").spec, cat.gpu("h100-sxm")
    two = mem.TrainingSetup(model=spec, batch=8, seq=1024, precision="amp-bf16", gpus=2)
    st = training.setup_step(two, gpu)
    # the same step `advisor time train` times: 2 data-parallel ranks of 8 sequences, one node
    ref = training.train_step(
        spec, gpu, Layout(dp=2, micro_batch=8), seq=1024, precision="amp-bf16"
    )
    assert st.step_time_s == ref.step_time_s and st.tokens_per_step == 2 * 8 * 1024
    # a stated MFU: step = model FLOPs / (GPUs * dense bf16 peak * MFU)
    fl = flops.training_flops(spec, 2 * 8 * 1024, 1024)
    at = training.at_mfu(st, gpu, 0.40, "--mfu")
    assert at.step_time_s == pytest.approx(fl.model_flops / (2 * 989.4e12 * 0.40))
    assert at.mfu == 0.40 and at.parts_s == {"compute": at.step_time_s}
    assert training.setup_step(two, gpu, mfu=0.40).step_time_s == at.step_time_s
    with pytest.raises(AdvisorError) as e:
        training.at_mfu(st, gpu, 1.2)
    assert e.value.field == "mfu"
    # time to train: whole steps
    r = training.run(st, 16384 * 10 + 1)
    assert r.steps == 11 and r.hours == pytest.approx(11 * st.step_time_s / 3600)
    assert r.gpu_hours == pytest.approx(2 * r.hours)
    # the step on the roofline: compute-bound, its compute time the step's compute part
    rl = training.step_roofline(st, two, gpu)
    assert rl.bound == "compute"
    assert rl.compute_time_s == pytest.approx(st.parts_s["compute"])
    with pytest.raises(AdvisorError) as e:
        training.setup_step(
            mem.TrainingSetup(model=spec, batch=1, seq=128, gpus=3, tensor_parallel=2), gpu
        )
    assert e.value.key == "gpus.tp_divides"


def test_fp4_formats_bytes_and_peaks(capsys):
    """Issue 34. NVFP4: 4-bit E2M1 + one E4M3 byte per 16 weights = 4.5 bits; MXFP4: + one
    E8M0 byte per 32 = 4.25 bits (OCP MX v1.0; NVIDIA's NVFP4 description). FP4 weights run at
    the FP4 peak only where the card's tensor cores take the block format."""
    from advisor.arch import quant
    from advisor.cli import main

    for name, bits in (("nvfp4", 4.5), ("mxfp4", 4.25)):
        f = quant.weight_format(name)
        assert f.data_bits + 8 * f.scale_bytes_per_param == pytest.approx(bits)
    cat = load_catalog()
    b200, mi355, h100 = cat.gpu("b200"), cat.gpu("mi355x"), cat.gpu("h100-sxm")
    assert timing.peak_flops(b200, "nvfp4") == pytest.approx(b200.peak_tflops["fp4"] * 1e12)
    assert timing.peak_flops(mi355, "mxfp4") == pytest.approx(mi355.peak_tflops["fp4"] * 1e12)
    # elsewhere dequantised, weight-only: bf16 activations (vLLM's Marlin FP4, TensorRT-LLM's
    # Hopper "bf16 x mxfp4", AMD Quark's emulation; advisor.data.support)
    assert timing.weight_peak_key(mi355, "nvfp4") == "bf16"  # CDNA 4 has no NVFP4 path
    assert timing.weight_peak_key(h100, "mxfp4") == "bf16" and timing.fp4_dequantised(h100, "mxfp4")
    assert timing.peak_flops(h100, "nvfp4") == pytest.approx(h100.peak_tflops["bf16"] * 1e12)
    assert timing.weight_peak_key(cat.gpu("rtx-4090"), "bf16") == "bf16"  # others unchanged
    assert main(["time", "serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                 "--weights", "nvfp4"]) == 0  # fmt: skip
    assert "dequantised, matmuls at bf16" in capsys.readouterr().out
    # a card with no FP4 path: one error naming the field, as the web API's (issue 34)
    for gpu, weights in (("v100-sxm2-32gb", "nvfp4"), ("mi355x", "nvfp4"), ("gaudi3", "mxfp4")):
        assert main(["time", "serve", "--model", "llama-3.1-8b", "--gpu", gpu,
                     "--weights", weights]) != 0  # fmt: skip
        err = capsys.readouterr().err
        assert f"weights: {weights} is not offered on" in err and "Traceback" not in err
    assert main(["time", "serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                 "--kv-dtype", "nvfp4"]) != 0  # fmt: skip
    assert "kv_dtype: nvfp4 is not offered on" in capsys.readouterr().err
    # an FP4 KV cache counts its scales: NVFP4 0.5 + 1/16 byte per element, MXFP4 (SGLang's
    # fp4_e2m1, OCP MX: one E8M0 byte per 32) 0.5 + 1/32; MXFP4 runs where the card takes it
    from advisor.memory import estimate

    spec = cat.model("llama-3.1-8b").spec
    bf16 = estimate.kv_cache_bytes_per_token(spec, "bf16")
    assert estimate.kv_cache_bytes_per_token(spec, "nvfp4") == round(bf16 / 2 * (0.5 + 1 / 16))
    assert estimate.kv_cache_bytes_per_token(spec, "mxfp4") == round(bf16 / 2 * (0.5 + 1 / 32))
    assert main(["time", "serve", "--model", "llama-3.1-8b", "--gpu", "mi355x",
                 "--weights", "mxfp4", "--kv-dtype", "mxfp4"]) == 0  # fmt: skip
    capsys.readouterr()
