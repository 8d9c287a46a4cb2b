# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A SYNC_MASTER in SYNC_FLUSH answers one connection's sends in their order, whichever of the
group commit and the slave's ack ends a put's wait, and whenever the flush thread's answer lands.

A put there waits for two shared futures: its group commit's (one for the puts of a flush) and
its slaves' (one for the puts of a loop pass). Its own future is done when both are, and its
answer follows. The interleaving pinned here is one the full suite met once on CI: the slave
acks the puts of one read (the flush still running), then the puts of the next read; the flush
thread, which covers both reads, hands its completion to the loop while that second ack is being
read. The flush's future is then done before its callbacks have run for the earlier puts, while
the second ack's callback for the later put is already queued ahead of them: a put that looks at
whether the other future is done, rather than waiting for that future's callback to reach it,
answers the later send first.

Everything is real (sockets, the loop, the broker's flush thread, a slave connection) except the
moments: the test holds each CommitLog sync until it lets it end, and lets one end from inside
the broker's ack handling, just before the ack is applied (as the flush thread does when the
disk answers while the loop reads the ack).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reference_broker.broker import Broker
from reference_broker.store._syncer import SyncThread
from tests.broker.helpers import broker_config, read_frames, run, send_request, wait_until
from tests.ha.fakes import FakeSlave
from tests.javakit import free_broker_port
from wire import FrameBuffer, encode_command

#: the put paths: one coroutine a send (plain), the group commit's future answering by callback
#: (deferred), the sends of one read put as a run (runs)
PATHS = {"plain": (False, False), "deferred": (True, False), "runs": (True, True)}


class _HeldSyncs:
    """The CommitLog's flush thread with each sync held until :meth:`let_one` lets it end; that
    returns once the thread has handed the sync's completion to the loop."""

    def __init__(self, syncer: SyncThread) -> None:
        self._syncer = syncer
        self._real: Callable[[Any], None] = syncer._do
        self._go = threading.Semaphore(0)
        self._queued = threading.Semaphore(0)
        self._held = True
        self.waiting = 0
        syncer._do = self._do  # type: ignore[method-assign]

    def _do(self, job: Any) -> None:
        if self._held:
            self.waiting += 1
            assert self._go.acquire(timeout=30), "a held sync was never let go"
            self.waiting -= 1
        self._real(job)  # the sync, then call_soon_threadsafe of its completion
        self._queued.release()

    def let_one(self) -> None:
        self._go.release()
        assert self._queued.acquire(timeout=30), "the flush thread did not finish the sync"

    def free(self) -> None:
        self._held = False
        self._go.release(1000)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_an_ack_read_as_the_flush_ends_keeps_the_answers_in_order(tmp_path: Path, path: str) -> None:
    deferred, runs = PATHS[path]

    async def main() -> list[int]:
        config = broker_config(tmp_path, "", brokerRole="SYNC_MASTER", flushDiskType="SYNC_FLUSH",
                               slaveTimeout="30000", syncFlushTimeout="30000")
        async with Broker(config, host="127.0.0.1", port=free_broker_port()) as b:
            ha = b.ha
            assert ha is not None
            b.store.puts.deferred = deferred
            b.store.puts.runs = runs
            b.batch_sends = runs
            slave = await FakeSlave.attach(b)
            syncs = _HeldSyncs(b.store.flusher._cl_syncer)
            reader, writer = await asyncio.open_connection("127.0.0.1", b.port)
            fb = FrameBuffer()
            try:
                async def put(opaque: int, ack: bool) -> int:
                    """Send one message on its own (one read, one loop pass); once the slave
                    holds it, ack it if told to and wait until that released its put."""
                    before = b.store.commitlog_max_offset()
                    req = send_request("OrderTopic", b"m%d" % opaque, uniq=f"{opaque:032X}")
                    writer.write(encode_command(req.replace(opaque=opaque)))
                    await writer.drain()
                    await wait_until(lambda: slave.end == b.store.commitlog_max_offset() > before)
                    if ack:
                        released = ha.waiters.released
                        await slave.report(slave.end)
                        await wait_until(lambda: ha.waiters.released > released)
                    return slave.end

                # put 1 starts a sync that is held: puts 2 and 3 come while it runs, so the next
                # sync covers them both
                await put(1, ack=True)
                await wait_until(lambda: syncs.waiting == 1)
                await put(2, ack=True)  # acked while its flush has not even begun
                end3 = await put(3, ack=False)
                syncs.let_one()  # put 1's sync ends: put 1 is answered, the sync of 2 and 3 begins
                first = await read_frames(reader, fb, 1)
                assert [a.opaque for a in first] == [1], first
                await wait_until(lambda: syncs.waiting == 1)

                real_acked = ha._acked

                def acked(conn: Any, ack: int) -> None:
                    if ack >= end3:
                        # the disk answers while the loop reads the ack of put 3
                        syncs.let_one()
                    real_acked(conn, ack)

                ha._acked = acked  # type: ignore[method-assign]
                await slave.report(end3)
                answers = await read_frames(reader, fb, 2)
                assert all(a.code == 0 for a in answers), answers
                return [a.opaque for a in answers]
            finally:
                syncs.free()
                writer.close()
                await slave.close()

    assert run(main(), timeout=60) == [2, 3]
