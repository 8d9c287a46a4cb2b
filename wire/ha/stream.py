# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Sans-IO decoders for the two directions of an HA connection, and a protocol detector.

Theory of operation
-------------------
An HA stream carries no type tag and no length prefix, so what a frame is depends on the protocol
variant and on the direction; a decoder is made for one pair (:func:`ha_stream_decoder`). Like
:class:`wire.FrameBuffer`, it is fed bytes as they arrive (``feed``) and hands out complete frames
(``next_frame`` returns ``None`` when it needs more bytes). Each :class:`HAFrame` carries the decoded
message, the absolute stream offset of its first byte (counted from the first byte fed) and its
index in the stream.

How each decoder finds the end of a frame, as the Java reader does:

* 4.x slave -> master: 8-byte units (``HAConnection.ReadSocketService``). The Java master only acts
  on the last whole unit of each read; the decoder yields them all.
* 4.x master -> slave: the 12-byte header's int32 at +8 gives the body size
  (``HAClient.dispatchReadRequest``).
* AutoSwitch slave -> master: the int32 state at +0 (``AutoSwitchHAConnection.HAServerReader``):
  HANDSHAKE is 16 bytes from 5.1.1, and 12 + the int32 address length at +8 before; TRANSFER is 12.
* AutoSwitch master -> slave: the state at +0 and the body size at +4
  (``AutoSwitchHAClient.HAClientReader``); the header is 36 bytes for TRANSFER, and for HANDSHAKE
  36 in 5.0.0 and 20 from 5.1.0.

Impossible input raises :class:`wire.DecodeError` as soon as the bytes that show it are in, before
any body is buffered: a negative body size, one above what a Java slave can read (its 4 MiB buffer),
a handshake reply that is not whole epoch entries or has more than 1000, an address longer than the
50 bytes a slave can send, a state other than HANDSHAKE or TRANSFER, and a HANDSHAKE after a
TRANSFER in the same stream (a Java peer only handshakes once per connection, first; it may repeat
the handshake while it waits for the answer). The decoder then stays failed, as the Java side
closes the connection. A stream may start with TRANSFER frames: a capture can begin on a connection
that was opened earlier.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from .._buffer import StreamBuffer
from ..codes import MQVersion
from ..errors import DecodeError, Truncated
from .frames import (
    AUTOSWITCH_MAX_BODY_SIZE,
    EPOCH_TRANSFER_HEADER_SIZE,
    TRANSFER_HEADER_SIZE,
    V4_MAX_BODY_SIZE,
    EpochTransfer,
    HAConnectionState,
    HAMessage,
    HandshakeReply,
    HAProtocol,
    SlaveHandshake,
    SlaveReport,
    Transfer,
    TransferAck,
    check_address_length,
    check_body_size,
    check_reply_body_size,
    check_state,
    decode_epoch_transfer,
    decode_handshake_reply,
    decode_slave_handshake,
    decode_transfer_ack,
    handshake_reply_header_size,
    slave_handshake_size,
)

__all__ = [
    "HADirection",
    "HAFrame",
    "HAStreamDecoder",
    "autoswitch_protocol_for_version",
    "decode_ha_stream",
    "detect_ha_protocol",
    "ha_stream_decoder",
]

_I32 = struct.Struct(">i")
#: the 4.x frames read with struct: their sizes are checked before they are cut, so the fields
#: are all there is to read (the construct layouts of wire.ha.frames stay the reference, and
#: tests compare both; construct took about 40 times as long a frame, which a capture or a
#: peer of small frames makes the whole cost)
_I64 = struct.Struct(">q")


class HADirection(enum.StrEnum):
    """Which side sent the bytes. The slave is the side that connected to the HA port."""

    SLAVE_TO_MASTER = "slave->master"
    MASTER_TO_SLAVE = "master->slave"


@dataclass(frozen=True, slots=True)
class HAFrame:
    """One decoded HA frame and where it sat in its stream."""

    message: HAMessage
    #: absolute stream offset of the frame's first byte
    offset: int
    #: position of the frame in its stream, from 0
    index: int
    #: bytes the frame occupies on the wire
    size: int

    @property
    def end(self) -> int:
        return self.offset + self.size


_HANDSHAKES = (SlaveHandshake, HandshakeReply)


