# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Progress of the Spark stages on the terminal: one rich bar per active stage, with its job's
description (scan, decode, write: ...) and completed/total tasks, polled from Spark's status
tracker a few times a second on a thread of the driver. Off the terminal it prints nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession

__all__ = ["stage_progress"]


@contextmanager
def stage_progress(spark: SparkSession, console: Any, *, enabled: bool = True) -> Iterator[None]:
    """Show the stages while the body runs (``console``: a rich Console, normally stderr)."""
    if not enabled or not console.is_terminal:
        yield
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    tracker = spark.sparkContext.statusTracker()
    stop = threading.Event()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("tasks"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        shown: dict[int, Any] = {}

        def poll() -> None:
            while not stop.wait(0.25):
                try:
                    active = set(tracker.getActiveStageIds())
                    for sid in active:
                        info = tracker.getStageInfo(sid)
                        if info is None:
                            continue
                        desc = f"stage {sid}: {info.name.split(' at ')[0]}"
                        job = _job_description(spark, tracker, sid)
                        if job:
                            desc = f"{job} (stage {sid})"
                        if sid not in shown:
                            shown[sid] = bar.add_task(desc, total=info.numTasks)
                        bar.update(
                            shown[sid],
                            completed=info.numCompletedTasks,
                            total=info.numTasks,
                            description=desc,
                        )
                    for sid in list(shown):
                        if sid not in active:
                            bar.remove_task(shown.pop(sid))
                except Exception:  # the tracker goes away with the session: stop quietly
                    return

        thread = threading.Thread(target=poll, name="spark-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=2)


def _job_description(spark: SparkSession, tracker: Any, stage: int) -> str | None:
    for jid in tracker.getActiveJobsIds():
        job = tracker.getJobInfo(jid)
        if job is not None and stage in job.stageIds:
            desc = spark.sparkContext.getLocalProperty("spark.job.description")
            return desc
    return None
