"""Text that is already HTML, for template engines that escape everything else.

`Html(text)` is a `str` with an `__html__` method (the protocol of markupsafe, which Jinja2's
autoescape follows: https://markupsafe.palletsprojects.com/en/stable/html/): the site's
templates insert it as it is and escape every other string. advisor runs in Pyodide with the
standard library only, so it cannot import markupsafe; the helpers that build HTML (the bench
charts' SVG) return `Html` after escaping every piece of data they put in it.
"""

from __future__ import annotations


class Html(str):
    """A string of finished HTML (its data already escaped)."""

    __slots__ = ()

    def __html__(self) -> str:
        return self
