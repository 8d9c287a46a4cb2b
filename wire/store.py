# Licensed under the Apache License, Version 2.0. See LICENSE.
"""On-disk store formats: CommitLog files, ConsumeQueue entries, the checkpoint and index files.

Theory of operation
-------------------
A broker's store (``store/.../DefaultMessageStore``) keeps, under its root directory:

* ``commitlog/`` — mapped files of ``mappedFileSizeCommitLog`` bytes (1 GiB by default), each
  named by the 20-digit decimal commit-log offset of its first byte (``UtilAll.offset2FileName``).
  Records (:mod:`wire.message.record`) are appended back to back. When the next record plus 8 bytes
  no longer fits, the broker writes a BLANK marker — int32 bytes left in the file, int32
  ``BLANK_MAGIC_CODE`` 0xCBD43194 — and carries on in the next file
  (``DefaultAppendMessageCallback.doAppend``, ``END_FILE_MIN_BLANK_LENGTH`` = 8). The rest of the
  file stays as it was (zeros in a fresh file). Recovery (``CommitLog.recoverNormally`` /
  ``recoverAbnormally``) walks the records with ``checkMessageAndReturnSize`` and stops at the
  first thing that is not a good record: a zero tail, a torn record, an unknown magic, a size
  that does not add up, or (with ``checkCRCOnRecover``) a body CRC mismatch. :func:`scan_commitlog`
  walks the same way and says where and why it stopped.
* ``consumequeue/<topic>/<queueId>/`` — files of 300000 entries × 20 bytes (``ConsumeQueue``):
  int64 commit-log offset, int32 record size, int64 tags code (``String.hashCode`` of TAGS, or the
  delivery time for ``SCHEDULE_TOPIC_XXXX``). Holes before a queue's first entry are filled with
  (0, ``Integer.MAX_VALUE``, 0) (``fillPreBlank``). Files are named like commit-log files, by
  logical byte offset.
* ``checkpoint`` — one 4 KiB page (``StoreCheckpoint``): int64 physicMsgTimestamp at 0,
  logicsMsgTimestamp at 8, indexMsgTimestamp at 16, and in 5.x masterFlushedOffset at 24 (5.0.0+)
  and confirmPhyOffset at 32 (5.1.1+); the rest is zero.
* ``index/`` — files named by creation time ``yyyyMMddHHmmssSSS`` (local time) holding a 40-byte
  ``IndexHeader`` (begin/end timestamp, begin/end physical offset as int64, hash slot count and
  index count as int32), ``maxHashSlotNum`` (5,000,000) int32 slots, then ``maxIndexNum``
  (20,000,000) 20-byte entries (int32 key hash, int64 physical offset, int32 seconds since the
  header's begin timestamp, int32 previous entry in the slot's chain). Entry 0 is never used.
  Keys are ``topic#key`` for each KEYS word and for the UNIQ_KEY (``IndexService.buildIndex``);
  ``IndexFile.putKey`` and ``selectPhyOffset`` are mirrored by :func:`index_put_key` and
  :func:`index_select_phy_offsets`.

Each layout is declared once in construct, which stays the reference. The layouts the store
touches on every put or read (the ConsumeQueue entry, the index header, hash slot and entry) are
encoded and decoded through ``struct`` paths that differential tests hold to the declarations; the
``*_construct`` functions are the construct side of those tests. The ``*_fields`` variants take or
give plain ints, for writers that keep the fields in their own variables.
"""

from __future__ import annotations

import enum
import re
import struct
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from itertools import starmap
from typing import Any

from construct import (
    Bytes,
    Const,
    ConstructError,
    Int32sb,
    Int32ub,
    Int64sb,
    Struct,
    Terminated,
)

from .errors import DecodeError, EncodeError, TrailingBytes, Truncated
from .java import java_string_hash
from .message.record import (
    BLANK_MAGIC_CODE,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    Buffer,
    StoredMessage,
    decode_stored_message,
)

