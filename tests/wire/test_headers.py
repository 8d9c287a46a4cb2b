# Licensed under the Apache License, Version 2.0. See LICENSE.
from __future__ import annotations

import dataclasses
import functools
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import shared_path
from tests.pcaputil import streams
from wire import (
    DecodeError,
    EncodeError,
    FrameBuffer,
    RemotingCommand,
    RequestCode,
    ResponseCode,
    SerializeType,
    decode_command,
    decode_frame,
    encode_command,
)
from wire import headers as H
from wire.headers import (
    REQUEST_HEADERS,
    RESPONSE_HEADER_CODES,
    RESPONSE_HEADERS,
    CustomHeader,
    JavaType,
    decode_request_header,
    decode_response_header,
    header_fields,
)

VECTORS = Path(__file__).resolve().parents[2] / "fixtures" / "vectors" / "headers"
LITERALS = json.loads((VECTORS / "literals.json").read_text())
CAPTURE_CASES = json.loads((VECTORS / "captures.json").read_text())["cases"]

#: every concrete header class of the module
ALL_HEADERS: list[type[CustomHeader]] = sorted(
    {c for c in (*REQUEST_HEADERS.values(), *RESPONSE_HEADERS.values())}, key=lambda c: c.__name__)

#: HA listener ports of the captures (raw HA streams, not remoting frames)
HA_PORTS = {10912, 10922, 30912, 31912}


def header_class(name: str) -> type[CustomHeader]:
    cls = getattr(H, name)
    assert issubclass(cls, CustomHeader)
    return cls


def check_attrs(header: CustomHeader, expected: Mapping[str, Any]) -> None:
    for name, value in expected.items():
        assert getattr(header, name) == value, name


# ============================================================================ literal vectors


@pytest.mark.parametrize("case", LITERALS["decode"], ids=lambda c: c["id"])
def test_decode_vectors(case: dict[str, Any]) -> None:
    cls = header_class(case["class"])
    header = cls.from_ext(case["ext"])
    assert type(header) is cls
    check_attrs(header, case["fields"])
    # the wire text comes back as it was; a header rebuilt in Python writes canonical text
    assert header.to_ext() == case["ext"]
    assert header.replace().to_ext() == case.get("canonical", case["ext"])
    assert header.replace() == header


@pytest.mark.parametrize("case", LITERALS["encode"], ids=lambda c: c["id"])
def test_encode_vectors(case: dict[str, Any]) -> None:
    cls = header_class(case["class"])
    header = cls(**case["fields"])
    assert list(header.to_ext().items()) == [tuple(kv) for kv in case["ext"]]
    assert cls.from_ext(header.to_ext()) == header


@pytest.mark.parametrize("case", LITERALS["errors"], ids=lambda c: c["id"])
def test_error_vectors(case: dict[str, Any]) -> None:
    cls = header_class(case["class"])
    with pytest.raises(DecodeError) as info:
        cls.from_ext(case["ext"])
    err = info.value
    assert (err.field, err.expected, err.found) == (case["field"], case["expected"], case["found"])
    assert case["field"].split(".", 1)[1] in str(err)


def test_send_message_v2_upstream_test() -> None:
    # SendMessageRequestHeaderV2Test: queueId 5 -> e="5", topic "test" -> b="test", through a whole
    # encoded command and back.
    header = H.SendMessageRequestHeaderV2(
        producer_group="pg", topic="test", default_topic="TBW102", default_topic_queue_nums=4,
        queue_id=5, sys_flag=0, born_timestamp=1700000000000, flag=0)
    for kind in SerializeType:
        cmd = decode_command(encode_command(H.request(RequestCode.SEND_MESSAGE_V2, header, serialize_type=kind)))
        assert cmd.ext_fields["e"] == "5" and cmd.ext_fields["b"] == "test"
        assert decode_request_header(cmd) == header


# PROTOCOL.md §3.2: V2 key <-> V1 field.
V2_KEYS = {"a": "producerGroup", "b": "topic", "c": "defaultTopic", "d": "defaultTopicQueueNums", "e": "queueId",
           "f": "sysFlag", "g": "bornTimestamp", "h": "flag", "i": "properties", "j": "reconsumeTimes",
           "k": "unitMode", "l": "maxReconsumeTimes", "m": "batch", "n": "bname"}


