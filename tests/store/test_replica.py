# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Replication support: a slave store fed the master's CommitLog bytes in arbitrary chunks ends
byte-identical with equal consume queues and index; truncation; and the real HA catch-up stream
of a Java 4.9.8 master replayed into a store."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_broker.store import GetStatus, MessageStore, StoreError
from tests.conftest import shared_path
from tests.pcaputil import streams
from tests.store.storeutil import message, run, small_config, tree_bytes
from wire.ha import HADirection, HAProtocol, Transfer, decode_ha_stream
from wire.message import StoredMessage, decode_stored_message
from wire.store import scan_commitlog, tags_code

FAR = 2**62


async def _fill_master(m: MessageStore, seed: int, n: int = 80) -> None:
    rnd = random.Random(seed)
    for i in range(n):
        topic = rnd.choice(["A", "B", "C"])
        q = rnd.randrange(4)
        if rnd.random() < 0.15:
            await m.put_messages([message(topic=topic, queue_id=q, body=rnd.randbytes(rnd.randrange(1, 200)),
                                          uniq=f"{seed}-{i}-{k}") for k in range(rnd.randrange(1, 5))])
        else:
            await m.put_message(message(topic=topic, queue_id=q, body=rnd.randbytes(rnd.randrange(0, 600)),
                                        tags=rnd.choice(["x", "y", None]), keys=f"k{i} shared",
                                        uniq=f"{seed}-{i}"))


def _replicate(m: MessageStore, s: MessageStore, cuts: list[int]) -> None:
    """Copy the master's bytes to the slave: read in transfer-sized pieces (never across a file
    end), append them cut again at the given points."""
    offset = s.commitlog_max_offset()
    pending = bytearray()
    start = offset
    while offset < m.commitlog_max_offset():
        piece = m.read_commitlog(offset, 700)
        assert piece
        pending += piece
        offset += len(piece)
    pos = 0
    for c in [*sorted(set(cuts)), len(pending)]:
        c = min(c, len(pending))
        if c > pos:
            s.append_replica(start + pos, bytes(pending[pos:c]))
            pos = c


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), cuts=st.lists(st.integers(0, 40_000), max_size=40))
def test_a_slave_fed_in_random_chunks_ends_identical(tmp_path_factory, seed: int, cuts: list[int]) -> None:
    base = tmp_path_factory.mktemp("rep")
    mcfg = small_config(base / "master", mapped_file_size_commitlog=2048)
    scfg = replace(small_config(base / "slave", mapped_file_size_commitlog=2048), broker_role="SLAVE")

    async def go():
        async with MessageStore(mcfg) as m, MessageStore(scfg) as s:
            arrivals: list[tuple] = []
            grown: list[int] = []
            s.add_dispatch_listener(lambda *a: arrivals.append(a))
            m.add_append_listener(grown.append)
            await _fill_master(m, seed)
            assert grown and grown[-1] == m.commitlog_max_offset() and grown == sorted(set(grown))
            grown.clear()
            s.add_append_listener(grown.append)
            _replicate(m, s, cuts)
            assert grown[-1] == s.commitlog_max_offset()
            checks = []
            for topic in m.topics():
                assert s.queue_ids(topic) == m.queue_ids(topic)
                for q in m.queue_ids(topic):
                    assert s.max_offset(topic, q) == m.max_offset(topic, q)
                    a = m.get_messages("g", topic, q, 0, 32)
                    b = s.get_messages("g", topic, q, 0, 32)
                    checks.append(a.messages == b.messages and a.status is b.status is GetStatus.FOUND)
            for k in ("k3", "shared", f"{seed}-5"):
                checks.append(sorted(m.query_message("A", k, 64, 0, FAR)) == sorted(s.query_message("A", k, 64, 0, FAR)))
            return checks, arrivals, m.commitlog_max_offset(), s.commitlog_max_offset()
    checks, arrivals, mend, send = run(go())
    assert all(checks) and mend == send
    # byte-identical CommitLog files (BLANKs and what follows them included) and consume queues
    assert tree_bytes(mcfg.commitlog_dir) == tree_bytes(scfg.commitlog_dir)
    assert tree_bytes(mcfg.consumequeue_dir) == tree_bytes(scfg.consumequeue_dir)
    per_queue = Counter((t, q) for t, q, _, _ in arrivals)
    assert all(n == max(o for t2, q2, o, _ in arrivals if (t2, q2) == k) + 1 for k, n in per_queue.items())


def test_read_commitlog_never_crosses_a_file_end(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "m", mapped_file_size_commitlog=1024)

    async def go():
        async with MessageStore(cfg) as m:
            for _i in range(10):
                await m.put_message(message(body=b"r" * 300))
            return (m.read_commitlog(0, 1 << 20), m.read_commitlog(900, 1 << 20), m.read_commitlog(1024, 10),
                    m.read_commitlog(m.commitlog_max_offset(), 10), m.read_commitlog(10**9, 10))
    whole, tail, ten, at_end, beyond = run(go())
    assert len(whole) == 1024 and len(tail) == 124 and len(ten) == 10
    assert at_end == b"" and beyond == b""


