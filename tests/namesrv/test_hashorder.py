# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The name server's tables iterate as the Java name server's (wire.java.JavaHashMap; its own
tests are in tests/wire/test_java.py)."""

from __future__ import annotations

from tests.namesrv.captured import exchanges
from wire.bodies import RegisterBrokerBody, TopicList
from wire.java import java_hash_order


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
