# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The reference broker (``BrokerController``): wiring, start-up, periodic work, shutdown.

Theory of operation
-------------------
``async with Broker(config, host=..., port=...) as b`` (or ``await b.start()`` / ``await b.stop()``)
runs one broker on the current event loop:

1. **load** ``config/topics.json``, ``consumerOffset.json``, ``subscriptionGroup.json`` and
   ``delayOffset.json`` under ``storePathRootDir`` (each with its ``.bak`` fallback; a file that
   exists but neither it nor its backup decodes stops the start, as ``BrokerController.initialize``
   does);
2. **listen** on ``host:port`` (``port=None`` → ``listenPort``, 0 → an ephemeral port). Requests
   that arrive before step 4 wait for it;
3. **start the store** with the store host ``brokerIP1:<bound port>``: the address written into
   every record and offset msgId and registered with the name servers is the real one;
4. start delayed delivery (on a master), then **register** with every name server and start the
   periodic work: re-registration (first after 10 s, then every ``registerNameServerPeriod``
   clamped to 10–60 s, as Java), consumer-offset persistence every
   ``flushConsumerOffsetInterval``, delay-offset persistence every ``flushDelayOffsetInterval``,
   and the 10 s scan that drops clients idle for 120 s (``ClientHousekeepingService``).

Stop: periodic work ends, the listener and every client connection close (parked pulls go with
them), delayed delivery stops, the offsets are persisted, the store shuts down, and
UNREGISTER_BROKER goes to each name server.

**Controller mode** (``enableControllerMode=true``, 5.x): the broker starts isolated, without
registering, and its :class:`~reference_broker.ha.replicas.ReplicasManager` asks the controller for
a role; the HA side is AutoSwitch (:mod:`reference_broker.ha.autoswitch`, with the epoch file).
Each role change (:meth:`Broker.controller_role_changed`) sets ``brokerId`` and ``brokerRole``,
the store's role, delayed delivery and the slave's table copy, and registers at once.

