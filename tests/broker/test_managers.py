# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The broker's managers without sockets: topic table, offsets, groups, clients, locks, long
polling, config files, and the HashMap property order checked against the real captures."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reference_broker.broker.clients import (
    ClientChannelInfo,
    ConsumerManager,
    ProducerManager,
    RebalanceLockManager,
)
from reference_broker.broker.configfile import pretty_json
from reference_broker.broker.longpoll import PullRequestHoldService
from reference_broker.broker.offsets import ConsumerOffsetManager
from reference_broker.broker.processors.pull import tag_codes
from reference_broker.broker.props import java_properties_text
from reference_broker.broker.subscriptions import SubscriptionGroupManager
from reference_broker.broker.topics import TopicConfigManager, topic_config_to_string
from tests.broker.helpers import broker_config, client, run, running_broker, send_request
from tests.conftest import shared_path
from tests.pcaputil import streams
from wire import FrameBuffer, RemotingCommand, ResponseCode, decode_frame
from wire.bodies import KVTable, MessageQueue, RegisterBrokerBody, SubscriptionData, TopicConfig
from wire.message import decode_properties, iter_stored_messages, java_string_hash


def _topics(tmp_path: Path, **overrides: str) -> TopicConfigManager:
    return TopicConfigManager(broker_config(tmp_path, **overrides), tmp_path / "config" / "topics.json")


# ------------------------------------------------------------------ topics


def test_system_topics_match_the_java_broker_registration(tmp_path: Path) -> None:
    # The first REGISTER_BROKER of 01-broker-registration lists exactly the constructor's topics
    # (defaultTopicQueueNums=8 in that set-up).
    pcap = shared_path("captures", "java-4.9.8", "01-broker-registration.pcap")
    java = None
    for d in streams(pcap):
        if d.dport != 9876:
            continue
        fb = FrameBuffer()
        fb.feed(bytes(d.data))
        while (f := fb.next_frame()) is not None:
            cmd = decode_frame(f)
            if cmd.code == 103 and cmd.ext_fields.get("brokerId") == "0" and java is None:
                java = RegisterBrokerBody.decode(cmd.body).topic_config_serialize_wrapper.topic_config_table
    assert java is not None
    ours = _topics(tmp_path, defaultTopicQueueNums="8").table
    assert {k: v.to_json() for k, v in ours.items()} == {k: v.to_json() for k, v in java.items()}


def test_tbw102_only_with_auto_create_and_trace_topic_when_enabled(tmp_path: Path) -> None:
    assert "TBW102" not in _topics(tmp_path, autoCreateTopicEnable="false").table
    t = _topics(tmp_path, traceTopicEnable="true", clusterTopicEnable="false")
    assert t.table["RMQ_SYS_TRACE_TOPIC"].read_queue_nums == 1
    assert t.table["DefaultCluster"].perm == 1  # inherit only


def test_create_in_send_inherits_from_the_default_topic(tmp_path: Path) -> None:
    t = _topics(tmp_path, defaultTopicQueueNums="8")
    v0 = t.data_version.counter
    tc, created = t.create_in_send("NewTopic", "TBW102", "1.2.3.4:5", 4, 0)
    assert created and tc is not None
    assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (4, 4, 6)  # min(4, 8); perm 7 minus inherit
    assert t.data_version.counter == v0 + 1
    assert t.create_in_send("NewTopic", "TBW102", "x", 16, 0) == (tc, False)
    tc2, _ = t.create_in_send("Wide", "TBW102", "x", 64, 0)
    assert tc2 is not None and tc2.write_queue_nums == 8  # capped by TBW102's write queues
    # a default topic without the inherit bit, or a missing one, creates nothing
    assert t.create_in_send("X1", "SELF_TEST_TOPIC", "x", 4, 0) == (None, False)
    assert t.create_in_send("X2", "NoSuchDefault", "x", 4, 0) == (None, False)
    saved = TopicConfigManager(broker_config(tmp_path), t.path)
    assert saved.load() and "NewTopic" in saved.table and saved.data_version.counter == t.data_version.counter


def test_tbw102_left_over_without_auto_create_loses_inherit(tmp_path: Path) -> None:
    t = _topics(tmp_path, autoCreateTopicEnable="false")
    t.table["TBW102"] = TopicConfig(topic_name="TBW102", perm=7)
    assert t.create_in_send("Y", "TBW102", "x", 4, 0) == (None, False)
    assert t.table["TBW102"].perm == 6


