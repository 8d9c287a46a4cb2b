# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Every real capture under ../shared/captures decodes, and what its MANIFEST/README says holds.

The expectations below are data copied from the MANIFESTs (counts of requests per code, of
(request code, response code) pairs, of oneway requests, and named header values). Each file is
decoded by the capture pipeline (``wire.capture``); the independent test helper
``tests/pcaputil.py`` supplies the raw bytes that frames are re-encoded against.
"""

from __future__ import annotations

import collections
import functools
import itertools
from typing import Any

import pytest

from tests.conftest import CAPTURES, shared_path
from tests.pcaputil import streams
from wire import (
    DecodeError,
    FrameBuffer,
    FrameTooLarge,
    HeaderLengthOutOfRange,
    SerializeType,
    UnknownSerializeType,
    decode_command,
    decode_frame,
    encode_command,
)
from wire.capture import CaptureDecoder, CommandRow, HaRow, ProblemRow, decode_capture, read_records

pytestmark = pytest.mark.shared

HA_PORTS = {10912, 10922, 30912, 31912}

# ---------------------------------------------------------------------------------------------------
# Expectations from java-4.9.8/MANIFEST.md, java-5.0.0/MANIFEST.md and deepflow/README.md.
#   requests: request code -> exact count of (non-oneway) requests
#   pairs:    (request code, response code) -> exact count of paired responses
#   oneway:   request code -> exact count of oneway requests
#   unanswered: request code -> requests left without a response
#   all_ok:   every response in the file has code 0
#   ext:      (request code, key, value): some request with that code carries the ext field
#   resp_ext: (request code, key, value): some response to that code carries the ext field
#   remark:   (request code, remark): some response to that code carries the remark
#   serialize: (request code, type): every request with that code and its responses use the type
EXPECT: dict[str, dict[str, Any]] = {
    "java-4.9.8/01-broker-registration.pcap": {
        "requests": {103: 5, 21: 4, 43: 4, 45: 4, 201: 4}, "all_ok": True,
        "resp_ext": [(103, "masterAddr", "127.0.0.1:10911"), (103, "haServerAddr", "127.0.0.1:10912")],
    },
    "java-4.9.8/02-clusterList.pcap": {"requests": {106: 1, 28: 2, 35: 2}, "all_ok": True},
    "java-4.9.8/02-topicList.pcap": {"pairs": {(206, 0): 1}},
    "java-4.9.8/02-topicRoute.pcap": {"pairs": {(105, 0): 2}, "ext": [(105, "topic", "CapTopic")]},
    "java-4.9.8/02-topicStatus.pcap": {"pairs": {(202, 0): 1}, "ext": [(105, "topic", "CapTopic")]},
    "java-4.9.8/02-brokerStatus.pcap": {"pairs": {(28, 0): 1}},
    "java-4.9.8/02-getBrokerConfig.pcap": {"pairs": {(26, 0): 1}},
    "java-4.9.8/02-consumerProgress.pcap": {
        "pairs": {(208, 0): 1, (105, 0): 2},
        "ext": [(105, "topic", "%RETRY%CapGroup"), (105, "topic", "TBW102"), (208, "consumerGroup", "CapGroup")],
    },
    "java-4.9.8/02-topicClusterList.pcap": {"pairs": {(106, 0): 1}},
    "java-4.9.8/02-getNamesrvConfig.pcap": {"pairs": {(319, 0): 1}},
    "java-4.9.8/03-updateTopic.pcap": {"pairs": {(106, 0): 1, (17, 0): 1, (103, 0): 1},
                                       "ext": [(17, "topic", "AdmTopic")]},
    "java-4.9.8/03-updateSubGroup.pcap": {"pairs": {(106, 0): 1, (200, 0): 1}},
    "java-4.9.8/03-updateKvConfig.pcap": {
        "pairs": {(100, 0): 1},
        "ext": [(100, "namespace", "ORDER_TOPIC_CONFIG"), (100, "key", "AdmTopic"), (100, "value", "broker-a:4")],
    },
    "java-4.9.8/03-deleteKvConfig.pcap": {"pairs": {(102, 0): 1}},
    "java-4.9.8/03-updateTopicPerm.pcap": {"pairs": {(106, 0): 1, (17, 0): 1, (103, 0): 3},
                                           "ext": [(17, "perm", "4")]},
    "java-4.9.8/03-deleteTopic.pcap": {"pairs": {(215, 0): 1, (216, 0): 1}},
    "java-4.9.8/03-wipeWritePerm.pcap": {"pairs": {(205, 0): 1}, "resp_ext": [(205, "wipeTopicCount", "13")]},
    "java-4.9.8/03-addWritePerm.pcap": {"pairs": {(327, 0): 1}, "resp_ext": [(327, "addTopicCount", "13")]},
    "java-4.9.8/04-rocketmq-clusterList.pcap": {
        "pairs": {(106, 0): 1, (28, 0): 2},
        "serialize": [(106, SerializeType.ROCKETMQ), (28, SerializeType.ROCKETMQ), (21, SerializeType.JSON)],
    },
    "java-4.9.8/04-rocketmq-topicRoute.pcap": {"serialize": [(105, SerializeType.ROCKETMQ)],
                                               "ext": [(105, "topic", "CapTopic")]},
    "java-4.9.8/04-rocketmq-brokerStatus.pcap": {"pairs": {(28, 0): 1}, "serialize": [(28, SerializeType.ROCKETMQ)]},
    "java-4.9.8/04-rocketmq-sendMessage.pcap": {
        "pairs": {(310, 0): 1, (35, 0): 4}, "serialize": [(310, SerializeType.ROCKETMQ)],
        "ext": [(310, "b", "CapTopic"), (310, "n", "broker-a")], "resp_ext": [(310, "queueId", "1")],
        "header_length": [(310, 540)],
    },
    "java-4.9.8/04-rocketmq-consumeMessage.pcap": {"requests": {31: 4, 30: 4, 11: 8},
                                                   "pairs": {(11, 0): 4, (11, 19): 4}},
    "java-4.9.8/04-rocketmq-servers-startup.pcap": {"serialize": [(103, SerializeType.ROCKETMQ)]},
    "java-4.9.8/05-cpp-produce.pcap": {
        "pairs": {(10, 0): 30, (105, 17): 1}, "oneway": {103: 1},
        "ext": [(105, "topic", "CppTopic"), (105, "topic", "TBW102"), (10, "defaultTopic", "TBW102"),
                (10, "sysFlag", "0"), (10, "sysFlag", "1")],
    },
    "java-4.9.8/05-cpp-consume.pcap": {"requests": {14: 4, 11: 8, 15: 4}, "pairs": {(105, 17): 1},
                                       "ext": [(105, "topic", "%RETRY%CppGroup")], "server_oneway": {40: 2}},
    "java-4.9.8/06-alions-produce.pcap": {"pairs": {(310, 0): 15}, "ext": [(310, "k", "false"), (310, "d", "4")]},
    "java-4.9.8/06-alions-consume.pcap": {"requests": {105: 3, 34: 4, 38: 3, 14: 5, 11: 9, 15: 5},
                                          "server_oneway": {40: 4}},
    "java-4.9.8/07-sendMessage-tag-key.pcap": {
        "pairs": {(105, 17): 1, (310, 0): 1}, "ext": [(105, "topic", "QryTopic")],
        "resp_ext": [(310, "queueId", "3"), (310, "queueOffset", "0"),
                     (310, "msgId", "7F00000100002A9F0000000000008870")],
    },
    "java-4.9.8/07-queryMsgByKey.pcap": {"pairs": {(12, 0): 1}, "ext": [(12, "key", "qkey-7")]},
    "java-4.9.8/07-queryMsgByOffset.pcap": {"pairs": {(11, 0): 1, (300, 0): 1}, "ext": [(11, "queueId", "3")]},
    "java-4.9.8/07-queryMsgById-offsetId.pcap": {"pairs": {(33, 0): 1, (300, 0): 1}, "ext": [(33, "offset", "34928")]},
    "java-4.9.8/07-queryMsgByUniqueKey.pcap": {"pairs": {(12, 0): 1, (300, 0): 1},
                                               "ext": [(12, "_UNIQUE_KEY_QUERY", "true")]},
    "java-4.9.8/07-printMsg.pcap": {"requests": {30: 4, 31: 4}, "pairs": {(11, 0): 1}},
    "java-4.9.8/08-ha-catchup-from-zero.pcap": {"pairs": {(10, 0): 8}},
    "java-4.9.8/09-sync-master-slave-up.pcap": {"pairs": {(10, 0): 5, (310, 0): 1}},
    "java-4.9.8/09-sync-master-slave-frozen.pcap": {"requests": {10: 3}, "pairs": {(10, 12): 3},
                                                    "unanswered": {35: 1}},
    "java-4.9.8/09-sync-master-slave-down.pcap": {"requests": {10: 9, 310: 1}, "pairs": {(10, 11): 9, (310, 11): 1}},
    "java-4.9.8/10-error-responses.pcap": {
        "pairs": {(105, 17): 1, (9999, 3): 1, (11, 24): 1, (11, 21): 1, (10, 0): 1, (10, 16): 1, (10, 14): 1},
        "unanswered": {9999: 1},
        "remark": [(9999, " request type 9999 not supported"), (11, "OFFSET_OVERFLOW_BADLY"),
                   (10, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden.")],
        "resp_ext": [(11, "nextBeginOffset", "5"), (11, "maxOffset", "5"), (11, "minOffset", "0")],
        "ext": [(105, "topic", "NoSuchTopic_cap10")],
    },
    "java-4.9.8/10-malformed-frames.pcap": {"malformed": True},
    "java-5.0.0/11-controller-startup.pcap": {
        "pairs": {(1003, 0): 2, (1001, 0): 1},
        "resp_ext": [(1003, "masterAddress", "127.0.0.1:30911"), (1003, "brokerId", "2"),
                     (1001, "newSyncStateSetEpoch", "2"), (103, "haServerAddr", "127.0.0.1:30912")],
        "ext": [(1003, "epoch", "-1"), (1003, "maxOffset", "0"), (103, "haServerAddr", "127.0.0.1:30912")],
    },
    "java-5.0.0/12-haStatus-master.pcap": {"pairs": {(907, 0): 1}},
    "java-5.0.0/12-haStatus-slave.pcap": {"pairs": {(907, 0): 1}},
    "java-5.0.0/12-getSyncStateSet.pcap": {"pairs": {(1006, 0): 1}},
    "java-5.0.0/12-getBrokerEpoch.pcap": {"pairs": {(1007, 0): 2}},
    "java-5.0.0/12-getControllerMetaData.pcap": {
        "resp_ext": [(1005, "controllerLeaderId", "n0"), (1005, "controllerLeaderAddress", "127.0.0.1:9878"),
                     (1005, "isLeader", "true"), (1005, "group", "group1")],
    },
    "java-5.0.0/12-clusterList.pcap": {"pairs": {(28, 0): 2}},
    "java-5.0.0/13-failover.pcap": {
        "requests": {10: 93}, "pairs": {(10, 0): 93, (1001, 0): 1, (1003, 0): 1}, "oneway": {1008: 1},
        "ext": [(1008, "masterAddress", "127.0.0.1:31911"), (1008, "brokerId", "0"), (1008, "masterEpoch", "2"),
                (1008, "syncStateSetEpoch", "2"), (1003, "epoch", "1"), (1003, "maxOffset", "48130")],
        "resp_ext": [(1003, "brokerId", "1"), (1003, "masterEpoch", "2"), (1003, "syncStateSetEpoch", "3"),
                     (1001, "newSyncStateSetEpoch", "4")],
    },
    "deepflow/rocketmq-get-routeinfo-by-topic.pcap": {"requests": {105: 3}, "pairs": {(105, 0): 3}, "frames": 6},
    "deepflow/rocketmq-heartbeat.pcap": {"requests": {34: 1}, "pairs": {(34, 0): 1}, "frames": 2},
    "deepflow/rocketmq-get-consumer-list-by-group.pcap": {"pairs": {(38, 0): 1}, "frames": 2},
    "deepflow/rocketmq-send-message-v2.pcap": {"requests": {310: 2}, "pairs": {(310, 0): 2}, "frames": 4},
    "deepflow/rocketmq-update-consumer-offset.pcap": {"oneway": {15: 3}, "frames": 3},
    "deepflow/rocketmq-pull-message.pcap": {
        "requests": {11: 5}, "pairs": {(11, 19): 2, (11, 0): 2}, "frames": 9,
        "remark": [(11, "NO_MESSAGE_IN_QUEUE"), (11, "OFFSET_OVERFLOW_ONE")],
    },
    "deepflow/rocketmq-producer-otel.pcap": {"requests": {310: 3}, "pairs": {(310, 0): 3}, "frames": 6},
    "deepflow/rocketmq-producer-skywalking.pcap": {"requests": {310: 3}, "pairs": {(310, 0): 3}, "frames": 6},
    "deepflow/rocketmq-consumer-otel.pcap": {"requests": {11: 3}, "pairs": {(11, 0): 3}, "frames": 6},
    "deepflow/rocketmq-consumer-skywalking.pcap": {"requests": {11: 3}, "pairs": {(11, 0): 3}, "frames": 6},
}


def _all_captures() -> list[str]:
    found = sorted(str(p.relative_to(CAPTURES)) for p in CAPTURES.glob("*/*.pcap")) if CAPTURES.is_dir() else []
    return found or sorted(EXPECT)


@functools.cache
def _decoded(name: str) -> tuple[list[Any], CaptureDecoder]:
    path = shared_path("captures", name)
    dec = CaptureDecoder(capture=name)
    return list(decode_capture(path, decoder=dec)), dec


def _load(name: str) -> tuple[list[Any], CaptureDecoder]:
    shared_path("captures", name)  # skips with a reason when ../shared is absent
    return _decoded(name)


def _commands(rows: list[Any]) -> list[CommandRow]:
    return [r for r in rows if isinstance(r, CommandRow)]


def test_every_capture_has_expectations() -> None:
    shared_path("captures")
    assert set(_all_captures()) == set(EXPECT)


@pytest.mark.parametrize("name", _all_captures())
def test_capture_decodes_without_decode_problems(name: str) -> None:
    rows, dec = _load(name)
    problems = [r for r in rows if isinstance(r, ProblemRow)]
    if EXPECT[name].get("malformed"):
        assert {p.verdict for p in problems} <= {"decode", "skipped"}
    elif name.startswith("deepflow/"):
        # these hold only selected packets of each connection: holes, but every frame present decodes
        assert {p.verdict for p in problems} <= {"gap"}
    else:
        assert problems == []
    assert _commands(rows), "no remoting command decoded"
    assert all(c.protocol in ("remoting", "ha") for c in dec.conversations)


@pytest.mark.parametrize("name", _all_captures())
def test_manifest_counts(name: str) -> None:
    rows, _dec = _load(name)
    exp = EXPECT[name]
    cmds = _commands(rows)
    requests = collections.Counter(r.command.code for r in cmds
                                   if not r.command.is_response and not r.command.is_oneway)
    oneway = collections.Counter(r.command.code for r in cmds if r.command.is_oneway)
    pairs = collections.Counter((r.request.command.code, r.command.code) for r in cmds
                                if r.command.is_response and r.request is not None)
    answered = {id(r.request) for r in cmds if r.request is not None}
    unanswered = collections.Counter(r.command.code for r in cmds if not r.command.is_response
                                     and not r.command.is_oneway and id(r) not in answered)
    for code, n in exp.get("requests", {}).items():
        assert requests[code] == n, f"requests with code {code}"
    for pair, n in exp.get("pairs", {}).items():
        assert pairs[pair] == n, f"responses {pair}"
    for code, n in exp.get("oneway", {}).items():
        assert oneway[code] == n, f"oneway {code}"
    for code, n in exp.get("server_oneway", {}).items():
        assert sum(1 for r in cmds if r.command.is_oneway and r.command.code == code and r.direction == 1) == n
    for code, n in exp.get("unanswered", {}).items():
        assert unanswered[code] == n, f"unanswered {code}"
    if exp.get("all_ok"):
        assert {r.command.code for r in cmds if r.command.is_response} == {0}
    if "frames" in exp:
        assert len(cmds) == exp["frames"]
    for code, key, value in exp.get("ext", []):
        assert any(not r.command.is_response and r.command.code == code and r.command.ext_fields.get(key) == value
                   for r in cmds), f"no request {code} with {key}={value}"
    for code, key, value in exp.get("resp_ext", []):
        assert any(r.request is not None and r.request.command.code == code
                   and r.command.ext_fields.get(key) == value for r in cmds), f"no answer to {code} with {key}={value}"
    for code, remark in exp.get("remark", []):
        assert any(r.request is not None and r.request.command.code == code and r.command.remark == remark
                   for r in cmds), f"no answer to {code} with remark {remark!r}"
    for code, kind in exp.get("serialize", []):
        related = [r for r in cmds if (not r.command.is_response and r.command.code == code)
                   or (r.request is not None and r.request.command.code == code)]
        assert related and {r.command.serialize_type for r in related} == {kind}
    for code, length in exp.get("header_length", []):
        assert any(r.command.code == code and not r.command.is_response and r.header_length == length for r in cmds)


def test_responses_pair_with_requests_by_opaque_and_come_later() -> None:
    rows, _dec = _load("java-4.9.8/05-cpp-produce.pcap")
    for r in _commands(rows):
        if r.request is not None:
            assert r.request.command.opaque == r.command.opaque
            assert r.request.conv is r.conv and r.request.direction != r.direction
            assert r.request.number < r.number
            assert r.latency is not None and r.latency >= 0


def _raw_frames(name: str) -> dict[tuple[str, int, str, int], list[tuple[int, bytearray]]]:
    return {d.key: d.chunks for d in streams(shared_path("captures", name))}


def _raw(chunks: list[tuple[int, bytearray]], offset: int, size: int) -> bytes:
    for start, data in chunks:
        if start <= offset and offset + size <= start + len(data):
            return bytes(data[offset - start:offset - start + size])
    raise AssertionError(f"no chunk holds [{offset}, {offset + size})")


@pytest.mark.parametrize("name", _all_captures())
def test_reencoding(name: str) -> None:
    """ROCKETMQ-binary frames re-encode to the same bytes; JSON frames round-trip to an equal command."""
    rows, _dec = _load(name)
    raw = _raw_frames(name)
    for r in _commands(rows):
        data = _raw(raw[r.endpoints], r.offset, r.size)
        assert decode_command(data) == r.command
        again = encode_command(r.command)
        if r.command.serialize_type is SerializeType.ROCKETMQ:
            # byte for byte, including the frames whose ext block repeats every key (the Java
            # client's ACL hook; see RemotingCommand.wire_ext)
            assert again == data
        else:
            assert decode_command(again) == r.command


@pytest.mark.parametrize("name", [n for n in _all_captures() if not EXPECT[n].get("malformed")])
def test_frame_counts_match_an_independent_split(name: str) -> None:
    """Every remoting frame the test helper's reassembly holds is found by the capture pipeline."""
    rows, _dec = _load(name)
    ours = collections.Counter((r.endpoints, r.offset) for r in _commands(rows))
    theirs: collections.Counter[Any] = collections.Counter()
    for d in streams(shared_path("captures", name)):
        if d.sport in HA_PORTS or d.dport in HA_PORTS:
            continue
        for start, data in d.chunks:
            fb = FrameBuffer()
            fb.feed(data)
            for frame in fb:
                decode_frame(frame)
                theirs[(d.key, start + frame.offset)] += 1
            assert fb.buffered == 0
    assert ours == theirs


