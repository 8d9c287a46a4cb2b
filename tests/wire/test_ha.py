# Licensed under the Apache License, Version 2.0. See LICENSE.
"""HA frames, stream decoders, protocol detection, epoch file and HA rules.

Vectors live in fixtures/vectors/ha/ (one JSON file per case, bytes annotated field by field);
the real HA streams come from ../shared/captures.
"""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import shared_path
from tests.pcaputil import Direction, streams
from wire import DecodeError, EncodeError, Truncated
from wire.ha import (
    EPOCH_TRANSFER_HEADER_SIZE,
    LONG_MAX,
    TRANSFER_HEADER_SIZE,
    EpochEntry,
    EpochTransfer,
    HAConnectionState,
    HADirection,
    HAFrame,
    HandshakeReply,
    HAProtocol,
    SlaveHandshake,
    SlaveReport,
    Transfer,
    TransferAck,
    autoswitch_protocol_for_version,
    autoswitch_transfer_start_offset,
    decode_epoch_file,
    decode_epoch_transfer,
    decode_epoch_transfer_header,
    decode_ha_stream,
    decode_handshake_reply,
    decode_slave_handshake,
    decode_slave_report,
    decode_transfer,
    decode_transfer_ack,
    decode_transfer_header,
    detect_ha_protocol,
    encode_epoch_file,
    encode_epoch_transfer_header,
    encode_ha_message,
    encode_transfer_header,
    epoch_for_offset,
    find_consistent_point,
    ha_stream_decoder,
    slave_resume_offset,
    v4_transfer_start_offset,
)
from wire.ha import frames as layouts

VECTORS = Path(__file__).resolve().parents[2] / "fixtures" / "vectors" / "ha"
S2M, M2S = HADirection.SLAVE_TO_MASTER, HADirection.MASTER_TO_SLAVE
AUTOSWITCH = [p for p in HAProtocol if p.is_autoswitch]
ALL_PAIRS = [(p, d) for p in HAProtocol for d in HADirection]


def cases(kind: str, where: Any = None) -> list[Any]:
    out = []
    for p in sorted((VECTORS / kind).glob("*.json")):
        vector = json.loads(p.read_text())
        if where is None or where(vector):
            out.append(pytest.param(vector, id=p.stem))
    return out


def joined(parts: list[list[str]]) -> bytes:
    return bytes.fromhex("".join(hexpart for hexpart, _note in parts))


_TYPES: dict[str, type] = {t.__name__: t for t in
                           (SlaveReport, Transfer, SlaveHandshake, TransferAck, HandshakeReply, EpochTransfer)}


def message_from_json(obj: dict[str, Any]) -> Any:
    fields = {k: v for k, v in obj.items() if k != "type"}
    if "data" in fields:
        fields["data"] = bytes.fromhex(fields["data"])
    if "entries" in fields:
        fields["entries"] = tuple(EpochEntry(*e) for e in fields["entries"])
    return _TYPES[obj["type"]](**fields)


def message_to_json(m: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(m).__name__}
    for name in m.__dataclass_fields__:
        v = getattr(m, name)
        if v is None:
            continue
        if name == "data":
            v = v.hex()
        elif name == "entries":
            v = [[e.epoch, e.start_offset] for e in v]
        out[name] = v
    return out


def feed_in_pieces(dec: Any, pieces: list[bytes]) -> list[HAFrame]:
    out = []
    for piece in pieces:
        dec.feed(piece)
        while (frame := dec.next_frame()) is not None:
            out.append(frame)
    return out


# ------------------------------------------------------------------------------ frame vectors

@pytest.mark.parametrize("vector", cases("frames"))
def test_frame_vector(vector: dict[str, Any]) -> None:
    data = joined(vector["bytes"])
    expected = message_from_json(vector["message"])
    for protocol in vector["protocols"]:
        frames = decode_ha_stream(data, protocol, vector["direction"])
        assert [f.message for f in frames] == [expected]
        assert (frames[0].offset, frames[0].index, frames[0].size) == (0, 0, len(data))
        assert encode_ha_message(expected, HAProtocol(protocol)) == data
        one_by_one = feed_in_pieces(ha_stream_decoder(protocol, vector["direction"]),
                                    [data[i:i + 1] for i in range(len(data))])
        assert one_by_one == frames


