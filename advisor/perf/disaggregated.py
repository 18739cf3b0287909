"""Disaggregated serving: prefill and decode on separate pools of GPUs, each with its own layout,
the KV cache of every prompt sent from its prefill GPU to a decode GPU over the fabric
(DistServe, Zhong et al. 2024, arXiv:2401.09670 §3; Splitwise, Patel et al. 2024,
arXiv:2311.18677; DeepSeek-V3 §3.4 "prefilling and decoding stages" deployed apart). `split`
finds the number of prefill and decode instances, out of `gpus`, that serves the most requests
per second with the mean TTFT and TPOT within their targets.

The model, stated:
- A decode instance (`decode_tp` GPUs) runs only decode steps: with `c` sequences its TPOT is
  one decode step (advisor.perf.serving's decode step at concurrency c), and it finishes
  c / (output_tokens x TPOT) requests per second. The largest `c` of serving.plan's levels
  whose step meets the TPOT target is used (the KV cache and max_num_seqs bound it).
- A prefill instance (`prefill_tp` GPUs) prefills one prompt at a time in S seconds (no batching
  of prompts: conservative for short prompts). `n` of them under random arrivals are an M/M/n
  queue (Erlang C, advisor.perf.queueing): TTFT = wait + S + KV transfer + one decode step.
- KV transfer: the prompt's KV cache (timing.kv_read_bytes) over the prefill instance's
  scale-out NICs, `nic_gb_per_s` each (400 Gb/s = 50 GB/s by default), not overlapped with the
  prefill (layer-by-layer streaming, as in DistServe §4, would hide part of it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import AdvisorError, check_int, check_positive
from . import queueing, serving
from .timing import kv_read_bytes

NIC_GB_PER_S = 50.0


@dataclass(frozen=True)
class DisaggPlan:
    prefill_instances: int
    prefill_tp: int
    decode_instances: int
    decode_tp: int
    decode_concurrency: int  # sequences per decode instance
    request_rate_per_s: float  # the largest that meets both targets
    ttft_s: float
    tpot_s: float
    kv_transfer_s: float
    prefill_s: float
    tokens_per_s: float
    tokens_per_s_per_gpu: float  # over all the plan's GPUs

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def split(
    spec,
    gpu,
    *,
    gpus: int,
    input_tokens: int,
    output_tokens: int,
    ttft_s: float,
    tpot_s: float,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    prefill_tp: int = 1,
    decode_tp: int = 1,
    engine: str = "vllm",
    nic_gb_per_s: float = NIC_GB_PER_S,
) -> DisaggPlan | None:
    """The split of `gpus` into prefill and decode instances that serves the most requests per
    second within the TTFT and TPOT targets (module docstring); None if no split meets them."""
    n = check_int("gpus", gpus, maximum=1 << 20)
    ptp = check_int("prefill_tp", prefill_tp, maximum=72)
    dtp = check_int("decode_tp", decode_tp, maximum=72)
    check_positive("ttft_s", ttft_s, maximum=3600.0)
    check_positive("tpot_s", tpot_s, maximum=3600.0)
    check_positive("nic_gb_per_s", nic_gb_per_s, maximum=10_000.0)
    if n < ptp + dtp:
        raise AdvisorError(
            "disagg.too_few_gpus",
            f"gpus: {n} cannot hold one prefill ({ptp}) and one decode ({dtp}) instance",
            field="gpus",
            minimum=ptp + dtp,
        )
    kw = dict(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        weights=weights,
        kv_dtype=kv_dtype,
        engine=engine,
    )
    # decode instance: the largest concurrency whose decode step meets the TPOT target
    dplan = serving.plan(spec, gpu, tensor_parallel=dtp, gpus=dtp, **kw)
    ok = [p for p in dplan.points if p.decode_step_s <= tpot_s]
    if not ok:
        return None
    d = max(ok, key=lambda p: p.concurrency)
    r_dec = d.concurrency / (output_tokens * d.decode_step_s)
    # prefill instance: one prompt at a time
    one = serving.point(spec, gpu, concurrency=1, tensor_parallel=ptp, gpus=ptp, **kw)
    s = one.prefill_s
    xfer = kv_read_bytes(spec, input_tokens, 1, kv_dtype) / (ptp * nic_gb_per_s * 1e9)
    fixed = s + xfer + d.decode_step_s
    if fixed > ttft_s:
        return None
    top = (n - dtp) // ptp

    def ttft(rate: float, n_p: int) -> float:
        a = rate * s
        return queueing.erlang_c(n_p, a) * s / (n_p - a) + fixed

    def served(n_p: int):
        """(rate, n_p, n_d, TTFT) of `n_p` prefill instances and the rest decoding."""
        n_d = (n - n_p * ptp) // dtp
        cap_p = n_p / s * (1 - 1e-9)
        lam = min(n_d * r_dec, cap_p)
        if ttft(lam, n_p) > ttft_s:  # the prefill queue is the limit: bisect on the rate
            lo, hi = 0.0, lam
            for _ in range(60):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if ttft(mid, n_p) <= ttft_s else (lo, mid)
            lam = lo
        return lam, n_p, n_d, ttft(lam, n_p)

    def keeps_up(n_p: int) -> bool:
        """Whether `n_p` prefill instances take all that the decode instances finish within
        the TTFT target: true from some n_p on (more prefill, fewer decode instances)."""
        n_d = (n - n_p * ptp) // dtp
        g = n_d * r_dec
        return g < n_p / s * (1 - 1e-9) and ttft(g, n_p) <= ttft_s

    # The rate is min(what the prefill pool sustains within the TTFT target, growing with n_p;
    # what the decode pool finishes, shrinking with n_p): its largest value is at the first n_p
    # whose prefill keeps up, or the one before it. Bisection finds that n_p (the whole range
    # took O(gpus^2) Erlang C terms: 7 s at 1024 GPUs).
    lo_n, hi_n = 1, top + 1
    while lo_n < hi_n:
        mid = (lo_n + hi_n) // 2
        if keeps_up(mid):
            hi_n = mid
        else:
            lo_n = mid + 1
    best = None
    for n_p in (lo_n - 1, lo_n):
        if not 1 <= n_p <= top:
            continue
        cand = served(n_p)
        if cand[0] > 0 and (best is None or cand[0] > best[0]):
            best = cand
    if best is None:
        return None
    lam, n_p, n_d, t = best
    used = n_p * ptp + n_d * dtp
    return DisaggPlan(
        prefill_instances=n_p,
        prefill_tp=ptp,
        decode_instances=n_d,
        decode_tp=dtp,
        decode_concurrency=d.concurrency,
        request_rate_per_s=lam,
        ttft_s=t,
        tpot_s=d.decode_step_s,
        kv_transfer_s=xfer,
        prefill_s=s,
        tokens_per_s=lam * output_tokens,
        tokens_per_s_per_gpu=lam * output_tokens / used,
    )
