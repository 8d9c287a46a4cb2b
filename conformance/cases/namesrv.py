# Licensed under the Apache License, Version 2.0. See LICENSE.
"""NS: the name server. The suite acts as brokers (fake ones, with unique names and addresses
nothing listens on: a name server never dials a broker) and as clients."""

from __future__ import annotations

import asyncio
import json

from wire import MQVersion, RemotingCommand, RequestCode, ResponseCode, WireError
from wire.bodies import KVTable, TopicRouteData
from wire.java import java_hash_order

from ..context import Ctx
from ..model import Level
from ..registry import case
from ._kit import cluster_info, fake_broker, route, route_data, topic_config

R = RequestCode
RIM = "RouteInfoManager"
DRP = "DefaultRequestProcessor"


async def _listed(ctx: Ctx, name: str) -> dict[int, str] | None:
    info = await cluster_info(ctx)
    data = info.broker_addr_table.get(name)
    return dict(data.broker_addrs) if data is not None else None


async def _gone(ctx: Ctx, name: str, topic: str | None, *, timeout: float = 10.0, what: str) -> None:
    """Wait until the broker name is out of the cluster info (and ``topic`` has no route)."""

    async def probe() -> bool:
        if await _listed(ctx, name) is not None:
            return False
        return topic is None or (await route(ctx, topic)).code == ResponseCode.TOPIC_NOT_EXIST

    await ctx.poll(probe, timeout=timeout, what=what)


# ---------------------------------------------------------------------------- registration


@case(
    "NS-REG-001", Level.MUST,
    "a master's REGISTER_BROKER is answered SUCCESS",
    source="DefaultRequestProcessor.registerBrokerWithFilterServer; {RIM}.registerBroker",
    codes=(R.REGISTER_BROKER,),
)
async def register_master(ctx: Ctx) -> None:
    """Registers a fake master (brokerId 0) with one topic; the answer must be SUCCESS."""
    await fake_broker(ctx, topics={(t := ctx.unique("topic")): topic_config(t)})


@case(
    "NS-REG-002", Level.MUST,
    "a registered broker is listed by GET_BROKER_CLUSTER_INFO under its cluster, with its address under its "
    "brokerId",
    source="DefaultRequestProcessor.getBrokerClusterInfo; {RIM}.getAllClusterInfo",
    codes=(R.GET_BROKER_CLUSTER_INFO,),
)
async def cluster_lists_broker(ctx: Ctx) -> None:
    """Registers a master and a slave (brokerId 1) of one fake broker name; the cluster info must
    list the name under the cluster and both addresses by id."""
    master = await fake_broker(ctx)
    slave = await fake_broker(ctx, cluster=master.cluster, name=master.name, broker_id=1)
    info = await cluster_info(ctx)
    ctx.check(master.name in info.cluster_addr_table.get(master.cluster, ()),
              f"clusterAddrTable[{master.cluster}] = {info.cluster_addr_table.get(master.cluster)!r} "
              f"does not name {master.name}")
    data = info.broker_addr_table.get(master.name)
    ctx.check(data is not None, f"brokerAddrTable has no {master.name}")
    assert data is not None
    ctx.equal(data.cluster, master.cluster, "brokerData.cluster")
    ctx.equal(data.broker_name, master.name, "brokerData.brokerName")
    ctx.equal(dict(data.broker_addrs), {0: master.addr, 1: slave.addr}, "brokerData.brokerAddrs")


@case(
    "NS-REG-003", Level.MUST,
    "a slave's registration answer carries its master's address (masterAddr) and HA address (haServerAddr)",
    source="RouteInfoManager.registerBroker (result.setHaServerAddr/setMasterAddr)",
    codes=(R.REGISTER_BROKER,),
)
async def slave_learns_master(ctx: Ctx) -> None:
    """Registers a fake master, then a fake slave of it; the slave's answer must name the master."""
    master = await fake_broker(ctx)
    slave = await fake_broker(ctx, cluster=master.cluster, name=master.name, broker_id=1, register=False)
    resp = await slave.register()
    ctx.code(resp, ResponseCode.SUCCESS, "the slave's REGISTER_BROKER")
    ctx.equal(resp.ext_fields.get("masterAddr"), master.addr, "masterAddr in the slave's answer")
    ctx.equal(resp.ext_fields.get("haServerAddr"), master.ha_addr, "haServerAddr in the slave's answer")


