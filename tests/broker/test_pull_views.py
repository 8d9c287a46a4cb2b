# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Pull answers written from views of the mapped CommitLog (store/pull_views.py, wire.aio.Gathered)
against the careful path (Reads.get_messages, bytes per record): the same bytes on the wire for
the same pulls, across CommitLog file ends, with tag and SQL92 filters, in both serialize types,
while messages are still being appended; and answers that stay whole when the files they were
read from are cut or deleted while the socket has not taken them yet."""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import struct
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from reference_broker.broker import Broker
from reference_broker.store.mapped_file import MappedFile
from wire import RemotingCommand, SerializeType, decode_command, encode_command
from wire.aio import RemotingConnection
from wire.message import decode_messages

from .helpers import client, pull_request, running_broker, send_request, wait_until

TOPIC = "ViewTopic"
GROUP = "ViewGroup"
QUEUES = 4
_LEN = struct.Struct(">i")


def _loops() -> list[Any]:
    loops: list[Any] = [pytest.param(asyncio.new_event_loop, id="asyncio")]
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        return loops
    return [*loops, pytest.param(uvloop.new_event_loop, id="uvloop")]


def run_on(new_loop: Callable[[], asyncio.AbstractEventLoop], coro: Any, timeout: float = 120) -> Any:
    loop = new_loop()
    try:
        return loop.run_until_complete(asyncio.wait_for(coro, timeout))
    finally:
        loop.close()


class RawClient:
    """A socket that writes request frames and reads answer frames as raw bytes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, port: int, rcvbuf: int | None = None) -> AsyncIterator[RawClient]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        reader, writer = await asyncio.open_connection(sock=sock)
        try:
            yield cls(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def send(self, *reqs: RemotingCommand) -> None:
        self.writer.write(b"".join(encode_command(r) for r in reqs))
        await self.writer.drain()

    async def frame(self) -> bytes:
        head = await self.reader.readexactly(4)
        return head + await self.reader.readexactly(_LEN.unpack(head)[0])

    async def ask(self, req: RemotingCommand) -> bytes:
        await self.send(req)
        return await self.frame()


async def _store(conn: RemotingConnection, rng: random.Random, count: int) -> None:
    """``count`` messages of 1 B to 3 KiB: mostly queues in turns, sometimes a run to one queue
    (adjacent records of one queue), tags from a small set."""
    sends = []
    q = 0
    while len(sends) < count:
        run = rng.choice((1, 1, 1, 2, 5))
        for _ in range(run):
            body = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 3072)))
            sends.append(send_request(TOPIC, body, queue_id=q, tags=rng.choice(("TagA", "TagB", "TagC")),
                                      keys=f"k{len(sends)}", extra_props={"n": str(len(sends) % 7)}))
        q = (q + 1) % QUEUES
    for r in await asyncio.gather(*(conn.request(s) for s in sends[:count])):
        assert r.code == 0, r


class Paths:
    """Switches the broker between the view path and the careful path, and counts the views."""

    def __init__(self, b: Broker) -> None:
        self.store = b.store
        self.fast = self.store.get_message_views
        self.served = 0

        def counting(*args: Any, **kw: Any) -> Any:
            found = self.fast(*args, **kw)
            if found is not None:
                self.served += 1
            return found

        self.counting = counting

    def careful(self) -> None:
        self.store.get_message_views = lambda *a, **k: None  # type: ignore[method-assign]

    def views(self) -> None:
        self.store.get_message_views = self.counting  # type: ignore[method-assign]


def _pulls(rng: random.Random, max_offsets: list[int]) -> list[RemotingCommand]:
    reqs = []
    for q in range(QUEUES):
        top = max_offsets[q]
        for offset in sorted({0, 1, top - 1, top, top + 3, *rng.sample(range(top), min(top, 12))}):
            sub, flag_type = rng.choice((("*", "TAG"), ("*", "TAG"), ("", "TAG"), ("TagA || TagC", "TAG"),
                                          ("n > 2", "SQL92")))
            st = rng.choice((SerializeType.JSON, SerializeType.JSON, SerializeType.ROCKETMQ))
            r = pull_request(GROUP, TOPIC, q, offset, max_nums=rng.choice((1, 3, 32, 100)), subscription=sub,
                             serialize_type=st)
            ext = dict(r.ext_fields)
            ext["expressionType"] = flag_type
            reqs.append(RemotingCommand.request(11, ext, serialize_type=st, opaque=len(reqs) + 1))
    return reqs


