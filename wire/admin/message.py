# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Messages: send (SEND_MESSAGE_V2 310), look up (VIEW_MESSAGE_BY_ID 33, QUERY_MESSAGE 12, PULL at
an offset), and read a topic from given offsets (GET_MIN_OFFSET 31, GET_MAX_OFFSET 30, PULL 11).

Mirrors the Java client as mqadmin drives it: ``SendMessageCommand`` and
``DefaultMQProducerImpl.sendDefaultImpl`` (a topic without a route is sent through the route of
``TBW102`` with ``defaultTopic=TBW102``, so that a broker with ``autoCreateTopicEnable`` creates
it), ``QueryMsgByIdSubCommand`` (an offset message id names the store host and the commit-log
offset), ``MQAdminImpl.queryMessage`` (every broker of the route is asked; hits are filtered by key
or unique key, since the index only matches hashes), ``QueryMsgByOffsetSubCommand`` and
``PrintMessageSubCommand`` / ``ConsumeMessageCommand`` (a pull consumer named ``TOOLS_CONSUMER``,
subscription ``*``).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from ..codes import RequestCode, ResponseCode
from ..errors import DecodeError, WireError
from ..message import (
    CompressionType,
    MessageConst,
    StoredMessage,
    UniqIdGenerator,
    compress_body,
    decode_messages,
    decode_offset_msg_id,
    decode_stored_message,
    encode_properties,
)
from ..topic import is_readable, is_writeable
from .client import AdminClient, gather_map
from .common import MASTER_ID, Outcome, broker_name_of, cluster_info, outcome, route, route_or_none
from .errors import AdminError, BadRequest, NotFound, ServerError
from .topic import DEFAULT_TOPIC, check_topic_name

__all__ = [
    "ConsumeResult",
    "MessageHits",
    "MessageView",
    "QueueRead",
    "SendResult",
    "check_topic_name",
    "message_by_id",
    "message_by_key",
    "message_by_offset",
    "message_by_unique_key",
    "message_consume",
    "message_send",
    "view",
]

#: ``MixAll.TOOLS_CONSUMER_GROUP``
TOOLS_CONSUMER = "TOOLS_CONSUMER"
#: ``PullSysFlag.FLAG_SUBSCRIPTION``: the request carries its own subscription
PULL_FLAG_SUBSCRIPTION = 0x4
LONG_MAX = 2**63 - 1

#: the response codes that mean "stored" for a send, and the SendStatus each maps to
#: (``MQClientAPIImpl.processSendResponse``)
SEND_STATUS = {
    int(ResponseCode.SUCCESS): "SEND_OK",
    int(ResponseCode.FLUSH_DISK_TIMEOUT): "FLUSH_DISK_TIMEOUT",
    int(ResponseCode.FLUSH_SLAVE_TIMEOUT): "FLUSH_SLAVE_TIMEOUT",
    int(ResponseCode.SLAVE_NOT_AVAILABLE): "SLAVE_NOT_AVAILABLE",
}


# ---------------------------------------------------------------------- views


@dataclass(frozen=True, slots=True)
class MessageView:
    """A stored message as the tools show it; ``body`` is inflated when it was stored compressed."""

    topic: str
    broker_name: str | None
    queue_id: int
    queue_offset: int
    commit_log_offset: int
    #: the client's id (UNIQ_KEY) when there is one, else the offset id (``MessageClientExt.getMsgId``)
    msg_id: str
    offset_msg_id: str
    tags: str | None
    keys: tuple[str, ...]
    store_size: int
    sys_flag: int
    flag: int
    reconsume_times: int
    prepared_transaction_offset: int
    born_timestamp: int
    born_host: str
    store_timestamp: int
    store_host: str
    body_crc: int
    properties: dict[str, str]
    body: bytes
    #: the body as text, when it is UTF-8
    body_text: str | None