__all__ = [
    "BLANK_MAGIC_CODE",
    "BLANK_RECORD",
    "CONSUME_QUEUE_ENTRY",
    "CQ_STORE_UNIT_SIZE",
    "END_FILE_MIN_BLANK_LENGTH",
    "INDEX_ENTRY",
    "INDEX_ENTRY_SIZE",
    "INDEX_HASH_SLOT",
    "INDEX_HASH_SLOT_SIZE",
    "INDEX_HEADER",
    "INDEX_HEADER_SIZE",
    "MAPPED_FILE_SIZE_COMMITLOG",
    "MAPPED_FILE_SIZE_CONSUME_QUEUE",
    "MAPPED_FILE_SIZE_CONSUME_QUEUE_EXT",
    "MAX_HASH_SLOT_NUM",
    "MAX_INDEX_NUM",
    "MAX_MESSAGE_SIZE",
    "OS_PAGE_SIZE",
    "PRE_BLANK_ENTRY",
    "STORE_CHECKPOINT",
    "Blank",
    "ConsumeQueueEntry",
    "IndexEntry",
    "IndexHeader",
    "Problem",
    "ProblemKind",
    "StoreCheckpoint",
    "decode_blank",
    "decode_checkpoint",
    "decode_cq_entry",
    "decode_cq_entry_construct",
    "decode_hash_slot",
    "decode_hash_slot_construct",
    "decode_index_entry",
    "decode_index_entry_construct",
    "decode_index_entry_fields",
    "decode_index_header",
    "decode_index_header_construct",
    "encode_blank",
    "encode_checkpoint",
    "encode_cq_entry",
    "encode_cq_entry_construct",
    "encode_cq_entries_fields",
    "encode_cq_entry_fields",
    "encode_hash_slot",
    "encode_hash_slot_construct",
    "encode_index_entry",
    "encode_index_entry_construct",
    "encode_index_entry_fields",
    "encode_index_header",
    "encode_index_header_construct",
    "encode_index_header_fields",
    "file_name_to_offset",
    "hash_slot_position",
    "index_entry_position",
    "index_file_name",
    "index_file_size",
    "index_key",
    "index_key_hash",
    "index_put_key",
    "index_select_phy_offsets",
    "iter_cq_entries",
    "iter_cq_entry_fields",
    "new_index_header",
    "offset_to_file_name",
    "scan_commitlog",
    "tags_code",
    "pack_hash_slot_into",
    "pack_index_entry_into",
]

# ---------------------------------------------------------------------- defaults (MessageStoreConfig)

#: ``mappedFileSizeCommitLog``: 1 GiB
MAPPED_FILE_SIZE_COMMITLOG = 1024 * 1024 * 1024
#: ``ConsumeQueue.CQ_STORE_UNIT_SIZE``
CQ_STORE_UNIT_SIZE = 20
#: ``mappedFileSizeConsumeQueue``: 300000 entries
MAPPED_FILE_SIZE_CONSUME_QUEUE = 300000 * CQ_STORE_UNIT_SIZE
#: ``mappedFileSizeConsumeQueueExt``: 48 MiB
MAPPED_FILE_SIZE_CONSUME_QUEUE_EXT = 48 * 1024 * 1024
#: ``maxMessageSize``: 4 MiB (the body limit)
MAX_MESSAGE_SIZE = 4 * 1024 * 1024
#: ``maxHashSlotNum``
MAX_HASH_SLOT_NUM = 5_000_000
#: ``maxIndexNum``
MAX_INDEX_NUM = 5_000_000 * 4
#: ``MappedFile.OS_PAGE_SIZE``: the checkpoint file's size
OS_PAGE_SIZE = 4096
#: ``DefaultAppendMessageCallback.END_FILE_MIN_BLANK_LENGTH``
END_FILE_MIN_BLANK_LENGTH = 4 + 4

# ---------------------------------------------------------------------- file names

_FILE_NAME = re.compile(r"[0-9]{20}")


def offset_to_file_name(offset: int) -> str:
    """``UtilAll.offset2FileName``: the offset as 20 decimal digits, zero-padded."""
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset < 2**63:
        raise EncodeError(f"file offset must be a non-negative int64, got {offset!r}", field="offset")
    return f"{offset:020d}"


def file_name_to_offset(name: str) -> int:
    """The start offset a commit-log or consume-queue file name stands for."""
    if not isinstance(name, str) or not _FILE_NAME.fullmatch(name) or int(name) >= 2**63:
        raise DecodeError(f"{name!r} is not a 20-digit store file name", offset=0, field="fileName",
                          expected="20 decimal digits", found=name)
    return int(name)


def tags_code(tags: str | None) -> int:
    """``MessageExtBrokerInner.tagsString2tagsCode``: ``String.hashCode`` of the TAGS property,
    sign-extended to long; 0 when there are no tags."""
    return java_string_hash(tags) if tags else 0


# ---------------------------------------------------------------------- ConsumeQueue

#: One ConsumeQueue unit (``ConsumeQueue.putMessagePositionInfo``).
CONSUME_QUEUE_ENTRY = Struct(
    "commit_log_offset" / Int64sb,
    "size" / Int32sb,
    "tags_code" / Int64sb,
    Terminated,
)

_CQ = struct.Struct(">qiq")


@dataclass(frozen=True, slots=True)
class ConsumeQueueEntry:
    """Where a queue's message sits in the commit log, and its tags code."""

    commit_log_offset: int
    size: int
    tags_code: int = 0

    def __post_init__(self) -> None:
        try:
            _CQ.pack(self.commit_log_offset, self.size, self.tags_code)
        except struct.error:
            raise EncodeError(f"consume queue entry out of range: {self}", field="consumeQueue") from None

    @property
    def is_pre_blank(self) -> bool:
        """The filler ``fillPreBlank`` writes before a queue's first real entry."""
        return self == PRE_BLANK_ENTRY


