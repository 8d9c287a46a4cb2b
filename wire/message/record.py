# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The stored message record: one CommitLog entry, also the unit of PULL and VIEW_MESSAGE_BY_ID bodies.

Theory of operation
-------------------
The broker writes each message as one self-delimiting record (4.9.x ``CommitLog.MessageExtEncoder``
and ``DefaultAppendMessageCallback.doAppend``; 5.x ``store/.../MessageExtEncoder.java``), read back
by ``MessageDecoder.decode`` and ``CommitLog.checkMessageAndReturnSize``. Big-endian throughout::

    int32  totalSize                 whole record, this field included
    int32  magicCode                 0xDAA320A7 (v1) or 0xDAA320AB (v2, 5.x, topics over 127 chars)
    int32  bodyCRC                   UtilAll.crc32(body), stored as written by the broker
    int32  queueId
    int32  flag                      the producer's flag
    int64  queueOffset               consume-queue index (0 for prepared/rolled-back transactions)
    int64  physicalOffset            commit-log offset of this record's first byte
    int32  sysFlag                   MessageSysFlag; bits 4/5 choose the host widths below
    int64  bornTimestamp
    4|16 + int32   bornHost          IPv4 or (bit 4) IPv6 address, then the port
    int64  storeTimestamp
    4|16 + int32   storeHost         IPv4 or (bit 5) IPv6 address, then the port
    int32  reconsumeTimes
    int64  preparedTransactionOffset
    int32  bodyLength, body          compressed when sysFlag bit 0 says so
    int8|int16 topicLength, topic    signed byte in v1, short in v2
    int16  propertiesLength, properties

so a record is 91 + body + topic + properties bytes, plus 12 for each IPv6 host and 1 for v2
(``calMsgLength``). A PULL SUCCESS body is such records back to back (``MessageDecoder.decodes``).

:data:`STORED_MESSAGE` declares the layout in construct and is the authority; the hot paths (the
broker encodes one record per send, a pull decodes up to 32) use the ``struct`` code in
:func:`decode_stored_message` / :func:`encode_stored_message`, which a differential test holds to
the declaration, for valid and for arbitrary bytes alike.