@case(
    "NS-REG-004", Level.MUST,
    "a REGISTER_BROKER whose bodyCrc32 does not match its body is refused with SYSTEM_ERROR and registers "
    "nothing",
    source="DefaultRequestProcessor.registerBrokerWithFilterServer (checksum)",
    codes=(R.REGISTER_BROKER,),
)
async def register_crc(ctx: Ctx) -> None:
    """Registers a fake broker whose header's bodyCrc32 is off by one; the answer must be
    SYSTEM_ERROR and the broker must not be listed."""
    fb = await fake_broker(ctx, topics={(t := ctx.unique("topic")): topic_config(t)}, register=False)
    good = fb.register_command()
    crc = int(good.ext_fields["bodyCrc32"])
    resp = await fb.conn.request(fb.register_command(bump=False, crc=(crc + 1) & 0x7FFFFFFF),
                                 ctx.request_timeout)
    ctx.code(resp, ResponseCode.SYSTEM_ERROR, "a registration with a wrong bodyCrc32")
    ctx.check(await _listed(ctx, fb.name) is None, "the broker was registered despite the wrong CRC")


@case(
    "NS-REG-005", Level.MUST,
    "a re-registration with a newer dataVersion that adds a topic gets the topic routed",
    source="RouteInfoManager.registerBroker (isBrokerTopicConfigChanged, createAndUpdateQueueData)",
    codes=(R.REGISTER_BROKER,),
)
async def reregister_adds_topic(ctx: Ctx) -> None:
    """Registers a fake master with one topic, then again with a newer data version and a
    second topic; the second topic must be routed to it."""
    t1, t2 = ctx.unique("topic"), ctx.unique("topic")
    fb = await fake_broker(ctx, topics={t1: topic_config(t1)})
    ctx.code(await route(ctx, t2), ResponseCode.TOPIC_NOT_EXIST, f"the route of {t2} before it is registered")
    ctx.code(await fb.register(topics={t1: topic_config(t1), t2: topic_config(t2)}), ResponseCode.SUCCESS,
             "the second registration")
    data = await route_data(ctx, t2)
    ctx.check(data is not None, f"{t2} is not routed after the re-registration that added it")
    assert data is not None
    ctx.equal([q.broker_name for q in data.queue_datas], [fb.name], f"the queue data of {t2}")


@case(
    "NS-REG-006", Level.SHOULD,
    "a registration with a compressed body (compressed=true) is read",
    source="RegisterBrokerBody.decode(data, compressed); BrokerOuterAPI.registerBrokerAll "
           "(compressedRegister)",
    codes=(R.REGISTER_BROKER,),
)
async def register_compressed(ctx: Ctx) -> None:
    """Registers a fake master whose body is in the deflated form a broker with
    compressedRegister=true sends (with the 5.x static-topic section for a 5.0 target, which reads
    it whatever the broker's version); its topic must be routed with the registered queue numbers."""
    import zlib

    from wire.bodies import DataVersion, RegisterBrokerBody, TopicConfigSerializeWrapper

    topic = ctx.unique("topic")
    fb = await fake_broker(ctx, register=False)
    table = {**fb.all_topics(), topic: topic_config(topic, 3, 5)}
    wrapper = TopicConfigSerializeWrapper(topic_config_table=table,
                                          data_version=DataVersion(counter=1, timestamp=fb.timestamp),
                                          topic_queue_mapping_info_map={} if ctx.profile == "5.0" else None)
    body = RegisterBrokerBody(topic_config_serialize_wrapper=wrapper).encode(compressed=True)
    ext = {"brokerName": fb.name, "brokerAddr": fb.addr, "clusterName": fb.cluster,
           "haServerAddr": fb.ha_addr,
           "brokerId": 0, "compressed": True, "bodyCrc32": zlib.crc32(body) & 0x7FFFFFFF}
    resp = await fb.conn.request(ctx.command(R.REGISTER_BROKER, ext, body), ctx.request_timeout)
    ctx.code(resp, ResponseCode.SUCCESS, "a compressed registration")
    data = await route_data(ctx, topic)
    ctx.check(data is not None, f"{topic} of the compressed registration is not routed")
    assert data is not None
    ctx.equal([(q.read_queue_nums, q.write_queue_nums) for q in data.queue_datas], [(3, 5)],
              "read/write queue numbers of the route")


