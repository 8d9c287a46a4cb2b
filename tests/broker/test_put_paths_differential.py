# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The batch paths of the put against the one-at-a-time path: the same load, answers and bytes identical.

A bounded load (a few seconds): sends pipelined on one connection, single messages to four
queues with SEND_BATCH_MESSAGEs among them, runs against a broker whose store puts every batch
in one piece and answers each waiting send by a coroutine of its own (the one-at-a-time path),
and against the batch paths: sends answered by the callbacks of their group commit's one future
(``PutService.deferred``), batches of more than 8 messages made in slices with the sends behind
them waiting for their turn as tasks (``PutService.slice``), and both. Every answer's opaque, its place in the connection's order, code, msgId, queue id
and queue offset must be the same, and so must the CommitLog's bytes (all but each record's store
timestamp and the two ports, the client's and the broker's, which differ from run to run). A second load, four connections
at once, checks what must hold whatever the interleaving: each connection's answers come in its
request order and each queue's offsets in the order of its sends.
"""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

import pytest

from tests.broker.helpers import run, running_broker, send_request
from wire import FrameBuffer, RemotingCommand, decode_frame, encode_command
from wire.message import BatchEntry, encode_batch

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
        else:
            req = send_request("DiffTopic", f"m{conn}-{i}".encode() * (1 + i % 7), queue_id=i % QUEUES,
                               keys=f"key{i}", uniq=f"{conn:08X}{i:024X}", tags="TagA")
        frames.append(encode_command(req.replace(opaque=opaque)))
    return frames


async def _drive(port: int, frames: list[bytes]) -> list[RemotingCommand]:
    """Send ``frames`` keeping WINDOW in flight; the answers in the order they came."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    answers: list[RemotingCommand] = []
    fb = FrameBuffer()
    sent = 0
    while sent < min(WINDOW, len(frames)):
        writer.write(frames[sent])
        sent += 1
    while len(answers) < len(frames):
        data = await asyncio.wait_for(reader.read(1 << 16), 60)
        assert data, "the broker closed the connection"
        fb.feed(data)
        while (frame := fb.next_frame()) is not None:
            answers.append(decode_frame(frame))
            if sent < len(frames):
                writer.write(frames[sent])
                sent += 1
    writer.close()
    return answers


def _masked_commitlog(root: Path) -> bytes:
    """The CommitLog's bytes up to its end, each record's born port and store timestamp zeroed."""
    data = bytearray()
    for f in sorted((root / "commitlog").iterdir()):
        data += f.read_bytes()
    pos = 0
    while pos + 8 <= len(data):
        size, magic = struct.unpack_from(">iI", data, pos)
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


def _one_connection(root: Path, flush: str, *, slice_size: int, deferred: bool) -> tuple[list[tuple[object, ...]], bytes]:
    async def main() -> list[RemotingCommand]:
        async with running_broker(root, flushDiskType=flush, mappedFileSizeCommitLog=str(4 << 20)) as b:
            b.store.puts.slice = slice_size
            b.store.puts.deferred = deferred
            return await _drive(b.port, _requests(0))

    answers = run(main(), timeout=120)
    return _summary(answers), _masked_commitlog(root)


#: the batch paths, each compared with the one-at-a-time path: answers made by the group commit's
#: future (deferred), and large puts made in slices with the puts behind them in turn
PATHS = {"deferred": {"slice_size": 10**9, "deferred": True},
         "sliced": {"slice_size": 8, "deferred": False},
         "both": {"slice_size": 8, "deferred": True}}


@pytest.mark.parametrize("flush", ["ASYNC_FLUSH", "SYNC_FLUSH"])
@pytest.mark.parametrize("path", sorted(PATHS))
def test_batch_paths_answer_and_store_as_one_at_a_time(tmp_path: Path, flush: str, path: str) -> None:
    plain, plain_bytes = _one_connection(tmp_path / "plain", flush, slice_size=10**9, deferred=False)
    other, other_bytes = _one_connection(tmp_path / path, flush, **PATHS[path])  # type: ignore[arg-type]
    assert len(plain) == REQUESTS and all(code == 0 for _, code, *_ in plain), plain[:3]
    # in the connection's order, as sent
    assert [a[0] for a in plain] == [i + 1 for i in range(REQUESTS)]
    assert other == plain
    assert len(other_bytes) == len(plain_bytes)
    assert other_bytes == plain_bytes


def test_sliced_puts_keep_each_connections_order_under_concurrency(tmp_path: Path) -> None:
    async def main() -> list[list[RemotingCommand]]:
        async with running_broker(tmp_path, mappedFileSizeCommitLog=str(4 << 20)) as b:
            b.store.puts.slice = 8
            return list(await asyncio.gather(*(_drive(b.port, _requests(c, 300)) for c in range(4))))

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
