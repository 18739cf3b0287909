"""The snapshot less its zero blocks: calcruntime/build `sparse_snapshot` writes it,
calcruntime/browser/sparse.mjs `unsparse` (the worker's, under Node) gives back the very bytes, and
a damaged file is refused with a message, not turned into a wrong memory image."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import random
import shutil
import struct
from pathlib import Path

import pytest
from node_helpers import CALC, load_hook, node_module

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.node,
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js"),
]

# Each input (base64) through one function of sparse.mjs (argv[2]): its result, or its error.
SCRIPT = """
const m = await import(process.argv[1]);
const fn = {
  unsparse: (b) => ({ bytes: Buffer.from(m.unsparse(b)).toString("base64") }),
  gzipName: (b) => ({ name: m.gzipName(b) }),
}[process.argv[2]];
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map((b64) => {
  try {
    return fn(new Uint8Array(Buffer.from(b64, "base64")));
  } catch (e) {
    return { error: e.message };
  }
});
process.stdout.write(JSON.stringify(out));
"""


def _each(fn: str, items: list[bytes]) -> list[dict]:
    stdin = json.dumps([base64.b64encode(b).decode() for b in items])
    return json.loads(node_module(SCRIPT, (CALC / "sparse.mjs").as_uri(), fn, stdin=stdin))


def unsparse(items: list[bytes]) -> list[dict]:
    return _each("unsparse", items)


def _memory_like(rng: random.Random, size: int) -> bytes:
    buf = bytearray(size)
    for _ in range(40):  # runs of data among zeros, as a heap has them
        at, n = rng.randrange(size), rng.randrange(1, 9000)
        buf[at : at + n] = rng.randbytes(min(n, size - at))
    return bytes(buf)


def test_round_trip_gives_the_very_bytes():
    hook = load_hook()
    rng = random.Random(4)
    raws = [
        _memory_like(rng, 300_000),
        bytes(4096 * 5),  # all zero: nothing stored
        bytes(4096 * 2) + b"\x01",  # a partial last block that is not zero
        b"",
        rng.randbytes(10_000),
    ]
    encoded = [hook.sparse_snapshot(r) for r in raws]
    assert len(encoded[1]) == 16 + 1  # header and a one-byte block map
    got = unsparse(encoded)
    assert [base64.b64decode(g["bytes"]) for g in got] == raws
    assert len(encoded[0]) < len(raws[0])


def test_a_damaged_file_is_refused():
    hook = load_hook()
    good = hook.sparse_snapshot(_memory_like(random.Random(5), 50_000))
    bad_header = good[:4] + struct.pack("<III", 4096, 10**6, 3) + good[16:]
    got = unsparse([b"PK\x03\x04" + good[4:], good[:-10], good + b"\x00", bad_header, good[:10]])
    errors = [g.get("error", "") for g in got]
    assert "not a sparse snapshot" in errors[0]
    assert "truncated" in errors[1]
    assert "after the last block" in errors[2]
    assert "cannot hold" in errors[3]
    assert "not a sparse snapshot" in errors[4]


def gzip_names(items: list[bytes]) -> list[dict]:
    return _each("gzipName", items)


def test_the_snapshot_gzip_is_named_after_its_content():
    """hooks' gzip_named writes the payload's sha256 into the gzip header (FNAME); sparse.mjs
    gzipName reads it back from the first bytes, which is the tag of the worker's Cache Storage
    copy: another payload gets another name; a header without a name (or cut short before its
    end) gives null; FEXTRA before the name is skipped; what is not gzip is refused."""
    hook = load_hook()
    payload = hook.sparse_snapshot(_memory_like(random.Random(6), 80_000))
    named = hook.gzip_named(payload)
    other = hook.gzip_named(payload[:-1] + b"\x01")
    assert gzip.decompress(named) == payload
    want = "advisor.snapshot." + hashlib.sha256(payload).hexdigest()[:32]
    # FEXTRA (flag 4): two bytes of length, then that many bytes, before the name
    extra = named[:3] + bytes([named[3] | 4]) + named[4:10] + b"\x03\x00abc" + named[10:]
    assert gzip.decompress(extra) == payload
    got = gzip_names(
        [
            named[:256],
            other[:256],
            extra[:256],
            gzip.compress(payload, mtime=0)[:256],
            named[:20],
            b"PK\x03\x04" + named[4:64],
        ]
    )
    assert got[0] == {"name": want}
    assert got[1]["name"].startswith("advisor.snapshot.") and got[1] != got[0]
    assert got[2] == {"name": want}
    assert got[3] == {"name": None}
    assert got[4] == {"name": None}
    assert "not a gzip file" in got[5]["error"]
