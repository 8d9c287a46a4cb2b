# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The asyncio remoting connection shared by clients and servers: the only module of wire/ that opens sockets.

Theory of operation
-------------------
A :class:`RemotingConnection` is an :class:`asyncio.Protocol` over one TCP connection. Bytes go
into a sans-IO :class:`wire.FrameBuffer`; each decoded command is either

* a **response** (flag bit 0): it completes the future registered under its ``opaque`` by
  :meth:`RemotingConnection.request` (Java's ``responseTable``; responses may come in any order,
  so this is a dict, not a FIFO). A response nobody waits for is dropped, as Java drops it;
* a **request**: it is handed to the connection's ``handler``. Servers install one for every
  connection; clients install one to serve the requests brokers send them
  (NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE, …). The handler returns the response,
  ``None`` for no response, or an awaitable of either (long polling, group commit): plain return
  values are written at once, awaitables run as tasks so that one slow request never stalls the
  others on the same connection. A coroutine is first run up to its first suspension in place,
  as an eager task would be (Python 3.12's ``eager_task_factory``): the many that never suspend
  (a send in ASYNC_FLUSH) are answered without a task. One that waits on a future (a group
  commit, a parked pull) is resumed by that future's done callback, as a task's wake-up would,
  still without a task; only other kinds of suspension (a bare ``await asyncio.sleep(0)``) get
  one. Outside a task, ``asyncio.current_task()`` is ``None``: handlers must not rely on it (nor
  on ``asyncio.timeout``, which needs it); a connection close cancels the future a handler waits
  on, so the handler sees CancelledError as a cancelled task would. Oneway requests
  (flag bit 1) never get a response. A handler that raises produces SYSTEM_ERROR with the
  exception's text, as ``NettyRemotingAbstract`` does.

A malformed frame from the peer is a remote protocol error (:class:`wire.RemoteProtocolError`):
the connection is closed (Java's ``NettyDecoder`` closes the channel) and the error is logged with
its byte offset as a warning; no other connection is affected. Any other exception while reading
is a bug of ours, not the peer's: it is logged with its traceback at error level and the
connection is dropped.

Writes are gathered: everything sent while one batch of received bytes is dispatched, or
during one pass of the event loop, goes to the socket in a single ``write`` (pipelined clients
send many requests per read, and one system call per response would dominate). Large bodies
(pull answers) are never copied: a frame's head and its body are separate buffers, and a pass
that wrote more than :data:`JOIN_LIMIT` bytes hands its buffers to ``writelines``. Write
back-pressure follows the transport: when its buffer passes the high-water mark the connection
stops reading until it drains, so a client that does not read cannot make us buffer without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Generator
from types import CoroutineType
from typing import Any, cast

from .codes import ResponseCode, SerializeType
from .errors import RemoteProtocolError, WireError
from .framing import MAX_TOTAL_LENGTH, FrameBuffer
from .remoting import (
    FLAG_ONEWAY,
    FLAG_RESPONSE,
    RemotingCommand,
    decode_frame,
    encode_command,
    encode_command_head,
)

__all__ = [
    "ConnectError",
    "ConnectionClosed",
    "ConnectionPool",
    "Handler",
    "RemotingConnection",
    "RemotingIOError",
    "RemotingServer",
    "RequestTimeout",
    "connect",
    "next_opaque",
    "split_addr",
    "start_server",
]

log = logging.getLogger("wire.aio")

HandlerResult = RemotingCommand | None | Awaitable[RemotingCommand | None]
#: ``handler(connection, request)`` → response, ``None``, or an awaitable of either.
Handler = Callable[["RemotingConnection", RemotingCommand], HandlerResult]


class RemotingIOError(WireError):
    """A connection-level failure (the CLI maps these to exit code 3)."""


class ConnectError(RemotingIOError, ConnectionError):
    """The TCP connection could not be opened."""


class ConnectionClosed(RemotingIOError, ConnectionError):
    """The connection closed before the answer came."""


class RequestTimeout(RemotingIOError, TimeoutError):
    """No answer within the timeout."""


#: bodies of this size or more are written as their own buffer, not copied into their frame
SEPARATE_BODY = 16 * 1024
#: a pass's writes up to this size are joined into one buffer; larger ones go to ``writelines``
JOIN_LIMIT = 64 * 1024

_opaques = itertools.count(1)


def next_opaque() -> int:
    """A process-wide request id, as Java's ``RemotingCommand.requestId`` counter."""
    return next(_opaques) & 0x7FFFFFFF


class RemotingConnection(asyncio.Protocol):
    """One remoting connection; see the module docstring."""

    def __init__(self, handler: Handler | None = None, *, name: str = "",
                 max_total_length: int = MAX_TOTAL_LENGTH,
                 on_close: Callable[[RemotingConnection], None] | None = None) -> None:
        self.handler = handler
        self.name = name
        self.on_close = on_close
        self._frames = FrameBuffer(max_total_length=max_total_length)
        self._pending: dict[int, asyncio.Future[RemotingCommand]] = {}
        self._transport: asyncio.Transport | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._parked: dict[Coroutine[Any, Any, RemotingCommand | None], asyncio.Future[Any]] = {}
        self._can_write: asyncio.Event | None = None
        self._out: list[bytes] = []
        self._out_size = 0
        self._dispatching = False
        self._flush_scheduled = False
        self.closed: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()
        self.peer: tuple[str, int] = ("", 0)
        self.local: tuple[str, int] = ("", 0)
        #: free for the owner: servers keep per-connection state here (client id, group, …)
        self.state: dict[str, Any] = {}

    # ------------------------------------------------------------------ asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not derive from asyncio.Transport, but offer the same methods
        self._transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        sock = transport.get_extra_info("sockname")
        if peer:
            self.peer = (str(peer[0]), int(peer[1]))
        if sock:
            self.local = (str(sock[0]), int(sock[1]))
        self._can_write = asyncio.Event()
        self._can_write.set()

    def data_received(self, data: bytes) -> None:
        fb = self._frames
        fb.feed(data)
        self._dispatching = True
        try:
            while (frame := fb.next_frame()) is not None:
                self._dispatch(decode_frame(frame))
        except RemoteProtocolError as err:
            # the peer's fault: that connection goes, as Java's NettyDecoder closes the channel
            log.warning("%s: closing connection from %s:%d: %s", self.name or "remoting",
                        self.peer[0], self.peer[1], err)
            self._out.clear()
            self._out_size = 0
            self._abort(err)
        except Exception:
            # our own bug, not the peer's: loud (error level, traceback), and the connection is
            # dropped rather than left in an unknown state
            log.exception("%s: bug while reading from %s:%d; connection dropped", self.name or "remoting",
                          self.peer[0], self.peer[1])
            self._out.clear()
            self._out_size = 0
            self._abort()
        finally:
            self._dispatching = False
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        err = ConnectionClosed(f"connection to {self.peer[0]}:{self.peer[1]} closed"
                               + (f": {exc}" if exc else ""))
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(err)
        self._pending.clear()
        for task in self._tasks:
            task.cancel()
        for fut in list(self._parked.values()):
            # as Task.cancel: the future the handler waits on is cancelled, and the handler is
            # resumed with CancelledError
            fut.cancel()
        if not self.closed.done():
            self.closed.set_result(exc)
        if self._can_write is not None:
            self._can_write.set()
        if self.on_close is not None:
            self.on_close(self)

    def pause_writing(self) -> None:
        if self._can_write is not None:
            self._can_write.clear()
        if self._transport is not None:
            self._transport.pause_reading()

    def resume_writing(self) -> None:
        if self._can_write is not None:
            self._can_write.set()
        if self._transport is not None and not self._transport.is_closing():
            self._transport.resume_reading()

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, cmd: RemotingCommand) -> None:
        if cmd.flag & FLAG_RESPONSE:
            fut = self._pending.pop(cmd.opaque, None)
            if fut is not None and not fut.done():
                fut.set_result(cmd)
            return
        if self.handler is None:
            return
        try:
            result = self.handler(self, cmd)
        except Exception as exc:  # mirrors NettyRemotingAbstract: SYSTEM_ERROR with the exception text
            log.exception("handler failed for %s", cmd)
            self._reply(cmd, cmd.response(ResponseCode.SYSTEM_ERROR, _describe(exc)))
            return
        if result is None or type(result) is RemotingCommand:
            self._reply(cmd, result)
        elif type(result) is CoroutineType:
            self._step(cmd, result)
        elif inspect.isawaitable(result):
            self._spawn(cmd, result)
        else:
            self._reply(cmd, result)

    @property
    def pending_handlers(self) -> int:
        """Handler calls still running (suspended coroutines and tasks), whose answers are due."""
        return len(self._tasks) + len(self._parked)

    def _step(self, cmd: RemotingCommand, coro: Coroutine[Any, Any, RemotingCommand | None]) -> None:
        """Run a handler's coroutine up to its first suspension right here, as an eager task
        would: most finish without one (a send in ASYNC_FLUSH, a pull that finds messages) and
        are answered in this dispatch batch, with no task, no extra loop pass and no callbacks.
        One that suspends goes on from where it stopped (:meth:`_park`)."""
        try:
            yielded = coro.send(None)
        except StopIteration as stop:
            self._reply(cmd, stop.value)
            return
        except asyncio.CancelledError:
            return  # as a cancelled task: no answer
        except Exception as exc:
            log.exception("handler failed for %s", cmd)
            self._reply(cmd, cmd.response(ResponseCode.SYSTEM_ERROR, _describe(exc)))
            return
        self._park(cmd, coro, yielded)

    def _park(self, cmd: RemotingCommand, coro: Coroutine[Any, Any, RemotingCommand | None],
              yielded: Any) -> None:
        """A suspended handler coroutine waits for what it yielded. A future of this loop (a group
        commit's flush, a parked pull) resumes it from its done callback, as a task's wake-up
        would, without a task; anything else (a bare yield) hands the rest to a task."""
        if (yielded is not None and getattr(yielded, "_asyncio_future_blocking", False)
                and yielded.get_loop() is asyncio.get_running_loop()):
            yielded._asyncio_future_blocking = False
            self._parked[coro] = yielded
            yielded.add_done_callback(functools.partial(self._wake, cmd, coro))
        else:
            self._spawn(cmd, _Resumed(coro, yielded))

    def _wake(self, cmd: RemotingCommand, coro: Coroutine[Any, Any, RemotingCommand | None],
              fut: asyncio.Future[Any]) -> None:
        self._parked.pop(coro, None)
        try:
            yielded = coro.send(None)
        except StopIteration as stop:
            self._reply(cmd, stop.value)
            return
        except asyncio.CancelledError:
            return
        except Exception as exc:
            log.exception("handler failed for %s", cmd)
            self._reply(cmd, cmd.response(ResponseCode.SYSTEM_ERROR, _describe(exc)))
            return
        self._park(cmd, coro, yielded)

    def _spawn(self, cmd: RemotingCommand, pending: Awaitable[RemotingCommand | None]) -> None:
        task = asyncio.ensure_future(self._finish(cmd, pending))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _finish(self, cmd: RemotingCommand, pending: Awaitable[RemotingCommand | None]) -> None:
        try:
            result = await pending
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("handler failed for %s", cmd)
            result = cmd.response(ResponseCode.SYSTEM_ERROR, _describe(exc))
        self._reply(cmd, result)

    def _reply(self, request: RemotingCommand, response: RemotingCommand | None) -> None:
        if response is None or request.flag & FLAG_ONEWAY:
            return
        if response.opaque != request.opaque:
            response = response.replace(opaque=request.opaque)
        transport = self._transport
        if transport is None or transport.is_closing():
            # mirrors NettyRemotingAbstract: an answer for a channel that is gone is only dropped
            log.debug("dropping the answer to %s: the connection is closed", request)
            return
        body = response.body
        if body is not None and len(body) >= SEPARATE_BODY:
            self.send(response)
            return
        data = encode_command(response)
        self._out.append(data)
        self._out_size += len(data)
        if not self._dispatching and not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    # ------------------------------------------------------------------ sending

    @property
    def is_closing(self) -> bool:
        return self._transport is None or self._transport.is_closing()

    def send(self, cmd: RemotingCommand) -> None:
        """Write a command as is (a response, or a request whose opaque the caller chose)."""
        body = cmd.body
        if body is not None and len(body) >= SEPARATE_BODY:
            # a large body (a pull's messages) goes out as its own buffer, never copied into a frame
            self._write(encode_command_head(cmd), len(body) + 64)
            self._out.append(body)
        else:
            self.send_raw(encode_command(cmd))

    def send_raw(self, data: bytes) -> None:
        """Write bytes that are already encoded (conformance tools send malformed frames on purpose)."""
        self._write(data, len(data))

    def _write(self, data: bytes, size: int) -> None:
        if self._transport is None or self._transport.is_closing():
            raise ConnectionClosed(f"connection to {self.peer[0]}:{self.peer[1]} is closed")
        self._out.append(data)
        self._out_size += size
        if not self._dispatching and not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        out = self._out
        if not out:
            return
        size = self._out_size
        self._out_size = 0
        transport = self._transport
        if transport is None or transport.is_closing():
            out.clear()
            return
        if len(out) == 1:
            transport.write(out[0])
        elif size <= JOIN_LIMIT:
            transport.write(b"".join(out))
        else:
            # joining megabytes of pull answers costs more than the write itself: hand the
            # buffers over as they are (uvloop writes them with one writev)
            transport.writelines(out)
        out.clear()

    async def drain(self) -> None:
        if self._can_write is not None:
            await self._can_write.wait()

    async def request(self, cmd: RemotingCommand, timeout: float = 3.0) -> RemotingCommand:
        """Send a request and wait for its response (the opaque is assigned here)."""
        opaque = next_opaque()
        if cmd.opaque != opaque or cmd.flag & FLAG_ONEWAY:
            cmd = cmd.replace(opaque=opaque, flag=cmd.flag & ~FLAG_ONEWAY)
        fut: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()
        self._pending[opaque] = fut
        try:
            self.send(cmd)
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            raise RequestTimeout(
                f"no answer to {cmd.code_name} from {self.peer[0]}:{self.peer[1]} within {timeout:g}s"
            ) from None
        finally:
            self._pending.pop(opaque, None)

    def oneway(self, cmd: RemotingCommand) -> None:
        """Send a request that expects no response."""
        self.send(cmd.replace(opaque=next_opaque(), flag=cmd.flag | FLAG_ONEWAY))

    # ------------------------------------------------------------------ closing

    def _abort(self, exc: Exception | None = None) -> None:
        if self._transport is not None:
            self._transport.abort()

    def close(self) -> None:
        """Close after writing what is already queued."""
        self._flush()
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()

    async def wait_closed(self) -> None:
        await asyncio.shield(self.closed)

    async def aclose(self) -> None:
        self.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.wait_closed(), 2)

    async def __aenter__(self) -> RemotingConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Resumed:
    """The rest of a coroutine whose first step already ran (:meth:`RemotingConnection._step`):
    awaiting it hands the task what the coroutine yielded (a future it waits on, or ``None`` for a
    bare yield), then passes whatever the task sends or throws (a cancellation) back in."""

    __slots__ = ("_coro", "_yielded")

    def __init__(self, coro: Coroutine[Any, Any, RemotingCommand | None], yielded: Any) -> None:
        self._coro = coro
        self._yielded = yielded

    def __await__(self) -> Generator[Any, Any, RemotingCommand | None]:
        coro, yielded = self._coro, self._yielded
        while True:
            try:
                sent = yield yielded
            except BaseException as exc:
                try:
                    yielded = coro.throw(exc)
                except StopIteration as stop:
                    return cast("RemotingCommand | None", stop.value)
            else:
                try:
                    yielded = coro.send(sent)
                except StopIteration as stop:
                    return cast("RemotingCommand | None", stop.value)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def connect(host: str, port: int, *, timeout: float = 3.0, handler: Handler | None = None,
                  name: str = "") -> RemotingConnection:
    """Open a connection; failures raise :class:`ConnectError` (refused, unreachable, timed out)."""
    loop = asyncio.get_running_loop()
    try:
        _, proto = await asyncio.wait_for(
            loop.create_connection(lambda: RemotingConnection(handler, name=name), host, port), timeout)
    except TimeoutError:
        raise ConnectError(f"cannot connect to {host}:{port}: timed out after {timeout:g}s") from None
    except OSError as exc:
        raise ConnectError(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
    return proto


def split_addr(addr: str) -> tuple[str, int]:
    """``"host:port"`` → ``(host, port)`` (``[v6]:port`` too); anything else is a :class:`ConnectError`."""
    host, sep, port = addr.strip().rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConnectError(f"cannot connect to {addr!r}: not a host:port address")
    return host.strip("[]") or "127.0.0.1", int(port)


class ConnectionPool:
    """At most one open connection per ``host:port``, opened on first use and shared by every
    caller (responses are matched by opaque, so many requests can be in flight on one connection,
    as Java's ``NettyRemotingClient`` channel table shares a channel). A closed connection is
    replaced on the next use; concurrent first uses of an address open one connection."""

    def __init__(self, *, timeout: float = 3.0, name: str = "", handler: Handler | None = None) -> None:
        self.timeout = timeout
        self.name = name
        self.handler = handler
        self._conns: dict[str, RemotingConnection] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, addr: str) -> RemotingConnection:
        """The open connection to ``addr``, opening it if needed (:class:`ConnectError` if it cannot)."""
        conn = self._conns.get(addr)
        if conn is not None and not conn.is_closing:
            return conn
        lock = self._locks.setdefault(addr, asyncio.Lock())
        async with lock:
            conn = self._conns.get(addr)
            if conn is None or conn.is_closing:
                host, port = split_addr(addr)
                conn = await connect(host, port, timeout=self.timeout, handler=self.handler, name=self.name)
                self._conns[addr] = conn
            return conn

    def discard(self, addr: str) -> None:
        """Forget (and close) the connection to ``addr``."""
        conn = self._conns.pop(addr, None)
        if conn is not None:
            conn.close()

    async def close(self) -> None:
        """Close every connection and wait (briefly) until they are closed."""
        conns = list(self._conns.values())
        self._conns.clear()
        for conn in conns:
            conn.close()
        for conn in conns:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.wait_closed(), 1)

    async def __aenter__(self) -> ConnectionPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class RemotingServer:
    """A listening remoting server that tracks its connections and closes them when it closes."""

    def __init__(self, handler: Handler, *, name: str = "",
                 on_connect: Callable[[RemotingConnection], None] | None = None,
                 on_close: Callable[[RemotingConnection], None] | None = None,
                 max_total_length: int = MAX_TOTAL_LENGTH) -> None:
        self.handler = handler
        self.name = name
        self.on_connect = on_connect
        self.on_close = on_close
        self.max_total_length = max_total_length
        self.connections: set[RemotingConnection] = set()
        self._server: asyncio.Server | None = None

    def _factory(self) -> RemotingConnection:
        server = self

        class _Conn(RemotingConnection):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                super().connection_made(transport)
                server.connections.add(self)
                if server.on_connect is not None:
                    server.on_connect(self)

        def closed(conn: RemotingConnection) -> None:
            self.connections.discard(conn)
            if self.on_close is not None:
                self.on_close(conn)

        return _Conn(self.handler, name=self.name, on_close=closed,
                     max_total_length=self.max_total_length)

    async def start(self, host: str, port: int) -> RemotingServer:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._factory, host, port, reuse_address=True)
        return self

    @property
    def port(self) -> int:
        assert self._server is not None and self._server.sockets
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def sockets(self) -> tuple[Any, ...]:
        return tuple(self._server.sockets) if self._server is not None else ()

    async def close(self) -> None:
        """Stop listening and close every connection."""
        if self._server is not None:
            self._server.close()
        conns = list(self.connections)
        for conn in conns:
            conn.close()
        for conn in conns:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.wait_closed(), 2)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def __aenter__(self) -> RemotingServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def start_server(handler: Handler, host: str, port: int, *, name: str = "",
                       on_connect: Callable[[RemotingConnection], None] | None = None,
                       on_close: Callable[[RemotingConnection], None] | None = None,
                       max_total_length: int = MAX_TOTAL_LENGTH) -> RemotingServer:
    """Listen for remoting connections, each served by ``handler``."""
    server = RemotingServer(handler, name=name, on_connect=on_connect, on_close=on_close,
                            max_total_length=max_total_length)
    return await server.start(host, port)


def serialize_type_of(name: str) -> SerializeType:
    """``"json"``/``"rocketmq"`` (any case) → :class:`SerializeType`."""
    try:
        return SerializeType[name.upper()]
    except KeyError:
        raise ValueError(f"unknown serialize type {name!r}: expected json or rocketmq") from None
