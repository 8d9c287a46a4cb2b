# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Put/get counters and the runtime figures GET_BROKER_RUNTIME_INFO reports (``StoreStatsService``).

TPS values are computed as Java does: a snapshot of each counter is taken once a second (at most
601 kept) and a rate over N seconds compares the newest snapshot with the one N places before it;
while fewer snapshots exist the rate is the empty string, which is why a young broker reports
``putTps`` as ``"0.0 0.33 "``. Latency buckets and the put-time distribution are rotated once a
minute and the previous minute's figures are reported.
"""

from __future__ import annotations

import bisect
import math
import time
from collections import deque

from wire.java import java_double_to_string as java_double

__all__ = ["StoreStats", "java_double", "human_readable_bytes"]

_MAX_SNAPSHOTS = 600 + 1
_WINDOWS = (10, 60, 600)
_DISTRIBUTION_NAMES = ("[<=0ms]", "[0~10ms]", "[10~50ms]", "[50~100ms]", "[100~200ms]", "[200~500ms]",
                       "[500ms~1s]", "[1~2s]", "[2~3s]", "[3~4s]", "[4~5s]", "[5~10s]", "[10s~]")
_DISTRIBUTION_LIMITS = (0, 10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000)


def _latency_bucket_bounds() -> list[int]:
    # StoreStatsService.PUT_MESSAGE_ENTIRE_TIME_BUCKETS: (step, count) pairs, then +infinity
    out, at = [], 0
    for step, times in ((1, 20), (2, 15), (5, 10), (10, 10), (50, 6), (100, 5), (1000, 9)):
        for _ in range(times):
            at += step
            out.append(at)
    out.append(2**63 - 1)
    return out


_LATENCY_BOUNDS = _latency_bucket_bounds()


def human_readable_bytes(n: int) -> str:
    """``MixAll.humanReadableByteCount(bytes, false)``: "0 B", "1.5 KiB", "3.2 GiB"."""
    unit = 1024
    if n < unit:
        return f"{n} B"
    exp = int(math.log(n) / math.log(unit))
    return f"{n / unit ** exp:.1f} {'KMGTPE'[exp - 1]}iB"


class _Series:
    __slots__ = ("snaps",)

    def __init__(self) -> None:
        self.snaps: deque[tuple[int, int]] = deque(maxlen=_MAX_SNAPSHOTS)

    def add(self, ts: int, value: int) -> None:
        self.snaps.append((ts, value))

    def tps(self, window: int) -> float | None:
        if len(self.snaps) <= window:
            return None
        t1, v1 = self.snaps[-1]
        t0, v0 = self.snaps[-(window + 1)]
        if t1 == t0:
            return None
        return (v1 - v0) / (t1 - t0) * 1000

    def triple(self) -> str:
        return " ".join("" if (v := self.tps(w)) is None else java_double(v) for w in _WINDOWS)


class StoreStats:
    """The store's counters (``StoreStatsService``)."""

    def __init__(self, now_ms: int | None = None) -> None:
        self.boot_timestamp = int(time.time() * 1000) if now_ms is None else now_ms
        self.put_times_total = 0
        self.put_size_total = 0
        self.put_failed_times = 0
        self.get_found_total = 0
        self.get_miss_total = 0
        self.get_transferred_total = 0
        self.put_entire_time_max = 0
        self.get_entire_time_max = 0
        self._put = _Series()
        self._found = _Series()
        self._miss = _Series()
        self._transferred = _Series()
        self._distribution = [0] * len(_DISTRIBUTION_NAMES)
        self._last_distribution: list[int] | None = None
        self._latency = [0] * len(_LATENCY_BOUNDS)
        self._last_latency = [0] * len(_LATENCY_BOUNDS)
        self._last_rotate = self.boot_timestamp
        #: (put total, get total) at the start of today and of yesterday (BrokerStats)
        self.morning: dict[str, int] = dict.fromkeys(("put_today", "get_today", "put_yesterday",
                                                      "get_yesterday"), 0)
        self._day = time.localtime(self.boot_timestamp / 1000).tm_yday

    # ------------------------------------------------------------------ recording
    def record_put(self, count: int, size: int, elapsed_ms: int) -> None:
        """One put of ``count`` messages and ``size`` bytes that took ``elapsed_ms``."""
        self.put_times_total += count
        self.put_size_total += size
        if elapsed_ms <= 0:
            # nearly every put: the first bucket of both tables ([<=0ms] and <= 1 ms)
            self._distribution[0] += 1
            self._latency[0] += 1
            return
        self._timed(1, elapsed_ms)

    def record_puts(self, puts: int, count: int, size: int, elapsed_ms: int) -> None:
        """:meth:`record_put` of ``puts`` puts that took ``elapsed_ms`` each, ``count`` messages
        and ``size`` bytes in all (the puts of one run)."""
        self.put_times_total += count
        self.put_size_total += size
        if elapsed_ms <= 0:
            self._distribution[0] += puts
            self._latency[0] += puts
            return
        self._timed(puts, elapsed_ms)

    def _timed(self, puts: int, elapsed_ms: int) -> None:
        self.put_entire_time_max = max(self.put_entire_time_max, elapsed_ms)
        # the first bucket whose limit the time does not pass
        self._distribution[bisect.bisect_left(_DISTRIBUTION_LIMITS, elapsed_ms)] += puts
        j = bisect.bisect_left(_LATENCY_BOUNDS, elapsed_ms)
        if j < len(_LATENCY_BOUNDS):
            self._latency[j] += puts

    def record_put_failed(self) -> None:
        self.put_failed_times += 1

    def record_get(self, found: int, missed: bool, elapsed_ms: int = 0) -> None:
        if missed:
            self.get_miss_total += 1
        else:
            self.get_found_total += 1
        self.get_transferred_total += found
        self.get_entire_time_max = max(self.get_entire_time_max, elapsed_ms)

    def sample(self, now_ms: int | None = None) -> None:
        """Take the once-a-second snapshots (``StoreStatsService.sampling``) and rotate the
        per-minute figures (``printTps``)."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        self._put.add(now, self.put_times_total)
        self._found.add(now, self.get_found_total)
        self._miss.add(now, self.get_miss_total)
        self._transferred.add(now, self.get_transferred_total)
        if now - self._last_rotate >= 60_000:
            self._last_rotate = now
            self._last_distribution = self._distribution
            self._distribution = [0] * len(_DISTRIBUTION_NAMES)
            self._last_latency = self._latency
            self._latency = [0] * len(_LATENCY_BOUNDS)
        day = time.localtime(now / 1000).tm_yday
        if day != self._day:
            self._day = day
            self.morning["put_yesterday"] = self.morning["put_today"]
            self.morning["get_yesterday"] = self.morning["get_today"]
            self.morning["put_today"] = self.put_times_total
            self.morning["get_today"] = self.get_transferred_total

    # ------------------------------------------------------------------ reporting
    def _latency_px(self, px: float) -> float:
        # StoreStatsService.findPutMessageEntireTimePX over last minute's buckets
        counts = self._last_latency
        total = sum(counts)
        idx = int(total * px)
        passed = 0
        for i, count in enumerate(counts):
            if idx <= passed + count:
                rel = idx - passed
                if i == 0:
                    return 0.0 if count == 0 else _LATENCY_BOUNDS[0] * rel / count
                prev = _LATENCY_BOUNDS[i - 1]
                return prev + (0.0 if count == 0 else (_LATENCY_BOUNDS[i] - prev) * rel / count)
            passed += count
        return 0.0

    def _total_tps(self) -> str:
        out = []
        for w in _WINDOWS:
            f = self._found.tps(w)
            m = self._miss.tps(w)
            out.append(java_double((f or 0.0) + (m or 0.0)))
        return " ".join(out)

    def runtime_info(self, now_ms: int | None = None) -> dict[str, str]:
        """``StoreStatsService.getRuntimeInfo``."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        total = self.put_times_total or 1
        up = max(0, now - self.boot_timestamp)
        runtime = (f"[ {up // 86_400_000} days, {up % 86_400_000 // 3_600_000} hours, "
                   f"{up % 3_600_000 // 60_000} minutes, {up % 60_000 // 1000} seconds ]")
        dist = ""
        if self._last_distribution is not None:
            pairs = zip(_DISTRIBUTION_NAMES, self._last_distribution, strict=True)
            dist = "".join(f"{n}:{v} " for n, v in pairs)
        else:
            dist = "".join(f"{n}:0 " for n in _DISTRIBUTION_NAMES)
        return {
            "bootTimestamp": str(self.boot_timestamp),
            "runtime": runtime,
            "putMessageEntireTimeMax": str(self.put_entire_time_max),
            "putMessageTimesTotal": str(total),
            "putMessageFailedTimes": str(self.put_failed_times),
            "putMessageSizeTotal": str(self.put_size_total),
            "putMessageDistributeTime": dist,
            "putMessageAverageSize": java_double(self.put_size_total / total),
            "dispatchMaxBuffer": "0",
            "getMessageEntireTimeMax": str(self.get_entire_time_max),
            "putTps": self._put.triple(),
            "getFoundTps": self._found.triple(),
            "getMissTps": self._miss.triple(),
            "getTotalTps": self._total_tps(),
            "getTransferedTps": self._transferred.triple(),
            "putLatency99": f"{self._latency_px(0.99):.2f}",
            "putLatency999": f"{self._latency_px(0.999):.2f}",
            "msgPutTotalYesterdayMorning": str(self.morning["put_yesterday"]),
            "msgPutTotalTodayMorning": str(self.morning["put_today"]),
            "msgPutTotalTodayNow": str(self.put_times_total),
            "msgGetTotalYesterdayMorning": str(self.morning["get_yesterday"]),
            "msgGetTotalTodayMorning": str(self.morning["get_today"]),
            "msgGetTotalTodayNow": str(self.get_transferred_total),
        }
