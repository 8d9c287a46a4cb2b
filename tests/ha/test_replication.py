# Licensed under the Apache License, Version 2.0. See LICENSE.
"""4.x replication between reference brokers in one process: byte-identical CommitLogs and the same
pulls on the slave, where an empty slave starts, reconnects and restarts (a truncated tail too),
SYNC_MASTER answers (SEND_OK, SLAVE_NOT_AVAILABLE, FLUSH_SLAVE_TIMEOUT after slaveTimeout), waiters
released in batches by the ack that covers them, fake acks that never count, a slave below the
master's first offset, heartbeats and housekeeping, several slaves, the slave's copy of the master's
tables, and GET_BROKER_HA_STATUS."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reference_broker.broker import Broker
from reference_broker.namesrv import NameServer
from tests.broker.helpers import (
    broker_config,
    client,
    messages,
    namesrv_config,
    pull_request,
    read_frames,
    run,
    send_request,
    wait_until,
)
from tests.ha.fakes import FakeMaster, FakeSlave
from tests.javakit import free_broker_port
from wire import FrameBuffer, RemotingCommand, ResponseCode, encode_command
from wire.aio import RemotingConnection
from wire.bodies import HARuntimeInfo
from wire.ha.session import V4SlaveSession, pack_report, pack_transfer_header
from wire.message import decode_offset_msg_id

MB = 1 << 20
NAME = "broker-h"


def cfg(root: Path, ns: str, **keys: str) -> Broker:
    """A broker on a free port whose VIP (port - 2) and HA (port + 1) ports are free too, as a
    deployed broker has them (a slave asks for the topic table on its master's VIP port)."""
    keys = {"brokerName": NAME, **keys}
    port = int(keys.pop("listenPort", 0)) or free_broker_port()
    return Broker(broker_config(root, ns, **keys), host="127.0.0.1", port=port)


def slave_cfg(root: Path, ns: str, broker_id: int = 1, **keys: str) -> Broker:
    return cfg(root, ns, brokerId=str(broker_id), brokerRole="SLAVE", **keys)


@contextlib.asynccontextmanager
async def namesrv(tmp: Path) -> AsyncIterator[NameServer]:
    async with NameServer(namesrv_config(tmp / "ns"), host="127.0.0.1", port=0) as ns:
        yield ns


async def connected(master: Broker, slave: Broker, timeout: float = 10.0) -> None:
    """Wait until the slave's client is connected and the master has its request."""
    assert master.ha is not None and slave.ha_client is not None

    def ready() -> bool:
        return slave.ha_client is not None and slave.ha_client.connected and master.ha is not None and any(
            c.session.started for c in master.ha.connections)

    await wait_until(ready, timeout)


async def caught_up(master: Broker, *slaves: Broker, timeout: float = 20.0) -> None:
    """Until each slave holds the master's bytes and has dispatched them (its ConsumeQueues follow
    the copy, as a Java slave's ReputMessageService does)."""
    await wait_until(lambda: all(s.store.commitlog_max_offset() == master.store.commitlog_max_offset()
                                 and s.store.dispatch_behind_bytes == 0 for s in slaves), timeout)


async def send_many(conn: RemotingConnection, n: int, *, topic: str = "HaTopic", size: int = 700,
                    queues: int = 4, start: int = 0) -> list[RemotingCommand]:
    out = []
    for i in range(start, start + n):
        body = f"{i:06d}-".encode() + b"m" * size
        out.append(await conn.request(send_request(topic, body, queue_id=i % queues, keys=f"k{i}",
                                                   uniq=f"U{i:030d}"), timeout=10))
    return out


def commitlog_files(b: Broker) -> dict[str, bytes]:
    d = b.config.commitlog_dir
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def assert_same_bytes(master: Broker, slave: Broker) -> int:
    """The slave's files equal the master's for the range the slave holds; returns the bytes compared."""
    mf, sf = commitlog_files(master), commitlog_files(slave)
    assert sf, "the slave has no CommitLog file"
    assert set(sf) <= set(mf), f"files only on the slave: {set(sf) - set(mf)}"
    end = slave.store.commitlog_max_offset()
    assert end == master.store.commitlog_max_offset()
    compared = 0
    size = master.config.mapped_file_size_commitlog
    for name, data in sf.items():
        start = int(name)
        n = max(0, min(size, end - start))
        assert data[:n] == mf[name][:n], f"{name}: the slave's bytes differ from the master's"
        compared += n
    return compared


async def pulls(b: Broker, topic: str, queues: int) -> list[list[tuple[int, bytes]]]:
    """Every message of the topic's queues, pulled from ``b`` (a slave first copies the master's
    topic table, as its 10 s SlaveSynchronize would: a broker serves no topic it does not know)."""
    if b.slave_sync is not None:
        await b.slave_sync.sync_all()
        assert topic in b.topics.table
    c = await client(b)
    out = []
    try:
        for q in range(queues):
            got: list[tuple[int, bytes]] = []
            offset = 0
            while True:
                r = await c.request(pull_request("G", topic, q, offset, max_nums=32))
                if r.code != ResponseCode.SUCCESS:
                    break
                ms = messages(r)
                got += [(m.queue_offset, m.body) for m in ms]
                offset = int(r.ext_fields["nextBeginOffset"])
            out.append(got)
    finally:
        await c.aclose()
    return out


# ------------------------------------------------------------------------------------------ copy


def test_slave_holds_the_same_bytes_and_serves_the_same_pulls(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address) as master, \
                slave_cfg(tmp_path / "s", ns.address) as slave:
            await connected(master, slave)
            c = await client(master)
            # 1 MiB files: ~1,500 sends of ~700 bytes cross a file boundary (BLANK and padding copied)
            rs = await send_many(c, 1500)
            await c.aclose()
            assert {r.code for r in rs} == {ResponseCode.SUCCESS}
            await caught_up(master, slave)
            assert len(commitlog_files(master)) >= 2
            assert assert_same_bytes(master, slave) == master.store.commitlog_max_offset()
            # the slave's ConsumeQueues came from the normal dispatch: the same pulls
            mine, theirs = await pulls(master, "HaTopic", 4), await pulls(slave, "HaTopic", 4)
            assert sum(map(len, mine)) == 1500 and theirs == mine
            # and its index: a key query answers on the slave
            assert slave.store.query_message("HaTopic", "k77", 10, 0, 2**62)

    run(main())


def test_an_empty_slave_starts_at_the_masters_last_file(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address) as master:
            c = await client(master)
            await send_many(c, 2000)  # > 1 MiB: two files
            files = sorted(commitlog_files(master))
            assert len(files) >= 2
            async with slave_cfg(tmp_path / "s", ns.address) as slave:
                await connected(master, slave)
                await caught_up(master, slave)
                assert sorted(commitlog_files(slave)) == [files[-1]]
                conn = master.ha.connections[0]
                assert conn.session.request_offset == 0 and conn.session.transfer_start == int(files[-1])
                assert_same_bytes(master, slave)
                await send_many(c, 10, start=2000)
                await caught_up(master, slave)
                assert_same_bytes(master, slave)
            await c.aclose()

    run(main())


def test_a_slave_resumes_where_it_stopped(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address) as master:
            c = await client(master)
            async with slave_cfg(tmp_path / "s", ns.address) as slave:
                await connected(master, slave)
                await send_many(c, 100)
                await caught_up(master, slave)
                stopped_at = slave.store.commitlog_max_offset()
            await send_many(c, 100, start=100)
            async with slave_cfg(tmp_path / "s", ns.address) as slave:
                await connected(master, slave)
                assert master.ha.connections[0].session.request_offset == stopped_at
                await caught_up(master, slave)
                assert_same_bytes(master, slave)
                assert await pulls(slave, "HaTopic", 4) == await pulls(master, "HaTopic", 4)
            await c.aclose()

    run(main())


def test_a_slave_restarted_with_a_truncated_tail_copies_it_again(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address) as master:
            c = await client(master)
            async with slave_cfg(tmp_path / "s", ns.address) as slave:
                await connected(master, slave)
                await send_many(c, 200)
                await caught_up(master, slave)
                end = slave.store.commitlog_max_offset()
            # a crash that lost the tail: the last 1,000 bytes zeroed and the clean-shutdown mark gone
            last = sorted((tmp_path / "s" / "commitlog").iterdir())[-1]
            data = bytearray(last.read_bytes())
            pos = end - int(last.name)
            data[pos - 1000:pos] = bytes(1000)
            last.write_bytes(bytes(data))
            (tmp_path / "s" / "abort").write_bytes(b"")
            await send_many(c, 50, start=200)
            async with slave_cfg(tmp_path / "s", ns.address) as slave:
                recovered = slave.store.commitlog_max_offset()
                assert recovered < end - 1000 + 1
                await connected(master, slave)
                assert master.ha.connections[0].session.request_offset == recovered
                await caught_up(master, slave)
                assert_same_bytes(master, slave)
                assert await pulls(slave, "HaTopic", 4) == await pulls(master, "HaTopic", 4)
            await c.aclose()

    run(main())


def test_several_slaves(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER") as master, \
                slave_cfg(tmp_path / "s1", ns.address, 1) as s1, slave_cfg(tmp_path / "s2", ns.address, 2) as s2:
            await wait_until(lambda: len([x for x in master.ha.connections if x.session.started]) == 2, 10)
            c = await client(master)
            rs = await send_many(c, 300)
            assert {r.code for r in rs} == {ResponseCode.SUCCESS}
            await caught_up(master, s1, s2)
            assert assert_same_bytes(master, s1) == assert_same_bytes(master, s2)
            await s1.stop()  # one slave is enough for SYNC_MASTER
            rs = await send_many(c, 20, start=300)
            assert {r.code for r in rs} == {ResponseCode.SUCCESS}
            await caught_up(master, s2)
            await c.aclose()

    run(main())


# ------------------------------------------------------------------------------------------ SYNC_MASTER


#: SYNC_MASTER with either flush: with SYNC_FLUSH the put waits for the group commit as well, and
#: the slaves' answer wins where it is not OK (CommitLog.asyncPutMessage combines the two so)
FLUSH_TYPES = pytest.mark.parametrize("flush", ["ASYNC_FLUSH", "SYNC_FLUSH"])


def _send_answer(r: RemotingCommand) -> tuple[int, str | None, str | None]:
    e = r.ext_fields
    return r.code, e.get("msgId"), e.get("queueOffset")


@FLUSH_TYPES
def test_sync_master_with_its_slave_up_answers_send_ok(tmp_path: Path, flush: str) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER",
                                                 flushDiskType=flush) as master, \
                slave_cfg(tmp_path / "s", ns.address) as slave:
            await connected(master, slave)
            c = await client(master)
            rs = await send_many(c, 50)
            assert [r.code for r in rs] == [ResponseCode.SUCCESS] * 50
            if flush == "SYNC_FLUSH":  # the last SEND_OK came after its group commit too
                assert master.store.flushed_offset == master.store.commitlog_max_offset()
            # every SEND_OK came after the slave acknowledged that message
            assert master.ha.waiters.released >= 1 and master.ha.waiters.expired == 0
            await c.aclose()

    run(main())


@FLUSH_TYPES
def test_sync_master_without_a_slave_answers_slave_not_available_at_once(tmp_path: Path, flush: str) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER",
                                                 flushDiskType=flush) as master:
            c = await client(master)
            t0 = time.monotonic()
            rs = await send_many(c, 3)
            took = time.monotonic() - t0
            # as the 09-slave-down capture: code 11, the message stored, msgId and queueOffset given
            assert [r.code for r in rs] == [ResponseCode.SLAVE_NOT_AVAILABLE] * 3
            assert all(_send_answer(r)[1] and _send_answer(r)[2] is not None for r in rs)
            assert took < 2.0
            assert master.store.max_offset("HaTopic", 0) == 1
            await c.aclose()

    run(main())


