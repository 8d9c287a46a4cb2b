# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The batch job: capture files → splits → records keyed by flow → per-flow decoding → Parquet.

Stages (each a Spark job or stage, shown by :mod:`analysis.progress`):

1. **scan** — every capture file is cut into byte ranges (:func:`wire.capture.splits.plan_ranges`);
   one task per range finds its first record boundary and walks the record headers to its end
   (:func:`~wire.capture.splits.scan_split`). The driver verifies the chain and re-walks any split
   whose candidate was wrong (:func:`~wire.capture.splits.resolve`), and so knows where every
   split starts and how many records come before it. A file of one range skips this stage.
2. **decode** — one task per split reads its records (:func:`~wire.capture.splits.split_records`)
   and keys each by its file and TCP endpoints (:func:`analysis.tasks.key_records`); the shuffle
   brings each connection's records to one partition, which sorts them by (file, record) and
   feeds them to ``wire.capture``'s decoder (:func:`analysis.tasks.decode_partition`).
3. **tables** — the rows become one DataFrame, cached; stream numbers are ranked from the
   connections' first records; each table is written as Parquet under ``OUT/<table>``.

Output directories are never emptied unless they hold this job's marker file
(``_mqctl_analysis.json``), so pointing ``--out`` at a directory of other files is an error, not
a loss.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from wire.capture import CaptureFileError, PortRoles
from wire.capture.splits import FileLayout, Split, SplitScan, file_layout, plan_ranges, resolve

from . import tasks
from .schema import COLUMNS, RAW, spark_schema

__all__ = ["MARKER", "AnalysisError", "JobResult", "expand_inputs", "plan_splits", "prepare_out", "run_job"]

MARKER = "_mqctl_analysis.json"
#: the default byte range one task reads
SPLIT_BYTES = 32 * 1024 * 1024
_CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz")


class AnalysisError(Exception):
    """A problem with the job's inputs or output that the user can fix (one line)."""


@dataclass
class JobResult:
    out: Path
    captures: list[dict[str, Any]]
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    splits: int = 0
    rewalked: int = 0


def expand_inputs(inputs: Iterable[str]) -> list[str]:
    """Files, directories (their capture files, recursively) and globs → capture paths, sorted per input.

    ``file://`` URLs are local paths. Other schemes are refused with a reason: executors read
    byte ranges with ordinary file I/O, so on a cluster the captures must be on a path every
    worker mounts.
    """
    out: list[str] = []
    for item in inputs:
        if "://" in item:
            scheme, _, rest = item.partition("://")
            if scheme != "file":
                raise AnalysisError(
                    f"{item}: only local paths and file:// are read (executors read byte ranges "
                    "with file I/O; on a cluster, put the captures on a path every worker mounts)"
                )
            item = rest
        p = Path(item)
        if p.is_dir():
            found = sorted(
                str(f)
                for f in p.rglob("*")
                if f.is_file() and f.name.endswith(_CAPTURE_SUFFIXES) and not f.name.startswith((".", "_"))
            )
            if not found:
                raise AnalysisError(
                    f"{item}: no capture files (*.pcap, *.pcapng, *.cap, gzip'd) in the directory"
                )
            out.extend(found)
        elif p.is_file():
            out.append(str(p))
        elif any(c in item for c in "*?["):
            found = sorted(f for f in glob.glob(item, recursive=True) if os.path.isfile(f))
            if not found:
                raise AnalysisError(f"{item}: the pattern matches no file")
            out.extend(found)
        else:
            raise AnalysisError(f"{item}: no such file or directory")
    seen: set[str] = set()
    unique = []
    for f in out:
        key = os.path.realpath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


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
    for name in COLUMNS:
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)


