# Licensed under the Apache License, Version 2.0. See LICENSE.
"""PULL_MESSAGE (11), mirroring ``PullMessageProcessor.processRequest`` of 4.9.8.

Checks in Java's order: broker read permission; the subscription group (created on the fly with
``autoCreateSubscriptionGroup``) and its ``consumeEnable``; the topic, its read permission and
the queue id. The subscription comes from the request when the SUBSCRIPTION flag is set (a tag
expression, ``FilterAPI.build``), else from the group's heartbeat: a group that never sent one
answers SUBSCRIPTION_NOT_EXIST "the consumer's group info not exist" (10-error-responses,
case 4). The store's status becomes the code of PROTOCOL.md §3.4, the remark is the status name
(``OFFSET_OVERFLOW_BADLY``…), and the header carries ``suggestWhichBrokerId``,
``nextBeginOffset``, ``minOffset`` and ``maxOffset``; a SUCCESS body is the stored records back to
back. PULL_OFFSET_MOVED on a master also stores an ``OFFSET_MOVED_EVENT`` message, as Java does.

PULL_NOT_FOUND with the SUSPEND flag is parked in the :mod:`..longpoll` service for
``suspendTimeoutMillis`` (``shortPollingTimeMills`` without ``longPollingEnable``); the retry it
runs is this same function with suspending and offset committing off. With the COMMIT_OFFSET flag,
a master stores ``commitOffset`` for the group (the piggyback commit), after the pull is served
or parked.
"""

from __future__ import annotations

import json
import logging
import time
from functools import lru_cache
from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode, SerializeType
from wire.aio import Gathered, HandlerResult, RemotingConnection
from wire.bodies import MessageModel, SubscriptionData
from wire.framing import PREFIX
from wire.headers import PullMessageRequestHeader
from wire.message import MessageConst, java_string_hash
from wire.remoting import DEFAULT_VERSION, encode_command_head
from wire.sql92 import Selector

from ...store import GetStatus, MessageToStore, MessageViews, PutResult
from .. import constants as C
from ..filters import selector_of
from ..props import java_properties_text
from .common import BrokerHandler, peer_addr

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS", "PullHeader", "found_head", "parse_pull_header", "tag_codes"]

_SUSPEND = C.PullSysFlag.SUSPEND
_COMMIT = C.PullSysFlag.COMMIT_OFFSET
_SUBSCRIPTION = C.PullSysFlag.SUBSCRIPTION

_CODES = {
    GetStatus.FOUND: int(ResponseCode.SUCCESS),
    GetStatus.MESSAGE_WAS_REMOVING: int(ResponseCode.PULL_RETRY_IMMEDIATELY),
    GetStatus.NO_MATCHED_MESSAGE: int(ResponseCode.PULL_RETRY_IMMEDIATELY),
    GetStatus.OFFSET_FOUND_NULL: int(ResponseCode.PULL_NOT_FOUND),
    GetStatus.OFFSET_OVERFLOW_BADLY: int(ResponseCode.PULL_OFFSET_MOVED),
    GetStatus.OFFSET_OVERFLOW_ONE: int(ResponseCode.PULL_NOT_FOUND),
    GetStatus.OFFSET_TOO_SMALL: int(ResponseCode.PULL_OFFSET_MOVED),
}
_NO_QUEUE = (GetStatus.NO_MATCHED_LOGIC_QUEUE, GetStatus.NO_MESSAGE_IN_QUEUE)


class PullHeader:
    """The PULL_MESSAGE header fields the broker uses."""

    __slots__ = (
        "commit_offset",
        "consumer_group",
        "expression_type",
        "max_msg_nums",
        "queue_id",
        "queue_offset",
        "sub_version",
        "subscription",
        "suspend_timeout_millis",
        "sys_flag",
        "topic",
    )

    def __init__(
        self,
        consumer_group: str,
        topic: str,
        queue_id: int,
        queue_offset: int,
        max_msg_nums: int,
        sys_flag: int,
        commit_offset: int,
        suspend_timeout_millis: int,
        subscription: str | None,
        sub_version: int,
        expression_type: str | None,
    ) -> None:
        self.consumer_group = consumer_group
        self.topic = topic
        self.queue_id = queue_id
        self.queue_offset = queue_offset
        self.max_msg_nums = max_msg_nums
        self.sys_flag = sys_flag
        self.commit_offset = commit_offset
        self.suspend_timeout_millis = suspend_timeout_millis
        self.subscription = subscription
        self.sub_version = sub_version
        self.expression_type = expression_type


