# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The official Java servers' answers, replayed to the commands, against what mqadmin printed.

Each test takes a capture of an mqadmin command (``../shared/captures``), answers the library's
requests with the Java name server's and brokers' recorded responses (:mod:`tests.cli.replay`),
runs the ``mqctl`` equivalent and compares its output with the mqadmin ``.txt`` recorded beside
the capture. Write commands are also checked the other way: the request mqctl sends must carry
what mqadmin's carried. Times are printed in UTC, as on the machine that recorded the files.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import mqctl.runner
from tests.cli.replay import ReplayClient, exchanges, request_ext
from tests.conftest import shared_path
from wire import SerializeType, fastjson

pytestmark = pytest.mark.shared

V4 = ("captures", "java-4.9.8")
V5 = ("captures", "java-5.0.0")


def cap(name: str) -> Path:
    return shared_path(*(V5 if name.startswith(("11-", "12-", "13-")) else V4), name)


def txt(name: str) -> str:
    return cap(name).read_text(encoding="utf-8")


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def replay(invoke, monkeypatch, utc):
    """Run ``mqctl ARGS`` with the admin client answered from ``capture``."""

    def run(capture: str, *args: str, namesrv: str = "127.0.0.1:9876", serialize: str = "json",
            extra: dict[int, dict[str, str]] | None = None):
        client = ReplayClient(cap(capture + ".pcap"), namesrv, serialize=serialize)
        client.extra = extra or {}
        monkeypatch.setattr(mqctl.runner, "_client", lambda s: client)
        result = invoke(*args)
        return client, result

    return run


def data_rows(text: str) -> list[list[str]]:
    """The whitespace-separated rows of an mqadmin table, header left out."""
    return [line.split() for line in text.splitlines()[1:] if line.strip()]


def cells_by(ours: list[str], tokens: list[str]) -> list[str]:
    """Cut an mqadmin row's tokens into cells with as many words as ours have."""
    out, i = [], 0
    for cell in ours:
        n = max(len(cell.split()), 1)
        out.append(" ".join(tokens[i:i + n]))
        i += n
    assert i == len(tokens), (ours, tokens)
    return out


# ---------------------------------------------------------------------- cluster list


@pytest.mark.parametrize("capture, namesrv, serialize", [
    ("02-clusterList", "127.0.0.1:9876", "json"),
    ("04-rocketmq-clusterList", "127.0.0.1:9876", "rocketmq"),
    ("12-clusterList", "127.0.0.1:9886", "json"),
])
def test_cluster_list_matches_mqadmin(replay, capture, namesrv, serialize):
    client, r = replay(capture, "cluster", "list", namesrv=namesrv, serialize=serialize)
    assert r.exit_code == 0, r.output
    header, *rows = r.stdout.splitlines()
    ours = [line.split("  ") for line in rows]
    ours = [[c.strip() for c in row if c.strip()] for row in ours]
    theirs = data_rows(txt(capture + ".txt"))
    assert len(ours) == len(theirs) == 2
    expected_cols = [c for c in txt(capture + ".txt").splitlines()[0].split("#") if c.strip()]
    columns = [c.strip() for c in header.split("#") if c.strip()]
    assert columns == [c.strip() for c in expected_cols]
    hour = columns.index("Hour")
    for mine, tokens in zip(ours, theirs, strict=True):
        their_cells = cells_by(mine, tokens)
        assert mine[:hour] + mine[hour + 1:] == their_cells[:hour] + their_cells[hour + 1:]
        # mqadmin takes the age of an earliest-message stamp of -1 (no message) from 1970;
        # mqctl shows no age
        assert mine[hour] == "-"
        sent = max(e.time for e in exchanges(cap(capture + ".pcap")) if e.request.code == 28)
        assert float(their_cells[hour]) == pytest.approx((sent * 1000 + 1) / 3_600_000, abs=0.02)
    assert {s.command.serialize_type for s in client.sent} == {SerializeType[serialize.upper()]}
    assert sorted(client.sent_codes()) == sorted([(namesrv, 106)] + [(row[3], 28) for row in ours])


# ---------------------------------------------------------------------- topics