Decoding is stricter than Java's in two ways that only matter for damaged data: ``totalSize``
must equal the length the fields add up to (the check ``checkMessageAndReturnSize`` makes), and
the topic and properties must be UTF-8 (Java would substitute U+FFFD; a broker never writes
anything else). Both keep re-encoding byte-exact: the raw properties text is kept beside the
parsed map.
"""

from __future__ import annotations

import dataclasses
import functools
import mmap
import socket
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from construct import (
    Bytes,
    Check,
    ConstructError,
    IfThenElse,
    Int8sb,
    Int16sb,
    Int32sb,
    Int32ub,
    Int64sb,
    Rebuild,
    Struct,
    Terminated,
    len_,
    this,
)

from ..errors import DecodeError, EncodeError, Truncated, decode_utf8
from .ids import create_offset_msg_id
from .properties import (
    MAX_PROPERTIES_LENGTH,
    MessageConst,
    decode_properties,
    encode_properties,
)
from .sysflag import (
    MAX_INFLATED_BODY,
    MessageSysFlag,
    TransactionType,
    body_crc,
    decompress_body,
    transaction_type,
)

__all__ = [
    "BLANK_MAGIC_CODE",
    "CRC32_RESERVED_LEN",
    "Buffer",
    "MESSAGE_MAGIC_CODE",
    "MESSAGE_MAGIC_CODE_V2",
    "MIN_RECORD_SIZE",
    "STORED_MESSAGE",
    "HostPort",
    "RecordHead",
    "StoredMessage",
    "check_crc32_property",
    "decode_messages",
    "decode_stored_message",
    "decode_stored_message_construct",
    "encode_messages",
    "encode_record_fields",
    "encode_stored_message",
    "encode_stored_message_construct",
    "iter_stored_messages",
    "scan_record_heads",
    "stored_message_size",
    "topic_length_size",
]

#: v1 magic (``MessageDecoder.MESSAGE_MAGIC_CODE``, -626843481 as a Java int)
MESSAGE_MAGIC_CODE = 0xDAA320A7
#: v2 magic, 5.x only, for topics longer than 127 (``MESSAGE_MAGIC_CODE_V2``, -626843477)
MESSAGE_MAGIC_CODE_V2 = 0xDAA320AB
#: end-of-file filler magic (``BLANK_MAGIC_CODE``, -875286124); see :mod:`wire.store`
BLANK_MAGIC_CODE = 0xCBD43194
#: the smallest record: v1, IPv4 hosts, empty body, topic and properties
MIN_RECORD_SIZE = 91
#: 5.2+ ``CommitLog.CRC32_RESERVED_LEN``: ``__CRC32#`` U+0001 ten digits U+0002
CRC32_RESERVED_LEN = len(MessageConst.PROPERTY_CRC32) + 1 + 10 + 1

#: what the decoders read from: anything ``struct.unpack_from`` and slicing accept
Buffer = bytes | bytearray | memoryview | mmap.mmap

_TOPIC_LENGTH_SIZE = {MESSAGE_MAGIC_CODE: 1, MESSAGE_MAGIC_CODE_V2: 2}
_BORN_V6 = int(MessageSysFlag.BORNHOST_V6_FLAG)
_STORE_V6 = int(MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)

_HOST_V4 = Struct("address" / Bytes(4), "port" / Int32sb)
_HOST_V6 = Struct("address" / Bytes(16), "port" / Int32sb)

#: One stored record (``MessageExtEncoder.encode`` / ``MessageDecoder.decode``). Parse it from a
#: buffer cut to ``total_size`` bytes; ``Terminated`` then checks that the fields fill it exactly.
STORED_MESSAGE = Struct(
    "total_size" / Int32sb,
    "magic" / Int32ub,
    Check((this.magic == MESSAGE_MAGIC_CODE) | (this.magic == MESSAGE_MAGIC_CODE_V2)),
    "body_crc" / Int32sb,
    "queue_id" / Int32sb,
    "flag" / Int32sb,
    "queue_offset" / Int64sb,
    "physical_offset" / Int64sb,
    "sys_flag" / Int32sb,
    "born_timestamp" / Int64sb,
    "born_host" / IfThenElse(this.sys_flag & _BORN_V6, _HOST_V6, _HOST_V4),
    "store_timestamp" / Int64sb,
    "store_host" / IfThenElse(this.sys_flag & _STORE_V6, _HOST_V6, _HOST_V4),
    "reconsume_times" / Int32sb,
    "prepared_transaction_offset" / Int64sb,
    "body_length" / Rebuild(Int32sb, len_(this.body)),
    "body" / Bytes(this.body_length),
    # MessageVersion.getTopicLengthSize: a signed byte in v1, a short in v2
    "topic_length" / IfThenElse(this.magic == MESSAGE_MAGIC_CODE_V2,
                                Rebuild(Int16sb, len_(this.topic)),
                                Rebuild(Int8sb, len_(this.topic))),
    "topic" / Bytes(this.topic_length),
    "properties_length" / Rebuild(Int16sb, len_(this.properties)),
    "properties" / Bytes(this.properties_length),
    Terminated,
)

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


class HostPort(NamedTuple):
    """A socket address as stored in a record: an IPv4 or IPv6 literal and an int32 port."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


#: the default host of a record built without one
_LOCALHOST = HostPort("127.0.0.1", 0)


@functools.lru_cache(maxsize=1024)
def _host_bytes(host: str) -> bytes:
    """The 4- or 16-byte address of an IP literal (raises EncodeError for anything else)."""
    try:
        if ":" in host:
            return socket.inet_pton(socket.AF_INET6, host)
        return socket.inet_pton(socket.AF_INET, host)
    except (OSError, ValueError, TypeError):
        raise EncodeError(f"{host!r} is not an IPv4 or IPv6 address literal", field="host") from None


@functools.lru_cache(maxsize=1024)
def _canonical_host(host: str) -> str:
    """The address as decoding spells it (``inet_ntop``), so built and decoded records compare equal."""
    return _host_str(_host_bytes(host))


def _host_str(raw: bytes) -> str:
    return socket.inet_ntoa(raw) if len(raw) == 4 else socket.inet_ntop(socket.AF_INET6, raw)


def topic_length_size(magic: int) -> int:
    """Width of the topic length field for a magic code (``MessageVersion.getTopicLengthSize``)."""
    try:
        return _TOPIC_LENGTH_SIZE[magic]
    except KeyError:
        raise EncodeError(f"magic code 0x{magic & 0xFFFFFFFF:08X} is not a message magic",
                          field="magic") from None


def stored_message_size(body_length: int, topic_length: int, properties_length: int, *,
                        sys_flag: int = 0, magic: int = MESSAGE_MAGIC_CODE) -> int:
    """``calMsgLength``: the record size for these byte lengths (negative lengths count as 0)."""
    born = 20 if sys_flag & _BORN_V6 else 8
    store = 20 if sys_flag & _STORE_V6 else 8
    return (4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + born + 8 + store + 4 + 8
            + 4 + max(body_length, 0)
            + topic_length_size(magic) + topic_length
            + 2 + max(properties_length, 0))


