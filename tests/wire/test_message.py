# Licensed under the Apache License, Version 2.0. See LICENSE.
"""wire.message: properties, sysFlag/compression, stored records, message ids, batch bodies.

Vectors live in ``fixtures/vectors/messages``; the capture tests read ``../shared/captures`` through
``shared_path`` and check what the MANIFESTs and the saved mqadmin output say.
"""

from __future__ import annotations

import functools
import json
import re
import socket
import struct
import zlib
from collections import Counter
from datetime import UTC
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.conftest import shared_path
from tests.pcaputil import Direction, streams
from wire import DecodeError, EncodeError, FrameBuffer, RemotingCommand, Truncated, decode_frame
from wire.java import java_hash_order
from wire.message import (
    BATCH_ENTRY_OVERHEAD,
    CRC32_RESERVED_LEN,
    MAX_INFLATED_BODY,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    BatchEntry,
    CompressionType,
    HostPort,
    MessageConst,
    MessageSysFlag,
    StoredMessage,
    TransactionType,
    UniqIdGenerator,
    body_crc,
    check_crc32_property,
    compress_body,
    compression_type,
    create_offset_msg_id,
    create_uniq_id,
    decode_batch,
    decode_batch_construct,
    decode_messages,
    decode_offset_msg_id,
    decode_properties,
    decode_stored_message,
    decode_stored_message_construct,
    decode_uniq_id,
    decompress_body,
    encode_batch,
    encode_messages,
    encode_properties,
    encode_record_fields,
    encode_stored_message,
    encode_stored_message_construct,
    expand_batch,
    iter_stored_messages,
    java_string_hash,
    month_start_ms,
    scan_record_heads,
    stored_message_size,
    transaction_type,
)

VECTORS = Path(__file__).resolve().parents[2] / "fixtures" / "vectors" / "messages"
REMOTING_PORTS = {9876, 10909, 10911, 10919, 10921}


def _json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def _vector_bytes(vec: dict) -> bytes:
    return bytes.fromhex("".join(h for h, _ in vec["bytes"]))


def _int(v: int | str) -> int:
    return int(v, 0) if isinstance(v, str) else v


# ====================================================================== capture helpers

@functools.cache
def _commands(path: Path) -> list[tuple[Direction, RemotingCommand]]:
    """Every remoting command of a capture, chunk by chunk (chunks after a gap start on a frame)."""
    out = []
    for d in streams(path):
        if d.sport not in REMOTING_PORTS and d.dport not in REMOTING_PORTS:
            continue
        for _, chunk in d.chunks:
            fb = FrameBuffer()
            fb.feed(chunk)
            try:
                for frame in fb:
                    out.append((d, decode_frame(frame)))
            except DecodeError:
                continue  # the deliberately malformed frames of scenario 10
    return out


@functools.cache
def _exchanges(path: Path) -> list[tuple[RemotingCommand, RemotingCommand, Direction]]:
    """(request, response, request direction) pairs, matched by connection and opaque."""
    cmds = _commands(path)
    requests = {(d.key, c.opaque): (d, c) for d, c in cmds if not c.is_response}
    out = []
    for d, c in cmds:
        if c.is_response:
            hit = requests.get(((d.dst, d.dport, d.src, d.sport), c.opaque))
            if hit is not None:
                out.append((hit[1], c, hit[0]))
    return out


def _message_bodies(path: Path, code: int) -> list[tuple[RemotingCommand, bytes]]:
    return [(req, resp.body) for req, resp, _ in _exchanges(path)
            if req.code == code and resp.code == 0 and resp.body]


CAPTURES = _json(VECTORS / "captures.json")
assert isinstance(CAPTURES, list)


# ====================================================================== record vectors

RECORD_VECTORS = sorted((VECTORS / "records").glob("*.json"))


def _expected_message(m: dict) -> StoredMessage:
    return StoredMessage(
        topic=m["topic"], body=bytes.fromhex(m["body"]), properties_text=m["properties_text"],
        queue_id=m["queue_id"], flag=m["flag"], queue_offset=m["queue_offset"],
        physical_offset=m["physical_offset"], sys_flag=m["sys_flag"],
        born_timestamp=m["born_timestamp"], born_host=HostPort(*m["born_host"]),
        store_timestamp=m["store_timestamp"], store_host=HostPort(*m["store_host"]),
        reconsume_times=m["reconsume_times"],
        prepared_transaction_offset=m["prepared_transaction_offset"],
        body_crc=_int(m["body_crc"]), magic=_int(m["magic"]))


@pytest.mark.parametrize("path", RECORD_VECTORS, ids=lambda p: p.stem)
def test_record_vector_decodes(path: Path) -> None:
    vec = _json(path)
    data = _vector_bytes(vec)
    m = vec["message"]
    for decode in (decode_stored_message, decode_stored_message_construct):
        msg = decode(data, verify=True)
        assert msg.total_size == m["total_size"] == len(data)
        assert msg.magic == _int(m["magic"])
        assert msg.body_crc == _int(m["body_crc"])
        assert msg.body == bytes.fromhex(m["body"])
        assert (msg.topic, msg.queue_id, msg.flag) == (m["topic"], m["queue_id"], m["flag"])
        assert (msg.queue_offset, msg.physical_offset) == (m["queue_offset"], m["physical_offset"])
        assert msg.sys_flag == m["sys_flag"]
        assert msg.born_timestamp == m["born_timestamp"]
        assert msg.born_host == tuple(m["born_host"])
        assert msg.store_timestamp == m["store_timestamp"]
        assert msg.store_host == tuple(m["store_host"])
        assert msg.reconsume_times == m["reconsume_times"]
        assert msg.prepared_transaction_offset == m["prepared_transaction_offset"]
        assert msg.properties_text == m["properties_text"]
        assert dict(msg.properties) == m["properties"]
        assert msg.offset_msg_id == m["offset_msg_id"]
        assert msg.crc_ok
        if "decompressed_body" in m:
            assert msg.decompressed_body() == bytes.fromhex(m["decompressed_body"])
        if "keys" in m:
            assert (msg.keys, msg.tags) == (m["keys"], m["tags"])
        assert msg == _expected_message(m)


@pytest.mark.parametrize("path", RECORD_VECTORS, ids=lambda p: p.stem)
def test_record_vector_encodes(path: Path) -> None:
    vec = _json(path)
    data = _vector_bytes(vec)
    m = vec["message"]
    msg = _expected_message(m)
    assert encode_stored_message(msg) == data
    assert encode_stored_message_construct(msg) == data
    size = stored_message_size(len(msg.body), len(msg.topic.encode()), len(msg.properties_text.encode()),
                               sys_flag=msg.sys_flag, magic=msg.magic)
    assert size == len(data)
    # what the broker would fill in by itself gives the same record
    auto = StoredMessage(topic=m["topic"], body=bytes.fromhex(m["body"]), properties_text=m["properties_text"],
                         queue_id=m["queue_id"], flag=m["flag"], queue_offset=m["queue_offset"],
                         physical_offset=m["physical_offset"],
                         sys_flag=m["sys_flag"] & ~(MessageSysFlag.BORNHOST_V6_FLAG
                                                    | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG),
                         born_timestamp=m["born_timestamp"], born_host=HostPort(*m["born_host"]),
                         store_timestamp=m["store_timestamp"], store_host=HostPort(*m["store_host"]),
                         reconsume_times=m["reconsume_times"], magic=_int(m["magic"]))
    assert encode_stored_message(auto) == data


