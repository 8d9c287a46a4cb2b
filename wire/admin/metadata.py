# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A cluster's topics and subscription groups, exported as one document and imported again.

Export mirrors mqadmin ``exportMetadata -c`` (``ExportMetadataCommand``): from every master of the
cluster, the user topics (GET_ALL_TOPIC_CONFIG 21, without the broker's system topics of
GET_SYSTEM_TOPIC_LIST_FROM_BROKER 305 and without retry and dead-letter topics, as
``getUserTopicConfig``) and the user subscription groups (GET_ALL_SUBSCRIPTIONGROUP_CONFIG 201,
without the system groups of ``MixAll.isSysConsumerGroup``). As mqadmin, a topic on several masters
is one entry whose queue counts are the sums over them (and a group's retry queue counts are
summed); the document has mqadmin's keys (``topicConfigTable``, ``subscriptionGroupTable``,
``exportTime``) plus ``masters``, how many masters the sums are over.

Import: every topic (UPDATE_AND_CREATE_TOPIC 17) and group (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
200) of such a document on every master of a cluster (or on one broker), each master getting the
exported counts divided by ``masters`` (at least one queue). mqadmin 4.9.8 and 5.0.0 have no import;
5.3's ``updateTopicList`` and ``updateSubGroupList`` read a JSON array of ``TopicConfig`` or of
``SubscriptionGroupConfig`` and send it to each master (or the one broker) in one batch request
those brokers have (UPDATE_AND_CREATE_TOPIC_LIST, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST); such
an array is read here too (each master gets the counts as written), and sent one config per
request, which every broker version answers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from ..bodies import (
    SubscriptionGroupConfig,
    SubscriptionGroupWrapper,
    TopicConfig,
    TopicConfigSerializeWrapper,
)
from ..bodies import TopicList as _TopicList
from ..codes import RequestCode
from .client import AdminClient, gather_map
from .common import DLQ_PREFIX, RETRY_PREFIX, Outcome, cluster_info, masters, outcome
from .errors import BadRequest, NotFound

__all__ = ["ImportResult", "Metadata", "export_metadata", "import_metadata", "is_system_group"]

#: ``MixAll.isSysConsumerGroup``: the prefix, and the system groups of 4.9.8
SYS_GROUP_PREFIX = "CID_RMQ_SYS_"
SYS_GROUPS = frozenset({
    "TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "__MONITOR_CONSUMER", "CLIENT_INNER_PRODUCER",
    "SELF_TEST_P_GROUP",
    "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER", "CID_ONSAPI_PULL",
    "CID_SYS_RMQ_TRANS"})


def is_system_group(name: str) -> bool:
    return name.startswith(SYS_GROUP_PREFIX) or name in SYS_GROUPS


@dataclass(frozen=True, slots=True)
class Metadata:
    cluster: str
    topics: dict[str, TopicConfig]
    groups: dict[str, SubscriptionGroupConfig]
    masters: int
    export_time: int

    def to_document(self) -> dict[str, Any]:
        """mqadmin's ``metadata.json`` (plus ``masters``), in standard JSON's terms."""
        return {
            "topicConfigTable": {k: v.to_json(standard=True) for k, v in sorted(self.topics.items())},
            "subscriptionGroupTable": {k: v.to_json(standard=True) for k, v in sorted(self.groups.items())},
            "exportTime": self.export_time,
            "masters": self.masters,
        }

    @classmethod
    def from_document(cls, doc: Any, cluster: str = "") -> Metadata:
        """An exported document (``topicConfigTable``, ``subscriptionGroupTable``), or mqadmin
        updateTopicList's / updateSubGroupList's array of TopicConfig / SubscriptionGroupConfig."""
        if isinstance(doc, list):
            return cls.from_config_list(doc, cluster)
        if not isinstance(doc, dict):
            raise BadRequest("not a metadata document: expected an object with topicConfigTable "
                             "and subscriptionGroupTable, or an array of topic or group configs")
        topics = {str(k): TopicConfig.from_json(v, f"topicConfigTable.{k}")
                  for k, v in (doc.get("topicConfigTable") or {}).items()}
        groups = {str(k): SubscriptionGroupConfig.from_json(v, f"subscriptionGroupTable.{k}")
                  for k, v in (doc.get("subscriptionGroupTable") or {}).items()}
        masters = doc.get("masters", 1)
        if not isinstance(masters, int) or masters < 1:
            raise BadRequest(f"masters: expected a positive integer, got {masters!r}")
        return cls(cluster, topics, groups, masters, int(doc.get("exportTime") or 0))

    @classmethod
    def from_config_list(cls, items: list[Any], cluster: str = "") -> Metadata:
        """mqadmin updateTopicList's and updateSubGroupList's file: a JSON array of TopicConfig
        (``topicName``) or SubscriptionGroupConfig (``groupName``) objects; each master gets the
        counts as written (``masters`` 1)."""
        topics: dict[str, TopicConfig] = {}
        groups: dict[str, SubscriptionGroupConfig] = {}
        for i, item in enumerate(items):
            where = f"[{i}]"
            name = item.get("topicName") if isinstance(item, dict) else None
            gname = item.get("groupName") if isinstance(item, dict) else None
            if isinstance(name, str) and name:
                if name in topics:
                    raise BadRequest(f"{where}: topic {name!r} is in the array twice")
                topics[name] = TopicConfig.from_json(item, where)
            elif isinstance(gname, str) and gname:
                if gname in groups:
                    raise BadRequest(f"{where}: group {gname!r} is in the array twice")
                groups[gname] = SubscriptionGroupConfig.from_json(item, where)
            else:
                raise BadRequest(f"not a metadata document: {where} is neither a TopicConfig (with "
                                 "topicName) nor a SubscriptionGroupConfig (with groupName)")
        return cls(cluster, topics, groups, 1, 0)


