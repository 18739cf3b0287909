"""Networks and collectives: the time a collective takes on a GPU's links, within a node (NVLink,
xGMI, PCIe) and between nodes (InfiniBand, RoCE, Ethernet), in the alpha-beta model.

Sources
- The alpha-beta (latency-bandwidth) cost of collectives: Thakur, Rabenseifner, Gropp,
  "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005: a ring
  all-reduce over p ranks costs ``2(p-1) alpha + 2(p-1)/p * n * beta``; all-gather and
  reduce-scatter ``(p-1) alpha + (p-1)/p * n * beta``.
- Bus bandwidth: NVIDIA nccl-tests doc/PERFORMANCE.md: ``busbw = algbw * 2(n-1)/n`` for
  all-reduce, ``(n-1)/n`` for all-gather / reduce-scatter, and it is what a link's one-direction
  bandwidth bounds.
- Hierarchical (2-D) all-reduce across nodes: reduce-scatter inside the node, all-reduce of
  1/g of the data across nodes (one NIC per GPU, "rail-optimised"), all-gather inside the node
  (Jia et al. 2018, arXiv:1807.11205 §3.3 "hierarchical all-reduce"; NCCL's rings do the same
  on rail-optimised fabrics, NVIDIA DGX SuperPOD reference architecture).
- All-to-all (expert parallelism): each rank sends (p-1)/p of its buffer, bounded by the
  slowest link it crosses (Lepikhin et al. 2020, arXiv:2006.16668 §3; Rajbhandari et al. 2022,
  DeepSpeed-MoE, arXiv:2201.05596 §5).

Fabrics live in `catalog/networks/` (one YAML each, sourced); `Fabric` is their type. Per-GPU
bandwidths are one direction, in bytes/s internally (`*_gb_per_s` fields hold GB/s, 10^9).
"""

from __future__ import annotations

import math

from ..core.errors import AdvisorError, check_int, check_non_negative
from ..data.fabrics import DEFAULT_BUS_EFFICIENCY, Fabric, fabric_from_dict  # noqa: F401


def intra_node_fabric(gpu) -> Fabric:
    """The in-node fabric of a GPU from its catalog figures: NVLink / xGMI / PCIe stated as the
    bidirectional sum (NVIDIA's convention: H100 NVLink 900 GB/s = 450 each way), halved unless
    the document says `interconnect_direction: unidirectional`. Latency: NVLink/xGMI rings
    take about 5 us a step, PCIe through the host about 10 us (assumed from nccl-tests
    small-message times, see catalog/networks/README in the guide's methodology)."""
    stated = float(gpu.interconnect_gb_per_s or 0)
    doc = gpu.doc or {}
    per_dir = stated if doc.get("interconnect_direction") == "unidirectional" else stated / 2
    pcie = str(gpu.interconnect).startswith("pcie")
    return Fabric(
        id=f"{gpu.id}-{gpu.interconnect}",
        name=str(gpu.interconnect),
        kind="intra",
        gb_per_s_per_gpu=max(per_dir, 1e-3),
        latency_us=10.0 if pcie else 5.0,
        source="catalog/gpus/" + gpu.id + ".yaml",
    )


# ---------------------------------------------------------------------------------------------
# Collectives (alpha-beta)
# ---------------------------------------------------------------------------------------------


def _check(nbytes: float, n: int) -> tuple[float, int]:
    return check_non_negative("bytes", nbytes), check_int("ranks", n, maximum=1 << 20)


def allreduce_time(nbytes: float, n: int, fabric: Fabric) -> float:
    """Ring all-reduce of `nbytes` over `n` ranks on one fabric:
    ``2(n-1) alpha + 2(n-1)/n * nbytes / busbw`` (Thakur et al. 2005; nccl-tests busbw)."""
    nbytes, n = _check(nbytes, n)
    if n <= 1 or nbytes == 0:
        return 0.0
    return 2 * (n - 1) * fabric.latency_s + 2 * (n - 1) / n * nbytes / fabric.bytes_per_s