class HAStreamDecoder(StreamBuffer[HAFrame]):
    """Sans-IO decoder of one direction of one HA connection (see the module notes).

    ``feed(bytes)``, then ``next_frame()`` until it returns ``None``. Subclasses say how long the
    frame at the head of the buffer is (:meth:`_frame_size`) and decode a complete one (:meth:`_decode`).
    """

    protocol: HAProtocol
    direction: HADirection

    __slots__ = ("_transferring", "max_body_size", "protocol")

    #: the cap on transfer bodies unless one is given: what a Java slave can read
    default_max_body_size = V4_MAX_BODY_SIZE

    def __init__(self, protocol: HAProtocol, *, max_body_size: int | None = None) -> None:
        super().__init__()
        self.protocol = HAProtocol(protocol)
        self._transferring = False
        self.max_body_size = self.default_max_body_size if max_body_size is None else max_body_size

    @property
    def transferring(self) -> bool:
        """Whether a TRANSFER frame has been seen (after which no handshake may come)."""
        return self._transferring

    def next_frame(self) -> HAFrame | None:
        """The next complete frame, or ``None`` when more bytes are needed."""
        if self._error is not None:
            raise self._error
        start = self._base + self._pos
        try:
            size = self._frame_size(self._buf, self._pos, len(self._buf) - self._pos, start)
            if size is None or len(self._buf) - self._pos < size:
                return None
            raw = bytes(self._buf[self._pos:self._pos + size])
            try:
                message = self._decode(raw)
            except DecodeError as err:
                raise err.shifted(start, self._index) from None
        except DecodeError as err:
            if err.frame_index is None:
                err.frame_index = self._index
            self._error = err
            raise
        if not isinstance(message, _HANDSHAKES):
            self._transferring = True
        frame = HAFrame(message, start, self._index, size)
        self._index += 1
        self._consume(self._pos + size)
        return frame

    def end_of_stream(self) -> None:
        """The peer closed: raise :class:`wire.Truncated` if a partial frame is left."""
        if self._error is not None:
            raise self._error
        if self.buffered:
            raise Truncated(f"the stream ends {self.buffered} bytes into a frame",
                            offset=self.stream_offset + self.buffered, field="frame",
                            expected="a whole frame", found=self.buffered, frame_index=self._index)

    def _frame_size(self, buf: bytearray, pos: int, avail: int, offset: int) -> int | None:
        raise NotImplementedError

    def _decode(self, raw: bytes) -> HAMessage:
        raise NotImplementedError

    def _state(self, buf: bytearray, pos: int, offset: int, what: str) -> HAConnectionState:
        allowed = ((HAConnectionState.TRANSFER,) if self._transferring
                   else (HAConnectionState.HANDSHAKE, HAConnectionState.TRANSFER))
        return check_state(_I32.unpack_from(buf, pos)[0], allowed, offset, frame_index=self._index,
                           what=what)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.protocol} {self.direction} offset={self.stream_offset} "
                f"frames={self._index}>")


class V4SlaveStream(HAStreamDecoder):
    """4.x slave -> master: 8-byte offset reports."""

    __slots__ = ()
    direction = HADirection.SLAVE_TO_MASTER

    def _frame_size(self, buf: bytearray, pos: int, avail: int, offset: int) -> int | None:
        return 8

    def _decode(self, raw: bytes) -> HAMessage:
        return SlaveReport(_I64.unpack_from(raw)[0])


class V4MasterStream(HAStreamDecoder):
    """4.x master -> slave: 12-byte header + data (``HAClient.dispatchReadRequest``)."""

    __slots__ = ()
    direction = HADirection.MASTER_TO_SLAVE

    def _frame_size(self, buf: bytearray, pos: int, avail: int, offset: int) -> int | None:
        if avail < TRANSFER_HEADER_SIZE:
            return None
        size = _I32.unpack_from(buf, pos + 8)[0]
        check_body_size(size, self.max_body_size, offset + 8, frame_index=self._index)
        return int(TRANSFER_HEADER_SIZE + size)

    def _decode(self, raw: bytes) -> HAMessage:
        # _frame_size checked the body size and cut exactly header + body
        return Transfer(_I64.unpack_from(raw)[0], raw[TRANSFER_HEADER_SIZE:])