@pytest.mark.parametrize("capture, serialize", [("02-topicRoute", "json"), ("04-rocketmq-topicRoute", "rocketmq")])
def test_topic_route_matches_mqadmin(replay, capture, serialize):
    expected = json.loads(json.dumps(fastjson.loads(txt(capture + ".txt")), default=str))
    _, r = replay(capture, "-o", "json", "topic", "route", "CapTopic", serialize=serialize)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == expected
    _, r = replay(capture, "topic", "route", "CapTopic", serialize=serialize)
    rows = [line.split() for line in r.stdout.splitlines()]
    for bid, addr in expected["brokerDatas"][0]["brokerAddrs"].items():
        assert ["broker-a", "DefaultCluster", bid, addr] in rows
    q = expected["queueDatas"][0]
    assert ["broker-a", str(q["readQueueNums"]), str(q["writeQueueNums"]), "6", "(RW-)", "0"] in rows


def test_topic_list_matches_mqadmin(replay):
    client, r = replay("02-topicList", "topic", "list")
    assert r.stdout.splitlines() == sorted(txt("02-topicList.txt").split())
    assert client.sent_codes() == [("127.0.0.1:9876", 206)]


def test_topic_status_matches_mqadmin(replay):
    client, r = replay("02-topicStatus", "topic", "status", "CapTopic")
    assert data_rows(r.stdout) == data_rows(txt("02-topicStatus.txt"))
    assert client.sent_codes() == [("127.0.0.1:9876", 105), ("127.0.0.1:10911", 202)]


def test_topic_clusters_matches_mqadmin(replay):
    _, r = replay("02-topicClusterList", "topic", "clusters", "CapTopic")
    assert r.stdout == txt("02-topicClusterList.txt")


# ---------------------------------------------------------------------- brokers and name servers


