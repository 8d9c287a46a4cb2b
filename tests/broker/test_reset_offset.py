# Licensed under the Apache License, Version 2.0. See LICENSE.
"""INVOKE_BROKER_TO_RESET_OFFSET (222, mqadmin resetOffsetByTime): the offset table worked out
as Java's Broker2Client.resetOffset does, sent to the group's consumers as
RESET_CONSUMER_CLIENT_OFFSET (220; the list form for a CPP request), and Java's refusals.
tests/interop/test_java_tx_sql.py compares the answers with a Java 4.9.8 broker."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.broker.helpers import client, heartbeat_request, run, running_cluster, send_request, wait_until
from wire import LanguageCode, RemotingCommand, RequestCode, ResponseCode
from wire.aio import RemotingConnection
from wire.bodies import ResetOffsetBody, ResetOffsetBodyForC
from wire.headers import ResetOffsetRequestHeader


def _reset(topic: str, group: str, timestamp: int, force: bool, *,
           language: LanguageCode = LanguageCode.JAVA) -> RemotingCommand:
    return RemotingCommand.request(222, {"topic": topic, "group": group, "timestamp": str(timestamp),
                                         "isForce": "true" if force else "false"}, language=language)


def test_reset_offset(tmp_path: Path) -> None:
    told: list[RemotingCommand] = []

    def consumer(conn: RemotingConnection, req: RemotingCommand) -> None:
        if req.code == RequestCode.RESET_CONSUMER_CLIENT_OFFSET:
            told.append(req)

    async def main() -> None:
        async with running_cluster(tmp_path) as (_, b):
            admin = await client(b)
            for i in range(5):
                assert (await admin.request(send_request("RT", f"m{i}".encode(), queue_id=0))).code == 0
            # refusals before any offset or consumer
            r = await admin.request(_reset("NoSuchTopic", "RG", 0, False))
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "[reset-offset] reset offset failed, no topic "
                                          "in this broker. topic=NoSuchTopic")
            r = await admin.request(_reset("RT", "RG", 0, False))
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "THe consumer group <RG> not exist")
            for q in range(4):
                admin.oneway(RemotingCommand.request(15, {"consumerGroup": "RG", "topic": "RT", "queueId": q,
                                                          "commitOffset": 5 if q == 0 else 0}))
            await asyncio.sleep(0.1)
            r = await admin.request(_reset("RT", "RG", 0, False))
            assert (r.code, r.remark) == (ResponseCode.CONSUMER_NOT_ONLINE, "Consumer not online, so can not reset "
                                          "offset, Group: RG Topic: RT Timestamp: 0")
            # a consumer of the group online
            c = await client(b, consumer)
            hb = heartbeat_request("10.0.0.7@reader", consumer_group="RG", topics=("RT",))
            assert (await c.request(hb)).code == 0
            r = await admin.request(_reset("RT", "RG", 0, False))
            assert (r.code, r.remark) == (ResponseCode.SUCCESS, "not set any response code")
            table = {mq.queue_id: o for mq, o in ResetOffsetBody.decode(r.body or b"").offset_table.items()}
            assert table == {0: 0, 1: 0, 2: 0, 3: 0}  # back to the start; the others were there already
            await wait_until(lambda: len(told) == 1)
            assert told[0].code == RequestCode.RESET_CONSUMER_CLIENT_OFFSET and told[0].is_oneway
            h = ResetOffsetRequestHeader.from_ext(told[0].ext_fields)
            assert (h.topic, h.group, h.timestamp, h.is_force) == ("RT", "RG", 0, False)
            assert {mq.queue_id: o for mq, o in ResetOffsetBody.decode(told[0].body or b"").offset_table.items()} \
                == table
            # the committed offsets are the clients' to move
            assert b.offsets.query("RG", "RT", 0) == 5
            # to the end, forced; not forced, an offset ahead of the committed one is not taken
            r = await admin.request(_reset("RT", "RG", -1, True))
            assert {mq.queue_id: o for mq, o in ResetOffsetBody.decode(r.body or b"").offset_table.items()} == {
                0: 5, 1: 0, 2: 0, 3: 0}
            admin.oneway(RemotingCommand.request(15, {"consumerGroup": "RG", "topic": "RT", "queueId": 0,
                                                      "commitOffset": 2}))
            await asyncio.sleep(0.1)
            r = await admin.request(_reset("RT", "RG", -1, False))
            assert {mq.queue_id: o for mq, o in ResetOffsetBody.decode(r.body or b"").offset_table.items()}[0] == 2
            # asked in the CPP language: the clients get the list form
            r = await admin.request(_reset("RT", "RG", 0, True, language=LanguageCode.CPP))
            assert r.code == ResponseCode.SUCCESS
            await wait_until(lambda: len(told) == 4)
            entries = ResetOffsetBodyForC.decode(told[3].body or b"").offset_table
            assert sorted((e.queue_id, e.offset) for e in entries) == [(0, 0), (1, 0), (2, 0), (3, 0)]
            # an old client
            old = await client(b)
            hb = heartbeat_request("10.0.0.8@old", consumer_group="RG", topics=("RT",)).replace(version=10)
            assert (await old.request(hb)).code == 0
            r = await admin.request(_reset("RT", "RG", 0, False))
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR,
                                          "the client does not support this feature. version=V3_0_0_BETA7")
            for conn in (old, c, admin):
                await conn.aclose()

    run(main())
