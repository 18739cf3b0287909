"""The one error type advisor raises for bad input.

Each error carries a message *key* and its *params* so that the site can translate it into the
reader's language, plus a ready English message for the CLI and logs.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable

SHOWN_CHARS = 80  # longest echo of a reader's input in a message (a 100 kB value stays out)


class AdvisorError(ValueError):
    """Bad input: a field, a message key, its parameters and an English message.

    `key` is a stable identifier such as ``"field.positive"``; `params` holds plain JSON values
    (the site's translations interpolate them); `field` names the offending input.
    """

    def __init__(self, key: str, message: str, *, field: str | None = None, **params):
        super().__init__(message)
        self.key = key
        self.field = field
        self.params = {"field": field, **params} if field is not None else dict(params)
        self.message = message

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "field": self.field,
            "params": self.params,
            "message": self.message,
        }


def shown(value, n: int = SHOWN_CHARS) -> str:
    """`value` as it appears in a message: repr() for text, cut to `n` characters with "..."."""
    if isinstance(value, float) and not math.isfinite(value):
        return "a non-finite number"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        digits = str(abs(value))
        return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:4]}e+{len(digits) - 1}"
    text = repr(value) if isinstance(value, str) else str(value)
    text = text.replace("\n", " ")
    text = _LONG_DIGITS.sub(lambda m: m.group(0)[:6] + "...", text)
    return text if len(text) <= n else text[: n - 3] + "..."


_LONG_DIGITS = re.compile(r"[0-9]{16,}")  # a 300-digit input is echoed by its first digits


def echo(text: str, n: int = SHOWN_CHARS) -> str:
    """Text typed by a reader, cut for a message: long digit runs shortened, at most `n` chars."""
    return clip(_LONG_DIGITS.sub(lambda m: m.group(0)[:6] + "...", str(text)), n)


def clip(text: str, n: int = SHOWN_CHARS) -> str:
    """Plain text cut to `n` characters with "..." (for details such as a parser's message)."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


# ASCII decimal numbers only: Python's float() also takes Arabic-Indic digits, "1_000", "nan"
# and "infinity", none of which a form or a flag should silently read as a number.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_number(field: str, text) -> float:
    """A finite number from text such as "12", "0.5", "2e9" or "0,5" (decimal comma); anything
    else (other digits, "nan", "inf", thousands separators) raises ``field.not_number``."""
    if not isinstance(text, str):
        return _number(field, text)
    s = text.strip().replace(",", ".")
    if s.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise AdvisorError("field.not_finite", f"{field}: must be a finite number", field=field)
    if not _NUMBER.fullmatch(s):
        raise AdvisorError(
            "field.not_number",
            f"{field}: expected a number, got {shown(text)}",
            field=field,
            value=shown(text),
        )
    return _number(field, float(s))


def suggest(name: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Close matches for an unknown name (difflib ratio >= 0.5), best first."""
    choices = list(choices)
    lowered = {c.lower(): c for c in choices}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
    return [lowered[h] for h in hits]


def unknown_name(field: str, name: str, choices: Iterable[str]) -> AdvisorError:
    """An `AdvisorError` for a name that is not in `choices`, with close-match suggestions."""
    hints = suggest(name, choices) if len(name) <= 200 else []
    tail = f"; did you mean {', '.join(hints)}?" if hints else ""
    return AdvisorError(
        "name.unknown",
        f"{field}: unknown name {shown(name)}{tail}",
        field=field,
        name=name if len(name) <= SHOWN_CHARS and not _LONG_DIGITS.search(name) else echo(name),
        suggestions=hints,
    )


def _number(field: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AdvisorError(
            "field.not_number",
            f"{field}: expected a number, got {shown(value)}",
            field=field,
            value=shown(value),
        )
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int beyond any float (e.g. 10**400)
        finite = False
    if not finite:
        raise AdvisorError("field.not_finite", f"{field}: must be a finite number", field=field)
    return value


def param(v):
    """A number for an error's params: plain when JSON carries it exactly, else its shown text."""
    return v if abs(v) < 1e15 else shown(v)


def check_positive(field: str, value, *, maximum: float | None = None) -> float:
    """Return `value` if it is a finite number > 0 (and <= maximum), else raise naming `field`."""
    v = _number(field, value)
    if v <= 0:
        raise AdvisorError(
            "field.positive",
            f"{field}: must be greater than 0, got {shown(value)}",
            field=field,
            value=param(v),
        )
    if maximum is not None and v > maximum:
        raise AdvisorError(
            "field.too_large",
            f"{field}: must be at most {maximum:g}, got {shown(value)}",
            field=field,
            value=param(v),
            maximum=maximum,
        )
    return v


def check_non_negative(field: str, value, *, maximum: float | None = None) -> float:
    """Return `value` if it is a finite number >= 0 (and <= maximum), else raise naming `field`."""
    v = _number(field, value)
    if v < 0:
        raise AdvisorError(
            "field.non_negative",
            f"{field}: must not be negative, got {shown(value)}",
            field=field,
            value=param(v),
        )
    if maximum is not None and v > maximum:
        raise AdvisorError(
            "field.too_large",
            f"{field}: must be at most {maximum:g}, got {shown(value)}",
            field=field,
            value=param(v),
            maximum=maximum,
        )
    return v


def check_int(field: str, value, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return `value` if it is an int in [minimum, maximum], else raise naming `field`."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise AdvisorError(
                "field.not_integer",
                f"{field}: expected a whole number, got {shown(value)}",
                field=field,
                value=shown(value),
            )
    if value < minimum:
        raise AdvisorError(
            "field.too_small",
            f"{field}: must be at least {minimum}, got {shown(value)}",
            field=field,
            value=param(value),
            minimum=minimum,
        )
    if maximum is not None and value > maximum:
        raise AdvisorError(
            "field.too_large",
            f"{field}: must be at most {maximum}, got {shown(value)}",
            field=field,
            value=param(value),
            maximum=maximum,
        )
    return value


def check_choice(field: str, value, choices: Iterable[str]) -> str:
    """Return `value` if it is one of `choices`, else an unknown-name error with suggestions."""
    choices = list(choices)
    if not isinstance(value, str):
        raise AdvisorError(
            "field.not_text",
            f"{field}: expected one of {', '.join(choices[:12])}, got {type(value).__name__}",
            field=field,
        )
    if value not in choices:
        raise unknown_name(field, value, choices)
    return value


_URL_FORBIDDEN = frozenset(' \t\r\n<>"`\\')


def check_http_url(field: str, value) -> str:
    """Return `value` if it is an absolute http(s) URL with a host and no characters that could
    leave an HTML attribute or a Markdown link (space, quotes, angle brackets, backslash);
    otherwise an error naming `field`. `javascript:`, `data:` and relative URLs are refused, so a
    catalog or profile link can only ever point to a web page."""
    from urllib.parse import urlsplit

    ok = isinstance(value, str) and len(value) <= 2048 and not (_URL_FORBIDDEN & set(value))
    if ok:
        parts = urlsplit(value)
        ok = parts.scheme in ("http", "https") and bool(parts.netloc) and value.isprintable()
    if not ok:
        shown = value[:80] if isinstance(value, str) else value
        raise AdvisorError(
            "field.url", f"{field}: expected an http(s) URL, got {shown!r}", field=field
        )
    return value


def yaml_error(field: str, exc: Exception) -> AdvisorError:
    """A YAML parser's own failure (not yet an AdvisorError, e.g. on "\\uZZZZ") as the named
    ``yaml.invalid`` error for `field`."""
    detail = clip(str(exc) or exc.__class__.__name__, 120)
    return AdvisorError(
        "yaml.invalid", f"{field}: not valid YAML ({detail})", field=field, detail=detail
    )
