# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Headers of 5.x broker groups, AutoSwitch HA and the controller.

Part of :mod:`wire.headers` (import the classes from there); see its module notes for the
rules every class follows."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..headers import (
    _B,
    _I,
    _L,
    _PB,
    _PI,
    _PL,
    CustomHeader,
    _nn,
    _opt,
)

# ------------------------------------------------------------------------------ 5.x broker group / HA


@dataclass(frozen=True, slots=True, kw_only=True)
class GetBrokerMemberGroupRequestHeader(CustomHeader):
    """GET_BROKER_MEMBER_GROUP (901, 5.0.0+)."""

    cluster_name: str = field(metadata=_nn("clusterName", since="5.0.0"))
    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))


@dataclass(frozen=True, slots=True, kw_only=True)
class AddBrokerRequestHeader(CustomHeader):
    """ADD_BROKER (902, 5.0.0+)."""

    config_path: str | None = _opt("configPath", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveBrokerRequestHeader(CustomHeader):
    """REMOVE_BROKER (903, 5.0.0+)."""

    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))
    broker_cluster_name: str = field(metadata=_nn("brokerClusterName", since="5.0.0"))
    broker_id: int = field(metadata=_nn("brokerId", _L, since="5.0.0"))


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerHeartbeatRequestHeader(CustomHeader):
    """BROKER_HEARTBEAT (904, 5.0.0+), broker to controller (and name server), oneway.
    ``brokerId``, ``heartbeatTimeoutMills`` (sic) and ``electionPriority`` are 5.1.0+."""

    cluster_name: str = field(metadata=_nn("clusterName", since="5.0.0"))
    broker_addr: str = field(metadata=_nn("brokerAddr", since="5.0.0"))
    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))
    broker_id: int | None = _opt("brokerId", _L, since="5.1.0")
    epoch: int | None = _opt("epoch", _I, since="5.0.0")
    max_offset: int | None = _opt("maxOffset", _L, since="5.0.0")
    confirm_offset: int | None = _opt("confirmOffset", _L, since="5.0.0")
    heartbeat_timeout_mills: int | None = _opt("heartbeatTimeoutMills", _L, since="5.1.0")
    election_priority: int | None = _opt("electionPriority", _I, since="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyMinBrokerIdChangeRequestHeader(CustomHeader):
    """NOTIFY_MIN_BROKER_ID_CHANGE (905, 5.0.0+)."""

    min_broker_id: int | None = _opt("minBrokerId", _L, since="5.0.0")
    broker_name: str | None = _opt("brokerName", since="5.0.0")
    min_broker_addr: str | None = _opt("minBrokerAddr", since="5.0.0")
    offline_broker_addr: str | None = _opt("offlineBrokerAddr", since="5.0.0")
    ha_broker_addr: str | None = _opt("haBrokerAddr", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExchangeHAInfoRequestHeader(CustomHeader):
    """EXCHANGE_BROKER_HA_INFO (906, 5.0.0+)."""

    master_ha_address: str | None = _opt("masterHaAddress", since="5.0.0")
    master_flush_offset: int | None = _opt("masterFlushOffset", _L, since="5.0.0")
    master_address: str | None = _opt("masterAddress", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExchangeHAInfoResponseHeader(CustomHeader):
    """The answer to EXCHANGE_BROKER_HA_INFO (same fields as the request)."""

    master_ha_address: str | None = _opt("masterHaAddress", since="5.0.0")
    master_flush_offset: int | None = _opt("masterFlushOffset", _L, since="5.0.0")
    master_address: str | None = _opt("masterAddress", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetMasterFlushOffsetHeader(CustomHeader):
    """RESET_MASTER_FLUSH_OFFSET (908, 5.0.0+)."""

    master_flush_offset: int = field(metadata=_nn("masterFlushOffset", _L, since="5.0.0"))


# ---------------------------------------------------------------------------------------- 5.x controller
# The controller protocol changed twice: 5.1.1 replaced broker addresses by broker ids, 5.2.0 added
# invokeTime. 5.0.0's primitive int/long fields (always sent) became Integer/Long in 5.1.1.


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterSyncStateSetRequestHeader(CustomHeader):
    """CONTROLLER_ALTER_SYNC_STATE_SET (1001); the body is the new SyncStateSet.
    ``masterAddress`` is 5.0.0-5.1.0, ``masterBrokerId`` 5.1.1+, ``invokeTime`` 5.2.0+."""

    broker_name: str | None = _opt("brokerName", since="5.0.0")
    master_address: str | None = _opt("masterAddress", since="5.0.0", until="5.1.0")
    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    invoke_time: int | None = _opt("invokeTime", _PL, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterSyncStateSetResponseHeader(CustomHeader):
    """The answer to CONTROLLER_ALTER_SYNC_STATE_SET."""

    new_sync_state_set_epoch: int | None = _opt("newSyncStateSetEpoch", _PI, default=0, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ElectMasterRequestHeader(CustomHeader):
    """CONTROLLER_ELECT_MASTER (1002). 5.0.0-5.1.0 name the broker by ``brokerAddress``
    (@CFNotNull there); 5.1.1+ by ``brokerId`` (@CFNotNull) with ``designateElect``; 5.2.0+ adds
    ``invokeTime``."""

    cluster_name: str = field(metadata=_nn("clusterName", since="5.0.0"))
    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))
    broker_address: str | None = _opt("brokerAddress", since="5.0.0", until="5.1.0")
    broker_id: int | None = _opt("brokerId", _L, since="5.1.1")
    designate_elect: bool | None = _opt("designateElect", _B, since="5.1.1")
    invoke_time: int | None = _opt("invokeTime", _L, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ElectMasterResponseHeader(CustomHeader):
    """The answer to CONTROLLER_ELECT_MASTER (also sent with CONTROLLER_MASTER_STILL_EXIST).
    5.0.0-5.1.0: ``newMasterAddress`` and ``brokerMemberGroup`` (the ``toString()`` of a
    BrokerMemberGroup object); 5.1.1+: ``masterBrokerId`` and ``masterAddress``."""

    new_master_address: str | None = _opt("newMasterAddress", since="5.0.0", until="5.1.0")
    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")
    master_address: str | None = _opt("masterAddress", since="5.1.1")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    sync_state_set_epoch: int | None = _opt("syncStateSetEpoch", _PI, default=0, since="5.0.0")
    broker_member_group: str | None = _opt("brokerMemberGroup", since="5.0.0", until="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerToControllerRequestHeader(CustomHeader):
    """CONTROLLER_REGISTER_BROKER (1003).

    5.0.0: ``clusterName, brokerName, brokerAddress, epoch, maxOffset, heartbeatTimeoutMillis``;
    5.1.0 adds ``confirmOffset`` and ``electionPriority``; 5.1.1 keeps only the names,
    ``brokerId`` and ``brokerAddress``; 5.2.0 adds ``invokeTime``.
    """

    cluster_name: str | None = _opt("clusterName", since="5.0.0")
    broker_name: str | None = _opt("brokerName", since="5.0.0")
    broker_id: int | None = _opt("brokerId", _L, since="5.1.1")
    broker_address: str | None = _opt("brokerAddress", since="5.0.0")
    epoch: int | None = _opt("epoch", _I, since="5.0.0", until="5.1.0")
    max_offset: int | None = _opt("maxOffset", _L, since="5.0.0", until="5.1.0")
    confirm_offset: int | None = _opt("confirmOffset", _L, since="5.1.0", until="5.1.0")
    heartbeat_timeout_millis: int | None = _opt("heartbeatTimeoutMillis", _L, since="5.0.0", until="5.1.0")
    election_priority: int | None = _opt("electionPriority", _I, since="5.1.0", until="5.1.0")
    invoke_time: int | None = _opt("invokeTime", _PL, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerToControllerResponseHeader(CustomHeader):
    """The answer to CONTROLLER_REGISTER_BROKER. 5.0.0-5.1.0 carry the assigned ``brokerId``
    (a primitive); 5.1.1+ carry ``clusterName``, ``brokerName`` and ``masterBrokerId``."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")
    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")
    master_address: str | None = _opt("masterAddress", since="5.0.0")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    sync_state_set_epoch: int | None = _opt("syncStateSetEpoch", _PI, default=0, since="5.0.0")
    broker_id: int | None = _opt("brokerId", _PL, default=0, since="5.0.0", until="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetReplicaInfoRequestHeader(CustomHeader):
    """CONTROLLER_GET_REPLICA_INFO (1004). ``brokerAddress`` is 5.0.0-5.1.0."""

    broker_name: str | None = _opt("brokerName", since="5.0.0")
    broker_address: str | None = _opt("brokerAddress", since="5.0.0", until="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetReplicaInfoResponseHeader(CustomHeader):
    """The answer to CONTROLLER_GET_REPLICA_INFO; the body is the SyncStateSet. 5.0.0-5.1.0
    carry the asker's ``brokerId`` (a primitive initialised to -1); 5.1.1+ carry
    ``masterBrokerId``."""

    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")
    master_address: str | None = _opt("masterAddress", since="5.0.0")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    broker_id: int | None = _opt("brokerId", _PL, default=-1, since="5.0.0", until="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMetaDataResponseHeader(CustomHeader):
    """The answer to CONTROLLER_GET_METADATA_INFO (1005; no request header). ``isLeader`` is a
    primitive; ``peers`` is ``id:addr;`` repeated."""

    group: str | None = _opt("group", since="5.0.0")
    controller_leader_id: str | None = _opt("controllerLeaderId", since="5.0.0")
    controller_leader_address: str | None = _opt("controllerLeaderAddress", since="5.0.0")
    is_leader: bool | None = _opt("isLeader", _PB, default=False, since="5.0.0")
    peers: str | None = _opt("peers", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetSyncStateDataRequest(CustomHeader):
    """CONTROLLER_GET_SYNC_STATE_DATA (1006). Clients and mqadmin send no header (the body lists
    the broker names); the 5.2.0+ JRaft controller sends this class (``controller/.../task``)
    to itself, carrying ``invokeTime``."""

    invoke_time: int | None = _opt("invokeTime", _L, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyBrokerRoleChangedRequestHeader(CustomHeader):
    """NOTIFY_BROKER_ROLE_CHANGED (1008), controller to broker, oneway. 5.0.0-5.1.0 send the
    receiver's ``brokerId`` (primitive); 5.1.1+ send ``masterBrokerId``."""

    master_address: str | None = _opt("masterAddress", since="5.0.0")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    sync_state_set_epoch: int | None = _opt("syncStateSetEpoch", _PI, default=0, since="5.0.0")
    broker_id: int | None = _opt("brokerId", _PL, default=0, since="5.0.0", until="5.1.0")
    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")


@dataclass(frozen=True, slots=True, kw_only=True)
class CleanControllerBrokerDataRequestHeader(CustomHeader):
    """CLEAN_BROKER_DATA (1011). ``brokerAddress`` is 5.0.0-5.1.0,
    ``brokerControllerIdsToClean`` 5.1.1+, ``invokeTime`` 5.2.0+."""

    cluster_name: str | None = _opt("clusterName", since="5.0.0")
    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))
    broker_address: str | None = _opt("brokerAddress", since="5.0.0", until="5.1.0")
    broker_controller_ids_to_clean: str | None = _opt("brokerControllerIdsToClean", since="5.1.1")
    is_clean_living_broker: bool | None = _opt("isCleanLivingBroker", _PB, default=False, since="5.0.0")
    invoke_time: int | None = _opt("invokeTime", _PL, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetNextBrokerIdRequestHeader(CustomHeader):
    """CONTROLLER_GET_NEXT_BROKER_ID (1012, 5.1.1+)."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetNextBrokerIdResponseHeader(CustomHeader):
    """The answer to CONTROLLER_GET_NEXT_BROKER_ID."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")
    next_broker_id: int | None = _opt("nextBrokerId", _L, since="5.1.1")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyBrokerIdRequestHeader(CustomHeader):
    """CONTROLLER_APPLY_BROKER_ID (1013, 5.1.1+)."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")
    applied_broker_id: int | None = _opt("appliedBrokerId", _L, since="5.1.1")
    register_check_code: str | None = _opt("registerCheckCode", since="5.1.1")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyBrokerIdResponseHeader(CustomHeader):
    """The answer to CONTROLLER_APPLY_BROKER_ID."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")
