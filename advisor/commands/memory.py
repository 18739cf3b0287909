"""`python -m advisor memory`: accelerator memory of a training step or an inference prefill."""

from __future__ import annotations

import argparse

from ..core.units import fmt_bytes
from ..memory import estimate as memory
from ._common import (
    add_model_args,
    count,
    model_from_args,
    print_json,
    reject_inapplicable,
)

DEFAULTS_NOTE = (
    "Defaults are what the rest of advisor assumes: amp-bf16 mixed precision (fp32 master "
    "weights), AdamW (foreach, states in the parameter dtype), activation checkpointing as the "
    "tools apply it (full for LoRA/QLoRA, none for full training; advisor.memory.estimate.default_checkpointing), SDPA "
    "attention, one GPU; inference: bf16 weights and bf16 KV cache."
)
# Defaults of the options that apply to one task only (None on the parser: given or not).
TRAIN_DEFAULTS = {
    "precision": "amp-bf16",
    "optimizer": "adamw",
    "checkpointing": "default",
    "lora_rank": 0,
    "lora_targets": "q_proj,v_proj",
    "quant": None,
    "gpus": 1,
    "sharding": "ddp",
    "optimizer_offload": False,
}
INFER_DEFAULTS = {"weights": "bf16", "kv_dtype": "bf16"}


def register(sub) -> None:
    p = sub.add_parser(
        "memory",
        help="memory needed per GPU for training or inference",
        description="Accelerator memory per GPU, by component. " + DEFAULTS_NOTE,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_model_args(p, required=True)
    p.add_argument(
        "--task",
        choices=("train", "inference", "infer"),
        required=True,
        help="train | inference (advisor.core.vocab; 'infer' is the older name)",
    )
    t = "training only, default "
    p.add_argument("--precision", choices=memory.PRECISIONS, help=t + "amp-bf16")
    p.add_argument("--optimizer", choices=memory.OPTIMIZERS, help=t + "adamw")
    p.add_argument(
        "--checkpointing",
        choices=memory.vocab.CHECKPOINTING_CHOICES,
        help=t + "default: full with --lora-rank, else none",
    )
    p.add_argument("--attention", default="sdpa", choices=memory.ATTENTION)
    p.add_argument(
        "--lora-rank", type=count("lora_rank", 0, 65_536), help=t + "0 (full fine-tuning)"
    )
    p.add_argument("--lora-targets", help=t + "q_proj,v_proj (comma-separated modules)")
    p.add_argument("--quant", choices=memory.QUANT, help=t + "none (QLoRA base)")
    p.add_argument("--gpus", type=count("gpus", 1, 100_000), help=t + "1")
    p.add_argument("--sharding", choices=memory.SHARDING, help=t + "ddp")
    p.add_argument(
        "--tensor-parallel", type=count("tensor_parallel", 1, 1024), default=1, help="default 1"
    )
    p.add_argument(
        "--optimizer-offload", action="store_true", default=None, help="optimizer states on CPU"
    )
    i = "inference only, default "
    p.add_argument("--weights", choices=memory.WEIGHT_FORMATS, help=i + "bf16")
    p.add_argument("--kv-dtype", choices=memory.KV_DTYPES, help=i + "bf16")
    p.add_argument("--json", action="store_true", help="print the estimate as JSON")
    p.set_defaults(func=run)


def _options(args, defaults: dict) -> dict:
    return {k: defaults[k] if getattr(args, k) is None else getattr(args, k) for k in defaults}


def run(args) -> int:
    from ..data.catalog import load_catalog

    catalog = None if args.config else load_catalog(args.catalog)
    spec = model_from_args(args, catalog)
    train_only = tuple(k.replace("_", "-") for k in TRAIN_DEFAULTS)
    infer_only = tuple(k.replace("_", "-") for k in INFER_DEFAULTS)
    if args.task == "inference":
        args.task = "infer"  # one vocabulary (advisor.core.vocab.TASKS); the code below says infer
    if args.task == "train":
        reject_inapplicable(args, infer_only, "--task train")
        o = _options(args, TRAIN_DEFAULTS)
        targets = tuple(t.strip() for t in o["lora_targets"].split(",") if t.strip())
        setup = memory.TrainingSetup(
            spec,
            args.batch,
            args.seq,
            precision=o["precision"],
            optimizer=o["optimizer"],
            checkpointing=memory.resolve_checkpointing(o["checkpointing"], o["lora_rank"]),
            attention=args.attention,
            lora_rank=o["lora_rank"],
            lora_targets=targets,
            quant=o["quant"],
            gpus=o["gpus"],
            sharding=o["sharding"],
            tensor_parallel=args.tensor_parallel,
            optimizer_offload=o["optimizer_offload"],
        )
        est = memory.training_memory(setup)
    else:
        reject_inapplicable(args, train_only, "--task infer (use --tensor-parallel for GPUs)")
        o = _options(args, INFER_DEFAULTS)
        setup = memory.InferenceSetup(
            spec,
            args.batch,
            args.seq,
            weights=o["weights"],
            kv_dtype=o["kv_dtype"],
            attention=args.attention,
            tensor_parallel=args.tensor_parallel,
        )
        est = memory.inference_memory(setup)
    if args.json:
        return print_json(est.to_dict(), indent=2)
    print(f"{spec.display_name or spec.name}: {args.task}, batch {args.batch}, seq {args.seq}")
    if args.task == "infer":
        # issue 38: this command's inference is a static prefill; say so, and where the
        # serving engine's sizing is (advisor.perf.serving_fit)
        print(
            "  static prefill: all the batch's sequences prefilled at once on each GPU; a "
            "serving engine needs far less (python -m advisor recommend --batch N: N requests "
            "in flight)"
        )
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
    for note in est.assumptions:
        if "NCCL" in note:
            print(f"  note: {note} (more GPUs can raise the total of a small model by this)")
    return 0