@pytest.mark.parametrize("vector", cases("frames", lambda v: "capture" in v))
def test_frame_vector_in_the_capture_it_cites(vector: dict[str, Any]) -> None:
    where = vector["capture"]
    d = next(d for d in streams(shared_path("captures", *where["file"])) if d.sport == where["sport"])
    data = joined(vector["bytes"])
    assert bytes(d.data[where["offset"]:where["offset"] + len(data)]) == data


# The decode function for one whole frame of each message type, per protocol.
_SINGLE_DECODERS = {
    SlaveReport: lambda b, p: decode_slave_report(b),
    Transfer: lambda b, p: decode_transfer(b),
    SlaveHandshake: decode_slave_handshake,
    TransferAck: lambda b, p: decode_transfer_ack(b),
    HandshakeReply: decode_handshake_reply,
    EpochTransfer: lambda b, p: decode_epoch_transfer(b),
}


@pytest.mark.parametrize("vector", cases("frames"))
def test_single_frame_decoders(vector: dict[str, Any]) -> None:
    data = joined(vector["bytes"])
    expected = message_from_json(vector["message"])
    decode = _SINGLE_DECODERS[type(expected)]
    for protocol in vector["protocols"]:
        assert decode(data, protocol) == expected
        with pytest.raises(Truncated):
            decode(data[:-1], protocol)
        with pytest.raises(DecodeError) as info:
            decode(data + b"\x00", protocol)
        assert info.value.offset == len(data)


@pytest.mark.parametrize("vector", cases("frames", lambda v: v["message"]["type"] in ("Transfer", "EpochTransfer")))
def test_transfer_header_codecs(vector: dict[str, Any]) -> None:
    expected = message_from_json(vector["message"])
    data = joined(vector["bytes"])
    if isinstance(expected, Transfer):
        header = data[:TRANSFER_HEADER_SIZE]
        assert decode_transfer_header(header) == expected.header
        assert encode_transfer_header(expected.header) == header
    else:
        header = data[:EPOCH_TRANSFER_HEADER_SIZE]
        assert decode_epoch_transfer_header(header) == expected.header
        assert encode_epoch_transfer_header(expected.header) == header


# construct's compiled form must agree with the declaration it was compiled from (STYLE T3)
_LAYOUTS = {
    SlaveReport: {p: layouts.SLAVE_REPORT for p in HAProtocol},
    Transfer: {p: layouts.TRANSFER for p in HAProtocol},
    SlaveHandshake: {HAProtocol.AUTOSWITCH_5_0: layouts.SLAVE_HANDSHAKE_ADDRESS,
                     HAProtocol.AUTOSWITCH_5_1_0: layouts.SLAVE_HANDSHAKE_ADDRESS,
                     HAProtocol.AUTOSWITCH_5_1_1: layouts.SLAVE_HANDSHAKE_BROKER_ID},
    TransferAck: {p: layouts.TRANSFER_ACK for p in HAProtocol},
    HandshakeReply: {HAProtocol.AUTOSWITCH_5_0: layouts.HANDSHAKE_REPLY_5_0,
                     HAProtocol.AUTOSWITCH_5_1_0: layouts.HANDSHAKE_REPLY,
                     HAProtocol.AUTOSWITCH_5_1_1: layouts.HANDSHAKE_REPLY},
    EpochTransfer: {p: layouts.EPOCH_TRANSFER for p in HAProtocol},
}


@functools.cache
def _compiled(layout: Any) -> Any:
    return layout.compile()


@pytest.mark.parametrize("vector", cases("frames"))
def test_compiled_layouts_agree(vector: dict[str, Any]) -> None:
    data = joined(vector["bytes"])
    expected = message_from_json(vector["message"])
    for protocol in vector["protocols"]:
        layout = _LAYOUTS[type(expected)][HAProtocol(protocol)]
        assert _compiled(layout).parse(data) == layout.parse(data)


