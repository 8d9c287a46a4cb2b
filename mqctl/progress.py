# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A progress bar on stderr for long runs (``pcap decode``/``stats``, ``store inspect``).

The bar appears only on a terminal, and only once a run has lasted :data:`DELAY` seconds, so short
runs print nothing extra whatever the size of their input (a small gzip file may hold a long
capture). It is drawn by rich and removed when the run ends. When the command writes its rows to
the same terminal (``pcap decode`` without a redirect), the rows are the progress and no bar is drawn.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .output import Output

__all__ = ["DELAY", "progress"]

#: seconds a run lasts before its bar appears (``MQCTL_PROGRESS_DELAY`` overrides it)
DELAY = 0.5


def _delay() -> float:
    import os

    try:
        return float(os.environ.get("MQCTL_PROGRESS_DELAY", DELAY))
    except ValueError:
        return DELAY


@contextmanager
def progress(out: Output, total: int | None, description: str, *,
             rows_to_stdout: bool = False) -> Iterator[Callable[..., None]]:
    """``update(done[, total])``, to be called now and then with how much of ``total`` (bytes) is
    done (``total`` may be given or changed there)."""
    if not out.err.is_terminal or (rows_to_stdout and sys.stdout.isatty()):
        yield lambda _done, _total=None: None
        return
    started = time.monotonic()
    delay = _delay()
    state: dict[str, Any] = {"total": total}

    def update(done: int, total: int | None = None) -> None:
        if total is not None:
            state["total"] = total
        bar = state.get("bar")
        if bar is None:
            if time.monotonic() - started < delay:
                return
            bar = state["bar"] = _start(out, state["total"], description)
            state["task"] = bar.add_task(description, total=state["total"])
        bar.update(state["task"], completed=done, total=state["total"])

    try:
        yield update
    finally:
        bar = state.get("bar")
        if bar is not None:
            bar.stop()


def _start(out: Output, total: int | None, description: str) -> Any:
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns: list[Any] = [TextColumn("[progress.description]{task.description}"), BarColumn(),
                          DownloadColumn(), TransferSpeedColumn()]
    if total:
        columns.append(TimeRemainingColumn())
    bar = Progress(*columns, console=out.err, transient=True, redirect_stdout=False, redirect_stderr=False)
    bar.start()
    return bar
