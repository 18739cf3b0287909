"""An offline job: a finite set of fixed-length requests, all queued at once, run by an
in-flight batching scheduler (an offline batch job; `trtllm-bench throughput`, which "will run
an offline maximum throughput scenario such that all requests are queued in rapid succession",
TensorRT-LLM docs/source/developer-guide/perf-overview.md, stored commit 03e27c7).

Scheduler (`schedule`): each iteration runs every sequence in generation first (one token each),
then admits whole prompts while the iteration's tokens stay within `max_num_tokens` and the
sequences within `max_batch` ("TRT-LLM prioritizes scheduling requests in generation phase
first"; with two 5-token prompts in a 12-token budget "it cannot schedule any more requests
because the prompts of the first two requests had 5 tokens each, leaving a budget of 2
tokens"; a request waits "because of the max batch size limit"; TensorRT-LLM docs/source/
performance/performance-tuning-guide/tuning-max-batch-size-and-max-num-tokens.md,
"Understanding the TensorRT-LLM scheduler", read 2026-12-06). Without context chunking a
prompt is admitted whole. A prompt's iteration emits its first token; the request then
generates in the next `output_tokens - 1` iterations and leaves.

Time (`run`): an iteration lasts the decode step at its generating sequences plus the prefill
of the prompts it admits (the same sum as the steady states of advisor.perf.serving.point and
advisor.perf.expert_parallel.point). So a job ramps up at a few prompts per iteration and
drains as its last requests finish: more iterations, each at a smaller batch, than the steady
state at `max_batch`, which is the job's limit for many more requests than `max_batch`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..core.errors import AdvisorError, check_int

# a job longer than this many scheduler iterations is refused (`schedule`)
MAX_ITERATIONS = 2_000_000


def schedule(
    requests: int, *, max_batch: int, max_num_tokens: int, input_tokens: int, output_tokens: int
) -> tuple[tuple[int, int], ...]:
    """(sequences generating, prompts admitted) for each iteration of an offline job of
    `requests` fixed-length requests on one replica (module docstring)."""
    n_req = check_int("requests_per_gpu", requests, maximum=1 << 20)
    mb = check_int("max_batch", max_batch, maximum=1 << 16)
    mnt = check_int("max_num_tokens", max_num_tokens, maximum=1 << 22)
    isl = check_int("input_tokens", input_tokens, maximum=1 << 22)
    osl = check_int("output_tokens", output_tokens, maximum=1 << 22)
    if mnt < isl:
        raise AdvisorError(
            "ep.max_num_tokens",
            f"max_num_tokens: {mnt} tokens per iteration cannot hold a {isl}-token prompt",
            field="max_num_tokens",
            value=mnt,
            minimum=isl,
        )
    # iterations: every wave of max_batch generates output_tokens times, plus its admissions
    if (-(-n_req // mb)) * osl + n_req > MAX_ITERATIONS:
        raise AdvisorError(
            "ep.offline_too_long",
            f"requests_per_gpu: {n_req} requests of {osl} output tokens at {mb} at a time run "
            f"more than {MAX_ITERATIONS} iterations; use the steady state instead",
            field="requests_per_gpu",
            value=n_req,
        )
    waiting, n, it = n_req, 0, 0
    leaving: dict[int, int] = {}
    out = []
    while waiting or n:
        p = max(0, min(waiting, mb - n, (mnt - n) // isl))
        out.append((n, p))
        it += 1
        waiting -= p
        if osl > 1 and p:
            leaving[it + osl - 1] = leaving.get(it + osl - 1, 0) + p
            n += p
        n -= leaving.pop(it, 0)
    return tuple(out)


# batch sizes the decode step is evaluated at between 1 and the job's largest batch (`run`)
STEP_NODES = 32


def _interpolated(f: Callable[[int], float], top: int, *, exact: bool) -> Callable[[int], float]:
    """f at every n (cached) when `exact`, else f at STEP_NODES + 1 batch sizes from 1 to
    `top`, linear between them."""
    cache: dict[int, float] = {}

    def at(n: int) -> float:
        if n not in cache:
            cache[n] = f(n)
        return cache[n]

    if exact or top <= STEP_NODES + 1:
        return at
    nodes = sorted({1, top} | {max(1, round(top * i / STEP_NODES)) for i in range(1, STEP_NODES)})

    def interp(n: int) -> float:
        if n in cache or n in nodes:
            return at(n)
        hi = next(x for x in nodes if x > n)
        lo = nodes[nodes.index(hi) - 1]
        w = (n - lo) / (hi - lo)
        return (1 - w) * at(lo) + w * at(hi)

    return interp


@dataclass(frozen=True)
class OfflineRun:
    requests_per_gpu: int  # requests of one replica (one GPU of an EP group)
    max_batch: int
    max_num_tokens: int
    iterations: int
    mean_batch: float  # sequences generating per iteration, averaged over the job
    seconds: float
    tokens_per_s_per_gpu: float  # output tokens (the first included) / job time
    steady_tokens_per_s_per_gpu: float  # the steady state at max_batch: a long job's limit

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@functools.lru_cache(maxsize=512)
def _job(requests, max_batch, max_num_tokens, input_tokens, output_tokens) -> tuple:
    """`schedule` summed up: (iterations, prompts admitted, sum of the generating sequences,
    ((batch, iterations at it), ...)); cached, as a job's schedule does not depend on the
    step times (the validation's fit re-times the same jobs under many stacks)."""
    sched = schedule(
        requests,
        max_batch=max_batch,
        max_num_tokens=max_num_tokens,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
    counts: dict[int, int] = {}
    for n, _ in sched:
        counts[n] = counts.get(n, 0) + 1
    return (
        len(sched),
        sum(p for _, p in sched),
        sum(n for n, _ in sched),
        tuple(sorted(counts.items())),
    )


def run(
    requests: int,
    *,
    max_batch: int,
    max_num_tokens: int,
    input_tokens: int,
    output_tokens: int,
    decode_step_s: Callable[[int], float],
    prefill_per_prompt_s: float,
    steady_tokens_per_s_per_gpu: float,
    gpus_per_replica: int = 1,
    exact_steps: bool = False,
) -> OfflineRun:
    """The job's time over `schedule` (module docstring): `decode_step_s(n)` per iteration with
    n > 0 generating sequences plus `prefill_per_prompt_s` per admitted prompt; tokens/s per
    GPU over `gpus_per_replica` GPUs. The decode step is evaluated at STEP_NODES + 1 batch
    sizes and interpolated linearly between them (`exact_steps`: at every batch the job
    passes through; the two agree within 1 %, tests/test_serving_load.py)."""
    iterations, prompts, batch_sum, counts = _job(
        requests, max_batch, max_num_tokens, input_tokens, output_tokens
    )
    step = _interpolated(decode_step_s, max(n for n, _ in counts) or 1, exact=exact_steps)
    # the same sum as over the iterations, grouped by the batch they decode at
    seconds = sum(c * step(n) for n, c in counts if n) + prompts * prefill_per_prompt_s
    return OfflineRun(
        requests_per_gpu=requests,
        max_batch=max_batch,
        max_num_tokens=max_num_tokens,
        iterations=iterations,
        mean_batch=batch_sum / iterations,
        seconds=seconds,
        tokens_per_s_per_gpu=requests * output_tokens / seconds / gpus_per_replica,
        steady_tokens_per_s_per_gpu=steady_tokens_per_s_per_gpu,
    )


def serving_run(
    spec,
    gpu,
    *,
    requests: int,
    max_batch: int,
    max_num_tokens: int,
    input_tokens: int,
    output_tokens: int,
    **point_kw,
) -> OfflineRun:
    """An offline job on one replica of advisor.perf.serving (tensor parallelism within it):
    each iteration's decode step is serving.point's at its generating sequences (the engine's
    per-sequence overhead included), each prompt's prefill the share serving.point's steady
    cycle gives it at `max_batch`."""
    from . import serving

    def at(c: int):
        return serving.point(
            spec,
            gpu,
            concurrency=c,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            **point_kw,
        )

    full = at(max_batch)
    tp = int(point_kw.get("tensor_parallel") or 1)
    # one replica's steady cycle: max_batch requests' output over its tokens/s (tp GPUs)
    cycle = max_batch * output_tokens / (full.tokens_per_s_per_gpu * tp)
    pf = (cycle - output_tokens * full.decode_step_s) / max_batch
    return run(
        requests,
        max_batch=max_batch,
        max_num_tokens=max_num_tokens,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        decode_step_s=lambda n: at(n).decode_step_s,
        prefill_per_prompt_s=pf,
        steady_tokens_per_s_per_gpu=full.tokens_per_s_per_gpu,
        gpus_per_replica=tp,
    )