async def _max_offsets(b: Broker) -> list[int]:
    return [b.store.max_offset(TOPIC, q) for q in range(QUEUES)]


@pytest.mark.parametrize("new_loop", _loops())
def test_views_and_careful_path_write_the_same_bytes(tmp_path: Path, new_loop: Any) -> None:
    async def main() -> None:
        rng = random.Random(16)
        # 64 KiB CommitLog files: many pulls run into a file's end; the in-memory limits of
        # Java's defaults, and a byte limit a pull of 32 large records reaches
        async with running_broker(tmp_path, mappedFileSizeCommitLog=str(64 * 1024), enablePropertyFilter="true",
                                  maxTransferBytesOnMessageInMemory=str(40 * 1024)) as b:
            conn = await client(b)
            paths = Paths(b)
            try:
                async with RawClient.open(b.port) as raw:
                    compared = 0
                    for _ in range(4):
                        await _store(conn, rng, 150)
                        # appends go on meanwhile: each pull is asked both ways in a row, with
                        # sends to the same queues between pairs (pulls at the old head see them)
                        for req in _pulls(rng, await _max_offsets(b)):
                            await _store(conn, rng, rng.choice((0, 0, 1, 3)))
                            paths.views()
                            fast = await raw.ask(req)
                            paths.careful()
                            careful = await raw.ask(req)
                            assert fast == careful, (req, len(fast), len(careful))
                            compared += 1
                    assert compared > 200
                    assert paths.served > 40, paths.served  # the view path answered many of them
            finally:
                paths.views()
                await conn.aclose()

    run_on(new_loop, main())


@pytest.mark.parametrize("careful", [False, True])
def test_the_in_memory_byte_limit_is_the_configured_one(tmp_path: Path, careful: bool) -> None:
    """``maxTransferBytesOnMessageInMemory`` bounds a pull's bytes (the first record always goes)."""

    async def main() -> None:
        async with running_broker(tmp_path, maxTransferBytesOnMessageInMemory="4096") as b:
            conn = await client(b)
            paths = Paths(b)
            if careful:
                paths.careful()
            else:
                paths.views()
            try:
                for body in (b"a" * 1500, b"b" * 1500, b"c" * 1500, b"d" * 5000, b"e" * 10):
                    assert (await conn.request(send_request(TOPIC, body, queue_id=0))).code == 0
                got = []
                offset = 0
                while offset < 5:
                    r = await conn.request(pull_request(GROUP, TOPIC, 0, offset))
                    assert r.code == 0, r
                    got.append(len(decode_messages(r.body or b"")))
                    offset = int(r.ext_fields["nextBeginOffset"])
                # two records of ~1.7 KB fit 4 KiB, a third would not; the third goes alone (the
                # 5 KB record after it would pass the limit), the 5 KB one alone (it is first)
                assert got == [2, 1, 1, 1]
                assert paths.served == (0 if careful else 4)
            finally:
                paths.views()
                await conn.aclose()

    run_on(asyncio.new_event_loop, main())


def test_found_head_is_the_careful_encoding() -> None:
    from reference_broker.broker.processors.pull import found_head
    from wire.remoting import encode_command_head

    for st in SerializeType:
        req = pull_request(GROUP, TOPIC, 1, 5, serialize_type=st).replace(opaque=2_000_000_123)
        for suggest, nxt, lo, hi, size in ((0, 37, 0, 37, 1234), (1, 2**40, 2**33, 2**41, 0)):
            ext = {"suggestWhichBrokerId": str(suggest), "nextBeginOffset": str(nxt), "minOffset": str(lo),
                   "maxOffset": str(hi)}
            want = encode_command_head(req.response(0, "FOUND", ext, b"x" * size) if size
                                       else req.response(0, "FOUND", ext))
            assert found_head(req, suggest, nxt, lo, hi, size) == want


