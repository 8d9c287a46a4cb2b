# Licensed under the Apache License, Version 2.0. See LICENSE.
"""HA4: 4.x replication (and 5.x outside controller mode, whose DefaultHA keeps the 4.x frames),
with the suite acting as a slave on the master's HA port: 8-byte offset reports, 12-byte transfer
headers and CommitLog bytes, heartbeats; and a SYNC_MASTER whose only slave is the suite, which
must wait for the suite's acks (SEND_OK), give up on a silent slave (FLUSH_SLAVE_TIMEOUT) and refuse
at once when it has no slave (SLAVE_NOT_AVAILABLE). Frames are read and written with :mod:`wire.ha`.

The SYNC cases need a SYNC_MASTER that has no slave of its own: a slave that acks would answer
for the suite (the master waits for the largest ack of any slave), so against a master with a
slave they do not run. Grade such a master with ``--only 'HA4-*'``: any other case that sends to
it gets SLAVE_NOT_AVAILABLE while no slave is connected, as Java answers. They are 4.9 cases: a
5.x SYNC_MASTER outside controller mode waits for no slave unless ``inSyncReplicas`` > 1."""

from __future__ import annotations

import asyncio

from wire import RemotingCommand, RequestCode, ResponseCode, WireError
from wire.bodies import KVTable
from wire.ha import HAProtocol, SlaveReport, Transfer, v4_transfer_start_offset
from wire.ha.epoch import DEFAULT_COMMITLOG_FILE_SIZE
from wire.message import decode_messages, decode_offset_msg_id

from ..context import Ctx
from ..model import Level
from ..registry import case
from ._ha import FakeSlave
from ._kit import create_topic, send, send_ok

R = RequestCode
NEEDS = ("broker", "ha")
#: a 5.x SYNC_MASTER outside controller mode waits for no slave unless inSyncReplicas > 1
#: (CommitLog.handleHA 5.0.0), and never answers SLAVE_NOT_AVAILABLE: the SYNC cases are 4.9's
FOUR = ("4.9",)
V4 = HAProtocol.V4
#: 4.9.8; DefaultHAConnection in 5.x keeps the same frames and rules, unless said otherwise
CONN = "HAConnection"


def _four(ctx: Ctx) -> None:
    """Not run against a broker in controller mode (its HA port speaks AutoSwitch: HA5-*)."""
    if ctx.target.broker_config.get("enableControllerMode") == "true":
        ctx.not_applicable("no 4.x HA port: the broker runs in controller mode (the HA5 cases grade it)")


def _sync_master(ctx: Ctx) -> None:
    """Not run unless the broker is a SYNC_MASTER with no slave of its own."""
    _four(ctx)
    role = ctx.target.broker_config.get("brokerRole")
    if role != "SYNC_MASTER":
        ctx.not_applicable(f"no SYNC_MASTER to grade (the broker's brokerRole is {role or 'unknown'})")
    if ctx.target.slave:
        ctx.not_applicable(f"no SYNC_MASTER of the suite's own: the master has a slave ({ctx.target.slave}) "
                           "whose acks would answer for the suite's")


async def _max_offset(ctx: Ctx) -> int:
    """The master's CommitLog max offset (commitLogMaxOffset of GET_BROKER_RUNTIME_INFO)."""
    resp = await ctx.call("broker", R.GET_BROKER_RUNTIME_INFO, what="GET_BROKER_RUNTIME_INFO")
    try:
        value = KVTable.decode(resp.body or b"").table.get("commitLogMaxOffset", "")
    except WireError as err:
        ctx.fail(f"GET_BROKER_RUNTIME_INFO: the body is no KVTable: {err}")
        raise
    ctx.check(value.lstrip("-").isdigit(), f"GET_BROKER_RUNTIME_INFO has no commitLogMaxOffset ({value!r})")
    return int(value)


def _stored_at(ctx: Ctx, resp: RemotingCommand) -> int:
    """The CommitLog offset a send answer's msgId names."""
    try:
        return decode_offset_msg_id(resp.ext_fields.get("msgId", "")).offset
    except WireError as err:
        ctx.fail(f"the send answer's msgId does not decode to a CommitLog offset: {err}")
        raise


