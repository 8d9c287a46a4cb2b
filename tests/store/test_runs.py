# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Puts made as runs (``MessageStore.put_deferred_many``) against the same puts one at a time.

Thousands of messages of varied sizes over 4 KiB CommitLog files, to several topics and queues,
with messages the checks refuse, a message whose record cannot be encoded and prepared
transaction messages among them: the results, the CommitLog's bytes (BLANKs included; each
record's store timestamp masked), the consume queues' units and what the index finds must be the
same whichever way they were put. The load is made so that some file ends fall where a record
fits only without the 8 bytes a BLANK needs (checked): there a run must close the file as a
put of its own would.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

from reference_broker.store import MessageStore, MessageToStore, PutResult, PutStatus, StoreConfig
from tests.store.storeutil import commitlog_files, cq_units, message, run, small_config
from wire.message import BLANK_MAGIC_CODE, MessageSysFlag

FILE = 4096
TOPICS = ("RunA", "RunB")
QUEUES = 3
#: in a v1 record of IPv4 hosts: the store timestamp (the clock's, so it differs between runs)
_STORE_TS = slice(56, 64)
_PREPARED = int(MessageSysFlag.TRANSACTION_PREPARED_TYPE)


def _messages(seed: int, n: int) -> list[MessageToStore]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        topic = TOPICS[i % 2]
        kw: dict[str, object] = {}
        if i % 97 == 13:
            kw["sys_flag"] = _PREPARED  # held: queue offset 0, no consume queue unit
        body = bytes([65 + i % 26]) * rnd.randint(1, 360)
        if i % 211 == 50:
            body = b"x" * 5000  # over maxMessageSize (4000 here): refused by the checks
        m = message(topic, rnd.randrange(QUEUES), body, tags=f"t{i % 5}", keys=f"k{i} j{i % 7}",
                    uniq=f"U{seed:02d}{i:06d}", **kw)  # type: ignore[arg-type]
        if i == n // 2:
            m.flag = 1 << 40  # fits no int32: the record cannot be encoded, the put is refused
        out.append(m)
    return out


def _masked(cfg: StoreConfig) -> tuple[bytes, list[tuple[int, int]]]:
    """The CommitLog's bytes to its end with each record's store timestamp zeroed, and each
    BLANK's (size, size of the record after it)."""
    data = bytearray(b"".join(p.read_bytes() for p in commitlog_files(cfg)))
    blanks = []
    pos = 0
    while pos + 8 <= len(data):
        size, magic = struct.unpack_from(">iI", data, pos)
        if size > 0 and magic == BLANK_MAGIC_CODE & 0xFFFFFFFF:
            nxt = struct.unpack_from(">i", data, pos + size)[0] if pos + size + 4 <= len(data) else 0
            blanks.append((size, nxt))
            pos += size
            continue
        if size <= 0:
            break
        data[pos + _STORE_TS.start:pos + _STORE_TS.stop] = b"\0" * 8
        pos += size
    return bytes(data[:pos]), blanks


def _fields(r: PutResult) -> tuple[object, ...]:
    return (r.status, r.msg_id, r.queue_offset, r.wrote_offset, r.wrote_bytes, r.msg_num)


def _put(root: Path, msgs: list[MessageToStore], chunks: list[int] | None) -> tuple[object, ...]:
    cfg = small_config(root, max_message_size=4000)

    async def go() -> tuple[list[PutResult], list[list[int]], int]:
        async with MessageStore(cfg) as s:
            results: list[PutResult] = []
            if chunks is None:
                for m in msgs:
                    r = s.put_deferred(m)
                    assert isinstance(r, PutResult)
                    results.append(r)
            else:
                at = 0
                for size in chunks:
                    for r in s.put_deferred_many(msgs[at:at + size]):
                        assert isinstance(r, PutResult)
                        results.append(r)
                    at += size
                assert at == len(msgs)
            found = [sorted(s.puts.index.query_offset(t, f"k{i}", 8, 0, 2**62)[0]) for t in TOPICS
                     for i in range(0, len(msgs), 37)]
            st = s.stats
            counted = (st.put_times_total, st.put_size_total, st.put_failed_times, sum(st._distribution),
                       sum(st._latency))
            return results, found, counted, s.puts.run_messages

    results, found, counted, made = run(go())
    data, blanks = _masked(cfg)
    units = {(t, q): cq_units(cfg, t, q) for t in TOPICS for q in range(QUEUES)}
    return [_fields(r) for r in results], data, blanks, units, found, counted, made


def test_runs_store_and_answer_as_puts_one_at_a_time(tmp_path: Path) -> None:
    msgs = _messages(7, 3000)
    rnd = random.Random(1)
    chunks = []
    left = len(msgs)
    while left:
        chunks.append(min(left, rnd.choice((2, 3, 5, 8, 17, 64, 200))))
        left -= chunks[-1]
    one = _put(tmp_path / "one", msgs, None)
    runs = _put(tmp_path / "runs", msgs, chunks)
    results, data, blanks, units, found, counted, made = one
    assert runs[-1] > len(msgs) * 0.9 and made == 0  # the runs were made as runs
    statuses = [r[0] for r in results]
    assert statuses.count(PutStatus.MESSAGE_ILLEGAL) >= 14 and statuses.count(PutStatus.PUT_OK) > 2900
    assert len(blanks) > 100
    # some files end where the next record would fit, but not with 8 bytes to spare for a BLANK
    assert any(nxt <= size < nxt + 8 for size, nxt in blanks), blanks
    assert runs[0] == results
    assert runs[1] == data
    assert runs[2] == blanks
    assert runs[3] == units
    assert runs[4] == found and any(found)
    # the store's put statistics count every put alike: messages, bytes, refusals, timed puts
    assert runs[5] == counted and counted[0] == statuses.count(PutStatus.PUT_OK) == counted[3]
