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

Large batches. A put costs about 10 µs per message on the event loop (checks, record encoding,
dispatch), so a SEND_BATCH_MESSAGE of 90,000 one-byte messages (4 MiB) would hold the loop for
a second or more and every other connection with it. A put of more than :data:`PUT_SLICE`
messages is therefore made in slices of that many, yielding to the loop between them (the steps
of one put are a generator: a small put runs it through at once, a large one awaits a loop pass
after each slice, with the cyclic garbage collector paused: its objects are freed by reference
counting, and a full collection among them would take a tenth of a second). Meanwhile the
batch holds the store's *turn*, as Java's put lock: puts that come while it runs wait for it,
in their order, as tasks of their own (so they are made even if nobody awaits them), and the
rest of the broker (pulls, heartbeats, admin requests) is served. Until the answers of the puts
made in turn have reached their callers, later puts take their turn as well, so that answers keep
their order (tests/broker/test_put_paths_differential.py compares both paths).
Only then is a put not stored when :meth:`PutService.put` returns; its answer comes when it is.

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
from collections.abc import Awaitable, Coroutine, Generator, Sequence
from typing import Any, Literal, overload

from wire.aio import gc_paused

from ..steps import run_steps
from . import _codec
from ._codec import HostPort
from .checks import MessageChecks, Prepared
from .dispatch import HELD_TRAN_TYPES, TRAN_MASK, Dispatcher, DispatchRequest, ReplicaWaiter
from .files import Room, StoreFiles
from .flush import Flusher
from .mapped_file import MappedFile
from .stats import StoreStats
from .types import MessageToStore, PutResult, PutStatus, StoreError
from .waits import with_replicas

__all__ = ["PUT_SLICE", "PendingPut", "PutService"]

log = logging.getLogger("reference_broker.store")

