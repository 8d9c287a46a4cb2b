# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Sans-IO state of one 4.x HA connection, at either end (``HAConnection`` and ``HAClient``).

Theory of operation
-------------------
A slave connects to the master's HA port. Neither side frames anything beyond the fields below;
both are driven by bytes in, bytes out and the clock, which the caller passes in (``now_ms``), so
that the same machines serve the reference broker, the conformance suite's fake peers and tests.

Master side (:class:`V4MasterSession`, one per slave connection):

* :meth:`~V4MasterSession.receive_data` takes the slave's bytes: 8-byte offset reports. The first
  one is the slave's *request* (where its CommitLog ends); every later one is an *ack*. Each is
  checked before it counts: a request beyond the master's end, or an ack beyond what this
  connection has sent, is a lie (:class:`HAProtocolError`; the caller closes the connection and
  the lie never reaches a SYNC_MASTER waiter). Java 4.9.x checks acks against its CommitLog end
  only, and 5.x not at all (apache/rocketmq#3015): any TCP client could ack data it never got.
* :meth:`~V4MasterSession.start` fixes where the transfer starts, once the request is known:
  a request of 0 (an empty slave) starts at the master's last CommitLog file, any other exactly at
  the request (``WriteSocketService``; :func:`wire.ha.v4_transfer_start_offset`).
* :meth:`~V4MasterSession.next_header` cuts the next chunk: at most ``haTransferBatchSize`` of
  what the caller found available at :attr:`~V4MasterSession.next_transfer` (the caller takes it from
  one CommitLog file), and moves the cursor. :meth:`~V4MasterSession.heartbeat` is the header-only
  frame, due when nothing was written for ``haSendHeartbeatInterval``; a connection that read
  nothing for ``haHousekeepingInterval`` has :meth:`~V4MasterSession.expired`.

Slave side (:class:`V4SlaveSession`):

* :meth:`~V4SlaveSession.connected` resets the connection's state and gives the first report (the
  slave's max offset, at once: a Java 4.9.x slave waits ``haSendHeartbeatInterval`` first).
* The caller receives into :meth:`~V4SlaveSession.recv_buffer` (a 4 MiB buffer, as the Java
  slave's) and hands the count to :meth:`~V4SlaveSession.received`, which returns the whole
  transfers as ``(offset, memoryview)`` pairs over that buffer, without copying the data.
  :meth:`~V4SlaveSession.check` is ``dispatchReadRequest``'s rule: a transfer that does not start
  at the slave's end (unless the slave is empty) closes the connection.
* :meth:`~V4SlaveSession.report` answers a grown max offset; :meth:`~V4SlaveSession.heartbeat_due`
  says when to repeat the last report; :meth:`~V4SlaveSession.expired` when the master has been
  silent for ``haHousekeepingInterval`` (5.x ``DefaultHAClient``'s rule; the master heartbeats every
  5 s, so 20 s of silence means it is gone or frozen).

The headers are read and written with ``struct`` on the hot path; the construct layouts of
:mod:`wire.ha.frames` stay the reference (tests compare both on every kind of frame).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import DecodeError
from .epoch import DEFAULT_COMMITLOG_FILE_SIZE, v4_transfer_start_offset
from .frames import TRANSFER_HEADER_SIZE, V4_MAX_BODY_SIZE, TransferHeader, check_body_size

__all__ = [
    "DEFAULT_HEARTBEAT_INTERVAL_MS",
    "DEFAULT_HOUSEKEEPING_INTERVAL_MS",
    "DEFAULT_TRANSFER_BATCH_SIZE",
    "HAProtocolError",
    "REPORT_SIZE",
    "SLAVE_READ_BUFFER_SIZE",
    "V4MasterSession",
    "V4SlaveSession",
    "pack_report",
    "pack_transfer_header",
]

#: ``haSendHeartbeatInterval``
DEFAULT_HEARTBEAT_INTERVAL_MS = 5000
#: ``haHousekeepingInterval``
DEFAULT_HOUSEKEEPING_INTERVAL_MS = 20000
#: ``haTransferBatchSize``
DEFAULT_TRANSFER_BATCH_SIZE = 32768
#: HAClient.READ_MAX_BUFFER_SIZE: a slave reads into 4 MiB and only handles frames that fit whole
SLAVE_READ_BUFFER_SIZE = 4 * 1024 * 1024
#: HAClient.reportOffset: one int64
REPORT_SIZE = 8

_REPORT = struct.Struct(">q")
_HEADER = struct.Struct(">qi")


def pack_report(max_offset: int) -> bytes:
    """The 8-byte slave report (``HAClient.reportSlaveMaxOffset``)."""
    return _REPORT.pack(max_offset)


def pack_transfer_header(phy_offset: int, body_size: int) -> bytes:
    """The 12-byte transfer header (``WriteSocketService.byteBufferHeader``)."""
    return _HEADER.pack(phy_offset, body_size)


class HAProtocolError(DecodeError):
    """Well-formed frames whose content the protocol forbids: an ack of data never sent, a slave
    that claims more than its master holds, a transfer that does not continue the slave's log.
    The Java side closes the connection on each (or should); so does the caller."""


@dataclass(frozen=True, slots=True)
class Report:
    """One accepted slave report."""

    offset: int
    #: the first report of the connection: the slave's request, not an ack of sent data
    request: bool


class V4MasterSession:
    """The master's end of one slave connection (see the module notes)."""

    __slots__ = ("_pending", "_stream_offset", "ack_offset", "bytes_sent", "heartbeat_interval_ms",
                 "housekeeping_interval_ms", "last_read_ms", "last_write_ms", "mapped_file_size",
                 "next_transfer", "reports", "request_offset", "transfer_batch_size", "transfer_start")

    def __init__(self, *, mapped_file_size: int = DEFAULT_COMMITLOG_FILE_SIZE,
                 transfer_batch_size: int = DEFAULT_TRANSFER_BATCH_SIZE,
                 heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
                 housekeeping_interval_ms: int = DEFAULT_HOUSEKEEPING_INTERVAL_MS, now_ms: int = 0) -> None:
        if mapped_file_size <= 0:
            raise ValueError(f"mapped_file_size must be > 0, got {mapped_file_size}")
        if not 0 < transfer_batch_size <= V4_MAX_BODY_SIZE:
            # a Java slave never takes in a frame larger than its 4 MiB read buffer
            raise ValueError(f"transfer_batch_size must be in 1..{V4_MAX_BODY_SIZE}, "
                             f"got {transfer_batch_size}")
        self.mapped_file_size = mapped_file_size
        self.transfer_batch_size = transfer_batch_size
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.housekeeping_interval_ms = housekeeping_interval_ms
        #: ``slaveRequestOffset``: the slave's first report; -1 until it comes
        self.request_offset = -1
        #: ``slaveAckOffset``: the highest accepted report; -1 until the first
        self.ack_offset = -1
        #: ``nextTransferFromWhere``: where the next chunk starts; -1 until :meth:`start`
        self.next_transfer = -1
        #: where the transfer started: this connection's acks vouch for bytes from here on only
        self.transfer_start = -1
        self.last_read_ms = now_ms
        self.last_write_ms = now_ms
        #: reports accepted, and CommitLog bytes sent (headers not counted)
        self.reports = 0
        self.bytes_sent = 0
        self._pending = bytearray()
        self._stream_offset = 0

    # ------------------------------------------------------------------ reading
    @property
    def requested(self) -> bool:
        """Whether the slave has said where its CommitLog ends."""
        return self.request_offset >= 0

    @property
    def ack_limit(self) -> int:
        """The highest offset the slave may truthfully report: what it said it held at first,
        or the end of what this connection has sent it since."""
        return max(self.request_offset, self.next_transfer)

    def receive_data(self, data: bytes | bytearray | memoryview, *, now_ms: int,
                     master_max_offset: int) -> Report | None:
        """Take the slave's bytes; return the last accepted report (None if no whole report came).

        Every whole report is checked in order (a Java master looks only at the last whole one of
        each read, ``pos - pos % 8``): a lie raises :class:`HAProtocolError` before anything of
        it counts.
        """
        if not data:
            return None
        self.last_read_ms = now_ms
        buf = self._pending
        buf += data
        whole = len(buf) - len(buf) % REPORT_SIZE
        last: Report | None = None
        for pos in range(0, whole, REPORT_SIZE):
            (offset,) = _REPORT.unpack_from(buf, pos)
            at = self._stream_offset + pos
            last = self._accept(offset, at, master_max_offset)
        if whole:
            del buf[:whole]
            self._stream_offset += whole
        return last

    def _accept(self, offset: int, at: int, master_max_offset: int) -> Report:
        if offset < 0:
            raise HAProtocolError(f"slave report {offset} is negative", offset=at, field="max_offset",
                                  expected=">= 0", found=offset)
        if self.request_offset < 0:
            if offset > master_max_offset:
                # Java 4.9.x starts sending from there; whatever it later sends at that offset lands
                # misaligned in the slave's log
                raise HAProtocolError(
                    f"the slave's CommitLog ends at {offset}, beyond this master's end {master_max_offset}: "
                    "it holds data this master does not have", offset=at, field="max_offset",
                    expected=f"<= {master_max_offset}", found=offset)
            self.request_offset = offset
            self.ack_offset = offset
            self.reports += 1
            return Report(offset, True)
        limit = self.ack_limit
        if offset > limit:
            # mirrors ReadSocketService's "request offset greater than local commitLog offset" close,
            # made strict: the ack must be covered by what this connection sent
            raise HAProtocolError(f"slave acknowledges offset {offset}, but this connection has only sent "
                                  f"up to {limit}", offset=at, field="max_offset",
                                  expected=f"<= {limit}", found=offset)
        self.ack_offset = max(self.ack_offset, offset)
        self.reports += 1
        return Report(offset, False)

    def expired(self, now_ms: int) -> bool:
        """Nothing read for ``haHousekeepingInterval`` (``ReadSocketService``'s housekeeping)."""
        return now_ms - self.last_read_ms > self.housekeeping_interval_ms

    # ------------------------------------------------------------------ writing
    def start(self, master_max_offset: int) -> int:
        """Where the transfer starts (decided once, after the request came; ``WriteSocketService``)."""
        if self.request_offset < 0:
            raise RuntimeError("the slave has not reported yet")
        if self.next_transfer < 0:
            self.next_transfer = v4_transfer_start_offset(self.request_offset, master_max_offset,
                                                          mapped_file_size=self.mapped_file_size)
            self.transfer_start = self.next_transfer
        return self.next_transfer

    @property
    def started(self) -> bool:
        return self.next_transfer >= 0

    def below_min_offset(self, master_min_offset: int) -> bool:
        """Whether the slave needs bytes the master no longer holds (its files were deleted):
        Java then sends heartbeats forever (apache/rocketmq#3388)."""
        return 0 <= self.next_transfer < master_min_offset

    def next_header(self, available: int) -> TransferHeader:
        """The header of the next chunk, of at most ``haTransferBatchSize`` of the ``available``
        bytes at :attr:`next_transfer` (all in one CommitLog file); moves the cursor past it."""
        if self.next_transfer < 0:
            raise RuntimeError("the transfer has not started")
        if available <= 0:
            raise ValueError(f"nothing to send ({available} bytes available)")
        size = min(available, self.transfer_batch_size)
        header = TransferHeader(self.next_transfer, size)
        self.next_transfer += size
        self.bytes_sent += size
        return header

    def heartbeat_due(self, now_ms: int) -> bool:
        """Nothing written for ``haSendHeartbeatInterval``."""
        return now_ms - self.last_write_ms > self.heartbeat_interval_ms

    def heartbeat(self) -> TransferHeader:
        """The header-only frame: offset ``nextTransferFromWhere``, no data."""
        if self.next_transfer < 0:
            raise RuntimeError("the transfer has not started")
        return TransferHeader(self.next_transfer, 0)

    def wrote(self, now_ms: int) -> None:
        """The caller wrote bytes to the slave (``lastWriteTimestamp``)."""
        self.last_write_ms = now_ms


class V4SlaveSession:
    """The slave's end of its connection to the master (see the module notes)."""

    __slots__ = ("_buf", "_end", "_pos", "_stream_offset", "_view", "bytes_received",
                 "heartbeat_interval_ms", "housekeeping_interval_ms", "last_read_ms", "last_write_ms",
                 "max_body_size", "reported", "transfers")

    def __init__(self, *, heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
                 housekeeping_interval_ms: int = DEFAULT_HOUSEKEEPING_INTERVAL_MS,
                 buffer_size: int = SLAVE_READ_BUFFER_SIZE, now_ms: int = 0) -> None:
        if buffer_size <= TRANSFER_HEADER_SIZE:
            raise ValueError(f"buffer_size must exceed {TRANSFER_HEADER_SIZE}, got {buffer_size}")
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.housekeeping_interval_ms = housekeeping_interval_ms
        #: the largest body that fits the buffer whole
        self.max_body_size = buffer_size - TRANSFER_HEADER_SIZE
        self._buf = bytearray(buffer_size)
        self._view = memoryview(self._buf)
        self._pos = 0  # start of the first frame not handed out
        self._end = 0  # end of the received bytes
        self._stream_offset = 0  # stream offset of _buf[0]
        #: ``currentReportedOffset``
        self.reported = 0
        self.last_read_ms = now_ms
        self.last_write_ms = now_ms
        self.transfers = 0
        self.bytes_received = 0

    def connected(self, local_max_offset: int, now_ms: int) -> bytes:
        """A new connection: forget the old one's bytes; the first report (the slave's end)."""
        self._pos = self._end = self._stream_offset = 0
        self.last_read_ms = now_ms
        self.reported = local_max_offset
        self.last_write_ms = now_ms
        return pack_report(local_max_offset)

    def recv_buffer(self) -> memoryview:
        """Where to receive the next bytes. Moves a partial frame to the front first, so the views
        :meth:`received` returned before are invalid from here on."""
        if self._pos:
            rest = self._end - self._pos
            # a copy first: the two ranges may overlap
            self._buf[:rest] = bytes(self._view[self._pos:self._end])
            self._stream_offset += self._pos
            self._pos, self._end = 0, rest
        return self._view[self._end:]

    def received(self, n: int, now_ms: int) -> list[tuple[int, memoryview]]:
        """``n`` bytes arrived in :meth:`recv_buffer`; the whole transfers among the buffered bytes
        as ``(offset, data)`` (heartbeats have empty data), in order. A body size no slave buffer can
        hold raises :class:`wire.DecodeError` as soon as its header is in."""
        if n <= 0:
            return []
        self._end += n
        self.last_read_ms = now_ms
        out: list[tuple[int, memoryview]] = []
        buf, pos, end = self._buf, self._pos, self._end
        while end - pos >= TRANSFER_HEADER_SIZE:
            offset, size = _HEADER.unpack_from(buf, pos)
            check_body_size(size, self.max_body_size, self._stream_offset + pos + 8,
                            frame_index=self.transfers)
            stop = pos + TRANSFER_HEADER_SIZE + size
            if stop > end:
                break
            out.append((offset, self._view[pos + TRANSFER_HEADER_SIZE:stop]))
            self.transfers += 1
            self.bytes_received += size
            pos = stop
        self._pos = pos
        return out

    def check(self, offset: int, local_max_offset: int) -> None:
        """``dispatchReadRequest``: a transfer must start at the slave's end, unless the slave is empty."""
        if local_max_offset != 0 and local_max_offset != offset:
            raise HAProtocolError(f"the master sends offset {offset}, but this slave's CommitLog ends at "
                                  f"{local_max_offset}", field="phy_offset", expected=local_max_offset,
                                  found=offset, frame_index=self.transfers - 1)

    def report(self, local_max_offset: int, now_ms: int) -> bytes | None:
        """The report to send after appending, if the slave's end grew (``reportSlaveMaxOffsetPlus``)."""
        if local_max_offset > self.reported:
            self.reported = local_max_offset
            self.last_write_ms = now_ms
            return pack_report(local_max_offset)
        return None

    def heartbeat_due(self, now_ms: int) -> bool:
        """Nothing written for ``haSendHeartbeatInterval`` (``isTimeToReportOffset``)."""
        return now_ms - self.last_write_ms > self.heartbeat_interval_ms

    def heartbeat(self, now_ms: int) -> bytes:
        """The last report again."""
        self.last_write_ms = now_ms
        return pack_report(self.reported)

    def expired(self, now_ms: int) -> bool:
        """The master sent nothing for ``haHousekeepingInterval``."""
        return now_ms - self.last_read_ms > self.housekeeping_interval_ms
