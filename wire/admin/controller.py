# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Controller mode (5.x): a controller's metadata, SyncStateSets and elections, and brokers' epochs.

Mirrors mqadmin ``getControllerMetaData`` (CONTROLLER_GET_METADATA_INFO), ``getSyncStateSet``
(CONTROLLER_GET_SYNC_STATE_DATA), ``electMaster`` (CONTROLLER_ELECT_MASTER) and ``getBrokerEpoch``
(GET_BROKER_EPOCH_CACHE to every process of a broker name the name server lists). They work
against the Java 5.0.0 controller and brokers and the reference ones alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..bodies import BrokerMemberGroup, EpochEntryCache, InSyncStateData, InSyncStateSet
from ..codes import RequestCode, ResponseCode
from ..headers import ElectMasterRequestHeader, ElectMasterResponseHeader, GetMetaDataResponseHeader
from .client import AdminClient, gather_map
from .common import cluster_info
from .errors import AdminError

__all__ = ["BrokerEpochs", "ControllerMetadata", "ElectResult", "broker_epochs", "controller_metadata",
           "elect_master", "sync_state_sets"]


@dataclass(frozen=True, slots=True)
class ControllerMetadata:
    addr: str
    group: str | None
    leader_id: str | None
    leader_address: str | None
    is_leader: bool
    peers: str | None


@dataclass(frozen=True, slots=True)
class ElectResult:
    broker_name: str
    new_master: str | None
    master_epoch: int
    sync_state_set_epoch: int
    members: dict[int, str]


@dataclass(frozen=True, slots=True)
class BrokerEpochs:
    addr: str
    cache: EpochEntryCache | None
    error: str | None = None


async def controller_metadata(client: AdminClient, controller: str) -> ControllerMetadata:
    resp = await client.call(controller, RequestCode.CONTROLLER_GET_METADATA_INFO)
    h = GetMetaDataResponseHeader.from_ext(resp.ext_fields)
    return ControllerMetadata(controller, h.group, h.controller_leader_id, h.controller_leader_address,
                              bool(h.is_leader), h.peers)


async def _leader(client: AdminClient, controller: str) -> str:
    meta = await controller_metadata(client, controller)
    return meta.leader_address or controller


async def controller_config(client: AdminClient, controller: str) -> dict[str, str]:
    """The controller's configuration (GET_CONTROLLER_CONFIG 1010, ``key=value`` lines; mqadmin
    getControllerConfig), from the address given, as mqadmin asks each address of ``-a``."""
    from ..bodies import decode_properties

    resp = await client.call(controller, RequestCode.GET_CONTROLLER_CONFIG)
    return decode_properties(resp.body or b"")


async def sync_state_sets(client: AdminClient, controller: str,
                          broker_names: list[str]) -> dict[str, InSyncStateSet]:
    """Each broker name's master, epochs and in-sync members (5.0.0's InSyncStateData)."""
    leader = await _leader(client, controller)
    resp = await client.call(leader, RequestCode.CONTROLLER_GET_SYNC_STATE_DATA,
                             body=json.dumps(list(broker_names)).encode())
    data = InSyncStateData.decode(resp.body or b"{}")
    return dict(data.in_sync_state_table)


async def elect_master(client: AdminClient, controller: str, *, cluster: str, broker_name: str,
                       broker_addr: str | None = None) -> ElectResult:
    """A manual election (mqadmin electMaster): the named replica when it is live and in sync,
    else the controller's choice; fails when the live master stays."""
    leader = await _leader(client, controller)
    header = ElectMasterRequestHeader(cluster_name=cluster, broker_name=broker_name,
                                      broker_address=broker_addr)
    resp = await client.invoke(leader, RequestCode.CONTROLLER_ELECT_MASTER, header)
    if resp.code != ResponseCode.SUCCESS:
        raise AdminError(f"electMaster {broker_name} at {leader}: {resp.code_name}({resp.code}) "
                         f"{resp.remark or ''}")
    h = ElectMasterResponseHeader.from_ext(resp.ext_fields)
    group = BrokerMemberGroup.decode(resp.body) if resp.body else None
    return ElectResult(broker_name, h.new_master_address or h.master_address, h.master_epoch or 0,
                       h.sync_state_set_epoch or 0, dict(group.broker_addrs) if group is not None else {})


async def broker_epochs(client: AdminClient, broker_name: str,
                        cluster: str | None = None) -> list[BrokerEpochs]:
    """GET_BROKER_EPOCH_CACHE from every process of ``broker_name`` (mqadmin getBrokerEpoch)."""
    info = await cluster_info(client)
    data = info.broker_addr_table.get(broker_name)
    if data is None or (cluster is not None and data.cluster != cluster):
        raise AdminError(f"the name servers list no broker named {broker_name!r}")
    addrs = [a for _, a in sorted(data.broker_addrs.items())]

    async def one(addr: str) -> BrokerEpochs:
        resp = await client.invoke(addr, RequestCode.GET_BROKER_EPOCH_CACHE)
        if resp.code != ResponseCode.SUCCESS:
            return BrokerEpochs(addr, None, f"{resp.code_name}({resp.code}) {resp.remark or ''}".strip())
        return BrokerEpochs(addr, EpochEntryCache.decode(resp.body or b"{}"))

    out: list[BrokerEpochs] = []
    for addr, got in zip(addrs, await gather_map(addrs, one), strict=True):
        out.append(got if isinstance(got, BrokerEpochs) else BrokerEpochs(addr, None, str(got)))
    return out
