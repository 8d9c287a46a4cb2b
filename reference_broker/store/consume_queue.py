# Licensed under the Apache License, Version 2.0. See LICENSE.
"""One consume queue: the 20-byte units of one (topic, queueId), in ``consumequeue/<topic>/<queueId>/``.

Theory of operation
-------------------
A unit is (CommitLog offset, record size, tagsCode); the unit at file position ``20 * n`` of the
queue's log is the message with queue offset ``n`` (``ConsumeQueue``). Units are appended by the
store's dispatcher in CommitLog order. Appending is idempotent, so records may be dispatched
again after a crash: a record that ends at or before ``max_physic_offset`` is skipped, as is a
queue offset the queue already holds (``putMessagePositionInfo``).

A queue that starts above offset 0 (a slave that began replicating at the master's last file, or
a queue whose first files expired) has its first file padded with filler units
``(0, Integer.MAX_VALUE, 0)`` up to the first real one (``fillPreBlank``), and its minimum offset
is the first unit that points into the CommitLog still on disk (``correctMinOffset``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from . import _codec
from .mapped_file import MappedFile, MappedFileQueue

__all__ = ["ConsumeQueue", "CQ_UNIT_SIZE"]

log = logging.getLogger("reference_broker.store")

CQ_UNIT_SIZE = _codec.CQ_UNIT_SIZE
_FILLER_SIZE = 0x7FFFFFFF
#: a larger hole in a queue's offsets is not padded (it can only come from a damaged store)
_MAX_GAP_UNITS = 1_000_000


def _is_filler(offset: int, size: int) -> bool:
    return offset == 0 and size == _FILLER_SIZE


class ConsumeQueue:
    """The consume queue of one (topic, queueId)."""

    def __init__(self, topic: str, queue_id: int, root: Path, file_size: int) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.file_size = file_size
        self.files = MappedFileQueue(root / topic / str(queue_id), file_size)
        #: CommitLog offset just past the last record this queue points at (-1: none)
        self.max_physic_offset = -1
        #: byte position of the first live unit
        self.min_logic_offset = 0
        #: files written since the last flush
        self.dirty: set[MappedFile] = set()

    def __repr__(self) -> str:
        return f"ConsumeQueue({self.topic!r}, {self.queue_id}, {self.min_offset}..{self.max_offset})"

    # ------------------------------------------------------------------ offsets
    @property
    def max_offset(self) -> int:
        """One past the last queue offset (``getMaxOffsetInQueue``)."""
        return self.files.max_offset // CQ_UNIT_SIZE

    @property
    def min_offset(self) -> int:
        """The first live queue offset (``getMinOffsetInQueue``)."""
        return self.min_logic_offset // CQ_UNIT_SIZE

    def roll_next_file(self, index: int) -> int:
        """The first queue offset of the next file (``rollNextFile``)."""
        per_file = self.file_size // CQ_UNIT_SIZE
        return index + per_file - index % per_file

    # ------------------------------------------------------------------ load / recover
    def load(self) -> None:
        self.files.load()

    def recover(self) -> None:
        """Find the last valid unit in the last three files (``ConsumeQueue.recover``)."""
        files = self.files.files
        if not files:
            return
        index = max(0, len(files) - 3)
        f = files[index]
        process = f.file_from_offset
        pos = 0
        while True:
            pos = 0
            for at, offset, size, _ in _codec.iter_cq_units(f.mm, 0, self.file_size):
                if offset >= 0 and size > 0:
                    pos = at + CQ_UNIT_SIZE
                    if not _is_filler(offset, size):
                        self.max_physic_offset = offset + size
                else:
                    break
            if pos == self.file_size and index + 1 < len(files):
                index += 1
                f = files[index]
                process = f.file_from_offset
                continue
            break
        process += pos
        self.files.flushed_where = process
        self._truncate_files_to(process)

    def _truncate_files_to(self, logic_offset: int) -> None:
        for f in self.files.truncate_dirty(logic_offset):
            self.dirty.discard(f)
        last = self.files.last()
        if last is not None:
            last.zero_from(last.wrote_position)

    def correct_min_offset(self, phy_min: int) -> None:
        """The first unit of the first file that points at or after ``phy_min`` becomes the
        minimum (``correctMinOffset``); filler units never do."""
        f = self.files.first()
        if f is None:
            return
        # Java leaves the minimum where it was when no unit of the first file qualifies, even
        # below that file's start after the files before it were deleted; nothing is there
        self.min_logic_offset = max(self.min_logic_offset, f.file_from_offset)
        for at, offset, size, _ in _codec.iter_cq_units(f.mm, 0, f.wrote_position):
            if offset >= phy_min and not _is_filler(offset, size):
                self.min_logic_offset = f.file_from_offset + at
                return

    # ------------------------------------------------------------------ write
    def put(self, commit_offset: int, size: int, tags_code: int, queue_offset: int,
            now_ms: int | None = None) -> bool:
        """Append the unit of one dispatched record (``putMessagePositionInfo``); returns False
        only when it could not be written. ``now_ms`` is the time of the append (default: read
        the clock); the dispatcher passes the time it already has."""
        if commit_offset + size <= self.max_physic_offset:
            return True
        expect = queue_offset * CQ_UNIT_SIZE
        f = self.files.last_or_create(expect)
        if f.first_create_in_queue and queue_offset != 0 and f.wrote_position == 0:
            self.min_logic_offset = expect
            self.files.flushed_where = expect
            self._fill_pre_blank(f, expect)
        if queue_offset != 0:
            current = f.file_from_offset + f.wrote_position
            if expect < current:
                # already there (a record dispatched again after recovery)
                return True
            if expect != current:
                gap = (expect - current) // CQ_UNIT_SIZE
                log.error("[BUG] consume queue %s-%d: expected logic offset %d, at %d (gap of %d units)",
                          self.topic, self.queue_id, expect, current, gap)
                if gap <= _MAX_GAP_UNITS:
                    f = self._fill_gap(expect)
            if f.is_full:
                f = self.files.last_or_create(expect)
        self.max_physic_offset = commit_offset + size
        f.append(_codec.encode_cq_unit(commit_offset, size, tags_code))
        f.last_append_ms = int(time.time() * 1000) if now_ms is None else now_ms
        self.dirty.add(f)
        return True

    def put_units(self, units: Sequence[tuple[int, int, int, int, int]]) -> None:
        """:meth:`put` of each ``(commit_offset, size, tags_code, queue_offset, now_ms)``, in
        CommitLog order. A run of consecutive queue offsets that continues the last file where
        it ends is written in one append; anything else (a new file, a gap, a unit already
        there) goes through :meth:`put` one unit at a time."""
        i = 0
        n = len(units)
        while i < n:
            commit_offset, size, _, queue_offset, _ = units[i]
            f = self.files.last()
            if (f is None or f.wrote_position == 0 or f.is_full
                    or commit_offset + size <= self.max_physic_offset
                    or f.file_from_offset + f.wrote_position != queue_offset * CQ_UNIT_SIZE):
                self.put(*units[i])
                i += 1
                continue
            j = i + 1
            stop = min(n, i + f.remaining // CQ_UNIT_SIZE)
            while j < stop and units[j][3] == queue_offset + (j - i):
                j += 1
            f.append(_codec.encode_cq_units([(u[0], u[1], u[2]) for u in units[i:j]]))
            last = units[j - 1]
            self.max_physic_offset = last[0] + last[1]
            f.last_append_ms = last[4]
            self.dirty.add(f)
            i = j

    def _fill_pre_blank(self, f: MappedFile, until: int) -> None:
        filler = _codec.encode_cq_unit(0, _FILLER_SIZE, 0)
        n = (until % self.file_size) // CQ_UNIT_SIZE
        if n:
            f.append(filler * n)
            self.dirty.add(f)

    def _fill_gap(self, expect: int) -> MappedFile:
        filler = _codec.encode_cq_unit(0, _FILLER_SIZE, 0)
        while True:
            f = self.files.last_or_create(expect)
            current = f.file_from_offset + f.wrote_position
            if current >= expect:
                return f
            n = min(expect - current, f.remaining) // CQ_UNIT_SIZE
            f.append(filler * n)
            self.dirty.add(f)

    # ------------------------------------------------------------------ read
    def units_from(self, index: int, limit: int | None = None) -> Iterator[tuple[int, int, int]]:
        """(CommitLog offset, size, tagsCode) from queue offset ``index`` to the end of the file
        holding it (``getIndexBuffer``); at most ``limit`` units. Read lazily: consume it before
        the queue changes files."""
        pos = index * CQ_UNIT_SIZE
        if pos < self.min_logic_offset:
            return iter(())
        f = self.files.find(pos)
        if f is None:
            return iter(())
        start = pos - f.file_from_offset
        end = f.wrote_position
        if limit is not None:
            end = min(end, start + limit * CQ_UNIT_SIZE)
        return _codec.iter_cq_values(f.mm, start, end)

    def has_unit(self, index: int) -> bool:
        pos = index * CQ_UNIT_SIZE
        if pos < self.min_logic_offset:
            return False
        f = self.files.find(pos)
        return f is not None and pos - f.file_from_offset < f.wrote_position

    def unit(self, index: int) -> tuple[int, int, int] | None:
        for u in self.units_from(index, 1):
            return u
        return None

    def last_offset(self) -> int:
        """CommitLog offset just past the last unit's record, -1 when empty (``getLastOffset``)."""
        last = self.files.last()
        if last is None or last.wrote_position < CQ_UNIT_SIZE:
            return -1
        _, offset, size, _ = next(_codec.iter_cq_units(last.mm, last.wrote_position - CQ_UNIT_SIZE,
                                                        last.wrote_position))
        return offset + size if offset >= 0 and size > 0 else -1

    def offset_by_time(self, timestamp: int, store_time_of: Callable[[int, int], int], phy_min: int) -> int:
        """The queue offset whose message was stored closest to ``timestamp``
        (``getOffsetInQueueByTime``): a binary search in the first file modified at or after
        ``timestamp`` (else the last file)."""
        files = self.files.files
        if not files:
            return 0
        f = files[-1]
        for cand in files:
            if max(cand.last_modified_ms(), cand.last_append_ms) >= timestamp:
                f = cand
                break
        low = self.min_logic_offset - f.file_from_offset if self.min_logic_offset > f.file_from_offset else 0
        high = f.wrote_position - CQ_UNIT_SIZE
        target = left = right = -1
        left_value = right_value = -1
        while high >= low:
            mid = (low + high) // (2 * CQ_UNIT_SIZE) * CQ_UNIT_SIZE
            _, phy, size, _ = next(_codec.iter_cq_units(f.mm, mid, mid + CQ_UNIT_SIZE))
            if phy < phy_min:
                low = mid + CQ_UNIT_SIZE
                left = mid
                continue
            store_time = store_time_of(phy, size)
            if store_time < 0:
                return 0
            if store_time == timestamp:
                target = mid
                break
            if store_time > timestamp:
                high = mid - CQ_UNIT_SIZE
                right, right_value = mid, store_time
            else:
                low = mid + CQ_UNIT_SIZE
                left, left_value = mid, store_time
        if target != -1:
            offset = target
        elif left_value == -1:
            offset = right
        elif right_value == -1:
            offset = left
        else:
            offset = right if abs(timestamp - left_value) > abs(timestamp - right_value) else left
        return (f.file_from_offset + offset) // CQ_UNIT_SIZE

    # ------------------------------------------------------------------ truncate / expire
    def truncate_dirty(self, phy_offset: int) -> None:
        """Drop the units that point at or after ``phy_offset`` (``truncateDirtyLogicFiles``)."""
        self.max_physic_offset = phy_offset
        while True:
            f = self.files.last()
            if f is None:
                return
            keep = 0
            drop_file = False
            for at, offset, size, _ in _codec.iter_cq_units(f.mm, 0, self.file_size):
                if at == 0 and offset >= phy_offset:
                    drop_file = True
                    break
                if not (offset >= 0 and size > 0) or offset >= phy_offset:
                    break
                keep = at + CQ_UNIT_SIZE
                if not _is_filler(offset, size):
                    self.max_physic_offset = offset + size
            if drop_file:
                self.dirty.discard(f)
                self.files.delete_last()
                continue
            f.wrote_position = keep
            f.flushed_position = min(f.flushed_position, keep)
            self.files.flushed_where = min(self.files.flushed_where, f.file_from_offset + keep)
            if f.zero_from(keep):
                self.dirty.add(f)
            if self.min_logic_offset > self.files.max_offset:
                self.min_logic_offset = self.files.max_offset
            return

    def delete_expired(self, phy_min: int) -> int:
        """Delete the files (never the last) whose last unit points before ``phy_min``
        (``deleteExpiredFileByOffset``), then move the minimum; returns files deleted."""
        gone = []
        for f in self.files.files[:-1]:
            if f.wrote_position < self.file_size:
                break
            _, offset, _, _ = next(_codec.iter_cq_units(f.mm, self.file_size - CQ_UNIT_SIZE, self.file_size))
            if offset < phy_min:
                gone.append(f)
            else:
                break
        for f in gone:
            self.dirty.discard(f)
        self.files.remove(gone)
        self.correct_min_offset(phy_min)
        return len(gone)

    def close(self) -> None:
        self.files.close()

    def destroy(self) -> None:
        self.max_physic_offset = -1
        self.min_logic_offset = 0
        self.dirty.clear()
        self.files.destroy()
