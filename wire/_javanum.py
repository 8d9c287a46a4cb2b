# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Java's decimal integer parsing (``Integer.parseInt`` / ``Long.parseLong``), in linear time.

Header values are decimal text that Java parses with ``parseInt``/``parseLong``: an optional sign,
then digits, where a digit is anything ``Character.digit(ch, 10)`` accepts, so Arabic-Indic or
full-width digits count too. The text comes from the peer, so its length is the peer's choice:
:func:`java_decimal` looks at each character once and never builds an integer of more digits
than an int64 has, whatever it is given (Python's ``int()`` refuses more than 4,300 digits with a
ValueError, and building a number digit by digit is quadratic in their count). Text longer than
:data:`MAX_NUMBER_TEXT` is refused before it is looked at: Java would read it only if it were
mostly leading zeros, which no client sends.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["BEYOND_LONG", "MAX_NUMBER_TEXT", "java_decimal"]

#: numeric header text longer than this is not a number (Long.MIN_VALUE is 20 characters)
MAX_NUMBER_TEXT = 64
#: what :func:`java_decimal` gives for a number outside every Java integer type (sign kept)
BEYOND_LONG = 10**19

_ASCII_DECIMAL = re.compile(r"[+-]?[0-9]+")
_LONG_DIGITS = 19


def java_decimal(raw: str) -> int | None:
    """``raw`` as ``Long.parseLong`` reads it, without the range check; None where Java would
    throw NumberFormatException (or the text is longer than :data:`MAX_NUMBER_TEXT`). A value
    of more than 19 significant digits comes back as +/- :data:`BEYOND_LONG`: outside the int64
    range, which is all a caller needs to know (every caller range-checks)."""
    if len(raw) > MAX_NUMBER_TEXT:
        return None
    if not _ASCII_DECIMAL.fullmatch(raw):
        if raw.isascii():
            return None
        ascii_raw = _ascii_digits(raw)
        if ascii_raw is None:
            return None
        raw = ascii_raw
    negative = raw[0] == "-"
    digits = raw.lstrip("+-").lstrip("0")
    if len(digits) > _LONG_DIGITS:
        return -BEYOND_LONG if negative else BEYOND_LONG
    value = int(digits) if digits else 0
    return -value if negative else value


def _ascii_digits(raw: str) -> str | None:
    # mirrors Character.digit(ch, 10): any single-UTF-16-unit Unicode decimal digit counts
    sign = raw[:1] if raw[:1] in ("+", "-") else ""
    body = raw[len(sign):]
    if not body:
        return None
    out = []
    for ch in body:
        d = unicodedata.decimal(ch, None) if ord(ch) <= 0xFFFF else None
        if d is None:
            return None
        out.append(chr(0x30 + d))
    return sign + "".join(out)
