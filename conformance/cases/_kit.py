# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Scenario pieces the cases share: the requests a broker, a producer, a consumer and mqadmin
send, written with the Java field names so that a case reads like the wire it checks.

Everything a case creates on the target has a unique name (:meth:`Ctx.unique`) and is removed
again by a clean-up: topics (DELETE_TOPIC_IN_BROKER and DELETE_TOPIC_IN_NAMESRV), subscription
groups, fake brokers (their registration connection closes and they unregister).
"""

from __future__ import annotations

import itertools
import random
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wire import RemotingCommand, RequestCode, ResponseCode, SerializeType, WireError
from wire.aio import ConnectionPool, RemotingConnection
from wire.bodies import (
    ClusterInfo,
    DataVersion,
    RegisterBrokerBody,
    TopicConfig,
    TopicConfigSerializeWrapper,
    TopicRouteData,
)
from wire.message import StoredMessage, decode_messages, encode_properties

from ..context import Ctx

R = RequestCode

#: PullSysFlag bits (``PullSysFlag``): commit offset, suspend, subscription expression, class filter
PULL_COMMIT, PULL_SUSPEND, PULL_SUBSCRIPTION = 1, 2, 4
#: MessageSysFlag: body compressed
COMPRESSED = 1

#: the send status codes of a stored message (SendStatus)
SEND_OK_CODES = (ResponseCode.SUCCESS, ResponseCode.FLUSH_DISK_TIMEOUT, ResponseCode.FLUSH_SLAVE_TIMEOUT,
                 ResponseCode.SLAVE_NOT_AVAILABLE)


def now_ms() -> int:
    return int(time.time() * 1000)


# ---------------------------------------------------------------------------- the name server


@dataclass
class FakeBroker:
    """The suite acting as a broker towards the name server: its own connection (the name server
    drops its routes when it closes), its identity and the topics it registered.

    As a real broker does (``TopicConfigManager``: clusterTopicEnable, brokerTopicEnable), it
    registers topics named after its cluster and itself besides the case's own. A 5.0.0 name
    server refuses a first registration of exactly one topic (``RouteInfoManager.registerBroker``
    takes it for an increment from a broker it does not know), which no real broker sends."""

    ctx: Ctx
    conn: RemotingConnection
    cluster: str
    name: str
    broker_id: int
    addr: str
    ha_addr: str
    topics: dict[str, TopicConfig] = field(default_factory=dict)
    counter: int = 0
    timestamp: int = field(default_factory=now_ms)

    def register_command(self, *, topics: Mapping[str, TopicConfig] | None = None, bump: bool = True,
                         crc: int | None = None, version: int | None = None,
                         serialize: SerializeType = SerializeType.JSON) -> RemotingCommand:
        if topics is not None:
            self.topics = dict(topics)
        if bump:
            self.counter += 1
        wrapper = TopicConfigSerializeWrapper(topic_config_table=self.all_topics(),
                                              data_version=DataVersion(counter=self.counter,
                                                                       timestamp=self.timestamp))
        body = RegisterBrokerBody(topic_config_serialize_wrapper=wrapper).encode()
        ext = {"brokerName": self.name, "brokerAddr": self.addr, "clusterName": self.cluster,
               "haServerAddr": self.ha_addr, "brokerId": self.broker_id, "compressed": False,
               "bodyCrc32": zlib.crc32(body) & 0x7FFFFFFF if crc is None else crc}
        kw: dict[str, Any] = {"serialize": serialize}
        if version is not None:
            kw["version"] = version
        return self.ctx.command(R.REGISTER_BROKER, ext, body, **kw)

    def all_topics(self) -> dict[str, TopicConfig]:
        """The case's topics and the two a real broker always registers."""
        own = {t: topic_config(t, 1, 1, 7) for t in (self.cluster, self.name)}
        return {**own, **self.topics}

    async def register(self, **kw: Any) -> RemotingCommand:
        """REGISTER_BROKER on this fake broker's connection (``registerBrokerAll``)."""
        return await self.conn.request(self.register_command(**kw), self.ctx.request_timeout)

    async def unregister(self) -> RemotingCommand:
        ext = {"brokerName": self.name, "brokerAddr": self.addr, "clusterName": self.cluster,
               "brokerId": self.broker_id}
        return await self.conn.request(self.ctx.command(R.UNREGISTER_BROKER, ext), self.ctx.request_timeout)


#: the fake brokers' ports: unique in this process (the name server keys a broker's liveness by its
#: address, so two fake brokers on one address would expire or unregister each other), from a
#: random base so that two runs against one name server are unlikely to meet
_FAKE_PORTS = itertools.count(20000 + 2 * random.randrange(10000), 2)


def topic_config(name: str, read: int = 4, write: int = 4, perm: int = 6, sys_flag: int = 0) -> TopicConfig:
    return TopicConfig(topic_name=name, read_queue_nums=read, write_queue_nums=write, perm=perm,
                       topic_sys_flag=sys_flag)


