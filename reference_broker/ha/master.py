# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The master side of 4.x replication (``HAService``, ``AcceptSocketService``, ``HAConnection``).

Theory of operation
-------------------
:class:`HAService` listens on the HA port (the broker's listen port + 1, as ``BrokerStartup`` sets
it) on every broker, as Java does; only a master's listener is ever dialled. Each accepted socket
becomes a :class:`SlaveConnection`: two tasks around one :class:`wire.ha.V4MasterSession`.

* The reader takes the slave's 8-byte reports, in the socket's readiness callback. The session
  checks each one (a report beyond what this connection has sent is a lie: the connection is closed
  and logged, and the lie never counts); each accepted ack advances the SYNC_MASTER waiters it
  covers (:mod:`.waiters`) in the pass of the event loop in which it arrives.
* The writer waits for the slave's first report, fixes where the transfer starts (an empty slave at
  the master's last CommitLog file, else at its report), then sends whatever the CommitLog holds past
  the cursor: ``haTransferBatchSize`` per frame (as Java cuts them), each frame from one file, its
  data sent with ``sendfile`` from the CommitLog file (no copy in user space), up to 64 frames
  before the other tasks get a turn. When nothing is left it sleeps until
  the store appends (an append listener wakes every connection) or a heartbeat is due
  (``haSendHeartbeatInterval``: the 12-byte header with no data). On a ``SYNC_MASTER`` the append
  listener sends the new bytes itself when the writer is idle (:meth:`SlaveConnection.push`), as
  far as the socket takes them at once: the puts that wait for the slave are sent while their
  pass of the event loop is still under way, not after it.
* Housekeeping: every second, a connection that read nothing for ``haHousekeepingInterval`` closes.

``SYNC_MASTER`` (``CommitLog.submitReplicaRequest``): the store awaits :meth:`HAService.wait_for_slaves`
after each put that waits. No connected slave, or one more than ``haSlaveFallbehindMax`` behind,
answers SLAVE_NOT_AVAILABLE at once (``isSlaveOK``: any connection counts, and the highest ack of
all); otherwise the put waits until an ack covers it, FLUSH_SLAVE_TIMEOUT after ``slaveTimeout``.

