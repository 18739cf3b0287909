"""Validation of advisor.memory.estimate against real PyTorch allocations (torch 2.13 CPU, transformers 5.24).

A `MemoryTracker` (a TorchDispatchMode) records every new untyped storage an op returns and its
free (weakref.finalize), so it counts live tensor bytes exactly as the CUDA caching allocator's
`max_memory_allocated()` would (minus rounding to 512-byte blocks). Small models run for real
with random weights and tokens; 7-8B shapes run under FakeTensorMode (no memory is used).

Run as a benchmark: `.venv/bin/python -m bench.memory_validation` prints the table and writes
bench_results/validation/memory.json. tests/test_memory_validation.py runs a subset as tests.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
import transformers

from advisor.arch.models import from_hf_config
from advisor.memory import estimate as memory
from bench.memlimit import StorageTracker

SCHEMA_VERSION = 1
OUT = Path(__file__).resolve().parent.parent / "bench_results" / "validation" / "memory.json"
# the peak's error band, shipped in the wheel (advisor/validation_data/) for advisor.perf.accuracy
SUMMARY_OUT = OUT.with_name("memory-summary.json")
PEAK_TOLERANCE = 0.03
COMPONENT_TOLERANCE = 0.01
CHECKED = ("weights", "lora_adapters", "gradients", "optimizer_states", "kv_cache")


class MemoryTracker(StorageTracker):
    """The benchmark's storage tracker (bench/memlimit.py: each storage an op returns is counted
    once when first seen and uncounted when freed) under the names this harness uses."""

    def track_existing(self, tensors) -> None:
        """Count tensors that exist before the mode starts (parameters, buffers)."""
        for t in tensors:
            self._add(t, check_budget=False)

    @property
    def peak(self) -> int:
        return self.peak_bytes

    @property
    def current(self) -> int:
        return self.live_bytes


# --------------------------------------------------------------------------------------------
# Tiny configs (random weights) and 8B shapes (fake tensors)
# --------------------------------------------------------------------------------------------

TINY = {
    "llama": dict(
        model_type="llama",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=352,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
    ),
    "qwen2": dict(
        model_type="qwen2",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=320,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=True,
    ),
    "mistral": dict(
        model_type="mistral",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=352,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=2,
        max_position_embeddings=512,
        sliding_window=4096,
    ),
    "mixtral": dict(
        model_type="mixtral",
        vocab_size=1000,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        max_position_embeddings=512,
    ),
    "gpt2": dict(
        model_type="gpt2",
        vocab_size=2000,
        n_embd=128,
        n_layer=2,
        n_head=4,
        n_positions=512,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    ),
    "phi3": dict(
        model_type="phi3",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        pad_token_id=0,
    ),
    "gemma": dict(
        model_type="gemma",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=32,
        max_position_embeddings=512,
        hidden_act="gelu_pytorch_tanh",
    ),
}

TINY.update(
    {
        "bert": dict(
            model_type="bert",
            vocab_size=2000,
            hidden_size=128,
            intermediate_size=512,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=512,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        ),
        "gemma2": dict(
            model_type="gemma2",
            vocab_size=2000,
            hidden_size=128,
            intermediate_size=256,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=32,
            max_position_embeddings=512,
            sliding_window=64,
            query_pre_attn_scalar=32,
            attn_logit_softcapping=50.0,
            final_logit_softcapping=30.0,
        ),
        # Mistral v0.1 style: every layer slides over 32 tokens (the rolling KV cache)
        "mistral-swa": dict(
            model_type="mistral",
            vocab_size=2000,
            hidden_size=128,
            intermediate_size=352,
            num_hidden_layers=2,
            num_attention_heads=8,
            num_key_value_heads=2,
            max_position_embeddings=512,
            sliding_window=32,
        ),
        # Qwen2 with use_sliding_window: layers from max_window_layers slide
        "qwen2-swa": dict(
            model_type="qwen2",
            vocab_size=2000,
            hidden_size=128,
            intermediate_size=320,
            num_hidden_layers=4,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=512,
            use_sliding_window=True,
            sliding_window=32,
            max_window_layers=2,
        ),
    }
)

LLAMA3_8B = dict(
    model_type="llama",
    vocab_size=128256,
    hidden_size=4096,
    intermediate_size=14336,
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=8,
    max_position_embeddings=8192,
    rope_theta=500000.0,
    tie_word_embeddings=False,
)


# The layer-list families (advisor/arch/families), small and random-initialised: each keeps what sets
# its memory apart (QK-norm; routed experts and dense layers; MLA's latent KV cache with shared
# experts and a dense first layer; gpt-oss's sinks, biases and 16-token alternate window; Gemma 3's
# five local to one global layers, 32-token window).
TINY_LAYERED = {
    "qwen3": dict(
        model_type="qwen3",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=352,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=2048,
    ),
    "qwen3_moe": dict(
        model_type="qwen3_moe",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=352,
        moe_intermediate_size=64,
        num_experts=8,
        num_experts_per_tok=2,
        mlp_only_layers=[0],
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=2048,
    ),
    "deepseek_v3": dict(
        model_type="deepseek_v3",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=352,
        moe_intermediate_size=64,
        n_routed_experts=8,
        num_experts_per_tok=2,
        n_shared_experts=1,
        first_k_dense_replace=1,
        n_group=2,
        topk_group=1,
        q_lora_rank=96,
        kv_lora_rank=64,
        qk_nope_head_dim=32,
        qk_rope_head_dim=16,
        v_head_dim=32,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=4,  # as the real config (= heads); eager's repeat_kv reads it
        max_position_embeddings=2048,
    ),
    "gpt_oss": dict(
        model_type="gpt_oss",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=128,
        num_local_experts=8,
        num_experts_per_tok=2,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        sliding_window=16,
        max_position_embeddings=2048,
    ),
    "gemma3": dict(
        model_type="gemma3_text",
        vocab_size=2000,
        hidden_size=128,
        intermediate_size=352,
        num_hidden_layers=6,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        sliding_window=32,
        max_position_embeddings=2048,
    ),
}
TINY.update(TINY_LAYERED)

LORA_DEFAULT = ("q_proj", "v_proj")


def case(name, family, task, **kw):
    c = dict(
        name=name,
        family=family,
        task=task,
        precision="fp32",
        optimizer="adamw",
        checkpointing="none",
        attention="sdpa",
        lora_rank=0,
        batch=2,
        seq=64,
        fake=False,
        weights="bf16",
        gpus=1,
        sharding="ddp",
    )
    c.update(kw)
    return c


CASES_TABLE = Path(__file__).resolve().parent / "data" / "memory_cases.yaml"


def load_cases(path: Path = CASES_TABLE) -> list[dict]:
    """The workloads as data: one row per case in bench/data/memory_cases.yaml, each completed
    with the runner's defaults (`case`); `quick`, `needs` and `open` are the table's own marks."""
    import yaml

    rows = yaml.safe_load(path.read_text())
    out = []
    for row in rows:
        row = dict(row)
        marks = {k: row.pop(k) for k in ("quick", "needs", "open") if k in row}
        if "lora_targets" in row:
            row["lora_targets"] = tuple(row["lora_targets"])
        c = case(row.pop("name"), row.pop("family"), row.pop("task"), **row)
        c["_marks"] = marks
        out.append(c)
    return out


_ALL = load_cases()
# held to the bounds (make bench-memory, tests/test_memory_validation.py)
CASES = [{k: v for k, v in c.items() if k != "_marks"} for c in _ALL if not c["_marks"].get("open")]
# measured and reported, not yet held to the bounds (`--open`)
OPEN_CASES = [
    {k: v for k, v in c.items() if k != "_marks"} for c in _ALL if c["_marks"].get("open")
]
QUICK = [c["name"] for c in _ALL if c["_marks"].get("quick")]
NEEDS_BNB = {c["name"] for c in _ALL if c["_marks"].get("needs") == "bitsandbytes"}


# GPT-2's real vocabulary and width with 2 layers: the tied V x h gradients set the peak.
GPT2_VOCAB_2L = dict(
    model_type="gpt2",
    vocab_size=50257,
    n_embd=768,
    n_layer=2,
    n_head=12,
    n_positions=1024,
    resid_pdrop=0.0,
    embd_pdrop=0.0,
    attn_pdrop=0.0,
)


def hf_config_dict(family: str) -> dict:
    if family == "llama3-8b":
        return dict(LLAMA3_8B)
    if family == "gpt2-vocab-2l":
        return dict(GPT2_VOCAB_2L)
    return dict(TINY[family])


class LoRALinear(torch.nn.Module):
    """LoRA (Hu et al. 2021): y = W x + B(A x) * alpha/r with W frozen (as peft's default, no
    dropout). Wraps an `nn.Linear` or GPT-2's `Conv1D` (weight stored in x out, as peft's
    `fan_in_fan_out`)."""

    def __init__(self, base, rank: int):
        super().__init__()
        self.base = base
        p = base.weight
        dtype = p.dtype if p.dtype.is_floating_point else torch.bfloat16  # NF4 base: bf16 adapters
        if isinstance(base, torch.nn.Linear):
            fin, fout = base.in_features, base.out_features
        else:  # transformers.pytorch_utils.Conv1D: weight (in, out)
            fin, fout = p.shape
        self.lora_A = torch.nn.Linear(fin, rank, bias=False, dtype=dtype)
        self.lora_B = torch.nn.Linear(rank, fout, bias=False, dtype=dtype)
        torch.nn.init.zeros_(self.lora_B.weight)
        self.scale = 2.0

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scale


def add_lora(model, rank, targets):
    """Freeze the model and wrap every module whose attribute name is a target (peft matches
    module names by suffix the same way: GPT-2's "c_proj" hits attn.c_proj and mlp.c_proj)."""
    from transformers.pytorch_utils import Conv1D

    for p in model.parameters():
        p.requires_grad_(False)
    for mod in list(model.modules()):
        for t in targets:
            child = getattr(mod, t, None)
            if isinstance(child, (torch.nn.Linear, Conv1D)):
                setattr(mod, t, LoRALinear(child, rank))
    return [p for n, p in model.named_parameters() if "lora_" in n]


def quantise_nf4(model):
    """QLoRA's base (Dettmers et al. 2023): every linear layer inside the blocks becomes a
    bitsandbytes `Linear4bit` (NF4, double quantisation, bf16 compute), as
    `BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
    bnb_4bit_use_double_quant=True)` does; the head and embeddings stay 16-bit."""
    import bitsandbytes as bnb

    blocks = model.model.layers
    for mod in list(blocks.modules()):
        for name, child in list(mod.named_children()):
            if isinstance(child, torch.nn.Linear):
                q = bnb.nn.Linear4bit(
                    child.in_features,
                    child.out_features,
                    bias=child.bias is not None,
                    compute_dtype=torch.bfloat16,
                    quant_type="nf4",
                    compress_statistics=True,
                )
                q.weight = bnb.nn.Params4bit(
                    child.weight.data.float(),
                    requires_grad=False,
                    quant_type="nf4",
                    compress_statistics=True,
                ).to("cpu")
                setattr(mod, name, q)


def _storage_bytes(tensors) -> int:
    seen, n = set(), 0
    for t in tensors:
        st = t.untyped_storage()
        if st._cdata not in seen:
            seen.add(st._cdata)
            n += st.nbytes()
    return n


def _register_selective():
    """Selective recomputation (Korthikanti et al. 2022 §5): the attention core (scores, softmax,
    probabilities x V) of eager attention runs under torch.utils.checkpoint, so its s x s
    tensors are recomputed in backward instead of kept; registered as a transformers attention
    implementation ("ckpt_eager")."""
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import repeat_kv  # noqa: F401
    from transformers.models.llama.modeling_llama import eager_attention_forward

    def ckpt_eager(module, q, k, v, mask, **kw):
        def core(q, k, v):
            return eager_attention_forward(module, q, k, v, mask, **kw)[0]

        out = torch.utils.checkpoint.checkpoint(core, q, k, v, use_reentrant=False)
        return out, None

    AttentionInterface.register("ckpt_eager", ckpt_eager)


def build(c):
    cfgd = hf_config_dict(c["family"])
    spec = from_hf_config(cfgd, name=c["name"])
    cfgd = dict(cfgd)
    mtype = cfgd.pop("model_type")
    config = transformers.AutoConfig.for_model(mtype, **cfgd)
    attn = c["attention"]
    if c["checkpointing"] == "selective":
        _register_selective()
        attn = "ckpt_eager"
    config._attn_implementation = attn
    dt = torch.bfloat16 if c["precision"] in ("bf16",) or c.get("quant") else torch.float32
    if c["task"] == "infer":
        dt = torch.float32 if c["weights"] == "fp32" else torch.bfloat16
    auto = (
        transformers.AutoModelForMaskedLM if not spec.causal else transformers.AutoModelForCausalLM
    )
    model = auto.from_config(config, dtype=dt)
    return spec, model


def measure(c) -> dict:
    """Run the case under the tracker; return measured bytes per component and the peak."""
    torch.manual_seed(0)
    fake = (
        torch._subclasses.fake_tensor.FakeTensorMode(allow_non_fake_inputs=True)
        if c["fake"]
        else contextlib.nullcontext()
    )
    with fake:
        spec, model = build(c)
        ids = torch.randint(0, spec.vocab_size, (c["batch"], c["seq"]))
        tr = MemoryTracker()
        out = {}
        if c["task"] == "infer":
            model.eval()
            params = list(model.parameters()) + list(model.buffers())
            with tr, torch.no_grad():
                tr.track_existing(params)
                if spec.causal:
                    res = model(input_ids=ids, use_cache=True, logits_to_keep=1)
                    kv = res.past_key_values
                    kv_bytes = sum(
                        _storage_bytes([layer.keys, layer.values]) for layer in kv.layers
                    )
                else:  # an encoder scores every position (fill-mask)
                    res = model(input_ids=ids)
                    kv_bytes = 0
                del res
            out["weights"] = _storage_bytes(list(model.parameters()))
            out["kv_cache"] = kv_bytes
            out["peak_allocated_bytes"] = tr.peak
            return out
        if c.get("quant"):
            quantise_nf4(model)
        model.train()
        if c["checkpointing"] == "full":
            model.gradient_checkpointing_enable()
        if c["lora_rank"]:
            trainable = add_lora(model, c["lora_rank"], c.get("lora_targets", LORA_DEFAULT))
        else:
            trainable = [p for p in model.parameters() if p.requires_grad]
        opt = make_optimizer(c["optimizer"], trainable)
        amp_dt = {"amp-bf16": torch.bfloat16, "amp-fp16": torch.float16}.get(c["precision"])
        amp = (
            torch.autocast("cpu", dtype=amp_dt) if amp_dt is not None else contextlib.nullcontext()
        )
        # fp16 autocast trains with a loss scaler (torch.amp.GradScaler): scaled loss, inf checks
        # and unscaling of the gradients before the step
        scaler = torch.amp.GradScaler("cpu") if c["precision"] == "amp-fp16" else None
        frozen = [p for p in model.parameters() if not p.requires_grad]
        grads = 0
        with tr:
            tr.track_existing(list(model.parameters()) + list(model.buffers()))
            for _ in range(2):  # step 2 is the steady state (optimizer states exist)
                with amp:
                    loss = model(input_ids=ids, labels=ids).loss
                if scaler is not None:
                    scaler.scale(loss).backward()
                else:
                    loss.backward()
                del loss
                grads = _storage_bytes([p.grad for p in trainable if p.grad is not None])
                if scaler is not None:
                    scaler.step(opt)
                    scaler.update()
                else:
                    opt.step()
                opt.zero_grad(set_to_none=True)
        states = [
            v for st in opt.state.values() for v in st.values() if isinstance(v, torch.Tensor)
        ]
        if c.get("quant"):
            out["weights"] = _quantised_weight_bytes(model)
        else:
            out["weights"] = _storage_bytes(frozen) if c["lora_rank"] else _storage_bytes(trainable)
        if c["lora_rank"]:
            out["lora_adapters"] = _storage_bytes(trainable)
        out["gradients"] = grads
        out["optimizer_states"] = _storage_bytes(states)
        out["peak_allocated_bytes"] = tr.peak
        return out


def _quantised_weight_bytes(model) -> int:
    """Packed 4-bit weights, their quantisation statistics and the 16-bit rest (the estimate's
    weights + quant_scales, reported as one number)."""
    tensors = [p for n, p in model.named_parameters() if "lora_" not in n]
    for m in model.modules():
        qs = getattr(getattr(m, "weight", None), "quant_state", None)
        if qs is None:
            continue
        tensors.append(qs.absmax)
        if qs.nested:
            tensors += [qs.state2.absmax, qs.state2.code]
        tensors.append(qs.code)
    return _storage_bytes(tensors)


# --------------------------------------------------------------------------------------------
# Data-parallel ranks (gloo on CPU, one process per rank)
# --------------------------------------------------------------------------------------------


class RankTracker(MemoryTracker):
    """The tracker on one rank: a DTensor (FSDP2's sharded parameters, gradients and states)
    counts as its local shard."""

    def _add(self, t, check_budget: bool = True) -> None:
        from torch.distributed.tensor import DTensor

        if isinstance(t, DTensor):
            t = t._local_tensor
        super()._add(t, check_budget)


def _local(t):
    from torch.distributed.tensor import DTensor

    return t._local_tensor if isinstance(t, DTensor) else t


def _rank_worker(rank: int, c: dict, port: int, outdir: str) -> None:
    """One data-parallel rank of case `c`: DDP (gradient buckets), DDP + ZeroRedundancyOptimizer
    (ZeRO-1: optimizer states sharded) or FSDP2 `fully_shard` per decoder layer and the root
    (ZeRO-3: parameters, gradients and states sharded); two AdamW steps; the rank's peak of live
    storages written to `outdir/rank{rank}.json`."""
    import os

    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    ws = c["gpus"]
    dist.init_process_group("gloo", rank=rank, world_size=ws)
    try:
        torch.manual_seed(0)
        spec, model = build(c)
        ids = torch.randint(0, spec.vocab_size, (c["batch"], c["seq"]))
        model.train()
        sharding = c["sharding"]
        tr = RankTracker()
        tr.__enter__()
        tr.track_existing(list(model.parameters()) + list(model.buffers()))
        before = tr.live_bytes
        if sharding == "zero3":
            from torch.distributed.fsdp import fully_shard

            for layer in model.model.layers:
                fully_shard(layer)
            fully_shard(model)
            net = model
        else:
            from torch.nn.parallel import DistributedDataParallel as DDP

            net = DDP(model)
        params = list(model.parameters())
        if sharding == "zero1":
            from torch.distributed.optim import ZeroRedundancyOptimizer

            opt = ZeroRedundancyOptimizer(
                params, optimizer_class=torch.optim.AdamW, lr=1e-4, foreach=True
            )
        else:
            opt = torch.optim.AdamW(params, lr=1e-4, foreach=True)
        # DDP's buckets: what wrapping the model allocated (FSDP2: its sharded parameters,
        # which replace the full ones, so nothing)
        buckets = max(0, tr.live_bytes - before) if sharding != "zero3" else 0
        tr.peak_bytes = tr.live_bytes
        with contextlib.ExitStack() as stack:
            stack.callback(tr.__exit__, None, None, None)
            grads = 0
            for _ in range(2):
                loss = net(input_ids=ids, labels=ids).loss
                loss.backward()
                del loss
                grads = _storage_bytes([_local(p.grad) for p in params if p.grad is not None])
                grads += buckets
                opt.step()
                opt.zero_grad(set_to_none=True)
        if sharding == "zero1":
            states = [
                v
                for st in opt.optim.state.values()
                for v in st.values()
                if isinstance(v, torch.Tensor)
            ]
        else:
            states = [
                _local(v)
                for st in opt.state.values()
                for v in st.values()
                if isinstance(v, torch.Tensor)
            ]
        out = {
            "gradients": grads,
            "optimizer_states": _storage_bytes(states),
            "peak_allocated_bytes": tr.peak,
        }
        Path(outdir, f"rank{rank}.json").write_text(json.dumps(out))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def measure_distributed(c) -> dict:
    """Run the case's ranks (torch.multiprocessing, gloo); each component is the largest over
    the ranks (the rank that sets the memory a GPU needs)."""
    import socket
    import tempfile

    import torch.multiprocessing as mp

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as d:
        try:
            mp.spawn(_rank_worker, args=(c, port, d), nprocs=c["gpus"], join=True)
        except mp.ProcessExitedException:
            # gloo's threads can abort a rank while it exits, after its result is written
            if not all(Path(d, f"rank{r}.json").is_file() for r in range(c["gpus"])):
                raise
        ranks = [json.loads(Path(d, f"rank{r}.json").read_text()) for r in range(c["gpus"])]
    return {k: max(r[k] for r in ranks) for k in ranks[0]}


def make_optimizer(name, params):
    """torch optimizers with foreach=True: what torch picks by default for CUDA tensors;
    8-bit AdamW is bitsandbytes' `AdamW8bit` (its CPU backend)."""
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, foreach=True)
    if name == "adamw-8bit":
        import bitsandbytes as bnb

        return bnb.optim.AdamW8bit(params, lr=1e-4)
    if name == "adafactor":
        return torch.optim.Adafactor(params, lr=1e-2, foreach=True)
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3, foreach=True)
    if name == "sgd-momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=True)
    raise ValueError(name)


