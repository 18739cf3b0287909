"""Bytecode as the site ships it, for the runtime's own interpreter (Pyodide's Python 3.14):
run inside Pyodide by calcruntime/node/pyodide_compile.mjs (`compile_zip`: the standard library and the
compiled copies of the wheels) and calcruntime/node/pyodide_dataclass_code.mjs (`strip`: the methods
that dataclasses writes). Why a line table that says "no location": pyodide_compile.mjs."""

import importlib._bootstrap_external as _be
import zipfile


def _no_locations(code):
    # one "no location" entry (code 15) per 8 code units: the 3.11+ line table format
    # (CPython's Objects/locations.md)
    n, out = len(code.co_code) // 2, bytearray()
    while n > 0:
        k = min(n, 8)
        out.append(0x80 | (15 << 3) | (k - 1))
        n -= k
    return bytes(out)


def strip(code):
    consts = tuple(strip(c) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_linetable=_no_locations(code), co_consts=consts)


def compile_zip(src_path, out_path):
    with zipfile.ZipFile(src_path) as src, zipfile.ZipFile(out_path, "w") as out:
        for info in src.infolist():
            data, name = src.read(info), info.filename
            if name.endswith(".py"):
                code = compile(data, name, "exec", dont_inherit=True, optimize=2)
                data = bytes(_be._code_to_timestamp_pyc(strip(code), 0, len(data)))
                name += "c"
            zi = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_STORED
            out.writestr(zi, data)
