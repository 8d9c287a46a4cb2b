# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Consumer offsets and queue offsets: QUERY_CONSUMER_OFFSET (14), UPDATE_CONSUMER_OFFSET (15),
GET_MAX_OFFSET (30), GET_MIN_OFFSET (31), GET_EARLIEST_MSG_STORETIME (32) and
SEARCH_OFFSET_BY_TIMESTAMP (29) (``ConsumerManageProcessor``, ``AdminBrokerProcessor``).

QUERY_CONSUMER_OFFSET of a group with no committed offset (PROTOCOL.md §3.5): when the queue's
minimum offset is 0 or less and its first message is not "on disk" (``checkInDiskByConsumeOffset``:
further behind the CommitLog end than ``accessMessageInMemoryMaxRatio`` % of the RAM), the answer is
offset 0, so a new group reads the queue from its start — the C++ client relies on it; otherwise
QUERY_NOT_FOUND.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection
from wire.headers import (
    GetEarliestMsgStoretimeRequestHeader,
    GetMaxOffsetRequestHeader,
    GetMinOffsetRequestHeader,
    QueryConsumerOffsetRequestHeader,
    SearchOffsetRequestHeader,
    UpdateConsumerOffsetRequestHeader,
)

from .common import BrokerHandler, SlowPath, fast_int, fast_long

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS", "total_physical_memory"]


def total_physical_memory() -> int:
    """``StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE``."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 8 * 1024**3


def _in_disk(broker: Broker, topic: str, queue_id: int, consume_offset: int) -> bool:
    """``checkInDiskByConsumeOffset``."""
    store = broker.store
    commit_offset = store.commit_offset_of(topic, queue_id, consume_offset)
    if commit_offset is None:
        return False
    memory = int(total_physical_memory() * broker.config.int("accessMessageInMemoryMaxRatio") / 100.0)
    return store.commitlog_max_offset() - commit_offset > memory


def query_consumer_offset(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = QueryConsumerOffsetRequestHeader.from_ext(req.ext_fields)
    offset = broker.offsets.query(h.consumer_group, h.topic, h.queue_id)
    if offset >= 0:
        return req.response(ResponseCode.SUCCESS, None, {"offset": str(offset)})
    min_offset = broker.store.min_offset(h.topic, h.queue_id)
    if min_offset <= 0 and not _in_disk(broker, h.topic, h.queue_id, 0):
        return req.response(ResponseCode.SUCCESS, None, {"offset": "0"})
    return req.response(
        ResponseCode.QUERY_NOT_FOUND, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"
    )


def update_consumer_offset(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    ext = req.ext_fields
    try:
        group, topic = ext["consumerGroup"], ext["topic"]
        qid, offset = fast_int(ext["queueId"]), fast_long(ext["commitOffset"])
    except (KeyError, SlowPath):
        h = UpdateConsumerOffsetRequestHeader.from_ext(ext)
        group, topic, qid, offset = h.consumer_group, h.topic, h.queue_id, h.commit_offset
    broker.offsets.commit(group, topic, qid, offset)
    return req.response(ResponseCode.SUCCESS)


def get_max_offset(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = GetMaxOffsetRequestHeader.from_ext(req.ext_fields)
    return req.response(
        ResponseCode.SUCCESS, None, {"offset": str(broker.store.max_offset(h.topic, h.queue_id))}
    )


def get_min_offset(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = GetMinOffsetRequestHeader.from_ext(req.ext_fields)
    return req.response(
        ResponseCode.SUCCESS, None, {"offset": str(broker.store.min_offset(h.topic, h.queue_id))}
    )


def get_earliest_msg_storetime(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    h = GetEarliestMsgStoretimeRequestHeader.from_ext(req.ext_fields)
    ts = broker.store.earliest_message_time(h.topic, h.queue_id)
    return req.response(ResponseCode.SUCCESS, None, {"timestamp": str(ts)})


def search_offset_by_timestamp(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    h = SearchOffsetRequestHeader.from_ext(req.ext_fields)
    offset = broker.store.search_offset_by_timestamp(h.topic, h.queue_id, h.timestamp)
    return req.response(ResponseCode.SUCCESS, None, {"offset": str(offset)})


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.QUERY_CONSUMER_OFFSET: query_consumer_offset,
    RequestCode.UPDATE_CONSUMER_OFFSET: update_consumer_offset,
    RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: search_offset_by_timestamp,
    RequestCode.GET_MAX_OFFSET: get_max_offset,
    RequestCode.GET_MIN_OFFSET: get_min_offset,
    RequestCode.GET_EARLIEST_MSG_STORETIME: get_earliest_msg_storetime,
}
