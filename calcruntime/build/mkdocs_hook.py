"""The calculators in the site build (mkdocs.yml `hooks:`): the calculator pages
(`<!-- advisor:calc:NAME -->`, calcruntime.build.pages) and the runtime's files in the site
(calcruntime.build.assets). mkdocs loads this file by path; the work is in the package."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:  # mkdocs loads this by path
    sys.path.insert(0, str(_ROOT))

from mkdocs.plugins import event_priority  # noqa: E402

from calcruntime.build import calc_page, write_site_assets  # noqa: E402
from hooks import state  # noqa: E402


def on_post_page(output, page, config):
    return calc_page(output, page)


@event_priority(50)  # before hooks/reports.py copies the runtime only if it is missing
def on_post_build(config):
    """The runtime's files, once per build: mkdocs-static-i18n runs the other language's build
    (and so this event) again into the same site folder, with the same build state, and the
    files do not depend on the language."""
    cache = state.current().cache
    if cache.get("site_assets") == config.site_dir:
        return
    write_site_assets(Path(config.site_dir))
    cache["site_assets"] = config.site_dir
