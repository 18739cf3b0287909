"""A small YAML subset parser (standard library only, so it runs in Pyodide and the CLI).

Supported: block mappings and sequences by indentation, `- key: value` items, flow sequences and
mappings (`[a, b]`, `{a: 1}`), plain / single- / double-quoted scalars, `|` and `>` block scalars,
comments, a leading `---`. Scalars follow YAML 1.2's core schema (null, true/false, int, float);
dates stay strings (the schema checks their ISO form). Anchors, aliases, tags and multi-document
streams are rejected with an error naming the line. The test suite parses every catalog file and
every example with both this module and PyYAML and requires identical results.
"""

from __future__ import annotations

import re

from .errors import AdvisorError

_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")


class YamlError(AdvisorError):
    def __init__(self, message: str, source: str, line: int):
        super().__init__(
            "yaml.invalid", f"{source}:{line}: {message}", field=source, line=line, detail=message
        )


def _strip_comment(text: str) -> str:
    out, quote = [], None
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"" and (i == 0 or text[i - 1] in " \t[{,:"):
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            break
        out.append(ch)
    return "".join(out).rstrip()


def scalar(token: str):
    """A plain scalar under YAML 1.2's core schema (dates stay strings)."""
    t = token.strip()
    if t in ("", "~", "null", "Null", "NULL"):
        return None
    if t in ("true", "True", "TRUE"):
        return True
    if t in ("false", "False", "FALSE"):
        return False
    if _INT.match(t):
        return int(t.replace("_", ""))
    if _FLOAT.match(t) and any(c.isdigit() for c in t):
        return float(t.replace("_", ""))
    if t in (".inf", "+.inf", ".Inf"):
        return float("inf")
    if t in ("-.inf", "-.Inf"):
        return float("-inf")
    if t in (".nan", ".NaN"):
        return float("nan")
    return t


