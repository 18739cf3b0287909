"""Network fabrics as catalog data: `Fabric`, the record of one network a GPU's collectives
cross (`catalog/networks/*.yaml`, one sourced document each), and its reader. The time model
(advisor.perf.network: collective times in the alpha-beta model) reads it. Per-GPU bandwidths
are one direction, in GB/s (10^9) in the fields, bytes/s from `bytes_per_s`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import AdvisorError
from ..core.ids import check_id
from ..core.limits import check_range

# NCCL reaches this fraction of a link's one-direction bandwidth as bus bandwidth on large
# messages: nccl-tests doc/PERFORMANCE.md shows about 230 of 300 GB/s per direction on 8 A100
# (NVLink 3) all-reduce, ~0.77; used for every link unless a fabric states its own.
DEFAULT_BUS_EFFICIENCY = 0.77
# Plausible ranges of a catalog fabric (issue 40: 1e-300 GB/s gave NaN and 200-digit hours).
# Per GPU each way: 0.1 GB/s is 1 Gb/s Ethernet shared by a node's 8 GPUs (0.125 GB/s), the
# slowest fabric anyone would cluster over; 10,000 GB/s is ten times NVLink 5's 900 GB/s each way.
GB_PER_S_PER_GPU = (0.1, 10_000.0)
# Latency per ring step: 0.1 us is below any NIC or NVLink hop (about 1-2 us), 10 ms a WAN.
LATENCY_US = (0.1, 10_000.0)
# NCCL's bus bandwidth as a fraction of the link rate (nccl-tests: 0.7-0.9 on real fabrics).
BUS_EFFICIENCY = (0.05, 1.0)


@dataclass(frozen=True)
class Fabric:
    """One network a GPU's collectives cross.

    - `gb_per_s_per_gpu`: one-direction bandwidth available to each GPU (GB/s, 10^9 bytes);
    - `latency_us`: per-step latency of a collective (the alpha of the alpha-beta model);
    - `bus_efficiency`: fraction of `gb_per_s_per_gpu` NCCL reaches as bus bandwidth.
    """

    id: str
    name: str
    kind: str  # "intra" (inside a node) | "inter" (between nodes)
    gb_per_s_per_gpu: float
    latency_us: float
    bus_efficiency: float = DEFAULT_BUS_EFFICIENCY
    source: str = ""

    @property
    def bytes_per_s(self) -> float:
        return self.gb_per_s_per_gpu * 1e9 * self.bus_efficiency

    @property
    def latency_s(self) -> float:
        return self.latency_us * 1e-6

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "gb_per_s_per_gpu": self.gb_per_s_per_gpu,
            "latency_us": self.latency_us,
            "bus_efficiency": self.bus_efficiency,
            "source": self.source,
        }


def fabric_from_dict(doc: dict, source_name: str) -> Fabric:
    """A `Fabric` from one `catalog/networks/*.yaml` document; bad fields name the file."""
    if not isinstance(doc, dict):
        raise AdvisorError("catalog.not_mapping", f"{source_name}: expected a mapping")
    try:
        kind = doc.get("kind")
        if kind not in ("intra", "inter"):
            raise AdvisorError(
                "field.choice", f"{source_name}: kind must be intra or inter", field="kind"
            )
        src = doc.get("source") or {}
        url = src.get("url") if isinstance(src, dict) else None
        if not isinstance(url, str) or not url.startswith("https://"):
            raise AdvisorError(
                "field.url", f"{source_name}: source.url must be an https URL", field="source.url"
            )
        return Fabric(
            id=check_id(source_name, "id", doc["id"]),
            name=str(doc["name"]),
            kind=kind,
            gb_per_s_per_gpu=check_range(
                "gb_per_s_per_gpu", doc["gb_per_s_per_gpu"], GB_PER_S_PER_GPU
            ),
            latency_us=check_range("latency_us", doc["latency_us"], LATENCY_US),
            bus_efficiency=check_range(
                "bus_efficiency", doc.get("bus_efficiency", DEFAULT_BUS_EFFICIENCY), BUS_EFFICIENCY
            ),
            source=url,
        )
    except KeyError as e:
        raise AdvisorError(
            "field.missing", f"{source_name}: missing field {e.args[0]}", field=str(e.args[0])
        ) from None
    except AdvisorError as e:
        if source_name in str(e):
            raise
        params = {k: v for k, v in e.params.items() if k != "field"}
        raise AdvisorError(
            e.key, f"{source_name}: {e.message}", field=f"{source_name}:{e.field}", **params
        ) from None
    except (TypeError, ValueError) as e:
        raise AdvisorError(
            "catalog.network", f"{source_name}: {e.__class__.__name__}: {e}", field=source_name
        ) from None
