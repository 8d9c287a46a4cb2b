# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A slave's copy of its master's tables (``SlaveSynchronize.syncAll``), every 10 s.

Four requests go to the master's address as the name server gave it at registration
(``masterAddr``), one after the other, as in the captures: GET_ALL_TOPIC_CONFIG (21) on the VIP
channel (``MixAll.brokerVIPChannel``: port − 2), then GET_ALL_CONSUMER_OFFSET (43),
GET_ALL_DELAY_OFFSET (45) and GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) on the main port.

* Topics and subscription groups replace the slave's tables when their data version differs from
  the slave's (the version is copied too), and are persisted.
* Consumer offsets are merged into the slave's table (``putAll``) and persisted.
* The delay offsets are written to the slave's ``delayOffset.json`` as the master sent them; a slave
  runs no delayed delivery, it reads the file when it becomes a master.

A request that fails is logged and the others still run (each ``sync*`` catches its own error).
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import ConnectionPool, RemotingIOError
from wire.bodies import ConsumerOffsetSerializeWrapper, SubscriptionGroupWrapper, TopicConfigSerializeWrapper
from wire.errors import WireError

from ..files import string_to_file
from ._sock import split_host_port

if TYPE_CHECKING:
    from ..broker.broker import Broker

__all__ = ["SYNC_INITIAL_DELAY_S", "SYNC_PERIOD_S", "SlaveSynchronize", "vip_channel"]

log = logging.getLogger("reference_broker.ha")

#: ``handleSlaveSynchronize``: first after 3 s, then every 10 s
SYNC_INITIAL_DELAY_S = 3.0
SYNC_PERIOD_S = 10.0
#: ``BrokerOuterAPI.getAll*``: each request waits up to 3 s
SYNC_TIMEOUT_S = 3.0


def vip_channel(addr: str) -> str:
    """``MixAll.brokerVIPChannel(true, addr)``: the same host, port − 2."""
    host, port = split_host_port(addr)
    return f"{host}:{port - 2}"


class SlaveSynchronize:
    """Copies the master's topic, offset, delay-offset and group tables into a slave broker."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        #: the master's remoting address (from the registration answer); None: nothing to do
        self.master_addr: str | None = None
        self.rounds = 0
        self.failures = 0
        self._pool = ConnectionPool(timeout=SYNC_TIMEOUT_S, name="slave->master")

    async def close(self) -> None:
        await self._pool.close()

    async def _call(self, addr: str, code: RequestCode) -> bytes:
        conn = await self._pool.get(addr)
        resp = await conn.request(RemotingCommand(code=int(code)), timeout=SYNC_TIMEOUT_S)
        if resp.code != ResponseCode.SUCCESS:
            raise RemotingIOError(f"{code.name} to {addr} answered {resp.code_name}: {resp.remark}")
        return resp.body or b""

    async def sync_all(self) -> None:
        """``syncAll``: the four tables, in Java's order."""
        master = self.master_addr
        if master is None or master == self.broker.address:
            return
        self.rounds += 1
        for step in (self._sync_topics, self._sync_offsets, self._sync_delay_offsets, self._sync_groups):
            try:
                await step(master)
            except (RemotingIOError, OSError, WireError, ValueError) as exc:
                self.failures += 1
                log.error("%s from %s: %s", step.__name__.lstrip("_"), master, exc)
                if isinstance(exc, (RemotingIOError, OSError)):
                    for addr in (master, vip_channel(master)):
                        with contextlib.suppress(Exception):
                            self._pool.discard(addr)

    async def _sync_topics(self, master: str) -> None:
        wrapper = TopicConfigSerializeWrapper.decode(await self._call(vip_channel(master),
                                                                      RequestCode.GET_ALL_TOPIC_CONFIG))
        topics = self.broker.topics
        if wrapper.data_version is not None and wrapper.data_version != topics.data_version.body():
            topics.data_version.assign(wrapper.data_version)
            topics.table.clear()
            topics.table.update(wrapper.topic_config_table)
            topics.persist()
            log.info("Update slave topic config from master, %s", master)

    async def _sync_offsets(self, master: str) -> None:
        wrapper = ConsumerOffsetSerializeWrapper.decode(await self._call(master,
                                                                         RequestCode.GET_ALL_CONSUMER_OFFSET))
        offsets = self.broker.offsets
        offsets.table.update({k: dict(v) for k, v in wrapper.offset_table.items()})
        offsets.persist()
        log.info("Update slave consumer offset from master, %s", master)

    async def _sync_delay_offsets(self, master: str) -> None:
        body = await self._call(master, RequestCode.GET_ALL_DELAY_OFFSET)
        if body:
            text = body.decode("utf-8")
            schedule = self.broker.schedule
            try:
                string_to_file(text, schedule.path)
            except OSError as exc:
                log.error("Persist file Exception, %s: %s", schedule.path, exc)
            with contextlib.suppress(WireError, ValueError):
                schedule.decode(text)
        log.info("Update slave delay offset from master, %s", master)

    async def _sync_groups(self, master: str) -> None:
        wrapper = SubscriptionGroupWrapper.decode(await self._call(master,
                                                                   RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG))
        groups = self.broker.groups
        if wrapper.data_version is not None and wrapper.data_version != groups.data_version.body():
            groups.data_version.assign(wrapper.data_version)
            groups.table.clear()
            groups.table.update(wrapper.subscription_group_table)
            groups.persist()
            log.info("Update slave Subscription Group from master, %s", master)
