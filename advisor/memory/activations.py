"""Activation memory of a transformer training step and of an inference prefill, as PyTorch and
Hugging Face transformers really allocate it.

The structure follows Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
Transformer Models" (arXiv:2205.05198, §4): bytes saved for the backward pass per layer as a sum of
terms in (tokens x hidden), (tokens x intermediate), (tokens x q/kv width) and, for attention that
materialises it, (batch x heads x seq x seq). The coefficients are not the paper's (which counts
Megatron's kernels, fp16 and dropout); they are FITTED to the tensors autograd actually saves in
transformers 5.24 with torch 2.13, counted storage by storage with a TorchDispatchMode
(bench/memory_validation.py), and explained term by term in each function's docstring.

`dt` is the activation dtype's bytes (4 for fp32, 2 for bf16/fp16, 2 under autocast where the
matmul outputs are 16-bit).
"""

from __future__ import annotations

from ..arch.models import ModelSpec

FP32 = 4
INT64 = 8


def _attn_input_casts(spec: ModelSpec) -> tuple[int, int]:
    """How many linear layers read the attention input and the MLP input: under autocast each
    `nn.Linear` casts its (fp32) input to 16 bits separately and autograd keeps each copy
    (torch.amp autocast casts activations per op; only leaf weights are cached)."""
    if spec.family == "phi3":
        return 1, 1  # fused qkv_proj, fused gate_up_proj
    if spec.family == "gpt2":
        return 1, 1  # fused c_attn; c_fc
    if spec.family == "bert":
        return 3, 1
    return 3, (2 if spec.gated_mlp else 1) * (1 if not spec.is_moe else 0)


def norm_saved_bytes(spec: ModelSpec, tokens: int, dtype: str) -> int:
    """Bytes one pre-norm keeps for backward, per call (HF `LlamaRMSNorm.forward`:
    `x.to(float32)`, `x * rsqrt(mean(x^2) + eps)`, `weight * x.to(input_dtype)`).

    - fp32: the normalised `x * rsqrt` (saved by the weight multiply) and the output (saved by
      the next linear layer): 2 x 4 bytes x h, plus the rsqrt (4 bytes per token). The input is the
      residual stream, counted as the residual term.
    - bf16/fp16: the fp32 upcast of the input (4h, saved by pow and mul), the 16-bit cast of the
      normalised value (2h) and the output (2h), plus rsqrt.
    - autocast: the fp32 `x * rsqrt` (4h, saved by the weight multiply) plus rsqrt; the output is
      not kept (each linear layer saves its own 16-bit cast, see `_attn_input_casts`).
    - LayerNorm (GPT-2, BERT; `native_layer_norm` saves input, mean and rstd): the output (dt x h)
      plus mean and rstd (8 bytes per token); input counted as residual.
    Gemma's norm (Gemma, Gemma 2, Gemma 3) computes in fp32 and casts its output: 4h + 4h
    (+2h cast in 16-bit).
    """
    h = spec.hidden_size
    if spec.norm == "layernorm":
        return tokens * (h * _dt(dtype) + 2 * FP32) if not _amp(dtype) else tokens * (h * 4 + 8)
    if _amp(dtype):
        return tokens * (h * FP32 + FP32)
    if spec.family in ("gemma", "gemma2", "gemma3"):
        extra = 0 if dtype == "fp32" else 2 * h
        return tokens * (8 * h + extra + FP32)
    if dtype == "fp32":
        return tokens * (8 * h + FP32)
    return tokens * (8 * h + FP32)


def _dt(dtype: str) -> int:
    return 4 if dtype == "fp32" or dtype.startswith("amp") else 2


def _amp(dtype: str) -> bool:
    return dtype.startswith("amp")


def _act_dt(dtype: str) -> int:
    """Bytes of matmul outputs: fp32 for fp32 runs, 16 bits for bf16/fp16 and under autocast."""
    return 4 if dtype == "fp32" else 2


def residual_bytes(spec: ModelSpec, tokens: int, dtype: str) -> int:
    """The residual stream tensor (h per token) that the next norm saves as its input: kept in
    fp32 and under autocast (the norm reads it directly); in 16-bit runs the norm saves its fp32
    upcast instead (counted in `norm_saved_bytes`), so the residual itself is freed."""
    if dtype in ("bf16", "fp16"):
        return 0
    return tokens * spec.hidden_size * FP32


