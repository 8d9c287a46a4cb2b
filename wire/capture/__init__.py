# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Capture decoding: pcap/pcapng files → TCP streams → remoting and HA frames → rows.

The way through
---------------
1. :func:`read_records` streams a capture file as ``(record_no, ts, linktype, data)`` tuples
   (classic pcap read with :mod:`struct`; pcapng through scapy, the only scapy import of the
   ingest path). A damaged file raises :class:`CaptureFileError` naming file, record and byte offset.
2. :func:`parse_packet` turns a record into a TCP segment tuple
   ``(src, sport, dst, dport, seq, ack, flags, payload, missing)``: Ethernet (VLAN tags), Linux
   SLL and SLL2, NULL/LOOP, raw IP; IPv4 and IPv6 with extension headers.
3. :class:`TcpReassembler` rebuilds each direction by sequence number (SYN, 32-bit wrap,
   retransmissions, reordering, overlaps); a hole that cannot fill becomes a gap, never zeros.
4. :class:`CaptureDecoder` classifies each connection (port roles, ``--port`` overrides,
   sniffing), cuts remoting frames (resynchronising after damage with :func:`find_frame_start`)
   or HA frames (:mod:`wire.ha`), pairs responses with requests, and produces rows.

:func:`decode_capture` (rows one by one) and :func:`decode_batches` (rows in lists) run the four
steps over a file. For classic pcap they take the common case — an in-order TCP segment of whole
remoting frames, or a bare ACK — through one loop straight from the read buffer
(:mod:`wire.capture.hotpath`), and everything else through :meth:`CaptureDecoder.feed`; both ways
give the same rows.

The row model
-------------
Rows are :class:`typing.NamedTuple` values — plain tuples, never construct Containers — and each
has a ``kind`` and a :meth:`flat` method giving :data:`FLAT_COLUMNS` for bulk analysis:

* :class:`CommandRow` (``kind == "command"``): ``ts`` and ``ts_end`` (capture times of the first
  and last byte of the frame), ``conv`` (the :class:`Conversation`: stream index, client and server
  address and port, port role, protocol), ``direction`` (0 client → server, 1 server → client),
  ``offset`` (stream offset of the frame in that direction), ``frame_no`` (frame number in the
  direction), ``size`` (bytes on the wire), ``record`` (capture record of the first byte),
  ``header_length``, ``command`` (the decoded :class:`wire.RemotingCommand`, body included),
  ``request`` (for a response: the :class:`CommandRow` of its request, so ``latency`` is known)
  and ``number`` (row number in the capture).
* :class:`HaRow` (``kind == "ha"``): the same placing fields, ``message`` (a :mod:`wire.ha`
  message: report, transfer, handshake, ack) and ``variant`` (the HA protocol variant).
* :class:`ProblemRow` (``kind == "problem"``): a ``verdict`` — ``gap``, ``decode`` (with the
  :class:`wire.DecodeError` in ``error``), ``skipped``, ``truncated``, ``packet`` or ``late`` —
  with the stream offset, the record, the byte count and a one-line message.

Rows come out in the order in which their last byte was captured (after reassembly), so a
response always comes after its request. The three consumers use them directly: ``mqctl pcap``
renders them (:mod:`wire.capture.fields` gives tshark-style field names, :mod:`wire.capture.stats`
aggregates), the conformance replayer re-sends ``row.command`` of requests to a target and compares
the answers with ``row.command`` of the paired responses, and bulk jobs map rows to ``row.flat()``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from .decoder import CaptureDecoder, decode_batches, decode_capture
from .packets import PacketError, Segment, address_text, parse_packet
from .ports import DEFAULT_PORTS, PortRoles, parse_port_overrides
from .records import CaptureFileError, Record, capture_size, read_records
from .rows import ARROWS, DIRECTIONS, FLAT_COLUMNS, CommandRow, Conversation, HaRow, ProblemRow, Row
from .streams import find_frame_start, plausible_frame_start
from .tcp import TcpConnection, TcpReassembler


def record_live(out: str | Path, ports: Iterable[int], *, iface: str = "lo", duration: float | None = None,
                count: int | None = None, rotate_seconds: float | None = None,
                rotate_bytes: int | None = None,
                on_start: Callable[[], None] | None = None,
                stop: Callable[[], bool] | None = None) -> tuple[int, int]:
    """Capture live TCP traffic of ``ports`` on ``iface`` into the pcap ``out`` (needs root or
    CAP_NET_RAW); returns (packets, bytes). With ``rotate_seconds`` or ``rotate_bytes``, ``out`` is
    a directory that receives one complete file after another, each renamed into view once closed.
    ``on_start()`` is called once the packet socket is open; ``stop()`` returning true ends the
    capture as Ctrl-C does. scapy is imported only when this is called."""
    from ._scapy_io import record_live as record

    return record(out, ports, iface=iface, duration=duration, count=count, rotate_seconds=rotate_seconds,
                  rotate_bytes=rotate_bytes, on_start=on_start, stop=stop)

__all__ = [
    "ARROWS",
    "DEFAULT_PORTS",
    "DIRECTIONS",
    "FLAT_COLUMNS",
    "CaptureDecoder",
    "CaptureFileError",
    "CommandRow",
    "Conversation",
    "HaRow",
    "PacketError",
    "PortRoles",
    "ProblemRow",
    "Record",
    "Row",
    "Segment",
    "TcpConnection",
    "TcpReassembler",
    "address_text",
    "capture_size",
    "decode_batches",
    "decode_capture",
    "find_frame_start",
    "parse_packet",
    "parse_port_overrides",
    "plausible_frame_start",
    "read_records",
    "record_live",
]
