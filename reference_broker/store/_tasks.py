# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The store's background loops, and how they report a failure.

A loop of the store must outlive a bad turn (a flush that meets a full disk is tried again), so it
catches every ``Exception``; but it tells what it expected from what it did not. An expected
failure (an ``OSError`` from a disk) is one error line with its reason. Anything else is a bug of
ours: it is logged with its traceback (``log.exception``), which the test suite turns into a
failed test.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable

__all__ = ["every", "log_failure"]

log = logging.getLogger("reference_broker.store")


def log_failure(what: str, exc: Exception, expected: tuple[type[Exception], ...]) -> None:
    """One error line for an expected failure, the traceback for anything else."""
    if isinstance(exc, expected):
        log.error("%s failed: %s", what, exc)
    else:
        log.error("%s failed", what, exc_info=exc)


async def every(seconds: float, job: Callable[[], object], what: str,
                expected: tuple[type[Exception], ...] = (), *, at_start: bool = False) -> None:
    """Run ``job`` (a function, or one that returns an awaitable) every ``seconds``, first at
    once when ``at_start``, until cancelled."""
    if not at_start:
        await asyncio.sleep(seconds)
    while True:
        try:
            result = job()
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            log_failure(what, exc, expected)
        await asyncio.sleep(seconds)
