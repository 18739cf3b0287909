"""Accelerator memory of training and inference, per GPU, in bytes.

`peak_allocated_bytes` is what `torch.cuda.max_memory_allocated()` would report for a steady-state
step; runtime overheads outside the caching allocator's live tensors (CUDA context, fragmentation,
NCCL buffers) are separate, stated assumptions, summed into `total_bytes` (what to provision).

Training (per GPU):
  persistent = weights + quant_scales + lora_adapters + master_weights + optimizer_states
  peak = persistent + max(activations + logits,            # start of backward
                          gradients + optimizer temporaries) # optimizer.step()
The gradients are allocated during backward as the activations are freed (autograd frees saved
tensors node by node), so the two terms never fully coexist; the validation suite
(bench/memory_validation.py) measures both moments.

Sources: ZeRO (Rajbhandari et al. 2020, arXiv:1910.02054 §3.1, 16 bytes/param for mixed-precision
Adam; §5 stages), Korthikanti et al. 2022 (arXiv:2205.05198) for activations (see
advisor/memory/activations.py), QLoRA (Dettmers et al. 2023, arXiv:2305.14314), LoRA (Hu et al. 2021,
arXiv:2106.09685), vLLM's `gpu_memory_utilization` (docs.vllm.ai, engine arguments).
"""

from __future__ import annotations

import collections
import functools
from dataclasses import dataclass, replace

from ..arch import layers as L
from ..arch import quant
from ..arch.models import ModelSpec, layer_param_list, param_count
from ..core import vocab
from ..core.errors import AdvisorError, check_choice, check_int, check_positive
from ..core.units import GIB, MIB
from . import activations as act

# choice lists: advisor.core.vocab (one definition for every module and the site)
PRECISIONS = vocab.PRECISIONS
OPTIMIZERS = vocab.OPTIMIZERS
CHECKPOINTING = vocab.CHECKPOINTING
ATTENTION = vocab.ATTENTION
SHARDING = vocab.SHARDING
WEIGHT_FORMATS = vocab.WEIGHT_FORMATS  # inference weights
KV_DTYPES = vocab.KV_DTYPES
QUANT = vocab.QLORA_BASE_FORMATS  # TrainingSetup.quant: the QLoRA base
# the projection roles every family accepts (on Phi-3 and GPT-2 a role is its fused slice)
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# Fused projections as peft users name them, and the layout that has them: Phi-3's
# `qkv_proj` / `gate_up_proj` (modeling_phi3.py), Falcon's `query_key_value` (modeling_falcon.py), GPT-2's Conv1D `c_attn` (q, k, v), `c_fc` and
# `c_proj` (peft matches by name: both the attention output and the MLP output). A model has the
# module when its description says so (`ModelSpec.qkv_layout`, `fused_gate_up`).
FUSED_TARGETS = {
    "qkv_proj": lambda spec: spec.qkv_layout == "fused" and spec.qkv_module == "qkv_proj",
    "query_key_value": lambda spec: (
        spec.qkv_layout == "fused" and spec.qkv_module == "query_key_value"
    ),
    "gate_up_proj": lambda spec: spec.fused_gate_up,
    "c_attn": lambda spec: spec.qkv_layout == "conv1d",
    "c_fc": lambda spec: spec.qkv_layout == "conv1d",
    "c_proj": lambda spec: spec.qkv_layout == "conv1d",
}
LORA_TARGET_NAMES = LORA_TARGETS + tuple(FUSED_TARGETS)  # what `lora_targets` accepts

COMPONENTS = (
    "weights",
    "quant_scales",
    "lora_adapters",
    "gradients",
    "master_weights",
    "optimizer_states",
    "activations",
    "logits",
    "kv_cache",
)
OVERHEADS = ("cuda_context", "allocator_reserve", "comm_buffers")

# KV-cache bytes per element. NVFP4 (TensorRT-LLM's FP4 KV cache on Blackwell): a 4-bit E2M1
# element plus one FP8 E4M3 scale per 16 elements = 0.5 + 1/16 byte (NVIDIA, "Introducing
# NVFP4 for efficient and accurate low-precision inference", 2025; advisor.arch.quant "nvfp4").
# MXFP4 (SGLang's FP4 KV cache, `--kv-cache-dtype fp4_e2m1`, experimental: "OCP ... MXFP4 ...
# blocks of 32 consecutive elements, with each block sharing a single 8-bit exponential scaling
# factor", docs.sglang.io advanced_features/quantized_kv_cache, read 2026-12-06; OCP
# Microscaling Formats (MX) v1.0, Table 1): 0.5 + 1/32 byte.
_DTYPE_BYTES = {
    "fp32": 4,
    "bf16": 2,
    "fp16": 2,
    "fp8": 1,
    "nvfp4": 0.5 + 1 / 16,
    "mxfp4": 0.5 + 1 / 32,
}

# Overhead assumptions (stated, cited; not part of peak_allocated_bytes).
CUDA_CONTEXT_BYTES = 768 * MIB
"""CUDA context + cuBLAS/cuDNN workspaces created at the first kernel: 0.5-1 GiB depending on the
GPU, driver and loaded kernels (PyTorch docs, 'CUDA semantics: memory management' note that
`nvidia-smi` shows memory the caching allocator does not; measured ~500 MiB on A100, ~1 GiB on
H100 with lazy loading off). We assume the middle, 768 MiB."""
ALLOCATOR_RESERVE_FRACTION = 0.05
"""Fragmentation of the caching allocator: reserved minus allocated at the peak, assumed 5 % of
the peak (PyTorch docs 'CUDA semantics: optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF';
expandable segments shrink it)."""
NCCL_BUFFER_BYTES = 256 * MIB
"""NCCL communication buffers for multi-GPU runs: NCCL_BUFFSIZE 4 MiB per channel, up to 32
channels x send/recv (NCCL docs, 'Environment Variables: NCCL_BUFFSIZE'); assumed 256 MiB per GPU."""


def default_checkpointing(lora_rank: int) -> str:
    """The activation checkpointing a run gets when nobody chooses one: "full" for LoRA and
    QLoRA (lora_rank > 0), "none" for full training.

    Sources: peft's `prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)`
    turns it on by default for a quantised base (peft docs, "Quantization"); the QLoRA paper
    trains with it (Dettmers et al. 2023, arXiv:2305.14314, section 4; its `qlora.py` defaults
    `--gradient_checkpointing True`), and the adapter recipes built on them (Unsloth's
    `get_peft_model(use_gradient_checkpointing=...)`, TRL's SFT examples) enable it for LoRA as
    well. Full training in transformers' `Trainer` keeps every activation unless asked
    (`TrainingArguments.gradient_checkpointing=False`)."""
    return "full" if lora_rank else "none"