def plan_splits(
    spark: SparkSession, layouts: list[FileLayout], split_bytes: int
) -> tuple[list[tuple[int, Split, FileLayout]], int]:
    """Stage 1: the exact splits of every file, and how many had to be re-walked."""
    sc = spark.sparkContext
    ranges = [(fid, lay, plan_ranges(lay, split_bytes)) for fid, lay in enumerate(layouts)]
    work = [(lay, i, a, b) for _fid, lay, rs in ranges if len(rs) > 1 for i, (a, b) in enumerate(rs)]
    scans: dict[str, list[SplitScan]] = {}
    if work:
        sc.setJobDescription("scan: record boundaries of the byte ranges")
        slices = min(len(work), 4 * sc.defaultParallelism)
        for lay_scan in sc.parallelize(work, slices).map(tasks.scan_task).collect():
            scans.setdefault(lay_scan_path(work, lay_scan), []).append(lay_scan)
    out: list[tuple[int, Split, FileLayout]] = []
    rewalked = 0
    for fid, lay, rs in ranges:
        if len(rs) == 1:
            out.append(
                (fid, Split(lay.path, 0, lay.data_start, max(lay.size, lay.data_start) + 1, 0, -1), lay)
            )
            continue
        plan, n = resolve(lay, scans[lay.path])
        rewalked += n
        out.extend((fid, s, lay) for s in plan)
    return out, rewalked


def lay_scan_path(work: list[tuple[FileLayout, int, int, int]], scan: SplitScan) -> str:
    """The file a scan belongs to (scans of several files come back together)."""
    for lay, i, a, b in work:
        if (i, a, b) == (scan.index, scan.start, scan.end):
            return lay.path
    raise AssertionError("a scan of no planned range")  # pragma: no cover


