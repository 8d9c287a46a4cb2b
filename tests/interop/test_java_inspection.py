# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The admin requests that read a broker's queues, offsets, clients and statistics, and the
maintenance requests beside them, sent alike to our broker and to the real Java 4.9.8 broker
after the same state was made on both: QUERY_CONSUME_TIME_SPAN (303), QUERY_CORRECTION_OFFSET
(308), QUERY_CONSUME_QUEUE (321), GET_ALL_PRODUCER_INFO (328), CLONE_GROUP_OFFSET (314),
VIEW_BROKER_STATS_DATA (315), CLEAN_UNUSED_TOPIC (316) and GET_BROKER_CONSUME_STATS (317); then
Java's own mqadmin (queryCq, producer, brokerConsumeStats, cloneGroupOffset, cleanUnusedTopic,
statsAll) reading both brokers, and mqctl's commands for them.

Both brokers are called ``insp`` so that the bodies, which name the broker in every MessageQueue,
compare as they are once the numbers that differ between two brokers (times, ports, CommitLog
offsets) are masked."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest

from tests.broker.helpers import heartbeat_request, send_request
from tests.cli.test_e2e import run_mqctl
from tests.interop.clientkit import threaded_servers
from tests.javakit import JavaServers, ask
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.bodies import (
    ConsumerData,
    HeartbeatData,
    ProducerTableInfo,
    QueryConsumeQueueResponseBody,
    QueryConsumeTimeSpanBody,
    QueryCorrectionOffsetBody,
    SubscriptionData,
    SubscriptionGroupConfig,
)
from wire.headers import QueryConsumeQueueRequestHeader
from wire.remoting import decode_command, encode_command

pytestmark = [pytest.mark.shared, pytest.mark.slow]

R, RC = RequestCode, ResponseCode
BROKER = "insp"
TOPIC, EMPTY = "InspT", "InspEmptyT"
CONSUMER, PRODUCER = "InspCG", "InspPG"


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    with threaded_servers(tmp_path_factory.mktemp("our-inspection"), brokerName=BROKER,
                          enablePropertyFilter="true") as addrs:
        _prepare(addrs[1])
        yield addrs


@pytest.fixture(scope="module")
def java(java_servers_module: JavaServers) -> tuple[str, str]:
    ns = java_servers_module.namesrv("4.9.8")
    broker = java_servers_module.broker("4.9.8", namesrv=ns, name=BROKER, enablePropertyFilter="true")
    _prepare(broker.addr)
    return ns.addr, broker.addr


def _create_topic(topic: str, queues: int) -> RemotingCommand:
    return RemotingCommand.request(R.UPDATE_AND_CREATE_TOPIC, {
        "topic": topic, "defaultTopic": "TBW102", "readQueueNums": queues, "writeQueueNums": queues,
        "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False})


def _commit(group: str, topic: str, qid: int, offset: int) -> RemotingCommand:
    return RemotingCommand.request(R.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic,
                                                              "queueId": qid, "commitOffset": offset})


def _prepare(broker: str) -> None:
    """The same state on either broker: two topics (one never written), three tagged messages in
    queue 0 of the other, the committed offsets of three groups, one of them configured."""
    for topic in (TOPIC, EMPTY):
        assert ask(broker, _create_topic(topic, 2)).code == RC.SUCCESS
    for i in range(3):
        sent = ask(broker, send_request(TOPIC, b"inspect %d" % i, queue_id=0, tags="TagA", keys=f"k{i}"))
        assert sent.code == RC.SUCCESS, sent
    group_config = SubscriptionGroupConfig(group_name="InspG1").encode()
    assert ask(broker, RemotingCommand.request(R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, group_config)).code == 0
    for group, offsets in (("InspG1", (2, 0)), ("InspG2", (1, 0)), ("InspG3", (3, 0))):
        for qid, offset in enumerate(offsets):
            assert ask(broker, _commit(group, TOPIC, qid, offset)).code == RC.SUCCESS


@contextmanager
def _client_online(broker: str, request: RemotingCommand) -> Iterator[None]:
    """A connection that sent ``request`` (a heartbeat) and stays open until the block ends."""
    host, port = broker.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=15) as sock:
        sock.sendall(encode_command(request))
        while True:  # the broker's own requests (NOTIFY_CONSUMER_IDS_CHANGED) may come first
            head = _recv(sock, 4)
            answer = decode_command(head + _recv(sock, int.from_bytes(head, "big")))
            if answer.is_response:
                break
        assert answer.code == RC.SUCCESS, answer
        yield


