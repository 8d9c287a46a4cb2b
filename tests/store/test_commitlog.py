# Licensed under the Apache License, Version 2.0. See LICENSE.
"""CommitLog files as RocketMQ lays them out: names, sizes, records, BLANKs, batches, refusals."""

from __future__ import annotations

import itertools
from collections import defaultdict

from reference_broker.store import MessageStore, MessageToStore, PutStatus, StoreConfig
from tests.store.storeutil import BORN, commitlog_files, message, run, scan_files
from wire.message import (
    HostPort,
    MessageSysFlag,
    StoredMessage,
    create_offset_msg_id,
    decode_offset_msg_id,
    decode_stored_message,
    encode_stored_message,
    stored_message_size,
)
from wire.store import Blank, Problem, ProblemKind, tags_code

FILE = 4096


def _body(i: int) -> bytes:
    return bytes([65 + i % 26]) * (40 + (37 * i) % 300)


def _put_many(cfg: StoreConfig, msgs: list[MessageToStore]) -> list:
    async def go() -> list:
        async with MessageStore(cfg) as s:
            return [await s.put_message(m) for m in msgs]
    return run(go())


def test_files_are_named_by_offset_full_size_and_end_in_a_blank(cfg: StoreConfig) -> None:
    msgs = [message(queue_id=i % 3, body=_body(i), tags=f"t{i % 3}", keys=f"k{i}", uniq=f"U{i:04d}")
            for i in range(60)]
    results = _put_many(cfg, msgs)
    assert all(r.status is PutStatus.PUT_OK for r in results)
    files = commitlog_files(cfg)
    assert len(files) >= 4
    for i, p in enumerate(files):
        assert p.name == f"{i * FILE:020d}"
        assert p.stat().st_size == FILE
    items = scan_files(cfg)
    records = [(o, m) for o, m in items if isinstance(m, StoredMessage)]
    # every record sits where its put said, with that physical offset inside
    assert [o for o, _ in records] == [r.wrote_offset for r in results]
    assert [m.physical_offset for _, m in records] == [r.wrote_offset for r in results]
    assert [m.total_size for _, m in records] == [r.wrote_bytes for r in results]
    # each full file ends with a BLANK covering the rest of it, written because the next record
    # did not fit with 8 bytes to spare (doAppend's END_OF_FILE rule)
    blanks = [(o, b) for o, b in items if isinstance(b, Blank)]
    assert len(blanks) == len(files) - 1
    for o, b in blanks:
        assert (o + b.size) % FILE == 0 and b.size >= 8
        nxt = next(r for r in results if r.wrote_offset >= o + b.size)
        assert nxt.wrote_offset == o + b.size
        assert nxt.wrote_bytes + 8 > b.size
    # the last file stops at its zero tail
    assert isinstance(items[-1][1], Problem) and items[-1][1].kind is ProblemKind.ZERO_TAIL
    # the fields are what was put
    next_qo: dict[int, int] = defaultdict(int)
    for (o, m), src, r in zip(records, msgs, results, strict=True):
        assert m.topic == "TopicTest" and m.queue_id == src.queue_id and m.body == src.body
        assert m.queue_offset == next_qo[src.queue_id] == r.queue_offset
        next_qo[src.queue_id] += 1
        assert m.born_host == HostPort(*BORN) and m.born_timestamp == src.born_timestamp
        assert m.store_host == HostPort("127.0.0.1", 10911)
        assert m.store_timestamp == r.store_timestamp
        assert m.properties == src.properties and m.crc_ok
        assert r.msg_id == create_offset_msg_id("127.0.0.1", 10911, o)
        assert decode_offset_msg_id(r.msg_id).offset == o
    stamps = [m.store_timestamp for _, m in records]
    assert stamps == sorted(stamps)


def test_records_are_byte_exact_with_the_raw_properties_string(cfg: StoreConfig) -> None:
    raw = "ZZ\x01last\x02AA\x01first\x02UNIQ_KEY\x01ABC"
    m = MessageToStore(topic="Raw", queue_id=2, body=b"\x00\x01payload", born_timestamp=5, born_host=BORN,
                       properties=raw, flag=7, reconsume_times=3, prepared_transaction_offset=0)
    (r,) = _put_many(cfg, [m])
    data = commitlog_files(cfg)[0].read_bytes()
    rec = decode_stored_message(data, r.wrote_offset, verify=True)
    assert rec.properties_text == raw and rec.flag == 7 and rec.reconsume_times == 3
    assert r.wrote_bytes == stored_message_size(len(m.body), len(b"Raw"), len(raw.encode()))
    assert rec.sys_flag == 0


