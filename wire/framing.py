# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Remoting frames: split a byte stream into frames, sans-IO.

Theory of operation
-------------------
Every remoting message on the wire is one frame (``RemotingCommand.encode`` / ``NettyEncoder``)::

    int32 totalLength            -- counts everything after itself: 4 + headerLength + bodyLength
    int32 headerLengthAndType    -- bits 31..24 serialize type (0 JSON, 1 ROCKETMQ), bits 23..0 length
    byte[headerLength] header
    byte[...] body               -- totalLength - 4 - headerLength bytes; empty means "no body"

The receiving side (``NettyDecoder``, a ``LengthFieldBasedFrameDecoder(16 MiB, 0, 4, 0, 4)``)
compares ``totalLength + 4`` with the 16 MiB cap *before* it buffers anything, so the largest
accepted ``totalLength`` is 16777212, and a peer announcing more is cut off at once. It then
checks the header length against the frame and the serialize-type byte; any failure closes the
channel without an answer.

:class:`FrameBuffer` does the same in memory: ``feed()`` bytes as they arrive, call
``next_frame()`` until it returns ``None`` (it needs more bytes). A violation raises a
:class:`wire.DecodeError` subclass whose ``offset`` counts from the first byte ever fed, and the
buffer stays failed (every later call raises the same error), as the Java side would have
closed the connection. Tools that want to carry on past damage call :meth:`FrameBuffer.skip`.

The 8-byte prefix is read with one precompiled :class:`struct.Struct` (it is read for every
frame, by the broker and by the capture scanner); :data:`REMOTING_FRAME` declares the same
layout in construct and a differential test holds the two together.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from construct import Bytes, Int8ub, Int24ub, Int32sb, Struct, Terminated, this

from ._buffer import StreamBuffer
from .codes import SerializeType
from .errors import (
    DecodeError,
    FrameTooLarge,
    HeaderLengthOutOfRange,
    TrailingBytes,
    UnknownSerializeType,
)

__all__ = [
    "DEFAULT_MAX_FRAME_LENGTH",
    "MAX_TOTAL_LENGTH",
    "REMOTING_FRAME",
    "Frame",
    "FrameBuffer",
    "check_prefix",
    "prefix_ok",
    "split_frame",
]

#: NettyDecoder's default ``com.rocketmq.remoting.frameMaxLength`` (length field included).
DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024
#: The largest ``totalLength`` value accepted with the default cap.
MAX_TOTAL_LENGTH = DEFAULT_MAX_FRAME_LENGTH - 4

#: One whole frame, as construct. ``header_length`` is the low 24 bits of the second word.
REMOTING_FRAME = Struct(
    "total_length" / Int32sb,
    "serialize_type" / Int8ub,
    "header_length" / Int24ub,
    "header" / Bytes(this.header_length),
    "body" / Bytes(this.total_length - 4 - this.header_length),
    Terminated,
)

