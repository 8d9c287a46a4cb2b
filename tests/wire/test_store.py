# Licensed under the Apache License, Version 2.0. See LICENSE.
"""wire.store: commit-log scanning, ConsumeQueue entries, file names, checkpoint and index files.

The big check replays the commit log a 4.9.8 master sent to a wiped slave
(``08-ha-catchup-from-zero``): every byte from offset 0 to the end of the store.
"""

from __future__ import annotations

import functools
import itertools
import re
import struct
from collections import Counter, defaultdict
from datetime import UTC
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import shared_path
from tests.pcaputil import streams
from tests.wire.test_message import _send_fields, _send_requests, broker_record
from wire import DecodeError, EncodeError, TrailingBytes, Truncated
from wire.message import HostPort, StoredMessage, encode_stored_message
from wire.store import (
    BLANK_MAGIC_CODE,
    CONSUME_QUEUE_ENTRY,
    CQ_STORE_UNIT_SIZE,
    END_FILE_MIN_BLANK_LENGTH,
    INDEX_ENTRY_SIZE,
    INDEX_HEADER_SIZE,
    MAPPED_FILE_SIZE_COMMITLOG,
    MAPPED_FILE_SIZE_CONSUME_QUEUE,
    MAX_HASH_SLOT_NUM,
    MAX_INDEX_NUM,
    OS_PAGE_SIZE,
    PRE_BLANK_ENTRY,
    Blank,
    ConsumeQueueEntry,
    IndexEntry,
    IndexHeader,
    Problem,
    ProblemKind,
    StoreCheckpoint,
    decode_blank,
    decode_checkpoint,
    decode_cq_entry,
    decode_cq_entry_construct,
    decode_hash_slot,
    decode_hash_slot_construct,
    decode_index_entry,
    decode_index_entry_construct,
    decode_index_entry_fields,
    decode_index_header,
    decode_index_header_construct,
    encode_blank,
    encode_checkpoint,
    encode_cq_entry,
    encode_cq_entry_construct,
    encode_cq_entry_fields,
    encode_hash_slot,
    encode_hash_slot_construct,
    encode_index_entry,
    encode_index_entry_construct,
    encode_index_entry_fields,
    encode_index_header,
    encode_index_header_construct,
    encode_index_header_fields,
    file_name_to_offset,
    hash_slot_position,
    index_entry_position,
    index_file_name,
    index_file_size,
    index_key,
    index_key_hash,
    index_put_key,
    index_select_phy_offsets,
    iter_cq_entries,
    iter_cq_entry_fields,
    new_index_header,
    offset_to_file_name,
    scan_commitlog,
    tags_code,
)

HA_PCAP = ("captures", "java-4.9.8", "08-ha-catchup-from-zero.pcap")


# ====================================================================== the HA catch-up capture

@functools.cache
def _replicated(path: Path) -> tuple[bytes, list[tuple[int, int]]]:
    """The commit-log bytes the master sent on 10912 (12-byte header: int64 offset, int32 size)."""
    (d,) = [d for d in streams(path) if d.sport == 10912]
    data, pos, out, frames = d.data, 0, bytearray(), []
    while pos < len(data):
        offset, size = struct.unpack_from(">qi", data, pos)
        pos += 12
        if size:
            frames.append((offset, size))
            out += data[pos:pos + size]
        pos += size
    return bytes(out), frames


