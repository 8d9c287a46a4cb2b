# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Replication status: GET_BROKER_HA_STATUS (907, RocketMQ 5.x) from one broker or a cluster.

Mirrors mqadmin ``haStatus`` (``HAStatusSubCommand``): a master reports its commit-log max offset
and one entry per slave connection (acknowledged offset, how far behind, transfer speed, in
sync or not); a slave reports its HA client (master address, its own max offset, speed, last
read and write). A 4.x broker does not know the code and answers REQUEST_CODE_NOT_SUPPORTED; that
broker is reported as not supporting it rather than failing the whole command. With a cluster,
every broker process is asked (mqadmin asks the masters only), all at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from wire.bodies import HARuntimeInfo
from wire.codes import RequestCode, ResponseCode

from .broker import targets
from .client import AdminClient, gather_map

__all__ = ["HAClient", "HASlave", "HAStatus", "build_ha_status", "ha_status"]


@dataclass(frozen=True, slots=True)
class HASlave:
    """One slave connection of a master."""

    addr: str
    ack_offset: int
    diff: int
    #: ``transferredByteInSecond`` / 1024
    transfer_kb_s: float
    in_sync: bool
    transfer_from_where: int


@dataclass(frozen=True, slots=True)
class HAClient:
    """A slave's replication client."""

    master_addr: str
    max_offset: int
    transfer_kb_s: float
    last_read_timestamp: int
    last_write_timestamp: int
    master_flush_offset: int


@dataclass(frozen=True, slots=True)
class HAStatus:
    addr: str
    broker_name: str | None = None
    broker_id: int | None = None
    #: False: the broker answered REQUEST_CODE_NOT_SUPPORTED (a 4.x broker)
    supported: bool = True
    master: bool | None = None
    master_commit_log_max_offset: int | None = None
    in_sync_slave_nums: int | None = None
    slaves: tuple[HASlave, ...] = ()
    client: HAClient | None = None
    error: str | None = None


def build_ha_status(addr: str, info: HARuntimeInfo, broker_name: str | None = None,
                    broker_id: int | None = None) -> HAStatus:
    """The status of ``addr`` from its HARuntimeInfo."""
    if info.master:
        slaves = tuple(HASlave(c.addr or "", c.slave_ack_offset, c.diff,
                               c.transferred_byte_in_second / 1024.0, c.in_sync, c.transfer_from_where)
                       for c in info.ha_connection_info)
        return HAStatus(addr, broker_name, broker_id, True, True, info.master_commit_log_max_offset,
                        info.in_sync_slave_nums, slaves)
    c = info.ha_client_runtime_info
    client = None if c is None else HAClient(
        c.master_addr or "", c.max_offset, c.transferred_byte_in_second / 1024.0, c.last_read_timestamp,
        c.last_write_timestamp, c.master_flush_offset)
    return HAStatus(addr, broker_name, broker_id, True, False, client=client)


async def ha_status(client: AdminClient, *, broker: str | None = None,
                    cluster: str | None = None) -> tuple[HAStatus, ...]:
    """GET_BROKER_HA_STATUS (907) from the broker, or from every broker of the cluster at once."""
    members = await targets(client, broker=broker, cluster=cluster)

    async def one(addr: str) -> HARuntimeInfo | str:
        resp = await client.call(addr, RequestCode.GET_BROKER_HA_STATUS,
                                 ok=(ResponseCode.SUCCESS, ResponseCode.REQUEST_CODE_NOT_SUPPORTED))
        if resp.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED:
            return f"broker {addr} does not support HA status (4.x)"
        return HARuntimeInfo.decode(resp.body or b"{}")

    results = await gather_map([m.addr for m in members], one)
    out = []
    for m, r in zip(members, results, strict=True):
        name = m.broker_name or None
        bid = m.broker_id if m.broker_id >= 0 else None
        if isinstance(r, HARuntimeInfo):
            out.append(build_ha_status(m.addr, r, name, bid))
        elif isinstance(r, str):
            out.append(HAStatus(m.addr, name, bid, supported=False, error=r))
        else:
            if broker is not None:
                raise r
            out.append(HAStatus(m.addr, name, bid, error=str(r)))
    return tuple(out)
