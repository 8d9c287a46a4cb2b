# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Inputs Spark reads through its Hadoop file systems, not the executors' own file I/O.

``viewfs://`` stands in for ``hdfs://`` and ``s3a://``: a Hadoop file system in the jars every
Spark installation has, whose URLs Python cannot open, mounted here on a temporary directory. The
job lists it with Hadoop's FileSystem on the driver and reads it through Spark (classic pcap files
bigger than a split by byte ranges, the others whole with ``binaryFiles``), through the same code
as any other scheme; what it decodes equals ``mqctl pcap decode`` of the same files.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.analysis.conftest import SPLIT_BYTES, PcapNgBlocks, fooling_capture, fooling_pcapng, pcapng_copy
from tests.analysis.test_equality import _command_view, _ha_view, _pick, _problem_view, _tables, pcap_decode
from tests.conftest import CAPTURES, FIXTURES

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def _mount(spark: Any, directory: Path) -> str:
    """A viewfs mount table whose /caps is ``directory``; returns the URL of /caps."""
    name = f"mq{uuid.uuid4().hex[:8]}"
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{name}.link./caps",
                                                      directory.resolve().as_uri())
    return f"viewfs://{name}/caps"


def test_captures_read_through_a_hadoop_file_system(spark: Any, tmp_path: Path) -> None:
    from analysis.job import WHOLE_GZIP, run_job

    src = tmp_path / "src"
    src.mkdir()
    plain = src / "peers-cpp-produce-consume.pcap"
    shutil.copy(FIXTURES / "peers" / plain.name, plain)
    zipped = src / "mqctl-admin-commands.pcap.gz"
    zipped.write_bytes(gzip.compress((FIXTURES / "peers" / "mqctl-admin-commands.pcap").read_bytes()))
    (src / "notes.txt").write_text("not a capture")
    url = _mount(spark, src)

    out = tmp_path / "out"
    result = run_job(spark, [url], out, partitions=2)
    names = {c["path"]: c for c in result.captures}
    assert set(names) == {f"{url}/{plain.name}", f"{url}/{zipped.name}"}
    assert {c["format"] for c in result.captures} == {"remote"}
    assert names[f"{url}/{zipped.name}"]["read"] == WHOLE_GZIP  # gzip: no random access, one task

    rows = spark.read.parquet(str(out / "commands")).orderBy("capture", "emit_record", "emit_index").collect()
    for local, remote in ((plain, f"{url}/{plain.name}"),
                          (FIXTURES / "peers" / "mqctl-admin-commands.pcap", f"{url}/{zipped.name}")):
        decoded = pcap_decode(local)
        by_number = {r["rocketmq.row"]: r for r in decoded}
        want = [_command_view(r, by_number) for r in decoded if r["rocketmq.kind"] == "command"]
        got = [r.asDict(recursive=True) for r in rows if r["capture"] == remote]
        assert want and len(got) == len(want), remote
        assert [_pick(g, w) for g, w in zip(got, want, strict=True)] == want, remote


