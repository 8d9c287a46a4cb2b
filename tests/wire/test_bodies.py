# Licensed under the Apache License, Version 2.0. See LICENSE.
"""wire.bodies: typed RocketMQ bodies against PROTOCOL.md literals, the real captures and properties.

* ``fixtures/vectors/bodies/protocol_literals.json``: the literal bodies of PROTOCOL.md §4 and §8.6 decode to
  the listed values and encode back to the identical text in their form.
* ``fixtures/vectors/bodies/register_broker_inflated.hex``: hand-annotated compressed REGISTER_BROKER layouts.
* Every body in every capture under ../shared/captures whose request code has a registered class
  decodes; Java-written bodies re-encode to the identical text; values are checked against the
  MANIFESTs and the mqadmin ``.txt`` outputs beside the captures.
* hypothesis: every body type round-trips in both forms; arbitrary and mutated bytes give only
  DecodeError.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import json
import re
import struct
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CAPTURES, shared_path
from tests.pcaputil import streams
from wire import DecodeError, FrameBuffer, LanguageCode, RemotingCommand, RequestCode, decode_frame, fastjson
from wire import bodies as B
from wire.bodies import _base
from wire.bodies.common import MessageQueueKey
from wire.bodies.ha import LONG_MAX

VECTORS = Path(__file__).resolve().parents[2] / "fixtures" / "vectors" / "bodies"
LITERALS = json.loads((VECTORS / "protocol_literals.json").read_text())["cases"]


# =========================================================================== helpers

_STEP = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


def resolve(obj: Any, path: str) -> Any:
    """Follow ``a.b[0]["k"]`` through attributes, sequence indexes and mapping keys."""
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        assert m, f"bad path {path!r} at {pos}"
        name, index, key = m.groups()
        if name is not None:
            obj = getattr(obj, name)
        elif index is not None:
            obj = obj[int(index)]
        else:
            obj = obj[json.loads(f'"{key}"')]
        pos = m.end()
    return obj


def plain(value: Any) -> Any:
    """A decoded value in JSON terms, to compare with a vector's expectation."""
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def unknown_properties(value: Any) -> bool:
    """Whether a decoded body holds properties its class does not know (anywhere inside)."""
    if isinstance(value, B.JsonBody):
        return bool(value.extra) or any(
            unknown_properties(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != "extra")
    if isinstance(value, Mapping):
        return any(unknown_properties(v) for v in value.values())
    if isinstance(value, tuple):
        return any(unknown_properties(v) for v in value)
    return False


def utc_ms(text: str) -> int:
    """'2026-11-22 09:57:42' or '2026-11-22 09:57:42,397' (UTC) as epoch milliseconds."""
    stamp, _, millis = text.partition(",")
    dt = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.UTC)
    return int(dt.timestamp()) * 1000 + int(millis or 0)


# =========================================================================== PROTOCOL.md literals


@pytest.mark.parametrize("case", LITERALS, ids=[c["id"] for c in LITERALS])
def test_protocol_literals(case: dict[str, Any]) -> None:
    cls = getattr(B, case["class"])
    text = case["text"].encode()
    body = cls.decode(text)
    for path, expected in case["expect"].items():
        assert plain(resolve(body, path)) == expected, path
    assert body.encode(standard=case["standard"]) == text
    assert cls.decode(body.encode(standard=not case["standard"])) == body


def test_both_route_forms_decode_to_the_same_route() -> None:
    legacy, standard = (B.TopicRouteData.decode(c["text"].encode()) for c in LITERALS
                        if c["id"] in ("route-legacy-4.2", "route-standard-4.2"))
    assert legacy == standard


@pytest.mark.parametrize(("version", "accept", "standard"), [
    (400, None, False), (401, None, True), (409, False, True), (63, None, False), (63, "true", True),
    (63, "false", False), (121, True, True), (293, "TRUE", True),
])
def test_route_json_standard(version: int, accept: bool | str | None, standard: bool) -> None:
    # DefaultRequestProcessor#getRouteInfoByTopic: version >= V4_9_4 or acceptStandardJsonOnly
    assert B.route_json_standard(version, accept) is standard


def test_standard_form_sorts_maps() -> None:
    broker = B.BrokerData(cluster="c", broker_name="b", broker_addrs={2: "h2", 0: "h0", 10: "h10"})
    assert broker.encode() == b'{"brokerAddrs":{2:"h2",0:"h0",10:"h10"},"brokerName":"b","cluster":"c"}'
    assert broker.encode(standard=True) == (
        b'{"brokerAddrs":{"0":"h0","2":"h2","10":"h10"},"brokerName":"b","cluster":"c"}')


def test_message_queue_keys_in_both_forms() -> None:
    mq = [B.MessageQueue(topic="T", broker_name="b", queue_id=q) for q in (1, 0)]
    stats = B.ConsumeStats(offset_table={m: B.OffsetWrapper(broker_offset=5, consumer_offset=4,
                                                            last_timestamp=7) for m in mq})
    wrapper = '{"brokerOffset":5,"consumerOffset":4,"lastTimestamp":7}'
    plain_text = (b'{"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:' + wrapper.encode()
                  + b',{"brokerName":"b","queueId":0,"topic":"T"}:' + wrapper.encode() + b"}}")
    assert stats.encode() == plain_text
    standard = stats.encode(standard=True)
    # MapSortField orders by MessageQueue.compareTo (topic, broker name, queue id)
    assert standard.startswith(b'{"consumeTps":0.0,"offsetTable":{"{\\"brokerName\\":\\"b\\",\\"queueId\\":0,')
    assert B.ConsumeStats.decode(plain_text) == B.ConsumeStats.decode(standard) == stats