@pytest.mark.parametrize("path", RECORD_VECTORS, ids=lambda p: p.stem)
def test_compiled_declaration_agrees(path: Path) -> None:
    from wire.message import STORED_MESSAGE

    data = _vector_bytes(_json(path))
    assert STORED_MESSAGE.compile().parse(data) == STORED_MESSAGE.parse(data)
    c = STORED_MESSAGE.parse(data)
    assert STORED_MESSAGE.build(c) == data


def test_worked_example_is_124_bytes_with_crc_77d18982() -> None:
    vec = _json(VECTORS / "records" / "worked-example-v1-ipv4.json")
    data = _vector_bytes(vec)
    assert len(data) == 124
    assert body_crc(b"Hello") == 0x77D18982 == struct.unpack_from(">I", data, 8)[0]
    assert stored_message_size(5, 9, 19) == 124 == 91 + 5 + 9 + 19


def test_record_sizes_follow_cal_msg_length() -> None:
    assert stored_message_size(0, 0, 0) == 91
    assert stored_message_size(0, 0, 0, sys_flag=MessageSysFlag.BORNHOST_V6_FLAG) == 103
    assert stored_message_size(0, 0, 0, sys_flag=0x30) == 115
    assert stored_message_size(0, 0, 0, magic=MESSAGE_MAGIC_CODE_V2) == 92
    # calMsgLength counts a negative body or properties length as 0
    assert stored_message_size(-5, 0, -1) == 91


# ====================================================================== record construction rules

def test_v2_is_chosen_for_topics_over_127_bytes() -> None:
    short = StoredMessage(topic="t" * 127)
    long_ = StoredMessage(topic="t" * 128)
    assert short.magic == MESSAGE_MAGIC_CODE
    assert long_.magic == MESSAGE_MAGIC_CODE_V2
    data = encode_stored_message(long_)
    assert struct.unpack_from(">H", data, 84 + 4)[0] == 128  # short topic length after the empty body
    assert decode_stored_message(data) == long_
    with pytest.raises(EncodeError):
        StoredMessage(topic="t" * 128, magic=MESSAGE_MAGIC_CODE)
    with pytest.raises(EncodeError):
        StoredMessage(topic="t", magic=0x12345678)


def test_ipv6_hosts_set_the_sysflag_bits() -> None:
    m = StoredMessage(topic="T", born_host=HostPort("::1", 1), store_host=HostPort("10.0.0.1", 2))
    assert m.sys_flag == MessageSysFlag.BORNHOST_V6_FLAG
    m = StoredMessage(topic="T", store_host=HostPort("fe80::1", 2), sys_flag=0x1)
    assert m.sys_flag == 0x1 | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
    with pytest.raises(EncodeError):
        StoredMessage(topic="T", sys_flag=MessageSysFlag.BORNHOST_V6_FLAG)  # IPv4 default host
    m = StoredMessage(topic="T", born_host=HostPort("2408:4004:0180:8100:3FAA:1DDE:2B3F:898A", 1))
    assert m.born_host == ("2408:4004:180:8100:3faa:1dde:2b3f:898a", 1)  # as decoding spells it
    with pytest.raises(EncodeError):
        StoredMessage(topic="T", born_host=HostPort("localhost", 1))
    with pytest.raises(EncodeError):
        StoredMessage(topic="T", born_host=("10.0.0.1", 2**31))  # type: ignore[arg-type]


@pytest.mark.parametrize(("changes", "field"), [
    ({"queue_id": 2**31}, "queue_id"),
    ({"queue_offset": 2**63}, "queue_offset"),
    ({"body_crc": -(2**31) - 1}, "body_crc"),
    ({"flag": True}, "flag"),
    ({"body": "text"}, "body"),
    ({"topic": b"T"}, "topic"),
    ({"properties_text": "a\x01" + "x" * 0x7FFF}, "properties"),
])
def test_unencodable_records_cannot_be_built(changes: dict, field: str) -> None:
    kwargs = {"topic": "T", **changes}
    with pytest.raises(EncodeError) as info:
        StoredMessage(**kwargs)
    assert info.value.field == field


def test_properties_and_text_are_kept_consistent() -> None:
    m = StoredMessage(topic="T", properties={"KEYS": "a b", "TAGS": "x", "EMPTY": "", "NULL": None})  # type: ignore[dict-item]
    assert m.properties_text == "KEYS\x01a b\x02TAGS\x01x\x02EMPTY\x01"
    assert dict(m.properties) == {"KEYS": "a b", "TAGS": "x"}  # what a decoder will see
    assert m.keys == ["a", "b"] and m.tags == "x"
    m2 = StoredMessage(topic="T", properties_text="TAGS\x01x\x02")
    assert dict(m2.properties) == {"TAGS": "x"}
    assert StoredMessage(topic="T", properties={"TAGS": "x"}, properties_text="TAGS\x01x\x02") == m2
    with pytest.raises(EncodeError):
        StoredMessage(topic="T", properties={"TAGS": "y"}, properties_text="TAGS\x01x")
    # replace() recomputes the text when the properties change, and keeps it otherwise
    m3 = m2.replace(properties={"KEYS": "k"})
    assert m3.properties_text == "KEYS\x01k"
    assert m2.replace(queue_offset=9).properties_text == "TAGS\x01x\x02"
    assert m2.replace(body=b"new").body_crc == m2.body_crc  # carried over unless asked
    assert m2.replace(body=b"new", body_crc=None).body_crc == body_crc(b"new")


def test_views() -> None:
    m = StoredMessage(topic="T", properties={MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: "ID"},
                      sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE,
                      store_host=HostPort("10.154.0.38", 10911), physical_offset=0x2329)
    assert m.uniq_key == "ID"
    assert m.transaction_type is TransactionType.TRANSACTION_PREPARED_TYPE
    assert m.offset_msg_id == "0A9A002600002A9F0000000000002329"
    assert not m.is_compressed
    assert str(HostPort("::1", 5)) == "[::1]:5" and str(HostPort("1.2.3.4", 5)) == "1.2.3.4:5"


# ====================================================================== record decode errors

def _record(**kw: object) -> bytes:
    return encode_stored_message(StoredMessage(topic="TopicTest", body=b"Hello",
                                               properties={"TAGS": "TagA"}, **kw))  # type: ignore[arg-type]


def test_decode_errors_say_where() -> None:
    good = _record()
    with pytest.raises(Truncated) as info:
        decode_stored_message(good[:-1])
    assert info.value.field == "total_size" and info.value.offset == len(good) - 1
    with pytest.raises(Truncated):
        decode_stored_message(good[:5])
    bad_magic = good[:4] + b"\x00\x00\x00\x01" + good[8:]
    with pytest.raises(DecodeError) as info:
        decode_stored_message(bad_magic)
    assert info.value.field == "magic" and info.value.offset == 4
    # totalSize one larger than the fields add up to (checkMessageAndReturnSize's "[BUG]" case)
    longer = struct.pack(">i", len(good) + 1) + good[4:] + b"\0"
    with pytest.raises(DecodeError) as info:
        decode_stored_message(longer)
    assert info.value.field == "properties_length"
    # a body length that runs past the record
    pos = 84
    overrun = good[:pos] + struct.pack(">i", 10**6) + good[pos + 4:]
    with pytest.raises(DecodeError) as info:
        decode_stored_message(overrun)
    assert info.value.field == "body_length" and info.value.offset == pos
    # errors are in the caller's coordinates
    with pytest.raises(DecodeError) as info:
        decode_stored_message(b"\xff" * 10 + bad_magic, 10)
    assert info.value.offset == 14
    with pytest.raises(DecodeError):
        decode_stored_message(good, len(good) + 1)


