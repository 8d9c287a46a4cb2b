# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Group commit (SYNC_FLUSH) under pipelined sends from several connections at once: the sends of
one read are put as a run, and a run's waiting sends are answered together by the flush that
covers them. Each send that waits (WAIT=true) is answered SEND_OK only once the CommitLog is
flushed past its record, none while no flush can end, and FLUSH_DISK_TIMEOUT when no flush came
within syncFlushTimeout (stored all the same); a WAIT=false send is answered as soon as it is
stored. Observed with a real broker, real sockets, and the records read back from the CommitLog's
files on disk."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Callable
from pathlib import Path

from reference_broker.broker import Broker
from tests.broker.helpers import run, running_broker, send_request
from wire import FrameBuffer, RemotingCommand, ResponseCode, decode_frame, encode_command
from wire.message import decode_offset_msg_id

CONNS = 6
WINDOW = 32
PER_CONN = 400
FILE_SIZE = 256 << 10


def _no_wait(i: int) -> bool:
    return i % 5 == 3


def _frames(conn: int) -> list[bytes]:
    frames = []
    for i in range(PER_CONN):
        extra = {"WAIT": "false"} if _no_wait(i) else None
        req = send_request("GroupTopic", b"c%d-m%d;" % (conn, i) * (1 + i % 9), queue_id=i % 4,
                           keys=f"k{conn}-{i}", extra_props=extra)
        frames.append(encode_command(req.replace(opaque=conn * 100_000 + i + 1)))
    return frames


def _record(root: Path, offset: int) -> bytes:
    """The record at CommitLog ``offset``, read from its file on disk."""
    f = root / "store" / "commitlog" / f"{offset - offset % FILE_SIZE:020d}"
    with f.open("rb") as fh:
        fh.seek(offset % FILE_SIZE)
        size = struct.unpack(">i", fh.read(4))[0]
        fh.seek(offset % FILE_SIZE)
        return fh.read(size)


class _Producer(asyncio.Protocol):
    """Keeps WINDOW sends in flight, the sends answered by one read replaced in one write (so
    that the broker reads many at once); ``check(answer)`` runs as each answer arrives."""

    def __init__(self, frames: list[bytes], check: Callable[[RemotingCommand], None]) -> None:
        self.frames = frames
        self.check = check
        self.fb = FrameBuffer()
        self.sent = 0
        self.answers: list[RemotingCommand] = []
        self.done = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self.paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.sent = WINDOW
        transport.write(b"".join(self.frames[:WINDOW]))

    def data_received(self, data: bytes) -> None:
        self.fb.feed(data)
        got = 0
        while (frame := self.fb.next_frame()) is not None:
            answer = decode_frame(frame)
            self.check(answer)
            self.answers.append(answer)
            got += 1
        more = min(len(self.frames), self.sent + got)
        if more > self.sent and not self.paused:
            assert self.transport is not None
            self.transport.write(b"".join(self.frames[self.sent:more]))
            self.sent = more
        if len(self.answers) == len(self.frames) and not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(ConnectionError(f"the broker closed the connection: {exc}"))


def _check_stored(root: Path, answers: list[RemotingCommand]) -> None:
    for a in answers:
        rec = _record(root, decode_offset_msg_id(a.ext_fields["msgId"]).offset)
        conn, i = divmod(a.opaque - 1, 100_000)
        assert b"c%d-m%d;" % (conn, i) in rec, (a.opaque, rec[:80])


