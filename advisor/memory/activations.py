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

from ..arch.models import ModelSpec, kv_elems_through, layer_counts, window_summary

FP32 = 4
INT64 = 8


def _layer(spec: ModelSpec, layer=None):
    """The layer a per-layer term describes: `layer` where given, else the stack's first (a
    uniform stack's every layer)."""
    return layer if layer is not None else spec.stack[0]


def _attn_input_casts(spec: ModelSpec, layer=None) -> tuple[int, int]:
    """How many linear layers read the attention input and the MLP input: under autocast each
    `nn.Linear` casts its (fp32) input to 16 bits separately and autograd keeps each copy
    (torch.amp autocast casts activations per op; only leaf weights are cached). A fused qkv
    (Phi-3 qkv_proj, GPT-2 c_attn: `ModelSpec.qkv_layout`) reads it once, MLA's q_a_proj and
    kv_a_proj_with_mqa twice; a fused gate_up_proj once; routed experts read the router's
    gathered rows (counted with the router)."""
    lay = _layer(spec, layer)
    a_in = 2 if lay.attention.kind == "mla" else 3 if spec.qkv_layout == "separate" else 1
    if lay.mlp.is_moe:
        m_in = 0
    elif lay.mlp.gated and not spec.fused_gate_up:
        m_in = 2
    else:
        m_in = 1
    return a_in, m_in


def norm_saved_bytes(spec: ModelSpec, tokens: int, dtype: str, width: int | None = None) -> int:
    """Bytes one pre-norm keeps for backward, per call (HF `LlamaRMSNorm.forward`:
    `x.to(float32)`, `x * rsqrt(mean(x^2) + eps)`, `weight * x.to(input_dtype)`), over `width`
    elements per token (the hidden size unless given: MLA's q_a_layernorm and kv_a_layernorm
    normalise the q and kv ranks the same way).

    - fp32: the normalised `x * rsqrt` (saved by the weight multiply) and the output (saved by
      the next linear layer): 2 x 4 bytes x h, plus the rsqrt (4 bytes per token). The input is the
      residual stream, counted as the residual term.
    - bf16/fp16: the fp32 upcast of the input (4h, saved by pow and mul), the 16-bit cast of the
      normalised value (2h) and the output (2h), plus rsqrt.
    - autocast: the fp32 `x * rsqrt` (4h, saved by the weight multiply) plus rsqrt; the output is
      not kept (each linear layer saves its own 16-bit cast, see `_attn_input_casts`).
    - LayerNorm (GPT-2, BERT; `native_layer_norm` saves input, mean and rstd): the output (dt x h)
      plus mean and rstd (8 bytes per token); input counted as residual.
    A norm computing `x * (1 + weight)` in fp32 and casting after (`ModelSpec.norm_plus_one`:
    Gemma, Gemma 2, Gemma 3) keeps 4h + 4h (+2h for the cast in 16-bit).
    """
    h = spec.hidden_size if width is None else width
    if spec.norm == "layernorm":
        return tokens * (h * _dt(dtype) + 2 * FP32) if not _amp(dtype) else tokens * (h * 4 + 8)
    if _amp(dtype):
        return tokens * (h * FP32 + FP32)
    if spec.norm_plus_one:
        extra = 0 if dtype == "fp32" else 2 * h
        return tokens * (8 * h + extra + FP32)
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
    spec: ModelSpec, batch: int, seq: int, dtype: str, attention: str, tp: int = 1, layer=None
) -> int:
    """Saved tensors of one layer's attention block (after its input norm), from the layer's
    `Attention` (`layer`, or the stack's first).

    SDPA / flash (`_scaled_dot_product_flash_attention`, no s x s matrix): rotated q (q), k and v
    (2 kv, the cache concatenations HF's `DynamicLayer.update` makes), the output (q) and the
    log-sum-exp (fp32, batch x heads x seq). Eager (`eager_attention_forward`): q (q), k and v
    repeated to all heads by `repeat_kv` (2 q), the softmax probabilities in fp32
    (heads x seq per token, softmax(dtype=float32)) plus their 16-bit cast when the run is 16-bit,
    and the output transposed to contiguous (q). Biases of q/k/v/o save nothing extra (addmm saves
    its input). A Conv1D c_attn (`ModelSpec.qkv_layout` "conv1d", GPT-2) keeps its whole output
    (3q) beside the SDPA output and the merged-heads copy: 5q. Attention logit soft-capping
    (`ModelSpec.attn_logit_softcap`, Gemma 2) keeps the tanh output in fp32 runs (in bf16 it
    replaces the upcast copy; measured).

    MLA (`DeepseekV3Attention`): q_a_layernorm and kv_a_layernorm save as a pre-norm does over
    the q and kv ranks (`norm_saved_bytes`); the query and key states, heads x (qk_nope +
    qk_rope) each (the rope concatenation and `new_empty` fill), the value made contiguous and
    the output, heads x v_head_dim each; the probabilities (eager) or log-sum-exp as above (all
    heads: MLA repeats no kv heads). Measured on the DeepSeek-V3-shaped bench model.

    Tensor parallelism splits heads: all of these /tp (Megatron, Shoeybi et al. 2019,
    arXiv:1909.08053; Korthikanti et al. 2022 eq. 2).
    """
    tokens = batch * seq
    dt = _act_dt(dtype)
    att = _layer(spec, layer).attention
    q, kv, a = att.q_dim, att.kv_dim, att.num_heads
    if att.kind == "mla":
        n = norm_saved_bytes(spec, tokens, dtype, att.kv_lora_rank)
        if att.q_lora_rank:
            n += norm_saved_bytes(spec, tokens, dtype, att.q_lora_rank)
        per_token = (2 * q + 2 * att.o_dim) * dt
        if attention == "eager":
            per_token += a * seq * (FP32 + (dt if dt != FP32 else 0))
        else:
            per_token += a * FP32
        return tokens * per_token // tp + n // tp
    qk_norm = qk_norm_saved_bytes(spec, tokens, dtype, layer) // tp
    if attention == "eager":
        probs = a * seq * (FP32 + (dt if dt != FP32 else 0))
        kv_rep = 2 * q if kv != q else 2 * kv
        per_token = (q + kv_rep + q) * dt + probs
        if spec.attn_logit_softcap and dt == FP32:
            per_token += a * seq * FP32
    else:
        per_token = (2 * q + 2 * kv) * dt + a * FP32
        if spec.qkv_layout == "conv1d":
            per_token = (3 * q + 2 * q) * dt + a * FP32  # fused c_attn output + out + merged
    return tokens * per_token // tp + qk_norm


