# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Spark's tables equal ``mqctl pcap decode``, row for row, on every capture of fixtures/ and ../shared.

One job reads all the captures at once, each bigger than 64 KiB cut into byte-range splits (so the
boundary search, the shuffle by flow and the per-flow decoding all take part); then, per capture,
``mqctl pcap decode -o jsonl`` runs in this process and every command, HA frame and problem row is
compared field by field, in ``pcap decode``'s order, and every exchange with the response row it
stands for (or the unanswered request).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mqctl.pcap import app as pcap_app

# py4j leaves the sockets of a finished collect to the garbage collector
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

runner = CliRunner()


def pcap_decode(path: Path) -> list[dict[str, Any]]:
    res = runner.invoke(pcap_app, ["decode", "-o", "jsonl", str(path)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return [json.loads(line) for line in res.stdout.splitlines() if line.strip()]


def _tables(spark: Any, out: Path, name: str) -> dict[str, list[dict[str, Any]]]:
    """A table's rows per capture, in pcap decode's order (one Spark job per table)."""
    df = spark.read.parquet(str(out / name))
    order = ["emit_record", "emit_index"] if "emit_record" in df.columns else ["request_record", "request_offset"]
    per: dict[str, list[dict[str, Any]]] = {}
    for r in df.orderBy("capture", *order).collect():
        d = r.asDict(recursive=True)
        per.setdefault(d["capture"], []).append(d)
    return per


def _command_view(r: dict[str, Any], requests: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """A pcap decode command row in the commands table's terms."""
    req = requests.get(r.get("rocketmq.request_row", -1))
    return {
        "record": r["frame.number"], "ts": r["frame.time_epoch"], "stream": r["tcp.stream"],
        "src": r["ip.src"], "src_port": r["tcp.srcport"], "dst": r["ip.dst"], "dst_port": r["tcp.dstport"],
        "direction": r["rocketmq.direction"], "role": r["rocketmq.role"], "offset": r["rocketmq.offset"],
        "size": r["rocketmq.length"], "serialize_type": r["rocketmq.serialize_type"],
        "header_length": r["rocketmq.header_length"], "type": r["rocketmq.type"], "code": r["rocketmq.code"],
        "code_name": r["rocketmq.code_name"], "flag": r["rocketmq.flag"], "opaque": r["rocketmq.opaque"],
        "language": r["rocketmq.language"], "version": r["rocketmq.version"],
        "version_name": r["rocketmq.version_name"], "remark": r.get("rocketmq.remark"),
        "ext": {k[len("rocketmq.ext."):]: v for k, v in r.items() if k.startswith("rocketmq.ext.")},
        "body_length": r["rocketmq.body_length"], "request_code": r.get("rocketmq.request_code"),
        "request_record": req["frame.number"] if req else None,
        "request_offset": req["rocketmq.offset"] if req else None, "latency": r.get("rocketmq.latency"),
    }


def _ha_view(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "record": r["frame.number"], "ts": r["frame.time_epoch"], "stream": r["tcp.stream"],
        "direction": r["rocketmq.direction"], "offset": r["rocketmq.offset"], "size": r["rocketmq.length"],
        "variant": r["rocketmq.ha.variant"], "type": r["rocketmq.ha.type"], "ha_offset": r.get("rocketmq.ha.offset"),
        "data_length": r.get("rocketmq.ha.data_length"), "heartbeat": r.get("rocketmq.ha.heartbeat"),
        "epoch": r.get("rocketmq.ha.epoch"), "epoch_start_offset": r.get("rocketmq.ha.epoch_start_offset"),
        "confirm_offset": r.get("rocketmq.ha.confirm_offset"), "max_phy_offset": r.get("rocketmq.ha.max_phy_offset"),
        "last_epoch": r.get("rocketmq.ha.last_epoch"),
    }


def _problem_view(r: dict[str, Any]) -> dict[str, Any]:
    return {"record": r["frame.number"], "ts": r["frame.time_epoch"], "stream": r.get("tcp.stream"),
            "direction": r.get("rocketmq.direction"), "offset": r.get("rocketmq.offset"),
            "verdict": r["rocketmq.problem"], "message": r["rocketmq.problem.message"],
            "length": r["rocketmq.problem.length"]}


def _pick(row: dict[str, Any], like: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in like}


def test_every_capture_equals_pcap_decode(spark: Any, analysed: tuple[Path, Any, list[Path]]) -> None:
    out, result, captures = analysed
    assert len(captures) >= 4
    tables = {name: _tables(spark, out, name) for name in ("commands", "ha", "problems", "exchanges")}
    totals = {"captures": 0, "commands": 0, "exchanges": 0, "ha": 0, "problems": 0, "split": 0}
    for capture in captures:
        rows = pcap_decode(capture)
        by_number = {r["rocketmq.row"]: r for r in rows}
        want_cmd = [_command_view(r, by_number) for r in rows if r["rocketmq.kind"] == "command"]
        want_ha = [_ha_view(r) for r in rows if r["rocketmq.kind"] == "ha"]
        want_problems = [_problem_view(r) for r in rows if r["rocketmq.kind"] == "problem"]
        got_cmd = tables["commands"].get(str(capture), [])
        got_ha = tables["ha"].get(str(capture), [])
        got_problems = tables["problems"].get(str(capture), [])
        assert len(got_cmd) == len(want_cmd), capture
        for i, (g, w) in enumerate(zip(got_cmd, want_cmd, strict=True)):
            assert _pick(g, w) == w, f"{capture}: command {i}"
        assert [_pick(g, w) for g, w in zip(got_ha, want_ha, strict=True)] == want_ha, capture
        assert len(got_ha) == len(want_ha), capture
        assert [_pick(g, w) for g, w in zip(got_problems, want_problems, strict=True)] == want_problems, capture
        assert len(got_problems) == len(want_problems), capture

        # exchanges: every answered request (a response row that names its request) and every
        # request left without an answer (neither oneway nor answered)
        answered = {(r["rocketmq.request_row"]): r for r in rows if r.get("rocketmq.request_row")}
        want_x = []
        for r in rows:
            if r["rocketmq.kind"] != "command" or r["rocketmq.type"] != "request":
                continue
            resp = answered.get(r["rocketmq.row"])
            want_x.append({"request_record": r["frame.number"], "request_offset": r["rocketmq.offset"],
                           "code": r["rocketmq.code"], "opaque": r["rocketmq.opaque"], "stream": r["tcp.stream"],
                           "response_record": resp["frame.number"] if resp else None,
                           "response_offset": resp["rocketmq.offset"] if resp else None,
                           "response_code": resp["rocketmq.code"] if resp else None,
                           "latency": resp["rocketmq.latency"] if resp else None})
        got_x = tables["exchanges"].get(str(capture), [])
        assert len(got_x) == len(want_x), (capture, [(x["code"], x["response_code"]) for x in got_x],
                                           [(x["code"], x["response_code"]) for x in want_x])
        key = ("stream", "request_record", "request_offset")
        want_x.sort(key=lambda x: tuple(x[k] for k in key))
        got_x.sort(key=lambda x: tuple(x[k] for k in key))
        assert [_pick(g, w) for g, w in zip(got_x, want_x, strict=True)] == want_x, capture
        assert len(got_x) == len(want_x), capture

        totals["captures"] += 1
        totals["commands"] += len(want_cmd)
        totals["exchanges"] += len(want_x)
        totals["ha"] += len(want_ha)
        totals["problems"] += len(want_problems)
        totals["split"] += next(c["splits"] for c in result.captures if c["path"] == str(capture)) > 1
    print(f"\nequal to pcap decode: {totals}")
    assert totals["commands"] > 0 and totals["split"] > 0


@pytest.mark.shared
def test_the_shared_captures_took_part(analysed: tuple[Path, Any, list[Path]]) -> None:
    _out, _result, captures = analysed
    from tests.conftest import shared_path

    root = shared_path("captures")
    assert sum(1 for c in captures if root in c.parents) >= 50
