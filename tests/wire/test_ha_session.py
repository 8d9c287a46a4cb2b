# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The sans-IO 4.x HA sessions (wire.ha.session): the master's checks of reports, where a transfer
starts and how it is cut, heartbeats and housekeeping; the slave's buffer, offset check and reports;
the struct fast paths against the construct layouts; and the real Java traffic of the 08/09
captures played through both ends."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import shared_path
from tests.pcaputil import streams
from wire import DecodeError
from wire.ha import (
    HADirection,
    HAProtocol,
    SlaveReport,
    Transfer,
    TransferHeader,
    encode_slave_report,
    encode_transfer,
    encode_transfer_header,
    ha_stream_decoder,
)
from wire.ha.session import (
    HAProtocolError,
    V4MasterSession,
    V4SlaveSession,
    pack_report,
    pack_transfer_header,
)

MB = 1 << 20


def master(**kw: int) -> V4MasterSession:
    return V4MasterSession(mapped_file_size=kw.pop("mapped_file_size", 10 * MB), **kw)


# ------------------------------------------------------------------------------------------ master

def test_first_report_is_the_request_and_starts_the_transfer_there() -> None:
    m = master()
    r = m.receive_data(pack_report(5000), now_ms=1, master_max_offset=9000)
    assert r is not None and r.request and r.offset == 5000
    assert (m.request_offset, m.ack_offset, m.started) == (5000, 5000, False)
    assert m.start(9000) == 5000 and m.transfer_start == 5000
    # decided once: a later call keeps it
    assert m.start(20000) == 5000


def test_an_empty_slave_starts_at_the_masters_last_file() -> None:
    m = master(mapped_file_size=1000)
    m.receive_data(pack_report(0), now_ms=0, master_max_offset=3500)
    assert m.start(3500) == 3000
    m2 = master(mapped_file_size=1000)
    m2.receive_data(pack_report(0), now_ms=0, master_max_offset=999)
    assert m2.start(999) == 0


def test_chunks_are_cut_at_the_batch_size_and_move_the_cursor() -> None:
    m = master(transfer_batch_size=100)
    m.receive_data(pack_report(0), now_ms=0, master_max_offset=250)
    m.start(250)
    assert m.next_header(250) == TransferHeader(0, 100)
    assert m.next_header(150) == TransferHeader(100, 100)
    assert m.next_header(50) == TransferHeader(200, 50)
    assert (m.next_transfer, m.bytes_sent) == (250, 250)
    assert m.heartbeat() == TransferHeader(250, 0)


def test_acks_up_to_what_was_sent_count_and_the_highest_stays() -> None:
    m = master(transfer_batch_size=100)
    m.receive_data(pack_report(0), now_ms=0, master_max_offset=300)
    m.start(300)
    m.next_header(300)
    r = m.receive_data(pack_report(100), now_ms=2, master_max_offset=300)
    assert r is not None and not r.request and m.ack_offset == 100
    # several reports in one read: each is checked, the last one is returned
    r = m.receive_data(pack_report(40) + pack_report(100), now_ms=3, master_max_offset=300)
    assert r is not None and r.offset == 100 and m.ack_offset == 100
    assert m.reports == 4 and m.last_read_ms == 3


def test_an_ack_beyond_what_was_sent_is_a_lie() -> None:
    m = master(transfer_batch_size=100)
    m.receive_data(pack_report(0), now_ms=0, master_max_offset=1000)
    m.start(1000)
    m.next_header(1000)  # 100 sent
    with pytest.raises(HAProtocolError, match=r"acknowledges offset 101, but this connection has only sent up to 100") as e:
        m.receive_data(pack_report(101), now_ms=1, master_max_offset=1000)
    assert (e.value.offset, e.value.field, e.value.found) == (8, "max_offset", 101)
    assert m.ack_offset == 0  # the lie counted for nothing


def test_a_lie_hidden_before_a_true_report_in_one_read_is_caught() -> None:
    m = master(transfer_batch_size=100)
    m.receive_data(pack_report(0), now_ms=0, master_max_offset=1000)
    m.start(1000)
    m.next_header(1000)
    with pytest.raises(HAProtocolError):
        m.receive_data(pack_report(900) + pack_report(100), now_ms=1, master_max_offset=1000)


def test_an_ack_before_the_transfer_started_may_only_repeat_the_request() -> None:
    m = master()
    m.receive_data(pack_report(700), now_ms=0, master_max_offset=1000)
    assert m.receive_data(pack_report(700), now_ms=1, master_max_offset=1000) is not None
    with pytest.raises(HAProtocolError):
        m.receive_data(pack_report(701), now_ms=2, master_max_offset=1000)