# =========================================================================== lenient reading, errors


def test_reader_is_lenient_like_fastjson() -> None:
    q = B.QueueData.decode(b'{"brokerName":7,"perm":"6","readQueueNums":4.0,"WRITE_QUEUE_NUMS":"2.9",'
                           b'"topicSysFlag":true,"future":{"x":[1]}}')
    assert (q.broker_name, q.perm, q.read_queue_nums, q.write_queue_nums, q.topic_sys_flag) == ("7", 6, 4, 2, 1)
    assert dict(q.extra) == {"future": {"x": [1]}}
    assert q.encode() == (b'{"brokerName":"7","future":{"x":[1]},"perm":6,"readQueueNums":4,"topicSysFlag":1,'
                          b'"writeQueueNums":2}')
    # smartMatch: case, '_' and '-' ignored; an "is" prefix for booleans
    ha = B.HARuntimeInfo.decode(b'{"isMaster":"true","master_commit_log_max_offset":"12"}')
    assert ha.master is True and ha.master_commit_log_max_offset == 12
    hb = B.HeartbeatData.decode(b'{"clientId":"c1"}')
    assert hb.client_id == "c1"


def test_enums_by_name_ordinal_or_unknown() -> None:
    c = B.ConsumerData.decode(b'{"consumeType":1,"messageModel":"CLUSTERING","consumeFromWhere":"SOMEDAY"}')
    assert c.consume_type is B.ConsumeType.CONSUME_PASSIVELY
    assert c.message_model is B.MessageModel.CLUSTERING
    assert c.consume_from_where == "SOMEDAY"
    assert b'"consumeFromWhere":"SOMEDAY","consumeType":"CONSUME_PASSIVELY"' in c.encode()
    assert B.ConsumerData.decode(b'{"consumeType":9}').consume_type == 9


@pytest.mark.parametrize(("cls", "text", "field"), [
    (B.TopicRouteData, b'{"brokerDatas":[{"brokerAddrs":[1]}]}', "brokerDatas[0].brokerAddrs"),
    (B.TopicRouteData, b'{"brokerDatas":[{"brokerAddrs":{"x":"a"}}]}', "brokerDatas[0].brokerAddrs.x"),
    (B.TopicRouteData, b'{"brokerDatas":[{"brokerAddrs":{0:{}}}]}', "brokerDatas[0].brokerAddrs[0]"),
    (B.TopicRouteData, b'{"queueDatas":[{},{"perm":"abc"}]}', "queueDatas[1].perm"),
    (B.TopicRouteData, b'{"queueDatas":[{"perm":2147483648}]}', "queueDatas[0].perm"),
    (B.TopicRouteData, b'{"queueDatas":{}}', "queueDatas"),
    (B.ClusterInfo, b'{"clusterAddrTable":{"c":"b"}}', "clusterAddrTable.c"),
    (B.ConsumeStats, b'{"offsetTable":{{"queueId":"x"}:{}}}', "offsetTable[{\"queueId\":\"x\"}].queueId"),
    (B.ConsumeStats, b'{"offsetTable":{"{bad":{}}}', 'offsetTable["{bad"]'),
    (B.HARuntimeInfo, b'{"haConnectionInfo":[{"inSync":"maybe"}]}', "haConnectionInfo[0].inSync"),
    (B.EpochEntryCache, b'{"maxOffset":1e400}', "maxOffset"),
    (B.ConsumeStats, b'{"consumeTps":1e400}', "consumeTps"),
    (B.KVTable, b"[]", None),
])
def test_errors_name_the_json_path(cls: type, text: bytes, field: str | None) -> None:
    with pytest.raises(DecodeError) as info:
        cls.decode(text)
    assert info.value.field == field


# =========================================================================== TopicConfig text, compressed register


@pytest.mark.parametrize(("text", "fields"), [
    ("TopicTest 4 4 6 SINGLE_TAG", {"topic_name": "TopicTest", "read_queue_nums": 4, "attributes": None}),
    ("TopicTest 4 4 6 SINGLE_TAG {}", {"attributes": {}}),
    ("T 1 2 7 MULTI_TAG {\"+k\":\"v\"}", {"write_queue_nums": 2, "perm": 7, "attributes": {"+k": "v"}}),
    ("T 1 2 7 SINGLE_TAG ", {"attributes": None}),  # 5.x with null attributes: trailing separator
    ("T 1 2 7 SINGLE_TAG {\"k\":\"a b\"}", {"attributes": None}),  # split breaks the JSON: dropped
    ("T -1 +2 0 SINGLE_TAG", {"read_queue_nums": -1, "write_queue_nums": 2}),
])
def test_topic_config_text(text: str, fields: dict[str, Any]) -> None:
    # TopicConfig.decode(String) in 5.x
    config = B.TopicConfig.decode_text(text)
    for name, value in fields.items():
        assert plain(getattr(config, name)) == value
    if not text.endswith(" ") and "a b" not in text and "+2" not in text:
        assert config.encode_text() == text


