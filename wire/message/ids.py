# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Message ids: the offset message id and the client's UNIQ_KEY id.

**Offset message id** (``MessageDecoder.createMessageId`` / ``decodeMessageId``; the ``msgId`` of
a send response and of ``MessageExt``): the store host's address (4 or 16 bytes), its port as
int32 and the record's commit-log offset as int64, in upper-case hex (``UtilAll.bytes2string``):
32 characters for IPv4, 56 for IPv6. Java tells the two apart by the length alone.

**UNIQ_KEY** (``MessageClientIDSetter``; the id users see): the client's IP (4 or 16 bytes),
int16 pid, int32 hash code of the class loader, int32 milliseconds since the start of the current
month in the client's local time zone, int16 counter; upper-case hex, 32 or 56 characters. The
time field is written as a Java int, so after about 24.8 days into a month it shows as negative,
and ``getNearlyTimeFromID`` reads it back unsigned against a reference time. Ids from other
clients (the C++ client, for one) use other layouts of the same length and do not decode
meaningfully with this one.
"""

from __future__ import annotations

import os
import random
import re
import socket
import struct
import threading
import time
from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import NamedTuple

from ..errors import DecodeError, EncodeError

__all__ = [
    "OffsetMsgId",
    "UniqId",
    "UniqIdGenerator",
    "create_offset_msg_id",
    "create_uniq_id",
    "decode_offset_msg_id",
    "decode_uniq_id",
    "month_start_ms",
]

_HEX = re.compile(r"[0-9A-Fa-f]*")
_OFFSET_TAIL = struct.Struct(">iq")
_UNIQ_TAIL = struct.Struct(">HiIH")


def _address(host: str) -> bytes:
    try:
        if ":" in host:
            return socket.inet_pton(socket.AF_INET6, host)
        return socket.inet_pton(socket.AF_INET, host)
    except (OSError, ValueError, TypeError):
        raise EncodeError(f"{host!r} is not an IPv4 or IPv6 address literal", field="host") from None


def _host(raw: bytes) -> str:
    return socket.inet_ntoa(raw) if len(raw) == 4 else socket.inet_ntop(socket.AF_INET6, raw)


def _unhex(s: str, lengths: tuple[int, int], what: str) -> bytes:
    if not isinstance(s, str):
        raise DecodeError(f"{what} must be a str", offset=0, field=what, expected="hex text",
                          found=type(s).__name__)
    if len(s) not in lengths:
        raise DecodeError(f"{what} has {len(s)} characters", offset=0, field=what,
                          expected=f"{lengths[0]} (IPv4) or {lengths[1]} (IPv6)", found=len(s))
    m = _HEX.match(s)
    end = m.end() if m else 0
    if end != len(s):
        raise DecodeError(f"{what} is not hex", offset=end, field=what, expected="0-9A-F",
                          found=s[end])
    return bytes.fromhex(s)


class OffsetMsgId(NamedTuple):
    """A decoded offset message id: the store host and the record's commit-log offset."""

    host: str
    port: int
    offset: int


def create_offset_msg_id(host: str, port: int, commit_offset: int) -> str:
    """``MessageDecoder.createMessageId``: address + int32 port + int64 offset, upper-case hex."""
    try:
        tail = _OFFSET_TAIL.pack(port, commit_offset)
    except struct.error:
        raise EncodeError(f"port {port} or offset {commit_offset} out of range", field="msgId") from None
    return (_address(host) + tail).hex().upper()


def decode_offset_msg_id(msg_id: str) -> OffsetMsgId:
    """``MessageDecoder.decodeMessageId``: 32 hex characters for IPv4, 56 for IPv6."""
    raw = _unhex(msg_id, (32, 56), "msgId")
    alen = 4 if len(raw) == 16 else 16
    port, offset = _OFFSET_TAIL.unpack_from(raw, alen)
    return OffsetMsgId(_host(raw[:alen]), port, offset)