def test_invalid_utf8_topic_is_a_decode_error() -> None:
    good = _record()
    at = good.index(b"TopicTest")
    bad = good[:at] + b"\xff" + good[at + 1:]
    for decode in (decode_stored_message, decode_stored_message_construct):
        with pytest.raises(DecodeError) as info:
            decode(bad)
        assert info.value.field == "topic" and info.value.offset == at


def test_crc_is_checked_only_when_asked() -> None:
    good = bytearray(_record())
    good[8:12] = struct.pack(">i", 1234)
    msg = decode_stored_message(bytes(good))
    assert msg.body_crc == 1234 and not msg.crc_ok
    for decode in (decode_stored_message, decode_stored_message_construct):
        with pytest.raises(DecodeError) as info:
            decode(bytes(good), verify=True)
        assert info.value.field == "body_crc" and info.value.offset == 8
    # Java checks the CRC only for a non-empty body
    empty = bytearray(encode_stored_message(StoredMessage(topic="T")))
    empty[8:12] = struct.pack(">i", 99)
    assert decode_stored_message(bytes(empty), verify=True).body_crc == 99


def test_pull_body_is_records_back_to_back() -> None:
    msgs = [StoredMessage(topic="T", body=bytes([i]) * i, queue_offset=i, physical_offset=100 * i)
            for i in range(5)]
    body = encode_messages(msgs)
    assert decode_messages(body) == msgs
    assert list(iter_stored_messages(memoryview(body))) == msgs
    assert decode_messages(b"") == []
    with pytest.raises(DecodeError):
        decode_messages(body + b"\0\0\0")


def test_crc32_property_of_5_2() -> None:
    m = StoredMessage(topic="T", body=b"x", properties_text="TAGS\x01a", physical_offset=7)
    data = encode_stored_message(m, append_crc32=True)
    assert len(data) == m.total_size + 1 + CRC32_RESERVED_LEN  # U+0002 inserted before the CRC
    decoded = decode_stored_message(data)
    value = decoded.properties[MessageConst.PROPERTY_CRC32]
    crc = body_crc(data[:-CRC32_RESERVED_LEN])
    assert value == str(crc).zfill(10)[::-1]  # least-significant digit first
    assert data.endswith(b"\x02")
    assert check_crc32_property(data) is True
    assert encode_stored_message(decoded) == data
    tampered = bytearray(data)
    tampered[20] ^= 1  # queue offset: covered by the record CRC, not by the body CRC
    assert check_crc32_property(bytes(tampered)) is False
    assert check_crc32_property(encode_stored_message(m)) is None
    # already ending in U+0002: nothing is inserted
    m2 = StoredMessage(topic="T", properties_text="TAGS\x01a\x02")
    assert len(encode_stored_message(m2, append_crc32=True)) == m2.total_size + CRC32_RESERVED_LEN


# ====================================================================== record heads (the dispatcher's scan)

_HEAD_HOSTS = [HostPort("10.0.0.7", 50123), HostPort("::1", 7), HostPort("fe80::1:2", 10911)]


@st.composite
def _stored(draw: st.DrawFn) -> StoredMessage:
    topic = draw(st.sampled_from(["T", "TopicTest", "тема", "x" * 130, "%RETRY%g"]))
    props = draw(st.dictionaries(st.sampled_from(["TAGS", "KEYS", "UNIQ_KEY", "DELAY", "ü"]),
                                 st.text(alphabet="ab c中", min_size=1, max_size=8), max_size=4))
    return StoredMessage(topic=topic, body=draw(st.binary(max_size=300)), properties=props,
                         queue_id=draw(st.integers(0, 2**31 - 1)), queue_offset=draw(st.integers(0, 2**40)),
                         physical_offset=draw(st.integers(0, 2**40)), sys_flag=draw(st.sampled_from([0, 4, 8, 12])),
                         store_timestamp=draw(st.integers(0, 2**45)),
                         born_host=draw(st.sampled_from(_HEAD_HOSTS)), store_host=draw(st.sampled_from(_HEAD_HOSTS)))


@given(st.lists(_stored(), min_size=1, max_size=6), st.integers(0, 4000), st.integers(1, 8))
@settings(max_examples=150, deadline=None)
def test_record_heads_agree_with_the_decoder(messages: list[StoredMessage], cut: int, limit: int) -> None:
    """The heads scan reads exactly the fields the full decoder reads, stops at the limit, and stops
    where the decoder fails: at a cut record, a flipped byte in a head, a BLANK."""
    data = b"".join(encode_stored_message(m) for m in messages)
    data = bytearray(data[:min(cut, len(data))] if cut < len(data) else data)
    if cut % 3 == 0 and len(data) > 40:
        data[cut % 40] ^= 0x5A  # damage somewhere in the first head
    data += struct.pack(">iI", 8, 0xCBD43194)  # a BLANK ends the file
    heads, stop = scan_record_heads(bytes(data), 0, len(data), limit)
    pos = 0
    decoded = []
    while len(decoded) < limit:
        try:
            m = decode_stored_message(bytes(data), pos)
        except DecodeError:
            break
        decoded.append((pos, m))
        pos += m.total_size
    assert stop == pos and len(heads) == len(decoded)
    for h, (at, m) in zip(heads, decoded, strict=True):
        assert (h.position, h.total_size, h.queue_id, h.queue_offset, h.physical_offset, h.sys_flag,
                h.store_timestamp, h.topic, h.properties_text) == (
            at, m.total_size, m.queue_id, m.queue_offset, m.physical_offset, m.sys_flag,
            m.store_timestamp, m.topic, m.properties_text)
    # from a position inside the buffer, and over a memoryview and an mmap-like buffer alike
    if heads:
        again, stop2 = scan_record_heads(memoryview(bytes(data)), heads[0].position, len(data), limit)
        assert again == heads and stop2 == stop


# ====================================================================== properties

PROPS = _json(VECTORS / "properties.json")
assert isinstance(PROPS, dict)


@pytest.mark.parametrize("case", PROPS["decode"], ids=lambda c: c["why"])
def test_properties_decode_vectors(case: dict) -> None:
    assert decode_properties(case["text"]) == case["properties"]
    assert decode_properties(case["text"].encode("utf-8")) == case["properties"]


@pytest.mark.parametrize("case", PROPS["encode"], ids=lambda c: c.get("why", c["text"][-6:]))
def test_properties_encode_vectors(case: dict) -> None:
    assert encode_properties(case["properties"], trailing_separator=case["trailing_separator"]) == case["text"]


def test_properties_bytes_must_be_utf8() -> None:
    with pytest.raises(DecodeError) as info:
        decode_properties(b"KEYS\x01k\x02TAGS\x01\xc3")
    assert info.value.offset == 12 and info.value.field == "properties"
    with pytest.raises(EncodeError):
        encode_properties({"a": 1})  # type: ignore[dict-item]


