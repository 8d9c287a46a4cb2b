# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Non-blocking socket helpers for the HA connections (raw TCP, no remoting framing).

:func:`send_now` sends what the socket takes right now and copies out the rest (at most a socket
buffer's worth) for the caller to send when it can; :func:`wait_writable` waits for a socket to
take bytes again without writing to it, for a caller that then makes its own calls (``sendfile``
from a CommitLog file); :func:`wait_readable` the same for a reader that receives with its own
calls (a slave takes what the socket holds at once and waits only when it is empty).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence

__all__ = ["IOV_MAX", "connect", "listen", "send_now", "split_host_port", "wait_readable", "wait_writable"]

#: buffers per sendmsg call (Linux's IOV_MAX is 1024)
IOV_MAX = 1024


def split_host_port(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"not a host:port address: {addr!r}")
    return host.strip("[]"), int(port)


def listen(host: str, port: int) -> socket.socket:
    """A non-blocking listening socket (``SO_REUSEADDR``, as ``AcceptSocketService.beginAccept``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(64)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def tune(sock: socket.socket) -> None:
    """``HAConnection``'s socket options: no Nagle delay, non-blocking."""
    sock.setblocking(False)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


async def connect(addr: str, timeout: float) -> socket.socket:
    """A connected, non-blocking socket to ``host:port``."""
    host, port = split_host_port(addr)
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    family, type_, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, type_, proto)
    try:
        tune(sock)
        async with asyncio.timeout(timeout):  # never drops the caller's cancellation (3.11's wait_for may)
            await loop.sock_connect(sock, sockaddr)
    except BaseException:
        sock.close()
        raise
    return sock


def send_now(sock: socket.socket, buffers: Sequence[bytes | memoryview]) -> bytes:
    """Send ``buffers`` in order with as few ``sendmsg`` calls as the socket takes right now;
    returns the unsent rest as a copy (empty when everything went)."""
    pending = list(buffers)
    while pending:
        try:
            n = sock.sendmsg(pending[:IOV_MAX])
        except (BlockingIOError, InterruptedError):
            n = 0
        if n == 0:
            break
        while pending and n >= len(pending[0]):
            n -= len(pending[0])
            pending.pop(0)
        if pending and n:
            pending[0] = memoryview(pending[0])[n:]
    return b"".join(pending)


def _ready(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


async def wait_writable(sock: socket.socket) -> None:
    """Until ``sock`` takes bytes again."""
    await _wait_ready(sock, writable=True)


async def wait_readable(sock: socket.socket) -> None:
    """Until ``sock`` has bytes (or its end) to read."""
    await _wait_ready(sock, writable=False)


async def _wait_ready(sock: socket.socket, *, writable: bool) -> None:
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[None] = loop.create_future()
    fd = sock.fileno()
    add, remove = (loop.add_writer, loop.remove_writer) if writable else (loop.add_reader, loop.remove_reader)
    add(fd, _ready, fut)
    try:
        await fut
    finally:
        # a socket closed meanwhile had its registration removed by its closer, and its number may
        # belong to another socket by now
        if sock.fileno() == fd:
            remove(fd)
