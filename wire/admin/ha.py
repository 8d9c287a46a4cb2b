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

import asyncio
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from ..aio import RemotingIOError
from ..bodies import HARuntimeInfo
from ..codes import RequestCode, ResponseCode
from ..errors import WireError
from .broker import targets
from .client import AdminClient, gather_map
from .common import MASTER_ID, Member, cluster_info, cluster_members, properties, runtime_table
from .errors import AdminError

__all__ = ["HA_SLAVE_FALLBEHIND_MAX", "HAClient", "HASlave", "HAStatus", "SlaveVerdict", "VerifyFile",
           "VerifyResult", "below_min_offset_problem", "build_ha_status", "ha_status", "ha_verify"]

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
    #: how long the slave has been behind, in ms (0: it holds all the master holds); None: not
    #: known (only the reference broker reports it, as ``lagMillis``)
    lag_ms: int | None = None
    #: where this slave's copy starts: the start of its transfer (reference broker,
    #: ``transferStart``) or its first CommitLog offset (4.x, from its runtime info); None: not known
    transfer_start: int | None = None
    #: why the slave cannot catch up, and what to do (its needed bytes are gone from the master)
    problem: str | None = None

    @property
    def progress(self) -> float | None:
        """How much of its copy the slave holds, 0..1 (None: where it started is not known)."""
        if self.transfer_start is None:
            return None
        end = self.ack_offset + self.diff
        if end <= self.transfer_start:
            return 1.0
        return max(0.0, min(1.0, (self.ack_offset - self.transfer_start) / (end - self.transfer_start)))


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
    #: the broker could not be reached or did not answer in time
    unreachable: bool = False


def build_ha_status(addr: str, info: HARuntimeInfo, broker_name: str | None = None,
                    broker_id: int | None = None) -> HAStatus:
    """The status of ``addr`` from its HARuntimeInfo."""
    if info.master:
        slaves = tuple(HASlave(c.addr or "", c.slave_ack_offset, c.diff,
                               c.transferred_byte_in_second / 1024.0, c.in_sync, c.transfer_from_where,
                               _int_or_none(c.extra.get("lagMillis")),
                               _int_or_none(c.extra.get("transferStart")),
                               _str_or_none(c.extra.get("problem")))
                       for c in info.ha_connection_info)
        return HAStatus(addr, broker_name, broker_id, True, True, info.master_commit_log_max_offset,
                        info.in_sync_slave_nums, slaves)
    c = info.ha_client_runtime_info
    client = None if c is None else HAClient(
        c.master_addr or "", c.max_offset, c.transferred_byte_in_second / 1024.0, c.last_read_timestamp,
        c.last_write_timestamp, c.master_flush_offset)
    return HAStatus(addr, broker_name, broker_id, True, False, client=client)


