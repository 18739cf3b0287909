"""Client reports in the site (issue 6): a line `<!-- advisor:report:NAME -->` (hooks/markers.py)
in a page under docs/{az,en}/reports/ is replaced by the report of examples/NAME.yaml, rendered
by advisor.report in the page's language (an HTML fragment with its own scoped CSS), with a link
to the same report as one self-contained HTML file written beside the page
(`<page folder>/NAME.<lang>.html`, written when the page is rendered).

`<!-- advisor:report:form -->` becomes the in-browser form (docs/{az,en}/reports/new.md) with
the publisher (publisher.yaml) and the example profiles as JSON; docs/assets/reports/form.js
drives it through the calculators' Pyodide worker (advisor.webapi "report").

Runs after hooks/render.py (which renders each page as a Jinja2 template first and checks the
marker names), so nothing in a profile is ever read as template code. Catalog and publisher
come from the build state (hooks/state.py).
"""

from __future__ import annotations

import html
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # mkdocs loads this file by path; the package is beside it
    sys.path.insert(0, str(ROOT))

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import event_priority  # noqa: E402

from advisor import vocab  # noqa: E402
from advisor.errors import AdvisorError  # noqa: E402
from advisor.profile import load_profile  # noqa: E402
from advisor.report import build_report, render_fragment, render_html, tr  # noqa: E402
from hooks import markers, state  # noqa: E402
from hooks.templating import script_json  # noqa: E402

FORM = "form"
LINK_TEXT = {
    "az": "Bu hesabatı bir HTML faylı kimi endirin",
    "en": "Download this report as one HTML file",
}


def on_config(config):
    state.load(config)
    return config


def example_names(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "examples").glob("*.yaml"))


def marker_names(root: Path) -> list[str]:
    """What `<!-- advisor:report:NAME -->` accepts: the example profiles and the form."""
    return [*example_names(root), FORM]


def _examples_json(root: Path) -> str:
    texts = {
        n: (root / "examples" / f"{n}.yaml").read_text(encoding="utf-8")
        for n in example_names(root)
    }
    return (
        '<script type="application/json" id="report-examples">' + script_json(texts) + "</script>"
    )


def _publisher_json(st: state.BuildState) -> str:
    return (
        '<script type="application/json" id="report-publisher">'
        + script_json(st.publisher.to_dict())
        + "</script>"
    )


def render_marker(name: str, lang: str, page) -> str:
    st = state.current()
    if name == FORM:
        return render_form(lang, st)
    path = st.root / "examples" / f"{name}.yaml"
    if not path.is_file():
        raise PluginError(
            f"docs/{page.file.src_path}: unknown report 'advisor:report:{name}' "
            f"(examples: {', '.join(example_names(st.root))})"
        )
    try:
        profile = load_profile(path, st.catalog)
        data = build_report(profile, st.catalog, lang=lang)
    except AdvisorError as exc:
        raise PluginError(f"examples/{name}.yaml: {exc.message}") from None
    # the standalone file beside the page's index.html (the site dir is cleaned before pages
    # are built, so writing it now is safe under `mkdocs build` and `mkdocs serve`)
    dest = Path(page.file.abs_dest_path).parent / f"{name}.{lang}.html"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(render_html(data, st.publisher), encoding="utf-8")
    link = f'<p class="ar-download"><a href="{name}.{lang}.html" download>{LINK_TEXT[lang]}</a></p>'
    summary = {"az": "Profil", "en": "The profile"}[lang]
    yaml_block = (
        f'<details class="ar-profile"><summary>{summary}: examples/{name}.yaml</summary>'
        f"<pre><code>{html.escape(path.read_text(encoding='utf-8'))}</code></pre></details>"
    )
    return link + render_fragment(data, st.publisher) + yaml_block


@event_priority(50)
def on_page_markdown(markdown, page, config, files):
    lang = state.page_lang(page)
    return markers.replace(markdown, "report", lambda name: render_marker(name, lang, page))


