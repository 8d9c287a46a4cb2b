# Licensed under the Apache License, Version 2.0. See LICENSE.
"""SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2 (325): request-reply messaging.

Mirrors ``ReplyMessageProcessor`` of 4.9.8. A requester (``DefaultMQProducer.request``) sends an
ordinary message carrying ``CORRELATION_ID`` and ``REPLY_TO_CLIENT`` (its client id); the
responder answers with a message made by ``MessageUtil.createReplyMessage`` (topic
``<cluster>_REPLY_TOPIC``), which its producer sends with the reply codes. The broker then:

1. checks the send as any send (``msgCheck``: topic name, forbidden topics, creation from the
   default topic, the queue id);
2. pushes the reply to the requester: PUSH_REPLY_MESSAGE_TO_CLIENT (326) with a
   ``ReplyMessageRequestHeader`` (the send's fields, the born and store hosts, the store time)
   and the body, on the connection of the producer whose client id is ``REPLY_TO_CLIENT``
   (``ProducerManager.findChannel``), the properties with ``PUSH_REPLY_TIME`` added, waiting up to
   10 s for the client's answer (``Broker2Client.callClient``);
3. answers SUCCESS with msgId ``0``, the queue and queue offset 0 when the push succeeded, else
   SYSTEM_ERROR with Java's remark (no ``REPLY_TO_CLIENT``; no channel for it; the client failed);
4. with ``storeReplyMessageEnable`` (default true), also stores the reply in its topic, with the
   producer's properties string as sent and sysFlag 0 (Java does not copy the header's), and
   when the store took it puts its msgId and queue offset in the answer, whatever the push did.
"""

from __future__ import annotations

import logging
import random
import time
from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection, RemotingIOError
from wire.headers import ReplyMessageRequestHeader, request
from wire.message import MessageConst, decode_properties

from ...store import MessageToStore, PutResult
from ..props import java_properties_text
from .common import BrokerHandler, java_bool
from .send import SendHeader, _msg_check, parse_send_header

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS"]

log = logging.getLogger("reference_broker.broker")

#: ``Broker2Client.callClient``: invokeSync with 10 s
PUSH_TIMEOUT_S = 10.0
_RANDOM_QUEUE_SPAN = 99999999
_REPLY_TO = MessageConst.PROPERTY_MESSAGE_REPLY_TO_CLIENT
_PUSH_TIME = "PUSH_REPLY_TIME"


def _host(addr: tuple[str, int]) -> str:
    return f"{addr[0]}:{addr[1]}"


def send_reply_message(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """The SEND_REPLY_MESSAGE(_V2) handler; the header is decoded before the push is awaited."""
    h = parse_send_header(req)
    checked = _msg_check(broker, conn, req, h)
    if isinstance(checked, RemotingCommand):
        return checked
    queue_id = h.queue_id
    if queue_id < 0:
        queue_id = random.randrange(_RANDOM_QUEUE_SPAN) % checked.write_queue_nums
    return _reply(broker, conn, req, h, queue_id)


async def _reply(broker: Broker, conn: RemotingConnection, req: RemotingCommand, h: SendHeader,
                 queue_id: int) -> RemotingCommand:
    values = decode_properties(h.properties) if h.properties else {}
    pushed, remark = await _push(broker, conn, h, values, req.body or b"")
    ext = {"MSG_REGION": broker.region_id, "TRACE_ON": broker.trace_on_text}
    if pushed:
        code = int(ResponseCode.SUCCESS)
        ext.update(msgId="0", queueId=str(queue_id), queueOffset="0")
    else:
        code = int(ResponseCode.SYSTEM_ERROR)
    if broker.config.bool("storeReplyMessageEnable"):
        wait = values.get(MessageConst.PROPERTY_WAIT_STORE_MSG_OK)
        msg = MessageToStore(h.topic, queue_id, req.body or b"", h.born_timestamp, conn.peer, h.flag,
                             h.properties or "", 0, h.reconsume_times or 0, parsed_properties=values,
                             wait_store_msg_ok=wait is None or java_bool(wait))
        put = broker.store.put(msg)
        result = put if isinstance(put, PutResult) else await put
        if result.status.stored:
            ext.update(msgId=result.msg_id, queueId=str(queue_id), queueOffset=str(result.queue_offset))
    return req.response(code, remark, ext)


async def _push(broker: Broker, conn: RemotingConnection, h: SendHeader, values: dict[str, str],
                body: bytes) -> tuple[bool, str | None]:
    """``pushReplyMessage``: (pushed, the remark when not)."""
    sender = values.get(_REPLY_TO)
    if sender is None:
        log.warning("%s is null, can not reply message", _REPLY_TO)
        return False, f"reply message properties[{_REPLY_TO}] is null"
    channel = broker.producers.find_channel(sender)
    if channel is None:
        remark = f"push reply message fail, channel of <{sender}> not found."
        log.warning(remark)
        return False, remark
    props = dict(values)
    props[_PUSH_TIME] = str(time.time_ns() // 1_000_000)
    header = ReplyMessageRequestHeader(
        producer_group=h.producer_group, topic=h.topic, default_topic=h.default_topic,
        default_topic_queue_nums=h.default_topic_queue_nums, queue_id=h.queue_id, sys_flag=h.sys_flag,
        born_timestamp=h.born_timestamp, flag=h.flag,
        properties=java_properties_text((*values, _PUSH_TIME), props),
        reconsume_times=h.reconsume_times, unit_mode=h.unit_mode, born_host=_host(conn.peer),
        store_host=_host(broker.store_host), store_timestamp=time.time_ns() // 1_000_000)
    try:
        answer = await channel.request(request(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, header, body),
                                       timeout=PUSH_TIMEOUT_S)
    except (RemotingIOError, OSError) as exc:
        log.warning("push reply message to <%s> fail. %s", sender, exc)
        return False, f"push reply message to {sender}fail."
    if answer.code != ResponseCode.SUCCESS:
        log.warning("push reply message to <%s> return fail, response remark: %s", sender, answer.remark)
        return False, f"push reply message to {sender}fail."
    return True, None


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.SEND_REPLY_MESSAGE: send_reply_message,
    RequestCode.SEND_REPLY_MESSAGE_V2: send_reply_message,
}
