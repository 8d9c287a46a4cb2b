# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A raw connection to a target: bytes out exactly as given, frames in, and the close seen.

:class:`wire.aio.RemotingConnection` is the right tool for well-formed conversations, and the cases
use it; but it cannot send a malformed frame and then tell "closed" from "silent", nor see an
answer nobody asked for (a response to a oneway request is dropped there, as Java drops it).
:class:`RawPeer` can: it reads into a :class:`wire.FrameBuffer` and reports what arrived.
"""

from __future__ import annotations

import asyncio
import contextlib

from wire import FrameBuffer, RemotingCommand, WireError, decode_frame, encode_command
from wire.aio import ConnectError, split_addr

__all__ = ["PeerClosed", "RawPeer"]


class PeerClosed(ConnectionError):
    """The target closed the connection."""


class RawPeer:
    """One raw TCP connection (see the module docstring)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, addr: str) -> None:
        self.reader = reader
        self.writer = writer
        self.addr = addr
        self.frames = FrameBuffer()
        self.eof = False
        #: every byte received, for diagnostics
        self.received = bytearray()

    @classmethod
    async def open(cls, addr: str, timeout: float = 5.0) -> RawPeer:
        host, port = split_addr(addr)
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        except TimeoutError:
            raise ConnectError(f"cannot connect to {addr}: timed out after {timeout:g}s") from None
        except OSError as exc:
            raise ConnectError(f"cannot connect to {addr}: {exc.strerror or exc}") from None
        return cls(reader, writer, addr)

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    def send_command(self, cmd: RemotingCommand) -> None:
        self.writer.write(encode_command(cmd))

    async def drain(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    async def _fill(self, timeout: float) -> bool:
        """Read once; False on timeout. EOF (or a reset) sets :attr:`eof`."""
        try:
            data = await asyncio.wait_for(self.reader.read(65536), timeout)
        except TimeoutError:
            return False
        except ConnectionError:
            data = b""
        if not data:
            self.eof = True
            return True
        self.received += data
        self.frames.feed(data)
        return True

    async def read_command(self, timeout: float) -> RemotingCommand | None:
        """The next command from the target; ``None`` if none came within ``timeout`` seconds.
        Raises :class:`PeerClosed` when the target closed the connection first, and
        :class:`wire.WireError` when what came is not a frame."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            frame = self.frames.next_frame()
            if frame is not None:
                return decode_frame(frame)
            if self.eof:
                raise PeerClosed(f"{self.addr} closed the connection")
            left = end - loop.time()
            if left <= 0 or not await self._fill(left):
                return None

    async def response_to(self, opaque: int, timeout: float) -> RemotingCommand | None:
        """The response with ``opaque``; other commands that come first are skipped."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            cmd = await self.read_command(max(0.0, end - loop.time()))
            if cmd is None:
                return None
            if cmd.is_response and cmd.opaque == opaque:
                return cmd

    async def wait_closed(self, timeout: float) -> bool:
        """Whether the target closes the connection within ``timeout`` seconds (anything it sends
        meanwhile is kept in :attr:`received`)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not self.eof:
            left = end - loop.time()
            if left <= 0:
                return False
            await self._fill(left)
        return True

    def answers(self) -> list[RemotingCommand]:
        """The commands decodable from everything received so far."""
        fb = FrameBuffer()
        fb.feed(bytes(self.received))
        out = []
        with contextlib.suppress(WireError):
            while (frame := fb.next_frame()) is not None:
                out.append(decode_frame(frame))
        return out

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), 2)
