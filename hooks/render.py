"""Renders every page's Markdown as a Jinja2 template, from the catalog and advisor.

Registered in mkdocs.yml `hooks:`. The style follows mkdocs-material's own hooks
(material/overrides/hooks/translations.py) and pydantic's docs/plugins/main.py: one function per
kind of page, each returning early when the page is not its own.

Context of every page (contract "SITE" in /work/team/contracts.md):

- `lang`: "az" | "en"; `page`: the mkdocs page (`page.meta` is its front matter)
- `catalog`: `advisor.catalog.Catalog`, loaded ONCE per build (`on_config`)
- `facts`: the module hooks/facts.py (guide engineer), imported lazily if it exists
- `bench`: `advisor.benchresults.load_results(bench_results/)` if that module exists, else ()
- `t(key, **params)`: translation from templates/i18n/{az,en}.yaml; a missing key fails the build
- `memory`, `models`, `units`, `charts`, `data`: advisor modules and the site's data helpers
  (hooks/sitedata.py, hooks/charts.py) for the data pages
- filters (per language; az: decimal comma, CLDR grouping "1.234,5"):
  `gib(bytes, digits=1)` "12,5 GiB"; `gb(bytes, digits=1)` "13,4 GB"; `num(x, digits=0)`;
  `pct(fraction, digits=0)` 0.125 -> "12,5 %" (az) / "12.5%" (en);
  `money(amount_usd, currency="USD", digits=2)` (converted with catalog/currency.yaml rates)

Jinja2 loader rooted at templates/ (`{% include "partials/x.md.j2" %}`), StrictUndefined,
`trim_blocks` and `lstrip_blocks` on (so loops can build Markdown tables line by line).

Markers: a comment `<!-- advisor:NAME -->` on its own line is replaced by the template
templates/markers/NAME.md.j2 rendered with the page's context; an unknown NAME fails the build.

Every failure (undefined variable, template syntax, unknown marker, missing translation, invalid
catalog or bench data) raises `PluginError` with a message naming the page or the file.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import markupsafe
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

from advisor import numfmt, prices

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
LANGS = ("az", "en")
MARKER = re.compile(r"^[ \t]*<!--\s*advisor:([A-Za-z0-9_.-]+)\s*-->[ \t]*$", re.M)

log = logging.getLogger("mkdocs.hooks.render")


# mkdocs-static-i18n warns that its contextual switcher link is "not compatible with
# navigation.instant"; overrides/main.html + docs assets/site.js keep the switcher on the same
# page under instant navigation (tests/test_browser_site.py checks it), so the warning is noise
# that would fail --strict.
class _DropInstantWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "not compatible with theme.features = navigation.instant" not in record.getMessage()


logging.getLogger("mkdocs.plugins.mkdocs_static_i18n.reconfigure").addFilter(_DropInstantWarning())
logging.getLogger("mkdocs.plugins.mkdocs_static_i18n").addFilter(_DropInstantWarning())


def _import_path(name: str, path: Path):
    """Import a module from a file path under a fresh name (no stale state between builds)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _optional_module(name: str):
    """An advisor module another engineer is writing; None until it exists."""
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


# --------------------------------------------------------------------------- number formats


def format_number(value, digits: int, lang: str) -> str:
    """advisor.numfmt.number, strict: a template that formats a missing figure is a bug."""
    if not numfmt.is_figure(value):
        raise ValueError(f"not a finite number: {value!r}")
    return numfmt.number(value, digits, lang)


def make_filters(lang: str, rates: dict | None):
    """The pages' number filters: advisor.numfmt in `lang`, failing on a missing figure."""

    def num(value, digits=0):
        return format_number(value, digits, lang)

    def gib(n_bytes, digits=1):
        format_number(n_bytes, digits, lang)
        return numfmt.binary_bytes(n_bytes, digits, lang)

    def gb(n_bytes, digits=1):
        format_number(n_bytes, digits, lang)
        return numfmt.decimal_bytes(n_bytes, digits, lang)

    def pct(fraction, digits=0):
        format_number(fraction, digits, lang)
        return numfmt.percent(fraction, digits, lang)

    def money(amount_usd, currency="USD", digits=2):
        amount = amount_usd
        if currency != "USD":
            if not rates:
                raise ValueError(f"no currency rates to convert USD to {currency}")
            amount = prices.convert(amount_usd, currency, rates)
        format_number(amount, digits, lang)
        return numfmt.money(amount, currency, lang, digits)

    return {"num": num, "gib": gib, "gb": gb, "pct": pct, "money": money}


