"""Whole counts as people type them: thousands separators ("2,000,000,000,000", "2 000 000",
"2.000.000") and, for token counts, the K / M / B / T suffixes the CLI's `--tokens`
takes ("2T", "1.5B", "1,5B": 10^3, 10^6, 10^9, 10^12, SI prefixes as token budgets are quoted,
e.g. "15T tokens" in Meta's Llama 3 announcement).

One parser for the web API (advisor.webapi's `count` and `tokens` field kinds, so every
calculator reads a field as the CLI does) and the tests' golden table (tests/test_counts.py).

A text is a grouped number only when every group after the first has exactly three digits and
one separator is used throughout ("2,000" is two thousand, "2,5" is two and a half, a decimal
comma as advisor.core.errors.parse_number reads it; "2.000" is two thousand, as an Azerbaijani page
writes it); anything else goes to parse_number. Before a suffix the mark is always decimal
("1,5B" and "1.5B" are one and a half billion). The product
with a suffix is exact (decimal arithmetic: "1.1T" is 1,100,000,000,000, not 1.1 x 10^12 in
binary floating point), and stays a float when it is not whole, so that the caller's
check_int names it.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from .errors import AdvisorError, parse_number, shown

SUFFIXES = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
# a separator between digit groups: comma, full stop, (no-break / thin) space; not Python's
# underscore (tests/test_webapi.py: "1_000" is not a number a reader types)
_GROUPED = re.compile(r"[0-9]{1,3}(?P<sep>[,. \u00a0\u202f])[0-9]{3}(?:(?P=sep)[0-9]{3})*")
_SUFFIXED = re.compile(r"(?P<num>.*?[0-9.])\s*(?P<suffix>[KkMmBbTt])")
MAX_CHARS = 64  # a count longer than this is not a count (and is not echoed whole)


def _plain(field: str, text: str):
    """Digits, grouped digits or a number parse_number takes."""
    if _GROUPED.fullmatch(text):
        return int(re.sub(r"[^0-9]", "", text))
    return parse_number(field, text)


def parse_count(field: str, text, *, suffixes: bool = False):
    """`text` (or a number) as a number: an int where it is whole, else a float (the caller
    checks the range and that it is whole: advisor.core.errors.check_int). With `suffixes`, K / M /
    B / T multiply (module docstring)."""
    if not isinstance(text, str):
        return parse_number(field, text)
    s = text.strip()
    if len(s) > MAX_CHARS:
        raise AdvisorError(
            "field.not_number",
            f"{field}: expected a number, got {shown(text)}",
            field=field,
            value=shown(text),
        )
    m = _SUFFIXED.fullmatch(s) if suffixes else None
    if m is None:
        v = _plain(field, s)
        return int(v) if isinstance(v, float) and v.is_integer() and abs(v) < 2**63 else v
    # before a suffix, a comma or full stop is the decimal mark ("1,5B", "1.5B"), never a group
    base = parse_number(field, m.group("num").strip())
    try:
        exact = Decimal(str(base)) * SUFFIXES[m.group("suffix").upper()]
    except InvalidOperation:  # pragma: no cover - parse_number gave a finite number
        raise AdvisorError(
            "field.not_number", f"{field}: expected a number, got {shown(text)}", field=field
        ) from None
    return int(exact) if exact == exact.to_integral_value() else float(exact)
