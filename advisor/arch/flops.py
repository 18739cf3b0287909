"""FLOP conventions of a model description: matrix-multiply parameters, training, prefill
and decode FLOPs per token, attention FLOPs, the experts a batch touches, the keys each layer
attends to (the model description owns them, issue 36; the time model, advisor.perf, reads them).

Conventions and sources
- Training FLOPs per token: ``6 * N`` for the matrix-multiply parameters ``N`` (forward 2N,
  backward 4N; Kaplan et al. 2020, arXiv:2001.08361 §2.1; Hoffmann et al. 2022,
  arXiv:2203.15556), with ``N`` the *active* parameters for mixture-of-experts models, plus the
  attention term ``6 * 2 * layers * seq * d_attn`` (``12 * L * H * Q * T`` in PaLM, Chowdhery et
  al. 2022, arXiv:2204.02311 appendix B; the ``s/6h`` term of Narayanan et al. 2021,
  arXiv:2104.04473 eq. 3). This is the "model FLOPs" convention of published MFU figures
  (no causal halving, no recompute).
- Hardware FLOPs add recomputation: full activation checkpointing re-runs the forward pass
  (``8 * N`` per token, Narayanan et al. 2021 §3.5); selective checkpointing re-runs only the
  attention core (Korthikanti et al. 2022, arXiv:2205.05198 §5).
- Inference counts the real causal work: prefill ``2 * N`` per token plus ``4 * d_attn`` per
  (query, key) pair per layer over the causal triangle; decode ``2 * N`` per new token plus
  attention over the cached context (Pope et al. 2022, arXiv:2211.05102 §2).
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

from ..core import vocab
from ..core.errors import check_int, check_non_negative
from .models import ModelSpec, active_param_count, embedding_params

TASKS = vocab.TRAINING_TASKS


@functools.lru_cache(maxsize=1024)
def matmul_params(spec: ModelSpec, active: bool = True) -> int:
    """Parameters that take part in matrix multiplies for one token: all parameters (active
    experts only for MoE) less the embedding tables, which are looked up; a tied output head
    still multiplies, so its V*h is added back (Kaplan et al. 2020 count non-embedding N)."""
    n = active_param_count(spec) if active else _total_params(spec)
    n -= embedding_params(spec)
    if spec.tie_word_embeddings:
        n += spec.vocab_size * spec.hidden_size
    return n


def _total_params(spec: ModelSpec) -> int:
    from .models import param_count

    return param_count(spec)


@functools.lru_cache(maxsize=4096)
def _layer_spans(spec: ModelSpec, seq: int) -> tuple[int, ...]:
    """Keys each query attends to in the widest case, per layer: `ModelSpec.layer_spans`
    (cached here: the compute paths call it per token count)."""
    return spec.layer_spans(seq)


def attention_flops_per_token_train(spec: ModelSpec, seq: int) -> float:
    """Model FLOPs of the attention scores and weighted sum per token, forward + backward:
    ``6 * 2 * span * d_attn`` per layer (PaLM appendix B: 12*L*H*Q*T; no causal halving)."""
    return float(sum(12 * span * spec.q_dim for span in _layer_spans(spec, seq)))


@dataclass(frozen=True)
class TrainingFlops:
    """FLOPs of one training step (all GPUs together)."""

    tokens: int
    model_flops: float  # convention of published MFU figures
    hardware_flops: float  # what the GPUs execute, recomputation included
    model_flops_per_token: float
    hardware_flops_per_token: float
    matmul_params: int
    trainable_params: int

    def to_dict(self) -> dict:
        return asdict(self)


def training_flops(
    spec: ModelSpec,
    tokens: int,
    seq: int,
    *,
    task: str = "train",
    checkpointing: str = "none",
    lora_params: int = 0,
) -> TrainingFlops:
    """FLOPs to train on `tokens` tokens in sequences of `seq`.

    Full training: model = 6*N + 12*L*seq*d_attn per token (module docstring). LoRA / QLoRA: the
    frozen weights need no weight gradient, so 4*N (forward 2N, input gradients 2N) plus 6 per
    adapter parameter (Hu et al. 2021, arXiv:2106.09685 §4.2: no gradients for most parameters).
    Recompute: full checkpointing adds a forward pass (2*N + 4*L*seq*d_attn), selective only the
    attention core forward (4*L*seq*d_attn) (Korthikanti et al. 2022 §5).
    """
    if task not in TASKS:
        from ..core.errors import unknown_name

        raise unknown_name("task", task, TASKS)
    tokens = check_int("tokens", tokens)
    seq = check_int("seq", seq)
    check_non_negative("lora_params", lora_params)
    n = matmul_params(spec)
    attn = attention_flops_per_token_train(spec, seq)
    attn_fwd = attn / 3
    if task == "train":
        per_token = 6.0 * n + attn
        trainable = _total_params(spec)
    else:
        per_token = 4.0 * n + 6.0 * lora_params + attn
        trainable = int(lora_params)
    extra = 0.0
    if checkpointing == "full":
        extra = 2.0 * n + attn_fwd
    elif checkpointing == "selective":
        extra = attn_fwd
    elif checkpointing != "none":
        from ..core.errors import unknown_name

        raise unknown_name("checkpointing", checkpointing, ("none", "selective", "full"))
    return TrainingFlops(
        tokens=tokens,
        model_flops=per_token * tokens,
        hardware_flops=(per_token + extra) * tokens,
        model_flops_per_token=per_token,
        hardware_flops_per_token=per_token + extra,
        matmul_params=n,
        trainable_params=trainable,
    )


def prefill_flops(spec: ModelSpec, prompt_tokens: int, batch: int = 1) -> float:
    """Forward FLOPs of a prefill of `prompt_tokens` per sequence: 2*N per token plus, per layer,
    4*d_attn per (query, key) pair in the causal triangle (within the sliding window)."""
    prompt_tokens = check_int("seq", prompt_tokens)
    batch = check_int("batch", batch)
    n = matmul_params(spec)
    pairs = 0
    for span in _layer_spans(spec, prompt_tokens):
        # sum over positions i of min(i + 1, span)
        if span >= prompt_tokens:
            pairs += prompt_tokens * (prompt_tokens + 1) // 2
        else:
            pairs += span * (span + 1) // 2 + (prompt_tokens - span) * span
    return float(batch) * (2.0 * n * prompt_tokens + 4.0 * spec.q_dim * pairs)


@functools.lru_cache(maxsize=4096)
def decode_flops(spec: ModelSpec, context: int, batch: int = 1) -> float:
    """FLOPs of one decode step (one new token for each of `batch` sequences with `context`
    cached tokens): 2*N + 4*d_attn*span summed over layers, per sequence."""
    context = check_int("seq", context)
    batch = check_int("batch", batch)
    n = matmul_params(spec)
    attn = sum(4.0 * spec.q_dim * span for span in _layer_spans(spec, context))
    return float(batch) * (2.0 * n + attn)


def expected_experts_touched(num_experts: int, experts_per_token: int, tokens: int) -> float:
    """Expected number of distinct experts a layer reads for `tokens` tokens routed top-k
    uniformly at random: E * (1 - (1 - k/E)^tokens). A uniform-routing assumption (load-balanced
    routers aim for it; Fedus et al. 2021, arXiv:2101.03961 §2.2)."""
    if num_experts <= 0:
        return 0.0
    return num_experts * (1.0 - (1.0 - experts_per_token / num_experts) ** tokens)
