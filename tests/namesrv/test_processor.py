# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Every name-server request through process(), without sockets."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_broker.config import NamesrvConfig
from reference_broker.namesrv import (
    HANDLERS,
    NAMESPACE_ORDER_TOPIC_CONFIG,
    KVConfigError,
    KVConfigManager,
    NamesrvContext,
    RouteInfoManager,
    process,
)
from wire import MQVersion, RemotingCommand, RequestCode, ResponseCode, SerializeType, fastjson
from wire.bodies import (
    ClusterInfo,
    DataVersion,
    KVTable,
    RegisterBrokerBody,
    TopicConfig,
    TopicConfigSerializeWrapper,
    TopicList,
    TopicRouteData,
    decode_properties,
    encode_properties,
)

R = RequestCode
MASTER, SLAVE = "10.0.0.1:10911", "10.0.0.2:10911"
V4_9_8, CPP_VERSION = int(MQVersion.V4_9_8), 63


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now


def make_ctx(tmp_path: Path | None = None, **overrides: str) -> NamesrvContext:
    values = dict(overrides)
    if tmp_path is not None:
        values.setdefault("kvConfigPath", str(tmp_path / "kvConfig.json"))
        values.setdefault("configStorePath", str(tmp_path / "namesrv.properties"))
    cfg = NamesrvConfig(overrides=values)
    kv = KVConfigManager(cfg.kv_config_path if tmp_path is not None else None)
    return NamesrvContext(cfg, RouteInfoManager(Clock()), kv,
                          config_store_path=cfg.get("configStorePath") if tmp_path is not None else None)


def body_of(*names: str, counter: int = 1, perm: int = 6) -> RegisterBrokerBody:
    table = {n: TopicConfig(topic_name=n, read_queue_nums=4, write_queue_nums=4, perm=perm) for n in names}
    return RegisterBrokerBody(topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
        topic_config_table=table, data_version=DataVersion(counter=counter, timestamp=1_700_000_000_000)))


def register_request(addr: str = MASTER, broker_id: int = 0, body: bytes | None = None, *,
                     compressed: bool = False, crc: int | None = None, version: int = V4_9_8,
                     serialize_type: SerializeType = SerializeType.JSON, name: str = "broker-a",
                     cluster: str = "DefaultCluster") -> RemotingCommand:
    if body is None:
        body = body_of("TopicA").encode(compressed=compressed)
    ext = {"brokerName": name, "brokerAddr": addr, "clusterName": cluster,
           "haServerAddr": addr.replace("10911", "10912"), "brokerId": broker_id,
           "compressed": compressed,
           "bodyCrc32": zlib.crc32(body) & 0x7FFFFFFF if crc is None else crc}
    return RemotingCommand.request(R.REGISTER_BROKER, ext, body, opaque=7, version=version,
                                   serialize_type=serialize_type)


def call(ctx: NamesrvContext, code: int, ext=None, body: bytes | None = None, *, version: int = V4_9_8,
         channel: object = None, serialize_type: SerializeType = SerializeType.JSON) -> RemotingCommand:
    resp = process(ctx, RemotingCommand.request(code, ext or {}, body, opaque=3, version=version,
                                                serialize_type=serialize_type), channel)
    assert resp is not None and resp.is_response and resp.opaque == 3
    return resp


def route(ctx: NamesrvContext, topic: str, **kw) -> RemotingCommand:
    return call(ctx, R.GET_ROUTEINFO_BY_TOPIC, {"topic": topic, **kw.pop("ext", {})}, **kw)


# ====================================================================== REGISTER_BROKER