def test_batch_is_contiguous_in_one_file_with_consecutive_offsets(cfg: StoreConfig) -> None:
    async def go() -> tuple:
        async with MessageStore(cfg) as s:
            first = await s.put_message(message(queue_id=1, body=b"x" * 3000))
            batch = [message(queue_id=1, body=bytes([i]) * 300, uniq=f"B{i}") for i in range(5)]
            r = await s.put_messages(batch)
            return first, r, batch
    _first, r, batch = run(go())
    assert r.status is PutStatus.PUT_OK and r.msg_num == 5
    # it did not fit after the 3000-byte record: the whole batch went to the next file
    assert r.wrote_offset == FILE and r.queue_offset == 1
    items = [(o, m) for o, m in scan_files(cfg) if isinstance(m, StoredMessage)]
    recs = [(o, m) for o, m in items if o >= FILE]
    assert [m.queue_offset for _, m in recs] == [1, 2, 3, 4, 5]
    assert [m.body for _, m in recs] == [b.body for b in batch]
    assert len({m.store_timestamp for _, m in recs}) == 1
    assert sum(m.total_size for _, m in recs) == r.wrote_bytes
    assert recs[0][0] == r.wrote_offset and all(o + m.total_size == n for (o, m), (n, _) in itertools.pairwise(recs))
    assert r.msg_id == ",".join(create_offset_msg_id("127.0.0.1", 10911, o) for o, _ in recs)


def test_batches_that_java_refuses(cfg: StoreConfig) -> None:
    async def go() -> list:
        async with MessageStore(cfg) as s:
            out = [
                await s.put_messages([message(queue_id=0), message(queue_id=1)]),
                await s.put_messages([message(extra={"DELAY": "3"})]),
                await s.put_messages([message(sys_flag=int(MessageSysFlag.TRANSACTION_PREPARED_TYPE))]),
                await s.put_messages([]),
            ]
            return [r.status for r in out] + [s.commitlog_max_offset()]
    *statuses, end = run(go())
    assert statuses == [PutStatus.MESSAGE_ILLEGAL] * 4
    assert end == 0


def test_messages_that_are_refused_leave_no_trace(cfg: StoreConfig) -> None:
    cfg2 = StoreConfig(**{**cfg.__dict__, "max_message_size": 1000})

    async def go() -> list:
        async with MessageStore(cfg2) as s:
            out = [
                await s.put_message(message(topic="T" * 128)),
                await s.put_message(message(body=b"b" * 1001)),
                await s.put_message(message(extra={"big": "v" * 32767})),
                await s.put_message(message(topic="T" * 127)),
                await s.put_message(message(body=b"b" * 1000)),
            ]
            cfg3 = s.commitlog_max_offset()
            return [r.status for r in out], cfg3
    statuses, end = run(go())
    assert statuses == [PutStatus.MESSAGE_ILLEGAL, PutStatus.MESSAGE_ILLEGAL,
                        PutStatus.PROPERTIES_SIZE_EXCEEDED, PutStatus.PUT_OK, PutStatus.PUT_OK]
    items = [m for _, m in scan_files(cfg2) if isinstance(m, StoredMessage)]
    assert [len(m.topic) for m in items] == [127, 9]
    assert end == sum(m.total_size for m in items)


def test_a_record_larger_than_a_file_is_illegal(cfg: StoreConfig) -> None:
    (r,) = _put_many(cfg, [message(body=b"z" * 4096)])
    assert r.status is PutStatus.MESSAGE_ILLEGAL


def test_ipv6_hosts_set_the_sysflag_bits_and_long_message_ids(tmp_path) -> None:
    from tests.store.storeutil import small_config
    cfg = small_config(tmp_path / "s6", store_host=("fe80::1", 10911))
    m = MessageToStore(topic="V6", queue_id=0, body=b"six", born_timestamp=1, born_host=("2001:db8::5", 4242))
    (r,) = _put_many(cfg, [m])
    (rec,) = [x for _, x in scan_files(cfg) if isinstance(x, StoredMessage)]
    assert rec.sys_flag & MessageSysFlag.BORNHOST_V6_FLAG and rec.sys_flag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
    assert rec.born_host == HostPort("2001:db8::5", 4242) and rec.store_host == HostPort("fe80::1", 10911)
    assert len(r.msg_id) == 56 and decode_offset_msg_id(r.msg_id).offset == r.wrote_offset
    assert r.wrote_bytes == 91 + 3 + 2 + 24


def test_transaction_types_and_queue_offsets(cfg: StoreConfig) -> None:
    prepared = int(MessageSysFlag.TRANSACTION_PREPARED_TYPE)
    commit = int(MessageSysFlag.TRANSACTION_COMMIT_TYPE)
    rollback = int(MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)

    async def go() -> tuple:
        async with MessageStore(cfg) as s:
            rs = [await s.put_message(message(queue_id=0, body=b"plain", uniq="P1")),
                  await s.put_message(message(queue_id=0, body=b"half", sys_flag=prepared, uniq="H1")),
                  await s.put_message(message(queue_id=0, body=b"done", sys_flag=commit, uniq="C1")),
                  await s.put_message(message(queue_id=0, body=b"undo", sys_flag=rollback, uniq="R1"))]
            got = s.get_messages("g", "TopicTest", 0, 0, 32)
            keys = {k: len(s.query_message("TopicTest", k, 32, 0, 2**62)) for k in ("P1", "H1", "C1", "R1")}
            return rs, got, s.max_offset("TopicTest", 0), keys
    rs, got, max_offset, keys = run(go())
    # doAppend: prepared and rolled-back messages take queue offset 0 and stay out of the queue
    assert [r.queue_offset for r in rs] == [0, 0, 1, 0]
    assert max_offset == 2
    assert [decode_stored_message(m).body for m in got.messages] == [b"plain", b"done"]
    # IndexService.buildIndex: everything but rolled-back messages is indexed
    assert keys == {"P1": 1, "H1": 1, "C1": 1, "R1": 0}


