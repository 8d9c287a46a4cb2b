# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What a sender may hand over with a message: the properties string already parsed (read for
tags, keys and the delay, never written) and ``isWaitStoreMsgOK`` (which wins over WAIT); the
shape of a put's answer (the result at once, a coroutine only for a wait) and its one path for a
message and a batch; and the put latency buckets of the runtime statistics."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from reference_broker.store import MessageStore, MessageToStore, PutResult, PutStatus
from reference_broker.store.stats import _DISTRIBUTION_LIMITS, _LATENCY_BOUNDS, StoreStats
from tests.store.storeutil import BORN, cq_units, run, scan_files, small_config
from wire.message import StoredMessage, decode_stored_message, encode_properties
from wire.store import tags_code


def _msg(props: dict[str, str], parsed: dict[str, str] | None = None, wait: bool | None = None,
         body: bytes = b"body") -> MessageToStore:
    return MessageToStore("TopicTest", 0, body, 1_700_000_000_000, BORN, properties=encode_properties(props),
                          parsed_properties=parsed, wait_store_msg_ok=wait)


def test_a_parsed_mapping_is_read_instead_of_the_string_and_never_written(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s")
    text_props = {"TAGS": "TagA", "KEYS": "k1", "UNIQ_KEY": "U1", "CLUSTER": "C"}
    # the same properties as the broker's map holds them: WAIT still there, dropped from the string
    parsed = {**text_props, "WAIT": "true"}

    async def go() -> dict[str, list[int]]:
        async with MessageStore(cfg) as s:
            r1 = await s.put_message(_msg(text_props, parsed))
            # a mapping that disagrees with the string shows which one the store reads
            r2 = await s.put_message(_msg(text_props, {"TAGS": "TagB", "KEYS": "other"}))
            assert r1.status is PutStatus.PUT_OK and r2.status is PutStatus.PUT_OK
            return {key: [decode_stored_message(m).physical_offset
                          for m in s.query_message("TopicTest", key, 32, 0, 2**62)]
                    for key in ("k1", "U1", "other")}
    found = run(go())
    # the first message is indexed under its mapping's KEYS and UNIQ_KEY, the second only
    # under the mapping's "other", not under the string's k1/U1
    first, second = (m for _, m in scan_files(cfg) if isinstance(m, StoredMessage))
    assert found == {"k1": [first.physical_offset], "U1": [first.physical_offset],
                     "other": [second.physical_offset]}
    assert [u[2] for u in cq_units(cfg, "TopicTest", 0)] == [tags_code("TagA"), tags_code("TagB")]
    # the records hold the strings byte for byte, WAIT not added
    assert first.properties_text == second.properties_text == encode_properties(text_props)


@pytest.mark.parametrize(("wait_prop", "wait_flag", "waits"), [
    ("true", None, True),
    ("false", None, False),
    (None, None, True),
    ("true", False, False),   # the flag wins over the property
    ("false", True, True),
    (None, False, False),
])
def test_wait_store_msg_ok_decides_whether_a_sync_flush_put_waits(tmp_path: Path, wait_prop: str | None,
                                                                   wait_flag: bool | None, waits: bool) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH", sync_flush_timeout_ms=200)
    props = {"KEYS": "k"} if wait_prop is None else {"KEYS": "k", "WAIT": wait_prop}

    async def go() -> tuple[PutStatus, bool]:
        async with MessageStore(cfg) as s:
            lock = s.flusher.lock
            assert lock is not None
            # no flush can end while the lock is held: a put that waits times out
            await lock.acquire()
            try:
                r = await s.put_message(_msg(props, wait=wait_flag))
                unflushed = s.flushed_offset < r.wrote_offset + r.wrote_bytes
            finally:
                lock.release()
            return r.status, unflushed
    status, unflushed = run(go())
    assert unflushed
    assert status is (PutStatus.FLUSH_DISK_TIMEOUT if waits else PutStatus.PUT_OK)


def test_a_batch_waits_when_any_entry_does(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH", sync_flush_timeout_ms=200,
                       mapped_file_size_commitlog=1 << 20)

    async def go() -> list[PutStatus]:
        async with MessageStore(cfg) as s:
            lock = s.flusher.lock
            assert lock is not None
            out = []
            await lock.acquire()
            try:
                for flags in ((False, False), (False, True), (None, False)):
                    batch = [_msg({"WAIT": "false"}, wait=w) for w in flags]
                    out.append((await s.put_messages(batch)).status)
            finally:
                lock.release()
            return out
    assert run(go()) == [PutStatus.PUT_OK, PutStatus.FLUSH_DISK_TIMEOUT, PutStatus.PUT_OK]


def test_puts_that_do_not_wait_still_wake_the_group_commit(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH")

    async def go() -> tuple[bool, bool]:
        async with MessageStore(cfg) as s:
            r = await s.put_message(_msg({"KEYS": "k"}, wait=False))
            end = r.wrote_offset + r.wrote_bytes
            right_after = s.flushed_offset >= end
            for _ in range(500):
                if s.flushed_offset >= end:
                    break
                await asyncio.sleep(0.002)
            return right_after, s.flushed_offset >= end
    right_after, later = run(go())
    assert not right_after and later


def test_a_put_answers_at_once_unless_it_waits(tmp_path: Path) -> None:
    # the one put path: the result itself when nothing is waited for, a coroutine only for a wait
    async def go(flush: str) -> list[str]:
        cfg = small_config(tmp_path / flush, flush_disk_type=flush, sync_flush_timeout_ms=200)
        async with MessageStore(cfg) as s:
            lock = s.flusher.lock
            assert lock is not None
            await lock.acquire()
            try:
                puts = [s.put(_msg({"KEYS": "k"})), s.put(_msg({"KEYS": "k"}, wait=False)),
                        s.put([_msg({"KEYS": "k"}), _msg({"KEYS": "k"})])]
                shapes = [type(p).__name__ for p in puts]
                for p in puts:
                    r = p if isinstance(p, PutResult) else await p
                    assert r.status.stored
            finally:
                lock.release()
            return shapes
    assert run(go("ASYNC_FLUSH")) == ["PutResult"] * 3
    assert run(go("SYNC_FLUSH")) == ["coroutine", "PutResult", "coroutine"]


def test_one_message_and_a_batch_of_one_write_the_same_record(tmp_path: Path) -> None:
    async def go(batch: bool) -> StoredMessage:
        cfg = small_config(tmp_path / str(batch))
        async with MessageStore(cfg) as s:
            m = _msg({"KEYS": "k", "TAGS": "t"})
            r = await (s.put_messages([m]) if batch else s.put_message(m))
            assert r.status is PutStatus.PUT_OK and r.msg_num == 1
            found = s.message_at(r.wrote_offset)
            assert found is not None
            return found
    single, batch = run(go(False)), run(go(True))
    assert replace(batch, store_timestamp=0) == replace(single, store_timestamp=0)


@pytest.mark.parametrize("elapsed", [0, 1, 2, 9, 10, 11, 50, 51, 999, 1000, 4999, 10000, 10001, 123456])
def test_put_latency_buckets(elapsed: int) -> None:
    st = StoreStats()
    st.record_put(1, 100, elapsed)
    # StoreStatsService: the first distribution bucket whose limit is >= the time (else the
    # last), the first latency bucket whose bound is >= the time
    dist = next((i for i, limit in enumerate(_DISTRIBUTION_LIMITS) if elapsed <= limit), len(_DISTRIBUTION_LIMITS))
    lat = next(i for i, bound in enumerate(_LATENCY_BOUNDS) if elapsed <= bound)
    assert [i for i, n in enumerate(st._distribution) if n] == [dist]
    assert [i for i, n in enumerate(st._latency) if n] == [lat]
    assert st.put_times_total == 1 and st.put_size_total == 100 and st.put_entire_time_max == elapsed
