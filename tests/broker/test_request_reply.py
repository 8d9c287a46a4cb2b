# Licensed under the Apache License, Version 2.0. See LICENSE.
"""SEND_REPLY_MESSAGE(_V2): the broker pushes the reply to the requesting producer
(PUSH_REPLY_MESSAGE_TO_CLIENT, found by REPLY_TO_CLIENT among the producers' client ids), answers
with Java's fields, stores the reply in its topic; a push that fails is SYSTEM_ERROR with Java's
remark. tests/interop/test_java_request_reply.py runs the Java client's request() against it."""

from __future__ import annotations

from pathlib import Path

from tests.broker.helpers import client, heartbeat_request, run, running_cluster, send_request
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import RemotingConnection
from wire.headers import ReplyMessageRequestHeader
from wire.message import decode_properties


def test_reply_is_pushed_to_the_requester_and_stored(tmp_path: Path) -> None:
    pushed: list[RemotingCommand] = []
    refuse = False

    def requester(conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        pushed.append(req)
        if refuse:
            return req.response(ResponseCode.SYSTEM_ERROR, "process reply message fail")
        return req.response(ResponseCode.SUCCESS)

    async def main() -> None:
        nonlocal refuse
        async with running_cluster(tmp_path) as (_, b):
            asker = await client(b, requester)
            r = await asker.request(heartbeat_request("10.0.0.9@asker", producer_group="Asker"))
            assert r.code == ResponseCode.SUCCESS
            replier = await client(b)
            props = {"MSG_TYPE": "reply", "REPLY_TO_CLIENT": "10.0.0.9@asker", "CORRELATION_ID": "corr-1",
                     "TTL": "3000"}
            for code in (324, 325):
                req = send_request("DefaultCluster_REPLY_TOPIC", b"the answer", code=code if code == 324 else 310,
                                   queue_id=0, extra_props=props)
                req = req.replace(code=code)
                r = await replier.request(req)
                assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
                # the answer names the stored reply (storeReplyMessageEnable)
                assert set(r.ext_fields) == {"msgId", "queueId", "queueOffset", "MSG_REGION", "TRACE_ON"}
                assert r.ext_fields["msgId"] != "0" and r.ext_fields["queueId"] == "0"
            assert [p.code for p in pushed] == [RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT] * 2
            h = ReplyMessageRequestHeader.from_ext(pushed[0].ext_fields)
            assert (h.topic, h.producer_group, h.queue_id, pushed[0].body) == (
                "DefaultCluster_REPLY_TOPIC", "PG", 0, b"the answer")
            assert h.born_host == f"127.0.0.1:{replier.local[1]}"
            assert h.store_host == f"127.0.0.1:{b.store_host[1]}"
            sent = decode_properties(h.properties or "")
            assert sent["CORRELATION_ID"] == "corr-1" and int(sent["PUSH_REPLY_TIME"]) > 0
            assert b.store.max_offset("DefaultCluster_REPLY_TOPIC", 0) == 2
            # the requester fails the push: Java's remark; the reply is stored all the same
            refuse = True
            r = await replier.request(send_request("DefaultCluster_REPLY_TOPIC", b"x", code=324, extra_props=props))
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "push reply message to 10.0.0.9@askerfail.")
            assert b.store.max_offset("DefaultCluster_REPLY_TOPIC", 0) == 3
            # the requester is gone
            await asker.aclose()
            r = await replier.request(send_request("DefaultCluster_REPLY_TOPIC", b"x", code=324, extra_props=props))
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR,
                                          "push reply message fail, channel of <10.0.0.9@asker> not found.")
            # the send checks come first: a forbidden topic
            r = await replier.request(send_request("SCHEDULE_TOPIC_XXXX", b"x", code=324, extra_props=props))
            assert r.code == ResponseCode.NO_PERMISSION
            await replier.aclose()

    run(main())