def month_start_ms(now_ms: int, tz: tzinfo | None = None, months: int = 0) -> int:
    """Start of the month holding ``now_ms`` (shifted by ``months``), in ``tz`` (``None``: the
    local zone), as epoch milliseconds: what ``MessageClientIDSetter`` computes with ``Calendar``."""
    dt = datetime.fromtimestamp(now_ms // 1000, tz)
    y, m = dt.year, dt.month + months
    y, m = y + (m - 1) // 12, (m - 1) % 12 + 1
    start = dt.replace(year=y, month=m, day=1, hour=0, minute=0, second=0, microsecond=0)
    if tz is None:
        start = start.astimezone()
    return int(start.timestamp()) * 1000


class UniqId(NamedTuple):
    """A decoded UNIQ_KEY."""

    ip: str
    pid: int
    class_loader_hash: int
    #: milliseconds since the start of the client's month, read unsigned
    time_offset: int
    counter: int

    def timestamp(self, now_ms: int, tz: tzinfo | None = None) -> int:
        """When the id was made, as ``getNearlyTimeFromID`` recovers it relative to ``now_ms``: in
        the month of ``now_ms`` unless that lands at or after ``now_ms``, else the month before."""
        start = month_start_ms(now_ms, tz)
        if start + self.time_offset >= now_ms:
            start = month_start_ms(now_ms, tz, -1)
        return start + self.time_offset


def create_uniq_id(ip: str, pid: int, class_loader_hash: int, time_offset: int, counter: int) -> str:
    """Lay out a UNIQ_KEY. ``pid`` and ``counter`` keep their low 16 bits and ``time_offset`` its
    low 32, as Java's ``(short)`` and ``(int)`` casts do; ``class_loader_hash`` is an int32."""
    try:
        tail = _UNIQ_TAIL.pack(pid & 0xFFFF, class_loader_hash, time_offset & 0xFFFFFFFF,
                               counter & 0xFFFF)
    except struct.error:
        raise EncodeError(f"class loader hash {class_loader_hash} is not an int32",
                          field="UNIQ_KEY") from None
    return (_address(ip) + tail).hex().upper()


def decode_uniq_id(uniq_id: str) -> UniqId:
    """Split a UNIQ_KEY into its fields (``getIPStrFromID``, ``getPidFromID``, the time and counter)."""
    raw = _unhex(uniq_id, (32, 56), "UNIQ_KEY")
    alen = 4 if len(raw) == 16 else 16
    pid, loader, span, counter = _UNIQ_TAIL.unpack_from(raw, alen)
    return UniqId(_host(raw[:alen]), pid, loader, span, counter)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class UniqIdGenerator:
    """Makes UNIQ_KEYs as one Java client process does (``MessageClientIDSetter.createUniqID``).

    ``ip`` defaults to Java's fallback when it finds no address (``createFakeIP``: the low four
    bytes of the current time in ms); ``pid`` to this process; ``class_loader_hash`` to a random
    int32, as an identity hash code is; ``tz`` to the local zone. ``clock`` returns epoch ms.
    Thread-safe; consecutive ids differ by one in the counter (the last four hex characters).
    """

    def __init__(self, ip: str | None = None, pid: int | None = None,
                 class_loader_hash: int | None = None, tz: tzinfo | None = None,
                 clock: Callable[[], int] | None = None, counter: int = 0) -> None:
        self._clock: Callable[[], int] = clock if clock is not None else _now_ms
        now = int(self._clock())
        self.ip = ip if ip is not None else socket.inet_ntoa(struct.pack(">Q", now)[4:])
        _address(self.ip)
        self.pid = (os.getpid() if pid is None else pid) & 0xFFFF
        self.class_loader_hash = (random.getrandbits(32) - 2**31 if class_loader_hash is None
                                  else class_loader_hash)
        self.tz = tz
        self._lock = threading.Lock()
        self._counter = counter
        self._set_start(now)

    def _set_start(self, now: int) -> None:
        self._start = month_start_ms(now, self.tz)
        self._next_start = month_start_ms(now, self.tz, 1)

    def next_id(self, now_ms: int | None = None) -> str:
        """A new UNIQ_KEY for the time ``now_ms`` (default: the clock)."""
        with self._lock:
            current = int(self._clock()) if now_ms is None else now_ms
            if current >= self._next_start:
                self._set_start(current)
            diff = (current - self._start) & 0xFFFFFFFF
            if diff >= 0x80000000:
                diff -= 0x100000000
            if -1_000_000 < diff < 0:
                diff = 0  # mirrors createUniqID: a small step back (NTP) counts as the month start
            counter = self._counter
            self._counter += 1
        return create_uniq_id(self.ip, self.pid, self.class_loader_hash, diff, counter)
