"""Calculators: the self-hosted Pyodide runtime, the advisor wheel, a memory snapshot, and the
prerendered default result of every calculator.

Registered in mkdocs.yml `hooks:`.

- `on_post_page`: the marker `<!-- advisor:calc:NAME -->` (hooks/markers.py) becomes the whole
  calculator with its default result,
  computed now by advisor.webapi (CPython) and rendered to HTML by the very renderer the browser
  uses (docs/assets/calc/render.mjs, run under Node by scripts/calc_prerender.mjs).
- `on_post_build`: into site/assets/pyodide/: the runtime files of the pinned npm package
  `pyodide`; the advisor wheel (`python -m build --wheel`, pure py3-none-any, with the report
  templates inside); pure py3-none-any wheels of advisor's dependencies (PyYAML, MarkupSafe,
  Jinja2: repacked from the versions pinned in pyproject.toml and installed here, without their
  C extensions, which both replace with their own pure-Python code; `dependency_wheel`); a lock
  file listing every wheel by name with its sha256 and dependencies
  (`loadPyodide({lockFileURL, packages: ["advisor"]})`), and for each wheel its compiled copy
  NAME.pyc.zip (bytecode instead of source, members stored, `compiled_wheels`; the lock entry's
  `tool["gpu-advisor"]` names it with its sha256; beside it its gzip and brotli copies,
  `write_zip`), which the worker's plain start fetches and installs; `python_stdlib.zip` and
  `python_stdlib_rest.zip` with only the standard-library modules the calculators use, those
  of Python's start in the first (`stdlib_zips`), and their copies, which the worker fetches
  for either start; `ZIP_PROBE`, which tells the worker which copy to ask for;
  `advisor.snapshot.gz`, a Pyodide memory snapshot taken under Node after loading that wheel and
  the catalog, less its zero blocks (`sparse_snapshot`; scripts/pyodide_snapshot.mjs;
  loadPyodide's `_makeSnapshot`/`_loadSnapshot`: cold start in 0.4 s instead of 1.5 s); the catalog's parsed documents as JSON
  (catalog-docs.json: the plain start builds the catalog from them without parsing YAML) and the
  validated catalog (catalog.json). The catalog is the build
  state's (hooks/state.py), so `$ADVISOR_CATALOG` reaches the calculators too.

Determinism: the wheel is built with SOURCE_DATE_EPOCH, the snapshot with a fixed clock and a
seeded random source, gzip with mtime 0; every product is cached under .cache/calc/ by the
SHA-256 of its inputs, so a second build copies the same bytes without rebuilding.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import io
import json
import logging
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

if str(Path(__file__).resolve().parent.parent) not in sys.path:  # mkdocs loads this by path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import event_priority  # noqa: E402

from hooks import markers, state  # noqa: E402


def _repo() -> Path:
    """The checkout holding advisor/, scripts/ and node_modules/ (a test may build a copy of the
    docs elsewhere: then the installed advisor's checkout)."""
    import advisor

    here = Path(__file__).resolve().parent.parent
    for base in (here, Path(advisor.__file__).resolve().parent.parent):
        if (base / "scripts" / "pyodide_snapshot.mjs").is_file():
            return base
    return here


ROOT = _repo()
PYODIDE = ROOT / "node_modules" / "pyodide"
CACHE = ROOT / ".cache" / "calc"
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
            "changed?); see SNAPSHOT_RESTORE in hooks/pyodide_assets.py"
        )
    return text.replace(SNAPSHOT_RESTORE, SNAPSHOT_RESTORE_FIXED).encode("utf-8")


