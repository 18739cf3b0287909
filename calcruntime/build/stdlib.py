"""The standard library as the site ships it: only the modules the calculators use, compiled,
in two zips (what Python's start imports, and the rest)."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
import zipfile
from pathlib import Path

from mkdocs.exceptions import PluginError

from .paths import CACHE, NODE, PYODIDE, ROOT, _cache_put, _node, _sha, cached_step
from .wheels import UNZIP_MJS, _compiled_copy
from .zips import ZIP_PROBE, split_zip, write_zip, zip_probe


def _stdlib_calls() -> list[list[str]]:
    """The calls run to find the standard-library modules the calculators use: every function
    with its defaults, malformed JSON and an unknown model, and a report of every example
    profile in both languages plus a malformed profile (the error paths import too)."""
    from advisor import webapi

    calls = []
    for name in sorted(webapi.FUNCTIONS):
        if name != "report":
            calls += [[name, "{}"], [name, "{"], [name, json.dumps({"model": "no-such-model"})]]
    publisher = {"name": "GPU Advisor", "url": "https://example.org", "contact": "a@example.org"}
    for profile in sorted((ROOT / "examples").glob("*.yaml")):
        for lang in ("az", "en"):
            params = {"profile": profile.read_text(encoding="utf-8"), "lang": lang}
            calls.append(["report", json.dumps({**params, "publisher": publisher})])
    calls.append(["report", json.dumps({"profile": "a: &x 1\nb: *x\n: [", "lang": "en"})])
    return calls


STDLIB_SPLIT = "start | rest, by top-level module or package"  # in the cache key: the rule


@cached_step
def stdlib_zips(assets: Path, catalog_docs: dict) -> tuple[bytes, bytes]:
    """The standard library as the site ships it, in two zips (`STDLIB_ZIP`, `STDLIB_REST_ZIP`)
    of only the modules the calculators use, compiled to bytecode by the runtime's own
    interpreter (calcruntime/node/pyodide_compile.mjs: the plain start's loadPyodide in 0.6 s instead of
    1.8 s), members stored: the first holds what Python's start itself imports (asyncio,
    pyodide, zipfile, ...), the second the other modules and packages (difflib, pickle,
    ipaddress, html, urllib, ...; a package's modules stay with its __init__), which the worker fetches
    while Python starts instead of while the wasm downloads (`STDLIB_REST_ZIP` says how it is
    mounted). The runtime's own zip is 2.5 MB; deflated member by member and with copies of the
    frozen modules, the compiled zip was 1,002 kB with gzip. The modules are the files whose
    modules are in sys.modules, less the frozen ones, after the calculators have started both
    ways the worker starts them and run `_stdlib_calls`; "start" ones are those in sys.modules
    right after loadPyodide (calcruntime/node/pyodide_stdlib_used.mjs, on the full zip of the pinned
    package in `assets`, with the compiled wheels of its advisor-lock.json, installed as the
    worker installs them: calcruntime/browser/unzip.mjs). A module that advisor or its
    dependencies import only on a path those calls do not take would be missing:
    tests/test_pyodide_node.py runs every golden and bad input and the reports on these zips.
    Deterministic (members in the original order, fixed timestamps), cached by its inputs."""
    full = (PYODIDE / "python_stdlib.zip").read_bytes()
    docs_json = json.dumps(catalog_docs, sort_keys=True, ensure_ascii=False).encode()
    calls = json.dumps(_stdlib_calls()).encode()
    lock = json.loads((assets / "advisor-lock.json").read_text(encoding="utf-8"))
    key = _sha(
        full,
        docs_json,
        calls,
        *(assets.joinpath(p["file_name"]).read_bytes() for p in lock["packages"].values()),
        *(_compiled_copy(assets, p) for p in lock["packages"].values()),
        (NODE / "pyodide_stdlib_used.mjs").read_bytes(),
        UNZIP_MJS.read_bytes(),
        (NODE / "pyodide_compile.mjs").read_bytes(),
        (NODE / "pyodide_bytecode.py").read_bytes(),
        STDLIB_SPLIT.encode(),
    )[:16]
    cached = (CACHE / f"stdlib-{key}.zip", CACHE / f"stdrest-{key}.zip")
    if all(c.is_file() for c in cached):
        return cached[0].read_bytes(), cached[1].read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp, "assets")
        shutil.copytree(assets, run_dir)
        (run_dir / "python_stdlib.zip").write_bytes(full)
        cat = Path(tmp, "catalog-docs.json")
        cat.write_bytes(docs_json)
        found = json.loads(_node("pyodide_stdlib_used.mjs", str(run_dir), str(cat), stdin=calls))
        used, start = set(found["used"]), set(found["start"])
        if not {"encodings/__init__.py", "json/__init__.py", "re/__init__.py"} <= used:
            raise PluginError(f"python_stdlib.zip: {len(used)} modules found in use: not plausible")
        if not start or not start <= used:
            raise PluginError("python_stdlib.zip: the modules of Python's start are not all in use")
        buf = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(full)) as src, zipfile.ZipFile(buf, "w") as out:
            for info in src.infolist():
                if info.filename not in used:
                    continue
                zi = zipfile.ZipInfo(info.filename, date_time=(2026, 1, 1, 0, 0, 0))
                zi.external_attr = 0o644 << 16
                out.writestr(zi, src.read(info))  # stored: only pyodide_compile.mjs reads it
        sources, compiled = Path(tmp, "sources.zip"), Path(tmp, "compiled.zip")
        sources.write_bytes(buf.getvalue())
        _node("pyodide_compile.mjs", str(run_dir), str(sources), str(compiled))
        # a package's modules lie in one zip: its __path__ names the zip of its __init__
        # (importlib.metadata stays with importlib, which Python's start imports)
        tops = {name.split("/")[0].removesuffix(".py") for name in start}
        first, rest = split_zip(
            compiled.read_bytes(), lambda name: name.split("/")[0].removesuffix(".pyc") in tops
        )
    for c, data in zip(cached, (first, rest), strict=True):
        _cache_put(c, data, c.name.split("-")[0] + "-*.zip")
    return first, rest


# The standard library as loadPyodide gets it (`stdLibURL`: what Python's start imports), and
# the rest of what the calculators use, which the plain start mounts after loadPyodide and
# before it imports advisor (calcruntime/browser/unzip.mjs `mountStdlibRest`: the file at
# STDLIB_REST_PATH in Pyodide's file system, on sys.path after the standard library's zip). The
# snapshot is made with it mounted and every module of it imported, so a snapshot start does
# without it.
STDLIB_ZIP = "python_stdlib.zip"


STDLIB_REST_ZIP = "python_stdlib_rest.zip"


def write_stdlib(assets: Path, catalog_docs: dict) -> None:
    """`STDLIB_ZIP` and `STDLIB_REST_ZIP` (`stdlib_zips`: what Node, the snapshot build and the
    tests load) with their copies (`write_zip`: what the worker fetches), and `ZIP_PROBE`, into
    `assets`."""
    first, rest = stdlib_zips(assets, catalog_docs)
    write_zip(assets, STDLIB_ZIP, first)
    write_zip(assets, STDLIB_REST_ZIP, rest)
    write_zip(assets, ZIP_PROBE, zip_probe())