def estimate(c) -> dict:
    spec = from_hf_config(hf_config_dict(c["family"]), name=c["name"])
    if c["task"] == "infer":
        est = memory.inference_memory(
            memory.InferenceSetup(
                spec,
                c["batch"],
                c["seq"],
                weights=c["weights"],
                kv_dtype="fp32" if c["weights"] == "fp32" else "bf16",
                attention=c["attention"],
            )
        )
    else:
        est = memory.training_memory(
            memory.TrainingSetup(
                spec,
                c["batch"],
                c["seq"],
                precision=c["precision"],
                optimizer=c["optimizer"],
                checkpointing=c["checkpointing"],
                attention=c["attention"],
                lora_rank=c["lora_rank"],
                lora_targets=tuple(c.get("lora_targets", LORA_DEFAULT)),
                quant=c.get("quant"),
                gpus=c["gpus"],
                sharding=c["sharding"],
            )
        )
    return est.to_dict()


def run_case(c) -> dict:
    t0 = time.perf_counter()
    measured = measure_distributed(c) if c["gpus"] > 1 else measure(c)
    est = estimate(c)
    rows = {}
    for key, m in measured.items():
        if key == "peak_allocated_bytes":
            e = est["peak_allocated_bytes"]
        elif key == "weights" and c.get("quant"):
            e = est["components"]["weights"] + est["components"]["quant_scales"]
        else:
            e = est["components"][key]
        err = (e - m) / m if m else (0.0 if e == 0 else float("inf"))
        rows[key] = {"estimate": e, "measured": m, "error": err}
    return {
        "case": c["name"],
        "family": c["family"],
        "method": method(c),
        "setup": {k: v for k, v in c.items() if k != "name"},
        "components": rows,
        "estimate_components": est["components"],
        "seconds": round(time.perf_counter() - t0, 2),
    }


