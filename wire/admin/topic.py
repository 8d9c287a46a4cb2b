# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Topics: list, route, status, create/update, delete, perm, clusters.

Requests and selections mirror the mqadmin sub-commands (``TopicListSubCommand``,
``TopicRouteSubCommand``, ``TopicStatusSubCommand``, ``UpdateTopicSubCommand``,
``DeleteTopicSubCommand``, ``UpdateTopicPermSubCommand``, ``TopicClusterSubCommand``) and the
``DefaultMQAdminExtImpl`` methods behind them; where mqadmin asks brokers one after the other,
these ask them all at once. Typed request headers (:mod:`wire.headers`) are imported by the write
operations only: the read path stays light for a fast start.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bodies import (
    ClusterInfo,
    GroupList,
    MessageQueue,
    TopicList,
    TopicOffset,
    TopicRouteData,
    TopicStatsTable,
)
from ..codes import RequestCode
from ..topic import PERM_READ, PERM_WRITE, build_topic_sys_flag
from .client import AdminClient, gather_map
from .common import (
    DLQ_PREFIX,
    MASTER_ID,
    RETRY_PREFIX,
    cluster_info,
    cluster_of_broker,
    masters,
    route,
    route_or_none,
    select_addr,
)
from .errors import BadRequest, NotFound

__all__ = [
    "DEFAULT_TOPIC",
    "Outcome",
    "QueueStatus",
    "TopicConfigView",
    "TopicDeleteResult",
    "TopicEntry",
    "TopicListing",
    "TopicPermResult",
    "TopicStatus",
    "TopicWriteResult",
    "build_topic_status",
    "clusters_of_route",
    "outcome",
    "parse_perm",
    "topic_clusters",
    "topic_delete",
    "topic_list",
    "topic_perm",
    "topic_route",
    "topic_status",
    "topic_upsert",
]

