"""The head's `<link rel="alternate" hreflang>` links out of every page; the pages' language
alternates stay in sitemap.xml (mkdocs-static-i18n writes `xhtml:link rel="alternate"
hreflang` for each page there, a way of declaring them that search engines read as well as the
head's) and in the language switcher's links.

Why: mkdocs-static-i18n (`reconfigure_material`) sets Material's `extra.alternate` per page to
the same page in each language, and Material renders those into the head; Material's JavaScript
(integrations/alternate) takes every `link[rel=alternate]` of the head for the root of another
version of the site and fetches `sitemap.xml` next to it: on /guide/tiers/ that is
/guide/tiers/sitemap.xml and /en/guide/tiers/sitemap.xml, two 404s on every page view. The
switcher still lands on the same page in the other language (its links are the page's own
alternates; overrides/assets/site.js keeps them right after an instant navigation).

Registered in mkdocs.yml `hooks:`.
"""

from __future__ import annotations

import re

HREFLANG_LINK = re.compile(r'<link rel="alternate" href="[^"]*" hreflang="[^"]*">')


def strip_hreflang_links(html: str) -> str:
    """`html` without the head's hreflang alternate links (RSS and other alternates stay)."""
    head, sep, body = html.partition("</head>")
    if not sep:
        return html
    return HREFLANG_LINK.sub("", head) + sep + body


def on_post_page(output, page, config):
    return strip_hreflang_links(output)