# --------------------------------------------------------------------------- escaping

# Markdown syntax a data value must not bring into a page: link brackets (`[x](javascript:...)`),
# table cell separators, code spans, backslash escapes. HTML's own characters are escaped by
# markupsafe first (autoescape).
_MD_ESCAPES = {"[": "&#91;", "]": "&#93;", "|": "&#124;", "`": "&#96;", "\\": "&#92;"}
_MD_RE = re.compile("[" + re.escape("".join(_MD_ESCAPES)) + "]")


def escape_value(value):
    """Jinja2 `finalize`: every `{{ value }}` of data (catalog names, bench text, URLs) is
    HTML-escaped and its Markdown syntax neutralised, so that it reads as text in the Markdown a
    template writes. Markup (translations, the charts' SVG, formatted numbers) passes as it is."""
    if value is None or hasattr(value, "__html__") or not isinstance(value, str):
        return value
    return markupsafe.Markup(
        _MD_RE.sub(lambda m: _MD_ESCAPES[m.group(0)], str(markupsafe.escape(value)))
    )


def url_filter(value):
    """`{{ source.url | url }}`: an http(s) URL (advisor.errors.check_http_url) as Markup, for
    Markdown autolinks `<...>` and link targets `(...)` (escaping would break `&` in queries)."""
    from advisor.errors import check_http_url

    return markupsafe.Markup(check_http_url("url", value))


# --------------------------------------------------------------------------- build state


@dataclass
class BuildState:
    """What one build (both languages) loads once: catalog, bench results, strings, facts."""

    config: object
    catalog: object
    bench: tuple
    strings: dict
    facts: object
    envs: dict  # lang -> jinja2.Environment (filters format per language)
    cache: dict = field(default_factory=dict)


_STATE: BuildState | None = None


def state() -> BuildState:
    if _STATE is None:
        raise PluginError("hooks/render.py: build state used before on_config")
    return _STATE


def _load_strings(folder: Path) -> dict:
    """templates/i18n/{lang}.yaml plus every templates/i18n/*.{lang}.yaml (one per engineer,
    e.g. bench.az.yaml), flattened to dotted keys. A key defined twice, or in one language
    only, fails the build naming the file(s)."""
    from advisor import yamlish
    from advisor.errors import AdvisorError

    strings, origin = {}, {}
    for lang in LANGS:
        flat, where = {}, {}
        paths = [folder / f"{lang}.yaml"] + sorted(folder.glob(f"*.{lang}.yaml"))
        for path in paths:
            rel = path.relative_to(folder.parent.parent).as_posix()
            try:
                doc = yamlish.load_file(path)
            except (OSError, AdvisorError) as exc:
                raise PluginError(f"{rel}: cannot read translations: {exc}") from None
            if not isinstance(doc, dict):
                raise PluginError(f"{rel}: expected a mapping of key: text")

            def walk(prefix, node, rel=rel, flat=flat, where=where):
                for key, value in node.items():
                    name = f"{prefix}{key}"
                    if isinstance(value, dict):
                        walk(name + ".", value)
                    elif isinstance(value, str):
                        if name in flat:
                            raise PluginError(f"{rel}: key {name!r} is already in {where[name]}")
                        flat[name], where[name] = value, rel
                    else:
                        raise PluginError(f"{rel}: {name}: expected text, got {value!r}")

            walk("", doc)
        strings[lang], origin[lang] = flat, where
    for lang, other in (("az", "en"), ("en", "az")):
        only = sorted(set(strings[lang]) - set(strings[other]))
        if only:
            files = sorted({origin[lang][k] for k in only})
            raise PluginError(
                f"{', '.join(files)}: keys missing in the {other} translation: {', '.join(only[:20])}"
            )
    return strings


