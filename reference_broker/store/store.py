# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The message store (``DefaultMessageStore``): its life cycle, and the door to its rooms.

Theory of operation
-------------------
:class:`MessageStore` holds the files (the :class:`~.commitlog.CommitLog`, the consume queues of a
:class:`~.queues.QueueTable`, the :class:`~.index.IndexService`, the checkpoint) and the services
that work on them, each in a module of its own, as the Java store is split:

* :mod:`.append` (``CommitLog.asyncPutMessage(s)``, ``appendData``): puts, and the one append of
  CommitLog bytes that puts and replicated bytes share; :mod:`.runs` makes the single-message
  puts of one pipelined read as one run (one append, one dispatch);
* :mod:`.dispatch` (``ReputMessageService`` and the dispatchers): records to consume queues, the
  index and the listeners;
* :mod:`.flush` (``GroupCommitService``, ``FlushRealTimeService``, ``FlushConsumeQueueService``):
  syncs, group commit and the checkpoint;
* :mod:`.reads` (``getMessage``, the lookups, ``queryMessage``): everything read back, typed
  where a caller needs what is in a record;
* :mod:`.recovery` (``load``/``recover``, truncation): a consistent store at start-up and after a cut;
* :mod:`.expiry` (``CleanCommitLogService``, ``CleanConsumeQueueService``): old files go.

Its read half (the queues' and the CommitLog's lookups, queries) is :class:`~.read_door.ReadDoor`,
mixed in; the checks a put makes before it encodes anything are :mod:`.checks`, and one index file
is :mod:`.index_file`. This module starts and stops them.

:meth:`MessageStore.start` takes the store directory's lock file, loads and recovers the files,
creates the ``abort`` file (present while the store runs, so one left behind tells the next start
that this run crashed) and starts the background tasks (the flushers, the cleaner, the statistics
sampler). :meth:`MessageStore.shutdown` stops them, flushes
everything and removes the ``abort`` file, but only when every record is dispatched.

The store is the only reader and writer of CommitLog bytes: callers hand it
:class:`~.types.MessageToStore` values and get back results, raw records for the wire (a PULL,
QUERY_MESSAGE or VIEW_MESSAGE_BY_ID body is records back to back) or decoded
:class:`wire.message.StoredMessage` values where they need the fields.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from types import TracebackType
from typing import Any

from ..periodic import every
from .append import PendingPut, PutService
from .checkpoint import StoreCheckpoint
from .config import StoreConfig
from .dispatch import (
    AppendListener,
    ArrivalListener,
    Dispatcher,
    DispatchListener,
    ReplicaWaiter,
)
from .expiry import Cleaner
from .files import StoreFiles
from .flush import Flusher
from .prefault import Prefaulter
from .read_door import ReadDoor
from .reads import Reads
from .recovery import Recovery
from .runs import RunResult, put_run
from .stats import StoreStats
from .types import MessageToStore, PutResult, StoreError

__all__ = ["MessageStore"]

log = logging.getLogger("reference_broker.store")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


async def _ready(result: PutResult) -> PutResult:
    return result


def _remove(listeners: list[Any], fn: Callable[..., None]) -> None:
    with contextlib.suppress(ValueError):
        listeners.remove(fn)