def test_append_replica_checks_the_offset(tmp_path: Path) -> None:
    scfg = replace(small_config(tmp_path / "s"), broker_role="SLAVE")

    async def go():
        async with MessageStore(scfg) as s:
            with pytest.raises(StoreError):
                s.append_replica(100, b"x" * 10)
            s.append_replica(0, b"\0\0")
            with pytest.raises(StoreError):
                s.append_replica(5, b"x")
            return s.commitlog_max_offset(), s.dispatch_behind_bytes
    assert run(go()) == (2, 2)


def test_truncate_commitlog_takes_back_queues_and_index(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "m", mapped_file_size_commitlog=2048)

    async def go():
        async with MessageStore(cfg) as m:
            rs = [await m.put_message(message(queue_id=i % 2, body=b"%d" % i * 50, keys=f"t{i}")) for i in range(30)]
            cut = rs[17]
            m.truncate_commitlog(cut.wrote_offset)
            state = (m.commitlog_max_offset(), m.max_offset("TopicTest", 0), m.max_offset("TopicTest", 1),
                     m.query_message("TopicTest", "t20", 8, 0, FAR), m.query_message("TopicTest", "t16", 8, 0, FAR))
            r = await m.put_message(message(queue_id=1, body=b"anew", keys="t20"))
            return cut, state, r, m.query_message("TopicTest", "t20", 8, 0, FAR), m.flushed_offset
    cut, (end, q0, q1, gone, kept), r, again, flushed = run(go())
    assert end == cut.wrote_offset and (q0, q1) == (9, 8)
    assert gone == [] and len(kept) == 1
    assert (r.wrote_offset, r.queue_offset) == (cut.wrote_offset, 8)
    assert [decode_stored_message(x).body for x in again] == [b"anew"]
    items = [m for f in sorted(cfg.commitlog_dir.iterdir()) for _, m in scan_commitlog(f.read_bytes(), int(f.name))]
    assert sum(isinstance(m, StoredMessage) for m in items) == 18
    assert flushed <= r.wrote_offset + r.wrote_bytes


# ---------------------------------------------------------------------- the Java master's bytes

HA_PCAP = ("captures", "java-4.9.8", "08-ha-catchup-from-zero.pcap")


def test_java_ha_catchup_stream_builds_the_slave_queues(tmp_path: Path) -> None:
    (d,) = [d for d in streams(shared_path(*HA_PCAP)) if d.sport == 10912]
    frames = [f.message for f in decode_ha_stream(bytes(d.data), HAProtocol.V4, HADirection.MASTER_TO_SLAVE)]
    transfers = [t for t in frames if isinstance(t, Transfer) and t.data]
    assert transfers[0].phy_offset == 0
    cfg = replace(small_config(tmp_path / "slave", mapped_file_size_commitlog=10485760,
                               mapped_file_size_consume_queue=300000 * 20,
                               max_hash_slot_num=5000, max_index_num=20000), broker_role="SLAVE")
    whole = b"".join(t.data for t in transfers)

    async def go():
        async with MessageStore(cfg) as s:
            for t in transfers:
                s.append_replica(t.phy_offset, t.data)
            maxes = {(t, q): s.max_offset(t, q) for t in s.topics() for q in s.queue_ids(t)}
            ha0 = s.get_messages("g", "HaTopic", 0, 0, 32)
            return (s.commitlog_max_offset(), s.dispatch_behind_bytes, maxes, ha0,
                    s.query_message("QryTopic", "qkey-7", 8, 0, FAR))
    end, behind, maxes, ha0, by_key = run(go())
    assert end == len(whole) == 3_641_729 and behind == 0
    # what the queues should hold, worked out from the stream itself
    expected: dict[tuple[str, int], int] = defaultdict(int)
    first: dict[tuple[str, int], int] = {}
    for offset, m in scan_commitlog(whole, 0):
        assert isinstance(m, StoredMessage)
        key = (m.topic, m.queue_id)
        first.setdefault(key, offset)
        expected[key] = max(expected[key], m.queue_offset + 1)
    assert maxes == dict(expected)
    assert sum(n for (t, _), n in maxes.items() if t == "HaTopic") >= 3000 + 5 + 3
    # the queue's first records are the stream's bytes, with the tags codes of their TAGS
    assert ha0.status is GetStatus.FOUND
    assert ha0.messages[0] == whole[first[("HaTopic", 0)]:first[("HaTopic", 0)] + len(ha0.messages[0])]
    units = (cfg.consumequeue_dir / "HaTopic" / "0" / f"{0:020d}").read_bytes()
    from wire.store import iter_cq_entries
    rec = decode_stored_message(ha0.messages[0])
    e0 = next(iter_cq_entries(units[:20]))
    assert (e0.commit_log_offset, e0.size, e0.tags_code) == (first[("HaTopic", 0)], rec.total_size,
                                                            tags_code(rec.tags))
    # the index was built from the replicated records (MANIFEST 07: KEYS=qkey-7 on QryTopic)
    assert [decode_stored_message(m).physical_offset for m in by_key] == [34928]
    # the slave's CommitLog file is the master's bytes, then zeros
    data = (cfg.commitlog_dir / f"{0:020d}").read_bytes()
    assert data[:len(whole)] == whole and not any(data[len(whole):len(whole) + 4096])
