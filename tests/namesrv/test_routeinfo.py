# Licensed under the Apache License, Version 2.0. See LICENSE.
"""RouteInfoManager on its own: registration, liveness, removal, admin changes, queries."""

from __future__ import annotations

from reference_broker.namesrv import RouteInfoManager
from wire.bodies import DataVersion, QueueData, TopicConfig

MASTER, SLAVE = "10.0.0.1:10911", "10.0.0.2:10911"


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def topics(*specs: tuple[str, int]) -> list[TopicConfig]:
    return [TopicConfig(topic_name=name, read_queue_nums=n, write_queue_nums=n, perm=6) for name, n in specs]


def register(rm: RouteInfoManager, addr: str, broker_id: int, *, name: str = "broker-a",
             cluster: str = "DefaultCluster", counter: int = 1, configs=None, channel=None, filters=()):
    return rm.register_broker(cluster, addr, name, broker_id, addr.replace("10911", "10912"),
                              DataVersion(counter=counter, timestamp=counter), configs or [], filters,
                              channel)


def test_master_then_slave_registration_and_the_slave_answer() -> None:
    rm = RouteInfoManager(Clock())
    first = register(rm, MASTER, 0, configs=topics(("T", 4)))
    assert first.master_addr is None and first.ha_server_addr is None
    answer = register(rm, SLAVE, 1, configs=topics(("T", 8), ("OnlySlave", 1)))
    assert answer.master_addr == MASTER and answer.ha_server_addr == "10.0.0.1:10912"
    # only a master's topic configs become queue data
    assert list(rm.topic_queue_table) == ["T"]
    route = rm.pickup_topic_route_data("T")
    assert route is not None
    assert route.queue_datas == (QueueData(broker_name="broker-a", read_queue_nums=4, write_queue_nums=4,
                                           perm=6, topic_sys_flag=0),)
    assert dict(route.broker_datas[0].broker_addrs) == {0: MASTER, 1: SLAVE}
    assert rm.pickup_topic_route_data("OnlySlave") is None


def test_slave_before_its_master_gets_no_master_address() -> None:
    rm = RouteInfoManager(Clock())
    assert register(rm, SLAVE, 1).master_addr is None


def test_topics_change_only_with_a_new_data_version() -> None:
    rm = RouteInfoManager(Clock())
    register(rm, MASTER, 0, counter=1, configs=topics(("T", 4)))
    register(rm, MASTER, 0, counter=1, configs=topics(("T", 16), ("New", 1)))
    assert rm.topic_queue_table["T"]["broker-a"].read_queue_nums == 4 and "New" not in rm.topic_queue_table
    register(rm, MASTER, 0, counter=2, configs=topics(("T", 16), ("New", 1)))
    assert rm.topic_queue_table["T"]["broker-a"].read_queue_nums == 16 and "New" in rm.topic_queue_table


def test_same_address_under_a_new_id_replaces_the_old_id() -> None:
    # a slave promoted to master re-registers its address as id 0
    rm = RouteInfoManager(Clock())
    register(rm, SLAVE, 1)
    register(rm, SLAVE, 0, counter=2)
    assert dict(rm.broker_addr_table["broker-a"].broker_addrs) == {0: SLAVE}


def test_expiry_drops_silent_brokers_and_returns_their_channels() -> None:
    clock = Clock()
    rm = RouteInfoManager(clock)
    m_chan, s_chan = object(), object()
    register(rm, MASTER, 0, configs=topics(("T", 4)), channel=m_chan)
    clock.now += 100
    register(rm, SLAVE, 1, channel=s_chan)
    clock.now += 900
    assert rm.scan_not_active_broker(1000) == []  # the master's last registration is exactly 1000 ms old
    clock.now += 1
    assert rm.scan_not_active_broker(1000) == [(MASTER, m_chan)]
    # the slave keeps the broker name, its cluster and the topic listed
    assert dict(rm.broker_addr_table["broker-a"].broker_addrs) == {1: SLAVE}
    assert "T" in rm.topic_queue_table and list(rm.cluster_addr_table) == ["DefaultCluster"]
    clock.now += 100
    assert rm.scan_not_active_broker(1000) == [(SLAVE, s_chan)]
    assert not rm.broker_addr_table and not rm.cluster_addr_table and not rm.topic_queue_table


def test_query_data_version_refresh_keeps_a_broker_alive() -> None:
    clock = Clock()
    rm = RouteInfoManager(clock)
    register(rm, MASTER, 0, counter=5)
    assert not rm.is_broker_topic_config_changed(MASTER, DataVersion(counter=5, timestamp=5))
    assert rm.is_broker_topic_config_changed(MASTER, DataVersion(counter=6, timestamp=5))
    clock.now += 5000
    rm.update_broker_info_update_timestamp(MASTER, clock.now)
    clock.now += 500
    assert rm.scan_not_active_broker(1000) == []


def test_channel_destroy_removes_the_broker_of_that_channel_only() -> None:
    rm = RouteInfoManager(Clock())
    m_chan, s_chan, client = object(), object(), object()
    register(rm, MASTER, 0, configs=topics(("T", 4)), channel=m_chan)
    register(rm, SLAVE, 1, channel=s_chan)
    rm.on_channel_destroy("127.0.0.1:50000", client)  # a client connection: nothing to drop
    assert len(rm.broker_live_table) == 2
    rm.on_channel_destroy("10.0.0.1:40000", m_chan)
    assert list(rm.broker_live_table) == [SLAVE]
    assert dict(rm.broker_addr_table["broker-a"].broker_addrs) == {1: SLAVE}
    route = rm.pickup_topic_route_data("T")
    assert route is not None and dict(route.broker_datas[0].broker_addrs) == {1: SLAVE}
    rm.on_channel_destroy("10.0.0.2:40001", s_chan)
    assert rm.pickup_topic_route_data("T") is None and not rm.cluster_addr_table


