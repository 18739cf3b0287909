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
3. Waiting for the prefill. Holding a slot does not start a request: the engine prefills the
   prompts one after another, first come first served (vLLM's scheduler; TensorRT-LLM's
   `context_chunking_policy: first_come_first_served`, the setting of NVIDIA's MLPerf v5.1
   configs), in chunks of at most `max_num_batched_tokens` tokens per iteration (vLLM
   `max_num_batched_tokens`, TensorRT-LLM `max_num_tokens`; default serving.
   MAX_NUM_BATCHED_TOKENS) that share each iteration with the decode step of the `c` running
   requests (Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310 §4: chunked prefills ride
   along ongoing decodes). So the prefill is one server per replica, busy for
       S = t_pf + t_d(c) * n,  n = L / (B - c) iterations (whole iterations, ceil, once L > B - c),
   t_pf a prompt's share of prefill compute in the steady-state cycle (serving.point), t_d(c) the
   decode step, B the token budget, L the prompt. With Poisson arrivals this is an M/G/1 queue
   at utilisation rho = lambda S; its mean wait is the Pollaczek-Khinchine formula
   W = lambda E[S^2] / (2 (1 - rho)) (Kleinrock 1975, Queueing Systems vol. 1, ch. 5), with
   E[S^2] = S^2 E[L^2] / E[L]^2 (S grows with the prompt; `prompt_moment2` = E[L^2] / E[L]^2, 1
   for prompts of one length, the dataset's for a benchmark's own prompts). rho -> 1 is the
   rate past which prompts queue without bound, below the slots' capacity where prompts are long:
   MLPerf's Llama 3.1 405B Server, 9.4k-token prompts, measures a mean TTFT of 1.4-1.8 s and a
   p99 of 3.4-5.1 s at 59-76 % of the Offline rate (NVIDIA v5.1 logs), where the slots' M/M/m
   wait is nil (issue 35).
