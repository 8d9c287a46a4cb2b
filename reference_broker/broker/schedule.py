# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Delayed delivery (``ScheduleMessageService``) and its offsets file ``config/delayOffset.json``.

A message with the ``DELAY`` property (level n ≥ 1, capped at the number of ``messageDelayLevel``
entries) is stored in ``SCHEDULE_TOPIC_XXXX`` queue n−1 with its real topic and queue id in
``REAL_TOPIC``/``REAL_QID`` (the send path does that rewrite). One task per level reads its queue in
order: when a message's due time (store time + the level's delay) has come, the message is put
again under its real topic and queue, and the level's offset moves on. Java's
``correctDeliverTimestamp`` applies: a due time further away than one level delay from now
(a clock that went back) means "now".

The offsets are ``{"offsetTable":{level:offset}}`` (bare integer keys), persisted every
``flushDelayOffsetInterval`` ms and at shutdown, and served by GET_ALL_DELAY_OFFSET so that a
slave can take over delivery where the master left it. Delivery runs on a master only.

The service reads its queue through the store's typed lookup of a queue's message rather than
``get_messages``, so that its reads do not count as consumer traffic in the statistics.

A level's task outlives a bad turn, as Java's timer task does, and tries again after
``DELAY_FOR_A_PERIOD``: a failure it expects (``EXPECTED_FAILURES``: the store's own errors, a
disk's) is one error line; anything else is a bug of ours and is logged with its traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from wire.bodies import DelayOffsetSerializeWrapper
from wire.message import MessageConst, MessageSysFlag, StoredMessage
from wire.message.delay import delay_level_queue_id, deliver_timestamp

from ..periodic import log_failure, wait_event
from ..store import MessageStore, MessageToStore, PutResult, PutStatus, StoreError
from . import constants as C
from .configfile import ConfigFile
from .props import java_properties_text

__all__ = ["ScheduleMessageService", "delivered_message"]

log = logging.getLogger("reference_broker.broker")

#: ``ScheduleMessageService.DELAY_FOR_A_WHILE``: retry pause after a failed delivery
DELAY_FOR_A_WHILE_S = 0.1
#: ``ScheduleMessageService.DELAY_FOR_A_PERIOD``: retry pause after an unexpected error
DELAY_FOR_A_PERIOD_S = 10.0
#: an idle level re-checks its queue at least this often (the dispatch listener wakes it sooner)
IDLE_RECHECK_S = 1.0
#: what a level's turn may meet that is not a bug of ours: the store refused (closed, a file it
#: cannot use) or the disk failed; one error line each, a traceback for anything else
EXPECTED_FAILURES: tuple[type[Exception], ...] = (StoreError, OSError)
_HOST_V6 = int(MessageSysFlag.BORNHOST_V6_FLAG) | int(MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def delivered_message(msg: StoredMessage) -> MessageToStore | None:
    """``messageTimeup``: the message a scheduled one turns into when it is due, or None when it
    has no usable real topic (Java skips such records).

    The properties are written again from the stored message's (so ``DELAY``, ``REAL_TOPIC`` and
    ``REAL_QID`` stay in the stored string, as in Java, where they are cleared only afterwards
    in memory).
    """
    props = dict(msg.properties)
    real_topic = props.get(MessageConst.PROPERTY_REAL_TOPIC)
    qid_text = props.get(MessageConst.PROPERTY_REAL_QUEUE_ID)
    if not real_topic or qid_text is None:
        return None
    try:
        queue_id = int(qid_text)
    except ValueError:
        return None
    return MessageToStore(
        topic=real_topic,
        queue_id=queue_id,
        body=msg.body,
        born_timestamp=msg.born_timestamp,
        born_host=(msg.born_host.host, msg.born_host.port),
        flag=msg.flag,
        properties=java_properties_text(tuple(props), props),
        sys_flag=msg.sys_flag & ~_HOST_V6,
        reconsume_times=msg.reconsume_times,
    )


class ScheduleMessageService(ConfigFile):
    """Delay-level offsets and the delivery tasks; see the module docstring."""

    def __init__(self, path: Path, delay_levels_ms: list[int]) -> None:
        super().__init__(path)
        self.delay_levels_ms = list(delay_levels_ms)
        #: delay level (1-based) → the next queue offset to deliver
        self.offsets: dict[int, int] = {}
        self._store: MessageStore | None = None
        self._put: Callable[[MessageToStore], Awaitable[PutResult]] | None = None
        self._events: dict[int, asyncio.Event] = {}
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def max_delay_level(self) -> int:
        return len(self.delay_levels_ms)

    def delay_ms(self, level: int) -> int:
        return self.delay_levels_ms[level - 1]

    def encode(self) -> str:
        return DelayOffsetSerializeWrapper(offset_table=self.offsets).encode().decode("utf-8")

    def decode(self, text: str) -> None:
        self.offsets = dict(DelayOffsetSerializeWrapper.decode(text).offset_table)

    @property
    def running(self) -> bool:
        return bool(self._tasks)

    def start(self, store: MessageStore, put: Callable[[MessageToStore], Awaitable[PutResult]]) -> None:
        """Start one delivery task per level (on a master)."""
        if self._tasks:
            return
        self._store = store
        self._put = put
        for level in range(1, self.max_delay_level + 1):
            self._events[level] = asyncio.Event()
            self._tasks.append(asyncio.ensure_future(self._run_level(level)))

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for t in tasks:
            t.cancel()
        for t in tasks:
            # a level's task ends only when cancelled (it logs and survives anything else)
            with contextlib.suppress(asyncio.CancelledError):
                await t

    def notify(self, topic: str, queue_id: int, queue_offset: int, store_timestamp: int) -> None:
        """The store's dispatch listener: wake the level whose queue got a message."""
        if topic == C.RMQ_SYS_SCHEDULE_TOPIC:
            ev = self._events.get(queue_id + 1)
            if ev is not None:
                ev.set()

    async def _sleep(self, level: int, seconds: float) -> None:
        ev = self._events[level]
        ev.clear()
        await wait_event(ev, seconds)

    async def _run_level(self, level: int) -> None:
        while True:
            try:
                pause = self._step(level)
                if isinstance(pause, float):
                    await self._sleep(level, pause)
                elif not await pause:
                    await asyncio.sleep(DELAY_FOR_A_WHILE_S)
            except Exception as exc:  # mirrors DeliverDelayedMessageTimerTask.run: log, try again later
                log_failure(log, f"ScheduleMessageService, executeOnTimeup (level {level})", exc,
                            EXPECTED_FAILURES)
                await asyncio.sleep(DELAY_FOR_A_PERIOD_S)

    def _step(self, level: int) -> float | Awaitable[bool]:
        """One look at a level's queue: seconds to wait, or the delivery to await."""
        store = self._store
        assert store is not None
        qid = delay_level_queue_id(level)
        offset = self.offsets.get(level, 0)
        lo = store.min_offset(C.RMQ_SYS_SCHEDULE_TOPIC, qid)
        hi = store.max_offset(C.RMQ_SYS_SCHEDULE_TOPIC, qid)
        if offset < lo:
            log.error("schedule CQ offset invalid. offset=%d, cqMinOffset=%d, queueId=%d", offset, lo, qid)
            self.offsets[level] = offset = lo
        if offset >= hi:
            return IDLE_RECHECK_S
        stored = store.queue_message(C.RMQ_SYS_SCHEDULE_TOPIC, qid, offset)
        if stored is None:
            # mirrors executeOnTimeup: a unit whose record is gone (or unreadable) is passed over
            log.warning("schedule queue %d offset %d: no readable record, skipped", qid, offset)
            self.offsets[level] = offset + 1
            return 0.0
        now = _now_ms()
        due = deliver_timestamp(level, stored.store_timestamp, self.delay_levels_ms)
        if due > now + self.delay_ms(level):  # mirrors correctDeliverTimestamp
            due = now
        if due > now:
            return (due - now) / 1000.0
        msg = delivered_message(stored)
        if msg is None or msg.topic == C.RMQ_SYS_TRANS_HALF_TOPIC:
            log.error("[BUG] the real topic of schedule msg at offset %d is unusable, discard it", offset)
            self.offsets[level] = offset + 1
            return 0.0
        return self._deliver(level, offset, msg)

    async def _deliver(self, level: int, offset: int, msg: MessageToStore) -> bool:
        assert self._put is not None
        result = await self._put(msg)
        # mirrors syncDeliver: only PUT_OK moves the offset on; anything else is retried
        if result.status is PutStatus.PUT_OK:
            self.offsets[level] = offset + 1
            return True
        log.warning(
            "ScheduleMessageService, a message time up, but reput it failed, topic: %s msgId %s status %s",
            msg.topic,
            result.msg_id,
            result.status.name,
        )
        return False

    def due_count(self) -> int:
        """Messages waiting in the schedule queues (for tests and runtime info)."""
        store = self._store
        if store is None:
            return 0
        return sum(
            max(0, store.max_offset(C.RMQ_SYS_SCHEDULE_TOPIC, lv - 1) - self.offsets.get(lv, 0))
            for lv in range(1, self.max_delay_level + 1)
        )
