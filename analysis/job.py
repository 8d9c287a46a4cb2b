# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The batch job: capture files → decoding units → Arrow files → Parquet tables.

Jobs (each shown by :mod:`analysis.progress` under its description):

1. **scan** (only for files cut into byte ranges) — one task per range finds its first record
   boundary and walks the record headers to its end (:func:`wire.capture.splits.scan_split`);
   the driver verifies the chain and re-walks any split whose candidate was wrong
   (:func:`~wire.capture.splits.resolve`), and so knows where every split starts and how many
   records come before it.
2. **decode** — one Spark job of two stages. Map: one task per split writes an index of its
   records per flow partition (:func:`analysis.tasks.index_split`); only these indexes are
   shuffled. Reduce: each flow partition reads its records from the files by offset, in capture
   order, and decodes them with ``wire.capture``'s decoder (:func:`analysis.tasks.decode_unit`).
   Beside them in the same stage, files no bigger than a split and gzip'd files (no random
   access: one task reads each) are decoded whole, several small ones per task. Classic pcap and
   pcapng files bigger than a split read through Spark's file systems take the same shuffle,
   cut into byte ranges by Spark's own reader and read into Python once: their scan is a job over
   those ranges, and their map side sends the records' bytes with the index, since no executor
   can read such a file by offset (:func:`_remote_splits`). Every unit writes
   its rows as Arrow files and returns a small report (row counts, connections, Java versions).
3. **decode again** (rare) — a flow partition that named an HA variant from fewer Java versions
   than the whole capture had shown is decoded again with the file's version timeline (the
   shuffle is reused).
4. **tables** — the driver ranks each file's connections into stream numbers; one task per unit
   writes its Parquet files with them (:func:`analysis.tasks.finish_unit`).

Output directories are never emptied unless they hold this job's marker file
(``_mqctl_analysis.json``), so pointing ``--out`` at a directory of other files is an error, not
a loss.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from pyspark.sql import SparkSession

from wire.capture import CaptureFileError, PortRoles
from wire.capture.splits import (
    FileLayout,
    Split,
    SplitScan,
    file_layout,
    layout_of,
    plan_ranges,
    resolve,
    walk,
)

from . import tasks
from .columnar import empty_table
from .schema import COLUMNS
from .sources import (
    MAX_REMOTE_BYTES,
    RemoteFile,
    SourceError,
    expand_local,
    expand_remote,
    is_remote,
    read_range,
)

__all__ = [
    "MARKER",
    "WHOLE_GZIP",
    "AnalysisError",
    "JobResult",
    "expand_inputs",
    "failure_reason",
    "plan_splits",
    "prepare_out",
    "run_job",
    "split_target",
]

MARKER = "_mqctl_analysis.json"
#: the largest byte range one task reads (the default target is smaller for small inputs)
SPLIT_BYTES = 128 * 1024 * 1024
_MIN_SPLIT = 8 * 1024 * 1024
_RAW = "_arrow"


class AnalysisError(Exception):
    """A problem with the job's inputs or output that the user can fix (one line)."""


_PYTHON_ERROR = re.compile(r"^((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception)): (.+)$", re.MULTILINE)


def failure_reason(err: BaseException) -> str:
    """One line that says why a Spark job failed: the Python exception a task raised (a damaged
    capture's CaptureFileError, with file, record and offset), not py4j's "An error occurred while
    calling ..." that wraps it."""
    text = str(err)
    found = _PYTHON_ERROR.findall(text)
    for name, message in found:
        if name.endswith("CaptureFileError"):
            return str(message).strip()[:500]
    python = [(n, m) for n, m in found if not n.startswith(("org.", "java.", "scala.", "py4j."))]
    if python:
        name, message = python[-1]
        return f"{name.rpartition('.')[2]}: {message.strip()}"[:500]
    line = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    return line[:500]


@dataclass
class JobResult:
    out: Path
    captures: list[dict[str, Any]]
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    splits: int = 0
    rewalked: int = 0
    #: seconds per job: scan, decode, decode again, tables
    stages: dict[str, float] = field(default_factory=dict)
    units: int = 0


