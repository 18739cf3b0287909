"""The single-process workloads: train-step, matmul, bandwidth, dataloader, max-batch.

Each `run_*` takes the parsed CLI options (an argparse Namespace) and returns a result document
(`bench.results.make_result`); the CLI writes it. Formulas are stated in each derived figure.
"""

from __future__ import annotations

import gc
import json
import math
import re
import time
from pathlib import Path

from advisor.core.errors import AdvisorError

from . import lm
from .measure import Telemetry, is_cuda, read_status_bytes, summarize, time_fn
from .results import derived, environment, make_result

DATA = Path(__file__).resolve().parent / "data"


def _torch_dtype(name: str):
    import torch

    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[name]


def _check_device(device: str) -> str:
    import torch

    if is_cuda(device):
        if not torch.cuda.is_available():
            raise AdvisorError("bench.no_cuda", "--device cuda: no CUDA device", field="device")
        torch.cuda.set_device(torch.device(device).index or 0)
    elif device != "cpu":
        raise AdvisorError(
            "bench.device", f"--device: cpu or cuda[:N], got {device}", field="device"
        )
    return device


def _catalog_gpu(env: dict, gpu_id: str | None):
    """(GPU or None, note) for the accelerator this run measured."""
    from advisor.data.catalog import load_catalog

    if env["device"] != "cuda":
        return None, "no catalog peak: CPU run"
    cat = load_catalog()
    if gpu_id:
        return cat.gpu(gpu_id), f"catalog GPU given: {gpu_id}"
    g = lm.detect_gpu(env["accelerator"], env["accelerator_memory_bytes"], cat)
    if g is None:
        return None, f"no catalog entry matches {env['accelerator']!r}"
    return g, f"catalog GPU detected: {g.id}"


# ------------------------------------------------------------------------------------------------
# train-step
# ------------------------------------------------------------------------------------------------


def _cpu_tracked_peak(step, model) -> int:
    """Peak live tensor bytes of one step on CPU (weights, optimizer states and all transients),
    counted by `StorageTracker`: the CPU equivalent of torch.cuda.max_memory_allocated()."""
    from .memlimit import StorageTracker

    held = list(model.parameters()) + list(model.buffers())
    held += [p.grad for p in model.parameters() if p.grad is not None]
    for state in step.opt.state.values():
        held += [v for v in state.values() if hasattr(v, "untyped_storage")]
    held += [step.tokens]
    tracker = StorageTracker(existing=held)  # by storage identity: views are not re-counted
    with tracker:
        step()
    return tracker.peak_bytes


