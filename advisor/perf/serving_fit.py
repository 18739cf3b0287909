"""One serving model for every answer that sizes inference: the picker, the VRAM calculator's
serving mode, `recommend`, the budget calculator's cost per token and the reports all call
`fit` (or `best_fit`), the way the serving calculator (advisor.perf.serving) sizes a server.

A server of `gpus` accelerators runs `replicas` copies of the model, each split over
`tensor_parallel` GPUs of one node (tensor parallelism stays inside the NVLink / Infinity Fabric
/ PCIe domain of a server: Shoeybi et al. 2019, Megatron-LM arXiv:1909.08053 §3; vLLM's
distributed serving guide, docs.vllm.ai "Distributed inference and serving": "tensor parallel
size = the number of GPUs in each node"). `concurrency` requests are in flight in total, any
number, spread evenly: each replica holds ceil(concurrency / replicas).

Memory per GPU (vLLM's plan, advisor.memory.estimate.serving_capacity): the weights / TP, the engine's
workspace (the profiling forward pass of `max_num_batched_tokens` tokens) / TP, and the KV cache
of every request of the replica at its whole context (input + output) in blocks of 16 tokens /
TP, all within `gpu_memory_utilization` (0.9) of the card: the card's memory needed is that sum
/ 0.9. It fits exactly when the serving calculator's KV-limited concurrency is at least the
replica's share.

Speed: advisor.perf.serving.point at the replica's share (TTFT, TPOT, tokens/s per user and in total).
A static, single-batch prefill (advisor.memory.estimate.inference_memory) is another question, asked only
where a caller names it (`mode="static"` in the VRAM calculator), and labelled as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.errors import AdvisorError, check_choice, check_int
from ..data import support
from ..memory import estimate as mem
from . import network as net
from . import serving

GPU_MEMORY_UTILIZATION = 0.9  # vLLM's default (docs.vllm.ai "Engine arguments")
# A serving profile gives a context length, not its split: answers of a quarter of it, at most
# 512 tokens (the report's stated assumption since issue 11).
ANSWER_FRACTION, ANSWER_MAX = 0.25, 512
# GPUs in one server: HGX/DGX baseboards, the MI300X/MI325X platforms and Gaudi's baseboard
# carry 8; PCIe servers are sold with up to 8 double-width cards (advisor.data.systems).
NODE_GPUS = 8
# A model too large for one node is split by tensor parallelism over whole nodes (16, 32 or 64
# GPUs) across the fabric between them: InfiniBand NDR, one 400 Gb/s port per GPU
# (catalog/networks/ib-ndr-400.yaml; the rail-optimised DGX/HGX H100 layout). Tried only when
# no layout inside one node fits.
MULTI_NODE_TP = (16, 32, 64)
# The most GPUs one tensor-parallel group may take (advisor.perf.serving.check_tensor_parallel).
MAX_TP = 72


def node_gpus(gpu) -> int:
    """GPUs a tensor-parallel group may span at the scale-up fabric's speed: the accelerator's
    scale-up domain where the catalog states one (`scale_up.domain_size`: GB200 / GB300 NVL72
    72 GPUs on one NVLink domain, TPU ICI slices, Trainium's NeuronLink; a desktop box 1), at
    most MAX_TP; else a server's NODE_GPUS (issue 34)."""
    su = getattr(gpu, "scale_up", None)
    return NODE_GPUS if su is None else min(int(su.domain_size), MAX_TP)


INTER_NODE = net.Fabric(
    id="ib-ndr-400",
    name="InfiniBand NDR 400 Gb/s per GPU",
    kind="inter",
    gb_per_s_per_gpu=50.0,
    latency_us=10.0,
    bus_efficiency=0.77,
    source="catalog/networks/ib-ndr-400.yaml",
)
# Formats tried when the caller leaves the choice open: quality first (bf16), then the 8-bit
# float where the card has FP8 tensor cores, then the 4-bit block floats NVFP4 / MXFP4 where the
# card's FP4 tensor cores take them (catalog `fp4_formats`; a search never picks a dequantised
# FP4 layout: `searched_formats`), then 4-bit AWQ weights (support.serving_format), then the local
# runtimes' formats, 8-bit before 4-bit: llama.cpp Q8_0, Q4_K_M, MLX 4-bit (issue 34: where vLLM
# has no 4-bit kernels, Apple and AMD desktops; tried on desktop cards only: `searched_formats`).
SEARCH_FORMATS = ("bf16", "fp8", "nvfp4", "mxfp4", "awq", "q8_0", "q4_k_m", "mlx-4bit")
FP4_WEIGHTS = ("nvfp4", "mxfp4")
LOCAL_WEIGHTS = ("q8_0", "q4_k_m", "mlx-4bit")
# KV-cache formats tried with them: 16-bit first, then FP8 (vLLM's fp8 KV cache)
SEARCH_KV = ("bf16", "fp8")


def split_context(seq: int) -> tuple[int, int]:
    """(input, output) tokens of a context of `seq` tokens (module constants)."""
    check_int("seq", seq)
    out = max(1, min(ANSWER_MAX, int(seq * ANSWER_FRACTION)))
    return max(1, seq - out), out


@dataclass(frozen=True)
class ServingFit:
    """One layout of a serving workload on `gpus` x `gpu`: memory per GPU and the operating
    point at the requested concurrency (None when it does not fit)."""

    gpu_id: str
    gpus: int
    tensor_parallel: int
    replicas: int
    weights: str
    kv_dtype: str
    concurrency: int  # requests in flight, all replicas
    per_replica: int  # ceil(concurrency / replicas)
    input_tokens: int
    output_tokens: int
    weights_bytes: int  # per GPU
    workspace_bytes: int  # per GPU: the engine's profiling pass
    kv_bytes: int  # per GPU: the replica's requests at their whole context
    headroom_bytes: int  # per GPU: what gpu_memory_utilization leaves out
    total_bytes: int  # per GPU: the card memory this needs
    capacity_bytes: int
    kv_limited_concurrency: int  # per replica: what the KV cache holds
    fits: bool
    point: serving.ServingPoint | None
    unsupported: tuple = ()  # support.Reason of a format the card cannot run

    @property
    def tokens_per_s(self) -> float | None:
        return None if self.point is None else self.point.tokens_per_s

    @property
    def tokens_per_s_per_user(self) -> float | None:
        return None if self.point is None else self.point.tokens_per_s_per_user

    @property
    def label(self) -> str:
        if self.gpus == 1:
            return "single"
        if self.tensor_parallel == 1:
            return f"replicas{self.gpus}"
        if self.replicas == 1:
            return f"tp{self.tensor_parallel}"
        return f"tp{self.tensor_parallel}x{self.replicas}"

    def meets(self, per_user: float | None, total: float | None) -> bool:
        if self.point is None:
            return False
        if per_user is not None and self.point.tokens_per_s_per_user < per_user:
            return False
        return not (total is not None and self.point.tokens_per_s < total)

    def components(self) -> dict:
        """Memory per GPU by component (bytes), in the VRAM calculator's vocabulary."""
        return {
            "weights": self.weights_bytes,
            "kv_cache": self.kv_bytes,
            "activations": self.workspace_bytes,
        }

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "point"}
        d["point"] = None if self.point is None else self.point.to_dict()
        d["unsupported"] = [r.to_dict() for r in self.unsupported]
        d["label"] = self.label
        d["components"] = self.components()
        return d


