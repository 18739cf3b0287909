"""Build-time bytecode for the methods that `dataclasses` writes at import time (the browser's
plain start only; elsewhere nothing here runs).

`@dataclass` writes the source of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``... as text and compiles it with ``exec`` (CPython's Lib/dataclasses.py,
``_FuncBuilder.add_fns_to_class`` in 3.14, ``_create_fn`` in 3.11). advisor defines about 40
frozen dataclasses, and compiling their methods was two thirds of importing advisor.webapi in
Pyodide (67 of 104 ms under Node; issue 12, the phone's first visit). The source text depends
only on the class's fields and options, so the build runs the imports once in the same runtime
(`record`, from calcruntime/node/pyodide_dataclass_code.mjs) and ships ``{source text: code object}``
as marshal data (keyed by the text's digest), led by the interpreter's magic number; the worker `install`s it before it
imports advisor. ``exec(code)`` of the code compiled from a text is what ``exec(text)`` does,
so the classes are the same; any text not in the table (another field list, another Python) is
compiled as before, and data from another interpreter is not used at all.
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import importlib
import importlib.util
import marshal
from pathlib import Path

# beside this module in the compiled copy of the advisor wheel (calcruntime/build/wheels.py
# add_dataclass_code ships both there; this module is not part of the advisor package)
FILE_NAME = "dataclass_code.bin"
stats = {"hits": 0, "misses": 0}


def _compiled(source: str):
    # what exec(source) compiles: file "<string>", no inherited __future__ flags
    # (dataclasses.py has none), the interpreter's optimisation level
    return compile(source, "<string>", "exec", dont_inherit=True)


def _key(source: str) -> bytes:
    # the text's digest, not the text: the table is a third of the size
    return hashlib.blake2b(source.encode("utf-8"), digest_size=16).digest()


def record(modules: list[str], transform=None) -> bytes:
    """Import `modules` (not imported before) with dataclasses' exec watched: the magic number
    and the marshal data of {digest of a source text: its code object} for every text it
    compiled, each code object passed through `transform` (the site's: line tables saying "no
    location", calcruntime/node/pyodide_bytecode.py strip)."""
    table: dict[bytes, object] = {}

    def exec_recording(source, globals=None, locals=None, /):
        if isinstance(source, str):
            key = _key(source)
            if key not in table:
                code = _compiled(source)
                table[key] = transform(code) if transform else code
            source = table[key]
        return builtins.exec(source, globals, locals)

    dataclasses.exec = exec_recording
    try:
        for name in modules:
            importlib.import_module(name)
    finally:
        del dataclasses.exec
    return importlib.util.MAGIC_NUMBER + marshal.dumps(table)


def install(data: bytes) -> int:
    """Have dataclasses run the code of `data` (`record`'s output) for the texts it holds; the
    number of texts, 0 if `data` is another interpreter's (its magic number differs) or not a
    table. Counts hits and misses in `stats`."""
    magic = importlib.util.MAGIC_NUMBER
    if data[: len(magic)] != magic:
        return 0
    try:
        table = marshal.loads(data[len(magic) :])
    except (EOFError, ValueError, TypeError):
        return 0
    if not isinstance(table, dict):
        return 0

    def exec_cached(source, globals=None, locals=None, /):
        code = table.get(_key(source)) if isinstance(source, str) else None
        stats["hits" if code is not None else "misses"] += 1
        return builtins.exec(source if code is None else code, globals, locals)

    dataclasses.exec = exec_cached
    return len(table)


def install_beside() -> int:
    """`install` the table shipped beside this module (FILE_NAME); 0 where there is none (the
    checkout, CPython)."""
    try:
        data = (Path(__file__).parent / FILE_NAME).read_bytes()
    except OSError:
        return 0
    return install(data)
