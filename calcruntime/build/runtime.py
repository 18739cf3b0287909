"""The Pyodide runtime files as the site serves them (pyodide.mjs patched to grow the memory
before a snapshot restore)."""

from __future__ import annotations

from mkdocs.exceptions import PluginError

from .paths import PYODIDE

RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")


# Pyodide 314.0.8 restores a memory snapshot into the wasm memory as instantiated (its
# INITIAL_MEMORY setting is not used: the module defines its own memory), so a snapshot whose
# heap grew while it was made (more than ~30 MiB of Python objects) fails with "RangeError:
# offset is out of bounds". The fix: grow the memory to the snapshot's size first, with the
# module's own `growMemory`. Applied to pyodide.mjs as copied into the site; the build fails
# if the pinned file does not contain the expected code (e.g. after a version change).
SNAPSHOT_RESTORE = (
    "function Ae(e,t,n){let i=e.API,s;return t&&(s=i.restoreSnapshot(t)),"
    "i.finalizeBootstrap(s,n._snapshotDeserializer)}"
)


SNAPSHOT_RESTORE_FIXED = (
    "function Ae(e,t,n){let i=e.API,s;return t&&(e.HEAP8.length<t.length&&e.growMemory(t.length),"
    "s=i.restoreSnapshot(t)),i.finalizeBootstrap(s,n._snapshotDeserializer)}"
)


def runtime_file(name: str) -> bytes:
    """A Pyodide runtime file as the site serves it (pyodide.mjs with SNAPSHOT_RESTORE_FIXED)."""
    data = (PYODIDE / name).read_bytes()
    if name != "pyodide.mjs":
        return data
    text = data.decode("utf-8")
    if text.count(SNAPSHOT_RESTORE) != 1:
        raise PluginError(
            "pyodide.mjs: the snapshot-restore code to patch was not found (Pyodide version "
            "changed?); see SNAPSHOT_RESTORE in calcruntime/build"
        )
    return text.replace(SNAPSHOT_RESTORE, SNAPSHOT_RESTORE_FIXED).encode("utf-8")