def test_topic_config_to_string_is_javas() -> None:
    tc = TopicConfig(topic_name="T", read_queue_nums=4, write_queue_nums=2, perm=7)
    assert topic_config_to_string(tc) == ("TopicConfig [topicName=T, readQueueNums=4, writeQueueNums=2, "
                                          "perm=RWX, topicFilterType=SINGLE_TAG, topicSysFlag=0, order=false]")


def test_order_topics_follow_the_name_server(tmp_path: Path) -> None:
    t = _topics(tmp_path)
    t.update(TopicConfig(topic_name="O1"))
    t.update_order_topic_config(KVTable(table={"O1": "broker-a:4"}))
    assert t.is_order_topic("O1")
    t.update_order_topic_config(KVTable(table={}))
    assert not t.is_order_topic("O1")
    t.update_order_topic_config(None)  # no table from the name server: nothing changes
    assert not t.is_order_topic("O1")


def test_config_files_fall_back_to_bak_and_keep_one(tmp_path: Path) -> None:
    t = _topics(tmp_path)
    t.update(TopicConfig(topic_name="First"))
    t.update(TopicConfig(topic_name="Second"))
    bak = t.path.with_name("topics.json.bak")
    assert "First" in bak.read_text() and "Second" not in bak.read_text()
    assert "Second" in t.path.read_text()
    t.path.write_text("{not json")  # a torn file: Java reads the backup
    again = _topics(tmp_path)
    assert again.load() and "First" in again.table and "Second" not in again.table
    bak.write_text("also broken")
    assert not _topics(tmp_path).load()  # both unreadable: the broker refuses to start
    t.path.unlink()
    bak.unlink()
    assert _topics(tmp_path).load()  # nothing yet: defaults


def test_a_config_file_that_does_not_decode_without_a_backup_is_kept_and_refused(tmp_path: Path) -> None:
    """Java starts empty and writes over the file at its next persist; we refuse, naming it."""
    t = _topics(tmp_path)
    t.path.parent.mkdir(parents=True, exist_ok=True)
    damaged = '{"topicConfigTable":{"A":{"topicName":"A","readQueueNums":1e99999999999999999999}}}'
    t.path.write_text(damaged)
    again = _topics(tmp_path)
    assert not again.load()
    assert again.load_error is not None
    assert str(t.path) in again.load_error and "offset 58" in again.load_error
    assert "no topics.json.bak to fall back on" in again.load_error
    assert t.path.read_text() == damaged
    assert not t.path.with_name("topics.json.bak").exists()


def test_pretty_json_layout_is_fastjsons() -> None:
    # string keys go on their own lines; integer-keyed maps stay on one line (MapSerializer)
    text = pretty_json('{"offsetTable":{"T@g":{0:12,1:7}},"x":[],"y":{}}')
    assert text == '{\n\t"offsetTable":{\n\t\t"T@g":{0:12,1:7\n\t\t}\n\t},\n\t"x":[],\n\t"y":{}\n}'


# ------------------------------------------------------------------ offsets and groups


def test_consumer_offsets_file_form_and_queries(tmp_path: Path) -> None:
    m = ConsumerOffsetManager(tmp_path / "consumerOffset.json")
    assert m.query("g", "T", 0) == -1
    m.commit("g", "T", 0, 12)
    m.commit("g", "T", 1, 7)
    m.commit("h", "T", 0, 3)
    m.commit("g", "U", 2, 1)
    assert m.encode() == '{"offsetTable":{"T@g":{0:12,1:7},"T@h":{0:3},"U@g":{2:1}}}'
    assert m.topics_of_group("g") == {"T", "U"} and m.groups_of_topic("T") == {"g", "h"}
    m.persist()
    back = ConsumerOffsetManager(m.path)
    assert back.load() and back.table == m.table
    back.remove_group("g")
    assert back.groups_of_topic("T") == {"h"} and back.topics_of_group("g") == set()


def test_subscription_groups_defaults_and_auto_create(tmp_path: Path) -> None:
    m = SubscriptionGroupManager(tmp_path / "subscriptionGroup.json", auto_create=False)
    assert {"TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY", "CID_ONSAPI_PULL",
            "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER"} == set(m.table)
    assert m.table["CID_ONSAPI_PULL"].consume_broadcast_enable
    assert m.find("Nope") is None
    assert m.find("CID_RMQ_SYS_X") is not None  # system groups are always created
    m.auto_create = True
    v = m.data_version.counter
    cfg = m.find("NewGroup")
    assert cfg is not None and cfg.retry_max_times == 16 and cfg.retry_queue_nums == 1
    assert m.data_version.counter == v + 1 and "NewGroup" in m.path.read_text()
    assert m.delete("NewGroup") and not m.delete("NewGroup")


