"""Training step time on a parallel layout (TP x PP x CP x DP x EP, one or many nodes), from the
kernel-level model of advisor.perf.timing and the collectives of advisor.perf.network, over the
model's own layer list (issue 35: each layer's attention, MHA/GQA/MLA, full, sliding or chunked,
and its MLP, dense or MoE with routed experts at k/E and shared experts; `layer_times`).

step = (m + (p-1)/v) * t_microbatch_stage            (1F1B / interleaved pipeline, Narayanan
                                                      et al. 2021 eq. 1 and §2.2.2)
     + pipeline sends                                 (p2p of b*s*h activations, fwd and bwd)
     + exposed data-parallel traffic                  (gradient all-reduce / reduce-scatter +
                                                      all-gather hidden behind the last
                                                      micro-batch's backward, Li et al. 2020
                                                      §3.2.3; ZeRO-3 gathers hidden behind the
                                                      step's compute, Rajbhandari et al. 2020;
                                                      routed experts' gradients over their
                                                      expert-data-parallel group)
     + optimizer step                                 (master weights, states, gradients read
                                                      and written once at achievable bandwidth)
t_microbatch_stage = sum over the busiest stage's layers of (fwd + bwd + recompute + exposed
                     TP, EP and CP traffic + the host wait of an MoE layer under Megatron-Core's
                     alltoall dispatcher, MOE_DISPATCHERS) + head.

Stages are contiguous runs of layers (`stage_chunks`); the one whose layers take longest sets
the pipeline's pace (DeepSeek-V3's first three dense layers make their stage lighter). MoE
layers with expert parallelism add a dispatch and a combine all-to-all in the forward and in
the backward pass (`moe_alltoall_s`) over NVLink inside the scale-up domain (8 GPUs of an HGX
node, 72 of an NVL72 rack) and over the network beyond it; the busiest GPU's routed load is
`imbalance` x the mean (an assumption, stated at TRAIN_IMBALANCE). Precisions: 16-bit, FP8
(per tensor), MXFP8 and NVFP4 at the card's FP8 / FP4 dense peak where its tensor cores take
the format (`training_peak_key`), with 16-bit activations and FP32 master weights and
optimizer states (advisor.perf.cluster's memory).

MFU follows the published convention: model FLOPs (6N + attention, no recompute, no causal
halving; advisor.arch.flops.training_flops) over step time x dense peak x GPUs (Chowdhery et
al. 2022, arXiv:2204.02311 appendix B).

`setup_step` runs `train_step` for a memory model's `TrainingSetup` (one node, data-parallel
ranks of one micro-batch each: the layout the budget calculator, the picker, `advisor cost run`
and the reports size a run with); `at_mfu` replaces the model's step time with a stated MFU (a
user's --mfu, a measured bench run): step = model FLOPs / (GPUs * dense peak * MFU), the
definition of MFU; `run` is the time to train on a token budget (whole steps).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field, replace

from ..arch import flops
from ..arch import layers as L
from ..arch.models import ModelSpec, param_count
from ..core.errors import AdvisorError, check_choice, check_int, check_positive
from ..memory import estimate as mem
from . import efficiency as eff
from . import network as net
from . import timing
from .parallel import Layout, domain_of

PRECISIONS = ("bf16", "fp16", "amp-bf16", "amp-fp16", "fp8", "mxfp8", "nvfp4", "fp32")
CHECKPOINTING = ("none", "selective", "full")


@dataclass(frozen=True)
class TrainStep:
    step_time_s: float
    tokens_per_step: int
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    model_tflops_per_gpu: float
    mfu: float
    peak_key: str
    layout: Layout
    parts_s: dict = field(
        hash=False
    )  # compute, tp_comm, ep_comm, cp_comm, moe_host, bubble, p2p, dp_exposed, optimizer
    notes: tuple[str, ...] = ()
    # which fabric each collective crosses (`collective_domains`): group -> ranks, over, fabric
    collectives: dict = field(default_factory=dict, hash=False)

    def to_dict(self) -> dict:
        return {
            "step_time_s": self.step_time_s,
            "tokens_per_step": self.tokens_per_step,
            "tokens_per_s": self.tokens_per_s,
            "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
            "model_tflops_per_gpu": self.model_tflops_per_gpu,
            "mfu": self.mfu,
            "peak_key": self.peak_key,
            "layout": self.layout.to_dict(),
            "parts_s": dict(self.parts_s),
            "notes": list(self.notes),
            "collectives": {k: dict(v) for k, v in self.collectives.items()},
        }


# bitsandbytes' NF4 dequantisation (kDequantizeBlockwise, F.dequantize_4bit) reaches about a
# quarter of the card's peak memory bandwidth. Measured in bitsandbytes PR #2051
# (github.com/bitsandbytes-foundation/bitsandbytes/pull/2051, read 2026-12-06, on SM103 =
# B300, 8 TB/s): the 4-bit fallback forward (dequantise, then a bf16 GEMM at M = 32) of an
# 11008 x 4096 weight took 68.8 us in the released kernel (61.7 us with the PR). Less the GEMM's
# read of the bf16 copy (90.2 MB at ~7.2 TB/s achievable, ~12.5 us), the dequantisation moved
# 45.1 M x 2.53 B = 114 MB in ~56 us: 2.0 TB/s, 0.25 of the peak. PRs #1746/#1747 (2025-09)
# report the same kernel 1.36-2.07x faster than before on A100/H100, so older releases are
# slower still. The QLoRA paper (Dettmers et al. 2023, arXiv:2305.14314) gives no speed.
QLORA_DEQUANT_PEAK_FRACTION = 0.25


def expert_params(spec: ModelSpec) -> int:
    """Parameters of all experts of all layers (0 for a dense model)."""
    from ..arch.models import expert_param_count

    return expert_param_count(spec)


# ---------------------------------------------------------------------------------------------
# The layer list: each layer's attention and MLP (issue 35)
# ---------------------------------------------------------------------------------------------

# MoE training defaults. The busiest GPU's routed load over the mean: advisor.perf.expert_parallel's
# stated assumption (1.2; not a measurement: DeepSeek-V3's auxiliary-loss-free balancing aims at 1,
# arXiv:2412.19437 §2.1.2, and Megatron-Bridge's MoE benchmarks "force-balance the token
# distribution among experts", i.e. 1.0). Training dispatches and combines in BF16 (2 bytes an
# element): Megatron-Core's alltoall token dispatcher sends the hidden states as they are
# (megatron/core/transformer/moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher); DeepSeek-V3's
# own FP8 dispatch (§3.3.2) is not assumed.
TRAIN_IMBALANCE = 1.2
A2A_BYTES = 2.0

# The token dispatcher a training run's MoE layers use, and what it costs beyond the GPU's work.
# - "alltoall": Megatron-Core's MoEAlltoAllTokenDispatcher, dropless (the dispatcher the
#   Megatron-Bridge model providers set: gpt_oss_provider.py, `moe_token_dispatcher_type =
#   "alltoall"`; the 25.11 performance recipes for B200 and H100 name no other, read at
#   github.com/NVIDIA-NeMo/Megatron-Bridge commit 00b7660, scripts/performance/configs/*/
#   *_workload_base_configs.py, 2026-12-06). Its forward synchronises the host with the GPU in
#   every MoE layer: the tokens each expert receives must reach the CPU to size the all-to-all
#   and the grouped GEMM's splits (megatron/core/transformer/moe/token_dispatcher.py,
#   MoEAlltoAllTokenDispatcher.preprocess, `cuda_sync_point` / `d2h_event.synchronize()`;
#   Transformer Engine's GroupedLinear takes `m_splits` as host integers). The GPU's queue is
#   empty after it, so the CPU's time to issue the rest of the layer is not hidden, and the
#   shapes change each step, so the MoE layer cannot be captured in a CUDA graph (Megatron-LM
#   moe/README.md, "CUDA Graph": without a capacity factor and padding "the resulting dynamic
#   shapes make MoE layers uncapturable"; its "CPU Overhead Bottleneck" remedy is CUDA graphs
#   or a larger micro-batch). The step pays `Stack.moe_host_sync_ms` per MoE layer and
#   micro-batch (`train_step`): a FITTED constant (bench/throughput_validation.py FIT_GRID, on
#   the fit half of the Megatron-Bridge 25.11 alltoall runs; reported on the held-out half and
#   with the whole megatron family held out). Evidence that it is host time, not GPU work,
#   read in the same repository's docs/performance-summary-archive.md (commit 067f987,
#   2026-12-06), tokens/s per GPU on the same systems and layouts:
#     25.09 token-drop (padded, static shapes, no sync) -> 25.11 dropless alltoall:
#       B200 Qwen3-30B-A3B MBS 1: 18,066 -> 9,299 (4.5 ms more per MoE layer and micro-batch)
#       B200 Qwen3-235B-A22B MXFP8: 4,275 -> 3,269 (3.0 ms)
#       H100 Qwen3-30B-A3B MBS 2: 10,494 -> 5,275 (16 ms)
#       B200 DeepSeek-V3 MXFP8: 2,159 -> 2,139 (none: there token dropping did not remove the
#         gap, so for DeepSeek-V3 on B200 the term stands in for a cost these sources do not
#         itemise; its agreement, +7 %, is not evidence for this cause)
#     26.02 alltoall MBS 1 -> 26.02.01 HybridEP + CUDA graphs MBS 4, B200 Qwen3-30B-A3B:
#       9,691 -> 26,695 (the model without this cost, loads balanced: 30.8 k at MBS 4, +15 %;
#       with it, 9.4 k at MBS 1).
#   Fitted value 6 ms: the optimum of this one coordinate with the committed stack (fit half:
#   B200 DeepSeek-V3 +7 %, B200 Qwen3-235B-A22B -4 %, H100 gpt-oss-120b +14 %; held-out half:
#   GB200 gpt-oss-120b 0 %, B200 Qwen3-30B-A3B +1 %, B200 gpt-oss-120b +1 %). The whole-source
#   hold-out's joint refits from the grid's middle choose 4 ms wherever the megatron family is
#   in the fit (bench_results/validation/throughput.json, source_holdout), so the value is
#   known to about +-2 ms, not better.
#   The cost per layer is about constant across models and token counts on B200 and GB200
#   (gpt-oss-120b EP 64 with 2 local experts pays about what Qwen3-30B-A3B with 16 does), but
#   not on H100 FP8 current scaling, so a single constant leaves those runs fast (their
#   residual is reported, not hidden).
# - "flex": DeepEP / HybridEP (Megatron-Core's MoEFlexTokenDispatcher) with the router and the
#   dispatcher's preprocessing in CUDA graphs (the GB200 / GB300 recipes: `cuda_graph_scope`
#   moe_router, moe_preprocess): no host wait; the runs that use it are counted without this
#   term.
MOE_DISPATCHERS = ("alltoall", "flex")


@dataclass(frozen=True)
class MoePlacement:
    """Where one expert-parallel group sits: `ep` ranks, `per_domain` of them in one scale-up
    domain (NVLink), the rest reached over the scale-out fabric; `imbalance` the busiest GPU's
    routed load over the mean."""

    ep: int
    per_domain: int
    intra: net.Fabric | None
    inter: net.Fabric | None
    imbalance: float = TRAIN_IMBALANCE


def moe_alltoall_s(tokens: float, k: int, h: int, p: MoePlacement) -> float:
    """One all-to-all (a dispatch or a combine) of an MoE layer on the busiest GPU: it sends
    `tokens * k` hidden vectors of `h` elements at A2A_BYTES, scaled by the imbalance, and
    (ep - 1)/ep of them leave the GPU (uniform routing; Lepikhin et al. 2020, arXiv:2006.16668
    §3; Rajbhandari et al. 2022, arXiv:2201.05596 §5). Those bound for the `per_domain - 1`
    peers of its scale-up domain cross NVLink, the others the GPU's NIC; both run at once, so
    the slower side sets the time, plus one latency of the fabric crossed (all peers are sent
    to at once through the NVLink switch or the rail-optimised network: one step, not ep-1)."""
    if p.ep <= 1:
        return 0.0
    nbytes = tokens * k * h * A2A_BYTES * p.imbalance
    near = nbytes * (p.per_domain - 1) / p.ep
    far = nbytes * (p.ep - p.per_domain) / p.ep
    t_near = near / p.intra.bytes_per_s if near and p.intra else 0.0
    t_far = far / p.inter.bytes_per_s if far and p.inter else 0.0
    lat = (p.inter if far and p.inter else p.intra).latency_s
    return max(t_near, t_far) + lat


def _pairs(a, seq: int) -> float:
    """(query, key) pairs one causal layer scores per sequence: the triangle, within the window
    for sliding layers, within each chunk for chunked ones (Llama 4)."""
    w = a.window if a.span != "full" and a.window else None
    if w is None or w >= seq:
        return seq * (seq + 1) / 2
    if a.span == "chunked":
        full, rest = divmod(seq, w)
        return full * w * (w + 1) / 2 + rest * (rest + 1) / 2
    return w * (w + 1) / 2 + (seq - w) * w


def _attention_flops(a, seq: int, seqs: float, causal: bool) -> float:
    """Forward matrix FLOPs of one layer's attention core: 2 * pairs * heads * (d_qk + d_v)
    (QK^T and PV; = 4 * pairs * q_dim for MHA/GQA; MLA in training runs un-absorbed, heads of
    qk_nope + qk_rope = 192 against v_head_dim 128 for DeepSeek-V3, arXiv:2412.19437 §2.1.1)."""
    pairs = _pairs(a, seq) if causal else float(seq) * seq
    dv = a.v_head_dim if a.kind == "mla" else a.head_dim
    return 2.0 * seqs * pairs * a.num_heads * (a.head_dim + dv)


def _elementwise_elems(layer, h: int) -> float:
    """Activation elements one layer's element-wise kernels read and write per token, forward
    (advisor.perf.timing's count for a dense layer: 10h + 2(q + kv) + 3 or 2 x MLP width). MLA:
    the rope and norms act on q (or its rank) and the latent (kv_lora_rank + rope). MoE, on top
    of the shared experts' activation: each of the k routed copies of a token is permuted
    before the dispatch (write), sorted by expert after it (read + write), unsorted (read +
    write) and weighted into the sum (read) — 6 k h — and its activation reads 2 and writes 1
    expert width (Megatron-Core's MoEAlltoAllTokenDispatcher: permute, sort_chunks_by_idxs,
    unpermute); the router's fp32 logits, softmax and top-k read and write about 3 E fp32
    values (6 E in 16-bit units)."""
    a, m = layer.attention, layer.mlp
    if a.kind == "mla":
        rope = 2 * (a.q_dim + a.kv_lora_rank + a.qk_rope_head_dim) + 2 * (
            (a.q_lora_rank or 0) + a.kv_lora_rank
        )
    else:
        rope = 2 * (a.q_dim + a.kv_dim)
    n = 10 * h + rope
    if not m.is_moe:
        return n + (3 if m.gated else 2) * m.width
    n += 3 * m.shared_width
    n += m.experts_per_token * (6 * h + (3 if m.gated else 2) * m.width)
    return n + 6 * m.experts


@functools.lru_cache(maxsize=1 << 14)
def layer_times(
    spec: ModelSpec,
    layer,
    dev: timing.Device,
    *,
    tokens: int,
    seq: int,
    tp: int,
    cp: int = 1,
    tp_fabric: net.Fabric | None = None,
    moe: MoePlacement | None = None,
    frozen: bool = False,
) -> timing.LayerTimes:
    """Forward and backward of one decoder layer (an `advisor.arch.layers.Layer`) for `tokens`
    tokens (micro-batch x seq / cp) on one GPU, its own attention and MLP (issue 35):

    - GEMMs (advisor.perf.timing.gemm_time): attention projections (MHA/GQA q, k, v, o; MLA's
      five) and the dense MLP or the shared experts (`timing.layer_linears`), column / row
      parallel over TP; backward = input-gradient and weight-gradient GEMMs (Narayanan et al.
      2021 §5.1; no weight gradient when `frozen`);
    - routed experts (MoE): the router GEMM (h x E), and the E/ep experts this GPU holds fed
      T*k*imbalance routed tokens (each expert at that over E/ep), at k/E of the tokens per
      expert and E/ep experts: the GEMM shapes grouped-GEMM kernels run;
    - attention core: flash attention over this layer's span (sliding, chunked or full;
      `_attention_flops`), backward 2.5x (Dao 2023 §2.2);
    - element-wise passes (`_elementwise_elems`), backward twice the forward;
    - TP: 4 all-reduces of T*h (Megatron; Shoeybi et al. 2019 §3);
    - EP: dispatch and combine in the forward and again in the backward (`moe_alltoall_s`).
    """
    T = float(tokens)
    h = spec.hidden_size
    g_f = g_b = 0.0
    for k, n in timing.layer_linears(layer, h, tp):
        g_f += timing.gemm_time(T, k, n, dev)
        g_b += timing.gemm_time(T, n, k, dev)
        if not frozen:
            g_b += timing.gemm_time(k, T, n, dev)
    m = layer.mlp
    ep_comm = 0.0
    if m.is_moe:
        g_f += timing.gemm_time(T, h, m.experts, dev)  # router
        g_b += 2 * timing.gemm_time(T, m.experts, h, dev)
        ep = moe.ep if moe else 1
        load = moe.imbalance if moe and ep > 1 else 1.0
        local = max(1, m.experts // ep)
        routed = T * m.experts_per_token * load
        per_expert = routed / local
        for k, n in timing.expert_linears(spec, m):
            g_f += local * timing.gemm_time(per_expert, k, n / tp, dev)
            g_b += local * timing.gemm_time(per_expert, n / tp, k, dev)
            if not frozen:
                g_b += local * timing.gemm_time(k, per_expert, n / tp, dev)
        if moe and ep > 1:
            ep_comm = 4 * moe_alltoall_s(T, m.experts_per_token, h, moe)
    seqs = max(1.0, T * cp / seq)
    a = layer.attention
    if dev.fused_attention:
        fl = _attention_flops(a, seq, seqs, spec.causal) / tp / cp
        a_f = fl / (dev.peak16_flops * dev.attention_fwd) + dev.kernel_s
        a_b = 2.5 * fl / (dev.peak16_flops * dev.attention_bwd) + dev.kernel_s
    else:
        one = replace(spec, num_layers=1, layers=(layer,))
        a_f, a_b = timing.unfused_attention_times(one, dev, seqs=seqs, seq=seq, tp=tp * cp)
    e_f = (
        (T * _elementwise_elems(layer, h) * timing.ACT_BYTES * dev.elementwise_factor)
        / tp
        / dev.bandwidth
    )
    tp_comm = 0.0
    if tp > 1 and tp_fabric is not None:
        tp_comm = 4 * net.allreduce_time(T * h * timing.ACT_BYTES, tp, tp_fabric)
    return timing.LayerTimes(g_f, a_f, e_f, g_b, a_b, 2 * e_f, tp_comm, ep_comm)


def scale_up_domain(gpu, layout: Layout) -> int:
    """GPUs one NVLink (scale-up) domain of this layout joins: on a GB200 / GB300 NVL72 rack
    (`parallel.domain_of`) the rack's GPUs the layout uses (`layout.gpus_per_node`: 72, or 64
    of them when a job spreads over racks); elsewhere the catalog's `scale_up.domain_size` (8
    for an HGX board) where it states one, else the layout's GPUs per node."""
    _, kind = domain_of(gpu)
    su = getattr(gpu, "scale_up", None)
    if kind == "rack" or not su:
        return layout.gpus_per_node
    return max(int(su.domain_size), 1)