def test_malformed_frames_give_the_decode_errors_at_the_right_offsets() -> None:
    rows, _dec = _load("java-4.9.8/10-malformed-frames.pcap")
    errors = [r for r in rows if isinstance(r, ProblemRow) and r.verdict == "decode"]
    found = sorted((type(p.error).__name__, p.error.offset, p.error.field, p.conv.server_port)
                   for p in errors if p.error is not None)
    assert found == sorted([
        ("HeaderLengthOutOfRange", 4, "headerLength", 9876), ("HeaderLengthOutOfRange", 4, "headerLength", 10911),
        ("UnknownSerializeType", 4, "serializeType", 9876), ("UnknownSerializeType", 4, "serializeType", 10911),
        ("FrameTooLarge", 0, "totalLength", 9876), ("FrameTooLarge", 0, "totalLength", 10911),
    ])
    for p in errors:
        assert isinstance(p.error, (HeaderLengthOutOfRange, UnknownSerializeType, FrameTooLarge))
        assert isinstance(p.error, DecodeError) and p.offset == p.error.offset and p.direction == 0
        # the servers closed those connections without a word
        assert p.conv.frames == [0, 0] and p.conv.bytes[1] == 0


def test_long_loopback_records_are_read_whole() -> None:
    path = shared_path("captures", "java-4.9.8/08-ha-catchup-from-zero.pcap")
    lengths = collections.Counter(len(data) for _n, _ts, _lt, data in read_records(path))
    assert max(lengths) == 65549 and lengths[65549] > 0


