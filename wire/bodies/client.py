# Licensed under the Apache License, Version 2.0. See LICENSE.
# ruff: noqa: RUF009  (fields are declared with _base.prop, a dataclasses.field wrapper)
"""Client-facing bodies: heartbeats, queue locks, consumer lists, connections and statistics.

Sources (4.9.x ``common/src/main/java/org/apache/rocketmq/common/protocol/``, 5.x
``remoting/src/main/java/org/apache/rocketmq/remoting/protocol/``): ``heartbeat/HeartbeatData.java``,
``ConsumerData.java``, ``ProducerData.java``, ``SubscriptionData.java``, ``ConsumeType.java``,
``MessageModel.java``, ``common/consumer/ConsumeFromWhere.java``, ``body/LockBatchRequestBody.java``,
``UnlockBatchRequestBody.java``, ``LockBatchResponseBody.java``,
``header/GetConsumerListByGroupResponseBody.java`` (``body/`` in 5.x), ``body/Connection.java``,
``ConsumerConnection.java``, ``ProducerConnection.java``, ``ProducerInfo.java`` and
``ProducerTableInfo.java`` (5.x), ``common/admin/ConsumeStats.java``, ``OffsetWrapper.java``,
``TopicStatsTable.java``, ``TopicOffset.java`` (``admin/`` in 5.x), ``body/QueueTimeSpan.java``,
``QueryConsumeTimeSpanBody.java``, ``QueryCorrectionOffsetBody.java``, ``ConsumeQueueData.java``,
``QueryConsumeQueueResponseBody.java``, ``BrokerStatsData.java``, ``BrokerStatsItem.java``.

Enums are written by name. The C++ client writes them as ordinals (``"consumeType":1``), which
fastjson reads as the ordinal; we read both and write names.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from ..codes import LanguageCode
from ._base import (
    BOOL,
    DOUBLE,
    INT,
    INT_KEY,
    LONG,
    STR,
    STR_KEY,
    STR_LIST,
    EnumName,
    JsonBody,
    Map,
    Obj,
    Seq,
    prop,
)
from .common import MESSAGE_QUEUE_KEY, MessageQueue

__all__ = [
    "BrokerStatsData",
    "BrokerStatsItem",
    "CheckClientRequestBody",
    "Connection",
    "ConsumeFromWhere",
    "ConsumeQueueData",
    "ConsumeStats",
    "ConsumeType",
    "ConsumerConnection",
    "ConsumerData",
    "GetConsumerListByGroupResponseBody",
    "GetConsumerStatusBody",
    "HeartbeatData",
    "LockBatchRequestBody",
    "LockBatchResponseBody",
    "MessageModel",
    "OffsetWrapper",
    "ProducerConnection",
    "ProducerData",
    "ProducerInfo",
    "ProducerTableInfo",
    "QueryConsumeQueueResponseBody",
    "QueryConsumeTimeSpanBody",
    "QueryCorrectionOffsetBody",
    "QueueTimeSpan",
    "ResetOffsetBody",
    "ResetOffsetBodyForC",
    "ResetOffsetEntryForC",
    "SubscriptionData",
    "TopicOffset",
    "TopicStatsTable",
    "UnlockBatchRequestBody",
]


class ConsumeType(enum.IntEnum):
    """``ConsumeType`` (ordinals). CONSUME_POP is 5.x."""

    CONSUME_ACTIVELY = 0
    CONSUME_PASSIVELY = 1
    CONSUME_POP = 2


class MessageModel(enum.IntEnum):
    """``MessageModel`` (ordinals)."""

    BROADCASTING = 0
    CLUSTERING = 1


class ConsumeFromWhere(enum.IntEnum):
    """``ConsumeFromWhere`` (ordinals; 1..3 are deprecated in Java but still valid)."""

    CONSUME_FROM_LAST_OFFSET = 0
    CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST = 1
    CONSUME_FROM_MIN_OFFSET = 2
    CONSUME_FROM_MAX_OFFSET = 3
    CONSUME_FROM_FIRST_OFFSET = 4
    CONSUME_FROM_TIMESTAMP = 5


_CONSUME_TYPE = EnumName(ConsumeType)
_MESSAGE_MODEL = EnumName(MessageModel)
_CONSUME_FROM_WHERE = EnumName(ConsumeFromWhere)
_LANGUAGE = EnumName(LanguageCode)
_MQ_SET = Seq(Obj(MessageQueue))


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionData(JsonBody):
    """``SubscriptionData``: one topic subscription. ``filterClassSource`` is never written.

    ``sub_version`` defaults to 0 here (Java uses the creation time); the C++ client sends it as
    a string, which is read as the number.
    """

    class_filter_mode: bool = prop("classFilterMode", BOOL, False)
    topic: str | None = prop("topic", STR)
    sub_string: str | None = prop("subString", STR)
    tags_set: tuple[str, ...] = prop("tagsSet", STR_LIST, ())
    code_set: tuple[int, ...] = prop("codeSet", Seq(INT), ())
    sub_version: int = prop("subVersion", LONG, 0)
    expression_type: str | None = prop("expressionType", STR, "TAG")


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerData(JsonBody):
    """``ConsumerData``: one consumer group of a client."""

    group_name: str | None = prop("groupName", STR)
    consume_type: ConsumeType | int | str | None = prop("consumeType", _CONSUME_TYPE)
    message_model: MessageModel | int | str | None = prop("messageModel", _MESSAGE_MODEL)
    consume_from_where: ConsumeFromWhere | int | str | None = prop("consumeFromWhere", _CONSUME_FROM_WHERE)
    subscription_data_set: tuple[SubscriptionData, ...] = prop(
        "subscriptionDataSet", Seq(Obj(SubscriptionData)), ())
    unit_mode: bool = prop("unitMode", BOOL, False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProducerData(JsonBody):
    """``ProducerData``: one producer group of a client."""

    group_name: str | None = prop("groupName", STR)


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatData(JsonBody):
    """``HeartbeatData``, the HEART_BEAT request body.

    ``heartbeat_fingerprint`` and ``without_sub`` are 5.x (5.2+) properties, ``None`` when absent.
    """

    client_id: str | None = prop("clientID", STR)
    producer_data_set: tuple[ProducerData, ...] = prop("producerDataSet", Seq(Obj(ProducerData)), ())
    consumer_data_set: tuple[ConsumerData, ...] = prop("consumerDataSet", Seq(Obj(ConsumerData)), ())
    heartbeat_fingerprint: int | None = prop("heartbeatFingerprint", INT)
    without_sub: bool | None = prop("withoutSub", BOOL)


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckClientRequestBody(JsonBody):
    """``CheckClientRequestBody``, the CHECK_CLIENT_CONFIG (46) body: may this broker filter the
    subscription (a consumer asks before it starts with a SQL92 selector)?"""

    client_id: str | None = prop("clientId", STR)
    group: str | None = prop("group", STR)
    subscription_data: SubscriptionData | None = prop("subscriptionData", Obj(SubscriptionData))


@dataclass(frozen=True, slots=True, kw_only=True)
class LockBatchRequestBody(JsonBody):
    """``LockBatchRequestBody`` (LOCK_BATCH_MQ request). ``only_this_broker`` is 5.x."""

    consumer_group: str | None = prop("consumerGroup", STR)
    client_id: str | None = prop("clientId", STR)
    only_this_broker: bool | None = prop("onlyThisBroker", BOOL)
    mq_set: tuple[MessageQueue, ...] = prop("mqSet", _MQ_SET, ())


@dataclass(frozen=True, slots=True, kw_only=True)
class UnlockBatchRequestBody(JsonBody):
    """``UnlockBatchRequestBody`` (UNLOCK_BATCH_MQ request). ``only_this_broker`` is 5.x."""

    consumer_group: str | None = prop("consumerGroup", STR)
    client_id: str | None = prop("clientId", STR)
    only_this_broker: bool | None = prop("onlyThisBroker", BOOL)
    mq_set: tuple[MessageQueue, ...] = prop("mqSet", _MQ_SET, ())


@dataclass(frozen=True, slots=True, kw_only=True)
class LockBatchResponseBody(JsonBody):
    """``LockBatchResponseBody`` (LOCK_BATCH_MQ answer): the queues now locked by the caller."""

    lock_ok_mq_set: tuple[MessageQueue, ...] = prop("lockOKMQSet", _MQ_SET, ())


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerListByGroupResponseBody(JsonBody):
    """GET_CONSUMER_LIST_BY_GROUP answer: ``{"consumerIdList":[…]}``."""

    consumer_id_list: tuple[str, ...] | None = prop("consumerIdList", STR_LIST)


@dataclass(frozen=True, slots=True, kw_only=True)
class Connection(JsonBody):
    """``Connection``: one client channel (language by name, version as the MQVersion ordinal)."""

    client_id: str | None = prop("clientId", STR)
    client_addr: str | None = prop("clientAddr", STR)
    language: LanguageCode | int | str | None = prop("language", _LANGUAGE)
    version: int = prop("version", INT, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerConnection(JsonBody):
    """``ConsumerConnection`` (GET_CONSUMER_CONNECTION_LIST answer)."""

    connection_set: tuple[Connection, ...] = prop("connectionSet", Seq(Obj(Connection)), ())
    subscription_table: Mapping[str, SubscriptionData] = prop(
        "subscriptionTable", Map(STR_KEY, Obj(SubscriptionData)), factory=dict)
    consume_type: ConsumeType | int | str | None = prop("consumeType", _CONSUME_TYPE)
    message_model: MessageModel | int | str | None = prop("messageModel", _MESSAGE_MODEL)
    consume_from_where: ConsumeFromWhere | int | str | None = prop("consumeFromWhere", _CONSUME_FROM_WHERE)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProducerConnection(JsonBody):
    """``ProducerConnection`` (GET_PRODUCER_CONNECTION_LIST answer): ``{"connectionSet":[…]}``.

    The property is ``connectionSet`` in 4.9.x and 5.x alike.
    """

    connection_set: tuple[Connection, ...] = prop("connectionSet", Seq(Obj(Connection)), ())


@dataclass(frozen=True, slots=True, kw_only=True)
class ProducerInfo(JsonBody):
    """``ProducerInfo`` (5.x)."""

    client_id: str | None = prop("clientId", STR)
    remote_ip: str | None = prop("remoteIP", STR)
    language: LanguageCode | int | str | None = prop("language", _LANGUAGE)
    version: int = prop("version", INT, 0)
    last_update_timestamp: int = prop("lastUpdateTimestamp", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProducerTableInfo(JsonBody):
    """``ProducerTableInfo`` (GET_ALL_PRODUCER_INFO answer, 5.x): group to producers."""

    data: Mapping[str, tuple[ProducerInfo, ...]] = prop(
        "data", Map(STR_KEY, Seq(Obj(ProducerInfo))), factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetWrapper(JsonBody):
    """``OffsetWrapper``: one queue's progress in ConsumeStats. ``pull_offset`` is 5.x (5.1+)."""

    broker_offset: int = prop("brokerOffset", LONG, 0)
    consumer_offset: int = prop("consumerOffset", LONG, 0)
    pull_offset: int | None = prop("pullOffset", LONG)
    last_timestamp: int = prop("lastTimestamp", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeStats(JsonBody):
    """``ConsumeStats`` (GET_CONSUME_STATS answer): progress per :class:`MessageQueue`.

    ``offsetTable`` is keyed by MessageQueue objects, which fastjson writes as inline object keys.
    """

    offset_table: Mapping[MessageQueue, OffsetWrapper] = prop(
        "offsetTable", Map(MESSAGE_QUEUE_KEY, Obj(OffsetWrapper)), factory=dict)
    consume_tps: float = prop("consumeTps", DOUBLE, 0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetOffsetBody(JsonBody):
    """``ResetOffsetBody``: the offset per :class:`MessageQueue` of a reset (the answer to
    INVOKE_BROKER_TO_RESET_OFFSET, and what RESET_CONSUMER_CLIENT_OFFSET tells a Java client)."""

    offset_table: Mapping[MessageQueue, int] = prop("offsetTable", Map(MESSAGE_QUEUE_KEY, LONG), factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerStatusBody(JsonBody):
    """``GetConsumerStatusBody``: a client's offsets per queue (``messageQueueTable``, its answer to
    GET_CONSUMER_STATUS_FROM_CLIENT) and the broker's gathering of them by client id
    (``consumerTable``, the answer to INVOKE_BROKER_TO_GET_CONSUMER_STATUS)."""

    message_queue_table: Mapping[MessageQueue, int] = prop(
        "messageQueueTable", Map(MESSAGE_QUEUE_KEY, LONG), factory=dict)
    consumer_table: Mapping[str, Mapping[MessageQueue, int]] = prop(
        "consumerTable", Map(STR_KEY, Map(MESSAGE_QUEUE_KEY, LONG)), factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetOffsetEntryForC(JsonBody):
    """``MessageQueueForC``: one queue and its offset in :class:`ResetOffsetBodyForC`."""

    topic: str | None = prop("topic", STR, None)
    broker_name: str | None = prop("brokerName", STR, None)
    queue_id: int = prop("queueId", INT, 0)
    offset: int = prop("offset", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetOffsetBodyForC(JsonBody):
    """``ResetOffsetBodyForC``: the same as a list, which RESET_CONSUMER_CLIENT_OFFSET carries
    when the reset was asked in the CPP language (the C++ client cannot read object keys)."""

    offset_table: tuple[ResetOffsetEntryForC, ...] = prop("offsetTable", Seq(Obj(ResetOffsetEntryForC)), ())


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicOffset(JsonBody):
    """``TopicOffset``: one queue's offsets in TopicStatsTable."""

    min_offset: int = prop("minOffset", LONG, 0)
    max_offset: int = prop("maxOffset", LONG, 0)
    last_update_timestamp: int = prop("lastUpdateTimestamp", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicStatsTable(JsonBody):
    """``TopicStatsTable`` (GET_TOPIC_STATS_INFO answer), keyed by :class:`MessageQueue` objects."""

    offset_table: Mapping[MessageQueue, TopicOffset] = prop(
        "offsetTable", Map(MESSAGE_QUEUE_KEY, Obj(TopicOffset)), factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueTimeSpan(JsonBody):
    """``QueueTimeSpan``: one queue's first, last and consumed store times, and how long its next
    message has waited (``delayTime``, 0 when the group has consumed everything).

    fastjson writes the three getters ``…TimeStampStr`` too: the times as
    ``yyyy-MM-dd#HH:mm:ss:SSS`` in the broker's time zone (:func:`java_time_text`)."""

    message_queue: MessageQueue | None = prop("messageQueue", Obj(MessageQueue))
    min_time_stamp: int = prop("minTimeStamp", LONG, 0)
    min_time_stamp_str: str | None = prop("minTimeStampStr", STR)
    max_time_stamp: int = prop("maxTimeStamp", LONG, 0)
    max_time_stamp_str: str | None = prop("maxTimeStampStr", STR)
    consume_time_stamp: int = prop("consumeTimeStamp", LONG, 0)
    consume_time_stamp_str: str | None = prop("consumeTimeStampStr", STR)
    delay_time: int = prop("delayTime", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumeTimeSpanBody(JsonBody):
    """``QueryConsumeTimeSpanBody`` (QUERY_CONSUME_TIME_SPAN answer): one span per write queue."""

    consume_time_span_set: tuple[QueueTimeSpan, ...] = prop("consumeTimeSpanSet", Seq(Obj(QueueTimeSpan)), ())


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryCorrectionOffsetBody(JsonBody):
    """``QueryCorrectionOffsetBody`` (QUERY_CORRECTION_OFFSET answer): queue id to offset, the
    ``Integer`` keys written bare (``{0:5,1:7}``)."""

    correction_offsets: Mapping[int, int] = prop("correctionOffsets", Map(INT_KEY, LONG), factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeQueueData(JsonBody):
    """``ConsumeQueueData``: one ConsumeQueue unit. ``extendDataJson``, ``bitMap`` and ``eval``
    come from the ConsumeQueue extension (``enableConsumeQueueExt``); ``msg`` says when the
    extension's unit is missing."""

    physic_offset: int = prop("physicOffset", LONG, 0)
    physic_size: int = prop("physicSize", INT, 0)
    tags_code: int = prop("tagsCode", LONG, 0)
    extend_data_json: str | None = prop("extendDataJson", STR)
    bit_map: str | None = prop("bitMap", STR)
    eval: bool = prop("eval", BOOL, False)
    msg: str | None = prop("msg", STR)


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumeQueueResponseBody(JsonBody):
    """``QueryConsumeQueueResponseBody`` (QUERY_CONSUME_QUEUE answer, mqadmin queryCq): the queue's
    min and max index, its units from the index asked, and, when a group was named, that group's
    subscription and filter data (``filterData`` is text: ``"<group>@<topic> is not online!"``,
    or the ConsumerFilterData as pretty JSON, ``null`` for a tag subscription)."""

    subscription_data: SubscriptionData | None = prop("subscriptionData", Obj(SubscriptionData))
    filter_data: str | None = prop("filterData", STR)
    queue_data: tuple[ConsumeQueueData, ...] | None = prop("queueData", Seq(Obj(ConsumeQueueData)))
    max_queue_index: int = prop("maxQueueIndex", LONG, 0)
    min_queue_index: int = prop("minQueueIndex", LONG, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerStatsItem(JsonBody):
    """``BrokerStatsItem``: a statistic's sum, rate per second and average over one window."""

    sum: int = prop("sum", LONG, 0)
    tps: float = prop("tps", DOUBLE, 0.0)
    avgpt: float = prop("avgpt", DOUBLE, 0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerStatsData(JsonBody):
    """``BrokerStatsData`` (VIEW_BROKER_STATS_DATA answer): one statistic over the last minute,
    hour and day."""

    stats_minute: BrokerStatsItem | None = prop("statsMinute", Obj(BrokerStatsItem))
    stats_hour: BrokerStatsItem | None = prop("statsHour", Obj(BrokerStatsItem))
    stats_day: BrokerStatsItem | None = prop("statsDay", Obj(BrokerStatsItem))