A slave whose report lies below the master's first CommitLog offset (its files were deleted) is
flagged: the log says so and what to do, and :meth:`HAService.runtime_info` carries it (Java sends
such a slave heartbeats forever, apache/rocketmq#3388).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable
from dataclasses import dataclass

from wire.bodies import HAClientRuntimeInfo, HAConnectionRuntimeInfo, HARuntimeInfo
from wire.fastjson import FrozenObject
from wire.ha.session import HAProtocolError, V4MasterSession, pack_transfer_header

from ..periodic import wait_event
from ..store import MessageStore, PutStatus
from . import _sock
from ._conn import ConnectionTasks, cancel_and_wait
from .config import HAConfig
from .stats import TransferSpeed, now_ms
from .waiters import OffsetWaiters

__all__ = ["HAService", "SlaveConnection", "SlaveProblem"]

log = logging.getLogger("reference_broker.ha")

#: how often idle connections are looked at
HOUSEKEEPING_PERIOD_S = 1.0
#: recv size for the slave's reports
READ_SIZE = 65536


@dataclass(frozen=True, slots=True)
class SlaveProblem:
    """Why a connected slave cannot catch up, and what the operator can do."""

    code: str
    message: str


class SlaveConnection(ConnectionTasks):
    """One slave's connection to this master (``HAConnection``)."""

    kind = "ha"

    def __init__(self, service: HAService, sock: socket.socket, peer: str) -> None:
        super().__init__(sock, peer)
        self.service = service
        cfg = service.config
        self.session = V4MasterSession(
            mapped_file_size=cfg.mapped_file_size, transfer_batch_size=cfg.transfer_batch_size,
            heartbeat_interval_ms=cfg.heartbeat_interval_ms,
            housekeeping_interval_ms=cfg.housekeeping_interval_ms, now_ms=now_ms())
        self.connected_ms = now_ms()
        self.speed = TransferSpeed()
        self.problem: SlaveProblem | None = None
        #: when the slave last held everything this master held (None: not yet)
        self.caught_up_ms: int | None = None
        self._wake = asyncio.Event()
        #: the writer waits for new bytes (nothing of its own is under way)
        self._idle = False

    def __repr__(self) -> str:
        s = self.session
        return (f"<SlaveConnection {self.addr} request={s.request_offset} ack={s.ack_offset} "
                f"next={s.next_transfer}>")

    # ------------------------------------------------------------------ life cycle
    def _closed(self, reason: str) -> None:
        self.service._removed(self)
        log.info("HA connection %s closed: %s", self.addr, reason)

    def wake(self) -> None:
        self._wake.set()

    def push(self) -> None:
        """New bytes on a SYNC_MASTER (from the append listener, while the puts that wrote them are
        being made): an idle writer's work done at once, so the slave has the bytes, and can ack
        them, before this pass of the event loop ends (the writer task would run only after it).
        What the socket does not take at once is left to the writer."""
        if not self._idle or self.closed or self._unsent is not None:
            # the writer is busy, or woken for a frame cut short that must go on first
            self._wake.set()
            return
        try:
            self._send_available_now()
        except OSError as exc:
            self.close(f"{type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------ reading
    async def _read(self) -> None:
        """The slave's reports, taken in the socket's readiness callback itself (:meth:`_readable`):
        an ack releases the waiting puts it covers in the pass of the event loop in which it
        arrives, not one pass later in a task of its own."""
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[None] = loop.create_future()
        fd = self.sock.fileno()
        loop.add_reader(fd, self._readable, ended)
        try:
            await ended
        finally:
            if self.sock.fileno() == fd:  # a socket closed meanwhile had its registration removed
                loop.remove_reader(fd)

    def _readable(self, ended: asyncio.Future[None]) -> None:
        if ended.done():
            return
        try:
            data = self.sock.recv(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            ended.set_exception(exc)
            return
        if not data:
            self.close_reason = "the slave closed the connection"
            ended.set_result(None)
            return
        store = self.service.store
        session = self.session
        first = not session.requested
        try:
            report = session.receive_data(data, now_ms=now_ms(),
                                          master_max_offset=store.commitlog_max_offset())
        except HAProtocolError as exc:
            # Java 4.9.x closes on an ack beyond its CommitLog end; any report beyond what was sent
            # is a lie here (apache/rocketmq#3015)
            log.error("slave %s: %s; closing the connection", self.addr, exc)
            self.close_reason = f"protocol violation: {exc}"
            self.service.rejected += 1
            ended.set_result(None)
            return
        if report is None:
            return
        if first:
            log.info("slave[%s] request offset %d", self.addr, report.offset)
            self._wake.set()
        elif session.started:
            self.service._acked(self, report.offset)

    # ------------------------------------------------------------------ writing
    async def _write(self) -> None:
        session = self.session
        store = self.service.store
        while not session.requested:
            self._wake.clear()
            await self._wake.wait()
        start = session.start(store.commitlog_max_offset())
        log.info("master transfer data from %d to slave[%s], and slave request %d",
                 start, self.addr, session.request_offset)
        self._check_min_offset()
        while True:
            self._wake.clear()
            if await self._send_available():
                await asyncio.sleep(0)  # let the reader and the puts in between frames
                continue
            now = now_ms()
            if session.heartbeat_due(now):
                h = session.heartbeat()
                await self._send([pack_transfer_header(h.phy_offset, 0)])
                session.wrote(now_ms())
                self._check_min_offset()
                continue
            due_in = (session.last_write_ms + session.heartbeat_interval_ms - now) / 1000 + 0.001
            self._idle = True
            try:
                await wait_event(self._wake, max(0.001, due_in))
            finally:
                self._idle = False

    def _frame(self, available: int) -> tuple[bytes, int]:
        h = self.session.next_header(available)
        return pack_transfer_header(h.phy_offset, h.body_size), h.body_size

    def _next_transfer(self) -> int:
        return self.session.next_transfer

    async def _send_available(self) -> bool:
        """Send what the CommitLog holds past the cursor (up to GATHER_FRAMES frames); False if nothing."""
        session = self.session
        sent = await self._send_commitlog(self.service.store, self._next_transfer,
                                          session.transfer_batch_size, self._frame)
        if sent < 0:
            return False
        session.wrote(now_ms())
        self.speed.add(sent)
        return True

    def _send_available_now(self) -> None:
        """:meth:`_send_available` without waiting; the writer is woken for what is left."""
        session = self.session
        before = session.next_transfer
        sent = self._send_commitlog_now(self.service.store, self._next_transfer, session.transfer_batch_size,
                                        self._frame)
        if session.next_transfer != before:
            session.wrote(now_ms())
            self.speed.add(sent)
        if self._unsent is not None or self.service.store.commitlog_max_offset() > session.next_transfer:
            self._wake.set()

    def _check_min_offset(self) -> None:
        store = self.service.store
        low = store.commitlog_min_offset()
        if self.session.below_min_offset(low):
            if self.problem is None:
                self.problem = SlaveProblem(
                    "BELOW_MIN_OFFSET",
                    f"the slave needs CommitLog offset {self.session.next_transfer}, but this master's "
                    f"CommitLog starts at {low} (older files were deleted): it can never catch up. Stop the "
                    "slave, move its store away and start it empty (it then copies from this master's last "
                    "CommitLog file), or put the missing CommitLog files back on the master.")
                log.warning("slave %s: %s", self.addr, self.problem.message)
        else:
            self.problem = None

    # ------------------------------------------------------------------ status
    def lag_ms(self, master_max: int, now: int) -> int:
        """How long the slave has been behind: 0 when it holds all the master holds, else the time
        since it last did (since it connected, if it never did)."""
        if self.session.ack_offset >= master_max:
            self.caught_up_ms = now
            return 0
        return now - (self.caught_up_ms if self.caught_up_ms is not None else self.connected_ms)

    def runtime_info(self, master_max: int) -> HAConnectionRuntimeInfo:
        """``HAConnectionRuntimeInfo``, plus what Java does not report (JSON properties a Java
        reader ignores): ``lagMillis``, ``transferStart`` and, for a slave that cannot catch up,
        ``problem``."""
        s = self.session
        ack = max(s.ack_offset, 0)
        diff = max(0, master_max - ack)
        extra: dict[str, object] = {"lagMillis": self.lag_ms(master_max, now_ms()),
                                    "transferStart": max(s.transfer_start, 0)}
        if self.problem is not None:
            extra["problem"] = self.problem.message
        return HAConnectionRuntimeInfo(
            addr=self.addr, slave_ack_offset=ack, diff=diff,
            in_sync=self.service.in_sync(diff), transferred_byte_in_second=self.speed.per_second(),
            transfer_from_where=max(s.next_transfer, 0), extra=FrozenObject(extra))


class HAService:
    """The HA listener, its slave connections and the SYNC_MASTER waiters (see the module notes)."""

    def __init__(self, store: MessageStore, config: HAConfig) -> None:
        self.store = store
        self.config = config
        self.connections: list[SlaveConnection] = []
        #: ``push2SlaveMaxOffset``: the highest ack any slave sent (never goes down)
        self.push2slave_max_offset = 0
        #: reports refused as lies, and the connections closed for them
        self.rejected = 0
        self.waiters: OffsetWaiters[PutStatus] = OffsetWaiters(PutStatus.PUT_OK,
                                                               PutStatus.FLUSH_SLAVE_TIMEOUT)
        #: puts are being made in this pass of the loop (they may share a waiter)
        self._pass_open = False
        self._listener: socket.socket | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._port: int | None = None

    # ------------------------------------------------------------------ life cycle
    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: an ephemeral port); returns the bound port."""
        self._listener = _sock.listen(host, port)
        self._port = int(self._listener.getsockname()[1])
        self.store.add_append_listener(self._appended)
        if self.config.sync_master:
            self.store.replica_waiter = self.wait_for_slaves
        self._tasks = [asyncio.create_task(self._accept(), name="ha-accept"),
                       asyncio.create_task(self._housekeeping(), name="ha-housekeeping")]
        return self._port

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        for c in list(self.connections):
            c.close("the master shuts down")
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        self.store.remove_append_listener(self._appended)
        if self.store.replica_waiter == self.wait_for_slaves:
            self.store.replica_waiter = None
        self.waiters.close(PutStatus.FLUSH_SLAVE_TIMEOUT)

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the HA service is not listening")
        return self._port

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._listener is not None
        while True:
            try:
                sock, peer = await loop.sock_accept(self._listener)
            except OSError as exc:
                log.error("AcceptSocketService: %s", exc)
                await asyncio.sleep(0.1)
                continue
            addr = f"{peer[0]}:{peer[1]}"
            log.info("HAService receive new connection, %s", addr)
            try:
                _sock.tune(sock)
            except OSError:
                sock.close()
                continue
            conn = SlaveConnection(self, sock, addr)
            self.connections.append(conn)
            conn.start()

    async def _housekeeping(self) -> None:
        while True:
            await asyncio.sleep(HOUSEKEEPING_PERIOD_S)
            now = now_ms()
            for c in list(self.connections):
                if c.session.expired(now):
                    log.warning("ha housekeeping, found this connection[%s] expired, %d", c.addr,
                                now - c.session.last_read_ms)
                    c.close("no report for haHousekeepingInterval")

    def _removed(self, conn: SlaveConnection) -> None:
        with contextlib.suppress(ValueError):
            self.connections.remove(conn)

    # ------------------------------------------------------------------ data and acks
    def _appended(self, end: int) -> None:
        if self.config.sync_master:
            for c in list(self.connections):
                c.push()
        else:
            for c in self.connections:
                c.wake()

    def _acked(self, conn: SlaveConnection, ack: int) -> None:
        """An accepted ack (``notifyTransferSome``): raise the high-water mark, release waiters."""
        if ack > self.push2slave_max_offset:
            self.push2slave_max_offset = ack
        if ack >= self.store.commitlog_max_offset():
            conn.caught_up_ms = now_ms()
        self.waiters.advance(conn.session.transfer_start, ack)

    def is_slave_ok(self, master_put_where: int) -> bool:
        """``HAService.isSlaveOK``: a slave is connected and the best one is not too far behind."""
        return bool(self.connections) and \
            master_put_where - self.push2slave_max_offset < self.config.slave_fallbehind_max

    def wait_for_slaves(self, begin: int, end: int, puts: int = 1) -> Awaitable[PutStatus]:
        """The store's replica waiter on a SYNC_MASTER (``submitReplicaRequest``). The puts made in
        one pass of the loop (a pipelined producer's read of sends is stored as one run) share
        one waiter when they follow one another in the CommitLog: the writer sends them to the
        slaves together, so one ack covers them, and answers them with one future."""
        if not self.is_slave_ok(end):
            fut: asyncio.Future[PutStatus] = asyncio.get_running_loop().create_future()
            fut.set_result(PutStatus.SLAVE_NOT_AVAILABLE)
            return fut
        join = self._pass_open
        if not join:
            self._pass_open = True
            asyncio.get_running_loop().call_soon(self._pass_ended)
        return self.waiters.wait(begin, end, self.config.slave_timeout_ms / 1000, join=join, puts=puts)

    def _pass_ended(self) -> None:
        self._pass_open = False

    # ------------------------------------------------------------------ status
    def in_sync(self, diff: int) -> bool:
        return diff < self.config.slave_fallbehind_max

    def runtime_info(self) -> HARuntimeInfo:
        """The master's part of ``HARuntimeInfo`` (GET_BROKER_HA_STATUS)."""
        master_max = self.store.commitlog_max_offset()
        conns = tuple(c.runtime_info(master_max) for c in self.connections if c.session.requested)
        return HARuntimeInfo(master=True, master_commit_log_max_offset=master_max,
                             in_sync_slave_nums=sum(1 for c in conns if c.in_sync), ha_connection_info=conns,
                             ha_client_runtime_info=HAClientRuntimeInfo())
