# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What the 4.x and AutoSwitch sides share.

* :class:`ConnectionTasks`, a master's connection to one slave: a socket served by a reader task and
  a writer task, closed once, with its reason, when either task ends; the writer sends the
  CommitLog straight from its files with ``sendfile`` (:meth:`ConnectionTasks._send_commitlog`),
  the protocol giving only each frame's header.
* :class:`MasterLink`, a slave's client: one connection at a time to its master, made again after a
  failure; a reader and a ticker on it; the replicated records dispatched behind the copy, whenever
  the socket has nothing to copy (:meth:`MasterLink._receive_into`).
* Stopping a service's tasks (:func:`reap`, :func:`cancel_and_wait`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from wire.bodies import HAClientRuntimeInfo
from wire.errors import DecodeError

from ..periodic import wait_event
from ..store import MessageStore, StoreError
from . import _sock
from .stats import TransferSpeed, now_ms

__all__ = ["CONNECT_TIMEOUT_S", "DISPATCH_SLICE", "DISPATCH_STARVE_S", "GATHER_FRAMES", "TICK_S",
           "ConnectionTasks", "MasterLink", "cancel_and_wait", "reap"]

log = logging.getLogger("reference_broker.ha")

#: frames sent before the writer lets the other tasks in (during a catch-up)
GATHER_FRAMES = 64
#: how long a slave's connect to its master may take
CONNECT_TIMEOUT_S = 3.0
#: how often a slave looks at its heartbeat and housekeeping
TICK_S = 1.0
#: records dispatched between two looks at the socket while a slave dispatches behind its copy
DISPATCH_SLICE = 64
#: while the master's bytes keep coming, a slave still dispatches one slice at least this often
DISPATCH_STARVE_S = 0.05


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
        #: a frame :meth:`_send_commitlog_now` could send only part of: the rest of its header, and
        #: the CommitLog offset and length of the data still to go (the writer sends it first)
        self._unsent: tuple[bytes, int, int] | None = None

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

    async def _send(self, buffers: list[bytes | memoryview]) -> None:
        """Send ``buffers`` in order: what the socket takes now, the rest when it can."""
        rest = _sock.send_now(self.sock, buffers)
        if rest:
            await asyncio.get_running_loop().sock_sendall(self.sock, rest)

    async def _send_commitlog(self, store: MessageStore, next_offset: Callable[[], int], batch_size: int,
                              frame: Callable[[int], tuple[bytes, int] | None]) -> int:
        """Send the CommitLog from ``next_offset()`` on, at most :data:`GATHER_FRAMES` frames: each
        frame's header, then its data (at most ``batch_size`` bytes, never across a file end)
        straight from the CommitLog file with ``sendfile``, so the bytes never pass through user
        space (on a loopback connection the receiver's copy is the only one). ``frame(n)`` is the
        protocol's part: the header of a frame that may carry the ``n`` bytes there and how many
        it does carry (it moves the session's cursor on), or None for no frame now. Returns the
        data bytes sent, -1 when nothing was there to send."""
        sent = 0
        frames = 0
        if self._unsent is not None:
            await self._send_unsent(store)
        for at, header, size, span in _frames(store, next_offset, batch_size, frame):
            await self._send_frame(store, header, at, size, span)
            sent += size
            frames += 1
        return sent if frames else -1

    def _send_commitlog_now(self, store: MessageStore, next_offset: Callable[[], int], batch_size: int,
                            frame: Callable[[int], tuple[bytes, int] | None]) -> int:
        """:meth:`_send_commitlog` without waiting (from a callback, while the writer task is idle):
        frames while the socket takes them; a frame it takes only part of is kept in
        :attr:`_unsent` for the writer, which sends the rest before anything else. Returns the
        data bytes of the frames begun."""
        if self._unsent is not None:
            return 0  # the rest of a frame goes first, and only the writer sends it
        sock = self.sock
        sent = 0
        for at, header, size, span in _frames(store, next_offset, batch_size, frame):
            try:
                n = sock.send(header, socket.MSG_MORE)
            except (BlockingIOError, InterruptedError):
                n = 0
            fd, pos, _ = span
            done = 0
            if n == len(header):
                while done < size:
                    try:
                        done += os.sendfile(sock.fileno(), fd, pos + done, size - done)
                    except (BlockingIOError, InterruptedError):
                        break
            if n < len(header) or done < size:
                self._unsent = (header[n:], at + done, size - done)
                return sent + size
            sent += size
        return sent

    async def _send_unsent(self, store: MessageStore) -> None:
        """The rest of the frame :meth:`_send_commitlog_now` left unfinished."""
        assert self._unsent is not None
        header_rest, at, size = self._unsent
        if header_rest:
            await asyncio.get_running_loop().sock_sendall(self.sock, header_rest)
        span = store.commitlog_span(at, size)
        if span is None or span[2] < size:
            raise ConnectionAbortedError(f"the CommitLog bytes at {at} went before they were sent")
        await self._send_frame(store, b"", at, size, span)
        self._unsent = None

    async def _send_frame(self, store: MessageStore, header: bytes, at: int, size: int,
                          span: tuple[int, int, int]) -> None:
        """One frame: ``header`` (held back for the data with MSG_MORE), then the ``size`` CommitLog
        bytes at ``at`` (``span`` is where they lie) by ``sendfile``, waiting whenever the socket
        is full. The file is looked up again after each wait (it may have been deleted meanwhile:
        the connection then ends)."""
        sock = self.sock
        try:
            n = sock.send(header, socket.MSG_MORE) if header else 0
        except (BlockingIOError, InterruptedError):
            n = 0
        if n < len(header):
            await asyncio.get_running_loop().sock_sendall(sock, header[n:])
        fd, pos, _ = span
        done = 0
        while True:
            try:
                done += os.sendfile(sock.fileno(), fd, pos + done, size - done)
            except (BlockingIOError, InterruptedError):
                await _sock.wait_writable(sock)
                looked = store.commitlog_span(at + done, size - done)
                if looked is None or looked[2] < size - done:
                    raise ConnectionAbortedError(
                        f"the CommitLog bytes at {at + done} went before they were sent") from None
                fd, pos, _ = looked
                pos -= done
            if done >= size:
                return

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


