# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A run of single-message puts made in one go: what a pipelined producer's read brings.

A producer that keeps many sends in flight delivers them to the broker many frames a read, and
the send processor hands the messages of such a read to :func:`put_run` together. Each message
is still a put of its own (its own checks, queue offset, record, msgId and answer, exactly as
:meth:`.PutService.put_deferred` would make them one after the other), but the work around the
puts is done once per run rather than once per message:

* the messages that fit in the CommitLog's last file are encoded at their final offsets and
  written with one append (a *segment*); the message that does not fit is reserved as a put of
  its own would be (the file closed with a BLANK, the next one begun) and starts the next
  segment, so the files end where one-at-a-time puts would end them;
* a segment is dispatched in one go (:meth:`.Dispatcher.dispatch_many`: each queue's units in
  one append, the index keys put together), and the append listeners and the group commit are
  told once;
* in SYNC_FLUSH the puts of a segment that wait for the flush are one :class:`PendingRun`: one
  group-commit request for the segment's end (a flush that covers it covers every record of the
  segment, all appended at once), one future, and their results finished together when it is
  done (the store's statistics recorded once), so a waiting put costs nothing of its own there;
* on a SYNC_MASTER the same: one wait for the slaves over the segment's waiting puts, released
  by the ack that covers its end (the HA service's :class:`~reference_broker.ha.OffsetWaiters`),
  and with SYNC_FLUSH as well, one future done when both waits are.

The records get one store timestamp per segment (one-at-a-time puts read the clock for each;
both are times at which the record was stored). A message the checks refuse is answered as its
own put would be, and the others are stored. Whatever the run path does not take (a store
serving puts in turns behind a large batch, a slave, a store not accepting puts) goes through
:meth:`.PutService.put_deferred` a message at a time. tests/broker/test_put_paths_differential.py
holds both paths to the same answers and the same CommitLog bytes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Sequence
from typing import Any

from . import _codec
from .append import PendingPut, PutService, _now_ms
from .checks import Prepared
from .dispatch import HELD_TRAN_TYPES, TRAN_MASK, DispatchRequest
from .types import MessageToStore, PutResult, PutStatus, StoreError

__all__ = ["PendingRun", "RunResult", "put_run"]

log = logging.getLogger("reference_broker.store")

_PUT_OK = PutStatus.PUT_OK
_MIN_BLANK = _codec.END_FILE_MIN_BLANK_LENGTH


class PendingRun:
    """The puts of one segment of a run that wait for the same group commit: stored, and answered
    together once ``future`` (the flusher's, a :class:`PutStatus`) is done. The run's results hold
    this one object at the place of each of them; ``finish(status)`` gives their results, in their
    order, with that status (PUT_OK, or FLUSH_DISK_TIMEOUT: stored, not flushed in time), and
    records them in the store's statistics as their puts one at a time would."""

    __slots__ = ("_begin", "_service", "_size", "future", "results")

    def __init__(self, service: PutService, results: list[PutResult], size: int,
                 future: asyncio.Future[PutStatus], begin: float) -> None:
        self._service = service
        self._size = size
        self._begin = begin
        self.results = results
        self.future = future

    def finish(self, status: PutStatus) -> list[PutResult]:
        results = self.results
        if status is not _PUT_OK:
            for r in results:
                r.status = status
        n = len(results)
        self._service.stats.record_puts(n, n, self._size, int((time.monotonic() - self._begin) * 1000))
        return results


RunResult = PutResult | PendingPut | PendingRun | Coroutine[Any, Any, PutResult]


def put_run(service: PutService, msgs: Sequence[MessageToStore]) -> list[RunResult]:
    """:meth:`.PutService.put_deferred` of each message, in order, made as one run (see the module
    notes); one result a message."""
    if (len(msgs) < 2 or not service.runs or not service.deferred or service.in_turns
            or not service.accepting or service._is_slave):
        return [service.put_deferred((m,), False) for m in msgs]
    begin = time.monotonic()
    out: list[RunResult | None] = [None] * len(msgs)
    ready: list[tuple[int, Prepared]] = []
    prepare = service.checks.prepare
    for i, m in enumerate(msgs):
        p = prepare(m)
        if isinstance(p, PutStatus):
            out[i] = service._settle(PutResult(p), False, begin)
        else:
            ready.append((i, p))
    at = 0
    while at < len(ready):
        at = _segment(service, ready, at, out, begin)
    results = [r for r in out if r is not None]
    assert len(results) == len(msgs)
    return results


def _segment(service: PutService, ready: list[tuple[int, Prepared]], at: int,
             out: list[RunResult | None], begin: float) -> int:
    """Put ``ready[at]`` and the messages after it that fit in the same CommitLog file, with one
    append; returns where the next segment starts."""
    i, first = ready[at]
    f = service._reserve(first.size)
    if isinstance(f, PutStatus):
        out[i] = service._settle(PutResult(f), False, begin)
        return at + 1
    dispatcher = service.dispatcher
    now = _now_ms()
    last = dispatcher.last_store_ts
    ts = now if now >= last else last
    next_offset = service.queues.next_offset
    base = phys = f.file_from_offset + f.wrote_position
    room = f.remaining - _MIN_BLANK
    store_host = service._store_host
    prefix = service._msg_id_prefix
    records: list[bytes] = []
    requests: list[DispatchRequest] = []
    placed: list[tuple[int, PutResult, bool]] = []
    end = at
    while end < len(ready):
        i, p = ready[end]
        size = p.size
        if phys - base + size > room:
            break
        m = p.msg
        key = (m.topic, m.queue_id)
        held = (p.sys_flag & TRAN_MASK) in HELD_TRAN_TYPES
        qo = 0 if held else next_offset.get(key, 0)
        try:
            record = _codec.encode_record_fields(
                p.topic, m.body, p.text, m.queue_id, m.flag, qo, phys, p.sys_flag, m.born_timestamp,
                m.born_host, ts, store_host, m.reconsume_times, m.prepared_transaction_offset)
            if len(record) != size:
                raise StoreError(f"record of {len(record)} bytes, expected {size}")
        except (ValueError, StoreError) as exc:  # EncodeError is a ValueError
            # refused as its own put would be: nothing of it is written, and the next message
            # is placed where this one would have been
            log.warning("message refused: %s", exc)
            out[i] = service._settle(PutResult(PutStatus.MESSAGE_ILLEGAL), False, begin)
            end += 1
            continue
        if not held:
            next_offset[key] = qo + 1
        records.append(record)
        requests.append((m.topic, m.queue_id, phys, size, ts, qo, p.props, p.sys_flag))
        placed.append((i, PutResult(_PUT_OK, f"{prefix}{phys:016X}", qo, phys, size, ts, 1), p.wait))
        phys += size
        end += 1
    if records:
        f.store_timestamp = ts
        dispatcher.last_store_ts = ts
        service.commitlog.append(base, b"".join(records))
        dispatcher.dispatch_many(requests)
        dispatcher.reput_offset = phys
        service._appended()
        service.run_messages += len(placed)
        if service._sync_flush or (service._sync_master and service.replica_waiter is not None):
            _wait_for_run(service, placed, phys, out, begin)
        else:
            # stored, nothing to wait for: the results as they are, counted in one go
            _answer_now(service, placed, out, begin)
    return end


def _answer_now(service: PutService, placed: list[tuple[int, PutResult, bool]],
                out: list[RunResult | None], begin: float) -> None:
    """Stored puts that wait for nothing: their results as they are, counted in one go."""
    if not placed:
        return
    elapsed = int((time.monotonic() - begin) * 1000)
    service.stats.record_puts(len(placed), len(placed), sum(r.wrote_bytes for _, r, _ in placed), elapsed)
    for i, result, _ in placed:
        out[i] = result


def _wait_for_run(service: PutService, placed: list[tuple[int, PutResult, bool]], end: int,
                  out: list[RunResult | None], begin: float) -> None:
    """The puts of a segment that wait (``isWaitStoreMsgOK``) wait together: in SYNC_FLUSH they ask
    the group commit once for the segment's ``end``, on a SYNC_MASTER the slaves once for the
    range from the first of them to ``end`` (the ack that covers it covers every one of them), and
    with both, one future for the two (:meth:`.PutService.waits`). They share one
    :class:`PendingRun`; the puts that do not wait are answered now, as their puts one at a time
    would be."""
    waiting = [r for _, r, wait in placed if wait]
    if not waiting:
        _answer_now(service, placed, out, begin)
        return
    pending = service.waits(waiting[0].wrote_offset, end, len(waiting))
    if isinstance(pending, asyncio.Future):
        _answer_now(service, [p for p in placed if not p[2]], out, begin)
        group = PendingRun(service, waiting, sum(r.wrote_bytes for r in waiting), pending, begin)
        for i, _, wait in placed:
            if wait:
                out[i] = group
        return
    # flushed already, or no time to wait (syncFlushTimeout 0): the status is known now
    if pending is not _PUT_OK:
        for r in waiting:
            r.status = pending
    _answer_now(service, placed, out, begin)

