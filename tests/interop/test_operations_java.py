# Licensed under the Apache License, Version 2.0. See LICENSE.
"""mqctl's offset, statistics and round-trip commands (issue 15 item 17) against the real Java
4.9.8 broker, where it answers the request: INVOKE_BROKER_TO_RESET_OFFSET (and the fallback for a
group not online), CLONE_GROUP_OFFSET, GET_BROKER_CONSUME_STATS (compared with mqadmin
brokerConsumeStats), VIEW_BROKER_STATS_DATA, the sends of clusterRT, the maintenance requests,
and mqadmin 5.3's updateTopicList / updateSubGroupList files imported one config per request (the
batch requests are not in 4.9.8). The Java servers run through tests/javakit.py."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.test_e2e import run_mqctl
from tests.javakit import JavaProcess, JavaServers

pytestmark = pytest.mark.slow

TOPIC = "JavaOpsTopic"


def ok(*args: str) -> Any:
    r = run_mqctl(*args, timeout=120)
    assert r.returncode == 0, f"mqctl {' '.join(args)}: {r.stderr}"
    return r


@pytest.fixture(scope="module")
def java(java_servers_module: JavaServers) -> Iterator[tuple[JavaProcess, JavaProcess]]:
    ns = java_servers_module.namesrv("4.9.8")
    broker = java_servers_module.broker("4.9.8", namesrv=ns, name="java-ops")
    deadline = time.monotonic() + 60
    while run_mqctl("-n", ns.addr, "cluster", "list").returncode != 0:  # until the broker has registered
        assert time.monotonic() < deadline, "the Java broker did not register"
        time.sleep(0.5)
    ok("-n", ns.addr, "topic", "create", TOPIC, "-b", broker.addr, "-r", "2", "-w", "2")
    for i in range(4):
        ok("-n", ns.addr, "message", "send", "-t", TOPIC, "-p", f"java ops {i}", "-b", "java-ops", "-q", str(i % 2))
    yield ns, broker


def _offsets(addr: str, group: str, queues: int = 2) -> list[int]:
    from wire.admin.client import AdminClient
    from wire.codes import RequestCode, ResponseCode
    from wire.headers import QueryConsumerOffsetRequestHeader, QueryConsumerOffsetResponseHeader

    async def main() -> list[int]:
        out = []
        async with AdminClient([addr]) as c:
            for q in range(queues):
                resp = await c.call(addr, RequestCode.QUERY_CONSUMER_OFFSET, QueryConsumerOffsetRequestHeader(
                    consumer_group=group, topic=TOPIC, queue_id=q), ok=(ResponseCode.SUCCESS,
                                                                         ResponseCode.QUERY_NOT_FOUND))
                out.append(QueryConsumerOffsetResponseHeader.from_ext(resp.ext_fields).offset if resp.code == 0 else -1)
        return out

    return asyncio.run(main())


def _commit(addr: str, group: str, offsets: list[int]) -> None:
    from wire.admin.client import AdminClient
    from wire.codes import RequestCode
    from wire.headers import UpdateConsumerOffsetRequestHeader

    async def main() -> None:
        async with AdminClient([addr]) as c:
            for q, off in enumerate(offsets):
                await c.call(addr, RequestCode.UPDATE_CONSUMER_OFFSET, UpdateConsumerOffsetRequestHeader(
                    consumer_group=group, topic=TOPIC, queue_id=q, commit_offset=off))

    asyncio.run(main())


def test_reset_offset_against_java(java, java_servers_module):
    ns, broker = java
    _commit(broker.addr, "JavaGroup", [0, 0])
    # the group has no consumer online: Java answers CONSUMER_NOT_ONLINE and mqctl changes the
    # committed offsets itself, as mqadmin's resetOffsetByTimeOld
    r = ok("-n", ns.addr, "consumer", "skip-accumulated", "-g", "JavaGroup", "-t", TOPIC)
    assert "no consumer online" in r.stderr
    assert _offsets(broker.addr, "JavaGroup") == [2, 2]
    # mqadmin moves them back to the beginning; mqctl reads the same offsets
    done = java_servers_module.mqadmin("4.9.8", "resetOffsetByTime", "-n", ns.addr, "-g", "JavaGroup", "-t", TOPIC,
                                       "-s", "0")
    assert "rollback consumer offset" in done.stdout, done.stdout + done.stderr
    assert _offsets(broker.addr, "JavaGroup") == [0, 0]
    doc = json.loads(ok("-n", ns.addr, "-o", "json", "consumer", "reset-offset", "-g", "JavaGroup", "-t", TOPIC,
                        "--time", "now").stdout)
    assert doc["by_offsets"] == [broker.addr] and [q["offset"] for q in doc["queues"]] == [2, 2]


def test_clone_offset_against_java(java):
    ns, broker = java
    _commit(broker.addr, "JavaSrc", [1, 2])
    ok("-n", ns.addr, "consumer", "clone-offset", "--from", "JavaSrc", "--to", "JavaDst", "-t", TOPIC, "--offline")
    assert _offsets(broker.addr, "JavaDst") == [1, 2]


def test_broker_consume_stats_against_java(java, java_servers_module):
    ns, broker = java
    ok("-n", ns.addr, "consumer", "group", "create", "-g", "JavaStats", "-b", broker.addr)
    _commit(broker.addr, "JavaStats", [1, 0])
    doc = json.loads(ok("-n", ns.addr, "-o", "json", "broker", "consume-stats", "-b", broker.addr).stdout)
    mine = [r for r in doc["rows"] if r["group"] == "JavaStats"]
    assert [(r["queue_id"], r["broker_offset"], r["consumer_offset"], r["diff"]) for r in mine] == \
        [(0, 2, 1, 1), (1, 2, 0, 2)]
    theirs = java_servers_module.mqadmin("4.9.8", "brokerConsumeStats", "-n", ns.addr, "-b", broker.addr)
    total = re.search(r"Diff Total: (\d+)", theirs.stdout)
    assert total is not None, theirs.stdout + theirs.stderr
    assert doc["total_diff"] == int(total.group(1))


def test_cluster_rt_and_stats_against_java(java):
    ns, _broker = java
    r = ok("-n", ns.addr, "cluster", "rt", "-a", "3")
    assert [line.split()[1:2] + line.split()[3:] for line in r.stdout.splitlines()[1:]] == [["java-ops", "3", "0"]]
    doc = json.loads(ok("-n", ns.addr, "-o", "json", "stats", "all", "-t", TOPIC).stdout)
    assert doc["failures"] == [] and {row["topic"] for row in doc["rows"]} == {TOPIC}
    # Java knows who consumes the topic from the committed offsets
    assert {"JavaGroup", "JavaSrc", "JavaDst"} <= {row["group"] for row in doc["rows"]}


@pytest.mark.parametrize("action", ["clean-expired-cq", "clean-unused-topic", "delete-expired-commitlog"])
def test_maintenance_against_java(java, action):
    ns, broker = java
    r = ok("-n", ns.addr, "broker", action, "-b", broker.addr)
    assert r.stdout == f"{action}: {broker.addr} success\n"


def test_update_topic_list_and_sub_group_list_against_java(java, tmp_path):
    """mqadmin 5.3's batch files, by their mqadmin names, into a Java 4.9.8 broker (which has no
    UPDATE_AND_CREATE_TOPIC_LIST): each config arrives as written, read back from the broker."""
    ns, broker = java
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps([{"topicName": "JavaBatch1", "readQueueNums": 3, "writeQueueNums": 3, "perm": 6},
                                  {"topicName": "JavaBatch2", "readQueueNums": 1, "writeQueueNums": 1, "perm": 4}]))
    r = ok("-n", ns.addr, "updateTopicList", "-b", broker.addr, "-f", str(topics))
    assert r.stdout.splitlines() == [f"import topic JavaBatch1 @ {broker.addr} success.",
                                     f"import topic JavaBatch2 @ {broker.addr} success."]
    listed = json.loads(ok("-n", ns.addr, "-o", "json", "topic", "route", "JavaBatch2").stdout)
    assert [(q["readQueueNums"], q["writeQueueNums"], q["perm"]) for q in listed["queueDatas"]] == [(1, 1, 4)]
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps([{"groupName": "JavaBatchGroup", "retryMaxTimes": 5, "consumeBroadcastEnable": False}]))
    ok("-n", ns.addr, "updateSubGroupList", "-b", broker.addr, "-f", str(groups))
    doc = json.loads(ok("-n", ns.addr, "-o", "json", "cluster", "metadata", "export", "-c", "DefaultCluster",
                        "--groups-only").stdout)
    got = doc["subscriptionGroupTable"]["JavaBatchGroup"]
    assert (got["retryMaxTimes"], got["consumeBroadcastEnable"]) == (5, False)