# ------------------------------------------------------------------ clients and locks


def test_consumer_manager_notifies_on_membership_changes_only() -> None:
    calls: list[tuple[str, list[object]]] = []
    m = ConsumerManager(notify=lambda g, chs: calls.append((g, chs)))
    sub = (SubscriptionData(topic="T", sub_string="*", sub_version=1),)
    a, b = object(), object()
    assert m.register("g", ClientChannelInfo(a, "c1", "JAVA", 409), None, None, None, sub)
    assert calls == [("g", [a])]
    assert not m.register("g", ClientChannelInfo(a, "c1", "JAVA", 409), None, None, None, sub)  # same: quiet
    newer = (SubscriptionData(topic="T", sub_string="tagA", sub_version=2),)
    assert not m.register("g", ClientChannelInfo(a, "c1", "JAVA", 409), None, None, None, newer)
    assert m.find_subscription("g", "T").sub_string == "tagA"  # replaced, but not a change for Java
    assert m.register("g", ClientChannelInfo(b, "c2", "CPP", 63), None, None, None, newer)
    assert calls[-1] == ("g", [a, b]) and m.get("g").client_ids() == ["c1", "c2"]
    assert m.channel_closed(a) == ["g"] and calls[-1] == ("g", [b])
    m.unregister("g", b)
    assert m.get("g") is None and calls[-1] == ("g", [])
    m.register("q", ClientChannelInfo(a, "c1", "JAVA", 409), None, None, None, sub, notify_enabled=False)
    assert calls[-1][0] == "g"  # the group turned notification off


def test_idle_clients_expire() -> None:
    m = ConsumerManager()
    p = ProducerManager()
    info = ClientChannelInfo("ch", "c1", "JAVA", 409, last_update=1000)
    m.register("g", info, None, None, None, ())
    info.last_update = 1000
    p.register("pg", ClientChannelInfo("ch", "c1", "JAVA", 409, last_update=1000))
    assert m.scan_not_active(now_ms=1000 + 120_000) == []  # exactly at the limit: kept
    assert m.scan_not_active(now_ms=1000 + 120_001) == ["ch"] and m.get("g") is None
    assert p.scan_not_active(now_ms=1000 + 120_001) == ["ch"] and "pg" not in p.groups


def test_rebalance_locks() -> None:
    m = RebalanceLockManager(lock_max_live_ms=60_000)
    q0 = MessageQueue(topic="T", broker_name="a", queue_id=0)
    q1 = MessageQueue(topic="T", broker_name="a", queue_id=1)
    assert m.try_lock_batch("g", [q0, q1], "c1", now_ms=0) == [q0, q1]
    assert m.try_lock_batch("g", [q0, q1], "c2", now_ms=10_000) == []
    assert m.try_lock_batch("g", [q0], "c1", now_ms=50_000) == [q0]  # renewed
    assert m.try_lock_batch("g", [q0, q1], "c2", now_ms=60_001 + 10_000) == [q1]  # q1 expired, q0 renewed at 50s
    m.unlock_batch("g", [q0], "c2")  # not the holder: no effect
    assert m.try_lock_batch("g", [q0], "c2", now_ms=70_000) == []
    m.unlock_batch("g", [q0], "c1")
    assert m.try_lock_batch("g", [q0], "c2", now_ms=70_000) == [q0]


# ------------------------------------------------------------------ long polling


def test_parked_pull_wakes_on_arrival_and_expires() -> None:
    async def main() -> None:
        h = PullRequestHoldService()
        tries: list[bool] = []
        ready = {"ok": False}

        def retry(final: bool) -> RemotingCommand | None:
            tries.append(final)
            return RemotingCommand(0, flag=1) if ready["ok"] or final else None

        waiting = asyncio.ensure_future(h.suspend("T", 0, 5, 10_000, retry))
        await asyncio.sleep(0)
        h.notify("T", 0, 3, 0)  # below the parked offset: nobody is woken
        h.notify("T", 1, 9, 0)  # another queue
        await asyncio.sleep(0.01)
        assert tries == [] and len(h) == 1
        h.notify("T", 0, 5, 0)  # arrived, but the retry finds nothing for this consumer yet
        await asyncio.sleep(0.01)
        assert tries == [False] and not waiting.done()
        ready["ok"] = True
        h.notify("T", 0, 6, 0)
        h.notify("T", 0, 7, 0)  # two records, one retry
        assert (await waiting).code == 0 and tries == [False, False] and len(h) == 0
        t0 = asyncio.get_running_loop().time()
        ready["ok"] = False
        timed = await h.suspend("T", 0, 5, 100, retry)
        assert timed is not None and tries[-1] is True
        assert 0.09 <= asyncio.get_running_loop().time() - t0 < 1.0
        gone = asyncio.ensure_future(h.suspend("T", 0, 5, 10_000, retry))
        await asyncio.sleep(0)
        gone.cancel()  # the connection closed
        await asyncio.sleep(0)
        assert len(h) == 0

    asyncio.run(main())


