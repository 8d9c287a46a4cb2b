# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Argument handling and rendering of every command, with the library call replaced (C5).

Each test runs the real command line, checks the arguments the one library operation received
and checks what the command printed from fixed results, in table and JSON form.
"""

from __future__ import annotations

import json
import os

import pytest

from mqctl.local import LocalCluster, LocalProcess
from wire.admin.client import AdminClient
from wire.admin.cluster import BrokerRow, ClusterList, TimerProgress
from wire.admin.consumer import (
    ClientConnection,
    ConnectionInfo,
    ConsumerGroups,
    ConsumerProgress,
    GroupDeleteResult,
    GroupSummary,
    GroupWriteResult,
    QueueProgress,
    Subscription,
)
from wire.admin.ha import HAClient, HASlave, HAStatus
from wire.admin.message import ConsumeResult, MessageHits, MessageView, QueueRead, SendResult
from wire.admin.namesrv import NamesrvConfig
from wire.admin.topic import (
    Outcome,
    QueueStatus,
    TopicConfigView,
    TopicDeleteResult,
    TopicEntry,
    TopicListing,
    TopicPermResult,
    TopicStatus,
    TopicWriteResult,
)
from wire.bodies import BrokerData, QueueData, TopicRouteData
from wire.codes import SerializeType

ROW_4X = BrokerRow("DefaultCluster", "broker-a", 0, "10.0.0.1:10911", version="V4_9_8", in_tps=2.0,
                   send_queue_size="0", send_queue_wait_ms="0", out_tps=1.5, pull_queue_size="3",
                   pull_queue_wait_ms="7", page_cache_lock_ms="0", earliest_message_timestamp=1,
                   hours=12.345, commit_log_disk_ratio=0.23, in_total_yesterday=5, out_total_yesterday=6,
                   in_total_today=7, out_total_today=8)
ROW_5X = BrokerRow("C5", "broker-c", 2, "10.0.0.2:30911", version="V5_0_0", in_tps=0.0,
                   send_queue_size="0", send_queue_wait_ms="0", out_tps=0.0, pull_queue_size="0",
                   pull_queue_wait_ms="0", page_cache_lock_ms="0", hours=None, commit_log_disk_ratio=0.5,
                   activated=False, timer=TimerProgress(1, 0, 20000, 0.5, 0.25))


def _msg(**kw: object) -> MessageView:
    base = dict(topic="T", broker_name="broker-a", queue_id=3, queue_offset=0, commit_log_offset=34928,
                msg_id="C000020216C05FFD2B276E4D0ACC0000", offset_msg_id="7F00000100002A9F0000000000008870",
                tags="tagQ", keys=("qkey-7",), store_size=200, sys_flag=0, flag=0, reconsume_times=0,
                prepared_transaction_offset=0, born_timestamp=1795341742797, born_host="127.0.0.1:38074",
                store_timestamp=1795341742835, store_host="127.0.0.1:10911", body_crc=1,
                properties={"KEYS": "qkey-7", "TAGS": "tagQ"}, body=b"query me please",
                body_text="query me please")
    base.update(kw)
    return MessageView(**base)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- global options


def test_global_options_reach_the_client(invoke, patch_op):
    rec = patch_op("cluster", "cluster_list", ClusterList(()))
    r = invoke("-n", "10.0.0.1:9876;10.0.0.2:9876", "--timeout", "1.5", "--serialize", "rocketmq",
               "cluster", "list")
    assert r.exit_code == 0, r.output
    client = rec.clients[0]
    assert isinstance(client, AdminClient)
    assert client.namesrv_addrs == ["10.0.0.1:9876", "10.0.0.2:9876"]
    assert client.timeout == 1.5
    assert client.serialize_type is SerializeType.ROCKETMQ
    assert rec.kwargs == {"cluster": None}


def test_namesrv_from_environment(invoke, patch_op, monkeypatch):
    monkeypatch.setenv("NAMESRV_ADDR", "10.9.9.9:9876")
    monkeypatch.setenv("MQCTL_CONFIG", os.devnull)
    rec = patch_op("cluster", "cluster_list", ClusterList(()))
    assert invoke("cluster", "list").exit_code == 0
    assert rec.clients[0].namesrv_addrs == ["10.9.9.9:9876"]


def test_profile_file(invoke, patch_op, monkeypatch, tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("default: a\nprofiles:\n  a: {namesrv: '1.1.1.1:9876'}\n  b: {namesrv: '2.2.2.2:9876;3.3.3.3:9876', "
                   "timeout: 7, serialize: rocketmq}\n")
    monkeypatch.setenv("MQCTL_CONFIG", str(cfg))
    monkeypatch.delenv("NAMESRV_ADDR", raising=False)
    rec = patch_op("cluster", "cluster_list", ClusterList(()))
    assert invoke("cluster", "list").exit_code == 0
    assert invoke("--profile", "b", "cluster", "list").exit_code == 0
    assert rec.clients[0].namesrv_addrs == ["1.1.1.1:9876"]
    assert rec.clients[1].namesrv_addrs == ["2.2.2.2:9876", "3.3.3.3:9876"]
    assert rec.clients[1].timeout == 7.0 and rec.clients[1].serialize_type is SerializeType.ROCKETMQ


@pytest.mark.parametrize("args", [
    ("-o", "xml", "cluster", "list"),
    ("--serialize", "thrift", "cluster", "list"),
    ("--timeout", "0", "cluster", "list"),
    ("-n", "nohost", "cluster", "list"),
])
def test_bad_global_options_are_usage_errors(main, args):
    rc, out, err = main(*args)
    assert rc == 2
    assert out == ""
    assert err.strip()


# ---------------------------------------------------------------------- cluster


def test_cluster_list_table_4x(invoke, patch_op):
    patch_op("cluster", "cluster_list", ClusterList((ROW_4X,)))
    r = invoke("cluster", "list", "-c", "DefaultCluster")
    assert r.exit_code == 0, r.output
    header, row = r.stdout.splitlines()
    assert header.split() == ["#Cluster", "Name", "#Broker", "Name", "#BID", "#Addr", "#Version",
                              "#InTPS(LOAD)", "#OutTPS(LOAD)", "#PCWait(ms)", "#Hour", "#SPACE"]
    assert row.split() == ["DefaultCluster", "broker-a", "0", "10.0.0.1:10911", "V4_9_8", "2.00(0,0ms)",
                           "1.50(3,7ms)", "0", "12.35", "0.2300"]


def test_cluster_list_5x_columns_and_more(invoke, patch_op):
    rec = patch_op("cluster", "cluster_list", ClusterList((ROW_4X, ROW_5X)))
    r = invoke("cluster", "list")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert "#Timer(Progress)" in lines[0] and lines[0].rstrip().endswith("#ACTIVATED")
    # Java's %.1f rounds the tie 0.25 half-up
    assert lines[2].split() == ["C5", "broker-c", "2", "10.0.0.2:30911", "V5_0_0", "0.00(0,0ms)", "0.00(0,0ms)",
                                "1-0(2.0w,", "0.5,", "0.3)", "0", "-", "0.5000", "false"]
    assert lines[1].split()[-1] == "-"
    r = invoke("cluster", "list", "--more")
    assert r.stdout.splitlines()[1].split()[-4:] == ["5", "6", "7", "8"]
    assert rec.calls == [{"cluster": None}, {"cluster": None}]


def test_cluster_list_json_is_standard(invoke, patch_op):
    patch_op("cluster", "cluster_list", ClusterList((ROW_5X,)))
    r = invoke("-o", "json", "cluster", "list")
    doc = json.loads(r.stdout)
    assert doc["brokers"][0]["timer"] == {"read_behind": 1, "offset_behind": 0, "congest_num": 20000,
                                          "enqueue_tps": 0.5, "dequeue_tps": 0.25}
    assert doc["brokers"][0]["activated"] is False and doc["brokers"][0]["hours"] is None


def test_cluster_list_yaml(invoke, patch_op):
    import yaml

    patch_op("cluster", "cluster_list", ClusterList((ROW_4X,)))
    r = invoke("-o", "yaml", "cluster", "list")
    assert yaml.safe_load(r.stdout)["brokers"][0]["addr"] == "10.0.0.1:10911"


def test_cluster_list_warns_about_unreachable_broker(main, patch_op):
    """The partial-answer rule: the row stays with '-' figures, one warning line, exit 3."""
    patch_op("cluster", "cluster_list",
             ClusterList((ROW_4X, BrokerRow("C", "b", 0, "10.0.0.3:10911", error="cannot connect",
                                            unreachable=True))))
    rc, out, err = main("cluster", "list")
    assert rc == 3
    assert err.splitlines() == ["warning: b 10.0.0.3:10911: no runtime info: cannot connect",
                                "error: cluster list: 1 of 2 brokers failed (1 did not answer)"]
    assert out.splitlines()[2].split()[4:] == ["-", "-", "-", "-", "-", "-"]


def _local() -> LocalCluster:
    return LocalCluster("/tmp/x", "single", "DefaultCluster", "127.0.0.1:9876", (
        LocalProcess("namesrv", "namesrv", "127.0.0.1:9876", 11, "answering", "/tmp/x/logs/namesrv.log",
                     "/tmp/x/namesrv.properties", (9876,)),
        LocalProcess("broker-a", "master", "127.0.0.1:10911", 12, "answering", "/tmp/x/logs/broker-a.log",
                     "/tmp/x/broker-a.properties", (10911, 10912))), running=True)


def test_cluster_up_arguments(invoke, monkeypatch, tmp_path):
    import mqctl.local as local

    seen = {}

    def up(directory, **kw):
        seen.update(kw, directory=directory)
        return _local()

    monkeypatch.setattr(local, "cluster_up", up)
    r = invoke("cluster", "up", "--layout", "2m-noslave", "--dir", str(tmp_path), "--namesrv-port", "19876",
               "--broker-port", "20911", "--host", "127.0.0.2", "--cluster-name", "C9", "--wait", "5", "--force",
               "--broker-set", "aclEnable=true", "--broker-set", "rocketmqHome=/srv/rmq")
    assert r.exit_code == 0, r.output
    assert seen == {"directory": tmp_path.resolve(), "layout": "2m-noslave", "host": "127.0.0.2",
                    "namesrv_port": 19876, "broker_port": 20911, "cluster_name": "C9", "wait": 5.0,
                    "force": True, "broker_config": {"aclEnable": "true", "rocketmqHome": "/srv/rmq"}}
    assert "broker-a  master   127.0.0.1:10911  12" in r.stdout


def test_cluster_down_and_status(invoke, monkeypatch, tmp_path):
    import mqctl.local as local

    calls = []
    monkeypatch.setattr(local, "cluster_down", lambda d, **kw: calls.append((d, kw)) or _local())

    async def status(d, **kw):
        calls.append((d, kw))
        return _local()

    monkeypatch.setattr(local, "cluster_status", status)
    assert invoke("cluster", "down", "--dir", str(tmp_path), "--purge").exit_code == 0
    assert invoke("--timeout", "2", "cluster", "status", "--dir", str(tmp_path)).exit_code == 0
    assert calls == [(tmp_path.resolve(), {"wait": 15.0, "purge": True}), (tmp_path.resolve(), {"timeout": 2.0})]


def test_cluster_status_not_running_exits_1(main, monkeypatch, tmp_path):
    import dataclasses

    import mqctl.local as local

    async def status(d, **kw):
        return dataclasses.replace(_local(), running=False)

    monkeypatch.setattr(local, "cluster_status", status)
    rc, _, err = main("cluster", "status", "--dir", str(tmp_path))
    assert rc == 1 and "is not running" in err


# ---------------------------------------------------------------------- topic


ROUTE = TopicRouteData(
    queue_datas=(QueueData(broker_name="broker-a", read_queue_nums=4, write_queue_nums=4, perm=6),),
    broker_datas=(BrokerData(cluster="DefaultCluster", broker_name="broker-a",
                             broker_addrs={0: "127.0.0.1:10911", 1: "127.0.0.1:10921"}),))


def test_topic_list_plain_and_clusters(invoke, patch_op):
    rec = patch_op("topic", "topic_list", TopicListing((TopicEntry("A"), TopicEntry("B"))))
    r = invoke("topic", "list")
    assert r.stdout == "A\nB\n"
    rec.result = TopicListing((TopicEntry("A", "C1", ("g1", "g2")), TopicEntry("B", "C1")), detailed=True)
    r = invoke("topic", "list", "-c")
    assert [line.split() for line in r.stdout.splitlines()] == [
        ["#Cluster", "Name", "#Topic", "#Consumer", "Group"], ["C1", "A", "g1"], ["C1", "A", "g2"], ["C1", "B"]]
    assert rec.calls == [{"clusters": False}, {"clusters": True}]
    assert json.loads(invoke("-o", "json", "topic", "list").stdout) == [
        {"topic": "A", "cluster": "C1", "groups": ["g1", "g2"]}, {"topic": "B", "cluster": "C1", "groups": []}]


def test_topic_route_table_and_json(invoke, patch_op):
    rec = patch_op("topic", "topic_route", ROUTE)
    r = invoke("topic", "route", "CapTopic")
    assert rec.kwargs == {"topic": "CapTopic"}
    lines = [line.split() for line in r.stdout.splitlines() if line]
    assert ["broker-a", "DefaultCluster", "1", "127.0.0.1:10921"] in lines
    assert ["broker-a", "4", "4", "6", "(RW-)", "0"] in lines
    doc = json.loads(invoke("-o", "json", "topic", "route", "CapTopic").stdout)
    assert doc["brokerDatas"][0]["brokerAddrs"] == {"0": "127.0.0.1:10911", "1": "127.0.0.1:10921"}
    assert doc["queueDatas"][0]["perm"] == 6


def test_topic_status(invoke, patch_op):
    rec = patch_op("topic", "topic_status", TopicStatus("T", (QueueStatus("broker-a", 0, 0, 5, 0),)))
    r = invoke("topic", "status", "T")
    assert rec.kwargs == {"topic": "T"}
    assert r.stdout.splitlines()[1].split() == ["broker-a", "0", "0", "5"]


@pytest.mark.parametrize("verb", ["create", "update"])
def test_topic_create_update_arguments(invoke, patch_op, verb):
    cfg = TopicConfigView("T", 4, 2, 4, "SINGLE_TAG", 3, True)
    rec = patch_op("topic", "topic_upsert", TopicWriteResult(cfg, (Outcome("a:1", True),), "broker-a:2",
                                                             Outcome("namesrv", True)))
    r = invoke("topic", verb, "T", "-c", "C1", "-r", "4", "-w", "2", "-p", "R", "--order", "--unit",
               "--has-unit-sub")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"topic": "T", "cluster": "C1", "broker": None, "read_queues": 4, "write_queues": 2,
                          "perm": 4, "order": True, "unit": True, "has_unit_sub": True,
                          "create": verb == "create"}
    assert r.stdout.splitlines() == [
        f"{verb} topic to a:1 success.", "set orderConf. isOrder=true, orderConf=[broker-a:2]",
        "TopicConfig [topicName=T, readQueueNums=4, writeQueueNums=2, perm=R--, topicFilterType=SINGLE_TAG, "
        "topicSysFlag=3, order=true]"]


def test_topic_create_needs_one_target(main, patch_op):
    rec = patch_op("topic", "topic_upsert", None)
    assert main("topic", "create", "T")[0] == 2
    assert main("topic", "create", "T", "-c", "C", "-b", "a:1")[0] == 2
    assert main("topic", "create", "T", "-c", "C", "-p", "9")[0] == 2
    assert rec.calls == []


def test_topic_create_partial_failure_exits_1(main, patch_op):
    cfg = TopicConfigView("T", 8, 8, 6, "SINGLE_TAG", 0, False)
    patch_op("topic", "topic_upsert", TopicWriteResult(cfg, (
        Outcome("a:1", True), Outcome("b:1", False, "NO_PERMISSION(16) from b:1 to UPDATE_AND_CREATE_TOPIC"))))
    rc, out, err = main("topic", "create", "T", "-c", "C")
    assert rc == 1
    assert "create topic to a:1 success." in out
    assert err.splitlines() == [
        "warning: create topic to b:1 failed: NO_PERMISSION(16) from b:1 to UPDATE_AND_CREATE_TOPIC",
        "error: topic create: 1 of 2 servers failed (1 answered an error)"]


def test_topic_update_changes_only_what_is_given(invoke, patch_op):
    """Issue 15 item 10: ``topic update T -p RW`` on a 4/4 topic must not send 8/8."""
    cfg = TopicConfigView("T", 4, 4, 6, "SINGLE_TAG", 0, False)
    rec = patch_op("topic", "topic_upsert", TopicWriteResult(cfg, (Outcome("a:1", True),), sent=(cfg,)))
    r = invoke("topic", "update", "T", "-c", "C1", "-p", "RW")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"topic": "T", "cluster": "C1", "broker": None, "read_queues": None, "write_queues": None,
                          "perm": 6, "order": None, "unit": None, "has_unit_sub": None, "create": False}
    assert "readQueueNums=4, writeQueueNums=4" in r.stdout
    invoke("topic", "create", "T2", "-c", "C1")
    assert rec.calls[-1]["read_queues"] == 8 and rec.calls[-1]["create"] is True


def test_a_failed_write_prints_no_success_document(main, patch_op):
    """Issue 15 item 19: no TopicConfig when no broker took it, and the error names the command."""
    cfg = TopicConfigView("T", 8, 8, 6, "SINGLE_TAG", 0, False)
    patch_op("topic", "topic_upsert", TopicWriteResult(cfg, (
        Outcome("a:1", False, "SYSTEM_ERROR(1) from a:1 to UPDATE_AND_CREATE_TOPIC: nope"),), sent=(None,)))
    rc, out, err = main("topic", "create", "T", "-c", "C")
    assert rc == 1 and out == ""
    assert err.splitlines()[-1] == "error: topic create: 1 of 1 servers failed (1 answered an error)"
    rc, out, err = main("topic", "create", "bad topic!", "-c", "C")
    assert rc == 2 and out == ""
    assert err == ("error: topic name 'bad topic!' has characters brokers refuse (' !'); "
                   "allowed: letters, digits and %|-_\n")


def test_topic_create_unreachable_exits_3(main, patch_op):
    cfg = TopicConfigView("T", 8, 8, 6, "SINGLE_TAG", 0, False)
    patch_op("topic", "topic_upsert", TopicWriteResult(cfg, (Outcome("b:1", False, "cannot connect", unreachable=True),)))
    assert main("topic", "create", "T", "-b", "b:1")[0] == 3


def test_topic_delete_perm_clusters(invoke, patch_op):
    rec = patch_op("topic", "topic_delete", TopicDeleteResult("T", ("C",), (Outcome("a:1", True),),
                                                              (Outcome("n:1", True),)))
    r = invoke("topic", "delete", "T")
    assert rec.kwargs == {"topic": "T", "cluster": None}
    assert r.stdout.splitlines() == ["delete topic [T] from cluster [C] success.",
                                     "delete topic [T] from NameServer success."]
    rec = patch_op("topic", "topic_perm", TopicPermResult("T", 4, (Outcome("a:1", True, None, "6"),)))
    r = invoke("topic", "perm", "T", "-p", "4", "-b", "a:1")
    assert rec.kwargs == {"topic": "T", "perm": 4, "cluster": None, "broker": "a:1"}
    assert r.stdout == "update topic perm from 6 to 4 in a:1 success.\n"
    rec.result = TopicPermResult("T", 4, (Outcome("a:1", True, None, "4"),), unchanged=True)
    assert invoke("topic", "perm", "T", "-p", "R", "-b", "a:1").stdout == "new perm equals to the old one!\n"
    rec = patch_op("topic", "topic_clusters", ("C1", "C2"))
    assert invoke("topic", "clusters", "T").stdout == "C1\nC2\n"


# ---------------------------------------------------------------------- broker


def test_broker_status_and_config(invoke, patch_op):
    from wire.admin.broker import BrokerTable

    rec = patch_op("broker", "broker_status", (BrokerTable("a:1", None, None, {"a": "1", "b": "2"}),))
    r = invoke("broker", "status", "-b", "a:1")
    assert rec.kwargs == {"broker": "a:1", "cluster": None}
    assert r.stdout.splitlines()[1:] == ["a     1", "b     2"]
    assert json.loads(invoke("-o", "json", "broker", "status", "-b", "a:1").stdout) == {"a": "1", "b": "2"}
    rec = patch_op("broker", "broker_config_get", (
        BrokerTable("a:1", "broker-a", 0, {"k": "v"}), BrokerTable("a:2", "broker-a", 1, {}, "timed out")))
    r = invoke("broker", "config", "get", "-c", "C", "k")
    assert rec.kwargs == {"broker": None, "cluster": "C", "keys": ("k",)}
    assert "============a:1 (broker-a, id 0)============" in r.stdout and "a:2: timed out" in r.stderr
    rec = patch_op("broker", "broker_config_set", (Outcome("a:1", True),))
    r = invoke("broker", "config", "set", "-b", "a:1", "x=1", "y=a=b")
    assert rec.kwargs == {"values": {"x": "1", "y": "a=b"}, "broker": "a:1", "cluster": None}
    assert r.stdout == "update broker config success, a:1\n"


def test_broker_commands_need_a_target(main):
    for args in (("broker", "status"), ("broker", "config", "get"), ("broker", "config", "set", "a=1"),
                 ("broker", "config", "set", "-b", "a:1", "novalue")):
        assert main(*args)[0] == 2, args


# ---------------------------------------------------------------------- consumer / producer


def test_consumer_progress_group(invoke, patch_op):
    progress = ConsumerProgress("G", (QueueProgress("T", "broker-a", 0, 5, 3, 2, 0),
                                      QueueProgress("T", "broker-a", 1, 5, 5, 0, 1795341462000)), 0.4, 2)
    rec = patch_op("consumer", "consumer_progress", progress)
    r = invoke("consumer", "progress", "-g", "G", "-t", "T")
    assert rec.kwargs == {"group": "G", "topic": "T"}
    lines = r.stdout.splitlines()
    assert lines[0].split()[-3:] == ["#Consumer", "Offset", "#Diff"] or "#Diff" in lines[0]
    assert lines[1].split() == ["T", "broker-a", "0", "5", "3", "2", "N/A"]
    assert lines[-2:] == ["Consume TPS: 0.40", "Diff Total: 2"]


def test_consumer_progress_inflight_column(invoke, patch_op):
    patch_op("consumer", "consumer_progress", ConsumerProgress(
        "G", (QueueProgress("T", "b", 0, 9, 3, 6, 0, pull_offset=7),), 0.0, 6))
    lines = invoke("consumer", "progress", "-g", "G").stdout.splitlines()
    assert "#Inflight" in lines[0] and lines[1].split()[5] == "4"


def test_consumer_progress_all_groups(invoke, patch_op, main):
    rec = patch_op("consumer", "consumer_groups", ConsumerGroups((
        GroupSummary("G1", 2, "V4_9_8", "PUSH", "CLUSTERING", 3, 10),
        GroupSummary("G2", 0, None, None, None, 0, 4, error="no route"),
        GroupSummary("G3", None, None, None, None, 1, 0, error="no broker answered"))))
    r = invoke("consumer", "progress")
    assert rec.kwargs == {}
    assert [line.split() for line in r.stdout.splitlines()[1:]] == [
        ["G1", "2", "V4_9_8", "PUSH", "CLUSTERING", "3", "10"], ["G2", "0", "OFFLINE", "0", "4"],
        ["G3", "-", "-", "1", "0"]]
    assert "G2: no route" in r.stderr
    assert main("consumer", "progress", "-t", "T")[0] == 2
    rec.result = ConsumerGroups(rec.result.groups, (Outcome("b:1", False, "cannot connect", "broker-b", True),), 2)
    rc, _out, err = main("consumer", "progress")
    assert rc == 3 and "warning: broker-b b:1: cannot connect" in err


def test_consumer_connection_and_producer(invoke, patch_op):
    info = ConnectionInfo("G", (ClientConnection("10.0.0.9@1", "10.0.0.9:5555", "JAVA", "V4_9_8"),),
                          (Subscription("T", "tagA || tagB", "TAG"),), "CONSUME_PASSIVELY", "CLUSTERING",
                          "CONSUME_FROM_LAST_OFFSET")
    rec = patch_op("consumer", "consumer_connection", info)
    r = invoke("consumer", "connection", "-g", "G", "-b", "a:1")
    assert rec.kwargs == {"group": "G", "broker": "a:1"}
    out = r.stdout.splitlines()
    assert out[1].split() == ["10.0.0.9@1", "10.0.0.9:5555", "JAVA", "V4_9_8"]
    assert ["T", "tagA", "||", "tagB"] in [line.split() for line in out]
    assert out[-3:] == ["ConsumeType: CONSUME_PASSIVELY", "MessageModel: CLUSTERING",
                        "ConsumeFromWhere: CONSUME_FROM_LAST_OFFSET"]
    rec = patch_op("consumer", "producer_connection", ConnectionInfo("P", info.connections))
    r = invoke("producer", "connection", "-g", "P", "-t", "T")
    assert rec.kwargs == {"group": "P", "topic": "T"}
    assert r.stdout.splitlines()[1].split() == ["0001", "10.0.0.9@1", "10.0.0.9:5555", "JAVA", "V4_9_8"]


def test_consumer_group_commands(invoke, patch_op, main):
    rec = patch_op("consumer", "group_upsert", GroupWriteResult({"groupName": "G", "consumeEnable": True},
                                                                (Outcome("a:1", True),)))
    r = invoke("consumer", "group", "create", "-g", "G", "-b", "a:1", "--no-consume-enable", "--broadcast",
               "--retry-queues", "2", "--retry-max-times", "3", "--broker-id", "1", "--slow-broker-id", "2",
               "--from-min", "--no-notify-ids-changed")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"group": "G", "broker": "a:1", "cluster": None, "consume_enable": False,
                          "consume_from_min": True, "broadcast": True, "retry_queues": 2, "retry_max_times": 3,
                          "broker_id": 1, "slow_broker_id": 2, "notify_ids_changed": False, "create": True}
    assert r.stdout.splitlines() == ["create subscription group to a:1 success.",
                                     "SubscriptionGroupConfig [groupName=G, consumeEnable=true]"]
    # issue 15 item 22: an update sends only what is given (the broker's config keeps the rest)
    invoke("consumer", "group", "update", "-g", "G", "-c", "C", "--retry-max-times", "5")
    assert rec.calls[-1] == {"group": "G", "broker": None, "cluster": "C", "consume_enable": None,
                             "consume_from_min": None, "broadcast": None, "retry_queues": None,
                             "retry_max_times": 5, "broker_id": None, "slow_broker_id": None,
                             "notify_ids_changed": None, "create": False}
    rec = patch_op("consumer", "group_delete", GroupDeleteResult("G", (Outcome("a:1", True),),
                                                                 (Outcome("%RETRY%G", False, "gone"),)))
    r = invoke("consumer", "group", "delete", "-g", "G", "-c", "C", "--remove-offset")
    assert rec.kwargs == {"group": "G", "broker": None, "cluster": "C", "remove_offset": True}
    assert r.exit_code == 0 and "delete topic [%RETRY%G]: gone" in r.stderr
    assert main("consumer", "group", "delete", "-g", "G")[0] == 2


# ---------------------------------------------------------------------- message


def test_message_send(invoke, patch_op):
    rec = patch_op("message", "message_send", SendResult("SEND_OK", "U1", "O1", "T", "broker-a", "a:1", 3, 7))
    r = invoke("message", "send", "-t", "T", "-p", "héllo", "-k", "k1 k2", "-c", "tagA", "-b", "broker-a",
               "-q", "3", "-g", "PG", "--property", "x=1")
    assert rec.kwargs == {"topic": "T", "body": "héllo".encode(), "tags": "tagA", "keys": "k1 k2",
                          "broker": "broker-a", "queue": 3, "producer_group": "PG", "properties": {"x": "1"},
                          "compression": None, "compress_level": 5}
    assert r.stdout.splitlines()[1].split() == ["broker-a", "3", "SEND_OK", "U1", "O1", "7"]


def test_message_send_compressed(invoke, patch_op, main):
    from wire.message import CompressionType

    rec = patch_op("message", "message_send", SendResult("SEND_OK", "U1", "O1", "T", "broker-a", "a:1", 3, 7))
    invoke("message", "send", "-t", "T", "-p", "x", "--compress", "LZ4")
    invoke("message", "send", "-t", "T", "-p", "x", "--compress", "zstd", "--compress-level", "19")
    assert [(c["compression"], c["compress_level"]) for c in rec.calls] == [
        (CompressionType.LZ4, 5), (CompressionType.ZSTD, 19)]
    assert main("message", "send", "-t", "T", "-p", "x", "--compress", "gzip")[0] == 2
    assert main("message", "send", "-t", "T", "-p", "x", "--compress", "zlib", "--compress-level", "10")[0] == 2
    assert main("message", "send", "-t", "T", "-p", "x", "--compress", "zstd", "--transaction", "commit")[0] == 2


def test_message_send_body_sources(invoke, patch_op, tmp_path, main):
    rec = patch_op("message", "message_send", SendResult("SLAVE_NOT_AVAILABLE", "U", "O", "T", "b", "a:1", 0, 1))
    f = tmp_path / "body.bin"
    f.write_bytes(b"\x00\x01binary")
    r = invoke("message", "send", "-t", "T", "--file", str(f))
    assert rec.calls[0]["body"] == b"\x00\x01binary"
    assert "SLAVE_NOT_AVAILABLE" in r.stderr and r.exit_code == 0
    invoke("message", "send", "-t", "T", "-p", "-", input="from stdin")
    assert rec.calls[1]["body"] == b"from stdin"
    assert main("message", "send", "-t", "T")[0] == 2
    assert main("message", "send", "-t", "T", "-p", "x", "-q", "1")[0] == 2


def test_message_send_transaction(invoke, patch_op, main):
    from wire.admin.transaction import CheckAnswered, TransactionResult

    sent = SendResult("SEND_OK", "U1", "O1", "T", "broker-a", "a:1", 0, 4)
    rec = patch_op("transaction", "message_send_transaction", TransactionResult(
        sent, "PG", "unknown", (CheckAnswered("a:1", 5, 900, "O2", "rollback"),)))
    r = invoke("message", "send", "-t", "T", "-p", "x", "-g", "PG", "--transaction", "unknown",
               "--check-answer", "rollback", "--wait", "5")
    assert rec.kwargs == {"topic": "T", "body": b"x", "outcome": "unknown", "check_answer": "rollback", "wait": 5.0,
                          "tags": None, "keys": None, "broker": None, "queue": None, "producer_group": "PG",
                          "properties": {}}
    assert "answered rollback" in r.stderr and r.stdout.splitlines()[1].split()[2] == "SEND_OK"
    doc = json.loads(invoke("-o", "json", "message", "send", "-t", "T", "-p", "x", "--transaction", "commit").stdout)
    assert doc["outcome"] == "unknown" and doc["checks"][0]["answer"] == "rollback"
    assert main("message", "send", "-t", "T", "-p", "x", "--transaction", "maybe")[0] == 2
    assert main("message", "send", "-t", "T", "-p", "x", "--check-answer", "rollback")[0] == 2


def test_message_consume_sql(invoke, patch_op):
    rec = patch_op("message", "message_consume", ConsumeResult("T", (), ()))
    invoke("message", "consume", "-t", "T", "--sql", "a > 5 AND b = 'x'")
    assert rec.kwargs["sql"] == "a > 5 AND b = 'x'"


def test_message_query_modes(invoke, patch_op, main):
    by_id = patch_op("message", "message_by_id", (_msg(),))
    r = invoke("message", "query", "--id", "7F00000100002A9F0000000000008870")
    assert by_id.kwargs == {"msg_id": "7F00000100002A9F0000000000008870", "topic": None}
    assert "OffsetID:          7F00000100002A9F0000000000008870" in r.stdout
    assert "Body:              query me please" in r.stdout
    by_key = patch_op("message", "message_by_key", MessageHits((_msg(), _msg(queue_id=1))))
    r = invoke("message", "query", "-k", "qkey-7", "-t", "T", "--max-num", "5")
    assert by_key.kwargs == {"topic": "T", "key": "qkey-7", "max_num": 5}
    assert r.stdout.splitlines()[1].split()[:4] == ["C000020216C05FFD2B276E4D0ACC0000", "broker-a", "3", "0"]
    uniq = patch_op("message", "message_by_unique_key", MessageHits((_msg(body=b"\xff\x00", body_text=None),)))
    r = invoke("message", "query", "-u", "U", "-t", "T")
    assert uniq.kwargs == {"topic": "T", "key": "U"} and "Body:              ff00" in r.stdout
    off = patch_op("message", "message_by_offset", (_msg(),))
    invoke("message", "query", "--offset", "0", "-t", "T", "-b", "broker-a", "-q", "3")
    assert off.kwargs == {"topic": "T", "broker": "broker-a", "queue": 3, "offset": 0}
    doc = json.loads(invoke("-o", "json", "message", "query", "--id", "X", "--hex").stdout)
    assert doc[0]["body"] == b"query me please".hex() and doc[0]["body_text"] is None
    for args in (("message", "query"), ("message", "query", "-k", "x"), ("message", "query", "--id", "x", "-k", "y"),
                 ("message", "query", "--offset", "1", "-t", "T")):
        assert main(*args)[0] == 2, args


def test_message_consume(invoke, patch_op):
    result = ConsumeResult("T", (_msg(), _msg(queue_offset=1, body=b"\x01", body_text="\x01")),
                           (QueueRead("broker-a", 3, 0, 2, 0, 2),))
    rec = patch_op("message", "message_consume", result)
    r = invoke("message", "consume", "-t", "T", "-b", "broker-a", "-q", "3", "-O", "0", "-c", "2", "-g", "G")
    assert rec.kwargs == {"topic": "T", "broker": "broker-a", "queue": 3, "offset": 0, "count": 2, "group": "G",
                          "sql": None, "begin": None, "end": None}
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    assert rows[0][-3:] == ["query", "me", "please"] and rows[1][-1] == "01"
    assert "2 message(s) from 1 queue(s)" in r.stderr


# ---------------------------------------------------------------------- namesrv


def test_namesrv_commands(invoke, patch_op):
    rec = patch_op("namesrv", "namesrv_config_get", (NamesrvConfig("n:1", {"listenPort": "9876"}),))
    r = invoke("namesrv", "config", "get", "listenPort")
    assert rec.kwargs == {"keys": ("listenPort",)} and r.stdout.splitlines()[1].split() == ["listenPort", "9876"]
    rec = patch_op("namesrv", "namesrv_config_set", (Outcome("n:1", True),))
    invoke("namesrv", "config", "set", "a=1")
    assert rec.kwargs == {"values": {"a": "1"}}
    rec = patch_op("namesrv", "kv_get", "broker-a:4")
    assert invoke("namesrv", "kv", "get", "ORDER_TOPIC_CONFIG", "T").stdout == "broker-a:4\n"
    assert rec.kwargs == {"namespace": "ORDER_TOPIC_CONFIG", "key": "T"}
    rec = patch_op("namesrv", "kv_list", {"T": "broker-a:4"})
    assert json.loads(invoke("-o", "json", "namesrv", "kv", "list", "NS").stdout) == {"T": "broker-a:4"}
    rec = patch_op("namesrv", "kv_put", (Outcome("n:1", True),))
    r = invoke("namesrv", "kv", "put", "NS", "k", "v")
    assert rec.kwargs == {"namespace": "NS", "key": "k", "value": "v"}
    assert r.stdout == "create or update kv config to namespace success.\n"
    rec = patch_op("namesrv", "kv_delete", (Outcome("n:1", True),))
    invoke("namesrv", "kv", "delete", "NS", "k")
    assert rec.kwargs == {"namespace": "NS", "key": "k"}
    rec = patch_op("namesrv", "write_perm", (Outcome("n:1", True, None, "13"),))
    r = invoke("namesrv", "write-perm", "wipe", "broker-a")
    assert rec.kwargs == {"action": "wipe", "broker_name": "broker-a"}
    assert r.stdout == "wipe write perm of broker[broker-a] in name server[n:1] OK, 13\n"
    r = invoke("namesrv", "write-perm", "add", "broker-a")
    assert rec.calls[-1] == {"action": "add", "broker_name": "broker-a"}
    assert r.stdout == "add write perm of broker[broker-a] in name server[n:1] OK, 13\n"


# ---------------------------------------------------------------------- ha


def test_ha_status_master_and_slave(invoke, patch_op):
    master = HAStatus("127.0.0.1:30911", "broker-c", 0, True, True, 32830, 1,
                      (HASlave("127.0.0.1:38200", 32830, 0, 0.0, True, 32830),))
    slave = HAStatus("127.0.0.1:31911", "broker-c", 2, True, False,
                     client=HAClient("127.0.0.1:30912", 32830, 1.5, 0, 0, 0))
    rec = patch_op("ha", "ha_status", (master, slave))
    r = invoke("ha", "status", "-c", "C5")
    assert rec.kwargs == {"broker": None, "cluster": "C5"}
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["#MasterAddr", "127.0.0.1:30911"]
    assert lines[5].split() == ["127.0.0.1:38200", "32830", "0", "0.00", "OK", "32830"]
    assert ["#MasterAddr", "127.0.0.1:30912"] in [line.split() for line in lines]
    assert ["#TransferSpeed(KB/s)", "1.50"] in [line.split() for line in lines]


def test_ha_status_lag_progress_and_problem(invoke, patch_op):
    behind = HASlave("127.0.0.1:38200", 600, 400, 100.0, True, 1000, lag_ms=12_300, transfer_start=200)
    lost = HASlave("127.0.0.1:38300", 50, 950, None, True, None, problem="the bytes it needs were deleted")
    master = HAStatus("127.0.0.1:30911", "broker-c", 0, True, True, 1000, 2, (behind, lost))
    patch_op("ha", "ha_status", (master,))
    r = invoke("ha", "status", "-b", "127.0.0.1:30911")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[4].split()[-1] == "#Behind"
    assert lines[5].split() == ["127.0.0.1:38200", "600", "400", "100.00", "OK", "1000", "12.3s"]
    assert lines[6].split()[-1] == "-"
    # the copy started at 200: 400 of its 800 bytes are there
    bar = lines[lines.index("#CatchingUp") + 1]
    assert bar.split()[:3] == ["127.0.0.1:38200", "[###############---------------]", "50.0%"]
    assert "400 B to go" in bar and "100.0 KiB/s, about 3ms left" in bar
    assert "slave 127.0.0.1:38300: the bytes it needs were deleted" in r.stderr


def test_ha_verify(main, patch_op):
    from wire.admin.ha import SlaveVerdict, VerifyFile, VerifyResult

    good = SlaveVerdict("127.0.0.1:10921", 1, 0, 500, 0, 500, (VerifyFile("0" * 20, 0, 500, 3, 7, 7),), 500)
    rec = patch_op("ha", "ha_verify", VerifyResult("broker-a", "127.0.0.1:10911", (good,), True))
    rc, out, err = main("ha", "verify", "broker-a", "--bytes")
    assert (rc, err) == (0, "")
    assert rec.kwargs == {"broker_name": "broker-a", "check_bytes": True}
    assert ["127.0.0.1:10921", "1", "500", "500", "0", "500", "faithful", "copy"] in [x.split() for x in out.splitlines()]
    assert ["00000000000000000000", "0", "500", "3", "00000007", "00000007", "yes"] in [x.split() for x in out.splitlines()]
    bad = SlaveVerdict("127.0.0.1:10921", 1, 0, 500, 0, 500, (VerifyFile("0" * 20, 0, 500, 3, 7, 8, 120),), 500)
    behind = SlaveVerdict("127.0.0.1:10931", 2, 0, 500, 0, 300)
    patch_op("ha", "ha_verify", VerifyResult("broker-a", "127.0.0.1:10911", (bad, behind), True))
    rc, out, err = main("ha", "verify", "broker-a", "--bytes")
    assert rc == 1 and "BYTES DIFFER" in out and "NO (from 120)" in out and "behind" in out
    assert err == "error: not a faithful copy of 127.0.0.1:10911: 127.0.0.1:10921, 127.0.0.1:10931\n"
    patch_op("ha", "ha_verify", VerifyResult("broker-a", "127.0.0.1:10911", (), False))
    assert main("ha", "verify", "broker-a")[2] == "error: broker-a has no slave registered\n"


def test_ha_status_4x_broker(main, patch_op):
    patch_op("ha", "ha_status", (HAStatus("10.0.0.1:10911", supported=False,
                                          error="broker 10.0.0.1:10911 does not support HA status (4.x)"),))
    rc, _out, err = main("ha", "status", "-b", "10.0.0.1:10911")
    assert rc == 1
    assert err == "error: broker 10.0.0.1:10911 does not support HA status (4.x)\n"
    assert main("ha", "status")[0] == 2


# ---------------------------------------------------------------------- exit codes at the boundary


def test_server_error_exits_1_with_code_name_and_remark(main, patch_op):
    from wire.admin.errors import ServerError

    patch_op("topic", "topic_route", ServerError(17, "No topic route info in name server for the topic: X\n"
                                                 "See http://rocketmq.apache.org/docs/faq/ for further details.",
                                                 addr="n:1", request_code=105))
    rc, out, err = main("topic", "route", "X")
    assert (rc, out) == (1, "")
    assert err == ("error: TOPIC_NOT_EXIST(17) from n:1 to GET_ROUTEINFO_BY_TOPIC: No topic route info in name "
                   "server for the topic: X See http://rocketmq.apache.org/docs/faq/ for further details.\n")


def test_a_hostile_remark_reaches_the_terminal_escaped_and_bounded(main, patch_op):
    """A remark is the server's text: its control characters (an OSC title, a screen clear)
    are shown as escapes, and 100,000 characters of it are cut to a line a person can read."""
    from wire.admin.errors import ServerError

    remark = "\x1b]0;pwned\x07\x1b[2J" + "z" * 100_000
    patch_op("topic", "topic_route", ServerError(1, remark, addr="n:1", request_code=105))
    rc, out, err = main("topic", "route", "X")
    assert (rc, out) == (1, "")
    assert "\x1b" not in err and "\x07" not in err
    assert err.startswith("error: SYSTEM_ERROR(1) from n:1 to GET_ROUTEINFO_BY_TOPIC: \\x1b]0;pwned\\x07\\x1b[2Jzzz")
    assert err.endswith("… (100,075 characters)\n") and len(err) < 2100


def test_tables_and_key_values_show_control_characters_as_escapes(capsys):
    """Client ids, topic names and config values come from peers: a table never writes their
    control characters to the terminal."""
    from mqctl.output import Output

    o = Output()
    o.table(["#ClientId", "#Version"], [["evil\x1b[2J\x9b31m", "V4_9_8\nfake row"]])
    o.kv([("key\x1b]0;t\x07", "val\tue")])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert "evil\\x1b[2J\\x9b31m  V4_9_8\\nfake row" in out
    assert "key\\x1b]0;t\\x07  val\\tue" in out
    assert out.count("\n") == 3


@pytest.mark.parametrize("exc, code", [
    ("ConnectError", 3), ("RequestTimeout", 3), ("ConnectionClosed", 3), ("DecodeError", 1),
])
def test_wire_errors_exit_codes(main, patch_op, exc, code):
    import wire.aio
    import wire.errors

    cls = getattr(wire.aio, exc, None) or getattr(wire.errors, exc)
    patch_op("topic", "topic_status", cls("boom"))
    rc, out, err = main("topic", "status", "T")
    assert rc == code and out == "" and err == "error: boom\n"


def test_not_found_and_bad_request(main, patch_op):
    from wire.admin.errors import BadRequest, NotFound

    patch_op("consumer", "consumer_progress", NotFound("no consume stats"))
    assert main("consumer", "progress", "-g", "G") == (1, "", "error: no consume stats\n")
    patch_op("consumer", "consumer_progress", BadRequest("bad"))
    assert main("consumer", "progress", "-g", "G")[0] == 2


def test_no_traceback_for_a_bug(main, patch_op):
    patch_op("topic", "topic_status", ZeroDivisionError("oops"))
    rc, _out, err = main("topic", "status", "T")
    assert rc == 1 and err.startswith("error: internal error: ZeroDivisionError: oops") and "Traceback" not in err


def test_watch_redraws_until_interrupted(main, patch_op, monkeypatch):
    import asyncio

    rec = patch_op("topic", "topic_status", TopicStatus("T", (QueueStatus("b", 0, 0, 1, 0),)))
    sleeps = []
    real_sleep = asyncio.sleep

    async def fake_sleep(s):
        sleeps.append(s)
        if len(sleeps) == 3:
            raise KeyboardInterrupt
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    rc, out, _err = main("topic", "status", "T", "--watch", "0.5")
    assert rc == 0
    assert len(rec.calls) == 3 and len(set(map(id, rec.clients))) == 1
    assert out.count("#Broker Name") == 3 and out.count("every 0.5s") == 3
    assert all(0 <= s <= 0.5 for s in sleeps)


def test_watch_json_is_one_document_per_line(main, patch_op, monkeypatch):
    import asyncio

    patch_op("topic", "topic_status", TopicStatus("T", (QueueStatus("b", 0, 0, 1, 0),)))
    n = []

    async def fake_sleep(s):
        n.append(s)
        if len(n) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    rc, out, _ = main("-o", "json", "topic", "status", "T", "-w", "1")
    docs = [json.loads(line) for line in out.splitlines()]
    assert rc == 0 and len(docs) == 2 and docs[0]["queues"][0]["max_offset"] == 1


@pytest.mark.parametrize("args, says", [
    (("--timeout", "abc", "cluster", "list"), "--timeout: 'abc' is not a number of seconds"),
    (("cluster", "list", "--timeout", "nan"), "--timeout: 'nan' is not a positive number of seconds"),
    (("topic", "create", "T", "-c", "C", "-r", "x"), "is not a valid"),
    (("message", "consume", "-t", "T", "-c", "1.5"), "is not a valid"),
    (("message", "consume", "-t", "T", "-O", "-5"), "--offset: -5 is negative"),
    (("cluster", "list", "--watch", "soon"), "is not a valid"),
])
def test_values_that_do_not_convert_are_usage_errors(main, patch_op, args, says):
    rec = patch_op("topic", "topic_upsert", None)
    consume = patch_op("message", "message_consume", None)
    rc, out, err = main(*args)
    assert rc == 2 and out == "" and says in err, err
    assert rec.calls == [] and consume.calls == []


def test_values_convert_to_the_declared_types(invoke, patch_op):
    rec = patch_op("message", "message_consume", ConsumeResult("T", (), ()))
    assert invoke("message", "consume", "-t", "T", "-c", "007", "-O", "05").exit_code == 0
    assert rec.kwargs["count"] == 7 and rec.kwargs["offset"] == 5


@pytest.mark.parametrize("args, start", [
    (("topic", "perm", "X"), "error: Missing option '--perm' / '-p'. (see 'mqctl topic perm -h')"),
    (("topic", "route"), "error: Missing argument"),
    (("topik", "list"), "error: No such command 'topik'."),
    (("topic", "list", "--bogus"), "error: No such option: --bogus"),
])
def test_usage_errors_are_one_line(main, args, start):
    rc, out, err = main(*args)
    assert rc == 2 and out == ""
    assert err.startswith(start) and err.count("\n") == 1


def test_a_noun_alone_shows_its_help(main):
    rc, out, err = main("topic")
    assert rc == 2 and "Commands:" in out + err and "route" in out + err


def test_cluster_list_ack_pool_of_newer_brokers(invoke, patch_op):
    import dataclasses

    patch_op("cluster", "cluster_list", ClusterList((dataclasses.replace(ROW_5X, ack_queue_size="4",
                                                                         ack_queue_wait_ms="9"),)))
    assert "0.00(0,0ms|4,9ms)" in invoke("cluster", "list").stdout.splitlines()[1]
