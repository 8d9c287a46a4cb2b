# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The hot loop of ``wire.capture.hotpath`` against ``CaptureDecoder.feed`` record by record.

Both must give the same rows (every field, pairing and numbering included), the same decoder,
conversation and TCP counters, and the same damage errors, over captures that mix everything the
hot loop hands back to ``feed``: every link type, VLAN tags, IPv6, UDP on a TCP connection's
addresses, connections with and without handshakes, port reuse, RST, FIN, reordering, duplicates,
losses, snapshot cuts, Ethernet padding, damaged and partial frames, several frames per segment,
frames across segments, sniffed and HA ports. Also every reference capture in ../shared.
"""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CAPTURES, shared_path
from wire import RemotingCommand, SerializeType, encode_command
from wire.capture import CaptureDecoder, CaptureFileError, CommandRow, HaRow, ProblemRow, read_records
from wire.capture.decoder import decode_batches
from wire.capture.hotpath import fixed_link_header
from wire.capture.packets import TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN
from wire.capture.streams import RemotingHalf
from wire.capture.synth import PcapWriter, TcpFlow, ip_packet, link_frame, tcp_packet
from wire.ha import SlaveReport, Transfer, encode_slave_report, encode_transfer

LINKS = [1, 113, 276, 0, 108, 101, 228, 12, 229]


def _udp(src: str, sport: int, dst: str, dport: int) -> bytes:
    # bytes where TCP's data offset and flags would be read as 5 words and ACK
    payload = b"\0\0\0\0\x50\x10" + b"not tcp" * 4
    return ip_packet(src, dst, 17, sport.to_bytes(2, "big") + dport.to_bytes(2, "big")
                     + (8 + len(payload)).to_bytes(2, "big") + b"\0\0" + payload)


def _command(rnd: random.Random, opaque: int) -> tuple[RemotingCommand, RemotingCommand]:
    binary = rnd.random() < 0.3
    body = bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 0, 12, 300, 2500])))
    ext = {"topic": f"T{rnd.randrange(4)}", "queueId": str(rnd.randrange(4))}
    if rnd.random() < 0.1:
        ext["odd"] = "é\x01\"\\\u2028"
    req = RemotingCommand.request(rnd.choice([10, 11, 34, 105, 310]), ext, body or None, opaque=opaque,
                                  oneway=rnd.random() < 0.05,
                                  serialize_type=SerializeType.ROCKETMQ if binary else SerializeType.JSON)
    resp = req.response(rnd.choice([0, 0, 1, 17]), remark=rnd.choice([None, "ok", "line\nbreak"]),
                        ext_fields={"msgId": f"M{opaque}"}, body=body[:64] or None)
    return req, resp


def _send(rnd: random.Random, f: TcpFlow, t: float, d: int, data: bytes) -> None:
    """``data`` from side ``d`` cut at the flow's MSS, sometimes reordered, repeated, lost or cut by
    the snapshot length; the peer acknowledges (or not)."""
    seq0 = f.seq[d]
    segs = [((seq0 + i) & 0xFFFFFFFF, data[i:i + f.mss]) for i in range(0, len(data), f.mss)]
    f.seq[d] = (seq0 + len(data)) & 0xFFFFFFFF
    x = rnd.random()
    if x < 0.06 and len(segs) > 1:
        segs[0], segs[1] = segs[1], segs[0]
    elif x < 0.10:
        segs.append(segs[0])
    elif x < 0.12 and len(segs) > 1:
        segs.pop(rnd.randrange(len(segs)))
    for seq, piece in segs:
        caplen = rnd.randrange(40, 60 + len(piece)) if rnd.random() < 0.02 else None
        f.packet(t, d, TCP_ACK, piece, seq=seq, caplen=caplen)
    if rnd.random() < 0.7:
        f.packet(t, 1 - d, TCP_ACK)


def _odd_packet(rnd: random.Random, w: PcapWriter, f: TcpFlow, t: float, linktype: int) -> None:
    """A packet of a known connection that only ``parse_packet`` reads right: IPv4 options, a
    fragment, a TCP data offset below 5, or (Ethernet) a frame whose EtherType is not IPv4."""
    d = rnd.randrange(2)
    (sa, sp), (da, dp) = f.ends[d], f.ends[1 - d]
    if ":" in sa or f.vlan:
        return
    payload = b"\0\0\0\x10\0\0\0\x0c"
    # an acknowledgement number whose first bytes read as a TCP data offset and flags 4 bytes early
    ack = 0x50100000 | (f.seq[1 - d] & 0xFFFF) if rnd.random() < 0.5 else f.seq[1 - d]
    tcp = tcp_packet(sp, dp, f.seq[d], ack, TCP_ACK, payload)
    ip = bytearray(ip_packet(sa, da, 6, tcp))
    kind = rnd.randrange(4)
    if kind == 0:  # 4 bytes of IPv4 options that repeat the ports: only the header length tells
        ip = bytearray(ip[:20] + bytes(tcp[:4]) + ip[20:])
        ip[0] = 0x46
        ip[2:4] = len(ip).to_bytes(2, "big")
    elif kind == 1:  # more fragments follow
        ip[6] = 0x20
    elif kind == 2:  # data offset 4: an impossible TCP header
        ip[32] = 0x40
    elif linktype == 1:  # ARP's EtherType on bytes that look like IPv4
        frame = bytearray(link_frame(1, bytes(ip)))
        frame[12:14] = b"\x08\x06"
        w.write(t, bytes(frame))
        return
    w.write(t, link_frame(linktype, bytes(ip)))
    if kind == 0:
        f.seq[d] = (f.seq[d] + len(payload)) & 0xFFFFFFFF


def messy_capture(seed: int, linktype: int, exchanges: int = 60) -> bytes:
    rnd = random.Random(seed)
    buf = io.BytesIO()
    w = PcapWriter(buf, linktype)
    v6_only = linktype == 229
    flows: list[TcpFlow] = []
    for i in range(6):
        port = rnd.choice([9876, 10911, 10909, 10912, 5555, 10911])
        v6 = v6_only or rnd.random() < 0.15
        client = (f"fd00::{i + 1:x}" if v6 else f"10.0.0.{i + 1}", 40000 + i)
        server = ("fd00::ff" if v6 else "10.0.1.1", port)
        vlan = (7,) if linktype == 1 and rnd.random() < 0.2 else ()
        flow = TcpFlow(w, client, server, isn=(rnd.randrange(2**32), rnd.randrange(2**32)),
                       mss=rnd.choice([200, 1448, 16384, 65483]), vlan=vlan)
        if rnd.random() < 0.8:
            flow.handshake(1.0 + i / 1000)
        elif not v6 and linktype != 229 and rnd.random() < 0.5:
            # joined midway: the client speaks, then a UDP packet on the server's side of the
            # 4-tuple arrives before the server's first TCP segment
            _send(rnd, flow, 1.0 + i / 1000, 0, encode_command(_command(rnd, 9000 + i)[0]))
            w.write(1.0 + i / 1000, link_frame(linktype, _udp(server[0], server[1], client[0], client[1])))
        flows.append(flow)
    t = 2.0
    for k in range(exchanges):
        f = flows[rnd.randrange(len(flows))]
        t += 0.0001
        r = rnd.random()
        if f.ends[1][1] == 10912:
            _send(rnd, f, t, 0, encode_slave_report(SlaveReport(k * 100)))
            _send(rnd, f, t, 1, encode_transfer(Transfer(k * 100, bytes(rnd.randrange(200)))))
            continue
        if r < 0.03:
            (sa, sp), (da, dp) = f.ends if rnd.random() < 0.5 else f.ends[::-1]
            if not v6_only and ":" not in sa:
                w.write(t, link_frame(linktype, _udp(sa, sp, da, dp)))
            continue
        if r < 0.07:
            _odd_packet(rnd, w, f, t, linktype)
            continue
        if r < 0.08:
            f.close(t)
            if rnd.random() < 0.5:
                f.seq = [rnd.randrange(2**32), rnd.randrange(2**32)]
                f.handshake(t)  # the same 4-tuple again
            continue
        if r < 0.09:
            f.packet(t, rnd.randrange(2), TCP_RST | TCP_ACK)
            continue
        req, resp = _command(rnd, k + 1)
        data = encode_command(req)
        if rnd.random() < 0.3:  # pipelined: several frames in one send
            more, _ = _command(rnd, 1000 + k)
            data += encode_command(more)
        x = rnd.random()
        if x < 0.04:
            data = data[:5] + bytes([data[5] ^ 0x40]) + data[6:]
        elif x < 0.06:
            data += b"junk"
        elif x < 0.08:
            data = data[:len(data) // 2]
        _send(rnd, f, t, 0, data)
        t += 0.00003
        data = encode_command(resp)
        if rnd.random() < 0.3:  # an answer and a request of the server's in one send, in either order
            notify = encode_command(RemotingCommand.request(40, {"consumerGroup": "G"}, opaque=5000 + k,
                                                            oneway=True))
            data = data + notify if rnd.random() < 0.5 else notify + data
        _send(rnd, f, t, 1, data)
        if linktype == 1 and rnd.random() < 0.05:
            # a short segment in a padded Ethernet frame: the IP length, not the record, ends it
            (sa, sp), (da, dp) = f.ends
            if ":" not in sa and not f.vlan:
                ip = ip_packet(sa, da, 6, tcp_packet(sp, dp, f.seq[0], f.seq[1], TCP_ACK, b"\0\0\0\x08"))
                w.write(t, link_frame(1, ip) + b"\0" * 10)
                f.seq[0] = (f.seq[0] + 4) & 0xFFFFFFFF
    for f in flows:
        if rnd.random() < 0.5:
            f.packet(t + 0.01, 0, TCP_FIN | TCP_ACK)
            f.seq[0] = (f.seq[0] + 1) & 0xFFFFFFFF
        if rnd.random() < 0.5:
            f.packet(t + 0.01, 1, TCP_SYN)  # a stray SYN on an open connection
    # a record cut inside its TCP header by the snapshot length, last in the file (and in the read window)
    link = fixed_link_header(linktype)
    flows[0].packet(t + 0.02, 0, TCP_ACK, b"tail", caplen=30 + (link[0] if link else 0))
    return buf.getvalue()


def _row(r: Any) -> tuple[Any, ...]:
    if isinstance(r, CommandRow):
        return ("command", r.ts, r.ts_end, r.conv.index, r.direction, r.offset, r.frame_no, r.size, r.record,
                r.header_length, r.command, r.command.body, None if r.request is None else r.request.number,
                r.number)
    if isinstance(r, HaRow):
        return ("ha", r.ts, r.ts_end, r.conv.index, r.direction, r.offset, r.frame_no, r.size, r.record,
                r.message, r.variant, r.number)
    assert isinstance(r, ProblemRow)
    return ("problem", r.ts, None if r.conv is None else r.conv.index, r.direction, r.offset, r.record,
            r.verdict, r.message, r.length, str(r.error), r.number)


_REMOTING_HALF = ("buf", "pos", "base", "segs", "synced", "skip_from", "index")
_HA_HALF = ("segs", "synced", "skip_from", "start", "variant")


def _half(h: Any) -> tuple[Any, ...]:
    if isinstance(h, RemotingHalf):
        return tuple(bytes(v) if k == "buf" else list(v) if k == "segs" else v
                     for k, v in ((k, getattr(h, k)) for k in _REMOTING_HALF))
    return tuple(list(v) if k == "segs" else v for k, v in ((k, getattr(h, k)) for k in _HA_HALF))


def _state(dec: CaptureDecoder) -> tuple[Any, ...]:
    convs = [tuple(getattr(c, k) for k in c.__slots__ if k != "capture") for c in dec.conversations]
    handlers = [(c.handler.early, c.handler.ended, c.handler.pairing.waiting,
                 [_half(h) for h in c.handler.halves or ()]) for c in dec.reassembler.connections]
    halves = ("base", "nxt", "acked", "ooo_bytes", "fin", "started", "ended", "delivered", "missing",
              "retransmitted", "late", "segments", "last_ts")
    conns = [(c.index, c.client, c.client_port, c.server, c.server_port, c.first_ts, c.last_ts, c.packets, c.syn,
              c.fin, c.rst, c.closed, [tuple(getattr(h, k) for k in halves) for h in c.halves])
             for c in dec.reassembler.connections]
    pending = [[{op: row.number for op, row in p.items()} for p in h[2]] for h in handlers]
    handlers = [(h[0], h[1], p, h[3]) for h, p in zip(handlers, pending, strict=True)]
    return (dec.records, dec.not_tcp, dec.first_ts, dec.last_ts, dec.number, dec.java_version, convs, conns,
            handlers)


def _by_feed(path: Path) -> tuple[list[tuple[Any, ...]], Any, CaptureDecoder]:
    dec = CaptureDecoder(capture=str(path))
    rows: list[Any] = []
    error = None
    try:
        for rec in read_records(path):
            dec.feed(*rec)
            rows += dec.take()
        dec.finish()
        rows += dec.take()
    except CaptureFileError as err:
        # decode_batches' contract: the capture ends at the damage (cut frames become truncated
        # rows), then the error is raised
        error = str(err)
        dec.finish()
        rows += dec.take()
    return [_row(r) for r in rows], error, dec


def _by_hot_loop(path: Path, batch: int) -> tuple[list[tuple[Any, ...]], Any, CaptureDecoder]:
    dec = CaptureDecoder(capture=str(path))
    rows: list[Any] = []
    error = None
    try:
        for b in decode_batches(path, decoder=dec, batch=batch):
            assert b
            rows += b
    except CaptureFileError as err:
        error = str(err)
        rows += dec.take()
    return [_row(r) for r in rows], error, dec


def _agree(path: Path, batch: int = 7) -> int:
    a_rows, a_err, a_dec = _by_feed(path)
    b_rows, b_err, b_dec = _by_hot_loop(path, batch)
    assert b_err == a_err
    assert b_rows == a_rows
    assert _state(b_dec) == _state(a_dec)
    return len(a_rows)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.sampled_from(LINKS), st.integers(1, 300))
def test_hot_loop_agrees_with_feed(tmp_path_factory: Any, seed: int, linktype: int, batch: int) -> None:
    path = tmp_path_factory.mktemp("hot") / "c.pcap"
    path.write_bytes(messy_capture(seed, linktype))
    _agree(path, batch)


@pytest.mark.parametrize("linktype", LINKS)
def test_hot_loop_agrees_on_a_longer_capture(tmp_path: Path, linktype: int) -> None:
    path = tmp_path / "c.pcap"
    path.write_bytes(messy_capture(linktype, linktype, exchanges=600))
    kinds = {r[0] for r in _by_feed(path)[0]}
    assert {"command", "problem"} <= kinds
    assert _agree(path) > 600


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.floats(0.0, 1.0))
def test_damaged_files_fail_the_same_way_after_the_same_rows(tmp_path_factory: Any, seed: int, cut: float) -> None:
    data = messy_capture(seed, 1, exchanges=20)
    path = tmp_path_factory.mktemp("cut") / "c.pcap"
    path.write_bytes(data[:24 + int((len(data) - 24) * cut)])
    _agree(path)


@pytest.mark.parametrize("cut", [0.13, 0.37, 0.5, 0.71, 0.93])
@pytest.mark.parametrize("linktype", [1, 0])
def test_a_longer_capture_cut_short(tmp_path: Path, cut: float, linktype: int) -> None:
    """The decoder's whole state where a damaged file stops it, mid-stream, is the same both ways."""
    data = messy_capture(11 + linktype, linktype, exchanges=300)
    path = tmp_path / "c.pcap"
    path.write_bytes(data[:24 + int((len(data) - 24) * cut)])
    assert _agree(path) > 30


