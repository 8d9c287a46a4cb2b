# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Java ``Properties`` text bodies: GET_BROKER_CONFIG / GET_NAMESRV_CONFIG / GET_CONTROLLER_CONFIG
answers and the UPDATE_BROKER_CONFIG / UPDATE_NAMESRV_CONFIG / UPDATE_CONTROLLER_CONFIG requests.

Writers use ``MixAll.properties2String``: ``key=value\\n`` per entry, nothing escaped, in the
table's order (``Configuration.getAllConfigsFormatString`` for the GET answers). Readers use
``MixAll.string2Properties``, i.e. ``java.util.Properties.load``; :func:`decode_properties`
follows its grammar: lines end at ``\\n``, ``\\r`` or ``\\r\\n``; leading blanks (space, tab,
form feed) are skipped; ``#`` and ``!`` start comment lines; a line ending in an odd number of
backslashes continues on the next one; the key ends at the first unescaped ``=``, ``:`` or blank
(blanks, then one ``=``/``:``, then blanks are skipped); ``\\t \\n \\r \\f`` and ``\\uXXXX`` are
escapes and any other escaped character stands for itself. The last of repeated keys wins.

One difference on purpose: Java's ``Properties.load(InputStream)`` reads ISO-8859-1, so a
non-ASCII value sent as UTF-8 comes out garbled in Java; we read the body as the UTF-8 it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Self

from ..errors import DecodeError, EncodeError, decode_utf8

__all__ = ["PropertiesBody", "PropertiesLineError", "decode_properties", "encode_properties",
           "iter_properties"]

_BLANK = " \t\f"
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX = frozenset("0123456789abcdefABCDEF")
_EOL = re.compile(r"\r\n|\r|\n")


def _natural_lines(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pos = 0
    for m in _EOL.finditer(text):
        out.append((pos, text[pos:m.start()]))
        pos = m.end()
    out.append((pos, text[pos:]))
    return out


def _logical_lines(text: str) -> list[tuple[int, int, str]]:
    """(character offset, line number from 1, logical line) triples, comments and blank lines
    left out (LineReader)."""
    out: list[tuple[int, int, str]] = []
    lines = _natural_lines(text)
    i = 0
    while i < len(lines):
        start, line = lines[i]
        line = line.lstrip(_BLANK)
        i += 1
        if not line or line[0] in "#!":
            continue
        parts = [line]
        while _continues(parts[-1]) and i < len(lines):
            parts[-1] = parts[-1][:-1]
            parts.append(lines[i][1].lstrip(_BLANK))
            i += 1
        if _continues(parts[-1]):  # a continuation at the very end of the text is dropped
            parts[-1] = parts[-1][:-1]
        first = i - len(parts)
        out.append((start + len(lines[first][1]) - len(line), first + 1, "".join(parts)))
    return out


def _continues(line: str) -> bool:
    n = len(line) - len(line.rstrip("\\"))
    return n % 2 == 1


def _unescape(s: str, offset: int) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        e = s[i + 1]
        if e == "u":
            digits = s[i + 2:i + 6]
            if len(digits) != 4 or not set(digits) <= _HEX:
                # mirrors Properties.loadConvert: "Malformed \\uxxxx encoding."
                raise DecodeError("properties: malformed \\uxxxx escape", offset=offset + i,
                                  field="properties", expected="4 hex digits after \\u", found=digits)
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_SIMPLE_ESCAPES.get(e, e))
            i += 2
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" or c in _BLANK:
            break
        i += 1
    key = line[:i]
    if i < n and line[i] in _BLANK:
        while i < n and line[i] in _BLANK:
            i += 1
        if i < n and line[i] in "=:":
            i += 1
    elif i < n:
        i += 1
    while i < n and line[i] in _BLANK:
        i += 1
    return key, line[i:]


def decode_properties(data: bytes | bytearray | memoryview | str) -> dict[str, str]:
    """Read Java Properties text into an ordered dict (see the module docstring)."""
    if isinstance(data, str):
        text = data
    else:
        text = decode_utf8(bytes(data), 0, "properties")
    return {key: value for key, value, _line in iter_properties(text)}


def iter_properties(text: str) -> Iterator[tuple[str, str, int]]:
    """The ``(key, value, line number)`` entries of Properties text, in order (repeated keys
    repeated). A malformed ``\\uXXXX`` escape raises :class:`wire.DecodeError` at its character
    offset (a :class:`PropertiesLineError`, which names the line)."""
    for offset, number, line in _logical_lines(text):
        key, value = _split(line)
        try:
            yield _unescape(key, offset), _unescape(value, offset + len(line) - len(value)), number
        except DecodeError as err:
            raise PropertiesLineError(err, number) from None


class PropertiesLineError(DecodeError):
    """A Properties text that does not read, with the number of the line at fault."""

    def __init__(self, err: DecodeError, line: int) -> None:
        super().__init__(f"line {line}: {err.reason}", offset=err.offset, field=err.field,
                         expected=err.expected, found=err.found)
        self.line = line
        self.problem = err.reason


def _escape(s: str, *, key: bool) -> str:
    out: list[str] = []
    for i, c in enumerate(s):
        if c == "\\":
            out.append("\\\\")
        elif c in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[c])
        elif c == " " and (key or i == 0):
            out.append("\\ ")
        elif c in "=:#!" and (key or i == 0):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def encode_properties(table: Mapping[str, str], *, escape: bool = False) -> bytes:
    """Write ``key=value\\n`` lines as ``MixAll.properties2String`` does (UTF-8).

    ``escape=False`` is Java's output byte for byte: nothing is escaped, so keys or values with
    line breaks, leading blanks, backslashes or ``=``/``:`` in the key do not read back the same.
    ``escape=True`` escapes those (as ``Properties.store`` would), so any table reads back equal.
    """
    lines = []
    for k, v in table.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise EncodeError(f"properties hold strings, got {type(k).__name__}={type(v).__name__}")
        lines.append(f"{_escape(k, key=True)}={_escape(v, key=False)}\n" if escape else f"{k}={v}\n")
    try:
        return "".join(lines).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodeError(f"properties: a lone surrogate cannot be written ({exc.reason})") from None


@dataclass(frozen=True, slots=True)
class PropertiesBody:
    """A Properties text body as an ordered string table."""

    table: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview | str) -> Self:
        return cls(decode_properties(data))

    def encode(self, *, standard: bool = False, escape: bool = False) -> bytes:
        return encode_properties(self.table, escape=escape)