def run_train_step(a) -> dict:
    import torch

    device = _check_device(a.device)
    dtype = a.dtype or "fp32"
    if dtype not in lm.DTYPES:
        raise AdvisorError("bench.dtype", f"--dtype: one of {lm.DTYPES}", field="dtype")
    batch, seq = a.batch or 4, a.seq or 128
    cfg, spec, preset = lm.model_config(a.model, a.layers, lm.parse_overrides(a.set))
    env = environment(device)
    model = lm.build_model(cfg, device, dtype)
    n_params = sum(p.numel() for p in model.parameters())
    step = lm.TrainStep(model, batch, seq, spec.vocab_size, device, dtype)
    if is_cuda(device):
        torch.cuda.reset_peak_memory_stats()
    tel = Telemetry(device, a.telemetry_interval).start()
    try:
        samples = time_fn(step, device=device, warmup=a.warmup, iters=a.iters)
    finally:
        tel.stop()
    memory = {"measured": {}, "predicted": lm.predicted_training_memory(spec, batch, seq, dtype)}
    if is_cuda(device):
        memory["measured"] = {
            "kind": "torch.cuda.max_memory_allocated",
            "peak_allocated_bytes": int(torch.cuda.max_memory_allocated()),
            "peak_reserved_bytes": int(torch.cuda.max_memory_reserved()),
        }
    else:
        memory["measured"] = {
            "kind": "live tensor storage bytes (StorageTracker, one step after the timed ones)",
            "peak_allocated_bytes": int(_cpu_tracked_peak(step, model)),
            "process_peak_rss_bytes": read_status_bytes("VmHWM"),
        }
    pred = memory["predicted"]
    if pred.get("available"):
        meas = memory["measured"]["peak_allocated_bytes"]
        memory["error_pct"] = 100.0 * (pred["peak_allocated_bytes"] - meas) / meas
        memory["error_formula"] = "100*(predicted peak_allocated_bytes - measured)/measured"

    med = summarize(samples, "s")["median"]
    tokens = batch * seq
    flops, flops_formula = lm.flops_per_step(spec, batch, seq)
    steps_per_epoch = math.ceil(a.dataset_samples / batch)
    d = [
        derived("step_time_s", med, "s", "median(step_time_s samples)"),
        derived("tokens_per_s", tokens / med, "tokens/s", f"B*S/median step = {tokens}/median"),
        derived("samples_per_s", batch / med, "samples/s", f"B/median step = {batch}/median"),
        derived(
            "epoch_time_s",
            steps_per_epoch * med,
            "s",
            f"ceil(dataset_samples/B)*median step = ceil({a.dataset_samples}/{batch})*median",
        ),
        derived("flops_per_step", flops, "FLOP", flops_formula),
        derived("achieved_tflops", flops / med / 1e12, "TFLOP/s", "flops_per_step/median/1e12"),
    ]
    gpu, gpu_note = _catalog_gpu(env, a.gpu_id)
    peak = None
    if gpu is not None:
        from advisor.perf.timing import peak_flops

        try:
            peak = peak_flops(gpu, dtype)
        except AdvisorError as exc:
            gpu_note += f"; {exc.message}"
    if peak:
        d.append(
            derived(
                "mfu",
                flops / med / peak,
                "fraction",
                f"achieved FLOP/s / catalog dense {dtype} peak of {gpu.id} ({peak / 1e12:g} TFLOP/s)",
            )
        )
    else:
        d.append(derived("mfu", None, "fraction", "achieved / catalog dense peak", gpu_note))
    conf = {
        "model": a.model,
        "model_display_name": preset.display_name,
        "model_source": preset.source_url,
        "config_overrides": {"layers": a.layers, **lm.parse_overrides(a.set)},
        "hf_config": cfg,
        "parameters": n_params,
        "batch": batch,
        "seq": seq,
        "dtype": dtype,
        "optimizer": "adamw (foreach)",
        "attention": "sdpa",
        "warmup": a.warmup,
        "iters": a.iters,
        "dataset_samples": a.dataset_samples,
        "device": device,
        "catalog_gpu": gpu.id if gpu is not None else None,
    }
    return make_result(
        "train-step",
        env,
        conf,
        {"step_time_s": samples},
        {"step_time_s": summarize(samples, "s")},
        d,
        memory=memory,
        telemetry=tel.result(),
        notes=[gpu_note, "random weights and random tokens; loss is not meaningful"],
    )


# ------------------------------------------------------------------------------------------------
# matmul
# ------------------------------------------------------------------------------------------------

GPU_SHAPES = [(n, n, n) for n in (1024, 2048, 4096, 8192, 16384)] + [
    (8192, 4096, 14336),
    (8192, 14336, 4096),
    (16384, 8192, 8192),
    (4096, 8192, 28672),
]
CPU_SHAPES = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024)]


def parse_shapes(text: str | None, device: str) -> list[tuple[int, int, int]]:
    if not text:
        return GPU_SHAPES if is_cuda(device) else CPU_SHAPES
    out = []
    for part in text.split(","):
        dims = part.lower().split("x")
        if len(dims) != 3 or not all(d.strip().isdigit() and int(d) > 0 for d in dims):
            raise AdvisorError(
                "bench.shape", f"--shapes: expected MxNxK, got {part!r}", field="shapes"
            )
        out.append(tuple(int(d) for d in dims))
    return out


def fp8_supported(device: str) -> bool:
    """FP8 tensor-core matmul (torch._scaled_mm) needs CUDA compute capability >= 8.9."""
    import torch

    return (
        is_cuda(device)
        and hasattr(torch, "float8_e4m3fn")
        and torch.cuda.get_device_capability() >= (8, 9)
    )


