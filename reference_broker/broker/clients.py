# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Who is connected: consumer groups, producer groups and queue locks.

* :class:`ConsumerManager` (``ConsumerManager`` + ``ConsumerGroupInfo``): per group, the client
  channels that sent a heartbeat for it and the group's subscriptions. When a group's set of
  channels or of subscribed topics changes it calls ``notify(group, channels)``; the broker turns
  that into a oneway NOTIFY_CONSUMER_IDS_CHANGED to each channel
  (``DefaultConsumerIdsChangeListener``), so every client rebalances.
* :class:`ProducerManager`: per producer group, the channels that sent a heartbeat for it.
* :class:`RebalanceLockManager`: orderly consumers lock queues for ``lock_max_live_ms``
  (``rocketmq.broker.rebalance.lockMaxLiveTime``, 60 s); a lock not renewed in time can be taken.

A channel is any hashable object (the broker uses the connection); nothing here does I/O, so the
managers are tested without sockets. Channels idle for ``CHANNEL_EXPIRED_TIMEOUT_MS`` (120 s, the
``ClientHousekeepingService`` scan) are dropped by :meth:`ConsumerManager.scan_not_active` and
:meth:`ProducerManager.scan_not_active`.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from wire import LanguageCode
from wire.bodies import ConsumeFromWhere, ConsumeType, MessageModel, MessageQueue, SubscriptionData

__all__ = [
    "CHANNEL_EXPIRED_TIMEOUT_MS",
    "REBALANCE_LOCK_MAX_LIVE_TIME_MS",
    "ClientChannelInfo",
    "ConsumerGroupInfo",
    "ConsumerManager",
    "ProducerManager",
    "RebalanceLockManager",
]

log = logging.getLogger("reference_broker.broker")

#: ``ConsumerManager.CHANNEL_EXPIRED_TIMEOUT`` / ``ProducerManager.CHANNEL_EXPIRED_TIMEOUT``
CHANNEL_EXPIRED_TIMEOUT_MS = 120_000
#: ``RebalanceLockManager.REBALANCE_LOCK_MAX_LIVE_TIME``
REBALANCE_LOCK_MAX_LIVE_TIME_MS = 60_000


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


#: per heartbeat, the subscription changes logged one by one
_LOGGED_TOPICS = 8


@dataclass
class ClientChannelInfo:
    """``ClientChannelInfo``: one client connection as a heartbeat described it."""

    channel: Hashable
    client_id: str
    language: LanguageCode | int | str
    version: int
    #: the peer's ``ip:port`` (``RemotingHelper.parseChannelRemoteAddr``)
    addr: str = ""
    last_update: int = field(default_factory=_now_ms)


ConsumerNotify = Callable[[str, list[Hashable]], None]


@dataclass
class ConsumerGroupInfo:
    """``ConsumerGroupInfo``: the channels and subscriptions of one consumer group."""

    group: str
    consume_type: ConsumeType | int | str | None
    message_model: MessageModel | int | str | None
    consume_from_where: ConsumeFromWhere | int | str | None
    channels: dict[Hashable, ClientChannelInfo] = field(default_factory=dict)
    subscriptions: dict[str, SubscriptionData] = field(default_factory=dict)
    last_update: int = field(default_factory=_now_ms)

    def client_ids(self) -> list[str]:
        return [c.client_id for c in self.channels.values()]

    def find_channel(self, client_id: str) -> ClientChannelInfo | None:
        for c in self.channels.values():
            if c.client_id == client_id:
                return c
        return None

    def update_channel(
        self,
        info: ClientChannelInfo,
        consume_type: ConsumeType | int | str | None,
        message_model: MessageModel | int | str | None,
        consume_from_where: ConsumeFromWhere | int | str | None,
    ) -> bool:
        """``updateChannel``: True when the channel is new to the group."""
        self.consume_type = consume_type
        self.message_model = message_model
        self.consume_from_where = consume_from_where
        old = self.channels.get(info.channel)
        updated = False
        if old is None:
            self.channels[info.channel] = info
            log.info(
                "new consumer connected, group: %s %s %s channel: %s",
                self.group,
                consume_type,
                message_model,
                info.client_id,
            )
            updated = True
            old = info
        elif old.client_id != info.client_id:
            log.error(
                "[BUG] consumer channel exist in broker, but clientId not equal. GROUP: %s OLD: %s NEW: %s",
                self.group,
                old.client_id,
                info.client_id,
            )
            self.channels[info.channel] = info
            old = info
        self.last_update = _now_ms()
        old.last_update = self.last_update
        return updated

    def update_subscription(self, subs: Iterable[SubscriptionData]) -> bool:
        """``updateSubscription``: True when a topic was added or removed (a newer subVersion of
        a known topic replaces it without counting as a change, as in Java)."""
        added: list[str] = []
        wanted: set[str] = set()
        for sub in subs:
            topic = sub.topic or ""
            wanted.add(topic)
            old = self.subscriptions.get(topic)
            if old is None:
                self.subscriptions[topic] = sub
                added.append(topic)
            elif sub.sub_version > old.sub_version:
                self.subscriptions[topic] = sub
        removed = [t for t in self.subscriptions if t not in wanted]
        for topic in removed:
            del self.subscriptions[topic]
        # Java logs every topic; a heartbeat may carry thousands, so past a few the rest are counted
        # (one line each on the event loop would hold it up)
        for topic in added[:_LOGGED_TOPICS]:
            log.info("subscription changed, add new topic, group: %s %s", self.group, topic)
        for topic in removed[:_LOGGED_TOPICS]:
            log.warning("subscription changed, group: %s remove topic %s", self.group, topic)
        if len(added) > _LOGGED_TOPICS or len(removed) > _LOGGED_TOPICS:
            log.info("subscription changed, group: %s: %d topics added, %d removed in all", self.group,
                     len(added), len(removed))
        self.last_update = _now_ms()
        return bool(added or removed)


