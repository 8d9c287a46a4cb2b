# Licensed under the Apache License, Version 2.0. See LICENSE.
"""wire.capture.bpf: the kernel filter of ``mqctl pcap record`` keeps exactly the TCP frames of its ports.

The program is run (by the module's own interpreter of the instructions it writes) over every frame
of real captures and of built frames (IPv6, UDP, IPv4 fragments, IP options, cut frames), and its
verdict compared with scapy's reading of the same frame.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from wire.capture import read_records
from wire.capture.bpf import SNAP, run, tcp_ports


def _scapy_keeps(frame: bytes, ports: set[int]) -> bool:
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether

    pkt = Ether(frame)
    if TCP not in pkt or (IP in pkt and pkt[IP].frag):
        return False
    return not ports or pkt[TCP].sport in ports or pkt[TCP].dport in ports


def _frames(path: Path) -> list[bytes]:
    return [data for _n, _ts, lt, data in read_records(path) if lt == 1]


def _built() -> list[bytes]:
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import ARP, Ether

    e = Ether(src="00:00:00:00:00:01", dst="00:00:00:00:00:02")
    frames = [
        e / IP(src="127.0.0.1", dst="127.0.0.1") / TCP(sport=40000, dport=9876) / b"x",
        e / IP(src="127.0.0.1", dst="127.0.0.1", options=b"\x01" * 8) / TCP(sport=10911, dport=40001),
        e / IP(src="127.0.0.1", dst="127.0.0.1", frag=3) / TCP(sport=40000, dport=9876),  # a later fragment
        e / IP(src="127.0.0.1", dst="127.0.0.1") / UDP(sport=40000, dport=9876),
        e / IPv6(src="::1", dst="::1") / TCP(sport=9876, dport=40002),
        e / IPv6(src="::1", dst="::1") / TCP(sport=40003, dport=40004),
        e / IPv6(src="::1", dst="::1") / UDP(sport=9876, dport=40004),
        e / ARP(),
    ]
    raw = [bytes(f) for f in frames]
    return [*raw, raw[0][:30], raw[0][:14], b""]


@pytest.mark.parametrize("ports", [{9876}, {9876, 10911, 10912}, {40000}, set()])
def test_the_program_keeps_what_scapy_calls_tcp_of_the_ports(ports: set[int]) -> None:
    program = tcp_ports(ports)
    frames = _built()
    for path in (FIXTURES / "peers").glob("*.pcap"):
        frames.extend(_frames(path))
    assert len(frames) > 400
    kept = 0
    for frame in frames:
        want = len(frame) >= 14 and _scapy_keeps(frame, ports)
        got = run(program, frame)
        assert got in (0, SNAP)
        assert (got == SNAP) == want, (ports, frame[:60].hex())
        kept += want
    assert kept > 0


def test_the_program_is_tcpdumps_for_one_port() -> None:
    # tcpdump -dd 'tcp port 9876' compiles the same tests (IPv4 then IPv6 here, the other way round
    # there); the instructions of the IPv4 part, as tcpdump writes them
    program = tcp_ports([9876])
    assert program[:8] == [(0x28, 0, 0, 12), (0x15, 0, 9, 0x800), (0x30, 0, 0, 23), (0x15, 0, 15, 6),
                           (0x28, 0, 0, 20), (0x45, 13, 0, 0x1FFF), (0xB1, 0, 0, 14), (0x48, 0, 0, 14)]
    assert program[-2:] == [(0x06, 0, 0, SNAP), (0x06, 0, 0, 0)]


def test_bad_ports_are_refused() -> None:
    with pytest.raises(ValueError, match="not a port number"):
        tcp_ports([0])
    with pytest.raises(ValueError, match="too many ports"):
        tcp_ports(range(1, 400))
