# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Differential tests: every hot path of the capture pipeline gives what the careful path gives.

* ``wire.remoting.fast_json_header`` (strict JSON, int fields, string ext values) against
  ``decode_json_header``'s general path;
* ``RemotingHalf._whole_frames`` (frames whole in one segment) against ``RemotingHalf._run``;
* the Ethernet/IPv4/TCP shortcut of ``CaptureDecoder.feed`` against ``parse_packet``;
* ``wire.capture.streams.json_header`` (the JSON header path of captures, ``fast_json_header``
  as peers' headers meet it) against ``decode_json_header``, and ``trusted_command`` against
  the ``RemotingCommand`` constructor;
* ``JsonLines`` (one row, and lists of rows of every kind) against ``json.dumps(row_fields(row))``;
* ``CaptureStats.add_rows`` against ``CaptureStats.add`` one row at a time.

The hot loop of ``wire.capture.hotpath`` has its own file, ``test_hotpath.py``.
"""

from __future__ import annotations

import io
import json
import struct
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.capture.helpers import exchange, frame, request, write_conversation
from tests.capture.test_streams import Sink
from tests.conftest import shared_path
from wire import DecodeError, LanguageCode, RemotingCommand, SerializeType
from wire import remoting as remoting_module
from wire.capture import CaptureDecoder, Conversation, decode_capture
from wire.capture.fields import JsonLines, row_fields
from wire.capture.streams import RemotingHalf, json_header, trusted_command
from wire.capture.synth import PcapWriter, TcpFlow
from wire.framing import MAX_TOTAL_LENGTH

_scalar = st.one_of(st.integers(-(2**40), 2**40), st.text(max_size=8), st.booleans(), st.none(),
                    st.decimals(allow_nan=False, allow_infinity=False, places=2),
                    st.lists(st.integers(), max_size=2))
_header = st.fixed_dictionaries(
    {},
    optional={
        "code": st.one_of(st.integers(-(2**33), 2**33), _scalar), "flag": st.one_of(st.integers(0, 3), _scalar),
        "opaque": st.one_of(st.integers(), _scalar), "version": st.one_of(st.integers(0, 500), _scalar),
        "language": st.one_of(st.sampled_from(["JAVA", "CPP", "GO", "KLINGON"]), _scalar),
        "remark": st.one_of(st.text(max_size=10), _scalar),
        "extFields": st.one_of(st.dictionaries(st.text(max_size=5), st.one_of(st.text(max_size=6), _scalar),
                                               max_size=4), _scalar),
        "serializeTypeCurrentRPC": st.just("JSON"),
    })


def _general(data: bytes) -> Any:
    saved = remoting_module.fast_json_header
    remoting_module.fast_json_header = lambda _data: None  # type: ignore[assignment]
    try:
        return remoting_module.decode_json_header(data)
    except DecodeError as err:
        return ("error", type(err), str(err))
    finally:
        remoting_module.fast_json_header = saved  # type: ignore[assignment]


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, default=lambda d: float(d) if isinstance(d, Decimal) else str(d)).encode()


@settings(max_examples=400, deadline=None)
@given(_header)
def test_fast_json_header_agrees_with_the_general_path(obj: dict[str, Any]) -> None:
    data = _dump(obj)
    fast = remoting_module.fast_json_header(data)
    general = _general(data)
    if fast is not None:
        assert fast == general
        assert dict(fast.ext_fields) == dict(general.ext_fields)
        assert (fast.language, fast.remark) == (general.language, general.remark)


@pytest.mark.parametrize("data", [
    b'{"code":105,"language":"JAVA","extFields":{"topic":"T"}}',
    b'\xef\xbb\xbf{"code":105}',
    b'{"code":105,"extFields":{"n":1}}',
    '{"code":1,"remark":"\ud800"}'.encode("utf-8", "surrogatepass"),
    b'{code:105}',
    b'[1]',
])
def test_fast_json_header_edge_cases(data: bytes) -> None:
    fast = remoting_module.fast_json_header(data)
    general = _general(data)
    assert fast is None or fast == general


class _CarefulHalf(RemotingHalf):
    """The same decoder with the shortcuts switched off: every byte through the careful frame loop,
    each segment appended whole to what is pending."""

    __slots__ = ()

    def data(self, offset: int, data: bytes, ts: float, record: int) -> None:
        if self.pos == len(self.buf):
            self.segs.clear()
            self.buf = bytearray()
            self.pos = 0
            self.base = offset
        self.segs.append((offset, ts, record))
        self.buf += data
        self._run()
        self._compact()


def _run(cls: type[RemotingHalf], chunks: list[bytes]) -> tuple[list[Any], list[Any]]:
    sink = Sink()
    conv = Conversation(0, "t", "a", 1, "b", 2, None, "remoting", 0.0, True)
    half = cls(sink, conv, 0)
    pos = 0
    for i, c in enumerate(chunks):
        half.data(pos, c, float(i), i + 1)
        pos += len(c)
    half.end(pos, 9.0)
    return sink.commands, [(p.verdict, p.offset, p.length, p.message) for p in sink.problems]


_frames = st.lists(st.builds(lambda code, op, body, binary: frame(request(code, op, {"k": "v"}, body,
                                                                           binary=binary)),
                             st.integers(0, 400), st.integers(0, 2**31 - 1), st.binary(max_size=40), st.booleans()),
                   min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(_frames, st.lists(st.integers(0, 5), max_size=6), st.binary(max_size=12), st.integers(0, 2000))
def test_whole_frame_shortcut_agrees_with_the_careful_path(frames: list[bytes], groups: list[int], junk: bytes,
                                                           flip: int) -> None:
    data = bytearray(b"".join(frames) + junk)
    if flip < len(data):
        data[flip] ^= 0x5A
    # chunks that mostly hold whole frames, sometimes several, sometimes cut
    chunks: list[bytes] = []
    pos = 0
    for g in groups:
        cut = min(len(data), pos + sum(len(f) for f in frames[:g]) + g)
        chunks.append(bytes(data[pos:cut]))
        pos = cut
    chunks.append(bytes(data[pos:]))
    assert _run(RemotingHalf, chunks) == _run(_CarefulHalf, chunks)


def _records(path: Any) -> list[tuple[int, float, int, bytes]]:
    from wire.capture import read_records

    return list(read_records(path))


def test_ethernet_shortcut_agrees_with_parse_packet(tmp_path: Any) -> None:
    buf = io.BytesIO()
    w = PcapWriter(buf)
    flow = TcpFlow(w, ("10.0.0.1", 40000), ("10.0.0.2", 9876), mss=300)
    flow.handshake(1.0)
    for d, f in exchange(5, body=700):
        flow.send(2.0, d, f)
    flow.close(3.0)
    path = tmp_path / "c.pcap"
    path.write_bytes(buf.getvalue())
    recs = _records(path)
    fast = CaptureDecoder()
    raw = CaptureDecoder()
    for n, ts, lt, data in recs:
        assert lt == 1
        fast.feed(n, ts, lt, data)  # Ethernet/IPv4/TCP: the shortcut
        raw.feed(n, ts, 101, data[14:])  # the same IP packets as raw IP: parse_packet
    fast.finish()
    raw.finish()
    a = [(r.ts, r.offset, r.direction, r.command) for r in fast.take() if r.kind == "command"]
    b = [(r.ts, r.offset, r.direction, r.command) for r in raw.take() if r.kind == "command"]
    assert a == b and len(a) == 10


def test_json_lines_are_row_fields_in_json(tmp_path: Any) -> None:
    path = write_conversation(tmp_path / "c.pcap", exchange(4, binary=True) + exchange(3), server=("10.0.0.2", 10911))
    rows = list(decode_capture(path))
    for bodies in ("none", "text", "hex", "decoded"):
        for capture in (None, "c.pcap"):
            lines = JsonLines(bodies=bodies, capture=capture)
            for r in rows:
                expected = json.dumps(row_fields(r, bodies=bodies, capture=capture), ensure_ascii=False,
                                      separators=(",", ":"), default=str)
                assert lines(r) == expected


@settings(max_examples=400, deadline=None)
@given(_header)
def test_capture_json_header_agrees_with_decode_json_header(obj: dict[str, Any]) -> None:
    data = _dump(obj)
    ours = json_header(data)
    if ours is None:
        return
    theirs = remoting_module.decode_json_header(data)
    assert ours == theirs
    assert (ours.language, ours.remark, ours.body, ours.wire_ext) == (theirs.language, theirs.remark, None, None)
    assert list(ours.ext_fields.items()) == list(theirs.ext_fields.items())
    assert type(ours.language) is type(theirs.language)


_full_header = st.fixed_dictionaries(
    {"code": st.integers(-(2**31), 2**31 - 1), "flag": st.integers(0, 3), "opaque": st.integers(-(2**31), 2**31 - 1),
     "version": st.integers(0, 500), "language": st.sampled_from(["JAVA", "CPP", "GO", "KLINGON"])},
    optional={"remark": st.text(max_size=10) | st.none(),
              "extFields": st.dictionaries(st.text(max_size=5), st.text(max_size=6), max_size=4) | st.none(),
              "serializeTypeCurrentRPC": st.just("JSON")})


@settings(max_examples=200, deadline=None)
@given(_full_header)
def test_capture_json_header_takes_what_peers_write(obj: dict[str, Any]) -> None:
    data = json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")
    ours = json_header(data)
    theirs = remoting_module.decode_json_header(data)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in data.decode("utf-8", "surrogatepass")):
        return  # not UTF-8: the general path's business
    assert ours is not None
    assert ours == theirs and list(ours.ext_fields.items()) == list(theirs.ext_fields.items())
    assert (ours.language, ours.remark) == (theirs.language, theirs.remark)


@settings(max_examples=500, deadline=None)
@given(_full_header, st.sampled_from(["code", "flag", "opaque", "version", "language", "remark", "extFields",
                                      "ext value"]),
       st.one_of(_scalar, st.integers(-(2**40), 2**40), st.sampled_from([2**31, -(2**31) - 1, True, 1.5])))
def test_capture_json_header_accepts_only_what_the_general_path_gives_the_same(obj: dict[str, Any], name: str,
                                                                               odd: Any) -> None:
    """A header as peers write it, with one field made odd: the capture path either declines it
    or gives exactly what the general path gives."""
    if name == "ext value":
        obj["extFields"] = {**(obj.get("extFields") or {}), "k": odd}
    else:
        obj[name] = odd
    data = _dump(obj)
    ours = json_header(data)
    general = _general(data)
    if ours is not None:
        assert ours == general
        assert list(ours.ext_fields.items()) == list(general.ext_fields.items())
        assert (ours.language, ours.remark) == (general.language, general.remark)


@pytest.mark.parametrize("data", [
    b'{"code":105,"language":"JAVA","extFields":{"topic":"T"}}',
    b'{"code":105,"language":"CPP","version":0,"opaque":-2147483648,"flag":2147483647}',
    b'{"code":2147483648}',
    b'{"code":105,"extFields":{"n":1}}',
    b'{"code":105,"extFields":{"a":"1","a":"2","b":"3"}}',
    b'{"code":105,"remark":null,"extFields":null}',
    b'{"code":105,"language":"KLINGON"}',
    b'{"code":105} ',
    b'{"code":1,"flag":0,"opaque":1,"version":1,"language":"JAVA"} ',
    b'{"code":1,"flag":0,"opaque":1,"version":1,"language":"JAVA"}x',
    b'{"code":1,"flag":0,"opaque":1,"version":1,"language":"JAVA"}{}',
    # each field odd once, the others as peers write them
    b'{"code":2147483648,"flag":0,"opaque":1,"version":1,"language":"JAVA"}',
    b'{"code":1,"flag":-2147483649,"opaque":1,"version":1,"language":"JAVA"}',
    b'{"code":1,"flag":0,"opaque":2147483648,"version":1,"language":"JAVA"}',
    b'{"code":1,"flag":0,"opaque":1,"version":-2147483649,"language":"JAVA"}',
    b'{"code":1,"flag":true,"opaque":1,"version":1,"language":"JAVA"}',
    b'{"code":1,"flag":0,"opaque":1.0,"version":1,"language":"JAVA"}',
    b'{"code":1,"flag":0,"opaque":1,"version":"1","language":"JAVA"}',
    b'{"code":1,"flag":0,"opaque":1,"version":1,"language":0}',
    b'{"code":1,"flag":0,"opaque":1,"version":1,"language":"JAVA","remark":7}',
    b'{"code":1,"flag":0,"opaque":1,"version":1,"language":"JAVA","extFields":[]}',
    b'{"code":1,"flag":0,"opaque":1,"version":1,"language":"JAVA","extFields":{"a":"1","b":2}}',
    b'{"code":1.5}',
    b'{"code":true}',
    rb'{"code":1,"remark":"\ud800"}',
    rb'{"code":1,"remark":"\u00e9\n"}',
    b'\xff{"code":1}',
    b'[1]',
])
def test_capture_json_header_edge_cases(data: bytes) -> None:
    ours = json_header(data)
    theirs = _general(data)
    if ours is not None:
        assert ours == theirs and list(ours.ext_fields.items()) == list(theirs.ext_fields.items())


@given(st.integers(-(2**31), 2**31 - 1), st.sampled_from([0, 1, 2, 3]), st.text(max_size=5) | st.none(),
       st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3), st.booleans())
def test_trusted_command_is_the_constructed_command(opaque: int, flag: int, remark: str | None,
                                                    ext: dict[str, str], binary: bool) -> None:
    st_ = SerializeType.ROCKETMQ if binary else SerializeType.JSON
    built = RemotingCommand(310, LanguageCode.CPP, 373, opaque, flag, remark, dict(ext), None, st_)
    assert trusted_command(310, LanguageCode.CPP, 373, opaque, flag, remark, dict(ext), st_) == built
    assert trusted_command(310, LanguageCode.CPP, 373, opaque, flag, remark, dict(ext), st_).wire_ext is None


def _mixed_rows(tmp_path: Any) -> list[Any]:
    """Command rows of both serialize types, a decode problem, a gap, and HA rows."""
    bad = bytearray(frame(request(10, 99, {"k": "v"})))
    bad[9] = ord("[")  # the JSON header no longer opens an object
    path = write_conversation(tmp_path / "c.pcap", exchange(3, binary=True) + exchange(2) + [(0, bytes(bad))],
                              server=("10.0.0.2", 10911))
    rows = list(decode_capture(path))
    ha = shared_path("captures", "java-4.9.8/08-ha-catchup-from-zero.pcap")
    rows += [r for r in decode_capture(ha) if r.kind == "ha"][:20]
    assert {r.kind for r in rows} == {"command", "problem", "ha"}
    return rows


def test_json_lines_of_a_list_of_rows(tmp_path: Any) -> None:
    rows = _mixed_rows(tmp_path)
    for bodies in ("none", "text", "hex", "decoded"):
        expected = "".join(json.dumps(row_fields(r, bodies=bodies, capture="f"), ensure_ascii=False,
                                      separators=(",", ":"), default=str) + "\n" for r in rows)
        assert JsonLines(bodies=bodies, capture="f").lines(rows) == expected
        # and again after the text caches filled up and were emptied
        lines = JsonLines(bodies=bodies, capture="f")
        lines.CACHE_LIMIT = 2
        assert "".join(lines.lines(rows[i:i + 3]) for i in range(0, len(rows), 3)) == expected
        assert len(lines._mid) <= 2 and len(lines._keys) <= 2 and len(lines._conv) <= 2


def test_remoting_command_equality_is_what_the_fast_path_returns() -> None:
    cmd = RemotingCommand.request(105, {"topic": "T"}, opaque=3)
    data = remoting_module.encode_json_header(cmd)
    assert remoting_module.fast_json_header(data) == cmd


def _edge_frames() -> list[bytes]:
    """Real frames (a JSON and a ROCKETMQ header, with and without a body) whose 8-byte prefix is
    moved to every edge of wire.framing.prefix_ok: the total length around 4, the header length
    and the cap, the header length one off, serialize types 0, 1 and beyond. The header bytes stay
    whole, so a loop whose prefix test were looser than prefix_ok would decode them and differ."""
    out = []
    for binary in (False, True):
        for body in (b"", b"xy"):
            real = frame(request(105, 7, {"topic": "T"}, body or None, binary=binary))
            total, word = struct.unpack_from(">iI", real)
            hl, kind = word & 0xFFFFFF, word >> 24
            for t in {total, hl + 3, hl + 4, hl + 5, 3, 4, -1, MAX_TOTAL_LENGTH, MAX_TOTAL_LENGTH + 1}:
                for h in {hl, hl - 1, hl + 1, 0}:
                    for k in {kind, 1 - kind, 2, 255}:
                        out.append(struct.pack(">iI", t, (k << 24) | (h & 0xFFFFFF)) + real[8:])
    return out


def test_prefix_copies_in_the_capture_loops_agree() -> None:
    # RemotingHalf._whole_frames and the hot loop of wire.capture.hotpath write prefix_ok inline;
    # the careful loop calls check_prefix. Each edge frame (then a good frame) must give the same
    # rows and problems both ways, and as a capture file the same rows by feed and by the hot loop.
    import tempfile
    from pathlib import Path

    from tests.capture.test_hotpath import _agree

    good = frame(request(105, 8, {"topic": "U"}, b"", binary=False))
    cases = _edge_frames()
    assert len(cases) > 500
    for data in cases:
        data += good
        assert _run(RemotingHalf, [data]) == _run(_CarefulHalf, [data]), data[:8].hex()
    buf = io.BytesIO()
    w = PcapWriter(buf, 1)
    for n, data in enumerate(cases):
        f = TcpFlow(w, ("10.0.0.1", 20000 + n), ("10.0.0.2", 10911))
        f.handshake(1.0 + n)
        f.send(1.1 + n, 0, data + good)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "edge.pcap"
        path.write_bytes(buf.getvalue())
        assert _agree(path) > len(cases)