def test_ha_catchup_is_a_whole_commit_log_from_zero() -> None:
    path = shared_path(*HA_PCAP)
    data, frames = _replicated(path)
    # transfers follow one another from offset 0 (MANIFEST: 113 transfers, 3,641,729 bytes)
    assert frames[0][0] == 0 and len(frames) == 113
    assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(frames))
    assert len(data) == 3_641_729
    items = list(scan_commitlog(data, 0, verify_crc=True))
    assert all(isinstance(item, StoredMessage) for _, item in items)  # no Problem: ends on a boundary
    records = [(o, m) for o, m in items if isinstance(m, StoredMessage)]
    expected = 0
    for offset, m in records:
        assert offset == expected == m.physical_offset
        assert m.crc_ok
        expected += m.total_size
    assert expected == 3_641_729
    # the .txt beside the pcap: both brokers report this many puts and this max offset
    txt = path.with_suffix(".txt").read_text()
    assert {int(v) for v in re.findall(r"commitLogMaxOffset\s*:\s*(\d+)", txt)} == {expected}
    assert {int(v) for v in re.findall(r"msgPutTotalTodayNow\s*:\s*(\d+)", txt)} == {len(records)}
    # MANIFEST: 3,000 HaTopic messages of 1 KiB, plus 5x700 B and 3x5000 B (compressed) live sends
    ha = Counter((len(m.decompressed_body()), m.is_compressed) for _, m in records if m.topic == "HaTopic")
    assert ha[(1024, False)] == 3000
    assert ha[(700, False)] >= 5 and ha[(5000, True)] >= 3
    # re-encoding every record gives the replicated bytes back
    assert b"".join(encode_stored_message(m) for _, m in records) == data


def test_ha_catchup_dispatches_to_consume_queues() -> None:
    data, _ = _replicated(shared_path(*HA_PCAP))
    queues: dict[tuple[str, int], list[ConsumeQueueEntry]] = defaultdict(list)
    for offset, m in scan_commitlog(data):
        assert isinstance(m, StoredMessage)
        cq = queues[(m.topic, m.queue_id)]
        assert m.queue_offset == len(cq)  # each queue counts from 0 in commit-log order
        entry = ConsumeQueueEntry(offset, m.total_size, tags_code(m.tags))
        raw = encode_cq_entry(entry)
        assert len(raw) == CQ_STORE_UNIT_SIZE and decode_cq_entry(raw) == entry
        cq.append(entry)
    qry = queues[("QryTopic", 3)]
    assert qry == [ConsumeQueueEntry(34928, 200, tags_code("tagQ"))]
    file = b"".join(encode_cq_entry(e) for e in queues[("HaTopic", 0)])
    assert list(iter_cq_entries(file)) == queues[("HaTopic", 0)]


def test_ha_catchup_builds_an_index() -> None:
    data, _ = _replicated(shared_path(*HA_PCAP))
    slots, entries = 997, 20_000
    buf = bytearray(index_file_size(slots, entries))
    first_ts = None
    for offset, m in scan_commitlog(data):
        assert isinstance(m, StoredMessage)
        first_ts = first_ts or m.store_timestamp
        for key in ([m.uniq_key] if m.uniq_key else []) + m.keys:  # IndexService.buildIndex
            assert index_put_key(buf, index_key(m.topic, key), offset, m.store_timestamp,
                                 hash_slot_num=slots, index_num=entries)
    header = decode_index_header(buf)
    assert header.begin_phy_offset == 0 and header.end_phy_offset == 3_641_729 - 260
    assert header.begin_timestamp == first_ts
    found = index_select_phy_offsets(buf, index_key("QryTopic", "qkey-7"), 0, 2**62, hash_slot_num=slots)
    assert found == [34928]
    found = index_select_phy_offsets(buf, index_key("QryTopic", "C000020216C05FFD2B276E4D0ACC0000"), 0, 2**62,
                                     hash_slot_num=slots)
    assert found == [34928]
    assert index_select_phy_offsets(buf, index_key("QryTopic", "nope"), 0, 2**62, hash_slot_num=slots) == []


def test_live_sends_are_stored_as_the_broker_builds_them() -> None:
    path = shared_path(*HA_PCAP)
    data, _ = _replicated(path)
    sends = [s for s in _send_requests(path) if s[1] is not None and s[1].code == 0]
    assert len(sends) == 8  # MANIFEST: 5x700 B and 3x5000 B live sends
    for cmd, resp, d in sends:
        assert resp is not None
        offset = int(resp.ext_fields["msgId"][-16:], 16)
        size = struct.unpack_from(">i", data, offset)[0]
        stored = data[offset:offset + size]
        ts = struct.unpack_from(">q", stored, 56)[0]  # storeTimestamp: set under the put lock
        rebuilt = broker_record(cmd, resp, HostPort(d.src, d.sport), HostPort("127.0.0.1", 10911), ts)
        assert encode_stored_message(rebuilt) == stored, _send_fields(cmd)["topic"]


