# Licensed under the Apache License, Version 2.0. See LICENSE.
# ruff: noqa: RUF009  (fields are declared with _base.prop, a dataclasses.field wrapper)
"""Broker configuration bodies: topic configs, broker registration, subscription groups, offsets.

Sources (4.9.x ``common/src/main/java/org/apache/rocketmq/common/``, 5.x ``remoting/…/protocol/`` and
``common/``): ``TopicConfig.java``, ``protocol/body/TopicConfigSerializeWrapper.java``,
``TopicConfigAndMappingSerializeWrapper.java`` (5.x), ``protocol/body/RegisterBrokerBody.java``,
``subscription/SubscriptionGroupConfig.java``, ``GroupRetryPolicy.java`` (5.x),
``protocol/body/SubscriptionGroupWrapper.java``, ``ConsumerOffsetSerializeWrapper.java``,
``broker/…/offset/ConsumerOffsetManager.java`` (the GET_ALL_CONSUMER_OFFSET body),
``…/schedule/DelayOffsetSerializeWrapper.java``, ``MessageRequestModeSerializeWrapper.java``,
``SetMessageRequestModeRequestBody.java``, ``store/…/timer/TimerMetrics.java`` and
``TimerCheckpoint.java`` (5.x).

REGISTER_BROKER's body has two forms, told apart by the request header's ``compressed`` field
(``RegisterBrokerBody.decode(data, compressed)``): plain fastjson JSON, or a zlib stream
(``DeflaterOutputStream``, best compression) of length-prefixed sections,
:data:`REGISTER_BROKER_BODY_INFLATED`. In that form each topic config is the space-separated text
of ``TopicConfig.encode()`` (:meth:`TopicConfig.encode_text`), which carries neither
``topicSysFlag`` nor ``order``.
"""

from __future__ import annotations

import enum
import re
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Self

from construct import (
    ConstructError,
    GreedyBytes,
    If,
    Int32sb,
    Int64sb,
    Peek,
    Prefixed,
    PrefixedArray,
    Struct,
    Terminated,
    this,
)

from .. import fastjson
from ..errors import DecodeError, EncodeError, TrailingBytes, Truncated, decode_utf8
from ..fastjson import FrozenObject
from ._base import (
    BOOL,
    INT,
    INT_KEY,
    LONG,
    STR,
    STR_KEY,
    STR_LIST,
    STR_MAP,
    EnumName,
    JsonBody,
    Map,
    Obj,
    Seq,
    prop,
    utf8,
)
from .common import DataVersion
from .route import TopicQueueMappingDetail, TopicQueueMappingInfo

__all__ = [
    "REGISTER_BROKER_BODY_INFLATED",
    "TIMER_CHECKPOINT",
    "ConsumerOffsetSerializeWrapper",
    "CustomizedRetryPolicy",
    "DelayOffsetSerializeWrapper",
    "ExponentialRetryPolicy",
    "GroupRetryPolicy",
    "GroupRetryPolicyType",
    "MessageRequestMode",
    "MessageRequestModeSerializeWrapper",
    "RegisterBrokerBody",
    "SetMessageRequestModeRequestBody",
    "SimpleSubscriptionData",
    "SubscriptionGroupConfig",
    "SubscriptionGroupWrapper",
    "TimerCheckpoint",
    "TimerMetric",
    "TimerMetricsSerializeWrapper",
    "TopicConfig",
    "TopicConfigSerializeWrapper",
    "TopicFilterType",
]


class TopicFilterType(enum.IntEnum):
    """``TopicFilterType`` (ordinals)."""

    SINGLE_TAG = 0
    MULTI_TAG = 1


