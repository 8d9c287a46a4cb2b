# Licensed under the Apache License, Version 2.0. See LICENSE.
"""One index file (``IndexFile``/``IndexHeader``): its header, hash slots and entries, the chain
walk of a query, and taking entries back from the tail after a crash. :mod:`.index` (the
``IndexService``) keeps the files of a store and decides which one a key goes to.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import _codec
from .mapped_file import MappedFile

__all__ = ["IndexFile"]

log = logging.getLogger("reference_broker.store")

_H = _codec.INDEX_HEADER_SIZE
_SLOT = _codec.HASH_SLOT_SIZE
_ENTRY = _codec.INDEX_ENTRY_SIZE
_INT_MAX = 0x7FFFFFFF
#: slot values kept in memory per file before the cache starts over
_SLOT_CACHE_MAX = 500_000


@dataclass
class _Header:
    begin_timestamp: int = 0
    end_timestamp: int = 0
    begin_phy_offset: int = 0
    end_phy_offset: int = 0
    hash_slot_count: int = 0
    index_count: int = 1


class IndexFile:
    """One index file (``IndexFile``)."""

    def __init__(self, path: Path, slot_num: int, index_num: int, *, create: bool,
                 end_phy_offset: int = 0, end_timestamp: int = 0) -> None:
        self.slot_num = slot_num
        self.index_num = index_num
        size = _H + slot_num * _SLOT + index_num * _ENTRY
        self.mf = MappedFile(path, size, create=create, file_from_offset=0)
        self.h = _Header()
        if create:
            # IndexFile's constructor starts the new file where the previous one ended
            if end_phy_offset > 0:
                self.h.begin_phy_offset = self.h.end_phy_offset = end_phy_offset
            if end_timestamp > 0:
                self.h.begin_timestamp = self.h.end_timestamp = end_timestamp
            self._write_header()
        else:
            v = _codec.decode_index_header(self.mf.read(0, _H))
            self.h = _Header(v.begin_timestamp, v.end_timestamp, v.begin_phy_offset, v.end_phy_offset,
                             v.hash_slot_count, v.index_count if v.index_count > 0 else 1)
        self.dirty = create
        self.header_stale = False
        # Every slot of a file this process created is known (they start at 0 and only we write
        # them), so the file being filled keeps them all in memory instead of decoding each one;
        # other files cache the slots they read.
        self._table: array[int] | None = array("i", bytes(4 * slot_num)) if create else None
        self._slots: dict[int, int] = {}
        self._entries_at = _H + slot_num * _SLOT

    def release_table(self) -> None:
        """Forget the in-memory slot table (the file is full and another one takes the writes)."""
        self._table = None

    def _get_slot(self, pos: int) -> int:
        if self._table is not None:
            return self._table[(pos - _H) // _SLOT]
        v = self._slots.get(pos)
        if v is None:
            if len(self._slots) >= _SLOT_CACHE_MAX:
                self._slots.clear()
            v = self._slots[pos] = _codec.decode_index_slot(self.mf.mm, pos)
        return v

    def _set_slot(self, pos: int, value: int) -> None:
        self.mf.write(pos, _codec.encode_index_slot(value))
        if self._table is not None:
            self._table[(pos - _H) // _SLOT] = value
        else:
            self._slots[pos] = value

    @property
    def name(self) -> str:
        return self.mf.path.name

    def _write_header(self) -> None:
        self.header_stale = False
        h = self.h
        # a file with no entry keeps 0 on disk, as IndexHeader writes the count only on increment
        count = h.index_count if h.index_count > 1 else 0
        self.mf.write(0, _codec.encode_index_header_values(
            h.begin_timestamp, h.end_timestamp, h.begin_phy_offset, h.end_phy_offset, h.hash_slot_count,
            count))

    @property
    def is_write_full(self) -> bool:
        return self.h.index_count >= self.index_num

    @property
    def entry_count(self) -> int:
        return self.h.index_count - 1

    def _slot_pos(self, key_hash: int) -> int:
        return _H + (key_hash % self.slot_num) * _SLOT

    def _entry_pos(self, n: int) -> int:
        return self._entries_at + n * _ENTRY

    def put_key(self, key: str, phy_offset: int, store_timestamp: int, *, write_header: bool = True) -> bool:
        """``IndexFile.putKey``; False when the file is full.

        Java writes the header with every key. With ``write_header=False`` it is written later
        (:meth:`write_header`: at a flush, a roll-over, closing); a crash in between leaves
        entries past the count on disk, which :meth:`adopt_tail` takes back in at start-up.
        """
        h = self.h
        n = h.index_count
        if n >= self.index_num:
            return False
        key_hash = _codec.index_key_hash(key)
        slot = key_hash % self.slot_num
        slot_pos = _H + slot * _SLOT
        table = self._table
        slot_value = table[slot] if table is not None else self._get_slot(slot_pos)
        if slot_value <= 0 or slot_value > n:
            slot_value = 0
        if h.begin_timestamp <= 0:
            time_diff = 0
        else:
            d = store_timestamp - h.begin_timestamp
            # Java's long division truncates toward zero; negatives are clamped to 0 anyway
            time_diff = min(d // 1000, _INT_MAX) if d >= 0 else 0
        # both positions lie inside the mapping: n < index_num and slot < slot_num
        mm = self.mf.mm
        pos = self._entries_at + n * _ENTRY
        mm[pos:pos + _ENTRY] = _codec.encode_index_entry_values(key_hash, phy_offset, time_diff, slot_value)
        mm[slot_pos:slot_pos + _SLOT] = _codec.encode_index_slot(n)
        if table is not None:
            table[slot] = n
        else:
            self._slots[slot_pos] = n
        if n <= 1:
            h.begin_phy_offset = phy_offset
            h.begin_timestamp = store_timestamp
        if slot_value == 0:
            h.hash_slot_count += 1
        h.index_count = n + 1
        h.end_phy_offset = phy_offset
        h.end_timestamp = store_timestamp
        if write_header:
            self._write_header()
        else:
            self.header_stale = True
        self.dirty = True
        return True

    def put_hashed(self, items: Sequence[tuple[int, int, int]], start: int = 0) -> int:
        """:meth:`put_key` with ``write_header=False`` for each ``(key hash, CommitLog offset,
        store timestamp)`` from ``items[start]`` on, the keys already hashed
        (``index_key_hash``); each entry and slot is packed into the mapping in place, the entry
        before the slot that points at it. Returns the position in ``items`` after the last key
        put: short of ``len(items)`` when the file filled up."""
        h = self.h
        n = first = h.index_count
        stop = min(len(items), start + self.index_num - n)
        if stop <= start:
            return start
        table = self._table
        slots = self._slots
        slot_num = self.slot_num
        mm = self.mf.mm
        # in place, as put_key writes them: every value is in range (a key hash is an int32 >= 0,
        # the time difference clamped, slot and entry numbers below index_num)
        pack_entry = _codec.pack_index_entry_into
        pack_slot = _codec.pack_hash_slot_into
        get_slot = self._get_slot
        begin_ts = h.begin_timestamp
        new_slots = 0
        pos = self._entries_at + first * _ENTRY
        phy = ts = 0
        for key_hash, phy, ts in items[start:stop]:
            slot = key_hash % slot_num
            slot_pos = _H + slot * _SLOT
            slot_value = table[slot] if table is not None else get_slot(slot_pos)
            if slot_value <= 0 or slot_value > n:
                slot_value = 0
                new_slots += 1
            if begin_ts <= 0:
                time_diff = 0
            else:
                d = ts - begin_ts
                time_diff = min(d // 1000, _INT_MAX) if d >= 0 else 0
            pack_entry(mm, pos, key_hash, phy, time_diff, slot_value)
            pos += _ENTRY
            pack_slot(mm, slot_pos, n)
            if table is not None:
                table[slot] = n
            else:
                slots[slot_pos] = n
            if n <= 1:
                h.begin_phy_offset = phy
                h.begin_timestamp = begin_ts = ts
            n += 1
        h.hash_slot_count += new_slots
        h.index_count = n
        h.end_phy_offset = phy
        h.end_timestamp = ts
        self.header_stale = True
        self.dirty = True
        return stop

    def write_header(self) -> None:
        """Write the header if puts changed it since it was last written."""
        if self.header_stale:
            self._write_header()

    def adopt_tail(self, store_time_of: Callable[[int], int] | None = None) -> int:
        """Count in the entries written after the header was last written (a crash between the
        two); returns how many. They follow the last counted entry in CommitLog order."""
        h = self.h
        adopted = 0
        while h.index_count < self.index_num:
            n = h.index_count
            key_hash, phy, time_diff, prev = _codec.decode_index_entry_values(self.mf.mm, self._entry_pos(n))
            if key_hash == phy == time_diff == prev == 0:
                break
            if phy < (h.end_phy_offset if n > 1 else 0) or not 0 <= prev < n or time_diff < 0:
                break
            if n <= 1:
                exact = store_time_of(phy) if store_time_of is not None else -1
                h.begin_phy_offset = phy
                h.begin_timestamp = exact if exact > 0 else h.begin_timestamp
            if prev == 0:
                h.hash_slot_count += 1
            h.index_count += 1
            h.end_phy_offset = phy
            exact = store_time_of(phy) if store_time_of is not None else -1
            h.end_timestamp = exact if exact > 0 else h.begin_timestamp + time_diff * 1000
            adopted += 1
        if adopted:
            self._slots.clear()
            self._write_header()
            self.dirty = True
        return adopted

    def is_time_matched(self, begin: int, end: int) -> bool:
        h = self.h
        return ((begin < h.begin_timestamp and end > h.end_timestamp)
                or h.begin_timestamp <= begin <= h.end_timestamp
                or h.begin_timestamp <= end <= h.end_timestamp)

    def select(self, out: list[int], key: str, max_num: int, begin: int, end: int) -> None:
        """Append to ``out`` the offsets of ``key`` stored within [begin, end] (``selectPhyOffset``)."""
        h = self.h
        key_hash = _codec.index_key_hash(key)
        slot_value = self._get_slot(self._slot_pos(key_hash))
        if slot_value <= 0 or slot_value > h.index_count or h.index_count <= 1:
            return
        n = slot_value
        while len(out) < max_num:
            hash_read, phy, time_diff, prev = _codec.decode_index_entry_values(self.mf.mm, self._entry_pos(n))
            if time_diff < 0:
                break
            time_read = h.begin_timestamp + time_diff * 1000
            if hash_read == key_hash and begin <= time_read <= end:
                out.append(phy)
            if prev <= 0 or prev > h.index_count or prev == n or time_read < begin:
                break
            n = prev

    def truncate(self, phy_offset: int, store_time_of: Callable[[int], int] | None = None) -> int:
        """Take back the newest entries that point at or after ``phy_offset``; returns how many.
        ``store_time_of`` gives the exact store time of a record for the new end timestamp."""
        h = self.h
        removed = 0
        while h.index_count > 1:
            n = h.index_count - 1
            pos = self._entry_pos(n)
            key_hash, phy, _, prev = _codec.decode_index_entry_values(self.mf.mm, pos)
            if phy < phy_offset:
                break
            slot_pos = self._slot_pos(key_hash)
            if self._get_slot(slot_pos) == n:
                self._set_slot(slot_pos, prev)
                if prev == 0:
                    h.hash_slot_count = max(0, h.hash_slot_count - 1)
            self.mf.write(pos, bytes(_ENTRY))
            h.index_count -= 1
            removed += 1
        if removed:
            if h.index_count > 1:
                last = self._entry_pos(h.index_count - 1)
                _, phy, time_diff, _ = _codec.decode_index_entry_values(self.mf.mm, last)
                h.end_phy_offset = phy
                exact = store_time_of(phy) if store_time_of is not None else -1
                h.end_timestamp = exact if exact > 0 else h.begin_timestamp + time_diff * 1000
            else:
                h.begin_phy_offset = h.end_phy_offset = 0
                h.begin_timestamp = h.end_timestamp = 0
            self._write_header()
            self.dirty = True
        return removed

    def sync(self) -> None:
        self.mf.sync()

    def close(self) -> None:
        if not self.mf.closed:
            self.write_header()
        self.mf.close()

    def destroy(self) -> None:
        self.mf.destroy()