def searched_formats(gpu, formats: tuple[str, ...]) -> tuple[str, ...]:
    """The formats a search over `formats` tries on `gpu`: an FP4 block format only where the
    card runs it natively (`GPU.runs_fp4`), and a local runtime's format (llama.cpp, MLX: one
    user's desktop runtimes) only on a workstation or consumer card, when it is one of several;
    a single format the reader names is run as asked (FP4 dequantised where the card lacks it,
    and said so)."""
    if len(formats) < 2:
        return formats
    runs = getattr(gpu, "runs_fp4", None)
    server = getattr(gpu, "tier", None) == "datacenter"
    kept = tuple(
        f
        for f in formats
        if (f not in FP4_WEIGHTS or (runs is not None and runs(f)))
        and not (server and f in LOCAL_WEIGHTS)
    )
    return kept or formats


def tp_degrees(spec, gpus: int, gpu=None) -> tuple[int, ...]:
    """Tensor-parallel degrees for `gpus` GPUs: divisors of `gpus` within one node
    (`node_gpus`: NODE_GPUS, or the scale-up domain of a rack) that divide the attention heads
    (vLLM requires num_attention_heads % tp == 0)."""
    out = []
    node = NODE_GPUS if gpu is None else node_gpus(gpu)
    for tp in range(1, min(gpus, node) + 1):
        if gpus % tp == 0 and spec.num_heads % tp == 0:
            out.append(tp)
    return tuple(out)