def test_v2_key_table() -> None:
    v1 = H.SendMessageRequestHeader(
        producer_group="pg", topic="T", default_topic="TBW102", default_topic_queue_nums=8, queue_id=2,
        sys_flag=1, born_timestamp=17, flag=3, properties="p", reconsume_times=1, unit_mode=True,
        max_reconsume_times=16, batch=True, bname="broker-a", extra={"AccessKey": "ak"})
    v2 = H.SendMessageRequestHeaderV2.from_v1(v1)
    v1_ext, v2_ext = v1.to_ext(), v2.to_ext()
    assert {k: v1_ext[V2_KEYS[k]] for k in V2_KEYS} == {k: v2_ext[k] for k in V2_KEYS}
    assert v2.bname is None and v2.broker_name == "broker-a"
    assert v2.to_v1() == v1
    # Java's V2 keeps its own inherited bname apart from n; to_v1 falls back on it only without n.
    assert v2.replace(broker_name=None, bname="b2").to_v1().bname == "b2"
    assert v2.replace(bname="b2").to_v1().bname == "broker-a"


def test_field_metadata_follows_the_java_classes() -> None:
    pull = {f.key: f for f in header_fields(H.PullMessageRequestHeader)}
    assert pull["queueOffset"].java_type is JavaType.LONG and pull["queueOffset"].not_null
    assert pull["subscription"].not_null is False
    assert (pull["maxMsgBytes"].since, pull["bname"].since, pull["lo"].since) == ("5.0.0", "4.9.5", "5.0.0")
    assert [f.key for f in header_fields(H.PullMessageRequestHeader)][-5:] == ["lo", "ns", "nsd", "bname", "oway"]
    v2 = header_fields(H.SendMessageRequestHeaderV2)
    assert [f.key for f in v2][:14] == list("abcdefghijklmn")
    assert {f.key: f.java_type for f in v2}["k"] is JavaType.PRIMITIVE_BOOLEAN
    assert JavaType.PRIMITIVE_BOOLEAN.primitive and not JavaType.BOOLEAN.primitive
    sub = {f.key: f for f in header_fields(H.DeleteSubscriptionGroupRequestHeader)}
    assert sub["removeOffset"].until == "4.9.8" and sub["cleanOffset"].since == "5.0.0"


def _version_key(v: str) -> tuple[int, ...]:
    return (99,) if v == "develop" else tuple(9 if p == "x" else int(p) for p in v.split("."))


def test_not_null_only_where_every_version_has_the_field() -> None:
    # A @CFNotNull field that some version lacks cannot be required: that version's traffic would
    # not decode. So a required field was there from the class's first version and never left.
    for cls in ALL_HEADERS:
        fields = header_fields(cls)
        if not fields:
            continue
        first = min((f.since for f in fields), key=_version_key)
        for f in fields:
            if f.not_null:
                assert f.until is None and f.since == first, (cls.__name__, f.key)
    assert not {f.key: f for f in header_fields(H.ElectMasterRequestHeader)}["brokerAddress"].not_null


def test_registries() -> None:
    # every class defined in the header modules is public in wire.headers and listed here
    import importlib
    import pkgutil

    import wire._headers

    modules = [H] + [importlib.import_module(f"wire._headers.{m.name}")
                     for m in pkgutil.iter_modules(wire._headers.__path__)]
    module_classes = {c for mod in modules for _, c in inspect.getmembers(mod, inspect.isclass)
                      if issubclass(c, CustomHeader) and c.__module__ == mod.__name__}
    bases = {CustomHeader, H.RpcRequestHeader, H.TopicRequestHeader, H.TopicQueueRequestHeader}
    assert module_classes - bases == set(ALL_HEADERS)
    assert all(getattr(H, c.__name__) is c for c in module_classes)
    assert {c.__name__ for c in module_classes} <= set(H.__all__) <= set(dir(H))
    for table in (REQUEST_HEADERS, RESPONSE_HEADERS, RESPONSE_HEADER_CODES):
        assert all(isinstance(code, RequestCode) for code in table)
    assert set(RESPONSE_HEADER_CODES) <= set(RESPONSE_HEADERS)
    for cls in ALL_HEADERS:
        keys = [f.key for f in header_fields(cls)]
        assert len(keys) == len(set(keys)), cls.__name__
    assert REQUEST_HEADERS[RequestCode.SEND_BATCH_MESSAGE] is H.SendMessageRequestHeaderV2
    for code in (RequestCode.GET_BROKER_CLUSTER_INFO, RequestCode.GET_BROKER_RUNTIME_INFO,
                 RequestCode.GET_ALL_TOPIC_CONFIG, RequestCode.GET_BROKER_HA_STATUS,
                 RequestCode.GET_BROKER_EPOCH_CACHE):
        assert code not in REQUEST_HEADERS
        assert decode_request_header(RemotingCommand.request(code, {"AccessKey": "x"})) is None