# ------------------------------------------------------------------------------ error vectors

@pytest.mark.parametrize("vector", cases("errors"))
def test_error_vector(vector: dict[str, Any]) -> None:
    data = joined(vector["bytes"])
    want = vector["error"]
    for protocol in vector["protocols"]:
        for pieces in ([data], [data[i:i + 1] for i in range(len(data))]):
            dec = ha_stream_decoder(protocol, vector["direction"])
            with pytest.raises(DecodeError) as info:
                feed_in_pieces(dec, pieces)
            err = info.value
            assert (err.offset, err.field, err.frame_index) == (want["offset"], want["field"],
                                                                want["frame_index"]), str(err)
            assert err.expected is not None and err.found is not None
            assert dec.frames_read == want["frame_index"]
            # the decoder stays failed, as the Java side closes the connection
            with pytest.raises(DecodeError):
                dec.next_frame()


def test_error_is_raised_before_the_body_arrives() -> None:
    dec = ha_stream_decoder(HAProtocol.V4, M2S)
    dec.feed(bytes.fromhex("0000000000001000 7fffffff"))
    with pytest.raises(DecodeError) as info:
        dec.next_frame()
    assert info.value.found == 0x7FFFFFFF


def test_partial_last_frame_is_truncated_at_end_of_stream() -> None:
    data = bytes.fromhex("0000000000001000 00000003 6162")
    assert decode_ha_stream(data, HAProtocol.V4, M2S, complete=False) == []
    with pytest.raises(Truncated) as info:
        decode_ha_stream(data, HAProtocol.V4, M2S)
    assert (info.value.offset, info.value.frame_index) == (len(data), 0)


def test_handshakes_may_repeat_before_the_first_transfer() -> None:
    # handshakeWithMaster sends the handshake again when no answer came within its 5 s select
    hs = encode_ha_message(SlaveHandshake(broker_id=3), HAProtocol.AUTOSWITCH_5_1_1)
    ack = encode_ha_message(TransferAck(0), HAProtocol.AUTOSWITCH_5_1_1)
    frames = decode_ha_stream(hs + hs + ack + ack, HAProtocol.AUTOSWITCH_5_1_1, S2M)
    assert [type(f.message) for f in frames] == [SlaveHandshake, SlaveHandshake, TransferAck, TransferAck]
    assert [f.offset for f in frames] == [0, 16, 32, 44]


def test_v4_has_no_handshake_frames() -> None:
    with pytest.raises(ValueError):
        decode_slave_handshake(b"\x00" * 16, HAProtocol.V4)
    with pytest.raises(EncodeError):
        encode_ha_message(SlaveHandshake(broker_id=1), HAProtocol.V4)
    with pytest.raises(EncodeError):
        encode_ha_message(SlaveReport(1), HAProtocol.AUTOSWITCH_5_1_1)
    with pytest.raises(EncodeError):
        encode_ha_message(SlaveHandshake(address="a:1"), HAProtocol.AUTOSWITCH_5_1_1)


@pytest.mark.parametrize(("build", "field"), [
    (lambda: SlaveHandshake(), "address"),
    (lambda: SlaveHandshake(address="x", broker_id=1), "address"),
    (lambda: SlaveHandshake(address="1" * 51), "address"),
    (lambda: SlaveHandshake(sync_from_last_file=1, broker_id=1), "sync_from_last_file"),  # type: ignore[arg-type]
    (lambda: SlaveReport(2**63), "max_offset"),
    (lambda: Transfer(0, "abc"), "data"),  # type: ignore[arg-type]
    (lambda: EpochEntry(2**31, 0), "epoch"),
    (lambda: HandshakeReply(0, 1, (EpochEntry(1, 0),) * 1001), "entries"),
    (lambda: EpochTransfer(0, 1, 0, True), "confirm_offset"),  # type: ignore[arg-type]
])
def test_unencodable_messages_cannot_be_built(build: Any, field: str) -> None:
    with pytest.raises(EncodeError) as info:
        build()
    assert info.value.field == field


