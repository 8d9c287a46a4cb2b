# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The controller process: a remoting listener over :mod:`.replicas`, broker liveness and
NOTIFY_BROKER_ROLE_CHANGED (``ControllerManager``, ``ControllerRequestProcessor``,
``DefaultBrokerHeartbeatManager`` of 5.0.0).

Theory of operation
-------------------
``async with Controller(config, host=..., port=...) as c`` replays the event log into the state,
listens, and starts the liveness scan.

* Each request is checked against the state (:class:`.ReplicasInfo`); the events of an accepted
  one are appended to the event log and fsynced, then applied, then answered (one controller
  node: there is no quorum to wait for, and the log makes the state survive a restart).
* A broker is live from its CONTROLLER_REGISTER_BROKER (which remembers its connection, epoch and
  max offset) while BROKER_HEARTBEATs come within its timeout (``heartbeatTimeoutMillis``, 10 s by
  default). It stops being live when the timeout passes (the scan runs every
  ``scanNotActiveBrokerInterval``) or at once when its connection closes, as Java's
  ``BrokerHousekeepingService`` does; the 13-failover capture shows the election ~60 ms after the
  master's process died.
* When the master of a group stops being live the controller elects a new one and sends
  NOTIFY_BROKER_ROLE_CHANGED (oneway) to the new master first, then to every other live replica
  (``notifyBrokerRoleChanged``). A manual CONTROLLER_ELECT_MASTER notifies the same way.

It answers as the embedded 5.0.0 controller does: GET_METADATA_INFO names this node the leader of
a one-peer group, the other codes get REQUEST_CODE_NOT_SUPPORTED. One node only: a replicated
controller group is out of scope.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reference_broker.config import format_properties
from reference_broker.periodic import log_failure
from wire import DecodeError, RemotingCommand, RequestCode, ResponseCode
from wire.aio import ConnectionPool, RemotingConnection, RemotingIOError, RemotingServer, start_server
from wire.bodies import SyncStateSet
from wire.headers import (
    AlterSyncStateSetRequestHeader,
    BrokerHeartbeatRequestHeader,
    CleanControllerBrokerDataRequestHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    GetMetaDataResponseHeader,
    GetReplicaInfoRequestHeader,
    NotifyBrokerRoleChangedRequestHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
    request,
    response,
)
from wire.topic import MASTER_ID

from .eventlog import EventLog
from .replicas import LiveInfo, ReplicasInfo, Result

__all__ = ["Controller", "ControllerConfig"]

log = logging.getLogger("reference_broker.controller")

#: ``DefaultBrokerHeartbeatManager.DEFAULT_BROKER_CHANNEL_EXPIRED_TIME``
DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class ControllerConfig:
    """``ControllerConfig`` of 5.0.0: the keys this controller reads, with Java's defaults."""

    DEFAULTS: Mapping[str, str] = {
        "controllerDLegerGroup": "group1",
        "controllerDLegerPeers": "n0-127.0.0.1:9878",
        "controllerDLegerSelfId": "n0",
        "controllerStorePath": str(Path.home() / "DledgerController"),
        "scanNotActiveBrokerInterval": "5000",
        "enableElectUncleanMaster": "false",
        "notifyBrokerRoleChanged": "true",
        "controllerThreadPoolNums": "16",
        "controllerRequestThreadPoolQueueCapacity": "50000",
        "mappedFileSize": str(1024 * 1024 * 1024),
        "isProcessReadEvent": "false",
    }

    def __init__(self, values: Mapping[str, str] | None = None, *,
                 overrides: Mapping[str, str] | None = None) -> None:
        self.values = {**self.DEFAULTS, **(values or {}), **(overrides or {})}
        #: the keys a file or an override gave, and the ones this controller does not know
        self.given = set(values or {}) | set(overrides or {})
        self.unknown = [f"unknown key {k!r} (kept, not used)" for k in sorted(self.given)
                        if k not in self.DEFAULTS and k not in ("listenPort", "bindAddress")]

    @classmethod
    def load(cls, path: str | Path, overrides: Mapping[str, str] | None = None) -> ControllerConfig:
        """A ``controller.properties`` file (RocketMQ's format); ConfigError names file:line."""
        from reference_broker.config import load_properties

        return cls({k: v for k, v, _ in load_properties(path)}, overrides=overrides)

    @property
    def listen_port(self) -> int:
        """The peer address's port of this node (``listenPort`` when given)."""
        if self.get("listenPort"):
            return int(self.get("listenPort"))
        addr = self.self_address
        return int(addr.rpartition(":")[2]) if addr else 9878

    def get(self, key: str) -> str:
        return self.values.get(key, "")

    def bool(self, key: str) -> bool:
        return self.get(key).strip().lower() == "true"

    @property
    def peers(self) -> dict[str, str]:
        """``controllerDLegerPeers``: ``id-host:port;…`` → id → address."""
        out = {}
        for part in self.get("controllerDLegerPeers").split(";"):
            ident, _, addr = part.strip().partition("-")
            if ident and addr:
                out[ident] = addr
        return out

    @property
    def self_address(self) -> str | None:
        return self.peers.get(self.get("controllerDLegerSelfId"))


