# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The message store (``DefaultMessageStore``): CommitLog, consume queues, index, flush, recovery.

Theory of operation
-------------------
Everything runs on the broker's event loop except the disk syncs. A put is synchronous up to
the point where its records are in the CommitLog mapping and dispatched: the store assigns the
queue offset(s) and the store timestamp (never going backwards), encodes the record(s) with
:mod:`wire.message` at their final physical offset, appends them (a batch is never split across
files), and dispatches them at once: one ConsumeQueue unit per ordinary or committed message, index
entries for UNIQ_KEY and each KEYS word, then the dispatch listeners (long polling). Only then does
``put_message`` wait, if it must:

* SYNC_FLUSH (group commit, ``GroupCommitService``): the put waits until a flush covers its end
  offset. The flusher syncs everything appended so far in one go, on a thread of its own
  (:mod:`._syncer`), so all puts that arrived meanwhile share one sync, and it starts the next
  sync as soon as one ends if more was appended. Waiters queue in append order; a finished
  sync answers every waiter it covers in one pass from the head. A put not covered within
  ``syncFlushTimeout`` answers FLUSH_DISK_TIMEOUT (one watchdog timer for all waiters,
  ``FlushDiskWatcher``), and its message stays stored. A message that is not
  ``isWaitStoreMsgOK`` (the sender says so, else its WAIT property is not "true") does not
  wait; it only wakes the flusher.
* ASYNC_FLUSH (``FlushRealTimeService``): a background task syncs every
  ``flushIntervalCommitLog`` ms.
* A replica hook (:attr:`MessageStore.replica_waiter`, set by HA on a SYNC_MASTER) is awaited
  alongside the flush; a non-OK answer wins, as in ``CommitLog.asyncPutMessage``.

Dispatch is a cursor over the CommitLog (``ReputMessageService``): the local put path advances it
by the records it just wrote; a slave's :meth:`MessageStore.append_replica` appends the master's
bytes verbatim (cut anywhere) and the cursor then walks over every record that has become whole.
:meth:`MessageStore.truncate_commitlog` moves it back.

Start-up (``DefaultMessageStore.load``/``recover``): the ``abort`` file exists while the store runs;
if it is there at start the last run did not shut down cleanly.

* clean: the last CommitLog file is scanned for the end of its records;
* after a crash: records are verified (magic, sizes, body CRC) from the last file whose first
  record is older than the checkpoint's ``min(physic, logics) - 3 s``;

either way the CommitLog is cut after the last good record (later files deleted, non-zero bytes
after it zeroed, so the next append starts on clean bytes), ConsumeQueue units and index entries
that point past the end are taken back, and the records after the highest offset the queues
cover (after a crash: from the verified start at the latest) are dispatched again; dispatching is
idempotent.