async def fake_broker(ctx: Ctx, *, topics: Mapping[str, TopicConfig] | None = None,
                      cluster: str | None = None,
                      name: str | None = None, broker_id: int = 0, port: int | None = None,
                      register: bool = True, expect: int | None = ResponseCode.SUCCESS) -> FakeBroker:
    """A fake broker with a unique name on 127.0.0.1 (an address nothing listens on is fine: a
    name server never dials brokers), registered with the name server unless ``register`` is
    false. It unregisters when the case ends."""
    conn = await ctx.connect("namesrv")
    cluster = cluster or ctx.unique("cluster")
    name = name or ctx.unique("broker")
    port = port or next(_FAKE_PORTS)
    fb = FakeBroker(ctx, conn, cluster, name, broker_id, f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}",
                    dict(topics or {}))

    async def unregister() -> None:
        if not conn.is_closing:
            await fb.unregister()

    ctx.cleanup(unregister)
    if register:
        resp = await fb.register()
        if expect is not None:
            ctx.code(resp, expect, f"REGISTER_BROKER of the fake broker {name}")
    return fb


async def route(ctx: Ctx, topic: str, *, version: int | None = None,
                ext: Mapping[str, Any] | None = None) -> RemotingCommand:
    kw: dict[str, Any] = {}
    if version is not None:
        kw["version"] = version
    return await ctx.request("namesrv", R.GET_ROUTEINFO_BY_TOPIC, {"topic": topic, **(ext or {})}, **kw)


async def route_data(ctx: Ctx, topic: str) -> TopicRouteData | None:
    resp = await route(ctx, topic)
    if resp.code != ResponseCode.SUCCESS:
        return None
    return TopicRouteData.decode(resp.body or b"")


async def cluster_info(ctx: Ctx) -> ClusterInfo:
    resp = await ctx.call("namesrv", R.GET_BROKER_CLUSTER_INFO, what="GET_BROKER_CLUSTER_INFO")
    return ClusterInfo.decode(resp.body or b"")


# ---------------------------------------------------------------------------- the broker


async def create_topic(ctx: Ctx, topic: str | None = None, *, read: int = 4, write: int = 4, perm: int = 6,
                       role: str = "broker", routed: bool = True) -> str:
    """UPDATE_AND_CREATE_TOPIC on the broker (as ``mqadmin updateTopic``), removed again at the
    end; with ``routed``, wait until the name server routes it."""
    topic = topic or ctx.unique("topic")
    ext = {"topic": topic, "defaultTopic": "TBW102", "readQueueNums": read, "writeQueueNums": write,
           "perm": perm, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False}
    delete_after_run(ctx, topic, role=role)
    await ctx.call(role, R.UPDATE_AND_CREATE_TOPIC, ext, what=f"UPDATE_AND_CREATE_TOPIC {topic}")
    if routed and ctx.target.namesrv:
        await wait_routed(ctx, topic)
    return topic


def delete_after_run(ctx: Ctx, topic: str, *, role: str = "broker") -> None:
    """Delete ``topic`` from the broker and the name server once the run is over (see
    :meth:`Ctx.cleanup_after_run` for why not at once)."""
    broker, namesrv = ctx.target.addr(role), ctx.target.namesrv

    async def delete(pool: ConnectionPool) -> None:
        if broker:
            await (await pool.get(broker)).request(RemotingCommand.request(R.DELETE_TOPIC_IN_BROKER,
                                                                           {"topic": topic}))
        if namesrv:
            await (await pool.get(namesrv)).request(
                RemotingCommand.request(R.DELETE_TOPIC_IN_NAMESRV, {"topic": topic}))

    ctx.cleanup_after_run(delete)


async def wait_routed(ctx: Ctx, topic: str, timeout: float = 10.0) -> TopicRouteData:
    async def probe() -> TopicRouteData | None:
        return await route_data(ctx, topic)

    data: TopicRouteData = await ctx.poll(probe, timeout=timeout,
                                          what=f"the name server never routed {topic}")
    return data


async def create_group(ctx: Ctx, group: str | None = None, *, retry_max: int = 16, role: str = "broker",
                       extra: Mapping[str, Any] | None = None) -> str:
    """UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (as ``mqadmin updateSubGroup``), deleted at the end."""
    import json

    group = group or ctx.unique("group")
    body = {"groupName": group, "consumeEnable": True, "consumeFromMinEnable": True,
            "consumeBroadcastEnable": True, "retryQueueNums": 1, "retryMaxTimes": retry_max, "brokerId": 0,
            "whichBrokerWhenConsumeSlowly": 1, "notifyConsumerIdsChangedEnable": True, **(extra or {})}

    async def delete() -> None:
        await ctx.request(role, R.DELETE_SUBSCRIPTIONGROUP, {"groupName": group})

    ctx.cleanup(delete)
    await ctx.call(role, R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None,
                   json.dumps(body, separators=(",", ":")).encode(),
                   what=f"UPDATE_AND_CREATE_SUBSCRIPTIONGROUP {group}")
    return group


