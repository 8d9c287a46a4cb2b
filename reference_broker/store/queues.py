# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Every consume queue of the store, and the queue offset each one's next put takes.

``DefaultMessageStore.consumeQueueTable`` (topic → queueId → :class:`~.consume_queue.ConsumeQueue`)
and ``CommitLog.topicQueueTable`` ((topic, queueId) → next queue offset) side by side: the put path
reads and advances the second, the dispatcher fills the first and keeps the second ahead of it,
recovery and truncation rebuild the second from the first.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from .consume_queue import ConsumeQueue

__all__ = ["QueueTable"]


class QueueTable:
    """The consume queues under ``consumequeue/`` and their next queue offsets."""

    def __init__(self, root: Path, file_size: int) -> None:
        self.root = root
        self.file_size = file_size
        self.by_topic: dict[str, dict[int, ConsumeQueue]] = {}
        #: (topic, queueId) → the queue offset the next ordinary put takes (``topicQueueTable``)
        self.next_offset: dict[tuple[str, int], int] = {}

    def load(self) -> None:
        """Open the queue directories on disk (``loadConsumeQueue``); names that are not queue
        ids are passed over."""
        if not self.root.is_dir():
            return
        for topic_dir in sorted(self.root.iterdir()):
            if not topic_dir.is_dir():
                continue
            for qdir in sorted(topic_dir.iterdir()):
                try:
                    qid = int(qdir.name)
                except ValueError:
                    continue
                cq = ConsumeQueue(topic_dir.name, qid, self.root, self.file_size)
                cq.load()
                self.by_topic.setdefault(topic_dir.name, {})[qid] = cq

    def __bool__(self) -> bool:
        return bool(self.by_topic)

    def all(self) -> list[ConsumeQueue]:
        return [cq for qs in self.by_topic.values() for cq in qs.values()]

    def find(self, topic: str, queue_id: int) -> ConsumeQueue | None:
        qs = self.by_topic.get(topic)
        return qs.get(queue_id) if qs is not None else None

    def find_or_create(self, topic: str, queue_id: int) -> ConsumeQueue:
        """``findConsumeQueue``: the queue, made (without files yet) when it is new."""
        qs = self.by_topic.setdefault(topic, {})
        cq = qs.get(queue_id)
        if cq is None:
            cq = qs[queue_id] = ConsumeQueue(topic, queue_id, self.root, self.file_size)
        return cq

    def topics(self) -> list[str]:
        return sorted(self.by_topic)

    def queue_ids(self, topic: str) -> list[int]:
        return sorted(self.by_topic.get(topic, {}))

    def reset_next_offsets(self) -> None:
        """Every next queue offset from the queue's end (``recoverTopicQueueTable``)."""
        self.next_offset = {(cq.topic, cq.queue_id): cq.max_offset for cq in self.all()}

    def delete_topic(self, topic: str) -> None:
        """Drop the topic's queues, files and next offsets (``deleteTopics``)."""
        qs = self.by_topic.pop(topic, None)
        if qs:
            for cq in qs.values():
                cq.destroy()
                self.next_offset.pop((topic, cq.queue_id), None)
        with contextlib.suppress(OSError):
            (self.root / topic).rmdir()

    def destroy(self) -> None:
        """Delete every queue (a store whose CommitLog is gone)."""
        for cq in self.all():
            cq.destroy()
        self.by_topic.clear()
        self.next_offset.clear()

    def close(self) -> None:
        for cq in self.all():
            cq.close()