@FLUSH_TYPES
def test_sync_master_with_a_silent_slave_answers_flush_slave_timeout_after_slave_timeout(tmp_path: Path, flush: str) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER",
                                                 slaveTimeout="1500", flushDiskType=flush) as master:
            fake = await FakeSlave.attach(master)  # connected, then never acks: the frozen slave of 09-frozen
            c = await client(master)
            t0 = time.monotonic()
            r = (await send_many(c, 1))[0]
            took = time.monotonic() - t0
            code, msg_id, qo = _send_answer(r)
            assert code == ResponseCode.FLUSH_SLAVE_TIMEOUT and msg_id and qo == "0"
            assert 1.4 <= took < 3.0
            assert master.ha.waiters.expired == 1
            # the message was sent to the slave all the same
            await fake.wait_data(master.store.commitlog_max_offset())
            await c.aclose()
            await fake.close()

    run(main())


def test_one_ack_releases_every_waiter_it_covers(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER",
                                                 slaveTimeout="10000") as master:
            fake = await FakeSlave.attach(master)
            conns = [await client(master) for _ in range(16)]
            sends = [asyncio.ensure_future(c.request(send_request("HaTopic", b"w" * 100, queue_id=i % 4),
                                                     timeout=15)) for i, c in enumerate(conns)]
            await wait_until(lambda: len(master.ha.waiters) == 16)
            end = master.store.commitlog_max_offset()
            await fake.wait_data(end)
            assert not any(s.done() for s in sends)
            t0 = time.monotonic()
            await fake.report(end)
            rs = await asyncio.gather(*sends)
            assert time.monotonic() - t0 < 2.0
            assert [r.code for r in rs] == [ResponseCode.SUCCESS] * 16
            assert master.ha.waiters.largest_batch == 16 and master.ha.waiters.batches == 1
            for c in conns:
                await c.aclose()
            await fake.close()

    run(main())