def resolve_checkpointing(choice: str, lora_rank: int) -> str:
    """`choice` from a form or profile (vocab.CHECKPOINTING_CHOICES) as a TrainingSetup value:
    "default" becomes default_checkpointing(lora_rank); any other choice is kept as asked."""
    check_choice("checkpointing", choice, vocab.CHECKPOINTING_CHOICES)
    return default_checkpointing(lora_rank) if choice == "default" else choice


DDP_BUCKET_NOTE = "DDP keeps its gradient buckets for the whole run (a second copy of the gradients; PyTorch DDP docs, gradient_as_bucket_view=False)"


@dataclass(frozen=True)
class TrainingSetup:
    model: ModelSpec
    batch: int
    seq: int
    precision: str = "fp32"
    optimizer: str = "adamw"
    checkpointing: str = "none"
    attention: str = "sdpa"
    lora_rank: int = 0
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj")
    quant: str | None = None  # "nf4" => QLoRA
    gpus: int = 1
    sharding: str = "ddp"
    tensor_parallel: int = 1
    optimizer_offload: bool = False


@dataclass(frozen=True)
class InferenceSetup:
    model: ModelSpec
    batch: int
    seq: int  # tokens of context per sequence
    weights: str = "bf16"
    kv_dtype: str = "bf16"
    attention: str = "sdpa"
    tensor_parallel: int = 1


@dataclass(frozen=True)
class MemoryEstimate:
    components: dict
    peak_allocated_bytes: int
    overhead: dict
    overhead_bytes: int
    total_bytes: int
    assumptions: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "components": dict(self.components),
            "peak_allocated_bytes": self.peak_allocated_bytes,
            "overhead": dict(self.overhead),
            "overhead_bytes": self.overhead_bytes,
            "total_bytes": self.total_bytes,
            "assumptions": list(self.assumptions),
        }


# ---------------------------------------------------------------------------------------------
# Parameter inventory
# ---------------------------------------------------------------------------------------------


def param_shapes(spec: ModelSpec) -> list[tuple[int, ...]]:
    """Shapes of every parameter tensor, per the transformers module structure (the sum of their
    sizes equals `models.param_count`). Used for per-tensor optimizer states (Adafactor's factored
    second moment, bitsandbytes' small-tensor rule)."""
    h, q, kv, i, v = (
        spec.hidden_size,
        spec.q_dim,
        spec.kv_dim,
        spec.intermediate_size,
        spec.vocab_size,
    )
    norm = [(h,)] if spec.norm == "rmsnorm" else [(h,), (h,)]
    shapes: list[tuple[int, ...]] = [(v, h)]
    if spec.learned_positions:
        shapes.append((spec.max_position_embeddings, h))
    if spec.type_vocab_size:
        shapes.append((spec.type_vocab_size, h))
    if spec.embedding_norm:
        shapes += norm
    if spec.layers:  # a family's layer list: every tensor as advisor.arch.layers lists it
        for lay in spec.stack:
            shapes += [shape for _, shape in L.layer_tensors(lay, h, tuple(norm))]
        shapes += norm
        if not spec.tie_word_embeddings:
            shapes.append((v, h))
        return shapes
    layer: list[tuple[int, ...]] = []
    if spec.qkv_layout == "fused":  # Phi-3 qkv_proj
        layer += [(q + 2 * kv, h), (h, q)]
    elif spec.qkv_layout == "conv1d":  # GPT-2 c_attn, c_proj
        layer += [(h, 3 * h), (3 * h,), (h, h), (h,)]
    else:
        layer += [(q, h), (kv, h), (kv, h), (h, q)]
        if spec.qkv_bias:
            layer += [(q,), (kv,), (kv,)]
        if spec.o_bias:
            layer.append((h,))
    experts = spec.num_experts if spec.is_moe else 1
    for _ in range(experts):
        if spec.fused_gate_up:  # Phi-3 gate_up_proj
            layer += [(2 * i, h), (h, i)]
        elif spec.gated_mlp:
            layer += [(i, h), (i, h), (h, i)]
            if spec.mlp_bias:
                layer += [(i,), (i,), (h,)]
        else:
            layer += [(i, h), (h, i)]
            if spec.mlp_bias:
                layer += [(i,), (h,)]
    if spec.is_moe:
        layer.append((spec.num_experts, h))
    layer += norm * spec.norms_per_layer
    shapes += layer * spec.num_layers
    if spec.lm_head == "masked":
        shapes += [(h, h), (h,)] + norm + [(v,)]
        if not spec.tie_word_embeddings:
            shapes.append((v, h))
    else:
        shapes += norm
        if not spec.tie_word_embeddings:
            shapes.append((v, h))
    return shapes


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


@functools.lru_cache(maxsize=1024)  # ModelSpec is frozen: asked once per candidate
def linear_params(spec: ModelSpec) -> int:
    """Weights of all blocks' linear layers (what quantisation and autocast touch), summed over
    the layer list (`layers.linear_weights`: attention projections, MLA's five, dense, shared and
    every routed expert's); no biases, norms, sinks or router."""
    h = spec.hidden_size
    return sum(L.linear_weights(layer, h) for layer in spec.stack)


def linear_params_per_layer(spec: ModelSpec) -> int:
    """Weights of one block's linear layers (the ones quantisation and autocast touch): q, k, v, o
    and the MLP (all experts); no biases, norms or router. The largest block where they differ."""
    h = spec.hidden_size
    return max(L.linear_weights(layer, h) for layer in spec.stack)


NF4_TABLE_BYTES = 16 * 4 + 256 * 4
"""Per quantised module, bitsandbytes' `QuantState` holds the 16-value NF4 code (fp32) and, with
double quantisation, the 256-value dynamic code of its 8-bit absmax (fp32): 1,088 bytes
(bitsandbytes/functional.py `quantize_4bit`, `QuantState.state2`; measured, 0.50.2)."""


def linear_modules_per_layer(spec: ModelSpec) -> int:
    """Linear modules in one block (what a quantiser replaces): q, k, v, o and the MLP's two or
    three per expert (Phi-3 and GPT-2 fuse theirs: 4)."""
    if spec.qkv_layout != "separate":
        return 4
    return max(L.linear_modules(layer) for layer in spec.stack)