def method(c) -> str:
    """How the case was measured, in words (stored with each case)."""
    if c["fake"]:
        how = "FakeTensorMode shapes (no memory used), live storages counted by a TorchDispatchMode"
    else:
        how = "real CPU run with random weights, live storages counted by a TorchDispatchMode"
    step = "prefill with KV cache" if c["task"] == "infer" else "two training steps, peak of step 2"
    if c["task"] == "infer" and hf_config_dict(c["family"]).get("model_type") == "bert":
        step = "forward scoring every position"
    extra = []
    if c["optimizer"] == "adamw-8bit" or c.get("quant"):
        extra.append("bitsandbytes CPU backend")
    if c["precision"] == "amp-fp16":
        extra.append("torch.amp.GradScaler")
    if c["checkpointing"] == "selective":
        extra.append("attention core under torch.utils.checkpoint")
    if c["gpus"] > 1:
        how_dp = {
            "ddp": "DistributedDataParallel",
            "zero1": "DDP + ZeroRedundancyOptimizer",
            "zero3": "FSDP2 fully_shard per block and root",
        }[c["sharding"]]
        extra.append(f"{c['gpus']} ranks (torch.multiprocessing, gloo), {how_dp}, largest rank")
    return "; ".join([how, step] + extra)


def within_bounds(result) -> list[str]:
    bad = []
    for key, r in result["components"].items():
        tol = PEAK_TOLERANCE if key == "peak_allocated_bytes" else COMPONENT_TOLERANCE
        if abs(r["error"]) > tol:
            bad.append(f"{result['case']}: {key} off by {r['error']:+.2%} (bound {tol:.0%})")
    return bad