def _ha(name: str) -> list[HaRow]:
    rows, _dec = _load(name)
    return [r for r in rows if isinstance(r, HaRow)]


def test_ha_catchup_from_zero() -> None:
    ha = _ha("java-4.9.8/08-ha-catchup-from-zero.pcap")
    transfers = [r.message for r in ha if r.direction == 1]
    reports = [r.message.max_offset for r in ha if r.direction == 0]
    data = [t for t in transfers if t.data]
    assert len(data) == 113 and sum(len(t.data) for t in data) == 3_641_729
    assert all(len(t.data) <= 32768 for t in data)
    assert sum(1 for t in transfers if not t.data) == 3
    assert len(reports) == 116 and reports[0] == 0 and reports[1] == 32768 and reports[-1] == 3_641_729
    assert reports == sorted(reports)
    for prev, nxt in itertools.pairwise(data):
        assert nxt.phy_offset == prev.end_offset
    assert {r.variant for r in ha} == {"v4"}


def test_ha_registration_heartbeats() -> None:
    ha = _ha("java-4.9.8/01-broker-registration.pcap")
    reports = [r.message for r in ha if r.direction == 0]
    beats = [r.message for r in ha if r.direction == 1]
    assert [m.max_offset for m in reports] == [0] * 6
    assert [(m.phy_offset, len(m.data)) for m in beats] == [(0, 0)] * 6


