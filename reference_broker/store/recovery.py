# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Recovery at start-up, and cutting the CommitLog back (at start-up and for HA's truncation).

Theory of operation
-------------------
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

A truncation (:meth:`Recovery.truncate`, AutoSwitch HA's cut to a consistent point) is the same
cut on a running store: the CommitLog, the units and index entries at or after the offset, the
flushed offset and the dispatch cursor all go back to it.
"""

from __future__ import annotations

import logging

from . import _codec
from .checkpoint import StoreCheckpoint
from .dispatch import Dispatcher
from .files import Room, StoreFiles
from .flush import Flusher, sync_files

__all__ = ["Recovery"]

log = logging.getLogger("reference_broker.store")

class Recovery(Room):
    """Start-up recovery and truncation of one store; see the module docstring."""

    def __init__(self, files: StoreFiles, dispatcher: Dispatcher, flusher: Flusher) -> None:
        super().__init__(files)
        self.dispatcher = dispatcher
        self.flusher = flusher

    def recover(self, last_exit_ok: bool, checkpoint: StoreCheckpoint) -> None:
        """Bring the loaded files to one consistent end and dispatch what the queues miss."""
        cfg = self.config
        cl = self.commitlog
        dispatcher = self.dispatcher
        max_phy_in_queues = -1
        for cq in self.queues.all():
            cq.recover()
            max_phy_in_queues = max(max_phy_in_queues, cq.max_physic_offset)
        files = cl.files.files
        if not files:
            if self.queues:
                log.warning("store %s: no CommitLog files; dropping the consume queues", cfg.root)
                self.queues.destroy()
            self.index.destroy()
            dispatcher.reput_offset = 0
            self.flusher.flushed = 0
            return
        start = files[-1].file_from_offset if last_exit_ok else self._abnormal_start(checkpoint)
        end, stop = cl.last_record_end(start, verify=cfg.check_crc_on_recover)
        if stop is not None and stop.problem is not _codec.ProblemKind.ZERO_TAIL:
            log.warning("store %s: CommitLog ends at %d: %s", cfg.root, end, stop.reason)
        cleared = self._cut_commitlog(end)
        if cleared:
            log.warning("store %s: cleared %d bytes of a torn tail after offset %d", cfg.root, cleared, end)
        if max_phy_in_queues >= end:
            for cq in self.queues.all():
                cq.truncate_dirty(end)
        adopted = self.index.adopt_tail(cl.store_time_at)
        if adopted:
            log.warning("store %s: %d index entries were written after the index header", cfg.root, adopted)
        self.index.truncate(end, cl.store_time_at)
        reput = max(max_phy_in_queues, cl.min_offset, 0)
        if not last_exit_ok:
            reput = min(reput, start)
            # what the page cache kept for a killed process is made durable before going on
            sync_files(cl.files.files_between(start, end))
        self.flusher.flushed = end
        cl.files.flushed_where = end
        dispatcher.reput_offset = min(reput, end)
        dispatcher.reput()
        # recoverTopicQueueTable: next queue offsets from the queues, minimum offsets corrected
        # to the CommitLog's start
        self.queues.reset_next_offsets()
        for cq in self.queues.all():
            cq.correct_min_offset(cl.min_offset)

    def _abnormal_start(self, checkpoint: StoreCheckpoint) -> int:
        """``recoverAbnormally``: the last file whose first record is no newer than the
        checkpoint's minimum timestamp (``isMappedFileMatchedRecover``), else the first file."""
        min_ts = checkpoint.min_timestamp
        files = self.commitlog.files.files
        for f in reversed(files):
            found = self.commitlog.record_at(f.file_from_offset)
            ts = found[1].store_timestamp if found is not None else 0
            if ts != 0 and ts <= min_ts:
                return f.file_from_offset
        return files[0].file_from_offset

    def _cut_commitlog(self, end: int) -> int:
        """Forget everything at and after ``end``; returns how many stale bytes were zeroed."""
        self.commitlog.files.truncate_dirty(end)
        f = self.commitlog.files.find(end)
        if f is None:
            return 0
        return f.zero_from(end - f.file_from_offset)

    def truncate(self, offset: int) -> None:
        """See :meth:`.MessageStore.truncate_commitlog`."""
        cl = self.commitlog
        if offset >= cl.max_offset:
            return
        if offset <= max(cl.min_offset, 0):
            cl.files.remove(list(cl.files.files))
        else:
            self._cut_commitlog(offset)
        self.flusher.cut(offset)
        for cq in self.queues.all():
            if cq.max_physic_offset > offset:
                cq.truncate_dirty(offset)
        self.index.truncate(offset, cl.store_time_at)
        self.dispatcher.reput_offset = min(self.dispatcher.reput_offset, offset)
        self.queues.reset_next_offsets()
