# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Reads: a queue's messages for a pull, queue offsets and times, records by offset and by key.

A pull (:meth:`Reads.get_messages`) walks the units of the consume-queue file that holds the
requested offset and copies the records they point at out of the CommitLog mapping; the records
go to the wire as they are (a PULL body is their concatenation), so a pull decodes nothing but the
20-byte units. Tag filtering happens on the units' tagsCode. Everything else that needs what is
*in* a record (its store time, its fields) gets it decoded here, by :meth:`.CommitLog.record_at`,
so that no caller of the store handles record bytes to read them.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet

from . import _codec
from ._codec import StoredMessage
from .consume_queue import ConsumeQueue
from .expiry import disk_used_ratio
from .files import Room, StoreFiles
from .stats import StoreStats, human_readable_bytes, java_double
from .types import GetResult, GetStatus, QueryResult

__all__ = ["MAX_SCANNED_UNITS", "Reads"]

#: the most ConsumeQueue units one pull looks at. Java scans max(16000 bytes, maxMsgNums units),
#: up to the end of the ConsumeQueue file (300,000 units), in a thread of the pull pool; here the
#: pull runs on the event loop, and a SQL92 subscription decodes every record it looks at: a pull
#: with maxMsgNums 2^31-1 whose filter matches nothing held the loop for seconds. A client never
#: asks for more than 1,024 messages a pull, so this changes nothing a real consumer sees.
MAX_SCANNED_UNITS = 16_000


def _total_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 8 * 1024**3


def _tags_match(tags_code: int, wanted: AbstractSet[int]) -> bool:
    """``ExpressionMessageFilter.isMatchedByConsumeQueue`` for TAG subscriptions: the unit's
    tagsCode, as a Java int, is one of the subscribed tags' hash codes."""
    if tags_code in wanted:
        return True
    as_int = ((tags_code + 0x80000000) & 0xFFFFFFFF) - 0x80000000
    return as_int in wanted


