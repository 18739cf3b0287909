"""HTML of a client report: Jinja2 templates (templates/report/, autoescape on, StrictUndefined)
filled with advisor.report.data's report and advisor.report.sections' texts. The same templates
serve the CLI (`python -m advisor report`), the site build (hooks/reports.py) and the browser
(advisor.webapi "report" in Pyodide).

Where the templates are: `advisor/report_templates/` inside an installed wheel (pyproject.toml
maps templates/report/ there), else templates/report/ of the checkout this package lives in.

Layout of the templates: the report is one HTML block without line breaks (safe inside
Markdown, where a blank line would end the HTML block). So each template is written one element
per line, and the loader joins the lines, dropping each line's indentation and its line break;
a Jinja tag is therefore never split over two lines. `document.html.j2` (the standalone file's
skeleton) and `report.css` (less its final line break) are used as written.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

from .publisher import Publisher
from .sections import Sections

_HERE = Path(__file__).resolve().parent.parent
AS_WRITTEN = frozenset({"document.html.j2", "report.css"})


def template_dir() -> Path:
    for folder in (_HERE / "report_templates", _HERE.parent / "templates" / "report"):
        if (folder / "report.html.j2").is_file():
            return folder
    raise FileNotFoundError(
        f"report templates: neither {_HERE / 'report_templates'} nor "
        f"{_HERE.parent / 'templates' / 'report'} holds report.html.j2"
    )


class _JoinedLines(jinja2.FileSystemLoader):
    """FileSystemLoader that joins each template's lines (see the module docstring)."""

    def get_source(self, environment, template):
        source, filename, uptodate = super().get_source(environment, template)
        if template not in AS_WRITTEN:
            source = "".join(line.lstrip() for line in source.splitlines())
        elif not template.endswith(".html.j2"):
            source = source.rstrip("\n")  # report.css goes inside <style>...</style>
        return source, filename, uptodate


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=_JoinedLines(str(template_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,  # compiled once (and kept in the browser's memory snapshot)
        keep_trailing_newline=True,
    )
    env.tests["web_url"] = is_web_url
    # `tojson` in <script type="application/json">: Jinja2 escapes < > & ' as \\u00XX
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
    return env


def is_web_url(url) -> bool:
    """Only http(s) URLs become links (a `javascript:` or `data:` URL is shown as text)."""
    return isinstance(url, str) and url.lower().startswith(("https://", "http://"))


def compile_all() -> None:
    """Load every template now (the build's Pyodide snapshot holds them compiled)."""
    env = environment()
    for name in env.list_templates():
        env.get_template(name)


def render_template(template: str, **context) -> str:
    """Any template of templates/report/ with `context`."""
    return environment().get_template(template).render(**context)


def _render(name: str, report: dict, publisher: Publisher) -> str:
    return render_template(name, r=report, s=Sections(report), pub=publisher, lang=report["lang"])


def render_fragment(report: dict, publisher: Publisher) -> str:
    """The report as one HTML block (scoped CSS inside, no blank lines: safe in Markdown)."""
    return _render("fragment.html.j2", report, publisher)


def render_html(report: dict, publisher: Publisher) -> str:
    """A self-contained HTML document: inline CSS, inline logo and chart; no external request."""
    return _render("document.html.j2", report, publisher)