# ---------------------------------------------------------------------------- routes


@case(
    "NS-ROUTE-001", Level.MUST,
    "GET_ROUTEINFO_BY_TOPIC of a topic no broker registered is answered TOPIC_NOT_EXIST",
    source="DefaultRequestProcessor.getRouteInfoByTopic (ClientRequestProcessor in 5.x)",
    codes=(R.GET_ROUTEINFO_BY_TOPIC,),
)
async def route_unknown(ctx: Ctx) -> None:
    ctx.code(await route(ctx, ctx.unique("nosuch")), ResponseCode.TOPIC_NOT_EXIST,
             "the route of an unknown topic")


@case(
    "NS-ROUTE-002", Level.SHOULD,
    'the TOPIC_NOT_EXIST remark is Java\'s: "No topic route info in name server for the topic: <topic>" and '
    "the FAQ link",
    source="DefaultRequestProcessor.getRouteInfoByTopic; FAQUrl.APPLY_TOPIC_URL",
    codes=(R.GET_ROUTEINFO_BY_TOPIC,),
)
async def route_unknown_remark(ctx: Ctx) -> None:
    topic = ctx.unique("nosuch")
    resp = await route(ctx, topic)
    ctx.code(resp, ResponseCode.TOPIC_NOT_EXIST, "the route of an unknown topic")
    want = f"No topic route info in name server for the topic: {topic}"
    ctx.check((resp.remark or "").startswith(want), f"remark {resp.remark!r} does not start with {want!r}")
    ctx.check("rocketmq.apache.org" in (resp.remark or ""), f"remark {resp.remark!r} has no FAQ link")


@case(
    "NS-ROUTE-003", Level.MUST,
    "a route carries queueDatas (brokerName, read/write queue numbers, perm, topicSysFlag) and brokerDatas "
    "(cluster, brokerName, brokerAddrs by id) of the brokers that registered it",
    source="RouteInfoManager.pickupTopicRouteData; TopicRouteData",
    codes=(R.GET_ROUTEINFO_BY_TOPIC,),
)
async def route_fields(ctx: Ctx) -> None:
    """Registers a fake master and slave with a topic of 3 read / 5 write queues, perm 6 and
    topicSysFlag 0; the route must say exactly that."""
    topic = ctx.unique("topic")
    master = await fake_broker(ctx, topics={topic: topic_config(topic, 3, 5, 6)})
    slave = await fake_broker(ctx, cluster=master.cluster, name=master.name, broker_id=1,
                              topics={topic: topic_config(topic, 3, 5, 6)})
    data = await route_data(ctx, topic)
    ctx.check(data is not None, f"{topic} is not routed")
    assert data is not None
    ctx.equal([(q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm, q.topic_sys_flag)
               for q in data.queue_datas], [(master.name, 3, 5, 6, 0)], "queueDatas")
    ctx.equal([(b.cluster, b.broker_name, dict(b.broker_addrs)) for b in data.broker_datas],
              [(master.cluster, master.name, {0: master.addr, 1: slave.addr})], "brokerDatas")


def _standard_json(ctx: Ctx, resp: RemotingCommand, what: str) -> None:
    try:
        json.loads(resp.body or b"")
    except ValueError as exc:
        ctx.fail(f"{what}: the route body is not standard JSON ({exc}): {(resp.body or b'')[:120]!r}")


@case(
    "NS-ROUTE-004", Level.MUST,
    "a client of V4_9_4 or later gets the route as standard JSON (quoted brokerAddrs keys)",
    source="DefaultRequestProcessor.getRouteInfoByTopic (request.getVersion() >= V4_9_4: BrowserCompatible, "
           "QuoteFieldNames, MapSortField)",
    codes=(R.GET_ROUTEINFO_BY_TOPIC,),
)
async def route_standard_json(ctx: Ctx) -> None:
    topic = ctx.unique("topic")
    await fake_broker(ctx, topics={topic: topic_config(topic)})
    resp = await route(ctx, topic, version=int(MQVersion.V4_9_8))
    ctx.code(resp, ResponseCode.SUCCESS, "the route")
    _standard_json(ctx, resp, "version V4_9_8")