def _matmul_fn(m, n, k, dtype: str, device):
    import torch

    if dtype == "fp8":
        a = torch.randn(m, k, device=device).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn).t()  # column-major
        one = torch.tensor(1.0, device=device)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    t = _torch_dtype(dtype)
    a = torch.randn(m, k, device=device, dtype=t)
    b = torch.randn(k, n, device=device, dtype=t)
    c = torch.empty(m, n, device=device, dtype=t)
    return lambda: torch.matmul(a, b, out=c)


def run_matmul(a) -> dict:
    device = _check_device(a.device)
    if a.dtype:
        dtypes = [x.strip() for x in a.dtype.split(",")]
    else:
        dtypes = ["bf16", "fp16"] + (["fp8"] if fp8_supported(device) else [])
        if not is_cuda(device):
            dtypes = ["fp32", "bf16"]
    for x in dtypes:
        if x not in ("fp32", "tf32", "bf16", "fp16", "fp8"):
            raise AdvisorError("bench.dtype", f"--dtype: unknown matmul dtype {x!r}", field="dtype")
    shapes = parse_shapes(a.shapes, device)
    env = environment(device)
    import torch

    rows, samples, notes = [], {}, []
    tel = Telemetry(device, a.telemetry_interval).start()
    try:
        for dt in dtypes:
            if dt == "fp8" and not fp8_supported(device):
                notes.append("fp8 skipped: needs CUDA compute capability >= 8.9")
                continue
            torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
            run_dt = "fp32" if dt == "tf32" else dt
            for m, n, k in shapes:
                try:
                    fn = _matmul_fn(m, n, k, run_dt, device)
                    ts = time_fn(fn, device=device, warmup=a.warmup, iters=a.iters)
                except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:
                    notes.append(f"{dt} {m}x{n}x{k} failed: {str(exc).splitlines()[0][:160]}")
                    continue
                finally:
                    fn = None
                    gc.collect()
                flops = 2.0 * m * n * k
                med = summarize(ts, "s")["median"]
                samples[f"{dt}:{m}x{n}x{k}"] = ts
                rows.append(
                    {
                        "dtype": dt,
                        "m": m,
                        "n": n,
                        "k": k,
                        "median_s": med,
                        "tflops": flops / med / 1e12,
                        "tflops_p10_time": flops / summarize(ts, "s")["p90"] / 1e12,
                    }
                )
    finally:
        tel.stop()
        torch.backends.cuda.matmul.allow_tf32 = False
    d = []
    gpu, gpu_note = _catalog_gpu(env, a.gpu_id)
    for dt in dtypes:
        mine = [r for r in rows if r["dtype"] == dt]
        if not mine:
            continue
        best = max(mine, key=lambda r: r["tflops"])
        d.append(
            derived(
                f"best_tflops_{dt}",
                best["tflops"],
                "TFLOP/s",
                f"max over shapes of 2*M*N*K/median time; best at {best['m']}x{best['n']}x{best['k']}",
            )
        )
        peak = (gpu.peak_tflops or {}).get(dt) if gpu is not None else None
        if peak:
            d.append(
                derived(
                    f"fraction_of_peak_{dt}",
                    best["tflops"] / peak,
                    "fraction",
                    f"best_tflops_{dt} / catalog dense {dt} peak of {gpu.id} ({peak:g})",
                )
            )
    if not d:
        raise AdvisorError("bench.nothing", "matmul: no shape could be run", field="shapes")
    conf = {
        "dtypes": dtypes,
        "shapes": [list(s) for s in shapes],
        "warmup": a.warmup,
        "iters": a.iters,
        "device": device,
        "catalog_gpu": gpu.id if gpu else None,
    }
    summary = {k: summarize(v, "s") for k, v in samples.items()}
    return make_result(
        "matmul",
        env,
        conf,
        samples,
        summary,
        d,
        table=rows,
        telemetry=tel.result(),
        notes=notes + [gpu_note],
    )


# ------------------------------------------------------------------------------------------------
# bandwidth
# ------------------------------------------------------------------------------------------------