async def _read_to(ctx: Ctx, slave: FakeSlave, start: int, until: int, *, timeout: float,
                   ack: bool = True) -> bytes:
    """The CommitLog bytes of the master's transfers from ``start`` until ``until``, each header's
    offset checked to continue the last (heartbeats included); acked as a slave acks."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    data = bytearray()
    reached = start
    frames = 0
    while reached < until:
        msg = await slave.next(max(0.0, end - loop.time()))
        if msg is None:
            ctx.fail(f"the transfers stopped at {reached}, before {until} ({frames} frames)")
        ctx.check(isinstance(msg, Transfer), f"the master sent a {type(msg).__name__}")
        assert isinstance(msg, Transfer)
        ctx.equal(msg.phy_offset, reached, f"the offset in the header of transfer {frames}")
        frames += 1
        if msg.data:
            data += msg.data
            reached += len(msg.data)
            if ack:
                slave.send(SlaveReport(max_offset=reached))
    ctx.note(f"{reached - start} bytes in {frames} frames from {start}")
    return bytes(data[:until - start])


@case(
    "HA4-TR-001", Level.MUST,
    "a slave that reports an offset gets the CommitLog from exactly there: 12-byte headers (offset, "
    "body size) that continue one another, bodies of whole stored messages, the first the one stored at "
    "that offset, and a message sent later arrives too",
    source=f"{CONN}.WriteSocketService (nextTransferFromWhere = slaveRequestOffset); "
           "HAClient.dispatchReadRequest; capture java-4.9.8/08-ha-catchup-from-zero",
    needs=NEEDS,
    codes=(R.SEND_MESSAGE_V2, R.GET_BROKER_RUNTIME_INFO),
    timeout=40.0,
)
async def transfer(ctx: Ctx) -> None:
    """Sends a message, reports its CommitLog offset (from its msgId) as the slave's end, sends a
    second message, and reads the transfers up to the master's max offset."""
    _four(ctx)
    topic = await create_topic(ctx, routed=False)
    first, second = ctx.unique("key"), ctx.unique("key")
    start = _stored_at(ctx, await send_ok(ctx, topic, b"replicate me", properties={"KEYS": first}))
    slave = await FakeSlave.connect(ctx, V4)
    slave.send(SlaveReport(max_offset=start))
    await send_ok(ctx, topic, b"and me", properties={"KEYS": second})
    until = await _max_offset(ctx)
    data = await _read_to(ctx, slave, start, until, timeout=30)
    try:
        msgs = decode_messages(data)
    except WireError as err:
        ctx.fail(f"the bytes from {start} to {until} are not whole stored messages: {err}")
        raise
    ctx.check(msgs and msgs[0].topic == topic and msgs[0].properties.get("KEYS") == first,
              f"the first message transferred is not the one stored at {start}")
    ctx.check(any(m.topic == topic and m.properties.get("KEYS") == second for m in msgs),
              f"the message sent after the report is not among the {len(msgs)} transferred")


@case(
    "HA4-TR-002", Level.MUST,
    "a slave that reports 0 (an empty slave) gets the CommitLog from the start of the master's last "
    "CommitLog file (maxOffset - maxOffset % mappedFileSizeCommitLog)",
    source=f"{CONN}.WriteSocketService (slaveRequestOffset == 0); capture java-4.9.8/08-ha-catchup-from-zero",
    needs=NEEDS,
    codes=(R.GET_BROKER_RUNTIME_INFO,),
    timeout=20.0,
)
async def from_zero(ctx: Ctx) -> None:
    _four(ctx)
    size_text = ctx.target.broker_config.get("mappedFileSizeCommitLog", "")
    file_size = int(size_text) if size_text.isdigit() and int(size_text) > 0 else DEFAULT_COMMITLOG_FILE_SIZE
    before = await _max_offset(ctx)
    slave = await FakeSlave.connect(ctx, V4)
    slave.send(SlaveReport(max_offset=0))
    msg = await slave.next(10.0)
    got = type(msg).__name__ if msg else "nothing"
    ctx.check(isinstance(msg, Transfer), f"the master sent {got} in 10 s after a report of 0")
    assert isinstance(msg, Transfer)
    after = await _max_offset(ctx)
    # the master picks its start when the report comes: between the two readings of its max offset
    allowed = {v4_transfer_start_offset(0, m, mapped_file_size=file_size) for m in (before, after)}
    ctx.check(msg.phy_offset in allowed,
              f"the first transfer starts at {msg.phy_offset}, not at the start of the last CommitLog file "
              f"({' or '.join(map(str, sorted(allowed)))}; max offset {before}, files of {file_size} bytes)")
    ctx.note(f"first transfer at {msg.phy_offset} with {len(msg.data)} bytes; max offset {before}")