def qk_norm_saved_bytes(spec: ModelSpec, tokens: int, dtype: str, layer=None) -> int:
    """What a layer's QK-norm keeps for backward (a layer property, `layers.Attention.qk_norm`):
    RMSNorm over each head of q and k (Qwen3, Gemma 3: "head") or over the whole q and k
    projections (OLMo 2: "full"), saving as a pre-norm does (`norm_saved_bytes`): the fp32 upcast
    of its input and, in 16-bit runs, the normalised value's cast (4 + dt bytes per element), plus
    one fp32 rsqrt per normalised row. Measured on Qwen3 in bf16 (bench/memory_validation.py
    qwen3-bf16-adamw: 1,181 bytes per token and layer for q 128 and k 64 wide, 4 + 2 heads; this
    formula 1,176). A norm computing `x * (1 + weight)` in fp32 (`ModelSpec.norm_plus_one`,
    Gemma 3) keeps two fp32 copies per element and, in 16-bit runs, two 16-bit ones (measured,
    gemma3-bf16-adamw: -7.8 % -> -1.1 %)."""
    att = _layer(spec, layer).attention
    if not att.qk_norm:
        return 0
    q, kv = att.q_dim, att.kv_dim
    rows = att.num_heads + att.num_kv_heads if att.qk_norm == "head" else 2
    per_elem = FP32 + (_act_dt(dtype) if dtype in ("bf16", "fp16") else 0)
    if spec.norm_plus_one:
        per_elem = 2 * FP32 + (2 * _act_dt(dtype) if dtype in ("bf16", "fp16") else 0)
    return tokens * ((q + kv) * per_elem + rows * FP32)


