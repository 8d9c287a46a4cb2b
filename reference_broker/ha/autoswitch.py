# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Controller-mode replication (``AutoSwitchHAService``, ``AutoSwitchHAConnection``,
``AutoSwitchHAClient`` of 5.0.0) over the sans-IO state of :mod:`wire.ha.autoswitch`.

Theory of operation
-------------------
Every controller-mode broker listens on its HA port and holds an epoch file
(:class:`.EpochFile`). The controller decides its role; :class:`AutoSwitchHAService` changes it
without a restart:

* :meth:`~AutoSwitchHAService.change_to_master` (refused when the new epoch is below the last
  one): the slave client stops, connections close, what was replicated is dispatched, the epoch
  file gets ``(epoch, CommitLog end)`` (later epochs dropped first); the SyncStateSet comes from
  the controller's answer (:meth:`~AutoSwitchHAService.set_sync_state_set`).
* :meth:`~AutoSwitchHAService.change_to_slave`: connections close and an :class:`AutoSwitchClient`
  follows the new master once its HA address is known (the name server tells it, as for 4.x).

Master side, per slave connection (:class:`AutoSwitchConnection`): the handshake is answered with
the epoch entries; the first ack fixes where the transfer starts; frames never cross an epoch.
Each ack may *expand* the SyncStateSet (a slave that reached the confirm offset and the current
epoch's start joins; an async learner never does), and moves the confirm offset: the lowest ack of
the set's members (the CommitLog end while the set is only this broker). A periodic check
*shrinks* the set by the members not caught up for ``haMaxTimeSlaveNotCatchup``; every change goes
to the controller (``on_sync_state_set``) and takes effect when it answers. With
``allAckInSyncStateSet`` a put waits until the confirm offset covers it (``slaveTimeout``, then
FLUSH_SLAVE_TIMEOUT).

Slave side (:class:`AutoSwitchClient`): handshake, then the master's reply says where the logs
agree. The slave cuts its CommitLog there and makes the cut durable (the file holding the cut is
fsynced, the directory too) before the epoch file is rewritten and before it acks anything: a
crash right after finds no stale tail (Java 5.x keeps one on disk, apache/rocketmq#10666). Then
the transfers are appended through the store's replica path and acked, a new epoch in a frame is
added to the epoch file, and the confirm offset follows the master's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from wire.bodies import HAClientRuntimeInfo, HAConnectionRuntimeInfo, HARuntimeInfo
from wire.ha import EpochTransfer, HAProtocol
from wire.ha.autoswitch import AutoSwitchMasterSession, AutoSwitchSlaveSession, TruncateTo
from wire.ha.frames import SlaveHandshake
from wire.ha.session import HAProtocolError

from ..periodic import wait_event
from ..store import MessageStore, PutStatus
from . import _sock
from ._conn import ConnectionTasks, MasterLink, cancel_and_wait
from .config import HAConfig
from .epochfile import EpochFile, fsync_dir
from .stats import TransferSpeed, now_ms
from .waiters import OffsetWaiters

__all__ = ["AutoSwitchClient", "AutoSwitchConnection", "AutoSwitchHAService", "ControllerModeConfig"]

log = logging.getLogger("reference_broker.ha")

READ_SIZE = 65536
HOUSEKEEPING_PERIOD_S = 1.0
RETRY_INTERVAL_S = 1.0
TICK_S = 0.5


@dataclass(frozen=True, slots=True)
class ControllerModeConfig:
    """The 5.0.0 controller-mode keys the HA side reads."""

    all_ack_in_sync_state_set: bool = False
    max_time_slave_not_catchup_ms: int = 15_000
    sync_from_last_file: bool = False
    async_learner: bool = False
    epoch_file: str = ""
    protocol: HAProtocol = HAProtocol.AUTOSWITCH_5_0

    @classmethod
    def from_broker_config(cls, cfg: object) -> ControllerModeConfig:
        get = getattr(cfg, "get")  # noqa: B009 - BrokerConfig, without importing it here
        return cls(all_ack_in_sync_state_set=get("allAckInSyncStateSet").lower() == "true",
                   max_time_slave_not_catchup_ms=int(get("haMaxTimeSlaveNotCatchup")),
                   sync_from_last_file=get("syncFromLastFile").lower() == "true",
                   async_learner=get("asyncLearner").lower() == "true",
                   epoch_file=get("storePathEpochFile"))


def make_durable(store: MessageStore, offset: int) -> None:
    """fsync the CommitLog file that holds ``offset`` and the CommitLog directory, after a cut."""
    files = store.commitlog.files
    f = files.find(offset) or files.last()
    if f is not None:
        f.sync()
    directory = getattr(files, "directory", None)
    if directory is not None:
        fsync_dir(directory)


# ----------------------------------------------------------------------------------- master side

class AutoSwitchConnection(ConnectionTasks):
    """One slave's connection to this master (``AutoSwitchHAConnection``)."""

    kind = "ha5"

    def __init__(self, service: AutoSwitchHAService, sock: socket.socket, peer: str) -> None:
        super().__init__(sock, peer)
        self.service = service
        cfg = service.config
        self.session = AutoSwitchMasterSession(
            service.mode.protocol, mapped_file_size=cfg.mapped_file_size,
            transfer_batch_size=cfg.transfer_batch_size, heartbeat_interval_ms=cfg.heartbeat_interval_ms,
            housekeeping_interval_ms=cfg.housekeeping_interval_ms, now_ms=now_ms())
        self.speed = TransferSpeed()
        self._reply_due = False
        self._wake = asyncio.Event()
        #: when the last frame was cut, and the master's end then (``updateLastTransferInfo``)
        self.last_transfer_ms = now_ms()
        self.last_master_max = 0

    @property
    def slave(self) -> str:
        return self.session.slave

    def _closed(self, reason: str) -> None:
        self.service._removed(self)
        log.info("AutoSwitch HA connection %s (%s) closed: %s", self.addr, self.session.slave, reason)

    def wake(self) -> None:
        self._wake.set()

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        store = self.service.store
        while True:
            data = await loop.sock_recv(self.sock, READ_SIZE)
            if not data:
                self.close_reason = "the slave closed the connection"
                return
            try:
                msgs = self.session.receive_data(data, now_ms=now_ms(),
                                                 master_max_offset=store.commitlog_max_offset())
            except HAProtocolError as exc:
                log.error("slave %s: %s; closing the connection", self.addr, exc)
                self.close_reason = f"protocol violation: {exc}"
                self.service.rejected += 1
                return
            for m in msgs:
                if isinstance(m, SlaveHandshake):
                    log.info("slave %s handshake: address %s, syncFromLastFile %s, asyncLearner %s",
                             self.addr, self.session.slave, m.sync_from_last_file, m.async_learner)
                    self._reply_due = True
                else:
                    self.service._acked(self, m.max_offset)
            self._wake.set()

    async def _write(self) -> None:
        session = self.session
        service = self.service
        store = service.store
        while True:
            self._wake.clear()
            if self._reply_due:
                self._reply_due = False
                reply = session.handshake_reply(service.epochs.cache, store.commitlog_max_offset())
                await self._send([reply])
                session.wrote(now_ms())
                continue
            if session.requested and not session.started:
                start = session.start(service.epochs.cache, master_min_offset=store.commitlog_min_offset(),
                                      master_max_offset=store.commitlog_max_offset())
                if start >= 0:
                    log.info("master transfer data from %d to slave[%s], slave request %d", start,
                             session.slave, session.request_offset)
            if session.started and await self._send_available():
                await asyncio.sleep(0)
                continue
            now = now_ms()
            if session.requested and session.heartbeat_due(now):
                await self._send([session.heartbeat(service.epochs.cache, service.confirm_offset)])
                session.wrote(now_ms())
                continue
            if session.started and store.commitlog_max_offset() <= session.next_transfer:
                service.caught_up(session.slave, now)
            await wait_event(self._wake, 0.1 if not session.started else 0.5)

    async def _send_available(self) -> bool:
        session = self.session
        service = self.service
        store = service.store

        def frame(available: int) -> tuple[bytes, int] | None:
            cut = session.next_header(available, service.epochs.cache, service.confirm_offset)
            if cut is not None:
                self.last_master_max = store.commitlog_max_offset()
                self.last_transfer_ms = now_ms()
            return cut

        sent = await self._send_commitlog(store, lambda: session.next_transfer, session.transfer_batch_size,
                                          frame)
        if sent < 0:
            return False
        session.wrote(now_ms())
        self.speed.add(sent)
        return True

    def runtime_info(self, master_max: int) -> HAConnectionRuntimeInfo:
        s = self.session
        ack = max(s.ack_offset, 0)
        return HAConnectionRuntimeInfo(
            addr=self.addr, slave_ack_offset=ack, diff=master_max - ack,
            in_sync=s.slave in self.service.sync_state_set,
            transferred_byte_in_second=self.speed.per_second(), transfer_from_where=s.next_transfer)


# ------------------------------------------------------------------------------------ slave side

class AutoSwitchClient(MasterLink):
    """The slave's connection to its master (``AutoSwitchHAClient``; the connection's life cycle
    is :class:`._conn.MasterLink`'s)."""

    kind = "AutoSwitch HA client"
    retry_interval_s = RETRY_INTERVAL_S
    pause_after_connection_s = RETRY_INTERVAL_S
    tick_s = TICK_S

    def __init__(self, service: AutoSwitchHAService, slave_id: int) -> None:
        super().__init__(service.store)
        self.service = service
        cfg, mode = service.config, service.mode
        self.session = AutoSwitchSlaveSession(
            mode.protocol, address=service.local_address, broker_id=slave_id,
            sync_from_last_file=mode.sync_from_last_file, async_learner=mode.async_learner,
            heartbeat_interval_ms=cfg.heartbeat_interval_ms,
            housekeeping_interval_ms=cfg.housekeeping_interval_ms, now_ms=now_ms())
        self.master_ha_address: str | None = None
        self.truncations: list[int] = []
        self.refusals = 0

    def update_ha_master_address(self, addr: str | None) -> None:
        if addr == self.master_ha_address:
            return
        log.info("update master HA address, OLD: %s NEW: %s", self.master_ha_address, addr)
        self.master_ha_address = addr
        self._address_changed()

    def start(self) -> None:
        self.start_tasks()

    async def stop(self) -> None:
        await self.stop_tasks()

    # ------------------------------------------------------------------ the connection
    def _master_address(self) -> str | None:
        return self.master_ha_address

    async def _connected(self, sock: socket.socket) -> None:
        self.service.truncate_invalid()   # the READY state's truncateInvalidMsg
        await self._send(sock, self.session.connected(self.store.commitlog_max_offset(), now_ms()))

    async def _read(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        service = self.service
        store = service.store
        session = self.session
        cache = service.epochs.cache
        data: bytes = b""
        while True:
            if not data:
                data = await loop.sock_recv(sock, READ_SIZE * 16)
                if not data:
                    raise ConnectionResetError("the master closed the connection")
            items = session.receive_data(data, cache, store.commitlog_max_offset(), now_ms())
            data = b""
            got = 0
            for item in items:
                if isinstance(item, TruncateTo):
                    await self._truncate(item)
                    data = b""
                    # the frames behind the reply come out of the next call
                    items_after = session.receive_data(b"", cache, store.commitlog_max_offset(), now_ms())
                    got += self._transfers(items_after)
                    continue
                got += self._transfers([item])
            if got:
                self._appended.set()
                self.speed.add(got)
                report = session.report(store.commitlog_max_offset(), now_ms())
                if report is not None:
                    await self._send(sock, report)

    def _transfers(self, items: list[TruncateTo | EpochTransfer]) -> int:
        service = self.service
        store = service.store
        session = self.session
        cache = service.epochs.cache
        got = 0
        for item in items:
            if not isinstance(item, EpochTransfer):
                raise HAProtocolError("a second handshake reply", field="state")
            session.accept(item, cache, store.commitlog_max_offset())
            service.epochs.save()
            if item.data:
                store.append_replica(item.header.phy_offset, item.data, dispatch=False)
                got += len(item.data)
            confirm = session.appended(item, store.commitlog_max_offset())
            if confirm != service.confirm:
                service.confirm = confirm
                service.confirm_moved()
        return got

    async def _truncate(self, t: TruncateTo) -> None:
        service = self.service
        store = service.store
        if t.offset < 0:
            self.refusals += 1
            raise HAProtocolError(f"no consistent point with the master's epochs {t.reply.entries}",
                                  field="entries")
        if not t.fresh:
            store.dispatch_replica()
            if t.offset < store.commitlog_max_offset():
                log.warning("truncating the CommitLog from %d to %d (the master's epochs %s)",
                            store.commitlog_max_offset(), t.offset, t.reply.entries)
                store.truncate_commitlog(t.offset)
                make_durable(store, t.offset)
                self.truncations.append(t.offset)
        self.session.truncated(service.epochs.cache, t.offset, t.fresh)
        service.epochs.save()
        if not t.fresh:
            log.info("CommitLog and epoch file cut at %d and on disk; following the master from there",
                     t.offset)

    def _tick_due(self, now: int) -> bytes | None:
        session = self.session
        if session.expired(now):
            log.warning("AutoSwitch HA client: the master %s sent nothing for %d ms",
                        self.master_ha_address, now - session.last_read_ms)
            raise TimeoutError("the master sent nothing for haHousekeepingInterval")
        return session.heartbeat(now) if session.heartbeat_due(now) else None

    def runtime_info(self) -> HAClientRuntimeInfo:
        s = self.session
        return self._runtime_info(self.master_ha_address, s.last_read_ms, s.last_write_ms)


# ------------------------------------------------------------------------------------- service

class AutoSwitchHAService:
    """Controller-mode replication of one broker (see the module notes)."""

    def __init__(self, store: MessageStore, config: HAConfig, mode: ControllerModeConfig, local_address: str,
                 epochs: EpochFile) -> None:
        self.store = store
        self.config = config
        self.mode = mode
        self.local_address = local_address
        self.epochs = epochs
        self.role = "none"
        self.connections: list[AutoSwitchConnection] = []
        self.client: AutoSwitchClient | None = None
        self.sync_state_set: set[str] = set()
        #: a SyncStateSet sent to the controller and not answered yet
        self.proposed: set[str] = set()
        #: a slave's confirm offset (from its master's frames); a master computes its own
        self.confirm = -1
        self._master_confirm = -1
        self.rejected = 0
        #: slave -> the last time it held everything this master had
        self.caught_up_ms: dict[str, int] = {}
        #: called when the confirm offset moved (parked pulls may now see more)
        self.on_confirm: Callable[[], None] | None = None
        #: called with a proposed SyncStateSet (expand or shrink); the controller decides
        self.on_sync_state_set: Callable[[set[str]], None] | None = None
        self.waiters: OffsetWaiters[PutStatus] = OffsetWaiters(PutStatus.PUT_OK,
                                                               PutStatus.FLUSH_SLAVE_TIMEOUT)
        self._listener: socket.socket | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._port: int | None = None

    # ------------------------------------------------------------------ life cycle
    async def start(self, host: str, port: int) -> int:
        self._listener = _sock.listen(host, port)
        # consumers never read past the confirm offset (Java's reput stops there)
        self.store.read_limit = self.readable_end
        self._port = int(self._listener.getsockname()[1])
        self.store.add_append_listener(self._appended)
        self._tasks = [asyncio.create_task(self._accept(), name="ha5-accept"),
                       asyncio.create_task(self._housekeeping(), name="ha5-housekeeping")]
        return self._port

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        if self.client is not None:
            await self.client.stop()
            self.client = None
        for c in list(self.connections):
            c.close("the broker shuts down")
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        self.store.remove_append_listener(self._appended)
        if self.store.replica_waiter == self.wait_for_replicas:
            self.store.replica_waiter = None
        if self.store.read_limit == self.readable_end:
            self.store.read_limit = None
        self.waiters.close(PutStatus.FLUSH_SLAVE_TIMEOUT)

    def readable_end(self) -> int:
        """Where consumers must stop: the confirm offset (before any role, everything the store
        recovered)."""
        if self.role == "none":
            return self.store.commitlog_max_offset()
        return self.confirm_offset

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
                log.error("AutoSwitch accept: %s", exc)
                await asyncio.sleep(0.1)
                continue
            try:
                _sock.tune(sock)
            except OSError:
                sock.close()
                continue
            conn = AutoSwitchConnection(self, sock, f"{peer[0]}:{peer[1]}")
            self.connections.append(conn)
            conn.start()

    async def _housekeeping(self) -> None:
        while True:
            await asyncio.sleep(HOUSEKEEPING_PERIOD_S)
            now = now_ms()
            for c in list(self.connections):
                if c.session.expired(now):
                    c.close("no report for haHousekeepingInterval")

    def _removed(self, conn: AutoSwitchConnection) -> None:
        with contextlib.suppress(ValueError):
            self.connections.remove(conn)
        slave = conn.session.slave
        if self.role == "master" and slave in self.sync_state_set and self.store.running:
            # removeConnection: a member whose connection is gone is proposed out of the set
            self._propose(self.sync_state_set - {slave})

    def _close_connections(self, reason: str) -> None:
        for c in list(self.connections):
            c.close(reason)

    # ------------------------------------------------------------------ roles
    @property
    def last_epoch(self) -> int:
        return self.epochs.cache.last_epoch

    async def change_to_master(self, epoch: int) -> bool:
        if epoch < self.last_epoch:
            log.warning("newMasterEpoch %d < lastEpoch %d, fail to change to master", epoch, self.last_epoch)
            return False
        self._close_connections("changing to master")
        if self.client is not None:
            await self.client.stop()
            self.client = None
        self.truncate_invalid()
        cache = self.epochs.cache
        if cache.last_epoch >= epoch:
            cache.truncate_suffix_by_epoch(epoch)
        start = self.store.commitlog_max_offset()
        if not cache.append(epoch, start):
            # as Java's appendEntry: an epoch that would start where the last one starts (nothing
            # was written in that one) is not recorded; the data goes on under the last epoch, and
            # a replica that holds that epoch still finds its consistent point
            log.warning("epoch %d at %d not recorded: the last epoch %s starts there", epoch, start,
                        cache.last())
        self.epochs.save()
        self.role = "master"
        self._recompute_confirm()
        if self.mode.all_ack_in_sync_state_set:
            self.store.replica_waiter = self.wait_for_replicas
        log.info("change ha to master success, newMasterEpoch %d, startOffset %d", epoch, start)
        return True

    async def change_to_slave(self, epoch: int, slave_id: int) -> bool:
        if epoch < self.last_epoch:
            log.warning("newMasterEpoch %d < lastEpoch %d, fail to change to slave", epoch, self.last_epoch)
            return False
        self._close_connections("changing to slave")
        if self.store.replica_waiter == self.wait_for_replicas:
            self.store.replica_waiter = None
        self.waiters.close(PutStatus.FLUSH_SLAVE_TIMEOUT)
        if self.client is not None:
            await self.client.stop()
        self.role = "slave"
        self.sync_state_set = set()
        self.proposed = set()
        self.client = AutoSwitchClient(self, slave_id)
        self.client.start()
        log.info("change ha to slave success, newMasterEpoch %d", epoch)
        return True

    def truncate_invalid(self) -> int:
        """``truncateInvalidMsg``: dispatch what was replicated, and cut a record the master's
        frames left half-sent (the CommitLog must end on a record boundary before this broker
        appends its own); returns the cut offset, -1 when there was nothing to cut."""
        store = self.store
        store.dispatch_replica()
        behind = store.dispatch_behind_bytes
        if behind <= 0:
            return -1
        valid = store.commitlog_max_offset() - behind
        log.warning("cutting %d bytes of an unfinished record at the CommitLog's end (%d)", behind, valid)
        store.truncate_commitlog(valid)
        make_durable(store, valid)
        self.epochs.cache.truncate_suffix_by_offset(valid)
        self.epochs.save()
        return valid

    def update_ha_master_address(self, addr: str | None) -> None:
        if self.client is not None:
            self.client.update_ha_master_address(addr)

    # ------------------------------------------------------------------ sync state set, confirm
    def set_sync_state_set(self, members: set[str]) -> None:
        """The controller's answer: the set, and the end of any proposal in flight."""
        self.sync_state_set = set(members)
        self.proposed = set()
        self._recompute_confirm()

    def proposal_ended(self) -> None:
        """A proposal was refused or got no answer: the local set alone counts again."""
        if self.proposed:
            self.proposed = set()
            self._recompute_confirm()

    @property
    def members(self) -> set[str]:
        """Whose acks the confirm offset waits for: the set, and while a change is with the
        controller, the proposed set too (apache/rocketmq#5663: a put acked by the old set alone
        while the controller already applied a larger one could be lost at the next election)."""
        return self.sync_state_set | self.proposed

    @property
    def confirm_offset(self) -> int:
        """``getConfirmOffset``."""
        if self.role != "master":
            return self.confirm
        if len(self.members) <= 1:
            return self.store.commitlog_max_offset()
        return self._master_confirm

    def _recompute_confirm(self) -> None:
        confirm = self.store.commitlog_max_offset()
        members = self.members
        for c in self.connections:
            if c.session.slave in members:
                confirm = min(confirm, c.session.ack_offset)
        moved = confirm > self._master_confirm
        self._master_confirm = confirm
        self.waiters.advance(0, self.confirm_offset)
        if moved:
            self.confirm_moved()

    def confirm_moved(self) -> None:
        if self.on_confirm is not None:
            self.on_confirm()

    def _appended(self, end: int) -> None:
        for c in self.connections:
            c.wake()
        if self.role == "master" and len(self.members) <= 1:
            self.waiters.advance(0, end)

    def _acked(self, conn: AutoSwitchConnection, ack: int) -> None:
        slave = conn.session.slave
        if not conn.session.async_learner and ack >= conn.last_master_max:
            caught = now_ms() if self.store.commitlog_max_offset() == ack else conn.last_transfer_ms
            self.caught_up(slave, caught)
            self._maybe_expand(slave, ack)
        if slave in self.members:
            self._recompute_confirm()

    def caught_up(self, slave: str, when: int) -> None:
        self.caught_up_ms[slave] = max(self.caught_up_ms.get(slave, 0), when)

    def _maybe_expand(self, slave: str, ack: int) -> None:
        if self.role != "master" or slave in self.sync_state_set or self.proposed:
            return
        last = self.epochs.cache.last()
        if ack >= self.confirm_offset and last is not None and ack >= last.start_offset:
            self._propose(self.sync_state_set | {slave})

    def maybe_shrink(self) -> set[str]:
        """``maybeShrinkInSyncStateSet``: the set without the members not caught up in time."""
        now = now_ms()
        out = set(self.sync_state_set)
        for slave, when in self.caught_up_ms.items():
            if slave in out and now - when > self.mode.max_time_slave_not_catchup_ms:
                out.discard(slave)
        connected = {c.session.slave for c in self.connections}
        out = {m for m in out if m == self.local_address or m in connected}
        out.add(self.local_address)
        return out

    def _propose(self, members: set[str]) -> None:
        if self.on_sync_state_set is not None:
            self.proposed = set(members)
            self._recompute_confirm()
            self.on_sync_state_set(set(members))

    def wait_for_replicas(self, begin: int, end: int, puts: int = 1) -> Awaitable[PutStatus]:
        """``allAckInSyncStateSet``: the put waits until every member holds it."""
        if self.confirm_offset >= end:
            fut: asyncio.Future[PutStatus] = asyncio.get_running_loop().create_future()
            fut.set_result(PutStatus.PUT_OK)
            return fut
        return self.waiters.wait(begin, end, self.config.slave_timeout_ms / 1000, puts=puts)

    # ------------------------------------------------------------------ status
    def runtime_info(self) -> HARuntimeInfo:
        if self.role == "slave" and self.client is not None:
            return HARuntimeInfo(master=False, ha_client_runtime_info=self.client.runtime_info())
        master_max = self.store.commitlog_max_offset()
        conns = tuple(c.runtime_info(master_max) for c in self.connections)
        return HARuntimeInfo(master=True, master_commit_log_max_offset=master_max,
                             in_sync_slave_nums=max(0, len(self.sync_state_set) - 1),
                             ha_connection_info=conns,
                             ha_client_runtime_info=HAClientRuntimeInfo())
