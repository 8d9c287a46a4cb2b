# Licensed under the Apache License, Version 2.0. See LICENSE.
"""HA replication frames, one construct declaration and one frozen view per layout.

Two protocols share the HA port; neither has a type tag, a length prefix or an opaque:

* **4.x** (``HAService``/``HAConnection``, and 5.x ``DefaultHAClient``/``DefaultHAConnection`` when
  controller mode is off): the slave sends 8-byte offset reports (:class:`SlaveReport`); the master
  sends a 12-byte :class:`TransferHeader` followed by ``body_size`` bytes of CommitLog
  (:class:`Transfer`; ``body_size`` 0 is the heartbeat).
* **5.x AutoSwitch** (controller mode, ``AutoSwitchHAClient``/``AutoSwitchHAConnection``): every
  frame starts with the sender's :class:`HAConnectionState` ordinal. The slave sends a
  :class:`SlaveHandshake` (state 1; with its ``ip:port`` address in 5.0.0 and 5.1.0, with its broker
  id from 5.1.1) and then 12-byte :class:`TransferAck` frames (state 2). The master answers the
  handshake with a :class:`HandshakeReply` (its max offset, last epoch and every
  :class:`EpochEntry`) and then sends :class:`EpochTransfer` frames: a 36-byte
  :class:`EpochTransferHeader` (offset, epoch, epoch start, confirm offset) and the data. In 5.0.0
  the handshake reply used the same 36-byte header as a transfer, with the last two fields 0; from
  5.1.0 it has its own 20-byte header.

All integers are big-endian and signed, as Java's ``ByteBuffer`` writes them. Decoders accept only
what a Java peer can send (a flag is 0 or 1, a state is the one the layout carries, a handshake
body is a whole number of 12-byte entries, ...) so that ``encode(decode(b)) == b`` holds for every
frame that decodes, and anything else raises :class:`wire.DecodeError` with the offset (from the
start of the given bytes), the field, what was expected and what was found.
"""

from __future__ import annotations

import enum
import io
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from construct import (
    Array,
    Bytes,
    Const,
    Construct,
    ConstructError,
    Container,
    FixedSized,
    Int16sb,
    Int32sb,
    Int64sb,
    PascalString,
    Renamed,
    Struct,
    Terminated,
    this,
)
from construct import (
    Mapping as CMapping,
)

from ..errors import DecodeError, EncodeError, TrailingBytes, Truncated

__all__ = [
    "AUTOSWITCH_MAX_BODY_SIZE",
    "EPOCH_ENTRY",
    "EPOCH_ENTRY_SIZE",
    "EPOCH_TRANSFER",
    "EPOCH_TRANSFER_HEADER",
    "EPOCH_TRANSFER_HEADER_SIZE",
    "HANDSHAKE_REPLY",
    "HANDSHAKE_REPLY_5_0",
    "HANDSHAKE_REPLY_5_0_HEADER_SIZE",
    "HANDSHAKE_REPLY_HEADER_SIZE",
    "MAX_EPOCH_ENTRIES",
    "MAX_HANDSHAKE_ADDRESS_LENGTH",
    "SLAVE_HANDSHAKE_ADDRESS",
    "SLAVE_HANDSHAKE_BROKER_ID",
    "SLAVE_REPORT",
    "TRANSFER",
    "TRANSFER_ACK",
    "TRANSFER_HEADER",
    "TRANSFER_HEADER_SIZE",
    "V4_MAX_BODY_SIZE",
    "EpochEntry",
    "EpochTransfer",
    "EpochTransferHeader",
    "HAConnectionState",
    "HAMessage",
    "HAProtocol",
    "HandshakeReply",
    "SlaveHandshake",
    "SlaveReport",
    "Transfer",
    "TransferAck",
    "TransferHeader",
    "decode_epoch_transfer",
    "decode_epoch_transfer_header",
    "decode_handshake_reply",
    "decode_slave_handshake",
    "decode_slave_report",
    "decode_transfer",
    "decode_transfer_ack",
    "decode_transfer_header",
    "encode_epoch_transfer",
    "encode_epoch_transfer_header",
    "encode_ha_message",
    "encode_handshake_reply",
    "encode_slave_handshake",
    "encode_slave_report",
    "encode_transfer",
    "encode_transfer_ack",
    "encode_transfer_header",
]


class HAProtocol(enum.StrEnum):
    """Which HA wire protocol a connection speaks (the bytes carry no version)."""

    #: 4.x HAService, and 5.x DefaultHAService (controller mode off): 8-byte reports, 12-byte headers
    V4 = "v4"
    #: 5.0.0 AutoSwitch: slave handshake with address, one 36-byte master header for everything
    AUTOSWITCH_5_0 = "autoswitch-5.0.0"
    #: 5.1.0 AutoSwitch: slave handshake with address, 20-byte master handshake header
    AUTOSWITCH_5_1_0 = "autoswitch-5.1.0"
    #: 5.1.1 and later AutoSwitch: slave handshake with broker id, 20-byte master handshake header
    AUTOSWITCH_5_1_1 = "autoswitch-5.1.1"

    @property
    def is_autoswitch(self) -> bool:
        return self is not HAProtocol.V4


