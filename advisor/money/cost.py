"""Cost: cloud cost of a training run and per 1M generated tokens from the price catalog, and the
total cost of owning hardware over a horizon against renting the same hours.

All arithmetic is in USD; results convert at the end with the catalog's dated rate
(`advisor.data.prices.convert`, catalog/currency.yaml). A month is 8760 / 12 = 730 hours.

Formulas
- Cloud run: GPUs are rented in whole instances: ceil(gpus / gpus_per_instance) instances, each
  billed `gpus_per_instance * usd_per_gpu_hour` for the run's hours.
- Per 1M tokens: usd_per_hour / (tokens_per_s * 3600) * 10^6.
- Power: (TDP * cards + host W) * utilisation * PUE / 1000 kW, times hours and the electricity
  price (PUE: The Green Grid, "PUE: a comprehensive examination of the metric", WP#49, 2012;
  the 2023 industry average 1.58: Uptime Institute Global Data Center Survey 2023).
- Depreciation: straight line from the purchase price to the resale value over the horizon
  (IRS Publication 946 §4 describes straight-line depreciation); resale is credited at the end.
- Financing: level monthly annuity payment P * r / (1 - (1 + r)^-n), r = annual rate / 12
  (the standard amortisation formula; e.g. Brealey, Myers & Allen, Principles of Corporate
  Finance, ch. 2); a loan longer than the horizon counts its outstanding balance at the end.
- Break-even utilisation: the utilisation at which owning (net of resale) and renting cost the
  same over the horizon; owning's power grows with utilisation, its other costs do not.
- Break-even month: the first month in which cumulative rent reaches cumulative cash spent on
  owning (purchase or down payment, loan payments, power, hosting, maintenance; resale not
  counted), the usual pay-back chart.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from ..core import limits, vocab
from ..core.errors import AdvisorError, check_choice, check_int, check_non_negative, check_positive

HOURS_PER_MONTH = 8760 / 12
PRICINGS = vocab.PRICINGS
CURRENCIES = vocab.CURRENCIES
DEFAULT_PUE = 1.58  # Uptime Institute Global Data Center Survey 2023: industry average
# The share of the purchase price the hardware fetches when sold at the end of the horizon: an
# assumption (stated on every answer that uses it), the budget calculator's default since
# issue 5; the budget calculator, `recommend` and the reports take it from here (`owning`).
DEFAULT_RESALE_FRACTION = 0.2


def _rate(currency: str, rates) -> float:
    """USD -> `currency` factor via advisor.data.prices.convert (1.0 for USD)."""
    check_choice("currency", currency, CURRENCIES)
    if currency == "USD":
        return 1.0
    if rates is None:
        raise AdvisorError(
            "currency.no_rate",
            f"currency: no exchange rate for {currency} (catalog/currency.yaml)",
            field="currency",
            currency=currency,
        )
    from ..data.prices import convert

    return float(convert(1.0, currency, rates))


def offer_price(offer, pricing: str = "on_demand") -> float | None:
    """USD per GPU-hour of an offer for a pricing kind, or None where the provider publishes none."""
    check_choice("pricing", pricing, PRICINGS)
    v = getattr(offer, f"{pricing}_usd_per_gpu_hour", None)
    return None if v is None else float(v)


def no_price_note(offers, pricing: str = "on_demand") -> str | None:
    """Why none of `offers` has a `pricing` price, where the catalog says so: an offer's
    `on_demand_note` (the provider publishes no on-demand rate, e.g. AWS Trn2: spot and Capacity
    Blocks only), for on-demand pricing. None where one of them has the price, or none says why."""
    offers = list(offers)
    if pricing != "on_demand" or any(offer_price(o, pricing) is not None for o in offers):
        return None
    notes = [o.on_demand_note for o in offers if getattr(o, "on_demand_note", None)]
    return notes[0] if notes else None


# ---------------------------------------------------------------------------------------------
# Cloud
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OfferCost:
    provider: str
    instance: str
    region: str
    gpus_per_instance: int
    instances: int
    billed_gpus: int
    usd_per_gpu_hour: float
    hours: float
    total: float  # in `currency`
    read: str  # date the price was read
    source_url: str


@dataclass(frozen=True)
class CloudCost:
    """Cost of renting `gpus` GPUs of one kind for `hours`: the cheapest offer and the cheapest
    per provider (sorted by total, then provider)."""

    gpu_id: str
    gpus: int
    hours: float
    pricing: str
    currency: str
    cheapest: OfferCost
    per_provider: tuple[OfferCost, ...]

    def to_dict(self) -> dict:
        return asdict(self)


def _offers(offers, gpu_id: str, provider: str | None):
    mine = [o for o in offers if o.gpu_id == gpu_id]
    if provider is not None:
        providers = sorted({o.provider for o in offers})
        if provider not in providers:
            from ..core.errors import unknown_name

            raise unknown_name("provider", provider, providers)
        mine = [o for o in mine if o.provider == provider]
    return mine


def cloud_training_cost(
    hours: float,
    gpus: int,
    gpu_id: str,
    offers,
    *,
    provider: str | None = None,
    pricing: str = "on_demand",
    currency: str = "USD",
    rates=None,
    whole_instances: bool = True,
) -> CloudCost:
    """Cost of a run of `hours` wall-clock hours on `gpus` GPUs of `gpu_id`, from every catalog
    offer (instances rounded up: a 2-GPU job on an 8-GPU instance pays for 8, unless
    `whole_instances` is False, when only the GPUs used are paid for)."""
    hours = limits.check_range("hours", hours, limits.HOURS, exclusive_low=True)
    gpus = check_int("gpus", gpus, maximum=limits.GPUS[1])
    check_choice("pricing", pricing, PRICINGS)
    factor = _rate(currency, rates)
    rows = []
    for o in _offers(offers, gpu_id, provider):
        price = offer_price(o, pricing)
        if price is None:
            continue
        gpi = max(1, int(o.gpus_per_instance))
        instances = math.ceil(gpus / gpi)
        billed = instances * gpi if whole_instances else gpus
        rows.append(
            OfferCost(
                provider=o.provider,
                instance=o.instance,
                region=o.region,
                gpus_per_instance=gpi,
                instances=instances,
                billed_gpus=billed,
                usd_per_gpu_hour=price,
                hours=hours,
                total=billed * price * hours * factor,
                read=str(o.read),
                source_url=o.source_url,
            )
        )
    if not rows:
        note = no_price_note(_offers(offers, gpu_id, provider), pricing)
        if note:
            raise AdvisorError(
                "cost.no_pricing_published",
                f"pricing: no {pricing.replace('_', '-')} price published for {gpu_id}; spot or "
                f"capacity block only ({note})",
                field="pricing",
                gpu=gpu_id,
                pricing=pricing,
                provider=provider,
            )
        raise AdvisorError(
            "cost.no_offer",
            f"gpu: no {pricing.replace('_', '-')} cloud offer for {gpu_id}"
            + (f" from {provider}" if provider else ""),
            field="gpu",
            gpu=gpu_id,
            pricing=pricing,
            provider=provider,
        )
    rows.sort(key=lambda r: (r.total, r.provider, r.instance, r.region))
    best: dict[str, OfferCost] = {}
    for r in rows:
        best.setdefault(r.provider, r)
    per_provider = tuple(sorted(best.values(), key=lambda r: (r.total, r.provider)))
    return CloudCost(gpu_id, gpus, hours, pricing, currency, rows[0], per_provider)


def cost_per_million_tokens(tokens_per_s: float, usd_per_hour: float) -> float:
    """USD per 10^6 generated tokens at `tokens_per_s` (all sequences together) on hardware that
    costs `usd_per_hour` in total: usd_per_hour / (tokens_per_s * 3600) * 10^6."""
    tokens_per_s = limits.check_range("tokens_per_s", tokens_per_s, limits.TOKENS_PER_S)
    usd_per_hour = limits.check_range(
        "usd_per_hour", usd_per_hour, (0.0, limits.USD_PER_GPU_HOUR[1] * limits.GPUS[1])
    )
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


@dataclass(frozen=True)
class TokenCost:
    gpu_id: str
    gpus: int
    tokens_per_s: float
    currency: str
    cheapest: OfferCost  # its `total` is the cost of one hour
    per_million_tokens: float
    per_provider: tuple[tuple[str, float], ...]  # (provider, cost per 1M tokens)

    def to_dict(self) -> dict:
        return asdict(self)


def cloud_cost_per_million_tokens(
    tokens_per_s: float,
    gpus: int,
    gpu_id: str,
    offers,
    *,
    provider: str | None = None,
    pricing: str = "on_demand",
    currency: str = "USD",
    rates=None,
) -> TokenCost:
    """Cost of 1M generated tokens at `tokens_per_s` on `gpus` rented GPUs: one hour of those GPUs
    (per GPU-hour, not rounded to whole instances: a serving fleet fills the rest of an instance
    with more replicas at the same rate) divided by the tokens of that hour."""
    tokens_per_s = limits.check_range("tokens_per_s", tokens_per_s, limits.TOKENS_PER_S)
    hour = cloud_training_cost(
        1.0,
        gpus,
        gpu_id,
        offers,
        provider=provider,
        pricing=pricing,
        currency=currency,
        rates=rates,
        whole_instances=False,
    )
    per_m = [
        (r.provider, cost_per_million_tokens(tokens_per_s, r.total)) for r in hour.per_provider
    ]
    return TokenCost(
        gpu_id=gpu_id,
        gpus=gpus,
        tokens_per_s=tokens_per_s,
        currency=currency,
        cheapest=hour.cheapest,
        per_million_tokens=cost_per_million_tokens(tokens_per_s, hour.cheapest.total),
        per_provider=tuple(per_m),
    )


# ---------------------------------------------------------------------------------------------
# Own hardware: total cost of ownership
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OwnHardware:
    """What owning costs. Money in USD; power in W; fractions in 0..1."""

    gpu_price_usd: float  # per card
    gpus: int
    tdp_w: float  # per card
    electricity_usd_per_kwh: float
    server_usd: float = 0.0  # share of chassis, CPUs, memory, network, storage
    host_power_w: float = 0.0  # the server's own draw at load, beside the cards
    pue: float = DEFAULT_PUE
    hosting_usd_per_month: float = 0.0  # rack space, cooling, colocation
    maintenance_fraction_per_year: float = 0.0  # of the purchase price
    network_usd: float = 0.0  # switch ports, cables and optics beyond the servers
    support_usd_per_year: float = 0.0  # software subscription and support contracts
    resale_fraction: float = 0.0  # of the purchase price, at the end of the horizon
    financing_rate_per_year: float = 0.0  # annual interest rate; 0 = none
    financing_months: int = 0  # loan term; 0 = paid in cash
    down_payment_fraction: float = 0.0  # of the purchase price, when financed

    def validated(self) -> OwnHardware:
        # Plausible ranges (advisor.core.limits): a 1e308 price would give "nan" totals.
        limits.check_range("gpu_price_usd", self.gpu_price_usd, limits.USD_PER_CARD)
        check_int("gpus", self.gpus, maximum=limits.GPUS[1])
        limits.check_range("tdp_w", self.tdp_w, (0.0, 10_000.0))
        limits.check_range(
            "electricity_usd_per_kwh", self.electricity_usd_per_kwh, limits.USD_PER_KWH
        )
        limits.check_range("server_usd", self.server_usd, limits.USD_PER_SERVER)
        limits.check_range("host_power_w", self.host_power_w, limits.POWER_W)
        check_positive("pue", self.pue, maximum=5.0)
        if self.pue < 1.0:
            raise AdvisorError(
                "field.too_small",
                f"pue: must be at least 1, got {self.pue}",
                field="pue",
                value=self.pue,
                minimum=1.0,
            )
        limits.check_range(
            "hosting_usd_per_month", self.hosting_usd_per_month, limits.USD_PER_MONTH
        )
        check_non_negative(
            "maintenance_fraction_per_year", self.maintenance_fraction_per_year, maximum=1.0
        )
        check_non_negative("resale_fraction", self.resale_fraction, maximum=1.0)
        limits.check_range("network_usd", self.network_usd, limits.USD_PER_SERVER)
        limits.check_range(
            "support_usd_per_year", self.support_usd_per_year, (0.0, limits.USD_PER_SERVER[1])
        )
        check_non_negative("financing_rate_per_year", self.financing_rate_per_year, maximum=1.0)
        check_int("financing_months", self.financing_months, minimum=0, maximum=600)
        check_non_negative("down_payment_fraction", self.down_payment_fraction, maximum=1.0)
        return self

    @property
    def purchase_usd(self) -> float:
        return self.gpu_price_usd * self.gpus + self.server_usd + self.network_usd


def owning(
    gpu_price_usd: float,
    gpus: int,
    tdp_w: float,
    *,
    electricity_usd_per_kwh: float,
    pue: float = DEFAULT_PUE,
    server_usd: float = 0.0,
    host_power_w: float = 0.0,
    network_usd: float = 0.0,
    hosting_usd_per_month: float = 0.0,
    support_usd_per_year: float = 0.0,
    resale_fraction: float = DEFAULT_RESALE_FRACTION,
) -> OwnHardware:
    """The owning inputs as `OwnHardware` from its items (`owning_plan` builds them from the
    catalog; this is the arithmetic's one entry): the cards, the server beside them, the network
    beyond the server, power and cooling (electricity x PUE), hosting per month, support per
    year and resale, each an input."""
    return OwnHardware(
        gpu_price_usd=float(gpu_price_usd),
        gpus=gpus,
        tdp_w=float(tdp_w or 0),
        electricity_usd_per_kwh=electricity_usd_per_kwh,
        server_usd=server_usd,
        host_power_w=host_power_w,
        pue=max(1.0, pue),
        hosting_usd_per_month=hosting_usd_per_month,
        network_usd=network_usd,
        support_usd_per_year=support_usd_per_year,
        resale_fraction=resale_fraction,
    ).validated()


@dataclass(frozen=True)
class OwningItem:
    """One line of what owning costs. `usd`: paid once (cards, server, network); `usd_per_month`
    / `usd_per_year`: running; all None with `priced` False: no figure was read (said so).
    `key` names the line, `note` says what it counts (English; `params` for translations),
    `source` the figure's {url, read, kind} (None: the buyer's input or this catalog's
    arithmetic)."""

    key: str
    usd: float | None = None
    usd_per_month: float | None = None
    usd_per_year: float | None = None
    priced: bool = True
    counted: bool = True  # False: shown but left out of the totals (the buyer's choice)
    note: str = ""
    params: dict = field(default_factory=dict, compare=False)
    source: dict | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class OwningPlan:
    """THE cost of owning `gpus` x an accelerator, item by item (`items`), and the `OwnHardware`
    the totals are computed from (`own`): what the budget calculator (advisor.webapi.budget),
    `advisor cost tco`, advisor.advice.recommend and the reports show, so that they agree to the
    cent (tests/test_report.py)."""

    own: OwnHardware
    items: tuple[OwningItem, ...]
    system_id: str | None
    system_name: str | None
    nodes: int
    rack_units: int | None
    it_kw: float  # the cards and servers at full load, before PUE
    server_priced: bool  # the server is counted (a read price, an assumption, or entered)
    resale_fraction: float
    resale_source: dict | None
    # the server counted is the catalog's stated assumption (no published price: every face
    # says so, "ask the vendor for a quote"; advisor.data.systems `server_usd_assumed`)
    server_assumed: bool = False
    # the system bought (advisor.data.systems.System): its kind (server, rack, desktop), cooling
    # and whole power (racks and boxes, all systems), and whether it is priced whole, so that
    # no face looks the system up a second time
    system_kind: str | None = None
    cooling: str | None = None
    system_power_w: float | None = None
    system_priced_whole: bool = False

    def item(self, key: str) -> OwningItem | None:
        return next((i for i in self.items if i.key == key), None)

    def to_dict(self) -> dict:
        return {
            "items": [i.to_dict() for i in self.items],
            "system_id": self.system_id,
            "system_name": self.system_name,
            "nodes": self.nodes,
            "rack_units": self.rack_units,
            "it_kw": self.it_kw,
            "server_priced": self.server_priced,
            "server_assumed": self.server_assumed,
            "resale_fraction": self.resale_fraction,
            "resale_source": self.resale_source,
            "system_kind": self.system_kind,
            "cooling": self.cooling,
            "system_power_w": self.system_power_w,
            "system_priced_whole": self.system_priced_whole,
        }


def _src(fig) -> dict | None:
    if fig is None:
        return None
    s = fig.source
    return {"url": s.get("url"), "read": s.get("read"), "kind": s.get("kind")}


def owning_plan(
    gpu,
    gpus: int,
    *,
    electricity_usd_per_kwh: float,
    horizon_months: int,
    systems=(),
    figures=None,
    pue: float = DEFAULT_PUE,
    price_usd: float | None = None,
    server_usd: float | None = None,
    extra_server_usd: float = 0.0,
    hosting_usd_per_kw_month: float | None = None,
    software_support: bool = True,
    resale_fraction: float | None = None,
) -> OwningPlan:
    """THE cost of owning `gpus` x `gpu` over `horizon_months` (the one builder behind every
    owning figure; `OwningPlan`):

    - cards: the catalog price (or `price_usd`);
    - server: whole systems (advisor.data.systems.purchase_for: the price of everything beside
      the cards, its own power, rack units), or the buyer's `server_usd`; `extra_server_usd`
      (a profile's share per GPU) is added. A server with no published price is counted at the
      catalog's stated assumption (`server_usd_assumed`), flagged `OwningPlan.server_assumed`
      and said in the item ("ask the vendor for a quote"), so that it is neither free nor
      passed off as priced;
    - network beyond the server: none for one server (its NICs are in its price); more than one
      server (or desktop box): a cable or pair of optics per GPU port (one 400 Gb/s port per
      accelerator, rail-optimised) and, past two nodes (which link port to port), a switch port
      each, three (a two-level fat tree) past one switch's ports (catalog/owning/network.yaml);
    - hosting: colocation per kW of the systems' IT power (TDP x cards + the server's own
      draw) per month (catalog/owning/hosting.yaml, or `hosting_usd_per_kw_month`); energy is
      counted apart as power (electricity x PUE); a desktop box (no rack system) has none;
    - support: the vendor's software subscription per GPU per year where it applies
      (catalog/owning/support.yaml: NVIDIA AI Enterprise on NVIDIA data-centre cards, none where
      the card includes it), left out when `software_support` is False; hardware support where
      a share of price was read, else shown as not priced;
    - resale: the share of the purchase price after `horizon_months`
      (catalog/owning/resale.yaml, or `resale_fraction`; without either,
      DEFAULT_RESALE_FRACTION, a stated assumption).
    """
    from ..data import owning as owning_data
    from ..data import systems as systems_data

    figs = figures if figures is not None else owning_data.OwningFigures()
    gpus = check_int("gpus", gpus, maximum=limits.GPUS[1])
    bought = systems_data.purchase_for(gpu, gpus, systems)
    # a rack or a desktop box priced whole (issue 34: `system_usd`, `Purchase.prices`): its price
    # over its accelerators, no separate server price
    whole = (
        bought.prices(gpu, gpus)
        if getattr(bought, "system_usd", None) is not None and hasattr(bought, "prices")
        else None
    )
    price = price_usd if price_usd is not None else (whole[0] if whole else None)
    if price is None:
        price = getattr(gpu, "price_usd", None)
    if price is None:
        raise AdvisorError(
            "budget.no_price",
            f"price_usd: no public price for {gpu.id}; enter one",
            field="price_usd",
            gpu=gpu.id,
        )
    sys_ = bought.system
    tdp = float(getattr(gpu, "tdp_w", 0) or 0)
    items: list[OwningItem] = [
        OwningItem(
            "cards",
            usd=float(price) * gpus,
            note=f"{gpus} x {gpu.name}",
            params={"n": gpus, "gpu": gpu.name, "each": float(price)},
        )
    ]
    # the server
    if server_usd is not None:
        server = float(server_usd)
        items.append(OwningItem("server", usd=server, note="entered", params={"entered": True}))
        server_priced = True
    elif whole is not None:
        server = 0.0
        server_priced = True
        items.append(
            OwningItem(
                "server",
                usd=0.0,
                note=f"{bought.nodes} x {sys_.name}: priced whole with the accelerators",
                params={"n": bought.nodes, "system": sys_.name, "whole": True},
            )
        )
    elif sys_ is None:
        server = 0.0
        server_priced = False
        items.append(OwningItem("server", usd=0.0, note="no server: a desktop box or a card"))
    else:
        server_priced = bought.server_usd is not None
        server = bought.server_usd or 0.0
        # no published price: the catalog's stated assumption, labelled as such
        assumed = server_priced and getattr(bought, "server_assumed", False)
        src = sys_.sources.get("server_usd_assumed" if assumed else "server_usd")
        params = {"n": bought.nodes, "system": sys_.name}
        note = f"{bought.nodes} x {sys_.name}"
        if assumed:
            params["assumed"] = True
            note += ": an assumption, no published price (ask the vendor for a quote)"
        items.append(
            OwningItem(
                "server",
                usd=server if server_priced else None,
                priced=server_priced,
                note=note,
                params=params,
                source=None
                if src is None
                else {"url": src.get("url"), "read": src.get("read"), "kind": src.get("kind")},
            )
        )
    server += extra_server_usd
    if extra_server_usd:
        items.append(OwningItem("server_extra", usd=float(extra_server_usd), note="per GPU share"))
    # the network beyond the server
    # a desktop box (no rack system, or a system of kind "desktop": issue 34) is its own node:
    # boxes link box to box; it is not hosted in a colocation rack
    desktop = sys_ is None or getattr(sys_, "kind", "server") == "desktop"
    nodes = bought.nodes if sys_ is not None else gpus
    sw, link = figs.get("switch_usd_per_port"), figs.get("link_usd_per_port")
    radix = figs.value("switch_ports") or 64.0
    if nodes <= 1:
        network = 0.0
        items.append(
            OwningItem("network", usd=0.0, note="one server: no scale-out network", params={})
        )
    elif sw is None or link is None or sw.value is None or link.value is None:
        network = 0.0
        items.append(OwningItem("network", priced=False, usd=None, note="not priced"))
    else:
        # two nodes link port to port, no switch; up to a switch's ports, one switch; past
        # it, a two-level fat tree (leaf port, uplink, spine port)
        tiers = 0 if nodes == 2 else (1 if gpus <= radix else 3)
        network = gpus * (sw.value * tiers + link.value)
        items.append(
            OwningItem(
                "network",
                usd=network,
                note=f"{gpus} GPU ports: {tiers} switch port(s) and a link each, {nodes} nodes",
                params={"ports": gpus, "tiers": tiers, "nodes": nodes},
                source=_src(sw),
            )
        )
    # hosting
    host_w = bought.host_power_w if sys_ is not None else 0.0
    it_kw = (tdp * gpus + host_w) / 1000
    colo = figs.get("colocation_usd_per_kw_month")
    rate = hosting_usd_per_kw_month
    if rate is None and colo is not None:
        rate = colo.value
    if desktop:
        hosting = 0.0
        items.append(OwningItem("hosting", usd_per_month=0.0, note="a desktop box: no colocation"))
    elif rate is None:
        hosting = 0.0
        items.append(OwningItem("hosting", priced=False, usd_per_month=None, note="not priced"))
    else:
        hosting = it_kw * float(rate)
        items.append(
            OwningItem(
                "hosting",
                usd_per_month=hosting,
                note=f"{it_kw:,.2f} kW of IT power at {float(rate):,.2f} USD per kW per month",
                params={"kw": it_kw, "rate": float(rate), "rack_units": bought.rack_units},
                source=None if hosting_usd_per_kw_month is not None else _src(colo),
            )
        )
    # support
    nvaie = figs.get("nvidia_ai_enterprise_usd_per_gpu_year")
    support = 0.0
    if owning_data.applies(nvaie, gpu):
        per_year = nvaie.value * gpus
        support = per_year if software_support else 0.0
        items.append(
            OwningItem(
                "software_support",
                usd_per_year=per_year,
                counted=software_support,
                note=f"NVIDIA AI Enterprise, {nvaie.value:,.0f} USD per GPU per year",
                params={"each": nvaie.value, "n": gpus, "product": "NVIDIA AI Enterprise"},
                source=_src(nvaie),
            )
        )
    elif nvaie is not None and gpu.id in nvaie.included_with:
        items.append(
            OwningItem(
                "software_support",
                usd_per_year=0.0,
                note="NVIDIA AI Enterprise included with the card",
                params={"included": True, "product": "NVIDIA AI Enterprise"},
                source=_src(nvaie),
            )
        )
    hw = figs.get("hardware_support_fraction_per_year")
    hw_frac = None if hw is None else hw.value
    purchase = float(price) * gpus + server + network
    if sys_ is not None and getattr(sys_, "kind", "server") == "desktop":
        # a desktop box: the maker's warranty, no data-centre support contract
        items.append(
            OwningItem(
                "hardware_support",
                usd_per_year=0.0,
                note="a desktop box: the maker's warranty",
                params={"desktop": True},
            )
        )
    elif hw_frac is None:
        items.append(
            OwningItem("hardware_support", priced=False, note="not priced", source=_src(hw))
        )
    else:
        hw_year = purchase * hw_frac
        support += hw_year
        items.append(
            OwningItem(
                "hardware_support",
                usd_per_year=hw_year,
                note=f"{hw_frac:.1%} of the purchase price per year",
                params={"share": hw_frac},
                source=_src(hw),
            )
        )
    # resale
    share, rsrc = resale_fraction, None
    if share is None:
        share = owning_data.resale_fraction(figs, horizon_months)
        rsrc = _src(figs.get("resale_fraction_by_months"))
    if share is None:
        share = DEFAULT_RESALE_FRACTION
        rsrc = {"url": None, "read": None, "kind": "assumption"}
    items.append(
        OwningItem(
            "resale",
            usd=-purchase * share,
            note=f"{share:.1%} of the purchase price after {horizon_months} months",
            params={"share": share, "months": horizon_months},
            source=rsrc,
        )
    )
    own = owning(
        price,
        gpus,
        tdp,
        electricity_usd_per_kwh=electricity_usd_per_kwh,
        pue=pue,
        server_usd=server,
        host_power_w=host_w,
        network_usd=network,
        hosting_usd_per_month=hosting,
        support_usd_per_year=support,
        resale_fraction=share,
    )
    spw = None if sys_ is None else getattr(sys_, "system_power_w", None)
    return OwningPlan(
        own=own,
        items=tuple(items),
        system_id=None if sys_ is None else sys_.id,
        system_name=None if sys_ is None else sys_.name,
        nodes=bought.nodes,
        rack_units=bought.rack_units,
        it_kw=it_kw,
        server_priced=server_priced,
        resale_fraction=share,
        resale_source=rsrc,
        server_assumed=(
            server_usd is None and whole is None and bool(getattr(bought, "server_assumed", False))
        ),
        system_kind=None if sys_ is None else getattr(sys_, "kind", None),
        cooling=None if sys_ is None else getattr(sys_, "cooling", None),
        system_power_w=None if spw is None else spw * bought.nodes,
        system_priced_whole=getattr(bought, "system_usd", None) is not None,
    )


def annuity_payment(principal: float, rate_per_year: float, months: int) -> float:
    """Level monthly payment of a loan: P * r / (1 - (1 + r)^-n), r = rate / 12; P / n at 0 %."""
    check_non_negative("principal", principal)
    check_non_negative("financing_rate_per_year", rate_per_year, maximum=1.0)
    months = check_int("financing_months", months)
    r = rate_per_year / 12
    if r == 0:
        return principal / months
    return principal * r / (1 - (1 + r) ** -months)


def _loan_balance(principal: float, rate_per_year: float, months: int, paid: int) -> float:
    """Outstanding balance after `paid` level payments."""
    if paid >= months:
        return 0.0
    r = rate_per_year / 12
    if r == 0:
        return principal * (months - paid) / months
    pay = annuity_payment(principal, rate_per_year, months)
    return principal * (1 + r) ** paid - pay * ((1 + r) ** paid - 1) / r


@dataclass(frozen=True)
class YearTotal:
    year: int
    months: int
    own: float  # cash spent on owning in that year (resale credited in the last)
    cloud: float


@dataclass(frozen=True)
class TCOResult:
    """Own vs rent over a horizon, in `currency` (USD amounts times `rate`)."""

    currency: str
    rate: float  # 1 USD in `currency`
    horizon_months: int
    utilisation: float
    purchase: float
    power_per_month: float
    opex_per_month: float  # power + hosting + maintenance
    loan_payment_per_month: float
    resale_value: float
    depreciation_per_year: float  # straight line: (purchase - resale) / horizon years
    own_total: float  # cash over the horizon plus loan balance left, minus resale
    cloud_total: float
    cloud_per_month: float
    savings: float  # cloud_total - own_total (positive: owning is cheaper)
    break_even_utilisation: float | None  # None: renting is cheaper even at 100 %
    break_even_month: int | None  # None: not within the horizon
    yearly: tuple[YearTotal, ...]
    months: tuple[int, ...]  # 0..horizon
    cumulative_own: tuple[float, ...]  # cash basis, for the chart
    cumulative_cloud: tuple[float, ...]
    assumptions: tuple[str, ...]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class OwnTotals:
    """The owning side of `tco` alone, in USD (what the picker needs for every candidate)."""

    own: OwnHardware
    utilisation: float
    horizon_months: int
    purchase: float
    upfront: float  # purchase, or the down payment when financed
    payment_per_month: float  # loan payment (0 in cash)
    power_per_util_month: float  # power per month at 100 % utilisation
    power_per_month: float
    opex_per_month: float  # power, hosting, maintenance
    resale: float
    balance: float  # loan left at the end of the horizon
    own_total: float  # cash over the horizon plus the balance, minus resale

    def own_cash(self, m: int) -> float:
        """Cash spent on owning by the end of month `m` (resale not counted)."""
        o = self.own
        loan = self.payment_per_month * min(m, o.financing_months) if o.financing_months else 0.0
        return self.upfront + loan + self.opex_per_month * m


def own_totals(own: OwnHardware, *, utilisation: float, horizon_months: int) -> OwnTotals:
    """Total cost of owning `own` for `horizon_months` at `utilisation` (formulas in the module
    docstring: power, maintenance, hosting, financing, resale): the owning side of `tco`, alone,
    for the picker's every candidate (advisor.advice.recommend caches it)."""
    own = own.validated()
    u = check_positive("utilisation", utilisation, maximum=1.0)
    horizon = check_int("horizon_months", horizon_months, minimum=1, maximum=600)
    purchase = own.purchase_usd
    kw_at_full = (own.tdp_w * own.gpus + own.host_power_w) * own.pue / 1000
    power_per_util = kw_at_full * HOURS_PER_MONTH * own.electricity_usd_per_kwh  # per month
    power = power_per_util * u
    maintenance = purchase * own.maintenance_fraction_per_year / 12 + own.support_usd_per_year / 12
    opex = power + own.hosting_usd_per_month + maintenance
    financed = own.financing_months > 0
    if financed:
        upfront = purchase * own.down_payment_fraction
        principal = purchase - upfront
        payment = annuity_payment(principal, own.financing_rate_per_year, own.financing_months)
        balance = _loan_balance(
            principal, own.financing_rate_per_year, own.financing_months, horizon
        )
    else:
        upfront, payment, balance = purchase, 0.0, 0.0
    resale = purchase * own.resale_fraction
    loan = payment * min(horizon, own.financing_months) if financed else 0.0
    own_total = upfront + loan + opex * horizon + balance - resale
    return OwnTotals(
        own=own,
        utilisation=u,
        horizon_months=horizon,
        purchase=purchase,
        upfront=upfront,
        payment_per_month=payment,
        power_per_util_month=power_per_util,
        power_per_month=power,
        opex_per_month=opex,
        resale=resale,
        balance=balance,
        own_total=own_total,
    )