# ====================================================================== scanning rules

def _append(files: list[bytearray], file_size: int, msg: StoredMessage) -> int:
    """Append like DefaultAppendMessageCallback.doAppend; returns the record's offset."""
    cur = files[-1]
    base = (len(files) - 1) * file_size
    size = msg.total_size
    if size + END_FILE_MIN_BLANK_LENGTH > file_size - len(cur):
        cur += encode_blank(file_size - len(cur))
        cur += b"\xee" * (file_size - len(cur))  # the rest of the file is left as it was
        files.append(bytearray())
        return _append(files, file_size, msg)
    offset = base + len(cur)
    cur += encode_stored_message(msg.replace(physical_offset=offset))
    return offset


def _log(file_size: int = 1024, count: int = 12) -> tuple[list[bytearray], list[int]]:
    files: list[bytearray] = [bytearray()]
    offsets = [_append(files, file_size, StoredMessage(topic="T", body=bytes(50 + i), queue_offset=i))
               for i in range(count)]
    return files, offsets


def test_blank_marker_ends_a_file() -> None:
    files, offsets = _log()
    assert len(files) >= 2
    data = b"".join(files)
    items = list(scan_commitlog(data))
    blanks = [(o, b) for o, b in items if isinstance(b, Blank)]
    assert blanks and all((o + b.size) % 1024 == 0 for o, b in blanks)
    assert [o for o, m in items if isinstance(m, StoredMessage)] == offsets
    # one file on its own: records, then its BLANK
    first = list(scan_commitlog(bytes(files[0])))
    assert isinstance(first[-1][1], Blank) and first[-1][0] + first[-1][1].size == 1024
    # a later file scanned with its name as the base offset
    second = list(scan_commitlog(bytes(files[1]), file_name_to_offset(offset_to_file_name(1024))))
    assert second[0][0] == 1024 and isinstance(second[0][1], StoredMessage)
    assert second[0][1].physical_offset == 1024


def test_scan_stops_at_a_zero_tail() -> None:
    files, _ = _log(count=3)
    written = bytes(files[0])
    mapped = written + bytes(1024 - len(written))
    items = list(scan_commitlog(mapped, 4096))
    where, last = items[-1]
    assert isinstance(last, Problem) and last.kind is ProblemKind.ZERO_TAIL
    assert where == 4096 + len(written)
    assert len(items) == 4
    # fewer than 8 zero bytes left
    (w, p), = [i for i in scan_commitlog(written + bytes(5)) if isinstance(i[1], Problem)]
    assert p.kind is ProblemKind.ZERO_TAIL and w == len(written)


@pytest.mark.parametrize("cut", [4, 8, 60, -1])
def test_scan_reports_a_torn_record(cut: int) -> None:
    files, offsets = _log(count=3)
    written = bytes(files[0])
    torn = written[:offsets[2] + (cut if cut > 0 else len(written) - offsets[2] - 1)]
    items = list(scan_commitlog(torn, 100))
    where, last = items[-1]
    assert isinstance(last, Problem) and last.kind is ProblemKind.TRUNCATED
    assert where == 100 + offsets[2] and last.error is not None
    assert last.error.offset == 100 + len(torn)
    assert len(items) == 3