class HAConnectionState(enum.IntEnum):
    """``HAConnectionState``; AutoSwitch frames carry the ordinal as an int32."""

    #: not connected yet (never on the wire)
    READY = 0
    #: slave handshake, master handshake reply
    HANDSHAKE = 1
    #: data transfer and its acks
    TRANSFER = 2
    #: replication paused (never on the wire)
    SUSPEND = 3
    #: closing (never on the wire)
    SHUTDOWN = 4


#: AutoSwitchHAConnection.EPOCH_ENTRY_SIZE: int32 epoch + int64 start offset
EPOCH_ENTRY_SIZE = 12
#: the master's handshake buffer holds EPOCH_ENTRY_SIZE * 1000 bytes (AbstractWriteSocketService)
MAX_EPOCH_ENTRIES = 1000
#: the 5.0.0/5.1.0 slave's handshake buffer leaves 50 bytes for its address (HANDSHAKE_SIZE - 12)
MAX_HANDSHAKE_ADDRESS_LENGTH = 50
#: 4.x HAConnection headerSize: int64 offset + int32 body size
TRANSFER_HEADER_SIZE = 12
#: 5.1.0+ AutoSwitchHAConnection.HANDSHAKE_HEADER_SIZE: state, body size, max offset, last epoch
HANDSHAKE_REPLY_HEADER_SIZE = 20
#: 5.0.0 AutoSwitchHAConnection.MSG_HEADER_SIZE, used for the handshake reply too
HANDSHAKE_REPLY_5_0_HEADER_SIZE = 36
#: AutoSwitchHAConnection.TRANSFER_HEADER_SIZE (5.1.0+) = MSG_HEADER_SIZE (5.0.0)
EPOCH_TRANSFER_HEADER_SIZE = 36
# Both Java slaves read into a 4 MiB buffer (HAClient / AutoSwitchHAClient READ_MAX_BUFFER_SIZE) and
# only ever handle a frame that fits in it whole; a bigger frame stalls them forever.
_SLAVE_READ_BUFFER = 4 * 1024 * 1024
#: the largest 4.x transfer body a Java slave can take in
V4_MAX_BODY_SIZE = _SLAVE_READ_BUFFER - TRANSFER_HEADER_SIZE
#: the largest AutoSwitch transfer body a Java slave can take in
AUTOSWITCH_MAX_BODY_SIZE = _SLAVE_READ_BUFFER - EPOCH_TRANSFER_HEADER_SIZE

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)

# ------------------------------------------------------------------------------------------ layouts

# 4.x ---------------------------------------------------------------------------------------------

#: slave -> master: HAClient.reportSlaveMaxOffset
SLAVE_REPORT = Struct(
    "max_offset" / Int64sb,
    Terminated,
)

#: master -> slave: HAConnection.WriteSocketService header
TRANSFER_HEADER = Struct(
    "phy_offset" / Int64sb,
    "body_size" / Int32sb,
    Terminated,
)

#: master -> slave: the header, then body_size bytes of CommitLog
TRANSFER = Struct(
    "header" / FixedSized(TRANSFER_HEADER_SIZE, TRANSFER_HEADER),
    "data" / Bytes(this.header.body_size),
    Terminated,
)

# AutoSwitch --------------------------------------------------------------------------------------

# AutoSwitchHAConnection.HAServerReader treats a flag as set when the short is 1; the Java slave only
# ever writes (short) 1 or (short) 0.
_FLAG = CMapping(Int16sb, {False: 0, True: 1})

#: slave -> master, 5.0.0 and 5.1.0: AutoSwitchHAClient.sendHandshakeHeader
SLAVE_HANDSHAKE_ADDRESS = Struct(
    "state" / Const(int(HAConnectionState.HANDSHAKE), Int32sb),
    "sync_from_last_file" / _FLAG,
    "async_learner" / _FLAG,
    "address" / PascalString(Int32sb, "utf8"),
    Terminated,
)

#: slave -> master, 5.1.1 and later: AutoSwitchHAClient.sendHandshakeHeader
SLAVE_HANDSHAKE_BROKER_ID = Struct(
    "state" / Const(int(HAConnectionState.HANDSHAKE), Int32sb),
    "sync_from_last_file" / _FLAG,
    "async_learner" / _FLAG,
    "broker_id" / Int64sb,
    Terminated,
)

#: slave -> master: AutoSwitchHAClient.reportSlaveOffset
TRANSFER_ACK = Struct(
    "state" / Const(int(HAConnectionState.TRANSFER), Int32sb),
    "max_offset" / Int64sb,
    Terminated,
)