def _check_int(name: str, v: object, rng: tuple[int, int]) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not rng[0] <= v <= rng[1]:
        bits = 32 if rng is _INT32 else 64
        raise EncodeError(f"{name} must be a {bits}-bit int, got {v!r}", field=name)
    return v


def _check_host(name: str, v: object) -> HostPort:
    if not (isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str)):
        raise EncodeError(f"{name} must be (host, port), got {v!r}", field=name)
    host = _canonical_host(v[0])
    _check_int(f"{name}.port", v[1], _INT32)
    return v if isinstance(v, HostPort) and host == v[0] else HostPort(host, v[1])


_INT32_FIELDS = ("queue_id", "flag", "sys_flag", "reconsume_times")
_INT64_FIELDS = ("queue_offset", "physical_offset", "born_timestamp", "store_timestamp",
                 "prepared_transaction_offset")


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One stored message record, as the broker writes it and PULL returns it.

    Build one with keyword arguments; what is left out is filled in as the broker would:
    ``body_crc`` from the body, ``magic`` v1 unless the topic needs more than 127 bytes,
    ``properties_text`` from ``properties`` (4.9.x form, mapping order), and the IPv6 bits of
    ``sys_flag`` from the hosts (``CommitLog.putMessage`` sets them the same way). Given both,
    ``properties_text`` is the authority and ``properties`` must match what it decodes to.
    Afterwards ``properties`` always equals ``decode_properties(properties_text)``, and hosts are
    spelled as decoding spells them (``::1``, ``::ffff:10.0.0.1``).

    ``body`` is the stored body, compressed when ``sys_flag`` says so; see
    :meth:`decompressed_body`. A record that could not be encoded cannot be built.
    """

    topic: str
    body: bytes = b""
    properties: Mapping[str, str] = field(default_factory=dict, hash=False)
    queue_id: int = 0
    flag: int = 0
    queue_offset: int = 0
    physical_offset: int = 0
    sys_flag: int = 0
    born_timestamp: int = 0
    born_host: HostPort = _LOCALHOST
    store_timestamp: int = 0
    store_host: HostPort = _LOCALHOST
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0
    body_crc: int | None = None  # None: computed from the body
    magic: int | None = None  # None: v1, or v2 for topics over 127 bytes
    properties_text: str | None = None  # None: written from properties

    def __post_init__(self) -> None:
        s = object.__setattr__
        if not isinstance(self.topic, str):
            raise EncodeError(f"topic must be a str, got {type(self.topic).__name__}", field="topic")
        if not isinstance(self.body, (bytes, bytearray, memoryview)):
            raise EncodeError(f"body must be bytes, got {type(self.body).__name__}", field="body")
        s(self, "body", bytes(self.body))
        for name in _INT32_FIELDS:
            _check_int(name, getattr(self, name), _INT32)
        for name in _INT64_FIELDS:
            _check_int(name, getattr(self, name), _INT64)
        born = _check_host("born_host", self.born_host)
        store = _check_host("store_host", self.store_host)
        s(self, "born_host", born)
        s(self, "store_host", store)
        sys_flag = self.sys_flag
        for host, bit, name in ((born, _BORN_V6, "born_host"), (store, _STORE_V6, "store_host")):
            if ":" in host.host:
                sys_flag |= bit
            elif sys_flag & bit:
                raise EncodeError(f"sys_flag marks {name} as IPv6 but {host.host} is IPv4",
                                  field="sys_flag")
        s(self, "sys_flag", _check_int("sys_flag", sys_flag, _INT32))
        topic_len = len(self.topic.encode("utf-8"))
        magic = self.magic
        if magic is None:
            magic = MESSAGE_MAGIC_CODE if topic_len <= 0x7F else MESSAGE_MAGIC_CODE_V2
        tsize = topic_length_size(magic)
        if topic_len > (0x7F if tsize == 1 else 0x7FFF):
            raise EncodeError(f"topic of {topic_len} bytes does not fit the {tsize}-byte length of "
                              f"magic 0x{magic:08X}", field="topic")
        s(self, "magic", magic)
        text = self.properties_text
        if text is None:
            text = encode_properties(self.properties)
        elif not isinstance(text, str):
            raise EncodeError("properties_text must be a str", field="properties_text")
        props = decode_properties(text)
        if self.properties and dict(self.properties) != props and self.properties_text is not None:
            raise EncodeError("properties do not match properties_text", field="properties")
        plen = len(text.encode("utf-8"))
        if plen > MAX_PROPERTIES_LENGTH:
            # mirrors MessageExtEncoder.encode: PROPERTIES_SIZE_EXCEEDED
            raise EncodeError(f"properties of {plen} bytes exceed {MAX_PROPERTIES_LENGTH}",
                              field="properties")
        s(self, "properties_text", text)
        s(self, "properties", props)
        crc = body_crc(self.body) if self.body_crc is None else self.body_crc
        s(self, "body_crc", _check_int("body_crc", crc, _INT32))
        size = stored_message_size(len(self.body), topic_len, plen, sys_flag=sys_flag, magic=magic)
        if size > _INT32[1]:
            raise EncodeError(f"record of {size} bytes exceeds int32", field="body")

    # ------------------------------------------------------------------ views

    @property
    def total_size(self) -> int:
        """The record's length in bytes (its TOTALSIZE field)."""
        assert self.properties_text is not None and self.magic is not None  # set by __post_init__
        return stored_message_size(len(self.body), len(self.topic.encode("utf-8")),
                                   len(self.properties_text.encode("utf-8")),
                                   sys_flag=self.sys_flag, magic=self.magic)

    @property
    def tags(self) -> str | None:
        return self.properties.get(MessageConst.PROPERTY_TAGS)

    @property
    def keys(self) -> list[str]:
        """The KEYS property split on spaces (``Message.getKeys`` / ``KEY_SEPARATOR``)."""
        raw = self.properties.get(MessageConst.PROPERTY_KEYS, "")
        return [k for k in raw.split(MessageConst.KEY_SEPARATOR) if k]

    @property
    def uniq_key(self) -> str | None:
        """The client's message id (UNIQ_KEY), the ``msgId`` users see."""
        return self.properties.get(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)

    @property
    def offset_msg_id(self) -> str:
        """Store host + physical offset as a message id (``MessageDecoder.createMessageId``)."""
        return create_offset_msg_id(self.store_host.host, self.store_host.port, self.physical_offset)

    @property
    def transaction_type(self) -> TransactionType:
        return transaction_type(self.sys_flag)

    @property
    def is_compressed(self) -> bool:
        return bool(self.sys_flag & MessageSysFlag.COMPRESSED_FLAG)

    @property
    def crc_ok(self) -> bool:
        """Whether ``body_crc`` matches the body (the store's recovery check)."""
        return not self.body or body_crc(self.body) == self.body_crc

    def decompressed_body(self, *, max_size: int | None = MAX_INFLATED_BODY) -> bytes:
        """The body as the application sees it, inflated when the record is compressed (to at
        most ``max_size`` bytes: :func:`wire.message.decompress_body`)."""
        return decompress_body(self.body, self.sys_flag, max_size=max_size)

    def replace(self, **changes: Any) -> StoredMessage:
        """A copy with ``changes``. ``body_crc``, ``magic`` and ``properties_text`` carry over
        unless changed: pass ``None`` to have them worked out again."""
        if "properties" in changes and "properties_text" not in changes:
            changes["properties_text"] = None
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        return (f"<StoredMessage {self.topic!r} q{self.queue_id}@{self.queue_offset} "
                f"phys={self.physical_offset} size={self.total_size} sysFlag=0x{self.sys_flag:X} "
                f"body={len(self.body)}B props={dict(self.properties)!r}>")


