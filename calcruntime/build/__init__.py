"""The site build's side of the calculators' runtime (calcruntime/__init__.py), split by job:
`paths` (where things are, the cache, running Node), `runtime` (Pyodide's files), `wheels`
(the advisor wheel, dependency wheels, lock file, compiled copies), `zips` (the zips the worker
fetches and their compressed copies), `stdlib` (the standard library the calculators use),
`snapshot` (the memory snapshot), `pages` (the calculator pages, prerendered), `assets` (what
the build writes into the site). `mkdocs_hook.py` is the file mkdocs.yml names.

Determinism: the wheel is built with SOURCE_DATE_EPOCH, the snapshot with a fixed clock and a
seeded random source, gzip with mtime 0; every product is cached under .cache/calc/ by the
SHA-256 of its inputs, so a second build copies the same bytes without rebuilding.
"""

from .assets import write_site_assets
from .pages import BOOT_JS, CALCS, calc_data, calc_page, prerender
from .paths import BROWSER, CACHE, NODE, PYODIDE, ROOT
from .runtime import RUNTIME_FILES, SNAPSHOT_RESTORE, SNAPSHOT_RESTORE_FIXED, runtime_file
from .snapshot import (
    SNAPSHOT_NAME,
    SPARSE_BLOCK,
    SPARSE_MAGIC,
    gzip_named,
    make_snapshot,
    sparse_snapshot,
)
from .stdlib import STDLIB_REST_ZIP, STDLIB_ZIP, stdlib_zips, write_stdlib
from .wheels import (
    CODECACHE_FILES,
    CODECACHE_TABLE,
    DEPENDENCIES,
    LOCK_TOOL,
    UNZIP_MJS,
    build_wheel,
    compiled_name,
    compiled_wheels,
    dependency_wheel,
    lock_file,
    write_wheels,
)
from .zips import (
    ZIP_PROBE,
    gzip_copy,
    precompressed,
    split_zip,
    write_precompressed,
    write_zip,
    zip_probe,
)

__all__ = [
    "BOOT_JS",
    "BROWSER",
    "CACHE",
    "CALCS",
    "CODECACHE_FILES",
    "CODECACHE_TABLE",
    "DEPENDENCIES",
    "LOCK_TOOL",
    "NODE",
    "PYODIDE",
    "ROOT",
    "RUNTIME_FILES",
    "SNAPSHOT_NAME",
    "SNAPSHOT_RESTORE",
    "SNAPSHOT_RESTORE_FIXED",
    "SPARSE_BLOCK",
    "SPARSE_MAGIC",
    "STDLIB_REST_ZIP",
    "STDLIB_ZIP",
    "UNZIP_MJS",
    "ZIP_PROBE",
    "build_wheel",
    "calc_data",
    "calc_page",
    "compiled_name",
    "compiled_wheels",
    "dependency_wheel",
    "gzip_copy",
    "gzip_named",
    "lock_file",
    "make_snapshot",
    "precompressed",
    "prerender",
    "runtime_file",
    "sparse_snapshot",
    "split_zip",
    "stdlib_zips",
    "write_precompressed",
    "write_site_assets",
    "write_stdlib",
    "write_wheels",
    "write_zip",
    "zip_probe",
]
