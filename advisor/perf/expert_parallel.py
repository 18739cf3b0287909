"""Serving a mixture-of-experts model with expert parallelism (EP) and data-parallel attention
over a scale-up domain (8 GPUs in an HGX node, 72 in an NVL72 rack) or across nodes.

Layout (DeepSeek-V3 Technical Report, arXiv:2412.19437 §3.4: decoding with "EP320" and
attention in DP; SGLang's "DP attention" and DeepEP; TensorRT-LLM's "DEP" =
`enable_attention_dp` with EP): each of the `ep` GPUs of a group keeps its own requests and
their whole KV cache, runs attention and the dense weights for them alone (no tensor
parallelism: the non-expert weights are replicated), and holds `num_experts / ep` of each
layer's routed experts. In every MoE layer each token is dispatched to the GPUs of its top-k
experts and the results are combined back: two all-to-alls.

Per decode step of a GPU with `b` sequences (`decode_step`), over the model's real layer list
(`ModelSpec.stack`: DeepSeek-V3's 3 dense first layers and 58 MoE layers, gpt-oss's alternating
sliding and full layers, Qwen3-MoE's uniform MoE layers):
- attention (MLA's absorbed decode FLOPs or GQA's KV stream, each layer over its own span),
  dense weights and shared experts, element-wise passes, output head: timing.decode_step_time
  at batch `b`, tp 1, with the routed experts taken out again;
- routed experts of each MoE layer: the group's b * ep tokens choose k experts each,
  uniformly (arch.flops.expected_experts_touched), so one GPU holds touched / ep of the
  experts a step touches; the busiest GPU receives `imbalance` x the mean b * k assignments,
  run as one grouped GEMM per weight (timing.grouped_gemm_time);
- all-to-all, per MoE layer: dispatch in FP8 (1 byte per element plus a 4-byte scale per
  128, DeepEP's FP8 dispatch, deepseek-ai/DeepEP README) and combine in BF16 (2 bytes) of
  b * k * hidden elements, (ep - 1) / ep of them leaving the GPU, at the scale-up fabric's
  bus bandwidth (advisor.perf.network.intra_node_fabric: the catalog's NVLink / xGMI figure
  per direction, NCCL's bus efficiency) plus the kernels' own fixed cost when the group fits
  the domain (`A2A_FIXED_IN_DOMAIN_US`, below; DeepEP and TensorRT-LLM's MoE all-to-all issue
  every peer's transfer in one kernel); else at the scale-out NIC's (`scale_out_gb_per_s`,
  400 Gb/s = 50 GB/s by default) with `LATENCY_ACROSS_US` per all-to-all.

In-domain fixed cost (`A2A_FIXED_IN_DOMAIN_US`, 37.75 us per MoE layer for dispatch and combine
together): each kernel ends (dispatch) or starts (combine) with a flag barrier over every rank
of the group, on top of its launch ("Synchronization": "Tail of dispatch ... all source ranks
must have finished writing", "Head of combine"; TensorRT-LLM tech blog 18, "Optimizing MoE
Communication with One-Sided AlltoAll Over NVLink", docs/source/blogs/tech_blog/
blog18_Optimizing_MoE_Communication_with_One_Sided_AlltoAll_Over_NVLink.md, stored commit
22de8b3). Its GB200 NVL72 table for the DeepSeek-V3 profile (hidden 7168, top-8, BF16, EP 8)
grows linearly from 64 to 2048 tokens per rank: dispatch 22.3 -> 311.8 us, combine 34.1 ->
322.6 us. The line through those rows crosses zero tokens at 12.96 us (dispatch) and 24.79 us
(combine). Its slope, 786 GB/s logical, matches this model's bandwidth term (693 GB/s over the
7/8 that leaves the GPU, 792 GB/s logical) within 1 %. The catalog's NVLink latency (5 us per
all-to-all) is the link's, not the kernels'; measured on GB200, assumed for every NVLink domain.

Prefill (`prefill_s`): each rank prefills one prompt of its own per iteration; its attention
and dense weights as timing.prefill_time counts them, its share of the group's routed-expert
work as in decode, and the all-to-all of its prompt's tokens (across nodes through DeepEP's
node forwarding, `all_to_all_s`).

Stated assumptions: `imbalance` (the busiest GPU's expert load over the mean) is 1.2 by
default: an assumption, not a measurement (DeepSeek's EPLB replicates hot experts to bring it
down, DeepSeek-V3 §3.4; Megatron-Bridge's MoE benchmarks "force-balance the token distribution
among experts", i.e. 1.0). Its order of size is what SGLang measured end to end: DeepSeek-V3
prefill at EP32 on H100 ran 50,302 tokens/s per node with its default expert placement and
59,337 with a simulated perfect balance, 1.18x (LMSYS, "Deploying DeepSeek with PD
Disaggregation and Large-scale Expert Parallelism on 96 H100 GPUs", 2025-05-05, "Overall
Throughput" table; lm-sys/lm-sys.github.io blog/2025-05-05-large-scale-ep.md). Across nodes the all-to-all latency is 30 us (assumed; DeepEP's
README reports 65-92 us for low-latency dispatch and combine at EP 8 over RDMA with 128
tokens, bandwidth included).

Two-batch overlap (`EPLayout.two_batch_overlap`, off by default): the engine splits each
iteration's batch into two micro-batches and runs the attention and MoE computation of one
while the dispatch and combine of the other are in flight ("we simultaneously process two
micro-batches with similar computational workloads, overlapping the attention and MoE of one
micro-batch with the dispatch and combine of another", DeepSeek-V3 Technical Report,
arXiv:2412.19437 §3.4.1, and §3.4.2 for decoding; SGLang's "Two-batch Overlap" (TBO), LMSYS
2025-05-05, which measured 27-35 % more prefill throughput with it). A decode step then lasts
phase by phase the longer of one micro-batch's computation and the other's communication,
not the sum: each micro-batch runs its own kernels (the weights are streamed once per
micro-batch) and its own all-to-all (its latency paid twice). Without it (TensorRT-LLM's
attention-DP runs in the perf overview state none) the all-to-alls sit on the critical path.

The overlap runs in four phases per MoE layer (`overlapped_s`), the order SGLang's TBO yields
in ("operations = [self._forward_attn, YieldOperation(), self._forward_dispatch,
self._forward_mlp, YieldOperation(), self._forward_combine]", LMSYS 2025-05-05, "Abstraction
for Clean Implementation"; DeepSeek-V3 §3.4.1 "overlapping the attention and MoE of one
micro-batch with the dispatch and combine of another"): micro-batch 1's attention beside
micro-batch 0's dispatch, 0's routed experts beside 1's dispatch, 1's routed experts beside 0's
combine, 0's next attention beside 1's combine. Each phase ends when both streams have (the
next computation needs the communication just finished), so a layer lasts the sum of four
maxima, not max(all computation, all communication): a short attention cannot hide the
BF16 combine (twice the FP8 dispatch's bytes). The dense first layers and the output head
have nothing to overlap and run after. The attention side of the MoE layers is the
non-expert time in proportion of their count (`rest` x MoE layers / layers; the head and the
dense layers' MLP are counted in it: an approximation).

Communication SMs (`COMM_SM_FRACTION`): DeepEP's normal (prefill) kernels run on SMs of their
own ("we allocate 20 out of the 132 SMs available in the H800 GPU for this purpose, which will
limit the computational throughput", DeepSeek-V3 §3.5.1; DeepEP's V1 example sets
`Buffer.set_num_sms(24)`, deepseek-ai/DeepEP docs/legacy.md), so while a dispatch or combine
is in flight beside it the other micro-batch's computation has 112 of 132 SMs: a phase lasts
max(comm, compute + comm x 20/132). The low-latency (decode) kernels receive through a hook
"without costing any GPU SMs" (the same document): no loss in decode. The fraction is the
H800's (the same GH100 die and 132 SMs as H100 SXM), assumed for every GPU. SGLang measured
what overlap buys in prefill: "a 27% to 35% throughput increase compared to the vanilla setup,
even when processing the same token count per device" (LMSYS 2025-05-05, "Ablation Study:
Two-batch Overlap"); max(compute, comm) alone gave 1.8x on its EP32 H100 prefill.

Server load with a context balancer (`server_point`): under random arrivals, in-flight
batching with attention DP puts a new request's prefill into a decode iteration of its own rank,
and "the time taken by the Attention part in any given iteration is determined by the rank with
the longest execution time" ("some ranks might be processing context (prefill) while others are
doing generation (decoding)"; TensorRT-LLM's ADP scheduler blog, docs/source/blogs/tech_blog/
bloc_x_adp-scheduler-opt.md, stored commit b107017): one rank's prefill stalls every rank of the
group. TensorRT-LLM's balancer holds context requests until every rank has one, or until it has
waited `timeout_iters` iterations (`_balance_adp_requests` in tensorrt_llm/_torch/pyexecutor/
py_executor.py: "adp_ctx_waiting_iters_count >= attention_dp_time_out_iters" releases
"balanced_context_requests = context_requests"; the counter rises in every iteration in which
not all ranks hold a context request), then "batching_wait_iters" more once all have one. At
a rate of `a` new requests per rank per iteration (Little's law: batch / output tokens at the
steady state) the held requests are released every R iterations, R = the expected first
iteration at which all `ep` ranks hold one ((1 - e^(-a j))^ep) plus the batching wait, capped
at the timeout; each rank then holds Poisson(a R) prompts and the release iteration lasts the
busiest rank's prefills: E[max over ep ranks of Poisson(a R) prompts' tokens] x one mean
prompt's prefill per mean prompt (`adp_context_stall_s`; the prompt lengths' spread E[L^2] /
E[L]^2 from the dataset where stated, as a gamma law: `busiest_prompt_tokens`).
Spread over the R iterations this replaces the rank's own prefill share of `point` (b x prefill
/ output per token). A request waits for the release (uniform over the R iterations: `ttft_
quantile` x R iterations) and the release iteration before its first token.
CUDA-graph padding (`cuda_graph_batch_sizes`, TensorRT-LLM's `cuda_graph_config.batch_sizes`
with `enable_padding`: "If true, batches are rounded up to the nearest cuda_graph_batch_size",
DecodeCudaGraphConfig reference, nvidia.github.io/TensorRT-LLM): a generation-only iteration
replays the captured graph of the smallest listed size at or above its batch, the batch filled
with dummy requests (CUDAGraphRunner._get_padded_batch in tensorrt_llm/_torch/pyexecutor/
cuda_graph_runner.py: under attention DP "new_batch_size = max(gen_only_batch[1] for
gen_only_batch in graph_batch_size)" over the ranks, then "padded_batch_size = self.
_round_up_batch_size(new_batch_size)", the dummies "batch.generation_requests.extend([self.
padding_dummy_request] * padding_size)"). So the step's row work (projections, routed experts,
dispatch and combine) runs at the padded size P while the KV cache read stays the real b
sequences' (the dummies share one short request): `decode_step` at P sequences of context
ctx b / P, in every iteration but the release (a batch holding prompts runs without a graph,
`can_run_cuda_graph`). P is taken at the rank's own b (the fetch balances the ranks' active
counts, ExecutorRequestQueue._schedule_attention_dp_requests): a lower bound on the group's
maximum. NVIDIA/TensorRT-LLM PR 13393 (2026-04-27) measured the waste on DeepSeek-R1: batch
sizes in steps of 64 instead of doubling gave "up to 1.3x" output throughput at high
concurrency.
Stated assumption: the first token's trip through the serving front end is not timed (0 s).
NVIDIA's MLPerf v5.1 DeepSeek-R1 harness (closed/NVIDIA/code/llmlib/ of inference_results_v5.1,
read at the copy ykamiset/inference_results_v5.1 e9ccad4) sends each query over HTTP to one
trtllm-serve per DEP instance, the Server scenario picking the instance with the fewest pending
samples (config.py "load_balancing", factory.py), and streams every generated token back
(stream_interval 1, num_postprocess_workers 2); the first token reaches LoadGen when the client
parses the first streamed chunk with text (cores/http_async_client.py). TensorRT-LLM names the
per-token response work (detokenisation, OpenAI objects) as the cost of large attention-DP
runs (tech blog 8, "Support Stream Interval"; PR 6332: "only revealed when the concurrency gets
high enough (especially the case if attention DP is enabled"), and a new request's first chunk
waits behind it; no source gives a time per response, so it is left out, and `ttft_s` is a
lower bound where a run streams every token at full attention-DP concurrency.

Offline job (`offline_run`): a finite set of `requests_per_gpu` fixed-length requests queued
at once, run under an in-flight batching scheduler's `max_batch` and `max_num_tokens`
(advisor.perf.offline): each iteration lasts `decode_step` at the sequences then generating
plus `prefill_s` per prompt it admits. `point` is its limit for a job of many more requests
than `max_batch`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from ..arch.flops import expected_experts_touched
from ..arch.models import ModelSpec
from ..core.errors import AdvisorError, check_int, check_positive
from ..memory import estimate as mem
from . import efficiency as eff
from . import network as net
from . import offline, timing
from .timing import KV_BYTES, decode_weight_bytes

DEFAULT_IMBALANCE = 1.2
SCALE_OUT_GB_PER_S = 50.0  # one 400 Gb/s NIC per GPU
LATENCY_ACROSS_US = 30.0
# dispatch + combine fixed cost within an NVLink domain, us (module docstring: TensorRT-LLM tech
# blog 18, GB200 NVL72, EP 8: intercepts 12.96 + 24.79 of its 64- and 2048-token rows)
A2A_FIXED_IN_DOMAIN_US = 37.75
DISPATCH_BYTES = 1.0 + 4.0 / 128  # FP8 plus one fp32 scale per 128 elements
COMBINE_BYTES = 2.0
# SMs DeepEP's normal kernels hold while a dispatch or combine runs (module docstring: DeepSeek-V3
# §3.5.1, 20 of the H800's 132); the low-latency kernels hold none while their hook waits
COMM_SM_FRACTION = 20 / 132


@dataclass(frozen=True)
class EPLayout:
    ep: int  # GPUs in the expert-parallel group (attention data-parallel ranks)
    domain: int = 8  # GPUs in one scale-up (NVLink) domain
    imbalance: float = DEFAULT_IMBALANCE
    scale_out_gb_per_s: float = SCALE_OUT_GB_PER_S
    two_batch_overlap: bool = False  # module docstring: DeepSeek-V3 §3.4, SGLang's TBO

    def __post_init__(self):
        check_int("ep", self.ep, maximum=4096)
        check_int("domain", self.domain, maximum=4096)
        check_positive("imbalance", self.imbalance, maximum=16.0)
        if self.imbalance < 1.0:
            raise AdvisorError(
                "ep.imbalance",
                f"imbalance: {self.imbalance} is below 1 (the busiest GPU's load over the mean)",
                field="imbalance",
            )
        check_positive("scale_out_gb_per_s", self.scale_out_gb_per_s, maximum=10_000.0)
        if not isinstance(self.two_batch_overlap, bool):
            raise AdvisorError(
                "ep.two_batch_overlap",
                f"two_batch_overlap: expected true or false, got {self.two_batch_overlap!r}",
                field="two_batch_overlap",
            )

    @property
    def in_domain(self) -> bool:
        return self.ep <= self.domain

    @property
    def load_factor(self) -> float:
        """The busiest GPU's expert load over the mean: `imbalance`, 1 for a lone GPU."""
        return self.imbalance if self.ep > 1 else 1.0


