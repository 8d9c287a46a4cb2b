# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Consumers and producers: progress (GET_CONSUME_STATS 208), connections (203, 204) and
subscription groups (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP 200, DELETE_SUBSCRIPTIONGROUP 207).

Mirrors ``ConsumerProgressSubCommand``, ``ConsumerConnectionSubCommand``,
``ProducerConnectionSubCommand``, ``UpdateSubGroupSubCommand``, ``DeleteSubscriptionGroupCommand``
and ``DefaultMQAdminExtImpl.examineConsumeStats``: a group's brokers are found through the route
of its retry topic ``%RETRY%<group>``; the brokers are asked at once rather than in turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bodies import (
    ConsumerConnection,
    ConsumeStats,
    ConsumeType,
    MessageQueue,
    OffsetWrapper,
    ProducerConnection,
    TopicList,
    TopicRouteData,
)
from ..codes import RequestCode, version_name
from ..errors import WireError
from .client import AdminClient, gather_map
from .common import DLQ_PREFIX, RETRY_PREFIX, cluster_info, masters, route, route_or_none, select_addr
from .errors import AdminError, BadRequest, NotFound
from .topic import Outcome, outcome, topic_delete

__all__ = [
    "ClientConnection",
    "ConnectionInfo",
    "ConsumerProgress",
    "GroupDeleteResult",
    "GroupSummary",
    "GroupWriteResult",
    "QueueProgress",
    "Subscription",
    "build_consumer_progress",
    "build_group_summary",
    "connection_info",
    "consumer_connection",
    "consumer_groups",
    "consumer_progress",
    "group_delete",
    "group_upsert",
    "producer_connection",
]


# ---------------------------------------------------------------------- progress


@dataclass(frozen=True, slots=True)
class QueueProgress:
    topic: str
    broker_name: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    #: broker offset minus consumer offset: the messages not consumed yet
    diff: int
    last_timestamp: int
    #: 5.1+ brokers: how far the group has pulled (in flight = pull - consumer offset)
    pull_offset: int | None = None


@dataclass(frozen=True, slots=True)
class ConsumerProgress:
    group: str
    queues: tuple[QueueProgress, ...]
    consume_tps: float
    diff_total: int


def build_consumer_progress(group: str, stats: list[ConsumeStats]) -> ConsumerProgress:
    """Merge the brokers' ConsumeStats, queues sorted as ``MessageQueue.compareTo``."""
    table: dict[MessageQueue, OffsetWrapper] = {}
    tps = 0.0
    for s in stats:
        table.update(s.offset_table)
        tps += s.consume_tps
    mqs = sorted(table, key=lambda mq: (mq.topic or "", mq.broker_name or "", mq.queue_id))
    queues = tuple(QueueProgress(mq.topic or "", mq.broker_name or "", mq.queue_id, w.broker_offset,
                                 w.consumer_offset, w.broker_offset - w.consumer_offset,
                                 w.last_timestamp, w.pull_offset)
                   for mq, w in ((mq, table[mq]) for mq in mqs))
    return ConsumerProgress(group, queues, tps, sum(q.diff for q in queues))


async def _group_route(client: AdminClient, group: str) -> TopicRouteData:
    r = await route_or_none(client, RETRY_PREFIX + group)
    if r is None:
        raise NotFound(f"group {group!r} has no retry topic {RETRY_PREFIX}{group}: no consumer of it "
                       "has connected yet, or it does not exist")
    return r


async def _consume_stats(client: AdminClient, group: str, topic: str | None) -> list[ConsumeStats]:
    r = await _group_route(client, group)
    addrs = [a for a in (select_addr(bd) for bd in r.broker_datas) if a is not None]
    from ..headers import GetConsumeStatsRequestHeader

    ext = GetConsumeStatsRequestHeader(consumer_group=group, topic=topic)

    async def one(addr: str) -> ConsumeStats:
        # mirrors examineConsumeStats: three times the usual timeout for this request
        resp = await client.call(addr, RequestCode.GET_CONSUME_STATS, ext, timeout=client.timeout * 3)
        return ConsumeStats.decode(resp.body or b"{}")

    results = await gather_map(addrs, one)
    for res in results:
        if isinstance(res, Exception):
            raise res
    return results


async def consumer_progress(client: AdminClient, group: str, *, topic: str | None = None) -> ConsumerProgress:
    """A group's progress on every queue it consumes (mqadmin consumerProgress -g)."""
    progress = build_consumer_progress(group, await _consume_stats(client, group, topic))
    if not progress.queues:
        # mirrors examineConsumeStats: CONSUMER_NOT_ONLINE "... offset table is empty"
        raise NotFound(f"no consume stats for group {group!r}: "
                       "it has consumed nothing yet, or does not exist")
    return progress


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """One row of mqadmin ``consumerProgress`` without ``-g``."""

    group: str
    #: online consumers
    count: int
    #: the lowest client version among them (``computeMinVersion``)
    version: str | None
    consume_type: str | None
    message_model: str | None
    tps: int
    diff_total: int
    error: str | None = None


