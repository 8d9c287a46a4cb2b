# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The reference broker's message store, byte-compatible with RocketMQ's store layout.

``commitlog/`` files of stored records (BLANK-padded at each file's end), ``consumequeue/<topic>/
<queueId>/`` files of 20-byte units, ``index/`` files for keys and UNIQ_KEY, the ``checkpoint`` and
``abort`` files; group commit (SYNC_FLUSH) and periodic flush (ASYNC_FLUSH); recovery after a clean
shutdown and after a crash; expired-file deletion; and the hooks master/slave replication needs
(raw reads, verbatim appends with dispatch, truncation). See :mod:`.store` for how it works.
"""

from __future__ import annotations

from .config import StoreConfig
from .store import (
    SCHEDULE_TOPIC,
    ArrivalListener,
    DispatchListener,
    MessageStore,
    ReplicaWaiter,
    disk_used_ratio,
)
from .types import (
    GetResult,
    GetStatus,
    MessageToStore,
    PutResult,
    PutStatus,
    QueryResult,
    StoreError,
)

__all__ = [
    "SCHEDULE_TOPIC",
    "ArrivalListener",
    "DispatchListener",
    "GetResult",
    "GetStatus",
    "MessageStore",
    "MessageToStore",
    "PutResult",
    "PutStatus",
    "QueryResult",
    "ReplicaWaiter",
    "StoreConfig",
    "StoreError",
    "disk_used_ratio",
]
