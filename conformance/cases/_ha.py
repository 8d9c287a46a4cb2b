# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The suite as a slave on a master's HA port, for the HA4 and HA5 families: one raw connection,
frames written and read with :mod:`wire.ha` (the layouts and stream decoders the brokers use)."""

from __future__ import annotations

import asyncio

from wire import WireError
from wire.ha import HADirection, HAMessage, HAProtocol, encode_ha_message, ha_stream_decoder

from ..context import Ctx
from ..peer import RawPeer

__all__ = ["FakeSlave"]


class FakeSlave:
    """A raw connection to the master's HA port, speaking ``protocol`` as a slave."""

    def __init__(self, ctx: Ctx, peer: RawPeer, protocol: HAProtocol) -> None:
        self.ctx = ctx
        self.peer = peer
        self.protocol = protocol
        self.decoder = ha_stream_decoder(protocol, HADirection.MASTER_TO_SLAVE)

    @classmethod
    async def connect(cls, ctx: Ctx, protocol: HAProtocol) -> FakeSlave:
        return cls(ctx, await ctx.raw("ha"), protocol)

    def send(self, msg: HAMessage) -> None:
        self.peer.send(encode_ha_message(msg, self.protocol))

    async def next(self, timeout: float, *, closed_ok: bool = False) -> HAMessage | None:
        """The master's next frame; None when none came in time (or, with ``closed_ok``, when the
        master closed the connection). Bytes that are no frame of the protocol fail the case."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            try:
                frame = self.decoder.next_frame()
            except WireError as err:
                self.ctx.fail(f"the master sent bytes that are no {self.protocol} frame: {err}")
                raise
            if frame is not None:
                return frame.message
            if self.peer.eof:
                if closed_ok:
                    return None
                self.ctx.fail("the master closed the HA connection")
            left = end - loop.time()
            if left <= 0:
                return None
            try:
                data = await asyncio.wait_for(self.peer.reader.read(65536), left)
            except TimeoutError:
                return None
            except ConnectionError:
                data = b""
            if not data:
                self.peer.eof = True
                continue
            self.decoder.feed(data)