#: ``ConsumeQueue.fillPreBlank``'s filler
PRE_BLANK_ENTRY = ConsumeQueueEntry(0, 0x7FFFFFFF, 0)


def _cq_entry(offset: int, size: int, tags: int) -> ConsumeQueueEntry:
    e = object.__new__(ConsumeQueueEntry)
    object.__setattr__(e, "commit_log_offset", offset)
    object.__setattr__(e, "size", size)
    object.__setattr__(e, "tags_code", tags)
    return e


def decode_cq_entry(data: Buffer, offset: int = 0) -> ConsumeQueueEntry:
    """The 20-byte entry at ``offset`` of ``data``."""
    if offset < 0 or len(data) - offset < CQ_STORE_UNIT_SIZE:
        _need(data, offset, CQ_STORE_UNIT_SIZE, "consumeQueue")
    return _cq_entry(*_CQ.unpack_from(data, offset))


def decode_cq_entry_construct(data: Buffer, offset: int = 0) -> ConsumeQueueEntry:
    """The same as :func:`decode_cq_entry`, through :data:`CONSUME_QUEUE_ENTRY`."""
    c = _parse(CONSUME_QUEUE_ENTRY, data, offset, CQ_STORE_UNIT_SIZE, "consumeQueue")
    return _cq_entry(c.commit_log_offset, c.size, c.tags_code)


def encode_cq_entry(entry: ConsumeQueueEntry) -> bytes:
    return _CQ.pack(entry.commit_log_offset, entry.size, entry.tags_code)


def encode_cq_entries_fields(units: Iterable[tuple[int, int, int]]) -> bytes:
    """The units ``(commit_log_offset, size, tags_code)`` back to back, as a run of
    :func:`encode_cq_entry_fields` (a dispatcher writes a batch of a queue's units at once)."""
    try:
        return b"".join(starmap(_CQ.pack, units))
    except struct.error:
        raise EncodeError("consume queue entry out of range in a run of units",
                          field="consumeQueue") from None


def encode_cq_entry_fields(commit_log_offset: int, size: int, tags_code: int) -> bytes:
    """:func:`encode_cq_entry` from plain ints (the dispatcher writes one unit per message and
    builds no :class:`ConsumeQueueEntry`); a value out of range is an EncodeError."""
    try:
        return _CQ.pack(commit_log_offset, size, tags_code)
    except struct.error:
        raise EncodeError(f"consume queue entry out of range: {(commit_log_offset, size, tags_code)!r}",
                          field="consumeQueue") from None


def encode_cq_entry_construct(entry: ConsumeQueueEntry) -> bytes:
    """The same as :func:`encode_cq_entry`, through :data:`CONSUME_QUEUE_ENTRY`."""
    try:
        return bytes(CONSUME_QUEUE_ENTRY.build({"commit_log_offset": entry.commit_log_offset,
                                                "size": entry.size, "tags_code": entry.tags_code}))
    except ConstructError as exc:
        raise EncodeError(f"consume queue entry: {exc}", field="consumeQueue") from None


def _whole_units(n: int) -> None:
    if n % CQ_STORE_UNIT_SIZE:
        raise TrailingBytes(f"{n} bytes is not a whole number of {CQ_STORE_UNIT_SIZE}-byte entries",
                            offset=n - n % CQ_STORE_UNIT_SIZE, field="consumeQueue",
                            expected=CQ_STORE_UNIT_SIZE, found=n % CQ_STORE_UNIT_SIZE)


def iter_cq_entries(data: Buffer) -> Iterator[ConsumeQueueEntry]:
    """Every entry of a ConsumeQueue file or slice; its length must be a multiple of 20."""
    _whole_units(len(data))
    for offset, size, tags in _CQ.iter_unpack(data):
        yield _cq_entry(offset, size, tags)


def iter_cq_entry_fields(data: Buffer) -> Iterator[tuple[int, int, int]]:
    """:func:`iter_cq_entries` as plain (commit-log offset, size, tags code) tuples, for reads
    that look at each unit once (a pull walks up to 800 of them). Unlike the generator above,
    a length that is not a whole number of entries is refused at the call."""
    _whole_units(len(data))
    return _CQ.iter_unpack(data)


# ---------------------------------------------------------------------- BLANK record and the scan

#: The end-of-file marker (``doAppend`` when ``msgLen + 8 > maxBlank``); its size is the rest of
#: the file, of which only these 8 bytes are written.
BLANK_RECORD = Struct(
    "total_size" / Int32sb,
    "magic" / Const(BLANK_MAGIC_CODE, Int32ub),
    Terminated,
)


@dataclass(frozen=True, slots=True)
class Blank:
    """A BLANK marker: the file's last ``size`` bytes hold no record."""

    size: int


def encode_blank(remaining: int) -> bytes:
    """The 8 bytes the broker writes when ``remaining`` bytes of a file are left unused."""
    if not END_FILE_MIN_BLANK_LENGTH <= remaining < 2**31:
        raise EncodeError(f"a blank covers at least {END_FILE_MIN_BLANK_LENGTH} bytes, got {remaining}",
                          field="total_size")
    return bytes(BLANK_RECORD.build({"total_size": remaining}))


def decode_blank(data: Buffer, offset: int = 0) -> Blank:
    """The BLANK marker at ``offset``."""
    try:
        c = BLANK_RECORD.parse(bytes(data[offset:offset + END_FILE_MIN_BLANK_LENGTH]))
    except ConstructError as exc:
        raise DecodeError(f"not a BLANK marker: {exc}", offset=offset,
                          field=str(getattr(exc, "path", "") or "blank")) from None
    return Blank(c.total_size)


class ProblemKind(enum.Enum):
    """Why a commit-log scan stopped."""

    #: zeros from here on: the end of the written data in a mapped file
    ZERO_TAIL = "zero-tail"
    #: a record (or its 8-byte head) runs past the end of the data: a torn write
    TRUNCATED = "truncated"
    #: the magic code is neither a message nor a BLANK
    BAD_MAGIC = "bad-magic"
    #: the fields do not add up to the record's total size, or do not decode
    BAD_RECORD = "bad-record"
    #: the body CRC does not match (only when asked to check)
    CRC_MISMATCH = "crc-mismatch"
    #: a BLANK marker with an impossible size
    BAD_BLANK = "bad-blank"


@dataclass(frozen=True, slots=True)
class Problem:
    """Where and why a commit-log scan stopped; the scan yields this last."""

    kind: ProblemKind
    reason: str
    error: DecodeError | None = None


ScanItem = StoredMessage | Blank | Problem

_HEAD = struct.Struct(">iI")
_MESSAGE_MAGICS = (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2)


def scan_commitlog(data: Buffer, base_offset: int = 0, *,
                   verify_crc: bool = False) -> Generator[tuple[int, ScanItem], None, None]:
    """Walk commit-log bytes as recovery does: yield ``(offset, item)`` for every record and BLANK
    marker, with ``offset`` the commit-log offset (``base_offset`` is that of ``data[0]``, e.g.
    a file's name). Ends quietly when the data ends on a record boundary; otherwise the last
    item is a :class:`Problem` saying where and why the scan stopped (the place recovery would
    truncate to). A BLANK marker ends its file: the scan goes on at the next file's start, if
    the data reaches that far. ``verify_crc`` checks body CRCs (``checkCRCOnRecover``).
    """
    n = len(data)
    pos = 0
    while pos < n:
        where = base_offset + pos
        if n - pos < 8:
            tail = bytes(data[pos:])
            if not any(tail):
                yield where, Problem(ProblemKind.ZERO_TAIL, f"{n - pos} zero bytes to the end")
            else:
                yield where, Problem(ProblemKind.TRUNCATED, f"{n - pos} bytes cannot hold a record head",
                                     Truncated("record head cut short", offset=base_offset + n,
                                               field="total_size", expected=8, found=n - pos))
            return
        total, magic = _HEAD.unpack_from(data, pos)
        if magic == BLANK_MAGIC_CODE:
            # mirrors checkMessageAndReturnSize: a BLANK means "end of this file, go to the next"
            yield where, Blank(total)
            if total < END_FILE_MIN_BLANK_LENGTH:
                yield where, Problem(ProblemKind.BAD_BLANK, f"BLANK marker of size {total}")
                return
            pos += total
            continue
        if magic not in _MESSAGE_MAGICS:
            if total == 0 and magic == 0:
                end = bytes(data[pos:pos + 4096])
                what = "zero-filled" if not any(end) else "zero record head"
                yield where, Problem(ProblemKind.ZERO_TAIL, f"{what}: end of the written data")
            else:
                yield where, Problem(ProblemKind.BAD_MAGIC, f"illegal magic code 0x{magic:08X}",
                                     DecodeError(f"illegal magic code 0x{magic:08X}", offset=where + 4,
                                                 field="magic", found=f"0x{magic:08X}"))
            return
        try:
            msg = decode_stored_message(data, pos, verify=verify_crc)
        except DecodeError as err:
            err.shifted(base_offset)
            if isinstance(err, Truncated):
                kind = ProblemKind.TRUNCATED
            elif err.field == "body_crc":
                kind = ProblemKind.CRC_MISMATCH
            else:
                kind = ProblemKind.BAD_RECORD
            yield where, Problem(kind, err.reason, err)
            return
        yield where, msg
        pos += total


# ---------------------------------------------------------------------- checkpoint

_CHECKPOINT_FIELDS = struct.Struct(">5q")
_INDEX_HEADER_FIELDS = struct.Struct(">4q2i")
_INDEX_ENTRY_FIELDS = struct.Struct(">iqii")


def _fits(layout: struct.Struct, view: Any, what: str) -> None:
    """W9: a view whose fields do not fit their widths cannot be built."""
    values = [getattr(view, f) for f in view.__dataclass_fields__]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise EncodeError(f"{what}: fields must be ints, got {values!r}", field=what)
    try:
        layout.pack(*values)
    except struct.error:
        raise EncodeError(f"{what}: a field does not fit its width: {values!r}", field=what) from None

#: The ``checkpoint`` file (``StoreCheckpoint.flush``): five int64 at fixed offsets in a 4 KiB page.
STORE_CHECKPOINT = Struct(
    "physic_msg_timestamp" / Int64sb,
    "logics_msg_timestamp" / Int64sb,
    "index_msg_timestamp" / Int64sb,
    "master_flushed_offset" / Int64sb,
    "confirm_phy_offset" / Int64sb,
    "rest" / Bytes(OS_PAGE_SIZE - 40),
    Terminated,
)


@dataclass(frozen=True, slots=True)
class StoreCheckpoint:
    """The store checkpoint. 4.9.x writes only the three timestamps (the other two read as 0)."""

    physic_msg_timestamp: int = 0
    logics_msg_timestamp: int = 0
    index_msg_timestamp: int = 0
    #: 5.0.0+
    master_flushed_offset: int = 0
    #: 5.1.1+
    confirm_phy_offset: int = 0

    def __post_init__(self) -> None:
        _fits(_CHECKPOINT_FIELDS, self, "checkpoint")

    @property
    def min_timestamp(self) -> int:
        """``getMinTimestamp``: the older of the physic and logics stamps, less 3 s, floored at 0."""
        return max(0, min(self.physic_msg_timestamp, self.logics_msg_timestamp) - 3000)

    @property
    def min_timestamp_index(self) -> int:
        """``getMinTimestampIndex``: :attr:`min_timestamp` or the index stamp, whichever is older."""
        return min(self.min_timestamp, self.index_msg_timestamp)


def encode_checkpoint(cp: StoreCheckpoint) -> bytes:
    """The whole 4096-byte checkpoint file."""
    try:
        return bytes(STORE_CHECKPOINT.build({
            "physic_msg_timestamp": cp.physic_msg_timestamp,
            "logics_msg_timestamp": cp.logics_msg_timestamp,
            "index_msg_timestamp": cp.index_msg_timestamp,
            "master_flushed_offset": cp.master_flushed_offset,
            "confirm_phy_offset": cp.confirm_phy_offset,
            "rest": bytes(OS_PAGE_SIZE - 40),
        }))
    except ConstructError as exc:
        raise EncodeError(f"checkpoint: {exc}", field="checkpoint") from None


def decode_checkpoint(data: Buffer) -> StoreCheckpoint:
    """Read a checkpoint file. A file shorter than a page reads as zero-padded, as mapping it
    does; one longer than a page is an error."""
    raw = bytes(data)
    if len(raw) > OS_PAGE_SIZE:
        raise TrailingBytes(f"checkpoint file of {len(raw)} bytes is longer than a page",
                            offset=OS_PAGE_SIZE, field="checkpoint", expected=OS_PAGE_SIZE, found=len(raw))
    c = STORE_CHECKPOINT.parse(raw.ljust(OS_PAGE_SIZE, b"\0"))
    return StoreCheckpoint(c.physic_msg_timestamp, c.logics_msg_timestamp, c.index_msg_timestamp,
                           c.master_flushed_offset, c.confirm_phy_offset)


# ---------------------------------------------------------------------- index files

#: ``IndexHeader.INDEX_HEADER_SIZE``
INDEX_HEADER_SIZE = 40
#: ``IndexFile.hashSlotSize``
INDEX_HASH_SLOT_SIZE = 4
#: ``IndexFile.indexSize``
INDEX_ENTRY_SIZE = 20

#: ``IndexHeader``: the first 40 bytes of an index file.
INDEX_HEADER = Struct(
    "begin_timestamp" / Int64sb,
    "end_timestamp" / Int64sb,
    "begin_phy_offset" / Int64sb,
    "end_phy_offset" / Int64sb,
    "hash_slot_count" / Int32sb,
    "index_count" / Int32sb,
    Terminated,
)

