# Licensed under the Apache License, Version 2.0. See LICENSE.
"""BR: a broker's produce and consume paths, as the Java, C++ and ali-ons clients use them: sends
(V1, V2, batch, auto-creation through TBW102, refusals), pulls and their answer codes, long
polling, consumer offsets, heartbeats, retries and the DLQ, delay levels, message ids and
queries. Every case works on topics and groups of its own, created through the wire."""

from __future__ import annotations

import asyncio
import json
import secrets
import struct
import time

from wire import RemotingCommand, RequestCode, ResponseCode, WireError
from wire.message import BatchEntry, StoredMessage, decode_offset_msg_id, encode_batch, encode_properties

from ..context import Ctx
from ..model import Level
from ..registry import case
from ._kit import (
    PULL_SUBSCRIPTION,
    PULL_SUSPEND,
    create_group,
    create_topic,
    delete_after_run,
    heartbeat_body,
    messages,
    now_ms,
    pull,
    route_data,
    send,
    send_ok,
)

R = RequestCode
RC = ResponseCode
SMP = "SendMessageProcessor"
PMP = "PullMessageProcessor"
BROKER = ("broker",)
WITH_NS = ("namesrv", "broker")


def _uniq() -> str:
    """A UNIQ_KEY-shaped id (32 upper-case hex digits), as MessageClientIDSetter makes them."""
    return secrets.token_hex(16).upper()


def _ext_int(ctx: Ctx, resp: RemotingCommand, key: str) -> int:
    raw = resp.ext_fields.get(key)
    ctx.check(raw is not None, f"the answer has no {key} ext field: {dict(resp.ext_fields)}")
    try:
        return int(str(raw))
    except ValueError:
        ctx.fail(f"the answer's {key} {raw!r} is not a number")
        raise


async def _fresh(ctx: Ctx, *, read: int = 4, write: int = 4, perm: int = 6) -> str:
    return await create_topic(ctx, read=read, write=write, perm=perm, routed=bool(ctx.target.namesrv))


async def _sent(ctx: Ctx, topic: str, n: int, *, queue_id: int = 0,
                prefix: str = "m") -> list[RemotingCommand]:
    """``n`` sends to one queue, once they are consumable (a Java broker builds its ConsumeQueue
    asynchronously, a few milliseconds after it answered the send)."""
    sent = [await send_ok(ctx, topic, f"{prefix}{i}".encode(), queue_id=queue_id) for i in range(n)]
    await _dispatched(ctx, topic, queue_id, n)
    return sent


async def _dispatched(ctx: Ctx, topic: str, queue_id: int, n: int) -> None:
    async def probe() -> bool:
        return await _max_offset(ctx, topic, queue_id) >= n

    await ctx.poll(probe, timeout=5, interval=0.02,
                   what=f"GET_MAX_OFFSET of {topic}:{queue_id} never reached {n} after the sends")


def _check_send_answer(ctx: Ctx, resp: RemotingCommand, queue_id: int) -> None:
    ctx.code(resp, RC.SUCCESS, "the send")
    for key in ("msgId", "queueId", "queueOffset"):
        ctx.check(resp.ext_fields.get(key) not in (None, ""),
                  f"the send answer has no {key}: {dict(resp.ext_fields)}")
    ctx.equal(_ext_int(ctx, resp, "queueId"), queue_id, "queueId of the send answer")


# ---------------------------------------------------------------------------- sends


