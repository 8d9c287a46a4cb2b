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

from collections.abc import Iterable
from dataclasses import dataclass, replace

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
from ..errors import WireError
from ..topic import PERM_READ, PERM_WRITE
from .client import AdminClient, gather_map
from .common import (
    DLQ_PREFIX,
    MASTER_ID,
    RETRY_PREFIX,
    Outcome,
    cluster_info,
    cluster_of_broker,
    masters,
    outcome,
    route,
    route_or_none,
    select_addr,
)
from .errors import AdminError, BadRequest, NotFound

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
    "check_topic_name",
    "clusters_of_route",
    "outcome",
    "parse_perm",
    "topic_clusters",
    "topic_config",
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


# ---------------------------------------------------------------------- list


@dataclass(frozen=True, slots=True)
class TopicEntry:
    topic: str
    #: with ``clusters=True``: the clusters of the topic's brokers (the first one, as mqadmin
    #: shows), and who consumes it (``None``: no broker of the topic answered)
    cluster: str | None = None
    groups: tuple[str, ...] | None = ()


@dataclass(frozen=True, slots=True)
class TopicListing:
    topics: tuple[TopicEntry, ...]
    detailed: bool = False
    #: the brokers that did not answer (one per broker), of ``brokers_asked``
    failures: tuple[Outcome, ...] = ()
    brokers_asked: int = 0


