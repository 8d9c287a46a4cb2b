# Licensed under the Apache License, Version 2.0. See LICENSE.
"""mqadmin's command names and options as hidden aliases (issue 15 item 16)."""

from __future__ import annotations

import pytest

from mqctl.aliases import MQADMIN
from wire.admin.cluster import ClusterList
from wire.admin.common import Outcome
from wire.admin.topic import TopicConfigView, TopicWriteResult
from wire.bodies import TopicRouteData


def test_every_mqadmin_command_is_in_the_table():
    """4.9.8's 56, 5.0.0's 71 and 5.3.3's 89 (MQAdminStartup.initCommand of each release)."""
    names = [a.name for a in MQADMIN]
    assert len(names) == len(set(names)) == 95
    assert sum(1 for a in MQADMIN if not a.since_5 and not a.since) == 56
    assert sum(1 for a in MQADMIN if not a.since) == 71
    assert sum(1 for a in MQADMIN if not a.gone) == 89
    assert {a.name for a in MQADMIN if a.gone} == {
        "updateAclConfig", "deleteAclConfig", "clusterAclConfigVersion", "updateGlobalWhiteAddr", "getAclConfig",
        "cleanBrokerData"}
    for a in MQADMIN:
        assert a.covered or a.why, a.name
        assert not (a.since and a.since_5), a.name


def test_update_topic_list_and_sub_group_list_import_the_file(invoke, patch_op, tmp_path):
    """5.3's batch commands read a JSON array of configs: cluster metadata import takes the same file."""
    import json

    from wire.admin.metadata import ImportResult

    path = tmp_path / "topics.json"
    path.write_text(json.dumps([{"topicName": "T1", "readQueueNums": 4, "writeQueueNums": 4, "perm": 6},
                                {"topicName": "T2", "readQueueNums": 2, "writeQueueNums": 2, "perm": 6}]))
    rec = patch_op("metadata", "import_metadata", ImportResult("C1", (Outcome("topic T1 @ a:1", True),)))
    r = invoke("updateTopicList", "-c", "C1", "-f", str(path))
    assert r.exit_code == 0, r.output
    md = rec.kwargs["metadata"]
    assert sorted(md.topics) == ["T1", "T2"] and md.masters == 1 and md.topics["T2"].write_queue_nums == 2
    assert (rec.kwargs["cluster"], rec.kwargs["broker"]) == ("C1", None)
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps([{"groupName": "G1", "retryMaxTimes": 3}]))
    r = invoke("updateSubGroupList", "-b", "10.0.0.1:10911", "-f", str(groups))
    assert r.exit_code == 0, r.output
    second = rec.calls[1]
    assert list(second["metadata"].groups) == ["G1"] and second["metadata"].groups["G1"].retry_max_times == 3
    assert (second["cluster"], second["broker"]) == (None, "10.0.0.1:10911")


def test_controller_commands_under_their_mqadmin_names(invoke, patch_op):
    from wire.admin.controller import ControllerMetadata, ElectResult

    rec = patch_op("controller", "controller_metadata", ControllerMetadata("c:1", "g", "n0", "c:1", True, "c:1"))
    r = invoke("getControllerMetaData", "-a", "127.0.0.1:9878")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"controller": "127.0.0.1:9878"} and "#ControllerLeaderId" in r.stdout
    rec = patch_op("controller", "sync_state_sets", {})
    r = invoke("getSyncStateSet", "-a", "127.0.0.1:9878", "-b", "broker-c")
    assert rec.kwargs == {"controller": "127.0.0.1:9878", "broker_names": ["broker-c"]}
    assert r.exit_code == 1 and "knows no broker named broker-c" in str(r.exception)
    rec = patch_op("controller", "elect_master", ElectResult("broker-c", "10.0.0.1:30911", 2, 3, {}))
    r = invoke("electMaster", "-a", "127.0.0.1:9878", "-n", "broker-c", "-b", "10.0.0.1:30911", "-c", "C5")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"controller": "127.0.0.1:9878", "cluster": "C5", "broker_name": "broker-c",
                          "broker_addr": "10.0.0.1:30911"}
    rec = patch_op("controller", "broker_epochs", ())
    assert invoke("getBrokerEpoch", "-b", "broker-c", "-c", "C5").exit_code == 0
    assert rec.kwargs == {"broker_name": "broker-c", "cluster": "C5"}


@pytest.mark.parametrize(("args", "says"), [
    (("getSyncStateSet", "-a", "127.0.0.1:9878", "-c", "C5"), "error: getSyncStateSet: mqadmin's -c (clusterName)"),
    (("createUser", "-u", "u1", "-p", "x"), "error: mqadmin's createUser has no mqctl command: ACL 2.0"),
    (("updateTopicList", "-c", "C1"), "error: updateTopicList: give -f (filename)"),
    (("updateTopicList", "-f", "x.json"), "error: give -c CLUSTER or -b BROKER_ADDR (one of them)"),
])
def test_commands_added_after_5_0_0(main, args, says):
    rc, out, err = main(*args)
    assert rc == 2 and out == "" and err.startswith(says), err


