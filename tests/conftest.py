"""Shared fixtures: the bilingual site built in-process ONCE per test session, and an HTTP
server for it (for the browser tests of every engineer).

    def test_x(built_site):      # pathlib.Path of the built site (site/ layout: az at /, en/ ...)
    def test_y(site_server):     # "http://127.0.0.1:<port>/" serving built_site
    def test_z(chromium):        # Debian's Chromium under Playwright, launched once per session

`build_project(tmp_path, edit)` builds a temporary copy of the project (after `edit(copy_root)`)
and returns the site folder or raises the build's error: for the strict-failure tests.

Time (the suite must stay under 10 minutes on 2 cores; `make test` runs `pytest -n 2`, xdist):
- `built_site` is built ONCE per run for every worker: into one folder of the run's temporary
  root (the controller names it), under a file lock; a worker that collects a test needing it
  starts that build at once in a background process (`python tests/conftest.py --build-site
  DIR`), so that it overlaps the unit tests, which run first (`pytest_collection_modifyitems`
  puts the tests that build a variant of the site next and the readers of the built site last);
  the workers then run at a lower priority (nice +5) so that the build, which the readers wait
  for, gets a core of its own.
- the tests of a module that builds a variant of the site once for the module, or that share
  one browser page (`ONE_WORKER_MODULES`), stay on one worker (`pytest_xdist_make_scheduler`); every other test
  goes wherever a worker is free.
- each test process parses a catalog document once for given bytes (`read_document` wrapped in
  `pytest_configure`; every call gets its own copy, failures are not cached): modules that load
  the catalog at import, CLI calls and builds in a test process no longer re-parse ~150 YAML files.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no background build, each worker builds its own site
    fcntl = None

import pytest

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")


def _torch_threads_per_worker() -> None:
    """Under xdist (`-n N`), each worker's PyTorch gets its share of the cores (cores // N, at
    least 1) instead of every core: with 2 workers on 2 cores, two OpenMP pools of 2 threads
    (and the background build beside them) spin-wait for a core, and the torch tests cost 2.6x
    the CPU (tests/test_memory_validation.py, three cases: 33.6 s of user CPU with 2 threads,
    12.9 s with 1; same allocations, same results). Set before torch is imported (OpenMP reads
    it once); an OMP_NUM_THREADS given by the caller is kept; a plain `pytest` is unchanged."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers and workers.isdigit() and int(workers) > 0:
        threads = max(1, (os.cpu_count() or 1) // int(workers))
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))


_torch_threads_per_worker()

# ------------------------------------------------------------------ catalog documents parsed once


# Every test module that loads the catalog at import, every CLI call in a test and every site
# build in a test process parse the same ~150 YAML documents again: 0.2-0.4 s of CPU a load,
# 20 loads in each worker's collection alone (8.5 of its 25 s under cProfile). A document is
# parsed once per process for given bytes (and YAML event source: tests/test_yamlsafe.py swaps
# it); each call still gets its own copy, and a file that cannot be read, or whose parse fails,
# goes to the real reader every time (its error is not cached).
def _parse_catalog_documents_once() -> None:
    import copy

    from advisor.core import yamlsafe
    from advisor.data import catalog

    real = catalog.read_document
    parsed: dict = {}

    def read_document(path, name):
        try:
            data = Path(path).read_bytes()
        except (OSError, TypeError, ValueError):
            return real(path, name)
        key = (name, data, yamlsafe._Loader)
        if key not in parsed:
            parsed[key] = real(path, name)
        return copy.deepcopy(parsed[key])

    read_document.__doc__ = real.__doc__
    catalog.read_document = read_document


def pytest_configure(config):
    """In each test process (not in the background build, which runs this file as a script)."""
    _parse_catalog_documents_once()