def linear_modules(spec: ModelSpec) -> int:
    """Linear modules of all blocks (`linear_modules_per_layer` summed over the layer list)."""
    if spec.qkv_layout != "separate":
        return 4 * spec.num_layers
    return sum(L.linear_modules(layer) for layer in spec.stack)


def head_weight_params(spec: ModelSpec) -> int:
    """The output projection's weight (V x h), shared with the embedding when tied."""
    return spec.vocab_size * spec.hidden_size


def _target_modules(spec: ModelSpec, target: str, layer=None) -> list[tuple[int, int, int]]:
    """(in_features, out_features, modules) of each module a LoRA target names in one layer
    (`layer`, or the stack's first), from the layer's description. A role (q_proj ... down_proj)
    on a model that fuses it (Phi-3, GPT-2) counts as that role's own slice; a fused name
    (`FUSED_TARGETS`) is one adapter over the whole fused output: Phi-3's qkv_proj h -> q + 2 kv
    and gate_up_proj h -> 2 i, GPT-2's c_attn h -> 3h, c_fc h -> i and c_proj (attention h -> h
    and MLP i -> h). On MLA (DeepSeek-V3, Kimi K2) q_proj is the query projection into the
    heads (q_b_proj from the q rank, or q_proj), k_proj the joint kv_a_proj_with_mqa
    (h -> kv_lora_rank + qk_rope_head_dim) and v_proj kv_b_proj (kv_lora_rank -> heads x
    (qk_nope + v_head_dim)), as peft targets those modules by name. MLP roles name every routed
    expert's projection and the shared experts' (one module each); a dense layer's at its width."""
    lay = layer if layer is not None else spec.stack[0]
    a, m = lay.attention, lay.mlp
    h = spec.hidden_size
    i = m.width
    e = m.experts if m.is_moe else 1

    def mlp_role(fin, fout):
        out = [(fin, fout, e)]
        if m.shared_width:
            sw = m.shared_width
            out.append((sw, h, 1) if fout == h else (h, sw, 1))
        return out

    if a.kind == "mla":
        nope = a.head_dim - a.qk_rope_head_dim
        attn = {
            "q_proj": [(a.q_lora_rank or h, a.q_dim, 1)],
            "k_proj": [(h, a.kv_lora_rank + a.qk_rope_head_dim, 1)],
            "v_proj": [(a.kv_lora_rank, a.num_heads * (nope + a.v_head_dim), 1)],
            "o_proj": [(a.o_dim, h, 1)],
        }
    else:
        attn = {
            "q_proj": [(h, a.q_dim, 1)],
            "k_proj": [(h, a.kv_dim, 1)],
            "v_proj": [(h, a.kv_dim, 1)],
            "o_proj": [(a.q_dim, h, 1)],
        }
    q, kv = a.q_dim, a.kv_dim
    return {
        **attn,
        "gate_proj": mlp_role(h, i),
        "up_proj": mlp_role(h, i),
        "down_proj": mlp_role(i, h),
        "qkv_proj": [(h, q + 2 * kv, 1)],
        "query_key_value": [(h, q + 2 * kv, 1)],
        "gate_up_proj": [(h, 2 * i, 1)],
        "c_attn": [(h, 3 * h, 1)],
        "c_fc": [(h, i, 1)],
        "c_proj": [(h, h, 1), (i, h, 1)],
    }[target]


def lora_params(spec: ModelSpec, rank: int, targets) -> int:
    """LoRA adapter parameters: A (r x in) and B (out x r) per targeted linear layer (Hu et al.
    2021, arXiv:2106.09685 §4.1): r x (in + out) each, summed over the layer list (dense and MoE
    layers with their own widths)."""
    n = 0
    for lay, count in collections.Counter(spec.stack).items():
        for t in targets:
            for fin, fout, mods in _target_modules(spec, t, lay):
                n += rank * (fin + fout) * mods * count
    return n


# ---------------------------------------------------------------------------------------------
# Validation of setups
# ---------------------------------------------------------------------------------------------


def _check_common(model, batch, seq, tp, attention):
    if not isinstance(model, ModelSpec):
        raise AdvisorError("field.not_model", "model: expected a ModelSpec", field="model")
    check_int("batch", batch, minimum=1, maximum=1 << 24)
    check_int("seq", seq, minimum=1)
    if seq > model.max_position_embeddings:
        raise AdvisorError(
            "seq.too_long",
            f"seq: {seq} tokens is more than the model's max_position_embeddings "
            f"({model.max_position_embeddings})",
            field="seq",
            value=seq,
            maximum=model.max_position_embeddings,
        )
    check_int("tensor_parallel", tp, minimum=1, maximum=1024)
    if model.num_heads % tp:
        raise AdvisorError(
            "tp.heads",
            f"tensor_parallel: {tp} does not divide the {model.num_heads} attention heads",
            field="tensor_parallel",
            value=tp,
            heads=model.num_heads,
        )
    check_choice("attention", attention, ATTENTION)


def validate_training(s: TrainingSetup) -> None:
    """Raise AdvisorError for any bad field of a TrainingSetup."""
    _check_common(s.model, s.batch, s.seq, s.tensor_parallel, s.attention)
    check_choice("precision", s.precision, PRECISIONS)
    check_choice("optimizer", s.optimizer, OPTIMIZERS)
    check_choice("checkpointing", s.checkpointing, CHECKPOINTING)
    check_choice("sharding", s.sharding, SHARDING)
    check_int("gpus", s.gpus, minimum=1, maximum=1 << 16)
    check_int("lora_rank", s.lora_rank, minimum=0, maximum=65536)
    if s.gpus % s.tensor_parallel:
        raise AdvisorError(
            "tp.gpus",
            f"tensor_parallel: {s.tensor_parallel} does not divide gpus {s.gpus}",
            field="tensor_parallel",
            value=s.tensor_parallel,
            gpus=s.gpus,
        )
    if s.quant is not None:
        check_choice("quant", s.quant, QUANT)
        if s.lora_rank == 0:
            raise AdvisorError(
                "quant.needs_lora",
                f"quant: training quantised ({s.quant}) weights needs LoRA adapters (QLoRA): set lora_rank",
                field="quant",
            )
    if s.lora_rank:
        targets = tuple(s.lora_targets or ())
        if not targets:
            raise AdvisorError(
                "lora.no_targets",
                "lora_targets: lora_rank is set but no target modules are given",
                field="lora_targets",
            )
        for t in targets:
            check_choice("lora_targets", t, LORA_TARGET_NAMES)
            has = FUSED_TARGETS.get(t)
            if has and not has(s.model):
                raise AdvisorError(
                    "lora.target_family",
                    f"lora_targets: {t} is a fused projection; {s.model.family} has no such module",
                    field="lora_targets",
                    value=t,
                    family=s.model.family,
                )


