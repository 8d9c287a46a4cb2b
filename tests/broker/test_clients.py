# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Clients over real sockets: heartbeats, consumer-id change notices, unregistering, connection
lists, queue locks."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.broker.helpers import client, heartbeat_request, run, running_broker, wait_until
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import RemotingConnection
from wire.bodies import (
    ConsumerConnection,
    GetConsumerListByGroupResponseBody,
    LockBatchRequestBody,
    LockBatchResponseBody,
    MessageQueue,
    ProducerConnection,
    SubscriptionData,
    UnlockBatchRequestBody,
)

RC = ResponseCode


class Notices:
    """A client-side handler that records the broker's requests."""

    def __init__(self) -> None:
        self.got: list[RemotingCommand] = []

    def __call__(self, conn: RemotingConnection, req: RemotingCommand) -> None:
        self.got.append(req)

    def groups(self) -> list[str]:
        return [r.ext_fields.get("consumerGroup", "") for r in self.got
                if r.code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED]


def test_heartbeat_notify_and_consumer_list(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            n1, n2 = Notices(), Notices()
            c1 = await client(b, n1)
            c2 = await client(b, n2)
            empty = await c1.request(RemotingCommand.request(38, {"consumerGroup": "CG"}))
            assert (empty.code, empty.remark) == (RC.SYSTEM_ERROR, "no consumer for this group, CG")
            r = await c1.request(heartbeat_request("10.0.0.1@1", consumer_group="CG", topics=("T1",),
                                                   producer_group="PG"))
            assert r.code == RC.SUCCESS and r.body is None
            await wait_until(lambda: n1.groups() == ["CG"])
            # the retry topic was created with the group's retryQueueNums
            retry = b.topics.select("%RETRY%CG")
            assert retry is not None and retry.read_queue_nums == 1 and retry.perm == 6
            await c2.request(heartbeat_request("10.0.0.2@2", consumer_group="CG", topics=("T1",)))
            await wait_until(lambda: n1.groups() == ["CG", "CG"] and n2.groups() == ["CG"])
            notice = n1.got[-1]
            assert notice.is_oneway and notice.ext_fields == {"consumerGroup": "CG"}
            # a heartbeat that changes nothing sends no notice
            await c2.request(heartbeat_request("10.0.0.2@2", consumer_group="CG", topics=("T1",)))
            await asyncio.sleep(0.1)
            assert len(n2.groups()) == 1
            r = await c1.request(RemotingCommand.request(38, {"consumerGroup": "CG"}))
            ids = GetConsumerListByGroupResponseBody.decode(r.body).consumer_id_list
            assert r.code == RC.SUCCESS and sorted(ids) == ["10.0.0.1@1", "10.0.0.2@2"]
            # the C++ client's heartbeat: enums by ordinal
            cpp_body = (b'{"clientID":"10.0.0.3@3","consumerDataSet":[{"consumeFromWhere":0,"consumeType":1,'
                        b'"groupName":"CG","messageModel":1,"subscriptionDataSet":[{"classFilterMode":false,'
                        b'"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":"1","tagsSet":[],'
                        b'"topic":"T1"}],"unitMode":false}],"producerDataSet":[]}')
            c3 = await client(b)
            assert (await c3.request(RemotingCommand.request(34, None, cpp_body, language="CPP", version=63))).code == 0
            conns = ConsumerConnection.decode((await c1.request(RemotingCommand.request(
                203, {"consumerGroup": "CG"}))).body)
            assert {c.client_id for c in conns.connection_set} == {"10.0.0.1@1", "10.0.0.2@2", "10.0.0.3@3"}
            assert {getattr(c.language, "name", c.language) for c in conns.connection_set} == {"JAVA", "CPP"}
            assert {c.version for c in conns.connection_set} == {409, 63}
            assert conns.message_model is not None and "T1" in conns.subscription_table
            producers = ProducerConnection.decode((await c1.request(RemotingCommand.request(
                204, {"producerGroup": "PG"}))).body)
            assert [c.client_id for c in producers.connection_set] == ["10.0.0.1@1"]
            r = await c1.request(RemotingCommand.request(204, {"producerGroup": "Nope"}))
            assert (r.code, r.remark) == (RC.SYSTEM_ERROR, "the producer group[Nope] not exist")
            r = await c1.request(RemotingCommand.request(203, {"consumerGroup": "Nope"}))
            assert (r.code, r.remark) == (RC.CONSUMER_NOT_ONLINE, "the consumer group[Nope] not online")
            # a closed connection leaves the group, and the others are told
            before = len(n1.groups())
            await c3.aclose()
            await wait_until(lambda: len(n1.groups()) == before + 1)
            # UNREGISTER_CLIENT
            r = await c2.request(RemotingCommand.request(35, {"clientID": "10.0.0.2@2", "consumerGroup": "CG"}))
            assert r.code == RC.SUCCESS
            await wait_until(lambda: len(n1.groups()) == before + 2)
            r = await c1.request(RemotingCommand.request(38, {"consumerGroup": "CG"}))
            assert GetConsumerListByGroupResponseBody.decode(r.body).consumer_id_list == ("10.0.0.1@1",)
            # unregistering a producer group never registered still succeeds (mqadmin does it)
            r = await c2.request(RemotingCommand.request(35, {"clientID": "x", "producerGroup": "CLIENT_INNER_PRODUCER"}))
            assert r.code == RC.SUCCESS
            await c1.aclose()
            await c2.aclose()
            await wait_until(lambda: b.consumers.get("CG") is None and not b.producers.groups)

    run(main())


def test_idle_clients_are_dropped_and_closed(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            await c.request(heartbeat_request("idle@1", consumer_group="IG", topics=("T",), producer_group="IP"))
            b.consumers.expired_ms = 0
            b.producers.expired_ms = 0
            await asyncio.sleep(0.01)
            b.scan_idle_clients()
            await asyncio.wait_for(c.wait_closed(), 2)
            assert b.consumers.get("IG") is None and "IP" not in b.producers.groups

    run(main())


def test_silent_connections_are_closed(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path, serverChannelMaxIdleTimeSeconds="1") as b:
            quiet = await client(b)
            busy = await client(b)
            await quiet.request(RemotingCommand.request(9999))
            for _ in range(3):
                await asyncio.sleep(0.5)
                await busy.request(RemotingCommand.request(9999))
                b.scan_idle_clients()
            await asyncio.wait_for(quiet.wait_closed(), 2)
            assert not busy.is_closing
            await busy.aclose()

    run(main())


def test_lock_and_unlock_batch(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            mqs = tuple(MessageQueue(topic="T", broker_name="broker-a", queue_id=i) for i in range(3))

            async def lock(client_id: str, qs: tuple[MessageQueue, ...]) -> set[int]:
                body = LockBatchRequestBody(consumer_group="LG", client_id=client_id, mq_set=qs).encode()
                r = await c.request(RemotingCommand.request(41, None, body))
                assert r.code == RC.SUCCESS
                return {q.queue_id for q in LockBatchResponseBody.decode(r.body).lock_ok_mq_set}

            assert await lock("a", mqs[:2]) == {0, 1}
            assert await lock("b", mqs) == {2}
            body = UnlockBatchRequestBody(consumer_group="LG", client_id="a", mq_set=mqs[:1]).encode()
            assert (await c.request(RemotingCommand.request(42, None, body))).code == RC.SUCCESS
            assert await lock("b", mqs) == {0, 2}
            b.locks.lock_max_live_ms = 0  # every lock expires: anyone may take them
            await asyncio.sleep(0.01)
            assert await lock("a", mqs) == {0, 1, 2}
            await c.aclose()

    run(main())


def test_a_heartbeat_of_thousands_of_subscriptions_logs_a_few_and_a_count(caplog) -> None:  # type: ignore[no-untyped-def]
    """Java logs every added topic; one line each for 5,000 topics would hold the event loop, so
    the first eight are logged and then the count."""
    import logging

    from reference_broker.broker.clients import ConsumerGroupInfo

    info = ConsumerGroupInfo("G", "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_LAST_OFFSET")
    subs = [SubscriptionData(topic=f"T{i}", sub_string="*", sub_version=1) for i in range(5000)]
    with caplog.at_level(logging.INFO, logger="reference_broker"):
        assert info.update_subscription(subs)
        assert info.update_subscription(subs[:10])
    lines = [r.getMessage() for r in caplog.records]
    assert sum("add new topic" in m for m in lines) == 8
    assert sum("remove topic" in m for m in lines) == 8
    assert any("5000 topics added, 0 removed in all" in m for m in lines)
    assert any("0 topics added, 4990 removed in all" in m for m in lines)
    assert len(lines) == 18 and set(info.subscriptions) == {f"T{i}" for i in range(10)}