def parse_pull_header(req: RemotingCommand) -> PullHeader:
    """The pull header; :class:`wire.DecodeError` as the typed header gives it when malformed."""
    ext = req.ext_fields
    try:
        qid, off, nums, flag = ext["queueId"], ext["queueOffset"], ext["maxMsgNums"], ext["sysFlag"]
        commit, suspend, version = ext["commitOffset"], ext["suspendTimeoutMillis"], ext["subVersion"]
        # the numbers as the processors' fast_int and fast_long are read (plain non-negative decimals that
        # fit), checked together; anything else is the typed header's to read or refuse
        digits = qid + off + nums + flag + commit + suspend + version
        if (digits.isdigit() and digits.isascii() and 0 < len(qid) <= 9 and 0 < len(nums) <= 9
                and 0 < len(flag) <= 9 and 0 < len(off) <= 18 and 0 < len(commit) <= 18
                and 0 < len(suspend) <= 18 and 0 < len(version) <= 18):
            return PullHeader(ext["consumerGroup"], ext["topic"], int(qid), int(off), int(nums), int(flag),
                              int(commit), int(suspend), ext.get("subscription"), int(version),
                              ext.get("expressionType"))
    except KeyError:
        pass
    t = PullMessageRequestHeader.from_ext(ext)
    return PullHeader(
        t.consumer_group,
        t.topic,
        t.queue_id,
        t.queue_offset,
        t.max_msg_nums,
        t.sys_flag,
        t.commit_offset,
        t.suspend_timeout_millis,
        t.subscription,
        t.sub_version,
        t.expression_type,
    )


log = logging.getLogger("reference_broker.broker")

#: the longest tag expression a pull is filtered by (``tagA || tagB``, a few dozen characters in
#: practice): its tags are hashed on the event loop, and 9 MB of them took seconds at every pull
#: (Java has no bound; it hashes them in its pull pool)
MAX_TAG_EXPRESSION = 64 * 1024


class SubscriptionTooLong(ValueError):
    """A tag expression longer than :data:`MAX_TAG_EXPRESSION`."""


@lru_cache(maxsize=1024)
def tag_codes(sub_string: str | None) -> frozenset[int] | None:
    """``FilterAPI.buildSubscriptionData``: the tag hash codes of ``tagA || tagB``, or None for all.
    An expression longer than :data:`MAX_TAG_EXPRESSION` raises :class:`SubscriptionTooLong`."""
    if sub_string is None or sub_string == C.SUB_ALL or not sub_string:
        return None
    if len(sub_string) > MAX_TAG_EXPRESSION:
        raise SubscriptionTooLong(f"the tag expression is {len(sub_string)} characters long; at most "
                                  f"{MAX_TAG_EXPRESSION} are read")
    tags = {t.strip() for t in sub_string.split("||")}
    tags.discard("")
    return frozenset(java_string_hash(t) for t in tags)


def _codes_of(sub: SubscriptionData) -> frozenset[int] | None:
    """The codes a heartbeat subscription filters on (its ``codeSet``; a client that left the
    set out but named tags gets the codes of those tags)."""
    if sub.class_filter_mode or sub.sub_string in (None, "", C.SUB_ALL):
        return None
    if sub.code_set:
        return frozenset(sub.code_set)
    if sub.tags_set:
        return frozenset(java_string_hash(t) for t in sub.tags_set)
    return tag_codes(sub.sub_string)


def _is_tag_type(expression_type: str | None) -> bool:
    """``ExpressionType.isTagType``."""
    return expression_type is None or expression_type == "" or expression_type == "TAG"


