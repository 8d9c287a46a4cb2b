# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The commands mqadmin users reach for that mqctl lacked (issue 15 item 17), with the real ``mqctl``
process against the reference servers: offsets reset by time and to the end (the broker's way for
an online group, the committed offsets for an offline one), cloned offsets, a client's running
info, group configs, a broker's consume stats, send round-trip times, put/get statistics, the
maintenance requests, metadata export and import, and consuming by time. The same requests against
the real Java broker are in ``tests/interop/test_operations_java.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .test_e2e import ok, run_mqctl

TOPIC = "OpsTopic"


def _ask(servers: Any, coro: Any) -> Any:
    return servers.call(coro)


async def _offsets(addr: str, group: str, topic: str, queues: int) -> list[int]:
    from wire.admin.client import AdminClient
    from wire.codes import RequestCode, ResponseCode
    from wire.headers import QueryConsumerOffsetRequestHeader, QueryConsumerOffsetResponseHeader

    out = []
    async with AdminClient([addr]) as c:
        for q in range(queues):
            resp = await c.call(addr, RequestCode.QUERY_CONSUMER_OFFSET,
                                QueryConsumerOffsetRequestHeader(consumer_group=group, topic=topic, queue_id=q),
                                ok=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND))
            out.append(QueryConsumerOffsetResponseHeader.from_ext(resp.ext_fields).offset
                       if resp.code == 0 else -1)
    return out


async def _commit(addr: str, group: str, topic: str, offsets: list[int]) -> None:
    from wire.admin.client import AdminClient
    from wire.codes import RequestCode
    from wire.headers import UpdateConsumerOffsetRequestHeader

    async with AdminClient([addr]) as c:
        for q, off in enumerate(offsets):
            await c.call(addr, RequestCode.UPDATE_CONSUMER_OFFSET, UpdateConsumerOffsetRequestHeader(
                consumer_group=group, topic=topic, queue_id=q, commit_offset=off))


@pytest.fixture(scope="module")
def loaded(servers: Any) -> dict[str, Any]:
    """OpsTopic on broker-a only, 2 queues, 6 messages; their store times."""
    ns = servers.namesrv
    a = servers.broker_addr(0)
    ok("-n", ns, "topic", "create", TOPIC, "-b", a, "-r", "2", "-w", "2")
    for i in range(6):
        ok("-n", ns, "message", "send", "-t", TOPIC, "-p", f"ops {i}", "-b", "broker-a", "-q", str(i % 2))
    msgs = json.loads(ok("-n", ns, "-o", "json", "message", "consume", "-t", TOPIC).stdout)["messages"]
    return {"ns": ns, "a": a, "times": sorted(m["store_timestamp"] for m in msgs)}


def test_skip_accumulated_and_reset_by_time_of_an_offline_group(servers, loaded):
    ns, a = loaded["ns"], loaded["a"]
    _ask(servers, _commit(a, "OpsGroup", TOPIC, [0, 0]))
    r = ok("-n", ns, "consumer", "skip-accumulated", "-g", "OpsGroup", "-t", TOPIC)
    assert r.stdout.startswith("rollback consumer offset by specified group[OpsGroup], topic[OpsTopic], force[true]")
    assert "no consumer online" in r.stderr  # the committed offsets were changed here
    assert _ask(servers, _offsets(a, "OpsGroup", TOPIC, 2)) == [3, 3]
    # back to the time of the third message (queue 0, offset 1); queue 1 goes to the message stored
    # nearest that time (ConsumeQueue.getOffsetInQueueByTime: the closer neighbour, the earlier on a tie)
    times = loaded["times"]
    third = times[2]
    nearest = 1 if abs(third - times[1]) > abs(times[3] - third) else 0
    doc = json.loads(ok("-n", ns, "-o", "json", "consumer", "reset-offset", "-g", "OpsGroup", "-t", TOPIC,
                        "--time", str(third)).stdout)
    assert doc["by_offsets"] == [a] and doc["timestamp"] == third
    assert _ask(servers, _offsets(a, "OpsGroup", TOPIC, 2)) == [1, nearest]
    assert [q["offset"] for q in doc["queues"]] == [1, nearest]


def test_reset_of_an_online_group_goes_through_the_broker(servers, loaded):
    from .test_e2e import _heartbeat_client

    ns, a = loaded["ns"], loaded["a"]
    conn = servers.call(_heartbeat_client(a, TOPIC))  # group CG1 is online on broker-a
    try:
        _ask(servers, _commit(a, "CG1", TOPIC, [3, 3]))
        doc = json.loads(ok("-n", ns, "-o", "json", "consumer", "reset-offset", "-g", "CG1", "-t", TOPIC,
                            "--time", "1970-01-01T00:00:00+00:00", "--no-force").stdout)
        assert doc["by_broker"] == [a] and doc["by_offsets"] == []
        assert [(q["queue_id"], q["offset"]) for q in doc["queues"]] == [(0, 0), (1, 0)]
    finally:
        servers.call(conn.aclose())


