# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Flush: the CommitLog's group commit or timed flush, the logic files' flush, the checkpoint.

Theory of operation
-------------------
Appends go into the mapped files on the event loop; the disk syncs run on threads of their own
(:mod:`._syncer`), one for the CommitLog and one for the consume queues and index files.

* SYNC_FLUSH (group commit, ``GroupCommitService``): a put waits until a flush covers its end
  offset. The flusher syncs everything appended so far in one go, so all puts that arrived
  meanwhile share one sync, and it starts the next sync as soon as one ends if more was
  appended; with nothing to sync it sleeps until an append wakes it (at most 10 ms). Waiters
  queue in append order; a finished sync answers every waiter it covers in one pass from the
  head. A put not covered within ``syncFlushTimeout`` answers FLUSH_DISK_TIMEOUT (one watchdog
  timer for all waiters, ``FlushDiskWatcher``), and its message stays stored.
* ASYNC_FLUSH (``FlushRealTimeService``): a background task syncs every ``flushIntervalCommitLog``
  ms.
* The consume queues and index files written since the last round are synced every
  ``flushIntervalConsumeQueue`` ms (``FlushConsumeQueueService``), then the checkpoint, which
  holds the store times up to which the CommitLog, the queues and the index are on disk; it is
  written only when one of them moved.

A truncation (HA) bumps :attr:`Flusher.generation`: a sync that was running across it does not
advance the flushed offset past the cut.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque

from ..periodic import every, log_failure
from ._syncer import SyncThread
from .dispatch import Dispatcher
from .files import Room, StoreFiles
from .mapped_file import MappedFile
from .types import PutStatus

__all__ = ["Flusher", "sync_files"]

log = logging.getLogger("reference_broker.store")

#: SYNC_FLUSH puts whose deadlines are this close (seconds) share one waiter between two flushes
GROUP_SPAN = 0.005


def sync_files(files: list[MappedFile]) -> None:
    for f in files:
        f.sync()