CALCS = ("vram", "budget", "picker", "roofline", "serving", "cluster")
# Inlined into the <head> of calculator pages (mkdocs.yml keeps the file itself out of the site):
# starts the Pyodide worker early and holds Material's search worker back (the file says why).
BOOT_JS = (ROOT / "docs" / "assets" / "calc" / "boot.js").read_text(encoding="utf-8")
SOURCE_DATE_EPOCH = "1767225600"  # 2026-01-01: fixed wheel timestamps
# advisor's run-time dependencies as Pyodide packages: (distribution, import names, depends).
DEPENDENCIES = (
    ("PyYAML", ("yaml",), ()),
    ("MarkupSafe", ("markupsafe",), ()),
    ("Jinja2", ("jinja2",), ("markupsafe",)),
)
REPORT_TEMPLATES = ROOT / "templates" / "report"
# the time model's measured accuracy (bench/throughput_validation.py), shipped in the wheel as
# advisor/validation_data/ so that the browser shows the same error bands as the CLI
ACCURACY_SUMMARY = ROOT / "bench_results" / "validation" / "throughput-summary.json"

log = logging.getLogger("mkdocs.hooks.pyodide_assets")


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


def build_wheel() -> Path:
    """The advisor wheel (pure py3-none-any, the report templates inside), cached by the hash
    of its sources."""
    key = _sha(
        _tree_bytes(ROOT / "advisor", "*.py"),
        _tree_bytes(REPORT_TEMPLATES, "*"),
        ACCURACY_SUMMARY.read_bytes(),
        (ROOT / "pyproject.toml").read_bytes(),
        (ROOT / "README.md").read_bytes(),
    )[:16]
    folder = CACHE / f"wheel-{key}"
    hits = sorted(folder.glob("advisor-*-py3-none-any.whl")) if folder.is_dir() else []
    if hits:
        return hits[0]
    tmp = Path(tempfile.mkdtemp(prefix="wheel-", dir=_mkcache()))
    env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools would reuse stale build/lib
    with tempfile.TemporaryDirectory() as build_dir:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "build",
                "--wheel",
                "--no-isolation",
                "--skip-dependency-check",
                "--outdir",
                str(tmp),
            ],
            cwd=ROOT,
            env={**env, "TMPDIR": build_dir},
            capture_output=True,
            text=True,
        )
    if proc.returncode:
        raise PluginError(f"advisor wheel: python -m build failed:\n{proc.stderr[-2000:]}")
    wheels = sorted(tmp.glob("advisor-*-py3-none-any.whl"))
    if not wheels:
        raise PluginError("advisor wheel: python -m build made no py3-none-any wheel")
    _check_wheel(wheels[0])
    if folder.exists():
        shutil.rmtree(folder)
    tmp.rename(folder)
    _prune("wheel-*")
    return folder / wheels[0].name


def _check_wheel(wheel: Path) -> None:
    """The wheel holds exactly advisor/**/*.py and templates/report/* (nothing stale)."""
    with zipfile.ZipFile(wheel) as zf:
        got = {n for n in zf.namelist() if not n.split("/")[0].endswith(".dist-info")}
    want = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "advisor").rglob("*.py")
        if "__pycache__" not in p.parts
    } | {f"advisor/report_templates/{p.name}" for p in REPORT_TEMPLATES.iterdir() if p.is_file()}
    want.add(f"advisor/validation_data/{ACCURACY_SUMMARY.name}")
    want.add("advisor/validation_data/memory-summary.json")
    if got != want:
        raise PluginError(
            f"advisor wheel: missing {sorted(want - got)}, unexpected {sorted(got - want)} "
            "(pyproject.toml [tool.setuptools] packages)"
        )


