# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Client management: HEART_BEAT (34), UNREGISTER_CLIENT (35), GET_CONSUMER_LIST_BY_GROUP (38),
LOCK_BATCH_MQ (41), UNLOCK_BATCH_MQ (42) (``ClientManageProcessor``, ``ConsumerManageProcessor``,
``AdminBrokerProcessor``).

A heartbeat registers the connection as the channel of its client id in each producer and
consumer group it names (enum fields by name or, from the C++ client, by ordinal). For each
consumer group the subscription group is looked up (created when allowed) and its retry topic
``%RETRY%<group>`` is created with ``retryQueueNums`` queues; when the group's channels or topics
change, every channel of the group gets NOTIFY_CONSUMER_IDS_CHANGED (unless the group or the
broker turned notification off).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection
from wire.bodies import (
    CheckClientRequestBody,
    GetConsumerListByGroupResponseBody,
    HeartbeatData,
    LockBatchRequestBody,
    LockBatchResponseBody,
    UnlockBatchRequestBody,
)
from wire.headers import GetConsumerListByGroupRequestHeader, UnregisterClientRequestHeader

from ...bodies import BodyDecoders, request_body
from .. import constants as C
from ..clients import ClientChannelInfo
from ..filters import compile_failure, is_tag_type
from .common import BrokerHandler, peer_addr

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS"]


def _channel_info(conn: RemotingConnection, req: RemotingCommand, client_id: str) -> ClientChannelInfo:
    return ClientChannelInfo(conn, client_id, req.language, req.version, peer_addr(conn))


def heartbeat_body(req: RemotingCommand) -> HeartbeatData:
    """The HEART_BEAT body (the handler's and the ACL's decoding)."""
    return HeartbeatData.decode(req.body or b"")


def _lock_body(req: RemotingCommand) -> LockBatchRequestBody:
    return LockBatchRequestBody.decode(req.body or b"")


def _unlock_body(req: RemotingCommand) -> UnlockBatchRequestBody:
    return UnlockBatchRequestBody.decode(req.body or b"")


def heart_beat(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """``ClientManageProcessor.heartBeat``."""
    hb = request_body(conn, req, heartbeat_body)
    client_id = hb.client_id or ""
    for data in hb.consumer_data_set:
        group = data.group_name or ""
        sgc = broker.groups.find(group)
        notify = True
        if sgc is not None:
            notify = sgc.notify_consumer_ids_changed_enable
            topic_sys_flag = C.build_topic_sys_flag(False, bool(data.unit_mode))
            _, created = broker.topics.create_in_send_back(
                C.retry_topic(group), sgc.retry_queue_nums, C.PERM_WRITE | C.PERM_READ, topic_sys_flag
            )
            if created:
                broker.register_soon(oneway=True)
        broker.consumers.register(
            group,
            _channel_info(conn, req, client_id),
            data.consume_type,
            data.message_model,
            data.consume_from_where,
            data.subscription_data_set,
            notify,
        )
    for pdata in hb.producer_data_set:
        broker.producers.register(pdata.group_name or "", _channel_info(conn, req, client_id))
    return req.response(ResponseCode.SUCCESS)


def unregister_client(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """``ClientManageProcessor.unregisterClient``."""
    h = UnregisterClientRequestHeader.from_ext(req.ext_fields)
    if h.producer_group is not None:
        broker.producers.unregister(h.producer_group, conn)
    if h.consumer_group is not None:
        sgc = broker.groups.find(h.consumer_group)
        notify = sgc.notify_consumer_ids_changed_enable if sgc is not None else True
        broker.consumers.unregister(h.consumer_group, conn, notify)
    return req.response(ResponseCode.SUCCESS)


def get_consumer_list_by_group(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    """``ConsumerManageProcessor.getConsumerListByGroup``."""
    h = GetConsumerListByGroupRequestHeader.from_ext(req.ext_fields)
    info = broker.consumers.get(h.consumer_group)
    if info is not None:
        ids = info.client_ids()
        if ids:
            body = GetConsumerListByGroupResponseBody(consumer_id_list=tuple(ids)).encode()
            return req.response(ResponseCode.SUCCESS, None, None, body)
    return req.response(ResponseCode.SYSTEM_ERROR, f"no consumer for this group, {h.consumer_group}")


def lock_batch_mq(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """``AdminBrokerProcessor.lockBatchMQ``."""
    body = request_body(conn, req, _lock_body)
    locked = broker.locks.try_lock_batch(body.consumer_group or "", body.mq_set, body.client_id or "")
    return req.response(
        ResponseCode.SUCCESS, None, None, LockBatchResponseBody(lock_ok_mq_set=tuple(locked)).encode()
    )


def unlock_batch_mq(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """``AdminBrokerProcessor.unlockBatchMQ``."""
    body = request_body(conn, req, _unlock_body)
    broker.locks.unlock_batch(body.consumer_group or "", body.mq_set, body.client_id or "")
    return req.response(ResponseCode.SUCCESS)


def _check_client_body(req: RemotingCommand) -> CheckClientRequestBody:
    return CheckClientRequestBody.decode(req.body or b"")


def check_client_config(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """CHECK_CLIENT_CONFIG (46), ``ClientManageProcessor.checkClientConfig``: a TAG subscription
    passes; any other needs ``enablePropertyFilter`` and an expression that compiles, else
    SUBSCRIPTION_PARSE_FAILED with the compiler's message as the remark (:mod:`..filters`)."""
    if not req.body:
        return req.response(ResponseCode.SUCCESS)
    sub = request_body(conn, req, _check_client_body).subscription_data
    if sub is not None:
        if is_tag_type(sub.expression_type):
            return req.response(ResponseCode.SUCCESS)
        if not broker.property_filter_enable:
            return req.response(
                ResponseCode.SYSTEM_ERROR,
                f"The broker does not support consumer to filter message by {sub.expression_type}")
        failure = compile_failure(sub.expression_type, sub.sub_string)
        if failure is not None:
            return req.response(ResponseCode.SUBSCRIPTION_PARSE_FAILED, failure or None)
    return req.response(ResponseCode.SUCCESS)


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.HEART_BEAT: heart_beat,
    RequestCode.UNREGISTER_CLIENT: unregister_client,
    RequestCode.GET_CONSUMER_LIST_BY_GROUP: get_consumer_list_by_group,
    RequestCode.LOCK_BATCH_MQ: lock_batch_mq,
    RequestCode.UNLOCK_BATCH_MQ: unlock_batch_mq,
    RequestCode.CHECK_CLIENT_CONFIG: check_client_config,
}

#: request code -> the decoding of its body (run off the event loop for a large body)
BODIES: BodyDecoders = {
    RequestCode.HEART_BEAT: heartbeat_body,
    RequestCode.LOCK_BATCH_MQ: _lock_body,
    RequestCode.UNLOCK_BATCH_MQ: _unlock_body,
    RequestCode.CHECK_CLIENT_CONFIG: _check_client_body,
}
