# Licensed under the Apache License, Version 2.0. See LICENSE.
"""SIGKILL of a controller-mode master under load from the real C++ client.

Each run starts a reference name server with its embedded controller and two controller-mode
brokers (processes, ``allAckInSyncStateSet=true``), lets the C++ producer send, kills the master at a
random point, and checks:

* a new master is elected within seconds (the controller sees the connection close), and the
  client's sends succeed again once its route names the new master;
* every message the client saw SEND_OK is readable from the new master (a put is acknowledged
  only once every SyncStateSet member holds it);
* the old master restarts, cuts what it wrote alone, rejoins the SyncStateSet, and its CommitLog
  equals the new master's for the common range (files compared byte for byte).

The same runs with the second replica a Java 5.0.0 broker (``test_sigkill_master_with_a_java_replica``,
where ``../shared/javakit`` is): the Java broker is elected, and ours rejoins as its slave.

The repetition count is ``MQCTL_SOAK_RUNS`` (default 1, the bounded sample CI runs); the long run is
``MQCTL_SOAK_RUNS=10 pytest tests/controller/test_kill_master.py -s``, one line per run.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from tests.broker.helpers import pull_request
from tests.ha.servers import OurProcess, OurServers
from tests.javakit import JavaProcess, JavaServers, free_port
from tests.peers.bodies import mark_of
from tests.peers.harness import Peer, require
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import connect, split_addr
from wire.message import decode_messages

pytestmark = [pytest.mark.peers, pytest.mark.slow]

RUNS = int(os.environ.get("MQCTL_SOAK_RUNS", "1"))
TOPIC = "KillTopic"
QUEUES = 4
NAME = "broker-k"


async def _request(addr: str, cmd: RemotingCommand) -> RemotingCommand:
    host, port = split_addr(addr)
    c = await connect(host, port)
    try:
        return await c.request(cmd, timeout=10)
    finally:
        await c.aclose()


def call(addr: str, cmd: RemotingCommand) -> RemotingCommand:
    return asyncio.run(_request(addr, cmd))


def sync_state(controller: str, name: str = NAME) -> dict[str, Any]:
    try:
        r = call(controller, RemotingCommand(code=RequestCode.CONTROLLER_GET_SYNC_STATE_DATA,
                                             body=json.dumps([name]).encode()))
    except OSError:
        return {}
    table: dict[str, Any] = json.loads(r.body or b"{}").get("inSyncStateTable", {})
    return table.get(name, {})


def members(controller: str, name: str = NAME) -> set[str]:
    return {m["address"] for m in sync_state(controller, name).get("inSyncMembers") or ()}


def max_offset(addr: str) -> int:
    try:
        r = call(addr, RemotingCommand(code=RequestCode.GET_BROKER_EPOCH_CACHE))
    except OSError:
        return -1
    return int(json.loads(r.body or b"{}").get("maxOffset", -1)) if r.code == 0 else -1


def pull_all(addr: str) -> dict[str, int]:
    async def go() -> dict[str, int]:
        host, port = split_addr(addr)
        c = await connect(host, port)
        seen: dict[str, int] = {}
        try:
            for q in range(QUEUES):
                offset = 0
                while True:
                    r = await c.request(pull_request("KillCheck", TOPIC, q, offset, max_nums=32), timeout=10)
                    if r.code != ResponseCode.SUCCESS:
                        break
                    for m in decode_messages(r.body or b""):
                        mark = mark_of(m.body)
                        seen[mark] = seen.get(mark, 0) + 1
                    offset = int(r.ext_fields["nextBeginOffset"])
        finally:
            await c.aclose()
        return seen

    return asyncio.run(go())


def wait(cond: Any, what: str, timeout: float) -> float:
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, f"timed out: {what}"
        time.sleep(0.1)
    return time.monotonic() - t0


def commitlog(p: OurProcess | JavaProcess, end: int) -> bytes:
    out = bytearray()
    for f in sorted(p.commitlog_dir.iterdir()):
        out += f.read_bytes()
        if len(out) >= end:
            break
    return bytes(out[:end])


def node(servers: OurServers, ns: OurProcess, controller: str) -> OurProcess:
    return servers.broker(namesrv=ns, name=NAME, cluster="KillCluster", role="SLAVE", broker_id=-1,
                          enableControllerMode="true", controllerAddr=controller, allAckInSyncStateSet="true",
                          haSendHeartbeatInterval="1000", syncBrokerMetadataPeriod="1000",
                          checkSyncStateSetPeriod="1000")


def _soak(run: int, tmp_path: Path, servers: OurServers, second: Any, label: str) -> None:
    """One run; ``second(ns, controller)`` starts the other replica (ours or Java's)."""
    cport = free_port()
    controller = f"127.0.0.1:{cport}"
    ns = servers.namesrv(enableControllerInNamesrv="true", controllerDLegerPeers=f"n0-{controller}",
                         controllerStorePath=str(tmp_path / "controller"))
    a = node(servers, ns, controller)
    wait(lambda: sync_state(controller).get("masterAddress") == a.addr, "the first broker is master", 30)
    b = second(ns, controller)
    create = RemotingCommand.request(17, {"topic": TOPIC, "defaultTopic": "TBW102", "readQueueNums": QUEUES,
                                          "writeQueueNums": QUEUES, "perm": 6, "topicFilterType": "SINGLE_TAG",
                                          "topicSysFlag": 0, "order": "false"})
    assert call(a.addr, create).code == ResponseCode.SUCCESS
    wait(lambda: members(controller) == {a.addr, b.addr}, "the slave joins the SyncStateSet", 60)

    stop = tmp_path / "stop"
    producer = Peer("cpp", "produce", {"namesrv": ns.addr, "topic": TOPIC, "count": 1_000_000, "size": 300,
                                       "run_id": f"kill{run}", "interval_ms": 2, "send_timeout_ms": 3000,
                                       "stop_file": str(stop)}, tmp_path)
    target = random.randint(100, 400)
    producer.wait_for(lambda rs: sum(r["event"] == "sent" for r in rs) >= target, 120)
    a.kill()
    killed_at = time.time()
    elected = wait(lambda: sync_state(controller).get("masterAddress") == b.addr, "a new master", 30)
    # the client finds the new master through the name server (its route refresh, 30 s at most)
    producer.wait_for(lambda rs: sum(1 for r in rs if r["event"] == "sent" and r["t"] > killed_at + 0.5
                                     and r["status"] == "SEND_OK") >= 10, 90)
    stop.touch()
    producer.finish(120, codes=(0,))

    acked = {f"kill{run}:{r['i']}" for r in producer.sent if r["status"] == "SEND_OK"}
    assert len(acked) >= target
    on_new = pull_all(b.addr)
    missing = sorted(acked - set(on_new))
    assert not missing, f"{len(missing)} acknowledged messages are not on the new master, e.g. {missing[:5]}"

    # the old master comes back as a slave, cuts its own tail, and holds the new master's log
    servers.restart(a, graceful=False)
    wait(lambda: members(controller) == {a.addr, b.addr}, "the old master rejoins the SyncStateSet", 90)
    end = max_offset(b.addr)
    wait(lambda: max_offset(a.addr) == end, "the old master catches up", 30)
    same = commitlog(a, end) == commitlog(b, end)
    sent_after = sum(1 for r in producer.sent if r["t"] > killed_at and r["status"] == "SEND_OK")
    print(f"{label} run {run}: killed after {target} sends; new master in {elected:.2f} s; {len(acked)} SEND_OK, "
          f"all on the new master: {not missing}; {sent_after} SEND_OK after the kill; old master back in "
          f"the SyncStateSet, CommitLogs equal up to {end}: {same}")
    assert same


@pytest.mark.parametrize("run", range(RUNS))
def test_sigkill_controller_master_loses_nothing_acknowledged(run: int, tmp_path: Path) -> None:
    require("cpp")
    with OurServers(tmp_path / "servers") as servers:
        _soak(run, tmp_path, servers, lambda ns, controller: node(servers, ns, controller), "ours+ours")


@pytest.mark.parametrize("run", range(RUNS))
def test_sigkill_master_with_a_java_replica(run: int, tmp_path: Path, java_servers: JavaServers) -> None:
    """The same with the second replica a Java 5.0.0 broker: our master is killed, the Java broker
    is elected by our controller, and our broker rejoins as the Java broker's slave."""
    require("cpp")

    def java_replica(ns: OurProcess, controller: str) -> JavaProcess:
        return java_servers.broker("5.0.0", namesrv=ns.addr, cluster="KillCluster", name=NAME, broker_id=-1,
                                   role="SLAVE", enableControllerMode="true", controllerAddr=controller,
                                   allAckInSyncStateSet="true",
                                   storePathEpochFile="@NODE_DIR@/store/epochFileCheckpoint")

    with OurServers(tmp_path / "servers") as servers:
        _soak(run, tmp_path, servers, java_replica, "ours+java")
