# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A small test helper: the reassembled TCP byte streams of a classic pcap file, per direction.

Only for tests of the codecs against ``../shared/captures``. It reads records at full length
(scapy's readers cut records to 65,535 bytes unless told otherwise; the HA captures hold
65,549-byte loopback segments), handles Ethernet, Linux cooked (SLL), NULL/loopback and raw IP
with IPv4 or IPv6, and drops retransmitted bytes. A gap (bytes never captured) is never
zero-filled: the direction is split into contiguous ``chunks`` and the gap listed in ``gaps``;
``data`` is only available for a direction without gaps.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

_PCAP_MAGICS = {
    b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9),
}


@dataclass
class Direction:
    """One direction of one TCP connection: its bytes and where each segment landed."""

    src: str
    sport: int
    dst: str
    dport: int
    #: contiguous pieces as (stream offset, bytes); one piece unless bytes are missing
    chunks: list[tuple[int, bytearray]] = field(default_factory=list)
    #: (stream offset, bytes missing) for each gap
    gaps: list[tuple[int, int]] = field(default_factory=list)
    #: (stream offset, timestamp, length) of each segment that contributed new bytes
    segments: list[tuple[int, float, int]] = field(default_factory=list)
    first_ts: float = 0.0
    syn: bool = False

    @property
    def data(self) -> bytearray:
        if self.gaps:
            raise ValueError(f"{self.key}: {len(self.gaps)} gap(s); use .chunks")
        return self.chunks[0][1] if self.chunks else bytearray()

    @property
    def key(self) -> tuple[str, int, str, int]:
        return (self.src, self.sport, self.dst, self.dport)


def _records(path: Path):
    raw = path.read_bytes()
    endian, scale = _PCAP_MAGICS[raw[:4]]
    linktype = struct.unpack_from(endian + "I", raw, 20)[0]
    pos = 24
    while pos + 16 <= len(raw):
        sec, frac, incl, _orig = struct.unpack_from(endian + "IIII", raw, pos)
        pos += 16
        yield linktype, sec + frac * scale, raw[pos:pos + incl]
        pos += incl


def _ip_payload(linktype: int, pkt: bytes) -> tuple[int, bytes] | None:
    if linktype == 1:  # Ethernet
        etype, off = struct.unpack_from(">H", pkt, 12)[0], 14
        while etype == 0x8100:
            etype, off = struct.unpack_from(">H", pkt, off + 2)[0], off + 4
    elif linktype == 113:  # Linux cooked
        etype, off = struct.unpack_from(">H", pkt, 14)[0], 16
    elif linktype == 0:  # NULL / loopback
        fam = struct.unpack_from("<I", pkt, 0)[0]
        etype, off = (0x0800 if fam == 2 else 0x86DD), 4
    elif linktype in (101, 228, 229, 12):
        etype, off = (0x0800 if pkt[0] >> 4 == 4 else 0x86DD), 0
    else:
        raise ValueError(f"link type {linktype} not handled by the test helper")
    return etype, pkt[off:]


def streams(path: str | Path) -> list[Direction]:
    """Every TCP direction with payload in the file, in order of first appearance."""
    segs: dict[tuple[str, int, str, int], list[tuple[int, float, bytes, bool]]] = {}
    order: list[tuple[str, int, str, int]] = []
    for linktype, ts, pkt in _records(Path(path)):
        etype, ip = _ip_payload(linktype, pkt)
        if etype == 0x0800:
            if ip[9] != 6:
                continue
            ihl = (ip[0] & 15) * 4
            total = struct.unpack_from(">H", ip, 2)[0]
            src, dst = ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20]))
            tcp = ip[ihl:total]
        elif etype == 0x86DD:
            if ip[6] != 6:
                continue
            plen = struct.unpack_from(">H", ip, 4)[0]
            import ipaddress

            src, dst = str(ipaddress.IPv6Address(ip[8:24])), str(ipaddress.IPv6Address(ip[24:40]))
            tcp = ip[40:40 + plen]
        else:
            continue
        sport, dport, seq = struct.unpack_from(">HHI", tcp, 0)
        flags = tcp[13]
        payload = tcp[(tcp[12] >> 4) * 4:]
        key = (src, sport, dst, dport)
        if key not in segs:
            segs[key] = []
            order.append(key)
        syn = bool(flags & 0x02)
        if syn:
            seq = (seq + 1) & 0xFFFFFFFF
        segs[key].append((seq, ts, payload, syn))
    out = []
    for key in order:
        items = segs[key]
        d = Direction(*key)
        syn_items = [s for s in items if s[3]]
        base = syn_items[0][0] if syn_items else items[0][0]
        d.syn = bool(syn_items)
        d.first_ts = items[0][1]
        pending = sorted(((s - base) & 0xFFFFFFFF, ts, p) for s, ts, p, _ in items if p)
        nxt = 0
        for rel, ts, p in pending:
            if rel + len(p) <= nxt:
                continue  # retransmission of bytes we have
            if rel > nxt or not d.chunks:
                if rel > nxt:
                    d.gaps.append((nxt, rel - nxt))
                d.chunks.append((rel, bytearray()))
                nxt = rel
            new = p[nxt - rel:]
            d.segments.append((nxt, ts, len(new)))
            d.chunks[-1][1].extend(new)
            nxt += len(new)
        if d.chunks:
            out.append(d)
    return out