#: ``TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC``: the template topic of auto-creation
DEFAULT_TOPIC = "TBW102"
#: ``NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG``
ORDER_TOPIC_NAMESPACE = "ORDER_TOPIC_CONFIG"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one server said to one write: ``ok``, or the error text."""

    target: str
    ok: bool
    error: str | None = None
    #: what the server reported back, when it reports something (a count, an old value)
    detail: str | None = None
    #: the failure was a connection failure or a timeout, not an answer
    unreachable: bool = False


def outcome(target: str, result: object, detail: str | None = None) -> Outcome:
    """An :class:`Outcome` from a result or the exception that replaced it."""
    if isinstance(result, Exception):
        from ..aio import RemotingIOError

        return Outcome(target, False, str(result), unreachable=isinstance(result, RemotingIOError))
    return Outcome(target, True, None, detail)


# ---------------------------------------------------------------------- list


@dataclass(frozen=True, slots=True)
class TopicEntry:
    topic: str
    #: with ``clusters=True``: the cluster of the topic's first broker, and who consumes it
    cluster: str | None = None
    groups: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TopicListing:
    topics: tuple[TopicEntry, ...]
    detailed: bool = False


async def topic_list(client: AdminClient, *, clusters: bool = False) -> TopicListing:
    """GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206); with ``clusters``, also each topic's cluster
    (105 and 106) and consumer groups (QUERY_TOPIC_CONSUME_BY_WHO 300), retry and dead-letter
    topics left out as mqadmin ``topicList -c`` does."""
    resp = await client.namesrv(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
    names = sorted(set(TopicList.decode(resp.body or b"{}").topic_list))
    if not clusters:
        return TopicListing(tuple(TopicEntry(t) for t in names))
    from ..headers import QueryTopicConsumeByWhoRequestHeader

    info = await cluster_info(client)
    wanted = [t for t in names if not t.startswith((RETRY_PREFIX, DLQ_PREFIX))]

    async def one(topic: str) -> TopicEntry:
        r = await route(client, topic)
        cluster = None
        groups: tuple[str, ...] = ()
        if r.broker_datas:
            first = r.broker_datas[0]
            found = cluster_of_broker(info, first.broker_name or "")
            cluster = found[0] if found else None
            addr = select_addr(first)
            if addr is not None:
                g = await client.call(addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO,
                                      QueryTopicConsumeByWhoRequestHeader(topic=topic))
                groups = tuple(sorted(GroupList.decode(g.body or b"{}").group_list))
        return TopicEntry(topic, cluster, groups)

    results = await gather_map(wanted, one)
    # mirrors TopicListSubCommand: a topic whose route or groups cannot be read is still listed
    entries = tuple(r if isinstance(r, TopicEntry) else TopicEntry(t)
                    for t, r in zip(wanted, results, strict=True))
    return TopicListing(entries, detailed=True)


# ---------------------------------------------------------------------- route and status


async def topic_route(client: AdminClient, topic: str) -> TopicRouteData:
    """GET_ROUTEINFO_BY_TOPIC (105)."""
    return await route(client, topic)


@dataclass(frozen=True, slots=True)
class QueueStatus:
    broker_name: str
    queue_id: int
    min_offset: int
    max_offset: int
    last_update_timestamp: int

    @property
    def messages(self) -> int:
        return self.max_offset - self.min_offset


@dataclass(frozen=True, slots=True)
class TopicStatus:
    topic: str
    queues: tuple[QueueStatus, ...]


def build_topic_status(topic: str, tables: list[TopicStatsTable]) -> TopicStatus:
    """Merge the brokers' TopicStatsTables, sorted as ``MessageQueue.compareTo`` (topic, broker
    name, queue id)."""
    merged: dict[MessageQueue, TopicOffset] = {}
    for t in tables:
        merged.update(t.offset_table)
    mqs = sorted(merged, key=lambda mq: (mq.topic or "", mq.broker_name or "", mq.queue_id))
    return TopicStatus(topic, tuple(
        QueueStatus(mq.broker_name or "", mq.queue_id, merged[mq].min_offset, merged[mq].max_offset,
                    merged[mq].last_update_timestamp) for mq in mqs))


async def topic_status(client: AdminClient, topic: str) -> TopicStatus:
    """105, then GET_TOPIC_STATS_INFO (202) from every broker of the route at once."""
    from ..headers import GetTopicStatsInfoRequestHeader

    r = await route(client, topic)
    addrs = [a for a in (select_addr(bd) for bd in r.broker_datas) if a is not None]

    async def one(addr: str) -> TopicStatsTable:
        resp = await client.call(addr, RequestCode.GET_TOPIC_STATS_INFO,
                                 GetTopicStatsInfoRequestHeader(topic=topic))
        return TopicStatsTable.decode(resp.body or b"{}")

    results = await gather_map(addrs, one)
    for res in results:
        if isinstance(res, Exception):
            raise res
    status = build_topic_status(topic, results)
    if not status.queues:
        # mirrors examineTopicStats: "Not found the topic stats info"
        raise NotFound(f"no topic stats for {topic!r}")
    return status


# ---------------------------------------------------------------------- create / update


@dataclass(frozen=True, slots=True)
class TopicConfigView:
    """The TopicConfig sent (``TopicConfig.toString`` shows the same fields)."""

    topic_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_filter_type: str
    topic_sys_flag: int
    order: bool


@dataclass(frozen=True, slots=True)
class TopicWriteResult:
    config: TopicConfigView
    brokers: tuple[Outcome, ...]
    #: the ORDER_TOPIC_CONFIG value put on the name servers for an ordered topic
    order_conf: str | None = None
    order_conf_outcome: Outcome | None = None


_RW = PERM_READ | PERM_WRITE
_PERMS = {"R": PERM_READ, "W": PERM_WRITE, "RW": _RW, "WR": _RW}


def parse_perm(text: str | int) -> int:
    """A topic perm: 2 (W), 4 (R), 6 (RW), or those letters."""
    if isinstance(text, int):
        value = text
    else:
        t = text.strip().upper().replace("-", "")
        value = _PERMS[t] if t in _PERMS else int(t) if t.isdigit() else -1
    if value not in (PERM_WRITE, PERM_READ, _RW):
        raise BadRequest(f"perm {text!r}: expected 2 (W), 4 (R) or 6 (RW)")
    return value


def _targets(brokers: list[str], what: str) -> list[str]:
    if not brokers:
        raise NotFound(f"no master broker to send {what} to")
    return brokers


async def _create(client: AdminClient, addr: str, cfg: TopicConfigView) -> None:
    from ..headers import CreateTopicRequestHeader

    header = CreateTopicRequestHeader(
        topic=cfg.topic_name, default_topic=DEFAULT_TOPIC, read_queue_nums=cfg.read_queue_nums,
        write_queue_nums=cfg.write_queue_nums, perm=cfg.perm, topic_filter_type=cfg.topic_filter_type,
        topic_sys_flag=cfg.topic_sys_flag, order=cfg.order)
    await client.call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, header)


async def topic_upsert(client: AdminClient, topic: str, *, cluster: str | None = None,
                       broker: str | None = None, read_queues: int = 8, write_queues: int = 8,
                       perm: int = 6, order: bool = False, unit: bool = False,
                       has_unit_sub: bool = False) -> TopicWriteResult:
    """UPDATE_AND_CREATE_TOPIC (17) to every master of ``cluster`` or to the ``broker`` address
    (an upsert: RocketMQ has no separate create); an ordered topic also gets its
    ORDER_TOPIC_CONFIG entry (PUT_KV_CONFIG 100) on the name servers, as mqadmin updateTopic."""
    if (cluster is None) == (broker is None):
        raise BadRequest("give exactly one of a cluster or a broker address")
    for name, n in (("read", read_queues), ("write", write_queues)):
        if not 0 < n <= 1024:
            raise BadRequest(f"{name} queue count {n} must be within 1..1024")
    cfg = TopicConfigView(topic, read_queues, write_queues, parse_perm(perm), "SINGLE_TAG",
                          build_topic_sys_flag(unit, has_unit_sub), order)
    info = await cluster_info(client) if cluster is not None or order else None
    addrs = _targets(masters(info, cluster), "the topic") if cluster is not None and info else [broker or ""]
    results = await gather_map(addrs, lambda a: _create(client, a, cfg))
    outcomes = tuple(outcome(a, r) for a, r in zip(addrs, results, strict=True))
    if not order or not any(o.ok for o in outcomes):
        return TopicWriteResult(cfg, outcomes)
    assert info is not None
    names = []
    for a in addrs:
        for bname, data in info.broker_addr_table.items():
            if a in data.broker_addrs.values():
                names.append(bname)
    order_conf = ";".join(f"{n}:{write_queues}" for n in sorted(set(names)))
    if broker is not None:
        order_conf = await _merge_order_conf(client, topic, order_conf)
    from ..headers import PutKVConfigRequestHeader

    done = await client.each_namesrv(RequestCode.PUT_KV_CONFIG, PutKVConfigRequestHeader(
        namespace=ORDER_TOPIC_NAMESPACE, key=topic, value=order_conf))
    failed = [f"{a}: {r}" if isinstance(r, Exception) else f"{a}: code {r.code} {r.remark or ''}"
              for a, r in done if isinstance(r, Exception) or r.code != 0]
    kv = Outcome("namesrv", not failed, "; ".join(failed) or None)
    return TopicWriteResult(cfg, outcomes, order_conf, kv)


async def _merge_order_conf(client: AdminClient, topic: str, value: str) -> str:
    # mirrors createOrUpdateOrderConf(isCluster=false): keep the other brokers' entries
    from ..codes import ResponseCode
    from ..headers import GetKVConfigRequestHeader, GetKVConfigResponseHeader

    resp = await client.namesrv(RequestCode.GET_KV_CONFIG,
                                GetKVConfigRequestHeader(namespace=ORDER_TOPIC_NAMESPACE, key=topic),
                                ok=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND))
    entries: dict[str, str] = {}
    old = (GetKVConfigResponseHeader.from_ext(resp.ext_fields).value or "") if resp.code == 0 else ""
    for item in [*old.split(";"), value]:
        if item.strip():
            entries[item.split(":")[0]] = item
    return ";".join(entries.values())


# ---------------------------------------------------------------------- delete


@dataclass(frozen=True, slots=True)
class TopicDeleteResult:
    topic: str
    clusters: tuple[str, ...]
    brokers: tuple[Outcome, ...]
    namesrvs: tuple[Outcome, ...]


async def topic_delete(client: AdminClient, topic: str, *, cluster: str | None = None) -> TopicDeleteResult:
    """DELETE_TOPIC_IN_BROKER (215) to the masters of the cluster, then DELETE_TOPIC_IN_NAMESRV
    (216) to every name server (mqadmin deleteTopic). Without a cluster, the clusters that hold
    the topic's brokers are used."""
    from ..headers import DeleteTopicFromNamesrvRequestHeader, DeleteTopicRequestHeader

    info = await cluster_info(client)
    if cluster is not None:
        clusters = [cluster]
    else:
        r = await route_or_none(client, topic)
        if r is None:
            raise NotFound(f"topic {topic!r} has no route; name the cluster to delete it from")
        clusters = list(clusters_of_route(info, r))
        if not clusters:
            raise NotFound(f"the brokers of {topic!r} belong to no known cluster")
    addrs = sorted({a for c in clusters for a in masters(info, c)})
    results = await gather_map(
        addrs, lambda a: client.call(a, RequestCode.DELETE_TOPIC_IN_BROKER,
                                     DeleteTopicRequestHeader(topic=topic)))
    brokers = tuple(outcome(a, r) for a, r in zip(addrs, results, strict=True))
    ns: list[Outcome] = []
    for c in clusters:
        ext = DeleteTopicFromNamesrvRequestHeader(topic=topic, cluster_name=c)
        for addr, resp in await client.each_namesrv(RequestCode.DELETE_TOPIC_IN_NAMESRV, ext):
            if isinstance(resp, Exception):
                ns.append(outcome(addr, resp))
            elif resp.code != 0:
                from .errors import ServerError

                ns.append(Outcome(addr, False, str(ServerError(
                    resp.code, resp.remark, addr=addr, request_code=RequestCode.DELETE_TOPIC_IN_NAMESRV))))
            else:
                ns.append(Outcome(addr, True))
    return TopicDeleteResult(topic, tuple(clusters), brokers, tuple(ns))