def test_register_master_then_slave() -> None:
    ctx = make_ctx()
    resp = process(ctx, register_request(), object())
    assert resp is not None and resp.code == ResponseCode.SUCCESS
    assert dict(resp.ext_fields) == {} and resp.body is None  # no ORDER_TOPIC_CONFIG namespace
    resp = process(ctx, register_request(SLAVE, 1), object())
    assert resp is not None and resp.code == ResponseCode.SUCCESS
    assert dict(resp.ext_fields) == {"haServerAddr": "10.0.0.1:10912", "masterAddr": MASTER}
    data = TopicRouteData.decode(route(ctx, "TopicA").body)
    assert dict(data.broker_datas[0].broker_addrs) == {0: MASTER, 1: SLAVE}


def test_register_compressed_body_equals_plain() -> None:
    full = body_of("TopicA", "TopicB", counter=4)
    plain, packed = make_ctx(), make_ctx()
    for ctx, compressed in ((plain, False), (packed, True)):
        req = register_request(body=full.encode(compressed=compressed), compressed=compressed)
        resp = process(ctx, req, None)
        assert resp is not None and resp.code == ResponseCode.SUCCESS
    for topic in ("TopicA", "TopicB"):
        assert route(plain, topic).body == route(packed, topic).body
    assert plain.routes.query_broker_topic_config(MASTER) == packed.routes.query_broker_topic_config(MASTER)


def test_register_crc_mismatch_is_refused_and_zero_is_not_checked() -> None:
    ctx = make_ctx()
    req = register_request()
    bad = req.replace(ext_fields={**req.ext_fields, "bodyCrc32": str(int(req.ext_fields["bodyCrc32"]) ^ 1)})
    resp = process(ctx, bad, None)
    assert resp is not None and (resp.code, resp.remark) == (ResponseCode.SYSTEM_ERROR, "crc32 not match")
    assert not ctx.routes.broker_live_table
    unchecked = req.replace(ext_fields={**req.ext_fields, "bodyCrc32": "0"}, body=body_of("X").encode())
    resp = process(ctx, unchecked, None)
    assert resp is not None and resp.code == ResponseCode.SUCCESS
    assert list(ctx.routes.topic_queue_table) == ["X"]


def test_register_without_body_and_crc_fails_like_java() -> None:
    # UtilAll.crc32(null) is 0, which does not match a non-zero bodyCrc32
    ctx = make_ctx()
    req = register_request()
    resp = process(ctx, req.replace(body=None), None)
    assert resp is not None and resp.code == ResponseCode.SYSTEM_ERROR
    resp = process(ctx, req.replace(body=None, ext_fields={**req.ext_fields, "bodyCrc32": "0"}), None)
    assert resp is not None and resp.code == ResponseCode.SUCCESS
    assert ctx.routes.query_broker_topic_config(MASTER) == DataVersion(counter=0, timestamp=0)


def test_register_before_v3_0_11_sends_a_bare_wrapper() -> None:
    ctx = make_ctx()
    wrapper = body_of("Old").topic_config_serialize_wrapper
    resp = process(ctx, register_request(body=wrapper.encode(), version=int(MQVersion.V3_0_10)), None)
    assert resp is not None and resp.code == ResponseCode.SUCCESS
    assert list(ctx.routes.topic_queue_table) == ["Old"]


def test_register_undecodable_body_is_a_system_error_in_json() -> None:
    ctx = make_ctx()
    resp = process(ctx, register_request(body=b"\x00not json", serialize_type=SerializeType.ROCKETMQ), None)
    assert resp is not None and resp.code == ResponseCode.SYSTEM_ERROR
    assert resp.remark.startswith("Failed to decode RegisterBrokerBody")
    # answers built outside the normal path use the server's default type (JSON), as in Java
    assert resp.serialize_type is SerializeType.JSON


def test_register_answer_carries_the_order_topic_config_namespace() -> None:
    ctx = make_ctx()
    call(ctx, R.PUT_KV_CONFIG, {"namespace": NAMESPACE_ORDER_TOPIC_CONFIG, "key": "T", "value": "broker-a:4"})
    resp = process(ctx, register_request(), None)
    assert resp is not None and resp.body == b'{"table":{"T":"broker-a:4"}}'
    call(ctx, R.DELETE_KV_CONFIG, {"namespace": NAMESPACE_ORDER_TOPIC_CONFIG, "key": "T"})
    resp = process(ctx, register_request(), None)
    assert resp is not None and resp.body == b'{"table":{}}'  # the emptied namespace stays


