# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A pull's records as views of the mapped CommitLog: the fast path of ``getMessage``.

A PULL SUCCESS body is the found records back to back, exactly as stored, so the answer can be
written from the mapped CommitLog file itself (Java answers with a FileRegion over the mapped
buffers). :func:`message_views` serves the common pull: no tag or SQL92 filter, every record in
one CommitLog file and in the reader's in-memory share, no controller read limit. It reads the
pull's ConsumeQueue units with one ``unpack_from`` of the mapped file, checks that each unit's
record lies within the written part of the CommitLog file, and gives one read-only memoryview
per run of adjacent records (the records of one queue sent together are adjacent; records of
queues written in turns are not), with the same next offset, limits and statistics as
:meth:`.Reads.get_messages` would give. Anything else (a filter, a unit that points outside the
file, a batch that crosses a file end or reaches a record read "from disk", and every status but
FOUND) answers None, and the caller takes :meth:`.Reads.get_messages`, the careful path; a
differential test holds the two together.

Views are only lent for the time it takes to write them: the connection writes them within the
same turn of the event loop and copies what the socket does not take at once (see
:class:`wire.aio.Gathered`), so no view is held while a file is unmapped, deleted or cut.
"""

from __future__ import annotations

import struct
import time
from itertools import repeat
from operator import add, eq, sub

from . import _codec
from .reads import Reads

__all__ = ["MessageViews", "message_views"]

_UNIT = _codec.CQ_UNIT_SIZE
#: the struct of n ConsumeQueue units (CommitLog offset and size; the tagsCode is skipped), by n
_UNITS: dict[int, struct.Struct] = {}


def _units(n: int) -> struct.Struct:
    s = _UNITS.get(n)
    if s is None:
        s = _UNITS[n] = struct.Struct(">" + "qi8x" * n)
    return s


class MessageViews:
    """A FOUND get whose records are ``parts`` (views of one mapped CommitLog file)."""

    __slots__ = ("count", "max_offset", "min_offset", "next_begin_offset", "parts", "size")

    def __init__(self, next_begin_offset: int, min_offset: int, max_offset: int, parts: list[memoryview],
                 count: int, size: int) -> None:
        self.next_begin_offset = next_begin_offset
        self.min_offset = min_offset
        self.max_offset = max_offset
        #: the records back to back, one view per run of adjacent records
        self.parts = parts
        #: how many records, and their bytes
        self.count = count
        self.size = size


def message_views(reads: Reads, topic: str, queue_id: int, offset: int, max_nums: int,
                  max_bytes: int) -> MessageViews | None:
    """The records an unfiltered :meth:`.Reads.get_messages` would find, as views; None when the
    careful path must answer (see the module notes). ``suggestPullingFromSlave`` is always false
    here: every record is within the in-memory share."""
    if reads.read_limit is not None:
        return None
    begin = time.monotonic()
    cq = reads.queues.find(topic, queue_id)
    if cq is None:
        return None
    min_offset = cq.min_offset
    max_offset = cq.max_offset
    if not min_offset <= offset < max_offset:
        return None
    pos = offset * _UNIT
    qf = cq.files.find(pos)
    if qf is None:
        return None
    start = pos - qf.file_from_offset
    cfg = reads.config
    # at most max_nums and maxTransferCountOnMessageInMemory, but the first record always (as
    # isTheBatchFull, which never stops an empty batch); the scan limit is never below these
    n = min(max(1, min(max_nums, cfg.max_transfer_count_in_memory)), (qf.wrote_position - start) // _UNIT)
    if n <= 0:
        return None
    vals = _units(n).unpack_from(qf.mm, start)
    first = vals[0]
    commitlog = reads.commitlog
    if commitlog.max_offset - first > reads.memory_share:
        return None  # read "from disk": other limits, and a suggestion to pull from a slave
    f = commitlog.file_at(first)
    if f is None:
        return None
    base = f.file_from_offset
    pys = vals[0::2]
    sizes = vals[1::2]
    ends = list(map(add, pys, sizes))
    total = sum(sizes)
    if total > max_bytes:
        # the batch stops at the byte limit (but never before its first record)
        total = count = 0
        for size in sizes:
            if count and total + size > max_bytes:
                break
            total += size
            count += 1
        pys = pys[:count]
        sizes = sizes[:count]
        ends = ends[:count]
    else:
        count = n
    if min(sizes) <= 0 or min(pys) < base or max(ends) > base + f.wrote_position:
        return None  # a removed record, a filler unit, the next file: the careful path
    root = memoryview(f.mm).toreadonly()
    adjacent = list(map(eq, pys[1:], ends))
    if all(adjacent):
        parts = [root[pys[0] - base:ends[-1] - base]]
    elif not any(adjacent):
        # records of queues written in turns: one view each (sliced in C, no loop of ours)
        if base:
            starts = map(sub, pys, repeat(base))
            stops = map(sub, ends, repeat(base))
            parts = list(map(root.__getitem__, map(slice, starts, stops)))
        else:
            parts = list(map(root.__getitem__, map(slice, pys, ends)))
    else:
        parts = []
        run_start = pys[0]
        for k, joined in enumerate(adjacent):
            if not joined:
                parts.append(root[run_start - base:ends[k] - base])
                run_start = pys[k + 1]
        parts.append(root[run_start - base:ends[-1] - base])
    reads.stats.record_get(count, False, int((time.monotonic() - begin) * 1000))
    return MessageViews(offset + count, min_offset, max_offset, parts, count, total)