Requests are dispatched by code through :data:`reference_broker.broker.processors.HANDLERS`;
each handler takes ``(broker, connection, request)`` and returns the response, ``None``, or an
awaitable of either (:mod:`wire.aio` runs awaitables as tasks). An unknown code gets
REQUEST_CODE_NOT_SUPPORTED with Java's remark ``" request type <code> not supported"``
(``AdminBrokerProcessor.getUnknownCmdResponse``, the broker's default processor). Responses keep
the request's serialize type (the 4.9.4–4.9.8 rule). The SEND_MESSAGE(_V2) requests that one read
brings (a pipelined producer's) are handled together (:meth:`Broker._handle_sends`,
:func:`~reference_broker.broker.processors.send.send_messages`): the same answers, with their
messages put as one run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from dataclasses import replace
from typing import Any

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import (
    BufferBudget,
    Gathered,
    HandlerResult,
    Later,
    LaterRun,
    RemotingConnection,
    RemotingIOError,
    RemotingServer,
)
from wire.bodies import TopicConfig, TopicConfigSerializeWrapper
from wire.headers import NotifyConsumerIdsChangedRequestHeader, request

from ..acl import BROKER_ADMIN_CODES, AclConfigError, AclGuard
from ..bodies import preparer, request_body
from ..config import BrokerConfig
from ..ha import HAClient, HAConfig, HAService, SlaveSynchronize
from ..ha.autoswitch import AutoSwitchHAService, ControllerModeConfig
from ..ha.epochfile import EpochFile, EpochFileError
from ..ha.replicas import ReplicasManager
from ..ha.sync import SYNC_INITIAL_DELAY_S, SYNC_PERIOD_S
from ..periodic import every
from ..runtime import ServiceError
from ..store import MessageStore, StoreConfig, StoreError
from . import constants as C
from .clients import ConsumerManager, ProducerManager, RebalanceLockManager
from .longpoll import PullRequestHoldService
from .offsets import ConsumerOffsetManager
from .outer import BrokerIdentity, BrokerOuterAPI
from .processors import BODIES, HANDLERS
from .processors.client import heartbeat_body
from .processors.send import send_message, send_messages
from .schedule import ScheduleMessageService
from .stats import GroupGetStats, StatsItems
from .subscriptions import SubscriptionGroupManager
from .topics import DataVersion, TopicConfigManager
from .transaction import TransactionService

__all__ = ["Broker"]

#: the requests one read may bring many of that are handled together (:meth:`Broker._handle_sends`)
_SEND_CODES = frozenset({int(RequestCode.SEND_MESSAGE), int(RequestCode.SEND_MESSAGE_V2)})

log = logging.getLogger("reference_broker.broker")

#: ``BrokerController.start``: the first periodic registration comes after 10 s
REGISTER_INITIAL_DELAY_S = 10.0
#: ``ClientHousekeepingService``: the idle-client scan runs every 10 s
HOUSEKEEPING_INTERVAL_S = 10.0


class Broker:
    """One reference broker; see the module docstring."""

    def __init__(self, config: BrokerConfig, *, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.config = config
        self.host = host
        self._port_arg = config.listen_port if port is None else port
        root = config.store_root / "config"
        self.topics = TopicConfigManager(config, root / "topics.json")
        self.offsets = ConsumerOffsetManager(root / "consumerOffset.json")
        self.groups = SubscriptionGroupManager(
            root / "subscriptionGroup.json", auto_create=config.auto_create_subscription_group
        )
        self.schedule = ScheduleMessageService(root / "delayOffset.json", config.message_delay_levels)
        self.consumers = ConsumerManager(notify=self.notify_consumer_ids_changed)
        self.producers = ProducerManager()
        self.locks = RebalanceLockManager()
        self.holds = PullRequestHoldService()
        self.group_stats = GroupGetStats()
        #: transactional messages: END_TRANSACTION and the check service (started on a master)
        self.transactions = TransactionService(self)
        #: TOPIC_PUT_NUMS and GROUP_GET_NUMS for VIEW_BROKER_STATS_DATA
        self.stats = StatsItems()
        self.outer = BrokerOuterAPI(config.namesrv_addrs, timeout_ms=config.int("registerBrokerTimeoutMills"))
        #: ``Configuration``'s data version (GET_BROKER_CONFIG's ``version``; UPDATE_BROKER_CONFIG moves it)
        self.config_version = DataVersion()
        #: plain ACL (``aclEnable=true``): the accounts of ``rocketmqHome``'s ACL files, checked on every
        #: request before its handler, as Java's ``PlainAccessValidator`` hook does
        self.acl: AclGuard | None = None
        if config.bool("aclEnable"):
            self.acl = AclGuard(config.get("rocketmqHome") or None, name=f"broker {config.broker_name}",
                                admin_codes=BROKER_ADMIN_CODES)
        self._store: MessageStore | None = None
        self._server: RemotingServer | None = None
        #: the VIP ("fast") channel on listenPort − 2, which Java brokers' slaves use for GET_ALL_TOPIC_CONFIG
        self._vip_server: RemotingServer | None = None
        self._bound_port: int | None = None
        self._ready: asyncio.Event | None = None
        self._running = False
        #: the sends of one read are handled together (False: one at a time; the differential
        #: tests compare both)
        self.batch_sends = True
        self._tasks: set[asyncio.Task[Any]] = set()
        self._periodic: list[asyncio.Task[None]] = []
        #: the master's remoting and HA addresses, as the name server told a slave
        self.master_addr: str | None = None
        self.master_ha_addr: str | None = None
        #: replication: the HA listener (every broker has one, as in Java), a slave's client to its
        #: master and its 10 s copy of the master's tables
        self.ha_config = HAConfig.from_broker_config(config)
        self.ha: HAService | None = None
        self.ha_client: HAClient | None = None
        self.slave_sync: SlaveSynchronize | None = None
        #: controller mode (5.x): AutoSwitch replication and the controller client
        self.controller_mode = config.bool("enableControllerMode")
        self.autoswitch: AutoSwitchHAService | None = None
        self.replicas: ReplicasManager | None = None
        #: ``isIsolated``: a controller-mode broker registers nowhere until it has a role
        self.isolated = self.controller_mode
        self.refresh_settings()

    def refresh_settings(self) -> None:
        """Copy the settings the request paths read into attributes (after a config change)."""
        cfg = self.config
        self.region_id = cfg.region_id
        self.trace_on_text = "true" if cfg.trace_on else "false"
        self.cluster_name = cfg.cluster_name
        self.permission = cfg.broker_permission
        self.start_accept_ts = cfg.int("startAcceptSendRequestTimeStamp")
        self.slave_read_enable = cfg.bool("slaveReadEnable")
        self.long_polling_enable = cfg.bool("longPollingEnable")
        self.short_polling_ms = cfg.int("shortPollingTimeMills")
        self.property_filter_enable = cfg.bool("enablePropertyFilter")
        self.offset_check_in_slave = cfg.bool("offsetCheckInSlave")
        self.groups.auto_create = cfg.auto_create_subscription_group

    # ------------------------------------------------------------------ properties

    @property
    def store(self) -> MessageStore:
        if self._store is None:
            raise RuntimeError("the broker is not started")
        return self._store

    @property
    def port(self) -> int:
        if self._bound_port is None:
            raise RuntimeError("the broker is not listening")
        return self._bound_port

    @property
    def address(self) -> str:
        """``brokerIP1:port``: what the broker registers and writes into offset msgIds."""
        return f"{self.config.broker_ip1}:{self.port}"

    @property
    def store_host(self) -> tuple[str, int]:
        return (self.config.broker_ip1, self.port)

    @property
    def ha_server_addr(self) -> str:
        """``brokerIP2:haListenPort``, the port actually bound: what slaves are told to dial."""
        if self.autoswitch is not None:
            port = self.autoswitch.port
        else:
            port = self.ha.port if self.ha is not None else self.config.ha_listen_port
        return f"{self.config.get('brokerIP2')}:{port}"

    @property
    def identity(self) -> BrokerIdentity:
        cfg = self.config
        return BrokerIdentity(
            cfg.cluster_name, cfg.broker_name, cfg.broker_id, self.address, self.ha_server_addr,
            cfg.bool("enableSlaveActingMaster") if self.controller_mode else None,
        )

    @property
    def is_slave(self) -> bool:
        return not self.config.is_master

    @property
    def connections(self) -> set[RemotingConnection]:
        out: set[RemotingConnection] = set()
        for server in (self._server, self._vip_server):
            if server is not None:
                out |= server.connections
        return out

    @property
    def vip_port(self) -> int | None:
        """The VIP channel's port (``listenPort − 2``), or None when it is not open."""
        return self._vip_server.port if self._vip_server is not None else None

    # ------------------------------------------------------------------ life cycle

    async def __aenter__(self) -> Broker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        if self._running:
            return
        self._ready = asyncio.Event()
        try:
            store_config = StoreConfig.from_broker_config(self.config)  # its host once the port is bound
        except ValueError as exc:  # a store setting the store cannot work with (mappedFileSizeCommitLog=0)
            raise ServiceError(f"{self.config.source}: {exc}") from None
        for manager in (self.topics, self.offsets, self.groups, self.schedule):
            if not manager.load():
                raise ServiceError(f"cannot load {manager.load_error or manager.path}; repair the file or "
                                   "move it away (the broker starts empty without it)")
        if self.acl is not None:
            try:
                self.acl.start()
            except AclConfigError as exc:
                raise ServiceError(f"the ACL files cannot be used: {exc}") from None
        # both listeners share one bound on unfinished frames, and decode large requests off the loop
        budget = BufferBudget(self.config.max_buffered_bytes, "broker")
        limits: dict[str, Any] = {"prepare": preparer(BODIES), "budget": budget,
                                  "frame_timeout": self.config.frame_read_timeout_s,
                                  "batch": self._handle_sends, "batch_codes": _SEND_CODES}
        self._server = await RemotingServer(self._handle, name="broker", on_close=self._channel_closed,
                                            **limits).start(self.host, self._port_arg)
        self._bound_port = self._server.port
        if self._port_arg > 2:
            # mirrors BrokerController.initialize: fastRemotingServer on listenPort - 2; a port we
            # cannot have is not fatal here (Java would not start), since no client needs it
            try:
                self._vip_server = await RemotingServer(
                    self._handle, name="broker-vip", on_close=self._channel_closed, **limits
                ).start(self.host, self._port_arg - 2)
            except OSError as exc:
                log.warning("the VIP channel on port %d is not available: %s", self._port_arg - 2, exc)
        try:
            self._store = MessageStore(replace(store_config, store_host=self.store_host))
            await self._store.start()
        except BaseException as exc:
            await self._server.close()
            self._server = None
            if self._vip_server is not None:
                await self._vip_server.close()
                self._vip_server = None
            if self.acl is not None:
                await self.acl.stop()
            if isinstance(exc, StoreError):
                raise ServiceError(f"the message store cannot start: {exc}") from exc
            raise
        self._store.add_dispatch_listener(self.holds.notify)
        self._store.add_dispatch_listener(self.schedule.notify)
        try:
            await self._start_ha()
        except BaseException:
            await self._store.shutdown()
            for server in (self._server, self._vip_server):
                if server is not None:
                    await server.close()
            self._server = self._vip_server = None
            raise
        if self.config.is_master and not self.controller_mode:
            self.schedule.start(self._store, self._store.put_message)
            self.transactions.start()
        self._running = True
        self._ready.set()
        log.info(
            "The broker[%s, %s] boot success. serializeType=JSON and name server is %s",
            self.config.broker_name,
            self.address,
            ";".join(self.config.namesrv_addrs) or "none",
        )
        if not self.isolated:
            try:
                await self.register_all(check_order=True)
            except Exception:  # registration never stops the broker (a name server may come later)
                log.exception("registerBrokerAll failed")
        period = max(10_000, min(self.config.register_period_ms, 60_000)) / 1000.0
        self._every(REGISTER_INITIAL_DELAY_S, period, self._register_periodically, "registerBrokerAll")
        if self.replicas is not None:
            self.replicas.start()
        self._every(10.0, self.config.int("flushConsumerOffsetInterval") / 1000.0, self._persist_offsets,
                    "persisting the consumer offsets")
        self._every(10.0, self.config.int("flushDelayOffsetInterval") / 1000.0, self._persist_delay,
                    "persisting the delay offsets")
        self._every(HOUSEKEEPING_INTERVAL_S, HOUSEKEEPING_INTERVAL_S, self.scan_idle_clients,
                    "scanning idle clients")
        if self.slave_sync is not None:
            self._every(SYNC_INITIAL_DELAY_S, SYNC_PERIOD_S, self.slave_sync.sync_all,
                        "copying the master's tables")

    async def _register_periodically(self) -> None:
        if not self.isolated:
            await self.register_all(check_order=True, force=self.config.bool("forceRegister"))

    async def _start_ha(self) -> None:
        """The HA listener on listenPort + 1 (``BrokerStartup`` sets haListenPort so, whatever the
        file says; an ephemeral listen port gets an ephemeral HA port), and on a slave the client
        and the table copy."""
        assert self._store is not None
        if self.controller_mode:
            await self._start_autoswitch()
            return
        self.ha = HAService(self._store, self.ha_config)
        port = self.port + 1 if self._port_arg else 0
        try:
            await self.ha.start(self.host, port)
        except OSError as exc:
            self.ha = None
            raise ServiceError(f"the HA port {port} is not available: {exc}") from exc
        if self.is_slave:
            self.ha_client = HAClient(self._store, self.ha_config)
            await self.ha_client.start()
            self.slave_sync = SlaveSynchronize(self)

    async def _start_autoswitch(self) -> None:
        assert self._store is not None
        epochs = EpochFile(self.config.get("storePathEpochFile"))
        try:
            epochs.load()
        except EpochFileError as exc:
            raise ServiceError(f"the epoch file cannot be read: {exc}") from exc
        self.autoswitch = AutoSwitchHAService(self._store, self.ha_config,
                                              ControllerModeConfig.from_broker_config(self.config),
                                              self.address, epochs)
        port = self.port + 1 if self._port_arg else 0
        try:
            await self.autoswitch.start(self.host, port)
        except OSError as exc:
            self.autoswitch = None
            raise ServiceError(f"the HA port {port} is not available: {exc}") from exc
        # a controller-mode broker is a slave until the controller says otherwise
        self._set_role("SLAVE", self.config.broker_id)
        self.slave_sync = SlaveSynchronize(self)
        self.replicas = ReplicasManager(self, self.autoswitch)
        self.autoswitch.on_confirm = self._confirm_moved

    def _confirm_moved(self) -> None:
        """The confirm offset moved: parked pulls may now see messages they could not."""
        for topic, queue_id in list(self.holds.parked):
            self.holds.wake(topic, queue_id)

    def _set_role(self, role: str, broker_id: int) -> None:
        self.config.values["brokerRole"] = role
        self.config.values["brokerId"] = str(broker_id)
        if self._store is not None:
            self._store.set_broker_role(role)

    async def controller_role_changed(self, *, master: bool, broker_id: int, master_addr: str | None) -> None:
        """The controller changed this broker's role (``ReplicasManager.changeToMaster/Slave``)."""
        assert self._store is not None
        self._set_role("SYNC_MASTER" if master else "SLAVE", broker_id)
        if master:
            if not self.schedule.running:
                self.schedule.start(self._store, self._store.put_message)
        else:
            await self.schedule.stop()
        if self.slave_sync is not None:
            self.slave_sync.master_addr = master_addr
        self.master_addr = master_addr
        self.isolated = False
        if self._running:
            try:
                await self.register_all(check_order=True)
            except Exception:
                log.exception("registerBrokerAll after a role change failed")
            if self.slave_sync is not None and master_addr:
                self.spawn(self.slave_sync.sync_all())

    async def _stop_ha(self) -> None:
        if self.replicas is not None:
            await self.replicas.stop()
        if self.autoswitch is not None:
            await self.autoswitch.stop()
        if self.ha_client is not None:
            await self.ha_client.stop()
        if self.ha is not None:
            await self.ha.stop()
        if self.slave_sync is not None:
            await self.slave_sync.close()

    async def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        for t in self._periodic:
            t.cancel()
        for t in self._periodic:
            # a periodic loop ends only when cancelled (it logs and survives anything else)
            with contextlib.suppress(asyncio.CancelledError):
                await t
        self._periodic.clear()
        for server in (self._server, self._vip_server):
            if server is not None:
                await server.close()
        await self.schedule.stop()
        await self.transactions.stop()
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        # what a task raised instead of its cancellation is logged by _task_done
        await asyncio.gather(*tasks, return_exceptions=True)
        self.schedule.persist()
        self.offsets.persist()
        await self._stop_ha()
        if self._store is not None:
            await self._store.shutdown()
        await self.outer.unregister_broker_all(self.identity)
        await self.outer.close()
        if self.acl is not None:
            await self.acl.stop()
        log.info("the broker %s shut down", self.config.broker_name)

    # ------------------------------------------------------------------ background work

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` in the background, cancelled at stop."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    def _every(self, first_s: float, period_s: float, job: Callable[[], object], what: str) -> None:
        self._periodic.append(asyncio.ensure_future(every(period_s, job, what, log, first=first_s)))

    def _persist_offsets(self) -> None:
        self.offsets.persist()

    def _persist_delay(self) -> None:
        if self.schedule.running:
            self.schedule.persist()

    def scan_idle_clients(self) -> None:
        """Drop (and close) clients that sent no heartbeat for 120 s (``scanExceptionChannel``),
        and close connections that sent nothing for ``serverChannelMaxIdleTimeSeconds`` (Netty's
        ``IdleStateHandler`` on the broker's channels; 0 turns it off)."""
        for ch in self.producers.scan_not_active() + self.consumers.scan_not_active():
            if isinstance(ch, RemotingConnection):
                ch.close()
        idle_s = self.config.int("serverChannelMaxIdleTimeSeconds")
        if idle_s > 0:
            now = time.monotonic()
            for conn in self.connections:
                if now - conn.state.setdefault("last_request", now) > idle_s:
                    log.info("closing %s:%d: no request for %d s", conn.peer[0], conn.peer[1], idle_s)
                    conn.close()

    # ------------------------------------------------------------------ name servers

    def register_wrapper(
        self, topics: TopicConfigSerializeWrapper | None = None
    ) -> TopicConfigSerializeWrapper:
        """The topic table to register: with a broker permission that is not read-write, every
        topic is registered with that permission instead (``registerBrokerAll``)."""
        wrapper = topics or self.topics.wrapper()
        perm = self.config.broker_permission
        if C.is_writeable(perm) and C.is_readable(perm):
            return wrapper
        table = {
            name: TopicConfig(
                topic_name=tc.topic_name,
                read_queue_nums=tc.read_queue_nums,
                write_queue_nums=tc.write_queue_nums,
                perm=perm,
            )
            for name, tc in wrapper.topic_config_table.items()
        }
        return replace(wrapper, topic_config_table=table)

    async def register_all(
        self,
        *,
        oneway: bool = False,
        check_order: bool = True,
        topics: TopicConfigSerializeWrapper | None = None,
        force: bool = True,
    ) -> None:
        """``registerBrokerAll`` / ``registerIncrementBrokerData``: register with every name server;
        unless ``force``, only when a name server's QUERY_DATA_VERSION says the topic table changed
        (``needRegister``; the periodic registration with ``forceRegister=false``)."""
        wrapper = self.register_wrapper(topics)
        if not force and not await self.outer.need_register(self.identity, wrapper):
            return
        results = await self.outer.register_broker_all(
            self.identity,
            wrapper,
            oneway=oneway,
            compressed=self.config.bool("compressedRegister"),
        )
        if results:
            first = results[0]
            if first.ha_server_addr is not None:
                self.master_ha_addr = first.ha_server_addr
                if self.ha_client is not None:
                    self.ha_client.update_master_address(first.ha_server_addr)
                if self.autoswitch is not None and self.autoswitch.role == "slave":
                    self.autoswitch.update_ha_master_address(first.ha_server_addr)
            if not self.controller_mode:   # in controller mode the controller names the master
                self.master_addr = first.master_addr
                if self.slave_sync is not None:
                    self.slave_sync.master_addr = first.master_addr
            if check_order:
                self.topics.update_order_topic_config(first.kv_table)

    def register_soon(self, *, oneway: bool = True) -> None:
        """Re-register in the background (after a topic was created on the fly: oneway, as
        ``registerBrokerAll(false, true, true)``)."""
        if self._running and self.config.namesrv_addrs:
            self.spawn(self.register_all(oneway=oneway, check_order=False))

    # ------------------------------------------------------------------ clients

    def notify_consumer_ids_changed(self, group: str, channels: list[Hashable]) -> None:
        """``DefaultConsumerIdsChangeListener`` CHANGE: a oneway NOTIFY_CONSUMER_IDS_CHANGED to
        every channel of the group (``Broker2Client.notifyConsumerIdsChanged``)."""
        if not self.config.bool("notifyConsumerIdsChangedEnable"):
            return
        cmd = request(
            RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
            NotifyConsumerIdsChangedRequestHeader(consumer_group=group),
        )
        for ch in channels:
            if isinstance(ch, RemotingConnection) and not ch.is_closing:
                try:
                    ch.oneway(cmd)
                except RemotingIOError as exc:  # the channel closed meanwhile
                    log.error("notifyConsumerIdsChanged exception. group=%s, error=%s", group, exc)

    def _channel_closed(self, conn: RemotingConnection) -> None:
        """``ClientHousekeepingService.onChannelClose``."""
        self.producers.channel_closed(conn)
        self.consumers.channel_closed(conn)

    # ------------------------------------------------------------------ dispatch

    def _handle(self, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
        conn.state["last_request"] = time.monotonic()
        if not self._running:
            return self._after_start(conn, req)
        if self.acl is not None:
            # a HEART_BEAT's body is read as its handler reads it (decoded off the loop when large)
            refused = self.acl.refusal(conn.peer[0], req, lambda r: request_body(conn, r, heartbeat_body))
            if refused is not None:
                return refused
        handler = HANDLERS.get(req.code)
        if handler is None:
            return req.response(
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED, f" request type {req.code} not supported"
            )
        # a request whose header or body does not decode (a required field missing, a number that
        # is not one) raises RemoteProtocolError, here or in the handler's task: the connection
        # answers SYSTEM_ERROR with its text and logs one line, the peer's fault (wire.aio)
        return handler(self, conn, req)

    def _handle_sends(self, conn: RemotingConnection, reqs: list[RemotingCommand]
                      ) -> list[HandlerResult | LaterRun | bytes | Exception] | None:
        """The SEND_MESSAGE(_V2)s of one read, together (:func:`.processors.send.send_messages`);
        None (one at a time, through :meth:`_handle`) before the broker runs, with ACL checks, or
        where the send handler is not the plain one."""
        if not self._running or self.acl is not None or not self.batch_sends:
            return None
        for req in reqs:
            if HANDLERS.get(req.code) is not send_message:
                return None
        conn.state["last_request"] = time.monotonic()
        return send_messages(self, conn, reqs)

    async def _after_start(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand | None:
        assert self._ready is not None
        await self._ready.wait()
        result = self._handle(conn, req)
        if isinstance(result, Later):
            return await result.wait()
        if isinstance(result, Gathered):
            return result.command()  # its views are lent for this turn of the loop only
        if isinstance(result, Awaitable):
            return await result
        return result

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000
