# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Capture files as records: classic pcap (both byte orders, nanoseconds), pcapng, gzip, stdin,
records of any length, and damaged files reported with file, record number and byte offset."""

from __future__ import annotations

import gzip
import io
import struct
import sys
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import PcapNgWriter, RawPcapReader, RawPcapWriter

from wire import DecodeError, WireError
from wire.capture import CaptureFileError, read_records
from wire.capture.records import MAX_RECORD_LENGTH

SIZES = [0, 1, 60, 1514, 65535, 65549, 70000]


def _packets(sizes: list[int]) -> list[bytes]:
    return [bytes((i + n) % 251 for n in range(size)) for i, size in enumerate(sizes)]


@pytest.mark.parametrize("endianness", ["<", ">"])
@pytest.mark.parametrize("nano", [False, True])
def test_classic_pcap_written_by_scapy(tmp_path: Path, endianness: str, nano: bool) -> None:
    path = tmp_path / "x.pcap"
    data = _packets(SIZES)
    with RawPcapWriter(str(path), linktype=1, endianness=endianness, nano=nano, snaplen=262144) as w:
        w._write_header(None)
        for i, pkt in enumerate(data):
            w._write_packet(pkt, linktype=1, sec=1_700_000_000 + i, usec=123456 if not nano else 123456789)
    records = list(read_records(path))
    assert [r[0] for r in records] == list(range(1, len(data) + 1))
    assert [r[3] for r in records] == data
    assert {r[2] for r in records} == {1}
    frac = 0.123456789 if nano else 0.123456
    assert records[3][1] == pytest.approx(1_700_000_003 + frac, abs=1e-6)


def test_records_of_any_length_where_scapy_cuts_at_65535(tmp_path: Path) -> None:
    path = tmp_path / "long.pcap"
    data = _packets([65549, 70000])
    with RawPcapWriter(str(path), linktype=1, snaplen=262144) as w:
        w._write_header(None)
        for pkt in data:
            w._write_packet(pkt, linktype=1, sec=1, usec=0)
    assert [r[3] for r in read_records(path)] == data
    # the reason this reader exists: scapy's default record size loses the tail
    with RawPcapReader(str(path)) as reader:
        assert [len(p) for p, _meta in reader] == [65535, 65535]


def test_many_records_across_read_chunks(tmp_path: Path) -> None:
    """Records straddling the reader's 1 MiB chunks come back exactly as scapy reads them."""
    path = tmp_path / "many.pcap"
    sizes = [(i * 7919) % 3000 + 1 for i in range(2500)]
    data = _packets(sizes)
    with RawPcapWriter(str(path), linktype=1, snaplen=262144) as w:
        w._write_header(None)
        for i, pkt in enumerate(data):
            w._write_packet(pkt, linktype=1, sec=i, usec=i)
    ours = [(r[3], r[1]) for r in read_records(path)]
    with RawPcapReader(str(path)) as reader:
        theirs = [(p, m.sec + m.usec / 1e6) for p, m in reader]
    assert ours == theirs


def test_pcapng_written_by_scapy(tmp_path: Path) -> None:
    path = tmp_path / "x.pcapng"
    payloads = [b"a" * 10, b"b" * 65000]
    w = PcapNgWriter(str(path))
    for i, p in enumerate(payloads):
        pkt = Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1, dport=9876) / Raw(p)
        pkt.time = 1_700_000_000.5 + i
        w.write(pkt)
    w.close()
    records = list(read_records(path))
    assert len(records) == 2
    assert [r[0] for r in records] == [1, 2]
    assert {r[2] for r in records} == {1}
    assert len(records[1][3]) == 14 + 20 + 20 + 65000 and records[1][3].endswith(b"b" * 65000)
    assert records[0][1] == pytest.approx(1_700_000_000.5, abs=1e-5)


@pytest.mark.parametrize("kind", ["pcap", "pcapng"])
def test_gzip_compressed_captures(tmp_path: Path, kind: str) -> None:
    plain = tmp_path / f"x.{kind}"
    if kind == "pcap":
        with RawPcapWriter(str(plain), linktype=1, snaplen=262144) as w:
            w._write_header(None)
            w._write_packet(b"abc" * 100, linktype=1, sec=5, usec=0)
    else:
        w = PcapNgWriter(str(plain))
        pkt = Ether() / IP() / TCP() / Raw(b"abc" * 100)
        pkt.time = 5.0
        w.write(pkt)
        w.close()
    packed = tmp_path / f"x.{kind}.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert [r[3] for r in read_records(packed)] == [r[3] for r in read_records(plain)]