#: One hash slot: the number of the newest entry in its chain (0: empty).
INDEX_HASH_SLOT = Struct("index" / Int32sb, Terminated)

#: One index entry (``IndexFile.putKey``).
INDEX_ENTRY = Struct(
    "key_hash" / Int32sb,
    "phy_offset" / Int64sb,
    "time_diff" / Int32sb,
    "prev_index" / Int32sb,
    Terminated,
)


@dataclass(frozen=True, slots=True)
class IndexHeader:
    """An index file's header. ``index_count`` is the next entry number; a fresh file holds 0
    there, which ``IndexHeader.load`` reads as 1 (entry 0 is never used)."""

    begin_timestamp: int = 0
    end_timestamp: int = 0
    begin_phy_offset: int = 0
    end_phy_offset: int = 0
    hash_slot_count: int = 0
    index_count: int = 0

    def __post_init__(self) -> None:
        _fits(_INDEX_HEADER_FIELDS, self, "indexHeader")


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One index entry: a key's hash, where the message is, seconds since the file's begin
    timestamp, and the previous entry with the same slot (0: none)."""

    key_hash: int
    phy_offset: int
    time_diff: int
    prev_index: int

    def __post_init__(self) -> None:
        _fits(_INDEX_ENTRY_FIELDS, self, "indexEntry")


# The index layouts are fixed-size integers, so construct can only fail on their length; the
# ``struct`` paths below check the length the same way first and then unpack in one call. The
# construct functions (``*_construct``) stay the reference: a differential test holds each fast
# path to its declaration, for valid values, out-of-range values and arbitrary bytes.
_HASH_SLOT_FIELDS = struct.Struct(">i")
#: ``pack_into(buffer, offset, ...)`` of an index entry's four fields (key hash, physical offset,
#: time difference, previous entry) and of a hash slot, written in place: for a writer whose values
#: are in range by construction (a value out of range is a ``struct.error``, not an EncodeError)
pack_index_entry_into = _INDEX_ENTRY_FIELDS.pack_into
pack_hash_slot_into = _HASH_SLOT_FIELDS.pack_into


def _need(data: Buffer, offset: int, size: int, what: str) -> None:
    if offset < 0 or len(data) - offset < size:
        raise Truncated(f"{what} needs {size} bytes at {offset}", offset=max(offset, 0), field=what,
                        expected=size, found=max(len(data) - offset, 0))


def _parse(fmt: Struct, data: Buffer, offset: int, size: int, what: str) -> Any:
    _need(data, offset, size, what)
    try:
        return fmt.parse(bytes(data[offset:offset + size]))
    except ConstructError as exc:  # pragma: no cover - fixed-size integers always parse
        raise DecodeError(f"{what}: {exc}", offset=offset, field=what) from None


def _build(fmt: Struct, values: dict[str, int], what: str) -> bytes:
    try:
        return bytes(fmt.build(values))
    except ConstructError as exc:
        raise EncodeError(f"{what}: {exc}", field=what) from None


def _pack(layout: struct.Struct, what: str, *values: int) -> bytes:
    try:
        return layout.pack(*values)
    except struct.error:
        raise EncodeError(f"{what}: a field does not fit its width: {values!r}", field=what) from None


def decode_index_header(data: Buffer, offset: int = 0) -> IndexHeader:
    """The 40-byte header at ``offset`` (``IndexHeader.load``)."""
    _need(data, offset, INDEX_HEADER_SIZE, "indexHeader")
    return IndexHeader(*_INDEX_HEADER_FIELDS.unpack_from(data, offset))


def decode_index_header_construct(data: Buffer, offset: int = 0) -> IndexHeader:
    """The same as :func:`decode_index_header`, through :data:`INDEX_HEADER`."""
    c = _parse(INDEX_HEADER, data, offset, INDEX_HEADER_SIZE, "indexHeader")
    return IndexHeader(c.begin_timestamp, c.end_timestamp, c.begin_phy_offset,
                       c.end_phy_offset, c.hash_slot_count, c.index_count)


def encode_index_header(h: IndexHeader) -> bytes:
    return encode_index_header_fields(h.begin_timestamp, h.end_timestamp, h.begin_phy_offset,
                                      h.end_phy_offset, h.hash_slot_count, h.index_count)


def encode_index_header_fields(begin_timestamp: int, end_timestamp: int, begin_phy_offset: int,
                               end_phy_offset: int, hash_slot_count: int, index_count: int) -> bytes:
    """:func:`encode_index_header` from plain ints, for a writer that keeps the header in its
    own variables (no :class:`IndexHeader` is built); a value out of range is an EncodeError."""
    return _pack(_INDEX_HEADER_FIELDS, "indexHeader", begin_timestamp, end_timestamp,
                 begin_phy_offset, end_phy_offset, hash_slot_count, index_count)


def encode_index_header_construct(h: IndexHeader) -> bytes:
    """The same as :func:`encode_index_header`, through :data:`INDEX_HEADER`."""
    return _build(INDEX_HEADER, {
        "begin_timestamp": h.begin_timestamp, "end_timestamp": h.end_timestamp,
        "begin_phy_offset": h.begin_phy_offset, "end_phy_offset": h.end_phy_offset,
        "hash_slot_count": h.hash_slot_count, "index_count": h.index_count}, "indexHeader")


def decode_index_entry(data: Buffer, offset: int = 0) -> IndexEntry:
    """The 20-byte entry at ``offset``."""
    return IndexEntry(*decode_index_entry_fields(data, offset))


def decode_index_entry_fields(data: Buffer, offset: int = 0) -> tuple[int, int, int, int]:
    """:func:`decode_index_entry` as plain ints: (key hash, physical offset, time difference,
    previous entry), for chain walks that look at many entries."""
    if offset < 0 or len(data) - offset < INDEX_ENTRY_SIZE:
        _need(data, offset, INDEX_ENTRY_SIZE, "indexEntry")
    return _INDEX_ENTRY_FIELDS.unpack_from(data, offset)


def decode_index_entry_construct(data: Buffer, offset: int = 0) -> IndexEntry:
    """The same as :func:`decode_index_entry`, through :data:`INDEX_ENTRY`."""
    c = _parse(INDEX_ENTRY, data, offset, INDEX_ENTRY_SIZE, "indexEntry")
    return IndexEntry(c.key_hash, c.phy_offset, c.time_diff, c.prev_index)


def encode_index_entry(e: IndexEntry) -> bytes:
    return encode_index_entry_fields(e.key_hash, e.phy_offset, e.time_diff, e.prev_index)


def encode_index_entry_fields(key_hash: int, phy_offset: int, time_diff: int, prev_index: int) -> bytes:
    """:func:`encode_index_entry` from plain ints (no :class:`IndexEntry` is built); a value out
    of range is an EncodeError."""
    try:
        return _INDEX_ENTRY_FIELDS.pack(key_hash, phy_offset, time_diff, prev_index)
    except struct.error:
        raise EncodeError(f"indexEntry: a field does not fit its width: "
                          f"{(key_hash, phy_offset, time_diff, prev_index)!r}", field="indexEntry") from None


def encode_index_entry_construct(e: IndexEntry) -> bytes:
    """The same as :func:`encode_index_entry`, through :data:`INDEX_ENTRY`."""
    return _build(INDEX_ENTRY, {"key_hash": e.key_hash, "phy_offset": e.phy_offset,
                                "time_diff": e.time_diff, "prev_index": e.prev_index}, "indexEntry")


def decode_hash_slot(data: Buffer, offset: int = 0) -> int:
    """The slot at ``offset``: the number of the newest entry of its chain (0: empty)."""
    if offset < 0 or len(data) - offset < INDEX_HASH_SLOT_SIZE:
        _need(data, offset, INDEX_HASH_SLOT_SIZE, "hashSlot")
    slot: int = _HASH_SLOT_FIELDS.unpack_from(data, offset)[0]
    return slot


def decode_hash_slot_construct(data: Buffer, offset: int = 0) -> int:
    """The same as :func:`decode_hash_slot`, through :data:`INDEX_HASH_SLOT`."""
    c = _parse(INDEX_HASH_SLOT, data, offset, INDEX_HASH_SLOT_SIZE, "hashSlot")
    return int(c.index)


def encode_hash_slot(index: int) -> bytes:
    try:
        return _HASH_SLOT_FIELDS.pack(index)
    except struct.error:
        raise EncodeError(f"hashSlot: {index!r} does not fit an int32", field="hashSlot") from None


def encode_hash_slot_construct(index: int) -> bytes:
    """The same as :func:`encode_hash_slot`, through :data:`INDEX_HASH_SLOT`."""
    return _build(INDEX_HASH_SLOT, {"index": index}, "hashSlot")


def index_key(topic: str, key: str) -> str:
    """``IndexService.buildKey``: what is hashed for a KEYS word or a UNIQ_KEY."""
    return f"{topic}#{key}"


def index_key_hash(key: str) -> int:
    """``IndexFile.indexKeyHashMethod``: ``Math.abs(key.hashCode())``, 0 for ``Integer.MIN_VALUE``."""
    h = abs(java_string_hash(key))
    return 0 if h > 0x7FFFFFFF else h


def index_file_size(hash_slot_num: int = MAX_HASH_SLOT_NUM, index_num: int = MAX_INDEX_NUM) -> int:
    """An index file's length (420,000,040 bytes with the defaults)."""
    return INDEX_HEADER_SIZE + hash_slot_num * INDEX_HASH_SLOT_SIZE + index_num * INDEX_ENTRY_SIZE