def attention_saved_bytes(
    spec: ModelSpec, batch: int, seq: int, dtype: str, attention: str, tp: int = 1
) -> int:
    """Saved tensors of the attention block (after its input norm), per layer.

    SDPA / flash (`_scaled_dot_product_flash_attention`, no s x s matrix): rotated q (q), k and v
    (2 kv, the cache concatenations HF's `DynamicLayer.update` makes), the output (q) and the
    log-sum-exp (fp32, batch x heads x seq). Eager (`eager_attention_forward`): q (q), k and v
    repeated to all heads by `repeat_kv` (2 q), the softmax probabilities in fp32
    (heads x seq per token, softmax(dtype=float32)) plus their 16-bit cast when the run is 16-bit,
    and the output transposed to contiguous (q). Biases of q/k/v/o save nothing extra (addmm saves
    its input). Tensor parallelism splits heads: all of these /tp (Megatron, Shoeybi et al. 2019,
    arXiv:1909.08053; Korthikanti et al. 2022 eq. 2).
    """
    tokens = batch * seq
    dt = _act_dt(dtype)
    q, kv, a = spec.q_dim, spec.kv_dim, spec.num_heads
    qk_norm = qk_norm_saved_bytes(spec, tokens, dtype) // tp
    if attention == "eager":
        probs = a * seq * (FP32 + (dt if dt != FP32 else 0))
        kv_rep = 2 * q if kv != q else 2 * kv
        per_token = (q + kv_rep + q) * dt + probs
        if (
            spec.family == "gemma2"
            and dt == FP32
            and (spec.hf_config or {}).get("attn_logit_softcapping", 50.0)
        ):
            # attention logit soft-capping (tanh) keeps its fp32 output (measured; in bf16 the
            # tanh output replaces the upcast copy)
            per_token += a * seq * FP32
        if spec.family in ("gpt2", "bert"):
            # GPT-2 and BERT keep q, k, v as views of the fused c_attn output (or three
            # projections) and the merged-heads copy: 3h + h, plus the probabilities.
            per_token = (3 * q + q) * dt + probs
    else:
        per_token = (2 * q + 2 * kv) * dt + a * FP32
        if spec.family == "gpt2":
            per_token = (3 * q + 2 * q) * dt + a * FP32  # fused c_attn output + out + merged
        elif spec.family == "bert":
            per_token = (3 * q + q) * dt + a * FP32
    return tokens * per_token // tp + qk_norm


def qk_norm_saved_bytes(spec: ModelSpec, tokens: int, dtype: str) -> int:
    """What a layer's QK-norm keeps for backward (a layer property, `layers.Attention.qk_norm`):
    RMSNorm over each head of q and k (Qwen3, Gemma 3: "head") or over the whole q and k
    projections (OLMo 2: "full"), saving as a pre-norm does (`norm_saved_bytes`): the fp32 upcast
    of its input and, in 16-bit runs, the normalised value's cast (4 + dt bytes per element), plus
    one fp32 rsqrt per normalised row. Measured on Qwen3 in bf16 (bench/memory_validation.py
    qwen3-bf16-adamw: 1,181 bytes per token and layer for q 128 and k 64 wide, 4 + 2 heads; this
    formula 1,176)."""
    att = spec.stack[0].attention if spec.layers else None
    if att is None or not att.qk_norm:
        return 0
    q, kv = att.q_dim, att.kv_dim
    rows = att.num_heads + att.num_kv_heads if att.qk_norm == "head" else 2
    per_elem = FP32 + (_act_dt(dtype) if dtype in ("bf16", "fp16") else 0)
    if spec.family == "gemma3":
        # Gemma's RMSNorm (fp32 compute, `* (1 + weight)`): two fp32 copies per element and, in
        # 16-bit runs, two 16-bit ones (measured, gemma3-bf16-adamw: -7.8 % -> -1.1 %)
        per_elem = 2 * FP32 + (2 * _act_dt(dtype) if dtype in ("bf16", "fp16") else 0)
    return tokens * ((q + kv) * per_elem + rows * FP32)


def mlp_saved_bytes(spec: ModelSpec, tokens: int, dtype: str, tp: int = 1) -> int:
    """Saved tensors of the MLP block, per layer.

    Gated (SwiGLU/GeGLU: `down(act(gate(x)) * up(x))`): gate output (saved by the activation), the
    activation output and up output (saved by the multiply) and the product (saved by down): 4 i.
    Plain (GPT-2, BERT): fc1 output and the activation output: 2 i, except GPT-2's `gelu_new`
    (`NewGELUActivation`, a Python formula) which keeps 5 i (its input, 0.5x, tanh, 1+tanh, the
    output). MoE (Mixtral): each token visits `experts_per_token` experts; the gathered hidden
    state (h) and the 4 i of the expert MLP per visit, plus the router logits and fp32 softmax
    (num_experts per token).
    """
    dt = _act_dt(dtype)
    i, h = spec.intermediate_size, spec.hidden_size
    if spec.is_moe:
        k = spec.experts_per_token
        per_token = k * (4 * i + 2 * h) * dt // tp + spec.num_experts * (dt + FP32)
        return tokens * per_token
    if spec.gated_mlp:
        return tokens * 4 * i * dt // tp
    n = 5 if spec.hidden_act == "gelu_new" else 2
    return tokens * n * i * dt // tp


