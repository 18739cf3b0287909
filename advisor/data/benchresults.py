"""Measured benchmark runs: the JSON files `python -m bench run ...` writes into bench_results/,
read and validated into frozen types for the site and for advisor's efficiency assumptions.

Standard library only. `load_results(folder)` reads every `*.json` directly in `folder` (not its
subfolders: bench_results/validation/ has its own schema) and validates each: schema version,
required fields and types, finite numbers. A malformed file raises `AdvisorError` whose message
and `field` name the file. Chart helpers return inline SVG strings (no scripts, no external
resources) so that the Jinja2 pages can embed them.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ..core import numfmt
from ..core.errors import AdvisorError
from ..core.markup import Html

SCHEMA_VERSION = 1
WORKLOADS = ("train-step", "matmul", "bandwidth", "dataloader", "max-batch", "allreduce", "ddp")
_REQUIRED = {
    "schema_version": int,
    "workload": str,
    "created_utc": str,
    "environment": dict,
    "configuration": dict,
    "samples": dict,
    "summary": dict,
    "derived": list,
}
_ENV_REQUIRED = {
    "device": str,
    "accelerator": str,
    "torch": str,
    "python": str,
    "command_line": list,
    "time_utc": str,
    "hostname": str,
}


@dataclass(frozen=True)
class Derived:
    """A derived figure; `value` is None only when `reason` says why (e.g. no catalog peak)."""

    name: str
    value: float | None
    unit: str
    formula: str
    reason: str | None = None


@dataclass(frozen=True)
class BenchResult:
    file: str  # file name inside the results folder
    schema_version: int
    workload: str
    created_utc: str
    device: str  # "cpu" | "cuda"
    accelerator: str
    environment: dict
    configuration: dict
    samples: dict  # name -> tuple of floats (raw samples)
    summary: dict
    derived: tuple[Derived, ...]
    table: tuple[dict, ...]
    memory: dict | None
    telemetry: dict | None
    notes: tuple[str, ...]
    # The SVG helpers, reachable from templates through any result (`bench[0].charts.bar(...)`).
    charts: ClassVar = None

    @property
    def headline(self) -> tuple[Derived, ...]:
        """The first figures with a value (the ones the overview table shows)."""
        return tuple(d for d in self.derived if d.value is not None and d.name != "flops_per_step")[
            :3
        ]

    @property
    def slug(self) -> str:
        """An HTML anchor for the run: lower-case ASCII letters, digits and '-' only (it names a
        URL fragment and an attr_list id: a file name's other characters cannot reach a link)."""
        return "run-" + re.sub(r"[^a-z0-9-]", "-", Path(self.file).stem.lower())

    @property
    def label(self) -> str:
        kind = "CPU" if self.device == "cpu" else "GPU"
        return f"{self.workload} · {self.accelerator} ({kind}) · {self.created_utc}"

    def figure(self, name: str) -> Derived | None:
        for d in self.derived:
            if d.name == name:
                return d
        return None

    def value(self, name: str) -> float | None:
        d = self.figure(name)
        return d.value if d is not None else None

    def memory_comparison(self) -> tuple[int, int, float] | None:
        """(measured peak bytes, predicted peak bytes, error %) when both are present."""
        m = self.memory or {}
        meas = (m.get("measured") or {}).get("peak_allocated_bytes")
        pred = m.get("predicted") or {}
        if meas and pred.get("available") and pred.get("peak_allocated_bytes"):
            p = pred["peak_allocated_bytes"]
            return int(meas), int(p), 100.0 * (p - meas) / meas
        return None

    def series(self, key: str) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        """(t_s, values) of one telemetry series."""
        s = (self.telemetry or {}).get("series") or {}
        if key in s and "t_s" in s:
            return tuple(s["t_s"]), tuple(s[key])
        return None

    def telemetry_keys(self) -> tuple[str, ...]:
        s = (self.telemetry or {}).get("series") or {}
        return tuple(k for k in s if k != "t_s")


class BenchResults(tuple):
    """A tuple of `BenchResult` (oldest first) with grouping and chart helpers for the pages."""

    def by_workload(self, workload: str) -> tuple[BenchResult, ...]:
        return tuple(r for r in self if r.workload == workload)

    def accelerators(self) -> tuple[str, ...]:
        seen: list[str] = []
        for r in self:
            if r.accelerator not in seen:
                seen.append(r.accelerator)
        return tuple(seen)

    def by_accelerator(self, accelerator: str) -> tuple[BenchResult, ...]:
        return tuple(r for r in self if r.accelerator == accelerator)

    def latest(self, workload: str, accelerator: str | None = None) -> BenchResult | None:
        runs = [r for r in self.by_workload(workload) if accelerator in (None, r.accelerator)]
        return runs[-1] if runs else None

    def compare(self, workload: str, name: str) -> tuple[tuple[str, float], ...]:
        """(label, value) of figure `name` for every run of `workload` that has it."""
        out = []
        for r in self.by_workload(workload):
            v = r.value(name)
            if v is not None:
                out.append((f"{_short(r.accelerator)} · {r.created_utc[:16]}", v))
        return tuple(out)


def _short(name: str, n: int = 28) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"


# ------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------


def _fail(source: str, what: str, **params) -> AdvisorError:
    return AdvisorError("bench.invalid", f"{source}: {what}", field=source, **params)


# Every number in a result within +-1e18: the largest real figure is a step's FLOPs (~1e14-1e17
# for the models a bench run trains); a 1e300 would show as a 300-digit number (issue 40).
MAX_ABS_NUMBER = 1e18


def _check_finite(source: str, path: str, obj) -> None:
    """Every number in `obj` must be finite (json.loads accepts NaN and Infinity) and within
    +-MAX_ABS_NUMBER."""
    if isinstance(obj, float) and not math.isfinite(obj):
        raise _fail(source, f"{path}: non-finite number {obj}")
    if _is_num(obj) and abs(obj) > MAX_ABS_NUMBER:
        raise _fail(source, f"{path}: {obj:.3g} is not a plausible figure (at most 1e18)")
    if isinstance(obj, dict):
        for k, v in obj.items():
            _check_finite(source, f"{path}.{k}", v)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _check_finite(source, f"{path}[{i}]", v)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# Derived figures that advisor uses as efficiencies (advisor.data.achievable.Measured): fractions of
# a datasheet peak. MFU cannot exceed 1; a bandwidth reading may beat the datasheet a little
# (rounded datasheet figures, caches) but not by 50 %.
_FRACTIONS = {"mfu": (1e-3, 1.0), "fraction_of_datasheet_bandwidth": (1e-3, 1.5)}


_STATS = ("median", "p10", "p90", "min", "max", "mean")


def _check_summary(source: str, name: str, stats) -> None:
    """summary.<name>: an object whose statistics (median, p10, ...) are numbers, `n` a count
    and `unit` text (issue 40: a median of "fast" failed the build naming the template)."""
    if not isinstance(stats, dict):
        raise _fail(source, f"summary.{name}: expected an object")
    for key in _STATS:
        if key in stats and not _is_num(stats[key]):
            raise _fail(source, f"summary.{name}.{key}: expected a number, got {stats[key]!r:.40}")
    n = stats.get("n")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
        raise _fail(source, f"summary.{name}.n: expected a count")
    if "unit" in stats and not isinstance(stats["unit"], str):
        raise _fail(source, f"summary.{name}.unit: expected text")


def result_from_dict(doc, source: str) -> BenchResult:
    """Validate one result document; errors name `source`."""
    if not isinstance(doc, dict):
        raise _fail(source, "expected a JSON object")
    _check_finite(source, "$", doc)
    for key, typ in _REQUIRED.items():
        if key not in doc:
            raise _fail(source, f"missing field {key!r}")
        if not isinstance(doc[key], typ) or isinstance(doc[key], bool):
            raise _fail(source, f"field {key!r} must be {typ.__name__}")
    if doc["schema_version"] != SCHEMA_VERSION:
        raise _fail(source, f"schema_version {doc['schema_version']} is not {SCHEMA_VERSION}")
    if doc["workload"] not in WORKLOADS:
        raise _fail(source, f"unknown workload {doc['workload']!r}")
    env = doc["environment"]
    for key, typ in _ENV_REQUIRED.items():
        if not isinstance(env.get(key), typ):
            raise _fail(source, f"environment.{key} missing or not {typ.__name__}")
    if env["device"] not in ("cpu", "cuda"):
        raise _fail(source, f"environment.device {env['device']!r} is not cpu or cuda")
    samples = {}
    for name, vals in doc["samples"].items():
        if not isinstance(vals, list) or not vals or not all(_is_num(v) for v in vals):
            raise _fail(source, f"samples.{name}: expected a non-empty list of numbers")
        samples[name] = tuple(float(v) for v in vals)
    for name, stats in doc["summary"].items():
        _check_summary(source, name, stats)
    derived = []
    for i, d in enumerate(doc["derived"]):
        if not isinstance(d, dict):
            raise _fail(source, f"derived[{i}]: expected an object")
        for key in ("name", "unit", "formula"):
            if not isinstance(d.get(key), str) or not d.get(key):
                raise _fail(source, f"derived[{i}].{key}: expected text")
        v = d.get("value")
        if v is None:
            if not isinstance(d.get("reason"), str):
                raise _fail(source, f"derived[{i}] ({d['name']}): null value needs a reason")
        elif not _is_num(v):
            raise _fail(source, f"derived[{i}] ({d['name']}): value must be a number")
        elif (
            d["name"] in _FRACTIONS
            and not _FRACTIONS[d["name"]][0] <= v <= _FRACTIONS[d["name"]][1]
        ):
            lo, hi = _FRACTIONS[d["name"]]
            raise _fail(
                source,
                f"derived[{i}] ({d['name']}): {v:.3g} is outside the plausible {lo:g}-{hi:g}",
            )
        derived.append(
            Derived(
                d["name"], None if v is None else float(v), d["unit"], d["formula"], d.get("reason")
            )
        )
    table = doc.get("table", [])
    if not isinstance(table, list) or not all(isinstance(r, dict) for r in table):
        raise _fail(source, "table: expected a list of objects")
    for i, row in enumerate(table):
        for k, v in row.items():
            if not (v is None or isinstance(v, (str, bool)) or _is_num(v)):
                raise _fail(source, f"table[{i}].{k}: expected a number, text or null")
    tel = doc.get("telemetry")
    if tel is not None:
        if not isinstance(tel, dict) or not isinstance(tel.get("source"), str):
            raise _fail(source, "telemetry: expected an object with a source")
        series = tel.get("series") or {}
        if not isinstance(series, dict):
            raise _fail(source, "telemetry.series: expected an object")
        n = len(series.get("t_s", []))
        for k, v in series.items():
            if not isinstance(v, list) or len(v) != n or not all(_is_num(x) for x in v):
                raise _fail(source, f"telemetry.series.{k}: expected {n} numbers")
    mem = doc.get("memory")
    if mem is not None and not isinstance(mem, dict):
        raise _fail(source, "memory: expected an object or null")
    notes = doc.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(x, str) for x in notes):
        raise _fail(source, "notes: expected a list of text")
    return BenchResult(
        file=source,
        schema_version=doc["schema_version"],
        workload=doc["workload"],
        created_utc=doc["created_utc"],
        device=env["device"],
        accelerator=env["accelerator"],
        environment=env,
        configuration=doc["configuration"],
        samples=samples,
        summary=doc["summary"],
        derived=tuple(derived),
        table=tuple(table),
        memory=mem,
        telemetry=tel,
        notes=tuple(notes),
    )


