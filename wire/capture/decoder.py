# Licensed under the Apache License, Version 2.0. See LICENSE.
"""From capture records to rows: packet parsing, reassembly, classification, decoding, pairing.

:class:`CaptureDecoder` is sans-IO: ``feed(record_no, ts, linktype, data)`` for each record,
``finish()`` at the end, and ``take()`` the rows produced so far (in the order their last byte was
seen, so a response always follows its request). :func:`decode_capture` runs it over a file.

Classification: the server port's role (:class:`~wire.capture.ports.PortRoles`) says whether a
connection is remoting, HA or to be ignored. A connection on a port in no table is sniffed: it
is remoting when its first bytes are a whole remoting frame that decodes, HA when both directions
decode as one of the HA protocol variants (:func:`wire.ha.detect_ha_protocol`), and otherwise
ignored (``protocol == "other"``). On an HA port the variant is detected the same way from the
first frames, preferring the AutoSwitch layout of the newest Java version seen in remoting headers
of the same capture. Bytes wait in a small per-connection buffer until the decision is made.

Requests and responses are told apart by flag bit 0, never by port (brokers send requests to
clients too), and a response is paired with the request of the same connection and opaque that
travelled the other way; oneway requests (flag bit 1) are never paired (:mod:`wire.pairing`, the
rule :mod:`wire.aio` follows too).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..codes import LanguageCode
from ..errors import DecodeError
from ..framing import MAX_TOTAL_LENGTH, PREFIX
from ..pairing import Pairing, Waiting, is_response
from ..remoting import RemotingCommand, decode_command
from .packets import PacketError, parse_packet
from .ports import ROLES, PortRoles
from .records import CaptureSource
from .rows import CommandRow, Conversation, HaRow, ProblemRow, Row
from .streams import HaHalf, RemotingHalf, plausible_frame_start
from .tcp import DEFAULT_MAX_BUFFERED, TcpConnection, TcpReassembler

__all__ = ["CaptureDecoder", "ConnectionDecoder", "decode_batches", "decode_capture"]

_ETH_IP4_TCP = struct.Struct(">H8x4s4sHHIIBB")  # from the IPv4 total length to the TCP flags

#: Bytes a connection of unknown protocol may buffer while it is being classified.
SNIFF_LIMIT = 1024 * 1024


class ConnectionDecoder:
    """The reassembler's handler for one connection: classifies it, then feeds its two halves."""

    __slots__ = ("cap", "tcp", "conv", "halves", "pairing", "expected", "early", "early_bytes", "next_try",
                 "ended")

    def __init__(self, cap: CaptureDecoder, tcp: TcpConnection) -> None:
        self.cap = cap
        self.tcp = tcp
        role = cap.roles.role(tcp.server_port)
        self.expected = ROLES[role] if role is not None else None
        self.conv = Conversation(tcp.index, cap.capture, tcp.client, tcp.client_port, tcp.server,
                                 tcp.server_port, role, self.expected or "unknown", tcp.first_ts, tcp.syn)
        cap.conversations.append(self.conv)
        #: the requests of each direction that wait for their response (wire.pairing)
        self.pairing: Pairing[CommandRow] = Pairing()
        self.halves: list[Any] | None = None
        #: (direction, event, args) received before the protocol was decided
        self.early: list[tuple[int, str, tuple[Any, ...]]] = []
        self.early_bytes = [b"", b""]
        self.next_try = 8
        self.ended = [False, False]
        if self.expected == "remoting":
            self._start_remoting()
        elif self.expected == "other":
            self.conv.protocol = "other"
            self.early = []

    @property
    def pending(self) -> tuple[Waiting[CommandRow], Waiting[CommandRow]]:
        """The requests of each direction still waiting for their response, keyed by opaque."""
        return self.pairing.waiting

    # ------------------------------------------------------------------ StreamHandler

    def data(self, direction: int, offset: int, data: bytes, ts: float, record: int) -> None:
        conv = self.conv
        conv.bytes[direction] += len(data)
        conv.last_ts = ts
        halves = self.halves
        if halves is not None:
            halves[direction].data(offset, data, ts, record)
        elif conv.protocol != "other":
            self.early.append((direction, "data", (offset, data, ts, record)))
            if not any(d == direction and e == "gap" for d, e, _a in self.early):
                self.early_bytes[direction] += data
            self._try(False)

    def gap(self, direction: int, offset: int, length: int, ts: float, record: int) -> None:
        halves = self.halves
        if halves is not None:
            halves[direction].gap(offset, length, ts, record)
        elif self.conv.protocol != "other":
            self.early.append((direction, "gap", (offset, length, ts, record)))
        else:
            self.conv.missing += length

    def end(self, direction: int, offset: int, ts: float) -> None:
        self.ended[direction] = True
        halves = self.halves
        if halves is not None:
            halves[direction].end(offset, ts)
        elif self.conv.protocol != "other":
            self.early.append((direction, "end", (offset, ts)))
            if all(self.ended):
                self._try(True)
        late = self.tcp.halves[direction].late
        if late:
            self.problem(ProblemRow(ts, self.conv, direction, None, 0, "late",
                                    f"{self.conv.describe(direction)}: {late:,} bytes from before the first "
                                    "byte seen of a connection joined midway were dropped", late))
        if all(self.ended):
            self.conv.unanswered = self.pairing.unanswered
            self.conv.last_ts = max(self.conv.last_ts, self.tcp.last_ts)

    # ------------------------------------------------------------------ FrameSink

    def command(self, direction: int, ts: float, ts_end: float, offset: int, index: int, size: int,
                record: int, header_length: int, command: RemotingCommand) -> None:
        cap = self.cap
        cap.number += 1
        flag = command.flag
        if is_response(flag):
            req = self.pairing.response(direction, command.opaque)
            row = CommandRow(ts, ts_end, self.conv, direction, offset, index, size, record, header_length,
                             command, req, cap.number)
        else:
            row = CommandRow(ts, ts_end, self.conv, direction, offset, index, size, record, header_length,
                             command, None, cap.number)
            self.pairing.request(direction, flag, command.opaque, row)
        if command.version > cap.java_version and command.language is LanguageCode.JAVA:
            cap.java_version = command.version
        cap.rows.append(row)

    def ha_frame(self, direction: int, ts: float, ts_end: float, offset: int, index: int, size: int,
                 record: int, message: Any, variant: str) -> None:
        cap = self.cap
        cap.number += 1
        cap.rows.append(HaRow(ts, ts_end, self.conv, direction, offset, index, size, record, message, variant,
                              cap.number))

    def problem(self, row: ProblemRow) -> None:
        self.cap.problem(row)

    # ------------------------------------------------------------------ classification

    def _start_remoting(self) -> None:
        self.conv.protocol = "remoting"
        synced = self.tcp.syn
        limit = self.cap.max_total_length
        self.halves = [RemotingHalf(self, self.conv, 0, synced=synced, max_total_length=limit),
                       RemotingHalf(self, self.conv, 1, synced=synced, max_total_length=limit)]

    def _start_ha(self, protocol: Any) -> None:
        self.conv.protocol = "ha"
        self.conv.ha_variant = str(protocol)
        starts = [0, 0]
        for d in (0, 1):
            first = next((a[0] for dd, e, a in self.early if dd == d and e in ("data", "gap")), 0)
            starts[d] = first
        self.halves = [HaHalf(self, self.conv, 0, protocol, start=starts[0]),
                       HaHalf(self, self.conv, 1, protocol, start=starts[1])]

    def _try(self, final: bool) -> None:
        have = len(self.early_bytes[0]) + len(self.early_bytes[1])
        if not final and have < self.next_try and have < SNIFF_LIMIT:
            return
        self.next_try = max(2 * have, 8)
        decision = self._decide(final or have >= SNIFF_LIMIT)
        if decision is None:
            return
        early, self.early = self.early, []
        self.early_bytes = [b"", b""]
        if decision == "remoting":
            self._start_remoting()
        elif decision == "other":
            self.conv.protocol = "other"
            return
        elif decision == "ha?":
            self.conv.protocol = "ha"
            first = next((a for _d, e, a in early if e == "data"), None)
            ts = first[2] if first else self.conv.last_ts
            record = first[3] if first else 0
            n = sum(len(a[1]) for _d, e, a in early if e == "data")
            self.problem(ProblemRow(ts, self.conv, None, 0, record, "decode",
                                    f"stream {self.conv.index}: on an HA port, but the first {n:,} bytes "
                                    "match no HA protocol variant; the connection is not decoded", n))
            return
        else:
            self._start_ha(decision)
        halves = self.halves
        assert halves is not None
        for d, event, args in early:
            getattr(halves[d], event)(*args)

    def _decide(self, final: bool) -> Any:
        c, s = self.early_bytes
        verdicts = (_remoting_verdict(c, self.cap.max_total_length),
                    _remoting_verdict(s, self.cap.max_total_length))
        if True in verdicts:
            return "remoting"
        if self.expected == "ha" or (c and s):
            try:
                from ..ha import autoswitch_protocol_for_version, detect_ha_protocol
            except ImportError:  # pragma: no cover - wire.ha ships with wire
                return "ha?" if final else None
            prefer = autoswitch_protocol_for_version(self.cap.java_version) if self.cap.java_version else None
            proto = detect_ha_protocol(c or None, s or None, prefer=prefer)
            if proto is not None:
                return proto
        if not final:
            return None
        return "ha?" if self.expected == "ha" else "other"


