# Licensed under the Apache License, Version 2.0. See LICENSE.
# scapy.contrib.description = Apache RocketMQ remoting protocol and 4.x HA replication
# scapy.contrib.status = loads
"""RocketMQ as scapy layers, for people who explore traffic in scapy.

Usage::

    >>> from scapy.all import rdpcap, sniff
    >>> from scapy.sessions import TCPSession
    >>> import wire.capture.scapy_layer            # binds the layers to RocketMQ's ports
    >>> for pkt in sniff(offline="capture.pcap", session=TCPSession):
    ...     if RocketMQ in pkt:
    ...         print(pkt[RocketMQ].decoded)       # a wire.RemotingCommand

:class:`RocketMQ` is one remoting frame (length, serialize type, header length, header, body);
its :attr:`~RocketMQ.decoded` property decodes it with :func:`wire.decode_frame` (``command`` is
taken: scapy's ``Packet.command()`` rebuilds a packet's constructor call), and
:meth:`RocketMQ.from_command` builds one from a :class:`wire.RemotingCommand`. Its
``tcp_reassemble`` (used by scapy's ``TCPSession``) waits for the 8-byte prefix, then for the
whole frame, and hands any following bytes back to scapy for the next frame.
:class:`RocketMQHAReport` (slave → master, 8-byte offset) and :class:`RocketMQHATransfer`
(master → slave, 12-byte header and CommitLog data) are the 4.x HA stream, decoded with
:mod:`wire.ha`. The layers are bound (last, as scapy's contrib modules do) to the default ports:
name server 9876, broker 10911 and its VIP channel 10909, HA 10912.

Why this module lives in :mod:`wire.capture` and not in :mod:`mqctl`: it is a codec adapter
(bytes to commands through :mod:`wire`), not terminal code; scapy users import it without the CLI's
dependencies. It is the only module besides the ingest module ``_scapy_io`` that imports scapy,
and nothing in the capture pipeline imports it: the pipeline's verdicts never depend on scapy's
dissection or its reassembly (which zero-fills holes).
"""

from __future__ import annotations

import struct
from typing import Any

from scapy.config import conf
from scapy.fields import ByteEnumField, IntField, LongField, SignedIntField, StrLenField, ThreeBytesField
from scapy.layers.inet import TCP
from scapy.packet import Packet, bind_layers

from ..codes import RequestCode, ResponseCode
from ..errors import DecodeError
from ..framing import PREFIX, Frame, prefix_ok
from ..remoting import RemotingCommand, decode_frame, encode_command

__all__ = ["HA_PORTS", "REMOTING_PORTS", "REQUEST_CODES", "RESPONSE_CODES", "RocketMQ", "RocketMQHAReport",
           "RocketMQHATransfer"]

#: code tables, as scapy's contrib layers keep them
REQUEST_CODES: dict[int, str] = {int(c): c.name for c in RequestCode}
RESPONSE_CODES: dict[int, str] = {int(c): c.name for c in ResponseCode}
SERIALIZE_TYPES = {0: "JSON", 1: "ROCKETMQ"}

REMOTING_PORTS = (9876, 10911, 10909)
HA_PORTS = (10912,)