def _trusted(topic: str, body: bytes, props: dict[str, str], queue_id: int, flag: int,
             queue_offset: int, physical_offset: int, sys_flag: int, born_ts: int, born: HostPort,
             store_ts: int, store: HostPort, reconsume: int, prepared: int, crc: int, magic: int,
             text: str) -> StoredMessage:
    """Build without re-validating: for decoders whose output is valid by construction."""
    m = object.__new__(StoredMessage)
    s = object.__setattr__
    s(m, "topic", topic)
    s(m, "body", body)
    s(m, "properties", props)
    s(m, "queue_id", queue_id)
    s(m, "flag", flag)
    s(m, "queue_offset", queue_offset)
    s(m, "physical_offset", physical_offset)
    s(m, "sys_flag", sys_flag)
    s(m, "born_timestamp", born_ts)
    s(m, "born_host", born)
    s(m, "store_timestamp", store_ts)
    s(m, "store_host", store)
    s(m, "reconsume_times", reconsume)
    s(m, "prepared_transaction_offset", prepared)
    s(m, "body_crc", crc)
    s(m, "magic", magic)
    s(m, "properties_text", text)
    return m


# ====================================================================== struct fast path

_HEAD = struct.Struct(">iI")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_B = struct.Struct(">b")
_SYS_FLAG_POSITION = 36  # MessageDecoder.SYSFLAG_POSITION