def _check_moe(spec: ModelSpec, layout: EPLayout):
    if not spec.is_moe:
        raise AdvisorError(
            "ep.dense_model",
            f"model: {spec.name} has no experts; expert parallelism needs an MoE model",
            field="model",
        )
    if layout.ep > spec.num_experts:
        raise AdvisorError(
            "ep.too_wide",
            f"ep: {layout.ep} GPUs for {spec.num_experts} experts per layer leaves some idle",
            field="ep",
            maximum=spec.num_experts,
        )


def _expert_time(spec: ModelSpec, mlp, dev, m_tokens: float, touched: float, wb, dq) -> float:
    """One MoE layer's routed experts: `touched` experts sharing `m_tokens` assignments, one
    grouped GEMM per weight."""
    if touched <= 0 or m_tokens <= 0:
        return 0.0
    per = m_tokens / touched
    return sum(
        timing.grouped_gemm_time(touched, per, k, n, dev, weight_bytes=wb, dequant=dq)
        for k, n in timing.expert_linears(spec, mlp)
    )


def moe_layers(spec: ModelSpec) -> tuple:
    """(MoE MLP, count) for each distinct MoE layer of the stack."""
    return tuple(
        (layer.mlp, count) for layer, count in timing.layer_groups(spec) if layer.mlp.is_moe
    )