def test_scan_reports_bad_magic_size_and_crc() -> None:
    files, offsets = _log(count=3)
    good = bytes(files[0])
    bad_magic = bytearray(good)
    bad_magic[offsets[1] + 4:offsets[1] + 8] = b"\x12\x34\x56\x78"
    (w, p) = list(scan_commitlog(bytes(bad_magic)))[-1]
    assert isinstance(p, Problem) and p.kind is ProblemKind.BAD_MAGIC and w == offsets[1]
    assert p.error is not None and p.error.offset == offsets[1] + 4
    bad_size = bytearray(good)
    struct.pack_into(">i", bad_size, offsets[1], offsets[2] - offsets[1] + 1)
    (w, p) = list(scan_commitlog(bytes(bad_size)))[-1]
    assert isinstance(p, Problem) and p.kind is ProblemKind.BAD_RECORD and w == offsets[1]
    bad_crc = bytearray(good)
    bad_crc[offsets[1] + 8] ^= 0x40
    assert all(isinstance(i, StoredMessage) for _, i in scan_commitlog(bytes(bad_crc)))
    (w, p) = list(scan_commitlog(bytes(bad_crc), verify_crc=True))[-1]
    assert isinstance(p, Problem) and p.kind is ProblemKind.CRC_MISMATCH and w == offsets[1]
    blank = bytearray(good[:offsets[1]]) + struct.pack(">iI", 4, BLANK_MAGIC_CODE)
    assert list(scan_commitlog(bytes(blank)))[-1][1].kind is ProblemKind.BAD_BLANK  # type: ignore[union-attr]
    garbage = good[:offsets[1]] + b"\x01\x02\x03"
    assert list(scan_commitlog(garbage))[-1][1].kind is ProblemKind.TRUNCATED  # type: ignore[union-attr]


@given(st.binary(max_size=400), st.integers(0, 2**40))
def test_scanning_arbitrary_bytes_never_raises(data: bytes, base: int) -> None:
    items = list(scan_commitlog(data, base))
    assert all(isinstance(i, Problem) for _, i in items[-1:]) or not data or \
        isinstance(items[-1][1], (StoredMessage, Blank))
    assert all(not isinstance(i, Problem) for _, i in items[:-1])


# ====================================================================== BLANK, ConsumeQueue, names

def test_blank_marker_bytes() -> None:
    assert encode_blank(100) == bytes.fromhex("00000064CBD43194")
    assert decode_blank(encode_blank(4096)) == Blank(4096)
    with pytest.raises(EncodeError):
        encode_blank(7)
    with pytest.raises(DecodeError):
        decode_blank(bytes.fromhex("00000064DAA320A7"))
    with pytest.raises(DecodeError):
        decode_blank(b"\0\0\0")


def test_cq_entry_layout() -> None:
    e = ConsumeQueueEntry(34928, 200, tags_code("tagQ"))
    raw = encode_cq_entry(e)
    assert raw[:12].hex() == "0000000000008870" + "000000c8"
    assert struct.unpack(">q", raw[12:])[0] == tags_code("tagQ")
    assert encode_cq_entry(PRE_BLANK_ENTRY).hex() == "0000000000000000" + "7fffffff" + "0000000000000000"
    assert decode_cq_entry(encode_cq_entry(PRE_BLANK_ENTRY)).is_pre_blank
    assert decode_cq_entry(b"\xff" * 3 + raw, 3) == e
    with pytest.raises(Truncated):
        decode_cq_entry(raw[:19])
    with pytest.raises(TrailingBytes):
        list(iter_cq_entries(raw + b"\0"))
    with pytest.raises(EncodeError):
        ConsumeQueueEntry(0, 2**31, 0)
    assert MAPPED_FILE_SIZE_CONSUME_QUEUE == 6_000_000 and MAPPED_FILE_SIZE_COMMITLOG == 1 << 30


@pytest.mark.parametrize(("tags", "expected"), [
    (None, 0), ("", 0),
    ("hello", 99162322),                  # String.hashCode
    ("polygenelubricants", -(2**31)),    # a negative hash stays negative as a long
])
def test_tags_code(tags: str | None, expected: int) -> None:
    assert tags_code(tags) == expected


@given(st.binary(min_size=20, max_size=20))
def test_cq_entry_fast_path_matches_construct(raw: bytes) -> None:
    e = decode_cq_entry(raw)
    assert e == decode_cq_entry_construct(raw)
    assert encode_cq_entry(e) == raw