@pytest.mark.parametrize("text", ["T 1 2 7", "T 1 x 7 SINGLE_TAG", "T 1 2 7 ONE_TAG", "T 1 2 99999999999 SINGLE_TAG",
                                  "T 1  2 7 SINGLE_TAG", "", "T 1 2 7 single_tag"])
def test_bad_topic_config_text(text: str) -> None:
    with pytest.raises(DecodeError):
        B.TopicConfig.decode_text(text)


def _hex_cases() -> dict[str, bytes]:
    cases: dict[str, bytearray] = {}
    current = None
    for line in (VECTORS / "register_broker_inflated.hex").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("=="):
            current = cases.setdefault(line[2:].strip(), bytearray())
        elif line:
            assert current is not None
            current += bytes.fromhex(line)
    return {k: bytes(v) for k, v in cases.items()}


HEX_CASES = _hex_cases()


@pytest.mark.parametrize("name", sorted(HEX_CASES))
def test_compressed_register_body_layout(name: str) -> None:
    inflated = HEX_CASES[name]
    body = B.RegisterBrokerBody.decode(zlib.compress(inflated), compressed=True)
    wrapper = body.topic_config_serialize_wrapper
    assert zlib.decompress(body.encode(compressed=True)) == inflated
    assert wrapper.data_version is not None and wrapper.data_version.timestamp == 1700000000000
    assert body == B.decode_body(103, False, zlib.compress(inflated, 1), ext_fields={"compressed": "true"})
    if name == "v4.9":
        assert list(wrapper.topic_config_table) == ["TopicTest", "%RETRY%cg"]
        assert wrapper.topic_queue_mapping_info_map is None and body.filter_server_list == ()
        assert wrapper.data_version.state_version is None
    elif name == "v5":
        assert wrapper.topic_config_table["TopicTest"].attributes == {}
        assert wrapper.topic_queue_mapping_info_map == {} and body.filter_server_list == ("10.0.0.1:30000",)
    else:
        config = wrapper.topic_config_table["StaticTopic"]
        assert config.topic_filter_type is B.TopicFilterType.MULTI_TAG and config.attributes == {"+delay.level": "3"}
        info = wrapper.topic_queue_mapping_info_map["StaticTopic"]  # type: ignore[index]
        assert (info.bname, info.total_queues, dict(info.curr_id_map), info.scope) == ("broker-a", 8, {0: 0, 1: 1},
                                                                                       "__global__")


@pytest.mark.parametrize("mutate", [
    lambda raw: raw + b"\x00",  # one stray byte: not a mapping count
    lambda raw: raw + b"\x00\x00\x00",
    lambda raw: raw + b"\x00\x00\x00\x01",  # a mapping count with no mapping
    lambda raw: raw[:-1],
    lambda raw: b"\xff\xff\xff\xff" + raw[4:],  # negative length
    lambda raw: raw[:4] + b"\xff" + raw[5:],  # invalid UTF-8 in the data version
    lambda raw: raw.replace(b"SINGLE_TAG", b"SINGLE_TAX"),
    lambda raw: raw.replace(b"[]", b"[1"),
], ids=["stray1", "stray3", "mapping-count-only", "short", "negative", "utf8", "filter-type", "filter-json"])
def test_bad_compressed_register_bodies(mutate: Any) -> None:
    with pytest.raises(DecodeError):
        B.RegisterBrokerBody.decode(zlib.compress(mutate(HEX_CASES["v4.9"])), compressed=True)


@pytest.mark.parametrize("data", [b"", b"{}", zlib.compress(HEX_CASES["v4.9"])[:-3],
                                  zlib.compress(HEX_CASES["v4.9"]) + b"x"], ids=["empty", "json", "cut", "trailing"])
def test_bad_zlib_streams(data: bytes) -> None:
    with pytest.raises(DecodeError):
        B.RegisterBrokerBody.decode(data, compressed=True)


def test_compression_bomb_is_refused() -> None:
    with pytest.raises(DecodeError):
        B.RegisterBrokerBody.decode(zlib.compress(b"\x00" * (65 * 1024 * 1024)), compressed=True)


# =========================================================================== Properties text


def test_properties_reader_follows_java_properties_load() -> None:
    text = "a=1\n  # comment\n! also\n b : 2 \\\n   x\nc\\=d=e\r\nk\\u0041 v\n\nlast\\"
    assert B.decode_properties(text.encode()) == {"a": "1", "b": "2 x", "c=d": "e", "kA": "v", "last": ""}
    with pytest.raises(DecodeError):
        B.decode_properties(b"k=\\u12")


def test_properties_writer_is_java_by_default_and_escapes_on_request() -> None:
    table = {"a b": "=x\n", "k": " v\\"}
    assert B.encode_properties(table) == b"a b==x\n\nk= v\\\n"
    assert B.encode_properties(table, escape=True) == b"a\\ b=\\=x\\n\nk=\\ v\\\\\n"
    assert B.decode_properties(B.encode_properties(table, escape=True)) == table