def view(msg: StoredMessage, broker_name: str | None = None) -> MessageView:
    """The :class:`MessageView` of a decoded record."""
    try:
        body = msg.decompressed_body(max_size=64 * 1024 * 1024)
    except DecodeError:
        body = msg.body
    try:
        text: str | None = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    offset_id = msg.offset_msg_id
    assert msg.body_crc is not None  # set by __post_init__
    return MessageView(
        msg.topic, broker_name, msg.queue_id, msg.queue_offset, msg.physical_offset,
        msg.uniq_key or offset_id, offset_id, msg.tags, tuple(msg.keys), msg.total_size, msg.sys_flag,
        msg.flag, msg.reconsume_times, msg.prepared_transaction_offset, msg.born_timestamp,
        str(msg.born_host), msg.store_timestamp, str(msg.store_host), msg.body_crc,
        dict(msg.properties), body, text)


def _masters(r: object) -> dict[str, str]:
    from ..bodies import TopicRouteData

    assert isinstance(r, TopicRouteData)
    return {bd.broker_name or "": bd.broker_addrs[MASTER_ID] for bd in r.broker_datas
            if MASTER_ID in bd.broker_addrs}


# ---------------------------------------------------------------------- send


@dataclass(frozen=True, slots=True)
class SendResult:
    status: str
    msg_id: str
    offset_msg_id: str | None
    topic: str
    broker_name: str
    broker_addr: str
    queue_id: int
    queue_offset: int | None
    transaction_id: str | None = None
    #: the topic had no route and was sent through TBW102 for the broker to create it
    auto_create: bool = False


_ids: UniqIdGenerator | None = None


def _uniq_ids() -> UniqIdGenerator:
    global _ids
    if _ids is None:
        import socket

        try:
            ip = socket.gethostbyname(socket.gethostname())
        except OSError:
            ip = None
        _ids = UniqIdGenerator(ip=ip if ip and not ip.startswith("127.") else None)
    return _ids


async def message_send(client: AdminClient, topic: str, body: bytes, *, tags: str | None = None,
                       keys: str | None = None, broker: str | None = None, queue: int | None = None,
                       producer_group: str | None = None,
                       properties: dict[str, str] | None = None, sys_flag: int = 0,
                       compression: CompressionType | None = None, compress_level: int = 5) -> SendResult:
    """SEND_MESSAGE_V2 (310) to a writable queue of the topic (or to ``broker``/``queue``);
    ``sys_flag`` is sent as given (a transactional send sets TRANSACTION_PREPARED_TYPE).

    ``compression`` sends the body compressed as a 5.x Java producer whose ``compressType`` is
    that type does (``compressLevel`` 5 by default), with the sysFlag bits of the type; a 4.x
    consumer reads only ZLIB."""
    from ..headers import SendMessageRequestHeaderV2, SendMessageResponseHeader

    if queue is not None and broker is None:
        raise BadRequest("a queue id needs the broker name too")
    # mirrors Validators.checkMessage: no empty body, no topic a broker would refuse
    check_topic_name(topic)
    if not body:
        raise BadRequest("the message body is empty")
    if compression is not None:
        body, bits = compress_body(body, compress_level, compression)
        sys_flag |= bits
    r = await route_or_none(client, topic)
    auto = r is None
    if r is None:
        # mirrors sendDefaultImpl: a topic without a route is sent through TBW102's route
        r = await route_or_none(client, DEFAULT_TOPIC)
        if r is None:
            raise NotFound(f"topic {topic!r} has no route, and no broker allows auto-creation "
                           f"({DEFAULT_TOPIC})")
    masters = _masters(r)
    choices = []
    for qd in r.queue_datas:
        name = qd.broker_name or ""
        if name not in masters or not is_writeable(qd.perm):
            continue
        # mirrors topicRouteData2TopicPublishInfo (auto-create: at most defaultTopicQueueNums=4)
        n = min(qd.write_queue_nums, 4) if auto else qd.write_queue_nums
        choices += [(name, q) for q in range(n)]
    if broker is not None:
        choices = [(b, q) for b, q in choices if b == broker and (queue is None or q == queue)]
        if not choices and queue is not None and broker in masters:
            choices = [(broker, queue)]
    if not choices:
        where = f" on {broker}" if broker else ""
        raise NotFound(f"topic {topic!r} has no writable queue{where}")
    bname, qid = random.choice(choices)
    props: dict[str, str] = {}
    if keys:
        props[MessageConst.PROPERTY_KEYS] = keys
    uniq = _uniq_ids().next_id()
    props[MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] = uniq
    props[MessageConst.PROPERTY_WAIT_STORE_MSG_OK] = "true"
    if tags:
        props[MessageConst.PROPERTY_TAGS] = tags
    props.update(properties or {})
    header = SendMessageRequestHeaderV2(
        producer_group=producer_group or f"mqctl-{int(time.time() * 1000)}", topic=topic,
        default_topic=DEFAULT_TOPIC, default_topic_queue_nums=4, queue_id=qid, sys_flag=sys_flag,
        born_timestamp=int(time.time() * 1000), flag=0, properties=encode_properties(props),
        reconsume_times=0, unit_mode=False, batch=False, broker_name=bname)
    addr = masters[bname]
    resp = await client.call(addr, RequestCode.SEND_MESSAGE_V2, header, body, ok=SEND_STATUS)
    h = SendMessageResponseHeader.from_ext(resp.ext_fields)
    return SendResult(SEND_STATUS[resp.code], uniq, h.msg_id, topic, bname, addr, h.queue_id, h.queue_offset,
                      h.transaction_id, auto)


