# Licensed under the Apache License, Version 2.0. See LICENSE.
"""SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320) and CONSUMER_SEND_MSG_BACK (36).

Mirrors ``SendMessageProcessor`` and ``AbstractSendMessageProcessor`` of 4.9.8:

* Checks, in Java's order (``msgCheck``): an order topic on a broker without write permission
  (NO_PERMISSION); the topic name (SYSTEM_ERROR, ``validateTopic``); topics nobody may send to
  (``SCHEDULE_TOPIC_XXXX`` and the other system topics of ``NOT_ALLOWED_SEND_TOPIC_SET``:
  NO_PERMISSION "Sending message to topic[…] is forbidden."); an unknown topic is created from
  the default topic when that one may be inherited (then a oneway re-registration), a
  ``%RETRY%`` topic as a send-back topic, else TOPIC_NOT_EXIST; a queue id at or past
  max(read, write) queues is a SYSTEM_ERROR. The topic's permission is not checked: a 4.9.8
  broker stores a send to a read-only topic (10-error-responses, case 6).
* The message (``asyncSendMessage``): a negative queue id means a random queue; a ``%RETRY%``
  topic whose reconsume times reached the group's maximum goes to ``%DLQ%<group>``; a MULTI_TAG
  topic sets the multi-tags sysFlag. Properties are stored as Java stores them: the producer's
  string parsed into a HashMap, ``CLUSTER`` put, ``WAIT`` removed, written in HashMap order
  (:mod:`..props`). A ``DELAY`` level (CommitLog.asyncPutMessage) moves the message to
  ``SCHEDULE_TOPIC_XXXX`` queue level−1 with ``REAL_TOPIC``/``REAL_QID``; a prepared transaction
  message (``TRAN_MSG``) goes to ``RMQ_SYS_TRANS_HALF_TOPIC`` queue 0 the same way
  (``TransactionalMessageBridge.parseHalfMessageInner``).
* The answer (``handlePutMessageResult``): the PutStatus → code table of PROTOCOL.md §3.3; the
  four stored statuses carry ``msgId`` (offset msgId; a batch's ids joined with ","),
  ``queueId`` and ``queueOffset``; every answer, errors included, carries ``MSG_REGION`` and
  ``TRACE_ON``.

A slave refuses sends through its store (SERVICE_NOT_AVAILABLE, Java's "service not available
now …" remark with the disk usage), after the same checks as a master.

Header parsing has a fast path for the common, canonical values; anything else goes through the
typed classes of :mod:`wire.headers`, which give Java's result or a precise error.
"""

from __future__ import annotations

import functools
import random
import struct
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from json.encoder import encode_basestring as json_string
from typing import TYPE_CHECKING, Any, overload

from wire import MQVersion, RemotingCommand, RequestCode, ResponseCode, SerializeType
from wire.aio import HandlerResult, Later, LaterRun, RemotingConnection
from wire.bodies import TopicConfig, TopicFilterType
from wire.headers import (
    ConsumerSendMsgBackRequestHeader,
    SendMessageRequestHeader,
    SendMessageRequestHeaderV2,
)
from wire.message import (
    TRANSACTION_TYPE_MASK,
    BatchEntry,
    MessageConst,
    MessageSysFlag,
    TransactionType,
    create_offset_msg_id,
    decode_batch,
    decode_properties,
    reset_transaction_value,
)
from wire.message.delay import capped_delay_level, delay_level_queue_id, delay_time_level
from wire.remoting import DEFAULT_VERSION

from ...bodies import BodyDecoders, request_body
from ...store import MessageToStore, PendingPut, PendingRun, PutResult, PutStatus, disk_used_ratio
from .. import constants as C
from ..props import java_properties_text, send_properties_text
from ..topics import topic_config_to_string
from .common import (
    BrokerHandler,
    SlowPath,
    fast_int,
    fast_long,
    java_bool,
    peer_addr,
    validate_topic,
)

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS", "SendHeader", "ok_frame", "ok_frame_tail", "parse_send_header", "put_status_response",
           "send_messages"]

_V1_KEYS = (
    "producerGroup",
    "topic",
    "defaultTopic",
    "defaultTopicQueueNums",
    "queueId",
    "sysFlag",
    "bornTimestamp",
    "flag",
    "properties",
    "reconsumeTimes",
    "unitMode",
    "maxReconsumeTimes",
    "batch",
)
_V2_KEYS = ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m")
_V2_CODES = frozenset({RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE,
                       RequestCode.SEND_REPLY_MESSAGE_V2})
