# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl store inspect``: a store written by the Java broker, and stores built record by record
(with :mod:`wire` encoders) then damaged in the ways recovery meets: flipped bytes, torn tails,
bad magic codes, consume-queue entries that point nowhere, unreadable config files."""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import shared_path
from wire.admin.store import inspect_store
from wire.bodies import (
    ConsumerOffsetSerializeWrapper,
    SubscriptionGroupConfig,
    SubscriptionGroupWrapper,
    TopicConfig,
    TopicConfigSerializeWrapper,
)
from wire.message import HostPort, StoredMessage, encode_stored_message
from wire.store import (
    PRE_BLANK_ENTRY,
    ConsumeQueueEntry,
    IndexHeader,
    StoreCheckpoint,
    encode_blank,
    encode_checkpoint,
    encode_cq_entry,
    encode_index_header,
)

FILE_SIZE = 4096
#: where a record's body starts (v1 magic, IPv4 hosts): the 88 bytes of fixed fields before it
BODY_AT = 88


@dataclass
class Built:
    root: Path
    #: (commit-log offset, size) of each record, in order
    records: list[tuple[int, int]]


def build_store(root: Path, n_first: int = 5, n_second: int = 3) -> Built:
    """Two commit-log files of FILE_SIZE bytes (the first closed by a BLANK marker), a consume
    queue per queue id with a pre-blank hole, config files, checkpoint and an index header."""
    cl = root / "commitlog"
    cl.mkdir(parents=True)
    records: list[tuple[int, int]] = []
    queues: dict[int, list[ConsumeQueueEntry]] = collections.defaultdict(list)
    offset = 0
    for base, count in ((0, n_first), (FILE_SIZE, n_second)):
        buf = bytearray(FILE_SIZE)
        pos = 0
        offset = base
        for i in range(count):
            qid = i % 2
            msg = StoredMessage(topic="InspTopic", body=f"body-{base}-{i}".encode() * 8,
                                properties={"TAGS": "t", "UNIQ_KEY": f"{base:016X}{i:016X}"}, queue_id=qid,
                                queue_offset=len(queues[qid]) + 2, physical_offset=offset,
                                born_timestamp=1795341742797, store_timestamp=1795341742835 + i,
                                born_host=HostPort("127.0.0.1", 38074), store_host=HostPort("127.0.0.1", 10911))
            raw = encode_stored_message(msg)
            buf[pos:pos + len(raw)] = raw
            records.append((offset, len(raw)))
            queues[qid].append(ConsumeQueueEntry(offset, len(raw), 0))
            pos += len(raw)
            offset += len(raw)
        if base == 0:
            buf[pos:pos + 8] = encode_blank(FILE_SIZE - pos)
        (cl / f"{base:020d}").write_bytes(bytes(buf))
    for qid, entries in queues.items():
        qdir = root / "consumequeue" / "InspTopic" / str(qid)
        qdir.mkdir(parents=True)
        data = b"".join(encode_cq_entry(e) for e in [PRE_BLANK_ENTRY, PRE_BLANK_ENTRY, *entries])
        (qdir / f"{0:020d}").write_bytes(data + bytes(20 * 10))
    cfg = root / "config"
    cfg.mkdir()
    (cfg / "topics.json").write_bytes(TopicConfigSerializeWrapper(topic_config_table={
        "InspTopic": TopicConfig(topic_name="InspTopic", read_queue_nums=2, write_queue_nums=2)}).encode())
    (cfg / "consumerOffset.json").write_bytes(ConsumerOffsetSerializeWrapper(
        offset_table={"InspTopic@G1": {0: 3, 1: 2}}).encode())
    (cfg / "subscriptionGroup.json").write_bytes(SubscriptionGroupWrapper(
        subscription_group_table={"G1": SubscriptionGroupConfig(group_name="G1")}).encode())
    (root / "checkpoint").write_bytes(encode_checkpoint(StoreCheckpoint(1795341742835, 1795341742835,
                                                                        1795341742835)))
    (root / "index").mkdir()
    (root / "index" / "20261122100222797").write_bytes(
        encode_index_header(IndexHeader(1795341742797, 1795341742840, 0, offset, 5, 9)) + bytes(64))
    return Built(root, records)


def test_a_healthy_store(tmp_path):
    b = build_store(tmp_path / "store")
    r = inspect_store(b.root, messages=True)
    assert r.problems == ()
    assert r.records == 8 and len(r.messages) == 8
    assert [f.records for f in r.commitlog] == [5, 3]
    assert r.commitlog[0].blank == FILE_SIZE - r.commitlog[0].used + 8
    assert r.min_offset == 0 and r.max_offset == b.records[-1][0] + b.records[-1][1]
    assert [(q.queue_id, q.entries, q.min_offset, q.max_offset) for q in r.consume_queues] == [
        (0, 5, 2, 7), (1, 3, 2, 5)]
    assert [(c.group, c.queue_id, c.offset, c.max_offset, c.lag) for c in r.consumer_offsets] == [
        ("G1", 0, 3, 7, 4), ("G1", 1, 2, 5, 3)]
    assert {c.name: c.entries for c in r.configs} == {"topics.json": 1, "consumerOffset.json": 1,
                                                      "subscriptionGroup.json": 1}
    assert r.checkpoint is not None and r.checkpoint.physic_msg_timestamp == 1795341742835
    assert r.index_files[0].index_count == 9 and r.abort_file is False
    assert [m.commit_log_offset for m in r.messages] == [o for o, _ in b.records]


def _damage(path: Path, at: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[at:at + len(data)] = data
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("case", ["crc", "magic", "torn", "size", "cq-size", "cq-past-end", "config"])
def test_damage_is_reported_with_file_and_offset(tmp_path, case, main):
    b = build_store(tmp_path / "store")
    first = b.root / "commitlog" / f"{0:020d}"
    second = b.root / "commitlog" / f"{FILE_SIZE:020d}"
    off2, size2 = b.records[6]  # the second record of the second file
    expected: tuple[str, int, str]
    if case == "crc":
        off, _ = b.records[2]
        _damage(first, off + BODY_AT + 5, b"X")
        expected = (first.name, off, "crc-mismatch")
    elif case == "magic":
        _damage(second, off2 - FILE_SIZE + 4, b"\x00\x00\x00\x01")
        expected = (second.name, off2 - FILE_SIZE, "bad-magic")
    elif case == "torn":
        raw = second.read_bytes()
        second.write_bytes(raw[:off2 - FILE_SIZE + size2 // 2])
        expected = (second.name, off2 - FILE_SIZE, "truncated")
    elif case == "size":
        _damage(second, off2 - FILE_SIZE, (size2 + 1).to_bytes(4, "big"))
        expected = (second.name, off2 - FILE_SIZE, "bad-record")
    elif case == "cq-size":
        cq = b.root / "consumequeue" / "InspTopic" / "0" / f"{0:020d}"
        _damage(cq, 2 * 20 + 8, (999).to_bytes(4, "big"))
        expected = ("consumequeue/InspTopic/0/" + f"{0:020d}", 40, "cq-mismatch")
    elif case == "cq-past-end":
        cq = b.root / "consumequeue" / "InspTopic" / "1" / f"{0:020d}"
        _damage(cq, 5 * 20, encode_cq_entry(ConsumeQueueEntry(10 * FILE_SIZE, 100, 0)))
        expected = ("consumequeue/InspTopic/1/" + f"{0:020d}", 100, "cq-dangling")
    else:
        (b.root / "config" / "topics.json").write_text('{"topicConfigTable":{"T":[1,2')
        expected = ("config/topics.json", -1, "bad-config")
    r = inspect_store(b.root)
    assert r.problems, case
    p = r.problems[0]
    assert (p.file, p.kind) == (expected[0], expected[2])
    if expected[1] >= 0:
        assert p.file_offset == expected[1]
    rc, out, err = main("store", "inspect", str(b.root))
    assert rc == 1
    assert err.startswith(f"error: {len(r.problems)} problem(s); first: {expected[0]} at ")
    assert f"{expected[2]}" in out


def test_store_inspect_json_and_messages(tmp_path, main):
    b = build_store(tmp_path / "store")
    rc, out, _ = main("-o", "json", "store", "inspect", str(b.root), "--messages", "--limit", "2")
    doc = json.loads(out)
    assert rc == 0 and doc["records"] == 8 and len(doc["messages"]) == 2
    assert doc["messages"][1]["body_text"] == "body-0-1" * 8
    rc, out, _ = main("store", "inspect", str(b.root), "--messages", "--hex")
    assert rc == 0 and ("body-0-0" * 8).encode().hex() in out


def test_times_no_calendar_holds_are_shown_as_numbers(tmp_path, main):
    """A damaged checkpoint's times (year 194,783,257) are shown as their numbers, not an
    internal error."""
    b = build_store(tmp_path / "store")
    (b.root / "checkpoint").write_bytes(encode_checkpoint(StoreCheckpoint(2**62, -(2**62), 2**63 - 1, 0))
                                        .ljust(4096, b"\0"))
    rc, out, err = main("store", "inspect", str(b.root))
    assert rc == 0 and "internal error" not in err
    assert f"physic {2**62} (not a date), logics {-(2**62)} (not a date)" in out


def test_not_a_store(tmp_path, main):
    assert main("store", "inspect", str(tmp_path))[0] == 2
    assert main("store", "inspect", str(tmp_path / "missing"))[0] == 2


def _java_store(root: Path) -> Path:
    """A commit log written by the Java 4.9.8 master, as its HA stream carried it to a slave that
    started from zero (08-ha-catchup-from-zero: every byte from offset 0 to 3,641,729)."""
    from tests.pcaputil import streams
    from wire.ha import HADirection, HAProtocol, Transfer, decode_ha_stream

    pcap = shared_path("captures", "java-4.9.8", "08-ha-catchup-from-zero.pcap")
    master = next(d for d in streams(pcap) if d.sport == 10912)
    buf = bytearray(4 * 1024 * 1024)
    for f in decode_ha_stream(bytes(master.data), HAProtocol.V4, HADirection.MASTER_TO_SLAVE, complete=False):
        if isinstance(f.message, Transfer) and f.message.data:
            buf[f.message.phy_offset:f.message.phy_offset + len(f.message.data)] = f.message.data
    (root / "commitlog").mkdir(parents=True)
    path = root / "commitlog" / f"{0:020d}"
    path.write_bytes(bytes(buf))
    return path


@pytest.mark.shared
def test_a_java_written_commit_log(tmp_path):
    _java_store(tmp_path)
    r = inspect_store(tmp_path, messages=True, limit=10**6)
    assert r.problems == ()
    # the master's commitLogMaxOffset as mqadmin brokerStatus printed it after the catch-up
    expected = next(line.split(":")[1].strip() for line in shared_path(
        "captures", "java-4.9.8", "08-ha-catchup-from-zero.txt").read_text().splitlines()
        if line.startswith("commitLogMaxOffset"))
    assert r.max_offset == int(expected) == 3641729
    ha = collections.Counter((m.sys_flag, len(m.body)) for m in r.messages if m.topic == "HaTopic")
    assert ha[(0, 1024)] == 3000 and ha[(1, 5000)] > 0
    # the message queried by id in the 07 captures sits where its offset msgId says
    (qry,) = [m for m in r.messages if m.commit_log_offset == 34928]
    assert (qry.topic, qry.body_text, qry.offset_msg_id) == ("QryTopic", "query me please",
                                                             "7F00000100002A9F0000000000008870")


@pytest.mark.shared
def test_a_damaged_java_commit_log(tmp_path):
    path = _java_store(tmp_path)
    r = inspect_store(tmp_path, messages=True, limit=10**6)
    victim = r.messages[1500]
    _damage(path, victim.commit_log_offset + BODY_AT + 3, b"\xff")
    damaged = inspect_store(tmp_path)
    (p,) = damaged.problems
    assert (p.file, p.file_offset, p.kind) == (path.name, victim.commit_log_offset, "crc-mismatch")
    assert damaged.records == 1500


def test_store_inspect_shows_progress_on_a_terminal(tmp_path):
    """Issue 15 item 5: a long ``store inspect`` shows a progress bar on a terminal (stderr)."""
    from tests.capture.test_cli import run_on_a_terminal

    built = build_store(tmp_path / "store")
    rc, out, tty = run_on_a_terminal("store", "inspect", str(built.root), env={"MQCTL_PROGRESS_DELAY": "0"})
    assert rc == 0, tty
    assert b"reading" in tty and b"\xe2\x94\x81" in tty, tty[:500]
    assert b"CommitLog files" in out and b"reading" not in out
