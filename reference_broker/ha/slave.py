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
  own append path for replicated bytes;
* after each read that made its log grow it reports the new end; with nothing to say it repeats the
  last report every ``haSendHeartbeatInterval``; when the master has sent nothing for
  ``haHousekeepingInterval`` (it heartbeats every 5 s) the connection is closed and made again.

The records are dispatched (ConsumeQueues, index) by a task of their own behind the copy, in slices
while the socket is empty (:class:`._conn.MasterLink`), as a Java slave leaves them to its
``ReputMessageService``: the copy and its acks never wait for them.
"""

from __future__ import annotations

import logging
import socket

from wire.bodies import HAClientRuntimeInfo
from wire.errors import DecodeError
from wire.ha.session import V4SlaveSession

from ..store import MessageStore
from ._conn import MasterLink
from .config import HAConfig
from .stats import now_ms

__all__ = ["HAClient"]

log = logging.getLogger("reference_broker.ha")

#: ``HAClient.run``: the wait after a failed connect, or while no master address is known
RETRY_INTERVAL_S = 5.0
#: a connection that ends sooner than this waits as long before the next connect
MIN_CONNECTION_S = 1.0


class HAClient(MasterLink):
    """The slave's connection to its master (see the module notes; the connection's life cycle
    is :class:`._conn.MasterLink`'s)."""

    kind = "HAClient"
    retry_interval_s = RETRY_INTERVAL_S
    min_connection_s = MIN_CONNECTION_S

    def __init__(self, store: MessageStore, config: HAConfig) -> None:
        super().__init__(store)
        self.config = config
        self.session = V4SlaveSession(heartbeat_interval_ms=config.heartbeat_interval_ms,
                                      housekeeping_interval_ms=config.housekeeping_interval_ms,
                                      now_ms=now_ms())
        self.master_address: str | None = config.master_address
        #: the fixed address wins over the name server's answers
        self._fixed = config.master_address is not None
        self.mismatches = 0

    def update_master_address(self, addr: str | None) -> None:
        """``updateMasterAddress`` (from the registration answer's ``haServerAddr``)."""
        if self._fixed or not addr or addr == self.master_address:
            return
        log.info("update master address, OLD: %s NEW: %s", self.master_address, addr)
        self.master_address = addr
        self._address_changed()

    async def start(self) -> None:
        self.start_tasks()

    async def stop(self) -> None:
        await self.stop_tasks()

    # ------------------------------------------------------------------ the connection
    def _master_address(self) -> str | None:
        return self.master_address

    def _failed(self, addr: str, exc: Exception) -> None:
        if isinstance(exc, DecodeError):
            self.mismatches += 1
            log.error("HAClient: %s; closing the connection to %s", exc, addr)
        else:
            super()._failed(addr, exc)

    async def _connected(self, sock: socket.socket) -> None:
        await self._send(sock, self.session.connected(self.store.commitlog_max_offset(), now_ms()))

    async def _read(self, sock: socket.socket) -> None:
        session = self.session
        store = self.store
        while True:
            n = await self._receive_into(sock, session.recv_buffer())
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

    def _tick_due(self, now: int) -> bytes | None:
        session = self.session
        if session.expired(now):
            log.warning("HAClient, housekeeping, found this connection[%s] expired, %d",
                        self.master_address, now - session.last_read_ms)
            raise TimeoutError("the master sent nothing for haHousekeepingInterval")
        return session.heartbeat(now) if session.heartbeat_due(now) else None

    # ------------------------------------------------------------------ status
    def runtime_info(self) -> HAClientRuntimeInfo:
        s = self.session
        return self._runtime_info(self.master_address, s.last_read_ms, s.last_write_ms)