def load_state(config) -> BuildState:
    from advisor.catalog import load_catalog
    from advisor.errors import AdvisorError

    root = Path(config.config_file_path).resolve().parent if config.config_file_path else ROOT
    try:
        catalog = load_catalog(root / "catalog")
    except AdvisorError as exc:
        raise PluginError(f"invalid catalog data: catalog/{exc.message}") from None
    bench = ()
    benchresults = _optional_module("advisor.benchresults")
    if benchresults is not None and (root / "bench_results").is_dir():
        try:
            bench = benchresults.load_results(root / "bench_results")
        except AdvisorError as exc:
            raise PluginError(f"invalid bench result: bench_results/{exc.message}") from None
    strings = _load_strings(root / "templates" / "i18n")
    facts = None
    facts_path = root / "hooks" / "facts.py"
    if facts_path.is_file():
        try:
            facts = _import_path("advisor_site_facts", facts_path)
        except AdvisorError as exc:
            raise PluginError(f"hooks/facts.py: {exc.message}") from None
    envs = {}
    for lang in LANGS:
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(root / "templates")),
            undefined=jinja2.StrictUndefined,
            autoescape=True,
            finalize=escape_value,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.filters.update(make_filters(lang, getattr(catalog, "currency", None)))
        env.filters["url"] = url_filter
        envs[lang] = env
    return BuildState(config, catalog, bench, strings, facts, envs)


def _pin_build_date(root: Path) -> None:
    """Reproducible dates (sitemap lastmod, sitemap.xml.gz mtime): SOURCE_DATE_EPOCH, if unset,
    is the time of the checkout's last commit (https://reproducible-builds.org/specs/source-date-epoch/)."""
    import os
    import subprocess

    if os.environ.get("SOURCE_DATE_EPOCH"):
        return
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%ct"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return
    if out.isdigit():
        os.environ["SOURCE_DATE_EPOCH"] = out


@event_priority(100)
def on_config(config):
    """Load catalog, bench results and translations once per build (both languages)."""
    global _STATE
    _pin_build_date(ROOT)
    # mkdocs-static-i18n re-runs on_config for each language on the same config object.
    if _STATE is None or _STATE.config is not config:
        _STATE = load_state(config)
    generate = _site_module("generate")
    generate.extend(config, _STATE.catalog)
    return config


# --------------------------------------------------------------------------- page rendering


def page_lang(page, config) -> str:
    locale = getattr(page.file, "locale", None) or config.theme.get("language") or "az"
    return "en" if str(locale).startswith("en") else "az"


class MissingTranslation(Exception):
    pass


def make_t(lang: str, strings: dict):
    table = strings[lang]

    def t(key, **params):
        if key not in table:
            raise MissingTranslation(
                f"missing translation key {key!r} in templates/i18n/{lang}.yaml "
                f"(or templates/i18n/*.{lang}.yaml)"
            )
        text = markupsafe.Markup(table[key])  # translations are the site's own Markdown
        return text.format(**{k: escape_value(v) for k, v in params.items()}) if params else text

    return t


def page_context(page, config) -> dict:
    st = state()
    lang = page_lang(page, config)
    sitedata = _site_module("sitedata")
    ctx = {
        "lang": lang,
        "page": page,
        "meta": page.meta,
        "catalog": st.catalog,
        "facts": st.facts,
        "bench": st.bench,
        "t": make_t(lang, st.strings),
        "fmt": st.envs[lang].filters,
        "memory": _optional_module("advisor.memory"),
        "models": importlib.import_module("advisor.models"),
        "units": importlib.import_module("advisor.units"),
        "charts": _site_module("charts"),
        "data": sitedata.SiteData(st.catalog, lang, st.cache) if sitedata else None,
    }
    ctx.update(item_context(page, st.catalog))
    return ctx