def _complete(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Flusher(Room):
    """The flush services of one store; see the module docstring."""

    def __init__(self, files: StoreFiles, dispatcher: Dispatcher) -> None:
        super().__init__(files)
        config = files.config
        self.dispatcher = dispatcher
        #: CommitLog offset up to which the data is on disk
        self.flushed = 0
        #: the number of CommitLog syncs done (group commit shares one among many puts)
        self.flush_count = 0
        #: bumped by a truncation: a sync begun before it does not count
        self.generation = 0
        #: held while the CommitLog is synced (a test holds it to stand for a slow disk)
        self.lock: asyncio.Lock | None = None
        self._logics_lock: asyncio.Lock | None = None
        self.sync_flush = config.sync_flush
        #: ``syncFlushTimeout`` in seconds, read at each SYNC_FLUSH put (Java reads it per request too)
        self.sync_flush_timeout = config.sync_flush_timeout_ms / 1000
        #: SYNC_FLUSH puts waiting for a flush: (end offset, deadline, future), in append order,
        #: so both the offsets and the deadlines grow from head to tail
        self._waiters: deque[tuple[int, float, asyncio.Future[PutStatus]]] = deque()
        self._watchdog: asyncio.TimerHandle | None = None
        #: what the idle group-commit flusher awaits; an append completes it to wake the flusher
        self._wakeup: asyncio.Future[None] | None = None
        #: the end offset the running CommitLog sync covers (waiters up to it are in flight)
        self._flushing_to = -1
        self._cl_syncer = SyncThread("store-flush-commitlog")
        self._logics_syncer = SyncThread("store-flush-logics")
        self._checkpoint_written: tuple[int, int, int] = (-1, -1, -1)

    # ------------------------------------------------------------------ life cycle
    def start(self, loop: asyncio.AbstractEventLoop) -> list[asyncio.Task[None]]:
        """Start the sync threads; returns the flush tasks."""
        self.lock = asyncio.Lock()
        self._logics_lock = asyncio.Lock()
        self._cl_syncer.start(loop)
        self._logics_syncer.start(loop)
        logics = every(self.config.flush_interval_consume_queue_ms / 1000, self.flush_logics,
                       "consume queue flush", log, (OSError,))
        return [asyncio.create_task(self._commitlog_loop(), name="store-flush-commitlog"),
                asyncio.create_task(logics, name="store-flush-logics")]

    def release_waiters(self) -> None:
        """At shutdown, after the last flush: every waiter is answered PUT_OK."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        for _, _, fut in self._waiters:
            if not fut.done():
                fut.set_result(PutStatus.PUT_OK)
        self._waiters.clear()

    def stop(self) -> None:
        self._cl_syncer.stop()
        self._logics_syncer.stop()

    def cut(self, offset: int) -> None:
        """The CommitLog was cut at ``offset``: nothing after it is flushed."""
        self.generation += 1
        self.flushed = min(self.flushed, offset)
        files = self.commitlog.files
        files.flushed_where = min(files.flushed_where, offset)

    # ------------------------------------------------------------------ group commit
    def wake(self) -> None:
        w = self._wakeup
        if w is not None and not w.done():
            w.set_result(None)

    def waiter(self, end: int) -> PutStatus | asyncio.Future[PutStatus]:
        """``GroupCommitRequest``: PUT_OK when ``end`` is flushed already, else a future that the
        flusher answers PUT_OK once a flush covers ``end``, or the watchdog FLUSH_DISK_TIMEOUT
        after ``syncFlushTimeout``. One timer serves all waiters: they share the timeout and
        queue in append order, so the head always has the earliest deadline. The puts that come
        between two flushes share one future (within :data:`GROUP_SPAN` of each other's
        deadline: a put is timed out at most that much after its own deadline)."""
        if self.flushed >= end:
            return PutStatus.PUT_OK
        timeout = self.sync_flush_timeout
        if timeout <= 0:
            # mirrors FlushDiskWatcher: the message is stored, the flush was too slow
            return PutStatus.FLUSH_DISK_TIMEOUT
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        w = self._waiters
        if w:
            # one future per group commit batch: a put joins the last waiter while no flush has
            # taken that one yet and their deadlines are close (the group's is its last put's)
            tail_end, tail_deadline, tail = w[-1]
            if tail_end > self._flushing_to and deadline - tail_deadline <= GROUP_SPAN and not tail.done():
                w[-1] = (end, deadline, tail)
                return tail
        fut: asyncio.Future[PutStatus] = loop.create_future()
        w.append((end, deadline, fut))
        if self._watchdog is None:
            self._watchdog = loop.call_at(deadline, self._expire_waiters)
        return fut

    def _expire_waiters(self) -> None:
        """``FlushDiskWatcher``: answer FLUSH_DISK_TIMEOUT to the waiters whose deadline passed
        (their messages stay stored), then sleep until the next deadline."""
        self._watchdog = None
        w = self._waiters
        if not w:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        while w and w[0][1] <= now:
            fut = w.popleft()[2]
            if not fut.done():
                fut.set_result(PutStatus.FLUSH_DISK_TIMEOUT)
        if w:
            self._watchdog = loop.call_at(w[0][1], self._expire_waiters)

    def _resolve_waiters(self) -> None:
        """Answer every waiter the flushed offset covers, in one pass from the head."""
        w = self._waiters
        flushed = self.flushed
        while w and w[0][0] <= flushed:
            fut = w.popleft()[2]
            if not fut.done():
                fut.set_result(PutStatus.PUT_OK)

    # ------------------------------------------------------------------ CommitLog
    async def flush_commitlog(self) -> int:
        """Sync the CommitLog up to its end now; returns the flushed offset."""
        assert self.lock is not None
        async with self.lock:
            target = self.commitlog.max_offset
            if target > self.flushed:
                generation = self.generation
                ts = self.dispatcher.last_store_ts
                files = self.commitlog.files.files_between(self.flushed, target)
                self._flushing_to = target
                try:
                    await self._cl_syncer.run(functools.partial(sync_files, files))
                finally:
                    self._flushing_to = -1
                self.flush_count += 1
                if generation == self.generation:
                    self.flushed = max(self.flushed, target)
                    self.commitlog.files.flushed_where = self.flushed
                    cp = self.files.checkpoint
                    if cp is not None and ts > 0:
                        cp.physic_msg_timestamp = ts
            self._resolve_waiters()
            return self.flushed

    async def _commitlog_loop(self) -> None:
        # GroupCommitService wakes on requests and flushes at least every 10 ms; the timed
        # FlushRealTimeService sleeps flushIntervalCommitLog between flushes
        sync_flush = self.sync_flush
        interval = 0.01 if sync_flush else self.config.flush_interval_ms / 1000
        loop = asyncio.get_running_loop()
        while True:
            if sync_flush:
                # group commit: what was appended during the last sync is synced at once (the
                # puts kept appending while the sync ran on the flush thread); only with nothing
                # to sync does the flusher sleep, until an append completes the wake-up future
                # (one future and one timer per sleep, no task)
                if self.commitlog.max_offset <= self.flushed:
                    wakeup = self._wakeup = loop.create_future()
                    timer = loop.call_later(interval, _complete, wakeup)
                    try:
                        await wakeup
                    finally:
                        timer.cancel()
                        self._wakeup = None
            else:
                await asyncio.sleep(interval)
            try:
                await self.flush_commitlog()
            except Exception as exc:
                log_failure(log, "CommitLog flush", exc, (OSError,))
                await asyncio.sleep(0.1)

    # ------------------------------------------------------------------ logic files
    async def flush_logics(self) -> None:
        """Sync the consume queues and index files, then the checkpoint
        (``FlushConsumeQueueService.doFlush``)."""
        assert self._logics_lock is not None
        cp = self.files.checkpoint
        if cp is None:
            return
        async with self._logics_lock:
            logics_ts = self.dispatcher.last_dispatch_ts
            index_ts = self.index.last_end_timestamp()
            files: list[MappedFile] = []
            for cq in self.queues.all():
                files.extend(cq.dirty)
                cq.dirty.clear()
            for f in self.index.dirty_files():
                f.dirty = False
                files.append(f.mf)
            if files:
                await self._logics_syncer.run(functools.partial(sync_files, files))
            if logics_ts > 0:
                cp.logics_msg_timestamp = logics_ts
            if index_ts > 0 and self.config.message_index_enable:
                cp.index_msg_timestamp = index_ts
            values = (cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp)
            if values != self._checkpoint_written:
                cp.write()
                await self._logics_syncer.run(cp.mf.sync)
                self._checkpoint_written = values
