# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Per-direction decoders of reassembled TCP bytes: remoting frames (with resynchronisation) and HA.

Theory of operation
-------------------
A :class:`RemotingHalf` receives one direction's bytes from the reassembler in order, plus
``gap`` and ``end`` notices. It cuts frames exactly as ``NettyDecoder`` does (4-byte length, then
``RemotingCommand.decode``), decodes each with :func:`wire.decode_frame` and reports a
:class:`~wire.capture.rows.CommandRow` per frame to its owner. It differs from
:class:`wire.FrameBuffer` in what happens after trouble, because a capture tool must carry on where
the Java peer would have closed the connection:

* a frame whose 8-byte prefix is impossible (too long, header longer than the frame, unknown
  serialize type) is reported with its :class:`wire.DecodeError`, and the decoder **loses sync**;
* a frame whose prefix is fine but whose header does not decode is reported and skipped by its
  length (the framing is intact);
* a gap (bytes the capture lacks) drops any partial frame in front of it, and the decoder loses sync;
* a connection joined midway (no SYN) starts out of sync, since its first byte may be mid-frame.

Out of sync, :func:`find_frame_start` looks for the next offset where a frame plausibly begins;
the first frame there that decodes completely restores sync (the bytes passed over are reported
as ``skipped``); if it does not decode, the search goes on from the next byte. Nothing is ever
zero-filled or guessed: bytes either decode as a whole frame or are reported.

An :class:`HaHalf` does the same for one direction of an HA connection with the sans-IO stream
decoders of :mod:`wire.ha`; HA streams have no markers to resynchronise on, so after a gap or an
error the rest of that direction is reported as skipped.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Protocol

from ..errors import DecodeError
from ..framing import MAX_TOTAL_LENGTH, PREFIX, Frame, check_prefix, prefix_ok
from ..remoting import (
    FLAG_ONEWAY,
    FLAG_RESPONSE,
    RemotingCommand,
    decode_binary_header,
    decode_frame,
    decode_json_header,
    trusted_command,
)
from ..remoting import fast_json_header as json_header
from .rows import Conversation, ProblemRow

__all__ = ["FrameSink", "HaHalf", "RemotingHalf", "find_frame_start", "json_header", "plausible_frame_start",
           "trusted_command"]

