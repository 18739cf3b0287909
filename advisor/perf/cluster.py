"""Cluster plans for a training run: for a model, a token budget and a deadline or a budget,
the number of nodes and GPUs and the TP x PP x DP (x EP) layout that fits each GPU's memory
and trains fastest at that size, with step time, MFU, cost and energy, from 1 to 16,384 GPUs.

How a plan is found
- GPU counts 1, 2, 4, 8, then whole nodes in steps of the node size (2^k and 3 x 2^k nodes,
  and the largest count asked for: `gpu_counts`), up to 16,384. On a GB200 / GB300 NVL72 the
  "node" is the rack, one 72-GPU NVLink domain (advisor.perf.parallel.domain_of, issue 34):
  counts 1 to 64 and 72 in one rack, then whole racks of 72 and racks of 64 (the largest power
  of two a rack holds, so that EP 64 and DP divide), and TP, EP, CP and the in-rack share of
  the DP traffic run on NVLink, only what crosses racks on the network; at each count every layout
  with TP in 1, 2, 4, 8 (dividing the heads, inside a node), PP in powers of two (at most the
  layers), EP for mixture-of-experts models, ZeRO-1 (Megatron's distributed optimizer) when
  pipelining, FSDP/ZeRO-3 otherwise, micro-batch 1 or 2 and as many micro-batches as the
  global batch gives each data-parallel rank; activation recomputation none, selective or full,
  the least that fits (or the one asked for) (Narayanan et al. 2021, arXiv:2104.04473 §3:
  TP inside the node, then PP, then DP).
- Memory per GPU: advisor.memory.estimate.training_memory for one pipeline stage (the model's layers
  / PP, with the embeddings and head counted on every stage, an upper bound) holding as many
  micro-batches' activations as the 1F1B schedule keeps in flight on the first stage (PP of
  them, Narayanan et al. 2021 §2.2.1). An approximation: PP is not measured against PyTorch.
- Time: advisor.perf.training.train_step; the layout with the most tokens/s at each count wins.
- Cost: GPU-hours x the cheapest catalog on-demand price of the accelerator (or a given
  price); energy: GPU-hours x TDP x PUE (every GPU at its TDP: an upper bound; the
  Llama 3 paper reports power swings but no average, arXiv:2407.21783 §3.3.4).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

from ..arch.models import ModelSpec
from ..core.errors import AdvisorError, check_choice, check_int, check_positive
from ..memory import estimate as mem
from . import training
from .parallel import Layout, domain_of, gpus_per_domain

MiB_TOKENS = 1024 * 1024


def default_global_batch_tokens(gpus: int) -> int:
    """The global batch a run of this size uses when none is given: 4M tokens up to 1,024 GPUs
    (Llama 2 trained on 4M-token batches, arXiv:2307.09288 §2.2), 8M up to 4,096, 16M above
    (Llama 3 405B: "Tokens/Batch 16M" on 8,192 and 16,384 H100, arXiv:2407.21783 Table 4),
    so that large clusters keep enough micro-batches per pipeline."""
    if gpus <= 1024:
        return 4 * MiB_TOKENS
    return 8 * MiB_TOKENS if gpus <= 4096 else 16 * MiB_TOKENS


DEFAULT_PUE = 1.2


@dataclass(frozen=True)
class TokenBudget:
    """A published run's length in tokens: an MLPerf Training benchmark's reference convergence
    point (a run to a quality target) or a full pretraining, with the sequence length, global
    batch and task it was measured with, and its source."""

    id: str
    model: str  # catalog model id
    tokens: int
    seq: int
    global_batch_seqs: int | None
    task: str
    what: str
    source: str
    read: str

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


# Token budgets (issue 35). MLPerf Training counts a run from the start to the quality target;
# its reference convergence points (RCPs, mlcommons/logging rcp_checker) give what the
# reference runs needed:
# - Llama 3.1 405B pretraining (MLPerf Training v5.0): "llama31_405b_ref_1152", BS 1152,
#   "Epochs to converge" 2,642,411,520 in all six runs: tokens (322,560 sequences of 8,192,
#   280 steps of 1,152; target log perplexity 5.6, mlcommons/training
#   large_language_model_pretraining README);
# - Llama 2 70B LoRA fine-tuning (MLPerf Training v4.0-v5.0): "llama2_70b_lora_ref_8", BS 8,
#   "samples to converge" of 20 runs, mean 3,187.2 sequences of 8,192 tokens (max_seq_len
#   8192, GovReport 8k; target eval loss 0.925, mlcommons/training llama2_70b_lora README);
# - DeepSeek-V3's pretraining: 14.8 trillion tokens at a 4K sequence length, the batch ramped
#   up to 15,360 sequences (DeepSeek-V3 Technical Report, arXiv:2412.19437, abstract and §4.2).
TOKEN_BUDGETS = {
    b.id: b
    for b in (
        TokenBudget(
            id="mlperf-llama31-405b",
            model="llama-3.1-405b",
            tokens=2_642_411_520,
            seq=8192,
            global_batch_seqs=1152,
            task="train",
            what="MLPerf Training v5.0 Llama 3.1 405B pretraining to log perplexity 5.6",
            source="https://github.com/mlcommons/logging/blob/master/mlperf_logging/rcp_checker/"
            "training_5.0.0/rcps_llama31_405b.json",
            read="2026-12-06",
        ),
        TokenBudget(
            id="mlperf-llama2-70b-lora",
            model="llama-2-70b",
            tokens=26_109_542,  # 3,187.2 sequences x 8,192 tokens (RCP mean, BS 8)
            seq=8192,
            global_batch_seqs=8,
            task="lora",
            what="MLPerf Training v5.0 Llama 2 70B LoRA fine-tuning to eval loss 0.925",
            source="https://github.com/mlcommons/logging/blob/master/mlperf_logging/rcp_checker/"
            "training_5.0.0/rcps_llama2_70b_lora.json",
            read="2026-12-06",
        ),
        TokenBudget(
            id="deepseek-v3-pretraining",
            model="deepseek-v3",
            tokens=14_800_000_000_000,
            seq=4096,
            global_batch_seqs=15360,
            task="train",
            what="DeepSeek-V3's full pretraining: 14.8T tokens",
            source="https://arxiv.org/abs/2412.19437",
            read="2026-12-06",
        ),
    )
}


def token_budget(name: str) -> TokenBudget:
    """A TOKEN_BUDGETS entry by id (an unknown id: one error with close matches)."""
    if name not in TOKEN_BUDGETS:
        from ..core.errors import unknown_name

        raise unknown_name("run", name, TOKEN_BUDGETS)
    return TOKEN_BUDGETS[name]


MAX_CLUSTER_GPUS = 16_384
GPUS_PER_NODE = 8


@dataclass(frozen=True)
class ClusterOption:
    gpus: int
    nodes: int
    layout: Layout
    step: training.TrainStep
    checkpointing: str
    memory_per_gpu_bytes: int
    hours: float
    gpu_hours: float
    cost_usd: float | None
    energy_kwh: float | None  # None: the catalog has no power figure (tdp_w null)
    meets_deadline: bool | None
    within_budget: bool | None

    def to_dict(self) -> dict:
        return {
            "gpus": self.gpus,
            "nodes": self.nodes,
            "domain": self.layout.domain,
            "layout": self.layout.to_dict(),
            "label": self.layout.label(),
            "step": self.step.to_dict(),
            "checkpointing": self.checkpointing,
            "memory_per_gpu_bytes": self.memory_per_gpu_bytes,
            "hours": self.hours,
            "days": self.hours / 24,
            "gpu_hours": self.gpu_hours,
            "cost_usd": self.cost_usd,
            "energy_kwh": self.energy_kwh,
            "meets_deadline": self.meets_deadline,
            "within_budget": self.within_budget,
        }


@dataclass(frozen=True)
class ClusterPlan:
    model: str
    gpu: str
    tokens: int
    seq: int
    global_batch_tokens: int | None  # None: default_global_batch_tokens by cluster size
    network: str | None
    price_usd_per_gpu_hour: float | None
    options: tuple[ClusterOption, ...]  # the best layout at each GPU count that fits
    chosen: ClusterOption | None
    reason: str  # why `chosen` (or why none), in English
    reason_key: str = ""  # the same as a message key (the site translates calc.cl.r.<key>)
    reason_params: dict = field(default_factory=dict, hash=False)  # plain JSON for the key
    domain: str = "node"  # one scale-up domain: an 8-GPU "node" or an NVL72 "rack"
    domain_gpus: int = GPUS_PER_NODE  # the GPUs one domain joins

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "gpu": self.gpu,
            "tokens": self.tokens,
            "seq": self.seq,
            "global_batch_tokens": self.global_batch_tokens,
            "network": self.network,
            "price_usd_per_gpu_hour": self.price_usd_per_gpu_hour,
            "options": [o.to_dict() for o in self.options],
            "chosen": self.chosen.to_dict() if self.chosen else None,
            "reason": self.reason,
            "reason_key": self.reason_key,
            "reason_params": dict(self.reason_params),
            "domain": self.domain,
            "domain_gpus": self.domain_gpus,
        }


def gpu_counts(
    limit: int = MAX_CLUSTER_GPUS, gpus_per_node: int = GPUS_PER_NODE, rack: bool = False
) -> tuple[int, ...]:
    """The GPU counts a plan tries: 1, 2, 4, ... up to one node, then whole nodes in steps of
    the node size: 2^k and 3 x 2^k nodes (1, 2, 3, 4, 6, 8, 12, 16, 24, ... nodes: no step more
    than 1.5x the last, as clusters are sized: Llama 3 trained on 8,192 and 16,384 GPUs, arXiv:
    2407.21783 Table 4; 24,576-GPU clusters, Meta 2024), and the whole nodes that `limit` holds
    (768 GPUs = 96 nodes is tried as asked; 1,001 GPUs tries 125 nodes). `rack`: the node is an
    NVL72 rack of `gpus_per_node` (72) GPUs; each rack count is also tried at the largest power
    of two a rack holds (64 of its 72 GPUs: 2 racks of 64 = 128 GPUs beside 2 of 72 = 144),
    the count whose data-parallel ranks EP 32 and 64 divide."""
    out = []
    n = 1
    while n <= min(limit, gpus_per_node):
        out.append(n)
        n *= 2
    if gpus_per_node <= limit and gpus_per_node not in out:
        out.append(gpus_per_node)
    nodes = set()
    k = 1
    while k * gpus_per_node <= limit:
        nodes.update((k, 3 * k))
        k *= 2
    if limit >= gpus_per_node:
        nodes.add(limit // gpus_per_node)
    sizes = [gpus_per_node]
    if rack:
        sizes.append(1 << (gpus_per_node.bit_length() - 1))
    more = {m * g for m in nodes for g in sizes if gpus_per_node < m * g <= limit}
    return tuple(out + sorted(more))


def _pow2_upto(n: int) -> list[int]:
    out, v = [], 1
    while v <= n:
        out.append(v)
        v *= 2
    return out


# Bytes of model state per parameter of a stage, (kept on every data-parallel rank under ZeRO-1,
# sharded over them): mixed-precision AdamW (bf16, fp16 and fp8 steps: Transformer Engine keeps
# bf16 weights and fp32 masters) keeps 2 bf16 weights + 2 bf16 gradients and shards 12 fp32
# master, momentum and variance (ZeRO, Rajbhandari et al. 2020, arXiv:1910.02054 §3.1); fp32
# and autocast (amp) runs keep fp32 weights and gradients (4 + 4) and shard the fp32 momentum
# and variance (8), as advisor.memory.estimate does; LoRA keeps the frozen base in the run's dtype and
# QLoRA in NF4 (0.5 byte + block scales, the 0.53 advisor.perf.training times), adapters left out
# (under 1 % of the parameters at rank 16).
def _state_bytes(precision: str, task: str) -> tuple[float, float]:
    wide = precision == "fp32" or precision.startswith("amp")
    if task == "qlora":
        return 0.5 + 0.03, 0.0
    if task == "lora":
        return (4.0 if wide else 2.0), 0.0
    return (8.0, 8.0) if wide else (4.0, 12.0)


# The dtype advisor.memory.estimate uses for a step's activations (fp8, MXFP8 and NVFP4 steps keep
# bf16 activations: Transformer Engine casts only the GEMM inputs; NVFP4 training keeps BF16
# weights, FP32 master weights and optimizer states, arXiv:2509.25149 §4, so its model states
# are those of an FP8 step in `_state_bytes`).
_ACTIVATION_DTYPE = {"fp8": "bf16", "mxfp8": "bf16", "nvfp4": "bf16"}

# The longest run a plan or `time train` prices: ten years, the longest deadline accepted
# (a 405B model on one 24 GB card would otherwise get 326,720 days and a price, issue 40).
HORIZON_HOURS = 24 * 365 * 10


@functools.lru_cache(maxsize=1 << 16)
def stage_memory_bytes(
    spec: ModelSpec,
    layout: Layout,
    seq: int,
    precision: str,
    checkpointing: str,
    task: str = "train",
) -> int:
    """Memory per GPU of one pipeline stage (module docstring):

    - model states of the stage's parameters on this TP rank (`_state_bytes`: 16 bytes a
      parameter for AdamW, the optimizer's share sharded over DP under ZeRO-1 and all of it
      under ZeRO-3 (FSDP); LoRA / QLoRA: the frozen base only);
    - activations and logits: advisor.memory.estimate for the stage's layers and the micro-batches in
      flight in the step's activation dtype, divided over the TP ranks (sequence parallelism,
      Korthikanti et al. 2022, arXiv:2205.05198 §4.2.2);
    - the framework overhead advisor.memory.estimate adds (CUDA context, allocator reserve).

    Cached: the planner asks the same layouts again for every accelerator it compares."""
    stage, params, experts = _stage(spec, layout.pp)
    in_flight = min(layout.micro_batches, layout.pp)
    p_gpu = (params - experts + experts / layout.ep) / layout.tp
    dp = layout.dp
    kept, shardable = _state_bytes(precision, task)
    if layout.sharding == "zero3":
        states = (kept + shardable) * p_gpu / dp
    elif layout.sharding in ("zero1", "zero2"):
        states = kept * p_gpu + shardable * p_gpu / dp
    else:
        states = (kept + shardable) * p_gpu
    acts, overhead = _stage_activations(
        stage,
        layout.micro_batch * in_flight,
        seq // layout.cp,
        checkpointing,
        _ACTIVATION_DTYPE.get(precision, precision),
    )
    return int(states + acts / layout.tp + overhead)


@functools.lru_cache(maxsize=4096)
def _stage(spec: ModelSpec, pp: int) -> tuple[ModelSpec, int, int]:
    """(the heaviest stage's spec, its parameters, its expert parameters) when `pp` stages split
    the layers (`training.stage_chunks`: ceil(layers / pp) layers on the first stages). A model
    with a layer list keeps its own layers on each stage (DeepSeek-V3's dense first layers make
    the first stage lighter; the heaviest is the one whose parameters are most). Cached: the
    planner asks for the same stage of many layouts (100,000 calls for a 1,024-expert
    model)."""
    from ..arch.models import param_count

    if not spec.layers:
        stage = replace(spec, num_layers=math.ceil(spec.num_layers / pp))
        return stage, param_count(stage), training.expert_params(stage)
    best = None
    for a, b in training.stage_chunks(spec.num_layers, pp):
        stage = replace(spec, num_layers=b - a, layers=spec.layers[a:b])
        got = (stage, param_count(stage), training.expert_params(stage))
        if best is None or got[1] > best[1]:
            best = got
    return best


@functools.lru_cache(maxsize=4096)
def _stage_activations(
    stage: ModelSpec, batch: int, seq: int, checkpointing: str, precision: str = "bf16"
):
    """(activation + logit bytes, framework overhead bytes) advisor.memory.estimate gives one GPU holding
    `batch` sequences of `stage` (cached: the planner asks the same question for many layouts)."""
    est = mem.training_memory(
        mem.TrainingSetup(
            model=stage, batch=batch, seq=seq, precision=precision, checkpointing=checkpointing
        )
    )
    c = est.components
    return c.get("activations", 0) + c.get("logits", 0), est.overhead_bytes


def layouts(
    spec: ModelSpec,
    gpus: int,
    global_batch_seqs: int,
    gpus_per_node: int = 8,
    expert_parallel: int | None = None,
    domain: str = "node",
):
    """Every candidate layout at `gpus` GPUs (module docstring). MoE models: EP in powers of two
    that divide the experts, up to 64 (an NVL72 domain's 64 GPUs; Megatron-Bridge's NVL72
    recipes run EP 32-64), or only `expert_parallel` when one is given."""
    tps = [t for t in (1, 2, 4, 8) if t <= min(gpus, gpus_per_node) and spec.num_heads % t == 0]
    eps = [1]
    if spec.is_moe:
        eps = [e for e in _pow2_upto(min(spec.num_experts, 64)) if spec.num_experts % e == 0]
    if expert_parallel:
        eps = [expert_parallel]
    for tp in tps:
        for pp in _pow2_upto(min(spec.num_layers, gpus // tp)):
            if gpus % (tp * pp):
                continue
            dp = gpus // (tp * pp)
            for ep in eps:
                if dp % ep:
                    continue
                for mb in (1, 2):
                    # as many micro-batches as give each data-parallel rank its share of the
                    # global batch; where DP does not divide it (3 x 2^k ranks), rounded up,
                    # if that adds at most 25 % (the batch is a choice, not a constant)
                    m = -(-global_batch_seqs // (mb * dp))
                    if m * mb * dp > global_batch_seqs * 1.25:
                        continue
                    if pp > 1 and m < pp:
                        continue
                    sharding = "zero1" if pp > 1 or tp > 1 else "zero3"
                    if dp == 1:
                        sharding = "ddp"
                    yield Layout(
                        tp=tp,
                        pp=pp,
                        dp=dp,
                        ep=ep,
                        gpus_per_node=gpus_per_node,
                        domain=domain,
                        micro_batch=mb,
                        micro_batches=m,
                        virtual_stages=2 if pp >= 4 and m % 2 == 0 else 1,
                        sharding=sharding,
                    )


@functools.lru_cache(maxsize=2048)
def _layout_list(
    spec: ModelSpec,
    gpus: int,
    global_batch_seqs: int,
    gpus_per_node: int,
    expert_parallel: int | None,
    domain: str,
) -> tuple[Layout, ...]:
    """`layouts` as a tuple, kept: `best_at` asks for the same GPU count on every accelerator
    of a domain kind (the same layouts, in the same order, made once)."""
    return tuple(
        layouts(
            spec,
            gpus,
            global_batch_seqs,
            gpus_per_node=gpus_per_node,
            expert_parallel=expert_parallel,
            domain=domain,
        )
    )


@functools.lru_cache(maxsize=2048)
def best_at(
    spec: ModelSpec,
    gpu,
    gpus: int,
    *,
    seq: int,
    global_batch_tokens: int,
    precision: str,
    checkpointing: str,
    network=None,
    task: str = "train",
    expert_parallel: int | None = None,
) -> tuple[Layout, training.TrainStep, int, str] | None:
    """The fastest layout at `gpus` GPUs that fits each GPU's memory (None if none fits).
    Cached: a plan's token budget, deadline, budget and price do not change it."""
    seqs = max(1, global_batch_tokens // seq)
    modes = ("none", "selective", "full") if checkpointing == "auto" else (checkpointing,)
    best = None
    per = gpus_per_domain(gpu, gpus)
    _, kind = domain_of(gpu)
    for lay in _layout_list(spec, gpus, seqs, per, expert_parallel, kind):
        for ck in modes:
            try:
                need = stage_memory_bytes(spec, lay, seq, precision, ck, task)
            except AdvisorError:
                continue
            if need > gpu.memory_bytes:
                continue
            try:
                st = training.train_step(
                    spec,
                    gpu,
                    lay,
                    seq=seq,
                    precision=precision,
                    checkpointing=ck,
                    task=task,
                    inter=network if lay.nodes > 1 else None,
                )
            except AdvisorError:
                continue
            if best is None or st.tokens_per_s > best[1].tokens_per_s:
                best = (lay, st, need, ck)
            break  # the first mode that fits recomputes least
    return best


def plan(
    spec: ModelSpec,
    gpu,
    *,
    tokens: int,
    seq: int = 4096,
    deadline_hours: float | None = None,
    budget_usd: float | None = None,
    price_usd_per_gpu_hour: float | None = None,
    network=None,
    precision: str = "bf16",
    checkpointing: str = "auto",
    global_batch_tokens: int | None = None,
    max_gpus: int = MAX_CLUSTER_GPUS,
    pue: float = DEFAULT_PUE,
    task: str = "train",
    expert_parallel: int | None = None,
) -> ClusterPlan:
    """The cluster plan (module docstring). The choice: with a deadline, the fewest GPUs that
    meet it (and the budget); with only a budget, the fastest run within it; with neither, the
    fewest GPU-hours (the cheapest run), ties to fewer GPUs. `task`: train, lora or qlora
    (a fine-tuning run's token budget, MLPerf's Llama 2 70B LoRA); `expert_parallel`: the EP
    degree every layout uses (None: the plan searches EP for a mixture-of-experts model)."""
    tokens = check_int("tokens", tokens, maximum=10**16)
    check_choice("task", task, training.flops.TASKS)
    if seq > spec.max_position_embeddings:
        # said here, not left to every layout's memory check (which would read "no layout fits")
        raise AdvisorError(
            "seq.too_long",
            f"seq: {seq} tokens is more than the model's max_position_embeddings "
            f"({spec.max_position_embeddings})",
            field="seq",
            value=seq,
            maximum=spec.max_position_embeddings,
        )
    if expert_parallel is not None:
        expert_parallel = check_int("expert_parallel", expert_parallel, maximum=4096)
        if expert_parallel > 1 and (not spec.is_moe or spec.num_experts % expert_parallel):
            raise AdvisorError(
                "layout.ep_experts",
                f"expert_parallel: {expert_parallel} needs a mixture-of-experts model whose "
                "experts it divides",
                field="expert_parallel",
            )
    seq = check_int("seq", seq, maximum=1 << 20)
    check_choice("precision", precision, training.PRECISIONS)
    training.training_peak_key(gpu, precision)  # MXFP8 / NVFP4 without their tensor cores: refused
    check_choice("checkpointing", checkpointing, (*training.CHECKPOINTING, "auto"))
    max_gpus = check_int("max_gpus", max_gpus, maximum=MAX_CLUSTER_GPUS)
    if global_batch_tokens is not None:
        global_batch_tokens = check_int("global_batch_tokens", global_batch_tokens, maximum=1 << 30)
    if global_batch_tokens is not None and global_batch_tokens < seq:
        raise AdvisorError(
            "cluster.batch_below_seq",
            f"global_batch_tokens: {global_batch_tokens} is less than one sequence ({seq})",
            field="global_batch_tokens",
        )
    if deadline_hours is not None:
        check_positive("deadline_hours", deadline_hours, maximum=24 * 365 * 10)
    if budget_usd is not None:
        check_positive("budget_usd", budget_usd, maximum=1e12)
    if price_usd_per_gpu_hour is not None:
        check_positive("price_usd_per_gpu_hour", price_usd_per_gpu_hour, maximum=1000)
    check_positive("pue", pue, maximum=3.0)
    options = []
    domain, kind = domain_of(gpu)
    for n in gpu_counts(max_gpus, domain, rack=kind == "rack"):
        if n > domain and network is None:
            break
        got = best_at(
            spec,
            gpu,
            n,
            seq=seq,
            global_batch_tokens=global_batch_tokens or max(seq, default_global_batch_tokens(n)),
            precision=precision,
            checkpointing=checkpointing,
            network=network,
            task=task,
            expert_parallel=expert_parallel,
        )
        if got is None:
            continue
        lay, st, need, ck = got
        steps = math.ceil(tokens / st.tokens_per_step)
        hours = steps * st.step_time_s / 3600
        gpu_hours = hours * n
        cost = gpu_hours * price_usd_per_gpu_hour if price_usd_per_gpu_hour else None
        # no energy figure for a rented-only chip whose vendor publishes no power (TPU, Trainium)
        energy = gpu_hours * float(gpu.tdp_w) * pue / 1000 if gpu.tdp_w else None
        options.append(
            ClusterOption(
                gpus=n,
                nodes=lay.nodes,
                layout=lay,
                step=st,
                checkpointing=ck,
                memory_per_gpu_bytes=int(need),
                hours=hours,
                gpu_hours=gpu_hours,
                cost_usd=cost,
                energy_kwh=energy,
                meets_deadline=None if deadline_hours is None else hours <= deadline_hours,
                within_budget=None if (budget_usd is None or cost is None) else cost <= budget_usd,
            )
        )
        last = options[-1]
        if deadline_hours is not None and last.meets_deadline and last.within_budget is not False:
            break  # the fewest GPUs that meet the deadline: larger counts cannot be chosen
    chosen, reason, reason_key, reason_params = _choose(
        options, deadline_hours, budget_usd, network, kind
    )
    return ClusterPlan(
        model=spec.name,
        gpu=gpu.id,
        tokens=tokens,
        seq=seq,
        global_batch_tokens=global_batch_tokens,
        network=network.id if network is not None else None,
        price_usd_per_gpu_hour=price_usd_per_gpu_hour,
        options=tuple(options),
        chosen=chosen,
        reason=reason,
        reason_key=reason_key,
        reason_params=reason_params,
        domain=kind,
        domain_gpus=domain,
    )


def _choose(options, deadline_hours, budget_usd, network, domain: str = "node"):
    """(chosen option or None, English reason, reason key, reason params)."""
    if not options:
        if network is None:
            return (
                None,
                (
                    f"no layout fits the model in the GPUs' memory on one {domain} (name a "
                    f"network for more {domain}s)"
                ),
                "no_fit_node",
                {},
            )
        return None, "no layout fits the model in the GPUs' memory", "no_fit", {}
    in_time = [o for o in options if o.hours <= HORIZON_HOURS]
    if not in_time:
        fastest = min(options, key=lambda o: o.hours)
        return (
            None,
            (
                f"no count finishes within the planning horizon: the fastest, {fastest.gpus} "
                f"GPUs, takes {fastest.hours:.0f} h"
            ),
            "beyond_horizon",
            {"gpus": fastest.gpus, "hours": round(fastest.hours)},
        )
    ok = [o for o in in_time if o.meets_deadline is not False and o.within_budget is not False]
    if not ok:
        fastest = min(options, key=lambda o: o.hours)
        if deadline_hours is not None and fastest.hours > deadline_hours:
            return (
                None,
                (
                    f"no count meets the deadline: the fastest, {fastest.gpus} GPUs, takes "
                    f"{fastest.hours:.0f} h"
                ),
                "too_slow",
                {"gpus": fastest.gpus, "hours": round(fastest.hours)},
            )
        return None, "no count meets both the deadline and the budget", "both", {}
    if deadline_hours is not None:
        pick = min(ok, key=lambda o: (o.gpus, o.hours))
        if budget_usd is not None:
            return (
                pick,
                "the fewest GPUs that meet the deadline within the budget",
                ("deadline_budget"),
                {},
            )
        return pick, "the fewest GPUs that meet the deadline", "deadline", {}
    if budget_usd is not None:
        pick = min(ok, key=lambda o: (o.hours, o.gpus))
        return pick, "the fastest run within the budget", "budget", {}
    pick = min(ok, key=lambda o: (o.gpu_hours, o.gpus))
    return pick, "the fewest GPU-hours (no deadline or budget given)", "gpu_hours", {}
