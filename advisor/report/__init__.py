"""Client advisory reports: a profile (advisor.advice.profile) and the catalog become a report data
structure (plain JSON: every number is advisor's own), rendered as HTML in Azerbaijani or
English. The same code and templates run in the CLI, at site build time and in the browser
(Pyodide).

One concern per module:
- advisor.report.data: what the report says (recommendation, memory, diagnosis, rent vs buy,
  risks, sources) as plain data; how each figure is computed is documented there;
- advisor.report.sections: each section's texts in the report's language (translations in
  advisor.report.i18n, numbers by advisor.report.format);
- advisor.report.render: the HTML, from the Jinja2 templates in templates/report/ (autoescape on:
  every profile value is text, never markup);
- advisor.report.publisher: the publisher shown on reports, from configuration.

This module is the entry point: profile text -> HTML (`report_from_text`, CLI) and the
browser worker's JSON call (`web_report`); it re-exports the pieces' public names.
"""

from __future__ import annotations

from ..advice.profile import parse_profile
from ..core.errors import AdvisorError
from .data import (
    BOUNDS,
    EXTRA_SOURCES,
    HOURS_PER_YEAR,
    TOKEN_ID_BYTES,
    advisor_workload,
    build_report,
    runs_over_horizon,
)
from .format import fmt_count, fmt_gib, fmt_money, fmt_num, fmt_pct, tr
from .publisher import Publisher, default_publisher_path, load_publisher, publisher_from_dict
from .render import render_fragment, render_html

SECTIONS = ("summary", "audit", "diagnosis", "recommendation", "cost", "risks", "sources", "next")

__all__ = [
    "BOUNDS",
    "EXTRA_SOURCES",
    "HOURS_PER_YEAR",
    "SECTIONS",
    "TOKEN_ID_BYTES",
    "Publisher",
    "advisor_workload",
    "build_report",
    "default_publisher_path",
    "fmt_count",
    "fmt_gib",
    "fmt_money",
    "fmt_num",
    "fmt_pct",
    "load_publisher",
    "publisher_from_dict",
    "render_fragment",
    "render_html",
    "report_from_text",
    "runs_over_horizon",
    "tr",
    "web_report",
]


def report_from_text(
    profile_yaml: str,
    catalog,
    *,
    lang: str | None = None,
    publisher: Publisher,
    standalone: bool = True,
) -> str:
    """Profile YAML text -> HTML (what the CLI and the browser both call)."""
    profile = parse_profile(profile_yaml, catalog)
    data = build_report(profile, catalog, lang=lang)
    return render_html(data, publisher) if standalone else render_fragment(data, publisher)


def web_report(request: dict, catalog) -> dict:
    """JSON in, JSON out, for the browser worker (and tests): ``{"profile": YAML text,
    "lang": "az"|"en"|None, "publisher": {name, contact, url, logo_data_uri}}`` ->
    ``{"html": the self-contained file, "fragment": the block shown in the page,
    "filename": "<slug>.<lang>.html"}``, or ``{"error": AdvisorError.to_dict()}``."""
    try:
        if not isinstance(request, dict) or not isinstance(request.get("profile"), str):
            raise AdvisorError("field.required", "profile: expected YAML text", field="profile")
        publisher = publisher_from_dict(request.get("publisher") or {})
        profile = parse_profile(request["profile"], catalog)
        data = build_report(profile, catalog, lang=request.get("lang") or None)
        return {
            "html": render_html(data, publisher),
            "fragment": render_fragment(data, publisher),
            "filename": f"{data['slug']}.{data['lang']}.html",
        }
    except AdvisorError as exc:
        return {"error": exc.to_dict()}
