# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Route bodies: TopicRouteData (GET_ROUTEINFO_BY_TOPIC), ClusterInfo (GET_BROKER_CLUSTER_INFO).

Sources: ``protocol/route/TopicRouteData.java``, ``QueueData.java``, ``BrokerData.java``,
``protocol/body/ClusterInfo.java``, ``protocol/body/BrokerMemberGroup.java`` (4.9.x and 5.0.0 under
``common/``, 5.1+ under ``remoting/``), ``common/statictopic/TopicQueueMappingInfo.java``,
``TopicQueueMappingDetail.java``, ``LogicQueueMappingItem.java`` (5.x), and the name server's
``DefaultRequestProcessor#getRouteInfoByTopic`` (4.9.x) / ``ClientRequestProcessor`` (5.x).

The name server writes a route in one of two forms (:func:`route_json_standard` picks it):
fastjson's plain form, where ``brokerAddrs`` has bare ``Long`` keys (``{0:"host:10911"}``), or,
for clients of V4_9_4 and later or those that send ``acceptStandardJsonOnly=true``, the standard
form (``BrowserCompatible, QuoteFieldNames, SkipTransientField, MapSortField``): keys quoted and
maps sorted. ClusterInfo is always the plain form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..codes import MQVersion
from ._base import BOOL, INT, INT_KEY, LONG, LONG_KEY, STR, STR_KEY, STR_LIST, JsonBody, Map, Obj, Seq, prop

__all__ = [
    "BrokerData",
    "BrokerMemberGroup",
    "ClusterInfo",
    "LogicQueueMappingItem",
    "QueueData",
    "TopicQueueMappingDetail",
    "TopicQueueMappingInfo",
    "TopicRouteData",
    "route_json_standard",
]

#: ``MixAll.METADATA_SCOPE_GLOBAL``, the default scope of a static topic mapping.
GLOBAL_SCOPE = "__global__"

#: The first client version the name server answers with standard JSON (V4_9_4).
STANDARD_ROUTE_JSON_SINCE = int(MQVersion.V4_9_4)


def route_json_standard(request_version: int, accept_standard_json_only: bool | str | None = None) -> bool:
    """Whether the name server writes this GET_ROUTEINFO_BY_TOPIC answer in the standard form.

    Mirrors ``getRouteInfoByTopic``: ``version >= V4_9_4`` or the ``acceptStandardJsonOnly``
    header field is true (given as a bool or as the ext-field text).
    """
    if isinstance(accept_standard_json_only, str):
        accept_standard_json_only = accept_standard_json_only.strip().lower() == "true"
    return request_version >= STANDARD_ROUTE_JSON_SINCE or bool(accept_standard_json_only)


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueData(JsonBody):
    """``QueueData``: the queues of a topic on one broker name.

    RocketMQ before 4.5 spelled ``topicSysFlag`` as ``topicSynFlag``; newer readers ignore that
    key, and so do we (it is kept in ``extra``).
    """

    broker_name: str | None = prop("brokerName", STR)
    read_queue_nums: int = prop("readQueueNums", INT, 0)
    write_queue_nums: int = prop("writeQueueNums", INT, 0)
    perm: int = prop("perm", INT, 0)
    topic_sys_flag: int = prop("topicSysFlag", INT, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerData(JsonBody):
    """``BrokerData``: the addresses of one broker name, by broker id (0 is the master).

    5.x adds ``enableActingMaster`` (always written there) and ``zoneName`` (written when set);
    ``None`` leaves them out, as 4.9.x does.
    """

    cluster: str | None = prop("cluster", STR)
    broker_name: str | None = prop("brokerName", STR)
    broker_addrs: Mapping[int, str] = prop("brokerAddrs", Map(LONG_KEY, STR), factory=dict)
    enable_acting_master: bool | None = prop("enableActingMaster", BOOL)
    zone_name: str | None = prop("zoneName", STR)


@dataclass(frozen=True, slots=True, kw_only=True)
class LogicQueueMappingItem(JsonBody):
    """``LogicQueueMappingItem`` (static topics, 5.x): one physical segment of a logic queue."""

    gen: int = prop("gen", INT, 0)
    queue_id: int = prop("queueId", INT, 0)
    bname: str | None = prop("bname", STR)
    logic_offset: int = prop("logicOffset", LONG, 0)
    start_offset: int = prop("startOffset", LONG, 0)
    end_offset: int = prop("endOffset", LONG, -1)
    time_of_start: int = prop("timeOfStart", LONG, -1)
    time_of_end: int = prop("timeOfEnd", LONG, -1)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicQueueMappingInfo(JsonBody):
    """``TopicQueueMappingInfo`` (static topics, 5.x): logic-to-physical queue ids on one broker."""

    topic: str | None = prop("topic", STR)
    scope: str | None = prop("scope", STR, GLOBAL_SCOPE)
    total_queues: int = prop("totalQueues", INT, 0)
    bname: str | None = prop("bname", STR)
    epoch: int = prop("epoch", LONG, 0)
    dirty: bool = prop("dirty", BOOL, False)
    curr_id_map: Mapping[int, int] = prop("currIdMap", Map(INT_KEY, INT), factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicQueueMappingDetail(TopicQueueMappingInfo):
    """``TopicQueueMappingDetail`` (5.x): a mapping info plus the hosted logic queues."""

    hosted_queues: Mapping[int, tuple[LogicQueueMappingItem, ...]] = prop(
        "hostedQueues", Map(INT_KEY, Seq(Obj(LogicQueueMappingItem))), factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicRouteData(JsonBody):
    """``TopicRouteData``, the GET_ROUTEINFO_BY_TOPIC answer.

    ``order_topic_conf`` is written only when set. ``topic_queue_mapping_by_broker`` is 5.x
    (static topics); ``None`` leaves it out, as 4.9.x and 5.x without static topics do.
    Encode with ``standard=route_json_standard(version, accept_standard_json_only)``.
    """

    order_topic_conf: str | None = prop("orderTopicConf", STR)
    queue_datas: tuple[QueueData, ...] = prop("queueDatas", Seq(Obj(QueueData)), ())
    broker_datas: tuple[BrokerData, ...] = prop("brokerDatas", Seq(Obj(BrokerData)), ())
    filter_server_table: Mapping[str, tuple[str, ...]] = prop(
        "filterServerTable", Map(STR_KEY, STR_LIST), factory=dict)
    topic_queue_mapping_by_broker: Mapping[str, TopicQueueMappingInfo] | None = prop(
        "topicQueueMappingByBroker", Map(STR_KEY, Obj(TopicQueueMappingInfo)))


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterInfo(JsonBody):
    """``ClusterInfo``, the GET_BROKER_CLUSTER_INFO answer: brokers by name, broker names by cluster.

    Java always writes it in the plain form (bare ``brokerAddrs`` keys).
    """

    broker_addr_table: Mapping[str, BrokerData] = prop(
        "brokerAddrTable", Map(STR_KEY, Obj(BrokerData)), factory=dict)
    cluster_addr_table: Mapping[str, tuple[str, ...]] = prop(
        "clusterAddrTable", Map(STR_KEY, STR_LIST), factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerMemberGroup(JsonBody):
    """``BrokerMemberGroup`` (5.x): the members of one broker name (CONTROLLER_ELECT_MASTER reply
    body in 5.0.0, and inside ``GetBrokerMemberGroupResponseBody``)."""

    cluster: str | None = prop("cluster", STR)
    broker_name: str | None = prop("brokerName", STR)
    broker_addrs: Mapping[int, str] = prop("brokerAddrs", Map(LONG_KEY, STR), factory=dict)
