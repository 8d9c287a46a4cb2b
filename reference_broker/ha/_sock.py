# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Non-blocking socket helpers for the HA connections (raw TCP, no remoting framing).

The master sends CommitLog bytes straight from the mapped files: :func:`send_now` hands the kernel
a list of buffers (transfer headers and read-only views of the mapping) in one ``sendmsg`` call,
so the data is copied once, from the page cache into the socket, and never into a Python object.
What the socket does not take at once is copied out (it is at most a socket buffer's worth), so
that the caller can release its views before it waits: a CommitLog file with a view out cannot be
closed.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence

__all__ = ["IOV_MAX", "connect", "listen", "send_now", "split_host_port"]

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
