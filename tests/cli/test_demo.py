# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``scripts/demo`` leaves nothing behind, and a failure is one error line (issue 15 items 14, 29)."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from .test_e2e import ROOT, _free_base, free_port

pytestmark = pytest.mark.slow


def _demo(tmp_path: Path, ns_port: int, broker_port: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path), "MQCTL_DEMO_NAMESRV_PORT": str(ns_port),
           "MQCTL_DEMO_BROKER_PORT": str(broker_port), "MQCTL_CONFIG": os.devnull}
    env.pop("MQCTL_DEMO_DIR", None)
    env.pop("NAMESRV_ADDR", None)
    return subprocess.run([str(ROOT / "scripts" / "demo")], capture_output=True, text=True, env=env, timeout=600,
                          cwd=ROOT)


def test_the_demo_cleans_up_after_itself(tmp_path):
    ns_port, base = _free_base()
    r = _demo(tmp_path, ns_port, base)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "error:" not in r.stderr
    assert list(tmp_path.iterdir()) == [], "the demo left its temporary directory behind"


def test_a_busy_port_is_one_error_and_leaves_nothing(tmp_path):
    ns_port = free_port()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", ns_port))
        busy.listen()
        _ns, base = _free_base()
        r = _demo(tmp_path, ns_port, base)
    assert r.returncode != 0
    errors = [line for line in r.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"port {ns_port} on 127.0.0.1 is in use" in errors[0], r.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []
