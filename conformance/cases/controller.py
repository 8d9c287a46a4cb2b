# Licensed under the Apache License, Version 2.0. See LICENSE.
"""CTL: the 5.x controller. Read requests about the target's own broker, and the registration and
SyncStateSet protocol played by fake brokers of a broker name of their own (the controller keeps
them in its log: a 5.0.0 controller has no request to forget a broker name)."""

from __future__ import annotations

import json
from typing import Any

from wire import RemotingCommand, RequestCode, ResponseCode

from ..context import Ctx
from ..model import Level
from ..registry import case

R = RequestCode
RC = ResponseCode
CRP = "ControllerRequestProcessor"
RIM = "ReplicasInfoManager"
NEEDS = ("controller",)
WITH_BROKER = ("controller", "broker")
FIVE = ("5.0",)


def _sync_state(resp: RemotingCommand) -> tuple[list[str], int]:
    doc = json.loads(resp.body or b"{}")
    return list(doc.get("syncStateSet") or []), int(doc.get("syncStateSetEpoch", -1))


@case(
    "CTL-META-001", Level.MUST,
    "CONTROLLER_GET_METADATA_INFO names the controller group's leader (id and address), the peers and the "
    "group",
    source="ControllerRequestProcessor (CONTROLLER_GET_METADATA_INFO); capture "
           "java-5.0.0/12-getControllerMetaData",
    needs=NEEDS,
    profiles=FIVE,
    codes=(R.CONTROLLER_GET_METADATA_INFO,),
)
async def metadata(ctx: Ctx) -> None:
    resp = await ctx.call("controller", R.CONTROLLER_GET_METADATA_INFO, what="CONTROLLER_GET_METADATA_INFO")
    ext = resp.ext_fields
    for key in ("controllerLeaderId", "controllerLeaderAddress", "isLeader", "peers", "group"):
        ctx.check(ext.get(key), f"the answer has no {key}: {dict(ext)}")
    if ext.get("isLeader") == "true":
        ctx.equal(ext["controllerLeaderAddress"], ctx.addr("controller"),
                  "the leader's address (it says it leads)")
    ctx.note(f"leader {ext.get('controllerLeaderId')} at {ext.get('controllerLeaderAddress')}, "
             f"peers {ext.get('peers')}")


@case(
    "CTL-REPLICA-001", Level.MUST,
    "CONTROLLER_GET_REPLICA_INFO of the target's broker name names its master (the target's broker), the "
    "master epoch, and a SyncStateSet that holds the master",
    source="ControllerRequestProcessor (CONTROLLER_GET_REPLICA_INFO); {RIM}.getReplicaInfo",
    needs=WITH_BROKER,
    profiles=FIVE,
    codes=(R.CONTROLLER_GET_REPLICA_INFO,),
)
async def replica_info(ctx: Ctx) -> None:
    name = ctx.target.broker_name
    ctx.check(name, "the target's broker name is not known")
    resp = await ctx.call("controller", R.CONTROLLER_GET_REPLICA_INFO, {"brokerName": name},
                          what="CONTROLLER_GET_REPLICA_INFO")
    ctx.equal(resp.ext_fields.get("masterAddress"), ctx.addr("broker"), "masterAddress")
    ctx.check(int(resp.ext_fields.get("masterEpoch", "0")) >= 1,
              f"masterEpoch {resp.ext_fields.get('masterEpoch')}")
    members, epoch = _sync_state(resp)
    ctx.check(ctx.addr("broker") in members, f"the SyncStateSet {members} lacks the master")
    ctx.check(epoch >= 1, f"syncStateSetEpoch {epoch}")