def mlp_saved_bytes(spec: ModelSpec, tokens: int, dtype: str, tp: int = 1, layer=None) -> int:
    """Saved tensors of one layer's MLP block, from the layer's `Mlp` (`layer`, or the stack's
    first).

    Gated (SwiGLU/GeGLU: `down(act(gate(x)) * up(x))`): gate output (saved by the activation), the
    activation output and up output (saved by the multiply) and the product (saved by down): 4 i.
    Plain (GPT-2, BERT): fc1 output and the activation output: 2 i, except GPT-2's `gelu_new`
    (`NewGELUActivation`, a Python formula) which keeps 5 i (its input, 0.5x, tanh, 1+tanh, the
    output). MoE: each token visits `experts_per_token` experts; the gathered hidden state (h)
    and the 4 i of the expert MLP per visit, plus the router logits and fp32 softmax
    (num_experts per token); shared experts (`Mlp.shared_width`, DeepSeek-V3, GLM-4.5,
    Llama 4) are one gated MLP of their width: 4 x shared width per token.
    """
    dt = _act_dt(dtype)
    m = _layer(spec, layer).mlp
    i, h = m.width, spec.hidden_size
    if m.is_moe:
        k = m.experts_per_token
        per_token = k * (4 * i + 2 * h) * dt // tp + m.experts * (dt + FP32)
        per_token += 4 * m.shared_width * dt // tp
        return tokens * per_token
    if m.gated:
        return tokens * 4 * i * dt // tp
    n = 5 if spec.hidden_act == "gelu_new" else 2
    return tokens * n * i * dt // tp


def dropout_bytes(spec: ModelSpec, batch: int, seq: int, dtype: str, attention: str) -> int:
    """Dropout masks and outputs kept for backward when the config's dropout is > 0 (GPT-2
    resid/attn/embd_pdrop, BERT hidden/attention_probs_dropout_prob): each active dropout keeps a
    bool mask (1 byte) and its output (dt) per element (`native_dropout`). The probabilities are
    `ModelSpec.resid_dropout` and `attn_dropout`, read from the config where the family has them."""
    dt = _act_dt(dtype)
    h = spec.hidden_size
    tokens = batch * seq
    resid = spec.resid_dropout > 0
    attn = spec.attn_dropout > 0
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
    linear_params_per_layer: int | None = None,
    tp: int = 1,
    layer=None,
) -> int:
    """All bytes one transformer layer keeps for backward (no checkpointing), from its
    description (`layer`, or the stack's first): its norms (`norm_saved_bytes`; four-norm layers
    add the post-norms), two residual tensors, attention and MLP, dropout, and under autocast the
    per-linear input casts and the layer's cast weights (`linear_params_per_layer`, or the
    layer's own linear weights)."""
    from ..arch import layers as L

    lay = _layer(spec, layer)
    tokens = batch * seq
    h = spec.hidden_size
    n = 2 * norm_saved_bytes(spec, tokens, dtype) + 2 * residual_bytes(spec, tokens, dtype)
    if spec.norm == "layernorm" and _amp(dtype):
        # autocast runs layer_norm in fp32 and every following linear saves its own 16-bit cast:
        # nothing keeps the fp32 output of a block's LayerNorm (measured, GPT-2 and BERT)
        n -= 2 * tokens * h * FP32
    if lay.norms == 4:
        # post-norms (Gemma 2, Gemma 3): their input (o_proj / down_proj output) and x*rsqrt, fp32
        n += 2 * tokens * (h * _act_dt(dtype) + 4 * h + FP32)
    n += attention_saved_bytes(spec, batch, seq, dtype, attention, tp, lay)
    n += mlp_saved_bytes(spec, tokens, dtype, tp, lay)
    n += dropout_bytes(spec, batch, seq, dtype, attention)
    if _amp(dtype):
        a_in, m_in = _attn_input_casts(spec, lay)
        n += tokens * (a_in + m_in) * h * 2
        if lay.mlp.is_moe:
            n += tokens * h * 2  # router input cast
        lin = linear_params_per_layer
        if lin is None:
            lin = L.linear_weights(lay, h)
        n += weight_cast_bytes(spec, lin) // tp
    return n