def test_tag_codes() -> None:
    assert tag_codes("*") is None and tag_codes("") is None and tag_codes(None) is None
    assert tag_codes("TagA || TagB ||  ") == {java_string_hash("TagA"), java_string_hash("TagB")}


def test_a_tag_expression_is_bounded(tmp_path: Path) -> None:
    """9 MB of 'a||a||…' in a pull's subscription was hashed tag by tag on the event loop, at every
    pull (and kept by the cache): beyond 64 KiB it is SUBSCRIPTION_PARSE_FAILED, Java's answer to
    a subscription FilterAPI cannot build."""
    from reference_broker.broker.processors.pull import MAX_TAG_EXPRESSION, SubscriptionTooLong

    fits = "||".join(["TagA"] * (MAX_TAG_EXPRESSION // 6))
    assert len(fits) <= MAX_TAG_EXPRESSION and tag_codes(fits) == {java_string_hash("TagA")}
    with pytest.raises(SubscriptionTooLong):
        tag_codes(fits + "||TagB" * 10)

    async def main() -> None:
        async with running_broker(tmp_path) as b:
            c = await client(b)
            assert (await c.request(send_request("T", b"m"))).code == ResponseCode.SUCCESS
            ext = {"consumerGroup": "G", "topic": "T", "queueId": "0", "queueOffset": "0", "maxMsgNums": "32",
                   "sysFlag": "4", "commitOffset": "0", "suspendTimeoutMillis": "0", "subVersion": "0",
                   "expressionType": "TAG"}
            r = await c.request(RemotingCommand.request(11, {**ext, "subscription": "a||" * 100_000}), timeout=30)
            assert (r.code, r.remark) == (ResponseCode.SUBSCRIPTION_PARSE_FAILED,
                                          "parse the consumer's subscription failed")
            r = await c.request(RemotingCommand.request(11, {**ext, "subscription": "*"}))
            assert r.code == ResponseCode.SUCCESS
            await c.aclose()

    run(main())


# ------------------------------------------------------------------ properties as Java stores them


def _frames(name: str) -> list[RemotingCommand]:
    out = []
    for d in streams(shared_path("captures", "java-4.9.8", name)):
        if 10912 in (d.sport, d.dport):
            continue
        for _, chunk in d.chunks:
            fb = FrameBuffer()
            fb.feed(bytes(chunk))
            while (f := fb.next_frame()) is not None:
                out.append(decode_frame(f))
    return out


@pytest.mark.parametrize("names", [
    ("07-sendMessage-tag-key.pcap", "07-queryMsgByKey.pcap"),
    ("05-cpp-produce.pcap", "05-cpp-consume.pcap"),
    ("06-alions-produce.pcap", "06-alions-consume.pcap"),
])
def test_stored_properties_follow_javas_hashmap(names: tuple[str, str]) -> None:
    # What the Java broker stored (the records its answers carry) equals the producer's
    # properties with CLUSTER put and WAIT removed, written in HashMap order.
    sent: dict[str, str] = {}
    checked = 0
    for name in names:
        for c in _frames(name):
            if not c.is_response and c.code in (10, 310):
                text = c.ext_fields.get("properties") or c.ext_fields.get("i") or ""
                props = decode_properties(text)
                sent[props.get("UNIQ_KEY") or c.body.decode("latin-1")] = text
            if c.is_response and c.code == 0 and c.body and c.body[4:8] == bytes.fromhex("DAA320A7"):
                for m in iter_stored_messages(c.body):
                    key = m.properties.get("UNIQ_KEY") or m.body.decode("latin-1")
                    if key not in sent:
                        continue
                    values = decode_properties(sent[key])
                    order = list(values)
                    if "CLUSTER" not in values:
                        order.append("CLUSTER")
                    values["CLUSTER"] = m.properties["CLUSTER"]
                    values.pop("WAIT", None)
                    assert java_properties_text(tuple(order), values) == m.properties_text
                    checked += 1
    assert checked >= 1
