"""Helpers of the tests that run the site's JavaScript modules and build scripts under Node."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CALC = ROOT / "docs" / "assets" / "calc"


def load_hook():
    """hooks/pyodide_assets.py as a module (it is a mkdocs hook, not a package module)."""
    spec = importlib.util.spec_from_file_location(
        "pyodide_assets", ROOT / "hooks" / "pyodide_assets.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def node_module(script: str, *args: str, stdin: str = "", timeout: int = 60) -> str:
    """stdout of `script` run as an ES module by Node with `args` (process.argv[1:]); a failure
    raises with Node's stderr."""
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", script, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise AssertionError(f"node failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout
