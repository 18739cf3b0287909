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

from dataclasses import dataclass  # noqa: E402

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import event_priority  # noqa: E402

from advisor.advice.profile import TASK_FIELDS, load_profile  # noqa: E402
from advisor.advice.profile import WEIGHTS as PROFILE_WEIGHTS  # noqa: E402
from advisor.core import (  # noqa: E402
    vocab,
    yamlsafe,
)
from advisor.core.errors import AdvisorError  # noqa: E402
from advisor.report import build_report, render_fragment, render_html, tr  # noqa: E402
from advisor.report.i18n import STRINGS  # noqa: E402
from advisor.report.render import render_template  # noqa: E402
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


@dataclass(frozen=True)
class FormField:
    """One field of the report form: its profile key, kind ("text" | "date" | "int" | "num" |
    "select" | "model"), a select's choices and, for a workload, the tasks that use it."""

    name: str
    kind: str
    options: tuple = ()
    tasks: tuple = ()


def _wl(name: str, kind: str, options: tuple = ()) -> FormField:
    """A workload field, shown for the tasks whose profile fields include it."""
    tasks = tuple(t for t, names in TASK_FIELDS.items() if name in names)
    return FormField(name, kind, options, () if len(tasks) == len(TASK_FIELDS) else tasks)


TOP_FIELDS = (
    FormField("organisation", "text"),
    FormField("prepared_for", "text"),
    FormField("date", "date"),
)
WORKLOAD_FIELDS = (
    _wl("workload", "text"),
    _wl("model", "model"),
    _wl("task", "select", vocab.PROFILE_TASKS),
    _wl("method", "select", vocab.FINE_TUNING_METHODS),
    _wl("weights", "select", PROFILE_WEIGHTS),
    _wl("dataset_tokens", "int"),
    _wl("epochs", "int"),
    _wl("seq", "int"),
    _wl("batch", "int"),
    _wl("deadline_hours", "num"),
    _wl("runs_per_year", "int"),
    _wl("users", "int"),
    _wl("concurrent_users", "int"),
    _wl("target_tokens_per_s", "num"),
    _wl("hours_per_day", "num"),
)
CONSTRAINT_FIELDS = (
    FormField("budget", "num"),
    FormField("horizon_months", "int"),
    FormField("power_kw", "num"),
    FormField("rack_units", "int"),
    FormField("electricity_usd_per_kwh", "num"),
    FormField("acquire", "select", vocab.ACQUIRE),
    FormField("currency", "select", vocab.CURRENCIES),
    FormField("language", "select", vocab.LANGUAGES),
)
FIELDS = TOP_FIELDS + WORKLOAD_FIELDS + CONSTRAINT_FIELDS


DEFAULT_MODEL = "llama-3.1-8b"


def _form_defaults() -> dict:
    """The profile's own defaults (advisor.advice.profile.DEFAULTS) plus a suggested number of
    concurrent users for a serving workload (the profile requires one; the form pre-fills 8)."""
    from advisor.advice.profile import DEFAULTS as PROFILE_DEFAULTS

    return {**PROFILE_DEFAULTS, "concurrent_users": 8}


DEFAULTS = _form_defaults()


def _choice_label(lang: str, value: str) -> str:
    """A select option of the form in words (`form.o.<value>`), the value itself otherwise
    (currency codes, weight formats)."""
    key = f"form.o.{value}"
    if key in STRINGS[lang]:
        return tr(lang, key)
    # weight formats as they are written (BF16, AWQ, GPTQ: names, not English words)
    return value.upper() if value in PROFILE_WEIGHTS else value


def example_profile(root: Path, name: str, lang: str) -> dict:
    """An example profile as the form offers it on a `lang` page: examples/NAME.yaml with its
    words in that language where examples/LANG/NAME.yaml gives them (organisation, prepared_for,
    workload names; never a figure: those stay in the one file), the report in the page's
    language."""
    doc = yamlsafe.load_file(root / "examples" / f"{name}.yaml")
    words = root / "examples" / lang / f"{name}.yaml"
    if words.is_file():
        over = yamlsafe.load_file(words)
        for key in ("organisation", "prepared_for"):
            if key in over:
                doc[key] = over[key]
        for w, o in zip(doc.get("workloads") or [], over.get("workloads") or [], strict=False):
            if isinstance(w, dict) and isinstance(o, dict) and "name" in o:
                w["name"] = o["name"]
    # the report in the page's language (the visitor can still choose the other)
    doc.setdefault("constraints", {})["language"] = lang
    return doc


def render_form(lang: str, st: state.BuildState) -> str:
    """The in-browser report form (docs/{az,en}/reports/new.md; templates/report/form.html.j2);
    assets/reports/form.js drives it through the Pyodide worker. One HTML block, no blank
    lines."""
    names = example_names(st.root)
    site = st.strings[lang]
    examples = {n: example_profile(st.root, n, lang) for n in names}
    return render_template(
        "form.html.j2",
        lang=lang,
        # the form's words: templates/i18n (reportform.*.yaml) first, then advisor.report.i18n
        t=lambda key: site[key] if key in site else tr(lang, key),
        label=lambda value: _choice_label(lang, value),
        examples=names,
        example_labels={n: examples[n]["organisation"] for n in names},
        # models as people know them: the catalog's display names
        models=[(m.id, m.display_name) for m in st.catalog.models],
        top_fields=TOP_FIELDS,
        workload_fields=WORKLOAD_FIELDS,
        constraint_fields=CONSTRAINT_FIELDS,
        defaults={**DEFAULTS, "language": lang},
        default_model=DEFAULT_MODEL,
        example_data=examples,
        publisher=st.publisher.to_dict(),
        # the site's error messages (templates/i18n err.*) with their {parameters}: form.js
        # fills them with the page's number format (render.mjs errorText)
        error_texts={k: v for k, v in site.items() if k.startswith("err.")},
    )
