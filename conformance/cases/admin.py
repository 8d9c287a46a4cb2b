# Licensed under the Apache License, Version 2.0. See LICENSE.
"""ADM: the requests mqadmin (and the console, and a slave's synchronisation) send, and the
shapes of the bodies they read: runtime info and configuration, topics, subscription groups,
consumer and producer connections, consume stats, write permissions, the name server's
configuration, and 5.x HA status."""

from __future__ import annotations

import json
from typing import TypeVar

from wire import RemotingCommand, RequestCode, ResponseCode, WireError
from wire.bodies import (
    ConsumerConnection,
    ConsumerOffsetSerializeWrapper,
    ConsumeStats,
    GroupList,
    HARuntimeInfo,
    JsonBody,
    KVTable,
    ProducerConnection,
    SubscriptionGroupWrapper,
    TopicConfigSerializeWrapper,
    TopicList,
    TopicStatsTable,
    decode_properties,
)

from ..context import Ctx
from ..model import Level
from ..registry import case
from ._kit import create_group, create_topic, fake_broker, heartbeat_body, route_data, send_ok, topic_config

R = RequestCode
RC = ResponseCode
B = TypeVar("B", bound=JsonBody)
ABP = "AdminBrokerProcessor"
BROKER = ("broker",)
WITH_NS = ("namesrv", "broker")

#: the runtime-info keys ``mqadmin clusterList`` and ``brokerStatus`` read (ClusterListSubCommand);
#: 5.0.0 renamed getTransferedTps and added brokerActive and the timer figures
CLUSTER_LIST_KEYS_5 = ("brokerActive", "getTransferredTps", "timerReadBehind", "timerOffsetBehind",
                       "timerCongestNum", "timerEnqueueTps", "timerDequeueTps")
CLUSTER_LIST_KEYS = ("brokerVersionDesc", "commitLogDiskRatio", "earliestMessageTimeStamp",
                     "getTransferedTps",
                     "msgGetTotalTodayMorning", "msgGetTotalTodayNow", "msgGetTotalYesterdayMorning",
                     "msgPutTotalTodayMorning", "msgPutTotalTodayNow", "msgPutTotalYesterdayMorning",
                     "pageCacheLockTimeMills", "putTps", "commitLogMaxOffset", "commitLogMinOffset",
                     "bootTimestamp")


def _decode(ctx: Ctx, cls: type[B], resp: RemotingCommand, what: str) -> B:
    try:
        return cls.decode(resp.body or b"")
    except (WireError, ValueError) as err:
        ctx.fail(f"{what}: the body is not a {cls.__name__}: {err}")
        raise


# ---------------------------------------------------------------------------- the broker itself


@case(
    "ADM-RT-001", Level.MUST,
    "GET_BROKER_RUNTIME_INFO answers a KVTable with the keys mqadmin clusterList and brokerStatus read",
    source="AdminBrokerProcessor.getBrokerRuntimeInfo (prepareRuntimeInfo); ClusterListSubCommand",
    needs=BROKER,
    codes=(R.GET_BROKER_RUNTIME_INFO,),
)
async def runtime_info(ctx: Ctx) -> None:
    resp = await ctx.call("broker", R.GET_BROKER_RUNTIME_INFO, what="GET_BROKER_RUNTIME_INFO")
    table = _decode(ctx, KVTable, resp, "GET_BROKER_RUNTIME_INFO").table
    keys = [k for k in CLUSTER_LIST_KEYS if ctx.profile == "4.9" or k != "getTransferedTps"]
    if ctx.profile == "5.0":
        keys += CLUSTER_LIST_KEYS_5
    missing = [k for k in keys if k not in table]
    ctx.check(not missing, f"keys missing from the runtime info: {', '.join(missing)}")
    ctx.check(str(table["commitLogMaxOffset"]).lstrip("-").isdigit(),
              f"commitLogMaxOffset {table['commitLogMaxOffset']!r} is not a number")
    ctx.note(f"brokerVersionDesc {table['brokerVersionDesc']}")


