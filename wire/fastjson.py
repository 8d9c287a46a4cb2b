# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Read and write JSON the way RocketMQ's fastjson does.

Theory of operation
-------------------
RocketMQ encodes headers and bodies with fastjson (``RemotingSerializable.encode``). Its default
output is *not* always JSON: a map whose keys are not strings is written with bare keys
(``{0:"127.0.0.1:10911"}``), and a map keyed by objects writes the object itself as the key
(``{{"brokerName":"a","queueId":0,"topic":"T"}:{...}}``, seen in GET_CONSUME_STATS bodies).
fastjson's parser is lenient as well: any key order, unknown keys, single-quoted strings and
unquoted identifier keys.

:func:`loads` tries the standard :mod:`json` parser first (C speed, and most traffic is standard
JSON) and falls back to a small recursive-descent parser for the fastjson forms. It returns plain
Python values, except that a bare numeric key becomes an ``int`` and an object or array used as
a key becomes a hashable :class:`FrozenObject` / ``tuple``. Malformed input raises
:class:`wire.DecodeError` with the byte offset of the problem.

:func:`dumps` writes either fastjson's default form (``standard=False``: int keys bare, object
keys inline) or standard JSON (``standard=True``: every key quoted, as RocketMQ's
``BrowserCompatible``/``QuoteFieldNames`` encoding does; ``ascii_only`` also escapes non-ASCII).
Like fastjson it leaves out ``None`` members of objects and writes no whitespace. Property order
is the dict's order: typed encoders build dicts with sorted keys, as fastjson's ``SortField`` does.
Sources: ``RemotingSerializable.java`` (4.9.x common/.../protocol, 5.x remoting/.../protocol).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from .errors import DecodeError, EncodeError

__all__ = ["FrozenObject", "dumps", "loads"]