@case(
    "CTL-SYNC-001", Level.MUST,
    "CONTROLLER_GET_SYNC_STATE_DATA answers each asked broker name's master, epochs and in-sync members, as "
    "CONTROLLER_GET_REPLICA_INFO does",
    source="ControllerRequestProcessor (CONTROLLER_GET_SYNC_STATE_DATA); capture "
           "java-5.0.0/12-getSyncStateSet",
    needs=WITH_BROKER,
    profiles=FIVE,
    codes=(R.CONTROLLER_GET_SYNC_STATE_DATA,),
)
async def sync_state_data(ctx: Ctx) -> None:
    name = ctx.target.broker_name
    ctx.check(name, "the target's broker name is not known")
    assert name is not None
    resp = await ctx.call("controller", R.CONTROLLER_GET_SYNC_STATE_DATA, None, json.dumps([name]).encode(),
                          what="CONTROLLER_GET_SYNC_STATE_DATA")
    table = json.loads(resp.body or b"{}").get("inSyncStateTable", {}).get(name)
    ctx.check(table, f"inSyncStateTable has no {name}")
    info = await ctx.call("controller", R.CONTROLLER_GET_REPLICA_INFO, {"brokerName": name},
                          what="CONTROLLER_GET_REPLICA_INFO")
    members, epoch = _sync_state(info)
    ctx.equal(table.get("masterAddress"), info.ext_fields.get("masterAddress"), "masterAddress")
    ctx.equal(table.get("syncStateSetEpoch"), epoch, "syncStateSetEpoch")
    ctx.equal(sorted(m["address"] for m in table.get("inSyncMembers") or []), sorted(members),
              "inSyncMembers")


async def _register(ctx: Ctx, cluster: str, name: str, addr: str) -> RemotingCommand:
    ext = {"clusterName": cluster, "brokerName": name, "brokerAddress": addr, "epoch": -1, "maxOffset": 0,
           "electionTimeoutMillis": 1000}
    return await ctx.request("controller", R.CONTROLLER_REGISTER_BROKER, ext)


async def _heartbeat(ctx: Ctx, cluster: str, name: str, addr: str) -> None:
    await ctx.oneway("controller", R.BROKER_HEARTBEAT, {"clusterName": cluster, "brokerName": name,
                                                         "brokerAddr": addr, "epoch": 1, "maxOffset": 0,
                                                         "confirmOffset": 0})


async def _pair(ctx: Ctx) -> dict[str, Any]:
    """Two fake brokers of a new broker name registered in turn; the answers."""
    cluster, name = ctx.unique("cluster"), ctx.unique("broker")
    first, second = "127.0.0.1:20001", "127.0.0.1:20003"
    for addr in (first, second):
        await _heartbeat(ctx, cluster, name, addr)
    a = await _register(ctx, cluster, name, first)
    ctx.code(a, RC.SUCCESS, "the first CONTROLLER_REGISTER_BROKER of a new broker name")
    b = await _register(ctx, cluster, name, second)
    ctx.code(b, RC.SUCCESS, "the second CONTROLLER_REGISTER_BROKER")
    return {"cluster": cluster, "name": name, "first": first, "second": second, "a": a, "b": b}


@case(
    "CTL-REG-001", Level.MUST,
    "the first broker of a new broker name to register with the controller becomes its master (its own "
    "address, brokerId 0, masterEpoch 1); the next gets that master and a brokerId above 0",
    source="RouteInfoManager.registerBroker (canBeElectedAsMaster, ElectMasterEvent); capture "
           "java-5.0.0/11-controller-startup",
    needs=NEEDS,
    profiles=FIVE,
    codes=(R.CONTROLLER_REGISTER_BROKER,),
)
async def register(ctx: Ctx) -> None:
    p = await _pair(ctx)
    a, b = p["a"].ext_fields, p["b"].ext_fields
    ctx.equal((a.get("masterAddress"), a.get("brokerId"), a.get("masterEpoch")), (p["first"], "0", "1"),
              "masterAddress, brokerId and masterEpoch of the first")
    ctx.equal(b.get("masterAddress"), p["first"], "masterAddress of the second")
    ctx.check(int(b.get("brokerId", "0")) > 0, f"brokerId {b.get('brokerId')} of the second")


@case(
    "CTL-ALTER-001", Level.MUST,
    "CONTROLLER_ALTER_SYNC_STATE_SET from the master with its master epoch and the current set epoch takes "
    "the new set and answers the next set epoch; GET_REPLICA_INFO then shows it",
    source="RouteInfoManager.alterSyncStateSet; capture java-5.0.0/11-controller-startup (1001)",
    needs=NEEDS,
    profiles=FIVE,
    codes=(R.CONTROLLER_ALTER_SYNC_STATE_SET,),
)
async def alter(ctx: Ctx) -> None:
    p = await _pair(ctx)
    epoch = int(p["a"].ext_fields.get("syncStateSetEpoch", "1"))
    body = json.dumps({"syncStateSet": [p["first"], p["second"]], "syncStateSetEpoch": epoch}).encode()
    ext = {"brokerName": p["name"], "masterAddress": p["first"], "masterEpoch": 1}
    resp = await ctx.request("controller", R.CONTROLLER_ALTER_SYNC_STATE_SET, ext, body)
    ctx.code(resp, RC.SUCCESS, "CONTROLLER_ALTER_SYNC_STATE_SET")
    ctx.equal(resp.ext_fields.get("newSyncStateSetEpoch"), str(epoch + 1), "newSyncStateSetEpoch")
    info = await ctx.call("controller", R.CONTROLLER_GET_REPLICA_INFO, {"brokerName": p["name"]},
                          what="CONTROLLER_GET_REPLICA_INFO")
    members, new_epoch = _sync_state(info)
    ctx.equal((sorted(members), new_epoch), (sorted([p["first"], p["second"]]), epoch + 1),
              "the SyncStateSet after")