Expired CommitLog files (older than ``fileReservedTime`` hours, at the ``deleteWhen`` hour or when
the disk is fuller than ``diskMaxUsedSpaceRatio``; never the last file) are deleted with the
ConsumeQueue files and index files that lie wholly before the new minimum offset
(``CleanCommitLogService``, ``CleanConsumeQueueService``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import itertools
import logging
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from types import TracebackType

from . import _codec
from ._codec import HostPort, MessageConst
from ._syncer import SyncThread
from .checkpoint import StoreCheckpoint
from .commitlog import CommitLog
from .config import StoreConfig
from .consume_queue import ConsumeQueue
from .index import IndexService
from .mapped_file import MappedFile, Prefaulter
from .stats import StoreStats, human_readable_bytes, java_double
from .types import (
    GetResult,
    GetStatus,
    MessageToStore,
    PutResult,
    PutStatus,
    QueryResult,
    StoreError,
)

__all__ = ["ArrivalListener", "DispatchListener", "MessageStore", "ReplicaWaiter", "SCHEDULE_TOPIC"]

log = logging.getLogger("reference_broker.store")

#: ``TopicValidator.RMQ_SYS_SCHEDULE_TOPIC``: its units carry the due time as tagsCode
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"

#: (topic, queue_id, queue_offset, store_timestamp) of each record that reached a consume queue
DispatchListener = Callable[[str, int, int, int], None]
#: the same plus the unit's tagsCode, for long polling that filters by tag
ArrivalListener = Callable[[str, int, int, int, int], None]
#: awaited with the end offset of a put on a SYNC_MASTER; answers PUT_OK or the HA status
ReplicaWaiter = Callable[[int], Awaitable[PutStatus]]

_ROLLED_BACK_OR_PREPARED = (_codec.MessageSysFlag.TRANSACTION_PREPARED_TYPE,
                            _codec.MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
_TRAN_MASK = int(_codec.MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
_BORN_V6 = int(_codec.MessageSysFlag.BORNHOST_V6_FLAG)
_STORE_V6 = int(_codec.MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)
_HOST_BITS = _BORN_V6 | _STORE_V6
_KEYS = MessageConst.PROPERTY_KEYS
_UNIQ_KEY = MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
#: ``diskSpaceCleanForciblyRatio``: above this, expired or not, old files go
_CLEAN_FORCIBLY_RATIO = 0.85
#: ``MappedFileQueue.DELETE_FILES_BATCH_MAX``
_DELETE_FILES_BATCH_MAX = 10


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _total_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 8 * 1024**3


def disk_used_ratio(path: os.PathLike[str] | str) -> float:
    """``UtilAll.getDiskPartitionSpaceUsedPercent``: used / (used + usable), rounded up to 1%."""
    try:
        st = os.statvfs(path)
    except OSError:
        return -1.0
    total = st.f_blocks * st.f_frsize
    if total <= 0:
        return -1.0
    used = total - st.f_bfree * st.f_frsize
    entire = used + st.f_bavail * st.f_frsize
    if entire <= 0:
        return -1.0
    result = used * 100 // entire + (1 if used * 100 % entire else 0)
    return result / 100.0


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


def _sync_files(files: list[MappedFile]) -> None:
    for f in files:
        f.sync()


class MessageStore:
    """RocketMQ's message store, byte-compatible on disk with the Java broker's."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self.commitlog = CommitLog(config.commitlog_dir, config.mapped_file_size_commitlog)
        self.index = IndexService(config.index_dir, config.max_hash_slot_num, config.max_index_num)
        self.checkpoint: StoreCheckpoint | None = None
        self.stats = StoreStats()
        #: True when the last run shut down cleanly (set by :meth:`start`)
        self.last_exit_ok: bool | None = None
        #: the number of CommitLog syncs done (group commit shares one among many puts)
        self.flush_count = 0
        #: awaited after each put on a SYNC_MASTER (set by the HA service)
        self.replica_waiter: ReplicaWaiter | None = None
        self._queues: dict[str, dict[int, ConsumeQueue]] = {}
        self._next_queue_offset: dict[tuple[str, int], int] = {}
        self._reput_offset = 0
        self._listeners: list[DispatchListener] = []
        self._arrival_listeners: list[ArrivalListener] = []
        self._append_listeners: list[Callable[[int], None]] = []
        self._last_store_ts = 0
        self._last_dispatch_ts = 0
        self._store_host = HostPort(config.store_host[0], config.store_host[1])
        self._store_v6 = ":" in config.store_host[0]
        self._memory = int(_total_memory() * config.access_message_in_memory_max_ratio / 100.0)
        self._state = "new"
        self._writeable = True
        self._flushed = 0
        self._generation = 0
        #: SYNC_FLUSH puts waiting for a flush: (end offset, deadline, future), in append order,
        #: so both the offsets and the deadlines grow from head to tail
        self._waiters: deque[tuple[int, float, asyncio.Future[PutStatus]]] = deque()
        self._watchdog: asyncio.TimerHandle | None = None
        #: an offset msgId is the store host's part and then the offset as 16 hex digits
        self._msg_id_prefix = _codec.create_offset_msg_id(*self._store_host, 0)[:-16]
        #: record size without body, topic and properties, by the sysFlag host bits
        self._record_base = {bits: _codec.stored_message_size(0, 0, 0, sys_flag=bits)
                             for bits in (0, _BORN_V6, _STORE_V6, _BORN_V6 | _STORE_V6)}
        #: what the idle group-commit flusher awaits; a put completes it to wake the flusher
        self._flush_wakeup: asyncio.Future[None] | None = None
        self._flush_lock: asyncio.Lock | None = None
        self._logics_lock: asyncio.Lock | None = None
        self._tasks: list[asyncio.Task[None]] = []
        #: the config never changes: what the put path asks on every put is read once
        self._sync_flush = config.sync_flush
        self._sync_master = config.broker_role == "SYNC_MASTER"
        self._sync_flush_timeout = config.sync_flush_timeout_ms / 1000
        self._is_slave = config.is_slave
        self._index_enable = config.message_index_enable
        self._cl_syncer = SyncThread("store-flush-commitlog")
        self._logics_syncer = SyncThread("store-flush-logics")
        #: keeps the CommitLog's pages mapped ahead of the appends (``commitlog_prefault_bytes``)
        self.prefaulter = Prefaulter(config.commitlog_prefault_bytes)
        self._lock_fd: int | None = None
        self._dispatch_stall_logged = -1
        self._checkpoint_written: tuple[int, int, int] = (-1, -1, -1)

    # ================================================================== life cycle
    async def start(self) -> None:
        """Load and recover the files, mark the run with the abort file, start the flushers and
        the cleaner (``DefaultMessageStore.load`` + ``start``)."""
        if self._state != "new":
            raise StoreError(f"store is {self._state}, it can start once")
        self._flush_lock = asyncio.Lock()
        self._logics_lock = asyncio.Lock()
        loop = asyncio.get_running_loop()
        try:
            await asyncio.to_thread(self._open)
        except BaseException:
            self._close_files()
            self._release_lock()
            self._state = "closed"
            raise
        self._cl_syncer.start(loop)
        self._logics_syncer.start(loop)
        self.prefaulter.start()
        if self.prefaulter.running:
            self.commitlog.prefaulter = self.prefaulter
        self._state = "running"
        self._tasks = [
            asyncio.create_task(self._commitlog_flush_loop(), name="store-flush-commitlog"),
            asyncio.create_task(self._logics_flush_loop(), name="store-flush-logics"),
            asyncio.create_task(self._clean_loop(), name="store-clean"),
            asyncio.create_task(self._stats_loop(), name="store-stats"),
        ]

    async def shutdown(self) -> None:
        """Stop the tasks, flush everything, write the checkpoint and remove the abort file."""
        if self._state != "running":
            return
        self._state = "stopping"
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        try:
            await self._flush_commitlog()
            await self._flush_logics()
        finally:
            if self._watchdog is not None:
                self._watchdog.cancel()
                self._watchdog = None
            for _, _, fut in self._waiters:
                if not fut.done():
                    fut.set_result(PutStatus.PUT_OK)
            self._waiters.clear()
            clean = self._reput_offset >= self.commitlog.max_offset and self._writeable
            self.commitlog.prefaulter = None
            self.prefaulter.stop()
            self._close_files()
            if clean:
                # mirrors DefaultMessageStore.shutdown: the abort file goes only when all is dispatched
                with contextlib.suppress(FileNotFoundError):
                    self.config.abort_path.unlink()
            self._release_lock()
            self._cl_syncer.stop()
            self._logics_syncer.stop()
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

    def _open(self) -> None:
        cfg = self.config
        cfg.root.mkdir(parents=True, exist_ok=True)
        cfg.commitlog_dir.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        self.last_exit_ok = not cfg.abort_path.exists()
        log.info("store %s: last shutdown %s", cfg.root, "normal" if self.last_exit_ok else "abnormal")
        self.commitlog.load()
        self._load_queues()
        self.checkpoint = StoreCheckpoint(cfg.checkpoint_path)
        self.index.load()
        self._recover(self.last_exit_ok)
        # DefaultMessageStore.createTempFile: an empty file
        cfg.abort_path.touch()

    def _take_lock(self) -> None:
        fd = os.open(self.config.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StoreError(f"{self.config.root} is in use by another store (lock file "
                             f"{self.config.lock_path})") from None
        os.ftruncate(fd, 0)
        os.write(fd, b"lock")
        self._lock_fd = fd

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _close_files(self) -> None:
        self.commitlog.close()
        for qs in self._queues.values():
            for cq in qs.values():
                cq.close()
        self.index.close()
        if self.checkpoint is not None:
            self.checkpoint.close()

    def _load_queues(self) -> None:
        root = self.config.consumequeue_dir
        if not root.is_dir():
            return
        for topic_dir in sorted(root.iterdir()):
            if not topic_dir.is_dir():
                continue
            for qdir in sorted(topic_dir.iterdir()):
                try:
                    qid = int(qdir.name)
                except ValueError:
                    continue
                cq = ConsumeQueue(topic_dir.name, qid, root, self.config.mapped_file_size_consume_queue)
                cq.load()
                self._queues.setdefault(topic_dir.name, {})[qid] = cq

    # ================================================================== recovery
    def _all_queues(self) -> list[ConsumeQueue]:
        return [cq for qs in self._queues.values() for cq in qs.values()]

    def _recover(self, last_exit_ok: bool) -> None:
        cfg = self.config
        max_phy_in_queues = -1
        for cq in self._all_queues():
            cq.recover()
            max_phy_in_queues = max(max_phy_in_queues, cq.max_physic_offset)
        files = self.commitlog.files.files
        if not files:
            if self._queues:
                log.warning("store %s: no CommitLog files; dropping the consume queues", cfg.root)
                for cq in self._all_queues():
                    cq.destroy()
                self._queues.clear()
            self.index.destroy()
            self._reput_offset = 0
            self._flushed = 0
            return
        if last_exit_ok:
            start = files[-1].file_from_offset
        else:
            start = self._abnormal_recovery_start()
        end, stop = self.commitlog.last_record_end(start, verify=cfg.check_crc_on_recover)
        if stop is not None and stop.problem is not _codec.ProblemKind.ZERO_TAIL:
            log.warning("store %s: CommitLog ends at %d: %s", cfg.root, end, stop.reason)
        cleared = self._cut_commitlog(end)
        if cleared:
            log.warning("store %s: cleared %d bytes of a torn tail after offset %d", cfg.root, cleared, end)
        if max_phy_in_queues >= end:
            for cq in self._all_queues():
                cq.truncate_dirty(end)
        adopted = self.index.adopt_tail(self._store_time_at)
        if adopted:
            log.warning("store %s: %d index entries were written after the index header", cfg.root, adopted)
        self.index.truncate(end, self._store_time_at)
        reput = max(max_phy_in_queues, self.commitlog.min_offset, 0)
        if not last_exit_ok:
            reput = min(reput, start)
            # what the page cache kept for a killed process is made durable before going on
            _sync_files(self.commitlog.files.files_between(start, end))
        self._flushed = end
        self.commitlog.files.flushed_where = end
        self._reput_offset = min(reput, end)
        self._reput()
        self._recover_topic_queue_table()

    def _abnormal_recovery_start(self) -> int:
        """``recoverAbnormally``: the last file whose first record is no newer than the
        checkpoint's minimum timestamp (``isMappedFileMatchedRecover``), else the first file."""
        assert self.checkpoint is not None
        min_ts = self.checkpoint.min_timestamp
        files = self.commitlog.files.files
        for f in reversed(files):
            first = next(iter(_codec.scan(f.read(0, min(f.wrote_position, 64 * 1024)), f.file_from_offset,
                                          verify=False)), None)
            if (first is not None and first.kind == "record" and first.message is not None
                    and first.message.store_timestamp != 0 and first.message.store_timestamp <= min_ts):
                return f.file_from_offset
            if first is not None and first.kind == "end" and first.incomplete and first.size:
                # the first record is larger than the probe: read it whole
                data = f.read(0, min(first.size, f.wrote_position))
                rec = next(iter(_codec.scan(data, f.file_from_offset, verify=False)), None)
                if (rec is not None and rec.message is not None
                        and 0 < rec.message.store_timestamp <= min_ts):
                    return f.file_from_offset
        return files[0].file_from_offset

    def _cut_commitlog(self, end: int) -> int:
        """Forget everything at and after ``end``; returns how many stale bytes were zeroed."""
        self.commitlog.files.truncate_dirty(end)
        f = self.commitlog.files.find(end)
        if f is None:
            return 0
        return f.zero_from(end - f.file_from_offset)

    def _recover_topic_queue_table(self) -> None:
        """``recoverTopicQueueTable``: next queue offsets from the queues, minimum offsets
        corrected to the CommitLog's start."""
        cl_min = self.commitlog.min_offset
        table = {}
        for cq in self._all_queues():
            table[(cq.topic, cq.queue_id)] = cq.max_offset
            cq.correct_min_offset(cl_min)
        self._next_queue_offset = table

    def _store_time_at(self, offset: int) -> int:
        data = self.commitlog.read_data(offset, 1 << 16)
        for item in _codec.scan(data, offset, verify=False):
            return item.message.store_timestamp if item.message is not None else -1
        return -1

    # ================================================================== dispatch
    def add_dispatch_listener(self, fn: DispatchListener) -> None:
        """Call ``fn(topic, queue_id, queue_offset, store_timestamp)`` after each record reaches a
        consume queue (``MessageArrivingListener``; the queue's max offset is then
        ``queue_offset + 1``)."""
        self._listeners.append(fn)

    def remove_dispatch_listener(self, fn: DispatchListener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(fn)

    def add_append_listener(self, fn: Callable[[int], None]) -> None:
        """Call ``fn(new_max_offset)`` whenever the CommitLog grows (a put or a replica append),
        e.g. to wake an HA connection waiting for data to send."""
        self._append_listeners.append(fn)

    def remove_append_listener(self, fn: Callable[[int], None]) -> None:
        with contextlib.suppress(ValueError):
            self._append_listeners.remove(fn)

    def _notify_append(self) -> None:
        end = self.commitlog.max_offset
        for fn in self._append_listeners:
            try:
                fn(end)
            except Exception:
                log.exception("append listener %r failed", fn)

    def add_arrival_listener(self, fn: ArrivalListener) -> None:
        """Like :meth:`add_dispatch_listener` with the unit's tagsCode as a fifth argument
        (``MessageArrivingListener.arriving`` gets it to skip holds whose tags do not match)."""
        self._arrival_listeners.append(fn)

    def remove_arrival_listener(self, fn: ArrivalListener) -> None:
        with contextlib.suppress(ValueError):
            self._arrival_listeners.remove(fn)

    def _find_cq(self, topic: str, queue_id: int) -> ConsumeQueue | None:
        qs = self._queues.get(topic)
        return qs.get(queue_id) if qs is not None else None

    def _find_or_create_cq(self, topic: str, queue_id: int) -> ConsumeQueue:
        qs = self._queues.setdefault(topic, {})
        cq = qs.get(queue_id)
        if cq is None:
            cq = qs[queue_id] = ConsumeQueue(topic, queue_id, self.config.consumequeue_dir,
                                             self.config.mapped_file_size_consume_queue)
        return cq

    def _tags_code(self, topic: str, props: Mapping[str, str], store_ts: int) -> int:
        code = _codec.tags_code(props.get(MessageConst.PROPERTY_TAGS))
        if topic == SCHEDULE_TOPIC:
            level_text = props.get(MessageConst.PROPERTY_DELAY_TIME_LEVEL)
            if level_text is not None:
                # mirrors checkMessageAndReturnSize: a scheduled message's tagsCode is its due time
                try:
                    level = int(level_text)
                except ValueError:
                    level = 0
                levels = self.config.delay_levels_ms
                level = min(level, len(levels))
                if level > 0:
                    code = store_ts + levels[level - 1]
        return code

    def _dispatch(self, topic: str, queue_id: int, commit_offset: int, size: int, tags_code: int,
                  store_timestamp: int, queue_offset: int, props: Mapping[str, str], sys_flag: int) -> None:
        """``DispatchRequest`` through the dispatchers: consume queue, index, listeners."""
        tran = sys_flag & _TRAN_MASK
        if tran not in _ROLLED_BACK_OR_PREPARED:
            qs = self._queues.get(topic)
            cq = qs.get(queue_id) if qs is not None else None
            if cq is None:
                cq = self._find_or_create_cq(topic, queue_id)
            cq.put(commit_offset, size, tags_code, queue_offset, store_timestamp)
            self._last_dispatch_ts = store_timestamp
            key = (topic, queue_id)
            if self._next_queue_offset.get(key, 0) <= queue_offset:
                self._next_queue_offset[key] = queue_offset + 1
            for fn in self._listeners:
                try:
                    fn(topic, queue_id, queue_offset, store_timestamp)
                except Exception:  # a listener's bug must not stop the store
                    log.exception("dispatch listener %r failed", fn)
            for afn in self._arrival_listeners:
                try:
                    afn(topic, queue_id, queue_offset, store_timestamp, tags_code)
                except Exception:
                    log.exception("arrival listener %r failed", afn)
        if self._index_enable:
            self.index.build_index(topic, commit_offset, store_timestamp, props.get(_KEYS),
                                   props.get(_UNIQ_KEY), tran == _TRAN_MASK)
        if store_timestamp > self._last_store_ts:
            self._last_store_ts = store_timestamp

    def _reput(self) -> None:
        """Dispatch every whole record after the cursor (``ReputMessageService.doReput``)."""
        cl = self.commitlog
        if cl.min_offset >= 0 and self._reput_offset < cl.min_offset:
            log.warning("dispatch cursor %d is below the CommitLog start %d",
                        self._reput_offset, cl.min_offset)
            self._reput_offset = cl.min_offset
        while self._reput_offset < cl.max_offset:
            before = self._reput_offset
            for item in cl.walk(self._reput_offset, verify=False):
                if item.kind == "record":
                    m = item.message
                    assert m is not None
                    if m.physical_offset != item.offset and self._dispatch_stall_logged != item.offset:
                        log.warning("record at %d says it is at %d", item.offset, m.physical_offset)
                    props = m.properties
                    self._dispatch(m.topic, m.queue_id, item.offset, item.size,
                                   self._tags_code(m.topic, props, m.store_timestamp), m.store_timestamp,
                                   m.queue_offset, props, m.sys_flag)
                    self._reput_offset = item.offset + item.size
                elif item.kind == "blank":
                    self._reput_offset = cl.roll_next_file(item.offset)
                else:
                    if not item.incomplete and self._dispatch_stall_logged != item.offset:
                        self._dispatch_stall_logged = item.offset
                        log.error("[BUG] dispatch stops at CommitLog offset %d: %s", item.offset, item.reason)
                    return
            if self._reput_offset == before:
                return

    @property
    def dispatch_behind_bytes(self) -> int:
        """``dispatchBehindBytes``: CommitLog bytes not yet dispatched."""
        return max(0, self.commitlog.max_offset - self._reput_offset)

    # ================================================================== put
    def _check_store_status(self) -> PutStatus:
        """``checkStoreStatus``."""
        if self._state != "running" or self._is_slave or not self._writeable:
            return PutStatus.SERVICE_NOT_AVAILABLE
        return PutStatus.PUT_OK

    def _prepare(self, msg: MessageToStore) -> _Prepared | PutStatus:
        try:
            topic = msg.topic.encode("utf-8")
            if len(topic) > 0x7F:
                # mirrors checkMessage: v1 records hold the topic length in a signed byte
                return PutStatus.MESSAGE_ILLEGAL
            body_len = len(msg.body)
            if body_len > self.config.max_message_size:
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

    def _reserve(self, total: int) -> MappedFile | PutStatus:
        """The CommitLog file the next ``total`` bytes go to (see :meth:`CommitLog.reserve`)."""
        if total + _codec.END_FILE_MIN_BLANK_LENGTH > self.config.mapped_file_size_commitlog:
            return PutStatus.MESSAGE_ILLEGAL
        cl = self.commitlog
        before = cl.max_offset
        if self._reput_offset < before:
            # a store that was a slave a moment ago: dispatch what it replicated first
            self._reput()
            if self._reput_offset < cl.max_offset:
                return PutStatus.SERVICE_NOT_AVAILABLE
            before = cl.max_offset
        try:
            f = cl.reserve(total)
        except (OSError, StoreError) as exc:
            log.error("cannot create a CommitLog file: %s", exc)
            return PutStatus.CREATE_MAPPED_FILE_FAILED
        if f.file_from_offset > before and self._reput_offset == before:
            self._reput_offset = f.file_from_offset  # past the BLANK that closed the last file
        return f

    def _store_timestamp(self) -> int:
        """Now, but never before the last record's store time."""
        ts = _now_ms()
        return ts if ts >= self._last_store_ts else self._last_store_ts

    def _append_one(self, msg: MessageToStore) -> tuple[PutResult, bool]:
        """Write and dispatch one message (the common put, without the batch's lists); returns
        the result and whether the put waits for the flush."""
        status = self._check_store_status()
        if status is not PutStatus.PUT_OK:
            return PutResult(status), False
        p = self._prepare(msg)
        if isinstance(p, PutStatus):
            return PutResult(p), False
        size = p.size
        f = self._reserve(size)
        if isinstance(f, PutStatus):
            return PutResult(f), False
        ts = self._store_timestamp()
        key = (msg.topic, msg.queue_id)
        # mirrors doAppend: prepared and rolled-back messages take queue offset 0
        held = (p.sys_flag & _TRAN_MASK) in _ROLLED_BACK_OR_PREPARED
        qo = 0 if held else self._next_queue_offset.get(key, 0)
        base = f.file_from_offset + f.wrote_position
        try:
            # the store checked and measured every field above: the record is packed as is
            record = _codec.encode_record_fields(
                p.topic, msg.body, p.text, msg.queue_id, msg.flag, qo, base, p.sys_flag, msg.born_timestamp,
                msg.born_host, ts, self._store_host, msg.reconsume_times, msg.prepared_transaction_offset)
            if len(record) != size:
                raise StoreError(f"record of {len(record)} bytes, expected {size}")
        except (ValueError, StoreError) as exc:  # EncodeError is a ValueError
            log.warning("message refused: %s", exc)
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        f.append(record)
        f.store_timestamp = ts
        self._last_store_ts = ts
        if not held:
            self._next_queue_offset[key] = qo + 1
        self._dispatch(msg.topic, msg.queue_id, base, size, self._tags_code(msg.topic, p.props, ts), ts, qo,
                       p.props, p.sys_flag)
        self._reput_offset = base + size
        if self._append_listeners:
            self._notify_append()
        return PutResult(PutStatus.PUT_OK, msg_id=f"{self._msg_id_prefix}{base:016X}", queue_offset=qo,
                         wrote_offset=base, wrote_bytes=size, store_timestamp=ts), p.wait

    def _append_batch(self, msgs: list[MessageToStore]) -> tuple[PutResult, bool]:
        """Write and dispatch the records of one SEND_BATCH_MESSAGE; returns the result and
        whether the put waits for the flush."""
        status = self._check_store_status()
        if status is not PutStatus.PUT_OK:
            return PutResult(status), False
        if not msgs:
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        prepared: list[_Prepared] = []
        for m in msgs:
            p = self._prepare(m)
            if isinstance(p, PutStatus):
                return PutResult(p), False
            prepared.append(p)
        first = msgs[0]
        # mirrors asyncPutMessages/checkMessages: one topic and queue, no transactions or delay
        if any(m.topic != first.topic or m.queue_id != first.queue_id for m in msgs):
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        if any(p.sys_flag & _TRAN_MASK for p in prepared):
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        if any(_delay_level(p.props) > 0 for p in prepared):
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        # the batch body's size: each entry is its body and properties plus a fixed head
        body_total = sum(_codec.BATCH_ENTRY_OVERHEAD + len(p.msg.body) + len(p.text) for p in prepared)
        if body_total > self.config.max_message_size:
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        total = sum(p.size for p in prepared)
        f = self._reserve(total)
        if isinstance(f, PutStatus):
            return PutResult(f), False
        ts = self._store_timestamp()
        key = (first.topic, first.queue_id)
        next_qo = self._next_queue_offset.get(key, 0)
        base = f.end_offset
        phys = base
        store_host = self._store_host
        records: list[bytes] = []
        placed: list[tuple[int, int, _Prepared]] = []
        try:
            for p in prepared:
                m = p.msg
                # the store checked and measured every field above: the record is packed as is
                record = _codec.encode_record_fields(
                    p.topic, m.body, p.text, m.queue_id, m.flag, next_qo, phys, p.sys_flag, m.born_timestamp,
                    m.born_host, ts, store_host, m.reconsume_times, m.prepared_transaction_offset)
                if len(record) != p.size:
                    raise StoreError(f"record of {len(record)} bytes, expected {p.size}")
                records.append(record)
                placed.append((phys, next_qo, p))
                next_qo += 1
                phys += p.size
        except (ValueError, StoreError) as exc:  # EncodeError is a ValueError
            log.warning("message refused: %s", exc)
            return PutResult(PutStatus.MESSAGE_ILLEGAL), False
        f.append(b"".join(records))
        f.store_timestamp = ts
        self._last_store_ts = ts
        self._next_queue_offset[key] = next_qo
        for phys, qo, p in placed:
            m = p.msg
            self._dispatch(m.topic, m.queue_id, phys, p.size, self._tags_code(m.topic, p.props, ts), ts, qo,
                           p.props, p.sys_flag)
        self._reput_offset = f.end_offset
        if self._append_listeners:
            self._notify_append()
        prefix = self._msg_id_prefix
        msg_id = ",".join(f"{prefix}{at:016X}" for at, _, _ in placed)
        return PutResult(PutStatus.PUT_OK, msg_id=msg_id, queue_offset=placed[0][1], wrote_offset=base,
                         wrote_bytes=total, store_timestamp=ts, msg_num=len(prepared)), any(
                             p.wait for p in prepared)

    def _durable(self, end: int, wait: bool) -> PutStatus | Awaitable[PutStatus]:
        """What a stored put waits for before it answers (``CommitLog.asyncPutMessage``): in
        SYNC_FLUSH the group commit that covers ``end`` (a put that does not wait only wakes
        the flusher), on a SYNC_MASTER also the slaves; PUT_OK or the status to answer."""
        flushed: PutStatus | asyncio.Future[PutStatus] = PutStatus.PUT_OK
        if self._sync_flush:
            if wait:
                flushed = self._flush_waiter(end)
            else:
                self._wake_flusher()
        if wait and self._sync_master and self.replica_waiter is not None:
            return _with_replicas(flushed, self.replica_waiter(end))
        return flushed

    async def put_message(self, msg: MessageToStore) -> PutResult:
        """Store one message (``asyncPutMessage``); in SYNC_FLUSH this waits for the group
        commit that covers it."""
        begin = time.monotonic()
        result, wait = self._append_one(msg)
        if result.status is not PutStatus.PUT_OK:
            self.stats.record_put_failed()
            return result
        if self._sync_flush or self.replica_waiter is not None:
            durable = self._durable(result.wrote_offset + result.wrote_bytes, wait)
            status = durable if isinstance(durable, PutStatus) else await durable
            if status is not PutStatus.PUT_OK:
                result.status = status
        self.stats.record_put(1, result.wrote_bytes, int((time.monotonic() - begin) * 1000))
        return result

    async def put_messages(self, batch: list[MessageToStore]) -> PutResult:
        """Store the messages of one SEND_BATCH_MESSAGE (``asyncPutMessages``): one topic and
        queue, consecutive queue offsets, contiguous in one CommitLog file, one store timestamp."""
        begin = time.monotonic()
        result, wait = self._append_batch(batch)
        if result.status is not PutStatus.PUT_OK:
            self.stats.record_put_failed()
            return result
        if self._sync_flush or self.replica_waiter is not None:
            durable = self._durable(result.wrote_offset + result.wrote_bytes, wait)
            status = durable if isinstance(durable, PutStatus) else await durable
            if status is not PutStatus.PUT_OK:
                result.status = status
        self.stats.record_put(result.msg_num, result.wrote_bytes, int((time.monotonic() - begin) * 1000))
        return result

    # ================================================================== flush
    @property
    def flushed_offset(self) -> int:
        """CommitLog offset up to which the data is on disk."""
        return self._flushed

    def _wake_flusher(self) -> None:
        w = self._flush_wakeup
        if w is not None and not w.done():
            w.set_result(None)

    def _flush_waiter(self, end: int) -> PutStatus | asyncio.Future[PutStatus]:
        """``GroupCommitRequest``: PUT_OK when ``end`` is flushed already, else a future that the
        flusher answers PUT_OK once a flush covers ``end``, or the watchdog FLUSH_DISK_TIMEOUT
        after ``syncFlushTimeout``. One timer serves all waiters: they share the timeout and
        queue in append order, so the head always has the earliest deadline."""
        if self._flushed >= end:
            return PutStatus.PUT_OK
        wakeup = self._flush_wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)
        timeout = self._sync_flush_timeout
        if timeout <= 0:
            # mirrors FlushDiskWatcher: the message is stored, the flush was too slow
            return PutStatus.FLUSH_DISK_TIMEOUT
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[PutStatus] = loop.create_future()
        deadline = loop.time() + timeout
        self._waiters.append((end, deadline, fut))
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
        flushed = self._flushed
        while w and w[0][0] <= flushed:
            fut = w.popleft()[2]
            if not fut.done():
                fut.set_result(PutStatus.PUT_OK)

    async def flush(self) -> int:
        """Flush the CommitLog now; returns the flushed offset."""
        return await self._flush_commitlog()

    async def _flush_commitlog(self) -> int:
        assert self._flush_lock is not None
        async with self._flush_lock:
            target = self.commitlog.max_offset
            if target > self._flushed:
                generation = self._generation
                ts = self._last_store_ts
                files = self.commitlog.files.files_between(self._flushed, target)
                await self._cl_syncer.run(functools.partial(_sync_files, files))
                self.flush_count += 1
                if generation == self._generation:
                    self._flushed = max(self._flushed, target)
                    self.commitlog.files.flushed_where = self._flushed
                    if self.checkpoint is not None and ts > 0:
                        self.checkpoint.physic_msg_timestamp = ts
            self._resolve_waiters()
            return self._flushed

    async def _commitlog_flush_loop(self) -> None:
        # GroupCommitService wakes on requests and flushes at least every 10 ms; the timed
        # FlushRealTimeService sleeps flushIntervalCommitLog between flushes
        sync_flush = self._sync_flush
        interval = 0.01 if sync_flush else self.config.flush_interval_ms / 1000
        loop = asyncio.get_running_loop()
        while True:
            if sync_flush:
                # group commit: what was appended during the last sync is synced at once (the
                # puts kept appending while the sync ran on the flush thread); only with nothing
                # to sync does the flusher sleep, until a put completes the wake-up future (one
                # future and one timer per sleep, no task)
                if self.commitlog.max_offset <= self._flushed:
                    wakeup = self._flush_wakeup = loop.create_future()
                    timer = loop.call_later(interval, _complete, wakeup)
                    try:
                        await wakeup
                    finally:
                        timer.cancel()
                        self._flush_wakeup = None
            else:
                await asyncio.sleep(interval)
            try:
                await self._flush_commitlog()
            except OSError as exc:
                log.error("CommitLog flush failed: %s", exc)
                await asyncio.sleep(0.1)

    async def _flush_logics(self) -> None:
        """Sync the consume queues and index files, then the checkpoint
        (``FlushConsumeQueueService.doFlush``)."""
        assert self._logics_lock is not None
        cp = self.checkpoint
        if cp is None:
            return
        async with self._logics_lock:
            logics_ts = self._last_dispatch_ts
            index_ts = self.index.last_end_timestamp()
            files: list[MappedFile] = []
            for cq in self._all_queues():
                files.extend(cq.dirty)
                cq.dirty.clear()
            index_files = self.index.dirty_files()
            for f in index_files:
                f.dirty = False
                files.append(f.mf)
            if files:
                await self._logics_syncer.run(functools.partial(_sync_files, files))
            if logics_ts > 0:
                cp.logics_msg_timestamp = logics_ts
            if index_ts > 0 and self.config.message_index_enable:
                cp.index_msg_timestamp = index_ts
            values = (cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp)
            if values != self._checkpoint_written:
                cp.write()
                await self._logics_syncer.run(cp.mf.sync)
                self._checkpoint_written = values

    async def _logics_flush_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.flush_interval_consume_queue_ms / 1000)
            try:
                await self._flush_logics()
            except OSError as exc:
                log.error("consume queue flush failed: %s", exc)

    async def _clean_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.clean_resource_interval_ms / 1000)
            try:
                self.delete_expired_files()
            except (OSError, StoreError) as exc:
                log.error("deleting expired files failed: %s", exc)

    async def _stats_loop(self) -> None:
        while True:
            self.stats.sample()
            await asyncio.sleep(1.0)

    # ================================================================== get
    def _next_offset_correction(self, old: int, new: int) -> int:
        """``nextOffsetCorrection``: a slave keeps the requested offset unless told otherwise."""
        if not self.config.is_slave or self.config.offset_check_in_slave:
            return new
        return old

    def _is_batch_full(self, size: int, max_nums: int, buffer_total: int, count: int, in_disk: bool,
                       max_bytes: int) -> bool:
        """``isTheBatchFull``."""
        cfg = self.config
        if buffer_total == 0 or count == 0:
            return False
        if max_nums <= count:
            return True
        if in_disk:
            return (buffer_total + size > cfg.max_transfer_bytes_in_disk
                    or count > cfg.max_transfer_count_in_disk - 1)
        return buffer_total + size > max_bytes or count > cfg.max_transfer_count_in_memory - 1

    def get_messages(self, group: str, topic: str, queue_id: int, offset: int, max_nums: int,
                     tags_codes: AbstractSet[int] | None = None, max_bytes: int = 256 * 1024) -> GetResult:
        """Read up to ``max_nums`` messages of a queue from ``offset`` (``getMessage``).

        Statuses and the next offset follow Java: no such queue → NO_MATCHED_LOGIC_QUEUE (Java
        creates the queue on demand and answers NO_MESSAGE_IN_QUEUE; the PULL code is the same),
        empty queue → NO_MESSAGE_IN_QUEUE (next 0), below the minimum → OFFSET_TOO_SMALL (next the
        minimum), at the maximum → OFFSET_OVERFLOW_ONE (next the same), above → OFFSET_OVERFLOW_BADLY
        (next the maximum); a slave keeps the requested offset unless ``offsetCheckInSlave``.
        Otherwise the units of the file holding ``offset`` are read (at most max(16000 bytes,
        20 × max_nums) of them): units whose tagsCode is not in ``tags_codes`` are skipped
        (NO_MATCHED_MESSAGE if nothing matched), units whose record is gone give
        MESSAGE_WAS_REMOVING, and the batch stops at ``max_nums`` or the transfer limits
        (``max_bytes``/32 messages in memory, 64 KiB/8 on disk). The next offset is the unit after
        the last one looked at. Found/missed counts go to the runtime statistics.
        """
        self._check_readable()
        begin = time.monotonic()
        status = GetStatus.NO_MESSAGE_IN_QUEUE
        next_begin = offset
        min_offset = max_offset = 0
        messages: list[bytes] = []
        queue_offsets: list[int] = []
        suggest = False
        max_py = self.commitlog.max_offset
        cq = self._find_cq(topic, queue_id)
        if cq is None:
            status = GetStatus.NO_MATCHED_LOGIC_QUEUE
            next_begin = self._next_offset_correction(offset, 0)
        else:
            min_offset = cq.min_offset
            max_offset = cq.max_offset
            if max_offset == 0:
                status = GetStatus.NO_MESSAGE_IN_QUEUE
                next_begin = self._next_offset_correction(offset, 0)
            elif offset < min_offset:
                status = GetStatus.OFFSET_TOO_SMALL
                next_begin = self._next_offset_correction(offset, min_offset)
            elif offset == max_offset:
                status = GetStatus.OFFSET_OVERFLOW_ONE
                next_begin = self._next_offset_correction(offset, offset)
            elif offset > max_offset:
                status = GetStatus.OFFSET_OVERFLOW_BADLY
                next_begin = self._next_offset_correction(offset, max_offset)
            else:
                limit_units = max(16000, max_nums * _codec.CQ_UNIT_SIZE) // _codec.CQ_UNIT_SIZE
                units = cq.units_from(offset, limit_units)
                head = next(units, None)
                if head is None:
                    status = GetStatus.OFFSET_FOUND_NULL
                    next_begin = self._next_offset_correction(offset, cq.roll_next_file(offset))
                else:
                    status = GetStatus.NO_MATCHED_MESSAGE
                    next_file_start: int | None = None
                    max_phy_pulling = 0
                    total = 0
                    i = 0
                    memory = self._memory
                    for py, size, tags in itertools.chain((head,), units):
                        max_phy_pulling = py
                        if next_file_start is not None and py < next_file_start:
                            i += 1
                            continue
                        if total and self._is_batch_full(size, max_nums, total, len(messages),
                                                         max_py - py > memory, max_bytes):
                            break
                        if tags_codes is not None and not _tags_match(tags, tags_codes):
                            if total == 0:
                                status = GetStatus.NO_MATCHED_MESSAGE
                            i += 1
                            continue
                        data = self.commitlog.read(py, size)
                        if data is None:
                            if total == 0:
                                status = GetStatus.MESSAGE_WAS_REMOVING
                            next_file_start = self.commitlog.roll_next_file(py)
                            i += 1
                            continue
                        messages.append(data)
                        queue_offsets.append(offset + i)
                        total += size
                        status = GetStatus.FOUND
                        next_file_start = None
                        i += 1
                    next_begin = offset + i
                    suggest = (max_py - max_phy_pulling) > self._memory
        self.stats.record_get(len(messages), status is not GetStatus.FOUND,
                              int((time.monotonic() - begin) * 1000))
        return GetResult(status, next_begin, min_offset, max_offset, messages, queue_offsets, suggest)

    def _check_readable(self) -> None:
        if self._state not in ("running", "stopping"):
            raise StoreError(f"store is {self._state}")

    def record_get(self, found: int, missed: bool) -> None:
        """Count a get served elsewhere (``get_messages`` counts its own)."""
        self.stats.record_get(found, missed)

    # ================================================================== offsets and lookups
    def max_offset(self, topic: str, queue_id: int) -> int:
        """One past the last queue offset; 0 for an unknown queue (``getMaxOffsetInQueue``)."""
        cq = self._find_cq(topic, queue_id)
        return cq.max_offset if cq is not None else 0

    def min_offset(self, topic: str, queue_id: int) -> int:
        """The first live queue offset; 0 for an unknown queue (``getMinOffsetInQueue``)."""
        cq = self._find_cq(topic, queue_id)
        return cq.min_offset if cq is not None else 0

    def commitlog_max_offset(self) -> int:
        return self.commitlog.max_offset

    def commitlog_min_offset(self) -> int:
        """First CommitLog offset held; -1 when there is no CommitLog file yet (``getMinPhyOffset``)."""
        return self.commitlog.min_offset

    def commit_offset_of(self, topic: str, queue_id: int, queue_offset: int) -> int | None:
        """The CommitLog offset of a queue's message (``getCommitLogOffsetInQueue``)."""
        cq = self._find_cq(topic, queue_id)
        if cq is None or queue_offset < cq.min_offset or queue_offset >= cq.max_offset:
            return None
        u = cq.unit(queue_offset)
        return u[0] if u is not None else None

    def lookup_message(self, commit_offset: int, size: int | None = None) -> bytes | None:
        """The stored record at ``commit_offset`` (VIEW_MESSAGE_BY_ID), or None when no valid
        record starts there."""
        self._check_readable()
        if commit_offset < 0:
            return None
        if size is None:
            head = self.commitlog.read_data(commit_offset, 1 << 16)
            if not head:
                return None
            first = next(iter(_codec.scan(head, commit_offset, verify=False)), None)
            if first is None:
                return None
            if first.kind == "record":
                return head[:first.size]
            if first.kind != "end" or not first.incomplete or first.size <= 0:
                return None
            size = first.size
        data = self.commitlog.read(commit_offset, size)
        if data is None:
            return None
        item = next(iter(_codec.scan(data, commit_offset, verify=False)), None)
        if item is None or item.kind != "record" or item.size != size:
            return None
        return data

    def _store_time_of(self, offset: int, size: int) -> int:
        """``pickupStoreTimestamp``: -1 when the record is not there."""
        if offset < max(self.commitlog.min_offset, 0):
            return -1
        data = self.commitlog.read(offset, size)
        if data is None:
            return -1
        item = next(iter(_codec.scan(data, offset, verify=False)), None)
        if item is None or item.message is None:
            return -1
        return item.message.store_timestamp

    def search_offset_by_timestamp(self, topic: str, queue_id: int, timestamp: int) -> int:
        """The queue offset stored closest to ``timestamp`` (``getOffsetInQueueByTime``)."""
        cq = self._find_cq(topic, queue_id)
        if cq is None:
            return 0
        return cq.offset_by_time(timestamp, self._store_time_of, max(self.commitlog.min_offset, 0))

    def earliest_message_time(self, topic: str, queue_id: int) -> int:
        """Store timestamp of the queue's first live message, -1 if none (``getEarliestMessageTime``)."""
        cq = self._find_cq(topic, queue_id)
        if cq is None:
            return -1
        u = cq.unit(cq.min_offset)
        return self._store_time_of(u[0], u[1]) if u is not None else -1

    def message_store_time(self, topic: str, queue_id: int, queue_offset: int) -> int:
        """Store timestamp of one queue message, -1 if none (``getMessageStoreTimeStamp``)."""
        cq = self._find_cq(topic, queue_id)
        if cq is None:
            return -1
        u = cq.unit(queue_offset)
        return self._store_time_of(u[0], u[1]) if u is not None else -1

    def earliest_store_time(self) -> int:
        """``getEarliestMessageTime()`` as Java computes it: the first record's store time, but
        only when its file holds 2 × maxMessageSize bytes after it (else -1)."""
        first = self.commitlog.files.first()
        if first is None:
            return -1
        if first.wrote_position < 2 * self.config.max_message_size:
            return -1
        return self._store_time_at(first.file_from_offset)

    def query_message(self, topic: str, key: str, max_num: int, begin: int, end: int) -> list[bytes]:
        """Records whose KEYS or UNIQ_KEY is ``key``, stored in [begin, end] (QUERY_MESSAGE)."""
        return self.query_message_result(topic, key, max_num, begin, end).messages

    def query_message_result(self, topic: str, key: str, max_num: int, begin: int, end: int) -> QueryResult:
        """:meth:`query_message` with the index position QUERY_MESSAGE's response header
        reports (``DefaultMessageStore.queryMessage``)."""
        result = QueryResult()
        if not self.config.message_index_enable:
            return result
        max_num = min(max_num, self.config.max_msgs_num_batch)
        last_query_time = end
        for _ in range(3):
            offsets, last_ts, last_phy = self.index.query_offset(topic, key, max_num, begin, last_query_time)
            if not offsets:
                break
            offsets.sort()
            result.index_last_update_timestamp = last_ts
            result.index_last_update_phyoffset = last_phy
            for m, off in enumerate(offsets):
                data = self.lookup_message(off)
                if data is None:
                    continue
                if m == 0:
                    last_query_time = self._store_time_at(off)
                result.messages.append(data)
            if result.messages or last_query_time < begin:
                break
        return result

    # ================================================================== topics
    def topics(self) -> list[str]:
        return sorted(self._queues)

    def queue_ids(self, topic: str) -> list[int]:
        return sorted(self._queues.get(topic, {}))

    def delete_topic(self, topic: str) -> None:
        """Drop the topic's consume queues (``cleanUnusedTopic`` / ``deleteTopics``)."""
        qs = self._queues.pop(topic, None)
        if qs:
            for cq in qs.values():
                cq.destroy()
                self._next_queue_offset.pop((topic, cq.queue_id), None)
        with contextlib.suppress(OSError):
            (self.config.consumequeue_dir / topic).rmdir()

    # ================================================================== runtime info
    def runtime_info(self) -> dict[str, str]:
        """The store's keys of GET_BROKER_RUNTIME_INFO (``getRuntimeInfo`` and the store values
        ``AdminBrokerProcessor.prepareRuntimeInfo`` adds)."""
        info = self.stats.runtime_info()
        cl_path = str(self.config.commitlog_dir)
        ratio = disk_used_ratio(cl_path)
        info[f"commitLogDiskRatio_{cl_path}"] = java_double(ratio)
        info["commitLogDiskRatio"] = java_double(ratio)
        cq_dir = self.config.consumequeue_dir
        info["consumeQueueDiskRatio"] = java_double(
            disk_used_ratio(cq_dir if cq_dir.exists() else self.config.root))
        info["commitLogMinOffset"] = str(self.commitlog.min_offset)
        info["commitLogMaxOffset"] = str(self.commitlog.max_offset)
        info["dispatchBehindBytes"] = str(self.dispatch_behind_bytes)
        info["pageCacheLockTimeMills"] = "0"
        info["earliestMessageTimeStamp"] = str(self.earliest_store_time())
        info["remainTransientStoreBufferNumbs"] = str(0x7FFFFFFF)
        unflushed = max(0, self.commitlog.max_offset - self._flushed)
        info["remainHowManyDataToFlush"] = human_readable_bytes(unflushed)
        try:
            st = os.statvfs(self.config.root)
            info["commitLogDirCapacity"] = (
                f"Total : {human_readable_bytes(st.f_blocks * st.f_frsize)}, "
                f"Free : {human_readable_bytes(st.f_bavail * st.f_frsize)}.")
        except OSError:
            pass
        return info

    # ================================================================== expiry
    def _is_time_to_delete(self, now_ms: int) -> bool:
        hour = time.localtime(now_ms / 1000).tm_hour
        return any(int(w) == hour for w in self.config.delete_when.split(";") if w.strip())

    def delete_expired_files(self, now_ms: int | None = None, force: bool = False) -> int:
        """Delete CommitLog files older than ``fileReservedTime`` hours (never the last one, at
        most 10 a call), then the consume-queue and index files wholly before the new minimum
        offset; returns the CommitLog files deleted.

        Runs only at a ``deleteWhen`` hour, or when the disk is fuller than
        ``diskMaxUsedSpaceRatio`` (over 85 % age does not matter), or with ``force`` (which
        ignores the hour, not the age).
        """
        now = _now_ms() if now_ms is None else now_ms
        ratio = disk_used_ratio(self.config.commitlog_dir)
        space_full = ratio < 0 or ratio > self.config.disk_max_used_space_ratio / 100.0
        clean_now = ratio > _CLEAN_FORCIBLY_RATIO
        if not (force or self._is_time_to_delete(now) or space_full):
            return 0
        expire_ms = self.config.file_reserved_hours * 3_600_000
        gone: list[MappedFile] = []
        for f in self.commitlog.files.files[:-1]:
            if now >= f.last_modified_ms() + expire_ms or clean_now:
                gone.append(f)
                if len(gone) >= _DELETE_FILES_BATCH_MAX:
                    break
            else:
                break
        if not gone:
            return 0
        self.commitlog.files.remove(gone)
        log.info("deleted %d expired CommitLog file(s): %s", len(gone), ", ".join(f.path.name for f in gone))
        new_min = self.commitlog.min_offset
        for cq in self._all_queues():
            cq.delete_expired(new_min)
        self.index.delete_expired(new_min)
        if self._reput_offset < new_min:
            self._reput_offset = new_min
        return len(gone)

    # ================================================================== replication
    def read_commitlog(self, offset: int, max_bytes: int) -> bytes:
        """Raw CommitLog bytes from ``offset`` to the end of the data of its file, at most
        ``max_bytes`` (``getCommitLogData``); empty when there is nothing at ``offset``."""
        self._check_readable()
        return self.commitlog.read_data(offset, max_bytes)

    def append_replica(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Append a master's CommitLog bytes verbatim at ``offset`` (which must be the current
        end) and dispatch every record that has become whole (``appendToCommitLog``)."""
        if self._state != "running":
            raise StoreError(f"store is {self._state}")
        if not data:
            return
        if not self.commitlog.files.files and offset % self.config.mapped_file_size_commitlog:
            raise StoreError(f"an empty store starts replicating at a file boundary, not at {offset}")
        self.commitlog.append_raw(offset, data)
        self._reput()
        self._notify_append()
        if self._sync_flush:
            self._wake_flusher()

    def truncate_commitlog(self, offset: int) -> None:
        """Cut the CommitLog at ``offset`` (a record boundary) with the queue units and index
        entries that point at or after it (AutoSwitch HA's truncation to a consistent point)."""
        cl = self.commitlog
        if offset >= cl.max_offset:
            return
        self._generation += 1
        if offset <= max(cl.min_offset, 0):
            cl.files.remove(list(cl.files.files))
        else:
            self._cut_commitlog(offset)
        self._flushed = min(self._flushed, offset)
        cl.files.flushed_where = min(cl.files.flushed_where, offset)
        for cq in self._all_queues():
            if cq.max_physic_offset > offset:
                cq.truncate_dirty(offset)
        self.index.truncate(offset, self._store_time_at)
        self._reput_offset = min(self._reput_offset, offset)
        self._next_queue_offset = {(cq.topic, cq.queue_id): cq.max_offset for cq in self._all_queues()}


def _complete(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


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


def _delay_level(props: Mapping[str, str]) -> int:
    v = props.get(MessageConst.PROPERTY_DELAY_TIME_LEVEL)
    if v is None:
        return 0
    try:
        return int(v)
    except ValueError:
        return 0


def _tags_match(tags_code: int, wanted: AbstractSet[int]) -> bool:
    """``ExpressionMessageFilter.isMatchedByConsumeQueue`` for TAG subscriptions: the unit's
    tagsCode, as a Java int, is one of the subscribed tags' hash codes."""
    if tags_code in wanted:
        return True
    as_int = ((tags_code + 0x80000000) & 0xFFFFFFFF) - 0x80000000
    return as_int in wanted