@pytest.mark.parametrize(("text", "expected"), [
    ("hello", 99162322),            # the textbook String.hashCode example
    ("Aa", 2112), ("BB", 2112),     # the textbook collision
    ("polygenelubricants", -(2**31)),  # hashes to Integer.MIN_VALUE
    ("", 0),
])
def test_java_string_hash(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


def test_java_string_hash_uses_utf16_units() -> None:
    # U+1F600 is the surrogate pair D83D DE00 in a Java String
    assert java_string_hash("\U0001F600") == 0xD83D * 31 + 0xDE00
    assert java_string_hash("\u00e9") == 0xE9


def test_sysflag_bits() -> None:
    assert MessageSysFlag.COMPRESSED_FLAG == 0x1 and MessageSysFlag.MULTI_TAGS_FLAG == 0x2
    assert MessageSysFlag.BORNHOST_V6_FLAG == 0x10 and MessageSysFlag.STOREHOSTADDRESS_V6_FLAG == 0x20
    assert MessageSysFlag.NEED_UNWRAP_FLAG == 0x40 and MessageSysFlag.INNER_BATCH_FLAG == 0x80
    assert MessageSysFlag.COMPRESSION_ZLIB_TYPE == 0x300 and MessageSysFlag.COMPRESSION_TYPE_COMPARATOR == 0x700
    assert transaction_type(0x8 | 0x1) is TransactionType.TRANSACTION_COMMIT_TYPE
    assert transaction_type(0xC) is TransactionType.TRANSACTION_ROLLBACK_TYPE
    assert compression_type(0x1) is CompressionType.ZLIB  # 0 in bits 8-10: old senders, zlib
    assert compression_type(0x101) is CompressionType.LZ4
    assert compression_type(0x501) == 5


def test_compression_round_trip_and_errors() -> None:
    body = b"abc" * 2000
    packed, bits = compress_body(body)
    assert bits == 0x301
    assert zlib.decompress(packed) == body
    assert decompress_body(packed, bits) == body
    assert decompress_body(packed + b"trailing", 0x1) == body  # InflaterInputStream stops at the end
    assert decompress_body(b"raw", 0x300) == b"raw"  # type bits without COMPRESSED_FLAG
    with pytest.raises(DecodeError):
        decompress_body(b"not zlib at all", 0x301)
    with pytest.raises(DecodeError) as info:
        decompress_body(packed[:-5], 0x301, offset=100)
    assert info.value.offset == 100 + len(packed) - 5
    with pytest.raises(DecodeError):
        decompress_body(packed, 0x301, max_size=100)
    assert decompress_body(packed, 0x301, max_size=len(body)) == body
    with pytest.raises(DecodeError):
        decompress_body(packed, 0x201)  # a zlib stream is not a zstd frame
    with pytest.raises(DecodeError, match="type 5"):
        decompress_body(packed, 0x501)


@pytest.mark.parametrize(("kind", "bits", "magic"), [(CompressionType.LZ4, 0x101, "04224d18"),
                                                      (CompressionType.ZSTD, 0x201, "28b52ffd")])
def test_lz4_and_zstd_bodies(kind: CompressionType, bits: int, magic: str) -> None:
    """The 5.x compression types: LZ4 and zstd frames, as lz4-java and zstd-jni write them."""
    body = b"the 5.x producers compress with LZ4 or ZSTD " * 200
    packed, got_bits = compress_body(body, compression=kind)
    assert got_bits == bits and packed[:4].hex() == magic
    assert decompress_body(packed, bits) == body
    assert decompress_body(packed, bits, max_size=len(body)) == body
    with pytest.raises(DecodeError, match="inflates past"):
        decompress_body(packed, bits, max_size=100)
    with pytest.raises(DecodeError):
        decompress_body(packed[: len(packed) // 2], bits, offset=7)
    with pytest.raises(DecodeError):
        decompress_body(b"\x00" * 20, bits)
    if kind is CompressionType.ZSTD:
        # zstd-jni's stream writes frames without a content size
        import zstandard

        streamed = zstandard.ZstdCompressor(write_content_size=False).compress(body)
        assert decompress_body(streamed, bits) == body
        # ours is such a stream too (ZstdOutputStream: write, flush, close)
        assert zstandard.get_frame_parameters(packed).content_size == zstandard.CONTENTSIZE_UNKNOWN
    else:
        # LZ4FrameOutputStream's header: independent blocks, 4 MiB, no content size or checksum
        # (lz4-java's reader refuses linked blocks); tests/interop checks the bytes against Java's
        assert packed[4:6].hex() == "6070"


def _bomb(kind: CompressionType, inflated: int) -> bytes:
    """``inflated`` bytes of zeros, compressed a MiB at a time (never held whole)."""
    zero = bytes(1 << 20)
    if kind is CompressionType.ZSTD:
        import zstandard

        c = zstandard.ZstdCompressor(write_content_size=False).compressobj()
        return b"".join(c.compress(zero) for _ in range(inflated >> 20)) + c.flush()
    if kind is CompressionType.LZ4:
        import lz4.frame

        lc = lz4.frame.LZ4FrameCompressor()
        return lc.begin() + b"".join(lc.compress(zero) for _ in range(inflated >> 20)) + lc.flush()
    zc = zlib.compressobj(9)
    return b"".join(zc.compress(zero) for _ in range(inflated >> 20)) + zc.flush()


@pytest.mark.parametrize(("kind", "bits"), [(CompressionType.ZLIB, 0x301), (CompressionType.LZ4, 0x101),
                                            (CompressionType.ZSTD, 0x201)])
def test_a_compression_bomb_is_stopped_as_it_inflates(kind: CompressionType, bits: int) -> None:
    """A few kilobytes that inflate to gigabytes: refused once past the bound, which holds by
    default (MAX_INFLATED_BODY), without the whole output ever being made (zstd's was, whatever
    max_size said: 32 KB of a capture took 2 GB)."""
    import tracemalloc

    bomb = _bomb(kind, 96 << 20)
    assert len(bomb) < 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match="inflates past 1048576"):
            decompress_body(bomb, bits, max_size=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
        assert peak < 48 << 20, f"{peak:,} bytes held to refuse a 1 MiB bound"
        tracemalloc.reset_peak()
        with pytest.raises(DecodeError, match=f"inflates past {MAX_INFLATED_BODY}"):
            decompress_body(bomb, bits)
        _, peak = tracemalloc.get_traced_memory()
        assert peak < MAX_INFLATED_BODY * 3
    finally:
        tracemalloc.stop()
    assert len(decompress_body(_bomb(kind, 2 << 20), bits)) == 2 << 20


# ====================================================================== ids

IDS = _json(VECTORS / "ids.json")
assert isinstance(IDS, dict)


@pytest.mark.parametrize("case", IDS["offset_msg_ids"], ids=lambda c: c["id"])
def test_offset_msg_id_vectors(case: dict) -> None:
    assert decode_offset_msg_id(case["id"]) == (case["host"], case["port"], case["offset"])
    assert decode_offset_msg_id(case["id"].lower()) == (case["host"], case["port"], case["offset"])
    assert create_offset_msg_id(case["host"], case["port"], case["offset"]) == case["id"]


@pytest.mark.parametrize("case", IDS["uniq_ids"], ids=lambda c: c["id"])
def test_uniq_id_vectors(case: dict) -> None:
    u = decode_uniq_id(case["id"])
    assert u == (case["ip"], case["pid"], case["class_loader_hash"], case["time_offset"], case["counter"])
    assert create_uniq_id(u.ip, u.pid, u.class_loader_hash, u.time_offset, u.counter) == case["id"]
    if "created_at" in case:
        assert u.timestamp(case["reference_time"], UTC) == case["created_at"]


@pytest.mark.parametrize("case", IDS["bad"], ids=lambda c: c["why"])
def test_bad_ids_are_decode_errors(case: dict) -> None:
    for decode in (decode_offset_msg_id, decode_uniq_id):
        with pytest.raises(DecodeError):
            decode(case["id"])


def test_ipv6_uniq_id_is_56_chars() -> None:
    s = create_uniq_id("2408:4004:180:8100:3faa:1dde:2b3f:898a", 0x12345, -1, 2**32 + 5, 70000)
    assert len(s) == 56
    u = decode_uniq_id(s)
    # Java's (short) and (int) casts keep the low bits
    assert u == ("2408:4004:180:8100:3faa:1dde:2b3f:898a", 0x2345, -1, 5, 70000 & 0xFFFF)


def test_uniq_id_generator_counts_and_recovers_ip_and_pid() -> None:
    now = 1795341742796  # 2026-11-22 10:02:22.796 UTC
    gen = UniqIdGenerator(ip="192.0.2.2", pid=5824, class_loader_hash=0x5FFD2B27, tz=UTC, clock=lambda: now)
    a, b = gen.next_id(), gen.next_id()
    # MessageClientIDSetterTest: consecutive ids differ by 1 in the last 4 hex characters
    assert a[:-4] == b[:-4] and int(b[-4:], 16) - int(a[-4:], 16) == 1
    assert a == "C000020216C05FFD2B276E4D0ACC0000"
    u = decode_uniq_id(b)
    assert (u.ip, u.pid) == ("192.0.2.2", 5824)
    assert u.timestamp(now + 1, UTC) == now


def test_uniq_id_generator_month_rules() -> None:
    start = month_start_ms(1795341742796, UTC)
    assert start == 1793491200000  # 2026-11-01T00:00:00Z
    assert month_start_ms(start, UTC, 1) == 1796083200000  # 2026-12-01
    assert month_start_ms(start, UTC, -11) == 1764547200000  # 2025-12-01 (year wrap)
    gen = UniqIdGenerator(ip="10.0.0.1", pid=1, class_loader_hash=1, tz=UTC, clock=lambda: start)
    late = start + 25 * 86_400_000  # past 2^31 ms: written as a negative int, read back unsigned
    u = decode_uniq_id(gen.next_id(late))
    assert u.time_offset == 25 * 86_400_000 and u.timestamp(late + 5, UTC) == late
    # a new month restarts the offset
    nxt = month_start_ms(start, UTC, 1) + 1234
    assert decode_uniq_id(gen.next_id(nxt)).time_offset == 1234
    # read in the next month, an id from late last month still resolves to last month
    assert u.timestamp(nxt, UTC) == late
    # a clock a little behind the month start counts as the start (createUniqID's NTP rule)
    gen2 = UniqIdGenerator(ip="10.0.0.1", pid=1, class_loader_hash=1, tz=UTC, clock=lambda: nxt)
    assert decode_uniq_id(gen2.next_id(nxt - 2000)).time_offset == 0
    # the counter wraps at 16 bits
    gen3 = UniqIdGenerator(ip="10.0.0.1", pid=1, class_loader_hash=1, tz=UTC, clock=lambda: nxt,
                           counter=0xFFFF)
    assert [decode_uniq_id(gen3.next_id()).counter for _ in range(2)] == [0xFFFF, 0]


def test_uniq_id_generator_defaults() -> None:
    gen = UniqIdGenerator(clock=lambda: 0x0102030405)
    assert gen.ip == "2.3.4.5"  # createFakeIP: the low four bytes of the time
    assert len(gen.next_id()) == 32


# ====================================================================== batch

def test_batch_vector() -> None:
    vec = _json(VECTORS / "batch" / "entry-hello.json")
    data = _vector_bytes(vec)
    for decode in (decode_batch, decode_batch_construct):
        entries = decode(data)
        assert [(e.flag, e.body.hex().upper(), e.properties_text, dict(e.properties)) for e in entries] == \
            [(x["flag"], x["body"], x["properties_text"], x["properties"]) for x in vec["entries"]]
    built = [BatchEntry(body=bytes.fromhex(x["body"]), properties_text=x["properties_text"], flag=x["flag"])
             for x in vec["entries"]]
    assert encode_batch(built) == data
    assert len(data) == 78 == BATCH_ENTRY_OVERHEAD + 5 + 51


def test_batch_strictness() -> None:
    data = bytearray(encode_batch([BatchEntry(b"a", {"K": "v"}), BatchEntry(b"", flag=3)]))
    assert [e.flag for e in decode_batch(bytes(data))] == [0, 3]
    data[0:4] = struct.pack(">i", 999)  # Java ignores totalSize, magic and bodyCRC
    data[4:8] = struct.pack(">i", 7)
    for decode in (decode_batch, decode_batch_construct):
        with pytest.raises(DecodeError):
            decode(bytes(data))
        assert [e.body for e in decode(bytes(data), strict=False)] == [b"a", b""]
    with pytest.raises(DecodeError):
        decode_batch(bytes(data[:-1]), strict=False)


def test_expand_batch_follows_the_broker() -> None:
    entries = [
        BatchEntry(b"one", properties_text="KEYS\x01k1"),          # separator inserted
        BatchEntry(b"two", properties_text="KEYS\x01k2\x02"),      # already ends in one
        BatchEntry(b"three", properties_text="", flag=5),            # nothing to separate
    ]
    recs = expand_batch(encode_batch(entries), topic="BatchTopic", queue_id=2, sys_flag=0,
                        born_host=("10.0.0.9", 5555), store_host=("127.0.0.1", 10911),
                        born_timestamp=111, store_timestamp=222, reconsume_times=1,
                        batch_properties="CLUSTER\x01DefaultCluster", queue_offset=40, physical_offset=1000)
    assert [r.properties_text for r in recs] == [
        "KEYS\x01k1\x02CLUSTER\x01DefaultCluster",
        "KEYS\x01k2\x02CLUSTER\x01DefaultCluster",
        "CLUSTER\x01DefaultCluster",
    ]
    assert [r.queue_offset for r in recs] == [40, 41, 42]
    assert recs[1].physical_offset == 1000 + recs[0].total_size
    assert recs[2].physical_offset == recs[1].physical_offset + recs[1].total_size
    assert [r.body_crc for r in recs] == [body_crc(b"one"), body_crc(b"two"), body_crc(b"three")]
    assert [r.flag for r in recs] == [0, 0, 5]
    assert all(r.prepared_transaction_offset == 0 and r.reconsume_times == 1 and r.queue_id == 2
               and r.born_host == ("10.0.0.9", 5555) and r.store_timestamp == 222 for r in recs)
    # no batch properties (the develop branch after 5.3.3): entry properties as sent
    plain = expand_batch(entries, topic="BatchTopic", queue_id=0, born_host=("::1", 1),
                         store_host=("127.0.0.1", 10911))
    assert [r.properties_text for r in plain] == ["KEYS\x01k1", "KEYS\x01k2\x02", ""]
    assert plain[0].sys_flag == MessageSysFlag.BORNHOST_V6_FLAG


# ====================================================================== captures

def _capture_id(c: dict) -> str:
    return c["file"][1].removesuffix(".pcap")


@pytest.mark.parametrize("case", CAPTURES, ids=_capture_id)
def test_capture_message_bodies(case: dict) -> None:
    path = shared_path("captures", *case["file"])
    bodies = _message_bodies(path, case["request_code"])
    assert len(bodies) == case["responses"]
    if "response_body_sizes" in case:
        assert [len(b) for _, b in bodies] == case["response_body_sizes"]
    records = []
    for req, body in bodies:
        msgs = decode_messages(body, verify=True)
        assert msgs and msgs == [decode_stored_message_construct(body, o) for o in _offsets(body)]
        assert encode_messages(msgs) == body  # byte-exact
        ext = req.ext_fields
        if "topic" in ext:
            assert {m.topic for m in msgs} == {ext["topic"]}
        if req.code == 11:  # PULL: one queue, consecutive offsets from the one asked for
            assert {m.queue_id for m in msgs} == {int(ext["queueId"])}
            first = msgs[0].queue_offset
            assert first >= int(ext["queueOffset"])
            assert [m.queue_offset for m in msgs] == list(range(first, first + len(msgs)))
            assert len(msgs) <= int(ext["maxMsgNums"])
        if req.code == 33:  # VIEW_MESSAGE_BY_ID asks by commit-log offset
            assert [m.physical_offset for m in msgs] == [int(ext["offset"])]
        for m in msgs:
            assert m.crc_ok
            # the stored properties text is in Java HashMap order
            assert java_hash_order(list(m.properties)) == list(m.properties)
        records.extend(msgs)
    assert len(records) == case["records"]
    if "topics" in case:
        assert Counter(m.topic for m in records) == case["topics"]
    if "body_sizes" in case:
        sizes = Counter(str(len(m.decompressed_body())) for m in records)
        assert sizes == case["body_sizes"]
    assert sum(m.is_compressed for m in records) == case["compressed"]
    assert all(m.sys_flag & 0x301 in (0, 0x1, 0x301) for m in records)
    if case.get("qry"):
        (m,) = records
        assert m.properties["KEYS"] == "qkey-7" and m.tags == "tagQ"
        assert m.queue_id == 3 and m.queue_offset == 0
        assert m.offset_msg_id == "7F00000100002A9F0000000000008870"
        assert m.physical_offset == 34928 == decode_offset_msg_id(m.offset_msg_id).offset
        assert m.body == b"query me please"
        assert m.uniq_key == "C000020216C05FFD2B276E4D0ACC0000"


def _offsets(body: bytes) -> list[int]:
    out, pos = [], 0
    while pos < len(body):
        out.append(pos)
        pos += struct.unpack_from(">i", body, pos)[0]
    return out


_MSG_LINE = re.compile(r"^MSGID: (\S+) MessageExt \[(.*?), toString\(\)=Message\{topic='([^']*)', flag=(\d+), "
                       r"properties=\{([^}]*)\}, .*\] BODY: (.*)$")


def _mqadmin_messages(txt: Path) -> dict[str, dict]:
    """The MessageExt lines mqadmin printed, by UNIQ_KEY."""
    out = {}
    for line in txt.read_text(encoding="utf-8").splitlines():
        m = _MSG_LINE.match(line)
        if not m:
            continue
        fields = dict(kv.split("=", 1) for kv in m.group(2).split(", "))
        props = dict(kv.split("=", 1) for kv in m.group(5).split(", "))
        out[m.group(1)] = {"fields": fields, "topic": m.group(3), "flag": int(m.group(4)),
                           "properties": props, "body": m.group(6)}
    return out


@pytest.mark.parametrize(("pcap", "code"), [
    ("04-rocketmq-consumeMessage", 11),
    ("07-printMsg", 11),
])
def test_records_match_mqadmin_output(pcap: str, code: int) -> None:
    expected = _mqadmin_messages(shared_path("captures", "java-4.9.8", pcap + ".txt"))
    records = [m for _, body in _message_bodies(shared_path("captures", "java-4.9.8", pcap + ".pcap"), code)
               for m in decode_messages(body)]
    assert len(expected) == len(records) > 0
    for m in records:
        e = expected[m.uniq_key or ""]
        f = e["fields"]
        assert m.queue_id == int(f["queueId"])
        assert m.total_size == int(f["storeSize"])
        assert m.queue_offset == int(f["queueOffset"])
        assert m.sys_flag == int(f["sysFlag"])
        assert m.born_timestamp == int(f["bornTimestamp"])
        assert str(m.born_host) == f["bornHost"].lstrip("/")
        assert m.store_timestamp == int(f["storeTimestamp"])
        assert str(m.store_host) == f["storeHost"].lstrip("/")
        assert m.offset_msg_id == f["msgId"]
        assert m.physical_offset == int(f["commitLogOffset"])
        assert m.body_crc == int(f["bodyCRC"])
        assert m.reconsume_times == int(f["reconsumeTimes"])
        assert m.prepared_transaction_offset == int(f["preparedTransactionOffset"])
        assert (m.topic, m.flag) == (e["topic"], e["flag"])
        # the client adds MIN_OFFSET/MAX_OFFSET after decoding
        client = {k: v for k, v in e["properties"].items() if k not in ("MIN_OFFSET", "MAX_OFFSET")}
        assert dict(m.properties) == client
        assert m.decompressed_body().decode() == e["body"]


def _send_requests(path: Path) -> list[tuple[RemotingCommand, RemotingCommand | None, Direction]]:
    resp = {(id(req)): r for req, r, _ in _exchanges(path)}
    return [(c, resp.get(id(c)), d) for d, c in _commands(path) if not c.is_response and c.code in (10, 310, 320)]


SEND_CAPTURES = [
    ("java-4.9.8", "04-rocketmq-sendMessage.pcap"), ("java-4.9.8", "04-rocketmq-servers-startup.pcap"),
    ("java-4.9.8", "05-cpp-produce.pcap"), ("java-4.9.8", "06-alions-produce.pcap"),
    ("java-4.9.8", "07-sendMessage-tag-key.pcap"), ("java-4.9.8", "08-ha-catchup-from-zero.pcap"),
    ("java-4.9.8", "09-sync-master-slave-down.pcap"), ("java-4.9.8", "09-sync-master-slave-frozen.pcap"),
    ("java-4.9.8", "09-sync-master-slave-up.pcap"), ("java-4.9.8", "10-error-responses.pcap"),
    ("deepflow", "rocketmq-send-message-v2.pcap"), ("deepflow", "rocketmq-producer-otel.pcap"),
    ("deepflow", "rocketmq-producer-skywalking.pcap"),
]


def _send_fields(cmd: RemotingCommand) -> dict[str, str]:
    """SEND_MESSAGE (V1 names) or SEND_MESSAGE_V2 / batch (a..n) ext fields, as V1 names."""
    ext = cmd.ext_fields
    if cmd.code == 10:
        return dict(ext)
    names = {"b": "topic", "e": "queueId", "f": "sysFlag", "g": "bornTimestamp", "h": "flag",
             "i": "properties", "j": "reconsumeTimes", "m": "batch"}
    return {names[k]: v for k, v in ext.items() if k in names}


@pytest.mark.parametrize("where", SEND_CAPTURES, ids=lambda w: w[1].removesuffix(".pcap"))
def test_send_request_properties_and_bodies(where: tuple[str, str]) -> None:
    sends = _send_requests(shared_path("captures", *where))
    assert sends
    for cmd, _, _ in sends:
        f = _send_fields(cmd)
        text = f.get("properties", "")
        props = decode_properties(text)
        assert props, "every client sends at least UNIQ_KEY or WAIT"
        # written back in the sender's order, in the sender's form, the text comes back
        assert encode_properties(props, trailing_separator=text.endswith("\x02")) == text
        body = cmd.body or b""
        sys_flag = int(f["sysFlag"])
        plain = decompress_body(body, sys_flag)
        if sys_flag & MessageSysFlag.COMPRESSED_FLAG:
            assert len(plain) >= 4096 > len(body)  # compressMsgBodyOverHowmuch
        if cmd.code == 320:
            assert decode_batch(body)


@pytest.mark.parametrize(("produce", "consume", "topic"), [
    ("05-cpp-produce.pcap", "05-cpp-consume.pcap", "CppTopic"),
    ("06-alions-produce.pcap", "06-alions-consume.pcap", "JsTopic"),
])
def test_consumed_bodies_are_the_produced_ones(produce: str, consume: str, topic: str) -> None:
    sent = Counter()
    for cmd, _, _ in _send_requests(shared_path("captures", "java-4.9.8", produce)):
        f = _send_fields(cmd)
        if f["topic"] == topic:
            sent[decompress_body(cmd.body or b"", int(f["sysFlag"]))] += 1
    got = Counter(m.decompressed_body()
                  for _, body in _message_bodies(shared_path("captures", "java-4.9.8", consume), 11)
                  for m in decode_messages(body))
    assert sent == got and sum(got.values()) > 0


def broker_record(cmd: RemotingCommand, response: RemotingCommand, born: HostPort, store: HostPort,
                  store_timestamp: int, cluster: str = "DefaultCluster") -> StoredMessage:
    """The record a 4.9.8 broker stores for a send (``SendMessageProcessor.asyncSendMessage`` and
    ``CommitLog``): the sent properties plus CLUSTER, without WAIT, in HashMap order."""
    f = _send_fields(cmd)
    sent = decode_properties(f.get("properties", ""))
    keys = [k for k in java_hash_order([*sent, MessageConst.PROPERTY_CLUSTER])
            if k != MessageConst.PROPERTY_WAIT_STORE_MSG_OK]
    props = {**sent, MessageConst.PROPERTY_CLUSTER: cluster}
    rext = response.ext_fields
    return StoredMessage(
        topic=f["topic"], body=cmd.body or b"", properties_text=encode_properties({k: props[k] for k in keys}),
        queue_id=int(rext["queueId"]), flag=int(f["flag"]), queue_offset=int(rext["queueOffset"]),
        physical_offset=decode_offset_msg_id(rext["msgId"]).offset, sys_flag=int(f["sysFlag"]),
        born_timestamp=int(f["bornTimestamp"]), born_host=born, store_timestamp=store_timestamp,
        store_host=store, reconsume_times=int(f.get("reconsumeTimes") or 0))


def test_broker_record_from_the_send_is_the_stored_record() -> None:
    (cmd, resp, d), = [s for s in _send_requests(shared_path("captures", "java-4.9.8", "07-sendMessage-tag-key.pcap"))
                       if _send_fields(s[0])["topic"] == "QryTopic"]
    assert resp is not None and resp.code == 0
    ((_, body),) = _message_bodies(shared_path("captures", "java-4.9.8", "07-queryMsgById-offsetId.pcap"), 33)
    stored = decode_stored_message(body)
    rebuilt = broker_record(cmd, resp, HostPort(d.src, d.sport), HostPort("127.0.0.1", 10911),
                            stored.store_timestamp)
    assert encode_stored_message(rebuilt) == body


# ====================================================================== hypothesis

_TEXT = st.text(alphabet=st.characters(blacklist_characters="\x01\x02", blacklist_categories=("Cs",)),
                min_size=1, max_size=12)
_VALUE = st.text(alphabet=st.characters(blacklist_characters="\x02", blacklist_categories=("Cs",)),
                 min_size=1, max_size=20)
_PROPS = st.dictionaries(_TEXT, _VALUE, max_size=6)


@given(_PROPS, st.booleans())
def test_properties_round_trip(props: dict[str, str], trailing: bool) -> None:
    text = encode_properties(props, trailing_separator=trailing)
    assert decode_properties(text) == props
    assert decode_properties(text.encode("utf-8")) == props


@given(st.text())
def test_any_text_decodes_to_properties(text: str) -> None:
    props = decode_properties(text)
    assert all(k and v and "\x02" not in k + v and "\x01" not in k for k, v in props.items())


@given(st.binary())
def test_any_bytes_give_properties_or_decode_error(data: bytes) -> None:
    try:
        decode_properties(data)
    except DecodeError:
        pass


_IPV4 = st.ip_addresses(v=4).map(str)
_IPV6 = st.ip_addresses(v=6).map(str)
_HOST = st.builds(HostPort, st.one_of(_IPV4, _IPV6), st.integers(-(2**31), 2**31 - 1))
_I32 = st.integers(-(2**31), 2**31 - 1)
_I64 = st.integers(-(2**63), 2**63 - 1)


@st.composite
def stored_messages(draw: st.DrawFn) -> StoredMessage:
    v2 = draw(st.booleans())
    topic = draw(st.text(max_size=40 if not v2 else 200).filter(
        lambda t: len(t.encode("utf-8", "surrogatepass")) <= 127 or v2))
    assume(all(not 0xD800 <= ord(c) <= 0xDFFF for c in topic))
    text = draw(st.one_of(st.builds(encode_properties, _PROPS, trailing_separator=st.booleans()),
                          st.text(max_size=30).filter(lambda t: all(not 0xD800 <= ord(c) <= 0xDFFF for c in t))))
    return StoredMessage(
        topic=topic, body=draw(st.binary(max_size=64)), properties_text=text,
        queue_id=draw(_I32), flag=draw(_I32), queue_offset=draw(_I64), physical_offset=draw(_I64),
        sys_flag=draw(_I32) & ~0x30, born_timestamp=draw(_I64), born_host=draw(_HOST),
        store_timestamp=draw(_I64), store_host=draw(_HOST), reconsume_times=draw(_I32),
        prepared_transaction_offset=draw(_I64), body_crc=draw(st.one_of(st.none(), _I32)),
        magic=MESSAGE_MAGIC_CODE_V2 if v2 else None)


@given(stored_messages())
def test_record_round_trip(msg: StoredMessage) -> None:
    data = encode_stored_message(msg)
    assert len(data) == msg.total_size
    assert encode_stored_message_construct(msg) == data
    assert decode_stored_message(data) == msg
    assert decode_stored_message_construct(data) == msg


@given(st.lists(stored_messages(), max_size=4))
def test_pull_body_round_trip(msgs: list[StoredMessage]) -> None:
    body = encode_messages(msgs)
    assert decode_messages(body) == msgs


def _both(data: bytes, offset: int = 0) -> StoredMessage | None:
    """Decode with both paths; they must agree on success and on the result."""
    results = []
    for decode in (decode_stored_message, decode_stored_message_construct):
        try:
            results.append(decode(data, offset))
        except DecodeError:
            results.append(None)
    assert results[0] == results[1]
    return results[0]


@given(st.binary(max_size=300))
def test_arbitrary_bytes_give_only_decode_errors(data: bytes) -> None:
    _both(data)
    try:
        decode_messages(data, verify=True)
    except DecodeError:
        pass


@given(stored_messages(), st.data())
@settings(max_examples=200)
def test_mutated_records_give_only_decode_errors(msg: StoredMessage, data: st.DataObject) -> None:
    raw = bytearray(encode_stored_message(msg))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    _both(bytes(raw))
    _both(bytes(raw[:cut]))


@given(st.sampled_from(["127.0.0.1", "10.154.0.38", "::1", "2408:4004:180:8100:3faa:1dde:2b3f:898a"]),
       st.integers(0, 65535), _I64)
def test_offset_msg_id_round_trip(host: str, port: int, offset: int) -> None:
    s = create_offset_msg_id(host, port, offset)
    assert s == s.upper() and len(s) == (32 if "." in host else 56)
    assert decode_offset_msg_id(s) == (host, port, offset)


@given(st.one_of(_IPV4, _IPV6), st.integers(0, 0xFFFF), _I32, st.integers(0, 2**32 - 1), st.integers(0, 0xFFFF))
def test_uniq_id_round_trip(ip: str, pid: int, loader: int, span: int, counter: int) -> None:
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    ip = socket.inet_ntop(family, socket.inet_pton(family, ip))  # how a decoder spells it
    assert decode_uniq_id(create_uniq_id(ip, pid, loader, span, counter)) == (ip, pid, loader, span, counter)


@given(st.text(max_size=60))
def test_arbitrary_ids_give_only_decode_errors(s: str) -> None:
    for decode in (decode_offset_msg_id, decode_uniq_id):
        try:
            decode(s)
        except DecodeError:
            pass


_ENTRIES = st.lists(st.builds(BatchEntry, body=st.binary(max_size=40), flag=_I32,
                              properties=_PROPS), max_size=5)


@given(_ENTRIES)
def test_batch_round_trip(entries: list[BatchEntry]) -> None:
    body = encode_batch(entries)
    assert decode_batch(body) == entries
    assert decode_batch_construct(body) == entries
    assert encode_batch(decode_batch(body)) == body


@given(_ENTRIES, st.data())
def test_mutated_batches_give_only_decode_errors(entries: list[BatchEntry], data: st.DataObject) -> None:
    raw = bytearray(encode_batch(entries))
    if raw:
        for _ in range(data.draw(st.integers(1, 3))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    raw = raw[:data.draw(st.integers(0, len(raw)))]
    for strict in (True, False):
        results = []
        for decode in (decode_batch, decode_batch_construct):
            try:
                results.append(decode(bytes(raw), strict=strict))
            except DecodeError:
                results.append(None)
        assert results[0] == results[1]


# ====================================================================== the store's trusted record encoder

def _record_fields(msg: StoredMessage) -> dict:
    """The arguments of encode_record_fields for a record (bytes where it takes bytes)."""
    return dict(topic=msg.topic.encode(), body=msg.body, properties=msg.properties_text.encode(),
                queue_id=msg.queue_id, flag=msg.flag, queue_offset=msg.queue_offset,
                physical_offset=msg.physical_offset, sys_flag=msg.sys_flag, born_timestamp=msg.born_timestamp,
                born_host=tuple(msg.born_host), store_timestamp=msg.store_timestamp,
                store_host=tuple(msg.store_host), reconsume_times=msg.reconsume_times,
                prepared_transaction_offset=msg.prepared_transaction_offset, crc=msg.body_crc, magic=msg.magic)


@given(stored_messages())
def test_trusted_record_encoder_matches_the_checked_one(msg: StoredMessage) -> None:
    fields = _record_fields(msg)
    assert encode_record_fields(**fields) == encode_stored_message(msg)
    # without a CRC it is worked out from the body, as building a StoredMessage does
    fields["crc"] = None
    assert encode_record_fields(**fields) == encode_stored_message(msg.replace(body_crc=None))


_WIDE_INT = st.one_of(_I64, st.integers(-(2**70), 2**70),
                      st.sampled_from([2**31, -(2**31) - 1, 2**63, -(2**63) - 1, 0x7FFFFFFF]))
_NUMBER_FIELDS = ["queue_id", "flag", "queue_offset", "physical_offset", "sys_flag", "born_timestamp",
                  "store_timestamp", "reconsume_times", "prepared_transaction_offset", "body_crc"]


@given(stored_messages(), st.sampled_from(_NUMBER_FIELDS), _WIDE_INT)
def test_trusted_record_encoder_refuses_what_cannot_be_built(msg: StoredMessage, name: str,
                                                            value: int) -> None:
    if name == "sys_flag":
        value = value & ~0x30 | msg.sys_flag & 0x30  # the host bits the hosts call for
    try:
        want: bytes | None = encode_stored_message(msg.replace(**{name: value}))
    except EncodeError:
        want = None
    fields = _record_fields(msg)
    fields["crc" if name == "body_crc" else name] = value
    try:
        got: bytes | None = encode_record_fields(**fields)
    except EncodeError:
        got = None
    assert got == want


def test_trusted_record_encoder_checks_what_the_bytes_cannot_hold() -> None:
    fields = _record_fields(StoredMessage(topic="T", body=b"b", properties={"K": "v"},
                                          born_host=HostPort("10.0.0.1", 1), store_host=HostPort("::1", 2)))
    assert fields["sys_flag"] == MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
    encode_record_fields(**fields)
    cases = [
        {"sys_flag": 0},                                          # IPv6 store host without its bit
        {"sys_flag": 0x30},                                       # IPv4 born host with the IPv6 bit
        {"born_host": ("10.0.0.300", 1)},                         # not an address literal
        {"topic": b"t" * 128},                                    # v1 holds 127 bytes of topic
        {"properties": b"x" * 0x8000},                            # over the int16 length
        {"magic": 0x12345678},                                    # not a message magic
    ]
    for change in cases:
        with pytest.raises(EncodeError):
            encode_record_fields(**{**fields, **change})
    # a v2 record holds a long topic, as a StoredMessage with the v2 magic does
    long_topic = StoredMessage(topic="t" * 300, store_host=HostPort("::1", 2))
    assert encode_record_fields(**_record_fields(long_topic)) == encode_stored_message(long_topic)


def _java_hash_reference(s: str) -> int:
    """String.hashCode written out: 31-polynomial over UTF-16 units, wrapped to a signed int."""
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (h * 31 + int.from_bytes(units[i:i + 2], "big")) % 2**32
    return h - 2**32 if h >= 2**31 else h


@given(st.one_of(st.text(max_size=30), st.text(alphabet=st.characters(max_codepoint=127), max_size=80)))
def test_java_string_hash_matches_the_polynomial(s: str) -> None:
    assert java_string_hash(s) == _java_hash_reference(s)


@pytest.mark.parametrize("n", [8, 9, 10, 43, 3999, 4000, 4001, 4300, 4301, 9000])
def test_java_string_hash_of_long_ascii(n: int) -> None:
    # around the lengths where the hash changes method, with every ASCII code
    s = "".join(chr((i * 37 + n) % 128) for i in range(n))
    assert java_string_hash(s) == _java_hash_reference(s)
    assert java_string_hash("\x7f" * n) == _java_hash_reference("\x7f" * n)


def _java_properties_reference(text: str) -> dict[str, str]:
    """string2messageProperties written out: walk the U+0002-separated pieces and keep those whose
    first U+0001 (searched from the piece's start on) has a character on both sides within it."""
    out: dict[str, str] = {}
    index, n = 0, len(text)
    while index < n:
        end = text.find("\x02", index)
        if end < 0:
            end = n
        if end - index >= 3:
            sep = text.find("\x01", index)
            if index < sep < end - 1:
                out[text[index:sep]] = text[sep + 1:end]
        index = end + 1
    return out


@given(st.text(alphabet=st.sampled_from("ab\x01\x02\u00e9\U0001F600"), max_size=40))
def test_decode_properties_follows_string2message_properties(text: str) -> None:
    assert decode_properties(text) == _java_properties_reference(text)
