# Licensed under the Apache License, Version 2.0. See LICENSE.
"""SQL92 filtering on the reference broker: CHECK_CLIENT_CONFIG (46) answers as Java's
ClientManageProcessor, heartbeat subscriptions and PULL subscriptions with expressionType SQL92
filter on properties (enablePropertyFilter), Java's answers for parse errors, and the library's
message_consume(sql=...) behind mqctl message consume --sql."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.broker.helpers import client, run, running_cluster, send_request
from wire import RemotingCommand, ResponseCode
from wire.admin.client import AdminClient
from wire.admin.errors import BadRequest, ServerError
from wire.admin.message import message_consume
from wire.bodies import CheckClientRequestBody, SubscriptionData
from wire.message import decode_messages


def _check(sql: str, kind: str = "SQL92") -> RemotingCommand:
    body = CheckClientRequestBody(client_id="c", group="G", subscription_data=SubscriptionData(
        topic="T", sub_string=sql, expression_type=kind)).encode()
    return RemotingCommand.request(46, None, body)


def _pull(group: str, offset: int = 0, sql: str | None = None) -> RemotingCommand:
    ext = {"consumerGroup": group, "topic": "T", "queueId": "0", "queueOffset": str(offset), "maxMsgNums": "32",
           "sysFlag": str(0x4 if sql is not None else 0), "commitOffset": "0", "suspendTimeoutMillis": "0",
           "subVersion": "0"}
    if sql is not None:
        ext.update(subscription=sql, expressionType="SQL92")
    return RemotingCommand.request(11, ext)


def _heartbeat(group: str, sql: str) -> RemotingCommand:
    body = {"clientID": "cid", "producerDataSet": [], "consumerDataSet": [{
        "groupName": group, "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
        "consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET", "unitMode": False, "subscriptionDataSet": [{
            "classFilterMode": False, "topic": "T", "subString": sql, "tagsSet": [], "codeSet": [],
            "subVersion": 0, "expressionType": "SQL92"}]}]}
    return RemotingCommand.request(34, None, json.dumps(body).encode())


async def _fill(conn) -> None:  # type: ignore[no-untyped-def]
    for i in range(6):
        r = await conn.request(send_request("T", f"m{i}".encode(), tags="odd" if i % 2 else "even",
                                            extra_props={"a": str(i), "b": "x" if i < 3 else "y"}))
        assert r.code == ResponseCode.SUCCESS


def test_check_client_config(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_cluster(tmp_path / "off") as (_, b):
            conn = await client(b)
            r = await conn.request(_check("a > 1"))
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR,
                                          "The broker does not support consumer to filter message by SQL92")
            assert (await conn.request(_check("*", "TAG"))).code == ResponseCode.SUCCESS
            await conn.aclose()
        async with running_cluster(tmp_path / "on", enablePropertyFilter="true") as (_, b):
            conn = await client(b)
            ok = await conn.request(_check("a > 1 AND b = 'x'"))
            assert (ok.code, ok.remark) == (ResponseCode.SUCCESS, None)
            bad = await conn.request(_check("a > 'x'"))
            assert (bad.code, bad.remark) == (ResponseCode.SUBSCRIPTION_PARSE_FAILED,
                                              "java.lang.RuntimeException: Value ''x'' cannot be compared.")
            await conn.aclose()

    run(main())


def test_a_selector_too_long_to_compile_on_the_event_loop_is_refused_by_its_length(tmp_path: Path) -> None:
    """A 4 MiB selector (a client chooses the size) would hold the broker's event loop for
    seconds; it is refused from its length, and the remark says so (not the text)."""
    from wire.sql92 import MAX_SELECTOR_LENGTH

    huge = "a IN (" + ",".join(f"'t{i:07d}'" for i in range(400_000)) + ")"

    async def main() -> None:
        async with running_cluster(tmp_path, enablePropertyFilter="true") as (_, b):
            conn = await client(b)
            # a 4.4 MB request: on a loaded machine sending and reading it can take seconds (what
            # is asserted is the answer; speed lives in benchmarks/)
            r = await conn.request(_check(huge), timeout=30)
            assert r.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED
            assert r.remark == ("org.apache.rocketmq.filter.parser.ParseException: the expression is "
                                f"{len(huge)} characters long; at most {MAX_SELECTOR_LENGTH} are compiled")
            # a heartbeat's selector is compiled at each pull: refused, as any that does not compile
            await _fill(conn)
            assert (await conn.request(_heartbeat("G", huge), timeout=30)).code == ResponseCode.SUCCESS
            r = await conn.request(_pull("G"))
            assert r.code == ResponseCode.FILTER_DATA_NOT_EXIST
            await conn.aclose()

    run(main())


def test_heartbeat_and_pull_subscriptions(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_cluster(tmp_path, enablePropertyFilter="true") as (_, b):
            conn = await client(b)
            await _fill(conn)
            # a heartbeat subscription
            assert (await conn.request(_heartbeat("G1", "a >= 2 AND b = 'y'"))).code == ResponseCode.SUCCESS
            r = await conn.request(_pull("G1"))
            assert r.code == ResponseCode.SUCCESS
            assert [m.body for m in decode_messages(r.body)] == [b"m3", b"m4", b"m5"]
            # the PULL's own subscription
            r = await conn.request(_pull("G2", sql="a IN ('1') OR a = 4"))
            assert [m.body for m in decode_messages(r.body)] == [b"m1", b"m4"]
            # nothing matches: PULL_RETRY_IMMEDIATELY past the stretch looked at
            r = await conn.request(_pull("G2", sql="missing IS NOT NULL"))
            assert (r.code, r.remark, r.ext_fields["nextBeginOffset"]) == (
                ResponseCode.PULL_RETRY_IMMEDIATELY, "NO_MATCHED_MESSAGE", "6")
            # a heartbeat with an expression that does not compile registers no filter data
            assert (await conn.request(_heartbeat("G3", "a >"))).code == ResponseCode.SUCCESS
            r = await conn.request(_pull("G3"))
            assert (r.code, r.remark) == (ResponseCode.FILTER_DATA_NOT_EXIST,
                                          "The broker's consumer filter data is not exist!Your expression may be "
                                          "wrong!")
            await conn.aclose()

    run(main())


def test_pull_sql_needs_property_filter(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_cluster(tmp_path) as (_, b):
            conn = await client(b)
            await _fill(conn)
            r = await conn.request(_pull("G", sql="a > 1"))
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR,
                                          "The broker does not support consumer to filter message by SQL92")
            await conn.aclose()

    run(main())


def test_message_consume_sql(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_cluster(tmp_path, enablePropertyFilter="true") as (ns, b):
            conn = await client(b)
            await _fill(conn)
            await conn.aclose()
            async with AdminClient([ns.address]) as c:
                got = await message_consume(c, "T", sql="a > 1 AND b = 'x'")
                assert [m.body for m in got.messages] == [b"m2"]
                with pytest.raises(BadRequest, match="Value ''x'' cannot be compared"):
                    await message_consume(c, "T", sql="a > 'x'")
        async with running_cluster(tmp_path / "off") as (ns, b):
            async with AdminClient([ns.address]) as c:
                conn = await client(b)
                await _fill(conn)
                await conn.aclose()
                with pytest.raises(ServerError, match="does not support consumer to filter"):
                    await message_consume(c, "T", sql="a > 1")

    run(main())