def _fixed(born_v6: bool, store_v6: bool) -> struct.Struct:
    born = "16si" if born_v6 else "4si"
    store = "16si" if store_v6 else "4si"
    return struct.Struct(f">iIiiiqqiq{born}q{store}iqi")


#: the fixed part up to and including bodyLength, by (bornhost v6, storehost v6) as sysFlag bits
_FIXED = {
    0: _fixed(False, False),
    _BORN_V6: _fixed(True, False),
    _STORE_V6: _fixed(False, True),
    _BORN_V6 | _STORE_V6: _fixed(True, True),
}
_HOST_MASK = _BORN_V6 | _STORE_V6
_TOPIC_LEN = {1: _B, 2: _I16}


def _check_head(data: Any, offset: int) -> tuple[int, int, int]:
    """Validate what both decoders need before they look inside: returns total, magic, end."""
    n = len(data)
    if offset < 0 or offset > n:
        raise DecodeError(f"record offset {offset} is outside the {n}-byte buffer", offset=offset,
                          field="offset", expected=f"0..{n}", found=offset)
    avail = n - offset
    if avail < 8:
        raise Truncated(f"record header needs 8 bytes, {avail} left", offset=n, field="total_size",
                        expected=8, found=avail)
    total, magic = _HEAD.unpack_from(data, offset)
    if total < 8:
        raise DecodeError(f"record total size {total} is impossible", offset=offset,
                          field="total_size", expected=f">= {MIN_RECORD_SIZE}", found=total)
    if total > avail:
        raise Truncated(f"record of {total} bytes is cut short at {avail}", offset=n,
                        field="total_size", expected=total, found=avail)
    return total, magic, offset + total


def decode_stored_message(data: Buffer, offset: int = 0, *,
                          verify: bool = False) -> StoredMessage:
    """Decode the record that starts at ``offset`` in ``data``.

    Bytes after the record are not looked at (see :func:`decode_messages` for a whole body).
    ``verify`` checks the body CRC as the store's recovery does (``checkCRCOnRecover``; Java
    skips the check for an empty body). Errors carry offsets into ``data``.
    """
    total, magic, end = _check_head(data, offset)
    tsize = _TOPIC_LENGTH_SIZE.get(magic)
    if tsize is None:
        raise DecodeError(f"illegal magic code 0x{magic:08X}", offset=offset + 4, field="magic",
                          expected=f"0x{MESSAGE_MAGIC_CODE:08X} or 0x{MESSAGE_MAGIC_CODE_V2:08X}",
                          found=f"0x{magic:08X}")
    if total < _SYS_FLAG_POSITION + 4:
        raise DecodeError(f"record total size {total} is too small", offset=offset, field="total_size",
                          expected=f">= {MIN_RECORD_SIZE}", found=total)
    (sys_flag,) = _I32.unpack_from(data, offset + _SYS_FLAG_POSITION)
    fixed = _FIXED[sys_flag & _HOST_MASK]
    if total < fixed.size + tsize + 2:
        raise DecodeError(f"record total size {total} is too small for its hosts", offset=offset,
                          field="total_size", expected=f">= {fixed.size + tsize + 2}", found=total)
    (_, _, crc, queue_id, flag, queue_offset, physical_offset, _, born_ts, born_addr, born_port,
     store_ts, store_addr, store_port, reconsume, prepared, blen) = fixed.unpack_from(data, offset)
    pos = offset + fixed.size
    if blen < 0 or pos + blen + tsize + 2 > end:
        raise DecodeError(f"body length {blen} overruns the {total}-byte record", offset=pos - 4,
                          field="body_length", expected=f"0..{end - pos - tsize - 2}", found=blen)
    body = bytes(data[pos:pos + blen])
    pos += blen
    (tlen,) = _TOPIC_LEN[tsize].unpack_from(data, pos)
    pos += tsize
    if tlen < 0 or pos + tlen + 2 > end:
        raise DecodeError(f"topic length {tlen} overruns the {total}-byte record", offset=pos - tsize,
                          field="topic_length", expected=f"0..{end - pos - 2}", found=tlen)
    topic = decode_utf8(bytes(data[pos:pos + tlen]), pos, "topic")
    pos += tlen
    (plen,) = _I16.unpack_from(data, pos)
    pos += 2
    if plen < 0 or pos + plen != end:
        # mirrors checkMessageAndReturnSize: totalSize must equal calMsgLength of the fields read
        raise DecodeError(
            f"properties length {plen} ends the record at {pos + plen - offset}, "
            f"but total size says {total}", offset=pos - 2, field="properties_length",
            expected=end - pos, found=plen)
    text = decode_utf8(bytes(data[pos:end]), pos, "properties") if plen else ""
    if verify and blen and body_crc(body) != crc:
        raise DecodeError(f"body CRC {crc} does not match the body's {body_crc(body)}",
                          offset=offset + 8, field="body_crc", expected=body_crc(body), found=crc)
    return _trusted(topic, body, decode_properties(text), queue_id, flag, queue_offset,
                    physical_offset, sys_flag, born_ts, HostPort(_host_str(born_addr), born_port),
                    store_ts, HostPort(_host_str(store_addr), store_port), reconsume, prepared, crc,
                    magic, text)