@case(
    "ADM-CFG-001", Level.MUST,
    "GET_BROKER_CONFIG answers the broker's configuration as properties text and its data version in the "
    "version ext field",
    source="AdminBrokerProcessor.getBrokerConfig (getAllConfigsFormatString, dataVersion)",
    needs=BROKER,
    codes=(R.GET_BROKER_CONFIG,),
)
async def broker_config(ctx: Ctx) -> None:
    resp = await ctx.call("broker", R.GET_BROKER_CONFIG, what="GET_BROKER_CONFIG")
    props = decode_properties(resp.body or b"")
    for key in ("brokerName", "brokerClusterName", "brokerId", "brokerRole", "listenPort",
                "storePathRootDir"):
        ctx.check(key in props, f"the configuration has no {key}")
    if ctx.target.broker_name:
        ctx.equal(props["brokerName"], ctx.target.broker_name, "brokerName")
    version = resp.ext_fields.get("version")
    ctx.check(version, "the answer has no version ext field (the configuration's DataVersion)")
    try:
        doc = json.loads(version or "")
    except ValueError:
        ctx.fail(f"the version ext field {version!r} is not a DataVersion JSON")
        raise
    ctx.check(isinstance(doc, dict) and "counter" in doc and "timestamp" in doc,
              f"the version ext field {version!r} lacks counter/timestamp")


# ---------------------------------------------------------------------------- topics


@case(
    "ADM-TOPIC-001", Level.MUST,
    "UPDATE_AND_CREATE_TOPIC creates a topic that GET_ALL_TOPIC_CONFIG lists with its queue numbers and "
    "perm, and that the name server routes",
    source="AdminBrokerProcessor.updateAndCreateTopic (registerIncrementBrokerData); getAllTopicConfig",
    needs=WITH_NS,
    codes=(R.UPDATE_AND_CREATE_TOPIC,),
)
async def topic_create(ctx: Ctx) -> None:
    topic = await create_topic(ctx, read=3, write=5, perm=6)
    resp = await ctx.call("broker", R.GET_ALL_TOPIC_CONFIG, what="GET_ALL_TOPIC_CONFIG")
    wrapper = _decode(ctx, TopicConfigSerializeWrapper, resp, "GET_ALL_TOPIC_CONFIG")
    cfg = wrapper.topic_config_table.get(topic)
    ctx.check(cfg is not None, f"GET_ALL_TOPIC_CONFIG does not list {topic}")
    assert cfg is not None
    ctx.equal((cfg.read_queue_nums, cfg.write_queue_nums, cfg.perm), (3, 5, 6), "read/write queues and perm")
    data = await route_data(ctx, topic)
    assert data is not None
    ctx.equal([(q.read_queue_nums, q.write_queue_nums, q.perm) for q in data.queue_datas
               if q.broker_name == ctx.target.broker_name], [(3, 5, 6)], "the route's queue data")


@case(
    "ADM-TOPIC-002", Level.MUST,
    "GET_TOPIC_STATS_INFO answers each queue's min and max offset and last update time",
    source="AdminBrokerProcessor.getTopicStatsInfo; TopicStatsTable",
    needs=BROKER,
    codes=(R.GET_TOPIC_STATS_INFO,),
)
async def topic_stats(ctx: Ctx) -> None:
    topic = await create_topic(ctx, read=2, write=2, routed=False)
    for _ in range(3):
        await send_ok(ctx, topic, b"stats", queue_id=1)

    async def counted() -> TopicStatsTable | None:
        resp = await ctx.call("broker", R.GET_TOPIC_STATS_INFO, {"topic": topic}, what="GET_TOPIC_STATS_INFO")
        table = _decode(ctx, TopicStatsTable, resp, "GET_TOPIC_STATS_INFO")
        offsets = {mq.queue_id: o for mq, o in table.offset_table.items()}
        return table if 1 in offsets and offsets[1].max_offset == 3 else None

    table = await ctx.poll(counted, timeout=5,
                           what="GET_TOPIC_STATS_INFO never showed the 3 messages of queue 1")
    offsets = {mq.queue_id: (o.min_offset, o.max_offset) for mq, o in table.offset_table.items()}
    ctx.equal(offsets, {0: (0, 0), 1: (0, 3)}, "min and max offsets by queue")
    last = next(o.last_update_timestamp for mq, o in table.offset_table.items() if mq.queue_id == 1)
    ctx.check(last > 0, "queue 1's lastUpdateTimestamp is 0 after three messages")


