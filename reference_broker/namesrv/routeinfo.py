# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The name server's route tables: which brokers live, where, and which topics they serve.

Theory of operation
-------------------
:class:`RouteInfoManager` mirrors ``namesrv/routeinfo/RouteInfoManager.java`` (4.9.8) as pure
state: no sockets, no tasks, no clock of its own (``clock`` is injected, so tests move time by
hand). Five tables, keyed as in Java:

* ``topic_queue_table``: topic → broker name → :class:`wire.bodies.QueueData`;
* ``broker_addr_table``: broker name → :class:`BrokerEntry` (cluster, broker id → address);
* ``cluster_addr_table``: cluster → set of broker names;
* ``broker_live_table``: broker address → :class:`BrokerLiveInfo` (last registration time,
  data version, the connection that carried the registration, HA address);
* ``filter_server_table``: broker address → filter server addresses.

A broker is alive while it keeps registering. :meth:`RouteInfoManager.scan_not_active_broker`
drops those whose last registration is older than the expiry, and
:meth:`RouteInfoManager.on_channel_destroy` drops the broker whose registration came over a
connection that closed (Java's ``BrokerHousekeepingService``). Dropping a broker address removes
its id from the broker name; only when no address is left does the broker name leave its
cluster and its queue data leave every topic. So a master that goes away leaves its slaves, and
the topics, listed under the broker name.

Every table is a :class:`~wire.java.JavaHashMap` created with Java's
initial capacity, so whatever we serialise from them comes out in the order fastjson would
write the Java ``HashMap``/``HashSet``.

"Channels" are opaque here: any object identifying a connection (the server passes its
``RemotingConnection``). The manager never closes them; :meth:`scan_not_active_broker` returns
the ones to close.

Changes in steps
----------------
A change whose work follows the number of topics (a registration, which may carry hundreds of
thousands of topic configs, and the removal of a broker name's queue data, its write
permission edits) also comes as a generator, ``*_steps``, which yields after every
:data:`STEP_TOPICS` topics and returns what the plain method returns; the plain method runs
those steps to the end at once (:func:`reference_broker.steps.run_steps`). The server runs them
in turns with the rest of its event loop, and lets no other request read or change the tables until the change
is done (``server.RouteGate``): Java takes the tables' write lock for the whole change, and the
answers are the same.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from wire.bodies import (
    BrokerData,
    ClusterInfo,
    DataVersion,
    QueueData,
    TopicConfig,
    TopicList,
    TopicRouteData,
)
from wire.java import JavaHashMap, java_hash
from wire.topic import FLAG_UNIT, FLAG_UNIT_SUB, MASTER_ID, PERM_READ, PERM_WRITE

from ..steps import Steps, run_steps

__all__ = [
    "MASTER_ID",
    "BrokerEntry",
    "BrokerLiveInfo",
    "RegisterBrokerResult",
    "STEP_TOPICS",
    "RouteInfoManager",
    "now_ms",
]

log = logging.getLogger("reference_broker.namesrv")

#: a change done in steps yields after this many topics (a few milliseconds of work)
STEP_TOPICS = 1000


def now_ms() -> int:
    """Wall-clock milliseconds (``System.currentTimeMillis``)."""
    return time.time_ns() // 1_000_000


@dataclass
class BrokerLiveInfo:
    """``BrokerLiveInfo``: what the name server remembers about one registered broker address."""

    last_update_timestamp: int
    data_version: DataVersion
    channel: object | None
    ha_server_addr: str | None


@dataclass
class BrokerEntry:
    """``BrokerData`` as the name server keeps it (mutable); :meth:`view` gives the wire body."""

    cluster: str
    broker_name: str
    broker_addrs: JavaHashMap[int, str]
    #: ``enableActingMaster`` of the last registration that carried it (a 5.x broker always sends
    #: it, and a 5.0.0 name server then writes it in every BrokerData); None: no 5.x broker
    #: registered this name, and the field is left out as a 4.9.8 name server leaves it
    enable_acting_master: bool | None = None

    def view(self) -> BrokerData:
        # pickupTopicRouteData and ClusterInfo hand out copies: later changes do not leak into them
        return BrokerData(cluster=self.cluster, broker_name=self.broker_name,
                          broker_addrs=dict(self.broker_addrs.items()),
                          enable_acting_master=self.enable_acting_master)


@dataclass(frozen=True, slots=True)
class RegisterBrokerResult:
    """``RegisterBrokerResult``: for a slave, its master's HA address and address."""

    ha_server_addr: str | None = None
    master_addr: str | None = None


def _same_version(a: DataVersion | None, b: DataVersion | None) -> bool:
    # mirrors DataVersion.equals (4.9.8): timestamp and counter only
    if a is None or b is None:
        return a is b
    return a.counter == b.counter and a.timestamp == b.timestamp


class RouteInfoManager:
    """The route tables and the operations the request processor needs (see the module notes)."""

    def __init__(self, clock: Callable[[], int] = now_ms) -> None:
        self.clock = clock
        self.topic_queue_table: JavaHashMap[str, JavaHashMap[str, QueueData]] = JavaHashMap(1024)
        self.broker_addr_table: JavaHashMap[str, BrokerEntry] = JavaHashMap(128)
        self.cluster_addr_table: JavaHashMap[str, JavaHashMap[str, None]] = JavaHashMap(32)
        self.broker_live_table: JavaHashMap[str, BrokerLiveInfo] = JavaHashMap(256)
        self.filter_server_table: JavaHashMap[str, tuple[str, ...]] = JavaHashMap(256)

    # ------------------------------------------------------------------ registration

    def register_broker(self, cluster_name: str, broker_addr: str, broker_name: str, broker_id: int,
                        ha_server_addr: str | None, data_version: DataVersion | None,
                        topic_configs: Iterable[TopicConfig] | None,
                        filter_server_list: Sequence[str] | None,
                        channel: object | None, *,
                        enable_acting_master: bool | None = None) -> RegisterBrokerResult:
        """``registerBroker``: record the broker, and its topics if it is a master whose data
        version changed (or that registers for the first time). ``enable_acting_master`` is the
        5.x header field (None from a 4.x broker)."""
        return run_steps(self.register_broker_steps(cluster_name, broker_addr, broker_name, broker_id,
                                                    ha_server_addr, data_version, topic_configs,
                                                    filter_server_list, channel,
                                                    enable_acting_master=enable_acting_master))

    def register_broker_steps(self, cluster_name: str, broker_addr: str, broker_name: str, broker_id: int,
                              ha_server_addr: str | None, data_version: DataVersion | None,
                              topic_configs: Iterable[TopicConfig] | None,
                              filter_server_list: Sequence[str] | None,
                              channel: object | None, *,
                              enable_acting_master: bool | None = None) -> Steps[RegisterBrokerResult]:
        """:meth:`register_broker` in steps of :data:`STEP_TOPICS` topic configs."""
        version = DataVersion(counter=data_version.counter, timestamp=data_version.timestamp) \
            if data_version is not None else DataVersion(counter=0, timestamp=0)
        names = self.cluster_addr_table.get(cluster_name)
        if names is None:
            names = self.cluster_addr_table[cluster_name] = JavaHashMap()
        names[broker_name] = None

        register_first = False
        entry = self.broker_addr_table.get(broker_name)
        if entry is None:
            register_first = True
            entry = BrokerEntry(cluster_name, broker_name, JavaHashMap())
            self.broker_addr_table[broker_name] = entry
        if enable_acting_master is not None:
            entry.enable_acting_master = enable_acting_master
        addrs = entry.broker_addrs
        # a slave switched to master re-registers the same address under id 0: one address,
        # one id (the comment in RouteInfoManager.registerBroker)
        for bid in list(addrs):
            if addrs[bid] == broker_addr and bid != broker_id:
                del addrs[bid]
        old_addr = addrs.get(broker_id)
        addrs[broker_id] = broker_addr
        register_first = register_first or old_addr is None

        if topic_configs is not None and broker_id == MASTER_ID:
            if self.is_broker_topic_config_changed(broker_addr, version) or register_first:
                yield from self._update_queue_datas(broker_name, topic_configs)

        if broker_addr not in self.broker_live_table:
            log.info("new broker registered: %s %s id %d in %s, HA %s", broker_name, broker_addr, broker_id,
                     cluster_name, ha_server_addr)
        self.broker_live_table[broker_addr] = BrokerLiveInfo(self.clock(), version, channel, ha_server_addr)

        if filter_server_list is not None:
            if not filter_server_list:
                self.filter_server_table.pop(broker_addr, None)
            else:
                self.filter_server_table[broker_addr] = tuple(filter_server_list)

        if broker_id != MASTER_ID:
            master_addr = addrs.get(MASTER_ID)
            if master_addr is not None:
                master = self.broker_live_table.get(master_addr)
                if master is not None:
                    return RegisterBrokerResult(master.ha_server_addr, master_addr)
        return RegisterBrokerResult()

    def _update_queue_datas(self, broker_name: str, configs: Iterable[TopicConfig]) -> Steps[None]:
        """``createAndUpdateQueueData`` for each config, in steps. The work per topic is kept
        small: equal queue data are one (immutable) object, and the broker name is hashed once."""
        name_hash = java_hash(broker_name)
        shared: dict[tuple[int, int, int, int], QueueData] = {}
        table = self.topic_queue_table
        for i, config in enumerate(configs, 1):
            shape = (config.read_queue_nums, config.write_queue_nums, config.perm, config.topic_sys_flag)
            queue_data = shared.get(shape)
            if queue_data is None:
                queue_data = shared[shape] = QueueData(
                    broker_name=broker_name, read_queue_nums=shape[0], write_queue_nums=shape[1],
                    perm=shape[2], topic_sys_flag=shape[3])
            topic = config.topic_name or ""
            datas = table.get(topic)
            if datas is None:
                datas = JavaHashMap()
                table[topic] = datas
            datas.put_hashed(broker_name, name_hash, queue_data)
            if not i % STEP_TOPICS:
                yield

    def is_broker_topic_config_changed(self, broker_addr: str, data_version: DataVersion | None) -> bool:
        prev = self.query_broker_topic_config(broker_addr)
        return prev is None or not _same_version(prev, data_version)

    def query_broker_topic_config(self, broker_addr: str) -> DataVersion | None:
        live = self.broker_live_table.get(broker_addr)
        return live.data_version if live is not None else None

    def update_broker_info_update_timestamp(self, broker_addr: str, timestamp: int) -> None:
        live = self.broker_live_table.get(broker_addr)
        if live is not None:
            live.last_update_timestamp = timestamp

    def unregister_broker(self, cluster_name: str, broker_addr: str, broker_name: str,
                          broker_id: int) -> None:
        """``unregisterBroker`` (UNREGISTER_BROKER, sent by a broker that shuts down)."""
        run_steps(self.unregister_broker_steps(cluster_name, broker_addr, broker_name, broker_id))

    def unregister_broker_steps(self, cluster_name: str, broker_addr: str, broker_name: str,
                                broker_id: int) -> Steps[None]:
        """:meth:`unregister_broker` in steps (the removal of the broker name's queue data)."""
        log.info("broker unregistered: %s %s id %d", broker_name, broker_addr, broker_id)
        self.broker_live_table.pop(broker_addr, None)
        self.filter_server_table.pop(broker_addr, None)
        remove_broker_name = False
        entry = self.broker_addr_table.get(broker_name)
        if entry is not None:
            entry.broker_addrs.pop(broker_id, None)
            if not entry.broker_addrs:
                del self.broker_addr_table[broker_name]
                remove_broker_name = True
        if remove_broker_name:
            names = self.cluster_addr_table.get(cluster_name)
            if names is not None:
                names.pop(broker_name, None)
                if not names:
                    del self.cluster_addr_table[cluster_name]
            yield from self._remove_topic_by_broker_name(broker_name)

    def _remove_topic_by_broker_name(self, broker_name: str | None) -> Steps[None]:
        topics = self.topic_queue_table
        for i, topic in enumerate(topics.keys_in_insertion_order(), 1):
            table = topics.get(topic)
            if table is not None:
                if broker_name is not None:
                    table.pop(broker_name, None)
                if not table:
                    del topics[topic]
            if not i % STEP_TOPICS:
                yield

    # ------------------------------------------------------------------ liveness

    def scan_not_active_broker(self, expired_ms: int) -> list[tuple[str, object | None]]:
        """``scanNotActiveBroker``: drop every broker whose last registration is older than
        ``expired_ms``; returns ``(address, channel)`` of each, so the caller closes the channels."""
        return run_steps(self.scan_not_active_broker_steps(expired_ms))

    def scan_not_active_broker_steps(self, expired_ms: int) -> Steps[list[tuple[str, object | None]]]:
        """:meth:`scan_not_active_broker` in steps."""
        removed: list[tuple[str, object | None]] = []
        now = self.clock()
        for addr, live in list(self.broker_live_table.items()):
            if live.last_update_timestamp + expired_ms < now:
                del self.broker_live_table[addr]
                removed.append((addr, live.channel))
                yield from self.on_channel_destroy_steps(addr, live.channel)
        return removed

    def on_channel_destroy(self, remote_addr: str, channel: object | None) -> None:
        """``onChannelDestroy``: a connection closed (or expired). The broker registered over it
        is found by the channel; failing that, ``remote_addr`` is taken as a broker address."""
        run_steps(self.on_channel_destroy_steps(remote_addr, channel))

    def on_channel_destroy_steps(self, remote_addr: str, channel: object | None) -> Steps[None]:
        """:meth:`on_channel_destroy` in steps (the removal of the broker name's queue data)."""
        found: str | None = None
        if channel is not None:
            for addr, live in self.broker_live_table.items():
                if live.channel is channel:
                    found = addr
                    break
        if found is None:
            found = remote_addr
        if not found:
            return
        if self.broker_live_table.pop(found, None) is not None:
            log.info("broker %s dropped: its connection closed", found)
        self.filter_server_table.pop(found, None)
        name_found: str | None = None
        remove_broker_name = False
        # the same walk as Java: stop at the broker name holding the address; an entry left
        # without addresses on the way is removed as well
        for name in list(self.broker_addr_table):
            if name_found is not None:
                break
            entry = self.broker_addr_table[name]
            for bid, addr in list(entry.broker_addrs.items()):
                if addr == found:
                    name_found = entry.broker_name
                    del entry.broker_addrs[bid]
                    break
            if not entry.broker_addrs:
                remove_broker_name = True
                del self.broker_addr_table[name]
        if name_found is not None and remove_broker_name:
            for cluster, names in list(self.cluster_addr_table.items()):
                if name_found in names:
                    del names[name_found]
                    if not names:
                        del self.cluster_addr_table[cluster]
                    break
        if remove_broker_name:
            yield from self._remove_topic_by_broker_name(name_found)

    # ------------------------------------------------------------------ admin changes

    def delete_topic(self, topic: str, cluster_name: str | None = None) -> None:
        """``deleteTopic``: the whole topic, or only its queues on the brokers of one cluster."""
        if cluster_name is None:
            self.topic_queue_table.pop(topic, None)
            return
        names = self.cluster_addr_table.get(cluster_name)
        if not names:
            return
        table = self.topic_queue_table.get(topic)
        if table is None:
            return
        for name in names:
            table.pop(name, None)
        if not table:
            del self.topic_queue_table[topic]

    def wipe_write_perm_of_broker(self, broker_name: str) -> int:
        """Clear the write permission of every topic on ``broker_name``; returns how many."""
        return run_steps(self.wipe_write_perm_of_broker_steps(broker_name))

    def wipe_write_perm_of_broker_steps(self, broker_name: str) -> Steps[int]:
        """:meth:`wipe_write_perm_of_broker` in steps."""
        return (yield from self._operate_write_perm(broker_name, lambda perm: perm & ~PERM_WRITE))

    def add_write_perm_of_broker(self, broker_name: str) -> int:
        """Give every topic on ``broker_name`` read and write permission (6); returns how many."""
        return run_steps(self.add_write_perm_of_broker_steps(broker_name))

    def add_write_perm_of_broker_steps(self, broker_name: str) -> Steps[int]:
        """:meth:`add_write_perm_of_broker` in steps."""
        return (yield from self._operate_write_perm(broker_name, lambda perm: PERM_READ | PERM_WRITE))

    def _operate_write_perm(self, broker_name: str, change: Callable[[int], int]) -> Steps[int]:
        count = 0
        topics = self.topic_queue_table
        for i, topic in enumerate(topics.keys_in_insertion_order(), 1):
            table = topics[topic]
            qd = table.get(broker_name)
            if qd is not None:
                table[broker_name] = replace(qd, perm=change(qd.perm))
                count += 1
            if not i % STEP_TOPICS:
                yield
        return count

    # ------------------------------------------------------------------ queries

    def pickup_topic_route_data(self, topic: str) -> TopicRouteData | None:
        """``pickupTopicRouteData``: the route of ``topic``, or None when it has no queue data or
        none of its broker names is known."""
        table = self.topic_queue_table.get(topic)
        if table is None:
            return None
        names: JavaHashMap[str, None] = JavaHashMap(items=((n, None) for n in table))
        broker_datas = []
        filter_servers: JavaHashMap[str, tuple[str, ...]] = JavaHashMap()
        for name in names:
            entry = self.broker_addr_table.get(name)
            if entry is None:
                continue
            broker_datas.append(entry.view())
            if self.filter_server_table:
                for addr in entry.broker_addrs.values():
                    servers = self.filter_server_table.get(addr)
                    if servers is not None:
                        filter_servers[addr] = servers
        if not broker_datas:
            return None
        return TopicRouteData(queue_datas=tuple(table.values()), broker_datas=tuple(broker_datas),
                              filter_server_table=dict(filter_servers.items()))

    def get_all_cluster_info(self) -> ClusterInfo:
        return ClusterInfo(
            broker_addr_table={name: entry.view() for name, entry in self.broker_addr_table.items()},
            cluster_addr_table={cluster: tuple(names) for cluster, names in self.cluster_addr_table.items()})

    def get_all_topic_list(self) -> TopicList:
        return _topic_list(self.topic_queue_table)

    def get_topics_by_cluster(self, cluster: str) -> TopicList:
        found: list[str] = []
        for name in self.cluster_addr_table.get(cluster) or ():
            found.extend(topic for topic, table in self.topic_queue_table.items() if name in table)
        return _topic_list(found)

    def get_system_topic_list(self) -> TopicList:
        """Cluster names and broker names (each broker has a topic of its name), plus one broker
        address (the first one found) for the admin tools to ask."""
        found: list[str] = []
        for cluster, names in self.cluster_addr_table.items():
            found.append(cluster)
            found.extend(names)
        broker_addr = None
        for entry in self.broker_addr_table.values():
            if entry.broker_addrs:
                broker_addr = next(iter(entry.broker_addrs.values()))
                break
        return replace(_topic_list(found), broker_addr=broker_addr)

    def get_unit_topics(self) -> TopicList:
        return self._topics_where(lambda flag: bool(flag & FLAG_UNIT))

    def get_has_unit_sub_topic_list(self) -> TopicList:
        return self._topics_where(lambda flag: bool(flag & FLAG_UNIT_SUB))

    def get_has_unit_sub_un_unit_topic_list(self) -> TopicList:
        return self._topics_where(lambda flag: not flag & FLAG_UNIT and bool(flag & FLAG_UNIT_SUB))

    def _topics_where(self, pick: Callable[[int], bool]) -> TopicList:
        # topicQueueTableIter: only the first queue data of each topic is looked at
        found = []
        for topic, table in self.topic_queue_table.items():
            for qd in table.values():
                if pick(qd.topic_sys_flag):
                    found.append(topic)
                break
        return _topic_list(found)


def _topic_list(topics: Iterable[str]) -> TopicList:
    # TopicList.topicList is a HashSet<String>: its order is the set's, not the source's
    seen: JavaHashMap[str, None] = JavaHashMap(items=((t, None) for t in topics))
    return TopicList(topic_list=tuple(seen))
