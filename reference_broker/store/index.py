# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The message index: ``topic#key`` → CommitLog offsets, in RocketMQ's index file layout.

Theory of operation
-------------------
``index/<yyyyMMddHHmmssSSS>`` files (``IndexService``/``IndexFile``/``IndexHeader``) hold a
40-byte header, ``maxHashSlotNum`` int32 slots and ``maxIndexNum`` 20-byte entries. Entry 0 is
never used (the header's index count starts at 1). Putting a key writes the next entry (key hash,
CommitLog offset, seconds since the file's first entry, the slot's previous head) and points the
key's slot at it, so each slot heads a chain from the newest entry back. A file that is full is
followed by a new one, whose begin offset/time continue from the old one's end.

Each dispatched message puts ``topic#UNIQ_KEY`` and ``topic#k`` for every space-separated KEYS
entry (``IndexService.buildIndex``); rolled-back transaction messages are not indexed. A query
walks the key's chain in every file whose time range meets the query's, newest file first
(``queryOffset``/``selectPhyOffset``).

After a crash the entries that point at or past the recovered end of the CommitLog are taken back
from the tail: walking them newest first and restoring each one's slot to its previous head
undoes them exactly, after which the records beyond are indexed again by the dispatcher.
"""

from __future__ import annotations

import logging
import os
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import _codec
from .mapped_file import MappedFile, remove_interrupted_creation
from .types import StoreError

__all__ = ["IndexFile", "IndexService"]

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
        (``index_key_hash``); the entries are written in one copy. Returns the position in
        ``items`` after the last key put: short of ``len(items)`` when the file filled up."""
        h = self.h
        n = first = h.index_count
        stop = min(len(items), start + self.index_num - n)
        if stop <= start:
            return start
        table = self._table
        slots = self._slots
        slot_num = self.slot_num
        mm = self.mf.mm
        pack_entry = _codec.encode_index_entry_values
        pack_slot = _codec.encode_index_slot
        get_slot = self._get_slot
        begin_ts = h.begin_timestamp
        new_slots = 0
        parts = []
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
            parts.append(pack_entry(key_hash, phy, time_diff, slot_value))
            mm[slot_pos:slot_pos + _SLOT] = pack_slot(n)
            if table is not None:
                table[slot] = n
            else:
                slots[slot_pos] = n
            if n <= 1:
                h.begin_phy_offset = phy
                h.begin_timestamp = begin_ts = ts
            n += 1
        pos = self._entries_at + first * _ENTRY
        mm[pos:pos + (n - first) * _ENTRY] = b"".join(parts)
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


