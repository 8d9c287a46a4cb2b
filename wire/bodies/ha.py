# Licensed under the Apache License, Version 2.0. See LICENSE.
# ruff: noqa: RUF009  (fields are declared with _base.prop, a dataclasses.field wrapper)
"""HA and controller bodies (5.x): HARuntimeInfo, sync state sets, epoch caches, replica info.

Sources: ``protocol/body/HARuntimeInfo.java`` (GET_BROKER_HA_STATUS), ``SyncStateSet.java``
(CONTROLLER_ALTER_SYNC_STATE_SET request and answer, CONTROLLER_GET_REPLICA_INFO answer),
``InSyncStateData.java`` (5.0.0's CONTROLLER_GET_SYNC_STATE_DATA answer), ``BrokerReplicasInfo.java``
(its 5.1+ replacement), ``EpochEntryCache.java`` and ``common/EpochEntry.java``
(GET_BROKER_EPOCH_CACHE), ``ElectMasterResponseBody.java`` (5.1.1+; 5.0.0 answers
CONTROLLER_ELECT_MASTER with a bare BrokerMemberGroup). 5.0.0 under ``common/…/protocol/body/``,
5.1+ under ``remoting/…/protocol/body/``; the controller side in ``controller/…/ReplicasInfoManager.java``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._base import BOOL, INT, LONG, STR, STR_KEY, JsonBody, Kind, Map, Obj, Seq, prop, type_error
from .route import BrokerMemberGroup

__all__ = [
    "BrokerReplicasInfo",
    "ElectMasterResponseBody",
    "EpochEntry",
    "EpochEntryCache",
    "HAClientRuntimeInfo",
    "HAConnectionRuntimeInfo",
    "HARuntimeInfo",
    "InSyncMember",
    "InSyncStateData",
    "InSyncStateSet",
    "ReplicaIdentity",
    "ReplicasInfo",
    "SyncStateSet",
]

#: Java's Long.MAX_VALUE: the end offset of the current (open) epoch
LONG_MAX = (1 << 63) - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class HAConnectionRuntimeInfo(JsonBody):
    """One slave connection as the master sees it."""

    addr: str | None = prop("addr", STR)
    slave_ack_offset: int = prop("slaveAckOffset", LONG, 0)
    diff: int = prop("diff", LONG, 0)
    in_sync: bool = prop("inSync", BOOL, False)
    transferred_byte_in_second: int = prop("transferredByteInSecond", LONG, 0)
    transfer_from_where: int = prop("transferFromWhere", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class HAClientRuntimeInfo(JsonBody):
    """The slave's HA client. ``isActivated`` has no getter and is never written."""

    master_addr: str | None = prop("masterAddr", STR)
    transferred_byte_in_second: int = prop("transferredByteInSecond", LONG, 0)
    max_offset: int = prop("maxOffset", LONG, 0)
    last_read_timestamp: int = prop("lastReadTimestamp", LONG, 0)
    last_write_timestamp: int = prop("lastWriteTimestamp", LONG, 0)
    master_flush_offset: int = prop("masterFlushOffset", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class HARuntimeInfo(JsonBody):
    """``HARuntimeInfo``, the GET_BROKER_HA_STATUS answer (5.x)."""

    master: bool = prop("master", BOOL, False)
    master_commit_log_max_offset: int = prop("masterCommitLogMaxOffset", LONG, 0)
    in_sync_slave_nums: int = prop("inSyncSlaveNums", INT, 0)
    ha_connection_info: tuple[HAConnectionRuntimeInfo, ...] = prop(
        "haConnectionInfo", Seq(Obj(HAConnectionRuntimeInfo)), ())
    ha_client_runtime_info: HAClientRuntimeInfo | None = prop(
        "haClientRuntimeInfo", Obj(HAClientRuntimeInfo), factory=HAClientRuntimeInfo)


class _AddressOrId(Kind):
    """A sync-state-set member: an address string in 5.0.0, a broker id (Long) from 5.1.1."""

    __slots__ = ()
    expected = "a broker address or id"

    def load(self, value: Any, path: str) -> Any:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return LONG.load(value, path)
        raise type_error(path, self.expected, value)


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncStateSet(JsonBody):
    """``SyncStateSet``: ``{"syncStateSet":[…],"syncStateSetEpoch":n}``.

    Members are broker addresses in 5.0.0 and broker ids from 5.1.1 on.
    """

    sync_state_set: tuple[str | int, ...] = prop("syncStateSet", Seq(_AddressOrId()), ())
    sync_state_set_epoch: int = prop("syncStateSetEpoch", INT, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class InSyncMember(JsonBody):
    """``InSyncStateData.InSyncMember`` (5.0.0)."""

    address: str | None = prop("address", STR)
    broker_id: int | None = prop("brokerId", LONG)


@dataclass(frozen=True, slots=True, kw_only=True)
class InSyncStateSet(JsonBody):
    """``InSyncStateData.InSyncStateSet`` (5.0.0): one broker name's master and in-sync members."""

    master_address: str | None = prop("masterAddress", STR)
    master_epoch: int = prop("masterEpoch", INT, 0)
    sync_state_set_epoch: int = prop("syncStateSetEpoch", INT, 0)
    in_sync_members: tuple[InSyncMember, ...] | None = prop("inSyncMembers", Seq(Obj(InSyncMember)))


@dataclass(frozen=True, slots=True, kw_only=True)
class InSyncStateData(JsonBody):
    """``InSyncStateData``, 5.0.0's CONTROLLER_GET_SYNC_STATE_DATA answer: ``{"inSyncStateTable":{…}}``."""

    in_sync_state_table: Mapping[str, InSyncStateSet] = prop(
        "inSyncStateTable", Map(STR_KEY, Obj(InSyncStateSet)), factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaIdentity(JsonBody):
    """``BrokerReplicasInfo.ReplicaIdentity``: ``address``+``brokerId`` in 5.1.0; from 5.1.1
    ``brokerName``, ``brokerId``, ``brokerAddress`` and ``alive``."""

    address: str | None = prop("address", STR)
    broker_name: str | None = prop("brokerName", STR)
    broker_id: int | None = prop("brokerId", LONG)
    broker_address: str | None = prop("brokerAddress", STR)
    alive: bool | None = prop("alive", BOOL)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicasInfo(JsonBody):
    """``BrokerReplicasInfo.ReplicasInfo``. ``masterBrokerId`` is 5.1.1+."""

    master_broker_id: int | None = prop("masterBrokerId", LONG)
    master_address: str | None = prop("masterAddress", STR)
    master_epoch: int = prop("masterEpoch", INT, 0)
    sync_state_set_epoch: int = prop("syncStateSetEpoch", INT, 0)
    in_sync_replicas: tuple[ReplicaIdentity, ...] | None = prop("inSyncReplicas", Seq(Obj(ReplicaIdentity)))
    not_in_sync_replicas: tuple[ReplicaIdentity, ...] | None = prop(
        "notInSyncReplicas", Seq(Obj(ReplicaIdentity)))


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerReplicasInfo(JsonBody):
    """``BrokerReplicasInfo``, the CONTROLLER_GET_SYNC_STATE_DATA answer from 5.1.0 on."""

    replicas_info_table: Mapping[str, ReplicasInfo] | None = prop(
        "replicasInfoTable", Map(STR_KEY, Obj(ReplicasInfo)))


@dataclass(frozen=True, slots=True, kw_only=True)
class EpochEntry(JsonBody):
    """``EpochEntry``: an epoch and the commit-log range it covers (end Long.MAX_VALUE while open)."""

    epoch: int = prop("epoch", INT, 0)
    start_offset: int = prop("startOffset", LONG, 0)
    end_offset: int = prop("endOffset", LONG, LONG_MAX)


@dataclass(frozen=True, slots=True, kw_only=True)
class EpochEntryCache(JsonBody):
    """``EpochEntryCache``, the GET_BROKER_EPOCH_CACHE answer (5.x)."""

    cluster_name: str | None = prop("clusterName", STR)
    broker_name: str | None = prop("brokerName", STR)
    broker_id: int = prop("brokerId", LONG, 0)
    epoch_list: tuple[EpochEntry, ...] | None = prop("epochList", Seq(Obj(EpochEntry)))
    max_offset: int = prop("maxOffset", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ElectMasterResponseBody(JsonBody):
    """``ElectMasterResponseBody`` (CONTROLLER_ELECT_MASTER answer from 5.1.1 on)."""

    broker_member_group: BrokerMemberGroup | None = prop("brokerMemberGroup", Obj(BrokerMemberGroup))
    sync_state_set: tuple[int, ...] | None = prop("syncStateSet", Seq(LONG))
