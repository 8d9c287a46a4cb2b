# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The HA tables of the 4.x and 5.x HA captures show the offsets their MANIFEST describes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.shared,
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]


def _ha(spark: Any, analysed: tuple[Path, Any, list[Path]], name: str) -> list[dict[str, Any]]:
    out, _result, captures = analysed
    path = next((c for c in captures if c.name == name), None)
    if path is None:
        pytest.skip(f"{name} is absent: these tests need ../shared beside the checkout")
    rows = spark.read.parquet(str(out / "ha")).where(f"capture = '{path}'").orderBy("emit_record", "emit_index")
    return [r.asDict() for r in rows.collect()]


def test_4x_catch_up_from_zero(spark: Any, analysed: Any) -> None:
    rows = _ha(spark, analysed, "08-ha-catchup-from-zero.pcap")
    reports = [r["ha_offset"] for r in rows if r["type"] == "report"]
    data = [r for r in rows if r["type"] == "transfer" and not r["heartbeat"]]
    beats = [r for r in rows if r["type"] == "transfer" and r["heartbeat"]]
    # 116 offset reports (0, 32768, 65536, ..., 3641729); 113 transfers of data totalling 3,641,729
    # bytes, each at most 32 KiB; 3 heartbeats; both end at 3,641,729
    assert len(reports) == 116 and reports[:3] == [0, 32768, 65536] and reports[-1] == 3_641_729
    assert len(data) == 113 and sum(r["data_length"] for r in data) == 3_641_729
    assert max(r["data_length"] for r in data) <= 32 * 1024
    assert len(beats) == 3
    assert max(r["ha_offset"] + r["data_length"] for r in data) == 3_641_729
    assert {r["variant"] for r in rows} == {"v4"}


def test_4x_sync_master_slave_up(spark: Any, analysed: Any) -> None:
    rows = _ha(spark, analysed, "09-sync-master-slave-up.pcap")
    data = [r for r in rows if r["type"] == "transfer" and not r["heartbeat"]]
    # 6 transfers, 3,554 bytes, offsets 6985318 -> 6988872
    assert len(data) == 6 and sum(r["data_length"] for r in data) == 3554
    assert data[0]["ha_offset"] == 6_985_318 and data[-1]["ha_offset"] + data[-1]["data_length"] == 6_988_872


def test_4x_sync_master_slave_frozen(spark: Any, analysed: Any) -> None:
    rows = _ha(spark, analysed, "09-sync-master-slave-frozen.pcap")
    data = [r for r in rows if r["type"] == "transfer" and not r["heartbeat"]]
    # 3 transfers (1,716 bytes from offset 6988872) and no slave report
    assert len(data) == 3 and sum(r["data_length"] for r in data) == 1716
    assert data[0]["ha_offset"] == 6_988_872
    assert not [r for r in rows if r["type"] == "report"]


def test_5x_controller_startup_handshake(spark: Any, analysed: Any) -> None:
    rows = _ha(spark, analysed, "11-controller-startup.pcap")
    reply = [r for r in rows if r["type"] == "handshake_reply"]
    # the master replies maxPhy=0, lastEpoch=1 (entries [(1, 0)]), then heartbeats
    assert reply and reply[0]["max_phy_offset"] == 0 and reply[0]["last_epoch"] == 1
    assert any(r["type"] == "handshake" for r in rows)
    assert {r["variant"] for r in rows} == {"autoswitch-5.0.0"}


def test_5x_failover_and_rejoin(spark: Any, analysed: Any) -> None:
    rows = _ha(spark, analysed, "13-failover.pcap")
    new = [r for r in rows if r["master"].endswith(":31912")]
    old = [r for r in rows if r["master"].endswith(":30912")]
    reply = [r for r in new if r["type"] == "handshake_reply"]
    # HA to 31912: maxPhy=69550, lastEpoch=2; first report 48,130; 47 data transfers (79,560 B) up
    # to offset 127,690
    assert reply[0]["max_phy_offset"] == 69_550 and reply[0]["last_epoch"] == 2
    reports = [r["ha_offset"] for r in new if r["type"] in ("report", "transfer_ack")]
    assert reports[0] == 48_130
    data = [r for r in new if r["type"] == "transfer" and not r["heartbeat"]]
    assert len(data) == 47 and sum(r["data_length"] for r in data) == 79_560
    assert max(r["ha_offset"] + r["data_length"] for r in data) == 127_690
    # before the kill, the old stream ends with confirmOffset 47,110 and slave report 48,130
    assert max(r["confirm_offset"] or 0 for r in old) == 47_110
    assert max(r["ha_offset"] for r in old if r["type"] in ("report", "transfer_ack")) == 48_130
