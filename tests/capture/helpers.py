# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Small builders shared by the capture tests: remoting frames and synthetic pcap files."""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

from wire import RemotingCommand, SerializeType, encode_command
from wire.capture.synth import PcapWriter, TcpFlow


def request(code: int, opaque: int, ext: dict[str, str] | None = None, body: bytes | None = None, *,
            oneway: bool = False, binary: bool = False) -> RemotingCommand:
    return RemotingCommand.request(code, ext or {}, body, opaque=opaque, oneway=oneway,
                                   serialize_type=SerializeType.ROCKETMQ if binary else SerializeType.JSON)


def frame(cmd: RemotingCommand) -> bytes:
    return encode_command(cmd)


def exchange(n: int, *, binary: bool = False, body: int = 32) -> list[tuple[int, bytes]]:
    """``n`` request/response pairs as (direction, frame bytes), alternating."""
    out: list[tuple[int, bytes]] = []
    for i in range(n):
        req = request(10 if i % 2 else 105, i + 1, {"topic": f"T{i}"}, b"x" * body, binary=binary)
        out.append((0, frame(req)))
        out.append((1, frame(req.response(0, ext_fields={"queueId": str(i)}))))
    return out


def write_conversation(path: Path, frames: Iterable[tuple[int, bytes]], *, linktype: int = 1,
                       client: tuple[str, int] = ("10.0.0.1", 50000), server: tuple[str, int] = ("10.0.0.2", 9876),
                       mss: int = 1448, handshake: bool = True, close: bool = True, t0: float = 1000.0,
                       step: float = 0.001) -> Path:
    """One TCP connection carrying ``frames`` (direction, bytes), each acked, as a classic pcap."""
    buf = io.BytesIO()
    w = PcapWriter(buf, linktype)
    flow = TcpFlow(w, client, server, mss=mss)
    t = t0
    if handshake:
        flow.handshake(t)
    for direction, data in frames:
        t += step
        flow.send(t, direction, data)
    if close:
        flow.close(t + step)
    path.write_bytes(buf.getvalue())
    return path
