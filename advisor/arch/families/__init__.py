"""One small module per model family: each maps a Hugging Face config.json (defaults as in that
family's transformers configuration class) to a `ModelSpec` with its layer list
(`advisor.arch.layers`). `build` dispatches on `model_type`; multimodal configs (`WRAPPERS`) are read
through their `text_config`, and the vision tower is not counted (`vision_not_counted`)."""

from __future__ import annotations

from dataclasses import replace

from ...core.errors import AdvisorError
from . import (
    deepseek_v3,
    falcon,
    gemma3,
    glm4_moe,
    gpt_oss,
    granitemoe,
    llama4,
    olmo2,
    qwen3,
    qwen3_moe,
)

MODULES = (
    qwen3,
    qwen3_moe,
    deepseek_v3,
    gpt_oss,
    gemma3,
    llama4,
    glm4_moe,
    olmo2,
    granitemoe,
    falcon,
)
BUILDERS = {t: m for m in MODULES for t in m.MODEL_TYPES}

# Multimodal model types whose text model sits under `text_config` (its own model_type when the
# config omits it: the transformers class default).
WRAPPERS = {"gemma3": "gemma3_text", "mistral3": "mistral", "llama4": "llama4_text"}

# Model types transformers has no class of its own for, and the class that builds the same
# layers (for the tests that compare with transformers' models on the meta device).
TRANSFORMERS_TYPES = {"kimi_k2": "deepseek_v3"}

# What each model type's layers are, for suggestions: a misspelt type is only ever matched to a
# type of the same kind (a Qwen3-MoE config is not a Qwen2 one).
KINDS = {
    "llama": "dense",
    "mistral": "dense",
    "qwen2": "dense",
    "gemma": "dense",
    "phi3": "dense",
    "olmo2": "dense-qknorm",
    "qwen3": "dense-qknorm",
    "gemma2": "dense-alternating",
    "gemma3_text": "dense-5local-1global",
    "gemma3": "multimodal",
    "mistral3": "multimodal",
    "llama4": "multimodal",
    "mixtral": "moe",
    "granitemoe": "moe",
    "qwen3_moe": "moe-qknorm",
    "deepseek_v3": "moe-mla",
    "kimi_k2": "moe-mla",
    "glm4_moe": "moe-shared",
    "gpt_oss": "moe-sinks",
    "llama4_text": "moe-chunked",
    "gpt2": "gpt2",
    "falcon": "dense-fused-parallel",
    "bert": "encoder",
}


def build(cfg: dict, name: str, display_name: str):
    """The `ModelSpec` fields of a config whose model_type a family module here reads."""
    return BUILDERS[cfg["model_type"]].build(cfg, name, display_name)


def unwrap(cfg: dict, from_hf_config, name: str, display_name: str):
    """A multimodal config read through its `text_config`; errors name `config.text_config.X`."""
    inner = cfg.get("text_config")
    if not isinstance(inner, dict):
        raise AdvisorError(
            "config.missing",
            "config.json: missing field 'text_config'",
            field="config.text_config",
        )
    inner = dict(inner)
    inner.setdefault("model_type", WRAPPERS[cfg["model_type"]])
    if inner["model_type"] in WRAPPERS:
        raise AdvisorError(
            "config.bad_text_config",
            "config.text_config.model_type: a text model, not another multimodal one",
            field="config.text_config.model_type",
        )
    if "tie_word_embeddings" not in inner and isinstance(cfg.get("tie_word_embeddings"), bool):
        inner["tie_word_embeddings"] = cfg["tie_word_embeddings"]
    try:
        spec = from_hf_config(inner, name=name, display_name=display_name)
    except AdvisorError as exc:
        if exc.field and exc.field.startswith("config."):
            field = "config.text_config." + exc.field[len("config.") :]
            exc.field = field
            exc.params["field"] = field
            exc.message = exc.message.replace("config.", "config.text_config.", 1)
            exc.args = (exc.message,)
        raise
    return replace(spec, vision_not_counted=True, hf_config=dict(cfg))
