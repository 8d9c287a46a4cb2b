# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Expired files: CommitLog files older than fileReservedTime go at the deleteWhen hour (never the
last one, ten at most per run), then the consume-queue and index files before the new minimum."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

from reference_broker.store import GetStatus, MessageStore
from tests.store.storeutil import commitlog_files, cq_files, message, run, small_config

HOUR = 3_600_000


def _at_local_hour(hour: int) -> int:
    now = datetime.now()
    return int(now.replace(hour=hour, minute=30, second=0, microsecond=0).timestamp() * 1000)


def _age(paths: list[Path], hours: float, now_ms: int) -> None:
    t = (now_ms - hours * HOUR) / 1000
    for p in paths:
        os.utime(p, (t, t))


def test_expired_files_go_at_the_delete_hour_only(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", mapped_file_size_commitlog=1024, mapped_file_size_consume_queue=3 * 20,
                       max_hash_slot_num=5, max_index_num=6, file_reserved_hours=72, delete_when="04;05")

    async def go():
        async with MessageStore(cfg) as s:
            for i in range(30):
                await s.put_message(message(queue_id=0, body=b"x" * 250, keys=f"k{i}"))
            files = commitlog_files(cfg)
            at4 = _at_local_hour(4)
            _age(files[:4], 100, at4)   # expired
            _age(files[4:], 10, at4)    # kept
            before = (len(files), [p.name for p in cq_files(cfg, "TopicTest", 0)], sorted(os.listdir(cfg.index_dir)))
            noon = s.delete_expired_files(now_ms=_at_local_hour(12))
            at_four = s.delete_expired_files(now_ms=at4)
            again = s.delete_expired_files(now_ms=at4)
            after = ([p.name for p in commitlog_files(cfg)], [p.name for p in cq_files(cfg, "TopicTest", 0)],
                     sorted(os.listdir(cfg.index_dir)))
            return (before, noon, at_four, again, after, s.commitlog_min_offset(), s.min_offset("TopicTest", 0),
                    s.get_messages("g", "TopicTest", 0, 0, 32), s.query_message("TopicTest", "k29", 8, 0, 2**62))
    before, noon, at_four, again, after, cl_min, q_min, old_get, newest = run(go())
    assert noon == 0 and at_four == 4 and again == 0
    assert after[0][0] == f"{4 * 1024:020d}" and cl_min == 4 * 1024
    # ConsumeQueue files whose last unit points before the new minimum are gone
    assert len(after[1]) < len(before[1])
    assert len(after[2]) < len(before[2]) and len(after[2]) >= 1
    assert q_min > 0 and old_get.status is GetStatus.OFFSET_TOO_SMALL and old_get.next_begin_offset == q_min
    assert len(newest) == 1


def test_never_the_last_file_and_ten_at_most(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", mapped_file_size_commitlog=512, file_reserved_hours=1)

    async def go():
        async with MessageStore(cfg) as s:
            for _i in range(15):
                await s.put_message(message(queue_id=0, body=b"y" * 200))
            now = int(time.time() * 1000)
            _age(commitlog_files(cfg), 5, now)
            n = len(commitlog_files(cfg))
            first = s.delete_expired_files(now_ms=now, force=True)
            rest = s.delete_expired_files(now_ms=now, force=True)
            last = s.delete_expired_files(now_ms=now, force=True)
            return n, first, rest, last, len(commitlog_files(cfg)), s.max_offset("TopicTest", 0)
    n, first, rest, last, left, qmax = run(go())
    # one record per file
    assert (n, first, rest, last, left) == (15, 10, 4, 0, 1)
    assert qmax == 15
