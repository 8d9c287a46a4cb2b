# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Headers of the client requests: send, pull, offsets, message queries, heartbeats and
consumer-group bookkeeping (the broker's hot path).

Part of :mod:`wire.headers` (import the classes from there); see its module notes for the
rules every class follows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..headers import (
    _B,
    _BT,
    _I,
    _L,
    _PB,
    CustomHeader,
    RpcRequestHeader,
    TopicQueueRequestHeader,
    TopicRequestHeader,
    _nn,
    _opt,
)

# ---------------------------------------------------------------------------------------- send


@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageRequestHeader(TopicQueueRequestHeader):
    """SEND_MESSAGE (10) and SEND_REPLY_MESSAGE (324): the long-key send header (V1).

    ``unitMode`` and ``batch`` are Java primitives (always sent) up to 5.2.x and ``Boolean`` from
    5.3.0. Superclass: none before 4.9.5, ``RpcRequestHeader`` in 4.9.5-4.9.8,
    ``TopicQueueRequestHeader`` in 5.x. The broker sends the message as a batch when ``batch`` is
    true (``SendMessageProcessor.asyncProcessRequest``).
    """

    producer_group: str = field(metadata=_nn("producerGroup"))
    topic: str = field(metadata=_nn("topic"))
    default_topic: str = field(metadata=_nn("defaultTopic"))
    default_topic_queue_nums: int = field(metadata=_nn("defaultTopicQueueNums", _I))
    queue_id: int = field(metadata=_nn("queueId", _I))
    sys_flag: int = field(metadata=_nn("sysFlag", _I))
    born_timestamp: int = field(metadata=_nn("bornTimestamp", _L))
    flag: int = field(metadata=_nn("flag", _I))
    properties: str | None = _opt("properties")
    reconsume_times: int | None = _opt("reconsumeTimes", _I)
    unit_mode: bool | None = _opt("unitMode", _PB, default=False)
    batch: bool | None = _opt("batch", _PB, default=False)
    max_reconsume_times: int | None = _opt("maxReconsumeTimes", _I)


@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageRequestHeaderV2(TopicQueueRequestHeader):
    """SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320, with ``batch``/``m`` true) and
    SEND_REPLY_MESSAGE_V2 (325): the short-key send header, a ``FastCodesHeader``.

    Java names its fields ``a``..``n`` (the keys); the attributes here carry the V1 names.
    ``k`` and ``m`` are primitives up to 5.2.x and ``Boolean`` from 5.3.0. ``n`` (broker name) is
    in 4.9.5-4.9.8 and 5.1.0+, not in 5.0.0. Superclass: ``RpcRequestHeader`` in 4.9.5-4.9.8, none
    in 5.0.0-5.1.x, ``TopicQueueRequestHeader`` from 5.2.0; the client leaves that ``bname`` unset
    and puts the broker name in ``n``. The 4.9.x ``encode`` writes ``a``..``n`` only.
    """

    fast_codes: ClassVar[bool] = True

    producer_group: str = field(metadata=_nn("a"))
    topic: str = field(metadata=_nn("b"))
    default_topic: str = field(metadata=_nn("c"))
    default_topic_queue_nums: int = field(metadata=_nn("d", _I))
    queue_id: int = field(metadata=_nn("e", _I))
    sys_flag: int = field(metadata=_nn("f", _I))
    born_timestamp: int = field(metadata=_nn("g", _L))
    flag: int = field(metadata=_nn("h", _I))
    properties: str | None = _opt("i")
    reconsume_times: int | None = _opt("j", _I)
    unit_mode: bool | None = _opt("k", _PB, default=False)
    #: the V2 source calls it consumeRetryTimes; V1's maxReconsumeTimes
    max_reconsume_times: int | None = _opt("l", _I)
    batch: bool | None = _opt("m", _PB, default=False)
    broker_name: str | None = _opt("n", since="4.9.5")

    @classmethod
    def from_v1(cls, v1: SendMessageRequestHeader) -> SendMessageRequestHeaderV2:
        """``createSendMessageRequestHeaderV2``: V1's ``bname`` becomes ``n``. Java copies only the
        a..n values; the other inherited fields and ``extra`` are carried over too."""
        return cls(
            producer_group=v1.producer_group, topic=v1.topic, default_topic=v1.default_topic,
            default_topic_queue_nums=v1.default_topic_queue_nums, queue_id=v1.queue_id,
            sys_flag=v1.sys_flag, born_timestamp=v1.born_timestamp, flag=v1.flag,
            properties=v1.properties, reconsume_times=v1.reconsume_times, unit_mode=v1.unit_mode,
            max_reconsume_times=v1.max_reconsume_times, batch=v1.batch, broker_name=v1.bname,
            ns=v1.ns, nsd=v1.nsd, oway=v1.oway, lo=v1.lo, extra=v1.extra)

    def to_v1(self) -> SendMessageRequestHeader:
        """``createSendMessageRequestHeaderV1``: ``n`` becomes V1's ``bname`` (V2's own ``bname``
        is used only when ``n`` is absent)."""
        return SendMessageRequestHeader(
            producer_group=self.producer_group, topic=self.topic, default_topic=self.default_topic,
            default_topic_queue_nums=self.default_topic_queue_nums, queue_id=self.queue_id,
            sys_flag=self.sys_flag, born_timestamp=self.born_timestamp, flag=self.flag,
            properties=self.properties, reconsume_times=self.reconsume_times, unit_mode=self.unit_mode,
            max_reconsume_times=self.max_reconsume_times, batch=self.batch,
            bname=self.broker_name if self.broker_name is not None else self.bname,
            ns=self.ns, nsd=self.nsd, oway=self.oway, lo=self.lo, extra=self.extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageResponseHeader(CustomHeader):
    """The answer to every send (10, 310, 320, 324, 325), a ``FastCodesHeader``.

    ``msgId`` is the offset message id (for a batch, the ids joined with ","). The broker also puts
    ``MSG_REGION`` and ``TRACE_ON`` in ``extFields`` of every send response
    (``SendMessageProcessor``); they land in ``extra`` (see :attr:`region`, :attr:`trace_on`).
    ``batchUniqId`` is 5.0.0+, ``recallHandle`` 5.3.2+.
    """

    fast_codes: ClassVar[bool] = True

    msg_id: str = field(metadata=_nn("msgId"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    queue_offset: int = field(metadata=_nn("queueOffset", _L))
    transaction_id: str | None = _opt("transactionId")
    batch_uniq_id: str | None = _opt("batchUniqId", since="5.0.0")
    recall_handle: str | None = _opt("recallHandle", since="5.3.2")

    @property
    def region(self) -> str:
        """``MSG_REGION``; the client reads a missing or empty one as ``DefaultRegion``
        (``MQClientAPIImpl.processSendResponse``)."""
        return self.extra.get("MSG_REGION") or "DefaultRegion"

    @property
    def trace_on(self) -> bool:
        """``TRACE_ON``: only the exact text ``"false"`` turns tracing off (same method)."""
        return self.extra.get("TRACE_ON") != "false"


# ---------------------------------------------------------------------------------------- pull


@dataclass(frozen=True, slots=True, kw_only=True)
class PullMessageRequestHeader(TopicQueueRequestHeader):
    """PULL_MESSAGE (11), a ``FastCodesHeader``.

    ``sysFlag`` is PullSysFlag (bit 0 COMMIT_OFFSET, 1 SUSPEND, 2 SUBSCRIPTION, 3 CLASS_FILTER,
    4 LITE_PULL). ``maxMsgBytes`` is 5.0.0+, ``requestSource`` and ``proxyFrowardClientId`` (sic)
    5.1.0+. 4.9.5-4.9.8 encode ``bname`` last; 5.x encodes ``lo, ns, nsd, bname, oway`` last.
    """

    fast_codes: ClassVar[bool] = True

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    queue_offset: int = field(metadata=_nn("queueOffset", _L))
    max_msg_nums: int = field(metadata=_nn("maxMsgNums", _I))
    sys_flag: int = field(metadata=_nn("sysFlag", _I))
    commit_offset: int = field(metadata=_nn("commitOffset", _L))
    suspend_timeout_millis: int = field(metadata=_nn("suspendTimeoutMillis", _L))
    subscription: str | None = _opt("subscription")
    sub_version: int = field(metadata=_nn("subVersion", _L))
    expression_type: str | None = _opt("expressionType")
    max_msg_bytes: int | None = _opt("maxMsgBytes", _I, since="5.0.0")
    request_source: int | None = _opt("requestSource", _I, since="5.1.0")
    proxy_froward_client_id: str | None = _opt("proxyFrowardClientId", since="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class PullMessageResponseHeader(CustomHeader):
    """The answer to PULL_MESSAGE, a ``FastCodesHeader``; sent with SUCCESS, PULL_NOT_FOUND,
    PULL_RETRY_IMMEDIATELY and PULL_OFFSET_MOVED. The four offset fields after ``maxOffset`` are
    5.0.0+."""

    fast_codes: ClassVar[bool] = True

    suggest_which_broker_id: int = field(metadata=_nn("suggestWhichBrokerId", _L))
    next_begin_offset: int = field(metadata=_nn("nextBeginOffset", _L))
    min_offset: int = field(metadata=_nn("minOffset", _L))
    max_offset: int = field(metadata=_nn("maxOffset", _L))
    offset_delta: int | None = _opt("offsetDelta", _L, since="5.0.0")
    topic_sys_flag: int | None = _opt("topicSysFlag", _I, since="5.0.0")
    group_sys_flag: int | None = _opt("groupSysFlag", _I, since="5.0.0")
    forbidden_type: int | None = _opt("forbiddenType", _I, since="5.0.0")


# ---------------------------------------------------------------------------------------- offsets


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumerOffsetRequestHeader(TopicQueueRequestHeader):
    """QUERY_CONSUMER_OFFSET (14). ``setZeroIfNotFound`` is 5.0.0+."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    set_zero_if_not_found: bool | None = _opt("setZeroIfNotFound", _B, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumerOffsetResponseHeader(CustomHeader):
    """The answer to QUERY_CONSUMER_OFFSET."""

    offset: int = field(metadata=_nn("offset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateConsumerOffsetRequestHeader(TopicQueueRequestHeader):
    """UPDATE_CONSUMER_OFFSET (15); clients usually send it oneway."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    commit_offset: int = field(metadata=_nn("commitOffset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateConsumerOffsetResponseHeader(CustomHeader):
    """The answer to UPDATE_CONSUMER_OFFSET: no fields."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMaxOffsetRequestHeader(TopicQueueRequestHeader):
    """GET_MAX_OFFSET (30). ``committed`` is 5.0.0+, a primitive initialised to true, so a 5.x
    client always sends it; ``None`` here means "not sent", which 5.x reads as true."""

    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    committed: bool | None = _opt("committed", _PB, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMaxOffsetResponseHeader(CustomHeader):
    """The answer to GET_MAX_OFFSET."""

    offset: int = field(metadata=_nn("offset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMinOffsetRequestHeader(TopicQueueRequestHeader):
    """GET_MIN_OFFSET (31)."""

    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMinOffsetResponseHeader(CustomHeader):
    """The answer to GET_MIN_OFFSET."""

    offset: int = field(metadata=_nn("offset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOffsetRequestHeader(TopicQueueRequestHeader):
    """SEARCH_OFFSET_BY_TIMESTAMP (29). ``boundaryType`` ("LOWER"/"UPPER") is 5.1.4+."""

    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    timestamp: int = field(metadata=_nn("timestamp", _L))
    boundary_type: str | None = _opt("boundaryType", _BT, since="5.1.4")


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOffsetResponseHeader(CustomHeader):
    """The answer to SEARCH_OFFSET_BY_TIMESTAMP."""

    offset: int = field(metadata=_nn("offset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetEarliestMsgStoretimeRequestHeader(TopicQueueRequestHeader):
    """GET_EARLIEST_MSG_STORETIME (32)."""

    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetEarliestMsgStoretimeResponseHeader(CustomHeader):
    """The answer to GET_EARLIEST_MSG_STORETIME."""

    timestamp: int = field(metadata=_nn("timestamp", _L))


# ---------------------------------------------------------------------------------------- query


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewMessageRequestHeader(CustomHeader):
    """VIEW_MESSAGE_BY_ID (33): ``offset`` is the commit-log offset from an offset message id.
    ``topic`` is 5.3.0+ (declared before ``offset`` there; JSON order carries no meaning)."""

    offset: int = field(metadata=_nn("offset", _L))
    topic: str | None = _opt("topic", since="5.3.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewMessageResponseHeader(CustomHeader):
    """The answer to VIEW_MESSAGE_BY_ID: no fields (the stored message is the body)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryMessageRequestHeader(TopicRequestHeader):
    """QUERY_MESSAGE (12), by key or by unique key. Superclass ``TopicRequestHeader`` from 5.2.0.

    A query by unique key is flagged by the free ext field ``_UNIQUE_KEY_QUERY`` (kept in
    ``extra``; see :attr:`unique_key_query`).
    """

    topic: str = field(metadata=_nn("topic"))
    key: str = field(metadata=_nn("key"))
    max_num: int = field(metadata=_nn("maxNum", _I))
    begin_timestamp: int = field(metadata=_nn("beginTimestamp", _L))
    end_timestamp: int = field(metadata=_nn("endTimestamp", _L))

    @property
    def unique_key_query(self) -> bool:
        """True when ``_UNIQUE_KEY_QUERY`` is exactly ``"true"`` (``QueryMessageProcessor``)."""
        return self.extra.get("_UNIQUE_KEY_QUERY") == "true"


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryMessageResponseHeader(CustomHeader):
    """The answer to QUERY_MESSAGE."""

    index_last_update_timestamp: int = field(metadata=_nn("indexLastUpdateTimestamp", _L))
    index_last_update_phyoffset: int = field(metadata=_nn("indexLastUpdatePhyoffset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryTopicConsumeByWhoRequestHeader(TopicRequestHeader):
    """QUERY_TOPIC_CONSUME_BY_WHO (300). Superclass ``TopicRequestHeader`` from 5.2.0."""

    topic: str = field(metadata=_nn("topic"))


# ---------------------------------------------------------------------------------------- clients


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatRequestHeader(RpcRequestHeader):
    """HEART_BEAT (34): no header before 5.2.0, then this empty ``RpcRequestHeader``. The body
    is HeartbeatData."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnregisterClientRequestHeader(RpcRequestHeader):
    """UNREGISTER_CLIENT (35). Superclass ``RpcRequestHeader`` from 5.2.0."""

    client_id: str = field(metadata=_nn("clientID"))
    producer_group: str | None = _opt("producerGroup")
    consumer_group: str | None = _opt("consumerGroup")


@dataclass(frozen=True, slots=True, kw_only=True)
class UnregisterClientResponseHeader(CustomHeader):
    """The answer to UNREGISTER_CLIENT: no fields."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerSendMsgBackRequestHeader(RpcRequestHeader):
    """CONSUMER_SEND_MSG_BACK (36). ``offset`` is the commit-log offset of the message;
    ``unitMode`` is a primitive. Superclass ``RpcRequestHeader`` in 4.9.5-4.9.8 and 5.1.0+
    (none in 5.0.0)."""

    offset: int = field(metadata=_nn("offset", _L))
    group: str = field(metadata=_nn("group"))
    delay_level: int = field(metadata=_nn("delayLevel", _I))
    origin_msg_id: str | None = _opt("originMsgId")
    origin_topic: str | None = _opt("originTopic")
    unit_mode: bool | None = _opt("unitMode", _PB, default=False)
    max_reconsume_times: int | None = _opt("maxReconsumeTimes", _I)


@dataclass(frozen=True, slots=True, kw_only=True)
class EndTransactionRequestHeader(RpcRequestHeader):
    """END_TRANSACTION (37), producer to broker, oneway from the Java client: commit (8),
    roll back (12) or leave pending (0) the half message at ``commitLogOffset`` whose queue offset
    in the half topic is ``tranStateTableOffset``. ``fromTransactionCheck`` is true when the
    producer answers a CHECK_TRANSACTION_STATE. Superclass ``RpcRequestHeader`` in 4.9.5-4.9.8
    and 5.1.0+ (none in 5.0.0)."""

    producer_group: str = field(metadata=_nn("producerGroup"))
    tran_state_table_offset: int = field(metadata=_nn("tranStateTableOffset", _L))
    commit_log_offset: int = field(metadata=_nn("commitLogOffset", _L))
    commit_or_rollback: int = field(metadata=_nn("commitOrRollback", _I))
    from_transaction_check: bool | None = _opt("fromTransactionCheck", _B, default=False)
    msg_id: str = field(metadata=_nn("msgId"))
    transaction_id: str | None = _opt("transactionId")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckTransactionStateRequestHeader(RpcRequestHeader):
    """CHECK_TRANSACTION_STATE (39), broker to producer, oneway: what became of the half
    message at ``commitLogOffset`` (the body is that message, encoded as stored, under its real
    topic and queue). ``msgId`` and ``transactionId`` are its UNIQ_KEY, ``offsetMsgId`` its
    offset message id. Superclass ``RpcRequestHeader`` in 4.9.5-4.9.8 and 5.1.0+."""

    tran_state_table_offset: int = field(metadata=_nn("tranStateTableOffset", _L))
    commit_log_offset: int = field(metadata=_nn("commitLogOffset", _L))
    msg_id: str | None = _opt("msgId")
    transaction_id: str | None = _opt("transactionId")
    offset_msg_id: str | None = _opt("offsetMsgId")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerRunningInfoRequestHeader(CustomHeader):
    """GET_CONSUMER_RUNNING_INFO (307): admin to broker, relayed by the broker to the consumer
    ``clientId`` of ``consumerGroup`` (mqadmin consumerStatus); the answer is the client's
    ``ConsumerRunningInfo``, with its thread dump when ``jstackEnable``."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    client_id: str = field(metadata=_nn("clientId"))
    jstack_enable: bool | None = _opt("jstackEnable", _PB, default=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeMessageDirectlyResultRequestHeader(CustomHeader):
    """CONSUME_MESSAGE_DIRECTLY (309): admin to broker, relayed to the consumer ``clientId`` with
    the stored message the offset id ``msgId`` names as the body (the broker adds
    ``brokerName``); the answer is the client's ``ConsumeMessageDirectlyResult``."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    client_id: str | None = _opt("clientId")
    msg_id: str | None = _opt("msgId")
    broker_name: str | None = _opt("brokerName")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerStatusRequestHeader(CustomHeader):
    """INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223), admin to broker (mqadmin getConsumerStatus), and
    GET_CONSUMER_STATUS_FROM_CLIENT (221), broker to each consumer: the consumers' offsets of
    ``group`` on ``topic``; ``clientAddr`` (a client id) asks one consumer only."""

    topic: str = field(metadata=_nn("topic"))
    group: str = field(metadata=_nn("group"))
    client_addr: str | None = _opt("clientAddr")


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetOffsetRequestHeader(CustomHeader):
    """INVOKE_BROKER_TO_RESET_OFFSET (222), admin to broker (mqadmin resetOffsetByTime), and
    RESET_CONSUMER_CLIENT_OFFSET (220), broker to each consumer of the group: the offsets of
    ``group`` on ``topic`` go back (or forward, with ``isForce``) to the first message stored at
    ``timestamp`` (-1: the queue's end). ``isForce`` is sent under the field's own name."""

    topic: str = field(metadata=_nn("topic"))
    group: str = field(metadata=_nn("group"))
    timestamp: int = field(metadata=_nn("timestamp", _L))
    is_force: bool = field(metadata=_nn("isForce", _PB))


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumeCheckHalfMessageRequestHeader(CustomHeader):
    """RESUME_CHECK_HALF_MESSAGE (323), admin to broker (mqadmin resumeCheckHalfMessage): write
    the message at the offset message id ``msgId`` again into ``RMQ_SYS_TRANS_HALF_TOPIC`` with
    its check count at 0, so that the transaction check service asks about it again."""

    msg_id: str | None = _opt("msgId")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyMessageRequestHeader(CustomHeader):
    """PUSH_REPLY_MESSAGE_TO_CLIENT (326), broker to the requesting producer: a reply message
    (request-reply), the responder's send header with the hosts and the store time; the body is
    the reply's body. ``bornHost`` and ``storeHost`` are ``ip:port`` text."""

    producer_group: str = field(metadata=_nn("producerGroup"))
    topic: str = field(metadata=_nn("topic"))
    default_topic: str = field(metadata=_nn("defaultTopic"))
    default_topic_queue_nums: int = field(metadata=_nn("defaultTopicQueueNums", _I))
    queue_id: int = field(metadata=_nn("queueId", _I))
    sys_flag: int = field(metadata=_nn("sysFlag", _I))
    born_timestamp: int = field(metadata=_nn("bornTimestamp", _L))
    flag: int = field(metadata=_nn("flag", _I))
    properties: str | None = _opt("properties")
    reconsume_times: int | None = _opt("reconsumeTimes", _I)
    unit_mode: bool | None = _opt("unitMode", _PB, default=False)
    born_host: str = field(metadata=_nn("bornHost"))
    store_host: str = field(metadata=_nn("storeHost"))
    store_timestamp: int = field(metadata=_nn("storeTimestamp", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerListByGroupRequestHeader(RpcRequestHeader):
    """GET_CONSUMER_LIST_BY_GROUP (38). Superclass ``RpcRequestHeader`` from 5.2.0."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerListByGroupResponseHeader(CustomHeader):
    """The answer to GET_CONSUMER_LIST_BY_GROUP: no fields (the body lists the client ids)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyConsumerIdsChangedRequestHeader(RpcRequestHeader):
    """NOTIFY_CONSUMER_IDS_CHANGED (40), broker to client, oneway. Superclass
    ``RpcRequestHeader`` from 5.2.0."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))


@dataclass(frozen=True, slots=True, kw_only=True)
class LockBatchMqRequestHeader(RpcRequestHeader):
    """LOCK_BATCH_MQ (41): no header before 5.2.0, then this empty one. The body is
    LockBatchRequestBody."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnlockBatchMqRequestHeader(RpcRequestHeader):
    """UNLOCK_BATCH_MQ (42): as LOCK_BATCH_MQ."""