def _recv(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        assert chunk, "connection closed"
        out += chunk
    return out


def _masked(data: bytes | str | None) -> str:
    """Text with every number replaced by ``N`` (times, ports, offsets differ between brokers, and
    the hour and day figures of Java's statistics lag behind ours: docs/servers.md)."""
    text = data.decode() if isinstance(data, bytes) else (data or "")
    return re.sub(r"\d+(?:\.\d+)?(?:E-?\d+)?", "N", text)


def _both(ours: tuple[str, str], java: tuple[str, str], request: Any) -> tuple[RemotingCommand, RemotingCommand]:
    return ask(ours[1], request()), ask(java[1], request())


# ---------------------------------------------------------------------------- the requests


def test_consume_time_span(ours: tuple[str, str], java: tuple[str, str]) -> None:
    mine, theirs = _both(ours, java, lambda: RemotingCommand.request(
        R.QUERY_CONSUME_TIME_SPAN, {"topic": TOPIC, "group": "InspG1"}))
    assert (mine.code, mine.remark) == (theirs.code, theirs.remark) == (RC.SUCCESS, None)
    assert _masked(mine.body) == _masked(theirs.body)
    for answer in (mine, theirs):
        q0, q1 = QueryConsumeTimeSpanBody.decode(answer.body or b"").consume_time_span_set
        # our time texts are Java's: yyyy-MM-dd#HH:mm:ss:SSS in the broker's zone
        from reference_broker.broker.processors.inspection import java_time_text

        assert q0.min_time_stamp_str == java_time_text(q0.min_time_stamp)
        assert 0 < q0.min_time_stamp <= q0.consume_time_stamp <= q0.max_time_stamp and q0.delay_time > 0
        assert (q1.min_time_stamp, q1.max_time_stamp, q1.consume_time_stamp) == (-1, -1, -1)
    mine, theirs = _both(ours, java, lambda: RemotingCommand.request(
        R.QUERY_CONSUME_TIME_SPAN, {"topic": "InspNoSuchT", "group": "InspG1"}))
    assert (mine.code, mine.remark) == (theirs.code, theirs.remark) == (RC.TOPIC_NOT_EXIST,
                                                                       "topic[InspNoSuchT] not exist")


def test_consume_queue(ours: tuple[str, str], java: tuple[str, str]) -> None:
    def cq(topic: str, qid: int, index: int, count: int, group: str | None = None) -> Any:
        return lambda: RemotingCommand.request(R.QUERY_CONSUME_QUEUE, QueryConsumeQueueRequestHeader(
            topic=topic, queue_id=qid, index=index, count=count, consumer_group=group).to_ext())

    # a queue nothing has looked at yet (Java makes its ConsumeQueue on the first lookup)
    mine, theirs = _both(ours, java, cq(EMPTY, 1, 0, 5))
    assert (mine.code, mine.remark) == (theirs.code, theirs.remark) == (RC.SYSTEM_ERROR, f"1@{EMPTY} is not exist!")
    mine, theirs = _both(ours, java, cq(TOPIC, 0, 1, 5))
    assert (mine.code, mine.remark) == (theirs.code, theirs.remark) == (RC.SUCCESS, "not set any response code")
    assert _masked(mine.body) == _masked(theirs.body)
    a, b = (QueryConsumeQueueResponseBody.decode(x.body or b"") for x in (mine, theirs))
    assert (a.min_queue_index, a.max_queue_index) == (b.min_queue_index, b.max_queue_index) == (0, 3)
    assert [(u.physic_size, u.tags_code) for u in a.queue_data or ()] == \
        [(u.physic_size, u.tags_code) for u in b.queue_data or ()]
    assert len(a.queue_data or ()) == 2
    # past the end: SUCCESS with a remark and no body
    mine, theirs = _both(ours, java, cq(TOPIC, 0, 3, 5))
    assert (mine.code, mine.remark, mine.body) == (theirs.code, theirs.remark, theirs.body) == \
        (RC.SUCCESS, f"Index 3 of 0@{TOPIC} is not exist!", None)
    # a group that is not online, and one that is (its subscription; no filter data for tags)
    mine, theirs = _both(ours, java, cq(TOPIC, 0, 0, 1, "InspNobody"))
    assert _masked(mine.body) == _masked(theirs.body)
    assert QueryConsumeQueueResponseBody.decode(mine.body or b"").filter_data == f"InspNobody@{TOPIC} is not online!"
    beat = heartbeat_request("insp-consumer", consumer_group=CONSUMER, topics=(TOPIC,), sub_string="TagA")
    with _client_online(ours[1], beat), _client_online(java[1], beat):
        mine, theirs = _both(ours, java, cq(TOPIC, 0, 0, 1, CONSUMER))
    assert (mine.code, mine.remark) == (theirs.code, theirs.remark)
    assert _masked(mine.body) == _masked(theirs.body)
    body = QueryConsumeQueueResponseBody.decode(mine.body or b"")
    assert body.filter_data == "null" and body.subscription_data is not None
    # a SQL92 subscription: the ConsumerFilterData, as fastjson's pretty form
    sql = SubscriptionData(topic=TOPIC, sub_string="a > 5 AND b = 'x'", expression_type="SQL92",
                           sub_version=int(time.time() * 1000))
    beat = RemotingCommand.request(R.HEART_BEAT, None, HeartbeatData(client_id="insp-sql", consumer_data_set=(
        ConsumerData(group_name="InspSqlG", consume_type="CONSUME_PASSIVELY", message_model="CLUSTERING",
                     consume_from_where="CONSUME_FROM_FIRST_OFFSET", subscription_data_set=(sql,)),)).encode())
    with _client_online(ours[1], beat), _client_online(java[1], beat):
        mine, theirs = _both(ours, java, cq(TOPIC, 0, 0, 1, "InspSqlG"))
    assert (mine.code, mine.remark) == (theirs.code, theirs.remark)
    a, b = (QueryConsumeQueueResponseBody.decode(x.body or b"") for x in (mine, theirs))
    assert _masked(a.filter_data) == _masked(b.filter_data) and '"expressionType":"SQL92"' in (a.filter_data or "")
    # the bloom filter bits Java computes for "<group>#<topic>" (murmur3 through Guava), unmasked
    assert (a.filter_data or "").split('"bornTime"')[0] == (b.filter_data or "").split('"bornTime"')[0]


def test_all_producer_info(ours: tuple[str, str], java: tuple[str, str]) -> None:
    beat = heartbeat_request("insp-producer", producer_group=PRODUCER)
    with _client_online(ours[1], beat), _client_online(java[1], beat):
        mine, theirs = _both(ours, java, lambda: RemotingCommand.request(R.GET_ALL_PRODUCER_INFO))
    assert (mine.code, mine.remark) == (theirs.code, theirs.remark) == (RC.SUCCESS, None)
    a, b = (ProducerTableInfo.decode(x.body or b"").data for x in (mine, theirs))
    assert [_masked(p.encode()) for p in a[PRODUCER]] == [_masked(p.encode()) for p in b[PRODUCER]]
    ((p, q),) = zip(a[PRODUCER], b[PRODUCER], strict=True)
    assert (p.client_id, p.language, p.version) == (q.client_id, q.language, q.version)
    assert (p.remote_ip or "").startswith("/127.0.0.1:") and (q.remote_ip or "").startswith("/127.0.0.1:")


def test_correction_offset(ours: tuple[str, str], java: tuple[str, str]) -> None:
    def corr(**ext: str) -> Any:
        return lambda: RemotingCommand.request(R.QUERY_CORRECTION_OFFSET, {"topic": TOPIC, **ext})

    mine, theirs = _both(ours, java, corr(compareGroup="InspG1"))
    assert (mine.code, mine.remark, mine.body) == (theirs.code, theirs.remark, theirs.body)
    assert QueryCorrectionOffsetBody.decode(mine.body or b"").correction_offsets == {0: 1, 1: 0}
    # Java compares with the offsets kept under "<compareGroup>@<topic>": none here
    mine, theirs = _both(ours, java, corr(compareGroup="InspG3"))
    assert (mine.code, mine.body) == (theirs.code, theirs.body)
    # the filtered groups are left out (last: Java drops their offsets from its table as it filters)
    mine, theirs = _both(ours, java, corr(compareGroup="InspG1", filterGroups="InspG2"))
    assert (mine.code, mine.remark, mine.body) == (theirs.code, theirs.remark, theirs.body)
    assert QueryCorrectionOffsetBody.decode(mine.body or b"").correction_offsets == {0: 2, 1: 0}
    # what the filter did to the filtered group's committed offsets: kept here, gone on Java
    query = {"consumerGroup": "InspG2", "topic": TOPIC, "queueId": 0}
    mine, theirs = _both(ours, java, lambda: RemotingCommand.request(R.QUERY_CONSUMER_OFFSET, query))
    assert (mine.code, mine.ext_fields.get("offset")) == (RC.SUCCESS, "1")
    # (no committed offset: Java answers 0 for a queue that starts at 0 and is still in memory)
    assert (theirs.code, theirs.ext_fields.get("offset")) == (RC.SUCCESS, "0")


def test_clone_offset_stats_and_maintenance(ours: tuple[str, str], java: tuple[str, str]) -> None:
    clone = {"srcGroup": "InspG3", "destGroup": "InspClone", "topic": TOPIC, "offline": "true"}
    mine, theirs = _both(ours, java, lambda: RemotingCommand.request(R.CLONE_GROUP_OFFSET, clone))
    assert (mine.code, mine.remark) == (theirs.code, theirs.remark)
    query = {"consumerGroup": "InspClone", "topic": TOPIC, "queueId": 0}
    mine, theirs = _both(ours, java, lambda: RemotingCommand.request(R.QUERY_CONSUMER_OFFSET, query))
    assert (mine.code, mine.ext_fields.get("offset")) == (theirs.code, theirs.ext_fields.get("offset")) == (0, "3")
    for ext in ({"statsName": "TOPIC_PUT_NUMS", "statsKey": TOPIC}, {"statsName": "TOPIC_PUT_NUMS", "statsKey": "x"},
                {"statsName": "NO_SUCH_STATS", "statsKey": TOPIC}):
        mine, theirs = _both(ours, java, lambda e=ext: RemotingCommand.request(R.VIEW_BROKER_STATS_DATA, e))
        assert (mine.code, mine.remark) == (theirs.code, theirs.remark), ext
        assert _masked(mine.body) == _masked(theirs.body), ext
    mine, theirs = _both(ours, java, lambda: RemotingCommand.request(R.GET_BROKER_CONSUME_STATS,
                                                                     {"isOrder": "false"}))
    assert (mine.code, mine.remark) == (theirs.code, theirs.remark) == (RC.SUCCESS, None)
    a, b = (_consume_stats(x.body or b"", "InspG1") for x in (mine, theirs))
    assert a == b and a
    for code in (R.CLEAN_UNUSED_TOPIC, R.CLEAN_EXPIRED_CONSUMEQUEUE):
        mine, theirs = _both(ours, java, lambda c=code: RemotingCommand.request(c))
        assert (mine.code, mine.remark) == (theirs.code, theirs.remark) == (RC.SUCCESS, None)


def _consume_stats(body: bytes, group: str) -> list[list[tuple[object, ...]]]:
    """One group's stats in a GET_BROKER_CONSUME_STATS answer (the list holds every group of the
    broker, Java's system groups too): per topic, its queues' offsets, sorted."""
    from wire import fastjson
    from wire.bodies import ConsumeStats

    doc = fastjson.loads(body, what="ConsumeStatsList")
    out = []
    for entry in doc["consumeStatsList"]:
        for stats in entry.get(group, ()):
            table = ConsumeStats.decode(fastjson.dumps(stats).encode()).offset_table
            out.append(sorted((mq.topic, mq.broker_name, mq.queue_id, o.broker_offset, o.consumer_offset,
                               o.last_timestamp > 0) for mq, o in table.items()))
    return out


# ---------------------------------------------------------------------------- Java's mqadmin


def _mqadmin(servers: JavaServers, *args: str) -> str:
    r = servers.mqadmin("4.9.8", *args)
    assert "Exception" not in r.stdout and "command failed" not in r.stderr, r.stdout + r.stderr
    return r.stdout


def test_mqadmin_reads_both(ours: tuple[str, str], java: tuple[str, str], java_servers_module: JavaServers) -> None:
    def both(*args: str) -> tuple[str, str]:
        """mqadmin ``args`` against ours and against Java, the two JVMs at once (each starts in
        about three seconds)."""
        with ThreadPoolExecutor(2) as pool:
            mine, theirs = pool.map(
                lambda where: _mqadmin(java_servers_module, *[a.replace("@NS", where[0]).replace("@BROKER", where[1])
                                                            for a in args]), (ours, java))
        return mine, theirs

    mine, theirs = both("queryCq", "-n", "@NS", "-b", "@BROKER", "-t", TOPIC, "-q", "0", "-i", "0", "-c", "5")
    assert _masked(mine) == _masked(theirs) and "idx: 2" in mine and "tagsCode=" in mine
    mine, theirs = both("queryCq", "-n", "@NS", "-b", "@BROKER", "-t", TOPIC, "-q", "0", "-i", "0", "-g", "InspNobody")
    assert _masked(mine) == _masked(theirs) and "is not online!" in mine
    beat = heartbeat_request("insp-producer", producer_group=PRODUCER)
    with _client_online(ours[1], beat), _client_online(java[1], beat):
        mine, theirs = both("producer", "-n", "@NS", "-b", "@BROKER")
    ours_lines = [line for line in mine.splitlines() if f"({PRODUCER})" in line]
    java_lines = [line for line in theirs.splitlines() if f"({PRODUCER})" in line]
    assert ours_lines and [_masked(x) for x in ours_lines] == [_masked(x) for x in java_lines]
    mine, theirs = both("brokerConsumeStats", "-n", "@NS", "-b", "@BROKER")
    rows = [[line.split() for line in out.splitlines() if TOPIC in line and "InspG1" in line] for out in (mine, theirs)]
    assert rows[0] and [r[:4] + r[4:7] for r in rows[0]] == [r[:4] + r[4:7] for r in rows[1]]
    # mqadmin reads the source group's consume stats first, through the route of its retry topic,
    # which the broker makes when the group's consumer first sends a heartbeat
    beat = heartbeat_request("insp-g3", consumer_group="InspG3", topics=(TOPIC,))
    with _client_online(ours[1], beat), _client_online(java[1], beat):
        mine, theirs = both("cloneGroupOffset", "-n", "@NS", "-s", "InspG3", "-d", "InspClone2", "-t", TOPIC,
                            "-o", "true")
    assert mine == theirs and "clone group offset success" in mine
    mine, theirs = both("cleanUnusedTopic", "-n", "@NS", "-b", "@BROKER")
    assert mine == theirs == "success"
    # statsAll: VIEW_BROKER_STATS_DATA for the topic's puts and each group's gets (4.9.8's mqadmin
    # has no command of its own for that request)
    mine, theirs = both("statsAll", "-n", "@NS", "-t", TOPIC)
    # (InspG2 only where test_correction_offset has not run: there Java's filter dropped its offsets)
    rows = [sorted(line.split()[:2] for line in out.splitlines() if "InspG2" not in line) for out in (mine, theirs)]
    assert rows[0] == rows[1] and ["InspT", "InspG1"] in rows[0]


# ---------------------------------------------------------------------------- mqctl


def _mqctl_json(*args: str) -> Any:
    r = run_mqctl("-o", "json", *args, timeout=120)
    assert r.returncode == 0, f"mqctl {' '.join(args)}: {r.stderr}"
    return json.loads(r.stdout)


def test_mqctl_reads_both(ours: tuple[str, str], java: tuple[str, str]) -> None:
    got = []
    for ns, broker in (ours, java):
        cq = _mqctl_json("-n", ns, "broker", "query-cq", "-b", broker, "-t", TOPIC, "-q", "0", "-i", "0")
        # the same by mqadmin's name and options
        assert _mqctl_json("-n", ns, "queryCq", "-b", broker, "-t", TOPIC, "-q", "0", "-i", "0") == cq
        span = _mqctl_json("-n", ns, "consumer", "time-span", "-g", "InspG1", "-t", TOPIC)
        beat = heartbeat_request("insp-producer", producer_group=PRODUCER)
        with _client_online(broker, beat):
            producers = _mqctl_json("-n", ns, "producer", "list", "-b", broker)
        got.append((
            (cq["min"], cq["max"], [(u["index"], u["physic_size"], u["tags_code"]) for u in cq["units"]]),
            [(r["queue_id"], r["min"] > 0, r["max"] >= r["consumed"] >= r["min"]) for r in span["rows"]],
            [(r["group"], r["client_id"], r["language"]) for r in producers["rows"] if r["group"] == PRODUCER],
        ))
    assert got[0] == got[1]
    assert got[0][0][0:2] == (0, 3) and len(got[0][0][2]) == 3
    assert got[0][2] == [(PRODUCER, "insp-producer", "JAVA")]
