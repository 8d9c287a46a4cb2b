# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Expiry: old CommitLog files go, and the consume-queue and index files they leave behind.

Expired CommitLog files (older than ``fileReservedTime`` hours, at the ``deleteWhen`` hour or when
the disk is fuller than ``diskMaxUsedSpaceRatio``; never the last file) are deleted with the
ConsumeQueue files and index files that lie wholly before the new minimum offset
(``CleanCommitLogService``, ``CleanConsumeQueueService``).
"""

from __future__ import annotations

import logging
import os
import time

from .dispatch import Dispatcher
from .files import Room, StoreFiles
from .mapped_file import MappedFile

__all__ = ["Cleaner", "disk_used_ratio"]

log = logging.getLogger("reference_broker.store")

#: ``diskSpaceCleanForciblyRatio``: above this, expired or not, old files go
_CLEAN_FORCIBLY_RATIO = 0.85
#: ``MappedFileQueue.DELETE_FILES_BATCH_MAX``
_DELETE_FILES_BATCH_MAX = 10


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


class Cleaner(Room):
    """Deletes expired files; see the module docstring."""

    def __init__(self, files: StoreFiles, dispatcher: Dispatcher) -> None:
        super().__init__(files)
        self.dispatcher = dispatcher

    def _is_time_to_delete(self, now_ms: int) -> bool:
        hour = time.localtime(now_ms / 1000).tm_hour
        return any(int(w) == hour for w in self.config.delete_when.split(";") if w.strip())

    def delete_expired_files(self, now_ms: int, force: bool) -> int:
        """See :meth:`.MessageStore.delete_expired_files`."""
        ratio = disk_used_ratio(self.config.commitlog_dir)
        space_full = ratio < 0 or ratio > self.config.disk_max_used_space_ratio / 100.0
        clean_now = ratio > _CLEAN_FORCIBLY_RATIO
        if not (force or self._is_time_to_delete(now_ms) or space_full):
            return 0
        expire_ms = self.config.file_reserved_hours * 3_600_000
        gone: list[MappedFile] = []
        for f in self.commitlog.files.files[:-1]:
            if now_ms >= f.last_modified_ms() + expire_ms or clean_now:
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
        for cq in self.queues.all():
            cq.delete_expired(new_min)
        self.index.delete_expired(new_min)
        if self.dispatcher.reput_offset < new_min:
            self.dispatcher.reput_offset = new_min
        return len(gone)