_PUT_OK = PutStatus.PUT_OK
#: a put of more messages than this is made in slices of this many, yielding to the loop between
#: them (about 10 ms of work each); see the module notes
PUT_SLICE = 1024


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class PendingPut:
    """A put that is stored and waits for the group commit (:meth:`PutService.put_deferred`):
    ``future`` is the group's (a :class:`PutStatus`), ``finish(status)`` the put's result."""

    __slots__ = ("_begin", "_result", "_service", "future")

    def __init__(self, service: PutService, result: PutResult, future: asyncio.Future[PutStatus],
                 begin: float) -> None:
        self._service = service
        self._result = result
        self._begin = begin
        self.future = future

    def finish(self, status: PutStatus) -> PutResult:
        return self._service.finished(self._result, status, self._begin)


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
        self._store_host = HostPort(config.store_host[0], config.store_host[1])
        #: an offset msgId is the store host's part and then the offset as 16 hex digits
        self._msg_id_prefix = _codec.create_offset_msg_id(*self._store_host, 0)[:-16]
        #: the checks every message and every batch passes before it is encoded
        self.checks = MessageChecks(config.max_message_size, ":" in config.store_host[0])
        #: while a sliced put runs or puts wait for it: the turn of the last of them (done when it ends)
        self._last_turn: asyncio.Future[None] | None = None
        #: messages per slice of a large put (PUT_SLICE; tests make it small)
        self.slice = PUT_SLICE
        #: put_deferred answers PendingPut (False: a coroutine, as put; the differential tests
        #: compare both)
        self.deferred = True
        #: the puts of one read may be made as one run (:mod:`.runs`; False: one at a time)
        self.runs = True
        #: messages put as part of a run so far
        self.run_messages = 0
        #: puts made in turn whose answers have not reached their callers yet: until they have,
        #: later puts take their turn too, so that no answer overtakes one that came before it
        #: (an answer through the turn's task takes more loop passes than a direct one)
        self._unanswered = 0
        #: the task of the last put made in turn (the next one answers after it)
        self._last_in_turn: asyncio.Future[PutResult] | None = None

    # ------------------------------------------------------------------ put
    @property
    def in_turns(self) -> bool:
        """A large put is being made in slices, or puts wait for their turn behind one."""
        return self._last_turn is not None or self._unanswered > 0

    def put(self, msgs: Sequence[MessageToStore], batch: bool) -> PutResult | Coroutine[Any, Any, PutResult]:
        """Store one message (``batch`` False, ``msgs`` of one) or the messages of one
        SEND_BATCH_MESSAGE; the result, or a coroutine of it when the put waits (for the flush,
        the slaves, or its turn behind a large batch)."""
        if self._last_turn is not None or self._unanswered or len(msgs) > self.slice:
            # the turn is taken now, so that the puts that come after this one wait for it
            before = self._last_turn
            mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._last_turn = mine
            self._unanswered += 1
            task = asyncio.ensure_future(self._put_in_turn(msgs, batch, before, mine, self._last_in_turn))
            self._last_in_turn = task
            return self._answer_in_turn(task)
        begin = time.monotonic()
        result, wait = run_steps(self._append_messages(msgs, batch))
        return self._settle(result, wait, begin)

    def put_deferred(self, msgs: Sequence[MessageToStore],
                     batch: bool) -> PutResult | PendingPut | Coroutine[Any, Any, PutResult]:
        """:meth:`put`, but a put that waits for the group commit alone answers a
        :class:`PendingPut`: its future is the group's, shared with the other puts of the group,
        and the caller finishes it from the future's done callback (no coroutine per put)."""
        if not self.deferred or self._last_turn is not None or self._unanswered or len(msgs) > self.slice:
            return self.put(msgs, batch)
        begin = time.monotonic()
        result, wait = run_steps(self._append_messages(msgs, batch))
        return self._settle(result, wait, begin, deferred=True)

    async def _put_in_turn(self, msgs: Sequence[MessageToStore], batch: bool,
                           before: asyncio.Future[None] | None, mine: asyncio.Future[None],
                           answered_before: asyncio.Future[PutResult] | None) -> PutResult:
        """A put made once the put before it (``before``) is done; ``mine`` is done when this one
        is (a task of its own: see the module notes). Its result comes after the result of the
        put in turn before it (``answered_before``): a put that need not wait for the flush (a
        flush covered it while it was being dispatched) must not overtake one that waits."""
        try:
            if before is not None:
                await before
            begin = time.monotonic()
            steps = self._append_messages(msgs, batch)
            # the hundred thousand objects of a large batch live until it is stored: a full
            # collection meanwhile would hold the loop for a tenth of a second or more
            with gc_paused():
                try:
                    while True:
                        next(steps)
                        await asyncio.sleep(0)  # one slice done: the loop serves the others
                except StopIteration as stop:
                    result, wait = stop.value
        finally:
            if self._last_turn is mine:
                self._last_turn = None
            mine.set_result(None)
        settled = self._settle(result, wait, begin)
        done = settled if isinstance(settled, PutResult) else await settled
        if answered_before is not None and not answered_before.done():
            await asyncio.wait((answered_before,))
        return done

    async def _answer_in_turn(self, task: asyncio.Future[PutResult]) -> PutResult:
        """The answer of a put made by its own task; a cancelled caller leaves the put to finish."""
        try:
            return await asyncio.shield(task)
        finally:
            self._unanswered -= 1

    @overload
    def _settle(self, result: PutResult, wait: bool, begin: float, *,
                deferred: Literal[False] = False) -> PutResult | Coroutine[Any, Any, PutResult]: ...

    @overload
    def _settle(self, result: PutResult, wait: bool, begin: float, *,
                deferred: bool) -> PutResult | PendingPut | Coroutine[Any, Any, PutResult]: ...

    def _settle(self, result: PutResult, wait: bool, begin: float, *,
                deferred: bool = False) -> PutResult | PendingPut | Coroutine[Any, Any, PutResult]:
        """A put's result once its records are appended: at once, or after the flush/slaves."""
        if result.status is not _PUT_OK:
            self.stats.record_put_failed()
            return result
        if self._sync_flush or self.replica_waiter is not None:
            pending = self.waits(result.wrote_offset, result.wrote_offset + result.wrote_bytes, 1) \
                if wait else _PUT_OK
            if isinstance(pending, asyncio.Future):
                if deferred:
                    # answered by the future's done callback, as a group commit's puts are: the
                    # flush or the ack that covers a batch of puts answers them all in one pass
                    return PendingPut(self, result, pending, begin)
                return self._finish(result, pending, begin)
            result.status = pending
        self.stats.record_put(result.msg_num, result.wrote_bytes, int((time.monotonic() - begin) * 1000))
        return result

    def waits(self, begin: int, end: int, puts: int) -> PutStatus | asyncio.Future[PutStatus]:
        """What ``puts`` waiting puts (``isWaitStoreMsgOK``) written at ``[begin, end)`` wait for:
        the group commit in SYNC_FLUSH, the slaves on a SYNC_MASTER, both as one future
        (:func:`.waits.with_replicas`); or the status now, when there is nothing to wait for
        (PUT_OK, or FLUSH_DISK_TIMEOUT with no time to wait)."""
        pending: PutStatus | asyncio.Future[PutStatus] = _PUT_OK
        if self._sync_flush:
            pending = self.flusher.waiter(end)
        replica_waiter = self.replica_waiter
        if self._sync_master and replica_waiter is not None:
            pending = with_replicas(pending if self._sync_flush else None, replica_waiter(begin, end, puts))
        return pending

    async def _finish(self, result: PutResult, pending: Awaitable[PutStatus], begin: float) -> PutResult:
        return self.finished(result, await pending, begin)

    def finished(self, result: PutResult, status: PutStatus, begin: float) -> PutResult:
        """A waiting put's result once the wait answered ``status``."""
        if status is not _PUT_OK:
            result.status = status
        self.stats.record_put(result.msg_num, result.wrote_bytes, int((time.monotonic() - begin) * 1000))
        return result

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

    def _append_messages(self, msgs: Sequence[MessageToStore],
                         batch: bool) -> Generator[None, None, tuple[PutResult, bool]]:
        """Check, encode, append and dispatch; returns the result and whether the put waits for
        the flush. The steps pause (yield) after each slice of a large put; nothing between two
        pauses is left half done, and the store's turn keeps other puts out meanwhile."""
        if not self.accepting or self._is_slave:
            return PutResult(PutStatus.SERVICE_NOT_AVAILABLE), False
        if not msgs:
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        prepared: list[Prepared] = []
        prepare = self.checks.prepare
        wait = False
        cut = self.slice
        sliced = len(msgs) > cut
        for i, m in enumerate(msgs):
            if sliced and i and i % cut == 0:
                yield
            p = prepare(m)
            if isinstance(p, PutStatus):
                return PutResult(p), False
            prepared.append(p)
            if p.wait:
                wait = True
        if batch:
            refused = yield from self.checks.batch(prepared, self.slice)
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
            for i, p in enumerate(prepared):
                if sliced and i and i % cut == 0:
                    yield  # the offsets and timestamp are taken: nobody else puts while we pause
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
        if sliced:
            yield from self._appending(base, b"".join(records), requests)
        else:
            self.append(base, records[0] if n == 1 else b"".join(records), requests)
        prefix = self._msg_id_prefix
        if n == 1:
            msg_id = f"{prefix}{base:016X}"
        elif not sliced:
            msg_id = ",".join([f"{prefix}{r[2]:016X}" for r in requests])
        else:
            parts = []
            for i in range(0, n, cut):
                yield
                parts.append(",".join([f"{prefix}{r[2]:016X}" for r in requests[i:i + cut]]))
            msg_id = ",".join(parts)
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
        self._appended()

    def _appended(self) -> None:
        """After an append is dispatched: the append listeners learn the new end (HA sends it on),
        and in SYNC_FLUSH the group commit is woken."""
        if self.dispatcher.append_listeners:
            self.dispatcher.notify_append()
        if self._sync_flush:
            self.flusher.wake()

    def _appending(self, offset: int, data: bytes,
                   requests: list[DispatchRequest]) -> Generator[None, None, None]:
        """:meth:`append` of a large put's records, pausing after each slice of its dispatch. The
        records are in the CommitLog before the first pause; the dispatch cursor moves past them
        after the last (the store's turn keeps any other append or reput out meanwhile)."""
        self.commitlog.append(offset, data)
        d = self.dispatcher
        one = d.dispatch
        cut = self.slice
        for i, r in enumerate(requests):
            if i and i % cut == 0:
                yield
            one(*r)
        d.reput_offset = offset + len(data)
        self._appended()

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