@case(
    "NS-ROUTE-005", Level.MUST,
    "an older client that sends acceptStandardJsonOnly=true gets the route as standard JSON",
    source="DefaultRequestProcessor.getRouteInfoByTopic (GetRouteInfoRequestHeader.acceptStandardJsonOnly)",
    codes=(R.GET_ROUTEINFO_BY_TOPIC,),
)
async def route_accept_standard(ctx: Ctx) -> None:
    topic = ctx.unique("topic")
    await fake_broker(ctx, topics={topic: topic_config(topic)})
    resp = await route(ctx, topic, version=int(MQVersion.V4_4_0), ext={"acceptStandardJsonOnly": "true"})
    ctx.code(resp, ResponseCode.SUCCESS, "the route")
    _standard_json(ctx, resp, "version V4_4_0 with acceptStandardJsonOnly=true")


@case(
    "NS-ROUTE-006", Level.SHOULD,
    "a client older than V4_9_4 gets fastjson's form, brokerAddrs with bare integer keys, as Java writes it",
    source="DefaultRequestProcessor.getRouteInfoByTopic (topicRouteData.encode()); capture "
           "java-4.9.8/05-cpp-produce",
    codes=(R.GET_ROUTEINFO_BY_TOPIC,),
)
async def route_fastjson(ctx: Ctx) -> None:
    """Asks as the C++ client does (version 63, V3_1_8): the body must hold ``{0:"addr"}``."""
    topic = ctx.unique("topic")
    fb = await fake_broker(ctx, topics={topic: topic_config(topic)})
    resp = await route(ctx, topic, version=63)
    ctx.code(resp, ResponseCode.SUCCESS, "the route")
    want = f'{{0:"{fb.addr}"}}'.encode()
    ctx.check(want in (resp.body or b""), f"the body does not hold {want!r}: {(resp.body or b'')[:200]!r}")
    ctx.check(TopicRouteData.decode(resp.body or b"").broker_datas, "the fastjson body does not decode")


@case(
    "NS-ROUTE-007", Level.SHOULD,
    "queueDatas and brokerDatas come in the iteration order of Java's HashMap/HashSet of broker names",
    source="RouteInfoManager.pickupTopicRouteData (queueDataMap.values(), HashSet<String> brokerNameSet)",
    codes=(R.GET_ROUTEINFO_BY_TOPIC,),
)
async def route_order(ctx: Ctx) -> None:
    """Registers four fake brokers with one topic, in an order that differs from both the hash
    order and the name order, and compares the route's order with Java's."""
    topic = ctx.unique("topic")
    cluster = ctx.unique("cluster")
    names = [ctx.unique(f"b{c}") for c in "dbca"]
    for name in names:
        await fake_broker(ctx, cluster=cluster, name=name, topics={topic: topic_config(topic)})
    data = await route_data(ctx, topic)
    ctx.check(data is not None, f"{topic} is not routed")
    assert data is not None
    want = java_hash_order(names)
    ctx.equal([q.broker_name for q in data.queue_datas], want, "the order of queueDatas")
    ctx.equal([b.broker_name for b in data.broker_datas], want, "the order of brokerDatas")


# ---------------------------------------------------------------------------- going away


@case(
    "NS-UNREG-001", Level.MUST,
    "UNREGISTER_BROKER removes the broker from the cluster info and the routes of its topics",
    source="DefaultRequestProcessor.unregisterBroker; {RIM}.unregisterBroker",
    codes=(R.UNREGISTER_BROKER,),
)
async def unregister(ctx: Ctx) -> None:
    topic = ctx.unique("topic")
    fb = await fake_broker(ctx, topics={topic: topic_config(topic)})
    ctx.check(await route_data(ctx, topic) is not None, f"{topic} is not routed after the registration")
    ctx.code(await fb.unregister(), ResponseCode.SUCCESS, "UNREGISTER_BROKER")
    # 5.x unregisters in a background batch (BatchUnregistrationService): wait a little
    await _gone(ctx, fb.name, topic,
                what=f"{fb.name} and the route of {topic} are still there after UNREGISTER_BROKER")