@case(
    "CTL-ALTER-002", Level.MUST,
    "CONTROLLER_ALTER_SYNC_STATE_SET with a stale master epoch, from a broker that is not the master, or "
    "with an unknown replica is refused and changes nothing",
    source="RouteInfoManager.alterSyncStateSet (CONTROLLER_FENCED_MASTER_EPOCH, CONTROLLER_INVALID_MASTER, "
           "CONTROLLER_INVALID_REPLICAS)",
    needs=NEEDS,
    profiles=FIVE,
    codes=(R.CONTROLLER_ALTER_SYNC_STATE_SET,),
)
async def alter_refused(ctx: Ctx) -> None:
    p = await _pair(ctx)
    epoch = int(p["a"].ext_fields.get("syncStateSetEpoch", "1"))
    good = [p["first"], p["second"]]
    tries = [
        ({"masterAddress": p["first"], "masterEpoch": 0}, good, "a stale master epoch"),
        ({"masterAddress": p["second"], "masterEpoch": 1}, good, "a broker that is not the master"),
        ({"masterAddress": p["first"], "masterEpoch": 1}, [p["first"], "127.0.0.1:20999"],
         "an unknown replica"),
    ]
    for ext, members, what in tries:
        body = json.dumps({"syncStateSet": members, "syncStateSetEpoch": epoch}).encode()
        resp = await ctx.request("controller", R.CONTROLLER_ALTER_SYNC_STATE_SET, {"brokerName": p["name"],
                                                                                   **ext},
                                 body)
        ctx.check(resp.code != RC.SUCCESS, f"an ALTER_SYNC_STATE_SET with {what} was taken")
        ctx.note(f"{what}: {resp.code_name}")
    info = await ctx.call("controller", R.CONTROLLER_GET_REPLICA_INFO, {"brokerName": p["name"]},
                          what="CONTROLLER_GET_REPLICA_INFO")
    ctx.equal(_sync_state(info), ([p["first"]], epoch), "the SyncStateSet after the refusals")


@case(
    "CTL-EPOCH-001", Level.MUST,
    "GET_BROKER_EPOCH_CACHE answers the broker's epoch entries (the last one open, endOffset Long.MAX_VALUE) "
    "and its max offset",
    source="AdminBrokerProcessor.getBrokerEpochCache; capture java-5.0.0/12-getBrokerEpoch",
    needs=("broker",),
    profiles=FIVE,
    codes=(R.GET_BROKER_EPOCH_CACHE,),
)
async def epoch_cache(ctx: Ctx) -> None:
    resp = await ctx.call("broker", R.GET_BROKER_EPOCH_CACHE, what="GET_BROKER_EPOCH_CACHE")
    doc = json.loads(resp.body or b"{}")
    entries = doc.get("epochList") or []
    ctx.check(entries, "the epoch list is empty")
    ctx.equal(entries[-1].get("endOffset"), 2**63 - 1, "endOffset of the last epoch")
    starts = [e["startOffset"] for e in entries]
    ctx.equal(starts, sorted(starts), "the epochs' start offsets in order")
    ctx.check(int(doc.get("maxOffset", -1)) >= starts[-1],
              f"maxOffset {doc.get('maxOffset')} before the last epoch")


@case(
    "CTL-UNKNOWN-001", Level.MUST,
    "the controller answers a request code it does not know with REQUEST_CODE_NOT_SUPPORTED",
    source="NettyRemotingAbstract.processRequestCommand (no processor for the code)",
    needs=NEEDS,
    profiles=FIVE,
)
async def unknown(ctx: Ctx) -> None:
    ctx.code(await ctx.request("controller", 9999), RC.REQUEST_CODE_NOT_SUPPORTED, "an unknown request code")

