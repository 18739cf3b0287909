"""The Pyodide memory snapshot: made under Node (calcruntime/node/pyodide_snapshot.mjs), less its
zero blocks (`sparse_snapshot`), gzip named after its content (`gzip_named`)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import struct
import tempfile
from pathlib import Path

from .paths import CACHE, NODE, PYODIDE, _cache_put, _node, _sha, cached_step
from .stdlib import STDLIB_REST_ZIP, STDLIB_ZIP
from .wheels import UNZIP_MJS, _compiled_copy

SPARSE_MAGIC = b"ASP1"  # calcruntime/browser/sparse.mjs reads it


SPARSE_BLOCK = 4096


def sparse_snapshot(raw: bytes, block: int = SPARSE_BLOCK) -> bytes:
    """`raw` less its all-zero blocks of `block` bytes, as calcruntime/browser/sparse.mjs `unsparse`
    rebuilds it (its header gives the layout): the snapshot is the runtime's whole linear memory
    (31 MB), 15 MB of it zero blocks, so the browser inflates 16.6 MB instead of 31 MB on every
    snapshot start, and the gzip is no larger (5,629 kB instead of 5,645 kB)."""
    if block <= 0 or len(raw) >= 2**32:
        raise ValueError(f"sparse_snapshot: block {block}, {len(raw)} bytes")
    n = -(-len(raw) // block)
    bitmap, kept, zero = bytearray((n + 7) // 8), [], bytes(block)
    for i in range(n):
        chunk = raw[i * block : (i + 1) * block]
        if chunk != zero[: len(chunk)]:
            bitmap[i >> 3] |= 1 << (i & 7)
            kept.append(chunk)
    return SPARSE_MAGIC + struct.pack("<III", block, len(raw), n) + bytes(bitmap) + b"".join(kept)


@cached_step
def make_snapshot(assets: Path, lock: dict, catalog_docs: dict) -> bytes:
    """gzip of the Pyodide memory snapshot (less its zero blocks: `sparse_snapshot`) with the
    compiled copy of every wheel of `lock` (in `assets`) installed as the worker's plain start
    installs them, advisor.webapi imported, the report templates compiled and the catalog
    loaded."""
    docs_json = json.dumps(catalog_docs, sort_keys=True, ensure_ascii=False).encode()
    key = _sha(
        *(_compiled_copy(assets, p) for p in lock["packages"].values()),
        docs_json,
        (assets / STDLIB_ZIP).read_bytes(),
        (assets / STDLIB_REST_ZIP).read_bytes(),
        (NODE / "pyodide_snapshot.mjs").read_bytes(),
        UNZIP_MJS.read_bytes(),
        SPARSE_MAGIC + struct.pack("<I", SPARSE_BLOCK),
        SNAPSHOT_NAME.encode(),
        (PYODIDE / "package.json").read_bytes(),
    )[:16]
    cached = CACHE / f"snapshot-{key}.gz"
    if cached.is_file():
        return cached.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        cat = Path(tmp, "catalog-docs.json")
        cat.write_bytes(docs_json)
        out = Path(tmp, "snapshot.bin")
        _node("pyodide_snapshot.mjs", str(assets), str(cat), str(out))
        data = gzip_named(sparse_snapshot(out.read_bytes()))
    _cache_put(cached, data, "snapshot-*.gz")
    return data


SNAPSHOT_NAME = "advisor.snapshot."  # + the payload's sha256 (32 hex digits): worker.mjs reads it


def gzip_named(payload: bytes) -> bytes:
    """gzip of `payload` (level 6, mtime 0) whose header names it after its content (RFC 1952's
    FNAME field: SNAPSHOT_NAME + the first 32 hex digits of its sha256). worker.mjs reads that
    name from the first bytes of the response and tags its Cache Storage copy of the inflated
    snapshot with it, so a copy is reused only for the same bytes, whatever the host's ETag or
    Last-Modified say (a host may send neither, or keep them across a rebuild)."""
    name = SNAPSHOT_NAME + hashlib.sha256(payload).hexdigest()[:32]
    buf = io.BytesIO()
    with gzip.GzipFile(filename=name, mode="wb", fileobj=buf, compresslevel=6, mtime=0) as f:
        f.write(payload)
    return buf.getvalue()