def test_response_keeps_the_request_serialize_type() -> None:
    ctx = make_ctx()
    resp = process(ctx, register_request(serialize_type=SerializeType.ROCKETMQ), None)
    assert resp is not None and resp.serialize_type is SerializeType.ROCKETMQ
    assert route(ctx, "TopicA", serialize_type=SerializeType.ROCKETMQ).serialize_type is SerializeType.ROCKETMQ


def test_unregister_broker() -> None:
    ctx = make_ctx()
    process(ctx, register_request(), None)
    ext = {"brokerName": "broker-a", "brokerAddr": MASTER, "clusterName": "DefaultCluster", "brokerId": 0}
    assert call(ctx, R.UNREGISTER_BROKER, ext).code == ResponseCode.SUCCESS
    assert route(ctx, "TopicA").code == ResponseCode.TOPIC_NOT_EXIST


# ====================================================================== routes


def test_route_json_form_follows_the_client_version() -> None:
    ctx = make_ctx()
    process(ctx, register_request(), None)
    process(ctx, register_request(SLAVE, 1), None)
    legacy = route(ctx, "TopicA", version=CPP_VERSION).body
    standard = route(ctx, "TopicA").body
    assert b'"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"}' in legacy
    assert b'"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"}' in standard
    json.loads(standard)  # the standard form is real JSON
    with pytest.raises(ValueError):
        json.loads(legacy)
    assert fastjson.loads(legacy) == fastjson.loads(standard.replace(b'"0"', b"0").replace(b'"1"', b"1"))
    asked = route(ctx, "TopicA", version=CPP_VERSION, ext={"acceptStandardJsonOnly": "true"}).body
    assert asked == standard


def test_route_of_an_unknown_topic() -> None:
    resp = route(make_ctx(), "NoSuchTopic_cap10")
    assert resp.code == ResponseCode.TOPIC_NOT_EXIST and resp.body is None
    assert resp.remark == ("No topic route info in name server for the topic: NoSuchTopic_cap10\n"
                           "See http://rocketmq.apache.org/docs/faq/ for further details.")


def test_route_order_topic_conf_only_when_enabled() -> None:
    for enabled in (False, True):
        ctx = make_ctx(orderMessageEnable=str(enabled).lower())
        process(ctx, register_request(), None)
        call(ctx, R.PUT_KV_CONFIG, {"namespace": NAMESPACE_ORDER_TOPIC_CONFIG, "key": "TopicA",
                                    "value": "broker-a:4"})
        data = TopicRouteData.decode(route(ctx, "TopicA").body)
        assert data.order_topic_conf == ("broker-a:4" if enabled else None)


def test_cluster_info_is_always_the_bare_key_form() -> None:
    ctx = make_ctx()
    process(ctx, register_request(), None)
    body = call(ctx, R.GET_BROKER_CLUSTER_INFO).body
    assert body == (b'{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a",'
                    b'"cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}')
    assert set(ClusterInfo.decode(body).cluster_addr_table) == {"DefaultCluster"}


def test_topic_lists() -> None:
    ctx = make_ctx()
    process(ctx, register_request(body=body_of("A", "B").encode()), None)
    other = body_of("C").encode()
    process(ctx, register_request("10.0.0.9:10911", body=other, name="broker-x", cluster="Other"), None)
    assert set(TopicList.decode(call(ctx, R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER).body).topic_list) == {"A", "B", "C"}
    by_cluster = call(ctx, R.GET_TOPICS_BY_CLUSTER, {"cluster": "Other"})
    assert TopicList.decode(by_cluster.body).topic_list == ("C",)
    system = TopicList.decode(call(ctx, R.GET_SYSTEM_TOPIC_LIST_FROM_NS).body)
    assert set(system.topic_list) == {"DefaultCluster", "broker-a", "Other", "broker-x"}
    assert system.broker_addr in (MASTER, "10.0.0.9:10911")
    for code in (R.GET_UNIT_TOPIC_LIST, R.GET_HAS_UNIT_SUB_TOPIC_LIST, R.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST):
        assert call(ctx, code).body == b'{"topicList":[]}'


