# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Headers of the name server's requests: broker registration, routes, the KV store and
write permissions.

Part of :mod:`wire.headers` (import the classes from there); see its module notes for the
rules every class follows."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..headers import (
    _B,
    _I,
    _L,
    _PB,
    CustomHeader,
    TopicRequestHeader,
    _nn,
    _opt,
)

# ---------------------------------------------------------------------------------------- name server


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerRequestHeader(CustomHeader):
    """REGISTER_BROKER (103).

    ``compressed`` is a primitive (always sent); ``bodyCrc32`` is initialised to 0 and is the
    CRC32 of the body ``& 0x7FFFFFFF`` (checked by the name server only when non-zero).
    ``heartbeatTimeoutMillis`` and ``enableActingMaster`` are 5.0.0+. A 5.x broker may add the
    free ext field ``__ZONE_NAME`` (:attr:`zone_name`).
    """

    broker_name: str = field(metadata=_nn("brokerName"))
    broker_addr: str = field(metadata=_nn("brokerAddr"))
    cluster_name: str = field(metadata=_nn("clusterName"))
    ha_server_addr: str = field(metadata=_nn("haServerAddr"))
    broker_id: int = field(metadata=_nn("brokerId", _L))
    heartbeat_timeout_millis: int | None = _opt("heartbeatTimeoutMillis", _L, since="5.0.0")
    enable_acting_master: bool | None = _opt("enableActingMaster", _B, since="5.0.0")
    compressed: bool | None = _opt("compressed", _PB, default=False)
    body_crc32: int | None = _opt("bodyCrc32", _I, default=0)

    @property
    def zone_name(self) -> str | None:
        return self.extra.get("__ZONE_NAME")


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerResponseHeader(CustomHeader):
    """The answer to REGISTER_BROKER; filled for a slave from its master's entry."""

    ha_server_addr: str | None = _opt("haServerAddr")
    master_addr: str | None = _opt("masterAddr")


@dataclass(frozen=True, slots=True, kw_only=True)
class UnRegisterBrokerRequestHeader(CustomHeader):
    """UNREGISTER_BROKER (104)."""

    broker_name: str = field(metadata=_nn("brokerName"))
    broker_addr: str = field(metadata=_nn("brokerAddr"))
    cluster_name: str = field(metadata=_nn("clusterName"))
    broker_id: int = field(metadata=_nn("brokerId", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryDataVersionRequestHeader(CustomHeader):
    """QUERY_DATA_VERSION (322): a broker asks whether its registration is current."""

    broker_name: str = field(metadata=_nn("brokerName"))
    broker_addr: str = field(metadata=_nn("brokerAddr"))
    cluster_name: str = field(metadata=_nn("clusterName"))
    broker_id: int = field(metadata=_nn("brokerId", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryDataVersionResponseHeader(CustomHeader):
    """QUERY_DATA_VERSION (322) answer: ``changed`` when the name server's data version differs."""

    changed: bool = field(metadata=_nn("changed", _B))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetRouteInfoRequestHeader(TopicRequestHeader):
    """GET_ROUTEINFO_BY_TOPIC (105). ``acceptStandardJsonOnly`` is 4.9.4+; superclass
    ``TopicRequestHeader`` from 5.2.0."""

    topic: str = field(metadata=_nn("topic"))
    accept_standard_json_only: bool | None = _opt("acceptStandardJsonOnly", _B, since="4.9.4")


@dataclass(frozen=True, slots=True, kw_only=True)
class PutKVConfigRequestHeader(CustomHeader):
    """PUT_KV_CONFIG (100)."""

    namespace: str = field(metadata=_nn("namespace"))
    key: str = field(metadata=_nn("key"))
    value: str = field(metadata=_nn("value"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVConfigRequestHeader(CustomHeader):
    """GET_KV_CONFIG (101)."""

    namespace: str = field(metadata=_nn("namespace"))
    key: str = field(metadata=_nn("key"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVConfigResponseHeader(CustomHeader):
    """The answer to GET_KV_CONFIG."""

    value: str | None = _opt("value")


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteKVConfigRequestHeader(CustomHeader):
    """DELETE_KV_CONFIG (102)."""

    namespace: str = field(metadata=_nn("namespace"))
    key: str = field(metadata=_nn("key"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVListByNamespaceRequestHeader(CustomHeader):
    """GET_KVLIST_BY_NAMESPACE (219)."""

    namespace: str = field(metadata=_nn("namespace"))


@dataclass(frozen=True, slots=True, kw_only=True)
class WipeWritePermOfBrokerRequestHeader(CustomHeader):
    """WIPE_WRITE_PERM_OF_BROKER (205)."""

    broker_name: str = field(metadata=_nn("brokerName"))


@dataclass(frozen=True, slots=True, kw_only=True)
class WipeWritePermOfBrokerResponseHeader(CustomHeader):
    """The answer to WIPE_WRITE_PERM_OF_BROKER."""

    wipe_topic_count: int = field(metadata=_nn("wipeTopicCount", _I))


@dataclass(frozen=True, slots=True, kw_only=True)
class AddWritePermOfBrokerRequestHeader(CustomHeader):
    """ADD_WRITE_PERM_OF_BROKER (327, 4.9.2+)."""

    broker_name: str = field(metadata=_nn("brokerName", since="4.9.2"))


@dataclass(frozen=True, slots=True, kw_only=True)
class AddWritePermOfBrokerResponseHeader(CustomHeader):
    """The answer to ADD_WRITE_PERM_OF_BROKER (4.9.2+)."""

    add_topic_count: int = field(metadata=_nn("addTopicCount", _I, since="4.9.2"))


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteTopicFromNamesrvRequestHeader(TopicRequestHeader):
    """DELETE_TOPIC_IN_NAMESRV (216); the Java class was ``DeleteTopicInNamesrvRequestHeader``
    before 4.9.3 (same ``topic`` field). ``clusterName`` is 4.9.4+; superclass
    ``TopicRequestHeader`` from 5.2.0."""

    topic: str = field(metadata=_nn("topic"))
    cluster_name: str | None = _opt("clusterName", since="4.9.4")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetTopicsByClusterRequestHeader(CustomHeader):
    """GET_TOPICS_BY_CLUSTER (224)."""

    cluster: str = field(metadata=_nn("cluster"))
