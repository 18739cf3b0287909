"""The same golden inputs give identical outputs (byte for byte) in CPython and in Pyodide under
Node (the npm package `pyodide`), loaded the ways the site loads advisor: from the build's
memory snapshot, by name from the lock file (the wheel, sha256-checked), and as the worker's
plain start does (the compiled copies of the wheels, on the compiled standard library)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from node_helpers import load_hook, node_module
from test_webapi import BAD, CAT, GOLDEN

from advisor import webapi
from advisor.data.catalog import read_documents

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.node,
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js"),
    pytest.mark.skipif(
        not (ROOT / "node_modules" / "pyodide").is_dir(), reason="needs node_modules/pyodide"
    ),
]


@pytest.fixture(scope="module")
def assets(built_site, tmp_path_factory):
    """The site's assets/pyodide/ as the build made it (the session build, conftest.py: its
    runtime, wheels, lock file, compiled copies, standard-library zips and snapshot, made by
    calcruntime/build write_site_assets), with the catalog's documents the site ships
    (assets/calc/catalog-docs.json) beside them; a copy, so no test writes into the site."""
    out = tmp_path_factory.mktemp("pyodide") / "pyodide"
    shutil.copytree(built_site / "assets" / "pyodide", out)
    shutil.copy2(built_site / "assets" / "calc" / "catalog-docs.json", out / "catalog-docs.json")
    return out


PUBLISHER = {"name": "GPU Advisor", "url": "https://example.org", "contact": "a@example.org"}
REPORTS = [
    (
        "report",
        json.dumps(
            {
                "profile": (ROOT / "examples" / f"{name}.yaml").read_text(),
                "lang": lang,
                "publisher": PUBLISHER,
            }
        ),
    )
    for name in ("bank-serving-70b", "university-lab")
    for lang in ("az", "en")
] + [("report", json.dumps({"profile": "a: &x 1\nb: *x\n", "publisher": PUBLISHER}))]
CALLS = (
    [(n, json.dumps(p)) for n, p in GOLDEN] + [(n, json.dumps(p)) for n, p, _k, _f in BAD] + REPORTS
)


def _run(assets: Path, mode: str) -> list[str]:
    proc = subprocess.run(
        [
            "node",
            str(ROOT / "calcruntime" / "node" / "pyodide_node_run.mjs"),
            str(assets),
            mode,
            str(assets / "catalog-docs.json"),
        ],
        input=json.dumps(CALLS).encode(),
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("mode", ["snapshot", "lock", "plain"])
def test_pyodide_equals_cpython(assets, mode):
    webapi.set_catalog(CAT)
    expected = [webapi.call(n, p) for n, p in CALLS]
    got = _run(assets, mode)
    assert len(got) == len(expected)
    for (name, params), g, e in zip(CALLS, got, expected, strict=True):
        assert g == e, f"{name} {params}: Pyodide and CPython differ"


def test_lock_file_names_every_wheel_with_its_sha256(assets):
    import hashlib
    import zipfile

    lock = json.loads((assets / "advisor-lock.json").read_text())
    assert sorted(lock["packages"]) == ["advisor", "jinja2", "markupsafe", "pyyaml"]
    assert sorted(lock["packages"]["advisor"]["depends"]) == ["jinja2", "markupsafe", "pyyaml"]
    assert lock["packages"]["jinja2"]["depends"] == ["markupsafe"]
    for entry in lock["packages"].values():
        wheel = assets / entry["file_name"]
        assert entry["file_name"].endswith("-py3-none-any.whl")
        assert entry["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
        with zipfile.ZipFile(wheel) as zf:
            names = zf.namelist()
        assert not [n for n in names if n.endswith((".so", ".pyd", ".c"))], entry["name"]
    with zipfile.ZipFile(assets / lock["packages"]["advisor"]["file_name"]) as zf:
        assert "advisor/report_templates/report.html.j2" in zf.namelist()


def test_dependency_wheels_are_reproducible():
    hook = load_hook()
    for dist, imports, _depends in hook.DEPENDENCIES:
        assert hook.dependency_wheel(dist, imports) == hook.dependency_wheel(dist, imports)


def test_compiled_copies_are_the_wheels_as_bytecode(assets):
    """Each lock entry names the compiled copy of its wheel with its sha256: the same members,
    every NAME.py as NAME.pyc (Python 3.14 bytecode) and no source left (advisor's with the
    dataclass code and the three small sources of its installer, calcruntime/pyodide, last),
    stored, with the gzip and brotli copies the worker fetches (NAME.gz, NAME.br:
    calcruntime/build write_zip); the standard library likewise; and the probe that tells the
    worker which copy a host sends."""
    import gzip
    import hashlib
    import zipfile

    import brotli

    hook = load_hook()

    def copies_equal(name):
        data = (assets / name).read_bytes()
        assert gzip.decompress((assets / (name + ".gz")).read_bytes()) == data, name
        assert brotli.decompress((assets / (name + ".br")).read_bytes()) == data, name

    lock = json.loads((assets / "advisor-lock.json").read_text())
    for entry in lock["packages"].values():
        c = entry["tool"]["gpu-advisor"]
        data = (assets / c["compiled"]).read_bytes()
        assert c["compiled"] == entry["file_name"].removesuffix(".whl") + ".pyc.zip"
        assert c["compiled_sha256"] == hashlib.sha256(data).hexdigest()
        copies_equal(c["compiled"])
        with zipfile.ZipFile(assets / entry["file_name"]) as zf:
            want = [n + "c" if n.endswith(".py") else n for n in zf.namelist()]
        if entry["name"] == "advisor":  # the dataclass code and its installer (calcruntime/pyodide)
            want += [name for name, _ in hook.CODECACHE_FILES] + [hook.CODECACHE_TABLE]
        with zipfile.ZipFile(assets / c["compiled"]) as zf:
            assert zf.namelist() == want, entry["name"]
            assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}
            pyc = [n for n in zf.namelist() if n.endswith(".pyc")]
            magics = {zf.read(n)[:4] for n in pyc}  # one interpreter's magic number
            assert pyc and len(magics) == 1 and magics.pop()[2:] == b"\r\n", entry["name"]
    copies_equal("python_stdlib.zip")
    copies_equal("python_stdlib_rest.zip")
    with (
        zipfile.ZipFile(assets / "python_stdlib.zip") as zf,
        zipfile.ZipFile(assets / "python_stdlib_rest.zip") as rest,
    ):
        for z in (zf, rest):
            assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}
        assert "encodings/__init__.pyc" in zf.namelist()
        # Python's start in the first; what only the calculators import in the second
        assert "asyncio/__init__.pyc" in zf.namelist() and "difflib.pyc" in rest.namelist()
        assert not set(zf.namelist()) & set(rest.namelist())
    copies_equal("zip-encoding.zip")
    with zipfile.ZipFile(assets / "zip-encoding.zip") as zf:
        assert "Content-Encoding: br" in zf.read("README.txt").decode()


UNZIP_URL = (ROOT / "calcruntime" / "browser" / "unzip.mjs").as_uri()

# the runtime of ASSETS_DIR (argv[1]) and `install(names)`: the compiled copies of those lock
# entries' wheels, unpacked as the worker unpacks them (unzip.mjs, argv[2])
RUNTIME_JS = """
const dir = process.argv[1];
const { loadPyodide } = await import(dir + "/pyodide.mjs");
const py = await loadPyodide({ indexURL: dir + "/", lockFileURL: dir + "/advisor-lock.json" });
const fs = await import("node:fs");
const lock = JSON.parse(fs.readFileSync(dir + "/advisor-lock.json", "utf8"));
const { installStored, mountStdlibRest } = await import(process.argv[2]);
mountStdlibRest(py, fs.readFileSync(dir + "/python_stdlib_rest.zip"));
const install = (names) => installStored(py, names.map((n) =>
  new Uint8Array(fs.readFileSync(dir + "/" + lock.packages[n].tool["gpu-advisor"].compiled))));
