"""`python -m bench run WORKLOAD [options]`: run one benchmark and write its JSON result.

Errors print one line on stderr and exit with code 2 (as advisor's CLI does)."""

from __future__ import annotations

import argparse
import sys

from advisor.core.errors import AdvisorError

WORKLOADS = ("train-step", "matmul", "bandwidth", "dataloader", "max-batch", "allreduce", "ddp")


def _runner(name: str):
    from . import dist, workloads

    return {
        "train-step": workloads.run_train_step,
        "matmul": workloads.run_matmul,
        "bandwidth": workloads.run_bandwidth,
        "dataloader": workloads.run_dataloader,
        "max-batch": workloads.run_max_batch,
        "allreduce": dist.run_allreduce,
        "ddp": dist.run_ddp,
    }[name]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    r = sub.add_parser("run", help="run one workload and write bench_results/<unique>.json")
    r.add_argument("workload", choices=WORKLOADS)
    r.add_argument("--device", default=None, help="cpu | cuda | cuda:N (default: cuda if present)")
    r.add_argument(
        "--dtype",
        help="train-step/max-batch/ddp: fp32|bf16|fp16|amp-bf16|amp-fp16; "
        "matmul: comma list of fp32,tf32,bf16,fp16,fp8",
    )
    r.add_argument("--batch", type=int)
    r.add_argument("--seq", type=int)
    r.add_argument("--out", default="bench_results", help="result folder (default bench_results/)")
    r.add_argument("--model", default="gpt2-124m", help="catalog model id (default gpt2-124m)")
    r.add_argument("--layers", type=int, help="override the model's layer count (to shrink it)")
    r.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a Hugging Face config field (repeatable), e.g. n_embd=128",
    )
    r.add_argument("--warmup", type=int, default=2)
    r.add_argument("--iters", type=int, default=10)
    r.add_argument(
        "--dataset-samples",
        type=int,
        default=100_000,
        help="train-step: sequences per epoch for the epoch time (default 100000)",
    )
    r.add_argument("--shapes", help="matmul: comma list of MxNxK")
    r.add_argument("--sizes", help="bandwidth/allreduce: comma list of MiB")
    r.add_argument(
        "--text-bytes",
        type=int,
        default=2_000_000,
        help="dataloader: bytes of text to tokenise per iteration",
    )
    r.add_argument(
        "--train-tokens-per-s",
        type=float,
        help="dataloader: the training rate to feed (default: latest train-step result)",
    )
    r.add_argument("--mem-budget-mib", type=float, help="max-batch on CPU: imposed byte budget")
    r.add_argument("--max-batch-cap", type=int, default=4096)
    r.add_argument(
        "--nproc", type=int, help="allreduce/ddp: processes (default: GPUs, or 2 on CPU)"
    )
    r.add_argument("--sharding", choices=("ddp", "fsdp"), default="ddp")
    r.add_argument("--gpu-id", help="catalog GPU id, when detection by name does not find it")
    r.add_argument("--telemetry-interval", type=float, default=0.1, help="seconds")
    r.add_argument("--timeout", type=float, default=600, help="allreduce/ddp: torchrun timeout")
    r.add_argument("--print", action="store_true", help="also print the JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command != "run":
        parser.print_help()
        return 2
    try:
        import torch

        from .results import write_result

        if args.device is None:
            args.device = "cuda" if torch.cuda.is_available() else "cpu"
        for name in ("batch", "seq", "layers", "nproc"):
            v = getattr(args, name)
            if v is not None and v < 1:
                raise AdvisorError("field.positive", f"--{name}: must be at least 1", field=name)
        if args.iters < 1 or args.warmup < 0:
            raise AdvisorError("field.positive", "--iters >= 1 and --warmup >= 0", field="iters")
        doc = _runner(args.workload)(args)
        path = write_result(doc, args.out)
    except AdvisorError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    headline = ", ".join(
        f"{d['name']}={d['value']:.4g}" for d in doc["derived"][:4] if d["value"] is not None
    )
    print(f"{path}  {headline}")
    if args.print:
        print(path.read_text(encoding="utf-8"))
    return 0
