# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The suite's process guard (tests/conftest.py, ``no_process_left``) fails closed: a process a
test started that still runs when the session ends fails the run, named with its command line and
the test that started it (a daemon that detached from its parent too), and is stopped; a test that
stops what it started passes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.inner_session import run_session

CASES = '''
import subprocess

KEPT = []


def test_stops_its_child():
    with subprocess.Popen(["sleep", "4000.5"]) as proc:
        proc.terminate()


def test_leaks_a_child():
    KEPT.append(subprocess.Popen(["sleep", "4000.1"]))


def test_leaks_a_daemon():
    # the shell exits at once: its sleep, detached, is a child of no test process
    subprocess.run(["sh", "-c", "setsid sleep 4000.2 >/dev/null 2>&1 < /dev/null &"], check=True)


def test_after_them():
    pass
'''


def _session(tmp_path: Path, cases: str) -> subprocess.CompletedProcess[str]:
    return run_session(tmp_path, cases, ini="filterwarnings = error\n", env={"MQCTL_PROCESS_GRACE": "1"})


def _running(marker: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{entry.name}/cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_a_process_left_running_fails_the_session_and_is_stopped(tmp_path: Path) -> None:
    r = _session(tmp_path, CASES)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "4 passed, 1 error" in out, out
    assert "2 process(es) started by the tests still ran at the end of the session" in out, out
    lines = [line for line in out.splitlines() if "started by" in line]
    assert any(line.endswith("started by test_cases.py::test_leaks_a_child: sleep 4000.1") for line in lines), out
    assert any(line.endswith("started by test_cases.py::test_leaks_a_daemon: sleep 4000.2") for line in lines), out
    # stopped, and reaped: no "subprocess ... is still running" from the Popen left behind
    assert "still running" not in out, out
    assert not _running("4000.1") and not _running("4000.2")


ZOMBIE = '''
import subprocess
import time

KEPT = []


def test_never_waits_for_its_child():
    KEPT.append(subprocess.Popen(["true"]))
    time.sleep(0.5)  # it exits; nobody waits for it
'''


def test_a_child_never_waited_for_fails_the_session(tmp_path: Path) -> None:
    """A Popen whose process exited but was never waited for (the "subprocess N is still running"
    warning when it is collected) is named too, and reaped."""
    r = _session(tmp_path, ZOMBIE)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "started by test_cases.py::test_never_waits_for_its_child: true, exited but never waited for" in out, out
    assert "still running" not in out, out