class IndexService:
    """The index files of a store (``IndexService``)."""

    def __init__(self, directory: Path, slot_num: int, index_num: int) -> None:
        self.directory = directory
        self.slot_num = slot_num
        self.index_num = index_num
        self.files: list[IndexFile] = []
        #: set when an index file could not be created; the index stops growing
        self.failed = False

    def load(self) -> None:
        if not self.directory.is_dir():
            return
        size = _H + self.slot_num * _SLOT + self.index_num * _ENTRY
        for name in sorted(os.listdir(self.directory)):
            path = self.directory / name
            if not path.is_file() or remove_interrupted_creation(path):
                continue
            if path.stat().st_size != size:
                raise StoreError(f"{path}: {path.stat().st_size} bytes, but maxHashSlotNum/maxIndexNum "
                                 f"give {size}; index files must match the configuration")
            self.files.append(IndexFile(path, self.slot_num, self.index_num, create=False))

    # ------------------------------------------------------------------ write
    def _create(self, prev: IndexFile | None) -> IndexFile:
        self.directory.mkdir(parents=True, exist_ok=True)
        now = int(time.time() * 1000)
        path = self.directory / _codec.index_file_name(now)
        while path.exists() or any(f.name == path.name for f in self.files):
            now += 1
            path = self.directory / _codec.index_file_name(now)
        f = IndexFile(path, self.slot_num, self.index_num, create=True,
                      end_phy_offset=prev.h.end_phy_offset if prev else 0,
                      end_timestamp=prev.h.end_timestamp if prev else 0)
        self.files.append(f)
        return f

    def _last_or_create(self) -> IndexFile:
        last = self.files[-1] if self.files else None
        if last is not None and not last.is_write_full:
            return last
        return self._roll(last)

    def _roll(self, full: IndexFile | None) -> IndexFile:
        if full is not None:
            full.write_header()
            full.release_table()
        return self._create(full)

    def build_index(self, topic: str, commit_offset: int, store_timestamp: int, keys: str | None,
                    uniq_key: str | None, rolled_back: bool) -> None:
        """Index one dispatched record (``IndexService.buildIndex``): :meth:`build_many` of one;
        a rolled-back transaction message is not indexed."""
        if not rolled_back:
            self.build_many(((topic, commit_offset, store_timestamp, keys, uniq_key),))

    def build_many(self, records: Sequence[tuple[str, int, int, str | None, str | None]]) -> None:
        """:meth:`build_index` of each ``(topic, CommitLog offset, store timestamp, KEYS,
        UNIQ_KEY)`` in CommitLog order (rolled-back records left out): the keys are hashed
        first, then put a file at a time (:meth:`IndexFile.put_hashed`)."""
        if self.failed or not records:
            return
        try:
            f = self._last_or_create()
        except (OSError, StoreError) as exc:
            log.error("cannot create an index file: %s; the index stops here", exc)
            self.failed = True
            return
        end = f.h.end_phy_offset
        indexed = f.h.index_count > 1
        key_hash = _codec.index_key_hash
        sep = _codec.KEY_SEPARATOR
        items: list[tuple[int, int, int]] = []
        for topic, offset, ts, keys, uniq in records:
            # Java skips offsets below the file's end; an offset equal to it was indexed already
            # when the file has entries (a record dispatched again after recovery)
            if offset < end or (indexed and offset <= end):
                continue
            if uniq:
                items.append((key_hash(f"{topic}#{uniq}"), offset, ts))
            if keys:
                for key in keys.split(sep):
                    if key:
                        items.append((key_hash(f"{topic}#{key}"), offset, ts))
        done = 0
        while done < len(items):
            done = f.put_hashed(items, done)
            if done < len(items):
                try:
                    f = self._roll(f)
                except (OSError, StoreError) as exc:
                    log.error("cannot create an index file: %s; the index stops here", exc)
                    self.failed = True
                    return

    # ------------------------------------------------------------------ read
    def query_offset(self, topic: str, key: str, max_num: int, begin: int,
                     end: int) -> tuple[list[int], int, int]:
        """(offsets, index last update timestamp, index last update offset) (``queryOffset``)."""
        out: list[int] = []
        last_ts = last_phy = 0
        for i in range(len(self.files) - 1, -1, -1):
            f = self.files[i]
            if i == len(self.files) - 1:
                last_ts, last_phy = f.h.end_timestamp, f.h.end_phy_offset
            if f.is_time_matched(begin, end):
                f.select(out, f"{topic}#{key}", max_num, begin, end)
            if f.h.begin_timestamp < begin or len(out) >= max_num:
                break
        return out, last_ts, last_phy

    # ------------------------------------------------------------------ maintenance
    def truncate(self, phy_offset: int, store_time_of: Callable[[int], int] | None = None) -> None:
        """Forget every entry that points at or after ``phy_offset``."""
        while self.files:
            f = self.files[-1]
            f.truncate(phy_offset, store_time_of)
            if f.h.index_count > 1 or len(self.files) == 1:
                break
            prev = self.files[-2]
            if prev.h.end_phy_offset < phy_offset:
                break
            f.destroy()
            self.files.pop()

    def delete_expired(self, offset: int) -> int:
        """Delete the files (never the last) that end before ``offset`` (``deleteExpiredFile``)."""
        if not self.files or self.files[0].h.end_phy_offset >= offset:
            return 0
        gone = []
        for f in self.files[:-1]:
            if f.h.end_phy_offset < offset:
                gone.append(f)
            else:
                break
        for f in gone:
            f.destroy()
        self.files = self.files[len(gone):]
        return len(gone)

    def dirty_files(self) -> list[IndexFile]:
        """The files written since the last flush, their headers brought up to date."""
        out = [f for f in self.files if f.dirty]
        for f in out:
            f.write_header()
        return out

    def adopt_tail(self, store_time_of: Callable[[int], int] | None = None) -> int:
        """:meth:`IndexFile.adopt_tail` for the newest file (the only one written lazily)."""
        return self.files[-1].adopt_tail(store_time_of) if self.files else 0

    def last_end_timestamp(self) -> int:
        return self.files[-1].h.end_timestamp if self.files else 0

    def close(self) -> None:
        for f in self.files:
            f.close()

    def destroy(self) -> None:
        for f in self.files:
            f.destroy()
        self.files = []