def multi_node_degrees(spec, gpus: int, gpu=None) -> tuple[int, ...]:
    """Tensor-parallel degrees over whole nodes (MULTI_NODE_TP) for `gpus` GPUs (none past a
    scale-up domain that already holds them: `tp_degrees` tried those)."""
    node = NODE_GPUS if gpu is None else node_gpus(gpu)
    # boxes of one accelerator (unified-memory desktops) link in pairs or small groups over
    # their NIC; servers in whole nodes of 8
    wide = range(2 * node, NODE_GPUS + 1, node) if node < NODE_GPUS else MULTI_NODE_TP
    return tuple(
        tp for tp in wide if node < tp <= gpus and gpus % tp == 0 and spec.num_heads % tp == 0
    )


def tp_fabric(gpu, tp: int):
    """The fabric a tensor-parallel group of `tp` crosses: the node's own up to `node_gpus`
    (a rack's NVLink domain included), the slower of it and INTER_NODE beyond (None for tp 1:
    advisor.perf.serving's default)."""
    if tp <= node_gpus(gpu):
        return None
    return net.slowest(net.intra_node_fabric(gpu), INTER_NODE)


def fit(
    spec,
    gpu,
    *,
    gpus: int,
    concurrency: int,
    input_tokens: int,
    output_tokens: int,
    weights: str = "bf16",
    kv_dtype: str = "bf16",
    tensor_parallel: int,
    stack=None,
    achievable=None,
    speed: bool = True,
) -> ServingFit:
    """One layout (module docstring). `speed=False` skips the operating point."""
    check_int("gpus", gpus, maximum=1 << 16)
    c = check_int("concurrency", concurrency, maximum=1 << 20)
    tp = check_int("tensor_parallel", tensor_parallel, maximum=MAX_TP)
    node = node_gpus(gpu)
    if tp > node and tp % node:
        raise AdvisorError(
            "serving.tp_nodes",
            f"tensor_parallel: {tp} GPUs span nodes of {node}: give whole nodes",
            field="tensor_parallel",
            tensor_parallel=tp,
            node_gpus=node,
        )
    if gpus % tp:
        raise AdvisorError(
            "gpus.tp_divides",
            f"gpus: {gpus} is not a multiple of tensor_parallel {tp}",
            field="tensor_parallel",
        )
    replicas = gpus // tp
    per = math.ceil(c / replicas)
    context = input_tokens + output_tokens
    if context > spec.max_position_embeddings:
        raise AdvisorError(
            "seq.too_long",
            f"seq: {context} tokens is more than the model's context "
            f"({spec.max_position_embeddings})",
            field="seq",
            value=context,
            maximum=spec.max_position_embeddings,
        )
    cap = mem.serving_capacity(
        spec,
        gpu.memory_bytes,
        context=context,
        weights=weights,
        kv_dtype=kv_dtype,
        gpu_memory_utilization=GPU_MEMORY_UTILIZATION,
        tensor_parallel=tp,
    )
    blocks = -(-context // cap.block_size) * per
    kv = blocks * cap.block_size * cap.kv_bytes_per_token
    used = cap.weights_bytes + cap.activation_profile_bytes + kv
    total = math.ceil(used / GPU_MEMORY_UTILIZATION)
    unsupported = support.serving_format(gpu, weights, kv_dtype)
    fits = not unsupported and cap.max_concurrent_sequences >= per
    pt = None
    if fits and speed:
        pt = serving.point(
            spec,
            gpu,
            concurrency=per,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            weights=weights,
            kv_dtype=kv_dtype,
            tensor_parallel=tp,
            gpus=gpus,
            stack=stack,
            achievable=achievable,
            tp_fabric=tp_fabric(gpu, tp),
        )
    return ServingFit(
        gpu_id=gpu.id,
        gpus=gpus,
        tensor_parallel=tp,
        replicas=replicas,
        weights=weights,
        kv_dtype=kv_dtype,
        concurrency=c,
        per_replica=per,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        weights_bytes=cap.weights_bytes,
        workspace_bytes=cap.activation_profile_bytes,
        kv_bytes=kv,
        headroom_bytes=total - used,
        total_bytes=total,
        capacity_bytes=int(gpu.memory_bytes),
        kv_limited_concurrency=cap.max_concurrent_sequences,
        fits=fits,
        point=pt,
        unsupported=unsupported,
    )


def best_fit(
    spec,
    gpu,
    *,
    gpus: int,
    concurrency: int,
    input_tokens: int,
    output_tokens: int,
    formats: tuple[str, ...] = ("bf16",),
    kv_dtype: str = "bf16",
    kv_dtypes: tuple[str, ...] = (),
    tensor_parallel: int | None = None,
    per_user_tokens_per_s: float | None = None,
    total_tokens_per_s: float | None = None,
    stack=None,
    achievable=None,
    _degrees: tuple[int, ...] = (),
) -> ServingFit:
    """The layout a buyer would run on `gpus` x `gpu`: over `formats` (in order of preference),
    the KV-cache formats `kv_dtypes` (in order; empty: `kv_dtype` alone) and the
    tensor-parallel degrees (`tp_degrees`, or the one given), the first (format, KV format) whose
    best layout meets the targets, its layout with the most tokens/s in total (ties: the
    smaller degree); when none meets them, the fitting layout nearest to them (the most tokens/s
    per user); when none fits, the one needing the least memory per GPU (its `fits` False)."""
    if not formats:
        raise AdvisorError("field.empty", "formats: give at least one format", field="weights")
    for f in formats:
        check_choice("weights", f, mem.WEIGHT_FORMATS)
    formats = searched_formats(gpu, tuple(formats))
    degrees = _degrees or ((tensor_parallel,) if tensor_parallel else tp_degrees(spec, gpus, gpu))
    if not tensor_parallel and not degrees:
        degrees = multi_node_degrees(spec, gpus, gpu)
    if not degrees:
        raise AdvisorError(
            "serving.no_tp",
            f"gpus: no tensor-parallel degree divides both {gpus} GPUs and the model's "
            f"{spec.num_heads} attention heads",
            field="gpus",
            gpus=gpus,
            heads=spec.num_heads,
        )
    fitting, smallest = [], None
    pairs = [(f, kv) for f in formats for kv in (kv_dtypes or (kv_dtype,))]
    for f, kv in pairs:
        layouts = []
        for tp in degrees:
            x = fit(
                spec,
                gpu,
                gpus=gpus,
                concurrency=concurrency,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                weights=f,
                kv_dtype=kv,
                tensor_parallel=tp,
                stack=stack,
                achievable=achievable,
            )
            if x.fits:
                layouts.append(x)
            elif smallest is None or (
                not x.unsupported and (smallest.unsupported or x.total_bytes < smallest.total_bytes)
            ):
                smallest = x
        meeting = [x for x in layouts if x.meets(per_user_tokens_per_s, total_tokens_per_s)]
        if meeting:
            return max(meeting, key=lambda x: (x.tokens_per_s, -x.tensor_parallel))
        fitting.extend(layouts)
    if fitting:
        return max(fitting, key=lambda x: (x.tokens_per_s_per_user, x.tokens_per_s))
    wide = () if (tensor_parallel or _degrees) else multi_node_degrees(spec, gpus, gpu)
    if wide and set(wide) != set(degrees):
        # nothing fits inside one node: tensor parallelism over whole nodes
        x = best_fit(
            spec,
            gpu,
            gpus=gpus,
            concurrency=concurrency,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            formats=formats,
            kv_dtype=kv_dtype,
            kv_dtypes=kv_dtypes,
            tensor_parallel=None,
            per_user_tokens_per_s=per_user_tokens_per_s,
            total_tokens_per_s=total_tokens_per_s,
            stack=stack,
            achievable=achievable,
            _degrees=wide,
        )
        if x.fits:
            return x
    return smallest
