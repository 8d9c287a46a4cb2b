# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl cluster up --layout controller`` through the real ``mqctl`` process: a name server with
its embedded controller and three controller-mode replicas of broker-c; one is master, the others
follow it into the SyncStateSet; ``controller sync-state-set``, ``controller epochs`` and
``ha status`` read them; ``cluster down``."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from tests.cli.test_e2e import _free_base, ok, run_mqctl

pytestmark = pytest.mark.slow


def test_controller_layout(tmp_path: Path) -> None:
    ns_port, base = _free_base((0, 10, 20))
    with socket.socket() as s:  # the embedded controller takes the name server's port + 2
        try:
            s.bind(("127.0.0.1", ns_port + 2))
        except OSError:
            pytest.skip("the controller port next to the name server is taken")
    ns = f"127.0.0.1:{ns_port}"
    controller = f"127.0.0.1:{ns_port + 2}"
    d = tmp_path / "cluster"
    ok("cluster", "up", "--dir", str(d), "--layout", "controller", "--namesrv-port", str(ns_port),
       "--broker-port", str(base), timeout=120)
    try:
        assert "enableControllerInNamesrv=true" in (d / "namesrv.properties").read_text()
        assert "enableControllerMode=true" in (d / "broker-c-n1.properties").read_text()
        replicas = {f"127.0.0.1:{base + o}" for o in (0, 10, 20)}
        deadline = time.monotonic() + 60
        while True:
            sss = json.loads(ok("-o", "json", "controller", "sync-state-set", "-a", controller,
                                "broker-c").stdout)["broker-c"]
            if {m["address"] for m in sss["in_sync_members"]} == replicas:
                break
            assert time.monotonic() < deadline, sss
            time.sleep(0.5)
        assert sss["master_address"] in replicas and sss["master_epoch"] == 1
        epochs = json.loads(ok("-n", ns, "-o", "json", "controller", "epochs", "broker-c").stdout)
        assert {e["addr"] for e in epochs} == replicas
        assert all([(x["epoch"], x["start_offset"]) for x in e["cache"]["epoch_list"]] == [(1, 0)] for e in epochs)
        meta = json.loads(ok("-o", "json", "controller", "metadata", "-a", controller).stdout)
        assert meta["leader_address"] == controller
        status = json.loads(ok("-n", ns, "-o", "json", "ha", "status", "-b", sss["master_address"]).stdout)
        (master,) = status
        assert master["master"] is True and master["in_sync_slave_nums"] == 2
        assert len(master["slaves"]) == 2 and all(s["in_sync"] for s in master["slaves"])
    finally:
        down = run_mqctl("cluster", "down", "--dir", str(d), timeout=90)
    assert down.returncode == 0, down.stderr