def hash_slot_position(key_hash: int, hash_slot_num: int = MAX_HASH_SLOT_NUM) -> int:
    """Byte position of the slot a key hash falls in."""
    return INDEX_HEADER_SIZE + (key_hash % hash_slot_num) * INDEX_HASH_SLOT_SIZE


def index_entry_position(index: int, hash_slot_num: int = MAX_HASH_SLOT_NUM) -> int:
    """Byte position of entry number ``index``."""
    return INDEX_HEADER_SIZE + hash_slot_num * INDEX_HASH_SLOT_SIZE + index * INDEX_ENTRY_SIZE


def index_file_name(timestamp_ms: int, tz: tzinfo | None = None) -> str:
    """``UtilAll.timeMillisToHumanString``: ``yyyyMMddHHmmssSSS`` in ``tz`` (``None``: local)."""
    dt = datetime.fromtimestamp(timestamp_ms // 1000, tz)
    return dt.strftime("%Y%m%d%H%M%S") + f"{timestamp_ms % 1000:03d}"


def new_index_header(end_phy_offset: int = 0, end_timestamp: int = 0) -> IndexHeader:
    """The header of a new index file that follows one ending at these values (``new IndexFile``)."""
    return IndexHeader(begin_timestamp=max(end_timestamp, 0), end_timestamp=max(end_timestamp, 0),
                       begin_phy_offset=max(end_phy_offset, 0), end_phy_offset=max(end_phy_offset, 0))


def index_put_key(buf: bytearray | memoryview, key: str, phy_offset: int, store_timestamp: int, *,
                  hash_slot_num: int = MAX_HASH_SLOT_NUM, index_num: int = MAX_INDEX_NUM) -> bool:
    """Add ``key`` to the index file held in the writable ``buf``, as ``IndexFile.putKey`` does;
    ``False`` when the file is full. The header in ``buf`` is updated too."""
    if len(buf) < index_file_size(hash_slot_num, index_num):
        raise EncodeError(f"an index file of {hash_slot_num} slots and {index_num} entries needs "
                          f"{index_file_size(hash_slot_num, index_num)} bytes, the buffer has {len(buf)}",
                          field="index")
    h = decode_index_header(buf)
    count = h.index_count if h.index_count > 0 else 1
    if count >= index_num:
        return False
    key_hash = index_key_hash(key)
    slot_pos = hash_slot_position(key_hash, hash_slot_num)
    slot_value = decode_hash_slot(buf, slot_pos)
    if slot_value <= 0 or slot_value > count:
        slot_value = 0
    if h.begin_timestamp <= 0:
        time_diff = 0
    else:
        # a negative difference clamps to 0 however the division rounds it
        time_diff = min(max((store_timestamp - h.begin_timestamp) // 1000, 0), 0x7FFFFFFF)
    pos = index_entry_position(count, hash_slot_num)
    buf[pos:pos + INDEX_ENTRY_SIZE] = encode_index_entry_fields(key_hash, phy_offset, time_diff, slot_value)
    buf[slot_pos:slot_pos + INDEX_HASH_SLOT_SIZE] = encode_hash_slot(count)
    begin_phy, begin_ts = h.begin_phy_offset, h.begin_timestamp
    if count <= 1:
        begin_phy, begin_ts = phy_offset, store_timestamp
    buf[0:INDEX_HEADER_SIZE] = encode_index_header_fields(
        begin_ts, store_timestamp, begin_phy, phy_offset,
        h.hash_slot_count + (1 if slot_value == 0 else 0), count + 1)
    return True


def index_select_phy_offsets(buf: Buffer, key: str, begin: int, end: int,
                             max_num: int = 64, *, hash_slot_num: int = MAX_HASH_SLOT_NUM) -> list[int]:
    """Physical offsets of messages stored with ``key`` between ``begin`` and ``end`` (ms), newest
    first, as ``IndexFile.selectPhyOffset`` finds them."""
    h = decode_index_header(buf)
    count = h.index_count if h.index_count > 0 else 1
    key_hash = index_key_hash(key)
    slot_value = decode_hash_slot(buf, hash_slot_position(key_hash, hash_slot_num))
    out: list[int] = []
    if slot_value <= 0 or slot_value > count or count <= 1:
        return out
    nxt = slot_value
    while len(out) < max_num:
        hash_read, phy, time_diff, prev = decode_index_entry_fields(
            buf, index_entry_position(nxt, hash_slot_num))
        if time_diff < 0:
            break
        time_read = h.begin_timestamp + time_diff * 1000
        if hash_read == key_hash and begin <= time_read <= end:
            out.append(phy)
        if prev <= 0 or prev > count or prev == nxt or time_read < begin:
            break
        nxt = prev
    return out