def test_clone_offset(servers, loaded):
    ns, a = loaded["ns"], loaded["a"]
    _ask(servers, _commit(a, "CloneSrc", TOPIC, [2, 1]))
    r = ok("-n", ns, "consumer", "clone-offset", "--from", "CloneSrc", "--to", "CloneDst", "-t", TOPIC, "--offline")
    assert r.stdout.strip() == (f"clone group offset success. srcGroup[CloneSrc], destGroup[CloneDst], "
                                f"topic[{TOPIC}], broker[{a}]")
    assert _ask(servers, _offsets(a, "CloneDst", TOPIC, 2)) == [2, 1]


def test_consumer_status_asks_the_client(servers, loaded):
    """GET_CONSUMER_RUNNING_INFO reaches the client through the broker, and its answer comes back."""
    from wire import RemotingCommand
    from wire.aio import connect
    from wire.bodies import ConsumerData, ConsumeType, HeartbeatData, MessageModel, SubscriptionData

    info = {"properties": {"PROP_CONSUME_TYPE": "CONSUME_PASSIVELY", "PROP_THREADPOOL_CORE_SIZE": "20"},
            "subscriptionSet": [{"topic": TOPIC, "subString": "*", "expressionType": "TAG"}],
            "mqTable": {}, "statusTable": {TOPIC: {"pullRT": 1.5, "pullTPS": 2.0, "consumeRT": 3.0,
                                                    "consumeOKTPS": 4.0, "consumeFailedTPS": 0.0}}}

    def answer(conn: Any, req: RemotingCommand) -> RemotingCommand | None:
        if req.code == 307:
            assert req.ext_fields["clientId"] == "ops@client" and req.ext_fields["consumerGroup"] == "StatusGroup"
            return req.response(0, body=json.dumps(info).encode())
        return None

    async def client() -> Any:
        host, _, port = loaded["a"].rpartition(":")
        conn = await connect(host, int(port), handler=answer)
        hb = HeartbeatData(client_id="ops@client", consumer_data_set=(ConsumerData(
            group_name="StatusGroup", consume_type=ConsumeType.CONSUME_PASSIVELY,
            message_model=MessageModel.CLUSTERING,
            subscription_data_set=(SubscriptionData(topic=TOPIC, sub_string="*"),)),))
        assert (await conn.request(RemotingCommand.request(34, {}, hb.encode()))).code == 0
        return conn

    conn = servers.call(client())
    try:
        r = ok("-n", loaded["ns"], "consumer", "status", "-g", "StatusGroup", "-b", loaded["a"])
        assert "#Consumer: ops@client" in r.stdout and "PROP_THREADPOOL_CORE_SIZE  20" in r.stdout
        assert [TOPIC, "1.5", "2.0", "3.0", "4.0", "0.0"] in [line.split() for line in r.stdout.splitlines()]
        doc = json.loads(ok("-n", loaded["ns"], "-o", "json", "consumer", "status", "-g", "StatusGroup",
                            "-b", loaded["a"]).stdout)
        assert doc == [{"client_id": "ops@client", "info": info, "error": None, "unreachable": False}]
        r = run_mqctl("-n", loaded["ns"], "consumer", "status", "-g", "StatusGroup", "-b", loaded["a"],
                      "-i", "nobody")
        assert r.returncode == 1 and "not a consumer of group" in r.stderr
        r = ok("-n", loaded["ns"], "consumer", "config", "-g", "StatusGroup")
        assert "groupName" in r.stdout and "StatusGroup" in r.stdout
    finally:
        servers.call(conn.aclose())


def test_broker_consume_stats(servers, loaded):
    ns, a = loaded["ns"], loaded["a"]
    ok("-n", ns, "consumer", "group", "create", "-g", "StatsGroup", "-b", a)
    _ask(servers, _commit(a, "StatsGroup", TOPIC, [1, 3]))
    r = ok("-n", ns, "broker", "consume-stats", "-b", a)
    rows = [line.split() for line in r.stdout.splitlines()[1:] if line.startswith(TOPIC)]
    mine = next(x for x in rows if x[1] == "StatsGroup")
    assert mine[:7] == [TOPIC, "StatsGroup", "broker-a", "0", "3", "1", "2"]
    doc = json.loads(ok("-n", ns, "-o", "json", "broker", "consume-stats", "-b", a).stdout)
    assert doc["addr"] == a and doc["total_diff"] >= 2