class RocketMQ(Packet):
    """One remoting frame (``RemotingCommand.encode``): int32 length (not counting itself),
    serialize type byte, 24-bit header length, header, body."""

    name = "RocketMQ"
    fields_desc = [
        SignedIntField("length", None),  # type: ignore[arg-type]  # None: filled in by post_build
        ByteEnumField("serialize_type", 0, SERIALIZE_TYPES),
        ThreeBytesField("header_length", None),  # type: ignore[arg-type]  # as length
        StrLenField("header", b"", length_from=lambda pkt: pkt.header_length),
        StrLenField("body", b"",
                    length_from=lambda pkt: max(0, (pkt.length or 0) - 4 - (pkt.header_length or 0))),
    ]

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        header_length = len(self.header)
        if self.header_length is None:
            pkt = pkt[:4] + pkt[4:5] + header_length.to_bytes(3, "big") + pkt[8:]
        if self.length is None:
            pkt = struct.pack(">i", len(pkt) - 4) + pkt[4:]
        return pkt + pay

    @property
    def decoded(self) -> RemotingCommand:
        """The frame decoded by :mod:`wire` (raises :class:`wire.DecodeError` if it does not decode)."""
        kind = int(self.serialize_type)
        if kind not in SERIALIZE_TYPES:
            raise DecodeError(f"unknown serialize type {kind}", offset=4, field="serializeType",
                              expected="0 (JSON) or 1 (ROCKETMQ)", found=kind)
        from ..codes import SerializeType

        return decode_frame(Frame(SerializeType(kind), bytes(self.header), bytes(self.body)))

    @classmethod
    def from_command(cls, command: RemotingCommand) -> RocketMQ:
        """The frame of ``command``, encoded by :func:`wire.encode_command`."""
        return cls(encode_command(command))

    def mysummary(self) -> str:
        try:
            cmd = self.decoded
        except DecodeError as err:
            return f"RocketMQ undecodable frame: {err}"
        if cmd.is_response:
            name = RESPONSE_CODES.get(cmd.code, str(cmd.code))
            kind = "response"
        else:
            name = REQUEST_CODES.get(cmd.code, str(cmd.code))
            kind = "oneway" if cmd.is_oneway else "request"
        return f"RocketMQ {kind} {name}({cmd.code}) opaque={cmd.opaque}"

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s

    @classmethod
    def tcp_reassemble(cls, data: bytes, metadata: dict[str, Any], session: Any) -> Packet | None:
        """For scapy's TCPSession: a frame once all its bytes are in, the rest as padding."""
        if len(data) < 8:
            return None  # not even the 8-byte prefix yet
        total, word = PREFIX.unpack_from(data)
        if not prefix_ok(total, word):
            return conf.raw_layer(data)
        return _whole(cls, data, 4 + total, metadata)


def _whole(cls: type[Packet], data: bytes, need: int, metadata: dict[str, Any]) -> Packet | None:
    """For ``tcp_reassemble``: the packet of the first ``need`` bytes with the rest as padding, or
    None (and how many bytes to wait for) while fewer are in."""
    if len(data) < need:
        metadata["tcp_min_len"] = need
        return None
    if len(data) == need:
        return cls(data)
    return cls(data[:need]) / conf.padding_layer(data[need:])


class RocketMQHAReport(Packet):
    """4.x HA, slave → master: the slave's max CommitLog offset (``HAClient.reportSlaveMaxOffset``)."""

    name = "RocketMQ HA report"
    fields_desc = [LongField("max_offset", 0)]

    @property
    def message(self) -> Any:
        from ..ha import decode_slave_report

        return decode_slave_report(bytes(self)[:8])

    def mysummary(self) -> str:
        return f"RocketMQ HA report max_offset={self.max_offset}"

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s

    @classmethod
    def tcp_reassemble(cls, data: bytes, metadata: dict[str, Any], session: Any) -> Packet | None:
        return _whole(cls, data, 8, metadata)


class RocketMQHATransfer(Packet):
    """4.x HA, master → slave: offset, body size, CommitLog bytes; no bytes is the heartbeat."""

    name = "RocketMQ HA transfer"
    fields_desc = [
        LongField("phy_offset", 0),
        IntField("body_size", None),
        StrLenField("data", b"", length_from=lambda pkt: pkt.body_size or 0),
    ]

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        if self.body_size is None:
            pkt = pkt[:8] + struct.pack(">i", len(self.data)) + pkt[12:]
        return pkt + pay

    @property
    def message(self) -> Any:
        from ..ha import decode_transfer

        return decode_transfer(bytes(self)[:12 + len(self.data)])

    def mysummary(self) -> str:
        kind = "heartbeat" if not self.body_size else f"{self.body_size} bytes"
        return f"RocketMQ HA transfer phy_offset={self.phy_offset} {kind}"

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s

    @classmethod
    def tcp_reassemble(cls, data: bytes, metadata: dict[str, Any], session: Any) -> Packet | None:
        if len(data) < 12:
            return None
        size = struct.unpack_from(">i", data, 8)[0]
        if size < 0:
            return conf.raw_layer(data)
        return _whole(cls, data, 12 + size, metadata)


for _port in REMOTING_PORTS:
    bind_layers(TCP, RocketMQ, dport=_port)
    bind_layers(TCP, RocketMQ, sport=_port)
for _port in HA_PORTS:
    bind_layers(TCP, RocketMQHAReport, dport=_port)
    bind_layers(TCP, RocketMQHATransfer, sport=_port)