def _pins() -> dict[str, str]:
    """{distribution (lower case): version} of pyproject.toml's `Name==version` dependencies."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.M | re.S)
    pins = re.findall(r'"([A-Za-z0-9_.-]+)==([^"]+)"', deps.group(1) if deps else "")
    return {name.lower(): version for name, version in pins}


def dependency_wheel(dist_name: str, imports: tuple[str, ...]) -> tuple[str, bytes]:
    """(file name, bytes) of a py3-none-any wheel of the installed distribution `dist_name`:
    its Python files (no compiled extension: PyYAML then reads with its pure-Python parser,
    MarkupSafe escapes with markupsafe._native), METADATA and licence, a WHEEL and a RECORD;
    fixed timestamps, so the same installed version always gives the same bytes. The installed
    version must be the one pyproject.toml pins."""
    from importlib import metadata

    dist = metadata.distribution(dist_name)
    pinned = _pins().get(dist_name.lower())
    if pinned != dist.version:
        raise PluginError(
            f"{dist_name} {dist.version} is installed, pyproject.toml pins {pinned}: "
            "run scripts/setup.sh"
        )
    name = re.sub(r"[-_.]+", "_", dist_name).lower()
    info = f"{name}-{dist.version}.dist-info"
    members: dict[str, bytes] = {}
    for f in dist.files or ():
        parts = f.parts
        if parts[0] in imports and (f.suffix == ".py" or f.name == "py.typed"):
            members[f.as_posix()] = Path(f.locate()).read_bytes()
        elif parts[0].endswith(".dist-info") and (f.name == "METADATA" or "licenses" in parts):
            members[f"{info}/{'/'.join(parts[1:])}"] = Path(f.locate()).read_bytes()
    members[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: gpu-advisor (hooks/pyodide_assets.py)\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = []
    for path, data in sorted(members.items()):
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    members[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for path, data in sorted(members.items()):
            zi = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
    return f"{name}-{dist.version}-py3-none-any.whl", buf.getvalue()


def write_wheels(assets: Path) -> dict:
    """Write the advisor wheel, its dependencies' wheels and `advisor-lock.json` (every wheel
    with its sha256) into `assets`; returns the lock file."""
    wheel = build_wheel()
    _write(assets / wheel.name, wheel.read_bytes())
    deps = []
    for dist_name, imports, depends in DEPENDENCIES:
        file_name, data = dependency_wheel(dist_name, imports)
        _write(assets / file_name, data)
        deps.append((file_name, data, imports, depends))
    lock = lock_file(wheel, deps)
    for entry, (file_name, data) in zip(
        lock["packages"].values(), compiled_wheels(assets, lock), strict=True
    ):
        write_zip(assets, file_name, data)
        entry["tool"][LOCK_TOOL] = {
            "compiled": file_name,
            "compiled_sha256": hashlib.sha256(data).hexdigest(),
        }
    _write(assets / "advisor-lock.json", json.dumps(lock, indent=1, sort_keys=True).encode())
    return lock


LOCK_TOOL = "gpu-advisor"  # the lock entries' `tool` key for the compiled copy of the wheel


def gzip_copy(data: bytes) -> bytes:
    """NAME.zip.gz for a zip of stored members that the worker fetches whole and unpacks with
    the browser's DecompressionStream (python_stdlib.zip, the compiled wheels): a host serves it
    as the file it is, so it is as small on a host that compresses nothing (or only text, as
    GitHub Pages) as on any other. zopfli's deflate (15 iterations: 3-4 % smaller than gzip -9,
    the same gzip format) where the `zopfli` package is installed (requirements-dev.txt), else
    gzip -9; mtime 0 (deterministic), checked to decompress to `data`, cached by its SHA-256
    (zopfli takes about 11 s for the standard library)."""
    try:
        import zopfli.gzip
    except ImportError:
        zopfli = None
    tag = "zopfli15" if zopfli else "gzip9"
    cached = CACHE / f"gz-{tag}-{hashlib.sha256(data).hexdigest()[:16]}.gz"
    if cached.is_file():
        return cached.read_bytes()
    if zopfli:
        packed = zopfli.gzip.compress(data, numiterations=15)  # its header's mtime is 0
    else:
        packed = gzip.compress(data, compresslevel=9, mtime=0)
    if gzip.decompress(packed) != data:
        raise PluginError("gzip: the compressed copy does not decompress to the file")
    _cache_put(cached, packed, "gz-*.gz", keep=16)
    return packed


def write_zip(assets: Path, name: str, data: bytes) -> None:
    """A zip the worker fetches (`data`, members stored) as NAME, with its two compressed copies:
    NAME.gz (`gzip_copy`), which the worker fetches on any host, and NAME.br (brotli, as
    `precompressed` makes it, where the `brotli` package is installed), which a host that sends
    precompressed copies (nginx `brotli_static`, Caddy `precompressed br`) serves for NAME with
    `Content-Encoding: br`; the worker asks for NAME then (`ZIP_PROBE`). Brotli made the
    standard library (then one zip) 567 kB instead of zopfli's 731 kB, 0.2 s less on the phone
    profile of issue 12."""
    _write(assets / name, data)
    _write(assets / (name + ".gz"), gzip_copy(data))
    br = precompressed(data).get(".br")
    if br is not None:
        _write(assets / (name + ".br"), br)


# A small zip whose response tells the worker whether this host sends precompressed brotli
# copies of zips (`Content-Encoding: br`): then it asks for every zip by its own name, else for
# NAME.zip.gz. Asked by its own name, like the zips: a host that compresses by type (most
# compress text, not application/zip) answers it as it answers them.
ZIP_PROBE = "zip-encoding.zip"


def zip_probe() -> bytes:
    """`ZIP_PROBE`: one stored member that says what the file is for (deterministic)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        zi = zipfile.ZipInfo("README.txt", date_time=(2026, 1, 1, 0, 0, 0))
        zi.external_attr = 0o644 << 16
        out.writestr(
            zi,
            "GPU Advisor's calculators fetch this file first: when the host sends it with\n"
            "Content-Encoding: br (it serves the precompressed NAME.br beside NAME), they fetch\n"
            "the runtime's zips by their own names, brotli-compressed; otherwise NAME.zip.gz.\n"
            "See README.md, section Compression.\n",
        )
    return buf.getvalue()