@pytest.mark.parametrize("cut", [12, 20, 30, -9, -1])
def test_a_cut_or_damaged_gzip_capture_is_a_capture_file_error(tmp_path: Path, cut: int) -> None:
    """Cut anywhere (the file header included) or with a bad CRC: a CaptureFileError naming the
    file, never gzip's EOFError or BadGzipFile (the fuzz harness found both at the file header)."""
    plain = tmp_path / "x.pcap"
    with RawPcapWriter(str(plain), linktype=1, snaplen=262144) as w:
        w._write_header(None)
        w._write_packet(b"abc" * 100, linktype=1, sec=5, usec=0)
    packed = gzip.compress(plain.read_bytes(), mtime=0)
    damaged = tmp_path / "x.pcap.gz"
    if cut == -1:  # the CRC in the trailer
        damaged.write_bytes(packed[:-8] + bytes(4) + packed[-4:])
    else:
        damaged.write_bytes(packed[:cut])
    with pytest.raises(CaptureFileError, match=r"x\.pcap\.gz"):
        list(read_records(damaged))


class _Trickle(io.RawIOBase):
    """A pipe that hands out at most 7 bytes per read."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        return self._data.read(7 if n < 0 else min(n, 7))


def test_standard_input_with_short_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.pcap"
    data = _packets([100, 2000, 70000])
    with RawPcapWriter(str(path), linktype=1, snaplen=262144) as w:
        w._write_header(None)
        for pkt in data:
            w._write_packet(pkt, linktype=1, sec=1, usec=0)

    class _Stdin:
        buffer = _Trickle(path.read_bytes())

    monkeypatch.setattr(sys, "stdin", _Stdin())
    assert [r[3] for r in read_records("-")] == data


def _pcap(records: list[bytes]) -> bytes:
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)
    for r in records:
        out += struct.pack("<IIII", 1, 0, len(r), len(r)) + r
    return out


@pytest.mark.parametrize(("data", "record", "offset", "field"), [
    (b"", None, 0, "magic"),
    (b"\xd4\xc3", None, 0, "magic"),
    (b"GET / HTTP/1.1\r\n", None, 0, "magic"),
    (_pcap([])[:20], None, 0, "file header"),
    (_pcap([b"x" * 10]) + b"\x01\x00\x00", 2, 24 + 26, "record header"),
    (_pcap([b"x" * 10, b"y" * 100])[:-40], 2, 24 + 26, "record data"),
    (_pcap([b"x" * 10]) + struct.pack("<IIII", 1, 0, MAX_RECORD_LENGTH + 1, 10), 2, 24 + 26, "incl_len"),
])
def test_damaged_files_name_file_record_and_offset(tmp_path: Path, data: bytes, record: int | None, offset: int,
                                                   field: str) -> None:
    path = tmp_path / "bad.pcap"
    path.write_bytes(data)
    got = []
    with pytest.raises(CaptureFileError) as info:
        for rec in read_records(path):
            got.append(rec)
    err = info.value
    assert isinstance(err, DecodeError) and isinstance(err, WireError)
    assert (err.record, err.offset, err.field, err.path) == (record, offset, field, str(path))
    assert str(err).startswith(f"{path}")
    if record is not None:
        assert f"record {record}" in str(err) and f"byte offset {offset}" in str(err)
        assert len(got) == record - 1  # the records before the damage were read


def test_damaged_pcapng_block(tmp_path: Path) -> None:
    good = tmp_path / "good.pcapng"
    w = PcapNgWriter(str(good))
    for i in range(3):
        pkt = Ether() / IP() / TCP() / Raw(b"z" * (100 + i))
        pkt.time = float(i)
        w.write(pkt)
    w.close()
    raw = good.read_bytes()
    bad = tmp_path / "bad.pcapng"
    bad.write_bytes(raw[:-30])
    got = []
    with pytest.raises(CaptureFileError) as info:
        for rec in read_records(bad):
            got.append(rec)
    assert info.value.record == 3 and len(got) == 2
    assert 0 < (info.value.offset or 0) < len(raw) - 30
    bad.write_bytes(raw[:10])
    with pytest.raises(CaptureFileError, match="section header"):
        list(read_records(bad))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CaptureFileError, match="cannot open"):
        list(read_records(tmp_path / "nope.pcap"))