def test_ha_sync_master_transfers() -> None:
    up = [r.message for r in _ha("java-4.9.8/09-sync-master-slave-up.pcap") if r.direction == 1 and r.message.data]
    assert len(up) == 6 and sum(len(m.data) for m in up) == 3554
    assert up[0].phy_offset == 6985318 and up[-1].end_offset == 6988872
    frozen = _ha("java-4.9.8/09-sync-master-slave-frozen.pcap")
    sent = [r.message for r in frozen if r.direction == 1 and r.message.data]
    assert len(sent) == 3 and sum(len(m.data) for m in sent) == 1716 and sent[0].phy_offset == 6988872
    assert not [r for r in frozen if r.direction == 0]
    startup = [r.message for r in _ha("java-4.9.8/04-rocketmq-servers-startup.pcap")
               if r.direction == 1 and r.message.data]
    assert [(m.phy_offset, len(m.data)) for m in startup] == [(6996382, 205)]


def test_autoswitch_handshake_at_startup() -> None:
    ha = _ha("java-5.0.0/11-controller-startup.pcap")
    first_slave = next(r.message for r in ha if r.direction == 0)
    first_master = next(r.message for r in ha if r.direction == 1)
    assert first_slave.address == "127.0.0.1:31911"
    assert (first_master.max_phy_offset, first_master.last_epoch) == (0, 1)
    assert [(e.epoch, e.start_offset) for e in first_master.entries] == [(1, 0)]
    assert {r.variant for r in ha} == {"autoswitch-5.0.0"}


def test_failover_rejoin() -> None:
    rows, dec = _load("java-5.0.0/13-failover.pcap")
    ha = [r for r in rows if isinstance(r, HaRow)]
    new = [r for r in ha if r.conv.server_port == 31912]
    old = [r for r in ha if r.conv.server_port == 30912]
    reply = next(r.message for r in new if r.direction == 1)
    assert (reply.max_phy_offset, reply.last_epoch) == (69550, 2)
    assert [(e.epoch, e.start_offset) for e in reply.entries] == [(1, 0), (2, 48130)]
    acks = [r.message.max_offset for r in new if r.direction == 0 and hasattr(r.message, "max_offset")]
    assert acks[0] == 48130
    data = [r.message for r in new if r.direction == 1 and getattr(r.message, "data", b"")]
    assert len(data) == 47 and sum(len(m.data) for m in data) == 79_560 and data[-1].end_offset == 127_690
    assert [r.message.confirm_offset for r in old if r.direction == 1][-1] == 47_110
    assert [r.message.max_offset for r in old if r.direction == 0][-1] == 48_130
    assert {c.ha_variant for c in dec.conversations if c.protocol == "ha"} == {"autoswitch-5.0.0"}
