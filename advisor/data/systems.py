"""Systems a buyer can buy (catalog/systems/*.yaml): SXM and OAM accelerators are sold on
baseboards of a fixed size inside servers built around them, never as loose cards; PCIe cards
go into servers of up to 8 slots. A system document names the form factors it carries, the
accelerators per system (`gpus`), the price of everything but the accelerators (`server_usd`,
null where no public figure was read), the server's own power beside the cards, its rack units
and its support per year; every figure with its source {url, read, kind, checked}.

`kind` of a source: `vendor` / `datasheet` (the maker's own document), `measurement`,
`secondary` (an analyst's or a third party's figure: a report lists it as such), `press`, or
`assumption` (no figure was read: a stated assumption, shown as such in every face).

A server whose price was not found in any public source has `server_usd: null` (not priced) and
may carry `server_usd_assumed`: a stated assumption (its source of kind `assumption` says how it
was made) that the owned costs count so that an unpriced server is not free, and that every face
labels as assumed ("no published price; ask a vendor for a quote": `Purchase.server_assumed`,
advisor.money.cost.OwningPlan.server_assumed).

An owned configuration of N accelerators is made of whole systems: N / gpus of one system (SXM
and OAM: N a multiple of the board size; PCIe: any N up to the slots, in as many servers as
needed).

Issue 34: a rack-scale system (kind `rack`: a GB200 / GB300 NVL72, 72 GPUs in one NVLink
domain, bought whole) and a unified-memory box (kind `desktop`: DGX Spark, Mac Studio, a Ryzen AI
Max+ 395 box) are priced as a whole, accelerators included (`system_usd`, with the reported
range `system_usd_range` where the press gives one); `system_power_w` is the whole system's
power (rack: all trays, switches and power shelves), `cooling` air or liquid, `cpus` the host
CPUs, `scale_up_domain` the accelerators in one scale-up domain (NVL72: 72; never 0),
`max_systems` how many may be linked (DGX Spark: 4, what NVIDIA's cluster helper sets up; unset: any), and
`memory_configs_gib` the memory sizes the box is sold with. An owned configuration of such a
system pays `system_usd` per system and no separate card price (`Purchase.prices`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..core.errors import AdvisorError, check_http_url
from .hardware import FORM_FACTORS

KINDS = ("server", "rack", "desktop")
SOURCE_KINDS = ("vendor", "datasheet", "measurement", "secondary", "press", "assumption")
CHECKED = ("stored-copy", "recalled", "derived", "measured")
COOLING = ("air", "liquid")
FIGURES = (
    "server_usd",
    "server_usd_assumed",
    "host_power_w",
    "rack_units",
    "support_usd_per_year",
    "system_usd",
    "system_power_w",
    "cooling",
    "cpus",
    "scale_up_domain",
    "max_systems",
    "memory_configs_gib",
)
_KEYS = (
    "id",
    "name",
    "kind",
    "form_factors",
    "gpu_ids",
    "gpus",
    "max_gpus_only",
    "server_usd",
    "server_usd_assumed",
    "host_power_w",
    "rack_units",
    "support_usd_per_year",
    "system_usd",
    "system_usd_range",
    "system_power_w",
    "cooling",
    "cpus",
    "scale_up_domain",
    "max_systems",
    "memory_configs_gib",
    "note",
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
    rack_units: int | None
    support_usd_per_year: float | None = None
    gpu_ids: tuple[str, ...] = ()  # empty: every accelerator of the form factors
    max_gpus_only: bool = False  # PCIe: `gpus` slots, fewer cards allowed
    # issue 34: racks and desktop boxes priced whole (module docstring)
    system_usd: float | None = None
    system_usd_range: tuple[float, float] | None = None
    system_power_w: float | None = None
    cooling: str | None = None
    cpus: int | None = None
    scale_up_domain: int | None = None
    max_systems: int | None = None
    memory_configs_gib: tuple[float, ...] = ()
    note: str = ""
    sources: dict = field(default_factory=dict, compare=False)
    # not priced (`server_usd` None): a stated assumption, labelled as such (module docstring)
    server_usd_assumed: float | None = None

    def carries(self, gpu) -> bool:
        ff = str(getattr(gpu, "form_factor", "") or "")
        if ff not in self.form_factors:
            return False
        return not self.gpu_ids or gpu.id in self.gpu_ids

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["form_factors"] = list(self.form_factors)
        d["gpu_ids"] = list(self.gpu_ids)
        d["system_usd_range"] = (
            None if self.system_usd_range is None else list(self.system_usd_range)
        )
        d["memory_configs_gib"] = list(self.memory_configs_gib)
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
    if ru is None and doc.get("kind") == "desktop":
        pass  # a box on a desk takes no rack space
    elif isinstance(ru, bool) or not isinstance(ru, int) or not 1 <= ru <= 60:
        raise _err(name, "rack_units", "a whole number from 1 to 60")
    for k, hi in (
        ("server_usd", 1e8),
        ("server_usd_assumed", 1e8),
        ("host_power_w", 2e5),
        ("support_usd_per_year", 1e7),
    ):
        v = doc.get(k)
        if v is None and k != "host_power_w":
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= hi:
            raise _err(name, k, f"a number from 0 to {hi:g}")
    if doc.get("server_usd_assumed") is not None and doc.get("server_usd") is not None:
        raise _err(
            name,
            "server_usd_assumed",
            "an assumption only where no price was read (server_usd: null)",
        )
    sysp = doc.get("system_usd")
    if sysp is not None and (
        isinstance(sysp, bool) or not isinstance(sysp, (int, float)) or not 0 < sysp <= 1e9
    ):
        raise _err(
            name, "system_usd", "a number from 0 to 1e+09 (the whole system, accelerators included)"
        )
    rng = doc.get("system_usd_range")
    if rng is not None:
        if (
            not isinstance(rng, list)
            or len(rng) != 2
            or any(isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0 for v in rng)
            or rng[0] > rng[1]
        ):
            raise _err(name, "system_usd_range", "[low, high]: two positive numbers, low first")
        if sysp is None or not rng[0] <= sysp <= rng[1]:
            raise _err(name, "system_usd", "the chosen price must lie inside system_usd_range")
    spw = doc.get("system_power_w")
    if spw is not None:
        if isinstance(spw, bool) or not isinstance(spw, (int, float)) or not 0 < spw <= 2e6:
            raise _err(name, "system_power_w", "a number from 0 to 2e+06")
        if doc.get("host_power_w", 0) > spw:
            raise _err(name, "host_power_w", "more than the whole system's system_power_w")
    if doc.get("cooling") is not None and doc["cooling"] not in COOLING:
        raise _err(name, "cooling", f"one of {', '.join(COOLING)}")
    for k, lo, hi in (
        ("cpus", 0, 10_000),
        ("scale_up_domain", 1, 100_000),
        ("max_systems", 1, 100_000),
    ):
        v = doc.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi):
            raise _err(name, k, f"a whole number from {lo} to {hi}")
    if doc.get("scale_up_domain") is not None and doc["scale_up_domain"] < gpus:
        raise _err(name, "scale_up_domain", f"smaller than the system's {gpus} accelerators")
    mem = doc.get("memory_configs_gib", [])
    if not isinstance(mem, list) or any(
        isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1e5 for v in mem
    ):
        raise _err(name, "memory_configs_gib", "a list of memory sizes in GiB")
    if doc.get("note") is not None and not isinstance(doc["note"], str):
        raise _err(name, "note", "expected text")
    if doc.get("kind") in ("rack", "desktop") and "system_usd" not in doc:
        raise _err(
            name, "system_usd", "a rack or desktop box gives its whole price (null: not priced)"
        )
    sources = doc.get("sources") or {}
    if not isinstance(sources, dict):
        raise _err(name, "sources", "a mapping of field to {url, read, kind, checked}")
    for k in FIGURES:
        if doc.get(k) not in (None, []) and k not in sources:
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
        # an assumption is never passed off as a read price, nor a read price as an assumption
        if (k == "server_usd_assumed") != (s["kind"] == "assumption") and k in (
            "server_usd",
            "server_usd_assumed",
        ):
            raise _err(
                name,
                f"sources.{k}.kind",
                "server_usd_assumed takes kind assumption; a read server_usd never does",
            )
    return System(
        id=doc["id"],
        name=doc["name"],
        kind=doc["kind"],
        form_factors=tuple(ffs),
        gpus=gpus,
        server_usd=None if doc.get("server_usd") is None else float(doc["server_usd"]),
        server_usd_assumed=(
            None if doc.get("server_usd_assumed") is None else float(doc["server_usd_assumed"])
        ),
        host_power_w=float(doc["host_power_w"]),
        rack_units=ru,
        support_usd_per_year=(
            None if doc.get("support_usd_per_year") is None else float(doc["support_usd_per_year"])
        ),
        gpu_ids=tuple(ids),
        max_gpus_only=bool(doc.get("max_gpus_only", False)),
        system_usd=None if sysp is None else float(sysp),
        system_usd_range=None if rng is None else (float(rng[0]), float(rng[1])),
        system_power_w=None if spw is None else float(spw),
        cooling=doc.get("cooling"),
        cpus=doc.get("cpus"),
        scale_up_domain=doc.get("scale_up_domain"),
        max_systems=doc.get("max_systems"),
        memory_configs_gib=tuple(float(v) for v in mem),
        note=doc.get("note") or "",
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
    if sizes and not any(count % s == 0 for s in sizes):
        return False
    limit = max_count(gpu, systems)
    return limit is None or count <= limit


def max_count(gpu, systems=()) -> int | None:
    """The most accelerators of `gpu` that may be linked into one owned configuration: the
    systems' `max_systems` x `gpus` (DGX Spark: 4 boxes); None: no limit stated."""
    limits = [s.max_systems * s.gpus for s in _carrying(gpu, systems) if s.max_systems]
    return max(limits) if limits else None


