# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A large SEND_BATCH_MESSAGE is put in slices that yield to the event loop (reference_broker/store/append.py).

The worst case of the hostile-input report: a batch of the most one-byte messages the 4 MiB body
limit lets through (about 90,000: each is stored with the batch's CLUSTER property) cost about
10 µs per message on the loop, a second or more in one piece, while every other connection
waited. Here a watchdog client on another connection asks the broker something every few
milliseconds while the batch is put; its longest wait, counted in the process's CPU time (so that
a loaded machine that does not run the process meanwhile does not count), must be a small part of
the batch's (the pre-slice broker made it wait for almost all of it) and under the hostile tests'
bound.
What the slices must not change is checked too: the batch is stored whole, in one piece of the
CommitLog, its messages at consecutive queue offsets, and a send that came on another connection
while it was put is stored after it, as with Java's put lock.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import pytest

from tests.broker.helpers import (
    client,
    messages,
    pull_request,
    run,
    running_broker,
    send_request,
    wait_until,
)
from wire import RemotingCommand, ResponseCode, decode_command, encode_command
from wire.aio import RemotingConnection
from wire.message import BatchEntry, encode_batch

#: the hostile tests' bound on a watchdog answer while a hostile frame is handled elsewhere
WATCHDOG_BOUND = 1.0

pytestmark = pytest.mark.slow
#: one-byte messages of one batch: 23 bytes of entry each, 45 once stored with CLUSTER
#: (the store's 4 MiB check counts the latter), so this is about as many as one batch may hold
BATCH = 90_000


def _batch_frame(topic: str, n: int) -> bytes:
    body = encode_batch([BatchEntry(body=b"x", properties={}) for _ in range(n)])
    req = send_request(topic, b"", code=320, queue_id=0)
    return encode_command(req.replace(body=body, opaque=7, ext_fields={**req.ext_fields, "i": ""}))


class Watchdog:
    """Asks the broker an unknown request code (answered at once) over and over on its own
    connection, 2 ms apart, and records when each answer came, by the clock and by the process's
    CPU time (broker, clients and worker threads share the process): the CPU time between two
    answers is how long work kept the loop from the watchdog. A gap in which the process did not
    run at all (a loaded machine) held nothing up on the loop, and does not count."""

    def __init__(self, conn: RemotingConnection) -> None:
        self.conn = conn
        self.answered: list[tuple[float, float]] = [(time.monotonic(), time.process_time())]
        self.running = True
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while self.running:
            r = await self.conn.request(RemotingCommand.request(9999), timeout=60)
            assert r.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
            self.answered.append((time.monotonic(), time.process_time()))
            await asyncio.sleep(0.002)

    async def stop(self) -> None:
        """Ends after the request in flight (a cancellation can be lost in Python 3.11's
        ``wait_for``, so the loop is told to stop rather than cancelled)."""
        self.running = False
        await asyncio.wait_for(self.task, 70)
        await self.conn.aclose()

    def worst(self, start: float, end: float) -> float:
        """The most CPU time the process spent between two answers, of the gaps that overlap
        ``start``..``end`` (clock times)."""
        t = self.answered
        return max((b[1] - a[1] for a, b in itertools.pairwise(t) if b[0] >= start and a[0] <= end),
                   default=0.0)


