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


def render_marker(name: str, lang: str, page) -> str:
    from markupsafe import Markup

    from advisor.errors import AdvisorError
    from advisor.profile import load_profile
    from advisor.report import build_report, render_fragment, render_html
    from advisor.report_render import render_template

    st = _state()
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
    return render_template(
        "example.html.j2",
        name=name,
        lang=lang,
        link_text=LINK_TEXT[lang],
        fragment=Markup(render_fragment(data, st["publisher"])),
        summary={"az": "Profil", "en": "The profile"}[lang],
        profile_text=path.read_text(encoding="utf-8"),
    )


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
    """The in-browser report form (docs/{az,en}/reports/new.md; templates/report/form.html.j2);
    assets/reports/form.js drives it through the Pyodide worker. One HTML block, no blank
    lines."""
    from advisor.report import tr
    from advisor.report_render import render_template

    names = example_names()
    return render_template(
        "form.html.j2",
        lang=lang,
        t=lambda key: tr(lang, key),
        examples=names,
        models=[m.id for m in st["catalog"].models],
        fields=FIELDS,
        defaults=DEFAULTS,
        default_model=DEFAULT_MODEL,
        example_texts={n: (EXAMPLES / f"{n}.yaml").read_text(encoding="utf-8") for n in names},
        publisher=st["publisher"].to_dict(),
    )
