# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The name server's request handlers (``namesrv/processor/DefaultRequestProcessor.java``, 4.9.8).

Each handler is a plain function ``handler(ctx, request, channel) -> response | None`` over a
:class:`NamesrvContext` (route tables, KV store, configuration); ``channel`` identifies the
connection the request came on (REGISTER_BROKER remembers it for liveness). :data:`HANDLERS`
maps request codes to handlers and :func:`process` handles one request at once. The handlers
whose work follows the number of topics (REGISTER_BROKER, UNREGISTER_BROKER, the write
permission edits) also come in steps (:data:`STEPPED`, the ``*_steps`` changes of
:mod:`.routeinfo`): :func:`process_steps` is what the server calls, and runs those in turns with
its other connections (:class:`.server.RouteGate`).

Behaviour worth knowing, all as the 4.9.8 Java name server does it:

* **Unknown request codes get no response at all**: the default processor returns null for a
  code it does not handle, and the remoting layer then writes nothing; the connection stays
  open (capture ``10-error-responses``, case 2). The house rule of answering
  REQUEST_CODE_NOT_SUPPORTED applies to the broker, which registers a processor per code.
* Responses carry the request's serialize type (``request.response``), except the SYSTEM_ERROR
  answer to a request that could not be processed at all (a header or body that does not
  decode), which Java builds outside the normal path, in the server default (JSON).
* GET_ROUTEINFO_BY_TOPIC writes standard JSON for clients of V4_9_4 or later or those sending
  ``acceptStandardJsonOnly=true``, fastjson's bare-key form otherwise; GET_BROKER_CLUSTER_INFO
  is always the bare-key form.

One difference on purpose: Java's reflective header decoder only logs a missing ``@CFNotNull``
field or a number that does not parse and carries on with null (which then usually ends in a
NullPointerException, i.e. SYSTEM_ERROR); we answer SYSTEM_ERROR at once, naming the field.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from reference_broker.bodies import BodyDecoders, request_body
from reference_broker.config import ConfigError, NamesrvConfig, format_properties
from reference_broker.files import string_to_file
from wire import DecodeError, MQVersion, RemotingCommand, RequestCode, ResponseCode, SerializeType
from wire.bodies import (
    DataVersion,
    PropertiesBody,
    RegisterBrokerBody,
    TopicConfig,
    TopicConfigSerializeWrapper,
    TopicList,
    encode_properties,
    route_json_standard,
)
from wire.headers import (
    AddWritePermOfBrokerRequestHeader,
    AddWritePermOfBrokerResponseHeader,
    CustomHeader,
    DeleteKVConfigRequestHeader,
    DeleteTopicFromNamesrvRequestHeader,
    GetKVConfigRequestHeader,
    GetKVConfigResponseHeader,
    GetKVListByNamespaceRequestHeader,
    GetRouteInfoRequestHeader,
    GetTopicsByClusterRequestHeader,
    PutKVConfigRequestHeader,
    RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader,
    UnRegisterBrokerRequestHeader,
    WipeWritePermOfBrokerRequestHeader,
    WipeWritePermOfBrokerResponseHeader,
    response,
)

from ..steps import Steps, run_steps
from .kvconfig import NAMESPACE_ORDER_TOPIC_CONFIG, KVConfigManager
from .routeinfo import RouteInfoManager

__all__ = [
    "ALWAYS_BLACKLISTED",
    "BODIES",
    "HANDLERS",
    "ROUTE_FREE_CODES",
    "STEPPED",
    "Handler",
    "NamesrvContext",
    "RequestFailed",
    "SteppedHandler",
    "process",
    "process_steps",
    "topic_not_exist_remark",
]

log = logging.getLogger("reference_broker.namesrv")

#: ``FAQUrl.APPLY_TOPIC_URL`` wrapped by ``FAQUrl.suggestTodo``
_FAQ_SUFFIX = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
#: keys UPDATE_NAMESRV_CONFIG never changes, whatever ``configBlackList`` says
#: (``DefaultRequestProcessor.initConfigBlackList``)
ALWAYS_BLACKLISTED = frozenset({"configBlackList", "configStorePath", "kvConfigPath", "rocketmqHome"})
#: the serialize type of answers built outside the normal path (``serializeTypeConfigInThisServer``)
SERVER_SERIALIZE_TYPE = SerializeType.JSON