#: "0" … "4095" → their value: the header numbers a producer sends over and over
_SMALL_INTS = {str(i): i for i in range(4096)}
#: ``MQVersion.Version.V3_4_9.ordinal()``: from this client version on, the header's
#: maxReconsumeTimes overrides the group's retryMaxTimes
V3_4_9 = int(MQVersion.V3_4_9)
#: a negative queue id picks a queue as ``Math.abs(random.nextInt() % 99999999) % queueNums``
_RANDOM_QUEUE_SPAN = 99999999
#: asyncSendBatchMessage: "message topic length too long" past ``Byte.MAX_VALUE``
_MAX_BATCH_TOPIC_LENGTH = 127
_MULTI_TAGS = int(MessageSysFlag.MULTI_TAGS_FLAG)
_TRAN_MASK = TRANSACTION_TYPE_MASK
_TRAN_NOT_TYPE = int(TransactionType.TRANSACTION_NOT_TYPE)
_TRAN_COMMIT = int(TransactionType.TRANSACTION_COMMIT_TYPE)
_HOST_V6 = int(MessageSysFlag.BORNHOST_V6_FLAG) | int(MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)

_CLUSTER = MessageConst.PROPERTY_CLUSTER
_WAIT = MessageConst.PROPERTY_WAIT_STORE_MSG_OK
_DELAY = MessageConst.PROPERTY_DELAY_TIME_LEVEL
_REAL_TOPIC = MessageConst.PROPERTY_REAL_TOPIC
_REAL_QID = MessageConst.PROPERTY_REAL_QUEUE_ID
_TRAN_MSG = MessageConst.PROPERTY_TRANSACTION_PREPARED


class SendHeader:
    """The fields of a send header (V1 or V2) the broker uses, typed."""

    __slots__ = (
        "batch",
        "born_timestamp",
        "default_topic",
        "default_topic_queue_nums",
        "flag",
        "max_reconsume_times",
        "producer_group",
        "properties",
        "queue_id",
        "reconsume_times",
        "sys_flag",
        "topic",
        "unit_mode",
    )

    def __init__(
        self,
        producer_group: str,
        topic: str,
        default_topic: str,
        default_topic_queue_nums: int,
        queue_id: int,
        sys_flag: int,
        born_timestamp: int,
        flag: int,
        properties: str | None,
        reconsume_times: int | None,
        unit_mode: bool,
        max_reconsume_times: int | None,
        batch: bool,
    ) -> None:
        self.producer_group = producer_group
        self.topic = topic
        self.default_topic = default_topic
        self.default_topic_queue_nums = default_topic_queue_nums
        self.queue_id = queue_id
        self.sys_flag = sys_flag
        self.born_timestamp = born_timestamp
        self.flag = flag
        self.properties = properties
        self.reconsume_times = reconsume_times
        self.unit_mode = unit_mode
        self.max_reconsume_times = max_reconsume_times
        self.batch = batch


def parse_send_header(req: RemotingCommand) -> SendHeader:
    """The send header of a 10/310/320 request (``parseRequestHeader``); raises
    :class:`wire.DecodeError` as the typed header does for a missing or malformed field."""
    v2 = req.code in _V2_CODES
    k = _V2_KEYS if v2 else _V1_KEYS
    ext = req.ext_fields
    small = _SMALL_INTS.get
    try:
        # the small numbers (queue counts and ids, flags) come from a table of their canonical
        # spellings; anything else goes through fast_int, and from there to the typed headers
        d, e, f, h = ext[k[3]], ext[k[4]], ext[k[5]], ext[k[7]]
        j = ext.get(k[9])
        m = ext.get(k[11])
        di, ei, fi, hi = small(d), small(e), small(f), small(h)
        ji = None if j is None else small(j)
        mi = None if m is None else small(m)
        return SendHeader(
            ext[k[0]],
            ext[k[1]],
            ext[k[2]],
            fast_int(d) if di is None else di,
            fast_int(e) if ei is None else ei,
            fast_int(f) if fi is None else fi,
            fast_long(ext[k[6]]),
            fast_int(h) if hi is None else hi,
            ext.get(k[8]),
            None if j is None else fast_int(j) if ji is None else ji,
            java_bool(ext.get(k[10])),
            None if m is None else fast_int(m) if mi is None else mi,
            java_bool(ext.get(k[12])),
        )
    except (KeyError, SlowPath):
        pass
    typed = SendMessageRequestHeaderV2.from_ext(ext) if v2 else SendMessageRequestHeader.from_ext(ext)
    return SendHeader(
        typed.producer_group,
        typed.topic,
        typed.default_topic,
        typed.default_topic_queue_nums,
        typed.queue_id,
        typed.sys_flag,
        typed.born_timestamp,
        typed.flag,
        typed.properties,
        typed.reconsume_times,
        bool(typed.unit_mode),
        typed.max_reconsume_times,
        bool(typed.batch),
    )


def _ext(broker: Broker) -> dict[str, str]:
    return {"MSG_REGION": broker.region_id, "TRACE_ON": broker.trace_on_text}


def _fail(broker: Broker, req: RemotingCommand, code: int, remark: str | None) -> RemotingCommand:
    return req.response(code, remark, _ext(broker))


def _disk_util(broker: Broker) -> str:
    """``SendMessageProcessor.diskUtil``."""
    root = broker.config.store_root
    return (
        f"CL: {disk_used_ratio(broker.config.commitlog_dir):5.2f} "
        f"CQ: {disk_used_ratio(root / 'consumequeue'):5.2f} "
        f"INDEX: {disk_used_ratio(root / 'index'):5.2f}"
    )


