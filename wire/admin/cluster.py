# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``cluster list``: GET_BROKER_CLUSTER_INFO, then GET_BROKER_RUNTIME_INFO from every broker at once.

The values follow mqadmin ``clusterList`` (``ClusterListSubCommand.printClusterBaseInfo`` and
``printClusterMoreStats``, 4.9.x and 5.x), with three differences on purpose:

* OutTPS reads the 5.x key ``getTransferredTps`` and falls back to the 4.x spelling
  ``getTransferedTps``; a 5.x mqadmin reads only the former and shows 0.00 for 4.x brokers.
* The runtime tables are fetched concurrently rather than one broker after the other.
* ``hours`` is ``None`` when the broker reports no earliest message (``earliestMessageTimeStamp``
  of -1 or 0): mqadmin subtracts -1 from the current time and prints the age of the epoch.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from ..bodies import ClusterInfo
from ..errors import WireError
from .client import AdminClient, gather_map
from .common import Member, cluster_info, cluster_members, runtime_table
from .errors import AdminError, BadRequest, NotFound

__all__ = ["BrokerRT", "BrokerRow", "ClusterList", "TimerProgress", "build_cluster_list", "cluster_list",
           "cluster_rt"]


@dataclass(frozen=True, slots=True)
class TimerProgress:
    """The 5.x timer-message columns (``#Timer(Progress)``)."""

    read_behind: int
    offset_behind: int
    congest_num: int
    enqueue_tps: float
    dequeue_tps: float


@dataclass(frozen=True, slots=True)
class BrokerRow:
    """One broker process and the figures mqadmin shows for it."""

    cluster: str
    broker_name: str
    broker_id: int
    addr: str
    version: str | None = None
    #: ``None`` only where the broker did not answer (then every figure is ``None``)
    in_tps: float | None = None
    send_queue_size: int | None = None
    send_queue_wait_ms: int | None = None
    out_tps: float | None = None
    pull_queue_size: int | None = None
    pull_queue_wait_ms: int | None = None
    #: 5.1+ (POP consumption): the ack thread pool's queue, shown after the pull pool's
    ack_queue_size: int | None = None
    ack_queue_wait_ms: int | None = None
    page_cache_lock_ms: int | None = None
    earliest_message_timestamp: int | None = None
    hours: float | None = None
    commit_log_disk_ratio: float | None = None
    #: 5.x ``brokerActive``; ``None`` for a 4.x broker
    activated: bool | None = None
    #: 5.x timer figures; ``None`` for a 4.x broker
    timer: TimerProgress | None = None
    in_total_yesterday: int | None = None
    out_total_yesterday: int | None = None
    in_total_today: int | None = None
    out_total_today: int | None = None
    #: why the runtime table could not be read (the other figures are then ``None``)
    error: str | None = None
    #: the broker could not be reached or did not answer in time (``error`` says which)
    unreachable: bool = False


@dataclass(frozen=True, slots=True)
class ClusterList:
    brokers: tuple[BrokerRow, ...]

    @property
    def has_5x(self) -> bool:
        """Whether any broker reports the 5.x figures (``#Timer`` and ``#ACTIVATED`` columns)."""
        return any(b.activated is not None for b in self.brokers)


def _first_float(text: str | None) -> float | None:
    # mirrors printClusterBaseInfo: the first space-separated value of a TPS string
    if not text:
        return None
    try:
        return float(text.split()[0])
    except (ValueError, IndexError):
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip()) if text is not None else None
    except ValueError:
        return None


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def _diff(table: Mapping[str, str], a: str, b: str) -> int | None:
    x, y = _int(table.get(a)), _int(table.get(b))
    return None if x is None or y is None else x - y


def _timer(table: Mapping[str, str]) -> TimerProgress | None:
    if "timerReadBehind" not in table and "brokerActive" not in table:
        return None
    # mirrors printClusterBaseInfo: any unparsable timer figure leaves them all at zero
    try:
        return TimerProgress(int(table["timerReadBehind"]), int(table["timerOffsetBehind"]),
                             int(table["timerCongestNum"]), float(table["timerEnqueueTps"]),
                             float(table["timerDequeueTps"]))
    except (KeyError, ValueError):
        return TimerProgress(0, 0, 0, 0.0, 0.0)