async def export_metadata(client: AdminClient, cluster: str, *, topics: bool = True,
                          groups: bool = True) -> Metadata:
    addrs = masters(await cluster_info(client), cluster)
    if not addrs:
        raise NotFound(f"cluster {cluster!r} has no master broker")

    async def one(addr: str) -> tuple[dict[str, TopicConfig], dict[str, SubscriptionGroupConfig]]:
        t: dict[str, TopicConfig] = {}
        g: dict[str, SubscriptionGroupConfig] = {}
        if topics:
            resp = await client.call(addr, RequestCode.GET_ALL_TOPIC_CONFIG)
            table = TopicConfigSerializeWrapper.decode(resp.body or b"{}").topic_config_table
            sys_resp = await client.call(addr, RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER)
            system = set(_TopicList.decode(sys_resp.body or b"{}").topic_list)
            t = {k: v for k, v in table.items()
                 if k not in system and not k.startswith((RETRY_PREFIX, DLQ_PREFIX))}
        if groups:
            resp = await client.call(addr, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
            table_g = SubscriptionGroupWrapper.decode(resp.body or b"{}").subscription_group_table
            g = {k: v for k, v in table_g.items() if not is_system_group(k)}
        return t, g

    results = await gather_map(addrs, one)
    all_topics: dict[str, TopicConfig] = {}
    all_groups: dict[str, SubscriptionGroupConfig] = {}
    for res in results:
        if isinstance(res, Exception):
            raise res  # an export missing a master is not an export of the cluster
        t, g = res
        for name, cfg in t.items():
            old = all_topics.get(name)
            all_topics[name] = cfg if old is None else replace(
                cfg, read_queue_nums=old.read_queue_nums + cfg.read_queue_nums,
                write_queue_nums=old.write_queue_nums + cfg.write_queue_nums)
        for name, gcfg in g.items():
            old_g = all_groups.get(name)
            all_groups[name] = gcfg if old_g is None else replace(
                gcfg, retry_queue_nums=old_g.retry_queue_nums + gcfg.retry_queue_nums)
    return Metadata(cluster, all_topics, all_groups, len(addrs), int(time.time() * 1000))


@dataclass(frozen=True, slots=True)
class ImportResult:
    cluster: str
    #: one outcome per (topic or group, master): target ``topic T @ addr`` / ``group G @ addr``
    outcomes: tuple[Outcome, ...]


async def import_metadata(client: AdminClient, metadata: Metadata, cluster: str | None = None,
                          broker: str | None = None) -> ImportResult:
    """Create or update every topic and group of ``metadata`` on every master of ``cluster``, or
    on the one ``broker`` address (as mqadmin's ``-b``)."""
    from ..headers import CreateTopicRequestHeader

    if (cluster is None) == (broker is None):
        raise BadRequest("give a cluster or a broker address")
    if broker is not None:
        addrs = [broker]
    else:
        addrs = masters(await cluster_info(client), cluster or "")
        if not addrs:
            raise NotFound(f"cluster {cluster!r} has no master broker")
    per = metadata.masters
    jobs: list[tuple[str, str, Any]] = []
    for name, t in sorted(metadata.topics.items()):
        kind = t.topic_filter_type
        header = CreateTopicRequestHeader(
            topic=name, default_topic="TBW102", read_queue_nums=max(1, t.read_queue_nums // per),
            write_queue_nums=max(1, t.write_queue_nums // per), perm=t.perm,
            topic_filter_type=getattr(kind, "name", str(kind)), topic_sys_flag=t.topic_sys_flag,
            order=t.order)
        jobs += [(f"topic {name} @ {a}", a, header) for a in addrs]
    for name, g in sorted(metadata.groups.items()):
        body = replace(g, retry_queue_nums=max(1, g.retry_queue_nums // per)).encode()
        jobs += [(f"group {name} @ {a}", a, body) for a in addrs]

    async def one(job: tuple[str, str, Any]) -> None:
        _label, addr, what = job
        if isinstance(what, bytes):
            await client.call(addr, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, what)
        else:
            await client.call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, what)

    results = await gather_map(jobs, one, limit=8)
    return ImportResult(cluster or broker or "",
                        tuple(outcome(j[0], r) for j, r in zip(jobs, results, strict=True)))