class MasterLink:
    """What both slaves' clients (4.x ``HAClient``, ``AutoSwitchHAClient``) share: one connection at
    a time to the master's HA address, made again after a failure or when the address changes;
    on it a reader (:meth:`_read`, the protocol's part) and a ticker for heartbeats and
    housekeeping; and a dispatcher task that dispatches the replicated records behind the copy
    (``ReputMessageService``), so the reader and its acks never wait for the ConsumeQueues and
    the index.

    The copy goes first: a reader that receives with :meth:`_receive_into` takes what the socket
    holds without a turn of the event loop in between, and the dispatcher runs its slices while
    the socket is empty; while the master's bytes keep coming (a catch-up) it still runs one
    slice every :data:`DISPATCH_STARVE_S`. A Java slave gets the same order from its threads: the
    HAClient appends and acks while the ReputMessageService follows on another core."""

    #: for the task names and the log lines
    kind = "HA client"
    #: the wait after a failed connect, or while no master address is known
    retry_interval_s = 5.0
    #: the wait after a connection ended (at least; see :meth:`_pause_after`)
    pause_after_connection_s = 0.0
    #: a connection that ends sooner than this waits as long before the next connect
    min_connection_s = 0.0
    #: how often heartbeats and housekeeping are looked at
    tick_s = TICK_S

    def __init__(self, store: MessageStore) -> None:
        self.store = store
        self.connected = False
        self.connects = 0
        self.last_error: str | None = None
        self.speed = TransferSpeed()
        self._sock: socket.socket | None = None
        self._send_lock = asyncio.Lock()
        self._changed = asyncio.Event()
        self._appended = asyncio.Event()
        #: the reader found bytes at its last look at the socket (the dispatcher waits)
        self._receiving = False
        #: set when the reader found the socket empty
        self._drained = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    # ------------------------------------------------------------------ the protocol's part
    def _master_address(self) -> str | None:
        raise NotImplementedError

    async def _connected(self, sock: socket.socket) -> None:
        """The connection is made: say what the protocol says first."""
        raise NotImplementedError

    async def _read(self, sock: socket.socket) -> None:
        """Receive, append and ack until the connection ends (raise to end it)."""
        raise NotImplementedError

    def _tick_due(self, now: int) -> bytes | None:
        """Every :attr:`tick_s`: a heartbeat to send, or None; raise :class:`TimeoutError` when the
        master has been silent too long."""
        raise NotImplementedError

    def _failed(self, addr: str, exc: Exception) -> None:
        log.warning("%s: connection to %s: %s", self.kind, addr, exc)

    # ------------------------------------------------------------------ life cycle
    def start_tasks(self) -> None:
        name = self.kind.replace(" ", "-").lower()
        self._tasks = [asyncio.create_task(self._run(), name=name),
                       asyncio.create_task(self._dispatch(), name=f"{name}-dispatch")]

    async def stop_tasks(self) -> None:
        """Stop the tasks, close the connection and dispatch what was copied (the store goes on
        without this client: as a master, or stopping)."""
        await cancel_and_wait(self._tasks)
        self._tasks = []
        self._close(f"the {self.kind} stops")
        self.store.dispatch_replica()

    def _address_changed(self) -> None:
        self._changed.set()
        if self._sock is not None:
            self._close("the master address changed")

    async def _dispatch(self) -> None:
        store = self.store
        while True:
            await self._appended.wait()
            self._appended.clear()
            while True:
                if self._receiving:
                    self._drained.clear()
                    await wait_event(self._drained, DISPATCH_STARVE_S)
                if not store.dispatch_replica(DISPATCH_SLICE):
                    break
                await asyncio.sleep(0)

    async def _receive_into(self, sock: socket.socket, buf: memoryview) -> int:
        """``recv_into`` that takes what the socket holds at once and waits (letting the dispatcher
        run) only when it is empty; one turn of the event loop a read for the other tasks."""
        while True:
            try:
                n = sock.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                self._receiving = False
                self._drained.set()
                await _sock.wait_readable(sock)
                continue
            self._receiving = n > 0
            if n:
                await asyncio.sleep(0)
            return n

    def _close(self, reason: str) -> None:
        sock, self._sock = self._sock, None
        self.connected = False
        if sock is not None:
            log.info("%s: closing the connection to the master (%s)", self.kind, reason)
            sock.close()

    async def _wait_change(self, seconds: float) -> None:
        self._changed.clear()
        if seconds > 0:
            await wait_event(self._changed, seconds)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            addr = self._master_address()
            if not addr:
                await self._wait_change(self.retry_interval_s)
                continue
            try:
                self._sock = await _sock.connect(addr, CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError) as exc:
                self.last_error = f"connect to {addr}: {exc}"
                log.debug("%s: %s", self.kind, self.last_error)
                await self._wait_change(self.retry_interval_s)
                continue
            self.connects += 1
            self.connected = True
            started = loop.time()
            log.info("%s connected to master %s", self.kind, addr)
            try:
                await self._serve(self._sock)
            except (OSError, DecodeError, StoreError) as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
                self._failed(addr, exc)
            finally:
                self._close("reconnecting")
            lasted = loop.time() - started
            # a master that closes at once (it refuses this slave) is not dialled in a tight loop
            pause = max(self.pause_after_connection_s,
                        self.min_connection_s if lasted < self.min_connection_s else 0.0)
            await self._wait_change(pause)

    async def _serve(self, sock: socket.socket) -> None:
        await self._connected(sock)
        ticker = asyncio.create_task(self._tick(sock))
        try:
            await self._read(sock)
        finally:
            self._receiving = False
            self._drained.set()
            ticker.cancel()
            await reap(ticker)

    async def _send(self, sock: socket.socket, data: bytes) -> None:
        async with self._send_lock:
            rest = _sock.send_now(sock, [data])
            if rest:
                await asyncio.get_running_loop().sock_sendall(sock, rest)

    async def _tick(self, sock: socket.socket) -> None:
        while True:
            await asyncio.sleep(self.tick_s)
            try:
                heartbeat = self._tick_due(now_ms())
            except TimeoutError:
                sock.shutdown(socket.SHUT_RDWR)  # the reader sees the end and the loop reconnects
                return
            if heartbeat is not None:
                await self._send(sock, heartbeat)

    def _runtime_info(self, master_addr: str | None, last_read_ms: int,
                      last_write_ms: int) -> HAClientRuntimeInfo:
        return HAClientRuntimeInfo(
            master_addr=master_addr or "", transferred_byte_in_second=self.speed.per_second(),
            max_offset=self.store.commitlog_max_offset(),
            last_read_timestamp=last_read_ms if self.connects else 0,
            last_write_timestamp=last_write_ms if self.connects else 0, master_flush_offset=0)


def _frames(store: MessageStore, next_offset: Callable[[], int], batch_size: int,
            frame: Callable[[int], tuple[bytes, int] | None]
            ) -> Iterator[tuple[int, bytes, int, tuple[int, int, int]]]:
    """The next frames of a transfer, at most :data:`GATHER_FRAMES`: (offset, header, data size,
    the CommitLog span the data comes from). Each is cut when the one before it has been sent
    (``frame`` moves the session's cursor on); it ends at the CommitLog's end or when ``frame``
    gives no frame now."""
    for _ in range(GATHER_FRAMES):
        at = next_offset()
        span = store.commitlog_span(at, batch_size)
        if span is None:
            return
        cut = frame(span[2])
        if cut is None:
            return
        yield at, cut[0], cut[1], span
