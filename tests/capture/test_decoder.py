# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Whole synthetic captures through the pipeline: link types, pairing and latency, direction by
flag not port, classification by port, override and sniffing, HA on a custom port, lost and cut
segments, pcapng equals pcap, rows are plain picklable tuples."""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import pytest
from scapy.utils import PcapNgWriter, RawPcapReader

from tests.capture.helpers import exchange, frame, request, write_conversation
from wire import RemotingCommand, ResponseCode
from wire.capture import (
    FLAT_COLUMNS,
    CaptureDecoder,
    CommandRow,
    HaRow,
    PortRoles,
    ProblemRow,
    decode_capture,
    parse_port_overrides,
)
from wire.capture.packets import TCP_ACK
from wire.capture.synth import PcapWriter, TcpFlow
from wire.ha import SlaveReport, Transfer, encode_slave_report, encode_transfer


def _rows(path: Path, **kw: object) -> tuple[list[object], CaptureDecoder]:
    dec = CaptureDecoder(capture=str(path), **kw)  # type: ignore[arg-type]
    return list(decode_capture(path, decoder=dec)), dec


@pytest.mark.parametrize("linktype", [0, 1, 101, 108, 113, 276])
@pytest.mark.parametrize("v6", [False, True])
def test_link_types_and_families(tmp_path: Path, linktype: int, v6: bool) -> None:
    frames = exchange(4)
    client, server = (("fd00::1", 40000), ("fd00::2", 9876)) if v6 else (("10.0.0.1", 40000), ("10.0.0.2", 9876))
    path = write_conversation(tmp_path / "c.pcap", frames, linktype=linktype, client=client, server=server)
    rows, dec = _rows(path)
    cmds = [r for r in rows if isinstance(r, CommandRow)]
    assert [encode_command_bytes(r) for r in cmds] == [f for _d, f in frames]
    conv = dec.conversations[0]
    assert (conv.client, conv.client_port, conv.server, conv.server_port) == (*client, *server)
    assert conv.role == "namesrv" and conv.protocol == "remoting" and conv.syn


def encode_command_bytes(row: CommandRow) -> bytes:
    from wire import encode_command

    return encode_command(row.command)


def test_pairing_latency_and_order(tmp_path: Path) -> None:
    path = write_conversation(tmp_path / "c.pcap", exchange(3), step=0.25)
    rows, _dec = _rows(path)
    cmds = [r for r in rows if isinstance(r, CommandRow)]
    assert [r.number for r in rows] == list(range(1, len(rows) + 1))
    for req, resp in zip(cmds[::2], cmds[1::2], strict=True):
        assert not req.command.is_response and resp.command.is_response
        assert resp.request is req and resp.latency == pytest.approx(0.25)
        assert (req.direction, resp.direction) == (0, 1)


def test_requests_from_the_server_are_told_by_flag_not_port(tmp_path: Path) -> None:
    notify = request(40, 7, {"consumerGroup": "G"}, oneway=True)
    check = request(20, 8, {"group": "G"})  # a broker asking the client, answered by the client
    frames = [(1, frame(notify)), (1, frame(check)), (0, frame(check.response(0)))]
    rows, _dec = _rows(write_conversation(tmp_path / "c.pcap", frames, server=("10.0.0.2", 10911)))
    cmds = [r for r in rows if isinstance(r, CommandRow)]
    assert [(r.direction, r.command.is_response, r.command.is_oneway) for r in cmds] == [
        (1, False, True), (1, False, False), (0, True, False)]
    assert cmds[2].request is cmds[1] and cmds[0].request is None


def test_unknown_port_is_sniffed_as_remoting(tmp_path: Path) -> None:
    path = write_conversation(tmp_path / "c.pcap", exchange(2), server=("10.0.0.2", 18080))
    rows, dec = _rows(path)
    assert dec.conversations[0].role is None and dec.conversations[0].protocol == "remoting"
    assert len([r for r in rows if isinstance(r, CommandRow)]) == 4


def test_other_traffic_is_ignored_quietly(tmp_path: Path) -> None:
    http = [(0, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), (1, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")]
    rows, dec = _rows(write_conversation(tmp_path / "h.pcap", http, server=("10.0.0.2", 8080)))
    assert rows == [] and dec.conversations[0].protocol == "other"


def test_port_override_makes_an_ha_port_remoting(tmp_path: Path) -> None:
    path = write_conversation(tmp_path / "c.pcap", exchange(1), server=("10.0.0.2", 10912))
    # sniffing alone already sees remoting frames on the HA port
    rows, dec = _rows(path)
    assert dec.conversations[0].protocol == "remoting" and len(rows) == 2
    rows, dec = _rows(path, roles=PortRoles(parse_port_overrides(["broker=10912"])))
    assert dec.conversations[0].role == "broker" and len(rows) == 2
    rows, dec = _rows(path, roles=PortRoles(parse_port_overrides(["other=10912"])))
    assert rows == [] and dec.conversations[0].protocol == "other"


def _ha_capture(path: Path, port: int) -> Path:
    buf = io.BytesIO()
    w = PcapWriter(buf)
    flow = TcpFlow(w, ("127.0.0.1", 45000), ("127.0.0.1", port))
    flow.handshake(1.0)
    offset = 4096
    flow.send(1.1, 0, encode_slave_report(SlaveReport(offset)))
    for i in range(3):
        data = bytes([i]) * 1000
        flow.send(1.2 + i, 1, encode_transfer(Transfer(offset, data)))
        offset += len(data)
        flow.send(1.3 + i, 0, encode_slave_report(SlaveReport(offset)))
    flow.send(5.0, 1, encode_transfer(Transfer(offset)))
    flow.close(6.0)
    path.write_bytes(buf.getvalue())
    return path


def test_ha_on_a_port_named_by_override(tmp_path: Path) -> None:
    path = _ha_capture(tmp_path / "ha.pcap", 20912)
    rows, dec = _rows(path, roles=PortRoles(parse_port_overrides(["ha=20912"])))
    ha = [r for r in rows if isinstance(r, HaRow)]
    assert dec.conversations[0].protocol == "ha" and dec.conversations[0].ha_variant == "v4"
    assert [type(r.message).__name__ for r in ha] == ["SlaveReport"] + ["Transfer", "SlaveReport"] * 3 + ["Transfer"]
    assert [r.message.max_offset for r in ha if r.direction == 0] == [4096, 5096, 6096, 7096]
    assert [r.offset for r in ha if r.direction == 1] == [0, 1012, 2024, 3036]


def test_ha_on_the_default_port_and_sniffed_on_an_unknown_one(tmp_path: Path) -> None:
    rows, dec = _rows(_ha_capture(tmp_path / "a.pcap", 10912))
    assert dec.conversations[0].role == "ha" and len(rows) == 8
    rows, dec = _rows(_ha_capture(tmp_path / "b.pcap", 23456))
    assert dec.conversations[0].protocol == "ha" and len(rows) == 8


def test_a_lost_segment_is_a_gap_and_decoding_resumes(tmp_path: Path) -> None:
    frames = exchange(3, body=3000)
    buf = io.BytesIO()
    w = PcapWriter(buf)
    flow = TcpFlow(w, ("10.0.0.1", 40000), ("10.0.0.2", 9876), mss=1000)
    flow.handshake(1.0)
    lost_at = None
    for i, (d, data) in enumerate(frames):
        if i == 2:  # the second request loses its second segment
            lost_at = flow.seq[0]
            flow.packet(2.0, 0, TCP_ACK, data[:1000])
            flow.packet(2.0, 0, TCP_ACK, data[2000:3000], seq=flow.seq[0] + 2000)
            flow.packet(2.0, 0, TCP_ACK, data[3000:], seq=flow.seq[0] + 3000)
            flow.seq[0] = (flow.seq[0] + len(data)) & 0xFFFFFFFF
            flow.packet(2.0, 1, TCP_ACK)
        else:
            flow.send(2.0 + i, d, data)
    flow.close(9.0)
    path = tmp_path / "lost.pcap"
    path.write_bytes(buf.getvalue())
    rows, dec = _rows(path)
    cmds = [r for r in rows if isinstance(r, CommandRow)]
    probs = [r for r in rows if isinstance(r, ProblemRow)]
    assert lost_at is not None
    assert [p.verdict for p in probs] == ["gap", "skipped"] and probs[0].length == 1000
    assert "1,000 bytes missing" in probs[0].message and "is lost" in probs[0].message
    # the rest of the cut frame is passed over up to the next frame start
    assert probs[1].offset == probs[0].offset + 1000 and probs[1].length == len(frames[2][1]) - 2000
    assert len(cmds) == 5  # the cut request is gone; its response has nothing to pair with
    assert sum(1 for r in cmds if r.command.is_response and r.request is None) == 1
    assert dec.conversations[0].missing == 1000


def test_snapshot_length_cut_capture(tmp_path: Path) -> None:
    frames = exchange(2, body=500)
    buf = io.BytesIO()
    w = PcapWriter(buf, snaplen=200)
    flow = TcpFlow(w, ("10.0.0.1", 40000), ("10.0.0.2", 9876))
    flow.handshake(1.0)
    for d, data in frames:
        for i in range(0, len(data), 1448):
            piece = data[i:i + 1448]
            flow.packet(2.0, d, TCP_ACK, piece, caplen=200)
            flow.seq[d] = (flow.seq[d] + len(piece)) & 0xFFFFFFFF
    path = tmp_path / "cut.pcap"
    path.write_bytes(buf.getvalue())
    rows, _dec = _rows(path)
    cmds = [r for r in rows if isinstance(r, CommandRow)]
    # the requests do not fit in 200 bytes and are lost to gaps; the short responses are whole
    assert [(r.command.is_response, r.request) for r in cmds] == [(True, None), (True, None)]
    assert {r.verdict for r in rows if isinstance(r, ProblemRow)} <= {"gap", "skipped"}


def test_pcapng_gives_the_same_rows_as_pcap(tmp_path: Path) -> None:
    pcap = write_conversation(tmp_path / "c.pcap", exchange(3))
    ng = tmp_path / "c.pcapng"
    w = PcapNgWriter(str(ng))
    with RawPcapReader(str(pcap)) as reader:
        from scapy.layers.l2 import Ether

        for data, meta in reader:
            pkt = Ether(data)
            pkt.time = meta.sec + meta.usec / 1e6
            w.write(pkt)
    w.close()
    a = [(r.ts, r.offset, r.command) for r in _rows(pcap)[0] if isinstance(r, CommandRow)]
    b = [(r.ts, r.offset, r.command) for r in _rows(ng)[0] if isinstance(r, CommandRow)]
    assert a == b and len(a) == 6


def test_damaged_packet_is_a_problem_row_and_the_rest_decodes(tmp_path: Path) -> None:
    path = write_conversation(tmp_path / "c.pcap", exchange(1))
    data = bytearray(path.read_bytes())
    # append a record holding an Ethernet frame with a truncated IPv4 header
    bad = b"\x00" * 12 + b"\x08\x00" + b"\x45\x00"
    data += (2000).to_bytes(4, "little") + (0).to_bytes(4, "little") + len(bad).to_bytes(4, "little") * 2 + bad
    path.write_bytes(bytes(data))
    rows, dec = _rows(path)
    probs = [r for r in rows if isinstance(r, ProblemRow)]
    assert [(p.verdict, p.record) for p in probs] == [("packet", dec.records)]
    assert len([r for r in rows if isinstance(r, CommandRow)]) == 2


def test_rows_are_plain_picklable_tuples(tmp_path: Path) -> None:
    rows, _dec = _rows(write_conversation(tmp_path / "c.pcap", exchange(2)))
    for r in rows:
        assert isinstance(r, tuple)
        assert len(r.flat()) == len(FLAT_COLUMNS)
        again = pickle.loads(pickle.dumps(r))
        assert again.command == r.command and again.conv.flow == r.conv.flow
    flat = rows[1].flat()
    assert dict(zip(FLAT_COLUMNS, flat, strict=True))["code"] == ResponseCode.SUCCESS
    assert isinstance(rows[0].command, RemotingCommand)
