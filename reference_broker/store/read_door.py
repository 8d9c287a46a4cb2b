# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The read half of :class:`~.store.MessageStore`'s door: what a caller asks of the store's
queues, CommitLog and index (``getMessage``, the offset and time lookups, ``queryMessage``), each
handed to the :mod:`.reads` room; the store itself is the life cycle and the write half."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet

from ._codec import StoredMessage
from .commitlog import CommitLog
from .pull_views import MessageViews, message_views
from .queues import QueueTable
from .reads import Reads
from .stats import StoreStats
from .types import GetResult, QueryResult

__all__ = ["ReadDoor"]


class ReadDoor:
    """Mixed into :class:`~.store.MessageStore`, which provides what is declared here."""

    reads: Reads
    commitlog: CommitLog
    queues: QueueTable
    stats: StoreStats

    def _check_readable(self) -> None:
        raise NotImplementedError

    def get_messages(self, group: str, topic: str, queue_id: int, offset: int, max_nums: int,
                     tags_codes: AbstractSet[int] | None = None, max_bytes: int | None = None, *,
                     properties_filter: Callable[[Mapping[str, str]], bool] | None = None) -> GetResult:
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
        (``max_bytes``, by default ``maxTransferBytesOnMessageInMemory``, and
        ``maxTransferCountOnMessageInMemory`` in memory; the ``…InDisk`` pair on disk).
        ``properties_filter`` is asked about the properties of each record read
        (``isMatchedByCommitLog``; a SQL92 selector; the store decodes the record): a record it
        refuses is skipped as a unit of another tag is. The next offset is the unit after the
        last one looked at. Found/missed counts go to the runtime statistics.
        """
        self._check_readable()
        if max_bytes is None:
            max_bytes = self.reads.config.max_transfer_bytes_in_memory
        return self.reads.get_messages(topic, queue_id, offset, max_nums, tags_codes, max_bytes,
                                       properties_filter)

    def get_message_views(self, topic: str, queue_id: int, offset: int, max_nums: int,
                          max_bytes: int | None = None) -> MessageViews | None:
        """:meth:`get_messages` without filters, for the common pull: the records found as views
        of the mapped CommitLog (:mod:`.pull_views`), or None when :meth:`get_messages` must
        answer (any status but FOUND, and the cases it alone handles). The views are lent: write
        them within this turn of the event loop, or copy them."""
        self._check_readable()
        if max_bytes is None:
            max_bytes = self.reads.config.max_transfer_bytes_in_memory
        return message_views(self.reads, topic, queue_id, offset, max_nums, max_bytes)

    def record_get(self, found: int, missed: bool) -> None:
        """Count a get served elsewhere (``get_messages`` counts its own)."""
        self.stats.record_get(found, missed)

    def max_offset(self, topic: str, queue_id: int) -> int:
        """One past the last queue offset; 0 for an unknown queue (``getMaxOffsetInQueue``)."""
        return self.reads.max_offset(topic, queue_id)

    def min_offset(self, topic: str, queue_id: int) -> int:
        """The first live queue offset; 0 for an unknown queue (``getMinOffsetInQueue``)."""
        return self.reads.min_offset(topic, queue_id)

    def commitlog_max_offset(self) -> int:
        return self.commitlog.max_offset

    def commitlog_min_offset(self) -> int:
        """First CommitLog offset held; -1 when there is no CommitLog file yet (``getMinPhyOffset``)."""
        return self.commitlog.min_offset

    def commit_offset_of(self, topic: str, queue_id: int, queue_offset: int) -> int | None:
        """The CommitLog offset of a queue's message (``getCommitLogOffsetInQueue``)."""
        u = self.reads.unit(topic, queue_id, queue_offset)
        return u[0] if u is not None else None

    def lookup_message(self, commit_offset: int, size: int | None = None) -> bytes | None:
        """The stored record at ``commit_offset`` as it is on disk (VIEW_MESSAGE_BY_ID), or None
        when no valid record starts there."""
        self._check_readable()
        found = self.commitlog.record_at(commit_offset, size)
        return found[0] if found is not None else None

    def message_at(self, commit_offset: int, size: int | None = None) -> StoredMessage | None:
        """The stored message at ``commit_offset``, decoded (``lookMessageByOffset``), or None
        when no valid record starts there."""
        self._check_readable()
        return self.reads.message_at(commit_offset, size)

    def queue_message(self, topic: str, queue_id: int, queue_offset: int) -> StoredMessage | None:
        """The message at a live queue offset, decoded; None when there is none or its record is
        gone."""
        self._check_readable()
        u = self.reads.unit(topic, queue_id, queue_offset)
        return self.reads.message_at(u[0], u[1]) if u is not None else None

    def consume_queue_units(self, topic: str, queue_id: int, index: int,
                            count: int) -> tuple[int, int, list[tuple[int, int, int]] | None] | None:
        """QUERY_CONSUME_QUEUE's view of one ConsumeQueue (``getConsumeQueue``, then
        ``getIndexBuffer``): None when the queue does not exist, else its min and max queue offset
        and at most ``count`` units (CommitLog offset, size, tagsCode) from ``index`` to the end of
        the file holding it, None when ``index`` is not a unit of the queue."""
        cq = self.queues.find(topic, queue_id)
        if cq is None:
            return None
        if not cq.has_unit(index):
            return cq.min_offset, cq.max_offset, None
        return cq.min_offset, cq.max_offset, list(cq.units_from(index, max(0, count)))

    def search_offset_by_timestamp(self, topic: str, queue_id: int, timestamp: int) -> int:
        """The queue offset stored closest to ``timestamp`` (``getOffsetInQueueByTime``)."""
        return self.reads.search_offset_by_timestamp(topic, queue_id, timestamp)

    def earliest_message_time(self, topic: str, queue_id: int) -> int:
        """Store timestamp of the queue's first live message, -1 if none (``getEarliestMessageTime``)."""
        return self.reads.message_store_time(topic, queue_id, self.reads.min_offset(topic, queue_id))

    def message_store_time(self, topic: str, queue_id: int, queue_offset: int) -> int:
        """Store timestamp of one queue message, -1 if none (``getMessageStoreTimeStamp``)."""
        return self.reads.message_store_time(topic, queue_id, queue_offset)

    def earliest_store_time(self) -> int:
        """``getEarliestMessageTime()`` as Java computes it: the first record's store time, but
        only when its file holds 2 × maxMessageSize bytes after it (else -1)."""
        return self.reads.earliest_store_time()

    def query_message(self, topic: str, key: str, max_num: int, begin: int, end: int) -> list[bytes]:
        """Records whose KEYS or UNIQ_KEY is ``key``, stored in [begin, end] (QUERY_MESSAGE)."""
        return self.reads.query(topic, key, max_num, begin, end).messages

    def query_message_result(self, topic: str, key: str, max_num: int, begin: int, end: int) -> QueryResult:
        """:meth:`query_message` with the index position QUERY_MESSAGE's response header
        reports (``DefaultMessageStore.queryMessage``)."""
        return self.reads.query(topic, key, max_num, begin, end)
