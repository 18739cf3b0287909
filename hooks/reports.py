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
from advisor.report_i18n import STRINGS  # noqa: E402
from advisor.report_render import render_template  # noqa: E402
from hooks import markers, state  # noqa: E402

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
    from markupsafe import Markup

    return render_template(
        "example.html.j2",
        name=name,
        lang=lang,
        link_text=LINK_TEXT[lang],
        fragment=Markup(render_fragment(data, st.publisher)),
        summary={"az": "Profil", "en": "The profile"}[lang],
        profile_text=path.read_text(encoding="utf-8"),
    )


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


def _form_defaults() -> dict:
    """The profile's own defaults (advisor.profile.DEFAULTS) plus a suggested number of
    concurrent users for a serving workload (the profile requires one; the form pre-fills 8)."""
    from advisor.profile import DEFAULTS as PROFILE_DEFAULTS

    return {**PROFILE_DEFAULTS, "concurrent_users": 8}


DEFAULTS = _form_defaults()


def _choice_label(lang: str, value: str) -> str:
    """A select option of the form in words (`form.o.<value>`), the value itself otherwise
    (model ids, currency codes)."""
    key = f"form.o.{value}"
    return tr(lang, key) if key in STRINGS[lang] else value


def _example_label(root: Path, name: str) -> str:
    """An example profile as the form lists it: its organisation (the client's own name)."""
    return load_profile(root / "examples" / f"{name}.yaml").organisation


def render_form(lang: str, st: state.BuildState) -> str:
    """The in-browser report form (docs/{az,en}/reports/new.md; templates/report/form.html.j2);
    assets/reports/form.js drives it through the Pyodide worker. One HTML block, no blank
    lines."""
    names = example_names(st.root)
    return render_template(
        "form.html.j2",
        lang=lang,
        t=lambda key: tr(lang, key),
        label=lambda value: _choice_label(lang, value),
        examples=names,
        example_labels={n: _example_label(st.root, n) for n in names},
        models=[m.id for m in st.catalog.models],
        fields=FIELDS,
        defaults=DEFAULTS,
        default_model=DEFAULT_MODEL,
        example_texts={
            n: (st.root / "examples" / f"{n}.yaml").read_text(encoding="utf-8") for n in names
        },
        publisher=st.publisher.to_dict(),
        # The site's error messages (templates/i18n err.*) without parameters: a profile's
        # errors name their field and key only (advisor.profile), so a text that needs
        # parameters stays the error's own message.
        error_texts={
            k[4:]: v for k, v in st.strings[lang].items() if k.startswith("err.") and "{" not in v
        },
    )