def run_job(
    spark: SparkSession,
    inputs: list[str],
    out: Path,
    *,
    partitions: int | None = None,
    split_bytes: int = SPLIT_BYTES,
    roles: PortRoles | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> JobResult:
    """Run the whole batch job; the tables end up as Parquet under ``out``."""
    started = time.monotonic()
    note = on_stage or (lambda _s: None)
    try:
        layouts = [file_layout(p) for p in inputs]
    except CaptureFileError as err:
        raise AnalysisError(str(err)) from None
    prepare_out(out)
    sc = spark.sparkContext
    nparts = partitions or max(2, sc.defaultParallelism * 2)
    note("scan")
    splits, rewalked = plan_splits(spark, layouts, split_bytes)
    captures = [lay.path for lay in layouts]
    roles = roles or PortRoles()
    note("decode")
    sc.setJobDescription("decode: records by flow, reassembly and decoding per flow")
    # one task per split for big files; small files share tasks (a task costs more than a small file)
    slices = max(
        1, min(len(splits), max(4 * sc.defaultParallelism, sum(1 for s in splits if s[1].records != -1)))
    )
    keyed = (
        sc.parallelize(splits, slices)
        .mapPartitions(lambda it: tasks.key_records(it, nparts))
        .partitionBy(nparts, _identity)
    )

    def decoded(timelines: dict[int, list[tuple[int, int]]] | None) -> DataFrame:
        rows = keyed.mapPartitionsWithIndex(
            lambda part, it: tasks.decode_partition(part, _sorted_values(it), captures, roles, timelines)
        ).map(_union_row)
        return spark.createDataFrame(rows, _union_schema(), verifySchema=False).persist(
            StorageLevel.MEMORY_AND_DISK
        )

    union = decoded(None)
    timelines = _java_timelines(union)
    if timelines is not None:
        # an HA stream's variant was decided without a Java version another partition had seen:
        # decode again (the shuffle is reused) with every file's timeline
        note("decode again (Java versions across connections)")
        union.unpersist()
        union = decoded(timelines)
    try:
        tables = finish_tables(spark, union)
        note("write")
        counts: dict[str, int] = {}
        for name, df in tables.items():
            sc.setJobDescription(f"write: {name}")
            df.write.mode("overwrite").parquet(str(out / name))
        sc.setJobDescription("count rows")
        for r in union.groupBy("kind").count().collect():
            if r["kind"] < len(tasks.TABLES):
                counts[tasks.TABLES[r["kind"]]] = int(r["count"])
    finally:
        union.unpersist()
    info = [
        {
            "path": lay.path,
            "format": lay.kind,
            "bytes": lay.size,
            "splits": sum(1 for fid, _s, _l in splits if fid == i),
        }
        for i, lay in enumerate(layouts)
    ]
    result = JobResult(
        out,
        info,
        {name: counts.get(name, 0) for name in tasks.TABLES},
        time.monotonic() - started,
        len(splits),
        rewalked,
    )
    (out / MARKER).write_text(
        json.dumps(
            {
                "captures": info,
                "rows": result.counts,
                "seconds": result.seconds,
                "splits": result.splits,
                "rewalked": rewalked,
            },
            indent=1,
        )
        + "\n"
    )
    return result


def _java_timelines(union: DataFrame) -> dict[int, list[tuple[int, int]]] | None:
    """Each file's Java version timeline, when some partition decided an HA variant on less than it.

    ``CaptureDecoder`` names an AutoSwitch variant after the newest Java version seen so far in
    the whole capture; a partition knows only its own connections' versions. The rows say where
    each partition's version rose and what each decision saw; when a decision saw less than the
    file had seen before that record, the timelines are needed (None: every decision was exact).
    """
    sc_rows = union.where(f"kind >= {tasks.VERSIONS}").select("kind", "versions", "decisions").collect()
    events: dict[int, list[tuple[int, int]]] = {}
    decisions = []
    for r in sc_rows:
        if r["kind"] == tasks.VERSIONS:
            v = r["versions"]
            events.setdefault(v["file"], []).append((v["record"], v["version"]))
        else:
            decisions.append(r["decisions"])
    if not decisions:
        return None
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
    for d in decisions:
        seen = max((v for rec, v in timelines.get(d["file"], []) if rec < d["record"]), default=0)
        if seen != d["version"]:
            return timelines
    return None


def _identity(k: int) -> int:
    return k


def _sorted_values(items: Iterable[tuple[int, Any]]) -> Iterator[Any]:
    """A partition's records in (file, record) order, sorted with spilling to disk past 256 MB."""
    from pyspark.shuffle import ExternalSorter

    sorter: Any = ExternalSorter(256)  # type: ignore[no-untyped-call]  # untyped in pyspark
    return iter(sorter.sorted((v for _k, v in items), key=_file_record))


def _file_record(v: tuple[int, int, float, int, bytes]) -> tuple[int, int]:
    return v[0], v[1]


def _union_row(item: tuple[int, tuple[Any, ...]]) -> tuple[Any, ...]:
    table, row = item
    cells: list[Any] = [table, None, None, None, None, None, None, None, None]
    cells[1 + table] = row
    return tuple(cells)


def _union_schema() -> Any:
    from pyspark.sql.types import IntegerType, StructField, StructType

    fields = [StructField("kind", IntegerType(), False)]
    fields.extend(StructField(name, spark_schema(RAW[name]), True) for name in tasks.TABLES)
    fields.append(
        StructField(
            "versions",
            spark_schema([("file", "int", ""), ("record", "bigint", ""), ("version", "int", "")]),
            True,
        )
    )
    fields.append(
        StructField(
            "decisions",
            spark_schema(
                [
                    ("file", "int", ""),
                    ("conn", "bigint", ""),
                    ("record", "bigint", ""),
                    ("version", "int", ""),
                ]
            ),
            True,
        )
    )
    return StructType(fields)


def finish_tables(spark: SparkSession, union: DataFrame) -> dict[str, DataFrame]:
    """The written tables from the union of raw rows: stream numbers in, local ids out."""
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    raw = {name: union.where(F.col("kind") == i).select(f"{name}.*") for i, name in enumerate(tasks.TABLES)}
    streams = (
        raw["connections"]
        .withColumn(
            "stream",
            (F.row_number().over(Window.partitionBy("capture").orderBy("first_record")) - 1).cast("int"),
        )
        .select("capture", "conn", "stream", "local_stream")
    )
    out: dict[str, DataFrame] = {}
    for name, df in raw.items():
        if name == "connections":
            joined = df.join(streams.select("capture", "conn", "stream"), ["capture", "conn"], "left")
        elif name == "problems":
            joined = df.join(
                F.broadcast(streams.select("capture", "conn", "stream")), ["capture", "conn"], "left"
            )
            # the message names the stream by number: the partition's number becomes the file's
            local = F.concat(F.lit("stream "), F.col("local_stream").cast("string"))
            joined = joined.withColumn(
                "message",
                F.when(
                    F.col("stream").isNotNull() & F.col("message").startswith(local),
                    F.concat(
                        F.lit("stream "),
                        F.col("stream").cast("string"),
                        F.expr(
                            "substring(message, length(concat('stream ', cast(local_stream as string))) + 1)"
                        ),
                    ),
                ).otherwise(F.col("message")),
            )
        else:
            joined = df.join(
                F.broadcast(streams.select("capture", "conn", "stream")), ["capture", "conn"], "left"
            )
        out[name] = joined.select(*[c for c, _t, _d in COLUMNS[name]])
    return out
