# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Messages go through the reference servers between clients nobody here wrote.

Each direction (C++→JS, JS→C++, C++→C++, JS→JS) sends text bodies of 200 bytes and of 5000 bytes
(which both clients zlib-compress, setting sysFlag bit 0) with a tag and a key, and checks that
the consumer gets every body back byte for byte (SHA-256 of what arrives against what was sent,
decompressed to the original size), with its tag and key. QUERY_MESSAGE by key then finds the
stored record, compressed exactly as the client sent it. A C++ producer writes to a topic that
does not exist yet: the route for TBW102 and the broker's auto-creation have to work for that.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.peers.bodies import body_sha256, make_body
from tests.peers.harness import PeerCluster, require
from wire.message import MessageSysFlag, decode_batch

pytestmark = [pytest.mark.peers, pytest.mark.slow]

SIZES = (200, 5000)
COUNT = 10
COMPRESS_OVER = 4096  # both clients compress bodies over 4 KiB (compressMsgBodyOverHowmuch)


def size_of(i: int) -> int:
    return SIZES[i % len(SIZES)]


@pytest.mark.parametrize(("producer", "consumer"), [("cpp", "js"), ("js", "cpp"), ("cpp", "cpp"), ("js", "js")],
                         ids=["cpp-to-js", "js-to-cpp", "cpp-to-cpp", "js-to-js"])
def test_round_trip(peer_cluster: Callable[..., PeerCluster], producer: str, consumer: str) -> None:
    require(producer, consumer)
    cluster = peer_cluster()
    topic, run, group = f"Trip_{producer}_{consumer}", f"trip-{producer}-{consumer}", f"TripGroup_{consumer}"
    if producer == "js":
        cluster.create_topic(topic, queues=4)  # ali-ons cannot auto-create a topic
    else:
        assert cluster.route(topic) is None  # the C++ send has to go through TBW102

    sent = cluster.peer(producer, "produce", topic=topic, count=COUNT, size=",".join(map(str, SIZES)),
                        run_id=run, tag="TagA", keys=run + "-{i}").finish(60)
    assert [r["status"] for r in sent.sent] == ["SEND_OK"] * COUNT, sent.describe()
    assert [r["sha256"] for r in sent.sent] == [body_sha256(run, i, size_of(i)) for i in range(COUNT)]

    route = cluster.route(topic)
    assert route is not None and [q.write_queue_nums for q in route.queue_datas] == [4]

    got = cluster.peer(consumer, "consume", topic=topic, group=group, expect=COUNT, timeout=60).finish(90)
    by_mark = {m["mark"]: m for m in got.messages}
    assert sorted(by_mark) == sorted(f"{run}:{i}" for i in range(COUNT)), got.describe()
    for i in range(COUNT):
        m = by_mark[f"{run}:{i}"]
        assert (m["topic"], m["tags"], m["keys"]) == (topic, "TagA", f"{run}-{i}")
        assert (m["size"], m["sha256"]) == (size_of(i), body_sha256(run, i, size_of(i)))
        assert m["reconsumeTimes"] == 0

    for i in (0, 1):  # one plain body, one compressed
        records = cluster.query_by_key(topic, f"{run}-{i}")
        assert len(records) == 1, records
        record = records[0]
        assert record.properties["KEYS"] == f"{run}-{i}" and record.properties["TAGS"] == "TagA"
        compressed = bool(record.sys_flag & MessageSysFlag.COMPRESSED_FLAG)
        assert compressed == (size_of(i) > COMPRESS_OVER)
        assert record.decompressed_body() == make_body(run, i, size_of(i)).encode()
        if compressed:
            assert len(record.body) < size_of(i)


def test_tag_expressions_and_untagged_messages(peer_cluster: Callable[..., PeerCluster]) -> None:
    """The broker filters by tag hash for a subscription of tags; ali-ons marks an untagged message
    with the literal tag "null", which the broker stores and serves like any other tag."""
    require("cpp", "js")
    cluster = peer_cluster()
    topic = "TagTopic"
    cluster.create_topic(topic, queues=4)
    cluster.cpp("produce", topic=topic, count=6, size=150, run_id="tagged", tag="T{i}").finish(60)
    cluster.js("produce", topic=topic, count=3, size=150, run_id="untagged").finish(60)

    picky = cluster.cpp("consume", topic=topic, group="PickyGroup", expression="T1||T4", expect=2,
                        timeout=40, linger=2)
    everything = cluster.js("consume", topic=topic, group="AllGroup", expect=9, timeout=40)
    picky.finish(60)
    everything.finish(60)

    assert sorted((m["mark"], m["tags"]) for m in picky.messages) == [("tagged:1", "T1"), ("tagged:4", "T4")]
    tags: dict[str, Any] = {m["mark"]: m["tags"] for m in everything.messages}
    assert tags == {**{f"tagged:{i}": f"T{i}" for i in range(6)}, **{f"untagged:{i}": "null" for i in range(3)}}


