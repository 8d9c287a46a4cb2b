# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Administration requests (``AdminBrokerProcessor`` of 4.9.8).

Topics: UPDATE_AND_CREATE_TOPIC (17, then the new topic is registered with the name servers
before the answer, ``registerIncrementBrokerData``), DELETE_TOPIC_IN_BROKER (215, the consume
queues of every topic no longer in the table go too, ``cleanUnusedTopic``), GET_ALL_TOPIC_CONFIG
(21). Groups: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200), GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201),
DELETE_SUBSCRIPTIONGROUP (207). A slave refuses the changes ("Can't modify topic or subscription
group from slave broker, …"). For the slave's synchronisation (next: HA) the full tables are
served by 21, 43 (GET_ALL_CONSUMER_OFFSET), 45 (GET_ALL_DELAY_OFFSET) and 201.

Inspection: GET_BROKER_RUNTIME_INFO (28, the KVTable mqadmin's clusterList and brokerStatus
read), GET_TOPIC_STATS_INFO (202), GET_CONSUMER_CONNECTION_LIST (203),
GET_PRODUCER_CONNECTION_LIST (204), GET_CONSUME_STATS (208; ``MessageQueue`` objects as map keys),
QUERY_TOPIC_CONSUME_BY_WHO (300), GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305).

Configuration: GET_BROKER_CONFIG (26: ``key=value`` lines, ext ``version`` = the configuration's
DataVersion JSON) and UPDATE_BROKER_CONFIG (25: the whole configuration is then written to the
broker's ``-c`` file, as ``Configuration.persist`` does; keys of ``configBlackList`` are refused with
NO_PERMISSION; an update with a value that does not fit its key's type is refused whole, where
Java's reflective setter skips it and answers SUCCESS; a new ``brokerPermission`` is registered at
once).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection
from wire.bodies import (
    BrokerStatsData,
    BrokerStatsItem,
    Connection,
    ConsumerConnection,
    ConsumeStats,
    GroupList,
    KVTable,
    MessageQueue,
    OffsetWrapper,
    ProducerConnection,
    SubscriptionGroupConfig,
    TopicConfig,
    TopicFilterType,
    TopicList,
    TopicOffset,
    TopicStatsTable,
    decode_properties,
)
from wire.headers import (
    CreateTopicRequestHeader,
    DeleteSubscriptionGroupRequestHeader,
    DeleteTopicRequestHeader,
    GetConsumerConnectionListRequestHeader,
    GetConsumeStatsRequestHeader,
    GetProducerConnectionListRequestHeader,
    GetTopicStatsInfoRequestHeader,
    QueryTopicConsumeByWhoRequestHeader,
)

from ...bodies import BodyDecoders, request_body
from ...config import ConfigError, check_value
from .. import constants as C
from .common import NOT_SET_REMARK, BrokerHandler, queue_of, validate_topic

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS", "broker_config_text", "runtime_info"]

log = logging.getLogger("reference_broker.broker")

#: ``MQVersion.getVersionDesc(CURRENT_VERSION)`` and the ordinal of a 4.9.8 broker
BROKER_VERSION_DESC = "V4_9_8"
BROKER_VERSION = 409

_SLAVE_REMARK = (
    "Can't modify topic or subscription group from slave broker, please execute it from master broker."
)


def _slave_refusal(broker: Broker, req: RemotingCommand) -> RemotingCommand | None:
    """``validateSlave``."""
    if broker.is_slave:
        return req.response(ResponseCode.SYSTEM_ERROR, _SLAVE_REMARK)
    return None


# ---------------------------------------------------------------------------- topics


def _topic_change_refused(broker: Broker, req: RemotingCommand, topic: str) -> RemotingCommand | None:
    """The answer refusing to create or delete ``topic`` (a bad name, a system topic), or None."""
    bad = validate_topic(topic)
    if bad is not None:
        return req.response(ResponseCode.SYSTEM_ERROR, bad)
    if broker.topics.is_system_topic(topic):
        return req.response(ResponseCode.SYSTEM_ERROR, f"The topic[{topic}] is conflict with system topic.")
    return None


