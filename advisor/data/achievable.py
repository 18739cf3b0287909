"""Achievable ceilings of an accelerator: what real kernels reach of its datasheet peaks, as
catalog data (`catalog/efficiency/<gpu-id>.yaml`, each figure with its source), the record type
the catalog attaches to each GPU (`GPU.achievable`); the time model (advisor.perf.efficiency,
advisor.perf.timing) reads it.

The maximum achievable matmul FLOP/s by dtype (MAMF: the best large-GEMM rate, Bekman,
ml-engineering, compute/accelerator/README.md "Maximum Achievable Matmul FLOPS comparison
table", measured with mamf-finder.py) and the achievable memory bandwidth (a device-to-device
copy). An accelerator with no measurement takes the median fraction of the measured
accelerators of its vendor (`vendor_defaults`), and says so in `source`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..core.errors import AdvisorError, check_positive

# Fallbacks when not one accelerator of a vendor has a measurement: the fractions the
# ml-engineering MAMF table shows for data-centre parts of the generation before (NVIDIA A100
# bf16 MAMF about 0.9 of peak); bandwidth: device copies reach 0.8-0.9 of the datasheet (same
# README, "Accelerator memory size and speed"). Replaced by the vendor median once one card of
# the vendor is measured.
FALLBACK_MATMUL_FRACTION = 0.75
FALLBACK_BANDWIDTH_FRACTION = 0.85

# Peak keys a card's own bf16 or fp16 figure stands for when it has no figure of its own for them
# (`Achievable.matmul` falls back to bf16, then fp16): a measured card does not take its peers'
# figures for these (`vendor_defaults`).
SAME_UNITS_AS_16_BIT = frozenset({"bf16", "fp16", "fp32", "tf32"})

# Peak keys whose measured fraction stays the card's own: it never enters a peer's median. A
# block-scaled FP4 GEMM's rate is a property of one part's tensor pipe, clock and power under
# that load (GB300/B300: CUTLASS's SM103 GEMM at 77 % tensor-pipe duty, clock throttled to
# 1.55 GHz; B200 at 1000 W: cuBLAS NVFP4 at 0.62 of its dense FP4 peak), not of a vendor; a
# card without its own FP4 figure keeps its 16-bit fraction for FP4 (`Achievable.matmul`), as
# before any card measured one (issue 35).
OWN_ONLY = frozenset({"fp4"})


def _median(values) -> float:
    """The median as `statistics.median` defines it (the middle value, or the mean of the two
    middle ones), here so that the browser's start does not import `statistics` (and through
    it `fractions`, `decimal`, `numbers`: 22 kB of the runtime's standard library; issue 12)."""
    xs = sorted(values)
    if not xs:
        raise ValueError("median of no values")
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


@dataclass(frozen=True)
class Achievable:
    """Achievable ceilings of one accelerator, as fractions of its dense datasheet peaks.

    `matmul_fraction` maps a peak key (bf16, fp16, fp8, fp32, tf32, int8) to MAMF / peak;
    keys it lacks take the bf16 fraction (the same tensor cores). `bandwidth_fraction`:
    achievable / datasheet memory bandwidth. `source` says where each came from."""

    gpu_id: str
    matmul_fraction: Mapping[str, float] = field(default_factory=dict, hash=False)
    bandwidth_fraction: float = FALLBACK_BANDWIDTH_FRACTION
    source: str = "assumed"
    sources: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    # a vendor median: the measured cards it is the median of (their spread is its band)
    peers: tuple[str, ...] = field(default=(), compare=False)
    # where each figure came from: "bandwidth" and each matmul_fraction key -> one of BASES
    # (`basis_of`); a key not in it is a stated assumption (the fallbacks)
    basis: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)

    def matmul(self, key: str) -> float:
        f = self.matmul_fraction
        return f.get(key) or f.get("bf16") or f.get("fp16") or FALLBACK_MATMUL_FRACTION

    def basis_of(self, key: str) -> str:
        """Where the figure `matmul(key)` (or, for key "bandwidth", `bandwidth_fraction`) comes
        from: "measured" (this card's own source or bench run), "median" (its vendor's measured
        cards) or "assumed" (FALLBACK_MATMUL_FRACTION / FALLBACK_BANDWIDTH_FRACTION: no
        published measurement). A measured card without a bandwidth figure keeps the assumed
        fallback, and says so here (issue 34): it is not its vendor's median."""
        if key == "bandwidth":
            return self.basis.get("bandwidth", "assumed")
        f = self.matmul_fraction
        for k in (key, "bf16", "fp16"):
            if f.get(k):
                return self.basis.get(k, "assumed")
        return "assumed"

    def to_dict(self) -> dict:
        return {
            "gpu_id": self.gpu_id,
            "matmul_fraction": dict(self.matmul_fraction),
            "bandwidth_fraction": self.bandwidth_fraction,
            "source": self.source,
            "sources": dict(self.sources),
        }


