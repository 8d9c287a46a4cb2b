# Licensed under the Apache License, Version 2.0. See LICENSE.
"""AutoSwitch HA sans-IO state: EpochFileCache's rules, both ends of a connection, and a replay of
the Java 5.0.0 failover capture through both ends."""

from __future__ import annotations

import struct

import pytest

from tests.conftest import shared_path
from tests.pcaputil import streams
from wire.ha import EpochEntry, HAConnectionState, HAProtocol, decode_epoch_file, encode_epoch_file
from wire.ha.autoswitch import (
    AutoSwitchMasterSession,
    AutoSwitchSlaveSession,
    EpochCache,
    TruncateTo,
    consistent_point,
    pack_epoch_transfer_header,
    pack_transfer_ack,
)
from wire.ha.epoch import LONG_MAX
from wire.ha.frames import EpochTransfer, SlaveHandshake, TransferAck, encode_handshake_reply
from wire.ha.session import HAProtocolError


def E(*pairs: tuple[int, int]) -> list[EpochEntry]:
    return [EpochEntry(e, s) for e, s in pairs]


# ------------------------------------------------------------------ EpochFileCacheTest's scenarios

def test_ecache_append_refuses_what_does_not_grow() -> None:
    c = EpochCache()
    assert c.append(1, 100) and c.append(2, 300)
    assert not c.append(2, 400)   # epoch not above the last
    assert not c.append(3, 300)   # start not above the last
    assert not c.append(1, 500)
    assert [(r.epoch, r.start_offset, r.end_offset) for r in c.ranges()] == [(1, 100, 300), (2, 300, LONG_MAX)]
    assert c.last_epoch == 2 and EpochCache().last_epoch == -1


def test_ecache_persist_and_reload_through_the_file_format() -> None:
    c = EpochCache()
    c.append(1, 100)
    c.append(2, 300)
    c.append(3, 500)
    again = EpochCache(decode_epoch_file(encode_epoch_file(c.entries())))
    assert again.ranges() == c.ranges()


def test_ecache_truncate_suffix_and_prefix() -> None:
    c = EpochCache(E((1, 100), (2, 300), (3, 500)))
    v = c.version
    c.truncate_suffix_by_offset(300)
    assert c.entries() == tuple(E((1, 100))) and c.last() is not None and c.last().end_offset == LONG_MAX
    assert c.version > v
    c = EpochCache(E((1, 100), (2, 300), (3, 500)))
    c.truncate_suffix_by_epoch(2)
    assert c.entries() == tuple(E((1, 100)))
    c = EpochCache(E((1, 100), (2, 300), (3, 500)))
    c.truncate_prefix_by_offset(300)   # epoch 1 ended at 300
    assert c.entries() == tuple(E((2, 300), (3, 500)))


def test_ecache_find_by_offset_and_next() -> None:
    c = EpochCache(E((1, 100), (2, 300), (3, 500)))
    assert c.find_by_offset(99) is None
    assert c.find_by_offset(100).epoch == 1 and c.find_by_offset(299).epoch == 1
    assert c.find_by_offset(300).epoch == 2 and c.find_by_offset(10**12).epoch == 3
    assert c.next_after(1).epoch == 2 and c.next_after(3) is None


def test_ecache_consistent_point_cases() -> None:
    # same history, slave behind: its end
    assert consistent_point(E((1, 100), (2, 300)), 400, E((1, 100), (2, 300)), 700) == 400
    # the slave (old master) wrote alone in epoch 2 while the new master started epoch 3 at 350
    assert consistent_point(E((1, 100), (2, 300)), 500, E((1, 100), (2, 300), (3, 350)), 900) == 350
    # epoch 2 started at different offsets on both: back to the end of epoch 1
    assert consistent_point(E((1, 100), (2, 300)), 500, E((1, 100), (2, 320)), 900) == 300
    # nothing in common
    assert consistent_point(E((4, 0)), 500, E((1, 0), (2, 40)), 900) == -1
    # both went on alone after epoch 2: the shorter end of epoch 2 (local 500, remote 600)
    assert consistent_point(E((1, 0), (2, 300), (3, 500)), 700, E((1, 0), (2, 300), (4, 600)), 800) == 500


# ------------------------------------------------------------------ slave end