FIELDS = (
    # (name, kind, options): kind "text" | "int" | "num" | "select"
    ("organisation", "text", None),
    ("prepared_for", "text", None),
    ("workload", "text", None),
    ("model", "model", None),
    ("task", "select", vocab.PROFILE_TASKS),
    ("method", "select", vocab.FINE_TUNING_METHODS),
    ("dataset_tokens", "int", None),
    ("epochs", "int", None),
    ("seq", "int", None),
    ("batch", "int", None),
    ("users", "int", None),
    ("concurrent_users", "int", None),
    ("target_tokens_per_s", "num", None),
    ("hours_per_day", "num", None),
    ("runs_per_year", "int", None),
    ("budget", "num", None),
    ("horizon_months", "int", None),
    ("power_kw", "num", None),
    ("rack_units", "int", None),
    ("acquire", "select", vocab.ACQUIRE),
    ("currency", "select", vocab.CURRENCIES),
    ("language", "select", vocab.LANGUAGES),
)


DEFAULT_MODEL = "llama-3.1-8b"
DEFAULTS = {"seq": 2048, "epochs": 1, "batch": 1, "concurrent_users": 8, "horizon_months": 36}


def render_form(lang: str, st: state.BuildState) -> str:
    """The in-browser report form (docs/{az,en}/reports/new.md); assets/reports/form.js drives
    it through the Pyodide worker. One HTML block, no blank lines."""

    def t(key):
        return html.escape(tr(lang, key))

    out = [
        "<style>.ar-fields{display:grid;grid-template-columns:repeat(auto-fill,minmax(13rem,1fr));"
        "gap:.6rem 1rem;border:1px solid #d6d9e0;padding:.8rem}"
        ".ar-field{display:flex;flex-direction:column;font-size:.85em}"
        ".ar-field input,.ar-field select,#ar-yaml{border:1px solid #aab;border-radius:3px;"
        "padding:.25rem .4rem;font:inherit;background:transparent;color:inherit}"
        "#ar-errors li{color:#c62828}</style>",
        f'<div id="ar-form" class="ar-form" data-lang="{lang}">',
    ]
    out.append(f'<p class="ar-form-note">{t("form.local")}</p>')
    opts = f'<option value="">{t("form.blank")}</option>' + "".join(
        f'<option value="{html.escape(n)}">{html.escape(n)}</option>'
        for n in example_names(st.root)
    )
    out.append(f'<p><label>{t("form.example")} <select id="ar-example">{opts}</select></label></p>')
    out.append(f'<fieldset class="ar-fields"><legend>{t("form.fields")}</legend>')
    models = [m.id for m in st.catalog.models]
    for name, kind, options in FIELDS:
        label = t(f"form.{name}")
        if kind == "model":
            ctl = "".join(
                f'<option value="{html.escape(m)}"{" selected" if m == DEFAULT_MODEL else ""}>'
                f"{html.escape(m)}</option>"
                for m in models
            )
            ctl = f'<select name="{name}">{ctl}</select>'
        elif kind == "select":
            ctl = "".join(f'<option value="{o}">{o}</option>' for o in options)
            ctl = f'<select name="{name}">{ctl}</select>'
        else:
            typ = "text" if kind == "text" else "number"
            step = (
                ' step="any" min="0"'
                if kind == "num"
                else (' step="1" min="0"' if kind == "int" else "")
            )
            value = DEFAULTS.get(name)
            val = f' value="{value}"' if value is not None else ""
            ctl = f'<input name="{name}" type="{typ}"{step}{val} data-kind="{kind}">'
        out.append(f'<label class="ar-field"><span>{label}</span>{ctl}</label>')
    out.append("</fieldset>")
    out.append(
        f'<p><button type="button" id="ar-compose" class="md-button">{t("form.compose")}</button></p>'
    )
    out.append(
        f'<p><label for="ar-yaml">{t("form.yaml")}</label><br>'
        '<textarea id="ar-yaml" rows="18" spellcheck="false" style="width:100%;font-family:monospace"></textarea></p>'
    )
    out.append(
        f'<p><button type="button" id="ar-build" class="md-button md-button--primary" disabled>{t("form.build")}</button> '
        f'<button type="button" id="ar-download" class="md-button" disabled>{t("form.download")}</button> '
        f'<button type="button" id="ar-print" class="md-button" disabled>{t("form.print")}</button></p>'
    )
    out.append(
        f'<p id="ar-status" role="status" data-loading="{t("form.loading")}" data-ready="{t("form.ready")}" '
        f'data-busy="{t("form.busy")}" data-errors="{t("form.errors")}">{t("form.loading")}</p>'
    )
    out.append('<ul id="ar-errors"></ul><div id="ar-output"></div></div>')
    out.append(_examples_json(st.root))
    out.append(_publisher_json(st))
    return "".join(out)