def broker_row(member: Member, table: Mapping[str, str] | Exception, now_ms: int) -> BrokerRow:
    """The row for one broker from its runtime table (or the error that replaced it)."""
    if isinstance(table, Exception):
        from ..aio import RemotingIOError

        return BrokerRow(member.cluster, member.broker_name, member.broker_id, member.addr,
                         error=str(table), unreachable=isinstance(table, RemotingIOError))
    earliest = _int(table.get("earliestMessageTimeStamp"))
    hours = (now_ms - earliest) / 3_600_000 if earliest is not None and earliest > 0 else None
    active = table.get("brokerActive")
    out = table.get("getTransferredTps")
    if out is None:
        out = table.get("getTransferedTps")
    return BrokerRow(
        member.cluster, member.broker_name, member.broker_id, member.addr,
        version=table.get("brokerVersionDesc"),
        in_tps=_first_float(table.get("putTps")) or 0.0,
        send_queue_size=_int(table.get("sendThreadPoolQueueSize")),
        send_queue_wait_ms=_int(table.get("sendThreadPoolQueueHeadWaitTimeMills")),
        out_tps=_first_float(out) or 0.0,
        pull_queue_size=_int(table.get("pullThreadPoolQueueSize")),
        pull_queue_wait_ms=_int(table.get("pullThreadPoolQueueHeadWaitTimeMills")),
        ack_queue_size=_int(table.get("ackThreadPoolQueueSize")),
        ack_queue_wait_ms=_int(table.get("ackThreadPoolQueueHeadWaitTimeMills")),
        page_cache_lock_ms=_int(table.get("pageCacheLockTimeMills")),
        earliest_message_timestamp=earliest,
        hours=hours,
        commit_log_disk_ratio=_float(table.get("commitLogDiskRatio")),
        activated=None if active is None else active.strip().lower() == "true",
        timer=_timer(table),
        in_total_yesterday=_diff(table, "msgPutTotalTodayMorning", "msgPutTotalYesterdayMorning"),
        out_total_yesterday=_diff(table, "msgGetTotalTodayMorning", "msgGetTotalYesterdayMorning"),
        in_total_today=_diff(table, "msgPutTotalTodayNow", "msgPutTotalTodayMorning"),
        out_total_today=_diff(table, "msgGetTotalTodayNow", "msgGetTotalTodayMorning"),
    )


def build_cluster_list(info: ClusterInfo, tables: Mapping[str, Mapping[str, str] | Exception], *,
                       cluster: str | None = None, now_ms: int | None = None) -> ClusterList:
    """The cluster list from a ClusterInfo and the runtime tables keyed by broker address."""
    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    rows = []
    for m in cluster_members(info, cluster):
        table = tables.get(m.addr)
        rows.append(broker_row(m, table if table is not None else LookupError("no runtime table"), now))
    return ClusterList(tuple(rows))


async def cluster_list(client: AdminClient, *, cluster: str | None = None) -> ClusterList:
    """GET_BROKER_CLUSTER_INFO (106), then GET_BROKER_RUNTIME_INFO (28) from every broker at once."""
    info = await cluster_info(client)
    members = cluster_members(info, cluster)
    addrs = sorted({m.addr for m in members})
    tables = await gather_map(addrs, lambda a: runtime_table(client, a))
    return build_cluster_list(info, dict(zip(addrs, tables, strict=True)), cluster=cluster)


# ---------------------------------------------------------------------- send round-trip


@dataclass(frozen=True, slots=True)
class BrokerRT:
    """mqadmin clusterRT: ``amount`` sends of ``size`` bytes to one broker, timed."""

    cluster: str
    broker_name: str
    #: mean milliseconds per send, the first (warm-up) send left out; ``None`` when none took
    rt_ms: float | None
    success: int
    fail: int
    error: str | None = None


async def cluster_rt(client: AdminClient, *, cluster: str | None = None, amount: int = 100,
                     size: int = 128, broker: str | None = None) -> tuple[BrokerRT, ...]:
    """Send round-trip time per broker (mqadmin clusterRT, ``CLusterSendMsgRTCommand``): for each
    broker name of each cluster, ``amount`` messages of ``size`` bytes to the topic named after the
    broker, one after the other (SEND_MESSAGE_V2), and the mean time of the sends after the first.
    ``broker`` keeps one broker name (mqadmin sendMsgStatus)."""
    from .message import message_send

    if amount < 2:
        raise BadRequest("--amount must be at least 2 (the first send is left out of the mean)")
    if size < 1:
        raise BadRequest("--size must be positive")
    info = await cluster_info(client)
    members = cluster_members(info, cluster)
    names = sorted({(m.cluster, m.broker_name) for m in members if m.broker_id == 0
                    and (broker is None or m.broker_name == broker)})
    if broker is not None and not names:
        raise NotFound(f"no master broker named {broker!r}")
    body = b"x" * size
    out = []
    for cname, bname in names:
        elapsed, ok, fail, last = 0.0, 0, 0, None
        for i in range(amount):
            started = time.monotonic()
            try:
                await message_send(client, bname, body, broker=bname)
                ok += 1
            except (WireError, AdminError) as err:
                fail += 1
                last = str(err)
            if i:
                elapsed += time.monotonic() - started
        rt = elapsed * 1000.0 / (amount - 1) if ok else None
        out.append(BrokerRT(cname, bname, rt, ok, fail, last if not ok else None))
    return tuple(out)
