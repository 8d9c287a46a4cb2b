# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Requests and selections that several nouns share: routes, cluster membership, runtime tables.

The selection rules mirror the Java tools: ``CommandUtil.fetchMasterAddrByClusterName`` (the
id-0 address of every broker name in a cluster), ``fetchMasterAndSlaveAddrByClusterName``
(every address), and ``BrokerData.selectBrokerAddr`` (the master, else any slave; we take the
lowest id so that the choice is repeatable).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..bodies import BrokerData, ClusterInfo, KVTable, PropertiesBody, TopicRouteData
from ..codes import RequestCode, ResponseCode
from ..topic import DLQ_GROUP_TOPIC_PREFIX, MASTER_ID, RETRY_GROUP_TOPIC_PREFIX
from .client import AdminClient
from .errors import NotFound, ServerNotFound

__all__ = [
    "DLQ_PREFIX",
    "MASTER_ID",
    "RETRY_PREFIX",
    "Member",
    "Outcome",
    "broker_name_of",
    "cluster_info",
    "cluster_members",
    "check_taken",
    "cluster_of_broker",
    "masters",
    "outcome",
    "properties",
    "route",
    "route_or_none",
    "runtime_table",
    "select_addr",
]

#: ``MixAll.RETRY_GROUP_TOPIC_PREFIX`` and ``DLQ_GROUP_TOPIC_PREFIX``, as this package names them
RETRY_PREFIX = RETRY_GROUP_TOPIC_PREFIX
DLQ_PREFIX = DLQ_GROUP_TOPIC_PREFIX


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one server did with one request that several servers were sent: ``ok``, or the error
    text. The commands that ask several servers keep one per server that did not answer (their
    ``failures``), and the writes one per server."""

    target: str
    ok: bool
    error: str | None = None
    #: what the server reported back, when it reports something (a count, an old value, a name)
    detail: str | None = None
    #: the failure was a connection failure or a timeout, not an answer
    unreachable: bool = False


def outcome(target: str, result: object, detail: str | None = None) -> Outcome:
    """An :class:`Outcome` from a result or the exception that replaced it."""
    if isinstance(result, Exception):
        from ..aio import RemotingIOError

        return Outcome(target, False, str(result), detail, unreachable=isinstance(result, RemotingIOError))
    return Outcome(target, True, None, detail)


@dataclass(frozen=True, slots=True)
class Member:
    """One broker process of a cluster."""

    cluster: str
    broker_name: str
    broker_id: int
    addr: str


async def cluster_info(client: AdminClient) -> ClusterInfo:
    """GET_BROKER_CLUSTER_INFO (106) from a name server."""
    resp = await client.namesrv(RequestCode.GET_BROKER_CLUSTER_INFO)
    return ClusterInfo.decode(resp.body or b"{}")


async def route_or_none(client: AdminClient, topic: str) -> TopicRouteData | None:
    """GET_ROUTEINFO_BY_TOPIC (105); ``None`` when the name server answers TOPIC_NOT_EXIST."""
    try:
        return await route(client, topic)
    except ServerNotFound:
        return None


async def route(client: AdminClient, topic: str) -> TopicRouteData:
    """GET_ROUTEINFO_BY_TOPIC (105); :class:`ServerNotFound` (the name server's answer) when the
    topic has no route."""
    from ..headers import GetRouteInfoRequestHeader

    resp = await client.namesrv(RequestCode.GET_ROUTEINFO_BY_TOPIC, GetRouteInfoRequestHeader(topic=topic),
                                ok=(ResponseCode.SUCCESS, ResponseCode.TOPIC_NOT_EXIST))
    if resp.code == ResponseCode.TOPIC_NOT_EXIST:
        raise ServerNotFound(resp.code, resp.remark, addr=client.last_namesrv or "the name server",
                             request_code=RequestCode.GET_ROUTEINFO_BY_TOPIC)
    return TopicRouteData.decode(resp.body or b"{}")


async def runtime_table(client: AdminClient, addr: str) -> dict[str, str]:
    """GET_BROKER_RUNTIME_INFO (28): the broker's runtime key/value table."""
    resp = await client.call(addr, RequestCode.GET_BROKER_RUNTIME_INFO)
    return dict(KVTable.decode(resp.body or b"{}").table)


async def properties(client: AdminClient, addr: str, code: int) -> dict[str, str]:
    """A Properties-text answer (GET_BROKER_CONFIG 26, GET_NAMESRV_CONFIG 319) from ``addr``."""
    resp = await client.call(addr, code)
    return dict(PropertiesBody.decode(resp.body or b"").table)


def select_addr(data: BrokerData) -> str | None:
    """The address to ask for a broker name: the master, else the lowest-id slave."""
    addrs = data.broker_addrs
    if MASTER_ID in addrs:
        return addrs[MASTER_ID]
    return addrs[min(addrs)] if addrs else None


def cluster_members(info: ClusterInfo, cluster: str | None = None) -> list[Member]:
    """Every broker process, by cluster name, broker name and broker id; ``cluster`` keeps one
    cluster (:class:`NotFound` when the name server does not know it)."""
    table = info.cluster_addr_table
    if cluster is not None and cluster not in table:
        known = ", ".join(sorted(table)) or "none"
        raise NotFound(f"cluster {cluster!r} is not known to the name server (clusters: {known})")
    out: list[Member] = []
    for cname in sorted(table) if cluster is None else [cluster]:
        for bname in sorted(set(table[cname])):
            data = info.broker_addr_table.get(bname)
            if data is None:
                continue
            for bid in sorted(data.broker_addrs):
                out.append(Member(cname, bname, bid, data.broker_addrs[bid]))
    return out


def masters(info: ClusterInfo, cluster: str) -> list[str]:
    """The master addresses of ``cluster`` (``fetchMasterAddrByClusterName``)."""
    return [m.addr for m in cluster_members(info, cluster) if m.broker_id == MASTER_ID]


def cluster_of_broker(info: ClusterInfo, broker_name: str) -> list[str]:
    """The clusters that list ``broker_name``."""
    return sorted(c for c, names in info.cluster_addr_table.items() if broker_name in names)


def broker_name_of(info: ClusterInfo | TopicRouteData, addr: str) -> tuple[str, int] | None:
    """``(broker name, broker id)`` of the process at ``addr``, or ``None``."""
    datas: Iterable[BrokerData] = (info.broker_addr_table.values() if isinstance(info, ClusterInfo)
                                   else info.broker_datas)
    for data in datas:
        for bid, a in data.broker_addrs.items():
            if a == addr and data.broker_name is not None:
                return data.broker_name, bid
    return None


def _same_value(sent: str, now: str) -> bool:
    a, b = sent.strip(), now.strip()
    if a.lower() in ("true", "false"):
        return a.lower() == b.lower()
    try:
        return int(a) == int(b)
    except ValueError:
        return a == b


def check_taken(sent: dict[str, str], now: dict[str, str], who: str) -> str | None:
    """Why a configuration update did not take, from the configuration read back after it
    (``None``: every value is there). A Java server answers SUCCESS to a value it cannot parse,
    or to a key it does not have, and keeps what it had (``MixAll.properties2Object``)."""
    problems = []
    for key, value in sent.items():
        if key not in now:
            problems.append(f"{key} is not a key of the {who}'s configuration")
        elif not _same_value(value, now[key]):
            problems.append(f"{key}={value} was not taken (the {who} keeps {now[key]!r})")
    return "; ".join(problems) or None
