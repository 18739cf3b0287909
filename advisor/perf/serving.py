"""Serving under continuous batching: for a model on `tp` GPUs per replica, prompts of
`input_tokens`, answers of `output_tokens` and `concurrency` requests in flight per replica:
time to first token (TTFT), time per output token (TPOT), tokens/s per user and in total, and
the largest concurrency the KV cache allows.

The steady state (Yu et al. 2022, Orca, OSDI §3: iteration-level scheduling; Kwon et al. 2023,
vLLM/PagedAttention, arXiv:2309.06180 §4; Agrawal et al. 2024, Sarathi-Serve,
arXiv:2403.02310 §3: prefills and decodes share the iterations): while `c` requests decode
together, each of them was once prefilled. One "generation" of `c` requests costs the GPU
    T = c * t_prefill(input) + output * t_decode(batch c, context input + output/2)
so TPOT = T / output (decode steps slowed by the prefills between them), total output
tokens/s = c * output / T per replica, tokens/s per user = 1 / TPOT, and TTFT = the prefill
of one prompt plus one decode step of waiting (an idle-free queue; a saturated queue adds
queueing that this model does not predict). Prefills of short prompts are batched up to
`max_num_batched_tokens` tokens per iteration (vLLM's default 8192 for chunked prefill,
docs.vllm.ai "Engine arguments").

The concurrency is capped by the KV-cache blocks vLLM can allocate (advisor.memory.estimate.
serving_capacity) and by `max_num_seqs` (vLLM's default 256, same page).

Pipeline parallelism (`pipeline_parallel` = p > 1): a replica of tp x p GPUs, each of the p
stages holding 1/p of the layers (and their KV cache) on tp GPUs; the last stage also runs the
output head. The engine keeps p batches in flight so that every stage works: vLLM V1's batch
queue ("PP requires PP-size concurrent batches to fill the pipeline", vllm/config/vllm.py
`VllmConfig.max_concurrent_batches`; EngineCore.step_with_batch_queue), TensorRT-LLM's
micro-batches over its pipeline ranks (NVIDIA's MLPerf harness builds TP x PP engines with
`pipeline_parallelism` in trtllm_build_flags). In steady state there is no flush, so the
GPipe / Megatron bubble of a flushed batch, (p-1)/(m+p-1) (Huang et al. 2019, GPipe,
arXiv:1811.06965 §2.2; Narayanan et al. 2021 eq. 1), does not apply as long as p micro-batches
are in flight; with fewer (concurrency c < p) the stages idle. So the c sequences split into
n = min(c, p) micro-batches of ceil(c / n), and a decode token of every sequence takes one
round of the pipe:
    t_round = p * (t_stage(m) + t_send(m)),  t_stage = (t_step - t_head) / p + t_head
(`pipeline_stage_s`: the slowest stage, the last one with the head; the layers split evenly),
t_send the point-to-point send of the micro-batch's activations, m x hidden x 2 bytes, to the
next stage (network.p2p_time over the scale-up fabric; Narayanan et al. 2021 §4.1 sends them
between stages the same way). Each stage spends c * t_pf_stage per generation on prefills,
so the cycle is c * t_pf_stage + output * t_round (the same steady state as above, on the
slowest stage). TTFT: a prompt's prefill passes every stage (the whole model's prefill plus
p - 1 sends of prompt x hidden activations). Memory: each GPU holds 1/(tp p) of the weights
and of the KV cache (max_concurrency).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch.models import ModelSpec
from ..core import vocab
from ..core.errors import AdvisorError, check_choice, check_int, check_positive
from ..memory import estimate as mem
from . import accuracy, timing
from . import efficiency as eff
from . import network as net
from .prefix_cache import uncached_tokens
from .speculative import Speculation, time_per_token
from .timing import KV_BYTES, PEAK_KEY

MAX_NUM_SEQS = 256
ENGINES = vocab.SERVING_ENGINES
MAX_NUM_BATCHED_TOKENS = 8192


@dataclass(frozen=True)
class ServingPoint:
    concurrency: int  # requests in flight per replica
    ttft_s: float
    tpot_s: float
    tokens_per_s_per_user: float
    tokens_per_s: float  # output tokens, all replicas
    tokens_per_s_per_gpu: float
    requests_per_s: float
    decode_step_s: float
    prefill_s: float

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class ServingPlan:
    model: str
    gpu: str
    tensor_parallel: int
    replicas: int
    input_tokens: int
    output_tokens: int
    weights: str
    kv_dtype: str
    max_concurrency: int  # per replica, by KV cache and max_num_seqs
    kv_limited_concurrency: int
    points: tuple[ServingPoint, ...]
    notes: tuple[str, ...] = ()
    pipeline_parallel: int = 1

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "points"}
        d["points"] = [p.to_dict() for p in self.points]
        d["notes"] = list(self.notes)
        return d

    def at(self, concurrency: int) -> ServingPoint | None:
        for p in self.points:
            if p.concurrency == concurrency:
                return p
        return None

    def best_under(self, ttft_s: float | None = None, tpot_s: float | None = None):
        """The highest-throughput point that meets both latency limits, or None."""
        ok = [
            p
            for p in self.points
            if (ttft_s is None or p.ttft_s <= ttft_s) and (tpot_s is None or p.tpot_s <= tpot_s)
        ]
        return max(ok, key=lambda p: p.tokens_per_s) if ok else None


def _check(spec: ModelSpec, input_tokens: int, output_tokens: int):
    if not spec.causal:
        raise AdvisorError(
            "serving.encoder",
            f"model: {spec.name} is an encoder; it generates no tokens (no decode, no TPOT)",
            field="model",
        )
    check_int("input_tokens", input_tokens, maximum=spec.max_position_embeddings)
    check_int("output_tokens", output_tokens, maximum=spec.max_position_embeddings)
    if input_tokens + output_tokens > spec.max_position_embeddings:
        raise AdvisorError(
            "seq.too_long",
            f"input_tokens + output_tokens: {input_tokens + output_tokens} is more than the "
            f"model's context ({spec.max_position_embeddings})",
            field="output_tokens",
            maximum=spec.max_position_embeddings,
        )


# GPUs one tensor-parallel group may span: the node's scale-up domain (NVLink / xGMI / PCIe
# switch), 8 in the HGX/DGX, MI300X and Gaudi boards of the catalog (advisor.perf.cluster's
# GPUS_PER_NODE); a card whose catalog entry states its scale-up domain (`scale_up.domain_size`:
# 72 for a GB200/GB300 NVL72 rack) uses that.
SCALE_UP_GPUS = 8


def check_tensor_parallel(spec: ModelSpec, gpu, tensor_parallel, across_nodes: bool = False) -> int:
    """`tensor_parallel` if it divides the model's attention heads (and its KV heads, or is a
    multiple of them: vLLM then replicates each KV head) and fits the scale-up domain; else an
    AdvisorError naming `tensor_parallel` (issue 40: TP 3 for 32 heads and TP 72 on 8-GPU
    nodes were accepted). `across_nodes`: a model too large for one node, split over whole
    nodes across an inter-node fabric (advisor.perf.serving_fit, `tp_fabric`): TP may then be
    a multiple of the domain."""
    tp = check_int("tensor_parallel", tensor_parallel, maximum=72)
    scale_up = getattr(gpu, "scale_up", None)
    domain = int(scale_up.domain_size if scale_up else SCALE_UP_GPUS)
    if tp > domain and not (across_nodes and tp % domain == 0):
        raise AdvisorError(
            "layout.tp_node",
            f"tensor_parallel: {tp} is more than the {domain} GPUs a {gpu.id} node links "
            "(tensor parallelism stays inside one node; add replicas with gpus)",
            field="tensor_parallel",
            tensor_parallel=tp,
            gpus_per_node=domain,
        )
    kv = spec.num_kv_heads
    if spec.num_heads % tp or (kv % tp and tp % kv):
        raise AdvisorError(
            "layout.heads",
            f"tensor_parallel: {tp} does not divide the model's {spec.num_heads} attention heads "
            f"({kv} KV heads)",
            field="tensor_parallel",
            tensor_parallel=tp,
        )
    return tp


def check_pipeline_parallel(
    spec: ModelSpec, gpu, tensor_parallel: int, pipeline_parallel, pp_fabric=None
) -> int:
    """`pipeline_parallel` if the model has at least that many layers and the replica's
    tp x pp GPUs fit the scale-up domain (the stages' sends then run on NVLink / xGMI); past
    the domain a `pp_fabric` (the fabric between nodes) must be named. Else an AdvisorError
    naming `pipeline_parallel`."""
    pp = check_int("pipeline_parallel", pipeline_parallel, maximum=1024)
    if pp > spec.num_layers:
        raise AdvisorError(
            "layout.pp_layers",
            f"pipeline_parallel: {pp} is more than the model's {spec.num_layers} layers",
            field="pipeline_parallel",
            pipeline_parallel=pp,
            layers=spec.num_layers,
        )
    scale_up = getattr(gpu, "scale_up", None)
    domain = int(scale_up.domain_size if scale_up else SCALE_UP_GPUS)
    if pp > 1 and tensor_parallel * pp > domain and pp_fabric is None:
        raise AdvisorError(
            "layout.pp_node",
            f"pipeline_parallel: TP {tensor_parallel} x PP {pp} is more than the {domain} GPUs "
            f"a {gpu.id} node links; stages across nodes need the fabric between them",
            field="pipeline_parallel",
            pipeline_parallel=pp,
            gpus_per_node=domain,
        )
    return pp


def pipeline_stage_s(parts, pp: int) -> float:
    """Seconds of the slowest of `pp` pipeline stages for a timing.decode_step_time or
    prefill_time result: the layers' share (everything but the output head) split evenly,
    plus the head on the last stage (module docstring, pipeline parallelism)."""
    if pp == 1:
        return parts["seconds"]
    return (parts["seconds"] - parts["head_s"]) / pp + parts["head_s"]


def pipeline_send_s(spec: ModelSpec, tokens: float, fabric: net.Fabric) -> float:
    """One stage-to-stage send of `tokens` tokens' hidden states in 16-bit (tokens x hidden x
    2 bytes; network.p2p_time: alpha + bytes / bandwidth)."""
    return net.p2p_time(tokens * spec.hidden_size * timing.ACT_BYTES, fabric)


def kv_reads(spec: ModelSpec, grouped_kv_kernel: bool = True) -> int:
    """Times a decode step streams each KV head (timing.decode_step_time): 1 for a kernel that
    serves the whole query group from one load, the group size num_heads / num_kv_heads for
    one that runs per query head. TensorRT-LLM's XQA blog reports 2.4x the Llama-70B
    throughput (group of 8) on an H200 at 128/2048 once XQA serves the group
    (docs/source/blogs/XQA-kernel.md; at an unstated latency budget and batch, so not a
    validation entry). The validation set's TensorRT-LLM v0.5/v0.6 rows on GQA models are
    reproduced with the per-head reads (+192 % -> +5 % on 70B TP2 128/2048)."""
    if grouped_kv_kernel:
        return 1
    return max(1, spec.num_heads // spec.num_kv_heads)


def engine_moe_note(spec: ModelSpec, gpu, engine: str | None, stack: eff.Stack | None = None):
    """What the output says when the fitted TensorRT-LLM MoE term applies (an MoE model, engine
    "trtllm", a Hopper or Blackwell GPU; efficiency.trtllm_moe_extra_s): the factor on the
    routed experts' time and its measured band (the held-out errors of the validation's
    TensorRT-LLM MoE entries, accuracy band "trtllm_moe"; None when no summary is found). None
    where the term does not apply."""
    stack = stack or eff.DEFAULT_STACK
    f = eff.trtllm_moe_factor(stack, gpu, engine)
    if f is None or not spec.is_moe:
        return None
    b = accuracy.band("trtllm_moe")
    return {
        "engine": engine,
        "factor": f,
        "fitted": True,
        "band": b.to_dict() if b else None,
        "source": "efficiency.Stack.trtllm_moe_factor (fitted on bench/published TensorRT-LLM "
        "MoE runs, not itemised)",
    }


def point(
    spec: ModelSpec,
    gpu,
    *,
    concurrency: int,
    input_tokens: int,
    output_tokens: int,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
    gpus: int | None = None,
    stack: eff.Stack | None = None,
    achievable=None,
    engine: str = "vllm",
    grouped_kv_kernel: bool = True,
    speculative: Speculation | None = None,
    prefix_hit_rate: float = 0.0,
    tp_fabric: net.Fabric | None = None,
    activations: str | None = None,
    pipeline_parallel: int = 1,
    pp_fabric: net.Fabric | None = None,
    cuda_graphs: bool = True,
    cuda_graph_batch_sizes: tuple[int, ...] | None = None,
) -> ServingPoint:
    """One steady-state operating point (module docstring). `activations`: the precision the
    engine keeps activations in where it differs from the weights' (timing.matmul_peak_key). `engine` ("vllm" | "trtllm")
    selects the engine's per-sequence step overhead (efficiency.Stack.seq_step_us).
    `grouped_kv_kernel=False` models a decode attention kernel that streams the KV cache once
    per query head (TensorRT-LLM before v0.8's XQA kernel; `kv_reads`).
    `speculative`: multi-token prediction or a draft model (advisor.perf.speculative): a decode
    step yields `tokens_per_step` tokens per sequence and costs the verification and the draft.
    `prefix_hit_rate`: the fraction of prompt tokens found in the prefix cache
    (advisor.perf.prefix_cache): prefills compute only the rest.
    `pipeline_parallel`: stages per replica (module docstring, pipeline parallelism), a replica
    is tensor_parallel x pipeline_parallel GPUs; `pp_fabric`: the fabric between stages where
    they span nodes (default: the accelerator's scale-up fabric).
    `cuda_graphs=False`: the engine launches each iteration's kernels from the host and
    schedules between iterations without overlap (NVIDIA's MLPerf TensorRT-LLM harness,
    `use_graphs: False`): every decode step, and so every prompt chunk riding in it, waits
    efficiency.Stack.eager_iteration_ms more (fitted; its record there).
    `cuda_graph_batch_sizes`: the batch sizes the engine captured CUDA graphs for, with padding
    on (TensorRT-LLM `cuda_graph_config: enable_padding: true, batch_sizes: [...]`): a decode
    step of b sequences runs the graph of the next captured size (timing.padded_batch), its
    GEMMs and TensorRT-LLM's MoE term over the padded slots, its KV-cache read over the b."""
    _check(spec, input_tokens, output_tokens)
    graph_sizes = timing.check_graph_batch_sizes(cuda_graph_batch_sizes)
    if not cuda_graphs:
        graph_sizes = None
    stack = stack or eff.DEFAULT_STACK
    c = check_int("concurrency", concurrency, maximum=1 << 16)
    tp = check_tensor_parallel(spec, gpu, tensor_parallel, across_nodes=tp_fabric is not None)
    pp = check_pipeline_parallel(spec, gpu, tp, pipeline_parallel, pp_fabric)
    check_choice("kv_dtype", kv_dtype, KV_BYTES)
    if weights not in PEAK_KEY:
        check_choice("weights", weights, PEAK_KEY)
    per_replica = tp * pp
    gpus = gpus or per_replica
    if gpus % per_replica:
        raise AdvisorError(
            "gpus.tp_divides",
            f"gpus: {gpus} is not a multiple of tensor_parallel {tp}"
            + (f" x pipeline_parallel {pp}" if pp > 1 else ""),
            field="tensor_parallel",
        )
    dev = timing.Device.of(
        gpu, timing.matmul_peak_key(gpu, weights, activations), stack, achievable
    )
    # tensor parallelism past one node crosses `tp_fabric` (advisor.perf.serving_fit)
    fabric = tp_fabric or (net.intra_node_fabric(gpu) if tp > 1 else None)
    prompt = uncached_tokens(input_tokens, prefix_hit_rate) if prefix_hit_rate else input_tokens
    per_batch = max(1, min(c, MAX_NUM_BATCHED_TOKENS // prompt))
    pf_parts = timing.prefill_time(
        spec,
        dev,
        stack,
        batch=per_batch,
        prompt=prompt,
        weights=weights,
        tp=tp,
        tp_fabric=fabric,
    )
    pf = pf_parts["seconds"]
    t_pf_one = timing.prefill_time(
        spec, dev, stack, batch=1, prompt=prompt, weights=weights, tp=tp, tp_fabric=fabric
    )["seconds"]
    t_pf = pf / per_batch
    ctx = input_tokens + output_tokens // 2

    def full_step(b: int):
        return timing.decode_step_time(
            spec,
            dev,
            stack,
            batch=b,
            context=ctx,
            weights=weights,
            kv_bytes=KV_BYTES[kv_dtype],
            tp=tp,
            tp_fabric=fabric,
            kv_reads=kv_reads(spec, grouped_kv_kernel),
            graph_batch=timing.padded_batch(b, graph_sizes),
        )

    if pp == 1:
        step = full_step
    else:
        # pipeline stages (module docstring): the prefill's share on the slowest stage, and a
        # decode token of every sequence per round of the pipe
        send_fabric = pp_fabric or net.intra_node_fabric(gpu)
        t_pf = pipeline_stage_s(pf_parts, pp) / per_batch
        t_pf_one += (pp - 1) * pipeline_send_s(spec, prompt, send_fabric)

        def step(b: int):
            # one round: the slowest stage runs each of its micro-batches once (by parts, for
            # advisor.perf.speculative: the attention of one micro-batch over every layer,
            # the head once per micro-batch on the last stage)
            n = min(b, pp)
            m = -(-b // n)
            parts = full_step(m)
            stage = pipeline_stage_s(parts, pp) + pipeline_send_s(spec, m, send_fabric)
            return {
                "seconds": pp * stage,
                "attention_s": parts["attention_s"],
                "head_s": pp * parts["head_s"],
            }

    if speculative is None:
        t_d = step(c)["seconds"]
    else:
        t_d = time_per_token(step, c, speculative, spec.num_layers)
    check_choice("engine", engine, ENGINES)
    per_step = 1.0 / (speculative.tokens_per_step if speculative else 1.0)
    t_d += c * stack.seq_step_us.get(engine, 0.0) * 1e-6 * per_step
    if not cuda_graphs:
        t_d += stack.eager_iteration_ms * 1e-3 * per_step
    if spec.is_moe and eff.trtllm_moe_factor(stack, gpu, engine) is not None:
        # TensorRT-LLM's MoE layers beyond the model's kernels (fitted, efficiency.trtllm_moe_extra_s)

        def moe_extra(rows: float) -> float:
            return eff.trtllm_moe_extra_s(
                stack,
                gpu,
                engine,
                expert_s=timing.routed_expert_s(
                    spec, dev, stack, rows=rows, tp=tp, weights=weights
                ),
            )

        t_d += moe_extra(timing.padded_batch(c, graph_sizes)) * per_step
        t_pf += moe_extra(per_batch * prompt) / per_batch
        t_pf_one += moe_extra(prompt)
    cycle = c * t_pf + output_tokens * t_d
    tpot = cycle / output_tokens
    replicas = gpus // per_replica
    total = replicas * c * output_tokens / cycle
    return ServingPoint(
        concurrency=c,
        ttft_s=t_pf_one + t_d + stack.request_ms * 1e-3,
        tpot_s=tpot,
        tokens_per_s_per_user=1 / tpot,
        tokens_per_s=total,
        tokens_per_s_per_gpu=total / gpus,
        requests_per_s=replicas * c / cycle,
        decode_step_s=t_d,
        prefill_s=t_pf_one,
    )


def max_concurrency(
    spec: ModelSpec,
    gpu,
    *,
    input_tokens: int,
    output_tokens: int,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
    gpu_memory_utilization: float = 0.9,
    engine: str = "vllm",
    pipeline_parallel: int = 1,
    kv_on_demand: bool = False,
) -> int:
    """Requests per replica whose whole context (input + output) fits in the KV-cache blocks
    (advisor.memory.estimate.serving_capacity); 0 if the weights do not fit.

    `kv_on_demand=True`: the scheduler admits requests while KV blocks remain rather than
    reserving each request's whole context up front (TensorRT-LLM's capacity scheduler policy
    MAX_UTILIZATION, "pack as many requests as possible at each iteration ... at the risk of
    having to pause requests if the KV cache size limit is reached", against the default
    GUARANTEED_NO_EVICT: nvidia.github.io/TensorRT-LLM performance-tuning-guide
    useful-runtime-flags, "Capacity Scheduler Policy"). The paged cache then holds each running
    request's context so far, input + output / 2 tokens on average over the requests of a
    steady-state batch (each is at a uniformly spread point of its answer), and the count is
    that of requests of that mean context.

    `engine`: "vllm" reserves `gpu_memory_utilization` of the whole memory (docs.vllm.ai
    "Engine arguments"); "trtllm" gives the KV cache that fraction of the memory left after
    the weights and activations (TensorRT-LLM `KvCacheConfig.free_gpu_memory_fraction`,
    default 0.9), expressed here as the equivalent whole-memory fraction.

    `pipeline_parallel`: each GPU of a tp x pp replica holds 1/(tp pp) of the weights and of
    every sequence's KV cache (its stage's layers; the embedding and head counted evenly).

    Sliding-window layers count as the engine keeps them (advisor.memory.estimate.
    engine_keeps_window, the rule expert_parallel.max_batch_per_gpu shares): vLLM V1 at their
    window, TensorRT-LLM at the whole context."""
    check_positive("gpu_memory_utilization", gpu_memory_utilization, maximum=1.0)
    check_choice("engine", engine, ENGINES)
    pp = check_int("pipeline_parallel", pipeline_parallel, maximum=1024)
    tensor_parallel = tensor_parallel * pp
    context = input_tokens + (-(-output_tokens // 2) if kv_on_demand else output_tokens)
    if engine == "trtllm":
        probe = mem.serving_capacity(
            spec,
            gpu.memory_bytes,
            context=context,
            weights=weights,
            kv_dtype=kv_dtype,
            gpu_memory_utilization=1.0,
            tensor_parallel=tensor_parallel,
        )
        used = probe.weights_bytes + probe.activation_profile_bytes
        free = max(0, gpu.memory_bytes - used)
        gpu_memory_utilization = min(1.0, (used + gpu_memory_utilization * free) / gpu.memory_bytes)
    cap = mem.serving_capacity(
        spec,
        gpu.memory_bytes,
        context=context,
        weights=weights,
        kv_dtype=kv_dtype,
        gpu_memory_utilization=gpu_memory_utilization,
        tensor_parallel=tensor_parallel,
        engine=engine,
    )
    return int(cap.max_concurrent_sequences)


def plan(
    spec: ModelSpec,
    gpu,
    *,
    input_tokens: int,
    output_tokens: int,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    tensor_parallel: int = 1,
    gpus: int | None = None,
    max_num_seqs: int = MAX_NUM_SEQS,
    stack: eff.Stack | None = None,
    achievable=None,
    engine: str = "vllm",
    speculative: Speculation | None = None,
    prefix_hit_rate: float = 0.0,
    tp_fabric: net.Fabric | None = None,
    pipeline_parallel: int = 1,
    pp_fabric: net.Fabric | None = None,
    cuda_graphs: bool = True,
    cuda_graph_batch_sizes: tuple[int, ...] | None = None,
) -> ServingPlan:
    """The throughput-latency curve at concurrency 1, 2, 4, ... up to the largest the KV cache
    and `max_num_seqs` allow (and that value itself). `speculative`, `prefix_hit_rate`,
    `pipeline_parallel`, `pp_fabric`, `cuda_graphs` and `cuda_graph_batch_sizes` as in
    `point`."""
    _check(spec, input_tokens, output_tokens)
    tp = check_tensor_parallel(spec, gpu, tensor_parallel, across_nodes=tp_fabric is not None)
    pp = check_pipeline_parallel(spec, gpu, tp, pipeline_parallel, pp_fabric)
    check_int("max_num_seqs", max_num_seqs, maximum=1 << 16)
    kv_max = max_concurrency(
        spec,
        gpu,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        weights=weights,
        kv_dtype=kv_dtype,
        tensor_parallel=tp,
        engine=engine,
        pipeline_parallel=pp,
    )
    top = min(kv_max, max_num_seqs)
    notes = []
    if kv_max < max_num_seqs:
        notes.append(f"concurrency limited by the KV cache to {kv_max} per replica")
    levels = []
    c = 1
    while c < top:
        levels.append(c)
        c *= 2
    if top >= 1:
        levels.append(top)
    pts = tuple(
        point(
            spec,
            gpu,
            concurrency=c,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            weights=weights,
            kv_dtype=kv_dtype,
            tensor_parallel=tp,
            gpus=gpus,
            stack=stack,
            achievable=achievable,
            engine=engine,
            speculative=speculative,
            prefix_hit_rate=prefix_hit_rate,
            tp_fabric=tp_fabric,
            pipeline_parallel=pp,
            pp_fabric=pp_fabric,
            cuda_graphs=cuda_graphs,
            cuda_graph_batch_sizes=cuda_graph_batch_sizes,
        )
        for c in levels
    )
    if not pts:
        notes.append("the weights leave no room for a single request's KV cache")
    return ServingPlan(
        model=spec.name,
        gpu=gpu.id,
        tensor_parallel=tp,
        replicas=(gpus or tp * pp) // (tp * pp),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        weights=weights,
        kv_dtype=kv_dtype,
        max_concurrency=top,
        kv_limited_concurrency=kv_max,
        points=pts,
        notes=tuple(notes),
        pipeline_parallel=pp,
    )


def mixed_point(
    spec: ModelSpec,
    gpu,
    *,
    mix: tuple[tuple[str, float], ...],
    concurrency: int,
    **kw,
) -> ServingPoint:
    """`point` for weights stored in a per-layer mix of formats, `mix` ((format, share of the
    linear weights), ...), e.g. advisor.arch.quant.modelopt_mix for a ModelOpt per-layer
    search. Which layers take which format is not stated by such a budget, so each layer is
    taken as the mix's average: its GEMMs (weights streamed and multiplied in each format at
    that format's rate) are the share-weighted sum of the format's times, and so are a decode
    step and a prefill, which are sums over the layers (timing.decode_step_time,
    timing.prefill_time); attention, KV cache and element-wise work do not depend on the
    weights' format. So TPOT and TTFT are the share-weighted means of `point` in each format,
    at the same concurrency; output tokens/s = replicas x concurrency / TPOT (as in `point`).
    `kw` as `point`'s, without `weights`."""
    if not mix or abs(sum(share for _, share in mix) - 1.0) > 1e-9:
        raise AdvisorError(
            "weights.mix_shares",
            "weights: the shares of a mix of formats must add up to 1",
            field="weights",
        )
    pts = [(point(spec, gpu, concurrency=concurrency, weights=f, **kw), w) for f, w in mix]
    ref = pts[0][0]

    def mean(attr: str) -> float:
        return sum(getattr(p, attr) * w for p, w in pts)

    tpot = mean("tpot_s")
    scale = ref.tpot_s / tpot  # tokens/s and requests/s at the same concurrency scale as 1/TPOT
    return ServingPoint(
        concurrency=ref.concurrency,
        ttft_s=mean("ttft_s"),
        tpot_s=tpot,
        tokens_per_s_per_user=1 / tpot,
        tokens_per_s=ref.tokens_per_s * scale,
        tokens_per_s_per_gpu=ref.tokens_per_s_per_gpu * scale,
        requests_per_s=ref.requests_per_s * scale,
        decode_step_s=mean("decode_step_s"),
        prefill_s=mean("prefill_s"),
    )
