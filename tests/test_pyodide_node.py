"""The same golden inputs give identical outputs (byte for byte) in CPython and in Pyodide under
Node (the npm package `pyodide`), loaded the two ways the site loads advisor: from the build's
memory snapshot, and by name from the lock file (the wheel, sha256-checked)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_webapi import BAD, CAT, GOLDEN

from advisor import webapi
from advisor.catalog import read_documents

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.node,
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js"),
    pytest.mark.skipif(
        not (ROOT / "node_modules" / "pyodide").is_dir(), reason="needs node_modules/pyodide"
    ),
]


def _hook():
    spec = importlib.util.spec_from_file_location(
        "pyodide_assets", ROOT / "hooks" / "pyodide_assets.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    """The site's assets/pyodide/ as the build makes it (wheel and snapshot from the cache)."""
    hook = _hook()
    out = tmp_path_factory.mktemp("pyodide")
    for name in hook.RUNTIME_FILES:
        (out / name).write_bytes(hook.runtime_file(name))
    lock = hook.write_wheels(out)
    files = read_documents(ROOT / "catalog")
    (out / "python_stdlib.zip").write_bytes(hook.stdlib_zip(out, files))
    (out / "advisor.snapshot.gz").write_bytes(hook.make_snapshot(out, lock, files))
    cat = out / "catalog-docs.json"
    cat.write_text(json.dumps(files, ensure_ascii=False), encoding="utf-8")
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
            str(ROOT / "scripts" / "pyodide_node_run.mjs"),
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


@pytest.mark.parametrize("mode", ["snapshot", "lock"])
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
    hook = _hook()
    for dist, imports, _depends in hook.DEPENDENCIES:
        assert hook.dependency_wheel(dist, imports) == hook.dependency_wheel(dist, imports)