@case(
    "ADM-TOPIC-003", Level.MUST,
    "GET_TOPIC_STATS_INFO of a topic the broker does not have is answered TOPIC_NOT_EXIST",
    source='AdminBrokerProcessor.getTopicStatsInfo ("topic[...] not exist")',
    needs=BROKER,
    codes=(R.GET_TOPIC_STATS_INFO,),
)
async def topic_stats_unknown(ctx: Ctx) -> None:
    resp = await ctx.request("broker", R.GET_TOPIC_STATS_INFO, {"topic": ctx.unique("nosuch")})
    ctx.code(resp, RC.TOPIC_NOT_EXIST, "GET_TOPIC_STATS_INFO of an unknown topic")


@case(
    "ADM-TOPIC-004", Level.MUST,
    "DELETE_TOPIC_IN_BROKER and DELETE_TOPIC_IN_NAMESRV remove a topic: the broker no longer lists it and "
    "the name server no longer routes it",
    source="AdminBrokerProcessor.deleteTopic; DefaultRequestProcessor.deleteTopicInNamesrv; mqadmin "
           "deleteTopic",
    needs=WITH_NS,
    codes=(R.DELETE_TOPIC_IN_BROKER, R.DELETE_TOPIC_IN_NAMESRV),
)
async def topic_delete(ctx: Ctx) -> None:
    topic = await create_topic(ctx)
    await ctx.call("broker", R.DELETE_TOPIC_IN_BROKER, {"topic": topic}, what="DELETE_TOPIC_IN_BROKER")
    await ctx.call("namesrv", R.DELETE_TOPIC_IN_NAMESRV, {"topic": topic}, what="DELETE_TOPIC_IN_NAMESRV")
    resp = await ctx.call("broker", R.GET_ALL_TOPIC_CONFIG, what="GET_ALL_TOPIC_CONFIG")
    wrapper = _decode(ctx, TopicConfigSerializeWrapper, resp, "GET_ALL_TOPIC_CONFIG")
    ctx.check(topic not in wrapper.topic_config_table, f"the broker still lists {topic}")
    ctx.check(await route_data(ctx, topic) is None, f"the name server still routes {topic}")


@case(
    "ADM-TOPIC-005", Level.MUST,
    "GET_ALL_TOPIC_LIST_FROM_NAMESERVER lists every routed topic",
    source="DefaultRequestProcessor.getAllTopicListFromNameserver; TopicList",
    codes=(R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER,),
)
async def topic_list(ctx: Ctx) -> None:
    topic = ctx.unique("topic")
    await fake_broker(ctx, topics={topic: topic_config(topic)})
    resp = await ctx.call("namesrv", R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
                          what="GET_ALL_TOPIC_LIST_FROM_NAMESERVER")
    ctx.check(topic in _decode(ctx, TopicList, resp, "the topic list").topic_list,
              f"the topic list does not hold {topic}")


@case(
    "ADM-TOPIC-006", Level.MUST,
    "GET_TOPICS_BY_CLUSTER lists the topics of a cluster's brokers",
    source="DefaultRequestProcessor.getTopicsByCluster; RouteInfoManager.getTopicsByCluster",
    codes=(R.GET_TOPICS_BY_CLUSTER,),
)
async def topics_by_cluster(ctx: Ctx) -> None:
    topic = ctx.unique("topic")
    fb = await fake_broker(ctx, topics={topic: topic_config(topic)})
    resp = await ctx.call("namesrv", R.GET_TOPICS_BY_CLUSTER, {"cluster": fb.cluster},
                          what="GET_TOPICS_BY_CLUSTER")
    ctx.equal(sorted(_decode(ctx, TopicList, resp, "the topic list").topic_list), sorted(fb.all_topics()),
              f"topics of cluster {fb.cluster}")


@case(
    "ADM-TOPIC-007", Level.SHOULD,
    "GET_SYSTEM_TOPIC_LIST_FROM_NS lists the cluster names and broker names (the topics brokers make of "
    "them)",
    source="RouteInfoManager.getSystemTopicList",
    codes=(R.GET_SYSTEM_TOPIC_LIST_FROM_NS,),
)
async def system_topics(ctx: Ctx) -> None:
    fb = await fake_broker(ctx)
    resp = await ctx.call("namesrv", R.GET_SYSTEM_TOPIC_LIST_FROM_NS, what="GET_SYSTEM_TOPIC_LIST_FROM_NS")
    listed = set(_decode(ctx, TopicList, resp, "the topic list").topic_list)
    ctx.check({fb.cluster, fb.name} <= listed, f"the system topic list lacks {fb.cluster} or {fb.name}")


