"""advisor.memory.estimate: hand-computed cases, golden figures from publications, bad input."""

from __future__ import annotations

import math

import pytest

from advisor.arch.models import from_hf_config, param_count
from advisor.core.errors import AdvisorError
from advisor.core.units import GB, KIB
from advisor.memory import estimate as memory

LLAMA3_8B = dict(
    model_type="llama",
    vocab_size=128256,
    hidden_size=4096,
    intermediate_size=14336,
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=8,
    max_position_embeddings=8192,
    tie_word_embeddings=False,
)
# LLaMA-65B (Touvron et al. 2023, arXiv:2302.13971 Table 2): d 8192, 64 heads, 80 layers.
LLAMA_65B = dict(
    model_type="llama",
    vocab_size=32000,
    hidden_size=8192,
    intermediate_size=22016,
    num_hidden_layers=80,
    num_attention_heads=64,
    max_position_embeddings=2048,
)
TINY = dict(
    model_type="llama",
    vocab_size=1000,
    hidden_size=64,
    intermediate_size=176,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=256,
)


@pytest.fixture(scope="module")
def l8b():
    return from_hf_config(LLAMA3_8B, name="llama-3-8b")


@pytest.fixture(scope="module")
def tiny():
    return from_hf_config(TINY, name="tiny")


def test_kv_cache_llama3_8b_is_128_kib_per_token(l8b):
    # 2 (K,V) x 32 layers x 8 kv heads x 128 head_dim x 2 bytes = 131072 B (exact).
    assert memory.kv_cache_bytes_per_token(l8b, "bf16") == 128 * KIB
    assert memory.kv_cache_bytes_per_token(l8b, "fp8") == 64 * KIB


def test_mixed_precision_adamw_is_16_bytes_per_param(l8b):
    # ZeRO (Rajbhandari et al. 2020, arXiv:1910.02054 §3.1): 2+2+12 = 16 bytes/param; in torch
    # autocast: fp32 weights 4 + fp32 grads 4 + exp_avg/exp_avg_sq 8. Tolerance: step scalars only.
    est = memory.training_memory(memory.TrainingSetup(l8b, 1, 128, precision="amp-bf16"))
    c = est.components
    total = c["weights"] + c["gradients"] + c["master_weights"] + c["optimizer_states"]
    assert total / param_count(l8b) == pytest.approx(16, rel=1e-5)


def test_qlora_65b_fits_one_48gb_gpu():
    # Dettmers et al. 2023 (arXiv:2305.14314) abstract: QLoRA finetunes a 65B model on a single
    # 48 GB GPU. Setup as the paper: NF4 + double quantisation, LoRA r=64 on all linear layers,
    # bf16 adapters, gradient checkpointing. Bound: total to provision < 48 GB.
    spec = from_hf_config(LLAMA_65B, name="llama-65b")
    setup = memory.TrainingSetup(
        spec,
        1,
        512,
        precision="bf16",
        checkpointing="full",
        lora_rank=64,
        lora_targets=memory.LORA_TARGETS,
        quant="nf4",
    )
    est = memory.training_memory(setup)
    assert est.total_bytes < 48 * GB
    assert est.components["weights"] > 30 * GB  # the 4-bit base alone is ~32.5 GB
    # double quantisation: 0.127 bits/param of scales on the linear weights
    lin = memory.linear_params_per_layer(spec) * spec.num_layers
    assert est.components["quant_scales"] == pytest.approx(lin * 0.127 / 8, rel=0.01)


def test_param_shapes_sum_to_param_count(l8b, tiny):
    for spec in (
        l8b,
        tiny,
        from_hf_config(
            dict(
                model_type="gpt2",
                vocab_size=50257,
                n_embd=768,
                n_layer=12,
                n_head=12,
                n_positions=1024,
            ),
            name="gpt2",
        ),
    ):
        assert sum(math.prod(s) for s in memory.param_shapes(spec)) == param_count(spec)


def test_hand_computed_fp32_adamw(tiny):
    n = param_count(tiny)
    est = memory.training_memory(memory.TrainingSetup(tiny, 2, 32))
    c = est.components
    assert c["weights"] == 4 * n
    assert c["gradients"] == 4 * n
    n_tensors = len(memory.param_shapes(tiny))
    assert c["optimizer_states"] == 8 * n + 4 * n_tensors
    # logits: 3 fp32 vocabulary-sized buffers per token (log_softmax out, its grad, input grad)
    assert c["logits"] == 3 * 4 * 2 * 32 * 1000
    # peak: persistent + max(activations + logits, gradients + foreach sqrt temporary)
    persistent = c["weights"] + c["optimizer_states"]
    assert est.peak_allocated_bytes == persistent + max(
        c["activations"] + c["logits"], c["gradients"] + 4 * n
    )
    assert est.total_bytes == est.peak_allocated_bytes + est.overhead_bytes
    assert set(est.overhead) == set(memory.OVERHEADS)
    assert tuple(est.components) == memory.COMPONENTS