class Reads(Room):
    """The store's read side (``DefaultMessageStore.getMessage`` and the lookups)."""

    def __init__(self, files: StoreFiles, stats: StoreStats) -> None:
        super().__init__(files)
        config = files.config
        self.stats = stats
        #: controller mode: records that end past this CommitLog offset (the confirm offset) are
        #: not served yet, as Java's reput stops there (None: everything dispatched is served)
        self.read_limit: Callable[[], int] | None = None
        #: the share of the CommitLog a reader may lag behind and still be read "in memory"
        self.memory_share = int(_total_memory() * config.access_message_in_memory_max_ratio / 100.0)

    # ------------------------------------------------------------------ get
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

    def get_messages(self, topic: str, queue_id: int, offset: int, max_nums: int,
                     tags_codes: AbstractSet[int] | None, max_bytes: int,
                     properties_filter: Callable[[Mapping[str, str]], bool] | None = None) -> GetResult:
        """See :meth:`.MessageStore.get_messages`."""
        begin = time.monotonic()
        status = GetStatus.NO_MESSAGE_IN_QUEUE
        next_begin = offset
        min_offset = max_offset = 0
        messages: list[bytes] = []
        queue_offsets: list[int] = []
        suggest = False
        max_py = self.commitlog.max_offset
        limit = self.read_limit() if self.read_limit is not None else None
        cq = self.queues.find(topic, queue_id)
        if cq is None:
            status = GetStatus.NO_MATCHED_LOGIC_QUEUE
            next_begin = self._next_offset_correction(offset, 0)
        else:
            min_offset = cq.min_offset
            max_offset = cq.max_offset if limit is None else self._visible_max(cq, limit)
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
                limit_units = min(max(16000, max_nums * _codec.CQ_UNIT_SIZE) // _codec.CQ_UNIT_SIZE,
                                  MAX_SCANNED_UNITS)
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
                    memory = self.memory_share
                    for py, size, tags in itertools.chain((head,), units):
                        if limit is not None and py + size > limit:
                            break
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
                        if (properties_filter is not None
                                and not properties_filter(_codec.decode_stored_message(data).properties)):
                            if total == 0:
                                status = GetStatus.NO_MATCHED_MESSAGE
                            i += 1
                            continue
                        messages.append(data)
                        queue_offsets.append(offset + i)
                        total += size
                        status = GetStatus.FOUND
                        next_file_start = None
                        i += 1
                    next_begin = offset + i
                    suggest = (max_py - max_phy_pulling) > self.memory_share
        self.stats.record_get(len(messages), status is not GetStatus.FOUND,
                              int((time.monotonic() - begin) * 1000))
        return GetResult(status, next_begin, min_offset, max_offset, messages, queue_offsets, suggest)

    # ------------------------------------------------------------------ queue offsets and times
    def max_offset(self, topic: str, queue_id: int) -> int:
        cq = self.queues.find(topic, queue_id)
        if cq is None:
            return 0
        return cq.max_offset if self.read_limit is None else self._visible_max(cq, self.read_limit())

    @staticmethod
    def _visible_max(cq: ConsumeQueue, limit: int) -> int:
        """The queue's max offset without the units past ``limit`` (few: the unconfirmed tail)."""
        m = cq.max_offset
        while m > cq.min_offset:
            u = cq.unit(m - 1)
            if u is None or u[0] + u[1] <= limit:
                break
            m -= 1
        return m

    def min_offset(self, topic: str, queue_id: int) -> int:
        cq = self.queues.find(topic, queue_id)
        return cq.min_offset if cq is not None else 0

    def unit(self, topic: str, queue_id: int, queue_offset: int) -> tuple[int, int, int] | None:
        """(CommitLog offset, size, tagsCode) of a live queue offset."""
        cq = self.queues.find(topic, queue_id)
        if cq is None or queue_offset < cq.min_offset or queue_offset >= cq.max_offset:
            return None
        return cq.unit(queue_offset)

    def store_time_of(self, offset: int, size: int) -> int:
        """``pickupStoreTimestamp``: -1 when the record is not there."""
        if offset < max(self.commitlog.min_offset, 0):
            return -1
        found = self.commitlog.record_at(offset, size)
        return found[1].store_timestamp if found is not None else -1

    def search_offset_by_timestamp(self, topic: str, queue_id: int, timestamp: int) -> int:
        cq = self.queues.find(topic, queue_id)
        if cq is None:
            return 0
        return cq.offset_by_time(timestamp, self.store_time_of, max(self.commitlog.min_offset, 0))

    def message_store_time(self, topic: str, queue_id: int, queue_offset: int) -> int:
        cq = self.queues.find(topic, queue_id)
        if cq is None:
            return -1
        u = cq.unit(queue_offset)
        return self.store_time_of(u[0], u[1]) if u is not None else -1

    def earliest_store_time(self) -> int:
        """``getEarliestMessageTime()`` as Java computes it: the first record's store time, but
        only when its file holds 2 × maxMessageSize bytes after it (else -1)."""
        first = self.commitlog.files.first()
        if first is None:
            return -1
        if first.wrote_position < 2 * self.config.max_message_size:
            return -1
        return self.commitlog.store_time_at(first.file_from_offset)

    # ------------------------------------------------------------------ records
    def message_at(self, commit_offset: int, size: int | None = None) -> StoredMessage | None:
        found = self.commitlog.record_at(commit_offset, size)
        return found[1] if found is not None else None

    def query(self, topic: str, key: str, max_num: int, begin: int, end: int) -> QueryResult:
        """See :meth:`.MessageStore.query_message_result`."""
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
                found = self.commitlog.record_at(off)
                if found is None:
                    continue
                if m == 0:
                    last_query_time = found[1].store_timestamp
                result.messages.append(found[0])
            if result.messages or last_query_time < begin:
                break
        return result

    # ------------------------------------------------------------------ runtime info
    def runtime_info(self, dispatch_behind: int, flushed: int) -> dict[str, str]:
        """See :meth:`.MessageStore.runtime_info`."""
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
        info["dispatchBehindBytes"] = str(dispatch_behind)
        info["pageCacheLockTimeMills"] = "0"
        info["earliestMessageTimeStamp"] = str(self.earliest_store_time())
        info["remainTransientStoreBufferNumbs"] = str(0x7FFFFFFF)
        unflushed = max(0, self.commitlog.max_offset - flushed)
        info["remainHowManyDataToFlush"] = human_readable_bytes(unflushed)
        try:
            st = os.statvfs(self.config.root)
            info["commitLogDirCapacity"] = (
                f"Total : {human_readable_bytes(st.f_blocks * st.f_frsize)}, "
                f"Free : {human_readable_bytes(st.f_bavail * st.f_frsize)}.")
        except OSError:
            pass
        return info
