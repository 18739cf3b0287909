"""Shared fixtures: the bilingual site built in-process ONCE per test session, and an HTTP
server for it (for the browser tests of every engineer).

    def test_x(built_site):      # pathlib.Path of the built site (site/ layout: az at /, en/ ...)
    def test_y(site_server):     # "http://127.0.0.1:<port>/" serving built_site
    def test_z(chromium):        # Debian's Chromium under Playwright, launched once per session

`build_project(tmp_path, edit)` builds a temporary copy of the project (after `edit(copy_root)`)
and returns the site folder or raises the build's error: for the strict-failure tests.
"""

from __future__ import annotations

import functools
import http.server
import logging
import os
import shutil
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")

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


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The whole bilingual site, built once per session from the working tree."""
    return build_site(ROOT / "mkdocs.yml", tmp_path_factory.mktemp("site") / "site")


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
