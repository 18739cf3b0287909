"""Multi-process workloads through torchrun (torch.distributed): all-reduce bus bandwidth and
DDP / FSDP training-step scaling. NCCL on GPUs, gloo on CPU.

The parent (`run_allreduce`, `run_ddp`) launches `python -m torch.distributed.run --standalone
--nproc_per_node N -m bench.dist WORKER ...` (torchrun) and reads the part file rank 0 writes;
it then writes one result with the environment and telemetry of the whole run.

Bus bandwidth follows nccl-tests (doc/PERFORMANCE.md): algbw = S / t, and for all-reduce
busbw = algbw * 2(n-1)/n, the per-rank traffic of the optimal ring; with n = 1 it is 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from advisor.core.errors import AdvisorError

from .measure import Telemetry, is_cuda, summarize
from .results import derived, environment, make_result


def busbw_factor(n: int) -> float:
    """nccl-tests' all-reduce bus-bandwidth factor 2(n-1)/n."""
    return 2.0 * (n - 1) / n


def launch(nproc: int, worker_args: list[str], *, cuda: bool, timeout_s: float) -> dict:
    """Run torchrun with `nproc` processes; return rank 0's part document."""
    with tempfile.TemporaryDirectory(prefix="bench-dist-") as tmp:
        part = Path(tmp) / "part.json"
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc_per_node={nproc}",
            "-m",
            "bench.dist",
            *worker_args,
            "--part",
            str(part),
        ]
        env = dict(os.environ)
        if not cuda:
            env.setdefault("OMP_NUM_THREADS", "1")  # n CPU processes share the cores
            env["BENCH_FORCE_CPU"] = "1"  # gloo on CPU even where a GPU exists
        root = Path(__file__).resolve().parent.parent
        env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        )
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
        if proc.returncode != 0 or not part.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-8:]
            raise AdvisorError(
                "bench.torchrun",
                "torchrun failed: " + " | ".join(tail),
                field="nproc",
                returncode=proc.returncode,
            )
        doc = json.loads(part.read_text(encoding="utf-8"))
        doc["command"] = cmd[:-2]
        return doc


# ------------------------------------------------------------------------------------------------
# parent side
# ------------------------------------------------------------------------------------------------


def _default_nproc(device: str) -> int:
    import torch

    return torch.cuda.device_count() if is_cuda(device) else 2


def run_allreduce(a) -> dict:
    device = a.device
    cuda = is_cuda(device)
    nproc = a.nproc or _default_nproc(device)
    if a.sizes:
        sizes = [int(float(s) * 2**20) for s in a.sizes.split(",")]
    else:
        sizes = [2**k for k in (range(20, 31, 2) if cuda else range(12, 23, 2))]
    env = environment("cuda" if cuda else "cpu")
    tel = Telemetry("cuda" if cuda else "cpu", a.telemetry_interval).start()
    try:
        part = launch(
            nproc,
            [
                "allreduce",
                "--sizes",
                ",".join(map(str, sizes)),
                "--warmup",
                str(a.warmup),
                "--iters",
                str(a.iters),
            ],
            cuda=cuda,
            timeout_s=a.timeout,
        )
    finally:
        tel.stop()
    n = part["world_size"]
    rows, samples = [], {}
    for r in part["rows"]:
        t = r["max_rank_median_s"]
        algbw = r["bytes"] / t / 1e9
        rows.append({**r, "algbw_gb_per_s": algbw, "busbw_gb_per_s": algbw * busbw_factor(n)})
        samples[f"allreduce:{r['bytes']}"] = r["samples_s"]
    for row in rows:
        row.pop("samples_s")
    best = max(rows, key=lambda r: r["busbw_gb_per_s"])
    d = [
        derived(
            "busbw_gb_per_s",
            best["busbw_gb_per_s"],
            "GB/s",
            f"max over sizes of (bytes / t) * 2(n-1)/n with n = {n}, t = slowest rank's median "
            f"(nccl-tests PERFORMANCE.md); best at {best['bytes']} bytes",
        ),
        derived("algbw_gb_per_s", best["algbw_gb_per_s"], "GB/s", "bytes / t at the same size"),
        derived(
            "small_message_latency_s",
            min(r["max_rank_median_s"] for r in rows),
            "s",
            "smallest median time over sizes",
        ),
    ]
    notes = []
    if n == 1:
        notes.append("one process: the bus-bandwidth factor 2(n-1)/n is 0; no link was measured")
    conf = {
        "world_size": n,
        "backend": part["backend"],
        "dtype": "fp32",
        "op": "sum",
        "sizes_bytes": sizes,
        "warmup": a.warmup,
        "iters": a.iters,
        "launcher": " ".join(part["command"]),
        "device": "cuda" if cuda else "cpu",
    }
    summary = {k: summarize(v, "s") for k, v in samples.items()}
    return make_result(
        "allreduce", env, conf, samples, summary, d, table=rows, telemetry=tel.result(), notes=notes
    )


