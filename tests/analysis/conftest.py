# Licensed under the Apache License, Version 2.0. See LICENSE.
"""One real local SparkSession for the tests of this package (``local[2]``, 4 shuffle partitions,
1 GiB, quiet; stopped, its JVM with it, once they are done, so that it holds no memory or CPU
through the rest of the suite), and the analysis of every capture of fixtures/ and ../shared, run
once and shared by the tests that check its tables. Skips with a reason where pyspark or java is missing.

Besides the real captures the job reads two made here: a pcapng copy of a fixture (split by its
block structure) and a capture whose TCP payload is itself a pcap file (record headers that chain
like real ones, in the middle of the byte ranges: the boundary search is fooled, and the
verification must put every split right)."""

from __future__ import annotations

import io
import shutil
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CAPTURES, FIXTURES


def _need_spark() -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (scripts/bootstrap installs it)")
    if shutil.which("java") is None:
        pytest.skip("java is missing (scripts/bootstrap installs a JDK as root)")


@pytest.fixture(scope="package")
def spark() -> Iterator[Any]:
    _need_spark()
    from analysis.session import build_session, default_conf

    session = build_session(default_conf("local[2]", shuffle_partitions=4, app_name="mqctl tests"))
    yield session
    session.stop()
    stop_gateway()


def stop_gateway() -> None:
    """Stop the JVM pyspark launched for this process (the Py4J gateway, which the Spark driver ran
    in): ``SparkSession.stop()`` leaves it running until the process exits, and a test session
    stops every process it starts. It exits at the end of its stdin; killed after 30 s."""
    import subprocess

    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)
    gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None
    if proc is None:
        return
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def all_captures() -> list[Path]:
    """Every real capture the equality test covers: fixtures/ and, where present, ../shared/captures."""
    found = sorted(FIXTURES.rglob("*.pcap"))
    if CAPTURES.is_dir():
        found += sorted(CAPTURES.rglob("*.pcap")) + sorted(CAPTURES.rglob("*.pcapng"))
    return found


def pcapng_copy(path: Path) -> Path:
    """The records of three fixtures written one after the other as pcapng by scapy (about 110 kB,
    so two splits or more)."""
    from scapy.utils import PcapNgWriter, rdpcap

    with PcapNgWriter(str(path)) as w:
        for name in ("mqctl-admin-commands", "peers-cpp-produce-consume", "peers-alions-produce-consume"):
            for pkt in rdpcap(str(FIXTURES / "peers" / f"{name}.pcap")):
                w.write(pkt)
    return path


def fooling_capture(path: Path) -> Path:
    """Remoting traffic whose message bodies are pcap records: a SEND_MESSAGE_V2 stream where each
    body holds the records of a small pcap file (times, lengths and chains that pass every
    candidate check), so byte ranges that start inside a body find a false boundary first."""
    from wire.capture.synth import PcapWriter

    inner = io.BytesIO()
    w = PcapWriter(inner)
    for i in range(40):
        w.write(1_795_000_000.0 + i * 0.001, bytes([i % 251]) * (60 + i))
    body = inner.getvalue()[24:]
    out = io.BytesIO()
    _sends_on_three_flows(PcapWriter(out), 41000, body, 60)
    path.write_bytes(out.getvalue())
    return path


def _sends_on_three_flows(w: Any, port: int, body: bytes, sends: int,
                          before: Callable[[int], None] = lambda n: None) -> None:
    """Three TCP flows from ``port``.. to a broker written to ``w``: each opened, then ``sends``
    SEND_MESSAGE_V2 requests carrying ``body`` and their answers, taken in turns (``before(n)``
    runs before the n-th), then each closed."""
    from wire import RemotingCommand, encode_command
    from wire.capture.synth import TcpFlow

    flows = [TcpFlow(w, ("127.0.0.1", port + i), ("127.0.0.1", 10911), isn=(1000 * i, 7000 * i))
             for i in range(3)]
    t = 1_795_000_000.0
    for f in flows:
        f.handshake(t)
        t += 0.001
    for n in range(sends):
        before(n)
        f = flows[n % 3]
        req = RemotingCommand.request(310, {"a": "G", "b": "T", "e": str(n % 4), "i": ""}, body, opaque=n)
        f.send(t, 0, encode_command(req))
        f.send(t + 0.0005, 1, encode_command(req.response(0, ext_fields={"queueOffset": str(n)})))
        t += 0.002
    for f in flows:
        f.close(t)


class PcapNgBlocks:
    """A little-endian pcapng file written block by block (``TcpFlow`` writes through it as through
    ``PcapWriter``): a section header, interface descriptions added at any point, enhanced packet
    blocks on the current ``interface`` (microsecond times)."""

    def __init__(self, out: Any, linktype: int = 1) -> None:
        self.out = out
        self.linktype = linktype
        self.interfaces = 0
        self.interface = 0
        out.write(struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28))
        self.add_interface()

    def add_interface(self) -> int:
        self.out.write(struct.pack("<IIHHII", 1, 20, self.linktype, 0, 262144, 20))
        self.interfaces += 1
        return self.interfaces - 1

    def write(self, ts: float, frame: bytes, *, caplen: int | None = None) -> None:
        data = frame if caplen is None else frame[:caplen]
        us = round(ts * 1e6)
        pad = -len(data) % 4
        n = 32 + len(data) + pad
        self.out.write(struct.pack("<IIIIIII", 6, n, self.interface, us >> 32, us & 0xFFFFFFFF, len(data),
                                   len(frame)) + data + b"\0" * pad + struct.pack("<I", n))


def fooling_pcapng(path: Path) -> Path:
    """A pcapng file built to fool a naive block search: SEND_MESSAGE_V2 bodies holding pcapng
    blocks (enhanced packet blocks that chain like real ones, at every alignment so that some sit
    on a multiple of four in the file), and a second interface described half-way, whose packets
    the later ranges' blocks use (the interface count a range starts with is not its own)."""
    inner = io.BytesIO()
    iw = PcapNgBlocks(inner)
    for i in range(24):
        iw.write(1_795_000_000.0 + i * 0.001, bytes([i % 251]) * (60 + i))
    blocks = inner.getvalue()[28 + 20:]  # the packet blocks, without the section header and interface
    body = b"".join(b"\x00" * k + blocks for k in range(4))
    out = io.BytesIO()
    w = PcapNgBlocks(out)

    def second_interface_half_way(n: int) -> None:
        if n == 20:
            w.interface = w.add_interface()

    _sends_on_three_flows(w, 42000, body, 40, second_interface_half_way)
    path.write_bytes(out.getvalue())
    return path


#: small byte ranges, so that every capture bigger than this is read as several splits
SPLIT_BYTES = 64 * 1024


@pytest.fixture(scope="package")
def made_captures(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    d = tmp_path_factory.mktemp("made")
    return [pcapng_copy(d / "made-peers.pcapng"), fooling_capture(d / "made-fooling.pcap")]


@pytest.fixture(scope="package")
def analysed(spark: Any, tmp_path_factory: pytest.TempPathFactory,
             made_captures: list[Path]) -> tuple[Path, Any, list[Path]]:
    """(output directory, job result, captures) of one job over every capture."""
    from analysis.job import run_job

    captures = all_captures() + made_captures
    out = tmp_path_factory.mktemp("analysis") / "out"
    result = run_job(spark, [str(p) for p in captures], out, split_bytes=SPLIT_BYTES, partitions=4)
    return out, result, captures
