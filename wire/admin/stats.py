# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``statsAll``: put and get rates of every topic and its consumer groups, from the brokers' stats
items (VIEW_BROKER_STATS_DATA 315: ``TOPIC_PUT_NUMS`` keyed by topic, ``GROUP_GET_NUMS`` keyed by
``topic@group``), with each group's backlog (GET_CONSUME_STATS), as mqadmin ``StatsAllSubCommand``.

A broker that has no such item answers SYSTEM_ERROR ("The stats <…> <…> not exist"), which is a
zero here, as mqadmin catches it; a broker that does not answer is a failure of the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..bodies import GroupList, TopicList
from ..codes import RequestCode, ResponseCode
from ..errors import WireError
from .client import AdminClient, gather_map
from .common import DLQ_PREFIX, MASTER_ID, RETRY_PREFIX, Outcome, outcome, route
from .errors import AdminError

__all__ = ["StatsRow", "StatsAll", "stats_all"]


@dataclass(frozen=True, slots=True)
class StatsRow:
    topic: str
    #: ``None``: nobody consumes the topic (mqadmin: NO_CONSUMER)
    group: str | None
    accumulation: int
    in_tps: float
    out_tps: float | None
    in_msg_24h: int
    out_msg_24h: int | None


@dataclass(frozen=True, slots=True)
class StatsAll:
    rows: tuple[StatsRow, ...]
    failures: tuple[Outcome, ...] = ()


def _day_sum(data: dict[str, Any]) -> int:
    # mirrors compute24HourSum: the day's sum, else the hour's, else the minute's
    for window in ("statsDay", "statsHour", "statsMinute"):
        total = int((data.get(window) or {}).get("sum") or 0)
        if total:
            return total
    return 0


async def stats_all(client: AdminClient, *, topic: str | None = None, active: bool = False) -> StatsAll:
    """One row per (topic, consumer group) with the rates of the last minute and the counts of
    the last day; ``active``: only topics with traffic that day."""
    from .. import fastjson
    from ..headers import GetConsumeStatsRequestHeader, QueryTopicConsumeByWhoRequestHeader

    if topic is not None:
        topics = [topic]
    else:
        resp = await client.namesrv(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
        topics = sorted(t for t in TopicList.decode(resp.body or b"{}").topic_list
                        if not t.startswith((RETRY_PREFIX, DLQ_PREFIX)))
    silent: dict[str, Outcome] = {}

    async def view(addr: str, name: str, key: str) -> dict[str, Any] | None:
        if addr in silent:
            return None
        try:
            resp = await client.call(addr, RequestCode.VIEW_BROKER_STATS_DATA,
                                     {"statsName": name, "statsKey": key},
                                     ok=(ResponseCode.SUCCESS, ResponseCode.SYSTEM_ERROR))
        except (WireError, AdminError) as err:
            silent.setdefault(addr, outcome(addr, err))
            return None
        if resp.code != ResponseCode.SUCCESS:
            return None
        doc = fastjson.loads(resp.body or b"{}", what="BrokerStatsData")
        return doc if isinstance(doc, dict) else None

    async def one(t: str) -> list[StatsRow]:
        r = await route(client, t)
        masters = [a for a in (bd.broker_addrs.get(MASTER_ID) for bd in r.broker_datas) if a]
        in_tps, in_day = 0.0, 0
        for addr in masters:
            d = await view(addr, "TOPIC_PUT_NUMS", t)
            if d is not None:
                in_tps += float((d.get("statsMinute") or {}).get("tps") or 0)
                in_day += _day_sum(d)
        groups: list[str] = []
        for addr in masters:
            try:
                g = await client.call(addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO,
                                      QueryTopicConsumeByWhoRequestHeader(topic=t))
            except (WireError, AdminError) as err:
                silent.setdefault(addr, outcome(addr, err))
                continue
            groups = sorted(GroupList.decode(g.body or b"{}").group_list)
            break
        if not groups:
            return [] if active and not in_day else [StatsRow(t, None, 0, in_tps, None, in_day, None)]
        rows = []
        for group in groups:
            out_tps, out_day, backlog = 0.0, 0, 0
            for addr in masters:
                d = await view(addr, "GROUP_GET_NUMS", f"{t}@{group}")
                if d is not None:
                    out_tps += float((d.get("statsMinute") or {}).get("tps") or 0)
                    out_day += _day_sum(d)
                if addr in silent:
                    continue
                try:
                    from ..bodies import ConsumeStats

                    s = await client.call(addr, RequestCode.GET_CONSUME_STATS,
                                          GetConsumeStatsRequestHeader(consumer_group=group, topic=t))
                    stats = ConsumeStats.decode(s.body or b"{}")
                    backlog += sum(w.broker_offset - w.consumer_offset for w in stats.offset_table.values())
                except (WireError, AdminError):
                    pass  # mirrors StatsAllSubCommand: no consume stats is a backlog of 0
            if not active or in_day or out_day:
                rows.append(StatsRow(t, group, max(0, backlog), in_tps, out_tps, in_day, out_day))
        return rows

    results = await gather_map(topics, one, limit=8)
    rows = [row for res in results if isinstance(res, list) for row in res]
    return StatsAll(tuple(rows), tuple(silent.values()))