def pull_message(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    return process_pull(broker, conn, req, parse_pull_header(req), True)


def process_pull(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand, h: PullHeader, allow_suspend: bool
) -> HandlerResult:
    """``processRequest(channel, request, brokerAllowSuspend)``."""
    if not C.is_readable(broker.permission):
        return req.response(
            ResponseCode.NO_PERMISSION, f"the broker[{broker.config.broker_ip1}] pulling message is forbidden"
        )
    group = h.consumer_group
    sgc = broker.groups.find(group)
    if sgc is None:
        return req.response(
            ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
            f"subscription group [{group}] does not exist, {C.FAQ_SUFFIX}",
        )
    if not sgc.consume_enable:
        return req.response(ResponseCode.NO_PERMISSION, f"subscription group no permission, {group}")
    sys_flag = h.sys_flag
    topic = h.topic
    tc = broker.topics.select(topic)
    if tc is None:
        return req.response(
            ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please! {C.FAQ_SUFFIX}"
        )
    if not C.is_readable(tc.perm):
        return req.response(ResponseCode.NO_PERMISSION, f"the topic[{topic}] pulling message is forbidden")
    qid = h.queue_id
    if qid < 0 or qid >= tc.read_queue_nums:
        return req.response(
            ResponseCode.SYSTEM_ERROR,
            f"queueId[{qid}] is illegal, topic:[{topic}] topicConfig.readQueueNums:"
            f"[{tc.read_queue_nums}] consumer:[/{peer_addr(conn)}]",
        )
    codes: frozenset[int] | None
    selector: Selector | None = None
    if sys_flag & _SUBSCRIPTION:
        expression_type = h.expression_type
        if _is_tag_type(expression_type):
            try:
                codes = tag_codes(h.subscription)
            except SubscriptionTooLong as exc:  # FilterAPI.build failing is answered so
                log.warning("parse the consumer's subscription[%d chars] failed, group: %s: %s",
                            len(h.subscription or ""), group, exc)
                return req.response(
                    ResponseCode.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed"
                )
        elif not h.subscription:
            return req.response(
                ResponseCode.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed"
            )
        else:
            codes = None
            # an expression that does not compile leaves Java's filter data null (its assert is
            # off in a running broker), and a filter without data matches every message
            selector = selector_of(expression_type, h.subscription)
    else:
        cgi = broker.consumers.get(group)
        if cgi is None:
            return req.response(
                ResponseCode.SUBSCRIPTION_NOT_EXIST, f"the consumer's group info not exist{C.FAQ_SUFFIX}"
            )
        if not sgc.consume_broadcast_enable and cgi.message_model == MessageModel.BROADCASTING:
            return req.response(
                ResponseCode.NO_PERMISSION, f"the consumer group[{group}] can not consume by broadcast way"
            )
        sub = cgi.subscriptions.get(topic)
        if sub is None:
            return req.response(
                ResponseCode.SUBSCRIPTION_NOT_EXIST, f"the consumer's subscription not exist{C.FAQ_SUFFIX}"
            )
        if sub.sub_version < h.sub_version:
            return req.response(
                ResponseCode.SUBSCRIPTION_NOT_LATEST, "the consumer's subscription not latest"
            )
        expression_type = sub.expression_type
        if _is_tag_type(expression_type):
            try:
                codes = _codes_of(sub)
            except SubscriptionTooLong as exc:
                log.warning("the consumer's subscription of group %s cannot be used: %s", group, exc)
                return req.response(
                    ResponseCode.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed"
                )
        else:
            # ConsumerFilterManager.get: the filter the heartbeat registered
            codes = None
            selector = selector_of(expression_type, sub.sub_string)
            if selector is None:
                return req.response(
                    ResponseCode.FILTER_DATA_NOT_EXIST,
                    "The broker's consumer filter data is not exist!Your expression may be wrong!",
                )
    if not _is_tag_type(expression_type) and not broker.property_filter_enable:
        return req.response(
            ResponseCode.SYSTEM_ERROR,
            f"The broker does not support consumer to filter message by {expression_type}",
        )

    store = broker.store
    if codes is None and selector is None and allow_suspend:
        # the common pull: the records as views of the mapped CommitLog, written as they are
        found = store.get_message_views(topic, qid, h.queue_offset, h.max_msg_nums)
        if found is not None:
            return _found(broker, req, h, sgc.broker_id, found)
    r = store.get_messages(group, topic, qid, h.queue_offset, h.max_msg_nums, codes,
                           properties_filter=None if selector is None else selector.matches)
    status = r.status
    if broker.slave_read_enable:
        suggest = sgc.which_broker_when_consume_slowly if r.suggest_pull_from_slave else sgc.broker_id
    else:
        suggest = C.MASTER_ID
    if status in _NO_QUEUE:
        code = (
            int(ResponseCode.PULL_OFFSET_MOVED) if h.queue_offset != 0 else int(ResponseCode.PULL_NOT_FOUND)
        )
    else:
        code = _CODES[status]
    response: HandlerResult
    body = None
    if code == ResponseCode.SUCCESS:
        body = b"".join(r.messages)
        broker.group_stats.record(group, topic, len(r.messages))
        broker.stats.record("GROUP_GET_NUMS", f"{topic}@{group}", len(r.messages))
    elif code == ResponseCode.PULL_NOT_FOUND and allow_suspend and sys_flag & _SUSPEND:
        timeout = h.suspend_timeout_millis
        if not broker.long_polling_enable:
            timeout = broker.short_polling_ms

        def retry(final: bool) -> RemotingCommand | None:
            again = process_pull(broker, conn, req, h, False)
            assert again is None or isinstance(again, RemotingCommand)
            if final or again is None:
                return again
            # still nothing for this consumer (no new message, or none with a wanted tag)
            if again.code == ResponseCode.PULL_NOT_FOUND or again.remark == GetStatus.NO_MATCHED_MESSAGE.name:
                return None
            return again

        response = broker.holds.suspend(topic, qid, h.queue_offset, timeout, retry)
        _commit(broker, h, allow_suspend)
        return response
    elif code == ResponseCode.PULL_OFFSET_MOVED:
        if not broker.is_slave or broker.offset_check_in_slave:
            _offset_moved_event(broker, group, topic, qid, h.queue_offset, r.next_begin_offset)
        else:
            suggest = sgc.broker_id
            code = int(ResponseCode.PULL_RETRY_IMMEDIATELY)
    ext = {
        "suggestWhichBrokerId": str(suggest),
        "nextBeginOffset": str(r.next_begin_offset),
        "minOffset": str(r.min_offset),
        "maxOffset": str(r.max_offset),
    }
    response = req.response(code, status.name, ext, body)
    _commit(broker, h, allow_suspend)
    return response


#: the header of a FOUND answer to a JSON request, as :func:`wire.remoting.encode_json_header`
#: writes it (fastjson's sorted properties; the ext fields in the order the careful path sets them)
_FOUND_JSON = ('{{"code":0,"extFields":{{"suggestWhichBrokerId":"{}","nextBeginOffset":"{}","minOffset":"{}",'
               '"maxOffset":"{}"}},"flag":1,"language":"JAVA","opaque":{},"remark":"FOUND",'
               '"serializeTypeCurrentRPC":"JSON","version":' + str(DEFAULT_VERSION) + '}}')


def found_head(req: RemotingCommand, suggest: int, next_begin: int, min_offset: int, max_offset: int,
               body_size: int) -> bytes:
    """The frame head (length prefix and header) of the SUCCESS answer to ``req`` whose body,
    ``body_size`` bytes, is written apart: the same bytes as ``encode_command_head`` of the
    careful path's answer, from a template for JSON requests."""
    if req.serialize_type is SerializeType.JSON:
        header = _FOUND_JSON.format(suggest, next_begin, min_offset, max_offset, req.opaque).encode()
        return PREFIX.pack(4 + len(header) + body_size, len(header)) + header
    ext = {"suggestWhichBrokerId": str(suggest), "nextBeginOffset": str(next_begin),
           "minOffset": str(min_offset), "maxOffset": str(max_offset)}
    return encode_command_head(req.response(ResponseCode.SUCCESS, GetStatus.FOUND.name, ext), body_size)


def _found(broker: Broker, req: RemotingCommand, h: PullHeader, group_broker_id: int,
           found: MessageViews) -> Gathered:
    """The answer to a pull that found ``found`` (views of the CommitLog): its head, and the views
    as the body, for the connection to write as they are."""
    # suggestPullingFromSlave is false for views (every record is in the in-memory share)
    suggest = group_broker_id if broker.slave_read_enable else C.MASTER_ID
    group = h.consumer_group
    topic = h.topic
    n = found.count
    now = time.time_ns() // 1_000_000
    broker.group_stats.record(group, topic, n, now)
    broker.stats.record("GROUP_GET_NUMS", f"{topic}@{group}", n, now)
    head = found_head(req, suggest, found.next_begin_offset, found.min_offset, found.max_offset, found.size)
    _commit(broker, h, True)
    return Gathered(head, found.parts, len(head) + found.size)


def _commit(broker: Broker, h: PullHeader, allow_suspend: bool) -> None:
    # mirrors storeOffsetEnable: only the first run of a pull, with the flag, on a master
    if allow_suspend and h.sys_flag & _COMMIT and not broker.is_slave:
        broker.offsets.commit(h.consumer_group, h.topic, h.queue_id, h.commit_offset)


def _offset_moved_event(
    broker: Broker, group: str, topic: str, queue_id: int, requested: int, new: int
) -> None:
    """``generateOffsetMovedEvent``: an ``OffsetMovedEvent`` JSON message to OFFSET_MOVED_EVENT,
    tagged and keyed with the group."""
    event = {
        "consumerGroup": group,
        "messageQueue": {"brokerName": broker.config.broker_name, "queueId": queue_id, "topic": topic},
        "offsetNew": new,
        "offsetRequest": requested,
    }
    body = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    values = {
        MessageConst.PROPERTY_TAGS: group,
        MessageConst.PROPERTY_DELAY_TIME_LEVEL: "0",
        MessageConst.PROPERTY_KEYS: group,
    }
    text = java_properties_text(tuple(values), values)
    msg = MessageToStore(C.RMQ_SYS_OFFSET_MOVED_EVENT, 0, body, broker.now_ms(), broker.store_host, 0, text)
    put = broker.store.put(msg)
    if not isinstance(put, PutResult):
        broker.spawn(put)


HANDLERS: dict[int, BrokerHandler] = {RequestCode.PULL_MESSAGE: pull_message}
