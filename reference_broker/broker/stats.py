# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Per-group pull rates (``BrokerStatsManager``'s ``GROUP_GET_NUMS``), for ConsumeStats' ``consumeTps``.

Java samples the counters every 10 s and reports the rate over the last minute; we keep the
pulls of the last minute per (group, topic) and divide by the minute.
"""

from __future__ import annotations

import time
from collections import deque

__all__ = ["GroupGetStats", "StatsItems"]

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


#: the windows of ``StatsItem.getStatsDataInMinute/Hour/Day``, in milliseconds
_WINDOWS = {"minute": 60_000, "hour": 3_600_000, "day": 86_400_000}
#: samples are kept per 10 seconds, as ``StatsItem`` samples every 10 s
_BUCKET_MS = 10_000


class StatsItems:
    """``BrokerStatsManager``'s stats items that VIEW_BROKER_STATS_DATA (315) reports:
    ``TOPIC_PUT_NUMS`` (key: topic) and ``GROUP_GET_NUMS`` (key: ``topic@group``), each the sum of
    its values, their rate and the average value per call over the last minute, hour and day."""

    def __init__(self) -> None:
        #: (name, key) -> 10-second bucket -> [sum of values, calls]
        self._items: dict[tuple[str, str], dict[int, list[int]]] = {}

    def record(self, name: str, key: str, value: int, now_ms: int | None = None, calls: int = 1) -> None:
        """Add ``value`` to an item (``StatsItem.addValue``); ``calls`` says for how many calls
        (the sends of one run are counted in one go)."""
        now = _now_ms() if now_ms is None else now_ms
        item = (name, key)
        buckets = self._items.get(item)
        if buckets is None:
            buckets = self._items[item] = {}
        bucket = now // _BUCKET_MS
        cell = buckets.get(bucket)
        if cell is None:
            cell = buckets[bucket] = [0, 0]
            if len(buckets) > 8700:
                oldest = (now - _WINDOWS["day"]) // _BUCKET_MS
                for b in [b for b in buckets if b < oldest]:
                    del buckets[b]
        cell[0] += value
        cell[1] += calls

    def view(self, name: str, key: str, now_ms: int | None = None) -> dict[str, dict[str, float]] | None:
        """``{"minute"|"hour"|"day": {"sum", "tps", "avgpt"}}``, or ``None`` for an item never recorded."""
        buckets = self._items.get((name, key))
        if buckets is None:
            return None
        now = _now_ms() if now_ms is None else now_ms
        out: dict[str, dict[str, float]] = {}
        for window, span in _WINDOWS.items():
            first = (now - span) // _BUCKET_MS
            total = calls = 0
            for b, (value, n) in buckets.items():
                if b > first:
                    total += value
                    calls += n
            out[window] = {"sum": total, "tps": total * 1000.0 / span,
                           "avgpt": total / calls if calls else 0.0}
        return out