def test_a_slave_ahead_of_the_master_is_refused() -> None:
    m = master()
    with pytest.raises(HAProtocolError, match="beyond this master's end 1000"):
        m.receive_data(pack_report(1001), now_ms=0, master_max_offset=1000)
    assert not m.requested


def test_negative_reports_are_refused() -> None:
    with pytest.raises(HAProtocolError, match="negative"):
        master().receive_data(pack_report(-1), now_ms=0, master_max_offset=10)


def test_reports_split_anywhere_are_put_together() -> None:
    m = master()
    data = pack_report(1234)
    assert m.receive_data(data[:3], now_ms=0, master_max_offset=5000) is None
    assert m.receive_data(data[3:7], now_ms=0, master_max_offset=5000) is None
    r = m.receive_data(data[7:], now_ms=0, master_max_offset=5000)
    assert r is not None and r.offset == 1234


def test_heartbeat_and_housekeeping_timers() -> None:
    m = master(heartbeat_interval_ms=5000, housekeeping_interval_ms=20000, now_ms=0)
    assert not m.heartbeat_due(5000) and m.heartbeat_due(5001)
    m.wrote(6000)
    assert not m.heartbeat_due(11000) and m.heartbeat_due(11001)
    assert not m.expired(20000) and m.expired(20001)
    m.receive_data(pack_report(0), now_ms=15000, master_max_offset=0)
    assert not m.expired(35000) and m.expired(35001)


def test_below_min_offset() -> None:
    m = master(mapped_file_size=1000)
    m.receive_data(pack_report(1500), now_ms=0, master_max_offset=5000)
    m.start(5000)
    assert m.below_min_offset(2000) and not m.below_min_offset(1000)
    assert not m.below_min_offset(-1)


def test_master_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="transfer_batch_size"):
        V4MasterSession(transfer_batch_size=4 * MB)
    with pytest.raises(ValueError, match="mapped_file_size"):
        V4MasterSession(mapped_file_size=0)
    m = V4MasterSession()
    with pytest.raises(RuntimeError):
        m.start(0)
    with pytest.raises(RuntimeError):
        m.next_header(10)


# ------------------------------------------------------------------------------------------ slave

def feed(s: V4SlaveSession, data: bytes, now: int = 0, step: int | None = None) -> list[tuple[int, bytes]]:
    """Hand ``data`` over as a socket would: at most ``step`` bytes and at most the window at a time."""
    out = []
    step = step or len(data) or 1
    pos = 0
    while pos < len(data):
        window = s.recv_buffer()
        n = min(step, len(window), len(data) - pos)
        window[:n] = data[pos:pos + n]
        pos += n
        out += [(o, bytes(v)) for o, v in s.received(n, now)]
    return out


def test_slave_first_report_on_connect() -> None:
    s = V4SlaveSession(now_ms=0)
    assert s.connected(4096, now_ms=10) == pack_report(4096)
    assert s.reported == 4096 and s.last_write_ms == 10


@pytest.mark.parametrize("step", [1, 5, 12, 13, 100, None])
def test_slave_cuts_transfers_split_anywhere(step: int | None) -> None:
    frames = [Transfer(0, b"a" * 40), Transfer(40, b""), Transfer(40, b"b" * 7)]
    data = b"".join(encode_transfer(f) for f in frames)
    s = V4SlaveSession(buffer_size=64)
    s.connected(0, 0)
    assert feed(s, data, step=step) == [(0, b"a" * 40), (40, b""), (40, b"b" * 7)]
    assert (s.transfers, s.bytes_received) == (3, 47)


def test_slave_refuses_a_body_larger_than_its_buffer() -> None:
    s = V4SlaveSession(buffer_size=64)
    s.connected(0, 0)
    with pytest.raises(DecodeError, match="body size 53 exceeds 52") as e:
        feed(s, pack_transfer_header(0, 53))
    assert e.value.offset == 8
    s2 = V4SlaveSession()
    s2.connected(0, 0)
    with pytest.raises(DecodeError, match="negative body size"):
        feed(s2, pack_transfer_header(0, -1))


def test_slave_offset_check_is_dispatch_read_requests() -> None:
    s = V4SlaveSession()
    s.check(5000, 0)  # an empty slave takes any offset
    s.check(5000, 5000)
    with pytest.raises(HAProtocolError, match="the master sends offset 4000, but this slave's CommitLog ends at 5000"):
        s.check(4000, 5000)