def test_pure_bf16_states_in_param_dtype(tiny):
    c = memory.training_memory(memory.TrainingSetup(tiny, 1, 8, precision="bf16")).components
    n = param_count(tiny)
    assert c["weights"] == c["gradients"] == 2 * n
    assert c["optimizer_states"] == 4 * n + 4 * len(memory.param_shapes(tiny))


def test_optimizers_order(tiny):
    def states(opt):
        s = memory.TrainingSetup(tiny, 1, 8, optimizer=opt)
        return memory.training_memory(s).components["optimizer_states"]

    assert states("sgd") == 0
    assert states("sgd") < states("adafactor") < states("sgd-momentum") < states("adamw")
    assert states("adamw-8bit") < states("adamw") / 2


def test_checkpointing_and_lora_reduce(l8b):
    base = memory.TrainingSetup(l8b, 4, 2048, precision="bf16")
    a = memory.training_memory(base).components["activations"]
    full = memory.training_memory(
        memory.TrainingSetup(l8b, 4, 2048, precision="bf16", checkpointing="full")
    ).components["activations"]
    assert full < a / 5
    eager = memory.training_memory(
        memory.TrainingSetup(l8b, 4, 2048, precision="bf16", attention="eager")
    ).components["activations"]
    assert eager > a
    lora = memory.training_memory(memory.TrainingSetup(l8b, 1, 512, precision="bf16", lora_rank=16))
    # q (4096->4096) and v (4096->1024): 16*(8192 + 5120) per layer x 32
    assert lora.components["lora_adapters"] == 2 * 16 * (8192 + 5120) * 32
    assert lora.components["gradients"] == lora.components["lora_adapters"]


def test_zero_stages_shard(l8b):
    def c(sharding):
        s = memory.TrainingSetup(l8b, 1, 512, precision="amp-bf16", gpus=8, sharding=sharding)
        return memory.training_memory(s).components

    z1, z2, z3 = c("zero1"), c("zero2"), c("zero3")
    assert z1["optimizer_states"] == pytest.approx(c("ddp")["optimizer_states"] / 8, rel=1e-6)
    assert z2["gradients"] < z1["gradients"]
    assert z3["weights"] < z2["weights"]
    tp = memory.training_memory(
        memory.TrainingSetup(l8b, 1, 512, precision="bf16", gpus=2, tensor_parallel=2)
    )
    assert tp.overhead["comm_buffers"] > 0


def test_inference_weight_formats(l8b):
    def w(fmt):
        return memory.inference_memory(memory.InferenceSetup(l8b, 1, 16, weights=fmt)).components

    assert w("bf16")["weights"] == 2 * param_count(l8b)
    assert w("fp32")["weights"] == 4 * param_count(l8b)
    lin = memory.linear_params_per_layer(l8b) * 32
    # GPTQ group 128: fp16 scale + 4-bit zero per group
    assert w("gptq")["quant_scales"] == round(lin * 2.5 / 128)
    assert w("gptq")["weights"] == lin // 2 + 2 * (param_count(l8b) - lin)
    assert w("int4")["weights"] < w("int8")["weights"] < w("bf16")["weights"]


def test_sliding_window_caps_kv():
    spec = from_hf_config(dict(TINY, model_type="mistral", sliding_window=64), name="m")
    assert memory.kv_cache_bytes(spec, 1000) == memory.kv_cache_bytes(spec, 64)
    g2 = from_hf_config(dict(TINY, model_type="gemma2", sliding_window=64, head_dim=16), name="g2")
    # Gemma 2: every second layer is global
    per_layer_tok = 2 * g2.kv_dim * 2
    assert memory.kv_cache_bytes(g2, 1000) == per_layer_tok * (64 + 1000)


# Qwen2-7B's shape (huggingface Qwen/Qwen2-7B config.json) with sliding windows switched on for
# the upper half: transformers' Qwen2Config makes layers i >= max_window_layers slide.
QWEN2_SWA = dict(
    model_type="qwen2",
    vocab_size=152064,
    hidden_size=3584,
    intermediate_size=18944,
    num_hidden_layers=28,
    num_attention_heads=28,
    num_key_value_heads=4,
    max_position_embeddings=32768,
    use_sliding_window=True,
    sliding_window=4096,
    max_window_layers=14,
)


