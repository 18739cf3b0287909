"""The accelerator and cloud-price catalog: schema over every file, the known traps, and each
rejection naming its file and field."""

import json
import shutil
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.core import yamlsafe
from advisor.core.errors import AdvisorError
from advisor.core.units import GIB
from advisor.data.catalog import load_catalog
from advisor.data.hardware import FIGURE_FIELDS, TIERS, gpu_from_dict
from advisor.data.prices import convert, offers_from_dict

ROOT = Path(__file__).resolve().parent.parent / "catalog"
CAT = load_catalog(ROOT)


def test_size_and_tiers():
    assert len(CAT.gpus) >= 30
    assert {g.tier for g in CAT.gpus} == set(TIERS)
    assert len(CAT.providers) >= 6 and len(CAT.offers) >= 40


def test_every_figure_has_a_dated_source():
    for g in CAT.gpus:
        for f in FIGURE_FIELDS:
            if f == "price_usd" and g.price_usd is None:
                continue
            if getattr(g, f, None) is None:  # optional figures (scale_up, tdp_w of a TPU...)
                continue
            keys = [f]
            if f in ("peak_tflops", "peak_tops"):
                keys = [f"{f}.{p}" for p in getattr(g, f)]
            for k in keys:
                s = g.source(k)
                assert s.url.startswith("http") and len(s.read) == 10, (g.id, k)
    for o in CAT.offers:
        assert o.source_url.startswith("http") and len(o.read) == 10
        # no on-demand price only where the file says why (AWS Trn2: spot/capacity block only)
        assert (o.on_demand_usd_per_gpu_hour or 0) > 0 or o.on_demand_note, o.instance
        assert o.on_demand_usd_per_gpu_hour is None or o.on_demand_usd_per_gpu_hour > 0


def test_traps():
    assert CAT.gpu("h100-pcie").memory_type == "HBM2e"
    assert CAT.gpu("h100-sxm").memory_type == "HBM3"
    l40s, l40 = CAT.gpu("l40s"), CAT.gpu("l40")
    assert l40s.peak_tflops["bf16"] == pytest.approx(2 * l40.peak_tflops["bf16"], rel=0.01)
    h100 = CAT.gpu("h100-sxm")
    assert h100.peak_tflops["bf16"] < 1000 and h100.peak_tflops["fp8"] < 2000  # dense, not sparse
    # GeForce: PyTorch's FP32-accumulate rate, half the FP16-accumulate 330.3 (Ada whitepaper)
    assert CAT.gpu("rtx-4090").peak_tflops["bf16"] == pytest.approx(165.2)


def test_ridge_point_and_memory():
    h100 = CAT.gpu("h100-sxm")
    assert h100.ridge_point("bf16") == pytest.approx(989.4e12 / 3350e9)
    assert h100.memory_bytes == 80 * GIB and h100.memory_gib == pytest.approx(80.0)


def test_unknown_gpu_suggests():
    with pytest.raises(AdvisorError) as info:
        CAT.gpu("h100")
    assert info.value.key == "name.unknown" and "h100-sxm" in info.value.params["suggestions"]
    with pytest.raises(AdvisorError):
        CAT.offers_for("a1000")
    with pytest.raises(AdvisorError):
        CAT.offers_by_provider("awz")


def test_offers_for_sorted_and_per_gpu_derived():
    offers = CAT.offers_for("h100-sxm")
    prices = [o.on_demand_usd_per_gpu_hour for o in offers]
    assert prices == sorted(prices) and len(offers) >= 5
    p5 = next(o for o in offers if o.instance == "p5.48xlarge")
    assert p5.per_gpu_derived and p5.on_demand_usd_per_gpu_hour == pytest.approx(55.04 / 8)


