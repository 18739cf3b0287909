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
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import AdvisorError, check_choice, check_int

SHARDING = ("ddp", "zero1", "zero2", "zero3")
MAX_GPUS = 1 << 17  # 131,072: the largest cluster a layout may describe


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
        check_int("gpus_per_node", self.gpus_per_node, maximum=72)
        check_choice("sharding", self.sharding, SHARDING)
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
                f"gpus: {self.gpus} GPUs do not fill whole nodes of {self.gpus_per_node}",
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