def test_cpp_batch_arrives_as_one_message_as_on_java(peer_cluster: Callable[..., PeerCluster]) -> None:
    """The C++ client's ``send_batch`` is not a batch to a 4.9.8 broker.

    It sends SEND_MESSAGE (10), not SEND_BATCH_MESSAGE, with the batch-encoded body and the header
    field ``batch`` = "1". Java reads that field with ``Boolean.parseBoolean`` ("1" is false) and
    the broker takes the batch path only when it is true (``SendMessageProcessor``), so a Java
    broker stores the encoded batch as the body of one message. The reference broker does the
    same: each batch reaches consumers as one message whose body holds the encoded entries.
    """
    require("cpp", "js")
    cluster = peer_cluster()
    topic, run = "BatchTopic", "batch"
    cluster.create_topic(topic, queues=4)
    sent = cluster.cpp("produce", topic=topic, count=12, size=300, run_id=run, batch=4,
                       keys=run + "-{i}").finish(60)
    assert [r["status"] for r in sent.sent] == ["SEND_OK"] * 12
    got = cluster.js("consume", topic=topic, group="BatchGroup", expect=3, timeout=40, linger=2).finish(60)
    assert len(got.messages) == 3, got.describe()
    entries = [decode_batch(cluster.view(m["msgId"]).body) for m in got.messages]
    assert sorted([e.body for e in batch] for batch in entries) == [
        [make_body(run, i, 300).encode() for i in range(first, first + 4)] for first in (0, 4, 8)]
    for batch in entries:
        for entry in batch:
            assert entry.properties["KEYS"] == f"{run}-{int(entry.body.split(b':')[1])}"
    assert cluster.query_by_key(topic, f"{run}-5") == []  # the entries' keys are not indexed


@pytest.mark.parametrize("kind", ["cpp", "js"])
def test_delay_level(peer_cluster: Callable[..., PeerCluster], kind: str) -> None:
    """A message sent with a delay level reaches consumers only after that level's delay (here
    level 3 = 2 s), under its own topic."""
    require(kind, "cpp")
    cluster = peer_cluster(messageDelayLevel="1s 1s 2s 5s")
    topic, run = f"Delay_{kind}", f"delay-{kind}"
    cluster.create_topic(topic, queues=4)
    consumer = cluster.cpp("consume", topic=topic, group=f"DelayGroup_{kind}", expect=3, timeout=40).started()
    sent = cluster.peer(kind, "produce", topic=topic, count=3, size=100, run_id=run, delay_level=3).finish(60)
    consumer.finish(60)
    sent_at = {f"{run}:{r['i']}": r["t"] for r in sent.sent}
    assert sorted(m["mark"] for m in consumer.messages) == sorted(sent_at)
    for m in consumer.messages:
        assert m["topic"] == topic
        assert m["t"] - sent_at[m["mark"]] >= 1.5, (m, sent_at)


@pytest.mark.parametrize("kind", ["cpp", "js"])
def test_new_group_starts_at_zero_while_the_queue_start_is_in_memory(
        peer_cluster: Callable[..., PeerCluster], kind: str) -> None:
    """Both consumers start here from the last offset (the C++ binding always, ali-ons with
    ``--from last``), and still read messages sent before they existed: for a group without an
    offset, the broker answers QUERY_CONSUMER_OFFSET with 0 while the queue's first message is
    still in memory (``ConsumerManageProcessor.queryConsumerOffset``, as Java 4.9.8 does), and
    both clients take an answered offset as where to start."""
    require(kind, "cpp")
    cluster = peer_cluster()
    topic, run = f"Late_{kind}", f"late-{kind}"
    cluster.create_topic(topic, queues=4)
    cluster.cpp("produce", topic=topic, count=8, size=100, run_id=run).finish(60)
    got = cluster.peer(kind, "consume", topic=topic, group=f"LateGroup_{kind}", expect=8, timeout=40,
                       **({"from": "last"} if kind == "js" else {})).finish(60)
    assert sorted(m["mark"] for m in got.messages) == sorted(f"{run}:{i}" for i in range(8))
    deadline = time.monotonic() + 10  # the last commit is a oneway UPDATE_CONSUMER_OFFSET at shutdown
    while [cluster.committed_offset(topic, f"LateGroup_{kind}", q) for q in range(4)] != [2] * 4:
        assert time.monotonic() < deadline, [cluster.committed_offset(topic, f"LateGroup_{kind}", q) for q in range(4)]
        time.sleep(0.2)
