# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The asyncio remoting connection shared by clients and servers: the only module of wire/ that opens sockets.

Theory of operation
-------------------
A :class:`RemotingConnection` is an :class:`asyncio.Protocol` over one TCP connection. Bytes go
into a sans-IO :class:`wire.FrameBuffer`; each decoded command is either

* a **response** (flag bit 0): it completes the future registered under its ``opaque`` by
  :meth:`RemotingConnection.request` (Java's ``responseTable``; responses may come in any order,
  so this is a dict, not a FIFO: :class:`wire.pairing.Waiting`, the pairing rule the capture
  decoder uses too). A response nobody waits for is dropped, as Java drops it;
* a **request**: it is handed to the connection's ``handler``. Servers install one for every
  connection; clients install one to serve the requests brokers send them
  (NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE, …). The handler returns the response,
  ``None`` for no response, an awaitable of either (long polling), or a :class:`Later` (an answer
  made by a future's done callback: the group commit's): plain return values are written at once,
  awaitables run as tasks so that one slow request never stalls the others on the same
  connection. A coroutine runs as an eager task (:func:`_run_eagerly`): up to
  its first suspension in place, so that the many that never suspend (a send in ASYNC_FLUSH) are
  answered in the same dispatch batch. Python 3.12+ has ``asyncio.eager_task_factory`` for this;
  on 3.11 one small function does the same without a task while it can (see its notes: handlers
  there see no current task). A connection close cancels the handlers still running, which see
  CancelledError and answer nothing. Oneway requests
  (flag bit 1) never get a response. A handler that raises produces SYSTEM_ERROR with the
  exception's text, as ``NettyRemotingAbstract`` does.

Runs of requests. A connection may name request codes it handles in batches (``batch_codes``, with
a :data:`BatchHandler`): the consecutive requests of those codes that one read brings are handed
over together, in order, before anything that follows them, and their results are taken as the
handler's would be, one a request (answers due from one future answered by one callback). A
broker handles a producer's sends so (its store puts their messages as one run): a lone request
too, as a run of one, so that it takes the same short path (its answer encoded from a template)
rather than the handler's general one; a batch handler that declines (None) has the run's
requests go to the handler one at a time.

