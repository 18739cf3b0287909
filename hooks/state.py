"""The one state of a site build, shared by every hook (both languages, every event).

`load(config)` runs in hooks/render.py's `on_config` (priority 100, before the other hooks):
it loads the catalog ONCE, from `$ADVISOR_CATALOG` or the project's catalog/, and hands that
same catalog to everything that computes a figure: the page templates, hooks/facts/
(`facts.use_catalog`), the report hook, and advisor.webapi (`set_catalog`) for the calculators'
prerender and the JSON shipped to the browser. mkdocs-static-i18n re-runs `on_config` per
language on the same config object; a new config (another build, a test's copy of the project)
gets a new state, with every per-build cache emptied.

`page_lang(page)`: a page's language, from its source folder (docs/az/..., docs/en/...).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from mkdocs.exceptions import PluginError

from advisor import webapi
from advisor.core.errors import AdvisorError
from advisor.data.benchresults import BenchResult, load_results
from advisor.data.catalog import Catalog, load_catalog
from advisor.report import Publisher, load_publisher
from hooks import facts
from hooks.templating import LANGS, load_strings, make_env

REPO = Path(__file__).resolve().parent.parent
DEFAULT_LANG = LANGS[0]


@dataclass
class BuildState:
    """What one build loads once."""

    config: object  # mkdocs.config.defaults.MkDocsConfig (None when a test drives a hook)
    root: Path  # the project: mkdocs.yml, docs/, templates/, examples/, bench_results/
    catalog_root: Path
    catalog: Catalog
    bench: tuple[BenchResult, ...]
    strings: dict[str, dict[str, str]]  # lang -> dotted key -> text
    publisher: Publisher | None
    envs: dict[str, jinja2.Environment]  # lang -> environment (filters format per language)
    cache: dict = field(default_factory=dict)  # per-build results (site data, prerender)


_STATE: BuildState | None = None


def project_root(config) -> Path:
    path = config.config_file_path if config is not None else None
    return Path(path).resolve().parent if path else REPO


def catalog_root(root: Path) -> Path:
    """`$ADVISOR_CATALOG`, else the project's catalog/: the one place the build decides it."""
    env = os.environ.get("ADVISOR_CATALOG")
    return Path(env).resolve() if env else root / "catalog"


def load(config) -> BuildState:
    """The build state of `config`, loaded on its first call."""
    global _STATE
    if _STATE is not None and _STATE.config is config:
        return _STATE
    root = project_root(config)
    cat_root = catalog_root(root)
    try:
        catalog = load_catalog(cat_root)
    except AdvisorError as exc:
        raise PluginError(f"invalid catalog data: catalog/{exc.message}") from None
    bench: tuple[BenchResult, ...] = ()
    if (root / "bench_results").is_dir():
        try:
            bench = load_results(root / "bench_results")
        except AdvisorError as exc:
            raise PluginError(f"invalid bench result: bench_results/{exc.message}") from None
    publisher = None
    if (root / "publisher.yaml").is_file():
        try:
            publisher = load_publisher(root / "publisher.yaml")
        except AdvisorError as exc:
            raise PluginError(f"publisher.yaml: {exc.message}") from None
    strings = load_strings(root / "templates" / "i18n")
    envs = {lang: make_env(root / "templates", lang, catalog.currency) for lang in LANGS}
    webapi.set_catalog(catalog)
    facts.use_catalog(catalog, root)
    _STATE = BuildState(config, root, cat_root, catalog, bench, strings, publisher, envs)
    return _STATE


def current() -> BuildState:
    if _STATE is None:
        raise PluginError("hooks.state: build state used before on_config")
    return _STATE


def page_lang(page) -> str:
    """ "az" | "en": the first folder of the page's source path (docs_structure: folder)."""
    first = str(page.file.src_path).replace("\\", "/").split("/", 1)[0]
    return first if first in LANGS else DEFAULT_LANG


def release() -> None:
    """Forget the build state and hand advisor.webapi and hooks/facts/ back their defaults
    (a test that built a poisoned copy calls this so that later tests see the real catalog)."""
    global _STATE
    _STATE = None
    webapi.set_catalog(None)
    facts.reset()