@case(
    "HA4-TR-003", Level.MUST,
    "a master with nothing to send writes a heartbeat (a header with body size 0 at the slave's offset) "
    "when it has written nothing for haSendHeartbeatInterval (5 s)",
    source=f"{CONN}.WriteSocketService (haSendHeartbeatInterval)",
    needs=NEEDS,
    codes=(R.GET_BROKER_RUNTIME_INFO,),
    timeout=40.0,
)
async def heartbeat(ctx: Ctx) -> None:
    """Reports the master's max offset and listens for 20 s at most, reporting every 5 s as a slave
    does (so the master's housekeeping keeps the connection); data written meanwhile by others is
    read and acked."""
    _four(ctx)
    reached = await _max_offset(ctx)
    slave = await FakeSlave.connect(ctx, V4)
    slave.send(SlaveReport(max_offset=reached))
    loop = asyncio.get_running_loop()
    t0 = last_report = loop.time()
    beats: list[float] = []
    while len(beats) < 2 and loop.time() - t0 < 20:
        msg = await slave.next(8.0)
        ctx.check(msg is not None, "the master wrote nothing for 8 s")
        ctx.check(isinstance(msg, Transfer), f"the master sent a {type(msg).__name__}")
        assert isinstance(msg, Transfer)
        ctx.equal(msg.phy_offset, reached, "the offset of the next header")
        if msg.data:
            reached += len(msg.data)
            slave.send(SlaveReport(max_offset=reached))
            last_report = loop.time()
        else:
            beats.append(loop.time())
        if loop.time() - last_report > 5:
            slave.send(SlaveReport(max_offset=reached))
            last_report = loop.time()
    ctx.check(len(beats) >= 2, f"{len(beats)} heartbeat(s) in 20 s")
    ctx.note(f"heartbeats {beats[1] - beats[0]:.1f} s apart")


@case(
    "HA4-ACK-001", Level.SHOULD,
    "a report beyond the master's max offset (an ack of data never sent) is not trusted: the master "
    "closes the connection (as 4.9.x does), or its HA status does not count it",
    source=f"apache/rocketmq#3015; {CONN}.ReadSocketService (4.9.x: a report past getMaxPhyOffset closes the "
           "connection; 5.x DefaultHAConnection dropped the check)",
    needs=NEEDS,
    codes=(R.GET_BROKER_RUNTIME_INFO, R.GET_BROKER_HA_STATUS),
    timeout=20.0,
)
async def fake_ack(ctx: Ctx) -> None:
    from wire.bodies import HARuntimeInfo

    _four(ctx)
    honest = await _max_offset(ctx)
    slave = await FakeSlave.connect(ctx, V4)
    slave.send(SlaveReport(max_offset=honest))
    # the first report is the slave's request, never checked; the lie must come in a read of its own
    await asyncio.sleep(1.0)
    lie = honest + 16 * 1024 * 1024
    slave.send(SlaveReport(max_offset=lie))
    if await slave.peer.wait_closed(5.0):
        ctx.note("the master closed the connection")
        return
    resp = await ctx.request("broker", R.GET_BROKER_HA_STATUS)
    ctx.check(resp.code == ResponseCode.SUCCESS,
              f"the master kept the connection open after an ack {lie - honest} bytes past its end, and has "
              f"no HA status to show it did not count it (GET_BROKER_HA_STATUS: {resp.code})")
    info = HARuntimeInfo.decode(resp.body or b"")
    acks = [c.slave_ack_offset for c in info.ha_connection_info]
    ctx.check(lie not in acks,
              f"the master counts an ack of {lie}, {lie - honest} bytes beyond what it holds")


async def _slave_in_place(ctx: Ctx, topic: str) -> tuple[FakeSlave, int]:
    """The suite's slave, known to the master: a message is stored first (a SYNC_MASTER stores it
    whatever it answers), the slave reports that message's offset and waits until the master sends
    it, which the master does only once it has taken the connection (the slave is then counted: a
    send that came before could find no slave). Returns the slave and how far the master's first
    transfer took it, not acked yet."""
    resp = await send(ctx, topic, b"before the slave", timeout=15.0)
    stored = (ResponseCode.SUCCESS, ResponseCode.SLAVE_NOT_AVAILABLE, ResponseCode.FLUSH_SLAVE_TIMEOUT)
    ctx.check(resp.code in stored, f"a send to the SYNC_MASTER was answered {resp.code} {resp.remark or ''}")
    at = _stored_at(ctx, resp)
    slave = await FakeSlave.connect(ctx, V4)
    slave.send(SlaveReport(max_offset=at))
    msg = await slave.next(10.0)
    got = type(msg).__name__ if msg else "nothing"
    ctx.check(isinstance(msg, Transfer) and msg.data,
              f"the master sent {got} in 10 s to a slave that reported the offset of a stored message")
    assert isinstance(msg, Transfer)
    ctx.equal(msg.phy_offset, at, "the offset of the first transfer")
    return slave, at + len(msg.data)