def test_a_batch_of_90000_one_byte_messages_does_not_hold_the_loop(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path, mappedFileSizeCommitLog=str(64 << 20)) as b:
            sender, other, dog_conn = await client(b), await client(b), await client(b)
            first = await sender.request(send_request("SliceTopic", b"before", queue_id=0))
            assert first.code == 0
            frame = _batch_frame("SliceTopic", BATCH)
            dog = Watchdog(dog_conn)
            await asyncio.sleep(0.1)
            reader, writer = await asyncio.open_connection("127.0.0.1", b.port)
            start, start_cpu = time.monotonic(), time.process_time()
            writer.write(frame)

            async def read_answer() -> tuple[bytes, float]:
                head = await reader.readexactly(4)
                data = head + await reader.readexactly(int.from_bytes(head, "big"))
                return data, time.monotonic()

            answering = asyncio.ensure_future(asyncio.wait_for(read_answer(), 120))
            # a send on another connection while the batch is being put: it waits for its turn
            await wait_until(lambda: b.store.puts.in_turns or answering.done(), timeout=60)
            during = asyncio.ensure_future(other.request(send_request("SliceTopic", b"during", queue_id=0),
                                                         timeout=60))
            answer_bytes, end = await answering
            took = time.process_time() - start_cpu  # the CPU the batch's put took, most of it
            after = await during
            await dog.stop()
            writer.close()
            answer = decode_command(answer_bytes)
            assert answer.code == ResponseCode.SUCCESS, (answer.code, answer.remark)
            ids = answer.ext_fields["msgId"].split(",")
            assert len(ids) == BATCH and answer.ext_fields["queueOffset"] == "1"
            # the batch is one piece of the CommitLog: its records follow each other, all one size
            offsets = [int(i[-16:], 16) for i in ids]
            sizes = {b2 - a for a, b2 in itertools.pairwise(offsets)}
            assert len(sizes) == 1, sizes
            assert after.code == ResponseCode.SUCCESS and after.ext_fields["queueOffset"] == str(1 + BATCH)
            assert int(after.ext_fields["msgId"][-16:], 16) > offsets[-1]
            # every message readable at its queue offset, the one sent meanwhile last
            p = await other.request(pull_request("G", "SliceTopic", 0, BATCH, max_nums=8))
            got = messages(p)
            assert [m.queue_offset for m in got] == [BATCH, BATCH + 1]
            assert [m.body for m in got] == [b"x", b"during"]
            assert int(after.ext_fields["msgId"][-16:], 16) == got[1].physical_offset
            worst = dog.worst(start, end)
            assert len(dog.answered) > 10
            assert worst < took / 4, f"the watchdog waited {worst:.3f} s (CPU) of the batch's {took:.3f} s"
            assert worst < WATCHDOG_BOUND, f"the watchdog waited {worst:.3f} s (CPU)"
            for c in (sender, other):
                await c.aclose()

    run(main(), timeout=300)


def test_a_4_mib_batch_of_one_byte_messages_is_refused_without_holding_the_loop(tmp_path: Path) -> None:
    """The reproducer of the hostile-input report: a body just under 4 MiB of one-byte messages
    (182,000 of them) passes the body-length check, but with the batch's CLUSTER property added to
    each message it is over maxMessageSize: MESSAGE_ILLEGAL once every message is checked (3.4 s
    on the loop before the slices)."""
    n = (4 * 1024 * 1024 - 4096) // 23

    async def main() -> None:
        async with running_broker(tmp_path) as b:
            frame = _batch_frame("SliceTopic", n)
            assert len(frame) < 4 * 1024 * 1024 + 1024
            dog = Watchdog(await client(b))
            await asyncio.sleep(0.1)
            reader, writer = await asyncio.open_connection("127.0.0.1", b.port)
            start, start_cpu = time.monotonic(), time.process_time()
            writer.write(frame)
            head = await asyncio.wait_for(reader.readexactly(4), 120)
            answer = decode_command(head + await reader.readexactly(int.from_bytes(head, "big")))
            end, took = time.monotonic(), time.process_time() - start_cpu
            await dog.stop()
            writer.close()
            assert answer.code == ResponseCode.MESSAGE_ILLEGAL, (answer.code, answer.remark)
            assert b.store.commitlog.max_offset == 0  # nothing of it stored
            worst = dog.worst(start, end)
            assert worst < took / 4, f"the watchdog waited {worst:.3f} s (CPU) of the batch's {took:.3f} s"
            assert worst < WATCHDOG_BOUND, f"the watchdog waited {worst:.3f} s (CPU)"

    run(main(), timeout=300)