def tp_allreduce_time(nbytes: float, n: int, fabric: Fabric) -> float:
    """The all-reduce an inference engine runs after each tensor-parallel block, in one node.

    On NVLink/xGMI the engines use their own all-reduce instead of NCCL's ring: TensorRT-LLM's
    custom all-reduce (cpp/tensorrt_llm/kernels/customAllReduceKernels, ONESHOT/TWOSHOT),
    vLLM's custom all-reduce (csrc/custom_all_reduce.cuh, one-stage / two-stage) and
    PyTorch's intra-node comm that gpt-fast enables (ENABLE_INTRA_NODE_COMM). One-shot: each
    rank reads the n-1 peer buffers at once and reduces them, ``alpha + (n-1) * nbytes / bw``;
    two-shot: reduce-scatter then all-gather, ``2 alpha + 2(n-1)/n * nbytes / bw``; the engine
    takes the faster. Over PCIe they fall back to NCCL's ring (vLLM disables its custom
    all-reduce without NVLink beyond 2 GPUs), `allreduce_time`."""
    nbytes, n = _check(nbytes, n)
    if n <= 1 or nbytes == 0:
        return 0.0
    if fabric.name.startswith("pcie"):
        return allreduce_time(nbytes, n, fabric)
    one_shot = fabric.latency_s + (n - 1) * nbytes / fabric.bytes_per_s
    two_shot = 2 * fabric.latency_s + 2 * (n - 1) / n * nbytes / fabric.bytes_per_s
    return min(one_shot, two_shot)


def gather_time(nbytes: float, n: int, fabric: Fabric) -> float:
    """Ring all-gather or reduce-scatter of a `nbytes` buffer (the full, unsharded size):
    ``(n-1) alpha + (n-1)/n * nbytes / busbw``."""
    nbytes, n = _check(nbytes, n)
    if n <= 1 or nbytes == 0:
        return 0.0
    return (n - 1) * fabric.latency_s + (n - 1) / n * nbytes / fabric.bytes_per_s


def alltoall_time(nbytes: float, n: int, fabric: Fabric) -> float:
    """All-to-all of a `nbytes` buffer per rank: (n-1)/n of it leaves each rank, in (n-1)
    exchanges (DeepSpeed-MoE §5; alpha-beta with pairwise exchange)."""
    nbytes, n = _check(nbytes, n)
    if n <= 1 or nbytes == 0:
        return 0.0
    return (n - 1) * fabric.latency_s + (n - 1) / n * nbytes / fabric.bytes_per_s


def p2p_time(nbytes: float, fabric: Fabric) -> float:
    """One point-to-point send (pipeline stages): ``alpha + nbytes / bw``."""
    nbytes = check_non_negative("bytes", nbytes)
    return 0.0 if nbytes == 0 else fabric.latency_s + nbytes / fabric.bytes_per_s


def hierarchical_allreduce_time(
    nbytes: float, ranks_per_node: int, nodes: int, intra: Fabric, inter: Fabric | None
) -> float:
    """All-reduce over `ranks_per_node` x `nodes` ranks: reduce-scatter in the node, all-reduce
    of 1/g of the buffer across nodes on each GPU's NIC, all-gather in the node (Jia et al.
    2018 §3.3). With one node this is the flat ring."""
    g = check_int("ranks_per_node", ranks_per_node, maximum=1 << 20)
    nodes = check_int("nodes", nodes, maximum=1 << 20)
    if nodes <= 1 or inter is None:
        return allreduce_time(nbytes, g, intra)
    return (2 * gather_time(nbytes, g, intra) if g > 1 else 0.0) + allreduce_time(
        nbytes / g, nodes, inter
    )


def hierarchical_gather_time(
    nbytes: float, ranks_per_node: int, nodes: int, intra: Fabric, inter: Fabric | None
) -> float:
    """All-gather or reduce-scatter over `ranks_per_node` x `nodes` ranks, in two stages (the
    cross-node stage moves 1/g of the buffer per GPU)."""
    g = check_int("ranks_per_node", ranks_per_node, maximum=1 << 20)
    nodes = check_int("nodes", nodes, maximum=1 << 20)
    if nodes <= 1 or inter is None:
        return gather_time(nbytes, g, intra)
    return (gather_time(nbytes, g, intra) if g > 1 else 0.0) + gather_time(nbytes / g, nodes, inter)


def slowest(*fabrics: Fabric | None) -> Fabric:
    """The fabric with the least bus bandwidth (what a collective that crosses all of them is
    bound by)."""
    fs = [f for f in fabrics if f is not None]
    if not fs:
        raise AdvisorError("network.none", "no fabric given", field="network")
    return min(fs, key=lambda f: (f.bytes_per_s, -f.latency_s))


def is_finite_time(t: float) -> bool:
    return math.isfinite(t) and t >= 0
