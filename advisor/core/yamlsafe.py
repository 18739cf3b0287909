"""YAML reading for every advisor input (catalog, profiles, publisher.yaml, the site's i18n
tables): PyYAML's safe loading, narrowed to what advisor's documents use.

- Plain data only: mappings with text keys, sequences, scalars. Anchors, aliases (the
  "billion laughs" expansion) and every tag (`!!python/object`, `!!binary`, `!foo`, ...) are
  refused at the node that carries them.
- Scalars follow YAML 1.2's core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution):
  null, true/false, decimal int, float; `yes`, `no`, `on`, `0o17`, `1:30` and ISO dates stay
  text (the schema checks a date's ISO form; PyYAML's YAML 1.1 resolvers would make dates
  `datetime.date` and `no` False).
- Duplicate keys are refused, naming the key.
- Caps: MAX_BYTES of text and MAX_DEPTH levels of nesting; files must be UTF-8.

Every problem is an `AdvisorError` (key ``yaml.invalid``, ``file.unreadable``,
``file.too_large`` or ``file.not_utf8``) naming the source and, for syntax, its line and column:
never a traceback. PyYAML's C parser (libyaml) reads the events where it is installed; the
checks run on the events and nodes in Python, so the browser (pure-Python PyYAML in Pyodide)
and the CLI accept exactly the same documents.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode
from yaml.resolver import BaseResolver

from .errors import AdvisorError

MAX_BYTES = 1_000_000  # the largest catalog document is about 20 kB; webapi caps input at 1 MB
MAX_DEPTH = 32  # catalog documents nest 4 levels deep


class YamlError(AdvisorError):
    def __init__(self, message: str, source: str, line: int, column: int | None = None):
        where = f"{source}:{line}" + (f":{column}" if column is not None else "")
        super().__init__(
            "yaml.invalid",
            f"{where}: {message}",
            field=source,
            line=line,
            column=column,
            detail=message,
        )


def _short(value, limit: int = 60) -> str:
    """repr of `value`, cut to `limit` characters (an error line never echoes a huge input)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _at(message: str, mark, source: str) -> YamlError:
    if mark is None:
        return YamlError(message, source, 1)
    return YamlError(message, source, mark.line + 1, mark.column + 1)


class _Core12Resolver(BaseResolver):
    """YAML 1.2 core schema scalars (ints as decimal digits with optional `_`)."""

    yaml_implicit_resolvers: dict = {}


for _tag, _pattern, _first in (
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("int", r"^[-+]?(?:0|[1-9][0-9_]*)$", list("-+0123456789")),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
):
    _Core12Resolver.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), _first)


class _Guards(Composer, SafeConstructor, _Core12Resolver):
    """The checks, on PyYAML's Python composer and safe constructor."""

    source = "<string>"

    def __init__(self):
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        _Core12Resolver.__init__(self)
        self._depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if self.check_event(AliasEvent):
            raise _at("aliases (*name) are not allowed", event.start_mark, self.source)
        if getattr(event, "anchor", None) is not None:
            raise _at("anchors (&name) are not allowed", event.start_mark, self.source)
        if getattr(event, "tag", None) is not None:
            raise _at(f"tags ({_short(event.tag)}) are not allowed", event.start_mark, self.source)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _at(f"nested deeper than {MAX_DEPTH} levels", event.start_mark, self.source)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        if not isinstance(node, MappingNode):
            raise _at("expected a mapping", node.start_mark, self.source)
        out: dict = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise _at(
                    f"a key must be text, got {_short(key)} (quote it)",
                    key_node.start_mark,
                    self.source,
                )
            if key in out:
                raise _at(f"duplicate key {_short(key)}", key_node.start_mark, self.source)
            out[key] = self.construct_object(value_node, deep=True)
        return out


class _PyLoader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, _Guards):
    def __init__(self, text: str):
        yaml.reader.Reader.__init__(self, text)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        _Guards.__init__(self)


try:
    from yaml._yaml import CParser as _CParser
except ImportError:  # Pyodide: PyYAML without libyaml
    _CParser = None
if _CParser is not None:

    class _CLoader(_Guards, _CParser):
        """libyaml's events, advisor's composer and constructor (the checks above)."""

        def __init__(self, text: str):
            _CParser.__init__(self, text)
            _Guards.__init__(self)

    _Loader = _CLoader
else:
    _Loader = _PyLoader


def _too_large(name: str, what: str, maximum: int) -> AdvisorError:
    return AdvisorError("file.too_large", f"{name}: {what}", field=name, maximum=maximum)


def loads(text: str, source: str = "<string>"):
    """Parse one YAML document into dicts (text keys), lists and scalars.

    Errors are `AdvisorError`s with key ``yaml.invalid`` naming `source`, the line and column.
    """
    if not isinstance(text, str):
        raise AdvisorError("yaml.invalid", f"{source}: expected text", field=source)
    if len(text) > MAX_BYTES:
        raise _too_large(source, f"longer than {MAX_BYTES:,} characters", MAX_BYTES)
    loader = None
    try:
        loader = _Loader(text)
        loader.source = source
        return loader.get_single_data()
    except AdvisorError:
        raise
    except yaml.MarkedYAMLError as exc:
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            problem = f"{exc.context}: {exc.problem}"
        raise _at(problem, exc.problem_mark or exc.context_mark, source) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        char = chr(exc.character) if isinstance(exc.character, int) else exc.character
        raise YamlError(f"character {char!r} is not allowed in YAML", source, line) from None
    except yaml.YAMLError as exc:
        raise YamlError(str(exc).splitlines()[0] or "invalid YAML", source, 1) from None
    finally:
        if loader is not None:
            loader.dispose()


def read_bytes(path, what: str | None = None, max_bytes: int = MAX_BYTES) -> bytes:
    """A file of at most `max_bytes` bytes (never more is read: /dev/zero ends in an error);
    errors name `what` (default: the path)."""
    p = Path(path)
    name = what or str(p)
    if p.is_dir():
        raise AdvisorError(
            "file.unreadable", f"{name}: {p} is a folder, not a file", field=name, path=str(p)
        )
    try:
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise AdvisorError(
            "file.unreadable",
            f"{name}: cannot read {p} ({exc.strerror or exc})",
            field=name,
            path=str(p),
        ) from None
    if len(data) > max_bytes:
        raise _too_large(name, f"{p} is larger than {max_bytes:,} bytes", max_bytes)
    return data


def read_text(path, what: str | None = None, max_bytes: int = MAX_BYTES) -> str:
    """A UTF-8 text file of at most `max_bytes` bytes; errors name `what` (default: the path)."""
    p = Path(path)
    name = what or str(p)
    data = read_bytes(p, name, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise AdvisorError(
            "file.not_utf8",
            f"{name}: {p} is not UTF-8 text (line {line}, byte {exc.start})",
            field=name,
            line=line,
        ) from None


def load_file(path, what: str | None = None):
    """Read (`read_text`: errors name `what`, default the path) and parse (`loads`: errors name
    the path, line and column) a YAML file."""
    return loads(read_text(path, what), str(path))
