# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The broker's topic table (``TopicConfigManager``), persisted as ``config/topics.json``.

At construction the table holds the topics the 4.9.8 constructor creates: SELF_TEST_TOPIC,
TBW102 (only with ``autoCreateTopicEnable``; perm 7 so that new topics inherit from it),
BenchmarkTest, the cluster-name and broker-name topics, OFFSET_MOVED_EVENT, SCHEDULE_TOPIC_XXXX
(18 queues), the trace topic (only with ``traceTopicEnable``) and ``<cluster>_REPLY_TOPIC``. Loading
the file then overlays what was persisted (``putAll``) and takes its data version.

Every change moves the :class:`DataVersion` on and persists the file, as Java does; the caller
re-registers with the name servers where Java does (the methods say when).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from wire.bodies import DataVersion as DataVersionBody
from wire.bodies import KVTable, TopicConfig, TopicConfigSerializeWrapper, TopicFilterType

from ..config import BrokerConfig
from . import constants as C
from .configfile import ConfigFile

__all__ = ["DataVersion", "TopicConfigManager", "topic_config_to_string"]

log = logging.getLogger("reference_broker.broker")

#: ``TopicConfigManager.SCHEDULE_TOPIC_QUEUE_NUM``
SCHEDULE_TOPIC_QUEUE_NUM = 18


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class DataVersion:
    """``DataVersion``: a counter and the time of its last change."""

    __slots__ = ("counter", "timestamp")

    def __init__(self, counter: int = 0, timestamp: int | None = None) -> None:
        self.counter = counter
        self.timestamp = _now_ms() if timestamp is None else timestamp

    def next_version(self) -> None:
        self.timestamp = _now_ms()
        self.counter += 1

    def assign(self, other: DataVersionBody | None) -> None:
        if other is not None:
            self.counter = other.counter
            self.timestamp = other.timestamp

    def body(self) -> DataVersionBody:
        return DataVersionBody(counter=self.counter, timestamp=self.timestamp)

    def to_json(self) -> str:
        """The DataVersion JSON, e.g. GET_BROKER_CONFIG's ``version`` ext field."""
        return self.body().encode().decode("utf-8")


def topic_config_to_string(tc: TopicConfig) -> str:
    """``TopicConfig.toString`` (quoted in some of Java's error remarks)."""
    kind = tc.topic_filter_type
    kind_text = kind.name if isinstance(kind, TopicFilterType) else str(kind)
    return (
        f"TopicConfig [topicName={tc.topic_name}, readQueueNums={tc.read_queue_nums}, "
        f"writeQueueNums={tc.write_queue_nums}, perm={C.perm_to_string(tc.perm)}, "
        f"topicFilterType={kind_text}, topicSysFlag={tc.topic_sys_flag}, order={str(tc.order).lower()}]"
    )


def _topic(name: str, *, queues: int = 16, perm: int = C.PERM_READ | C.PERM_WRITE) -> TopicConfig:
    return TopicConfig(topic_name=name, read_queue_nums=queues, write_queue_nums=queues, perm=perm)


