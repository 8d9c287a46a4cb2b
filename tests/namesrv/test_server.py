# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The name server over real sockets on 127.0.0.1 (ephemeral ports)."""

from __future__ import annotations

import asyncio
import struct
import zlib
from pathlib import Path

import pytest

from reference_broker.config import NamesrvConfig
from reference_broker.namesrv import NameServer
from reference_broker.runtime import ServiceError
from wire import RemotingCommand, RequestCode, ResponseCode, SerializeType
from wire.aio import RemotingConnection, RequestTimeout, connect
from wire.bodies import ClusterInfo, DataVersion, RegisterBrokerBody, TopicConfig, TopicConfigSerializeWrapper

R = RequestCode


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def config(tmp_path: Path, **values: str) -> NamesrvConfig:
    return NamesrvConfig(overrides={"kvConfigPath": str(tmp_path / "kvConfig.json"),
                                    "configStorePath": str(tmp_path / "namesrv.properties"), **values})


def registration(addr: str, broker_id: int, *topics: str, name: str = "broker-a") -> RemotingCommand:
    body = RegisterBrokerBody(topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
        topic_config_table={t: TopicConfig(topic_name=t) for t in topics},
        data_version=DataVersion(counter=1, timestamp=1))).encode()
    ext = {"brokerName": name, "brokerAddr": addr, "clusterName": "DefaultCluster",
           "haServerAddr": addr.replace("10911", "10912"), "brokerId": broker_id, "compressed": False,
           "bodyCrc32": zlib.crc32(body) & 0x7FFFFFFF}
    return RemotingCommand.request(R.REGISTER_BROKER, ext, body)


async def cluster(conn: RemotingConnection) -> dict[int, str]:
    info = ClusterInfo.decode((await conn.request(RemotingCommand.request(R.GET_BROKER_CLUSTER_INFO))).body)
    entry = info.broker_addr_table.get("broker-a")
    return dict(entry.broker_addrs) if entry else {}