# ---------------------------------------------------------------------- lookups


def _found(hits: MessageHits, key: str) -> tuple[MessageView, ...]:
    if hits.messages:
        return hits.messages
    silent = ", ".join(f"{f.detail} ({f.error})" for f in hits.failures)
    raise NotFound(f"no message with unique key {key!r} on the brokers that answered; not asked: {silent}")


async def message_by_id(client: AdminClient, msg_id: str, *,
                        topic: str | None = None) -> tuple[MessageView, ...]:
    """VIEW_MESSAGE_BY_ID (33) at the store host and commit-log offset an offset message id
    names. When that fails and a topic is given, the id is tried as a unique key (the client's
    UNIQ_KEY), as ``DefaultMQAdminExtImpl.viewMessage(topic, msgId)`` does."""
    from ..headers import ViewMessageRequestHeader

    try:
        decoded = decode_offset_msg_id(msg_id.strip())
        if not 0 < decoded.port < 65536 or decoded.offset < 0:
            raise DecodeError(f"port {decoded.port} / offset {decoded.offset} out of range", field="msgId")
    except DecodeError as err:
        if topic is None:
            raise BadRequest(f"{msg_id!r} is not an offset message id ({err}); "
                             "give the topic to look it up as a unique key") from None
        return _found(await message_by_unique_key(client, topic, msg_id), msg_id)
    addr = f"{decoded.host}:{decoded.port}"
    try:
        resp = await client.call(addr, RequestCode.VIEW_MESSAGE_BY_ID,
                                 ViewMessageRequestHeader(offset=decoded.offset))
    except (WireError, ServerError):
        if topic is None:
            raise
        return _found(await message_by_unique_key(client, topic, msg_id), msg_id)
    try:
        found = broker_name_of(await cluster_info(client), addr)
    except (WireError, AdminError):
        found = None
    return (view(decode_stored_message(resp.body or b""), found[0] if found else None),)


@dataclass(frozen=True, slots=True)
class MessageHits:
    """The messages a key query found, and the brokers that did not answer it."""

    messages: tuple[MessageView, ...]
    failures: tuple[Outcome, ...] = ()
    brokers_asked: int = 0


