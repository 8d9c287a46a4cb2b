# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What a broker holds for a queue, a group and its producers: QUERY_CONSUME_QUEUE (321, mqadmin
queryCq), QUERY_CONSUME_TIME_SPAN (303, ``DefaultMQAdminExt.queryConsumeTimeSpan``) and
GET_ALL_PRODUCER_INFO (328, mqadmin producer).

A request for a topic without ``broker`` goes where mqadmin sends it: queryCq to the master of
the first broker of the topic's route, the time span to every broker of the route.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..codes import RequestCode, ResponseCode
from .client import AdminClient, gather_map
from .common import Outcome, outcome, route, select_addr
from .errors import NotFound

__all__ = [
    "ConsumeQueueUnit",
    "ConsumeQueueView",
    "ProducerRow",
    "ProducerTable",
    "TimeSpanRow",
    "TimeSpans",
    "all_producers",
    "consume_time_span",
    "query_consume_queue",
]


@dataclass(frozen=True, slots=True)
class ConsumeQueueUnit:
    """One ConsumeQueue unit and its index (queue offset)."""

    index: int
    physic_offset: int
    physic_size: int
    tags_code: int


@dataclass(frozen=True, slots=True)
class ConsumeQueueView:
    """A ConsumeQueue as the broker reports it: its min and max index, the units asked for (empty
    when the index is not a unit of the queue: ``remark`` then says so), and for a group named its
    subscription (a JSON object) and filter data."""

    broker: str
    topic: str
    queue_id: int
    min: int
    max: int
    units: tuple[ConsumeQueueUnit, ...]
    subscription: dict[str, Any] | None = None
    filter_data: str | None = None
    remark: str | None = None


async def query_consume_queue(client: AdminClient, topic: str, queue_id: int, index: int, *, count: int = 10,
                              group: str | None = None, broker: str | None = None) -> ConsumeQueueView:
    """QUERY_CONSUME_QUEUE: up to ``count`` units of ``topic``'s queue from ``index`` (mqadmin queryCq)."""
    from ..bodies import QueryConsumeQueueResponseBody
    from ..headers import QueryConsumeQueueRequestHeader

    if broker is None:
        r = await route(client, topic)
        first = select_addr(r.broker_datas[0]) if r.broker_datas else None
        if first is None:
            raise NotFound(f"topic {topic!r} has no broker in its route")
        broker = first
    ext = QueryConsumeQueueRequestHeader(topic=topic, queue_id=queue_id, index=index, count=count,
                                         consumer_group=group)
    resp = await client.call(broker, RequestCode.QUERY_CONSUME_QUEUE, ext)
    if not resp.body:
        return ConsumeQueueView(broker, topic, queue_id, 0, 0, (), remark=resp.remark)
    body = QueryConsumeQueueResponseBody.decode(resp.body)
    units = tuple(ConsumeQueueUnit(index + i, u.physic_offset, u.physic_size, u.tags_code)
                  for i, u in enumerate(body.queue_data or ()))
    sub = body.subscription_data
    return ConsumeQueueView(broker, topic, queue_id, body.min_queue_index, body.max_queue_index, units,
                            sub.to_json() if sub is not None else None, body.filter_data)


@dataclass(frozen=True, slots=True)
class TimeSpanRow:
    """One queue: the store times (ms, -1: none) of its first and last message and of the group's
    last consumed one, and how long the next unconsumed message has waited (0: none waits)."""

    broker_name: str
    queue_id: int
    min: int
    max: int
    consumed: int
    delay_ms: int


@dataclass(frozen=True, slots=True)
class TimeSpans:
    group: str
    topic: str
    rows: tuple[TimeSpanRow, ...]
    #: brokers of the route that did not answer
    failures: tuple[Outcome, ...] = ()
    brokers_asked: int = 0


async def consume_time_span(client: AdminClient, group: str, topic: str) -> TimeSpans:
    """QUERY_CONSUME_TIME_SPAN to every broker of the topic's route."""
    from ..bodies import QueryConsumeTimeSpanBody
    from ..headers import QueryConsumeTimeSpanRequestHeader

    r = await route(client, topic)
    addrs = [a for a in (select_addr(bd) for bd in r.broker_datas) if a is not None]
    ext = QueryConsumeTimeSpanRequestHeader(topic=topic, group=group)

    async def one(addr: str) -> QueryConsumeTimeSpanBody:
        resp = await client.call(addr, RequestCode.QUERY_CONSUME_TIME_SPAN, ext)
        return QueryConsumeTimeSpanBody.decode(resp.body or b"{}")

    results = await gather_map(addrs, one)
    rows = [TimeSpanRow((s.message_queue.broker_name or "") if s.message_queue else "",
                        s.message_queue.queue_id if s.message_queue else -1,
                        s.min_time_stamp, s.max_time_stamp, s.consume_time_stamp, s.delay_time)
            for body in results if isinstance(body, QueryConsumeTimeSpanBody)
            for s in body.consume_time_span_set]
    rows.sort(key=lambda x: (x.broker_name, x.queue_id))
    failures = tuple(outcome(a, res) for a, res in zip(addrs, results, strict=True)
                     if isinstance(res, Exception))
    return TimeSpans(group, topic, tuple(rows), failures, len(addrs))


@dataclass(frozen=True, slots=True)
class ProducerRow:
    group: str
    client_id: str
    remote_ip: str
    language: str
    version: int
    last_update: int


@dataclass(frozen=True, slots=True)
class ProducerTable:
    broker: str
    rows: tuple[ProducerRow, ...]


async def all_producers(client: AdminClient, broker: str) -> ProducerTable:
    """GET_ALL_PRODUCER_INFO: every producer connected to ``broker``, by group (mqadmin producer)."""
    from ..bodies import ProducerTableInfo

    resp = await client.call(broker, RequestCode.GET_ALL_PRODUCER_INFO, ok=(ResponseCode.SUCCESS,))
    data = ProducerTableInfo.decode(resp.body or b"{}").data
    rows = [ProducerRow(group, p.client_id or "", p.remote_ip or "", _name(p.language), p.version,
                        p.last_update_timestamp)
            for group, producers in data.items() for p in producers]
    rows.sort(key=lambda x: (x.group, x.client_id))
    return ProducerTable(broker, tuple(rows))


def _name(v: object) -> str:
    return str(getattr(v, "name", v)) if v is not None else ""
