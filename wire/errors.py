# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The error types of :mod:`wire`.

Everything :mod:`wire` raises derives from :class:`WireError`. Decoding raises only
:class:`DecodeError` (or a subclass), whatever bytes it is given; encoding raises
:class:`EncodeError` when a value cannot be represented on the wire.

A :class:`DecodeError` says where and what: ``offset`` is the absolute byte offset of the problem
in the stream or buffer being decoded (the caller's coordinates: :class:`wire.FrameBuffer` counts
from the first byte it was fed), ``field`` names the field (a construct path or our own name),
``expected`` and ``found`` say what was wanted and what was there, and ``frame_index`` numbers
the frame within its stream when known.
"""

from __future__ import annotations

__all__ = [
    "DecodeError",
    "EncodeError",
    "FrameTooLarge",
    "HeaderLengthOutOfRange",
    "Truncated",
    "TrailingBytes",
    "UnknownSerializeType",
    "WireError",
]


class WireError(Exception):
    """Root of every error raised by :mod:`wire`."""


class EncodeError(WireError, ValueError):
    """A value cannot be represented in the requested wire format."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class DecodeError(WireError, ValueError):
    """Bytes that do not decode. Carries the offset, field, expectation and finding."""

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        field: str | None = None,
        expected: object = None,
        found: object = None,
        frame_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = message
        self.offset = offset
        self.field = field
        self.expected = expected
        self.found = found
        self.frame_index = frame_index

    def __str__(self) -> str:
        where = []
        if self.frame_index is not None:
            where.append(f"frame {self.frame_index}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        if self.field and self.field not in self.reason:
            where.append(f"field {self.field}")
        return f"{self.reason} ({', '.join(where)})" if where else self.reason

    def shifted(self, base: int, frame_index: int | None = None) -> DecodeError:
        """This error with its offset moved by ``base`` (to the caller's coordinates)."""
        self.offset = base + (self.offset or 0)
        if frame_index is not None and self.frame_index is None:
            self.frame_index = frame_index
        return self


class FrameTooLarge(DecodeError):
    """The frame's total length exceeds the frame cap (checked before buffering)."""


class HeaderLengthOutOfRange(DecodeError):
    """The header length does not fit in the frame."""


class UnknownSerializeType(DecodeError):
    """The serialize-type byte is neither 0 (JSON) nor 1 (ROCKETMQ)."""


class TrailingBytes(DecodeError):
    """Bytes are left over after a structure that must use its whole region."""


class Truncated(DecodeError):
    """The data ends before the structure does."""