async def _query(client: AdminClient, topic: str, key: str, *, unique: bool, max_num: int,
                 begin: int, end: int) -> MessageHits:
    r = await route(client, topic)
    masters = _masters(r)
    from ..headers import QueryMessageRequestHeader

    ext = QueryMessageRequestHeader(topic=topic, key=key, max_num=max_num, begin_timestamp=begin,
                                    end_timestamp=end,
                                    extra={"_UNIQUE_KEY_QUERY": "true" if unique else "false"})
    names = sorted(masters)

    async def one(name: str) -> list[MessageView]:
        # each answer waits --timeout (mqadmin's queryMessage waits three times its timeout)
        resp = await client.call(masters[name], RequestCode.QUERY_MESSAGE, ext,
                                 ok=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND))
        if resp.code != ResponseCode.SUCCESS or not resp.body:
            return []
        return [view(m, name) for m in decode_messages(resp.body)]

    results = await gather_map(names, one)
    found: list[MessageView] = []
    failures = []
    for name, res in zip(names, results, strict=True):
        if isinstance(res, Exception):
            failures.append(outcome(masters[name], res, name))
            continue
        for m in res:
            # mirrors MQAdminImpl.queryMessage: the index matches hashes, so check the real value
            if (m.msg_id == key) if unique else (key in m.keys and m.topic == topic):
                found.append(m)
    found.sort(key=lambda m: (m.store_timestamp, m.broker_name or "", m.commit_log_offset))
    if not found and not failures:
        what = "unique key" if unique else "key"
        raise NotFound(f"no message with {what} {key!r} in topic {topic!r}")
    return MessageHits(tuple(found), tuple(failures), len(names))


async def message_by_key(client: AdminClient, topic: str, key: str, *, max_num: int = 64,
                         begin: int = 0, end: int = LONG_MAX) -> MessageHits:
    """QUERY_MESSAGE (12) by key on every broker of the topic (mqadmin queryMsgByKey)."""
    return await _query(client, topic, key, unique=False, max_num=max_num, begin=begin, end=end)


async def message_by_unique_key(client: AdminClient, topic: str, key: str, *, max_num: int = 32,
                                begin: int = 0, end: int = LONG_MAX) -> MessageHits:
    """QUERY_MESSAGE (12) with ``_UNIQUE_KEY_QUERY=true`` (mqadmin queryMsgByUniqueKey)."""
    return await _query(client, topic, key, unique=True, max_num=max_num, begin=begin, end=end)


async def _pull(client: AdminClient, addr: str, topic: str, queue_id: int, offset: int, n: int,
                group: str, broker_name: str,
                sql: str | None = None) -> tuple[int, list[MessageView], int, int]:
    """One PULL_MESSAGE: ``(response code, messages, next offset, max offset)``; with ``sql`` the
    subscription is that SQL92 selector, else ``*``."""
    from ..headers import PullMessageRequestHeader, PullMessageResponseHeader

    ext = PullMessageRequestHeader(consumer_group=group, topic=topic, queue_id=queue_id, queue_offset=offset,
                                   max_msg_nums=n, sys_flag=PULL_FLAG_SUBSCRIPTION, commit_offset=0,
                                   suspend_timeout_millis=0, subscription="*" if sql is None else sql,
                                   sub_version=0, expression_type="TAG" if sql is None else "SQL92")
    resp = await client.call(addr, RequestCode.PULL_MESSAGE, ext, ok=(
        ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_RETRY_IMMEDIATELY,
        ResponseCode.PULL_OFFSET_MOVED))
    try:
        h = PullMessageResponseHeader.from_ext(resp.ext_fields)
        nxt, mx = h.next_begin_offset, h.max_offset
    except DecodeError:
        # a found message needs its offsets; a "nothing here" answer may come without them
        if resp.code == ResponseCode.SUCCESS:
            raise
        nxt = mx = offset
    msgs = [view(m, broker_name) for m in decode_messages(resp.body)] if resp.code == 0 and resp.body else []
    return resp.code, msgs, nxt, mx


async def message_by_offset(client: AdminClient, topic: str, broker: str, queue: int, offset: int, *,
                            group: str = TOOLS_CONSUMER) -> tuple[MessageView, ...]:
    """PULL_MESSAGE (11) of one message at ``offset`` (mqadmin queryMsgByOffset)."""
    masters = _masters(await route(client, topic))
    if broker not in masters:
        raise NotFound(f"topic {topic!r} has no master broker named {broker!r} (brokers: "
                       f"{', '.join(sorted(masters)) or 'none'})")
    lo, hi = await _bounds(client, masters[broker], topic, queue)
    if not lo <= offset < hi:
        # a pull outside the queue makes the broker write an OFFSET_MOVED_EVENT message: a
        # read-only command asks first, and leaves no trace
        held = f"the queue holds offsets {lo} to {hi - 1}" if hi > lo else "the queue is empty"
        raise NotFound(f"no message at {topic} {broker} queue {queue} offset {offset}: {held}")
    code, msgs, _, mx = await _pull(client, masters[broker], topic, queue, offset, 1, group, broker)
    if not msgs:
        raise NotFound(f"no message at {topic} {broker} queue {queue} offset {offset} "
                       f"({ResponseCode(code).name}, max offset {mx})")
    return (msgs[0],)


