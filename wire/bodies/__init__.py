# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Typed remoting bodies: the JSON (fastjson), Properties-text and binary bodies of RocketMQ.

Every body class is a frozen dataclass with snake_case attributes that view the Java/JSON
properties, and the same two entry points:

* ``Cls.decode(data) -> Cls`` reads the bytes (lenient like fastjson; :class:`wire.DecodeError`
  with the JSON path in ``field`` when they do not fit);
* ``body.encode(*, standard=False) -> bytes`` writes them as Java would; ``standard=True`` is the
  BrowserCompatible/QuoteFieldNames/MapSortField encoding the name server uses for routes
  (:func:`route_json_standard` says when).

:class:`RegisterBrokerBody` also takes ``compressed=`` (the REGISTER_BROKER header's flag).
:data:`REQUEST_BODIES` and :data:`RESPONSE_BODIES` map a request code to the class of its
request body and of its SUCCESS response body; :func:`decode_body` uses them.
See :mod:`wire.bodies._base` for how the JSON bodies are read and written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, Self

from ..codes import RequestCode
from ._base import JsonBody, body_props
from .acl import AclConfig, PlainAccessConfig
from .client import (
    BrokerStatsData,
    BrokerStatsItem,
    CheckClientRequestBody,
    Connection,
    ConsumeFromWhere,
    ConsumeQueueData,
    ConsumerConnection,
    ConsumerData,
    ConsumeStats,
    ConsumeType,
    GetConsumerListByGroupResponseBody,
    GetConsumerStatusBody,
    HeartbeatData,
    LockBatchRequestBody,
    LockBatchResponseBody,
    MessageModel,
    OffsetWrapper,
    ProducerConnection,
    ProducerData,
    ProducerInfo,
    ProducerTableInfo,
    QueryConsumeQueueResponseBody,
    QueryConsumeTimeSpanBody,
    QueryCorrectionOffsetBody,
    QueueTimeSpan,
    ResetOffsetBody,
    ResetOffsetBodyForC,
    ResetOffsetEntryForC,
    SubscriptionData,
    TopicOffset,
    TopicStatsTable,
    UnlockBatchRequestBody,
)
from .common import BrokerNameList, DataVersion, GroupList, KVTable, MessageQueue, TopicList
from .config import (
    REGISTER_BROKER_BODY_INFLATED,
    TIMER_CHECKPOINT,
    ConsumerOffsetSerializeWrapper,
    CustomizedRetryPolicy,
    DelayOffsetSerializeWrapper,
    ExponentialRetryPolicy,
    GroupRetryPolicy,
    GroupRetryPolicyType,
    MessageRequestMode,
    MessageRequestModeSerializeWrapper,
    RegisterBrokerBody,
    SetMessageRequestModeRequestBody,
    SimpleSubscriptionData,
    SubscriptionGroupConfig,
    SubscriptionGroupWrapper,
    TimerCheckpoint,
    TimerMetric,
    TimerMetricsSerializeWrapper,
    TopicConfig,
    TopicConfigSerializeWrapper,
    TopicFilterType,
)
from .ha import (
    BrokerReplicasInfo,
    ElectMasterResponseBody,
    EpochEntry,
    EpochEntryCache,
    HAClientRuntimeInfo,
    HAConnectionRuntimeInfo,
    HARuntimeInfo,
    InSyncMember,
    InSyncStateData,
    InSyncStateSet,
    ReplicaIdentity,
    ReplicasInfo,
    SyncStateSet,
)
from .properties import PropertiesBody, decode_properties, encode_properties
from .route import (
    BrokerData,
    BrokerMemberGroup,
    ClusterInfo,
    LogicQueueMappingItem,
    QueueData,
    TopicQueueMappingDetail,
    TopicQueueMappingInfo,
    TopicRouteData,
    route_json_standard,
)

__all__ = [
    "REGISTER_BROKER_BODY_INFLATED",
    "REQUEST_BODIES",
    "RESPONSE_BODIES",
    "TIMER_CHECKPOINT",
    "AclConfig",
    "Body",
    "BrokerData",
    "BrokerMemberGroup",
    "BrokerNameList",
    "BrokerReplicasInfo",
    "ClusterInfo",
    "Connection",
    "ConsumeFromWhere",
    "ConsumeQueueData",
    "ConsumeStats",
    "ConsumeType",
    "ConsumerConnection",
    "ConsumerData",
    "ConsumerOffsetSerializeWrapper",
    "CustomizedRetryPolicy",
    "DataVersion",
    "DelayOffsetSerializeWrapper",
    "ElectMasterResponseBody",
    "EpochEntry",
    "EpochEntryCache",
    "ExponentialRetryPolicy",
    "GetConsumerListByGroupResponseBody",
    "GetConsumerStatusBody",
    "GroupList",
    "GroupRetryPolicy",
    "GroupRetryPolicyType",
    "HAClientRuntimeInfo",
    "HAConnectionRuntimeInfo",
    "HARuntimeInfo",
    "BrokerStatsData",
    "BrokerStatsItem",
    "CheckClientRequestBody",
    "HeartbeatData",
    "InSyncMember",
    "InSyncStateData",
    "InSyncStateSet",
    "JsonBody",
    "KVTable",
    "LockBatchRequestBody",
    "LockBatchResponseBody",
    "LogicQueueMappingItem",
    "MessageModel",
    "MessageQueue",
    "MessageRequestMode",
    "MessageRequestModeSerializeWrapper",
    "OffsetWrapper",
    "ProducerConnection",
    "ProducerData",
    "ProducerInfo",
    "ProducerTableInfo",
    "QueryConsumeQueueResponseBody",
    "QueryConsumeTimeSpanBody",
    "QueryCorrectionOffsetBody",
    "QueueTimeSpan",
    "ResetOffsetBody",
    "ResetOffsetBodyForC",
    "ResetOffsetEntryForC",
    "PlainAccessConfig",
    "PropertiesBody",
    "QueueData",
    "RegisterBrokerBody",
    "ReplicaIdentity",
    "ReplicasInfo",
    "SetMessageRequestModeRequestBody",
    "SimpleSubscriptionData",
    "SubscriptionData",
    "SubscriptionGroupConfig",
    "SubscriptionGroupWrapper",
    "SyncStateSet",
    "TimerCheckpoint",
    "TimerMetric",
    "TimerMetricsSerializeWrapper",
    "TopicConfig",
    "TopicConfigSerializeWrapper",
    "TopicFilterType",
    "TopicList",
    "TopicOffset",
    "TopicQueueMappingDetail",
    "TopicQueueMappingInfo",
    "TopicRouteData",
    "TopicStatsTable",
    "UnlockBatchRequestBody",
    "body_props",
    "decode_body",
    "decode_properties",
    "encode_properties",
    "route_json_standard",
]


class Body(Protocol):
    """What every body class offers."""

    @classmethod
    def decode(cls, data: bytes) -> Self: ...

    def encode(self, *, standard: bool = False) -> bytes: ...


R = RequestCode

#: request code -> class of the request's body (requests without a body are absent)
REQUEST_BODIES: dict[int, type[Any]] = {
    R.UPDATE_BROKER_CONFIG: PropertiesBody,
    R.HEART_BEAT: HeartbeatData,
    R.CHECK_CLIENT_CONFIG: CheckClientRequestBody,
    R.LOCK_BATCH_MQ: LockBatchRequestBody,
    R.UNLOCK_BATCH_MQ: UnlockBatchRequestBody,
    R.RESET_CONSUMER_CLIENT_OFFSET: ResetOffsetBody,
    R.REGISTER_BROKER: RegisterBrokerBody,
    R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: SubscriptionGroupConfig,
    R.UPDATE_NAMESRV_CONFIG: PropertiesBody,
    R.SET_MESSAGE_REQUEST_MODE: SetMessageRequestModeRequestBody,
    R.CONTROLLER_ALTER_SYNC_STATE_SET: SyncStateSet,
    R.CONTROLLER_GET_SYNC_STATE_DATA: BrokerNameList,
    R.UPDATE_CONTROLLER_CONFIG: PropertiesBody,
}

#: request code -> class of the body of its SUCCESS response
RESPONSE_BODIES: dict[int, type[Any]] = {
    R.GET_ALL_TOPIC_CONFIG: TopicConfigSerializeWrapper,
    R.GET_BROKER_CONFIG: PropertiesBody,
    R.GET_BROKER_RUNTIME_INFO: KVTable,
    R.GET_CONSUMER_LIST_BY_GROUP: GetConsumerListByGroupResponseBody,
    R.LOCK_BATCH_MQ: LockBatchResponseBody,
    R.GET_ALL_CONSUMER_OFFSET: ConsumerOffsetSerializeWrapper,
    R.GET_ALL_DELAY_OFFSET: DelayOffsetSerializeWrapper,
    R.GET_TIMER_CHECK_POINT: TimerCheckpoint,
    R.GET_TIMER_METRICS: TimerMetricsSerializeWrapper,
    R.REGISTER_BROKER: KVTable,
    R.GET_ROUTEINFO_BY_TOPIC: TopicRouteData,
    R.GET_BROKER_CLUSTER_INFO: ClusterInfo,
    R.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: SubscriptionGroupWrapper,
    R.GET_TOPIC_STATS_INFO: TopicStatsTable,
    R.GET_CONSUMER_CONNECTION_LIST: ConsumerConnection,
    R.GET_PRODUCER_CONNECTION_LIST: ProducerConnection,
    R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: TopicList,
    R.GET_CONSUME_STATS: ConsumeStats,
    R.INVOKE_BROKER_TO_RESET_OFFSET: ResetOffsetBody,
    R.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: GetConsumerStatusBody,
    R.GET_CONSUMER_STATUS_FROM_CLIENT: GetConsumerStatusBody,
    R.GET_KVLIST_BY_NAMESPACE: KVTable,
    R.GET_TOPICS_BY_CLUSTER: TopicList,
    R.QUERY_TOPIC_CONSUME_BY_WHO: GroupList,
    R.GET_SYSTEM_TOPIC_LIST_FROM_NS: TopicList,
    R.GET_SYSTEM_TOPIC_LIST_FROM_BROKER: TopicList,
    R.GET_UNIT_TOPIC_LIST: TopicList,
    R.GET_HAS_UNIT_SUB_TOPIC_LIST: TopicList,
    R.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: TopicList,
    R.GET_NAMESRV_CONFIG: PropertiesBody,
    R.GET_ALL_PRODUCER_INFO: ProducerTableInfo,
    R.QUERY_CONSUME_TIME_SPAN: QueryConsumeTimeSpanBody,
    R.VIEW_BROKER_STATS_DATA: BrokerStatsData,
    R.QUERY_CORRECTION_OFFSET: QueryCorrectionOffsetBody,
    R.QUERY_CONSUME_QUEUE: QueryConsumeQueueResponseBody,
    R.GET_ALL_MESSAGE_REQUEST_MODE: MessageRequestModeSerializeWrapper,
    R.GET_BROKER_HA_STATUS: HARuntimeInfo,
    R.CONTROLLER_ALTER_SYNC_STATE_SET: SyncStateSet,
    R.CONTROLLER_ELECT_MASTER: BrokerMemberGroup,
    R.CONTROLLER_GET_REPLICA_INFO: SyncStateSet,
    R.CONTROLLER_GET_SYNC_STATE_DATA: InSyncStateData,
    R.GET_BROKER_EPOCH_CACHE: EpochEntryCache,
    R.GET_CONTROLLER_CONFIG: PropertiesBody,
    R.GET_BROKER_CLUSTER_ACL_CONFIG: AclConfig,
}


def _register_broker_options(ext_fields: Mapping[str, str] | None) -> dict[str, Any]:
    compressed = (ext_fields or {}).get("compressed", "false")
    return {"compressed": str(compressed).strip().lower() == "true"}


# Request bodies whose form depends on the request header (W8: a table, not an if chain).
_REQUEST_OPTIONS = {int(R.REGISTER_BROKER): _register_broker_options}


def decode_body(request_code: int, is_response: bool, data: bytes | None, *,
                ext_fields: Mapping[str, str] | None = None) -> object | None:
    """Decode a body by the request code it belongs to; ``None`` when no class is registered
    or there is no body.

    ``is_response`` selects the SUCCESS-response table (callers should only pass responses with
    code SUCCESS). ``ext_fields`` are the *request's* ext fields, needed for REGISTER_BROKER
    (``compressed``). Raises :class:`wire.DecodeError` when the bytes do not fit the class.
    """
    if not data:
        return None
    table = RESPONSE_BODIES if is_response else REQUEST_BODIES
    cls = table.get(int(request_code))
    if cls is None:
        return None
    options = _REQUEST_OPTIONS.get(int(request_code)) if not is_response else None
    body: object = cls.decode(data, **(options(ext_fields) if options else {}))
    return body