# =========================================================================== captures


@dataclass(frozen=True)
class Seen:
    capture: str
    request: RemotingCommand
    response: RemotingCommand | None
    #: the body this entry is about: the request's, or the response's when ``response`` is set
    body: bytes

    @property
    def is_response(self) -> bool:
        return self.response is not None


HA_PORTS = {10912, 10922, 30912, 31912}


def _commands(path: Path) -> Iterator[tuple[tuple[str, int, str, int], RemotingCommand]]:
    for d in streams(path):
        if d.sport in HA_PORTS or d.dport in HA_PORTS:
            continue
        for _, chunk in d.chunks:
            buf = FrameBuffer()
            buf.feed(bytes(chunk))
            try:
                while (frame := buf.next_frame()) is not None:
                    yield d.key, decode_frame(frame)
            except DecodeError:
                continue  # the malformed-frame scenarios; framing has its own tests


@functools.cache
def captured(capture: str) -> tuple[Seen, ...]:
    path = shared_path("captures", *capture.split("/"))
    cmds = list(_commands(path))
    requests = {(key, c.opaque): c for key, c in cmds if not c.flag & 1}
    out: list[Seen] = []
    for key, c in cmds:
        if not c.flag & 1:
            if c.body:
                out.append(Seen(capture, c, None, c.body))
            continue
        req = requests.get(((key[2], key[3], key[0], key[1]), c.opaque))
        if req is not None and c.body and c.code == 0:
            out.append(Seen(capture, req, c, c.body))
    return tuple(out)


def capture_names() -> list[str]:
    names = sorted(f"{p.parent.name}/{p.name}" for p in CAPTURES.glob("*/*.pcap"))
    return names or ["java-4.9.8/01-broker-registration.pcap"]  # without ../shared: one test that skips


def registered(seen: Seen) -> type | None:
    table = B.RESPONSE_BODIES if seen.is_response else B.REQUEST_BODIES
    return table.get(seen.request.code)


def decode_seen(seen: Seen) -> Any:
    return B.decode_body(seen.request.code, seen.is_response, seen.body, ext_fields=seen.request.ext_fields)


def java_wrote(seen: Seen) -> bool:
    """Responses come from the Java servers; requests from Java unless the C++ client or ali-ons
    (which sends language JAVA with version 121) sent them."""
    return seen.is_response or (seen.request.language == LanguageCode.JAVA and seen.request.version != 121)


@pytest.mark.shared
@pytest.mark.parametrize("capture", capture_names())
def test_every_registered_body_in_the_captures_decodes_and_reencodes(capture: str) -> None:
    for seen in captured(capture):
        cls = registered(seen)
        if cls is None:
            continue
        body = decode_seen(seen)
        assert isinstance(body, cls)
        standard = seen.request.code == RequestCode.GET_ROUTEINFO_BY_TOPIC and B.route_json_standard(
            seen.request.version, seen.request.ext_fields.get("acceptStandardJsonOnly"))
        again = body.encode(standard=standard)
        if java_wrote(seen) and not unknown_properties(body):
            assert again == seen.body, (seen.request.code, seen.body[:200])
        else:
            assert cls.decode(again) == body


def _all(codes: set[int] | None = None, *, response: bool | None = None) -> list[Seen]:
    out = []
    for name in capture_names():
        for seen in captured(name):
            if (codes is None or seen.request.code in codes) and (response is None or seen.is_response == response):
                out.append(seen)
    return out


@pytest.mark.shared
def test_captures_hold_every_kind_of_registered_body() -> None:
    kinds = {(s.request.code, s.is_response) for s in _all() if registered(s) is not None}
    assert {(34, False), (103, False), (103, True), (105, True), (106, True), (21, True), (43, True), (201, True),
            (202, True), (206, True), (208, True), (26, True), (28, True), (319, True), (38, True), (200, False),
            (907, True), (1001, False), (1001, True), (1004, True), (1006, False), (1006, True),
            (1007, True), (60, True), (61, True), (402, True), (300, True), (45, True)} <= kinds


@pytest.mark.shared
def test_broker_registration_bodies() -> None:
    seen = [s for s in captured("java-4.9.8/01-broker-registration.pcap") if s.request.code == 103 and not s.is_response]
    assert len(seen) == 5
    for s in seen:
        ext = s.request.ext_fields
        # BrokerOuterAPI.registerBroker: bodyCrc32 = UtilAll.crc32(body), masked to a positive int
        assert int(ext["bodyCrc32"]) == zlib.crc32(s.body) & 0x7FFFFFFF
        assert ext["compressed"] == "false" and 1300 <= len(s.body) <= 1500
        body = decode_seen(s)
        tbw = body.topic_config_serialize_wrapper.topic_config_table["TBW102"]
        assert (tbw.perm, tbw.read_queue_nums, tbw.write_queue_nums) == (7, 8, 8)
        # the compressed form of the same body reads back without topicSysFlag/order
        packed = body.encode(compressed=True)
        assert B.RegisterBrokerBody.decode(packed, compressed=True) == body.without_compressed_losses()
    for s in _all({103}, response=False):
        assert int(s.request.ext_fields["bodyCrc32"]) == zlib.crc32(s.body) & 0x7FFFFFFF
    five = [decode_seen(s) for s in _all({103}, response=False) if s.capture.startswith("java-5.0.0")]
    assert five and all(b.topic_config_serialize_wrapper.topic_queue_mapping_info_map == {} for b in five)
    assert all(b.topic_config_serialize_wrapper.data_version.state_version == 0 for b in five)


