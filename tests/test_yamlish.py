"""The YAML subset parser agrees with PyYAML on every catalog file and rejects what it cannot read."""

import datetime
from pathlib import Path

import pytest
import yaml

from advisor import yamlish
from advisor.errors import AdvisorError

ROOT = Path(__file__).resolve().parent.parent
YAML_FILES = sorted(
    p for d in ("catalog", "examples") if (ROOT / d).is_dir() for p in (ROOT / d).rglob("*.yaml")
)


def _norm(value):
    """PyYAML (YAML 1.1) turns ISO dates into date objects; advisor keeps the string."""
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


@pytest.mark.parametrize("path", YAML_FILES, ids=[str(p.relative_to(ROOT)) for p in YAML_FILES])
def test_agrees_with_pyyaml(path):
    text = path.read_text(encoding="utf-8")
    assert yamlish.loads(text, str(path)) == _norm(yaml.safe_load(text))


SAMPLE = """\
---
# comment
name: H100 SXM   # trailing comment
id: "h100-sxm"
memory:
  size_gb: 80
  bandwidth_gb_per_s: 3350.0
tags: [a, 'b c', {x: 1, y: "two"}]
items:
- key: 1
  val: [1, 2.5, "x, y"]
- key: 2
  nested:
    deep: true
note: |
  Line one
  line two # not a comment
folded: >-
  a
  b
empty:
url: https://example.com/a#frag
read: 2024-03-18
neg: -3
"""


def test_sample_agrees_with_pyyaml():
    assert yamlish.loads(SAMPLE) == _norm(yaml.safe_load(SAMPLE))


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",
        "a: [1, 2\n",
        "a: 'open\n",
        "a: &x 1\n",
        "a:\n\tb: 1\n",
        "a: b: c\n",
        "- a\nb: 1\n",
    ],
)
def test_rejects_with_line(text):
    with pytest.raises(AdvisorError) as info:
        yamlish.loads(text, "t.yaml")
    assert info.value.key == "yaml.invalid"
    assert "t.yaml:" in str(info.value)