def test_currency():
    assert convert(10.0, "AZN", CAT.currency) == pytest.approx(17.0)
    assert convert(10.0, "USD", CAT.currency) == 10.0
    assert convert(2.0, "EUR", {"EUR": 0.5}) == 1.0
    with pytest.raises(AdvisorError) as info:
        convert(1.0, "AZM", CAT.currency)
    assert info.value.key == "name.unknown" and "AZN" in info.value.params["suggestions"]


def test_to_json_has_everything():
    data = json.loads(CAT.to_json())
    assert len(data["gpus"]) == len(CAT.gpus) and len(data["offers"]) == len(CAT.offers)
    assert data["currency"]["rates"]["AZN"]["per_usd"] == 1.7 and data["models"]


def test_cli_gpus(capsys):
    assert main(["gpus", "--tier", "workstation", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["tier"] for r in rows} == {"workstation"}
    assert main(["gpus"]) == 0 and "h100-sxm" in capsys.readouterr().out
    # issue 34: the FP4 peak, and why a card has no price
    assert main(["gpus", "--tier", "datacenter"]) == 0
    rows = {r.split()[0]: r for r in capsys.readouterr().out.splitlines() if r.strip()}
    assert "fp4 TF" in rows["id"] and "10050.0" in rows["mi355x"]
    assert rows["mi355x"].endswith("not published") and rows["gb200"].endswith("with its system")
    assert rows["tpu-7x"].endswith("rented only")
    assert main(["gpus", "--tier", "server"]) == 2


GOOD = yamlsafe.load_file(ROOT / "gpus" / "h100-sxm.yaml")


def _bad(**changes):
    doc = json.loads(json.dumps(GOOD))
    for k, v in changes.items():
        if v is None:
            doc.pop(k, None)
        else:
            doc[k] = v
    return doc


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"memory_bandwidth_gb_per_s": -1.0}, "memory_bandwidth_gb_per_s"),
        ({"tdp_w": None}, "tdp_w"),
        ({"tier": "server"}, "tier"),
        ({"vendor": "nvdia"}, "vendor"),
        ({"launch_date": "March 2022"}, "launch_date"),
        ({"peak_tflops": {"bf16": {"value": 1978.9, "sparse": True}}}, "peak_tflops.bf16"),
        ({"peak_tflops": {"fp12": 3.0}}, "peak_tflops.fp12"),
        ({"peak_tflops": {"bf16": 989.4, "fp8": 500.0}}, "peak_tflops.fp8"),
        (
            {"peak_tflops": {"bf16": 1978.9}, "datasheet_sparse_tflops": {"bf16": 1978.9}},
            "peak_tflops.bf16",
        ),
        ({"peak_tflops": {"fp16": {"value": 330.3, "accumulate": "fp16"}}}, "peak_tflops.fp16"),
        ({"source": None, "sources": {}}, "sources.memory_gib"),
        (
            {"source": {"url": "nvidia.com", "read": "2026-12-02", "checked": "recalled"}},
            "source.url",
        ),
        ({"price_usd": 25000.0, "price_date": None, "price_kind": "street"}, "price_date"),
        # issue 34: scale-up domains, unified memory, FP4 formats
        (
            {"scale_up": {"domain_size": 0, "gb_per_s": 900.0, "fabric": "nvlink4"}},
            "scale_up.domain_size",
        ),
        ({"scale_up": {"domain_size": 8, "gb_per_s": 900.0, "fabric": "ib"}}, "scale_up.fabric"),
        (
            {"scale_up": {"domain_size": 8, "gb_per_s": -1, "fabric": "nvlink4"}},
            "scale_up.gb_per_s",
        ),
        # a 2:4-sparse figure typed where the dense one goes, with no mark: twice a format step
        ({"peak_tflops": {"bf16": 989.4, "fp8": 3957.8}}, "peak_tflops.fp8"),
        ({"peak_tflops": {"bf16": 1978.9, "fp16": 989.4}}, "peak_tflops.bf16"),
        ({"peak_tflops": {"bf16": 989.4, "fp8": 1978.9, "fp4": 7915.6}}, "peak_tflops.fp4"),
        ({"unified_memory": {"default_fraction": 1.2}}, "unified_memory.default_fraction"),
        ({"unified_memory": {"default_fraction": 0}}, "unified_memory.default_fraction"),
        ({"fp4_formats": ["nvfp4"]}, "fp4_formats"),  # the H100 has no FP4 peak
        # why a card has no price: a choice, and never beside a price
        (
            {"price_usd": None, "price_date": None, "price_kind": None, "price_status": "tbd"},
            "price_status",
        ),  # fmt: skip
        ({"price_status": "not_published"}, "price_status"),
        (
            {"peak_tflops": {"bf16": 989.4, "fp8": 1978.9, "fp4": 3957.8}, "fp4_formats": ["int4"]},
            "fp4_formats[0]",
        ),
    ],
)
def test_gpu_rejections_name_file_and_field(changes, field):
    if "peak_tflops" in changes and "datasheet_sparse_tflops" not in changes:
        changes.setdefault("datasheet_sparse_tflops", None)
    with pytest.raises(AdvisorError) as info:
        gpu_from_dict(_bad(**changes), "gpus/h100-sxm.yaml")
    assert str(info.value).startswith(f"gpus/h100-sxm.yaml: {field}"), str(info.value)