@case(
    "BR-SEND-001", Level.MUST,
    "SEND_MESSAGE (the V1 header) is stored and answered SUCCESS with msgId, queueId and queueOffset",
    source="SendMessageProcessor.sendMessage; SendMessageRequestHeader; SendMessageResponseHeader",
    needs=BROKER,
    codes=(R.SEND_MESSAGE,),
)
async def send_v1(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    _check_send_answer(ctx, await send(ctx, topic, b"v1", code=R.SEND_MESSAGE, queue_id=1), 1)


@case(
    "BR-SEND-002", Level.MUST,
    "SEND_MESSAGE_V2 (the short a..m keys) is stored and answered SUCCESS with msgId, queueId and "
    "queueOffset",
    source="SendMessageProcessor.sendMessage; SendMessageRequestHeaderV2",
    needs=BROKER,
    codes=(R.SEND_MESSAGE_V2,),
)
async def send_v2(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    _check_send_answer(ctx, await send(ctx, topic, b"v2", queue_id=2), 2)


@case(
    "BR-SEND-003", Level.MUST,
    "successive sends to one queue get queueOffsets 0, 1, 2, ...",
    source="CommitLog.DefaultAppendMessageCallback (queueOffset from topicQueueTable)",
    needs=BROKER,
)
async def send_offsets(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    offsets = [_ext_int(ctx, r, "queueOffset") for r in await _sent(ctx, topic, 4, queue_id=3)]
    ctx.equal(offsets, [0, 1, 2, 3], "queueOffsets of four sends to a new queue")


@case(
    "BR-SEND-004", Level.MUST,
    "the msgId of a send is an offset message id whose commit-log offset VIEW_MESSAGE_BY_ID reads back as "
    "the message sent",
    source="MessageDecoder.createMessageId/decodeMessageId; QueryMessageProcessor.viewMessageById",
    needs=BROKER,
    codes=(R.VIEW_MESSAGE_BY_ID,),
)
async def msg_id(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    key = ctx.unique("key")
    resp = await send_ok(ctx, topic, b"find me by id", queue_id=1, properties={"KEYS": key, "TAGS": "TagA"})
    try:
        decoded = decode_offset_msg_id(resp.ext_fields.get("msgId", ""))
    except WireError as err:
        ctx.fail(f"msgId {resp.ext_fields.get('msgId')!r} is not an offset message id: {err}")
        raise
    ctx.note(f"store host {decoded.host}:{decoded.port}, commit-log offset {decoded.offset}")
    view = await ctx.call("broker", R.VIEW_MESSAGE_BY_ID, {"offset": decoded.offset},
                          what="VIEW_MESSAGE_BY_ID")
    msgs = messages(view, ctx, "VIEW_MESSAGE_BY_ID")
    ctx.equal(len(msgs), 1, "messages in the VIEW_MESSAGE_BY_ID answer")
    m = msgs[0]
    ctx.equal((m.topic, m.body, m.queue_id, m.queue_offset, m.physical_offset),
              (topic, b"find me by id", 1, _ext_int(ctx, resp, "queueOffset"), decoded.offset),
              "topic, body, queueId, queueOffset and commit-log offset of the stored message")
    ctx.equal((m.properties.get("KEYS"), m.properties.get("TAGS")), (key, "TagA"), "KEYS and TAGS properties")


@case(
    "BR-SEND-005", Level.MUST,
    "SEND_BATCH_MESSAGE stores each message of the batch in order: SUCCESS, one msgId per message "
    "(comma-separated), the first queueOffset",
    source="SendMessageProcessor.sendBatchMessage; MessageDecoder.encodeMessages; CommitLog.putMessages",
    needs=BROKER,
    codes=(R.SEND_BATCH_MESSAGE,),
)
async def send_batch(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    bodies = [b"batch one", b"batch two", b"batch three"]
    body = encode_batch([BatchEntry(b, {"UNIQ_KEY": _uniq(), "WAIT": "true"}) for b in bodies])
    resp = await send(ctx, topic, body, code=R.SEND_BATCH_MESSAGE, queue_id=0)
    ctx.code(resp, RC.SUCCESS, "SEND_BATCH_MESSAGE")
    await _dispatched(ctx, topic, 0, 3)
    ids = (resp.ext_fields.get("msgId") or "").split(",")
    ctx.equal(len(ids), 3, f"msgIds in the answer ({resp.ext_fields.get('msgId')!r})")
    ctx.equal(_ext_int(ctx, resp, "queueOffset"), 0, "queueOffset of the batch")
    got = await pull(ctx, group, topic, 0, 0)
    ctx.code(got, RC.SUCCESS, "a pull of the batch")
    ctx.equal([(m.body, m.queue_offset) for m in messages(got, ctx, "PULL")],
              [(b, i) for i, b in enumerate(bodies)], "bodies and queueOffsets pulled")


@case(
    "BR-SEND-006", Level.MUST,
    "a send to a topic the broker does not have is stored in a new topic made from TBW102 when the broker "
    "has autoCreateTopicEnable, and refused TOPIC_NOT_EXIST otherwise",
    source="AbstractSendMessageProcessor.msgCheck; TopicConfigManager.createTopicInSendMessageMethod",
    needs=WITH_NS,
)
async def auto_create(ctx: Ctx) -> None:
    """Sends to a new topic with defaultTopic TBW102 and defaultTopicQueueNums 4 and checks the
    answer against the broker's autoCreateTopicEnable (its configuration; when it does not say,
    whether the name server routes TBW102 to it with the inherit perm)."""
    topic = ctx.unique("auto")
    tbw = await route_data(ctx, "TBW102")
    name = ctx.target.broker_name
    configured = ctx.target.broker_config.get("autoCreateTopicEnable")
    if configured is not None:
        enabled = configured == "true"
        ctx.note(f"autoCreateTopicEnable={configured} in the broker's configuration")
    else:
        enabled = tbw is not None and any(q.broker_name == name and q.perm & 1 for q in tbw.queue_datas)
        ctx.note(f"TBW102 {'is' if enabled else 'is not'} routed to the broker with the inherit perm")
    delete_after_run(ctx, topic)
    resp = await send(ctx, topic, b"auto", queue_id=0)
    if not enabled:
        ctx.code(resp, RC.TOPIC_NOT_EXIST, "a send to a new topic with auto-creation off")
        return
    _check_send_answer(ctx, resp, 0)
    stats = await ctx.call("broker", R.GET_TOPIC_STATS_INFO, {"topic": topic},
                           what="GET_TOPIC_STATS_INFO of the auto-created topic")
    from wire.bodies import TopicStatsTable

    queues = sorted(mq.queue_id for mq in TopicStatsTable.decode(stats.body or b"").offset_table)
    wq = max((q.write_queue_nums for q in tbw.queue_datas if q.broker_name == name), default=4) if tbw else 4
    ctx.equal(queues, list(range(min(4, wq))), "queues of the auto-created topic (min(defaultTopicQueueNums, "
              "TBW102's))")


@case(
    "BR-SEND-007", Level.MUST,
    "a send to SCHEDULE_TOPIC_XXXX is refused with NO_PERMISSION",
    source="TopicValidator.isNotAllowedSendTopic; capture java-4.9.8/10-error-responses case 7",
    needs=BROKER,
)
async def send_forbidden_topic(ctx: Ctx) -> None:
    resp = await send(ctx, "SCHEDULE_TOPIC_XXXX", b"no", queue_id=0)
    ctx.code(resp, RC.NO_PERMISSION, "a send to SCHEDULE_TOPIC_XXXX")


@case(
    "BR-SEND-008", Level.MUST,
    "a send to a topic name with illegal characters is refused (Java: SYSTEM_ERROR)",
    source="TopicValidator.validateTopic (^[%|a-zA-Z0-9_-]+$)",
    needs=BROKER,
)
async def send_bad_topic(ctx: Ctx) -> None:
    resp = await send(ctx, f"{ctx.unique('bad')} with spaces", b"no", queue_id=0)
    ctx.check(resp.code != RC.SUCCESS, "a send to a topic with spaces in its name was stored")
    ctx.note(f"answered {resp.code_name}: {resp.remark}")


@case(
    "BR-SEND-009", Level.MUST,
    'a send to a queueId beyond the topic\'s queues is refused (Java: SYSTEM_ERROR, "request queueId[n] is '
    'illegal")',
    source="AbstractSendMessageProcessor.msgCheck (queueIdInt >= idValid)",
    needs=BROKER,
)
async def send_bad_queue(ctx: Ctx) -> None:
    topic = await _fresh(ctx, read=2, write=2)
    resp = await send(ctx, topic, b"no", queue_id=7)
    ctx.check(resp.code != RC.SUCCESS, "a send to queue 7 of a topic with 2 queues was stored")
    ctx.code(resp, RC.SYSTEM_ERROR, "a send to queue 7 of a topic with 2 queues")


@case(
    "BR-SEND-010", Level.MUST,
    "a message over the broker's maxMessageSize is refused with MESSAGE_ILLEGAL",
    source="CommitLog.DefaultAppendMessageCallback (MESSAGE_SIZE_EXCEEDED); "
           "SendMessageProcessor.handlePutMessageResult",
    needs=BROKER,
    timeout=30.0,
)
async def send_too_big(ctx: Ctx) -> None:
    limit = int(ctx.target.broker_config.get("maxMessageSize") or 4 * 1024 * 1024)
    if limit > 12 * 1024 * 1024:
        ctx.not_applicable(f"maxMessageSize {limit} is too close to the 16 MiB frame limit to test")
    topic = await _fresh(ctx)
    resp = await send(ctx, topic, b"x" * (limit + 1024), queue_id=0)
    ctx.code(resp, RC.MESSAGE_ILLEGAL, f"a {limit + 1024}-byte message (maxMessageSize {limit})")


@case(
    "BR-SEND-011", Level.MUST,
    "a slave refuses sends with SERVICE_NOT_AVAILABLE",
    source="DefaultMessageStore.putMessage (BrokerRole.SLAVE); capture java-4.9.8/10-error-responses case 8",
    needs=("slave",),
    profiles=("4.9",),
)
async def send_to_slave(ctx: Ctx) -> None:
    """Sends to the broker's cluster-name topic, which every broker of the cluster has (or, when
    the cluster is not known, to a new topic that the slave would create from TBW102)."""
    topic = ctx.target.cluster or ctx.unique("slave")
    resp = await send(ctx, topic, b"to the slave", role="slave", queue_id=0)
    ctx.code(resp, RC.SERVICE_NOT_AVAILABLE, "a send to the slave")


@case(
    "BR-SEND-012", Level.SHOULD,
    "a send with queueId -1 is stored in a queue the broker picks",
    source="SendMessageProcessor.sendMessage (queueIdInt < 0: randomQueueId)",
    needs=BROKER,
)
async def send_any_queue(ctx: Ctx) -> None:
    topic = await _fresh(ctx, read=4, write=4)
    resp = await send(ctx, topic, b"anywhere", queue_id=-1)
    ctx.code(resp, RC.SUCCESS, "a send with queueId -1")
    queue = _ext_int(ctx, resp, "queueId")
    ctx.check(0 <= queue < 4, f"queueId {queue} is not a queue of the topic")


@case(
    "BR-SEND-013", Level.MUST,
    "a JSON header whose ext values are JSON numbers and booleans (as the C++ client and ali-ons send them) "
    "is read as their text",
    source="RemotingSerializable.decode (fastjson HashMap<String,String>); PEERS.md quirks",
    needs=BROKER,
    codes=(R.SEND_MESSAGE_V2,),
)
async def send_json_numbers(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    props = encode_properties({"WAIT": "true", "KEYS": "numeric"})
    ext = {"a": "conformance_producer", "b": topic, "c": "TBW102", "d": 4, "e": 2, "f": 0, "g": now_ms(),
           "h": 0,
           "i": props, "j": 0, "k": False, "m": False}
    header = json.dumps({"code": int(R.SEND_MESSAGE_V2), "extFields": ext, "flag": 0, "language": "JAVA",
                         "opaque": 3131, "serializeTypeCurrentRPC": "JSON", "version": 121},
                        separators=(",", ":")).encode()
    body = b"numbers"
    peer = await ctx.raw("broker")
    peer.send(struct.pack(">iI", 4 + len(header) + len(body), len(header)) + header + body)
    resp = await peer.response_to(3131, ctx.request_timeout)
    ctx.check(resp is not None, "no answer to a send whose ext values are JSON numbers")
    assert resp is not None
    _check_send_answer(ctx, resp, 2)


@case(
    "BR-SEND-014", Level.INFO,
    "whether the broker stores a send to a topic whose perm is read-only (4.9.8 does: the perm is enforced "
    "by clients through the route)",
    source="AbstractSendMessageProcessor.msgCheck (no topic perm check); capture "
           "java-4.9.8/10-error-responses case 6",
    needs=BROKER,
)
async def send_read_only(ctx: Ctx) -> None:
    topic = await _fresh(ctx, perm=4)
    resp = await send(ctx, topic, b"read-only", queue_id=0)
    ctx.note(f"a send to a topic with perm 4 is answered {resp.code_name}")


@case(
    "BR-SYS-001", Level.MUST,
    "the broker has SELF_TEST_TOPIC (1 read and 1 write queue) routed, and refuses sends to it with "
    "NO_PERMISSION",
    source="TopicConfigManager (RMQ_SYS_SELF_TEST_TOPIC); TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET",
    needs=WITH_NS,
)
async def self_test_topic(ctx: Ctx) -> None:
    data = await route_data(ctx, "SELF_TEST_TOPIC")
    ctx.check(data is not None, "SELF_TEST_TOPIC is not routed")
    assert data is not None
    mine = [(q.read_queue_nums, q.write_queue_nums) for q in data.queue_datas
            if q.broker_name == ctx.target.broker_name]
    ctx.equal(mine, [(1, 1)], f"SELF_TEST_TOPIC's queues on {ctx.target.broker_name}")
    ctx.code(await send(ctx, "SELF_TEST_TOPIC", b"self test", queue_id=0), RC.NO_PERMISSION,
             "a send to SELF_TEST_TOPIC")


@case(
    "BR-SYS-002", Level.SHOULD,
    "the broker's cluster name and broker name are routed as topics (clusterTopicEnable, brokerTopicEnable)",
    source="TopicConfigManager (cluster and broker name topics)",
    needs=WITH_NS,
)
async def name_topics(ctx: Ctx) -> None:
    for topic in (ctx.target.cluster, ctx.target.broker_name):
        ctx.check(topic, "the broker's cluster and name are not known from the name server")
        assert topic is not None
        data = await route_data(ctx, topic)
        ctx.check(data is not None and any(q.broker_name == ctx.target.broker_name for q in data.queue_datas),
                  f"{topic} is not routed to {ctx.target.broker_name}")


# ---------------------------------------------------------------------------- pulls


def _pull_offsets(ctx: Ctx, resp: RemotingCommand) -> tuple[int, int, int]:
    return tuple(_ext_int(ctx, resp, k) for k in ("nextBeginOffset", "minOffset", "maxOffset"))  # type: ignore[return-value]


@case(
    "BR-PULL-001", Level.MUST,
    "a pull that finds messages is answered SUCCESS with the stored messages from the offset and "
    "nextBeginOffset, minOffset, maxOffset",
    source="PullMessageProcessor.processRequest (FOUND); PullMessageResponseHeader",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_found(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    await _sent(ctx, topic, 5, queue_id=1)
    resp = await pull(ctx, group, topic, 1, 1)
    ctx.code(resp, RC.SUCCESS, "a pull at offset 1 of a queue with 5 messages")
    got = messages(resp, ctx, "PULL_MESSAGE")
    ctx.equal([(m.topic, m.queue_id, m.queue_offset, m.body) for m in got],
              [(topic, 1, i, f"m{i}".encode()) for i in range(1, 5)], "the messages pulled")
    ctx.equal(_pull_offsets(ctx, resp), (5, 0, 5), "nextBeginOffset, minOffset, maxOffset")


@case(
    "BR-PULL-002", Level.MUST,
    "a pull returns at most maxMsgNums messages and nextBeginOffset after the last",
    source="DefaultMessageStore.getMessage (maxMsgNums)",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_max(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    await _sent(ctx, topic, 5)
    resp = await pull(ctx, group, topic, 0, 0, max_nums=2)
    ctx.code(resp, RC.SUCCESS, "a pull of 2")
    ctx.equal([m.queue_offset for m in messages(resp, ctx, "PULL_MESSAGE")], [0, 1], "queueOffsets pulled")
    ctx.equal(_ext_int(ctx, resp, "nextBeginOffset"), 2, "nextBeginOffset")


@case(
    "BR-PULL-003", Level.MUST,
    "a pull at the queue's maxOffset (without the suspend flag) is answered PULL_NOT_FOUND with "
    "nextBeginOffset = maxOffset",
    source="PullMessageProcessor (OFFSET_OVERFLOW_ONE → PULL_NOT_FOUND)",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_at_max(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    await _sent(ctx, topic, 3)
    resp = await pull(ctx, group, topic, 0, 3)
    ctx.code(resp, RC.PULL_NOT_FOUND, "a pull at maxOffset")
    ctx.equal(_ext_int(ctx, resp, "nextBeginOffset"), 3, "nextBeginOffset")


@case(
    "BR-PULL-004", Level.MUST,
    "a pull beyond the queue's maxOffset is answered PULL_OFFSET_MOVED with nextBeginOffset = maxOffset",
    source="PullMessageProcessor (OFFSET_OVERFLOW_BADLY → PULL_OFFSET_MOVED); "
           "DefaultMessageStore.getMessage; capture java-4.9.8/10-error-responses case 5",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_overflow(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    await _sent(ctx, topic, 3)
    resp = await pull(ctx, group, topic, 0, 999999)
    ctx.code(resp, RC.PULL_OFFSET_MOVED, "a pull at 999999 of a queue with 3 messages")
    ctx.equal(_pull_offsets(ctx, resp), (3, 0, 3), "nextBeginOffset, minOffset, maxOffset")


@case(
    "BR-PULL-005", Level.MUST,
    "a pull below the queue's minOffset is answered PULL_OFFSET_MOVED with nextBeginOffset = minOffset",
    source="PullMessageProcessor (OFFSET_TOO_SMALL → PULL_OFFSET_MOVED)",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_too_small(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    await _sent(ctx, topic, 2)
    resp = await pull(ctx, group, topic, 0, -1)
    ctx.code(resp, RC.PULL_OFFSET_MOVED, "a pull at offset -1")
    ctx.equal(_ext_int(ctx, resp, "nextBeginOffset"), 0, "nextBeginOffset")


@case(
    "BR-PULL-006", Level.MUST,
    "a pull at offset 0 of an empty queue is answered PULL_NOT_FOUND, and at another offset "
    "PULL_OFFSET_MOVED",
    source="PullMessageProcessor (NO_MESSAGE_IN_QUEUE)",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_empty(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    ctx.code(await pull(ctx, group, topic, 0, 0), RC.PULL_NOT_FOUND, "a pull at 0 of an empty queue")
    ctx.code(await pull(ctx, group, topic, 0, 5), RC.PULL_OFFSET_MOVED, "a pull at 5 of an empty queue")


@case(
    "BR-PULL-007", Level.MUST,
    "a pull from a topic whose perm is not readable is refused with NO_PERMISSION",
    source="PullMessageProcessor (PermName.isReadable(topicConfig.getPerm()))",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_no_read(ctx: Ctx) -> None:
    topic = await _fresh(ctx, perm=2)
    group = await create_group(ctx)
    ctx.code(await pull(ctx, group, topic, 0, 0), RC.NO_PERMISSION, "a pull from a write-only topic")


@case(
    "BR-PULL-008", Level.MUST,
    "a pull without a subscription expression for a group no consumer registered is refused with "
    "SUBSCRIPTION_NOT_EXIST",
    source="PullMessageProcessor (consumerGroupInfo == null); capture java-4.9.8/10-error-responses case 4",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_no_subscription(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    ctx.code(await pull(ctx, group, topic, 0, 0, sys_flag=0), RC.SUBSCRIPTION_NOT_EXIST,
             "a pull without subscription of an unknown consumer")


@case(
    "BR-PULL-009", Level.MUST,
    "a pull of a topic the broker does not have is refused with TOPIC_NOT_EXIST",
    source="PullMessageProcessor (selectTopicConfig == null)",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_unknown_topic(ctx: Ctx) -> None:
    group = await create_group(ctx)
    ctx.code(await pull(ctx, group, ctx.unique("nosuch"), 0, 0), RC.TOPIC_NOT_EXIST,
             "a pull of an unknown topic")


@case(
    "BR-PULL-010", Level.MUST,
    "a pull of a queueId beyond the topic's read queues is refused with SYSTEM_ERROR",
    source="PullMessageProcessor (queueId >= readQueueNums)",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_bad_queue(ctx: Ctx) -> None:
    topic = await _fresh(ctx, read=2, write=2)
    group = await create_group(ctx)
    ctx.code(await pull(ctx, group, topic, 5, 0), RC.SYSTEM_ERROR, "a pull of queue 5 of a topic with 2")


@case(
    "BR-PULL-011", Level.SHOULD,
    "a pull answer's remark names the store's GetMessageStatus (FOUND, OFFSET_OVERFLOW_ONE, "
    "OFFSET_OVERFLOW_BADLY, ...)",
    source="PullMessageProcessor (response.setRemark(status.name()))",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
)
async def pull_remark(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    await _sent(ctx, topic, 1)
    for offset, want in ((0, "FOUND"), (1, "OFFSET_OVERFLOW_ONE"), (50, "OFFSET_OVERFLOW_BADLY")):
        resp = await pull(ctx, group, topic, 0, offset)
        ctx.equal(resp.remark, want, f"the remark of a pull at {offset}")


# ---------------------------------------------------------------------------- long polling


@case(
    "BR-LONG-001", Level.MUST,
    "a pull with the suspend flag at maxOffset is held, and answered SUCCESS with the message as soon as one "
    "is put",
    source="PullRequestHoldService; NotifyMessageArrivingListener (longPollingEnable)",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
    timeout=30.0,
)
async def long_poll_wakes(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    consumer = await ctx.connect("broker")
    held = asyncio.ensure_future(pull(ctx, group, topic, 0, 0, sys_flag=PULL_SUBSCRIPTION | PULL_SUSPEND,
                                      suspend_ms=15000, timeout=20.0, conn=consumer))
    await asyncio.sleep(0.5)
    if held.done():
        ctx.fail(f"the pull was answered at once ({held.result().code_name}) instead of being held")
    t0 = time.monotonic()
    await send_ok(ctx, topic, b"wake up", queue_id=0)
    try:
        resp = await asyncio.wait_for(held, 5.0)
    except TimeoutError:
        ctx.fail("the held pull was not answered within 5 s of the put")
        raise
    ctx.note(f"answered {(time.monotonic() - t0) * 1000:.0f} ms after the put")
    ctx.code(resp, RC.SUCCESS, "the held pull")
    ctx.equal([m.body for m in messages(resp, ctx, "PULL_MESSAGE")], [b"wake up"],
              "the message of the held pull")


@case(
    "BR-LONG-002", Level.MUST,
    "a held pull that no message arrives for is answered PULL_NOT_FOUND once its suspendTimeoutMillis is "
    "over (not before)",
    source="PullRequestHoldService.checkHoldRequest (every 5 s with longPollingEnable)",
    needs=BROKER,
    codes=(R.PULL_MESSAGE,),
    timeout=30.0,
)
async def long_poll_times_out(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    t0 = time.monotonic()
    resp = await pull(ctx, group, topic, 0, 0, sys_flag=PULL_SUBSCRIPTION | PULL_SUSPEND, suspend_ms=1000,
                      timeout=15.0)
    waited = time.monotonic() - t0
    ctx.note(f"answered after {waited:.1f} s (suspendTimeoutMillis 1000)")
    ctx.code(resp, RC.PULL_NOT_FOUND, "a held pull nothing arrived for")
    ctx.check(waited >= 0.9, f"answered after {waited:.2f} s, before the suspend timeout of 1 s")


# ---------------------------------------------------------------------------- offsets


async def _query_offset(ctx: Ctx, group: str, topic: str, queue: int) -> RemotingCommand:
    return await ctx.request("broker", R.QUERY_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic,
                                                                 "queueId": queue})


@case(
    "BR-OFFSET-001", Level.MUST,
    "UPDATE_CONSUMER_OFFSET stores an offset that QUERY_CONSUMER_OFFSET returns",
    source="ConsumerManageProcessor.updateConsumerOffset/queryConsumerOffset",
    needs=BROKER,
    codes=(R.UPDATE_CONSUMER_OFFSET, R.QUERY_CONSUMER_OFFSET),
)
async def offset_roundtrip(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    await _sent(ctx, topic, 3, queue_id=2)
    await ctx.call("broker", R.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic, "queueId": 2,
                                                        "commitOffset": 2}, what="UPDATE_CONSUMER_OFFSET")
    resp = await _query_offset(ctx, group, topic, 2)
    ctx.code(resp, RC.SUCCESS, "QUERY_CONSUMER_OFFSET")
    ctx.equal(_ext_int(ctx, resp, "offset"), 2, "the offset")


@case(
    "BR-OFFSET-002", Level.MUST,
    "a oneway UPDATE_CONSUMER_OFFSET (as clients send it) is applied",
    source="ConsumerManageProcessor.updateConsumerOffset; "
           "RemoteBrokerOffsetStore.updateConsumeOffsetToBroker (oneway)",
    needs=BROKER,
)
async def offset_oneway(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    await _sent(ctx, topic, 2, queue_id=1)
    await ctx.oneway("broker", R.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic,
                                                          "queueId": 1,
                                                          "commitOffset": 1})

    async def applied() -> bool:
        resp = await _query_offset(ctx, group, topic, 1)
        return resp.code == RC.SUCCESS and resp.ext_fields.get("offset") == "1"

    await ctx.poll(applied, timeout=5, what="the oneway offset update was not applied")


@case(
    "BR-OFFSET-003", Level.MUST,
    "QUERY_CONSUMER_OFFSET of a group without a committed offset, on a queue whose first message is still "
    "held, answers SUCCESS with offset 0",
    source="ConsumerManageProcessor.queryConsumerOffset (minOffset <= 0 && !checkInDiskByConsumeOffset); "
           "PEERS.md",
    needs=BROKER,
)
async def offset_new_group(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    await _sent(ctx, topic, 1)
    resp = await _query_offset(ctx, group, topic, 0)
    ctx.code(resp, RC.SUCCESS, "QUERY_CONSUMER_OFFSET of a new group")
    ctx.equal(_ext_int(ctx, resp, "offset"), 0, "the offset")


@case(
    "BR-OFFSET-004", Level.MUST,
    "GET_MAX_OFFSET and GET_MIN_OFFSET give the queue's bounds (n and 0 after n sends)",
    source="AdminBrokerProcessor.getMaxOffset/getMinOffset",
    needs=BROKER,
    codes=(R.GET_MAX_OFFSET, R.GET_MIN_OFFSET),
)
async def offset_bounds(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    await _sent(ctx, topic, 3, queue_id=1)
    ext = {"topic": topic, "queueId": 1}
    mx = await ctx.call("broker", R.GET_MAX_OFFSET, ext, what="GET_MAX_OFFSET")
    mn = await ctx.call("broker", R.GET_MIN_OFFSET, ext, what="GET_MIN_OFFSET")
    ctx.equal((_ext_int(ctx, mn, "offset"), _ext_int(ctx, mx, "offset")), (0, 3), "min and max offset")


# ---------------------------------------------------------------------------- clients


async def _consumer_ids(ctx: Ctx, group: str) -> list[str]:
    resp = await ctx.request("broker", R.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": group})
    if resp.code != RC.SUCCESS:
        return []
    return list(json.loads(resp.body or b"{}").get("consumerIdList") or [])


@case(
    "BR-HB-001", Level.MUST,
    "a HEART_BEAT with consumer data (Java's enum names) registers the consumer: GET_CONSUMER_LIST_BY_GROUP "
    "lists its clientID",
    source="ClientManageProcessor.heartBeat; ConsumerManageProcessor.getConsumerListByGroup",
    needs=BROKER,
    codes=(R.HEART_BEAT,),
)
async def heartbeat(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    client = ctx.unique("client")
    conn = await ctx.connect("broker")
    await ctx.call("broker", R.HEART_BEAT, None, heartbeat_body(client, consumer_group=group, topic=topic),
                   conn=conn, what="HEART_BEAT")
    ctx.equal(await _consumer_ids(ctx, group), [client], "consumerIdList")


@case(
    "BR-HB-002", Level.MUST,
    "a HEART_BEAT whose enums are ordinals (the C++ client) registers the consumer too",
    source="ClientManageProcessor.heartBeat (fastjson reads enum ordinals); PEERS.md",
    needs=BROKER,
    codes=(R.HEART_BEAT,),
)
async def heartbeat_ordinals(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    client = ctx.unique("client")
    conn = await ctx.connect("broker")
    await ctx.call("broker", R.HEART_BEAT, None,
                   heartbeat_body(client, consumer_group=group, topic=topic, enum_names=False),
                   conn=conn, language="CPP", version=63, what="HEART_BEAT with ordinals")
    ctx.equal(await _consumer_ids(ctx, group), [client], "consumerIdList")


@case(
    "BR-HB-003", Level.MUST,
    "UNREGISTER_CLIENT removes the consumer from its group",
    source="ClientManageProcessor.unregisterClient",
    needs=BROKER,
    codes=(R.UNREGISTER_CLIENT,),
)
async def unregister_client(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    client = ctx.unique("client")
    conn = await ctx.connect("broker")
    await ctx.call("broker", R.HEART_BEAT, None, heartbeat_body(client, consumer_group=group, topic=topic),
                   conn=conn, what="HEART_BEAT")
    await ctx.call("broker", R.UNREGISTER_CLIENT, {"clientID": client, "consumerGroup": group}, conn=conn,
                   what="UNREGISTER_CLIENT")
    ctx.check(client not in await _consumer_ids(ctx, group),
              "the consumer is still listed after UNREGISTER_CLIENT")


@case(
    "BR-HB-004", Level.SHOULD,
    "when a second consumer joins a group, the broker sends NOTIFY_CONSUMER_IDS_CHANGED (oneway) to the "
    "first",
    source="DefaultConsumerIdsChangeListener; Broker2Client.notifyConsumerIdsChanged",
    needs=BROKER,
)
async def notify_ids_changed(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    notified: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()

    def handler(_conn: object, cmd: RemotingCommand) -> None:
        if cmd.code == R.NOTIFY_CONSUMER_IDS_CHANGED and not notified.done():
            notified.set_result(cmd)

    first = await ctx.connect("broker", handler=handler)
    await ctx.call("broker", R.HEART_BEAT, None, heartbeat_body(ctx.unique("c"), consumer_group=group,
                                                                topic=topic),
                   conn=first, what="the first HEART_BEAT")
    second = await ctx.connect("broker")
    await ctx.call("broker", R.HEART_BEAT, None, heartbeat_body(ctx.unique("c"), consumer_group=group,
                                                                topic=topic),
                   conn=second, what="the second HEART_BEAT")
    try:
        cmd = await asyncio.wait_for(asyncio.shield(notified), 5.0)
    except TimeoutError:
        ctx.fail("the first consumer got no NOTIFY_CONSUMER_IDS_CHANGED within 5 s")
        raise
    ctx.equal(cmd.ext_fields.get("consumerGroup"), group, "consumerGroup of the notification")
    ctx.check(cmd.is_oneway, "the notification is not oneway")


@case(
    "BR-LOCK-001", Level.SHOULD,
    "LOCK_BATCH_MQ locks free queues for a client (lockOKMQSet) and UNLOCK_BATCH_MQ releases them",
    source="AdminBrokerProcessor.lockBatchMQ/unlockBatchMQ; RebalanceLockManager",
    needs=BROKER,
    codes=(R.LOCK_BATCH_MQ, R.UNLOCK_BATCH_MQ),
)
async def lock_batch(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    name = ctx.target.broker_name or "broker"
    mqs = [{"brokerName": name, "queueId": q, "topic": topic} for q in range(2)]
    body = json.dumps({"clientId": ctx.unique("c"), "consumerGroup": group, "mqSet": mqs}).encode()
    resp = await ctx.call("broker", R.LOCK_BATCH_MQ, None, body, what="LOCK_BATCH_MQ")
    locked = json.loads(resp.body or b"{}").get("lockOKMQSet") or []
    ctx.equal(sorted(m.get("queueId") for m in locked), [0, 1], "queueIds of lockOKMQSet")
    await ctx.call("broker", R.UNLOCK_BATCH_MQ, None, body, what="UNLOCK_BATCH_MQ")


# ---------------------------------------------------------------------------- retry, DLQ, delay


async def _one_message(ctx: Ctx) -> tuple[str, str, RemotingCommand]:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    resp = await send_ok(ctx, topic, b"consume me", queue_id=0, properties={"UNIQ_KEY": _uniq(),
                                                                            "KEYS": "retry"})
    return topic, group, resp


async def _send_back(ctx: Ctx, group: str, topic: str, sent: RemotingCommand, *, delay: int,
                     max_times: int | None = None) -> RemotingCommand:
    offset = decode_offset_msg_id(sent.ext_fields["msgId"]).offset
    ext: dict[str, object] = {"offset": offset, "group": group, "delayLevel": delay,
                              "originMsgId": sent.ext_fields["msgId"], "originTopic": topic,
                              "unitMode": False}
    if max_times is not None:
        ext["maxReconsumeTimes"] = max_times
    return await ctx.request("broker", R.CONSUMER_SEND_MSG_BACK, ext)


async def _max_offset(ctx: Ctx, topic: str, queue: int = 0) -> int:
    resp = await ctx.request("broker", R.GET_MAX_OFFSET, {"topic": topic, "queueId": queue})
    return int(resp.ext_fields.get("offset", "0")) if resp.code == RC.SUCCESS else 0


def _dlq_delete(ctx: Ctx, group: str) -> None:
    for topic in (f"%DLQ%{group}", f"%RETRY%{group}"):
        delete_after_run(ctx, topic)


@case(
    "BR-RETRY-001", Level.MUST,
    "CONSUMER_SEND_MSG_BACK with delayLevel -1 puts the message in %DLQ%<group>",
    source="SendMessageProcessor.asyncConsumerSendMsgBack (delayLevel < 0 → DLQ)",
    needs=BROKER,
    codes=(R.CONSUMER_SEND_MSG_BACK,),
)
async def send_back_dlq(ctx: Ctx) -> None:
    topic, group, sent = await _one_message(ctx)
    _dlq_delete(ctx, group)
    ctx.code(await _send_back(ctx, group, topic, sent, delay=-1), RC.SUCCESS, "CONSUMER_SEND_MSG_BACK")

    async def arrived() -> bool:
        return await _max_offset(ctx, f"%DLQ%{group}") >= 1

    await ctx.poll(arrived, timeout=5, what=f"nothing arrived in %DLQ%{group}")


@case(
    "BR-RETRY-002", Level.MUST,
    "CONSUMER_SEND_MSG_BACK of a message that has been reconsumed maxReconsumeTimes times puts it in "
    "%DLQ%<group>",
    source="SendMessageProcessor.asyncConsumerSendMsgBack (reconsumeTimes >= maxReconsumeTimes)",
    needs=BROKER,
    codes=(R.CONSUMER_SEND_MSG_BACK,),
)
async def send_back_exhausted(ctx: Ctx) -> None:
    topic, group, sent = await _one_message(ctx)
    _dlq_delete(ctx, group)
    ctx.code(await _send_back(ctx, group, topic, sent, delay=0, max_times=0), RC.SUCCESS,
             "CONSUMER_SEND_MSG_BACK")

    async def arrived() -> bool:
        return await _max_offset(ctx, f"%DLQ%{group}") >= 1

    await ctx.poll(arrived, timeout=5, what=f"nothing arrived in %DLQ%{group} with maxReconsumeTimes 0")


@case(
    "BR-RETRY-003", Level.MUST,
    "CONSUMER_SEND_MSG_BACK with delayLevel 1 brings the message back in %RETRY%<group> about 1 s later, "
    "with reconsumeTimes 1 and RETRY_TOPIC naming the original topic",
    source="SendMessageProcessor.asyncConsumerSendMsgBack; ScheduleMessageService (level 1 = 1 s)",
    needs=BROKER,
    codes=(R.CONSUMER_SEND_MSG_BACK,),
    timeout=30.0,
)
async def send_back_retry(ctx: Ctx) -> None:
    topic, group, sent = await _one_message(ctx)
    _dlq_delete(ctx, group)
    ctx.code(await _send_back(ctx, group, topic, sent, delay=1), RC.SUCCESS, "CONSUMER_SEND_MSG_BACK")
    retry = f"%RETRY%{group}"

    async def back() -> list[StoredMessage]:
        resp = await pull(ctx, group, retry, 0, 0)
        return messages(resp, ctx, "PULL_MESSAGE") if resp.code == RC.SUCCESS else []

    got = await ctx.poll(back, timeout=15, interval=0.3, what=f"the message did not come back in {retry}")
    m = got[0]
    ctx.equal((m.body, m.reconsume_times, m.properties.get("RETRY_TOPIC")), (b"consume me", 1, topic),
              "body, reconsumeTimes and RETRY_TOPIC of the retried message")


@case(
    "BR-DELAY-001", Level.MUST,
    "a message with DELAY=1 is not consumable at once and appears in its topic about 1 s later",
    source="CommitLog.putMessage (delay level → SCHEDULE_TOPIC_XXXX); ScheduleMessageService "
           "(messageDelayLevel 1s 5s 10s ...)",
    needs=BROKER,
    timeout=30.0,
)
async def delay_level(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    group = await create_group(ctx)
    t0 = time.monotonic()
    await send_ok(ctx, topic, b"later", queue_id=0, properties={"DELAY": "1"})
    early = await pull(ctx, group, topic, 0, 0)
    if time.monotonic() - t0 < 0.8:
        ctx.check(early.code != RC.SUCCESS, "the delayed message was consumable at once")

    async def arrived() -> list[StoredMessage]:
        resp = await pull(ctx, group, topic, 0, 0)
        return messages(resp, ctx, "PULL_MESSAGE") if resp.code == RC.SUCCESS else []

    got = await ctx.poll(arrived, timeout=15, interval=0.2, what="the delayed message never appeared")
    ctx.note(f"appeared {time.monotonic() - t0:.1f} s after the send")
    ctx.equal(got[0].body, b"later", "the delayed message's body")


# ---------------------------------------------------------------------------- queries


async def _query(ctx: Ctx, topic: str, key: str, *, unique: bool = False) -> RemotingCommand:
    ext: dict[str, object] = {"topic": topic, "key": key, "maxNum": 32, "beginTimestamp": 0,
                              "endTimestamp": 2**63 - 1}
    if unique:
        ext["_UNIQUE_KEY_QUERY"] = "true"
    return await ctx.request("broker", R.QUERY_MESSAGE, ext)


@case(
    "BR-QUERY-001", Level.MUST,
    "QUERY_MESSAGE by a key of the KEYS property finds the message",
    source="QueryMessageProcessor.queryMessage; IndexService",
    needs=BROKER,
    codes=(R.QUERY_MESSAGE,),
)
async def query_key(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    key = ctx.unique("key")
    await send_ok(ctx, topic, b"by key", properties={"KEYS": f"{key} other"})

    async def found() -> list[StoredMessage]:
        resp = await _query(ctx, topic, key)
        return messages(resp, ctx, "QUERY_MESSAGE") if resp.code == RC.SUCCESS else []

    got = await ctx.poll(found, timeout=10, what=f"QUERY_MESSAGE never found key {key}")
    ctx.equal([m.body for m in got], [b"by key"], "the messages found")


@case(
    "BR-QUERY-002", Level.MUST,
    "QUERY_MESSAGE with _UNIQUE_KEY_QUERY=true finds a message by its UNIQ_KEY",
    source="QueryMessageProcessor.queryMessage (isUniqueKey); mqadmin queryMsgByUniqueKey",
    needs=BROKER,
    codes=(R.QUERY_MESSAGE,),
)
async def query_unique(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    uniq = _uniq()
    await send_ok(ctx, topic, b"by unique key", properties={"UNIQ_KEY": uniq})

    async def found() -> list[StoredMessage]:
        resp = await _query(ctx, topic, uniq, unique=True)
        return messages(resp, ctx, "QUERY_MESSAGE") if resp.code == RC.SUCCESS else []

    got = await ctx.poll(found, timeout=10, what=f"QUERY_MESSAGE never found UNIQ_KEY {uniq}")
    ctx.equal([m.body for m in got], [b"by unique key"], "the messages found")


@case(
    "BR-QUERY-003", Level.MUST,
    "QUERY_MESSAGE of a key nothing carries is answered QUERY_NOT_FOUND",
    source='QueryMessageProcessor.queryMessage ("can not find message, maybe time range not correct")',
    needs=BROKER,
    codes=(R.QUERY_MESSAGE,),
)
async def query_missing(ctx: Ctx) -> None:
    topic = await _fresh(ctx)
    ctx.code(await _query(ctx, topic, ctx.unique("nokey")), RC.QUERY_NOT_FOUND,
             "QUERY_MESSAGE of an unknown key")


@case(
    "BR-QUERY-004", Level.SHOULD,
    "VIEW_MESSAGE_BY_ID at a commit-log offset past the end is answered SYSTEM_ERROR",
    source='QueryMessageProcessor.viewMessageById ("can not find message by the offset")',
    needs=BROKER,
    codes=(R.VIEW_MESSAGE_BY_ID,),
)
async def view_missing(ctx: Ctx) -> None:
    ctx.code(await ctx.request("broker", R.VIEW_MESSAGE_BY_ID, {"offset": 2**50}), RC.SYSTEM_ERROR,
             "VIEW_MESSAGE_BY_ID far past the end of the commit log")


# ---------------------------------------------------------------------------- unknown codes


@case(
    "BR-UNKNOWN-001", Level.MUST,
    "the broker answers a request code it does not know with REQUEST_CODE_NOT_SUPPORTED",
    source="NettyRemotingAbstract.processRequestCommand (no processor); capture "
           "java-4.9.8/10-error-responses case 3",
    needs=BROKER,
)
async def broker_unknown(ctx: Ctx) -> None:
    resp = await ctx.request("broker", 9999)
    ctx.code(resp, RC.REQUEST_CODE_NOT_SUPPORTED, "an unknown request code")
    want = " request type 9999 not supported"
    if resp.remark != want:
        ctx.note(f"remark {resp.remark!r} (Java: {want!r})")