@pytest.mark.parametrize(("offset", "name"), [
    (0, "00000000000000000000"),
    (1073741824, "00000000001073741824"),
    (2 * 1073741824, "00000000002147483648"),
    (6_000_000, "00000000000006000000"),
])
def test_file_names(offset: int, name: str) -> None:
    assert offset_to_file_name(offset) == name
    assert file_name_to_offset(name) == offset


@pytest.mark.parametrize("name", ["0", "0000000000000000000a", "000000000000000000000", "99999999999999999999"])
def test_bad_file_names(name: str) -> None:
    with pytest.raises(DecodeError):
        file_name_to_offset(name)


def test_negative_offsets_have_no_file_name() -> None:
    with pytest.raises(EncodeError):
        offset_to_file_name(-1)


# ====================================================================== checkpoint

def test_checkpoint_layout() -> None:
    cp = StoreCheckpoint(1795341742797, 1795341742700, 1795341730000, 4096, 8192)
    raw = encode_checkpoint(cp)
    assert len(raw) == OS_PAGE_SIZE
    assert struct.unpack_from(">5q", raw) == (1795341742797, 1795341742700, 1795341730000, 4096, 8192)
    assert not any(raw[40:])
    assert decode_checkpoint(raw) == cp
    # a 4.9.x file holds the three timestamps; a short file reads as zero-padded
    assert decode_checkpoint(raw[:24]) == StoreCheckpoint(1795341742797, 1795341742700, 1795341730000)
    with pytest.raises(TrailingBytes):
        decode_checkpoint(raw + b"\0")
    assert cp.min_timestamp == 1795341742700 - 3000
    assert cp.min_timestamp_index == 1795341730000
    assert StoreCheckpoint(1000, 2000).min_timestamp == 0
    with pytest.raises(EncodeError):
        encode_checkpoint(StoreCheckpoint(2**63))


# ====================================================================== index files

def test_index_layout() -> None:
    h = IndexHeader(1, 2, 3, 4, 5, 6)
    raw = encode_index_header(h)
    assert len(raw) == INDEX_HEADER_SIZE == 40
    assert struct.unpack(">4q2i", raw) == (1, 2, 3, 4, 5, 6)
    assert decode_index_header(raw) == h
    e = IndexEntry(0x7FFFFFFF, 34928, 12, 3)
    raw = encode_index_entry(e)
    assert len(raw) == INDEX_ENTRY_SIZE and struct.unpack(">iqii", raw) == (0x7FFFFFFF, 34928, 12, 3)
    assert decode_index_entry(raw) == e
    assert decode_hash_slot(encode_hash_slot(17)) == 17
    with pytest.raises(Truncated):
        decode_index_entry(raw[:-1])
    with pytest.raises(EncodeError):
        encode_index_entry(IndexEntry(2**31, 0, 0, 0))
    assert index_file_size() == 40 + MAX_HASH_SLOT_NUM * 4 + MAX_INDEX_NUM * 20 == 420_000_040
    assert hash_slot_position(7, 5) == 40 + 2 * 4
    assert index_entry_position(1, 5) == 40 + 20 + 20


def test_index_key_hash() -> None:
    assert index_key("QryTopic", "qkey-7") == "QryTopic#qkey-7"
    assert index_key_hash("hello") == 99162322
    assert index_key_hash("polygenelubricants") == 0  # Math.abs(Integer.MIN_VALUE) is negative
    assert all(index_key_hash(k) >= 0 for k in ("a", "Aa", "zzzzzzzzzzzzzzzzzzz"))


