"""Renders every page's Markdown as a Jinja2 template, from the catalog and advisor.

Registered in mkdocs.yml `hooks:` (the package: hooks/__init__.py). The style follows
mkdocs-material's own hooks (material/overrides/hooks/translations.py) and pydantic's
docs/plugins/main.py: one function per kind of page, each returning early when the page is not
its own.

Context of every page:

- `lang`: "az" | "en"; `page`: the mkdocs page (`page.meta` is its front matter)
- `catalog`: `advisor.data.catalog.Catalog` and `bench`: the bench results, from the build state
  (hooks/state.py, loaded ONCE per build in `on_config`)
- `facts`: hooks/facts/, the guide's figures
- `t(key, **params)`: translation from templates/i18n/{az,en}.yaml; a missing key fails the build
- `fmt`: the page's filters (hooks/templating.py: `num`, `gib`, `gb`, `pct`, `money`, `url`)
- `memory`, `models`, `units`, `charts`, `data`: advisor modules and the site's data helpers
  (hooks/sitedata.py, hooks/charts.py) for the data pages
- `gpu` or `model` on the generated per-item pages (front matter `advisor_item`)
- `tools`: hooks/calclinks.py, links to the calculators and the report form (`advisor:tools`,
  `advisor:try`)

Markers (hooks/markers.py): `<!-- advisor:NAME -->` on its own line includes
templates/markers/NAME.md.j2; `<!-- advisor:report:NAME -->` and `<!-- advisor:calc:NAME -->`
are checked here and expanded by hooks/reports.py and calcruntime/build (pages.py).

Every failure (undefined variable, template syntax, unknown marker, missing translation, invalid
catalog or bench data) raises `PluginError` with a message naming the page or the file.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # mkdocs loads this file by path; the package is beside it
    sys.path.insert(0, str(ROOT))

import jinja2  # noqa: E402
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import event_priority  # noqa: E402

from advisor.arch import models  # noqa: E402
from advisor.core import units  # noqa: E402
from advisor.core.errors import AdvisorError  # noqa: E402
from advisor.memory import estimate as memory  # noqa: E402
from hooks import (  # noqa: E402
    bench_text,
    calclinks,
    charts,
    csp,
    facts,
    generate,
    markers,
    safe_links,
    sitedata,
    state,
)
from hooks.templating import LANGS, MissingTranslation, make_t  # noqa: E402

log = logging.getLogger("mkdocs.hooks.render")


# mkdocs-static-i18n warns that its contextual switcher link is "not compatible with
# navigation.instant"; overrides/assets/site.js keeps the switcher on the same
# page under instant navigation (tests/test_browser_site.py checks it), so the warning is noise
# that would fail --strict.
class _DropInstantWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "not compatible with theme.features = navigation.instant" not in record.getMessage()


logging.getLogger("mkdocs.plugins.mkdocs_static_i18n.reconfigure").addFilter(_DropInstantWarning())
logging.getLogger("mkdocs.plugins.mkdocs_static_i18n").addFilter(_DropInstantWarning())


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
    """Load the build state once per build (both languages) and write the per-item pages."""
    _pin_build_date(ROOT)
    st = state.load(config)
    try:
        generate.extend(config, st.catalog, st.cache)
    except generate.UnsafePath as exc:
        raise PluginError(f"hooks/generate.py: {exc}") from None
    return config


# --------------------------------------------------------------------------- page rendering


def page_context(page) -> dict:
    st = state.current()
    lang = state.page_lang(page)
    ctx = {
        "lang": lang,
        "page": page,
        "meta": page.meta,
        "catalog": st.catalog,
        "facts": facts,
        "bench": st.bench,
        "t": make_t(lang, st.strings),
        "bench_text": bench_text.translator(make_t(lang, st.strings), lang),
        "fmt": st.envs[lang].filters,
        "memory": memory,
        "models": models,
        "units": units,
        "charts": charts,
        "data": sitedata.SiteData(st.catalog, lang, st.cache),
        "tools": calclinks,
    }
    ctx.update(item_context(page, st.catalog))
    return ctx


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


def _known(env: jinja2.Environment) -> dict:
    """Names each marker kind accepts: templates/markers/*.md.j2, examples/*.yaml, calculators."""
    from calcruntime.build import CALCS
    from hooks import reports

    templates = sorted(
        t[len("markers/") : -len(".md.j2")]
        for t in env.list_templates()
        if t.startswith("markers/") and t.endswith(".md.j2")
    )
    return {
        None: templates,
        "report": reports.marker_names(state.current().root),
        "calc": list(CALCS),
    }


def expand_markers(markdown: str, src: str, env: jinja2.Environment) -> str:
    """Check every marker of the page; `<!-- advisor:NAME -->` ->
    `{% include "markers/NAME.md.j2" %}` (the other kinds are expanded later by their hooks)."""
    found = markers.found(markdown)
    if found:
        known = _known(env)
        for kind, name in found:
            if kind not in known:
                raise PluginError(
                    f"{src}: unknown marker kind 'advisor:{kind}:' (known: "
                    f"{', '.join(k for k in known if k)})"
                )
            if name not in known[kind]:
                label = f"{kind}:{name}" if kind else name
                raise PluginError(
                    f"{src}: unknown marker 'advisor:{label}' "
                    f"(known: {', '.join(known[kind]) or 'none'})"
                )
    return markers.replace(markdown, None, lambda name: f'{{% include "markers/{name}.md.j2" %}}')


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


def render_page(markdown: str, page) -> str:
    st = state.current()
    src = f"docs/{page.file.src_path}"
    env = st.envs[state.page_lang(page)]
    try:
        source = expand_markers(markdown, src, env)
        template = env.from_string(source)
        return template.render(page_context(page))
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
    return render_page(markdown, page)


@event_priority(-100)
def on_page_content(html, page, config, files):
    """No link in a page's HTML with a scheme other than http(s) / mailto (hooks/safe_links.py):
    a `javascript:` address from data stops the build naming the page."""
    bad = safe_links.unsafe_links(html)
    if bad:
        raise PluginError(
            f"{page.file.src_path}: a link with a scheme other than http(s) or mailto: {bad[0]} "
            f"(data from catalog/ or bench_results/ must not make links)"
        )
    return html


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
    if _COMMAND.get("name") != "serve":  # `mkdocs serve` injects its live-reload script
        csp.apply(site)


_COMMAND: dict[str, str] = {}


def on_startup(command, dirty):
    """Remember the mkdocs command: the Content-Security-Policy (hooks/csp.py) is written on
    `build` and `gh-deploy`, not under `serve`, whose live-reload script is injected inline."""
    _COMMAND["name"] = command


_NOT_FOUND: dict[str, str] = {}


def on_post_template(output, template_name, config):
    """The site has one 404.html, at the root, where the default language (az) lives; but
    mkdocs-static-i18n builds English after Azerbaijani and its 404.html overwrote the az one.
    Keep the default language's page and hand it back when a later build writes its own."""
    if template_name != "404.html":
        return output
    lang = config.theme.get("language")
    if lang != "en":  # the az build's theme language is "custom" (mkdocs.yml)
        _NOT_FOUND["az"] = output
        return output
    return _NOT_FOUND.get("az", output)
