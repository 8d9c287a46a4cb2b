# Licensed under the Apache License, Version 2.0. See LICENSE.
"""INVOKE_BROKER_TO_RESET_OFFSET (222): reset a consumer group's offsets to a time
(mqadmin resetOffsetByTime); INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223): the offsets the group's
consumers hold (mqadmin getConsumerStatus).

Mirrors ``AdminBrokerProcessor.resetOffset`` and ``Broker2Client.resetOffset`` of 4.9.8. For each
write queue of the topic, the offset of the first message stored at or after ``timestamp`` (the
queue's end for -1; 0 when the store has none) is taken when ``isForce`` is set or it is before
the group's committed offset, else the committed offset stays. The broker itself commits nothing:
it sends RESET_CONSUMER_CLIENT_OFFSET (220, oneway) with the table to every consumer of the group
online, and they move and commit; the answer is SUCCESS with the table (``ResetOffsetBody``).
Refusals, with Java's remarks: a topic the broker does not have; a group with no committed offset
for a queue; no consumer online (CONSUMER_NOT_ONLINE, on which mqadmin falls back to committing
the offsets itself); a client older than V3_0_7_SNAPSHOT. A request in the CPP language gets the
list form (``ResetOffsetBodyForC``) in what is sent to the clients, as Java does. The success
carries the remark ``not set any response code`` as Java's does.

The status (``Broker2Client.getConsumeStatus``) asks each consumer of the group (or only the one
whose client id is ``clientAddr``) GET_CONSUMER_STATUS_FROM_CLIENT (221, 5 s each) and answers
their ``messageQueueTable`` by client id; a consumer that fails or does not answer is left out.
No consumer online is SYSTEM_ERROR "No Any Consumer online in the consumer group: [g]".
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from wire import LanguageCode, MQVersion, RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection, RemotingIOError
from wire.bodies import (
    GetConsumerStatusBody,
    MessageQueue,
    ResetOffsetBody,
    ResetOffsetBodyForC,
    ResetOffsetEntryForC,
)
from wire.errors import WireError
from wire.headers import GetConsumerStatusRequestHeader, ResetOffsetRequestHeader, request

from .common import NOT_SET_REMARK, BrokerHandler, peer_addr, queue_of

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS"]

log = logging.getLogger("reference_broker.broker")

_V3_0_7 = int(MQVersion.V3_0_7_SNAPSHOT)
#: GET_CONSUMER_STATUS_FROM_CLIENT: invokeSync with 5 s
STATUS_TIMEOUT_S = 5.0


def version_desc(version: int) -> str:
    """``MQVersion.getVersionDesc``."""
    try:
        return MQVersion(version).name
    except ValueError:
        return "HIGHER_VERSION"


def reset_offset(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = ResetOffsetRequestHeader.from_ext(req.ext_fields)
    log.info("[reset-offset] reset offset started by %s. topic=%s, group=%s, timestamp=%d, isForce=%s",
             peer_addr(conn), h.topic, h.group, h.timestamp, h.is_force)
    is_c = req.language in (LanguageCode.CPP, "CPP")
    tc = broker.topics.select(h.topic)
    if tc is None:
        remark = f"[reset-offset] reset offset failed, no topic in this broker. topic={h.topic}"
        log.error(remark)
        return req.response(ResponseCode.SYSTEM_ERROR, remark)
    store = broker.store
    table: dict[MessageQueue, int] = {}
    for queue_id in range(tc.write_queue_nums):
        mq = queue_of(broker, h.topic, queue_id)
        committed = broker.offsets.query(h.group, h.topic, queue_id)
        if committed == -1:
            return req.response(ResponseCode.SYSTEM_ERROR, f"THe consumer group <{h.group}> not exist")
        if h.timestamp == -1:
            at = store.max_offset(h.topic, queue_id)
        else:
            at = store.search_offset_by_timestamp(h.topic, queue_id, h.timestamp)
        if at < 0:
            log.warning("reset offset is invalid. topic=%s, queueId=%d, timeStampOffset=%d",
                        h.topic, queue_id, at)
            at = 0
        table[mq] = at if h.is_force or at < committed else committed
    if is_c:
        body = ResetOffsetBodyForC(offset_table=tuple(
            ResetOffsetEntryForC(topic=mq.topic, broker_name=mq.broker_name, queue_id=mq.queue_id, offset=o)
            for mq, o in table.items())).encode()
    else:
        body = ResetOffsetBody(offset_table=table).encode()
    # the request's header as Broker2Client fills it: isForce stays false
    to_clients = request(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, ResetOffsetRequestHeader(
        topic=h.topic, group=h.group, timestamp=h.timestamp, is_force=False), body)
    info = broker.consumers.get(h.group)
    if info is None or not info.channels:
        remark = (f"Consumer not online, so can not reset offset, Group: {h.group} Topic: {h.topic} "
                  f"Timestamp: {h.timestamp}")
        log.error(remark)
        return req.response(ResponseCode.CONSUMER_NOT_ONLINE, remark)
    for channel, client in list(info.channels.items()):
        if client.version < _V3_0_7:
            log.warning("[reset-offset] the client does not support this feature. channel=%s, version=%s",
                        client.addr, version_desc(client.version))
            return req.response(ResponseCode.SYSTEM_ERROR, "the client does not support this feature. "
                                f"version={version_desc(client.version)}")
        try:
            channel.oneway(to_clients)  # type: ignore[attr-defined]
            log.info("[reset-offset] reset offset success. topic=%s, group=%s, clientId=%s", h.topic, h.group,
                     client.client_id)
        except (RemotingIOError, OSError) as exc:
            log.error("[reset-offset] reset offset exception. topic=%s, group=%s ,error=%s", h.topic, h.group,
                      exc)
    # made by createResponseCommand(null), whose remark the success leaves in place
    return req.response(ResponseCode.SUCCESS, NOT_SET_REMARK, None,
                        ResetOffsetBody(offset_table=table).encode())


def get_consumer_status(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = GetConsumerStatusRequestHeader.from_ext(req.ext_fields)
    log.info("[get-consumer-status] get consumer status by %s. topic=%s, group=%s", peer_addr(conn), h.topic,
             h.group)
    info = broker.consumers.get(h.group)
    if info is None or not info.channels:
        return req.response(ResponseCode.SYSTEM_ERROR,
                            f"No Any Consumer online in the consumer group: [{h.group}]")
    asked = []
    for channel, client in list(info.channels.items()):
        if client.version < _V3_0_7:
            return req.response(ResponseCode.SYSTEM_ERROR, "the client does not support this feature. "
                                f"version={version_desc(client.version)}")
        if not h.client_addr or h.client_addr == client.client_id:
            asked.append((channel, client.client_id))
            if h.client_addr:
                break
    return _gather_status(req, h, asked)


async def _gather_status(req: RemotingCommand, h: GetConsumerStatusRequestHeader,
                         asked: list[tuple[object, str]]) -> RemotingCommand:
    ask = request(RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT,
                  GetConsumerStatusRequestHeader(topic=h.topic, group=h.group))
    table: dict[str, dict[MessageQueue, int]] = {}
    for channel, client_id in asked:
        assert isinstance(channel, RemotingConnection)
        try:
            answer = await channel.request(ask, timeout=STATUS_TIMEOUT_S)
            if answer.code == ResponseCode.SUCCESS and answer.body is not None:
                table[client_id] = dict(GetConsumerStatusBody.decode(answer.body).message_queue_table)
        except (RemotingIOError, OSError, WireError) as exc:
            log.error("[get-consumer-status] get consumer status exception. topic=%s, group=%s, error=%s",
                      h.topic, h.group, exc)
    return req.response(ResponseCode.SUCCESS, NOT_SET_REMARK, None,
                        GetConsumerStatusBody(consumer_table=table).encode())


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: reset_offset,
    RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: get_consumer_status,
}
