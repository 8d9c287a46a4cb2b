# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The scapy layers: TCPSession users see the same commands and HA frames as the capture pipeline;
frames build and dissect through wire; tcp_reassemble waits for 8 bytes, then the whole frame."""

from __future__ import annotations

import collections
import re
from pathlib import Path
from typing import Any

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw
from scapy.sendrecv import sniff
from scapy.sessions import TCPSession

from tests.conftest import ROOT, shared_path
from wire import RemotingCommand, encode_command
from wire.capture import CommandRow, HaRow, decode_capture
from wire.capture.scapy_layer import HA_PORTS, REMOTING_PORTS, RocketMQ, RocketMQHAReport, RocketMQHATransfer


def _layers(pkts: Any, cls: type[Packet]) -> list[Packet]:
    out = []
    for p in pkts:
        layer = p.getlayer(cls)
        while isinstance(layer, cls):
            out.append(layer)
            layer = layer.payload
    return out


@pytest.mark.parametrize("name", ["02-topicRoute.pcap", "05-cpp-produce.pcap", "04-rocketmq-clusterList.pcap"])
def test_tcp_session_sees_the_pipeline_commands(name: str) -> None:
    path = shared_path("captures", "java-4.9.8", name)
    pkts = sniff(offline=str(path), session=TCPSession)
    theirs = collections.Counter(repr(layer.decoded) for layer in _layers(pkts, RocketMQ))
    ours = collections.Counter(repr(r.command) for r in decode_capture(path) if isinstance(r, CommandRow)
                               and r.conv.server_port in REMOTING_PORTS)
    assert theirs == ours and sum(ours.values()) > 10


def test_tcp_session_sees_the_ha_stream() -> None:
    path = shared_path("captures", "java-4.9.8", "09-sync-master-slave-up.pcap")
    pkts = sniff(offline=str(path), session=TCPSession)
    theirs = [layer.message for layer in _layers(pkts, RocketMQHATransfer)] + \
        [layer.message for layer in _layers(pkts, RocketMQHAReport)]
    ours = [r.message for r in decode_capture(path) if isinstance(r, HaRow) and r.conv.server_port in HA_PORTS]
    assert sorted(map(repr, theirs)) == sorted(map(repr, ours)) and len(ours) == 12


@pytest.mark.parametrize("binary", [False, True])
def test_build_and_dissect_through_wire(binary: bool) -> None:
    from wire import SerializeType

    cmd = RemotingCommand.request(310, {"b": "T", "a": "G"}, b"hello", opaque=9,
                                  serialize_type=SerializeType.ROCKETMQ if binary else SerializeType.JSON)
    frame = RocketMQ.from_command(cmd)
    assert bytes(frame) == encode_command(cmd)
    assert RocketMQ(encode_command(cmd)).decoded == cmd
    built = RocketMQ(serialize_type=int(binary), header=frame.header, body=b"hello")
    assert bytes(built) == encode_command(cmd)
    assert "request SEND_MESSAGE_V2(310) opaque=9" in built.mysummary()
    pkt = Ether(bytes(Ether() / IP() / TCP(sport=40000, dport=10911) / Raw(encode_command(cmd))))
    assert RocketMQ in pkt and pkt[RocketMQ].decoded == cmd


def test_tcp_reassemble_guard_and_continuation() -> None:
    data = encode_command(RemotingCommand.request(105, {"topic": "T"}, opaque=1))
    meta: dict[str, Any] = {}
    assert RocketMQ.tcp_reassemble(data[:7], meta, {}) is None
    assert RocketMQ.tcp_reassemble(data[:20], meta, {}) is None and meta["tcp_min_len"] == len(data)
    whole = RocketMQ.tcp_reassemble(data + data[:3], {}, {})
    assert isinstance(whole, RocketMQ) and whole.decoded.opaque == 1 and bytes(whole.payload) == data[:3]
    assert isinstance(RocketMQ.tcp_reassemble(b"GET / HTTP/1.1\r\n", {}, {}), Raw)
    bad = RocketMQ(b"\x00\x00\x00\x10\x07\x00\x00\x02{}" + b"x" * 10)
    assert "undecodable" in bad.mysummary()


def test_ha_frames_build() -> None:
    t = RocketMQHATransfer(phy_offset=4096, data=b"abc")
    assert bytes(t) == bytes.fromhex("0000000000001000") + b"\x00\x00\x00\x03abc"
    assert t.message.phy_offset == 4096 and t.message.data == b"abc"
    assert bytes(RocketMQHAReport(max_offset=4096)) == bytes.fromhex("0000000000001000")
    assert RocketMQHATransfer.tcp_reassemble(bytes(t)[:11], {}, {}) is None


def test_scapy_is_imported_by_two_modules_only() -> None:
    importers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "wire").rglob("*.py")
                       if re.search(r"^\s*(from|import) scapy", p.read_text(), re.MULTILINE))
    assert importers == ["wire/capture/_scapy_io.py", "wire/capture/scapy_layer.py"]


def test_the_pipeline_does_not_import_the_layer() -> None:
    text = "\n".join(p.read_text() for p in Path(ROOT / "wire" / "capture").glob("*.py")
                     if p.name != "scapy_layer.py")
    assert "scapy_layer" not in re.sub(r'"""[\s\S]*?"""', "", text)