def test_index_put_and_select_follow_index_file() -> None:
    slots, num = 4, 6
    buf = bytearray(index_file_size(slots, num))
    # "Aa" and "BB" share a hash, so they share a slot chain
    assert index_put_key(buf, "Aa", 100, 10_000, hash_slot_num=slots, index_num=num)
    assert index_put_key(buf, "BB", 200, 12_500, hash_slot_num=slots, index_num=num)
    assert index_put_key(buf, "Aa", 300, 15_000, hash_slot_num=slots, index_num=num)
    with pytest.raises(EncodeError):
        index_put_key(buf, "Aa", 300, 15_000)  # a default-sized file does not fit this buffer
    h = decode_index_header(buf)
    assert (h.begin_timestamp, h.end_timestamp, h.begin_phy_offset, h.end_phy_offset) == (10_000, 15_000, 100, 300)
    assert (h.hash_slot_count, h.index_count) == (1, 4)
    assert decode_index_entry(buf, index_entry_position(3, slots)) == IndexEntry(2112, 300, 5, 2)
    assert decode_hash_slot(buf, hash_slot_position(2112, slots)) == 3
    # selectPhyOffset compares hashes only: colliding keys come back too, newest first
    assert index_select_phy_offsets(buf, "Aa", 0, 10**9, hash_slot_num=slots) == [300, 200, 100]
    assert index_select_phy_offsets(buf, "BB", 0, 10**9, hash_slot_num=slots) == [300, 200, 100]
    assert index_select_phy_offsets(buf, "Aa", 14_000, 10**9, hash_slot_num=slots) == [300]
    assert index_select_phy_offsets(buf, "Aa", 0, 10**9, 1, hash_slot_num=slots) == [300]
    # entries 1..5 fit in a file of 6 (entry 0 is never used)
    assert index_put_key(buf, "x", 400, 16_000, hash_slot_num=slots, index_num=num)
    assert index_put_key(buf, "y", 500, 17_000, hash_slot_num=slots, index_num=num)
    assert not index_put_key(buf, "z", 600, 18_000, hash_slot_num=slots, index_num=num)


def test_new_index_file_continues_the_last() -> None:
    assert new_index_header(5000, 1795341742797) == IndexHeader(1795341742797, 1795341742797, 5000, 5000)
    assert new_index_header() == IndexHeader()
    buf = bytearray(index_file_size(4, 4))
    buf[:40] = encode_index_header(new_index_header(5000, 10_000))
    assert index_put_key(buf, "k", 6000, 13_999, hash_slot_num=4, index_num=4)
    assert decode_index_entry(buf, index_entry_position(1, 4)).time_diff == 3
    h = decode_index_header(buf)
    assert (h.begin_timestamp, h.begin_phy_offset) == (13_999, 6000)  # the first entry resets them


def test_index_file_name() -> None:
    assert index_file_name(1795341742797, UTC) == "20261122100222797"


# ====================================================================== struct fast paths vs construct
# The index and consume-queue layouts are encoded and decoded through ``struct``; the construct
# declarations stay the reference. Each fast path must give the same values and bytes, and fail
# exactly where construct fails, with the same error type, offset and field.

_ANY_INT = st.one_of(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**64), 2**64),
                     st.sampled_from([-(2**63) - 1, -(2**63), 2**63 - 1, 2**63, -(2**31) - 1, 2**31]))


def _outcome(fn, *args):
    """What a call gives: ("ok", value) or ("error", type, offset, field) for wire errors."""
    try:
        return ("ok", fn(*args))
    except DecodeError as exc:
        return ("error", type(exc), exc.offset, exc.field)
    except EncodeError as exc:
        return ("error", type(exc), None, exc.field)


_DECODERS = [
    (decode_index_header, decode_index_header_construct),
    (decode_index_entry, decode_index_entry_construct),
    (decode_hash_slot, decode_hash_slot_construct),
    (decode_cq_entry, decode_cq_entry_construct),
]


@pytest.mark.parametrize(("fast", "reference"), _DECODERS, ids=lambda f: f.__name__)
@given(data=st.binary(max_size=64), offset=st.integers(-3, 70))
def test_fixed_layout_decoders_match_construct(fast, reference, data: bytes, offset: int) -> None:
    got = _outcome(fast, data, offset)
    assert got == _outcome(reference, data, offset)
    for view in (bytearray(data), memoryview(data)):
        assert _outcome(fast, view, offset) == got