def validate_inference(s: InferenceSetup) -> None:
    """Raise AdvisorError for any bad field of an InferenceSetup."""
    _check_common(s.model, s.batch, s.seq, s.tensor_parallel, s.attention)
    check_choice("weights", s.weights, WEIGHT_FORMATS)
    check_choice("kv_dtype", s.kv_dtype, KV_DTYPES)


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------


def _state_bytes_per_param(optimizer: str, state_dt: int) -> float:
    """Optimizer state bytes per trainable parameter (dense part).

    AdamW: exp_avg and exp_avg_sq in the parameter's dtype (torch.optim.AdamW creates them with
    `torch.zeros_like(p)`): 2 x dtype. 8-bit AdamW (bitsandbytes `AdamW8bit`, Dettmers et al.
    2021, arXiv:2110.02861): two uint8 states + one fp32 absmax per 256-value block each:
    2 + 2 x 4/256 bytes. SGD with momentum: one buffer (dtype). SGD: none. Adafactor: per tensor,
    see `optimizer_state_bytes`.
    """
    return {
        "adamw": 2 * state_dt,
        "adamw-8bit": 2 + 2 * 4 / 256,
        "sgd": 0,
        "sgd-momentum": state_dt,
    }[optimizer]


def optimizer_state_bytes(shapes, optimizer: str, state_dt: int) -> int:
    """Optimizer states for trainable tensors of the given shapes.

    Adafactor (Shazeer & Stern 2018, arXiv:1804.04235; torch.optim.Adafactor): no first moment
    (beta1 None), second moment factored into a row and a column vector for tensors of >= 2 dims
    (`row_var`, `col_var`), kept whole for vectors; plus a `step` scalar per tensor.
    8-bit AdamW: bitsandbytes keeps tensors under 4096 elements (`min_8bit_size`) in 32 bits.
    AdamW/SGD also keep a `step` counter per tensor (a 4-byte scalar tensor)."""
    return counted_state_bytes(collections.Counter(shapes), optimizer, state_dt)


def counted_state_bytes(counts: dict, optimizer: str, state_dt: int) -> int:
    """`optimizer_state_bytes` over {shape: number of tensors of that shape}: the same sum, one
    term per distinct shape (a 1,024-layer, 1,024-expert config has 9.4 million tensors and
    took seconds per call tensor by tensor; issue 40's 20-workload profile took 20-24 s)."""
    total = 0.0
    for shp, count in counts.items():
        n = _numel(shp)
        if optimizer == "adafactor":
            if len(shp) >= 2:
                rows = n // shp[-1]
                cols = n // shp[-2]
                one = (rows + cols) * state_dt
            else:
                one = n * state_dt
            one += 4
        elif optimizer == "adamw-8bit" and n < 4096:
            one = 8 * n + 4
        elif optimizer == "sgd":
            one = 0
        else:
            one = n * _state_bytes_per_param(optimizer, state_dt)
            if optimizer != "sgd-momentum":
                one += 4
        total += one * count
    return round(total)


def param_shape_counts(spec: ModelSpec) -> dict:
    """{shape: count} of `param_shapes(spec)` without listing each layer's tensors: the shapes
    of a 1-layer and a 2-layer copy give one layer's and the rest's."""
    one = collections.Counter(param_shapes(replace(spec, num_layers=1)))
    two = collections.Counter(param_shapes(replace(spec, num_layers=2)))
    layer = two - one
    rest = one - layer
    out = collections.Counter(rest)
    for shp, c in layer.items():
        out[shp] += c * spec.num_layers
    return out


@functools.lru_cache(maxsize=4096)
def _trainable_state_bytes(
    spec: ModelSpec, lora_rank: int, lora_targets: tuple, optimizer: str, state_dt: int
) -> int:
    """`optimizer_state_bytes` over the trainable tensors (all parameters, or the LoRA adapters
    A (r x in) and B (out x r) per target and layer), cached: the inverse questions and the site's
    fit tables ask for the same model many times."""
    counts = collections.Counter()
    if lora_rank:
        for lay, layers in collections.Counter(spec.stack).items():
            for t in lora_targets:
                for fin, fout, count in _target_modules(spec, t, lay):
                    counts[(lora_rank, fin)] += count * layers
                    counts[(fout, lora_rank)] += count * layers
    else:
        counts = param_shape_counts(spec)
    return counted_state_bytes(counts, optimizer, state_dt)


def _optimizer_step_temp(optimizer: str, trainable_bytes_state_dtype: int) -> int:
    """Temporaries of one `optimizer.step()` with torch's default foreach implementation on GPU
    (torch/optim/adamw.py `_multi_tensor_adamw`): `torch._foreach_sqrt(exp_avg_sqs)` makes one
    tensor per parameter (1 x trainable size, state dtype); SGD updates in place; Adafactor
    (`_multi_tensor_adafactor`) builds the per-tensor variance estimate and update (~1 x
    trainable size as well). 8-bit AdamW's fused kernel updates in place (0)."""
    if optimizer in ("adamw", "adafactor"):
        return trainable_bytes_state_dtype
    return 0


