# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl analyze`` is a thin command (C5): it parses, calls :func:`analysis.analyze` once and
renders; usage errors exit 2 before Spark starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import analysis
from mqctl.app import main


def _result(out: Path) -> dict[str, Any]:
    empty: dict[str, Any] = {"codes": [], "throughput": [], "ha_streams": [], "consumer_lag": [], "clients": [],
                             "problems": []}
    return {"out": str(out), "report": str(out / "report.html"), "captures": [{"path": "x.pcap"}],
            "rows": {"commands": 3}, "splits": 1, "rewalked_splits": 0, "seconds": 1.0, "master": "local[1]",
            "metrics": {"summary": {"commands": 3}, **empty}}


def test_analyze_calls_the_library_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake(inputs: list[str], out: Path, **kw: Any) -> dict[str, Any]:
        calls.append((inputs, out, kw))
        return _result(out)

    monkeypatch.setattr(analysis, "analyze", fake)
    assert main(["-o", "json", "analyze", "a.pcap", "dir/", "--out", str(tmp_path / "o"), "--master", "local[1]",
                 "--partitions", "3", "--no-report", "--conf", "spark.executor.memory=2g",
                 "--conf", "spark.hadoop.fs.s3a.endpoint=http://127.0.0.1:9000"]) == 0
    inputs, out, kw = calls[0]
    assert inputs == ["a.pcap", "dir/"] and out == tmp_path / "o"
    assert kw["master"] == "local[1]" and kw["partitions"] == 3 and kw["report"] is False
    assert kw["conf"] == {"spark.executor.memory": "2g", "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000"}
    assert json.loads(capsys.readouterr().out)["rows"] == {"commands": 3}


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--out", "x"]) == 2
    assert main(["analyze", "a.pcap", "--partitions", "0"]) == 2


def test_missing_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(tmp_path / "nope.pcap"), "--out", str(tmp_path / "o")]) == 1
    assert "no such file or directory" in capsys.readouterr().err


def test_out_with_other_files_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import FIXTURES

    out = tmp_path / "o"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    cap = next(FIXTURES.rglob("*.pcap"))
    assert main(["analyze", str(cap), "--out", str(out)]) == 1
    assert "not empty" in capsys.readouterr().err
    assert (out / "precious.txt").read_text() == "keep me"


def test_pcap_record_rotation_needs_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # what 'mqctl analyze --follow' reads is a directory of rotated files
    assert main(["pcap", "record", "--write", str(tmp_path / "x.pcap"), "--rotate-seconds", "5"]) == 2
    assert "a writable directory that exists" in capsys.readouterr().err
    assert main(["pcap", "record", "--write", str(tmp_path), "--rotate-mb", "0"]) == 2
    assert "must be positive" in capsys.readouterr().err


def test_analyze_conf_is_key_value(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "a.pcap", "--conf", "spark.executor.memory"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_follow_prints_one_json_line_per_batch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    import analysis.follow

    def fake(directory: Path, out: Path, **kw: Any) -> int:
        kw["on_update"](dict(_result(out), batch=0, files=["a.pcap"]))
        kw["on_update"]({"batch": 1, "files": ["b.pcap"], "error": "b.pcap, record 7: cut short"})
        kw["on_update"](dict(_result(out), batch=2, files=["c.pcap"]))
        return 2

    monkeypatch.setattr(analysis.follow, "follow", fake)
    assert main(["-o", "json", "analyze", "--follow", str(tmp_path), "--out", str(tmp_path / "o")]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert [json.loads(line)["batch"] for line in lines] == [0, 2]  # JSON Lines: a script reads one a batch
    assert "batch 1 (b.pcap): b.pcap, record 7: cut short" in captured.err


def test_gzipd_captures_read_whole_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from analysis.job import WHOLE_GZIP

    def fake(inputs: list[str], out: Path, **kw: Any) -> dict[str, Any]:
        return dict(_result(out), captures=[{"path": "a.pcap", "read": "byte ranges"},
                                            {"path": "b.pcap.gz", "read": WHOLE_GZIP}])

    monkeypatch.setattr(analysis, "analyze", fake)
    assert main(["analyze", "a.pcap", "b.pcap.gz", "--out", str(tmp_path / "o"), "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "read whole by one task each (gzip'd: no random access" in out and "b.pcap.gz" in out
    assert "a.pcap," not in out.split("read whole")[1]
