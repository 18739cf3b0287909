"""advisor.core.vocab: one definition of every choice list, used by the modules and shipped to the page
(no list copied into render.mjs or hooks/reports.py); `task` mapped explicitly where a layer
speaks other words; `weights` (inference) and `quant` (QLoRA base) as two names."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

from advisor import webapi
from advisor.advice import profile, recommend
from advisor.arch import flops, quant
from advisor.core import vocab
from advisor.data.catalog import load_catalog
from advisor.memory import estimate as memory
from advisor.money import cost

CAT = load_catalog(ROOT / "catalog")


def test_modules_validate_against_the_vocabulary():
    assert recommend.TASKS is vocab.TASKS and webapi.TASKS is vocab.TASKS
    assert flops.TASKS == vocab.TASKS[1:] == vocab.TRAINING_TASKS
    assert memory.PRECISIONS is vocab.PRECISIONS and memory.SHARDING is vocab.SHARDING
    assert memory.QUANT is vocab.QLORA_BASE_FORMATS
    assert webapi.INFER_WEIGHTS is vocab.WEIGHT_FORMATS
    assert set(vocab.WEIGHT_FORMATS) == set(quant.FORMATS) == set(quant.WEIGHT_FORMATS)
    assert cost.CURRENCIES is vocab.CURRENCIES and profile.ACQUIRE is vocab.ACQUIRE


def test_profile_tasks_map_explicitly():
    assert [vocab.task_from_profile(t, m) for t, m in [
        ("serving", None), ("training", None), ("fine-tuning", "qlora"), ("fine-tuning", None),
    ]] == ["inference", "train", "qlora", "lora"]  # fmt: skip
    with pytest.raises(ValueError):
        vocab.task_from_profile("train")


def test_no_choice_list_copied_into_the_page_code_or_the_report_form():
    js = (ROOT / "calcruntime/browser/render.mjs").read_text(encoding="utf-8")
    form = (ROOT / "hooks/reports.py").read_text(encoding="utf-8")
    for word in ("adamw-8bit", "amp-fp16", "zero2", "selective", "gptq"):
        assert word not in js, word
    for word in ('"fine-tuning"', '"qlora"', '"AZN"', '"either"'):
        assert word not in form, word


def test_words_that_need_translating_have_labels_in_both_languages():
    from hooks.templating import load_strings

    strings = load_strings(ROOT / "templates" / "i18n")
    for name in ("task", "phase", "checkpointing", "acquire"):
        for value, key in vocab.form_choices()[name]:
            assert key == f"calc.o.{value}"
            assert key in strings["az"] and key in strings["en"], key


def test_weights_and_qlora_base_are_two_names():
    spec = CAT.model("llama-3.1-8b").spec
    new = recommend.Workload(model=spec, task="inference", weights="int4")
    old = recommend.Workload(model=spec, task="inference", quant="int4")  # the old name
    assert new.inference_weights == old.inference_weights == "int4"
    assert recommend.ranked_rows(new, CAT) == recommend.ranked_rows(old, CAT)
    q = recommend.Workload(model=spec, task="qlora", quant="int8", weights="awq")
    assert (
        q.qlora_base == "int8" and recommend.Workload(model=spec, task="qlora").qlora_base == "nf4"
    )
    with pytest.raises(Exception, match="weights"):
        recommend.Workload(model=spec, weights="int3").validated()


def test_the_prerendered_forms_list_the_vocabulary(built_site):
    page = (built_site / "en/calculators/vram/index.html").read_text(encoding="utf-8")
    for field in ("precision", "optimizer", "sharding", "weights"):
        select = re.search(rf'<select id="[^"]*" name="{field}">(.*?)</select>', page, re.S)
        assert select, field
        values = re.findall(r'<option value="([^"]*)"', select.group(1))
        want = vocab.FORM_FIELDS[field]
        if field == "weights":
            # the formats gated by the card (support.GATED_WEIGHTS) only where the form's default
            # card has a path for them (support.form_paths; render.mjs formatOptions)
            from advisor.data import support
            from advisor.data.catalog import load_catalog
            from advisor.webapi.vram import VramRequest

            card = load_catalog().gpu(VramRequest.defaults()["gpu"])
            paths = support.form_paths(card)["weights"]
            want = tuple(v for v in want if v not in support.GATED_WEIGHTS or v in paths)
            assert "mlx-4bit" not in want and "q4_k_m" in want  # an NVIDIA default card
        assert tuple(values) == want, field


def test_every_string_the_calculators_name_is_translated():
    """render.mjs falls back to English for a missing key: every key it names literally, every
    form field's label, every engine and every error-band kind must be in both languages."""
    from advisor.perf import accuracy
    from hooks.templating import load_strings

    strings = load_strings(ROOT / "templates" / "i18n")
    js = (ROOT / "calcruntime/browser/render.mjs").read_text(encoding="utf-8")
    keys = set(re.findall(r'"((?:calc|err)\.[a-z_.]*[a-z_])"', js))
    fields = re.findall(
        r'\["([a-z_]+)", "(?:model|gpu|network|select|number|text|config|tokens|flag)"', js
    )
    keys |= {f"calc.f.{f}" for f in fields}
    keys |= {f"calc.band.k.{k}" for k in accuracy.KINDS}
    keys |= {key for _, key in vocab.form_choices()["engine"]}
    assert len(keys) > 120
    for lang in ("az", "en"):
        missing = sorted(k for k in keys if k not in strings[lang])
        assert missing == [], (lang, missing)


def test_every_error_key_raised_by_advisor_is_translated():
    """The site shows an AdvisorError by its key (`err.<key>`) in the reader's language: every
    key that advisor/ raises literally must have a message in both languages. Catalog and
    benchmark-file checks (`catalog.*`, `bench.*`, `offer.*`) run at build time on the project's
    own data and speak to its developers, in English."""
    import ast

    from hooks.templating import load_strings

    strings = load_strings(ROOT / "templates" / "i18n")
    keys = set()
    for path in (ROOT / "advisor").rglob("*.py"):
        if "commands" in path.parts:  # the terminal's sub-commands speak English
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "AdvisorError"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and not node.args[0].value.startswith(("catalog.", "bench.", "offer."))
            ):
                keys.add(node.args[0].value)
    assert len(keys) > 40
    for lang in ("az", "en"):
        missing = sorted(k for k in keys if f"err.{k}" not in strings[lang])
        assert missing == [], (lang, missing)
