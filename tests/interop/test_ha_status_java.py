# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl ha status`` and ``mqctl ha verify`` against the real Java 4.9.8 master and slave: 4.9.x does
not know GET_BROKER_HA_STATUS, so the status is put together from the runtime info of every process
of the broker name, asked by the real ``mqctl`` process; verify reads the records of both."""

from __future__ import annotations

import asyncio
import json

from tests.broker.helpers import send_request
from tests.cli.test_e2e import run_mqctl
from tests.javakit import JavaServers
from wire import RemotingCommand, ResponseCode
from wire.aio import connect
from wire.bodies import KVTable


async def _max_offset(port: int) -> int:
    """commitLogMaxOffset from the runtime info, or -1 while the broker does not give it."""
    c = await connect("127.0.0.1", port)
    try:
        r = await c.request(RemotingCommand(code=28), timeout=10)
        if r.code != ResponseCode.SUCCESS or not r.body:
            return -1
        return int(KVTable.decode(r.body).table["commitLogMaxOffset"])
    finally:
        await c.aclose()


def test_ha_status_of_a_java_4x_master_and_slave(java_servers: JavaServers) -> None:
    ns = java_servers.namesrv("4.9.8")
    master = java_servers.broker("4.9.8", namesrv=ns, cluster="HACluster", name="broker-h",
                                 haSendHeartbeatInterval="1000")
    slave = java_servers.broker("4.9.8", namesrv=ns, cluster="HACluster", name="broker-h", role="SLAVE",
                                haSendHeartbeatInterval="1000")

    async def main() -> int:
        c = await connect("127.0.0.1", master.port)
        for i in range(3):
            r = await c.request(send_request("HATopic", b"x" * 100, queue_id=i % 2), timeout=10)
            assert r.code == ResponseCode.SUCCESS
        r = await c.request(RemotingCommand(code=907))
        assert r.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED  # 4.9.x has no HA status request
        await c.aclose()
        end = await _max_offset(master.port)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while await _max_offset(slave.port) != end:
            assert loop.time() < deadline, "the Java slave did not catch up"
            await asyncio.sleep(0.5)
        return end

    master_max = asyncio.run(main())
    r = run_mqctl("-n", ns.addr, "-o", "json", "ha", "status", "-c", "HACluster")
    assert r.returncode == 0, r.stderr
    statuses = {s["addr"]: s for s in json.loads(r.stdout)}
    m, s = statuses[master.addr], statuses[slave.addr]
    assert m["source"] == s["source"] == "GET_BROKER_RUNTIME_INFO"
    assert (m["master"], m["master_commit_log_max_offset"], m["in_sync_slave_nums"]) == (True, master_max, 1)
    assert m["slaves"] == [{"addr": slave.addr, "ack_offset": master_max, "diff": 0, "transfer_kb_s": None,
                            "in_sync": True, "transfer_from_where": None, "lag_ms": None, "transfer_start": 0,
                            "problem": None}]
    assert s["master"] is False and s["client"]["master_addr"] == master.addr
    assert s["client"]["max_offset"] == master_max and s["client"]["transfer_kb_s"] is None

    r = run_mqctl("-n", ns.addr, "ha", "status", "-b", slave.addr)
    assert r.returncode == 0, r.stderr
    lines = [line.split(None, 1) for line in r.stdout.splitlines()]
    assert ["#MasterAddr", master.addr] in lines and ["#CommitLogMaxOffset", str(master_max)] in lines
    assert ["#TransferSpeed(KB/s)", "-"] in lines
    assert ["#Source", "GET_BROKER_RUNTIME_INFO (4.x broker: offsets compared)"] in lines

    # mqctl ha verify proves the Java slave a faithful copy, record by record (VIEW_MESSAGE_BY_ID)
    r = run_mqctl("-n", ns.addr, "-o", "json", "ha", "verify", "broker-h", "--bytes")
    assert r.returncode == 0, r.stdout + r.stderr
    (v,) = json.loads(r.stdout)["slaves"]
    assert (v["addr"], v["slave_max_offset"], v["bytes_compared"]) == (slave.addr, master_max, master_max)
    assert [(f["records"], f["master_crc"] == f["slave_crc"]) for f in v["files"]] == [(3, True)]