@pytest.mark.shared
def test_topic_route_matches_mqadmin() -> None:
    (seen,) = [s for s in captured("java-4.9.8/02-topicRoute.pcap")
               if s.request.code == 105 and s.request.ext_fields["topic"] == "CapTopic"]
    route = decode_seen(seen)
    (queues,) = route.queue_datas
    assert (queues.read_queue_nums, queues.write_queue_nums, queues.perm) == (4, 4, 6)
    assert dict(route.broker_datas[0].broker_addrs) == {0: "127.0.0.1:10911", 1: "127.0.0.1:10921"}
    assert seen.body.startswith(b'{"brokerDatas":[{"brokerAddrs":{"0":')  # version 409: standard form
    # mqadmin prints the route again with fastjson's pretty form (bare keys, tabs)
    printed = shared_path("captures", "java-4.9.8", "02-topicRoute.txt").read_bytes()
    assert B.TopicRouteData.decode(printed) == route


@pytest.mark.shared
def test_route_forms_follow_the_client_version() -> None:
    routes = _all({105}, response=True)
    assert {s.request.version for s in routes} >= {63, 121, 293, 409, 413}
    for s in routes:
        standard = B.route_json_standard(s.request.version)
        assert (b'"brokerAddrs":{"' in s.body) is standard, (s.capture, s.request.version)


@pytest.mark.shared
def test_consumer_progress_matches_mqadmin() -> None:
    (seen,) = [s for s in captured("java-4.9.8/02-consumerProgress.pcap") if s.request.code == 208]
    stats = decode_seen(seen)
    rows = [line.split() for line in shared_path("captures", "java-4.9.8", "02-consumerProgress.txt")
            .read_text().splitlines() if line.startswith("CapTopic")]
    assert len(stats.offset_table) == len(rows) == 4
    for topic, broker, qid, broker_offset, consumer_offset, _diff, day, time in rows:
        mq = B.MessageQueue(topic=topic, broker_name=broker, queue_id=int(qid))
        wrapper = stats.offset_table[mq]
        assert (wrapper.broker_offset, wrapper.consumer_offset) == (int(broker_offset), int(consumer_offset)) == (5, 5)
        assert wrapper.last_timestamp // 1000 * 1000 == utc_ms(f"{day} {time}")
    assert f"Consume TPS: {stats.consume_tps:.2f}" in shared_path(
        "captures", "java-4.9.8", "02-consumerProgress.txt").read_text()


@pytest.mark.shared
def test_topic_status_matches_mqadmin() -> None:
    (seen,) = [s for s in captured("java-4.9.8/02-topicStatus.pcap") if s.request.code == 202]
    table = decode_seen(seen)
    lines = shared_path("captures", "java-4.9.8", "02-topicStatus.txt").read_text().splitlines()[1:]
    assert len(table.offset_table) == len(lines) == 4
    for broker, qid, low, high, day, time in (line.split() for line in lines):
        offsets = table.offset_table[B.MessageQueue(topic="CapTopic", broker_name=broker, queue_id=int(qid))]
        assert (offsets.min_offset, offsets.max_offset) == (int(low), int(high)) == (0, 5)
        assert offsets.last_update_timestamp == utc_ms(f"{day} {time}")


@pytest.mark.shared
def test_topic_list_and_cluster_list_match_mqadmin() -> None:
    (seen,) = [s for s in captured("java-4.9.8/02-topicList.pcap") if s.request.code == 206]
    topics = decode_seen(seen).topic_list
    assert list(topics) == shared_path("captures", "java-4.9.8", "02-topicList.txt").read_text().split()
    cluster = [decode_seen(s) for s in captured("java-4.9.8/02-clusterList.pcap") if s.request.code == 106]
    runtime = [decode_seen(s) for s in captured("java-4.9.8/02-clusterList.pcap") if s.request.code == 28]
    rows = [line.split() for line in shared_path("captures", "java-4.9.8", "02-clusterList.txt")
            .read_text().splitlines()[1:]]
    info = cluster[0]
    assert list(info.cluster_addr_table["DefaultCluster"]) == ["broker-a"]
    for name, broker, bid, addr, version, *_ in rows:
        assert info.broker_addr_table[broker].broker_addrs[int(bid)] == addr
        assert info.broker_addr_table[broker].cluster == name
        assert version in {kv.table["brokerVersionDesc"] for kv in runtime}
    five = next(decode_seen(s) for s in captured("java-5.0.0/12-clusterList.pcap") if s.request.code == 106)
    broker_c = five.broker_addr_table["broker-c"]
    assert dict(broker_c.broker_addrs) == {0: "127.0.0.1:30911", 2: "127.0.0.1:31911"}
    assert broker_c.enable_acting_master is False