async def _pipelined(port: int, n: int, *, no_wait: frozenset[int] = frozenset()) -> tuple[
        asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw connection that writes ``n`` sends in one write (the broker reads them as one run);
    the sends numbered in ``no_wait`` say WAIT=false."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    frames = [encode_command(send_request("HaTopic", b"p%03d;" % i * 20, queue_id=i % 4, keys=f"k{i}",
                                          extra_props={"WAIT": "false"} if i in no_wait else None)
                             .replace(opaque=1000 + i)) for i in range(n)]
    writer.write(b"".join(frames))
    await writer.drain()
    return reader, writer


@FLUSH_TYPES
def test_a_pipelined_run_on_a_sync_master_waits_for_one_ack(tmp_path: Path, flush: str) -> None:
    """The sends of one read are put as a run; its waiting sends wait for the slaves together and
    the ack that covers the run's end answers them all, in order, with their own msgId and queue
    offset (a WAIT=false send of the run is answered at once). An ack short of the end answers
    none of them; with SYNC_FLUSH the answers come after the group commit too."""
    n = 32
    no_wait = frozenset({5, 17})

    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER",
                                                 slaveTimeout="10000", flushDiskType=flush) as master:
            assert master.ha is not None
            fake = await FakeSlave.attach(master)
            runs_before = master.store.puts.run_messages
            start = master.store.commitlog_max_offset()
            reader, writer = await _pipelined(master.port, n, no_wait=no_wait)
            fb = FrameBuffer()
            early = await read_frames(reader, fb, len(no_wait))
            assert sorted(a.opaque - 1000 for a in early) == sorted(no_wait)
            assert all(a.code == ResponseCode.SUCCESS for a in early)
            await wait_until(lambda: len(master.ha.waiters) == n - len(no_wait))
            end = master.store.commitlog_max_offset()
            assert master.store.puts.run_messages - runs_before == n, "the sends were not put as one run"
            await fake.wait_data(end)
            await fake.report(end - 1)  # short of the run's last byte: nobody is answered
            await asyncio.sleep(0.2)
            assert master.ha.waiters.released == 0 and len(master.ha.waiters) == n - len(no_wait)
            await fake.report(end)
            rest = await read_frames(reader, fb, n - len(no_wait))
            assert [a.opaque - 1000 for a in rest] == [i for i in range(n) if i not in no_wait]
            assert all(a.code == ResponseCode.SUCCESS for a in rest), [a.code for a in rest]
            if flush == "SYNC_FLUSH":
                assert master.store.flushed_offset >= end
            assert master.ha.waiters.batches == 1 and master.ha.waiters.largest_batch == n - len(no_wait)
            # each answer names its own record: msgId = the record's offset, offsets per queue in order
            by_queue: dict[int, list[int]] = {}
            phys = []
            for a in sorted(early + rest, key=lambda a: a.opaque):
                by_queue.setdefault(int(a.ext_fields["queueId"]), []).append(int(a.ext_fields["queueOffset"]))
                phys.append(decode_offset_msg_id(a.ext_fields["msgId"]).offset)
            assert all(v == list(range(len(v))) for v in by_queue.values()), by_queue
            assert phys == sorted(phys) and phys[0] == start and len(set(phys)) == n
            writer.close()
            await fake.close()

    run(main())


