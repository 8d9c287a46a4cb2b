# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl ha status`` against 4.x brokers (GET_BROKER_HA_STATUS unknown to them): the status put
together from the runtime info of every process of the broker name, a master and its slave
registered with a real name server, asked by the real ``mqctl`` process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from reference_broker.broker import Broker
from reference_broker.namesrv import NameServer
from tests.broker.helpers import broker_config, client, namesrv_config, run, send_request, wait_until
from tests.cli.test_e2e import run_mqctl
from wire import ResponseCode


def test_ha_status_of_a_4x_master_and_slave(tmp_path: Path) -> None:
    async def main() -> None:
        async with NameServer(namesrv_config(tmp_path / "ns"), host="127.0.0.1", port=0) as ns:
            common = {"brokerClusterName": "HACluster", "brokerName": "broker-h"}
            master_cfg = broker_config(tmp_path / "m", ns.address, **common)
            slave_cfg = broker_config(tmp_path / "s", ns.address, **common, brokerId="1", brokerRole="SLAVE")
            async with Broker(master_cfg, host="127.0.0.1", port=0) as master, \
                    Broker(slave_cfg, host="127.0.0.1", port=0) as slave:
                def both_registered() -> bool:
                    entry = ns.routes.broker_addr_table.get("broker-h")
                    return entry is not None and len(entry.broker_addrs) == 2

                await wait_until(both_registered, timeout=10)
                c = await client(master)
                for i in range(3):
                    r = await c.request(send_request("HATopic", b"x" * 100, queue_id=i % 2))
                    assert r.code == ResponseCode.SUCCESS
                await c.aclose()
                m_addr, s_addr = f"127.0.0.1:{master.port}", f"127.0.0.1:{slave.port}"
                master_max = master.store.commitlog.max_offset
                assert master_max > 0

                r = await asyncio.to_thread(run_mqctl, "-n", ns.address, "-o", "json", "ha", "status",
                                            "-c", "HACluster")
                assert r.returncode == 0, r.stderr
                statuses = {s["addr"]: s for s in json.loads(r.stdout)}
                m, s = statuses[m_addr], statuses[s_addr]
                assert m["source"] == s["source"] == "GET_BROKER_RUNTIME_INFO"
                assert (m["master"], m["master_commit_log_max_offset"], m["in_sync_slave_nums"]) == (
                    True, master_max, 1)
                assert m["slaves"] == [{"addr": s_addr, "ack_offset": 0, "diff": master_max,
                                        "transfer_kb_s": None, "in_sync": True, "transfer_from_where": None}]
                assert s["master"] is False and s["client"]["master_addr"] == m_addr
                assert s["client"]["max_offset"] == 0 and s["client"]["transfer_kb_s"] is None

                r = await asyncio.to_thread(run_mqctl, "-n", ns.address, "ha", "status", "-b", s_addr)
                assert r.returncode == 0, r.stderr
                lines = [line.split(None, 1) for line in r.stdout.splitlines()]
                assert ["#MasterAddr", m_addr] in lines and ["#CommitLogMaxOffset", "0"] in lines
                assert ["#TransferSpeed(KB/s)", "-"] in lines
                assert ["#Source", "GET_BROKER_RUNTIME_INFO (4.x broker: offsets compared)"] in lines

    run(main())
