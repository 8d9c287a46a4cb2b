# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl analyze --follow``: Structured Streaming over a directory that captures are rotated into.

Files are rotated into a real directory while the stream runs, by the writer ``mqctl pcap record
--rotate-*`` uses (each file written under a dot-name and renamed into view when complete); after
each one the metrics the follow reports (and its report) take the new file in, and equal what
``mqctl pcap decode`` finds in the files so far. A damaged file is reported and the follow goes on.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.analysis.test_equality import pcap_decode
from tests.conftest import FIXTURES

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

#: a micro-batch takes seconds; a loaded machine makes it minutes
_WAIT = 600


def _rotate_in(directory: Path, source: Path) -> Path:
    """Write the packets of ``source`` into ``directory`` as one rotated file; returns its path."""
    import scapy.layers.l2  # noqa: F401  # Ethernet, so that packets are read as such
    from scapy.utils import rdpcap

    from wire.capture._scapy_io import RotatingPcapFiles

    def visible() -> set[Path]:
        return {p for p in directory.glob("*.pcap") if not p.name.startswith(".")}

    before = visible()
    files = RotatingPcapFiles(directory, size=1 << 40)
    for pkt in rdpcap(str(source)):
        files.write(pkt)
        assert visible() == before, "a file is visible before it is complete"
    files.close()
    (done,) = files.done
    assert visible() == before | {done} and done.parent == directory
    return done


def _commands(path: Path) -> int:
    return sum(1 for r in pcap_decode(path) if r["rocketmq.kind"] == "command")


def test_follow_updates_the_metrics_as_files_are_rotated_in(spark: Any, tmp_path: Path) -> None:
    from analysis.follow import follow

    watch = tmp_path / "watch"
    watch.mkdir()
    out = tmp_path / "out"
    updates: queue.Queue[dict[str, Any]] = queue.Queue()
    ended: list[Any] = []
    quit_ = threading.Event()

    def run() -> None:
        try:
            ended.append(follow(watch, out, spark=spark, partitions=2, trigger_seconds=0.5,
                                on_update=updates.put, stop_after=2, stop=quit_.is_set))
        except BaseException as err:  # surfaces in the test thread below
            ended.append(err)
            updates.put({"crashed": err})

    thread = threading.Thread(target=run, name="follow", daemon=True)
    thread.start()
    try:
        first = _rotate_in(watch, FIXTURES / "peers" / "peers-cpp-produce-consume.pcap")
        u1 = updates.get(timeout=_WAIT)
        assert "crashed" not in u1, u1
        assert u1["files"] == [str(first)]
        assert u1["metrics"]["summary"]["commands"] == _commands(first) > 0
        assert u1["rows"]["commands"] == _commands(first)

        damaged = watch / "damaged.pcap"
        (watch / ".damaged.pcap").write_bytes(first.read_bytes()[:1000])
        (watch / ".damaged.pcap").rename(damaged)
        bad = updates.get(timeout=_WAIT)
        assert bad["files"] == [str(damaged)]
        assert bad["error"] == (f"{damaged}, record 7, byte offset 973: record data cut short: 11 of 66 bytes "
                                "before the end of the file")

        second = _rotate_in(watch, FIXTURES / "peers" / "peers-alions-produce-consume.pcap")
        u2 = updates.get(timeout=_WAIT)
        assert "crashed" not in u2, u2
        assert u2["files"] == [str(second)]
        assert u2["metrics"]["summary"]["commands"] == _commands(first) + _commands(second)
        assert u2["metrics"]["summary"]["captures"] == 2
        report = Path(u2["report"]).read_text()
        assert first.name in report and second.name in report
        thread.join(timeout=_WAIT)  # it ends by itself after its second batch
        assert ended == [2]
    finally:
        quit_.set()
        thread.join(timeout=_WAIT)


def test_rotation_by_size_and_by_time(tmp_path: Path) -> None:
    import scapy.layers.l2  # noqa: F401
    from scapy.utils import rdpcap

    from wire.capture import read_records
    from wire.capture._scapy_io import RotatingPcapFiles

    packets = rdpcap(str(FIXTURES / "peers" / "peers-cpp-produce-consume.pcap"))
    by_size = tmp_path / "size"
    by_size.mkdir()
    files = RotatingPcapFiles(by_size, size=4000)
    for pkt in packets:
        files.write(pkt)
    files.close()
    assert len(files.done) > 3 and sorted(by_size.iterdir()) == sorted(files.done)
    got = [data for f in files.done for _n, _ts, _lt, data in read_records(f)]
    assert got == [bytes(p) for p in packets]

    now = [0.0]
    by_time = tmp_path / "time"
    by_time.mkdir()
    files = RotatingPcapFiles(by_time, seconds=10, clock=lambda: now[0])
    files.write(packets[0])
    files.tick()
    assert files.done == []  # not due yet
    now[0] = 10.0
    files.tick()  # due, with no packet coming: closed and renamed into view
    assert [f.name for f in by_time.iterdir()] == [files.done[0].name]
    files.tick()
    files.close()  # nothing written since: no empty file
    assert len(files.done) == 1 and len(list(by_time.iterdir())) == 1
