# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Runtime figures (GET_BROKER_RUNTIME_INFO's store keys) and the config mapping."""

from __future__ import annotations

from pathlib import Path

from reference_broker.config import BrokerConfig
from reference_broker.store import MessageStore, StoreConfig
from reference_broker.store.stats import _LATENCY_BOUNDS, StoreStats, human_readable_bytes, java_double
from tests.store.storeutil import message, run, small_config


def test_tps_strings_follow_the_snapshot_windows() -> None:
    st = StoreStats(now_ms=0)
    for sec in range(12):
        st.put_times_total = 5 * sec
        st.get_found_total = sec
        st.sample(now_ms=sec * 1000)
    info = st.runtime_info(now_ms=12_000)
    # 12 snapshots: the 10-second rate exists, the 60- and 600-second ones do not yet
    assert info["putTps"] == "5.0  "
    assert info["getFoundTps"] == "1.0  "
    assert info["getTotalTps"] == "1.0 0.0 0.0"
    assert info["runtime"] == "[ 0 days, 0 hours, 0 minutes, 12 seconds ]"
    assert info["putMessageTimesTotal"] == "55" and info["putMessageAverageSize"] == "0.0"


def test_java_number_formats() -> None:
    assert [java_double(x) for x in (0.0, 471.5, 0.333183400802972, 1e7, 1.5e-4)] == \
        ["0.0", "471.5", "0.333183400802972", "1.0E7", "1.5E-4"]
    assert [human_readable_bytes(n) for n in (0, 1023, 1536, 252 * 1024**3)] == \
        ["0 B", "1023 B", "1.5 KiB", "252.0 GiB"]


def test_runtime_info_of_a_store(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", max_message_size=100)

    async def go():
        async with MessageStore(cfg) as s:
            rs = [await s.put_message(message(body=b"x" * 50)) for _ in range(4)]
            s.get_messages("g", "TopicTest", 0, 0, 32)
            s.get_messages("g", "TopicTest", 0, 4, 32)
            return rs, s.runtime_info()
    rs, info = run(go())
    end = rs[-1].wrote_offset + rs[-1].wrote_bytes
    assert info["commitLogMinOffset"] == "0" and info["commitLogMaxOffset"] == str(end)
    assert info["putMessageTimesTotal"] == "4" and info["putMessageSizeTotal"] == str(end)
    assert info["msgPutTotalTodayNow"] == "4" and info["msgGetTotalTodayNow"] == "4"
    assert info["dispatchBehindBytes"] == "0" and info["pageCacheLockTimeMills"] == "0"
    assert info["remainTransientStoreBufferNumbs"] == "2147483647"
    assert info["remainHowManyDataToFlush"].endswith(" B")
    # getEarliestMessageTime reads 2 x maxMessageSize bytes from the first record
    assert info["earliestMessageTimeStamp"] == str(rs[0].store_timestamp)
    assert 0 <= float(info["commitLogDiskRatio"]) <= 1
    assert f"commitLogDiskRatio_{cfg.commitlog_dir}" in info
    assert info["commitLogDirCapacity"].startswith("Total : ")
    for key in ("putTps", "getFoundTps", "getMissTps", "getTotalTps", "getTransferedTps", "putLatency99",
                "putMessageDistributeTime", "bootTimestamp", "consumeQueueDiskRatio"):
        assert key in info


def test_store_config_from_broker_properties(tmp_path: Path) -> None:
    bc = BrokerConfig(overrides={
        "storePathRootDir": str(tmp_path / "root"), "mapedFileSizeCommitLog": "10485760",
        "mappedFileSizeConsumeQueue": "6001", "flushDiskType": "SYNC_FLUSH", "brokerIP1": "10.1.2.3",
        "listenPort": "20911", "fileReservedTime": "48", "deleteWhen": "03", "maxHashSlotNum": "100",
        "maxIndexNum": "400", "brokerRole": "SLAVE", "brokerId": "1", "messageDelayLevel": "1s 2m",
        "syncFlushTimeout": "1234"})
    sc = StoreConfig.from_broker_config(bc)
    assert sc.root == tmp_path / "root" and sc.commitlog_dir == tmp_path / "root" / "commitlog"
    assert sc.mapped_file_size_commitlog == 10485760 and sc.mapped_file_size_consume_queue == 6020
    assert sc.sync_flush and sc.is_slave and sc.store_host == ("10.1.2.3", 20911)
    assert (sc.file_reserved_hours, sc.delete_when, sc.max_hash_slot_num, sc.max_index_num) == (48, "03", 100, 400)
    assert sc.delay_levels_ms == (1000, 120000) and sc.sync_flush_timeout_ms == 1234


def test_put_times_fall_in_javas_buckets() -> None:
    """Each timed put lands in the first distribution bucket whose limit it does not pass and the
    first latency bucket that holds it (StoreStatsService), one put or many at a time."""
    limits = (0, 10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000)
    for elapsed in (0, 1, 2, 9, 10, 11, 49, 50, 51, 99, 100, 101, 499, 500, 999, 1000, 1001, 4999, 5000,
                    9999, 10000, 10001, 2**40):
        one, many = StoreStats(), StoreStats()
        one.record_put(1, 10, elapsed)
        many.record_puts(3, 3, 30, elapsed)
        want = next((i for i, limit in enumerate(limits) if elapsed <= limit), len(limits))
        assert one._distribution[want] == 1 and sum(one._distribution) == 1, elapsed
        assert many._distribution[want] == 3 and sum(many._distribution) == 3, elapsed
        at = next(j for j, bound in enumerate(_LATENCY_BOUNDS) if elapsed <= bound)
        assert one._latency[at] == 1 and sum(one._latency) == 1, elapsed
        assert many._latency[at] == 3 and sum(many._latency) == 3, elapsed
        assert (many.put_times_total, many.put_size_total) == (3, 30)