_INT_TEXT = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicConfig(JsonBody):
    """``TopicConfig``. Defaults are Java's: 16/16 queues, perm 6 (read+write), SINGLE_TAG.

    ``attributes`` is 5.x (always written there, ``{}`` when empty); ``None`` is the 4.9.x shape.
    """

    topic_name: str | None = prop("topicName", STR)
    read_queue_nums: int = prop("readQueueNums", INT, 16)
    write_queue_nums: int = prop("writeQueueNums", INT, 16)
    perm: int = prop("perm", INT, 6)
    topic_filter_type: TopicFilterType | int | str = prop(
        "topicFilterType", EnumName(TopicFilterType), TopicFilterType.SINGLE_TAG)
    topic_sys_flag: int = prop("topicSysFlag", INT, 0)
    order: bool = prop("order", BOOL, False)
    attributes: Mapping[str, str] | None = prop("attributes", STR_MAP)

    def encode_text(self) -> str:
        """``TopicConfig.encode()``: ``name read write perm filterType`` and, in 5.x, `` attributes``."""
        if self.topic_name is None:
            raise EncodeError("TopicConfig text form needs a topic name", field="topicName")
        kind = self.topic_filter_type
        kind_text = kind.name if isinstance(kind, TopicFilterType) else str(kind)
        text = f"{self.topic_name} {self.read_queue_nums} {self.write_queue_nums} {self.perm} {kind_text}"
        if self.attributes is not None:
            text += " " + fastjson.dumps(dict(self.attributes))
        return text

    @classmethod
    def decode_text(cls, text: str, path: str = "topicConfig") -> Self:
        """``TopicConfig.decode(String)``: split on single spaces, at least five parts.

        As in 5.x, a sixth part is the attributes JSON; when it does not parse (attributes with
        spaces break the split) the attributes are dropped, as Java drops them.
        """
        parts = text.split(" ")
        while parts and not parts[-1]:  # String.split drops trailing empty strings
            parts.pop()
        if len(parts) < 5:
            raise DecodeError(f"{path}: topic config text {text[:60]!r} has {len(parts)} parts, "
                              "expected at least 5", field=path, expected=">= 5 parts", found=len(parts))
        numbers = []
        for i, name in ((1, "readQueueNums"), (2, "writeQueueNums"), (3, "perm")):
            # mirrors Integer.parseInt
            text = parts[i]
            if not _INT_TEXT.fullmatch(text) or len(text) > 12 or not -(2**31) <= int(text) < 2**31:
                raise DecodeError(f"{path}.{name}: {parts[i][:20]!r} is not an int", field=f"{path}.{name}",
                                  expected="an int", found=parts[i][:20])
            numbers.append(int(parts[i]))
        kind = TopicFilterType.__members__.get(parts[4])
        if kind is None:  # TopicFilterType.valueOf throws
            raise DecodeError(f"{path}.topicFilterType: unknown {parts[4][:20]!r}",
                              field=f"{path}.topicFilterType", expected="SINGLE_TAG or MULTI_TAG",
                              found=parts[4][:20])
        attributes = None
        if len(parts) >= 6:
            try:
                attributes = STR_MAP.load(fastjson.loads(parts[5]), f"{path}.attributes")
            except DecodeError:
                attributes = None
        return cls(topic_name=parts[0], read_queue_nums=numbers[0], write_queue_nums=numbers[1],
                   perm=numbers[2], topic_filter_type=kind, attributes=attributes)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicConfigSerializeWrapper(JsonBody):
    """``TopicConfigSerializeWrapper`` (GET_ALL_TOPIC_CONFIG answer, inside RegisterBrokerBody).

    The three mapping properties are 5.x's ``TopicConfigAndMappingSerializeWrapper``
    (``None``: not carried, the 4.9.x shape).
    """

    topic_config_table: Mapping[str, TopicConfig] = prop(
        "topicConfigTable", Map(STR_KEY, Obj(TopicConfig)), factory=dict)
    data_version: DataVersion | None = prop("dataVersion", Obj(DataVersion))
    mapping_data_version: DataVersion | None = prop("mappingDataVersion", Obj(DataVersion))
    topic_queue_mapping_info_map: Mapping[str, TopicQueueMappingInfo] | None = prop(
        "topicQueueMappingInfoMap", Map(STR_KEY, Obj(TopicQueueMappingInfo)))
    topic_queue_mapping_detail_map: Mapping[str, TopicQueueMappingDetail] | None = prop(
        "topicQueueMappingDetailMap", Map(STR_KEY, Obj(TopicQueueMappingDetail)))