@FLUSH_TYPES
def test_a_pipelined_run_on_a_sync_master_with_a_silent_slave_times_out_together(tmp_path: Path,
                                                                                flush: str) -> None:
    """The run's sends are stored and answered FLUSH_SLAVE_TIMEOUT together after slaveTimeout."""
    n = 24

    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER",
                                                 slaveTimeout="1000", flushDiskType=flush) as master:
            assert master.ha is not None
            fake = await FakeSlave.attach(master)
            t0 = time.monotonic()
            reader, writer = await _pipelined(master.port, n)
            got = await read_frames(reader, FrameBuffer(), n)
            assert time.monotonic() - t0 >= 0.9
            assert [a.opaque - 1000 for a in got] == list(range(n))
            assert all(a.code == ResponseCode.FLUSH_SLAVE_TIMEOUT and a.ext_fields.get("msgId")
                       for a in got), [a.code for a in got]
            assert master.ha.waiters.expired == n and master.ha.waiters.released == 0
            await fake.wait_data(master.store.commitlog_max_offset())
            writer.close()
            await fake.close()

    run(main())


def test_a_sync_master_sends_a_put_to_an_idle_slave_from_the_append_listener(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER",
                                                 slaveTimeout="10000") as master:
            fake = await FakeSlave.connect(master.ha.port)
            await fake.report(0)
            await wait_until(lambda: bool(master.ha.connections) and master.ha.connections[0]._idle)
            conn = master.ha.connections[0]
            pushed: list[tuple[int, int]] = []

            def probe(end: int) -> None:  # runs after the HA listener, in the put's own callback
                pushed.append((end, conn.session.next_transfer))

            master.store.add_append_listener(probe)
            c = await client(master)
            put = asyncio.ensure_future(c.request(send_request("HaTopic", b"p" * 300), timeout=15))
            await wait_until(lambda: bool(pushed))
            # the bytes were handed to the socket by the listener, not by the writer task later
            assert pushed[0][0] == pushed[0][1] == master.store.commitlog_max_offset()
            await fake.wait_data(master.store.commitlog_max_offset())
            await fake.report(master.store.commitlog_max_offset())
            assert (await put).code == ResponseCode.SUCCESS
            master.store.remove_append_listener(probe)
            await c.aclose()
            await fake.close()

    run(main())