def compiled_name(wheel_name: str) -> str:
    """advisor-0.1.0-py3-none-any.whl -> advisor-0.1.0-py3-none-any.pyc.zip"""
    return wheel_name.removesuffix(".whl") + ".pyc.zip"


def compiled_wheels(assets: Path, lock: dict) -> list[tuple[str, bytes]]:
    """(file name, bytes) of the compiled copy of each wheel of `lock` (in lock order): the same
    members, each NAME.py as a sourceless NAME.pyc compiled by the runtime's own interpreter
    (scripts/pyodide_compile.mjs, as the standard library). The worker's plain start unpacks
    these instead of the wheels: compiling advisor's and PyYAML's sources in the browser took
    about 0.25 s of the phone's first visit (import and catalog 645 -> 380-410 ms on the
    --mobile profile; importing advisor.webapi under Node: 226 -> 93-119 ms). Their members are
    stored and the worker fetches their gzip copy (`gzip_copy`): advisor 198 kB, PyYAML 52 kB
    over the network, against wheels of 205 and 44 kB (deflated member by member, the compiled
    copies were 242 and 62 kB). The build's snapshot installs them too (scripts/
    pyodide_snapshot.mjs: 5.6 MB instead of 6.6 MB, no source-compiled code in it); the wheels
    stay what the lock names, what a `loadPackage` install uses. Cached by its inputs."""
    entries = list(lock["packages"].values())
    wheels = [(assets / e["file_name"]).read_bytes() for e in entries]
    key = _sha(
        *wheels,
        (ROOT / "scripts" / "pyodide_compile.mjs").read_bytes(),
        (ROOT / "scripts" / "pyodide_dataclass_code.mjs").read_bytes(),
        UNZIP_MJS.read_bytes(),
        (ROOT / "scripts" / "pyodide_bytecode.py").read_bytes(),
        (PYODIDE / "package.json").read_bytes(),
    )[:16]
    folder = CACHE / f"compiled-{key}"
    names = [compiled_name(e["file_name"]) for e in entries]
    if not all((folder / n).is_file() for n in names):
        tmp = Path(tempfile.mkdtemp(prefix="compiled-", dir=_mkcache()))
        args = []
        for e in entries:
            args += [str(assets / e["file_name"]), str(tmp / compiled_name(e["file_name"]))]
        _node("pyodide_compile.mjs", str(PYODIDE), *args)
        add_dataclass_code(
            tmp / compiled_name(lock["packages"]["advisor"]["file_name"]), args[1::2], tmp
        )
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
        _prune("compiled-*")
    return [(n, (folder / n).read_bytes()) for n in names]


