# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Link, IP and TCP headers, parsed with :mod:`struct` (no dissection library).

:func:`parse_packet` turns one captured record into a :data:`Segment` tuple, or ``None`` when
the packet is not TCP over IP. Link types: Ethernet (any number of 802.1Q/802.1ad VLAN tags),
Linux cooked capture v1 (SLL) and v2 (SLL2), BSD NULL and OpenBSD LOOP, and raw IP (LINKTYPE_RAW,
its historical numbers 12 and 14, IPV4 and IPV6). IPv4 options and IPv6 extension headers are
skipped by their declared lengths. Bytes that the capture did not keep (a record cut by the
snapshot length) are reported as ``missing``, never invented: the IP length says how long the
TCP payload really was.

A packet whose headers are themselves damaged raises :class:`PacketError` (a
:class:`wire.DecodeError`) with the offset inside the record; the capture decoder turns it into
a problem row and carries on.
"""

from __future__ import annotations

import socket
import struct

from ..errors import DecodeError

__all__ = [
    "LINKTYPE_ETHERNET",
    "LINKTYPE_IPV4",
    "LINKTYPE_IPV6",
    "LINKTYPE_LINUX_SLL",
    "LINKTYPE_LINUX_SLL2",
    "LINKTYPE_LOOP",
    "LINKTYPE_NULL",
    "LINKTYPE_RAW",
    "PacketError",
    "Segment",
    "TCP_ACK",
    "TCP_FIN",
    "TCP_RST",
    "TCP_SYN",
    "address_text",
    "parse_packet",
]

LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LOOP = 108
LINKTYPE_LINUX_SLL = 113
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
LINKTYPE_LINUX_SLL2 = 276
# DLT_RAW's numbers before LINKTYPE_RAW existed (12 on most systems, 14 on OpenBSD)
_RAW_ALIASES = (12, 14)

TCP_FIN = 0x01
TCP_SYN = 0x02
TCP_RST = 0x04
TCP_ACK = 0x10

#: (src, sport, dst, dport, seq, ack, flags, payload, missing): addresses as packed bytes
#: (4 or 16; :func:`address_text` makes text), ``payload`` the captured TCP payload and
#: ``missing`` how many payload bytes follow it on the wire but were not captured.
Segment = tuple[bytes, int, bytes, int, int, int, int, bytes, int]

_ETH_VLAN = frozenset((0x8100, 0x88A8, 0x9100))
_IPV6_EXT = frozenset((0, 43, 60, 135, 139, 140, 253, 254))
_IPV4_HEAD = struct.Struct(">BxHHHBB")  # version/ihl, total length, id, flags/fragment, ttl, proto
_TCP_HEAD = struct.Struct(">HHIIBB")  # ports, seq, ack, data offset, flags
_U16 = struct.Struct(">H")


class PacketError(DecodeError):
    """A packet's link, IP or TCP header does not parse; ``offset`` is inside the record."""


_text_cache: dict[bytes, str] = {}


def address_text(addr: bytes) -> str:
    """``b"\\x7f\\0\\0\\1"`` → ``"127.0.0.1"``; 16 bytes give IPv6 text."""
    text = _text_cache.get(addr)
    if text is None:
        text = socket.inet_ntop(socket.AF_INET if len(addr) == 4 else socket.AF_INET6, addr)
        if len(_text_cache) < 65536:
            _text_cache[addr] = text
    return text


def _link(linktype: int, data: bytes) -> tuple[int, int]:
    """(ethertype or 4/6 for 'IP version from the first nibble', offset of the network header)."""
    if linktype == LINKTYPE_ETHERNET:
        if len(data) < 14:
            raise PacketError(f"Ethernet header needs 14 bytes, record has {len(data)}", offset=len(data),
                              field="eth", expected=14, found=len(data))
        etype = (data[12] << 8) | data[13]
        off = 14
        while etype in _ETH_VLAN:
            if len(data) < off + 4:
                raise PacketError("VLAN tag cut short", offset=off, field="vlan", expected=4,
                                  found=len(data) - off)
            etype = (data[off + 2] << 8) | data[off + 3]
            off += 4
        return etype, off
    if linktype == LINKTYPE_LINUX_SLL:
        if len(data) < 16:
            raise PacketError(f"SLL header needs 16 bytes, record has {len(data)}", offset=len(data),
                              field="sll", expected=16, found=len(data))
        return (data[14] << 8) | data[15], 16
    if linktype == LINKTYPE_LINUX_SLL2:
        if len(data) < 20:
            raise PacketError(f"SLL2 header needs 20 bytes, record has {len(data)}", offset=len(data),
                              field="sll2", expected=20, found=len(data))
        return (data[0] << 8) | data[1], 20
    if linktype in (LINKTYPE_NULL, LINKTYPE_LOOP):
        # The address family is in the capturing host's byte order (NULL) or big-endian (LOOP),
        # and AF_INET6 differs between systems: the IP version nibble is the reliable signal.
        return 0, 4
    if linktype in (LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6) or linktype in _RAW_ALIASES:
        return 0, 0
    raise PacketError(f"link type {linktype} is not supported", offset=0, field="linktype",
                      expected="Ethernet, SLL, SLL2, NULL, LOOP or raw IP", found=linktype)