@dataclass(frozen=True)
class Purchase:
    """The systems an owned configuration is made of."""

    system: System | None
    nodes: int
    # all systems' non-accelerator price (the read figure, else the stated assumption:
    # `server_assumed`); None: neither
    server_usd: float | None
    host_power_w: float
    rack_units: int | None
    support_usd_per_year: float | None
    system_usd: float | None = None  # racks and boxes: all systems' whole price, cards included
    server_assumed: bool = False  # `server_usd` is the system's stated assumption, not a price

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "system"}
        d["system"] = None if self.system is None else self.system.to_dict()
        return d

    def prices(self, gpu, count: int) -> tuple[float, float] | None:
        """(USD per accelerator, USD for the rest) of owning `count` x `gpu` in these systems:
        a rack or box priced whole (`system_usd`) splits its price over its accelerators and
        has no separate server price; otherwise the card's catalog price and the server beside
        it (`server_usd`, 0 where not priced). None: neither is priced."""
        if self.system_usd is not None and count > 0:
            return self.system_usd / count, 0.0
        if gpu.price_usd:
            return float(gpu.price_usd), float(self.server_usd or 0.0)
        return None


def purchase_for(gpu, count: int, systems=()) -> Purchase:
    """The systems that hold `count` x `gpu`: the largest board size that divides `count`
    (SXM / OAM), or enough PCIe servers; no system known: none (server not priced). A server
    with no read price is counted at its stated assumption (`server_usd_assumed`), flagged
    `server_assumed`."""
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
    each = s.server_usd if s.server_usd is not None else s.server_usd_assumed
    return Purchase(
        system=s,
        nodes=nodes,
        server_usd=None if each is None else each * nodes,
        server_assumed=s.server_usd is None and s.server_usd_assumed is not None,
        host_power_w=s.host_power_w * nodes,
        rack_units=None if s.rack_units is None else s.rack_units * nodes,
        support_usd_per_year=(
            None if s.support_usd_per_year is None else s.support_usd_per_year * nodes
        ),
        system_usd=None if s.system_usd is None else s.system_usd * nodes,
    )
