# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The controller's state machine: broker groups, their masters and SyncStateSets (5.0.0).

Theory of operation
-------------------
As in Java 5.0.0's ``ReplicasInfoManager``, a request never changes the state directly: it is
checked against the state and answers a :class:`Result` (code, remark, response header, body) and
the :class:`Event` list that carries its effect. The caller makes the events durable (the event log)
and only then :meth:`ReplicasInfo.apply` them, so that replaying the log rebuilds the same state.

Per broker name, a :class:`BrokerGroup` holds what Java splits into ``BrokerInfo`` and
``SyncStateInfo``: every replica's address and id (the first replica gets id 1 in the table, each
new one the next id from 2 on; the master is answered id 0), the master's address ("" when there is
none) and epoch, and the SyncStateSet and its epoch. The 5.0.0 rules:

* REGISTER: a known replica keeps its id, a new one gets the next. With a live master the answer
  names it. Without one, the registering broker becomes master when it is in the SyncStateSet (or
  ``enableElectUncleanMaster``): both epochs go up by one, the set becomes just it. Otherwise
  CONTROLLER_REGISTER_BROKER_FAILED (2012 in 5.0.0). The first replica of a new broker name
  becomes its master at epoch 1 / SyncStateSet epoch 1.
* ALTER_SYNC_STATE_SET is fenced: the set must differ from the current one, come from the current
  master (CONTROLLER_INVALID_MASTER), at the current master epoch (CONTROLLER_FENCED_MASTER_EPOCH)
  and SyncStateSet epoch (CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH), name only known
  (CONTROLLER_INVALID_REPLICAS) and live (CONTROLLER_BROKER_NOT_ALIVE) replicas, and keep the
  master. The answer carries the new set at epoch + 1.
* ELECT_MASTER: from the live members of the SyncStateSet (then from every live replica with
  ``enableElectUncleanMaster``); the old master stays when it is still live and no one is
  designated; among the others the highest (epoch, max offset) a heartbeat reported wins. A new
  master gets master epoch + 1 and a SyncStateSet of itself; no candidate clears the master
  (CONTROLLER_MASTER_NOT_AVAILABLE).
* CLEAN_BROKER_DATA removes a whole group or some replicas, refused while they are live.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from wire import ResponseCode
from wire.bodies import BrokerMemberGroup, InSyncMember, InSyncStateData, InSyncStateSet, SyncStateSet
from wire.headers import (
    AlterSyncStateSetResponseHeader,
    CustomHeader,
    ElectMasterResponseHeader,
    GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerResponseHeader,
)
from wire.topic import MASTER_ID

__all__ = [
    "ALTER_SYNC_STATE_SET_FAILED",
    "ELECT_MASTER_FAILED",
    "REGISTER_BROKER_FAILED",
    "BrokerGroup",
    "Event",
    "LiveInfo",
    "ReplicasInfo",
    "Result",
]

#: 5.0.0's numbers for three codes 5.1.1 renumbered (``ResponseCode`` of 5.0.0: 2010-2012)
ALTER_SYNC_STATE_SET_FAILED = 2010
ELECT_MASTER_FAILED = 2011
REGISTER_BROKER_FAILED = 2012

Event = dict[str, Any]


@dataclass(frozen=True, slots=True)
class LiveInfo:
    """What the heartbeats say of a replica (``BrokerLiveInfo``): its epoch and max offset."""

    epoch: int = -1
    max_offset: int = -1


@dataclass
class Result:
    code: int = ResponseCode.SUCCESS
    remark: str | None = None
    header: CustomHeader | None = None
    body: bytes | None = None
    events: list[Event] = field(default_factory=list)

    def fail(self, code: int, remark: str) -> Result:
        self.code = code
        self.remark = remark
        return self