def expand_inputs(inputs: Iterable[str]) -> list[str]:
    """Files, directories (their capture files, recursively) and globs → capture paths, sorted per
    input. ``file://`` URLs are local paths; URLs of other file systems are kept as given, to be
    listed through Spark once it runs (:mod:`analysis.sources`)."""
    try:
        return expand_local(inputs)
    except SourceError as err:
        raise AnalysisError(str(err)) from None


def prepare_out(out: Path) -> None:
    """Make ``out`` ready for the tables: create it, or reuse it when it holds a previous run's marker."""
    if out.exists() and not out.is_dir():
        raise AnalysisError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise AnalysisError(
            f"--out {out}: the directory is not empty and holds no previous analysis "
            f"({MARKER}); choose a new or empty directory"
        )
    out.mkdir(parents=True, exist_ok=True)
    for name in (*COLUMNS, _RAW):
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)


def split_target(total: int, parallelism: int) -> int:
    """The byte range per task: about three per core over the whole input, between 8 and 128 MiB
    (big enough that a task's start-up is noise, small enough that every core gets work)."""
    return max(_MIN_SPLIT, min(SPLIT_BYTES, total // max(1, 3 * parallelism)))


def plan_splits(
    spark: SparkSession, layouts: list[tuple[int, FileLayout]], split_bytes: int
) -> tuple[list[tuple[int, Split, FileLayout]], int, dict[tuple[int, int], int]]:
    """Job 1: the exact splits of every file cut into more than one range, how many had to be
    re-walked, and the bytes of each flow ``(file, key)`` (for dealing flows to partitions)."""
    sc = spark.sparkContext
    ranges = [(fid, lay, plan_ranges(lay, split_bytes)) for fid, lay in layouts]
    work = [(fid, lay, i, a, b) for fid, lay, rs in ranges for i, (a, b) in enumerate(rs)]
    scans: dict[int, list[SplitScan]] = {}
    volumes: dict[tuple[int, int], int] = {}
    if work:
        sc.setJobDescription("scan: record boundaries of the byte ranges, bytes per flow")
        for fid, scan, vols in sc.parallelize(work, len(work)).map(_scan).collect():
            scans.setdefault(fid, []).append(scan)
            for key, n in vols.items():
                volumes[fid, key] = volumes.get((fid, key), 0) + n
    out: list[tuple[int, Split, FileLayout]] = []
    rewalked = 0
    for fid, lay, _rs in ranges:
        plan, n = resolve(lay, scans[fid])
        rewalked += n
        out.extend((fid, s, lay) for s in plan)
    return out, rewalked, volumes


def _scan(item: tuple[int, FileLayout, int, int, int]) -> tuple[int, SplitScan, dict[int, int]]:
    fid, lay, index, start, end = item
    scan = tasks.scan_task((lay, index, start, end))
    return fid, scan, tasks.flow_volumes(lay, scan, fid)


@dataclass
class _Plan:
    captures: list[str]
    sizes: list[int]
    kinds: list[str]
    splits: list[tuple[int, Split, FileLayout]]
    bins: list[list[tasks.WholeFile]]
    remote: list[int]
    rewalked: int
    #: bytes of the files cut into splits
    split_total: int = 0
    #: bytes per flow (file, key) of the files cut into splits
    volumes: dict[tuple[int, int], int] = field(default_factory=dict)
    #: remote classic pcap files read by byte ranges (:func:`_remote_splits`)
    ranged: _Ranged | None = None


@dataclass
class _Ranged:
    """Remote files cut into byte ranges: ``data`` holds each range's bytes (file name, range start,
    bytes; kept by Spark after the first job), ``chunks`` says where each lies in its file,
    ``splits`` the resolved split of each range with the bytes after it that its last record
    needs."""

    data: Any
    chunks: dict[tuple[str, int], tasks.Chunk]
    layouts: dict[int, FileLayout]
    splits: dict[tuple[int, int], tuple[Split, bytes]]
    #: how many tasks read each file's ranges (Spark partitions of the text source)
    tasks: dict[int, int] = field(default_factory=dict)
    #: pcapng files: the bytes outside a range its reader needs, by offset (:func:`_pcapng_state`)
    states: dict[int, dict[int, bytes]] = field(default_factory=dict)


def run_job(
    spark: SparkSession,
    inputs: list[str],
    out: Path,
    *,
    partitions: int | None = None,
    split_bytes: int | None = None,
    roles: PortRoles | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> JobResult:
    """Run the whole batch job; the tables end up as Parquet under ``out``.

    ``partitions`` is the number of flow partitions of the files cut into splits (default: two
    per core, more for big inputs); ``split_bytes`` the byte range per task (default
    :func:`split_target`; a file no bigger than it is decoded whole by one task).
    """
    started = time.monotonic()
    note = on_stage or (lambda _s: None)
    roles = roles or PortRoles()

    saved = {key: spark.conf.get(key, None) for key in _SAVED_CONF}
    try:
        return _run(spark, inputs, out, partitions, split_bytes, roles, note, started)
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _run(spark: SparkSession, inputs: list[str], out: Path, partitions: int | None, split_bytes: int | None,
         roles: PortRoles, note: Callable[[str], None], started: float) -> JobResult:
    stages: dict[str, float] = {}
    note("scan")
    t = time.monotonic()
    plan = _plan(spark, inputs, split_bytes)  # reads the inputs only: a bad one costs no output
    stages["scan"] = time.monotonic() - t
    raw = str(out / _RAW)
    try:
        prepare_out(out)
        # the marker first: a run that fails half-way leaves a directory the next run may reuse
        (out / MARKER).write_text(json.dumps({"complete": False, "captures": plan.captures}, indent=1) + "\n")
        os.makedirs(raw, exist_ok=True)
        try:
            counts, units = _decode(spark, plan, out, raw, partitions, roles, note, stages)
        finally:
            shutil.rmtree(raw, ignore_errors=True)
    finally:
        if plan.ranged is not None:
            plan.ranged.data.unpersist()  # the remote ranges' bytes Spark kept for the jobs

    info: list[dict[str, Any]] = [
        {
            "path": path,
            "format": plan.kinds[i],
            "bytes": plan.sizes[i],
            "splits": max(1, sum(1 for fid, _s, _l in plan.splits if fid == i)
                          + (sum(1 for f, _k in plan.ranged.splits if f == i) if plan.ranged else 0)),
            "read": _how_read(plan, i),
            **_read_tasks(plan, i),
        }
        for i, path in enumerate(plan.captures)
    ]
    result = JobResult(
        out,
        info,
        dict(zip(tasks.TABLES, counts, strict=True)),
        time.monotonic() - started,
        sum(c["splits"] for c in info),
        plan.rewalked,
        {k: round(v, 3) for k, v in stages.items()},
        units,
    )
    (out / MARKER).write_text(
        json.dumps(
            {
                "complete": True,
                "captures": info,
                "rows": result.counts,
                "seconds": result.seconds,
                "splits": result.splits,
                "rewalked": result.rewalked,
                "stages": result.stages,
            },
            indent=1,
        )
        + "\n"
    )
    return result


def _decode(spark: SparkSession, plan: _Plan, out: Path, raw: str, partitions: int | None, roles: PortRoles,
            note: Callable[[str], None], stages: dict[str, float]) -> tuple[list[int], int]:
    """Jobs 2 to 4 (see the module docstring): rows written per table, and units decoded."""
    sc = spark.sparkContext
    nparts = partitions or max(2 * sc.defaultParallelism, plan.split_total // SPLIT_BYTES)
    captures = plan.captures
    target = str(out)

    note("decode")
    t = time.monotonic()
    sc.setJobDescription("decode: records by flow, reassembly and decoding")
    parts: list[Any] = []
    flows = None
    paths = list(captures)
    if plan.splits or plan.ranged:
        maps = []
        if plan.splits:
            assign = sc.broadcast(tasks.deal(plan.volumes, nparts))
            maps.append(sc.parallelize(plan.splits, len(plan.splits)).flatMap(
                lambda item: tasks.index_split(item[0], item[1], item[2], nparts,
                                               assign.value.get(item[0], {}))))
        if plan.ranged:
            maps.append(_carried(spark, plan.ranged, nparts))
        flows = (maps[0] if len(maps) == 1 else sc.union(maps)).partitionBy(nparts, _identity)
        parts.append(flows.mapPartitionsWithIndex(
            lambda p, it: [tasks.decode_unit(p, tasks.indexed_records(it, paths), captures, roles, raw)]))
    if plan.bins:
        bins = [(nparts + i, b) for i, b in enumerate(plan.bins)]
        parts.append(sc.parallelize(bins, len(bins)).map(
            lambda ub: tasks.decode_whole(ub[0], ub[1], captures, roles, raw, target)))
    if plan.remote:
        parts.append(_remote_units(spark, plan, nparts + len(plan.bins), roles, raw, target))
    reports: list[tasks.UnitReport] = sc.union(parts).collect() if parts else []
    stages["decode"] = time.monotonic() - t

    timelines, redo = _java_timelines(reports, nparts)
    if redo and flows is not None:
        note("decode again (Java versions across connections)")
        t = time.monotonic()
        sc.setJobDescription("decode again: HA variants named with the whole capture's Java versions")
        again = flows.mapPartitionsWithIndex(
            lambda p, it: [tasks.decode_unit(p, tasks.indexed_records(it, paths), captures, roles, raw,
                                             timelines)])
        fresh = sc.runJob(again, lambda it: it, sorted(redo))
        reports = [r for r in reports if r.unit not in redo] + list(fresh)
        stages["decode again"] = time.monotonic() - t

    note("write")
    t = time.monotonic()
    streams = _stream_numbers(reports)
    sc.setJobDescription("tables: Parquet files with stream numbers")
    work = [(r.unit, streams.get(r.unit, {})) for r in reports if any(r.rows) and not r.final]
    counts = [sum(r.rows[i] for r in reports if r.final) for i in range(len(tasks.TABLES))]
    if work:
        for got in sc.parallelize(work, len(work)).map(
                lambda u: tasks.finish_unit(u[0], raw, target, u[1], u[0])).collect():
            counts = [a + b for a, b in zip(counts, got, strict=True)]
    for name in COLUMNS:
        d = out / name
        d.mkdir(exist_ok=True)
        if not any(d.glob("*.parquet")):
            import pyarrow.parquet as pq

            pq.write_table(empty_table(name), str(d / "part-empty.parquet"))
    stages["tables"] = time.monotonic() - t
    return counts, len(reports)


def _plan(spark: SparkSession, inputs: list[str], split_bytes: int | None) -> _Plan:
    """Which files are cut into splits (and where), which are decoded whole, in which bins."""
    captures: list[str] = []
    sizes: list[int] = []
    kinds: list[str] = []
    layouts: dict[int, FileLayout] = {}
    remote: list[int] = []
    for item in inputs:
        if is_remote(item):
            try:
                found = expand_remote(spark, item)
            except SourceError as err:
                raise AnalysisError(str(err)) from None
            for url, size in found:
                remote.append(len(captures))
                captures.append(url)
                sizes.append(size)
                kinds.append("remote")
            continue
        try:
            lay = file_layout(item)
        except CaptureFileError as err:
            raise AnalysisError(str(err)) from None
        layouts[len(captures)] = lay
        captures.append(lay.path)
        sizes.append(lay.size)
        kinds.append(lay.kind)
    if len(set(captures)) != len(captures):
        dup = next(c for c in captures if captures.count(c) > 1)
        raise AnalysisError(f"{dup}: named twice")
    parallelism = spark.sparkContext.defaultParallelism
    target = split_bytes or split_target(sum(sizes), parallelism)
    cut = [(fid, lay) for fid, lay in layouts.items()
           if lay.kind != "gzip" and lay.size - lay.data_start > target]
    splits, rewalked, volumes = plan_splits(spark, cut, target) if cut else ([], 0, {})
    cut_ids = {fid for fid, _lay in cut}
    whole = [fid for fid in layouts if fid not in cut_ids]
    ranged_layouts = _remote_layouts(spark, [f for f in remote if sizes[f] - 24 > target], captures, sizes)
    for f in remote:
        if f not in ranged_layouts and sizes[f] > MAX_REMOTE_BYTES:
            raise AnalysisError(
                f"{captures[f]}: {sizes[f]:,} bytes; a gzip'd file read through Spark's file systems is "
                "read whole (gzip has no random access to cut it into byte ranges) and must be below 2 GiB "
                "(rotate captures smaller, or store them uncompressed: pcap and pcapng files are read by "
                "byte ranges)")
    ranged = None
    if ranged_layouts:
        ranged, n = _remote_splits(spark, ranged_layouts, captures, target)
        rewalked += n
    for f, lay in ranged_layouts.items():
        kinds[f] = f"remote {lay.kind}"
    for f in remote:
        if f not in ranged_layouts and sizes[f] - 24 > target:
            kinds[f] = "remote gzip"  # bigger than a split and not cut: _remote_layouts read it as gzip
    split_total = sum(lay.size for _fid, lay in cut) + sum(lay.size for lay in ranged_layouts.values())
    return _Plan(captures, sizes, kinds, splits, _bins(whole, sizes, captures, target, parallelism),
                 [f for f in remote if f not in ranged_layouts], rewalked, split_total, volumes, ranged)


#: how a gzip'd file is read (the job's captures say it, and the terminal output)
WHOLE_GZIP = "whole (gzip'd: no random access, one task)"


def _how_read(plan: _Plan, file_id: int) -> str:
    """``byte ranges`` (many tasks), or why one task reads the file whole."""
    if any(fid == file_id for fid, _s, _l in plan.splits) or (plan.ranged and file_id in plan.ranged.layouts):
        return "byte ranges"
    if plan.kinds[file_id] in ("gzip", "remote gzip") or plan.captures[file_id].endswith(".gz"):
        return WHOLE_GZIP
    return "whole (no bigger than a split)"


def _read_tasks(plan: _Plan, file_id: int) -> dict[str, int]:
    """For a remote file read by byte ranges: how many tasks read it."""
    if plan.ranged is None or file_id not in plan.ranged.layouts:
        return {}
    return {"read_tasks": plan.ranged.tasks.get(file_id, 0)}


def _remote_layouts(spark: SparkSession, files: list[int], captures: list[str],
                    sizes: list[int]) -> dict[int, FileLayout]:
    """The remote files bigger than a split that are classic pcap or pcapng (read by byte ranges),
    with their layouts from their first bytes, read on the driver."""
    out: dict[int, FileLayout] = {}
    for f in files:
        try:
            lay = layout_of(captures[f], read_range(spark, captures[f], 0, 64), sizes[f])
        except CaptureFileError as err:
            raise AnalysisError(str(err)) from None
        except Exception as err:  # py4j: the file system's own error
            raise AnalysisError(f"{captures[f]}: {failure_reason(err)}") from None
        if lay.kind in ("pcap", "pcapng"):
            out[f] = lay
    return out


_PARTITION_BYTES = "spark.sql.files.maxPartitionBytes"
#: Arrow batches of the text source's lines handed to Python: bounded in bytes (a few long lines
#: must not make a batch too big for Arrow's 32-bit offsets)
_ARROW_BYTES = "spark.sql.execution.arrow.maxBytesPerBatch"
#: settings the job changes for its own queries and puts back when it ends
_SAVED_CONF = (_PARTITION_BYTES, _ARROW_BYTES)
#: bytes after each remote byte range its scan gets, from the start of the next range (a classic pcap
#: record header straddling the end; a whole pcapng block, whose length is checked at its end: a
#: longer one leaves the range to the driver's walk). A record's data beyond them is read by the
#: driver. They travel to the driver and to every task: a few per range, not a share of the data
_SCAN_SEAM = {"pcap": 16 * 1024, "pcapng": 256 * 1024}


def _remote_splits(spark: SparkSession, layouts: dict[int, FileLayout], captures: list[str],
                   target: int) -> tuple[_Ranged, int]:
    """Remote classic pcap and pcapng files cut into byte ranges by Spark's own reader, so that many
    tasks read one file: its text source with lines cut at ``\\n`` splits a file at about ``target``
    bytes and hands the raw bytes on (a line cast to binary is the file's bytes; only the ``\\n``
    that ended it is dropped). The lines cross to Python as Arrow record batches, unpickled
    (:func:`_arrow_batches`), and are joined there into each range's bytes
    (:func:`analysis.tasks.joined_lines`), which Spark keeps (memory, then disk) for the jobs
    after: each range is read from its file system once. A first job places
    every range in its file (the sum of the lengths before it) and brings the first bytes of each
    to the driver (the seam the range before needs); the scan of each range and the verification
    of the boundaries are those of local files (``wire.capture.splits``; a split walked again is
    read through Hadoop's FileSystem on the driver)."""
    spark.conf.set(_PARTITION_BYTES, str(target))  # until the end of the job (run_job puts it back)
    spark.conf.set(_ARROW_BYTES, str(64 << 20))
    urls = {f: captures[f] for f in layouts}
    frame = (spark.read.format("text").option("lineSep", "\n").load(list(urls.values()))
             .selectExpr("input_file_name() AS f", "input_file_block_start() AS s",
                         "CAST(value AS BINARY) AS v"))
    from pyspark import StorageLevel

    data = _arrow_batches(frame).mapPartitions(
        lambda messages: tasks.range_bytes(tasks.joined_lines(tasks.line_batches(messages))))
    data.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        return _place_and_scan(spark, data, layouts, urls, target)
    except BaseException:
        data.unpersist()
        raise


def _arrow_batches(frame: Any) -> Any:
    """The rows of ``frame`` as Arrow record batches, each handed to Python as the bytes of one IPC
    message (an RDD of bytes): Spark's own converter, whose byte arrays reach a Python worker as
    they are. ``DataFrame.rdd`` would pickle every row, and its binary values as Latin-1 text."""
    from pyspark import RDD
    from pyspark.serializers import NoOpSerializer

    return RDD(frame._jdf.toArrowBatchRdd().toJavaRDD(), frame.sparkSession.sparkContext, NoOpSerializer())


def _place_and_scan(spark: SparkSession, data: Any, layouts: dict[int, FileLayout], urls: dict[int, str],
                    target: int) -> tuple[_Ranged, int]:
    """The jobs of :func:`_remote_splits` over the ranges' bytes (``data``)."""
    sc = spark.sparkContext
    ids = {u: f for f, u in urls.items()}
    seam_of = {f: _SCAN_SEAM[lay.kind] for f, lay in layouts.items()}

    def measure(part: int, ranges: Iterable[tuple[str, int, bytes]]
                ) -> Iterator[tuple[str, int, int, bytes, int]]:
        for name, start, got in ranges:
            yield name, start, len(got), got[:seam_of[_file_id(ids, name)]], part

    sc.setJobDescription("ranges: the remote files' byte ranges read into Python, each placed in its file")
    lengths = data.mapPartitionsWithIndex(measure).collect()
    per: dict[int, list[tuple[int, str, int, bytes]]] = {}
    readers: dict[int, set[int]] = {}
    for name, start, n, first, part in lengths:
        f = _file_id(ids, name)
        per.setdefault(f, []).append((int(start), name, int(n), first))
        readers.setdefault(f, set()).add(part)
    chunks: dict[tuple[str, int], tasks.Chunk] = {}
    by_file: dict[int, list[tasks.Chunk]] = {}
    seams: dict[tuple[int, int], bytes] = {}
    for f, blocks in per.items():
        at = 0
        heads = []
        for k, (start, name, n, first) in enumerate(sorted(blocks)):
            c = tasks.Chunk(f, k, at, min(at + n, layouts[f].size))
            chunks[name, start] = c
            by_file.setdefault(f, []).append(c)
            heads.append(first[:c.end - c.start])
            at += n
        if at not in (layouts[f].size, layouts[f].size + 1):
            raise AnalysisError(f"{urls[f]}: Spark read {at:,} bytes of {layouts[f].size:,} "
                                "(did the file change?)")
        seam = _SCAN_SEAM[layouts[f].kind]
        for k in range(len(heads)):
            after, j = b"", k + 1
            while len(after) < seam and j < len(heads):
                after += heads[j]
                j += 1
            seams[f, k] = after[:seam]
    known = sc.broadcast(chunks)
    scan_seams = sc.broadcast(seams)
    lays = sc.broadcast(layouts)
    sc.setJobDescription("scan: record boundaries of the remote byte ranges")

    def scan(item: tuple[str, int, bytes]) -> tuple[int, SplitScan]:
        c = known.value[item[0], item[1]]
        return c.file_id, tasks.scan_chunk(c, item[2], scan_seams.value[c.file_id, c.index],
                                           lays.value[c.file_id])

    scans: dict[int, list[SplitScan]] = {}
    for f, got in data.map(scan).collect():
        scans.setdefault(f, []).append(got)
    rewalked = 0
    splits: dict[tuple[int, int], tuple[Split, bytes]] = {}
    states: dict[int, dict[int, bytes]] = {}
    for f, lay in layouts.items():
        with RemoteFile(spark, urls[f]) as rf:
            def rewalk(index: int, first: int, end: int, state: tuple[str, int],
                       lay: FileLayout = lay, rf: RemoteFile = rf) -> SplitScan:
                return walk(lay, cast(BinaryIO, rf), index, first, end, first, state)

            try:
                plan, n = resolve(lay, scans.get(f, []), rewalk)
            except CaptureFileError as err:
                raise AnalysisError(str(err)) from None
            rewalked += n
            ends = {c.index: c.end for c in by_file[f]}
            for sp in plan:
                end = ends[sp.index]
                after = seams[f, sp.index]
                rest = (b"" if sp.stop <= end else after[:sp.stop - end] if sp.stop - end <= len(after)
                        else rf.pread(end, sp.stop - end))
                splits[f, sp.index] = (sp, rest)
            if lay.kind == "pcapng":
                states[f] = _pcapng_state(lay, rf, plan)
    ranged = _Ranged(data, chunks, layouts, splits, {f: len(r) for f, r in readers.items()}, states)
    return ranged, rewalked


def _pcapng_state(lay: FileLayout, rf: RemoteFile, plan: list[Split]) -> dict[int, bytes]:
    """The bytes a pcapng split's reader needs besides its range, by offset: the file's first
    section header and the section headers and interface descriptions its splits replay."""
    out = {0: rf.pread(0, lay.data_start)}
    endian = lay.endian
    for at in sorted({b for sp in plan for b in sp.replay}):
        h = rf.pread(at, 12)
        if h[:4] == b"\x0a\x0d\x0d\x0a":
            endian = "<" if h[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
        out[at] = rf.pread(at, int.from_bytes(h[4:8], "little" if endian == "<" else "big"))
    return out


def _bins(files: list[int], sizes: list[int], captures: list[str], target: int,
          parallelism: int) -> list[list[tasks.WholeFile]]:
    """Whole files in bins (biggest first, each into the emptiest bin): at least three per core
    while there are files enough, more when the files add up to more than ``target`` each, so that
    many small files share tasks and no task gets much more than another. Biggest bins first
    (Spark starts tasks in order, so the big ones do not end last)."""
    if not files:
        return []
    total = sum(sizes[f] for f in files)
    n = max(1, min(len(files), max(3 * parallelism, -(-total // max(target, 1)))))
    bins: list[list[tasks.WholeFile]] = [[] for _ in range(n)]
    load = [0] * n
    for f in sorted(files, key=lambda f: -sizes[f]):
        i = load.index(min(load))
        bins[i].append(tasks.WholeFile(f, captures[f]))
        load[i] += sizes[f]
    for b in bins:
        b.sort(key=lambda w: w.file_id)
    order = sorted(range(n), key=lambda i: -load[i])
    return [bins[i] for i in order if bins[i]]


def _remote_units(spark: SparkSession, plan: _Plan, first_unit: int, roles: PortRoles, raw: str,
                  target: str) -> Any:
    """Files read through Spark's file systems: Spark reads each whole (binaryFiles), several
    small ones per task, and each task decodes its files as one unit."""
    sc = spark.sparkContext
    urls = [plan.captures[f] for f in plan.remote]
    ids = {u: f for u, f in zip(urls, plan.remote, strict=True)}
    captures = plan.captures
    total = sum(plan.sizes[f] for f in plan.remote)
    n = max(1, min(len(urls), -(-total // split_target(total, sc.defaultParallelism))))
    rdd = sc.binaryFiles(",".join(urls), minPartitions=n)

    def unit(i: int, items: Iterable[tuple[str, bytes]]) -> Iterator[tasks.UnitReport]:
        files = [tasks.WholeFile(_file_id(ids, url), url, bytes(content)) for url, content in items]
        yield tasks.decode_whole(first_unit + i, files, captures, roles, raw, target)

    return rdd.mapPartitionsWithIndex(unit)


def _carried(spark: SparkSession, ranged: _Ranged, nparts: int) -> Any:
    """Map side for the remote byte ranges: each range's records, with their bytes, per flow partition
    (the ranges' bytes as the first job kept them)."""
    sc = spark.sparkContext
    known = sc.broadcast(ranged.chunks)
    splits = sc.broadcast(ranged.splits)
    lays = sc.broadcast(ranged.layouts)
    states = sc.broadcast(ranged.states)

    def carry(item: tuple[str, int, bytes]) -> Iterator[Any]:
        c = known.value[item[0], item[1]]
        got = splits.value.get((c.file_id, c.index))
        if got is not None:
            yield from tasks.carry_split(c, item[2], got[1], got[0], lays.value[c.file_id], nparts,
                                         states.value.get(c.file_id))

    return ranged.data.flatMap(carry)


def _file_id(ids: dict[str, int], url: str) -> int:
    found = ids.get(url)
    if found is None:  # Hadoop may qualify the path differently (an authority added or dropped)
        tail = url.partition("://")[2].lstrip("/").partition("/")[2]
        found = next(f for u, f in ids.items() if u.endswith("/" + tail) or u.endswith(tail))
    return found


def _java_timelines(
    reports: list[tasks.UnitReport], flow_units: int
) -> tuple[dict[int, list[tuple[int, int]]], set[int]]:
    """Each file's Java version timeline, and the flow partitions that decided an HA variant on less.

    ``CaptureDecoder`` names an AutoSwitch variant after the newest Java version seen so far in
    the whole capture; a flow partition knows only its own connections' versions. The reports say
    where each unit's version rose and what each decision saw; a decision that saw less than the
    file had shown before that record means its unit is decoded again with the timelines.
    """
    events: dict[int, list[tuple[int, int]]] = {}
    for r in reports:
        for f, record, version in r.versions:
            events.setdefault(f, []).append((record, version))
    timelines: dict[int, list[tuple[int, int]]] = {}
    for f, evs in events.items():
        evs.sort()
        best = 0
        line = []
        for record, version in evs:
            if version > best:
                best = version
                line.append((record, version))
        timelines[f] = line
    redo: set[int] = set()
    for r in reports:
        if r.unit >= flow_units:
            continue  # a whole file: its decoder saw every version
        for f, _conn, record, version in r.decisions:
            seen = max((v for rec, v in timelines.get(f, []) if rec < record), default=0)
            if seen != version:
                redo.add(r.unit)
    return timelines, redo


def _stream_numbers(reports: list[tasks.UnitReport]) -> dict[int, dict[int, int]]:
    """unit → (conn → stream number): each file's connections ranked by their first record."""
    per_file: dict[int, list[tuple[int, int, int]]] = {}
    for r in reports:
        for f, conn, first in r.connections:
            per_file.setdefault(f, []).append((first, conn, r.unit))
    out: dict[int, dict[int, int]] = {}
    for conns in per_file.values():
        conns.sort()
        for n, (_first, conn, unit) in enumerate(conns):
            out.setdefault(unit, {})[conn] = n
    return out


def _identity(k: int) -> int:
    return k
