# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The broker's calls to the name servers (``BrokerOuterAPI``).

REGISTER_BROKER goes to every name server at once (``registerBrokerAll``): the header names the
broker (cluster, name, id, ``ip:port``, HA address) and carries ``compressed`` and ``bodyCrc32``
(CRC32 of the body & 0x7FFFFFFF, ``UtilAll.crc32``); the body is a ``RegisterBrokerBody`` holding the
topic table and its data version, plain JSON or the compressed form. A name server that cannot be
reached or answers an error is logged and skipped: registration never fails the broker. Oneway
registrations (after a topic is created on the fly) expect no answer. UNREGISTER_BROKER goes to
each name server in turn at shutdown.

One connection per name server is kept open and reopened when it closes, as Java's
``NettyRemotingClient`` keeps one channel per address.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from dataclasses import dataclass

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import ConnectionPool, RemotingConnection, RemotingIOError
from wire.bodies import DataVersion as DataVersionBody
from wire.bodies import KVTable, RegisterBrokerBody, TopicConfigSerializeWrapper
from wire.errors import WireError
from wire.headers import (
    QueryDataVersionRequestHeader,
    QueryDataVersionResponseHeader,
    RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader,
    UnRegisterBrokerRequestHeader,
    request,
)

__all__ = ["BrokerIdentity", "BrokerOuterAPI", "RegisterBrokerResult"]

log = logging.getLogger("reference_broker.broker")


@dataclass(frozen=True)
class BrokerIdentity:
    """What REGISTER_BROKER / UNREGISTER_BROKER say about the broker."""

    cluster_name: str
    broker_name: str
    broker_id: int
    broker_addr: str
    ha_server_addr: str
    #: ``enableSlaveActingMaster``, which a 5.x broker (ours in controller mode) sends as
    #: ``enableActingMaster``; None: a 4.x registration, without the field
    enable_acting_master: bool | None = None


@dataclass(frozen=True)
class RegisterBrokerResult:
    """``RegisterBrokerResult``: a name server's answer."""

    namesrv: str
    master_addr: str | None
    ha_server_addr: str | None
    kv_table: KVTable | None


class BrokerOuterAPI:
    """Connections to the name servers and the requests the broker sends them."""

    def __init__(self, namesrv_addrs: list[str], *, timeout_ms: int = 6000) -> None:
        self.namesrv_addrs = list(namesrv_addrs)
        self.timeout_ms = timeout_ms
        self._pool = ConnectionPool(timeout=timeout_ms / 1000, name="broker->namesrv")

    async def _connection(self, addr: str) -> RemotingConnection:
        return await self._pool.get(addr)

    @staticmethod
    def build_register(
        identity: BrokerIdentity, topics: TopicConfigSerializeWrapper, *, compressed: bool = False
    ) -> tuple[RegisterBrokerRequestHeader, bytes]:
        """The REGISTER_BROKER header and body (``registerBrokerAll``)."""
        body = RegisterBrokerBody(topic_config_serialize_wrapper=topics, filter_server_list=()).encode(
            compressed=compressed
        )
        header = RegisterBrokerRequestHeader(
            broker_name=identity.broker_name,
            broker_addr=identity.broker_addr,
            cluster_name=identity.cluster_name,
            ha_server_addr=identity.ha_server_addr,
            broker_id=identity.broker_id,
            compressed=compressed,
            enable_acting_master=identity.enable_acting_master,
            body_crc32=zlib.crc32(body) & 0x7FFFFFFF,
        )
        return header, body

    async def register_broker_all(
        self,
        identity: BrokerIdentity,
        topics: TopicConfigSerializeWrapper,
        *,
        oneway: bool = False,
        compressed: bool = False,
    ) -> list[RegisterBrokerResult]:
        """Register with every name server concurrently; the answers that came back in time."""
        if not self.namesrv_addrs:
            return []
        header, body = self.build_register(identity, topics, compressed=compressed)
        cmd = request(RequestCode.REGISTER_BROKER, header, body)
        results = await asyncio.gather(*(self._register_one(a, cmd, oneway) for a in self.namesrv_addrs))
        return [r for r in results if r is not None]

    async def _register_one(
        self, addr: str, cmd: RemotingCommand, oneway: bool
    ) -> RegisterBrokerResult | None:
        try:
            conn = await self._connection(addr)
            if oneway:
                conn.oneway(cmd)
                return None
            response = await conn.request(cmd, timeout=self.timeout_ms / 1000)
        except (RemotingIOError, OSError) as exc:
            log.warning("registerBroker Exception, %s: %s", addr, exc)
            return None
        if response.code != ResponseCode.SUCCESS:
            log.warning("registerBroker to %s answered %s: %s", addr, response.code_name, response.remark)
            return None
        try:
            rh = RegisterBrokerResponseHeader.from_ext(response.ext_fields)
            kv = KVTable.decode(response.body) if response.body else None
        except WireError as exc:
            log.warning("registerBroker: cannot read the answer of %s: %s", addr, exc)
            return None
        log.info("register broker to name server %s OK", addr)
        return RegisterBrokerResult(addr, rh.master_addr, rh.ha_server_addr, kv)

    async def need_register(self, identity: BrokerIdentity, topics: TopicConfigSerializeWrapper) -> bool:
        """``needRegister``: QUERY_DATA_VERSION (322) to every name server with the topic table's data
        version; True when one says it changed, answers with another version, or cannot be asked."""
        if not self.namesrv_addrs:
            return False
        header = QueryDataVersionRequestHeader(
            broker_name=identity.broker_name, broker_addr=identity.broker_addr,
            cluster_name=identity.cluster_name, broker_id=identity.broker_id)
        ours = topics.data_version
        body = ours.encode() if ours is not None else b""
        cmd = request(RequestCode.QUERY_DATA_VERSION, header, body)

        async def ask(addr: str) -> bool:
            try:
                conn = await self._connection(addr)
                response = await conn.request(cmd, timeout=self.timeout_ms / 1000)
            except (RemotingIOError, OSError) as exc:
                log.error("Query data version from name server %s Exception, %s", addr, exc)
                return True
            if response.code != ResponseCode.SUCCESS:
                return False
            try:
                changed = QueryDataVersionResponseHeader.from_ext(response.ext_fields).changed
                if response.body and DataVersionBody.decode(response.body) != ours:
                    changed = True
            except WireError:
                return True
            return changed is None or bool(changed)

        return any(await asyncio.gather(*(ask(a) for a in self.namesrv_addrs)))

    async def unregister_broker_all(self, identity: BrokerIdentity) -> None:
        """UNREGISTER_BROKER to each name server in turn (``unregisterBrokerAll``)."""
        header = UnRegisterBrokerRequestHeader(
            broker_name=identity.broker_name,
            broker_addr=identity.broker_addr,
            cluster_name=identity.cluster_name,
            broker_id=identity.broker_id,
        )
        for addr in self.namesrv_addrs:
            try:
                conn = await self._connection(addr)
                response = await conn.request(request(RequestCode.UNREGISTER_BROKER, header), timeout=3.0)
                if response.code == ResponseCode.SUCCESS:
                    log.info("unregisterBroker OK, NamesrvAddr: %s", addr)
                else:
                    log.warning(
                        "unregisterBroker %s answered %s: %s", addr, response.code_name, response.remark
                    )
            except (RemotingIOError, OSError) as exc:
                log.warning("unregisterBroker Exception, %s: %s", addr, exc)

    async def close(self) -> None:
        await self._pool.close()