@case(
    "ADM-TOPIC-008", Level.SHOULD,
    "QUERY_TOPIC_CONSUME_BY_WHO lists a group that committed an offset on the topic",
    source="AdminBrokerProcessor.queryTopicConsumeByWho (ConsumerOffsetManager.whichGroupByTopic)",
    needs=BROKER,
    codes=(R.QUERY_TOPIC_CONSUME_BY_WHO,),
)
async def consume_by_who(ctx: Ctx) -> None:
    topic = await create_topic(ctx, routed=False)
    group = await create_group(ctx)
    await send_ok(ctx, topic, b"who")
    await ctx.call("broker", R.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic, "queueId": 0,
                                                        "commitOffset": 1}, what="UPDATE_CONSUMER_OFFSET")
    resp = await ctx.call("broker", R.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": topic},
                          what="QUERY_TOPIC_CONSUME_BY_WHO")
    ctx.check(group in _decode(ctx, GroupList, resp, "the group list").group_list,
              f"{group} is not listed as consuming {topic}")


# ---------------------------------------------------------------------------- groups


async def _groups(ctx: Ctx) -> SubscriptionGroupWrapper:
    resp = await ctx.call("broker", R.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
                          what="GET_ALL_SUBSCRIPTIONGROUP_CONFIG")
    return _decode(ctx, SubscriptionGroupWrapper, resp, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG")


@case(
    "ADM-GROUP-001", Level.MUST,
    "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP creates a group that GET_ALL_SUBSCRIPTIONGROUP_CONFIG lists with "
    "its settings",
    source="AdminBrokerProcessor.updateAndCreateSubscriptionGroup; getAllSubscriptionGroup",
    needs=BROKER,
    codes=(R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,),
)
async def group_create(ctx: Ctx) -> None:
    group = await create_group(ctx, retry_max=7)
    cfg = (await _groups(ctx)).subscription_group_table.get(group)
    ctx.check(cfg is not None, f"GET_ALL_SUBSCRIPTIONGROUP_CONFIG does not list {group}")
    assert cfg is not None
    ctx.equal(cfg.retry_max_times, 7, "retryMaxTimes")


@case(
    "ADM-GROUP-002", Level.MUST,
    "DELETE_SUBSCRIPTIONGROUP removes a group",
    source="AdminBrokerProcessor.deleteSubscriptionGroup",
    needs=BROKER,
    codes=(R.DELETE_SUBSCRIPTIONGROUP,),
)
async def group_delete(ctx: Ctx) -> None:
    group = await create_group(ctx)
    await ctx.call("broker", R.DELETE_SUBSCRIPTIONGROUP, {"groupName": group},
                   what="DELETE_SUBSCRIPTIONGROUP")
    ctx.check(group not in (await _groups(ctx)).subscription_group_table, f"{group} is still listed")


@case(
    "ADM-STATS-001", Level.MUST,
    "GET_CONSUME_STATS answers each queue's broker offset and the group's consumer offset",
    source="AdminBrokerProcessor.getConsumeStats; ConsumeStats (mqadmin consumerProgress)",
    needs=BROKER,
    codes=(R.GET_CONSUME_STATS,),
)
async def consume_stats(ctx: Ctx) -> None:
    topic = await create_topic(ctx, read=2, write=2, routed=False)
    group = await create_group(ctx)
    for _ in range(3):
        await send_ok(ctx, topic, b"progress", queue_id=0)
    await ctx.call("broker", R.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic, "queueId": 0,
                                                        "commitOffset": 2}, what="UPDATE_CONSUMER_OFFSET")

    async def stats() -> dict[int, tuple[int, int]] | None:
        resp = await ctx.call("broker", R.GET_CONSUME_STATS, {"consumerGroup": group, "topic": topic},
                              what="GET_CONSUME_STATS")
        cs = _decode(ctx, ConsumeStats, resp, "GET_CONSUME_STATS")
        got = {mq.queue_id: (o.broker_offset, o.consumer_offset)
               for mq, o in cs.offset_table.items()}
        return got if got.get(0, (0, 0))[0] == 3 else None

    got = await ctx.poll(stats, timeout=5, what="GET_CONSUME_STATS never showed the 3 messages")
    ctx.equal(got, {0: (3, 2), 1: (0, 0)}, "broker and consumer offsets by queue")


# ---------------------------------------------------------------------------- connections