@case(
    "NS-UNREG-002", Level.MUST,
    "when a master unregisters and its slave stays, the broker name and its topics' routes stay (served by "
    "the slave)",
    source="RouteInfoManager.unregisterBroker (the broker name goes only with its last address)",
    codes=(R.UNREGISTER_BROKER,),
)
async def unregister_master_keeps_slave(ctx: Ctx) -> None:
    topic = ctx.unique("topic")
    master = await fake_broker(ctx, topics={topic: topic_config(topic)})
    slave = await fake_broker(ctx, cluster=master.cluster, name=master.name, broker_id=1,
                              topics={topic: topic_config(topic)})
    ctx.code(await master.unregister(), ResponseCode.SUCCESS, "the master's UNREGISTER_BROKER")

    async def only_slave() -> bool:
        return await _listed(ctx, master.name) == {1: slave.addr}

    await ctx.poll(only_slave, timeout=10,
                   what=f"{master.name} is not listed with only its slave after the master "
                   "unregistered")
    data = await route_data(ctx, topic)
    ctx.check(data is not None, f"{topic} lost its route when only the master went away")
    assert data is not None
    ctx.equal([dict(b.broker_addrs) for b in data.broker_datas], [{1: slave.addr}], "the route's brokerAddrs")


@case(
    "NS-UNREG-003", Level.SHOULD,
    "when the connection that carried a broker's registration closes, the broker is dropped at once",
    source="BrokerHousekeepingService.onChannelClose; RouteInfoManager.onChannelDestroy",
)
async def connection_close_drops(ctx: Ctx) -> None:
    topic = ctx.unique("topic")
    fb = await fake_broker(ctx, topics={topic: topic_config(topic)})
    await fb.conn.aclose()
    await _gone(ctx, fb.name, topic, timeout=5.0,
                what=f"{fb.name} is still listed after its registration connection closed")


async def _expiry(ctx: Ctx) -> tuple[str, str, asyncio.Future[Exception | None], float]:
    """Registers a fake broker on a connection that then stays open and silent; returns its name,
    topic, the future of that connection's close and the registration time."""
    topic = ctx.unique("topic")
    fb = await fake_broker(ctx, topics={topic: topic_config(topic)})
    loop = asyncio.get_running_loop()
    return fb.name, topic, fb.conn.closed, loop.time()


@case(
    "NS-EXPIRY-001", Level.MUST,
    "a broker that stops registering (its connection open and silent) is dropped within 120 s + the scan "
    "interval, and the name server closes its connection",
    source="RouteInfoManager.scanNotActiveBroker (BROKER_CHANNEL_EXPIRED_TIME 120 s, scanned every 10 s, 5 s "
           "in 5.x)",
    timeout=200.0,
    slow=True,
)
async def expiry(ctx: Ctx) -> None:
    name, topic, closed, t0 = await _expiry(ctx)
    limit = 120 + 10 + 15  # the expiry, one scan interval, and room for a loaded machine
    loop = asyncio.get_running_loop()
    while await _listed(ctx, name) is not None:
        ctx.check(loop.time() - t0 < limit, f"{name} is still listed {limit} s after its last registration")
        await asyncio.sleep(1.0)
    gone_at = loop.time() - t0
    ctx.note(f"dropped {gone_at:.0f} s after its registration")
    ctx.code(await route(ctx, topic), ResponseCode.TOPIC_NOT_EXIST, f"the route of {topic} after the expiry")
    try:
        await asyncio.wait_for(asyncio.shield(closed), 15)
    except TimeoutError:
        ctx.fail("the name server did not close the expired broker's connection")