# ============================================================================ construction


def v2(**changes: Any) -> H.SendMessageRequestHeaderV2:
    base: dict[str, Any] = dict(producer_group="pg", topic="T", default_topic="TBW102", default_topic_queue_nums=4,
                                queue_id=0, sys_flag=0, born_timestamp=0, flag=0)
    base.update(changes)
    return H.SendMessageRequestHeaderV2(**base)


@pytest.mark.parametrize(("changes", "field"), [
    ({"topic": None}, "extFields.b"),
    ({"queue_id": "1"}, "extFields.e"),
    ({"queue_id": True}, "extFields.e"),
    ({"queue_id": 2**31}, "extFields.e"),
    ({"born_timestamp": -(2**63) - 1}, "extFields.g"),
    ({"batch": 1}, "extFields.m"),
    ({"properties": b"x"}, "extFields.i"),
    ({"extra": {"b": "x"}}, "extFields.b"),
    ({"extra": {"x": 1}}, "extFields"),
], ids=str)
def test_constructor_rejects(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(EncodeError) as info:
        v2(**changes)
    assert info.value.field == field


def test_header_is_frozen_and_hashable() -> None:
    h = v2(extra={"AccessKey": "ak"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.topic = "x"  # type: ignore[misc]
    assert hash(h) == hash(v2(extra={"AccessKey": "other"}))
    assert h != v2(extra={"AccessKey": "other"})
    with pytest.raises(EncodeError):
        h.replace(queue_id=-(2**31) - 1)


def test_from_ext_rejects_non_string_values() -> None:
    with pytest.raises(DecodeError) as info:
        H.GetMinOffsetRequestHeader.from_ext({"topic": "T", "queueId": 3})  # type: ignore[dict-item]
    assert info.value.field == "extFields.queueId"
    with pytest.raises(DecodeError):
        H.GetMinOffsetRequestHeader.from_ext({"topic": "T", "queueId": "3", "x": None})  # type: ignore[dict-item]


# ============================================================================ request / response helpers


def test_request_and_response_helpers() -> None:
    header = H.GetRouteInfoRequestHeader(topic="TopicTest")
    req = H.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, header, opaque=1, version=407)
    # PROTOCOL.md §1.2's example request carries exactly this ext map
    assert encode_command(req)[8:].decode() == (
        '{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1,'
        '"serializeTypeCurrentRPC":"JSON","version":407}')
    offset = H.GetMaxOffsetResponseHeader(offset=5)
    req30 = H.request(RequestCode.GET_MAX_OFFSET, H.GetMaxOffsetRequestHeader(topic="T", queue_id=1), oneway=False)
    resp = H.response(req30, offset)
    assert (resp.opaque, resp.is_response, dict(resp.ext_fields)) == (req30.opaque, True, {"offset": "5"})
    assert decode_response_header(req30.code, resp) == offset
    assert H.request(RequestCode.GET_BROKER_CLUSTER_INFO).ext_fields == {}
    with pytest.raises(EncodeError, match="GetRouteInfoRequestHeader"):
        H.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, offset)
    with pytest.raises(EncodeError, match="GetMaxOffsetResponseHeader"):
        H.response(req30, H.GetMinOffsetResponseHeader(offset=1))


def test_batch_send_needs_the_batch_flag() -> None:
    # The broker chooses the batch path from m, not from the request code.
    with pytest.raises(EncodeError, match="batch"):
        H.request(RequestCode.SEND_BATCH_MESSAGE, v2())
    cmd = H.request(RequestCode.SEND_BATCH_MESSAGE, v2(batch=True), b"\0" * 30)
    assert cmd.ext_fields["m"] == "true"
    assert H.request(RequestCode.SEND_MESSAGE_V2, v2()).ext_fields["m"] == "false"


def test_response_header_only_for_codes_that_carry_it() -> None:
    # PROTOCOL.md §3.3: only SUCCESS, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE
    req = H.request(RequestCode.SEND_MESSAGE_V2, v2())
    ext = {"msgId": "m", "queueId": "1", "queueOffset": "2", "MSG_REGION": "r", "TRACE_ON": "true"}
    for code in (0, 10, 11, 12):
        assert decode_response_header(req.code, req.response(code, ext_fields=ext)) is not None
    failed = req.response(ResponseCode.NO_PERMISSION, "forbidden", {"MSG_REGION": "r", "TRACE_ON": "true"})
    assert decode_response_header(req.code, failed) is None
    with pytest.raises(DecodeError, match="msgId"):
        decode_response_header(req.code, failed, any_code=True)
    assert decode_response_header(RequestCode.GET_BROKER_CLUSTER_INFO, req.response(0)) is None


# ============================================================================ captures


@dataclass
class Exchange:
    request: RemotingCommand
    raw_header: bytes
    response: RemotingCommand | None


@functools.cache
def exchanges(rel: str) -> tuple[Exchange, ...]:
    """Requests of a capture with their responses, paired by TCP connection and opaque."""
    path = shared_path("captures", *rel.split("/"))
    found: list[Exchange] = []
    pending: dict[tuple[Any, ...], list[Exchange]] = {}
    answers: list[tuple[tuple[Any, ...], RemotingCommand]] = []
    for d in streams(path):
        if d.sport in HA_PORTS or d.dport in HA_PORTS:
            continue
        for _, chunk in d.chunks:
            buf = FrameBuffer()
            buf.feed(bytes(chunk))
            try:
                while (frame := buf.next_frame()) is not None:
                    cmd = decode_frame(frame)
                    if cmd.is_response:
                        answers.append(((d.dst, d.dport, d.src, d.sport, cmd.opaque), cmd))
                    else:
                        ex = Exchange(cmd, frame.header, None)
                        found.append(ex)
                        pending.setdefault((d.src, d.sport, d.dst, d.dport, cmd.opaque), []).append(ex)
            except DecodeError:
                # only the deliberately malformed frames of scenario 10 may fail here
                assert "malformed" in rel
    for key, resp in answers:
        waiting = [ex for ex in pending.get(key, []) if ex.response is None]
        assert waiting, f"{rel}: response {resp!r} has no request"
        waiting[0].response = resp
    return tuple(found)


def all_captures() -> list[str]:
    root = shared_path("captures")
    return sorted(str(p.relative_to(root)) for p in root.glob("*/*.pcap"))


def capture_ids() -> list[str]:
    try:
        return all_captures()
    except pytest.skip.Exception:
        return []


CAPTURES = capture_ids()


@pytest.mark.shared
@pytest.mark.parametrize("rel", CAPTURES or [pytest.param("", marks=pytest.mark.skip("../shared is absent"))])
def test_capture_headers_round_trip(rel: str) -> None:
    for ex in exchanges(rel):
        cmd = ex.request
        header = decode_request_header(cmd)
        cls = REQUEST_HEADERS.get(cmd.code)
        if cls is None:
            assert header is None
        else:
            assert type(header) is cls
            assert header.to_ext() == dict(cmd.ext_fields)
            assert cls.from_ext(header.to_ext()) == header
            if cmd.serialize_type is SerializeType.ROCKETMQ and cls.fast_codes:
                # FastCodesHeader.encode writes the declared keys first, in to_ext() order
                known = [k for k in header.to_ext() if k not in header.extra]
                assert list(cmd.ext_fields)[:len(known)] == known
        resp = ex.response
        if resp is None or cmd.code not in RESPONSE_HEADERS:
            continue
        rh = decode_response_header(cmd.code, resp)
        carries = resp.code in RESPONSE_HEADER_CODES.get(cmd.code, {int(ResponseCode.SUCCESS)})
        assert (rh is not None) == carries, (cmd.code, resp.code)
        if rh is not None:
            assert type(rh) is RESPONSE_HEADERS[cmd.code]
            assert rh.to_ext() == dict(resp.ext_fields)
            if resp.serialize_type is SerializeType.ROCKETMQ and rh.fast_codes:
                known = [k for k in rh.to_ext() if k not in rh.extra]
                assert list(resp.ext_fields)[:len(known)] == known


@pytest.mark.shared
def test_captures_cover_the_header_classes() -> None:
    # The request codes the MANIFESTs list must all have been decoded into typed headers.
    requests: set[int] = set()
    responses: set[int] = set()
    for rel in all_captures():
        for ex in exchanges(rel):
            if decode_request_header(ex.request) is not None:
                requests.add(ex.request.code)
            if ex.response is not None and decode_response_header(ex.request.code, ex.response) is not None:
                responses.add(ex.request.code)
    assert requests >= {10, 11, 12, 14, 15, 17, 30, 31, 33, 34, 35, 38, 40, 100, 102, 103, 105, 202, 205, 208,
                        215, 216, 300, 310, 327, 904, 1001, 1003, 1004, 1006, 1008}
    assert responses >= {10, 11, 12, 14, 15, 21, 26, 30, 31, 33, 35, 38, 103, 205, 310, 327, 1001, 1003, 1004, 1005}


@pytest.mark.shared
@pytest.mark.parametrize("case", CAPTURE_CASES, ids=lambda c: c["id"])
def test_capture_values(case: dict[str, Any]) -> None:
    chosen = [ex for ex in exchanges(case["capture"])
              if ex.request.code == case["code"]
              and all(ex.request.ext_fields.get(k) == v for k, v in case.get("where", {}).items())
              and ("response_code" not in case
                   or (ex.response is not None and ex.response.code == case["response_code"]))]
    assert chosen, "no exchange matches"
    if "count" in case:
        assert len(chosen) == case["count"]
    for ex in chosen:
        header = decode_request_header(ex.request)
        assert (header is not None) == (ex.request.code in REQUEST_HEADERS)
        if header is not None:
            check_attrs(header, case.get("request", {}))
            for name in case.get("request_not_null", []):
                assert getattr(header, name) is not None, name
            assert set(case.get("extra_keys", [])) <= set(header.extra)
        if "raw_contains" in case:
            assert case["raw_contains"].encode() in ex.raw_header
        if "response" in case or "response_not_null" in case:
            expected = case.get("response", {})
            rh = None if ex.response is None else decode_response_header(ex.request.code, ex.response)
            if expected is None:
                assert rh is None
                continue
            assert rh is not None
            check_attrs(rh, expected)
            for name in case.get("response_not_null", []):
                assert getattr(rh, name) is not None, name


@pytest.mark.shared
def test_send_tag_key_properties() -> None:
    (ex,) = [e for e in exchanges("java-4.9.8/07-sendMessage-tag-key.pcap") if e.request.code == 310]
    header = decode_request_header(ex.request)
    assert isinstance(header, H.SendMessageRequestHeaderV2)
    props = dict(p.split("\x01", 1) for p in (header.properties or "").split("\x02") if p)
    assert (props["KEYS"], props["TAGS"]) == ("qkey-7", "tagQ")


# ============================================================================ hypothesis

_TEXT = st.text(max_size=12)
_VALUES: dict[JavaType, st.SearchStrategy[Any]] = {
    JavaType.STRING: _TEXT,
    JavaType.INTEGER: st.integers(-(2**31), 2**31 - 1),
    JavaType.PRIMITIVE_INT: st.integers(-(2**31), 2**31 - 1),
    JavaType.LONG: st.integers(-(2**63), 2**63 - 1),
    JavaType.PRIMITIVE_LONG: st.integers(-(2**63), 2**63 - 1),
    JavaType.BOOLEAN: st.booleans(),
    JavaType.PRIMITIVE_BOOLEAN: st.booleans(),
    JavaType.BOUNDARY_TYPE: st.sampled_from(["LOWER", "UPPER"]),
}


def headers_of(cls: type[CustomHeader]) -> st.SearchStrategy[CustomHeader]:
    known = {f.key for f in header_fields(cls)}
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for f in header_fields(cls):
        value = _VALUES[f.java_type]
        kwargs[f.name] = value if f.not_null else st.none() | value
    kwargs["extra"] = st.dictionaries(_TEXT.filter(lambda k: k not in known), _TEXT, max_size=3)
    return st.builds(cls, **kwargs)


any_header = st.sampled_from(ALL_HEADERS).flatmap(headers_of)


@pytest.mark.parametrize("cls", ALL_HEADERS, ids=lambda c: c.__name__)
@settings(max_examples=20)
@given(data=st.data())
def test_round_trip_every_class(cls: type[CustomHeader], data: st.DataObject) -> None:
    header = data.draw(headers_of(cls))
    ext = header.to_ext()
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in ext.items())
    assert type(header).from_ext(ext) == header
    assert list(ext)[len(ext) - len(header.extra):] == list(header.extra)


