# Licensed under the Apache License, Version 2.0. See LICENSE.
"""One direction of remoting bytes: frames cut the same way however the bytes arrive (T2), damage
reported with its offset, resynchronisation after damage and gaps, and find_frame_start."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.capture.helpers import frame, request
from wire import DecodeError, FrameTooLarge, HeaderLengthOutOfRange, RemotingCommand, UnknownSerializeType
from wire.capture import Conversation, ProblemRow, find_frame_start, plausible_frame_start
from wire.capture.streams import RemotingHalf


class Sink:
    def __init__(self) -> None:
        self.commands: list[tuple[int, RemotingCommand, float, float]] = []
        self.problems: list[ProblemRow] = []

    def command(self, direction: int, ts: float, ts_end: float, offset: int, index: int, size: int, record: int,
                header_length: int, command: RemotingCommand) -> None:
        self.commands.append((offset, command, ts, ts_end))

    def ha_frame(self, *args: Any) -> None:
        raise AssertionError("no HA here")

    def problem(self, row: ProblemRow) -> None:
        self.problems.append(row)


def _half(synced: bool = True) -> tuple[RemotingHalf, Sink]:
    sink = Sink()
    conv = Conversation(0, "t", "10.0.0.1", 50000, "10.0.0.2", 9876, "namesrv", "remoting", 0.0, True)
    return RemotingHalf(sink, conv, 0, synced=synced), sink


def _stream() -> tuple[bytes, list[tuple[int, RemotingCommand]]]:
    cmds = [request(105, 1, {"topic": "TopicA"}), request(10, 2, {"a": "b"}, b"body" * 50, binary=True),
            request(34, 3, {}, b"{}"), request(35, 4, {"clientID": "x"}, oneway=True),
            request(310, 5, {"b": "T"}, b"\x00\x01{" * 100)]
    out = b""
    placed = []
    for c in cmds:
        placed.append((len(out), c))
        out += frame(c)
    return out, placed


def _feed(half: RemotingHalf, data: bytes, cuts: list[int], base: int = 0) -> None:
    bounds = sorted({0, len(data), *(c for c in cuts if 0 < c < len(data))})
    for i, (a, b) in enumerate(itertools.pairwise(bounds)):
        half.data(base + a, data[a:b], float(i), i + 1)


def test_whole_one_byte_at_a_time_and_every_split_agree() -> None:
    data, placed = _stream()
    ways = [[], list(range(1, len(data)))] + [[k] for k in range(1, len(data), 7)]
    for cuts in ways:
        half, sink = _half()
        _feed(half, data, cuts)
        half.end(len(data), 0.0)
        assert [(o, c) for o, c, _t, _e in sink.commands] == placed
        assert sink.problems == []


def test_frame_times_are_its_first_and_last_segment() -> None:
    data, placed = _stream()
    half, sink = _half()
    second = placed[1][0]
    _feed(half, data, [second + 3, second + 40])
    assert [(t, e) for _o, _c, t, e in sink.commands][:2] == [(0.0, 0.0), (0.0, 2.0)]


def test_trailing_garbage_is_reported_at_the_end() -> None:
    data, placed = _stream()
    half, sink = _half()
    tail = frame(request(105, 7, {"topic": "cut"}))[:20]
    _feed(half, data + tail, [])
    half.end(len(data) + 20, 0.0)
    assert len(sink.commands) == len(placed)
    assert [(p.verdict, p.offset, p.length) for p in sink.problems] == [("truncated", len(data), 20)]


@pytest.mark.parametrize(("bad", "error", "at"), [
    (bytes.fromhex("00000018000000c87b22636f6465223a3130352c22666c61"), HeaderLengthOutOfRange, 4),
    (bytes.fromhex("00000065070000617b22636f6465223a3130352c22666c61"), UnknownSerializeType, 4),
    (bytes.fromhex("7fffffff000000617b22636f6465223a3130352c22666c61"), FrameTooLarge, 0),
])
def test_bad_prefix_then_resync(bad: bytes, error: type[DecodeError], at: int) -> None:
    data, placed = _stream()
    head = frame(request(105, 99, {"topic": "before"}))
    half, sink = _half()
    _feed(half, head + bad + data, [len(head) + 5, len(head) + 30])
    half.end(0, 0.0)
    assert [c for _o, c, _t, _e in sink.commands] == [RemotingCommand.request(105, {"topic": "before"}, opaque=99)] \
        + [c for _o, c in placed]
    decode = [p for p in sink.problems if p.verdict == "decode"]
    assert len(decode) == 1 and isinstance(decode[0].error, error)
    assert decode[0].offset == len(head) + at == decode[0].error.offset
    skipped = [p for p in sink.problems if p.verdict == "skipped"]
    assert [(p.offset, p.length) for p in skipped] == [(len(head), len(bad))]
    assert sink.commands[1][0] == len(head) + len(bad)


def test_undecodable_header_with_intact_framing_is_skipped_by_its_length() -> None:
    bad_header = b'{"code":"not a number"}'
    bad = (4 + len(bad_header)).to_bytes(4, "big") + len(bad_header).to_bytes(4, "big") + bad_header
    data, placed = _stream()
    half, sink = _half()
    _feed(half, bad + data, [])
    assert [c for _o, c, _t, _e in sink.commands] == [c for _o, c in placed]
    assert [(p.verdict, p.length) for p in sink.problems] == [("decode", len(bad))]
    assert sink.problems[0].error is not None and sink.problems[0].error.field == "code"


def test_gap_inside_a_frame_drops_it_and_resyncs() -> None:
    data, placed = _stream()
    half, sink = _half()
    cut_in = placed[1][0] + 20  # inside the second frame
    resume = placed[2][0] - 5  # the gap ends 5 bytes before the third frame
    half.data(0, data[:cut_in], 1.0, 1)
    half.gap(cut_in, resume - cut_in, 2.0, 2)
    half.data(resume, data[resume:], 3.0, 3)
    half.end(len(data), 4.0)
    assert [c for _o, c, _t, _e in sink.commands] == [placed[0][1]] + [c for _o, c in placed[2:]]
    gap, skipped = sink.problems
    assert (gap.verdict, gap.offset, gap.length) == ("gap", cut_in, resume - cut_in)
    assert f"frame at offset {placed[1][0]}" in gap.message
    assert (skipped.verdict, skipped.offset, skipped.length) == ("skipped", resume, 5)


def test_gap_between_frames_resyncs_without_skipping() -> None:
    data, placed = _stream()
    half, sink = _half()
    b = placed[2][0]
    half.data(0, data[:placed[1][0]], 1.0, 1)
    half.gap(placed[1][0], b - placed[1][0], 2.0, 2)
    half.data(b, data[b:], 3.0, 3)
    assert len(sink.commands) == len(placed) - 1
    assert [p.verdict for p in sink.problems] == ["gap"]


def test_joined_midway_skips_to_the_first_frame() -> None:
    data, placed = _stream()
    half, sink = _half(synced=False)
    start = placed[1][0] + 11
    _feed(half, data[start:], [], base=start)
    assert [o for o, _c, _t, _e in sink.commands] == [o for o, _c in placed[2:]]
    assert [(p.verdict, p.offset, p.length) for p in sink.problems] == [("skipped", start, placed[2][0] - start)]


def test_find_frame_start() -> None:
    data, placed = _stream()
    assert find_frame_start(data) == 0
    for o, _c in placed:
        assert find_frame_start(data, o) == o
        assert find_frame_start(b"garbage{ and more" + data[o:]) == 17
    assert find_frame_start(b"no frame { here at all \x01 \x01 {") is None
    assert find_frame_start(data, 1, placed[1][0] + 7) is None  # the prefix must be in range
    # the second frame is ROCKETMQ-binary: found through its serialize-type byte
    assert placed[1][1].serialize_type == 1 and find_frame_start(data, 1) == placed[1][0]


def test_plausible_frame_start_checks_what_is_there() -> None:
    json_frame = frame(request(105, 1, {"topic": "T"}))
    bin_frame = frame(request(105, 1, {"topic": "T"}, binary=True))
    for f in (json_frame, bin_frame):
        for n in range(8, len(f) + 1):
            assert plausible_frame_start(f[:n], 0)
    assert not plausible_frame_start(json_frame[:7], 0)
    broken = bytearray(json_frame)
    broken[8] = ord("[")
    assert not plausible_frame_start(bytes(broken), 0)
    broken = bytearray(bin_frame)
    broken[8 + 2] = 200  # language byte
    assert not plausible_frame_start(bytes(broken), 0)
    broken = bytearray(bin_frame)
    broken[8 + 12] = 0x10  # a flag bit that does not exist
    assert not plausible_frame_start(bytes(broken), 0)
    assert not plausible_frame_start(b"\x00\x00\x00\x03\x00\x00\x00\x00", 0)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600), st.lists(st.integers(1, 599), max_size=8), st.booleans())
def test_arbitrary_bytes_never_raise(data: bytes, cuts: list[int], synced: bool) -> None:
    half, sink = _half(synced)
    _feed(half, data, cuts)
    half.end(len(data), 0.0)
    assert all(p.verdict in ("decode", "skipped", "truncated") for p in sink.problems)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 255), st.integers(0, 4), st.integers(0, 2**31))
def test_mutated_streams_never_raise_and_keep_later_frames(pos: int, xor: int, count: int, seed: int) -> None:
    data, _placed = _stream()
    rnd = random.Random(seed)
    buf = bytearray(data)
    for _ in range(count + 1):
        buf[(pos + rnd.randrange(len(buf))) % len(buf)] ^= xor
    half, sink = _half()
    _feed(half, bytes(buf), [rnd.randrange(1, len(buf)) for _ in range(3)])
    half.end(len(buf), 0.0)
    for offset, cmd, _t, _e in sink.commands:
        assert 0 <= offset < len(buf)
        assert isinstance(cmd, RemotingCommand)


# ---------------------------------------------------------------------- issue 15 item 1: every header
# the decoder accepts is a frame start when resynchronising


def _json_frame(header: bytes, body: bytes = b"") -> bytes:
    import struct

    return struct.pack(">iI", 4 + len(header) + len(body), len(header)) + header + body


_ACCEPTED_HEADERS = [
    b'{"code":10,"flag":0,"language":"CPP","opaque":1,"version":0}\n',  # the C++ client (jsoncpp)
    b'\r\n {"code":10,"flag":0,"opaque":1}\t ',
    b"{'code':10,'opaque':1}",
    b"{code:10,opaque:1,}",
    b'\x0c{"code":10}\x0b',
    b"{}",
]


@pytest.mark.parametrize("header", _ACCEPTED_HEADERS)
def test_resync_accepts_every_header_the_decoder_accepts(header: bytes) -> None:
    from wire.remoting import decode_json_header

    decode_json_header(header)  # the decoder takes it ...
    f = _json_frame(header, b"body")
    for n in range(8, len(f) + 1):
        assert plausible_frame_start(f[:n], 0), (header, n)  # ... so the frame-start test must too
    assert find_frame_start(b"\x00junk{" + f) == 6
    half, sink = _half(synced=False)
    _feed(half, b"\x00junk{" + f + f, [])
    assert [o for o, *_ in sink.commands] == [6, 6 + len(f)]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_ACCEPTED_HEADERS), st.text(" \t\r\n\x0c\x0b", max_size=3),
       st.text(" \t\r\n\x0c\x0b", max_size=3))
def test_resync_property_whitespace_around_headers(header: bytes, before: str, after: str) -> None:
    from wire import DecodeError as Err
    from wire.remoting import decode_json_header

    h = before.encode() + header.strip(b" \t\r\n\x0c\x0b") + after.encode()
    try:
        decode_json_header(h)
    except Err:
        return
    assert plausible_frame_start(_json_frame(h), 0)
    assert find_frame_start(b"xx" + _json_frame(h)) == 2


def test_joining_the_cpp_clients_connections_midway(tmp_path) -> None:
    """The C++ client's capture without its SYN packets: every connection is joined 'midway'
    (at a frame start) and every command is still found."""
    from tests.conftest import ROOT
    from wire.capture import CaptureDecoder, CommandRow, decode_capture

    syn_less = _drop_syn_packets(ROOT / "fixtures" / "peers" / "peers-cpp-produce-consume.pcap",
                                 tmp_path / "nosyn.pcap")
    rows = list(decode_capture(syn_less, decoder=CaptureDecoder()))
    commands = [r for r in rows if isinstance(r, CommandRow)]
    problems = [r for r in rows if isinstance(r, ProblemRow)]
    assert problems == []
    assert sum(1 for c in commands if not c.command.is_response) == 32
    assert len(commands) == 57


def _drop_syn_packets(src, dst):
    """``src`` without the packets that have the SYN flag (a capture started on open connections)."""
    import struct

    from wire.capture.packets import parse_packet

    data = src.read_bytes()
    magic = struct.unpack_from("<I", data)[0]
    assert magic == 0xA1B2C3D4, "a little-endian classic pcap"
    linktype = struct.unpack_from("<I", data, 20)[0]
    out, pos = [data[:24]], 24
    while pos < len(data):
        incl = struct.unpack_from("<I", data, pos + 8)[0]
        record = data[pos:pos + 16 + incl]
        pkt = parse_packet(linktype, record[16:])
        if pkt is None or not (pkt[6] & 0x02):
            out.append(record)
        pos += 16 + incl
    dst.write_bytes(b"".join(out))
    return dst