def parse_packet(linktype: int, data: bytes) -> Segment | None:
    """The TCP segment in one captured record, or ``None`` for anything that is not TCP over IP."""
    etype, off = _link(linktype, data)
    if etype == 0:
        if len(data) <= off:
            return None
        version = data[off] >> 4
        etype = 0x0800 if version == 4 else 0x86DD if version == 6 else -1
    if etype == 0x0800:
        if len(data) < off + 20:
            raise PacketError("IPv4 header cut short", offset=off, field="ip", expected=20,
                              found=len(data) - off)
        vihl, total, _ident, frag, _ttl, proto = _IPV4_HEAD.unpack_from(data, off)
        if vihl >> 4 != 4:
            raise PacketError(f"IP version {vihl >> 4} where 4 was announced", offset=off, field="ip.version",
                              expected=4, found=vihl >> 4)
        if proto != 6:
            return None
        ihl = (vihl & 15) * 4
        if ihl < 20:
            raise PacketError(f"IPv4 header length {ihl} is below 20", offset=off, field="ip.hdr_len",
                              expected=">= 20", found=ihl)
        if frag & 0x3FFF:
            raise PacketError("IPv4 fragment: TCP over fragmented IP is not reassembled", offset=off + 6,
                              field="ip.frag", expected="unfragmented", found=hex(frag))
        src = data[off + 12:off + 16]
        dst = data[off + 16:off + 20]
        # A zero total length is what TCP segmentation offload leaves: trust the record then.
        end = off + total if total else len(data)
        if total and total < ihl:
            raise PacketError(f"IPv4 total length {total} below its header length {ihl}", offset=off + 2,
                              field="ip.len", expected=f">= {ihl}", found=total)
        tcp = off + ihl
    elif etype == 0x86DD:
        if len(data) < off + 40:
            raise PacketError("IPv6 header cut short", offset=off, field="ipv6", expected=40,
                              found=len(data) - off)
        plen = (data[off + 4] << 8) | data[off + 5]
        nxt = data[off + 6]
        src = data[off + 8:off + 24]
        dst = data[off + 24:off + 40]
        # a zero payload length is a jumbogram or an offloaded segment: trust the record then
        end = off + 40 + plen if plen else len(data)
        tcp = off + 40
        while nxt != 6:
            if nxt == 44:  # fragment header: fixed 8 bytes
                raise PacketError("IPv6 fragment: TCP over fragmented IP is not reassembled", offset=tcp,
                                  field="ipv6.fragment", expected="unfragmented", found="fragment header")
            if nxt == 51:  # AH counts its length in 4-byte words, minus 2
                if len(data) < tcp + 2:
                    raise PacketError("IPv6 AH header cut short", offset=tcp, field="ipv6.ah")
                nxt, hlen = data[tcp], (data[tcp + 1] + 2) * 4
            elif nxt in _IPV6_EXT:
                if len(data) < tcp + 2:
                    raise PacketError("IPv6 extension header cut short", offset=tcp, field="ipv6.ext")
                nxt, hlen = data[tcp], (data[tcp + 1] + 1) * 8
            else:
                return None  # another transport (or ESP, or no next header)
            tcp += hlen
    else:
        return None
    if len(data) < tcp + 20:
        if end <= len(data):
            raise PacketError("TCP header cut short", offset=tcp, field="tcp", expected=20,
                              found=len(data) - tcp)
        raise PacketError("TCP header not captured (snapshot length too small)", offset=tcp, field="tcp",
                          expected=20, found=len(data) - tcp)
    sport, dport, seq, ack, doff, flags = _TCP_HEAD.unpack_from(data, tcp)
    hlen = (doff >> 4) * 4
    if hlen < 20:
        raise PacketError(f"TCP header length {hlen} is below 20", offset=tcp + 12, field="tcp.hdr_len",
                          expected=">= 20", found=hlen)
    start = tcp + hlen
    if end < start:
        raise PacketError(f"IP length leaves {end - tcp} bytes for a {hlen}-byte TCP header", offset=tcp,
                          field="tcp.hdr_len", expected=hlen, found=end - tcp)
    have = len(data)
    if have >= end:
        # Ethernet pads short frames: the IP length, not the record, says where TCP ends.
        payload = data[start:end] if start < end else b""
        missing = 0
    else:
        payload = data[start:] if start < have else b""
        missing = end - max(start, have)
    return (src, sport, dst, dport, seq, ack, flags, payload, missing)
