# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Per-group pull rates (``BrokerStatsManager``'s ``GROUP_GET_NUMS``), for ConsumeStats' ``consumeTps``.

Java samples the counters every 10 s and reports the rate over the last minute; we keep the
pulls of the last minute per (group, topic) and divide by the minute.
"""

from __future__ import annotations

import time
from collections import deque

__all__ = ["GroupGetStats"]

WINDOW_MS = 60_000


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class GroupGetStats:
    """Messages pulled per (group, topic) over the last minute."""

    def __init__(self) -> None:
        self._events: dict[tuple[str, str], deque[tuple[int, int]]] = {}

    def record(self, group: str, topic: str, count: int, now_ms: int | None = None) -> None:
        now = _now_ms() if now_ms is None else now_ms
        q = self._events.get((group, topic))
        if q is None:
            q = self._events[(group, topic)] = deque()
        if q and q[-1][0] // 1000 == now // 1000:
            ts, n = q[-1]
            q[-1] = (ts, n + count)
        else:
            q.append((now, count))
        while q and q[0][0] < now - WINDOW_MS:
            q.popleft()

    def tps(self, group: str, topic: str, now_ms: int | None = None) -> float:
        """``tpsGroupGetNums``: messages per second over the last minute."""
        now = _now_ms() if now_ms is None else now_ms
        q = self._events.get((group, topic))
        if not q:
            return 0.0
        return sum(n for ts, n in q if ts >= now - WINDOW_MS) * 1000.0 / WINDOW_MS