# ------------------------------------------------------------------------------ real captures

def _summary(frames: list[HAFrame]) -> dict[str, Any]:
    msgs = [f.message for f in frames]
    transfers = [m for m in msgs if isinstance(m, (Transfer, EpochTransfer))]
    data = [t for t in transfers if t.data]
    reports = [m.max_offset for m in msgs if isinstance(m, (SlaveReport, TransferAck))]
    types: dict[str, int] = {}
    for m in msgs:
        types[type(m).__name__] = types.get(type(m).__name__, 0) + 1
    out: dict[str, Any] = {
        "types": types,
        "first": message_to_json(msgs[0]) if msgs else None,
        "data_transfers": len(data),
        "data_bytes": sum(len(t.data) for t in data),
        "max_body": max((len(t.data) for t in data), default=0),
        "heartbeats": len(transfers) - len(data),
        "heartbeat_offsets": sorted({t.phy_offset for t in transfers if not t.data}),
        "first_data_offset": data[0].phy_offset if data else None,
        "data_end_offset": data[-1].end_offset if data else None,
        "contiguous": all(b.phy_offset == a.end_offset for a, b in itertools.pairwise(transfers)),
        "last_confirm_offset": next((t.confirm_offset for t in reversed(transfers)
                                     if isinstance(t, EpochTransfer)), None),
        "report_offsets": reports,
        "report_offsets_head": reports[:len(reports) and 3],
        "last_report": reports[-1] if reports else None,
    }
    return out


def _connections(vector: dict[str, Any]) -> list[tuple[dict[str, Any], Direction | None, Direction | None]]:
    ds = streams(shared_path("captures", *vector["capture"]))
    out = []
    for conn in vector["connections"]:
        port = conn["ha_port"]
        m2s = [d for d in ds if d.sport == port]
        s2m = [d for d in ds if d.dport == port]
        assert len(m2s) <= 1 and len(s2m) <= 1, "one HA connection per port in these captures"
        out.append((conn, s2m[0] if s2m else None, m2s[0] if m2s else None))
    return out


def _check_summary(frames: list[HAFrame], expected: dict[str, Any]) -> None:
    got = _summary(frames)
    if "report_offsets_head" in expected:
        got["report_offsets_head"] = got["report_offsets"][:len(expected["report_offsets_head"])]
    assert {k: got[k] for k in expected} == expected


@pytest.mark.parametrize("vector", cases("captures"))
def test_capture_streams_decode_with_the_manifest_figures(vector: dict[str, Any]) -> None:
    for conn, s2m, m2s in _connections(vector):
        protocol = HAProtocol(conn["protocol"])
        for direction, stream in ((S2M, s2m), (M2S, m2s)):
            expected = conn[str(direction)]
            if expected is None:
                assert stream is None, f"{direction}: bytes where the capture has none"
                continue
            assert stream is not None and not stream.gaps
            frames = decode_ha_stream(bytes(stream.data), protocol, direction)
            assert frames[-1].end == len(stream.data)
            assert [f.index for f in frames] == list(range(len(frames)))
            assert all(a.end == b.offset for a, b in itertools.pairwise(frames))
            _check_summary(frames, expected)


@pytest.mark.parametrize("vector", cases("captures"))
def test_capture_frames_reencode_byte_exact(vector: dict[str, Any]) -> None:
    for conn, s2m, m2s in _connections(vector):
        protocol = HAProtocol(conn["protocol"])
        for direction, stream in ((S2M, s2m), (M2S, m2s)):
            if stream is None:
                continue
            data = bytes(stream.data)
            for f in decode_ha_stream(data, protocol, direction):
                assert encode_ha_message(f.message, protocol) == data[f.offset:f.end]