# ---------------------------------------------------------------------- perm


@dataclass(frozen=True, slots=True)
class TopicPermResult:
    topic: str
    perm: int
    #: per broker address: the old perm in ``detail``
    brokers: tuple[Outcome, ...]
    #: the broker already had this perm: nothing was sent
    unchanged: bool = False


async def topic_perm(client: AdminClient, topic: str, perm: int | str, *, cluster: str | None = None,
                     broker: str | None = None) -> TopicPermResult:
    """Change a topic's perm (mqadmin updateTopicPerm): each broker's queue counts and sys flag
    from the route, with the new perm, sent as UPDATE_AND_CREATE_TOPIC (17) to the master
    ``broker`` or to every master of ``cluster``. (mqadmin sends the first broker's counts to every
    master of the cluster, which resizes the others; here each keeps its own.)"""
    if (cluster is None) == (broker is None):
        raise BadRequest("give exactly one of a cluster or a broker address")
    new = parse_perm(perm)
    r = await route(client, topic)
    if not r.queue_datas:
        raise NotFound(f"topic {topic!r} has no queues in its route")
    qd = r.queue_datas[0]
    if broker is not None:
        bname = next((bd.broker_name for bd in r.broker_datas
                      if bd.broker_addrs.get(MASTER_ID) == broker), None)
        if bname is None:
            # mirrors UpdateTopicPermSubCommand: "broker not exit or broker is not master"
            raise NotFound(f"{broker} is not the master of a broker of {topic!r}")
        qd = next((q for q in r.queue_datas if q.broker_name == bname), qd)
        if qd.perm == new:
            return TopicPermResult(topic, new, (Outcome(broker, True, None, str(qd.perm)),), unchanged=True)
        queue_of = {broker: qd}
    else:
        queue_of = {}
        for addr in _targets(masters(await cluster_info(client), cluster or ""), "the perm"):
            bname = next((bd.broker_name for bd in r.broker_datas if addr in bd.broker_addrs.values()), None)
            queue_of[addr] = next((q for q in r.queue_datas if q.broker_name == bname), qd)
    addrs = list(queue_of)

    async def one(addr: str) -> None:
        q = queue_of[addr]
        await _create(client, addr, TopicConfigView(topic, q.read_queue_nums, q.write_queue_nums, new,
                                                    "SINGLE_TAG", q.topic_sys_flag, False))

    results = await gather_map(addrs, one)
    return TopicPermResult(topic, new, tuple(outcome(a, res, str(queue_of[a].perm))
                                             for a, res in zip(addrs, results, strict=True)))


# ---------------------------------------------------------------------- clusters


def clusters_of_route(info: ClusterInfo, r: TopicRouteData) -> tuple[str, ...]:
    """The clusters that list any broker of the route (mqadmin looks at the first broker only)."""
    return tuple(sorted({c for bd in r.broker_datas for c in cluster_of_broker(info, bd.broker_name or "")}))


async def topic_clusters(client: AdminClient, topic: str) -> tuple[str, ...]:
    """The clusters holding the topic's brokers (mqadmin topicClusterList: 106 and 105)."""
    info = await cluster_info(client)
    return clusters_of_route(info, await route(client, topic))
