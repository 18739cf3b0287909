"""Number and text formatting of the client reports (CLDR style as the site: en "1,234.5",
az "1.234,5") and their translations (advisor.report_i18n)."""

from __future__ import annotations

import math

from .report_i18n import STRINGS
from .units import GIB


def fmt_num(value, digits: int, lang: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    text = f"{abs(value):.{digits}f}"
    whole, _, frac = text.partition(".")
    dec, grp = (",", ".") if lang == "az" else (".", ",")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    sign = "-" if value < 0 and float(text) != 0 else ""
    return sign + grp.join(groups) + (dec + frac if frac else "")


def fmt_gib(n_bytes, lang: str, digits: int = 1) -> str:
    return f"{fmt_num(n_bytes / GIB, digits, lang)}\u00a0GiB"


def fmt_pct(fraction, lang: str, digits: int = 0) -> str:
    text = fmt_num(fraction * 100, digits, lang)
    return f"{text}\u00a0%" if lang == "az" else f"{text}%"


def fmt_money(amount, currency: str, lang: str, digits: int = 0) -> str:
    if amount is None:
        return "—"
    text = fmt_num(amount, digits, lang)
    if lang == "en":
        symbol = {"USD": "$", "EUR": "€"}.get(currency)
        if symbol:
            return f"-{symbol}{text[1:]}" if text.startswith("-") else f"{symbol}{text}"
        return f"{currency}\u00a0{text}"
    return f"{text}\u00a0{ {'USD': '$', 'EUR': '€'}.get(currency, currency) }"


def fmt_count(n: float, lang: str) -> str:
    """Large counts: 8.03 B, 200 M (en); 8,03 mlrd, 200 mln (az)."""
    units = STRINGS[lang]["unit.big"]
    for div, label in ((1e12, units[0]), (1e9, units[1]), (1e6, units[2])):
        if n >= div:
            return f"{fmt_num(n / div, 2 if n / div < 100 else 0, lang)}\u00a0{label}"
    return fmt_num(n, 0, lang)


def tr(lang: str, key: str, **params) -> str:
    """A translation; KeyError on a missing key (both languages are complete by test)."""
    text = STRINGS[lang][key]
    return text.format(**params) if params else text