@pytest.mark.parametrize("vector", cases("captures"))
def test_capture_streams_fed_in_pieces(vector: dict[str, Any]) -> None:
    # STYLE T2: whole, one byte at a time, at the recorded TCP segment boundaries, and with
    # trailing garbage: always the same frames
    for conn, s2m, m2s in _connections(vector):
        protocol = HAProtocol(conn["protocol"])
        for direction, stream in ((S2M, s2m), (M2S, m2s)):
            if stream is None:
                continue
            data = bytes(stream.data)
            whole = decode_ha_stream(data, protocol, direction)
            one = feed_in_pieces(ha_stream_decoder(protocol, direction), [data[i:i + 1] for i in range(len(data))])
            segs = feed_in_pieces(ha_stream_decoder(protocol, direction),
                                  [data[off:off + n] for off, _ts, n in stream.segments])
            assert one == whole
            assert segs == whole
            garbage = ha_stream_decoder(protocol, direction)
            garbage.feed(data + b"\x7f\xff\xff\xff\x00\x01\x02")
            got = []
            try:
                while (f := garbage.next_frame()) is not None:
                    got.append(f)
            except DecodeError as err:
                assert err.offset is not None and err.offset >= len(data)
            assert got[:len(whole)] == whole


@pytest.mark.parametrize("vector", cases("captures"))
def test_detector_picks_each_capture_stream_protocol(vector: dict[str, Any]) -> None:
    prefer = autoswitch_protocol_for_version(vector["broker_version"])
    for conn, s2m, m2s in _connections(vector):
        want = HAProtocol(conn["protocol"])
        client = bytes(s2m.data) if s2m else None
        server = bytes(m2s.data) if m2s else None
        assert detect_ha_protocol(client, server, prefer=prefer) == want
        # a connection seen from its start tells the AutoSwitch version without help
        if not conn.get("started_before_capture") and client and server:
            assert detect_ha_protocol(client, server) == want
        # the first bytes of either direction alone never give a wrong answer
        for cut in (4, 8, 12, 16, 20, 27, 36, 48, 64, 100, 256):
            for kw in ({"client_bytes": client[:cut]} if client else {},
                       {"server_bytes": server[:cut]} if server else {}):
                if kw:
                    got = detect_ha_protocol(**kw, prefer=prefer)
                    assert got in (want, None), (cut, kw.keys(), got)


@pytest.mark.parametrize(("version", "protocol"), [
    (409, None), (412, None), (413, HAProtocol.AUTOSWITCH_5_0), (415, HAProtocol.AUTOSWITCH_5_1_0),
    (433, HAProtocol.AUTOSWITCH_5_1_0), (435, HAProtocol.AUTOSWITCH_5_1_1), (479, HAProtocol.AUTOSWITCH_5_1_1),
])
def test_autoswitch_protocol_for_version(version: int, protocol: HAProtocol | None) -> None:
    assert autoswitch_protocol_for_version(version) == protocol


def test_detector_rules_on_hand_made_streams() -> None:
    v4_big = encode_ha_message(SlaveReport(2**32 + 5), HAProtocol.V4)  # starts 00000001 like a handshake
    assert detect_ha_protocol(b"", b"") is None
    assert detect_ha_protocol(client_bytes=bytes(4)) is None  # nothing whole yet
    assert detect_ha_protocol(client_bytes=bytes(8)) == HAProtocol.V4
    assert detect_ha_protocol(client_bytes=v4_big) is None  # also the first 8 bytes of a handshake
    v4_big_next = encode_ha_message(SlaveReport(2**32 + 6), HAProtocol.V4)
    assert detect_ha_protocol(client_bytes=v4_big + v4_big_next) == HAProtocol.V4
    hs = encode_ha_message(SlaveHandshake(broker_id=7), HAProtocol.AUTOSWITCH_5_1_1)
    ack = encode_ha_message(TransferAck(0), HAProtocol.AUTOSWITCH_5_1_1)
    assert detect_ha_protocol(client_bytes=hs + ack) == HAProtocol.AUTOSWITCH_5_1_1
    # mid-stream AutoSwitch: every 5.x version fits; prefer decides, else the newest
    assert detect_ha_protocol(client_bytes=ack + ack) == HAProtocol.AUTOSWITCH_5_1_1
    assert detect_ha_protocol(client_bytes=ack + ack, prefer=HAProtocol.AUTOSWITCH_5_0) == HAProtocol.AUTOSWITCH_5_0
    # 4.x reports must not go down, transfers must follow on
    down = encode_ha_message(SlaveReport(9), HAProtocol.V4) + encode_ha_message(SlaveReport(8), HAProtocol.V4)
    assert detect_ha_protocol(client_bytes=down) is None
    gap = (encode_ha_message(Transfer(0, b"ab"), HAProtocol.V4)
           + encode_ha_message(Transfer(5, b""), HAProtocol.V4))
    assert detect_ha_protocol(server_bytes=gap) is None