class MessageStore(ReadDoor):
    """RocketMQ's message store, byte-compatible on disk with the Java broker's."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self.files = files = StoreFiles(config)
        self.commitlog = files.commitlog
        self.index = files.index
        self.queues = files.queues
        self.stats = StoreStats()
        #: True when the last run shut down cleanly (set by :meth:`start`)
        self.last_exit_ok: bool | None = None
        self.dispatcher = Dispatcher(files)
        self.flusher = Flusher(files, self.dispatcher)
        self.puts = PutService(files, self.dispatcher, self.flusher, self.stats)
        self.reads = Reads(files, self.stats)
        self.recovery = Recovery(files, self.dispatcher, self.flusher)
        self.cleaner = Cleaner(files, self.dispatcher)
        #: keeps the CommitLog's pages mapped ahead of the appends (``commitlog_prefault_bytes``)
        self.prefaulter = Prefaulter(config.commitlog_prefault_bytes)
        self._state = "new"
        self._tasks: list[asyncio.Task[None]] = []

    # ================================================================== life cycle
    async def start(self) -> None:
        """Load and recover the files, mark the run with the abort file, start the flushers and
        the cleaner (``DefaultMessageStore.load`` + ``start``)."""
        if self._state != "new":
            raise StoreError(f"store is {self._state}, it can start once")
        loop = asyncio.get_running_loop()
        try:
            await asyncio.to_thread(self._open)
        except BaseException:
            self.files.close()
            self.files.unlock()
            self._state = "closed"
            raise
        self.prefaulter.start()
        if self.prefaulter.running:
            self.commitlog.prefaulter = self.prefaulter
        self._state = "running"
        self.puts.accepting = True
        cleaner = every(self.config.clean_resource_interval_ms / 1000, self.delete_expired_files,
                        "deleting expired files", log, (OSError, StoreError))
        self._tasks = [
            *self.flusher.start(loop),
            asyncio.create_task(cleaner, name="store-clean"),
            asyncio.create_task(every(1.0, self.stats.sample, "store statistics", log, first=0),
                                name="store-stats"),
        ]

    async def shutdown(self) -> None:
        """Stop the tasks, flush everything, write the checkpoint and remove the abort file."""
        if self._state != "running":
            return
        self._state = "stopping"
        self.puts.accepting = False
        for t in self._tasks:
            t.cancel()
        for t, outcome in zip(self._tasks, await asyncio.gather(*self._tasks, return_exceptions=True),
                              strict=True):
            if isinstance(outcome, Exception):  # the loops catch everything: this is a bug
                log.error("store task %s failed", t.get_name(), exc_info=outcome)
        self._tasks = []
        try:
            await self.flusher.flush_commitlog()
            await self.flusher.flush_logics()
        finally:
            self.flusher.release_waiters()
            clean = self.dispatcher.reput_offset >= self.commitlog.max_offset
            self.commitlog.prefaulter = None
            self.prefaulter.stop()
            self.files.close()
            if clean:
                # mirrors DefaultMessageStore.shutdown: the abort file goes only when all is dispatched
                with contextlib.suppress(FileNotFoundError):
                    self.config.abort_path.unlink()
            self.files.unlock()
            self.flusher.stop()
            self._state = "closed"

    async def __aenter__(self) -> MessageStore:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.shutdown()

    @property
    def running(self) -> bool:
        return self._state == "running"

    @property
    def checkpoint(self) -> StoreCheckpoint | None:
        return self.files.checkpoint

    def _open(self) -> None:
        cfg = self.config
        self.files.lock()
        self.last_exit_ok = not cfg.abort_path.exists()
        log.info("store %s: last shutdown %s", cfg.root, "normal" if self.last_exit_ok else "abnormal")
        checkpoint = self.files.load()
        self.recovery.recover(self.last_exit_ok, checkpoint)
        # DefaultMessageStore.createTempFile: an empty file
        cfg.abort_path.touch()

    def _check_readable(self) -> None:
        if self._state not in ("running", "stopping"):
            raise StoreError(f"store is {self._state}")

    # ================================================================== listeners
    def add_dispatch_listener(self, fn: DispatchListener) -> None:
        """Call ``fn(topic, queue_id, queue_offset, store_timestamp)`` after each record reaches a
        consume queue (``MessageArrivingListener``; the queue's max offset is then
        ``queue_offset + 1``)."""
        self.dispatcher.listeners.append(fn)

    def remove_dispatch_listener(self, fn: DispatchListener) -> None:
        _remove(self.dispatcher.listeners, fn)

    def add_arrival_listener(self, fn: ArrivalListener) -> None:
        """Like :meth:`add_dispatch_listener` with the unit's tagsCode as a fifth argument
        (``MessageArrivingListener.arriving`` gets it to skip holds whose tags do not match)."""
        self.dispatcher.arrival_listeners.append(fn)

    def remove_arrival_listener(self, fn: ArrivalListener) -> None:
        _remove(self.dispatcher.arrival_listeners, fn)

    def add_append_listener(self, fn: AppendListener) -> None:
        """Call ``fn(new_max_offset)`` whenever the CommitLog grows (a put or a replica append),
        e.g. to wake an HA connection waiting for data to send."""
        self.dispatcher.append_listeners.append(fn)

    def remove_append_listener(self, fn: AppendListener) -> None:
        _remove(self.dispatcher.append_listeners, fn)

    @property
    def dispatch_behind_bytes(self) -> int:
        """``dispatchBehindBytes``: CommitLog bytes not yet dispatched."""
        return self.dispatcher.behind_bytes

    # ================================================================== put
    def put(self, msg: MessageToStore | Sequence[MessageToStore]
            ) -> PutResult | Coroutine[Any, Any, PutResult]:
        """Store one message, or (a list) the messages of one SEND_BATCH_MESSAGE: one topic and
        queue, consecutive queue offsets, contiguous in one CommitLog file, one store timestamp
        (``asyncPutMessage(s)``). The message is stored when this returns; the answer is the
        result, or, when the put waits (the group commit in SYNC_FLUSH, the slaves on a
        SYNC_MASTER), a coroutine that answers it then. A batch of more than
        :data:`.append.PUT_SLICE` messages, and a put that comes while one is being made, are
        made in their turn (:mod:`.append`): stored when the coroutine answers."""
        if isinstance(msg, MessageToStore):
            return self.puts.put((msg,), False)
        return self.puts.put(msg, True)

    def put_deferred(self, msg: MessageToStore) -> PutResult | PendingPut | Coroutine[Any, Any, PutResult]:
        """:meth:`put` of one message, but one that waits for the group commit alone answers a
        :class:`~.append.PendingPut` (the group's future, and how to finish the put's result
        from it): a send's answer is then made by the future's done callback, with no coroutine
        (:class:`wire.aio.Later`)."""
        return self.puts.put_deferred((msg,), False)

    def put_deferred_many(self, msgs: Sequence[MessageToStore]) -> list[RunResult]:
        """:meth:`put_deferred` of each message, in order, made as one run (:mod:`.runs`: one
        CommitLog append and one dispatch for the messages that fit in the last file); one
        result a message."""
        return put_run(self.puts, msgs)

    def put_message(self, msg: MessageToStore) -> Coroutine[Any, Any, PutResult]:
        """:meth:`put` of one message, always as a coroutine (the put is made at the call)."""
        put = self.puts.put((msg,), False)
        return _ready(put) if isinstance(put, PutResult) else put

    def put_messages(self, batch: list[MessageToStore]) -> Coroutine[Any, Any, PutResult]:
        """:meth:`put` of a batch, always as a coroutine (the put is made at the call)."""
        put = self.puts.put(batch, True)
        return _ready(put) if isinstance(put, PutResult) else put

    @property
    def replica_waiter(self) -> ReplicaWaiter | None:
        """Awaited with a put's end offset on a SYNC_MASTER (set by the HA service)."""
        return self.puts.replica_waiter

    @replica_waiter.setter
    def replica_waiter(self, fn: ReplicaWaiter | None) -> None:
        self.puts.replica_waiter = fn

    # ================================================================== flush
    @property
    def flushed_offset(self) -> int:
        """CommitLog offset up to which the data is on disk."""
        return self.flusher.flushed

    @property
    def flush_count(self) -> int:
        """The number of CommitLog syncs done (group commit shares one among many puts)."""
        return self.flusher.flush_count

    async def flush(self) -> int:
        """Flush the CommitLog now; returns the flushed offset."""
        return await self.flusher.flush_commitlog()

    # ================================================================== topics
    def topics(self) -> list[str]:
        return self.queues.topics()

    def queue_ids(self, topic: str) -> list[int]:
        return self.queues.queue_ids(topic)

    def delete_topic(self, topic: str) -> None:
        """Drop the topic's consume queues (``cleanUnusedTopic`` / ``deleteTopics``)."""
        self.queues.delete_topic(topic)

    # ================================================================== runtime info
    def runtime_info(self) -> dict[str, str]:
        """The store's keys of GET_BROKER_RUNTIME_INFO (``getRuntimeInfo`` and the store values
        ``AdminBrokerProcessor.prepareRuntimeInfo`` adds)."""
        return self.reads.runtime_info(self.dispatcher.behind_bytes, self.flusher.flushed)

    # ================================================================== expiry
    def delete_expired_files(self, now_ms: int | None = None, force: bool = False) -> int:
        """Delete CommitLog files older than ``fileReservedTime`` hours (never the last one, at
        most 10 a call), then the consume-queue and index files wholly before the new minimum
        offset; returns the CommitLog files deleted.

        Runs only at a ``deleteWhen`` hour, or when the disk is fuller than
        ``diskMaxUsedSpaceRatio`` (over 85 % age does not matter), or with ``force`` (which
        ignores the hour, not the age).
        """
        return self.cleaner.delete_expired_files(_now_ms() if now_ms is None else now_ms, force)

    # ================================================================== replication
    def read_commitlog(self, offset: int, max_bytes: int) -> bytes:
        """Raw CommitLog bytes from ``offset`` to the end of the data of its file, at most
        ``max_bytes`` (``getCommitLogData``); empty when there is nothing at ``offset``."""
        self._check_readable()
        return self.commitlog.read_data(offset, max_bytes)

    def commitlog_span(self, offset: int, max_bytes: int) -> tuple[int, int, int] | None:
        """Where the CommitLog bytes from ``offset`` to the end of the data of its file (at most
        ``max_bytes``) lie: ``(file descriptor, position, length)``, for ``os.sendfile``; None when
        nothing is there. The descriptor is good until the file is closed: look it up again after
        every wait (the HA master sends from it without any copy in user space)."""
        self._check_readable()
        return self.commitlog.data_span(offset, max_bytes)

    def append_replica(self, offset: int, data: bytes | bytearray | memoryview, *,
                       dispatch: bool = True) -> None:
        """Append a master's CommitLog bytes verbatim at ``offset`` (which must be the current
        end) and dispatch every record that has become whole (``appendToCommitLog``), through
        the same append as a put. With ``dispatch=False`` the records wait for
        :meth:`dispatch_replica`, as a Java slave leaves them to its ReputMessageService: the HA
        client appends and acks at the speed of the copy, and the ConsumeQueues and the index
        follow (``dispatchBehindBytes`` says how far behind). No bytes (a 4.x heartbeat) still
        make the first file of an empty store at ``offset``, or the next file after a full one,
        as Java's ``appendData`` does through ``getLastMappedFile``."""
        if self._state != "running":
            raise StoreError(f"store is {self._state}")
        self.puts.append_replica(offset, data, dispatch=dispatch)

    def dispatch_replica(self, max_records: int = 0) -> bool:
        """Dispatch the records :meth:`append_replica` left undispatched: at most ``max_records``
        (0: all); True when records are left for a next call."""
        if self._state != "running":
            return False
        return self.dispatcher.reput(max_records)

    @property
    def read_limit(self) -> Callable[[], int] | None:
        """Controller mode: the confirm offset, past which no record is served to consumers (Java's
        reput stops there); None serves everything dispatched."""
        return self.reads.read_limit

    @read_limit.setter
    def read_limit(self, fn: Callable[[], int] | None) -> None:
        self.reads.read_limit = fn

    def set_broker_role(self, role: str) -> None:
        """Change ``brokerRole`` while running (controller mode: the controller decides the role,
        and a broker changes it without a restart): a SLAVE refuses puts, a SYNC_MASTER awaits its
        replica waiter."""
        config = replace(self.config, broker_role=role)
        self.config = self.files.config = config
        for room in (self.dispatcher, self.flusher, self.puts, self.reads, self.recovery, self.cleaner):
            room.config = config
        self.puts._is_slave = config.is_slave
        self.puts._sync_master = role == "SYNC_MASTER"

    def truncate_commitlog(self, offset: int) -> None:
        """Cut the CommitLog at ``offset`` (a record boundary) with the queue units and index
        entries that point at or after it (AutoSwitch HA's truncation to a consistent point)."""
        self.recovery.truncate(offset)