def dropout_bytes(spec: ModelSpec, batch: int, seq: int, dtype: str, attention: str) -> int:
    """Dropout masks and outputs kept for backward when the config's dropout is > 0 (GPT-2
    resid/attn/embd_pdrop, BERT hidden/attention_probs_dropout_prob): each active dropout keeps a
    bool mask (1 byte) and its output (dt) per element (`native_dropout`)."""
    cfg = spec.hf_config or {}
    dt = _act_dt(dtype)
    h = spec.hidden_size
    tokens = batch * seq
    if spec.family == "gpt2":
        resid = float(cfg.get("resid_pdrop", 0.1)) > 0
        attn = float(cfg.get("attn_pdrop", 0.1)) > 0
    elif spec.family == "bert":
        resid = float(cfg.get("hidden_dropout_prob", 0.1)) > 0
        attn = float(cfg.get("attention_probs_dropout_prob", 0.1)) > 0
    else:
        return 0
    n = tokens * 2 * h * (1 + dt) if resid else 0
    if attn and attention == "eager":
        n += batch * spec.num_heads * seq * seq * (1 + dt)
    return n


def weight_cast_bytes(spec: ModelSpec, linear_params_per_layer: int) -> int:
    """Autocast's 16-bit copies of one layer's linear weights: cast once per forward, cached and
    kept for backward (torch.amp autocast weight cache, docs 'Automatic Mixed Precision')."""
    return 2 * linear_params_per_layer


def layer_saved_bytes(
    spec: ModelSpec,
    batch: int,
    seq: int,
    dtype: str,
    attention: str,
    linear_params_per_layer: int,
    tp: int = 1,
) -> int:
    """All bytes one transformer layer keeps for backward (no checkpointing): two norms
    (`norm_saved_bytes`; Gemma 2 has four), two residual tensors, attention and MLP, dropout, and
    under autocast the per-linear input casts and the layer's cast weights."""
    tokens = batch * seq
    h = spec.hidden_size
    norms = spec.norms_per_layer if spec.family != "bert" else 2
    n = 2 * norm_saved_bytes(spec, tokens, dtype) + 2 * residual_bytes(spec, tokens, dtype)
    if spec.norm == "layernorm" and _amp(dtype):
        # autocast runs layer_norm in fp32 and every following linear saves its own 16-bit cast:
        # nothing keeps the fp32 output of a block's LayerNorm (measured, GPT-2 and BERT)
        n -= 2 * tokens * h * FP32
    if norms == 4:
        # Gemma 2 post-norms: their input (o_proj / down_proj output) and x*rsqrt, in fp32.
        n += 2 * tokens * (h * _act_dt(dtype) + 4 * h + FP32)
    n += attention_saved_bytes(spec, batch, seq, dtype, attention, tp)
    n += mlp_saved_bytes(spec, tokens, dtype, tp)
    n += dropout_bytes(spec, batch, seq, dtype, attention)
    if _amp(dtype):
        a_in, m_in = _attn_input_casts(spec)
        n += tokens * (a_in + m_in) * h * 2
        if spec.is_moe:
            n += tokens * h * 2  # router input cast
        n += weight_cast_bytes(spec, linear_params_per_layer) // tp
    return n


def layer_input_bytes(spec: ModelSpec, tokens: int, dtype: str) -> int:
    """What full checkpointing keeps per layer: its input hidden state (torch.utils.checkpoint
    saves the inputs of the checkpointed function; Chen et al. 2016, arXiv:1604.06174)."""
    return tokens * spec.hidden_size * _dt(dtype if dtype != "bf16" else "bf16")


