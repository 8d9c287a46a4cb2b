# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Produce and consume through a real broker on an ephemeral port: the send checks, the stored
records, pulls and their codes, offsets, long polling."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.broker.helpers import (
    client,
    heartbeat_request,
    messages,
    pull_request,
    raw_exchange,
    run,
    running_broker,
    send_request,
)
from wire import RemotingCommand, ResponseCode, SerializeType
from wire.aio import ConnectionClosed
from wire.bodies import TopicConfigSerializeWrapper
from wire.java import java_hash_order
from wire.message import (
    BatchEntry,
    create_offset_msg_id,
    decode_offset_msg_id,
    encode_batch,
    encode_properties,
)

RC = ResponseCode


@pytest.mark.parametrize("st", list(SerializeType))
def test_produce_then_pull_round_trip(tmp_path: Path, st: SerializeType) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            r = await c.request(send_request("RoundTrip", b"hello world", queue_id=1, tags="TagA", keys="k1 k2",
                                             uniq="C0A80001ABCD", serialize_type=st))
            assert r.code == RC.SUCCESS and r.serialize_type is st
            assert r.ext_fields["queueId"] == "1" and r.ext_fields["queueOffset"] == "0"
            assert r.ext_fields["MSG_REGION"] == "DefaultRegion" and r.ext_fields["TRACE_ON"] == "true"
            assert r.ext_fields["msgId"] == create_offset_msg_id("127.0.0.1", b.port, 0)
            r2 = await c.request(send_request("RoundTrip", b"second", queue_id=1, serialize_type=st))
            assert r2.ext_fields["queueOffset"] == "1"
            p = await c.request(pull_request("G1", "RoundTrip", 1, 0, serialize_type=st))
            assert p.code == RC.SUCCESS and p.remark == "FOUND" and p.serialize_type is st
            assert p.ext_fields == {"suggestWhichBrokerId": "0", "nextBeginOffset": "2", "minOffset": "0",
                                    "maxOffset": "2"}
            first, second = messages(p)
            assert (first.body, second.body) == (b"hello world", b"second")
            assert first.topic == "RoundTrip" and first.queue_id == 1 and first.queue_offset == 0
            assert first.store_host.port == b.port and first.born_host.port == c.local[1]
            # stored as Java stores it: CLUSTER added, WAIT dropped, the rest kept, HashMap order
            assert first.properties_text == encode_properties(
                {"KEYS": "k1 k2", "UNIQ_KEY": "C0A80001ABCD", "CLUSTER": "DefaultCluster", "TAGS": "TagA"})
            assert second.physical_offset > first.physical_offset
            await c.aclose()

    run(main())