def update_and_create_topic(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    refused = _slave_refusal(broker, req)
    if refused is not None:
        return refused
    h = CreateTopicRequestHeader.from_ext(req.ext_fields)
    topic = h.topic
    refused = _topic_change_refused(broker, req, topic)
    if refused is not None:
        return refused
    kind = TopicFilterType.__members__.get(h.topic_filter_type)
    if kind is None:  # TopicFilterType.valueOf throws
        return req.response(
            ResponseCode.SYSTEM_ERROR,
            f"No enum constant org.apache.rocketmq.common.TopicFilterType.{h.topic_filter_type}",
        )
    tc = TopicConfig(
        topic_name=topic,
        read_queue_nums=h.read_queue_nums,
        write_queue_nums=h.write_queue_nums,
        perm=h.perm,
        topic_filter_type=kind,
        topic_sys_flag=h.topic_sys_flag or 0,
    )
    broker.topics.update(tc)
    return _register_then_answer(broker, req, tc)


async def _register_then_answer(broker: Broker, req: RemotingCommand, tc: TopicConfig) -> RemotingCommand:
    wrapper = broker.topics.wrapper()
    one = wrapper.__class__(topic_config_table={tc.topic_name or "": tc}, data_version=wrapper.data_version)
    await broker.register_all(check_order=True, topics=one)
    # mirrors updateAndCreateTopic: the response made by createResponseCommand(null) keeps its
    # "not set any response code" remark when the code is set to SUCCESS
    return req.response(ResponseCode.SUCCESS, NOT_SET_REMARK)


def delete_topic(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    refused = _slave_refusal(broker, req)
    if refused is not None:
        return refused
    topic = DeleteTopicRequestHeader.from_ext(req.ext_fields).topic
    refused = _topic_change_refused(broker, req, topic)
    if refused is not None:
        return refused
    broker.topics.delete(topic)
    _clean_unused_topics(broker)
    return req.response(ResponseCode.SUCCESS)


def _clean_unused_topics(broker: Broker) -> None:
    """``cleanUnusedTopic``: every queue of a topic no longer configured goes (the schedule
    topic's stay); pulls parked on them are answered."""
    store = broker.store
    for name in store.topics():
        if name not in broker.topics.table and name != C.RMQ_SYS_SCHEDULE_TOPIC:
            queue_ids = store.queue_ids(name)
            store.delete_topic(name)
            for qid in queue_ids:
                broker.holds.wake(name, qid)


def get_all_topic_config(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    return req.response(ResponseCode.SUCCESS, None, None, broker.topics.encode().encode("utf-8"))


# ---------------------------------------------------------------------------- configuration


def broker_config_text(broker: Broker) -> str:
    """``Configuration.getAllConfigsFormatString``: ``key=value`` lines, unescaped
    (``MixAll.properties2String``), with the port actually bound."""
    values = dict(broker.config.values)
    values["listenPort"] = str(broker.port)
    return "".join(f"{k}={v}\n" for k, v in values.items())


def get_broker_config(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    return req.response(
        ResponseCode.SUCCESS,
        None,
        {"version": broker.config_version.to_json()},
        broker_config_text(broker).encode("utf-8"),
    )


def _config_changes(req: RemotingCommand) -> dict[str, str]:
    return decode_properties(req.body or b"")


def _group_config(req: RemotingCommand) -> SubscriptionGroupConfig:
    return SubscriptionGroupConfig.decode(req.body or b"")


def update_broker_config(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    if req.body is None:
        return req.response(ResponseCode.SUCCESS)
    props = request_body(conn, req, _config_changes)
    black = {k.strip() for k in broker.config.get("configBlackList").split(";") if k.strip()}
    if any(k in black for k in props):
        return req.response(ResponseCode.NO_PERMISSION, "Can not update config in black list.")
    # Java's properties2Object skips a value that does not parse, and the answer says SUCCESS
    # while the old value stays; here such an update is refused whole, and the answer says why
    # (docs/servers.md, differences)
    bad = []
    for key, value in props.items():
        try:
            check_value(broker.config.DEFAULTS, key, value, "UPDATE_BROKER_CONFIG")
        except ConfigError as exc:
            bad.append(str(exc).removeprefix("UPDATE_BROKER_CONFIG: "))
    if bad:
        return req.response(ResponseCode.SYSTEM_ERROR, "; ".join(bad) + "; nothing was changed")
    log.info("updateBrokerConfig, new config: [%s] client: %s", props, conn.peer)
    for key, value in props.items():
        broker.config.update({key: value}, source="UPDATE_BROKER_CONFIG")
    broker.config_version.next_version()
    try:
        broker.config.persist()  # Configuration.update persists the whole configuration
    except OSError as exc:
        log.error("updateBrokerConfig: cannot write %s: %s", broker.config.store_path, exc)
    broker.refresh_settings()
    if "brokerPermission" in props:
        broker.topics.data_version.next_version()
        return _register_then_ok(broker, req)
    return req.response(ResponseCode.SUCCESS)


async def _register_then_ok(broker: Broker, req: RemotingCommand) -> RemotingCommand:
    await broker.register_all(check_order=False)
    return req.response(ResponseCode.SUCCESS)


def runtime_info(broker: Broker) -> dict[str, str]:
    """``prepareRuntimeInfo``: the store's keys plus the broker's."""
    info = broker.store.runtime_info()
    cfg = broker.config
    info["brokerVersionDesc"] = BROKER_VERSION_DESC
    info["brokerVersion"] = str(BROKER_VERSION)
    if broker.controller_mode:
        # 5.x (isSpecialServiceRunning): the controller's master runs the master-only services;
        # mqadmin clusterList shows it as ACTIVATED
        info["brokerActive"] = "true" if broker.config.is_master else "false"
    # requests never queue before a handler here, so the thread-pool queues are always empty
    for pool, capacity_key in (
        ("send", "sendThreadPoolQueueCapacity"),
        ("pull", "pullThreadPoolQueueCapacity"),
        ("query", "queryThreadPoolQueueCapacity"),
    ):
        info[f"{pool}ThreadPoolQueueSize"] = "0"
        info[f"{pool}ThreadPoolQueueCapacity"] = cfg.get(capacity_key)
        info[f"{pool}ThreadPoolQueueHeadWaitTimeMills"] = "0"
    if broker.controller_mode:
        _five_runtime_keys(info, cfg.get("litePullThreadPoolQueueCapacity") or "100000")
    info["EndTransactionQueueSize"] = "0"
    info["EndTransactionThreadPoolQueueCapacity"] = cfg.get("endTransactionPoolQueueCapacity")
    info["startAcceptSendRequestTimeStamp"] = cfg.get("startAcceptSendRequestTimeStamp")
    return info


def _five_runtime_keys(info: dict[str, str], lite_pull_capacity: str) -> None:
    """The runtime info of a 5.0.0 broker, which ours is in controller mode (a 5.x feature): its
    spelling of the transferred-TPS key, the lite-pull pool's queue, and the timer wheel's figures
    (our broker has no timer wheel: they stay at rest, as a 5.0.0 broker's do with no timer message)."""
    info["getTransferredTps"] = info.pop("getTransferedTps", "0.0 0.0 0.0")
    info["litePullThreadPoolQueueSize"] = "0"
    info["litePullThreadPoolQueueCapacity"] = lite_pull_capacity
    info["litePullThreadPoolQueueHeadWaitTimeMills"] = "0"
    info.update({"timerReadBehind": "0", "timerOffsetBehind": "0", "timerCongestNum": "0",
                 "timerEnqueueTps": "0.0", "timerDequeueTps": "0.0"})


def get_broker_runtime_info(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    return req.response(ResponseCode.SUCCESS, None, None, KVTable(table=runtime_info(broker)).encode())


# ---------------------------------------------------------------------------- subscription groups


def update_and_create_subscription_group(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    refused = _slave_refusal(broker, req)
    if refused is not None:
        return refused
    if req.body:
        broker.groups.update(request_body(conn, req, _group_config))
    return req.response(ResponseCode.SUCCESS)


def get_all_subscription_group(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    return req.response(ResponseCode.SUCCESS, None, None, broker.groups.encode().encode("utf-8"))


def delete_subscription_group(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    refused = _slave_refusal(broker, req)
    if refused is not None:
        return refused
    h = DeleteSubscriptionGroupRequestHeader.from_ext(req.ext_fields)
    broker.groups.delete(h.group_name)
    if h.remove_offset or h.clean_offset:
        broker.offsets.remove_group(h.group_name)
    return req.response(ResponseCode.SUCCESS)


# ---------------------------------------------------------------------------- offsets and stats


def get_all_consumer_offset(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    return req.response(ResponseCode.SUCCESS, None, None, broker.offsets.encode().encode("utf-8"))


def get_all_delay_offset(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    return req.response(ResponseCode.SUCCESS, None, None, broker.schedule.encode().encode("utf-8"))


def get_topic_stats_info(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = GetTopicStatsInfoRequestHeader.from_ext(req.ext_fields)
    tc = broker.topics.select(h.topic)
    if tc is None:
        return req.response(ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist")
    store = broker.store
    table: dict[MessageQueue, TopicOffset] = {}
    for i in range(tc.write_queue_nums):
        lo = max(0, store.min_offset(h.topic, i))
        hi = max(0, store.max_offset(h.topic, i))
        ts = store.message_store_time(h.topic, i, hi - 1) if hi > 0 else 0
        table[queue_of(broker, h.topic, i)] = TopicOffset(min_offset=lo, max_offset=hi,
                                                          last_update_timestamp=ts)
    return req.response(ResponseCode.SUCCESS, None, None, TopicStatsTable(offset_table=table).encode())


def get_consume_stats(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    h = GetConsumeStatsRequestHeader.from_ext(req.ext_fields)
    group = h.consumer_group
    topics = [h.topic] if h.topic and h.topic.strip() else sorted(broker.offsets.topics_of_group(group))
    store = broker.store
    table: dict[MessageQueue, OffsetWrapper] = {}
    tps = 0.0
    for topic in topics:
        tc = broker.topics.select(topic)
        if tc is None:
            log.warning("consumeStats, topic config not exist, %s", topic)
            continue
        if (
            broker.consumers.find_subscription(group, topic) is None
            and broker.consumers.subscription_count(group) > 0
        ):
            log.warning("consumeStats, the consumer group[%s], topic[%s] not exist", group, topic)
            continue
        for i in range(tc.read_queue_nums):
            broker_offset = max(0, store.max_offset(topic, i))
            consumer_offset = max(0, broker.offsets.query(group, topic, i))
            last = 0
            if consumer_offset - 1 >= 0:
                ts = store.message_store_time(topic, i, consumer_offset - 1)
                if ts > 0:
                    last = ts
            table[queue_of(broker, topic, i)] = OffsetWrapper(
                broker_offset=broker_offset, consumer_offset=consumer_offset, last_timestamp=last
            )
        tps += broker.group_stats.tps(group, topic)
    body = ConsumeStats(offset_table=table, consume_tps=tps).encode()
    return req.response(ResponseCode.SUCCESS, None, None, body)


# ---------------------------------------------------------------------------- connections


def get_consumer_connection_list(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    h = GetConsumerConnectionListRequestHeader.from_ext(req.ext_fields)
    info = broker.consumers.get(h.consumer_group)
    if info is None:
        return req.response(
            ResponseCode.CONSUMER_NOT_ONLINE, f"the consumer group[{h.consumer_group}] not online"
        )
    body = ConsumerConnection(
        connection_set=tuple(
            Connection(client_id=c.client_id, client_addr=c.addr, language=c.language, version=c.version)
            for c in info.channels.values()
        ),
        subscription_table=dict(info.subscriptions),
        consume_type=info.consume_type,
        message_model=info.message_model,
        consume_from_where=info.consume_from_where,
    ).encode()
    return req.response(ResponseCode.SUCCESS, None, None, body)


def get_producer_connection_list(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    h = GetProducerConnectionListRequestHeader.from_ext(req.ext_fields)
    table = broker.producers.groups.get(h.producer_group)
    if table is None:
        return req.response(ResponseCode.SYSTEM_ERROR, f"the producer group[{h.producer_group}] not exist")
    body = ProducerConnection(
        connection_set=tuple(
            Connection(client_id=c.client_id, client_addr=c.addr, language=c.language, version=c.version)
            for c in table.values()
        )
    ).encode()
    return req.response(ResponseCode.SUCCESS, None, None, body)


def query_topic_consume_by_who(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    h = QueryTopicConsumeByWhoRequestHeader.from_ext(req.ext_fields)
    groups = broker.consumers.topic_consumed_by(h.topic) | broker.offsets.groups_of_topic(h.topic)
    return req.response(
        ResponseCode.SUCCESS, None, None, GroupList(group_list=tuple(sorted(groups))).encode()
    )


def get_system_topic_list_from_broker(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    """``getSystemTopicListFromBroker``: the system topics this broker knows."""
    names = tuple(sorted(broker.topics.system_topics))
    return req.response(ResponseCode.SUCCESS, None, None, TopicList(topic_list=names).encode())


def clean_expired_consume_queue(
    broker: Broker, conn: RemotingConnection, req: RemotingCommand
) -> HandlerResult:
    """CLEAN_EXPIRED_CONSUMEQUEUE (306): drop the consume queues of topics no longer configured."""
    _clean_unused_topics(broker)
    return req.response(ResponseCode.SUCCESS)


def delete_expired_commitlog(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """DELETE_EXPIRED_COMMITLOG (329): delete the expired CommitLog files now, whatever the hour
    (``executeDeleteFilesManually``)."""
    deleted = broker.store.delete_expired_files(force=True)
    log.info("deleteExpiredCommitLog: %d file(s) deleted", deleted)
    return req.response(ResponseCode.SUCCESS)


# ---------------------------------------------------------------------------- offsets of groups


def clone_group_offset(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """CLONE_GROUP_OFFSET (314): the source group's committed offsets of the topic (every topic it
    consumes, without one) copied to the destination group, ``ConsumerOffsetManager.cloneOffset``."""
    src, dest = req.ext_fields.get("srcGroup") or "", req.ext_fields.get("destGroup") or ""
    if not src or not dest:
        return req.response(ResponseCode.SYSTEM_ERROR, "srcGroup and destGroup are required")
    offline = req.ext_fields.get("offline", "false").strip().lower() == "true"
    wanted = (req.ext_fields.get("topic") or "").strip()
    topics = {wanted} if wanted else broker.offsets.topics_of_group(src)
    for topic in sorted(topics):
        if broker.topics.select(topic) is None:
            log.warning("[cloneGroupOffset], topic config not exist, %s", topic)
            continue
        if (not offline and broker.consumers.subscription_count(src) > 0
                and broker.consumers.find_subscription(src, topic) is None):
            log.warning("[cloneGroupOffset], the consumer group[%s], topic[%s] not exist", src, topic)
            continue
        offsets = broker.offsets.table.get(f"{topic}@{src}")
        if offsets is not None:
            broker.offsets.table[f"{topic}@{dest}"] = dict(offsets)
    return req.response(ResponseCode.SUCCESS)


def view_broker_stats_data(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """VIEW_BROKER_STATS_DATA (315): one stats item's minute, hour and day (``BrokerStatsData``)."""
    name, key = req.ext_fields.get("statsName") or "", req.ext_fields.get("statsKey") or ""
    view = broker.stats.view(name, key)
    if view is None:
        return req.response(ResponseCode.SYSTEM_ERROR, f"The stats <{name}> <{key}> not exist")
    items = {w: BrokerStatsItem(sum=int(v["sum"]), tps=v["tps"], avgpt=v["avgpt"]) for w, v in view.items()}
    body = BrokerStatsData(stats_minute=items.get("minute"), stats_hour=items.get("hour"),
                           stats_day=items.get("day"))
    return req.response(ResponseCode.SUCCESS, None, None, body.encode())


def clean_unused_topic(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """CLEAN_UNUSED_TOPIC (316): the queues of topics no longer configured go."""
    _clean_unused_topics(broker)
    return req.response(ResponseCode.SUCCESS)


def get_broker_consume_stats(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    """GET_BROKER_CONSUME_STATS (317), ``fetchAllConsumeStatsInBroker``: for every subscription
    group, a ConsumeStats per topic it has offsets of (``isOrder``: ordered topics only)."""
    is_order = req.ext_fields.get("isOrder", "false").strip().lower() == "true"
    store = broker.store
    groups_out = []
    total_diff = 0
    for group in sorted(broker.groups.table):
        stats = []
        for topic in sorted(broker.offsets.topics_of_group(group)):
            tc = broker.topics.select(topic)
            if tc is None or (is_order and not tc.order):
                continue
            if (broker.consumers.find_subscription(group, topic) is None
                    and broker.consumers.subscription_count(group) > 0):
                continue
            table: dict[MessageQueue, OffsetWrapper] = {}
            for i in range(tc.write_queue_nums):
                broker_offset = max(0, store.max_offset(topic, i))
                consumer_offset = max(0, broker.offsets.query(group, topic, i))
                last = store.message_store_time(topic, i, consumer_offset - 1) if consumer_offset > 0 else 0
                table[queue_of(broker, topic, i)] = OffsetWrapper(
                    broker_offset=broker_offset, consumer_offset=consumer_offset, last_timestamp=max(0, last))
                total_diff += broker_offset - consumer_offset
            stats.append(ConsumeStats(offset_table=table, consume_tps=broker.group_stats.tps(group, topic)))
        groups_out.append((group, stats))
    parts = ",".join("{" + json.dumps(g) + ":[" + ",".join(s.encode().decode("utf-8") for s in stats) + "]}"
                     for g, stats in groups_out)
    addr = json.dumps(broker.address)
    body = f'{{"brokerAddr":{addr},"consumeStatsList":[{parts}],"totalDiff":{total_diff}}}'
    return req.response(ResponseCode.SUCCESS, None, None, body.encode("utf-8"))


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.UPDATE_AND_CREATE_TOPIC: update_and_create_topic,
    RequestCode.GET_ALL_TOPIC_CONFIG: get_all_topic_config,
    RequestCode.UPDATE_BROKER_CONFIG: update_broker_config,
    RequestCode.GET_BROKER_CONFIG: get_broker_config,
    RequestCode.GET_BROKER_RUNTIME_INFO: get_broker_runtime_info,
    RequestCode.GET_ALL_CONSUMER_OFFSET: get_all_consumer_offset,
    RequestCode.GET_ALL_DELAY_OFFSET: get_all_delay_offset,
    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: update_and_create_subscription_group,
    RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: get_all_subscription_group,
    RequestCode.GET_TOPIC_STATS_INFO: get_topic_stats_info,
    RequestCode.GET_CONSUMER_CONNECTION_LIST: get_consumer_connection_list,
    RequestCode.GET_PRODUCER_CONNECTION_LIST: get_producer_connection_list,
    RequestCode.DELETE_SUBSCRIPTIONGROUP: delete_subscription_group,
    RequestCode.GET_CONSUME_STATS: get_consume_stats,
    RequestCode.DELETE_TOPIC_IN_BROKER: delete_topic,
    RequestCode.QUERY_TOPIC_CONSUME_BY_WHO: query_topic_consume_by_who,
    RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER: get_system_topic_list_from_broker,
    RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE: clean_expired_consume_queue,
    RequestCode.DELETE_EXPIRED_COMMITLOG: delete_expired_commitlog,
    RequestCode.CLONE_GROUP_OFFSET: clone_group_offset,
    RequestCode.VIEW_BROKER_STATS_DATA: view_broker_stats_data,
    RequestCode.CLEAN_UNUSED_TOPIC: clean_unused_topic,
    RequestCode.GET_BROKER_CONSUME_STATS: get_broker_consume_stats,
}

#: request code -> the decoding of its body (run off the event loop for a large body)
BODIES: BodyDecoders = {
    RequestCode.UPDATE_BROKER_CONFIG: _config_changes,
    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: _group_config,
}
