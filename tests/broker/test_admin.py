# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Administration requests, queries, unknown codes, malformed frames and restarts, over real
sockets."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reference_broker.runtime import ServiceError
from tests.broker.helpers import (
    broker_config,
    client,
    heartbeat_request,
    messages,
    pull_request,
    raw_exchange,
    run,
    running_broker,
    send_request,
)
from tests.conftest import shared_path
from tests.pcaputil import streams
from wire import FrameBuffer, RemotingCommand, ResponseCode, SerializeType, decode_frame
from wire.bodies import (
    ConsumerOffsetSerializeWrapper,
    ConsumeStats,
    DataVersion,
    GroupList,
    KVTable,
    PropertiesBody,
    SubscriptionGroupConfig,
    SubscriptionGroupWrapper,
    TopicConfigSerializeWrapper,
    TopicList,
    TopicStatsTable,
)
from wire.message import create_offset_msg_id

RC = ResponseCode


def create_topic(name: str, *, perm: int = 6, queues: int = 4, filter_type: str = "SINGLE_TAG") -> RemotingCommand:
    return RemotingCommand.request(17, {"topic": name, "defaultTopic": "TBW102", "readQueueNums": queues,
                                        "writeQueueNums": queues, "perm": perm, "topicFilterType": filter_type,
                                        "topicSysFlag": 0, "order": False})


