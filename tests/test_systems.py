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
            if getattr(s, fld) not in (None, ()):
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
    # a PCIe server: a retail listing less its cards (catalog/systems/pcie-8.yaml)
    assert (q.system.id, q.nodes) == ("pcie-8", 2) and q.server_usd == 2 * q.system.server_usd
    assert q.system.sources["server_usd"]["kind"] == "secondary"
    r = systems.purchase_for(h100, 4, CAT.systems)
    # no public price read: not priced in the data, counted at half the 8-GPU server's, a stated
    # assumption flagged as such (never counted as free, never passed off as priced)
    assert r.system.id == "hgx-4" and r.system.server_usd is None
    assert (r.nodes, r.server_usd, r.server_assumed) == (1, 16005.0, True)
    src = r.system.sources["server_usd_assumed"]
    assert src["kind"] == "assumption" and "assumed half" in src["note"]
    assert not p.server_assumed and not q.server_assumed


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


# issue 34: a rack-scale NVLink domain and unified-memory boxes as systems


def test_an_nvl72_rack_is_one_unit_of_72_gpus_priced_whole():
    gb200, gb300 = CAT.gpu("gb200"), CAT.gpu("gb300")
    rack = next(s for s in CAT.systems if s.id == "gb200-nvl72")
    assert (rack.kind, rack.gpus, rack.cpus, rack.scale_up_domain) == ("rack", 72, 36, 72)
    assert rack.cooling == "liquid" and rack.system_power_w == 120_000
    lo, hi = rack.system_usd_range
    assert lo <= rack.system_usd <= hi and rack.sources["system_usd"]["kind"] == "secondary"
    # the rack's power: 72 GPUs at their TDP and the rest (host_power_w)
    assert rack.host_power_w + 72 * gb200.tdp_w == rack.system_power_w
    assert systems.platform_sizes(gb200, CAT.systems) == (72,)
    assert not systems.ownable(gb200, 8, CAT.systems) and systems.ownable(gb200, 144, CAT.systems)
    p = systems.purchase_for(gb300, 72, CAT.systems)
    assert p.system.id == "gb300-nvl72" and p.rack_units == 48
    # no card price: the rack's price over its 72 GPUs, nothing beside it
    assert gb300.price_usd is None
    assert p.prices(gb300, 72) == (p.system.system_usd / 72, 0.0)


def test_unified_memory_boxes_are_bought_as_boxes_and_spark_links_up_to_four():
    spark, mac, ryzen, m4 = (
        CAT.gpu(i) for i in ("dgx-spark", "m3-ultra", "ryzen-ai-max-395", "m4-max")
    )
    assert systems.ownable(spark, 4, CAT.systems) and not systems.ownable(spark, 5, CAT.systems)
    # Sparks: up to four through a switch (NVIDIA's cluster helper "supports two to four
    # devices", a vendor source); Mac Studios and Framework Desktops: the 4-box clusters published
    assert systems.max_count(spark, CAT.systems) == 4 and systems.max_count(mac, CAT.systems) == 4
    spark_sys = next(s for s in CAT.systems if s.id == "dgx-spark")
    assert spark_sys.sources["max_systems"]["kind"] == "vendor"
    assert systems.ownable(mac, 4, CAT.systems) and not systems.ownable(mac, 8, CAT.systems)
    for g in (spark, mac, ryzen):
        p = systems.purchase_for(g, 1, CAT.systems)
        assert p.system.kind == "desktop" and p.rack_units is None
        assert p.prices(g, 1) == (p.system.system_usd, 0.0)
    # the 128 GB M4 Max box has no USD price read: not priced, and said so in its note
    p = systems.purchase_for(m4, 1, CAT.systems)
    assert p.system.system_usd is None and p.prices(m4, 1) is None and "Not priced" in p.system.note
    assert 512 in systems.purchase_for(mac, 1, CAT.systems).system.memory_configs_gib


@pytest.mark.parametrize(
    "change,field",
    [
        ({"scale_up_domain": 0}, "scale_up_domain"),
        ({"scale_up_domain": 8}, "scale_up_domain"),  # smaller than its 72 GPUs
        ({"cooling": "water"}, "cooling"),
        ({"system_usd": 5_000_000.0}, "system_usd"),  # outside its reported range
        ({"system_usd_range": [3e6, 2e6]}, "system_usd_range"),
        ({"system_power_w": 10_000.0}, "host_power_w"),  # the rest more than the whole
        ({"cpus": -1}, "cpus"),
        ({"sources": {}}, "sources."),  # every figure needs its source
    ],
)
def test_bad_rack_documents_name_the_file_and_field(change, field):
    docs = read_documents(default_root())
    bad = copy.deepcopy(docs)
    bad["systems/gb200-nvl72.yaml"].update(change)
    with pytest.raises(AdvisorError) as e:
        catalog_from_documents(bad)
    assert "systems/gb200-nvl72.yaml" in e.value.message and field in e.value.field


def test_a_box_linked_past_its_vendor_limit_is_refused_with_the_reason():
    from advisor.advice import recommend as rec

    spec = CAT.model("llama-3.1-8b").spec
    w = rec.Workload(model=spec, task="inference", batch=1, seq=2048, max_gpus=8, acquire="own")
    rows = {(r.gpu_id, r.count): r for r in rec.recommend(w, CAT)}
    assert rows[("dgx-spark", 1)].ok and rows[("dgx-spark", 1)].system == "dgx-spark"
    assert rows[("dgx-spark", 8)].reasons[0].key == "recommend.max_systems"
    assert rows[("gb200", 8)].reasons[0].key == "recommend.platform"


