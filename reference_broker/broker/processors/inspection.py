# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The inspection requests of ``AdminBrokerProcessor`` 4.9.8 that read queues, offsets and clients.

QUERY_CONSUME_TIME_SPAN (303): per write queue of the topic, the store times of its first and last
message and of the group's last consumed one, and how long the next unconsumed message has been
waiting (``delayTime``, 0 once the group is at the end). An unknown topic is TOPIC_NOT_EXIST.

QUERY_CORRECTION_OFFSET (308): per queue id, the smallest committed offset of the topic over
every group but ``filterGroups`` (offsets behind the queue's minimum left out). Java then compares
with ``compareGroup``'s offsets, but it looks them up as ``<compareGroup>@<topic>`` (the arguments
of ``queryOffset(group, topic)`` swapped), so the comparison only happens for a group whose offsets
are kept under that name; we look them up the same way. Java's filtering removes the filtered
groups' offsets from the broker's offset table as it goes (``keySet().iterator().remove()``); ours
leaves the table alone (docs/servers.md).

QUERY_CONSUME_QUEUE (321, mqadmin queryCq): the ConsumeQueue's min and max index and up to
``count`` units from ``index`` (to the end of the file holding it), with the group's subscription
and filter data when a group is named; the answer keeps the remark ``not set any response
code``, as Java's does. A queue the store has never held is SYSTEM_ERROR
``"<queueId>@<topic> is not exist!"``; an index that is not a unit of the queue is SUCCESS with
the remark ``"Index <i> of <queueId>@<topic> is not exist!"`` and no body.

GET_ALL_PRODUCER_INFO (328, mqadmin producer): every producer connection by group
(``ProducerManager.getProducerTable``), ``remoteIP`` as Netty's ``remoteAddress().toString()``
(``/ip:port``).
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection
from wire.bodies import (
    ConsumeQueueData,
    ProducerInfo,
    ProducerTableInfo,
    QueryConsumeQueueResponseBody,
    QueryConsumeTimeSpanBody,
    QueryCorrectionOffsetBody,
    QueueTimeSpan,
    SubscriptionData,
)
from wire.headers import (
    QueryConsumeQueueRequestHeader,
    QueryConsumeTimeSpanRequestHeader,
    QueryCorrectionOffsetHeader,
)
from wire.java import JavaHashMap
from wire.sql92 import is_tag_type

from ..filters import bloom_filter_data
from ..offsets import TOPIC_GROUP_SEPARATOR
from .common import NOT_SET_REMARK, BrokerHandler, queue_of

if TYPE_CHECKING:
    from ...config import BrokerConfig
    from ..broker import Broker

__all__ = ["HANDLERS", "java_time_text"]

#: ``Long.MAX_VALUE``: the correction offset of a queue the compared group is behind on
_LONG_MAX = 2**63 - 1


def java_time_text(ms: int) -> str:
    """``UtilAll.formatDate(new Date(ms), "yyyy-MM-dd#HH:mm:ss:SSS")`` in this machine's time zone."""
    t = datetime.fromtimestamp(ms / 1000).astimezone()
    return f"{t:%Y-%m-%d#%H:%M:%S}:{(ms % 1000):03d}"


