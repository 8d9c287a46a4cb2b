# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``StatsItems`` (VIEW_BROKER_STATS_DATA's TOPIC_PUT_NUMS / GROUP_GET_NUMS): sums, rates and
values per call over the last minute, hour and day, from 10-second buckets, and the buckets older
than a day dropped once an item holds more than a day of them."""

from __future__ import annotations

from reference_broker.broker.stats import StatsItems

T0 = 1_700_000_000_000
DAY_BUCKETS = 86_400_000 // 10_000


def test_values_and_calls_are_summed_per_window() -> None:
    s = StatsItems()
    s.record("TOPIC_PUT_NUMS", "T", 5, now_ms=T0)
    s.record("TOPIC_PUT_NUMS", "T", 7, now_ms=T0 + 1)  # the same 10-second bucket
    s.record("TOPIC_PUT_NUMS", "T", 30, now_ms=T0 + 20_000, calls=3)  # three sends counted at once
    s.record("TOPIC_PUT_NUMS", "T", 100, now_ms=T0 - 2 * 3_600_000)  # two hours before
    s.record("TOPIC_PUT_NUMS", "U", 1, now_ms=T0)
    view = s.view("TOPIC_PUT_NUMS", "T", now_ms=T0 + 30_000)
    assert view is not None
    assert view["minute"]["sum"] == 42 and view["minute"]["avgpt"] == 42 / 5
    assert view["minute"]["tps"] == 42 * 1000.0 / 60_000
    assert view["hour"]["sum"] == 42
    assert view["day"]["sum"] == 142 and view["day"]["avgpt"] == 142 / 6
    assert s.view("TOPIC_PUT_NUMS", "V") is None


def test_buckets_older_than_a_day_are_dropped() -> None:
    s = StatsItems()
    n = 8_705  # one a bucket, the last ones past 8,700 buckets held
    for i in range(n):
        s.record("GROUP_GET_NUMS", "T@G", 1, now_ms=T0 + i * 10_000)
    now = T0 + (n - 1) * 10_000
    buckets = s._items[("GROUP_GET_NUMS", "T@G")]
    # dropped when the item passed 8,700 buckets: what is left is within a day of that moment
    assert DAY_BUCKETS < len(buckets) <= 8_700
    assert min(buckets) >= (T0 + 8_700 * 10_000 - 86_400_000) // 10_000
    view = s.view("GROUP_GET_NUMS", "T@G", now_ms=now)
    assert view is not None and view["day"]["sum"] == DAY_BUCKETS
