"""Client reports in the site (issue 6): a line `<!-- report:NAME -->` in a page under
docs/{az,en}/reports/ is replaced by the report of examples/NAME.yaml, rendered by
advisor.report in the page's language (an HTML fragment with its own scoped CSS), with a link
to the same report as one self-contained HTML file written beside the page
(`<page folder>/NAME.<lang>.html`, written when the page is rendered).

`<!-- report:form -->` becomes the in-browser form (docs/{az,en}/reports/new.md) with the
publisher (publisher.yaml) and the example profiles as JSON; docs/assets/reports/form.js drives
it through the calculators' Pyodide worker (advisor.webapi "report").

Runs after hooks/render.py (which renders each page as a Jinja2 template first), so nothing in
a profile is ever read as template code. An unknown NAME fails the build.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
MARKER = re.compile(r"^[ \t]*<!--\s*report:([A-Za-z0-9_.-]+)\s*-->[ \t]*$", re.M)

_STATE: dict = {}
LINK_TEXT = {
    "az": "Bu hesabatı bir HTML faylı kimi endirin",
    "en": "Download this report as one HTML file",
}


def _lang(page) -> str:
    locale = getattr(page.file, "locale", None) or "az"
    return "en" if str(locale).startswith("en") else "az"


def _state():
    if "catalog" not in _STATE:
        from advisor.catalog import load_catalog
        from advisor.report import load_publisher

        _STATE["catalog"] = load_catalog(ROOT / "catalog")
        _STATE["publisher"] = load_publisher(ROOT / "publisher.yaml")
    return _STATE


def on_config(config):
    _STATE.clear()
    return config


def example_names() -> list[str]:
    return sorted(p.stem for p in EXAMPLES.glob("*.yaml"))


def _escape_json(obj) -> str:
    """JSON safe inside <script type="application/json">."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_marker(name: str, lang: str, page) -> str:
    from advisor.errors import AdvisorError
    from advisor.profile import load_profile
    from advisor.report import build_report, render_fragment, render_html

    st = _state()
    if name == "publisher-json":
        return (
            '<script type="application/json" id="report-publisher">'
            + _escape_json(st["publisher"].to_dict())
            + "</script>"
        )
    if name == "examples-json":
        texts = {n: (EXAMPLES / f"{n}.yaml").read_text(encoding="utf-8") for n in example_names()}
        return (
            '<script type="application/json" id="report-examples">'
            + _escape_json(texts)
            + "</script>"
        )
    if name == "form":
        return render_form(lang, st)
    path = EXAMPLES / f"{name}.yaml"
    if not path.is_file():
        raise PluginError(
            f"docs/{page.file.src_path}: unknown report 'report:{name}' "
            f"(examples: {', '.join(example_names())})"
        )
    try:
        profile = load_profile(path, st["catalog"])
        data = build_report(profile, st["catalog"], lang=lang)
    except AdvisorError as exc:
        raise PluginError(f"examples/{name}.yaml: {exc.message}") from None
    # the standalone file beside the page's index.html (the site dir is cleaned before pages
    # are built, so writing it now is safe under `mkdocs build` and `mkdocs serve`)
    dest = Path(page.file.abs_dest_path).parent / f"{name}.{lang}.html"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(render_html(data, st["publisher"]), encoding="utf-8")
    link = f'<p class="ar-download"><a href="{name}.{lang}.html" download>{LINK_TEXT[lang]}</a></p>'
    import html

    summary = {"az": "Profil", "en": "The profile"}[lang]
    yaml_block = (
        f'<details class="ar-profile"><summary>{summary}: examples/{name}.yaml</summary>'
        f"<pre><code>{html.escape(path.read_text(encoding='utf-8'))}</code></pre></details>"
    )
    return link + render_fragment(data, st["publisher"]) + yaml_block


@event_priority(50)
def on_page_markdown(markdown, page, config, files):
    if "<!--" not in markdown or "report:" not in markdown:
        return markdown
    lang = _lang(page)
    return MARKER.sub(lambda m: render_marker(m.group(1), lang, page), markdown)


FIELDS = (
    # (name, kind, options): kind "text" | "int" | "num" | "select"
    ("organisation", "text", None),
    ("prepared_for", "text", None),
    ("workload", "text", None),
    ("model", "model", None),
    ("task", "select", ("serving", "fine-tuning", "training")),
    ("method", "select", ("lora", "qlora")),
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
    ("acquire", "select", ("either", "rent", "own")),
    ("currency", "select", ("USD", "AZN", "EUR")),
    ("language", "select", ("az", "en")),
)


DEFAULT_MODEL = "llama-3.1-8b"


def _form_defaults() -> dict:
    """The profile's own defaults (advisor.profile.DEFAULTS) plus a suggested number of
    concurrent users for a serving workload (the profile requires one; the form pre-fills 8)."""
    from advisor.profile import DEFAULTS as PROFILE_DEFAULTS

    return {**PROFILE_DEFAULTS, "concurrent_users": 8}


DEFAULTS = _form_defaults()


def render_form(lang: str, st) -> str:
    """The in-browser report form (docs/{az,en}/reports/new.md); assets/reports/form.js drives
    it through the Pyodide worker. One HTML block, no blank lines."""
    import html

    from advisor.report import tr

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
        f'<option value="{html.escape(n)}">{html.escape(n)}</option>' for n in example_names()
    )
    out.append(f'<p><label>{t("form.example")} <select id="ar-example">{opts}</select></label></p>')
    out.append(f'<fieldset class="ar-fields"><legend>{t("form.fields")}</legend>')
    models = [m.id for m in st["catalog"].models]
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
    texts = {n: (EXAMPLES / f"{n}.yaml").read_text(encoding="utf-8") for n in example_names()}
    out.append(
        '<script type="application/json" id="report-examples">' + _escape_json(texts) + "</script>"
    )
    out.append(
        '<script type="application/json" id="report-publisher">'
        + _escape_json(st["publisher"].to_dict())
        + "</script>"
    )
    return "".join(out)
