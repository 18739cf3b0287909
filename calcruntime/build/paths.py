"""Where the calculators' runtime build reads and writes: the checkout (ROOT), the pinned
Pyodide npm package (PYODIDE), the browser side (BROWSER: served as site/assets/calc/ through
the docs/assets/calc link), the Node scripts (NODE), the build cache (CACHE: every product
cached by the SHA-256 of its inputs); running a Node script; writing and caching files."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import shutil
import subprocess
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Windows: builds there do not share the cache at once
    fcntl = None

from mkdocs.exceptions import PluginError


def _repo() -> Path:
    """The checkout holding advisor/, calcruntime/ and node_modules/ (a test may build a copy of
    the docs, hooks and calcruntime elsewhere: then the imported advisor's checkout)."""
    import advisor

    here = Path(__file__).resolve().parents[2]
    for base in (here, Path(advisor.__file__).resolve().parent.parent):
        if (base / "advisor").is_dir() and (base / "calcruntime" / "node").is_dir():
            return base
    return here


ROOT = _repo()
RUNTIME = ROOT / "calcruntime"
BROWSER = (
    RUNTIME / "browser"
)  # the files the site serves as assets/calc/ (docs/assets/calc links here)
NODE = RUNTIME / "node"  # the build's Node scripts (and the Python they run in Pyodide)
PYODIDE_SIDE = (
    RUNTIME / "pyodide"
)  # Python the runtime runs inside Pyodide (shipped in the compiled wheel)
PYODIDE = ROOT / "node_modules" / "pyodide"
CACHE = ROOT / ".cache" / "calc"

log = logging.getLogger("mkdocs.hooks.calcruntime")


def _sha(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()


def _tree_bytes(folder: Path, pattern: str) -> bytes:
    out = []
    for p in sorted(folder.rglob(pattern)):
        if "__pycache__" in p.parts:
            continue
        out.append(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes())
    return b"\0\0".join(out)


def _mkcache() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    return CACHE


def _node(script: str, *args: str, stdin: bytes | None = None) -> bytes:
    node = shutil.which("node")
    if not node:
        raise PluginError("node is needed to build the calculators (apt-get install nodejs)")
    proc = subprocess.run([node, str(NODE / script), *args], input=stdin, capture_output=True)
    if proc.returncode:
        raise PluginError(f"calcruntime/node/{script} failed:\n{proc.stderr.decode()[-3000:]}")
    return proc.stdout


def _cache_put(cached: Path, data: bytes, pattern: str, keep: int = 4) -> None:
    """Store `data` as the cache entry `cached` (written whole, then renamed: a build stopped
    half-way leaves no entry), keeping the `keep` newest entries matching `pattern`."""
    _mkcache()
    part = cached.with_suffix(f".{os.getpid()}.part")
    part.write_bytes(data)
    part.replace(cached)
    _prune(pattern, keep)


def _prune(pattern: str, keep: int = 4) -> None:
    """Keep the cache small: the `keep` newest entries matching `pattern`."""

    def mtime(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except FileNotFoundError:
            return 0.0

    entries = sorted(CACHE.glob(pattern), key=mtime, reverse=True)
    for old in entries[keep:]:
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)


_THREAD_LOCK = threading.RLock()
_held = {"depth": 0, "fd": None}


@contextlib.contextmanager
def cache_lock():
    """The cache to this process alone (an exclusive `flock` on CACHE/.lock, re-entrant in the
    process): two builds at once (the test suite's workers, a background build) would otherwise
    make the same product side by side, and `build_wheel` removes the checkout's build/ folder
    that another one may be using. The second waits, then finds the product cached."""
    with _THREAD_LOCK:
        if _held["depth"] == 0 and fcntl is not None:
            fd = os.open(_mkcache() / ".lock", os.O_CREAT | os.O_RDWR, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            _held["fd"] = fd
        _held["depth"] += 1
        try:
            yield
        finally:
            _held["depth"] -= 1
            if _held["depth"] == 0 and _held["fd"] is not None:
                fcntl.flock(_held["fd"], fcntl.LOCK_UN)
                os.close(_held["fd"])
                _held["fd"] = None


def cached_step(fn):
    """`fn` under `cache_lock`."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with cache_lock():
            return fn(*args, **kwargs)

    return run
