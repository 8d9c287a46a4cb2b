# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The byte buffer under the sans-IO stream splitters (remoting frames, HA frames).

A splitter is fed bytes as they arrive and hands out whole frames; this class keeps the bytes
not handed out yet, the absolute stream offset of the first of them (error offsets count from
the first byte ever fed), the number of frames handed out, and the error that failed the stream
(a failed stream keeps raising it, as the Java side would have closed the connection).
Subclasses define ``next_frame()``.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from .errors import DecodeError

F = TypeVar("F")

#: compact the buffer once this many consumed bytes are at its front (and they are most of it)
_COMPACT_AT = 65536


class StreamBuffer(Generic[F]):
    """Buffered bytes of one stream direction; see the module notes."""

    __slots__ = ("_buf", "_pos", "_base", "_index", "_error")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0  # start of unconsumed data in _buf
        self._base = 0  # stream offset of _buf[0]
        self._index = 0
        self._error: DecodeError | None = None

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Append bytes received from the peer."""
        self._buf += data

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as frames."""
        return len(self._buf) - self._pos

    @property
    def stream_offset(self) -> int:
        """Absolute offset of the next unconsumed byte."""
        return self._base + self._pos

    @property
    def frames_read(self) -> int:
        return self._index

    def next_frame(self) -> F | None:
        raise NotImplementedError

    def _consume(self, end: int) -> None:
        # Compact lazily: deleting a prefix of a bytearray costs a copy of the rest.
        if end == len(self._buf):
            self._base += end
            self._buf = bytearray()
            self._pos = 0
        elif end > _COMPACT_AT and end * 2 > len(self._buf):
            del self._buf[:end]
            self._base += end
            self._pos = 0
        else:
            self._pos = end

    def __iter__(self) -> StreamBuffer[F]:
        return self

    def __next__(self) -> F:
        frame = self.next_frame()
        if frame is None:
            raise StopIteration
        return frame
