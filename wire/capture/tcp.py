# Licensed under the Apache License, Version 2.0. See LICENSE.
"""TCP reassembly per direction, by sequence number. Gaps are verdicts; nothing is zero-filled.

Theory of operation
-------------------
Each connection has two halves: 0 carries client → server bytes, 1 server → client. A half
counts stream offsets from 0 at the first byte after the SYN, or, for a connection already open
when the capture began, at the first payload byte seen. Sequence numbers are unwrapped against the
next expected offset (the nearest 64-bit offset with the same low 32 bits), so streams longer than
4 GiB and sequence numbers wrapping past 2**32 just work.

A segment that starts at the next expected offset is delivered at once; its overlap with bytes
already delivered (a retransmission, or a repacketised resend) is cut off first, so the first
copy received wins. A segment further ahead waits in a per-half out-of-order buffer, and is
delivered when the hole before it fills. A hole becomes a **gap** (reported to the handler with
its offset and length, and never filled with zeros) when:

* the other side acknowledges bytes beyond it: the peer received them, the capture did not;
* the out-of-order buffer of the half holds more than ``max_buffered`` bytes;
* the connection ends (FIN, RST or the end of the capture) with data still waiting.

Bytes of a record cut by the snapshot length are a gap of the same kind.

The reassembler is sans-IO: :meth:`TcpReassembler.segment` takes parsed segments in capture
order and calls the connection's handler (``data``, ``gap``, ``end``); :meth:`finish` flushes
what is left at the end of the capture. Closed connections leave the lookup table, so memory
is bounded by the connections open at one time and the buffering limit.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Protocol

from .packets import TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN, Segment, address_text

__all__ = [
    "DEFAULT_MAX_BUFFERED",
    "Half",
    "StreamHandler",
    "TcpConnection",
    "TcpReassembler",
]

#: Out-of-order bytes one half may hold before the hole in front of them is declared a gap.
DEFAULT_MAX_BUFFERED = 4 * 1024 * 1024

_MASK = 0xFFFFFFFF
_HALF = 0x80000000


class StreamHandler(Protocol):
    """What a connection's bytes are handed to, per direction (0 client → server, 1 server → client)."""

    def data(self, direction: int, offset: int, data: bytes, ts: float, record: int) -> None: ...

    def gap(self, direction: int, offset: int, length: int, ts: float, record: int) -> None: ...

    def end(self, direction: int, offset: int, ts: float) -> None: ...


class Half:
    """Reassembly state of one direction of one connection."""

    __slots__ = ("base", "nxt", "acked", "ack_raw", "ooo", "heap", "ooo_bytes", "fin", "started", "ended",
                 "delivered", "missing", "retransmitted", "late", "segments", "last_ts")

    def __init__(self) -> None:
        self.base = 0  # sequence number of stream offset 0
        self.nxt = 0  # next stream offset expected
        self.acked = 0  # highest offset the peer acknowledged
        #: the peer's latest acknowledgement number, not yet folded into ``acked`` (see _fold_ack)
        self.ack_raw: int | None = None
        self.ooo: dict[int, tuple[bytes, int, float, int]] = {}
        self.heap: list[int] = []
        self.ooo_bytes = 0
        self.fin: int | None = None  # stream offset of the FIN
        self.started = False
        self.ended = False
        #: bytes handed to the handler
        self.delivered = 0
        #: bytes reported as gaps
        self.missing = 0
        #: payload bytes received again after they had been delivered
        self.retransmitted = 0
        #: payload bytes from before the first byte seen (connections without a SYN)
        self.late = 0
        #: segments that carried payload
        self.segments = 0
        self.last_ts = 0.0


