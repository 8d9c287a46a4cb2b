# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Flush: the CommitLog's group commit or timed flush, the logic files' flush, the checkpoint.

Theory of operation
-------------------
Appends go into the mapped files on the event loop; the disk syncs run on threads of their own
(:mod:`._syncer`), one for the CommitLog and one for the consume queues and index files.

* SYNC_FLUSH (group commit, ``GroupCommitService``): a put waits until a flush covers its end
  offset. Every append wakes the group commit, which at the end of that pass of the event loop
  (after the other puts the same read brought) hands one sync of everything appended so far to
  the flush thread; the puts that come while it runs are covered by the next one, started as
  soon as it ends. No task and no future: a wake is one ``call_soon``, a sync one queue put and
  one ``call_soon_threadsafe`` back, and with nothing appended nothing runs (Java's service also
  wakes every 10 ms; here every append wakes it, so that timer would find nothing new). Waiters
  queue in append order; a finished sync answers every waiter it covers in one pass from the
  head. A put not covered within ``syncFlushTimeout`` answers FLUSH_DISK_TIMEOUT (one watchdog
  timer for all waiters, ``FlushDiskWatcher``), and its message stays stored. While someone
  holds :attr:`Flusher.lock` (a flush of its own), the group commit waits for it.
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
        self._loop: asyncio.AbstractEventLoop | None = None
        #: the group commit is due at the end of this loop pass (a call_soon is pending)
        self._commit_due = False
        #: a group-commit sync is running on the flush thread
        self._committing = False
        #: the group commit waits for the holder of :attr:`lock`
        self._after_lock: asyncio.Task[None] | None = None
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
        self._loop = loop
        self._cl_syncer.start(loop)
        self._logics_syncer.start(loop)
        logics = every(self.config.flush_interval_consume_queue_ms / 1000, self.flush_logics,
                       "consume queue flush", log, (OSError,))
        tasks = [asyncio.create_task(logics, name="store-flush-logics")]
        if not self.sync_flush:
            timed = every(self.config.flush_interval_ms / 1000, self.flush_commitlog, "CommitLog flush",
                          log, (OSError,))
            tasks.append(asyncio.create_task(timed, name="store-flush-commitlog"))
        return tasks

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
        self._loop = None  # no group commit starts any more
        if self._after_lock is not None:
            self._after_lock.cancel()
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
        """Something was appended: the group commit syncs it at the end of this loop pass."""
        if not self._commit_due and self._loop is not None:
            self._commit_due = True
            self._loop.call_soon(self._group_commit)

    def _group_commit(self) -> None:
        """Hand a sync of everything appended so far to the flush thread, unless one runs (its
        end starts the next) or :attr:`lock` is held (its holder's flush ends first)."""
        self._commit_due = False
        if self._committing or self._loop is None:
            return
        lock = self.lock
        if lock is not None and lock.locked():
            if self._after_lock is None:
                self._after_lock = self._loop.create_task(self._when_unlocked())
            return
        target = self.commitlog.max_offset
        if target <= self.flushed:
            return
        self._committing = True
        self._flushing_to = max(self._flushing_to, target)
        files = self.commitlog.files.files_between(self.flushed, target)
        done = functools.partial(self._group_synced, target, self.generation, self.dispatcher.last_store_ts)
        try:
            self._cl_syncer.submit(functools.partial(sync_files, files), done)
        except RuntimeError:  # the store is stopping: its last flush covers what is left
            self._committing = False
            self._flushing_to = -1

    def _group_synced(self, target: int, generation: int, ts: int, exc: BaseException | None) -> None:
        """A group-commit sync ended: answer the waiters it covers, and sync what came meanwhile."""
        self._committing = False
        if self._flushing_to == target:
            self._flushing_to = -1
        if exc is not None:
            if isinstance(exc, Exception):
                log_failure(log, "CommitLog flush", exc, (OSError,))
            else:
                log.error("CommitLog flush failed: %r", exc)
            if self._loop is not None:
                self._loop.call_later(0.1, self.wake)
            return
        self._synced(target, generation, ts)
        self._resolve_waiters()
        if self.commitlog.max_offset > self.flushed:
            self._group_commit()

    async def _when_unlocked(self) -> None:
        try:
            await self.flush_commitlog()  # after the holder's: it waits for the lock
        except Exception as exc:
            log_failure(log, "CommitLog flush", exc, (OSError,))
            await asyncio.sleep(0.1)
        finally:
            self._after_lock = None
        self.wake()

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
                self._flushing_to = max(self._flushing_to, target)
                try:
                    await self._cl_syncer.run(functools.partial(sync_files, files))
                finally:
                    if self._flushing_to == target:
                        self._flushing_to = -1
                self._synced(target, generation, ts)
            self._resolve_waiters()
            return self.flushed

    def _synced(self, target: int, generation: int, ts: int) -> None:
        """A sync up to ``target`` begun at ``generation`` ended (store time ``ts`` then)."""
        self.flush_count += 1
        if generation == self.generation:
            self.flushed = max(self.flushed, target)
            self.commitlog.files.flushed_where = self.flushed
            cp = self.files.checkpoint
            if cp is not None and ts > 0:
                cp.physic_msg_timestamp = ts

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