def test_slave_empty_cache_starts_at_zero_and_acks_by_heartbeat() -> None:
    s = AutoSwitchSlaveSession(address="127.0.0.1:31911", heartbeat_interval_ms=5000)
    hs = s.connected(0, 1000)
    assert hs == bytes.fromhex("00000001 0000 0000 0000000f") + b"127.0.0.1:31911"
    cache = EpochCache()
    reply = encode_handshake_reply(
        __import__("wire.ha.frames", fromlist=["HandshakeReply"]).HandshakeReply(0, 1, tuple(E((1, 0)))),
        HAProtocol.AUTOSWITCH_5_0)
    (t,) = s.receive_data(reply, cache, 0, 1001)
    assert isinstance(t, TruncateTo) and t.fresh and t.offset == 0
    s.truncated(cache, t.offset, t.fresh)
    assert s.state is HAConnectionState.TRANSFER
    assert s.report(0, 1002) is None          # nothing grew: Java waits for the heartbeat
    assert not s.heartbeat_due(5999) and s.heartbeat_due(6001)
    assert s.heartbeat(6001) == pack_transfer_ack(0)


def test_slave_refuses_a_transfer_that_does_not_continue_its_log() -> None:
    s = AutoSwitchSlaveSession(address="a:1")
    s.connected(100, 0)
    s.truncated(EpochCache(E((1, 0))), 100, False)
    frame = pack_epoch_transfer_header(120, 4, 1, 0, 120) + b"abcd"
    (tr,) = s.receive_data(frame, EpochCache(E((1, 0))), 100, 1)
    assert isinstance(tr, EpochTransfer)
    with pytest.raises(HAProtocolError):
        s.accept(tr, EpochCache(E((1, 0))), 100)


@pytest.mark.parametrize("offset", [LONG_MAX, LONG_MAX - 3, -1, -(2**63)])
def test_an_empty_slave_refuses_data_outside_a_logs_offsets(offset: int) -> None:
    """Found with the fuzz target ha.session.autoswitch.slave (benchmarks/fuzz_wire.py), fed
    boundary offsets: an empty slave takes a transfer at any offset, and one ending past 2^63-1
    made its next ack raise struct.error; one at a negative offset went to the store as is."""
    s = AutoSwitchSlaveSession(address="a:1")
    s.connected(0, 0)
    cache = EpochCache()
    s.truncated(cache, 0, True)
    (tr,) = s.receive_data(pack_epoch_transfer_header(offset, 4, 1, 0, 0) + b"abcd", cache, 0, 1)
    with pytest.raises(HAProtocolError, match="does not fit a log's offsets"):
        s.accept(tr, cache, 0)
    # a heartbeat (no data) at -1 is what an empty master sends: taken
    (hb,) = s.receive_data(pack_epoch_transfer_header(-1, 0, 1, 0, 0), cache, 0, 2)
    s.accept(hb, cache, 0)


def test_slave_refuses_frames_in_the_wrong_state() -> None:
    s = AutoSwitchSlaveSession(address="a:1")
    s.connected(0, 0)
    with pytest.raises(HAProtocolError):
        s.receive_data(pack_epoch_transfer_header(0, 0, 1, 0, 0), EpochCache(), 0, 1)


# ------------------------------------------------------------------ master end

def _handshake(addr: str = "127.0.0.1:31911") -> bytes:
    from wire.ha.frames import encode_slave_handshake
    return encode_slave_handshake(SlaveHandshake(address=addr))


def test_master_reads_handshake_and_acks_and_refuses_lies() -> None:
    m = AutoSwitchMasterSession(transfer_batch_size=1000)
    got = m.receive_data(_handshake() + pack_transfer_ack(0), now_ms=1, master_max_offset=500)
    assert isinstance(got[0], SlaveHandshake) and isinstance(got[1], TransferAck)
    assert m.slave == "127.0.0.1:31911" and m.request_offset == 0 and m.state is HAConnectionState.TRANSFER
    cache = EpochCache(E((1, 0)))
    assert m.start(cache, master_min_offset=0, master_max_offset=500) == 0
    header, size = m.next_header(500, cache, 0)
    assert size == 500 and header == pack_epoch_transfer_header(0, 500, 1, 0, 0)
    m.receive_data(pack_transfer_ack(500), now_ms=2, master_max_offset=500)
    with pytest.raises(HAProtocolError):
        m.receive_data(pack_transfer_ack(501), now_ms=3, master_max_offset=900)


def test_master_request_beyond_its_end_is_refused() -> None:
    m = AutoSwitchMasterSession()
    with pytest.raises(HAProtocolError):
        m.receive_data(_handshake() + pack_transfer_ack(10_000), now_ms=1, master_max_offset=500)


def test_master_never_crosses_an_epoch_in_one_frame() -> None:
    m = AutoSwitchMasterSession(transfer_batch_size=10_000)
    m.receive_data(_handshake() + pack_transfer_ack(100), now_ms=1, master_max_offset=1000)
    cache = EpochCache(E((1, 0), (2, 300), (3, 700)))
    assert m.start(cache, master_min_offset=0, master_max_offset=1000) == 100
    cuts = []
    while m.next_transfer < 1000:
        header, size = m.next_header(1000 - m.next_transfer, cache, 0)
        cuts.append((struct.unpack(">iiqiqq", header)[2], size))
    assert cuts == [(100, 200), (300, 400), (700, 300)]


