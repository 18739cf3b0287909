"""What the site build writes into site/assets/pyodide/ and site/assets/calc/: the runtime, the
wheels and their compiled copies, the lock file, the standard-library zips, the snapshot, the
catalog as JSON, precompressed copies."""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.exceptions import PluginError

from hooks import state

from .paths import PYODIDE, _write
from .runtime import RUNTIME_FILES, runtime_file
from .snapshot import make_snapshot
from .stdlib import write_stdlib
from .wheels import write_wheels
from .zips import write_precompressed


def write_site_assets(site: Path) -> None:
    """Everything the calculators fetch, into the built site `site` (calcruntime/build/
    mkdocs_hook.py runs it after the pages are written)."""
    if not PYODIDE.is_dir():
        raise PluginError("node_modules/pyodide is missing: run `npm ci` (make setup)")
    from advisor.data.catalog import read_documents

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
