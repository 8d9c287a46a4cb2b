# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The name server process: a remoting listener over :mod:`.processor`, plus its two timers.

``async with NameServer(config, host=..., port=...) as ns`` loads the KV store, listens, and
starts

* the broker scan (``NamesrvController``'s ``scanNotActiveBroker`` task): every
  ``scanNotActiveBrokerInterval`` ms, brokers whose last registration is older than
  ``brokerChannelExpiredTime`` ms are dropped and their connections closed;
* the idle-connection check (Netty's ``IdleStateHandler`` in ``NettyRemotingServer``): a
  connection with no request for ``serverChannelMaxIdleTimeSeconds`` is closed.

With ``enableControllerInNamesrv=true`` (5.0.0) the process also runs a controller
(:class:`reference_broker.controller.Controller`) on the address ``controllerDLegerPeers`` gives
``controllerDLegerSelfId`` (one node), with its event log under ``controllerStorePath``.

A connection that closes, for whatever reason, drops the broker that registered over it at
once (``BrokerHousekeepingService``). A malformed frame closes only its own connection
(:mod:`wire.aio`). Name servers never talk to each other: brokers register with each of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reference_broker.config import NamesrvConfig
from reference_broker.periodic import every, log_failure
from reference_broker.runtime import ServiceError
from wire import RemotingCommand
from wire.aio import RemotingConnection, RemotingServer, start_server

from ..acl import NAMESRV_CHECKED_CODES, AclConfigError, AclGuard
from ..bodies import preparer
from .kvconfig import KVConfigError, KVConfigManager
from .processor import BODIES, NamesrvContext, process
from .routeinfo import RouteInfoManager, now_ms

if TYPE_CHECKING:
    from ..controller import Controller

__all__ = ["NameServer"]

log = logging.getLogger("reference_broker.namesrv")

_LAST_ACTIVE = "namesrv.last_active"


def _address(peer: tuple[str, int]) -> str:
    # RemotingHelper.parseChannelRemoteAddr: "ip:port"
    return f"{peer[0]}:{peer[1]}"


class NameServer:
    """A reference name server (see the module docstring)."""

    def __init__(self, config: NamesrvConfig, *, host: str = "127.0.0.1", port: int | None = None,
                 clock: Callable[[], int] = now_ms) -> None:
        self.config = config
        self.host = host
        self._port = config.listen_port if port is None else port
        store = config.get("configStorePath") or None
        self.context = NamesrvContext(config, RouteInfoManager(clock),
                                      KVConfigManager(config.kv_config_path), config_store_path=store)
        self._server: RemotingServer | None = None
        self._tasks: list[asyncio.Task[None]] = []
        #: the embedded controller (``enableControllerInNamesrv``)
        self.controller: Controller | None = None
        #: plain ACL (``aclEnable=true``, ours): the requests that change the name server's state,
        #: other than a broker's registration, need an admin account's signature
        self.acl: AclGuard | None = None
        if config.bool("aclEnable"):
            self.acl = AclGuard(config.get("rocketmqHome") or None, name="namesrv",
                                admin_codes=NAMESRV_CHECKED_CODES, checked=NAMESRV_CHECKED_CODES)

    @property
    def routes(self) -> RouteInfoManager:
        return self.context.routes

    @property
    def kv(self) -> KVConfigManager:
        return self.context.kv

    @property
    def port(self) -> int:
        """The bound port (the ephemeral one when started with port 0)."""
        return self._port

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def connections(self) -> set[RemotingConnection]:
        return set(self._server.connections) if self._server is not None else set()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> NameServer:
        try:
            self.kv.load()
        except KVConfigError as exc:
            raise ServiceError(str(exc)) from None
        if self.acl is not None:
            try:
                self.acl.start()
            except AclConfigError as exc:
                raise ServiceError(f"the ACL files cannot be used: {exc}") from None
        self._server = await start_server(self._handle, self.host, self._port, name="namesrv",
                                          on_connect=self._on_connect, on_close=self._on_close,
                                          prepare=preparer(BODIES),
                                          max_buffered=self.config.max_buffered_bytes,
                                          frame_timeout=self.config.frame_read_timeout_s)
        self._port = self._server.port
        if self.config.bool("enableControllerInNamesrv"):
            try:
                self.controller = await self._start_controller()
            except BaseException:
                await self._server.close()
                raise
        loop = asyncio.get_running_loop()
        scan = every(max(self.config.scan_interval_ms, 1) / 1000, self._scan_brokers, "scanning brokers", log)
        self._tasks = [loop.create_task(scan), loop.create_task(self._close_idle())]
        log.info("name server listening on %s", self.address)
        return self

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.controller is not None:
            await self.controller.stop()
        if self._server is not None:
            await self._server.close()
            log.info("name server on %s stopped", self.address)
        if self.acl is not None:
            await self.acl.stop()

    async def _start_controller(self) -> Controller:
        from pathlib import Path

        from ..controller import Controller, ControllerConfig, EventLogError

        keys = ("controllerDLegerGroup", "controllerDLegerPeers", "controllerDLegerSelfId",
                "scanNotActiveBrokerInterval", "enableElectUncleanMaster", "notifyBrokerRoleChanged")
        cfg = ControllerConfig({k: self.config.get(k) for k in keys})
        if self.config.get("scanNotActiveBrokerInterval") == "10000" and \
                "scanNotActiveBrokerInterval" not in self.config.given:
            cfg.values["scanNotActiveBrokerInterval"] = "5000"  # the two configs' own defaults differ
        store = self.config.get("controllerStorePath") or str(Path.home() / "DledgerController")
        addr = cfg.self_address
        if addr is None:
            raise ServiceError("enableControllerInNamesrv: controllerDLegerPeers has no address for "
                               f"controllerDLegerSelfId {cfg.get('controllerDLegerSelfId')!r}")
        host, _, port = addr.rpartition(":")
        try:
            ctl = Controller(cfg, host=host or self.host, port=int(port), store_path=store)
            await ctl.start()
        except EventLogError as exc:
            raise ServiceError(f"the controller's event log cannot be read: {exc}") from None
        except OSError as exc:
            raise ServiceError(f"the controller cannot listen on {addr}: {exc}") from None
        log.info("The ControllerManager boot success on %s", ctl.address)
        return ctl

    async def __aenter__(self) -> NameServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ connections

    def _handle(self, conn: RemotingConnection, request: RemotingCommand) -> RemotingCommand | None:
        conn.state[_LAST_ACTIVE] = time.monotonic()
        if self.acl is not None:
            refused = self.acl.refusal(conn.peer[0], request)
            if refused is not None:
                return refused
        return process(self.context, request, conn)

    def _on_connect(self, conn: RemotingConnection) -> None:
        conn.state[_LAST_ACTIVE] = time.monotonic()

    def _on_close(self, conn: RemotingConnection) -> None:
        self.routes.on_channel_destroy(_address(conn.peer), conn)

    def _scan_brokers(self) -> None:
        for addr, channel in self.routes.scan_not_active_broker(self.config.broker_expired_ms):
            log.warning("broker %s expired: no registration for %d ms", addr, self.config.broker_expired_ms)
            if isinstance(channel, RemotingConnection):
                channel.close()

    async def _close_idle(self) -> None:
        while True:
            idle = self.config.int("serverChannelMaxIdleTimeSeconds")
            await asyncio.sleep(min(1.0, max(idle, 1) / 4))
            if idle <= 0:
                continue
            now = time.monotonic()
            try:
                for conn in self.connections:
                    last: Any = conn.state.get(_LAST_ACTIVE, now)
                    if now - last >= idle:
                        log.warning("closing %s: idle for %d s", _address(conn.peer), idle)
                        conn.close()
            except Exception as exc:  # a bug: logged with its traceback, and the loop goes on
                log_failure(log, "closing idle connections", exc, ())