def test_a_frame_the_socket_takes_only_part_of_is_finished_by_the_writer(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER",
                                                 slaveTimeout="20000") as master:
            # a slave that does not read at first, behind a small receive window: the listener's
            # sends stop in the middle of a frame and the writer task sends the rest
            raw = socket.socket()
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            raw.connect(("127.0.0.1", master.ha.port))
            raw.sendall(pack_report(0))
            await wait_until(lambda: bool(master.ha.connections) and master.ha.connections[0]._idle)
            ha_conn = master.ha.connections[0]
            c = await client(master)
            puts = [asyncio.ensure_future(c.request(send_request("HaTopic", bytes([65 + i % 26]) * 60_000,
                                                                 queue_id=i % 4), timeout=30))
                    for i in range(100)]
            await wait_until(lambda: len(master.ha.waiters) == 100 and ha_conn._unsent is not None)
            end = master.store.commitlog_max_offset()
            assert end > 6_000_000
            # another append's listener call before the woken writer has run (in the same pass)
            # leaves the frame cut short alone: nothing may go on the wire before its rest
            cut = (ha_conn._unsent, ha_conn.session.next_transfer)
            assert cut[1] < end
            ha_conn._idle = True
            try:
                ha_conn.push()
            finally:
                ha_conn._idle = False
            assert (ha_conn._unsent, ha_conn.session.next_transfer) == cut
            raw.setblocking(False)
            loop = asyncio.get_running_loop()
            session = V4SlaveSession()
            session.connected(0, 0)
            got = bytearray()
            while len(got) < end:
                n = await loop.sock_recv_into(raw, session.recv_buffer())
                assert n, "the master closed the connection"
                for offset, data in session.received(n, 0):
                    if data:
                        assert offset == len(got)
                        got += data
            assert len(got) == end and ha_conn._unsent is None
            assert bytes(got) == b"".join(commitlog_files(master).values())[:end]
            raw.sendall(pack_report(len(got)))
            rs = await asyncio.gather(*puts)
            assert {r.code for r in rs} == {ResponseCode.SUCCESS}
            raw.close()
            await c.aclose()

    run(main())


