"""Released models that share a preset's architecture (`same_architecture` in
catalog/models/*.yaml): DeepSeek-R1 is asked for by its own id and answers with DeepSeek-V3's
layer list, under its own name and source; bad variant data fails the load naming file and
field."""

import shutil
from pathlib import Path

import pytest

from advisor.advice.profile import parse_profile
from advisor.arch.models import param_count
from advisor.cli import main
from advisor.core.errors import AdvisorError
from advisor.data.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent / "catalog"
CAT = load_catalog(ROOT)


def test_deepseek_r1_is_deepseek_v3s_architecture_under_its_own_name_and_source():
    v3, r1 = CAT.model("deepseek-v3"), CAT.model("deepseek-r1")
    assert (r1.id, r1.display_name) == ("deepseek-r1", "DeepSeek-R1")
    assert r1.spec.name == "deepseek-r1" and r1.spec.display_name == "DeepSeek-R1"
    assert r1.source_url.endswith("deepseek-ai/DeepSeek-R1/blob/main/config.json")
    assert r1.source_url != v3.source_url
    # the same layer list, so every count is the same: 671.0B (DeepSeek-V3 report, arXiv 2412.19437)
    assert param_count(r1.spec) == param_count(v3.spec) == 671_026_404_352
    assert r1.spec.layers == v3.spec.layers
    assert "deepseek-r1" in CAT.model_names() and "deepseek-r1" not in [m.id for m in CAT.models]


def test_cli_lists_and_answers_the_variant(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "\ndeepseek-r1 " in out and "1 sharing a preset's architecture" in out
    assert main(["models", "show", "deepseek-r1"]) == 0
    assert capsys.readouterr().out.startswith("DeepSeek-R1  (deepseek_v3, MLA)")


def test_a_client_profile_may_name_the_variant():
    text = (
        "organisation: Bank\nworkloads:\n"
        "  - {name: assistant, model: deepseek-r1, task: serving, users: 64, concurrent_users: 8}\n"
    )
    p = parse_profile(text, CAT)
    assert p.workloads[0].model.preset == "deepseek-r1"
    with pytest.raises(AdvisorError, match="did you mean deepseek-r1"):
        parse_profile(text.replace("deepseek-r1", "deepseek-r2"), CAT)


def _copy(tmp_path):
    dst = tmp_path / "catalog"
    shutil.copytree(ROOT, dst)
    return dst


def test_a_variant_id_that_is_another_models_id_fails_naming_the_file(tmp_path):
    dst = _copy(tmp_path)
    f = dst / "models" / "deepseek-v3.yaml"
    f.write_text(f.read_text().replace("  - id: deepseek-r1", "  - id: kimi-k2", 1))
    with pytest.raises(AdvisorError, match="kimi-k2") as exc:
        load_catalog(dst)
    assert "models/" in exc.value.message


def test_a_variant_without_a_source_fails_naming_the_field(tmp_path):
    dst = _copy(tmp_path)
    f = dst / "models" / "deepseek-v3.yaml"
    text = f.read_text()
    head, tail = text.split(
        "    source:\n      url: https://huggingface.co/deepseek-ai/DeepSeek-R1", 1
    )
    tail = tail.split("\nconfig:", 1)[1]
    f.write_text(head + "config:" + tail)
    with pytest.raises(AdvisorError) as exc:
        load_catalog(dst)
    assert exc.value.field == "models/deepseek-v3.yaml:same_architecture[0].source"