@case(
    "NS-EXPIRY-002", Level.SHOULD,
    "a broker is not dropped before 120 s without registering",
    source="RouteInfoManager.scanNotActiveBroker ((last + BROKER_CHANNEL_EXPIRED_TIME) < now)",
    timeout=200.0,
    slow=True,
)
async def no_early_expiry(ctx: Ctx) -> None:
    """Registers once and checks the cluster info every 5 s: still listed at 110 s."""
    name, _topic, _closed, t0 = await _expiry(ctx)
    loop = asyncio.get_running_loop()
    while (elapsed := loop.time() - t0) < 110:
        ctx.check(await _listed(ctx, name) is not None,
                  f"{name} was dropped {elapsed:.0f} s after its registration")
        await asyncio.sleep(5.0)


@case(
    "NS-QDV-001", Level.MUST,
    "QUERY_DATA_VERSION answers changed=false for the broker's current data version and changed=true for "
    "another",
    source="DefaultRequestProcessor.queryBrokerTopicConfig; BrokerController.needRegister",
    codes=(R.QUERY_DATA_VERSION,),
)
async def query_data_version(ctx: Ctx) -> None:
    from wire.bodies import DataVersion

    fb = await fake_broker(ctx)
    ext = {"brokerName": fb.name, "brokerAddr": fb.addr, "clusterName": fb.cluster, "brokerId": 0}
    same = DataVersion(counter=fb.counter, timestamp=fb.timestamp).encode()
    other = DataVersion(counter=fb.counter + 5, timestamp=fb.timestamp).encode()
    for body, want in ((same, "false"), (other, "true")):
        resp = await ctx.request("namesrv", R.QUERY_DATA_VERSION, ext, body, conn=fb.conn)
        ctx.code(resp, ResponseCode.SUCCESS, "QUERY_DATA_VERSION")
        ctx.equal(resp.ext_fields.get("changed"), want, f"changed for data version {body.decode()}")


# ---------------------------------------------------------------------------- KV config


@case(
    "NS-KV-001", Level.MUST,
    "PUT_KV_CONFIG stores a value that GET_KV_CONFIG returns",
    source="DefaultRequestProcessor.putKVConfig/getKVConfig; KVConfigManager",
    codes=(R.PUT_KV_CONFIG, R.GET_KV_CONFIG),
)
async def kv_put_get(ctx: Ctx) -> None:
    ns, key = ctx.unique("ns"), ctx.unique("key")

    async def delete() -> None:
        await ctx.request("namesrv", R.DELETE_KV_CONFIG, {"namespace": ns, "key": key})

    ctx.cleanup(delete)
    await ctx.call("namesrv", R.PUT_KV_CONFIG, {"namespace": ns, "key": key, "value": "v=1;ü"},
                   what="PUT_KV_CONFIG")
    resp = await ctx.call("namesrv", R.GET_KV_CONFIG, {"namespace": ns, "key": key}, what="GET_KV_CONFIG")
    ctx.equal(resp.ext_fields.get("value"), "v=1;ü", "the value GET_KV_CONFIG returns")


@case(
    "NS-KV-002", Level.MUST,
    "GET_KV_CONFIG of a key that is not set is answered QUERY_NOT_FOUND",
    source="DefaultRequestProcessor.getKVConfig",
    codes=(R.GET_KV_CONFIG,),
)
async def kv_missing(ctx: Ctx) -> None:
    ns, key = ctx.unique("ns"), ctx.unique("key")
    resp = await ctx.request("namesrv", R.GET_KV_CONFIG, {"namespace": ns, "key": key})
    ctx.code(resp, ResponseCode.QUERY_NOT_FOUND, "GET_KV_CONFIG of an unknown key")
    want = f"No config item, Namespace: {ns} Key: {key}"
    if resp.remark != want:
        ctx.note(f"remark {resp.remark!r} (Java: {want!r})")


@case(
    "NS-KV-003", Level.MUST,
    "DELETE_KV_CONFIG removes a key (GET_KV_CONFIG then answers QUERY_NOT_FOUND)",
    source="DefaultRequestProcessor.deleteKVConfig",
    codes=(R.DELETE_KV_CONFIG,),
)
async def kv_delete(ctx: Ctx) -> None:
    ns, key = ctx.unique("ns"), ctx.unique("key")
    await ctx.call("namesrv", R.PUT_KV_CONFIG, {"namespace": ns, "key": key, "value": "x"},
                   what="PUT_KV_CONFIG")
    await ctx.call("namesrv", R.DELETE_KV_CONFIG, {"namespace": ns, "key": key}, what="DELETE_KV_CONFIG")
    resp = await ctx.request("namesrv", R.GET_KV_CONFIG, {"namespace": ns, "key": key})
    ctx.code(resp, ResponseCode.QUERY_NOT_FOUND, "GET_KV_CONFIG after DELETE_KV_CONFIG")