def test_wipe_and_add_write_permission() -> None:
    ctx = make_ctx()
    process(ctx, register_request(body=body_of("A", "B").encode()), None)
    resp = call(ctx, R.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"})
    assert dict(resp.ext_fields) == {"wipeTopicCount": "2"}
    assert TopicRouteData.decode(route(ctx, "A").body).queue_datas[0].perm == 4
    resp = call(ctx, R.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"})
    assert dict(resp.ext_fields) == {"addTopicCount": "2"}
    assert TopicRouteData.decode(route(ctx, "A").body).queue_datas[0].perm == 6


def test_delete_topic_in_namesrv() -> None:
    ctx = make_ctx()
    process(ctx, register_request(body=body_of("A", "B").encode()), None)
    assert call(ctx, R.DELETE_TOPIC_IN_NAMESRV, {"topic": "A", "clusterName": "DefaultCluster"}).code == 0
    assert call(ctx, R.DELETE_TOPIC_IN_NAMESRV, {"topic": "B"}).code == 0
    assert route(ctx, "A").code == route(ctx, "B").code == ResponseCode.TOPIC_NOT_EXIST


def test_query_data_version() -> None:
    ctx = make_ctx()
    process(ctx, register_request(body=body_of("A", counter=3).encode()), None)
    ext = {"brokerName": "broker-a", "brokerAddr": MASTER, "clusterName": "DefaultCluster", "brokerId": 0}
    same = DataVersion(counter=3, timestamp=1_700_000_000_000).encode()
    resp = call(ctx, R.QUERY_DATA_VERSION, ext, same)
    assert dict(resp.ext_fields) == {"changed": "false"} and resp.body == same
    newer = DataVersion(counter=4, timestamp=1_700_000_000_000).encode()
    assert dict(call(ctx, R.QUERY_DATA_VERSION, ext, newer).ext_fields) == {"changed": "true"}
    assert call(ctx, R.QUERY_DATA_VERSION, {**ext, "brokerAddr": "1.1.1.1:1"}, same).body is None


# ====================================================================== KV config


def test_kv_config_requests(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    ns = {"namespace": "NS"}
    missing = call(ctx, R.GET_KV_CONFIG, {**ns, "key": "k"})
    assert (missing.code, missing.remark) == (ResponseCode.QUERY_NOT_FOUND, "No config item, Namespace: NS Key: k")
    listed = call(ctx, R.GET_KVLIST_BY_NAMESPACE, ns)
    assert (listed.code, listed.remark) == (ResponseCode.QUERY_NOT_FOUND, "No config item, Namespace: NS")
    assert call(ctx, R.PUT_KV_CONFIG, {**ns, "key": "k", "value": "v1"}).code == ResponseCode.SUCCESS
    assert call(ctx, R.PUT_KV_CONFIG, {**ns, "key": "k", "value": "v2"}).code == ResponseCode.SUCCESS
    assert dict(call(ctx, R.GET_KV_CONFIG, {**ns, "key": "k"}).ext_fields) == {"value": "v2"}
    assert KVTable.decode(call(ctx, R.GET_KVLIST_BY_NAMESPACE, ns).body).table == {"k": "v2"}
    assert call(ctx, R.DELETE_KV_CONFIG, {**ns, "key": "k"}).code == ResponseCode.SUCCESS
    assert call(ctx, R.GET_KV_CONFIG, {**ns, "key": "k"}).code == ResponseCode.QUERY_NOT_FOUND


def test_kv_config_file_is_javas_and_survives_a_restart(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    call(ctx, R.PUT_KV_CONFIG, {"namespace": NAMESPACE_ORDER_TOPIC_CONFIG, "key": "T", "value": "broker-a:4"})
    call(ctx, R.PUT_KV_CONFIG, {"namespace": "other", "key": "x", "value": "1"})
    path = tmp_path / "kvConfig.json"
    text = path.read_text()
    assert json.loads(text) == {"configTable": {NAMESPACE_ORDER_TOPIC_CONFIG: {"T": "broker-a:4"},
                                                "other": {"x": "1"}}}
    assert json.loads((tmp_path / "kvConfig.json.bak").read_text()) == {
        "configTable": {NAMESPACE_ORDER_TOPIC_CONFIG: {"T": "broker-a:4"}}}
    again = make_ctx(tmp_path)
    again.kv.load()
    assert again.kv.to_json() == text
    assert dict(call(again, R.GET_KV_CONFIG, {"namespace": "other", "key": "x"}).ext_fields) == {"value": "1"}


def test_kv_config_file_that_is_not_one(tmp_path: Path) -> None:
    path = tmp_path / "kv.json"
    path.write_text("")
    KVConfigManager(path).load()  # empty: nothing stored yet
    for bad in ("{not json", "[1,2]", '{"configTable":{"ns":"x"}}'):
        path.write_text(bad)
        with pytest.raises(KVConfigError, match=re.escape(str(path))):
            KVConfigManager(path).load()


# ====================================================================== configuration


def test_get_namesrv_config_is_the_properties_text(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    body = call(ctx, R.GET_NAMESRV_CONFIG).body
    assert decode_properties(body) == ctx.config.values
    assert decode_properties(body)["kvConfigPath"] == str(tmp_path / "kvConfig.json")


def test_update_namesrv_config(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    # a value that does not fit its key refuses the whole update, saying why (Java answers SUCCESS
    # and keeps the old value; docs/servers.md)
    bad = encode_properties({"orderMessageEnable": "TRUE", "serverWorkerThreads": "x12"})
    resp = call(ctx, R.UPDATE_NAMESRV_CONFIG, body=bad)
    assert resp.code == ResponseCode.SYSTEM_ERROR and "serverWorkerThreads: expected an integer" in resp.remark
    assert not ctx.config.order_message_enable and ctx.config.get("serverWorkerThreads") == "8"
    update = encode_properties({"orderMessageEnable": "TRUE", "scanNotActiveBrokerInterval": "500", "notAKey": "1"})
    assert call(ctx, R.UPDATE_NAMESRV_CONFIG, body=update).code == ResponseCode.SUCCESS
    cfg = ctx.config
    assert cfg.order_message_enable and cfg.scan_interval_ms == 500
    assert "notAKey" not in cfg.values  # only keys the configuration holds are updated
    stored = decode_properties((tmp_path / "namesrv.properties").read_bytes())
    assert stored["orderMessageEnable"] == "true" and stored["scanNotActiveBrokerInterval"] == "500"
    assert call(ctx, R.UPDATE_NAMESRV_CONFIG).code == ResponseCode.SUCCESS  # no body: nothing to do


@pytest.mark.parametrize("key", ["kvConfigPath", "configStorePath", "configBlackList", "rocketmqHome", "extra"])
def test_update_namesrv_config_black_list(tmp_path: Path, key: str) -> None:
    ctx = make_ctx(tmp_path, configBlackList="configBlackList;extra")
    resp = call(ctx, R.UPDATE_NAMESRV_CONFIG, body=encode_properties({key: "x", "clusterTest": "true"}))
    assert (resp.code, resp.remark) == (ResponseCode.NO_PERMISSION, "Can not update config in black list.")
    assert ctx.config.get("clusterTest") == "false"


def test_update_namesrv_config_with_a_bad_escape() -> None:
    resp = call(make_ctx(), R.UPDATE_NAMESRV_CONFIG, body=b"a=\\u12zz\n")
    assert (resp.code, resp.remark) == (ResponseCode.SYSTEM_ERROR, "string2Properties error")


# ====================================================================== dispatch


def test_unknown_code_gets_no_response() -> None:
    ctx = make_ctx()
    assert 9999 not in HANDLERS
    assert process(ctx, RemotingCommand.request(9999, {"foo": "bar"}), None) is None
    # a code the broker serves is unknown here too
    assert process(ctx, RemotingCommand.request(R.SEND_MESSAGE), None) is None


def test_unknown_code_answered_by_a_name_server_with_the_controller() -> None:
    # the embedded controller makes it a 5.x name server, which answers as 5.0.0 does
    ctx = make_ctx(enableControllerInNamesrv="true")
    resp = process(ctx, RemotingCommand.request(9999, opaque=4), None)
    assert resp is not None and resp.opaque == 4
    assert (resp.code, resp.remark) == (ResponseCode.REQUEST_CODE_NOT_SUPPORTED, " request type 9999 not supported")


def test_enable_acting_master_is_carried_for_a_5x_broker_only() -> None:
    ctx = make_ctx()
    assert process(ctx, register_request(), object()).code == ResponseCode.SUCCESS
    # a 4.x broker: left out, as by the 4.9.8 name server
    assert TopicRouteData.decode(route(ctx, "TopicA").body).broker_datas[0].enable_acting_master is None
    five = register_request(SLAVE, 0, name="broker-b")
    five = five.replace(ext_fields={**five.ext_fields, "enableActingMaster": "true"})
    assert process(ctx, five, object()).code == ResponseCode.SUCCESS
    body = call(ctx, R.GET_BROKER_CLUSTER_INFO).body
    info = ClusterInfo.decode(body)
    assert info.broker_addr_table["broker-b"].enable_acting_master is True
    assert info.broker_addr_table["broker-a"].enable_acting_master is None
    assert b'"enableActingMaster":true' in body and body.count(b"enableActingMaster") == 1


def test_missing_header_field_is_a_system_error() -> None:
    resp = process(make_ctx(), RemotingCommand.request(R.GET_ROUTEINFO_BY_TOPIC, {},
                                                        serialize_type=SerializeType.ROCKETMQ), None)
    assert resp is not None and resp.code == ResponseCode.SYSTEM_ERROR and "topic" in resp.remark
    assert resp.serialize_type is SerializeType.JSON


_EXT_KEYS = st.sampled_from(["topic", "brokerName", "brokerAddr", "clusterName", "haServerAddr", "brokerId",
                             "compressed", "bodyCrc32", "namespace", "key", "value", "cluster",
                             "acceptStandardJsonOnly", "x"])
_EXT_VALUES = st.one_of(st.text(max_size=12), st.sampled_from(["0", "1", "-1", "true", "99999999999"]))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(code=st.sampled_from(sorted(HANDLERS)), ext=st.dictionaries(_EXT_KEYS, _EXT_VALUES),
       body=st.one_of(st.none(), st.binary(max_size=64), st.just(body_of("T").encode()),
                      st.just(body_of("T").encode(compressed=True))),
       version=st.sampled_from([0, 36, 63, 121, 409]))
def test_any_request_gets_a_response_never_an_exception(code, ext, body, version) -> None:
    ctx = make_ctx()
    resp = process(ctx, RemotingCommand.request(code, ext, body, opaque=5, version=version), object())
    assert resp is not None and resp.is_response and resp.opaque == 5


def test_kv_value_java_cannot_write_as_utf8(tmp_path: Path) -> None:
    # a JSON header may carry "\ud800": Java's FileWriter writes "?" for it, and so do we
    ctx = make_ctx(tmp_path)
    assert call(ctx, R.PUT_KV_CONFIG, {"namespace": "NS", "key": "k", "value": "a\ud800b"}).code == 0
    assert json.loads((tmp_path / "kvConfig.json").read_text()) == {"configTable": {"NS": {"k": "a?b"}}}