@settings(max_examples=100)
@given(any_header, st.sampled_from(list(SerializeType)))
def test_round_trip_through_frames(header: CustomHeader, kind: SerializeType) -> None:
    cmd = RemotingCommand.request(RequestCode.GET_BROKER_CONFIG, header.to_ext(), serialize_type=kind)
    assert type(header).from_ext(decode_command(encode_command(cmd)).ext_fields) == header


@given(st.builds(H.SendMessageRequestHeader, **{
    f.name: (_VALUES[f.java_type] if f.not_null else st.none() | _VALUES[f.java_type])
    for f in header_fields(H.SendMessageRequestHeader)}))
def test_v1_v2_conversion_round_trip(v1: H.SendMessageRequestHeader) -> None:
    v2h = H.SendMessageRequestHeaderV2.from_v1(v1)
    assert v2h.to_v1() == v1
    assert H.SendMessageRequestHeaderV2.from_v1(v2h.to_v1()) == v2h


def _java_like_text() -> st.SearchStrategy[str]:
    return st.one_of(_TEXT, st.integers().map(str), st.sampled_from(["true", "FALSE", "upper", "", "-", "+1"]))


@pytest.mark.parametrize("cls", ALL_HEADERS, ids=lambda c: c.__name__)
@settings(max_examples=20)
@given(data=st.data())
def test_arbitrary_ext_gives_header_or_decode_error(cls: type[CustomHeader], data: st.DataObject) -> None:
    keys = [f.key for f in header_fields(cls)]
    key = st.sampled_from(keys) | _TEXT if keys else _TEXT
    ext = data.draw(st.dictionaries(key, _java_like_text(), max_size=len(keys) + 3))
    try:
        header = cls.from_ext(ext)
    except DecodeError as err:
        assert err.field is not None and err.field.startswith("extFields.")
        return
    # the exact text comes back, unknown keys included, and canonical text means the same
    assert header.to_ext() == ext
    assert cls.from_ext(header.replace().to_ext()) == header


