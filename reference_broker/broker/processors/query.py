# Licensed under the Apache License, Version 2.0. See LICENSE.
"""QUERY_MESSAGE (12) and VIEW_MESSAGE_BY_ID (33) (``QueryMessageProcessor``).

QUERY_MESSAGE looks a key up in the index (``topic#key`` for every KEYS word and for UNIQ_KEY);
with the ext field ``_UNIQUE_KEY_QUERY=true`` (a query by message id) the number of results is
``defaultQueryMaxNum`` whatever ``maxNum`` says. The answer carries
``indexLastUpdateTimestamp``/``indexLastUpdatePhyoffset`` and the stored records back to back, or
QUERY_NOT_FOUND. VIEW_MESSAGE_BY_ID answers the stored record at a CommitLog offset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection
from wire.headers import QueryMessageRequestHeader, ViewMessageRequestHeader

from .common import BrokerHandler

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS", "UNIQUE_MSG_QUERY_FLAG"]

#: ``MixAll.UNIQUE_MSG_QUERY_FLAG``
UNIQUE_MSG_QUERY_FLAG = "_UNIQUE_KEY_QUERY"


def query_message(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = QueryMessageRequestHeader.from_ext(req.ext_fields)
    max_num = h.max_num
    if req.ext_fields.get(UNIQUE_MSG_QUERY_FLAG) == "true":
        max_num = broker.config.int("defaultQueryMaxNum")
    result = broker.store.query_message_result(h.topic, h.key, max_num, h.begin_timestamp, h.end_timestamp)
    ext = {
        "indexLastUpdateTimestamp": str(result.index_last_update_timestamp),
        "indexLastUpdatePhyoffset": str(result.index_last_update_phyoffset),
    }
    if result.messages:
        return req.response(ResponseCode.SUCCESS, None, ext, b"".join(result.messages))
    return req.response(
        ResponseCode.QUERY_NOT_FOUND, "can not find message, maybe time range not correct", ext
    )


def view_message_by_id(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = ViewMessageRequestHeader.from_ext(req.ext_fields)
    record = broker.store.lookup_message(h.offset)
    if record is not None:
        return req.response(ResponseCode.SUCCESS, None, None, record)
    return req.response(ResponseCode.SYSTEM_ERROR, f"can not find message by the offset, {h.offset}")


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.QUERY_MESSAGE: query_message,
    RequestCode.VIEW_MESSAGE_BY_ID: view_message_by_id,
}
