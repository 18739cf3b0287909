"""Reading input files safely: a size cap, UTF-8 with a named error, a nesting-depth cap.

Every file advisor reads on a user's behalf (config.json, profiles, publisher files, bench
results, catalog documents) goes through `read_text` / `read_bytes`: at most `max_bytes + 1`
bytes are read, so `/dev/zero` or a 50 MB file ends in an error at once instead of a hang or a
MemoryError. Errors are `AdvisorError`s naming the file and the field.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path

from .errors import AdvisorError, shown

MAX_FILE_BYTES = 1_000_000  # 1 MB: the largest catalog document or profile is under 20 kB
MAX_DEPTH = 64  # nesting of JSON / YAML containers: real configs nest 3-4 levels


def is_folder(path) -> bool:
    """Path.is_dir() that answers False for a name it cannot even look up (a NUL byte)."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def require_folder(path, field: str, code: str = "file.unreadable") -> Path:
    """`path` as a Path when it is a folder, else `AdvisorError` `code` naming `field` and it."""
    p = Path(path)
    if not is_folder(p):
        name = shown(str(p))
        raise AdvisorError(code, f"{field}: {name} is not a folder", field=field, path=name)
    return p


def read_bytes(path, field: str, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of `path`, at most `max_bytes`; a folder, a missing file or a larger file
    raises `AdvisorError` (``file.unreadable`` / ``file.too_large``) naming `field` and the file."""
    p = Path(path)
    name = shown(str(p))
    try:
        if p.is_dir():
            raise IsADirectoryError(21, "is a folder")
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        why = getattr(exc, "strerror", None) or "not a file name"
        raise AdvisorError(
            "file.unreadable",
            f"{field}: cannot read {name} ({why})",
            field=field,
            path=name,
        ) from None
    if len(data) > max_bytes:
        raise AdvisorError(
            "file.too_large",
            f"{field}: {name} is larger than {max_bytes:,} bytes",
            field=field,
            path=name,
            maximum=max_bytes,
        )
    return data


def decode_utf8(data: bytes, field: str, name: str) -> str:
    """`data` as UTF-8 text (a leading BOM dropped); other encodings raise ``file.not_utf8``."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise AdvisorError(
            "file.not_utf8",
            f"{field}: {shown(name)} is not UTF-8 text (byte {exc.start})",
            field=field,
            path=shown(name),
            position=exc.start,
        ) from None


def read_text(path, field: str, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """`read_bytes` decoded as UTF-8 (`decode_utf8`)."""
    return decode_utf8(read_bytes(path, field, max_bytes=max_bytes), field, os.fspath(path))


def check_depth(obj, field: str, *, max_depth: int = MAX_DEPTH) -> None:
    """Containers (dicts, lists) nested at most `max_depth` deep, checked without recursion."""
    stack = [(obj, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > max_depth:
            raise AdvisorError(
                "file.too_deep",
                f"{field}: nested more than {max_depth} levels deep",
                field=field,
                maximum=max_depth,
            )
        stack.extend((c, depth + 1) for c in children)


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def check_json_depth(text: str, field: str, *, max_depth: int = MAX_DEPTH) -> None:
    """JSON text nested at most `max_depth` deep, checked on the text before it is parsed,
    without recursion: in Pyodide a config nested 3,000 deep overflowed the WebAssembly stack
    inside json.loads (an English message and a traceback in the console, issue 40), where
    CPython raises RecursionError. Brackets inside strings do not count."""
    depth = 0
    for m in _JSON_BRACKET.finditer(_JSON_STRING.sub("", text)):
        depth += 1 if m.group(0) in "[{" else -1
        if depth > max_depth:
            raise AdvisorError(
                "file.too_deep",
                f"{field}: nested more than {max_depth} levels deep",
                field=field,
                maximum=max_depth,
            )


_ASCII = str.maketrans({"ə": "e", "Ə": "e", "ı": "i", "İ": "i", "ß": "ss", "ø": "o", "ł": "l"})


def file_slug(name: str) -> str:
    """A file-name-safe ASCII slug of `name`. Where letters had to be dropped or changed
    (non-ASCII names), a short hash of the original keeps two profiles from writing to the same
    report: "Şəki" and "Səki" both read "seki" but get different files."""
    ascii_ = unicodedata.normalize("NFKD", name.translate(_ASCII))
    ascii_ = ascii_.encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")[:60].strip("-")
    if re.fullmatch(r"[A-Za-z0-9]+(?:[-_. ][A-Za-z0-9]+)*", name) and s:
        return s  # plain ASCII names keep their plain slug
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{s or 'report'}-{digest}"
