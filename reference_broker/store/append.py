# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Put and append: the one way bytes get into the CommitLog.

Theory of operation
-------------------
Everything runs on the broker's event loop except the disk syncs. A put is synchronous up to the
point where its records are in the CommitLog mapping and dispatched: the store checks and measures
the message(s), assigns the queue offset(s) and the store timestamp (never going backwards),
encodes the record(s) with :mod:`wire.message` at their final physical offset, and appends them
(a batch is never split across files). One message and one SEND_BATCH_MESSAGE take this same path:
a single message is a batch of one that skips the checks only a batch has (one topic and queue,
no transaction, no delay, the size of the batch body).

Only then does the put wait, if it must (``CommitLog.asyncPutMessage``):

* in SYNC_FLUSH, for the group commit that covers its end offset (:mod:`.flush`); a message that
  is not ``isWaitStoreMsgOK`` (the sender says so, else its WAIT property is not "true") does not
  wait;
* on a SYNC_MASTER, for the slaves: the replica hook (:attr:`PutService.replica_waiter`, set by HA)
  is awaited alongside the flush, and a non-OK answer wins.

So :meth:`PutService.put` answers with the :class:`~.types.PutResult` itself when nothing is
waited for, and with an awaitable of it only when something is: an ASYNC_FLUSH put costs no
coroutine at all, and a SYNC_FLUSH put one, which waits on the flush's future.

The one append (:meth:`PutService.append`) takes a put's encoded records and a slave's replicated
bytes alike (``appendToCommitLog``): :meth:`.CommitLog.append` writes them at the CommitLog's end,
then they are dispatched (a put hands over the dispatch requests of the records it has just
encoded; replicated bytes are walked by the dispatcher up to the last whole record, fields decoded
from the bytes), the append listeners learn the new end (HA sends it on), and in SYNC_FLUSH the
group commit is woken.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wire.message.delay import delay_time_level

from . import _codec
from ._codec import HostPort, MessageConst
from .dispatch import HELD_TRAN_TYPES, TRAN_MASK, Dispatcher, DispatchRequest, ReplicaWaiter
from .files import Room, StoreFiles
from .flush import Flusher
from .mapped_file import MappedFile
from .stats import StoreStats
from .types import MessageToStore, PutResult, PutStatus, StoreError

__all__ = ["PutService"]

log = logging.getLogger("reference_broker.store")

_BORN_V6 = int(_codec.MessageSysFlag.BORNHOST_V6_FLAG)
_STORE_V6 = int(_codec.MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)
_HOST_BITS = _BORN_V6 | _STORE_V6
_PUT_OK = PutStatus.PUT_OK


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class _Prepared:
    """A checked message: its topic and properties as the UTF-8 bytes the record will hold."""

    msg: MessageToStore
    topic: bytes
    text: bytes
    props: Mapping[str, str]
    sys_flag: int
    size: int
    #: ``isWaitStoreMsgOK``
    wait: bool


def _wait_store_msg_ok(props: Mapping[str, str]) -> bool:
    """``Message.isWaitStoreMsgOK``: absent or ``Boolean.parseBoolean`` true."""
    v = props.get(MessageConst.PROPERTY_WAIT_STORE_MSG_OK)
    return v is None or v.lower() == "true"


def _delayed(props: Mapping[str, str]) -> bool:
    """A DELAY level above 0, or one that is not a number (``getDelayTimeLevel`` would throw)."""
    try:
        return delay_time_level(props) > 0
    except ValueError:
        return True