def run_ddp(a) -> dict:
    cuda = is_cuda(a.device)
    nproc = a.nproc or _default_nproc(a.device)
    sharding = a.sharding
    if sharding == "fsdp" and not cuda:
        raise AdvisorError(
            "bench.fsdp_cpu", "--sharding fsdp: runs on CUDA (NCCL) only here", field="sharding"
        )
    batch, seq = a.batch or 2, a.seq or 64
    worker = [
        "ddp",
        "--model",
        a.model,
        "--batch",
        str(batch),
        "--seq",
        str(seq),
        "--dtype",
        a.dtype or ("bf16" if cuda else "fp32"),
        "--sharding",
        sharding,
        "--warmup",
        str(a.warmup),
        "--iters",
        str(a.iters),
    ]
    if a.layers:
        worker += ["--layers", str(a.layers)]
    for s in a.set or []:
        worker += ["--set", s]
    env = environment("cuda" if cuda else "cpu")
    counts = sorted({1, nproc})
    parts = {}
    tel = Telemetry("cuda" if cuda else "cpu", a.telemetry_interval).start()
    try:
        for n in counts:
            parts[n] = launch(n, worker, cuda=cuda, timeout_s=a.timeout)
    finally:
        tel.stop()
    rows, samples = [], {}
    base = None
    for n in counts:
        p = parts[n]
        med = summarize(p["samples_s"], "s")["median"]
        tps = n * batch * seq / med  # global tokens per second (each rank runs `batch`)
        base = base or tps
        rows.append(
            {
                "world_size": n,
                "median_s": med,
                "tokens_per_s": tps,
                "scaling_efficiency": tps / (n * base),
            }
        )
        samples[f"step_time_s:n{n}"] = p["samples_s"]
    top = rows[-1]
    d = [
        derived(
            "step_time_s", top["median_s"], "s", f"median step time at n = {top['world_size']}"
        ),
        derived("tokens_per_s", top["tokens_per_s"], "tokens/s", "n*B*S/median step (global)"),
        derived(
            "scaling_efficiency",
            top["scaling_efficiency"],
            "fraction",
            "tokens_per_s(n) / (n * tokens_per_s(1)), weak scaling (B per rank fixed)",
        ),
    ]
    conf = {
        "model": a.model,
        "layers": a.layers,
        "batch_per_rank": batch,
        "seq": seq,
        "dtype": parts[counts[-1]]["dtype"],
        "sharding": sharding,
        "world_sizes": counts,
        "backend": parts[counts[-1]]["backend"],
        "warmup": a.warmup,
        "iters": a.iters,
        "device": "cuda" if cuda else "cpu",
    }
    summary = {k: summarize(v, "s") for k, v in samples.items()}
    notes = (
        ["CPU ranks share this host's cores: scaling here says little about GPUs"]
        if not cuda
        else []
    )
    if nproc == 1:
        notes.append("one process only: no scaling measured")
    return make_result(
        "ddp", env, conf, samples, summary, d, table=rows, telemetry=tel.result(), notes=notes
    )


