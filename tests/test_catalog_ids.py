"""Issue 40: catalog ids of every entity are checked against one pattern before they name a file
(a model id `../../../README` replaced the repository's README.md during `mkdocs build`, an
absolute id wrote outside the checkout, a quote and a line break injected a front-matter key),
the generated pages stay inside docs/, and the catalog's other new checks (fabric ranges, tiny
prices, duplicate offers and efficiency files, `*.YAML` files) name the file and the field."""

import shutil
from pathlib import Path

import pytest
import yaml

from advisor.core import yamlsafe
from advisor.core.errors import AdvisorError
from advisor.core.ids import MAX_ID_LENGTH, check_id, is_catalog_id
from advisor.data.catalog import load_catalog
from hooks import generate

ROOT = Path(__file__).resolve().parent.parent / "catalog"
HOSTILE_IDS = [
    "../../../README",
    "/tmp/gpu-advisor-escape",
    'gpt2"\ntitle: injected',
    "gpt2\n",
    "GPT2",
    "a..b",
    "-x",
    ".hidden",
    "a/b",
    "a\\b",
    "a b",
    "x" * (MAX_ID_LENGTH + 1),
    "",
    "\u0131d",  # dotless i: not ASCII
    12,
    None,
]


@pytest.mark.parametrize("bad", HOSTILE_IDS)
def test_check_id_refuses(bad):
    assert not is_catalog_id(bad)
    with pytest.raises(AdvisorError) as info:
        check_id("models/x.yaml", "id", bad)
    assert str(info.value).startswith("models/x.yaml: id: ids are lower-case")
    assert info.value.field == "models/x.yaml:id"
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("good", ["h100-sxm", "qwen2.5-0.5b", "llama-3.1-405b", "a_b", "x" * 64])
def test_check_id_accepts(good):
    assert check_id("gpus/x.yaml", "id", good) == good


def _catalog_copy(tmp_path: Path) -> Path:
    root = tmp_path / "catalog"
    shutil.copytree(ROOT, root)
    return root


def _edit(path: Path, **changes) -> None:
    doc = yamlsafe.loads(path.read_text(encoding="utf-8"), source=path.name)
    doc.update(changes)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")


@pytest.mark.parametrize(
    ("folder", "file", "field"),
    [
        ("models", "gpt2-124m.yaml", "id"),
        ("gpus", "l4.yaml", "id"),
        ("networks", "eth-100.yaml", "id"),
        ("efficiency", "h100-sxm.yaml", "id"),
        ("clouds", "aws.yaml", "provider"),
    ],
)
@pytest.mark.parametrize("bad", ["../../../README", "/tmp/escape", 'x"\nfoo: bar'])
def test_every_entity_id_is_checked_naming_file_and_field(tmp_path, folder, file, field, bad):
    root = _catalog_copy(tmp_path)
    _edit(root / folder / file, **{field: bad})
    with pytest.raises(AdvisorError) as info:
        load_catalog(root)
    assert str(info.value).startswith(f"{folder}/{file}: {field}: ids are lower-case"), str(
        info.value
    )


def test_offer_gpu_id_is_checked(tmp_path):
    root = _catalog_copy(tmp_path)
    path = root / "clouds" / "aws.yaml"
    doc = yamlsafe.loads(path.read_text(encoding="utf-8"), source="aws.yaml")
    doc["offers"][0]["gpu"] = "../../x"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(AdvisorError) as info:
        load_catalog(root)
    assert str(info.value).startswith("clouds/aws.yaml: offers[0].gpu: ids are lower-case")


def test_generated_paths_stay_inside_docs(tmp_path):
    docs = tmp_path / "docs"
    (tmp_path / "README.md").write_text("keep", encoding="utf-8")
    for bad in ("../../../README", "../../README", str(tmp_path / "abs"), 'x"\ny: 1'):
        with pytest.raises(generate.UnsafePath):
            generate.write_stubs(docs, "model", ["gpt2-124m", bad])
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "keep"
    assert not (tmp_path / "abs.md").exists()
    # nothing written at all when one id is bad (every path is checked before the first write)
    assert not list(docs.rglob("*.md"))
    pages = generate.write_stubs(docs, "model", ["gpt2-124m"])
    assert pages == ["models/gpt2-124m.md"]
    assert (docs / "en" / "models" / "gpt2-124m.md").is_file()


def test_front_matter_is_one_key_whatever_the_id():
    # even an id the loader would refuse cannot add a key: the value is a JSON string
    text = generate.stub("model", 'x"\ntitle: injected\nfoo: "')
    front = text.split("---\n")[1]
    assert yaml.safe_load(front) == {"advisor_item": 'model:x"\ntitle: injected\nfoo: "'}
    assert generate.stub("gpu", "h100-sxm").startswith('---\nadvisor_item: "gpu:h100-sxm"\n---\n')


def test_network_ranges_name_file_and_field(tmp_path):
    for field, value in (("gb_per_s_per_gpu", 1e-300), ("latency_us", 1e-300), ("latency_us", 1e9)):
        root = _catalog_copy(tmp_path / field / str(value))
        _edit(root / "networks" / "eth-100.yaml", **{field: value})
        with pytest.raises(AdvisorError) as info:
            load_catalog(root)
        assert str(info.value).startswith(f"networks/eth-100.yaml: {field}: must be"), str(
            info.value
        )


def test_tiny_price_refused(tmp_path):
    root = _catalog_copy(tmp_path)
    path = root / "clouds" / "aws.yaml"
    doc = yamlsafe.loads(path.read_text(encoding="utf-8"), source="aws.yaml")
    offer = doc["offers"][0]
    for key in [k for k in offer if k.startswith("on_demand_")]:
        del offer[key]
    offer["on_demand_usd_per_gpu_hour"] = 1e-300
    for key in [k for k in offer if k.startswith(("spot_", "reserved_"))]:
        del offer[key]
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(AdvisorError) as info:
        load_catalog(root)
    assert "clouds/aws.yaml: offers[0]: on_demand_usd_per_gpu_hour: must be at least 0.01" in str(
        info.value
    )


def test_duplicate_offer_refused(tmp_path):
    root = _catalog_copy(tmp_path)
    path = root / "clouds" / "aws.yaml"
    doc = yamlsafe.loads(path.read_text(encoding="utf-8"), source="aws.yaml")
    cheaper = dict(doc["offers"][0])
    doc["offers"].append(cheaper)
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    n = len(doc["offers"]) - 1
    with pytest.raises(AdvisorError) as info:
        load_catalog(root)
    assert str(info.value).startswith(f"clouds/aws.yaml: offers[{n}]: the same gpu, instance")


def test_second_efficiency_file_for_one_card_refused(tmp_path):
    root = _catalog_copy(tmp_path)
    shutil.copy(root / "efficiency" / "h100-sxm.yaml", root / "efficiency" / "zz-h100.yaml")
    with pytest.raises(AdvisorError) as info:
        load_catalog(root)
    assert str(info.value).startswith("efficiency/zz-h100.yaml: id: 'h100-sxm' also has")
    assert "efficiency/h100-sxm.yaml" in str(info.value)


@pytest.mark.parametrize("name", ["extra.YAML", "extra.Yaml", "extra.yml"])
def test_other_yaml_spellings_refused(tmp_path, name):
    root = _catalog_copy(tmp_path)
    shutil.copy(root / "gpus" / "l4.yaml", root / "gpus" / name)
    with pytest.raises(AdvisorError) as info:
        load_catalog(root)
    assert str(info.value).startswith(f"gpus/{name}: catalog documents end in .yaml")
