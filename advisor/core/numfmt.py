"""Numbers and money as the reader sees them, in both languages: the one formatter.

Used by the site's Jinja2 filters (hooks), the client reports (advisor.report), the bench pages
and charts (advisor.data.benchresults, hooks/charts.py) and, through a golden table checked by
tests/test_numfmt.py, by the calculators' `formatNumber` in calcruntime/browser/render.mjs.

Conventions (CLDR number symbols: https://cldr.unicode.org/translation/number-currency-formats):
- en: "1,234.5" (dot decimal, comma groups of three); az: "1.234,5" (decimal comma, dot groups).
- Rounding: half up, away from zero, applied to the shortest decimal text of the float
  (Python `repr`, JavaScript `String(x)`: the same shortest round-trip digits), as a reader
  rounds what they see: 0.5 -> "1", 2.5 -> "3", 1234.5 -> "1,235", 0.125 at 2 digits -> "0.13",
  1.005 at 2 digits -> "1.01" (its shortest text is "1.005", although the binary value is a
  little below). Python's `f"{x:.0f}"` (half even on the binary value) would give "2", "1,234"
  and "1.00" there; that is why nothing else may format a number for display.
- `-0` after rounding prints "0"; None, NaN and +-inf print "—" (they mean "no figure").
- `trim=True` drops trailing zeros of the fraction ("2.50" -> "2.5", "3.00" -> "3").
- Money, decided once: en puts the symbol first ("$1,500.50", "€1,500.50", "-$12.00") and a
  currency without a symbol as its code first ("AZN 1,500.50"); az puts the symbol after the
  number ("1.500,50 $", "1.500,50 €", "1.500,50 ₼"). A no-break space joins number and unit.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal

NBSP = "\u00a0"
MISSING = "—"
_CONTEXT = Context(prec=400, rounding=ROUND_HALF_UP)  # 309 integer digits of 1.8e308 + 20 decimals
_SEPARATORS = {"en": (".", ","), "az": (",", ".")}  # (decimal, group)
SYMBOLS = {"en": {"USD": "$", "EUR": "€"}, "az": {"USD": "$", "EUR": "€", "AZN": "₼"}}


def _lang(lang: str) -> str:
    if lang not in _SEPARATORS:
        raise ValueError(f"lang: expected 'az' or 'en', got {lang!r}")
    return lang


def _group(whole: str, sep: str) -> str:
    head = len(whole) % 3 or 3
    parts = [whole[:head]] + [whole[i : i + 3] for i in range(head, len(whole), 3)]
    return sep.join(parts)


def is_figure(value) -> bool:
    """True for a finite int or float (bool excluded): something `number` prints as digits."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value)


def rounded(value: float, digits: int) -> tuple[bool, str, str]:
    """(negative, integer digits, fraction digits) of |value| rounded half up to `digits`."""
    if digits < 0 or digits > 20:
        raise ValueError(f"digits: expected 0..20, got {digits!r}")
    quantum = Decimal(1).scaleb(-digits)
    text = f"{Decimal(repr(abs(value))).quantize(quantum, context=_CONTEXT):f}"
    whole, _, frac = text.partition(".")
    negative = value < 0 and any(c != "0" for c in whole + frac)
    return negative, whole, frac


def number(value, digits: int = 0, lang: str = "en", *, trim: bool = False) -> str:
    """`value` with `digits` decimals in `lang`'s style (see the module docstring)."""
    dec, grp = _SEPARATORS[_lang(lang)]
    if not is_figure(value):
        if value is None or isinstance(value, float):
            return MISSING
        raise TypeError(f"not a number: {value!r}")
    negative, whole, frac = rounded(value, digits)
    if trim:
        frac = frac.rstrip("0")
    return ("-" if negative else "") + _group(whole, grp) + (dec + frac if frac else "")


def percent(fraction, digits: int = 0, lang: str = "en") -> str:
    """A fraction as a percentage: 0.125 -> "12.5%" (en, 1 digit), "12,5 %" (az)."""
    if not is_figure(fraction):
        return number(fraction, digits, lang)
    text = number(fraction * 100, digits, lang)
    return f"{text}{NBSP}%" if lang == "az" else f"{text}%"


def money(amount, currency: str = "USD", lang: str = "en", digits: int = 2) -> str:
    """An amount already in `currency`: "$1,500.50" (en), "1.500,50 $" (az)."""
    if not is_figure(amount):
        return number(amount, digits, lang)
    text = number(abs(amount), digits, lang)
    sign = "-" if text != number(0, digits, lang) and amount < 0 else ""
    symbol = SYMBOLS[_lang(lang)].get(currency)
    if lang == "en":
        return f"{sign}{symbol}{text}" if symbol else f"{sign}{currency}{NBSP}{text}"
    return f"{sign}{text}{NBSP}{symbol or currency}"


def binary_bytes(n_bytes, digits: int = 1, lang: str = "en") -> str:
    """Bytes in GiB (2^30): 12.5 GiB."""
    if not is_figure(n_bytes):
        return number(n_bytes, digits, lang)
    return f"{number(n_bytes / 2**30, digits, lang)}{NBSP}GiB"


def decimal_bytes(n_bytes, digits: int = 1, lang: str = "en") -> str:
    """Bytes in GB (10^9): 13.4 GB."""
    if not is_figure(n_bytes):
        return number(n_bytes, digits, lang)
    return f"{number(n_bytes / 10**9, digits, lang)}{NBSP}GB"


def auto_digits(value: float) -> int:
    """Decimals for a measured figure of unknown size (bench tables and charts): 0 from 100 up,
    2 from 1 up, else 3 significant digits (0.0123 -> 4 decimals)."""
    v = abs(value)
    if v == 0 or float(v).is_integer() or v >= 100:
        return 0
    if v >= 1:
        return 2
    return min(20, 2 - math.floor(math.log10(v)))


def measured(value, lang: str = "en") -> str:
    """A measured figure with `auto_digits` decimals, trailing zeros dropped below 1."""
    if not is_figure(value):
        return number(value, 0, lang)
    return number(value, auto_digits(value), lang, trim=abs(value) < 1)
