# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Admin requests a broker relays to a consumer, with a real Java 4.9.8 push consumer
(tests/interop/java/ConsumerProbe.java) online on our broker and on the Java one:
GET_CONSUMER_RUNNING_INFO (mqadmin consumerStatus) gets the client's ConsumerRunningInfo,
INVOKE_BROKER_TO_GET_CONSUMER_STATUS (mqadmin getConsumerStatus) the offsets it holds,
CONSUME_MESSAGE_DIRECTLY has the client consume a stored message named by its offset id and
answers its ConsumeMessageDirectlyResult, and a client that is not online gets Java's refusal."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.broker.helpers import send_request
from tests.interop.clientkit import compile_probe, threaded_servers
from tests.javakit import JavaServers
from wire import RemotingCommand
from wire.aio import connect
from wire.bodies import GetConsumerListByGroupResponseBody, GetConsumerStatusBody

pytestmark = [pytest.mark.shared, pytest.mark.slow]

GROUP, TOPIC = "RelayG", "RelayT"


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return compile_probe("ConsumerProbe", "4.9.8", tmp_path_factory.mktemp("consumerprobe"))


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    with threaded_servers(tmp_path_factory.mktemp("our-relay")) as addrs:
        yield addrs


@pytest.fixture(scope="module")
def java(java_servers_module: JavaServers) -> tuple[str, str]:
    ns = java_servers_module.namesrv("4.9.8")
    broker = java_servers_module.broker("4.9.8", namesrv=ns, name="relay-java")
    return ns.addr, broker.addr


def _answers(probe: list[str], namesrv: str, broker: str) -> list[object]:
    host, port = broker.rsplit(":", 1)

    async def prepare() -> str:
        conn = await connect(host, int(port))
        sent = await conn.request(send_request(TOPIC, b"consume me directly", queue_id=0), 10)
        assert sent.code == 0
        await conn.aclose()
        return sent.ext_fields["msgId"]

    msg_id = asyncio.run(prepare())
    time.sleep(1)  # the topic's registration (a oneway one after its creation on send)
    proc = subprocess.Popen([*probe, namesrv, GROUP, TOPIC], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("clientId="), line
        client_id = line.strip().partition("=")[2]

        async def ask() -> list[object]:
            conn = await connect(host, int(port))
            for _ in range(200):  # until the consumer's heartbeat is in
                r = await conn.request(RemotingCommand.request(38, {"consumerGroup": GROUP}), 10)
                if r.code == 0 and client_id in GetConsumerListByGroupResponseBody.decode(r.body or b"").consumer_id_list:
                    break
                await asyncio.sleep(0.1)
            out: list[object] = []
            r = await conn.request(RemotingCommand.request(307, {"consumerGroup": GROUP, "clientId": client_id,
                                                                 "jstackEnable": "false"}), 15)
            out.append((r.code, b'"subscriptionSet"' in (r.body or b""), b'"properties"' in (r.body or b"")))
            r = await conn.request(RemotingCommand.request(309, {"consumerGroup": GROUP, "clientId": client_id,
                                                                 "msgId": msg_id}), 15)
            out.append((r.code, b'"consumeResult":"CR_SUCCESS"' in (r.body or b"")))
            for _ in range(100):  # until the consumer's offset table holds every queue it was given
                r = await conn.request(RemotingCommand.request(223, {"topic": TOPIC, "group": GROUP}), 15)
                status = GetConsumerStatusBody.decode(r.body or b"").consumer_table if r.code == 0 else {}
                if r.code != 0 or len(status.get(client_id, {})) >= 4:
                    break
                await asyncio.sleep(0.1)
            # by client id: the probe's own, which differs from run to run
            out.append((r.code, r.remark, {"me" if c == client_id else c: sorted((mq.topic, mq.queue_id) for mq in t)
                                           for c, t in status.items()}))
            r = await conn.request(RemotingCommand.request(223, {"topic": TOPIC, "group": GROUP,
                                                                 "clientAddr": client_id}), 15)
            out.append((r.code, ["me" if c == client_id else c
                                 for c in GetConsumerStatusBody.decode(r.body or b"").consumer_table]))
            for code in (307, 309):
                r = await conn.request(RemotingCommand.request(code, {"consumerGroup": GROUP, "clientId": "nobody",
                                                                      "msgId": msg_id}), 15)
                out.append((r.code, r.remark))
            await conn.aclose()
            return out

        return asyncio.run(ask())
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_relays_to_a_java_consumer(probe: list[str], ours: tuple[str, str], java: tuple[str, str]) -> None:
    java_answers = _answers(probe, *java)
    our_answers = _answers(probe, *ours)
    assert our_answers == java_answers
    assert java_answers[:2] == [(0, True, True), (0, True)]
    code, remark, status = java_answers[2]  # type: ignore[misc]
    assert (code, remark) == (0, "not set any response code") and list(status) == ["me"]
    assert java_answers[3] == (0, ["me"])
    assert java_answers[4] == (1, f"The Consumer <{GROUP}> <nobody> not online")