@functools.cache
def capture_ext_pool() -> list[tuple[type[CustomHeader], dict[str, str]]]:
    return [(REQUEST_HEADERS[ex.request.code], dict(ex.request.ext_fields))
            for rel in CAPTURES for ex in exchanges(rel) if ex.request.code in REQUEST_HEADERS]


@st.composite
def mutated_capture_ext(draw: st.DrawFn) -> tuple[type[CustomHeader], dict[str, str]]:
    cls, ext = draw(st.sampled_from(capture_ext_pool()))
    ext = dict(ext)
    if ext:
        key = draw(st.sampled_from(sorted(ext)))
        action = draw(st.sampled_from(["drop", "replace", "append"]))
        if action == "drop":
            del ext[key]
        elif action == "replace":
            ext[key] = draw(_java_like_text())
        else:
            ext[key] += draw(_TEXT)
    return cls, ext


@pytest.mark.shared
@pytest.mark.skipif(not CAPTURES, reason="../shared is absent")
@settings(max_examples=200, deadline=None)
@given(mutated_capture_ext())
def test_mutated_capture_ext_gives_header_or_decode_error(case: tuple[type[CustomHeader], dict[str, str]]) -> None:
    cls, ext = case
    try:
        header = cls.from_ext(ext)
    except DecodeError as err:
        assert err.field is not None and err.field.startswith("extFields.")
        return
    assert header.to_ext() == ext
    assert cls.from_ext(header.replace().to_ext()) == header