# The inflated compressed form of RegisterBrokerBody (RegisterBrokerBody.encode(true) /
# decode(data, true)). Every int is big-endian (ByteBuffer.putInt). The last section exists only
# when a 5.x broker wrote the body (it always writes it, with count 0 when there is no mapping);
# a 4.9.x broker ends after filterServerList. Peek tells the two apart at the end of the data: it
# only returns None when fewer than four bytes are left, and Terminated rejects 1..3 stray bytes.
REGISTER_BROKER_BODY_INFLATED = Struct(
    "data_version" / Prefixed(Int32sb, GreedyBytes),  # DataVersion JSON
    "topic_configs" / PrefixedArray(Int32sb, Prefixed(Int32sb, GreedyBytes)),  # TopicConfig text
    "filter_server_list" / Prefixed(Int32sb, GreedyBytes),  # JSON array of strings
    "mapping_count" / Peek(Int32sb),
    "topic_queue_mapping_infos" / If(this.mapping_count != None,  # noqa: E711 (a construct expression)
                                     PrefixedArray(Int32sb, Prefixed(Int32sb, GreedyBytes))),
    Terminated,
)

#: Inflating stops with an error beyond this size (a compressed body expands about 20 times).
MAX_INFLATED_REGISTER_BODY = 64 * 1024 * 1024


def _inflate(data: bytes) -> bytes:
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, MAX_INFLATED_REGISTER_BODY)
    except zlib.error as exc:
        raise DecodeError(f"compressed register body does not inflate: {exc}", offset=0,
                          field="body", expected="a zlib stream", found=data[:4].hex()) from None
    if inflater.unconsumed_tail:
        raise DecodeError(f"compressed register body inflates beyond {MAX_INFLATED_REGISTER_BODY} bytes",
                          offset=0, field="body", expected=f"<= {MAX_INFLATED_REGISTER_BODY} bytes")
    if not inflater.eof:
        raise Truncated("compressed register body ends inside the zlib stream", offset=len(data),
                        field="body", expected="the end of the zlib stream", found=len(data))
    if inflater.unused_data:
        end = len(data) - len(inflater.unused_data)
        raise TrailingBytes(f"{len(inflater.unused_data)} bytes after the zlib stream", offset=end,
                            field="body", expected=end, found=len(data))
    return out


def _json_section(raw: bytes, what: str) -> Any:
    return fastjson.loads(decode_utf8(raw, None, what), what=what)


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerBody(JsonBody):
    """``RegisterBrokerBody``, the REGISTER_BROKER request body (4.9.x and 5.x).

    ``decode(data, compressed=…)`` and ``encode(compressed=…)`` take the header's ``compressed``
    flag. In the compressed form the topic configs lose ``topicSysFlag`` and ``order`` (they come
    back as 0/false) and the 5.x mapping section holds only ``topicQueueMappingInfoMap``.
    """

    topic_config_serialize_wrapper: TopicConfigSerializeWrapper = prop(
        "topicConfigSerializeWrapper", Obj(TopicConfigSerializeWrapper), factory=TopicConfigSerializeWrapper)
    filter_server_list: tuple[str, ...] = prop("filterServerList", STR_LIST, ())

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview | str, *, compressed: bool = False) -> Self:
        if not compressed:
            return cls.from_json_checked(fastjson.loads(data, what="RegisterBrokerBody"))
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        inflated = _inflate(raw)
        try:
            parsed = REGISTER_BROKER_BODY_INFLATED.parse(inflated)
        except (ConstructError, ValueError, OverflowError, IndexError, KeyError, struct.error) as exc:
            raise DecodeError(f"inflated register body: {exc}", field=f"inflated.{_construct_path(exc)}",
                              expected="RegisterBrokerBody sections") from None
        version = DataVersion.from_json(_json_section(parsed.data_version, "dataVersion"), "dataVersion")
        table: dict[str, TopicConfig] = {}
        for i, raw_config in enumerate(parsed.topic_configs):
            where = f"topicConfigs[{i}]"
            config = TopicConfig.decode_text(decode_utf8(raw_config, None, where), where)
            table[config.topic_name or ""] = config
        where = "filterServerList"
        filters = STR_LIST.load(_json_section(parsed.filter_server_list, where), where)
        infos: dict[str, TopicQueueMappingInfo] | None = None
        if parsed.topic_queue_mapping_infos is not None:
            infos = {}
            for i, raw_info in enumerate(parsed.topic_queue_mapping_infos):
                where = f"topicQueueMappingInfos[{i}]"
                info = TopicQueueMappingInfo.from_json(_json_section(raw_info, where), where)
                infos[info.topic or ""] = info
        wrapper = TopicConfigSerializeWrapper(topic_config_table=table, data_version=version,
                                              topic_queue_mapping_info_map=infos)
        return cls(topic_config_serialize_wrapper=wrapper, filter_server_list=tuple(filters or ()))

    def encode(self, *, standard: bool = False, compressed: bool = False) -> bytes:
        if not compressed:
            return JsonBody.encode(self, standard=standard)
        wrapper = self.topic_config_serialize_wrapper
        version = wrapper.data_version or DataVersion()
        infos = wrapper.topic_queue_mapping_info_map
        sections = {
            "data_version": version.encode(),
            "topic_configs": [utf8(c.encode_text(), "topicConfig")
                              for c in wrapper.topic_config_table.values()],
            "filter_server_list": utf8(fastjson.dumps(list(self.filter_server_list)), "filterServerList"),
            "mapping_count": None if infos is None else len(infos),
            "topic_queue_mapping_infos": None if infos is None else [i.encode() for i in infos.values()],
        }
        try:
            inflated = REGISTER_BROKER_BODY_INFLATED.build(sections)
        except (ConstructError, struct.error) as exc:
            raise EncodeError(f"register body does not fit its sections: {exc}") from None
        return zlib.compress(inflated, 9)  # Deflater(BEST_COMPRESSION), zlib wrapper

    def without_compressed_losses(self) -> Self:
        """This body as it reads back from the compressed form.

        The topic configs lose ``topicSysFlag``, ``order`` and unknown properties and are keyed
        by their names; the wrapper keeps only the data version and the mapping infos.
        """
        wrapper = self.topic_config_serialize_wrapper
        table = {v.topic_name or "": replace(v, topic_sys_flag=0, order=False, extra=FrozenObject({}))
                 for v in wrapper.topic_config_table.values()}
        infos = wrapper.topic_queue_mapping_info_map
        return type(self)(
            topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
                topic_config_table=table, data_version=wrapper.data_version or DataVersion(),
                topic_queue_mapping_info_map=None if infos is None else {
                    i.topic or "": i for i in infos.values()}),
            filter_server_list=self.filter_server_list)


