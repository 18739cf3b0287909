"""The advisor wheel, pure py3-none-any wheels of its dependencies, the lock file, and the
compiled copy of every wheel (NAME.pyc.zip: bytecode, members stored) with the dataclass code
table and the module that installs it (calcruntime/pyodide/) added to advisor's."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from mkdocs.exceptions import PluginError

from .paths import (
    BROWSER,
    CACHE,
    NODE,
    PYODIDE,
    PYODIDE_SIDE,
    ROOT,
    RUNTIME,
    _mkcache,
    _node,
    _prune,
    _sha,
    _tree_bytes,
    _write,
    cached_step,
)
from .zips import write_zip

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


@cached_step
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
    version must be the one pyproject.toml pins. Made from the installed files each time (it
    takes no cache entry, so it does not wait for the cache's lock)."""
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
        b"Wheel-Version: 1.0\nGenerator: gpu-advisor (calcruntime/build)\n"
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


def compiled_name(wheel_name: str) -> str:
    """advisor-0.1.0-py3-none-any.whl -> advisor-0.1.0-py3-none-any.pyc.zip"""
    return wheel_name.removesuffix(".whl") + ".pyc.zip"


@cached_step
def compiled_wheels(assets: Path, lock: dict) -> list[tuple[str, bytes]]:
    """(file name, bytes) of the compiled copy of each wheel of `lock` (in lock order): the same
    members, each NAME.py as a sourceless NAME.pyc compiled by the runtime's own interpreter
    (calcruntime/node/pyodide_compile.mjs, as the standard library). The worker's plain start unpacks
    these instead of the wheels: compiling advisor's and PyYAML's sources in the browser took
    about 0.25 s of the phone's first visit (import and catalog 645 -> 380-410 ms on the
    --mobile profile; importing advisor.webapi under Node: 226 -> 93-119 ms). Their members are
    stored and the worker fetches their gzip copy (`gzip_copy`): advisor 198 kB, PyYAML 52 kB
    over the network, against wheels of 205 and 44 kB (deflated member by member, the compiled
    copies were 242 and 62 kB). The build's snapshot installs them too (calcruntime/node/
    pyodide_snapshot.mjs: 5.6 MB instead of 6.6 MB, no source-compiled code in it); the wheels
    stay what the lock names, what a `loadPackage` install uses. Cached by its inputs."""
    entries = list(lock["packages"].values())
    wheels = [(assets / e["file_name"]).read_bytes() for e in entries]
    key = _sha(
        *wheels,
        (NODE / "pyodide_compile.mjs").read_bytes(),
        (NODE / "pyodide_dataclass_code.mjs").read_bytes(),
        *(path.read_bytes() for _, path in CODECACHE_FILES),
        UNZIP_MJS.read_bytes(),
        (NODE / "pyodide_bytecode.py").read_bytes(),
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


# The module that installs the dataclass code table, shipped beside advisor in its compiled copy
# (not in the wheel: the CLI and loadPackage never use it): (member name, file in the checkout).
CODECACHE_FILES = (
    ("calcruntime/__init__.py", RUNTIME / "__init__.py"),
    ("calcruntime/pyodide/__init__.py", PYODIDE_SIDE / "__init__.py"),
    ("calcruntime/pyodide/codecache.py", PYODIDE_SIDE / "codecache.py"),
)
CODECACHE_TABLE = "calcruntime/pyodide/dataclass_code.bin"  # codecache.FILE_NAME, beside it


def add_dataclass_code(advisor_zip: Path, zips: list[str], tmp: Path) -> None:
    """Append to the compiled copy of advisor the bytecode of the methods that `dataclasses`
    writes while advisor's modules are imported (calcruntime/pyodide/codecache.py: recorded by
    calcruntime/node/pyodide_dataclass_code.mjs in the runtime's own interpreter, with every
    compiled copy of `zips` installed), as member CODECACHE_TABLE, and the module that installs
    it (CODECACHE_FILES; stored, fixed date). The worker installs it before importing advisor:
    importing advisor.webapi under Node then takes 43-63 ms instead of 104-119 (two machines;
    the generated source of about 40 classes is not compiled)."""
    out = tmp / "dataclass_code.bin"
    _node("pyodide_dataclass_code.mjs", str(PYODIDE), str(out), *zips)
    data = out.read_bytes()
    out.unlink()
    if len(data) < 64:
        raise PluginError("pyodide_dataclass_code.mjs: no dataclass code was recorded")
    members = [(name, path.read_bytes()) for name, path in CODECACHE_FILES]
    with zipfile.ZipFile(advisor_zip, "a") as zf:
        for name, member in (*members, (CODECACHE_TABLE, data)):
            zi = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_STORED
            zf.writestr(zi, member)


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


# the worker's installer of the compiled copies, which the build's Node scripts use too
UNZIP_MJS = BROWSER / "unzip.mjs"


def _compiled_copy(assets: Path, entry: dict) -> bytes:
    """The compiled copy of a lock entry's wheel (NAME.pyc.zip in `assets`)."""
    return assets.joinpath(entry["tool"]["gpu-advisor"]["compiled"]).read_bytes()
