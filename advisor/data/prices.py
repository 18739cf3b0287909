"""Cloud offers (`catalog/clouds/*.yaml`, one file per provider) and currency rates
(`catalog/currency.yaml`).

Prices are USD per GPU-hour. Where a provider prices a whole instance, the file gives the
instance price (`*_usd_per_instance_hour`) and the loader divides by `gpus_per_instance`
(`per_gpu_derived: true` in the offer's JSON says so). Every offer has a source URL and the
date it was read; the site shows them as dated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core import limits
from ..core.errors import AdvisorError, check_choice, check_int, check_positive, unknown_name
from ..core.ids import check_id
from .hardware import _err, _wrap, check_iso_date, check_keys, check_optional_text, source_from_dict

# What a reserved price is: "commitment" (a 1- to 3-year term, `reserved_term_months` required),
# "capacity-block" (a short booked block, days to weeks: AWS EC2 Capacity Blocks for ML) or
# "contract" (a provider's published reserved rate, often a "from" price, whose term the source
# does not state). Only a commitment carries a term; the other two refuse one.
RESERVED_KINDS = ("commitment", "capacity-block", "contract")
PROVIDER_KEYS = ("provider", "name", "offers", "source", "note", "notes")
OFFER_KEYS = (
    "gpu",
    "instance",
    "gpus_per_instance",
    "region",
    *(
        f"{k}_usd_per_{u}_hour"
        for k in ("on_demand", "spot", "reserved")
        for u in ("gpu", "instance")
    ),
    "on_demand_note",
    "reserved_kind",
    "reserved_term_months",
    "price_as_of",
    "source",
    "notes",
    "note",
)


@dataclass(frozen=True)
class CloudOffer:
    provider: str
    gpu_id: str
    instance: str
    gpus_per_instance: int
    region: str
    on_demand_usd_per_gpu_hour: float | None  # None only with on_demand_note (none published)
    spot_usd_per_gpu_hour: float | None
    reserved_usd_per_gpu_hour: float | None
    reserved_term_months: int | None
    source_url: str
    read: str
    doc: dict = field(hash=False, compare=False)
    provider_name: str = ""
    reserved_kind: str | None = None  # one of RESERVED_KINDS
    checked: str = "recalled"
    per_gpu_derived: bool = False
    on_demand_note: str | None = None  # why there is no on-demand price (spot/capacity only)


def _price(src, fld, o, n, required):
    """Per-GPU price from `<fld>_usd_per_gpu_hour` or `<fld>_usd_per_instance_hour` / n."""
    per_gpu, per_inst = o.get(f"{fld}_usd_per_gpu_hour"), o.get(f"{fld}_usd_per_instance_hour")
    if per_gpu is not None and per_inst is not None:
        raise AdvisorError(
            "catalog.conflict",
            f"{src}: {fld}: give a per-GPU or a per-instance price, not both",
            field=f"{src}:{fld}",
        )
    if per_gpu is not None:
        v = _wrap(
            src,
            limits.check_range,
            f"{fld}_usd_per_gpu_hour",
            per_gpu,
            limits.PRICE_USD_PER_GPU_HOUR,
        )
        return float(v), False
    if per_inst is not None:
        lo, hi = limits.PRICE_USD_PER_GPU_HOUR
        v = _wrap(
            src,
            limits.check_range,
            f"{fld}_usd_per_instance_hour",
            per_inst,
            (lo * n, hi * n),
        )
        return v / n, True
    if required:
        raise AdvisorError(
            "catalog.missing",
            f"{src}: {fld}_usd_per_gpu_hour: missing (or {fld}_usd_per_instance_hour)",
            field=f"{src}:{fld}_usd_per_gpu_hour",
        )
    return None, False


def _on_demand_note(p: str, o: dict) -> str | None:
    """The stated reason an offer has no on-demand price, or None where it has one.

    A provider that publishes no on-demand rate (AWS Trn2: spot and Capacity Blocks only) is
    written as `on_demand_usd_per_instance_hour: null` (or `_per_gpu_hour: null`) together with
    `on_demand_note`; a missing key, or null without a note, is refused (never read as 0)."""
    keys = ("on_demand_usd_per_gpu_hour", "on_demand_usd_per_instance_hour")
    given = [k for k in keys if k in o]
    note = o.get("on_demand_note")
    if given and all(o[k] is None for k in given):
        if not isinstance(note, str) or not note.strip():
            raise _err(
                p,
                "on_demand_note",
                "catalog.missing",
                f"{given[0]} is null: say why (no on-demand price published) in on_demand_note",
            )
        return note.strip()
    if note is not None:
        raise _err(
            p,
            "on_demand_note",
            "catalog.conflict",
            "only with on_demand_usd_per_instance_hour (or _gpu_hour): null",
        )
    return None


def offers_from_dict(doc, source_name: str) -> tuple[CloudOffer, ...]:
    """Validate one provider file into its offers (GPU ids are checked by the catalog loader)."""
    src = source_name
    if not isinstance(doc, dict):
        raise AdvisorError("catalog.not_mapping", f"{src}: expected a mapping", field=src)
    for key in ("provider", "name", "offers"):
        if key not in doc:
            raise _err(src, key, "catalog.missing", "missing required field")
    check_keys(src, doc, PROVIDER_KEYS)
    check_optional_text(src, doc, ("name", "note", "notes"))
    provider = check_id(src, "provider", doc["provider"])
    default = doc.get("source")
    default_src = source_from_dict(src, "source", default) if default is not None else None
    offers = doc["offers"]
    if not isinstance(offers, list) or not offers:
        raise _err(src, "offers", "catalog.not_list", "expected a non-empty list of offers")
    out = []
    seen: dict[tuple, int] = {}  # (gpu, instance, region) -> index: a duplicate offer is refused
    for i, o in enumerate(offers):
        p = f"{src}: offers[{i}]"
        if not isinstance(o, dict):
            raise _err(src, f"offers[{i}]", "catalog.not_mapping", "expected a mapping")
        for key in ("gpu", "instance", "gpus_per_instance", "region"):
            if key not in o:
                raise _err(src, f"offers[{i}].{key}", "catalog.missing", "missing required field")
        check_keys(src, o, OFFER_KEYS, prefix=f"offers[{i}].")
        check_optional_text(src, o, ("note", "notes", "on_demand_note"), prefix=f"offers[{i}].")
        n = _wrap(p, check_int, "gpus_per_instance", o["gpus_per_instance"], minimum=1, maximum=64)
        od_note = _on_demand_note(p, o)
        od, derived = _price(p, "on_demand", o, n, od_note is None)
        spot, d2 = _price(p, "spot", o, n, False)
        reserved, d3 = _price(p, "reserved", o, n, False)
        if od is None and spot is None and reserved is None:
            raise _err(
                p,
                "on_demand_note",
                "catalog.missing",
                "an offer with no on-demand price needs a spot or reserved price",
            )
        for name, v in (("spot", spot), ("reserved", reserved)):
            if v is not None and od is not None and v > od:
                raise AdvisorError(
                    "offer.above_on_demand",
                    f"{p}: {name}_usd_per_gpu_hour: {v:g} is above the on-demand price {od:g}",
                    field=f"{p}:{name}_usd_per_gpu_hour",
                )
        term = o.get("reserved_term_months")
        kind = o.get("reserved_kind")
        if reserved is not None:
            kind = _wrap(p, check_choice, "reserved_kind", kind or "commitment", RESERVED_KINDS)
            if kind == "commitment":
                term = _wrap(p, check_int, "reserved_term_months", term, minimum=1, maximum=60)
            elif term is not None:
                raise _err(
                    p,
                    "reserved_term_months",
                    "catalog.conflict",
                    f"a {kind} price has no term in months (only reserved_kind: commitment has one)",
                )
        elif term is not None or kind is not None:
            raise _err(p, "reserved_term_months", "catalog.missing", "given without a price")
        s = o.get("source")
        source = source_from_dict(p, "source", s) if s is not None else default_src
        if source is None:
            raise _err(p, "source", "catalog.source", "offer has no source (url, read, checked)")
        for key in ("gpu", "instance", "region"):
            if not isinstance(o[key], str) or not o[key]:
                raise _err(p, key, "field.not_text", f"expected text, got {o[key]!r}")
        check_id(src, f"offers[{i}].gpu", o["gpu"])
        same = (o["gpu"], o["instance"], o["region"])
        if same in seen:
            raise AdvisorError(
                "catalog.duplicate",
                f"{p}: the same gpu, instance and region as offers[{seen[same]}]",
                field=f"{src}:offers[{i}]",
                file=src,
                other=f"offers[{seen[same]}]",
            )
        seen[same] = i
        if o.get("price_as_of") is not None and not isinstance(o["price_as_of"], str):
            raise _err(p, "price_as_of", "field.not_text", "expected text such as '2025-06'")
        offer_doc = {
            "provider": provider,
            "provider_name": doc["name"],
            "gpu_id": o["gpu"],
            "instance": o["instance"],
            "gpus_per_instance": n,
            "region": o["region"],
            "on_demand_usd_per_gpu_hour": od,
            "on_demand_note": od_note,
            "spot_usd_per_gpu_hour": spot,
            "reserved_usd_per_gpu_hour": reserved,
            "reserved_term_months": term,
            "reserved_kind": kind if reserved is not None else None,
            "per_gpu_derived": derived or d2 or d3,
            "price_as_of": o.get("price_as_of"),
            "notes": o.get("notes"),
            "source_url": source.url,
            "read": source.read,
            "checked": source.checked,
            "file": src,
        }
        out.append(
            CloudOffer(
                provider=provider,
                gpu_id=o["gpu"],
                instance=o["instance"],
                gpus_per_instance=n,
                region=o["region"],
                on_demand_usd_per_gpu_hour=od,
                spot_usd_per_gpu_hour=spot,
                reserved_usd_per_gpu_hour=reserved,
                reserved_term_months=term,
                source_url=source.url,
                read=source.read,
                doc=offer_doc,
                provider_name=doc["name"],
                reserved_kind=offer_doc["reserved_kind"],
                checked=source.checked,
                per_gpu_derived=offer_doc["per_gpu_derived"],
                on_demand_note=od_note,
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class Rate:
    currency: str
    per_usd: float  # units of `currency` per 1 USD
    source_url: str
    read: str
    note: str | None = None


@dataclass(frozen=True)
class CurrencyRates:
    """USD -> other currencies, each rate with its source and date (catalog/currency.yaml)."""

    rates: dict = field(hash=False)  # code -> Rate
    doc: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def currencies(self) -> tuple[str, ...]:
        return ("USD", *self.rates)

    def rate(self, currency: str) -> float:
        if currency == "USD":
            return 1.0
        if currency not in self.rates:
            raise unknown_name("currency", str(currency), self.currencies)
        return self.rates[currency].per_usd


def currency_from_dict(doc, source_name: str = "currency.yaml") -> CurrencyRates:
    src = source_name
    if not isinstance(doc, dict) or doc.get("base") != "USD":
        raise AdvisorError(
            "catalog.currency", f"{src}: base: must be USD", field=f"{src}:base", file=src
        )
    raw = doc.get("rates")
    if not isinstance(raw, dict) or not raw:
        raise _err(
            src, "rates", "catalog.not_mapping", "expected a mapping CODE: {per_usd, source}"
        )
    rates = {}
    for code, r in raw.items():
        fld = f"rates.{code}"
        if not isinstance(code, str) or len(code) != 3 or not code.isupper():
            raise _err(src, fld, "field.currency", "currency codes are ISO 4217 (e.g. AZN)")
        if not isinstance(r, dict):
            raise _err(src, fld, "catalog.not_mapping", "expected {per_usd, source}")
        check_keys(src, r, ("per_usd", "note", "source"), prefix=f"{fld}.")
        check_optional_text(src, r, ("note",), prefix=f"{fld}.")
        v = _wrap(src, check_positive, f"{fld}.per_usd", r.get("per_usd"), maximum=1e6)
        s = source_from_dict(src, f"{fld}.source", r.get("source"))
        check_iso_date(src, f"{fld}.source.read", s.read)
        rates[code] = Rate(code, float(v), s.url, s.read, r.get("note"))
    return CurrencyRates(rates, doc)


def convert(amount_usd: float, currency: str, rates) -> float:
    """`amount_usd` in `currency` at the catalog's dated rate.

    `rates` is a `CurrencyRates` or a plain mapping code -> units per USD. An unknown currency
    raises `unknown_name` (field ``currency``) with suggestions.
    """
    amount = float(_number_or_raise(amount_usd))
    if currency == "USD":
        return amount
    if isinstance(rates, CurrencyRates):
        return amount * rates.rate(currency)
    table = dict(rates or {})
    if currency not in table:
        raise unknown_name("currency", str(currency), ["USD", *table])
    return amount * float(table[currency])


def _number_or_raise(v):
    from ..core.errors import _number

    return _number("amount_usd", v)


def is_community_cloud(offer_name: str | None) -> bool:
    """A marketplace of individual hosts rather than a provider's own data centres: RunPod's
    Community Cloud ("peer-to-peer GPU computing that connects individual compute providers",
    against its Secure Cloud in Tier 3/4 data centres; docs.runpod.io "Choose a pod", checked:
    recalled, 2026-12-06)."""
    return bool(offer_name) and "community cloud" in str(offer_name).lower()