def stack_saved_bytes(
    spec: ModelSpec, batch: int, seq: int, dtype: str, attention: str, tp: int = 1
) -> int:
    """`layer_saved_bytes` summed over the layer list (DeepSeek-V3: its 3 dense and 58 MoE
    layers each as they are; a uniform stack: num_layers times one layer)."""
    return sum(
        n * layer_saved_bytes(spec, batch, seq, dtype, attention, None, tp, lay)
        for lay, n in layer_counts(spec)
    )


def largest_layer_saved_bytes(
    spec: ModelSpec, batch: int, seq: int, dtype: str, attention: str, tp: int = 1
) -> int:
    """The largest layer's `layer_saved_bytes` (full checkpointing recomputes one at a time)."""
    return max(
        layer_saved_bytes(spec, batch, seq, dtype, attention, None, tp, lay)
        for lay, _ in layer_counts(spec)
    )


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
    """Peak of the temporaries of an inference prefill (no autograd): the largest over the layer
    list of one layer's (`layer_prefill_bytes`), plus the masks made once per forward and alive
    in every layer. Fitted to the live storages of a transformers 5.24 forward
    (bench/memory_validation.py).

    Masks: eager attention adds the s x s mask per sequence in the run's dtype (two when full
    and windowed layers mix: one of each kind). Under SDPA a windowed layer (sliding or
    chunked) cannot use the kernel's own causal flag once the sequence reaches its window
    (transformers `masking_utils._ignore_causal_mask_sdpa`: `kv_length >= local_attention_size`),
    so the bool s x s mask is built (1 byte per pair, one for the batch) and kept for the whole
    forward; full layers still pass no mask.
    """
    return prefill_peak_bytes(spec, batch, seq, dtype, attention)


def prefill_peak_bytes(
    spec: ModelSpec, batch: int, seq: int, dtype: str, attention: str, kv_elem_bytes: float = 0
) -> int:
    """`prefill_transient_bytes` with the KV cache as it grows: at layer j's peak the cache holds
    the K/V of layers 0..j only (transformers appends a layer's K/V in its attention call), at
    `kv_elem_bytes` bytes per cached element per token (its dtype over tensor parallelism).
    Returns the largest of (the caches so far + layer j's temporaries) over the layer list, less
    the whole cache (reported on its own), so the sum of the two is the prefill's peak; a
    layer's largest such sum is at its last occurrence (`arch.models.kv_elems_through`). With no
    cache, the largest layer's temporaries."""
    mask = seq * seq if attention != "eager" and _sdpa_window_mask(spec, seq) else 0
    tokens = batch * seq
    through = kv_elems_through(spec)
    # the list's last layer runs last: its count is the whole cache
    total = round(tokens * max(c for _, c in through) * kv_elem_bytes)
    best = max(
        round(tokens * cum * kv_elem_bytes)
        + layer_prefill_bytes(spec, batch, seq, dtype, attention, lay)
        for lay, cum in through
    )
    return mask + best - total


def _sdpa_window_mask(spec: ModelSpec, seq: int) -> bool:
    """Whether an SDPA prefill of `seq` tokens builds a windowed layer's mask (see
    `prefill_transient_bytes`)."""
    _, _, smallest = window_summary(spec)
    return smallest is not None and seq >= smallest


