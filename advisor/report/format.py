"""Number and text formatting of the client reports (advisor.core.numfmt, the site's formatter)
and their translations (advisor.report.i18n)."""

from __future__ import annotations

from ..core import numfmt
from .i18n import STRINGS


def fmt_num(value, digits: int, lang: str) -> str:
    return numfmt.number(value, digits, lang)


def fmt_gib(n_bytes, lang: str, digits: int = 1) -> str:
    return numfmt.binary_bytes(n_bytes, digits, lang)


def fmt_pct(fraction, lang: str, digits: int = 0) -> str:
    return numfmt.percent(fraction, digits, lang)


def fmt_money(amount, currency: str, lang: str, digits: int = 0) -> str:
    return numfmt.money(amount, currency, lang, digits)


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
