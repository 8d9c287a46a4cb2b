# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Link/IP/TCP parsing: every supported link type, IPv4 options, IPv6 extension headers, VLAN tags,
Ethernet padding, snapshot-length cuts; damaged headers give PacketError, anything else None."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scapy.layers.inet import IP, TCP, UDP, IPOption_NOP
from scapy.layers.inet6 import (
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
)
from scapy.layers.l2 import ARP, CookedLinux, CookedLinuxV2, Dot1AD, Dot1Q, Ether, Loopback
from scapy.packet import Packet, Raw

from wire.capture import PacketError, address_text, parse_packet
from wire.capture.packets import TCP_ACK, TCP_FIN, TCP_SYN
from wire.capture.synth import ip_packet, link_frame, tcp_packet

PAYLOAD = b"\x00\x00\x00\x10\x00\x00\x00\x02{}payload-bytes"


def _tcp(src: str = "10.1.2.3", dst: str = "10.9.8.7") -> Packet:
    ip = IPv6(src=src, dst=dst) if ":" in src else IP(src=src, dst=dst)
    return ip / TCP(sport=40000, dport=9876, seq=123456, ack=654321, flags="PA") / Raw(PAYLOAD)


@pytest.mark.parametrize(("linktype", "wrap"), [
    (1, lambda p: Ether() / p),
    (1, lambda p: Ether() / Dot1Q(vlan=5) / p),
    (1, lambda p: Ether() / Dot1AD(vlan=7) / Dot1Q(vlan=5) / p),
    (113, lambda p: CookedLinux(proto=0x86DD if p.version == 6 else 0x0800) / p),
    (276, lambda p: CookedLinuxV2(proto=0x86DD if p.version == 6 else 0x0800) / p),
    (0, lambda p: Loopback(type=30 if p.version == 6 else 2) / p),
    (101, lambda p: p),
    (12, lambda p: p),
    (228, lambda p: p),
])
@pytest.mark.parametrize("family", ["v4", "v6"])
def test_link_types_built_by_scapy(linktype: int, wrap: object, family: str) -> None:
    if linktype == 228 and family == "v6":
        linktype = 229
    src, dst = ("10.1.2.3", "10.9.8.7") if family == "v4" else ("fd00::1", "fd00::2")
    seg = parse_packet(linktype, bytes(wrap(_tcp(src, dst))))  # type: ignore[operator]
    assert seg is not None
    s, sport, d, dport, seq, ack, flags, payload, missing = seg
    assert (address_text(s), sport, address_text(d), dport) == (src, 40000, dst, 9876)
    assert (seq, ack, flags & 0x3F, payload, missing) == (123456, 654321, 0x18, PAYLOAD, 0)


@pytest.mark.parametrize("linktype", [0, 1, 12, 101, 108, 113, 228, 276])
def test_link_types_of_the_synthesiser(linktype: int) -> None:
    ip = ip_packet("192.0.2.1", "192.0.2.2", 6, tcp_packet(1, 2, 3, 4, TCP_ACK, b"hello"))
    assert parse_packet(linktype, link_frame(linktype, ip))[7] == b"hello"  # type: ignore[index]


def test_ipv4_options_and_tcp_options() -> None:
    pkt = Ether() / IP(options=[IPOption_NOP()] * 8) / TCP(options=[("MSS", 1460), ("NOP", None), ("WScale", 7)]) \
        / Raw(b"data")
    seg = parse_packet(1, bytes(pkt))
    assert seg is not None and seg[7] == b"data"


def test_ipv6_extension_headers_are_skipped() -> None:
    pkt = (Ether() / IPv6(src="::1", dst="::2") / IPv6ExtHdrHopByHop() / IPv6ExtHdrRouting()
           / IPv6ExtHdrDestOpt() / TCP(sport=1, dport=2) / Raw(b"after-ext"))
    seg = parse_packet(1, bytes(pkt))
    assert seg is not None and seg[7] == b"after-ext"


