# Licensed under the Apache License, Version 2.0. See LICENSE.
"""get_messages: each row of DefaultMessageStore.getMessage's status table, with its next offset,
the transfer limits, tag filtering, and the offset/time lookups."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from reference_broker.store import GetStatus, MessageStore, StoreConfig
from tests.store.storeutil import cq_files, message, run, small_config
from wire.message import decode_stored_message, java_string_hash


def _bodies(result) -> list[bytes]:
    return [decode_stored_message(m).body for m in result.messages]


def test_status_rows_and_next_offsets(cfg: StoreConfig) -> None:
    async def go() -> dict:
        async with MessageStore(cfg) as s:
            for i in range(5):
                await s.put_message(message(queue_id=0, body=b"m%d" % i))
            return {
                "unknown_queue": s.get_messages("g", "Nope", 0, 7, 32),
                "found": s.get_messages("g", "TopicTest", 0, 1, 2),
                "overflow_one": s.get_messages("g", "TopicTest", 0, 5, 32),
                "overflow_badly": s.get_messages("g", "TopicTest", 0, 9, 32),
            }
    r = run(go())
    u = r["unknown_queue"]
    assert (u.status, u.next_begin_offset, u.min_offset, u.max_offset) == (GetStatus.NO_MATCHED_LOGIC_QUEUE, 0, 0, 0)
    f = r["found"]
    assert (f.status, f.next_begin_offset, f.min_offset, f.max_offset) == (GetStatus.FOUND, 3, 0, 5)
    assert _bodies(f) == [b"m1", b"m2"] and f.queue_offsets == [1, 2]
    assert f.body == b"".join(f.messages)
    o = r["overflow_one"]
    assert (o.status, o.next_begin_offset, o.messages) == (GetStatus.OFFSET_OVERFLOW_ONE, 5, [])
    b = r["overflow_badly"]
    assert (b.status, b.next_begin_offset) == (GetStatus.OFFSET_OVERFLOW_BADLY, 5)


def test_empty_queue_and_offset_too_small(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", mapped_file_size_commitlog=1024, mapped_file_size_consume_queue=4 * 20)

    async def go() -> tuple:
        async with MessageStore(cfg) as s:
            for _i in range(12):
                await s.put_message(message(topic="Old", queue_id=0, body=b"o" * 200))
            await s.put_message(message(topic="Other", queue_id=0, body=b"n" * 200))
            old = [p for p in sorted(cfg.commitlog_dir.iterdir())][:-1]
            for p in old:
                os.utime(p, (1, 1))
            deleted = s.delete_expired_files(force=True)
            too_small = s.get_messages("g", "Old", 0, 0, 32)
            # a queue whose units all went: truncate everything
            s.truncate_commitlog(0)
            empty = s.get_messages("g", "Old", 0, 3, 32)
            return deleted, too_small, empty
    deleted, too_small, empty = run(go())
    assert deleted > 0
    assert too_small.status is GetStatus.OFFSET_TOO_SMALL
    assert too_small.next_begin_offset == too_small.min_offset > 0
    assert empty.status is GetStatus.NO_MESSAGE_IN_QUEUE and empty.next_begin_offset == 0


def test_message_was_removing(tmp_path: Path) -> None:
    # a queue whose only ConsumeQueue file points into a deleted CommitLog file keeps its
    # minimum (the last queue file is never deleted), so reading it finds the records gone
    cfg = small_config(tmp_path / "s", mapped_file_size_commitlog=1024)

    async def go():
        async with MessageStore(cfg) as s:
            await s.put_message(message(topic="Gone", queue_id=0, body=b"g" * 100))
            for _ in range(6):
                await s.put_message(message(topic="Live", queue_id=0, body=b"l" * 300))
            os.utime(sorted(cfg.commitlog_dir.iterdir())[0], (1, 1))
            assert s.delete_expired_files(force=True) == 1
            return s.get_messages("g", "Gone", 0, 0, 32)
    r = run(go())
    assert r.status is GetStatus.MESSAGE_WAS_REMOVING and r.next_begin_offset == 1 and r.messages == []


def test_offset_found_null_when_a_queue_file_is_missing(cfg: StoreConfig) -> None:
    async def fill():
        async with MessageStore(cfg) as s:
            for i in range(25):
                await s.put_message(message(queue_id=0, body=b"%d" % i))
    run(fill())
    files = cq_files(cfg, "TopicTest", 0)
    assert [p.name for p in files] == [f"{n:020d}" for n in (0, 200, 400)]
    files[1].unlink()

    async def read():
        async with MessageStore(cfg) as s:
            return s.get_messages("g", "TopicTest", 0, 12, 32), s.get_messages("g", "TopicTest", 0, 20, 32)
    missing, after = run(read())
    assert missing.status is GetStatus.OFFSET_FOUND_NULL and missing.next_begin_offset == 20
    assert after.status is GetStatus.FOUND and _bodies(after)[0] == b"20"


def test_tag_filtering_and_no_matched_message(cfg: StoreConfig) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            for i in range(8):
                await s.put_message(message(queue_id=0, body=b"%d" % i, tags="A" if i % 4 == 3 else "B"))
            want = {java_string_hash("A")}
            return (s.get_messages("g", "TopicTest", 0, 0, 32, tags_codes=want),
                    s.get_messages("g", "TopicTest", 0, 0, 32, tags_codes={java_string_hash("C")}),
                    s.get_messages("g", "TopicTest", 0, 0, 1, tags_codes=want))
    both, none, one = run(go())
    assert both.status is GetStatus.FOUND and _bodies(both) == [b"3", b"7"] and both.queue_offsets == [3, 7]
    assert both.next_begin_offset == 8
    assert none.status is GetStatus.NO_MATCHED_MESSAGE and none.next_begin_offset == 8
    # the batch is full after one message: the unit that would be next is where to go on
    assert _bodies(one) == [b"3"] and one.next_begin_offset == 4


def test_one_pull_looks_at_a_bounded_number_of_units_whatever_max_nums_says(tmp_path: Path) -> None:
    """maxMsgNums 2^31-1 and a filter that matches nothing: Java scans to the end of the queue file
    in its pull pool; here the pull runs on the event loop and stops after MAX_SCANNED_UNITS, and
    the consumer goes on from there (a SQL92 filter decodes every record it looks at)."""
    from reference_broker.store import MessageToStore
    from reference_broker.store.reads import MAX_SCANNED_UNITS

    n = MAX_SCANNED_UNITS + 4_000
    cfg = small_config(tmp_path / "s", mapped_file_size_commitlog=64 << 20, mapped_file_size_consume_queue=n * 20)
    looked: list[int] = []

    def nothing(props: object) -> bool:
        looked.append(1)
        return False

    async def go():
        async with MessageStore(cfg) as s:
            for _ in range(n // 500):
                await s.put_messages([MessageToStore("TopicTest", 0, b"x", 1, ("10.0.0.7", 1)) for _ in range(500)])
            return (s.get_messages("g", "TopicTest", 0, 0, 2**31 - 1, tags_codes={java_string_hash("C")}),
                    s.get_messages("g", "TopicTest", 0, 0, 2**31 - 1, properties_filter=nothing),
                    s.get_messages("g", "TopicTest", 0, 0, 32, properties_filter=nothing))
    tags, sql, usual = run(go())
    assert tags.status is GetStatus.NO_MATCHED_MESSAGE and tags.next_begin_offset == MAX_SCANNED_UNITS
    assert sql.status is GetStatus.NO_MATCHED_MESSAGE and sql.next_begin_offset == MAX_SCANNED_UNITS
    assert usual.next_begin_offset == 800  # max(16000 bytes, 32 units) of the queue, as in Java
    assert len(looked) == MAX_SCANNED_UNITS + 800


def test_reads_stop_at_the_end_of_a_queue_file_and_at_the_transfer_limits(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", mapped_file_size_commitlog=1 << 20, mapped_file_size_consume_queue=100 * 20)

    async def go():
        async with MessageStore(cfg) as s:
            for i in range(60):
                await s.put_message(message(queue_id=0, body=bytes([i]) * 1000))
            return (s.get_messages("g", "TopicTest", 0, 0, 64),
                    s.get_messages("g", "TopicTest", 0, 0, 64, max_bytes=4500),
                    s.get_messages("g", "TopicTest", 0, 40, 64))
    many, few_bytes, tail = run(go())
    # maxTransferCountOnMessageInMemory: 32 messages at most
    assert len(many.messages) == 32 and many.next_begin_offset == 32
    # the byte limit lets in what fits (each record is ~1.1 KiB)
    assert len(few_bytes.messages) == 4 and few_bytes.next_begin_offset == 4
    assert len(tail.messages) == 20 and tail.next_begin_offset == 60


def test_a_slave_keeps_the_requested_offset(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "m")
    slave_cfg = replace(small_config(tmp_path / "s"), broker_role="SLAVE")

    async def go():
        async with MessageStore(cfg) as m, MessageStore(slave_cfg) as s:
            for i in range(3):
                await m.put_message(message(queue_id=0, body=b"%d" % i))
            s.append_replica(0, m.read_commitlog(0, 1 << 20))
            refused = await s.put_message(message())
            return refused, s.get_messages("g", "TopicTest", 0, 9, 32), s.get_messages("g", "TopicTest", 0, 1, 32)
    refused, badly, ok = run(go())
    assert refused.status.name == "SERVICE_NOT_AVAILABLE"
    assert badly.status is GetStatus.OFFSET_OVERFLOW_BADLY and badly.next_begin_offset == 9
    assert ok.status is GetStatus.FOUND and _bodies(ok) == [b"1", b"2"]


def test_offset_and_time_lookups(cfg: StoreConfig) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            rs = []
            for i in range(30):
                rs.append(await s.put_message(message(queue_id=1, body=b"%d" % i)))
                if i % 10 == 9:
                    import asyncio
                    await asyncio.sleep(0.02)
            times = [s.message_store_time("TopicTest", 1, q) for q in range(30)]
            found = {q: s.search_offset_by_timestamp("TopicTest", 1, times[q]) for q in (0, 9, 10, 29)}
            return (rs, times, found, s.earliest_message_time("TopicTest", 1),
                    [s.commit_offset_of("TopicTest", 1, q) for q in (0, 29, 30)],
                    s.min_offset("TopicTest", 1), s.max_offset("TopicTest", 1),
                    s.earliest_message_time("None", 0), s.max_offset("None", 0), s.min_offset("None", 0),
                    s.search_offset_by_timestamp("TopicTest", 1, times[-1] + 10_000),
                    s.search_offset_by_timestamp("TopicTest", 1, 0))
    (rs, times, found, earliest, commit_offsets, lo, hi, none_time, none_max, none_min,
     future, past) = run(go())
    assert times == [r.store_timestamp for r in rs]
    assert earliest == times[0]
    assert commit_offsets == [rs[0].wrote_offset, rs[29].wrote_offset, None]
    assert (lo, hi, none_time, none_max, none_min) == (0, 30, -1, 0, 0)
    # the offset found was stored at exactly the time asked for
    for q, got in found.items():
        assert times[got] == times[q]
    assert future == 29 and past == 0


def test_lookup_message_by_commit_offset(cfg: StoreConfig) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            r = await s.put_message(message(body=b"look at me"))
            return (r, s.lookup_message(r.wrote_offset), s.lookup_message(r.wrote_offset, r.wrote_bytes),
                    s.lookup_message(r.wrote_offset + 4), s.lookup_message(10**9), s.lookup_message(-1))
    r, by_head, by_size, off, beyond, negative = run(go())
    assert by_head == by_size and decode_stored_message(by_head).body == b"look at me"
    assert len(by_head) == r.wrote_bytes
    assert off is None and beyond is None and negative is None


def test_typed_reads_decode_the_record_the_raw_read_gives(cfg: StoreConfig) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            r = await s.put_message(message(body=b"typed", keys="k1", tags="T"))
            await s.put_message(message(body=b"second"))
            at = r.wrote_offset
            return (s.lookup_message(at), s.message_at(at), s.message_at(at, r.wrote_bytes),
                    s.queue_message("TopicTest", 0, 0), s.queue_message("TopicTest", 0, 1),
                    [s.queue_message("TopicTest", 0, 2), s.queue_message("Nope", 0, 0), s.message_at(at + 4),
                     s.message_at(at, r.wrote_bytes - 1), s.message_at(-1)])
    raw, at, sized, first, second, nothing = run(go())
    assert at == sized == first == decode_stored_message(raw)
    assert at is not None and at.body == b"typed" and at.properties["KEYS"] == "k1"
    assert second is not None and second.body == b"second" and second.queue_offset == 1
    assert nothing == [None] * 5


def test_delete_topic_drops_its_queues(cfg: StoreConfig) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            await s.put_message(message(topic="A", queue_id=0))
            await s.put_message(message(topic="A", queue_id=3))
            await s.put_message(message(topic="B", queue_id=1))
            before = (s.topics(), s.queue_ids("A"))
            s.delete_topic("A")
            after = (s.topics(), s.queue_ids("A"), s.get_messages("g", "A", 0, 0, 32).status)
            again = await s.put_message(message(topic="A", queue_id=0))
            return before, after, again
    before, after, again = run(go())
    assert before == (["A", "B"], [0, 3])
    assert after == (["B"], [], GetStatus.NO_MATCHED_LOGIC_QUEUE)
    assert not (cfg.consumequeue_dir / "A" / "3").exists()
    assert again.queue_offset == 0


@pytest.mark.provokes_error_log(r"(dispatch|arrival|append) listener .* failed")
def test_dispatch_and_arrival_listeners(cfg: StoreConfig) -> None:
    # a listener's bug is logged with its traceback, and the put and the other listeners go on
    from wire.message import MessageSysFlag
    seen: list[tuple] = []
    arrivals: list[tuple] = []

    def broken(*_: object) -> None:
        raise RuntimeError("a listener's bug")

    async def go():
        async with MessageStore(cfg) as s:
            s.add_dispatch_listener(broken)
            s.add_arrival_listener(broken)
            s.add_append_listener(broken)
            s.add_dispatch_listener(lambda *a: seen.append(a))
            s.add_arrival_listener(lambda *a: arrivals.append(a))
            rs = [await s.put_message(message(queue_id=2, tags="TagA")),
                  await s.put_message(message(queue_id=2, sys_flag=int(MessageSysFlag.TRANSACTION_PREPARED_TYPE))),
                  await s.put_messages([message(queue_id=1), message(queue_id=1)])]
            return rs
    rs = run(go())
    assert all(r.ok for r in rs)
    assert seen == [("TopicTest", 2, 0, rs[0].store_timestamp), ("TopicTest", 1, 0, rs[2].store_timestamp),
                    ("TopicTest", 1, 1, rs[2].store_timestamp)]
    assert [a[:4] for a in arrivals] == seen and arrivals[0][4] == java_string_hash("TagA")


def test_scheduled_messages_carry_their_due_time_as_tags_code(cfg: StoreConfig) -> None:
    from tests.store.storeutil import cq_units

    async def go():
        async with MessageStore(cfg) as s:
            return await s.put_message(message(topic="SCHEDULE_TOPIC_XXXX", queue_id=2, tags="T",
                                               extra={"DELAY": "3"}))
    r = run(go())
    # messageDelayLevel level 3 is 10s (ScheduleMessageService.computeDeliverTimestamp)
    assert cq_units(cfg, "SCHEDULE_TOPIC_XXXX", 2) == [(r.wrote_offset, r.wrote_bytes, r.store_timestamp + 10_000)]
