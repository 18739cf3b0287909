"""The theme's own strings in the page's language: the heading anchors' tooltip, and
`theme_t(key, page)` for overrides/ templates (the wide tables' scroll hint, overrides/main.html;
overrides/assets/site.js reads it from the page). A missing key fails the build.

Python-Markdown's `toc` extension writes `<a class="headerlink" href="#id" title="Permanent
link">` after every heading; its `permalink_title` is one text for the whole build, and
mkdocs-static-i18n does not let a language override `markdown_extensions`. So the title is set
per page here, from `theme.permalink` of templates/i18n/{az,en}.yaml (az: "Daimi keçid").

Registered in mkdocs.yml `hooks:`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent.parent) not in sys.path:  # mkdocs loads this by path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from markupsafe import escape  # noqa: E402
from mkdocs.exceptions import PluginError  # noqa: E402

from hooks import state  # noqa: E402

# mkdocs.yml `toc.permalink_title` (Python-Markdown's default).
DEFAULT_TITLE = "Permanent link"
HEADERLINK = re.compile(
    r'(<a class="headerlink" href="[^"]*" title=")' + re.escape(DEFAULT_TITLE) + '"'
)


def localise_permalinks(html: str, title: str) -> str:
    """`html` with every heading anchor's title set to `title` (escaped)."""
    return HEADERLINK.sub(lambda m: f'{m.group(1)}{escape(title)}"', html)


def on_page_content(html, page, config, files):
    lang = state.page_lang(page)
    return localise_permalinks(html, state.current().strings[lang]["theme.permalink"])


def theme_t(key: str, page) -> str:
    """The text of `key` (templates/i18n/{az,en}.yaml, `theme.*`) in `page`'s language."""
    strings = state.current().strings[state.page_lang(page)]
    if not key.startswith("theme.") or key not in strings:
        raise PluginError(f"theme_t: no theme string {key!r} in templates/i18n")
    return strings[key]


def on_env(env, config, files):
    env.globals["theme_t"] = theme_t
    return env
