# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The files of one store directory, and the base of the services that work on them.

:class:`StoreFiles` opens, locks and closes them together: the CommitLog, the consume queues, the
index files and the checkpoint, under the ``lock`` file that keeps a second store (ours or Java's)
out of the directory. Each service of the store (:class:`Room`) is handed the same
:class:`StoreFiles` and reaches the files through it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from .checkpoint import StoreCheckpoint
from .commitlog import CommitLog
from .config import StoreConfig
from .index import IndexService
from .queues import QueueTable
from .types import StoreError

__all__ = ["Room", "StoreFiles"]


class StoreFiles:
    """The CommitLog, consume queues, index and checkpoint of one store directory."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self.commitlog = CommitLog(config.commitlog_dir, config.mapped_file_size_commitlog)
        self.queues = QueueTable(config.consumequeue_dir, config.mapped_file_size_consume_queue)
        self.index = IndexService(config.index_dir, config.max_hash_slot_num, config.max_index_num)
        #: opened by :meth:`load`
        self.checkpoint: StoreCheckpoint | None = None
        self._lock_fd: int | None = None

    def lock(self) -> None:
        """Take the directory's ``lock`` file (``DefaultMessageStore.lock``), or raise
        :class:`StoreError` when another store holds it."""
        cfg = self.config
        cfg.root.mkdir(parents=True, exist_ok=True)
        cfg.commitlog_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(cfg.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StoreError(f"{cfg.root} is in use by another store (lock file {cfg.lock_path})") from None
        os.ftruncate(fd, 0)
        os.write(fd, b"lock")
        self._lock_fd = fd

    def unlock(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def load(self) -> StoreCheckpoint:
        """Open every file on disk (``DefaultMessageStore.load``), as found: recovery follows."""
        self.commitlog.load()
        self.queues.load()
        self.checkpoint = StoreCheckpoint(self.config.checkpoint_path)
        self.index.load()
        return self.checkpoint

    def close(self) -> None:
        self.commitlog.close()
        self.queues.close()
        self.index.close()
        if self.checkpoint is not None:
            self.checkpoint.close()


class Room:
    """A service of the store, over its files."""

    def __init__(self, files: StoreFiles) -> None:
        self.files = files
        self.config = files.config
        self.commitlog = files.commitlog
        self.queues = files.queues
        self.index = files.index
