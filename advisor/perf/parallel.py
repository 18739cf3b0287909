"""Parallel layouts: how a job's GPUs split into tensor (TP), pipeline (PP), data (DP) and expert
(EP) and context (CP) parallel groups, where those groups sit (inside a node or across nodes), and the pipeline
bubble.

Sources
- Tensor parallelism inside a node, pipeline across nodes, data parallelism outermost:
  Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
  Megatron-LM", arXiv:2104.04473 §3 (takeaway #1: TP up to the GPUs of a node, then PP) and
  eq. 1: with the 1F1B schedule the bubble is (p-1) micro-batch slots of the m per step, and
  with v interleaved stages per GPU it shrinks v times (§2.2.2).
- Context parallelism splits each sequence over CP ranks that pass K and V blocks around a ring
  (Liu et al. 2023, Ring Attention, arXiv:2310.01889 §3; Llama 3, arXiv:2407.21783 §3.3.2);
  placed between PP and DP.
- Expert parallelism shards the experts over EP ranks taken from the data-parallel group
  (Lepikhin et al. 2020, GShard, arXiv:2006.16668 §3.2; Megatron-Core MoE docs).
- Scale-up domains (issue 34): a layout's "node" is the set of GPUs one NVLink fabric joins.
  On an HGX/OAM server that is its 8 GPUs; on a GB200 / GB300 NVL72 rack it is the rack's 72
  GPUs, one NVLink 5 domain through the NVLink Switch trays (catalog/gpus/gb200.yaml
  `scale_up`, catalog/systems/gb200-nvl72.yaml), so TP, EP, CP and the in-rack share of DP
  traffic run on NVLink inside the rack and only what crosses racks takes the network
  (`domain_of`, `gpus_per_domain`; Megatron-Core MoE guide: "keep EP x TP communication
  within the NVLink domain", megatron/core/transformer/moe/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import AdvisorError, check_choice, check_int

SHARDING = ("ddp", "zero1", "zero2", "zero3")
MAX_GPUS = 1 << 17  # 131,072: the largest cluster a layout may describe
DOMAINS = ("node", "rack")  # what one scale-up domain of a layout is
NODE_GPUS = 8  # an HGX / OAM server's GPUs on one NVLink / Infinity Fabric board
MAX_DOMAIN_GPUS = 72  # an NVL72 rack: the largest scale-up domain a layout describes


def domain_of(gpu) -> tuple[int, str]:
    """(GPUs one scale-up domain joins, "node" or "rack") for a training layout on `gpu`: a
    GB200 / GB300 whose catalog `scale_up` is an NVLink switch fabric of more than a server's 8
    GPUs is a rack of that many (72: one NVL72 rack); every other accelerator sits in 8-GPU
    nodes (HGX / OAM boards; the planner's node size for PCIe cards, TPUs and Trainium, whose
    wider ICI / NeuronLink domains are torus or pooled fabrics, not one NVLink switch)."""
    su = getattr(gpu, "scale_up", None)
    if (
        su is not None
        and str(su.fabric).startswith("nvlink")
        and NODE_GPUS < int(su.domain_size) <= MAX_DOMAIN_GPUS
    ):
        return int(su.domain_size), "rack"
    return NODE_GPUS, "node"


def gpus_per_domain(gpu, gpus: int) -> int:
    """GPUs of each domain a job of `gpus` GPUs uses: one domain up to its size; past it, the
    GPUs spread evenly over the fewest domains they split into (256 GB200 GPUs: 4 racks of 64;
    144: 2 racks of 72). An 8-GPU node is always counted whole (the layout's node size)."""
    size, kind = domain_of(gpu)
    gpus = check_int("gpus", gpus, maximum=MAX_GPUS)
    if kind != "rack":
        return size
    if gpus <= size:
        return gpus
    racks = -(-gpus // size)
    while gpus % racks:
        racks += 1
    return gpus // racks


@dataclass(frozen=True)
class Layout:
    """`tp * pp * dp` GPUs (EP ranks come out of DP), `gpus_per_node` in each node.

    `micro_batch` sequences per micro-batch, `micro_batches` per step per DP rank (gradient
    accumulation), `virtual_stages` interleaved pipeline chunks per GPU."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    cp: int = 1  # context parallel: each sequence split over cp GPUs (ring attention)
    gpus_per_node: int = 8
    micro_batch: int = 1
    micro_batches: int = 1
    virtual_stages: int = 1
    sharding: str = "ddp"
    domain: str = "node"  # what `gpus_per_node` counts: an 8-GPU node or an NVL72 rack

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    @property
    def nodes(self) -> int:
        return -(-self.gpus // self.gpus_per_node)

    def validated(self) -> Layout:
        for name in (
            "tp",
            "pp",
            "dp",
            "ep",
            "cp",
            "micro_batch",
            "micro_batches",
            "virtual_stages",
        ):
            check_int(name, getattr(self, name), maximum=MAX_GPUS)
        check_int("gpus_per_node", self.gpus_per_node, maximum=MAX_DOMAIN_GPUS)
        check_choice("sharding", self.sharding, SHARDING)
        check_choice("domain", self.domain, DOMAINS)
        if self.gpus > MAX_GPUS:
            raise AdvisorError(
                "field.too_large",
                f"gpus: {self.gpus} is more than {MAX_GPUS}",
                field="gpus",
                maximum=MAX_GPUS,
            )
        if self.tp > self.gpus_per_node:
            raise AdvisorError(
                "layout.tp_node",
                f"tensor_parallel: {self.tp} is more than the {self.gpus_per_node} GPUs of a "
                "node (tensor parallelism needs the in-node links)",
                field="tensor_parallel",
                tensor_parallel=self.tp,
                gpus_per_node=self.gpus_per_node,
            )
        if self.dp % self.ep:
            raise AdvisorError(
                "layout.ep_divides",
                f"expert_parallel: {self.ep} does not divide data_parallel {self.dp}",
                field="expert_parallel",
                expert_parallel=self.ep,
                data_parallel=self.dp,
            )
        if self.gpus > self.gpus_per_node and self.gpus % self.gpus_per_node:
            raise AdvisorError(
                "layout.whole_nodes",
                f"gpus: {self.gpus} GPUs do not fill whole {self.domain}s of {self.gpus_per_node}",
                field="gpus",
                gpus=self.gpus,
                gpus_per_node=self.gpus_per_node,
            )
        return self

    # -- where each group sits ------------------------------------------------------------

    def _span(self, inner: int, size: int) -> tuple[int, int]:
        """(ranks per node, nodes) of a group of `size` ranks whose consecutive members are
        `inner` ranks apart in the node-major numbering (TP innermost, then PP, then DP)."""
        g = self.gpus_per_node
        if size <= 1:
            return 1, 1
        if inner >= g:
            return 1, size
        per_node = max(1, min(size, g // inner))
        return per_node, -(-size // per_node)

    def tp_span(self) -> tuple[int, int]:
        return self._span(1, self.tp)

    def pp_crosses_nodes(self) -> bool:
        return self.tp * self.pp > self.gpus_per_node and self.pp > 1

    def dp_span(self) -> tuple[int, int]:
        return self._span(self.tp * self.pp * self.cp, self.dp)

    def cp_span(self) -> tuple[int, int]:
        return self._span(self.tp * self.pp, self.cp)

    def ep_span(self) -> tuple[int, int]:
        return self._span(self.tp * self.pp * self.cp, self.ep)

    def bubble_fraction(self) -> float:
        """Pipeline bubble over ideal time: (p-1) / (v*m) (Narayanan et al. 2021 eq. 1 and
        §2.2.2)."""
        if self.pp <= 1:
            return 0.0
        return (self.pp - 1) / (self.virtual_stages * self.micro_batches)

    def to_dict(self) -> dict:
        return {
            "tp": self.tp,
            "pp": self.pp,
            "dp": self.dp,
            "ep": self.ep,
            "cp": self.cp,
            "gpus": self.gpus,
            "nodes": self.nodes,
            "gpus_per_node": self.gpus_per_node,
            "domain": self.domain,
            "micro_batch": self.micro_batch,
            "micro_batches": self.micro_batches,
            "virtual_stages": self.virtual_stages,
            "sharding": self.sharding,
            "bubble_fraction": self.bubble_fraction(),
        }

    def label(self) -> str:
        parts = [f"TP {self.tp}", f"PP {self.pp}", f"DP {self.dp}"]
        if self.cp > 1:
            parts.append(f"CP {self.cp}")
        if self.ep > 1:
            parts.append(f"EP {self.ep}")
        return " x ".join(parts)