def _site_module(name: str):
    """hooks/charts.py, sitedata.py, generate.py: helpers, imported once per process."""
    key = f"advisor_site_{name}"
    if key in sys.modules:
        return sys.modules[key]
    path = Path(__file__).resolve().parent / f"{name}.py"
    return _import_path(key, path) if path.is_file() else None


def item_context(page, catalog) -> dict:
    """Generated per-item pages (hooks/generate.py): `gpu` or `model` from front matter."""
    item = page.meta.get("advisor_item")
    if not item:
        return {}
    kind, _, ident = str(item).partition(":")
    if kind == "gpu":
        return {"gpu": catalog.gpu(ident)}
    if kind == "model":
        return {"model": catalog.model(ident)}
    raise PluginError(f"{page.file.src_path}: unknown advisor_item kind {kind!r}")


def expand_markers(markdown: str, src: str, env: jinja2.Environment) -> str:
    """`<!-- advisor:NAME -->` -> `{% include "markers/NAME.md.j2" %}`; unknown NAME fails."""

    def swap(m):
        name = m.group(1)
        template = f"markers/{name}.md.j2"
        if template not in env.list_templates():
            known = sorted(
                t[len("markers/") : -len(".md.j2")]
                for t in env.list_templates()
                if t.startswith("markers/") and t.endswith(".md.j2")
            )
            raise PluginError(
                f"{src}: unknown marker 'advisor:{name}' (known: {', '.join(known) or 'none'})"
            )
        return f'{{% include "{template}" %}}'

    return MARKER.sub(swap, markdown)


def _template_line(exc: BaseException) -> str:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in (
            "<template>",
        ) or tb.tb_frame.f_code.co_filename.endswith(".j2"):
            line = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    if line is None:
        return ""
    name, lineno = line
    return f" (line {lineno})" if name == "<template>" else f" ({Path(name).name} line {lineno})"


def render_page(markdown: str, page, config) -> str:
    from advisor.errors import AdvisorError

    st = state()
    src = f"docs/{page.file.src_path}"
    env = st.envs[page_lang(page, config)]
    try:
        source = expand_markers(markdown, src, env)
        template = env.from_string(source)
        return template.render(page_context(page, config))
    except jinja2.TemplateSyntaxError as exc:
        where = f"{exc.name} line {exc.lineno}" if exc.name else f"line {exc.lineno}"
        raise PluginError(f"{src}: template syntax error ({where}): {exc.message}") from None
    except jinja2.UndefinedError as exc:
        raise PluginError(
            f"{src}: undefined template variable{_template_line(exc)}: {exc}"
        ) from None
    except jinja2.TemplateNotFound as exc:
        raise PluginError(f"{src}: template not found: {exc.name}") from None
    except MissingTranslation as exc:
        raise PluginError(f"{src}: {exc}") from None
    except AdvisorError as exc:
        raise PluginError(f"{src}: advisor error{_template_line(exc)}: {exc.message}") from None
    except (ValueError, TypeError, KeyError, AttributeError, ZeroDivisionError) as exc:
        raise PluginError(
            f"{src}: error while rendering{_template_line(exc)}: {type(exc).__name__}: {exc}"
        ) from None


@event_priority(100)
def on_page_markdown(markdown, page, config, files):
    """Every page is a template (before other plugins see its Markdown)."""
    return render_page(markdown, page, config)


@event_priority(-200)  # after mkdocs-static-i18n (-100) built every language
def on_post_build(config):
    """Material's language switcher under instant navigation reads each language's
    sitemap.xml (`/en/sitemap.xml`); mkdocs-static-i18n writes one bilingual sitemap at the
    root only. Copy it (and its .gz) into each non-default language folder."""
    import shutil

    site = Path(config.site_dir)
    for lang in LANGS[1:]:
        if (site / lang).is_dir():
            for name in ("sitemap.xml", "sitemap.xml.gz"):
                if (site / name).is_file():
                    shutil.copyfile(site / name, site / lang / name)