# ------------------------------------------------------------------------------ epoch rules

def _entries(pairs: list[list[int]]) -> list[EpochEntry]:
    return [EpochEntry(e, s) for e, s in pairs]


@pytest.mark.parametrize("vector", cases("consistent-point"))
def test_consistent_point(vector: dict[str, Any]) -> None:
    if vector.get("function") == "slave_resume_offset":
        got = slave_resume_offset(_entries(vector["local"]), vector["local_max_offset"],
                                  _entries(vector["master"]), vector["master_max_offset"])
    else:
        got = find_consistent_point(_entries(vector["local"]), _entries(vector["remote"]),
                                    local_end=vector.get("local_end"), remote_end=vector.get("remote_end"))
    assert got == vector["expected"]


_START_RULES = {"v4_transfer_start_offset": lambda a: v4_transfer_start_offset(**a),
                "autoswitch_transfer_start_offset": lambda a: autoswitch_transfer_start_offset(**a)}


@pytest.mark.parametrize("vector", cases("start-offset"))
def test_transfer_start_offset(vector: dict[str, Any]) -> None:
    assert _START_RULES[vector["function"]](vector["args"]) == vector["expected"]


def test_epoch_for_offset_matches_the_upstream_cache() -> None:
    # EpochFileCacheTest.testFindEpochEntryByOffset: 350 lies in epoch 2 = [300, 500)
    cache = _entries([[1, 100], [2, 300], [3, 500]])
    assert epoch_for_offset(cache, 350) == EpochEntry(2, 300)
    assert epoch_for_offset(cache, 99) is None
    assert epoch_for_offset(cache, LONG_MAX - 1) == EpochEntry(3, 500)
    assert epoch_for_offset(cache, 700, last_end=700) is None


@pytest.mark.parametrize("vector", cases("epoch-file"))
def test_epoch_file(vector: dict[str, Any]) -> None:
    sep = vector.get("line_separator", "\n")
    text = vector["text"]
    if "error" in vector:
        with pytest.raises(DecodeError) as info:
            decode_epoch_file(text.encode(), line_separator=sep)
        assert (info.value.field, info.value.offset) == (vector["error"]["field"], vector["error"]["offset"])
        return
    entries = tuple(_entries(vector["entries"]))
    assert decode_epoch_file(text.encode(), line_separator=sep) == entries
    assert decode_epoch_file(text, line_separator=sep) == entries
    if vector.get("canonical"):
        assert encode_epoch_file(entries, line_separator=sep) == text.encode()


def test_epoch_file_refuses_entries_java_could_not_read_back() -> None:
    with pytest.raises(EncodeError):
        encode_epoch_file([EpochEntry(1, -1)])


# ------------------------------------------------------------------------------ properties

_i32 = st.integers(-(2**31), 2**31 - 1)
_i64 = st.integers(-(2**63), 2**63 - 1)
_data = st.binary(max_size=64)
_entry = st.builds(EpochEntry, st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1))

_V4_SLAVE = st.builds(SlaveReport, _i64)
_V4_MASTER = st.builds(Transfer, _i64, _data)
_ACK = st.builds(TransferAck, _i64)
_XFER = st.builds(EpochTransfer, _i64, _i32, _i64, _i64, _data)
_REPLY = st.builds(HandshakeReply, _i64, _i32, st.lists(_entry, max_size=5).map(tuple))
_HS_ADDR = st.builds(SlaveHandshake, st.booleans(), st.booleans(),
                     address=st.text(max_size=12).filter(lambda s: len(s.encode("utf-8", "surrogatepass")) <= 50))
