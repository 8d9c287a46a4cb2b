# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What a capture says the clients did: per recorded connection, the requests in order, each with
the answer the server gave.

The capture is read by :mod:`wire.capture`, as ``mqctl pcap`` reads it: the same ingest, TCP
reassembly and pairing of answers with requests (``CommandRow.request``). Rows become
:class:`Step` objects on their :class:`Connection`:

* a request from the client, with the recorded answer (``recorded``), or none (a oneway request,
  or one the server never answered within the capture);
* bytes from the client that are no frame (``raw``: a malformed frame sent on purpose). Such a
  connection is replayed as the bytes its client sent, all of them, as one ``raw`` step: they are
  read once more through :class:`wire.capture.TcpReassembler` (rows carry verdicts, not bytes),
  together with whether the server then closed the connection;
* requests the server sent to the client (NOTIFY_CONSUMER_IDS_CHANGED, …) and the client's answers
  to them, kept so that a replay can answer such requests as the client did.

HA connections are not replayed (they are not request/answer traffic).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from wire import RemotingCommand, RequestCode
from wire.capture import (
    CaptureDecoder,
    CommandRow,
    PacketError,
    PortRoles,
    ProblemRow,
    TcpConnection,
    TcpReassembler,
    decode_capture,
    parse_packet,
    read_records,
)

__all__ = ["SERVER_CODES", "Capture", "Connection", "Step", "load_capture"]

R = RequestCode

#: requests only servers send each other: a broker to its name servers and controller, a slave to
#: its master, a controller to a broker. A connection that carries one of them is background traffic
#: between the recorded servers, not a client's, and is replayed only when asked for.
SERVER_CODES = frozenset({
    R.REGISTER_BROKER, R.UNREGISTER_BROKER, R.QUERY_DATA_VERSION, R.GET_ALL_TOPIC_CONFIG,
    R.GET_ALL_CONSUMER_OFFSET, R.GET_ALL_DELAY_OFFSET, R.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
    R.GET_ALL_MESSAGE_REQUEST_MODE, R.GET_TIMER_CHECK_POINT, R.GET_TIMER_METRICS, R.BROKER_HEARTBEAT,
    R.CONTROLLER_ALTER_SYNC_STATE_SET, R.CONTROLLER_REGISTER_BROKER, R.CONTROLLER_GET_REPLICA_INFO,
    R.NOTIFY_BROKER_ROLE_CHANGED,
})


@dataclass
class Step:
    """One thing a client did on a connection."""

    #: ``request``, ``oneway`` or ``raw``
    kind: str
    ts: float
    #: the capture row number (what ``mqctl pcap decode`` shows in its # column)
    number: int
    command: RemotingCommand | None = None
    #: the server's answer in the capture (None: not answered within the capture)
    recorded: RemotingCommand | None = None
    #: seconds between the request and its recorded answer
    latency: float | None = None
    #: for ``raw``: every byte the client sent on the connection
    raw: bytes = b""

    @property
    def code(self) -> int | None:
        return None if self.command is None else self.command.code


@dataclass
class Connection:
    """One recorded TCP connection and what its client did on it."""

    capture: str
    index: int
    client: str
    server: str
    server_port: int
    role: str | None
    #: the capture holds the connection's start (SYN)
    syn: bool
    steps: list[Step] = field(default_factory=list)
    #: requests the server sent to the client, and the client's answers by request code
    server_requests: list[RemotingCommand] = field(default_factory=list)
    client_answers: dict[int, RemotingCommand] = field(default_factory=dict)
    #: for connections with raw steps: the server closed its side in the capture
    server_closed: bool = False

    @property
    def first_ts(self) -> float:
        return self.steps[0].ts if self.steps else 0.0

    @property
    def background(self) -> bool:
        """Traffic between the recorded servers (see :data:`SERVER_CODES`: a broker's periodic
        GET_BROKER_CLUSTER_INFO or CONTROLLER_GET_METADATA_INFO travels with its registrations), or
        a connection the capture joined midway (its start is missing)."""
        return not self.syn or any(s.code in SERVER_CODES for s in self.steps)


@dataclass
class Capture:
    path: str
    connections: list[Connection]
    #: capture problems (gaps, damaged records) outside malformed client frames
    problems: list[str] = field(default_factory=list)
    #: the time of the capture's first record
    first_ts: float = 0.0

    def steps(self, connections: Iterable[Connection] | None = None) -> list[tuple[Connection, Step]]:
        """Every step of ``connections`` (default: all), in capture time order."""
        conns = self.connections if connections is None else list(connections)
        out = [(c, s) for c in conns for s in c.steps]
        out.sort(key=lambda cs: (cs[1].ts, cs[1].number))
        return out


