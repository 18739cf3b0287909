"""Model architectures: a frozen `ModelSpec` built from a Hugging Face `config.json`, and exact
parameter counts.

Families: Llama 1-3.x, Mistral, Mixtral (MoE), Qwen2/2.5, Gemma, Gemma 2, Phi-3, GPT-2, BERT.
Counts follow the module structure of the Hugging Face transformers implementations
(`modeling_llama.py`, `modeling_mistral.py`, `modeling_mixtral.py`, `modeling_qwen2.py`,
`modeling_gemma.py`, `modeling_gemma2.py`, `modeling_phi3.py`, `modeling_gpt2.py`,
`modeling_bert.py`); tests/test_models_torch.py builds each real PyTorch model from the same
config and requires the counts to be equal.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field, replace

from ..core.errors import AdvisorError, check_int
from ..core.frozen import cached_hash, state_without_hash
from . import layers as L

FAMILIES = ("llama", "mistral", "mixtral", "qwen2", "gemma", "gemma2", "phi3", "gpt2", "bert")

# Hugging Face `model_type` -> family. Qwen2.5 and Llama 2/3 reuse their predecessor's type.
MODEL_TYPES = {
    "llama": "llama",
    "mistral": "mistral",
    "mixtral": "mixtral",
    "qwen2": "qwen2",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "phi3": "phi3",
    "gpt2": "gpt2",
    "bert": "bert",
}

# Defaults of the transformers configuration classes for fields a config.json may omit
# (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, GemmaConfig, Gemma2Config, Phi3Config in
# transformers 5.x `configuration_*.py`). num_key_value_heads falls back to num_attention_heads
# where the class default is None.
_FAMILY_DEFAULTS: dict[str, dict] = {
    "llama": {"max_position_embeddings": 2048},
    "mistral": {
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
        "sliding_window": 4096,
    },
    "mixtral": {"num_key_value_heads": 8, "max_position_embeddings": 131072},
    "qwen2": {"num_key_value_heads": 32, "max_position_embeddings": 32768},
    "gemma": {"num_key_value_heads": 16, "head_dim": 256, "max_position_embeddings": 8192},
    "gemma2": {
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 8192,
        "sliding_window": 4096,
    },
    "phi3": {"max_position_embeddings": 4096},
    "bert": {"max_position_embeddings": 512},
}

# Largest sizes accepted from a config: well above any published model, low enough to catch typos.
_MAX = {
    "vocab_size": 2_000_000,
    "hidden_size": 131_072,
    "num_layers": 1_024,
    "num_heads": 1_024,
    "intermediate_size": 1_048_576,
    "max_position_embeddings": 16_777_216,
    "num_experts": 1_024,
}


@dataclass(frozen=True)
class ModelSpec:
    """One transformer architecture, in the terms the memory and compute models need.

    Sizes are counts (not bytes). `q_dim = num_heads * head_dim`, `kv_dim = num_kv_heads *
    head_dim`; GQA when num_kv_heads < num_heads, MQA when it is 1.
    """

    __hash__ = cached_hash  # computed once (advisor.core.frozen): specs key the lru_caches
    __getstate__ = state_without_hash

    name: str
    family: str
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    max_position_embeddings: int
    tie_word_embeddings: bool
    gated_mlp: bool  # SwiGLU / GeGLU: gate, up, down projections; else fc1, fc2
    norm: str  # "rmsnorm" (weight only) | "layernorm" (weight and bias)
    norms_per_layer: int = 2
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    learned_positions: bool = False  # GPT-2 / BERT position embedding tables
    type_vocab_size: int = 0  # BERT token-type embeddings
    embedding_norm: bool = False  # BERT LayerNorm after the embeddings
    causal: bool = True  # False for encoders (BERT): no KV cache, bidirectional attention
    lm_head: str = "causal"  # "causal" (Linear h->V) | "masked" (BERT MLM head: dense, LN, decoder)
    num_experts: int = 0  # MoE experts per layer (0: dense MLP)
    experts_per_token: int = 0  # top-k routing
    sliding_window: int | None = None  # tokens; None: full attention
    sliding_window_pattern: int = 1  # every n-th layer is global (Gemma 2: 2); 1: all layers slide
    final_logit_softcap: float | None = None
    hidden_act: str = "silu"
    display_name: str = ""
    first_sliding_layer: int = 0  # Qwen2 `max_window_layers`: layers below this use full attention
    # The layer list (advisor.arch.layers): set by the families whose layers differ (advisor/arch/families);
    # empty means `num_layers` identical layers built from the fields above (`stack`).
    layers: tuple = ()
    mtp_layers: int = 0  # multi-token-prediction modules (DeepSeek-V3, GLM-4.5): counted apart
    vision_not_counted: bool = False  # a multimodal config: only its text_config is described
    # How the layers' tensors are laid out where that changes what autograd keeps (read by
    # the memory wing; set here and in advisor.arch.families, so no other module asks the family):
    # "separate" q/k/v projections, "fused" one qkv_proj sliced (Phi-3), "conv1d" one Conv1D
    # c_attn whose whole output is kept and split into heads (GPT-2)
    qkv_layout: str = "separate"
    # the fused q/k/v module's name, as peft targets it: Phi-3 `qkv_proj`, Falcon `query_key_value`
    qkv_module: str = "qkv_proj"
    fused_gate_up: bool = False  # one gate_up_proj sliced in two (Phi-3)
    norm_plus_one: bool = False  # Gemma's RMSNorm: fp32 compute, x * (1 + weight), cast after
    attn_logit_softcap: float | None = None  # Gemma 2: tanh soft-capping of the attention logits
    heads_merged_by_copy: bool = False  # GPT-2 `_merge_heads`, BERT: the heads' merge is a copy
    resid_dropout: float = 0.0  # dropout on the residual branches (GPT-2 resid_pdrop, BERT hidden)
    attn_dropout: float = 0.0  # dropout on the attention probabilities
    hf_config: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    # -- derived sizes ---------------------------------------------------------------------------
    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def attention_kind(self) -> str:
        """'MLA', 'MHA', 'GQA' or 'MQA'."""
        if self.layers:
            return self.attention_label
        if self.num_kv_heads == self.num_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else "GQA"

    @property
    def stack(self) -> tuple:
        """The decoder layers as `advisor.arch.layers.Layer`s: `layers` where a family sets them, else
        `num_layers` identical layers built from the uniform fields (`uniform_stack`)."""
        return self.layers or uniform_stack(self)

    def is_sliding(self, layer: int) -> bool:
        """Whether decoder layer `layer` (0-based) keeps a window (sliding or chunked): from the
        layer list (`stack`) where a family sets one, else the uniform rule below.

        The one rule every module uses (memory.kv_cache_bytes, arch.flops._layer_spans,
        num_sliding_layers), as transformers builds `config.layer_types`:
        - no window: no layer slides;
        - Gemma 2 (`sliding_window_pattern` p > 1): layer i slides when (i + 1) % p != 0
          (`Gemma2Config.layer_types`, every p-th layer global);
        - Qwen2 with `use_sliding_window`: layer i slides when i >= `max_window_layers`
          (`first_sliding_layer` here; huggingface/transformers
          src/transformers/models/qwen2/configuration_qwen2.py, `Qwen2Config.__post_init__`:
          `"sliding_attention" if self.sliding_window is not None and i >= self.max_window_layers`);
        - Mistral v0.1 / Phi-3 (`first_sliding_layer` 0, pattern 1): every layer.
        """
        if self.layers:
            return self.layers[layer].attention.span != "full"
        if self.sliding_window is None:
            return False
        if self.sliding_window_pattern > 1 and (layer + 1) % self.sliding_window_pattern == 0:
            return False
        return layer >= self.first_sliding_layer

    def layer_spans(self, seq: int) -> tuple[int, ...]:
        """Tokens each layer keeps (KV cache) or attends over (widest query) for a `seq`-token
        sequence: `min(seq, window)` on sliding and chunked layers (`layers.span`), else `seq`."""
        return tuple(L.span(layer.attention, seq) for layer in self.stack)

    def kv_elems(self, seq: int) -> int:
        """KV-cache elements of one `seq`-token sequence, all layers: per layer its elements per
        token (`layers.kv_elems_per_token`: 2 * kv_dim, or MLA's latent) times its span."""
        return sum(
            L.kv_elems_per_token(layer.attention) * L.span(layer.attention, seq)
            for layer in self.stack
        )

    @property
    def kv_elems_per_token(self) -> int:
        """KV-cache elements per token with no window applied (every layer)."""
        return _kv_elems_per_token(self)

    @property
    def attention_label(self) -> str:
        """'MLA', 'MHA', 'GQA' or 'MQA' (of the first layer; a stack mixes no kinds)."""
        return self.stack[0].attention.label

    @property
    def num_sliding_layers(self) -> int:
        """Layers that attend over `sliding_window` tokens only (0 when there is no window)."""
        return sum(self.is_sliding(i) for i in range(self.num_layers))

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("hf_config")
        d.pop("layers")
        return d

    def with_name(self, name: str) -> ModelSpec:
        return replace(self, name=name)


@functools.lru_cache(maxsize=1024)
def uniform_stack(spec: ModelSpec) -> tuple:
    """`num_layers` layers from the uniform fields (the families whose layers are all alike:
    Llama, Mistral, Mixtral, Qwen2, Gemma, Gemma 2, Phi-3, GPT-2, BERT); a sliding layer per
    `ModelSpec.is_sliding`."""
    out = []
    for i in range(spec.num_layers):
        sliding = spec.is_sliding(i)
        attn = L.Attention(
            kind="gqa",
            num_heads=spec.num_heads,
            num_kv_heads=spec.num_kv_heads,
            head_dim=spec.head_dim,
            span="sliding" if sliding else "full",
            window=spec.sliding_window if sliding else None,
            qkv_bias=spec.qkv_bias,
            o_bias=spec.o_bias,
        )
        mlp = L.Mlp(
            width=spec.intermediate_size,
            gated=spec.gated_mlp,
            bias=spec.mlp_bias,
            experts=spec.num_experts,
            experts_per_token=spec.experts_per_token,
        )
        out.append(L.Layer(attn, mlp, spec.norms_per_layer))
    return tuple(out)


def norm_tensors(spec: ModelSpec) -> tuple:
    """One hidden-size norm's shapes: RMSNorm (h,), LayerNorm (h,) and (h,)."""
    h = spec.hidden_size
    return ((h,),) if spec.norm == "rmsnorm" else ((h,), (h,))


# ---------------------------------------------------------------------------------------------
# Parameter counts (exact, per transformers module structure)
# ---------------------------------------------------------------------------------------------


def _norm_params(spec: ModelSpec) -> int:
    """RMSNorm has a weight (h); LayerNorm a weight and a bias (2h)."""
    return spec.hidden_size * (1 if spec.norm == "rmsnorm" else 2)


def attention_params(spec: ModelSpec) -> int:
    """q, k, v, o projections of one layer: h*q + 2*h*kv + q*h weights, plus biases."""
    h = spec.hidden_size
    n = h * spec.q_dim + 2 * h * spec.kv_dim + spec.q_dim * h
    if spec.qkv_bias:
        n += spec.q_dim + 2 * spec.kv_dim
    if spec.o_bias:
        n += h
    return n


def expert_mlp_params(spec: ModelSpec) -> int:
    """One MLP (one expert for MoE): 3*h*i when gated (gate, up, down), else 2*h*i; plus biases."""
    h, i = spec.hidden_size, spec.intermediate_size
    if spec.gated_mlp:
        n = 3 * h * i
        if spec.mlp_bias:
            n += 2 * i + h
    else:
        n = 2 * h * i
        if spec.mlp_bias:
            n += i + h
    return n


def router_params(spec: ModelSpec) -> int:
    """MoE router: Linear(h, num_experts, bias=False) (Mixtral's `gate`)."""
    return spec.hidden_size * spec.num_experts if spec.is_moe else 0


def layer_params(spec: ModelSpec) -> int:
    """One transformer block: attention, MLP (all experts) and its norms."""
    mlp = expert_mlp_params(spec) * (spec.num_experts if spec.is_moe else 1)
    return (
        attention_params(spec)
        + mlp
        + router_params(spec)
        + spec.norms_per_layer * _norm_params(spec)
    )


def embedding_params(spec: ModelSpec) -> int:
    """Token (V*h), learned position (P*h) and token-type (T*h) tables, and BERT's embedding LN."""
    h = spec.hidden_size
    n = spec.vocab_size * h
    if spec.learned_positions:
        n += spec.max_position_embeddings * h
    n += spec.type_vocab_size * h
    if spec.embedding_norm:
        n += _norm_params(spec)
    return n


def head_params(spec: ModelSpec) -> int:
    """Final norm and output head.

    Causal LMs: final norm (BERT has none) and an untied Linear(h, V) without bias. BERT's MLM
    head (`BertOnlyMLMHead`): dense h*h + h, LayerNorm 2h, decoder tied to the embeddings plus a
    V-sized bias (untied: its own V*h weight and V bias as well).
    """
    h, v = spec.hidden_size, spec.vocab_size
    if spec.lm_head == "masked":
        n = h * h + h + _norm_params(spec) + v
        if not spec.tie_word_embeddings:
            # transformers 5 `BertLMPredictionHead`: `decoder = Linear(h, V, bias=True)` beside the
            # `bias` parameter; both are tied (`_tied_weights_keys`) only when embeddings are tied.
            n += v * h + v
        return n
    n = _norm_params(spec)
    if not spec.tie_word_embeddings:
        n += v * h
    return n


@functools.lru_cache(maxsize=1024)
def stack_params(spec: ModelSpec) -> int:
    """Parameters of all decoder layers (every expert), summed over the layer list."""
    h, norms = spec.hidden_size, norm_tensors(spec)
    return sum(L.layer_params(layer, h, norms) for layer in spec.stack)


@functools.lru_cache(maxsize=1024)
def param_count(spec: ModelSpec) -> int:
    """Total parameters of the model (all experts), as `sum(p.numel() for p in model.parameters())`.

    MTP modules (`mtp_layers`) are not included: transformers does not build them either
    (`mtp_param_count` counts them apart)."""
    return embedding_params(spec) + stack_params(spec) + head_params(spec)


@functools.lru_cache(maxsize=1024)
def active_param_count(spec: ModelSpec) -> int:
    """Parameters used per token: routed experts at k/E of their size, everything else (shared
    experts, router, attention, embeddings, head) in full (Mixtral 8x7B: 46.7B total, 12.9B
    active; Jiang et al. 2024, arXiv:2401.04088; DeepSeek-V3 671B / 37B, arXiv:2412.19437)."""
    h = spec.hidden_size
    return param_count(spec) - sum(L.idle_expert_params(layer, h) for layer in spec.stack)


def expert_param_count(spec: ModelSpec) -> int:
    """Parameters of all routed experts (0 for a dense model)."""
    h = spec.hidden_size
    return sum(
        L.expert_params(layer.mlp, h) * layer.mlp.experts
        for layer in spec.stack
        if layer.mlp.is_moe
    )


def layer_param_list(spec: ModelSpec) -> tuple[int, ...]:
    """Parameters of each decoder layer, in order (FSDP gathers one block at a time)."""
    h, norms = spec.hidden_size, norm_tensors(spec)
    return tuple(L.layer_params(layer, h, norms) for layer in spec.stack)


def describe(spec: ModelSpec) -> dict:
    """What a reader needs to size the model, from its layer list (plain JSON): total and active
    parameters (routed experts at k/E of their size, all else in full), routed-expert weights,
    dense and MoE layer counts, the layers that keep a window (sliding or chunked) and its size,
    KV elements per token, MTP parameters counted apart, and whether a vision tower was left out.
    """
    stack = spec.stack
    moe = [lay for lay in stack if lay.mlp.is_moe]
    windowed = [lay for lay in stack if lay.attention.span != "full"]
    first_moe = moe[0].mlp if moe else None
    return {
        "params": param_count(spec),
        "active_params": active_param_count(spec),
        "expert_params": expert_param_count(spec),
        "mtp_params": mtp_param_count(spec),
        "attention": spec.attention_kind,
        "layers": len(stack),
        "dense_layers": len(stack) - len(moe),
        "moe_layers": len(moe),
        "experts": first_moe.experts if first_moe else 0,
        "experts_per_token": first_moe.experts_per_token if first_moe else 0,
        "shared_expert_width": first_moe.shared_width if first_moe else 0,
        "windowed_layers": len(windowed),
        "window_kind": windowed[0].attention.span if windowed else None,
        "window_tokens": max(lay.attention.window for lay in windowed) if windowed else None,
        "kv_elems_per_token": spec.kv_elems_per_token if spec.causal else 0,
        "sinks": any(lay.attention.sinks for lay in stack),
        "vision_not_counted": spec.vision_not_counted,
    }


def mtp_param_count(spec: ModelSpec) -> int:
    """Parameters of the multi-token-prediction modules, counted apart from `param_count`: each
    is enorm and hnorm (2h), eh_proj Linear(2h, h), one decoder layer like the last and the
    shared head's norm (h); embeddings and output head are shared with the main model
    (DeepSeek-V3 arXiv:2412.19437 section 2.2; deepseek-ai/DeepSeek-V3 inference/model.py).
    DeepSeek-V3's 671B excludes its 14B MTP module, as here."""
    if not spec.mtp_layers:
        return 0
    h = spec.hidden_size
    norm = sum(L._numel(s) for s in norm_tensors(spec))
    last = L.layer_params(spec.stack[-1], h, norm_tensors(spec))
    return spec.mtp_layers * (3 * norm + 2 * h * h + last)


def embedding_lookup_params(spec: ModelSpec) -> int:
    """Parameters of the embedding tables: looked up, not multiplied (excluded from 6ND FLOPs)."""
    return embedding_params(spec)


# ---------------------------------------------------------------------------------------------
# From a Hugging Face config.json
# ---------------------------------------------------------------------------------------------


def _get(cfg: dict, field_name: str, *keys, default=None, required=True):
    for k in keys:
        if k in cfg and cfg[k] is not None:
            return cfg[k]
    if required and default is None:
        raise AdvisorError(
            "config.missing",
            f"config.json: missing field {keys[0]!r}",
            field=f"config.{keys[0]}",
        )
    return default


def _size(
    cfg: dict, name: str, *keys, maximum_key: str | None = None, default=None, minimum: int = 1
) -> int:
    value = _get(cfg, name, *keys, default=default)
    return check_int(
        f"config.{keys[0]}", value, minimum=minimum, maximum=_MAX.get(maximum_key or name)
    )


def from_hf_config(cfg: dict, name: str = "custom", display_name: str = "") -> ModelSpec:
    """Build a `ModelSpec` from a Hugging Face `config.json` mapping.

    Field names and defaults are those of the transformers configuration classes (e.g.
    `LlamaConfig`: `head_dim` defaults to hidden_size // num_attention_heads and
    `num_key_value_heads` to num_attention_heads); fields a config omits take the class defaults
    in `_FAMILY_DEFAULTS` (e.g. MistralConfig: 8 KV heads, a 4096-token window). `rope_scaling`
    and other fields that do not change sizes are ignored. Raises `AdvisorError` naming the field.
    """
    if not isinstance(cfg, dict):
        raise AdvisorError(
            "config.not_object", "config.json: expected a JSON object", field="config"
        )
    mtype = cfg.get("model_type")
    if mtype is None:
        raise AdvisorError(
            "config.missing", "config.json: missing field 'model_type'", field="config.model_type"
        )
    _check_value_types(cfg)
    from . import families

    if mtype in families.WRAPPERS:
        return families.unwrap(cfg, from_hf_config, name, display_name)
    if mtype in families.BUILDERS:
        return ModelSpec(**families.build(cfg, name, display_name))
    if mtype not in MODEL_TYPES:
        raise unknown_model_type(str(mtype))
    family = MODEL_TYPES[mtype]

    if family == "gpt2":
        h = _size(cfg, "hidden_size", "n_embd", "hidden_size")
        heads = _size(cfg, "num_heads", "n_head", "num_attention_heads")
        inner = cfg.get("n_inner") or 4 * h
        spec = ModelSpec(
            name=name,
            family=family,
            vocab_size=_size(cfg, "vocab_size", "vocab_size"),
            hidden_size=h,
            num_layers=_size(cfg, "num_layers", "n_layer", "num_hidden_layers"),
            num_heads=heads,
            num_kv_heads=heads,
            head_dim=h // heads,
            intermediate_size=check_int("config.n_inner", inner, maximum=_MAX["intermediate_size"]),
            max_position_embeddings=_size(
                cfg,
                "max_position_embeddings",
                "n_positions",
                "max_position_embeddings",
                default=1024,
            ),
            tie_word_embeddings=_flag(cfg, "tie_word_embeddings", True),
            gated_mlp=False,
            norm="layernorm",
            qkv_bias=True,
            o_bias=True,
            mlp_bias=True,
            learned_positions=True,
            hidden_act=cfg.get("activation_function", "gelu_new"),
            qkv_layout="conv1d",
            heads_merged_by_copy=True,
            resid_dropout=float(cfg.get("resid_pdrop", 0.1)),
            attn_dropout=float(cfg.get("attn_pdrop", 0.1)),
            display_name=display_name,
            hf_config=dict(cfg),
        )
        return _checked(spec)

    h = _size(cfg, "hidden_size", "hidden_size")
    heads = _size(cfg, "num_heads", "num_attention_heads")
    defaults = _FAMILY_DEFAULTS.get(family, {})
    kv_heads = _size(
        cfg, "num_heads", "num_key_value_heads", default=defaults.get("num_key_value_heads", heads)
    )
    head_dim = cfg.get("head_dim")
    if head_dim is None:
        head_dim = defaults.get("head_dim")
    if head_dim is None:
        if h % heads:
            raise AdvisorError(
                "config.heads",
                f"config.num_attention_heads: {heads} does not divide hidden_size {h} "
                "(and no head_dim is given)",
                field="config.num_attention_heads",
                heads=heads,
                hidden_size=h,
            )
        head_dim = h // heads
    head_dim = check_int("config.head_dim", head_dim, maximum=4096)
    common = dict(
        name=name,
        family=family,
        vocab_size=_size(cfg, "vocab_size", "vocab_size"),
        hidden_size=h,
        num_layers=_size(cfg, "num_layers", "num_hidden_layers"),
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=_size(cfg, "intermediate_size", "intermediate_size"),
        max_position_embeddings=_size(
            cfg,
            "max_position_embeddings",
            "max_position_embeddings",
            default=defaults.get("max_position_embeddings", 2048),
        ),
        display_name=display_name,
        hf_config=dict(cfg),
    )

    if family == "bert":
        spec = ModelSpec(
            **common,
            tie_word_embeddings=_flag(cfg, "tie_word_embeddings", True),
            gated_mlp=False,
            norm="layernorm",
            qkv_bias=True,
            o_bias=True,
            mlp_bias=True,
            learned_positions=True,
            type_vocab_size=check_int(
                "config.type_vocab_size", cfg.get("type_vocab_size", 2), minimum=0, maximum=1024
            ),
            embedding_norm=True,
            causal=False,
            lm_head="masked",
            hidden_act=cfg.get("hidden_act", "gelu"),
            heads_merged_by_copy=True,
            resid_dropout=float(cfg.get("hidden_dropout_prob", 0.1)),
            attn_dropout=float(cfg.get("attention_probs_dropout_prob", 0.1)),
        )
        return _checked(spec)

    tie_default = family in ("gemma", "gemma2")
    tie = _flag(cfg, "tie_word_embeddings", tie_default)
    act = cfg.get("hidden_act") or cfg.get("hidden_activation") or "silu"
    if family == "gemma2":
        act = cfg.get("hidden_activation") or cfg.get("hidden_act") or "gelu_pytorch_tanh"
    window = cfg.get("sliding_window", defaults.get("sliding_window"))
    first_sliding = 0
    if family == "qwen2":
        if not _flag(cfg, "use_sliding_window", False):
            window = None  # Qwen2 configs carry a window but use it only when this flag is set
        else:  # Qwen2Config.layer_types: layers i >= max_window_layers slide
            first_sliding = check_int(
                "config.max_window_layers", cfg.get("max_window_layers", 28), minimum=0
            )
    if family in ("llama", "gemma"):
        window = None
    if window is not None:
        window = check_int("config.sliding_window", window, maximum=_MAX["max_position_embeddings"])
    extra: dict = {}
    if family == "llama":
        extra = dict(
            qkv_bias=_flag(cfg, "attention_bias", False),
            o_bias=_flag(cfg, "attention_bias", False),
        )
        extra["mlp_bias"] = _flag(cfg, "mlp_bias", False)
    elif family == "qwen2":
        extra = dict(qkv_bias=True)
    elif family in ("gemma", "gemma2"):
        extra = dict(
            qkv_bias=_flag(cfg, "attention_bias", False),
            o_bias=_flag(cfg, "attention_bias", False),
        )
    if first_sliding:
        extra["first_sliding_layer"] = first_sliding
    if family in ("gemma", "gemma2"):
        extra["norm_plus_one"] = True
    if family == "phi3":
        extra["qkv_layout"] = "fused"
        extra["fused_gate_up"] = True
    if family == "gemma2":
        # Gemma2Config.attn_logit_softcapping: 50.0 when the config omits it, off when null
        extra["attn_logit_softcap"] = cfg.get("attn_logit_softcapping", 50.0)
        extra["norms_per_layer"] = 4
        extra["sliding_window_pattern"] = 2
        extra["final_logit_softcap"] = cfg.get("final_logit_softcapping")
    if family == "mixtral":
        extra["num_experts"] = check_int(
            "config.num_local_experts", cfg.get("num_local_experts", 8), maximum=_MAX["num_experts"]
        )
        extra["experts_per_token"] = check_int(
            "config.num_experts_per_tok",
            cfg.get("num_experts_per_tok", 2),
            maximum=extra["num_experts"],
        )
    spec = ModelSpec(
        **common,
        tie_word_embeddings=tie,
        gated_mlp=True,
        norm="rmsnorm",
        sliding_window=window,
        hidden_act=act,
        **extra,
    )
    return _checked(spec)


# Fields read as text, or as numbers in a range, checked before anything is built (a list
# where a string belongs would otherwise surface as "unhashable" from a cache).
_TEXT_FIELDS = (
    "model_type",
    "hidden_act",
    "hidden_activation",
    "activation_function",
    "activation",
)
_DROPOUT_FIELDS = (
    "resid_pdrop",
    "attn_pdrop",
    "embd_pdrop",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
)


def _check_value_types(cfg: dict) -> None:
    from ..core.errors import _number, shown

    for key in _TEXT_FIELDS:
        v = cfg.get(key)
        if key in cfg and key != "model_type" and v is None:
            continue
        if key in cfg and (not isinstance(v, str) or not v or len(v) > 100):
            raise AdvisorError(
                "field.not_text",
                f"config.{key}: expected a name such as 'silu', got {shown(v)}",
                field=f"config.{key}",
                value=shown(v),
            )
    for key in _DROPOUT_FIELDS:
        if key not in cfg:
            continue
        v = cfg[key]
        if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
            raise AdvisorError(
                "field.not_number",
                f"config.{key}: expected a dropout probability 0-1, got "
                + ("null" if v is None else shown(v)),
                field=f"config.{key}",
                value=shown(v),
            )
        _number(f"config.{key}", v)
        if not 0 <= v <= 1:
            raise AdvisorError(
                "field.too_large",
                f"config.{key}: a dropout probability is 0-1, got {shown(v)}",
                field=f"config.{key}",
                value=v,
                maximum=1,
            )
    for key in ("final_logit_softcapping", "attn_logit_softcapping"):
        cap = cfg.get(key)
        if cap is not None:
            _number(f"config.{key}", cap)


def known_model_types() -> tuple[str, ...]:
    """Every `model_type` advisor reads (its own families, advisor.arch.families, multimodal ones)."""
    from . import families

    return tuple(sorted({*MODEL_TYPES, *families.BUILDERS, *families.WRAPPERS}))


def _type_shape(name: str) -> tuple:
    """What a close spelling must keep: its runs of letters and digits, the digits as they are
    ("qwen2_moe": ("a", "2", "a"); "gemma3n": ("a", "3", "a")), so that a suggestion never names a model whose layers differ (Qwen3-MoE is not Qwen2,
    DeepSeek-V2 not V3)."""
    import re

    runs = re.findall(r"[a-z]+|[0-9]+", name.lower())
    return tuple(r if r.isdigit() else "a" for r in runs)


def unknown_model_type(name: str) -> AdvisorError:
    """An unknown `model_type`: the types advisor knows, and a suggestion only where the name is
    a misspelling of one with the same digits and parts ("lama" -> llama, "gpt-oss" -> gpt_oss;
    never "qwen2_moe" -> qwen2)."""
    import difflib
    import re

    from ..core.errors import echo, shown

    known = known_model_types()
    norm = re.sub(r"[-. ]+", "_", name.lower())
    hints = [k for k in known if k == norm]
    if not hints and len(name) <= 100:
        hints = [
            k
            for k in difflib.get_close_matches(norm, known, n=3, cutoff=0.75)
            if _type_shape(k) == _type_shape(norm)
        ]
    tail = f"; did you mean {', '.join(hints)}?" if hints else ""
    return AdvisorError(
        "config.unknown_model_type",
        f"config.model_type: advisor does not read model type {shown(name)} (it reads "
        f"{', '.join(known)}){tail}",
        field="config.model_type",
        name=echo(name),
        known=", ".join(known),
        suggestions=hints,
    )


def _flag(cfg: dict, key: str, default: bool) -> bool:
    """A boolean config field: absent or null gives `default`; anything but true/false is an error."""
    value = cfg.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise AdvisorError(
            "field.not_bool",
            f"config.{key}: expected true or false, got {value!r}",
            field=f"config.{key}",
            value=repr(value),
        )
    return value


def _checked(spec: ModelSpec) -> ModelSpec:
    if spec.num_heads % spec.num_kv_heads:
        raise AdvisorError(
            "config.kv_heads",
            f"config.num_key_value_heads: {spec.num_kv_heads} does not divide num_attention_heads {spec.num_heads}",
            field="config.num_key_value_heads",
        )
    if spec.family == "gpt2" and spec.hidden_size % spec.num_heads:
        raise AdvisorError(
            "config.heads",
            f"config.n_head: {spec.num_heads} does not divide n_embd {spec.hidden_size}",
            field="config.n_head",
        )
    return spec


def from_config_json(text: str, name: str = "custom") -> ModelSpec:
    """Parse pasted `config.json` text; malformed JSON raises `AdvisorError` ('config.json')."""
    from ..core.errors import clip
    from ..core.files import MAX_FILE_BYTES, check_depth, check_json_depth

    if not isinstance(text, str):
        raise AdvisorError("config.not_json", "config.json: expected JSON text", field="config")
    if len(text) > MAX_FILE_BYTES:
        raise AdvisorError(
            "field.too_large",
            f"config: at most {MAX_FILE_BYTES} characters",
            field="config",
            maximum=MAX_FILE_BYTES,
        )
    check_json_depth(text, "config")
    try:
        cfg = json.loads(text)
    except RecursionError:
        raise AdvisorError(
            "file.too_deep", "config.json: nested too deeply", field="config"
        ) from None
    except json.JSONDecodeError as exc:
        # The position as numbers (the site shows them in the page's language; the parser's
        # English sentence stays in `detail` for the English text only).
        raise AdvisorError(
            "config.bad_json",
            f"config.json: not valid JSON ({clip(str(exc), 120)})",
            field="config",
            detail=clip(str(exc), 120),
            line=exc.lineno,
            column=exc.colno,
        ) from None
    except (ValueError, TypeError) as exc:
        raise AdvisorError(
            "config.not_json",
            f"config.json: not valid JSON ({clip(str(exc), 120)})",
            field="config",
            detail=clip(str(exc), 120),
        ) from None
    check_depth(cfg, "config")
    return from_hf_config(cfg, name=name)


def from_config_file(path, name: str | None = None) -> ModelSpec:
    """Read a `config.json` file; the spec is named after the file unless `name` is given.

    A missing or unreadable file raises `AdvisorError` ('config.file')."""
    from pathlib import Path

    from ..core.files import read_text

    p = Path(path)
    return from_config_json(read_text(p, "config"), name=name or p.stem)


def require_causal(spec: ModelSpec, field: str = "model") -> ModelSpec:
    """`spec` if it generates tokens; an encoder (BERT: `causal` False, no KV cache) has no decode
    rate and so no tokens/s or price per token: ``model.not_causal`` says so."""
    if not spec.causal:
        raise AdvisorError(
            "model.not_causal",
            f"{field}: {spec.display_name or spec.name} is an encoder (not causal): it generates "
            "no tokens, so it has no decode rate and no price per token",
            field=field,
            model=spec.name,
        )
    return spec


@functools.lru_cache(maxsize=1024)
def _kv_elems_per_token(spec: ModelSpec) -> int:
    """`ModelSpec.kv_elems_per_token`: a 1,024-layer stack is summed once, not once per
    candidate a recommendation weighs. Keyed by the spec (its hash is computed once,
    `core.frozen`), not by the layer tuple, whose hash Python recomputes on every look-up (1,024
    layer hashes each: 19 million in a profile of 20 maximum-size MoE workloads)."""
    return sum(L.kv_elems_per_token(layer.attention) for layer in spec.stack)


@functools.lru_cache(maxsize=1024)
def layer_counts(spec: ModelSpec) -> tuple:
    """The distinct layers of the layer list with how many times each occurs, in order of first
    appearance (DeepSeek-V3: its dense layer x 3, its MoE layer x 58): per-layer sums walk these
    instead of every layer."""
    out: dict = {}
    for lay in spec.stack:
        out[lay] = out.get(lay, 0) + 1
    return tuple(out.items())


@functools.lru_cache(maxsize=1024)
def kv_elems_through(spec: ModelSpec) -> tuple:
    """(layer, KV elements per token of the layers up to and including its last occurrence) for
    each distinct layer: what a prefill's cache holds when that layer runs for the last time."""
    out: dict = {}
    cum = 0
    for lay in spec.stack:
        cum += L.kv_elems_per_token(lay.attention)
        out[lay] = cum
    return tuple(out.items())


@functools.lru_cache(maxsize=1024)
def window_summary(spec: ModelSpec) -> tuple[bool, bool, int | None]:
    """(some layer keeps a window, every layer does, the smallest window) over the layer list."""
    wins = [lay.attention.window for lay in spec.stack if lay.attention.span != "full"]
    windowed = [w for w in wins if w is not None]
    return bool(wins), len(wins) == spec.num_layers, min(windowed) if windowed else None