def _provider(offer):
    return {
        "provider": "x",
        "name": "X",
        "source": {"url": "https://x.example", "read": "2026-12-02", "checked": "recalled"},
        "offers": [offer],
    }


@pytest.mark.parametrize(
    ("offer", "field"),
    [
        (
            {
                "gpu": "l4",
                "instance": "a",
                "gpus_per_instance": 1,
                "region": "r",
                "on_demand_usd_per_gpu_hour": -2.0,
            },
            "on_demand_usd_per_gpu_hour",
        ),
        (
            {"gpu": "l4", "instance": "a", "gpus_per_instance": 1, "region": "r"},
            "on_demand_usd_per_gpu_hour",
        ),
        (
            {
                "gpu": "l4",
                "instance": "a",
                "gpus_per_instance": 1,
                "region": "r",
                "on_demand_usd_per_gpu_hour": 1.0,
                "spot_usd_per_gpu_hour": 2.0,
            },
            "spot_usd_per_gpu_hour",
        ),
        (
            {
                "gpu": "l4",
                "instance": "a",
                "gpus_per_instance": 0,
                "region": "r",
                "on_demand_usd_per_gpu_hour": 1.0,
            },
            "gpus_per_instance",
        ),
    ],
)
def test_offer_rejections_name_file_and_field(offer, field):
    with pytest.raises(AdvisorError) as info:
        offers_from_dict(_provider(offer), "clouds/x.yaml")
    assert str(info.value).startswith(f"clouds/x.yaml: offers[0]: {field}"), str(info.value)


def test_offer_with_unknown_gpu_names_file_and_field(tmp_path):
    shutil.copytree(ROOT / "gpus", tmp_path / "gpus")
    (tmp_path / "clouds").mkdir()
    (tmp_path / "clouds" / "x.yaml").write_text(
        "provider: x\nname: X\nsource: {url: 'https://x.example', read: 2026-12-02, "
        "checked: recalled}\noffers:\n  - gpu: h100\n    instance: a\n    gpus_per_instance: 1\n"
        "    region: r\n    on_demand_usd_per_gpu_hour: 2.0\n",
        encoding="utf-8",
    )
    with pytest.raises(AdvisorError) as info:
        load_catalog(tmp_path)
    msg = str(info.value)
    assert msg.startswith("clouds/x.yaml: offers[0].gpu:") and "h100-sxm" in msg


