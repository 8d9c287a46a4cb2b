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
    names = [a.name for a in MQADMIN]
    assert len(names) == len(set(names)) == 71
    assert sum(1 for a in MQADMIN if not a.since_5) == 56
    for a in MQADMIN:
        assert a.covered or a.why, a.name


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
