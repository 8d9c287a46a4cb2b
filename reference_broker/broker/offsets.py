# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Committed consumer offsets (``ConsumerOffsetManager``), persisted as ``config/consumerOffset.json``.

Keys are ``topic@group``; each holds queue id → next offset to consume. The file (and the
GET_ALL_CONSUMER_OFFSET body) is ``{"offsetTable":{"T@g":{0:12,1:7}}}`` with bare integer keys.
Java persists it every ``flushConsumerOffsetInterval`` ms and at shutdown; commits only touch
memory.
"""

from __future__ import annotations

from pathlib import Path

from wire.bodies import ConsumerOffsetSerializeWrapper

from .configfile import ConfigFile

__all__ = ["TOPIC_GROUP_SEPARATOR", "ConsumerOffsetManager"]

TOPIC_GROUP_SEPARATOR = "@"


class ConsumerOffsetManager(ConfigFile):
    """``topic@group`` → {queue id: offset}."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.table: dict[str, dict[int, int]] = {}

    def commit(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        """``commitOffset``."""
        key = topic + TOPIC_GROUP_SEPARATOR + group
        m = self.table.get(key)
        if m is None:
            self.table[key] = {queue_id: offset}
        else:
            m[queue_id] = offset

    def query(self, group: str, topic: str, queue_id: int) -> int:
        """``queryOffset``: the committed offset, or -1."""
        m = self.table.get(topic + TOPIC_GROUP_SEPARATOR + group)
        if m is not None:
            v = m.get(queue_id)
            if v is not None:
                return v
        return -1

    def _split(self) -> list[tuple[str, str, str]]:
        out = []
        for key in self.table:
            parts = key.split(TOPIC_GROUP_SEPARATOR)
            if len(parts) == 2:
                out.append((key, parts[0], parts[1]))
        return out

    def topics_of_group(self, group: str) -> set[str]:
        """``whichTopicByConsumer``."""
        return {t for _, t, g in self._split() if g == group}

    def groups_of_topic(self, topic: str) -> set[str]:
        """``whichGroupByTopic``."""
        return {g for _, t, g in self._split() if t == topic}

    def remove_group(self, group: str) -> None:
        """``removeOffset``."""
        for key, _, g in self._split():
            if g == group:
                del self.table[key]

    def remove_topic(self, topic: str) -> None:
        for key, t, _ in self._split():
            if t == topic:
                del self.table[key]

    def encode(self) -> str:
        return ConsumerOffsetSerializeWrapper(offset_table=self.table).encode().decode("utf-8")

    def decode(self, text: str) -> None:
        wrapper = ConsumerOffsetSerializeWrapper.decode(text)
        self.table = {k: dict(v) for k, v in wrapper.offset_table.items()}