@dataclass
class BrokerGroup:
    """One broker name's replicas and their master (``BrokerInfo`` + ``SyncStateInfo``)."""

    cluster_name: str
    broker_name: str
    ids: dict[str, int] = field(default_factory=dict)
    #: ``brokerIdCount``: the last id handed out
    id_count: int = 1
    master: str = ""
    master_epoch: int = 1
    sync_state_set: set[str] = field(default_factory=set)
    sync_state_set_epoch: int = 1

    def broker_id(self, addr: str) -> int:
        """``getBrokerId``: -1 for an unknown address."""
        return self.ids.get(addr, -1)

    def member_group(self) -> BrokerMemberGroup:
        return BrokerMemberGroup(cluster=self.cluster_name, broker_name=self.broker_name,
                                 broker_addrs={i: a for a, i in self.ids.items()})

    def sync_state_body(self) -> bytes:
        return SyncStateSet(sync_state_set=tuple(sorted(self.sync_state_set)),
                            sync_state_set_epoch=self.sync_state_set_epoch).encode()

    def to_json(self) -> dict[str, Any]:
        return {"clusterName": self.cluster_name, "brokerName": self.broker_name, "ids": self.ids,
                "idCount": self.id_count, "master": self.master, "masterEpoch": self.master_epoch,
                "syncStateSet": sorted(self.sync_state_set), "syncStateSetEpoch": self.sync_state_set_epoch}


Alive = Callable[[str, str], bool]
Live = Callable[[str, str], LiveInfo | None]


