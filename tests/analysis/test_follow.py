# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl analyze --follow``: Structured Streaming over a directory that captures are rotated into.

Files are rotated into a real directory while the stream runs, by the writer ``mqctl pcap record
--rotate-*`` uses (each file written under a dot-name and renamed into view when complete); after
each one the metrics the follow reports (and its report) take the new file in, and equal what
``mqctl pcap decode`` finds in the files so far. A damaged file is reported and the follow goes on.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.analysis.test_equality import pcap_decode
from tests.conftest import FIXTURES

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

#: a micro-batch takes seconds; a loaded machine makes it minutes
_WAIT = int(os.environ.get("FOLLOW_WAIT", "600"))


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


class _Crash(Exception):
    """Stands for the process dying after a batch's tables were written, before Spark recorded it."""


def _follow_until(spark: Any, watch: Path, out: Path, batches: int, *, crash_on: int | None = None,
                  first: Path | None = None, then: tuple[Path, ...] = ()) -> tuple[list[dict[str, Any]], list[Any]]:
    """Run one follow on ``out`` until it has analysed ``batches`` batches: ``first`` is rotated in
    once it runs, each of ``then`` after an update; with ``crash_on`` its on_update raises in the
    update of that batch (one run of follow stands for one process lifetime)."""
    from analysis.follow import follow

    updates: queue.Queue[dict[str, Any]] = queue.Queue()
    ended: list[Any] = []
    quit_ = threading.Event()

    def on_update(u: dict[str, Any]) -> None:
        updates.put(u)
        if crash_on is not None and u.get("batch") == crash_on:
            raise _Crash(f"died in batch {crash_on}")

    def run() -> None:
        try:
            ended.append(follow(watch, out, spark=spark, partitions=2, trigger_seconds=0.5,
                                on_update=on_update, stop_after=batches, stop=quit_.is_set))
        except BaseException as err:
            ended.append(err)

    thread = threading.Thread(target=run, name="follow", daemon=True)
    thread.start()
    got: list[dict[str, Any]] = []
    try:
        pending = list(then)
        if first is not None:
            _rotate_in(watch, first)
        while len(got) < batches:
            u = updates.get(timeout=_WAIT)
            assert "error" not in u, u
            got.append(u)
            if pending:
                _rotate_in(watch, pending.pop(0))
        thread.join(timeout=_WAIT)
        assert not thread.is_alive()
    finally:
        quit_.set()
        thread.join(timeout=_WAIT)
    return got, ended


@pytest.mark.provokes_error_log(r"exception while executing the Python Proxy")  # the run that dies
def test_a_restarted_follow_resumes_without_losing_or_repeating_rows(spark: Any, tmp_path: Path) -> None:
    """Three lifetimes of ``--follow`` on one --out: one stopped cleanly, one that dies in the middle
    of a batch (its tables written, the batch not yet recorded by Spark), and a last one. Files
    that arrive while no follow runs are taken by the next one; the batch the dead run did not
    finish is analysed again into the same place, not added a second time; every file's rows are
    in the output exactly once and the metrics equal ``mqctl pcap decode`` of all the files."""
    import pyarrow.parquet as pq

    from analysis.job import MARKER

    peers = FIXTURES / "peers"
    sources = [peers / "peers-cpp-produce-consume.pcap", peers / "peers-alions-produce-consume.pcap",
               peers / "mqctl-admin-commands.pcap", peers / "peers-cpp-produce-consume.pcap"]
    watch = tmp_path / "watch"
    watch.mkdir()
    out = tmp_path / "out"

    # first lifetime: one file, then a clean stop
    (u1,), ended = _follow_until(spark, watch, out, 1, first=sources[0])
    assert ended == [1]
    first = Path(u1["files"][0])
    want = _commands(first)
    assert u1["metrics"]["summary"]["commands"] == want

    # a file arrives while nothing follows; the second lifetime takes it, then dies in its next batch
    second = _rotate_in(watch, sources[1])
    got, ended = _follow_until(spark, watch, out, 2, crash_on=u1["batch"] + 2, then=(sources[2],))
    assert len(ended) == 1 and "died in batch" in str(ended[0]), ended
    u2, u3 = got
    assert u2["files"] == [str(second)] and u2["batch"] == u1["batch"] + 1
    assert u2["metrics"]["summary"]["commands"] == want + _commands(second)
    third = Path(u3["files"][0])
    assert u3["batch"] == u1["batch"] + 2
    dead = out / "batches" / f"{u3['batch']:06d}"
    assert json.loads((dead / MARKER).read_text())["complete"], "the dead batch's tables were written"

    # third lifetime: the unrecorded batch again (same number, same files), then a new file
    got, ended = _follow_until(spark, watch, out, 2, then=(sources[3],))
    assert ended == [2]
    again, u4 = got
    assert again["batch"] == u3["batch"] and again["files"] == u3["files"]
    fourth = Path(u4["files"][0])
    files = [first, second, third, fourth]
    total = sum(_commands(f) for f in files)
    assert u4["metrics"]["summary"]["commands"] == total
    assert u4["metrics"]["summary"]["captures"] == 4
    assert sorted(u4["captures"]) == sorted(str(f) for f in files)

    # on disk: each file in exactly one batch, its rows once
    batches = sorted(d for d in (out / "batches").iterdir() if (d / MARKER).is_file())
    listed = [c["path"] for d in batches for c in json.loads((d / MARKER).read_text())["captures"]]
    assert sorted(listed) == sorted(str(f) for f in files)
    rows = sum(pq.read_table(str(d / "commands")).num_rows for d in batches)
    assert rows == total
