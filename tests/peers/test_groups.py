# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Consumer groups with real clients: two members split the queues; a failed message comes back.

Queue split: when a second consumer joins a group the broker sends NOTIFY_CONSUMER_IDS_CHANGED
to every member (``ConsumerManager.registerConsumer`` → ``DefaultConsumerIdsChangeListener``).
The C++ client rebalances on that notice at once (its own timer runs every 10 s; the notice is
logged as ``notifyConsumerIdsChanged:<group>``); ali-ons ignores the notice and rebalances on its
timer, set to 1 s here. After the split the two members read disjoint queues and together get
every message exactly once. When one member dies, the other takes all queues back.

Retry: a consumer that answers RECONSUME_LATER makes its client send the message back
(CONSUMER_SEND_MSG_BACK); the broker stores it in the delay queue and, once the delay level has
passed, in ``%RETRY%<group>``, which both clients subscribe to by themselves. The message then
arrives again under its own topic with reconsumeTimes 1. ali-ons has it back one delay level
(1 s here) later; the C++ client asked for the retry topic's route before the broker created it
(TOPIC_NOT_EXIST, as against Java in capture 05-cpp-consume) and only reads it after its next
route refresh and 10 s rebalance.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.peers.bodies import body_sha256
from tests.peers.harness import Peer, PeerCluster, require

pytestmark = [pytest.mark.peers, pytest.mark.slow]

QUEUES = 8
COUNT = 40
#: 18 levels of one second: retries come back after 1 s whatever level the client asks for.
FAST_DELAYS = " ".join(["1s"] * 18)


def start_member(cluster: PeerCluster, kind: str, topic: str, group: str) -> Peer:
    # No --expect: a member does not know its share; the test stops it once all messages are in.
    return cluster.peer(kind, "consume", topic=topic, group=group, timeout=120,
                        **({"rebalance_ms": 1000} if kind == "js" else {})).started()


def settled(condition: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def notices(peer: Peer, group: str) -> int:
    return peer.cpp_log().count(f"notifyConsumerIdsChanged:{group}") if peer.kind == "cpp" else 0


@pytest.mark.parametrize(("first", "second"), [("cpp", "cpp"), ("js", "js"), ("cpp", "js")],
                         ids=["cpp+cpp", "js+js", "cpp+js"])
def test_two_members_split_the_queues(peer_cluster: Callable[..., PeerCluster], first: str, second: str) -> None:
    require(first, second, "cpp")
    cluster = peer_cluster()
    topic, group, run = f"Split_{first}_{second}", f"SplitGroup_{first}_{second}", f"split-{first}-{second}"
    cluster.create_topic(topic, queues=QUEUES)

    a = start_member(cluster, first, topic, group)
    settled(lambda: a.allocation(topic) == set(range(QUEUES)), "the first member to take every queue")
    before = notices(a, group)
    b = start_member(cluster, second, topic, group)
    if first == "cpp":
        # The broker tells the first member that the group changed; its rebalance follows at once.
        settled(lambda: notices(a, group) > before, f"NOTIFY_CONSUMER_IDS_CHANGED to reach {a.name}")

    def split() -> bool:
        mine, theirs = a.allocation(topic), b.allocation(topic)
        return bool(mine and theirs and not mine & theirs and mine | theirs == set(range(QUEUES)))

    settled(split, "the members to split the queues")
    time.sleep(0.5)  # a dropped queue's last pull may still be answered

    sent = cluster.cpp("produce", topic=topic, count=COUNT, size=120, run_id=run).finish(60)
    assert len(sent.sent) == COUNT

    def seen() -> set[str]:
        return {m["mark"] for m in a.messages + b.messages if m["topic"] == topic}

    deadline = time.monotonic() + 40
    while len(seen()) < COUNT and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)  # duplicates, if any, would show up now

    mine = [m for m in a.messages if m["topic"] == topic]
    theirs = [m for m in b.messages if m["topic"] == topic]
    assert mine and theirs, f"one member got nothing: {len(mine)} and {len(theirs)}"
    queues_a, queues_b = {m["queue"] for m in mine}, {m["queue"] for m in theirs}
    assert not queues_a & queues_b, f"both members read queues {sorted(queues_a & queues_b)}"
    marks = sorted(m["mark"] for m in mine + theirs)
    assert marks == sorted(f"{run}:{i}" for i in range(COUNT))  # every message once
    for m in mine + theirs:
        assert m["sha256"] == body_sha256(run, int(m["mark"].split(":")[1]), 120)

    # The second member dies (its connection closes without UNREGISTER_CLIENT): the broker drops
    # it from the group and tells the first, which takes all queues back.
    before = notices(a, group)
    b.kill()
    if first == "cpp":
        settled(lambda: notices(a, group) > before, f"{a.name} to be told that {b.name} left")
    settled(lambda: a.allocation(topic) == set(range(QUEUES)), "the first member to take every queue back")
    later = cluster.cpp("produce", topic=topic, count=16, size=120, run_id=run + "-later").finish(60)
    assert len(later.sent) == 16
    deadline = time.monotonic() + 30
    while {f"{run}-later:{i}" for i in range(16)} - seen() and time.monotonic() < deadline:
        time.sleep(0.2)
    a.kill()
    assert {f"{run}-later:{i}" for i in range(16)} <= {m["mark"] for m in a.messages}
    assert {m["queue"] for m in a.messages if m["mark"].startswith(f"{run}-later:")} == set(range(QUEUES))