def _txt_table(name: str, sep: str) -> dict[str, str]:
    out = {}
    for line in shared_path("captures", *name.split("/")).read_text().splitlines():
        if sep in line and not line.startswith("="):
            key, _, value = line.partition(sep)
            out[key.strip()] = value.strip()
    return out


@pytest.mark.shared
@pytest.mark.parametrize(("capture", "code"), [("java-4.9.8/02-getBrokerConfig", 26),
                                               ("java-4.9.8/02-getNamesrvConfig", 319)])
def test_config_properties_match_mqadmin(capture: str, code: int) -> None:
    (seen,) = [s for s in captured(capture + ".pcap") if s.request.code == code]
    props = decode_seen(seen)
    assert isinstance(props, B.PropertiesBody)
    assert {k: v.strip() for k, v in props.table.items()} == _txt_table(capture + ".txt", "=")
    assert props.encode() == seen.body


@pytest.mark.shared
def test_broker_status_matches_mqadmin() -> None:
    (seen,) = [s for s in captured("java-4.9.8/02-brokerStatus.pcap") if s.request.code == 28]
    kv = decode_seen(seen)
    assert {k: v.strip() for k, v in kv.table.items()} == _txt_table("java-4.9.8/02-brokerStatus.txt", ":")
    assert kv.table["brokerVersionDesc"] == "V4_9_8"


@pytest.mark.shared
def test_update_sub_group_matches_mqadmin() -> None:
    (seen,) = [s for s in captured("java-4.9.8/03-updateSubGroup.pcap") if s.request.code == 200 and not s.is_response]
    config = decode_seen(seen)
    line = shared_path("captures", "java-4.9.8", "03-updateSubGroup.txt").read_text().splitlines()[1]
    printed = dict(kv.split("=") for kv in line[line.index("[") + 1:line.rindex("]")].split(", "))
    for key, value in printed.items():
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
        assert str(getattr(config, snake)).lower() == value.lower(), key


@pytest.mark.shared
def test_ha_status_matches_mqadmin() -> None:
    (master_seen,) = [s for s in captured("java-5.0.0/12-haStatus-master.pcap") if s.request.code == 907]
    master = decode_seen(master_seen)
    txt = _txt_table("java-5.0.0/12-haStatus-master.txt", "\t")
    assert master.master is True
    assert master.master_commit_log_max_offset == int(txt["#MasterCommitLogMaxOffset"]) == 32830
    assert master.in_sync_slave_nums == int(txt["#InSyncSlaveNum"]) == 1 == len(master.ha_connection_info)
    (conn,) = master.ha_connection_info
    assert (conn.addr, conn.slave_ack_offset, conn.diff, conn.in_sync) == ("127.0.0.1:38200", 32830, 0, True)
    (slave_seen,) = [s for s in captured("java-5.0.0/12-haStatus-slave.pcap") if s.request.code == 907]
    slave = decode_seen(slave_seen)
    txt = _txt_table("java-5.0.0/12-haStatus-slave.txt", "\t")
    client = slave.ha_client_runtime_info
    assert slave.master is False and slave.ha_connection_info == ()
    assert client.master_addr == txt["#MasterAddr"] == "127.0.0.1:30912"
    assert client.max_offset == int(txt["#CommitLogMaxOffset"])
    assert client.last_read_timestamp == utc_ms(txt["#LastReadTime"])
    assert client.last_write_timestamp == utc_ms(txt["#LastWriteTime"])


@pytest.mark.shared
def test_broker_epoch_cache() -> None:
    caches = [decode_seen(s) for s in captured("java-5.0.0/12-getBrokerEpoch.pcap") if s.request.code == 1007]
    assert sorted(c.broker_id for c in caches) == [0, 2]
    for cache in caches:
        (entry,) = cache.epoch_list
        assert (entry.epoch, entry.start_offset, entry.end_offset) == (1, 0, LONG_MAX)
        assert (cache.cluster_name, cache.broker_name, cache.max_offset) == ("DefaultCluster5", "broker-c", 32830)
        assert b'"endOffset":9223372036854775807' in cache.encode()
        assert b'"endOffset":"9223372036854775807"' in cache.encode(standard=True)


@pytest.mark.shared
def test_sync_state_data_and_sets() -> None:
    seen = captured("java-5.0.0/12-getSyncStateSet.pcap")
    (request,) = [decode_seen(s) for s in seen if s.request.code == 1006 and not s.is_response]
    assert request == B.BrokerNameList(("broker-c",))
    (data,) = [decode_seen(s) for s in seen if s.request.code == 1006 and s.is_response]
    state = data.in_sync_state_table["broker-c"]
    txt = _txt_table("java-5.0.0/12-getSyncStateSet.txt", "\t")
    assert state.master_address == txt["#MasterAddr"] == "127.0.0.1:30911"
    assert (state.master_epoch, state.sync_state_set_epoch) == (int(txt["#MasterEpoch"]), int(txt["#SyncStateSetEpoch"]))
    assert [(m.address, m.broker_id) for m in state.in_sync_members] == [("127.0.0.1:30911", 0), ("127.0.0.1:31911", 2)]
    startup = captured("java-5.0.0/11-controller-startup.pcap")
    (alter,) = [decode_seen(s) for s in startup if s.request.code == 1001 and not s.is_response]
    (altered,) = [decode_seen(s) for s in startup if s.request.code == 1001 and s.is_response]
    assert alter == B.SyncStateSet(sync_state_set=("127.0.0.1:30911", "127.0.0.1:31911"), sync_state_set_epoch=1)
    assert altered.sync_state_set_epoch == 2
    after = [decode_seen(s) for s in captured("java-5.0.0/13-failover.pcap") if s.request.code == 1004]
    assert B.SyncStateSet(sync_state_set=("127.0.0.1:31911",), sync_state_set_epoch=3) in after