MAX_RESULT_BYTES = 16_000_000  # a result with its samples and telemetry: ~0.1-2 MB


def load_result(path: str | os.PathLike) -> BenchResult:
    """One result file (at most MAX_RESULT_BYTES of UTF-8 JSON, nested at most 64 deep)."""
    from ..core.errors import clip
    from ..core.files import check_depth, decode_utf8, read_bytes

    path = Path(path)
    try:
        data = read_bytes(path, path.name, max_bytes=MAX_RESULT_BYTES)
        doc = json.loads(decode_utf8(data, path.name, path.name))
        check_depth(doc, path.name)
    except AdvisorError as exc:
        raise _fail(path.name, exc.message) from None
    except RecursionError:
        raise _fail(path.name, "nested too deeply") from None
    except ValueError as exc:
        raise _fail(path.name, f"not valid JSON ({clip(str(exc), 120)})") from None
    return result_from_dict(doc, path.name)


def load_results(folder: str | os.PathLike, *, on_error=None) -> BenchResults:
    """Every result in `folder` (top level only; hidden temporary files skipped), oldest first.

    A file that does not validate raises, unless `on_error` is given: then it is called with
    the AdvisorError (which names the file) and the file is skipped, so that one corrupt result
    does not stop a recommendation (the CLI warns on stderr; the site build stays strict)."""
    folder = Path(folder)
    if not folder.is_dir():
        return BenchResults()
    runs = []
    for p in sorted(folder.glob("*.json")):
        if p.name.startswith("."):
            continue
        try:
            runs.append(load_result(p))
        except AdvisorError as exc:
            if on_error is None:
                raise
            on_error(exc)
    runs.sort(key=lambda r: (r.created_utc, r.file))
    return BenchResults(runs)


