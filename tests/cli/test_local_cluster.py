# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl cluster up/down`` and the directory it works in: mqctl deletes only what it made.

The slow tests run the real ``mqctl`` processes on free ports; the others drive
:mod:`mqctl.local` on a directory prepared by hand (no process is started).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mqctl import local
from wire.admin.errors import BadRequest

from .test_e2e import _free_base, ok, run_mqctl


def _tree(d: Path) -> dict[str, str]:
    """Every file under ``d`` (relative path -> content), and every directory (-> '/')."""
    out: dict[str, str] = {}
    for p in sorted(d.rglob("*")):
        out[str(p.relative_to(d))] = "/" if p.is_dir() else p.read_text(errors="replace")
    return out


def _user_files(d: Path) -> dict[str, str]:
    (d / "src").mkdir(parents=True)
    (d / "src" / "main.py").write_text("print('mine')\n")
    (d / "notes.txt").write_text("precious\n")
    return _tree(d)


@pytest.mark.slow
def test_purge_keeps_the_users_files(tmp_path):
    """Issue 15 item 0: ``cluster down --purge`` deleted the whole --dir, files of the user's
    included, and ``cluster up`` took a directory holding other things without a word."""
    pytest.importorskip("reference_broker.broker")
    d = tmp_path / "D"
    before = _user_files(d)
    ns_port, base = _free_base()
    ports = ("--namesrv-port", str(ns_port), "--broker-port", str(base))

    refused = run_mqctl("cluster", "up", "--dir", str(d), *ports, timeout=90)
    if refused.returncode == 0:  # the old behaviour: stop what it started before failing
        run_mqctl("cluster", "down", "--dir", str(d), timeout=60)
    assert refused.returncode == 2, refused.stderr
    assert "notes.txt" in refused.stderr and "--force" in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert _tree(d) == before

    ok("cluster", "up", "--dir", str(d), "--force", *ports, timeout=90)
    try:
        assert (d / "broker-a.properties").is_file()
    finally:
        down = run_mqctl("cluster", "down", "--dir", str(d), "--purge", timeout=60)
    assert down.returncode == 0, down.stderr
    assert _tree(d) == before
    assert "kept 2 entries mqctl did not make" in down.stderr

    # a directory mqctl made is removed whole
    fresh = tmp_path / "fresh" / "cluster"
    ns_port, base = _free_base()  # new ports: the last ones may have been taken since
    ports = ("--namesrv-port", str(ns_port), "--broker-port", str(base))
    ok("cluster", "up", "--dir", str(fresh), *ports, timeout=90)
    down = run_mqctl("cluster", "down", "--dir", str(fresh), "--purge", timeout=60)
    assert down.returncode == 0, down.stderr
    assert not fresh.exists() and (tmp_path / "fresh").is_dir()


def _made_by_an_earlier_up(d: Path, force: bool = False) -> None:
    """What ``cluster up --dir d`` leaves after ``cluster down`` (no process runs)."""
    planned = local.plan(d)
    local.claim_directory(planned, force=force)
    (d / "logs").mkdir()
    (d / "logs" / "namesrv.log").write_text("log\n")
    (d / "store" / "broker-a" / "commitlog").mkdir(parents=True)
    (d / "namesrv.properties").write_text("listenPort=9876\n")
    (d / "broker-a.properties").write_text("brokerName=broker-a\n")


def test_purge_removes_only_the_marked_entries(tmp_path):
    d = tmp_path / "D"
    before = _user_files(d)
    with pytest.raises(BadRequest, match=r"notes\.txt, src"):
        local.claim_directory(local.plan(d))
    _made_by_an_earlier_up(d, force=True)
    marker = json.loads((d / local.MARKER).read_text())
    assert "notes.txt" not in marker["paths"] and "src" not in marker["paths"]
    result = local.purge_directory(d)
    assert _tree(d) == before
    assert result.kept == ("notes.txt", "src")
    assert "store" in result.removed and "logs" in result.removed


