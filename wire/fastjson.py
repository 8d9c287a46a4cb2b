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

:func:`dumps` writes either fastjson's default form (``standard=False``, RocketMQ's plain
``encode()``: int keys bare, object keys inline, map entries in the given order) or the form the
name server uses for routes when the client asks for standard JSON (``standard=True``:
``BrowserCompatible, QuoteFieldNames, SkipTransientField, MapSortField``: every key quoted, an
object key written as a string holding its JSON text, map keys sorted, non-ASCII and '/' escaped,
longs beyond +/-(2^53 - 1) written as strings). Like fastjson it leaves out ``None`` members of
objects, writes no whitespace, escapes strings as ``SerializeWriter`` does (control characters,
U+007F..U+009F, U+2028 and U+2029 always) and writes floats in Java's ``Double.toString`` layout
("0.4", "1.0E7"). Property order is the dict's order: typed encoders build dicts with sorted
keys, as fastjson's ``SortField`` does.
Sources: ``RemotingSerializable.java`` (4.9.x common/.../protocol, 5.x remoting/.../protocol).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from .errors import DecodeError, EncodeError, clipped, decode_utf8, excerpt
from .java import java_double_to_string

__all__ = [
    "MAX_BROWSER_SAFE_LONG",
    "MAX_NUMBER_EXPONENT",
    "MAX_NUMBER_LENGTH",
    "FrozenObject",
    "NumberRefused",
    "dumps",
    "java_double",
    "java_string_order",
    "json_decimal",
    "loads",
    "no_constant",
    "prefer_python_parser",
    "quote",
]


class FrozenObject(Mapping[Any, Any]):
    """An immutable, hashable JSON object: what a fastjson object *key* decodes to."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[Any, Any]) -> None:
        self._items = dict(items)
        self._hash = hash(frozenset((k, _freeze(v)) for k, v in self._items.items()))

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


_thread = threading.local()


def prefer_python_parser() -> None:
    """From now on, :func:`loads` in the calling thread parses with the pure-Python parser only.
    It is slower than json's C parser, but it lets other threads take the GIL every few
    milliseconds, where the C parser holds it for the whole text (seconds for 16 MiB of small
    entries): the worker threads that decode large frames (:mod:`wire.aio`) call this, so that the
    event loop's thread keeps serving. Both parsers give the same values."""
    _thread.python_parser = True


def python_parser_preferred() -> bool:
    return bool(getattr(_thread, "python_parser", False))


def loads(data: bytes | bytearray | memoryview | str, *, what: str = "json") -> Any:
    """Parse standard or fastjson-style JSON. Raises :class:`wire.DecodeError` (offset in bytes)."""
    if isinstance(data, str):
        text = data
        raw = None
    else:
        raw = bytes(data)
        text = decode_utf8(raw, 0, what)
    try:
        if not python_parser_preferred():
            try:
                return json.loads(text, parse_float=json_decimal, parse_constant=no_constant)
            except (ValueError, RecursionError):
                pass
            value = _bare_int_keys(text)
            if value is not _NOT_THAT_FORM:
                return value
        return _Parser(text, what).parse()
    except NumberRefused as refused:
        raise refused.error(text, what, raw is not None) from None
    except DecodeError as err:
        if raw is not None and err.offset is not None:
            err.offset = len(text[: err.offset].encode("utf-8"))
        raise
    except RecursionError:
        raise DecodeError(f"{what}: nesting too deep", offset=0, field=what) from None


# ------------------------------------------------------------------ numbers, checked before conversion

#: A JSON number with a fraction or an exponent is refused when its text is longer than this ...
MAX_NUMBER_LENGTH = 1000
#: ... or when its decimal exponent (``Decimal.adjusted``) lies beyond +/- this. Java numbers
#: (a long, a double down to 4.9E-324) are far inside both bounds; beyond them, converting the
#: number would cost time or memory without bound (``int(Decimal("1e999999"))`` takes half a
#: minute, ``Decimal("1e99999999999999999999")`` raises InvalidOperation, a conversion of
#: ``1.5e999999999999999999`` raises MemoryError). Integers without fraction or exponent are
#: bounded by Python's own 4,300-digit limit for ``int()``, whose cost up to there is small.
MAX_NUMBER_EXPONENT = 1000


class NumberRefused(Exception):
    """A number beyond :data:`MAX_NUMBER_LENGTH` / :data:`MAX_NUMBER_EXPONENT`, raised from inside
    the parser (deliberately not a ValueError: ``json.loads`` would take that for a syntax error
    and the fallback parser would read the text again); :func:`loads` turns it into a
    :class:`wire.DecodeError`."""

    def __init__(self, text: str) -> None:
        super().__init__(text[:MAX_NUMBER_LENGTH])
        self.text = text

    def error(self, whole: str, what: str, in_bytes: bool) -> DecodeError:
        """The DecodeError for this number, placed in ``whole`` (the text that was parsed)."""
        pos = whole.find(self.text)
        offset = None if pos < 0 else len(whole[:pos].encode("utf-8")) if in_bytes else pos
        return DecodeError(f"{what}: the number {excerpt(self.text)} is out of range", offset=offset,
                           field=what, expected=f"a number within 1e+/-{MAX_NUMBER_EXPONENT}",
                           found=clipped(self.text))


