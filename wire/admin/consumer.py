# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Consumers and producers: progress (GET_CONSUME_STATS 208), connections (203, 204) and
subscription groups (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP 200, DELETE_SUBSCRIPTIONGROUP 207).

Mirrors ``ConsumerProgressSubCommand``, ``ConsumerConnectionSubCommand``,
``ProducerConnectionSubCommand``, ``UpdateSubGroupSubCommand``, ``DeleteSubscriptionGroupCommand``
and ``DefaultMQAdminExtImpl.examineConsumeStats``: a group's brokers are found through the route
of its retry topic ``%RETRY%<group>``; the brokers are asked at once rather than in turn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..aio import ConnectError, RemotingIOError
from ..bodies import (
    ConsumerConnection,
    ConsumeStats,
    ConsumeType,
    MessageQueue,
    OffsetWrapper,
    ProducerConnection,
    SubscriptionGroupConfig,
    TopicList,
    TopicRouteData,
)
from ..codes import RequestCode, version_name
from ..errors import WireError
from .client import AdminClient, gather_map
from .common import (
    DLQ_PREFIX,
    RETRY_PREFIX,
    Outcome,
    cluster_info,
    masters,
    outcome,
    route,
    route_or_none,
    select_addr,
)
from .errors import AdminError, BadRequest, NotFound
from .topic import topic_delete