def test_tags_codes_in_the_consume_queue(cfg: StoreConfig) -> None:
    from tests.store.storeutil import cq_units
    _put_many(cfg, [message(tags="TagA"), message(), message(tags="TagB || TagC"), message(tags="")])
    units = cq_units(cfg, "TopicTest", 0)
    # String.hashCode of the TAGS value ("TagA" is 2598919 in Java), 0 without tags
    assert [u[2] for u in units] == [2598919, 0, tags_code("TagB || TagC"), 0]
    records = [(o, m) for o, m in scan_files(cfg) if isinstance(m, StoredMessage)]
    assert [(u[0], u[1]) for u in units] == [(o, m.total_size) for o, m in records]


def test_walking_in_windows_smaller_than_a_record(cfg: StoreConfig) -> None:
    from reference_broker.store.commitlog import CommitLog
    rs = _put_many(cfg, [message(queue_id=0, body=_body(i)) for i in range(25)])
    # a torn last record: its second half never written
    last = commitlog_files(cfg)[-1]
    data = bytearray(last.read_bytes())
    pos = rs[-1].wrote_offset - int(last.name)
    data[pos + rs[-1].wrote_bytes // 2:] = bytes(len(data) - pos - rs[-1].wrote_bytes // 2)
    last.write_bytes(bytes(data))
    expected = [(o, m.total_size) for o, m in scan_files(cfg) if isinstance(m, StoredMessage)]
    for window in (16, 64, 100, 333, 4096):
        cl = CommitLog(cfg.commitlog_dir, FILE, window=window)
        cl.load()
        try:
            items = list(cl.walk(0, verify=True))
            assert [(i.offset, i.size) for i in items if i.kind == "record"] == expected
            assert items[-1].kind == "end" and items[-1].offset == rs[-1].wrote_offset
            assert cl.last_record_end(0, verify=True)[0] == rs[-1].wrote_offset
        finally:
            cl.close()


def test_messages_that_cannot_be_written_are_illegal_not_errors(cfg: StoreConfig) -> None:
    bad = [MessageToStore(topic="\ud800", queue_id=0, body=b"", born_timestamp=1, born_host=BORN),
           MessageToStore(topic="T", queue_id=0, body=b"", born_timestamp=1, born_host=("not-an-ip", 1)),
           MessageToStore(topic="T", queue_id=0, body=b"", born_timestamp=-(2**70), born_host=BORN)]
    results = _put_many(cfg, [*bad, message()])
    assert [r.status for r in results] == [PutStatus.MESSAGE_ILLEGAL] * 3 + [PutStatus.PUT_OK]
    assert results[-1].wrote_offset == 0


def test_records_are_what_encode_stored_message_writes(tmp_path) -> None:
    from tests.store.storeutil import small_config
    cfg = small_config(tmp_path / "v6", store_host=("fe80::7", 10911), mapped_file_size_commitlog=1 << 16)
    prepared = int(MessageSysFlag.TRANSACTION_PREPARED_TYPE)
    msgs = [
        message(body=b"plain", tags="TagA", keys="k1 k2", uniq="U1"),
        MessageToStore(topic="Raw", queue_id=3, body=b"\x00raw", born_timestamp=-5, born_host=("::ffff:1.2.3.4", 1),
                       properties="ZZ\x01z\x02AA\x01a", flag=-1, reconsume_times=2**31 - 1,
                       prepared_transaction_offset=2**63 - 1),
        message(queue_id=1, body=b"half", sys_flag=prepared, extra={"\u00e9t\u00e9": "\U0001F600"}),
        message(topic="T" * 127, body=b""),
    ]
    results = _put_many(cfg, msgs)
    assert all(r.status is PutStatus.PUT_OK for r in results)
    data = commitlog_files(cfg)[0].read_bytes()
    for m, r in zip(msgs, results, strict=True):
        text = m.properties if isinstance(m.properties, str) else None
        rebuilt = StoredMessage(
            topic=m.topic, body=m.body, properties_text=text,
            properties={} if text is not None else dict(m.properties), queue_id=m.queue_id, flag=m.flag,
            queue_offset=r.queue_offset, physical_offset=r.wrote_offset, sys_flag=m.sys_flag,
            born_timestamp=m.born_timestamp, born_host=HostPort(*m.born_host), store_timestamp=r.store_timestamp,
            store_host=HostPort("fe80::7", 10911), reconsume_times=m.reconsume_times,
            prepared_transaction_offset=m.prepared_transaction_offset)
        assert data[r.wrote_offset:r.wrote_offset + r.wrote_bytes] == encode_stored_message(rebuilt)
        assert r.msg_id == create_offset_msg_id("fe80::7", 10911, r.wrote_offset)
