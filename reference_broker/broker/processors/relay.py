# Licensed under the Apache License, Version 2.0. See LICENSE.
"""GET_CONSUMER_RUNNING_INFO (307) and CONSUME_MESSAGE_DIRECTLY (309): admin requests the broker
relays to one consumer (mqadmin consumerStatus, consumeMessageDirectly; the dashboards).

Mirrors ``AdminBrokerProcessor.callConsumer`` of 4.9.8: the consumer is found by group and client
id among the group's connections ("The Consumer <g> <c> not online" otherwise); a client older than
V3_1_8_SNAPSHOT is refused; the request goes to it with the same ext fields and body (for
CONSUME_MESSAGE_DIRECTLY the broker adds ``brokerName`` and the stored message the offset id
``msgId`` names, whole, as the body), and its answer (code, remark, fields, body) is the answer,
within 10 s (else CONSUME_MSG_TIMEOUT).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from wire import MQVersion, RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection, RemotingIOError, RequestTimeout
from wire.errors import DecodeError
from wire.headers import ConsumeMessageDirectlyResultRequestHeader, GetConsumerRunningInfoRequestHeader
from wire.message import decode_offset_msg_id

from .common import BrokerHandler
from .reset import version_desc

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS"]

log = logging.getLogger("reference_broker.broker")

#: ``Broker2Client.callClient``: invokeSync with 10 s
CALL_TIMEOUT_S = 10.0
_V3_1_8 = int(MQVersion.V3_1_8_SNAPSHOT)


def get_consumer_running_info(broker: Broker, conn: RemotingConnection,
                              req: RemotingCommand) -> HandlerResult:
    h = GetConsumerRunningInfoRequestHeader.from_ext(req.ext_fields)
    return _call_consumer(broker, RequestCode.GET_CONSUMER_RUNNING_INFO, req, h.consumer_group,
                          h.client_id, dict(req.ext_fields), req.body)


def consume_message_directly(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = ConsumeMessageDirectlyResultRequestHeader.from_ext(req.ext_fields)
    ext = {**req.ext_fields, "brokerName": broker.config.broker_name}
    body = req.body
    if h.msg_id is not None:
        try:
            record = broker.store.lookup_message(decode_offset_msg_id(h.msg_id).offset)
        except DecodeError:
            record = None
        if record is not None:
            body = record
    return _call_consumer(broker, RequestCode.CONSUME_MESSAGE_DIRECTLY, req, h.consumer_group,
                          h.client_id or "", ext, body)


def _call_consumer(broker: Broker, code: int, req: RemotingCommand, group: str, client_id: str,
                   ext: dict[str, str], body: bytes | None) -> HandlerResult:
    """``callConsumer``: the refusals now, else a coroutine of the client's answer."""
    info = broker.consumers.get(group)
    client = info.find_channel(client_id) if info is not None else None
    if client is None:
        return req.response(ResponseCode.SYSTEM_ERROR, f"The Consumer <{group}> <{client_id}> not online")
    if client.version < _V3_1_8:
        return req.response(ResponseCode.SYSTEM_ERROR, f"The Consumer <{client_id}> Version "
                            f"<{version_desc(client.version)}> too low to finish, please upgrade it to "
                            "V3_1_8_SNAPSHOT")
    return _relay(code, req, group, client_id, client.channel, ext, body)


async def _relay(code: int, req: RemotingCommand, group: str, client_id: str, channel: object,
                 ext: dict[str, str], body: bytes | None) -> RemotingCommand:
    assert isinstance(channel, RemotingConnection)
    try:
        answer = await channel.request(RemotingCommand.request(code, ext, body), timeout=CALL_TIMEOUT_S)
    except RequestTimeout as exc:
        return req.response(ResponseCode.CONSUME_MSG_TIMEOUT,
                            f"consumer <{group}> <{client_id}> Timeout: {exc}")
    except (RemotingIOError, OSError) as exc:
        log.warning("invoke consumer <%s> <%s>: %s", group, client_id, exc)
        return req.response(ResponseCode.SYSTEM_ERROR,
                            f"invoke consumer <{group}> <{client_id}> Exception: {exc}")
    return req.response(answer.code, answer.remark, answer.ext_fields, answer.body)


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.GET_CONSUMER_RUNNING_INFO: get_consumer_running_info,
    RequestCode.CONSUME_MESSAGE_DIRECTLY: consume_message_directly,
}