# ------------------------------------------------------------------------------------------ safety


def test_a_fake_ack_never_turns_a_sync_put_into_send_ok(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="reference_broker.ha")

    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, brokerRole="SYNC_MASTER",
                                                 slaveTimeout="1000") as master:
            c = await client(master)
            await send_many(c, 5)  # SLAVE_NOT_AVAILABLE: stored, nothing connected
            before = master.store.commitlog_max_offset()
            # 1. a liar that claims the master's whole log on connect, then acks far beyond
            liar = await FakeSlave.attach(master, before)
            put = asyncio.ensure_future(send_many(c, 1, start=5))
            await wait_until(lambda: len(master.ha.waiters) == 1)
            await liar.report(before + 10 * MB)
            await asyncio.wait_for(liar.closed.wait(), 5)
            r = (await put)[0]
            assert r.code != ResponseCode.SUCCESS
            assert master.ha.rejected == 1 and not master.ha.connections
            assert "slave acknowledges offset" in caplog.text and "closing the connection" in caplog.text
            await liar.close()
            # 2. one that claims everything and then acks truthfully what it is sent: the put written
            # before it connected is not covered by what it was sent
            claimer = await FakeSlave.connect(master.ha.port)
            put = asyncio.ensure_future(send_many(c, 1, start=6))
            await asyncio.sleep(0.05)
            end = master.store.commitlog_max_offset()
            await claimer.report(end)
            await wait_until(lambda: bool(master.ha.connections) and master.ha.connections[0].session.started)
            await claimer.report(end)
            r = (await put)[0]
            assert r.code == ResponseCode.SLAVE_NOT_AVAILABLE or r.code == ResponseCode.FLUSH_SLAVE_TIMEOUT
            await claimer.close()
            await c.aclose()

    run(main())


def test_a_slave_ahead_of_its_master_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address) as master:
            fake = await FakeSlave.connect(master.ha.port)
            await fake.report(5 * MB)
            await asyncio.wait_for(fake.closed.wait(), 5)
            assert master.ha.rejected == 1
            await fake.close()

    run(main())


def test_a_slave_below_the_masters_first_offset_is_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="reference_broker.ha")

    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address) as master:
            c = await client(master)
            await send_many(c, 3200)  # three 1 MiB files
            await c.aclose()
            assert master.store.delete_expired_files(force=True, now_ms=2**62) >= 1
            low = master.store.commitlog_min_offset()
            assert low > 0
            fake = await FakeSlave.connect(master.ha.port)
            await fake.report(1000)  # it holds 1,000 bytes of a log whose start is gone
            await wait_until(lambda: bool(master.ha.connections) and master.ha.connections[0].problem is not None)
            problem = master.ha.connections[0].problem
            assert problem is not None and problem.code == "BELOW_MIN_OFFSET"
            assert f"starts at {low}" in problem.message and "start it empty" in problem.message
            assert "can never catch up" in caplog.text
            await fake.close()

    run(main())


