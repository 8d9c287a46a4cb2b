# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Request-reply messaging (SEND_REPLY_MESSAGE, PUSH_REPLY_MESSAGE_TO_CLIENT) through our broker
and through the Java 4.9.8 one, driven by the same Java 4.9.8 client program
(tests/interop/java/RequestReplyProbe.java): ``DefaultMQProducer.request`` (synchronous and with
a callback) answered by a responder that sends ``MessageUtil.createReplyMessage``; the replies
arrive the same, and are stored in ``<cluster>_REPLY_TOPIC`` on both; a request nobody answers
times out on both. Replies the broker cannot push get the same code and remark from both."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator

import pytest

from tests.broker.helpers import send_request
from tests.interop.clientkit import compile_probe, threaded_servers
from tests.javakit import JavaServers
from wire.admin.client import AdminClient
from wire.admin.common import route_or_none
from wire.admin.message import message_consume
from wire.admin.topic import topic_upsert
from wire.aio import connect

pytestmark = [pytest.mark.shared, pytest.mark.slow]

TOPIC, SILENT = "RRTopic", "RRSilent"
REPLY_TOPIC = "DefaultCluster_REPLY_TOPIC"


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return compile_probe("RequestReplyProbe", "4.9.8", tmp_path_factory.mktemp("rrprobe"))


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    with threaded_servers(tmp_path_factory.mktemp("our-rr")) as addrs:
        yield addrs


@pytest.fixture(scope="module")
def java(java_servers_module: JavaServers) -> tuple[str, str]:
    ns = java_servers_module.namesrv("4.9.8")
    broker = java_servers_module.broker("4.9.8", namesrv=ns, name="rr-java")
    return ns.addr, broker.addr


def _topics(namesrv: str, broker: str) -> None:
    async def main() -> None:
        async with AdminClient([namesrv]) as c:
            for topic in (TOPIC, SILENT):
                await topic_upsert(c, topic, broker=broker, read_queues=4, write_queues=4)
            for topic in (TOPIC, SILENT, REPLY_TOPIC):
                for _ in range(100):
                    if await route_or_none(c, topic) is not None:
                        break
                    await asyncio.sleep(0.1)
                else:
                    raise AssertionError(f"no route for {topic}")

    asyncio.run(main())


def _run(probe: list[str], namesrv: str, broker: str) -> dict[str, list[str]]:
    _topics(namesrv, broker)
    done = subprocess.run([*probe, namesrv, TOPIC, SILENT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    found: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            found.setdefault(key, []).append(value)
    return found


def _stored_replies(namesrv: str) -> list[str]:
    async def main() -> list[str]:
        async with AdminClient([namesrv]) as c:
            return sorted((m.body_text or "") for m in (await message_consume(c, REPLY_TOPIC, count=64)).messages)

    return asyncio.run(main())


def test_request_reply(probe: list[str], ours: tuple[str, str], java: tuple[str, str]) -> None:
    outcomes = {name: _run(probe, *addrs) for name, addrs in (("ours", ours), ("java", java))}
    for found in outcomes.values():
        assert found["reply"] == [f"reply to question {i} topic={REPLY_TOPIC} correlated=true pushTime=true"
                                  for i in range(3)]
        assert found["asyncReply"] == [f"reply to question async topic={REPLY_TOPIC} correlated=true pushTime=true"]
        assert found["silent"] == ["RequestTimeoutException"]
        assert "replyError" not in found
    assert outcomes["ours"] == outcomes["java"]
    # storeReplyMessageEnable: both keep the replies in the reply topic
    stored = {name: _stored_replies(addrs[0]) for name, addrs in (("ours", ours), ("java", java))}
    assert stored["ours"] == stored["java"] == sorted(
        [f"reply to question {i}" for i in range(3)] + ["reply to question async"])


def test_replies_that_cannot_be_pushed(ours: tuple[str, str], java: tuple[str, str]) -> None:
    """No REPLY_TO_CLIENT; a client id no producer has: SYSTEM_ERROR with Java's remark, and the
    reply stored all the same (its msgId in the answer)."""

    async def answers(broker: str) -> list[tuple[int, str | None, list[str]]]:
        host, port = broker.rsplit(":", 1)
        conn = await connect(host, int(port))
        out = []
        for props in ({}, {"REPLY_TO_CLIENT": "127.0.0.1@nobody", "CORRELATION_ID": "c1"}):
            req = send_request(REPLY_TOPIC, b"orphan reply", code=324, queue_id=0,
                               extra_props={"MSG_TYPE": "reply", **props})
            r = await conn.request(req, 15)
            out.append((r.code, r.remark, sorted(r.ext_fields)))
        await conn.aclose()
        return out

    java_answers = asyncio.run(answers(java[1]))
    assert asyncio.run(answers(ours[1])) == java_answers
    assert java_answers[0][:2] == (1, "reply message properties[REPLY_TO_CLIENT] is null")
    assert java_answers[1][:2] == (1, "push reply message fail, channel of <127.0.0.1@nobody> not found.")
    assert "msgId" in java_answers[0][2]
