# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The capture pipeline as a Spark job (PySpark is imported in this package and nowhere else).

:func:`analyze` is the one entry point the CLI calls: it starts (or reuses) a SparkSession on the
given master, runs the batch job of :mod:`analysis.job` (byte-range splits, shuffle by flow,
``wire.capture``'s decoder per flow, Parquet tables), computes the metrics of
:mod:`analysis.metrics` with Spark SQL, and writes the HTML report of :mod:`analysis.report`.
The tables and their columns are documented in docs/analysis.md (from :mod:`analysis.schema`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["analyze"]


def analyze(
    inputs: list[str],
    out: Path,
    *,
    master: str = "local[*]",
    partitions: int | None = None,
    report: bool = True,
    split_bytes: int | None = None,
    roles: Any = None,
    console: Any = None,
    on_stage: Callable[[str], None] | None = None,
    spark: Any = None,
    conf: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Analyse the captures into ``out``; returns the job's figures and the metrics (plain data)."""
    from .job import expand_inputs, prepare_out, run_job
    from .metrics import compute
    from .progress import stage_progress
    from .report import write_report
    from .session import build_session, default_conf

    files = expand_inputs(inputs)
    prepare_out(out)  # before Spark starts: a bad --out costs nothing
    session = spark or build_session(default_conf(master, shuffle_partitions=partitions or 8, extra=conf))
    with stage_progress(session, console, enabled=console is not None):
        result = run_job(
            session,
            files,
            out,
            partitions=partitions,
            split_bytes=split_bytes,
            roles=roles,
            on_stage=on_stage,
        )
        metrics = compute(session, out)
    path = write_report(out / "report.html", metrics, files) if report else None
    return {
        "out": str(out),
        "report": str(path) if path else None,
        "captures": result.captures,
        "rows": result.counts,
        "splits": result.splits,
        "rewalked_splits": result.rewalked,
        "seconds": round(result.seconds, 3),
        "stages": result.stages,
        "master": session.sparkContext.master,
        "metrics": metrics,
    }
