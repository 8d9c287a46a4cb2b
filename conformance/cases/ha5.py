# Licensed under the Apache License, Version 2.0. See LICENSE.
"""HA5: 5.x AutoSwitch replication (controller mode), with the suite acting as a slave on the
master's HA port: HANDSHAKE with its address, the master's epoch entries, then TRANSFER acks and
the master's TRANSFER frames with the epoch and confirm offset. Frames are read and written with
:mod:`wire.ha` (the layouts the broker uses, through :class:`._ha.FakeSlave`); the suite's slave
never joins the SyncStateSet (the controller does not know it), so the cluster it visits does not
wait for it."""

from __future__ import annotations

import asyncio
import json

from wire import RequestCode, WireError
from wire.ha import (
    EpochTransfer,
    HandshakeReply,
    HAProtocol,
    SlaveHandshake,
    TransferAck,
    autoswitch_protocol_for_version,
)
from wire.message import decode_messages

from ..context import Ctx
from ..model import Level
from ..registry import case
from ._ha import FakeSlave
from ._kit import create_topic, send_ok

R = RequestCode
NEEDS = ("broker", "ha")
FIVE = ("5.0",)
CONN = "AutoSwitchHAConnection"


async def _connect(ctx: Ctx) -> FakeSlave:
    """The suite's slave on the master's HA port, in the AutoSwitch variant of the target's version."""
    version = ctx.target.server_version or 413
    protocol = autoswitch_protocol_for_version(version) or HAProtocol.AUTOSWITCH_5_0
    return await FakeSlave.connect(ctx, protocol)


async def _handshake(slave: FakeSlave, address: str = "127.0.0.1:1") -> HandshakeReply:
    slave.send(SlaveHandshake(address=address))
    msg = await slave.next(slave.ctx.request_timeout)
    slave.ctx.check(isinstance(msg, HandshakeReply),
                    f"the master answered the HANDSHAKE with {type(msg).__name__ if msg else 'nothing'}")
    assert isinstance(msg, HandshakeReply)
    return msg


async def _epochs(ctx: Ctx) -> tuple[list[tuple[int, int]], int]:
    """The master's epoch entries and max offset by GET_BROKER_EPOCH_CACHE."""
    resp = await ctx.call("broker", R.GET_BROKER_EPOCH_CACHE, what="GET_BROKER_EPOCH_CACHE")
    doc = json.loads(resp.body or b"{}")
    return [(int(e["epoch"]), int(e["startOffset"])) for e in doc.get("epochList",
                                                                      [])], int(doc.get("maxOffset", -1))


@case(
    "HA5-HS-001", Level.MUST,
    "the master answers a slave's HANDSHAKE with its max offset, its last epoch and its epoch entries, as "
    "its epoch cache (GET_BROKER_EPOCH_CACHE) has them",
    source="AutoSwitchHAConnection.ReadSocketService (HANDSHAKE); AutoSwitchHAClient; capture "
           "java-5.0.0/11-controller-startup",
    needs=NEEDS,
    profiles=FIVE,
    codes=(R.GET_BROKER_EPOCH_CACHE,),
)
async def handshake(ctx: Ctx) -> None:
    slave = await _connect(ctx)
    reply = await _handshake(slave)
    entries, max_offset = await _epochs(ctx)
    ctx.equal([(e.epoch, e.start_offset) for e in reply.entries], entries,
              "the epoch entries of the HANDSHAKE reply")
    ctx.check(entries, "the epoch cache is empty")
    ctx.equal(reply.last_epoch, entries[-1][0], "lastEpoch of the HANDSHAKE reply")
    ctx.check(reply.max_phy_offset <= max_offset,
              f"the reply's max offset {reply.max_phy_offset} is past the epoch cache's {max_offset}")
    ctx.note(f"maxPhyOffset {reply.max_phy_offset}, {len(entries)} epoch(s)")


async def _transfers(ctx: Ctx, slave: FakeSlave, start: int, *, until: int,
                     timeout: float) -> list[EpochTransfer]:
    """TRANSFER frames from ``start`` until the data reaches ``until``."""
    got: list[EpochTransfer] = []
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    reached = start
    while reached < until:
        msg = await slave.next(max(0.0, end - loop.time()))
        if msg is None:
            ctx.fail(f"the transfers stopped at {reached} before {until} ({len(got)} frames)")
        if isinstance(msg, EpochTransfer):
            got.append(msg)
            if msg.data:
                ctx.equal(msg.phy_offset, reached, "the offset of the next TRANSFER frame")
                reached += len(msg.data)
                slave.send(TransferAck(max_offset=reached))
    return got