def add_dataclass_code(advisor_zip: Path, zips: list[str], tmp: Path) -> None:
    """Append to the compiled copy of advisor the bytecode of the methods that `dataclasses`
    writes while advisor's modules are imported (advisor/_codecache.py: recorded by
    scripts/pyodide_dataclass_code.mjs in the runtime's own interpreter, with every compiled
    copy of `zips` installed), as member advisor/_dataclass_code.bin (stored, fixed date). The
    worker installs it before importing advisor: importing advisor.webapi under Node then takes
    43-63 ms instead of 104-119 (two machines; the generated source of about 40 classes is not
    compiled)."""
    out = tmp / "dataclass_code.bin"
    _node("pyodide_dataclass_code.mjs", str(PYODIDE), str(out), *zips)
    data = out.read_bytes()
    out.unlink()
    if len(data) < 64:
        raise PluginError("pyodide_dataclass_code.mjs: no dataclass code was recorded")
    with zipfile.ZipFile(advisor_zip, "a") as zf:
        zi = zipfile.ZipInfo("advisor/_dataclass_code.bin", date_time=(2026, 1, 1, 0, 0, 0))
        zi.external_attr = 0o644 << 16
        zi.compress_type = zipfile.ZIP_STORED
        zf.writestr(zi, data)


def _mkcache() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    return CACHE


def lock_file(wheel: Path, deps: list) -> dict:
    """A Pyodide lock file listing the advisor wheel and its dependencies' wheels `deps`
    ((file name, bytes, imports, depends) each), by name with sha256 (the runtime's own lock
    file lists 357 packages the site does not ship)."""
    info = json.loads((PYODIDE / "pyodide-lock.json").read_text(encoding="utf-8"))["info"]

    def entry(file_name: str, data: bytes, imports, depends) -> dict:
        name, version = file_name.split("-")[:2]
        return {
            "name": name,
            "version": version,
            "file_name": file_name,
            "install_dir": "site",
            "sha256": hashlib.sha256(data).hexdigest(),
            "package_type": "package",
            "imports": list(imports),
            "depends": list(depends),
            "unvendored_tests": False,
            "tool": {},
        }

    packages = {"advisor": entry(wheel.name, wheel.read_bytes(), ["advisor"], [])}
    for file_name, data, imports, depends in deps:
        e = entry(file_name, data, imports, depends)
        packages[e["name"]] = e
        packages["advisor"]["depends"].append(e["name"])
    return {"info": info, "packages": packages}


def _node(script: str, *args: str, stdin: bytes | None = None) -> bytes:
    node = shutil.which("node")
    if not node:
        raise PluginError("node is needed to build the calculators (apt-get install nodejs)")
    proc = subprocess.run(
        [node, str(ROOT / "scripts" / script), *args], input=stdin, capture_output=True
    )
    if proc.returncode:
        raise PluginError(f"scripts/{script} failed:\n{proc.stderr.decode()[-3000:]}")
    return proc.stdout


# the worker's installer of the compiled copies, which the build's Node scripts use too
UNZIP_MJS = ROOT / "docs" / "assets" / "calc" / "unzip.mjs"
SPARSE_MAGIC = b"ASP1"  # docs/assets/calc/sparse.mjs reads it
SPARSE_BLOCK = 4096


