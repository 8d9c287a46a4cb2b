# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The 09-* SYNC_MASTER captures of ../shared (with every other 4.9.8 capture) replayed against our
servers in the layout they were recorded on: a 2m-2s-sync local cluster (mqctl.local), its broker-a
the target, whose slave broker-a-s is up, frozen (SIGSTOP) or stopped (SIGTERM) as each capture's
MANIFEST line says, by the replay's slave control (mqctl.local.slave_control, which `mqctl conformance replay
--local-cluster` uses too). Every request matches its recorded answer: SEND_OK once the slave
acked, FLUSH_SLAVE_TIMEOUT after slaveTimeout with the slave frozen (and no answer from the frozen
slave itself), SLAVE_NOT_AVAILABLE at once with it stopped."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.replay import replay
from conformance.target import Target
from tests.conftest import shared_path
from tests.javakit import free_port, free_ports
from wire import RequestCode, ResponseCode

pytestmark = pytest.mark.slow

CAPTURES = ("09-sync-master-slave-up.pcap", "09-sync-master-slave-frozen.pcap", "09-sync-master-slave-down.pcap")


@pytest.fixture(scope="module")
def sync_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Target]]:
    """A 2m-2s-sync local cluster with broker-b and its slave stopped: the captures were recorded
    on one master and its slave (the seven ports of the MANIFEST: the name server's and broker-a's
    and its slave's three each), so the routes the clients asked for (TBW102's) list broker-a only.
    Every process is stopped at the end (a frozen slave thawed first)."""
    from mqctl.local import LocalClusterError, cluster_down, cluster_up, process_stop, process_thaw

    directory = tmp_path_factory.mktemp("sync") / "cluster"
    # broker-a, broker-a-s, broker-b, broker-b-s at +0, +10, +20, +30, each with its HA (+1) and VIP (-2)
    # port, below the ephemeral range (where another process's connection may take a port first)
    broker_port = free_ports(*(d + o for d in (0, 10, 20, 30) for o in (0, 1, -2)))
    cluster = cluster_up(directory, layout="2m-2s-sync", namesrv_port=free_port(), broker_port=broker_port,
                         wait=60)
    try:
        for name in ("broker-b-s", "broker-b"):
            process_stop(directory, name)
        procs = {p.name: p for p in cluster.processes}
        yield directory, Target(namesrv=cluster.namesrv_addr, broker=procs["broker-a"].addr,
                                slave=procs["broker-a-s"].addr)
    finally:
        with contextlib.suppress(LocalClusterError):  # a frozen slave would not take the SIGTERM
            process_thaw(directory, "broker-a-s")
        stopped = cluster_down(directory)
    assert all(p.state in ("stopped", "killed") for p in stopped.processes), stopped.processes


def test_every_4_9_8_capture_with_the_slave_up_frozen_and_stopped(
        sync_cluster: tuple[Path, Target], artefacts: Path, replays_written: list[Path]) -> None:
    """Every 4.9.8 capture, in the order they were recorded, against the SYNC_MASTER: the 09-*
    ones with the slave as recorded, the others (and the set-up's sends) with it up and in sync."""
    from mqctl.local import process_thaw, slave_control

    directory, target = sync_cluster
    captures = sorted(shared_path("captures", "java-4.9.8").glob("*.pcap"))
    assert {c.name for c in captures} >= set(CAPTURES)
    control = slave_control(directory, "broker-a-s")
    try:
        report = replay(captures, target, slave=control)
    finally:
        if control.state == "frozen":
            process_thaw(directory, "broker-a-s")
    out = artefacts / "replay-sync-master.json"
    out.write_text(json.dumps(report.to_json(), indent=2) + "\n")
    replays_written.append(out)
    bad = [f"{v.capture} row {v.number} {v.verdict}: {'; '.join(map(str, v.diffs[:3])) or v.reason}"
           for v in report.unexplained]
    assert not bad, "\n".join(bad)
    assert report.counts()["match"] > 300
    # every request of the three captures was replayed (none skipped) with the slave as recorded
    sync = [v for v in report.verdicts if v.capture in CAPTURES]
    assert {v.capture for v in sync} == set(CAPTURES)
    assert all(v.verdict in ("match", "explained") for v in sync), [(v.capture, v.verdict, v.reason) for v in sync]
    moves = [line.split(": ", 1)[1] for line in report.setup if "broker-a-s" in line]
    assert [m.split(" (")[0] for m in moves][:4] == \
        ["broker-a-s up", "broker-a-s frozen", "broker-a-s stopped", "broker-a-s up"], moves
    # stopped by its SIGTERM, as the recorded slave was (not killed: it shut down in time)
    assert "stopped (SIGTERM; the name server no longer lists it)" in moves[2]
    codes = {(v.capture, v.code, v.answer.code) for v in sync if v.answer is not None}
    assert ("09-sync-master-slave-up.pcap", RequestCode.SEND_MESSAGE, ResponseCode.SUCCESS) in codes
    assert ("09-sync-master-slave-frozen.pcap", RequestCode.SEND_MESSAGE, ResponseCode.FLUSH_SLAVE_TIMEOUT) in codes
    assert ("09-sync-master-slave-down.pcap", RequestCode.SEND_MESSAGE, ResponseCode.SLAVE_NOT_AVAILABLE) in codes
    assert ("09-sync-master-slave-down.pcap", RequestCode.SEND_MESSAGE_V2, ResponseCode.SLAVE_NOT_AVAILABLE) in codes
    # the frozen slave's silence was replayed too: the client's UNREGISTER_CLIENT got no answer
    assert any(v.capture == CAPTURES[1] and v.code == RequestCode.UNREGISTER_CLIENT and v.answer is None
               and v.verdict == "match" for v in sync)
    # and the slave was up again for what came after (10-error-responses sends to it: case 8)
    after = [v for v in report.verdicts if v.capture == "10-error-responses.pcap" and v.server.endswith(":10921")]
    assert after and all(v.verdict == "match" for v in after)


def test_slave_entries_of_set_up_files(tmp_path: Path) -> None:
    from conformance.replay.setup import SETUPS, SetupError, load_setup

    shipped = load_setup(SETUPS / "java-4.9.8.yaml")
    assert [(shipped.slave_state(c).state if shipped.slave_state(c) else None) for c in CAPTURES] == \
        ["up", "frozen", "stopped"]
    assert shipped.slave_state("02-topicRoute.pcap") is None and all(s.why for s in shipped.slave)
    for text, error in (("slave:\n  - {captures: [x], state: paused, why: y}\n", "one of up, frozen, stopped"),
                        ("slave:\n  - {captures: [x], state: up}\n", "says why"),
                        ("slave:\n  - {state: up, why: y}\n", "list of capture globs")):
        bad = tmp_path / "bad.yaml"
        bad.write_text("version: 1\n" + text)
        with pytest.raises(SetupError, match=error):
            load_setup(bad)


def test_mqctl_replays_them_against_a_local_cluster(sync_cluster: tuple[Path, Target]) -> None:
    """``mqctl conformance replay --local-cluster DIR``: the same control from the command line, and
    the slave left as it was found (running)."""
    from mqctl.local import LocalClusterError, cluster_status, process_start
    from tests.cli.test_e2e import run_mqctl

    directory, _target = sync_cluster
    with contextlib.suppress(LocalClusterError):  # the test before left it stopped
        process_start(directory, "broker-a-s")
    before = {p.name: p.state for p in asyncio.run(cluster_status(directory)).processes}
    captures = [str(shared_path("captures", "java-4.9.8", name)) for name in CAPTURES[1:]]
    r = run_mqctl("-o", "json", "conformance", "replay", "--local-cluster", str(directory), *captures, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    doc = json.loads(r.stdout)
    assert doc["unexplained"] == 0 and set(doc["counts"]) <= {"match", "explained"}, doc["counts"]
    assert any("broker-a-s stopped" in line for line in doc["setup"])
    after = {p.name: p.state for p in asyncio.run(cluster_status(directory)).processes}
    assert before["broker-a-s"] == after["broker-a-s"] == "answering", (before, after)
