# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Follow mode: Spark Structured Streaming over a directory that capture files are rotated into.

A file stream source (``binaryFile`` format, ``*.pcap``/``*.pcapng``, paths only: the contents are
read by the batch job's own split readers) yields the files that arrived since the last
micro-batch; ``foreachBatch`` analyses them with :func:`analysis.job.run_job` into
``OUT/batches/N`` and recomputes the metrics and the report over every batch so far. Spark's file
source skips names starting with ``.`` or ``_``: a writer should rotate a finished file in under
its final name (write ``.capture.pcap``, then rename). The checkpoint lives in ``OUT/_checkpoint``,
so a restarted follow picks up where it stopped. A batch that fails (a damaged file) is reported
through ``on_update`` with an ``error`` and the follow goes on. Ctrl-C stops it.
``mqctl pcap record --rotate-seconds N --write DIR`` writes files the way this wants them.
"""

from __future__ import annotations

import json
import shutil
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .job import MARKER, AnalysisError, failure_reason, run_job
from .metrics import compute_over
from .progress import stage_progress
from .report import write_report
from .session import build_session, default_conf

__all__ = ["follow"]


def follow(
    directory: Path,
    out: Path,
    *,
    master: str = "local[*]",
    partitions: int | None = None,
    roles: Any = None,
    console: Any = None,
    on_update: Callable[[dict[str, Any]], None] | None = None,
    trigger_seconds: float = 5.0,
    spark: Any = None,
    stop_after: int | None = None,
    conf: dict[str, str] | None = None,
    stop: Callable[[], bool] | None = None,
) -> int:
    """Analyse files as they arrive in ``directory`` until Ctrl-C, ``stop_after`` batches or ``stop()``
    returns true (checked every second); returns the number of batches analysed."""
    if not directory.is_dir():
        raise AnalysisError(f"--follow {directory}: not a directory")
    if (
        out.exists()
        and any(out.iterdir())
        and not (out / MARKER).is_file()
        and not (out / "batches").is_dir()
    ):
        raise AnalysisError(f"--out {out}: the directory is not empty and holds no previous analysis")
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("{}\n")
    session = spark or build_session(default_conf(master, shuffle_partitions=partitions or 8, extra=conf))
    done = [0]

    def batch(df: Any, batch_id: int) -> None:
        files = [_local(r["path"]) for r in df.select("path").collect()]
        if not files:
            return
        files.sort()
        started = time.monotonic()
        target = out / "batches" / f"{batch_id:06d}"
        try:
            result = run_job(session, files, target, partitions=partitions, roles=roles)
        except Exception as err:  # a damaged file: say so and keep following
            if (target / MARKER).is_file():
                shutil.rmtree(target)
            if on_update is not None:
                on_update({"batch": batch_id, "files": files, "error": failure_reason(err)})
            return
        # a restarted follow goes on from its checkpoint: the batches analysed before stay in, and a
        # batch a stopped run had not finished is analysed again into the same place, so the
        # captures so far are those of the finished batches (never a file twice)
        complete = _complete(out / "batches")
        seen = _captures(complete)
        metrics = compute_over(session, complete)
        write_report(out / "report.html", metrics, seen)
        done[0] += 1
        if on_update is not None:
            on_update(
                {
                    "batch": batch_id,
                    "files": files,
                    "rows": result.counts,
                    "metrics": metrics,
                    "report": str(out / "report.html"),
                    "captures": list(seen),
                    "splits": result.splits,
                    "seconds": round(time.monotonic() - started, 3),
                    "master": session.sparkContext.master,
                }
            )

    stream = (
        session.readStream.format("binaryFile")
        # a streaming source must be given its schema (binaryFile's own); only the path is read
        .schema("path STRING, modificationTime TIMESTAMP, length BIGINT, content BINARY")
        .option("pathGlobFilter", "*.pcap*")
        .option("recursiveFileLookup", "true")
        .load(str(directory))
        .select("path")
    )
    query = (
        stream.writeStream.foreachBatch(batch)
        .option("checkpointLocation", str(out / "_checkpoint"))
        .trigger(processingTime=f"{trigger_seconds} seconds")
        .start()
    )
    # Ctrl-C (and SIGTERM) only ask the loop below to end: a KeyboardInterrupt raised inside a py4j
    # call breaks its connection to the JVM, and the query could not be stopped cleanly any more
    signals: list[int] = []
    previous = _catch_signals(signals)
    try:
        with stage_progress(session, console, enabled=console is not None):
            while query.isActive and not signals:
                query.awaitTermination(1)
                if (stop_after is not None and done[0] >= stop_after) or (stop is not None and stop()):
                    break
    except KeyboardInterrupt:
        pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        query.stop()
    return done[0]


def _catch_signals(into: list[int]) -> dict[int, Any]:
    """SIGINT and SIGTERM append to ``into`` instead of interrupting; returns the handlers they
    had. Only the main thread may set handlers: elsewhere (a follow run from a thread) nothing
    changes."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: signal.signal(s, lambda signum, _frame: into.append(signum))
            for s in (signal.SIGINT, signal.SIGTERM)}


def _complete(batches: Path) -> list[Path]:
    """The batch outputs whose job finished (its marker says so)."""
    out = []
    for d in sorted(batches.glob("[0-9]*")):
        try:
            done = json.loads((d / MARKER).read_text()).get("complete")
        except (OSError, ValueError):
            continue
        if done:
            out.append(d)
    return out


def _captures(batches: list[Path]) -> list[str]:
    """The captures the finished batches analysed, in batch order."""
    return [c["path"] for d in batches for c in json.loads((d / MARKER).read_text()).get("captures", [])]


def _local(path: str) -> str:
    """A path as the stream lists it (a URI) → what run_job takes: a local path for ``file:`` URIs
    (unquoted), any other URL as it is."""
    if path.startswith("file:"):
        return unquote(urlparse(path).path)
    return path