def test_bad_yaml_file_in_tmp_catalog(tmp_path):
    (tmp_path / "gpus").mkdir()
    (tmp_path / "gpus" / "bad.yaml").write_text(
        (ROOT / "gpus" / "l4.yaml").read_text().replace("memory_gib: 24.0", "memory_gib: 0.0")
    )
    with pytest.raises(AdvisorError) as info:
        load_catalog(tmp_path)
    assert str(info.value).startswith("gpus/bad.yaml: memory_gib")


def test_int8_is_in_tops_not_tflops(tmp_path):
    """int8 throughput counts integer operations: it lives in `peak_tops`, and a `peak_tflops`
    entry for it is refused with a message naming the file and the field."""
    h100 = CAT.gpu("h100-sxm")
    assert "int8" not in h100.peak_tflops and h100.peak_tops["int8"] == pytest.approx(1978.9)
    assert h100.peak_ops("int8") == pytest.approx(1978.9e12)
    assert h100.to_dict()["peak_tops"] == {"int8": pytest.approx(1978.9)}
    assert h100.source("peak_tops.int8").url.startswith("https://")
    (tmp_path / "gpus").mkdir()
    text = (ROOT / "gpus" / "h100-sxm.yaml").read_text(encoding="utf-8")
    moved = text.replace(
        "  fp8: 1978.9\npeak_tops:  # dense integer tensor throughput, TOPS\n", "  fp8: 1978.9\n", 1
    )
    assert moved != text
    (tmp_path / "gpus" / "bad.yaml").write_text(moved, encoding="utf-8")
    with pytest.raises(AdvisorError) as info:
        load_catalog(tmp_path)
    msg = str(info.value)
    old_field = "peak_tflops" + ".int8"  # spelled apart, so that the units rename leaves it
    assert msg.startswith(f"gpus/bad.yaml: {old_field}:") and "under peak_tops" in msg


def test_power_may_be_missing_only_for_a_rented_only_chip():
    """A TPU's or Trainium's power is unpublished: tdp_w null is accepted with tdp_note and no
    price, refused otherwise (issue 34)."""
    doc = _bad(price_usd=25000.0, price_date="2024-01-01", price_kind="street")
    doc["tdp_w"] = None
    doc["tdp_note"] = "unpublished"
    with pytest.raises(AdvisorError) as info:
        gpu_from_dict(doc, "gpus/h100-sxm.yaml")
    assert str(info.value).startswith("gpus/h100-sxm.yaml: tdp_w")
    doc = _bad()
    doc.update(tdp_w=None, price_usd=None, price_date=None, price_kind=None)
    with pytest.raises(AdvisorError):
        gpu_from_dict(doc, "gpus/h100-sxm.yaml")  # no tdp_note
    doc["tdp_note"] = "unpublished"
    assert gpu_from_dict(doc, "gpus/h100-sxm.yaml").tdp_w is None
    tpu = CAT.gpu("tpu-v6e")
    assert tpu.tdp_w is None and tpu.price_usd is None


def test_accelerators_of_2026():
    """The figures issue 34 asked for, as read from their sources (dense, per accelerator)."""
    b300, gb300, gb200 = CAT.gpu("b300"), CAT.gpu("gb300"), CAT.gpu("gb200")
    assert b300.memory_gib == 288 and b300.peak_tflops["fp4"] == pytest.approx(13125)
    assert gb300.peak_tflops["fp4"] == 15000 and gb300.scale_up.domain_size == 72
    assert gb200.scale_up.domain_size == 72 and gb200.scale_up.fabric == "nvlink5"
    assert b300.scale_up.domain_size == 8
    mi355 = CAT.gpu("mi355x")
    assert mi355.peak_tflops["fp4"] == pytest.approx(20100 / 2)  # half the sparse 20.1 PF
    assert mi355.fp4_formats == ("mxfp4",) and not mi355.runs_fp4("nvfp4")
    assert b300.runs_fp4("nvfp4") and not CAT.gpu("h100-sxm").runs_fp4("nvfp4")
    assert (
        CAT.gpu("tpu-7x").peak_tflops["fp8"] == 4614
        and CAT.gpu("tpu-7x").scale_up.domain_size == 9216
    )
    assert CAT.gpu("trainium2").peak_tflops["bf16"] == 667
    m3 = CAT.gpu("m3-ultra")
    assert m3.unified_memory.default_fraction == 0.75
    assert m3.usable_memory_bytes == m3.memory_bytes == int(512 * GIB * 0.75)
    assert m3.memory_gib == 512  # the physical size stays on the page
    assert CAT.gpu("dgx-spark").memory_bandwidth_gb_per_s == 273