async def topic_list(client: AdminClient, *, clusters: bool = False) -> TopicListing:
    """GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206); with ``clusters``, also each topic's cluster
    (105 and 106) and consumer groups (QUERY_TOPIC_CONSUME_BY_WHO 300, asked of the topic's
    brokers in turn until one answers), retry and dead-letter topics left out as mqadmin
    ``topicList -c`` does. A silent broker leaves the cluster column as it is (it comes from the
    name server) and the groups of its topics are taken from another broker of the topic."""
    resp = await client.namesrv(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
    names = sorted(set(TopicList.decode(resp.body or b"{}").topic_list))
    if not clusters:
        return TopicListing(tuple(TopicEntry(t) for t in names))
    from ..headers import QueryTopicConsumeByWhoRequestHeader

    info = await cluster_info(client)
    wanted = [t for t in names if not t.startswith((RETRY_PREFIX, DLQ_PREFIX))]
    silent: dict[str, Outcome] = {}
    asked: set[str] = set()

    async def one(topic: str) -> TopicEntry:
        r = await route(client, topic)
        cluster = None
        for bd in r.broker_datas:
            found = cluster_of_broker(info, bd.broker_name or "")
            if found:
                cluster = found[0]
                break
        groups: tuple[str, ...] | None = None if r.broker_datas else ()
        for bd in r.broker_datas:
            addr = select_addr(bd)
            if addr is None or addr in silent:
                continue
            asked.add(addr)
            try:
                g = await client.call(addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO,
                                      QueryTopicConsumeByWhoRequestHeader(topic=topic))
            except (WireError, AdminError) as err:
                silent.setdefault(addr, outcome(addr, err, bd.broker_name))
                continue
            groups = tuple(sorted(GroupList.decode(g.body or b"{}").group_list))
            break
        return TopicEntry(topic, cluster, groups)

    results = await gather_map(wanted, one)
    # mirrors TopicListSubCommand: a topic whose route cannot be read is still listed
    entries = tuple(r if isinstance(r, TopicEntry) else TopicEntry(t, None, None)
                    for t, r in zip(wanted, results, strict=True))
    return TopicListing(entries, detailed=True, failures=tuple(silent.values()), brokers_asked=len(asked))


# ---------------------------------------------------------------------- route and status


async def topic_route(client: AdminClient, topic: str) -> TopicRouteData:
    """GET_ROUTEINFO_BY_TOPIC (105)."""
    return await route(client, topic)


@dataclass(frozen=True, slots=True)
class QueueStatus:
    broker_name: str
    queue_id: int
    #: ``None`` (three of them) for a queue of a broker that did not answer
    min_offset: int | None
    max_offset: int | None
    last_update_timestamp: int | None

    @property
    def messages(self) -> int | None:
        if self.max_offset is None or self.min_offset is None:
            return None
        return self.max_offset - self.min_offset


@dataclass(frozen=True, slots=True)
class TopicStatus:
    topic: str
    queues: tuple[QueueStatus, ...]
    #: the brokers that did not answer (their queues are listed with ``None`` figures)
    failures: tuple[Outcome, ...] = ()


def build_topic_status(topic: str, tables: list[TopicStatsTable],
                       silent: Iterable[tuple[str, int]] = ()) -> TopicStatus:
    """Merge the brokers' TopicStatsTables, sorted as ``MessageQueue.compareTo`` (topic, broker
    name, queue id); ``silent`` lists (broker name, queue count) of brokers that did not answer."""
    merged: dict[MessageQueue, TopicOffset] = {}
    for t in tables:
        merged.update(t.offset_table)
    rows = [QueueStatus(mq.broker_name or "", mq.queue_id, merged[mq].min_offset, merged[mq].max_offset,
                        merged[mq].last_update_timestamp) for mq in merged]
    rows += [QueueStatus(name, q, None, None, None) for name, n in silent for q in range(n)]
    rows.sort(key=lambda q: (q.broker_name, q.queue_id))
    return TopicStatus(topic, tuple(rows))


async def topic_status(client: AdminClient, topic: str) -> TopicStatus:
    """105, then GET_TOPIC_STATS_INFO (202) from every broker of the route at once. A broker that
    does not answer is in ``failures``, and its queues (as many as the route gives it) are
    listed without figures."""
    from ..headers import GetTopicStatsInfoRequestHeader

    r = await route(client, topic)
    brokers = [(bd.broker_name or "", a) for bd, a in ((bd, select_addr(bd)) for bd in r.broker_datas)
               if a is not None]
    queue_nums = {q.broker_name or "": q.read_queue_nums for q in r.queue_datas}

    async def one(addr: str) -> TopicStatsTable:
        resp = await client.call(addr, RequestCode.GET_TOPIC_STATS_INFO,
                                 GetTopicStatsInfoRequestHeader(topic=topic))
        return TopicStatsTable.decode(resp.body or b"{}")

    results = await gather_map([a for _n, a in brokers], one)
    tables = [t for t in results if isinstance(t, TopicStatsTable)]
    failed = [(name, addr, res) for (name, addr), res in zip(brokers, results, strict=True)
              if isinstance(res, Exception)]
    status = build_topic_status(topic, tables, [(name, queue_nums.get(name, 0)) for name, _a, _r in failed])
    failures = tuple(outcome(addr, res, name) for name, addr, res in failed)
    if not status.queues and not failures:
        # mirrors examineTopicStats: "Not found the topic stats info"
        raise NotFound(f"no topic stats for {topic!r}")
    return TopicStatus(topic, status.queues, failures)


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
    #: the TopicConfig sent (for an update, the first broker's: each broker keeps what was not given)
    config: TopicConfigView
    brokers: tuple[Outcome, ...]
    #: the ORDER_TOPIC_CONFIG value put on the name servers for an ordered topic
    order_conf: str | None = None
    order_conf_outcome: Outcome | None = None
    #: the TopicConfig sent to each broker, in the order of ``brokers`` (``None``: nothing sent)
    sent: tuple[TopicConfigView | None, ...] = ()


_RW = PERM_READ | PERM_WRITE
_PERMS = {"R": PERM_READ, "W": PERM_WRITE, "RW": _RW, "WR": _RW}
#: ``TopicValidator.TOPIC_MAX_LENGTH`` (4.9.x)
TOPIC_MAX_LENGTH = 127
_TOPIC_CHARS = frozenset("%|-_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def check_topic_name(topic: str) -> None:
    """``TopicValidator.validateTopic``: :class:`BadRequest` for a name every broker refuses
    (blank, a character outside ``^[%|a-zA-Z0-9_-]+$``, longer than 127)."""
    if not topic.strip():
        raise BadRequest("the topic name is blank")
    bad = sorted({c for c in topic if c not in _TOPIC_CHARS})
    if bad:
        raise BadRequest(f"topic name {topic!r} has characters brokers refuse ({''.join(bad)!r}); "
                         "allowed: letters, digits and %|-_")
    if len(topic) > TOPIC_MAX_LENGTH:
        raise BadRequest(f"topic name is {len(topic)} characters long; "
                         f"brokers take at most {TOPIC_MAX_LENGTH}")


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


async def topic_config(client: AdminClient, addr: str, topic: str) -> TopicConfigView | None:
    """The broker's own TopicConfig of ``topic`` (GET_ALL_TOPIC_CONFIG 21), or ``None``."""
    from ..bodies import TopicConfigSerializeWrapper

    resp = await client.call(addr, RequestCode.GET_ALL_TOPIC_CONFIG)
    found = TopicConfigSerializeWrapper.decode(resp.body or b"{}").topic_config_table.get(topic)
    if found is None:
        return None
    kind = found.topic_filter_type
    return TopicConfigView(topic, found.read_queue_nums, found.write_queue_nums, found.perm,
                           getattr(kind, "name", str(kind)), found.topic_sys_flag, bool(found.order))


def _sys_flag(old: int, unit: bool | None, has_unit_sub: bool | None) -> int:
    # mirrors TopicSysFlag: bit 0 unit, bit 1 has unit subscription
    flag = old
    if unit is not None:
        flag = (flag | 1) if unit else (flag & ~1)
    if has_unit_sub is not None:
        flag = (flag | 2) if has_unit_sub else (flag & ~2)
    return flag


async def topic_upsert(client: AdminClient, topic: str, *, cluster: str | None = None,
                       broker: str | None = None, read_queues: int | None = None,
                       write_queues: int | None = None, perm: int | str | None = None,
                       order: bool | None = None, unit: bool | None = None,
                       has_unit_sub: bool | None = None, create: bool = True) -> TopicWriteResult:
    """UPDATE_AND_CREATE_TOPIC (17) to every master of ``cluster`` or to the ``broker`` address
    (RocketMQ has one upsert); an ordered topic also gets its ORDER_TOPIC_CONFIG entry
    (PUT_KV_CONFIG 100) on the name servers, as mqadmin updateTopic.

    ``create``: what is not given takes mqadmin updateTopic's defaults (8 read and 8 write
    queues, perm 6, not ordered, no flags). An update (``create=False``) changes only what is
    given: each broker's own TopicConfig (GET_ALL_TOPIC_CONFIG 21) supplies the rest, and a broker
    that does not have the topic is not sent anything (its outcome says so)."""
    if (cluster is None) == (broker is None):
        raise BadRequest("give exactly one of a cluster or a broker address")
    check_topic_name(topic)
    for name, n in (("read", read_queues), ("write", write_queues)):
        if n is not None and not 0 < n <= 1024:
            raise BadRequest(f"{name} queue count {n} must be within 1..1024")
    new_perm = None if perm is None else parse_perm(perm)
    asked = TopicConfigView(topic, 8 if read_queues is None else read_queues,
                            8 if write_queues is None else write_queues, 6 if new_perm is None else new_perm,
                            "SINGLE_TAG", _sys_flag(0, unit, has_unit_sub), bool(order))
    info = await cluster_info(client) if cluster is not None or order else None
    addrs = _targets(masters(info, cluster), "the topic") if cluster is not None and info else [broker or ""]

    async def one(addr: str) -> TopicConfigView:
        cfg = asked
        if not create:
            old = await topic_config(client, addr, topic)
            if old is None:
                raise NotFound(f"the topic {topic!r} is not on {addr}; create it with 'topic create'")
            cfg = replace(old, read_queue_nums=old.read_queue_nums if read_queues is None else read_queues,
                          write_queue_nums=old.write_queue_nums if write_queues is None else write_queues,
                          perm=old.perm if new_perm is None else new_perm,
                          topic_sys_flag=_sys_flag(old.topic_sys_flag, unit, has_unit_sub),
                          order=old.order if order is None else order)
        await _create(client, addr, cfg)
        return cfg

    results = await gather_map(addrs, one)
    outcomes = tuple(outcome(a, r) for a, r in zip(addrs, results, strict=True))
    sent = tuple(r if isinstance(r, TopicConfigView) else None for r in results)
    first = next((c for c in sent if c is not None), asked)
    if not order or not any(o.ok for o in outcomes):
        return TopicWriteResult(first, outcomes, sent=sent)
    assert info is not None
    names = []
    for a, o in zip(addrs, outcomes, strict=True):
        for bname, data in info.broker_addr_table.items():
            if o.ok and a in data.broker_addrs.values():
                names.append(bname)
    wq = {a: c.write_queue_nums for a, c in zip(addrs, sent, strict=True) if c is not None}

    def queues(name: str) -> int:
        return wq.get(info.broker_addr_table[name].broker_addrs.get(MASTER_ID, ""), first.write_queue_nums)

    order_conf = ";".join(f"{n}:{queues(n)}" for n in sorted(set(names)))
    if broker is not None:
        order_conf = await _merge_order_conf(client, topic, order_conf)
    from ..headers import PutKVConfigRequestHeader

    done = await client.each_namesrv(RequestCode.PUT_KV_CONFIG, PutKVConfigRequestHeader(
        namespace=ORDER_TOPIC_NAMESPACE, key=topic, value=order_conf))
    failed = [f"{a}: {r}" if isinstance(r, Exception) else f"{a}: code {r.code} {r.remark or ''}"
              for a, r in done if isinstance(r, Exception) or r.code != 0]
    kv = Outcome("namesrv", not failed, "; ".join(failed) or None,
                 unreachable=bool(failed) and all(isinstance(r, Exception) for _a, r in done))
    return TopicWriteResult(first, outcomes, order_conf, kv, sent)


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