class TopicConfigManager(ConfigFile):
    """The topic table with its data version; see the module docstring."""

    def __init__(self, config: BrokerConfig, path: Path | None = None) -> None:
        super().__init__(path or config.store_root / "config" / "topics.json")
        self.config = config
        self.table: dict[str, TopicConfig] = {}
        self.data_version = DataVersion()
        #: every topic Java counts as a system topic (``TopicValidator.SYSTEM_TOPIC_SET``)
        self.system_topics: set[str] = {
            C.AUTO_CREATE_TOPIC_KEY_TOPIC,
            C.RMQ_SYS_SCHEDULE_TOPIC,
            C.RMQ_SYS_BENCHMARK_TOPIC,
            C.RMQ_SYS_TRANS_HALF_TOPIC,
            C.RMQ_SYS_TRACE_TOPIC,
            C.RMQ_SYS_TRANS_OP_HALF_TOPIC,
            C.RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
            C.RMQ_SYS_SELF_TEST_TOPIC,
            C.RMQ_SYS_OFFSET_MOVED_EVENT,
        }
        self._system(_topic(C.RMQ_SYS_SELF_TEST_TOPIC, queues=1))
        if config.auto_create_topic:
            n = config.default_topic_queue_nums
            self._system(
                _topic(
                    C.AUTO_CREATE_TOPIC_KEY_TOPIC, queues=n, perm=C.PERM_INHERIT | C.PERM_READ | C.PERM_WRITE
                )
            )
        self._system(_topic(C.RMQ_SYS_BENCHMARK_TOPIC, queues=1024))
        cluster_perm = C.PERM_INHERIT | (
            C.PERM_READ | C.PERM_WRITE if config.bool("clusterTopicEnable") else 0
        )
        self._system(_topic(config.cluster_name, perm=cluster_perm))
        broker_perm = C.PERM_INHERIT | (C.PERM_READ | C.PERM_WRITE if config.bool("brokerTopicEnable") else 0)
        self._system(_topic(config.broker_name, queues=1, perm=broker_perm))
        self._system(_topic(C.RMQ_SYS_OFFSET_MOVED_EVENT, queues=1))
        self._system(_topic(C.RMQ_SYS_SCHEDULE_TOPIC, queues=SCHEDULE_TOPIC_QUEUE_NUM))
        if config.bool("traceTopicEnable"):
            self._system(_topic(config.get("msgTraceTopicName"), queues=1))
        self._system(_topic(f"{config.cluster_name}_{C.REPLY_TOPIC_POSTFIX}", queues=1))

    def _system(self, tc: TopicConfig) -> None:
        assert tc.topic_name is not None
        self.system_topics.add(tc.topic_name)
        self.table[tc.topic_name] = tc

    # ------------------------------------------------------------------ queries

    def select(self, topic: str) -> TopicConfig | None:
        return self.table.get(topic)

    def is_system_topic(self, topic: str) -> bool:
        """``TopicValidator.isSystemTopic``."""
        return topic in self.system_topics or topic.startswith(C.SYSTEM_TOPIC_PREFIX)

    def is_order_topic(self, topic: str) -> bool:
        tc = self.table.get(topic)
        return tc is not None and tc.order

    def wrapper(self) -> TopicConfigSerializeWrapper:
        """``buildTopicConfigSerializeWrapper``: the table and its data version."""
        return TopicConfigSerializeWrapper(
            topic_config_table=dict(self.table), data_version=self.data_version.body()
        )

    # ------------------------------------------------------------------ changes

    def _changed(self) -> None:
        self.data_version.next_version()
        self.persist()

    def create_in_send(
        self, topic: str, default_topic: str, remote: str, client_queue_nums: int, topic_sys_flag: int
    ) -> tuple[TopicConfig | None, bool]:
        """``createTopicInSendMessageMethod``: a topic that does not exist yet is made from the
        default topic when that one may be inherited. Returns the config and whether it is new
        (Java then re-registers with the name servers, oneway)."""
        tc = self.table.get(topic)
        if tc is not None:
            return tc, False
        default = self.table.get(default_topic)
        if default is None:
            log.warning(
                "Create new topic failed, because the default topic[%s] not exist. producer:[%s]",
                default_topic,
                remote,
            )
            return None, False
        if default_topic == C.AUTO_CREATE_TOPIC_KEY_TOPIC and not self.config.auto_create_topic:
            # mirrors Java: a TBW102 left over from a run with auto-creation loses its inherit bit
            default = replace(default, perm=C.PERM_READ | C.PERM_WRITE)
            self.table[default_topic] = default
        if not C.is_inherited(default.perm):
            log.warning(
                "Create new topic failed, because the default topic[%s] has no perm [%d] producer:[%s]",
                default_topic,
                default.perm,
                remote,
            )
            return None, False
        queues = max(0, min(client_queue_nums, default.write_queue_nums))
        tc = TopicConfig(
            topic_name=topic,
            read_queue_nums=queues,
            write_queue_nums=queues,
            perm=default.perm & ~C.PERM_INHERIT,
            topic_filter_type=default.topic_filter_type,
            topic_sys_flag=topic_sys_flag,
        )
        log.info(
            "Create new topic by default topic:[%s] config:[%s] producer:[%s]",
            default_topic,
            topic_config_to_string(tc),
            remote,
        )
        self.table[topic] = tc
        self._changed()
        return tc, True

    def create_in_send_back(
        self, topic: str, queue_nums: int, perm: int, topic_sys_flag: int
    ) -> tuple[TopicConfig, bool]:
        """``createTopicInSendMessageBackMethod`` (retry and DLQ topics). Returns the config and
        whether it is new (Java then re-registers with the name servers, oneway)."""
        tc = self.table.get(topic)
        if tc is not None:
            return tc, False
        tc = TopicConfig(
            topic_name=topic,
            read_queue_nums=queue_nums,
            write_queue_nums=queue_nums,
            perm=perm,
            topic_sys_flag=topic_sys_flag,
        )
        log.info("create new topic %s", topic_config_to_string(tc))
        self.table[topic] = tc
        self._changed()
        return tc, True

    def update(self, tc: TopicConfig) -> None:
        """``updateTopicConfig`` (UPDATE_AND_CREATE_TOPIC)."""
        assert tc.topic_name is not None
        old = self.table.get(tc.topic_name)
        self.table[tc.topic_name] = tc
        log.info(
            "%s topic config %s", "update" if old is not None else "create new", topic_config_to_string(tc)
        )
        self._changed()

    def delete(self, topic: str) -> bool:
        """``deleteTopicConfig``."""
        if self.table.pop(topic, None) is None:
            log.warning("delete topic config failed, topic: %s not exists", topic)
            return False
        self._changed()
        return True

    def update_order_topic_config(self, order_topics: KVTable | None) -> None:
        """``updateOrderTopicConfig``: the name server's ORDER_TOPIC_CONFIG names the order topics."""
        if order_topics is None:
            return
        names = set(order_topics.table)
        changed = False
        for name, tc in list(self.table.items()):
            want = name in names
            if tc.order != want:
                self.table[name] = replace(tc, order=want)
                changed = True
        if changed:
            self._changed()

    # ------------------------------------------------------------------ file

    def encode(self) -> str:
        return self.wrapper().encode().decode("utf-8")

    def decode(self, text: str) -> None:
        wrapper = TopicConfigSerializeWrapper.decode(text)
        table: Mapping[str, TopicConfig] = wrapper.topic_config_table
        self.table.update(table)
        self.data_version.assign(wrapper.data_version)
