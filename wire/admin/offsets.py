# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Moving a consumer group's offsets: reset by time (or to the end), and clone from another group.

Mirrors mqadmin ``resetOffsetByTime``, ``skipAccumulatedMessage`` and ``cloneGroupOffset``
(``DefaultMQAdminExtImpl.resetOffsetByTimestamp``, ``resetOffsetByTimestampOld`` and
``cloneGroupOffset``, 4.9.8):

* **reset** asks each broker of the topic to do it (INVOKE_BROKER_TO_RESET_OFFSET, 222): the broker
  computes each queue's offset for the time (``getOffsetInQueueByTime``; ``-1`` is the queue's max
  offset), tells the group's online consumers (RESET_CONSUMER_CLIENT_OFFSET) and answers the
  offsets. When the group has no consumer online (CONSUMER_NOT_ONLINE), the offsets are changed
  here instead, as mqadmin's fallback ``resetOffsetByTimeOld`` does: the group's consume stats
  (GET_CONSUME_STATS), each queue's offset for the time (SEARCH_OFFSET_BY_TIMESTAMP, 29, or
  GET_MAX_OFFSET), then UPDATE_CONSUMER_OFFSET (15) where the new offset is earlier, or always with
  ``force``. Each broker takes the path its own answer calls for.
* **clone** asks each broker holding the source group's queues of the topic to copy its offsets
  (CLONE_GROUP_OFFSET, 314).

The request headers (``ResetOffsetRequestHeader``, ``CloneGroupOffsetRequestHeader``) are sent as
plain pairs under Java's field names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bodies import ConsumeStats, MessageQueue, TopicStatsTable
from ..codes import RequestCode, ResponseCode
from ..errors import WireError
from .client import AdminClient, gather_map
from .common import Outcome, outcome, route, select_addr
from .errors import AdminError, BadRequest, NotFound

__all__ = ["CloneResult", "QueueReset", "ResetResult", "clone_offset", "reset_offset"]

#: ``timestamp`` of a reset to each queue's end (mqadmin ``skipAccumulatedMessage``, ``-s now``)
TO_THE_END = -1


@dataclass(frozen=True, slots=True)
class QueueReset:
    broker_name: str
    queue_id: int
    #: the group's offset after the reset
    offset: int
    #: when the offsets were changed here (the group was not online): the queue's figures before
    broker_offset: int | None = None
    consumer_offset: int | None = None
    timestamp_offset: int | None = None


@dataclass(frozen=True, slots=True)
class ResetResult:
    group: str
    topic: str
    #: milliseconds since the epoch, or -1 for each queue's end
    timestamp: int
    force: bool
    queues: tuple[QueueReset, ...]
    #: the brokers whose online consumers were told (INVOKE_BROKER_TO_RESET_OFFSET)
    by_broker: tuple[str, ...] = ()
    #: the brokers where the group was not online and its committed offsets were changed here
    by_offsets: tuple[str, ...] = ()
    failures: tuple[Outcome, ...] = ()
    brokers_asked: int = 0


def _offset_table(body: bytes | None) -> dict[MessageQueue, int]:
    """``ResetOffsetBody.offsetTable``: MessageQueue object keys (fastjson), offsets."""
    from .. import fastjson

    doc = fastjson.loads(body or b"{}", what="ResetOffsetBody")
    table = doc.get("offsetTable") or {} if isinstance(doc, dict) else {}
    out: dict[MessageQueue, int] = {}
    for key, value in table.items():
        mq = key if isinstance(key, dict) or hasattr(key, "items") else fastjson.loads(str(key))
        out[MessageQueue(topic=mq.get("topic"), broker_name=mq.get("brokerName"),
                         queue_id=int(mq.get("queueId", 0)))] = int(value)
    return out


async def reset_offset(client: AdminClient, group: str, topic: str, *, timestamp: int,
                       force: bool = True) -> ResetResult:
    """Reset ``group``'s offsets on ``topic`` to ``timestamp`` (ms; -1: each queue's end); see the
    module docstring. ``force``: also move offsets forward (mqadmin's default is true)."""
    if timestamp < TO_THE_END:
        raise BadRequest(f"timestamp {timestamp} is before the epoch")
    r = await route(client, topic)
    brokers = [(bd.broker_name or "", a) for bd, a in ((bd, select_addr(bd)) for bd in r.broker_datas)
               if a is not None]
    if not brokers:
        raise NotFound(f"topic {topic!r} has no broker")
    queue_nums = {q.broker_name or "": q.read_queue_nums for q in r.queue_datas}
    ext = {"topic": topic, "group": group, "timestamp": str(timestamp), "isForce": str(force).lower()}

    async def one(broker: tuple[str, str]) -> tuple[str, list[QueueReset]]:
        name, addr = broker
        resp = await client.call(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, ext,
                                 ok=(ResponseCode.SUCCESS, ResponseCode.CONSUMER_NOT_ONLINE))
        if resp.code == ResponseCode.SUCCESS:
            table = _offset_table(resp.body)
            return "broker", [QueueReset(mq.broker_name or name, mq.queue_id, off)
                              for mq, off in table.items()]
        return "offsets", await _reset_offline(client, addr, name, group, topic, timestamp, force,
                                               queue_nums.get(name, 0))

    results = await gather_map(brokers, one)
    queues: list[QueueReset] = []
    by_broker: list[str] = []
    by_offsets: list[str] = []
    failures: list[Outcome] = []
    for (name, addr), res in zip(brokers, results, strict=True):
        if isinstance(res, Exception):
            failures.append(outcome(addr, res, name))
            continue
        how, rows = res
        (by_broker if how == "broker" else by_offsets).append(addr)
        queues += rows
    queues.sort(key=lambda q: (q.broker_name, q.queue_id))
    return ResetResult(group, topic, timestamp, force, tuple(queues), tuple(by_broker), tuple(by_offsets),
                       tuple(failures), len(brokers))