def test_the_picker_offers_fp4_only_on_cards_whose_tensor_cores_take_it():
    """Issue 34: NVFP4 / MXFP4 chosen in the picker rank only the cards with the format in
    their FP4 tensor cores (catalog fp4_formats); the others are refused with the reason. The
    'auto' search never picks a dequantised FP4 layout."""
    from advisor.advice import recommend as rec
    from advisor.perf import serving_fit as sfit

    spec = CAT.model("llama-3.1-8b").spec
    w = rec.Workload(model=spec, batch=8, seq=2048, max_gpus=8, weights="nvfp4")
    rows = rec.recommend(w, CAT)
    by = {(r.gpu_id, r.count): r for r in rows}
    assert by[("h100-sxm", 8)].reasons[0].key == "support.fp4_format"
    assert by[("mi355x", 8)].reasons[0].key == "support.fp4_format"  # MXFP4 only
    assert any(r.ok and r.gpu_id == "b200" and r.weights == "nvfp4" for r in rows)
    mx = rec.Workload(model=spec, batch=8, seq=2048, max_gpus=8, weights="mxfp4")
    mi = {r.count: r for r in rec.recommend(mx, CAT) if r.gpu_id == "mi355x"}
    # MXFP4 fits and runs on it, and it is priced (OCI BM.GPU.MI355X.8, catalog/clouds/oci.yaml)
    assert mi[8].weights == "mxfp4" and mi[8].tokens_per_s
    assert mi[8].ok and not mi[8].reasons
    auto = rec.Workload(
        model=spec,
        batch=8,
        seq=2048,
        max_gpus=8,
        formats=sfit.SEARCH_FORMATS,
        target_tokens_per_s_per_user=1000.0,  # out of reach: every format is tried
    )
    gpus = {g.id: g for g in CAT.gpus}
    for r in rec.recommend(auto, CAT):
        if r.weights in sfit.FP4_WEIGHTS:
            assert gpus[r.gpu_id].runs_fp4(r.weights), (r.gpu_id, r.weights)


def test_a_rack_spans_its_nvlink_domain_and_a_box_links_over_its_nic():
    from advisor.perf import serving_fit as sfit

    spec = CAT.model("llama-3.1-70b").spec
    gb200, h100, spark = CAT.gpu("gb200"), CAT.gpu("h100-sxm"), CAT.gpu("dgx-spark")
    assert sfit.node_gpus(gb200) == 72 and sfit.node_gpus(h100) == 8 and sfit.node_gpus(spark) == 1
    assert max(sfit.tp_degrees(spec, 64, gb200)) == 64 and max(sfit.tp_degrees(spec, 64, h100)) == 8
    assert sfit.tp_fabric(gb200, 64) is None  # inside the rack: NVLink, not InfiniBand
    assert sfit.tp_fabric(h100, 16) is not None
    assert sfit.multi_node_degrees(spec, 2, spark) == (2,)  # two Sparks over ConnectX-7


def test_servers_without_a_published_price_are_assumptions_and_say_so():
    """Issue 38: a server price read in no source is `server_usd: null` (not priced) with a
    stated assumption of kind `assumption`; a read price is never of that kind."""
    by_id = {s.id: s for s in CAT.systems}
    for sid in ("hgx-4", "oam-4", "oam-8"):
        s = by_id[sid]
        assert s.server_usd is None and s.server_usd_assumed is not None
        assert s.sources["server_usd_assumed"]["kind"] == "assumption"
        assert "server_usd" not in s.sources
    for sid in ("hgx-8", "pcie-8"):
        s = by_id[sid]
        assert s.server_usd is not None and s.server_usd_assumed is None
        assert s.sources["server_usd"]["kind"] == "secondary"
    mi300x = CAT.gpu("mi300x")
    p = systems.purchase_for(mi300x, 16, CAT.systems)
    assert (p.system.id, p.nodes, p.server_assumed) == ("oam-8", 2, True)
    assert p.server_usd == 2 * by_id["oam-8"].server_usd_assumed


@pytest.mark.parametrize(
    "change,field",
    [
        # an assumption beside a read price
        ({"server_usd_assumed": 1000.0}, "server_usd_assumed"),
        # a read price passed off as an assumption
        (
            {
                "sources": {
                    "server_usd": {
                        "url": "https://example.org/x",
                        "read": "2026-12-06",
                        "kind": "assumption",
                        "checked": "derived",
                    }
                }
            },
            "sources.server_usd.kind",
        ),
    ],
)
def test_assumed_server_prices_are_checked(change, field):
    docs = read_documents(default_root())
    bad = copy.deepcopy(docs)
    doc = bad["systems/hgx-8.yaml"]
    if "sources" in change:
        doc["sources"] = {**doc["sources"], **change["sources"]}
    else:
        doc.update(change)
    with pytest.raises(AdvisorError) as e:
        catalog_from_documents(bad)
    assert "systems/hgx-8.yaml" in e.value.message and e.value.field.endswith(":" + field)


def test_an_assumption_needs_kind_assumption():
    docs = read_documents(default_root())
    bad = copy.deepcopy(docs)
    doc = bad["systems/oam-8.yaml"]
    doc["sources"]["server_usd_assumed"] = {
        **doc["sources"]["server_usd_assumed"],
        "kind": "secondary",
    }
    with pytest.raises(AdvisorError) as e:
        catalog_from_documents(bad)
    assert e.value.field.endswith(":sources.server_usd_assumed.kind")
