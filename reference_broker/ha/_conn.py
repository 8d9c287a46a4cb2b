# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What both masters' per-slave connections (4.x and AutoSwitch) share: a socket served by a reader
task and a writer task, closed once, with its reason, when either task ends; and stopping a
service's tasks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterable
from typing import Any

__all__ = ["reap", "ConnectionTasks", "cancel_and_wait"]

log = logging.getLogger("reference_broker.ha")


async def reap(task: asyncio.Task[Any]) -> None:
    """Wait for ``task`` (cancelled or ending) to end, whatever it raised, but never swallow a
    cancellation of the caller: a loop that waits for a helper task in a ``finally`` while it is
    itself being stopped must stop, not go round again."""
    try:
        await task
    except asyncio.CancelledError:
        me = asyncio.current_task()
        if me is not None and me.cancelling():
            raise
    except Exception:  # the task's own failure was its business (it logged what it did not expect)
        pass


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel every task, then wait for each to end (whatever it raised)."""
    tasks = list(tasks)
    for t in tasks:
        t.cancel()
    for t in tasks:
        await reap(t)


class ConnectionTasks:
    """A master's connection to one slave: :meth:`_read` and :meth:`_write` run as tasks from
    :meth:`start`; the first to end closes the connection (an OSError quietly, anything else
    logged as a failure); :meth:`_closed` tells the owner."""

    #: for the task names and the log lines
    kind = "ha"

    def __init__(self, sock: socket.socket, addr: str) -> None:
        self.sock = sock
        self.addr = addr
        self.closed = False
        self.close_reason: str | None = None
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._read(), name=f"{self.kind}-read-{self.addr}"),
                       asyncio.create_task(self._write(), name=f"{self.kind}-write-{self.addr}")]
        for t in self._tasks:
            t.add_done_callback(self._task_done)

    async def _read(self) -> None:
        raise NotImplementedError

    async def _write(self) -> None:
        raise NotImplementedError

    def _closed(self, reason: str) -> None:
        """The connection is closed (once): tell the owner."""
        raise NotImplementedError

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.close(f"{type(exc).__name__}: {exc}")
            if not isinstance(exc, OSError):
                log.error("%s connection %s failed", self.kind, self.addr, exc_info=exc)
        else:
            self.close(self.close_reason or "closed")

    def close(self, reason: str) -> None:
        """Close the socket and stop both tasks (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        for t in self._tasks:
            if t is not asyncio.current_task():
                t.cancel()
        with contextlib.suppress(Exception):
            loop = asyncio.get_running_loop()
            loop.remove_reader(self.sock.fileno())
            loop.remove_writer(self.sock.fileno())
        self.sock.close()
        self._closed(reason)