4. TTFT = the slot wait + the prefill wait + the prefill of one prompt + one decode step
   (serving.point's TTFT, the wait for the next iteration) + the engine's per-request cost. The
   figures are means; a TTFT percentile (MLPerf's limits are p99, `max_rate(ttft_quantile=
   0.99)`) adds the two waits' percentiles (an upper bound of the sum's): the slot wait's from
   the M/M/m waiting-time distribution, P[W > t] = C(m, a) e^(-(m - a) t / T(m)) (Kleinrock
   1975, Queueing Systems vol. 1, §3.5: the conditional wait of an M/M/m queue is exponential
   with rate m mu - lambda); the prefill wait's with P[W = 0] = 1 - rho exactly (M/G/1) and the
   conditional wait taken as exponential with mean W / rho (exact for M/M/1, and the
   heavy-traffic limit of Kingman 1962, J. R. Stat. Soc. B 24(2)); the prefill and the step as
   they are (prompts of the mean length). TPOT stays the steady-state mean: a request's TPOT
   averages its own hundreds of decode steps, each shared with the same mix of prefills
   (MLPerf's logs: p99 TPOT 1.07-1.36x the mean). A TPOT limit on a percentile (MLPerf's p99)
   is checked as the mean times a stated percentile-to-mean ratio (`max_rate(tpot_tail_ratio=
   ...)`, a measured figure the caller supplies). Not derived: the spread from the prefills a
   request's decode shares its iterations with, K ~ Poisson(c) prompts of E[L^2]/E[L]^2 spread
   over its n steps (sd = (TPOT - t_d) sqrt(E[L^2]/E[L]^2 / c)), gives 1.03-1.04 on NVIDIA's
   Llama 2 70B logs (logged 1.07-1.12) and 1.20-1.21 on Llama 3.1 405B (logged 1.09-1.36):
   the answers' own length spread (short answers average few steps) and the batch's drift are
   missing from it, so a measured ratio is used instead.
5. Gathered prefills (`scheduler_steps` S > 1, chunked prefill off: vLLM's multi-step scheduling,
   `num_scheduler_steps`, with `enable_chunked_prefill: False`, as AMD's MLPerf Llama 2 70B
   Server config, harness_llm/models/llama2-70b/server_mi325x.yaml of mlcommons/
   inference_results_v5.1 closed/AMD). The scheduler runs only between groups of S decode
   steps, and a step is either prefill or decode, so prompts do not ride along the decodes
   (3): every prompt that arrived during a cycle is prefilled in one batch at the cycle's end.
   AMD's patch add-MIN_REQUIRE_PREFILL_QUERY-condition.patch (same repository, closed/AMD/setup/
   vllm_patches) adds `do_prefill = do_prefill and (len(waiting) >= MIN_REQUIRE_PREFILL_QUERY
   or self._do_prefill); self._do_prefill = not do_prefill`: right after a prefill the next
   one waits for `prefill_min_queue` prompts, else a group of S decode steps runs first. While
   the prompts that arrive during one prefill batch are fewer than that (lambda P < q, the
   regime of the run: about 5 against 10), the cycle is one prefill batch and S decode steps,
   C = P + S t_d(c), the same cycle as serving.point's (C = S TPOT, its TPOT = t_d + the
   prefill share), P = C - S t_d. A prompt arrives at a uniform point of the cycle, waits C / 2
   on average for the next batch, and gets its first token when that batch ends (vLLM's
   prefill step samples it): TTFT = the slot wait + C / 2 + P + the engine's per-request cost;
   this replaces (3)'s prefill wait and one-prompt prefill. Where lambda P >= q (q = 0: no
   gate, vLLM's own prefill-first order) the prompts that arrive during a prefill are
   prefilled at once, not a group later: the formula then errs long. A TTFT percentile
   (`max_rate(ttft_quantile=q)`, 4) takes the wait for the next batch as uniform on [0, C]:
   its q-quantile is q C.

The largest rate within limits is found by bisection on lambda (TTFT and TPOT grow with it);
the rate where a = m is the capacity, at which the queue grows without bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.errors import AdvisorError, check_int, check_positive
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
    prefill_utilisation: float = 0.0  # the prefill server's rho (module docstring, 3)
    prefill_wait_s: float = 0.0  # its mean wait (Pollaczek-Khinchine), part of queue_wait_s
    prefill_cycle_s: float = 0.0  # gathered prefills: the cycle C (module docstring 5), else 0

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

    def __init__(
        self,
        spec,
        gpu,
        kw: dict,
        top: int,
        replicas: int,
        budget: int = serving.MAX_NUM_BATCHED_TOKENS,
        moment2: float = 1.0,
        steps: int = 1,
        min_queue: int = 0,
    ):
        self.spec, self.gpu, self.kw, self.top, self.replicas = spec, gpu, kw, top, replicas
        self.budget, self.moment2 = budget, moment2
        self.steps, self.min_queue = steps, min_queue
        self._pts: dict[int, serving.ServingPoint] = {}

    def at(self, c: int) -> serving.ServingPoint:
        if c not in self._pts:
            self._pts[c] = serving.point(self.spec, self.gpu, concurrency=c, **self.kw)
        return self._pts[c]

    def rate(self, c: int) -> float:
        """Requests per second one replica completes with `c` in flight."""
        return self.at(c).requests_per_s / self.replicas


def _setup(spec, gpu, kw: dict, max_num_seqs: int):
    kw = dict(kw)
    budget = kw.pop("max_num_batched_tokens", None)
    budget = serving.MAX_NUM_BATCHED_TOKENS if budget is None else budget
    budget = check_int("max_num_batched_tokens", budget, maximum=1 << 20)
    on_demand = bool(kw.pop("kv_on_demand", False))
    steps = kw.pop("scheduler_steps", None)
    steps = 1 if steps is None else check_int("scheduler_steps", steps, maximum=1024)
    min_queue = kw.pop("prefill_min_queue", None)
    min_queue = (
        0
        if min_queue is None
        else check_int("prefill_min_queue", min_queue, minimum=0, maximum=1 << 20)
    )
    moment2 = kw.pop("prompt_moment2", None)
    moment2 = 1.0 if moment2 is None else check_positive("prompt_moment2", moment2, maximum=100.0)
    if moment2 < 1.0:
        raise AdvisorError(
            "field.too_small",
            f"prompt_moment2: must be at least 1 (E[L^2] / E[L]^2), got {moment2:g}",
            field="prompt_moment2",
            value=moment2,
            minimum=1,
        )
    # a replica is tensor_parallel x pipeline_parallel GPUs (serving.point)
    tp = kw.get("tensor_parallel", 1) * kw.get("pipeline_parallel", 1)
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
            "pipeline_parallel",
        )
        if k in kw
    }
    kv_max = serving.max_concurrency(spec, gpu, **mkw, kv_on_demand=on_demand)
    top = min(kv_max, max_num_seqs)
    if top < 1:
        raise AdvisorError(
            "serving.no_room",
            f"gpu: the weights of {spec.name} leave no room for one request's KV cache",
            field="gpu",
            gpu=gpu.id,
        )
    return _Curve(spec, gpu, kw, top, replicas, budget, moment2, steps, min_queue)


def capacity(spec, gpu, *, max_num_seqs: int = serving.MAX_NUM_SEQS, **kw) -> float:
    """Requests per second (all replicas) at which the slots are always full: the rate past
    which the queue for a slot grows without bound (module docstring, 2). With long prompts
    the prefill server saturates first (rho = 1, module docstring 3): `at_rate` refuses such a
    rate naming the prefill's, and `max_rate` stays below it."""
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
    gpus = cv.kw.get("gpus") or cv.kw.get("tensor_parallel", 1) * cv.kw.get("pipeline_parallel", 1)
    out = cv.kw["output_tokens"]
    # 3. the prefill server: M/G/1, Pollaczek-Khinchine
    service = _prefill_service_s(cv, a_pt, b_pt, f, c_real)
    rho = lam * service
    if rho >= 1.0:
        raise AdvisorError(
            "serving.rate_above_capacity",
            f"request_rate: {lam_total:.4g} requests/s is at or above what {cv.replicas} "
            f"replica(s) prefill ({lam_total / rho:.4g}/s, prompts of "
            f"{cv.kw['input_tokens']} tokens): the prompts queue without bound",
            field="request_rate",
            maximum=lam_total / rho,
        )
    pf_wait = lam * cv.moment2 * service * service / (2.0 * (1.0 - rho))
    cycle = 0.0
    if cv.steps > 1:
        # 5. gathered prefills: a batch every cycle C = S TPOT, the wait C / 2 + the batch P
        step = a_pt.decode_step_s + f * (b_pt.decode_step_s - a_pt.decode_step_s)
        one = a_pt.prefill_s + f * (b_pt.prefill_s - a_pt.prefill_s)
        cycle = cv.steps * tpot
        batch = max(0.0, cycle - cv.steps * step)
        pf_wait = cycle / 2.0 + batch - one
        ttft0 = ttft0 - step
    tokens = lam_total * out
    return LoadPoint(
        request_rate_per_s=lam_total,
        concurrency=c_real,
        max_concurrency=m,
        utilisation=offered / m,
        wait_probability=pw,
        queue_wait_s=wait + pf_wait,
        ttft_s=ttft0 + wait + pf_wait,
        tpot_s=tpot,
        tokens_per_s_per_user=1.0 / tpot,
        tokens_per_s=tokens,
        tokens_per_s_per_gpu=tokens / gpus,
        prefill_utilisation=rho,
        prefill_wait_s=pf_wait,
        prefill_cycle_s=cycle,
    )


def _prefill_service_s(cv: _Curve, a_pt, b_pt, f: float, c_real: float) -> float:
    """S of the module docstring (3): a prompt's share of prefill in the steady-state cycle
    (serving.point: cycle = c t_pf + output t_d, so t_pf = output (TPOT - t_d) / c), plus the
    decode steps of the iterations its chunks ride in."""
    out = cv.kw["output_tokens"]

    def t_pf(pt) -> float:
        return max(0.0, out * (pt.tpot_s - pt.decode_step_s) / pt.concurrency)

    pf = t_pf(a_pt) + f * (t_pf(b_pt) - t_pf(a_pt))
    step = a_pt.decode_step_s + f * (b_pt.decode_step_s - a_pt.decode_step_s)
    prompt = cv.kw["input_tokens"]
    room = max(1.0, cv.budget - c_real)
    iterations = prompt / room if prompt <= room else math.ceil(prompt / room)
    return pf + step * iterations


def prefill_wait_quantile_s(point: LoadPoint, quantile: float) -> float:
    """The `quantile` of the prefill wait at `point` (module docstring, 4): 0 while rho is at
    most 1 - quantile (P[W = 0] = 1 - rho), else (W / rho) ln(rho / (1 - quantile)). Gathered
    prefills (module docstring 5): the wait for the next batch is uniform on [0, C], so the
    quantile is quantile C + the rest of the mean wait (the batch less one prompt's prefill)."""
    if point.prefill_cycle_s > 0.0:
        cycle = point.prefill_cycle_s
        return quantile * cycle + point.prefill_wait_s - cycle / 2.0
    tail = 1.0 - quantile
    rho = point.prefill_utilisation
    if rho <= tail or point.prefill_wait_s <= 0.0:
        return 0.0
    return point.prefill_wait_s / rho * math.log(rho / tail)


def wait_quantile_s(point: LoadPoint, hold_s: float, quantile: float) -> float:
    """The `quantile` of the queue wait at `point` (module docstring, 3): 0 while the
    probability of waiting C is at most 1 - quantile, else T(m) ln(C / (1 - quantile)) / (m - a),
    `hold_s` = T(m) the time a slot is held at full load."""
    tail = 1.0 - quantile
    if point.wait_probability <= tail:
        return 0.0
    free = point.max_concurrency * (1.0 - point.utilisation)
    return hold_s * math.log(point.wait_probability / tail) / free


def tpot_tail_ratio_checked(ratio: float) -> float:
    """A TPOT percentile-to-mean ratio (max_rate's `tpot_tail_ratio`): finite, at least 1 (the
    limited percentile lies above the mean) and at most 10."""
    ratio = check_positive("tpot_tail_ratio", ratio, maximum=10.0)
    if ratio < 1.0:
        raise AdvisorError(
            "field.too_small",
            f"tpot_tail_ratio: must be at least 1 (a TPOT percentile over the mean), got {ratio:g}",
            field="tpot_tail_ratio",
            value=ratio,
            minimum=1,
        )
    return ratio


def at_rate(
    spec, gpu, *, request_rate: float, max_num_seqs: int = serving.MAX_NUM_SEQS, **kw
) -> LoadPoint:
    """TTFT, TPOT and throughput at `request_rate` requests per second arriving at random (all
    replicas); `kw` as serving.point's (input_tokens, output_tokens, weights, kv_dtype,
    tensor_parallel, pipeline_parallel, gpus, engine, speculative, prefix_hit_rate,
    cuda_graphs), and `kv_on_demand` (serving.max_concurrency: the slots of a scheduler that
    admits requests while KV blocks remain), `scheduler_steps` and `prefill_min_queue` (vLLM's
    multi-step scheduling with chunked prefill off, AMD's MLPerf prefill gate: module
    docstring 5). A rate at or above the capacity is refused naming
    `request_rate`."""
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
    tpot_tail_ratio: float | None = None,
    **kw,
) -> LoadPoint | None:
    """The largest request rate (all replicas) whose mean TTFT and TPOT stay within the limits
    (either may be None), and the load point there; None if even a trickle of requests misses
    them. `ttft_quantile` (e.g. 0.99, MLPerf's p99): the TTFT limit applies to that percentile
    of TTFT (the queue wait's percentile, `wait_quantile_s`), not to the mean.
    `tpot_tail_ratio` (>= 1): the TPOT limit applies to the mean TPOT times this ratio, the
    limited percentile over the mean (module docstring 4; MLPerf's logs: p99 / mean 1.07-1.36),
    not to the mean. Bisection between 0 and the capacity."""
    if ttft_s is not None:
        check_positive("ttft_s", ttft_s, maximum=3600.0)
    if tpot_s is not None:
        check_positive("tpot_s", tpot_s, maximum=3600.0)
    if ttft_quantile is not None:
        check_positive("ttft_quantile", ttft_quantile, maximum=0.9999)
    tail = 1.0 if tpot_tail_ratio is None else tpot_tail_ratio_checked(tpot_tail_ratio)
    cv = _setup(spec, gpu, kw, max_num_seqs)
    cap = cv.rate(cv.top) * cv.replicas
    hold = cv.top / cv.rate(cv.top)

    def ttft(p: LoadPoint) -> float:
        if ttft_quantile is None:
            return p.ttft_s
        return (
            p.ttft_s
            - p.queue_wait_s
            + wait_quantile_s(p, hold, ttft_quantile)
            + prefill_wait_quantile_s(p, ttft_quantile)
        )

    def ok(p: LoadPoint | None) -> bool:
        return (
            p is not None
            and (ttft_s is None or ttft(p) <= ttft_s)
            and (tpot_s is None or p.tpot_s * tail <= tpot_s)
        )

    def at(rate: float) -> LoadPoint | None:
        try:
            return _at(cv, rate)
        except AdvisorError as exc:  # past the prefill server's capacity (module docstring, 3)
            if exc.key != "serving.rate_above_capacity":
                raise
            return None

    lo, hi = cap * 1e-6, cap * (1 - 1e-9)
    first = at(lo)
    if not ok(first):
        return None
    best = first
    top = at(hi)
    if ok(top):
        return top
    for _ in range(BISECTION_STEPS):
        mid = math.sqrt(lo * hi) if hi / lo > 4 else (lo + hi) / 2
        p = at(mid)
        if ok(p):
            lo, best = mid, p
        else:
            hi = mid
        if hi - lo <= 1e-4 * hi:
            break
    return best
