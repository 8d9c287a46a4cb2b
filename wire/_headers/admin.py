# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Headers of the admin requests a broker serves: topics, subscription groups, statistics and
connections.

Part of :mod:`wire.headers` (import the classes from there); see its module notes for the
rules every class follows."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..headers import (
    _B,
    _I,
    _PB,
    _PI,
    _PL,
    CustomHeader,
    RpcRequestHeader,
    TopicQueueRequestHeader,
    TopicRequestHeader,
    _nn,
    _opt,
)

# ---------------------------------------------------------------------------------------- admin


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTopicRequestHeader(TopicRequestHeader):
    """UPDATE_AND_CREATE_TOPIC (17).

    ``perm`` is PermName bits (2 WRITE, 4 READ, 6 RW); ``topicFilterType`` is ``SINGLE_TAG`` or
    ``MULTI_TAG``. ``order`` is a ``@CFNotNull`` Boolean initialised to false, so Java always sends
    it. ``attributes`` and ``force`` (initialised to false) are 5.0.0+. Superclass
    ``TopicRequestHeader`` from 5.2.0.
    """

    topic: str = field(metadata=_nn("topic"))
    default_topic: str = field(metadata=_nn("defaultTopic"))
    read_queue_nums: int = field(metadata=_nn("readQueueNums", _I))
    write_queue_nums: int = field(metadata=_nn("writeQueueNums", _I))
    perm: int = field(metadata=_nn("perm", _I))
    topic_filter_type: str = field(metadata=_nn("topicFilterType"))
    topic_sys_flag: int | None = _opt("topicSysFlag", _I)
    order: bool = _opt("order", _B, default=False, not_null=True)
    attributes: str | None = _opt("attributes", since="5.0.0")
    force: bool | None = _opt("force", _B, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteTopicRequestHeader(TopicRequestHeader):
    """DELETE_TOPIC_IN_BROKER (215). Superclass ``TopicRequestHeader`` from 5.2.0."""

    topic: str = field(metadata=_nn("topic"))


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteSubscriptionGroupRequestHeader(RpcRequestHeader):
    """DELETE_SUBSCRIPTIONGROUP (207).

    The flag that also drops the group's offsets changed its key: 4.9.x ``removeOffset``
    (primitive, always sent), 5.0.0+ ``cleanOffset`` (primitive initialised to false). Superclass
    ``RpcRequestHeader`` from 5.2.0.
    """

    group_name: str = field(metadata=_nn("groupName"))
    remove_offset: bool | None = _opt("removeOffset", _PB, default=False, until="4.9.8")
    clean_offset: bool | None = _opt("cleanOffset", _PB, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetTopicStatsInfoRequestHeader(TopicRequestHeader):
    """GET_TOPIC_STATS_INFO (202). Superclass ``TopicRequestHeader`` from 5.0.0."""

    topic: str = field(metadata=_nn("topic"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumeStatsRequestHeader(TopicRequestHeader):
    """GET_CONSUME_STATS (208). ``topicList`` is 5.3.2+; superclass ``TopicRequestHeader`` from
    5.2.0."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    topic: str | None = _opt("topic")
    topic_list: str | None = _opt("topicList", since="5.3.2")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerConnectionListRequestHeader(RpcRequestHeader):
    """GET_CONSUMER_CONNECTION_LIST (203). Superclass ``RpcRequestHeader`` from 5.2.0."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetProducerConnectionListRequestHeader(RpcRequestHeader):
    """GET_PRODUCER_CONNECTION_LIST (204). Superclass ``RpcRequestHeader`` from 5.2.0."""

    producer_group: str = field(metadata=_nn("producerGroup"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetAllTopicConfigResponseHeader(CustomHeader):
    """The answer to GET_ALL_TOPIC_CONFIG (21; the request has no header in any release).
    Empty in every release; develop after 5.3.3 adds a ``@CFNotNull totalTopicNum`` for paged
    reads, optional here so released brokers' answers decode."""

    total_topic_num: int | None = _opt("totalTopicNum", _I, since="develop")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetBrokerConfigResponseHeader(CustomHeader):
    """The answer to GET_BROKER_CONFIG (26; no request header): the broker's DataVersion JSON."""

    version: str = field(metadata=_nn("version"))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumeTimeSpanRequestHeader(TopicRequestHeader):
    """QUERY_CONSUME_TIME_SPAN (303). Superclass ``TopicRequestHeader`` from 5.2.0."""

    topic: str = field(metadata=_nn("topic"))
    group: str = field(metadata=_nn("group"))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryCorrectionOffsetHeader(TopicRequestHeader):
    """QUERY_CORRECTION_OFFSET (308). ``filterGroups`` is a comma-separated list of groups left out
    of the minimum. Superclass ``TopicRequestHeader`` from 5.2.0."""

    filter_groups: str | None = _opt("filterGroups")
    compare_group: str = field(metadata=_nn("compareGroup"))
    topic: str = field(metadata=_nn("topic"))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumeQueueRequestHeader(TopicQueueRequestHeader):
    """QUERY_CONSUME_QUEUE (321, mqadmin queryCq). ``queueId``, ``index`` and ``count`` are Java
    primitives (always sent); no field is ``@CFNotNull``. Superclass ``TopicQueueRequestHeader``
    from 5.2.0."""

    topic: str | None = _opt("topic")
    queue_id: int = _opt("queueId", _PI, default=0)
    index: int = _opt("index", _PL, default=0)
    count: int = _opt("count", _PI, default=0)
    consumer_group: str | None = _opt("consumerGroup")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetAllProducerInfoRequestHeader(CustomHeader):
    """GET_ALL_PRODUCER_INFO (328, mqadmin producer): no fields."""