#: the dispatch fields of a record head, by (bornhost v6, storehost v6) as sysFlag bits: queueId,
#: queueOffset, physicalOffset, sysFlag, storeTimestamp and bodyLength, the rest skipped
_HEAD_FIELDS = {
    mask: struct.Struct(f">12xi4xqqi8x{20 if mask & _BORN_V6 else 8}xq{20 if mask & _STORE_V6 else 8}x12xi")
    for mask in (0, _BORN_V6, _STORE_V6, _BORN_V6 | _STORE_V6)
}
_PLAIN_HEAD = _HEAD_FIELDS[0]


class RecordHead(NamedTuple):
    """What dispatching a record needs (``DispatchRequest``), read without its body."""

    #: where the record starts in the buffer, and its length
    position: int
    total_size: int
    queue_id: int
    queue_offset: int
    physical_offset: int
    sys_flag: int
    store_timestamp: int
    topic: str
    #: the properties string, not yet parsed
    properties_text: str


def scan_record_heads(data: Buffer, position: int, end: int, limit: int) -> tuple[list[RecordHead], int]:
    """The heads of the whole message records laid end to end in ``data[position:end]``, at most
    ``limit`` of them, and the position after the last one.

    Each record is checked as :func:`decode_stored_message` checks it (magic, sizes that add up
    to ``totalSize``, UTF-8 topic and properties) but its body is neither copied nor checked
    against its CRC. The scan stops quietly at the first thing that is not such a record: a
    BLANK, bytes that run out, damage. Telling those apart, and saying where and why, is
    :func:`wire.store.scan_commitlog`'s job, from the returned position.
    """
    out: list[RecordHead] = []
    pos = position
    head = _HEAD.unpack_from
    plain = _PLAIN_HEAD.unpack_from
    plain_size = _PLAIN_HEAD.size
    i16 = _I16.unpack_from
    append = out.append
    while len(out) < limit and end - pos >= MIN_RECORD_SIZE:
        total, magic = head(data, pos)
        stop = pos + total
        if total < MIN_RECORD_SIZE or stop > end:
            break
        if magic == MESSAGE_MAGIC_CODE:
            tsize = 1
        elif magic == MESSAGE_MAGIC_CODE_V2:
            tsize = 2
        else:
            break
        queue_id, queue_offset, physical, sys_flag, store_ts, blen = plain(data, pos)
        at = pos + plain_size
        if sys_flag & _HOST_MASK:
            fields = _HEAD_FIELDS[sys_flag & _HOST_MASK]
            if total < fields.size + tsize + 2:
                break
            queue_id, queue_offset, physical, sys_flag, store_ts, blen = fields.unpack_from(data, pos)
            at = pos + fields.size
        if blen < 0 or at + blen + tsize + 2 > stop:
            break
        at += blen
        if tsize == 1:
            tlen = data[at]
            if tlen > 127:  # a negative signed byte
                break
        else:
            (tlen,) = i16(data, at)
        at += tsize
        if tlen < 0 or at + tlen + 2 > stop:
            break
        try:
            topic = str(data[at:at + tlen], "utf-8")
            at += tlen
            (plen,) = i16(data, at)
            at += 2
            if at + plen != stop:
                break
            text = str(data[at:stop], "utf-8") if plen else ""
        except UnicodeDecodeError:
            break
        append(RecordHead(pos, total, queue_id, queue_offset, physical, sys_flag, store_ts, topic, text))
        pos = stop
    return out, pos


