"""The calculator pages: each `<!-- advisor:calc:NAME -->` marker becomes its calculator with
the default result prerendered by the browser's own renderer (browser/render.mjs under Node,
node/calc_prerender.mjs); boot.js and module preloads into the page's <head>."""

from __future__ import annotations

import html
import json

from mkdocs.exceptions import PluginError

from hooks import markers, state

from .paths import BROWSER, _node

CALCS = ("vram", "budget", "picker", "roofline", "serving", "cluster")


# Inlined into the <head> of calculator pages (mkdocs.yml keeps the file itself out of the site):
# starts the Pyodide worker early and holds Material's search worker back (the file says why).
BOOT_JS = (BROWSER / "boot.js").read_text(encoding="utf-8")


def _strings(lang: str) -> dict:
    """The calculators' strings (keys `calc.*`, `err.*`) of the build's translations."""
    table = state.current().strings[lang]
    return {k: v for k, v in table.items() if k.startswith(("calc.", "err."))}


def prerender() -> dict:
    """{(name, lang): html} for every calculator's default state, once per build."""
    cache = state.current().cache
    if "prerendered" in cache:
        return cache["prerendered"]
    from advisor import webapi

    items = []
    for name in CALCS:
        defaults = dict(webapi.DEFAULTS[name])
        result = json.loads(webapi.dumps(webapi.run(name, {})))
        if "error" in result:
            raise PluginError(f"calculator {name}: default inputs fail: {result['error']}")
        for lang in ("az", "en"):
            items.append({"kind": name, "lang": lang, "state": defaults, "result": result})
    payload = {
        "items": items,
        "strings": {lang: _strings(lang) for lang in ("az", "en")},
        "catalog": _catalog_lists(),
    }
    out = json.loads(_node("calc_prerender.mjs", stdin=json.dumps(payload).encode()))
    cache["prerendered"] = {(it["kind"], it["lang"]): h for it, h in zip(items, out, strict=True)}
    return cache["prerendered"]


def _catalog_lists() -> dict:
    """What the forms' drop-downs list: models, accelerators and the networks between nodes
    (catalog/networks/, kind "inter"), as (id, name), and the choices of every select field
    (advisor.core.vocab)."""
    from advisor.core import vocab
    from advisor.data import support

    cat = state.current().catalog
    return {
        # each preset, then the released models with its architecture (DeepSeek-R1 after V3)
        "models": [[x.id, x.display_name] for m in cat.models for x in (m, *m.variants)],
        # a card's FP4 paths: the weights / KV selects follow the chosen card (issue 34)
        "gpus": [[g.id, g.name, support.form_paths(g)] for g in cat.gpus],
        # the formats offered only where the card has a path for them (FP4 block formats, the
        # local runtimes' formats: advisor.data.support.GATED_WEIGHTS)
        "gated": list(support.GATED_WEIGHTS),
        "networks": [[f.id, f.name] for f in cat.networks if f.kind == "inter"],
        "options": vocab.form_choices(),
    }


def calc_data(lang: str) -> str:
    """The page's calculator data inside its content (so that Material's instant navigation,
    which swaps the content, brings the new page's along): a hidden element whose attributes
    hold the strings (`calc.*`, `err.*` of `lang`) and the drop-downs' lists as JSON. Not a
    `<script type="application/json">`: instant navigation re-creates every script of the
    content without its attributes, so JSON would run as JavaScript."""
    strings = html.escape(json.dumps(_strings(lang), ensure_ascii=False, sort_keys=True))
    lists = html.escape(json.dumps(_catalog_lists(), ensure_ascii=False, sort_keys=True))
    return (
        f'<div class="calc-data" hidden data-lang="{lang}" data-strings="{strings}" '
        f'data-lists="{lists}"></div>'
    )


def calc_page(output: str, page) -> str:
    """Calculator pages: each marker becomes its prerendered calculator (the first preceded by
    `calc_data`); into <head>: boot.js (starts the worker before the page is parsed) and module
    preloads of the runtime's scripts. calc.css (mkdocs.yml extra_css) and
    calcruntime/browser/loader.mjs (extra_javascript, which imports calc.mjs and wires the
    calculators) are on every page, for instant navigation."""
    if not any(kind == "calc" for kind, _ in markers.found(output)):
        return output
    lang = state.page_lang(page)
    pre = prerender()
    first = [calc_data(lang)]

    def swap(name: str) -> str:
        return (first.pop() if first else "") + pre[(name, lang)]

    output = markers.replace(output, "calc", swap)
    base = "../" * page.url.count("/") if page.url else ""
    # boot.js right after <meta charset> (which must stay in the first 1024 bytes), before the
    # stylesheets: an inline script after them waits until they have loaded (on the phone
    # profile of issue 12 the worker then started 0.3 s later)
    charset = '<meta charset="utf-8">'
    if charset not in output:
        raise PluginError(f"{page.file.src_uri}: no {charset} to put boot.js after")
    boot = f'<script data-base="{base}">{BOOT_JS}</script>'
    output = output.replace(charset, charset + boot, 1)
    head = (
        f'<link rel="modulepreload" href="{base}assets/calc/calc.mjs">'
        f'<link rel="modulepreload" href="{base}assets/calc/render.mjs">'
        f'<link rel="modulepreload" href="{base}assets/calc/worker.mjs">'
        f'<link rel="modulepreload" href="{base}assets/calc/unzip.mjs">'
        f'<link rel="modulepreload" href="{base}assets/calc/sparse.mjs">'
        f'<link rel="modulepreload" href="{base}assets/pyodide/pyodide.mjs">'
    )
    return output.replace("</head>", head + "</head>", 1)