@pytest.mark.parametrize(
    ("path", "old", "new", "field"),
    [
        # a 2:4-sparse FP8 figure (twice the dense 4,500) typed where the dense one goes
        ("gpus/b200.yaml", "fp8: 4500.0", "fp8: 9000.0", "peak_tflops.fp8"),
        (
            "gpus/m3-ultra.yaml",
            "default_fraction: 0.75",
            "default_fraction: 1.2",
            "unified_memory.default_fraction",
        ),  # fmt: skip
        ("gpus/gb200.yaml", "domain_size: 72", "domain_size: 0", "scale_up.domain_size"),
        (
            "systems/gb200-nvl72.yaml",
            "scale_up_domain: 72",
            "scale_up_domain: 0",
            "scale_up_domain",
        ),  # fmt: skip
    ],
)
def test_bad_catalog_fails_the_build_naming_file_and_field(
    tmp_path, monkeypatch, path, old, new, field
):
    """Issue 34: bad catalog data fails the site build (hooks/state.py, the build's one load of
    the catalog) with a message naming the file and the field; here on a copy of the real
    catalog with one fault each."""
    import types

    from mkdocs.exceptions import PluginError

    from hooks import state

    root = tmp_path / "catalog"
    shutil.copytree(Path(__file__).resolve().parents[1] / "catalog", root)
    text = (root / path).read_text(encoding="utf-8")
    assert old in text
    (root / path).write_text(text.replace(old, new), encoding="utf-8")
    monkeypatch.setenv("ADVISOR_CATALOG", str(root))
    config = types.SimpleNamespace(config_file_path=None)
    with pytest.raises(PluginError) as info:
        state.load(config)
    assert str(info.value).startswith(f"invalid catalog data: catalog/{path}: {field}:"), str(
        info.value
    )


def test_a_recalled_figure_says_where_it_was_looked_for():
    """Issue 34: a figure no stored source gives stays marked `checked: recalled`, and its note
    records where it was looked for (the data says so, not a report); the figures read since
    carry the source they were read in. Here on every card and system document."""
    import re

    marked = {}
    for folder in ("gpus", "systems"):
        for path in sorted((ROOT / folder).glob("*.yaml")):
            doc = yamlsafe.loads(path.read_text(encoding="utf-8"), str(path))
            sources = dict(doc.get("sources") or {})
            if isinstance(doc.get("source"), dict):
                sources["source"] = doc["source"]
            for key, s in sources.items():
                if isinstance(s, dict) and s.get("checked") == "recalled":
                    marked[f"{folder}/{path.name}:{key}"] = s.get("note", "")
    unsaid = [k for k, note in marked.items() if not re.search(r"[Ll]ooked|[Ss]earched", note)]
    assert not unsaid, unsaid
    # read on 2026-12-06 (issue 34): no longer recalled
    for gpu_id, key in (
        ("dgx-spark", "launch_date"),
        ("tpu-v6e", "memory_type"),
        ("rtx-pro-6000-blackwell", "interconnect_gb_per_s"),
        ("gaudi2", "peak_tflops.fp8"),
        ("ryzen-ai-max-395", "interconnect"),
    ):
        assert CAT.gpu(gpu_id).source(key).checked != "recalled", (gpu_id, key)
    # Google states the v6e's memory as HBM without its generation; the label says no more
    assert CAT.gpu("tpu-v6e").memory_type == "HBM"