@dataclass
class BrokerLive:
    """``BrokerLiveInfo``."""

    cluster: str
    broker_name: str
    addr: str
    broker_id: int
    last_ms: int
    timeout_ms: int
    conn: RemotingConnection | None
    epoch: int = -1
    max_offset: int = -1
    confirm_offset: int = -1


class Controller:
    """A reference controller (see the module notes)."""

    def __init__(self, config: ControllerConfig | None = None, *, host: str = "127.0.0.1",
                 port: int | None = None, store_path: str | Path | None = None) -> None:
        self.config = config or ControllerConfig()
        self.host = host
        addr = self.config.self_address
        self._port = port if port is not None else (int(addr.rpartition(":")[2]) if addr else 9878)
        self.replicas = ReplicasInfo(elect_unclean=self.config.bool("enableElectUncleanMaster"))
        path = Path(store_path) if store_path is not None else Path(self.config.get("controllerStorePath"))
        self.events = EventLog(path / "events.log" if str(path) else None)
        self.live: dict[tuple[str, str], BrokerLive] = {}
        #: (broker name, monotonic seconds) of each election the controller made on its own
        self.elections: list[tuple[str, float]] = []
        self.notified: list[tuple[str, NotifyBrokerRoleChangedRequestHeader]] = []
        self._server: RemotingServer | None = None
        self._pool = ConnectionPool(timeout=3.0, name="controller-notify")
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ properties
    @property
    def port(self) -> int:
        return self._port

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    # ------------------------------------------------------------------ life cycle
    async def start(self) -> Controller:
        for event in self.events.replay():
            self.replicas.apply(event)
        if self.events.count:
            log.info("controller state rebuilt from %d events in %s", self.events.count, self.events.path)
        self._server = await start_server(self._handle, self.host, self._port, name="controller",
                                          on_close=self._channel_closed)
        self._port = self._server.port
        self._spawn(self._scan())
        log.info("controller listening on %s", self.address)
        return self

    async def stop(self) -> None:
        for t in list(self._tasks):
            t.cancel()
        for t in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        if self._server is not None:
            await self._server.close()
            self._server = None
        await self._pool.close()
        self.events.close()

    async def __aenter__(self) -> Controller:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ liveness
    def is_alive(self, cluster: str, addr: str) -> bool:
        b = self.live.get((cluster, addr))
        return b is not None and b.last_ms + b.timeout_ms >= now_ms()

    def live_info(self, cluster: str, addr: str) -> LiveInfo | None:
        b = self.live.get((cluster, addr))
        return LiveInfo(b.epoch, b.max_offset) if b is not None else None

    async def _scan(self) -> None:
        await asyncio.sleep(2.0)
        period = max(int(self.config.get("scanNotActiveBrokerInterval") or 5000), 100) / 1000
        while True:
            now = now_ms()
            for key, b in list(self.live.items()):
                if b.last_ms + b.timeout_ms < now:
                    del self.live[key]
                    log.warning("broker %s (%s) expired: no heartbeat for %d ms", b.addr, b.broker_name,
                                b.timeout_ms)
                    if b.conn is not None:
                        b.conn.close()
                    self._inactive(b)
            await asyncio.sleep(period)

    def _channel_closed(self, conn: RemotingConnection) -> None:
        for key, b in list(self.live.items()):
            if b.conn is conn:
                log.info("broker %s (%s, id %d): its connection closed", b.addr, b.broker_name, b.broker_id)
                del self.live[key]
                self._inactive(b)
                break

    def _inactive(self, b: BrokerLive) -> None:
        """``onBrokerInactive``: a master that went away gets a successor."""
        if b.broker_id != MASTER_ID:
            return
        res = self._elect(b.broker_name, None)
        self.elections.append((b.broker_name, time.monotonic()))
        log.info("broker %s's master %s went away; election: %s %s", b.broker_name, b.addr, res.code,
                 res.header)

    def _elect(self, broker_name: str, prefer: str | None) -> Result:
        res = self.replicas.elect_master(broker_name, self.is_alive, self.live_info, prefer)
        self._commit(res)
        hdr = res.header
        if isinstance(hdr, ElectMasterResponseHeader):
            g = self.replicas.groups.get(broker_name)
            cluster = g.cluster_name if g is not None else ""
            if hdr.new_master_address:
                live = self.live.get((cluster, hdr.new_master_address))
                if live is not None:
                    live.broker_id = MASTER_ID
            notify = self.config.bool("notifyBrokerRoleChanged")
            if notify and res.code == ResponseCode.SUCCESS and g is not None:
                self._notify(g.cluster_name, hdr, dict(g.ids))
        return res

    def _notify(self, cluster: str, hdr: ElectMasterResponseHeader, ids: dict[str, int]) -> None:
        master = hdr.new_master_address or ""
        targets = []
        if master and self.is_alive(cluster, master):
            targets.append((master, MASTER_ID))
        targets += [(a, i) for a, i in sorted(ids.items(), key=lambda t: t[1])
                    if a != master and self.is_alive(cluster, a)]
        for addr, broker_id in targets:
            h = NotifyBrokerRoleChangedRequestHeader(master_address=master, master_epoch=hdr.master_epoch,
                                                     sync_state_set_epoch=hdr.sync_state_set_epoch,
                                                     broker_id=broker_id)
            self.notified.append((addr, h))
            self._spawn(self._send_notify(addr, h))

    async def _send_notify(self, addr: str, h: NotifyBrokerRoleChangedRequestHeader) -> None:
        try:
            conn = await self._pool.get(addr)
            conn.oneway(request(RequestCode.NOTIFY_BROKER_ROLE_CHANGED, h, oneway=True))
        except Exception as exc:  # Java logs it and goes on: the broker polls GET_REPLICA_INFO too
            # a connection that fails is one line, anything else a bug of ours with its traceback
            log_failure(log, f"Notifying broker {addr} that its role changed", exc,
                        (RemotingIOError, OSError))
            self._pool.discard(addr)

    def _commit(self, res: Result) -> None:
        if res.events:
            self.events.append(res.events)
            for e in res.events:
                self.replicas.apply(e)

    # ------------------------------------------------------------------ requests
    def _handle(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand | None:
        handler = _HANDLERS.get(req.code)
        if handler is None:
            return req.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                                f" request type {req.code} not supported")
        try:
            out: RemotingCommand | None = handler(self, conn, req)
            return out
        except DecodeError as exc:
            return req.response(ResponseCode.SYSTEM_ERROR, f"{exc.reason}")
        except OSError as exc:
            log.error("controller: the event log cannot be written: %s", exc)
            return req.response(ResponseCode.SYSTEM_ERROR, f"the event log cannot be written: {exc}")

    def _answer(self, req: RemotingCommand, res: Result) -> RemotingCommand:
        self._commit(res)
        return response(req, res.header, res.code, res.remark, res.body)

    def _register(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        h = RegisterBrokerToControllerRequestHeader.from_ext(req.ext_fields)
        res = self.replicas.register_broker(h.cluster_name or "", h.broker_name or "", h.broker_address or "")
        out = self._answer(req, res)
        hdr = res.header
        if isinstance(hdr, RegisterBrokerToControllerResponseHeader) and (hdr.broker_id or 0) >= 0 \
                and res.code == ResponseCode.SUCCESS:
            key = (h.cluster_name or "", h.broker_address or "")
            self.live[key] = BrokerLive(
                h.cluster_name or "", h.broker_name or "", h.broker_address or "", hdr.broker_id or 0,
                now_ms(),
                h.heartbeat_timeout_millis or DEFAULT_HEARTBEAT_TIMEOUT_MS, conn,
                h.epoch if h.epoch is not None else -1, h.max_offset if h.max_offset is not None else -1)
        return out

    def _heartbeat(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        h = BrokerHeartbeatRequestHeader.from_ext(req.ext_fields)
        b = self.live.get((h.cluster_name, h.broker_addr))
        if b is not None:
            b.last_ms = now_ms()
            epoch = h.epoch if h.epoch is not None else -1
            max_offset = h.max_offset if h.max_offset is not None else -1
            if epoch > b.epoch or (epoch == b.epoch and max_offset > b.max_offset):
                b.epoch, b.max_offset = epoch, max_offset
                b.confirm_offset = h.confirm_offset if h.confirm_offset is not None else -1
        return req.response(ResponseCode.SUCCESS, "Heart beat success")

    def _replica_info(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        h = GetReplicaInfoRequestHeader.from_ext(req.ext_fields)
        return self._answer(req, self.replicas.get_replica_info(h.broker_name or "", h.broker_address))

    def _alter(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        h = AlterSyncStateSetRequestHeader.from_ext(req.ext_fields)
        body = SyncStateSet.decode(req.body or b"{}")
        members = [str(m) for m in body.sync_state_set]
        return self._answer(req, self.replicas.alter_sync_state_set(
            h.broker_name or "", h.master_address, h.master_epoch or 0, members, body.sync_state_set_epoch,
            self.is_alive))

    def _elect_request(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        h = ElectMasterRequestHeader.from_ext(req.ext_fields)
        res = self._elect(h.broker_name, h.broker_address or None)
        return response(req, res.header, res.code, res.remark, res.body)

    def _metadata(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        self_id = self.config.get("controllerDLegerSelfId")
        hdr = GetMetaDataResponseHeader(group=self.config.get("controllerDLegerGroup"),
                                        controller_leader_id=self_id, controller_leader_address=self.address,
                                        is_leader=True, peers=f"{self_id}:{self.address};")
        return response(req, hdr)

    def _sync_state_data(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand | None:
        try:
            names = json.loads(req.body or b"null")
        except ValueError:
            names = None
        if not isinstance(names, list) or not names:
            return req.response(ResponseCode.SUCCESS, None)   # createResponseCommand(null): code 0
        return self._answer(req, self.replicas.get_sync_state_data(str(n) for n in names))

    def _clean(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        h = CleanControllerBrokerDataRequestHeader.from_ext(req.ext_fields)
        return self._answer(req, self.replicas.clean_broker_data(
            h.cluster_name or "", h.broker_name, h.broker_address, bool(h.is_clean_living_broker),
            self.is_alive))

    def _get_config(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        return req.response(ResponseCode.SUCCESS, None, body=format_properties(self.config.values).encode())


_HANDLERS: dict[int, Any] = {
    RequestCode.CONTROLLER_REGISTER_BROKER: Controller._register,
    RequestCode.BROKER_HEARTBEAT: Controller._heartbeat,
    RequestCode.CONTROLLER_GET_REPLICA_INFO: Controller._replica_info,
    RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET: Controller._alter,
    RequestCode.CONTROLLER_ELECT_MASTER: Controller._elect_request,
    RequestCode.CONTROLLER_GET_METADATA_INFO: Controller._metadata,
    RequestCode.CONTROLLER_GET_SYNC_STATE_DATA: Controller._sync_state_data,
    RequestCode.CLEAN_BROKER_DATA: Controller._clean,
    RequestCode.GET_CONTROLLER_CONFIG: Controller._get_config,
}
