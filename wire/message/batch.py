# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The SEND_BATCH_MESSAGE body and how the broker turns it into stored records.

A batch body (``MessageDecoder.encodeMessage`` / ``encodeMessages``) is entries back to back::

    int32 totalSize       22 + body + properties
    int32 magicCode       0
    int32 bodyCRC         0
    int32 flag
    int32 bodyLength, body
    int16 propertiesLength, properties

Topic, queue, sysFlag and born time come from the SEND_BATCH_MESSAGE (V2) header. Java reads the
entries field by field and ignores ``totalSize``, ``magicCode`` and ``bodyCRC``
(``MessageDecoder.decodeMessage``, the store's batch encoder); :func:`decode_batch` does too with
``strict=False``. The default ``strict=True`` also requires the three to be what a Java client
writes, so that a decoded body re-encodes to the same bytes.

The broker expands each entry into a full record (4.9.x ``CommitLog.MessageExtEncoder.encode(
MessageExtBatch)``, 5.x ``MessageExtEncoder``): the body CRC is computed; the batch's own
properties (the header's properties plus ``CLUSTER``) are appended to each entry's, with a U+0002
put in between when the entry's properties are non-empty and do not already end in one; queue id,
sysFlag, hosts, timestamps and reconsume times are the batch's; the prepared transaction offset is
0; queue offsets count up from the queue's next offset and physical offsets follow the records.
:func:`expand_batch` is that rule as a pure function. (The develop branch after 5.3.3 no longer
appends batch properties; pass none to get that behaviour.)
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from construct import (
    Bytes,
    ConstructError,
    GreedyRange,
    Int16sb,
    Int32sb,
    Rebuild,
    Struct,
    Terminated,
    len_,
    this,
)

from ..errors import DecodeError, EncodeError, Truncated, decode_utf8
from .properties import MAX_PROPERTIES_LENGTH, PROPERTY_SEPARATOR, decode_properties, encode_properties
from .record import Buffer, HostPort, StoredMessage

__all__ = [
    "BATCH_BODY",
    "BATCH_ENTRY",
    "BATCH_ENTRY_OVERHEAD",
    "BatchEntry",
    "decode_batch",
    "decode_batch_construct",
    "encode_batch",
    "expand_batch",
]

#: bytes an entry takes besides its body and properties
BATCH_ENTRY_OVERHEAD = 4 + 4 + 4 + 4 + 4 + 2

#: One batch entry (``MessageDecoder.encodeMessage``).
BATCH_ENTRY = Struct(
    "total_size" / Rebuild(Int32sb, BATCH_ENTRY_OVERHEAD + len_(this.body) + len_(this.properties)),
    "magic" / Int32sb,
    "body_crc" / Int32sb,
    "flag" / Int32sb,
    "body_length" / Rebuild(Int32sb, len_(this.body)),
    "body" / Bytes(this.body_length),
    "properties_length" / Rebuild(Int16sb, len_(this.properties)),
    "properties" / Bytes(this.properties_length),
)

#: A whole batch body. Java reads entry after entry until the body ends; the bounded
#: ``GreedyRange`` plus ``Terminated`` turns a damaged entry into an error, not a short list.
BATCH_BODY = Struct(
    "entries" / GreedyRange(BATCH_ENTRY),
    Terminated,
)

_HEAD = struct.Struct(">iiiii")  # totalSize, magic, bodyCRC, flag, bodyLength
_I16 = struct.Struct(">h")


@dataclass(frozen=True, slots=True)
class BatchEntry:
    """One message of a batch: flag, body and properties. ``properties_text`` is kept for
    byte-exact re-encoding; left out, it is written from ``properties`` (4.9.x form)."""

    body: bytes
    properties: Mapping[str, str] = field(default_factory=dict, hash=False)
    flag: int = 0
    properties_text: str | None = None  # None: written from properties

    def __post_init__(self) -> None:
        s = object.__setattr__
        if not isinstance(self.body, (bytes, bytearray, memoryview)):
            raise EncodeError(f"body must be bytes, got {type(self.body).__name__}", field="body")
        s(self, "body", bytes(self.body))
        if not isinstance(self.flag, int) or not -(2**31) <= self.flag < 2**31:
            raise EncodeError(f"flag must be a 32-bit int, got {self.flag!r}", field="flag")
        text = self.properties_text
        if text is None:
            text = encode_properties(self.properties)
        props = decode_properties(text)
        if self.properties_text is not None and self.properties and dict(self.properties) != props:
            raise EncodeError("properties do not match properties_text", field="properties")
        if len(text.encode("utf-8")) > MAX_PROPERTIES_LENGTH:
            # mirrors MessageDecoder.encodeMessage: "Properties size of message exceeded"
            raise EncodeError(f"properties exceed {MAX_PROPERTIES_LENGTH} bytes", field="properties")
        s(self, "properties_text", text)
        s(self, "properties", props)


def _trusted(body: bytes, text: str, flag: int) -> BatchEntry:
    e = object.__new__(BatchEntry)
    object.__setattr__(e, "body", body)
    object.__setattr__(e, "properties", decode_properties(text))
    object.__setattr__(e, "flag", flag)
    object.__setattr__(e, "properties_text", text)
    return e




def _check_canonical(total: int, magic: int, crc: int, want: int, pos: int) -> None:
    if total != want:
        raise DecodeError(f"batch entry total size {total} does not match its fields ({want})",
                          offset=pos, field="total_size", expected=want, found=total)
    if magic != 0 or crc != 0:
        raise DecodeError("batch entry magic and body CRC must be 0", offset=pos + 4,
                          field="magic" if magic else "body_crc", expected=0, found=magic or crc)


def decode_batch(body: Buffer, *, strict: bool = True) -> list[BatchEntry]:
    """The entries of a SEND_BATCH_MESSAGE body (see the module notes for ``strict``)."""
    out: list[BatchEntry] = []
    pos, n = 0, len(body)
    while pos < n:
        if n - pos < _HEAD.size:
            raise Truncated(f"batch entry needs {_HEAD.size} bytes, {n - pos} left", offset=n,
                            field="total_size", expected=_HEAD.size, found=n - pos)
        total, magic, crc, flag, blen = _HEAD.unpack_from(body, pos)
        bstart = pos + _HEAD.size
        if blen < 0 or bstart + blen + 2 > n:
            raise DecodeError(f"batch entry body length {blen} overruns the body", offset=bstart - 4,
                              field="body_length", expected=f"0..{n - bstart - 2}", found=blen)
        (plen,) = _I16.unpack_from(body, bstart + blen)
        pstart = bstart + blen + 2
        if plen < 0 or pstart + plen > n:
            raise DecodeError(f"batch entry properties length {plen} overruns the body",
                              offset=pstart - 2, field="properties_length",
                              expected=f"0..{n - pstart}", found=plen)
        end = pstart + plen
        if strict:
            _check_canonical(total, magic, crc, end - pos, pos)
        text = decode_utf8(bytes(body[pstart:end]), pstart, "batch entry properties") if plen else ""
        out.append(_trusted(bytes(body[bstart:bstart + blen]), text, flag))
        pos = end
    return out


def decode_batch_construct(body: Buffer, *, strict: bool = True) -> list[BatchEntry]:
    """The same as :func:`decode_batch`, through :data:`BATCH_BODY`."""
    data = bytes(body)
    try:
        entries = BATCH_BODY.parse(data).entries
    except (ConstructError, ValueError, OverflowError, struct.error) as exc:
        raise DecodeError(f"batch body does not decode: {exc}", offset=None,
                          field=str(getattr(exc, "path", "") or "batch")) from None
    out: list[BatchEntry] = []
    pos = 0
    for c in entries:
        size = BATCH_ENTRY_OVERHEAD + len(c.body) + len(c.properties)
        if strict:
            _check_canonical(c.total_size, c.magic, c.body_crc, size, pos)
        text = (decode_utf8(c.properties, pos + size - len(c.properties), "batch entry properties")
                if c.properties else "")
        out.append(_trusted(c.body, text, c.flag))
        pos += size
    return out


def encode_batch(messages: Iterable[BatchEntry]) -> bytes:
    """A SEND_BATCH_MESSAGE body (``MessageDecoder.encodeMessages``)."""
    parts = []
    for m in messages:
        assert m.properties_text is not None  # set by __post_init__
        props = m.properties_text.encode("utf-8")
        parts.append(_HEAD.pack(BATCH_ENTRY_OVERHEAD + len(m.body) + len(props), 0, 0, m.flag,
                                len(m.body)))
        parts.append(m.body)
        parts.append(_I16.pack(len(props)))
        parts.append(props)
    return b"".join(parts)


def expand_batch(batch: Buffer | Sequence[BatchEntry], *, topic: str,
                 queue_id: int, born_host: HostPort | tuple[str, int],
                 store_host: HostPort | tuple[str, int], sys_flag: int = 0, born_timestamp: int = 0,
                 store_timestamp: int = 0, reconsume_times: int = 0,
                 batch_properties: Mapping[str, str] | str = "", queue_offset: int = 0,
                 physical_offset: int = 0, magic: int | None = None) -> list[StoredMessage]:
    """The records the broker stores for a batch (see the module notes).

    ``batch`` is the request body (decoded leniently, as Java does) or its entries.
    ``batch_properties`` is the batch-level properties text, or a mapping written in its order.
    ``queue_offset`` / ``physical_offset`` are where the first record goes.
    """
    if isinstance(batch, (bytes, bytearray, memoryview, mmap.mmap)):
        entries = decode_batch(batch, strict=False)
    else:
        entries = list(batch)
    extra = batch_properties if isinstance(batch_properties, str) else encode_properties(batch_properties)
    born = HostPort(*born_host)
    store = HostPort(*store_host)
    version: dict[str, Any] = {} if magic is None else {"magic": magic}
    out: list[StoredMessage] = []
    qoff, poff = queue_offset, physical_offset
    for e in entries:
        text = e.properties_text
        assert text is not None  # set by __post_init__
        if extra:
            if text and not text.endswith(PROPERTY_SEPARATOR):
                text += PROPERTY_SEPARATOR
            text += extra
        rec = StoredMessage(topic=topic, body=e.body, queue_id=queue_id, flag=e.flag,
                            queue_offset=qoff, physical_offset=poff, sys_flag=sys_flag,
                            born_timestamp=born_timestamp, born_host=born,
                            store_timestamp=store_timestamp, store_host=store,
                            reconsume_times=reconsume_times, prepared_transaction_offset=0,
                            properties_text=text, **version)
        out.append(rec)
        qoff += 1
        poff += rec.total_size
    return out
