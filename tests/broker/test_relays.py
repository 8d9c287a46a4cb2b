# Licensed under the Apache License, Version 2.0. See LICENSE.
"""GET_CONSUMER_RUNNING_INFO (307) and CONSUME_MESSAGE_DIRECTLY (309), relayed to one consumer
(AdminBrokerProcessor.callConsumer): its answer is the answer; the stored message goes with a
309; refusals for a consumer that is not online or too old, and a time-out.
tests/interop/test_java_relays.py does the same with a real Java consumer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reference_broker.broker.processors import relay
from tests.broker.helpers import client, heartbeat_request, run, running_cluster, send_request
from wire import RemotingCommand, ResponseCode
from wire.aio import RemotingConnection
from wire.bodies import GetConsumerStatusBody, MessageQueue
from wire.message import decode_stored_message


def test_relays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relay, "CALL_TIMEOUT_S", 0.5)
    got: list[RemotingCommand] = []
    silent = asyncio.Event()

    async def consumer(conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand | None:
        if req.code == 221:
            mq = MessageQueue(topic="RelayT", broker_name="b", queue_id=0)
            return req.response(ResponseCode.SUCCESS, None, None,
                                GetConsumerStatusBody(message_queue_table={mq: 7}).encode())
        if req.code not in (307, 309):
            return None
        got.append(req)
        if req.ext_fields.get("clientId") == "10.0.0.5@slow":
            await silent.wait()
        return req.response(ResponseCode.SUCCESS, None, {"answered": "yes"}, b'{"from":"the consumer"}')

    async def main() -> None:
        async with running_cluster(tmp_path) as (_, b):
            admin = await client(b)
            sent = await admin.request(send_request("RelayT", b"direct", queue_id=0))
            c = await client(b, consumer)
            assert (await c.request(heartbeat_request("10.0.0.5@c1", consumer_group="G", topics=("RelayT",)))).code == 0
            r = await admin.request(RemotingCommand.request(307, {"consumerGroup": "G", "clientId": "10.0.0.5@c1",
                                                                  "jstackEnable": "false"}))
            assert (r.code, r.ext_fields.get("answered"), r.body) == (0, "yes", b'{"from":"the consumer"}')
            assert got[-1].ext_fields["jstackEnable"] == "false"
            r = await admin.request(RemotingCommand.request(309, {"consumerGroup": "G", "clientId": "10.0.0.5@c1",
                                                                  "msgId": sent.ext_fields["msgId"]}))
            assert r.code == 0
            assert got[-1].ext_fields["brokerName"] == b.config.broker_name
            assert decode_stored_message(got[-1].body or b"").body == b"direct"
            # INVOKE_BROKER_TO_GET_CONSUMER_STATUS: each consumer's offsets, by client id
            r = await admin.request(RemotingCommand.request(223, {"topic": "RelayT", "group": "G"}))
            assert (r.code, r.remark) == (0, "not set any response code")
            status = GetConsumerStatusBody.decode(r.body or b"").consumer_table
            assert {c: {mq.queue_id: o for mq, o in t.items()} for c, t in status.items()} == {"10.0.0.5@c1": {0: 7}}
            r = await admin.request(RemotingCommand.request(223, {"topic": "RelayT", "group": "nobody"}))
            assert (r.code, r.remark) == (1, "No Any Consumer online in the consumer group: [nobody]")
            r = await admin.request(RemotingCommand.request(307, {"consumerGroup": "G", "clientId": "nobody"}))
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "The Consumer <G> <nobody> not online")
            old = await client(b, consumer)
            hb = heartbeat_request("10.0.0.5@old", consumer_group="G", topics=("RelayT",)).replace(version=50)
            assert (await old.request(hb)).code == 0
            r = await admin.request(RemotingCommand.request(307, {"consumerGroup": "G", "clientId": "10.0.0.5@old"}))
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "The Consumer <10.0.0.5@old> Version "
                                          "<V3_1_2_SNAPSHOT> too low to finish, please upgrade it to V3_1_8_SNAPSHOT")
            slow = await client(b, consumer)
            assert (await slow.request(heartbeat_request("10.0.0.5@slow", consumer_group="G",
                                                         topics=("RelayT",)))).code == 0
            r = await admin.request(RemotingCommand.request(307, {"consumerGroup": "G", "clientId": "10.0.0.5@slow"}))
            assert r.code == ResponseCode.CONSUME_MSG_TIMEOUT
            assert (r.remark or "").startswith("consumer <G> <10.0.0.5@slow> Timeout: ")
            silent.set()
            for conn in (slow, old, c, admin):
                await conn.aclose()

    run(main())
