# Licensed under the Apache License, Version 2.0. See LICENSE.
"""JavaHashMap iterates as java.util.HashMap does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reference_broker.namesrv import JavaHashMap, java_hash_order
from reference_broker.namesrv.hashorder import java_hash
from tests.namesrv.captured import exchanges
from wire.bodies import RegisterBrokerBody, TopicList
from wire.message import java_hashmap_order, java_string_hash


@given(st.lists(st.text(max_size=12), max_size=80), st.sampled_from([1, 2, 16, 32, 128, 1024]))
def test_same_order_as_the_message_properties_model(keys, capacity) -> None:
    # wire.message simulates HashMap.putVal for message properties; both models must agree
    assert java_hash_order(keys, capacity) == java_hashmap_order(keys, capacity)


@given(st.lists(st.text(max_size=8), unique=True, max_size=60), st.data())
def test_removal_keeps_capacity_and_relative_order(keys, data) -> None:
    m: JavaHashMap[str, None] = JavaHashMap(items=((k, None) for k in keys))
    peak = m.capacity
    order = list(m)
    gone = data.draw(st.sets(st.sampled_from(keys))) if keys else set()
    for k in gone:
        del m[k]
    # a Java table never shrinks, and removing entries does not reorder the others
    assert m.capacity == peak
    assert list(m) == [k for k in order if k not in gone]


def test_update_keeps_position_and_reinsert_goes_last_in_its_bucket() -> None:
    # "Aa" and "BB" share String.hashCode 2112, so they share a bucket whatever the table size
    assert java_string_hash("Aa") == java_string_hash("BB")
    m: JavaHashMap[str, int] = JavaHashMap(items=[("Aa", 1), ("BB", 2)])
    assert list(m) == ["Aa", "BB"]
    m["Aa"] = 3
    assert list(m) == ["Aa", "BB"]
    del m["Aa"]
    m["Aa"] = 4
    assert list(m) == ["BB", "Aa"]


def test_long_keys_use_long_hash_code() -> None:
    assert java_hash(0) == 0 and java_hash(1) == 1
    assert java_hash(-1) == 0  # (int) (-1L ^ (-1L >>> 32)) == 0
    assert java_hash(1 << 32) == 1
    m: JavaHashMap[int, str] = JavaHashMap(items=[(3, "c"), (1, "b"), (0, "a"), (17, "r")])
    assert list(m) == [0, 1, 17, 3]  # 17 lands in bucket 1 of 16, after 1


def test_growth_thresholds() -> None:
    m: JavaHashMap[int, None] = JavaHashMap()
    for i in range(12):
        m[i] = None
    assert m.capacity == 16
    m[12] = None  # the 13th entry passes 0.75 * 16
    assert m.capacity == 32
    # nine keys in one bucket of a table below 64 buckets force a resize (treeifyBin)
    n: JavaHashMap[int, None] = JavaHashMap()
    for i in range(9):
        n[i * 64] = None
    assert n.capacity == 32


def test_topic_list_order_of_the_real_name_server() -> None:
    # 02-topicList: the Java name server answered GET_ALL_TOPIC_LIST_FROM_NAMESERVER with the
    # topics the master registered (01/02 captures), in HashSet order
    xs = exchanges("01-broker-registration", "02-clusterList", "02-topicList")
    registered: list[str] = []
    for x in xs:
        if x.request.code == 103 and x.request.ext_fields["brokerId"] == "0":
            body = RegisterBrokerBody.decode(x.request.body)
            registered.extend(body.topic_config_serialize_wrapper.topic_config_table)
    answer = next(x.response for x in xs if x.request.code == 206)
    java = TopicList.decode(answer.body).topic_list
    assert sorted(java) == sorted(set(registered))
    # topicQueueTable is a HashMap(1024); the TopicList set is filled from it
    assert tuple(java_hash_order(java_hash_order(registered, 1024), 16)) == java
