# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Synthetic captures: TCP conversations written as classic pcap, with :mod:`struct` only.

Used by the tests (every link type, reordering, loss, wrap) and by the capture benchmark (hundreds
of megabytes in seconds), and handy for crafting a fixture by hand. Packets carry correct IP header
checksums; TCP checksums are left 0, which capture readers (ours, tshark's default) do not check.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterable
from typing import BinaryIO

from .packets import (
    LINKTYPE_ETHERNET,
    LINKTYPE_IPV4,
    LINKTYPE_IPV6,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_LINUX_SLL2,
    LINKTYPE_LOOP,
    LINKTYPE_NULL,
    LINKTYPE_RAW,
    TCP_ACK,
    TCP_FIN,
    TCP_SYN,
)

__all__ = ["PcapWriter", "TcpFlow", "ip_packet", "link_frame", "tcp_packet"]

_PCAP_HEADER = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")
_TCP = struct.Struct(">HHIIBBHHH")
_IPV4 = struct.Struct(">BBHHHBBH4s4s")


def _pack_addr(addr: str) -> bytes:
    return socket.inet_pton(socket.AF_INET6 if ":" in addr else socket.AF_INET, addr)


def _checksum(header: bytes) -> int:
    s: int = sum(struct.unpack(f">{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip_packet(src: str, dst: str, proto: int, payload: bytes, *, ident: int = 0,
              ipv6_ext: bytes = b"", ipv6_ext_proto: int | None = None) -> bytes:
    """An IPv4 or IPv6 packet (by the address form). ``ipv6_ext`` is inserted after the IPv6
    header; ``ipv6_ext_proto`` is its own header number (its first byte must name ``proto``)."""
    s, d = _pack_addr(src), _pack_addr(dst)
    if len(s) == 4:
        head = _IPV4.pack(0x45, 0, 20 + len(payload), ident & 0xFFFF, 0x4000, 64, proto, 0, s, d)
        head = head[:10] + struct.pack(">H", _checksum(head)) + head[12:]
        return head + payload
    nxt = proto if ipv6_ext_proto is None else ipv6_ext_proto
    body = ipv6_ext + payload
    return struct.pack(">IHBB", 6 << 28, len(body), nxt, 64) + s + d + body


def tcp_packet(sport: int, dport: int, seq: int, ack: int, flags: int, payload: bytes = b"",
               window: int = 65535) -> bytes:
    """A TCP segment (20-byte header, no options)."""
    return _TCP.pack(sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, window, 0, 0) + payload


def link_frame(linktype: int, ip: bytes, *, vlan: Iterable[int] = ()) -> bytes:
    """Wrap an IP packet in the link-layer header of ``linktype``."""
    v6 = ip[0] >> 4 == 6
    etype = 0x86DD if v6 else 0x0800
    if linktype == LINKTYPE_ETHERNET:
        head = b"\x00\x00\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x01"
        for tag in vlan:
            head += struct.pack(">HH", 0x8100, tag & 0x0FFF)
        return head + struct.pack(">H", etype) + ip
    if linktype == LINKTYPE_LINUX_SLL:
        return struct.pack(">HHH8sH", 0, 772, 6, b"\0" * 8, etype) + ip
    if linktype == LINKTYPE_LINUX_SLL2:
        return struct.pack(">HHIHBB8s", etype, 0, 1, 772, 0, 6, b"\0" * 8) + ip
    if linktype == LINKTYPE_NULL:
        return struct.pack("<I", 30 if v6 else 2) + ip
    if linktype == LINKTYPE_LOOP:
        return struct.pack(">I", 24 if v6 else 2) + ip
    if linktype in (LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6, 12, 14):
        return ip
    raise ValueError(f"link type {linktype} is not supported by the synthesiser")


class PcapWriter:
    """Writes a little-endian classic pcap (microsecond or nanosecond timestamps)."""

    def __init__(self, out: BinaryIO, linktype: int = LINKTYPE_ETHERNET, *, nano: bool = False,
                 snaplen: int = 262144) -> None:
        self.out = out
        self.linktype = linktype
        self.nano = nano
        self.snaplen = snaplen
        self.records = 0
        out.write(_PCAP_HEADER.pack(0xA1B23C4D if nano else 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype))

    def write(self, ts: float, frame: bytes, *, caplen: int | None = None) -> None:
        """One record; ``caplen`` cuts it as a small snapshot length would."""
        sec = int(ts)
        frac = round((ts - sec) * (1e9 if self.nano else 1e6))
        data = frame if caplen is None else frame[:caplen]
        self.out.write(_RECORD.pack(sec, frac, len(data), len(frame)) + data)
        self.records += 1


class TcpFlow:
    """One TCP connection written packet by packet: handshake, data, acks, close."""

    def __init__(self, writer: PcapWriter, client: tuple[str, int], server: tuple[str, int], *,
                 isn: tuple[int, int] = (1000, 5000), mss: int = 65483, vlan: Iterable[int] = ()) -> None:
        self.w = writer
        self.ends = (client, server)
        self.seq = [isn[0] & 0xFFFFFFFF, isn[1] & 0xFFFFFFFF]
        self.mss = mss
        self.vlan = tuple(vlan)
        self.ident = 0

    def packet(self, ts: float, direction: int, flags: int, payload: bytes = b"", *, seq: int | None = None,
               ack: int | None = None, caplen: int | None = None) -> None:
        """Write one segment from ``direction`` (0 client, 1 server); the sequence number defaults to
        the sender's next and is not advanced (see :meth:`send`)."""
        (sa, sp), (da, dp) = self.ends[direction], self.ends[1 - direction]
        s = self.seq[direction] if seq is None else seq
        a = self.seq[1 - direction] if ack is None else ack
        self.ident += 1
        ip = ip_packet(sa, da, 6, tcp_packet(sp, dp, s, a, flags, payload), ident=self.ident)
        self.w.write(ts, link_frame(self.w.linktype, ip, vlan=self.vlan), caplen=caplen)

    def handshake(self, ts: float) -> None:
        self.packet(ts, 0, TCP_SYN, ack=0)
        self.seq[0] = (self.seq[0] + 1) & 0xFFFFFFFF
        self.packet(ts, 1, TCP_SYN | TCP_ACK)
        self.seq[1] = (self.seq[1] + 1) & 0xFFFFFFFF
        self.packet(ts, 0, TCP_ACK)

    def send(self, ts: float, direction: int, data: bytes, *, ack: bool = True) -> None:
        """``data`` from one side, cut at the MSS, then (``ack``) the peer's acknowledgement."""
        for i in range(0, len(data), self.mss):
            piece = data[i:i + self.mss]
            self.packet(ts, direction, TCP_ACK, piece)
            self.seq[direction] = (self.seq[direction] + len(piece)) & 0xFFFFFFFF
        if ack:
            self.packet(ts, 1 - direction, TCP_ACK)

    def close(self, ts: float) -> None:
        self.packet(ts, 0, TCP_FIN | TCP_ACK)
        self.seq[0] = (self.seq[0] + 1) & 0xFFFFFFFF
        self.packet(ts, 1, TCP_FIN | TCP_ACK)
        self.seq[1] = (self.seq[1] + 1) & 0xFFFFFFFF
        self.packet(ts, 0, TCP_ACK)