# What a copy of the project needs to build the site (generated stubs are re-made by the hooks).
PROJECT_PARTS = (
    "mkdocs.yml",
    "docs",
    "hooks",
    "calcruntime",
    "templates",
    "overrides",
    "catalog",
    "bench_results",
    "examples",
    "publisher.yaml",
)


def build_site(config_file: Path, site_dir: Path) -> Path:
    """`mkdocs build --strict` in-process: load the config, build into `site_dir`."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    config = load_config(str(config_file), site_dir=str(site_dir), strict=True)
    build(config)
    return site_dir


def copy_project(dest: Path) -> Path:
    """A copy of the parts of the project the site build reads, under `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in PROJECT_PARTS:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, dest / part)
    return dest


def build_project(tmp_path: Path, edit=None) -> Path:
    project = copy_project(tmp_path / "project")
    if edit is not None:
        edit(project)
    return build_site(project / "mkdocs.yml", tmp_path / "site")


# ------------------------------------------------------------------ one site build per run

SHARED_KEY = "advisor_shared_site"  # workerinput key: the folder every worker's build shares
DONE = ".complete"  # written into the shared folder once its site/ is whole


def _shared_folder(config) -> Path | None:
    """The run's one folder for the session build: the controller's (xdist), else this
    process's temporary root; None where no file lock is available (each builds its own)."""
    if fcntl is None:
        return None
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return Path(workerinput[SHARED_KEY]) if SHARED_KEY in workerinput else None
    return config._tmp_path_factory.getbasetemp() / "shared-site"


# Modules whose tests run on one xdist worker: a module-scoped fixture that builds a site, or a
# browser page that the module's tests share (the runtime started once, requests counted).
ONE_WORKER_MODULES = (
    "tests/test_site_escaping.py",
    "tests/test_browser_calculators.py",
    "tests/test_browser_fp4.py",
    "tests/test_browser_serving_load.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`-n N` (load): each test is scheduled alone, but a module of `ONE_WORKER_MODULES` as one
    unit (xdist's own `--dist loadgroup` marks do not reach its scheduler under pytest 9)."""
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    # keep the collection's order (`pytest_collection_modifyitems`): LoadScopeScheduling would
    # otherwise start the largest units first, a reader of the site before the site is built
    config.option.loadscopereorder = False

    class Scheduler(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER_MODULES else nodeid

    return Scheduler(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist controller: every worker shares one folder for the session build."""
    if fcntl is not None:
        folder = node.config._tmp_path_factory.getbasetemp() / "shared-site"
        node.workerinput[SHARED_KEY] = str(folder)


def build_shared(folder: Path) -> Path:
    """`folder`/site built once (whoever takes the lock first builds; the others wait and
    reuse it)."""
    folder.mkdir(parents=True, exist_ok=True)
    site = folder / "site"
    fd = os.open(folder / ".lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not (folder / DONE).is_file():
            shutil.rmtree(site, ignore_errors=True)
            build_site(ROOT / "mkdocs.yml", site)
            (folder / DONE).write_text("ok\n", encoding="utf-8")
        return site
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


_BACKGROUND: list[subprocess.Popen] = []

# Tests that build a variant of the site themselves: after the unit tests, before the readers.
VARIANT_BUILDS = ("test_site_escaping.py", "test_strict_failures_name_the_file")


# Readers of the built site that take longest (a build of their own, Pyodide under Node, every
# page in Chromium): they start first among the readers, so that the run does not end on one.
LONG_READERS = (
    "test_site.py::test_two_builds_are_identical",
    "test_pyodide_node.py::test_pyodide_equals_cpython",
    "test_browser_layout.py::test_every_page_fits",
)


def _order(item) -> tuple[int, int]:
    """(unit 0 / variant build 1 / reader of the built site 2; then a one-worker module, a long
    reader, the rest: the longest units start early and the end of the run is not one worker's
    long module or test)."""
    if any(v in item.nodeid for v in VARIANT_BUILDS):
        stage = 1
    else:
        stage = 2 if "built_site" in item.fixturenames else 0
    if item.nodeid.split("::", 1)[0] in ONE_WORKER_MODULES:
        return stage, 0
    return stage, 1 if any(v in item.nodeid for v in LONG_READERS) else 2


def pytest_collection_modifyitems(session, config, items):
    """Unit tests first, then the variant builds, then the tests that read the built site; and
    the shared build started in the background as soon as a test needs it (one process for
    all workers: the first to create `started` launches it)."""
    items.sort(key=_order)
    folder = _shared_folder(config)
    if config.option.collectonly or folder is None:
        return
    if not any("built_site" in i.fixturenames for i in items):
        return
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(folder / "started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        _yield_to_the_build()
        return
    log = open(folder / "build.log", "wb")  # noqa: SIM115 - the child writes it
    _BACKGROUND.append(
        subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--build-site", str(folder)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    )
    log.close()
    _yield_to_the_build()  # after the start: the build keeps the priority it was started with


# How much lower a test process's scheduling priority is than the shared build's (os.nice).
WORKER_NICE = 5


def _yield_to_the_build() -> None:
    """This test process (and what it starts: variant builds, Node, Chromium) at a lower priority
    than the background build: the build is the run's critical path (the readers of the site, a
    third of the run, wait for it), and on 2 cores it would otherwise get a third of the CPU
    beside two workers. With the workers at nice +5, it gets a core of its own; the workers use
    the rest, and every core is still busy. An increment only (no privilege needed); none on
    Windows."""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(WORKER_NICE)


def pytest_unconfigure(config):
    for proc in _BACKGROUND:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.fixture(scope="session")
def built_site(request, tmp_path_factory) -> Path:
    """The whole bilingual site, built once per run from the working tree (shared by the
    workers; a failed background build is redone here, where its error shows)."""
    folder = _shared_folder(request.config)
    if folder is None:
        return build_site(ROOT / "mkdocs.yml", tmp_path_factory.mktemp("site") / "site")
    return build_shared(folder)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
        ".whl": "application/zip",
    }

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


class _BrotliHandler(_QuietHandler):
    """Sends the precompressed NAME.br for NAME with `Content-Encoding: br` where it exists and
    the browser accepts br, as nginx `brotli_static on` does; otherwise as `_QuietHandler`."""

    def send_head(self):
        path = self.translate_path(self.path)
        br = path + ".br"
        accepts = "br" in self.headers.get("Accept-Encoding", "")
        if not (accepts and os.path.isfile(path) and os.path.isfile(br)):
            return super().send_head()
        f = open(br, "rb")  # noqa: SIM115 - the base class's protocol: the caller closes it
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "br")
        self.send_header("Content-Length", str(os.fstat(f.fileno()).st_size))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return f


@pytest.fixture(scope="session")
def site_server(built_site):
    """Serves `built_site` on a free port of 127.0.0.1 for the session; yields its base URL."""
    yield from _serve(built_site, _QuietHandler)


@pytest.fixture(scope="session")
def br_site_server(built_site):
    """`site_server` as a host that sends precompressed brotli copies (`_BrotliHandler`)."""
    yield from _serve(built_site, _BrotliHandler)


def _serve(site: Path, handler_class):
    handler = functools.partial(handler_class, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


CHROMIUM = "/usr/bin/chromium"
# The flags every browser test uses with Debian's chromium (no background network, no updates).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def chromium():
    """Debian's Chromium driven by Playwright, launched once for every browser test."""
    if not Path(CHROMIUM).exists():
        pytest.skip("no /usr/bin/chromium (scripts/setup.sh browser installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


if __name__ == "__main__":  # the background build: python tests/conftest.py --build-site DIR
    if len(sys.argv) == 3 and sys.argv[1] == "--build-site":
        sys.path.insert(0, str(ROOT))
        build_shared(Path(sys.argv[2]))
