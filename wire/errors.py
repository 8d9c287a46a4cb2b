# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The error types of :mod:`wire`.

Everything :mod:`wire` raises derives from :class:`WireError`. Decoding raises only
:class:`DecodeError` (or a subclass), whatever bytes it is given; encoding raises
:class:`EncodeError` when a value cannot be represented on the wire.

Whose fault it is decides what to do, so the two sides have two roots (h11's split):

* :class:`RemoteProtocolError`: the bytes we were given break the protocol (a peer's frame, a
  capture, a store file). A server closes that one connection and logs where; nothing of ours is
  wrong. :class:`DecodeError` and its subclasses are the remote errors.
* :class:`LocalProtocolError`: we asked for something the protocol cannot express (a value that
  does not fit its field, a request built wrong). That is the calling code's mistake, raised where
  it is made, never sent. :class:`EncodeError` is the local error.

Any other exception out of :mod:`wire` (a ``TypeError``, ``KeyError``, ``IndexError``) is a bug of
ours and is never turned into either: it travels up as itself.

A :class:`DecodeError` says where and what: ``offset`` is the absolute byte offset of the problem
in the stream or buffer being decoded (the caller's coordinates: :class:`wire.FrameBuffer` counts
from the first byte it was fed), ``field`` names the field (a construct path or our own name),
``expected`` and ``found`` say what was wanted and what was there, and ``frame_index`` numbers
the frame within its stream when known.
"""

from __future__ import annotations

__all__ = [
    "EXCERPT_CHARS",
    "DecodeError",
    "EncodeError",
    "FrameTooLarge",
    "HeaderLengthOutOfRange",
    "LocalProtocolError",
    "RemoteProtocolError",
    "Truncated",
    "TrailingBytes",
    "UnknownSerializeType",
    "WireError",
    "clipped",
    "decode_utf8",
    "excerpt",
]

#: how many characters of a bad value an error message quotes (a peer's input is never echoed whole)
EXCERPT_CHARS = 40


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``repr`` of at most ``limit`` characters (or bytes) of ``value``, saying how long it was
    when it is cut: ``'١١١١…' (400000 chars)``. Errors quote bad input through this, so that an
    answer's remark or a log line stays short whatever the peer sent."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value[:limit])
        return repr(raw) + (f" ({len(value)} bytes)" if len(value) > limit else "")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of {value.bit_length()} bits"  # str() of a huge int is itself costly
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return repr(text) if isinstance(value, str) else text
    return f"{text[:limit]!r}… ({len(text)} chars)"


def clipped(value: object, limit: int = EXCERPT_CHARS) -> object:
    """``value`` itself when it is short, else its :func:`excerpt` (for ``DecodeError.found``)."""
    if isinstance(value, (str, bytes, bytearray)) and len(value) <= limit:
        return value
    if isinstance(value, int) and value.bit_length() <= 128:
        return value
    if value is None or isinstance(value, (bool, float)):
        return value
    return excerpt(value, limit)


class WireError(Exception):
    """Root of every error raised by :mod:`wire`."""


class RemoteProtocolError(WireError):
    """What we were given breaks the protocol: the peer's (or the file's) fault, not ours."""


class LocalProtocolError(WireError):
    """We tried to do something the protocol does not allow: the calling code's fault."""


class EncodeError(LocalProtocolError, ValueError):
    """A value cannot be represented in the requested wire format."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class DecodeError(RemoteProtocolError, ValueError):
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


def decode_utf8(raw: bytes, offset: int | None, field: str) -> str:
    """``raw`` as UTF-8 text, where the bytes must be UTF-8 (topics, properties, remarks, ext
    fields, JSON). Bytes that are not raise :class:`DecodeError` naming ``field`` at the first bad
    byte (``offset`` is where ``raw`` starts in the input, None when unknown) and showing up to four
    bytes from there. The one place this rule is written; the decoders all call it."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = None if offset is None else offset + exc.start
        raise DecodeError(f"{field} is not valid UTF-8", offset=at, field=field, expected="UTF-8",
                          found=raw[exc.start:exc.start + 4].hex()) from None


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
