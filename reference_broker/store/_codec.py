# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The store's one door to the byte layouts of :mod:`wire.message` and :mod:`wire.store`.

Every byte the store writes or reads goes through these calls; this module only adapts the
codecs' shapes to the store's needs (plain tuples in loops, a scan item that says whether a stop
is "wait for more bytes" or "damage").
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass, replace

from wire.message import (
    BATCH_ENTRY_OVERHEAD,
    MAX_PROPERTIES_LENGTH,
    HostPort,
    MessageConst,
    MessageSysFlag,
    RecordHead,
    StoredMessage,
    TransactionType,
    body_crc,
    create_offset_msg_id,
    decode_properties,
    decode_stored_message,
    encode_properties,
    encode_record_fields,
    encode_stored_message,
    java_string_hash,
    scan_record_heads,
    stored_message_size,
    transaction_type,
)
from wire.store import (
    CQ_STORE_UNIT_SIZE,
    END_FILE_MIN_BLANK_LENGTH,
    INDEX_ENTRY_SIZE,
    INDEX_HASH_SLOT_SIZE,
    INDEX_HEADER_SIZE,
    OS_PAGE_SIZE,
    Blank,
    Problem,
    ProblemKind,
    StoreCheckpoint,
    decode_checkpoint,
    decode_cq_entry,
    decode_hash_slot,
    decode_index_entry,
    decode_index_entry_fields,
    decode_index_header,
    encode_blank,
    encode_checkpoint,
    encode_cq_entries_fields,
    encode_cq_entry_fields,
    encode_hash_slot,
    encode_index_entry,
    encode_index_entry_fields,
    encode_index_header,
    encode_index_header_fields,
    index_file_name,
    index_key_hash,
    iter_cq_entry_fields,
    pack_hash_slot_into,
    pack_index_entry_into,
    scan_commitlog,
    tags_code,
)

__all__ = [
    "BATCH_ENTRY_OVERHEAD",
    "CHECKPOINT_FILE_SIZE",
    "CQ_UNIT_SIZE",
    "END_FILE_MIN_BLANK_LENGTH",
    "HASH_SLOT_SIZE",
    "INDEX_ENTRY_SIZE",
    "INDEX_HEADER_SIZE",
    "KEY_SEPARATOR",
    "MAX_PROPERTIES_LENGTH",
    "HostPort",
    "MessageConst",
    "MessageSysFlag",
    "ProblemKind",
    "RecordHead",
    "ScanItem",
    "StoredMessage",
    "TransactionType",
    "body_crc",
    "create_offset_msg_id",
    "decode_checkpoint",
    "decode_index_entry",
    "decode_index_header",
    "decode_index_slot",
    "decode_properties",
    "decode_stored_message",
    "encode_blank",
    "encode_checkpoint",
    "encode_cq_unit",
    "encode_cq_units",
    "encode_index_entry",
    "encode_index_header",
    "encode_index_slot",
    "encode_properties",
    "encode_record_fields",
    "encode_stored_message",
    "index_file_name",
    "index_key_hash",
    "pack_hash_slot_into",
    "pack_index_entry_into",
    "iter_cq_units",
    "iter_cq_values",
    "java_string_hash",
    "scan",
    "scan_record_heads",
    "stored_message_size",
    "tags_code",
    "transaction_type",
]

CQ_UNIT_SIZE = CQ_STORE_UNIT_SIZE
HASH_SLOT_SIZE = INDEX_HASH_SLOT_SIZE
CHECKPOINT_FILE_SIZE = OS_PAGE_SIZE
KEY_SEPARATOR = MessageConst.KEY_SEPARATOR

Buffer = bytes | bytearray | memoryview | mmap.mmap

_CQ_CHUNK_UNITS = 4096
_CQ_FIRST_CHUNK_UNITS = 48


# ---------------------------------------------------------------------- ConsumeQueue units
encode_cq_unit = encode_cq_entry_fields
encode_cq_units = encode_cq_entries_fields