def test_channel_destroy_falls_back_to_the_remote_address() -> None:
    # scanNotActiveBroker removes the live entry first and then looks the broker up by address
    rm = RouteInfoManager(Clock())
    register(rm, MASTER, 0, configs=topics(("T", 4)), channel=object())
    rm.on_channel_destroy(MASTER, object())
    assert not rm.broker_addr_table and not rm.topic_queue_table


def test_unregister_keeps_other_broker_names_of_the_cluster() -> None:
    rm = RouteInfoManager(Clock())
    register(rm, MASTER, 0, configs=topics(("T", 4)))
    register(rm, "10.0.0.3:10911", 0, name="broker-b", configs=topics(("T", 2), ("B", 1)))
    rm.unregister_broker("DefaultCluster", MASTER, "broker-a", 0)
    assert list(rm.cluster_addr_table["DefaultCluster"]) == ["broker-b"]
    assert list(rm.topic_queue_table["T"]) == ["broker-b"]
    rm.unregister_broker("DefaultCluster", "10.0.0.3:10911", "broker-b", 0)
    assert not rm.cluster_addr_table and not rm.topic_queue_table and not rm.broker_live_table


def test_filter_servers_follow_the_registration() -> None:
    rm = RouteInfoManager(Clock())
    register(rm, MASTER, 0, configs=topics(("T", 4)), filters=("10.0.0.1:30000",))
    route = rm.pickup_topic_route_data("T")
    assert route is not None and dict(route.filter_server_table) == {MASTER: ("10.0.0.1:30000",)}
    register(rm, MASTER, 0, filters=())
    route = rm.pickup_topic_route_data("T")
    assert route is not None and dict(route.filter_server_table) == {}


def test_delete_topic_everywhere_or_in_one_cluster() -> None:
    rm = RouteInfoManager(Clock())
    register(rm, MASTER, 0, configs=topics(("T", 4), ("U", 1)))
    register(rm, "10.0.0.9:10911", 0, name="broker-x", cluster="Other", configs=topics(("T", 4)))
    rm.delete_topic("T", "DefaultCluster")
    assert list(rm.topic_queue_table["T"]) == ["broker-x"]
    rm.delete_topic("T", "NoSuchCluster")
    assert "T" in rm.topic_queue_table
    rm.delete_topic("T", "Other")
    assert "T" not in rm.topic_queue_table
    rm.delete_topic("U")
    assert not rm.topic_queue_table


def test_wipe_and_add_write_permission() -> None:
    rm = RouteInfoManager(Clock())
    register(rm, MASTER, 0, configs=[*topics(("T", 4), ("U", 1)),
                                     TopicConfig(topic_name="RO", perm=4), TopicConfig(topic_name="Inh", perm=7)])
    assert rm.wipe_write_perm_of_broker("broker-a") == 4
    assert {t: q["broker-a"].perm for t, q in rm.topic_queue_table.items()} == {"T": 4, "U": 4, "RO": 4, "Inh": 5}
    assert rm.add_write_perm_of_broker("broker-a") == 4
    # ADD sets read+write outright (PermName.PERM_READ | PERM_WRITE), dropping INHERIT
    assert {q["broker-a"].perm for q in rm.topic_queue_table.values()} == {6}
    assert rm.wipe_write_perm_of_broker("nobody") == 0


def test_lists() -> None:
    rm = RouteInfoManager(Clock())
    register(rm, MASTER, 0, configs=[*topics(("T", 4)), TopicConfig(topic_name="Unit", topic_sys_flag=1),
                                     TopicConfig(topic_name="Sub", topic_sys_flag=2),
                                     TopicConfig(topic_name="Both", topic_sys_flag=3)])
    register(rm, SLAVE, 1)
    register(rm, "10.0.0.9:10911", 0, name="broker-x", cluster="Other", configs=topics(("X", 1)))
    assert set(rm.get_all_topic_list().topic_list) == {"T", "Unit", "Sub", "Both", "X"}
    assert set(rm.get_topics_by_cluster("DefaultCluster").topic_list) == {"T", "Unit", "Sub", "Both"}
    assert rm.get_topics_by_cluster("NoSuchCluster").topic_list == ()
    system = rm.get_system_topic_list()
    assert set(system.topic_list) == {"DefaultCluster", "broker-a", "Other", "broker-x"}
    assert system.broker_addr in (MASTER, "10.0.0.9:10911")
    assert set(rm.get_unit_topics().topic_list) == {"Unit", "Both"}
    assert set(rm.get_has_unit_sub_topic_list().topic_list) == {"Sub", "Both"}
    assert set(rm.get_has_unit_sub_un_unit_topic_list().topic_list) == {"Sub"}
    info = rm.get_all_cluster_info()
    assert {c: set(n) for c, n in info.cluster_addr_table.items()} == {
        "DefaultCluster": {"broker-a"}, "Other": {"broker-x"}}
    assert dict(info.broker_addr_table["broker-a"].broker_addrs) == {0: MASTER, 1: SLAVE}


def test_route_copies_do_not_change_with_the_tables() -> None:
    rm = RouteInfoManager(Clock())
    register(rm, MASTER, 0, configs=topics(("T", 4)))
    route = rm.pickup_topic_route_data("T")
    register(rm, SLAVE, 1)
    assert route is not None and dict(route.broker_datas[0].broker_addrs) == {0: MASTER}
