# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Byte-range splits of one file (wire.capture.splits): the records of the splits, in order, are
the records of the whole file, whatever the cut points, including on files built to fool a naive
scan for record headers. Pure Python, no Spark."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest

from tests.analysis.conftest import all_captures
from wire.capture import read_records
from wire.capture.splits import file_layout, plan_ranges, resolve, scan_split, split_records
from wire.capture.synth import PcapWriter


def _split_read(path: Path, target: int) -> tuple[list[tuple[int, float, int, bytes]], int]:
    lay = file_layout(str(path))
    scans = [scan_split(lay, i, a, b) for i, (a, b) in enumerate(plan_ranges(lay, target))]
    plan, rewalked = resolve(lay, scans)
    return [r for s in plan for r in split_records(s, lay)], rewalked


@pytest.mark.parametrize("target", [257, 4096])
def test_every_capture_reads_the_same_in_splits(target: int) -> None:
    captures = [p for p in all_captures() if p.stat().st_size < 200_000]
    assert captures
    for path in captures:
        got, _ = _split_read(path, target)
        assert got == list(read_records(path)), path


def _fooling_capture(path: Path) -> bytes:
    """A pcap whose packets carry a whole pcap file: its records chain like real ones, with times
    and lengths that pass every candidate check."""
    inner = io.BytesIO()
    w = PcapWriter(inner, linktype=1)
    for i in range(40):
        w.write(1_795_000_000.0 + i * 0.001, bytes([i % 251]) * (60 + i))
    payload = inner.getvalue()[24:]  # the records without the file header
    outer = io.BytesIO()
    w = PcapWriter(outer, linktype=1)
    for i in range(30):
        w.write(1_795_000_000.0 + i * 0.01, b"\x00" * 14 + payload)
    path.write_bytes(outer.getvalue())
    return outer.getvalue()


def test_a_capture_built_to_fool_a_naive_scan(tmp_path: Path) -> None:
    path = tmp_path / "fool.pcap"
    data = _fooling_capture(path)
    lay = file_layout(str(path))
    ranges = plan_ranges(lay, 997)
    scans = [scan_split(lay, i, a, b) for i, (a, b) in enumerate(ranges)]
    # the candidates alone are fooled: some land inside a packet, on a record of the carried file
    true_starts = set()
    pos = 24
    while pos < len(data):
        true_starts.add(pos)
        pos += 16 + struct.unpack_from("<I", data, pos + 8)[0]
    fooled = [s for s in scans if s.first is not None and s.first not in true_starts]
    assert fooled, "the file does not fool the candidate search: the test proves nothing"
    plan, rewalked = resolve(lay, scans)
    assert rewalked >= 1
    assert all(s.first in true_starts for s in plan)
    assert [r for s in plan for r in split_records(s, lay)] == list(read_records(path))


def test_every_cut_point_of_a_fooling_file(tmp_path: Path) -> None:
    path = tmp_path / "fool.pcap"
    _fooling_capture(path)
    want = list(read_records(path))
    for target in range(300, 3000, 97):
        got, _ = _split_read(path, target)
        assert got == want, target


def test_pcapng_splits_by_block_structure(tmp_path: Path) -> None:
    from scapy.utils import PcapNgWriter, rdpcap

    src = next(p for p in all_captures() if p.name == "peers-cpp-produce-consume.pcap")
    path = tmp_path / "c.pcapng"
    with PcapNgWriter(str(path)) as w:
        for pkt in rdpcap(str(src)):
            w.write(pkt)
    want = list(read_records(path))
    assert len(want) > 20
    for target in (64, 333, 2048):
        got, _ = _split_read(path, target)
        assert got == want, target


def test_a_pcapng_built_to_fool_a_naive_scan(tmp_path: Path) -> None:
    """Packet blocks inside packets chain like real ones; the ranges after the second interface
    description count interfaces they never saw described. The candidates are fooled, the plan is
    not, and no range is walked again for its interface count alone."""
    from tests.analysis.conftest import fooling_pcapng

    path = fooling_pcapng(tmp_path / "fool.pcapng")
    data = path.read_bytes()
    lay = file_layout(str(path))
    true_starts = set()
    pos = lay.data_start
    while pos < len(data):
        true_starts.add(pos)
        pos += struct.unpack_from("<I", data, pos + 4)[0]
    want = list(read_records(path))
    assert {r[0] for r in want} and len(want) > 100
    fooled_somewhere = False
    for target in (1024, 4099, 9000, 30_000):
        ranges = plan_ranges(lay, target)
        scans = [scan_split(lay, i, a, b) for i, (a, b) in enumerate(ranges)]
        fooled = [s for s in scans if s.first is not None and s.first not in true_starts]
        fooled_somewhere = fooled_somewhere or bool(fooled)
        plan, rewalked = resolve(lay, scans)
        assert all(s.first in true_starts for s in plan), target
        assert rewalked <= len(fooled) + sum(1 for s in scans if s.first is None), target
        assert [r for s in plan for r in split_records(s, lay)] == want, target
        assert any(s.needs == 2 for s in scans if s.first in true_starts), target  # interface 1 in use
    assert fooled_somewhere, "the file does not fool the candidate search: the test proves nothing"


def test_pcapng_ranges_are_not_walked_again_on_ordinary_files(tmp_path: Path) -> None:
    from tests.analysis.conftest import pcapng_copy

    path = pcapng_copy(tmp_path / "c.pcapng")
    lay = file_layout(str(path))
    scans = [scan_split(lay, i, a, b) for i, (a, b) in enumerate(plan_ranges(lay, 4096))]
    plan, rewalked = resolve(lay, scans)
    assert len(plan) > 10 and rewalked == 0