OPEN_OUT = OUT.with_name("memory-open.json")


def report_open(names=None) -> int:
    """Measure the open rows (`open: true` in the table) and write memory-open.json: the same
    rows as memory.json, outside the committed bounds until their activation terms are fitted."""
    results = [run_case(c) for c in OPEN_CASES if not names or c["name"] in names]
    for res in results:
        errs = "  ".join(f"{k} {r['error']:+.2%}" for k, r in res["components"].items())
        print(f"{res['case']:34} {errs}")
    doc = {
        "schema_version": SCHEMA_VERSION,
        "kind": "memory_validation_open",
        "date": datetime.date.today().isoformat(),
        "environment": {"torch": torch.__version__, "transformers": transformers.__version__},
        "bounds": {"peak_allocated_bytes": PEAK_TOLERANCE, "components": COMPONENT_TOLERANCE},
        "cases": results,
    }
    if names and OPEN_OUT.exists():  # a named subset updates its rows, keeps the others
        done = {r["case"] for r in results}
        kept = [r for r in json.loads(OPEN_OUT.read_text())["cases"] if r["case"] not in done]
        order = [c["name"] for c in OPEN_CASES]
        doc["cases"] = sorted(kept + results, key=lambda r: order.index(r["case"]))
    OPEN_OUT.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


