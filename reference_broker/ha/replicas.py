# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A controller-mode broker's dealings with its controller (``ReplicasManager`` of 5.0.0).

Theory of operation
-------------------
A broker with ``enableControllerMode=true`` starts *isolated*: it registers with no name server
until the controller gave it a role. :meth:`ReplicasManager.start` then, in the background:

1. asks each ``controllerAddr`` for CONTROLLER_GET_METADATA_INFO until one names a leader;
2. sends CONTROLLER_REGISTER_BROKER (its address, last epoch and CommitLog end) and takes the
   answer: master when the answer names this broker, else slave of the named master with the
   given id. Retries every 5 s until that works.

Then, as Java does: BROKER_HEARTBEAT to the controller every ``brokerHeartbeatInterval`` (oneway,
on the same connection, so that the controller sees the connection close when this broker dies);
CONTROLLER_GET_REPLICA_INFO every ``syncBrokerMetadataPeriod`` (a higher master epoch than this
broker's changes its role; the same epoch refreshes a master's SyncStateSet); and, on a master,
every ``checkSyncStateSetPeriod``, the SyncStateSet check (members not caught up for
``haMaxTimeSlaveNotCatchup`` are proposed out). NOTIFY_BROKER_ROLE_CHANGED changes the role at
once (:meth:`ReplicasManager.change_broker_role`). A role change moves ``brokerId``/``brokerRole``,
the store's role, the slave's table copy and the delayed-message service, and registers with the
name servers at once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import ConnectionPool, RemotingIOError
from wire.bodies import SyncStateSet
from wire.headers import (
    AlterSyncStateSetRequestHeader,
    AlterSyncStateSetResponseHeader,
    BrokerHeartbeatRequestHeader,
    GetMetaDataResponseHeader,
    GetReplicaInfoRequestHeader,
    GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
    request,
)
from wire.topic import MASTER_ID

from ._conn import cancel_and_wait

if TYPE_CHECKING:
    from ..broker import Broker
    from .autoswitch import AutoSwitchHAService

__all__ = ["ReplicasManager"]

log = logging.getLogger("reference_broker.ha")

#: ``ReplicasManager.RETRY_INTERVAL_SECOND``
RETRY_INTERVAL_S = 5.0
TIMEOUT_S = 3.0