#: one entry of the master's epoch cache as the handshake reply carries it (endOffset is not sent)
EPOCH_ENTRY = Struct(
    "epoch" / Int32sb,
    "start_offset" / Int64sb,
)

#: master -> slave, 5.1.0 and later: AbstractWriteSocketService.buildHandshakeBuffer
HANDSHAKE_REPLY = Struct(
    "state" / Const(int(HAConnectionState.HANDSHAKE), Int32sb),
    "body_size" / Int32sb,
    "max_phy_offset" / Int64sb,
    "last_epoch" / Int32sb,
    "entries" / FixedSized(this.body_size, Struct(
        "epochs" / Array(this._.body_size // EPOCH_ENTRY_SIZE, EPOCH_ENTRY), Terminated)),
    Terminated,
)

#: master -> slave, 5.0.0: the same, in the 36-byte MSG_HEADER whose last two fields are written as 0
HANDSHAKE_REPLY_5_0 = Struct(
    "state" / Const(int(HAConnectionState.HANDSHAKE), Int32sb),
    "body_size" / Int32sb,
    "max_phy_offset" / Int64sb,
    "last_epoch" / Int32sb,
    "epoch_start_offset" / Const(0, Int64sb),
    "confirm_offset" / Const(0, Int64sb),
    "entries" / FixedSized(this.body_size, Struct(
        "epochs" / Array(this._.body_size // EPOCH_ENTRY_SIZE, EPOCH_ENTRY), Terminated)),
    Terminated,
)

#: master -> slave: AbstractWriteSocketService.buildTransferHeaderBuffer
EPOCH_TRANSFER_HEADER = Struct(
    "state" / Const(int(HAConnectionState.TRANSFER), Int32sb),
    "body_size" / Int32sb,
    "phy_offset" / Int64sb,
    "epoch" / Int32sb,
    "epoch_start_offset" / Int64sb,
    "confirm_offset" / Int64sb,
    Terminated,
)

#: master -> slave: the header, then body_size bytes of CommitLog (WriteSocketService.transferData)
EPOCH_TRANSFER = Struct(
    "header" / FixedSized(EPOCH_TRANSFER_HEADER_SIZE, EPOCH_TRANSFER_HEADER),
    "data" / Bytes(this.header.body_size),
    Terminated,
)


# ------------------------------------------------------------------------------------------ views

def _check_int(name: str, v: object, rng: tuple[int, int], bits: int) -> None:
    if not isinstance(v, int) or isinstance(v, bool) or not rng[0] <= v <= rng[1]:
        raise EncodeError(f"{name} must be a {bits}-bit int, got {v!r}", field=name)


def _check_bool(name: str, v: object) -> None:
    if not isinstance(v, bool):
        raise EncodeError(f"{name} must be a bool, got {v!r}", field=name)


def _check_data(obj: object, name: str = "data") -> None:
    data = getattr(obj, name)
    if not isinstance(data, bytes):
        if isinstance(data, (bytearray, memoryview)):
            object.__setattr__(obj, name, bytes(data))
        else:
            raise EncodeError(f"{name} must be bytes, got {type(data).__name__}", field=name)
    if len(getattr(obj, name)) > _INT32[1]:
        raise EncodeError(f"{name} does not fit an int32 body size", field=name)


@dataclass(frozen=True, slots=True)
class SlaveReport:
    """4.x slave -> master: the slave's max CommitLog offset (request, ack and heartbeat in one)."""

    max_offset: int

    def __post_init__(self) -> None:
        _check_int("max_offset", self.max_offset, _INT64, 64)


@dataclass(frozen=True, slots=True)
class TransferHeader:
    """4.x master -> slave header: where the data starts and how many bytes follow."""

    phy_offset: int
    body_size: int

    def __post_init__(self) -> None:
        _check_int("phy_offset", self.phy_offset, _INT64, 64)
        _check_int("body_size", self.body_size, (0, _INT32[1]), 32)


@dataclass(frozen=True, slots=True)
class Transfer:
    """4.x master -> slave: CommitLog bytes from ``phy_offset``; no data is the heartbeat,
    whose offset is the master's ``nextTransferFromWhere``."""

    phy_offset: int
    data: bytes = b""

    def __post_init__(self) -> None:
        _check_int("phy_offset", self.phy_offset, _INT64, 64)
        _check_data(self)

    @property
    def is_heartbeat(self) -> bool:
        return not self.data

    @property
    def header(self) -> TransferHeader:
        return TransferHeader(self.phy_offset, len(self.data))

    @property
    def end_offset(self) -> int:
        """The offset after the last byte carried: where the next transfer must start."""
        return self.phy_offset + len(self.data)

    def __repr__(self) -> str:
        return f"Transfer(phy_offset={self.phy_offset}, data=<{len(self.data)} bytes>)"


@dataclass(frozen=True, slots=True)
class SlaveHandshake:
    """AutoSwitch slave -> master, state HANDSHAKE.

    Exactly one of ``address`` (5.0.0 and 5.1.0: the slave broker's ``ip:port`` remoting address,
    UTF-8) and ``broker_id`` (5.1.1 and later) is set; it decides the layout.
    """

    sync_from_last_file: bool = False
    async_learner: bool = False
    address: str | None = None
    broker_id: int | None = None

    def __post_init__(self) -> None:
        _check_bool("sync_from_last_file", self.sync_from_last_file)
        _check_bool("async_learner", self.async_learner)
        if (self.address is None) == (self.broker_id is None):
            raise EncodeError("a slave handshake carries either an address (5.0.0/5.1.0) or a "
                              "broker id (5.1.1+), not both or neither", field="address")
        if self.broker_id is not None:
            _check_int("broker_id", self.broker_id, _INT64, 64)
        if self.address is not None:
            if not isinstance(self.address, str):
                raise EncodeError(f"address must be a str, got {self.address!r}", field="address")
            n = len(self.address.encode("utf-8", "surrogatepass"))
            if n > MAX_HANDSHAKE_ADDRESS_LENGTH:
                raise EncodeError(
                    f"address of {n} bytes exceeds the {MAX_HANDSHAKE_ADDRESS_LENGTH} bytes a slave "
                    "can send", field="address")

    @property
    def protocols(self) -> tuple[HAProtocol, ...]:
        """The AutoSwitch versions whose layout carries this handshake."""
        if self.address is not None:
            return (HAProtocol.AUTOSWITCH_5_0, HAProtocol.AUTOSWITCH_5_1_0)
        return (HAProtocol.AUTOSWITCH_5_1_1,)


@dataclass(frozen=True, slots=True)
class TransferAck:
    """AutoSwitch slave -> master, state TRANSFER: the slave's max offset (ack and heartbeat)."""

    max_offset: int

    def __post_init__(self) -> None:
        _check_int("max_offset", self.max_offset, _INT64, 64)


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """One epoch: the controller's master term and the CommitLog offset where it starts."""

    epoch: int
    start_offset: int

    def __post_init__(self) -> None:
        _check_int("epoch", self.epoch, _INT32, 32)
        _check_int("start_offset", self.start_offset, _INT64, 64)


@dataclass(frozen=True, slots=True)
class HandshakeReply:
    """AutoSwitch master -> slave, state HANDSHAKE: its max offset, last epoch and epoch entries."""

    max_phy_offset: int
    last_epoch: int
    entries: tuple[EpochEntry, ...] = ()

    def __post_init__(self) -> None:
        _check_int("max_phy_offset", self.max_phy_offset, _INT64, 64)
        _check_int("last_epoch", self.last_epoch, _INT32, 32)
        entries = tuple(self.entries)
        if not all(isinstance(e, EpochEntry) for e in entries):
            raise EncodeError("entries must be EpochEntry values", field="entries")
        if len(entries) > MAX_EPOCH_ENTRIES:
            raise EncodeError(f"{len(entries)} epoch entries exceed the master's {MAX_EPOCH_ENTRIES}",
                              field="entries")
        object.__setattr__(self, "entries", entries)


@dataclass(frozen=True, slots=True)
class EpochTransferHeader:
    """AutoSwitch master -> slave TRANSFER header (36 bytes in every 5.x version)."""

    phy_offset: int
    body_size: int
    epoch: int
    epoch_start_offset: int
    confirm_offset: int

    def __post_init__(self) -> None:
        _check_int("phy_offset", self.phy_offset, _INT64, 64)
        _check_int("body_size", self.body_size, (0, _INT32[1]), 32)
        _check_int("epoch", self.epoch, _INT32, 32)
        _check_int("epoch_start_offset", self.epoch_start_offset, _INT64, 64)
        _check_int("confirm_offset", self.confirm_offset, _INT64, 64)


@dataclass(frozen=True, slots=True)
class EpochTransfer:
    """AutoSwitch master -> slave TRANSFER: data of one epoch from ``phy_offset``.

    No data is the heartbeat; its offset is the master's ``nextTransferFromWhere``, which is -1 while
    the master has no start point (an empty store). ``confirm_offset`` is the master's confirm offset.
    """

    phy_offset: int
    epoch: int
    epoch_start_offset: int
    confirm_offset: int
    data: bytes = b""

    def __post_init__(self) -> None:
        _check_int("phy_offset", self.phy_offset, _INT64, 64)
        _check_int("epoch", self.epoch, _INT32, 32)
        _check_int("epoch_start_offset", self.epoch_start_offset, _INT64, 64)
        _check_int("confirm_offset", self.confirm_offset, _INT64, 64)
        _check_data(self)

    @property
    def is_heartbeat(self) -> bool:
        return not self.data

    @property
    def header(self) -> EpochTransferHeader:
        return EpochTransferHeader(self.phy_offset, len(self.data), self.epoch,
                                   self.epoch_start_offset, self.confirm_offset)

    @property
    def end_offset(self) -> int:
        return self.phy_offset + len(self.data)

    def __repr__(self) -> str:
        return (f"EpochTransfer(phy_offset={self.phy_offset}, epoch={self.epoch}, "
                f"epoch_start_offset={self.epoch_start_offset}, confirm_offset={self.confirm_offset}, "
                f"data=<{len(self.data)} bytes>)")


#: every message an HA stream carries
HAMessage: TypeAlias = (SlaveReport | Transfer | SlaveHandshake | TransferAck | HandshakeReply
                        | EpochTransfer)


# ------------------------------------------------------------------------------------------ decoding

_CONSTRUCT_ERRORS = (ConstructError, IndexError, KeyError, UnicodeDecodeError, ValueError,
                     OverflowError, struct.error)


def _field_offsets(con: Construct, base: int = 0, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], int]:
    """Where each named field of a layout starts, as far as the sizes are fixed."""
    out: dict[tuple[str, ...], int] = {}
    pos = base
    for sub in getattr(con, "subcons", ()):
        name = sub.name if isinstance(sub, Renamed) else None
        inner = sub.subcon if isinstance(sub, Renamed) else sub
        if name:
            out[(*prefix, name)] = pos
            if isinstance(inner, FixedSized) and isinstance(inner.subcon, Struct):
                out.update(_field_offsets(inner.subcon, pos, (*prefix, name)))
        try:
            pos += sub.sizeof()
        except (ConstructError, KeyError, IndexError, TypeError, AttributeError):
            break  # the rest depends on values in the data
    return out


_OFFSETS: dict[int, dict[tuple[str, ...], int]] = {}


def _field_offset(con: Construct, path: tuple[str, ...]) -> int | None:
    table = _OFFSETS.get(id(con))
    if table is None:
        table = _OFFSETS[id(con)] = _field_offsets(con)
    return table.get(path)


_CONST_RE = re.compile(r"expected (.+) but parsed (.+)")


def _parse(con: Construct, data: bytes, what: str) -> Container:
    """Parse a whole frame; construct's failures become a DecodeError naming the field."""
    stream = io.BytesIO(data)
    try:
        return con.parse_stream(stream)
    except _CONSTRUCT_ERRORS as exc:
        raw_path = str(getattr(exc, "path", "") or "")
        parts = tuple(p.strip() for p in raw_path.split("->")[1:] if p.strip())
        where = _field_offset(con, parts)
        field = ".".join(parts) or what
        text = str(exc)
        if text.startswith("Error in path"):
            text = text.partition("\n")[2] or text
        m = _CONST_RE.search(text)
        raise DecodeError(f"{what}: {field}: {text}" if parts else f"{what}: {text}",
                          offset=stream.tell() if where is None else where, field=field,
                          expected=m.group(1) if m else None, found=m.group(2) if m else None) from None


def _need_exactly(data: bytes, size: int, what: str) -> None:
    if len(data) < size:
        raise Truncated(f"{what} needs {size} bytes, got {len(data)}", offset=len(data), field=what,
                        expected=size, found=len(data))
    if len(data) > size:
        raise TrailingBytes(f"{len(data) - size} bytes after the {size}-byte {what}", offset=size,
                            field=what, expected=size, found=len(data))


def _int32_at(data: bytes, pos: int) -> int:
    return int(struct.unpack_from(">i", data, pos)[0])


def check_state(found: int, allowed: Sequence[HAConnectionState], offset: int, *,
                frame_index: int | None = None, what: str = "frame") -> HAConnectionState:
    """The state word of an AutoSwitch frame, or a DecodeError when it is not one ``allowed``."""
    # mirrors HAServerReader (HAConnectionState.values()[state], only HANDSHAKE and TRANSFER handled)
    # and HAClientReader (the master's state must equal the slave's, or the slave drops the stream)
    if found in allowed:
        return HAConnectionState(found)
    names = " or ".join(f"{int(s)} ({s.name})" for s in allowed)
    try:
        shown = f"{found} ({HAConnectionState(found).name})"
    except ValueError:
        shown = str(found)
    raise DecodeError(f"{what}: state {shown} where {names} must come", offset=offset, field="state",
                      expected=names, found=found, frame_index=frame_index)


def check_body_size(size: int, limit: int, offset: int, *, frame_index: int | None = None,
                    what: str = "transfer") -> None:
    """Reject a body size no Java peer can send: negative, or above ``limit``."""
    # mirrors HAClient.dispatchReadRequest / AutoSwitchHAClient.HAClientReader: a frame is handled
    # only once header and body sit in the 4 MiB read buffer together
    if size < 0:
        raise DecodeError(f"{what}: negative body size {size}", offset=offset, field="body_size",
                          expected=f"0..{limit}", found=size, frame_index=frame_index)
    if size > limit:
        raise DecodeError(f"{what}: body size {size} exceeds {limit}", offset=offset, field="body_size",
                          expected=f"0..{limit}", found=size, frame_index=frame_index)


def check_reply_body_size(size: int, offset: int, *, frame_index: int | None = None) -> None:
    """A handshake reply body is whole 12-byte epoch entries, at most MAX_EPOCH_ENTRIES of them."""
    # mirrors buildHandshakeBuffer: bodySize = entries * EPOCH_ENTRY_SIZE, in a buffer of 1000 entries
    limit = MAX_EPOCH_ENTRIES * EPOCH_ENTRY_SIZE
    check_body_size(size, limit, offset, frame_index=frame_index, what="handshake reply")
    if size % EPOCH_ENTRY_SIZE:
        raise DecodeError(f"handshake reply: body size {size} is not a multiple of {EPOCH_ENTRY_SIZE}",
                          offset=offset, field="body_size", expected=f"a multiple of {EPOCH_ENTRY_SIZE}",
                          found=size, frame_index=frame_index)


def check_address_length(size: int, offset: int, *, frame_index: int | None = None) -> None:
    """The 5.0.0/5.1.0 slave address: 0..50 bytes (the Java slave's buffer holds no more)."""
    # mirrors sendHandshakeHeader: the address follows 12 header bytes in a HANDSHAKE_SIZE (62) buffer;
    # the master's new byte[addressLength] fails on a negative length
    if not 0 <= size <= MAX_HANDSHAKE_ADDRESS_LENGTH:
        raise DecodeError(f"slave handshake: address length {size} outside 0..{MAX_HANDSHAKE_ADDRESS_LENGTH}",
                          offset=offset, field="address_length",
                          expected=f"0..{MAX_HANDSHAKE_ADDRESS_LENGTH}", found=size,
                          frame_index=frame_index)


def _check_flags(data: bytes) -> None:
    # mirrors sendHandshakeHeader: each flag is written as (short) 1 or (short) 0
    for pos, name in ((4, "sync_from_last_file"), (6, "async_learner")):
        v = int(struct.unpack_from(">h", data, pos)[0])
        if v not in (0, 1):
            raise DecodeError(f"slave handshake: {name} flag {v} is neither 0 nor 1", offset=pos,
                              field=name, expected="0 or 1", found=v)


def decode_slave_report(data: bytes) -> SlaveReport:
    """Exactly one 8-byte 4.x slave report."""
    _need_exactly(data, 8, "slave report")
    return SlaveReport(_parse(SLAVE_REPORT, data, "slave report").max_offset)


def decode_transfer_header(data: bytes, *, max_body_size: int = V4_MAX_BODY_SIZE) -> TransferHeader:
    """Exactly one 12-byte 4.x transfer header."""
    _need_exactly(data, TRANSFER_HEADER_SIZE, "transfer header")
    check_body_size(_int32_at(data, 8), max_body_size, 8)
    c = _parse(TRANSFER_HEADER, data, "transfer header")
    return TransferHeader(c.phy_offset, c.body_size)


def decode_transfer(data: bytes, *, max_body_size: int = V4_MAX_BODY_SIZE) -> Transfer:
    """Exactly one 4.x transfer: the 12-byte header and its ``body_size`` bytes."""
    header = decode_transfer_header(bytes(data[:TRANSFER_HEADER_SIZE]), max_body_size=max_body_size)
    _need_exactly(data, TRANSFER_HEADER_SIZE + header.body_size, "transfer")
    c = _parse(TRANSFER, data, "transfer")
    return Transfer(c.header.phy_offset, c.data)


_SLAVE_HANDSHAKE_LAYOUTS: Mapping[HAProtocol, Construct] = {
    HAProtocol.AUTOSWITCH_5_0: SLAVE_HANDSHAKE_ADDRESS,
    HAProtocol.AUTOSWITCH_5_1_0: SLAVE_HANDSHAKE_ADDRESS,
    HAProtocol.AUTOSWITCH_5_1_1: SLAVE_HANDSHAKE_BROKER_ID,
}

_HANDSHAKE_REPLY_LAYOUTS: Mapping[HAProtocol, tuple[Construct, int]] = {
    HAProtocol.AUTOSWITCH_5_0: (HANDSHAKE_REPLY_5_0, HANDSHAKE_REPLY_5_0_HEADER_SIZE),
    HAProtocol.AUTOSWITCH_5_1_0: (HANDSHAKE_REPLY, HANDSHAKE_REPLY_HEADER_SIZE),
    HAProtocol.AUTOSWITCH_5_1_1: (HANDSHAKE_REPLY, HANDSHAKE_REPLY_HEADER_SIZE),
}


def _autoswitch(protocol: HAProtocol, table: Mapping[HAProtocol, Any]) -> Any:
    try:
        return table[HAProtocol(protocol)]
    except KeyError:
        raise ValueError(f"{protocol} has no such frame; it is an AutoSwitch frame") from None


def slave_handshake_size(protocol: HAProtocol, address_length: int = 0) -> int:
    """Bytes a slave handshake occupies: 16 from 5.1.1, else 12 + the address length."""
    if _autoswitch(protocol, _SLAVE_HANDSHAKE_LAYOUTS) is SLAVE_HANDSHAKE_BROKER_ID:
        return 16
    return 12 + address_length


def handshake_reply_header_size(protocol: HAProtocol) -> int:
    """20 bytes from 5.1.0; 36 in 5.0.0."""
    return int(_autoswitch(protocol, _HANDSHAKE_REPLY_LAYOUTS)[1])


def decode_slave_handshake(data: bytes, protocol: HAProtocol) -> SlaveHandshake:
    """Exactly one AutoSwitch slave handshake in ``protocol``'s layout."""
    layout = _autoswitch(protocol, _SLAVE_HANDSHAKE_LAYOUTS)
    if len(data) >= 4:
        check_state(_int32_at(data, 0), (HAConnectionState.HANDSHAKE,), 0, what="slave handshake")
    if layout is SLAVE_HANDSHAKE_BROKER_ID:
        _need_exactly(data, 16, "slave handshake")
    else:
        if len(data) < 12:
            _need_exactly(data, 12, "slave handshake")
        n = _int32_at(data, 8)
        check_address_length(n, 8)
        _need_exactly(data, 12 + n, "slave handshake")
        try:
            bytes(data[12:]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"slave handshake: the address is not UTF-8 ({exc.reason})",
                              offset=12 + exc.start, field="address", expected="UTF-8 text",
                              found=data[12 + exc.start:12 + exc.end]) from None
    _check_flags(data)
    c = _parse(layout, data, "slave handshake")
    if layout is SLAVE_HANDSHAKE_BROKER_ID:
        return SlaveHandshake(c.sync_from_last_file, c.async_learner, broker_id=c.broker_id)
    return SlaveHandshake(c.sync_from_last_file, c.async_learner, address=c.address)


def decode_transfer_ack(data: bytes) -> TransferAck:
    """Exactly one 12-byte AutoSwitch slave ack."""
    if len(data) >= 4:
        check_state(_int32_at(data, 0), (HAConnectionState.TRANSFER,), 0, what="transfer ack")
    _need_exactly(data, 12, "transfer ack")
    return TransferAck(_parse(TRANSFER_ACK, data, "transfer ack").max_offset)


def decode_handshake_reply(data: bytes, protocol: HAProtocol) -> HandshakeReply:
    """Exactly one AutoSwitch master handshake reply (header and epoch entries)."""
    layout, header_size = _autoswitch(protocol, _HANDSHAKE_REPLY_LAYOUTS)
    if len(data) >= 4:
        check_state(_int32_at(data, 0), (HAConnectionState.HANDSHAKE,), 0, what="handshake reply")
    if len(data) < header_size:
        _need_exactly(data, header_size, "handshake reply")
    size = _int32_at(data, 4)
    check_reply_body_size(size, 4)
    _need_exactly(data, header_size + size, "handshake reply")
    c = _parse(layout, data, "handshake reply")
    entries = tuple(EpochEntry(e.epoch, e.start_offset) for e in c.entries.epochs)
    return HandshakeReply(c.max_phy_offset, c.last_epoch, entries)


def decode_epoch_transfer_header(data: bytes, *,
                                 max_body_size: int = AUTOSWITCH_MAX_BODY_SIZE) -> EpochTransferHeader:
    """Exactly one 36-byte AutoSwitch transfer header."""
    if len(data) >= 4:
        check_state(_int32_at(data, 0), (HAConnectionState.TRANSFER,), 0, what="transfer")
    _need_exactly(data, EPOCH_TRANSFER_HEADER_SIZE, "transfer header")
    check_body_size(_int32_at(data, 4), max_body_size, 4)
    c = _parse(EPOCH_TRANSFER_HEADER, data, "transfer header")
    return EpochTransferHeader(c.phy_offset, c.body_size, c.epoch, c.epoch_start_offset, c.confirm_offset)


def decode_epoch_transfer(data: bytes, *, max_body_size: int = AUTOSWITCH_MAX_BODY_SIZE) -> EpochTransfer:
    """Exactly one AutoSwitch transfer: the 36-byte header and its ``body_size`` bytes."""
    h = decode_epoch_transfer_header(bytes(data[:EPOCH_TRANSFER_HEADER_SIZE]), max_body_size=max_body_size)
    _need_exactly(data, EPOCH_TRANSFER_HEADER_SIZE + h.body_size, "transfer")
    c = _parse(EPOCH_TRANSFER, data, "transfer")
    return EpochTransfer(h.phy_offset, h.epoch, h.epoch_start_offset, h.confirm_offset, c.data)


# ------------------------------------------------------------------------------------------ encoding

def _build(con: Construct, value: dict[str, Any], what: str) -> bytes:
    try:
        return bytes(con.build(value))
    except _CONSTRUCT_ERRORS as exc:
        raise EncodeError(f"{what}: {exc}", field=what) from None


def encode_slave_report(report: SlaveReport) -> bytes:
    return _build(SLAVE_REPORT, {"max_offset": report.max_offset}, "slave report")


def encode_transfer_header(header: TransferHeader) -> bytes:
    return _build(TRANSFER_HEADER, {"phy_offset": header.phy_offset, "body_size": header.body_size},
                  "transfer header")


def encode_transfer(transfer: Transfer) -> bytes:
    header = {"phy_offset": transfer.phy_offset, "body_size": len(transfer.data)}
    return _build(TRANSFER, {"header": header, "data": transfer.data}, "transfer")


def encode_slave_handshake(handshake: SlaveHandshake) -> bytes:
    """The handshake in the layout its fields select (address: 5.0.0/5.1.0; broker id: 5.1.1+)."""
    value: dict[str, Any] = {"sync_from_last_file": handshake.sync_from_last_file,
                             "async_learner": handshake.async_learner}
    if handshake.broker_id is not None:
        value["broker_id"] = handshake.broker_id
        return _build(SLAVE_HANDSHAKE_BROKER_ID, value, "slave handshake")
    # The Java slave writes String.length() as the address length, which equals the UTF-8 byte count
    # only for ASCII; we write the byte count, which is what the master reads.
    value["address"] = handshake.address
    return _build(SLAVE_HANDSHAKE_ADDRESS, value, "slave handshake")


def encode_transfer_ack(ack: TransferAck) -> bytes:
    return _build(TRANSFER_ACK, {"max_offset": ack.max_offset}, "transfer ack")


def encode_handshake_reply(reply: HandshakeReply, protocol: HAProtocol) -> bytes:
    layout, _ = _autoswitch(protocol, _HANDSHAKE_REPLY_LAYOUTS)
    items = [{"epoch": e.epoch, "start_offset": e.start_offset} for e in reply.entries]
    value: dict[str, Any] = {"body_size": len(items) * EPOCH_ENTRY_SIZE,
                             "max_phy_offset": reply.max_phy_offset, "last_epoch": reply.last_epoch,
                             "entries": {"epochs": items}}
    return _build(layout, value, "handshake reply")


def _epoch_header_value(phy_offset: int, body_size: int, epoch: int, epoch_start_offset: int,
                        confirm_offset: int) -> dict[str, Any]:
    return {"body_size": body_size, "phy_offset": phy_offset, "epoch": epoch,
            "epoch_start_offset": epoch_start_offset, "confirm_offset": confirm_offset}


def encode_epoch_transfer_header(header: EpochTransferHeader) -> bytes:
    value = _epoch_header_value(header.phy_offset, header.body_size, header.epoch,
                                header.epoch_start_offset, header.confirm_offset)
    return _build(EPOCH_TRANSFER_HEADER, value, "transfer header")


def encode_epoch_transfer(transfer: EpochTransfer) -> bytes:
    header = _epoch_header_value(transfer.phy_offset, len(transfer.data), transfer.epoch,
                                 transfer.epoch_start_offset, transfer.confirm_offset)
    return _build(EPOCH_TRANSFER, {"header": header, "data": transfer.data}, "transfer")


def _encode_handshake_for(msg: Any, protocol: HAProtocol) -> bytes:
    if protocol not in msg.protocols:
        raise EncodeError(f"this handshake's layout belongs to {', '.join(msg.protocols)}, not {protocol}",
                          field="address" if msg.address is not None else "broker_id")
    return encode_slave_handshake(msg)


# W8: message type -> (encoder, protocols that carry it)
_ENCODERS: Mapping[type, tuple[Callable[[Any, HAProtocol], bytes], frozenset[HAProtocol]]] = {
    SlaveReport: (lambda m, p: encode_slave_report(m), frozenset({HAProtocol.V4})),
    Transfer: (lambda m, p: encode_transfer(m), frozenset({HAProtocol.V4})),
    SlaveHandshake: (_encode_handshake_for, frozenset(HAProtocol) - {HAProtocol.V4}),
    TransferAck: (lambda m, p: encode_transfer_ack(m), frozenset(HAProtocol) - {HAProtocol.V4}),
    HandshakeReply: (encode_handshake_reply, frozenset(HAProtocol) - {HAProtocol.V4}),
    EpochTransfer: (lambda m, p: encode_epoch_transfer(m), frozenset(HAProtocol) - {HAProtocol.V4}),
}


def encode_ha_message(message: HAMessage, protocol: HAProtocol) -> bytes:
    """Any HA message as ``protocol`` puts it on the wire."""
    protocol = HAProtocol(protocol)
    try:
        encoder, protocols = _ENCODERS[type(message)]
    except KeyError:
        raise EncodeError(f"not an HA message: {type(message).__name__}", field="message") from None
    if protocol not in protocols:
        raise EncodeError(f"{type(message).__name__} is not part of the {protocol} protocol",
                          field="message")
    return encoder(message, protocol)
