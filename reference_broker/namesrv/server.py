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

The route tables and the event loop
-----------------------------------
Java guards the route tables with a read-write lock: a registration holds the write lock while it
records each of its topics, and a route query waits for it. Here the tables live on the event
loop, and a registration of 100,000 topics is a second of work that would hold every other
connection that long. So every request that reads or changes the tables, the closing of a
broker's connection and the broker scan go through one :class:`RouteGate`, in the order they
come: one whose work follows the number of topics runs in steps (``*_steps`` in
:mod:`.routeinfo`), and the loop serves the other connections between steps, while the requests
that need the tables wait their turn, as they would wait for Java's lock. The KV store and the
configuration requests never wait (Java locks them apart). A change that has begun finishes even
if the connection that asked for it closes, as in Java.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from reference_broker.config import NamesrvConfig
from reference_broker.periodic import every, log_failure
from reference_broker.runtime import ServiceError
from wire import RemotingCommand
from wire.aio import HandlerResult, RemotingConnection, RemotingServer, start_server

from ..acl import NAMESRV_CHECKED_CODES, AclConfigError, AclGuard
from ..bodies import preparer, resumed
from ..steps import Steps
from .kvconfig import KVConfigError, KVConfigManager
from .processor import BODIES, HANDLERS, ROUTE_FREE_CODES, NamesrvContext, process, process_steps
from .routeinfo import RouteInfoManager, now_ms

if TYPE_CHECKING:
    from ..controller import Controller

__all__ = ["NameServer", "RouteGate"]

log = logging.getLogger("reference_broker.namesrv")

_LAST_ACTIVE = "namesrv.last_active"

T = TypeVar("T")


class RouteGate:
    """The route tables' lock, on one event loop (see the module notes).

    :meth:`run` takes a change or query in steps. When nothing else holds the tables it runs at
    once, and one that finishes in its first step (nearly all) returns its result then. One
    that yields goes on in a task, a step per turn of the loop, and :meth:`run` returns a future
    of its result; work that comes meanwhile waits in a queue, first come first served.
    """

    def __init__(self) -> None:
        self._queue: deque[tuple[Steps[Any], asyncio.Future[Any], object, object]] = deque()
        self._runner: asyncio.Task[None] | None = None
        #: turns the loop got between steps, over the gate's life (tests count them)
        self.turns = 0

    @property
    def busy(self) -> bool:
        """True while work in steps holds the tables."""
        return self._runner is not None

    def run(self, steps: Steps[T], conn: object = None) -> T | asyncio.Future[T]:
        """Run ``steps`` in its turn: its result, or a future of it. ``conn`` is the connection
        whose request this is (its body, decoded in a worker thread, stays available)."""
        loop = asyncio.get_running_loop()
        if self._runner is not None:
            fut: asyncio.Future[T] = loop.create_future()
            self._queue.append((steps, fut, conn, getattr(conn, "prepared", None)))
            return fut
        try:
            next(steps)
        except StopIteration as stop:
            result: T = stop.value
            return result
        fut = loop.create_future()
        self._runner = loop.create_task(self._run(steps, fut))
        return fut

    async def _run(self, steps: Steps[Any], fut: asyncio.Future[Any]) -> None:
        try:
            while True:
                await asyncio.sleep(0)  # the loop's turn: I/O and every other ready callback
                self.turns += 1
                if self._step(steps, fut):
                    while self._queue:
                        steps, fut, conn, prepared = self._queue.popleft()
                        with resumed(conn, prepared):
                            if not self._step(steps, fut):
                                break
                    else:
                        return
        finally:
            self._runner = None
            while self._queue:  # stopped: the server is closing
                _, waiting, _, _ = self._queue.popleft()
                waiting.cancel()

    @staticmethod
    def _step(steps: Steps[Any], fut: asyncio.Future[Any]) -> bool:
        """One step; True when ``steps`` is done (its future then has its outcome)."""
        try:
            next(steps)
        except StopIteration as stop:
            if not fut.done():  # a request whose connection closed meanwhile: its future is cancelled
                fut.set_result(stop.value)
            return True
        except Exception as exc:  # a bug: the request's answer says so (SYSTEM_ERROR), as any handler's
            if not fut.done():
                fut.set_exception(exc)
            else:
                log_failure(log, "changing the route tables", exc, ())
            return True
        return False

    async def close(self) -> None:
        runner = self._runner
        if runner is not None:
            runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await runner


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
        #: the route tables' lock (see the module notes)
        self.gate = RouteGate()
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
        await self.gate.close()
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

    def _handle(self, conn: RemotingConnection, request: RemotingCommand) -> HandlerResult:
        conn.state[_LAST_ACTIVE] = time.monotonic()
        if self.acl is not None:
            refused = self.acl.refusal(conn.peer[0], request)
            if refused is not None:
                return refused
        if request.code in ROUTE_FREE_CODES or request.code not in HANDLERS:
            return process(self.context, request, conn)
        return self.gate.run(process_steps(self.context, request, conn), conn)

    def _on_connect(self, conn: RemotingConnection) -> None:
        conn.state[_LAST_ACTIVE] = time.monotonic()

    def _on_close(self, conn: RemotingConnection) -> None:
        self.gate.run(self.routes.on_channel_destroy_steps(_address(conn.peer), conn))

    def _scan_brokers(self) -> None:
        self.gate.run(self._scan_steps())

    def _scan_steps(self) -> Steps[None]:
        expired_ms = self.config.broker_expired_ms
        for addr, channel in (yield from self.routes.scan_not_active_broker_steps(expired_ms)):
            log.warning("broker %s expired: no registration for %d ms", addr, expired_ms)
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
