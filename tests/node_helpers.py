"""Helpers of the tests that run the site's JavaScript modules and build scripts under Node."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CALC = ROOT / "calcruntime" / "browser"  # served as assets/calc/


def load_hook():
    """The site build's side of the calculators' runtime (calcruntime.build)."""
    from calcruntime import build

    return build


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