def json_decimal(text: str) -> Decimal:
    """``parse_float`` for :func:`json.loads`: the number as a Decimal, checked for size before
    it is converted (:class:`NumberRefused` beyond the bounds)."""
    if len(text) > MAX_NUMBER_LENGTH:
        raise NumberRefused(text)
    _, e, exp = text.replace("E", "e").partition("e")
    if e and len(exp.lstrip("+-")) > 6:
        raise NumberRefused(text)  # an exponent of a million or more; Decimal() could not even hold some
    value = Decimal(text)
    if not -MAX_NUMBER_EXPONENT <= value.adjusted() <= MAX_NUMBER_EXPONENT:
        raise NumberRefused(text)
    return value


def no_constant(name: str) -> Any:
    """``parse_constant`` for :func:`json.loads`: NaN and Infinity are not JSON (Python's parser
    takes them; fastjson never writes them, it writes null)."""
    raise ValueError(f"{name} is not JSON")


# A bare integer key: '{' or ',', the digits, then ':' (JSON whitespace allowed around them). The
# pattern also matches inside strings; quoting such a match puts a '"' into the string, which
# closes it and leaves a backslash outside any string, so that text is never JSON.
_BARE_INT_KEY = re.compile(r"([{,][ \t\n\r]*)(-?(?:0|[1-9][0-9]*))(?=[ \t\n\r]*:)")
_INT_KEY_MARK = "\x00"
_NOT_THAT_FORM = object()


def _quote_int_key(m: re.Match[str]) -> str:
    return m[1] + '"\\u0000' + m[2] + '"'


def _int_key_pairs(pairs: list[tuple[str, Any]]) -> dict[Any, Any]:
    return {(int(k[1:]) if k[:1] == _INT_KEY_MARK else k): v for k, v in pairs}


def _bare_int_keys(text: str) -> Any:
    """fastjson's commonest departure from JSON, read at C speed: maps with integer keys written
    bare (``{0:"127.0.0.1:10911"}``, every route and cluster answer). Each bare key is quoted with
    a NUL mark that no key of the text can carry (texts holding an escaped NUL are left to the
    parser) and turned back into an int once parsed. Returns ``_NOT_THAT_FORM`` for any text that
    is still not JSON afterwards; the parser then reads it, or says where it is wrong."""
    if "\\u0000" in text:
        return _NOT_THAT_FORM
    quoted, count = _BARE_INT_KEY.subn(_quote_int_key, text)
    if not count:
        return _NOT_THAT_FORM
    try:
        return json.loads(quoted, parse_float=json_decimal, parse_constant=no_constant,
                          object_pairs_hook=_int_key_pairs)
    except (ValueError, RecursionError):
        return _NOT_THAT_FORM


def _number(t: str) -> int | Decimal:
    return json_decimal(t) if ("." in t or "e" in t or "E" in t) else int(t)


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
            try:
                number = _number(m.group())
            except ValueError:  # more digits than int() accepts
                raise self.fail("a number of reasonable length") from None
            self.i = m.end()
            return number
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
            try:
                number = _number(m.group())
            except ValueError:  # more digits than int() accepts
                raise self.fail("a number of reasonable length") from None
            self.i = m.end()
            return number
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
                    unit = int(h, 16)
                    low = s[i + 8:i + 12] if 0xD800 <= unit < 0xDC00 and s[i + 6:i + 8] == "\\u" else ""
                    if len(low) == 4 and all(ch in "0123456789abcdefABCDEF" for ch in low) \
                            and 0xDC00 <= int(low, 16) < 0xE000:
                        # a UTF-16 surrogate pair is one character, as json.loads reads it
                        parts.append(chr(0x10000 + ((unit - 0xD800) << 10) + (int(low, 16) - 0xDC00)))
                        i += 12
                    else:
                        parts.append(chr(unit))
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

# String escaping, as SerializeWriter.writeStringWithDoubleQuote does it (fastjson 1.2.69 and 1.2.83).
# Default features: control characters, '"' and '\' are escaped (\b \t \n \f \r short, the rest as
# \u00XX with upper-case hex), and so are DEL..U+009F and U+2028/U+2029; '/' and all other
# characters are written as they are (the caller encodes the text as UTF-8).
_ESCAPE_DEFAULT: dict[int, str] = {
    c: f"\\u{c:04X}" for c in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
}
_ESCAPE_DEFAULT.update({0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"',
                        0x5C: "\\\\"})
# BrowserCompatible: '"', '/' and '\' get a backslash, \b \f \n \r \t are short, every other char
# below 0x20 and every UTF-16 unit from 0x7F up is written as \uXXXX (upper-case hex).
_ESCAPE_BROWSER: dict[int, str] = {c: f"\\u{c:04X}" for c in (*range(0x20), 0x7F)}
_ESCAPE_BROWSER.update({0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"',
                        0x2F: "\\/", 0x5C: "\\\\"})
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")

#: BrowserCompatible writes a long outside this range as a string (SerializeWriter.writeLong).
MAX_BROWSER_SAFE_LONG = 9007199254740991


def _utf16_escapes(m: re.Match[str]) -> str:
    units = m.group().encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02X}{units[i + 1]:02X}" for i in range(0, len(units), 2))


def quote(s: str, *, browser: bool = False) -> str:
    """``s`` as a JSON string literal, escaped exactly as fastjson escapes it."""
    if browser:
        out = s.translate(_ESCAPE_BROWSER)
        if not out.isascii():
            out = _NON_ASCII.sub(_utf16_escapes, out)
        return f'"{out}"'
    return f'"{s.translate(_ESCAPE_DEFAULT)}"'


def java_double(v: float) -> str:
    """``v`` as fastjson 1.2.69 writes a double: ``Double.toString`` of a JDK before 19
    (:func:`wire.java.java_double_to_string`); NaN and the infinities are not JSON."""
    if v != v or v in (math.inf, -math.inf):
        raise EncodeError(f"JSON cannot carry the double {v!r}")
    return java_double_to_string(v)


def java_string_order(s: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units)."""
    return s.encode("utf-16-be", "surrogatepass")


def dumps(value: Any, *, standard: bool = False) -> str:
    """Write ``value`` compactly as fastjson does (see the module docstring).

    ``standard=False`` is RocketMQ's plain ``encode()``; ``standard=True`` is the
    ``BrowserCompatible, QuoteFieldNames, SkipTransientField, MapSortField`` encoding.
    """
    out: list[str] = []
    _write(value, out, standard)
    return "".join(out)


def _write(v: Any, out: list[str], std: bool) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(quote(v, browser=std))
    elif isinstance(v, int):
        if std and not -MAX_BROWSER_SAFE_LONG <= v <= MAX_BROWSER_SAFE_LONG:
            out.append(f'"{int(v)}"')
        else:
            out.append(str(int(v)))
    elif isinstance(v, Decimal):
        if not v.is_finite():
            raise EncodeError(f"JSON cannot carry the number {v}")
        out.append(str(v))
    elif isinstance(v, float):
        out.append(java_double(v))
    elif isinstance(v, Mapping):
        out.append("{")
        first = True
        for k, item in (_map_sorted(v) if std else v.items()):
            if item is None:  # MapSerializer skips null values (no WriteMapNullValue)
                continue
            if not first:
                out.append(",")
            first = False
            _key(k, out, std)
            out.append(":")
            _write(item, out, std)
        out.append("}")
    elif isinstance(v, (list, tuple, set, frozenset)):
        out.append("[")
        for n, item in enumerate(v):
            if n:
                out.append(",")
            _write(item, out, std)
        out.append("]")
    elif isinstance(v, (bytes, bytearray)):
        # fastjson writes byte[] as base64; RocketMQ bodies never do, so refuse clearly.
        raise EncodeError("bytes cannot be written as JSON; encode them first")
    else:
        raise EncodeError(f"cannot write {type(v).__name__} as JSON")


def _map_sorted(m: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    # MapSortField copies a map into a TreeMap (natural key order) unless it is already sorted or
    # linked; keys that are not mutually comparable make the copy fail and the order stay as is.
    items = list(m.items())
    keys = [k for k, _ in items]
    if all(isinstance(k, str) for k in keys):
        return sorted(items, key=lambda kv: java_string_order(kv[0]))
    if all(isinstance(k, (int, Decimal)) and not isinstance(k, bool) for k in keys):
        return sorted(items, key=lambda kv: kv[0])
    return items


def _key(k: Any, out: list[str], std: bool) -> None:
    if isinstance(k, str):
        out.append(quote(k, browser=std))
    elif isinstance(k, bool) or k is None:
        out.append(f'"{_plain(k)}"' if std else _plain(k))
    elif isinstance(k, (int, Decimal)):
        out.append(f'"{k}"' if std else str(k))
    elif isinstance(k, (Mapping, tuple)):
        # A key that is an object: fastjson writes it inline, or (BrowserCompatible and friends) as
        # a string holding its default-form JSON text (MapSerializer, JSON.toJSONString(key)).
        text = dumps(dict(k) if isinstance(k, Mapping) else list(k))
        out.append(quote(text, browser=True) if std else text)
    else:
        raise EncodeError(f"cannot write a {type(k).__name__} as a JSON key")


def _plain(v: Any) -> str:
    return "null" if v is None else ("true" if v else "false")
