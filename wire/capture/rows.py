# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The rows a capture decodes to: plain named tuples, never construct Containers.

See :mod:`wire.capture` for the row model as a whole. Rows are :class:`typing.NamedTuple`
instances, so they are tuples (cheap to build, picklable, usable as Spark rows); each has a
``kind`` property (``"command"``, ``"ha"``, ``"problem"``) and :meth:`flat` gives the
flat tuple of :data:`FLAT_COLUMNS` that bulk analysis wants.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..errors import DecodeError
from ..remoting import RemotingCommand

__all__ = [
    "ARROWS",
    "DIRECTIONS",
    "FLAT_COLUMNS",
    "CommandRow",
    "Conversation",
    "HaRow",
    "ProblemRow",
    "Row",
]

#: direction index → short name: 0 is client → server, 1 server → client
DIRECTIONS = ("c2s", "s2c")
ARROWS = ("c→s", "s→c")

#: The columns of :meth:`CommandRow.flat` / :meth:`HaRow.flat` / :meth:`ProblemRow.flat`.
FLAT_COLUMNS = ("ts", "flow", "direction", "code", "opaque", "flag", "header_len", "body_len",
                "serialize_type", "error", "offset")


class Conversation:
    """One TCP connection as the rows see it: endpoints, role, protocol and running counters.

    ``role`` is the server port's role (``namesrv``, ``broker``, ``vip``, ``controller``, ``ha``,
    ``remoting`` for a port named only as remoting, or ``None`` when the port is unknown);
    ``protocol`` is ``"remoting"``, ``"ha"``, ``"other"`` (not RocketMQ) or ``"unknown"`` (not
    decided yet, no payload seen). ``ha_variant`` names the HA protocol variant once detected.
    """

    __slots__ = ("index", "capture", "client", "client_port", "server", "server_port", "role", "protocol",
                 "ha_variant", "first_ts", "last_ts", "syn", "frames", "bytes", "problems", "missing",
                 "unanswered")

    def __init__(self, index: int, capture: str, client: str, client_port: int, server: str,
                 server_port: int, role: str | None, protocol: str, first_ts: float, syn: bool) -> None:
        self.index = index
        self.capture = capture
        self.client = client
        self.client_port = client_port
        self.server = server
        self.server_port = server_port
        self.role = role
        self.protocol = protocol
        self.ha_variant: str | None = None
        self.first_ts = first_ts
        self.last_ts = first_ts
        self.syn = syn
        #: frames decoded per direction
        self.frames = [0, 0]
        #: payload bytes delivered per direction
        self.bytes = [0, 0]
        self.problems = 0
        #: bytes reported missing (gaps), both directions
        self.missing = 0
        #: requests still waiting for their response when the connection ended
        self.unanswered = 0

    def endpoints(self, direction: int) -> tuple[str, int, str, int]:
        """(src, sport, dst, dport) of one direction."""
        if direction == 0:
            return self.client, self.client_port, self.server, self.server_port
        return self.server, self.server_port, self.client, self.client_port

    @property
    def flow(self) -> str:
        """``"127.0.0.1:51000-127.0.0.1:9876"`` (client first)."""
        return f"{_hostport(self.client, self.client_port)}-{_hostport(self.server, self.server_port)}"

    def describe(self, direction: int) -> str:
        src, sport, dst, dport = self.endpoints(direction)
        return f"stream {self.index} {ARROWS[direction]} ({_hostport(src, sport)} → {_hostport(dst, dport)})"

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return f"<Conversation {self.index} {self.flow} {self.protocol}>"


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class CommandRow(NamedTuple):
    """One remoting command (request, response or oneway request) cut from a TCP stream."""

    #: capture time of the segment holding the frame's first byte
    ts: float
    #: capture time of the segment holding the frame's last byte
    ts_end: float
    conv: Conversation
    #: 0 client → server, 1 server → client
    direction: int
    #: stream offset of the frame's length field in its direction
    offset: int
    #: frame number within its direction, from 0
    frame_no: int
    #: bytes on the wire, length field included
    size: int
    #: capture record (from 1) holding the frame's first byte
    record: int
    header_length: int
    command: RemotingCommand
    #: for a response: the request row it answers (same connection, same opaque), if captured
    request: CommandRow | None = None
    #: row number in the capture, from 1
    number: int = 0

    @property
    def kind(self) -> str:
        return "command"

    @property
    def latency(self) -> float | None:
        """Seconds from the request's last byte to this response's first byte."""
        req = self.request
        return None if req is None else self.ts - req.ts_end

    @property
    def endpoints(self) -> tuple[str, int, str, int]:
        return self.conv.endpoints(self.direction)

    def flat(self) -> tuple[Any, ...]:
        cmd = self.command
        return (self.ts, self.conv.flow, self.direction, cmd.code, cmd.opaque, cmd.flag, self.header_length,
                len(cmd.body) if cmd.body else 0, int(cmd.serialize_type), None, self.offset)


class HaRow(NamedTuple):
    """One HA replication frame (a :class:`wire.ha.HAMessage` as ``message``)."""

    ts: float
    ts_end: float
    conv: Conversation
    direction: int
    offset: int
    frame_no: int
    size: int
    record: int
    #: the decoded frame: one of the message classes of :mod:`wire.ha`
    message: Any
    #: the protocol variant the stream was decoded as
    variant: str
    number: int = 0

    @property
    def kind(self) -> str:
        return "ha"

    @property
    def endpoints(self) -> tuple[str, int, str, int]:
        return self.conv.endpoints(self.direction)

    def flat(self) -> tuple[Any, ...]:
        return (self.ts, self.conv.flow, self.direction, None, None, None, None, self.size, None, None,
                self.offset)


class ProblemRow(NamedTuple):
    """A verdict about the capture: missing bytes, bytes that do not decode, a damaged packet.

    ``verdict`` is one of ``gap`` (bytes the capture does not have), ``decode`` (bytes that are there
    but do not decode; ``error`` holds the :class:`wire.DecodeError`), ``skipped`` (bytes passed
    over to find the next frame start), ``truncated`` (a stream ends inside a frame), ``packet`` (a
    record whose link/IP/TCP headers do not parse) and ``late`` (payload from before the first
    byte seen of a connection the capture joined midway).
    """

    ts: float
    conv: Conversation | None
    direction: int | None
    #: stream offset in its direction (for ``packet``: the offset inside the record)
    offset: int | None
    record: int
    verdict: str
    message: str
    #: bytes concerned (missing, skipped or left over)
    length: int = 0
    error: DecodeError | None = None
    number: int = 0

    @property
    def kind(self) -> str:
        return "problem"

    def flat(self) -> tuple[Any, ...]:
        flow = self.conv.flow if self.conv is not None else None
        return (self.ts, flow, self.direction, None, None, None, None, self.length, None,
                f"{self.verdict}: {self.message}", self.offset)


#: Any row a capture decodes to.
Row = CommandRow | HaRow | ProblemRow