def build_group_summary(group: str, stats: ConsumeStats | list[ConsumeStats] | Exception | None,
                        conn: ConsumerConnection | Exception | None) -> GroupSummary:
    """mqadmin's ``GroupConsumeInfo``: counts from the connection, figures from the stats."""
    tps, diff = 0, 0
    errors = []
    if isinstance(stats, Exception):
        errors.append(str(stats))
    elif stats is not None:
        progress = build_consumer_progress(group, stats if isinstance(stats, list) else [stats])
        tps, diff = int(progress.consume_tps), progress.diff_total
    count, version, ctype, model = 0, None, None, None
    if isinstance(conn, ConsumerConnection):
        count = len(conn.connection_set)
        if count:
            version = version_name(min(c.version for c in conn.connection_set))
            # mirrors consumeTypeDesc / messageModelDesc
            ctype = "PULL" if conn.consume_type == ConsumeType.CONSUME_ACTIVELY else "PUSH"
            if conn.consume_type == ConsumeType.CONSUME_PASSIVELY:
                model = getattr(conn.message_model, "name", str(conn.message_model))
    return GroupSummary(group, count, version, ctype, model, tps, diff, "; ".join(errors) or None)


async def consumer_groups(client: AdminClient) -> tuple[GroupSummary, ...]:
    """Every group that has a retry topic, with its consumers and backlog (mqadmin
    consumerProgress without -g: the groups come from the ``%RETRY%`` topics)."""
    resp = await client.namesrv(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
    topics = TopicList.decode(resp.body or b"{}").topic_list
    groups = sorted({t[len(RETRY_PREFIX):] for t in topics if t.startswith(RETRY_PREFIX)})

    async def one(group: str) -> GroupSummary:
        stats: list[ConsumeStats] | Exception
        conn: ConsumerConnection | Exception
        try:
            stats = await _consume_stats(client, group, None)
        except (WireError, AdminError) as err:  # shown in the row, as mqadmin logs and carries on
            stats = err
        try:
            conn = await _connection(client, group, None)
        except (WireError, AdminError) as err:
            conn = err
        return build_group_summary(group, stats, conn)

    return tuple(await gather_map(groups, one))


# ---------------------------------------------------------------------- connections


@dataclass(frozen=True, slots=True)
class ClientConnection:
    client_id: str
    client_addr: str
    language: str
    version: str


@dataclass(frozen=True, slots=True)
class Subscription:
    topic: str
    expression: str
    expression_type: str | None = None


@dataclass(frozen=True, slots=True)
class ConnectionInfo:
    group: str
    connections: tuple[ClientConnection, ...]
    subscriptions: tuple[Subscription, ...] = ()
    consume_type: str | None = None
    message_model: str | None = None
    consume_from_where: str | None = None


def _name(v: object) -> str | None:
    return None if v is None else getattr(v, "name", str(v))


def connection_info(group: str, body: ConsumerConnection | ProducerConnection) -> ConnectionInfo:
    conns = tuple(sorted(
        (ClientConnection(c.client_id or "", c.client_addr or "",
                          _name(c.language) or "", version_name(c.version)) for c in body.connection_set),
        key=lambda c: c.client_id))
    if isinstance(body, ProducerConnection):
        return ConnectionInfo(group, conns)
    subs = tuple(Subscription(s.topic or t, s.sub_string or "", s.expression_type)
                 for t, s in sorted(body.subscription_table.items()))
    return ConnectionInfo(group, conns, subs, _name(body.consume_type), _name(body.message_model),
                          _name(body.consume_from_where))


async def _connection(client: AdminClient, group: str, broker: str | None) -> ConsumerConnection:
    if broker is None:
        r = await _group_route(client, group)
        addrs = [a for a in (select_addr(bd) for bd in r.broker_datas) if a is not None]
        if not addrs:
            raise NotFound(f"group {group!r}: its retry topic has no broker")
        broker = addrs[0]
    from ..headers import GetConsumerConnectionListRequestHeader

    resp = await client.call(broker, RequestCode.GET_CONSUMER_CONNECTION_LIST,
                             GetConsumerConnectionListRequestHeader(consumer_group=group))
    return ConsumerConnection.decode(resp.body or b"{}")


async def consumer_connection(client: AdminClient, group: str, *,
                              broker: str | None = None) -> ConnectionInfo:
    """GET_CONSUMER_CONNECTION_LIST (203) to ``broker``, or to a broker of the group's retry topic."""
    info = connection_info(group, await _connection(client, group, broker))
    if not info.connections:
        raise NotFound(f"consumer group {group!r} is not online")
    return info


async def producer_connection(client: AdminClient, group: str, topic: str) -> ConnectionInfo:
    """GET_PRODUCER_CONNECTION_LIST (204) to a broker of ``topic`` (mqadmin producerConnection)."""
    r = await route(client, topic)
    addrs = [a for a in (select_addr(bd) for bd in r.broker_datas) if a is not None]
    if not addrs:
        raise NotFound(f"topic {topic!r} has no broker")
    from ..headers import GetProducerConnectionListRequestHeader

    resp = await client.call(addrs[0], RequestCode.GET_PRODUCER_CONNECTION_LIST,
                             GetProducerConnectionListRequestHeader(producer_group=group))
    info = connection_info(group, ProducerConnection.decode(resp.body or b"{}"))
    if not info.connections:
        raise NotFound(f"producer group {group!r} has no connection to {addrs[0]}")
    return info


# ---------------------------------------------------------------------- subscription groups


@dataclass(frozen=True, slots=True)
class GroupWriteResult:
    config: dict[str, object]
    brokers: tuple[Outcome, ...]


async def _targets(client: AdminClient, broker: str | None, cluster: str | None) -> list[str]:
    if (broker is None) == (cluster is None):
        raise BadRequest("give exactly one of a broker address or a cluster")
    if broker is not None:
        return [broker]
    found = masters(await cluster_info(client), cluster or "")
    if not found:
        raise NotFound(f"cluster {cluster!r} has no master broker")
    return found


async def group_upsert(client: AdminClient, group: str, *, broker: str | None = None,
                       cluster: str | None = None, consume_enable: bool = True,
                       consume_from_min: bool = False, broadcast: bool = False, retry_queues: int = 1,
                       retry_max_times: int = 16, broker_id: int = 0, slow_broker_id: int = 1,
                       notify_ids_changed: bool = True) -> GroupWriteResult:
    """UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) with a SubscriptionGroupConfig body, to the
    broker or to every master of the cluster. The defaults are mqadmin updateSubGroup's (which
    turns consumeFromMinEnable and consumeBroadcastEnable off)."""
    from ..bodies import SubscriptionGroupConfig

    cfg = SubscriptionGroupConfig(
        group_name=group, consume_enable=consume_enable, consume_from_min_enable=consume_from_min,
        consume_broadcast_enable=broadcast, retry_queue_nums=retry_queues, retry_max_times=retry_max_times,
        broker_id=broker_id, which_broker_when_consume_slowly=slow_broker_id,
        notify_consumer_ids_changed_enable=notify_ids_changed)
    body = cfg.encode()
    addrs = await _targets(client, broker, cluster)
    results = await gather_map(
        addrs, lambda a: client.call(a, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, body))
    view = {"groupName": group, "consumeEnable": consume_enable, "consumeFromMinEnable": consume_from_min,
            "consumeBroadcastEnable": broadcast, "retryQueueNums": retry_queues,
            "retryMaxTimes": retry_max_times, "brokerId": broker_id,
            "whichBrokerWhenConsumeSlowly": slow_broker_id,
            "notifyConsumerIdsChangedEnable": notify_ids_changed}
    return GroupWriteResult(view, tuple(outcome(a, r) for a, r in zip(addrs, results, strict=True)))


@dataclass(frozen=True, slots=True)
class GroupDeleteResult:
    group: str
    brokers: tuple[Outcome, ...]
    #: with a cluster: the group's retry and dead-letter topics, deleted as mqadmin does
    topics: tuple[Outcome, ...] = ()


async def group_delete(client: AdminClient, group: str, *, broker: str | None = None,
                       cluster: str | None = None, remove_offset: bool = False) -> GroupDeleteResult:
    """DELETE_SUBSCRIPTIONGROUP (207) to the broker or to every master of the cluster; with a
    cluster, then also the ``%RETRY%`` and ``%DLQ%`` topics of the group (mqadmin
    deleteSubGroup). The offsets go too with ``remove_offset`` (sent under both the 4.9
    ``removeOffset`` and the 5.x ``cleanOffset`` key)."""
    from ..headers import DeleteSubscriptionGroupRequestHeader

    addrs = await _targets(client, broker, cluster)
    ext = DeleteSubscriptionGroupRequestHeader(group_name=group, remove_offset=remove_offset,
                                               clean_offset=remove_offset)
    results = await gather_map(addrs, lambda a: client.call(a, RequestCode.DELETE_SUBSCRIPTIONGROUP, ext))
    brokers = tuple(outcome(a, r) for a, r in zip(addrs, results, strict=True))
    topics: list[Outcome] = []
    if cluster is not None:
        for t in (RETRY_PREFIX + group, DLQ_PREFIX + group):
            try:
                res = await topic_delete(client, t, cluster=cluster)
            except (WireError, AdminError) as err:  # reported, as mqadmin prints and carries on
                topics.append(outcome(t, err))
                continue
            bad = [o for o in (*res.brokers, *res.namesrvs) if not o.ok]
            topics.append(Outcome(t, not bad, "; ".join(f"{o.target}: {o.error}" for o in bad) or None))
    return GroupDeleteResult(group, brokers, tuple(topics))

