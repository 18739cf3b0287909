"""Jinja2 for the site's pages: autoescape, the number filters, translations.

- Autoescape is on and `finalize` is `escape_value`: every `{{ value }}` of data (catalog names,
  bench text) is HTML-escaped and its Markdown syntax neutralised; translations (`t`), the
  charts' SVG and the filters' output are Markup / advisor.core.markup.Html and pass as they are.
- Filters per language, all from advisor.core.numfmt (az: decimal comma, "1.234,5"):
  `gib(bytes, digits=1)` "12,5 GiB"; `gb(bytes, digits=1)` "13,4 GB"; `num(x, digits=0)`;
  `pct(fraction, digits=0)` 0.125 -> "12,5 %" (az) / "12.5%" (en);
  `money(amount_usd, currency="USD", digits=2)` (converted with catalog/currency.yaml rates);
  `figures(params)` a translation's params with their numbers formatted (`format_params`);
  `url` an http(s) URL (advisor.core.errors.check_http_url) for Markdown links.
- Loader rooted at templates/, StrictUndefined, `trim_blocks` and `lstrip_blocks` on (so loops
  can build Markdown tables line by line).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2
import markupsafe
from mkdocs.exceptions import PluginError

from advisor.core import numfmt, yamlsafe
from advisor.core.errors import AdvisorError
from advisor.data import prices

LANGS = ("az", "en")


def format_number(value, digits: int, lang: str) -> str:
    """advisor.core.numfmt.number, strict: a template that formats a missing figure is a bug."""
    if not numfmt.is_figure(value):
        raise ValueError(f"not a finite number: {value!r}")
    return numfmt.number(value, digits, lang)


def make_filters(lang: str, rates: dict | None):
    """The pages' number filters: advisor.core.numfmt in `lang`, failing on a missing figure."""

    def num(value, digits=0):
        return format_number(value, digits, lang)

    def gib(n_bytes, digits=1):
        format_number(n_bytes, digits, lang)
        return numfmt.binary_bytes(n_bytes, digits, lang)

    def gb(n_bytes, digits=1):
        format_number(n_bytes, digits, lang)
        return numfmt.decimal_bytes(n_bytes, digits, lang)

    def pct(fraction, digits=0):
        format_number(fraction, digits, lang)
        return numfmt.percent(fraction, digits, lang)

    def money(amount_usd, currency="USD", digits=2):
        amount = amount_usd
        if currency != "USD":
            if not rates:
                raise ValueError(f"no currency rates to convert USD to {currency}")
            amount = prices.convert(amount_usd, currency, rates)
        format_number(amount, digits, lang)
        return numfmt.money(amount, currency, lang, digits)

    def figures(params):
        return format_params(params, lang)

    return {"num": num, "gib": gib, "gb": gb, "pct": pct, "money": money, "figures": figures}


_SIGNED = re.compile(r"([+-])(\d+(?:\.\d+)?)")


def format_params(params, lang: str) -> dict:
    """A translation's params with their figures in `lang` (advisor.core.numfmt; az: "27.270",
    decimal comma): an int with no decimals, a float with `numfmt.measured`'s decimals, a signed
    figure stored as text ("+12", a percentage difference) with its sign kept; other values (names,
    text) as they are. The data keep plain numbers; the page formats them when it renders
    (`t("tv.reason." ~ r.key, **(r.params | figures))`)."""
    out = {}
    for key, value in dict(params).items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            m = _SIGNED.fullmatch(value) if isinstance(value, str) else None
            if m:
                digits = len(m.group(2).partition(".")[2])
                value = m.group(1) + numfmt.number(float(m.group(2)), digits, lang)
            out[key] = value
        elif isinstance(value, int):
            out[key] = numfmt.number(value, 0, lang)
        else:
            out[key] = numfmt.measured(value, lang)
    return out