def _construct_path(exc: ConstructError) -> str:
    path = getattr(exc, "path", None) or ""
    return path.replace("(parsing) -> ", "").replace(" -> ", ".") or "?"


# ------------------------------------------------------------------ subscription groups


class GroupRetryPolicyType(enum.IntEnum):
    """``GroupRetryPolicyType`` (5.x, ordinals)."""

    EXPONENTIAL = 0
    CUSTOMIZED = 1


#: ``CustomizedRetryPolicy``'s default delays, in milliseconds.
DEFAULT_RETRY_DELAYS = (1000, 5000, 10000, 30000, 60000, 120000, 180000, 240000, 300000, 360000,
                        420000, 480000, 540000, 600000, 1200000, 1800000, 3600000, 7200000)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExponentialRetryPolicy(JsonBody):
    """``ExponentialRetryPolicy`` (5.x)."""

    initial: int = prop("initial", LONG, 5000)
    max: int = prop("max", LONG, 7200000)
    multiplier: int = prop("multiplier", LONG, 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomizedRetryPolicy(JsonBody):
    """``CustomizedRetryPolicy`` (5.x): the delay before each retry."""

    next: tuple[int, ...] = prop("next", Seq(LONG), DEFAULT_RETRY_DELAYS)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRetryPolicy(JsonBody):
    """``GroupRetryPolicy`` (5.x): ``{"type":"CUSTOMIZED"}`` by default."""

    type: GroupRetryPolicyType | int | str = prop(
        "type", EnumName(GroupRetryPolicyType), GroupRetryPolicyType.CUSTOMIZED)
    exponential_retry_policy: ExponentialRetryPolicy | None = prop(
        "exponentialRetryPolicy", Obj(ExponentialRetryPolicy))
    customized_retry_policy: CustomizedRetryPolicy | None = prop(
        "customizedRetryPolicy", Obj(CustomizedRetryPolicy))


@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleSubscriptionData(JsonBody):
    """``SimpleSubscriptionData`` (5.1+, in ``SubscriptionGroupConfig.subscriptionDataSet``)."""

    topic: str | None = prop("topic", STR)
    expression_type: str | None = prop("expressionType", STR)
    expression: str | None = prop("expression", STR)
    version: int = prop("version", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionGroupConfig(JsonBody):
    """``SubscriptionGroupConfig`` (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP body, wrapper table values).

    The properties after ``notify_consumer_ids_changed_enable`` are 5.x (``None``: not carried).
    """

    group_name: str | None = prop("groupName", STR)
    consume_enable: bool = prop("consumeEnable", BOOL, True)
    consume_from_min_enable: bool = prop("consumeFromMinEnable", BOOL, True)
    consume_broadcast_enable: bool = prop("consumeBroadcastEnable", BOOL, True)
    retry_queue_nums: int = prop("retryQueueNums", INT, 1)
    retry_max_times: int = prop("retryMaxTimes", INT, 16)
    broker_id: int = prop("brokerId", LONG, 0)
    which_broker_when_consume_slowly: int = prop("whichBrokerWhenConsumeSlowly", LONG, 1)
    notify_consumer_ids_changed_enable: bool = prop("notifyConsumerIdsChangedEnable", BOOL, True)
    consume_message_orderly: bool | None = prop("consumeMessageOrderly", BOOL)
    group_retry_policy: GroupRetryPolicy | None = prop("groupRetryPolicy", Obj(GroupRetryPolicy))
    group_sys_flag: int | None = prop("groupSysFlag", INT)
    consume_timeout_minute: int | None = prop("consumeTimeoutMinute", INT)
    subscription_data_set: tuple[SimpleSubscriptionData, ...] | None = prop(
        "subscriptionDataSet", Seq(Obj(SimpleSubscriptionData)))
    attributes: Mapping[str, str] | None = prop("attributes", STR_MAP)


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionGroupWrapper(JsonBody):
    """``SubscriptionGroupWrapper`` (GET_ALL_SUBSCRIPTIONGROUP_CONFIG answer).

    ``forbidden_table`` (group to topic to forbidden bits) is 5.x.
    """

    subscription_group_table: Mapping[str, SubscriptionGroupConfig] = prop(
        "subscriptionGroupTable", Map(STR_KEY, Obj(SubscriptionGroupConfig)), factory=dict)
    data_version: DataVersion | None = prop("dataVersion", Obj(DataVersion))
    forbidden_table: Mapping[str, Mapping[str, int]] | None = prop(
        "forbiddenTable", Map(STR_KEY, Map(STR_KEY, INT)))


# ------------------------------------------------------------------ offsets


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerOffsetSerializeWrapper(JsonBody):
    """Consumer offsets: ``{"offsetTable":{"topic@group":{queueId:offset}}}`` (GET_ALL_CONSUMER_OFFSET).

    The queue ids are Integer keys, written bare. 5.x brokers also write ``dataVersion`` and the
    computed ``groupTopicMap`` (group to topics), both ``None`` for 4.9.x.
    """

    offset_table: Mapping[str, Mapping[int, int]] = prop(
        "offsetTable", Map(STR_KEY, Map(INT_KEY, LONG)), factory=dict)
    data_version: DataVersion | None = prop("dataVersion", Obj(DataVersion))
    group_topic_map: Mapping[str, tuple[str, ...]] | None = prop("groupTopicMap", Map(STR_KEY, STR_LIST))


@dataclass(frozen=True, slots=True, kw_only=True)
class DelayOffsetSerializeWrapper(JsonBody):
    """Schedule (delay level) offsets: ``{"offsetTable":{level:offset}}`` (GET_ALL_DELAY_OFFSET).

    ``data_version`` is 5.x.
    """

    offset_table: Mapping[int, int] = prop("offsetTable", Map(INT_KEY, LONG), factory=dict)
    data_version: DataVersion | None = prop("dataVersion", Obj(DataVersion))


# ------------------------------------------------------------------ 5.x message request modes, timers


class MessageRequestMode(enum.IntEnum):
    """``MessageRequestMode`` (5.x, ordinals)."""

    PULL = 0
    POP = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class SetMessageRequestModeRequestBody(JsonBody):
    """``SetMessageRequestModeRequestBody`` (SET_MESSAGE_REQUEST_MODE body, 5.x)."""

    topic: str | None = prop("topic", STR)
    consumer_group: str | None = prop("consumerGroup", STR)
    mode: MessageRequestMode | int | str = prop("mode", EnumName(MessageRequestMode), MessageRequestMode.PULL)
    pop_share_queue_num: int = prop("popShareQueueNum", INT, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageRequestModeSerializeWrapper(JsonBody):
    """GET_ALL_MESSAGE_REQUEST_MODE answer (5.x): topic to group to mode."""

    message_request_mode_map: Mapping[str, Mapping[str, SetMessageRequestModeRequestBody]] = prop(
        "messageRequestModeMap", Map(STR_KEY, Map(STR_KEY, Obj(SetMessageRequestModeRequestBody))),
        factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TimerMetric(JsonBody):
    """``TimerMetrics.Metric`` (5.x)."""

    count: int = prop("count", LONG, 0)
    time_stamp: int = prop("timeStamp", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class TimerMetricsSerializeWrapper(JsonBody):
    """GET_TIMER_METRICS answer (5.x): ``{"dataVersion":…,"timingCount":{topic:metric}}``."""

    timing_count: Mapping[str, TimerMetric] = prop(
        "timingCount", Map(STR_KEY, Obj(TimerMetric)), factory=dict)
    data_version: DataVersion | None = prop("dataVersion", Obj(DataVersion))


# TimerCheckpoint.encode (5.x): seven big-endian longs. Older checkpoints stop after the first
# four (TimerCheckpoint.decode reads the data version only when bytes remain).
TIMER_CHECKPOINT = Struct(
    "last_read_time_ms" / Int64sb,
    "last_timer_log_flush_pos" / Int64sb,
    "last_timer_queue_offset" / Int64sb,
    "master_timer_queue_offset" / Int64sb,
    "data_version" / If(this._.with_data_version, Struct(
        "state_version" / Int64sb,
        "timestamp" / Int64sb,
        "counter" / Int64sb,
    )),
    Terminated,
)
_TIMER_CHECKPOINT_SIZES = {32: False, 56: True}


@dataclass(frozen=True, slots=True)
class TimerCheckpoint:
    """GET_TIMER_CHECK_POINT answer (5.x), binary: :data:`TIMER_CHECKPOINT`."""

    last_read_time_ms: int = 0
    last_timer_log_flush_pos: int = 0
    last_timer_queue_offset: int = 0
    master_timer_queue_offset: int = 0
    #: ``None`` for the 32-byte form without a data version
    data_version: DataVersion | None = field(default=None)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Self:
        raw = bytes(data)
        with_version = _TIMER_CHECKPOINT_SIZES.get(len(raw))
        if with_version is None:
            raise DecodeError(f"timer checkpoint of {len(raw)} bytes, expected 32 or 56", offset=0,
                              field="TimerCheckpoint", expected="32 or 56 bytes", found=len(raw))
        try:
            c = TIMER_CHECKPOINT.parse(raw, with_data_version=with_version)
        except ConstructError as exc:
            raise DecodeError(f"timer checkpoint: {exc}", offset=0, field="TimerCheckpoint") from None
        version = None
        if c.data_version is not None:
            version = DataVersion(counter=c.data_version.counter, timestamp=c.data_version.timestamp,
                                  state_version=c.data_version.state_version)
        return cls(c.last_read_time_ms, c.last_timer_log_flush_pos, c.last_timer_queue_offset,
                   c.master_timer_queue_offset, version)

    def encode(self, *, standard: bool = False) -> bytes:
        v = self.data_version
        values: dict[str, Any] = {
            "last_read_time_ms": self.last_read_time_ms,
            "last_timer_log_flush_pos": self.last_timer_log_flush_pos,
            "last_timer_queue_offset": self.last_timer_queue_offset,
            "master_timer_queue_offset": self.master_timer_queue_offset,
            "data_version": None if v is None else {
                "state_version": v.state_version or 0, "timestamp": v.timestamp, "counter": v.counter},
        }
        try:
            return bytes(TIMER_CHECKPOINT.build(values, with_data_version=v is not None))
        except (ConstructError, struct.error) as exc:
            raise EncodeError(f"timer checkpoint: {exc}") from None

