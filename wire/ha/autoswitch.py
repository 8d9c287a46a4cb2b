# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Sans-IO state of the 5.x AutoSwitch HA protocol: the epoch cache and both ends of a connection.

Theory of operation
-------------------
:class:`EpochCache` is ``EpochFileCache`` without the file: entries keyed by epoch, each ending
where the next starts and the last one at ``LONG_MAX`` (or at an end its owner sets). Appends must
grow both the epoch and the start offset; truncation by offset or epoch drops whole entries. The
caller persists :meth:`EpochCache.entries` with :func:`wire.ha.encode_epoch_file` after each change
(:attr:`EpochCache.version` moves on every change).

Slave side (:class:`AutoSwitchSlaveSession`, ``AutoSwitchHAClient``):

1. :meth:`~AutoSwitchSlaveSession.connected` gives the HANDSHAKE (the slave's address in 5.0.0 and
   5.1.0, its broker id from 5.1.1).
2. :meth:`~AutoSwitchSlaveSession.receive_data` cuts the master's bytes into frames. The master's
   handshake reply comes back as a :class:`TruncateTo`: the offset where the local log agrees with
   the master's (``doTruncate``: nothing for an empty epoch cache, else the consistent point). The
   caller truncates its CommitLog *and makes the cut durable* to that point, then calls
   :meth:`~AutoSwitchSlaveSession.truncated`, which truncates the cache and enters TRANSFER.
   A point of -1 means the logs share nothing: the caller closes the connection (an empty local
   log is the exception: it starts at 0 and drops its epochs, where Java retries forever).
3. Each TRANSFER frame comes back as an :class:`EpochTransfer`; :meth:`~AutoSwitchSlaveSession.accept`
   checks it starts at the slave's end (unless the slave is empty), appends a new epoch to the
   cache when the frame's epoch changes, and returns the confirm offset the slave may expose
   (``min(master confirm, local end)`` after the caller appended the data).
4. :meth:`~AutoSwitchSlaveSession.report` acks a grown end; a 12-byte ack of the last reported offset
   goes out every ``haSendHeartbeatInterval`` (:meth:`~AutoSwitchSlaveSession.heartbeat_due`).
   As in Java, the first ack after the handshake is that heartbeat: the master learns where the
   slave stands from it.

Master side (:class:`AutoSwitchMasterSession`, ``AutoSwitchHAConnection``):