@case(
    "ADM-CONN-001", Level.MUST,
    "GET_CONSUMER_CONNECTION_LIST of an online group answers its connections, subscriptions and consume type",
    source="AdminBrokerProcessor.getConsumerConnectionList; ConsumerConnection (mqadmin consumerConnection)",
    needs=BROKER,
    codes=(R.GET_CONSUMER_CONNECTION_LIST,),
)
async def consumer_connection(ctx: Ctx) -> None:
    topic = await create_topic(ctx, routed=False)
    group = await create_group(ctx)
    client = ctx.unique("client")
    conn = await ctx.connect("broker")
    await ctx.call("broker", R.HEART_BEAT, None, heartbeat_body(client, consumer_group=group, topic=topic),
                   conn=conn, what="HEART_BEAT")
    resp = await ctx.call("broker", R.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": group},
                          what="GET_CONSUMER_CONNECTION_LIST")
    cc = _decode(ctx, ConsumerConnection, resp, "GET_CONSUMER_CONNECTION_LIST")
    ctx.equal([c.client_id for c in cc.connection_set], [client], "connectionSet clientIds")
    ctx.equal(list(cc.subscription_table), [topic], "subscriptionTable topics")
    ctx.check(cc.consume_type is not None and cc.message_model is not None,
              "consumeType or messageModel missing")


@case(
    "ADM-CONN-002", Level.MUST,
    "GET_CONSUMER_CONNECTION_LIST of a group without online consumers is answered CONSUMER_NOT_ONLINE",
    source='AdminBrokerProcessor.getConsumerConnectionList ("the consumer group[...] not online")',
    needs=BROKER,
    codes=(R.GET_CONSUMER_CONNECTION_LIST,),
)
async def consumer_not_online(ctx: Ctx) -> None:
    resp = await ctx.request("broker", R.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": ctx.unique("group")})
    ctx.code(resp, RC.CONSUMER_NOT_ONLINE, "GET_CONSUMER_CONNECTION_LIST of an offline group")


@case(
    "ADM-CONN-003", Level.MUST,
    "GET_PRODUCER_CONNECTION_LIST answers the connections of a producer group that sent a heartbeat",
    source="AdminBrokerProcessor.getProducerConnectionList; ProducerConnection (mqadmin producerConnection)",
    needs=BROKER,
    codes=(R.GET_PRODUCER_CONNECTION_LIST,),
)
async def producer_connection(ctx: Ctx) -> None:
    group, client = ctx.unique("pgroup"), ctx.unique("client")
    conn = await ctx.connect("broker")
    await ctx.call("broker", R.HEART_BEAT, None, heartbeat_body(client, producer_group=group), conn=conn,
                   what="HEART_BEAT")
    resp = await ctx.call("broker", R.GET_PRODUCER_CONNECTION_LIST, {"producerGroup": group},
                          what="GET_PRODUCER_CONNECTION_LIST")
    pc = _decode(ctx, ProducerConnection, resp, "GET_PRODUCER_CONNECTION_LIST")
    ctx.equal([c.client_id for c in pc.connection_set], [client], "connectionSet clientIds")


# ---------------------------------------------------------------------------- slave synchronisation


@case(
    "ADM-SYNC-001", Level.MUST,
    "GET_ALL_CONSUMER_OFFSET answers the offset table (topic@group → queue → offset) a slave copies",
    source="AdminBrokerProcessor.getAllConsumerOffset; SlaveSynchronize.syncConsumerOffset",
    needs=BROKER,
    codes=(R.GET_ALL_CONSUMER_OFFSET,),
)
async def all_consumer_offsets(ctx: Ctx) -> None:
    topic = await create_topic(ctx, routed=False)
    group = await create_group(ctx)
    await send_ok(ctx, topic, b"sync")
    await ctx.call("broker", R.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic, "queueId": 0,
                                                        "commitOffset": 1}, what="UPDATE_CONSUMER_OFFSET")
    resp = await ctx.call("broker", R.GET_ALL_CONSUMER_OFFSET, what="GET_ALL_CONSUMER_OFFSET")
    table = _decode(ctx, ConsumerOffsetSerializeWrapper, resp, "GET_ALL_CONSUMER_OFFSET").offset_table
    ctx.equal(dict(table.get(f"{topic}@{group}", {})), {0: 1}, f"offsetTable[{topic}@{group}]")