"""

TRACEBACK_JS = (
    RUNTIME_JS
    + """
install(["pyyaml"]);
process.stdout.write(py.runPython(`
import json, traceback, yaml
out = []
for bad in (lambda: json.loads("{"), lambda: yaml.safe_load("a: [")):
    try:
        bad()
    except Exception:
        out.append(traceback.format_exc())
json.dumps(out)
`));
"""
)


def test_tracebacks_through_compiled_code_format(assets):
    """A traceback through the compiled standard library and a compiled copy names each file
    and function (line None): the bytecode's line tables say "no location", which traceback
    accepts (an empty table made it raise StopIteration inside sys.excepthook)."""
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", TRACEBACK_JS, str(assets), UNZIP_URL],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    json_tb, yaml_tb = json.loads(proc.stdout)
    assert 'File "json/decoder.py", line None, in raw_decode' in json_tb, json_tb
    assert json_tb.rstrip().endswith("(char 1)") and "StopIteration" not in json_tb
    assert 'File "yaml/parser.py", line None, in parse_node' in yaml_tb, yaml_tb
    assert "ParserError" in yaml_tb and "StopIteration" not in yaml_tb


SPLIT_JS = """
const dir = process.argv[1];
const fs = await import("node:fs");
const { loadPyodide } = await import(dir + "/pyodide.mjs");
const { mountStdlibRest, storedModules } = await import(process.argv[2]);
const py = await loadPyodide({ indexURL: dir + "/", lockFileURL: dir + "/advisor-lock.json" });
const rest = new Uint8Array(fs.readFileSync(dir + "/python_stdlib_rest.zip"));
const names = storedModules(rest);
py.globals.set("names", JSON.stringify(names));
const check = `
import importlib, json, sys
out = {"loaded": [n for n in json.loads(names) if n in sys.modules]}
try:
    import difflib
    out["difflib"] = "imported"
except ModuleNotFoundError:
    out["difflib"] = "missing"
json.dumps(out)
`;
const before = JSON.parse(py.runPython(check));
mountStdlibRest(py, rest);
const after = JSON.parse(py.runPython(check));
process.stdout.write(JSON.stringify({ names, before, after }));
"""


def test_python_starts_on_the_first_stdlib_zip_alone(assets):
    """Python's start reads only python_stdlib.zip (loadPyodide's); none of the modules of the
    second zip (calcruntime/build STDLIB_REST_ZIP) is imported by then, and they are found
    once unzip.mjs mountStdlibRest has put it on sys.path (the plain start's order, worker.mjs)."""
    got = json.loads(node_module(SPLIT_JS, str(assets), UNZIP_URL, timeout=120))
    assert "difflib" in got["names"] and len(got["names"]) >= 5
    assert got["before"] == {"loaded": [], "difflib": "missing"}
    assert got["after"]["difflib"] == "imported"


def test_split_zip_keeps_order_and_headers():
    """hooks' split_zip: the members `first` accepts in one zip, the others in another, each in
    its original order and stored as it was."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in ("a.pyc", "pkg/__init__.pyc", "b.pyc", "pkg/m.pyc", "c.txt"):
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), name.encode())
    first, rest = load_hook().split_zip(buf.getvalue(), lambda n: n.startswith("pkg/"))
    for data, want in (
        (first, ["pkg/__init__.pyc", "pkg/m.pyc"]),
        (rest, ["a.pyc", "b.pyc", "c.txt"]),
    ):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            assert z.namelist() == want
            assert all(z.read(n) == n.encode() for n in want)
            assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}
            assert {i.date_time for i in z.infolist()} == {(2026, 1, 1, 0, 0, 0)}


CODECACHE_JS = (
    RUNTIME_JS
    + """
install(Object.keys(lock.packages));
process.stdout.write(py.runPython(`
import importlib, json
importlib.invalidate_caches()
import advisor, calcruntime.pyodide.codecache as cc
n = cc.install_beside()
for m in advisor.module_names():  # as the site
    importlib.import_module(m)
json.dumps({"texts": n, **cc.stats})
`));
"""
)


def test_dataclass_code_covers_every_advisor_module(assets):
    """The compiled copy of advisor carries the code of every method that dataclasses writes
    while advisor's modules are imported in the runtime: installed as the worker does, no text
    is compiled at import time (a miss would mean a stale or partial table)."""
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", CODECACHE_JS, str(assets), UNZIP_URL],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    got = json.loads(proc.stdout)
    assert got["texts"] > 20 and got["hits"] >= got["texts"], got
    assert got["misses"] == 0, got


def test_snapshot_bytes_do_not_depend_on_where_the_checkout_lies(assets, tmp_path):
    """The build's snapshot script, run from a checkout at another path, gives the very bytes the
    build wrote (under Node, Emscripten names the program after the script's path unless
    pyodide_snapshot.mjs names it)."""
    hook = load_hook()
    elsewhere = tmp_path / "a" / "much-longer-checkout-path"
    (elsewhere / "calcruntime/node").mkdir(parents=True)
    (elsewhere / "calcruntime/browser").mkdir(parents=True)
    shutil.copy(ROOT / "calcruntime/node/pyodide_snapshot.mjs", elsewhere / "calcruntime/node")
    for name in ("unzip.mjs", "sparse.mjs"):
        shutil.copy(ROOT / "calcruntime/browser" / name, elsewhere / "calcruntime/browser")
    out, docs = tmp_path / "snapshot.bin", tmp_path / "catalog-docs.json"
    # the documents as make_snapshot writes them for the script
    files = read_documents(ROOT / "catalog")
    docs.write_bytes(json.dumps(files, sort_keys=True, ensure_ascii=False).encode())
    proc = subprocess.run(
        [
            "node",
            str(elsewhere / "calcruntime/node/pyodide_snapshot.mjs"),
            str(assets),
            str(docs),
            str(out),
        ],
        capture_output=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    built = gzip.decompress((assets / "advisor.snapshot.gz").read_bytes())
    assert hook.sparse_snapshot(out.read_bytes()) == built