class ReplicasManager:
    def __init__(self, broker: Broker, ha: AutoSwitchHAService) -> None:
        self.broker = broker
        self.ha = ha
        cfg = broker.config
        self.controller_addrs = [a.strip() for a in cfg.get("controllerAddr").split(";") if a.strip()]
        self.leader: str | None = None
        self.state = "INITIAL"
        self.master_address: str | None = None
        self.master_epoch = 0
        self.sync_state_set: set[str] = set()
        self.sync_state_set_epoch = 0
        self.role_changes = 0
        self._pool = ConnectionPool(timeout=TIMEOUT_S, name="broker->controller")
        self._tasks: list[asyncio.Task[Any]] = []
        self._lock = asyncio.Lock()
        ha.on_sync_state_set = self._propose

    @property
    def local_address(self) -> str:
        return self.broker.address

    @property
    def is_master(self) -> bool:
        return self.ha.role == "master"

    # ------------------------------------------------------------------ life cycle
    def start(self) -> None:
        self._tasks.append(asyncio.create_task(self._boot(), name="replicas-boot"))

    async def stop(self) -> None:
        self.state = "SHUTDOWN"
        await cancel_and_wait(self._tasks)
        self._tasks = []
        await self._pool.close()

    def _every(self, first_s: float, period_s: float, job: Any, name: str) -> None:
        async def loop() -> None:
            await asyncio.sleep(first_s)
            while True:
                try:
                    await job()
                except (RemotingIOError, OSError, TimeoutError) as exc:
                    log.debug("%s: %s", name, exc)
                except Exception:
                    log.exception("%s failed", name)
                await asyncio.sleep(period_s)
        self._tasks.append(asyncio.create_task(loop(), name=name))

    async def _boot(self) -> None:
        while self.state != "RUNNING":
            try:
                if self.state == "INITIAL" and await self.update_controller_metadata():
                    self.state = "METADATA_DONE"
                if self.state == "METADATA_DONE" and await self.register_to_controller():
                    self.state = "RUNNING"
            except (RemotingIOError, OSError, TimeoutError) as exc:
                log.warning("controller %s: %s", self.leader or self.controller_addrs, exc)
            if self.state != "RUNNING":
                await asyncio.sleep(RETRY_INTERVAL_S)
        cfg = self.broker.config

        def ms(key: str) -> float:
            return max(int(cfg.get(key)), 100) / 1000

        self._every(1.0, ms("brokerHeartbeatInterval"), self.send_heartbeat, "controller-heartbeat")
        self._every(3.0, ms("syncBrokerMetadataPeriod"), self.sync_broker_metadata, "controller-replica-info")
        self._every(3.0, ms("syncControllerMetadataPeriod"), self.update_controller_metadata,
                    "controller-metadata")
        self._every(3.0, ms("checkSyncStateSetPeriod"), self.check_sync_state_set, "controller-check-sss")

    async def _call(self, cmd: RemotingCommand) -> RemotingCommand:
        if self.leader is None:
            raise RemotingIOError("no controller leader known")
        conn = await self._pool.get(self.leader)
        try:
            return await conn.request(cmd, timeout=TIMEOUT_S)
        except (RemotingIOError, OSError, TimeoutError):
            self._pool.discard(self.leader)
            raise

    # ------------------------------------------------------------------ requests
    async def update_controller_metadata(self) -> bool:
        for addr in self.controller_addrs:
            try:
                conn = await self._pool.get(addr)
                resp = await conn.request(RemotingCommand(code=int(RequestCode.CONTROLLER_GET_METADATA_INFO)),
                                          timeout=TIMEOUT_S)
            except (RemotingIOError, OSError, TimeoutError) as exc:
                log.debug("controller %s: %s", addr, exc)
                self._pool.discard(addr)
                continue
            h = GetMetaDataResponseHeader.from_ext(resp.ext_fields)
            if resp.code == ResponseCode.SUCCESS and h.controller_leader_address:
                self.leader = h.controller_leader_address
                return True
        return False

    async def register_to_controller(self) -> bool:
        cfg = self.broker.config
        header = RegisterBrokerToControllerRequestHeader(
            cluster_name=cfg.cluster_name, broker_name=cfg.broker_name, broker_address=self.local_address,
            epoch=self.ha.last_epoch, max_offset=self.ha.store.commitlog_max_offset())
        resp = await self._call(request(RequestCode.CONTROLLER_REGISTER_BROKER, header))
        if resp.code != ResponseCode.SUCCESS:
            log.warning("register to controller %s: %s %s", self.leader, resp.code_name, resp.remark)
            return False
        h = RegisterBrokerToControllerResponseHeader.from_ext(resp.ext_fields)
        if not h.master_address:
            return False
        if h.master_address == self.local_address:
            await self.change_to_master(h.master_epoch or 0, h.sync_state_set_epoch or 0)
        else:
            await self.change_to_slave(h.master_address, h.master_epoch or 0, h.broker_id or 0)
        return True

    async def send_heartbeat(self) -> None:
        cfg = self.broker.config
        if self.leader is None:
            return
        conn = await self._pool.get(self.leader)
        conn.oneway(request(RequestCode.BROKER_HEARTBEAT, BrokerHeartbeatRequestHeader(
            cluster_name=cfg.cluster_name, broker_addr=self.local_address, broker_name=cfg.broker_name,
            epoch=self.ha.last_epoch, max_offset=self.ha.store.commitlog_max_offset(),
            confirm_offset=self.ha.confirm_offset), oneway=True))

    async def sync_broker_metadata(self) -> None:
        cfg = self.broker.config
        resp = await self._call(request(RequestCode.CONTROLLER_GET_REPLICA_INFO, GetReplicaInfoRequestHeader(
            broker_name=cfg.broker_name, broker_address=self.local_address)))
        if resp.code == ResponseCode.CONTROLLER_BROKER_METADATA_NOT_EXIST:
            await self.register_to_controller()
            return
        if resp.code != ResponseCode.SUCCESS:
            return
        h = GetReplicaInfoResponseHeader.from_ext(resp.ext_fields)
        sss = SyncStateSet.decode(resp.body or b"{}")
        epoch = h.master_epoch or 0
        if epoch > self.master_epoch:
            if h.master_address:
                if h.master_address == self.local_address:
                    await self.change_to_master(epoch, sss.sync_state_set_epoch)
                elif (h.broker_id or -1) > 0:
                    await self.change_to_slave(h.master_address, epoch, h.broker_id or 0)
                else:
                    await self.register_to_controller()
            else:
                await self.register_to_controller()
        elif epoch == self.master_epoch and self.is_master:
            self.change_sync_state_set({str(m) for m in sss.sync_state_set}, sss.sync_state_set_epoch)

    async def check_sync_state_set(self) -> None:
        if not self.is_master:
            return
        wanted = self.ha.maybe_shrink()
        if wanted != self.sync_state_set:
            await self.report_sync_state_set(wanted)

    def _propose(self, members: set[str]) -> None:
        if self.state == "RUNNING" and self.is_master:
            self._tasks.append(asyncio.create_task(self.report_sync_state_set(members)))
            self._tasks = [t for t in self._tasks if not t.done()]

    async def report_sync_state_set(self, members: set[str]) -> None:
        """``doReportSyncStateSetChanged``."""
        body = SyncStateSet(sync_state_set=tuple(sorted(members)),
                            sync_state_set_epoch=self.sync_state_set_epoch)
        header = AlterSyncStateSetRequestHeader(broker_name=self.broker.config.broker_name,
                                                master_address=self.master_address,
                                                master_epoch=self.master_epoch)
        cmd = request(RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, header, body.encode())
        try:
            resp = await self._call(cmd)
        except (RemotingIOError, OSError, TimeoutError) as exc:
            log.error("alter SyncStateSet to %s: %s", sorted(members), exc)
            self.ha.proposal_ended()
            return
        if resp.code != ResponseCode.SUCCESS:
            self.ha.proposal_ended()
            log.warning("alter SyncStateSet to %s refused: %s %s", sorted(members), resp.code_name,
                        resp.remark)
            return
        h = AlterSyncStateSetResponseHeader.from_ext(resp.ext_fields)
        new = SyncStateSet.decode(resp.body or b"{}")
        self.change_sync_state_set({str(m) for m in new.sync_state_set},
                                   new.sync_state_set_epoch or h.new_sync_state_set_epoch or 0)
        self.ha.proposal_ended()

    # ------------------------------------------------------------------ roles
    def change_sync_state_set(self, members: set[str], epoch: int) -> None:
        if epoch > self.sync_state_set_epoch:
            log.info("SyncStateSet %s at epoch %d (was %s at %d)", sorted(members), epoch,
                     sorted(self.sync_state_set), self.sync_state_set_epoch)
            self.sync_state_set_epoch = epoch
            self.sync_state_set = set(members)
            self.ha.set_sync_state_set(members)

    async def change_broker_role(self, master: str | None, master_epoch: int, sync_state_set_epoch: int,
                                 broker_id: int) -> None:
        """NOTIFY_BROKER_ROLE_CHANGED (``changeBrokerRole``)."""
        if master and master_epoch > self.master_epoch:
            if master == self.local_address:
                await self.change_to_master(master_epoch, sync_state_set_epoch)
            else:
                await self.change_to_slave(master, master_epoch, broker_id)

    async def change_to_master(self, master_epoch: int, sync_state_set_epoch: int) -> None:
        async with self._lock:
            if master_epoch <= self.master_epoch:
                return
            if not await self.ha.change_to_master(master_epoch):
                return
            self.master_epoch = master_epoch
            self.master_address = self.local_address
            self.sync_state_set_epoch = 0
            self.change_sync_state_set({self.local_address}, sync_state_set_epoch)
            self.role_changes += 1
            log.info("the controller made %s master at epoch %d", self.local_address, master_epoch)
            await self.broker.controller_role_changed(master=True, broker_id=MASTER_ID, master_addr=None)

    async def change_to_slave(self, master: str, master_epoch: int, broker_id: int) -> None:
        async with self._lock:
            if master_epoch <= self.master_epoch:
                return
            if not await self.ha.change_to_slave(master_epoch, broker_id):
                return
            self.master_epoch = master_epoch
            self.master_address = master
            self.sync_state_set = set()
            self.role_changes += 1
            log.info("the controller made %s slave %d of %s at epoch %d", self.local_address, broker_id,
                     master, master_epoch)
            await self.broker.controller_role_changed(master=False, broker_id=broker_id, master_addr=master)
