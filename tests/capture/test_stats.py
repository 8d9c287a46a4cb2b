# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Capture statistics: nearest-rank percentiles, counts per code, pairing, conversations, problems."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.capture.helpers import frame, request
from tests.capture.test_hotpath import messy_capture
from tests.conftest import shared_path
from wire.capture import CaptureDecoder, decode_capture
from wire.capture.stats import CaptureStats, percentile
from wire.capture.synth import PcapWriter, TcpFlow


@pytest.mark.parametrize(("values", "p", "expected"), [
    ([], 50, None),
    ([5.0], 99, 5.0),
    ([1.0, 2.0, 3.0, 4.0], 50, 2.0),
    ([1.0, 2.0, 3.0, 4.0], 75, 3.0),
    ([float(i) for i in range(1, 101)], 95, 95.0),
    ([float(i) for i in range(1, 101)], 99, 99.0),
    ([float(i) for i in range(1, 11)], 100, 10.0),
])
def test_percentile_nearest_rank(values: list[float], p: float, expected: float | None) -> None:
    assert percentile(values, p) == expected


def _stats(path: Path | str) -> dict:  # type: ignore[type-arg]
    acc = CaptureStats()
    dec = CaptureDecoder(capture=str(path))
    for row in decode_capture(path, decoder=dec):
        acc.add(row)
    acc.add_capture(dec, str(path), None)
    return acc.report()


def test_latencies_and_counts(tmp_path: Path) -> None:
    buf = io.BytesIO()
    flow = TcpFlow(PcapWriter(buf), ("10.0.0.1", 40000), ("10.0.0.2", 10911))
    flow.handshake(100.0)
    t = 100.0
    for i in range(1, 11):  # ten sends answered after i milliseconds
        req = request(10, i, {"topic": "T"})
        flow.send(t, 0, frame(req))
        flow.send(t + i / 1000, 1, frame(req.response(0 if i != 7 else 14)))
        t += 1
    flow.send(t, 0, frame(request(15, 99, {}, oneway=True)))
    flow.send(t, 0, frame(request(11, 100, {})))  # a pull left waiting
    flow.close(t + 1)
    path = tmp_path / "s.pcap"
    path.write_bytes(buf.getvalue())
    r = _stats(path)
    by = {c["code"]: c for c in r["requests"]}
    assert by[10]["requests"] == 10 and by[10]["answered"] == 10
    assert by[10]["responses"] == {"SUCCESS": 9, "SERVICE_NOT_AVAILABLE": 1}
    assert by[10]["latency_ms"] == {"p50": pytest.approx(5.0), "p95": pytest.approx(10.0),
                                    "p99": pytest.approx(10.0), "max": pytest.approx(10.0)}
    assert (by[15]["oneway"], by[15]["unanswered"]) == (1, 0)
    assert (by[11]["answered"], by[11]["unanswered"]) == (0, 1)
    assert {c["name"]: c["responses"] for c in r["responses"]} == {"SUCCESS": 9, "SERVICE_NOT_AVAILABLE": 1}
    (conv,) = r["conversations"]
    assert (conv["role"], conv["protocol"], conv["frames_c2s"], conv["frames_s2c"], conv["unanswered"]) == (
        "broker", "remoting", 12, 10, 1)
    assert r["totals"]["problems"] == 0


def test_reference_capture_figures() -> None:
    r = _stats(shared_path("captures", "java-4.9.8", "09-sync-master-slave-down.pcap"))
    by = {c["code"]: c for c in r["requests"]}
    assert by[10]["responses"] == {"SLAVE_NOT_AVAILABLE": 9}
    assert by[310]["responses"] == {"SLAVE_NOT_AVAILABLE": 1}
    r = _stats(shared_path("captures", "java-4.9.8", "10-malformed-frames.pcap"))
    assert r["problems"]["counts"] == {"decode": 6, "skipped": 6}
    assert len(r["problems"]["listed"]) == 12
    r = _stats(shared_path("captures", "java-4.9.8", "08-ha-catchup-from-zero.pcap"))
    assert r["ha"] == {"SlaveReport": 116, "Transfer": 116} and r["totals"]["ha_data_bytes"] == 3_641_729


@pytest.mark.parametrize("name", ["java-4.9.8/04-rocketmq-sendMessage.pcap", "messy"])
def test_add_rows_counts_as_add_does(tmp_path: Path, name: str) -> None:
    if name == "messy":
        path = tmp_path / "messy.pcap"
        path.write_bytes(messy_capture(3, 1, exchanges=300))
    else:
        path = shared_path("captures", name)
    one, batch = CaptureStats(), CaptureStats()
    rows = list(decode_capture(path))
    for row in rows:
        one.add(row)
    for i in range(0, len(rows), 5):
        batch.add_rows(rows[i:i + 5])
    assert batch.report() == one.report()
    assert one.report()["totals"]["commands"] > 10
