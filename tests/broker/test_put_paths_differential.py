# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The batch paths of the put against the one-at-a-time path: the same load, answers and bytes identical.

A bounded load (a few seconds): sends pipelined on one connection, many frames a write, single
messages to four queues with SEND_BATCH_MESSAGEs among them, over CommitLog files of 64 KiB and
consume queue files of 64 units (so that puts meet the ends of both), runs against a broker that
handles each request by itself, whose store puts every batch in one piece and answers each
waiting send by a coroutine of its own (the one-at-a-time path), and against the batch paths:
sends answered by the callbacks of their group commit's one future (``PutService.deferred``),
batches of more than 8 messages made in slices with the sends behind them waiting for their turn
as tasks (``PutService.slice``), the sends of one read handled together and their messages put
as runs (``Broker.batch_sends``, ``PutService.runs``), and these together; and a producer with
one send in flight, whose every send reaches the broker alone and is handled as a run of one. Every answer's
opaque, its place in the connection's order, code, msgId, queue id and queue offset must be the
same, and so must the CommitLog's bytes, BLANKs at the files' ends included (all but each
record's store timestamp and the two ports, the client's and the broker's, which differ from run
to run), and the consume queues' units. A second load, four connections at once (with sliced
batches, and with runs), checks what must hold whatever the interleaving: each connection's
answers come in its request order and each queue's offsets in the order of its sends. The run
paths are compared on a SYNC_MASTER too, whose slave acks each transfer as it comes: there the
waiting sends of a run wait for the slave (and the group commit) together, and their answers must
still come in the order of the requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import reference_broker.broker.broker as broker_module
from reference_broker.broker import Broker
from tests.broker.helpers import broker_config, run, running_broker, send_request
from tests.ha.fakes import FakeSlave
from tests.javakit import free_broker_port
from wire import FrameBuffer, RemotingCommand, SerializeType, decode_frame, encode_command
from wire.aio import RemotingConnection
from wire.message import BLANK_MAGIC_CODE, BatchEntry, encode_batch

QUEUES = 4
REQUESTS = 600
WINDOW = 32
#: batches of this many messages, every BATCH_EVERY requests
BATCH, BATCH_EVERY = 40, 25
#: in a v1 record: the born host's port and the store timestamp (they differ from run to run)
_BORN_PORT = slice(52, 56)
_STORE_TS = slice(56, 64)
#: and the store host's port: the broker's own, which each run picks
_STORE_PORT = slice(68, 72)


def _requests(conn: int, n: int = REQUESTS) -> list[bytes]:
    frames = []
    for i in range(n):
        opaque = conn * 100_000 + i + 1
        if i % BATCH_EVERY == BATCH_EVERY - 1:
            body = encode_batch([BatchEntry(body=f"b{conn}-{i}-{j}".encode(), properties={"KEYS": f"k{j}"})
                                 for j in range(BATCH)])
            req = send_request("DiffTopic", b"", code=320, queue_id=i % QUEUES)
            req = req.replace(body=body, ext_fields={**req.ext_fields, "i": "WAIT\x01true"})
        elif i % BATCH_EVERY == 12:
            # a SEND_MESSAGE_V2 whose header says batch: a batch put among the single sends
            body = encode_batch([BatchEntry(body=f"v{conn}-{i}-{j}".encode(), properties={"KEYS": f"v{j}"})
                                 for j in range(3)])
            req = send_request("DiffTopic", b"", queue_id=i % QUEUES)
            req = req.replace(body=body, ext_fields={**req.ext_fields, "m": "true"})
        else:
            # now and then a ROCKETMQ header (its answer is a ROCKETMQ header too)
            kind = SerializeType.ROCKETMQ if i % BATCH_EVERY == 18 else SerializeType.JSON
            req = send_request("DiffTopic", f"m{conn}-{i}".encode() * (1 + i % 7), queue_id=i % QUEUES,
                               keys=f"key{i}", uniq=f"{conn:08X}{i:024X}", tags="TagA", serialize_type=kind)
        frames.append(encode_command(req.replace(opaque=opaque)))
    return frames