class ConsumerManager:
    """Consumer groups by name; ``notify`` is called with each group whose membership changed."""

    def __init__(
        self, notify: ConsumerNotify | None = None, expired_ms: int = CHANNEL_EXPIRED_TIMEOUT_MS
    ) -> None:
        self.groups: dict[str, ConsumerGroupInfo] = {}
        self.notify = notify
        self.expired_ms = expired_ms

    def _notify(self, group: str, info: ConsumerGroupInfo) -> None:
        if self.notify is not None:
            self.notify(group, list(info.channels))

    def get(self, group: str) -> ConsumerGroupInfo | None:
        return self.groups.get(group)

    def find_subscription(self, group: str, topic: str) -> SubscriptionData | None:
        info = self.groups.get(group)
        return info.subscriptions.get(topic) if info is not None else None

    def subscription_count(self, group: str) -> int:
        info = self.groups.get(group)
        return len(info.subscriptions) if info is not None else 0

    def register(
        self,
        group: str,
        info: ClientChannelInfo,
        consume_type: ConsumeType | int | str | None,
        message_model: MessageModel | int | str | None,
        consume_from_where: ConsumeFromWhere | int | str | None,
        subs: Iterable[SubscriptionData],
        notify_enabled: bool = True,
    ) -> bool:
        """``registerConsumer``: True when the group changed (new channel or topic set)."""
        g = self.groups.get(group)
        if g is None:
            g = self.groups[group] = ConsumerGroupInfo(group, consume_type, message_model, consume_from_where)
        r1 = g.update_channel(info, consume_type, message_model, consume_from_where)
        r2 = g.update_subscription(subs)
        if (r1 or r2) and notify_enabled:
            self._notify(group, g)
        return r1 or r2

    def unregister(self, group: str, channel: Hashable, notify_enabled: bool = True) -> None:
        """``unregisterConsumer``."""
        g = self.groups.get(group)
        if g is None:
            return
        if g.channels.pop(channel, None) is not None:
            log.info("unregister a consumer[%s] from consumerGroupInfo", group)
        if not g.channels:
            self.groups.pop(group, None)
            log.info("unregister consumer ok, no any connection, and remove consumer group, %s", group)
        if notify_enabled:
            self._notify(group, g)

    def channel_closed(self, channel: Hashable) -> list[str]:
        """``doChannelCloseEvent``: drop the channel from every group and notify those groups."""
        touched = []
        for group, g in list(self.groups.items()):
            if g.channels.pop(channel, None) is None:
                continue
            touched.append(group)
            log.warning(
                "NETTY EVENT: remove not active channel from ConsumerGroupInfo, consumer group: %s", group
            )
            if not g.channels:
                self.groups.pop(group, None)
                log.info("unregister consumer ok, no any connection, and remove consumer group, %s", group)
            self._notify(group, g)
        return touched

    def scan_not_active(self, now_ms: int | None = None) -> list[Hashable]:
        """``scanNotActiveChannel``: drop channels idle for longer than ``expired_ms``; returns
        them so that the caller closes them."""
        now = _now_ms() if now_ms is None else now_ms
        dropped: list[Hashable] = []
        for group, g in list(self.groups.items()):
            for ch, info in list(g.channels.items()):
                if now - info.last_update > self.expired_ms:
                    log.warning(
                        "SCAN: remove expired channel from ConsumerManager consumerTable. "
                        "channel=%s, consumerGroup=%s",
                        info.addr,
                        group,
                    )
                    del g.channels[ch]
                    dropped.append(ch)
            if not g.channels:
                log.warning(
                    "SCAN: remove expired channel from ConsumerManager consumerTable, all clear, "
                    "consumerGroup=%s",
                    group,
                )
                del self.groups[group]
        return dropped

    def topic_consumed_by(self, topic: str) -> set[str]:
        """``queryTopicConsumeByWho``."""
        return {name for name, g in self.groups.items() if topic in g.subscriptions}