# ---------------------------------------------------------------------- consume


@dataclass(frozen=True, slots=True)
class QueueRead:
    broker_name: str
    queue_id: int
    min_offset: int
    max_offset: int
    start: int
    #: where a next read would begin
    next_offset: int


@dataclass(frozen=True, slots=True)
class ConsumeResult:
    topic: str
    messages: tuple[MessageView, ...]
    queues: tuple[QueueRead, ...]
    #: the brokers that did not answer (their queues were not read), of ``brokers_asked``
    failures: tuple[Outcome, ...] = ()
    brokers_asked: int = 0


async def _bounds(client: AdminClient, addr: str, topic: str, queue_id: int) -> tuple[int, int]:
    """GET_MIN_OFFSET (31) and GET_MAX_OFFSET (30) of one queue."""
    from ..headers import (
        GetMaxOffsetRequestHeader,
        GetMaxOffsetResponseHeader,
        GetMinOffsetRequestHeader,
        GetMinOffsetResponseHeader,
    )

    lo = await client.call(addr, RequestCode.GET_MIN_OFFSET,
                           GetMinOffsetRequestHeader(topic=topic, queue_id=queue_id))
    hi = await client.call(addr, RequestCode.GET_MAX_OFFSET,
                           GetMaxOffsetRequestHeader(topic=topic, queue_id=queue_id))
    return (GetMinOffsetResponseHeader.from_ext(lo.ext_fields).offset,
            GetMaxOffsetResponseHeader.from_ext(hi.ext_fields).offset)