def layer_prefill_bytes(
    spec: ModelSpec, batch: int, seq: int, dtype: str, attention: str, layer=None
) -> int:
    """Peak of one layer's temporaries in an inference prefill, from its description (`layer`,
    or the stack's first); eager's masks included, SDPA's shared bool mask not
    (`prefill_transient_bytes`):

    - outside attention: the embedding output, the layer input and mid-layer residual and the
      normalised input (4 h); with learned positions (GPT-2) the embedding sum and the position
      rows are one more h per token (+ h per position); in the MLP the gate, activation and
      product (3 i; 2 i for a plain MLP; 4 i for GPT-2's `gelu_new`, a Python formula whose
      `0.5 * x * (1 + tanh(...))` keeps x, 0.5 x and two temporaries alive);
    - eager attention: besides 4 h, q and k/v (q + 2 kv), the scores in the run's dtype, their
      fp32 upcast when the run is 16-bit (`softmax(..., dtype=float32)` casts its input) and the
      fp32 probabilities, per head and query-key pair; plus the additive s x s mask per sequence
      (two when full and windowed layers mix), alive in every layer; the probabilities in the
      run's dtype stay alive through the MLP (the layer binds the returned weights to `_`);
    - SDPA on a windowed layer past its window (`prefill_transient_bytes`): the query and the
      output (2 q), k and v repeated to every head by `repeat_kv` (2 q, transformers uses SDPA's
      own GQA only without a mask: `sdpa_attention.use_gqa_in_sdpa`), and the bool mask
      converted to an additive one in the run's dtype for the batch (ATen's
      `scaled_dot_product_attention` converts a bool mask before choosing a kernel), per pair;
    - MoE: a visit's i terms per routed token (3 i + 2 h), the zeroed output, the router's
      logits and fp32 softmax and the top-k weights and indices; experts with biases and a
      clamped activation (`Mlp.clamped`, gpt-oss `GptOssExperts`) keep per routed row the
      gathered gate_up bias (2 i), the clamped gate and up (2 i) and the `(up + 1) * glu`
      product (i) beyond those (measured: gpt_oss prefill); shared experts add a gated MLP of
      their width (3 x shared width);
    - attention sinks (a layer property, `layers.Attention.sinks`): the eager scores stay in the
      run's dtype (no fp32 upcast or probabilities).
    """
    lay = _layer(spec, layer)
    att, m = lay.attention, lay.mlp
    tokens = batch * seq
    dt = _act_dt(dtype)
    h, i = spec.hidden_size, m.width
    if m.is_moe:
        k, e = m.experts_per_token, m.experts
        rows = 3 * i + 2 * h + (5 * i if m.clamped else 0)
        mlp = tokens * k * rows * dt + tokens * 3 * m.shared_width * dt
        if spec.layers:
            # transformers 5.x experts as 3D tensors (`Qwen3MoeExperts.forward`): the zeroed
            # output (h), the int64 one-hot expert mask (k x (E + 1)), the router's logits and
            # fp32 softmax (E) and the top-k weights and indices (measured: qwen3_moe prefill)
            mlp += tokens * (h * dt + INT64 * k * (e + 1) + e * (dt + FP32) + k * (FP32 + INT64))
    elif m.gated:
        mlp = tokens * 3 * i * dt
    else:
        mlp = tokens * (4 if spec.hidden_act == "gelu_new" else 2) * i * dt
    base = tokens * 4 * h * dt
    if spec.learned_positions and spec.causal:
        base += (tokens + seq) * h * dt
    peak = base + mlp
    q_dim = att.q_dim
    if attention == "eager":
        s2 = batch * att.num_heads * seq * seq
        some, every, _ = window_summary(spec)
        masks = 2 if some and not every else 1
        qkv = tokens * (q_dim + 2 * att.kv_dim) * dt
        upcast = FP32 if dt != FP32 else 0
        mask = masks * batch * seq * seq * dt  # made once per forward, alive in every layer
        per_pair = dt + upcast + FP32
        if att.sinks:
            # attention sinks (gpt-oss `eager_attention_forward`): the masked scores, their
            # concatenation with the sink logits less its row maximum and the softmax, all in
            # the run's dtype (`softmax(..., dtype=combined_logits.dtype)`): 3 x dt per pair
            per_pair = 3 * dt
        attn = base + qkv + s2 * per_pair + mask
        # the decoder layer keeps the returned probabilities (run dtype) until it returns
        # (`hidden_states, _ = self.self_attn(...)`), so they coexist with the MLP
        return max(peak + mask + s2 * dt, attn)
    if att.span != "full" and att.window is not None and seq >= att.window:
        attn = base + tokens * 4 * q_dim * dt + batch * seq * seq * dt
        attn += batch * att.num_heads * seq * FP32  # log-sum-exp
        peak = max(peak, attn)
    return peak


def encoder_head_bytes(spec: ModelSpec, tokens: int, dtype: str) -> int:
    """An encoder's MLM head at inference (BERT `BertForMaskedLM`, fill-mask): the encoder output
    and the head transform's output (2 h per token) while the decoder writes the logits of every
    position (V per token) in the run's dtype (no fp32 upcast without labels)."""
    dt = _act_dt(dtype)
    return tokens * (2 * spec.hidden_size + spec.vocab_size) * dt
