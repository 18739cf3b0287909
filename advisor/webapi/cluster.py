"""The cluster planner: GPUs, nodes and the parallel layout for a token budget."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import limits, vocab
from .common import (
    _bands,
    _cheapest_offer,
    _f,
    _gpu,
    _gpu_info,
    _model,
    _model_info,
    _Request,
    get_catalog,
)


@dataclass(frozen=True)
class ClusterRequest(_Request):
    model: str = _f("llama-3.1-70b", "name")
    config: str = _f("", "text")
    gpu: str = _f("h100-sxm", "name")
    tokens: int = _f(1_000_000_000_000, "tokens", maximum=limits.TOKENS[1])
    seq: int = _f(8192, "int", maximum=1 << 20)
    deadline_days: float | None = _f(30, "optnum", bounds=(0.0, 3650.0), exclusive_low=True)
    budget_usd: float | None = _f("", "optnum", bounds=limits.BUDGET, exclusive_low=True)
    price_usd_per_gpu_hour: float | None = _f("", "optnum", bounds=limits.PRICE_USD_PER_GPU_HOUR)
    network: str = _f("ib-ndr-400", "name")
    precision: str = _f("bf16", "choice", choices=vocab.CLUSTER_PRECISIONS)
    max_gpus: int = _f(16_384, "int", maximum=16_384)
    # a published run's token budget (its tokens, sequence length, global batch and task
    # replace the form's; advisor.perf.cluster.TOKEN_BUDGETS), "custom": the form's tokens
    run: str = _f("custom", "choice", choices=vocab.TRAINING_RUNS)
    # MoE: the EP degree of every layout; 0: the plan searches it
    expert_parallel: int = _f(0, "int", minimum=0, maximum=4096)


def cluster(params: dict) -> dict:
    """A cluster plan for a training run (advisor.perf.cluster.plan): the best layout at each GPU
    count up to the choice, the chosen nodes x GPUs and TP x PP x DP layout, its time, cost and
    energy; the price is the catalog's cheapest on-demand offer unless one is given."""
    from ..perf import cluster as cl

    req = ClusterRequest.from_params(params)
    spec = _model(req)
    g = _gpu(req.gpu)
    cat = get_catalog()
    price = req.price_usd_per_gpu_hour
    if price is None:
        offer = _cheapest_offer(g.id)
        price = offer.on_demand_usd_per_gpu_hour if offer else None
    tokens, seq, task, batch, run = req.tokens, req.seq, "train", None, None
    if req.run != "custom":
        run = cl.token_budget(req.run)
        tokens, seq, task = run.tokens, run.seq, run.task
        batch = run.global_batch_seqs * run.seq if run.global_batch_seqs else None
    p = cl.plan(
        spec,
        g,
        tokens=tokens,
        seq=seq,
        deadline_hours=req.deadline_days * 24 if req.deadline_days else None,
        budget_usd=req.budget_usd,
        price_usd_per_gpu_hour=price,
        network=cat.network(req.network),
        precision=req.precision,
        max_gpus=req.max_gpus,
        global_batch_tokens=batch,
        task=task,
        expert_parallel=req.expert_parallel or None,
    )
    out = p.to_dict()
    out.update(model=_model_info(spec), gpu=_gpu_info(g), accuracy=_bands("training"))
    out["run"] = run.to_dict() if run else None
    return out
