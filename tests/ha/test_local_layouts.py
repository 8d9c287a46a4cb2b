# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl cluster up --layout 2m-2s-sync`` (the distribution's layout: two SYNC_MASTERs, each with a
slave) through the real ``mqctl`` process: the four brokers registered with their ids, sends answered
SEND_OK once the slaves ack, ``ha status`` with each master's slave in sync, ``ha verify --bytes``
proving each slave a faithful copy, and ``cluster down``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_e2e import _free_base, ok, rows, run_mqctl

pytestmark = pytest.mark.slow


def test_2m_2s_sync_layout(tmp_path: Path) -> None:
    ns_port, base = _free_base((0, 10, 20, 30))
    ns = f"127.0.0.1:{ns_port}"
    d = tmp_path / "cluster"
    r = ok("cluster", "up", "--dir", str(d), "--layout", "2m-2s-sync", "--namesrv-port", str(ns_port),
           "--broker-port", str(base), timeout=120)
    try:
        assert [row[:3] for row in rows(r.stdout.split("\n", 1)[1])] == [
            ["namesrv", "namesrv", ns],
            ["broker-a", "master", f"127.0.0.1:{base}"], ["broker-a-s", "slave", f"127.0.0.1:{base + 10}"],
            ["broker-b", "master", f"127.0.0.1:{base + 20}"], ["broker-b-s", "slave", f"127.0.0.1:{base + 30}"]]
        assert "brokerRole=SYNC_MASTER" in (d / "broker-a.properties").read_text()
        assert "brokerRole=SLAVE" in (d / "broker-b-s.properties").read_text()
        listed = [row[:4] for row in rows(ok("-n", ns, "cluster", "list").stdout)]
        assert listed == [["DefaultCluster", "broker-a", "0", f"127.0.0.1:{base}"],
                          ["DefaultCluster", "broker-a", "1", f"127.0.0.1:{base + 10}"],
                          ["DefaultCluster", "broker-b", "0", f"127.0.0.1:{base + 20}"],
                          ["DefaultCluster", "broker-b", "1", f"127.0.0.1:{base + 30}"]]
        ok("-n", ns, "topic", "create", "LayoutTopic", "-c", "DefaultCluster", "-r", "4", "-w", "4")
        for i in range(6):
            sent = ok("-n", ns, "-o", "json", "message", "send", "-t", "LayoutTopic", "-p", f"layout {i}")
            assert json.loads(sent.stdout)["status"] == "SEND_OK", sent.stdout
        status = {s["addr"]: s for s in json.loads(ok("-n", ns, "-o", "json", "ha", "status", "-c",
                                                      "DefaultCluster").stdout)}
        for master, slave_port in ((base, base + 10), (base + 20, base + 30)):
            m = status[f"127.0.0.1:{master}"]
            assert m["master"] is True and m["in_sync_slave_nums"] == 1
            (s,) = m["slaves"]
            assert s["diff"] == 0 and s["in_sync"] is True and s["lag_ms"] == 0
            assert status[f"127.0.0.1:{slave_port}"]["client"]["master_addr"] == f"127.0.0.1:{master + 1}"
        for name in ("broker-a", "broker-b"):
            v = ok("-n", ns, "ha", "verify", name, "--bytes")
            assert "faithful copy" in v.stdout and "NO" not in v.stdout, v.stdout
    finally:
        down = run_mqctl("cluster", "down", "--dir", str(d), timeout=90)
    assert down.returncode == 0, down.stderr
