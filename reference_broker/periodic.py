# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The servers' background loops, and how they report a failure.

A loop of ours (a flusher, the cleaner, the broker's re-registration, the name server's scans) must
outlive a bad turn, so it catches every ``Exception``; but it tells what it expected from what it
did not. An expected failure (an ``OSError`` from a full disk) is one error line with its reason.
Anything else is a bug of ours: it is logged with its traceback (``log.exception``), which the
test suite turns into a failed test (``tests/conftest.py``).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable

__all__ = ["every", "log_failure", "wait_event"]


def log_failure(log: logging.Logger, what: str, exc: Exception,
                expected: tuple[type[Exception], ...]) -> None:
    """One error line for an expected failure, the traceback for anything else."""
    if isinstance(exc, expected):
        log.error("%s failed: %s", what, exc)
    else:
        log.error("%s failed", what, exc_info=exc)


async def every(seconds: float, job: Callable[[], object], what: str, log: logging.Logger,
                expected: tuple[type[Exception], ...] = (), *, first: float | None = None) -> None:
    """Run ``job`` (a function, or one that returns an awaitable) every ``seconds`` (at least
    10 ms), the first time after ``first`` seconds (default: ``seconds``), until cancelled."""
    seconds = max(0.01, seconds)
    await asyncio.sleep(seconds if first is None else first)
    while True:
        try:
            result = job()
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            log_failure(log, what, exc, expected)
        await asyncio.sleep(seconds)


async def wait_event(event: asyncio.Event, seconds: float) -> bool:
    """Wait until ``event`` is set or ``seconds`` pass; True if it is set.

    ``asyncio.wait_for(event.wait(), seconds)`` on Python 3.11 drops a cancellation that arrives
    as the event is set (it returns the inner result instead), so a loop that waits that way may
    never stop; ``asyncio.timeout`` never loses the caller's cancellation.
    """
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return event.is_set()
    return True
