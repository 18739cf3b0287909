"""The language model the training workloads run: a catalog preset's Hugging Face config (with
optional overrides to shrink it), built by transformers with random weights, and one training
step (forward, backward, AdamW step) on random tokens.

FLOPs per step are advisor's model FLOPs (`advisor.arch.flops.training_flops`):
``B*S*(6*N + 12*sum_layers(span*d_attn))`` with N the parameters that multiply (embedding tables
excluded, a tied head counted), after Kaplan et al. 2020 (arXiv:2001.08361) and PaLM appendix B
(Chowdhery et al. 2022, arXiv:2204.02311).
"""

from __future__ import annotations

import copy
import difflib
import re

from advisor.core.errors import AdvisorError

DTYPES = ("fp32", "bf16", "fp16", "amp-bf16", "amp-fp16")

# Config keys that hold the layer count, per transformers config class.
_LAYER_KEYS = ("n_layer", "num_hidden_layers")


def parse_overrides(items: list[str] | None) -> dict:
    """`["n_embd=64", "tie_word_embeddings=false"]` -> {"n_embd": 64, "tie_word_embeddings": False}."""
    out = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise AdvisorError(
                "bench.override", f"--set: expected KEY=VALUE, got {item!r}", field="set"
            )
        raw = raw.strip()
        low = raw.lower()
        if low in ("true", "false"):
            val = low == "true"
        elif low in ("null", "none"):
            val = None
        elif re.fullmatch(r"[-+]?\d+", raw):
            val = int(raw)
        else:
            try:
                val = float(raw)
            except ValueError:
                val = raw
        out[key.strip()] = val
    return out


def model_config(model_id: str, layers: int | None = None, overrides: dict | None = None):
    """(hf_config dict, ModelSpec, preset) for a catalog model, with `layers` and `overrides`
    applied to the config before the spec is derived (so advisor predicts the model we run)."""
    from advisor.arch.models import from_hf_config
    from advisor.data.catalog import load_catalog

    preset = load_catalog().model(model_id)
    cfg = copy.deepcopy(preset.doc["config"])
    if layers is not None:
        key = next((k for k in _LAYER_KEYS if k in cfg), None)
        if key is None:
            raise AdvisorError(
                "bench.layers", f"{model_id}: config has no layer count", field="layers"
            )
        cfg[key] = layers
    cfg.update(overrides or {})
    if cfg.get("model_type") == "bert":
        raise AdvisorError(
            "bench.not_causal",
            f"{model_id}: the training benchmark runs causal language models",
            field="model",
        )
    name = model_id if layers is None and not overrides else f"{model_id}-custom"
    spec = from_hf_config(cfg, name=name, display_name=preset.display_name)
    return cfg, spec, preset


def build_model(cfg: dict, device, dtype: str, seed: int = 0):
    """A transformers causal LM from `cfg` with random weights (no hub access), on `device`."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    rest = {k: v for k, v in cfg.items() if k != "model_type"}
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):  # shrunk vocabularies
        if key not in rest:
            rest[key] = None
    config = AutoConfig.for_model(cfg["model_type"], **rest)
    config._attn_implementation = "sdpa"
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    if dtype in ("bf16", "fp16"):
        model = model.to(torch.bfloat16 if dtype == "bf16" else torch.float16)
    model.to(device)
    model.train()
    return model


def make_optimizer(model, device):
    """AdamW with the multi-tensor (`foreach`) implementation: the CUDA default, and asked for
    explicitly on CPU, where torch would otherwise pick the per-tensor loop (stack notes)."""
    import torch

    return torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)


class TrainStep:
    """One training step on fixed random tokens: forward with labels (the model's shifted
    cross-entropy), backward, optimizer step, gradients set to None."""

    def __init__(self, model, batch: int, seq: int, vocab: int, device, dtype: str, seed: int = 0):
        import torch

        self.torch = torch
        self.model = model
        self.device = device
        self.dtype = dtype
        self.opt = make_optimizer(model, device)
        g = torch.Generator().manual_seed(seed)
        self.tokens = torch.randint(0, vocab, (batch, seq), generator=g).to(device)
        dev_type = torch.device(device).type
        self.autocast = None
        if dtype.startswith("amp-"):
            self.autocast = (dev_type, torch.bfloat16 if dtype == "amp-bf16" else torch.float16)
        self.scaler = None
        if dtype == "amp-fp16":
            self.scaler = torch.amp.GradScaler(dev_type)

    def __call__(self):
        torch = self.torch
        if self.autocast:
            with torch.autocast(device_type=self.autocast[0], dtype=self.autocast[1]):
                loss = self.model(input_ids=self.tokens, labels=self.tokens).loss
        else:
            loss = self.model(input_ids=self.tokens, labels=self.tokens).loss
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        return loss.detach()


def flops_per_step(spec, batch: int, seq: int) -> tuple[float, str]:
    """advisor's model FLOPs of one step and the formula string."""
    from advisor.arch.flops import training_flops

    tf = training_flops(spec, tokens=batch * seq, seq=seq)
    formula = (
        "B*S*(6*N + 12*L*S*d_attn) with N = matmul parameters (embeddings excluded, tied head "
        f"counted) = {tf.matmul_params}, L = {spec.num_layers}, d_attn = {spec.q_dim} "
        "(advisor.arch.flops.training_flops; Kaplan 2020, PaLM app. B)"
    )
    return tf.model_flops, formula


def detect_gpu(device_name: str, memory_bytes: int | None, catalog=None):
    """The catalog GPU matching a CUDA device name (e.g. 'NVIDIA H100 80GB HBM3'), or None.

    Candidates share the model token (h100, a100, l40s, ...) with the device name; among them
    the one whose memory is nearest `memory_bytes` wins, then the closest name (difflib)."""
    if catalog is None:
        from advisor.data.catalog import load_catalog

        catalog = load_catalog()
    gpus = list(getattr(catalog, "gpus", ()) or ())
    name = device_name.lower()
    tokens = set(re.findall(r"[a-z]*\d+[a-z]*", name))

    def shares_token(g):
        gtoks = set(re.findall(r"[a-z]*\d+[a-z]*", f"{g.name} {g.id}".lower()))
        return bool({t for t in gtoks if not t.endswith(("gb", "w"))} & tokens)

    cands = [g for g in gpus if shares_token(g)]
    if not cands:
        return None

    def key(g):
        mem = abs(getattr(g, "memory_bytes", 0) - memory_bytes) if memory_bytes else 0
        return (mem, -difflib.SequenceMatcher(None, g.name.lower(), name).ratio())

    return min(cands, key=key)


def predicted_training_memory(spec, batch: int, seq: int, dtype: str) -> dict:
    """advisor.memory.estimate.training_memory for this step (AdamW, SDPA, no checkpointing), or a reason."""
    try:
        from advisor.memory import estimate as memory
    except ImportError as exc:
        return {"available": False, "reason": f"advisor.memory.estimate not importable: {exc}"}
    try:
        setup = memory.TrainingSetup(
            model=spec, batch=batch, seq=seq, precision=dtype, optimizer="adamw", attention="sdpa"
        )
        est = memory.training_memory(setup)
    except Exception as exc:  # noqa: BLE001 - the prediction is reported, never fatal
        return {"available": False, "reason": f"{type(exc).__name__}: {exc}"}
    return {"available": True, "source": "advisor.memory.estimate.training_memory", **est.to_dict()}
