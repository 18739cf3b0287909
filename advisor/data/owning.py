"""What owning costs beside the systems (catalog/owning/*.yaml, issue 38): hosting (colocation
per kW of IT power per month), the network beyond the server (switch ports, cables and optics per
GPU port), support (the vendor's software subscription per GPU per year; hardware support) and
resale (a share of the purchase price by the months owned). One YAML per group; each figure
carries its value (`value`: a number, or null where no figure was read: "not priced"; or
`points`: [[months, share], ...]), its unit and its source {url, read, kind, checked, quote /
note}; `also` records the other figures read, with the reason the chosen one was chosen.

`kind` of a source: vendor / datasheet (the maker's own document), measurement, secondary (an
analyst's or a third party's figure: reports list it as such), or assumption (no figure was
read: the number is this catalog's, said as such).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import AdvisorError, check_http_url

SOURCE_KINDS = ("vendor", "datasheet", "measurement", "secondary", "assumption")
CHECKED = ("stored-copy", "recalled", "derived", "measured")
# figure -> (file id, bounds of its value)
FIGURES = {
    "colocation_usd_per_kw_month": ("hosting", (0.0, 10_000.0)),
    "switch_usd_per_port": ("network", (0.0, 100_000.0)),
    "link_usd_per_port": ("network", (0.0, 100_000.0)),
    "switch_ports": ("network", (2.0, 4096.0)),
    "nvidia_ai_enterprise_usd_per_gpu_year": ("support", (0.0, 1e6)),
    "hardware_support_fraction_per_year": ("support", (0.0, 1.0)),
    "resale_fraction_by_months": ("resale", (0.0, 1.0)),
}
_FIGURE_KEYS = ("value", "points", "unit", "source", "also", "applies_to", "included_with")


@dataclass(frozen=True)
class Figure:
    name: str
    value: float | None  # None: not priced (or a `points` figure)
    unit: str
    source: dict
    points: tuple[tuple[float, float], ...] = ()
    applies_to: dict = field(default_factory=dict, compare=False)
    included_with: tuple[str, ...] = ()
    also: tuple = field(default=(), compare=False)

    @property
    def kind(self) -> str:
        return str(self.source.get("kind", ""))

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "value": self.value,
            "points": [list(p) for p in self.points],
            "unit": self.unit,
            "source": dict(self.source),
        }


@dataclass(frozen=True)
class OwningFigures:
    """The catalog/owning figures by name (`FIGURES`); an empty one (a test catalog without
    catalog/owning) prices none of them."""

    figures: dict = field(default_factory=dict)

    def get(self, name: str) -> Figure | None:
        return self.figures.get(name)

    def value(self, name: str) -> float | None:
        f = self.figures.get(name)
        return None if f is None else f.value


def _err(name: str, fld: str, message: str) -> AdvisorError:
    return AdvisorError("catalog.owning", f"{name}: {fld}: {message}", field=f"{name}:{fld}")


def _check_source(name: str, fld: str, s, *, full: bool) -> dict:
    if not isinstance(s, dict):
        raise _err(name, fld, "a source {url, read, kind, checked}")
    check_http_url(f"{name}:{fld}.url", s.get("url"))
    if not isinstance(s.get("read"), str) or len(s["read"]) != 10:
        raise _err(name, f"{fld}.read", "an ISO date")
    if s.get("kind") not in SOURCE_KINDS:
        raise _err(name, f"{fld}.kind", f"one of {', '.join(SOURCE_KINDS)}")
    if full and s.get("checked") not in CHECKED:
        raise _err(name, f"{fld}.checked", f"one of {', '.join(CHECKED)}")
    return dict(s)


def _number(name: str, fld: str, v, bounds) -> float:
    lo, hi = bounds
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
        raise _err(name, fld, f"a number from {lo:g} to {hi:g}")
    return float(v)


def figures_from_dict(doc, name: str) -> tuple[Figure, ...]:
    """Validate one catalog/owning document (module docstring); errors name the file and
    field."""
    if not isinstance(doc, dict) or set(doc) - {"id", "figures"}:
        raise _err(name, "document", "a mapping of id and figures")
    fid = doc.get("id")
    figs = doc.get("figures")
    if not isinstance(figs, dict) or not figs:
        raise _err(name, "figures", "a mapping of figure name to {value, unit, source}")
    out = []
    for k, f in figs.items():
        where = f"figures.{k}"
        if k not in FIGURES or FIGURES[k][0] != fid:
            known = ", ".join(n for n, (g, _) in FIGURES.items() if g == fid) or "none"
            raise _err(name, where, f"unknown figure for {fid!r} (known: {known})")
        if not isinstance(f, dict) or set(f) - set(_FIGURE_KEYS):
            raise _err(name, where, f"a mapping of {', '.join(_FIGURE_KEYS)}")
        bounds = FIGURES[k][1]
        value, points = None, ()
        if "points" in f:
            pts = f["points"]
            if not isinstance(pts, list) or not pts:
                raise _err(name, f"{where}.points", "a list of [months, share]")
            last = 0.0
            got = []
            for i, p in enumerate(pts):
                if not isinstance(p, list) or len(p) != 2:
                    raise _err(name, f"{where}.points[{i}]", "[months, share]")
                m = _number(name, f"{where}.points[{i}]", p[0], (1.0, 600.0))
                if m <= last:
                    raise _err(name, f"{where}.points[{i}]", "months in increasing order")
                last = m
                got.append((m, _number(name, f"{where}.points[{i}]", p[1], bounds)))
            points = tuple(got)
        elif f.get("value") is not None:
            value = _number(name, f"{where}.value", f["value"], bounds)
        elif "value" not in f:
            raise _err(name, f"{where}.value", "a number, or null where no figure was read")
        if not isinstance(f.get("unit"), str) or not f["unit"].strip():
            raise _err(name, f"{where}.unit", "expected text")
        source = _check_source(name, f"{where}.source", f.get("source"), full=True)
        also = f.get("also", [])
        if not isinstance(also, list):
            raise _err(name, f"{where}.also", "a list of sources with their value")
        for i, a in enumerate(also):
            _check_source(name, f"{where}.also[{i}]", a, full=False)
        applies = f.get("applies_to", {})
        if not isinstance(applies, dict) or any(
            k2 not in ("software", "tier") or not isinstance(v2, list) for k2, v2 in applies.items()
        ):
            raise _err(name, f"{where}.applies_to", "{software: [...], tier: [...]}")
        inc = f.get("included_with", [])
        if not isinstance(inc, list) or any(not isinstance(i, str) for i in inc):
            raise _err(name, f"{where}.included_with", "a list of accelerator ids")
        out.append(
            Figure(
                name=k,
                value=value,
                unit=f["unit"],
                source=source,
                points=points,
                applies_to={a: tuple(v) for a, v in applies.items()},
                included_with=tuple(inc),
                also=tuple(dict(a) for a in also),
            )
        )
    return tuple(out)


def owning_from_documents(items) -> OwningFigures:
    """The figures of every catalog/owning document ((name, document) pairs); a figure given
    twice names both files."""
    figs: dict[str, Figure] = {}
    where: dict[str, str] = {}
    for name, doc in items:
        for f in figures_from_dict(doc, name):
            if f.name in figs:
                raise _err(name, f"figures.{f.name}", f"also given in {where[f.name]}")
            figs[f.name] = f
            where[f.name] = name
    return OwningFigures(figs)


def applies(fig: Figure | None, gpu) -> bool:
    """Whether a per-GPU figure (`applies_to`, `included_with`) is paid for `gpu`."""
    if fig is None or fig.value is None:
        return False
    if gpu.id in fig.included_with:
        return False
    for attr, allowed in fig.applies_to.items():
        if str(getattr(gpu, attr, "") or "") not in allowed:
            return False
    return True


def resale_fraction(figs: OwningFigures, months: int) -> float | None:
    """The resale share after `months` (linear between the points; before the first point,
    from 1 at month 0; past the last, the last share); None without the figure."""
    f = figs.get("resale_fraction_by_months")
    if f is None or not f.points:
        return None
    prev_m, prev_v = 0.0, 1.0
    for m, v in f.points:
        if months <= m:
            return prev_v + (v - prev_v) * (months - prev_m) / (m - prev_m)
        prev_m, prev_v = m, v
    return prev_v