def iter_cq_values(buf: Buffer, start: int, end: int) -> Iterator[tuple[int, int, int]]:
    """(CommitLog offset, size, tagsCode) of the whole units in ``buf[start:end]``, read in
    growing chunks so a caller that stops early (a pull of 32) copies and decodes little."""
    end -= (end - start) % CQ_UNIT_SIZE
    pos = start
    chunk = _CQ_FIRST_CHUNK_UNITS
    while pos < end:
        stop = min(end, pos + chunk * CQ_UNIT_SIZE)
        yield from iter_cq_entry_fields(buf[pos:stop])
        pos = stop
        chunk = min(chunk * 4, _CQ_CHUNK_UNITS)


def iter_cq_units(buf: Buffer, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(position, CommitLog offset, size, tagsCode) of the whole units in ``buf[start:end]``."""
    at = start
    for offset, size, tags in iter_cq_values(buf, start, end):
        yield at, offset, size, tags
        at += CQ_UNIT_SIZE


def decode_cq_unit(buf: Buffer, pos: int) -> tuple[int, int, int]:
    e = decode_cq_entry(buf[pos:pos + CQ_UNIT_SIZE])
    return e.commit_log_offset, e.size, e.tags_code


# ---------------------------------------------------------------------- CommitLog scan
@dataclass(slots=True)
class ScanItem:
    """One step of a CommitLog walk.

    ``kind`` is ``"record"`` (``message`` set, ``size`` its length), ``"blank"`` (the file ends
    here) or ``"end"``: the walk stops at ``offset`` because of ``reason``. An end is
    ``incomplete`` when the bytes simply run out there (a torn or not-yet-replicated record, or
    a zero tail); ``size`` then holds the record's length when its head was readable.
    """

    kind: str
    offset: int
    size: int = 0
    message: StoredMessage | None = None
    reason: str = ""
    incomplete: bool = False
    problem: ProblemKind | None = None


def scan(buf: Buffer, base_offset: int, *, verify: bool) -> Iterator[ScanItem]:
    """:func:`wire.store.scan_commitlog` over ``buf`` (whose first byte is at ``base_offset``)."""
    n = len(buf)
    for offset, item in scan_commitlog(buf, base_offset, verify_crc=verify):
        if isinstance(item, StoredMessage):
            yield ScanItem("record", offset, item.total_size, item)
        elif isinstance(item, Blank):
            yield ScanItem("blank", offset, item.size)
        else:
            assert isinstance(item, Problem)
            left = base_offset + n - offset
            incomplete = False
            need = 0
            if item.kind is ProblemKind.TRUNCATED:
                incomplete = True
                exp = item.error.expected if item.error is not None else None
                need = exp if isinstance(exp, int) and exp > 0 else 0
            elif item.kind is ProblemKind.ZERO_TAIL and left < END_FILE_MIN_BLANK_LENGTH:
                # a few bytes of a record head that happen to be zeros
                incomplete = True
            yield ScanItem("end", offset, need, reason=f"{item.kind.value}: {item.reason}",
                           incomplete=incomplete, problem=item.kind)


# ---------------------------------------------------------------------- checkpoint
def decode_checkpoint_times(buf: Buffer) -> StoreCheckpoint:
    return decode_checkpoint(bytes(buf[:CHECKPOINT_FILE_SIZE]))


def encode_checkpoint_times(base: StoreCheckpoint, physic: int, logics: int, index: int) -> bytes:
    return encode_checkpoint(replace(base, physic_msg_timestamp=physic, logics_msg_timestamp=logics,
                                     index_msg_timestamp=index))


# ---------------------------------------------------------------------- index
decode_index_slot = decode_hash_slot
encode_index_slot = encode_hash_slot
encode_index_header_values = encode_index_header_fields
decode_index_entry_values = decode_index_entry_fields
encode_index_entry_values = encode_index_entry_fields


def is_rolled_back(sys_flag: int) -> bool:
    return transaction_type(sys_flag) is TransactionType.TRANSACTION_ROLLBACK_TYPE


def goes_to_consume_queue(sys_flag: int) -> bool:
    """``CommitLogDispatcherBuildConsumeQueue``: ordinary and committed messages only."""
    return transaction_type(sys_flag) in (TransactionType.TRANSACTION_NOT_TYPE,
                                          TransactionType.TRANSACTION_COMMIT_TYPE)