def test_synthesised_ipv6_extension_header() -> None:
    tcp = tcp_packet(5, 6, 7, 8, TCP_ACK, b"xyz")
    hop = bytes([6, 0]) + b"\x01\x04\x00\x00\x00\x00"  # next header TCP, 8 bytes, PadN option
    ip = ip_packet("fd00::1", "fd00::2", 6, tcp, ipv6_ext=hop, ipv6_ext_proto=0)
    seg = parse_packet(229, ip)
    assert seg is not None and seg[7] == b"xyz"


def test_ethernet_padding_is_not_payload() -> None:
    pkt = bytes(Ether() / IP() / TCP(flags="A"))
    padded = pkt + b"\x00" * (60 - len(pkt))
    seg = parse_packet(1, padded)
    assert seg is not None and seg[7] == b"" and seg[8] == 0


def test_snapshot_length_cut_reports_missing_bytes() -> None:
    full = bytes(Ether() / IP() / TCP() / Raw(b"a" * 1000))
    seg = parse_packet(1, full[:54 + 100])
    assert seg is not None and seg[7] == b"a" * 100 and seg[8] == 900


def test_flags() -> None:
    seg = parse_packet(1, bytes(Ether() / IP() / TCP(flags="SA")))
    assert seg is not None and seg[6] & (TCP_SYN | TCP_ACK | TCP_FIN) == TCP_SYN | TCP_ACK


@pytest.mark.parametrize("pkt", [
    Ether() / IP() / UDP() / Raw(b"x"),
    Ether() / ARP(),
    Ether(type=0x88CC) / Raw(b"lldp"),
    Ether() / IPv6() / UDP(),
])
def test_not_tcp_is_none(pkt: Packet) -> None:
    assert parse_packet(1, bytes(pkt)) is None


@pytest.mark.parametrize(("data", "linktype", "field"), [
    (b"\x00" * 10, 1, "eth"),
    (bytes(Ether() / IP())[:20], 1, "ip"),
    (bytes(Ether() / IP(ihl=4) / TCP()), 1, "ip.hdr_len"),
    (bytes(Ether() / IP(flags="MF") / TCP()), 1, "ip.frag"),
    (bytes(Ether() / IP(frag=10) / TCP()), 1, "ip.frag"),
    (bytes(Ether() / IPv6() / IPv6ExtHdrFragment() / TCP()), 1, "ipv6.fragment"),
    (bytes(Ether() / IP() / TCP(dataofs=3)), 1, "tcp.hdr_len"),
    (bytes(IP() / TCP()), 147, "linktype"),
])
def test_damaged_headers(data: bytes, linktype: int, field: str) -> None:
    with pytest.raises(PacketError) as info:
        parse_packet(linktype, data)
    assert info.value.field == field and info.value.offset is not None


def test_ip_version_mismatch() -> None:
    ip = bytearray(bytes(IP() / TCP()))
    ip[0] = 0x65
    with pytest.raises(PacketError, match="IP version"):
        parse_packet(1, bytes(Ether(type=0x0800)) + bytes(ip))


@given(st.sampled_from([0, 1, 12, 101, 108, 113, 228, 229, 276, 999]), st.binary(max_size=120))
def test_arbitrary_bytes_give_a_segment_none_or_packet_error(linktype: int, data: bytes) -> None:
    try:
        seg = parse_packet(linktype, data)
    except PacketError:
        return
    assert seg is None or (len(seg) == 9 and isinstance(seg[7], bytes))


@given(st.binary(min_size=1, max_size=400), st.integers(0, 53))
def test_mutated_tcp_packets_give_a_segment_none_or_packet_error(payload: bytes, pos: int) -> None:
    data = bytearray(bytes(Ether() / IP() / TCP() / Raw(payload)))
    data[pos] ^= 0xFF
    try:
        seg = parse_packet(1, bytes(data))
    except PacketError:
        return
    if seg is not None:
        assert len(seg[7]) + seg[8] <= 65535


def test_address_text() -> None:
    assert address_text(bytes([127, 0, 0, 1])) == "127.0.0.1"
    assert address_text(struct.pack(">QQ", 0, 1)) == "::1"
