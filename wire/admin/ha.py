# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Replication status: GET_BROKER_HA_STATUS (907, RocketMQ 5.x) from one broker or a cluster.

Mirrors mqadmin ``haStatus`` (``HAStatusSubCommand``): a master reports its commit-log max offset
and one entry per slave connection (acknowledged offset, how far behind, transfer speed, in
sync or not); a slave reports its HA client (master address, its own max offset, speed, last
read and write). With a cluster, every broker process is asked (mqadmin asks the masters only),
all at once.

A 4.x broker does not know the code and answers REQUEST_CODE_NOT_SUPPORTED; mqadmin has no
haStatus for it. Where the name server lists the broker, its status is then put together from
what 4.x does tell: the commit-log max offset of every process of its broker name
(GET_BROKER_RUNTIME_INFO, ``commitLogMaxOffset``), compared master against slave. A slave counts
as in sync while it is less than ``haSlaveFallbehindMax`` (256 MiB by default) behind, the test
4.x's ``HAService.isSlaveOK`` applies. Such a status says so in ``source``; the figures only the
HA service knows (transfer speed, HA addresses, read/write times) are left empty.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..aio import RemotingIOError
from ..bodies import HARuntimeInfo
from ..codes import RequestCode, ResponseCode
from ..errors import WireError
from .broker import targets
from .client import AdminClient, gather_map
from .common import MASTER_ID, Member, cluster_info, cluster_members, runtime_table
from .errors import AdminError

__all__ = ["HA_SLAVE_FALLBEHIND_MAX", "HAClient", "HASlave", "HAStatus", "build_ha_status", "ha_status"]

#: 4.x ``MessageStoreConfig.haSlaveFallbehindMax``: how far behind a slave may be and still be OK
HA_SLAVE_FALLBEHIND_MAX = 256 * 1024 * 1024
SOURCE_HA = "GET_BROKER_HA_STATUS"
SOURCE_RUNTIME = "GET_BROKER_RUNTIME_INFO"


@dataclass(frozen=True, slots=True)
class HASlave:
    """One slave connection of a master."""

    addr: str
    ack_offset: int
    diff: int
    #: ``transferredByteInSecond`` / 1024 (None: not known, a 4.x broker)
    transfer_kb_s: float | None
    in_sync: bool
    transfer_from_where: int | None


@dataclass(frozen=True, slots=True)
class HAClient:
    """A slave's replication client."""

    #: the master's HA address (5.x), or its broker address (a 4.x broker, from the cluster info)
    master_addr: str
    max_offset: int
    #: None: not known (a 4.x broker)
    transfer_kb_s: float | None
    last_read_timestamp: int | None
    last_write_timestamp: int | None
    master_flush_offset: int | None


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
    #: the request the figures come from: GET_BROKER_HA_STATUS, or GET_BROKER_RUNTIME_INFO for a
    #: 4.x broker (offsets compared across its broker name)
    source: str = SOURCE_HA


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
    """GET_BROKER_HA_STATUS (907) from the broker, or from every broker of the cluster at once;
    for 4.x brokers, the status put together from runtime info (see the module's text)."""
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
    if any(not s.supported for s in out):
        out = await _from_runtime_info(client, out, members if cluster is not None else None)
    return tuple(out)


async def _from_runtime_info(client: AdminClient, statuses: list[HAStatus],
                             members: list[Member] | None) -> list[HAStatus]:
    """The statuses of 4.x brokers (``supported`` False) from their broker names' runtime info."""
    if members is None:  # one broker by address: find its broker name in the cluster info
        try:
            members = cluster_members(await cluster_info(client), None)
        except (AdminError, RemotingIOError, WireError):  # the 4.x answer stands as it is
            return statuses
    by_addr = {m.addr: m for m in members}
    wanted = {by_addr[s.addr].broker_name for s in statuses if not s.supported and s.addr in by_addr}
    group = [m for m in members if m.broker_name in wanted]
    if not group:
        return statuses
    addrs = list(dict.fromkeys(m.addr for m in group))
    tables = dict(zip(addrs, await gather_map(addrs, lambda a: runtime_table(client, a)), strict=True))

    def max_offset(addr: str) -> int | None:
        t = tables.get(addr)
        try:
            return int(t["commitLogMaxOffset"]) if isinstance(t, dict) else None
        except (KeyError, ValueError):
            return None

    out = []
    for s in statuses:
        m = by_addr.get(s.addr)
        if s.supported or m is None:
            out.append(s)
            continue
        mine = max_offset(s.addr)
        if mine is None:
            t = tables.get(s.addr)
            why = str(t) if isinstance(t, Exception) else "no commitLogMaxOffset in its runtime info"
            out.append(HAStatus(s.addr, m.broker_name, m.broker_id, supported=False,
                                error=f"{s.error}; runtime info: {why}"))
            continue
        peers = sorted((p for p in group if p.broker_name == m.broker_name and p.addr != s.addr),
                       key=lambda p: p.broker_id)
        if m.broker_id == MASTER_ID:
            slaves = []
            for p in peers:
                theirs = max_offset(p.addr)
                if theirs is None or p.broker_id == MASTER_ID:
                    continue
                diff = max(0, mine - theirs)
                slaves.append(HASlave(p.addr, theirs, diff, None, diff < HA_SLAVE_FALLBEHIND_MAX, None))
            out.append(HAStatus(s.addr, m.broker_name, m.broker_id, False, True, mine,
                                sum(1 for x in slaves if x.in_sync), tuple(slaves), source=SOURCE_RUNTIME))
        else:
            master = next((p.addr for p in peers if p.broker_id == MASTER_ID), "")
            out.append(HAStatus(s.addr, m.broker_name, m.broker_id, False, False,
                                client=HAClient(master, mine, None, None, None, None),
                                source=SOURCE_RUNTIME))
    return out
