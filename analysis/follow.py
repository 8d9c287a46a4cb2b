# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Follow mode: Spark Structured Streaming over a directory that capture files are rotated into.

A file stream source (``binaryFile`` format, ``*.pcap``/``*.pcapng``, paths only: the contents are
read by the batch job's own split readers) yields the files that arrived since the last
micro-batch; ``foreachBatch`` analyses them with :func:`analysis.job.run_job` into
``OUT/batches/N`` and recomputes the metrics and the report over every batch so far. Spark's file
source skips names starting with ``.`` or ``_``: a writer should rotate a finished file in under
its final name (write ``.capture.pcap``, then rename). The checkpoint lives in ``OUT/_checkpoint``,
so a restarted follow picks up where it stopped. Ctrl-C stops it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .job import MARKER, AnalysisError, run_job
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
) -> int:
    """Analyse files as they arrive in ``directory``; returns the number of batches analysed."""
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
    session = spark or build_session(default_conf(master, shuffle_partitions=partitions or 8))
    done = [0]

    def batch(df: Any, batch_id: int) -> None:
        paths = sorted(r["path"] for r in df.select("path").collect())
        files = [p[len("file:") :] if p.startswith("file:") else p for p in paths]
        if not files:
            return
        run_job(session, files, out / "batches" / f"{batch_id:06d}", partitions=partitions, roles=roles)
        metrics = compute_over(session, sorted((out / "batches").glob("[0-9]*")))
        write_report(out / "report.html", metrics, files)
        done[0] += 1
        if on_update is not None:
            on_update(
                {
                    "batch": batch_id,
                    "files": files,
                    "rows": {},
                    "metrics": metrics,
                    "report": str(out / "report.html"),
                    "captures": files,
                    "seconds": 0,
                    "master": session.sparkContext.master,
                }
            )

    stream = (
        session.readStream.format("binaryFile")
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
    try:
        with stage_progress(session, console, enabled=console is not None):
            while query.isActive:
                query.awaitTermination(1)
                if stop_after is not None and done[0] >= stop_after:
                    break
    except KeyboardInterrupt:
        pass
    finally:
        query.stop()
    return done[0]