def test_every_waiting_send_is_answered_after_a_flush_that_covers_it(tmp_path: Path) -> None:
    #: answers that came too early (a record end past the flushed offset) or not SUCCESS
    wrong: list[tuple[int, int, int]] = []

    async def main() -> tuple[list[list[RemotingCommand]], int, int, int]:
        async with running_broker(tmp_path / "store", flushDiskType="SYNC_FLUSH", syncFlushTimeout="60000",
                                  mappedFileSizeCommitLog=str(FILE_SIZE)) as b:
            store = b.store

            def check(answer: RemotingCommand) -> None:
                # (checked as each answer arrives; an assert here would only be logged)
                if answer.code != ResponseCode.SUCCESS:
                    wrong.append((answer.opaque, answer.code, -1))
                elif not _no_wait((answer.opaque - 1) % 100_000):
                    offset = decode_offset_msg_id(answer.ext_fields["msgId"]).offset
                    end = offset + len(_record(tmp_path, offset))
                    if store.flushed_offset < end:
                        wrong.append((answer.opaque, end, store.flushed_offset))

            loop = asyncio.get_running_loop()
            flusher = store.flusher
            assert flusher.lock is not None
            # first no flush can end (the flush lock stands for a slow disk): only the WAIT=false
            # sends of each connection's first window are answered, every one of them
            await flusher.lock.acquire()
            try:
                producers = []
                for c in range(CONNS):
                    _, p = await loop.create_connection(lambda c=c: _Producer(_frames(c), check),
                                                        "127.0.0.1", b.port)
                    p.paused = True
                    producers.append(p)
                expected = CONNS * sum(1 for i in range(WINDOW) if _no_wait(i))
                await _until(lambda: sum(len(p.answers) for p in producers) >= expected)
                await _settle(store.commitlog_max_offset)
                assert all(_no_wait((a.opaque - 1) % 100_000) for p in producers for a in p.answers)
                assert sum(len(p.answers) for p in producers) == expected
                # the waiting sends are stored, not yet flushed
                assert store.flushed_offset < store.commitlog_max_offset()
                flushes = store.flush_count
            finally:
                flusher.lock.release()
            for p in producers:
                p.paused = False
                assert p.transport is not None
                more = min(len(p.frames), p.sent + len(p.answers))
                p.transport.write(b"".join(p.frames[p.sent:more]))
                p.sent = more
            await asyncio.wait_for(asyncio.gather(*(p.done for p in producers)), 60)
            for p in producers:
                assert p.transport is not None
                p.transport.close()
            return ([p.answers for p in producers], store.flush_count - flushes, b.store.puts.run_messages,
                    _waiting_puts(b))

    per_conn, flushes, run_messages, still_waiting = run(main(), timeout=120)
    assert wrong == []
    for c, answers in enumerate(per_conn):
        assert sorted(a.opaque for a in answers) == [c * 100_000 + i + 1 for i in range(PER_CONN)]
        _check_stored(tmp_path, answers)
    waiting = CONNS * sum(1 for i in range(PER_CONN) if not _no_wait(i))
    # the sends were put as runs, and the flushes were shared: far fewer than the waiting sends
    assert run_messages > CONNS * PER_CONN // 2, run_messages
    assert 1 <= flushes < waiting // 2, (flushes, waiting)
    assert still_waiting == 0


def test_a_run_not_flushed_within_the_timeout_answers_flush_disk_timeout(tmp_path: Path) -> None:
    async def main() -> list[list[RemotingCommand]]:
        async with running_broker(tmp_path / "store", flushDiskType="SYNC_FLUSH", syncFlushTimeout="300",
                                  mappedFileSizeCommitLog=str(FILE_SIZE)) as b:
            loop = asyncio.get_running_loop()
            assert b.store.flusher.lock is not None
            await b.store.flusher.lock.acquire()  # no flush ends: every waiting send times out
            try:
                producers = []
                for c in range(2):
                    _, p = await loop.create_connection(lambda c=c: _Producer(_frames(c)[:WINDOW], _ignore),
                                                        "127.0.0.1", b.port)
                    producers.append(p)
                await asyncio.wait_for(asyncio.gather(*(p.done for p in producers)), 30)
            finally:
                b.store.flusher.lock.release()
            assert b.store.puts.run_messages >= WINDOW
            for p in producers:
                assert p.transport is not None
                p.transport.close()
            return [p.answers for p in producers]

    per_conn = run(main())
    for answers in per_conn:
        assert len(answers) == WINDOW
        for a in answers:
            i = (a.opaque - 1) % 100_000
            want = ResponseCode.SUCCESS if _no_wait(i) else ResponseCode.FLUSH_DISK_TIMEOUT
            assert a.code == want, (a.opaque, a.code, a.remark)
            assert a.ext_fields["msgId"] and a.ext_fields["queueOffset"]
        _check_stored(tmp_path, answers)


def _ignore(answer: RemotingCommand) -> None:
    pass


def _waiting_puts(b: Broker) -> int:
    return len(b.store.flusher._waiters)


async def _until(predicate: Callable[[], bool], timeout: float = 30) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "condition not reached in time"
        await asyncio.sleep(0.01)


async def _settle(max_offset: Callable[[], int]) -> None:
    """Until the broker has stored what was sent (its CommitLog end stops moving) and a few more
    loop passes: an answer due now would have come by then."""
    last = -1
    while (now := max_offset()) != last:
        last = now
        await asyncio.sleep(0.05)
    for _ in range(20):
        await asyncio.sleep(0)
