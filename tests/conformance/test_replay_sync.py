# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The 09-* SYNC_MASTER captures of ../shared replayed against our servers in the layout they were
recorded on: a 2m-2s-sync local cluster (mqctl.local), its broker-a the target, whose slave
broker-a-s is up, frozen (SIGSTOP) or stopped (SIGTERM) as each capture's MANIFEST line says, by
the replay's slave control. Every request matches its recorded answer: SEND_OK once the slave
acked, FLUSH_SLAVE_TIMEOUT after slaveTimeout with the slave frozen (and no answer from the frozen
slave itself), SLAVE_NOT_AVAILABLE at once with it stopped."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from conformance.refcluster import free_port
from conformance.replay import replay
from conformance.target import Target
from tests.conftest import shared_path
from wire import RemotingCommand, RequestCode, ResponseCode, WireError

pytestmark = pytest.mark.slow

CAPTURES = ("09-sync-master-slave-up.pcap", "09-sync-master-slave-frozen.pcap", "09-sync-master-slave-down.pcap")


async def _in_sync(master: str, timeout: float = 60.0) -> int:
    """Wait until the master counts a slave in sync (GET_BROKER_HA_STATUS); the count."""
    from wire.aio import connect, split_addr
    from wire.bodies import HARuntimeInfo

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    host, port = split_addr(master)
    seen = "no answer"
    while loop.time() < end:
        try:
            conn = await connect(host, port)
            try:
                r = await conn.request(RemotingCommand.request(RequestCode.GET_BROKER_HA_STATUS), 5)
            finally:
                await conn.aclose()
            n = HARuntimeInfo.decode(r.body or b"{}").in_sync_slave_nums if r.code == ResponseCode.SUCCESS else -1
            seen = f"{n} slave(s) in sync"
            if n >= 1:
                return n
        except WireError as err:
            seen = str(err)
        await asyncio.sleep(0.2)
    raise AssertionError(f"the slave of {master} did not get in sync in {timeout:g} s ({seen})")


async def _unlisted(namesrv: str, addr: str, timeout: float = 60.0) -> None:
    """Wait until the name server no longer lists ``addr`` (a stopped broker unregisters and its
    connection closes; the captures were recorded long after that)."""
    from wire.aio import connect, split_addr
    from wire.bodies import ClusterInfo

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    host, port = split_addr(namesrv)
    while loop.time() < end:
        conn = await connect(host, port)
        try:
            r = await conn.request(RemotingCommand.request(RequestCode.GET_BROKER_CLUSTER_INFO), 5)
        finally:
            await conn.aclose()
        info = ClusterInfo.decode(r.body or b"{}")
        if all(addr not in b.broker_addrs.values() for b in info.broker_addr_table.values()):
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the name server {namesrv} still lists {addr} after {timeout:g} s")


def test_sync_master_captures_with_the_slave_up_frozen_and_stopped(tmp_path: Path, artefacts: Path,
                                                                   replays_written: list[Path]) -> None:
    from mqctl.local import (
        cluster_down,
        cluster_up,
        process_freeze,
        process_start,
        process_stop,
        process_thaw,
    )

    captures = [shared_path("captures", "java-4.9.8", name) for name in CAPTURES]
    directory = tmp_path / "cluster"
    # broker-a, broker-a-s, broker-b, broker-b-s at +0, +10, +20, +30, each with its HA (+1) and VIP (-2) port
    broker_port = free_port(around=tuple(d + o for d in (0, 10, 20, 30) for o in (0, 1, -2) if d + o))
    cluster = cluster_up(directory, layout="2m-2s-sync", namesrv_port=free_port(), broker_port=broker_port,
                         wait=60)
    state = {"slave": "up"}
    try:
        procs = {p.name: p for p in cluster.processes}
        master, slave = procs["broker-a"].addr, procs["broker-a-s"].addr
        # the captures were recorded on one master and its slave (the seven ports of the MANIFEST:
        # the name server's and broker-a's and its slave's three each): broker-b and its slave go,
        # so that the routes the clients asked for (TBW102's) list broker-a only, as recorded
        for name in ("broker-b-s", "broker-b"):
            process_stop(directory, name)

        async def control(wanted: str) -> str:
            loop = asyncio.get_running_loop()
            now = state["slave"]
            if wanted == "up":
                if now == "frozen":
                    await loop.run_in_executor(None, process_thaw, directory, "broker-a-s")
                elif now == "stopped":
                    await loop.run_in_executor(None, process_start, directory, "broker-a-s")
                state["slave"] = "up"
                return f"broker-a-s up ({now} before), {await _in_sync(master)} slave(s) in sync"
            if now == "frozen":
                await loop.run_in_executor(None, process_thaw, directory, "broker-a-s")
            if wanted == "frozen":
                await loop.run_in_executor(None, process_freeze, directory, "broker-a-s")
            else:
                await loop.run_in_executor(None, process_stop, directory, "broker-a-s")
                await _unlisted(cluster.namesrv_addr, slave)
            state["slave"] = wanted
            return f"broker-a-s {wanted} ({'SIGSTOP' if wanted == 'frozen' else 'SIGTERM'})"

        report = replay(captures, Target(namesrv=cluster.namesrv_addr, broker=master, slave=slave), slave=control)
    finally:
        if state["slave"] == "frozen":
            process_thaw(directory, "broker-a-s")
        stopped = cluster_down(directory)
    assert all(p.state in ("stopped", "killed") for p in stopped.processes), stopped.processes
    out = artefacts / "replay-sync-master.json"
    out.write_text(json.dumps(report.to_json(), indent=2) + "\n")
    replays_written.append(out)
    bad = [f"{v.capture} row {v.number} {v.verdict}: {'; '.join(map(str, v.diffs[:3])) or v.reason}"
           for v in report.unexplained]
    assert not bad, "\n".join(bad)
    # every request of the three captures was replayed (none skipped) with the slave as recorded
    assert {v.capture for v in report.verdicts} == set(CAPTURES)
    assert all(v.verdict in ("match", "explained") for v in report.verdicts), report.counts()
    assert [line.split(": ", 1)[1].split(" (")[0] for line in report.setup if "broker-a-s" in line] == \
        ["broker-a-s up", "broker-a-s frozen", "broker-a-s stopped"]
    codes = {(v.capture, v.code, v.answer.code) for v in report.verdicts if v.answer is not None}
    assert ("09-sync-master-slave-up.pcap", RequestCode.SEND_MESSAGE, ResponseCode.SUCCESS) in codes
    assert ("09-sync-master-slave-frozen.pcap", RequestCode.SEND_MESSAGE, ResponseCode.FLUSH_SLAVE_TIMEOUT) in codes
    assert ("09-sync-master-slave-down.pcap", RequestCode.SEND_MESSAGE, ResponseCode.SLAVE_NOT_AVAILABLE) in codes
    assert ("09-sync-master-slave-down.pcap", RequestCode.SEND_MESSAGE_V2, ResponseCode.SLAVE_NOT_AVAILABLE) in codes
    # the frozen slave's silence was replayed too: the client's UNREGISTER_CLIENT got no answer
    assert any(v.capture == CAPTURES[1] and v.code == RequestCode.UNREGISTER_CLIENT and v.answer is None
               and v.verdict == "match" for v in report.verdicts)


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