_INT_TEXT = re.compile(r"[+-]?[0-9]+")


def topic_not_exist_remark(topic: str) -> str:
    """The remark of TOPIC_NOT_EXIST, byte for byte as 4.9.8 writes it."""
    return f"No topic route info in name server for the topic: {topic}{_FAQ_SUFFIX}"


class RequestFailed(Exception):
    """The request cannot be processed; :func:`process` answers SYSTEM_ERROR with ``remark``."""

    def __init__(self, remark: str) -> None:
        super().__init__(remark)
        self.remark = remark


@dataclass
class NamesrvContext:
    """Everything the handlers work on."""

    config: NamesrvConfig
    routes: RouteInfoManager = field(default_factory=RouteInfoManager)
    kv: KVConfigManager = field(default_factory=lambda: KVConfigManager(None))
    #: where UPDATE_NAMESRV_CONFIG writes the whole configuration (None: nowhere)
    config_store_path: str | None = None
    #: keys UPDATE_NAMESRV_CONFIG refuses; fixed at start-up, as Java reads it once
    config_black_list: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.config_black_list:
            configured = {k for k in self.config.get("configBlackList").split(";") if k}
            self.config_black_list = ALWAYS_BLACKLISTED | configured

    def persist_config(self) -> None:
        """``Configuration.persist``: write every key to the config store path."""
        if not self.config_store_path:
            return
        path = Path(self.config_store_path)
        try:
            string_to_file(format_properties(self.config.values), path)
        except OSError as exc:
            log.error("cannot persist the configuration to %s: %s", path, exc)


Handler = Callable[[NamesrvContext, RemotingCommand, object], RemotingCommand | None]
#: a handler in steps (:mod:`.routeinfo`): yields between steps, returns the response
SteppedHandler = Callable[[NamesrvContext, RemotingCommand, object], Steps[RemotingCommand | None]]

H = TypeVar("H", bound=CustomHeader)


def _header(cls: type[H], request: RemotingCommand) -> H:
    try:
        return cls.from_ext(request.ext_fields)
    except DecodeError as exc:
        raise RequestFailed(f"{cls.__name__}: {exc.reason}") from None


def _ok(request: RemotingCommand, header: CustomHeader | None = None,
        body: bytes | None = None) -> RemotingCommand:
    return response(request, header, ResponseCode.SUCCESS, None, body)


# ====================================================================== KV config


def put_kv_config(ctx: NamesrvContext, request: RemotingCommand, channel: object) -> RemotingCommand:
    h = _header(PutKVConfigRequestHeader, request)
    ctx.kv.put(h.namespace, h.key, h.value)
    return _ok(request)


def get_kv_config(ctx: NamesrvContext, request: RemotingCommand, channel: object) -> RemotingCommand:
    h = _header(GetKVConfigRequestHeader, request)
    value = ctx.kv.get(h.namespace, h.key)
    if value is not None:
        return _ok(request, GetKVConfigResponseHeader(value=value))
    return response(request, None, ResponseCode.QUERY_NOT_FOUND,
                    f"No config item, Namespace: {h.namespace} Key: {h.key}")


def delete_kv_config(ctx: NamesrvContext, request: RemotingCommand, channel: object) -> RemotingCommand:
    h = _header(DeleteKVConfigRequestHeader, request)
    ctx.kv.delete(h.namespace, h.key)
    return _ok(request)