def test_qwen2_max_window_layers_one_rule_in_spec_memory_and_compute():
    from advisor.arch import flops
    from advisor.perf import timing

    spec = from_hf_config(QWEN2_SWA, name="qwen2-swa")
    assert spec.num_sliding_layers == 14
    assert [spec.is_sliding(i) for i in (0, 13, 14, 27)] == [False, False, True, True]
    seq = 32768
    spans = spec.layer_spans(seq)
    assert spans == (seq,) * 14 + (4096,) * 14
    per_layer_token = 2 * spec.kv_dim * 2  # K and V, bf16
    kv = memory.kv_cache_bytes(spec, seq)
    assert kv == per_layer_token * (14 * seq + 14 * 4096)
    # all 28 layers capped at the window (the old rule) is 4.5x too low
    assert kv / (per_layer_token * 28 * 4096) == pytest.approx(4.5)
    assert timing.kv_read_bytes(spec, seq) == kv
    assert flops._layer_spans(spec, seq) == spans
    # without the flag the window is not used at all
    off = from_hf_config(dict(QWEN2_SWA, use_sliding_window=False), name="qwen2")
    assert off.num_sliding_layers == 0
    assert memory.kv_cache_bytes(off, seq) == per_layer_token * 28 * seq


def test_serving_capacity(l8b):
    cap = memory.serving_capacity(l8b, 80 * GB, context=8192)
    assert cap.reserved_bytes == int(80 * GB * 0.9)
    assert (
        cap.kv_budget_bytes == cap.reserved_bytes - cap.weights_bytes - cap.activation_profile_bytes
    )
    assert cap.max_concurrent_sequences == cap.kv_budget_bytes // (128 * KIB * 16) // 512
    more = memory.serving_capacity(l8b, 80 * GB, context=8192, gpu_memory_utilization=0.95)
    assert more.max_concurrent_sequences > cap.max_concurrent_sequences


def test_inverse_questions(l8b):
    s = memory.TrainingSetup(l8b, 1, 2048, precision="bf16", checkpointing="full")
    cap = 141 * GB
    b = memory.max_batch(s, cap)
    assert b >= 1
    fits = memory.training_memory(memory.TrainingSetup(**{**s.__dict__, "batch": b}))
    over = memory.training_memory(memory.TrainingSetup(**{**s.__dict__, "batch": b + 1}))
    assert fits.total_bytes <= cap < over.total_bytes
    assert memory.max_batch(s, 10 * GB) == 0
    inf = memory.InferenceSetup(l8b, 1, 1024)
    assert memory.max_seq(inf, 80 * GB) == 8192
    z = memory.TrainingSetup(l8b, 1, 2048, precision="amp-bf16", sharding="zero3")
    n = memory.min_gpus(z, 80 * GB)
    assert n is not None and n > 1
    assert (
        memory.training_memory(memory.TrainingSetup(**{**z.__dict__, "gpus": n})).total_bytes
        <= 80 * GB
    )
    assert memory.min_gpus(memory.TrainingSetup(l8b, 1, 2048), 1 * GB, limit=4) is None


@pytest.mark.parametrize(
    "kwargs, key",
    [
        (dict(batch=0), "field.too_small"),
        (dict(seq=-5), "field.too_small"),
        (dict(batch=float("nan")), "field.not_integer"),
        (dict(seq=100000), "seq.too_long"),
        (dict(optimizer="adam"), "name.unknown"),
        (dict(precision="int8"), "name.unknown"),
        (dict(lora_rank=8, lora_targets=()), "lora.no_targets"),
        (dict(lora_rank=8, lora_targets=("qkv",)), "name.unknown"),
        (dict(quant="nf4"), "quant.needs_lora"),
        (dict(gpus=2, tensor_parallel=3), "tp.heads"),
    ],
)
def test_bad_training_input(tiny, kwargs, key):
    args = dict(model=tiny, batch=1, seq=16) | kwargs
    with pytest.raises(AdvisorError) as err:
        memory.training_memory(memory.TrainingSetup(**args))
    assert err.value.key == key


def test_unknown_optimizer_suggests(tiny):
    with pytest.raises(AdvisorError) as err:
        memory.training_memory(memory.TrainingSetup(tiny, 1, 8, optimizer="adamw8bit"))
    assert "adamw-8bit" in err.value.params["suggestions"]


def test_bad_inference_input(tiny):
    with pytest.raises(AdvisorError):
        memory.inference_memory(memory.InferenceSetup(tiny, 1, 8, weights="q4"))
    with pytest.raises(AdvisorError):
        memory.serving_capacity(tiny, 0, context=8)
    with pytest.raises(AdvisorError):
        memory.serving_capacity(tiny, GB, context=8, gpu_memory_utilization=1.5)


def test_cli_json_and_errors(tmp_path, capsys):
    import json

    from advisor.cli import main

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA3_8B))
    assert (
        main(
            [
                "memory",
                "--config",
                str(cfg),
                "--task",
                "infer",
                "--batch",
                "1",
                "--seq",
                "1024",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["components"]["kv_cache"] == 1024 * 128 * KIB
    assert doc["total_bytes"] == doc["peak_allocated_bytes"] + doc["overhead_bytes"]
    assert (
        main(["memory", "--config", str(cfg), "--task", "train", "--batch", "0", "--seq", "8"]) == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "batch" in err
