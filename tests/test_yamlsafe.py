"""advisor.core.yamlsafe: PyYAML's safe loading with advisor's limits. Every catalog, example and
translation file reads the same on both event sources (libyaml and pure-Python PyYAML, which
Pyodide has); hostile or broken input ends in one AdvisorError naming the file, line and column."""

from pathlib import Path

import pytest

from advisor.core import yamlsafe
from advisor.core.errors import AdvisorError

ROOT = Path(__file__).resolve().parent.parent
YAML_FILES = sorted(
    p
    for d in ("catalog", "examples", "templates")
    if (ROOT / d).is_dir()
    for p in (ROOT / d).rglob("*.yaml")
) + [ROOT / "publisher.yaml"]
LOADERS = [yamlsafe._PyLoader] + ([yamlsafe._CLoader] if yamlsafe._CParser else [])


@pytest.fixture(params=LOADERS, ids=lambda c: c.__name__)
def loader(request, monkeypatch):
    monkeypatch.setattr(yamlsafe, "_Loader", request.param)
    return request.param


def test_every_file_reads_the_same_with_libyaml_and_pure_python(monkeypatch):
    assert len(YAML_FILES) > 50
    for path in YAML_FILES:
        text = path.read_text(encoding="utf-8")
        results = []
        for cls in LOADERS:
            monkeypatch.setattr(yamlsafe, "_Loader", cls)
            results.append(yamlsafe.loads(text, str(path)))
        assert all(r == results[0] for r in results), path
        assert isinstance(results[0], dict), path


SCALARS = """\
date: 2024-03-18
no_bool: no
yes_text: yes
octal_text: 0o17
hex_text: 0x1f
sexagesimal_text: 1:30
exp: 1e3
half: .5
grouped: 1_000
neg: -3
tilde: ~
empty:
true_: True
inf: .inf
url: https://example.com/a#frag
quoted: "12"
block: |
  Line one
  line two # not a comment
"""


def test_yaml_1_2_core_scalars_and_dates_as_text(loader):
    assert yamlsafe.loads(SCALARS) == {
        "date": "2024-03-18",
        "no_bool": "no",
        "yes_text": "yes",
        "octal_text": "0o17",
        "hex_text": "0x1f",
        "sexagesimal_text": "1:30",
        "exp": 1000.0,
        "half": 0.5,
        "grouped": 1000,
        "neg": -3,
        "tilde": None,
        "empty": None,
        "true_": True,
        "inf": float("inf"),
        "url": "https://example.com/a#frag",
        "quoted": "12",
        "block": "Line one\nline two # not a comment\n",
    }


BAD = {
    "duplicate": ("a: 1\nb: 2\na: 3\n", "3:1", "duplicate key 'a'"),
    "alias": ("a: &x [1]\nb: *x\n", "1:4", "anchors"),
    "laughs": ('a: &a ["lol","lol"]\nb: &b [*a,*a,*a]\nc: [*b,*b,*b]\n', "1:4", "anchors"),
    "python tag": ("a: !!python/object/apply:os.system ['ls']\n", "1:4", "tags"),
    "binary tag": ("a: !!binary aGVsbG8=\n", "1:4", "tags"),
    "timestamp tag": ("a: !!timestamp 2024-01-01\n", "1:4", "tags"),
    "local tag": ("a: !foo 1\n", "1:4", "tags"),
    "bad escape": ('a: "\\uZZZZ"\n', "1:7", "quoted scalar"),
    "open flow": ("a: [1, 2\n", "2:1", ""),
    "open quote": ("a: 'open\n", "2:1", ""),
    "tab indent": ("a:\n\tb: 1\n", "2:1", ""),
    "nested colon": ("a: b: c\n", "1:5", ""),
    "list then map": ("- a\nb: 1\n", "2:1", ""),
    "deep flow": ("a: " + "[" * 100_000 + "]" * 100_000 + "\n", "1:", ""),
    "deep block": ("".join("  " * i + f"k{i}:\n" for i in range(40)), ":", "deeper"),
    "number key": ("1: a\n", "1:1", "key must be text"),
    "two documents": ("a: 1\n---\nb: 2\n", "2:1", ""),
    "control character": ("a: \x07\n", "t.yaml:1", "not allowed"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_refused_with_file_line_and_column(loader, case):
    text, where, words = BAD[case]
    with pytest.raises(AdvisorError) as info:
        yamlsafe.loads(text, "t.yaml")
    err = info.value
    assert err.key == "yaml.invalid"
    assert err.message.startswith("t.yaml:") and where in err.message, err.message
    assert words in err.message
    assert "\n" not in err.message


def test_error_lines_stay_short(loader):
    long_key = "k" * 100_000
    for text in (f"{long_key}: 1\n{long_key}: 2\n", f"a: !{long_key} 1\n"):
        with pytest.raises(AdvisorError) as info:
            yamlsafe.loads(text, "t.yaml")
        assert len(info.value.message) < 200


def test_size_cap_and_type():
    with pytest.raises(AdvisorError) as info:
        yamlsafe.loads("a: " + "x" * yamlsafe.MAX_BYTES, "big.yaml")
    assert info.value.key == "file.too_large" and "big.yaml" in info.value.message
    with pytest.raises(AdvisorError):
        yamlsafe.loads(b"a: 1", "bytes.yaml")


def test_files_latin1_folder_missing_and_endless(tmp_path):
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: " + "café\n".encode("latin-1"))
    with pytest.raises(AdvisorError) as info:
        yamlsafe.load_file(latin)
    assert info.value.key == "file.not_utf8" and "latin.yaml" in info.value.message
    folder = tmp_path / "gpus.yaml"
    folder.mkdir()
    with pytest.raises(AdvisorError) as info:
        yamlsafe.load_file(folder)
    assert info.value.key == "file.unreadable" and "folder" in info.value.message
    with pytest.raises(AdvisorError) as info:
        yamlsafe.load_file(tmp_path / "missing.yaml", "publisher")
    assert info.value.message.startswith("publisher: cannot read")
    if Path("/dev/zero").exists():
        with pytest.raises(AdvisorError) as info:
            yamlsafe.load_file("/dev/zero")
        assert info.value.key == "file.too_large"
    good = tmp_path / "ok.yaml"
    good.write_text("name: Bakı\n", encoding="utf-8")
    assert yamlsafe.load_file(good) == {"name": "Bakı"}


def test_catalog_names_a_folder_called_yaml(tmp_path):
    from advisor.data.catalog import load_catalog

    (tmp_path / "gpus" / "h100.yaml").mkdir(parents=True)
    with pytest.raises(AdvisorError) as info:
        load_catalog(tmp_path)
    assert "h100.yaml" in info.value.message and "folder" in info.value.message