def test_a_mapped_file_closes_and_deletes_under_live_views(tmp_path: Path) -> None:
    f = MappedFile(tmp_path / f"{0:020d}", 1 << 16, create=True)
    f.append(b"record one|record two")
    view = memoryview(f.mm).toreadonly()[11:21]
    f.destroy()  # close and unlink while the view is alive: the mapping stays until it goes
    assert f.closed
    assert not f.path.exists()
    assert bytes(view) == b"record two"
    view.release()


@pytest.mark.parametrize("new_loop", _loops())
@pytest.mark.parametrize("change", ["cut", "drop"])
def test_answers_the_socket_has_not_taken_survive_a_cut_commitlog(tmp_path: Path, new_loop: Any,
                                                                  change: str) -> None:
    """A consumer that does not read: the broker answers its pulls until the transport's buffer
    is full, and the answers wait there. Then the CommitLog is cut (its tail zeroed: HA's
    truncation) or all its files dropped (unmapped and deleted). The waiting answers are the
    records as they were when read."""

    async def main() -> None:
        async with running_broker(tmp_path) as b:
            conn = await client(b)
            try:
                sends = [send_request(TOPIC, bytes([i % 251]) * 1000, queue_id=i % QUEUES) for i in range(1600)]
                for r in await asyncio.gather(*(conn.request(s) for s in sends)):
                    assert r.code == 0
                distinct = [pull_request(GROUP, TOPIC, q, off) for off in range(0, 400, 32) for q in range(QUEUES)]
                expected = []
                async with RawClient.open(b.port) as reading:
                    for i, r in enumerate(distinct):
                        expected.append(decode_command(await reading.ask(r.replace(opaque=i + 1))))
                assert all(e.code == 0 and e.body for e in expected)
                reqs = [distinct[i % len(distinct)].replace(opaque=i + 1) for i in range(12 * len(distinct))]
                found_before = b.store.stats.get_found_total
                assert b._server is not None
                before = set(b._server.connections)
                async with RawClient.open(b.port, rcvbuf=8192) as stalled:
                    await stalled.send(*reqs)
                    await wait_until(lambda: len(b._server.connections - before) == 1)  # type: ignore[union-attr]
                    server_side = [c for c in b._server.connections if c not in before]
                    assert len(server_side) == 1
                    transport = server_side[0]._transport
                    assert transport is not None
                    loop = asyncio.get_running_loop()
                    end = loop.time() + 20
                    # answered until the transport holds what the socket did not take
                    while transport.get_write_buffer_size() == 0 or b.store.stats.get_found_total == found_before:
                        assert loop.time() < end, "the stalled connection's answers never backed up"
                        await asyncio.sleep(0.01)
                    await asyncio.sleep(0.2)
                    answered = b.store.stats.get_found_total - found_before
                    assert answered >= 2 and transport.get_write_buffer_size() > 0
                    first = b.store.commitlog_min_offset()
                    # the first record and no more (its tail zeroed), or every file deleted
                    b.store.truncate_commitlog(first + _record_size(expected[0]) if change == "cut" else first)
                    assert b.store.commitlog_max_offset() < first + 2000
                    for i in range(answered):
                        got = decode_command(await stalled.frame())
                        want = expected[i % len(distinct)]
                        assert got.opaque == i + 1
                        assert (got.code, got.remark, got.ext_fields) == (want.code, want.remark, want.ext_fields)
                        assert got.body == want.body, i
            finally:
                await conn.aclose()

    run_on(new_loop, main())


def _record_size(answer: RemotingCommand) -> int:
    """The size of the first stored record in a PULL answer's body (its TOTALSIZE)."""
    assert answer.body is not None
    return int(_LEN.unpack_from(answer.body, 0)[0])
