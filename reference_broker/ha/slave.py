# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The slave side of 4.x replication (``HAService.HAClient``).

Theory of operation
-------------------
:class:`HAClient` keeps one connection to the master's HA address: the fixed ``haMasterAddress``, or
the ``haServerAddr`` the name server answers the slave's registration with (updated on each
registration, as ``BrokerController.registerBrokerAll`` does). Without an address, or after a
failed connect, it waits 5 s and tries again.

On a connection (:class:`wire.ha.V4SlaveSession` holds its state):

* it reports its CommitLog end at once;
* it receives into a 4 MiB buffer; each whole transfer must start at the slave's end (or the slave
  is empty), else the connection closes and a new one starts from the slave's end
  (``dispatchReadRequest``); the data goes through :meth:`MessageStore.append_replica`, the store's
  own append path for replicated bytes, which dispatches ConsumeQueue units and index entries as
  for a put;
* after each read that made its log grow it reports the new end; with nothing to say it repeats the
  last report every ``haSendHeartbeatInterval``; when the master has sent nothing for
  ``haHousekeepingInterval`` (it heartbeats every 5 s) the connection is closed and made again.
"""

from __future__ import annotations

import asyncio
import logging
import socket

from wire.bodies import HAClientRuntimeInfo
from wire.errors import DecodeError
from wire.ha.session import V4SlaveSession

from ..periodic import wait_event
from ..store import MessageStore, StoreError
from . import _sock
from ._conn import reap
from .config import HAConfig
from .stats import TransferSpeed, now_ms

__all__ = ["HAClient"]

log = logging.getLogger("reference_broker.ha")

#: ``HAClient.run``: the wait after a failed connect, or while no master address is known
RETRY_INTERVAL_S = 5.0
#: how long a connect to the master may take
CONNECT_TIMEOUT_S = 3.0
#: how often heartbeats and housekeeping are looked at
TICK_S = 1.0
#: a connection that ends sooner than this waits as long before the next connect
MIN_CONNECTION_S = 1.0
#: records dispatched between two looks at the socket while the slave dispatches behind its copy
DISPATCH_SLICE = 256


class HAClient:
    """The slave's connection to its master (see the module notes)."""

    def __init__(self, store: MessageStore, config: HAConfig) -> None:
        self.store = store
        self.config = config
        self.session = V4SlaveSession(heartbeat_interval_ms=config.heartbeat_interval_ms,
                                      housekeeping_interval_ms=config.housekeeping_interval_ms,
                                      now_ms=now_ms())
        self.master_address: str | None = config.master_address
        #: the fixed address wins over the name server's answers
        self._fixed = config.master_address is not None
        self.connected = False
        self.connects = 0
        self.mismatches = 0
        self.last_error: str | None = None
        self.speed = TransferSpeed()
        self._sock: socket.socket | None = None
        self._send_lock = asyncio.Lock()
        self._changed = asyncio.Event()
        self._appended = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._dispatcher: asyncio.Task[None] | None = None

    def update_master_address(self, addr: str | None) -> None:
        """``updateMasterAddress`` (from the registration answer's ``haServerAddr``)."""
        if self._fixed or not addr or addr == self.master_address:
            return
        log.info("update master address, OLD: %s NEW: %s", self.master_address, addr)
        self.master_address = addr
        self._changed.set()
        if self._sock is not None:
            self._close("the master address changed")

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="ha-client")
        self._dispatcher = asyncio.create_task(self._dispatch(), name="ha-dispatch")

    async def stop(self) -> None:
        for task in (self._task, self._dispatcher):
            if task is not None:
                task.cancel()
                await reap(task)
        self._task = self._dispatcher = None
        self._close("the slave shuts down")
        self.store.dispatch_replica()  # what was copied is dispatched before the store stops

    async def _dispatch(self) -> None:
        """``ReputMessageService`` for replicated bytes: the records the reader appended are
        dispatched in slices, the socket read between two slices, so that a catch-up copies at
        the speed of the network and the ConsumeQueues follow."""
        while True:
            await self._appended.wait()
            self._appended.clear()
            while self.store.dispatch_replica(DISPATCH_SLICE):
                await asyncio.sleep(0)

    # ------------------------------------------------------------------ connection
    async def _run(self) -> None:
        while True:
            addr = self.master_address
            if addr is None:
                self._changed.clear()
                await wait_event(self._changed, RETRY_INTERVAL_S)
                continue
            try:
                self._sock = await _sock.connect(addr, CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError) as exc:
                self.last_error = f"connect to {addr}: {exc}"
                log.debug("HAClient: %s", self.last_error)
                self._changed.clear()
                await wait_event(self._changed, RETRY_INTERVAL_S)
                continue
            self.connects += 1
            self.connected = True
            started = asyncio.get_running_loop().time()
            log.info("HAClient connected to master %s", addr)
            try:
                await self._serve(self._sock)
            except (OSError, DecodeError, StoreError) as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
                if isinstance(exc, DecodeError):
                    self.mismatches += 1
                    log.error("HAClient: %s; closing the connection to %s", exc, addr)
                else:
                    log.warning("HAClient: connection to %s: %s", addr, exc)
            finally:
                self._close("reconnecting")
            if asyncio.get_running_loop().time() - started < MIN_CONNECTION_S:
                # a master that closes at once (it refuses this slave) is not dialled in a tight loop
                self._changed.clear()
                await wait_event(self._changed, MIN_CONNECTION_S)

    def _close(self, reason: str) -> None:
        sock, self._sock = self._sock, None
        self.connected = False
        if sock is not None:
            log.info("HAClient: closing the connection to the master (%s)", reason)
            sock.close()

    async def _send(self, sock: socket.socket, data: bytes) -> None:
        async with self._send_lock:
            rest = _sock.send_now(sock, [data])
            if rest:
                await asyncio.get_running_loop().sock_sendall(sock, rest)

    async def _serve(self, sock: socket.socket) -> None:
        session = self.session
        store = self.store
        await self._send(sock, session.connected(store.commitlog_max_offset(), now_ms()))
        ticker = asyncio.create_task(self._tick(sock))
        try:
            await self._read(sock)
        finally:
            ticker.cancel()
            await reap(ticker)

    async def _read(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        session = self.session
        store = self.store
        while True:
            n = await loop.sock_recv_into(sock, session.recv_buffer())
            if n == 0:
                raise ConnectionResetError("the master closed the connection")
            got = 0
            for offset, data in session.received(n, now_ms()):
                session.check(offset, store.commitlog_max_offset())
                # a heartbeat too: an empty slave makes its first file there, as a Java slave does
                store.append_replica(offset, data, dispatch=False)
                got += len(data)
            if got:
                self._appended.set()
                self.speed.add(got)
                report = session.report(store.commitlog_max_offset(), now_ms())
                if report is not None:
                    await self._send(sock, report)

    async def _tick(self, sock: socket.socket) -> None:
        session = self.session
        while True:
            await asyncio.sleep(TICK_S)
            now = now_ms()
            if session.expired(now):
                log.warning("HAClient, housekeeping, found this connection[%s] expired, %d",
                            self.master_address, now - session.last_read_ms)
                sock.shutdown(socket.SHUT_RDWR)  # the reader sees the end and the loop reconnects
                return
            if session.heartbeat_due(now):
                await self._send(sock, session.heartbeat(now))

    # ------------------------------------------------------------------ status
    def runtime_info(self) -> HAClientRuntimeInfo:
        s = self.session
        return HAClientRuntimeInfo(
            master_addr=self.master_address or "", transferred_byte_in_second=self.speed.per_second(),
            max_offset=self.store.commitlog_max_offset(),
            last_read_timestamp=s.last_read_ms if self.connects else 0,
            last_write_timestamp=s.last_write_ms if self.connects else 0, master_flush_offset=0)
