"""Training step time on a parallel layout (TP x PP x DP x EP, one or many nodes), from the
kernel-level model of advisor.perf.timing and the collectives of advisor.perf.network.

step = (m + (p-1)/v) * t_microbatch_stage            (1F1B / interleaved pipeline, Narayanan
                                                      et al. 2021 eq. 1 and §2.2.2)
     + pipeline sends                                 (p2p of b*s*h activations, fwd and bwd)
     + exposed data-parallel traffic                  (gradient all-reduce / reduce-scatter +
                                                      all-gather hidden behind the last
                                                      micro-batch's backward, Li et al. 2020
                                                      §3.2.3; ZeRO-3 gathers hidden behind the
                                                      step's compute, Rajbhandari et al. 2020)
     + optimizer step                                 (master weights, states, gradients read
                                                      and written once at achievable bandwidth)
t_microbatch_stage = layers/p * (fwd + bwd + recompute + exposed TP and EP traffic) + head.

MFU follows the published convention: model FLOPs (6N + attention, no recompute, no causal
halving; advisor.perf.flops.training_flops) over step time x dense peak x GPUs (Chowdhery et al.
2022, arXiv:2204.02311 appendix B).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..arch import flops
from ..arch.models import ModelSpec, param_count
from ..core.errors import AdvisorError, check_choice, check_int
from ..memory import estimate as mem
from . import efficiency as eff
from . import network as net
from . import timing
from .parallel import Layout

PRECISIONS = ("bf16", "fp16", "amp-bf16", "amp-fp16", "fp8", "mxfp8", "fp32")
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
    )  # compute, tp_comm, ep_comm, cp_comm, bubble, p2p, dp_exposed, optimizer
    notes: tuple[str, ...] = ()

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
) -> TrainStep:
    """One optimizer step of `spec` on `layout` (module docstring). `inter`: the fabric between
    nodes (required when the layout spans nodes); `intra`: the in-node fabric (the GPU's own
    links by default)."""
    layout = layout.validated()
    stack = stack or eff.DEFAULT_STACK
    seq = check_int("seq", seq, maximum=1 << 24)
    check_choice("precision", precision, PRECISIONS)
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
    peak_key = timing.weight_peak_key(gpu, precision)  # mxfp8: refused without MX hardware
    dev = timing.Device.of(gpu, peak_key, stack, achievable)
    intra = intra or net.intra_node_fabric(gpu)
    tp_per_node, tp_nodes = layout.tp_span()
    tp_fabric = intra if tp_nodes == 1 else net.slowest(intra, inter)
    ep_fabric = None
    if layout.ep > 1:
        _, ep_nodes = layout.ep_span()
        ep_fabric = intra if ep_nodes == 1 else net.slowest(intra, inter)

    frozen = task in ("lora", "qlora")
    wbytes, dq = 2.0, 1.0
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
    lt = timing.train_layer(
        spec,
        dev,
        tokens=T,
        seq=seq,
        cp=cp,
        tp=layout.tp,
        ep=layout.ep,
        tp_fabric=tp_fabric,
        ep_fabric=ep_fabric,
        frozen=frozen,
        weight_bytes=wbytes,
        dequant=dq,
    )
    recompute = {"none": 0.0, "selective": lt.attention_fwd, "full": lt.fwd}[checkpointing]
    cp_comm = 0.0
    if cp > 1:
        # ring attention passes each rank's K and V blocks to the other cp-1 ranks, forward
        # and backward (plus their gradients), overlapped with the attention it feeds
        _, cp_nodes = layout.cp_span()
        cp_fabric = intra if cp_nodes == 1 else net.slowest(intra, inter)
        kv = T * spec.kv_elems_per_token / spec.num_layers * timing.ACT_BYTES / layout.tp
        ring = 3 * net.gather_time(kv * cp, cp, cp_fabric)
        cp_comm = max(0.0, ring - (lt.attention_fwd + lt.attention_bwd))
    comm = (lt.tp_comm + lt.ep_comm) * (1 - stack.tp_overlap) + cp_comm
    layers_per_stage = math.ceil(spec.num_layers / layout.pp)
    t_head = timing.head_time(spec, dev, T, layout.tp, train=True)
    t_stage = layers_per_stage * (lt.fwd + lt.bwd + recompute + dequant_s + comm) + t_head
    m, p, v = layout.micro_batches, layout.pp, layout.virtual_stages
    t_pipe = (m + (p - 1) / v) * t_stage
    bubble = t_pipe - m * t_stage

    p2p = 0.0
    if p > 1:
        pp_fabric = net.slowest(intra, inter) if layout.pp_crosses_nodes() else intra
        act = T * spec.hidden_size * timing.ACT_BYTES / layout.tp
        p2p = 2 * (m + p - 1) * net.p2p_time(act, pp_fabric)

    # data-parallel gradient traffic, per GPU shard
    total = param_count(spec)
    experts = expert_params(spec)
    trainable = int(mem.lora_params(spec, 16, ("q_proj", "v_proj"))) if frozen else total
    dense_share = (trainable - (experts if not frozen else 0)) / (layout.tp * layout.pp)
    expert_share = (experts / layout.ep if not frozen else 0) / (layout.tp * layout.pp)
    amp = precision.startswith("amp") or precision in ("fp8", "mxfp8")
    grad_b = 4 if (amp or precision == "fp32") else 2
    dp_per_node, dp_nodes = layout.dp_span()
    dp_t = 0.0
    if layout.dp > 1:
        nbytes = (dense_share + expert_share) * grad_b
        dp_t = net.hierarchical_allreduce_time(nbytes, dp_per_node, dp_nodes, intra, inter)
        if layout.sharding == "zero3":
            wb = (dense_share + expert_share) * 2
            dp_t += 2 * m * net.hierarchical_gather_time(wb, dp_per_node, dp_nodes, intra, inter)
    if layout.sharding == "zero3":
        window = t_pipe * stack.dp_overlap
    else:
        window = layers_per_stage * lt.bwd * stack.dp_overlap
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
    if peak_key == "fp8":
        notes.append(f"{precision} matrix multiplies; MFU against the dense fp8 peak")
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
            "compute": m * layers_per_stage * (lt.fwd + lt.bwd + recompute + dequant_s)
            + m * t_head,
            "tp_comm": m * layers_per_stage * lt.tp_comm * (1 - stack.tp_overlap),
            "ep_comm": m * layers_per_stage * lt.ep_comm * (1 - stack.tp_overlap),
            "cp_comm": m * layers_per_stage * cp_comm,
            "bubble": bubble,
            "p2p": p2p,
            "dp_exposed": dp_exposed,
            "optimizer": t_opt,
        },
        notes=tuple(notes),
    )