def query_consume_time_span(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = QueryConsumeTimeSpanRequestHeader.from_ext(req.ext_fields)
    tc = broker.topics.select(h.topic)
    if tc is None:
        return req.response(ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist")
    store = broker.store
    spans = []
    for i in range(tc.write_queue_nums):
        min_time = store.earliest_message_time(h.topic, i)
        max_offset = store.max_offset(h.topic, i)
        max_time = _store_time(broker, h.topic, i, max_offset - 1)
        consumer_offset = broker.offsets.query(h.group, h.topic, i)
        consume_time = min_time
        if consumer_offset > 0:
            consume_time = _store_time(broker, h.topic, i, consumer_offset - 1)
        delay = 0
        if consumer_offset < max_offset:
            delay = int(time.time() * 1000) - _store_time(broker, h.topic, i, consumer_offset)
        spans.append(QueueTimeSpan(
            message_queue=queue_of(broker, h.topic, i),
            min_time_stamp=min_time, min_time_stamp_str=java_time_text(min_time),
            max_time_stamp=max_time, max_time_stamp_str=java_time_text(max_time),
            consume_time_stamp=consume_time, consume_time_stamp_str=java_time_text(consume_time),
            delay_time=delay))
    body = QueryConsumeTimeSpanBody(consume_time_span_set=tuple(spans)).encode()
    return req.response(ResponseCode.SUCCESS, None, None, body)


def _store_time(broker: Broker, topic: str, queue_id: int, queue_offset: int) -> int:
    """``getMessageStoreTimeStamp``: -1 for an offset that is not a unit of the queue."""
    return broker.store.message_store_time(topic, queue_id, queue_offset) if queue_offset >= 0 else -1


def query_correction_offset(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = QueryCorrectionOffsetHeader.from_ext(req.ext_fields)
    filtered = set((h.filter_groups or "").split(",")) if (h.filter_groups or "").strip() else set()
    table = broker.offsets.table
    smallest: JavaHashMap[int, int] = JavaHashMap()
    for key, offsets in table.items():
        topic, _, group = key.partition(TOPIC_GROUP_SEPARATOR)
        if topic != h.topic or group.split(TOPIC_GROUP_SEPARATOR)[0] in filtered:
            continue
        for qid, offset in offsets.items():
            if offset >= broker.store.min_offset(h.topic, qid):
                smallest[qid] = min(offset, smallest.get(qid, _LONG_MAX))
    # ``queryOffset(topic, compareGroup)`` against ``queryOffset(group, topic)``: the key is swapped
    compare = table.get(f"{h.compare_group}{TOPIC_GROUP_SEPARATOR}{h.topic}")
    if compare:
        for qid, offset in compare.items():
            current = smallest.get(qid)
            if current is None:
                return req.response(ResponseCode.SYSTEM_ERROR, "java.lang.NullPointerException")
            smallest[qid] = _LONG_MAX if current > offset else current
    body = QueryCorrectionOffsetBody(correction_offsets=smallest).encode()
    return req.response(ResponseCode.SUCCESS, None, None, body)


def query_consume_queue(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = QueryConsumeQueueRequestHeader.from_ext(req.ext_fields)
    topic, qid = h.topic or "", h.queue_id or 0
    index, count = h.index or 0, h.count or 0
    found = broker.store.consume_queue_units(topic, qid, index, count)
    if found is None:
        return req.response(ResponseCode.SYSTEM_ERROR, f"{qid}@{topic} is not exist!")
    lo, hi, units = found
    subscription: SubscriptionData | None = None
    filter_data: str | None = None
    if h.consumer_group is not None:
        subscription = broker.consumers.find_subscription(h.consumer_group, topic)
        if subscription is None:
            filter_data = f"{h.consumer_group}@{topic} is not online!"
        else:
            filter_data = _filter_data(broker.config, h.consumer_group, topic, subscription)
    if units is None:
        return req.response(ResponseCode.SUCCESS, f"Index {index} of {qid}@{topic} is not exist!")
    body = QueryConsumeQueueResponseBody(
        subscription_data=subscription, filter_data=filter_data, max_queue_index=hi, min_queue_index=lo,
        queue_data=tuple(ConsumeQueueData(physic_offset=o, physic_size=s, tags_code=t) for o, s, t in units),
    ).encode()
    # Java's answer keeps the remark ``createResponseCommand(null)`` set
    return req.response(ResponseCode.SUCCESS, NOT_SET_REMARK, None, body)


def _filter_data(config: BrokerConfig, group: str, topic: str, sub: SubscriptionData) -> str:
    """``JSON.toJSONString(consumerFilterData, true)``: ``null`` for a tag subscription (no
    ConsumerFilterData), else the filter's properties as fastjson's pretty form (tab indents)
    writes them, its bloom filter data included. ``bornTime`` is the subscription's version, where
    Java has the time it registered the filter."""
    if is_tag_type(sub.expression_type):
        return "null"
    version = sub.sub_version or 0
    bits, positions = bloom_filter_data(f"{group}#{topic}", config.int("maxErrorRateOfBloomFilter"),
                                        config.int("expectConsumerNumUseFilter"))
    bloom = f'{{\n\t\t"bitNum":{bits},\n\t\t"bitPos":[{",".join(map(str, positions))}]\n\t}}'
    fields = {"bornTime": version, "clientVersion": version, "consumerGroup": group, "dead": False,
              "deadTime": 0, "expression": sub.sub_string, "expressionType": sub.expression_type,
              "topic": topic}
    lines = [f'\t"bloomFilterData":{bloom}']
    lines += [f"\t{json.dumps(k)}:{json.dumps(v, ensure_ascii=False)}" for k, v in fields.items()]
    return "{\n" + ",\n".join(lines) + "\n}"


def get_all_producer_info(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    data: JavaHashMap[str, tuple[ProducerInfo, ...]] = JavaHashMap()
    for group, table in broker.producers.groups.items():
        if table:
            data[group] = tuple(
                ProducerInfo(client_id=c.client_id, remote_ip=f"/{c.addr}", language=c.language,
                             version=c.version, last_update_timestamp=c.last_update)
                for c in table.values())
    return req.response(ResponseCode.SUCCESS, None, None, ProducerTableInfo(data=data).encode())


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.QUERY_CONSUME_TIME_SPAN: query_consume_time_span,
    RequestCode.QUERY_CORRECTION_OFFSET: query_correction_offset,
    RequestCode.QUERY_CONSUME_QUEUE: query_consume_queue,
    RequestCode.GET_ALL_PRODUCER_INFO: get_all_producer_info,
}
