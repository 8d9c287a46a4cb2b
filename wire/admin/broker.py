# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Brokers: runtime status (GET_BROKER_RUNTIME_INFO 28) and configuration (GET_BROKER_CONFIG 26,
UPDATE_BROKER_CONFIG 25), for one address or a whole cluster at once.

Cluster selection follows mqadmin: ``brokerStatus -c`` and ``getBrokerConfig -c`` read every
process of the cluster, masters and slaves; ``updateBrokerConfig -c`` writes to the masters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..codes import RequestCode
from .client import AdminClient, gather_map
from .common import (
    MASTER_ID,
    Member,
    Outcome,
    check_taken,
    cluster_info,
    cluster_members,
    outcome,
    properties,
    runtime_table,
)
from .errors import BadRequest, NotFound, NotTaken

__all__ = [
    "MAINTENANCE",
    "BrokerConsumeRow",
    "BrokerConsumeStats",
    "BrokerTable",
    "broker_config_get",
    "broker_config_set",
    "broker_consume_stats",
    "broker_maintenance",
    "broker_status",
    "targets",
]


@dataclass(frozen=True, slots=True)
class BrokerTable:
    """One broker's key/value table (runtime figures or configuration), keys sorted."""

    addr: str
    broker_name: str | None
    broker_id: int | None
    table: Mapping[str, str]
    error: str | None = None
    #: the broker could not be reached or did not answer in time
    unreachable: bool = False


async def targets(client: AdminClient, *, broker: str | None, cluster: str | None,
                  masters_only: bool = False) -> list[Member]:
    """The processes to ask: the ``broker`` address, or the members of ``cluster``."""
    if (broker is None) == (cluster is None):
        raise BadRequest("give exactly one of a broker address or a cluster")
    if broker is not None:
        return [Member("", "", -1, broker)]
    members = cluster_members(await cluster_info(client), cluster)
    if masters_only:
        members = [m for m in members if m.broker_id == MASTER_ID]
    if not members:
        raise NotFound(f"cluster {cluster!r} has no {'master ' if masters_only else ''}brokers")
    return members


def _tables(members: list[Member], results: list[object], *,
            ordered: bool = False) -> tuple[BrokerTable, ...]:
    """One table per member, keys sorted (``ordered``: in the order asked for)."""
    from ..aio import RemotingIOError

    out = []
    for m, r in zip(members, results, strict=True):
        name = m.broker_name or None
        bid = m.broker_id if m.broker_id >= 0 else None
        if isinstance(r, Exception):
            out.append(BrokerTable(m.addr, name, bid, {}, str(r), isinstance(r, RemotingIOError)))
        else:
            assert isinstance(r, dict)
            out.append(BrokerTable(m.addr, name, bid, dict(r.items() if ordered else sorted(r.items()))))
    return tuple(out)


def _single(tables: tuple[BrokerTable, ...], results: list[object]) -> None:
    # one broker asked by address: its failure is the command's failure
    if len(tables) == 1 and isinstance(results[0], Exception):
        raise results[0]


async def broker_status(client: AdminClient, *, broker: str | None = None,
                        cluster: str | None = None) -> tuple[BrokerTable, ...]:
    """GET_BROKER_RUNTIME_INFO (28) from the broker, or from every process of the cluster at once."""
    members = await targets(client, broker=broker, cluster=cluster)
    results = await gather_map([m.addr for m in members], lambda a: runtime_table(client, a))
    tables = _tables(members, results)
    if broker is not None:
        _single(tables, results)
    return tables


async def broker_config_get(client: AdminClient, *, broker: str | None = None, cluster: str | None = None,
                            keys: tuple[str, ...] = ()) -> tuple[BrokerTable, ...]:
    """GET_BROKER_CONFIG (26): the broker's configuration; ``keys`` keeps only those keys."""
    members = await targets(client, broker=broker, cluster=cluster)
    results = await gather_map([m.addr for m in members],
                               lambda a: properties(client, a, RequestCode.GET_BROKER_CONFIG))
    if keys:
        results = [r if isinstance(r, Exception) else {k: r[k] for k in keys if k in r} for r in results]
    tables = _tables(members, results, ordered=bool(keys))
    if broker is not None:
        _single(tables, results)
    return tables