def summary(results) -> dict:
    by_key: dict[str, list[float]] = {}
    for res in results:
        for key, r in res["components"].items():
            by_key.setdefault(key, []).append(abs(r["error"]))
    return {
        k: {"median_abs_error": statistics.median(v), "worst_abs_error": max(v), "n": len(v)}
        for k, v in by_key.items()
    }


def memory_summary(doc: dict) -> dict:
    """The peak's measured error band over all cases (advisor.perf.accuracy.memory_band reads it)."""
    errs = [abs(c["components"]["peak_allocated_bytes"]["error"]) for c in doc["cases"]]
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "memory_validation_summary",
        "date": doc["date"],
        "summary": {
            "memory": {
                "n": len(errs),
                "families": len({c["family"] for c in doc["cases"]}),
                "median_abs_error": statistics.median(errs),
                "worst_abs_error": max(errs),
                "bound": doc["bounds"]["peak_allocated_bytes"],
            }
        },
    }


def main(argv=None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    if "--open" in args:  # the open rows: printed and written beside memory.json, not gated
        args.remove("--open")
        return report_open(args)
    names = args or [c["name"] for c in CASES]
    results = [run_case(c) for c in CASES if c["name"] in names]
    print(f"{'case':34} {'component':22} {'estimate':>14} {'measured':>14} {'error':>8}")
    for res in results:
        for key, r in res["components"].items():
            print(
                f"{res['case']:34} {key:22} {r['estimate']:14d} {r['measured']:14d} "
                f"{r['error']:+8.2%}"
            )
    summ = summary(results)
    print()
    for k, v in summ.items():
        print(
            f"{k:22} median |error| {v['median_abs_error']:.2%}  worst {v['worst_abs_error']:.2%}"
            f"  (n={v['n']})"
        )
    bad = [b for res in results for b in within_bounds(res)]
    for b in bad:
        print("OUT OF BOUND:", b)
    doc = {
        "schema_version": SCHEMA_VERSION,
        "kind": "memory_validation",
        "date": datetime.date.today().isoformat(),
        "environment": {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "python": platform.python_version(),
            "cpu": platform.processor() or platform.machine(),
        },
        "bounds": {"peak_allocated_bytes": PEAK_TOLERANCE, "components": COMPONENT_TOLERANCE},
        "summary": summ,
        "cases": results,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=2) + "\n")
    if len(results) == len(CASES):
        SUMMARY_OUT.write_text(json.dumps(memory_summary(doc), indent=2) + "\n")
        print(f"wrote {SUMMARY_OUT}")
    print(f"wrote {OUT}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