def run_bandwidth(a) -> dict:
    import torch

    device = _check_device(a.device)
    mib = 2**20
    if a.sizes:
        sizes = [int(float(s) * mib) for s in a.sizes.split(",")]
    else:
        sizes = [x * mib for x in ((16, 64, 256, 1024, 4096) if is_cuda(device) else (4, 64, 256))]
    env = environment(device)
    rows, samples, notes = [], {}, []
    tests = ["device_copy"]
    if is_cuda(device):
        tests += ["h2d_pinned", "h2d_pageable", "d2h_pinned"]
    else:
        notes.append("host-to-device: not applicable on a CPU-only run")
    tel = Telemetry(device, a.telemetry_interval).start()
    try:
        for test in tests:
            for n in sizes:
                if test == "device_copy":
                    src = torch.empty(n, dtype=torch.uint8, device=device).fill_(1)
                    dst = torch.empty_like(src)
                    fn, moved, f = (lambda s=src, t=dst: t.copy_(s)), 2 * n, "2*bytes/median"
                elif test == "h2d_pinned":
                    src = torch.empty(n, dtype=torch.uint8, pin_memory=True).fill_(1)
                    dst = torch.empty(n, dtype=torch.uint8, device=device)
                    fn, moved, f = (
                        (lambda s=src, t=dst: t.copy_(s, non_blocking=True)),
                        n,
                        "bytes/median",
                    )
                elif test == "h2d_pageable":
                    src = torch.empty(n, dtype=torch.uint8).fill_(1)
                    dst = torch.empty(n, dtype=torch.uint8, device=device)
                    fn, moved, f = (lambda s=src, t=dst: t.copy_(s)), n, "bytes/median"
                else:  # d2h_pinned
                    src = torch.empty(n, dtype=torch.uint8, device=device).fill_(1)
                    dst = torch.empty(n, dtype=torch.uint8, pin_memory=True)
                    fn, moved, f = (
                        (lambda s=src, t=dst: t.copy_(s, non_blocking=True)),
                        n,
                        "bytes/median",
                    )
                ts = time_fn(fn, device=device, warmup=a.warmup, iters=a.iters)
                med = summarize(ts, "s")["median"]
                samples[f"{test}:{n}"] = ts
                rows.append(
                    {
                        "test": test,
                        "bytes": n,
                        "median_s": med,
                        "gbps": moved / med / 1e9,
                        "formula": f,
                    }
                )
                src = dst = fn = None
    finally:
        tel.stop()
        gc.collect()
    d = []
    for test in tests:
        mine = [r for r in rows if r["test"] == test]
        # The largest buffer: smaller ones may sit in a cache (a CPU's L3, a GPU's L2) and
        # report the cache's speed, not the memory's.
        big = max(mine, key=lambda r: r["bytes"])
        best = max(mine, key=lambda r: r["gbps"])
        rule = (
            "2*bytes/median (read + write, as STREAM's Copy counts bytes)"
            if test == "device_copy"
            else "bytes/median"
        )
        d.append(
            derived(
                f"{test}_gb_per_s",
                big["gbps"],
                "GB/s",
                f"{rule} at the largest size, {big['bytes']} bytes; GB = 1e9 bytes",
            )
        )
        d.append(
            derived(
                f"{test}_best_gb_per_s",
                best["gbps"],
                "GB/s",
                f"max over sizes of {rule}; at {best['bytes']} bytes (may be a cache)",
            )
        )
    gpu, gpu_note = _catalog_gpu(env, a.gpu_id)
    if gpu is not None and getattr(gpu, "memory_bandwidth_gb_per_s", None):
        d.append(
            derived(
                "fraction_of_datasheet_bandwidth",
                d[0]["value"] / gpu.memory_bandwidth_gb_per_s,
                "fraction",
                f"device_copy_gb_per_s / catalog {gpu.id} {gpu.memory_bandwidth_gb_per_s:g} GB/s",
            )
        )
    conf = {
        "sizes_bytes": sizes,
        "tests": tests,
        "warmup": a.warmup,
        "iters": a.iters,
        "device": device,
        "catalog_gpu": gpu.id if gpu else None,
    }
    summary = {k: summarize(v, "s") for k, v in samples.items()}
    return make_result(
        "bandwidth",
        env,
        conf,
        samples,
        summary,
        d,
        table=rows,
        telemetry=tel.result(),
        notes=notes + [gpu_note],
    )


