"""Systems a buyer can buy (catalog/systems/*.yaml): SXM and OAM accelerators are sold on
baseboards of a fixed size inside servers built around them, never as loose cards; PCIe cards
go into servers of up to 8 slots. A system document names the form factors it carries, the
accelerators per system (`gpus`), the price of everything but the accelerators (`server_usd`,
null where no public figure was read), the server's own power beside the cards, its rack units
and its support per year; every figure with its source {url, read, kind, checked}.

`kind` of a source: `vendor` / `datasheet` (the maker's own document), `measurement`, or
`secondary` (an analyst's or a third party's figure: a report lists it as such).

An owned configuration of N accelerators is made of whole systems: N / gpus of one system (SXM
and OAM: N a multiple of the board size; PCIe: any N up to the slots, in as many servers as
needed). A rack-scale system (e.g. 72 GPUs on one NVLink domain) is a document of kind `rack`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..core.errors import AdvisorError, check_http_url
from .hardware import FORM_FACTORS

KINDS = ("server", "rack")
SOURCE_KINDS = ("vendor", "datasheet", "measurement", "secondary")
CHECKED = ("stored-copy", "recalled", "derived", "measured")
FIGURES = ("server_usd", "host_power_w", "rack_units", "support_usd_per_year")
_KEYS = (
    "id",
    "name",
    "kind",
    "form_factors",
    "gpu_ids",
    "gpus",
    "max_gpus_only",
    "server_usd",
    "host_power_w",
    "rack_units",
    "support_usd_per_year",
    "sources",
)
# Without catalog/systems (a test catalog): the board sizes by form factor.
BOARD_SIZES = {"sxm2": (8,), "sxm4": (4, 8), "sxm5": (4, 8), "sxm6": (8,), "oam": (8,)}


@dataclass(frozen=True)
class System:
    id: str
    name: str
    kind: str
    form_factors: tuple[str, ...]
    gpus: int
    server_usd: float | None
    host_power_w: float
    rack_units: int
    support_usd_per_year: float | None = None
    gpu_ids: tuple[str, ...] = ()  # empty: every accelerator of the form factors
    max_gpus_only: bool = False  # PCIe: `gpus` slots, fewer cards allowed
    sources: dict = field(default_factory=dict, compare=False)

    def carries(self, gpu) -> bool:
        ff = str(getattr(gpu, "form_factor", "") or "")
        if ff not in self.form_factors:
            return False
        return not self.gpu_ids or gpu.id in self.gpu_ids

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["form_factors"] = list(self.form_factors)
        d["gpu_ids"] = list(self.gpu_ids)
        return d


def _err(name: str, fld: str, message: str, **params) -> AdvisorError:
    return AdvisorError(
        "catalog.system", f"{name}: {fld}: {message}", field=f"{name}:{fld}", **params
    )


def system_from_dict(doc, name: str) -> System:
    """Validate one catalog/systems document (module docstring); errors name the file and
    field."""
    if not isinstance(doc, dict):
        raise _err(name, "document", "expected a mapping")
    for k in doc:
        if k not in _KEYS:
            raise _err(name, str(k), f"unknown field (known: {', '.join(_KEYS)})")
    for k in ("id", "name"):
        if not isinstance(doc.get(k), str) or not doc[k].strip():
            raise _err(name, k, "expected text")
    if doc.get("kind") not in KINDS:
        raise _err(name, "kind", f"one of {', '.join(KINDS)}")
    ffs = doc.get("form_factors")
    if not isinstance(ffs, list) or not ffs or any(f not in FORM_FACTORS for f in ffs):
        raise _err(name, "form_factors", f"a list of {', '.join(FORM_FACTORS)}")
    ids = doc.get("gpu_ids", [])
    if not isinstance(ids, list) or any(not isinstance(i, str) for i in ids):
        raise _err(name, "gpu_ids", "a list of accelerator ids")
    gpus = doc.get("gpus")
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= 1024:
        raise _err(name, "gpus", "a whole number from 1 to 1024")
    ru = doc.get("rack_units")
    if isinstance(ru, bool) or not isinstance(ru, int) or not 1 <= ru <= 60:
        raise _err(name, "rack_units", "a whole number from 1 to 60")
    for k, hi in (("server_usd", 1e8), ("host_power_w", 2e5), ("support_usd_per_year", 1e7)):
        v = doc.get(k)
        if v is None and k != "host_power_w":
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= hi:
            raise _err(name, k, f"a number from 0 to {hi:g}")
    sources = doc.get("sources") or {}
    if not isinstance(sources, dict):
        raise _err(name, "sources", "a mapping of field to {url, read, kind, checked}")
    for k in FIGURES:
        if doc.get(k) is not None and k not in sources:
            raise _err(name, f"sources.{k}", "every figure needs its source")
    for k, s in sources.items():
        if k not in FIGURES or not isinstance(s, dict):
            raise _err(name, f"sources.{k}", "a figure's source {url, read, kind, checked}")
        check_http_url(f"{name}:sources.{k}.url", s.get("url"))
        if not isinstance(s.get("read"), str) or len(s["read"]) != 10:
            raise _err(name, f"sources.{k}.read", "an ISO date")
        if s.get("kind") not in SOURCE_KINDS:
            raise _err(name, f"sources.{k}.kind", f"one of {', '.join(SOURCE_KINDS)}")
        if s.get("checked") not in CHECKED:
            raise _err(name, f"sources.{k}.checked", f"one of {', '.join(CHECKED)}")
    return System(
        id=doc["id"],
        name=doc["name"],
        kind=doc["kind"],
        form_factors=tuple(ffs),
        gpus=gpus,
        server_usd=None if doc.get("server_usd") is None else float(doc["server_usd"]),
        host_power_w=float(doc["host_power_w"]),
        rack_units=ru,
        support_usd_per_year=(
            None if doc.get("support_usd_per_year") is None else float(doc["support_usd_per_year"])
        ),
        gpu_ids=tuple(ids),
        max_gpus_only=bool(doc.get("max_gpus_only", False)),
        sources={k: dict(v) for k, v in sources.items()},
    )


def _carrying(gpu, systems) -> list[System]:
    return [s for s in systems if s.carries(gpu)]


def platform_sizes(gpu, systems=()) -> tuple[int, ...]:
    """GPUs per board an owned configuration of `gpu` is made of; () for PCIe cards (any count
    a server holds)."""
    own = _carrying(gpu, systems)
    if own:
        return tuple(sorted({s.gpus for s in own if not s.max_gpus_only}))
    return BOARD_SIZES.get(str(getattr(gpu, "form_factor", "") or ""), ())


def ownable(gpu, count: int, systems=()) -> bool:
    """Whether `count` cards of `gpu` can be bought as whole boards (module docstring)."""
    sizes = platform_sizes(gpu, systems)
    return not sizes or any(count % s == 0 for s in sizes)


@dataclass(frozen=True)
class Purchase:
    """The systems an owned configuration is made of."""

    system: System | None
    nodes: int
    server_usd: float | None  # all systems' non-accelerator price; None: not priced
    host_power_w: float
    rack_units: int | None
    support_usd_per_year: float | None

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "system"}
        d["system"] = None if self.system is None else self.system.to_dict()
        return d


def purchase_for(gpu, count: int, systems=()) -> Purchase:
    """The systems that hold `count` x `gpu`: the largest board size that divides `count`
    (SXM / OAM), or enough PCIe servers; no system known: none (server not priced)."""
    own = _carrying(gpu, systems)
    fixed = [s for s in own if not s.max_gpus_only and count % s.gpus == 0]
    slots = [s for s in own if s.max_gpus_only]
    if fixed:
        s = max(fixed, key=lambda s: s.gpus)
        nodes = count // s.gpus
    elif slots:
        s = max(slots, key=lambda s: s.gpus)
        nodes = math.ceil(count / s.gpus)
    else:
        return Purchase(None, 0, None, 0.0, None, None)
    return Purchase(
        system=s,
        nodes=nodes,
        server_usd=None if s.server_usd is None else s.server_usd * nodes,
        host_power_w=s.host_power_w * nodes,
        rack_units=s.rack_units * nodes,
        support_usd_per_year=(
            None if s.support_usd_per_year is None else s.support_usd_per_year * nodes
        ),
    )