def training_memory(setup: TrainingSetup) -> MemoryEstimate:
    """Memory of one steady-state training step, per GPU (see the module docstring for the peak
    formula and sources)."""
    validate_training(setup)
    s = setup
    spec = s.model
    tp = s.tensor_parallel
    dp = s.gpus // tp
    ddp_buckets = 0
    fsdp_grad_transient = 0
    amp = s.precision.startswith("amp")
    param_dt = 4 if (s.precision == "fp32" or amp) else 2
    state_dt = param_dt  # torch keeps states in the parameter dtype
    assumptions: list[str] = []

    n_total = param_count(spec)
    linear = linear_params(spec)
    other = n_total - linear

    comps = dict.fromkeys(COMPONENTS, 0)
    lora = s.lora_rank > 0
    if s.quant is not None:
        fmt = quant.FORMATS[s.quant]
        w, sc = quant.stored_bytes(fmt, linear, other)
        if s.quant == "nf4":
            sc += linear_modules(spec) * NF4_TABLE_BYTES
        comps["weights"] = w // tp
        comps["quant_scales"] = sc // tp
        assumptions.append(fmt.source)
    else:
        comps["weights"] = n_total * param_dt // tp

    if lora:
        n_train = lora_params(spec, s.lora_rank, s.lora_targets)
        adapter_dt = param_dt  # adapters in the run's parameter dtype (16-bit for QLoRA in bf16)
        comps["lora_adapters"] = n_train * adapter_dt // tp
        train_dt = adapter_dt
        assumptions.append(
            "LoRA: base weights frozen (no gradients or states); adapters A (r x in), B (out x r) "
            "per target (Hu et al. 2021, arXiv:2106.09685)"
        )
    else:
        n_train = n_total
        train_dt = param_dt
    state_dt = train_dt

    grads = n_train * train_dt // tp
    states = _trainable_state_bytes(spec, s.lora_rank, tuple(s.lora_targets), s.optimizer, state_dt)
    states //= tp
    temp = _optimizer_step_temp(s.optimizer, n_train * state_dt // tp)

    # ZeRO stages (Rajbhandari et al. 2020 §5.1): 1 shards optimizer states, 2 also gradients,
    # 3 also parameters, over the data-parallel degree.
    if dp > 1 and s.sharding in ("zero1", "zero2", "zero3"):
        states //= dp
        temp //= dp
        if s.sharding in ("zero2", "zero3"):
            grads //= dp
        if s.sharding == "zero3":
            full_w = comps["weights"]
            comps["weights"] //= dp
            comps["lora_adapters"] //= dp
            # FSDP2 (`fully_shard` per block and on the root): the root's parameters (embeddings,
            # final norm, head) stay gathered from the forward to the end of the backward; a
            # block's are gathered for its forward and again for its backward, with the next
            # block's prefetched: two blocks at a time (measured, bench/memory_validation.py).
            total = max(1, param_count(spec))
            layer_ws = [full_w * n // total for n in layer_param_list(spec)]
            layer_w = max(layer_ws)
            root_w = full_w - sum(layer_ws)
            comps["weights"] += root_w + 2 * layer_w
            # in backward a block's unsharded gradients wait for their reduce-scatter while the
            # next block computes its own: two blocks of full-size gradients
            fsdp_grad_transient = 2 * layer_w * train_dt // param_dt
            assumptions.append(
                "ZeRO-3/FSDP: parameters sharded; the root's (embeddings, head) gathered for the "
                "whole step and two blocks at a time (current + prefetch)"
            )
    if dp > 1 and s.sharding in ("ddp", "zero1"):
        # PyTorch's ZeRO-1 is DDP + ZeroRedundancyOptimizer: the same buckets
        ddp_buckets = n_train * train_dt // tp
        assumptions.append(DDP_BUCKET_NOTE)

    if s.optimizer_offload:
        states = 0
        temp = 0
        assumptions.append(
            "optimizer offload: optimizer states and the update run on the CPU (ZeRO-Offload, "
            "Ren et al. 2021, arXiv:2101.06840)"
        )
    # DDP's buckets (allocated when DDP wraps the model, alive for the whole run) are reported
    # with the gradients and held in every phase of the step
    comps["gradients"] = grads + ddp_buckets
    comps["optimizer_states"] = states
    comps["master_weights"] = 0
    if amp:
        assumptions.append(
            "autocast (amp): parameters, gradients and optimizer states stay fp32; the fp32 "
            "parameters are the master copy (16 bytes/param for AdamW, ZeRO §3.1)"
        )

    # -- activations ---------------------------------------------------------------------------
    b, seq = s.batch, s.seq
    tokens = b * seq
    dtype = s.precision if s.quant is None else ("bf16" if not amp else s.precision)
    if s.precision == "fp16":
        dtype = "fp16"
    attention = s.attention
    if s.checkpointing == "selective":
        attention = "sdpa"  # selective recompute drops the attention core (Korthikanti §5)
    lin_layer = linear_params_per_layer(spec)
    # every layer as the layer list describes it (dense and MoE layers, their own widths)
    stack = act.stack_saved_bytes(spec, b, seq, dtype, attention, tp)
    largest = act.largest_layer_saved_bytes(spec, b, seq, dtype, attention, tp)
    per_layer = 0  # what LoRA changes in every layer
    lora_saving = 0
    if lora:
        # Frozen linear layers save no input (autograd keeps x only for the weight gradient):
        # a frozen down_proj drops its input (i), frozen gate/up drop the MLP norm's output (h);
        # each adapter keeps its A output (r). Layer 0's first norm sees a frozen embedding
        # (no grad needed): it saves nothing. Measured in bench/memory_validation.py.
        dta = act._act_dt(dtype)
        adapters = sum(len(_target_modules(spec, t)) for t in s.lora_targets)
        per_layer += tokens * s.lora_rank * adapters * dta
        if not {"down_proj", "c_proj"} & set(s.lora_targets) and not spec.is_moe:
            per_layer -= tokens * spec.intermediate_size * dta // tp
        if not {"o_proj", "c_proj"} & set(s.lora_targets) and not spec.heads_merged_by_copy:
            # a frozen o_proj keeps no copy of the merged heads (SDPA keeps its own output; a
            # model whose merge is an explicit copy keeps that copy anyway)
            per_layer -= tokens * spec.q_dim * dta // tp
        if not {"gate_proj", "up_proj", "gate_up_proj", "c_fc"} & set(s.lora_targets):
            per_layer -= tokens * spec.hidden_size * dta
        lora_saving = act.norm_saved_bytes(spec, tokens, dtype)
        if amp:
            per_layer -= act.weight_cast_bytes(spec, lin_layer) // tp  # frozen: no cached casts
    h = spec.hidden_size
    # outside the layers: embedding output (residual), final norm, lm_head input cast, labels
    outside = act.residual_bytes(spec, tokens, dtype) + act.norm_saved_bytes(spec, tokens, dtype)
    if amp:
        outside += tokens * h * 2 + head_weight_params(spec) * 2 // tp
    outside += tokens * act.INT64 * 2
    logits = act.logits_train_bytes(spec, tokens, tp, dtype)
    if s.checkpointing == "full":
        inputs = spec.num_layers * tokens * h * act._act_dt(dtype)
        activations = inputs + largest + per_layer + outside
        # The recompute of a layer happens after the loss backward has freed the logits buffers;
        # the output head's gradient exists by then.
        head_grad = 0 if lora else head_weight_params(spec) * train_dt // tp
        fwd_bwd = inputs + outside + max(logits, largest + per_layer + head_grad)
        assumptions.append(
            "full checkpointing: each layer keeps its input; one layer is recomputed at a time "
            "(torch.utils.checkpoint; Chen et al. 2016, arXiv:1604.06174)"
        )
    else:
        activations = stack + spec.num_layers * per_layer + outside - lora_saving
        fwd_bwd = activations + logits
    fwd_bwd += fsdp_grad_transient
    comps["activations"] = activations
    comps["logits"] = logits

    persistent = (
        comps["weights"]
        + comps["quant_scales"]
        + comps["lora_adapters"]
        + comps["master_weights"]
        + comps["optimizer_states"]
        + ddp_buckets
    )
    step = grads + temp
    # Tied embeddings (GPT-2, Gemma, small Qwen2/Llama 3.2): the shared V x h weight receives two
    # gradients. The output head's arrives first; at the embedding's backward, autograd holds
    # that gradient, the embedding's own and their out-of-place sum at once (torch/csrc/autograd
    # accumulation into `.grad`), i.e. two extra V x h gradient buffers on top of all gradients.
    # Measured: GPT-2 vocabulary, 2 layers, batch 4 x 128 (bench/memory_validation.py).
    if spec.tie_word_embeddings and not lora:
        tied_end = grads + 2 * head_weight_params(spec) * train_dt // tp
        step = max(step, tied_end)
        assumptions.append(
            "tied embeddings: at the end of backward two extra V x h gradient buffers coexist "
            "with all gradients (the head's and the embedding's gradients are summed)"
        )
    peak = persistent + max(fwd_bwd, step)
    assumptions.append(
        "peak = weights + states + max(activations + logits at the start of backward, "
        "gradients + foreach optimizer temporaries at optimizer.step())"
    )
    return _finish(comps, peak, s.gpus > 1, tuple(assumptions))


def _finish(comps: dict, peak: int, multi_gpu: bool, assumptions: tuple) -> MemoryEstimate:
    overhead = {
        "cuda_context": CUDA_CONTEXT_BYTES,
        "allocator_reserve": round(peak * ALLOCATOR_RESERVE_FRACTION),
        "comm_buffers": NCCL_BUFFER_BYTES if multi_gpu else 0,
    }
    ob = sum(overhead.values())
    return MemoryEstimate(
        components={k: int(v) for k, v in comps.items()},
        peak_allocated_bytes=int(peak),
        overhead=overhead,
        overhead_bytes=int(ob),
        total_bytes=int(peak + ob),
        assumptions=assumptions
        + (
            "CUDA context 768 MiB (0.5-1 GiB by GPU and driver)",
            "allocator fragmentation reserve 5 % of the peak",
        )
        + (("NCCL buffers 256 MiB per GPU",) if multi_gpu else ()),
    )


# ---------------------------------------------------------------------------------------------
# Inference
# ---------------------------------------------------------------------------------------------


def kv_cache_bytes_per_token(spec: ModelSpec, kv_dtype: str = "bf16") -> int:
    """KV cache per token of context, all layers, uncapped: per layer 2 (K and V) x kv_heads
    x head_dim x bytes, or MLA's kv_lora_rank + qk_rope_head_dim (`ModelSpec.kv_elems_per_token`;
    GQA-aware: Ainslie et al. 2023, arXiv:2305.13245; vLLM's `CacheEngine`
    block size formula). Llama-3-8B in bf16: 2*32*8*128*2 = 131072 B = 128 KiB."""
    check_choice("kv_dtype", kv_dtype, KV_DTYPES)
    if not spec.causal:
        return 0
    return round(spec.kv_elems_per_token * _DTYPE_BYTES[kv_dtype])


def kv_cache_bytes(spec: ModelSpec, tokens: int, kv_dtype: str = "bf16") -> int:
    """KV cache for `tokens` tokens of one sequence: sliding-window layers keep at most the
    window (Mistral 7B v0.1, Jiang et al. 2023 arXiv:2310.06825 'rolling buffer cache'); which
    layers slide is `ModelSpec.is_sliding` (Gemma 2 alternating, Qwen2 `max_window_layers`,
    Gemma 3 five of six, gpt-oss every other, Llama 4's chunked layers: the layer list)."""
    if not spec.causal:
        return 0
    return round(spec.kv_elems(tokens) * _DTYPE_BYTES[kv_dtype])


def engine_keeps_window(engine: str, *, per_layer_window: bool = False) -> bool:
    """Whether a serving engine's paged KV cache keeps only the window on sliding-window layers
    (gpt-oss every other layer at 128 tokens, Gemma 2/3, Mistral v0.1) or the whole context on
    every layer: the one rule both the tensor-parallel (serving_capacity, serving.max_concurrency)
    and the expert-parallel (expert_parallel.max_batch_per_gpu) paths count a sequence's cache by.

    - "vllm" (V1's hybrid KV cache manager): windowed. docs/design/hybrid_kv_cache_manager.md
      (vllm-project/vllm, stored commit d7de043): "Sliding window layers: reserve slots only
      for the most recent **`sliding_window_size`** tokens" while "Full attention layers:
      reserve slots for **all** tokens"; only with the hybrid allocator disabled "sliding
      window attention are regarded as full attention in KV cache manager (blocks are
      allocated for all tokens)" (vllm.v1.kv_cache_interface.FullAttentionSpec, docs.vllm.ai).
    - "trtllm": the whole context on every layer unless the run states a per-layer
      `max_attention_window` (`per_layer_window=True`). KvCacheConfig.max_attention_window
      defaults to None ("Size of the attention window for each sequence. Only the last tokens
      will be stored in the KV cache", tensorrt_llm/llmapi/llm_args.py): the whole sequence.
      One pool per window size exists only for a per-layer list (variable sliding-window
      attention, PR #4667: "For each window size `w`: 1. weight[w] = w x (number of layers
      that use w)"); the automatic setup from the Hugging Face config (PR #5722, "LLM API now
      automatically sets sliding window `max_attention_window` of KvCacheConfig from
      HuggingFace config") was closed unmerged, and PR #18767 (2026-09-06) still found a mixed
      `layer_types` config "gets every layer placed in one full-context pool by the V2 KV
      cache manager ... unless the user passes `kv_cache_config.max_attention_window` by hand"
      (that PR derives the windows from then on: `per_layer_window=True` models such a
      release). The perf overview's gpt-oss llm_options set no max_attention_window
      (docs/source/developer-guide/perf-overview.md, stored commit 03e27c7)."""
    check_choice("engine", engine, vocab.SERVING_ENGINES)
    if engine == "trtllm":
        return bool(per_layer_window)
    return True


def sequence_kv_bytes(
    spec: ModelSpec,
    context: int,
    kv_dtype: str = "bf16",
    *,
    windowed: bool,
    block_size: int = 1,
    tensor_parallel: int = 1,
) -> int:
    """KV-cache bytes one sequence of `context` tokens holds on one GPU of a paged cache: every
    layer at the whole context (`windowed=False`), or sliding-window layers at
    min(context, window) and the others at the whole context (`windowed=True`; the spans of
    `ModelSpec.layer_spans`). Each layer's tokens round up to whole blocks of `block_size`
    (vLLM's and TensorRT-LLM's paged caches allocate blocks); `tensor_parallel` splits the
    heads. Which to ask for: engine_keeps_window. Equal to `kv_cache_bytes_per_token // tp x
    blocks x block_size` when nothing is windowed (serving_capacity's plan)."""
    check_choice("kv_dtype", kv_dtype, KV_DTYPES)
    check_int("context", context, minimum=1)
    check_int("block_size", block_size, minimum=1)
    check_int("tensor_parallel", tensor_parallel, minimum=1, maximum=1024)
    if not spec.causal:
        return 0

    def rounded(tokens: int) -> int:
        return -(-tokens // block_size) * block_size

    if not windowed or not spec.num_sliding_layers:
        return kv_cache_bytes_per_token(spec, kv_dtype) // tensor_parallel * rounded(context)
    elems = sum(
        L.kv_elems_per_token(layer.attention) * rounded(span)
        for layer, span in zip(spec.stack, spec.layer_spans(context), strict=True)
    )
    return round(elems * _DTYPE_BYTES[kv_dtype]) // tensor_parallel


def inference_weight_bytes(spec: ModelSpec, weights: str) -> tuple[int, int]:
    """(weight bytes, scale bytes) of the whole model stored in `weights` format."""
    fmt = quant.weight_format(weights)
    linear = linear_params(spec)
    return quant.stored_bytes(fmt, linear, param_count(spec) - linear)


def inference_memory(setup: InferenceSetup) -> MemoryEstimate:
    """Memory of a prefill of `batch` sequences of `seq` tokens with a KV cache, per GPU
    (Hugging Face `generate` style: logits of the last position only, upcast to fp32)."""
    validate_inference(setup)
    s = setup
    spec = s.model
    tp = s.tensor_parallel
    comps = dict.fromkeys(COMPONENTS, 0)
    w, sc = inference_weight_bytes(spec, s.weights)
    comps["weights"] = w // tp
    comps["quant_scales"] = sc // tp
    # The prefill's peak holds the whole prompt's K/V on every layer: transformers'
    # `DynamicSlidingWindowLayer` keeps a view of the full concatenated tensor after the prefill
    # (the storage stays whole) and shrinks to the window only at the first decode step
    # (measured, bench/memory_validation.py); the decode steady state (`kv_cache_bytes`) keeps
    # the window.
    comps["kv_cache"] = s.batch * s.seq * kv_cache_bytes_per_token(spec, s.kv_dtype) // tp
    dtype = "fp32" if s.weights == "fp32" else "bf16"
    if spec.causal:
        # the cache grows layer by layer: a layer's peak sees the K/V of the layers before it
        kv_elem = _DTYPE_BYTES[s.kv_dtype] / tp
        transient = act.prefill_peak_bytes(spec, s.batch, s.seq, dtype, s.attention, kv_elem)
    else:
        transient = act.prefill_transient_bytes(spec, s.batch, s.seq, dtype, s.attention)
    if spec.causal:
        comps["activations"] = transient
        comps["logits"] = s.batch * spec.vocab_size * (act._act_dt(dtype) + 4) // tp
    else:
        # an encoder scores every position: logits b x s x V in the run's dtype
        logits = s.batch * s.seq * spec.vocab_size * act._act_dt(dtype) // tp
        head = act.encoder_head_bytes(spec, s.batch * s.seq, dtype) // tp
        comps["logits"] = logits
        comps["activations"] = max(transient, head) - logits
    peak = sum(comps.values())
    assumptions = [quant.FORMATS[s.weights].source]
    if spec.num_sliding_layers:
        assumptions.append(
            f"sliding-window layers keep at most {spec.sliding_window} tokens once decoding "
            "starts; the prefill holds the whole prompt's K/V"
        )
    return _finish(comps, peak, tp > 1, tuple(assumptions))


# ---------------------------------------------------------------------------------------------
# Serving capacity (vLLM)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServingCapacity:
    weights_bytes: int
    kv_bytes_per_token: int
    kv_budget_bytes: int
    max_concurrent_sequences: int
    max_context_tokens: int
    reserved_bytes: int = 0
    activation_profile_bytes: int = 0
    kv_cache_tokens: int = 0
    block_size: int = 16

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def serving_capacity(
    spec: ModelSpec,
    gpu_memory_bytes: int,
    *,
    context: int,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    gpu_memory_utilization: float = 0.9,
    tensor_parallel: int = 1,
    max_num_batched_tokens: int = 8192,
    block_size: int = 16,
    engine: str | None = None,
) -> ServingCapacity:
    """vLLM's memory plan (docs.vllm.ai 'Engine arguments: --gpu-memory-utilization'; vllm
    `Worker.determine_num_available_blocks`): the engine may use utilisation x total memory per
    GPU; the weights and the peak of a profiling forward pass of `max_num_batched_tokens` tokens
    come out of it; the rest becomes KV-cache blocks of `block_size` tokens. A sequence of
    `context` tokens takes ceil(context / block_size) blocks; `max_context_tokens` is the longest
    single sequence the blocks can hold (capped at max_position_embeddings).

    `engine` ("vllm" | "trtllm"): how a sequence's cache counts sliding-window layers
    (engine_keeps_window: vLLM V1 keeps their window, TensorRT-LLM the whole context);
    None (the default) counts every layer at the whole context, as before the rule existed
    (the memory calculator's and the report's plan). `kv_bytes_per_token`, `kv_cache_tokens`
    and `max_context_tokens` stay per token of every layer."""
    check_positive("gpu_memory_bytes", gpu_memory_bytes)
    check_positive("gpu_memory_utilization", gpu_memory_utilization, maximum=1.0)
    check_int("context", context, minimum=1)
    if context > spec.max_position_embeddings:
        raise AdvisorError(
            "seq.too_long",
            f"context: {context} tokens is more than the model's max_position_embeddings "
            f"({spec.max_position_embeddings})",
            field="context",
            value=context,
            maximum=spec.max_position_embeddings,
        )
    check_int("tensor_parallel", tensor_parallel, minimum=1, maximum=1024)
    check_int("block_size", block_size, minimum=1)
    check_int("max_num_batched_tokens", max_num_batched_tokens, minimum=1)
    check_choice("kv_dtype", kv_dtype, KV_DTYPES)
    w, sc = inference_weight_bytes(spec, weights)
    weights_bytes = (w + sc) // tensor_parallel
    reserved = int(gpu_memory_bytes * gpu_memory_utilization)
    dtype = "fp32" if weights == "fp32" else "bf16"
    profile = act.prefill_transient_bytes(spec, 1, max_num_batched_tokens, dtype, "sdpa")
    profile = profile // tensor_parallel + 256 * spec.vocab_size * 4 // tensor_parallel
    kv_tok = kv_cache_bytes_per_token(spec, kv_dtype) // tensor_parallel
    budget = max(0, reserved - weights_bytes - profile)
    if kv_tok == 0:
        raise AdvisorError(
            "serving.no_kv", "serving_capacity: the model has no KV cache (encoder)", field="model"
        )
    block_bytes = kv_tok * block_size
    blocks = budget // block_bytes
    tokens = blocks * block_size
    windowed = False if engine is None else engine_keeps_window(engine)
    # whole context: budget // (block_bytes x blocks per sequence) = blocks // blocks per sequence
    per_seq = sequence_kv_bytes(
        spec,
        context,
        kv_dtype,
        windowed=windowed,
        block_size=block_size,
        tensor_parallel=tensor_parallel,
    )
    concurrent = budget // per_seq
    max_ctx = min(tokens, spec.max_position_embeddings)
    return ServingCapacity(
        weights_bytes=weights_bytes,
        kv_bytes_per_token=kv_tok,
        kv_budget_bytes=budget,
        max_concurrent_sequences=int(concurrent),
        max_context_tokens=int(max_ctx),
        reserved_bytes=reserved,
        activation_profile_bytes=int(profile),
        kv_cache_tokens=int(tokens),
        block_size=block_size,
    )


# ---------------------------------------------------------------------------------------------
# Inverse questions
# ---------------------------------------------------------------------------------------------


def _estimate(setup) -> MemoryEstimate:
    if isinstance(setup, TrainingSetup):
        return training_memory(setup)
    if isinstance(setup, InferenceSetup):
        return inference_memory(setup)
    raise AdvisorError(
        "field.not_setup", "setup: expected a TrainingSetup or InferenceSetup", field="setup"
    )


@functools.lru_cache(maxsize=1 << 14)
def _total_bytes(setup) -> int:
    """`_estimate(setup).total_bytes`, kept per setup (frozen): the site's fit tables search
    each model and setting at every accelerator capacity, and most of the points they try
    (the powers of two) are the same at every capacity. Only the number is kept (the
    estimate's dicts are never shared); an error is not cached."""
    return _estimate(setup).total_bytes


def _largest(setup, field: str, capacity_bytes: int, hi: int) -> int:
    """Largest value of `field` in [1, hi] whose total_bytes fits; 0 if 1 does not fit. Memory
    grows monotonically with batch and sequence length, so an exponential search finds it:
    1, 2, 4, ... up to the first value that does not fit (or `hi`), then a binary search between
    the last two (Bentley and Yao, "An almost optimal algorithm for unbounded searching", IPL
    5(3), 1976, 82-87; en.wikipedia.org/wiki/Exponential_search): about 2 log2(answer) estimates
    instead of log2(hi), the same answer."""
    check_positive("capacity_bytes", capacity_bytes)
    _estimate(setup)  # validate the rest of the setup first
    try:
        hash(setup)
        total = _total_bytes  # every search at another capacity asks 1, 2, 4, ... again
    except TypeError:  # a field given as a list: not a cache key
        total = _total_bytes.__wrapped__

    def fits(v):
        return total(replace(setup, **{field: v})) <= capacity_bytes

    if not fits(1):
        return 0
    lo, step = 1, 2
    while step < hi and fits(step):
        lo, step = step, step * 2
    if step < hi:
        hi = step  # the first power of two that does not fit
    elif fits(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def max_batch(setup, capacity_bytes: int) -> int:
    """Largest batch that fits in `capacity_bytes` per GPU (0 if batch 1 does not)."""
    return _largest(setup, "batch", capacity_bytes, 1 << 20)


def max_seq(setup, capacity_bytes: int) -> int:
    """Longest sequence (up to max_position_embeddings) that fits (0 if 1 token does not)."""
    return _largest(setup, "seq", capacity_bytes, setup.model.max_position_embeddings)


def min_gpus(setup, capacity_bytes: int, limit: int = 1024) -> int | None:
    """Fewest GPUs of `capacity_bytes` each that fit the setup, or None up to `limit`.

    Training: data-parallel degree under the setup's sharding (only ZeRO/FSDP lowers per-GPU
    memory; plain DDP does not) times its tensor-parallel degree. Inference: the tensor-parallel
    degree (a divisor of the attention heads, as vLLM requires)."""
    check_positive("capacity_bytes", capacity_bytes)
    check_int("limit", limit, minimum=1)
    if isinstance(setup, InferenceSetup):
        for t in range(1, limit + 1):
            if setup.model.num_heads % t:
                continue
            if _estimate(replace(setup, tensor_parallel=t)).total_bytes <= capacity_bytes:
                return t
        return None
    _estimate(setup)
    tp = setup.tensor_parallel
    best = None
    lo, hi = 1, limit // tp
    if hi < 1:
        return None

    def fits(n):
        return _estimate(replace(setup, gpus=n * tp)).total_bytes <= capacity_bytes

    if fits(1):
        return tp
    if not fits(hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    best = hi * tp
    return best


__all__ = [
    "ATTENTION",
    "CHECKPOINTING",
    "default_checkpointing",
    "resolve_checkpointing",
    "COMPONENTS",
    "KV_DTYPES",
    "OPTIMIZERS",
    "OVERHEADS",
    "PRECISIONS",
    "SHARDING",
    "WEIGHT_FORMATS",
    "InferenceSetup",
    "MemoryEstimate",
    "ServingCapacity",
    "TrainingSetup",
    "inference_memory",
    "engine_keeps_window",
    "kv_cache_bytes",
    "kv_cache_bytes_per_token",
    "sequence_kv_bytes",
    "max_batch",
    "max_seq",
    "min_gpus",
    "serving_capacity",
    "training_memory",
    "GIB",
]