class PutService(Room):
    """Puts and the one CommitLog append; see the module docstring."""

    def __init__(self, files: StoreFiles, dispatcher: Dispatcher, flusher: Flusher,
                 stats: StoreStats) -> None:
        super().__init__(files)
        config = files.config
        self.dispatcher = dispatcher
        self.flusher = flusher
        self.stats = stats
        #: puts are taken while the store runs (set by the store)
        self.accepting = False
        #: awaited after each put on a SYNC_MASTER (set by the HA service)
        self.replica_waiter: ReplicaWaiter | None = None
        #: the config never changes: what the put path asks on every put is read once
        self._is_slave = config.is_slave
        self._sync_flush = config.sync_flush
        self._sync_master = config.broker_role == "SYNC_MASTER"
        self._max_message_size = config.max_message_size
        self._store_host = HostPort(config.store_host[0], config.store_host[1])
        self._store_v6 = ":" in config.store_host[0]
        #: an offset msgId is the store host's part and then the offset as 16 hex digits
        self._msg_id_prefix = _codec.create_offset_msg_id(*self._store_host, 0)[:-16]
        #: record size without body, topic and properties, by the sysFlag host bits
        self._record_base = {bits: _codec.stored_message_size(0, 0, 0, sys_flag=bits)
                             for bits in (0, _BORN_V6, _STORE_V6, _BORN_V6 | _STORE_V6)}

    # ------------------------------------------------------------------ put
    def put(self, msgs: Sequence[MessageToStore], batch: bool) -> PutResult | Coroutine[Any, Any, PutResult]:
        """Store one message (``batch`` False, ``msgs`` of one) or the messages of one
        SEND_BATCH_MESSAGE; the result, or a coroutine of it when the put waits."""
        begin = time.monotonic()
        result, wait = self._append_messages(msgs, batch)
        if result.status is not _PUT_OK:
            self.stats.record_put_failed()
            return result
        if self._sync_flush or self.replica_waiter is not None:
            end = result.wrote_offset + result.wrote_bytes
            flushed: PutStatus | asyncio.Future[PutStatus] = _PUT_OK
            if self._sync_flush and wait:
                flushed = self.flusher.waiter(end)
            if wait and self._sync_master and self.replica_waiter is not None:
                replicas = self.replica_waiter(result.wrote_offset, end)
                return self._finish(result, _with_replicas(flushed, replicas), begin)
            if isinstance(flushed, asyncio.Future):
                return self._finish(result, flushed, begin)
            result.status = flushed
        self.stats.record_put(result.msg_num, result.wrote_bytes, int((time.monotonic() - begin) * 1000))
        return result

    async def _finish(self, result: PutResult, pending: Awaitable[PutStatus], begin: float) -> PutResult:
        status = await pending
        if status is not _PUT_OK:
            result.status = status
        self.stats.record_put(result.msg_num, result.wrote_bytes, int((time.monotonic() - begin) * 1000))
        return result

    def _prepare(self, msg: MessageToStore) -> _Prepared | PutStatus:
        try:
            topic = msg.topic.encode("utf-8")
            if len(topic) > 0x7F:
                # mirrors checkMessage: v1 records hold the topic length in a signed byte
                return PutStatus.MESSAGE_ILLEGAL
            body_len = len(msg.body)
            if body_len > self._max_message_size:
                return PutStatus.MESSAGE_ILLEGAL
            given = msg.properties
            props: Mapping[str, str]
            if isinstance(given, str):
                text = given
                parsed = msg.parsed_properties
                props = _codec.decode_properties(text) if parsed is None else parsed
            else:
                props = given
                text = _codec.encode_properties(props)
            raw = text.encode("utf-8")
            if len(raw) > _codec.MAX_PROPERTIES_LENGTH:
                return PutStatus.PROPERTIES_SIZE_EXCEEDED
            sys_flag = msg.sys_flag
            if ":" in msg.born_host[0]:
                sys_flag |= _BORN_V6
            if self._store_v6:
                sys_flag |= _STORE_V6
            size = self._record_base[sys_flag & _HOST_BITS] + body_len + len(topic) + len(raw)
        except (ValueError, TypeError, IndexError) as exc:  # not UTF-8-encodable, bad host, ...
            log.warning("message refused: %s", exc)
            return PutStatus.MESSAGE_ILLEGAL
        wait = msg.wait_store_msg_ok
        return _Prepared(msg, topic, raw, props, sys_flag, size,
                         _wait_store_msg_ok(props) if wait is None else wait)

    def _check_batch(self, prepared: list[_Prepared]) -> PutStatus | None:
        """``asyncPutMessages``/``checkMessages``: one topic and queue, no transactions or delay,
        and the batch body within the message size limit."""
        first = prepared[0].msg
        if any(p.msg.topic != first.topic or p.msg.queue_id != first.queue_id for p in prepared):
            return PutStatus.MESSAGE_ILLEGAL
        if any(p.sys_flag & TRAN_MASK for p in prepared):
            return PutStatus.MESSAGE_ILLEGAL
        if any(_delayed(p.props) for p in prepared):
            return PutStatus.MESSAGE_ILLEGAL
        # the batch body's size: each entry is its body and properties plus a fixed head
        body_total = sum(_codec.BATCH_ENTRY_OVERHEAD + len(p.msg.body) + len(p.text) for p in prepared)
        if body_total > self._max_message_size:
            return PutStatus.MESSAGE_ILLEGAL
        return None

    def _reserve(self, total: int) -> MappedFile | PutStatus:
        """The CommitLog file the next ``total`` bytes go to (see :meth:`.CommitLog.reserve`)."""
        if total + _codec.END_FILE_MIN_BLANK_LENGTH > self.commitlog.file_size:
            return PutStatus.MESSAGE_ILLEGAL
        cl = self.commitlog
        d = self.dispatcher
        before = cl.max_offset
        if d.reput_offset < before:
            # a store that was a slave a moment ago: dispatch what it replicated first
            d.reput()
            if d.reput_offset < cl.max_offset:
                return PutStatus.SERVICE_NOT_AVAILABLE
            before = cl.max_offset
        try:
            f = cl.reserve(total)
        except (OSError, StoreError) as exc:
            log.error("cannot create a CommitLog file: %s", exc)
            return PutStatus.CREATE_MAPPED_FILE_FAILED
        if f.file_from_offset > before and d.reput_offset == before:
            d.reput_offset = f.file_from_offset  # past the BLANK that closed the last file
        return f

    def _append_messages(self, msgs: Sequence[MessageToStore], batch: bool) -> tuple[PutResult, bool]:
        """Check, encode, append and dispatch; returns the result and whether the put waits for
        the flush."""
        if not self.accepting or self._is_slave:
            return PutResult(PutStatus.SERVICE_NOT_AVAILABLE), False
        if not msgs:
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        prepared: list[_Prepared] = []
        wait = False
        for m in msgs:
            p = self._prepare(m)
            if isinstance(p, PutStatus):
                return PutResult(p), False
            prepared.append(p)
            if p.wait:
                wait = True
        if batch:
            refused = self._check_batch(prepared)
            if refused is not None:
                return PutResult(refused), False
        n = len(prepared)
        total = prepared[0].size if n == 1 else sum(p.size for p in prepared)
        f = self._reserve(total)
        if isinstance(f, PutStatus):
            return PutResult(f), False
        now = _now_ms()
        last = self.dispatcher.last_store_ts
        ts = now if now >= last else last
        first = prepared[0].msg
        key = (first.topic, first.queue_id)
        next_offset = self.queues.next_offset
        qo_before = next_qo = next_offset.get(key, 0)
        base = phys = f.file_from_offset + f.wrote_position
        store_host = self._store_host
        records: list[bytes] = []
        requests: list[DispatchRequest] = []
        try:
            for p in prepared:
                m = p.msg
                # mirrors doAppend: prepared and rolled-back messages take queue offset 0
                held = (p.sys_flag & TRAN_MASK) in HELD_TRAN_TYPES
                qo = 0 if held else next_qo
                # the store checked and measured every field above: the record is packed as is
                record = _codec.encode_record_fields(
                    p.topic, m.body, p.text, m.queue_id, m.flag, qo, phys, p.sys_flag, m.born_timestamp,
                    m.born_host, ts, store_host, m.reconsume_times, m.prepared_transaction_offset)
                if len(record) != p.size:
                    raise StoreError(f"record of {len(record)} bytes, expected {p.size}")
                records.append(record)
                requests.append((m.topic, m.queue_id, phys, p.size, ts, qo, p.props, p.sys_flag))
                if not held:
                    next_qo += 1
                phys += p.size
        except (ValueError, StoreError) as exc:  # EncodeError is a ValueError
            log.warning("message refused: %s", exc)
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        f.store_timestamp = ts
        self.dispatcher.last_store_ts = ts
        if next_qo != qo_before:
            next_offset[key] = next_qo
        self.append(base, records[0] if n == 1 else b"".join(records), requests)
        prefix = self._msg_id_prefix
        if n == 1:
            msg_id = f"{prefix}{base:016X}"
        else:
            msg_id = ",".join([f"{prefix}{r[2]:016X}" for r in requests])
        return PutResult(PutStatus.PUT_OK, msg_id, requests[0][5], base, total, ts, n), wait

    # ------------------------------------------------------------------ the one append
    def append(self, offset: int, data: bytes | bytearray | memoryview,
               requests: list[DispatchRequest] | None, *, dispatch: bool = True) -> None:
        """Write ``data`` at the CommitLog's end ``offset`` and dispatch it: with the put's own
        ``requests`` (one a record, in order), or, for bytes that came from elsewhere, by walking
        every record that has become whole (unless ``dispatch`` is False: the walk is left to
        :meth:`.Dispatcher.reput`)."""
        self.commitlog.append(offset, data)
        d = self.dispatcher
        if requests is None:
            if dispatch:
                d.reput()
        else:
            one = d.dispatch
            for r in requests:
                one(*r)
            d.reput_offset = offset + len(data)
        if d.append_listeners:
            d.notify_append()
        if self._sync_flush:
            self.flusher.wake()

    def append_replica(self, offset: int, data: bytes | bytearray | memoryview, *,
                       dispatch: bool = True) -> None:
        """See :meth:`.MessageStore.append_replica`."""
        if not data:
            # no bytes (a 4.x master's heartbeat): appendToCommitLog still takes the last file
            # (getLastMappedFile(startOffset, true)), so an empty slave gets its first file at the
            # master's offset, and a slave whose last file is full the next one, as in Java
            files = self.commitlog.files.files
            if (not files and offset % self.commitlog.file_size == 0) or \
                    (files and files[-1].is_full and offset == self.commitlog.max_offset):
                self.commitlog.files.last_or_create(offset)
            return
        if not self.commitlog.files.files and offset % self.commitlog.file_size:
            raise StoreError(f"an empty store starts replicating at a file boundary, not at {offset}")
        self.append(offset, data, None, dispatch=dispatch)


async def _status_of(status: PutStatus | asyncio.Future[PutStatus]) -> PutStatus:
    return status if isinstance(status, PutStatus) else await status


async def _with_replicas(flushed: PutStatus | asyncio.Future[PutStatus],
                         replicas: Awaitable[PutStatus]) -> PutStatus:
    """The flush and the slaves waited for together; a non-OK answer wins, the slaves' last
    (CommitLog.asyncPutMessage combines them the same way)."""
    out = PutStatus.PUT_OK
    for status in await asyncio.gather(_status_of(flushed), replicas):
        if status is not PutStatus.PUT_OK:
            out = status
    return out