class ReplicasInfo:
    """Every broker group the controller knows (see the module notes)."""

    def __init__(self, *, elect_unclean: bool = False) -> None:
        self.groups: dict[str, BrokerGroup] = {}
        self.elect_unclean = elect_unclean

    # ------------------------------------------------------------------ requests
    def register_broker(self, cluster: str, broker_name: str, addr: str) -> Result:
        hdr = RegisterBrokerToControllerResponseHeader(master_address="", master_epoch=0,
                                                       sync_state_set_epoch=0, broker_id=0)
        res = Result(header=hdr)
        g = self.groups.get(broker_name)
        if g is not None:
            if addr not in g.ids:
                broker_id = g.id_count + 1
                res.events.append({"type": "APPLY_BROKER_ID", "brokerName": broker_name, "address": addr,
                                   "brokerId": broker_id})
            else:
                broker_id = g.ids[addr]
            if g.master:
                res.header = RegisterBrokerToControllerResponseHeader(
                    master_address=g.master, master_epoch=g.master_epoch,
                    sync_state_set_epoch=g.sync_state_set_epoch, broker_id=broker_id)
                return res
            electable = addr in g.sync_state_set or self.elect_unclean
        else:
            electable = True
        if electable:
            res.header = RegisterBrokerToControllerResponseHeader(
                master_address=addr, master_epoch=g.master_epoch + 1 if g else 1,
                sync_state_set_epoch=g.sync_state_set_epoch + 1 if g else 1, broker_id=MASTER_ID)
            res.events.append({"type": "ELECT_MASTER", "brokerName": broker_name, "clusterName": cluster,
                               "newMaster": addr, "elected": True})
            return res
        res.header = RegisterBrokerToControllerResponseHeader(
            master_address="", master_epoch=g.master_epoch if g else 0,
            sync_state_set_epoch=g.sync_state_set_epoch if g else 0,
            broker_id=g.ids.get(addr, g.id_count + 1) if g else 0)
        return res.fail(REGISTER_BROKER_FAILED, "The broker has not master, and this new registered broker "
                        "can't not be elected as master")

    def get_replica_info(self, broker_name: str, addr: str | None) -> Result:
        g = self.groups.get(broker_name)
        if g is None:
            return Result(header=GetReplicaInfoResponseHeader()).fail(
                ResponseCode.CONTROLLER_BROKER_METADATA_NOT_EXIST, "Broker metadata is not existed")
        hdr = GetReplicaInfoResponseHeader(master_address=g.master, master_epoch=g.master_epoch,
                                           broker_id=g.broker_id(addr) if addr else -1)
        return Result(header=hdr, body=g.sync_state_body())

    def alter_sync_state_set(self, broker_name: str, master: str | None, master_epoch: int,
                             new_set: Iterable[str], set_epoch: int, alive: Alive) -> Result:
        res = Result(header=AlterSyncStateSetResponseHeader())
        g = self.groups.get(broker_name)
        if g is None:
            return res.fail(ALTER_SYNC_STATE_SET_FAILED, "Broker metadata is not existed")
        wanted = set(new_set)
        if wanted == g.sync_state_set:
            return res.fail(ALTER_SYNC_STATE_SET_FAILED, "The newSyncStateSet is equal with oldSyncStateSet, "
                            "no needed to update syncStateSet")
        if g.master != master:
            return res.fail(ResponseCode.CONTROLLER_INVALID_MASTER,
                            "Rejecting alter syncStateSet request because the current leader is:"
                            f"{{{g.master}}}, not {{{master}}}")
        if master_epoch != g.master_epoch:
            return res.fail(ResponseCode.CONTROLLER_FENCED_MASTER_EPOCH,
                            "Rejecting alter syncStateSet request because the current master epoch is:"
                            f"{{{g.master_epoch}}}, not {{{master_epoch}}}")
        if set_epoch != g.sync_state_set_epoch:
            return res.fail(ResponseCode.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH,
                            "Rejecting alter syncStateSet request because the current syncStateSet epoch is:"
                            f"{{{g.sync_state_set_epoch}}}, not {{{set_epoch}}}")
        for replica in sorted(wanted):
            if replica not in g.ids:
                return res.fail(ResponseCode.CONTROLLER_INVALID_REPLICAS,
                                f"Rejecting alter syncStateSet request because the replicas {{{replica}}} "
                                "don't exist")
            if not alive(g.cluster_name, replica):
                return res.fail(ResponseCode.CONTROLLER_BROKER_NOT_ALIVE,
                                f"Rejecting alter syncStateSet request because the replicas {{{replica}}} "
                                "don't alive")
        if g.master not in wanted:
            return res.fail(ALTER_SYNC_STATE_SET_FAILED,
                            "Rejecting alter syncStateSet request because the newSyncStateSet don't contains "
                            f"origin leader {{{g.master}}}")
        epoch = g.sync_state_set_epoch + 1
        res.header = AlterSyncStateSetResponseHeader(new_sync_state_set_epoch=epoch)
        res.body = SyncStateSet(sync_state_set=tuple(sorted(wanted)), sync_state_set_epoch=epoch).encode()
        res.events.append({"type": "ALTER_SYNC_STATE_SET", "brokerName": broker_name,
                           "syncStateSet": sorted(wanted)})
        return res

    def elect_master(self, broker_name: str, alive: Alive, live: Live, prefer: str | None = None) -> Result:
        res = Result(header=ElectMasterResponseHeader())
        g = self.groups.get(broker_name)
        if g is None:
            return res.fail(ELECT_MASTER_FAILED, "Broker metadata is not existed")
        new = self._elect(g, alive, live, prefer)
        if new and new == g.master:
            return res.fail(ELECT_MASTER_FAILED,
                            f"The old master {g.master} is still alive, not need to elect new master for "
                            f"broker {broker_name}")
        if new:
            group = g.member_group()
            res.header = ElectMasterResponseHeader(new_master_address=new, master_epoch=g.master_epoch + 1,
                                                   sync_state_set_epoch=g.sync_state_set_epoch,
                                                   broker_member_group=_member_group_text(group))
            res.body = group.encode()
            res.events.append({"type": "ELECT_MASTER", "brokerName": broker_name,
                               "clusterName": g.cluster_name, "newMaster": new, "elected": True})
            return res
        res.events.append({"type": "ELECT_MASTER", "brokerName": broker_name, "clusterName": g.cluster_name,
                           "newMaster": "", "elected": False})
        return res.fail(ResponseCode.CONTROLLER_MASTER_NOT_AVAILABLE, "Failed to elect a new broker master")

    def _elect(self, g: BrokerGroup, alive: Alive, live: Live, prefer: str | None) -> str | None:
        """``DefaultElectPolicy.elect``."""
        pools = [g.sync_state_set] + ([set(g.ids)] if self.elect_unclean else [])
        for pool in pools:
            candidates = {b for b in pool if alive(g.cluster_name, b)}
            if not candidates:
                continue
            if g.master in candidates and (not prefer or prefer == g.master):
                return g.master
            if prefer:
                if prefer in candidates:
                    return prefer
                continue
            infos = [(live(g.cluster_name, b) or LiveInfo(), b) for b in candidates]
            infos.sort(key=lambda t: (-t[0].epoch, -t[0].max_offset, t[1]))
            return infos[0][1]
        return None

    def get_sync_state_data(self, names: Iterable[str]) -> Result:
        table = {}
        for name in names:
            g = self.groups.get(name)
            if g is None:
                continue
            members = tuple(InSyncMember(address=a, broker_id=MASTER_ID if a == g.master else g.broker_id(a))
                            for a in sorted(g.sync_state_set))
            table[name] = InSyncStateSet(master_address=g.master, master_epoch=g.master_epoch,
                                         sync_state_set_epoch=g.sync_state_set_epoch, in_sync_members=members)
        return Result(body=InSyncStateData(in_sync_state_table=table).encode())

    def clean_broker_data(self, cluster: str, broker_name: str, addrs: str | None, clean_living: bool,
                          alive: Alive) -> Result:
        res = Result()
        g = self.groups.get(broker_name)
        wanted: list[str] | None = None
        if not clean_living:
            if not (addrs or "").strip() and g is not None and g.master:
                return res.fail(ResponseCode.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                                f"Broker {broker_name} is still alive, clean up failure")
            if (addrs or "").strip():
                wanted = sorted(set((addrs or "").split(";")))
                for a in wanted:
                    if alive(cluster, a):
                        return res.fail(ResponseCode.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                                        f"Broker [{broker_name},  {a}] is still alive, clean up failure")
        elif (addrs or "").strip():
            wanted = sorted(set((addrs or "").split(";")))
        if g is None:
            return res.fail(ResponseCode.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                            f"Broker {broker_name} is not existed,clean broker data failure.")
        res.events.append({"type": "CLEAN_BROKER_DATA", "brokerName": broker_name, "addresses": wanted})
        return res

    # ------------------------------------------------------------------ events
    def apply(self, event: Mapping[str, Any]) -> None:
        """Apply one event (``applyEvent``); unknown types are ignored, as Java does."""
        kind = event.get("type")
        name = str(event.get("brokerName", ""))
        g = self.groups.get(name)
        if kind == "APPLY_BROKER_ID":
            if g is not None and event["address"] not in g.ids:
                g.ids[event["address"]] = int(event["brokerId"])
                g.id_count = max(g.id_count, int(event["brokerId"]))
        elif kind == "ALTER_SYNC_STATE_SET":
            if g is not None:
                g.sync_state_set = set(event["syncStateSet"])
                g.sync_state_set_epoch += 1
        elif kind == "ELECT_MASTER":
            new = str(event.get("newMaster", ""))
            if g is not None:
                if event.get("elected"):
                    g.master = new
                    g.master_epoch += 1
                    g.sync_state_set = {new}
                    g.sync_state_set_epoch += 1
                else:
                    g.master = ""
                    g.master_epoch += 1
            else:
                g = BrokerGroup(str(event.get("clusterName", "")), name, ids={new: 1}, master=new,
                                sync_state_set={new})
                self.groups[name] = g
        elif kind == "CLEAN_BROKER_DATA":
            addrs = event.get("addresses")
            if not addrs:
                self.groups.pop(name, None)
            elif g is not None:
                for a in addrs:
                    g.ids.pop(a, None)
                    g.sync_state_set.discard(a)
                if not g.ids or not g.sync_state_set:
                    self.groups.pop(name, None)

    def to_json(self) -> dict[str, Any]:
        return {name: g.to_json() for name, g in sorted(self.groups.items())}


def _java_string_hash(s: str) -> int:
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def _member_group_text(group: BrokerMemberGroup) -> str:
    """What 5.0.0 puts in ElectMasterResponseHeader's ``brokerMemberGroup``: the field's
    ``toString()``, which BrokerMemberGroup does not override (``Object.toString``: the class name,
    ``@`` and the hex of its ``hashCode``, Guava's ``Objects.hashCode(cluster, brokerName,
    brokerAddrs)``)."""
    addrs_hash = 0
    for broker_id, addr in group.broker_addrs.items():
        long_hash = (broker_id ^ (broker_id >> 32)) & 0xFFFFFFFF
        addrs_hash = (addrs_hash + (long_hash ^ _java_string_hash(addr))) & 0xFFFFFFFF
    h = 1
    parts = (_java_string_hash(group.cluster or ""), _java_string_hash(group.broker_name or ""), addrs_hash)
    for part in parts:
        h = (31 * h + part) & 0xFFFFFFFF
    return f"org.apache.rocketmq.common.protocol.body.BrokerMemberGroup@{h:x}"
