"""Reserved prices come in three kinds (advisor/data/prices.py RESERVED_KINDS, issue 34):
a `commitment` (1 to 3 years; its term in months is required), a `capacity-block` (AWS EC2
Capacity Blocks for ML: a booked block of days to weeks) and a `contract` (a provider's published
reserved rate whose term the source does not state, e.g. Hyperstack's "from" prices). Only a
commitment carries a term; a term on the other two is refused, naming the file and field."""

from __future__ import annotations

import pytest

from advisor.core.errors import AdvisorError
from advisor.data.catalog import load_catalog
from advisor.data.prices import RESERVED_KINDS, offers_from_dict

SOURCE = {"url": "https://example.org/prices", "read": "2026-12-06", "checked": "stored-copy"}


def _doc(**reserved):
    offer = {
        "gpu": "b200",
        "instance": "x",
        "gpus_per_instance": 1,
        "region": "global",
        "on_demand_usd_per_gpu_hour": 6.0,
        "reserved_usd_per_gpu_hour": 5.1,
        **reserved,
    }
    return {"provider": "p", "name": "P", "source": SOURCE, "offers": [offer]}


def test_a_contract_price_loads_without_a_term():
    (o,) = offers_from_dict(_doc(reserved_kind="contract"), "p.yaml")
    assert o.reserved_kind == "contract" and o.reserved_term_months is None
    assert o.reserved_usd_per_gpu_hour == 5.1
    assert o.doc["reserved_kind"] == "contract"


@pytest.mark.parametrize("kind", ["contract", "capacity-block"])
def test_a_term_is_refused_unless_the_price_is_a_commitment(kind):
    with pytest.raises(AdvisorError) as info:
        offers_from_dict(_doc(reserved_kind=kind, reserved_term_months=12), "p.yaml")
    assert info.value.key == "catalog.conflict"
    assert info.value.field == "p.yaml: offers[0]:reserved_term_months"
    assert f"a {kind} price has no term" in str(info.value)


def test_a_commitment_needs_its_term_and_an_unknown_kind_is_refused():
    (o,) = offers_from_dict(_doc(reserved_term_months=12), "p.yaml")
    assert o.reserved_kind == "commitment" and o.reserved_term_months == 12
    with pytest.raises(AdvisorError) as info:
        offers_from_dict(_doc(reserved_kind="commitment"), "p.yaml")
    assert "reserved_term_months" in info.value.field
    with pytest.raises(AdvisorError) as info:
        offers_from_dict(_doc(reserved_kind="forever"), "p.yaml")
    assert "reserved_kind" in info.value.field


def test_real_catalog_reserved_prices_have_a_kind_and_only_commitments_a_term():
    offers = [o for o in load_catalog().offers if o.reserved_usd_per_gpu_hour is not None]
    assert offers
    for o in offers:
        assert o.reserved_kind in RESERVED_KINDS, (o.provider, o.instance)
        assert (o.reserved_term_months is not None) == (o.reserved_kind == "commitment"), (
            o.provider,
            o.instance,
        )
        assert o.checked != "recalled", (o.provider, o.instance)
