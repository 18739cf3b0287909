"""catalog/systems (issue 38): purchasable systems, their validation, and how an owned
configuration is made of whole systems."""

from __future__ import annotations

import copy

import pytest

from advisor.core.errors import AdvisorError
from advisor.data import systems
from advisor.data.catalog import catalog_from_documents, default_root, load_catalog, read_documents

CAT = load_catalog()


def test_every_system_is_valid_and_every_price_has_a_source():
    assert {s.id for s in CAT.systems} >= {"hgx-8", "hgx-4", "oam-8", "pcie-8"}
    for s in CAT.systems:
        for fld in systems.FIGURES:
            if getattr(s, fld) is not None:
                src = s.sources[fld]
                assert src["url"].startswith("https://") and len(src["read"]) == 10
                assert src["kind"] in systems.SOURCE_KINDS


def test_sxm_and_oam_cards_go_into_their_boards():
    h100, mi300x, rtx = CAT.gpu("h100-sxm"), CAT.gpu("mi300x"), CAT.gpu("rtx-4090")
    assert systems.platform_sizes(h100, CAT.systems) == (4, 8)
    assert systems.platform_sizes(mi300x, CAT.systems) == (8,)
    assert systems.platform_sizes(rtx, CAT.systems) == ()
    assert not systems.ownable(mi300x, 2, CAT.systems) and systems.ownable(mi300x, 16, CAT.systems)
    p = systems.purchase_for(h100, 16, CAT.systems)
    assert (p.system.id, p.nodes) == ("hgx-8", 2) and p.server_usd == 2 * p.system.server_usd
    assert p.rack_units == 16
    q = systems.purchase_for(rtx, 12, CAT.systems)
    assert (q.system.id, q.nodes, q.server_usd) == ("pcie-8", 2, None)  # not priced: said so


@pytest.mark.parametrize(
    "change,field",
    [
        ({"kind": "cluster"}, "kind"),
        ({"form_factors": ["socket"]}, "form_factors"),
        ({"gpus": 0}, "gpus"),
        ({"server_usd": -1}, "server_usd"),
        ({"sources": {}}, "sources.server_usd"),
        ({"price": 1}, "price"),
    ],
)
def test_bad_system_documents_name_the_file_and_field(change, field):
    docs = read_documents(default_root())
    bad = copy.deepcopy(docs)
    bad["systems/hgx-8.yaml"].update(change)
    with pytest.raises(AdvisorError) as e:
        catalog_from_documents(bad)
    assert "systems/hgx-8.yaml" in e.value.message and field in e.value.field


def test_a_source_without_its_kind_is_refused():
    docs = copy.deepcopy(read_documents(default_root()))
    del docs["systems/hgx-8.yaml"]["sources"]["server_usd"]["kind"]
    with pytest.raises(AdvisorError) as e:
        catalog_from_documents(docs)
    assert "sources.server_usd.kind" in e.value.field
