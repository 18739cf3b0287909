"""The one marker syntax of the site's pages, for every hook and event.

A line `<!-- advisor:NAME -->` includes the template templates/markers/NAME.md.j2 (hooks/render.py,
`on_page_markdown`, first); `<!-- advisor:KIND:NAME -->` is handed to the hook that owns KIND:

- `report:NAME`: the client report of examples/NAME.yaml, or `report:form` (hooks/reports.py,
  `on_page_markdown`, after the page's template has been rendered, so nothing in a profile is
  ever read as template code);
- `calc:NAME`: the calculator NAME with its prerendered default result (calcruntime/build,
  `on_post_page`: Markdown keeps the comment as it is in the page's HTML).

hooks/render.py checks every marker of a page before anything is rendered: an unknown KIND, an
unknown template, report or calculator fails the build naming the page.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MARKER = re.compile(
    r"^[ \t]*<!--\s*advisor:(?:(?P<kind>[a-z]+):)?(?P<name>[A-Za-z0-9_.-]+)\s*-->[ \t]*$", re.M
)
KINDS = ("report", "calc")


def text(name: str, kind: str | None = None) -> str:
    """The marker line for `name` (of `kind`, None: a template marker)."""
    return f"<!-- advisor:{kind}:{name} -->" if kind else f"<!-- advisor:{name} -->"


def found(source: str) -> list[tuple[str | None, str]]:
    """[(kind or None, name)] of every marker in `source`, in order."""
    return [(m.group("kind"), m.group("name")) for m in MARKER.finditer(source)]


def replace(source: str, kind: str | None, fn: Callable[[str], str]) -> str:
    """`source` with every marker of `kind` replaced by `fn(name)`; others are left as they are."""

    def swap(m: re.Match) -> str:
        return fn(m.group("name")) if m.group("kind") == kind else m.group(0)

    return MARKER.sub(swap, source)