class FrozenObject(Mapping[Any, Any]):
    """An immutable, hashable JSON object: what a fastjson object *key* decodes to."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[Any, Any]) -> None:
        self._items = dict(items)
        self._hash = hash(tuple(sorted((repr(k), _freeze(v)) for k, v in self._items.items())))

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenObject({self._items!r})"


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return FrozenObject(value)
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


# --------------------------------------------------------------------------- reading

_WS = frozenset(" \t\r\n\f\v")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n",
            "r": "\r", "t": "\t"}


def loads(data: bytes | bytearray | memoryview | str, *, what: str = "json") -> Any:
    """Parse standard or fastjson-style JSON. Raises :class:`wire.DecodeError` (offset in bytes)."""
    if isinstance(data, str):
        text = data
        raw = None
    else:
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"{what}: invalid UTF-8", offset=exc.start, field=what,
                              expected="UTF-8 text", found=raw[exc.start:exc.start + 4].hex()) from None
    try:
        return json.loads(text, parse_float=Decimal)
    except (ValueError, RecursionError):
        pass
    try:
        return _Parser(text, what).parse()
    except DecodeError as err:
        if raw is not None and err.offset is not None:
            err.offset = len(text[: err.offset].encode("utf-8"))
        raise
    except RecursionError:
        raise DecodeError(f"{what}: nesting too deep", offset=0, field=what) from None


class _Parser:
    """Recursive descent over the fastjson superset of JSON. Offsets are character offsets."""

    def __init__(self, text: str, what: str) -> None:
        self.s = text
        self.i = 0
        self.what = what

    def fail(self, expected: str) -> DecodeError:
        found = self.s[self.i:self.i + 12] or "end of input"
        return DecodeError(f"{self.what}: expected {expected} at char {self.i}, found {found!r}",
                           offset=self.i, field=self.what, expected=expected, found=found)

    def ws(self) -> None:
        s, i, n = self.s, self.i, len(self.s)
        while i < n and s[i] in _WS:
            i += 1
        self.i = i

    def parse(self) -> Any:
        self.ws()
        value = self.value()
        self.ws()
        if self.i != len(self.s):
            raise self.fail("end of input")
        return value

    def value(self) -> Any:
        self.ws()
        if self.i >= len(self.s):
            raise self.fail("a value")
        c = self.s[self.i]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c in "\"'":
            return self.string()
        m = _NUMBER.match(self.s, self.i)
        if m:
            self.i = m.end()
            t = m.group()
            return Decimal(t) if ("." in t or "e" in t or "E" in t) else int(t)
        m = _IDENT.match(self.s, self.i)
        if m:
            word = m.group()
            if word in ("true", "false", "null"):
                self.i = m.end()
                return {"true": True, "false": False, "null": None}[word]
        raise self.fail("a value")

    def key(self) -> Any:
        self.ws()
        if self.i >= len(self.s):
            raise self.fail("a key")
        c = self.s[self.i]
        if c in "\"'":
            return self.string()
        if c == "{":
            return FrozenObject(self.obj())
        if c == "[":
            return tuple(_freeze(v) for v in self.arr())
        m = _NUMBER.match(self.s, self.i)
        if m:
            self.i = m.end()
            t = m.group()
            return Decimal(t) if ("." in t or "e" in t or "E" in t) else int(t)
        m = _IDENT.match(self.s, self.i)
        if m:
            self.i = m.end()
            return m.group()
        raise self.fail("a key")

    def obj(self) -> dict[Any, Any]:
        self.i += 1
        out: dict[Any, Any] = {}
        self.ws()
        if self.i < len(self.s) and self.s[self.i] == "}":
            self.i += 1
            return out
        while True:
            k = self.key()
            self.ws()
            if self.i >= len(self.s) or self.s[self.i] != ":":
                raise self.fail("':'")
            self.i += 1
            out[k] = self.value()
            self.ws()
            if self.i < len(self.s) and self.s[self.i] == ",":
                self.i += 1
                self.ws()
                if self.i < len(self.s) and self.s[self.i] == "}":  # fastjson allows a trailing comma
                    self.i += 1
                    return out
                continue
            if self.i < len(self.s) and self.s[self.i] == "}":
                self.i += 1
                return out
            raise self.fail("',' or '}'")

    def arr(self) -> list[Any]:
        self.i += 1
        out: list[Any] = []
        self.ws()
        if self.i < len(self.s) and self.s[self.i] == "]":
            self.i += 1
            return out
        while True:
            out.append(self.value())
            self.ws()
            if self.i < len(self.s) and self.s[self.i] == ",":
                self.i += 1
                continue
            if self.i < len(self.s) and self.s[self.i] == "]":
                self.i += 1
                return out
            raise self.fail("',' or ']'")

    def string(self) -> str:
        s = self.s
        quote = s[self.i]
        i = self.i + 1
        parts: list[str] = []
        start = i
        n = len(s)
        while True:
            if i >= n:
                self.i = i
                raise self.fail(f"closing {quote}")
            c = s[i]
            if c == quote:
                parts.append(s[start:i])
                self.i = i + 1
                return "".join(parts)
            if c == "\\":
                parts.append(s[start:i])
                if i + 1 >= n:
                    self.i = i
                    raise self.fail("an escape")
                e = s[i + 1]
                if e == "u":
                    h = s[i + 2:i + 6]
                    if len(h) != 4 or not all(ch in "0123456789abcdefABCDEF" for ch in h):
                        self.i = i
                        raise self.fail("4 hex digits after \\u")
                    parts.append(chr(int(h, 16)))
                    i += 6
                elif e in _ESCAPES:
                    parts.append(_ESCAPES[e])
                    i += 2
                else:
                    self.i = i
                    raise self.fail("a valid escape")
                start = i
                continue
            i += 1


# --------------------------------------------------------------------------- writing


def dumps(value: Any, *, standard: bool = False, ascii_only: bool = False) -> str:
    """Write ``value`` compactly as fastjson does (see the module docstring)."""
    out: list[str] = []
    _write(value, out, standard, ascii_only)
    return "".join(out)


def _string(s: str, ascii_only: bool) -> str:
    return json.dumps(s, ensure_ascii=ascii_only)


def _write(v: Any, out: list[str], std: bool, asc: bool) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(_string(v, asc))
    elif isinstance(v, int):
        # BrowserCompatible writes longs outside the doubles' exact range as strings.
        if std and asc and not -(2**53) <= v <= 2**53:
            out.append(f'"{v}"')
        else:
            out.append(str(int(v)))
    elif isinstance(v, Decimal):
        out.append(str(v))
    elif isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise EncodeError(f"JSON cannot carry the float {v!r}")
        out.append(repr(v))
    elif isinstance(v, Mapping):
        out.append("{")
        first = True
        for k, item in v.items():
            if item is None:
                continue
            if not first:
                out.append(",")
            first = False
            _key(k, out, std, asc)
            out.append(":")
            _write(item, out, std, asc)
        out.append("}")
    elif isinstance(v, (list, tuple, set, frozenset)):
        out.append("[")
        for n, item in enumerate(v):
            if n:
                out.append(",")
            _write(item, out, std, asc)
        out.append("]")
    elif isinstance(v, (bytes, bytearray)):
        # fastjson writes byte[] as base64; RocketMQ bodies never do, so refuse clearly.
        raise EncodeError("bytes cannot be written as JSON; encode them first")
    else:
        raise EncodeError(f"cannot write {type(v).__name__} as JSON")


def _key(k: Any, out: list[str], std: bool, asc: bool) -> None:
    if isinstance(k, str):
        out.append(_string(k, asc))
    elif isinstance(k, bool) or k is None:
        out.append(f'"{_plain(k)}"' if std else _plain(k))
    elif isinstance(k, (int, Decimal)):
        out.append(f'"{k}"' if std else str(k))
    elif isinstance(k, (Mapping, tuple)):
        text = dumps(dict(k) if isinstance(k, Mapping) else list(k), standard=std, ascii_only=asc)
        out.append(_string(text, asc) if std else text)
    else:
        raise EncodeError(f"cannot write a {type(k).__name__} as a JSON key")


def _plain(v: Any) -> str:
    return "null" if v is None else ("true" if v else "false")