@dataclass(frozen=True)
class Measured:
    """What a bench run on one accelerator measured (bench_results/*.json, read by
    advisor.data.benchresults.measured_efficiencies): a training step's MFU and a device copy's
    bandwidth as a fraction of the datasheet; either may be None. The time model applies them
    through advisor.perf.efficiency.measured_for (advisor.perf.training.at_mfu, and the
    accelerator's achievable bandwidth)."""

    gpu_id: str
    source: str
    train_mfu: float | None = None
    bandwidth_fraction: float | None = None


def achievable_from_dict(doc, source_name: str, gpu) -> Achievable:
    """An `Achievable` from a `catalog/efficiency/*.yaml` document and its catalog GPU:
    `matmul_tflops` (dtype -> measured TFLOPS) and `bandwidth_gb_per_s` become fractions of the
    GPU's dense peaks; each figure needs `sources.<field>.url` (https) and `read`. A file with
    no figure records a search that found no published measurement: its `notes` say where it
    looked, and the loader (advisor.data.catalog) leaves the card its vendor's median or the
    assumption."""

    def fail(fld: str, msg: str):
        return AdvisorError("catalog.efficiency", f"{source_name}: {fld}: {msg}", field=fld)

    if not isinstance(doc, dict):
        raise fail("document", "expected a mapping")
    allowed = {"id", "matmul_tflops", "bandwidth_gb_per_s", "sources", "notes"}
    for key in doc:
        if key not in allowed:
            raise fail(str(key), f"unknown field; expected one of {sorted(allowed)}")
    if not doc.get("matmul_tflops") and doc.get("bandwidth_gb_per_s") is None:
        # a file with no figure records a search that found none: it must say where it looked
        notes = doc.get("notes")
        if not isinstance(notes, str) or not notes.strip():
            raise fail("notes", "a file without a figure must say where a measurement was sought")
    sources = doc.get("sources") or {}
    if not isinstance(sources, dict):
        raise fail("sources", "expected a mapping field -> {url, read}")
    fractions: dict[str, float] = {}
    urls: dict[str, str] = {}
    mm = doc.get("matmul_tflops") or {}
    if not isinstance(mm, dict):
        raise fail("matmul_tflops", "expected a mapping dtype -> TFLOPS")
    for dtype, value in mm.items():
        dtype = str(dtype)
        peak = (gpu.peak_tflops or {}).get(dtype)
        if not peak:
            raise fail(f"matmul_tflops.{dtype}", f"{gpu.id} has no dense {dtype} peak")
        v = check_positive(f"matmul_tflops.{dtype}", value)
        if v > peak * 1.02:
            raise fail(f"matmul_tflops.{dtype}", f"{v} TFLOPS is above the dense peak {peak}")
        fractions[dtype] = min(1.0, v / peak)
    bw_fraction = None
    if doc.get("bandwidth_gb_per_s") is not None:
        v = check_positive("bandwidth_gb_per_s", doc["bandwidth_gb_per_s"])
        stated = float(gpu.memory_bandwidth_gb_per_s)
        if v > stated * 1.02:
            raise fail("bandwidth_gb_per_s", f"{v} GB/s is above the datasheet {stated}")
        bw_fraction = min(1.0, v / stated)
    wanted = [f"matmul_tflops.{d}" for d in mm]
    if "bandwidth_gb_per_s" in doc:
        wanted.append("bandwidth_gb_per_s")
    for fld in wanted:
        src = sources.get(fld) if isinstance(sources, dict) else None
        if src is None and fld.startswith("matmul_tflops.") and isinstance(sources, dict):
            src = sources.get("matmul_tflops")
        url = src.get("url") if isinstance(src, dict) else None
        if not isinstance(url, str) or not url.startswith("https://") or not src.get("read"):
            raise fail(f"sources.{fld}", "needs url (https) and read (date)")
        urls[fld] = url
    basis = dict.fromkeys(fractions, "measured")
    if bw_fraction:
        basis["bandwidth"] = "measured"
    return Achievable(
        gpu_id=gpu.id,
        matmul_fraction=fractions,
        bandwidth_fraction=bw_fraction or FALLBACK_BANDWIDTH_FRACTION,
        source=f"catalog/{source_name}",
        sources=urls,
        basis=basis,
    )