def _colon_table(text: str, sep: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if sep in line and not line.startswith("="):
            key, _, value = line.partition(sep)
            out[key.strip()] = value.strip()
    return out


@pytest.mark.parametrize("capture, serialize", [("02-brokerStatus", "json"), ("04-rocketmq-brokerStatus", "rocketmq")])
def test_broker_status_matches_mqadmin(replay, capture, serialize):
    expected = _colon_table(txt(capture + ".txt"), ": ")
    _, r = replay(capture, "-o", "json", "broker", "status", "-b", "127.0.0.1:10911", serialize=serialize)
    assert {k: v.strip() for k, v in json.loads(r.stdout).items()} == expected
    _, r = replay(capture, "broker", "status", "-b", "127.0.0.1:10911", serialize=serialize)
    keys = [line.split()[0] for line in r.stdout.splitlines()[1:]]
    assert keys == sorted(expected)


def test_broker_config_matches_mqadmin(replay):
    expected = _colon_table(txt("02-getBrokerConfig.txt"), "=  ")
    _, r = replay("02-getBrokerConfig", "-o", "json", "broker", "config", "get", "-b", "127.0.0.1:10911")
    assert {k: v.strip() for k, v in json.loads(r.stdout).items()} == expected
    assert len(expected) > 100


def test_namesrv_config_matches_mqadmin(replay):
    expected = _colon_table(txt("02-getNamesrvConfig.txt"), "=  ")
    _, r = replay("02-getNamesrvConfig", "-o", "json", "namesrv", "config", "get")
    assert json.loads(r.stdout) == expected
    _, r = replay("02-getNamesrvConfig", "namesrv", "config", "get", "listenPort", "rocketmqHome")
    assert data_rows(r.stdout) == [["listenPort", "9876"], ["rocketmqHome", expected["rocketmqHome"]]]


# ---------------------------------------------------------------------- consumers


def test_consumer_progress_matches_mqadmin(replay):
    expected = txt("02-consumerProgress.txt")
    client, r = replay("02-consumerProgress", "consumer", "progress", "-g", "CapGroup")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    table = [line.split() for line in lines[1:] if line and not line.startswith(("Consume", "Diff"))]
    assert table == [row for row in data_rows(expected) if row[0] == "CapTopic"]
    assert lines[-2:] == expected.splitlines()[-2:] == ["Consume TPS: 0.40", "Diff Total: 0"]
    assert client.sent_codes() == [("127.0.0.1:9876", 105), ("127.0.0.1:10911", 208)]
    assert client.sent[0].command.ext_fields == {"topic": "%RETRY%CapGroup"}


# ---------------------------------------------------------------------- writes: requests as mqadmin's


def _same_request(client: ReplayClient, capture: str, code: int) -> None:
    ours = [s.command for s in client.sent if s.command.code == code]
    theirs = [e.request for e in exchanges(cap(capture + ".pcap")) if e.request.code == code]
    assert ours and len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert request_ext(a) == request_ext(b)


@pytest.mark.parametrize("capture, args, code", [
    ("03-updateTopic", ("topic", "create", "AdmTopic", "-c", "DefaultCluster", "-r", "4", "-w", "4"), 17),
    ("03-updateTopicPerm", ("topic", "perm", "AdmTopic", "-c", "DefaultCluster", "-p", "4"), 17),
    ("03-deleteTopic", ("topic", "delete", "AdmTopic", "-c", "DefaultCluster"), 215),
    ("03-updateKvConfig", ("namesrv", "kv", "put", "ORDER_TOPIC_CONFIG", "AdmTopic", "broker-a:4"), 100),
    ("03-deleteKvConfig", ("namesrv", "kv", "delete", "ORDER_TOPIC_CONFIG", "AdmTopic"), 102),
    ("03-wipeWritePerm", ("namesrv", "write-perm", "wipe", "broker-a"), 205),
    ("03-addWritePerm", ("namesrv", "write-perm", "add", "broker-a"), 327),
    ("03-updateSubGroup", ("consumer", "group", "create", "-g", "AdmGroup", "-c", "DefaultCluster"), 200),
])
def test_writes_match_mqadmin(replay, capture, args, code):
    client, r = replay(capture, *args)
    assert r.exit_code == 0, r.output
    assert r.stdout.rstrip("\n") == txt(capture + ".txt").rstrip("\n")
    _same_request(client, capture, code)
    if code == 215:
        _same_request(client, capture, 216)


def test_update_sub_group_body_is_mqadmin_body(replay):
    from wire.bodies import SubscriptionGroupConfig

    client, _ = replay("03-updateSubGroup", "consumer", "group", "create", "-g", "AdmGroup", "-c", "DefaultCluster")
    ours = next(s.command.body for s in client.sent if s.command.code == 200)
    theirs = next(e.request.body for e in exchanges(cap("03-updateSubGroup.pcap")) if e.request.code == 200)
    assert SubscriptionGroupConfig.decode(ours) == SubscriptionGroupConfig.decode(theirs)
    assert ours == theirs


# ---------------------------------------------------------------------- messages


def _detail(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if sep and label and not label.startswith(("WARN", "Message Body Path")):
            out[label.strip()] = value.strip()
    return out


def _props(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.strip("{}").split(", ") if item)


@pytest.mark.parametrize("capture, args", [
    ("07-queryMsgById-offsetId", ("message", "query", "--id", "7F00000100002A9F0000000000008870")),
    ("07-queryMsgByOffset", ("message", "query", "--offset", "0", "-t", "QryTopic", "-b", "broker-a", "-q", "3")),
    ("07-queryMsgByUniqueKey", ("message", "query", "-u", "C000020216C05FFD2B276E4D0ACC0000", "-t", "QryTopic")),
])
def test_message_detail_matches_mqadmin(replay, capture, args):
    # query --offset first asks the queue's bounds (GET_MIN_OFFSET 31, GET_MAX_OFFSET 30), which
    # mqadmin does not: a pull outside them makes the broker write an OFFSET_MOVED_EVENT message
    _, r = replay(capture, *args, extra={31: {"offset": "0"}, 30: {"offset": "5"}})
    assert r.exit_code == 0, r.output
    ours, theirs = _detail(r.stdout), _detail(txt(capture + ".txt"))
    # the Java client adds the queue bounds of a pull to the message it hands over
    their_props = {k: v for k, v in _props(theirs.pop("Properties")).items() if k not in ("MIN_OFFSET", "MAX_OFFSET")}
    assert _props(ours.pop("Properties")) == their_props
    assert {k: v for k, v in ours.items() if k in theirs} == theirs
    assert ours["Body"] == "query me please"


def test_query_by_key_matches_mqadmin(replay):
    client, r = replay("07-queryMsgByKey", "message", "query", "-k", "qkey-7", "-t", "QryTopic")
    (row,) = data_rows(r.stdout)
    assert [row[0], row[2], row[3]] == data_rows(txt("07-queryMsgByKey.txt"))[0]
    theirs = next(e.request for e in exchanges(cap("07-queryMsgByKey.pcap")) if e.request.code == 12)
    ours = next(s.command for s in client.sent if s.command.code == 12)
    assert request_ext(ours) == request_ext(theirs)


def test_print_msg_matches_mqadmin(replay):
    client, r = replay("07-printMsg", "message", "consume", "-t", "QryTopic")
    (row,) = data_rows(r.stdout)
    expected = txt("07-printMsg.txt")
    msgid = next(line.split()[1] for line in expected.splitlines() if line.startswith("MSGID:"))
    assert row[:5] == ["broker-a", "3", "0", msgid, "tagQ"] and " ".join(row[-3:]) == "query me please"
    pulls = [s.command for s in client.sent if s.command.code == 11]
    theirs = next(e.request for e in exchanges(cap("07-printMsg.pcap")) if e.request.code == 11)
    assert len(pulls) == 1
    for key in ("consumerGroup", "topic", "queueId", "queueOffset", "sysFlag", "subscription", "expressionType"):
        assert pulls[0].ext_fields[key] == theirs.ext_fields[key]


def test_consume_message_rocketmq_matches_mqadmin(replay):
    client, r = replay("04-rocketmq-consumeMessage", "-o", "json", "message", "consume", "-t", "CapTopic", "-c", "25",
                       serialize="rocketmq")
    doc = json.loads(r.stdout)
    expected = [line.split()[1] for line in txt("04-rocketmq-consumeMessage.txt").splitlines()
                if line.startswith("MSGID:")]
    assert sorted(m["msg_id"] for m in doc["messages"]) == sorted(expected)
    assert {s.command.serialize_type for s in client.sent} == {SerializeType.ROCKETMQ}


@pytest.mark.parametrize("capture, args, serialize", [
    ("07-sendMessage-tag-key", ("message", "send", "-t", "QryTopic", "-p", "query me please", "-k", "qkey-7",
                                "-c", "tagQ"), "json"),
    ("04-rocketmq-sendMessage", ("message", "send", "-t", "CapTopic", "-p", "binary-header hello", "-k", "bkey1",
                                 "-c", "btag"), "rocketmq"),
])
def test_send_matches_mqadmin(replay, capture, args, serialize):
    client, r = replay(capture, *args, serialize=serialize)
    assert r.exit_code == 0, r.output
    (mine,) = data_rows(r.stdout)
    (theirs,) = data_rows(txt(capture + ".txt"))
    assert mine[:3] == theirs[:3]
    ours = next(s.command for s in client.sent if s.command.code == 310)
    captured = next(e.request for e in exchanges(cap(capture + ".pcap")) if e.request.code == 310)
    assert set(request_ext(ours)) == set(request_ext(captured))
    for key in "bcdfhjkmn":
        assert ours.ext_fields[key] == captured.ext_fields[key], key
    assert ours.body == captured.body
    mine_props = dict(p.split("\x01") for p in ours.ext_fields["i"].split("\x02"))
    their_props = dict(p.split("\x01") for p in captured.ext_fields["i"].split("\x02"))
    assert mine_props.keys() == their_props.keys()
    assert {k: v for k, v in mine_props.items() if k != "UNIQ_KEY"} == \
        {k: v for k, v in their_props.items() if k != "UNIQ_KEY"}
    assert ours.serialize_type is captured.serialize_type


# ---------------------------------------------------------------------- HA (5.x)


@pytest.mark.parametrize("capture, addr", [("12-haStatus-master", "127.0.0.1:30911"),
                                           ("12-haStatus-slave", "127.0.0.1:31911")])
def test_ha_status_matches_mqadmin(replay, capture, addr):
    client, r = replay(capture, "ha", "status", "-b", addr, namesrv="127.0.0.1:9886")
    assert r.exit_code == 0, r.output
    ours = [line.split() for line in r.stdout.splitlines() if line.strip()]
    theirs = [line.split() for line in txt(capture + ".txt").splitlines() if line.strip()]
    assert ours == theirs
    assert client.sent_codes() == [(addr, 907)]


def test_ha_status_of_a_4x_broker(replay, main, monkeypatch):
    """A 4.9.8 broker answers 907 as any unknown code: REQUEST_CODE_NOT_SUPPORTED (10-error-responses)."""
    from wire import RemotingCommand, ResponseCode

    client = ReplayClient(cap("02-brokerStatus.pcap"))

    async def not_supported(addr, code, ext=None, body=None, *, timeout=None):
        java = next(e.response for e in exchanges(cap("10-error-responses.pcap"))
                    if e.response.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED)
        assert isinstance(java, RemotingCommand)
        return java

    monkeypatch.setattr(client, "invoke", not_supported)
    monkeypatch.setattr(mqctl.runner, "_client", lambda s: client)
    rc, out, err = main("ha", "status", "-b", "127.0.0.1:10911")
    assert (rc, out) == (1, "")
    assert err == "error: broker 127.0.0.1:10911 does not support HA status (4.x)\n"

