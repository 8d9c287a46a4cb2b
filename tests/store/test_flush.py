# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Flushing: group commit in SYNC_FLUSH (a put returns once a sync covers it; concurrent puts
share syncs; FLUSH_DISK_TIMEOUT keeps the message), WAIT=false, and the ASYNC_FLUSH period."""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from pathlib import Path

import pytest

from reference_broker.store import GetStatus, MessageStore, PutStatus
from reference_broker.store.mapped_file import MappedFile
from tests.store.storeutil import message, run, small_config
from wire.store import decode_checkpoint


def test_sync_flush_put_returns_after_the_flush_covers_it(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH")

    async def go():
        async with MessageStore(cfg) as s:
            out = []
            for i in range(10):
                r = await s.put_message(message(body=b"durable %d" % i))
                out.append((r.status, s.flushed_offset >= r.wrote_offset + r.wrote_bytes))
            return out, s.flush_count
    out, syncs = run(go())
    assert out == [(PutStatus.PUT_OK, True)] * 10
    assert syncs >= 10


def test_concurrent_puts_share_one_sync(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH", mapped_file_size_commitlog=1 << 20)

    async def go():
        async with MessageStore(cfg) as s:
            before = s.flush_count
            rs = await asyncio.gather(*(s.put_message(message(queue_id=i % 4, body=b"%d" % i)) for i in range(200)))
            return rs, s.flush_count - before, s.flushed_offset, s.commitlog_max_offset()
    rs, syncs, flushed, end = run(go())
    assert all(r.status is PutStatus.PUT_OK for r in rs)
    assert flushed == end
    # all 200 were appended before the flusher ran: one or two syncs cover them
    assert 1 <= syncs <= 3


def test_flush_disk_timeout_keeps_the_message(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH", sync_flush_timeout_ms=0)

    async def go():
        async with MessageStore(cfg) as s:
            r = await s.put_message(message(body=b"late"))
            got = s.get_messages("g", "TopicTest", 0, 0, 32)
            await s.flush()
            return r, got, s.flushed_offset
    r, got, flushed = run(go())
    # syncFlushTimeout passed before the group commit: FLUSH_DISK_TIMEOUT, message stored
    assert r.status is PutStatus.FLUSH_DISK_TIMEOUT and r.ok and r.msg_id
    assert got.status is GetStatus.FOUND and len(got.messages) == 1
    assert flushed == r.wrote_offset + r.wrote_bytes


def test_wait_false_does_not_wait_for_the_flush(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH")

    async def go():
        async with MessageStore(cfg) as s:
            r = await s.put_message(message(body=b"fire and forget", extra={"WAIT": "false"}))
            right_after = s.flushed_offset
            for _ in range(200):
                if s.flushed_offset >= r.wrote_offset + r.wrote_bytes:
                    break
                await asyncio.sleep(0.01)
            return r, right_after, s.flushed_offset
    r, right_after, later = run(go())
    assert r.status is PutStatus.PUT_OK
    assert right_after < r.wrote_offset + r.wrote_bytes <= later


def test_async_flush_runs_on_its_period(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="ASYNC_FLUSH", flush_interval_ms=100)

    async def go():
        async with MessageStore(cfg) as s:
            r = await s.put_message(message(body=b"soon on disk"))
            right_after = s.flushed_offset
            t0 = time.monotonic()
            while s.flushed_offset < r.wrote_offset + r.wrote_bytes:
                await asyncio.sleep(0.01)
            return r, right_after, time.monotonic() - t0, await s.flush()
    r, right_after, waited, flushed = run(go())
    assert r.status is PutStatus.PUT_OK and right_after == 0
    assert waited < 2.0 and flushed == r.wrote_offset + r.wrote_bytes


def test_checkpoint_records_flushed_timestamps(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH")

    async def go():
        async with MessageStore(cfg) as s:
            return [await s.put_message(message(body=b"%d" % i, keys="k")) for i in range(3)]
    rs = run(go())
    raw = cfg.checkpoint_path.read_bytes()
    assert len(raw) == 4096
    cp = decode_checkpoint(raw)
    assert cp.physic_msg_timestamp == cp.logics_msg_timestamp == rs[-1].store_timestamp
    assert cp.index_msg_timestamp == rs[-1].store_timestamp


def test_waiters_past_the_timeout_answer_flush_disk_timeout_and_later_puts_flush(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH", sync_flush_timeout_ms=100,
                       mapped_file_size_commitlog=1 << 20)

    async def go():
        async with MessageStore(cfg) as s:
            loop = asyncio.get_running_loop()
            # holding the flush lock stands for a sync slower than syncFlushTimeout
            await s.flusher.lock.acquire()
            try:
                t0 = loop.time()
                first = await asyncio.gather(*(s.put_message(message(body=b"%d" % i)) for i in range(5)))
                waited = loop.time() - t0
                second = await s.put_message(message(body=b"second"))
            finally:
                s.flusher.lock.release()
            # a real sync on a loaded machine may take longer than 100 ms: the later put gets time
            s.flusher.sync_flush_timeout = 60.0
            after = await s.put_message(message(body=b"after"))
            got = s.get_messages("g", "TopicTest", 0, 0, 32)
            return first, waited, second, after, got, s.flushed_offset, s.commitlog_max_offset()
    first, waited, second, after, got, flushed, end = run(go())
    # mirrors FlushDiskWatcher: each put is answered once its deadline passes, the message stays
    assert [r.status for r in first] == [PutStatus.FLUSH_DISK_TIMEOUT] * 5 and all(r.msg_id for r in first)
    assert waited >= 0.09
    assert second.status is PutStatus.FLUSH_DISK_TIMEOUT  # the watchdog re-arms for a later put
    assert after.status is PutStatus.PUT_OK and flushed == end == after.wrote_offset + after.wrote_bytes
    assert got.status is GetStatus.FOUND and len(got.messages) == 7


def test_flushes_keep_up_with_puts_that_arrive_during_a_sync(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH", mapped_file_size_commitlog=1 << 20)

    async def go():
        async with MessageStore(cfg) as s:
            async def producer(w: int) -> list[PutStatus]:
                return [(await s.put_message(message(queue_id=w % 4, body=b"%d-%d" % (w, i)))).status
                        for i in range(25)]
            before = s.flush_count
            statuses = await asyncio.gather(*(producer(w) for w in range(16)))
            return statuses, s.flush_count - before, s.flushed_offset, s.commitlog_max_offset()
    statuses, syncs, flushed, end = run(go())
    assert all(st is PutStatus.PUT_OK for ss in statuses for st in ss)
    assert flushed == end
    # 16 producers waiting for their syncs: each sync covers several of them (400 puts)
    assert syncs <= 200


def test_a_failed_group_commit_sync_answers_nobody_and_the_next_one_does(tmp_path: Path,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH", sync_flush_timeout_ms=30_000)
    failures = []
    real_sync = MappedFile.sync

    def failing_once(self: MappedFile) -> None:
        if not failures:
            failures.append(self.path.name)
            raise OSError(errno.EIO, "Input/output error")
        real_sync(self)

    async def go() -> tuple[PutStatus, bool, int, int]:
        async with MessageStore(cfg) as s:
            MappedFile.sync = failing_once  # type: ignore[method-assign]
            try:
                put = s.put_message(message(body=b"retried"))
                task = asyncio.ensure_future(put)
                for _ in range(500):
                    if failures:
                        break
                    await asyncio.sleep(0.002)
                # the failed sync covered nobody: the put still waits, its record not flushed
                await asyncio.sleep(0.02)
                waiting = not task.done()
                r = await asyncio.wait_for(task, 10)
            finally:
                MappedFile.sync = real_sync  # type: ignore[method-assign]
            return r.status, waiting, s.flushed_offset, r.wrote_offset + r.wrote_bytes

    with caplog.at_level(logging.WARNING, logger="reference_broker.store"):
        status, waiting, flushed, end = run(go())
    assert failures and waiting
    assert status is PutStatus.PUT_OK and flushed >= end
    assert any("CommitLog flush" in r.getMessage() and "Input/output error" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]