@given(data=st.binary(max_size=64), offset=st.integers(-3, 70))
def test_index_entry_fields_are_the_entry(data: bytes, offset: int) -> None:
    got = _outcome(decode_index_entry_fields, data, offset)
    want = _outcome(decode_index_entry, data, offset)
    if want[0] == "ok":
        e = want[1]
        assert got == ("ok", (e.key_hash, e.phy_offset, e.time_diff, e.prev_index))
    else:
        assert got == want


@given(st.tuples(*[_ANY_INT] * 6))
def test_index_header_encoders_match_construct(values: tuple[int, ...]) -> None:
    # a view whose fields do not fit cannot be built (W9); encode one that bypasses the check
    h = object.__new__(IndexHeader)
    for name, v in zip(IndexHeader.__dataclass_fields__, values, strict=True):
        object.__setattr__(h, name, v)
    want = _outcome(encode_index_header_construct, h)
    assert _outcome(encode_index_header, h) == want
    assert _outcome(encode_index_header_fields, *values) == want
    if want[0] == "ok":
        assert IndexHeader(*values) == decode_index_header(want[1])


@given(st.tuples(*[_ANY_INT] * 4))
def test_index_entry_encoders_match_construct(values: tuple[int, ...]) -> None:
    e = object.__new__(IndexEntry)
    for name, v in zip(IndexEntry.__dataclass_fields__, values, strict=True):
        object.__setattr__(e, name, v)
    want = _outcome(encode_index_entry_construct, e)
    assert _outcome(encode_index_entry, e) == want
    assert _outcome(encode_index_entry_fields, *values) == want
    if want[0] == "ok":
        assert decode_index_entry_fields(want[1]) == values


@given(_ANY_INT)
def test_hash_slot_encoders_match_construct(value: int) -> None:
    want = _outcome(encode_hash_slot_construct, value)
    assert _outcome(encode_hash_slot, value) == want
    if want[0] == "ok":
        assert decode_hash_slot(want[1]) == value


@given(st.tuples(*[_ANY_INT] * 3))
def test_cq_entry_encoders_match_construct(values: tuple[int, int, int]) -> None:
    e = object.__new__(ConsumeQueueEntry)
    for name, v in zip(ConsumeQueueEntry.__dataclass_fields__, values, strict=True):
        object.__setattr__(e, name, v)
    want = _outcome(encode_cq_entry_construct, e)
    assert _outcome(encode_cq_entry_fields, *values) == want
    if want[0] == "ok":
        assert want[1] == encode_cq_entry(e)


@given(st.binary(max_size=130))
def test_cq_entry_fields_iterate_as_the_entries(data: bytes) -> None:
    try:
        want = [(e.commit_log_offset, e.size, e.tags_code) for e in iter_cq_entries(data)]
    except TrailingBytes as exc:
        with pytest.raises(TrailingBytes) as info:
            list(iter_cq_entry_fields(data))
        assert (info.value.offset, info.value.found) == (exc.offset, exc.found)
        return
    assert list(iter_cq_entry_fields(data)) == want
    assert want == [tuple(CONSUME_QUEUE_ENTRY.parse(data[i:i + 20]).values())[1:4]
                    for i in range(0, len(data), 20)]


def test_index_put_key_writes_what_the_declarations_read() -> None:
    slots, num = 5, 8
    buf = bytearray(index_file_size(slots, num))
    for i, key in enumerate(("Aa", "BB", "k1", "k2", "Aa")):
        assert index_put_key(buf, key, 1000 * i, 50_000 + 1500 * i, hash_slot_num=slots, index_num=num)
        assert decode_index_header_construct(buf) == decode_index_header(buf)
    for n in range(1, 6):
        at = index_entry_position(n, slots)
        assert decode_index_entry_construct(buf, at) == decode_index_entry(buf, at)
    for k in range(slots):
        assert decode_hash_slot_construct(buf, 40 + 4 * k) == decode_hash_slot(buf, 40 + 4 * k)
    assert decode_index_header(buf).index_count == 6
