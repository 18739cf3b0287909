"""Counts as people type them (advisor.core.counts, issue 39): thousands separators everywhere a
calculator takes a whole number, K/M/B/T suffixes in its token counts as the CLI's --tokens;
the cluster planner's GPU counts in steps of the node size."""

from __future__ import annotations

import pytest

from advisor import webapi
from advisor.core.counts import parse_count
from advisor.core.errors import AdvisorError
from advisor.perf import cluster

# (text, value): SI multipliers (K 10^3, M 10^6, B 10^9, T 10^12), exact decimal products
GOLDEN = [
    ("2T", 2 * 10**12),
    ("15t", 15 * 10**12),
    ("1.5B", 1_500_000_000),
    ("1,5B", 1_500_000_000),
    ("1.1T", 1_100_000_000_000),
    ("12 k", 12_000),
    ("2e12", 2 * 10**12),
    ("2,000,000,000,000", 2 * 10**12),
    ("2.000.000.000.000", 2 * 10**12),
    ("2 000 000", 2_000_000),
    ("2\u00a0000\u00a0000", 2_000_000),
    ("8,192", 8192),
    ("1000", 1000),
]


@pytest.mark.parametrize(("text", "value"), GOLDEN)
def test_golden_token_counts(text, value):
    got = parse_count("tokens", text, suffixes=True)
    assert got == value and isinstance(got, int)


@pytest.mark.parametrize(
    "text", ["2T", "abc", "2,00,000", "1,000.000", "--2", "nanT", "1_000", "x" * 100]
)
def test_not_a_count_without_suffixes(text):
    with pytest.raises(AdvisorError) as e:
        parse_count("seq", text)
    assert e.value.field == "seq"


def test_a_decimal_comma_is_not_a_group():
    assert parse_count("x", "2,5") == 2.5  # check_int then names it as not whole


@pytest.mark.parametrize("text", ["2T", "15T", "2e12", "1000", "1.5B"])
def test_same_reading_as_the_cli(text):
    from advisor.commands.time import _tokens

    assert parse_count("tokens", text, suffixes=True) == _tokens("tokens")(text)


@pytest.mark.parametrize(("calc", "field"), [("cluster", "tokens"), ("budget", "train_tokens")])
@pytest.mark.parametrize("text", ["2T", "2,000,000,000,000", "2 000 000 000 000"])
def test_web_api_token_fields(calc, field, text):
    r = webapi.run(calc, {field: text, "deadline_days": ""})
    assert "error" not in r, r
    want = webapi.run(calc, {field: 2 * 10**12, "deadline_days": ""})
    assert r == want


def test_web_api_counts_take_separators_and_name_bad_ones():
    assert webapi.run("vram", {"seq": "8,192"}) == webapi.run("vram", {"seq": 8192})
    r = webapi.run("vram", {"seq": "8k"})  # a suffix only where the CLI takes one
    assert r["error"]["field"] == "seq" and r["error"]["key"] == "field.not_number"
    r = webapi.run("cluster", {"tokens": "2,5"})
    assert r["error"]["key"] == "field.not_integer" and r["error"]["field"] == "tokens"
    r = webapi.run("cluster", {"tokens": "1e30T"})
    assert r["error"]["key"] == "field.too_large"


def test_gpu_counts_in_node_steps():
    counts = cluster.gpu_counts(768)
    assert counts[:4] == (1, 2, 4, 8)
    assert all(n % cluster.GPUS_PER_NODE == 0 for n in counts[4:])
    assert 768 in counts and 24 in counts and 96 in counts
    # never more than 1.5x from one count to the next past a node
    assert all(b / a <= 2 for a, b in zip(counts, counts[1:], strict=False))
    assert all(b / a <= 1.5 for a, b in zip(counts[5:], counts[6:], strict=False))
    assert cluster.gpu_counts()[-1] == cluster.MAX_CLUSTER_GPUS
    assert cluster.gpu_counts(1001)[-1] == 1000  # the whole 8-GPU nodes of the limit


def test_768_gpus_get_a_plan():
    """Issue 39: at most 768 GPUs and a deadline that 512 cannot meet gave "no plan" when only
    powers of 2 were tried; 768 GPUs (96 nodes) meets it."""
    r = webapi.run("cluster", {"max_gpus": "768", "deadline_days": "16"})
    assert r["chosen"] is not None, r["reason"]
    assert r["chosen"]["gpus"] == 768 and r["chosen"]["nodes"] == 96
    lay = r["chosen"]["layout"]
    assert lay["tp"] * lay["pp"] * lay["dp"] == 768