def remote_nodes(k: int, nodes: int) -> float:
    """Expected number of other nodes a token's k experts fall on, experts spread evenly over
    `nodes` nodes and chosen uniformly: (nodes - 1) * (1 - (1 - 1/nodes)^k)."""
    if nodes <= 1:
        return 0.0
    return (nodes - 1) * (1.0 - (1.0 - 1.0 / nodes) ** k)


def all_to_all_s(
    spec: ModelSpec,
    gpu,
    tokens: float,
    layout: EPLayout,
    mlp=None,
    *,
    forward_by_node: bool = False,
) -> float:
    """One MoE layer's dispatch + combine for `tokens` tokens on one GPU (module docstring).

    Across nodes, `forward_by_node` is DeepEP's normal (prefill and training) kernels: a token
    crosses the NIC once per destination node and is spread over NVLink there ("forwarding data
    from NVLink domain to RDMA domain", deepseek-ai/DeepEP README; DeepSeek-V3 §3.2), so the NIC
    carries `remote_nodes` copies of it instead of one per remote expert; the NVLink leg runs
    beside it and the slower of the two counts. Decode uses DeepEP's low-latency kernels "with
    pure RDMA": one copy per remote expert (`forward_by_node` False)."""
    if layout.ep <= 1:
        return 0.0
    k = mlp.experts_per_token if mlp is not None else spec.experts_per_token
    per_token = spec.hidden_size * (DISPATCH_BYTES + COMBINE_BYTES) * layout.load_factor
    fab = net.intra_node_fabric(gpu)
    if layout.in_domain:
        out = tokens * k * (layout.ep - 1) / layout.ep * per_token
        fixed = max(2 * fab.latency_s, A2A_FIXED_IN_DOMAIN_US * 1e-6)
        return fixed + out / fab.bytes_per_s
    nic = layout.scale_out_gb_per_s * 1e9 * net.DEFAULT_BUS_EFFICIENCY
    if forward_by_node:
        nodes = -(-layout.ep // layout.domain)
        rdma = tokens * remote_nodes(k, nodes) * per_token / nic
        nvlink = tokens * k * (layout.domain - 1) / layout.ep * per_token / fab.bytes_per_s
        return 2 * LATENCY_ACROSS_US * 1e-6 + max(rdma, nvlink)
    out = tokens * k * (layout.ep - 1) / layout.ep * per_token
    return 2 * LATENCY_ACROSS_US * 1e-6 + out / nic


def _phase_s(compute: float, comm: float, sm_fraction: float) -> float:
    """One two-batch-overlap phase: one micro-batch's computation beside the other's dispatch
    or combine, the computation short of `sm_fraction` of the SMs while the communication runs
    (module docstring, "Communication SMs"): max(comm, compute + comm x sm_fraction)."""
    return max(comm, compute + comm * sm_fraction)


def overlapped_s(spec: ModelSpec, micro: tuple, *, sm_fraction: float) -> tuple[float, float]:
    """(seconds, of which the communication adds) of a two-batch-overlap pass over the layer
    list (module docstring): `micro` holds each micro-batch's (attention and dense, routed
    experts, all-to-all) seconds. The MoE layers run in four phases, each the longer of one
    micro-batch's computation and the other's dispatch (FP8, DISPATCH_BYTES per element) or
    combine (BF16, COMBINE_BYTES), the all-to-all split by those bytes; the attention side of
    the MoE layers is `rest` x MoE layers / layers, the rest (dense layers, head) runs alone."""
    n_moe = sum(count for _, count in moe_layers(spec))
    share = n_moe / spec.num_layers
    d_share = DISPATCH_BYTES / (DISPATCH_BYTES + COMBINE_BYTES)
    (r0, e0, x0), (r1, e1, x1) = micro
    a0, a1 = r0 * share, r1 * share
    d0, d1 = x0 * d_share, x1 * d_share
    c0, c1 = x0 - d0, x1 - d1
    f = sm_fraction
    moe = _phase_s(a1, d0, f) + _phase_s(e0, d1, f) + _phase_s(e1, c0, f) + _phase_s(a0, c1, f)
    alone = (r0 + r1) * (1.0 - share)
    total = moe + alone
    return total, total - (r0 + r1 + e0 + e1)


def _decode_parts(
    spec, gpu, dev, stack, *, b, context, weights, kv_dtype, layout, wb, dq, graph_sizes=None
):
    """(attention and dense, routed experts, all-to-all) seconds of one decode step of `b`
    sequences on one GPU of the group, without overlap (decode_step). With `graph_sizes` (CUDA
    graphs with padding, timing.padded_batch) every rank runs the graph of its padded batch:
    the GEMMs, the routed experts and the dispatch / combine over its padded slots, the
    KV-cache read over its `b` sequences."""
    g = timing.padded_batch(b, graph_sizes)
    whole = timing.decode_step_time(
        spec,
        dev,
        stack,
        batch=b,
        context=context,
        weights=weights,
        kv_bytes=KV_BYTES[kv_dtype],
        tp=1,
        tp_fabric=None,
        graph_batch=g,
    )
    own = experts = a2a = 0.0
    for mlp, count in moe_layers(spec):
        e, k = mlp.experts, mlp.experts_per_token
        # the routed experts as decode_step_time counted them (all on one GPU) ...
        own += count * _expert_time(
            spec, mlp, dev, g * k, expected_experts_touched(e, k, g), wb, dq
        )
        # ... and as the busiest GPU of the group runs them
        touched = expected_experts_touched(e, k, g * layout.ep) / layout.ep
        experts += count * _expert_time(spec, mlp, dev, g * k * layout.load_factor, touched, wb, dq)
        a2a += count * all_to_all_s(spec, gpu, g, layout, mlp)
    return whole["seconds"] - own, experts, a2a


def decode_step(
    spec: ModelSpec,
    gpu,
    *,
    batch: int,
    context: int,
    weights: str,
    kv_dtype: str,
    layout: EPLayout,
    stack: eff.Stack | None = None,
    activations: str | None = None,
    engine: str | None = None,
    graph_batch_sizes: tuple[int, ...] | None = None,
) -> MappingProxyType:
    """One decode step of one GPU of the EP group with `batch` sequences (module docstring):
    seconds by part. With `layout.two_batch_overlap` the batch runs as two micro-batches
    (ceil and floor of half) in the four phases of `overlapped_s`, DeepEP's low-latency
    kernels holding no SMs. `graph_batch_sizes`: CUDA graphs captured at these batch sizes
    with padding (`_decode_parts`, timing.padded_batch)."""
    _check_moe(spec, layout)
    stack = stack or eff.DEFAULT_STACK
    b = check_int("batch", batch, maximum=1 << 16)
    dev = timing.Device.of(gpu, timing.matmul_peak_key(gpu, weights, activations), stack)
    wb = timing._weight_bytes(weights)
    dq = timing.weight_dequant(stack, weights, dev)
    kw = dict(
        context=context,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        wb=wb,
        dq=dq,
        graph_sizes=timing.check_graph_batch_sizes(graph_batch_sizes),
    )
    if layout.two_batch_overlap and b > 1:
        halves = [_decode_parts(spec, gpu, dev, stack, b=h, **kw) for h in ((b + 1) // 2, b // 2)]
        rest, experts, a2a = (sum(x) for x in zip(*halves, strict=True))
        total, exposed = overlapped_s(spec, tuple(halves), sm_fraction=0.0)
    else:
        rest, experts, a2a = _decode_parts(spec, gpu, dev, stack, b=b, **kw)
        total = rest + experts + a2a
        exposed = a2a
    # TensorRT-LLM's MoE layers beyond the model's kernels (fitted, efficiency.trtllm_moe_extra_s)
    engine_s = eff.trtllm_moe_extra_s(stack, gpu, engine, expert_s=experts + a2a)
    total += engine_s
    return MappingProxyType(
        {
            "seconds": total,
            "attention_dense_s": rest,
            "experts_s": experts,
            "all_to_all_s": a2a,
            # the part of the step the all-to-alls add (all of them without overlap)
            "all_to_all_exposed_s": exposed,
            "engine_moe_s": engine_s,
        }
    )


def prefill_s(
    spec: ModelSpec,
    gpu,
    *,
    prompt: int,
    weights: str,
    layout: EPLayout,
    stack: eff.Stack | None = None,
    activations: str | None = None,
    engine: str | None = None,
) -> float:
    """One prompt's prefill on one GPU of the EP group, every rank prefilling one prompt of its
    own in the same iteration (the MoE layers need all ranks): attention, dense weights and
    shared experts for its `prompt` tokens (timing.prefill_time at tp 1, routed experts taken
    out again), then in each MoE layer the busiest GPU's share of the group's ep * prompt
    tokens (touched / ep experts, `imbalance` x the mean prompt * k assignments, one grouped
    GEMM per weight) and the dispatch and combine of its prompt's tokens. With
    `layout.two_batch_overlap` the prompt's tokens run as two micro-batches of half each in the
    four phases of `overlapped_s`, each paying its own all-to-all, DeepEP's normal kernels
    holding COMM_SM_FRACTION of the SMs while they run."""
    _check_moe(spec, layout)
    stack = stack or eff.DEFAULT_STACK
    dev = timing.Device.of(gpu, timing.matmul_peak_key(gpu, weights, activations), stack)
    whole = timing.prefill_time(
        spec, dev, stack, batch=1, prompt=prompt, weights=weights, tp=1, tp_fabric=None
    )["seconds"]
    wb = timing._weight_bytes(weights)
    dq = timing.weight_dequant(stack, weights, dev)
    t = float(prompt)
    own = experts = a2a = 0.0
    for mlp, count in moe_layers(spec):
        e, k = mlp.experts, mlp.experts_per_token
        own += count * _expert_time(
            spec, mlp, dev, t * k, expected_experts_touched(e, k, prompt), wb, dq
        )
        touched = expected_experts_touched(e, k, prompt * layout.ep) / layout.ep
        experts += count * _expert_time(spec, mlp, dev, t * k * layout.load_factor, touched, wb, dq)
        a2a += count * all_to_all_s(spec, gpu, t, layout, mlp, forward_by_node=True)
    engine_s = eff.trtllm_moe_extra_s(stack, gpu, engine, expert_s=experts + a2a)
    if layout.two_batch_overlap:
        # two micro-batches of half the tokens, each with its own all-to-all (module docstring)
        half = sum(
            count * all_to_all_s(spec, gpu, t / 2, layout, mlp, forward_by_node=True)
            for mlp, count in moe_layers(spec)
        )
        mb = ((whole - own) / 2, experts / 2, half)
        total, _ = overlapped_s(spec, (mb, mb), sm_fraction=COMM_SM_FRACTION)
        return total + engine_s
    return whole - own + experts + a2a + engine_s


def weight_bytes_per_gpu(spec: ModelSpec, weights: str, layout: EPLayout) -> float:
    """Non-expert weights in full (replicated) plus 1/ep of the routed experts, summed over the
    layer list (dense first layers hold no routed experts)."""
    _check_moe(spec, layout)
    from ..arch import quant

    total = decode_weight_bytes(spec, weights, batch=1 << 30)
    fmt = quant.weight_format(weights)
    per = fmt.bytes_per_param()[0]
    h = spec.hidden_size
    routed = sum(
        count * mlp.experts * (3 if mlp.gated else 2) * h * mlp.width * per
        for mlp, count in moe_layers(spec)
    )
    return total - routed + routed / layout.ep


def max_batch_per_gpu(
    spec: ModelSpec,
    gpu,
    *,
    context: int,
    weights: str,
    kv_dtype: str,
    layout: EPLayout,
    gpu_memory_utilization: float = 0.9,
    engine: str | None = None,
) -> int:
    """Sequences of `context` tokens whose KV cache fits beside this GPU's weights (each GPU
    keeps the whole cache of its own sequences: DP attention). Sliding-window layers count as
    the engine keeps them (advisor.memory.estimate.engine_keeps_window, the rule the
    tensor-parallel path serving.max_concurrency shares): "vllm" at their window, "trtllm" at
    the whole context; None (the default) at their window, as before the rule existed."""
    free = gpu.memory_bytes * gpu_memory_utilization - weight_bytes_per_gpu(spec, weights, layout)
    windowed = True if engine is None else mem.engine_keeps_window(engine)
    # per layer its KV elements per token (MLA's latent, GQA's 2 * kv_dim) times its span
    per_seq = mem.sequence_kv_bytes(spec, context, kv_dtype, windowed=windowed)
    return max(0, int(free // per_seq))


@dataclass(frozen=True)
class EPPoint:
    batch_per_gpu: int
    ep: int
    tpot_s: float
    ttft_s: float
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float
    all_to_all_share: float  # of a decode step: the part it adds (behind compute with overlap)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def point(
    spec: ModelSpec,
    gpu,
    *,
    batch_per_gpu: int,
    input_tokens: int,
    output_tokens: int,
    weights: str = "fp8",
    kv_dtype: str = "fp8",
    layout: EPLayout,
    stack: eff.Stack | None = None,
    activations: str | None = None,
    engine: str | None = None,
    graph_batch_sizes: tuple[int, ...] | None = None,
) -> EPPoint:
    """The steady state of advisor.perf.serving (prefills between the decode steps, TPOT = cycle /
    output) on one GPU of the EP group, with `batch_per_gpu` requests in flight on each GPU.
    `graph_batch_sizes`: CUDA graphs with padding (decode_step)."""
    stack = stack or eff.DEFAULT_STACK
    b = check_int("batch_per_gpu", batch_per_gpu, maximum=1 << 16)
    ctx = input_tokens + output_tokens // 2
    cap = max_batch_per_gpu(
        spec,
        gpu,
        context=input_tokens + output_tokens,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        engine=engine,
    )
    if b > cap:
        raise AdvisorError(
            "serving.kv_full",
            f"batch_per_gpu: {b} requests of {input_tokens + output_tokens} tokens do not fit "
            f"one GPU's KV cache beside its weights ({cap} do)",
            field="batch_per_gpu",
            value=b,
            maximum=cap,
        )
    step = decode_step(
        spec,
        gpu,
        batch=b,
        context=ctx,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        stack=stack,
        activations=activations,
        engine=engine,
        graph_batch_sizes=graph_batch_sizes,
    )
    pf = prefill_s(
        spec,
        gpu,
        prompt=input_tokens,
        weights=weights,
        layout=layout,
        stack=stack,
        activations=activations,
        engine=engine,
    )
    cycle = b * pf + output_tokens * step["seconds"]
    tpot = cycle / output_tokens
    return EPPoint(
        batch_per_gpu=b,
        ep=layout.ep,
        tpot_s=tpot,
        ttft_s=pf + step["seconds"] + stack.request_ms * 1e-3,
        tokens_per_s_per_user=1 / tpot,
        tokens_per_s_per_gpu=b * output_tokens / cycle,
        all_to_all_share=step["all_to_all_exposed_s"] / step["seconds"],
    )


def _poisson_max_mean(mu: float, n: int) -> float:
    """E[max of n independent Poisson(mu) counts]: the sum over j >= 1 of 1 - P(N < j)^n."""
    if mu <= 0 or n < 1:
        return 0.0
    total, cdf, pmf, j = 0.0, 0.0, math.exp(-mu), 0
    while True:
        cdf += pmf  # P(N <= j)
        tail = 1.0 - cdf**n  # P(max > j)
        if tail < 1e-12 or j > 10_000:
            return total
        total += tail
        j += 1
        pmf *= mu / j


def _gamma_p(a: float, x: float) -> float:
    """Regularised lower incomplete gamma P(a, x): its series below a + 1, Lentz's continued
    fraction for the upper part above (Press et al., Numerical Recipes, 3rd ed., §6.2)."""
    if x <= 0:
        return 0.0
    lead = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(1000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-14:
                break
        return min(1.0, total * lead)
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-14:
            break
    return max(0.0, 1.0 - lead * h)


@lru_cache(maxsize=4096)
def busiest_prompt_tokens(
    mu: float, n: int, length_moment2: float = 1.0, tagged: bool = False
) -> float:
    """E[max over n ranks of the prompt tokens each holds], in mean prompt lengths: each rank
    holds Poisson(mu) prompts whose lengths have E[L^2] / E[L]^2 = `length_moment2` (a gamma
    law of that spread, unit mean; 1: all of one length, E[max of n Poisson(mu)]). `tagged`:
    as a given request sees it, its own rank holding its prompt besides Poisson(mu) others
    (Poisson arrivals see the time averages). The sum of j gamma lengths is gamma of j times
    the shape, so P(max <= x) = F_own(x) F(x)^(n-1) with F the compound Poisson law; E[max] =
    the integral of 1 - P(max <= x) over x >= 0 (Simpson's rule; a sum for one length)."""
    if n < 1 or mu < 0 or (mu == 0 and not tagged):
        return 0.0
    pmf = [math.exp(-mu)]
    while pmf[-1] > 1e-12 or len(pmf) <= mu:
        pmf.append(pmf[-1] * mu / len(pmf))
    shift = 1 if tagged else 0
    spread = length_moment2 - 1.0
    if spread <= 1e-9:
        cum = [sum(pmf[: k + 1]) for k in range(len(pmf) + 1)]

        def at_most(k: int) -> float:
            return 0.0 if k < 0 else cum[min(k, len(cum) - 1)]

        return sum(1.0 - at_most(k - shift) * at_most(k) ** (n - 1) for k in range(len(pmf) + 1))
    shape = 1.0 / spread  # unit mean, variance `spread`

    def law(x: float, extra: int) -> float:
        return sum(
            p * (1.0 if j + extra == 0 else _gamma_p((j + extra) * shape, x * shape))
            for j, p in enumerate(pmf)
        )

    top = (len(pmf) + 2) * (1 + 8 * math.sqrt(spread))
    steps = 400
    h = top / steps
    ys = [1.0 - law(i * h, shift) * law(i * h, 0) ** (n - 1) for i in range(steps + 1)]
    return h / 3 * (ys[0] + ys[-1] + 4 * sum(ys[1:-1:2]) + 2 * sum(ys[2:-1:2]))


def balancer_release_iters(
    arrivals_per_iter: float, *, ep: int, timeout_iters: int, batching_wait_iters: int = 0
) -> float:
    """Expected iterations between two releases of held context requests (module docstring,
    "Server load"): the first iteration at which each of the `ep` ranks holds a new request
    (each rank's arrivals Poisson at `arrivals_per_iter` per iteration) plus the batching wait,
    at most `timeout_iters`."""
    check_int("timeout_iters", timeout_iters, maximum=100_000)
    if arrivals_per_iter <= 0:
        return float(timeout_iters)
    expected = 0.0
    for j in range(timeout_iters):
        all_hold = (1.0 - math.exp(-arrivals_per_iter * j)) ** ep if j else 0.0
        expected += 1.0 - all_hold
    held = (1.0 - math.exp(-arrivals_per_iter * timeout_iters)) ** ep
    return min(float(timeout_iters), expected + held * batching_wait_iters)


def adp_context_stall_s(
    prefill_per_prompt_s: float,
    arrivals_per_iter: float,
    *,
    ep: int,
    timeout_iters: int,
    batching_wait_iters: int = 0,
    prompt_moment2: float = 1.0,
) -> tuple[float, float]:
    """(seconds per iteration the group waits on prefills, iterations between releases) under
    TensorRT-LLM's attention-DP balancer (module docstring, "Server load"): every R iterations
    the release iteration lasts the busiest of `ep` ranks' prompt tokens
    (`busiest_prompt_tokens`: Poisson(a R) prompts per rank, lengths of E[L^2]/E[L]^2
    `prompt_moment2`), in mean prompts times one mean prompt's prefill (a prefill's time taken
    as proportional to its tokens), spread over R."""
    r = balancer_release_iters(
        arrivals_per_iter,
        ep=ep,
        timeout_iters=timeout_iters,
        batching_wait_iters=batching_wait_iters,
    )
    busiest = busiest_prompt_tokens(arrivals_per_iter * r, ep, prompt_moment2)
    return busiest * prefill_per_prompt_s / r, r


def padding_s(
    spec: ModelSpec,
    gpu,
    *,
    batch_per_gpu: int,
    context: int,
    graph_batch_sizes: tuple[int, ...] | None,
    weights: str,
    kv_dtype: str,
    layout: EPLayout,
    stack: eff.Stack | None = None,
    activations: str | None = None,
    engine: str | None = None,
) -> float:
    """Seconds a generation-only decode step gains from CUDA-graph padding (module docstring,
    "CUDA-graph padding"): `decode_step` with the graph sizes (its rows at the padded size,
    the KV-cache read of the real batch: `_decode_parts`, timing.padded_batch) less
    `decode_step` without. 0 without graph sizes, at a listed size, or above the largest (no
    graph)."""
    sizes = timing.check_graph_batch_sizes(graph_batch_sizes)
    b = check_int("batch_per_gpu", batch_per_gpu, maximum=1 << 16)
    if timing.padded_batch(b, sizes) == b:
        return 0.0
    kw = dict(
        context=context,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        stack=stack,
        activations=activations,
        engine=engine,
    )
    real = decode_step(spec, gpu, batch=b, **kw)["seconds"]
    padded = decode_step(spec, gpu, batch=b, graph_batch_sizes=sizes, **kw)["seconds"]
    return max(0.0, padded - real)


def server_point(
    spec: ModelSpec,
    gpu,
    *,
    batch_per_gpu: int,
    input_tokens: int,
    output_tokens: int,
    weights: str = "fp8",
    kv_dtype: str = "fp8",
    layout: EPLayout,
    timeout_iters: int,
    batching_wait_iters: int = 0,
    prompt_moment2: float = 1.0,
    ttft_quantile: float = 0.5,
    stack: eff.Stack | None = None,
    activations: str | None = None,
    engine: str | None = None,
    cuda_graph_batch_sizes: tuple[int, ...] | None = None,
) -> EPPoint:
    """`point` under random arrivals with in-flight batching and TensorRT-LLM's attention-DP
    balancer (module docstring, "Server load"): the rank's own prefill share of a token is
    replaced by the group's stall on the busiest rank's prefills (`adp_context_stall_s`, the
    arrivals per rank per iteration batch / output by Little's law), and the first token waits
    `ttft_quantile` of the R iterations between releases, then the release iteration.
    `prompt_moment2`: E[L^2] / E[L]^2 of the prompt lengths (1: all `input_tokens` long).
    `cuda_graph_batch_sizes`: the engine's captured CUDA-graph batch sizes with padding on; the
    generation-only iterations run at the next size up (`padding_s`)."""
    check_positive("ttft_quantile", ttft_quantile, maximum=1.0)
    check_positive("prompt_moment2", prompt_moment2, maximum=100.0)
    if prompt_moment2 < 1.0:
        raise AdvisorError(
            "ep.prompt_moment2",
            f"prompt_moment2: {prompt_moment2} is below 1 (E[L^2] >= E[L]^2 for any lengths)",
            field="prompt_moment2",
        )
    base = point(
        spec,
        gpu,
        batch_per_gpu=batch_per_gpu,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        stack=stack,
        activations=activations,
        engine=engine,
    )
    stack = stack or eff.DEFAULT_STACK
    pf = prefill_s(
        spec,
        gpu,
        prompt=input_tokens,
        weights=weights,
        layout=layout,
        stack=stack,
        activations=activations,
        engine=engine,
    )
    b = base.batch_per_gpu
    own = b * pf / output_tokens
    step = base.tpot_s - own  # the decode step alone
    arrivals = b / output_tokens
    stall, r = adp_context_stall_s(
        pf,
        arrivals,
        ep=layout.ep,
        timeout_iters=timeout_iters,
        batching_wait_iters=batching_wait_iters,
        prompt_moment2=prompt_moment2,
    )
    pad = padding_s(
        spec,
        gpu,
        batch_per_gpu=b,
        context=input_tokens + output_tokens // 2,
        graph_batch_sizes=cuda_graph_batch_sizes,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        stack=stack,
        activations=activations,
        engine=engine,
    )
    # every iteration but the release replays a padded graph
    step = step + pad * (r - 1.0) / r if r > 1.0 else step
    tpot = step + stall
    # the request's own release iteration: its rank holds its prompt besides the others'
    release = step + busiest_prompt_tokens(arrivals * r, layout.ep, prompt_moment2, True) * pf
    ttft = ttft_quantile * r * tpot + release + stack.request_ms * 1e-3
    return EPPoint(
        batch_per_gpu=b,
        ep=layout.ep,
        tpot_s=tpot,
        ttft_s=ttft,
        tokens_per_s_per_user=1 / tpot,
        tokens_per_s_per_gpu=b / tpot,
        all_to_all_share=base.all_to_all_share,
    )


def offline_run(
    spec: ModelSpec,
    gpu,
    *,
    requests_per_gpu: int,
    max_batch: int,
    max_num_tokens: int,
    input_tokens: int,
    output_tokens: int,
    weights: str = "fp8",
    kv_dtype: str = "fp8",
    layout: EPLayout,
    stack: eff.Stack | None = None,
    activations: str | None = None,
    engine: str | None = None,
    graph_batch_sizes: tuple[int, ...] | None = None,
) -> offline.OfflineRun:
    """An offline job on one GPU of the EP group (module docstring, "Offline job"): the
    iterations of advisor.perf.offline.schedule, each lasting `decode_step` at its generating
    sequences (context: the prompt plus half the output, as `point`) plus `prefill_s` per
    admitted prompt; every rank of the group runs the same schedule (fixed lengths, requests
    spread evenly). `graph_batch_sizes`: CUDA graphs with padding (decode_step)."""
    stack = stack or eff.DEFAULT_STACK
    steady = point(
        spec,
        gpu,
        batch_per_gpu=max_batch,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        stack=stack,
        activations=activations,
        engine=engine,
        graph_batch_sizes=graph_batch_sizes,
    )  # checks the batch against the KV cache
    kw = dict(
        context=input_tokens + output_tokens // 2,
        weights=weights,
        kv_dtype=kv_dtype,
        layout=layout,
        stack=stack,
        activations=activations,
        engine=engine,
        graph_batch_sizes=graph_batch_sizes,
    )
    pf = prefill_s(
        spec,
        gpu,
        prompt=input_tokens,
        weights=weights,
        layout=layout,
        stack=stack,
        activations=activations,
        engine=engine,
    )
    return offline.run(
        requests_per_gpu,
        max_batch=max_batch,
        max_num_tokens=max_num_tokens,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        decode_step_s=lambda n: decode_step(spec, gpu, batch=n, **kw)["seconds"],
        prefill_per_prompt_s=pf,
        steady_tokens_per_s_per_gpu=steady.tokens_per_s_per_gpu,
    )
