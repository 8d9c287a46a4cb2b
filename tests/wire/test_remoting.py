# Licensed under the Apache License, Version 2.0. See LICENSE.
from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wire import (
    DEFAULT_VERSION,
    DecodeError,
    EncodeError,
    FrameBuffer,
    LanguageCode,
    RemotingCommand,
    RequestCode,
    ResponseCode,
    SerializeType,
    decode_command,
    decode_frame,
    encode_command,
    split_frame,
)
from wire.framing import MAX_TOTAL_LENGTH, REMOTING_FRAME, check_prefix, prefix_ok
from wire.remoting import (
    decode_binary_header,
    decode_binary_header_construct,
    decode_json_header,
    encode_binary_header,
    encode_command_head,
    encode_json_header,
    encode_json_header_dumps,
)

ROCKETMQ = SerializeType.ROCKETMQ

# PROTOCOL.md §1.2: the JSON request fastjson writes for GET_ROUTEINFO_BY_TOPIC, version 407, opaque 1.
JSON_105 = ('{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1,'
            '"serializeTypeCurrentRPC":"JSON","version":407}')


def test_json_header_is_written_like_fastjson() -> None:
    cmd = RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicTest"}, opaque=1,
                                  version=407)
    data = encode_command(cmd)
    assert data[8:].decode() == JSON_105
    assert data[:8].hex() == "0000008700000083"  # 131-byte header


def test_json_response_with_remark_and_no_ext() -> None:
    req = RemotingCommand.request(105, {"topic": "x"}, opaque=1, version=407)
    resp = req.response(ResponseCode.TOPIC_NOT_EXIST, "No topic route info ...", version=407)
    assert encode_json_header(resp).decode() == (
        '{"code":17,"flag":1,"language":"JAVA","opaque":1,"remark":"No topic route info ...",'
        '"serializeTypeCurrentRPC":"JSON","version":407}')


# PROTOCOL.md §10, derived vectors: ROCKETMQ frames.
BIN_105 = ("0000002D 01000029 0069 00 0197 00000001 00000000 00000000 00000014 0005 746F706963 "
           "00000009 546F70696354657374")
BIN_17 = "00000021 0100001D 0011 00 0197 00000001 00000001 00000008 6E6F20726F757465 00000000"


