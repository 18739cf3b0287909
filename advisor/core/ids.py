"""Catalog ids: one pattern for every entity (models, accelerators, networks, efficiency files,
cloud providers and their offers' accelerators).

An id names a file or a URL path (the site writes `docs/<lang>/models/<id>.md` and
`docs/<lang>/hardware/<id>.md`, pages link `../<id>/`), so it is checked before anything uses
it: lower-case ASCII letters and digits, then letters, digits, '.', '_' or '-'; no '..'; at most
`MAX_ID_LENGTH` characters. `../../../README`, an absolute path, a quote or a line break in an id
therefore fail the load, naming the file and the field (issue 40).
"""

from __future__ import annotations

import re

from .errors import AdvisorError, shown

MAX_ID_LENGTH = 64
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]*")


def is_catalog_id(value) -> bool:
    """True for a text that `check_id` accepts."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_ID_LENGTH
        and ID_PATTERN.fullmatch(value) is not None
        and ".." not in value
    )


def check_id(source: str, field: str, value) -> str:
    """`value` when it is a catalog id, else an AdvisorError naming `source` (the file) and
    `field` (`fullmatch`: a trailing line break does not pass, as it would with `$`)."""
    if is_catalog_id(value):
        return value
    raise AdvisorError(
        "field.id",
        f"{source}: {field}: ids are lower-case letters, digits, '.', '_', '-' "
        f"(at most {MAX_ID_LENGTH}, no '..'): {shown(value)}",
        field=f"{source}:{field}",
        file=source,
        maximum=MAX_ID_LENGTH,
    )