def _key(client: str, client_port: int, server: str, server_port: int) -> tuple[str, int, str, int]:
    return (client, client_port, server, server_port)


def load_capture(path: str | Path, *, roles: PortRoles | None = None) -> Capture:
    """Read ``path`` (pcap or pcapng) into its connections and steps (see the module docstring)."""
    name = Path(path).name
    dec = CaptureDecoder(roles=roles, capture=str(path))
    conns: dict[int, Connection] = {}
    steps: dict[int, Step] = {}
    raw_wanted: dict[tuple[str, int, str, int], tuple[Connection, int]] = {}
    problems: list[str] = []
    for row in decode_capture(path, roles=roles, decoder=dec):
        if isinstance(row, CommandRow):
            cv = row.conv
            conn = conns.get(cv.index)
            if conn is None:
                conn = conns[cv.index] = Connection(name, cv.index, f"{cv.client}:{cv.client_port}",
                                                    f"{cv.server}:{cv.server_port}", cv.server_port, cv.role,
                                                    cv.syn)
            cmd = row.command
            if row.direction == 0 and not cmd.is_response:
                step = Step("oneway" if cmd.is_oneway else "request", row.ts, row.number, cmd)
                steps[id(row)] = step
                conn.steps.append(step)
            elif row.direction == 1 and cmd.is_response and row.request is not None:
                asked = steps.get(id(row.request))
                if asked is not None:
                    asked.recorded = cmd
                    asked.latency = row.latency
            elif row.direction == 1:
                conn.server_requests.append(cmd)
            elif row.request is not None:
                conn.client_answers.setdefault(row.request.command.code, cmd)
        elif isinstance(row, ProblemRow):
            pc = row.conv
            if pc is not None and row.direction == 0 and row.verdict in ("decode", "skipped") \
                    and pc.protocol == "remoting":
                conn = conns.get(pc.index)
                if conn is None:
                    conn = conns[pc.index] = Connection(name, pc.index, f"{pc.client}:{pc.client_port}",
                                                        f"{pc.server}:{pc.server_port}", pc.server_port,
                                                        pc.role,
                                                        pc.syn)
                if row.verdict == "decode":
                    conn.steps.append(Step("raw", row.ts, row.number))
                    raw_wanted.setdefault(_key(pc.client, pc.client_port, pc.server, pc.server_port),
                                          (conn, row.offset or 0))
            elif row.verdict not in ("decode", "skipped"):
                problems.append(row.message)
    if raw_wanted:
        _read_raw(path, raw_wanted, roles)
    ordered = sorted(conns.values(), key=lambda c: c.first_ts)
    return Capture(str(path), [c for c in ordered if c.steps], problems, dec.first_ts or 0.0)


class _RawCollector:
    """A :class:`wire.capture.tcp.StreamHandler` keeping the client bytes of one connection."""

    def __init__(self, conn: Connection, start: int) -> None:
        self.conn = conn
        self.start = start
        self.buf = bytearray()

    def data(self, direction: int, offset: int, data: bytes, ts: float, record: int) -> None:
        if direction == 0:
            self.buf += data

    def gap(self, direction: int, offset: int, length: int, ts: float, record: int) -> None:
        pass

    def end(self, direction: int, offset: int, ts: float) -> None:
        if direction == 1:
            self.conn.server_closed = True


def _read_raw(path: str | Path, wanted: dict[tuple[str, int, str, int], tuple[Connection, int]],
              roles: PortRoles | None) -> None:
    roles = roles or PortRoles()
    collectors: list[_RawCollector] = []

    class _Ignore:
        def data(self, *a: object) -> None:
            pass

        def gap(self, *a: object) -> None:
            pass

        def end(self, *a: object) -> None:
            pass

    def opened(tcp: TcpConnection) -> object:
        hit = wanted.get(_key(tcp.client, tcp.client_port, tcp.server, tcp.server_port))
        if hit is None:
            return _Ignore()
        c = _RawCollector(*hit)
        collectors.append(c)
        return c

    reasm = TcpReassembler(opened, roles.sender_is_client)  # type: ignore[arg-type]
    for number, ts, linktype, data in read_records(path):
        try:
            seg = parse_packet(linktype, data)
        except PacketError:
            continue  # the first pass reported it
        if seg is not None:
            reasm.segment(ts, number, seg)
    reasm.finish()
    for c in collectors:
        first = next(s for s in c.conn.steps if s.kind == "raw")
        first.raw = bytes(c.buf)
        c.conn.steps = [first]