PREFIX = struct.Struct(">iI")
_SERIALIZE_TYPES = {0: SerializeType.JSON, 1: SerializeType.ROCKETMQ}


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame as cut from a stream; the header is not decoded yet (see :func:`wire.decode_frame`)."""

    serialize_type: SerializeType
    header: bytes
    body: bytes
    #: absolute stream offset of the frame's first byte (its length field)
    offset: int = 0
    #: position of the frame in its stream, from 0
    index: int = 0

    @property
    def total_length(self) -> int:
        return 4 + len(self.header) + len(self.body)

    @property
    def size(self) -> int:
        """Bytes the frame occupies on the wire, length field included."""
        return 8 + len(self.header) + len(self.body)


_new = object.__new__
_set_kind, _set_header, _set_body, _set_offset, _set_index = (
    getattr(Frame, name).__set__ for name in ("serialize_type", "header", "body", "offset", "index"))


def _frame(kind: SerializeType, header: bytes, body: bytes, offset: int, index: int) -> Frame:
    """A :class:`Frame` from values :class:`FrameBuffer` has checked, written through the slot
    descriptors (the frozen dataclass's ``__init__`` costs twice as much, once per frame)."""
    frame = _new(Frame)
    _set_kind(frame, kind)
    _set_header(frame, header)
    _set_body(frame, body)
    _set_offset(frame, offset)
    _set_index(frame, index)
    return frame


def prefix_ok(total_length: int, word: int, max_total_length: int = MAX_TOTAL_LENGTH) -> bool:
    """Whether :func:`check_prefix` accepts this prefix, as one test (no error built).

    The one statement of the rule; the three hottest loops (:meth:`FrameBuffer.next_frame`,
    ``wire.capture.streams.RemotingHalf._whole_frames`` and ``wire.capture.hotpath``) write the
    same expression inline to save the call, and each has a differential test that names it
    (``tests/wire/test_remoting.py``, ``tests/capture/test_fastpaths.py``)."""
    return 4 <= total_length <= max_total_length and (word & 0xFFFFFF) <= total_length - 4 and word >> 24 <= 1


def check_prefix(total_length: int, word: int, offset: int = 0, *, frame_index: int | None = None,
                 max_total_length: int = MAX_TOTAL_LENGTH) -> SerializeType:
    """Validate an 8-byte frame prefix as NettyDecoder and ``RemotingCommand.decode`` do.

    Returns the serialize type. ``offset`` is where the prefix starts, for the error.
    """
    # mirrors LengthFieldBasedFrameDecoder: the cap is checked before the frame is buffered
    if total_length > max_total_length or total_length < 0:
        raise FrameTooLarge(
            f"frame length {total_length} exceeds the maximum {max_total_length}"
            if total_length >= 0 else f"negative frame length {total_length}",
            offset=offset, field="totalLength", expected=f"0..{max_total_length}",
            found=total_length, frame_index=frame_index)
    if total_length < 4:
        raise HeaderLengthOutOfRange(
            f"frame length {total_length} leaves no room for the header-length word",
            offset=offset, field="totalLength", expected=">= 4", found=total_length,
            frame_index=frame_index)
    header_length = word & 0xFFFFFF
    # mirrors RemotingCommand.decode: header length must fit in the frame
    if header_length > total_length - 4:
        raise HeaderLengthOutOfRange(
            f"header length {header_length} exceeds frame length {total_length}",
            offset=offset + 4, field="headerLength", expected=f"<= {total_length - 4}",
            found=header_length, frame_index=frame_index)
    # mirrors SerializeType.valueOf: only 0 and 1 exist
    kind = _SERIALIZE_TYPES.get(word >> 24)
    if kind is None:
        raise UnknownSerializeType(
            f"unknown serialize type {word >> 24}", offset=offset + 4, field="serializeType",
            expected="0 (JSON) or 1 (ROCKETMQ)", found=word >> 24, frame_index=frame_index)
    return kind


def split_frame(data: bytes, offset: int = 0) -> Frame:
    """Cut exactly one frame out of ``data``; raise if the bytes are short or left over."""
    if len(data) < 8:
        raise DecodeError(f"frame needs at least 8 bytes, got {len(data)}", offset=offset + len(data),
                          field="prefix", expected=8, found=len(data))
    total, word = PREFIX.unpack_from(data, 0)
    kind = check_prefix(total, word, offset)
    end = 4 + total
    if len(data) < end:
        raise DecodeError(f"frame of {end} bytes is truncated at {len(data)}", offset=offset + len(data),
                          field="body", expected=end, found=len(data))
    if len(data) > end:
        raise TrailingBytes(f"{len(data) - end} bytes after the frame", offset=offset + end,
                            field="frame", expected=end, found=len(data))
    hl = word & 0xFFFFFF
    return Frame(kind, bytes(data[8:8 + hl]), bytes(data[8 + hl:end]), offset, 0)


class FrameBuffer(StreamBuffer[Frame]):
    """Sans-IO frame splitter: ``feed(bytes)``, then ``next_frame()`` until it returns ``None``."""

    __slots__ = ("max_total_length",)

    def __init__(self, *, max_total_length: int = MAX_TOTAL_LENGTH) -> None:
        super().__init__()
        self.max_total_length = max_total_length

    def next_frame(self) -> Frame | None:
        """The next complete frame, or ``None`` when more bytes are needed."""
        if self._error is not None:
            raise self._error
        buf, pos = self._buf, self._pos
        avail = len(buf) - pos
        if avail < 4:
            return None
        if avail < 8:
            # The length alone can already be rejected, before any more bytes are buffered.
            (total,) = struct.unpack_from(">i", buf, pos)
            if total > self.max_total_length or total < 4:
                self._fail_prefix(total, 0)
            return None
        total, word = PREFIX.unpack_from(buf, pos)
        hl = word & 0xFFFFFF
        kind = _SERIALIZE_TYPES.get(word >> 24)
        # copies prefix_ok (test_frame_buffer_prefix_shortcut_agrees_with_check_prefix)
        if kind is None or not 4 <= total <= self.max_total_length or hl > total - 4:
            # exactly the prefixes check_prefix refuses: it raises the precise error
            try:
                kind = check_prefix(total, word, self._base + pos, frame_index=self._index,
                                    max_total_length=self.max_total_length)
            except DecodeError as err:
                self._error = err
                raise
        end = pos + 4 + total
        if len(buf) < end:
            return None
        index = self._index
        frame = _frame(kind, bytes(buf[pos + 8:pos + 8 + hl]), bytes(buf[pos + 8 + hl:end]), self._base + pos,
                       index)
        self._index = index + 1
        self._consume(end)
        return frame

    def _fail_prefix(self, total: int, word: int) -> None:
        try:
            check_prefix(total, 0, self._base + self._pos, frame_index=self._index,
                         max_total_length=self.max_total_length)
        except DecodeError as err:
            self._error = err
            raise

    def skip(self, n: int) -> None:
        """Drop ``n`` buffered bytes and clear a failure (for tools that resynchronise)."""
        n = min(n, self.buffered)
        self._error = None
        self._consume(self._pos + n)

