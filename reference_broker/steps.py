# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Work done in steps: a generator that yields between steps and returns its result.

A change whose cost follows the size of its input (a put of a large batch, a registration of many
topics) is written once, as such a generator. Where nothing else waits, :func:`run_steps` runs it
to its end at once; on the event loop, its caller awaits a loop pass at each ``yield``, so other
connections are served between the steps.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

__all__ = ["Steps", "run_steps"]

T = TypeVar("T")

#: work done in steps: yields between steps, returns its result
Steps = Generator[None, None, T]


def run_steps(steps: Steps[T]) -> T:
    """Run work done in steps to its end, with no pause."""
    try:
        while True:
            next(steps)
    except StopIteration as stop:
        result: T = stop.value
        return result