def test_an_existing_empty_directory_is_kept(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    _made_by_an_earlier_up(d)
    local.purge_directory(d)
    assert d.is_dir() and not any(d.iterdir())


def test_a_name_mqctl_writes_is_never_taken_over(tmp_path):
    d = tmp_path / "D"
    d.mkdir()
    (d / "namesrv.properties").write_text("mine\n")
    with pytest.raises(BadRequest, match=r"namesrv\.properties"):
        local.claim_directory(local.plan(d), force=True)
    assert (d / "namesrv.properties").read_text() == "mine\n"
    assert not (d / local.MARKER).exists()


def test_purge_without_a_marker_deletes_nothing(tmp_path):
    d = tmp_path / "D"
    before = _user_files(d)
    with pytest.raises(local.LocalClusterError, match="not made by mqctl"):
        local.purge_directory(d)
    assert _tree(d) == before


def test_a_tampered_marker_cannot_reach_outside(tmp_path):
    d = tmp_path / "D"
    d.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    (d / local.MARKER).write_text(json.dumps({"made_by": "mqctl", "created_dir": False,
                                              "paths": ["../outside.txt", "/etc", "logs"]}))
    local.purge_directory(d)
    assert outside.read_text() == "x"


# ---------------------------------------------------------------------- items 13, 14, 21


def test_cluster_down_is_idempotent(tmp_path):
    """Issue 15 item 14: ``cluster down`` where nothing runs says so and exits 0."""
    r = run_mqctl("cluster", "down", "--dir", str(tmp_path / "never"))
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr == f"no cluster running in {tmp_path / 'never'}\n"


@pytest.mark.parametrize(("args", "says"), [
    (("--broker-port", "65535"), "--broker-port 65535: broker-a's HA port (listen port + 1) would be 65536"),
    (("--broker-port", "1"), "--broker-port 1: broker-a's VIP port (listen port - 2) would be -1"),
    (("--broker-port", "65520", "--layout", "2m-noslave"), "--broker-port 65520: broker-b's port would be 65540"),
    (("--namesrv-port", "70000"), "--namesrv-port 70000 is out of range"),
    (("--broker-set", "listenPort=1"), "--broker-set listenPort: the layout sets it"),
    (("--broker-set", "aclEnable"), "--broker-set 'aclEnable': expected KEY=VALUE"),
])
def test_cluster_up_names_the_port_out_of_range(tmp_path, args, says):
    r = run_mqctl("cluster", "up", "--dir", str(tmp_path / "c"), *args)
    assert r.returncode == 2 and r.stderr.startswith(f"error: {says}"), r.stderr
    assert not (tmp_path / "c").exists()


def test_cluster_up_checks_the_vip_port(tmp_path):
    """Issue 15 item 21: the broker's VIP port (listen port - 2) is checked before anything starts."""
    import os
    import socket

    ns_port, base = _free_base()
    with socket.socket() as vip:
        vip.bind(("127.0.0.1", base - 2))
        vip.listen()
        r = run_mqctl("cluster", "up", "--dir", str(tmp_path / "c"), "--namesrv-port", str(ns_port),
                      "--broker-port", str(base))
    assert r.returncode == 1
    assert r.stderr.startswith(f"error: cannot start broker-a: port {base - 2} (VIP port (listen port - 2)) "
                               f"on 127.0.0.1 is in use, by pid {os.getpid()}")
    assert not (tmp_path / "c").exists()


@pytest.mark.slow
def test_cluster_up_on_every_interface_registers_a_reachable_address(tmp_path):
    """Issue 15 item 21: ``--host 0.0.0.0`` listens everywhere but registers 127.0.0.1."""
    ns_port, base = _free_base()
    d = tmp_path / "c"
    r = ok("cluster", "up", "--dir", str(d), "--host", "0.0.0.0", "--namesrv-port", str(ns_port),
           "--broker-port", str(base), timeout=120)
    try:
        assert f"try: mqctl -n 127.0.0.1:{ns_port} cluster list" in r.stderr
        listed = ok("-n", f"127.0.0.1:{ns_port}", "-o", "json", "cluster", "list")
        assert [b["addr"] for b in json.loads(listed.stdout)["brokers"]] == [f"127.0.0.1:{base}"]
    finally:
        ok("cluster", "down", "--dir", str(d), "--purge", timeout=90)


@pytest.mark.parametrize(("args", "code", "says"), [
    (("namesrv", "start", "--set", "listenPort=70000"), 2, "error: --set: listenPort: 70000 is out of range"),
    (("namesrv", "start", "--listen", "nonsense"), 2,
     "error: --listen 'nonsense': 'nonsense' is not an address of this machine"),
    (("namesrv", "start", "--listen", "127.0.0.1:70000"), 2,
     "error: --listen '127.0.0.1:70000': port 70000 is out of range (0-65535)"),
    (("namesrv", "start", "--listen", "nowhere.invalid:9"), 2,
     "error: --listen 'nowhere.invalid:9': 'nowhere.invalid' is not an address of this machine"),
    (("broker", "start", "--set", "listenPort=-1"), 2, "error: --set: listenPort: -1 is out of range"),
])
def test_bad_server_settings_are_usage_errors(args, code, says):
    """Issue 15 item 13."""
    r = run_mqctl(*args, timeout=60)
    assert r.returncode == code and r.stderr.startswith(says) and r.stderr.count("\n") == 1, r.stderr


def test_a_busy_port_says_which_and_who(tmp_path):
    import os
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cfg = tmp_path / "ns.properties"
        cfg.write_text(f"listenPort={port}\nkvConfigPath={tmp_path / 'kv.json'}\n")
        r = run_mqctl("namesrv", "start", "-c", str(cfg), "--listen", f"127.0.0.1:{port}", timeout=60)
    assert r.returncode == 1
    assert r.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port} (the name server's port): the port is "
                               f"in use, by pid {os.getpid()} (")


def test_the_servers_backup_files_are_mqctls_too(tmp_path):
    """A configuration change makes the servers rewrite their -c file, keeping FILE.bak: those are
    made by mqctl's processes, so purge takes them and a new up accepts the directory."""
    d = tmp_path / "D"
    _made_by_an_earlier_up(d)
    (d / "namesrv.properties.bak").write_text("old\n")
    (d / "broker-a.properties.bak").write_text("old\n")
    local.claim_directory(local.plan(d))  # no foreign entry: no --force needed
    local.purge_directory(d)
    assert not d.exists()