__all__ = [
    "ClientConnection",
    "ClientStatus",
    "ConnectionInfo",
    "ConsumerGroups",
    "ConsumerProgress",
    "GroupConfig",
    "GroupDeleteResult",
    "GroupSummary",
    "GroupWriteResult",
    "QueueProgress",
    "Subscription",
    "build_consumer_progress",
    "build_group_summary",
    "connection_info",
    "consumer_config",
    "consumer_connection",
    "consumer_groups",
    "consumer_progress",
    "consumer_status",
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
    #: the brokers of the group that did not answer (``detail``: the broker name), and how many
    #: were asked
    failures: tuple[Outcome, ...] = ()
    brokers_asked: int = 0


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


def _brokers(r: TopicRouteData) -> list[tuple[str, str]]:
    """(broker name, address to ask) of every broker of a route."""
    return [(bd.broker_name or "", a) for bd, a in ((bd, select_addr(bd)) for bd in r.broker_datas)
            if a is not None]


async def _consume_stats(client: AdminClient, group: str, topic: str | None
                         ) -> tuple[list[ConsumeStats], list[Outcome], int]:
    """The ConsumeStats of every broker of the group that answered, the outcomes of those that
    did not, and how many were asked. Each waits ``--timeout``, as every other request (mqadmin's
    examineConsumeStats waits three times its timeout)."""
    brokers = _brokers(await _group_route(client, group))
    from ..headers import GetConsumeStatsRequestHeader

    ext = GetConsumeStatsRequestHeader(consumer_group=group, topic=topic)

    async def one(addr: str) -> ConsumeStats:
        resp = await client.call(addr, RequestCode.GET_CONSUME_STATS, ext)
        return ConsumeStats.decode(resp.body or b"{}")

    results = await gather_map([a for _n, a in brokers], one)
    stats = [r for r in results if isinstance(r, ConsumeStats)]
    failures = [outcome(a, r, n) for (n, a), r in zip(brokers, results, strict=True)
                if isinstance(r, Exception)]
    return stats, failures, len(brokers)


async def consumer_progress(client: AdminClient, group: str, *, topic: str | None = None) -> ConsumerProgress:
    """A group's progress on every queue it consumes (mqadmin consumerProgress -g); the brokers
    that do not answer are in ``failures``."""
    stats, failures, asked = await _consume_stats(client, group, topic)
    progress = build_consumer_progress(group, stats)
    if not progress.queues and not failures:
        # mirrors examineConsumeStats: CONSUMER_NOT_ONLINE "... offset table is empty"
        raise NotFound(f"no consume stats for group {group!r}: "
                       "it has consumed nothing yet, or does not exist")
    return replace(progress, failures=tuple(failures), brokers_asked=asked)


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """One row of mqadmin ``consumerProgress`` without ``-g``."""

    group: str
    #: online consumers (``None``: no broker of the group answered the connection list)
    count: int | None
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
    count: int | None = 0
    version, ctype, model = None, None, None
    if isinstance(conn, Exception):
        count = None
        errors.append(str(conn))
    elif isinstance(conn, ConsumerConnection):
        count = len(conn.connection_set)
        if count:
            version = version_name(min(c.version for c in conn.connection_set))
            # mirrors consumeTypeDesc / messageModelDesc
            ctype = "PULL" if conn.consume_type == ConsumeType.CONSUME_ACTIVELY else "PUSH"
            if conn.consume_type == ConsumeType.CONSUME_PASSIVELY:
                model = getattr(conn.message_model, "name", str(conn.message_model))
    return GroupSummary(group, count, version, ctype, model, tps, diff, "; ".join(errors) or None)


@dataclass(frozen=True, slots=True)
class ConsumerGroups:
    """mqadmin ``consumerProgress`` without ``-g``: one summary per group, and the brokers that
    did not answer (one outcome each, whatever the number of groups they hold)."""

    groups: tuple[GroupSummary, ...]
    failures: tuple[Outcome, ...] = ()
    brokers_asked: int = 0


async def consumer_groups(client: AdminClient) -> ConsumerGroups:
    """Every group that has a retry topic, with its consumers and backlog (mqadmin
    consumerProgress without -g: the groups come from the ``%RETRY%`` topics). The consume stats
    of a group are those of its brokers that answered; its connections come from the first of
    its brokers that answers (a silent broker does not make a live group look OFFLINE)."""
    resp = await client.namesrv(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
    topics = TopicList.decode(resp.body or b"{}").topic_list
    groups = sorted({t[len(RETRY_PREFIX):] for t in topics if t.startswith(RETRY_PREFIX)})
    silent: dict[str, Outcome] = {}
    asked: set[str] = set()

    async def one(group: str) -> GroupSummary:
        stats: list[ConsumeStats] | Exception
        conn: ConsumerConnection | Exception
        try:
            got, failed, _n = await _consume_stats(client, group, None)
            stats = got
            for f in failed:
                silent.setdefault(f.target, f)
        except (WireError, AdminError) as err:  # shown in the row, as mqadmin logs and carries on
            stats = err
        try:
            conn = await _connection(client, group, None, silent, asked)
        except (WireError, AdminError) as err:
            conn = err
        return build_group_summary(group, stats, conn)

    summaries = tuple(await gather_map(groups, one))
    return ConsumerGroups(summaries, tuple(silent.values()), len(asked | set(silent)))


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


async def _connection(client: AdminClient, group: str, broker: str | None,
                      silent: dict[str, Outcome] | None = None,
                      asked: set[str] | None = None) -> ConsumerConnection:
    """GET_CONSUMER_CONNECTION_LIST (203) to ``broker``, or to the brokers of the group's retry
    topic in turn until one answers (every broker of the group knows its consumers)."""
    from ..headers import GetConsumerConnectionListRequestHeader

    ext = GetConsumerConnectionListRequestHeader(consumer_group=group)
    if broker is not None:
        resp = await client.call(broker, RequestCode.GET_CONSUMER_CONNECTION_LIST, ext)
        return ConsumerConnection.decode(resp.body or b"{}")
    brokers = _brokers(await _group_route(client, group))
    if not brokers:
        raise NotFound(f"group {group!r}: its retry topic has no broker")
    silent = {} if silent is None else silent
    last: Exception | None = None
    for name, addr in brokers:
        if addr in silent:
            continue
        if asked is not None:
            asked.add(addr)
        try:
            resp = await client.call(addr, RequestCode.GET_CONSUMER_CONNECTION_LIST, ext)
        except RemotingIOError as err:
            silent[addr] = outcome(addr, err, name)
            last = err
            continue
        return ConsumerConnection.decode(resp.body or b"{}")
    if last is None:
        last = ConnectError(f"no broker of group {group!r} answered: " + ", ".join(silent))
    raise last


async def consumer_connection(client: AdminClient, group: str, *,
                              broker: str | None = None) -> ConnectionInfo:
    """GET_CONSUMER_CONNECTION_LIST (203) to ``broker``, or to a broker of the group's retry topic."""
    info = connection_info(group, await _connection(client, group, broker))
    if not info.connections:
        raise NotFound(f"consumer group {group!r} is not online")
    return info


async def producer_connection(client: AdminClient, group: str, topic: str) -> ConnectionInfo:
    """GET_PRODUCER_CONNECTION_LIST (204) to a broker of ``topic`` (mqadmin producerConnection),
    the next one when a broker does not answer."""
    r = await route(client, topic)
    addrs = [a for _n, a in _brokers(r)]
    if not addrs:
        raise NotFound(f"topic {topic!r} has no broker")
    from ..headers import GetProducerConnectionListRequestHeader

    ext = GetProducerConnectionListRequestHeader(producer_group=group)
    for i, addr in enumerate(addrs):
        try:
            resp = await client.call(addr, RequestCode.GET_PRODUCER_CONNECTION_LIST, ext)
        except RemotingIOError:
            if i == len(addrs) - 1:
                raise
            continue
        info = connection_info(group, ProducerConnection.decode(resp.body or b"{}"))
        if not info.connections:
            raise NotFound(f"producer group {group!r} has no connection to {addr}")
        return info
    raise AssertionError("unreachable")


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


async def group_config(client: AdminClient, addr: str, group: str) -> SubscriptionGroupConfig | None:
    """The broker's own SubscriptionGroupConfig of ``group`` (GET_ALL_SUBSCRIPTIONGROUP_CONFIG 201)."""
    from ..bodies import SubscriptionGroupWrapper

    resp = await client.call(addr, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
    return SubscriptionGroupWrapper.decode(resp.body or b"{}").subscription_group_table.get(group)


async def group_upsert(client: AdminClient, group: str, *, broker: str | None = None,
                       cluster: str | None = None, consume_enable: bool | None = None,
                       consume_from_min: bool | None = None, broadcast: bool | None = None,
                       retry_queues: int | None = None, retry_max_times: int | None = None,
                       broker_id: int | None = None, slow_broker_id: int | None = None,
                       notify_ids_changed: bool | None = None, create: bool = True) -> GroupWriteResult:
    """UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) with a SubscriptionGroupConfig body, to the
    broker or to every master of the cluster.

    ``create``: what is not given takes mqadmin updateSubGroup's defaults (consume enabled, from
    min and broadcast off, 1 retry queue, 16 retries, broker 0, slow broker 1, notify on). An
    update (``create=False``) changes only what is given: each broker's own config
    (GET_ALL_SUBSCRIPTIONGROUP_CONFIG 201) supplies the rest, 5.x fields included, and a broker
    that does not have the group is not sent anything."""
    given = {"consume_enable": consume_enable, "consume_from_min_enable": consume_from_min,
             "consume_broadcast_enable": broadcast, "retry_queue_nums": retry_queues,
             "retry_max_times": retry_max_times, "broker_id": broker_id,
             "which_broker_when_consume_slowly": slow_broker_id,
             "notify_consumer_ids_changed_enable": notify_ids_changed}
    changes: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    base = SubscriptionGroupConfig(group_name=group, consume_from_min_enable=False,
                                   consume_broadcast_enable=False)
    addrs = await _targets(client, broker, cluster)

    async def one(addr: str) -> SubscriptionGroupConfig:
        old = base
        if not create:
            found = await group_config(client, addr, group)
            if found is None:
                raise NotFound(f"the subscription group {group!r} is not on {addr}; "
                               "create it with 'consumer group create'")
            old = found
        cfg = replace(old, **changes)
        await client.call(addr, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, cfg.encode())
        return cfg

    results = await gather_map(addrs, one)
    first = next((r for r in results if isinstance(r, SubscriptionGroupConfig)), replace(base, **changes))
    view: dict[str, object] = {
        "groupName": group, "consumeEnable": first.consume_enable,
        "consumeFromMinEnable": first.consume_from_min_enable,
        "consumeBroadcastEnable": first.consume_broadcast_enable, "retryQueueNums": first.retry_queue_nums,
        "retryMaxTimes": first.retry_max_times, "brokerId": first.broker_id,
        "whichBrokerWhenConsumeSlowly": first.which_broker_when_consume_slowly,
        "notifyConsumerIdsChangedEnable": first.notify_consumer_ids_changed_enable}
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



# ---------------------------------------------------------------------- running info, group config


@dataclass(frozen=True, slots=True)
class ClientStatus:
    """One client's answer to GET_CONSUMER_RUNNING_INFO: ``ConsumerRunningInfo`` as it was sent
    (``properties``, ``subscriptionSet``, ``mqTable``, ``statusTable``, ``jstack``), or the error."""

    client_id: str
    info: dict[str, Any] | None
    error: str | None = None
    unreachable: bool = False


async def consumer_status(client: AdminClient, group: str, *, client_id: str | None = None,
                          broker: str | None = None, jstack: bool = False) -> tuple[ClientStatus, ...]:
    """The running info of the group's clients (mqadmin consumerStatus): the connections
    (GET_CONSUMER_CONNECTION_LIST), then GET_CONSUMER_RUNNING_INFO (307) for each client (or
    ``client_id``), which the broker passes to the client and its answer back. The header
    (``GetConsumerRunningInfoRequestHeader``) is sent as its pairs."""
    from .. import fastjson
    from ..aio import RemotingIOError

    conn = await _connection(client, group, broker)
    ids = sorted(c.client_id or "" for c in conn.connection_set)
    if client_id is not None:
        if client_id not in ids:
            raise NotFound(f"client {client_id!r} is not a consumer of group {group!r} (clients: "
                           f"{', '.join(ids) or 'none'})")
        ids = [client_id]
    if not ids:
        raise NotFound(f"consumer group {group!r} is not online")
    if broker is None:
        brokers = _brokers(await _group_route(client, group))
        broker = brokers[0][1]

    async def one(cid: str) -> dict[str, Any]:
        assert broker is not None
        ext = {"consumerGroup": group, "clientId": cid, "jstackEnable": str(jstack).lower()}
        resp = await client.call(broker, RequestCode.GET_CONSUMER_RUNNING_INFO, ext)
        doc = fastjson.loads(resp.body or b"{}", what="ConsumerRunningInfo")
        if not isinstance(doc, dict):
            raise NotFound(f"client {cid!r} sent no running info")
        return {str(k): v for k, v in doc.items()}

    results = await gather_map(ids, one)
    return tuple(ClientStatus(cid, r, None) if isinstance(r, dict)
                 else ClientStatus(cid, None, str(r), isinstance(r, RemotingIOError))
                 for cid, r in zip(ids, results, strict=True))


@dataclass(frozen=True, slots=True)
class GroupConfig:
    """A subscription group's config on one broker (mqadmin getConsumerConfig)."""

    cluster: str
    broker_name: str
    addr: str
    config: SubscriptionGroupConfig | None
    error: str | None = None
    unreachable: bool = False


async def consumer_config(client: AdminClient, group: str) -> tuple[GroupConfig, ...]:
    """The group's SubscriptionGroupConfig from every master that has it
    (GET_ALL_SUBSCRIPTIONGROUP_CONFIG 201, mqadmin getConsumerConfig); the masters that do not
    answer keep an entry with the error."""
    from ..aio import RemotingIOError
    from .common import MASTER_ID, cluster_members

    members = [m for m in cluster_members(await cluster_info(client)) if m.broker_id == MASTER_ID]
    results = await gather_map([m.addr for m in members], lambda a: group_config(client, a, group))
    out = []
    for m, r in zip(members, results, strict=True):
        if isinstance(r, Exception):
            out.append(GroupConfig(m.cluster, m.broker_name, m.addr, None, str(r),
                                   isinstance(r, RemotingIOError)))
        elif r is not None:
            out.append(GroupConfig(m.cluster, m.broker_name, m.addr, r))
    if not out:
        raise NotFound(f"no broker has the subscription group {group!r}")
    return tuple(out)