def get_kv_list_by_namespace(ctx: NamesrvContext, request: RemotingCommand,
                             channel: object) -> RemotingCommand:
    h = _header(GetKVListByNamespaceRequestHeader, request)
    table = ctx.kv.namespace_table(h.namespace)
    if table is not None:
        return _ok(request, body=table.encode())
    return response(request, None, ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {h.namespace}")


def _order_topic_config_body(ctx: NamesrvContext) -> bytes | None:
    table = ctx.kv.namespace_table(NAMESPACE_ORDER_TOPIC_CONFIG)
    return table.encode() if table is not None else None


# ====================================================================== brokers


def _crc_ok(h: RegisterBrokerRequestHeader, body: bytes | None) -> bool:
    # mirrors DefaultRequestProcessor.checksum: checked only when the header carries a non-zero
    # value; UtilAll.crc32 is CRC32 & 0x7FFFFFFF, and 0 for a missing body
    if not h.body_crc32:
        return True
    crc = zlib.crc32(body) & 0x7FFFFFFF if body is not None else 0
    return crc == h.body_crc32


def _registration(request: RemotingCommand) -> tuple[TopicConfigSerializeWrapper | None,
                                                      tuple[str, ...] | None]:
    """The topic configs and filter servers of a REGISTER_BROKER body."""
    # mirrors processRequest: brokers older than V3_0_11 send a bare TopicConfigSerializeWrapper
    with_filter_servers = request.version >= MQVersion.V3_0_11
    filter_servers: tuple[str, ...] | None = () if with_filter_servers else None
    if request.body is None:
        return None, filter_servers
    try:
        if with_filter_servers:
            compressed = request.ext_fields.get("compressed", "").lower() == "true"  # Boolean.parseBoolean
            body = RegisterBrokerBody.decode(request.body, compressed=compressed)
            return body.topic_config_serialize_wrapper, body.filter_server_list
        return TopicConfigSerializeWrapper.decode(request.body), filter_servers
    except DecodeError as exc:
        raise RequestFailed(f"Failed to decode RegisterBrokerBody: {exc}") from None


def register_broker_steps(ctx: NamesrvContext, request: RemotingCommand,
                          channel: object) -> Steps[RemotingCommand | None]:
    h = _header(RegisterBrokerRequestHeader, request)
    if not _crc_ok(h, request.body):
        log.warning("REGISTER_BROKER from %s: crc32 not match", h.broker_addr)
        return response(request, None, ResponseCode.SYSTEM_ERROR, "crc32 not match")
    wrapper, filter_servers = request_body(channel, request, _registration)
    configs: Iterable[TopicConfig] = ()
    if wrapper is None:
        version = DataVersion(counter=0, timestamp=0)
    else:
        # a body without dataVersion keeps Java's field initialiser: a fresh DataVersion stamped now
        version = wrapper.data_version or DataVersion(counter=0, timestamp=ctx.routes.clock())
        configs = wrapper.topic_config_table.values()
    result = yield from ctx.routes.register_broker_steps(
        h.cluster_name, h.broker_addr, h.broker_name, h.broker_id, h.ha_server_addr, version, configs,
        filter_servers, channel, enable_acting_master=h.enable_acting_master)
    header = RegisterBrokerResponseHeader(ha_server_addr=result.ha_server_addr,
                                          master_addr=result.master_addr)
    return _ok(request, header, _order_topic_config_body(ctx))


def unregister_broker_steps(ctx: NamesrvContext, request: RemotingCommand,
                            channel: object) -> Steps[RemotingCommand | None]:
    h = _header(UnRegisterBrokerRequestHeader, request)
    yield from ctx.routes.unregister_broker_steps(h.cluster_name, h.broker_addr, h.broker_name, h.broker_id)
    return _ok(request)


_QUERY_DATA_VERSION_FIELDS = ("brokerName", "brokerAddr", "clusterName", "brokerId")


def _data_version(request: RemotingCommand) -> DataVersion:
    try:
        return DataVersion.decode(request.body or b"")
    except DecodeError as exc:
        raise RequestFailed(f"DataVersion body: {exc}") from None


def query_data_version(ctx: NamesrvContext, request: RemotingCommand, channel: object) -> RemotingCommand:
    """QUERY_DATA_VERSION (322): has the broker's topic config changed since it last registered?
    A broker whose version is unchanged counts as alive (its timestamp is refreshed)."""
    # QueryDataVersionRequestHeader: all four fields @CFNotNull; brokerId is a Long
    ext = request.ext_fields
    for key in _QUERY_DATA_VERSION_FIELDS:
        if key not in ext:
            raise RequestFailed(f"QueryDataVersionRequestHeader: the @CFNotNull field {key} is missing")
    if not _INT_TEXT.fullmatch(ext["brokerId"]):
        raise RequestFailed(f"QueryDataVersionRequestHeader: brokerId {ext['brokerId']!r} is not a Long")
    if request.body is None:
        raise RequestFailed("QUERY_DATA_VERSION carries no DataVersion body")
    sent = request_body(channel, request, _data_version)
    addr = ext["brokerAddr"]
    changed = ctx.routes.is_broker_topic_config_changed(addr, sent)
    if not changed:
        ctx.routes.update_broker_info_update_timestamp(addr, ctx.routes.clock())
    ours = ctx.routes.query_broker_topic_config(addr)
    return request.response(ResponseCode.SUCCESS, None, {"changed": changed},
                            ours.encode() if ours is not None else None)


def wipe_write_perm_of_broker_steps(ctx: NamesrvContext, request: RemotingCommand,
                                    channel: object) -> Steps[RemotingCommand | None]:
    h = _header(WipeWritePermOfBrokerRequestHeader, request)
    count = yield from ctx.routes.wipe_write_perm_of_broker_steps(h.broker_name)
    log.info("wiped the write permission of broker %s: %d topics", h.broker_name, count)
    return _ok(request, WipeWritePermOfBrokerResponseHeader(wipe_topic_count=count))


def add_write_perm_of_broker_steps(ctx: NamesrvContext, request: RemotingCommand,
                                   channel: object) -> Steps[RemotingCommand | None]:
    h = _header(AddWritePermOfBrokerRequestHeader, request)
    count = yield from ctx.routes.add_write_perm_of_broker_steps(h.broker_name)
    log.info("restored the write permission of broker %s: %d topics", h.broker_name, count)
    return _ok(request, AddWritePermOfBrokerResponseHeader(add_topic_count=count))


# ====================================================================== routes and lists


def get_route_info_by_topic(ctx: NamesrvContext, request: RemotingCommand,
                            channel: object) -> RemotingCommand:
    h = _header(GetRouteInfoRequestHeader, request)
    route = ctx.routes.pickup_topic_route_data(h.topic)
    if route is None:
        return response(request, None, ResponseCode.TOPIC_NOT_EXIST, topic_not_exist_remark(h.topic))
    if ctx.config.order_message_enable:
        route = replace(route, order_topic_conf=ctx.kv.get(NAMESPACE_ORDER_TOPIC_CONFIG, h.topic))
    standard = route_json_standard(request.version, h.accept_standard_json_only)
    return _ok(request, body=route.encode(standard=standard))


def get_broker_cluster_info(ctx: NamesrvContext, request: RemotingCommand,
                            channel: object) -> RemotingCommand:
    return _ok(request, body=ctx.routes.get_all_cluster_info().encode())


def _topic_list(request: RemotingCommand, topics: TopicList) -> RemotingCommand:
    return _ok(request, body=topics.encode())


def get_all_topic_list(ctx: NamesrvContext, request: RemotingCommand, channel: object) -> RemotingCommand:
    return _topic_list(request, ctx.routes.get_all_topic_list())


def get_topics_by_cluster(ctx: NamesrvContext, request: RemotingCommand,
                          channel: object) -> RemotingCommand:
    h = _header(GetTopicsByClusterRequestHeader, request)
    return _topic_list(request, ctx.routes.get_topics_by_cluster(h.cluster))


def get_system_topic_list(ctx: NamesrvContext, request: RemotingCommand,
                          channel: object) -> RemotingCommand:
    return _topic_list(request, ctx.routes.get_system_topic_list())


def get_unit_topic_list(ctx: NamesrvContext, request: RemotingCommand, channel: object) -> RemotingCommand:
    return _topic_list(request, ctx.routes.get_unit_topics())


def get_has_unit_sub_topic_list(ctx: NamesrvContext, request: RemotingCommand,
                                channel: object) -> RemotingCommand:
    return _topic_list(request, ctx.routes.get_has_unit_sub_topic_list())


def get_has_unit_sub_un_unit_topic_list(ctx: NamesrvContext, request: RemotingCommand,
                                        channel: object) -> RemotingCommand:
    return _topic_list(request, ctx.routes.get_has_unit_sub_un_unit_topic_list())


def delete_topic_in_namesrv(ctx: NamesrvContext, request: RemotingCommand,
                            channel: object) -> RemotingCommand:
    h = _header(DeleteTopicFromNamesrvRequestHeader, request)
    ctx.routes.delete_topic(h.topic, h.cluster_name or None)
    return _ok(request)


# ====================================================================== configuration


def _config_changes(request: RemotingCommand) -> dict[str, str] | None:
    try:
        return dict(PropertiesBody.decode(request.body or b"").table)
    except DecodeError:
        return None


def update_namesrv_config(ctx: NamesrvContext, request: RemotingCommand,
                          channel: object) -> RemotingCommand:
    """UPDATE_NAMESRV_CONFIG (318): Properties text. A blacklisted key refuses the whole update
    (NO_PERMISSION); otherwise keys the configuration already has take the new values, as
    ``Configuration.update`` (``mergeIfExist``) does, and the configuration is persisted."""
    if request.body is None:
        return _ok(request)
    changes = request_body(channel, request, _config_changes)
    if changes is None:
        return response(request, None, ResponseCode.SYSTEM_ERROR, "string2Properties error")
    if any(k in ctx.config_black_list for k in changes):
        return response(request, None, ResponseCode.NO_PERMISSION, "Can not update config in black list.")
    # Java's properties2Object swallows a value that does not parse (the old value stays, the
    # answer says SUCCESS); here such an update is refused whole, saying why (docs/servers.md)
    bad = []
    for key, value in changes.items():
        default = ctx.config.DEFAULTS.get(key)
        if key not in ctx.config.values or default is None:
            continue
        if default in ("true", "false") and value.strip().lower() not in ("true", "false"):
            bad.append(f"{key}: expected true or false, got {value!r}")
        elif _INT_TEXT.fullmatch(default) and not _INT_TEXT.fullmatch(value.strip()):
            bad.append(f"{key}: expected an integer, got {value!r}")
    if bad:
        return response(request, None, ResponseCode.SYSTEM_ERROR, "; ".join(bad) + "; nothing was changed")
    for key, value in changes.items():
        if key not in ctx.config.values:
            continue  # mergeIfExist: keys the configuration does not hold are ignored
        if ctx.config.DEFAULTS.get(key) in ("true", "false"):
            value = value.strip().lower()
        try:
            ctx.config.update({key: value.strip() if _INT_TEXT.fullmatch(value.strip()) else value},
                              source="UPDATE_NAMESRV_CONFIG")
        except ConfigError as exc:
            log.warning("UPDATE_NAMESRV_CONFIG: %s", exc)
            continue
        log.info("configuration updated: %s=%s", key, value)
    ctx.persist_config()
    return _ok(request)


def get_namesrv_config(ctx: NamesrvContext, request: RemotingCommand, channel: object) -> RemotingCommand:
    # MixAll.properties2String: key=value lines, nothing escaped
    text = encode_properties(dict(sorted(ctx.config.values.items())))
    return _ok(request, body=text or None)


# ====================================================================== dispatch

R = RequestCode

#: request code -> handler in steps (the changes whose work follows the number of topics)
STEPPED: dict[int, SteppedHandler] = {
    R.REGISTER_BROKER: register_broker_steps,
    R.UNREGISTER_BROKER: unregister_broker_steps,
    R.WIPE_WRITE_PERM_OF_BROKER: wipe_write_perm_of_broker_steps,
    R.ADD_WRITE_PERM_OF_BROKER: add_write_perm_of_broker_steps,
}


def _at_once(stepped: SteppedHandler) -> Handler:
    def handler(ctx: NamesrvContext, request: RemotingCommand, channel: object) -> RemotingCommand | None:
        return run_steps(stepped(ctx, request, channel))

    handler.__name__ = stepped.__name__.removesuffix("_steps")
    handler.__doc__ = stepped.__doc__
    return handler


register_broker = _at_once(register_broker_steps)
unregister_broker = _at_once(unregister_broker_steps)
wipe_write_perm_of_broker = _at_once(wipe_write_perm_of_broker_steps)
add_write_perm_of_broker = _at_once(add_write_perm_of_broker_steps)

#: request code -> handler (STYLE B3); codes not here get no response at all (see the module notes)
HANDLERS: dict[int, Handler] = {
    R.PUT_KV_CONFIG: put_kv_config,
    R.GET_KV_CONFIG: get_kv_config,
    R.DELETE_KV_CONFIG: delete_kv_config,
    R.QUERY_DATA_VERSION: query_data_version,
    R.REGISTER_BROKER: register_broker,
    R.UNREGISTER_BROKER: unregister_broker,
    R.GET_ROUTEINFO_BY_TOPIC: get_route_info_by_topic,
    R.GET_BROKER_CLUSTER_INFO: get_broker_cluster_info,
    R.WIPE_WRITE_PERM_OF_BROKER: wipe_write_perm_of_broker,
    R.ADD_WRITE_PERM_OF_BROKER: add_write_perm_of_broker,
    R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: get_all_topic_list,
    R.DELETE_TOPIC_IN_NAMESRV: delete_topic_in_namesrv,
    R.GET_KVLIST_BY_NAMESPACE: get_kv_list_by_namespace,
    R.GET_TOPICS_BY_CLUSTER: get_topics_by_cluster,
    R.GET_SYSTEM_TOPIC_LIST_FROM_NS: get_system_topic_list,
    R.GET_UNIT_TOPIC_LIST: get_unit_topic_list,
    R.GET_HAS_UNIT_SUB_TOPIC_LIST: get_has_unit_sub_topic_list,
    R.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: get_has_unit_sub_un_unit_topic_list,
    R.UPDATE_NAMESRV_CONFIG: update_namesrv_config,
    R.GET_NAMESRV_CONFIG: get_namesrv_config,
}


#: request code -> the decoding of its body, for :func:`reference_broker.bodies.preparer`
BODIES: BodyDecoders = {
    R.REGISTER_BROKER: _registration,
    R.QUERY_DATA_VERSION: _data_version,
    R.UPDATE_NAMESRV_CONFIG: _config_changes,
}


#: the requests that neither read nor change the route tables (the KV store and the
#: configuration have their own locks in Java): the server never makes them wait for a change
#: of the route tables done in steps
ROUTE_FREE_CODES = frozenset({R.PUT_KV_CONFIG, R.GET_KV_CONFIG, R.DELETE_KV_CONFIG, R.GET_KVLIST_BY_NAMESPACE,
                              R.UPDATE_NAMESRV_CONFIG, R.GET_NAMESRV_CONFIG})


def process(ctx: NamesrvContext, request: RemotingCommand, channel: object = None) -> RemotingCommand | None:
    """Handle one request: its response, or None when Java sends none (unknown codes to a 4.9.8
    name server; oneway requests get theirs dropped by the connection). With the embedded
    controller (a 5.x name server) an unknown code gets REQUEST_CODE_NOT_SUPPORTED, as from 5.0.0."""
    handler = HANDLERS.get(request.code)
    if handler is None:
        if ctx.config.bool("enableControllerInNamesrv"):
            # a name server with the embedded controller is a 5.x one, and 5.0.0 answers
            return request.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                                    f" request type {request.code} not supported",
                                    serialize_type=SERVER_SERIALIZE_TYPE)
        log.debug("no handler for request code %d: no response, as the 4.9.8 name server", request.code)
        return None
    try:
        return handler(ctx, request, channel)
    except RequestFailed as exc:
        return _failed(request, exc)


def process_steps(ctx: NamesrvContext, request: RemotingCommand,
                  channel: object = None) -> Steps[RemotingCommand | None]:
    """:func:`process` in steps: the same answer, with the loop given its turn between steps of
    the changes in :data:`STEPPED`; any other request is handled in its first step."""
    stepped = STEPPED.get(request.code)
    if stepped is None:
        return process(ctx, request, channel)
    try:
        return (yield from stepped(ctx, request, channel))
    except RequestFailed as exc:
        return _failed(request, exc)


def _failed(request: RemotingCommand, exc: RequestFailed) -> RemotingCommand:
    log.warning("request %s failed: %s", request.code_name, exc.remark)
    return request.response(ResponseCode.SYSTEM_ERROR, exc.remark, serialize_type=SERVER_SERIALIZE_TYPE)
