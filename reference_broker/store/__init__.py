# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The reference broker's message store, byte-compatible with RocketMQ's store layout.

``commitlog/`` files of stored records (BLANK-padded at each file's end), ``consumequeue/<topic>/
<queueId>/`` files of 20-byte units, ``index/`` files for keys and UNIQ_KEY, the ``checkpoint`` and
``abort`` files; group commit (SYNC_FLUSH) and periodic flush (ASYNC_FLUSH); recovery after a clean
shutdown and after a crash; expired-file deletion; and the hooks master/slave replication needs
(raw reads, verbatim appends through the same append as a put, truncation). See :mod:`.store` for
how it works and which module holds each part.
"""

from __future__ import annotations

from .append import PUT_SLICE, PendingPut
from .config import StoreConfig
from .dispatch import SCHEDULE_TOPIC, AppendListener, ArrivalListener, DispatchListener, ReplicaWaiter
from .expiry import disk_used_ratio
from .pull_views import MessageViews
from .runs import PendingRun
from .store import MessageStore
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
    "PUT_SLICE",
    "PendingPut",
    "PendingRun",
    "SCHEDULE_TOPIC",
    "AppendListener",
    "ArrivalListener",
    "DispatchListener",
    "GetResult",
    "GetStatus",
    "MessageViews",
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
