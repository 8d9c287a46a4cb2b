# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The broker and the reference name server together: registration at start, after topics
are created (oneway when created on a send), compressed bodies, several name servers, a slave
learning its master, unregistration at stop, and name servers that cannot be reached."""

from __future__ import annotations

import asyncio
from pathlib import Path

from reference_broker.namesrv import NameServer
from tests.broker.helpers import (
    client,
    namesrv_config,
    pull_request,
    run,
    running_broker,
    running_cluster,
    send_request,
)
from wire import RemotingCommand, ResponseCode
from wire.bodies import ClusterInfo, TopicRouteData

RC = ResponseCode


async def route(port: int, topic: str) -> TopicRouteData | None:
    c = await client(port)
    try:
        r = await c.request(RemotingCommand.request(105, {"topic": topic}))
        return TopicRouteData.decode(r.body) if r.code == RC.SUCCESS else None
    finally:
        await c.aclose()


async def cluster_info(port: int) -> ClusterInfo:
    c = await client(port)
    try:
        return ClusterInfo.decode((await c.request(RemotingCommand.request(106))).body)
    finally:
        await c.aclose()


def test_registration_lifecycle(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_cluster(tmp_path, defaultTopicQueueNums="8") as (ns, b):
            tbw = await route(ns.port, "TBW102")
            assert tbw is not None
            (bd,) = tbw.broker_datas
            assert bd.broker_name == "broker-a" and bd.cluster == "DefaultCluster"
            assert dict(bd.broker_addrs) == {0: b.address}
            (qd,) = tbw.queue_datas
            assert (qd.perm, qd.read_queue_nums, qd.write_queue_nums) == (7, 8, 8)
            # a topic created on a send reaches the name server through a oneway registration
            c = await client(b)
            assert (await c.request(send_request("Made", b"x"))).code == RC.SUCCESS
            found: list[TopicRouteData | None] = [None]

            async def poll() -> None:
                while found[0] is None:
                    found[0] = await route(ns.port, "Made")
                    await asyncio.sleep(0.05)

            await asyncio.wait_for(poll(), 5)
            assert found[0] is not None and found[0].queue_datas[0].write_queue_nums == 4
            # UPDATE_AND_CREATE_TOPIC registers before it answers
            r = await c.request(RemotingCommand.request(17, {
                "topic": "Admin", "defaultTopic": "TBW102", "readQueueNums": 2, "writeQueueNums": 2, "perm": 6,
                "topicFilterType": "SINGLE_TAG", "order": False}))
            assert r.code == RC.SUCCESS
            admin = await route(ns.port, "Admin")
            assert admin is not None and admin.queue_datas[0].read_queue_nums == 2
            await c.aclose()
            info = await cluster_info(ns.port)
            assert info.cluster_addr_table == {"DefaultCluster": ("broker-a",)}

    run(main())


def test_unregister_at_stop(tmp_path: Path) -> None:
    async def main() -> None:
        async with NameServer(namesrv_config(tmp_path / "ns"), port=0) as ns:
            async with running_broker(tmp_path / "store", ns.address):
                assert "broker-a" in (await cluster_info(ns.port)).broker_addr_table
            assert await route(ns.port, "TBW102") is None
            assert not (await cluster_info(ns.port)).broker_addr_table

    run(main())


def test_several_name_servers_compressed_and_one_down(tmp_path: Path) -> None:
    async def main() -> None:
        async with NameServer(namesrv_config(tmp_path / "a"), port=0) as a, \
                NameServer(namesrv_config(tmp_path / "b"), port=0) as b_ns:
            addrs = f"{a.address};127.0.0.1:1;{b_ns.address}"
            async with running_broker(tmp_path / "store", addrs, compressedRegister="true") as b:
                for ns in (a, b_ns):
                    r = await route(ns.port, "SELF_TEST_TOPIC")
                    assert r is not None and dict(r.broker_datas[0].broker_addrs) == {0: b.address}
                c = await client(b)
                assert (await c.request(send_request("Anywhere", b"x"))).code == RC.SUCCESS
                await c.aclose()

    run(main())


def test_slave_learns_its_master(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_cluster(tmp_path) as (ns, master):
            async with running_broker(tmp_path / "slave", ns.address, brokerRole="SLAVE", brokerId="1") as slave:
                assert slave.master_addr == master.address
                # the HA port actually bound (listenPort + 1; ephemeral beside an ephemeral listen port)
                assert slave.master_ha_addr == master.ha_server_addr == f"127.0.0.1:{master.ha.port}"
                assert slave.ha_client is not None and slave.ha_client.master_address == master.ha_server_addr
                info = await cluster_info(ns.port)
                assert dict(info.broker_addr_table["broker-a"].broker_addrs) == {0: master.address,
                                                                                 1: slave.address}
                assert master.master_addr is None

    run(main())


def test_broker_permission_change_is_registered_at_once(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_cluster(tmp_path) as (ns, b):
            c = await client(b)
            await c.request(send_request("PermT", b"x"))
            r = await c.request(RemotingCommand.request(25, None, b"brokerPermission=4\n"))
            assert r.code == RC.SUCCESS
            routed = await route(ns.port, "PermT")
            assert routed is not None and {q.perm for q in routed.queue_datas} == {4}
            r = await c.request(RemotingCommand.request(25, None, b"brokerPermission=2\n"))
            r = await c.request(pull_request("G", "PermT", 0, 0))
            assert (r.code, r.remark) == (RC.NO_PERMISSION, "the broker[127.0.0.1] pulling message is forbidden")
            await c.aclose()

    run(main())