A malformed frame from the peer is a remote protocol error (:class:`wire.RemoteProtocolError`):
the connection is closed (Java's ``NettyDecoder`` closes the channel) and the error is logged with
its byte offset as a warning; no other connection is affected. Any other exception while reading
is a bug of ours, not the peer's: it is logged with its traceback at error level and the
connection is dropped.

Hostile peers. Decoding is linear in a frame's size, but a 16 MiB frame still costs seconds of
CPU, and on the event loop that time is taken from every other connection. So a server's
connections (``offload_bytes``) decode a frame whose header is that large, and ``prepare`` a
request whose body is (a server's hook that decodes the body, :mod:`reference_broker.bodies`), in
a worker thread, where the JSON parser is the pure-Python one (:func:`wire.fastjson.loads`), which
lets the loop's thread run every few milliseconds; json's C parser would hold the GIL until done.
The connection stops reading meanwhile, so its requests are still handled in order and its
unread bytes wait in the socket. A :class:`RemotingServer` also bounds the memory that unfinished
frames take across all its connections (``max_buffered``: beyond it the connections holding most
are closed, largest first) and closes a connection whose frame has not completed within
``frame_timeout`` seconds (a 16 MiB frame announced and never finished holds its bytes until then;
Netty would hold them until the idle timeout).

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
import gc
import inspect
import itertools
import logging
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future as ThreadFuture
from concurrent.futures import ThreadPoolExecutor
from types import CoroutineType
from typing import Any, cast

from . import fastjson
from .codes import ResponseCode, SerializeType
from .errors import RemoteProtocolError, WireError
from .framing import MAX_TOTAL_LENGTH, Frame, FrameBuffer
from .pairing import Waiting, expects_response, is_response
from .remoting import (
    FLAG_ONEWAY,
    RemotingCommand,
    decode_command,
    decode_frame,
    decode_frame_off_loop,
    encode_command,
    encode_command_head,
)

__all__ = [
    "DEFAULT_FRAME_TIMEOUT",
    "DEFAULT_MAX_BUFFERED",
    "OFFLOAD_BYTES",
    "BatchHandler",
    "BufferBudget",
    "ConnectError",
    "ConnectionClosed",
    "ConnectionPool",
    "Gathered",
    "Handler",
    "Later",
    "LaterRun",
    "NotRemoting",
    "Prepare",
    "RemotingConnection",
    "RemotingIOError",
    "RemotingServer",
    "RequestTimeout",
    "connect",
    "gc_paused",
    "next_opaque",
    "split_addr",
    "start_server",
]

log = logging.getLogger("wire.aio")

class Later:
    """A handler's answer that is due when ``future`` is done: ``finish(future.result())``, called
    by the future's done callback, with no task and no coroutine. Many requests may wait on one
    future (the puts of one group commit): each costs one callback (the requests of one batch,
    one callback for all). A ``finish`` that raises is answered SYSTEM_ERROR; a cancelled future
    answers nothing, and so does a connection that closed meanwhile (the future is not
    cancelled: others may be waiting on it). ``finish`` may give the answer's frame already
    encoded (bytes, the request's opaque in it)."""

    __slots__ = ("finish", "future")

    def __init__(self, future: asyncio.Future[Any],
                 finish: Callable[[Any], RemotingCommand | bytes | None]) -> None:
        self.future = future
        self.finish = finish

    async def wait(self) -> RemotingCommand | None:
        """The answer, awaited (the shared future is shielded: a cancelled caller leaves it be)."""
        answer = self.finish(await asyncio.shield(self.future))
        return decode_command(answer) if type(answer) is bytes else cast("RemotingCommand | None", answer)


class LaterRun:
    """The answers of several requests of one run (a :data:`BatchHandler`'s), all due when
    ``future`` is done: ``finish(future.result())`` gives them, one a request, in the order of
    the requests whose result is this one object. One callback answers them all (the sends of
    one read that one group commit covers). A ``finish`` that raises answers each of them
    SYSTEM_ERROR; as with :class:`Later`, a cancelled future or a closed connection answers
    nothing."""

    __slots__ = ("finish", "future")

    def __init__(self, future: asyncio.Future[Any],
                 finish: Callable[[Any], Sequence[RemotingCommand | bytes | None]]) -> None:
        self.future = future
        self.finish = finish


class Gathered:
    """A handler's answer given as its frame in pieces: ``head`` (the length prefix and the header,
    :func:`wire.remoting.encode_command_head`) and the body's ``parts``, buffers written as they
    are (a pull's records as views of a mapped file), ``size`` bytes in all.

    The parts are lent for as long as the write takes: the connection writes them in the same
    turn of the event loop (one gather write, with whatever else is due on the connection) and
    copies what the socket does not take at once, so no transport ever holds them and whoever
    lent them may unmap or change the memory afterwards. An answer made outside a dispatch
    (by a task) is copied at once."""

    __slots__ = ("head", "parts", "size")

    def __init__(self, head: bytes, parts: list[memoryview], size: int) -> None:
        self.head = head
        self.parts = parts
        self.size = size

    def frame(self) -> bytes:
        """The whole frame, copied."""
        return b"".join([self.head, *self.parts])

    def command(self) -> RemotingCommand:
        """The answer as a command of its own (the body copied), for an answer given later."""
        return decode_command(self.frame())


HandlerResult = RemotingCommand | None | Later | Gathered | Awaitable[RemotingCommand | None]
#: ``handler(connection, request)`` → response, ``None``, or an awaitable of either.
Handler = Callable[["RemotingConnection", RemotingCommand], HandlerResult]
#: ``batch(connection, requests)``: the consecutive requests of one read whose codes the connection
#: batches (``batch_codes``), handled together in their order: one result a request, as the handler
#: would answer it (an exception: as the handler raising it; bytes: the answer's frame, encoded;
#: one :class:`LaterRun` at the places of the requests it answers), or None to have them handled
#: one at a time
BatchHandler = Callable[["RemotingConnection", list[RemotingCommand]],
                        "list[HandlerResult | LaterRun | bytes | Exception] | None"]
#: ``prepare(connection, request)``: CPU-heavy work on a large request, run in a worker thread
#: before the request is handled (see the module notes); what it returns is the connection's
#: ``prepared`` while the handler runs
Prepare = Callable[["RemotingConnection", RemotingCommand], object]


class RemotingIOError(WireError):
    """A connection-level failure (the CLI maps these to exit code 3)."""


class ConnectError(RemotingIOError, ConnectionError):
    """The TCP connection could not be opened."""


class ConnectionClosed(RemotingIOError, ConnectionError):
    """The connection closed before the answer came."""


class RequestTimeout(RemotingIOError, TimeoutError):
    """No answer within the timeout."""


class NotRemoting(ConnectionClosed):
    """The peer's first bytes are not a remoting frame: it is not a RocketMQ server (an HTTP port,
    say). ``head`` holds what it sent first."""

    def __init__(self, message: str, head: bytes = b"") -> None:
        super().__init__(message)
        self.head = head


def _preview(head: bytes) -> str:
    """The first line a peer sent, as text when it is text (``'HTTP/1.1 400 Bad Request'``), else hex."""
    line = head.split(b"\r\n", 1)[0].split(b"\n", 1)[0][:60]
    text = line.decode("latin-1")
    if line and all(32 <= b < 127 for b in line):
        return repr(text)
    return "bytes " + head[:16].hex(" ")


#: bodies of this size or more are written as their own buffer, not copied into their frame
SEPARATE_BODY = 16 * 1024
#: a pass's writes up to this size are joined into one buffer; larger ones go to ``writelines``
JOIN_LIMIT = 64 * 1024
#: the most buffers one ``writev`` takes
try:
    IOV_MAX = max(16, os.sysconf("SC_IOV_MAX"))
except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
    IOV_MAX = 16

#: servers decode a frame with a header, and prepare a request with a body, of this size or more
#: in a worker thread (a 16 MiB frame of small JSON entries costs seconds)
OFFLOAD_BYTES = 256 * 1024
#: a server's default bound on the bytes of unfinished frames held across all its connections
DEFAULT_MAX_BUFFERED = 128 * 1024 * 1024
#: a server's default bound on the seconds a frame may take to arrive once it has begun
DEFAULT_FRAME_TIMEOUT = 30.0

_opaques = itertools.count(1)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _worker_started() -> None:
    fastjson.prefer_python_parser()


_gc_pauses = 0
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Generator[None, None, None]:
    """No cyclic garbage collection while a large frame is decoded (or a large batch put): the
    millions of objects a 16 MiB body makes would trigger full collections, each of which holds
    the GIL for up to a second (the loop's thread with it); what the decoder makes is freed by
    reference counting. Nests, and may be held across threads."""
    global _gc_pauses, _gc_was_enabled
    with _pool_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _pool_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def _decode_pool() -> ThreadPoolExecutor:
    """The worker threads that decode large frames (two: a second large frame need not wait for
    the first, and more would only share the one GIL)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(2, thread_name_prefix="wire-decode", initializer=_worker_started)
        return _pool


def _expire(fut: asyncio.Future[Any]) -> None:
    """The timer of :meth:`RemotingConnection.request`: no answer in time."""
    if not fut.done():
        fut.set_exception(TimeoutError())


def next_opaque() -> int:
    """A process-wide request id, as Java's ``RemotingCommand.requestId`` counter."""
    return next(_opaques) & 0x7FFFFFFF


class RemotingConnection(asyncio.Protocol):
    """One remoting connection; see the module docstring."""

    def __init__(self, handler: Handler | None = None, *, name: str = "",
                 max_total_length: int = MAX_TOTAL_LENGTH,
                 on_close: Callable[[RemotingConnection], None] | None = None,
                 offload_bytes: int | None = None, prepare: Prepare | None = None,
                 on_buffered: Callable[[RemotingConnection, int], None] | None = None,
                 batch: BatchHandler | None = None, batch_codes: frozenset[int] = frozenset()) -> None:
        self.handler = handler
        #: handles runs of consecutive requests of ``batch_codes`` from one read (see BatchHandler)
        self.batch = batch
        self.batch_codes = batch_codes if batch is not None else frozenset()
        self.name = name
        self.on_close = on_close
        #: frames with a header (or, with ``prepare``, requests with a body) of this size or more
        #: are decoded in a worker thread; None: always on the loop (clients)
        self.offload_bytes = offload_bytes
        self.prepare = prepare
        #: told the bytes of unfinished frames this connection holds, after every read that
        #: leaves some or follows one that did (a connection that holds none stays unmentioned)
        self.on_buffered = on_buffered
        self._told_held = 0  # what on_buffered was told last
        #: loop time since which an unfinished frame has been waiting for its bytes, or None
        self.partial_since: float | None = None
        #: what ``prepare`` returned for the request being handled (None outside that call)
        self.prepared: object = None
        self._offloading = 0  # bytes of the frame being decoded in a worker thread, 0 if none
        self._frames = FrameBuffer(max_total_length=max_total_length)
        self._pending: Waiting[asyncio.Future[RemotingCommand]] = Waiting()
        self._transport: asyncio.Transport | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self._parked: dict[Coroutine[Any, Any, RemotingCommand | None], asyncio.Future[Any]] = {}
        self._later = 0  # answers due from Later callbacks
        self._can_write: asyncio.Event | None = None
        self._out: list[bytes | memoryview] = []
        #: the bytes in ``_out``, exactly (a gather write tells a partial write by it)
        self._out_size = 0
        #: ``_out`` holds lent buffers (a :class:`Gathered` answer's parts): they are written
        #: before the dispatch that produced them returns, never left with the transport
        self._lent = False
        #: the socket's descriptor, for those writes (-1: the transport is not a plain socket)
        self._fd = -1
        self._dispatching = False
        self._flush_scheduled = False
        self.closed: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()
        #: why this side closed the connection (a peer's frame that did not decode)
        self._failure: Exception | None = None
        #: the first bytes received, until a frame has decoded (they name a peer that is not RocketMQ)
        self._head: bytes | None = b""
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
        raw = transport.get_extra_info("socket")
        if raw is not None and transport.get_extra_info("ssl_object") is None:
            with contextlib.suppress(OSError, AttributeError, TypeError, ValueError):
                self._fd = int(raw.fileno())
        self._can_write = asyncio.Event()
        self._can_write.set()

    def data_received(self, data: bytes) -> None:
        self._frames.feed(data)
        if self._head is not None and len(self._head) < 64:
            self._head += data[:64 - len(self._head)]
        self._read_frames()

    def _read_frames(self) -> None:
        fb = self._frames
        if self._offloading:
            return  # a large frame is in a worker thread; the rest waits for it
        completed = False
        offload = self.offload_bytes
        batched = self.batch_codes
        #: consecutive requests of batched codes, handled together before anything after them
        run: list[RemotingCommand] = []
        self._dispatching = True
        try:
            try:
                while (frame := fb.next_frame()) is not None:
                    completed = True
                    if offload is not None and (len(frame.header) >= offload or (
                            self.prepare is not None and len(frame.body) >= offload)):
                        if run:
                            todo, run = run, []
                            self._dispatch_run(todo)
                        self._offload(frame)
                        break
                    cmd = decode_frame(frame)
                    self._head = None
                    if cmd.code in batched and not is_response(cmd.flag):
                        run.append(cmd)
                        continue
                    if run:
                        todo, run = run, []
                        self._dispatch_run(todo)
                    self._dispatch(cmd)
            finally:
                # the requests before a frame that does not decode are handled, as they would
                # have been one at a time
                if run:
                    todo, run = run, []
                    self._dispatch_run(todo)
        except RemoteProtocolError as err:
            self._remote_error(err)
        except Exception:
            self._our_bug("reading from")
        finally:
            self._dispatching = False
        self._flush()
        held = fb.buffered
        if not held:
            self.partial_since = None
        elif completed or self.partial_since is None:
            self.partial_since = time.monotonic()
        held += self._offloading
        if self.on_buffered is not None and (held or self._told_held):
            self._told_held = held
            self.on_buffered(self, held)

    def _remote_error(self, err: RemoteProtocolError) -> None:
        # the peer's fault: that connection goes, as Java's NettyDecoder closes the channel
        log.warning("%s: closing connection from %s:%d: %s", self.name or "remoting",
                    self.peer[0], self.peer[1], err)
        self._failure = err
        self._out.clear()
        self._out_size = 0
        self._lent = False
        self._abort(err)

    def _our_bug(self, doing: str) -> None:
        # our own bug, not the peer's: loud (error level, traceback), and the connection is
        # dropped rather than left in an unknown state
        log.exception("%s: bug while %s %s:%d; connection dropped", self.name or "remoting", doing,
                      self.peer[0], self.peer[1])
        self._out.clear()
        self._out_size = 0
        self._lent = False
        self._abort()

    # ------------------------------------------------------------------ large frames

    def _offload(self, frame: Frame) -> None:
        """Decode (and prepare) ``frame`` in a worker thread; reading stops until it is handled."""
        self._offloading = frame.size
        if self._transport is not None:
            self._transport.pause_reading()
        work = _decode_pool().submit(self._decode_large, frame)
        loop = asyncio.get_running_loop()

        def back_to_the_loop(done: ThreadFuture[tuple[RemotingCommand, object]]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is left to answer
                loop.call_soon_threadsafe(self._large_decoded, done)

        work.add_done_callback(back_to_the_loop)

    def _decode_large(self, frame: Frame) -> tuple[RemotingCommand, object]:
        # worker thread: nothing here touches the loop or the transport
        with gc_paused():
            cmd = decode_frame_off_loop(frame)
            offload = self.offload_bytes
            if (self.prepare is not None and offload is not None and len(frame.body) >= offload
                    and not is_response(cmd.flag)):
                return cmd, self.prepare(self, cmd)
            return cmd, None

    def _large_decoded(self, done: ThreadFuture[tuple[RemotingCommand, object]]) -> None:
        self._offloading = 0
        if self.is_closing:
            return
        try:
            cmd, prepared = done.result()
        except RemoteProtocolError as err:
            self._remote_error(err)
            return
        except Exception:
            self._our_bug("decoding a large frame from")
            return
        self._head = None
        self._dispatching = True
        self.prepared = prepared
        try:
            self._dispatch(cmd)
        finally:
            self._dispatching = False
            self.prepared = None
        if self._transport is not None and (self._can_write is None or self._can_write.is_set()):
            self._transport.resume_reading()
        self._read_frames()  # the frames that came with it

    def connection_lost(self, exc: Exception | None) -> None:
        peer = f"{self.peer[0]}:{self.peer[1]}"
        err: ConnectionClosed
        if self._failure is not None and self._head is not None:
            # nothing it sent ever decoded: the peer does not speak the remoting protocol
            err = NotRemoting(f"{peer} is not a RocketMQ server: it answered {_preview(self._head)}, "
                              f"not a remoting frame ({self._failure})", self._head)
        else:
            why = exc or self._failure
            err = ConnectionClosed(f"connection to {peer} closed" + (f": {why}" if why else ""))
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
        if self._transport is not None and not self._transport.is_closing() and not self._offloading:
            self._transport.resume_reading()

    # ------------------------------------------------------------------ dispatch

    def _dispatch_run(self, run: list[RemotingCommand]) -> None:
        """Requests of batched codes from one read (one or more): handled by the batch handler
        together, or one at a time when it declines. Answers that are due from one future (a
        group commit's) are made by one callback, in order."""
        results = self.batch(self, run) if self.batch is not None else None
        if results is None:
            for cmd in run:
                self._dispatch(cmd)
            return
        i, n = 0, len(run)
        taken: list[LaterRun] = []
        while i < n:
            cmd, result = run[i], results[i]
            i += 1
            if type(result) is bytes:
                self._reply(cmd, result)  # the answer's frame, made from a template: the common case
                continue
            if isinstance(result, LaterRun):
                if not any(result is t for t in taken):
                    taken.append(result)
                    self._answer_run([run[k] for k in range(i - 1, n) if results[k] is result], result)
                continue
            if type(result) is Later:
                future = result.future
                j = i
                while j < n and type(later := results[j]) is Later and later.future is future:
                    j += 1
                if j > i:
                    group = cast("list[Later]", results[i - 1:j])
                    self._answer_later(run[i - 1:j], [g.finish for g in group], future)
                    i = j
                    continue
            if isinstance(result, Exception):
                self._handler_failed(cmd, result)
            else:
                self._handled(cmd, result)

    def _dispatch(self, cmd: RemotingCommand) -> None:
        if is_response(cmd.flag):
            fut = self._pending.answer(cmd.opaque)
            if fut is not None and not fut.done():
                fut.set_result(cmd)
            return
        if self.handler is None:
            return
        try:
            result = self.handler(self, cmd)
        except Exception as exc:
            self._handler_failed(cmd, exc)
            return
        self._handled(cmd, result)

    def _handled(self, cmd: RemotingCommand, result: HandlerResult | bytes) -> None:
        """A handler's result: answered now, by a future's callback, or by a task."""
        if result is None or type(result) is RemotingCommand or type(result) is bytes \
                or type(result) is Gathered:
            self._reply(cmd, result)
        elif type(result) is Later:
            self._answer_later([cmd], [result.finish], result.future)
        elif type(result) is CoroutineType:
            _run_eagerly(self, cmd, result)
        elif inspect.isawaitable(result):
            self._spawn(cmd, result)
        else:
            self._reply(cmd, cast("RemotingCommand | None", result))

    @property
    def pending_handlers(self) -> int:
        """Handler calls still running (suspended coroutines and tasks, :class:`Later` answers),
        whose answers are due."""
        return len(self._tasks) + len(self._parked) + self._later

    def _answer_later(self, cmds: list[RemotingCommand],
                      finishes: list[Callable[[Any], RemotingCommand | bytes | None]],
                      future: asyncio.Future[Any]) -> None:
        """Answer requests whose answers are all due from ``future`` (one :class:`Later`, or the
        :class:`Later` answers of a run that share one future): one callback answers them, in
        order, each with its ``finish`` (one that raises answers its request SYSTEM_ERROR)."""

        def answers(fut: asyncio.Future[Any]) -> Iterator[RemotingCommand | bytes | Exception | None]:
            for finish in finishes:
                try:
                    yield finish(fut.result())
                except Exception as exc:
                    yield exc

        self._answer_when_done(cmds, future, answers)

    def _answer_run(self, cmds: list[RemotingCommand], later: LaterRun) -> None:
        """Answer the requests of a run that one :class:`LaterRun` answers: one callback (a
        ``finish`` that raises answers each of them SYSTEM_ERROR)."""

        def answers(fut: asyncio.Future[Any]) -> Sequence[RemotingCommand | bytes | Exception | None]:
            try:
                return later.finish(fut.result())
            except Exception as exc:
                return [exc] * len(cmds)

        self._answer_when_done(cmds, later.future, answers)

    def _answer_when_done(self, cmds: list[RemotingCommand], future: asyncio.Future[Any],
                          answers: Callable[[asyncio.Future[Any]],
                                            Iterable[RemotingCommand | bytes | Exception | None]]) -> None:
        """When ``future`` is done, answer ``cmds`` with ``answers(future)``, one each (an
        exception: SYSTEM_ERROR), written in that turn of the loop; a cancelled future or a
        closed connection answers nothing."""
        count = len(cmds)
        self._later += count

        def done(fut: asyncio.Future[Any]) -> None:
            self._later -= count
            if fut.cancelled() or self.is_closing:
                return
            # the answers gather as during a dispatch, and are written at the end of this
            # callback rather than in the next turn of the loop
            nested = self._dispatching
            self._dispatching = True
            try:
                for cmd, answer in zip(cmds, answers(fut), strict=True):
                    if isinstance(answer, Exception):
                        self._handler_failed(cmd, answer)
                    else:
                        self._reply(cmd, answer)
            finally:
                if not nested:
                    self._dispatching = False
                    self._flush()

        future.add_done_callback(done)

    def _handler_failed(self, cmd: RemotingCommand, exc: BaseException) -> None:
        """A handler (or its task) raised: SYSTEM_ERROR with the exception's text, as
        ``NettyRemotingAbstract`` answers. A request that does not decode (a header field missing
        or not a number: :class:`RemoteProtocolError`) is the peer's fault, one warning line;
        anything else is a bug of ours and is logged with its traceback."""
        if isinstance(exc, RemoteProtocolError):
            log.warning("%s: %s from %s:%d does not decode: %s", self.name or "remoting", cmd.code_name,
                        self.peer[0], self.peer[1], exc)
        else:
            log.error("handler failed for %s", cmd, exc_info=exc)
        self._reply(cmd, cmd.response(ResponseCode.SYSTEM_ERROR, _describe(exc)))

    def _task_done(self, cmd: RemotingCommand, task: asyncio.Future[RemotingCommand | None]) -> None:
        """A handler's task ended: its answer, SYSTEM_ERROR for an exception, nothing if cancelled."""
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self._handler_failed(cmd, exc)
        else:
            self._reply(cmd, task.result())

    def _spawn(self, cmd: RemotingCommand, pending: Awaitable[RemotingCommand | None]) -> None:
        task = asyncio.ensure_future(pending)
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._task_done, cmd))

    def _reply(self, request: RemotingCommand, response: RemotingCommand | Gathered | bytes | None) -> None:
        """Write the answer to ``request``: a command, a :class:`Gathered` frame, or its frame
        already encoded (bytes, the request's opaque in it)."""
        if response is None or not expects_response(request.flag):
            return
        transport = self._transport
        if transport is None or transport.is_closing():
            # mirrors NettyRemotingAbstract: an answer for a channel that is gone is only dropped
            log.debug("dropping the answer to %s: the connection is closed", request)
            return
        if type(response) is bytes:
            data = response
        elif type(response) is Gathered:
            # its head carries the request's opaque already (the handler built it for this request)
            if self._dispatching:
                self._out.append(response.head)
                self._out.extend(response.parts)
                self._out_size += response.size
                self._lent = True
            else:
                self.send_raw(response.frame())
            return
        else:
            assert isinstance(response, RemotingCommand)
            if response.opaque != request.opaque:
                response = response.replace(opaque=request.opaque)
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
            head = encode_command_head(cmd)
            self._write(head, len(head) + len(body))
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
            self._lent = False
            return
        if self._lent:
            self._lent = False
            self._write_lent(transport, out, size)
        elif len(out) == 1:
            transport.write(out[0])
        elif size <= JOIN_LIMIT:
            transport.write(b"".join(out))
        else:
            # joining megabytes of pull answers costs more than the write itself: hand the
            # buffers over as they are (uvloop writes them with one writev)
            transport.writelines(out)
        out.clear()

    def _write_lent(self, transport: asyncio.Transport, out: list[bytes | memoryview], size: int) -> None:
        """Write ``out``, which holds lent buffers, so that nothing keeps them: straight to the
        socket with ``writev`` when the transport has nothing queued (what the socket does not
        take is copied and given to the transport, behind it), else copied into the transport.
        uvloop's and asyncio's ``writelines`` would keep the views they cannot send at once, and
        the memory they point at may change after this turn of the loop (a mapped file unmapped
        or cut)."""
        sent = 0
        fd = self._fd
        if fd >= 0 and not transport.get_write_buffer_size():
            try:
                for i in range(0, len(out), IOV_MAX):
                    chunk = out[i:i + IOV_MAX]
                    n = os.writev(fd, chunk)
                    sent += n
                    if i + IOV_MAX < len(out) and n < sum(map(len, chunk)):
                        break
            except BlockingIOError:
                pass
            except OSError:
                pass  # the transport meets the error with what is left, and closes the connection
            if sent == size or (sent and sent == sum(map(len, out))):
                return
        if sent:
            rest: list[bytes | memoryview] = []
            skip = sent
            for buf in out:
                n = len(buf)
                if skip >= n:
                    skip -= n
                    continue
                rest.append(buf[skip:] if skip else buf)
                skip = 0
            transport.write(b"".join(rest))
        else:
            transport.write(b"".join(out))

    async def drain(self) -> None:
        if self._can_write is not None:
            await self._can_write.wait()

    async def request(self, cmd: RemotingCommand, timeout: float = 3.0) -> RemotingCommand:
        """Send a request and wait for its response (the opaque is assigned here)."""
        opaque = next_opaque()
        if cmd.opaque != opaque or cmd.flag & FLAG_ONEWAY:
            cmd = cmd.replace(opaque=opaque, flag=cmd.flag & ~FLAG_ONEWAY)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[RemotingCommand] = loop.create_future()
        self._pending.expect(cmd.flag, opaque, fut)
        # the future itself is awaited, with a timer that fails it: ``asyncio.wait_for`` on Python
        # 3.11 drops a cancellation that arrives as the answer does (a periodic job cancelled at
        # shutdown then never stopped), and ``asyncio.timeout`` needs a task, which a handler run
        # eagerly does not have
        timer = loop.call_later(timeout, _expire, fut)
        try:
            self.send(cmd)
            return await fut
        except TimeoutError:
            raise RequestTimeout(
                f"no answer to {cmd.code_name} from {self.peer[0]}:{self.peer[1]} within {timeout:g}s"
            ) from None
        finally:
            timer.cancel()
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
            async with asyncio.timeout(2):  # never drops the caller's cancellation (3.11's wait_for may)
                await self.wait_closed()

    async def __aenter__(self) -> RemotingConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


if sys.version_info >= (3, 12):

    def _run_eagerly(conn: RemotingConnection, cmd: RemotingCommand,
                     coro: Coroutine[Any, Any, RemotingCommand | None]) -> None:
        """Run a handler's coroutine as an eager task (``asyncio.eager_task_factory``): up to its
        first suspension right here, so that one that never suspends (a send in ASYNC_FLUSH, a
        pull that finds messages) is answered in this dispatch batch, with no loop pass; one that
        suspends goes on as the task it already is."""
        task = asyncio.eager_task_factory(asyncio.get_running_loop(), coro)
        if task.done():
            conn._task_done(cmd, task)
        else:
            conn._tasks.add(task)
            task.add_done_callback(functools.partial(conn._task_done, cmd))

else:

    def _run_eagerly(conn: RemotingConnection, cmd: RemotingCommand,
                     coro: Coroutine[Any, Any, RemotingCommand | None]) -> None:
        """Python 3.11 has no eager tasks: this does what one would, without a task while it can.

        One step of the coroutine runs right here; one that finishes is answered in this dispatch
        batch. One that waits on a future of this loop (a group commit's flush, a parked pull) is
        resumed by that future's done callback with the next step, as a task's wake-up would; the
        connection keeps it in ``_parked`` so that closing cancels the future it waits on. Anything
        else it yields (a bare ``await asyncio.sleep(0)``) hands the rest to a task
        (:class:`_Resumed`). This is the one place that uses asyncio's private future protocol: a
        future a coroutine yields has ``_asyncio_future_blocking`` set, which the task waiting on it
        clears, as we do. Handlers run this way see no current task, so they must not rely on
        ``asyncio.current_task()`` or ``asyncio.timeout`` (nor ``wait_for``, which uses it on 3.12+);
        on 3.12+ they run as real tasks.
        """
        try:
            yielded = coro.send(None)
        except StopIteration as stop:
            conn._reply(cmd, stop.value)
            return
        except asyncio.CancelledError:
            return  # as a cancelled task: no answer
        except Exception as exc:
            conn._handler_failed(cmd, exc)
            return
        if (yielded is not None and getattr(yielded, "_asyncio_future_blocking", False)
                and yielded.get_loop() is asyncio.get_running_loop()):
            yielded._asyncio_future_blocking = False
            conn._parked[coro] = yielded

            def wake(_fut: asyncio.Future[Any]) -> None:
                conn._parked.pop(coro, None)
                _run_eagerly(conn, cmd, coro)

            yielded.add_done_callback(wake)
        else:
            conn._spawn(cmd, _Resumed(coro, yielded))


class _Resumed:
    """The rest of a coroutine whose first step already ran (:func:`_run_eagerly`, Python 3.11):
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
        async with asyncio.timeout(timeout):  # never drops the caller's cancellation (3.11's wait_for may)
            _, proto = await loop.create_connection(lambda: RemotingConnection(handler, name=name),
                                                    host, port)
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
                async with asyncio.timeout(1):
                    await conn.wait_closed()

    async def __aenter__(self) -> ConnectionPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class BufferBudget:
    """The bytes of unfinished frames held by the connections of one server (or of several that
    share it), kept at most ``limit`` (None or 0: no limit) by closing the connections that hold
    most, largest first. A connection reports what it holds after every read."""

    def __init__(self, limit: int | None = DEFAULT_MAX_BUFFERED, name: str = "") -> None:
        self.limit = limit
        self.name = name
        #: bytes held per connection (only those holding some)
        self.held: dict[RemotingConnection, int] = {}
        self.total = 0

    def update(self, conn: RemotingConnection, held: int) -> None:
        self.total += held - self.held.pop(conn, 0)
        if held:
            self.held[conn] = held
        limit = self.limit
        if not limit or self.total <= limit:
            return
        for victim, size in sorted(self.held.items(), key=lambda kv: kv[1], reverse=True):
            if self.total <= limit:
                break
            log.warning("%s: closing the connection from %s:%d: it holds %d bytes of unfinished frames, "
                        "and all connections %d, over the budget of %d (serverMaxBufferedBytes)",
                        self.name or "remoting", victim.peer[0], victim.peer[1], size, self.total, limit)
            self.total -= self.held.pop(victim)
            victim._abort()


class RemotingServer:
    """A listening remoting server that tracks its connections and closes them when it closes.

    It bounds what hostile clients can make it hold (see the module notes): ``max_buffered`` bytes
    of unfinished frames over all connections, and ``frame_timeout`` seconds for a frame to arrive
    once begun (``None`` or 0: no bound); its connections decode large frames off the event loop,
    with ``prepare`` run on large request bodies there."""

    def __init__(self, handler: Handler, *, name: str = "",
                 on_connect: Callable[[RemotingConnection], None] | None = None,
                 on_close: Callable[[RemotingConnection], None] | None = None,
                 max_total_length: int = MAX_TOTAL_LENGTH, prepare: Prepare | None = None,
                 offload_bytes: int | None = OFFLOAD_BYTES, max_buffered: int | None = DEFAULT_MAX_BUFFERED,
                 budget: BufferBudget | None = None,
                 frame_timeout: float | None = DEFAULT_FRAME_TIMEOUT,
                 batch: BatchHandler | None = None, batch_codes: frozenset[int] = frozenset()) -> None:
        self.handler = handler
        self.batch = batch
        self.batch_codes = batch_codes
        self.name = name
        self.on_connect = on_connect
        self.on_close = on_close
        self.max_total_length = max_total_length
        self.prepare = prepare
        self.offload_bytes = offload_bytes
        #: the bound on unfinished frames: ``budget`` when servers share one (a broker's two
        #: listeners), else one of ``max_buffered`` bytes for this server alone
        self.budget = budget if budget is not None else BufferBudget(max_buffered, name)
        self.frame_timeout = frame_timeout
        self.connections: set[RemotingConnection] = set()
        self._server: asyncio.Server | None = None
        self._sweeper: asyncio.Task[None] | None = None

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
            self.budget.update(conn, 0)
            if self.on_close is not None:
                self.on_close(conn)

        return _Conn(self.handler, name=self.name, on_close=closed,
                     max_total_length=self.max_total_length, offload_bytes=self.offload_bytes,
                     prepare=self.prepare, on_buffered=self.budget.update, batch=self.batch,
                     batch_codes=self.batch_codes)

    async def _sweep(self, timeout: float) -> None:
        """Close connections whose frame has not completed within ``timeout`` seconds."""
        while True:
            await asyncio.sleep(min(1.0, timeout / 4))
            now = time.monotonic()
            for conn in list(self.connections):
                since = conn.partial_since
                if since is not None and now - since >= timeout and not conn.is_closing:
                    log.warning("%s: closing the connection from %s:%d: its frame has not completed in %g s "
                                "(%d bytes so far; serverFrameReadTimeoutSeconds)", self.name or "remoting",
                                conn.peer[0], conn.peer[1], timeout, conn._frames.buffered)
                    conn._abort()

    async def start(self, host: str, port: int) -> RemotingServer:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._factory, host, port, reuse_address=True)
        if self.frame_timeout:
            self._sweeper = loop.create_task(self._sweep(self.frame_timeout))
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
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        if self._server is not None:
            self._server.close()
        conns = list(self.connections)
        for conn in conns:
            conn.close()
        for conn in conns:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2):
                    await conn.wait_closed()
        if self._server is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2):
                    await self._server.wait_closed()

    async def __aenter__(self) -> RemotingServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def start_server(handler: Handler, host: str, port: int, *, name: str = "",
                       on_connect: Callable[[RemotingConnection], None] | None = None,
                       on_close: Callable[[RemotingConnection], None] | None = None,
                       max_total_length: int = MAX_TOTAL_LENGTH, prepare: Prepare | None = None,
                       max_buffered: int | None = DEFAULT_MAX_BUFFERED, budget: BufferBudget | None = None,
                       frame_timeout: float | None = DEFAULT_FRAME_TIMEOUT) -> RemotingServer:
    """Listen for remoting connections, each served by ``handler``."""
    server = RemotingServer(handler, name=name, on_connect=on_connect, on_close=on_close,
                            max_total_length=max_total_length, prepare=prepare, max_buffered=max_buffered,
                            budget=budget, frame_timeout=frame_timeout)
    return await server.start(host, port)


def serialize_type_of(name: str) -> SerializeType:
    """``"json"``/``"rocketmq"`` (any case) → :class:`SerializeType`."""
    try:
        return SerializeType[name.upper()]
    except KeyError:
        raise ValueError(f"unknown serialize type {name!r}: expected json or rocketmq") from None