def test_a_record_length_beyond_the_limit_is_reported_by_both(tmp_path: Path) -> None:
    data = bytearray(messy_capture(5, 1, exchanges=10))
    # the third record's captured length
    pos = 24
    for _ in range(2):
        pos += 16 + int.from_bytes(data[pos + 8:pos + 12], "little")
    data[pos + 8:pos + 12] = (1 << 30).to_bytes(4, "little")
    path = tmp_path / "c.pcap"
    path.write_bytes(bytes(data))
    _agree(path)
    with pytest.raises(CaptureFileError, match="record 3"):
        list(decode_batches(path))


def test_the_hot_loop_covers_the_fixed_link_types() -> None:
    assert fixed_link_header(1) == (14, 12)
    assert fixed_link_header(229) is None  # IPv6 link type: every record through feed


def _reference() -> list[str]:
    return sorted(str(p.relative_to(CAPTURES)) for p in CAPTURES.glob("*/*.pcap")) if CAPTURES.is_dir() else []


@pytest.mark.parametrize("name", _reference() or ["java-4.9.8/01-broker-registration.pcap"])
def test_hot_loop_agrees_on_the_reference_captures(name: str) -> None:
    _agree(shared_path("captures", name))


def test_a_decoder_that_feeds_its_own_way_gets_every_record(tmp_path: Path) -> None:
    class Counting(CaptureDecoder):
        def feed(self, record: int, ts: float, linktype: int, data: bytes) -> None:
            self.seen = getattr(self, "seen", 0) + 1
            super().feed(record, ts, linktype, data)

    path = tmp_path / "c.pcap"
    path.write_bytes(messy_capture(9, 1, exchanges=40))
    dec = Counting()
    rows = [_row(r) for b in decode_batches(path, decoder=dec) for r in b]
    assert dec.seen == dec.records == len(list(read_records(path)))
    assert rows == _by_feed(path)[0]