def send_ext(topic: str, *, queue_id: int = 0, properties: Mapping[str, str] | None = None, v2: bool = True,
             sys_flag: int = 0, producer_group: str = "conformance_producer", batch: bool = False,
             reconsume_times: int = 0, default_queue_nums: int = 4, born: int | None = None) -> dict[str,
                                                                                                     Any]:
    """The ext fields of SEND_MESSAGE (V1 names) or SEND_MESSAGE_V2/SEND_BATCH_MESSAGE (the short
    keys of ``SendMessageRequestHeaderV2``)."""
    props = encode_properties({"WAIT": "true", **(properties or {})})
    v1 = {"producerGroup": producer_group, "topic": topic, "defaultTopic": "TBW102",
          "defaultTopicQueueNums": default_queue_nums, "queueId": queue_id, "sysFlag": sys_flag,
          "bornTimestamp": born or now_ms(), "flag": 0, "properties": props,
          "reconsumeTimes": reconsume_times,
          "unitMode": False, "batch": batch}
    if not v2:
        return v1
    # SendMessageRequestHeaderV2.createSendMessageRequestHeaderV2: a..m in the order of the V1 fields
    keys = "abcdefghijkm"
    names = ("producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
             "bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "batch")
    return {k: v1[n] for k, n in zip(keys, names, strict=True)}


async def send(ctx: Ctx, topic: str, body: bytes = b"conformance", *, role: str = "broker",
               code: int = R.SEND_MESSAGE_V2, queue_id: int = 0, properties: Mapping[str, str] | None = None,
               timeout: float | None = None, **kw: Any) -> RemotingCommand:
    """One send (SEND_MESSAGE_V2 by default, as the Java producer sends it); ``timeout`` for the
    answer (default: the run's request timeout)."""
    ext = send_ext(topic, queue_id=queue_id, properties=properties, v2=code != R.SEND_MESSAGE,
                   batch=code == R.SEND_BATCH_MESSAGE, **kw)
    return await ctx.request(role, code, ext, body, timeout=timeout)


async def send_ok(ctx: Ctx, topic: str, body: bytes = b"conformance", **kw: Any) -> RemotingCommand:
    resp = await send(ctx, topic, body, **kw)
    ctx.code(resp, ResponseCode.SUCCESS, f"a send to {topic}")
    return resp


def pull_ext(group: str, topic: str, queue_id: int, offset: int, *, max_nums: int = 32,
             sys_flag: int = PULL_SUBSCRIPTION, suspend_ms: int = 0, subscription: str = "*") -> dict[str,
                                                                                                      Any]:
    return {"consumerGroup": group, "topic": topic, "queueId": queue_id, "queueOffset": offset,
            "maxMsgNums": max_nums, "sysFlag": sys_flag, "commitOffset": 0,
            "suspendTimeoutMillis": suspend_ms,
            "subscription": subscription, "subVersion": 0, "expressionType": "TAG"}


async def pull(ctx: Ctx, group: str, topic: str, queue_id: int, offset: int, *, role: str = "broker",
               timeout: float | None = None, conn: RemotingConnection | None = None,
               **kw: Any) -> RemotingCommand:
    return await ctx.request(role, R.PULL_MESSAGE, pull_ext(group, topic, queue_id, offset, **kw),
                             timeout=timeout,
                             conn=conn)


def messages(resp: RemotingCommand, ctx: Ctx, what: str) -> list[StoredMessage]:
    """The stored messages of a PULL/QUERY/VIEW answer body; a body that does not decode fails."""
    try:
        return decode_messages(resp.body or b"")
    except WireError as err:
        ctx.fail(f"{what}: the body is not a sequence of stored messages: {err}")
        raise AssertionError from err


def heartbeat_body(client_id: str, *, consumer_group: str | None = None, topic: str | None = None,
                   producer_group: str | None = None, enum_names: bool = True) -> bytes:
    """A HEART_BEAT body as the Java client writes it (enum names) or the C++ client (ordinals)."""
    import json

    consumers = []
    if consumer_group:
        subs = [{"classFilterMode": False, "codeSet": [], "expressionType": "TAG", "subString": "*",
                 "subVersion": now_ms(), "tagsSet": [], "topic": topic}] if topic else []
        consumers.append({
            "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET" if enum_names else 0,
            "consumeType": "CONSUME_PASSIVELY" if enum_names else 1,
            "groupName": consumer_group, "messageModel": "CLUSTERING" if enum_names else 1,
            "subscriptionDataSet": subs, "unitMode": False})
    producers = [{"groupName": producer_group}] if producer_group else []
    return json.dumps({"clientID": client_id, "consumerDataSet": consumers, "producerDataSet": producers},
                      separators=(",", ":")).encode()