def hx(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", ""))


def test_binary_request_vector() -> None:
    cmd = RemotingCommand.request(105, {"topic": "TopicTest"}, opaque=1, version=407, serialize_type=ROCKETMQ)
    assert encode_command(cmd) == hx(BIN_105)
    assert decode_command(hx(BIN_105)) == cmd


def test_binary_response_vector() -> None:
    cmd = decode_command(hx(BIN_17))
    assert (cmd.code, cmd.flag, cmd.remark, cmd.is_response) == (17, 1, "no route", True)
    assert cmd.code_name == "TOPIC_NOT_EXIST"
    assert encode_command(cmd) == hx(BIN_17)


# RocketMQSerializableTest: code 103, JAVA, version 2333.
def test_binary_sizes_from_upstream_tests() -> None:
    base = RemotingCommand(103, LanguageCode.JAVA, 2333, serialize_type=ROCKETMQ)
    raw = encode_binary_header(base)
    assert len(raw) == 21
    assert raw[0:2] == (103).to_bytes(2, "big") and raw[2] == 0 and raw[3:5] == (2333).to_bytes(2, "big")
    assert raw[9:13] == b"\0" * 4 and raw[13:17] == b"\0" * 4 and raw[17:21] == b"\0" * 4
    with_remark = encode_binary_header(base.replace(remark="Sample Remark"))
    assert len(with_remark) == 34
    assert with_remark[13:17] == (13).to_bytes(4, "big") and with_remark[17:30] == b"Sample Remark"
    with_ext = encode_binary_header(base.replace(ext_fields={"key": "value"}))
    assert len(with_ext) == 35 and with_ext[17:21] == (14).to_bytes(4, "big")
    fast = base.replace(flag=3, opaque=1001, version=99)
    assert decode_binary_header(encode_binary_header(fast)) == fast


def test_empty_remark_is_null_in_binary() -> None:
    cmd = RemotingCommand(0, remark="", serialize_type=ROCKETMQ)
    assert decode_binary_header(encode_binary_header(cmd)).remark is None


def test_code_outside_int16_cannot_be_rocketmq() -> None:
    with pytest.raises(EncodeError, match="int16"):
        RemotingCommand(200050, serialize_type=ROCKETMQ)
    assert RemotingCommand(200050).code == 200050  # JSON carries it


def test_json_reader_is_lenient() -> None:
    # ali-ons: numbers and booleans as ext values, any key order, unknown keys.
    raw = (b'{"flag":0,"language":"JAVA","version":121,"opaque":7,"code":310,"unknown":{"x":1},'
           b'"extFields":{"a":"g","d":4,"k":false,"g":1700000000000,"x":1.50,"n":null}}')
    cmd = decode_json_header(raw)
    assert cmd.code == 310 and cmd.version == 121 and cmd.opaque == 7
    assert dict(cmd.ext_fields) == {"a": "g", "d": "4", "k": "false", "g": "1700000000000", "x": "1.50"}


def test_json_reader_accepts_fastjson_forms() -> None:
    cmd = decode_json_header(b"{code:105,'language':'CPP',extFields:{'topic':'T'},}")
    assert (cmd.code, cmd.language, dict(cmd.ext_fields)) == (105, LanguageCode.CPP, {"topic": "T"})


def test_unknown_language_name_is_kept() -> None:
    cmd = decode_json_header(b'{"code":1,"language":"COBOL"}')
    assert cmd.language == "COBOL"
    assert json.loads(encode_json_header(cmd))["language"] == "COBOL"


@pytest.mark.parametrize("raw", [b"[1,2]", b'{"code":"abc"}', b'{"code":true}', b"{", b"\xff\xfe",
                                 b'{"code":99999999999}', b'{"extFields":[1]}'])
def test_bad_json_headers(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_json_header(raw)


@pytest.mark.parametrize("raw", ["", "0000", "00000000000000000000000000000000000000000000",
                                 "0001000001000000010000000000000005616263"])
def test_bad_binary_headers(raw: str) -> None:
    with pytest.raises(DecodeError):
        decode_binary_header(bytes.fromhex(raw))


headers = st.builds(
    RemotingCommand,
    code=st.integers(-(2**15), 2**15 - 1),
    language=st.sampled_from(list(LanguageCode)) | st.integers(14, 255),
    version=st.integers(-(2**15), 2**15 - 1),
    opaque=st.integers(-(2**31), 2**31 - 1),
    flag=st.integers(-(2**31), 2**31 - 1),
    remark=st.none() | st.text(min_size=1),
    ext_fields=st.dictionaries(st.text(), st.text(), max_size=8),
    serialize_type=st.just(ROCKETMQ),
)


@given(headers)
def test_binary_fast_path_agrees_with_construct(cmd: RemotingCommand) -> None:
    raw = encode_binary_header(cmd)
    assert decode_binary_header(raw) == decode_binary_header_construct(raw) == cmd


@given(headers)
def test_json_round_trip(cmd: RemotingCommand) -> None:
    j = cmd.replace(serialize_type=SerializeType.JSON)
    assert decode_json_header(encode_json_header(j)) == j


@given(st.binary(max_size=120))
def test_binary_header_arbitrary_bytes(raw: bytes) -> None:
    try:
        fast = decode_binary_header(raw)
    except DecodeError:
        with pytest.raises(DecodeError):
            decode_binary_header_construct(raw)
    else:
        assert decode_binary_header_construct(raw) == fast


def test_errors_say_whose_fault_it_is() -> None:
    # h11's split: what we are given (remote) against what we asked for (local)
    from wire import EncodeError, LocalProtocolError, RemoteProtocolError, WireError

    assert issubclass(DecodeError, RemoteProtocolError) and not issubclass(DecodeError, LocalProtocolError)
    assert issubclass(EncodeError, LocalProtocolError) and not issubclass(EncodeError, RemoteProtocolError)
    assert issubclass(RemoteProtocolError, WireError) and issubclass(LocalProtocolError, WireError)
    with pytest.raises(LocalProtocolError):
        RemotingCommand.request(2**40)


def test_a_bug_in_a_header_decoder_is_not_a_decode_error(monkeypatch) -> None:
    # our own TypeError/KeyError/IndexError must surface as themselves, not as the peer's garbage
    import wire.remoting as remoting

    frame = split_frame(encode_command(RemotingCommand.request(105, {"topic": "T"})))
    for exc in (TypeError("bug"), KeyError("bug"), IndexError("bug")):
        def broken(data: bytes, exc: Exception = exc) -> RemotingCommand:
            raise exc

        monkeypatch.setitem(remoting._HEADER_DECODERS, SerializeType.JSON, broken)
        with pytest.raises(type(exc)) as info:
            decode_frame(frame)
        assert not isinstance(info.value, DecodeError)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12)


@given(st.dictionaries(st.sampled_from(["code", "flag", "opaque", "version", "language", "remark",
                                        "extFields", "serializeTypeCurrentRPC"]) | st.text(max_size=4),
                       json_values, max_size=8))
def test_any_json_object_header_decodes_or_is_a_decode_error(obj: dict) -> None:
    # every field of the header given a value of every JSON type: a command or DecodeError, nothing else
    frame = split_frame(_json_frame(json.dumps(obj).encode()))
    try:
        decode_frame(frame)
    except DecodeError:
        pass


def _json_frame(header: bytes) -> bytes:
    return struct.pack(">ii", 4 + len(header), len(header)) + header


@given(st.binary(max_size=120))
def test_json_header_arbitrary_bytes(raw: bytes) -> None:
    try:
        decode_json_header(raw)
    except DecodeError:
        pass


def test_repeated_ext_keys_re_encode_byte_for_byte() -> None:
    # rocketMQProtocolEncode writes a FastCodes header's fields and then the ext map holding them
    cmd = RemotingCommand(310, ext_fields={"a": "g", "b": "T"}, serialize_type=ROCKETMQ)
    raw = encode_binary_header(cmd)
    block = raw[21:]
    doubled = raw[:17] + (2 * len(block)).to_bytes(4, "big") + block + block
    again = decode_binary_header(doubled)
    assert again == cmd and again.wire_ext == (("a", "g"), ("b", "T"), ("a", "g"), ("b", "T"))
    assert encode_binary_header(again) == doubled
    assert decode_binary_header_construct(doubled).wire_ext == again.wire_ext
    # a changed command no longer claims the captured layout
    changed = again.replace(ext_fields={"a": "h", "b": "T"})
    assert changed.wire_ext is None and encode_binary_header(changed) == encode_binary_header(
        RemotingCommand(310, ext_fields={"a": "h", "b": "T"}, serialize_type=ROCKETMQ))


def test_unpaired_surrogates_are_written_as_question_marks() -> None:
    cmd = RemotingCommand(1, remark="x\ud800y", ext_fields={"k": "\udfff"})
    assert b'"remark":"x?y"' in encode_json_header(cmd)
    binary = cmd.replace(serialize_type=ROCKETMQ)
    assert decode_binary_header(encode_binary_header(binary)).remark == "x?y"


json_headers = st.builds(
    RemotingCommand,
    code=st.integers(-(2**31), 2**31 - 1) | st.sampled_from(list(RequestCode)),
    language=st.sampled_from(list(LanguageCode)) | st.integers(14, 255) | st.text(),
    version=st.integers(-(2**31), 2**31 - 1),
    opaque=st.integers(-(2**31), 2**31 - 1),
    flag=st.integers(-(2**31), 2**31 - 1),
    remark=st.none() | st.text(),
    # any code point, unpaired surrogates and the characters JSON must escape included
    ext_fields=st.dictionaries(st.text(), st.text() | st.sampled_from(['"', "\\", "\x00\x1f", "\ud800", "é€𝄞"]),
                               max_size=8),
)


@given(json_headers)
def test_json_writer_equals_json_dumps(cmd: RemotingCommand) -> None:
    assert encode_json_header(cmd) == encode_json_header_dumps(cmd)


def test_json_writer_vectors() -> None:
    cmd = RemotingCommand(ResponseCode.SUCCESS, LanguageCode.CPP, 409, 7, 1, 'q"\\\n',
                          {"msgId": "AB", "k\u00e9": "\u20ac\x01"})
    expected = ('{"code":0,"extFields":{"msgId":"AB","k\u00e9":"\u20ac\\u0001"},"flag":1,"language":"CPP",'
                '"opaque":7,"remark":"q\\"\\\\\\n","serializeTypeCurrentRPC":"JSON","version":409}')
    assert encode_json_header(cmd) == expected.encode()
    assert encode_json_header(cmd.replace(language="GO")).count(b'"language":"GO"') == 1
    assert b'"language":99' in encode_json_header(cmd.replace(language=99))


ext_values = st.one_of(st.text(), st.integers(-(2**63), 2**63), st.booleans(), st.none())


@given(
    req=headers | json_headers,
    code=st.integers(-(2**31), 2**31 - 1) | st.sampled_from(list(ResponseCode)),
    remark=st.none() | st.text(),
    ext=st.none() | st.dictionaries(st.text(), ext_values, max_size=5),
    body=st.none() | st.binary(max_size=8) | st.builds(bytearray, st.binary(max_size=8)),
)
def test_response_shortcut_builds_what_the_constructor_builds(req, code, remark, ext, body) -> None:
    try:
        expected = RemotingCommand(int(code), LanguageCode.JAVA, DEFAULT_VERSION, req.opaque, 1, remark,
                                   dict(ext or {}), body, req.serialize_type)
    except EncodeError:
        with pytest.raises(EncodeError):
            req.response(code, remark, ext, body)
        return
    got = req.response(code, remark, ext, body)
    assert got == expected
    assert [type(getattr(got, f)) for f in ("code", "language", "body", "serialize_type")] == [
        type(getattr(expected, f)) for f in ("code", "language", "body", "serialize_type")]
    assert encode_command(got) == encode_command(expected)


# FrameBuffer tests a prefix inline and calls check_prefix only for the ones it refuses: every
# prefix must give the frame construct's REMOTING_FRAME declares, or check_prefix's exact error.
_prefix_ints = st.integers(-(2**31), 2**31 - 1) | st.integers(-2, 80) | st.sampled_from(
    [MAX_TOTAL_LENGTH, MAX_TOTAL_LENGTH + 1])
_words = st.builds(lambda kind, hl: (kind << 24) | hl, st.integers(0, 1) | st.integers(0, 255),
                   st.integers(0, 80) | st.integers(0, 0xFFFFFF))


@given(_prefix_ints, _words, st.none() | st.integers(-3, 3), st.binary(max_size=90), st.integers(0, 3))
def test_frame_buffer_prefix_shortcut_agrees_with_check_prefix(total: int, word: int, near: int | None,
                                                                rest: bytes, skip: int) -> None:
    if near is not None:  # a header length at the edge of what the frame can hold
        word = (word & 0xFF000000) | ((total - 4 + near) & 0xFFFFFF)
    data = b"\0" * skip + struct.pack(">iI", total, word) + rest
    fb = FrameBuffer(max_total_length=MAX_TOTAL_LENGTH)
    fb.feed(data)
    fb.skip(skip)  # a prefix that does not start at offset 0
    try:
        kind = check_prefix(total, word, skip, frame_index=0)
    except DecodeError as expected:
        assert not prefix_ok(total, word)
        with pytest.raises(type(expected)) as got:
            fb.next_frame()
        assert str(got.value) == str(expected) and got.value.offset == expected.offset
        return
    assert prefix_ok(total, word)
    frame = fb.next_frame()
    if 4 + total > len(data) - skip:
        assert frame is None
        return
    c = REMOTING_FRAME.parse(data[skip:skip + 4 + total])
    assert frame is not None and frame.offset == skip and frame.index == 0 and frame.serialize_type is kind
    assert (frame.header, frame.body, int(frame.serialize_type)) == (c.header, c.body, c.serialize_type)


@given(json_headers | headers, st.none() | st.binary(max_size=40) | st.integers(16_000, 70_000).map(bytes))
def test_frame_head_and_body_make_the_frame(cmd: RemotingCommand, body: bytes | None) -> None:
    cmd = cmd.replace(body=body)
    assert encode_command_head(cmd) + (cmd.body or b"") == encode_command(cmd)


def test_language_given_by_name_works_in_both_serializations() -> None:
    cmd = RemotingCommand(105, language="CPP", serialize_type=ROCKETMQ)
    assert cmd.language is LanguageCode.CPP
    assert decode_binary_header(encode_binary_header(cmd)).language is LanguageCode.CPP
    with pytest.raises(EncodeError, match="no ROCKETMQ byte value"):
        RemotingCommand(105, language="COBOL", serialize_type=ROCKETMQ)