def iter_stored_messages(body: Buffer, *,
                         verify: bool = False) -> Iterator[StoredMessage]:
    """The records of a PULL SUCCESS body (or any run of records), in order; the body must end
    exactly on a record boundary."""
    pos, n = 0, len(body)
    while pos < n:
        msg = decode_stored_message(body, pos, verify=verify)
        yield msg
        (total,) = _I32.unpack_from(body, pos)
        pos += total


def decode_messages(body: Buffer, *, verify: bool = False) -> list[StoredMessage]:
    """All records of a PULL SUCCESS / VIEW_MESSAGE_BY_ID / QUERY_MESSAGE body."""
    return list(iter_stored_messages(body, verify=verify))


def encode_stored_message(msg: StoredMessage, *, append_crc32: bool = False) -> bytes:
    """Encode a record. ``append_crc32`` adds the 5.2+ ``__CRC32#`` property
    (``enabledAppendPropCRC``): a U+0002 first if the properties do not end in one, then the
    CRC of the record up to that property, written least-significant digit first."""
    assert msg.properties_text is not None and msg.magic is not None  # set by __post_init__
    topic = msg.topic.encode("utf-8")
    props = msg.properties_text.encode("utf-8")
    if append_crc32:
        if props and not props.endswith(b"\x02"):
            props += b"\x02"
        props += bytes(CRC32_RESERVED_LEN)
        if len(props) > MAX_PROPERTIES_LENGTH:
            raise EncodeError(f"properties of {len(props)} bytes exceed {MAX_PROPERTIES_LENGTH}",
                              field="properties")
    body = msg.body
    magic = msg.magic
    tsize = _TOPIC_LENGTH_SIZE[magic]
    fixed = _FIXED[msg.sys_flag & _HOST_MASK]
    total = fixed.size + len(body) + tsize + len(topic) + 2 + len(props)
    born, store = msg.born_host, msg.store_host
    head = fixed.pack(total, magic, msg.body_crc, msg.queue_id, msg.flag, msg.queue_offset,
                      msg.physical_offset, msg.sys_flag, msg.born_timestamp, _host_bytes(born.host),
                      born.port, msg.store_timestamp, _host_bytes(store.host), store.port,
                      msg.reconsume_times, msg.prepared_transaction_offset, len(body))
    out = b"".join((head, body, _TOPIC_LEN[tsize].pack(len(topic)), topic, _I16.pack(len(props)),
                    props))
    if append_crc32:
        crc = body_crc(out[:-CRC32_RESERVED_LEN])
        out = out[:-CRC32_RESERVED_LEN] + _crc32_property(crc)
    return out


def encode_record_fields(topic: bytes, body: bytes, properties: bytes, queue_id: int, flag: int,
                         queue_offset: int, physical_offset: int, sys_flag: int, born_timestamp: int,
                         born_host: tuple[str, int], store_timestamp: int, store_host: tuple[str, int],
                         reconsume_times: int = 0, prepared_transaction_offset: int = 0,
                         crc: int | None = None, magic: int = MESSAGE_MAGIC_CODE) -> bytes:
    """A record from fields its writer has already checked: what :func:`encode_stored_message`
    writes for the :class:`StoredMessage` of these fields, without building one.

    For a store that encodes every put: ``topic`` and ``properties`` come as the UTF-8 bytes it
    has measured, and nothing is parsed or re-validated (the properties text is written as it
    is, ``crc`` is computed from ``body`` only when ``None``). What the bytes cannot hold is
    still refused with :class:`EncodeError`, as building the :class:`StoredMessage` would: a
    field out of its int range, a topic or properties too long for its length field, a record
    over int32, a host that is not an IP literal, or IPv6 bits of ``sys_flag`` that do not match
    the hosts (here they are not set for the caller).
    """
    born_addr = _host_bytes(born_host[0])
    store_addr = _host_bytes(store_host[0])
    hosts = (_BORN_V6 if len(born_addr) == 16 else 0) | (_STORE_V6 if len(store_addr) == 16 else 0)
    if sys_flag & _HOST_MASK != hosts:
        raise EncodeError(f"sys_flag 0x{sys_flag & 0xFFFFFFFF:X} does not mark the IPv6 hosts "
                          f"{born_host[0]} and {store_host[0]} as such", field="sys_flag")
    tsize = topic_length_size(magic)
    fixed = _FIXED[hosts]
    if crc is None:
        crc = body_crc(body)
    blen, tlen, plen = len(body), len(topic), len(properties)
    try:
        head = fixed.pack(fixed.size + blen + tsize + tlen + 2 + plen, magic, crc, queue_id, flag,
                          queue_offset, physical_offset, sys_flag, born_timestamp, born_addr,
                          born_host[1], store_timestamp, store_addr, store_host[1], reconsume_times,
                          prepared_transaction_offset, blen)
        tail = _TOPIC_LEN[tsize].pack(tlen)
        plen_raw = _I16.pack(plen)
    except struct.error as exc:
        raise EncodeError(f"record fields do not fit their widths: {exc}", field="record") from None
    return b"".join((head, body, tail, topic, plen_raw, properties))