@pytest.mark.parametrize("kind", ["cpp", "js"])
def test_failed_message_comes_back_through_the_retry_topic(peer_cluster: Callable[..., PeerCluster],
                                                           kind: str) -> None:
    require(kind, "cpp")
    cluster = peer_cluster(messageDelayLevel=FAST_DELAYS)
    topic, group, run = f"Retry_{kind}", f"RetryGroup_{kind}", f"retry-{kind}"
    cluster.create_topic(topic, queues=4)
    cluster.cpp("produce", topic=topic, count=5, size=300, run_id=run).finish(60)

    got = cluster.peer(kind, "consume", topic=topic, group=group, expect=5, fail_first=2, timeout=60).finish(90)

    failed = [m for m in got.messages if m["result"] == "RECONSUME_LATER"]
    ok = [m for m in got.messages if m["result"] == "CONSUME_SUCCESS"]
    assert len(failed) == 2 and all(m["reconsumeTimes"] == 0 for m in failed)
    assert sorted(m["mark"] for m in ok) == sorted(f"{run}:{i}" for i in range(5))
    for m in failed:
        again = [o for o in ok if o["mark"] == m["mark"]]
        assert len(again) == 1, got.describe()
        assert again[0]["reconsumeTimes"] >= 1
        assert again[0]["topic"] == topic  # the client restores the original topic
        assert again[0]["sha256"] == m["sha256"] == body_sha256(run, int(m["mark"].split(":")[1]), 300)
    if kind == "js":
        assert all(o["reconsumeTimes"] == 0 for o in ok if o["mark"] not in {m["mark"] for m in failed})
    # The C++ binding hands each pulled batch to its callback in a loop that stops at the first
    # RECONSUME_LATER and fails the whole batch, so messages pulled after a failed one on the same
    # queue go back unseen and arrive only through the retry topic (reconsumeTimes 1) as well.
    routed = cluster.route(f"%RETRY%{group}")
    assert routed is not None and [q.read_queue_nums for q in routed.queue_datas] == [1]


def test_orderly_consumer_gets_each_queue_in_order(peer_cluster: Callable[..., PeerCluster]) -> None:
    """The C++ orderly consumer locks its queues on the broker (LOCK_BATCH_MQ) before it consumes
    and then sees each queue's messages in the order they were sent (send_orderly pins a queue)."""
    require("cpp")
    cluster = peer_cluster()
    topic, group = "OrderTopic", "OrderGroup"
    cluster.create_topic(topic, queues=4)
    for queue in (1, 2):
        sent = cluster.cpp("produce", topic=topic, count=20, size=100, run_id=f"q{queue}", queue=queue).finish(60)
        assert [r["status"] for r in sent.sent] == ["SEND_OK"] * 20
    got = cluster.cpp("consume", topic=topic, group=group, expect=40, timeout=60, orderly=True).finish(90)
    for queue in (1, 2):
        seen = [m for m in got.messages if m["mark"].startswith(f"q{queue}:")]
        assert {m["queue"] for m in seen} == {queue}
        assert [m["mark"] for m in seen] == [f"q{queue}:{i}" for i in range(20)]
    assert "lockBatchMQ success" in got.cpp_log()
