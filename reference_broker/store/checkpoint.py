# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The ``checkpoint`` file (``StoreCheckpoint``): how far each part of the store is known flushed.

Three store timestamps: ``physicMsgTimestamp`` (the newest record whose CommitLog bytes were
flushed), ``logicsMsgTimestamp`` (the newest record whose ConsumeQueue unit was flushed) and
``indexMsgTimestamp`` (the newest indexed record flushed). Recovery after a crash starts at the
last CommitLog file whose first record is no newer than the smaller of the first two, less three
seconds (``getMinTimestamp``). The file is one page; the values sit at its start.
"""

from __future__ import annotations

from pathlib import Path

from . import _codec
from .mapped_file import MappedFile

__all__ = ["StoreCheckpoint"]


class StoreCheckpoint:
    """The checkpoint file, mapped."""

    def __init__(self, path: Path) -> None:
        exists = path.exists()
        if exists and path.stat().st_size < _codec.CHECKPOINT_FILE_SIZE:
            # Java maps a whole page and so grows a short file; do the same
            with open(path, "r+b") as fh:
                fh.truncate(_codec.CHECKPOINT_FILE_SIZE)
        self.mf = MappedFile(path, _codec.CHECKPOINT_FILE_SIZE, create=not exists, file_from_offset=0)
        #: what was read (5.x fields beyond the three timestamps are kept as they are)
        self.base = _codec.decode_checkpoint_times(self.mf.mm)
        self.physic_msg_timestamp = self.base.physic_msg_timestamp
        self.logics_msg_timestamp = self.base.logics_msg_timestamp
        self.index_msg_timestamp = self.base.index_msg_timestamp

    @property
    def min_timestamp(self) -> int:
        """``getMinTimestamp``: min(physic, logics) less 3 s, floored at 0."""
        return max(0, min(self.physic_msg_timestamp, self.logics_msg_timestamp) - 3000)

    @property
    def min_timestamp_index(self) -> int:
        """``getMinTimestampIndex``."""
        return min(self.min_timestamp, self.index_msg_timestamp)

    def write(self) -> None:
        """Put the values into the mapping (no sync)."""
        self.mf.write(0, _codec.encode_checkpoint_times(self.base, self.physic_msg_timestamp,
                                                        self.logics_msg_timestamp, self.index_msg_timestamp))

    def flush(self) -> None:
        """``StoreCheckpoint.flush``: write and sync."""
        self.write()
        self.mf.sync()

    def close(self) -> None:
        self.mf.close()