def _read_by_ranges(spark: Any, src: Path, files: list[Path], *, every_range: bool = True) -> None:
    """Run the job on ``src`` through viewfs in 64 KiB ranges: each file is read by byte ranges, one
    task per range, some split walked again (the files built to fool the boundary search), and
    its commands, HA frames and problems equal ``mqctl pcap decode`` of the same file row for row."""
    from analysis.job import run_job

    url = _mount(spark, src)
    out = src.parent / "out"
    kept = spark.sparkContext._jsc.getPersistentRDDs().size()
    result = run_job(spark, [url], out, split_bytes=SPLIT_BYTES, partitions=3)
    assert spark.sparkContext._jsc.getPersistentRDDs().size() == kept  # the ranges' bytes are let go
    info = {c["path"].rpartition("/")[2]: c for c in result.captures}
    for f in files:
        ranges = -(-f.stat().st_size // SPLIT_BYTES)
        assert info[f.name]["splits"] >= (max(2, ranges - 1) if every_range else 2), info[f.name]
        assert info[f.name]["read_tasks"] >= info[f.name]["splits"], info[f.name]  # one task per range
        assert info[f.name]["read"] == "byte ranges", info[f.name]
    assert result.rewalked > 0  # the fooling capture's false boundaries were put right

    tables = {name: _tables(spark, out, name) for name in ("commands", "ha", "problems")}
    for f in files:
        remote = f"{url}/{f.name}"
        decoded = pcap_decode(f)
        by_number = {r["rocketmq.row"]: r for r in decoded}
        views = {"commands": [_command_view(r, by_number) for r in decoded if r["rocketmq.kind"] == "command"],
                 "ha": [_ha_view(r) for r in decoded if r["rocketmq.kind"] == "ha"],
                 "problems": [_problem_view(r) for r in decoded if r["rocketmq.kind"] == "problem"]}
        assert views["commands"], f
        for name, want in views.items():
            got = tables[name].get(remote, [])
            assert len(got) == len(want), (f, name)
            assert [_pick(g, w) for g, w in zip(got, want, strict=True)] == want, (f, name)


def test_a_remote_file_is_read_by_byte_ranges_in_parallel(spark: Any, tmp_path: Path) -> None:
    """Classic pcap files bigger than a split, read through a Hadoop file system, are cut into byte
    ranges that separate tasks read (Spark's own reader): a capture whose payloads fool the
    boundary search (so the driver walks splits again, through Hadoop's FileSystem) and, where
    ../shared is present, the 5.x failover capture (AutoSwitch HA streams, named from the Java
    versions seen across the whole file)."""
    src = tmp_path / "src"
    src.mkdir()
    files = [fooling_capture(src / "made-fooling.pcap")]
    failover = CAPTURES / "java-5.0.0" / "13-failover.pcap"
    if failover.is_file():
        shutil.copy(failover, src / failover.name)
        files.append(src / failover.name)
    _read_by_ranges(spark, src, files)


def test_a_remote_pcapng_is_read_by_byte_ranges_in_parallel(spark: Any, tmp_path: Path) -> None:
    """pcapng files bigger than a split, read through a Hadoop file system, are cut into byte ranges
    by their block structure as local ones are: a file whose packets carry pcapng blocks at every
    alignment and whose later ranges use an interface described before them, a copy of three
    fixtures written by scapy, and the pcapng captures of ../shared where present."""
    src = tmp_path / "src"
    src.mkdir()
    files = [fooling_pcapng(src / "made-fooling.pcapng"), pcapng_copy(src / "made-peers.pcapng")]
    if CAPTURES.is_dir():
        for p in sorted(CAPTURES.rglob("*.pcapng")):
            if p.stat().st_size > 2 * SPLIT_BYTES:
                shutil.copy(p, src / p.name)
                files.append(src / p.name)
    _read_by_ranges(spark, src, files)


def _with_big_frames(writer: Any, path: Path, size: int) -> Path:
    """Remoting traffic with frames of ``size`` bytes that are not IP (so the decoder passes them by)
    between its commands: records and blocks longer than the bytes after a range that its scan
    gets, straddling range ends. Bodies and frames hold a ``\\n`` now and then, as real traffic
    does (Spark's text source starts a range at the first one after its cut)."""
    from wire import RemotingCommand, encode_command
    from wire.capture.synth import TcpFlow

    buf = io.BytesIO()
    w = writer(buf)
    flow = TcpFlow(w, ("127.0.0.1", 43000), ("127.0.0.1", 10911))
    t = 1_795_000_000.0
    flow.handshake(t)
    for n in range(30):
        req = RemotingCommand.request(310, {"a": "G", "b": "T", "e": "0", "i": ""}, b"body\n" * 600, opaque=n)
        flow.send(t, 0, encode_command(req))
        if n % 4 == 1:
            frame = (bytes([n]) * 999 + b"\n") * (size // 1000)
            w.write(t, b"\xff" * 12 + b"\x88\xb5" + frame)  # a local-experimental EtherType
        flow.send(t + 0.0005, 1, encode_command(req.response(0, ext_fields={"queueOffset": str(n)})))
        t += 0.002
    flow.close(t)
    path.write_bytes(buf.getvalue())
    return path


def test_remote_records_longer_than_a_seam(spark: Any, tmp_path: Path) -> None:
    """A classic pcap whose 40 KB records straddle range ends (their data beyond what the scan got is
    read by the driver) and a pcapng whose 300 KB blocks do (the ranges they end in have no
    checked candidate, and the driver walks them again): still row for row."""
    from wire.capture.synth import PcapWriter

    src = tmp_path / "src"
    src.mkdir()
    files = [_with_big_frames(PcapWriter, src / "big-records.pcap", 40_000),
             _with_big_frames(PcapNgBlocks, src / "big-blocks.pcapng", 300_000)]
    _read_by_ranges(spark, src, files, every_range=False)


def test_a_refused_out_costs_nothing(spark: Any, tmp_path: Path) -> None:
    """A remote file read by byte ranges, then an --out that holds someone else's files: the job
    stops, the files are untouched, and Spark keeps none of the ranges' bytes."""
    from analysis.job import AnalysisError, run_job

    src = tmp_path / "src"
    src.mkdir()
    fooling_capture(src / "made-fooling.pcap")
    out = tmp_path / "out"
    (out / "_arrow").mkdir(parents=True)
    (out / "_arrow" / "theirs.txt").write_text("keep me")
    kept = spark.sparkContext._jsc.getPersistentRDDs().size()
    with pytest.raises(AnalysisError, match="not empty"):
        run_job(spark, [_mount(spark, src)], out, split_bytes=SPLIT_BYTES, partitions=2)
    assert (out / "_arrow" / "theirs.txt").read_text() == "keep me"
    assert spark.sparkContext._jsc.getPersistentRDDs().size() == kept


def test_range_bytes_from_arrow_batches() -> None:
    """The lines of Spark's text source, in Arrow batches that hold several ranges or part of one,
    come back as each range's bytes exactly."""
    import pyarrow as pa

    from analysis.tasks import joined_lines, range_bytes

    files = {("a", 0): b"\n\nxy\nz\n", ("a", 9): b"pq\n\n", ("b", 0): b"\x00\n" * 5}
    rows = [(f, s, line) for (f, s), data in files.items() for line in data.split(b"\n")[:-1]]
    for size in (1, 2, 3, 7, len(rows)):
        batches = [pa.RecordBatch.from_pydict({"f": [r[0] for r in rows[i:i + size]],
                                               "s": pa.array([r[1] for r in rows[i:i + size]], pa.int64()),
                                               "v": pa.array([r[2] for r in rows[i:i + size]], pa.binary())})
                   for i in range(0, len(rows), size)]
        assert {(f, s): data for f, s, data in range_bytes(joined_lines(batches))} == files, size


def test_a_remote_file_too_big_to_read_whole_is_refused(spark: Any, tmp_path: Path) -> None:
    from analysis.job import AnalysisError, run_job

    src = tmp_path / "src"
    src.mkdir()
    big = src / "big.pcap.gz"  # gzip'd: read whole (classic pcap is read by byte ranges)
    with open(big, "wb") as f:
        f.write(gzip.compress(b"x"))
        f.truncate(2 * 1024**3 + 1)  # sparse: no disk used
    url = _mount(spark, src)
    with pytest.raises(AnalysisError, match=r"gzip has no random access.*below 2 GiB"):
        run_job(spark, [f"{url}/big.pcap.gz"], tmp_path / "out")
    assert not (tmp_path / "out" / "commands").exists()


def test_a_scheme_spark_cannot_read_says_what_is_missing(spark: Any, tmp_path: Path) -> None:
    from analysis.job import AnalysisError, run_job

    with pytest.raises(AnalysisError, match=r"no file system for this scheme.*hadoop-aws"):
        run_job(spark, ["s3a://some-bucket/captures/"], tmp_path / "out")


def test_missing_remote_paths_are_one_line(spark: Any, tmp_path: Path) -> None:
    from analysis.job import AnalysisError, run_job

    url = _mount(spark, tmp_path)
    with pytest.raises(AnalysisError, match="no such file or directory"):
        run_job(spark, [f"{url}/nope.pcap"], tmp_path / "out")
    with pytest.raises(AnalysisError, match="matches no file"):
        run_job(spark, [f"{url}/*.pcapng"], tmp_path / "out")
    os.makedirs(tmp_path / "empty")
    with pytest.raises(AnalysisError, match="no capture files"):
        run_job(spark, [f"{url}/empty"], tmp_path / "out2")
