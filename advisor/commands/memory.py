"""`python -m advisor memory`: accelerator memory of a training step or an inference prefill."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .. import memory
from ..errors import AdvisorError
from ..units import fmt_bytes

DEFAULTS_NOTE = (
    "Defaults are what a plain PyTorch + Hugging Face transformers run does: fp32 weights, AdamW "
    "(foreach, states in the parameter dtype), no activation checkpointing, SDPA attention, one "
    "GPU; inference: bf16 weights and bf16 KV cache."
)


def register(sub) -> None:
    p = sub.add_parser(
        "memory",
        help="memory needed per GPU for training or inference",
        description="Accelerator memory per GPU, by component. " + DEFAULTS_NOTE,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--config", help="a Hugging Face config.json file")
    src.add_argument("--model", help="a catalog model preset id")
    p.add_argument("--task", choices=("train", "infer"), required=True)
    p.add_argument("--batch", type=int, required=True, help="sequences per step (per GPU)")
    p.add_argument("--seq", type=int, required=True, help="tokens per sequence (context)")
    p.add_argument("--precision", default="fp32", help="training: " + "|".join(memory.PRECISIONS))
    p.add_argument("--optimizer", default="adamw", help="|".join(memory.OPTIMIZERS))
    p.add_argument("--checkpointing", default="none", help="|".join(memory.CHECKPOINTING))
    p.add_argument("--attention", default="sdpa", help="|".join(memory.ATTENTION))
    p.add_argument("--lora-rank", type=int, default=0, help="LoRA rank (0: full fine-tuning)")
    p.add_argument("--lora-targets", default="q_proj,v_proj", help="comma-separated modules")
    p.add_argument("--quant", default=None, help="training base weights (QLoRA): nf4|int8|int4|fp8")
    p.add_argument("--gpus", type=int, default=1)
    p.add_argument("--sharding", default="ddp", help="|".join(memory.SHARDING))
    p.add_argument("--tensor-parallel", type=int, default=1)
    p.add_argument("--optimizer-offload", action="store_true", help="optimizer states on CPU")
    p.add_argument(
        "--weights", default="bf16", help="inference: " + "|".join(memory.WEIGHT_FORMATS)
    )
    p.add_argument("--kv-dtype", default="bf16", help="inference: " + "|".join(memory.KV_DTYPES))
    p.add_argument("--json", action="store_true", help="print the estimate as JSON")
    p.set_defaults(func=run)


def _spec(args):
    if args.config:
        from ..models import from_config_json

        path = Path(args.config)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise AdvisorError(
                "file.unreadable", f"--config: cannot read {path}: {exc.strerror}", field="config"
            ) from None
        return from_config_json(text, name=path.stem)
    from ..catalog import load_catalog

    return load_catalog(args.catalog).model(args.model).spec


def run(args) -> int:
    spec = _spec(args)
    if args.task == "train":
        targets = tuple(t.strip() for t in args.lora_targets.split(",") if t.strip())
        setup = memory.TrainingSetup(
            spec,
            args.batch,
            args.seq,
            precision=args.precision,
            optimizer=args.optimizer,
            checkpointing=args.checkpointing,
            attention=args.attention,
            lora_rank=args.lora_rank,
            lora_targets=targets,
            quant=args.quant,
            gpus=args.gpus,
            sharding=args.sharding,
            tensor_parallel=args.tensor_parallel,
            optimizer_offload=args.optimizer_offload,
        )
        est = memory.training_memory(setup)
    else:
        setup = memory.InferenceSetup(
            spec,
            args.batch,
            args.seq,
            weights=args.weights,
            kv_dtype=args.kv_dtype,
            attention=args.attention,
            tensor_parallel=args.tensor_parallel,
        )
        est = memory.inference_memory(setup)
    if args.json:
        print(json.dumps(est.to_dict(), indent=2))
        return 0
    print(f"{spec.display_name or spec.name}: {args.task}, batch {args.batch}, seq {args.seq}")
    width = 22
    for k, v in est.components.items():
        if v:
            print(f"  {k:{width}} {fmt_bytes(v)}")
    print(f"  {'peak allocated':{width}} {fmt_bytes(est.peak_allocated_bytes)}")
    for k, v in est.overhead.items():
        if v:
            print(f"  + {k:{width - 2}} {fmt_bytes(v)}")
    print(f"  {'total to provision':{width}} {fmt_bytes(est.total_bytes)}  (per GPU)")
    print(
        "  peak = persistent state + max(activations + logits, gradients + optimizer step)"
        if args.task == "train"
        else "  peak = sum of components"
    )
    return 0
