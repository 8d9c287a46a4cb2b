# Licensed under the Apache License, Version 2.0. See LICENSE.
"""QUERY_CONSUME_TIME_SPAN, QUERY_CORRECTION_OFFSET, QUERY_CONSUME_QUEUE and GET_ALL_PRODUCER_INFO
over real sockets (the answers of the Java 4.9.8 broker to the same requests are compared in
tests/interop/test_java_inspection.py)."""

from __future__ import annotations

import time
from pathlib import Path

from reference_broker.broker.processors.inspection import java_time_text
from tests.broker.helpers import client, heartbeat_request, pull_request, run, running_broker, send_request
from tests.broker.test_admin import create_topic
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.bodies import (
    ProducerTableInfo,
    QueryConsumeQueueResponseBody,
    QueryConsumeTimeSpanBody,
    QueryCorrectionOffsetBody,
)
from wire.headers import QueryConsumeQueueRequestHeader, QueryCorrectionOffsetHeader

R, RC = RequestCode, ResponseCode


def _commit(group: str, topic: str, qid: int, offset: int) -> RemotingCommand:
    return RemotingCommand.request(R.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic,
                                                              "queueId": qid, "commitOffset": offset})


def test_consume_time_span(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            await c.request(create_topic("SpanT", queues=2))
            before = int(time.time() * 1000)
            for _ in range(3):
                assert (await c.request(send_request("SpanT", b"x", queue_id=0))).code == RC.SUCCESS
            await c.request(_commit("SpanG", "SpanT", 0, 1))
            r = await c.request(RemotingCommand.request(R.QUERY_CONSUME_TIME_SPAN, {"topic": "SpanT",
                                                                                   "group": "SpanG"}))
            assert r.code == RC.SUCCESS
            q0, q1 = QueryConsumeTimeSpanBody.decode(r.body).consume_time_span_set
            assert q0.message_queue is not None and q0.message_queue.queue_id == 0
            assert before <= q0.min_time_stamp <= q0.consume_time_stamp <= q0.max_time_stamp
            assert q0.min_time_stamp_str == java_time_text(q0.min_time_stamp)
            assert q0.delay_time >= 0
            # an empty queue: no times (-1); the group's offset (-1, none) is below the end (0), so
            # its "next message" time is -1 too and the delay is now + 1 ms, as Java computes it
            assert (q1.min_time_stamp, q1.max_time_stamp, q1.consume_time_stamp) == (-1, -1, -1)
            assert before < q1.delay_time - 1 <= int(time.time() * 1000)
            # consumed to the end: no delay
            await c.request(_commit("SpanG", "SpanT", 0, 3))
            r = await c.request(RemotingCommand.request(R.QUERY_CONSUME_TIME_SPAN, {"topic": "SpanT",
                                                                                   "group": "SpanG"}))
            q0 = QueryConsumeTimeSpanBody.decode(r.body).consume_time_span_set[0]
            assert q0.delay_time == 0 and q0.consume_time_stamp == q0.max_time_stamp
            r = await c.request(RemotingCommand.request(R.QUERY_CONSUME_TIME_SPAN, {"topic": "Nope", "group": "G"}))
            assert (r.code, r.remark) == (RC.TOPIC_NOT_EXIST, "topic[Nope] not exist")
            await c.aclose()

    run(main())


def test_bloom_filter_data_is_javas() -> None:
    from reference_broker.broker.filters import bloom_filter_data, murmur3_128_long

    # a 4.9.8 broker's answer for group InspSqlG on topic InspT (tests/interop/test_java_inspection.py)
    assert bloom_filter_data("InspSqlG#InspT") == (112, [40, 92, 81])
    # MurmurHash3 x64 128's reference vectors (the first 64 bits), across the 16-byte blocks and tails
    assert murmur3_128_long(b"") == 0
    assert murmur3_128_long(b"hello") == 0xCBD8A7B341BD9B02
    assert murmur3_128_long(b"The quick brown fox jumps over the lazy dog") == 0xE34BBC7BBC071B6C


def test_java_time_text() -> None:
    assert java_time_text(0)[4] == "-" and java_time_text(0)[10] == "#"
    assert java_time_text(1_700_000_000_123).endswith(":123")


def test_correction_offset(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            await c.request(create_topic("CorrT", queues=2))
            for i in range(6):
                await c.request(send_request("CorrT", b"x", queue_id=i % 2))
            for group, offs in (("G1", (3, 1)), ("G2", (2, 3)), ("G3", (0, 0))):
                for qid, off in enumerate(offs):
                    await c.request(_commit(group, "CorrT", qid, off))

            async def ask(**kw: str) -> dict[int, int]:
                h = QueryCorrectionOffsetHeader(topic="CorrT", compare_group=kw.pop("compare", "G1"), **kw)
                r = await c.request(RemotingCommand.request(R.QUERY_CORRECTION_OFFSET, h.to_ext()))
                assert r.code == RC.SUCCESS, r.remark
                assert r.body is not None and r.body.startswith(b'{"correctionOffsets":{0:')  # bare Integer keys
                return dict(QueryCorrectionOffsetBody.decode(r.body).correction_offsets)

            assert await ask() == {0: 0, 1: 0}
            assert await ask(filter_groups="G3") == {0: 2, 1: 1}
            assert await ask(filter_groups="G3,G1") == {0: 2, 1: 3}
            # filtering does not take the groups' offsets away (Java's does)
            assert b.offsets.query("G3", "CorrT", 0) == 0
            await c.aclose()

    run(main())


def test_consume_queue(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            await c.request(create_topic("CqT", queues=2))
            for i in range(4):
                await c.request(send_request("CqT", b"body %d" % i, queue_id=0, tags="TagA"))

            async def ask(qid: int, index: int, count: int, group: str | None = None) -> RemotingCommand:
                h = QueryConsumeQueueRequestHeader(topic="CqT", queue_id=qid, index=index, count=count,
                                                   consumer_group=group)
                return await c.request(RemotingCommand.request(R.QUERY_CONSUME_QUEUE, h.to_ext()))

            r = await ask(0, 1, 2)
            assert (r.code, r.remark) == (RC.SUCCESS, "not set any response code")
            body = QueryConsumeQueueResponseBody.decode(r.body)
            assert (body.min_queue_index, body.max_queue_index) == (0, 4)
            assert body.subscription_data is None and body.filter_data is None
            assert body.queue_data is not None and len(body.queue_data) == 2
            first = body.queue_data[0]
            assert first.physic_offset == b.store.commit_offset_of("CqT", 0, 1) and first.physic_size > 0
            assert first.tags_code == _java_string_hash("TagA") and first.eval is False
            assert len(QueryConsumeQueueResponseBody.decode((await ask(0, 2, 10)).body).queue_data or ()) == 2
            # a group: its subscription, or that it is not online
            body = QueryConsumeQueueResponseBody.decode((await ask(0, 0, 1, "Nobody")).body)
            assert body.filter_data == "Nobody@CqT is not online!" and body.subscription_data is None
            await c.request(heartbeat_request("cid-1", consumer_group="CqG", topics=("CqT",), sub_string="TagA"))
            body = QueryConsumeQueueResponseBody.decode((await ask(0, 0, 1, "CqG")).body)
            assert body.filter_data == "null" and body.subscription_data is not None
            assert body.subscription_data.sub_string == "TagA"
            # past the end: SUCCESS, a remark, no body; a queue never written: SYSTEM_ERROR
            r = await ask(0, 4, 1)
            assert (r.code, r.remark, r.body) == (RC.SUCCESS, "Index 4 of 0@CqT is not exist!", None)
            r = await ask(1, 0, 1)
            assert (r.code, r.remark) == (RC.SYSTEM_ERROR, "1@CqT is not exist!")
            await c.aclose()

    run(main())


def _java_string_hash(s: str) -> int:
    from wire.java import java_string_hash

    return java_string_hash(s)


def test_all_producer_info(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            r = await c.request(RemotingCommand.request(R.GET_ALL_PRODUCER_INFO))
            assert (r.code, ProducerTableInfo.decode(r.body).data) == (RC.SUCCESS, {})
            await c.request(heartbeat_request("pid-1", producer_group="PG1"))
            other = await client(b)
            await other.request(heartbeat_request("pid-2", producer_group="PG1"))
            await other.request(pull_request("x", "y", 0, 0))  # no effect on the table
            r = await c.request(RemotingCommand.request(R.GET_ALL_PRODUCER_INFO))
            (group, producers), = ProducerTableInfo.decode(r.body).data.items()
            assert group == "PG1" and sorted(p.client_id or "" for p in producers) == ["pid-1", "pid-2"]
            assert all((p.remote_ip or "").startswith("/127.0.0.1:") and p.last_update_timestamp > 0
                       for p in producers)
            await other.aclose()
            await c.aclose()

    run(main())
