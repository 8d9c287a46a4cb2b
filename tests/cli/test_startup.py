# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Admin commands start fast: they never import scapy, pyspark, the reference servers, pydantic
(typer's default coercion) or other commands' modules. Checked with ``python -X importtime`` on
the real entry point, against a port where nothing listens (exit 3 after the imports)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

HEAVY = ("scapy", "pyspark", "reference_broker", "pydantic", "conformance", "analysis")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def imported(*args: str) -> tuple[int, set[str]]:
    code = "import sys; from mqctl.app import main; sys.exit(main(sys.argv[1:]))"
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *args], capture_output=True, text=True,
                       timeout=60)
    names = {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "mqctl.app" in names
    return r.returncode, names


@pytest.mark.parametrize("args", [
    ("cluster", "list"),
    ("-o", "json", "cluster", "list"),
    ("topic", "route", "T"),
    ("topic", "status", "T"),
    ("consumer", "progress", "-g", "G"),
    ("message", "send", "-t", "T", "-p", "x"),
    ("broker", "status", "-b", "127.0.0.1:1"),
    ("ha", "status", "-b", "127.0.0.1:1"),
])
def test_admin_commands_do_not_load_heavy_modules(args):
    rc, names = imported("-n", f"127.0.0.1:{_closed_port()}", *args)
    assert rc == 3
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY)
    assert heavy == []
    # nor the modules of other commands: only the named sub-app is imported
    assert not names & {"mqctl.pcap", "mqctl.store", "wire.admin.store", "mqctl.local"}


def test_json_output_does_not_load_rich():
    _, names = imported("-n", f"127.0.0.1:{_closed_port()}", "-o", "json", "cluster", "list")
    assert not any(n.split(".")[0] == "rich" for n in names)


def test_help_lists_every_noun():
    r = subprocess.run([sys.executable, "-m", "mqctl.app", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    for noun in ("cluster", "topic", "broker", "consumer", "producer", "message", "namesrv", "ha", "store"):
        assert f"  {noun} " in r.stdout


def test_shell_completion_is_offered():
    # --show-completion finds the shell among its parent processes (shellingham), so mqctl runs
    # under a bash here, whatever started pytest (a detached run has no shell above it);
    # "; exit $?" keeps bash from exec'ing the command in its place
    import shlex

    cmd = f"{shlex.quote(sys.executable)} -m mqctl.app --show-completion; exit $?"
    r = subprocess.run(["/bin/bash", "-c", cmd], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "SHELL": "/bin/bash"}, start_new_session=True)
    assert r.returncode == 0, r.stderr
    assert "complete -o default -F _mqctl_completion mqctl" in r.stdout