def sparse_snapshot(raw: bytes, block: int = SPARSE_BLOCK) -> bytes:
    """`raw` less its all-zero blocks of `block` bytes, as docs/assets/calc/sparse.mjs `unsparse`
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


def _compiled_copy(assets: Path, entry: dict) -> bytes:
    """The compiled copy of a lock entry's wheel (NAME.pyc.zip in `assets`)."""
    return assets.joinpath(entry["tool"]["gpu-advisor"]["compiled"]).read_bytes()


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
        (ROOT / "scripts" / "pyodide_snapshot.mjs").read_bytes(),
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


def stdlib_zips(assets: Path, catalog_docs: dict) -> tuple[bytes, bytes]:
    """The standard library as the site ships it, in two zips (`STDLIB_ZIP`, `STDLIB_REST_ZIP`)
    of only the modules the calculators use, compiled to bytecode by the runtime's own
    interpreter (scripts/pyodide_compile.mjs: the plain start's loadPyodide in 0.6 s instead of
    1.8 s), members stored: the first holds what Python's start itself imports (asyncio,
    pyodide, zipfile, ...), the second the other modules and packages (difflib, pickle,
    ipaddress, html, urllib, ...; a package's modules stay with its __init__), which the worker fetches
    while Python starts instead of while the wasm downloads (`STDLIB_REST_ZIP` says how it is
    mounted). The runtime's own zip is 2.5 MB; deflated member by member and with copies of the
    frozen modules, the compiled zip was 1,002 kB with gzip. The modules are the files whose
    modules are in sys.modules, less the frozen ones, after the calculators have started both
    ways the worker starts them and run `_stdlib_calls`; "start" ones are those in sys.modules
    right after loadPyodide (scripts/pyodide_stdlib_used.mjs, on the full zip of the pinned
    package in `assets`, with the compiled wheels of its advisor-lock.json, installed as the
    worker installs them: docs/assets/calc/unzip.mjs). A module that advisor or its
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
        (ROOT / "scripts" / "pyodide_stdlib_used.mjs").read_bytes(),
        UNZIP_MJS.read_bytes(),
        (ROOT / "scripts" / "pyodide_compile.mjs").read_bytes(),
        (ROOT / "scripts" / "pyodide_bytecode.py").read_bytes(),
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


def split_zip(data: bytes, first: Callable[[str], bool]) -> tuple[bytes, bytes]:
    """Two zips from one (`data`): the members whose names `first` accepts, and the others; in
    the original order, with their headers as they were (stored members stay stored)."""
    bufs = io.BytesIO(), io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(bufs[0], "w") as a,
        zipfile.ZipFile(bufs[1], "w") as b,
    ):
        for info in src.infolist():
            (a if first(info.filename) else b).writestr(info, src.read(info))
    return bufs[0].getvalue(), bufs[1].getvalue()


# The standard library as loadPyodide gets it (`stdLibURL`: what Python's start imports), and
# the rest of what the calculators use, which the plain start mounts after loadPyodide and
# before it imports advisor (docs/assets/calc/unzip.mjs `mountStdlibRest`: the file at
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


# Precompressed copies next to the calculators' text and wasm files, for hosts that serve
# them (nginx gzip_static / brotli_static, Caddy `file_server { precompressed br gzip }`: README,
# "Hosting"); a host that does not still compresses on the fly or sends the file as it is. The
# browser decodes them to the very bytes of the file (checked here), so the lock file's sha256
# and the snapshot's gzip are untouched: the snapshot and the wheels and the zip are compressed
# already and get no copy.
PRECOMPRESS_SUFFIXES = (".wasm", ".mjs", ".js", ".json", ".css")
PRECOMPRESS_MIN_BYTES = 1024


def precompressed(data: bytes) -> dict[str, bytes]:
    """{".gz": gzip -9 (mtime 0), ".br": brotli quality 11, the smaller of two windows} of
    `data` (".br" only where the `brotli` package is installed: requirements-dev.txt), cached
    by the data's SHA-256 (brotli 11 of the 9.6 MB wasm takes about 25 s a window, once)."""
    out = {".gz": gzip.compress(data, compresslevel=9, mtime=0)}
    try:
        import brotli
    except ImportError:
        return out
    cached = CACHE / f"br2-{hashlib.sha256(data).hexdigest()[:16]}.br"
    if cached.is_file():
        out[".br"] = cached.read_bytes()
    else:
        # the smaller of two windows, for each file: 4 MiB (lgwin 22) gives the 9.6 MB wasm
        # 2,739,076 bytes, 16 MiB (24) 2,769,608
        out[".br"] = min((brotli.compress(data, quality=11, lgwin=w) for w in (22, 24)), key=len)
        if brotli.decompress(out[".br"]) != data:
            raise PluginError("brotli: the compressed copy does not decompress to the file")
        _cache_put(cached, out[".br"], "br2-*.br", keep=32)
    if gzip.decompress(out[".gz"]) != data:
        raise PluginError("gzip: the compressed copy does not decompress to the file")
    return out


def write_precompressed(folder: Path) -> None:
    """NAME.gz and NAME.br next to every file of `folder` that is text or wasm and not tiny."""
    for path in sorted(folder.iterdir()):
        if path.suffix not in PRECOMPRESS_SUFFIXES or not path.is_file():
            continue
        data = path.read_bytes()
        if len(data) < PRECOMPRESS_MIN_BYTES:
            continue
        for suffix, packed in precompressed(data).items():
            _write(path.with_name(path.name + suffix), packed)


def _cache_put(cached: Path, data: bytes, pattern: str, keep: int = 4) -> None:
    """Store `data` as the cache entry `cached` (written whole, then renamed: a build stopped
    half-way leaves no entry), keeping the `keep` newest entries matching `pattern`."""
    _mkcache()
    part = cached.with_suffix(".part")
    part.write_bytes(data)
    part.rename(cached)
    _prune(pattern, keep)


def _prune(pattern: str, keep: int = 4) -> None:
    """Keep the cache small: the `keep` newest entries matching `pattern`."""
    entries = sorted(CACHE.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[keep:]:
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)


# --------------------------------------------------------------------------- prerendering


def _strings(lang: str) -> dict:
    """The calculators' strings (keys `calc.*`, `err.*`) of the build's translations."""
    table = state.current().strings[lang]
    return {k: v for k, v in table.items() if k.startswith(("calc.", "err."))}


def prerender() -> dict:
    """{(name, lang): html} for every calculator's default state, once per build."""
    cache = state.current().cache
    if "prerendered" in cache:
        return cache["prerendered"]
    from advisor import webapi

    items = []
    for name in CALCS:
        defaults = dict(webapi.DEFAULTS[name])
        result = json.loads(webapi.dumps(webapi.run(name, {})))
        if "error" in result:
            raise PluginError(f"calculator {name}: default inputs fail: {result['error']}")
        for lang in ("az", "en"):
            items.append({"kind": name, "lang": lang, "state": defaults, "result": result})
    payload = {
        "items": items,
        "strings": {lang: _strings(lang) for lang in ("az", "en")},
        "catalog": _catalog_lists(),
    }
    out = json.loads(_node("calc_prerender.mjs", stdin=json.dumps(payload).encode()))
    cache["prerendered"] = {(it["kind"], it["lang"]): h for it, h in zip(items, out, strict=True)}
    return cache["prerendered"]


def _catalog_lists() -> dict:
    """What the forms' drop-downs list: models, accelerators and the networks between nodes
    (catalog/networks/, kind "inter"), as (id, name), and the choices of every select field
    (advisor.core.vocab)."""
    from advisor.core import vocab

    cat = state.current().catalog
    return {
        "models": [[m.id, m.display_name] for m in cat.models],
        "gpus": [[g.id, g.name] for g in cat.gpus],
        "networks": [[f.id, f.name] for f in cat.networks if f.kind == "inter"],
        "options": vocab.form_choices(),
    }


