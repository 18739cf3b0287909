"""calcruntime/pyodide/codecache.py: the build's table of the code that `dataclasses` compiles gives the
same classes as compiling it at import time; a text not in the table is compiled as before;
a table from another interpreter, or not a table, is not used."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import marshal
import sys

import pytest

from calcruntime.pyodide import codecache as cc

SOURCE = """
from dataclasses import dataclass, field

@dataclass(frozen=True)
class Card:
    name: str
    memory_gib: float
    tags: tuple[str, ...] = field(default=())

@dataclass(order=True)
class Price:
    usd_per_hour: float
    region: str = "eu"
"""


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A fresh module of dataclasses, importable as `cc_sample` (again after `forget`)."""
    (tmp_path / "cc_sample.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    cc.stats.update(hits=0, misses=0)
    yield "cc_sample"
    sys.modules.pop("cc_sample", None)
    if "exec" in vars(dataclasses):
        del dataclasses.exec


def forget(name):
    sys.modules.pop(name, None)
    importlib.invalidate_caches()


def behaviour(m):
    a = m.Card("H200", 141.0, ("hbm3e",))
    p, q = m.Price(2.5), m.Price(3.0, "us")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.name = "x"
    return (
        repr(a),
        a == m.Card("H200", 141.0, ("hbm3e",)),
        hash(a) == hash(m.Card("H200", 141.0, ("hbm3e",))),
        repr(p),
        p < q,
        sorted([q, p]) == [p, q],
        [f.name for f in dataclasses.fields(m.Card)],
    )


def test_recorded_code_gives_the_same_classes(module):
    expected = behaviour(importlib.import_module(module))  # compiled by dataclasses itself
    forget(module)
    data = cc.record([module])
    assert "exec" not in vars(dataclasses)  # record leaves dataclasses as it was
    assert behaviour(sys.modules[module]) == expected
    forget(module)
    n = cc.install(data)
    assert n >= 4  # __init__, __repr__, __eq__, __setattr__/__delattr__, __hash__, order...
    got = behaviour(importlib.import_module(module))
    assert got == expected
    assert cc.stats["hits"] > 0 and cc.stats["misses"] == 0


def test_a_text_not_in_the_table_is_compiled_as_before(module):
    data = cc.record([module])
    forget(module)
    cc.install(data)

    @dataclasses.dataclass(frozen=True)
    class Other:  # another field list: another text
        speed_tflops: float
        tdp_w: int = 700

    assert cc.stats["misses"] > 0
    assert repr(Other(1.5)).endswith("<locals>.Other(speed_tflops=1.5, tdp_w=700)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Other(1.5).tdp_w = 1


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00\x00\r\n" + marshal.dumps({}),  # another interpreter's magic number
        importlib.util.MAGIC_NUMBER + b"\xff garbage",
        importlib.util.MAGIC_NUMBER + marshal.dumps([1, 2]),  # not a table
    ],
)
def test_another_interpreters_table_or_garbage_is_not_used(module, data):
    assert cc.install(data) == 0
    assert "exec" not in vars(dataclasses)


def test_no_table_beside_the_wheels_module():
    # the wheel (and so CPython) has none: only the site's compiled copy carries it
    assert cc.install_beside() == 0
    assert "exec" not in vars(dataclasses)