async def _drive(port: int, frames: list[bytes], window: int = WINDOW) -> list[RemotingCommand]:
    """Send ``frames`` keeping ``window`` in flight, the frames answered by one read replaced in
    one write (so that the broker reads many frames at once); the answers in the order they came."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    answers: list[RemotingCommand] = []
    fb = FrameBuffer()
    sent = min(window, len(frames))
    writer.write(b"".join(frames[:sent]))
    while len(answers) < len(frames):
        data = await asyncio.wait_for(reader.read(1 << 16), 60)
        assert data, "the broker closed the connection"
        fb.feed(data)
        more = sent
        while (frame := fb.next_frame()) is not None:
            answers.append(decode_frame(frame))
            if more < len(frames):
                more += 1
        if more > sent:
            writer.write(b"".join(frames[sent:more]))
            sent = more
    writer.close()
    return answers


def _masked_commitlog(root: Path) -> bytes:
    """The CommitLog's bytes up to its end, BLANKs included, each record's born port and store
    timestamp zeroed."""
    data = bytearray()
    for f in sorted((root / "commitlog").iterdir()):
        data += f.read_bytes()
    pos = 0
    while pos + 8 <= len(data):
        size, magic = struct.unpack_from(">iI", data, pos)
        if size > 0 and magic == BLANK_MAGIC_CODE & 0xFFFFFFFF:
            pos += size
            continue
        if size <= 0 or magic != 0xDAA320A7:
            break
        rec = memoryview(data)[pos:pos + size]
        rec[_BORN_PORT] = b"\0" * 4
        rec[_STORE_TS] = b"\0" * 8
        rec[_STORE_PORT] = b"\0" * 4
        rec.release()
        pos += size
    assert pos > 0
    return bytes(data[:pos])


def _offsets(msg_ids: str | None) -> list[str]:
    """The CommitLog offsets of an answer's msgIds (the broker's port between them differs by run)."""
    return [i[:8] + i[16:] for i in (msg_ids or "").split(",")]


def _summary(answers: list[RemotingCommand]) -> list[tuple[object, ...]]:
    return [(a.opaque, a.code, _offsets(a.ext_fields.get("msgId")), a.ext_fields.get("queueId"),
             a.ext_fields.get("queueOffset")) for a in answers]


def _consume_queues(root: Path) -> dict[str, bytes]:
    """Every consume queue file's bytes, by its path under ``consumequeue/``."""
    cq = root / "consumequeue"
    return {str(f.relative_to(cq)): f.read_bytes() for f in sorted(cq.rglob("*")) if f.is_file()}


def _in_order(answers: list[tuple[object, ...]]) -> None:
    """The answers came in the order of the requests; else a message that says where they did not
    (the first answer out of place, the ones around it, and any opaque missing or repeated)."""
    got = [int(str(a[0])) for a in answers]
    want = [i + 1 for i in range(REQUESTS)]
    if got == want:
        return
    at = next((i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w), min(len(got), len(want)))
    repeated = sorted({o for o in got if got.count(o) > 1})
    missing = sorted(set(want) - set(got))
    raise AssertionError(f"answer {at} is opaque {got[at]}, expected {want[at]}; around it: "
                         f"{got[max(0, at - 3):at + 40]}; repeated: {repeated}; missing: {missing}; "
                         f"codes around it: {[a[1] for a in answers[max(0, at - 3):at + 40]]}")


@contextlib.asynccontextmanager
async def _broker(root: Path, flush: str, role: str) -> AsyncIterator[Broker]:
    """The broker under test; a SYNC_MASTER with a slave that acks whatever it receives at once
    (its sends wait for that ack)."""
    files = {"flushDiskType": flush, "mappedFileSizeCommitLog": str(64 << 10),
             "mappedFileSizeConsumeQueue": str(20 * 64)}
    if role == "ASYNC_MASTER":
        async with running_broker(root, **files) as b:
            yield b
        return
    config = broker_config(root, "", brokerRole=role, slaveTimeout="30000", **files)
    async with Broker(config, host="127.0.0.1", port=free_broker_port()) as b:
        assert b.ha is not None
        slave = await FakeSlave.attach(b, auto_ack=True)
        try:
            yield b
            assert b.ha.waiters.released > 0 and b.ha.waiters.expired == 0
        finally:
            await slave.close()