@pytest.mark.shared
def test_heartbeats_from_the_peer_clients() -> None:
    (cpp,) = [decode_seen(s) for s in captured("java-4.9.8/05-cpp-consume.pcap")
              if s.request.code == 34 and decode_seen(s).consumer_data_set][:1]
    consumer = cpp.consumer_data_set[0]
    # the C++ client sends ordinals and subVersion as a string
    assert consumer.consume_type is B.ConsumeType.CONSUME_PASSIVELY
    assert consumer.message_model is B.MessageModel.CLUSTERING
    assert consumer.consume_from_where is B.ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
    assert {s.topic for s in consumer.subscription_data_set} == {"CppTopic", "%RETRY%CppGroup"}
    assert consumer.subscription_data_set[0].sub_version == 1795341689463
    (js,) = [decode_seen(s) for s in captured("java-4.9.8/06-alions-consume.pcap") if s.request.code == 34][:1]
    assert js.consumer_data_set[0].consume_from_where is B.ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET
    assert js.consumer_data_set[0].group_name == "JsGroup" and js.producer_data_set == ()


@pytest.mark.shared
def test_consumer_offsets_and_timers_from_the_captures() -> None:
    (offsets,) = [decode_seen(s) for s in captured("java-4.9.8/02-brokerStatus.pcap") if s.request.code == 43][:1]
    assert dict(offsets.offset_table["CapTopic@CapGroup"]) == {0: 5, 1: 5, 2: 5, 3: 5}
    five = [decode_seen(s) for s in captured("java-5.0.0/11-controller-startup.pcap") if s.request.code == 43]
    assert five[0].group_topic_map == {} and five[0].data_version.state_version == 0
    checkpoints = [decode_seen(s) for s in captured("java-5.0.0/11-controller-startup.pcap") if s.request.code == 60]
    assert checkpoints and all(c.data_version is not None for c in checkpoints)
    assert all(c.last_read_time_ms > 1_700_000_000_000 for c in checkpoints)


# =========================================================================== registry


def test_registry_classes_offer_decode_and_encode() -> None:
    for cls in {*B.REQUEST_BODIES.values(), *B.RESPONSE_BODIES.values()}:
        assert callable(cls.decode) and callable(cls.encode)
    assert B.decode_body(99999, True, b"{}") is None
    assert B.decode_body(105, True, b"") is None
    assert B.decode_body(105, False, b"{}") is None  # a route request has no body
    assert isinstance(B.decode_body(105, True, b"{}"), B.TopicRouteData)


# =========================================================================== hypothesis

_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)
_RAW = st.recursive(
    st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8)


def kind_strategy(kind: _base.Kind) -> st.SearchStrategy[Any]:
    if isinstance(kind, (_base.Str, _base.StrKey)):
        return _TEXT
    if isinstance(kind, (_base.Integer, _base.IntKey)):
        return st.integers(-(2 ** (kind.bits - 1)), 2 ** (kind.bits - 1) - 1)
    if isinstance(kind, _base.Double):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(kind, _base.Bool):
        return st.booleans()
    if isinstance(kind, _base.EnumName):
        return st.sampled_from(kind.members) | _TEXT.filter(lambda s: s not in kind.cls.__members__)
    if isinstance(kind, _base.Seq):
        return st.lists(kind_strategy(kind.item), max_size=3).map(tuple)
    if isinstance(kind, _base.Map):
        return st.dictionaries(kind_strategy(kind.key), kind_strategy(kind.value), max_size=3)
    if isinstance(kind, _base.Obj):
        return body_strategy(kind.cls)
    if isinstance(kind, MessageQueueKey):
        return body_strategy(B.MessageQueue)
    if isinstance(kind, _base.Raw):
        return _RAW
    # sync-state-set members: an address or a broker id; ids beyond 2^53 would come back as text from
    # the standard form, where nothing says they were numbers (Java never writes this body that way)
    return _TEXT | st.integers(-(2**53) + 1, 2**53 - 1)


@functools.cache
def body_strategy(cls: type) -> st.SearchStrategy[Any]:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    args: dict[str, st.SearchStrategy[Any]] = {}
    for p in _base.body_props(cls):
        s = st.deferred(lambda k=p.kind: kind_strategy(k))
        args[p.attr] = (st.none() | s) if fields[p.attr].default is None else s
    # unknown properties survive; their names must not match a known one, even loosely
    args["extra"] = st.dictionaries(st.from_regex(r"\Ax-extra-[0-9]{1,3}\Z"), _RAW, max_size=2).map(
        fastjson.FrozenObject)
    return st.builds(cls, **args)


