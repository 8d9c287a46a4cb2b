# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Small bodies and value types used across the protocol.

Sources (4.9.x under ``common/src/main/java/org/apache/rocketmq/common/``, 5.x mostly under
``remoting/src/main/java/org/apache/rocketmq/remoting/protocol/``): ``message/MessageQueue.java``,
``DataVersion.java``, ``protocol/body/KVTable.java``, ``protocol/body/TopicList.java``,
``protocol/body/GroupList.java``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from .. import fastjson
from ..errors import DecodeError
from ..fastjson import FrozenObject, java_string_order
from ._base import INT, LONG, STR, STR_LIST, STR_MAP, JsonBody, Kind, Seq, prop, type_error, utf8

__all__ = [
    "MESSAGE_QUEUE_KEY",
    "BrokerNameList",
    "DataVersion",
    "GroupList",
    "KVTable",
    "MessageQueue",
    "MessageQueueKey",
    "TopicList",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageQueue(JsonBody):
    """One queue of a topic on a broker (``MessageQueue``): ``{"brokerName","queueId","topic"}``.

    Hashable, so it can key ``offsetTable`` maps and fill ``mqSet`` sets.
    """

    topic: str | None = prop("topic", STR)
    broker_name: str | None = prop("brokerName", STR)
    queue_id: int = prop("queueId", INT, 0)


class MessageQueueKey(Kind):
    """A map keyed by :class:`MessageQueue` (``ConsumeStats``/``TopicStatsTable`` ``offsetTable``).

    fastjson writes the object itself as the key, ``{{"brokerName":"a","queueId":0,"topic":"T"}:…}``;
    with BrowserCompatible the key is a string holding that JSON text. Both are read.
    """

    __slots__ = ()
    expected = "a MessageQueue object key"

    def load(self, value: Any, path: str) -> Any:
        if isinstance(value, str):
            try:
                value = fastjson.loads(value, what=path)
            except DecodeError as err:
                err.field = path
                raise
        if isinstance(value, Mapping):
            return MessageQueue.from_json(value, path)
        raise type_error(path, self.expected, value)

    def dump(self, value: Any, std: bool) -> Any:
        return FrozenObject(value.to_json())

    def sort_key(self, value: Any) -> Any:
        # MessageQueue.compareTo: topic, then brokerName, then queueId
        if value.topic is None or value.broker_name is None:
            return None
        return (java_string_order(value.topic), java_string_order(value.broker_name), value.queue_id)


MESSAGE_QUEUE_KEY = MessageQueueKey()


@dataclass(frozen=True, slots=True, kw_only=True)
class DataVersion(JsonBody):
    """``DataVersion``: ``{"counter":3,"timestamp":…}``; 5.x adds ``stateVersion``.

    ``state_version`` is ``None`` for the 4.9.x shape (the property is not written).
    """

    counter: int = prop("counter", LONG, 0)
    timestamp: int = prop("timestamp", LONG, 0)
    state_version: int | None = prop("stateVersion", LONG)


@dataclass(frozen=True, slots=True, kw_only=True)
class KVTable(JsonBody):
    """``KVTable``: ``{"table":{…}}``, string to string (GET_BROKER_RUNTIME_INFO, REGISTER_BROKER reply)."""

    table: Mapping[str, str] = prop("table", STR_MAP, factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicList(JsonBody):
    """``TopicList``: ``{"topicList":[…]}`` and, from some brokers, ``brokerAddr``."""

    topic_list: tuple[str, ...] = prop("topicList", STR_LIST, ())
    broker_addr: str | None = prop("brokerAddr", STR)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupList(JsonBody):
    """``GroupList``: ``{"groupList":[…]}`` (QUERY_TOPIC_CONSUME_BY_WHO reply)."""

    group_list: tuple[str, ...] = prop("groupList", STR_LIST, ())


_NAMES = Seq(STR)


@dataclass(frozen=True, slots=True)
class BrokerNameList:
    """A bare JSON array of broker names: the CONTROLLER_GET_SYNC_STATE_DATA request body (5.x)."""

    names: tuple[str, ...] = ()

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview | str) -> Self:
        value = fastjson.loads(data, what="broker name list")
        return cls(tuple(_NAMES.load(value, "") or ()))

    def encode(self, *, standard: bool = False) -> bytes:
        return utf8(fastjson.dumps(list(self.names), standard=standard), "BrokerNameList")
