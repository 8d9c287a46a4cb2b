# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The harness itself, against the real Java 4.9.8 name server and broker: they start on free ports,
our ``mqctl`` reads them, Java's ``mqadmin`` reads them, signals reach the right process, and every
process is gone afterwards."""

from __future__ import annotations

import json
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.javakit import JavaProcess, JavaServers, free_broker_port, javakit_missing


@pytest.fixture(scope="module")
def java_pair(java_servers_module: JavaServers) -> Iterator[tuple[JavaProcess, JavaProcess]]:
    ns = java_servers_module.namesrv("4.9.8")
    broker = java_servers_module.broker("4.9.8", namesrv=ns, name="smoke-a")
    yield ns, broker


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_ports_are_free_and_listened_on(java_pair: tuple[JavaProcess, JavaProcess]) -> None:
    ns, broker = java_pair
    assert _listening(ns.port)
    # the broker binds its port, the VIP channel (port-2) and the HA listener (port+1)
    assert all(_listening(p) for p in (broker.port, broker.port - 2, broker.port + 1))
    assert broker.alive and ns.alive and not broker.frozen
    assert (broker.node_dir / "store" / "commitlog").is_dir()


def test_mqctl_reads_java_servers(java_pair: tuple[JavaProcess, JavaProcess],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from mqctl.app import main

    ns, broker = java_pair
    rc = main(["-n", ns.addr, "-o", "json", "cluster", "list"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    rows = json.loads(out)["brokers"]
    assert [(r["cluster"], r["broker_name"], r["broker_id"], r["addr"]) for r in rows] == \
        [("DefaultCluster", "smoke-a", 0, broker.addr)]
    assert rows[0]["version"] == "V4_9_8" and rows[0]["error"] is None


def test_mqadmin_reads_java_servers(java_pair: tuple[JavaProcess, JavaProcess],
                                    java_servers_module: JavaServers) -> None:
    ns, broker = java_pair
    done = java_servers_module.mqadmin("4.9.8", "clusterList", "-n", ns.addr)
    assert done.returncode == 0, done.stderr
    assert "smoke-a" in done.stdout and broker.addr in done.stdout, done.stdout


def test_freeze_thaw_and_stop(java_servers: JavaServers) -> None:
    ns = java_servers.namesrv("4.9.8")
    ns.freeze()
    assert ns.frozen
    with socket.create_connection(("127.0.0.1", ns.port), timeout=2) as s:  # the kernel still accepts
        s.settimeout(0.5)
        s.sendall(b"\x00\x00\x00\x10")
        with pytest.raises(TimeoutError):
            s.recv(1)
    ns.thaw()
    assert ns.alive and not ns.frozen
    ns.signal(signal.SIGKILL)
    ns.stop()
    assert not ns.alive
    # a killed JVM's leader thread is a zombie before its last threads have closed the shared sockets
    deadline = time.monotonic() + 10
    while _listening(ns.port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _listening(ns.port)


def test_broker_port_triple_is_free() -> None:
    port = free_broker_port()
    for p in (port - 2, port, port + 1):
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))


def test_close_stops_everything_even_after_a_failure(tmp_path: Path) -> None:
    if javakit_missing():
        pytest.skip(javakit_missing() or "")
    started: list[JavaProcess] = []
    with pytest.raises(RuntimeError, match="scenario failed"), JavaServers(tmp_path) as servers:
        started.append(servers.namesrv("4.9.8"))
        started[0].freeze()  # a frozen process too
        raise RuntimeError("scenario failed")
    assert started and not started[0].alive


def test_missing_kit_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tests.javakit as jk

    monkeypatch.setattr(jk, "KIT", tmp_path / "nowhere")
    reason = jk.javakit_missing()
    assert reason is not None and "is absent" in reason
    with pytest.raises(pytest.skip.Exception, match="is absent"):
        jk.JavaServers(tmp_path)