# ------------------------------------------------------------------------------------------ protocol


def test_heartbeats_and_housekeeping(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, haSendHeartbeatInterval="200",
                                                 haHousekeepingInterval="1500") as master:
            c = await client(master)
            await send_many(c, 3)
            end = master.store.commitlog_max_offset()
            await c.aclose()
            fake = await FakeSlave.connect(master.ha.port)
            await fake.report(end)
            await asyncio.sleep(1.0)
            beats = [t for t in fake.transfers if not t[1]]
            # header-only frames at nextTransferFromWhere, about every 200 ms
            assert len(beats) >= 3 and {o for o, _ in beats} == {end}
            # the slave says nothing more: after haHousekeepingInterval the master closes
            await asyncio.wait_for(fake.closed.wait(), 5)
            assert not master.ha.connections
            await fake.close()

    run(main())


def test_an_empty_slave_of_an_empty_master_makes_its_first_file_on_a_heartbeat(tmp_path: Path) -> None:
    """A Java 4.9.8 slave appends a heartbeat's no bytes through appendToCommitLog, which takes the
    last CommitLog file and makes one when there is none: once a heartbeat has come, an empty slave
    of an empty master has file 0 and reports commitLogMinOffset 0 (the Java pair does; the master,
    which has no file, reports -1)."""
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address, haSendHeartbeatInterval="200") as master, \
                slave_cfg(tmp_path / "s", ns.address) as slave:
            await connected(master, slave)
            await wait_until(lambda: slave.store.commitlog_min_offset() == 0, 10)
            assert [p.name for p in slave.config.commitlog_dir.iterdir()] == [f"{0:020d}"]
            assert slave.store.commitlog_max_offset() == 0 and master.store.commitlog_min_offset() == -1
            # and the first bytes go into that file
            c = await client(master)
            await send_many(c, 5)
            await c.aclose()
            await caught_up(master, slave)
            assert assert_same_bytes(master, slave) == master.store.commitlog_max_offset()

    run(main())


def test_a_transfer_that_does_not_continue_the_slaves_log_reconnects(tmp_path: Path) -> None:
    async def main() -> None:
        fm = FakeMaster()
        async with fm.running(), slave_cfg(tmp_path / "s", "", haMasterAddress=fm.addr) as slave:
            await asyncio.wait_for(fm.connected.wait(), 5)
            await wait_until(lambda: fm.reports and fm.reports[0] == [0])
            # 1 MiB files: an empty slave takes a transfer at a file boundary
            good = b"\0" * 100
            await fm.send(MB, good)
            await wait_until(lambda: slave.store.commitlog_max_offset() == MB + 100)
            await wait_until(lambda: fm.reports[0][-1] == MB + 100)
            await fm.send(MB + 50, b"x" * 10)  # the wrong offset
            await wait_until(lambda: len(fm.reports) == 2, 10)
            assert slave.ha_client is not None and slave.ha_client.mismatches == 1
            # the new connection starts from the slave's end; the store kept only the good bytes
            await wait_until(lambda: fm.reports[1][:1] == [MB + 100])
            assert slave.store.commitlog_max_offset() == MB + 100

    run(main())