class ProducerManager:
    """Producer group → {channel: info} (``ProducerManager.groupChannelTable``)."""

    def __init__(self, expired_ms: int = CHANNEL_EXPIRED_TIMEOUT_MS) -> None:
        self.groups: dict[str, dict[Hashable, ClientChannelInfo]] = {}
        self.expired_ms = expired_ms
        self._turn = random.randrange(1000)

    def register(self, group: str, info: ClientChannelInfo) -> None:
        table = self.groups.setdefault(group, {})
        old = table.get(info.channel)
        if old is None:
            table[info.channel] = info
            log.info("new producer connected, group: %s channel: %s", group, info.client_id)
        else:
            old.last_update = _now_ms()

    def available_channel(self, group: str) -> Any:
        """``getAvailableChannel``: one open channel of the group, taken in turn (None if none)."""
        table = self.groups.get(group)
        if not table:
            return None
        channels = list(table)
        self._turn = (self._turn + 1) % (2**31)
        start = self._turn % len(channels)
        for ch in channels[start:] + channels[:start]:
            if not getattr(ch, "is_closing", False):
                return ch
        return None

    def find_channel(self, client_id: str) -> Any:
        """``findChannel``: the open channel of the producer with this client id (None if none)."""
        for table in self.groups.values():
            for ch, info in table.items():
                if info.client_id == client_id and not getattr(ch, "is_closing", False):
                    return ch
        return None

    def unregister(self, group: str, channel: Hashable) -> None:
        table = self.groups.get(group)
        if table is not None and table.pop(channel, None) is not None:
            log.info("unregister a producer[%s] from groupChannelTable", group)
            if not table:
                del self.groups[group]

    def channel_closed(self, channel: Hashable) -> None:
        for group, table in list(self.groups.items()):
            if table.pop(channel, None) is not None:
                log.info(
                    "NETTY EVENT: remove channel from ProducerManager groupChannelTable, producer group: %s",
                    group,
                )
                if not table:
                    del self.groups[group]

    def scan_not_active(self, now_ms: int | None = None) -> list[Hashable]:
        now = _now_ms() if now_ms is None else now_ms
        dropped: list[Hashable] = []
        for group, table in list(self.groups.items()):
            for ch, info in list(table.items()):
                if now - info.last_update > self.expired_ms:
                    log.warning(
                        "SCAN: remove expired channel[%s] from ProducerManager groupChannelTable, "
                        "producer group name: %s",
                        info.addr,
                        group,
                    )
                    del table[ch]
                    dropped.append(ch)
            if not table:
                del self.groups[group]
        return dropped


@dataclass
class _LockEntry:
    client_id: str
    last_update: int


class RebalanceLockManager:
    """``RebalanceLockManager``: group → queue → the client holding it."""

    def __init__(self, lock_max_live_ms: int = REBALANCE_LOCK_MAX_LIVE_TIME_MS) -> None:
        self.lock_max_live_ms = lock_max_live_ms
        self.table: dict[str, dict[MessageQueue, _LockEntry]] = {}

    def _expired(self, e: _LockEntry, now: int) -> bool:
        return now - e.last_update > self.lock_max_live_ms

    def try_lock_batch(
        self, group: str, mqs: Iterable[MessageQueue], client_id: str, now_ms: int | None = None
    ) -> list[MessageQueue]:
        """``tryLockBatch``: the queues now held by ``client_id`` (renewed or newly taken)."""
        now = _now_ms() if now_ms is None else now_ms
        table = self.table.setdefault(group, {})
        locked: list[MessageQueue] = []
        for mq in mqs:
            e = table.get(mq)
            if e is None:
                table[mq] = _LockEntry(client_id, now)
                log.info(
                    "tryLockBatch, message queue not locked, I got it. Group: %s NewClientId: %s %s",
                    group,
                    client_id,
                    mq,
                )
                locked.append(mq)
            elif e.client_id == client_id and not self._expired(e, now):
                e.last_update = now
                locked.append(mq)
            elif self._expired(e, now):
                log.warning(
                    "tryLockBatch, message queue lock expired, I got it. Group: %s OldClientId: %s "
                    "NewClientId: %s %s",
                    group,
                    e.client_id,
                    client_id,
                    mq,
                )
                e.client_id = client_id
                e.last_update = now
                locked.append(mq)
            else:
                log.warning(
                    "tryLockBatch, message queue locked by other client. Group: %s OtherClientId: %s "
                    "NewClientId: %s %s",
                    group,
                    e.client_id,
                    client_id,
                    mq,
                )
        return locked

    def unlock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str) -> None:
        """``unlockBatch``: only the holder's locks are released."""
        table = self.table.get(group)
        if table is None:
            log.warning("unlockBatch, group not exist, Group: %s %s", group, client_id)
            return
        for mq in mqs:
            e = table.get(mq)
            if e is None:
                log.warning("unlockBatch, but mq not locked, Group: %s %s %s", group, mq, client_id)
            elif e.client_id == client_id:
                del table[mq]
                log.info("unlockBatch, Group: %s %s %s", group, mq, client_id)
            else:
                log.warning(
                    "unlockBatch, but mq locked by other client: %s, Group: %s %s %s",
                    e.client_id,
                    group,
                    mq,
                    client_id,
                )