def measured_efficiencies(results, gpu_ids: dict | None = None) -> tuple:
    """`advisor.data.achievable.Measured` records (gpu_id, source, train_mfu,
    bandwidth_fraction) from GPU runs whose configuration names a catalog GPU."""
    from .achievable import Measured

    out = []
    for r in results:
        gpu = r.configuration.get("catalog_gpu")
        if r.device != "cuda" or not gpu:
            continue
        mfu = r.value("mfu") if r.workload == "train-step" else None
        bw = r.value("fraction_of_datasheet_bandwidth") if r.workload == "bandwidth" else None
        note = ""
        if bw is not None and bw > 1.0:  # an efficiency is at most the datasheet (_FRACTIONS)
            note = f" (measured {bw:.2f} of the datasheet bandwidth, used as 1.00)"
            bw = 1.0
        if mfu or bw:
            out.append(
                Measured(
                    gpu_id=gpu,
                    source=f"bench_results/{r.file}{note}",
                    train_mfu=mfu,
                    bandwidth_fraction=bw,
                )
            )
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# inline SVG charts
# ------------------------------------------------------------------------------------------------


def _fmt(v: float, lang: str) -> str:
    """A measured figure for the bench tables and charts (advisor.core.numfmt.measured)."""
    return numfmt.measured(v, lang)