def test_frames_cut_anywhere_and_across_a_file_end_land_whole(tmp_path: Path) -> None:
    """A header and a body cut into pieces at any byte, a body that runs past a file's end (no Java
    master sends one, the store takes it) and a body size no Java slave could hold (the connection
    closes, nothing of it kept)."""
    async def main() -> None:
        fm = FakeMaster()
        async with fm.running(), slave_cfg(tmp_path / "s", "", haMasterAddress=fm.addr) as slave:
            await asyncio.wait_for(fm.connected.wait(), 5)
            await wait_until(lambda: fm.reports and fm.reports[0] == [0])
            first = bytes(range(256)) * 4 * 1020  # ends 4 KiB before the first file's end
            frame = pack_transfer_header(MB, len(first)) + first
            for cut in (5, 12, 13, 4000, 70000, len(frame)):  # the header cut too
                await fm.send_raw(frame[:cut])
                frame = frame[cut:]
                await asyncio.sleep(0.01)
            await wait_until(lambda: fm.reports[0][-1] == MB + len(first))
            across = b"\x5a" * 10000  # 4 KiB in the first file, the rest in the next
            await fm.send(MB + len(first), across)
            end = MB + len(first) + len(across)
            await wait_until(lambda: slave.store.commitlog_max_offset() == end and fm.reports[0][-1] == end)
            files = commitlog_files(slave)
            assert list(files) == [f"{MB:020d}", f"{2 * MB:020d}"]
            assert files[f"{MB:020d}"] == first + across[:4096]
            assert files[f"{2 * MB:020d}"][:10000 - 4096] == across[4096:]
            assert not any(files[f"{2 * MB:020d}"][10000 - 4096:])
            await fm.send_raw(pack_transfer_header(end, 4 * MB))  # more than a 4 MiB buffer holds
            await wait_until(lambda: len(fm.reports) == 2, 10)
            await wait_until(lambda: fm.reports[1][:1] == [end])
            assert slave.store.commitlog_max_offset() == end
            assert slave.ha_client is not None and slave.ha_client.mismatches == 1

    run(main())


def test_a_slave_refuses_sends(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address) as master, \
                slave_cfg(tmp_path / "s", ns.address) as slave:
            await connected(master, slave)
            c = await client(slave)
            r = (await send_many(c, 1))[0]
            # as the 10-error-responses capture, case 8
            assert r.code == ResponseCode.SERVICE_NOT_AVAILABLE
            assert r.remark is not None and r.remark.startswith("service not available now")
            await c.aclose()

    run(main())


def test_slave_copies_the_masters_tables(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address) as master, \
                slave_cfg(tmp_path / "s", ns.address) as slave:
            await connected(master, slave)
            c = await client(master)
            await send_many(c, 4, topic="SyncedTopic")
            await c.aclose()
            master.offsets.commit("G1", "SyncedTopic", 0, 1)
            sync = slave.slave_sync
            assert sync is not None and sync.master_addr == master.address
            await sync.sync_all()
            assert "SyncedTopic" in slave.topics.table
            assert slave.topics.data_version.body() == master.topics.data_version.body()
            assert slave.offsets.query("G1", "SyncedTopic", 0) == 1
            assert (tmp_path / "s" / "config" / "topics.json").exists()
            assert (tmp_path / "s" / "config" / "delayOffset.json").exists()
            assert sync.rounds == 1 and sync.failures == 0
            # topic configs came on the VIP channel (port - 2), the others on the main port
            assert master.vip_port is not None

    run(main())


def test_ha_status_request(tmp_path: Path) -> None:
    async def main() -> None:
        async with namesrv(tmp_path) as ns, cfg(tmp_path / "m", ns.address) as master, \
                slave_cfg(tmp_path / "s", ns.address) as slave:
            await connected(master, slave)
            c = await client(master)
            await send_many(c, 10)
            await caught_up(master, slave)
            r = await c.request(RemotingCommand(code=907))
            info = HARuntimeInfo.decode(r.body or b"")
            assert info.master and info.master_commit_log_max_offset == master.store.commitlog_max_offset()
            (conn,) = info.ha_connection_info
            assert conn.slave_ack_offset == info.master_commit_log_max_offset and conn.diff == 0
            assert conn.in_sync and info.in_sync_slave_nums == 1
            await c.aclose()
            c = await client(slave)
            info = HARuntimeInfo.decode((await c.request(RemotingCommand(code=907))).body or b"")
            assert not info.master and info.ha_client_runtime_info is not None
            assert info.ha_client_runtime_info.master_addr == master.ha_server_addr
            assert info.ha_client_runtime_info.max_offset == master.store.commitlog_max_offset()
            await c.aclose()

    run(main())