def _int_or_none(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str_or_none(v: object) -> str | None:
    return v if isinstance(v, str) else None


def below_min_offset_problem(slave_offset: int, master_min: int) -> str | None:
    """The operator's text for a slave whose CommitLog ends before the master's first offset
    (the master deleted what it needs: apache/rocketmq#3388), or None."""
    if 0 < slave_offset < master_min:
        return (f"the slave's CommitLog ends at {slave_offset}, before the master's first offset "
                f"{master_min}: the bytes it needs were deleted and it can never catch up. Stop the slave, "
                "move its store away and start it empty (it then copies from the master's last CommitLog "
                "file), or put the missing CommitLog files back on the master.")
    return None


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
            out.append(HAStatus(m.addr, name, bid, error=str(r), unreachable=isinstance(r, RemotingIOError)))
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

    def figure(addr: str, key: str) -> int | None:
        t = tables.get(addr)
        try:
            return int(t[key]) if isinstance(t, dict) else None
        except (KeyError, ValueError):
            return None

    def max_offset(addr: str) -> int | None:
        return figure(addr, "commitLogMaxOffset")

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
                first = figure(p.addr, "commitLogMinOffset")
                problem = below_min_offset_problem(theirs, figure(s.addr, "commitLogMinOffset") or 0)
                slaves.append(HASlave(p.addr, theirs, diff, None, diff < HA_SLAVE_FALLBEHIND_MAX, None,
                                      None, first if first is not None and first >= 0 else None, problem))
            out.append(HAStatus(s.addr, m.broker_name, m.broker_id, False, True, mine,
                                sum(1 for x in slaves if x.in_sync), tuple(slaves), source=SOURCE_RUNTIME))
        else:
            master = next((p.addr for p in peers if p.broker_id == MASTER_ID), "")
            out.append(HAStatus(s.addr, m.broker_name, m.broker_id, False, False,
                                client=HAClient(master, mine, None, None, None, None),
                                source=SOURCE_RUNTIME))
    return out


# ------------------------------------------------------------------------------------------ verify

@dataclass(frozen=True, slots=True)
class VerifyFile:
    """One CommitLog file's range both brokers hold, compared record by record."""

    #: the file's name (its start offset, 20 digits)
    name: str
    start: int
    end: int
    records: int
    master_crc: int
    slave_crc: int
    #: the first offset where the two differ (None: none)
    first_difference: int | None = None

    @property
    def match(self) -> bool:
        return self.first_difference is None and self.master_crc == self.slave_crc


@dataclass(frozen=True, slots=True)
class SlaveVerdict:
    """One slave against its master: CommitLog ends, and (on request) the bytes of the overlap."""

    addr: str
    broker_id: int
    master_min_offset: int | None = None
    master_max_offset: int | None = None
    slave_min_offset: int | None = None
    slave_max_offset: int | None = None
    #: filled when the bytes were compared
    files: tuple[VerifyFile, ...] = ()
    bytes_compared: int = 0
    error: str | None = None

    @property
    def diff(self) -> int | None:
        if self.master_max_offset is None or self.slave_max_offset is None:
            return None
        return self.master_max_offset - self.slave_max_offset

    @property
    def faithful(self) -> bool:
        """The slave ends where the master ends and every compared file matches."""
        return self.error is None and self.diff == 0 and all(f.match for f in self.files)


@dataclass(frozen=True, slots=True)
class VerifyResult:
    broker_name: str
    master_addr: str
    slaves: tuple[SlaveVerdict, ...]
    bytes_checked: bool

    @property
    def faithful(self) -> bool:
        return bool(self.slaves) and all(s.faithful for s in self.slaves)


ProgressFn = Callable[[int, int], None]


async def _record_at(client: AdminClient, addr: str, offset: int) -> bytes | None:
    """The stored record at ``offset`` (VIEW_MESSAGE_BY_ID, which reads raw CommitLog bytes at an
    offset); None where there is no record (a file's BLANK end, or past the data)."""
    resp = await client.call(addr, RequestCode.VIEW_MESSAGE_BY_ID, {"offset": offset},
                             ok=(ResponseCode.SUCCESS, ResponseCode.SYSTEM_ERROR))
    if resp.code != ResponseCode.SUCCESS or not resp.body or len(resp.body) < 4:
        return None
    size = int.from_bytes(resp.body[:4], "big", signed=True)
    return bytes(resp.body[:size]) if 0 < size <= len(resp.body) else None


async def _compare_range(client: AdminClient, master: str, slave: str, start: int, end: int, file_size: int,
                         progress: ProgressFn | None, done: list[int], total: int) -> list[VerifyFile]:
    """Walk ``[start, end)`` record by record on both brokers, a CRC32 per CommitLog file."""
    files: list[VerifyFile] = []
    at = start
    while at < end:
        file_start = at - at % file_size
        file_end = min(end, file_start + file_size)
        m_crc = s_crc = records = 0
        first_diff: int | None = None
        while at < file_end:
            mine, theirs = await asyncio.gather(_record_at(client, master, at), _record_at(client, slave, at))
            if mine is None:
                break  # the master's file ends here (BLANK): both continue at the next file
            m_crc = zlib.crc32(mine, m_crc)
            s_crc = zlib.crc32(theirs or b"", s_crc)
            if theirs != mine and first_diff is None:
                first_diff = at
            records += 1
            done[0] += len(mine)
            at += len(mine)
            if progress is not None and records % 256 == 0:
                progress(min(done[0], total), total)
        files.append(VerifyFile(f"{file_start:020d}", max(start, file_start), min(at, file_end), records,
                                m_crc, s_crc, first_diff))
        if at < file_start + file_size and at < end and first_diff is None:
            done[0] += file_start + file_size - at
        at = file_start + file_size
    if progress is not None:
        progress(total, total)
    return files


async def ha_verify(client: AdminClient, *, broker_name: str, check_bytes: bool = False,
                    progress: ProgressFn | None = None) -> VerifyResult:
    """Compare each slave of ``broker_name`` with its master: CommitLog ends (runtime info) and, with
    ``check_bytes``, every record of the range both hold, read with VIEW_MESSAGE_BY_ID from both
    (works on any 4.x or 5.x broker, Java's included), a CRC32 per CommitLog file."""
    info = await cluster_info(client)
    data = info.broker_addr_table.get(broker_name)
    if data is None or not data.broker_addrs:
        raise AdminError(f"no broker named {broker_name!r} in the name server's cluster info")
    addrs = dict(data.broker_addrs)
    master = addrs.get(MASTER_ID)
    if master is None:
        raise AdminError(f"{broker_name} has no master (brokerId 0) registered")
    slaves = sorted((bid, a) for bid, a in addrs.items() if bid != MASTER_ID)
    tables = await gather_map([master] + [a for _, a in slaves], lambda a: runtime_table(client, a))
    m_table = tables[0]
    if isinstance(m_table, Exception):
        raise m_table
    file_size = 0
    if check_bytes:
        config = await properties(client, master, RequestCode.GET_BROKER_CONFIG)
        file_size = int(config.get("mappedFileSizeCommitLog", str(1 << 30)))

    def offsets(t: dict[str, str]) -> tuple[int | None, int | None]:
        try:
            return int(t["commitLogMinOffset"]), int(t["commitLogMaxOffset"])
        except (KeyError, ValueError):
            return None, None

    m_min, m_max = offsets(m_table)
    out = []
    for (bid, addr), t in zip(slaves, tables[1:], strict=True):
        if isinstance(t, Exception):
            out.append(SlaveVerdict(addr, bid, m_min, m_max, error=str(t)))
            continue
        s_min, s_max = offsets(t)
        verdict = SlaveVerdict(addr, bid, m_min, m_max, s_min, s_max)
        if check_bytes and None not in (m_min, m_max, s_min, s_max):
            assert m_min is not None and m_max is not None and s_min is not None and s_max is not None
            start, end = max(m_min, s_min, 0), min(m_max, s_max)
            if end > start:
                files = await _compare_range(client, master, addr, start, end, file_size, progress, [0],
                                             end - start)
                verdict = SlaveVerdict(addr, bid, m_min, m_max, s_min, s_max, tuple(files), end - start)
        out.append(verdict)
    return VerifyResult(broker_name, master, tuple(out), check_bytes)