_HS_ID = st.builds(SlaveHandshake, st.booleans(), st.booleans(), broker_id=_i64)


def _stream_messages(protocol: HAProtocol, direction: HADirection) -> st.SearchStrategy[list[Any]]:
    """A message sequence a Java peer could send: handshakes (AutoSwitch) first, then transfers."""
    if protocol is HAProtocol.V4:
        return st.lists(_V4_SLAVE if direction is S2M else _V4_MASTER, max_size=6)
    if direction is S2M:
        hs = _HS_ID if protocol is HAProtocol.AUTOSWITCH_5_1_1 else _HS_ADDR
        return st.tuples(st.lists(hs, max_size=2), st.lists(_ACK, max_size=5)).map(lambda t: t[0] + t[1])
    return st.tuples(st.lists(_REPLY, max_size=2), st.lists(_XFER, max_size=5)).map(lambda t: t[0] + t[1])


@st.composite
def _encoded_stream(draw: st.DrawFn) -> tuple[HAProtocol, HADirection, list[Any], bytes]:
    protocol, direction = draw(st.sampled_from(ALL_PAIRS))
    msgs = draw(_stream_messages(protocol, direction))
    data = b"".join(encode_ha_message(m, protocol) for m in msgs)
    return protocol, direction, msgs, data


@settings(max_examples=300, deadline=None)
@given(_encoded_stream(), st.lists(st.integers(0, 4000), max_size=8))
def test_streams_round_trip_split_anywhere(case: Any, cuts: list[int]) -> None:
    protocol, direction, msgs, data = case
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    pieces = [data[a:b] for a, b in itertools.pairwise(points)]
    frames = feed_in_pieces(ha_stream_decoder(protocol, direction), pieces)
    assert [f.message for f in frames] == msgs
    assert sum(f.size for f in frames) == len(data)


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.tuples(st.just(HAProtocol.V4), _V4_SLAVE), st.tuples(st.just(HAProtocol.V4), _V4_MASTER),
    st.tuples(st.sampled_from(AUTOSWITCH), st.one_of(_ACK, _XFER, _REPLY)),
    st.tuples(st.sampled_from(AUTOSWITCH[:2]), _HS_ADDR),
    st.tuples(st.just(HAProtocol.AUTOSWITCH_5_1_1), _HS_ID)))
def test_every_message_round_trips(case: Any) -> None:
    protocol, msg = case
    data = encode_ha_message(msg, protocol)
    assert _SINGLE_DECODERS[type(msg)](data, protocol) == msg


_SINGLE_FRAME_DECODERS = [
    lambda b: decode_slave_report(b), lambda b: decode_transfer(b), lambda b: decode_transfer_header(b),
    lambda b: decode_transfer_ack(b), lambda b: decode_epoch_transfer(b),
    lambda b: decode_epoch_transfer_header(b),
    *[functools.partial(decode_slave_handshake, protocol=p) for p in AUTOSWITCH],
    *[functools.partial(decode_handshake_reply, protocol=p) for p in AUTOSWITCH],
]


def _only_frames_or_decode_error(protocol: HAProtocol, direction: HADirection, data: bytes) -> None:
    dec = ha_stream_decoder(protocol, direction)
    dec.feed(data)
    try:
        for f in dec:
            assert isinstance(f, HAFrame)
    except DecodeError as err:
        assert err.offset is not None and 0 <= err.offset <= len(data) + 16
        assert err.field


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_arbitrary_bytes_give_frames_or_decode_error(data: bytes) -> None:
    for protocol, direction in ALL_PAIRS:
        _only_frames_or_decode_error(protocol, direction, data)
    for decode in _SINGLE_FRAME_DECODERS:
        try:
            decode(data)
        except DecodeError:
            pass
    try:
        decode_epoch_file(data)
    except DecodeError:
        pass
    assert detect_ha_protocol(data, data[::-1]) in (None, *HAProtocol)


@settings(max_examples=300, deadline=None)
@given(_encoded_stream(), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255), st.sampled_from("fid")),
                                   min_size=1, max_size=4))