async def broker_config_set(client: AdminClient, values: Mapping[str, str], *, broker: str | None = None,
                            cluster: str | None = None) -> tuple[Outcome, ...]:
    """UPDATE_BROKER_CONFIG (25) with ``values`` as a Properties body, to the broker or to every
    master of the cluster (mqadmin updateBrokerConfig)."""
    from ..bodies import encode_properties

    if not values:
        raise BadRequest("nothing to set")
    body = encode_properties(dict(values), escape=True)
    members = await targets(client, broker=broker, cluster=cluster, masters_only=True)
    addrs = [m.addr for m in members]

    async def one(addr: str) -> None:
        await client.call(addr, RequestCode.UPDATE_BROKER_CONFIG, None, body)
        # read back: a Java broker answers SUCCESS and keeps the old value when it cannot parse one
        now = await properties(client, addr, RequestCode.GET_BROKER_CONFIG)
        why = check_taken(dict(values), now, "broker")
        if why is not None:
            raise NotTaken(why)

    results = await gather_map(addrs, one)
    return tuple(outcome(a, r) for a, r in zip(addrs, results, strict=True))


# ---------------------------------------------------------------------- consume stats, maintenance


@dataclass(frozen=True, slots=True)
class BrokerConsumeRow:
    """One queue of a group on a broker (mqadmin brokerConsumeStats)."""

    topic: str
    group: str
    broker_name: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    diff: int
    last_timestamp: int


@dataclass(frozen=True, slots=True)
class BrokerConsumeStats:
    addr: str
    rows: tuple[BrokerConsumeRow, ...]
    total_diff: int


async def broker_consume_stats(client: AdminClient, broker: str, *,
                               order: bool = False) -> BrokerConsumeStats:
    """GET_BROKER_CONSUME_STATS (317): every group's queues on one broker (mqadmin
    brokerConsumeStats); ``order``: ordered topics only. The header (``GetConsumeStatsInBrokerHeader``)
    is sent as its one pair, ``isOrder``."""
    from .. import fastjson
    from ..bodies import ConsumeStats

    resp = await client.call(broker, RequestCode.GET_BROKER_CONSUME_STATS, {"isOrder": str(order).lower()})
    doc = fastjson.loads(resp.body or b"{}", what="ConsumeStatsList")
    rows = []
    for by_group in doc.get("consumeStatsList") or []:
        for group, stats_list in by_group.items():
            for raw in stats_list or []:
                stats = ConsumeStats.from_json(raw, "consumeStatsList")
                for mq, w in stats.offset_table.items():
                    rows.append(BrokerConsumeRow(mq.topic or "", str(group), mq.broker_name or "",
                                                 mq.queue_id, w.broker_offset, w.consumer_offset,
                                                 w.broker_offset - w.consumer_offset, w.last_timestamp))
    rows.sort(key=lambda r: (r.topic, r.group, r.broker_name, r.queue_id))
    total = int(doc.get("totalDiff") or 0)
    return BrokerConsumeStats(str(doc.get("brokerAddr") or broker), tuple(rows), total)


#: mqctl's name of a maintenance request -> (request code, mqadmin command)
MAINTENANCE = {
    "clean-expired-cq": (RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE, "cleanExpiredCQ"),
    "clean-unused-topic": (RequestCode.CLEAN_UNUSED_TOPIC, "cleanUnusedTopic"),
    "delete-expired-commitlog": (RequestCode.DELETE_EXPIRED_COMMITLOG, "deleteExpiredCommitLog"),
}


async def broker_maintenance(client: AdminClient, action: str, *, broker: str | None = None,
                             cluster: str | None = None) -> tuple[Outcome, ...]:
    """One of :data:`MAINTENANCE` (CLEAN_EXPIRED_CONSUMEQUEUE 306, CLEAN_UNUSED_TOPIC 316,
    DELETE_EXPIRED_COMMITLOG 329) to the broker, or to every master of the cluster (mqadmin
    cleanExpiredCQ, cleanUnusedTopic, deleteExpiredCommitLog)."""
    if action not in MAINTENANCE:
        raise BadRequest(f"unknown maintenance {action!r}: expected one of {', '.join(MAINTENANCE)}")
    code = MAINTENANCE[action][0]
    members = await targets(client, broker=broker, cluster=cluster, masters_only=True)
    addrs = [m.addr for m in members]
    results = await gather_map(addrs, lambda a: client.call(a, code))
    return tuple(outcome(a, r) for a, r in zip(addrs, results, strict=True))