@case(
    "HA5-TR-001", Level.MUST,
    "after the slave's first TRANSFER ack the master sends its CommitLog in TRANSFER frames from that "
    "offset, with the epoch that covers it, and a message sent meanwhile arrives in them",
    source="AutoSwitchHAConnection.WriteSocketService; AutoSwitchHAClient.doTransfer; capture "
           "java-5.0.0/13-failover",
    needs=NEEDS,
    profiles=FIVE,
    timeout=60.0,
)
async def transfer(ctx: Ctx) -> None:
    """Handshakes, acks the master's max offset (so that only new data comes), sends a message
    and checks the frames that carry it decode as that stored message."""
    slave = await _connect(ctx)
    reply = await _handshake(slave)
    start = reply.max_phy_offset
    slave.send(TransferAck(max_offset=start))
    topic = await create_topic(ctx, routed=False)
    key = ctx.unique("key")
    await send_ok(ctx, topic, b"replicate me", properties={"KEYS": key})
    _entries, max_offset = await _epochs(ctx)
    frames = await _transfers(ctx, slave, start, until=max_offset, timeout=30)
    data = b"".join(f.data for f in frames)
    try:
        msgs = decode_messages(data)
    except WireError as err:
        ctx.fail(f"the transferred bytes are not whole stored messages: {err}")
        raise
    ctx.check(any(m.topic == topic and m.properties.get("KEYS") == key for m in msgs),
              f"the message sent to {topic} is not among the {len(msgs)} transferred")
    epochs = {f.epoch for f in frames if f.data}
    ctx.equal(epochs, {reply.last_epoch}, "the epoch of the TRANSFER frames")


@case(
    "HA5-TR-002", Level.MUST,
    "an idle master sends TRANSFER frames without data (heartbeats) at least every haSendHeartbeatInterval "
    "(5 s)",
    source="AutoSwitchHAConnection.WriteSocketService (haSendHeartbeatInterval)",
    needs=NEEDS,
    profiles=FIVE,
    timeout=40.0,
)
async def heartbeat(ctx: Ctx) -> None:
    slave = await _connect(ctx)
    reply = await _handshake(slave)
    slave.send(TransferAck(max_offset=reply.max_phy_offset))
    loop = asyncio.get_running_loop()
    beats: list[float] = []
    t0 = loop.time()
    while len(beats) < 2 and loop.time() - t0 < 20:
        msg = await slave.next(8.0)
        ctx.check(msg is not None, "the master sent nothing for 8 s")
        if isinstance(msg, EpochTransfer) and not msg.data:
            beats.append(loop.time())
    ctx.check(len(beats) >= 2, "fewer than two heartbeats in 20 s")
    ctx.note(f"heartbeats {beats[1] - beats[0]:.1f} s apart")


@case(
    "HA5-TR-003", Level.SHOULD,
    "a TRANSFER ack beyond what the master sent is not trusted (the connection is closed, or the master's HA "
    "status does not count it)",
    source="apache/rocketmq#3015 (an ack is taken as is); AutoSwitchHAConnection.ReadSocketService",
    needs=NEEDS,
    profiles=FIVE,
    codes=(R.GET_BROKER_HA_STATUS,),
    timeout=30.0,
)
async def fake_ack(ctx: Ctx) -> None:
    from wire.bodies import HARuntimeInfo

    slave = await _connect(ctx)
    reply = await _handshake(slave)
    lie = reply.max_phy_offset + 10 * 1024 * 1024
    slave.send(TransferAck(max_offset=lie))
    await asyncio.sleep(1.0)
    if await slave.peer.wait_closed(1.0):
        ctx.note("the master closed the connection")
        return
    resp = await ctx.call("broker", R.GET_BROKER_HA_STATUS, what="GET_BROKER_HA_STATUS")
    info = HARuntimeInfo.decode(resp.body or b"")
    acks = [c.slave_ack_offset for c in info.ha_connection_info]
    ctx.check(lie not in acks,
              f"the master counts an ack of {lie}, {lie - reply.max_phy_offset} bytes beyond what it holds")
