"""Offers with no on-demand price (issue 34): AWS publishes none for trn2.48xlarge (spot and
Capacity Blocks only). The catalog says so explicitly (`on_demand_usd_per_instance_hour: null`
with `on_demand_note`); readers that price on-demand leave the offer out and say why, readers that
price spot use its spot figure."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from advisor import webapi
from advisor.advice import recommend as rec
from advisor.core.errors import AdvisorError
from advisor.data.catalog import load_catalog
from advisor.money import cost

ROOT = Path(__file__).resolve().parents[1] / "catalog"
CAT = load_catalog()
LLAMA8 = CAT.model("llama-3.1-8b").spec

# catalog/clouds/aws.yaml: trn2.48xlarge, 16 Trainium2 chips, spot 23.0631 USD per instance-hour
# (SkyPilot's AWS catalog snapshot, us-east-2)
TRN2_SPOT_PER_CHIP = 23.0631 / 16


def _trn2():
    (offer,) = [o for o in CAT.offers if o.gpu_id == "trainium2"]
    return offer


def test_trn2_offer_has_spot_and_says_why_no_on_demand():
    o = _trn2()
    assert o.instance == "trn2.48xlarge" and o.gpus_per_instance == 16
    assert o.on_demand_usd_per_gpu_hour is None
    assert o.on_demand_note and "spot" in o.on_demand_note
    assert o.spot_usd_per_gpu_hour == pytest.approx(TRN2_SPOT_PER_CHIP)
    assert cost.offer_price(o, "on_demand") is None
    assert cost.offer_price(o, "spot") == pytest.approx(TRN2_SPOT_PER_CHIP)
    # sorted after every priced offer, never as if it cost 0
    assert CAT.offers_for("trainium2")[-1] is o


def test_cloud_cost_refuses_on_demand_with_the_reason_and_prices_spot():
    with pytest.raises(AdvisorError) as info:
        cost.cloud_training_cost(10.0, 16, "trainium2", CAT.offers)
    assert info.value.key == "cost.no_pricing_published"
    assert "no on-demand price published" in str(info.value)
    c = cost.cloud_training_cost(10.0, 16, "trainium2", CAT.offers, pricing="spot")
    assert c.cheapest.instance == "trn2.48xlarge"
    assert c.cheapest.total == pytest.approx(23.0631 * 10.0)


def test_picker_refuses_on_demand_with_the_reason_and_ranks_it_under_spot():
    w = rec.Workload(model=LLAMA8, task="inference", acquire="rent", horizon_months=1)
    rows = [r for r in rec.recommend(w, CAT) if r.gpu_id == "trainium2"]
    assert rows and not any(r.ok for r in rows)
    assert {r.reasons[0].key for r in rows} == {"recommend.no_pricing_published"}
    assert "spot or capacity block only" in rows[0].reasons[0].message
    spot = rec.Workload(
        model=LLAMA8, task="inference", acquire="rent", horizon_months=1, pricing="spot"
    )
    ranked = [r for r in rec.recommend(spot, CAT) if r.gpu_id == "trainium2" and r.ok]
    assert ranked and all(r.mode == "rent" and "trn2.48xlarge" in r.offer for r in ranked)
    # rented by the whole 16-chip instance, at the spot price, all month (730 h)
    assert ranked[0].rent_cost == pytest.approx(23.0631 * cost.HOURS_PER_MONTH)


def test_webapi_picker_and_budget_give_the_reason():
    r = webapi.run("picker", {"model": "llama-3.1-8b", "task": "inference", "acquire": "rent"})
    trn = [x for x in r["rejected"] if x["gpu_id"] == "trainium2"]
    assert trn and trn[0]["reasons"][0]["key"] == "recommend.no_pricing_published"
    b = webapi.run("budget", {"gpu": "trainium2", "gpus": 16, "price_usd": 1000})
    assert b["error"]["key"] == "budget.no_on_demand"
    assert b["error"]["field"] == "cloud_usd_per_gpu_hour"
    # with a price entered, the budget works
    ok = webapi.run(
        "budget",
        {"gpu": "trainium2", "gpus": 16, "price_usd": 1000, "cloud_usd_per_gpu_hour": 1.5},
    )
    assert "error" not in ok


def _catalog_with(tmp_path, offer: str):
    shutil.copytree(ROOT / "gpus", tmp_path / "gpus")
    (tmp_path / "clouds").mkdir()
    (tmp_path / "clouds" / "x.yaml").write_text(
        "provider: x\nname: X\nsource: {url: 'https://x.example', read: 2026-12-02, "
        "checked: recalled}\noffers:\n  - gpu: trainium2\n    instance: a\n"
        "    gpus_per_instance: 16\n    region: r\n" + offer,
        encoding="utf-8",
    )
    return load_catalog(tmp_path)


def test_null_on_demand_without_a_reason_fails_naming_file_and_field(tmp_path):
    with pytest.raises(AdvisorError) as info:
        _catalog_with(
            tmp_path,
            "    on_demand_usd_per_instance_hour: null\n    spot_usd_per_instance_hour: 20.0\n",
        )
    assert info.value.field == "clouds/x.yaml: offers[0]:on_demand_note"
    assert str(info.value).startswith("clouds/x.yaml: offers[0]: on_demand_note:")


def test_missing_on_demand_key_is_still_refused(tmp_path):
    with pytest.raises(AdvisorError) as info:
        _catalog_with(tmp_path, "    spot_usd_per_instance_hour: 20.0\n")
    assert "on_demand_usd_per_gpu_hour" in str(info.value)


def test_null_on_demand_needs_another_price_and_a_note_needs_null(tmp_path):
    with pytest.raises(AdvisorError) as info:
        _catalog_with(
            tmp_path, "    on_demand_usd_per_gpu_hour: null\n    on_demand_note: 'none published'\n"
        )
    assert "spot or reserved" in str(info.value)
    with pytest.raises(AdvisorError) as info:
        _catalog_with(
            tmp_path / "b",
            "    on_demand_usd_per_gpu_hour: 2.0\n    on_demand_note: 'none published'\n",
        )
    assert info.value.key == "catalog.conflict" and "on_demand_note" in info.value.field


def test_null_on_demand_with_a_reason_loads(tmp_path):
    cat = _catalog_with(
        tmp_path,
        "    on_demand_usd_per_instance_hour: null\n"
        "    on_demand_note: 'spot only'\n    spot_usd_per_instance_hour: 20.0\n",
    )
    (o,) = cat.offers
    assert o.on_demand_usd_per_gpu_hour is None and o.spot_usd_per_gpu_hour == 20.0 / 16