# The ROCKETMQ header's fixed part: code i16, language u8, version i16, opaque i32, flag i32,
# remark length i32 (RocketMQSerializable.rocketMQProtocolDecode); then ext length i32.
_BIN_MIN_HEADER = 21
# LanguageCode has 14 members today; leave room for a few more before calling a byte implausible.
_MAX_LANGUAGE = 31
_FLAG_BITS = FLAG_RESPONSE | FLAG_ONEWAY
# What a JSON header may hold around its object and after the '{', as far as the header decoder
# accepts it (json.loads, then wire.fastjson's lenient parser): whitespace (fastjson's set, which
# json's " \t\r\n" is part of) before and after the object, as the C++ client's "}\n"; after
# '{', whitespace, '}', a quoted key, an unquoted identifier or number key, or an object or array
# key. The frame-start test must accept every header the decoder accepts (a stricter test loses
# the frames of such a peer when a capture joins a connection midway).
_JSON_WS = frozenset(b" \t\r\n\f\v")
_JSON_SECOND = _JSON_WS | frozenset(b"\"'}{[-$_0123456789"
                                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

# ---------------------------------------------------------------------------------------------- headers
#
# Decoding headers is most of the work of a capture: JSON headers go through wire.remoting's
# strict-JSON fast path first (json_header), anything unusual through the general decoder.

#: sets ``body`` on a command that a decoder has just built (the dataclass is frozen)
set_body = RemotingCommand.__dict__["body"].__set__


def decode_frame_header(kind: int, data: bytes) -> RemotingCommand:
    """The header of a frame of serialize type ``kind`` (0 JSON, 1 ROCKETMQ); raises what
    :func:`wire.decode_header` raises (offsets relative to the header)."""
    if kind == 0:
        cmd = json_header(data)
        return cmd if cmd is not None else decode_json_header(data)
    return decode_binary_header(data)


class FrameSink(Protocol):
    """The owner of a half decoder: builds the rows, numbers them and pairs requests with responses."""

    def command(self, direction: int, ts: float, ts_end: float, offset: int, index: int, size: int,
                record: int, header_length: int, command: RemotingCommand) -> None: ...

    def ha_frame(self, direction: int, ts: float, ts_end: float, offset: int, index: int, size: int,
                 record: int, message: Any, variant: str) -> None: ...

    def problem(self, row: ProblemRow) -> None: ...


def plausible_frame_start(buf: bytes | bytearray, i: int, *,
                          max_total_length: int = MAX_TOTAL_LENGTH) -> bool:
    """Whether a remoting frame can begin at ``buf[i]``, judged from the bytes that are there.

    Needs the 8-byte prefix: a total length within the cap, serialize type 0 or 1, a header that
    fits the frame; then, as far as the buffer reaches, a JSON header that opens with ``{`` and a
    key or ``}`` and closes with ``}``, or a ROCKETMQ header with a known-sized layout (language
    byte, flag bits, remark and ext lengths that add up to the header length).
    """
    n = len(buf)
    if i < 0 or i + 8 > n:
        return False
    total, word = PREFIX.unpack_from(buf, i)
    if not prefix_ok(total, word, max_total_length):
        return False
    hl = word & 0xFFFFFF
    kind = word >> 24
    h = i + 8
    if kind == 0:
        if hl < 2:
            return False
        end = h + hl
        while h < n and h < end and buf[h] in _JSON_WS:
            h += 1
        if h < n and (h >= end or buf[h] != 0x7B):  # "{"
            return False
        if h + 1 < n and h + 1 < end and buf[h + 1] not in _JSON_SECOND:
            return False
        if end <= n:
            last = end - 1
            while last > h and buf[last] in _JSON_WS:
                last -= 1
            return bool(last > h and buf[last] == 0x7D)  # "}"
        return True
    if kind == 1:
        if hl < _BIN_MIN_HEADER:
            return False
        if h + 3 <= n and buf[h + 2] > _MAX_LANGUAGE:
            return False
        if h + 13 <= n:
            flag = int.from_bytes(buf[h + 9:h + 13], "big", signed=True)
            if flag & ~_FLAG_BITS:
                return False
        if h + 17 <= n:
            rlen = int.from_bytes(buf[h + 13:h + 17], "big", signed=True)
            if rlen < 0 or 17 + rlen + 4 > hl:
                return False
            e = h + 17 + rlen
            if e + 4 <= n:
                elen = int.from_bytes(buf[e:e + 4], "big", signed=True)
                if elen != hl - 21 - rlen:
                    return False
        return True
    return False


def find_frame_start(buf: bytes | bytearray, start: int = 0, end: int | None = None, *,
                     max_total_length: int = MAX_TOTAL_LENGTH) -> int | None:
    """The first offset in ``buf[start:end]`` where a remoting frame plausibly begins, or ``None``.

    Candidates are the offsets 8 bytes before a ``{`` (a JSON header), or before the whitespace
    in front of it, and 4 bytes before a 0x01 byte (the ROCKETMQ serialize type); each is checked
    with :func:`plausible_frame_start`, which looks only at the bytes present (up to ``end``).
    The caller confirms a candidate by decoding the whole frame.
    """
    n = len(buf) if end is None else min(end, len(buf))
    view = buf[:n] if n < len(buf) else buf
    pending: list[int] = []  # JSON candidates of the current '{', in increasing order
    j_json = view.find(b"{", start + 8)
    j_bin = view.find(b"\x01", start + 4)
    while pending or j_json != -1 or j_bin != -1:
        if not pending and j_json != -1:
            w = j_json  # a header may begin with whitespace before its '{'
            while w > start + 8 and view[w - 1] in _JSON_WS:
                w -= 1
            pending = list(range(w - 8, j_json - 7))
            j_json = view.find(b"{", j_json + 1)
        if j_bin == -1 or (pending and pending[0] <= j_bin - 4):
            i = pending.pop(0)
        else:
            i = j_bin - 4
            j_bin = view.find(b"\x01", j_bin + 1)
        if start <= i and i + 8 <= n and plausible_frame_start(view, i, max_total_length=max_total_length):
            return i
    return None


class _Half:
    """Shared bookkeeping: the byte buffer, where each delivered segment began, and sync state."""

    __slots__ = ("sink", "conv", "direction", "buf", "pos", "base", "segs", "synced", "skip_from",
                 "index", "error")

    def __init__(self, sink: FrameSink, conv: Conversation, direction: int, *, synced: bool) -> None:
        self.sink = sink
        self.conv = conv
        self.direction = direction
        self.buf = bytearray()
        self.pos = 0  # first unconsumed byte in buf
        self.base = 0  # stream offset of buf[0]
        #: (stream offset, ts, record) of each delivered segment not yet wholly consumed
        self.segs: deque[tuple[int, float, int]] = deque()
        self.synced = synced
        #: stream offset where skipping began while out of sync (None: nothing skipped)
        self.skip_from: int | None = None
        self.index = 0
        self.error: DecodeError | None = None

    def _when(self, offset: int) -> tuple[float, int]:
        segs = self.segs
        while len(segs) > 1 and segs[1][0] <= offset:
            segs.popleft()
        if not segs:
            return self.conv.last_ts, 0
        _o, ts, record = segs[0]
        return ts, record

    def _when_end(self, last: int) -> float:
        ts = self.segs[0][1] if self.segs else self.conv.last_ts
        for o, t, _r in self.segs:
            if o > last:
                break
            ts = t
        return ts

    def _compact(self) -> None:
        buf, pos = self.buf, self.pos
        if pos == len(buf):
            self.base += pos
            self.buf = bytearray()
            self.pos = 0
        elif pos > 65536 and pos * 2 > len(buf):
            del buf[:pos]
            self.base += pos
            self.pos = 0

    def _problem(self, offset: int | None, kind: str, message: str, length: int = 0,
                 error: DecodeError | None = None) -> None:
        ts, record = self._when(offset if offset is not None else self.base + self.pos)
        self.conv.problems += 1
        self.sink.problem(ProblemRow(ts, self.conv, self.direction, offset, record, kind, message, length,
                                     error))

    def _skipped_until(self, offset: int, why: str) -> None:
        if self.skip_from is not None and offset > self.skip_from:
            n = offset - self.skip_from
            self._problem(self.skip_from, "skipped",
                          f"{self.conv.describe(self.direction)}: {n:,} bytes at offset {self.skip_from:,} "
                          f"passed over {why}", n)
        self.skip_from = None

    def _lose_sync(self, offset: int) -> None:
        self.synced = False
        if self.skip_from is None:
            self.skip_from = offset


class RemotingHalf(_Half):
    """One direction of a remoting connection (see the module docstring)."""

    __slots__ = ("max_total_length",)

    def __init__(self, sink: FrameSink, conv: Conversation, direction: int, *, synced: bool = True,
                 max_total_length: int = MAX_TOTAL_LENGTH) -> None:
        super().__init__(sink, conv, direction, synced=synced)
        self.max_total_length = max_total_length

    def data(self, offset: int, data: bytes, ts: float, record: int) -> None:
        if self.pos == len(self.buf):
            # Nothing pending, so every earlier segment is consumed: parse straight from this one.
            self._fresh(offset, data, 0, ts, record)
            return
        self.segs.append((offset, ts, record))
        need = self._to_finish()
        if 0 < need < len(data):
            # The frame in the buffer ends inside this segment: finish it the careful way, then take
            # the rest of the segment as if it began a segment (frames after a pipelined send's cut
            # are whole far more often than not).
            self.buf += data[:need]
            self._run()
            self._fresh(offset, data, need, ts, record)
            return
        self.buf += data
        self._run()
        self._compact()

    def _to_finish(self) -> int:
        """In sync, with a sound 8-byte prefix buffered: the bytes the pending frame still needs
        (0 when any of that does not hold)."""
        pending = len(self.buf) - self.pos
        if not self.synced or pending < 8:
            return 0
        total: int
        word: int
        total, word = PREFIX.unpack_from(self.buf, self.pos)
        if not prefix_ok(total, word, self.max_total_length):
            return 0
        return 4 + total - pending

    def _fresh(self, offset: int, data: bytes, start: int, ts: float, record: int) -> None:
        """Decode ``data[start:]`` (``data`` is a segment at stream offset ``offset``) with nothing
        pending before it."""
        segs = self.segs
        segs.clear()
        segs.append((offset, ts, record))
        pos = self._whole_frames(offset, data, ts, record, start) if self.synced else start
        if pos == len(data):
            self.base = offset + pos
            self.buf = bytearray()
            self.pos = 0
            return
        self.buf = data  # type: ignore[assignment]  # read-only use until _keep copies it
        self.pos = pos
        self.base = offset
        self._run()
        self._keep()

    def _whole_frames(self, offset: int, data: bytes, ts: float, record: int, start: int = 0) -> int:
        """The hot path: frames that lie whole in one segment, with a sound prefix and a header that
        decodes, from ``data[start]``. Returns where it stopped; anything else is left to
        :meth:`_run`, which decodes the same bytes again the careful way and reports what is wrong."""
        n = len(data)
        pos = start
        unpack = PREFIX.unpack_from
        limit = self.max_total_length
        command = self.sink.command
        d = self.direction
        frames = self.conv.frames
        while n - pos >= 8:
            total, word = unpack(data, pos)
            hl = word & 0xFFFFFF
            kind = word >> 24
            end = pos + 4 + total
            # copies wire.framing.prefix_ok (test_prefix_copies_in_the_capture_loops_agree)
            if not (4 <= total <= limit and hl <= total - 4 and kind <= 1) or end > n:
                break
            try:
                cmd = decode_frame_header(kind, data[pos + 8:pos + 8 + hl])
            except Exception:  # _run decodes it again and reports what is wrong
                break
            if end > pos + 8 + hl:
                # as decode_frame does: the decoded header gets its body
                set_body(cmd, data[pos + 8 + hl:end])
            index = self.index
            self.index = index + 1
            frames[d] += 1
            command(d, ts, ts, offset + pos, index, 4 + total, record, hl, cmd)
            pos = end
        return pos

    def _keep(self) -> None:
        buf = self.buf
        if self.pos == len(buf):
            self.base += self.pos
            self.buf = bytearray()
            self.pos = 0
        else:
            self.base += self.pos
            self.buf = bytearray(memoryview(buf)[self.pos:])
            self.pos = 0

    def _run(self) -> None:
        buf = self.buf
        n = len(buf)
        pos = self.pos
        base = self.base
        unpack = PREFIX.unpack_from
        conv = self.conv
        while n - pos >= 8:
            if not self.synced:
                if self.skip_from is None:
                    self.skip_from = base + pos
                cand = find_frame_start(buf, pos, max_total_length=self.max_total_length)
                if cand is None:
                    pos = max(pos, n - 7)
                    break
                pos = cand
            total, word = unpack(buf, pos)
            offset = base + pos
            try:
                kind = check_prefix(total, word, offset, frame_index=self.index,
                                    max_total_length=self.max_total_length)
            except DecodeError as err:
                if self.synced:
                    self._problem(err.offset, "decode", f"{conv.describe(self.direction)}: {err}", 0, err)
                    self._lose_sync(offset)
                pos += 1
                continue
            end = pos + 4 + total
            if end > n:
                break
            hl = word & 0xFFFFFF
            frame = Frame(kind, bytes(buf[pos + 8:pos + 8 + hl]), bytes(buf[pos + 8 + hl:end]), offset,
                          self.index)
            try:
                cmd = decode_frame(frame)
            except DecodeError as err:
                if not self.synced:
                    pos += 1  # not a frame after all: keep looking
                    continue
                self._problem(offset if err.offset is None else err.offset, "decode",
                              f"{conv.describe(self.direction)}: {err}", 4 + total, err)
                self.index += 1
                pos = end
                continue
            if not self.synced:
                self.synced = True
                self._skipped_until(offset, "to find the next frame start")
            ts, record = self._when(offset)
            ts_end = self._when_end(base + end - 1)
            self.index += 1
            conv.frames[self.direction] += 1
            self.sink.command(self.direction, ts, ts_end, offset, frame.index, 4 + total, record, hl, cmd)
            pos = end
        self.pos = pos

    def gap(self, offset: int, length: int, ts: float, record: int) -> None:
        conv = self.conv
        pending = len(self.buf) - self.pos
        cut = ""
        if pending and self.synced:
            cut = f"; the frame at offset {self.base + self.pos:,} ({pending:,} bytes so far) is lost"
        self.sink.problem(ProblemRow(ts, conv, self.direction, offset, record, "gap",
                                     f"{conv.describe(self.direction)}: {length:,} bytes missing at offset "
                                     f"{offset:,}{cut}", length))
        conv.problems += 1
        conv.missing += length
        if not self.synced and self.skip_from is not None:
            self._skipped_until(self.base + len(self.buf), "before a gap, without finding a frame start")
        self.buf = bytearray()
        self.pos = 0
        self.base = offset + length
        self.segs.clear()
        self.synced = False
        self.skip_from = self.base

    def end(self, offset: int, ts: float) -> None:
        pending = len(self.buf) - self.pos
        if pending:
            start = self.base + self.pos
            if self.synced:
                need = "the 8-byte prefix"
                if pending >= 8:
                    total, _w = PREFIX.unpack_from(self.buf, self.pos)
                    need = f"{4 + total:,} bytes"
                self._problem(start, "truncated",
                              f"{self.conv.describe(self.direction)}: the stream ends inside the frame at "
                              f"offset {start:,}: {pending:,} of {need}", pending)
            else:
                self._skipped_until(self.base + len(self.buf), "without finding a frame start")
        elif not self.synced:
            self._skipped_until(self.base + len(self.buf), "without finding a frame start")
        self.buf = bytearray()
        self.pos = 0
        self.segs.clear()


class HaHalf(_Half):
    """One direction of an HA connection, decoded with a :mod:`wire.ha` stream decoder."""

    __slots__ = ("decoder", "variant", "start")

    def __init__(self, sink: FrameSink, conv: Conversation, direction: int, protocol: Any, *,
                 start: int = 0) -> None:
        from ..ha import HADirection, ha_stream_decoder

        super().__init__(sink, conv, direction, synced=True)
        ha_dir = HADirection.SLAVE_TO_MASTER if direction == 0 else HADirection.MASTER_TO_SLAVE
        self.decoder = ha_stream_decoder(protocol, ha_dir)
        self.variant = str(protocol)
        #: stream offset of the decoder's first byte
        self.start = start

    def data(self, offset: int, data: bytes, ts: float, record: int) -> None:
        if not self.synced:
            return
        self.segs.append((offset, ts, record))
        dec = self.decoder
        dec.feed(data)
        conv = self.conv
        while True:
            try:
                frame = dec.next_frame()
            except DecodeError as err:
                at = self.start + (err.offset or 0)
                err.offset = at
                self._problem(at, "decode", f"{conv.describe(self.direction)}: {err}", 0, err)
                self.synced = False
                self.skip_from = self.start + dec.stream_offset
                return
            if frame is None:
                return
            offset = self.start + frame.offset
            ts, record = self._when(offset)
            ts_end = self._when_end(offset + frame.size - 1)
            conv.frames[self.direction] += 1
            self.sink.ha_frame(self.direction, ts, ts_end, offset, frame.index, frame.size, record,
                               frame.message, self.variant)

    def gap(self, offset: int, length: int, ts: float, record: int) -> None:
        conv = self.conv
        pending = self.decoder.buffered if self.synced else 0
        cut = f"; the frame at offset {offset - pending:,} is lost" if pending else ""
        self.sink.problem(ProblemRow(ts, conv, self.direction, offset, record, "gap",
                                     f"{conv.describe(self.direction)}: {length:,} bytes missing at offset "
                                     f"{offset:,}{cut}; HA frames carry no marker to resynchronise on",
                                     length))
        conv.problems += 1
        conv.missing += length
        if self.synced:
            self.synced = False
            self.skip_from = offset + length
        self.segs.clear()

    def end(self, offset: int, ts: float) -> None:
        if self.synced:
            pending = self.decoder.buffered
            if pending:
                start = self.start + self.decoder.stream_offset
                self._problem(start, "truncated",
                              f"{self.conv.describe(self.direction)}: the stream ends {pending:,} bytes into "
                              f"the HA frame at offset {start:,}", pending)
        elif self.skip_from is not None and offset > self.skip_from:
            n = offset - self.skip_from
            self._problem(self.skip_from, "skipped",
                          f"{self.conv.describe(self.direction)}: {n:,} HA bytes from offset "
                          f"{self.skip_from:,} not decoded after the error", n)
        self.segs.clear()

