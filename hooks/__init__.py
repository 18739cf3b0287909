"""The site's build hooks as one package.

mkdocs.yml lists the entry files (`render.py`, `reports.py`, `search_fold.py`, ...; the
calculators' hook is calcruntime/build/mkdocs_hook.py); mkdocs loads each from its path, and each puts the checkout on `sys.path`
and imports the rest of the package by name (`from hooks import state`), so the dependencies are
ordinary imports that tools can follow:

- `state`: the one `BuildState` of a build (catalog, bench results, translations, publisher,
  Jinja2 environments, caches), loaded once in `on_config`; `page_lang(page)`.
- `templating`: escaping (autoescape on), the number filters (advisor.core.numfmt), translations.
- `markers`: the one marker syntax `<!-- advisor:NAME -->` / `<!-- advisor:KIND:NAME -->`.
- `generate`, `sitedata`, `charts`, `facts`: per-item page stubs, data-page rows, inline SVG
  charts, the guide's figures.
"""