1. :meth:`~AutoSwitchMasterSession.receive_data` reads the slave's HANDSHAKE (its address or id, its
   flags) and TRANSFER acks. The first ack is the request: where to start sending. An ack beyond
   what this connection has sent is refused (:class:`HAProtocolError`; Java 5.x takes any value,
   apache/rocketmq#3015).
2. :meth:`~AutoSwitchMasterSession.handshake_reply` encodes the reply (max offset, last epoch, all
   entries) in the layout of the protocol version.
3. :meth:`~AutoSwitchMasterSession.start` fixes where the transfer starts (the request; for 0, the
   min offset or the last file with ``isSyncFromLastFile``) and which epoch that is.
4. :meth:`~AutoSwitchMasterSession.next_header` cuts the next frame: at most the batch size and the
   bytes available, never across the end of the current epoch (the frame stops there and the
   next one carries the next epoch). :meth:`~AutoSwitchMasterSession.heartbeat` is the header with
   no data, due after ``haSendHeartbeatInterval`` without a write.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import DecodeError
from .epoch import DEFAULT_COMMITLOG_FILE_SIZE, LONG_MAX, autoswitch_transfer_start_offset
from .frames import (
    EPOCH_TRANSFER_HEADER_SIZE,
    EpochEntry,
    EpochTransfer,
    HAConnectionState,
    HandshakeReply,
    HAProtocol,
    SlaveHandshake,
    TransferAck,
    encode_handshake_reply,
    encode_slave_handshake,
)
from .session import (
    DEFAULT_HEARTBEAT_INTERVAL_MS,
    DEFAULT_HOUSEKEEPING_INTERVAL_MS,
    DEFAULT_TRANSFER_BATCH_SIZE,
    HAProtocolError,
)
from .stream import AutoSwitchMasterStream, AutoSwitchSlaveStream

__all__ = [
    "AutoSwitchMasterSession",
    "AutoSwitchSlaveSession",
    "EpochCache",
    "EpochRange",
    "TruncateTo",
    "pack_epoch_transfer_header",
    "pack_transfer_ack",
]

_HEADER = struct.Struct(">iiqiqq")
_ACK = struct.Struct(">iq")
_TRANSFER = int(HAConnectionState.TRANSFER)


def pack_epoch_transfer_header(phy_offset: int, body_size: int, epoch: int, epoch_start: int,
                               confirm_offset: int) -> bytes:
    """The 36-byte TRANSFER header (the hot path's twin of :func:`wire.ha.encode_epoch_transfer_header`)."""
    return _HEADER.pack(_TRANSFER, body_size, phy_offset, epoch, epoch_start, confirm_offset)


def pack_transfer_ack(max_offset: int) -> bytes:
    """The slave's 12-byte TRANSFER ack."""
    return _ACK.pack(_TRANSFER, max_offset)


# ------------------------------------------------------------------------------------ epoch cache

@dataclass(frozen=True, slots=True)
class EpochRange:
    """One epoch with its end: ``[start_offset, end_offset)``."""

    epoch: int
    start_offset: int
    end_offset: int

    @property
    def entry(self) -> EpochEntry:
        return EpochEntry(self.epoch, self.start_offset)


class EpochCache:
    """``EpochFileCache`` in memory (see the module notes)."""

    def __init__(self, entries: Iterable[EpochEntry] = ()) -> None:
        self._map: dict[int, list[int]] = {}
        #: moves on every change: the caller rewrites the epoch file when it did
        self.version = 0
        self.reset(entries)

    def reset(self, entries: Iterable[EpochEntry]) -> None:
        """``initEntries``: a repeated epoch keeps the later entry; each ends where the next in
        the list starts."""
        self._map.clear()
        prev: list[int] | None = None
        for e in entries:
            cur = [e.start_offset, LONG_MAX]
            self._map[e.epoch] = cur
            if prev is not None:
                prev[1] = e.start_offset
            prev = cur
        self._map = dict(sorted(self._map.items()))
        self.version += 1

    def __len__(self) -> int:
        return len(self._map)

    def __repr__(self) -> str:
        return f"EpochCache({self.ranges()!r})"

    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(EpochEntry(k, v[0]) for k, v in self._map.items())

    def ranges(self) -> tuple[EpochRange, ...]:
        return tuple(EpochRange(k, v[0], v[1]) for k, v in self._map.items())

    def get(self, epoch: int) -> EpochRange | None:
        v = self._map.get(epoch)
        return EpochRange(epoch, v[0], v[1]) if v is not None else None

    def first(self) -> EpochRange | None:
        for k, v in self._map.items():
            return EpochRange(k, v[0], v[1])
        return None

    def last(self) -> EpochRange | None:
        if not self._map:
            return None
        k = next(reversed(self._map))
        v = self._map[k]
        return EpochRange(k, v[0], v[1])

    @property
    def last_epoch(self) -> int:
        """The highest epoch, -1 when empty (``lastEpoch``)."""
        return next(reversed(self._map)) if self._map else -1

    def append(self, epoch: int, start_offset: int) -> bool:
        """``appendEntry``: refused (False) unless both the epoch and the start offset grow."""
        if self._map:
            k = next(reversed(self._map))
            last = self._map[k]
            if k >= epoch or last[0] >= start_offset:
                return False
            last[1] = start_offset
        self._map[epoch] = [start_offset, LONG_MAX]
        self.version += 1
        return True

    def set_last_end(self, end_offset: int) -> None:
        """``setLastEpochEntryEndOffset`` (ignored below the last entry's start)."""
        if self._map:
            last = self._map[next(reversed(self._map))]
            if last[0] <= end_offset:
                last[1] = end_offset

    def find_by_offset(self, offset: int) -> EpochRange | None:
        """``findEpochEntryByOffset``: the epoch whose ``[start, end)`` holds ``offset``."""
        for k, v in self._map.items():
            if v[0] <= offset < v[1]:
                return EpochRange(k, v[0], v[1])
        return None

    def next_after(self, epoch: int) -> EpochRange | None:
        """``nextEntry``: the first epoch above ``epoch``."""
        for k, v in self._map.items():
            if k > epoch:
                return EpochRange(k, v[0], v[1])
        return None

    def consistent_point(self, other: EpochCache) -> int:
        """``findConsistentPoint``: from this cache's highest epoch down, the first one ``other``
        has with the same start gives ``min`` of both ends; -1 when there is none."""
        for k in reversed(self._map):
            mine = self._map[k]
            theirs = other._map.get(k)
            if theirs is not None and theirs[0] == mine[0]:
                return min(mine[1], theirs[1])
        return -1

    def _drop(self, doomed: list[int], *, reopen: bool) -> None:
        for k in doomed:
            del self._map[k]
        if reopen and self._map:
            self._map[next(reversed(self._map))][1] = LONG_MAX
        self.version += 1

    def truncate_suffix_by_offset(self, offset: int) -> None:
        """``truncateSuffixByOffset``: drop the epochs starting at or after ``offset``; the last
        one left is open again."""
        self._drop([k for k, v in self._map.items() if v[0] >= offset], reopen=True)

    def truncate_suffix_by_epoch(self, epoch: int) -> None:
        """``truncateSuffixByEpoch``: drop ``epoch`` and every later one."""
        self._drop([k for k in self._map if k >= epoch], reopen=True)

    def truncate_prefix_by_offset(self, offset: int) -> None:
        """``truncatePrefixByOffset``: drop the epochs that end at or before ``offset`` (the
        CommitLog files that held them were deleted)."""
        self._drop([k for k, v in self._map.items() if v[1] <= offset], reopen=False)


def consistent_point(local: Sequence[EpochEntry], local_max_offset: int,
                     master: Sequence[EpochEntry], master_max_offset: int) -> int:
    """What ``doTruncate`` computes: both caches with their last epoch ending at their side's max
    offset, then :meth:`EpochCache.consistent_point`."""
    mine, theirs = EpochCache(local), EpochCache(master)
    mine.set_last_end(local_max_offset)
    theirs.set_last_end(master_max_offset)
    return mine.consistent_point(theirs)


# ------------------------------------------------------------------------------------ slave side

@dataclass(frozen=True, slots=True)
class TruncateTo:
    """The master's handshake reply, read: cut the local log to ``offset`` (-1: impossible)."""

    offset: int
    reply: HandshakeReply
    #: the local log was empty of epochs: nothing to cut, the slave starts at 0
    fresh: bool = False


class AutoSwitchSlaveSession:
    """One AutoSwitch connection, slave end (see the module notes)."""

    def __init__(self, protocol: HAProtocol = HAProtocol.AUTOSWITCH_5_0, *, address: str | None = None,
                 broker_id: int | None = None, sync_from_last_file: bool = False,
                 async_learner: bool = False, heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
                 housekeeping_interval_ms: int = DEFAULT_HOUSEKEEPING_INTERVAL_MS, now_ms: int = 0) -> None:
        if not protocol.is_autoswitch:
            raise ValueError(f"{protocol} is not an AutoSwitch protocol")
        self.protocol = protocol
        self.address = address
        self.broker_id = broker_id
        self.sync_from_last_file = sync_from_last_file
        self.async_learner = async_learner
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.housekeeping_interval_ms = housekeeping_interval_ms
        self.state = HAConnectionState.READY
        self.reported = 0
        self.received_epoch = -1
        self.confirm_offset = -1
        self.last_read_ms = now_ms
        self.last_write_ms = now_ms
        self._stream = AutoSwitchMasterStream(protocol)

    def handshake(self) -> SlaveHandshake:
        if self.protocol is HAProtocol.AUTOSWITCH_5_1_1:
            return SlaveHandshake(self.sync_from_last_file, self.async_learner,
                                  broker_id=self.broker_id if self.broker_id is not None else -1)
        return SlaveHandshake(self.sync_from_last_file, self.async_learner, address=self.address or "")

    def connected(self, local_max_offset: int, now_ms: int) -> bytes:
        """A new connection: fresh state, and the HANDSHAKE to send."""
        self._stream = AutoSwitchMasterStream(self.protocol)
        self.state = HAConnectionState.HANDSHAKE
        self.reported = local_max_offset
        self.received_epoch = -1
        self.last_read_ms = now_ms
        self.last_write_ms = now_ms
        return encode_slave_handshake(self.handshake())

    def receive_data(self, data: bytes | bytearray | memoryview, cache: EpochCache,
                     local_max_offset: int, now_ms: int) -> list[TruncateTo | EpochTransfer]:
        """The master's bytes, as frames: a :class:`TruncateTo` for the handshake reply, the
        transfers after it. The reply is the last item of its call: the frames behind it stay
        buffered until :meth:`truncated`, then come out of the next call (``data`` may be empty).
        A frame in a state other than this end's is Java's "state not matched":
        :class:`HAProtocolError` (the caller closes)."""
        if data:
            self.last_read_ms = now_ms
        self._stream.feed(data)
        out: list[TruncateTo | EpochTransfer] = []
        while (frame := self._stream.next_frame()) is not None:
            msg = frame.message
            if isinstance(msg, HandshakeReply):
                if self.state is not HAConnectionState.HANDSHAKE:
                    raise HAProtocolError(f"a handshake reply in state {self.state.name}",
                                          offset=frame.offset, field="state")
                if not len(cache):
                    out.append(TruncateTo(0, msg, fresh=True))
                else:
                    point = consistent_point(cache.entries(), local_max_offset, msg.entries,
                                             msg.max_phy_offset)
                    if point < 0 and local_max_offset == 0:
                        # better than Java (whose slave retries this forever): no common epoch,
                        # but this log is empty, so nothing can be lost; its epochs go
                        point = 0
                    out.append(TruncateTo(point, msg))
                break  # what follows waits in the buffer until the caller has truncated
            elif isinstance(msg, EpochTransfer):
                if self.state is not HAConnectionState.TRANSFER:
                    raise HAProtocolError(f"a transfer in state {self.state.name}",
                                          offset=frame.offset, field="state")
                out.append(msg)
        return out

    def truncated(self, cache: EpochCache, offset: int, fresh: bool) -> None:
        """The log is cut at ``offset`` (and the cut is on disk): truncate the cache, enter TRANSFER."""
        if not fresh:
            cache.truncate_suffix_by_offset(offset)
        self.reported = 0 if fresh else offset
        self.state = HAConnectionState.TRANSFER

    def accept(self, transfer: EpochTransfer, cache: EpochCache, local_max_offset: int) -> None:
        """Check a transfer before its data is appended; record a new epoch (``HAClientReader``)."""
        h = transfer.header
        if local_max_offset != 0 and h.phy_offset != local_max_offset:
            raise HAProtocolError(
                f"master transfer offset {h.phy_offset} is not the slave's end {local_max_offset}",
                offset=8, field="phy_offset", expected=local_max_offset, found=h.phy_offset)
        if transfer.data and not 0 <= h.phy_offset <= LONG_MAX - len(transfer.data):
            # an empty slave takes any start (as Java's), but not data outside the offsets a log
            # and the slave's int64 acks can hold
            raise HAProtocolError(
                f"master transfer of {len(transfer.data)} bytes at offset {h.phy_offset} does not fit "
                f"a log's offsets (0 to {LONG_MAX})", offset=8, field="phy_offset", found=h.phy_offset)
        if h.epoch != self.received_epoch:
            self.received_epoch = h.epoch
            cache.append(h.epoch, h.epoch_start_offset)

    def appended(self, transfer: EpochTransfer, local_max_offset: int) -> int:
        """After the data went into the log: the confirm offset this slave may expose."""
        self.confirm_offset = min(transfer.header.confirm_offset, local_max_offset)
        return self.confirm_offset

    def report(self, local_max_offset: int, now_ms: int) -> bytes | None:
        """``reportSlaveMaxOffset``: an ack when the log grew past the last report."""
        if self.state is not HAConnectionState.TRANSFER or local_max_offset <= self.reported:
            return None
        self.reported = local_max_offset
        self.last_write_ms = now_ms
        return pack_transfer_ack(local_max_offset)

    def heartbeat_due(self, now_ms: int) -> bool:
        return self.state is HAConnectionState.TRANSFER and \
            now_ms - self.last_write_ms > self.heartbeat_interval_ms

    def heartbeat(self, now_ms: int) -> bytes:
        """The ack of the last reported offset (``isTimeToReportOffset``)."""
        self.last_write_ms = now_ms
        return pack_transfer_ack(self.reported)

    def expired(self, now_ms: int) -> bool:
        return now_ms - self.last_read_ms > self.housekeeping_interval_ms


# ----------------------------------------------------------------------------------- master side

class AutoSwitchMasterSession:
    """One AutoSwitch connection, master end (see the module notes)."""

    def __init__(self, protocol: HAProtocol = HAProtocol.AUTOSWITCH_5_0, *,
                 mapped_file_size: int = DEFAULT_COMMITLOG_FILE_SIZE,
                 transfer_batch_size: int = DEFAULT_TRANSFER_BATCH_SIZE,
                 heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
                 housekeeping_interval_ms: int = DEFAULT_HOUSEKEEPING_INTERVAL_MS, now_ms: int = 0) -> None:
        if not protocol.is_autoswitch:
            raise ValueError(f"{protocol} is not an AutoSwitch protocol")
        self.protocol = protocol
        self.mapped_file_size = mapped_file_size
        self.transfer_batch_size = transfer_batch_size
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.housekeeping_interval_ms = housekeeping_interval_ms
        self.state = HAConnectionState.HANDSHAKE
        #: from the handshake
        self.slave_address: str | None = None
        self.slave_id: int | None = None
        self.sync_from_last_file = False
        self.async_learner = False
        self.handshakes = 0
        #: the first ack (-1: none yet), the last ack, and where the next frame starts
        self.request_offset = -1
        self.ack_offset = -1
        self.next_transfer = -1
        self.transfer_start = -1
        #: the epoch being sent and where it ends (-1: the open last epoch)
        self.epoch = -1
        self.epoch_end = -1
        self.last_read_ms = now_ms
        self.last_write_ms = now_ms
        self._stream = AutoSwitchSlaveStream(protocol)

    @property
    def slave(self) -> str:
        """The slave's name in the SyncStateSet: its address (5.0.0/5.1.0) or id."""
        if self.slave_address is not None:
            return self.slave_address
        return str(self.slave_id)

    @property
    def requested(self) -> bool:
        return self.request_offset >= 0

    @property
    def started(self) -> bool:
        return self.next_transfer >= 0

    def receive_data(self, data: bytes | bytearray | memoryview, *, now_ms: int,
                     master_max_offset: int) -> list[SlaveHandshake | TransferAck]:
        """The slave's bytes, as frames; acks are checked against what was sent."""
        if data:
            self.last_read_ms = now_ms
        try:
            self._stream.feed(data)
            frames = []
            while (f := self._stream.next_frame()) is not None:
                frames.append(f)
        except DecodeError as exc:
            raise HAProtocolError(str(exc), offset=exc.offset, field=exc.field) from None
        out: list[SlaveHandshake | TransferAck] = []
        for frame in frames:
            msg = frame.message
            if isinstance(msg, SlaveHandshake):
                self.slave_address = msg.address
                self.slave_id = msg.broker_id
                self.sync_from_last_file = msg.sync_from_last_file
                self.async_learner = msg.async_learner
                self.state = HAConnectionState.HANDSHAKE
                self.handshakes += 1
                out.append(msg)
            elif isinstance(msg, TransferAck):
                self.state = HAConnectionState.TRANSFER
                offset = msg.max_offset
                if self.request_offset < 0:
                    if offset > master_max_offset or offset < 0:
                        raise HAProtocolError(
                            f"slave request offset {offset} is beyond this master's end {master_max_offset}",
                            offset=frame.offset + 4, field="max_offset", expected=master_max_offset,
                            found=offset)
                    self.request_offset = offset
                elif offset > self.ack_limit:
                    raise HAProtocolError(
                        f"slave acked {offset}, but this connection sent up to {self.ack_limit}",
                        offset=frame.offset + 4, field="max_offset", expected=self.ack_limit, found=offset)
                self.ack_offset = offset
                out.append(msg)
        return out

    @property
    def ack_limit(self) -> int:
        """The highest ack that can be true: what was sent, or the request before anything was."""
        return max(self.next_transfer, self.request_offset)

    def handshake_reply(self, cache: EpochCache, master_max_offset: int) -> bytes:
        reply = HandshakeReply(master_max_offset, cache.last_epoch, cache.entries())
        return encode_handshake_reply(reply, self.protocol)

    def start(self, cache: EpochCache, *, master_min_offset: int, master_max_offset: int) -> int:
        """Fix where the transfer starts; -1 while there is nothing (empty store) or no epoch holds
        it (the caller heartbeats and tries again)."""
        start = autoswitch_transfer_start_offset(
            self.request_offset, master_min_offset=master_min_offset, master_max_offset=master_max_offset,
            sync_from_last_file=self.sync_from_last_file, mapped_file_size=self.mapped_file_size)
        if start < 0:
            return -1
        found = cache.find_by_offset(start)
        if found is None:
            return -1
        self.next_transfer = self.transfer_start = start
        self._enter(found, cache)
        return start

    def _enter(self, r: EpochRange, cache: EpochCache) -> None:
        self.epoch = r.epoch
        self.epoch_end = -1 if r.epoch == cache.last_epoch else r.end_offset

    def next_header(self, available: int, cache: EpochCache, confirm_offset: int) -> tuple[bytes, int] | None:
        """The header of the next frame and its data size, at most ``available`` and the batch size,
        cut at the end of the current epoch; None while the next epoch is not known yet."""
        size = min(available, self.transfer_batch_size)
        if size <= 0:
            return None
        if self.epoch_end != -1 and self.next_transfer + size > self.epoch_end:
            nxt = cache.next_after(self.epoch)
            if nxt is None:
                return None
            size = self.epoch_end - self.next_transfer
            # mirrors Java: the frame that reaches the end of an epoch already carries the next
            # epoch's number (changeTransferEpochToNext before the header is built)
            self._enter(nxt, cache)
        offset = self.next_transfer
        self.next_transfer += size
        return self._header(offset, size, cache, confirm_offset), size

    def heartbeat_due(self, now_ms: int) -> bool:
        return now_ms - self.last_write_ms > self.heartbeat_interval_ms

    def heartbeat(self, cache: EpochCache, confirm_offset: int) -> bytes:
        return self._header(self.next_transfer, 0, cache, confirm_offset)

    def _header(self, offset: int, size: int, cache: EpochCache, confirm_offset: int) -> bytes:
        r = cache.get(self.epoch)
        if r is None:
            r = cache.first()  # a heartbeat before any epoch is known uses the first entry
        if r is None:
            return pack_epoch_transfer_header(offset, size, -1, -1, confirm_offset)
        return pack_epoch_transfer_header(offset, size, r.epoch, r.start_offset, confirm_offset)

    def wrote(self, now_ms: int) -> None:
        self.last_write_ms = now_ms

    def expired(self, now_ms: int) -> bool:
        return now_ms - self.last_read_ms > self.housekeeping_interval_ms


assert EPOCH_TRANSFER_HEADER_SIZE == _HEADER.size