def _topic_sys_flag(h: SendHeader) -> int:
    """``TopicSysFlag.buildSysFlag`` for a unit-mode producer."""
    if not h.unit_mode:
        return 0
    retry = h.topic.startswith(C.RETRY_GROUP_TOPIC_PREFIX)
    return C.build_topic_sys_flag(not retry, retry)


def _msg_check(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand, h: SendHeader
) -> RemotingCommand | TopicConfig:
    """``preSend`` + ``msgCheck``: an error response, or the topic's config."""
    start_accept = broker.start_accept_ts
    if start_accept and broker.now_ms() < start_accept:
        return _fail(
            broker, req, ResponseCode.SYSTEM_ERROR, f"broker unable to service, until {start_accept}"
        )
    topic = h.topic
    topics = broker.topics
    if not C.is_writeable(broker.permission) and topics.is_order_topic(topic):
        return _fail(
            broker,
            req,
            ResponseCode.NO_PERMISSION,
            f"the broker[{broker.config.broker_ip1}] sending message is forbidden",
        )
    bad = validate_topic(topic)
    if bad is not None:
        return _fail(broker, req, ResponseCode.SYSTEM_ERROR, bad)
    if topic in C.NOT_ALLOWED_SEND_TOPICS:
        return _fail(
            broker, req, ResponseCode.NO_PERMISSION, f"Sending message to topic[{topic}] is forbidden."
        )
    tc = topics.select(topic)
    if tc is None:
        flag = _topic_sys_flag(h)
        made, created = topics.create_in_send(
            topic, h.default_topic, peer_addr(conn), h.default_topic_queue_nums, flag
        )
        if made is None and topic.startswith(C.RETRY_GROUP_TOPIC_PREFIX):
            made, created = topics.create_in_send_back(topic, 1, C.PERM_WRITE | C.PERM_READ, flag)
        if created:
            broker.register_soon(oneway=True)
        if made is None:
            return _fail(
                broker,
                req,
                ResponseCode.TOPIC_NOT_EXIST,
                f"topic[{topic}] not exist, apply first please!{C.FAQ_SUFFIX}",
            )
        tc = made
    if h.queue_id >= max(tc.write_queue_nums, tc.read_queue_nums):
        return _fail(
            broker,
            req,
            ResponseCode.SYSTEM_ERROR,
            f"request queueId[{h.queue_id}] is illegal, {topic_config_to_string(tc)} "
            f"Producer: {peer_addr(conn)}",
        )
    return tc