@case(
    "NS-KV-004", Level.MUST,
    "GET_KVLIST_BY_NAMESPACE returns the namespace's keys as a KVTable body, and QUERY_NOT_FOUND for a "
    "namespace that has none",
    source="DefaultRequestProcessor.getKVListByNamespace",
    codes=(R.GET_KVLIST_BY_NAMESPACE,),
)
async def kv_list(ctx: Ctx) -> None:
    ns = ctx.unique("ns")
    values = {ctx.unique("key"): "one", ctx.unique("key"): "two"}

    async def delete() -> None:
        for key in values:
            await ctx.request("namesrv", R.DELETE_KV_CONFIG, {"namespace": ns, "key": key})

    ctx.cleanup(delete)
    ctx.code(await ctx.request("namesrv", R.GET_KVLIST_BY_NAMESPACE, {"namespace": ns}),
             ResponseCode.QUERY_NOT_FOUND,
             "GET_KVLIST_BY_NAMESPACE of an empty namespace")
    for key, value in values.items():
        await ctx.call("namesrv", R.PUT_KV_CONFIG, {"namespace": ns, "key": key, "value": value},
                       what="PUT_KV_CONFIG")
    resp = await ctx.call("namesrv", R.GET_KVLIST_BY_NAMESPACE, {"namespace": ns},
                          what="GET_KVLIST_BY_NAMESPACE")
    try:
        table = dict(KVTable.decode(resp.body or b"").table)
    except WireError as err:
        ctx.fail(f"the body is not a KVTable: {err}")
        raise
    ctx.equal(table, values, "the KVTable")


# ---------------------------------------------------------------------------- unknown codes


@case(
    "NS-UNKNOWN-001", Level.MUST,
    "a request code the name server does not know leaves the connection open and served",
    source="DefaultRequestProcessor.processRequest (default branch)",
)
async def unknown_code_connection(ctx: Ctx) -> None:
    peer = await ctx.raw("namesrv")
    peer.send_command(ctx.command(9999).replace(opaque=61))
    peer.send_command(ctx.command(R.GET_KV_CONFIG, {"namespace": "conformance", "key": ctx.unique("k")})
                      .replace(opaque=62))
    resp = await peer.response_to(62, ctx.request_timeout)
    ctx.check(resp is not None, "the request after the unknown code was not answered")


@case(
    "NS-UNKNOWN-002", Level.SHOULD,
    "a 4.9 name server does not answer a request code it does not know",
    source="DefaultRequestProcessor.processRequest 4.9.8 (default: return null); capture "
           "java-4.9.8/10-error-responses case 2",
    profiles=("4.9",),
)
async def unknown_code_silent(ctx: Ctx) -> None:
    peer = await ctx.raw("namesrv")
    peer.send_command(ctx.command(9999).replace(opaque=71))
    peer.send_command(ctx.command(R.GET_KV_CONFIG, {"namespace": "conformance", "key": ctx.unique("k")})
                      .replace(opaque=72))
    resp = await peer.response_to(72, ctx.request_timeout)
    ctx.check(resp is not None, "the request after the unknown code was not answered")
    stray = [c for c in peer.answers() if c.opaque == 71]
    ctx.check(not stray, f"the unknown code was answered {stray[0].code_name}" if stray else "")


@case(
    "NS-UNKNOWN-003", Level.MUST,
    "a 5.x name server answers a request code it does not know with REQUEST_CODE_NOT_SUPPORTED",
    source='DefaultRequestProcessor.processRequest 5.0.0 (default: REQUEST_CODE_NOT_SUPPORTED, " request '
           'type N not supported")',
    profiles=("5.0",),
)
async def unknown_code_answered(ctx: Ctx) -> None:
    resp = await ctx.request("namesrv", 9999)
    ctx.code(resp, ResponseCode.REQUEST_CODE_NOT_SUPPORTED, "an unknown request code")

