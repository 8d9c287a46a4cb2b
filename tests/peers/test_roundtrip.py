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

from collections.abc import Callable
from typing import Any

import pytest

from tests.peers.bodies import body_sha256, make_body
from tests.peers.harness import PeerCluster, require
from wire.message import MessageSysFlag

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