def vendor_defaults(gpus, measured: Mapping[str, Achievable]) -> dict[str, Achievable]:
    """An `Achievable` for every GPU: its own where measured, else the median fractions of the
    measured GPUs of its vendor and tier (by dtype; the vendor's where none of its tier is
    measured), else the fallbacks. `source` says which.

    A card that measured only an FP4 GEMM (GB300's and B300's files: a Blackwell Ultra FP4
    rate, issue 35) does not enter its peers' medians: its FP4 fraction is not the Hopper or
    Blackwell cards' FP4 (their FP4 takes their 16-bit fraction, `Achievable.matmul`), and it says
    nothing about 16-bit rates or memory. It takes the vendor's medians for the dtypes it lacks
    and its peers' bandwidth. A measured card with its own bf16 or fp16 figure takes no peer
    figure for bf16, fp16, fp32 or tf32 (`SAME_UNITS_AS_16_BIT`): its own covers them.

    A vendor median's band is the spread of its `peers`' fractions (e.g. Google's TPUs: v5e
    0.92 and 7x 0.83 of the bf16 peak, median 0.88, for the unmeasured v5p and v6e)."""
    by_vendor: dict[str, list[Achievable]] = {}
    by_tier: dict[tuple[str, str], list[Achievable]] = {}
    gpu_of = {g.id: g for g in gpus}
    fp4_only = {
        gid
        for gid, a in measured.items()
        if a.matmul_fraction
        and set(a.matmul_fraction) <= {"fp4"}
        and "bandwidth_gb_per_s" not in a.sources
    }
    for gid, a in measured.items():
        if gid in fp4_only:
            continue
        g = gpu_of.get(gid)
        by_vendor.setdefault(getattr(g, "vendor", "?"), []).append(a)
        by_tier.setdefault((getattr(g, "vendor", "?"), getattr(g, "tier", "?")), []).append(a)
    out: dict[str, Achievable] = {}
    for g in gpus:
        # peers of the same vendor and tier where one is measured (a desktop APU is not an
        # Instinct card: issue 34), else the vendor's measured cards
        peers = by_tier.get((g.vendor, g.tier)) or by_vendor.get(g.vendor, [])
        if g.id in measured:
            own = measured[g.id]
            # what it lacks (a desktop APU's matmul fractions): the vendor's measured cards
            others = [a for a in by_vendor.get(g.vendor, []) if a.gpu_id != g.id] or peers
            keys = {k for a in others for k in a.matmul_fraction} - set(own.matmul_fraction)
            keys -= OWN_ONLY
            if own.matmul_fraction.keys() & {"bf16", "fp16"}:
                # its own 16-bit figure covers the 16/32-bit keys (`Achievable.matmul`): a peer's
                # would contradict it (an M3 Ultra measured at fp16 is not an M4 Max at bf16)
                keys -= SAME_UNITS_AS_16_BIT
            fill = {k: _median(a.matmul(k) for a in others) for k in sorted(keys)}
            basis = {**dict.fromkeys(fill, "median"), **own.basis}
            if g.id in fp4_only and others:
                bw, basis["bandwidth"] = _bandwidth_median(others)
                own = replace(own, bandwidth_fraction=bw)
            out[g.id] = replace(own, matmul_fraction={**fill, **own.matmul_fraction}, basis=basis)
            continue
        if not peers:
            out[g.id] = Achievable(g.id, {}, FALLBACK_BANDWIDTH_FRACTION, "assumed")
            continue
        keys = {k for a in peers for k in a.matmul_fraction} - OWN_ONLY
        mm = {k: _median(a.matmul(k) for a in peers) for k in sorted(keys)}
        bw, bw_basis = _bandwidth_median(peers)
        ids = ", ".join(sorted(a.gpu_id for a in peers))
        out[g.id] = Achievable(
            g.id,
            mm,
            bw,
            f"median of measured {g.vendor} cards ({ids})",
            peers=tuple(sorted(a.gpu_id for a in peers)),
            basis={**dict.fromkeys(mm, "median"), "bandwidth": bw_basis},
        )
    return out


def _bandwidth_median(peers) -> tuple[float, str]:
    """(fraction, basis) of a bandwidth median over `peers`: the median of those that measured
    their bandwidth ("median"); where none did, the fallback ("assumed"). A peer's own fallback
    is an assumption, not a measurement, and does not enter the median (NVIDIA's median was 0.843
    with B200's assumed 0.85 in it, 0.835 over the A100, H100 and H200 measurements)."""
    got = [a.bandwidth_fraction for a in peers if a.basis_of("bandwidth") == "measured"]
    return (_median(got), "median") if got else (FALLBACK_BANDWIDTH_FRACTION, "assumed")
