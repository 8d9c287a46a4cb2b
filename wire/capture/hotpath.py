# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The capture decoder's hot loop: classic pcap records walked in place, for the common case.

Theory of operation
-------------------
:meth:`CaptureDecoder.feed <wire.capture.CaptureDecoder.feed>` takes one record at a time through
four layers, each a method call with its own checks: packet parsing, TCP reassembly
(:meth:`TcpReassembler.segment <wire.capture.TcpReassembler.segment>`), the connection's handler
(:class:`~wire.capture.decoder.ConnectionDecoder`) and the direction's frame decoder
(:class:`~wire.capture.streams.RemotingHalf`). Most records of a capture take the same few steps
through them: an IPv4 (no options, not fragmented) TCP segment on a fixed-size link header, of an
established connection, carrying nothing (a bare ACK) or the next bytes in order of a remoting
direction that is in sync with nothing pending, and those bytes hold whole frames whose headers
decode. :func:`decode_classic` takes exactly those steps inline, reading the packet, TCP and frame
headers straight from the file's read window, so a record is never copied and a bare ACK costs one
unpack and one lookup. Every other record goes to ``CaptureDecoder.feed`` as it is:

* other link types, IPv6, IPv4 options or fragments, a record cut by the snapshot length, SYN, FIN
  or RST segments, and the first segment of each connection direction (``feed`` creates the
  connection; after it, that direction's segments are known by their 12 address and port bytes);
* a segment that is not the next in order, or arrives while bytes wait in the out-of-order buffer
  (``TcpReassembler._put``);
* a connection whose protocol is not decided yet, or that is not remoting
  (``ConnectionDecoder.data``), and a direction out of sync or with bytes pending from earlier
  segments (``RemotingHalf.data``; its buffer is empty whenever nothing is pending).

In a segment of whole frames, the first frame that is not whole or does not decode (and the rest of
the segment) goes to the frame decoder's careful loop, as ``RemotingHalf.data`` hands it over after
``RemotingHalf._whole_frames``. Each inline step names the method it stands for and leaves the
state that method leaves (TCP offsets and counters, frame numbers, the pairing tables, row numbers,
the decoder's counters), so the two paths can take turns on one connection. A differential test
holds both to the same rows and counters over captures with every kind of trouble
(``tests/capture/test_fastpaths.py``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..codes import LanguageCode
from ..framing import PREFIX
from ..remoting import decode_binary_header, decode_json_header
from .packets import TCP_FIN, TCP_RST, TCP_SYN
from .records import MAX_RECORD_LENGTH, ClassicPcap
from .rows import CommandRow, Row
from .streams import RemotingHalf, json_header, set_body

if TYPE_CHECKING:
    from .decoder import CaptureDecoder

__all__ = ["decode_classic", "fixed_link_header"]

# From the IPv4 total length to the TCP flags (IPv4 without options): total length, fragment
# word, protocol, sequence number, acknowledgement number, data offset, flags.
_IP4_TCP = struct.Struct(">2xH2xHxB10x4xIIBB")
_MASK = 0xFFFFFFFF
_HALF = 0x80000000
_NOT_PLAIN = TCP_SYN | TCP_FIN | TCP_RST
_JAVA = LanguageCode.JAVA
_PORTS = struct.Struct(">HH")
_new_tuple = tuple.__new__

#: link type → (offset of the IP header, offset of a 2-byte EtherType that must read 0x0800 or -1)
_FIXED_LINKS: dict[int, tuple[int, int]] = {
    1: (14, 12),  # Ethernet without VLAN tags (tagged frames take parse_packet)
    113: (16, 14),  # Linux SLL: protocol type at 14
    276: (20, 0),  # Linux SLL2: protocol type first
    0: (4, -1),  # BSD NULL and OpenBSD LOOP: the IP version nibble decides
    108: (4, -1),
    101: (0, -1),  # raw IP, and its older numbers
    12: (0, -1),
    14: (0, -1),
    228: (0, -1),  # LINKTYPE_IPV4
}


def fixed_link_header(linktype: int) -> tuple[int, int] | None:
    """Where the IP header starts for ``linktype`` (and where its EtherType is), when that is fixed."""
    return _FIXED_LINKS.get(linktype)


def decode_classic(dec: CaptureDecoder, source: ClassicPcap, *, batch: int = 256,
                   live: bool = False) -> Iterator[list[Row]]:
    """Feed every record of ``source`` to ``dec`` and yield its rows in lists of about ``batch``
    (the last list, and what ``finish`` produces, are left to the caller). ``live``: the rows so
    far are also yielded before waiting for more bytes (a pipe), so that they go out as the
    frames complete."""
    from .decoder import ConnectionDecoder

    link = _FIXED_LINKS.get(source.linktype)
    if link is None:
        for rec in source.records():
            dec.feed(*rec)
            if len(dec.rows) >= batch or (live and dec.rows):
                yield dec.take()
        return
    ip_off, et_off = link
    min_len = ip_off + 40
    linktype = source.linktype
    scale = source.scale
    record_header = source.record_header.unpack_from
    ip_tcp = _IP4_TCP.unpack_from
    prefix = PREFIX.unpack_from
    feed = dec.feed
    reasm = dec.reassembler
    table = reasm._table
    acked = reasm._acked
    put = reasm._put
    #: 12 raw bytes (source and destination address, source and destination port) → what the
    #: hot path touches for that connection direction
    known: dict[bytes, tuple[Any, ...]] = {}
    rows = dec.rows
    buf = source.buf
    n = len(buf)
    pos = 0
    number = 0
    fast = 0  # records taken inline since the decoder's counters were last brought up to date
    ts = 0.0
    flush = False  # live: hand the rows on before the next read
    try:
        while True:
            if len(rows) >= batch or flush:
                flush = False
                dec.records += fast
                dec.last_ts = ts
                fast = 0
                dec.rows = []
                yield rows
                rows = dec.rows
            # ------------------------------------------------ the record (ClassicPcap.records)
            if n - pos >= 16:
                sec, frac, incl, _orig = record_header(buf, pos)
                if incl > MAX_RECORD_LENGTH:
                    raise source.too_long(pos, number + 1, incl)
                p = pos + 16
                e = p + incl
            else:
                e = n + 1
            if e > n:
                if live and rows:
                    flush = True
                    continue
                if not source.refill(pos, number + 1):
                    return
                buf = source.buf
                pos = 0
                n = len(buf)
                continue
            pos = e
            number += 1
            ts = sec + frac * scale
            # ------------------------------------------------ link, IPv4, TCP (CaptureDecoder.feed)
            ip = p + ip_off
            if incl < min_len or buf[ip] != 0x45 or (et_off >= 0 and (buf[p + et_off] != 8
                                                                      or buf[p + et_off + 1])):
                feed(number, ts, linktype, buf[p:e])
                continue
            total, frag, proto, seq, ack, doff, flags = ip_tcp(buf, ip)
            hl = (doff >> 4) * 4
            plen = total - 20 - hl
            key = buf[ip + 12:ip + 24]
            entry = known.get(key)
            if (entry is None or proto != 6 or frag & 0x3FFF or flags & _NOT_PLAIN or hl < 20 or plen < 0
                    or ip_off + total > incl or entry[0].closed):
                feed(number, ts, linktype, buf[p:e])
                if entry is None or entry[0].closed:
                    known.pop(key, None)
                    _learn(known, key, table, ConnectionDecoder)
                continue
            fast += 1
            # ------------------------------------------------ TcpReassembler.segment, hot path
            conn, d, h, r, handler = entry
            conn.last_ts = ts
            conn.packets += 1
            if flags & 0x10:
                r.ack_raw = ack
                if r.ooo:
                    acked(conn, 1 - d, r)
            if not plen:
                continue
            nxt = h.nxt
            off = nxt + ((seq - h.base - nxt + _HALF) & _MASK) - _HALF
            h.segments += 1
            h.last_ts = ts
            q = ip + 20 + hl
            fend = q + plen
            if off != nxt or h.ooo:
                put(conn, d, h, off, buf[q:fend], 0, ts, number)
                continue
            h.nxt = nxt + plen
            h.delivered += plen
            # ------------------------------------------------ ConnectionDecoder.data
            halves = handler.halves
            half = halves[d] if halves is not None else None
            if type(half) is not RemotingHalf or not half.synced or half.buf:
                handler.data(d, off, buf[q:fend], ts, number)
                continue
            conv = handler.conv
            conv.bytes[d] += plen
            conv.last_ts = ts
            # ------------------------------------------------ RemotingHalf.data and _whole_frames
            segs = half.segs
            segs.clear()
            segs.append((off, ts, number))
            limit = half.max_total_length
            fp = q
            while fend - fp >= 8:
                tot, word = prefix(buf, fp)
                hlen = word & 0xFFFFFF
                kind = word >> 24
                end = fp + 4 + tot
                # copies wire.framing.prefix_ok (test_prefix_copies_in_the_capture_loops_agree)
                if not (4 <= tot <= limit and hlen <= tot - 4 and kind <= 1) or end > fend:
                    break
                hs = fp + 8
                he = hs + hlen
                header = buf[hs:he]
                if kind == 0:
                    cmd = json_header(header)
                    if cmd is None:
                        try:
                            cmd = decode_json_header(header)
                        except Exception:  # the careful loop decodes it again and reports it
                            break
                else:
                    try:
                        cmd = decode_binary_header(header)
                    except Exception:
                        break
                if end > he:
                    set_body(cmd, buf[he:end])
                index = half.index
                half.index = index + 1
                conv.frames[d] += 1
                # ConnectionDecoder.command, with wire.pairing.Pairing.response/request written out
                # on its per-direction dicts (test_hot_loop_agrees_with_feed holds them together)
                dec.number = rn = dec.number + 1
                flag = cmd.flag
                waiting = handler.pairing.waiting
                if flag & 1:
                    row = _new_tuple(CommandRow, (ts, ts, conv, d, off + fp - q, index, 4 + tot, number, hlen,
                                                  cmd, waiting[1 - d].pop(cmd.opaque, None), rn))
                else:
                    row = _new_tuple(CommandRow, (ts, ts, conv, d, off + fp - q, index, 4 + tot, number, hlen,
                                                  cmd, None, rn))
                    if not flag & 2:
                        waiting[d][cmd.opaque] = row
                if cmd.version > dec.java_version and cmd.language is _JAVA:
                    dec.java_version = cmd.version
                rows.append(row)
                fp = end
            if fp == fend:
                half.base = off + plen
            else:
                half.buf = buf[fp:fend]  # type: ignore[assignment]  # read-only until _keep copies it
                half.pos = 0
                half.base = off + fp - q
                half._run()
                half._keep()
    finally:
        if fast:
            dec.records += fast
            dec.last_ts = ts


def _learn(known: dict[bytes, tuple[Any, ...]], key: bytes, table: dict[tuple[bytes, int, bytes, int], Any],
           handler_type: type) -> None:
    """Remember a connection direction once ``feed`` has opened it and seen it carry a segment; forget
    closed ones when they outnumber the open ones (the reassembler's table holds two keys per open
    connection), so the cache stays as small as that table."""
    if len(known) > 2 * len(table) + 64:
        for stale in [k for k, v in known.items() if v[0].closed]:
            del known[stale]
    sport, dport = _PORTS.unpack_from(key, 8)
    found = table.get((key[:4], sport, key[4:8], dport))
    if found is None:
        return
    conn, d = found
    h = conn.halves[d]
    if conn.closed or not h.started or type(conn.handler) is not handler_type:
        return
    known[key] = (conn, d, h, conn.halves[1 - d], conn.handler)