def test_topics(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            v0 = b.topics.data_version.counter
            assert (await c.request(create_topic("AdmTopic", queues=3))).code == RC.SUCCESS
            assert b.topics.data_version.counter == v0 + 1
            table = TopicConfigSerializeWrapper.decode((await c.request(RemotingCommand.request(21))).body)
            assert table.topic_config_table["AdmTopic"].read_queue_nums == 3
            assert table.data_version.counter == b.topics.data_version.counter
            r = await c.request(create_topic("TBW102"))
            assert (r.code, r.remark) == (RC.SYSTEM_ERROR, "The topic[TBW102] is conflict with system topic.")
            r = await c.request(create_topic("bad name"))
            assert r.code == RC.SYSTEM_ERROR and "illegal characters" in r.remark
            r = await c.request(create_topic("X", filter_type="NOPE"))
            assert r.code == RC.SYSTEM_ERROR
            await c.request(send_request("AdmTopic", b"m"))
            assert b.store.max_offset("AdmTopic", 0) == 1
            r = await c.request(RemotingCommand.request(215, {"topic": "AdmTopic"}))
            assert r.code == RC.SUCCESS and b.topics.select("AdmTopic") is None
            assert "AdmTopic" not in b.store.topics()
            r = await c.request(RemotingCommand.request(215, {"topic": "SCHEDULE_TOPIC_XXXX"}))
            assert r.code == RC.SYSTEM_ERROR
            # queues of topics no longer configured go with CLEAN_EXPIRED_CONSUMEQUEUE too
            await c.request(send_request("Orphan", b"m"))
            b.topics.table.pop("Orphan")
            assert (await c.request(RemotingCommand.request(306))).code == RC.SUCCESS
            assert "Orphan" not in b.store.topics()
            assert (await c.request(RemotingCommand.request(329))).code == RC.SUCCESS
            system = TopicList.decode((await c.request(RemotingCommand.request(305))).body).topic_list
            assert {"TBW102", "SCHEDULE_TOPIC_XXXX", "DefaultCluster", "broker-a"} <= set(system)
            assert "StatT" not in system
            await c.aclose()

    run(main())


def test_subscription_groups_and_offsets(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            cfg = SubscriptionGroupConfig(group_name="AdmGroup", retry_queue_nums=3, retry_max_times=5)
            assert (await c.request(RemotingCommand.request(200, None, cfg.encode()))).code == RC.SUCCESS
            wrapper = SubscriptionGroupWrapper.decode((await c.request(RemotingCommand.request(201))).body)
            assert wrapper.subscription_group_table["AdmGroup"].retry_max_times == 5
            assert "TOOLS_CONSUMER" in wrapper.subscription_group_table
            await c.request(send_request("OffsT", b"x"))
            c.oneway(RemotingCommand.request(15, {"consumerGroup": "AdmGroup", "topic": "OffsT", "queueId": 0,
                                                  "commitOffset": 1}))
            await asyncio.sleep(0.05)
            body = (await c.request(RemotingCommand.request(43))).body
            assert body == b'{"offsetTable":{"OffsT@AdmGroup":{0:1}}}'
            assert ConsumerOffsetSerializeWrapper.decode(body).offset_table == {"OffsT@AdmGroup": {0: 1}}
            r = await c.request(RemotingCommand.request(300, {"topic": "OffsT"}))
            assert GroupList.decode(r.body).group_list == ("AdmGroup",)
            r = await c.request(RemotingCommand.request(207, {"groupName": "AdmGroup", "removeOffset": True}))
            assert r.code == RC.SUCCESS and b.groups.table.get("AdmGroup") is None
            assert b.offsets.query("AdmGroup", "OffsT", 0) == -1
            await c.aclose()

    run(main())


def test_a_slave_refuses_changes_but_serves_the_sync_requests(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path, brokerRole="SLAVE", brokerId="1") as b:
            c = await client(b)
            for req in (create_topic("S"), RemotingCommand.request(215, {"topic": "S"}),
                        RemotingCommand.request(200, None, SubscriptionGroupConfig(group_name="g").encode()),
                        RemotingCommand.request(207, {"groupName": "g"})):
                r = await c.request(req)
                assert (r.code, r.remark) == (RC.SYSTEM_ERROR, "Can't modify topic or subscription group from slave "
                                                               "broker, please execute it from master broker.")
            for code in (21, 43, 45, 201):
                r = await c.request(RemotingCommand.request(code))
                assert r.code == RC.SUCCESS and r.body
            assert not b.schedule.running  # delayed delivery runs on masters only
            await c.aclose()

    run(main())


def _java_runtime_keys() -> set[str]:
    pcap = shared_path("captures", "java-4.9.8", "02-brokerStatus.pcap")
    for d in streams(pcap):
        if d.sport != 10911:
            continue
        fb = FrameBuffer()
        fb.feed(bytes(d.data))
        while (f := fb.next_frame()) is not None:
            cmd = decode_frame(f)
            if cmd.body and cmd.body.startswith(b'{"table"'):
                return set(KVTable.decode(cmd.body).table)
    raise AssertionError("no runtime info in the capture")


def test_runtime_info_has_every_key_of_the_java_broker(tmp_path: Path) -> None:
    java = _java_runtime_keys()

    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            await c.request(send_request("RtT", b"x"))
            r = await c.request(RemotingCommand.request(28, serialize_type=SerializeType.ROCKETMQ))
            assert r.code == RC.SUCCESS and r.serialize_type is SerializeType.ROCKETMQ
            table = KVTable.decode(r.body).table
            ours = {k.split("_/")[0] if k.startswith("commitLogDiskRatio_") else k for k in table}
            wanted = {k.split("_/")[0] if k.startswith("commitLogDiskRatio_") else k for k in java}
            assert wanted <= ours, wanted - ours
            assert table["brokerVersionDesc"] == "V4_9_8" and table["brokerVersion"] == "409"
            assert table["msgPutTotalTodayNow"] == "1" and table["commitLogMaxOffset"] != "0"
            assert table["putTps"].count(" ") >= 2 and table["runtime"].startswith("[ 0 days, 0 hours, ")
            await c.aclose()

    run(main())


def test_stats(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            await c.request(create_topic("StatT", queues=2))
            for i in range(3):
                await c.request(send_request("StatT", b"x", queue_id=i % 2))
            r = await c.request(RemotingCommand.request(202, {"topic": "StatT"}))
            table = TopicStatsTable.decode(r.body).offset_table
            assert {mq.queue_id: (o.min_offset, o.max_offset) for mq, o in table.items()} == {0: (0, 2), 1: (0, 1)}
            assert all(mq.broker_name == "broker-a" and o.last_update_timestamp > 0 for mq, o in table.items())
            assert r.body.startswith(b'{"offsetTable":{{"brokerName":"broker-a"')  # MessageQueue object keys
            r = await c.request(RemotingCommand.request(202, {"topic": "Nope"}))
            assert (r.code, r.remark) == (RC.TOPIC_NOT_EXIST, "topic[Nope] not exist")
            # consume stats: from the committed offsets, or from the topic asked for
            await c.request(pull_request("SG", "StatT", 0, 0, sys_flag=5, commit_offset=1))
            stats = ConsumeStats.decode((await c.request(RemotingCommand.request(208, {"consumerGroup": "SG"}))).body)
            by_q = {mq.queue_id: (o.broker_offset, o.consumer_offset) for mq, o in stats.offset_table.items()}
            assert by_q == {0: (2, 1), 1: (1, 0)} and stats.consume_tps > 0
            assert next(o for mq, o in stats.offset_table.items() if mq.queue_id == 0).last_timestamp > 0
            stats = ConsumeStats.decode((await c.request(RemotingCommand.request(
                208, {"consumerGroup": "Other", "topic": "StatT"}))).body)
            assert {o.consumer_offset for o in stats.offset_table.values()} == {0}
            await c.aclose()

    run(main())


def test_broker_config(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            r = await c.request(RemotingCommand.request(26))
            props = PropertiesBody.decode(r.body).table
            assert props["brokerName"] == "broker-a" and props["listenPort"] == str(b.port)
            assert props["storePathRootDir"] == str(tmp_path)  # written as is, as Java writes it
            v1 = DataVersion.decode(r.ext_fields["version"])
            body = b"regionId=Mars\ntraceOn=false\n"
            assert (await c.request(RemotingCommand.request(25, None, body))).code == RC.SUCCESS
            v2 = DataVersion.decode((await c.request(RemotingCommand.request(26))).ext_fields["version"])
            assert v2.counter == v1.counter + 1
            sent = await c.request(send_request("CfgT", b"x"))
            assert sent.ext_fields["MSG_REGION"] == "Mars" and sent.ext_fields["TRACE_ON"] == "false"
            r = await c.request(RemotingCommand.request(25, None, b"brokerConfigPath=/tmp/x\n"))
            assert (r.code, r.remark) == (RC.NO_PERMISSION, "Can not update config in black list.")
            before = b.config.default_topic_queue_nums
            # a value that does not fit is refused whole, and says why (Java answers SUCCESS and
            # keeps the old value; docs/servers.md)
            r = await c.request(RemotingCommand.request(25, None, b"defaultTopicQueueNums=many\nbrokerPermission=4\n"))
            assert r.code == RC.SYSTEM_ERROR and "defaultTopicQueueNums: expected an integer" in (r.remark or "")
            assert b.config.default_topic_queue_nums == before and b.config.get("brokerPermission") == "6"
            # so is one outside the Java field's range (Integer.parseInt fails there): a 35-bit
            # brokerPermission would reach the name servers in every registration
            r = await c.request(RemotingCommand.request(25, None, b"brokerPermission=34359738374\n"))
            assert r.code == RC.SYSTEM_ERROR and "brokerPermission: expected an integer (Java int)" in (r.remark or "")
            assert b.config.int("brokerPermission") == 6
            await c.aclose()

    run(main())


def test_broker_config_updates_are_written_to_the_config_file(tmp_path: Path) -> None:
    # Configuration.persist: the -c file is rewritten with every key, the old one kept as .bak
    from reference_broker.broker import Broker
    from reference_broker.config import BrokerConfig

    path = tmp_path / "broker.properties"
    original = f"brokerName=broker-z\nstorePathRootDir={tmp_path / 'store'}\nflushIntervalCommitLog=600\n"
    path.write_text(original)

    async def main() -> None:
        cfg = BrokerConfig.load(path, {"brokerIP1": "127.0.0.1"})
        async with Broker(cfg, host="127.0.0.1", port=0) as b:
            c = await client(b)
            r = await c.request(RemotingCommand.request(25, None, b"flushIntervalCommitLog=700\n"))
            assert r.code == RC.SUCCESS
            await c.aclose()

    run(main())
    assert path.with_name("broker.properties.bak").read_text() == original
    assert not path.with_name("broker.properties.tmp").exists()
    again = BrokerConfig.load(path)
    assert again.unknown == [] and again.broker_name == "broker-z"
    assert again.get("flushIntervalCommitLog") == "700" and again.get("brokerIP1") == "127.0.0.1"
    assert again.get("storePathRootDir") == str(tmp_path / "store")
    written = dict(line.split("=", 1) for line in path.read_text().splitlines())
    assert set(written) == set(BrokerConfig().values)  # the whole configuration, as Java writes it


def test_a_store_setting_the_store_cannot_use_stops_the_start_naming_the_key(tmp_path: Path) -> None:
    async def main() -> None:
        with pytest.raises(ServiceError, match=r"mappedFileSizeCommitLog 64 is too small to hold a record"):
            async with running_broker(tmp_path, mappedFileSizeCommitLog="64"):
                pass

    run(main())


def test_queries(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            r = await c.request(send_request("QryT", b"query me", keys="qkey-7 other", uniq="C0A80001UNIQ"))
            msg_id = r.ext_fields["msgId"]
            assert msg_id == create_offset_msg_id("127.0.0.1", b.port, 0)
            q = {"topic": "QryT", "key": "qkey-7", "maxNum": 32, "beginTimestamp": 0,
                 "endTimestamp": 9_000_000_000_000}
            r = await c.request(RemotingCommand.request(12, q))
            assert r.code == RC.SUCCESS and [m.body for m in messages(r)] == [b"query me"]
            assert int(r.ext_fields["indexLastUpdateTimestamp"]) > 0 and "indexLastUpdatePhyoffset" in r.ext_fields
            r = await c.request(RemotingCommand.request(12, {**q, "key": "C0A80001UNIQ", "maxNum": 1,
                                                             "_UNIQUE_KEY_QUERY": "true"}))
            assert r.code == RC.SUCCESS and len(messages(r)) == 1
            r = await c.request(RemotingCommand.request(12, {**q, "key": "nothing"}))
            assert (r.code, r.remark) == (RC.QUERY_NOT_FOUND, "can not find message, maybe time range not correct")
            r = await c.request(RemotingCommand.request(33, {"offset": 0}))
            assert r.code == RC.SUCCESS and messages(r)[0].body == b"query me"
            r = await c.request(RemotingCommand.request(33, {"offset": 5}))
            assert (r.code, r.remark) == (RC.SYSTEM_ERROR, "can not find message by the offset, 5")
            await c.request(heartbeat_request("q@1", consumer_group="QG", topics=("QryT",)))
            r = await c.request(RemotingCommand.request(300, {"topic": "QryT"}))
            assert GroupList.decode(r.body).group_list == ("QG",)
            await c.aclose()

    run(main())


def test_unknown_codes_and_malformed_frames(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            for st in SerializeType:
                r = await c.request(RemotingCommand.request(9999, {"foo": "bar"}, serialize_type=st))
                assert (r.code, r.remark, r.serialize_type) == (RC.REQUEST_CODE_NOT_SUPPORTED,
                                                                " request type 9999 not supported", st)
            c.oneway(RemotingCommand.request(9999))  # no answer to a oneway request
            # the three malformed frames of 10-malformed-frames: each connection is closed, unanswered
            bad = [bytes.fromhex("00000018000000c8") + b'{"code":105,"flag":0,"la',
                   bytes.fromhex("0000006507000061") + b"x" * 97,
                   bytes.fromhex("7fffffff00000061") + b"x" * 97]
            for data in bad:
                assert await raw_exchange(b.port, data, 1) == []
            # every other connection keeps being served
            assert (await c.request(send_request("StillFine", b"x"))).code == RC.SUCCESS
            await c.aclose()

    run(main())


def test_state_survives_a_restart(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            await c.request(create_topic("Kept", queues=2))
            await c.request(send_request("Kept", b"persist me", queue_id=1))
            await c.request(create_topic("Later"))
            await c.request(RemotingCommand.request(200, None, SubscriptionGroupConfig(group_name="KG").encode()))
            c.oneway(RemotingCommand.request(15, {"consumerGroup": "KG", "topic": "Kept", "queueId": 1,
                                                  "commitOffset": 1}))
            await asyncio.sleep(0.05)
            version = b.topics.data_version.counter
            port = b.port
            await c.aclose()
        for name in ("topics.json", "consumerOffset.json", "subscriptionGroup.json", "delayOffset.json"):
            assert (tmp_path / "config" / name).exists()
        async with running_broker(tmp_path) as b:
            assert b.topics.select("Kept") is not None and b.topics.data_version.counter == version
            assert b.offsets.query("KG", "Kept", 1) == 1 and "KG" in b.groups.table
            c = await client(b)
            r = await c.request(pull_request("KG", "Kept", 1, 0))
            (m,) = messages(r)
            assert m.body == b"persist me" and m.store_host.port == port
            await c.aclose()
        # a torn topics.json: the .bak (the table before its last change) is used
        (tmp_path / "config" / "topics.json").write_text("{torn")
        async with running_broker(tmp_path) as b:
            assert b.topics.select("Kept") is not None and b.topics.select("Later") is None
        # neither readable: the broker does not start (BrokerController.initialize fails)
        (tmp_path / "config" / "topics.json").write_text("{torn")
        (tmp_path / "config" / "topics.json.bak").write_text("{torn")
        with pytest.raises(ServiceError, match=r"topics\.json"):
            async with running_broker(tmp_path):
                pass

    run(main())


def test_config_file_layout_is_javas(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            c.oneway(RemotingCommand.request(15, {"consumerGroup": "g", "topic": "t", "queueId": 0, "commitOffset": 3}))
            await c.request(create_topic("t"))  # topics.json is written on a change (and not at shutdown)
            await c.aclose()
        text = (tmp_path / "config" / "consumerOffset.json").read_text()
        assert text == '{\n\t"offsetTable":{\n\t\t"t@g":{0:3\n\t\t}\n\t}\n}'
        topics = (tmp_path / "config" / "topics.json").read_text()
        assert topics.startswith('{\n\t"dataVersion":{\n\t\t"counter":') and '\t"topicConfigTable":{\n\t\t"' in topics

    run(main())


def test_listen_port_from_config_and_the_vip_channel(tmp_path: Path) -> None:
    from tests.javakit import free_broker_port

    free = free_broker_port()

    async def main() -> None:
        from reference_broker.broker import Broker

        b = Broker(broker_config(tmp_path, listenPort=str(free)), host="127.0.0.1")
        await b.start()
        try:
            assert b.port == free and b.address == f"127.0.0.1:{free}" and b.vip_port == free - 2
            c = await client(free)
            assert (await c.request(send_request("P", b"x"))).ext_fields["msgId"] == create_offset_msg_id(
                "127.0.0.1", free, 0)
            vip = await client(free - 2)
            r = await vip.request(RemotingCommand.request(21))
            assert r.code == RC.SUCCESS and b'"P"' in r.body
            await vip.aclose()
            await c.aclose()
        finally:
            await b.stop()
            await b.stop()  # twice is harmless
        async with running_broker(tmp_path) as b:
            assert b.vip_port is None  # an ephemeral port has no VIP channel

    run(main())


def test_a_store_in_use_stops_the_start_cleanly(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path):
            with pytest.raises(ServiceError, match="in use"):
                async with running_broker(tmp_path):
                    pass

    run(main())
