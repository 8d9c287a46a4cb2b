# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Small formatting helpers shared by the renderers (times as the Java tools print them)."""

from __future__ import annotations

from datetime import datetime, tzinfo

__all__ = ["dash", "human_ms", "human_s", "java_fixed", "perm_text"]


def human_ms(ms: int, tz: tzinfo | None = None) -> str:
    """``UtilAll.timeMillisToHumanString2``: ``yyyy-MM-dd HH:mm:ss,SSS`` in ``tz`` (default local).
    A time no calendar holds (a damaged file, a server's garbage) is shown as its number."""
    try:
        dt = datetime.fromtimestamp(ms / 1000, tz)
    except (ValueError, OverflowError, OSError):
        return f"{ms} (not a date)"
    return dt.strftime("%Y-%m-%d %H:%M:%S") + f",{ms % 1000:03d}"


def human_s(ms: int, tz: tzinfo | None = None) -> str:
    """``UtilAll.formatDate(..., YYYY_MM_DD_HH_MM_SS)``: ``yyyy-MM-dd HH:mm:ss``."""
    try:
        return datetime.fromtimestamp(ms / 1000, tz).strftime("%Y-%m-%d %H:%M:%S")
    except (ValueError, OverflowError, OSError):
        return f"{ms} (not a date)"


def dash(value: object) -> str:
    """A table cell: ``-`` for a missing value."""
    return "-" if value is None else str(value)


def perm_text(perm: int) -> str:
    """``PermName.perm2String``: ``R``, ``W`` and ``X`` (inherit) flags, ``-`` where unset."""
    return ("R" if perm & 4 else "-") + ("W" if perm & 2 else "-") + ("X" if perm & 1 else "-")


def java_fixed(value: float, digits: int) -> str:
    """``String.format("%.Nf", value)`` as Java prints it: the shortest decimal form of the
    double rounded half-up (Python's own formatting rounds exact binary ties to even:
    ``f"{0.125:.2f}"`` is ``0.12`` where Java prints ``0.13``)."""
    from decimal import ROUND_HALF_UP, Decimal

    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return str(Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