class TcpConnection:
    """One TCP connection: endpoints, counters, both halves and its handler."""

    __slots__ = ("index", "client", "client_port", "server", "server_port", "halves", "first_ts",
                 "last_ts", "packets", "syn", "fin", "rst", "closed", "handler", "first_record", "keys")

    def __init__(self, index: int, client: bytes, client_port: int, server: bytes, server_port: int,
                 ts: float, record: int) -> None:
        self.index = index
        self.client = address_text(client)
        self.client_port = client_port
        self.server = address_text(server)
        self.server_port = server_port
        self.halves = (Half(), Half())
        self.first_ts = ts
        self.last_ts = ts
        self.first_record = record
        self.packets = 0
        self.syn = False
        self.fin = False
        self.rst = False
        self.closed = False
        self.handler: StreamHandler | None = None
        self.keys: tuple[tuple[bytes, int, bytes, int], ...] = ()

    def endpoints(self, direction: int) -> tuple[str, int, str, int]:
        """(src, sport, dst, dport) of one direction."""
        if direction == 0:
            return self.client, self.client_port, self.server, self.server_port
        return self.server, self.server_port, self.client, self.client_port

    def __repr__(self) -> str:
        return (f"<TcpConnection {self.index} {self.client}:{self.client_port} -> "
                f"{self.server}:{self.server_port}>")


