# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Clock and throughput figures the HA status reports."""

from __future__ import annotations

import time

__all__ = ["TransferSpeed", "now_ms"]


def now_ms() -> int:
    """Wall-clock milliseconds (what Java's ``SystemClock.now`` gives and the status shows)."""
    return time.time_ns() // 1_000_000


class TransferSpeed:
    """Bytes moved in the last whole second (``FlowMonitor.transferredByteInSecond``)."""

    __slots__ = ("_count", "_second", "last")

    def __init__(self) -> None:
        self._second = int(time.monotonic())
        self._count = 0
        self.last = 0

    def add(self, n: int) -> None:
        sec = int(time.monotonic())
        if sec != self._second:
            self.last = self._count if sec == self._second + 1 else 0
            self._second, self._count = sec, 0
        self._count += n

    def per_second(self) -> int:
        sec = int(time.monotonic())
        if sec == self._second:
            return self.last
        return self._count if sec == self._second + 1 else 0