class AutoSwitchSlaveStream(HAStreamDecoder):
    """AutoSwitch slave -> master: HANDSHAKE, then TRANSFER acks; told apart by the state word."""

    __slots__ = ()
    direction = HADirection.SLAVE_TO_MASTER

    default_max_body_size = AUTOSWITCH_MAX_BODY_SIZE

    def __init__(self, protocol: HAProtocol, *, max_body_size: int | None = None) -> None:
        super().__init__(protocol, max_body_size=max_body_size)
        slave_handshake_size(self.protocol)  # rejects V4 early

    def _frame_size(self, buf: bytearray, pos: int, avail: int, offset: int) -> int | None:
        if avail < 4:
            return None
        # mirrors HAServerReader: the state ordinal picks the layout
        state = self._state(buf, pos, offset, "slave frame")
        if state is HAConnectionState.TRANSFER:
            return 12
        if self.protocol is HAProtocol.AUTOSWITCH_5_1_1:
            return slave_handshake_size(self.protocol)
        if avail < 12:
            return None
        n = _I32.unpack_from(buf, pos + 8)[0]
        check_address_length(n, offset + 8, frame_index=self._index)
        return slave_handshake_size(self.protocol, n)

    def _decode(self, raw: bytes) -> HAMessage:
        if _I32.unpack_from(raw, 0)[0] == HAConnectionState.TRANSFER:
            return decode_transfer_ack(raw)
        return decode_slave_handshake(raw, self.protocol)


class AutoSwitchMasterStream(HAStreamDecoder):
    """AutoSwitch master -> slave: handshake reply, then transfers; told apart by the state word."""

    __slots__ = ()
    direction = HADirection.MASTER_TO_SLAVE

    default_max_body_size = AUTOSWITCH_MAX_BODY_SIZE

    def __init__(self, protocol: HAProtocol, *, max_body_size: int | None = None) -> None:
        super().__init__(protocol, max_body_size=max_body_size)
        handshake_reply_header_size(self.protocol)  # rejects V4 early

    def _frame_size(self, buf: bytearray, pos: int, avail: int, offset: int) -> int | None:
        if avail < 4:
            return None
        # mirrors HAClientReader (5.1.0+): the state ordinal picks the header size
        state = self._state(buf, pos, offset, "master frame")
        if avail < 8:
            return None
        size = _I32.unpack_from(buf, pos + 4)[0]
        if state is HAConnectionState.TRANSFER:
            check_body_size(size, self.max_body_size, offset + 4, frame_index=self._index)
            return int(EPOCH_TRANSFER_HEADER_SIZE + size)
        check_reply_body_size(size, offset + 4, frame_index=self._index)
        return int(handshake_reply_header_size(self.protocol) + size)

    def _decode(self, raw: bytes) -> HAMessage:
        if _I32.unpack_from(raw, 0)[0] == HAConnectionState.TRANSFER:
            return decode_epoch_transfer(raw, max_body_size=self.max_body_size)
        return decode_handshake_reply(raw, self.protocol)


_AUTOSWITCH = (HAProtocol.AUTOSWITCH_5_0, HAProtocol.AUTOSWITCH_5_1_0, HAProtocol.AUTOSWITCH_5_1_1)

# W8: (protocol, direction) -> decoder class
_DECODERS: Mapping[tuple[HAProtocol, HADirection], Callable[..., HAStreamDecoder]] = {
    (HAProtocol.V4, HADirection.SLAVE_TO_MASTER): V4SlaveStream,
    (HAProtocol.V4, HADirection.MASTER_TO_SLAVE): V4MasterStream,
    **{(p, HADirection.SLAVE_TO_MASTER): AutoSwitchSlaveStream for p in _AUTOSWITCH},
    **{(p, HADirection.MASTER_TO_SLAVE): AutoSwitchMasterStream for p in _AUTOSWITCH},
}


def ha_stream_decoder(protocol: HAProtocol | str, direction: HADirection | str, *,
                      max_body_size: int | None = None) -> HAStreamDecoder:
    """A fresh decoder for one direction of an HA connection speaking ``protocol``.

    ``max_body_size`` caps transfer bodies; the default is what a Java slave can read
    (4 MiB less the header).
    """
    protocol, direction = HAProtocol(protocol), HADirection(direction)
    return _DECODERS[(protocol, direction)](protocol, max_body_size=max_body_size)


def decode_ha_stream(data: bytes, protocol: HAProtocol | str, direction: HADirection | str, *,
                     complete: bool = True) -> list[HAFrame]:
    """Every frame of a whole captured direction. With ``complete``, a partial last frame raises
    :class:`wire.Truncated`; without, it is left out."""
    dec = ha_stream_decoder(protocol, direction)
    dec.feed(data)
    frames = list(dec)
    if complete:
        dec.end_of_stream()
    return frames


# -------------------------------------------------------------------------------------- detection