def encode_messages(messages: list[StoredMessage]) -> bytes:
    """Records back to back, as a PULL SUCCESS body carries them."""
    return b"".join(encode_stored_message(m) for m in messages)


def _crc32_property(crc: int) -> bytes:
    # mirrors MessageDecoder.createCrc32: ten digits, least significant first
    digits = bytearray()
    for _ in range(10):
        digits.append(0x30 + crc % 10 if crc > 0 else 0x30)
        crc //= 10
    return MessageConst.PROPERTY_CRC32.encode() + b"\x01" + bytes(digits) + b"\x02"


def check_crc32_property(record: Buffer, offset: int = 0) -> bool | None:
    """Check the 5.2+ ``__CRC32#`` property of the record at ``offset``
    (``checkMessageAndReturnSize`` with ``forceVerifyPropCRC``): ``None`` when the record has none,
    else whether it matches the CRC of the record's first ``totalSize - 20`` bytes."""
    msg = decode_stored_message(record, offset)
    value = msg.properties.get(MessageConst.PROPERTY_CRC32)
    if value is None:
        return None
    expected = 0
    for ch in reversed(value):
        expected = expected * 10 + (ord(ch) - 0x30)
    total = msg.total_size
    return body_crc(bytes(record[offset:offset + total - CRC32_RESERVED_LEN])) == expected


# ====================================================================== construct reference path

def decode_stored_message_construct(data: Buffer, offset: int = 0, *,
                                    verify: bool = False) -> StoredMessage:
    """The same as :func:`decode_stored_message`, through :data:`STORED_MESSAGE`."""
    _, _, end = _check_head(data, offset)
    try:
        c = STORED_MESSAGE.parse(bytes(data[offset:end]))
    except (ConstructError, IndexError, KeyError, ValueError, OverflowError, struct.error) as exc:
        path = str(getattr(exc, "path", "") or "record")
        raise DecodeError(f"stored record does not decode: {exc}", offset=offset, field=path) from None
    topic = decode_utf8(c.topic, end - len(c.properties) - 2 - len(c.topic), "topic")
    text = decode_utf8(c.properties, end - len(c.properties), "properties") if c.properties else ""
    if verify and c.body and body_crc(c.body) != c.body_crc:
        raise DecodeError(f"body CRC {c.body_crc} does not match the body's {body_crc(c.body)}",
                          offset=offset + 8, field="body_crc", expected=body_crc(c.body), found=c.body_crc)
    return _trusted(topic, c.body, decode_properties(text), c.queue_id, c.flag, c.queue_offset,
                    c.physical_offset, c.sys_flag, c.born_timestamp,
                    HostPort(_host_str(c.born_host.address), c.born_host.port), c.store_timestamp,
                    HostPort(_host_str(c.store_host.address), c.store_host.port), c.reconsume_times,
                    c.prepared_transaction_offset, c.body_crc, c.magic, text)


def encode_stored_message_construct(msg: StoredMessage) -> bytes:
    """The same as :func:`encode_stored_message`, through :data:`STORED_MESSAGE`."""
    assert msg.properties_text is not None  # set by __post_init__
    return bytes(STORED_MESSAGE.build({
        "total_size": msg.total_size,
        "magic": msg.magic,
        "body_crc": msg.body_crc,
        "queue_id": msg.queue_id,
        "flag": msg.flag,
        "queue_offset": msg.queue_offset,
        "physical_offset": msg.physical_offset,
        "sys_flag": msg.sys_flag,
        "born_timestamp": msg.born_timestamp,
        "born_host": {"address": _host_bytes(msg.born_host.host), "port": msg.born_host.port},
        "store_timestamp": msg.store_timestamp,
        "store_host": {"address": _host_bytes(msg.store_host.host), "port": msg.store_host.port},
        "reconsume_times": msg.reconsume_times,
        "prepared_transaction_offset": msg.prepared_transaction_offset,
        "body": msg.body,
        "topic": msg.topic.encode("utf-8"),
        "properties": msg.properties_text.encode("utf-8"),
    }))

