"""advisor.money.cost: cloud run cost, cost per 1M tokens, TCO with break-even (hand-computed cases)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from advisor.core.errors import AdvisorError
from advisor.money import cost


def offer(provider, price, gpi=8, spot=None, gpu_id="h100-sxm", instance="x", region="us"):
    return SimpleNamespace(
        provider=provider,
        gpu_id=gpu_id,
        instance=instance,
        gpus_per_instance=gpi,
        region=region,
        on_demand_usd_per_gpu_hour=price,
        spot_usd_per_gpu_hour=spot,
        reserved_usd_per_gpu_hour=None,
        reserved_term_months=None,
        source_url="https://example.org/prices",
        read="2026-12-01",
        doc={},
    )


OFFERS = (
    offer("alpha", 3.00, gpi=8),
    offer("alpha", 3.50, gpi=1, instance="small"),
    offer("beta", 2.50, gpi=8, spot=1.20),
    offer("gamma", 4.00, gpi=1, gpu_id="a100-80gb"),
)


def test_cloud_run_rounds_up_to_whole_instances():
    # 2 GPUs for 10 h. alpha 8-GPU box: 8 * 3.00 * 10 = 240; alpha 1-GPU: 2 * 3.50 * 10 = 70;
    # beta 8-GPU box: 8 * 2.50 * 10 = 200. Cheapest: alpha small at 70.
    c = cost.cloud_training_cost(10, 2, "h100-sxm", OFFERS)
    assert c.cheapest.provider == "alpha" and c.cheapest.instance == "small"
    assert c.cheapest.total == pytest.approx(70.0)
    assert [(r.provider, r.total) for r in c.per_provider] == [("alpha", 70.0), ("beta", 200.0)]
    # 16 GPUs: alpha 2 boxes 16*3*10 = 480 vs 16 small = 560; beta 16*2.5*10 = 400
    c16 = cost.cloud_training_cost(10, 16, "h100-sxm", OFFERS)
    assert (c16.cheapest.provider, c16.cheapest.total) == ("beta", pytest.approx(400.0))


def test_cloud_spot_and_provider_filter():
    c = cost.cloud_training_cost(1, 8, "h100-sxm", OFFERS, pricing="spot")
    assert c.cheapest.total == pytest.approx(8 * 1.20)
    with pytest.raises(AdvisorError) as e:
        cost.cloud_training_cost(1, 8, "h100-sxm", OFFERS, provider="gamma", pricing="spot")
    assert e.value.key == "cost.no_offer"
    with pytest.raises(AdvisorError) as e:
        cost.cloud_training_cost(1, 8, "h100-sxm", OFFERS, provider="alpah")
    assert e.value.field == "provider" and "alpha" in e.value.params["suggestions"]


def test_cost_per_million_tokens_by_hand():
    # 2.50 USD/h at 1000 tokens/s: 3.6M tokens/h -> 0.6944 USD per 1M
    assert cost.cost_per_million_tokens(1000, 2.5) == pytest.approx(2.5 / 3.6)
    # per GPU-hour, not whole instances: beta's 8-GPU box at 2.50 per GPU-hour is cheapest
    t = cost.cloud_cost_per_million_tokens(1000, 1, "h100-sxm", OFFERS)
    assert t.cheapest.provider == "beta"
    assert t.per_million_tokens == pytest.approx(2.5 / 3.6)
    assert dict(t.per_provider)["alpha"] == pytest.approx(3.0 / 3.6)


def test_currency_conversion_uses_prices_convert(monkeypatch):
    import sys

    fake = SimpleNamespace(convert=lambda amount, currency, rates: amount * rates[currency])
    monkeypatch.setitem(sys.modules, "advisor.data.prices", fake)
    c = cost.cloud_training_cost(10, 1, "h100-sxm", OFFERS, currency="AZN", rates={"AZN": 1.7})
    assert c.cheapest.total == pytest.approx(35.0 * 1.7)
    with pytest.raises(AdvisorError) as e:
        cost.cloud_training_cost(10, 1, "h100-sxm", OFFERS, currency="AZN")
    assert e.value.key == "currency.no_rate"
    with pytest.raises(AdvisorError) as e:
        cost.cloud_training_cost(10, 1, "h100-sxm", OFFERS, currency="GBP")
    assert e.value.field == "currency"


# A hand-computed TCO case.
# 8 cards at 30,000 USD + 60,000 server = 300,000 purchase.
# Power at full load: (8 * 700 + 1000) W * PUE 1.5 = 9.9 kW; per month at 100 %:
#   9.9 * 730 h * 0.10 USD = 722.70 USD; at 60 % utilisation 433.62 USD.
# Hosting 1,000/month; maintenance 5 %/year of 300,000 = 1,250/month.
# Opex at 60 %: 433.62 + 1000 + 1250 = 2,683.62/month.
# 36 months: cash 300,000 + 36 * 2,683.62 = 396,610.32; resale 20 % = 60,000;
#   own total = 336,610.32.
# Cloud: 2.50 USD * 8 GPUs * 730 h * 0.6 = 8,760/month; 36 months = 315,360.
# Break-even utilisation: own(u) = 300,000 - 60,000 + 36 * 2,250 + 36 * 722.7 u
#   = 321,000 + 26,017.2 u; cloud(u) = 2.5 * 8 * 730 * 36 u = 525,600 u;
#   u* = 321,000 / 499,582.8 = 0.642536.
# Break-even month (cash): 8,760 m >= 300,000 + 2,683.62 m -> m >= 49.37: beyond 36 -> None;
#   with a 60-month horizon: month 50.
OWN = cost.OwnHardware(
    gpu_price_usd=30_000.0,
    gpus=8,
    tdp_w=700.0,
    electricity_usd_per_kwh=0.10,
    server_usd=60_000.0,
    host_power_w=1000.0,
    pue=1.5,
    hosting_usd_per_month=1000.0,
    maintenance_fraction_per_year=0.05,
    resale_fraction=0.20,
)


def test_tco_hand_computed():
    r = cost.tco(OWN, 2.50, utilisation=0.6, horizon_months=36)
    assert r.purchase == pytest.approx(300_000)
    assert r.power_per_month == pytest.approx(433.62)
    assert r.opex_per_month == pytest.approx(2683.62)
    assert r.own_total == pytest.approx(336_610.32)
    assert r.depreciation_per_year == pytest.approx(240_000 / 3)
    assert r.cloud_total == pytest.approx(315_360.0)
    assert r.savings == pytest.approx(315_360.0 - 336_610.32)
    assert r.break_even_utilisation == pytest.approx(321_000 / 499_582.8, rel=1e-9)
    assert r.break_even_month is None
    assert len(r.cumulative_own) == len(r.cumulative_cloud) == 37
    assert r.cumulative_own[0] == pytest.approx(300_000) and r.cumulative_cloud[0] == 0
    # yearly totals add up to the horizon totals
    assert sum(y.own for y in r.yearly) == pytest.approx(r.own_total)
    assert sum(y.cloud for y in r.yearly) == pytest.approx(r.cloud_total)
    assert [y.months for y in r.yearly] == [12, 12, 12]
    r60 = cost.tco(OWN, 2.50, utilisation=0.6, horizon_months=60)
    assert r60.break_even_month == 50
    # at the break-even utilisation both sides cost the same
    rb = cost.tco(OWN, 2.50, utilisation=r.break_even_utilisation, horizon_months=36)
    assert rb.own_total == pytest.approx(rb.cloud_total)


def test_tco_never_breaks_even_when_cloud_is_cheap():
    r = cost.tco(OWN, 0.50, utilisation=1.0, horizon_months=36)
    assert r.break_even_utilisation is None and r.break_even_month is None


def test_annuity_and_financing():
    # 100,000 at 6 %/year over 36 months: r = 0.005, payment = 100000 * 0.005 / (1 - 1.005^-36)
    pay = cost.annuity_payment(100_000, 0.06, 36)
    assert pay == pytest.approx(3042.19, abs=0.01)
    assert cost.annuity_payment(36_000, 0.0, 36) == pytest.approx(1000.0)
    own = cost.OwnHardware(
        gpu_price_usd=100_000.0,
        gpus=1,
        tdp_w=0.0,
        electricity_usd_per_kwh=0.0,
        financing_rate_per_year=0.06,
        financing_months=36,
    )
    r = cost.tco(own, 1.0, utilisation=1.0, horizon_months=36)
    assert r.own_total == pytest.approx(36 * pay)
    # a 12-month horizon on a 36-month loan counts the balance still owed
    r12 = cost.tco(own, 1.0, utilisation=1.0, horizon_months=12)
    bal = 100_000 * 1.005**12 - pay * (1.005**12 - 1) / 0.005
    assert r12.own_total == pytest.approx(12 * pay + bal)
    assert r12.own_total > 100_000  # interest


@pytest.mark.parametrize(
    "field,kwargs",
    [
        ("utilisation", dict(utilisation=1.2)),
        ("utilisation", dict(utilisation=0.0)),
        ("utilisation", dict(utilisation=math.nan)),
        ("horizon_months", dict(horizon_months=0)),
        ("cloud_usd_per_gpu_hour", dict(price=-1.0)),
    ],
)
def test_tco_bad_input_names_the_field(field, kwargs):
    args = dict(utilisation=0.5, horizon_months=12, price=2.0) | kwargs
    with pytest.raises(AdvisorError) as e:
        cost.tco(
            OWN,
            args["price"],
            utilisation=args["utilisation"],
            horizon_months=args["horizon_months"],
        )
    assert e.value.field == field


@pytest.mark.parametrize(
    "field,value",
    [
        ("gpu_price_usd", -5.0),
        ("electricity_usd_per_kwh", float("nan")),
        ("pue", 0.9),
        ("resale_fraction", 1.5),
        ("gpus", 0),
    ],
)
def test_own_hardware_bad_input(field, value):
    from dataclasses import replace

    with pytest.raises(AdvisorError) as e:
        cost.tco(replace(OWN, **{field: value}), 2.0, utilisation=0.5, horizon_months=12)
    assert e.value.field == field


def test_cloud_bad_input():
    with pytest.raises(AdvisorError) as e:
        cost.cloud_training_cost(-1, 1, "h100-sxm", OFFERS)
    assert e.value.field == "hours"
    with pytest.raises(AdvisorError) as e:
        cost.cloud_training_cost(1, 1, "h100-sxm", OFFERS, pricing="cheap")
    assert e.value.field == "pricing"
    with pytest.raises(AdvisorError) as e:
        cost.cost_per_million_tokens(0, 1.0)
    assert e.value.field == "tokens_per_s"


# -- CLI -----------------------------------------------------------------------------------------


def _fake_catalog():
    gpu = SimpleNamespace(
        id="h100-sxm",
        name="H100 SXM",
        tier="datacenter",
        tdp_w=700.0,
        price_usd=None,
        memory_bytes=80 * 2**30,
        peak_tflops={"bf16": 989.0},
        memory_bandwidth_gb_per_s=3350.0,
        interconnect_gb_per_s=900.0,
        doc={},
    )
    return SimpleNamespace(models=(), gpus=(gpu,), offers=OFFERS, currency={"AZN": 1.7})


@pytest.fixture
def cli(monkeypatch, capsys):
    import advisor.commands.cost as cmd
    from advisor.cli import main

    monkeypatch.setattr(cmd, "load_catalog", lambda root=None: _fake_catalog())

    def run(*argv):
        rc = main(list(argv))
        out, err = capsys.readouterr()
        return rc, out, err

    return run


def test_cli_tco_json_matches_hand_case(cli):
    import json

    rc, out, err = cli(
        "cost", "tco", "--gpu", "h100-sxm", "--gpus", "8", "--gpu-price", "30000",
        "--server-usd", "60000", "--host-power-w", "1000", "--pue", "1.5", "--hosting", "1000",
        "--maintenance", "0.05", "--resale", "0.2", "--electricity", "0.10",
        "--utilisation", "0.6", "--horizon-months", "36", "--cloud-price", "2.5", "--json",
        "--no-software-support",
    )  # fmt: skip
    assert rc == 0, err
    r = json.loads(out)["tco"]
    assert r["own_total"] == pytest.approx(336_610.32)
    # the items shown (issue 38; this fake catalog has no systems and no catalog/owning): the
    # server as entered, no figure for hardware support (not priced)
    items = {i["key"]: i for i in json.loads(out)["owning"]["items"]}
    assert items["server"]["usd"] == 60_000 and not items["hardware_support"]["priced"]
    assert r["break_even_utilisation"] == pytest.approx(321_000 / 499_582.8)
    assert len(r["cumulative_own"]) == 37


def test_cli_tco_defaults_are_the_budget_calculators(capsys):
    """`advisor cost tco` with no owning options gives the budget calculator's total to the
    cent (both through advisor.money.cost.owning_plan, on the real catalog)."""
    import json

    from advisor import webapi
    from advisor.cli import main

    def cli(*argv):
        rc = main(list(argv))
        out, err = capsys.readouterr()
        return rc, out, err

    rc, out, err = cli(
        "cost", "tco", "--gpu", "h100-sxm", "--gpus", "16", "--electricity", "0.127",
        "--utilisation", "0.6", "--cloud-price", "2.5", "--json",
    )  # fmt: skip
    assert rc == 0, err
    b = webapi.budget(
        {"gpu": "h100-sxm", "gpus": 16, "utilisation": 0.6, "cloud_usd_per_gpu_hour": 2.5,
         "electricity_usd_per_kwh": 0.127, "model": ""}
    )  # fmt: skip
    assert round(json.loads(out)["tco"]["own_total"], 2) == round(b["tco"]["own_total"], 2)
    items = {i["key"]: i for i in json.loads(out)["owning"]["items"]}
    assert items["network"]["usd"] > 0  # two servers: ports, cables and optics
    assert items["software_support"]["counted"] and items["hosting"]["usd_per_month"] > 0


def test_cli_run_and_tokens(cli):
    import json

    rc, out, _ = cli("cost", "run", "--gpu", "h100-sxm", "--gpus", "2", "--hours", "10", "--json")
    assert rc == 0 and json.loads(out)["cost"]["cheapest"]["total"] == pytest.approx(70.0)
    rc, out, _ = cli(
        "cost", "run", "--gpu", "h100-sxm", "--hours", "10", "--currency", "AZN", "--json"
    )
    assert json.loads(out)["cost"]["cheapest"]["total"] == pytest.approx(35.0 * 1.7)
    rc, out, _ = cli("cost", "tokens", "--gpu", "h100-sxm", "--tokens-per-s", "1000")
    assert rc == 0 and "cheapest: beta 0.69 USD" in out


@pytest.mark.parametrize(
    "argv,field",
    [
        (("cost", "tco", "--gpu", "h100-sxm", "--utilisation", "1.5", "--electricity", "0.1",
          "--gpu-price", "1000", "--cloud-price", "2"), "utilisation"),
        (("cost", "tco", "--gpu", "h100-sxm", "--utilisation", "0.5", "--electricity", "-0.1",
          "--gpu-price", "1000", "--cloud-price", "2"), "--electricity"),
        (("cost", "tco", "--gpu", "h100-sxm", "--utilisation", "0.5", "--electricity", "0.1"),
         "gpu-price"),
        (("cost", "run", "--gpu", "h100-sxn", "--hours", "1"), "gpu"),
        (("cost", "run", "--gpu", "h100-sxm", "--hours", "1", "--provider", "zeta"), "provider"),
        (("cost", "run", "--gpu", "h100-sxm", "--hours", "nan"), "hours"),
    ],
)  # fmt: skip
def test_cli_errors_are_one_line_exit_2(cli, argv, field):
    rc, out, err = cli(*argv)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and field in lines[0]
    assert "Traceback" not in err


def test_own_totals_is_the_owning_side_of_tco():
    """cost.own_totals (what the picker uses per candidate) gives tco's own figures exactly,
    financed or not."""
    for financing in (
        {},
        {"financing_months": 24, "financing_rate_per_year": 0.08, "down_payment_fraction": 0.2},
    ):
        own = cost.OwnHardware(
            gpu_price_usd=30_000.0,
            gpus=8,
            tdp_w=700.0,
            electricity_usd_per_kwh=0.127,
            server_usd=40_000.0,
            host_power_w=1500.0,
            hosting_usd_per_month=900.0,
            maintenance_fraction_per_year=0.05,
            resale_fraction=0.2,
            **financing,
        )
        full = cost.tco(own, 2.5, utilisation=0.6, horizon_months=36)
        part = cost.own_totals(own, utilisation=0.6, horizon_months=36)
        assert part.own_total == full.own_total
        assert part.purchase == full.purchase
        assert part.opex_per_month == full.opex_per_month
        assert part.own_cash(36) == full.cumulative_own[36]


def test_owning_plan_counts_a_pcie_server_and_hardware_support_from_the_catalog():
    """Issue 38: a PCIe server is priced (catalog/systems/pcie-8.yaml: a retail listing less
    its cards, a secondary source) and hardware support is a share of the purchase (cards,
    server, network) per year (catalog/owning/support.yaml, a TCO study's 8-12 %: 10 %), with
    the other figures read kept in `also`."""
    from advisor.data.catalog import load_catalog

    cat = load_catalog()
    hw = cat.owning.get("hardware_support_fraction_per_year")
    assert hw.value == pytest.approx(0.10) and hw.kind == "secondary"
    assert {a["value"] for a in hw.also} == {0.20, 0.06}  # DGX support; HPC maintenance
    gpu = cat.gpu("rtx-pro-6000-blackwell")
    plan = cost.owning_plan(
        gpu, 8, electricity_usd_per_kwh=0.10, horizon_months=36, systems=cat.systems,
        figures=cat.owning, price_usd=8000.0,
    )  # fmt: skip
    items = {i.key: i for i in plan.items}
    pcie = next(s for s in cat.systems if s.id == "pcie-8")
    assert plan.system_id == "pcie-8" and plan.server_priced
    assert items["server"].usd == pcie.server_usd == 85_271 - 8 * 7_709
    purchase = 8 * 8000.0 + pcie.server_usd  # one server: no network beyond it
    assert items["hardware_support"].usd_per_year == pytest.approx(purchase * 0.10)
    # a workstation card: no NVIDIA AI Enterprise, so hardware support is all the support
    assert "software_support" not in items
    assert plan.own.support_usd_per_year == pytest.approx(purchase * 0.10)


def test_a_desktop_box_has_no_data_centre_support_contract():
    """Issue 38: the hardware-support share (catalog/owning/support.yaml) applies to servers and
    racks in a data centre; a desktop box (DGX Spark) is under its maker's warranty: 0, said so."""
    from advisor.data.catalog import load_catalog

    cat = load_catalog()
    plan = cost.owning_plan(
        cat.gpu("dgx-spark"),
        1,
        systems=cat.systems,
        figures=cat.owning,
        horizon_months=36,
        electricity_usd_per_kwh=0.1,
    )
    hw = plan.item("hardware_support")
    assert hw.usd_per_year == 0.0 and hw.params == {"desktop": True}
    server = cost.owning_plan(
        cat.gpu("h100-sxm"),
        8,
        systems=cat.systems,
        figures=cat.owning,
        horizon_months=36,
        electricity_usd_per_kwh=0.1,
    )
    share = cat.owning.value("hardware_support_fraction_per_year")
    purchase = sum(i.usd for i in server.items if i.key in ("cards", "server", "network"))
    assert server.item("hardware_support").usd_per_year == pytest.approx(purchase * share)


def test_an_unpublished_server_price_is_counted_as_a_labelled_assumption():
    """Issue 38: an 8-OAM server has no published price (catalog/systems/oam-8.yaml:
    `server_usd: null`); the owning plan counts its stated assumption, never 0, and flags it in
    the plan, the item (params, note, source kind) and its dict, the way every face shows it."""
    from advisor.data.catalog import load_catalog

    cat = load_catalog()
    oam8 = next(s for s in cat.systems if s.id == "oam-8")
    plan = cost.owning_plan(
        cat.gpu("mi300x"), 16, systems=cat.systems, figures=cat.owning, horizon_months=36,
        electricity_usd_per_kwh=0.1,
    )  # fmt: skip
    server = plan.item("server")
    assert plan.server_priced and plan.server_assumed and plan.nodes == 2
    assert server.usd == plan.own.server_usd == 2 * oam8.server_usd_assumed > 0
    assert server.params["assumed"] is True and "ask the vendor" in server.note
    assert server.source["kind"] == "assumption"
    assert plan.to_dict()["server_assumed"] is True
    # hardware support and resale count the assumed server like any other
    purchase = sum(i.usd for i in plan.items if i.key in ("cards", "server", "network"))
    share = cat.owning.value("hardware_support_fraction_per_year")
    assert plan.item("hardware_support").usd_per_year == pytest.approx(purchase * share)
    # a read price (hgx-8) and the buyer's own figure are not assumptions
    hgx = cost.owning_plan(
        cat.gpu("h100-sxm"), 8, systems=cat.systems, figures=cat.owning, horizon_months=36,
        electricity_usd_per_kwh=0.1,
    )  # fmt: skip
    assert hgx.server_priced and not hgx.server_assumed
    assert "assumed" not in hgx.item("server").params
    entered = cost.owning_plan(
        cat.gpu("mi300x"), 8, systems=cat.systems, figures=cat.owning, horizon_months=36,
        electricity_usd_per_kwh=0.1, server_usd=50_000.0,
    )  # fmt: skip
    assert not entered.server_assumed and entered.item("server").usd == 50_000.0


def test_the_owning_plan_carries_the_systems_kind_cooling_and_power():
    """One computation: the plan carries what the report used to look up a second time
    (advisor.data.systems.purchase_for): the system's kind, cooling, whole power (all systems)
    and whether it is priced whole."""
    from advisor.data import systems
    from advisor.data.catalog import load_catalog

    cat = load_catalog()
    for gid, n in (("gb200", 72), ("h100-sxm", 16), ("dgx-spark", 2)):
        gpu = cat.gpu(gid)
        plan = cost.owning_plan(
            gpu, n, systems=cat.systems, figures=cat.owning, horizon_months=36,
            electricity_usd_per_kwh=0.1,
        )  # fmt: skip
        bought = systems.purchase_for(gpu, n, cat.systems)
        s = bought.system
        assert plan.system_kind == s.kind and plan.cooling == s.cooling
        assert plan.system_priced_whole == (bought.system_usd is not None)
        want = None if s.system_power_w is None else s.system_power_w * bought.nodes
        assert plan.system_power_w == want
        d = plan.to_dict()
        assert (d["system_kind"], d["cooling"], d["system_power_w"]) == (s.kind, s.cooling, want)
    rack = cost.owning_plan(
        cat.gpu("gb200"), 72, systems=cat.systems, figures=cat.owning, horizon_months=36,
        electricity_usd_per_kwh=0.1,
    )  # fmt: skip
    assert rack.system_kind == "rack" and rack.system_priced_whole and rack.cooling == "liquid"


def test_the_serving_calculators_owned_hour_flags_an_assumed_server():
    """The owned cost per busy GPU-hour (advisor.money.interactivity, the serving calculator's
    curve) counts the 8-OAM server's stated assumption and says so (`server_assumed`)."""
    from advisor.data.catalog import load_catalog
    from advisor.money import interactivity

    cat = load_catalog()
    kw = dict(utilisation=0.5, horizon_months=36, electricity_usd_per_kwh=0.1)
    mi = interactivity.owned_usd_per_gpu_hour(cat.gpu("mi300x"), 8, cat.systems, **kw)
    h = interactivity.owned_usd_per_gpu_hour(cat.gpu("h100-sxm"), 8, cat.systems, **kw)
    assert mi.server_priced and mi.server_assumed and mi.to_dict()["server_assumed"]
    assert h.server_priced and not h.server_assumed


def test_cli_tco_prices_a_rack_and_a_box_whole(capsys):
    """Issue 34: a GB200 NVL72 rack and a Mac Studio have no per-card price, only the whole
    system's (catalog/systems); `advisor cost tco` prices them whole, as the budget calculator
    does (same total to the cent), and says the rack's kind, cooling and power."""
    import json

    from advisor import webapi
    from advisor.cli import main
    from advisor.data.catalog import load_catalog

    cat = load_catalog()
    for gid, n in (("gb200", 72), ("m3-ultra", 1)):
        assert cat.gpu(gid).price_usd is None
        argv = ["cost", "tco", "--gpu", gid, "--gpus", str(n), "--electricity", "0.12",
                "--utilisation", "0.5", "--cloud-price", "3"]  # fmt: skip
        rc = main([*argv, "--json"])
        out, err = capsys.readouterr()
        assert rc == 0, err
        got = json.loads(out)
        system = next(s for s in cat.systems if s.id == got["owning"]["system_id"])
        assert got["tco"]["purchase"] == pytest.approx(system.system_usd * got["owning"]["nodes"])
        assert got["owning"]["system_priced_whole"]
        b = webapi.budget(
            {"gpu": gid, "gpus": n, "utilisation": 0.5, "cloud_usd_per_gpu_hour": 3,
             "electricity_usd_per_kwh": 0.12, "model": ""}
        )  # fmt: skip
        assert round(got["tco"]["own_total"], 2) == round(b["tco"]["own_total"], 2)
        rc = main(argv)
        out, err = capsys.readouterr()
        if gid == "gb200":
            kw = f"{system.system_power_w / 1000:,.1f} kW"
            assert f"({system.kind}, {system.cooling} cooling, {kw})" in out
    # a card with neither a price nor a system priced whole still asks for one
    rc = main(["cost", "tco", "--gpu", "mi355x", "--gpus", "8", "--electricity", "0.12",
               "--utilisation", "0.5", "--cloud-price", "3"])  # fmt: skip
    assert rc != 0 and "--gpu-price" in capsys.readouterr().err