# ------------------------------------------------------------------------------------------------
# dataloader
# ------------------------------------------------------------------------------------------------

# GPT-2's pre-tokenisation pattern (openai/gpt-2 src/encoder.py) with \w / \d in place of \p{L} /
# \p{N}, which Python's `re` lacks.
_PRETOKEN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""")


def byte_tokenize(text: str) -> list[int]:
    """Byte-level: every UTF-8 byte is a token (vocabulary 256)."""
    return list(text.encode("utf-8"))


class RegexTokenizer:
    """Word-level: GPT-2's pre-tokenising regex, each piece looked up in a vocabulary built from
    the corpus (capped at `vocab_size`), unknown pieces spelt as bytes. A stand-in for BPE's
    per-piece work, not its exact cost (a Rust BPE tokenizer is faster, a Python one slower)."""

    def __init__(self, corpus: str, vocab_size: int = 50_000):
        counts: dict[str, int] = {}
        for piece in _PRETOKEN.findall(corpus):
            counts[piece] = counts.get(piece, 0) + 1
        top = sorted(counts, key=lambda p: -counts[p])[: max(0, vocab_size - 256)]
        self.vocab = {p: 256 + i for i, p in enumerate(top)}

    def __call__(self, text: str) -> list[int]:
        out: list[int] = []
        vocab = self.vocab
        for piece in _PRETOKEN.findall(text):
            tid = vocab.get(piece)
            if tid is None:
                out.extend(piece.encode("utf-8"))
            else:
                out.append(tid)
        return out


def _latest_train_tokens_per_s(folder: Path, device_kind: str) -> tuple[float | None, str | None]:
    best, name, stamp = None, None, ""
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if (
            doc.get("workload") != "train-step"
            or doc.get("environment", {}).get("device") != device_kind
        ):
            continue
        if doc.get("created_utc", "") >= stamp:
            for x in doc.get("derived", []):
                if x.get("name") == "tokens_per_s" and x.get("value"):
                    best, name, stamp = float(x["value"]), path.name, doc["created_utc"]
    return best, name


def run_dataloader(a) -> dict:
    import torch

    from .measure import cpu_count

    device = _check_device(a.device)
    env = environment(device)
    text = (DATA / "sample.txt").read_text(encoding="utf-8")
    reps = max(1, int(a.text_bytes // max(1, len(text.encode("utf-8")))))
    corpus = text * reps
    batch, seq = a.batch or 8, a.seq or 512
    tok = RegexTokenizer(text)
    tokenizers = {"byte": byte_tokenize, "regex-word": tok}
    samples, rows = {}, []
    tel = Telemetry("cpu", a.telemetry_interval).start()
    try:
        for name, fn in tokenizers.items():
            ts, ntok = [], 0
            for i in range(a.warmup + a.iters):
                t0 = time.perf_counter()
                ids = fn(corpus)
                usable = (len(ids) // (batch * seq)) * batch * seq
                batches = torch.tensor(ids[:usable], dtype=torch.long).view(-1, batch, seq)
                if is_cuda(device):
                    batches = batches.pin_memory()
                dt = time.perf_counter() - t0
                if i >= a.warmup:
                    ts.append(dt)
                    ntok = len(ids)
            samples[f"{name}:seconds"] = ts
            med = summarize(ts, "s")["median"]
            rows.append(
                {
                    "tokenizer": name,
                    "tokens": ntok,
                    "bytes": len(corpus.encode("utf-8")),
                    "median_s": med,
                    "tokens_per_s": ntok / med,
                    "batches": int(batches.shape[0]),
                }
            )
    finally:
        tel.stop()
    d = [
        derived(
            f"{r['tokenizer']}_tokens_per_s",
            r["tokens_per_s"],
            "tokens/s",
            "tokens/median seconds to tokenise the text and pack it into B x S tensors, one process",
        )
        for r in rows
    ]
    train, train_file = (
        (a.train_tokens_per_s, "--train-tokens-per-s")
        if a.train_tokens_per_s
        else _latest_train_tokens_per_s(Path(a.out), env["device"])
    )
    notes = []
    if train:
        for r in rows:
            ratio = r["tokens_per_s"] / train
            d.append(
                derived(
                    f"{r['tokenizer']}_feed_ratio",
                    ratio,
                    "ratio",
                    f"{r['tokenizer']}_tokens_per_s / train-step tokens_per_s ({train:.4g}, {train_file})",
                )
            )
            d.append(
                derived(
                    f"{r['tokenizer']}_processes_needed",
                    float(math.ceil(1 / ratio)),
                    "processes",
                    f"ceil(1 / {r['tokenizer']}_feed_ratio); this host has {cpu_count()} CPUs",
                )
            )
    else:
        notes.append("no train-step result for this device in the output folder: no feed ratio")
    conf = {
        "text": "bench/data/sample.txt",
        "text_repeats": reps,
        "batch": batch,
        "seq": seq,
        "tokenizers": list(tokenizers),
        "regex_vocab": len(tok.vocab) + 256,
        "warmup": a.warmup,
        "iters": a.iters,
        "device": device,
        "train_tokens_per_s": train,
        "train_result": train_file,
    }
    summary = {k: summarize(v, "s") for k, v in samples.items()}
    return make_result(
        "dataloader",
        env,
        conf,
        samples,
        summary,
        d,
        table=rows,
        telemetry=tel.result(),
        notes=notes,
    )


# ------------------------------------------------------------------------------------------------
# max-batch
# ------------------------------------------------------------------------------------------------


def _is_oom(exc: BaseException) -> bool:
    import torch

    from .memlimit import BudgetExceeded

    return isinstance(exc, (BudgetExceeded, torch.cuda.OutOfMemoryError)) or (
        isinstance(exc, RuntimeError) and "out of memory" in str(exc)
    )


def _trial(model, batch, seq, vocab, device, dtype, budget):
    """Two training steps at `batch` with a fresh optimizer; returns the peak bytes. The second
    step is the steady state a real run repeats: its forward and backward run with the optimizer
    states already allocated (the first step creates them only inside `optimizer.step()`, so
    one step alone under-counts and over-states the largest batch). Gradients are dropped
    afterwards even when a step failed half-way (an OOM in backward leaves some)."""
    import torch

    from .memlimit import StorageTracker

    try:
        if is_cuda(device):
            torch.cuda.reset_peak_memory_stats()
            step = lm.TrainStep(model, batch, seq, vocab, device, dtype)
            step()
            step()
            torch.cuda.synchronize()
            return int(torch.cuda.max_memory_allocated())
        tracker = StorageTracker(existing=list(model.parameters()), budget_bytes=budget)
        with tracker:
            step = lm.TrainStep(model, batch, seq, vocab, device, dtype)
            step()
            step()
        return tracker.peak_bytes
    finally:
        step = None
        for p in model.parameters():
            p.grad = None


def search_max_batch(try_batch, cap: int) -> tuple[int, list[dict]]:
    """Largest b in [1, cap] with try_batch(b) succeeding: doubling until the first failure,
    then bisection between the last success and the first failure. `try_batch` returns the
    peak bytes or raises; out-of-memory is recorded and recovered, anything else propagates."""
    import torch

    trials: list[dict] = []

    def attempt(b: int) -> bool:
        t0 = time.perf_counter()
        err = None
        try:
            peak = try_batch(b)
        except Exception as exc:  # noqa: BLE001 - only OOM is swallowed
            if not _is_oom(exc):
                raise
            err = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            peak = None
        if err is not None:  # free what the failed step left behind before the next try
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        trials.append(
            {
                "batch": b,
                "fits": err is None,
                "peak_bytes": peak,
                "seconds": time.perf_counter() - t0,
                **({"error": err} if err else {}),
            }
        )
        return err is None

    good, bad = 0, None
    b = 1
    while b <= cap:
        if attempt(b):
            good = b
            b *= 2
        else:
            bad = b
            break
    if bad is None and good < cap:
        if attempt(cap):
            return cap, trials
        bad = cap
    if bad is None:
        return good, trials
    while bad - good > 1:
        mid = (good + bad) // 2
        if attempt(mid):
            good = mid
        else:
            bad = mid
    return good, trials


def run_max_batch(a) -> dict:
    device = _check_device(a.device)
    if not is_cuda(device) and not a.mem_budget_mib:  # before the model is built (seconds)
        raise AdvisorError(
            "bench.budget", "max-batch on CPU needs --mem-budget-mib", field="mem_budget_mib"
        )
    dtype = a.dtype or "fp32"
    seq = a.seq or 128
    cfg, spec, preset = lm.model_config(a.model, a.layers, lm.parse_overrides(a.set))
    env = environment(device)
    model = lm.build_model(cfg, device, dtype)
    budget = None
    if is_cuda(device):
        capacity = env["accelerator_memory_bytes"]
        limit_note = "the GPU's memory (torch.cuda.OutOfMemoryError caught and recovered)"
    else:
        budget = capacity = int(a.mem_budget_mib * 2**20)
        limit_note = (
            f"an imposed budget of {a.mem_budget_mib:g} MiB of live tensor bytes "
            "(StorageTracker raises BudgetExceeded)"
        )
    cap = a.max_batch_cap
    tel = Telemetry(device, a.telemetry_interval).start()
    try:
        best, trials = search_max_batch(
            lambda b: _trial(model, b, seq, spec.vocab_size, device, dtype, budget), cap
        )
    finally:
        tel.stop()
    d = [
        derived(
            "max_batch",
            float(best),
            "sequences",
            f"largest batch whose training step fits {limit_note}; doubling then bisection, cap {cap}",
        )
    ]
    pred_note = None
    try:
        from advisor.memory import estimate as memory

        setup = memory.TrainingSetup(
            model=spec, batch=1, seq=seq, precision=dtype, optimizer="adamw", attention="sdpa"
        )
        # advisor.memory.estimate.max_batch provisions total_bytes (peak + CUDA overheads); on CPU the
        # overheads do not exist, so compare against the allocated peak there.
        pred = memory.max_batch(setup, capacity) if is_cuda(device) else None
        if pred is None:
            lo, hi = 0, 1
            while (
                hi <= 1 << 20
                and memory.training_memory(
                    memory.TrainingSetup(**{**setup.__dict__, "batch": hi})
                ).peak_allocated_bytes
                <= capacity
            ):
                lo, hi = hi, hi * 2
            while hi - lo > 1:
                mid = (lo + hi) // 2
                fits = (
                    memory.training_memory(
                        memory.TrainingSetup(**{**setup.__dict__, "batch": mid})
                    ).peak_allocated_bytes
                    <= capacity
                )
                lo, hi = (mid, hi) if fits else (lo, mid)
            pred = lo
            rule = "largest b with advisor peak_allocated_bytes <= budget"
        else:
            rule = "advisor.memory.estimate.max_batch(setup, GPU memory) (uses total_bytes)"
        d.append(derived("predicted_max_batch", float(pred), "sequences", rule))
    except Exception as exc:  # noqa: BLE001
        pred_note = f"no advisor prediction: {type(exc).__name__}: {exc}"
    conf = {
        "model": a.model,
        "config_overrides": {"layers": a.layers, **lm.parse_overrides(a.set)},
        "hf_config": cfg,
        "seq": seq,
        "dtype": dtype,
        "capacity_bytes": capacity,
        "budget_kind": "cuda" if budget is None else "imposed",
        "max_batch_cap": cap,
        "device": device,
    }
    samples = {"trial_seconds": [t["seconds"] for t in trials]}
    return make_result(
        "max-batch",
        env,
        conf,
        samples,
        {"trial_seconds": summarize(samples["trial_seconds"], "s")},
        d,
        table=trials,
        telemetry=tel.result(),
        notes=[n for n in (pred_note,) if n],
    )