def bar_svg(items, title: str, unit: str, lang: str = "en", width: int = 640) -> str:
    """Horizontal bars, one per (label, value); values printed at the bar ends."""
    items = [(str(lbl), float(v)) for lbl, v in items]
    if not items:
        return ""
    row, left, top = 26, 220, 30
    height = top + row * len(items) + 10
    vmax = max(v for _, v in items) or 1.0
    span = width - left - 90
    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height}" '
        f'width="100%" style="max-width:{width}px" class="bench-chart">',
        f"<title>{esc(title)}</title>",
        f'<text x="0" y="18" font-size="14" font-weight="bold" fill="currentColor">'
        f"{esc(title)} ({esc(unit)})</text>",
    ]
    for i, (lbl, v) in enumerate(items):
        y = top + i * row
        w = max(1.0, span * v / vmax)
        parts.append(
            f'<text x="{left - 6}" y="{y + 16}" font-size="12" text-anchor="end" '
            f'fill="currentColor">{esc(lbl)}</text>'
            f'<rect x="{left}" y="{y + 4}" width="{w:.1f}" height="16" fill="#3f6ec6" />'
            f'<text x="{left + w + 4:.1f}" y="{y + 16}" font-size="12" fill="currentColor">'
            f"{esc(_fmt(v, lang))}</text>"
        )
    parts.append("</svg>")
    return Html("".join(parts))