def _remoting_verdict(data: bytes, max_total_length: int) -> bool | None:
    """True: ``data`` starts with a whole remoting frame that decodes; False: it cannot; None: too
    few bytes to tell."""
    if len(data) < 8:
        if len(data) >= 4:
            total = int.from_bytes(data[:4], "big", signed=True)
            if total < 4 or total > max_total_length:
                return False
        return None
    if not plausible_frame_start(data, 0, max_total_length=max_total_length):
        return False
    total, _word = PREFIX.unpack_from(data, 0)
    if len(data) < 4 + total:
        return None
    try:
        decode_command(data[:4 + total])
    except DecodeError:
        return False
    return True


class CaptureDecoder:
    """Sans-IO capture decoder: records in, rows out (see the module docstring)."""

    def __init__(self, *, roles: PortRoles | None = None, capture: str = "",
                 max_buffered: int = DEFAULT_MAX_BUFFERED, max_total_length: int = MAX_TOTAL_LENGTH) -> None:
        self.roles = roles if roles is not None else PortRoles()
        self.capture = capture
        self.max_total_length = max_total_length
        self.rows: list[Row] = []
        self.conversations: list[Conversation] = []
        self.reassembler = TcpReassembler(self._open, self.roles.sender_is_client, max_buffered=max_buffered)
        #: records fed, and of those, records that were not TCP over IP
        self.records = 0
        self.not_tcp = 0
        #: rows numbered so far
        self.number = 0
        #: the highest ``version`` seen in a header from a Java peer (helps name the HA variant)
        self.java_version = 0
        self.first_ts: float | None = None
        self.last_ts: float | None = None

    def _open(self, tcp: TcpConnection) -> ConnectionDecoder:
        return ConnectionDecoder(self, tcp)

    def feed(self, record: int, ts: float, linktype: int, data: bytes) -> None:
        """Take one capture record."""
        self.records += 1
        if self.first_ts is None:
            self.first_ts = ts
        self.last_ts = ts
        if (linktype == 1 and len(data) >= 54 and data[12] == 8 and data[13] == 0 and data[14] == 0x45
                and data[23] == 6 and not data[20] & 0x3F and not data[21]):
            # The hot path (Ethernet, IPv4 without options or fragments, TCP): the same fields
            # parse_packet reads, in one unpack; anything unusual takes parse_packet.
            total, src, dst, sport, dport, seq, ack, doff, flags = _ETH_IP4_TCP.unpack_from(data, 16)
            start = 34 + (doff >> 4) * 4
            end = 14 + total
            if doff >= 0x50 and start <= end <= len(data):
                self.reassembler.segment(ts, record, (src, sport, dst, dport, seq, ack, flags,
                                                      data[start:end], 0))
                return
        try:
            seg = parse_packet(linktype, data)
        except PacketError as err:
            self.problem(ProblemRow(ts, None, None, err.offset, record, "packet",
                                    f"record {record}: {err}", 0, err))
            return
        if seg is None:
            self.not_tcp += 1
            return
        self.reassembler.segment(ts, record, seg)

    def finish(self) -> None:
        """The capture is over: flush every connection (what is missing becomes gaps)."""
        self.reassembler.finish()

    def take(self) -> list[Row]:
        """The rows produced since the last call, in order."""
        rows = self.rows
        self.rows = []
        return rows

    def problem(self, row: ProblemRow) -> None:
        self.number += 1
        self.rows.append(row._replace(number=self.number))