def test_mutated_streams_give_frames_or_decode_error(case: Any, edits: list[tuple[int, int, str]]) -> None:
    protocol, direction, _msgs, data = case
    buf = bytearray(data)
    for pos, byte, op in edits:
        i = pos % (len(buf) + 1)
        if op == "f" and i < len(buf):
            buf[i] ^= byte or 1
        elif op == "i":
            buf[i:i] = bytes([byte])
        elif op == "d" and i < len(buf):
            del buf[i]
    _only_frames_or_decode_error(protocol, direction, bytes(buf))
    assert detect_ha_protocol(bytes(buf), bytes(buf)) in (None, *HAProtocol)


@settings(max_examples=200, deadline=None)
@given(st.lists(_entry, max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_epoch_file_round_trips(entries: list[EpochEntry], sep: str) -> None:
    assert decode_epoch_file(encode_epoch_file(entries, line_separator=sep), line_separator=sep) == tuple(entries)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789-+\n\r x", max_size=60))
def test_epoch_file_text_gives_entries_or_decode_error(text: str) -> None:
    try:
        got = decode_epoch_file(text)
    except DecodeError as err:
        assert err.field in ("count", "crc32", "epoch", "start_offset", "file")
        return
    assert all(isinstance(e, EpochEntry) for e in got)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 1000)), max_size=5, unique_by=lambda t: t[0]),
       st.lists(st.tuples(st.integers(1, 6), st.integers(0, 1000)), max_size=5, unique_by=lambda t: t[0]),
       st.integers(0, 2000), st.integers(0, 2000))
def test_consistent_point_is_where_both_agree(local_pairs: list[tuple[int, int]],
                                              remote_pairs: list[tuple[int, int]],
                                              local_end: int, remote_end: int) -> None:
    local, remote = sorted(local_pairs), sorted(remote_pairs)
    # well-formed caches: epochs and start offsets both increase
    assume(all(a[1] < b[1] for a, b in itertools.pairwise(local)))
    assume(all(a[1] < b[1] for a, b in itertools.pairwise(remote)))
    mine, theirs = _entries([list(p) for p in local]), _entries([list(p) for p in remote])
    point = find_consistent_point(mine, theirs, local_end=local_end, remote_end=remote_end)
    shared = set(local) & set(remote)
    assert (point == -1) == (not shared)
    # both sides agree on the answer, whichever asks
    assert find_consistent_point(theirs, mine, local_end=remote_end, remote_end=local_end) == point
    if shared:
        _top_epoch, top_start = max(shared)
        assert point >= min(top_start, local_end, remote_end)


def test_states_are_the_java_ordinals() -> None:
    assert [s.name for s in HAConnectionState] == ["READY", "HANDSHAKE", "TRANSFER", "SUSPEND", "SHUTDOWN"]
    assert [int(s) for s in HAConnectionState] == [0, 1, 2, 3, 4]


def test_the_4x_stream_reads_what_the_construct_layouts_read() -> None:
    """The 4.x stream decoders read their frames with struct; every frame of both directions,
    hostile numbers included, decodes as the construct layouts of wire.ha.frames decode it."""
    import struct as _struct

    from wire.ha.frames import decode_slave_report, decode_transfer

    offsets = [0, 1, 2**31, 2**63 - 1, -1, -(2**63), 1 << 40]
    reports = b"".join(_struct.pack(">q", o) for o in offsets)
    got = [f.message for f in decode_ha_stream(reports, HAProtocol.V4, HADirection.SLAVE_TO_MASTER, complete=True)]
    assert got == [decode_slave_report(reports[i:i + 8]) for i in range(0, len(reports), 8)]
    frames = [_struct.pack(">qi", o, n) + bytes(range(n)) for o, n in zip(offsets, [0, 1, 5, 0, 200, 3, 0], strict=True)]
    got = [f.message for f in decode_ha_stream(b"".join(frames), HAProtocol.V4, HADirection.MASTER_TO_SLAVE,
                                                complete=True)]
    assert got == [decode_transfer(f) for f in frames]