# Markdown syntax a data value must not bring into a page: link brackets (`[x](javascript:...)`),
# table cell separators, code spans, backslash escapes. HTML's own characters are escaped by
# markupsafe first (autoescape).
_MD_ESCAPES = {"[": "&#91;", "]": "&#93;", "|": "&#124;", "`": "&#96;", "\\": "&#92;"}
_MD_RE = re.compile("[" + re.escape("".join(_MD_ESCAPES)) + "]")


def escape_value(value):
    """Jinja2 `finalize`: every `{{ value }}` of data (catalog names, bench text, URLs) is
    HTML-escaped and its Markdown syntax neutralised, so that it reads as text in the Markdown a
    template writes. Markup (translations, the charts' SVG, formatted numbers) passes as it is."""
    if value is None or hasattr(value, "__html__") or not isinstance(value, str):
        return value
    return markupsafe.Markup(
        _MD_RE.sub(lambda m: _MD_ESCAPES[m.group(0)], str(markupsafe.escape(value)))
    )


def url_filter(value):
    """`{{ source.url | url }}`: an http(s) URL (advisor.core.errors.check_http_url) as Markup, for
    Markdown autolinks `<...>` and link targets `(...)` (escaping would break `&` in queries)."""
    from advisor.core.errors import check_http_url

    return markupsafe.Markup(check_http_url("url", value))


def script_json(obj) -> str:
    """JSON safe inside `<script type="application/json">`: `<`, `>` and `&` as \\u escapes
    (JSON.parse reads them back; the HTML parser never sees a tag or an entity)."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def make_env(templates: Path, lang: str, rates) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=escape_value,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(make_filters(lang, rates))
    env.filters["url"] = url_filter
    return env


def load_strings(folder: Path) -> dict:
    """templates/i18n/{lang}.yaml plus every templates/i18n/*.{lang}.yaml (one per part,
    e.g. bench.az.yaml), flattened to dotted keys. A key defined twice, or in one language
    only, fails the build naming the file(s)."""
    strings, origin = {}, {}
    for lang in LANGS:
        flat, where = {}, {}
        paths = [folder / f"{lang}.yaml"] + sorted(folder.glob(f"*.{lang}.yaml"))
        for path in paths:
            rel = path.relative_to(folder.parent.parent).as_posix()
            try:
                doc = yamlsafe.load_file(path)
            except (OSError, AdvisorError) as exc:
                raise PluginError(f"{rel}: cannot read translations: {exc}") from None
            if not isinstance(doc, dict):
                raise PluginError(f"{rel}: expected a mapping of key: text")

            def walk(prefix, node, rel=rel, flat=flat, where=where):
                for key, value in node.items():
                    name = f"{prefix}{key}"
                    if isinstance(value, dict):
                        walk(name + ".", value)
                    elif isinstance(value, str):
                        if name in flat:
                            raise PluginError(f"{rel}: key {name!r} is already in {where[name]}")
                        flat[name], where[name] = value, rel
                    else:
                        raise PluginError(f"{rel}: {name}: expected text, got {value!r}")

            walk("", doc)
        strings[lang], origin[lang] = flat, where
    for lang, other in (("az", "en"), ("en", "az")):
        only = sorted(set(strings[lang]) - set(strings[other]))
        if only:
            files = sorted({origin[lang][k] for k in only})
            raise PluginError(
                f"{', '.join(files)}: keys missing in the {other} translation: {', '.join(only[:20])}"
            )
    return strings


class MissingTranslation(Exception):
    pass


def make_t(lang: str, strings: dict):
    table = strings[lang]

    def t(key, **params):
        if key not in table:
            raise MissingTranslation(
                f"missing translation key {key!r} in templates/i18n/{lang}.yaml "
                f"(or templates/i18n/*.{lang}.yaml)"
            )
        text = markupsafe.Markup(table[key])  # translations are the site's own Markdown
        return text.format(**{k: escape_value(v) for k, v in params.items()}) if params else text

    return t