JSON_CLASSES = sorted({c for c in vars(B).values() if isinstance(c, type) and issubclass(c, B.JsonBody)
                       and c is not B.JsonBody}, key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", JSON_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), standard=st.booleans())
def test_json_bodies_round_trip(cls: type, data: st.DataObject, standard: bool) -> None:
    body = data.draw(body_strategy(cls))
    text = body.encode(standard=standard)
    assert cls.decode(text) == body
    if standard:
        json.loads(text)  # the standard form is strict JSON


_TOPIC = st.from_regex(r"\A[A-Za-z0-9%_-]{1,12}\Z")
_ATTRS = st.none() | st.dictionaries(st.from_regex(r"\A[+a-z.]{1,8}\Z"), st.from_regex(r"\A[a-z0-9]{0,6}\Z"),
                                     max_size=2)


@st.composite
def compressible_register_bodies(draw: st.DrawFn) -> B.RegisterBrokerBody:
    configs = [B.TopicConfig(topic_name=name, read_queue_nums=draw(st.integers(-(2**31), 2**31 - 1)),
                             write_queue_nums=draw(st.integers(0, 1024)), perm=draw(st.integers(0, 7)),
                             topic_filter_type=draw(st.sampled_from(list(B.TopicFilterType))),
                             topic_sys_flag=draw(st.integers(0, 3)), order=draw(st.booleans()),
                             attributes=draw(_ATTRS))
               for name in draw(st.lists(_TOPIC, unique=True, max_size=4))]
    infos = draw(st.none() | st.lists(body_strategy(B.TopicQueueMappingInfo).filter(lambda i: i.topic is not None),
                                      max_size=2, unique_by=lambda i: i.topic))
    wrapper = B.TopicConfigSerializeWrapper(
        topic_config_table={c.topic_name: c for c in configs}, data_version=draw(body_strategy(B.DataVersion)),
        topic_queue_mapping_info_map=None if infos is None else {i.topic: i for i in infos})
    return B.RegisterBrokerBody(topic_config_serialize_wrapper=wrapper,
                                filter_server_list=tuple(draw(st.lists(_TEXT, max_size=3))))


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(compressible_register_bodies())
def test_compressed_register_bodies_round_trip(body: B.RegisterBrokerBody) -> None:
    packed = body.encode(compressed=True)
    assert packed[:2] == b"\x78\xda"  # zlib, best compression
    assert B.RegisterBrokerBody.decode(packed, compressed=True) == body.without_compressed_losses()


@settings(max_examples=100)
@given(st.dictionaries(_TEXT, _TEXT, max_size=5))
def test_properties_round_trip_when_escaped(table: dict[str, str]) -> None:
    body = B.PropertiesBody(table)
    assert B.PropertiesBody.decode(body.encode(escape=True)) == body


@settings(max_examples=100)
@given(st.dictionaries(st.from_regex(r"\A[A-Za-z0-9_.]{1,10}\Z"), st.from_regex(r"\A[^\s\\][^\r\n\\]{0,10}\Z|\A\Z"),
                       max_size=5))
def test_properties_round_trip_unescaped_for_plain_values(table: dict[str, str]) -> None:
    body = B.PropertiesBody(table)
    assert B.PropertiesBody.decode(body.encode()) == body


@given(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1), st.none() | st.tuples(
    st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1)))
def test_timer_checkpoints_round_trip(a: int, b: int, version: tuple[int, int, int] | None) -> None:
    dv = None if version is None else B.DataVersion(counter=version[0], timestamp=version[1], state_version=version[2])
    checkpoint = B.TimerCheckpoint(a, b, b, a, dv)
    raw = checkpoint.encode()
    assert len(raw) == (32 if dv is None else 56)
    assert raw[:8] == struct.pack(">q", a)
    assert B.TimerCheckpoint.decode(raw) == checkpoint


@given(st.lists(_TEXT, max_size=4).map(tuple))
def test_broker_name_lists_round_trip(names: tuple[str, ...]) -> None:
    assert B.BrokerNameList.decode(B.BrokerNameList(names).encode()) == B.BrokerNameList(names)


ALL_CLASSES = sorted({*JSON_CLASSES, B.PropertiesBody, B.TimerCheckpoint, B.BrokerNameList}, key=lambda c: c.__name__)
SEEDS = [c["text"].encode() for c in LITERALS] + [zlib.compress(v) for v in HEX_CASES.values()]


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=60)
@given(data=st.binary(max_size=120))
def test_arbitrary_bytes_give_only_decode_error(cls: type, data: bytes) -> None:
    try:
        cls.decode(data)
    except DecodeError:
        pass


@settings(max_examples=400)
@given(st.sampled_from(SEEDS), st.sampled_from(sorted({*B.REQUEST_BODIES, *B.RESPONSE_BODIES})), st.booleans(),
       st.booleans(), st.data())
def test_mutated_bodies_give_only_decode_error(seed: bytes, code: int, response: bool, compressed: bool,
                                               data: st.DataObject) -> None:
    buf = bytearray(seed)
    for _ in range(data.draw(st.integers(0, 4))):
        buf[data.draw(st.integers(0, len(buf) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(buf)))
    try:
        B.decode_body(code, response, bytes(buf[:cut]), ext_fields={"compressed": str(compressed).lower()})
    except DecodeError:
        pass
