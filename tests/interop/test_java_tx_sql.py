# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The same Java 4.9.8 client program (tests/interop/java/TxSqlProbe.java, compiled here against
../shared/javakit's jars) against our name server and broker and against the Java ones: a
TransactionMQProducer's commit, rollback and unknown-then-check outcomes, push consumers that see
only what was committed, a MessageSelector.bySql subscription (CHECK_CLIENT_CONFIG, SQL92
heartbeats, broker-side filtering), a tag subscription, and the refusal of a selector that does
not compile. Both brokers check transactions every second (transactionCheckInterval=1000)."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator

import pytest

from tests.interop.clientkit import compile_probe, threaded_servers
from tests.javakit import JavaServers

pytestmark = [pytest.mark.shared, pytest.mark.slow]

SETTINGS = {"transactionCheckInterval": "1000", "transactionTimeOut": "1000", "enablePropertyFilter": "true"}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return compile_probe("TxSqlProbe", "4.9.8", tmp_path_factory.mktemp("txsqlprobe"))


def _run(probe: list[str], namesrv: str, suffix: str) -> dict[str, list[str]]:
    done = subprocess.run([*probe, namesrv, suffix], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    found: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            found.setdefault(key.replace(suffix, ""), []).append(value.replace(suffix, ""))
    return found


@pytest.fixture(scope="module")
def our_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Our name server and broker in a thread of their own; yields their addresses."""
    with threaded_servers(tmp_path_factory.mktemp("our-txsql"), **SETTINGS) as addrs:
        yield addrs


@pytest.fixture(scope="module")
def java_pair(java_servers_module: JavaServers) -> tuple[str, str]:
    """The Java 4.9.8 name server and broker (the same settings); their addresses."""
    ns = java_servers_module.namesrv("4.9.8")
    broker = java_servers_module.broker("4.9.8", namesrv=ns, name="txsql-java", **SETTINGS)
    return ns.addr, broker.addr


@pytest.fixture(scope="module")
def outcomes(probe: list[str], our_servers: tuple[str, str],
             java_pair: tuple[str, str]) -> dict[str, dict[str, list[str]]]:
    return {"ours": _run(probe, our_servers[0], "Ours"), "java": _run(probe, java_pair[0], "Java")}


#: selectors good and bad: CHECK_CLIENT_CONFIG's answer (code and remark, javacc's message
#: included) is the same from both brokers
SELECTORS = ["a > 5 AND b = 'x'", "a >", "a > 'x'", "a = NULL", "5", "a BETWEEN 10 AND 1", "a # 3", "a > 0.0",
             "1 IN ('a')", "c IN (1, 2)", "TRUE = 5", "a = 1 b = 2", "a AND", "(a = 1", "a = 1)", "a NOT 5",
             "a IS 5", "", "a = 99999999999999999999", "a > 1 -- c", "'x'", "a =", "a IN ()", "a BETWEEN 1", "NOT",
             "a > 5 AND", "a = 1\nAND b >", "a NOT IN ('x') OR b IS NOT NULL", "a = 1 #", "a <> -2.5E3"]


def test_check_client_config_answers(our_servers: tuple[str, str], java_pair: tuple[str, str]) -> None:
    from wire import RemotingCommand
    from wire.aio import connect
    from wire.bodies import CheckClientRequestBody, SubscriptionData

    async def answers(addr: str) -> list[tuple[int, str | None]]:
        host, port = addr.rsplit(":", 1)
        conn = await connect(host, int(port))
        out = []
        for text in SELECTORS:
            body = CheckClientRequestBody(client_id="c", group="G", subscription_data=SubscriptionData(
                topic="T", sub_string=text, expression_type="SQL92")).encode()
            r = await conn.request(RemotingCommand.request(46, None, body), 10)
            out.append((r.code, r.remark))
        await conn.aclose()
        return out

    ours = asyncio.run(answers(our_servers[1]))
    java = asyncio.run(answers(java_pair[1]))
    assert ours == java
    assert sum(code != 0 for code, _ in java) >= 20


@pytest.mark.parametrize("side", ["ours", "java"])
def test_transactions_and_filters(outcomes: dict[str, dict[str, list[str]]], side: str) -> None:
    found = outcomes[side]
    assert found["tx.send"] == ["commit/- SEND_OK COMMIT_MESSAGE", "rollback/- SEND_OK ROLLBACK_MESSAGE",
                                "unknown/commit SEND_OK UNKNOW", "unknown/rollback SEND_OK UNKNOW"]
    assert found["tx.checks.atLeast2"] == ["true"]
    # the checks carry the message under its real topic, with its check count
    assert {c.split(" ")[0] for c in found["tx.check"]} == {"unknown/commit", "unknown/rollback"}
    assert all("topic=TxT" in c and "checkTimes=" in c for c in found["tx.check"])
    assert found["tx.consumed"] == ["[commit/-, unknown/commit]"]
    assert found["sql.consumed"] == ["[m0, m3, m4, m5]"]
    assert found["tag.consumed"] == ["[m1, m3, m5]"]
    assert found["sql.bad.code"] == [str(23)]  # SUBSCRIPTION_PARSE_FAILED
    assert found["sql.bad.message"] == ["java.lang.RuntimeException: Value ''x'' cannot be compared."]


def test_same_outcomes(outcomes: dict[str, dict[str, list[str]]]) -> None:
    """Everything the program saw is the same on both sides, the properties of the consumed
    messages included (what a committed transaction message keeps); only the check lines (how
    many checks came in the time) may differ."""
    ours, java = ({k: v for k, v in side.items() if k != "tx.check"} for side in (outcomes["ours"],
                                                                                  outcomes["java"]))
    assert ours == java


def test_resume_check_half_message(our_servers: tuple[str, str], java_pair: tuple[str, str]) -> None:
    """RESUME_CHECK_HALF_MESSAGE (mqadmin resumeCheckHalfMessage) on both brokers: a stored
    message goes back to the half topic with its check count at 0; ids that name no message get
    the same refusal."""
    from tests.broker.helpers import send_request
    from wire import RemotingCommand
    from wire.admin.client import AdminClient
    from wire.admin.message import message_consume
    from wire.aio import connect

    async def answers(namesrv: str, broker: str) -> tuple[list[tuple[int, str | None]], list[str]]:
        host, port = broker.rsplit(":", 1)
        conn = await connect(host, int(port))
        sent = await conn.request(send_request("ResumeT", b"resume me", queue_id=0), 10)
        assert sent.code == 0
        out = []
        for ext in ({"msgId": sent.ext_fields["msgId"]}, {}, {"msgId": "nonsense"},
                    {"msgId": sent.ext_fields["msgId"][:-8] + "7FFFFFFF"}):
            r = await conn.request(RemotingCommand.request(323, ext), 10)
            out.append((r.code, r.remark))
        await conn.aclose()
        async with AdminClient([namesrv]) as c:
            half = await message_consume(c, "RMQ_SYS_TRANS_HALF_TOPIC", count=256)
        counts = [m.properties.get("TRANSACTION_CHECK_TIMES", "-") for m in half.messages if m.body == b"resume me"]
        return out, counts

    ours, java = asyncio.run(answers(*our_servers)), asyncio.run(answers(*java_pair))
    assert ours[0] == java[0]
    assert java[0][0] == (0, None)
    assert java[0][1:] == [(1, "Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC.")] * 3
    assert "0" in ours[1] and "0" in java[1]


def test_reset_offset_answers(our_servers: tuple[str, str], java_pair: tuple[str, str]) -> None:
    """INVOKE_BROKER_TO_RESET_OFFSET (mqadmin resetOffsetByTime) on both brokers: the refusals
    (no topic, no offsets, no consumer online), then with a consumer online the table answered
    and the RESET_CONSUMER_CLIENT_OFFSET the consumer gets."""
    from tests.broker.helpers import heartbeat_request, send_request
    from wire import RemotingCommand
    from wire.aio import RemotingConnection, connect
    from wire.bodies import ResetOffsetBody

    def reset(topic: str, force: bool) -> RemotingCommand:
        return RemotingCommand.request(222, {"topic": topic, "group": "ResetG", "timestamp": "0",
                                             "isForce": "true" if force else "false"})

    def table(body: bytes | None) -> dict[int, int] | None:
        if not body:
            return None
        return {mq.queue_id: o for mq, o in ResetOffsetBody.decode(body).offset_table.items()}

    async def answers(broker: str) -> list[object]:
        host, port = broker.rsplit(":", 1)
        conn = await connect(host, int(port))
        for i in range(5):
            assert (await conn.request(send_request("ResetT", f"r{i}".encode(), queue_id=0), 10)).code == 0
        out: list[object] = []
        for req in (reset("NoSuchResetTopic", False), reset("ResetT", False)):
            r = await conn.request(req, 10)
            out.append((r.code, r.remark))
        await _commit(conn, "ResetG", "ResetT", {0: 5, 1: 0, 2: 0, 3: 0})
        r = await conn.request(reset("ResetT", False), 10)
        out.append((r.code, r.remark))
        told: list[RemotingCommand] = []

        def consumer(c: RemotingConnection, req: RemotingCommand) -> None:
            if req.code == 220:
                told.append(req)

        reader = await connect(host, int(port), handler=consumer)
        hb = heartbeat_request("127.0.0.1@resetreader", consumer_group="ResetG", topics=("ResetT",))
        assert (await reader.request(hb, 10)).code == 0
        for force in (False, True):
            r = await conn.request(reset("ResetT", force), 10)
            out.append((r.code, r.remark, table(r.body)))
        for _ in range(100):
            if len(told) == 2:
                break
            await asyncio.sleep(0.05)
        out += [(sorted(t.ext_fields.items()), table(t.body)) for t in told]
        await reader.aclose()
        await conn.aclose()
        return out

    ours, java = asyncio.run(answers(our_servers[1])), asyncio.run(answers(java_pair[1]))
    assert ours == java, f"ours {ours}\njava {java}"
    assert java[2][0] == 206 and len(java) == 7


def test_mqadmin_reset_offset_by_time(our_servers: tuple[str, str], java_pair: tuple[str, str],
                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    """Java's own mqadmin resetOffsetByTime through our broker and the Java one: with no consumer
    online it falls back to committing the offsets itself (GET_CONSUME_STATS,
    SEARCH_OFFSET_BY_TIMESTAMP, UPDATE_CONSUMER_OFFSET); with one online it asks the broker
    (INVOKE_BROKER_TO_RESET_OFFSET). The same table is printed for both brokers."""
    import re

    from tests.broker.helpers import heartbeat_request, send_request
    from tests.javakit import mqadmin
    from wire.aio import connect

    home = tmp_path_factory.mktemp("mqadmin-reset")

    def table(out: str) -> list[str]:
        lines = [line.split() for line in out.splitlines() if re.match(r"\S+\s+\d+\s+\d+", line)]
        # the broker name differs, and so does the order (a HashMap of queues, hashed with it)
        return sorted(" ".join(cols[1:]) for cols in lines)

    async def run(namesrv: str, broker: str) -> list[list[str]]:
        host, port = broker.rsplit(":", 1)
        conn = await connect(host, int(port))
        for i in range(3):
            assert (await conn.request(send_request("MqaResetT", f"x{i}".encode(), queue_id=0), 10)).code == 0
        await _commit(conn, "MqaResetG", "MqaResetT", {0: 3, 1: 0, 2: 0, 3: 0})
        args = ("resetOffsetByTime", "-n", namesrv, "-g", "MqaResetG", "-t", "MqaResetT", "-s", "0")
        offline = await asyncio.to_thread(mqadmin, "4.9.8", *args, home=home)
        reader = await connect(host, int(port))
        hb = heartbeat_request("127.0.0.1@mqareader", consumer_group="MqaResetG", topics=("MqaResetT",))
        assert (await reader.request(hb, 10)).code == 0
        online = await asyncio.to_thread(mqadmin, "4.9.8", *args, home=home)
        await reader.aclose()
        await conn.aclose()
        for done in (offline, online):
            assert "rollback consumer offset" in done.stdout, done.stdout + done.stderr[-2000:]
        return [table(offline.stdout), table(online.stdout)]

    ours, java = asyncio.run(run(*our_servers)), asyncio.run(run(*java_pair))
    assert ours == java
    assert all(len(t) == 4 for t in java)
    # offline: the fallback's six columns; online: the broker's table (queue, offset)
    assert {len(row.split()) for row in java[0]} == {5} and {len(row.split()) for row in java[1]} == {2}


async def _commit(conn: object, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commit ``offsets`` with UPDATE_CONSUMER_OFFSET requests, each answered before the next.

    Sent oneway, the Java broker commits them on a pool of threads, and its QUERY_CONSUMER_OFFSET
    answers 0 for a queue with no commit yet, so a query cannot tell that a commit of 0 has landed;
    a RESET_CONSUMER_OFFSET that arrives before it answers "consumer group not exist"."""
    from wire import RemotingCommand
    from wire.aio import RemotingConnection

    assert isinstance(conn, RemotingConnection)
    for q, offset in offsets.items():
        r = await conn.request(RemotingCommand.request(15, {"consumerGroup": group, "topic": topic,
                                                            "queueId": q, "commitOffset": offset}), 10)
        assert r.code == 0, (group, topic, q, r.code, r.remark)