class TcpReassembler:
    """Reassembles every TCP connection of a capture (see the module docstring).

    ``open_connection(conn)`` is called for each new connection and returns its handler.
    ``sender_is_client(sport, dport)`` decides who is the client of a connection whose
    handshake was not captured (with a SYN, the SYN's sender is the client).
    """

    def __init__(self, open_connection: Callable[[TcpConnection], StreamHandler],
                 sender_is_client: Callable[[int, int], bool], *,
                 max_buffered: int = DEFAULT_MAX_BUFFERED) -> None:
        self._open = open_connection
        self._sender_is_client = sender_is_client
        self.max_buffered = max_buffered
        self._table: dict[tuple[bytes, int, bytes, int], tuple[TcpConnection, int]] = {}
        self.connections: list[TcpConnection] = []

    # ------------------------------------------------------------------ input

    def segment(self, ts: float, record: int, seg: Segment) -> None:
        """Take one parsed segment, in capture order."""
        src, sport, dst, dport, seq, ack, flags, payload, missing = seg
        key = (src, sport, dst, dport)
        entry = self._table.get(key)
        if entry is not None and not flags & (TCP_SYN | TCP_FIN | TCP_RST) and not missing:
            # The hot path: an established connection, a bare ACK or the next bytes in order.
            conn, d = entry
            h = conn.halves[d]
            if h.started:
                conn.last_ts = ts
                conn.packets += 1
                if flags & TCP_ACK:
                    r = conn.halves[1 - d]
                    if r.ooo:
                        r.ack_raw = ack
                        self._acked(conn, 1 - d, r)
                    else:
                        # Acknowledgements matter only once bytes wait behind a hole: keep the
                        # number, and unwrap it when it is needed.
                        r.ack_raw = ack
                if not payload:
                    return
                nxt = h.nxt
                off = nxt + ((seq - h.base - nxt + _HALF) & _MASK) - _HALF
                h.segments += 1
                h.last_ts = ts
                if off == nxt and not h.ooo:
                    h.nxt = nxt + len(payload)
                    h.delivered += len(payload)
                    conn.handler.data(d, off, payload, ts, record)  # type: ignore[union-attr]  # set with conn
                else:
                    self._put(conn, d, h, off, payload, 0, ts, record)
                return
        if entry is None:
            if not (payload or missing or flags & (TCP_SYN | TCP_FIN)):
                return  # a bare ACK of a connection we never saw carry anything
            entry = self._new(key, flags, ts, record)
        elif flags & TCP_SYN and not flags & TCP_ACK:
            conn, d = entry
            h = conn.halves[d]
            if conn.closed or (h.started and ((seq + 1) & _MASK) != h.base):
                self._close(conn, ts)  # the 4-tuple is reused by a new connection
                entry = self._new(key, flags, ts, record)
        conn, d = entry
        h = conn.halves[d]
        conn.last_ts = ts
        conn.packets += 1
        if flags & TCP_SYN:
            conn.syn = True
            if not h.started or (h.nxt == 0 and not h.ooo):
                h.base = (seq + 1) & _MASK
                h.started = True
            seq = (seq + 1) & _MASK  # any data in a SYN follows the SYN's own sequence number
        elif not h.started:
            h.base = seq
            h.started = True
        if flags & TCP_ACK:
            r = conn.halves[1 - d]
            r.ack_raw = ack
            if r.ooo:
                self._acked(conn, 1 - d, r)
        n = len(payload) + missing
        off = h.nxt + ((seq - h.base - h.nxt + _HALF) & _MASK) - _HALF
        if n:
            h.segments += 1
            h.last_ts = ts
            self._put(conn, d, h, off, payload, missing, ts, record)
        if flags & TCP_FIN:
            conn.fin = True
            if h.fin is None:
                h.fin = off + n
            if h.nxt >= h.fin and not h.ended:
                self._end(conn, d, h, ts)
        if flags & TCP_RST:
            conn.rst = True
            self._close(conn, ts)

    def finish(self) -> None:
        """The capture ended: flush what is buffered (as gaps) and end every open connection."""
        for conn in self.connections:
            if not conn.closed:
                self._close(conn, conn.last_ts)
        self._table.clear()

    # ------------------------------------------------------------------ internals

    def _new(self, key: tuple[bytes, int, bytes, int], flags: int, ts: float,
             record: int) -> tuple[TcpConnection, int]:
        src, sport, dst, dport = key
        if flags & TCP_SYN:
            client = not flags & TCP_ACK
        else:
            client = self._sender_is_client(sport, dport)
        if client:
            conn = TcpConnection(len(self.connections), src, sport, dst, dport, ts, record)
        else:
            conn = TcpConnection(len(self.connections), dst, dport, src, sport, ts, record)
        conn.syn = bool(flags & TCP_SYN)
        self.connections.append(conn)
        conn.handler = self._open(conn)
        d = 0 if client else 1
        back = (dst, dport, src, sport)
        conn.keys = (key, back)
        self._table[key] = (conn, d)
        self._table[back] = (conn, 1 - d)
        return conn, d

    def _put(self, conn: TcpConnection, d: int, h: Half, off: int, payload: bytes, missing: int,
             ts: float, record: int) -> None:
        if off > h.nxt:
            if h.ack_raw is not None:
                self._fold_ack(h)
            if off <= h.acked:
                # the peer acknowledged bytes up to here: the hole will never be filled
                self._gap(conn, d, h, off, ts, record)
            else:
                old = h.ooo.get(off)
                if old is None:
                    heapq.heappush(h.heap, off)
                elif len(old[0]) + old[1] >= len(payload) + missing:
                    h.retransmitted += len(payload)
                    return
                else:
                    h.ooo_bytes -= len(old[0])
                h.ooo[off] = (payload, missing, ts, record)
                h.ooo_bytes += len(payload)
                if h.ooo_bytes > self.max_buffered:
                    self._force(conn, d, h)
                return
        self._accept(conn, d, h, off, payload, missing, ts, record)
        if h.ooo:
            self._drain(conn, d, h)

    def _accept(self, conn: TcpConnection, d: int, h: Half, off: int, payload: bytes, missing: int,
                ts: float, record: int) -> None:
        """Deliver a segment that starts at or before the next expected offset."""
        nxt = h.nxt
        end = off + len(payload) + missing
        if end <= nxt:
            if off < 0 and h.delivered == 0 and not conn.syn:
                h.late += len(payload)
            else:
                h.retransmitted += len(payload)
            return
        if off < nxt:
            cut = nxt - off
            h.retransmitted += min(cut, len(payload))
            if cut >= len(payload):
                missing -= cut - len(payload)
                payload = b""
            else:
                payload = payload[cut:]
            off = nxt
        handler = conn.handler
        assert handler is not None
        if payload:
            h.delivered += len(payload)
            handler.data(d, off, payload, ts, record)
        if missing:
            h.missing += missing
            handler.gap(d, off + len(payload), missing, ts, record)
        h.nxt = end

    def _drain(self, conn: TcpConnection, d: int, h: Half) -> None:
        heap, ooo = h.heap, h.ooo
        while heap and heap[0] <= h.nxt:
            off = heapq.heappop(heap)
            item = ooo.pop(off, None)
            if item is None:
                continue
            payload, missing, ts, record = item
            h.ooo_bytes -= len(payload)
            self._accept(conn, d, h, off, payload, missing, ts, record)
        if h.fin is not None and h.nxt >= h.fin and not h.ended and not ooo:
            self._end(conn, d, h, h.last_ts)

    def _gap(self, conn: TcpConnection, d: int, h: Half, to: int, ts: float, record: int) -> None:
        handler = conn.handler
        assert handler is not None
        h.missing += to - h.nxt
        handler.gap(d, h.nxt, to - h.nxt, ts, record)
        h.nxt = to

    def _next_buffered(self, h: Half) -> int | None:
        while h.heap and h.heap[0] not in h.ooo:
            heapq.heappop(h.heap)
        return h.heap[0] if h.heap else None

    @staticmethod
    def _fold_ack(h: Half) -> None:
        """Unwrap the latest acknowledgement number against the next expected offset."""
        raw = h.ack_raw
        h.ack_raw = None
        if raw is not None and h.started:
            a = h.nxt + ((raw - h.base - h.nxt + _HALF) & _MASK) - _HALF
            if a > h.acked:
                h.acked = a

    def _acked(self, conn: TcpConnection, d: int, h: Half) -> None:
        self._fold_ack(h)
        while True:
            off = self._next_buffered(h)
            if off is None or off > h.acked:
                return
            if off > h.nxt:
                _payload, _missing, ts, record = h.ooo[off]
                self._gap(conn, d, h, off, ts, record)
            self._drain(conn, d, h)

    def _force(self, conn: TcpConnection, d: int, h: Half) -> None:
        while h.ooo_bytes > self.max_buffered:
            off = self._next_buffered(h)
            if off is None:
                return
            if off > h.nxt:
                _payload, _missing, ts, record = h.ooo[off]
                self._gap(conn, d, h, off, ts, record)
            self._drain(conn, d, h)

    def _end(self, conn: TcpConnection, d: int, h: Half, ts: float) -> None:
        h.ended = True
        handler = conn.handler
        assert handler is not None
        handler.end(d, h.nxt, ts)
        if conn.halves[1 - d].ended:
            self._release(conn)

    def _close(self, conn: TcpConnection, ts: float) -> None:
        """End both halves now: buffered data is delivered behind gaps."""
        for d, h in enumerate(conn.halves):
            if h.ended:
                continue
            while True:
                off = self._next_buffered(h)
                if off is None:
                    break
                if off > h.nxt:
                    _payload, _missing, gts, record = h.ooo[off]
                    self._gap(conn, d, h, off, gts, record)
                self._drain(conn, d, h)
            if h.fin is not None and h.fin > h.nxt:
                self._gap(conn, d, h, h.fin, ts, 0)
            if not h.ended:
                self._end(conn, d, h, ts)
        self._release(conn)

    def _release(self, conn: TcpConnection) -> None:
        if conn.closed:
            return
        conn.closed = True
        for h in conn.halves:
            h.ooo.clear()
            h.heap.clear()
            h.ooo_bytes = 0
        # Leave the lookup table so that memory stays bounded; a later packet of the same
        # 4-tuple without payload is ignored, a SYN opens a new connection.
        for key in conn.keys:
            entry = self._table.get(key)
            if entry is not None and entry[0] is conn:
                del self._table[key]