def test_auto_create_through_tbw102_and_oneway_registration(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path, defaultTopicQueueNums="8") as b:
            c = await client(b)
            r = await c.request(send_request("Fresh", b"x", default_topic_queue_nums=4, queue_id=3))
            assert r.code == RC.SUCCESS
            tc = b.topics.select("Fresh")
            assert tc is not None and (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (4, 4, 6)
            all_cfg = await c.request(RemotingCommand.request(21))
            table = TopicConfigSerializeWrapper.decode(all_cfg.body).topic_config_table
            assert table["Fresh"].write_queue_nums == 4 and table["TBW102"].perm == 7
            # the queue id must be below max(read, write) queues
            bad = await c.request(send_request("Fresh", b"x", queue_id=4))
            assert bad.code == RC.SYSTEM_ERROR and bad.remark.startswith("request queueId[4] is illegal, TopicConfig [")
            await c.aclose()
        async with running_broker(tmp_path, autoCreateTopicEnable="false") as b:
            c = await client(b)
            r = await c.request(send_request("NotThere", b"x"))
            assert r.code == RC.TOPIC_NOT_EXIST
            assert r.remark == ("topic[NotThere] not exist, apply first please!"
                                "\nSee http://rocketmq.apache.org/docs/faq/ for further details.")
            assert r.ext_fields == {"MSG_REGION": "DefaultRegion", "TRACE_ON": "true"}
            await c.aclose()

    run(main())


def test_send_checks(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            r = await c.request(send_request("SCHEDULE_TOPIC_XXXX", b"x"))
            assert (r.code, r.remark) == (RC.NO_PERMISSION, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden.")
            r = await c.request(send_request("bad topic!", b"x"))
            assert r.code == RC.SYSTEM_ERROR and "illegal characters" in r.remark
            r = await c.request(send_request("T" * 128, b"x"))
            assert r.code == RC.SYSTEM_ERROR and r.remark == "The specified topic is longer than topic max length."
            # a read-only topic still takes sends in 4.9.8
            await c.request(RemotingCommand.request(17, {"topic": "Ro", "defaultTopic": "TBW102", "readQueueNums": 4,
                                                         "writeQueueNums": 4, "perm": 4,
                                                         "topicFilterType": "SINGLE_TAG", "order": False}))
            r = await c.request(send_request("Ro", b"x"))
            assert r.code == RC.SUCCESS
            # a negative queue id picks a queue
            seen = set()
            for _ in range(30):
                r = await c.request(send_request("Ro", b"y", queue_id=-1))
                seen.add(int(r.ext_fields["queueId"]))
            assert seen <= {0, 1, 2, 3} and len(seen) > 1
            # a body over maxMessageSize
            big = await c.request(send_request("Ro", b"z" * (4 * 1024 * 1024 + 1)))
            assert big.code == RC.MESSAGE_ILLEGAL and "msg body length limit 4194304B" in big.remark
            # a header field missing: SYSTEM_ERROR, and the connection keeps working
            bad = send_request("Ro", b"x")
            ext = dict(bad.ext_fields)
            del ext["b"]
            r = await c.request(bad.replace(ext_fields=ext))
            assert r.code == RC.SYSTEM_ERROR and "b" in r.remark
            assert (await c.request(send_request("Ro", b"x"))).code == RC.SUCCESS
            await c.aclose()

    run(main())


def test_send_to_a_slave_is_refused_with_javas_remark(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path, brokerRole="SLAVE", brokerId="1") as b:
            c = await client(b)
            r = await c.request(send_request("CapTopic", b"to slave"))
            assert r.code == RC.SERVICE_NOT_AVAILABLE
            assert r.remark.startswith("service not available now. It may be caused by one of the following "
                                       "reasons: the broker's disk is full [CL: ")
            assert r.remark.endswith("], messages are put to the slave, message store has been shut down, etc.")
            assert r.ext_fields == {"MSG_REGION": "DefaultRegion", "TRACE_ON": "true"}
            await c.aclose()

    run(main())


def test_peer_header_forms(tmp_path: Path) -> None:
    # the C++ client: SEND_MESSAGE (V1) whose numbers are JSON numbers and booleans "0"
    cpp_header = (b'{"code":10,"extFields":{"AccessKey":"","OnsChannel":"ALIYUN","Signature":"x",'
                  b'"batch":"false","bornTimestamp":"1795341862223","defaultTopic":"TBW102","defaultTopicQueueNums":4,'
                  b'"flag":0,"producerGroup":"CppGroup","properties":"UNIQ_KEY\\u0001AB12\\u0002WAIT\\u0001true",'
                  b'"queueId":2,"reconsumeTimes":"0","sysFlag":0,"topic":"CppTopic","unitMode":"0"},'
                  b'"flag":0,"language":"CPP","opaque":7,"serializeTypeCurrentRPC":"JSON","version":63}')
    # ali-ons: SEND_MESSAGE_V2 with numbers and a boolean
    js_header = (b'{"code":310,"extFields":{"a":"JsGroup","b":"JsTopic","c":"TBW102","d":4,"e":1,"f":0,'
                 b'"g":1795341862223,"h":0,"i":"KEYS\\u0001k\\u0002TAGS\\u0001null\\u0002WAIT\\u0001true","j":0,'
                 b'"k":false},"flag":0,"language":"JAVA","opaque":8,"serializeTypeCurrentRPC":"JSON","version":121}')

    def frame(header: bytes, body: bytes) -> bytes:
        return (4 + len(header) + len(body)).to_bytes(4, "big") + len(header).to_bytes(4, "big") + header + body

    async def main() -> None:
        async with running_broker(tmp_path) as b:
            got = {r.opaque: r for r in await raw_exchange(b.port, frame(cpp_header, b"cpp body")
                                                           + frame(js_header, b"js body"), 2)}
            assert got[7].code == RC.SUCCESS and got[7].ext_fields["queueId"] == "2"
            assert got[8].code == RC.SUCCESS and got[8].ext_fields["queueId"] == "1"
            c = await client(b)
            p = await c.request(pull_request("G", "JsTopic", 1, 0))
            (m,) = messages(p)
            assert m.properties_text == encode_properties({"KEYS": "k", "CLUSTER": "DefaultCluster", "TAGS": "null"})
            await c.aclose()

    run(main())


def test_batch_send(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            entries = [BatchEntry(body=f"m{i}".encode(), properties={"UNIQ_KEY": f"U{i}", "WAIT": "true"})
                       for i in range(3)]
            req = send_request("Batched", encode_batch(entries), code=320, queue_id=2)
            r = await c.request(req)
            assert r.code == RC.SUCCESS and r.ext_fields["queueOffset"] == "0"
            ids = r.ext_fields["msgId"].split(",")
            assert len(ids) == 3 and len(set(ids)) == 3
            p = await c.request(pull_request("G", "Batched", 2, 0))
            got = messages(p)
            assert [m.body for m in got] == [b"m0", b"m1", b"m2"] and [m.queue_offset for m in got] == [0, 1, 2]
            # the entry's properties, then the batch's (the header's WAIT and CLUSTER, HashMap order)
            batch_props = {"WAIT": "true", "CLUSTER": "DefaultCluster"}
            assert got[1].properties_text == ("UNIQ_KEY\x01U1\x02WAIT\x01true\x02" + encode_properties(
                {k: batch_props[k] for k in java_hash_order(batch_props)}))
            await c.aclose()

    run(main())


def test_a_batch_body_over_the_message_size_is_refused_by_its_length(tmp_path: Path) -> None:
    """checkMessages: the raw batch body against maxMessageSize, before any message is read; the
    store is not asked, so its put figures do not move (Java returns before them too)."""
    async def main() -> None:
        async with running_broker(tmp_path, maxMessageSize="1024") as b:
            c = await client(b)
            entries = [BatchEntry(body=b"m", properties={}) for _ in range(60)]
            body = encode_batch(entries)
            assert len(body) > 1024
            r = await c.request(send_request("Batched", body, code=320, queue_id=1))
            assert r.code == RC.MESSAGE_ILLEGAL
            assert "msg body length limit 1024B" in (r.remark or "")
            assert b.store.stats.put_failed_times == 0
            r = await c.request(send_request("Batched", encode_batch(entries[:5]), code=320, queue_id=1))
            assert r.code == RC.SUCCESS and r.ext_fields["queueOffset"] == "0"
            await c.aclose()

    run(main())


def test_pull_codes_and_filters(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            for i in range(5):
                await c.request(send_request("PullT", f"a{i}".encode(), tags="TagA" if i % 2 == 0 else "TagB"))
            # unknown group, no SUBSCRIPTION flag, no heartbeat: SUBSCRIPTION_NOT_EXIST (10-error-responses 4)
            r = await c.request(pull_request("NoHeartbeat", "PullT", 0, 0, sys_flag=0))
            assert r.code == RC.SUBSCRIPTION_NOT_EXIST
            assert r.remark == "the consumer's group info not exist\nSee http://rocketmq.apache.org/docs/faq/ for further details."
            # tags from the request's subscription
            r = await c.request(pull_request("G", "PullT", 0, 0, subscription="TagB"))
            assert [m.body for m in messages(r)] == [b"a1", b"a3"]
            assert r.ext_fields["nextBeginOffset"] == "5"
            # nothing matching at all: NO_MATCHED_MESSAGE → PULL_RETRY_IMMEDIATELY with the offset moved on
            r = await c.request(pull_request("G", "PullT", 0, 0, subscription="TagC"))
            assert (r.code, r.remark, r.ext_fields["nextBeginOffset"]) == (RC.PULL_RETRY_IMMEDIATELY, "NO_MATCHED_MESSAGE", "5")
            # status table
            cases = [
                (5, RC.PULL_NOT_FOUND, "OFFSET_OVERFLOW_ONE", "5"),
                (999999, RC.PULL_OFFSET_MOVED, "OFFSET_OVERFLOW_BADLY", "5"),
            ]
            for offset, code, remark, nxt in cases:
                r = await c.request(pull_request("G", "PullT", 0, offset))
                assert (r.code, r.remark, r.ext_fields["nextBeginOffset"]) == (code, remark, nxt)
                assert (r.ext_fields["minOffset"], r.ext_fields["maxOffset"]) == ("0", "5")
            # an empty queue: NOT_FOUND at offset 0, OFFSET_MOVED elsewhere
            r = await c.request(pull_request("G", "PullT", 1, 0))
            assert r.code == RC.PULL_NOT_FOUND
            r = await c.request(pull_request("G", "PullT", 1, 3))
            assert r.code == RC.PULL_OFFSET_MOVED
            # the OFFSET_MOVED answers were recorded as OFFSET_MOVED_EVENT messages
            await asyncio.sleep(0.05)
            events = await c.request(pull_request("G", "OFFSET_MOVED_EVENT", 0, 0))
            assert b'"offsetRequest":999999' in events.body and b'"consumerGroup":"G"' in events.body
            # heartbeat subscription with tags
            await c.request(heartbeat_request("c1", consumer_group="HG", topics=("PullT",), sub_string="TagA"))
            r = await c.request(pull_request("HG", "PullT", 0, 0, sys_flag=0))
            assert [m.body for m in messages(r)] == [b"a0", b"a2", b"a4"]
            r = await c.request(pull_request("HG", "Other", 0, 0, sys_flag=0))
            assert r.code == RC.TOPIC_NOT_EXIST
            await c.request(send_request("Other", b"o"))
            r = await c.request(pull_request("HG", "Other", 0, 0, sys_flag=0))
            assert r.code == RC.SUBSCRIPTION_NOT_EXIST and r.remark.startswith("the consumer's subscription not exist")
            r = await c.request(pull_request("HG", "PullT", 0, 0, sys_flag=0, sub_version=5))
            assert r.code == RC.SUBSCRIPTION_NOT_LATEST
            r = await c.request(pull_request("G", "PullT", 9, 0))
            assert r.code == RC.SYSTEM_ERROR and r.remark.startswith("queueId[9] is illegal, topic:[PullT]")
            await c.aclose()

    run(main())


def test_offsets_and_commit_piggyback(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            q = {"consumerGroup": "OG", "topic": "OffT", "queueId": 0}
            r = await c.request(RemotingCommand.request(14, q))
            # no committed offset, an empty queue: Java answers 0 (PROTOCOL.md §3.5)
            assert (r.code, r.ext_fields["offset"]) == (RC.SUCCESS, "0")
            for i in range(3):
                await c.request(send_request("OffT", f"{i}".encode()))
            r = await c.request(RemotingCommand.request(14, q))
            assert r.ext_fields["offset"] == "0"  # the first message is still in memory
            c.oneway(RemotingCommand.request(15, {**q, "commitOffset": 2}))
            await asyncio.sleep(0.05)
            r = await c.request(RemotingCommand.request(14, q))
            assert r.ext_fields["offset"] == "2"
            # the piggyback commit (COMMIT_OFFSET flag) on a master
            await c.request(pull_request("OG", "OffT", 0, 2, sys_flag=5, commit_offset=3))
            assert b.offsets.query("OG", "OffT", 0) == 3
            await c.request(pull_request("OG", "OffT", 0, 2, sys_flag=4, commit_offset=1))
            assert b.offsets.query("OG", "OffT", 0) == 3  # without the flag nothing is stored
            tq = {"topic": "OffT", "queueId": 0}
            assert (await c.request(RemotingCommand.request(30, tq))).ext_fields["offset"] == "3"
            assert (await c.request(RemotingCommand.request(31, tq))).ext_fields["offset"] == "0"
            ts = int((await c.request(RemotingCommand.request(32, tq))).ext_fields["timestamp"])
            assert ts > 1_700_000_000_000
            # past the newest message: the newest (getOffsetInQueueByTime keeps the left bound)
            r = await c.request(RemotingCommand.request(29, {**tq, "timestamp": ts + 60_000}))
            assert r.ext_fields["offset"] == "2"
            r = await c.request(RemotingCommand.request(29, {**tq, "timestamp": ts - 60_000}))
            assert r.ext_fields["offset"] == "0"
            r = await c.request(RemotingCommand.request(32, {"topic": "Nope", "queueId": 0}))
            assert r.ext_fields["timestamp"] == "-1"
            await c.aclose()

    run(main())


def test_long_polling(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            await c.request(send_request("LP", b"first"))
            loop = asyncio.get_running_loop()
            # a held pull (SUSPEND) returns within milliseconds of the send
            held = asyncio.ensure_future(c.request(pull_request("G", "LP", 0, 1, sys_flag=6, suspend_ms=15_000),
                                                   timeout=20))
            await asyncio.sleep(0.2)
            assert not held.done() and len(b.holds) == 1
            other = await client(b)
            t0 = loop.time()
            assert (await other.request(send_request("LP", b"second"))).code == RC.SUCCESS
            r = await held
            assert loop.time() - t0 < 0.5 and r.code == RC.SUCCESS and [m.body for m in messages(r)] == [b"second"]
            assert len(b.holds) == 0
            # without messages: PULL_NOT_FOUND after the suspend timeout
            t0 = loop.time()
            r = await c.request(pull_request("G", "LP", 0, 2, sys_flag=6, suspend_ms=400))
            assert r.code == RC.PULL_NOT_FOUND and 0.35 < loop.time() - t0 < 2.0
            # a message whose tag the consumer does not want leaves the pull held
            held = asyncio.ensure_future(c.request(pull_request("G", "LP", 0, 2, sys_flag=6, suspend_ms=15_000,
                                                                subscription="Wanted"), timeout=20))
            await asyncio.sleep(0.1)
            await other.request(send_request("LP", b"unwanted", tags="Other"))
            await asyncio.sleep(0.2)
            assert not held.done()
            await other.request(send_request("LP", b"wanted", tags="Wanted"))
            r = await held
            assert [m.body for m in messages(r)] == [b"wanted"]
            # a held pull whose connection closes leaves the table
            orphan = asyncio.ensure_future(c.request(pull_request("G", "LP", 0, 4, sys_flag=6,
                                                                  suspend_ms=15_000), timeout=20))
            await asyncio.sleep(0.1)
            r = await other.request(pull_request("G", "LP", 0, 3, sys_flag=6, suspend_ms=15_000), timeout=1)
            assert r.code == RC.SUCCESS  # not held: there was data
            assert len(b.holds) == 1
            await c.aclose()
            await asyncio.sleep(0.1)
            assert len(b.holds) == 0 and orphan.done()
            with pytest.raises(ConnectionClosed):  # the request waits no more: its connection is gone
                orphan.result()
            await other.aclose()

    run(main())


def test_prepared_transaction_messages_go_to_the_half_topic(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            prepared = 0x4  # MessageSysFlag.TRANSACTION_PREPARED_TYPE
            r = await c.request(send_request("TxT", b"half", queue_id=3, sys_flag=prepared,
                                             extra_props={"TRAN_MSG": "true", "PGROUP": "TxPG"}))
            assert r.code == RC.SUCCESS and r.ext_fields["queueId"] == "3"
            # the half topic has no topic config (Java's check service creates it): look it up by id
            offset = decode_offset_msg_id(r.ext_fields["msgId"]).offset
            (m,) = messages(await c.request(RemotingCommand.request(33, {"offset": offset})))
            assert m.topic == "RMQ_SYS_TRANS_HALF_TOPIC" and m.queue_id == 0
            assert m.sys_flag & 0xC == 0 and m.body == b"half"
            assert (m.properties["REAL_TOPIC"], m.properties["REAL_QID"]) == ("TxT", "3")
            assert m.properties["WAIT"] == "true"  # written from the map, where WAIT is back
            await c.aclose()
        async with running_broker(tmp_path, rejectTransactionMessage="true") as b:
            c = await client(b)
            r = await c.request(send_request("TxT", b"half", extra_props={"TRAN_MSG": "true"}))
            assert (r.code, r.remark) == (RC.NO_PERMISSION, "the broker[127.0.0.1] sending transaction message is forbidden")
            await c.aclose()

    run(main())
