# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Hand-driven HA peers for the tests: a slave whose every report the test chooses (it can ack late,
never, or lie) and a master that sends whatever transfer it is told to. Both speak through the
sans-IO sessions of wire.ha.session over plain asyncio streams."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from tests.broker.helpers import wait_until
from wire.ha.session import V4SlaveSession, pack_report, pack_transfer_header

if TYPE_CHECKING:
    from reference_broker.broker import Broker


class FakeSlave:
    """A TCP client of a master's HA port that reports only what the test says."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 auto_ack: bool = False) -> None:
        self.reader = reader
        self.writer = writer
        #: report the end of the data received after each read (an honest, prompt slave)
        self.auto_ack = auto_ack
        self.session = V4SlaveSession()
        self.session.connected(0, 0)
        #: (offset, data) of every transfer received, heartbeats included
        self.transfers: list[tuple[int, bytes]] = []
        self._end = 0
        self._task = asyncio.create_task(self._read())
        self.closed = asyncio.Event()

    @classmethod
    async def connect(cls, port: int, *, auto_ack: bool = False) -> FakeSlave:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, auto_ack=auto_ack)

    @classmethod
    async def attach(cls, master: Broker, first: int = 0, *, auto_ack: bool = False) -> FakeSlave:
        """A slave of ``master`` whose first report says it holds ``first`` bytes, once the
        master has started sending to it."""
        ha = master.ha
        assert ha is not None, "not a master with an HA service"
        fake = await cls.connect(ha.port, auto_ack=auto_ack)
        await fake.report(first)
        await wait_until(lambda: bool(ha.connections) and ha.connections[0].session.started)
        return fake

    async def _read(self) -> None:
        try:
            while True:
                data = await self.reader.read(1 << 20)
                if not data:
                    break
                pos = 0
                while pos < len(data):
                    window = self.session.recv_buffer()
                    n = min(len(window), len(data) - pos)
                    window[:n] = data[pos:pos + n]
                    pos += n
                    for o, v in self.session.received(n, 0):
                        self.transfers.append((o, bytes(v)))
                        if v:
                            self._end = o + len(v)
                if self.auto_ack and self._end:
                    self.writer.write(pack_report(self._end))
        except (ConnectionError, OSError):
            pass
        finally:
            self.closed.set()

    @property
    def end(self) -> int:
        """The end of the data received (0 before any)."""
        return self._end

    async def report(self, offset: int) -> None:
        self.writer.write(pack_report(offset))
        await self.writer.drain()

    async def wait_data(self, end: int, timeout: float = 10.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.end < end:
            assert loop.time() < deadline, f"received up to {self.end}, waited for {end}"
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


class FakeMaster:
    """An HA listener that sends the transfers the test chooses and records the slave's reports."""

    def __init__(self) -> None:
        self.server: asyncio.Server | None = None
        self.connections: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.reports: list[list[int]] = []
        self.connected = asyncio.Event()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[FakeMaster]:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        try:
            yield self
        finally:
            self.server.close()
            for _, w in self.connections:
                w.close()

    @property
    def addr(self) -> str:
        assert self.server is not None
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections.append((reader, writer))
        mine: list[int] = []
        self.reports.append(mine)
        self.connected.set()
        buf = b""
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                buf += data
                while len(buf) >= 8:
                    mine.append(int.from_bytes(buf[:8], "big", signed=True))
                    buf = buf[8:]

    async def send(self, offset: int, data: bytes = b"", conn: int = -1) -> None:
        _, writer = self.connections[conn]
        writer.write(pack_transfer_header(offset, len(data)) + data)
        await writer.drain()

    async def send_raw(self, data: bytes, conn: int = -1) -> None:
        """Bytes as they are (a frame cut anywhere, a header alone)."""
        _, writer = self.connections[conn]
        writer.write(data)
        await writer.drain()