def test_topic_route_and_cluster_list_under_their_mqadmin_names(invoke, patch_op):
    rec = patch_op("topic", "topic_route", TopicRouteData())
    r = invoke("topicRoute", "-t", "TopicX", "-n", "10.0.0.1:9876")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"topic": "TopicX"} and rec.clients[0].namesrv_addrs == ["10.0.0.1:9876"]
    rec = patch_op("cluster", "cluster_list", ClusterList(()))
    r = invoke("CLUSTERLIST", "-m", "-c", "C1", "--output", "json")  # the names match without case, as mqadmin
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"cluster": "C1"} and r.stdout.startswith("{")


def test_update_topic_takes_mqadmins_options(invoke, patch_op):
    cfg = TopicConfigView("T", 4, 4, 6, "SINGLE_TAG", 0, True)
    rec = patch_op("topic", "topic_upsert", TopicWriteResult(cfg, (Outcome("a:1", True),), sent=(cfg,)))
    r = invoke("updateTopic", "-c", "C1", "-t", "T", "-r", "4", "-w", "4", "-o", "false", "-p", "6")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"topic": "T", "cluster": "C1", "broker": None, "read_queues": 4, "write_queues": 4,
                          "perm": 6, "order": False, "unit": False, "has_unit_sub": False, "create": True}


def test_key_value_options_become_mqctls_arguments(invoke, patch_op):
    rec = patch_op("broker", "broker_config_set", (Outcome("a:1", True),))
    assert invoke("updateBrokerConfig", "-b", "10.0.0.1:10911", "-k", "flushIntervalCommitLog",
                  "-v", "600").exit_code == 0
    assert rec.kwargs == {"values": {"flushIntervalCommitLog": "600"}, "broker": "10.0.0.1:10911", "cluster": None}
    rec = patch_op("namesrv", "kv_put", (Outcome("n:1", True),))
    assert invoke("updateKvConfig", "-s", "NS", "-k", "K", "-v", "V").exit_code == 0
    assert rec.kwargs == {"namespace": "NS", "key": "K", "value": "V"}
    assert invoke("updateOrderConf", "-t", "T", "-v", "broker-a:4", "-m", "put").exit_code == 0
    assert rec.calls[-1] == {"namespace": "ORDER_TOPIC_CONFIG", "key": "T", "value": "broker-a:4"}


def test_reset_offset_by_time_and_consume_message(invoke, patch_op):
    from wire.admin.message import ConsumeResult
    from wire.admin.offsets import ResetResult

    rec = patch_op("offsets", "reset_offset", ResetResult("G", "T", -1, True, ()))
    assert invoke("resetOffsetByTime", "-g", "G", "-t", "T", "-s", "now", "-f", "true").exit_code == 0
    assert rec.kwargs == {"group": "G", "topic": "T", "timestamp": -1, "force": True}
    rec = patch_op("message", "message_consume", ConsumeResult("T", (), ()))
    r = invoke("consumeMessage", "-t", "T", "-b", "broker-a", "-i", "2", "-o", "5", "-c", "3")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"topic": "T", "broker": "broker-a", "queue": 2, "offset": 5, "count": 3,
                          "group": "TOOLS_CONSUMER", "sql": None, "begin": None, "end": None}


def test_acl_commands_take_mqadmins_options(invoke, patch_op):
    rec = patch_op("acl", "acl_update", (Outcome("10.0.0.1:10911", True),))
    r = invoke("updateAclConfig", "-b", "10.0.0.1:10911", "-a", "operator1", "-s", "operator-secret",
               "-t", "topicA=DENY,topicB=PUB|SUB", "-g", "groupA=SUB", "-i", "PUB", "-m", "true")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"access_key": "operator1", "secret_key": "operator-secret", "white_remote_address": None,
                          "admin": True, "default_topic_perm": "PUB", "default_group_perm": None,
                          "topic_perms": ["topicA=DENY", "topicB=PUB|SUB"], "group_perms": ["groupA=SUB"],
                          "broker": "10.0.0.1:10911", "cluster": None}
    rec = patch_op("acl", "acl_white_addrs", (Outcome("10.0.0.1:10911", True),))
    assert invoke("updateGlobalWhiteAddr", "-c", "C1", "-g", "10.10.103.*,192.168.0.*").exit_code == 0
    assert rec.kwargs == {"addresses": ["10.10.103.*", "192.168.0.*"], "file": "", "broker": None, "cluster": "C1"}
    rec = patch_op("acl", "acl_delete", (Outcome("10.0.0.1:10911", True),))
    assert invoke("deleteAclConfig", "-c", "C1", "-a", "operator1").exit_code == 0
    assert rec.kwargs == {"access_key": "operator1", "broker": None, "cluster": "C1"}


@pytest.mark.parametrize(("args", "says"), [
    (("queryMsgTraceById", "-i", "X"), "error: mqadmin's queryMsgTraceById has no mqctl command: message traces"),
    (("printMsg", "-t", "T", "-c", "UTF-8"), "error: printMsg: mqadmin's -c (charsetName) has no mqctl equivalent"),
    (("updateTopic", "-c", "C", "-t", "T", "-o", "maybe"), "error: updateTopic: -o (order) takes true or false"),
    (("topicRoute",), "error: topicRoute: give -t (topic)"),
])
def test_what_mqctl_does_not_take_is_a_usage_error(main, args, says):
    rc, out, err = main(*args)
    assert rc == 2 and out == "" and err.startswith(says), err


def test_the_aliases_are_hidden(invoke):
    text = invoke("--help").stdout
    assert "clusterList" not in text and "updateTopic" not in text