def test_master_empty_store_and_sync_from_last_file() -> None:
    m = AutoSwitchMasterSession()
    m.receive_data(_handshake() + pack_transfer_ack(0), now_ms=1, master_max_offset=0)
    assert m.start(EpochCache(E((1, 0))), master_min_offset=-1, master_max_offset=0) == -1
    from wire.ha.frames import encode_slave_handshake
    m = AutoSwitchMasterSession(mapped_file_size=1000)
    m.receive_data(encode_slave_handshake(SlaveHandshake(True, False, address="x:1")) + pack_transfer_ack(0),
                   now_ms=1, master_max_offset=2500)
    assert m.start(EpochCache(E((1, 0))), master_min_offset=0, master_max_offset=2500) == 2000


# ------------------------------------------------------------------ the Java 5.0.0 failover, replayed

@pytest.fixture(scope="module")
def rejoin() -> tuple[bytes, bytes]:
    """The HA connection of the old master (rejoining as a slave) to the new master in 13-failover."""
    path = shared_path("captures", "java-5.0.0", "13-failover.pcap")
    dirs = {d.key: bytes(d.data) for d in streams(path)}
    to_master = next(v for k, v in dirs.items() if k[3] == 31912)
    to_slave = next(v for k, v in dirs.items() if k[1] == 31912)
    return to_master, to_slave


@pytest.mark.shared
def test_replay_rejoin_through_our_slave(rejoin: tuple[bytes, bytes]) -> None:
    to_master, to_slave = rejoin
    s = AutoSwitchSlaveSession(address="127.0.0.1:30911")
    # the old master's own state: epoch 1 from 0, its log ending at 48,130 (MANIFEST)
    cache = EpochCache(E((1, 0)))
    assert s.connected(48_130, 0) == to_master[:12 + len("127.0.0.1:30911")]
    end = 48_130
    confirm = -1
    acks = []
    (item,) = s.receive_data(to_slave, cache, end, 1)
    assert isinstance(item, TruncateTo)
    assert item.offset == 48_130 and not item.fresh    # nothing to cut, as Java found
    s.truncated(cache, item.offset, item.fresh)
    acks.append(s.heartbeat(2))
    for item in s.receive_data(b"", cache, end, 2):
        assert isinstance(item, EpochTransfer)
        s.accept(item, cache, end)
        end += len(item.data)
        confirm = s.appended(item, end)
        ack = s.report(end, 3)
        if ack is not None:
            acks.append(ack)
    assert end == 127_690 and confirm <= end
    assert cache.entries() == tuple(E((1, 0), (2, 48_130)))
    captured = [struct.unpack(">iq", to_master[i:i + 12])[1] for i in range(27, len(to_master), 12)]
    ours = [struct.unpack(">iq", a)[1] for a in acks]
    assert ours[0] == captured[0] == 48_130 and ours[-1] == captured[-1] == 127_690
    assert set(captured) <= set(ours) | {48_130}


@pytest.mark.shared
def test_replay_rejoin_through_our_master(rejoin: tuple[bytes, bytes]) -> None:
    to_master, to_slave = rejoin
    from wire.ha.stream import AutoSwitchMasterStream
    dec = AutoSwitchMasterStream(HAProtocol.AUTOSWITCH_5_0)
    dec.feed(to_slave)
    frames = list(dec)
    cache = EpochCache(E((1, 0), (2, 48_130)))
    m = AutoSwitchMasterSession(transfer_batch_size=32 * 1024)
    m.receive_data(to_master[:27], now_ms=1, master_max_offset=69_550)
    assert m.slave == "127.0.0.1:30911"
    # the reply, byte for byte
    assert m.handshake_reply(cache, 69_550) == to_slave[:36 + 24]
    m.receive_data(to_master[27:39], now_ms=2, master_max_offset=69_550)
    assert m.start(cache, master_min_offset=0, master_max_offset=69_550) == 48_130
    sent = 0
    for f in frames[1:]:
        msg = f.message
        assert isinstance(msg, EpochTransfer)
        h = msg.header
        if not msg.data:
            assert m.heartbeat(cache, h.confirm_offset) == to_slave[f.offset:f.offset + 36]
            continue
        header, size = m.next_header(len(msg.data), cache, h.confirm_offset)
        assert (header, size) == (to_slave[f.offset:f.offset + 36], len(msg.data))
        sent += size
    assert sent == 79_560
