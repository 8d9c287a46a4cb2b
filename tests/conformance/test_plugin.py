# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The pytest plugin as another project's CI runs it: ``pytest --pyargs conformance --rmq-...`` in
a process of its own, against our reference cluster behind the broken proxy (which answers oneway
requests), with JUnit XML and the suite's JSON. Each case is an item; its outcome becomes pytest's:
a MUST that fails fails the run, a case that cannot run is skipped with its reason, and the rest
pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from conformance.refcluster import ReferenceCluster
from tests.conformance.brokenproxy import Faults, ProxyProcess
from wire.aio import split_addr

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _pytest(tmp_path: Path, *args: str) -> tuple[int, str]:
    """``python -m pytest ARGS`` from a directory outside the checkout, as a user's CI would."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_plugin_items_outcomes_and_reports(tmp_path: Path) -> None:
    with ReferenceCluster(tmp_path / "cluster", slave=False) as cluster:
        t = cluster.target
        assert t is not None and t.namesrv and t.broker
        with ProxyProcess([split_addr(t.namesrv)], Faults(answer_oneway=True)) as (namesrv,):
            xml, doc = tmp_path / "junit.xml", tmp_path / "report.json"
            rc, out = _pytest(tmp_path, "--pyargs", "conformance", "--rmq-namesrv", namesrv,
                              "--rmq-broker", t.broker, "--rmq-name", "proxied",
                              "--rmq-only", "NS-KV-*", "--rmq-only", "FRM-ONEWAY-001",
                              "--rmq-only", "HA4-SYNC-001", "--rmq-only", "HA4-TR-002",
                              "--junitxml", str(xml), "--rmq-json", str(doc))
    # the oneway answered by the proxy fails the run; the rest are as the cluster is
    assert rc == 1, out
    cases = {tc.get("name"): tc for tc in ET.parse(xml).getroot().iter("testcase")}
    names = {f"test_case[{i}]" for i in ("NS-KV-001", "NS-KV-002", "NS-KV-003", "NS-KV-004",
                                         "FRM-ONEWAY-001", "HA4-SYNC-001", "HA4-TR-002")}
    assert set(cases) == names, out
    failed = {n for n, tc in cases.items() if tc.find("failure") is not None}
    skipped = {n: tc.find("skipped") for n, tc in cases.items() if tc.find("skipped") is not None}
    assert failed == {"test_case[FRM-ONEWAY-001]"}, out
    assert set(skipped) == {"test_case[HA4-SYNC-001]"}, out
    assert "no SYNC_MASTER to grade" in (skipped["test_case[HA4-SYNC-001]"].get("message") or "")
    # what a case observed is in the item's properties, so in the JUnit XML
    props = {p.get("name"): p.get("value") for p in cases["test_case[HA4-TR-002]"].iter("property")}
    assert props.get("outcome") == "pass" and props.get("level") == "MUST"
    # the suite's own JSON report, for mqctl conformance report
    report = json.loads(doc.read_text())
    assert report["target"]["name"] == "proxied"
    outcomes = {r["id"]: r["outcome"] for r in report["results"]}
    assert outcomes["FRM-ONEWAY-001"] == "fail" and outcomes["HA4-SYNC-001"] == "not-run"
    assert all(outcomes[f"NS-KV-00{i}"] == "pass" for i in range(1, 5))


def test_plugin_usage_errors(tmp_path: Path) -> None:
    """A glob that matches no case, or a bad deviations file, stops the session with the reason
    (pytest's usage error, exit 4), before anything runs, and without a traceback."""
    rc, out = _pytest(tmp_path, "--pyargs", "conformance", "--rmq-namesrv", "127.0.0.1:1",
                      "--rmq-only", "NOPE-*")
    assert rc == 4 and "--rmq-only/--rmq-skip: 'NOPE-*' matches no case ID or family" in out, out
    assert "Traceback" not in out
    bad = tmp_path / "devs.yaml"
    bad.write_text("deviations:\n  - id: NOPE-X-001\n    reason: x\n")
    rc, out = _pytest(tmp_path, "--pyargs", "conformance", "--rmq-namesrv", "127.0.0.1:1",
                      "--rmq-deviations", str(bad))
    assert rc == 4 and "--rmq-deviations:" in out and "NOPE-X-001" in out, out
    assert "Traceback" not in out
