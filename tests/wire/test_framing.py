# Licensed under the Apache License, Version 2.0. See LICENSE.
from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wire import (
    MAX_TOTAL_LENGTH,
    DecodeError,
    FrameBuffer,
    FrameTooLarge,
    HeaderLengthOutOfRange,
    RemotingCommand,
    SerializeType,
    TrailingBytes,
    UnknownSerializeType,
    decode_command,
    decode_frame,
    encode_command,
    split_frame,
)
from wire.framing import PREFIX, REMOTING_FRAME


def frame(total: int, word: int, rest: bytes = b"") -> bytes:
    return struct.pack(">iI", total, word) + rest


# RemotingCommandTest.testMarkProtocolType_*: (type << 24) | length
@pytest.mark.parametrize(("length", "kind", "expected"), [
    (261, SerializeType.JSON, "00000105"),
    (16777215, SerializeType.ROCKETMQ, "01ffffff"),
])
def test_mark_protocol_type(length: int, kind: SerializeType, expected: str) -> None:
    assert struct.pack(">I", (int(kind) << 24) | (length & 0xFFFFFF)).hex() == expected


def test_total_length_does_not_count_itself() -> None:
    data = encode_command(RemotingCommand.request(105, {"topic": "T"}, body=b"xyz"))
    total, word = PREFIX.unpack_from(data)
    assert total == len(data) - 4
    assert word & 0xFFFFFF == len(data) - 8 - 3


@pytest.mark.parametrize(("data", "error", "offset", "field"), [
    # the three malformed frames of captures/java-4.9.8/10-malformed-frames
    ("00000018000000c87b22636f6465223a3130352c22666c61", HeaderLengthOutOfRange, 4, "headerLength"),
    ("00000065070000617b22636f6465223a3130352c22666c61", UnknownSerializeType, 4, "serializeType"),
    ("7fffffff000000617b22636f6465223a3130352c22666c61", FrameTooLarge, 0, "totalLength"),
])
def test_malformed_prefixes(data: str, error: type[DecodeError], offset: int, field: str) -> None:
    fb = FrameBuffer()
    fb.feed(bytes.fromhex(data))
    with pytest.raises(error) as info:
        fb.next_frame()
    assert info.value.offset == offset
    assert info.value.field == field
    # the buffer stays failed, as the Java side closes the channel
    with pytest.raises(error):
        fb.next_frame()


def test_cap_is_checked_before_buffering() -> None:
    fb = FrameBuffer()
    fb.feed(struct.pack(">i", MAX_TOTAL_LENGTH + 1))
    with pytest.raises(FrameTooLarge):
        fb.next_frame()  # only 4 bytes buffered: the length alone is enough to refuse


def test_largest_accepted_total_length() -> None:
    fb = FrameBuffer()
    fb.feed(frame(MAX_TOTAL_LENGTH, 0))
    assert fb.next_frame() is None  # accepted, waiting for 16 MiB of body
    assert MAX_TOTAL_LENGTH == 16777212


def test_offsets_count_from_the_first_byte_fed() -> None:
    good = encode_command(RemotingCommand.request(34))
    fb = FrameBuffer()
    fb.feed(good + good + frame(10, 0x07000002, b"\0" * 6))
    assert fb.next_frame().offset == 0
    second = fb.next_frame()
    assert (second.offset, second.index) == (len(good), 1)
    with pytest.raises(UnknownSerializeType) as info:
        fb.next_frame()
    assert info.value.offset == 2 * len(good) + 4
    assert info.value.frame_index == 2


def test_skip_resynchronises() -> None:
    good = encode_command(RemotingCommand.request(34))
    fb = FrameBuffer()
    fb.feed(frame(10, 0x07000002, b"\0" * 6) + good)
    with pytest.raises(UnknownSerializeType):
        fb.next_frame()
    fb.skip(14)
    assert decode_frame(fb.next_frame()).code == 34


def test_split_frame_rejects_trailing_bytes() -> None:
    good = encode_command(RemotingCommand.request(34))
    with pytest.raises(TrailingBytes):
        split_frame(good + b"\0")
    with pytest.raises(DecodeError):
        split_frame(good[:-1] if len(good) > 8 else good[:5])


def test_construct_declaration_agrees_with_fast_path() -> None:
    data = encode_command(RemotingCommand.request(10, {"a": "b"}, body=b"hello"))
    c = REMOTING_FRAME.parse(data)
    f = split_frame(data)
    assert (c.header, c.body, c.serialize_type) == (f.header, f.body, int(f.serialize_type))


commands = st.builds(
    RemotingCommand,
    code=st.integers(-(2**15), 2**15 - 1),
    version=st.integers(-(2**15), 2**15 - 1),
    opaque=st.integers(-(2**31), 2**31 - 1),
    flag=st.integers(0, 3),
    remark=st.none() | st.text(min_size=1, max_size=30),
    ext_fields=st.dictionaries(st.text(max_size=12), st.text(max_size=30), max_size=6),
    body=st.none() | st.binary(min_size=1, max_size=64),
    serialize_type=st.sampled_from(list(SerializeType)),
)


@given(st.lists(commands, min_size=1, max_size=5), st.data())
def test_any_split_gives_the_same_commands(cmds: list[RemotingCommand], data: st.DataObject) -> None:
    stream = b"".join(encode_command(c) for c in cmds)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    fb = FrameBuffer()
    got = []
    prev = 0
    for cut in [*cuts, len(stream)]:
        fb.feed(stream[prev:cut])
        prev = cut
        while (f := fb.next_frame()) is not None:
            got.append(decode_command(stream[f.offset:f.offset + f.size]))
    assert got == cmds
    assert fb.buffered == 0


@given(st.binary(max_size=200))
def test_arbitrary_bytes_give_frames_or_decode_error(data: bytes) -> None:
    fb = FrameBuffer()
    fb.feed(data)
    try:
        while (f := fb.next_frame()) is not None:
            decode_frame(f)
    except DecodeError:
        pass