@case(
    "ADM-SYNC-002", Level.MUST,
    "GET_ALL_DELAY_OFFSET answers the schedule service's offset table a slave copies",
    source="AdminBrokerProcessor.getAllDelayOffset; SlaveSynchronize.syncDelayOffset",
    needs=BROKER,
    codes=(R.GET_ALL_DELAY_OFFSET,),
)
async def all_delay_offsets(ctx: Ctx) -> None:
    resp = await ctx.call("broker", R.GET_ALL_DELAY_OFFSET, what="GET_ALL_DELAY_OFFSET")
    try:
        doc = json.loads(resp.body or b"")
    except ValueError:
        from wire import fastjson

        doc = fastjson.loads(resp.body or b"", what="delay offsets")
    ctx.check(isinstance(doc, dict) and "offsetTable" in doc,
              f"the body has no offsetTable: {(resp.body or b'')[:120]!r}")


# ---------------------------------------------------------------------------- the name server


@case(
    "ADM-PERM-001", Level.MUST,
    "WIPE_WRITE_PERM_OF_BROKER takes the write perm off a broker name's topics (answering wipeTopicCount) "
    "and ADD_WRITE_PERM_OF_BROKER gives it back (addTopicCount)",
    source="RouteInfoManager.wipeWritePermOfBrokerByLock/addWritePermOfBrokerByLock; mqadmin wipeWritePerm, "
           "addWritePerm",
    codes=(R.WIPE_WRITE_PERM_OF_BROKER, R.ADD_WRITE_PERM_OF_BROKER),
)
async def write_perm(ctx: Ctx) -> None:
    t1, t2 = ctx.unique("topic"), ctx.unique("topic")
    fb = await fake_broker(ctx, topics={t1: topic_config(t1), t2: topic_config(t2)})
    count = str(len(fb.all_topics()))
    resp = await ctx.call("namesrv", R.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": fb.name},
                          what="WIPE_WRITE_PERM_OF_BROKER")
    ctx.equal(resp.ext_fields.get("wipeTopicCount"), count, "wipeTopicCount")
    data = await route_data(ctx, t1)
    assert data is not None
    ctx.equal([q.perm for q in data.queue_datas], [4], "the route's perm after the wipe")
    resp = await ctx.call("namesrv", R.ADD_WRITE_PERM_OF_BROKER, {"brokerName": fb.name},
                          what="ADD_WRITE_PERM_OF_BROKER")
    ctx.equal(resp.ext_fields.get("addTopicCount"), count, "addTopicCount")
    data = await route_data(ctx, t1)
    assert data is not None
    ctx.equal([q.perm for q in data.queue_datas], [6], "the route's perm after the add")


@case(
    "ADM-NSCFG-001", Level.MUST,
    "GET_NAMESRV_CONFIG answers the name server's configuration as properties text",
    source="DefaultRequestProcessor.getConfig (Configuration.getAllConfigsFormatString); mqadmin "
           "getNamesrvConfig",
    codes=(R.GET_NAMESRV_CONFIG,),
)
async def namesrv_config(ctx: Ctx) -> None:
    resp = await ctx.call("namesrv", R.GET_NAMESRV_CONFIG, what="GET_NAMESRV_CONFIG")
    props = decode_properties(resp.body or b"")
    for key in ("listenPort", "kvConfigPath", "orderMessageEnable"):
        ctx.check(key in props, f"the configuration has no {key}")


# ---------------------------------------------------------------------------- 5.x


@case(
    "ADM-HA-001", Level.MUST,
    "a 5.x broker answers GET_BROKER_HA_STATUS with its HARuntimeInfo (master: masterCommitLogMaxOffset and "
    "one entry per slave connection)",
    source="AdminBrokerProcessor.getBrokerHaStatus 5.0.0; HARuntimeInfo; capture "
           "java-5.0.0/12-haStatus-master",
    needs=BROKER,
    profiles=("5.0",),
    codes=(R.GET_BROKER_HA_STATUS,),
)
async def ha_status(ctx: Ctx) -> None:
    resp = await ctx.call("broker", R.GET_BROKER_HA_STATUS, what="GET_BROKER_HA_STATUS")
    info = _decode(ctx, HARuntimeInfo, resp, "GET_BROKER_HA_STATUS")
    ctx.check(info.master, "the master's HA status says it is not a master")
    ctx.note(f"masterCommitLogMaxOffset {info.master_commit_log_max_offset}, "
             f"{len(info.ha_connection_info)} slave connection(s)")