async def wait_for(predicate, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not await predicate():
        assert loop.time() < end, "condition not reached in time"
        await asyncio.sleep(0.05)


def test_start_stop_and_address(tmp_path: Path) -> None:
    async def main():
        ns = NameServer(config(tmp_path), port=0)
        await ns.start()
        assert ns.port > 0 and ns.address == f"127.0.0.1:{ns.port}"
        conn = await connect("127.0.0.1", ns.port)
        resp = await conn.request(RemotingCommand.request(R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))
        assert resp.code == ResponseCode.SUCCESS and resp.body == b'{"topicList":[]}'
        await ns.stop()
        await asyncio.wait_for(conn.wait_closed(), 2)  # stopping closes the connections
    run(main())


def test_closed_broker_connection_drops_that_broker_at_once(tmp_path: Path) -> None:
    async def main():
        async with NameServer(config(tmp_path), port=0) as ns:
            master = await connect("127.0.0.1", ns.port)
            slave = await connect("127.0.0.1", ns.port)
            admin = await connect("127.0.0.1", ns.port)
            assert (await master.request(registration("10.0.0.1:10911", 0, "T"))).code == 0
            answer = await slave.request(registration("10.0.0.2:10911", 1))
            assert answer.ext_fields["masterAddr"] == "10.0.0.1:10911"
            assert await cluster(admin) == {0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}
            await master.aclose()

            async def master_gone():
                return await cluster(admin) == {1: "10.0.0.2:10911"}
            await wait_for(master_gone)
            # the slave keeps the broker name and the topic routed
            route = await admin.request(RemotingCommand.request(R.GET_ROUTEINFO_BY_TOPIC, {"topic": "T"}))
            assert route.code == ResponseCode.SUCCESS
            await admin.aclose()  # an admin connection closing drops nothing
            admin = await connect("127.0.0.1", ns.port)
            assert await cluster(admin) == {1: "10.0.0.2:10911"}
            await slave.aclose()

            async def all_gone():
                return await cluster(admin) == {}
            await wait_for(all_gone)
            await admin.aclose()
    run(main())


def test_silent_brokers_expire(tmp_path: Path) -> None:
    async def main():
        cfg = config(tmp_path, scanNotActiveBrokerInterval="100", brokerChannelExpiredTime="1000")
        async with NameServer(cfg, port=0) as ns:
            broker = await connect("127.0.0.1", ns.port)
            admin = await connect("127.0.0.1", ns.port)
            loop = asyncio.get_running_loop()
            started = loop.time()
            await broker.request(registration("10.0.0.1:10911", 0, "T"))
            # re-registering keeps it alive past the expiry time
            for _ in range(8):
                await asyncio.sleep(0.15)
                await broker.request(registration("10.0.0.1:10911", 0, "T"))
            assert loop.time() - started > 1.1 and await cluster(admin) == {0: "10.0.0.1:10911"}

            async def expired():
                return await cluster(admin) == {}
            await wait_for(expired, 5)
            # Java closes the expired broker's channel
            await asyncio.wait_for(broker.wait_closed(), 2)
            assert not admin.is_closing
            await admin.aclose()
    run(main())


def test_oneway_registration_is_accepted_without_answer(tmp_path: Path) -> None:
    async def main():
        async with NameServer(config(tmp_path), port=0) as ns:
            broker = await connect("127.0.0.1", ns.port)
            broker.oneway(registration("10.0.0.1:10911", 0, "T"))
            admin = await connect("127.0.0.1", ns.port)

            async def registered():
                return await cluster(admin) == {0: "10.0.0.1:10911"}
            await wait_for(registered)
            await broker.aclose()
            await admin.aclose()
    run(main())


def test_unknown_code_gets_no_answer_and_the_connection_stays(tmp_path: Path) -> None:
    async def main():
        async with NameServer(config(tmp_path), port=0) as ns:
            conn = await connect("127.0.0.1", ns.port)
            with pytest.raises(RequestTimeout):
                await conn.request(RemotingCommand.request(9999, {"foo": "bar"}), timeout=0.5)
            assert not conn.is_closing
            resp = await conn.request(RemotingCommand.request(R.GET_ROUTEINFO_BY_TOPIC, {"topic": "X"}))
            assert resp.code == ResponseCode.TOPIC_NOT_EXIST
            await conn.aclose()
    run(main())


@pytest.mark.parametrize("frame", [
    struct.pack(">iI", 24, 200) + bytes(20),                     # header length beyond the frame
    struct.pack(">iI", 24, (7 << 24) | 10) + bytes(20),          # serialize type 7
    struct.pack(">iI", 0x7FFFFFFF, 10),                          # frame length far over the cap
    struct.pack(">iI", 14, 6) + b"{oops}" + bytes(4),            # a header that is not JSON
], ids=["header-length", "serialize-type", "too-long", "bad-json"])
def test_malformed_frame_closes_that_connection_only(tmp_path: Path, frame: bytes) -> None:
    async def main():
        async with NameServer(config(tmp_path), port=0) as ns:
            good = await connect("127.0.0.1", ns.port)
            reader, writer = await asyncio.open_connection("127.0.0.1", ns.port)
            writer.write(frame)
            await writer.drain()
            assert await asyncio.wait_for(reader.read(), 3) == b""  # closed without an answer
            writer.close()
            resp = await good.request(RemotingCommand.request(R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))
            assert resp.code == ResponseCode.SUCCESS
            await good.aclose()
    run(main())


def test_idle_connections_are_closed(tmp_path: Path) -> None:
    async def main():
        async with NameServer(config(tmp_path, serverChannelMaxIdleTimeSeconds="1"), port=0) as ns:
            idle = await connect("127.0.0.1", ns.port)
            busy = await connect("127.0.0.1", ns.port)
            loop = asyncio.get_running_loop()
            end = loop.time() + 2.0
            while loop.time() < end:
                await busy.request(RemotingCommand.request(R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))
                await asyncio.sleep(0.2)
            assert idle.is_closing and not busy.is_closing
            await busy.aclose()
    run(main())


def test_kv_config_survives_a_restart(tmp_path: Path) -> None:
    async def main():
        ext = {"namespace": "ORDER_TOPIC_CONFIG", "key": "T", "value": "broker-a:8"}
        async with NameServer(config(tmp_path), port=0) as ns:
            conn = await connect("127.0.0.1", ns.port)
            assert (await conn.request(RemotingCommand.request(R.PUT_KV_CONFIG, ext))).code == 0
            await conn.aclose()
        async with NameServer(config(tmp_path), port=0) as ns:
            conn = await connect("127.0.0.1", ns.port)
            resp = await conn.request(RemotingCommand.request(
                R.GET_KV_CONFIG, {"namespace": "ORDER_TOPIC_CONFIG", "key": "T"},
                serialize_type=SerializeType.ROCKETMQ))
            assert dict(resp.ext_fields) == {"value": "broker-a:8"}
            assert resp.serialize_type is SerializeType.ROCKETMQ
            await conn.aclose()
    run(main())


def test_corrupt_kv_file_stops_the_start(tmp_path: Path) -> None:
    (tmp_path / "kvConfig.json").write_text("{broken")

    async def main():
        with pytest.raises(ServiceError, match=r"kvConfig\.json"):
            await NameServer(config(tmp_path), port=0).start()
    run(main())


def test_name_servers_are_independent(tmp_path: Path) -> None:
    async def main():
        one, two = tmp_path / "one", tmp_path / "two"
        async with NameServer(config(one), port=0) as a, NameServer(config(two), port=0) as b:
            broker = await connect("127.0.0.1", a.port)
            await broker.request(registration("10.0.0.1:10911", 0, "T"))
            other = await connect("127.0.0.1", b.port)
            assert await cluster(other) == {}
            assert b.routes.broker_live_table == {} and len(a.routes.broker_live_table) == 1
            await broker.aclose()
            await other.aclose()
    run(main())
