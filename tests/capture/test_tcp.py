# Licensed under the Apache License, Version 2.0. See LICENSE.
"""TCP reassembly from synthetic segments: SYN, retransmission, reordering, overlap, 32-bit wrap,
gaps (acknowledged holes, buffer limit, end of capture), FIN/RST, 4-tuple reuse."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wire.capture import TcpConnection, TcpReassembler
from wire.capture.packets import TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN

C, S = b"\x0a\x00\x00\x01", b"\x0a\x00\x00\x02"
CP, SP = 50000, 9876


@dataclass
class Recorder:
    events: list[tuple[object, ...]] = field(default_factory=list)

    def data(self, direction: int, offset: int, data: bytes, ts: float, record: int) -> None:
        self.events.append(("data", direction, offset, bytes(data)))

    def gap(self, direction: int, offset: int, length: int, ts: float, record: int) -> None:
        self.events.append(("gap", direction, offset, length))

    def end(self, direction: int, offset: int, ts: float) -> None:
        self.events.append(("end", direction, offset))

    def stream(self, direction: int) -> bytes:
        out = b""
        for e in self.events:
            if e[0] == "data" and e[1] == direction:
                assert e[2] == len(out), "data must arrive contiguous between gaps"
                out += e[3]  # type: ignore[operator]
            elif e[0] == "gap" and e[1] == direction:
                assert e[2] == len(out)
                out += b"?" * e[3]  # type: ignore[operator]
        return out


class Harness:
    def __init__(self, max_buffered: int = 1 << 20) -> None:
        self.recorders: list[Recorder] = []
        self.r = TcpReassembler(self._open, lambda sport, dport: sport > dport, max_buffered=max_buffered)
        self.n = 0

    def _open(self, conn: TcpConnection) -> Recorder:
        rec = Recorder()
        self.recorders.append(rec)
        return rec

    def seg(self, direction: int, seq: int, payload: bytes = b"", flags: int = TCP_ACK, ack: int = 0,
            missing: int = 0) -> None:
        self.n += 1
        src, sport, dst, dport = (C, CP, S, SP) if direction == 0 else (S, SP, C, CP)
        self.r.segment(float(self.n), self.n, (src, sport, dst, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                                               flags, payload, missing))

    @property
    def rec(self) -> Recorder:
        assert len(self.recorders) == 1
        return self.recorders[0]


def _syn(h: Harness, cisn: int = 1000, sisn: int = 5000) -> None:
    h.seg(0, cisn, flags=TCP_SYN)
    h.seg(1, sisn, flags=TCP_SYN | TCP_ACK, ack=cisn + 1)
    h.seg(0, cisn + 1, ack=sisn + 1)


def test_in_order_after_syn() -> None:
    h = Harness()
    _syn(h)
    h.seg(0, 1001, b"hello ")
    h.seg(0, 1007, b"world")
    h.seg(1, 5001, b"ok", ack=1012)
    h.r.finish()
    assert h.rec.stream(0) == b"hello world" and h.rec.stream(1) == b"ok"
    assert ("end", 0, 11) in h.rec.events and ("end", 1, 2) in h.rec.events
    conn = h.r.connections[0]
    assert (conn.client, conn.client_port, conn.server, conn.server_port) == ("10.0.0.1", CP, "10.0.0.2", SP)
    assert conn.syn


def test_connection_joined_midway() -> None:
    h = Harness()
    h.seg(1, 777, b"from-server")  # server speaks first: the ports still say who is the client
    h.seg(0, 999, b"from-client")
    h.r.finish()
    conn = h.r.connections[0]
    assert (conn.client_port, conn.server_port, conn.syn) == (CP, SP, False)
    assert h.rec.stream(0) == b"from-client" and h.rec.stream(1) == b"from-server"


def test_retransmission_and_first_copy_wins() -> None:
    h = Harness()
    _syn(h)
    h.seg(0, 1001, b"abcdef")
    h.seg(0, 1001, b"abcdef")  # plain retransmission
    h.seg(0, 1004, b"XYZghi")  # overlaps 3 delivered bytes with different content
    h.r.finish()
    assert h.rec.stream(0) == b"abcdefghi"
    assert h.r.connections[0].halves[0].retransmitted == 9


def test_reordering_and_overlap_in_the_buffer() -> None:
    h = Harness()
    _syn(h)
    h.seg(0, 1011, b"klmno")
    h.seg(0, 1006, b"fghijk")  # overlaps the buffered segment by one byte
    h.seg(0, 1011, b"klm")  # a shorter duplicate of a buffered segment
    assert h.rec.stream(0) == b""
    h.seg(0, 1001, b"abcde")
    h.r.finish()
    assert h.rec.stream(0) == b"abcdefghijklmno"
    assert not [e for e in h.rec.events if e[0] == "gap"]


def test_sequence_numbers_wrap_past_2_32() -> None:
    h = Harness()
    isn = 0xFFFFFFF0
    _syn(h, cisn=isn)
    data = bytes(range(200))
    for i in range(0, 200, 50):
        h.seg(0, isn + 1 + i, data[i:i + 50])
    h.r.finish()
    assert h.rec.stream(0) == data


def test_stream_offsets_beyond_4_gib() -> None:
    """Offsets are unwrapped to 64 bits: walk past 2**32 in acknowledged gaps of 1 GiB."""
    h = Harness()
    _syn(h)
    base = 1001
    h.seg(0, base, b"start")
    pos = 5
    for _ in range(5):
        nxt = pos + (1 << 30)
        h.seg(1, 5001, ack=base + nxt)  # the server acknowledges bytes the capture never had
        h.seg(0, base + nxt, b"chunk")
        pos = nxt + 5
    h.r.finish()
    data = [e for e in h.rec.events if e[0] == "data" and e[1] == 0]
    assert [e[2] for e in data] == [0] + [5 + k * ((1 << 30) + 5) + (1 << 30) for k in range(5)]
    assert data[-1][2] > 1 << 32  # type: ignore[operator]


def test_acknowledged_hole_becomes_a_gap_at_once() -> None:
    h = Harness()
    _syn(h)
    h.seg(0, 1001, b"aaaa")
    h.seg(0, 1009, b"cccc")  # 1005..1008 never captured
    assert h.rec.stream(0) == b"aaaa"
    h.seg(1, 5001, b"resp", ack=1013)  # the server had all 12 bytes
    assert h.rec.stream(0) == b"aaaa????cccc"
    assert ("gap", 0, 4, 4) in h.rec.events
    # the gap is reported before the server's answer is delivered
    kinds = [(e[0], e[1]) for e in h.rec.events]
    assert kinds.index(("gap", 0)) < kinds.index(("data", 1))


def test_data_behind_an_acknowledged_hole_is_delivered_at_once() -> None:
    h = Harness()
    _syn(h)
    h.seg(1, 5001, ack=1101)  # acknowledges 100 bytes the capture did not see
    h.seg(0, 1051, b"tail")
    assert h.rec.events[-2:] == [("gap", 0, 0, 50), ("data", 0, 50, b"tail")]


def test_buffer_limit_forces_a_gap() -> None:
    h = Harness(max_buffered=100)
    _syn(h)
    h.seg(0, 1001, b"a" * 10)
    h.seg(0, 1021, b"b" * 60)
    assert h.rec.stream(0) == b"a" * 10
    h.seg(0, 1081, b"c" * 60)  # 120 bytes waiting: over the limit
    assert h.rec.stream(0) == b"a" * 10 + b"?" * 10 + b"b" * 60 + b"c" * 60


def test_end_of_capture_flushes_behind_gaps() -> None:
    h = Harness()
    _syn(h)
    h.seg(0, 1001, b"one")
    h.seg(0, 1010, b"three")
    h.seg(0, 1020, b"five")
    h.r.finish()
    assert h.rec.stream(0) == b"one??????three?????five"
    assert h.rec.events[-1][0] == "end"


def test_fin_after_missing_data() -> None:
    h = Harness()
    _syn(h)
    h.seg(0, 1001, b"abc")
    h.seg(0, 1010, flags=TCP_FIN | TCP_ACK)  # 1004..1009 lost, then FIN at 1010
    h.r.finish()
    assert h.rec.stream(0) == b"abc??????"
    assert ("end", 0, 9) in h.rec.events


def test_fin_on_both_sides_closes_and_a_later_syn_opens_a_new_connection() -> None:
    h = Harness()
    _syn(h)
    h.seg(0, 1001, b"first")
    h.seg(0, 1006, flags=TCP_FIN | TCP_ACK)
    h.seg(1, 5001, flags=TCP_FIN | TCP_ACK, ack=1007)
    assert h.r.connections[0].closed
    h.seg(0, 1007, ack=5002)  # the last ACK of the old connection: ignored
    _syn(h, cisn=90000, sisn=70000)
    h.seg(0, 90001, b"second")
    h.r.finish()
    assert len(h.recorders) == 2
    assert h.recorders[0].stream(0) == b"first" and h.recorders[1].stream(0) == b"second"
    assert [c.index for c in h.r.connections] == [0, 1]


def test_syn_retransmission_is_the_same_connection() -> None:
    h = Harness()
    h.seg(0, 1000, flags=TCP_SYN)
    h.seg(0, 1000, flags=TCP_SYN)
    h.seg(1, 5000, flags=TCP_SYN | TCP_ACK, ack=1001)
    h.seg(0, 1001, b"x", ack=5001)
    h.r.finish()
    assert len(h.r.connections) == 1 and h.rec.stream(0) == b"x"


def test_reset_ends_both_directions() -> None:
    h = Harness()
    _syn(h)
    h.seg(0, 1001, b"req")
    h.seg(0, 1010, b"later")  # buffered behind a hole
    h.seg(1, 5001, flags=TCP_RST | TCP_ACK)
    assert h.r.connections[0].rst and h.r.connections[0].closed
    assert h.rec.stream(0) == b"req??????later"
    assert {e[1] for e in h.rec.events if e[0] == "end"} == {0, 1}


def test_snapshot_cut_becomes_a_gap() -> None:
    h = Harness()
    _syn(h)
    h.seg(0, 1001, b"abcd", missing=6)
    h.seg(0, 1011, b"klm")
    h.r.finish()
    assert h.rec.stream(0) == b"abcd??????klm"


def test_bare_acks_of_unknown_connections_are_ignored() -> None:
    h = Harness()
    h.seg(0, 1, ack=2)
    h.r.finish()
    assert h.r.connections == []


@settings(max_examples=150, deadline=None)
@given(data=st.binary(min_size=1, max_size=3000), cuts=st.lists(st.integers(1, 2999), max_size=25),
       seed=st.integers(0, 2**32 - 1), isn=st.integers(0, 2**32 - 1), dup=st.floats(0, 0.5))
def test_any_segmentation_order_and_duplication_gives_the_stream(data: bytes, cuts: list[int], seed: int,
                                                                 isn: int, dup: float) -> None:
    rnd = random.Random(seed)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    pieces = [(a, data[a:b]) for a, b in itertools.pairwise(bounds)]
    # retransmissions, some repacketised (overlapping the neighbours), all with the same bytes
    extra = []
    for a, p in pieces:
        if rnd.random() < dup:
            lo = max(0, a - rnd.randint(0, 5))
            extra.append((lo, data[lo:a + len(p) + rnd.randint(0, 5)]))
    segs = pieces + extra
    rnd.shuffle(segs)
    h = Harness()
    _syn(h, cisn=isn)
    for a, p in segs:
        h.seg(0, isn + 1 + a, p)
    h.r.finish()
    assert h.rec.stream(0) == data
    assert not [e for e in h.rec.events if e[0] == "gap"]


@settings(max_examples=100, deadline=None)
@given(data=st.binary(min_size=10, max_size=2000), cuts=st.lists(st.integers(1, 1999), min_size=2, max_size=20),
       drop=st.sets(st.integers(0, 20), min_size=1), seed=st.integers(0, 1000))
def test_lost_segments_are_gaps_never_zeros(data: bytes, cuts: list[int], drop: set[int], seed: int) -> None:
    rnd = random.Random(seed)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    pieces = [(a, data[a:b]) for a, b in itertools.pairwise(bounds)]
    kept = [p for i, p in enumerate(pieces) if i not in drop]
    rnd.shuffle(kept)
    h = Harness()
    _syn(h)
    for a, p in kept:
        h.seg(0, 1001 + a, p)
    h.r.finish()
    got = h.rec.stream(0)
    lost = {i for i in drop if i < len(pieces)}
    end = max((a + len(p) for i, (a, p) in enumerate(pieces) if i not in lost), default=0)
    assert len(got) == end
    for i, (a, p) in enumerate(pieces):
        if a >= end:
            break
        assert got[a:a + len(p)] == (b"?" * len(p) if i in lost else p)


@pytest.mark.parametrize("first", [0, 1])
def test_who_is_client_without_a_handshake(first: int) -> None:
    h = Harness()
    h.seg(first, 100, b"x")
    h.r.finish()
    assert h.r.connections[0].server_port == SP