@case(
    "HA4-SYNC-001", Level.MUST,
    "a SYNC_MASTER whose only slave acks what it receives answers a send SEND_OK, and not before the "
    "slave acked the message",
    source="CommitLog.submitReplicaRequest 4.9.8 (GroupCommitRequest until push2SlaveMaxOffset); "
           "HAService.GroupTransferService; capture java-4.9.8/09-sync-master-slave-up",
    needs=NEEDS,
    profiles=FOUR,
    codes=(R.SEND_MESSAGE_V2,),
    timeout=30.0,
)
async def sync_acked(ctx: Ctx) -> None:
    _sync_master(ctx)
    topic = await create_topic(ctx, routed=False)
    slave, acked = await _slave_in_place(ctx, topic)
    slave.send(SlaveReport(max_offset=acked))

    async def replicate() -> None:
        nonlocal acked
        while True:
            msg = await slave.next(30.0)
            if isinstance(msg, Transfer) and msg.data:
                ctx.equal(msg.phy_offset, acked, "the offset of the next transfer")
                acked += len(msg.data)
                slave.send(SlaveReport(max_offset=acked))

    task = asyncio.ensure_future(replicate())
    try:
        resp = await send(ctx, topic, b"wait for my slave", timeout=15.0)
        acked_then = acked
    finally:
        task.cancel()
        (ended,) = await asyncio.gather(task, return_exceptions=True)
    if isinstance(ended, Exception):
        raise ended  # a check of the replication failed (or the master closed the connection)
    ctx.code(resp, ResponseCode.SUCCESS, "a send to a SYNC_MASTER whose slave acks")
    stored = _stored_at(ctx, resp)
    ctx.check(acked_then > stored, f"SEND_OK came before the slave acked the message (acked {acked_then}, "
                                   f"the message at {stored})")
    ctx.note(f"SEND_OK with the slave's ack at {acked_then}, the message at {stored}")


@case(
    "HA4-SYNC-002", Level.MUST,
    "a SYNC_MASTER whose only slave stops acking answers a send FLUSH_SLAVE_TIMEOUT (12) once slaveTimeout "
    "(3 s) has passed, the message stored (its msgId in the answer)",
    source="CommitLog.submitReplicaRequest 4.9.8 (GroupCommitRequest deadline slaveTimeout); "
           "SendMessageProcessor.handlePutMessageResult (FLUSH_SLAVE_TIMEOUT: sendOK); capture "
           "java-4.9.8/09-sync-master-slave-frozen",
    needs=NEEDS,
    profiles=FOUR,
    codes=(R.SEND_MESSAGE_V2,),
    timeout=30.0,
)
async def sync_silent(ctx: Ctx) -> None:
    _sync_master(ctx)
    topic = await create_topic(ctx, routed=False)
    await _slave_in_place(ctx, topic)  # and never acks what it is sent
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    resp = await send(ctx, topic, b"nobody acks me", timeout=20.0)
    took = loop.time() - t0
    ctx.code(resp, ResponseCode.FLUSH_SLAVE_TIMEOUT, "a send to a SYNC_MASTER whose slave never acks")
    ctx.check(took >= 1.0, f"FLUSH_SLAVE_TIMEOUT after {took:.2f} s: the master did not wait for the slave")
    _stored_at(ctx, resp)
    ctx.note(f"FLUSH_SLAVE_TIMEOUT after {took:.1f} s")


@case(
    "HA4-SYNC-003", Level.MUST,
    "a SYNC_MASTER with no slave connected answers a send SLAVE_NOT_AVAILABLE (11) at once, the message "
    "stored (its msgId in the answer)",
    source="CommitLog.submitReplicaRequest 4.9.8 (HAService.isSlaveOK: no HA connection); "
           "SendMessageProcessor.handlePutMessageResult (SLAVE_NOT_AVAILABLE: sendOK); capture "
           "java-4.9.8/09-sync-master-slave-down",
    needs=NEEDS,
    profiles=FOUR,
    codes=(R.SEND_MESSAGE_V2,),
    timeout=40.0,
)
async def sync_no_slave(ctx: Ctx) -> None:
    """Sends until the answer is SLAVE_NOT_AVAILABLE (a slave connection another case closed a
    moment ago may still count for a few seconds), then checks that answer came at once."""
    _sync_master(ctx)
    topic = await create_topic(ctx, routed=False)
    loop = asyncio.get_running_loop()
    t_end = loop.time() + 25
    seen: list[str] = []
    while True:
        t0 = loop.time()
        resp = await send(ctx, topic, b"no slave for me", timeout=15.0)
        took = loop.time() - t0
        if resp.code == ResponseCode.SLAVE_NOT_AVAILABLE or loop.time() > t_end:
            break
        seen.append(str(resp.code))
        await asyncio.sleep(0.5)
    ctx.code(resp, ResponseCode.SLAVE_NOT_AVAILABLE, "a send to a SYNC_MASTER with no slave"
             + (f" (answered {', '.join(seen)} before)" if seen else ""))
    ctx.check(took < 2.0, f"SLAVE_NOT_AVAILABLE after {took:.2f} s: it must come at once")
    _stored_at(ctx, resp)
    ctx.note(f"SLAVE_NOT_AVAILABLE after {took * 1000:.0f} ms" + (f", after {len(seen)} other answer(s)"
                                                                   if seen else ""))
