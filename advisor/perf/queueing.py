"""Serving at a request rate: TTFT and TPOT when requests arrive at random at `request_rate`
per second (MLPerf Inference's Server scenario issues queries as a Poisson process, MLPerf
Inference rules §3 "Scenarios"; `vllm bench serve --request-rate R` draws Poisson arrivals,
its `--burstiness 1`), and the largest rate that meets TTFT and TPOT limits.

The queueing model, stated:

1. In flight. Each replica runs continuous batching (advisor.perf.serving): with `c` requests in
   flight it completes r(c) = c / T(c) requests per second, T(c) the time a request spends in
   the batch (its prefill and its `output_tokens` decode steps among the others). By Little's
   law (Little 1961, Operations Research 9(3)), N = lambda W: at an arrival rate lambda per
   replica that the batch can serve, the mean number in flight is the `c` with r(c) = lambda
   (r grows with c; between two whole concurrencies the point is interpolated linearly). TPOT
   and tokens per second per user are those of the steady state at that `c`.
2. Waiting for a slot. A replica holds at most `m` requests (the KV cache and max_num_seqs,
   serving.plan's `max_concurrency`); a request that finds them all busy waits. The `m` slots
   are taken as the `m` servers of an M/M/m queue (Erlang C: Erlang 1917; Kleinrock 1975,
   Queueing Systems vol. 1 §3.5), each holding a request for T(m), the time in the batch at full
   load: offered load a = lambda T(m), probability of waiting C(m, a), mean wait
   W_q = C(m, a) T(m) / (m - a). The exponential holding time overstates the variance of fixed
   prompt and answer lengths (an M/D/m queue waits less), so W_q errs long.
3. TTFT = W_q + the prefill of one prompt + one decode step (serving.point's TTFT, the wait
   for the next iteration) + the engine's per-request cost. The figures are means; a TTFT
   percentile (MLPerf's limits are p99, `max_rate(ttft_quantile=0.99)`) takes the wait's
   percentile from the M/M/m waiting-time distribution, P[W > t] = C(m, a) e^(-(m - a) t / T(m))
   (Kleinrock 1975, Queueing Systems vol. 1, §3.5: the conditional wait of an M/M/m queue is
   exponential with rate m mu - lambda), with the prefill and the step as they are (prompts of
   the mean length). TPOT stays the steady-state mean: a request's TPOT averages its own
   hundreds of decode steps, each shared with the same mix of prefills.

The largest rate within limits is found by bisection on lambda (TTFT and TPOT grow with it);
the rate where a = m is the capacity, at which the queue grows without bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.errors import AdvisorError, check_positive
from . import serving

BISECTION_STEPS = 60


@dataclass(frozen=True)
class LoadPoint:
    request_rate_per_s: float  # all replicas
    concurrency: float  # mean requests in flight per replica (Little's law)
    max_concurrency: int  # slots per replica
    utilisation: float  # offered load / slots (Erlang C's rho)
    wait_probability: float  # Erlang C
    queue_wait_s: float
    ttft_s: float
    tpot_s: float
    tokens_per_s_per_user: float
    tokens_per_s: float  # output tokens, all replicas
    tokens_per_s_per_gpu: float

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def erlang_c(servers: int, offered: float) -> float:
    """Probability that an arrival waits in an M/M/m queue with `servers` servers and offered
    load `offered` (Erlang C), through the Erlang B recursion B(k) = a B(k-1) / (k + a B(k-1))
    (numerically stable for large m); 1 when the load reaches the servers."""
    if offered >= servers:
        return 1.0
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    return servers * b / (servers - offered * (1.0 - b))


class _Curve:
    """serving.point at whole concurrencies 1..m, computed on demand and kept."""

    def __init__(self, spec, gpu, kw: dict, top: int, replicas: int):
        self.spec, self.gpu, self.kw, self.top, self.replicas = spec, gpu, kw, top, replicas
        self._pts: dict[int, serving.ServingPoint] = {}

    def at(self, c: int) -> serving.ServingPoint:
        if c not in self._pts:
            self._pts[c] = serving.point(self.spec, self.gpu, concurrency=c, **self.kw)
        return self._pts[c]

    def rate(self, c: int) -> float:
        """Requests per second one replica completes with `c` in flight."""
        return self.at(c).requests_per_s / self.replicas


def _setup(spec, gpu, kw: dict, max_num_seqs: int):
    tp = kw.get("tensor_parallel", 1)
    gpus = kw.get("gpus") or tp
    replicas = max(1, gpus // tp)
    mkw = {
        k: kw[k]
        for k in (
            "input_tokens",
            "output_tokens",
            "weights",
            "kv_dtype",
            "tensor_parallel",
            "engine",
        )
        if k in kw
    }
    kv_max = serving.max_concurrency(spec, gpu, **mkw)
    top = min(kv_max, max_num_seqs)
    if top < 1:
        raise AdvisorError(
            "serving.no_room",
            f"gpu: the weights of {spec.name} leave no room for one request's KV cache",
            field="gpu",
            gpu=gpu.id,
        )
    return _Curve(spec, gpu, kw, top, replicas)


def capacity(spec, gpu, *, max_num_seqs: int = serving.MAX_NUM_SEQS, **kw) -> float:
    """Requests per second (all replicas) at which the slots are always full: the rate past
    which the queue grows without bound (module docstring, 2)."""
    cv = _setup(spec, gpu, kw, max_num_seqs)
    return cv.rate(cv.top) * cv.replicas


def _at(cv: _Curve, lam_total: float) -> LoadPoint:
    lam = lam_total / cv.replicas
    m = cv.top
    full = cv.rate(m)
    if lam >= full:
        raise AdvisorError(
            "serving.rate_above_capacity",
            f"request_rate: {lam_total:.4g} requests/s is at or above what "
            f"{cv.replicas} replica(s) serve with every slot busy ({full * cv.replicas:.4g}/s): "
            "the queue grows without bound",
            field="request_rate",
            maximum=full * cv.replicas,
        )
    # 1. Little's law: the concurrency whose completion rate is the arrival rate
    lo, hi = 1, m
    if cv.rate(1) >= lam:
        # at most one request in flight: the batch is often empty and a request decodes alone
        c_real, a_pt, b_pt, f = lam / cv.rate(1), cv.at(1), cv.at(1), 0.0
    else:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if cv.rate(mid) >= lam:
                hi = mid
            else:
                lo = mid
        r_lo, r_hi = cv.rate(lo), cv.rate(hi)
        f = (lam - r_lo) / (r_hi - r_lo) if r_hi > r_lo else 1.0
        c_real = lo + f * (hi - lo)
        a_pt, b_pt = cv.at(lo), cv.at(hi)
    tpot = a_pt.tpot_s + f * (b_pt.tpot_s - a_pt.tpot_s)
    ttft0 = a_pt.ttft_s + f * (b_pt.ttft_s - a_pt.ttft_s)
    # 2. Erlang C over the m slots, each held T(m) = m / r(m)
    hold = m / full
    offered = lam * hold
    pw = erlang_c(m, offered)
    wait = pw * hold / (m - offered)
    gpus = cv.kw.get("gpus") or cv.kw.get("tensor_parallel", 1)
    out = cv.kw["output_tokens"]
    tokens = lam_total * out
    return LoadPoint(
        request_rate_per_s=lam_total,
        concurrency=c_real,
        max_concurrency=m,
        utilisation=offered / m,
        wait_probability=pw,
        queue_wait_s=wait,
        ttft_s=ttft0 + wait,
        tpot_s=tpot,
        tokens_per_s_per_user=1.0 / tpot,
        tokens_per_s=tokens,
        tokens_per_s_per_gpu=tokens / gpus,
    )


def wait_quantile_s(point: LoadPoint, hold_s: float, quantile: float) -> float:
    """The `quantile` of the queue wait at `point` (module docstring, 3): 0 while the
    probability of waiting C is at most 1 - quantile, else T(m) ln(C / (1 - quantile)) / (m - a),
    `hold_s` = T(m) the time a slot is held at full load."""
    tail = 1.0 - quantile
    if point.wait_probability <= tail:
        return 0.0
    free = point.max_concurrency * (1.0 - point.utilisation)
    return hold_s * math.log(point.wait_probability / tail) / free


def at_rate(
    spec, gpu, *, request_rate: float, max_num_seqs: int = serving.MAX_NUM_SEQS, **kw
) -> LoadPoint:
    """TTFT, TPOT and throughput at `request_rate` requests per second arriving at random (all
    replicas); `kw` as serving.point's (input_tokens, output_tokens, weights, kv_dtype,
    tensor_parallel, gpus, engine, speculative, prefix_hit_rate). A rate at or above the
    capacity is refused naming `request_rate`."""
    rate = check_positive("request_rate", request_rate, maximum=1e7)
    return _at(_setup(spec, gpu, kw, max_num_seqs), rate)


def max_rate(
    spec,
    gpu,
    *,
    ttft_s: float | None = None,
    tpot_s: float | None = None,
    max_num_seqs: int = serving.MAX_NUM_SEQS,
    ttft_quantile: float | None = None,
    **kw,
) -> LoadPoint | None:
    """The largest request rate (all replicas) whose mean TTFT and TPOT stay within the limits
    (either may be None), and the load point there; None if even a trickle of requests misses
    them. `ttft_quantile` (e.g. 0.99, MLPerf's p99): the TTFT limit applies to that percentile
    of TTFT (the queue wait's percentile, `wait_quantile_s`), not to the mean. Bisection between 0 and the capacity."""
    if ttft_s is not None:
        check_positive("ttft_s", ttft_s, maximum=3600.0)
    if tpot_s is not None:
        check_positive("tpot_s", tpot_s, maximum=3600.0)
    if ttft_quantile is not None:
        check_positive("ttft_quantile", ttft_quantile, maximum=0.9999)
    cv = _setup(spec, gpu, kw, max_num_seqs)
    cap = cv.rate(cv.top) * cv.replicas
    hold = cv.top / cv.rate(cv.top)

    def ttft(p: LoadPoint) -> float:
        if ttft_quantile is None:
            return p.ttft_s
        return p.ttft_s - p.queue_wait_s + wait_quantile_s(p, hold, ttft_quantile)

    def ok(p: LoadPoint) -> bool:
        return (ttft_s is None or ttft(p) <= ttft_s) and (tpot_s is None or p.tpot_s <= tpot_s)

    lo, hi = cap * 1e-6, cap * (1 - 1e-9)
    first = _at(cv, lo)
    if not ok(first):
        return None
    best = first
    if ok(_at(cv, hi)):
        return _at(cv, hi)
    for _ in range(BISECTION_STEPS):
        mid = math.sqrt(lo * hi) if hi / lo > 4 else (lo + hi) / 2
        p = _at(cv, mid)
        if ok(p):
            lo, best = mid, p
        else:
            hi = mid
        if hi - lo <= 1e-4 * hi:
            break
    return best