def logits_train_bytes(spec: ModelSpec, tokens: int, tp: int = 1, dtype: str = "bf16") -> int:
    """Vocabulary-sized buffers at the start of backward: HF's `ForCausalLMLoss` upcasts the
    logits to fp32 (`logits.float()`), `cross_entropy` = log_softmax (fp32 output saved) + nll;
    backward then holds the nll gradient and the log_softmax input gradient, both fp32: 3 x 4
    bytes x tokens x vocab at the peak (measured; transformers/loss/loss_utils.py). Gemma 2's
    final logit soft-capping (`tanh(logits / cap) * cap` before the upcast) keeps the tanh output
    (dt) and, in 16-bit runs, its gradient before the upcast: 4 more bytes per token and
    vocabulary entry in fp32 and in bf16 alike (measured).
    Vocabulary-parallel cross entropy splits them /tp (Megatron)."""
    per = 3 * FP32
    if spec.final_logit_softcap:
        per += FP32 if _act_dt(dtype) == FP32 else 2 * _act_dt(dtype)
    return tokens * spec.vocab_size * per // tp


def prefill_transient_bytes(
    spec: ModelSpec, batch: int, seq: int, dtype: str, attention: str
) -> int:
    """Peak of the temporaries of one layer in an inference prefill (no autograd), fitted to the
    live storages of a transformers 5.24 forward (bench/memory_validation.py):

    - outside attention: the embedding output, the layer input and mid-layer residual and the
      normalised input (4 h); with learned positions (GPT-2) the embedding sum and the position
      rows are one more h per token (+ h per position); in the MLP the gate, activation and
      product (3 i; 2 i for a plain MLP; 4 i for GPT-2's `gelu_new`, a Python formula whose
      `0.5 * x * (1 + tanh(...))` keeps x, 0.5 x and two temporaries alive);
    - eager attention: besides 4 h, q and k/v (q + 2 kv), the scores in the run's dtype, their
      fp32 upcast when the run is 16-bit (`softmax(..., dtype=float32)` casts its input) and the
      fp32 probabilities, per head and query-key pair; plus the additive s x s mask per sequence
      (two for Gemma 2: full and sliding), alive in every layer; the probabilities in the run's
      dtype stay alive through the MLP (the layer binds the returned weights to `_`);
    - MoE: a visit's i terms per routed token;
    - attention sinks (a layer property, `layers.Attention.sinks`): the eager scores stay in the
      run's dtype (no fp32 upcast or probabilities).
    """
    tokens = batch * seq
    dt = _act_dt(dtype)
    h, i = spec.hidden_size, spec.intermediate_size
    if spec.is_moe:
        k, e = spec.experts_per_token, spec.num_experts
        mlp = tokens * k * (3 * i + 2 * h) * dt
        if spec.layers:
            # transformers 5.x experts as 3D tensors (`Qwen3MoeExperts.forward`): the zeroed
            # output (h), the int64 one-hot expert mask (k x (E + 1)), the router's logits and
            # fp32 softmax (E) and the top-k weights and indices (measured: qwen3_moe prefill)
            mlp += tokens * (h * dt + INT64 * k * (e + 1) + e * (dt + FP32) + k * (FP32 + INT64))
    elif spec.gated_mlp:
        mlp = tokens * 3 * i * dt
    else:
        mlp = tokens * (4 if spec.hidden_act == "gelu_new" else 2) * i * dt
    base = tokens * 4 * h * dt
    if spec.learned_positions and spec.causal:
        base += (tokens + seq) * h * dt
    peak = base + mlp
    if attention == "eager":
        s2 = batch * spec.num_heads * seq * seq
        masks = 2 if spec.num_sliding_layers and spec.num_sliding_layers < spec.num_layers else 1
        qkv = tokens * (spec.q_dim + 2 * spec.kv_dim) * dt
        upcast = FP32 if dt != FP32 else 0
        mask = masks * batch * seq * seq * dt  # made once per forward, alive in every layer
        per_pair = dt + upcast + FP32
        if any(layer.attention.sinks for layer in spec.stack):
            # attention sinks (gpt-oss `eager_attention_forward`): the masked scores, their
            # concatenation with the sink logits less its row maximum and the softmax, all in
            # the run's dtype (`softmax(..., dtype=combined_logits.dtype)`): 3 x dt per pair
            per_pair = 3 * dt
        attn = base + qkv + s2 * per_pair + mask
        # the decoder layer keeps the returned probabilities (run dtype) until it returns
        # (`hidden_states, _ = self.self_attn(...)`), so they coexist with the MLP
        peak = max(peak + mask + s2 * dt, attn)
    return peak


def encoder_head_bytes(spec: ModelSpec, tokens: int, dtype: str) -> int:
    """An encoder's MLM head at inference (BERT `BertForMaskedLM`, fill-mask): the encoder output
    and the head transform's output (2 h per token) while the decoder writes the logits of every
    position (V per token) in the run's dtype (no fp32 upcast without labels)."""
    dt = _act_dt(dtype)
    return tokens * (2 * spec.hidden_size + spec.vocab_size) * dt