def autoswitch_protocol_for_version(version: int) -> HAProtocol | None:
    """The AutoSwitch layout of a released broker version (its remoting ``version`` field).

    None before 5.0.0 (no AutoSwitch). Only releases are mapped: development builds between releases
    announce the previous release's version and may already speak the next layout.
    """
    if version < MQVersion.V5_0_0:
        return None
    if version == MQVersion.V5_0_0:
        return HAProtocol.AUTOSWITCH_5_0
    if version <= MQVersion.V5_1_0:
        return HAProtocol.AUTOSWITCH_5_1_0
    return HAProtocol.AUTOSWITCH_5_1_1


# The detector looks at no more than this much of each direction; the first frames decide.
_DETECT_LIMIT = 256 * 1024


def _frames_or_none(data: bytes, protocol: HAProtocol, direction: HADirection) -> list[HAFrame] | None:
    dec = ha_stream_decoder(protocol, direction)
    dec.feed(data)
    try:
        return list(dec)
    except DecodeError:
        return None


def _plausible(frames: Iterable[HAFrame]) -> bool:
    """Behaviour every Java peer shows within one connection (used by the detector only)."""
    prev_end: int | None = None
    prev_report: int | None = None
    for f in frames:
        m = f.message
        if isinstance(m, (Transfer, EpochTransfer)):
            # nextTransferFromWhere only grows by what was sent, so each transfer (heartbeats
            # included) starts where the previous one ended; AutoSwitch sends -1 until it has a start.
            if prev_end is not None and m.phy_offset != prev_end:
                return False
            prev_end = m.end_offset if m.phy_offset >= 0 else None
        elif isinstance(m, (SlaveReport, TransferAck)):
            # the slave reports its max offset, which never shrinks within a connection
            if prev_report is not None and m.max_offset < prev_report:
                return False
            prev_report = m.max_offset
        elif isinstance(m, SlaveHandshake) and m.address is not None and not m.address:
            return False
    return True


def detect_ha_protocol(client_bytes: bytes | None = None, server_bytes: bytes | None = None, *,
                       prefer: HAProtocol | None = None) -> HAProtocol | None:
    """Guess the HA protocol variant from the first bytes of a connection.

    ``client_bytes`` are from the side that connected (the slave), ``server_bytes`` from the HA
    listener (the master); either may be missing or cut anywhere, and only the first 256 KiB of each
    is looked at. None means "cannot tell (yet)".

    Rules. Each variant decodes each given direction with the strict decoders above. A variant is
    *out* when a direction does not decode, or when its frames break what a Java peer does within one
    connection: transfers that do not follow on from each other, slave offsets that go down, an
    empty 5.0.0/5.1.0 handshake address. The variants that are not out are *alive*; those that also
    decoded at least one whole frame are *in*.

    * No variant in: None.
    * Both 4.x and AutoSwitch alive: None (the bytes so far fit both; a 4.x report of 2**32 looks
      like the first 8 bytes of an AutoSwitch handshake).
    * Only 4.x alive: V4.
    * Only AutoSwitch alive: the one alive variant; with several, ``prefer`` when it is among them,
      else the newest of them.

    Limits: AutoSwitch TRANSFER frames are the same in every 5.x version, so a stream seen only after
    its handshake shows the family but not the version (pass ``prefer``, e.g. from
    :func:`autoswitch_protocol_for_version` and the broker's remoting ``version``). 5.1.0 and 5.1.1
    differ only in the slave's handshake; 5.0.0 and 5.1.0 only in the master's handshake reply, so
    one direction alone may not tell them apart. A 4.x offset between 4 GiB and 12 GiB starts with
    the same word as an AutoSwitch state, so a short 4.x prefix there gives None until more frames
    (or the other direction) settle it.
    """
    inputs = [(d, bytes(b[:_DETECT_LIMIT])) for d, b in ((HADirection.SLAVE_TO_MASTER, client_bytes),
                                                         (HADirection.MASTER_TO_SLAVE, server_bytes)) if b]
    alive: list[HAProtocol] = []
    whole = 0
    for protocol in HAProtocol:
        seen = 0
        for direction, data in inputs:
            frames = _frames_or_none(data, protocol, direction)
            if frames is None or not _plausible(frames):
                break
            seen += len(frames)
        else:
            alive.append(protocol)
            whole += seen > 0
    if not whole or not alive:
        return None
    if HAProtocol.V4 in alive:
        return HAProtocol.V4 if len(alive) == 1 else None
    if len(alive) == 1:
        return alive[0]
    if prefer is not None and HAProtocol(prefer) in alive:
        return HAProtocol(prefer)
    return max(alive, key=_AUTOSWITCH.index)