def calc_data(lang: str) -> str:
    """The page's calculator data inside its content (so that Material's instant navigation,
    which swaps the content, brings the new page's along): a hidden element whose attributes
    hold the strings (`calc.*`, `err.*` of `lang`) and the drop-downs' lists as JSON. Not a
    `<script type="application/json">`: instant navigation re-creates every script of the
    content without its attributes, so JSON would run as JavaScript."""
    strings = html.escape(json.dumps(_strings(lang), ensure_ascii=False, sort_keys=True))
    lists = html.escape(json.dumps(_catalog_lists(), ensure_ascii=False, sort_keys=True))
    return (
        f'<div class="calc-data" hidden data-lang="{lang}" data-strings="{strings}" '
        f'data-lists="{lists}"></div>'
    )


def on_post_page(output, page, config):
    """Calculator pages: each marker becomes its prerendered calculator (the first preceded by
    `calc_data`); into <head>: boot.js (starts the worker before the page is parsed) and module
    preloads of the runtime's scripts. calc.css (mkdocs.yml extra_css) and
    docs/assets/calc/loader.mjs (extra_javascript, which imports calc.mjs and wires the
    calculators) are on every page, for instant navigation."""
    if not any(kind == "calc" for kind, _ in markers.found(output)):
        return output
    lang = state.page_lang(page)
    pre = prerender()
    first = [calc_data(lang)]

    def swap(name: str) -> str:
        return (first.pop() if first else "") + pre[(name, lang)]

    output = markers.replace(output, "calc", swap)
    base = "../" * page.url.count("/") if page.url else ""
    # boot.js right after <meta charset> (which must stay in the first 1024 bytes), before the
    # stylesheets: an inline script after them waits until they have loaded (on the phone
    # profile of issue 12 the worker then started 0.3 s later)
    charset = '<meta charset="utf-8">'
    if charset not in output:
        raise PluginError(f"{page.file.src_uri}: no {charset} to put boot.js after")
    boot = f'<script data-base="{base}">{BOOT_JS}</script>'
    output = output.replace(charset, charset + boot, 1)
    head = (
        f'<link rel="modulepreload" href="{base}assets/calc/calc.mjs">'
        f'<link rel="modulepreload" href="{base}assets/calc/render.mjs">'
        f'<link rel="modulepreload" href="{base}assets/calc/worker.mjs">'
        f'<link rel="modulepreload" href="{base}assets/calc/unzip.mjs">'
        f'<link rel="modulepreload" href="{base}assets/calc/sparse.mjs">'
        f'<link rel="modulepreload" href="{base}assets/pyodide/pyodide.mjs">'
    )
    return output.replace("</head>", head + "</head>", 1)


# --------------------------------------------------------------------------- assets


@event_priority(50)  # before hooks/reports.py copies the runtime only if it is missing
def on_post_build(config):
    if not PYODIDE.is_dir():
        raise PluginError("node_modules/pyodide is missing: run `npm ci` (make setup)")
    from advisor.data.catalog import read_documents

    site = Path(config.site_dir)
    assets = site / "assets" / "pyodide"
    for name in RUNTIME_FILES:
        _write(assets / name, runtime_file(name))
    lock = write_wheels(assets)
    st = state.current()
    files = read_documents(st.catalog_root)
    _write(
        site / "assets" / "calc" / "catalog-docs.json",
        json.dumps(files, sort_keys=True, ensure_ascii=False).encode(),
    )
    _write(site / "assets" / "calc" / "catalog.json", st.catalog.to_json().encode())
    write_stdlib(assets, files)
    _write(assets / "advisor.snapshot.gz", make_snapshot(assets, lock, files))
    write_precompressed(assets)
    write_precompressed(site / "assets" / "calc")
