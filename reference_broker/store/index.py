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
from collections.abc import Callable, Sequence
from pathlib import Path

from . import _codec
from .index_file import IndexFile
from .mapped_file import remove_interrupted_creation
from .types import StoreError

__all__ = ["IndexFile", "IndexService"]

log = logging.getLogger("reference_broker.store")


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
        size = (_codec.INDEX_HEADER_SIZE + self.slot_num * _codec.HASH_SLOT_SIZE
                + self.index_num * _codec.INDEX_ENTRY_SIZE)
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