def test_cluster_rt_and_stats_all(servers, loaded):
    ns = loaded["ns"]
    r = ok("-n", ns, "cluster", "rt", "-a", "3", "-s", "16")
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    assert [row[:2] for row in rows] == [["E2ECluster", "broker-a"], ["E2ECluster", "broker-b"]]
    assert all(row[3:] == ["3", "0"] for row in rows)
    r = ok("-n", ns, "stats", "all", "-t", TOPIC)
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    assert rows and all(row[0] == TOPIC for row in rows)
    doc = json.loads(ok("-n", ns, "-o", "json", "stats", "all", "-t", TOPIC).stdout)
    assert {row["in_msg_24h"] for row in doc["rows"]} == {6}


@pytest.mark.parametrize("action", ["clean-expired-cq", "clean-unused-topic", "delete-expired-commitlog"])
def test_maintenance_requests(servers, loaded, action):
    r = ok("-n", loaded["ns"], "broker", action, "-c", "E2ECluster")
    assert r.stdout.splitlines() == [f"{action}: {servers.broker_addr(0)} success",
                                     f"{action}: {servers.broker_addr(1)} success"]


def test_metadata_export_and_import(servers, loaded, tmp_path):
    ns = loaded["ns"]
    path = tmp_path / "metadata.json"
    ok("-n", ns, "cluster", "metadata", "export", "-c", "E2ECluster", "-f", str(path))
    doc = json.loads(path.read_text())
    assert doc["topicConfigTable"][TOPIC]["readQueueNums"] == 2 and doc["masters"] == 2
    assert "TBW102" not in doc["topicConfigTable"] and "TOOLS_CONSUMER" not in doc["subscriptionGroupTable"]
    doc["topicConfigTable"] = {"Imported": {**doc["topicConfigTable"][TOPIC], "topicName": "Imported",
                                            "readQueueNums": 4, "writeQueueNums": 4}}
    path.write_text(json.dumps(doc))
    r = ok("-n", ns, "cluster", "metadata", "import", str(path), "-c", "E2ECluster")
    assert f"import topic Imported @ {servers.broker_addr(0)} success." in r.stdout
    route = json.loads(ok("-n", ns, "-o", "json", "topic", "route", "Imported").stdout)
    assert sorted(q["writeQueueNums"] for q in route["queueDatas"]) == [2, 2]
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    r = run_mqctl("-n", ns, "cluster", "metadata", "import", str(bad), "-c", "E2ECluster")
    assert r.returncode == 2 and "not a metadata document: [0] is neither a TopicConfig" in r.stderr
    # mqadmin 5.3 updateTopicList's file (a JSON array of TopicConfig) to one broker, by its mqadmin name
    batch = tmp_path / "topics.json"
    batch.write_text(json.dumps([{"topicName": "Batch1", "readQueueNums": 3, "writeQueueNums": 3, "perm": 6},
                                 {"topicName": "Batch2", "readQueueNums": 1, "writeQueueNums": 1, "perm": 6}]))
    r = ok("-n", ns, "updateTopicList", "-b", servers.broker_addr(0), "-f", str(batch))
    assert r.stdout.splitlines() == [f"import topic Batch1 @ {servers.broker_addr(0)} success.",
                                     f"import topic Batch2 @ {servers.broker_addr(0)} success."]
    route = json.loads(ok("-n", ns, "-o", "json", "topic", "route", "Batch1").stdout)
    assert [(q["brokerName"], q["writeQueueNums"]) for q in route["queueDatas"]] == [("broker-a", 3)]


def test_consume_by_time(servers, loaded):
    ns, times = loaded["ns"], loaded["times"]
    doc = json.loads(ok("-n", ns, "-o", "json", "message", "consume", "-t", TOPIC, "--begin", str(times[3])).stdout)
    assert sorted(m["store_timestamp"] for m in doc["messages"]) == times[3:]
    doc = json.loads(ok("-n", ns, "-o", "json", "message", "consume", "-t", TOPIC, "--begin", str(times[1]),
                        "--end", str(times[3])).stdout)
    assert sorted(m["store_timestamp"] for m in doc["messages"]) == times[1:4]
    r = run_mqctl("-n", ns, "message", "consume", "-t", TOPIC, "--begin", "yesterday")
    assert r.returncode == 2 and "--begin: 'yesterday' is not a time" in r.stderr