def paired_bar_svg(
    items, title: str, unit: str, labels: tuple[str, str], lang: str = "en", width: int = 640
) -> str:
    """Two bars per item (e.g. measured vs predicted): items are (label, a, b)."""
    items = [(str(lbl), float(a), float(b)) for lbl, a, b in items]
    if not items:
        return ""
    row, left, top = 44, 220, 48
    height = top + row * len(items) + 6
    vmax = max(max(a, b) for _, a, b in items) or 1.0
    span = width - left - 90
    esc = html.escape
    colours = ("#3f6ec6", "#e0892b")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height}" '
        f'width="100%" style="max-width:{width}px" class="bench-chart">',
        f"<title>{esc(title)}</title>",
        f'<text x="0" y="18" font-size="14" font-weight="bold" fill="currentColor">'
        f"{esc(title)} ({esc(unit)})</text>",
    ]
    for j, name in enumerate(labels):
        parts.append(
            f'<rect x="{left + j * 150}" y="26" width="12" height="12" fill="{colours[j]}" />'
            f'<text x="{left + j * 150 + 16}" y="37" font-size="12" fill="currentColor">'
            f"{esc(name)}</text>"
        )
    for i, (lbl, a, b) in enumerate(items):
        y = top + i * row
        parts.append(
            f'<text x="{left - 6}" y="{y + 22}" font-size="12" text-anchor="end" '
            f'fill="currentColor">{esc(lbl)}</text>'
        )
        for j, v in enumerate((a, b)):
            w = max(1.0, span * v / vmax)
            yy = y + 2 + j * 18
            parts.append(
                f'<rect x="{left}" y="{yy}" width="{w:.1f}" height="15" fill="{colours[j]}" />'
                f'<text x="{left + w + 4:.1f}" y="{yy + 12}" font-size="12" '
                f'fill="currentColor">{esc(_fmt(v, lang))}</text>'
            )
    parts.append("</svg>")
    return Html("".join(parts))


def line_svg(
    xs,
    ys,
    title: str,
    x_unit: str,
    y_unit: str,
    lang: str = "en",
    width: int = 640,
    height: int = 200,
) -> str:
    """One polyline of ys against xs, with min/max labels on the y axis."""
    xs, ys = [float(x) for x in xs], [float(y) for y in ys]
    if len(xs) < 2 or len(xs) != len(ys):
        return ""
    left, right, top, bottom = 60, 10, 28, 24
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if y1 == y0:
        y0, y1 = y0 - 1, y1 + 1
    if x1 == x0:
        x1 = x0 + 1
    pw, ph = width - left - right, height - top - bottom
    pts = " ".join(
        f"{left + pw * (x - x0) / (x1 - x0):.1f},{top + ph * (1 - (y - y0) / (y1 - y0)):.1f}"
        for x, y in zip(xs, ys, strict=True)
    )
    esc = html.escape
    return Html(
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height}" '
        f'width="100%" style="max-width:{width}px" class="bench-chart">'
        f"<title>{esc(title)}</title>"
        f'<text x="0" y="16" font-size="14" font-weight="bold" fill="currentColor">{esc(title)} '
        f"({esc(y_unit)})</text>"
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="currentColor" />'
        f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="currentColor" />'
        f'<text x="{left - 4}" y="{top + 10}" font-size="11" text-anchor="end" fill="currentColor">'
        f"{esc(_fmt(y1, lang))}</text>"
        f'<text x="{left - 4}" y="{top + ph}" font-size="11" text-anchor="end" fill="currentColor">'
        f"{esc(_fmt(y0, lang))}</text>"
        f'<text x="{left + pw}" y="{height - 6}" font-size="11" text-anchor="end" '
        f'fill="currentColor">{esc(_fmt(x1, lang))} {esc(x_unit)}</text>'
        f'<polyline points="{pts}" fill="none" stroke="#3f6ec6" stroke-width="2" />'
        "</svg>"
    )


class _Charts:
    """Namespace of the chart and number helpers for templates."""

    bar = staticmethod(bar_svg)
    paired = staticmethod(paired_bar_svg)
    line = staticmethod(line_svg)
    fmt = staticmethod(_fmt)


BenchResult.charts = _Charts()