def put_status_response(
    broker: Broker, req: RemotingCommand, result: PutResult, queue_id: int
) -> RemotingCommand:
    """``handlePutMessageResult``: the send response for a store result."""
    status = result.status
    code = 0 if status is _PUT_OK else _STORED_CODES.get(status)
    if code is not None:
        # mirrors handlePutMessageResult: incTopicPutNums (SEND_MESSAGE names the topic "topic",
        # SEND_MESSAGE_V2 and the batch "b")
        topic = req.ext_fields.get("topic") or req.ext_fields.get("b")
        if topic:
            broker.stats.record("TOPIC_PUT_NUMS", topic, result.msg_num)
        ext = {
            "msgId": result.msg_id,
            "queueId": str(queue_id),
            "queueOffset": str(result.queue_offset),
            "MSG_REGION": broker.region_id,
            "TRACE_ON": broker.trace_on_text,
        }
        return req.response(code, None, ext)
    if status is PutStatus.CREATE_MAPPED_FILE_FAILED:
        return _fail(
            broker, req, ResponseCode.SYSTEM_ERROR, "create mapped file failed, server is busy or broken."
        )
    if status in (PutStatus.MESSAGE_ILLEGAL, PutStatus.PROPERTIES_SIZE_EXCEEDED):
        return _fail(
            broker,
            req,
            ResponseCode.MESSAGE_ILLEGAL,
            "the message is illegal, maybe msg body or properties length not matched. msg body "
            f"length limit {broker.config.max_message_size}B, msg properties length limit 32KB.",
        )
    if status is PutStatus.SERVICE_NOT_AVAILABLE:
        return _fail(
            broker,
            req,
            ResponseCode.SERVICE_NOT_AVAILABLE,
            "service not available now. It may be caused by one of the following reasons: the "
            f"broker's disk is full [{_disk_util(broker)}], messages are put to the slave, message "
            "store has been shut down, etc.",
        )
    if status is PutStatus.OS_PAGECACHE_BUSY:
        return _fail(
            broker,
            req,
            ResponseCode.SYSTEM_ERROR,
            "[PC_SYNCHRONIZED]broker busy, start flow control for a while",
        )
    if status is PutStatus.UNKNOWN_ERROR:
        return _fail(broker, req, ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR")
    return _fail(broker, req, ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR DEFAULT")


_PUT_OK = PutStatus.PUT_OK
_STORED_CODES = {
    PutStatus.PUT_OK: int(ResponseCode.SUCCESS),
    PutStatus.FLUSH_DISK_TIMEOUT: int(ResponseCode.FLUSH_DISK_TIMEOUT),
    PutStatus.FLUSH_SLAVE_TIMEOUT: int(ResponseCode.FLUSH_SLAVE_TIMEOUT),
    PutStatus.SLAVE_NOT_AVAILABLE: int(ResponseCode.SLAVE_NOT_AVAILABLE),
}


def _answer(
    broker: Broker, req: RemotingCommand, put: PutResult | PendingPut | Awaitable[PutResult], queue_id: int
) -> HandlerResult:
    """The send response now for a put that did not wait; for one that waits for the group commit,
    an answer made by the group's future's callback; else a coroutine of it."""
    if isinstance(put, PutResult):
        return put_status_response(broker, req, put, queue_id)
    if isinstance(put, PendingPut):
        finish = put.finish
        return Later(put.future, lambda status: put_status_response(broker, req, finish(status), queue_id))
    return _answer_later(broker, req, put, queue_id)


async def _answer_later(
    broker: Broker, req: RemotingCommand, put: Awaitable[PutResult], queue_id: int
) -> RemotingCommand:
    return put_status_response(broker, req, await put, queue_id)


def schedule_rewrite(
    broker: Broker, topic: str, queue_id: int, values: dict[str, str], order: list[str]
) -> tuple[str, int]:
    """``CommitLog.asyncPutMessage``'s delay rewrite: a DELAY level > 0 moves the message to the
    schedule topic (values and put order are updated in place). Returns the topic and queue;
    raises ValueError for a DELAY that is not a number."""
    level = delay_time_level(values)
    if level <= 0:
        return topic, queue_id
    capped = capped_delay_level(level, broker.schedule.max_delay_level)
    if capped != level:
        values[_DELAY] = str(capped)
    for key, value in ((_REAL_TOPIC, topic), (_REAL_QID, str(queue_id))):
        if key not in values:
            order.append(key)
        values[key] = value
    return C.RMQ_SYS_SCHEDULE_TOPIC, delay_level_queue_id(capped)


def send_message(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """SEND_MESSAGE, SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE (``asyncProcessRequest``)."""
    made = _message(broker, conn, req)
    if isinstance(made, _Batch):
        return _send_batch(broker, conn, req, made.header, made.topic_config)
    if not isinstance(made, tuple):
        return made
    msg, answer_queue_id, plain = made
    if plain:
        return _answer(broker, req, broker.store.put_deferred(msg), answer_queue_id)
    return _answer(broker, req, broker.store.put(msg), answer_queue_id)


def send_messages(broker: Broker, conn: RemotingConnection,
                  reqs: Sequence[RemotingCommand]) -> list[HandlerResult | LaterRun | bytes | Exception]:
    """:func:`send_message` of each SEND_MESSAGE(_V2) of one read, in order: one answer (or the
    exception its handling raised) a request. The plain messages among them (no transaction, no
    delay, no retry topic: what :func:`send_message` hands to ``put_deferred``) are put as runs
    (:meth:`.MessageStore.put_deferred_many`); any other request first puts the run before it,
    so the store sees every put in the order of the requests. A lone send comes here too (a run
    of one: the single put, its SEND_OK answer from the template), never through the general
    handler's response building."""
    out: list[HandlerResult | LaterRun | bytes | Exception] = []
    run: list[MessageToStore] = []
    waiting: list[tuple[int, RemotingCommand, int]] = []  # (place in out, request, answer queue id)
    store = broker.store
    for req in reqs:
        try:
            made = _message(broker, conn, req)
        except Exception as exc:
            out.append(exc)
            continue
        if isinstance(made, tuple) and made[2]:
            waiting.append((len(out), req, made[1]))
            run.append(made[0])
            out.append(None)
            continue
        if run:
            _answer_run(broker, out, waiting, store.put_deferred_many(run))
            run, waiting = [], []
        try:
            if isinstance(made, _Batch):
                out.append(_send_batch(broker, conn, req, made.header, made.topic_config))
            elif isinstance(made, tuple):
                out.append(_answer(broker, req, store.put(made[0]), made[1]))
            else:
                out.append(made)
        except Exception as exc:
            out.append(exc)
    if run:
        _answer_run(broker, out, waiting, store.put_deferred_many(run))
    return out


def _answer_run(broker: Broker, out: list[HandlerResult | LaterRun | bytes | Exception],
                waiting: list[tuple[int, RemotingCommand, int]],
                puts: list[PutResult | PendingPut | PendingRun | Coroutine[Any, Any, PutResult]]) -> None:
    """The answers of a run's puts: a JSON request's SEND_OK encoded from the template
    (:func:`ok_frame`), anything else as :func:`_answer` makes it. The puts that wait for one
    group commit together (a :class:`PendingRun`) are answered together, by one
    :class:`LaterRun` at each of their places."""
    tail = ok_frame_tail(broker.region_id, broker.trace_on_text)
    #: TOPIC_PUT_NUMS of the stored sends, by topic: (messages, sends), recorded once a topic
    counts: dict[str, tuple[int, int]] = {}
    groups: dict[int, tuple[PendingRun, list[int], list[tuple[RemotingCommand, int]]]] = {}
    for (at, req, queue_id), put in zip(waiting, puts, strict=True):
        if type(put) is PutResult and req.serialize_type is _JSON:
            if put.status is not _PUT_OK:
                out[at] = put_status_response(broker, req, put, queue_id)
                continue
            out[at] = _counted_ok_frame(req, put, queue_id, tail, counts)
        elif isinstance(put, PendingRun):
            group = groups.get(id(put))
            if group is None:
                group = groups[id(put)] = (put, [], [])
            group[1].append(at)
            group[2].append((req, queue_id))
        elif req.serialize_type is not _JSON:
            out[at] = _answer(broker, req, put, queue_id)
        elif type(put) is PendingPut:
            finish = functools.partial(_finish_frame, broker, req, put.finish, queue_id, tail)
            out[at] = Later(put.future, finish)
        else:
            out[at] = _answer(broker, req, put, queue_id)
    _record_put_nums(broker, counts)
    for run, places, sends in groups.values():
        later = LaterRun(run.future, functools.partial(_finish_run, broker, sends, run.finish, tail))
        for at in places:
            out[at] = later


def _finish_run(broker: Broker, sends: list[tuple[RemotingCommand, int]],
                finish: Callable[[PutStatus], list[PutResult]], tail: str,
                status: PutStatus) -> list[bytes | RemotingCommand]:
    """The answers of the sends of a :class:`PendingRun` once its group commit answered
    ``status``, in order: as :func:`_frame_or_response` makes each, TOPIC_PUT_NUMS of the SEND_OK
    frames recorded once a topic."""
    answers: list[bytes | RemotingCommand] = []
    counts: dict[str, tuple[int, int]] = {}
    for (req, queue_id), result in zip(sends, finish(status), strict=True):
        if req.serialize_type is not _JSON or result.status is not _PUT_OK:
            answers.append(put_status_response(broker, req, result, queue_id))
        else:
            answers.append(_counted_ok_frame(req, result, queue_id, tail, counts))
    _record_put_nums(broker, counts)
    return answers


def _counted_ok_frame(req: RemotingCommand, result: PutResult, queue_id: int, tail: str,
                      counts: dict[str, tuple[int, int]]) -> bytes:
    """:func:`ok_frame` of a stored JSON send, its messages counted in ``counts`` (TOPIC_PUT_NUMS
    by topic: messages, sends; recorded by :func:`_record_put_nums`)."""
    ext = req.ext_fields
    topic = ext.get("topic") or ext.get("b")
    if topic:
        n, calls = counts.get(topic, (0, 0))
        counts[topic] = (n + result.msg_num, calls + 1)
    return ok_frame(req.opaque, result.msg_id, queue_id, result.queue_offset, tail)


def _record_put_nums(broker: Broker, counts: dict[str, tuple[int, int]]) -> None:
    for topic, (n, calls) in counts.items():
        broker.stats.record("TOPIC_PUT_NUMS", topic, n, calls=calls)


def _finish_frame(broker: Broker, req: RemotingCommand, finish: Callable[[PutStatus], PutResult],
                  queue_id: int, tail: str, status: PutStatus) -> bytes | RemotingCommand:
    return _frame_or_response(broker, req, finish(status), queue_id, tail)


def _frame_or_response(broker: Broker, req: RemotingCommand, result: PutResult, queue_id: int,
                       tail: str) -> bytes | RemotingCommand:
    """:func:`put_status_response` of a single message's put, as its frame (encoded from the
    template) when it is SEND_OK."""
    if result.status is not _PUT_OK:
        return put_status_response(broker, req, result, queue_id)
    ext = req.ext_fields
    topic = ext.get("topic") or ext.get("b")
    if topic:
        broker.stats.record("TOPIC_PUT_NUMS", topic, result.msg_num)
    return ok_frame(req.opaque, result.msg_id, queue_id, result.queue_offset, tail)


_JSON = SerializeType.JSON
_FRAME_PREFIX = struct.Struct(">iI")
#: the end of a SEND_OK answer's JSON header, after its opaque
_OK_END = f',"serializeTypeCurrentRPC":"JSON","version":{DEFAULT_VERSION:d}}}'


@functools.lru_cache(maxsize=16)
def ok_frame_tail(region_id: str, trace_on: str) -> str:
    """The part of a SEND_OK answer's JSON header between its queue offset and its opaque (made
    once for each of the few values these settings take)."""
    return (f',"MSG_REGION":{json_string(region_id)},"TRACE_ON":{json_string(trace_on)}}},"flag":1,'
            f'"language":"JAVA","opaque":')


def ok_frame(opaque: int, msg_id: str, queue_id: int, queue_offset: int, tail: str) -> bytes:
    """The frame of the SEND_OK answer to a JSON send request, encoded from a template: the bytes
    ``encode_command(put_status_response(...))`` makes for a stored single message (SUCCESS with
    msgId, queueId, queueOffset, MSG_REGION and TRACE_ON; ``tail`` from :func:`ok_frame_tail`).
    tests/broker/test_fastpaths.py holds the two together. ``msg_id`` is an offset msgId (hex
    digits: nothing to escape)."""
    header = (f'{{"code":0,"extFields":{{"msgId":"{msg_id}","queueId":"{queue_id:d}","queueOffset":'
              f'"{queue_offset:d}"{tail}{opaque:d}{_OK_END}').encode("utf-8", "replace")
    n = len(header)
    return _FRAME_PREFIX.pack(n + 4, n) + header


class _Batch:
    """A checked send whose header says batch: its messages are put by :func:`_send_batch`."""

    __slots__ = ("header", "topic_config")

    def __init__(self, header: SendHeader, topic_config: TopicConfig) -> None:
        self.header = header
        self.topic_config = topic_config


def _message(broker: Broker, conn: RemotingConnection,
             req: RemotingCommand) -> RemotingCommand | tuple[MessageToStore, int, bool] | _Batch:
    """The message a send request stores, the queue id its answer names, and whether it is plain
    (put with ``put_deferred``: no rewrite of its properties can follow); a batch to put; or the
    answer itself (a refusal). Nothing is put here."""
    h = parse_send_header(req)
    checked = _msg_check(broker, conn, req, h)
    if isinstance(checked, RemotingCommand):
        return checked
    tc = checked
    if h.batch:
        return _Batch(h, tc)
    topic = h.topic
    queue_id = h.queue_id
    if queue_id < 0:
        queue_id = random.randrange(_RANDOM_QUEUE_SPAN) % tc.write_queue_nums
    # the answer names this queue even when the message goes to the DLQ or the schedule topic
    answer_queue_id = queue_id
    reconsume_times = h.reconsume_times or 0
    if topic.startswith(C.RETRY_GROUP_TOPIC_PREFIX):
        # handleRetryAndDLQ
        group = topic[len(C.RETRY_GROUP_TOPIC_PREFIX) :]
        sgc = broker.groups.find(group)
        if sgc is None:
            return _fail(
                broker,
                req,
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                f"subscription group not exist, {group} {C.FAQ_SUFFIX}",
            )
        max_times = sgc.retry_max_times
        if req.version >= V3_4_9 and h.max_reconsume_times is not None:
            max_times = h.max_reconsume_times
        if reconsume_times >= max_times:
            topic = C.dlq_topic(group)
            queue_id = 0
            dlq, created = broker.topics.create_in_send_back(
                topic, C.DLQ_NUMS_PER_GROUP, C.PERM_WRITE | C.PERM_READ, 0
            )
            if created:
                broker.register_soon(oneway=True)
            tc = dlq
    sys_flag = h.sys_flag
    if tc.topic_filter_type == TopicFilterType.MULTI_TAG:
        sys_flag |= _MULTI_TAGS
    values = decode_properties(h.properties) if h.properties else {}
    # Message.isWaitStoreMsgOK of the request: the stored string loses WAIT, the store is told
    wait_value = values.get(_WAIT)
    wait_ok = wait_value is None or java_bool(wait_value)
    if _TRAN_MSG not in values and _DELAY not in values:
        # no rewrite can follow: the string is written once, in the order cached for these keys
        text = send_properties_text(values, broker.cluster_name)
        msg = MessageToStore(topic, queue_id, req.body or b"", h.born_timestamp, conn.peer, h.flag, text,
                             sys_flag, reconsume_times, parsed_properties=values, wait_store_msg_ok=wait_ok)
        return msg, answer_queue_id, True
    order = list(values)
    if _CLUSTER not in values:
        order.append(_CLUSTER)
    values[_CLUSTER] = broker.cluster_name
    # Java stores the string without WAIT, then puts WAIT back in the map (it matters to the
    # rewrites below, which write the string again from the map)
    wait = values.pop(_WAIT, None)
    if java_bool(values.get(_TRAN_MSG)):
        if broker.config.bool("rejectTransactionMessage"):
            return _fail(
                broker,
                req,
                ResponseCode.NO_PERMISSION,
                f"the broker[{broker.config.broker_ip1}] sending transaction message is forbidden",
            )
        _put_back(values, order, _WAIT, wait)
        wait = None
        topic, queue_id, sys_flag = _half_message(topic, queue_id, sys_flag, values, order)
    tran = sys_flag & _TRAN_MASK
    if tran == _TRAN_NOT_TYPE or tran == _TRAN_COMMIT:
        try:
            delayed = delay_time_level(values) > 0
        except ValueError as exc:
            # mirrors NettyRemotingAbstract: getDelayTimeLevel's NumberFormatException, thrown in
            # asyncPutMessage, answers SYSTEM_ERROR with the exception's text
            return req.response(ResponseCode.SYSTEM_ERROR, f"java.lang.NumberFormatException: {exc}")
        if delayed:
            _put_back(values, order, _WAIT, wait)
            topic, queue_id = schedule_rewrite(broker, topic, queue_id, values, order)
    text = java_properties_text(tuple(order), values)
    msg = MessageToStore(
        topic, queue_id, req.body or b"", h.born_timestamp, conn.peer, h.flag, text, sys_flag,
        reconsume_times, parsed_properties=values, wait_store_msg_ok=wait_ok,
    )
    return msg, answer_queue_id, False


def _put_back(values: dict[str, str], order: list[str], key: str, value: str | None) -> None:
    """A key removed from the HashMap and put again: it moves to the end of its bucket."""
    if value is not None:
        order.remove(key)
        order.append(key)
        values[key] = value


def _half_message(
    topic: str, queue_id: int, sys_flag: int, values: dict[str, str], order: list[str]
) -> tuple[str, int, int]:
    """``TransactionalMessageBridge.parseHalfMessageInner``: keep the real topic and queue in the
    properties, clear the transaction type, and store in the half topic's queue 0."""
    for key, value in ((_REAL_TOPIC, topic), (_REAL_QID, str(queue_id))):
        if key not in values:
            order.append(key)
        values[key] = value
    return C.RMQ_SYS_TRANS_HALF_TOPIC, 0, reset_transaction_value(sys_flag, _TRAN_NOT_TYPE)


class _BatchMessages(Sequence[MessageToStore]):
    """The messages of a batch, each made from its entry when the store reads it: the store
    checks a large batch in slices (yielding to the loop between them), and the making of each
    message goes with its slice."""

    __slots__ = ("_batch_text", "_born", "_born_timestamp", "_entries", "_queue_id", "_reconsume_times",
                 "_sys_flag", "_topic")

    def __init__(self, entries: list[BatchEntry], topic: str, queue_id: int, born_timestamp: int,
                 born: tuple[str, int], batch_text: str, sys_flag: int, reconsume_times: int) -> None:
        self._entries = entries
        self._topic = topic
        self._queue_id = queue_id
        self._born_timestamp = born_timestamp
        self._born = born
        self._batch_text = batch_text
        self._sys_flag = sys_flag
        self._reconsume_times = reconsume_times

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, i: int) -> MessageToStore: ...

    @overload
    def __getitem__(self, i: slice) -> list[MessageToStore]: ...

    def __getitem__(self, i: int | slice) -> MessageToStore | list[MessageToStore]:
        if isinstance(i, slice):
            return [self._make(e) for e in self._entries[i]]
        return self._make(self._entries[i])

    def __iter__(self) -> Iterator[MessageToStore]:
        return map(self._make, self._entries)

    def _make(self, e: BatchEntry) -> MessageToStore:
        """``MessageExtBatchEncoder``: the entry's properties followed by the batch's."""
        text = e.properties_text
        assert text is not None  # set by __post_init__
        if self._batch_text:
            if text and not text.endswith("\x02"):
                text += "\x02"
            text += self._batch_text
        return MessageToStore(self._topic, self._queue_id, e.body, self._born_timestamp, self._born, e.flag,
                              text, self._sys_flag, self._reconsume_times)


def _batch_entries(req: RemotingCommand) -> list[BatchEntry]:
    return decode_batch(req.body or b"", strict=False)


def _send_batch(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand, h: SendHeader, tc: TopicConfig
) -> HandlerResult:
    """``asyncSendBatchMessage``: every entry becomes a record whose properties are the entry's
    followed by the batch's (the header's properties plus ``CLUSTER``; ``MessageExtBatchEncoder``)."""
    queue_id = h.queue_id
    if queue_id < 0:
        queue_id = random.randrange(_RANDOM_QUEUE_SPAN) % tc.write_queue_nums
    if len(h.topic) > _MAX_BATCH_TOPIC_LENGTH:
        return _fail(
            broker, req, ResponseCode.MESSAGE_ILLEGAL, f"message topic length too long {len(h.topic)}"
        )
    if len(req.body or b"") > broker.config.max_message_size and not broker.is_slave:
        # checkMessages: the batch body's length is checked before any of its messages is read
        # (15 MiB of one-byte messages would be 650,000 messages built and measured on the event
        # loop only to be refused); a slave's store refuses every put first, and still does
        return put_status_response(broker, req, PutResult(PutStatus.MESSAGE_ILLEGAL), queue_id)
    sys_flag = h.sys_flag
    if tc.topic_filter_type == TopicFilterType.MULTI_TAG:
        sys_flag |= _MULTI_TAGS
    values = decode_properties(h.properties) if h.properties else {}
    order = list(values)
    if _CLUSTER not in values:
        order.append(_CLUSTER)
    values[_CLUSTER] = broker.cluster_name
    batch_text = java_properties_text(tuple(order), values)
    msgs = _BatchMessages(request_body(conn, req, _batch_entries), h.topic, queue_id, h.born_timestamp,
                          conn.peer, batch_text, sys_flag, h.reconsume_times or 0)
    return _answer(broker, req, broker.store.put(msgs), queue_id)


# ---------------------------------------------------------------------------- send back


def consumer_send_msg_back(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """CONSUMER_SEND_MSG_BACK (``asyncConsumerSendMsgBack``): a message the consumer failed goes
    to ``%RETRY%<group>`` through the delay queue, or to ``%DLQ%<group>`` after the last retry."""
    h = ConsumerSendMsgBackRequestHeader.from_ext(req.ext_fields)
    cfg = broker.config
    sgc = broker.groups.find(h.group)
    if sgc is None:
        return req.response(
            ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
            f"subscription group not exist, {h.group} {C.FAQ_SUFFIX}",
        )
    if not C.is_writeable(broker.permission):
        return req.response(
            ResponseCode.NO_PERMISSION, f"the broker[{cfg.broker_ip1}] sending message is forbidden"
        )
    if sgc.retry_queue_nums <= 0:
        return req.response(ResponseCode.SUCCESS)
    topic = C.retry_topic(h.group)
    queue_id = random.randrange(_RANDOM_QUEUE_SPAN) % sgc.retry_queue_nums
    topic_sys_flag = C.build_topic_sys_flag(False, bool(h.unit_mode))
    tc, created = broker.topics.create_in_send_back(
        topic, sgc.retry_queue_nums, C.PERM_WRITE | C.PERM_READ, topic_sys_flag
    )
    if created:
        broker.register_soon(oneway=True)
    if not C.is_writeable(tc.perm):
        return req.response(ResponseCode.NO_PERMISSION, f"the topic[{topic}] sending message is forbidden")
    msg = broker.store.message_at(h.offset)
    if msg is None:
        return req.response(ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {h.offset}")
    values = dict(msg.properties)
    order = list(values)

    def put(key: str, value: str) -> None:
        if key not in values:
            order.append(key)
        values[key] = value

    if MessageConst.PROPERTY_RETRY_TOPIC not in values:
        put(MessageConst.PROPERTY_RETRY_TOPIC, msg.topic)
    put(_WAIT, "false")
    delay = h.delay_level
    max_times = sgc.retry_max_times
    if req.version >= V3_4_9 and h.max_reconsume_times is not None:
        max_times = h.max_reconsume_times
    if msg.reconsume_times >= max_times or delay < 0:
        topic = C.dlq_topic(h.group)
        queue_id = 0
        _, created = broker.topics.create_in_send_back(
            topic, C.DLQ_NUMS_PER_GROUP, C.PERM_WRITE | C.PERM_READ, 0
        )
        if created:
            broker.register_soon(oneway=True)
        put(_DELAY, "0")
    else:
        if delay == 0:
            delay = 3 + msg.reconsume_times
        put(_DELAY, str(delay))
    origin = values.get(MessageConst.PROPERTY_ORIGIN_MESSAGE_ID)
    if origin is None or not origin.strip():
        origin = create_offset_msg_id(msg.store_host.host, msg.store_host.port, msg.physical_offset)
    put(MessageConst.PROPERTY_ORIGIN_MESSAGE_ID, origin)
    tran = msg.sys_flag & _TRAN_MASK
    if tran == _TRAN_NOT_TYPE or tran == _TRAN_COMMIT:
        topic, queue_id = schedule_rewrite(broker, topic, queue_id, values, order)
    text = java_properties_text(tuple(order), values)
    back = MessageToStore(
        topic,
        queue_id,
        msg.body,
        msg.born_timestamp,
        (msg.born_host.host, msg.born_host.port),
        msg.flag,
        text,
        msg.sys_flag & ~_HOST_V6,
        msg.reconsume_times + 1,
    )
    stored = broker.store.put(back)
    if isinstance(stored, PutResult):
        return _send_back_response(req, stored)
    return _send_back_later(req, stored)


def _send_back_response(req: RemotingCommand, result: PutResult) -> RemotingCommand:
    if result.status is PutStatus.PUT_OK:
        return req.response(ResponseCode.SUCCESS)
    return req.response(ResponseCode.SYSTEM_ERROR, result.status.name)


async def _send_back_later(req: RemotingCommand, put: Awaitable[PutResult]) -> RemotingCommand:
    return _send_back_response(req, await put)


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.SEND_MESSAGE: send_message,
    RequestCode.SEND_MESSAGE_V2: send_message,
    RequestCode.SEND_BATCH_MESSAGE: send_message,
    RequestCode.CONSUMER_SEND_MSG_BACK: consumer_send_msg_back,
}

#: request code -> the decoding of its body (run off the event loop for a large body): a batch
#: (the body of a single message is stored as it is)
BODIES: BodyDecoders = {RequestCode.SEND_BATCH_MESSAGE: _batch_entries}