def decode_capture(path: str | Path, *, roles: PortRoles | None = None, decoder: CaptureDecoder | None = None,
                   on_progress: Callable[[int], None] | None = None) -> Iterator[Row]:
    """Every row of one capture file, streamed (``-`` reads standard input).

    Pass a ``decoder`` to look at its conversations and counters afterwards. A damaged or
    non-capture file raises :class:`~wire.capture.records.CaptureFileError` when the damage is
    reached (rows before it have been yielded).
    """
    for rows in decode_batches(path, roles=roles, decoder=decoder, on_progress=on_progress):
        yield from rows


def decode_batches(path: str | Path, *, roles: PortRoles | None = None, decoder: CaptureDecoder | None = None,
                   on_progress: Callable[[int], None] | None = None, batch: int = 256) -> Iterator[list[Row]]:
    """The rows of :func:`decode_capture` in lists of about ``batch`` (never empty), for consumers
    that handle rows in bulk. Classic pcap files go through the hot loop of
    :mod:`wire.capture.hotpath`; pcapng records (and every record, for a ``decoder`` whose class
    overrides ``feed``) are fed one by one.

    Read from a pipe (standard input), the rows are handed on as soon as the bytes that have
    arrived are decoded, before waiting for more. A file that is damaged or cut short has its
    rows decoded up to the damage (the capture then ends there: frames it cuts are reported as
    truncated), and the :class:`~wire.capture.records.CaptureFileError` is raised after them, as
    tshark prints the packets before saying that the file was cut short."""
    from .hotpath import decode_classic
    from .records import CaptureFileError

    dec = decoder if decoder is not None else CaptureDecoder(roles=roles, capture=str(path))
    damage: CaptureFileError | None = None
    with CaptureSource(path, on_progress=on_progress) as source:
        live = source.live
        try:
            # the hot loop stands for CaptureDecoder.feed: a decoder that feeds differently gets every record
            if source.classic is not None and type(dec).feed is CaptureDecoder.feed:
                yield from decode_classic(dec, source.classic, batch=batch, live=live)
            else:
                feed = dec.feed
                for number, ts, linktype, data in source.records():
                    feed(number, ts, linktype, data)
                    if len(dec.rows) >= batch or (live and dec.rows):
                        yield dec.take()
        except CaptureFileError as err:
            damage = err
    dec.finish()
    rows = dec.take()
    if rows:
        yield rows
    if damage is not None:
        raise damage