async def message_consume(client: AdminClient, topic: str, *, broker: str | None = None,
                          queue: int | None = None, offset: int | None = None, count: int = 32,
                          group: str = TOOLS_CONSUMER, sql: str | None = None, begin: int | None = None,
                          end: int | None = None) -> ConsumeResult:
    """Read up to ``count`` messages of a topic, queue after queue (by broker name and queue id),
    each from ``offset`` or from its min offset, with a PULL_MESSAGE loop up to its max offset
    (mqadmin printMsg / consumeMessage).

    Nothing is written: the offsets of ``group`` stay, and no pull is made outside a queue's
    offsets (an offset below a queue's min starts at its min; a queue whose max is at or below the
    offset is not pulled), since such a pull makes the broker write an OFFSET_MOVED_EVENT message.
    A broker that does not answer is in ``failures`` and its queues are passed over.

    ``begin``/``end`` (milliseconds since the epoch) keep the messages stored in that time: each
    queue starts at the offset SEARCH_OFFSET_BY_TIMESTAMP (29) gives for ``begin`` (mqadmin
    printMsg/consumeMessage ``-b``/``-e``), and a queue is left at its first message stored after
    ``end``.

    With ``sql``, only messages the SQL92 selector matches are read: the selector is compiled
    here first (:mod:`wire.sql92`; a bad one is a :class:`BadRequest` with Java's message), each
    broker is asked CHECK_CLIENT_CONFIG (46) as a Java consumer asks before it starts (a broker
    without ``enablePropertyFilter`` refuses, and its answer is the error), and the pulls carry the
    selector with expressionType SQL92; the broker filters on the messages' properties."""
    if begin is not None and offset is not None:
        raise BadRequest("give an offset or a begin time, not both")
    if begin is not None and end is not None and end < begin:
        raise BadRequest("the end time is before the begin time")
    if count <= 0:
        raise BadRequest("count must be positive")
    if offset is not None and offset < 0:
        raise BadRequest(f"offset {offset} is negative")
    if sql is not None:
        from ..sql92 import SelectorError, compile_selector

        try:
            compile_selector(sql)
        except SelectorError as exc:
            raise BadRequest(f"--sql does not compile: {exc.java_message}") from None
    r = await route(client, topic)
    masters = _masters(r)
    queues = sorted((qd.broker_name or "", q) for qd in r.queue_datas if (qd.broker_name or "") in masters
                    and is_readable(qd.perm) for q in range(qd.read_queue_nums))
    if broker is not None:
        queues = [(b, q) for b, q in queues if b == broker]
    if queue is not None:
        queues = [(b, q) for b, q in queues if q == queue]
    if not queues:
        where = " ".join(x for x in (broker, None if queue is None else f"queue {queue}") if x)
        raise NotFound(f"topic {topic!r} has no readable queue" + (f" ({where})" if where else ""))

    if sql is not None:
        from ..bodies import CheckClientRequestBody, SubscriptionData

        check = CheckClientRequestBody(client_id="mqctl", group=group, subscription_data=SubscriptionData(
            topic=topic, sub_string=sql, sub_version=int(time.time() * 1000), expression_type="SQL92"))
        for bname in sorted({b for b, _ in queues}):
            await client.call(masters[bname], RequestCode.CHECK_CLIENT_CONFIG, None, check.encode())

    async def queue_range(bq: tuple[str, int]) -> tuple[int, int]:
        lo, hi = await _bounds(client, masters[bq[0]], topic, bq[1])
        if begin is not None:
            from ..headers import SearchOffsetRequestHeader, SearchOffsetResponseHeader

            found = await client.call(masters[bq[0]], RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
                                      SearchOffsetRequestHeader(topic=topic, queue_id=bq[1], timestamp=begin))
            lo = max(lo, SearchOffsetResponseHeader.from_ext(found.ext_fields).offset)
        return lo, hi

    ranges = await gather_map(queues, queue_range)
    silent: dict[str, Outcome] = {}
    for (bname, _q), res in zip(queues, ranges, strict=True):
        if isinstance(res, Exception) and bname not in silent:
            silent[bname] = outcome(masters[bname], res, bname)
    messages: list[MessageView] = []
    reads: list[QueueRead] = []
    for (bname, qid), bounds in zip(queues, ranges, strict=True):
        if isinstance(bounds, Exception) or bname in silent:
            continue
        lo, hi = bounds
        start = lo if offset is None else max(lo, offset)
        pos = start
        moved = False
        while pos < hi and len(messages) < count:
            try:
                code, msgs, nxt, mx = await _pull(client, masters[bname], topic, qid, pos,
                                                  min(32, count - len(messages)), group, bname, sql)
            except (WireError, AdminError) as err:
                silent[bname] = outcome(masters[bname], err, bname)
                break
            hi = max(hi, mx) if code == 0 else hi
            if code == ResponseCode.PULL_OFFSET_MOVED and not moved and lo <= nxt < hi and nxt != pos:
                moved, pos = True, nxt
                continue
            if code == ResponseCode.PULL_RETRY_IMMEDIATELY and nxt > pos:
                # nothing in this stretch matched the selector (NO_MATCHED_MESSAGE): go on after it
                pos = nxt
                continue
            if code != ResponseCode.SUCCESS or not msgs:
                break
            past_end = False
            if begin is not None or end is not None:
                kept = [m for m in msgs if begin is None or m.store_timestamp >= begin]
                if end is not None and any(m.store_timestamp > end for m in kept):
                    kept = [m for m in kept if m.store_timestamp <= end]
                    past_end = True
                msgs_in = kept
            else:
                msgs_in = msgs
            take = msgs_in[:count - len(messages)]
            messages += take
            if past_end:
                pos = take[-1].queue_offset + 1 if take else pos
                break
            pos = take[-1].queue_offset + 1 if take and len(take) < len(msgs_in) else nxt
        reads.append(QueueRead(bname, qid, lo, hi, start, pos))
        if len(messages) >= count:
            break
    return ConsumeResult(topic, tuple(messages), tuple(reads), tuple(silent.values()),
                         len({b for b, _q in queues}))