def _one_connection(root: Path, flush: str, *, slice_size: int, deferred: bool, runs: bool,
                    window: int = WINDOW, role: str = "ASYNC_MASTER",
                    ) -> tuple[list[tuple[object, ...]], bytes, dict[str, bytes], object]:
    counted: dict[object, tuple[int, int]] = {}
    #: the number of requests in each run of sends the broker handled together
    handled: list[int] = []
    real = broker_module.send_messages

    def counting(broker: Broker, conn: RemotingConnection, reqs: list[RemotingCommand]) -> object:
        handled.append(len(reqs))
        return real(broker, conn, reqs)

    async def main() -> list[RemotingCommand]:
        async with _broker(root, flush, role) as b:
            b.store.puts.slice = slice_size
            b.store.puts.deferred = deferred
            b.store.puts.runs = runs
            b.batch_sends = runs
            broker_module.send_messages = counting  # type: ignore[assignment]
            try:
                answers = await _drive(b.port, _requests(0), window)
            finally:
                broker_module.send_messages = real
            # the path under test was taken: most single messages were put as parts of runs (with
            # slices, the sends that wait behind a sliced batch are put in their turn instead)
            made = b.store.puts.run_messages
            if not runs:
                assert made == 0 and not handled, (made, handled)
            elif window == 1:
                # alone in its read, every SEND_MESSAGE(_V2) was handled as a run of one (its
                # message put by the single put)
                assert handled == [1] * (REQUESTS - REQUESTS // BATCH_EVERY), handled
            elif slice_size > BATCH:
                assert made > REQUESTS // 2, made
            # the broker's statistics (VIEW_BROKER_STATS_DATA): messages and sends by topic
            for key, buckets in b.stats._items.items():
                counted[key] = (sum(c[0] for c in buckets.values()), sum(c[1] for c in buckets.values()))
            return answers

    answers = run(main(), timeout=120)
    return _summary(answers), _masked_commitlog(root), _consume_queues(root), counted


#: the batch paths, each compared with the one-at-a-time path: answers made by the group commit's
#: future (deferred), large puts made in slices with the puts behind them in turn, and the sends
#: of one read handled together, their messages put as runs
PATHS = {"deferred": {"slice_size": 10**9, "deferred": True, "runs": False},
         "sliced": {"slice_size": 8, "deferred": False, "runs": False},
         "both": {"slice_size": 8, "deferred": True, "runs": False},
         "runs": {"slice_size": 10**9, "deferred": True, "runs": True},
         "all": {"slice_size": 8, "deferred": True, "runs": True},
         "lone": {"slice_size": 10**9, "deferred": True, "runs": True, "window": 1}}


@pytest.mark.parametrize("flush", ["ASYNC_FLUSH", "SYNC_FLUSH"])
@pytest.mark.parametrize("path", sorted(PATHS))
def test_batch_paths_answer_and_store_as_one_at_a_time(tmp_path: Path, flush: str, path: str) -> None:
    plain, plain_bytes, plain_cq, plain_stats = _one_connection(tmp_path / "plain", flush, slice_size=10**9,
                                                                deferred=False, runs=False)
    other, other_bytes, other_cq, other_stats = _one_connection(tmp_path / path, flush, **PATHS[path])  # type: ignore[arg-type]
    assert len(plain) == REQUESTS and all(code == 0 for _, code, *_ in plain), plain[:3]
    # in the connection's order, as sent
    _in_order(plain)
    # the load meets the files' ends: several CommitLog files, consume queues of several files
    assert plain_bytes.count(struct.pack(">I", BLANK_MAGIC_CODE & 0xFFFFFFFF)) >= 2
    assert sum(1 for name in plain_cq if name.startswith("DiffTopic/0/")) >= 3
    assert other == plain
    assert len(other_bytes) == len(plain_bytes)
    assert other_bytes == plain_bytes
    assert other_cq == plain_cq
    assert other_stats == plain_stats and plain_stats[("TOPIC_PUT_NUMS", "DiffTopic")][1] == REQUESTS


@pytest.mark.parametrize("flush", ["ASYNC_FLUSH", "SYNC_FLUSH"])
@pytest.mark.parametrize("path", ["runs", "all", "lone"])
def test_batch_paths_on_a_sync_master_answer_and_store_as_one_at_a_time(tmp_path: Path, flush: str,
                                                                       path: str) -> None:
    """The same on a SYNC_MASTER whose slave acks each transfer: a run's waiting sends wait for the
    slave together (and for the group commit, in SYNC_FLUSH), a send of one at a time alone."""
    plain, plain_bytes, plain_cq, plain_stats = _one_connection(
        tmp_path / "plain", flush, slice_size=10**9, deferred=False, runs=False, role="SYNC_MASTER")
    other, other_bytes, other_cq, other_stats = _one_connection(
        tmp_path / path, flush, role="SYNC_MASTER", **PATHS[path])  # type: ignore[arg-type]
    assert len(plain) == REQUESTS and all(code == 0 for _, code, *_ in plain), plain[:3]
    _in_order(plain)
    assert other == plain
    assert other_bytes == plain_bytes
    assert other_cq == plain_cq
    assert other_stats == plain_stats


@pytest.mark.parametrize("slice_size", [8, 10**9], ids=["sliced", "runs"])
def test_puts_keep_each_connections_order_under_concurrency(tmp_path: Path, slice_size: int) -> None:
    async def main() -> list[list[RemotingCommand]]:
        async with running_broker(tmp_path, mappedFileSizeCommitLog=str(4 << 20)) as b:
            b.store.puts.slice = slice_size
            answers = list(await asyncio.gather(*(_drive(b.port, _requests(c, 300)) for c in range(4))))
            if slice_size > BATCH:
                assert b.store.puts.run_messages > 300, b.store.puts.run_messages
            return answers

    per_conn = run(main(), timeout=120)
    seen: dict[str, list[int]] = {}
    for c, answers in enumerate(per_conn):
        assert [a.opaque for a in answers] == [c * 100_000 + i + 1 for i in range(300)]
        assert all(a.code == 0 for a in answers)
        last: dict[str, int] = {}
        for a in answers:
            q, off = a.ext_fields["queueId"], int(a.ext_fields["queueOffset"])
            assert off > last.get(q, -1), (c, q, off, last.get(q))
            n = len(a.ext_fields["msgId"].split(","))
            last[q] = off + n - 1
            seen.setdefault(q, []).extend(range(off, off + n))
    # every queue offset taken once, none skipped
    for q, offsets in seen.items():
        assert sorted(offsets) == list(range(len(offsets))), q
