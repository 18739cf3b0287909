"""Accelerators: the frozen `GPU` type and the schema of `catalog/gpus/*.yaml`.

Conventions (units in the names):

- `memory_gib` is the capacity as the vendor states it ("80 GB"). DRAM is sized in binary units
  and vendors follow JEDEC's usage of the prefix for memory capacity (JEDEC JESD100B.01,
  https://www.jedec.org/standards-documents/dictionary/terms/gigabyte-gb: "giga (G) as a prefix
  to units of semiconductor storage capacity = 2^30"), so `memory_bytes` defaults to
  `memory_gib * 2**30`. nvidia-smi agrees to within 1 %: an H100 80 GB reports 81559 MiB, an
  HGX B200 "180 GB" reports 179 GiB. A document may give `memory_bytes` (e.g. a measured
  `torch.cuda.mem_get_info` total) to override.
- Unified memory (Apple silicon, Strix Halo, GB10): `unified_memory.default_fraction` is the
  share the GPU may use by default; `memory_bytes` is then that share of `memory_gib`.
- `memory_bandwidth_gb_per_s` is GB/s (10^9 bytes/s), as datasheets print it.
- `peak_tflops` holds DENSE tensor (matrix) throughput per floating-point precision; `fp32` is
  the non-tensor (shader / vector) rate. `peak_tops` holds the integer rates (`int8`) in TOPS
  (10^12 integer operations per second). NVIDIA datasheets print 2:4-structured-sparse
  figures; the schema rejects an entry marked `sparse: true` and checks any stated sparse figure
  (`datasheet_sparse_tflops`) is twice the stored dense one. GeForce cards run FP16/BF16 tensor
  ops with FP32 accumulate (what PyTorch's cuBLAS calls use) at half the FP16-accumulate rate
  (NVIDIA Ada whitepaper, Appendix A); the catalog stores the FP32-accumulate rate.
- `interconnect_gb_per_s` is the GPU's bidirectional aggregate as the vendor states it (NVLink 4:
  900 GB/s; PCIe 4.0 x16: 64 GB/s).

Every figure carries a source `{url, read, checked}`: a document-level `source` is the default and
`sources: {field: {...}}` overrides it per field (`peak_tflops.bf16` for one precision).
`checked` is `stored-copy` (a stored public copy of the figure was read), `recalled` (from the
named vendor document, not re-read for this catalog) or `derived` (computed from other sourced
figures, e.g. halving a sparse figure).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field

from ..core import limits
from ..core.errors import (
    AdvisorError,
    check_choice,
    check_http_url,
    check_int,
    check_positive,
    shown,
    unknown_name,
)
from ..core.ids import check_id
from ..core.units import GB, GIB

PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")  # peak_tflops keys
INT_PRECISIONS = ("int8",)  # peak_tops keys
TIERS = ("datacenter", "workstation", "consumer")
VENDORS = ("nvidia", "amd", "intel", "google", "aws", "apple")
MEMORY_TYPES = (
    "HBM",  # the vendor states HBM without its generation (Google's TPU v6e page)
    "HBM2",
    "HBM2e",
    "HBM3",
    "HBM3e",
    "GDDR6",
    "GDDR6X",
    "GDDR7",
    "LPDDR5",
    "LPDDR5X",
)
INTERCONNECTS = (
    "nvlink2",
    "nvlink3",
    "nvlink4",
    "nvlink5",
    "nvlink-bridge",
    "infinity-fabric",
    "roce",
    "pcie3",
    "pcie4",
    "pcie5",
    "ici",  # Google TPU inter-chip interconnect
    "neuronlink",  # AWS Trainium
    "thunderbolt5",  # Apple Mac Studio: the box-to-box link
    "usb4",
)
FORM_FACTORS = (
    "sxm2",
    "sxm4",
    "sxm5",
    "sxm6",
    "oam",
    "pcie-single-slot",
    "pcie-dual-slot",
    "pcie-triple-slot",
    "superchip",  # Grace + Blackwell board in a rack's compute tray (GB200, GB300)
    "vendor-board",  # a cloud vendor's own board, not sold (TPU, Trainium)
    "soc",  # CPU, GPU and memory in one package in a desktop box (Apple, Strix Halo, GB10)
)
SOFTWARE = ("CUDA", "ROCm", "SynapseAI", "JAX/XLA", "Neuron", "Metal/MLX")
# Scale-up fabrics (`scale_up.fabric`): the domain in which every accelerator reaches every other
# at the stated per-accelerator bandwidth without the scale-out network.
SCALE_UP_FABRICS = (
    "nvlink5",
    "nvlink4",
    "infinity-fabric",
    "ici",
    "neuronlink",
    "nvlink-c2c",
    "none",
)
# FP4 block formats a card's FP4 tensor cores take natively (advisor.arch.quant: nvfp4, mxfp4).
FP4_FORMATS = ("nvfp4", "mxfp4")
PRICE_KINDS = ("launch", "street")
# Why a card has no price (`price_status`, only with `price_usd: null`; issue 34): no list or
# street price is published for it; it is sold only inside a system priced whole
# (catalog/systems: an NVL72 rack, a desktop box); or it is rented only (a cloud's own chip).
PRICE_STATUSES = ("not_published", "system", "rented_only")
CHECKED = ("stored-copy", "recalled", "derived", "measured")

# Figures that need a source (price_usd only when it is not null).
FIGURE_FIELDS = (
    "memory_gib",
    "memory_type",
    "memory_bandwidth_gb_per_s",
    "peak_tflops",
    "peak_tops",
    "tdp_w",
    "interconnect",
    "interconnect_gb_per_s",
    "pcie_gen",
    "launch_date",
    "price_usd",
    "scale_up",
    "scale_out_nic",
    "unified_memory",
)
REQUIRED = (
    "id",
    "name",
    "vendor",
    "tier",
    "memory_gib",
    "memory_type",
    "memory_bandwidth_gb_per_s",
    "peak_tflops",
    "tdp_w",
    "interconnect",
    "interconnect_gb_per_s",
    "pcie_gen",
    "form_factor",
    "launch_date",
    "software",
)
# (higher, lower): where both exist the first must be >= the second (lower precision is faster).
_ORDER = (
    ("fp4", "fp8"),
    ("fp8", "bf16"),
    ("fp8", "fp16"),
    ("int8", "bf16"),
    ("bf16", "tf32"),
    ("fp16", "tf32"),
    ("bf16", "fp32"),
    ("tf32", "fp32"),
)
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MAX_TFLOPS = 100_000.0  # 100 PFLOPS dense per chip: far above any product, catches unit slips
# Memory bandwidth in GB/s: the slowest card in scope (RTX 3060 12GB) has 360, the fastest
# (B200) 8000; below 50 is a TB/s figure typed into the GB/s field (3.35 for an H100 SXM).
BANDWIDTH_GB_PER_S = (50.0, 100_000.0)
OPTIONAL = (
    "memory_bytes",
    "price_usd",
    "price_date",
    "price_kind",
    "price_status",
    "architecture",
    "source",
    "sources",
    "notes",
    "datasheet_sparse_tflops",
    "peak_tops",
    "datasheet_sparse_tops",
    "interconnect_direction",
    "scale_up",
    "scale_out_nic",
    "unified_memory",
    "fp4_formats",
    "tdp_note",
)


@dataclass(frozen=True)
class Source:
    url: str
    read: str  # ISO date
    checked: str  # one of CHECKED
    note: str | None = None

    def to_dict(self) -> dict:
        d = {"url": self.url, "read": self.read, "checked": self.checked}
        if self.note:
            d["note"] = self.note
        return d


def _err(src: str, fld: str, key: str, msg: str, **params) -> AdvisorError:
    return AdvisorError(key, f"{src}: {fld}: {msg}", field=f"{src}:{fld}", file=src, **params)


def _wrap(src: str, fn, *args, **kw):
    """Run a `check_*` helper and prefix its error with the file name."""
    try:
        return fn(*args, **kw)
    except AdvisorError as exc:
        raise AdvisorError(
            exc.key, f"{src}: {exc.message}", field=f"{src}:{exc.field}", file=src
        ) from None


def check_iso_date(src: str, fld: str, value, *, not_after: str | None = None) -> str:
    """An ISO `YYYY-MM-DD` date string that is a real calendar day (no 2022-02-31; yamlsafe keeps dates as strings), from 1990 on
    and, given `not_after` (e.g. the date the source was read), not later than that."""
    if hasattr(value, "isoformat"):
        value = value.isoformat()
    if not isinstance(value, str) or not _ISO.match(value):
        raise _err(src, fld, "field.date", f"expected an ISO date YYYY-MM-DD, got {shown(value)}")
    try:
        day = datetime.date.fromisoformat(value)
    except ValueError:
        raise _err(src, fld, "field.date", f"not a calendar date: {value!r}") from None
    if not 1990 <= day.year <= 2100:
        raise _err(src, fld, "field.date", f"not a plausible date: {value!r}")
    if not_after is not None and value > not_after:
        raise _err(
            src,
            fld,
            "field.date_future",
            f"{value} is after the date its source was read ({not_after})",
            read=not_after,
        )
    return value


def check_optional_text(src: str, doc: dict, keys, prefix: str = "") -> None:
    """Free-text fields (notes) are text when present: a number there would reach the pages."""
    for key in keys:
        v = doc.get(key)
        if v is not None and not isinstance(v, str):
            raise _err(src, f"{prefix}{key}", "field.not_text", f"expected text, got {shown(v)}")


def check_keys(src: str, doc: dict, allowed, prefix: str = "") -> None:
    """Refuse keys the schema does not know (a typo such as `tdp_watts` would otherwise be
    ignored and its figure lost), naming close matches."""
    allowed = tuple(allowed)
    for key in doc:
        if key not in allowed:
            exc = unknown_name("key", str(key), allowed)
            raise AdvisorError(
                "catalog.unknown_key",
                f"{src}: {prefix}{shown(str(key))}: not a field of this schema"
                + (
                    f"; did you mean {', '.join(exc.params['suggestions'])}?"
                    if exc.params["suggestions"]
                    else ""
                ),
                field=f"{src}:{prefix}{str(key)[:80]}",
                file=src,
                name=str(key)[:80],
                suggestions=exc.params["suggestions"],
            )


def source_from_dict(src: str, fld: str, doc) -> Source:
    """`{url, read, checked[, note]}`; errors name the file and the field."""
    if not isinstance(doc, dict):
        raise _err(src, fld, "catalog.source", "expected a mapping {url, read, checked}")
    check_keys(src, doc, ("url", "read", "checked", "note"), prefix=f"{fld}.")
    url = doc.get("url")
    try:
        check_http_url(f"{fld}.url", url)
    except AdvisorError as exc:
        raise _err(src, f"{fld}.url", "catalog.source", exc.message.split(": ", 1)[1]) from None
    read = check_iso_date(src, f"{fld}.read", doc.get("read"))
    checked = doc.get("checked")
    if checked not in CHECKED:
        raise _err(
            src,
            f"{fld}.checked",
            "name.unknown",
            f"must be one of {', '.join(CHECKED)}, got {checked!r}",
        )
    note = doc.get("note")
    if note is not None and not isinstance(note, str):
        raise _err(src, f"{fld}.note", "field.not_text", "expected text")
    return Source(url, read, checked, note)


@dataclass(frozen=True)
class ScaleUp:
    """The scale-up domain: how many accelerators share one fabric (NVLink 5 at 8 in an HGX
    board or 72 in an NVL72 rack, Infinity Fabric at 8, a TPU slice over ICI, NeuronLink) and the
    bandwidth per accelerator, bidirectional as vendors state it."""

    domain_size: int
    gb_per_s: float
    fabric: str
    note: str | None = None

    def to_dict(self) -> dict:
        return {
            "domain_size": self.domain_size,
            "gb_per_s": self.gb_per_s,
            "fabric": self.fabric,
            "note": self.note,
        }


@dataclass(frozen=True)
class UnifiedMemory:
    """Memory that CPU and GPU share (Apple silicon, AMD Strix Halo, NVIDIA GB10):
    `default_fraction` of `memory_gib` is what the GPU may use by default (macOS's Metal working
    set, the BIOS's GPU carve-out), with its source."""

    default_fraction: float
    note: str | None = None

    def to_dict(self) -> dict:
        return {"default_fraction": self.default_fraction, "note": self.note}


@dataclass(frozen=True)
class GPU:
    """One accelerator from `catalog/gpus/`. Throughput is dense; see the module docstring."""

    id: str
    name: str
    vendor: str
    tier: str
    memory_gib: float
    memory_bytes: int
    memory_type: str
    memory_bandwidth_gb_per_s: float
    peak_tflops: dict = field(hash=False)  # floating-point precision -> dense TFLOPS
    tdp_w: float | None  # None only for cloud-only chips whose vendor publishes no power
    interconnect: str
    interconnect_gb_per_s: float
    pcie_gen: int | None  # None: no PCIe host link stated (SoC, vendor board)
    form_factor: str
    launch_date: str
    price_usd: float | None
    price_date: str | None
    price_kind: str | None
    software: str
    architecture: str | None = None
    sources: dict = field(default_factory=dict, hash=False, compare=False)  # field -> Source
    doc: dict = field(default_factory=dict, hash=False, compare=False)
    peak_tops: dict = field(default_factory=dict, hash=False)  # integer precision -> dense TOPS
    # advisor.data.achievable.Achievable, attached by advisor.data.catalog (catalog/efficiency/)
    achievable: object = field(default=None, hash=False, compare=False, repr=False)
    scale_up: ScaleUp | None = None
    scale_out_nic: str | None = None
    unified_memory: UnifiedMemory | None = None
    fp4_formats: tuple = ()  # FP4 block formats the tensor cores take natively
    price_status: str | None = None  # why price_usd is None (PRICE_STATUSES); None: not said

    @property
    def usable_memory_bytes(self) -> int:
        """What a model may use by default: `memory_bytes`, which on a unified-memory box is
        already the `unified_memory.default_fraction` of the physical `memory_gib` (so every
        fit check, KV-cache budget and picker row sees what the GPU may wire by default)."""
        return self.memory_bytes

    def runs_fp4(self, fmt: str) -> bool:
        """True when FP4 weights in `fmt` (nvfp4, mxfp4) run on FP4 tensor cores at the FP4
        peak; otherwise an engine dequantises them to 8 or 16 bits before the matmul."""
        return "fp4" in self.peak_tflops and fmt in self.fp4_formats

    @property
    def memory_bandwidth_bytes_per_s(self) -> float:
        return self.memory_bandwidth_gb_per_s * GB

    def peak_flops(self, precision: str) -> float:
        """Dense peak in FLOP/s for `precision`; unknown_name if not listed."""
        if precision not in self.peak_tflops:
            raise unknown_name("precision", precision, list(self.peak_tflops))
        return self.peak_tflops[precision] * 1e12

    def peak_ops(self, precision: str) -> float:
        """Dense integer peak in OP/s (`peak_tops`, e.g. int8); unknown_name if not listed."""
        if precision not in self.peak_tops:
            raise unknown_name("precision", precision, list(self.peak_tops))
        return self.peak_tops[precision] * 1e12

    def ridge_point(self, precision: str = "bf16") -> float:
        """Roofline ridge point in FLOP/byte: dense peak FLOP/s ÷ memory bandwidth bytes/s.

        Williams, Waterman, Patterson, "Roofline: an insightful visual performance model for
        multicore architectures", CACM 52(4), 2009, https://doi.org/10.1145/1498765.1498785:
        kernels with arithmetic intensity below this are memory-bandwidth bound.
        """
        return self.peak_flops(precision) / self.memory_bandwidth_bytes_per_s

    def source(self, fld: str) -> Source:
        """The source of a figure (`peak_tflops.bf16` falls back to `peak_tflops`)."""
        if fld in self.sources:
            return self.sources[fld]
        base = fld.split(".")[0]
        if base in self.sources:
            return self.sources[base]
        raise unknown_name("field", fld, list(self.sources))

    def to_dict(self) -> dict:
        """Plain JSON: the validated figures, derived sizes and every source."""
        return {
            "id": self.id,
            "name": self.name,
            "vendor": self.vendor,
            "tier": self.tier,
            "architecture": self.architecture,
            "memory_gib": self.memory_gib,
            "memory_bytes": self.memory_bytes,
            "memory_type": self.memory_type,
            "memory_bandwidth_gb_per_s": self.memory_bandwidth_gb_per_s,
            "peak_tflops": dict(self.peak_tflops),
            "peak_tops": dict(self.peak_tops),
            "ridge_point_flop_per_byte": {p: self.ridge_point(p) for p in self.peak_tflops},
            "tdp_w": self.tdp_w,
            "interconnect": self.interconnect,
            "interconnect_gb_per_s": self.interconnect_gb_per_s,
            "pcie_gen": self.pcie_gen,
            "form_factor": self.form_factor,
            "launch_date": self.launch_date,
            "price_usd": self.price_usd,
            "price_date": self.price_date,
            "price_kind": self.price_kind,
            "price_status": self.price_status,
            "software": self.software,
            "scale_up": self.scale_up.to_dict() if self.scale_up else None,
            "scale_out_nic": self.scale_out_nic,
            "unified_memory": self.unified_memory.to_dict() if self.unified_memory else None,
            "usable_memory_bytes": self.usable_memory_bytes,
            "fp4_formats": list(self.fp4_formats),
            "notes": self.doc.get("notes"),
            "sources": {k: s.to_dict() for k, s in self.sources.items()},
        }


def _text(src: str, doc: dict, key: str) -> str:
    v = doc.get(key)
    if not isinstance(v, str) or not v.strip():
        raise _err(src, key, "field.not_text", f"expected non-empty text, got {v!r}")
    return v


def _choice(src: str, doc: dict, key: str, choices) -> str:
    return _wrap(src, check_choice, key, doc.get(key), choices)


def _peaks(src: str, doc: dict) -> tuple[dict[str, float], dict[str, float]]:
    """(peak_tflops, peak_tops): floating-point TFLOPS (required) and integer TOPS."""
    tops_raw = doc.get("peak_tops", {})
    if not isinstance(tops_raw, dict):
        raise _err(src, "peak_tops", "catalog.not_mapping", "expected a mapping precision: TOPS")
    tops: dict[str, float] = {}
    for prec, value in tops_raw.items():
        fld = f"peak_tops.{prec}"
        if prec not in INT_PRECISIONS:
            raise _err(
                src,
                fld,
                "name.unknown",
                f"unknown precision {prec!r}; allowed: {', '.join(INT_PRECISIONS)}",
                name=prec,
            )
        tops[prec] = _wrap(src, check_positive, fld, value, maximum=_MAX_TFLOPS)
    raw = doc.get("peak_tflops")
    if not isinstance(raw, dict) or not raw:
        raise _err(
            src, "peak_tflops", "catalog.not_mapping", "expected a mapping precision: TFLOPS"
        )
    out: dict[str, float] = {}
    for prec, value in raw.items():
        fld = f"peak_tflops.{prec}"
        if prec in INT_PRECISIONS:
            raise _err(
                src,
                fld,
                "gpu.int_in_tflops",
                f"{prec} throughput is in TOPS, not TFLOPS: give it under peak_tops",
                name=prec,
            )
        if prec not in PRECISIONS:
            raise _err(
                src,
                fld,
                "name.unknown",
                f"unknown precision {prec!r}; allowed: {', '.join(PRECISIONS)}",
                name=prec,
            )
        if isinstance(value, dict):
            if value.get("sparse") is True:
                raise _err(
                    src,
                    fld,
                    "gpu.sparse_as_dense",
                    "a 2:4-sparse figure cannot be stored as dense throughput (halve it)",
                )
            if value.get("accumulate") not in (None, "fp32") and prec in ("bf16", "fp16", "fp8"):
                raise _err(
                    src,
                    fld,
                    "gpu.accumulate",
                    "store the FP32-accumulate rate (what PyTorch matmuls use), "
                    f"got accumulate {value.get('accumulate')!r}",
                )
            value = value.get("value")
        out[prec] = _wrap(src, check_positive, fld, value, maximum=_MAX_TFLOPS)
    both = {**out, **tops}
    name = {**{p: f"peak_tflops.{p}" for p in out}, **{p: f"peak_tops.{p}" for p in tops}}
    for hi, lo in _ORDER:
        if hi in both and lo in both and both[hi] < both[lo]:
            raise _err(
                src,
                name[hi],
                "gpu.precision_order",
                f"{both[hi]} is below {name[lo]} {both[lo]}: a lower precision cannot be slower",
            )
    # A sparse figure typed where the dense one goes, with no `sparse:` mark and no
    # datasheet_sparse_* entry, shows as twice the step to the next wider format: halving the
    # bits at most doubles the dense rate (fp8 = 2 x bf16 on Hopper, Blackwell, CDNA 3/4), FP16
    # and BF16 run at one rate, and FP4 reaches at most 3 x FP8 (Blackwell Ultra) or 4 x on
    # GeForce cards, whose FP8 with FP32 accumulate runs at half rate (issue 34).
    fp4_step = 4.05 if doc.get("tier") == "consumer" else 3.05
    for hi, lo, most in (
        ("fp8", "bf16", 2.05),
        ("fp8", "fp16", 2.05),
        ("bf16", "fp16", 1.05),
        ("fp16", "bf16", 1.05),
        ("fp4", "fp8", fp4_step),
    ):
        if hi in out and lo in out and out[hi] > most * out[lo]:
            raise _err(
                src,
                f"peak_tflops.{hi}",
                "gpu.sparse_ratio",
                f"{out[hi]:g} is {out[hi] / out[lo]:.1f} x peak_tflops.{lo} {out[lo]:g}, more than "
                f"the {most:g} x one format step allows: a 2:4-sparse figure? store the dense peak",
                ratio=round(out[hi] / out[lo], 2),
                most=most,
            )
    for key, dense, dense_key in (
        ("datasheet_sparse_tflops", out, "peak_tflops"),
        ("datasheet_sparse_tops", tops, "peak_tops"),
    ):
        sparse = doc.get(key)
        if sparse is None:
            continue
        if not isinstance(sparse, dict):
            raise _err(src, key, "catalog.not_mapping", "expected a mapping")
        for prec, s in sparse.items():
            fld = f"{key}.{prec}"
            s = _wrap(src, check_positive, fld, s, maximum=2 * _MAX_TFLOPS)
            if prec not in dense:
                raise _err(
                    src, fld, "gpu.sparse_without_dense", f"no dense {dense_key} entry for it"
                )
            if abs(2 * dense[prec] - s) > 0.02 * s:
                raise _err(
                    src,
                    f"{dense_key}.{prec}",
                    "gpu.sparse_as_dense",
                    f"dense {dense[prec]} should be half the datasheet's 2:4-sparse {s} "
                    f"(expected about {s / 2:g})",
                )
    return out, tops


def _bandwidth(src: str, value) -> float:
    v = _wrap(
        src, check_positive, "memory_bandwidth_gb_per_s", value, maximum=BANDWIDTH_GB_PER_S[1]
    )
    if v < BANDWIDTH_GB_PER_S[0]:
        raise _err(
            src,
            "memory_bandwidth_gb_per_s",
            "gpu.bandwidth_unit",
            f"{v:g} GB/s is below {BANDWIDTH_GB_PER_S[0]:g}: is it TB/s? (GB/s = TB/s x 1000)",
            value=v,
            minimum=BANDWIDTH_GB_PER_S[0],
        )
    return v


def _scale_up(src: str, doc: dict) -> ScaleUp | None:
    raw = doc.get("scale_up")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _err(
            src, "scale_up", "catalog.not_mapping", "expected {domain_size, gb_per_s, fabric}"
        )
    check_keys(src, raw, ("domain_size", "gb_per_s", "fabric", "note"), prefix="scale_up.")
    size = raw.get("domain_size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise _err(
            src,
            "scale_up.domain_size",
            "gpu.domain_size",
            f"a scale-up domain holds at least 1 accelerator, got {shown(size)}",
        )
    _wrap(src, check_int, "scale_up.domain_size", size, minimum=1, maximum=100_000)
    bw = float(_wrap(src, check_positive, "scale_up.gb_per_s", raw.get("gb_per_s"), maximum=20_000))
    fabric = _wrap(src, check_choice, "scale_up.fabric", raw.get("fabric"), SCALE_UP_FABRICS)
    note = raw.get("note")
    if note is not None and not isinstance(note, str):
        raise _err(src, "scale_up.note", "field.not_text", "expected text")
    return ScaleUp(size, bw, fabric, note)


def _unified(src: str, doc: dict) -> UnifiedMemory | None:
    raw = doc.get("unified_memory")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _err(src, "unified_memory", "catalog.not_mapping", "expected {default_fraction}")
    check_keys(src, raw, ("default_fraction", "note"), prefix="unified_memory.")
    frac = _wrap(
        src, check_positive, "unified_memory.default_fraction", raw.get("default_fraction")
    )
    if frac > 1:
        raise _err(
            src,
            "unified_memory.default_fraction",
            "gpu.unified_fraction",
            f"a fraction of the memory cannot be above 1, got {frac:g}",
            value=frac,
        )
    note = raw.get("note")
    if note is not None and not isinstance(note, str):
        raise _err(src, "unified_memory.note", "field.not_text", "expected text")
    return UnifiedMemory(float(frac), note)


def _fp4_formats(src: str, doc: dict, peaks: dict) -> tuple:
    raw = doc.get("fp4_formats")
    if raw is None:
        # Unstated: an FP4 peak on NVIDIA (Blackwell) takes NVFP4 and MXFP4, on AMD (CDNA 4) MXFP4
        if "fp4" not in peaks:
            return ()
        return {"nvidia": ("nvfp4", "mxfp4"), "amd": ("mxfp4",)}.get(doc.get("vendor"), ())
    if not isinstance(raw, list) or not raw:
        raise _err(src, "fp4_formats", "catalog.not_list", "expected a list: nvfp4, mxfp4")
    for i, f in enumerate(raw):
        _wrap(src, check_choice, f"fp4_formats[{i}]", f, FP4_FORMATS)
    if "fp4" not in peaks:
        raise _err(
            src, "fp4_formats", "catalog.missing", "FP4 formats listed without a peak_tflops.fp4"
        )
    return tuple(raw)


def gpu_from_dict(doc, source_name: str) -> GPU:
    """Validate one `catalog/gpus/*.yaml` document into a `GPU`.

    Errors are `AdvisorError`s whose message starts with the file and the field, e.g.
    ``gpus/h100-sxm.yaml: memory_bandwidth_gb_per_s: must be greater than 0, got -1``.
    """
    src = source_name
    if not isinstance(doc, dict):
        raise AdvisorError("catalog.not_mapping", f"{src}: expected a mapping", field=src, file=src)
    check_keys(src, doc, (*REQUIRED, *OPTIONAL))  # first: a typo names its close match
    check_optional_text(src, doc, ("notes",))
    for key in REQUIRED:
        if key not in doc:
            raise _err(src, key, "catalog.missing", "missing required field")
    gid = check_id(src, "id", _text(src, doc, "id"))
    vendor = _choice(src, doc, "vendor", VENDORS)
    tier = _choice(src, doc, "tier", TIERS)
    memory_gib = float(_wrap(src, check_positive, "memory_gib", doc["memory_gib"], maximum=4096))
    memory_bytes = doc.get("memory_bytes")
    if memory_bytes is None:
        memory_bytes = round(memory_gib * GIB)
    else:
        memory_bytes = _wrap(src, check_int, "memory_bytes", memory_bytes, minimum=1)
        if not 0.9 * memory_gib * GB <= memory_bytes <= 1.01 * memory_gib * GIB:
            raise _err(
                src,
                "memory_bytes",
                "gpu.memory_mismatch",
                f"{memory_bytes} is not within 90 %-101 % of memory_gib {memory_gib}",
            )
    peaks, tops = _peaks(src, doc)
    unified = _unified(src, doc)
    if unified is not None and doc.get("memory_bytes") is None:
        # shared with the CPU: the GPU may use the default fraction (macOS's Metal working set,
        # a BIOS carve-out), which is what every memory check must see
        memory_bytes = int(memory_gib * GIB * unified.default_fraction)
    price = doc.get("price_usd")
    price_date = doc.get("price_date")
    price_kind = doc.get("price_kind")
    if price is None:
        if price_date is not None or price_kind is not None:
            raise _err(
                src, "price_usd", "catalog.missing", "price_date/price_kind given without a price"
            )
    else:
        price = float(
            _wrap(
                src, limits.check_range, "price_usd", price, limits.USD_PER_CARD, exclusive_low=True
            )
        )
        price_date = check_iso_date(src, "price_date", price_date)
        price_kind = _choice(src, doc, "price_kind", PRICE_KINDS)
    price_status = doc.get("price_status")
    if price_status is not None:
        if price is not None:
            raise _err(
                src,
                "price_status",
                "catalog.price_status",
                "says why there is no price, but price_usd is given",
            )
        price_status = _choice(src, doc, "price_status", PRICE_STATUSES)
    pcie_gen = doc["pcie_gen"]
    if pcie_gen is not None:
        pcie_gen = _wrap(src, check_int, "pcie_gen", pcie_gen, minimum=3, maximum=6)
    tdp = doc["tdp_w"]
    if tdp is None:
        # Only a chip nobody can buy (a cloud's own TPU or Trainium) may lack a power figure,
        # and the file must say why.
        if price is not None or not isinstance(doc.get("tdp_note"), str):
            raise _err(
                src,
                "tdp_w",
                "catalog.missing",
                "tdp_w may be null only for a chip without a price, with tdp_note saying why",
            )
    else:
        tdp = float(_wrap(src, check_positive, "tdp_w", tdp, maximum=5000))
    check_optional_text(src, doc, ("scale_out_nic", "tdp_note"))
    scale_up = _scale_up(src, doc)
    fp4_formats = _fp4_formats(src, doc, peaks)
    arch = doc.get("architecture")
    if arch is not None and not isinstance(arch, str):
        raise _err(src, "architecture", "field.not_text", "expected text")

    # Sources: document default + per-field overrides; every figure must resolve to one.
    default = doc.get("source")
    default_src = source_from_dict(src, "source", default) if default is not None else None
    overrides = doc.get("sources") or {}
    if not isinstance(overrides, dict):
        raise _err(src, "sources", "catalog.not_mapping", "expected a mapping field: {url, read}")
    sources: dict[str, Source] = {}
    for key, value in overrides.items():
        base = key.split(".")[0]
        if base not in FIGURE_FIELDS:
            raise _err(src, f"sources.{key}", "name.unknown", f"{key!r} is not a figure field")
        if base == "peak_tflops" and "." in key and key.split(".", 1)[1] not in peaks:
            raise _err(src, f"sources.{key}", "name.unknown", "no such peak_tflops entry")
        if base == "peak_tops" and "." in key and key.split(".", 1)[1] not in tops:
            raise _err(src, f"sources.{key}", "name.unknown", "no such peak_tops entry")
        sources[key] = source_from_dict(src, f"sources.{key}", value)
    for fld in FIGURE_FIELDS:
        if fld == "price_usd" and price is None:
            continue
        if fld in ("scale_up", "scale_out_nic", "unified_memory") and doc.get(fld) is None:
            continue
        if fld == "tdp_w" and tdp is None:
            continue
        if fld == "pcie_gen" and pcie_gen is None:
            continue
        if fld == "peak_tops" and not tops:
            continue
        if fld not in sources:
            per_prec = all(f"peak_tflops.{p}" in sources for p in peaks)
            if fld == "peak_tflops" and per_prec:
                continue
            if fld == "peak_tops" and all(f"peak_tops.{p}" in sources for p in tops):
                continue
            if default_src is None:
                raise _err(
                    src,
                    f"sources.{fld}",
                    "catalog.source",
                    "figure has no source: add sources." + fld + " or a document-level source",
                )
            sources[fld] = default_src

    launch = check_iso_date(
        src, "launch_date", doc["launch_date"], not_after=sources["launch_date"].read
    )
    if price_date is not None:
        check_iso_date(src, "price_date", price_date, not_after=sources["price_usd"].read)
    return GPU(
        id=gid,
        name=_text(src, doc, "name"),
        vendor=vendor,
        tier=tier,
        memory_gib=memory_gib,
        memory_bytes=int(memory_bytes),
        memory_type=_choice(src, doc, "memory_type", MEMORY_TYPES),
        memory_bandwidth_gb_per_s=float(_bandwidth(src, doc["memory_bandwidth_gb_per_s"])),
        peak_tflops=peaks,
        peak_tops=tops,
        tdp_w=tdp,
        interconnect=_choice(src, doc, "interconnect", INTERCONNECTS),
        interconnect_gb_per_s=float(
            _wrap(
                src,
                check_positive,
                "interconnect_gb_per_s",
                doc["interconnect_gb_per_s"],
                maximum=20_000,
            )
        ),
        pcie_gen=pcie_gen,
        form_factor=_choice(src, doc, "form_factor", FORM_FACTORS),
        launch_date=launch,
        price_usd=price,
        price_date=price_date,
        price_kind=price_kind,
        software=_choice(src, doc, "software", SOFTWARE),
        architecture=arch,
        sources=sources,
        doc=doc,
        scale_up=scale_up,
        scale_out_nic=doc.get("scale_out_nic"),
        unified_memory=unified,
        fp4_formats=fp4_formats,
        price_status=price_status,
    )