async def _reset_offline(client: AdminClient, addr: str, broker_name: str, group: str, topic: str,
                         timestamp: int, force: bool, queue_nums: int) -> list[QueueReset]:
    """mqadmin's ``resetOffsetByTimestampOld`` on one broker: the committed offsets, changed here."""
    from ..headers import (
        GetConsumeStatsRequestHeader,
        GetMaxOffsetRequestHeader,
        GetMaxOffsetResponseHeader,
        GetTopicStatsInfoRequestHeader,
        SearchOffsetRequestHeader,
        SearchOffsetResponseHeader,
        UpdateConsumerOffsetRequestHeader,
    )

    resp = await client.call(addr, RequestCode.GET_CONSUME_STATS,
                             GetConsumeStatsRequestHeader(consumer_group=group))
    stats = ConsumeStats.decode(resp.body or b"{}")
    current = {mq.queue_id: (w.broker_offset, w.consumer_offset) for mq, w in stats.offset_table.items()
               if mq.topic == topic}
    if not current:
        # never consumed here: from the queue's min offset, as resetOffsetByTimestampOld does
        resp = await client.call(addr, RequestCode.GET_TOPIC_STATS_INFO,
                                 GetTopicStatsInfoRequestHeader(topic=topic))
        table = TopicStatsTable.decode(resp.body or b"{}").offset_table
        current = {mq.queue_id: (o.max_offset, o.min_offset) for mq, o in table.items()
                   if mq.queue_id < queue_nums}
    rows = []
    for qid, (broker_offset, consumer_offset) in sorted(current.items()):
        if timestamp == TO_THE_END:
            got = await client.call(addr, RequestCode.GET_MAX_OFFSET,
                                    GetMaxOffsetRequestHeader(topic=topic, queue_id=qid))
            target = GetMaxOffsetResponseHeader.from_ext(got.ext_fields).offset
        else:
            got = await client.call(addr, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
                                    SearchOffsetRequestHeader(topic=topic, queue_id=qid, timestamp=timestamp))
            target = SearchOffsetResponseHeader.from_ext(got.ext_fields).offset
        new = consumer_offset
        if force or target <= consumer_offset:
            new = target
            await client.call(addr, RequestCode.UPDATE_CONSUMER_OFFSET, UpdateConsumerOffsetRequestHeader(
                consumer_group=group, topic=topic, queue_id=qid, commit_offset=target))
        rows.append(QueueReset(broker_name, qid, new, broker_offset, consumer_offset, target))
    return rows


@dataclass(frozen=True, slots=True)
class CloneResult:
    src_group: str
    dest_group: str
    topic: str
    brokers: tuple[Outcome, ...]


async def clone_offset(client: AdminClient, src_group: str, dest_group: str, topic: str, *,
                       offline: bool = False) -> CloneResult:
    """CLONE_GROUP_OFFSET (314) to every broker holding ``src_group``'s queues of ``topic``
    (mqadmin cloneGroupOffset: the brokers come from the source group's consume stats).
    ``offline``: copy even where the source group is not subscribed to the topic any more."""
    from ..headers import GetConsumeStatsRequestHeader

    r = await route(client, topic)
    by_name = {bd.broker_name: select_addr(bd) for bd in r.broker_datas}
    names = sorted(n for n in by_name if n and by_name[n])

    async def holds(name: str) -> bool:
        addr = by_name[name]
        assert addr is not None
        resp = await client.call(addr, RequestCode.GET_CONSUME_STATS,
                                 GetConsumeStatsRequestHeader(consumer_group=src_group, topic=topic))
        return bool(ConsumeStats.decode(resp.body or b"{}").offset_table)

    held = await gather_map(names, holds)
    addrs = [by_name[n] for n, h in zip(names, held, strict=True) if h is True]
    errors = [e for e in held if isinstance(e, (WireError, AdminError))]
    if not addrs:
        if errors:
            raise errors[0]
        raise NotFound(f"group {src_group!r} has no offsets of {topic!r} to clone")
    ext = {"srcGroup": src_group, "destGroup": dest_group, "topic": topic, "offline": str(offline).lower()}
    results = await gather_map([a for a in addrs if a],
                               lambda a: client.call(a, RequestCode.CLONE_GROUP_OFFSET, ext))
    return CloneResult(src_group, dest_group, topic,
                       tuple(outcome(a or "", res) for a, res in zip(addrs, results, strict=True)))