class _Parser:
    def __init__(self, text: str, source: str):
        self.source = source
        self.lines: list[tuple[int, int, str]] = []  # (line number, indent, content)
        self.raw = text.splitlines()
        for n, raw in enumerate(self.raw, 1):
            if "\t" in raw[: len(raw) - len(raw.lstrip())]:
                raise YamlError("tab characters are not allowed in indentation", source, n)
            content = _strip_comment(raw)
            if not content.strip():
                continue
            if content.strip() in ("---",) and not self.lines:
                continue
            if content.startswith(("---", "...")) and self.lines:
                raise YamlError("only one document per file is supported", source, n)
            indent = len(content) - len(content.lstrip(" "))
            self.lines.append((n, indent, content.strip()))
        self.i = 0

    def error(self, message: str, line: int | None = None):
        if line is None:
            line = self.lines[min(self.i, len(self.lines) - 1)][0] if self.lines else 1
        return YamlError(message, self.source, line)

    # -- structure ---------------------------------------------------------------------------
    def parse(self):
        if not self.lines:
            return None
        value = self.block(self.lines[0][1])
        if self.i < len(self.lines):
            raise self.error("unexpected content (bad indentation?)")
        return value

    def block(self, indent: int):
        n, ind, text = self.lines[self.i]
        if ind != indent:
            raise self.error("bad indentation", n)
        if text == "-" or text.startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def sequence(self, indent: int) -> list:
        items = []
        while self.i < len(self.lines):
            n, ind, text = self.lines[self.i]
            if ind < indent:
                break
            if ind > indent:
                raise self.error("bad indentation in a list", n)
            if not (text == "-" or text.startswith("- ")):
                break  # the enclosing mapping continues (a list at its key's indent ended)
            rest = text[1:].strip()
            if not rest:
                self.i += 1
                items.append(self.nested(indent))
                continue
            # An item that opens a mapping: '- key: value' continues at indent + 2 (or deeper).
            if self._mapping_key(rest) is not None:
                inner = ind + (len(text) - len(rest))
                self.lines[self.i] = (n, inner, rest)
                items.append(self.mapping(inner))
            else:
                self.i += 1
                items.append(self.inline(rest, n, indent))
        return items

    def _mapping_key(self, text: str):
        if text[0] in "[{":
            return None
        if text[0] in "'\"":
            q = text[0]
            end = text.find(q, 1)
            if end > 0 and text[end + 1 : end + 2] == ":" and text[end + 2 : end + 3] in ("", " "):
                return text[1:end], text[end + 2 :].strip()
            return None
        m = re.match(r"^([^:#]+?):(\s+|$)(.*)$", text)
        if m:
            return m.group(1).strip(), m.group(3).strip()
        return None

    def mapping(self, indent: int) -> dict:
        out: dict = {}
        while self.i < len(self.lines):
            n, ind, text = self.lines[self.i]
            if ind < indent:
                break
            if ind > indent:
                raise self.error("bad indentation in a mapping", n)
            kv = self._mapping_key(text)
            if kv is None:
                raise self.error(f"expected 'key: value', got {text!r}", n)
            key, rest = kv
            if any(c in key for c in "&*!") and not key[0].isalnum():
                raise self.error("anchors, aliases and tags are not supported", n)
            if key in out:
                raise self.error(f"duplicate key {key!r}", n)
            self.i += 1
            if rest == "":
                out[key] = self.nested(indent, allow_same_indent_list=True)
            elif rest in ("|", ">", "|-", ">-", "|+", ">+"):
                out[key] = self.block_scalar(rest, indent)
            else:
                out[key] = self.inline(rest, n, indent)
        return out

    def nested(self, indent: int, allow_same_indent_list: bool = False):
        if self.i >= len(self.lines):
            return None
        n, ind, text = self.lines[self.i]
        if ind > indent:
            return self.block(ind)
        if allow_same_indent_list and ind == indent and (text == "-" or text.startswith("- ")):
            return self.sequence(indent)
        return None

    def block_scalar(self, style: str, indent: int) -> str:
        # Block scalars are read from the raw lines (comments inside them are text).
        start = self.lines[self.i - 1][0]  # line number of the 'key: |' line (1-based)
        body: list[str] = []
        j = start
        block_indent = None
        while j < len(self.raw):
            raw = self.raw[j]
            if raw.strip() == "":
                body.append("")
                j += 1
                continue
            ind = len(raw) - len(raw.lstrip(" "))
            if ind <= indent:
                break
            if block_indent is None:
                block_indent = ind
            if ind < block_indent:
                break
            body.append(raw[block_indent:])
            j += 1
        while self.i < len(self.lines) and self.lines[self.i][0] <= j:
            self.i += 1
        while body and body[-1] == "":
            body.pop()
        if style[0] == "|":
            text = "\n".join(body)
        else:
            paras, cur = [], []
            for line in body:
                if line == "":
                    paras.append(" ".join(cur))
                    cur = []
                else:
                    cur.append(line)
            paras.append(" ".join(cur))
            text = "\n".join(paras)
        if style.endswith("-"):
            return text
        return text + "\n"

    # -- inline values -----------------------------------------------------------------------
    def inline(self, text: str, line: int, indent: int):
        if text[0] in "&*!":
            raise self.error("anchors, aliases and tags are not supported", line)
        if text[0] in "[{":
            # Flow collections may span lines: join continuation lines deeper than `indent`.
            while not self._balanced(text) and self.i < len(self.lines):
                n, ind, more = self.lines[self.i]
                if ind <= indent:
                    break
                text += " " + more
                self.i += 1
            value, pos = self.flow(text, 0, line)
            if text[pos:].strip():
                raise self.error(f"unexpected text after a flow collection: {text[pos:]!r}", line)
            return value
        if text[0] in "'\"":
            value, pos = self.quoted(text, 0, line)
            if text[pos:].strip():
                raise self.error(f"unexpected text after a quoted string: {text[pos:]!r}", line)
            return value
        if ": " in text:
            raise self.error(f"a plain value may not contain ': ' (quote it): {text!r}", line)
        return scalar(text)

    @staticmethod
    def _balanced(text: str) -> bool:
        depth, quote = 0, None
        for ch in text:
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
        return depth == 0

    def quoted(self, text: str, pos: int, line: int):
        q = text[pos]
        out = []
        i = pos + 1
        while i < len(text):
            ch = text[i]
            if q == "'" and ch == "'":
                if text[i + 1 : i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                return "".join(out), i + 1
            if q == '"' and ch == "\\":
                nxt = text[i + 1 : i + 2]
                esc = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "0": "\0"}
                if nxt in esc:
                    out.append(esc[nxt])
                    i += 2
                    continue
                if nxt == "u":
                    out.append(chr(int(text[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                raise self.error(f"unsupported escape \\{nxt}", line)
            if q == '"' and ch == '"':
                return "".join(out), i + 1
            out.append(ch)
            i += 1
        raise self.error("unterminated quoted string", line)

    def flow(self, text: str, pos: int, line: int):
        opener = text[pos]
        closer = "]" if opener == "[" else "}"
        pos += 1
        items: list = []
        mapping: dict = {}
        while True:
            while pos < len(text) and text[pos] == " ":
                pos += 1
            if pos >= len(text):
                raise self.error(f"unterminated flow collection (missing {closer!r})", line)
            if text[pos] == closer:
                return (items if opener == "[" else mapping), pos + 1
            value, pos = self.flow_value(
                text, pos, line, stop=",:" + closer if opener == "{" else "," + closer
            )
            while pos < len(text) and text[pos] == " ":
                pos += 1
            if opener == "{":
                if pos >= len(text) or text[pos] != ":":
                    raise self.error("expected ':' in a flow mapping", line)
                key = value
                value, pos = self.flow_value(text, pos + 1, line, stop="," + closer)
                if key in mapping:
                    raise self.error(f"duplicate key {key!r}", line)
                mapping[key] = value
            else:
                items.append(value)
            while pos < len(text) and text[pos] == " ":
                pos += 1
            if pos < len(text) and text[pos] == ",":
                pos += 1
            elif pos < len(text) and text[pos] == closer:
                continue
            else:
                raise self.error(f"expected ',' or {closer!r} in a flow collection", line)

    def flow_value(self, text: str, pos: int, line: int, stop: str):
        while pos < len(text) and text[pos] == " ":
            pos += 1
        if pos < len(text) and text[pos] in "[{":
            return self.flow(text, pos, line)
        if pos < len(text) and text[pos] in "'\"":
            return self.quoted(text, pos, line)
        start = pos
        while pos < len(text) and text[pos] not in stop:
            pos += 1
        return scalar(text[start:pos]), pos


def loads(text: str, source: str = "<string>"):
    """Parse a YAML document (the supported subset) into dicts, lists and scalars.

    Errors are `AdvisorError`s with key ``yaml.invalid`` naming `source` and the line.
    """
    if not isinstance(text, str):
        raise AdvisorError("yaml.invalid", f"{source}: expected text", field=source)
    return _Parser(text, source).parse()


def load_file(path) -> object:
    """Read and parse a YAML file (UTF-8)."""
    with open(path, encoding="utf-8") as fh:
        return loads(fh.read(), str(path))
