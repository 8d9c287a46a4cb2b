# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The name-server traffic of the real 4.9.8 captures, as timed requests and their answers.

Each request keeps its exact bytes, the capture it came from, the TCP connection it was sent on
(so a replay can keep broker connections open across captures, as the brokers did) and the Java
name server's answer (None when it sent none).
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.conftest import shared_path
from tests.pcaputil import streams
from wire import DecodeError, FrameBuffer, RemotingCommand, decode_frame

NAMESRV_PORT = 9876


@dataclass
class Exchange:
    ts: float
    capture: str
    #: (client address, client port) of the TCP connection
    conn: tuple[str, int]
    raw: bytes
    request: RemotingCommand
    #: the Java name server's response, None if it sent none
    response: RemotingCommand | None


def _frames(data: bytes) -> list[tuple[int, bytes, RemotingCommand]]:
    fb = FrameBuffer()
    fb.feed(data)
    out = []
    while True:
        try:
            frame = fb.next_frame()
        except DecodeError:
            break  # the malformed-frame captures: the rest of that stream is not remoting
        if frame is None:
            break
        end = frame.offset + 8 + len(frame.header) + len(frame.body)
        out.append((frame.offset, bytes(data[frame.offset:end]), decode_frame(frame)))
    return out


def exchanges(*captures: str) -> list[Exchange]:
    """Every request sent to the name server in ``captures`` (names under java-4.9.8, without
    ``.pcap``), in time order, each with the answer it got."""
    out: list[Exchange] = []
    for name in captures:
        path = shared_path("captures", "java-4.9.8", f"{name}.pcap")
        dirs = streams(path)
        answers: dict[tuple[str, int], dict[int, RemotingCommand]] = {}
        for d in dirs:
            if d.sport == NAMESRV_PORT:
                answers[(d.dst, d.dport)] = {c.opaque: c for _, _, c in _frames(bytes(d.data))}
        for d in dirs:
            if d.dport != NAMESRV_PORT:
                continue
            key = (d.src, d.sport)
            replies = answers.get(key, {})
            for offset, raw, cmd in _frames(bytes(d.data)):
                ts = next(t for start, t, n in d.segments if start <= offset < start + n)
                out.append(Exchange(ts, name, key, raw, cmd, None if cmd.is_oneway else replies.get(cmd.opaque)))
    out.sort(key=lambda e: e.ts)
    return out


@dataclass
class RawConnection:
    conn: tuple[str, int]
    #: everything the client sent, and everything the Java name server sent back
    sent: bytes
    answered: bytes


def raw_connections(capture: str) -> list[RawConnection]:
    """The client connections to the name server in ``capture``, as raw bytes both ways."""
    dirs = streams(shared_path("captures", "java-4.9.8", f"{capture}.pcap"))
    back = {(d.dst, d.dport): bytes(d.data) for d in dirs if d.sport == NAMESRV_PORT}
    return [RawConnection((d.src, d.sport), bytes(d.data), back.get((d.src, d.sport), b""))
            for d in dirs if d.dport == NAMESRV_PORT]