def ep_per_domain(layout: Layout, domain: int) -> int:
    """Ranks of one expert-parallel group inside one scale-up domain. Megatron-Core numbers
    ranks in the order tp-cp-ep-dp-pp (megatron/core/parallel_state.py,
    `initialize_model_parallel(order="tp-cp-ep-dp-pp")`): an EP group's members are tp*cp
    ranks apart, so it stays inside the domain while tp*cp*ep GPUs fit it."""
    stride = layout.tp * layout.cp
    if layout.ep <= 1:
        return 1
    return max(1, min(layout.ep, domain // stride))


def expert_dp_span(layout: Layout, domain: int) -> tuple[int, int]:
    """(ranks per domain, domains) of the expert-data-parallel group that all-reduces a routed
    expert's gradients: the dp/ep ranks holding the same experts, tp*cp*ep ranks apart (the
    order above)."""
    size = layout.dp // layout.ep
    stride = layout.tp * layout.cp * layout.ep
    if size <= 1:
        return 1, 1
    if stride >= domain:
        return 1, size
    per = max(1, min(size, domain // stride))
    return per, -(-size // per)


def moe_placement(
    gpu, layout: Layout, intra: net.Fabric, inter: net.Fabric | None, imbalance: float
) -> MoePlacement:
    """Where the layout's EP group sits (`ep_per_domain`) and the fabrics its all-to-all
    crosses: the GPU's NVLink in the domain, the network between nodes beyond it."""
    check_positive("imbalance", imbalance, maximum=16.0)
    if imbalance < 1.0:
        raise AdvisorError(
            "ep.imbalance",
            f"imbalance: {imbalance} is below 1 (the busiest GPU's load over the mean)",
            field="imbalance",
        )
    per = ep_per_domain(layout, scale_up_domain(gpu, layout))
    if per < layout.ep and inter is None:
        raise AdvisorError(
            "layout.needs_network",
            f"expert_parallel: {layout.ep} GPUs span more than one scale-up domain; name the "
            "network between them",
            field="network",
        )
    return MoePlacement(
        ep=layout.ep, per_domain=per, intra=intra, inter=inter, imbalance=float(imbalance)
    )


SCALE_UP, NETWORK, BOTH = "scale-up", "network", "scale-up+network"


def collective_domains(
    layout: Layout, gpu, moe: MoePlacement | None, intra: net.Fabric, inter: net.Fabric | None
) -> dict:
    """Which fabric each collective of `layout` crosses (issue 34), as `train_step` times it:
    per group (tp, cp, pp, dp, ep, expert_dp: the routed experts' gradient group) its ranks,
    `over` = "scale-up" (all inside one NVLink domain: an 8-GPU node or an NVL72 rack),
    "network" (one rank per domain) or "scale-up+network" (hierarchical: NVLink inside each
    domain, the network between them), and the fabric names."""

    def entry(ranks: int, per: int, spans: int) -> dict:
        over = SCALE_UP if spans <= 1 else (NETWORK if per <= 1 else BOTH)
        far = inter.id if inter is not None else "network"
        fabric = {SCALE_UP: intra.name, NETWORK: far, BOTH: f"{intra.name} + {far}"}[over]
        return {"ranks": ranks, "over": over, "fabric": fabric}

    out = {}
    if layout.tp > 1:
        out["tp"] = entry(layout.tp, *layout.tp_span())
    if layout.cp > 1:
        out["cp"] = entry(layout.cp, *layout.cp_span())
    if layout.pp > 1:
        crosses = layout.pp_crosses_nodes()
        out["pp"] = entry(layout.pp, 1 if crosses else layout.pp, 2 if crosses else 1)
    if layout.dp > 1:
        out["dp"] = entry(layout.dp, *layout.dp_span())
    if moe is not None and layout.ep > 1:
        out["ep"] = entry(layout.ep, moe.per_domain, -(-layout.ep // moe.per_domain))
        if layout.dp // layout.ep > 1:
            per, spans = expert_dp_span(layout, scale_up_domain(gpu, layout))
            out["expert_dp"] = entry(layout.dp // layout.ep, per, spans)
    return out


def stage_chunks(n_layers: int, pp: int) -> tuple[tuple[int, int], ...]:
    """(first, end) layer indices of each of `pp` pipeline stages: contiguous, the first
    n_layers % pp stages one layer more (Megatron-Core's even split when no uneven first or
    last stage is asked for)."""
    base, extra = divmod(n_layers, pp)
    out, start = [], 0
    for i in range(pp):
        end = start + base + (1 if i < extra else 0)
        out.append((start, end))
        start = end
    return tuple(out)


def training_peak_key(gpu, precision: str) -> str:
    """The dense peak a training step's matrix multiplies run at: advisor.perf.timing's
    `weight_peak_key` (MXFP8 refused without MX tensor cores). NVFP4 training (NVIDIA,
    "Pretraining Large Language Models with NVFP4", arXiv:2509.25149: forward, input-gradient
    and weight-gradient GEMMs in NVFP4, master weights and optimizer states in FP32, a few
    layers kept in BF16) runs at the FP4 peak and only where the card's tensor cores take NVFP4
    (Blackwell); elsewhere it is refused, never run dequantised."""
    if precision == "nvfp4" and not (getattr(gpu, "runs_fp4", None) and gpu.runs_fp4("nvfp4")):
        raise AdvisorError(
            "gpu.nvfp4_training_unsupported",
            f"{gpu.id}: no tensor cores for NVFP4 (Blackwell needed); choose mxfp8 or fp8",
            field="precision",
            gpu=gpu.id,
            precision="nvfp4",
        )
    return timing.weight_peak_key(gpu, precision)


def train_step(
    spec: ModelSpec,
    gpu,
    layout: Layout,
    *,
    seq: int,
    precision: str = "bf16",
    checkpointing: str = "none",
    task: str = "train",
    inter: net.Fabric | None = None,
    intra: net.Fabric | None = None,
    stack: eff.Stack | None = None,
    achievable=None,
    imbalance: float = TRAIN_IMBALANCE,
    moe_dispatcher: str = "alltoall",
) -> TrainStep:
    """One optimizer step of `spec` on `layout` (module docstring). `inter`: the fabric between
    nodes (required when the layout spans nodes); `intra`: the in-node fabric (the GPU's own
    links by default); `moe_dispatcher`: the MoE token dispatcher (MOE_DISPATCHERS: the
    alltoall one's host wait per MoE layer and micro-batch is a part of its own, `moe_host`)."""
    layout = layout.validated()
    stack = stack or eff.DEFAULT_STACK
    seq = check_int("seq", seq, maximum=1 << 24)
    check_choice("precision", precision, PRECISIONS)
    check_choice("moe_dispatcher", moe_dispatcher, MOE_DISPATCHERS)
    host_s = stack.moe_host_sync_ms * 1e-3 if moe_dispatcher == "alltoall" else 0.0
    check_choice("checkpointing", checkpointing, CHECKPOINTING)
    check_choice("task", task, flops.TASKS)
    if layout.nodes > 1 and inter is None:
        raise AdvisorError(
            "layout.needs_network",
            f"gpus: {layout.gpus} GPUs span {layout.nodes} nodes; name the network between them",
            field="network",
        )
    if (
        spec.num_heads % layout.tp
        or spec.num_kv_heads % layout.tp
        and layout.tp % spec.num_kv_heads
    ):
        raise AdvisorError(
            "layout.heads",
            f"tensor_parallel: {layout.tp} does not divide the model's {spec.num_heads} heads",
            field="tensor_parallel",
            tensor_parallel=layout.tp,
        )
    if layout.pp > spec.num_layers:
        raise AdvisorError(
            "layout.pp_layers",
            f"pipeline_parallel: {layout.pp} is more than the model's {spec.num_layers} layers",
            field="pipeline_parallel",
        )
    if layout.ep > 1 and (not spec.is_moe or spec.num_experts % layout.ep):
        raise AdvisorError(
            "layout.ep_experts",
            f"expert_parallel: {layout.ep} needs a mixture-of-experts model whose experts it "
            "divides",
            field="expert_parallel",
        )
    peak_key = training_peak_key(gpu, precision)
    dev = timing.Device.of(gpu, peak_key, stack, achievable)
    intra = intra or net.intra_node_fabric(gpu)
    tp_per_node, tp_nodes = layout.tp_span()
    tp_fabric = intra if tp_nodes == 1 else net.slowest(intra, inter)

    frozen = task in ("lora", "qlora")
    dequant_s = 0.0
    if task == "qlora":
        # QLoRA's dequantisation (issue 38): bitsandbytes' MatMul4Bit dequantises each NF4
        # weight to a whole bf16 copy (F.dequantize_4bit) before every F.linear, in the forward
        # and again in the backward (the input's gradient), and in a recomputed forward
        # (bitsandbytes/autograd/_functions.py, MatMul4Bit.forward / .backward,
        # github.com/bitsandbytes-foundation/bitsandbytes): each time it reads 0.5 B per weight
        # plus its scales and writes 2 B, and the GEMM then reads the bf16 copy (wbytes 2).
        from ..memory.estimate import linear_modules_per_layer, linear_params_per_layer

        # The kernel's rate is measured, not its bytes at the card's bandwidth: it reaches
        # QLORA_DEQUANT_PEAK_FRACTION of the peak bandwidth (module constant, its source there).
        per_use = (
            linear_params_per_layer(spec)
            / layout.tp
            * (0.5 + 0.03 + 2.0)
            / (float(gpu.memory_bandwidth_gb_per_s) * 1e9 * QLORA_DEQUANT_PEAK_FRACTION)
            + linear_modules_per_layer(spec) * dev.kernel_s
        )
        uses = 2 + (1 if checkpointing == "full" else 0)
        dequant_s = uses * per_use
    cp = layout.cp
    if seq % cp:
        raise AdvisorError(
            "layout.cp_seq",
            f"context_parallel: {cp} does not divide seq {seq}",
            field="context_parallel",
        )
    T = layout.micro_batch * seq // cp
    moe = None
    if spec.is_moe:
        moe = moe_placement(gpu, layout, intra, inter, imbalance)
    # each distinct layer once (DeepSeek-V3: its dense and its MoE layer), then the stages
    try:
        hash(dev)
        timed = layer_times
    except TypeError:  # an unhashable stand-in for a catalog GPU (tests): not cached
        timed = layer_times.__wrapped__
    times = {
        layer: timed(
            spec,
            layer,
            dev,
            tokens=T,
            seq=seq,
            cp=cp,
            tp=layout.tp,
            tp_fabric=tp_fabric,
            moe=moe,
            frozen=frozen,
        )
        for layer in (spec.stack[:1] if not spec.layers else dict(timing.layer_groups(spec)))
    }
    rec = {"none": lambda t: 0.0, "selective": lambda t: t.attention_fwd, "full": lambda t: t.fwd}
    recompute_of = rec[checkpointing]
    cp_fabric = None
    if cp > 1:
        _, cp_nodes = layout.cp_span()
        cp_fabric = intra if cp_nodes == 1 else net.slowest(intra, inter)

    def cp_exposed(layer, lt) -> float:
        # ring attention passes each rank's K and V blocks to the other cp-1 ranks, forward
        # and backward (plus their gradients), overlapped with the attention it feeds
        if cp <= 1:
            return 0.0
        kv = T * L.kv_elems_per_token(layer.attention) * timing.ACT_BYTES / layout.tp
        ring = 3 * net.gather_time(kv * cp, cp, cp_fabric)
        return max(0.0, ring - (lt.attention_fwd + lt.attention_bwd))

    def layer_total(layer) -> tuple[float, float, float, float, float, float, float]:
        lt = times[layer]
        c = cp_exposed(layer, lt)
        tp_c = lt.tp_comm * (1 - stack.tp_overlap)
        compute = lt.fwd + lt.bwd + recompute_of(lt) + dequant_s
        host = host_s if layer.mlp.is_moe else 0.0  # MOE_DISPATCHERS
        return (compute + tp_c + lt.ep_comm + c + host, compute, tp_c, lt.ep_comm, c, lt.bwd, host)

    totals = {layer: layer_total(layer) for layer in times}
    chunks = stage_chunks(spec.num_layers, layout.pp)
    if len(totals) == 1:  # all layers alike: a stage is its layer count times one layer
        (one,) = totals.values()
        stage_sums = [tuple(v * (b - a) for v in one) for a, b in chunks]
    else:
        per_layer = [totals[layer] for layer in spec.stack]
        stage_sums = [tuple(sum(x[i] for x in per_layer[a:b]) for i in range(7)) for a, b in chunks]
    busiest = max(stage_sums, key=lambda s: s[0])
    t_head = timing.head_time(spec, dev, T, layout.tp, train=True)
    t_stage = busiest[0] + t_head
    m, p, v = layout.micro_batches, layout.pp, layout.virtual_stages
    t_pipe = (m + (p - 1) / v) * t_stage
    bubble = t_pipe - m * t_stage

    p2p = 0.0
    if p > 1:
        pp_fabric = net.slowest(intra, inter) if layout.pp_crosses_nodes() else intra
        act = T * spec.hidden_size * timing.ACT_BYTES / layout.tp
        p2p = 2 * (m + p - 1) * net.p2p_time(act, pp_fabric)

    # data-parallel gradient traffic, per GPU shard: the dense parameters over the whole DP
    # group; the routed experts over their expert-data-parallel group (`expert_dp_span`)
    total = param_count(spec)
    experts = expert_params(spec)
    trainable = int(mem.lora_params(spec, 16, ("q_proj", "v_proj"))) if frozen else total
    dense_share = (trainable - (experts if not frozen else 0)) / (layout.tp * layout.pp)
    expert_share = (experts / layout.ep if not frozen else 0) / (layout.tp * layout.pp)
    amp = precision.startswith("amp") or precision in ("fp8", "mxfp8", "nvfp4")
    grad_b = 4 if (amp or precision == "fp32") else 2
    dp_per_node, dp_nodes = layout.dp_span()
    dp_t = 0.0
    if layout.dp > 1:
        if expert_share and layout.ep > 1:
            dp_t = net.hierarchical_allreduce_time(
                dense_share * grad_b, dp_per_node, dp_nodes, intra, inter
            )
            e_per, e_nodes = expert_dp_span(layout, scale_up_domain(gpu, layout))
            dp_t += net.hierarchical_allreduce_time(
                expert_share * grad_b, e_per, e_nodes, intra, inter
            )
        else:
            nbytes = (dense_share + expert_share) * grad_b
            dp_t = net.hierarchical_allreduce_time(nbytes, dp_per_node, dp_nodes, intra, inter)
        if layout.sharding == "zero3":
            wb = (dense_share + expert_share) * 2
            dp_t += 2 * m * net.hierarchical_gather_time(wb, dp_per_node, dp_nodes, intra, inter)
    if layout.sharding == "zero3":
        window = t_pipe * stack.dp_overlap
    else:
        window = busiest[5] * stack.dp_overlap
    dp_exposed = max(0.0, dp_t - window)

    sharded = layout.sharding != "ddp" and layout.dp > 1
    opt_params = (dense_share + expert_share) / (layout.dp if sharded else 1)
    opt_bytes = opt_params * (2 * 4 + 2 * 8 + 2 + grad_b) if not frozen else 0.0
    t_opt = opt_bytes / dev.bandwidth

    step = t_pipe + p2p + dp_exposed + t_opt
    tokens = layout.micro_batch * m * layout.dp * seq  # cp ranks share each sequence
    fl = flops.training_flops(spec, tokens, seq, task=task, checkpointing="none")
    # MFU against the dense peak of the precision the matrix multiplies run at, the same peak
    # advisor.perf.timing's device uses (fp8 steps against the fp8 peak: against the bf16 peak an
    # fp8 step showed 131.5 % on a Gaudi 2, issue 40); never above 100 %: a model whose other
    # parts run faster than that peak (fp32 matmuls with 16-bit attention) is capped, with a note
    peaks = gpu.peak_tflops or {}
    peak = float(peaks.get(peak_key) or peaks.get("fp16") or peaks.get("bf16") or 0) * 1e12
    tflops = fl.model_flops / step / layout.gpus / 1e12
    notes = []
    if spec.is_moe and layout.ep > 1:
        notes.append(f"MoE: routed load {imbalance:g} x the mean on the busiest GPU (assumed)")
    if spec.is_moe and host_s:
        notes.append(
            f"MoE token dispatch by Megatron-Core's dropless alltoall dispatcher: the GPU waits "
            f"{stack.moe_host_sync_ms:g} ms for the host per MoE layer and micro-batch (fitted "
            "to published runs); DeepEP / HybridEP with CUDA graphs do not"
        )
    if peak_key in ("fp8", "fp4"):
        notes.append(f"{precision} matrix multiplies; MFU against the dense {peak_key} peak")
    if precision == "nvfp4":
        notes.append(
            "every GEMM at the FP4 peak: an upper bound (the NVFP4 recipe keeps a few layers in "
            "BF16, arXiv:2509.25149)"
        )
    mfu = tflops * 1e12 / peak if peak else 0.0
    if mfu > 1.0:
        notes.append(
            f"MFU by the model's figures is {mfu:.0%} of the dense {peak_key} peak; shown capped "
            "at 100 %"
        )
        mfu = 1.0
    return TrainStep(
        step_time_s=step,
        tokens_per_step=tokens,
        tokens_per_s=tokens / step,
        tokens_per_s_per_gpu=tokens / step / layout.gpus,
        model_tflops_per_gpu=tflops,
        mfu=mfu,
        peak_key=peak_key,
        layout=layout,
        parts_s={
            "compute": m * (busiest[1] + t_head),
            "tp_comm": m * busiest[2],
            "ep_comm": m * busiest[3],
            "cp_comm": m * busiest[4],
            "moe_host": m * busiest[6],
            "bubble": bubble,
            "p2p": p2p,
            "dp_exposed": dp_exposed,
            "optimizer": t_opt,
        },
        notes=tuple(notes),
        collectives=collective_domains(layout, gpu, moe, intra, inter),
    )


# ---------------------------------------------------------------------------------------------
# A memory model's TrainingSetup on one node; a stated MFU; time to train
# ---------------------------------------------------------------------------------------------


def task_of(setup) -> str:
    """train, lora or qlora for an advisor.memory.estimate.TrainingSetup."""
    if setup.lora_rank:
        return "qlora" if setup.quant else "lora"
    return "train"


def setup_layout(setup) -> Layout:
    """The one-node layout of a TrainingSetup: `gpus` / `tensor_parallel` data-parallel ranks of
    `batch` sequences each, its sharding."""
    gpus = check_int("gpus", setup.gpus)
    tp = check_int("tensor_parallel", setup.tensor_parallel)
    if gpus % tp:
        raise AdvisorError(
            "gpus.tp_divides",
            f"gpus: {gpus} is not a multiple of tensor_parallel {tp}",
            field="tensor_parallel",
            gpus=gpus,
            tensor_parallel=tp,
        )
    return Layout(
        tp=tp,
        dp=gpus // tp,
        gpus_per_node=max(8, gpus),
        micro_batch=setup.batch,
        sharding=setup.sharding,
    )


def setup_step(setup, gpu, *, mfu: float | None = None, mfu_source: str = "") -> TrainStep:
    """`train_step` for an advisor.memory.estimate.TrainingSetup on one node (`setup_layout`);
    with `mfu`, that step at the stated MFU (`at_mfu`)."""
    precision = setup.precision if setup.precision in PRECISIONS else "bf16"
    st = train_step(
        setup.model,
        gpu,
        setup_layout(setup),
        seq=setup.seq,
        precision=precision,
        checkpointing=setup.checkpointing,
        task=task_of(setup),
    )
    return st if mfu is None else at_mfu(st, gpu, mfu, mfu_source)


def at_mfu(st: TrainStep, gpu, mfu: float, source: str = "") -> TrainStep:
    """`st` with its step time from a stated MFU: model FLOPs of the step / (GPUs * the dense
    peak `st` is measured against * mfu), the published definition of MFU (Chowdhery et al.
    2022, appendix B); communication and the bubble are inside that figure, so `parts_s` holds
    the whole step as compute."""
    from ..core.errors import check_positive

    check_positive("mfu", mfu, maximum=1.0)
    model_flops = st.model_tflops_per_gpu * 1e12 * st.step_time_s * st.layout.gpus
    peaks = gpu.peak_tflops or {}
    key = st.peak_key
    peak = float(peaks.get(key) or peaks.get("fp16") or peaks.get("bf16") or 0) * 1e12
    step = model_flops / (st.layout.gpus * peak * mfu)
    return replace(
        st,
        step_time_s=step,
        tokens_per_s=st.tokens_per_step / step,
        tokens_per_s_per_gpu=st.tokens_per_step / step / st.layout.gpus,
        model_tflops_per_gpu=model_flops / step / st.layout.gpus / 1e12,
        mfu=mfu,
        parts_s={"compute": step},
        notes=(*st.notes, f"step time at MFU {mfu:.0%} ({source or 'stated'})"),
    )


def step_roofline(st: TrainStep, setup, gpu, memory=None):
    """A TrainingSetup's step on the roofline at the kernel-level model's figures: hardware
    FLOPs per GPU (recomputation included) over the step's compute time, the bytes a step
    moves (advisor.perf.timing.training_bytes of the memory breakdown) at the accelerator's
    achievable bandwidth, the exposed communication (TP, EP, CP, pipeline sends, DP)."""
    est = memory if memory is not None else mem.training_memory(setup)
    fl = flops.training_flops(
        setup.model,
        st.tokens_per_step,
        setup.seq,
        task=task_of(setup),
        checkpointing=setup.checkpointing,
        lora_params=int(mem.lora_params(setup.model, setup.lora_rank, setup.lora_targets))
        if setup.lora_rank
        else 0,
    )
    per_gpu = fl.hardware_flops / st.layout.gpus
    precision = setup.precision if setup.precision in PRECISIONS else "bf16"
    peak = timing.peak_flops(gpu, precision)
    parts = st.parts_s
    comm = sum(parts.get(k, 0.0) for k in ("tp_comm", "ep_comm", "cp_comm", "p2p", "dp_exposed"))
    a = eff.achievable_of(gpu)
    return timing.roofline(
        per_gpu,
        timing.training_bytes(est.components),
        gpu,
        precision,
        compute_efficiency=per_gpu / peak / max(parts.get("compute", st.step_time_s), 1e-30),
        bandwidth_efficiency=a.bandwidth_fraction,
        comm_time_s=comm,
        fits=est.total_bytes <= gpu.memory_bytes,
    )


@dataclass(frozen=True)
class Run:
    """Time to train on `tokens` tokens: whole steps of one `TrainStep`."""

    tokens: int
    steps: int
    hours: float
    gpu_hours: float
    step: TrainStep

    @property
    def days(self) -> float:
        return self.hours / 24

    def to_dict(self) -> dict:
        d = asdict(self)
        d["days"] = self.days
        d["step"] = self.step.to_dict()
        return d


def run(st: TrainStep, tokens: int) -> Run:
    """ceil(tokens / tokens per step) steps of `st`."""
    tokens = check_int("tokens", tokens)
    steps = math.ceil(tokens / st.tokens_per_step)
    hours = steps * st.step_time_s / 3600
    return Run(tokens=tokens, steps=steps, hours=hours, gpu_hours=hours * st.layout.gpus, step=st)