def tco(
    own: OwnHardware,
    cloud_usd_per_gpu_hour: float,
    *,
    utilisation: float,
    horizon_months: int,
    currency: str = "USD",
    rates=None,
) -> TCOResult:
    """Total cost of owning `own` for `horizon_months` at `utilisation` (busy fraction of the
    hours) against renting the same GPU-hours at `cloud_usd_per_gpu_hour` (formulas in the module
    docstring)."""
    o = own_totals(own.validated(), utilisation=utilisation, horizon_months=horizon_months)
    price = limits.check_range(
        "cloud_usd_per_gpu_hour", cloud_usd_per_gpu_hour, limits.USD_PER_GPU_HOUR
    )
    own = o.own
    u, horizon = o.utilisation, o.horizon_months
    factor = _rate(currency, rates)
    purchase, power, power_per_util = o.purchase, o.power_per_month, o.power_per_util_month
    opex, resale, payment, balance = o.opex_per_month, o.resale, o.payment_per_month, o.balance
    own_cash = o.own_cash
    own_total = o.own_total

    cloud_full = price * own.gpus * HOURS_PER_MONTH  # per month at 100 %
    cloud_month = cloud_full * u
    cum_own = tuple(own_cash(m) * factor for m in range(horizon + 1))
    cum_cloud = tuple(cloud_month * m * factor for m in range(horizon + 1))
    cloud_total = cloud_month * horizon

    break_even_month = next(
        (m for m in range(1, horizon + 1) if cum_cloud[m] >= cum_own[m] and cum_cloud[m] > 0),
        None,
    )
    # own(u) = A + B*u, cloud(u) = C*u over the horizon; equal at u* = A / (C - B)
    fixed = own_total - power * horizon
    slope = (cloud_full - power_per_util) * horizon
    if slope <= 0:
        be_util = None
    else:
        u_star = fixed / slope
        be_util = u_star if 0 < u_star <= 1 else (0.0 if u_star <= 0 else None)

    yearly = []
    for y in range(math.ceil(horizon / 12)):
        m0, m1 = 12 * y, min(12 * (y + 1), horizon)
        own_y = own_cash(m1) - (own_cash(m0) if y else 0.0)
        if m1 == horizon:
            own_y += balance - resale
        yearly.append(YearTotal(y + 1, m1 - m0, own_y * factor, cloud_month * (m1 - m0) * factor))
    assumptions = (
        f"{HOURS_PER_MONTH:g} hours a month; the cards busy {u:.0%} of them",
        f"power = (TDP x cards + host) x utilisation x PUE {own.pue:g}",
        "straight-line depreciation to the resale value, credited at the end",
        "cloud billed only for the busy hours at the same utilisation",
    )
    return TCOResult(
        currency=currency,
        rate=factor,
        horizon_months=horizon,
        utilisation=u,
        purchase=purchase * factor,
        power_per_month=power * factor,
        opex_per_month=opex * factor,
        loan_payment_per_month=payment * factor,
        resale_value=resale * factor,
        depreciation_per_year=(purchase - resale) / (horizon / 12) * factor,
        own_total=own_total * factor,
        cloud_total=cloud_total * factor,
        cloud_per_month=cloud_month * factor,
        savings=(cloud_total - own_total) * factor,
        break_even_utilisation=be_util,
        break_even_month=break_even_month,
        yearly=tuple(yearly),
        months=tuple(range(horizon + 1)),
        cumulative_own=cum_own,
        cumulative_cloud=cum_cloud,
        assumptions=assumptions,
    )