def test_slave_reports_growth_and_heartbeats() -> None:
    s = V4SlaveSession(heartbeat_interval_ms=5000, housekeeping_interval_ms=20000, now_ms=0)
    s.connected(100, now_ms=0)
    assert s.report(100, now_ms=1) is None
    assert s.report(150, now_ms=2) == pack_report(150)
    assert not s.heartbeat_due(5002) and s.heartbeat_due(5003)
    assert s.heartbeat(6000) == pack_report(150) and not s.heartbeat_due(11000)
    assert not s.expired(20000) and s.expired(20001)
    feed(s, pack_transfer_header(150, 0), now=30000)
    assert not s.expired(50000)


def test_a_new_connection_drops_the_old_partial_frame() -> None:
    s = V4SlaveSession(buffer_size=64)
    s.connected(0, 0)
    assert feed(s, encode_transfer(Transfer(0, b"x" * 20))[:15]) == []
    s.connected(0, 1)
    assert feed(s, encode_transfer(Transfer(0, b"y" * 3))) == [(0, b"yyy")]


# ------------------------------------------------------------------------------------------ fast paths

@given(st.integers(-(2**63), 2**63 - 1))
def test_pack_report_matches_the_layout(offset: int) -> None:
    assert pack_report(offset) == encode_slave_report(SlaveReport(offset))


@given(st.integers(-(2**63), 2**63 - 1), st.integers(0, 2**31 - 1))
def test_pack_transfer_header_matches_the_layout(offset: int, size: int) -> None:
    assert pack_transfer_header(offset, size) == encode_transfer_header(TransferHeader(offset, size))


@given(st.lists(st.tuples(st.integers(0, 2**40), st.binary(max_size=50)), max_size=8), st.integers(1, 40))
def test_slave_session_and_stream_decoder_agree(frames: list[tuple[int, bytes]], step: int) -> None:
    data = b"".join(encode_transfer(Transfer(o, d)) for o, d in frames)
    s = V4SlaveSession(buffer_size=128)
    s.connected(0, 0)
    dec = ha_stream_decoder(HAProtocol.V4, HADirection.MASTER_TO_SLAVE)
    dec.feed(data)
    reference = []
    while (f := dec.next_frame()) is not None:
        assert isinstance(f.message, Transfer)
        reference.append((f.message.phy_offset, f.message.data))
    assert feed(s, data, step=step) == reference == frames


# ------------------------------------------------------------------------------------------ real traffic

def _ha_directions(name: str, port: int = 10912):
    ds = streams(shared_path("captures", "java-4.9.8", name))
    return [d for d in ds if d.dport == port], [d for d in ds if d.sport == port]


@pytest.mark.shared
def test_java_catch_up_from_zero_passes_both_sessions() -> None:
    """08-ha-catchup-from-zero: the Java slave's reports are all true for a master that sent
    what the Java master sent, and the Java master's transfers continue the slave's log."""
    (s2m,), (m2s,) = _ha_directions("08-ha-catchup-from-zero.pcap")
    slave = V4SlaveSession()
    slave.connected(0, 0)
    data = bytes(m2s.data)
    end = 0
    transfers = []
    pos = 0
    while pos < len(data):
        window = slave.recv_buffer()
        n = min(len(window), len(data) - pos, 65549)
        window[:n] = data[pos:pos + n]
        pos += n
        for offset, body in slave.received(n, 0):
            slave.check(offset, end)
            end = offset + len(body) if body or end == 0 else end
            transfers.append((offset, len(body)))
    with_data = [t for t in transfers if t[1]]
    assert len(with_data) == 113 and sum(n for _, n in with_data) == 3_641_729 and end == 3_641_729
    # the master side: the Java slave's reports, checked against the Java master's transfers in order
    m = V4MasterSession(mapped_file_size=10 * MB)
    reports = [int.from_bytes(s2m.data[i:i + 8], "big") for i in range(0, len(s2m.data), 8)]
    assert reports[0] == 0
    m.receive_data(pack_report(0), now_ms=0, master_max_offset=3_641_729)
    assert m.start(3_641_729) == 0
    sent = iter(with_data)
    for r in reports[1:]:
        while m.next_transfer < r:
            m.next_header(next(sent)[1])
        m.receive_data(pack_report(r), now_ms=0, master_max_offset=3_641_729)
    assert m.ack_offset == 3_641_729