# ------------------------------------------------------------------------------------------------
# worker side (inside torchrun)
# ------------------------------------------------------------------------------------------------


def _init():
    import torch
    import torch.distributed as dist

    cuda = torch.cuda.is_available() and os.environ.get("BENCH_FORCE_CPU") != "1"
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    dist.init_process_group("nccl" if cuda else "gloo", device_id=device if cuda else None)
    return dist, device, cuda


def _time_collective(fn, device, cuda, warmup, iters, dist):
    import time

    import torch

    for _ in range(warmup):
        fn()
    if cuda:
        torch.cuda.synchronize()
    out = []
    for _ in range(iters):
        dist.barrier()
        if cuda:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            out.append(s.elapsed_time(e) / 1e3)
        else:
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return out


def worker_allreduce(args):
    import torch

    dist, device, cuda = _init()
    rank, n = dist.get_rank(), dist.get_world_size()
    rows = []
    for nbytes in [int(s) for s in args.sizes.split(",")]:
        x = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
        ts = _time_collective(
            lambda x=x: dist.all_reduce(x), device, cuda, args.warmup, args.iters, dist
        )
        med = torch.tensor([summarize(ts, "s")["median"]], dtype=torch.float64, device=device)
        dist.all_reduce(med, op=dist.ReduceOp.MAX)
        rows.append({"bytes": nbytes, "samples_s": ts, "max_rank_median_s": float(med.item())})
    if rank == 0:
        Path(args.part).write_text(
            json.dumps({"world_size": n, "backend": dist.get_backend(), "rows": rows})
        )
    dist.destroy_process_group()


def worker_ddp(args):
    import torch

    from . import lm
    from .measure import time_fn

    dist, device, cuda = _init()
    rank, n = dist.get_rank(), dist.get_world_size()
    cfg, spec, _ = lm.model_config(args.model, args.layers, lm.parse_overrides(args.set))
    model = lm.build_model(cfg, device, args.dtype, seed=0)
    if args.sharding == "fsdp":
        from torch.distributed.fsdp import fully_shard

        for layer in model.modules():
            if type(layer).__name__.endswith(("DecoderLayer", "Block")):
                fully_shard(layer)
        wrapped = fully_shard(model)
    else:
        from torch.nn.parallel import DistributedDataParallel as DDP

        wrapped = DDP(model, device_ids=[device.index] if cuda else None)
    step = lm.TrainStep(
        wrapped, args.batch, args.seq, spec.vocab_size, device, args.dtype, seed=rank
    )
    ts = time_fn(step, device=str(device), warmup=args.warmup, iters=args.iters)
    med = torch.tensor(ts, dtype=torch.float64, device=device)
    dist.all_reduce(med, op=dist.ReduceOp.MAX)  # a step ends when the slowest rank ends
    if rank == 0:
        Path(args.part).write_text(
            json.dumps(
                {
                    "world_size": n,
                    "backend": dist.get_backend(),
                    "dtype": args.dtype,
                    "samples_s": med.tolist(),
                }
            )
        )
    dist.destroy_process_group()


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.dist")
    sub = p.add_subparsers(dest="worker", required=True)
    ar = sub.add_parser("allreduce")
    ar.add_argument("--sizes", required=True)
    dd = sub.add_parser("ddp")
    dd.add_argument("--model", required=True)
    dd.add_argument("--layers", type=int)
    dd.add_argument("--set", action="append")
    dd.add_argument("--batch", type=int, required=True)
    dd.add_argument("--seq", type=int, required=True)
    dd.add_argument("--dtype", required=True)
    dd.add_argument("--sharding", default="ddp")
    for q in (ar, dd):
        q.add_argument("--warmup", type=int, default=2)
        q.add_argument("--iters", type=int, default=5)
        q.add_argument("--part", required=True)
    args = p.parse_args(argv)
    (worker_allreduce if args.worker == "allreduce" else worker_ddp)(args)


if __name__ == "__main__":
    main()
