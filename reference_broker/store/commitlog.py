# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The CommitLog: every record of every topic, appended in one sequence of fixed-size files.

Theory of operation
-------------------
Records are appended at the end of the last file. When a record (or a whole batch, which is never
split) does not fit with ``END_FILE_MIN_BLANK_LENGTH`` (8) bytes to spare, the file is closed with
a BLANK record (``int32 remaining`` + BLANK magic; the rest of the file is left as it is) and the
write goes to a new file named by its start offset (``DefaultAppendMessageCallback.doAppend``).
So every full file ends with a BLANK of at least 8 bytes, and a reader that meets one moves to
the next file.

The walker reads records in windows (a few MiB copied out of the mapping at a time), from a record
boundary to the first thing that is not a whole valid record: it is shared by recovery (which
cuts the log there), the dispatcher (which waits there for more bytes) and the tests.

A replica appends the master's bytes verbatim (chunks cut anywhere); those bytes include the
BLANKs and the padding after them, so a slave's files are byte-identical to the master's.

Small appends (a put's records) keep a :class:`~.prefault.Prefaulter` (when the store runs one) a
few MiB ahead of the write position, so the pages they copy into are already mapped; appends of
16 KiB or more (a replica's transfers) are written with ``pwrite``, which fills fresh pages of the
page cache without faulting them in first, so they need no prefaulting (it would only zero the
pages twice).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from . import _codec
from ._codec import ScanItem, StoredMessage
from .mapped_file import MappedFile, MappedFileQueue
from .prefault import Prefaulter
from .types import StoreError

__all__ = ["CommitLog", "END_FILE_MIN_BLANK_LENGTH"]

log = logging.getLogger("reference_broker.store")

END_FILE_MIN_BLANK_LENGTH = _codec.END_FILE_MIN_BLANK_LENGTH
_WINDOW = 4 * 1024 * 1024
#: appends at least this long are written with ``pwrite`` (:meth:`.MappedFile.append_through_file`)
_THROUGH_FILE = 16 * 1024
#: what a read of one record of unknown size copies first
_HEAD = 1 << 16


class CommitLog:
    """The CommitLog files and the operations on their bytes."""

    def __init__(self, directory: Path, file_size: int, *, window: int = _WINDOW) -> None:
        self.file_size = file_size
        self.files = MappedFileQueue(directory, file_size)
        #: how many bytes a walk copies out of the mapping at a time
        self.window = window
        #: the file the last read found: a pull reads many records of one file in a row
        self._read_file: MappedFile | None = None
        #: faults pages in ahead of the appends (set by the store while it runs)
        self.prefaulter: Prefaulter | None = None

    def load(self) -> None:
        self.files.load()

    @property
    def max_offset(self) -> int:
        """Offset just past the last byte written (``getMaxOffset``); 0 when empty."""
        return self.files.max_offset

    @property
    def min_offset(self) -> int:
        """Start of the first file (``getMinOffset``); -1 when there is no file."""
        return self.files.min_offset

    # ------------------------------------------------------------------ append
    def reserve(self, length: int) -> MappedFile:
        """The file the next ``length`` bytes go to, closing the current one with a BLANK when
        they do not fit (``doAppend``'s END_OF_FILE branch)."""
        if length + END_FILE_MIN_BLANK_LENGTH > self.file_size:
            raise StoreError(f"{length} bytes can never fit a {self.file_size}-byte CommitLog file")
        f = self.files.last_or_create(0)
        if length + END_FILE_MIN_BLANK_LENGTH > f.remaining:
            f.write(f.wrote_position, _codec.encode_blank(f.remaining))
            f.wrote_position = f.size
            f = self.files.last_or_create(0)
        return f

    def append(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """Write ``data`` at ``offset``, which must be the current end: the one write of CommitLog
        bytes, for a put's records (which :meth:`reserve` made room for in the last file) and a
        replica's bytes alike (cut anywhere, so they may run into the next file)."""
        files = self.files.files
        n = len(data)
        if files:
            f = files[-1]
            pos = f.wrote_position
            if f.file_from_offset + pos == offset and pos + n <= f.size:
                if n >= _THROUGH_FILE:
                    f.append_through_file(data)
                    return
                if pos + n > f.prefault_mark and self.prefaulter is not None:
                    self.prefaulter.ahead_of(f, pos)
                f.append(data)
                return
        end = self.max_offset
        if files and offset != end:
            raise StoreError(f"CommitLog data at {offset}, but the CommitLog ends at {end}")
        view = memoryview(data)
        at = offset
        while view:
            f = self.files.last_or_create(at)
            if f.end_offset != at:
                raise StoreError(f"CommitLog data at {at}, but the CommitLog file {f.path.name} "
                                 f"continues at {f.end_offset}")
            n = min(len(view), f.remaining)
            if n >= _THROUGH_FILE:
                f.append_through_file(view[:n])
            else:
                if f.wrote_position + n > f.prefault_mark and self.prefaulter is not None:
                    self.prefaulter.ahead_of(f, f.wrote_position)
                f.append(view[:n])
            view = view[n:]
            at += n

    # ------------------------------------------------------------------ read
    def read(self, offset: int, size: int) -> bytes | None:
        """``size`` bytes at ``offset`` within one file, or None when they are not all there
        (``getMessage``/``selectMappedBuffer``)."""
        f = self.file_at(offset)
        if f is None:
            return None
        pos = offset - f.file_from_offset
        if size < 0 or pos + size > f.wrote_position:
            return None
        return f.mm[pos:pos + size]

    def file_at(self, offset: int) -> MappedFile | None:
        """The file holding ``offset`` (the last one found is tried first: a pull reads many
        records of one file in a row)."""
        f = self._read_file
        # a file leaves the queue only destroyed (closed), so an open cached file is current
        if f is None or f.closed or not f.file_from_offset <= offset < f.file_from_offset + self.file_size:
            f = self.files.find(offset)
            if f is None:
                return None
            self._read_file = f
        return f

    def read_data(self, offset: int, max_bytes: int) -> bytes:
        """The bytes from ``offset`` to the end of the data in its file, at most ``max_bytes``
        (``getData``); empty when nothing is there."""
        f = self.files.find(offset)
        if f is None:
            return b""
        pos = offset - f.file_from_offset
        n = min(max_bytes, f.wrote_position - pos)
        return f.read(pos, n) if n > 0 else b""

    def record_at(self, offset: int, size: int | None = None) -> tuple[bytes, StoredMessage] | None:
        """The whole valid record that starts at ``offset`` (of ``size`` bytes, when given): its
        bytes and the message decoded from them; None when no such record is there."""
        if offset < 0:
            return None
        if size is None:
            head = self.read_data(offset, _HEAD)
            if not head:
                return None
            first = next(iter(_codec.scan(head, offset, verify=False)), None)
            if first is None:
                return None
            if first.kind == "record" and first.message is not None:
                return head[:first.size], first.message
            if first.kind != "end" or not first.incomplete or first.size <= 0:
                return None
            size = first.size
        data = self.read(offset, size)
        if data is None:
            return None
        item = next(iter(_codec.scan(data, offset, verify=False)), None)
        if item is None or item.kind != "record" or item.size != size or item.message is None:
            return None
        return data, item.message

    def store_time_at(self, offset: int) -> int:
        """The store timestamp of the record at ``offset``; -1 when there is none."""
        found = self.record_at(offset)
        return found[1].store_timestamp if found is not None else -1

    def data_span(self, offset: int, max_bytes: int) -> tuple[int, int, int] | None:
        """:meth:`read_data` as ``(file descriptor, position in the file, length)``, for
        ``sendfile``; None when nothing is there. The descriptor is the file's own: good until the
        file is closed (expired or truncated), so look it up again after every wait."""
        f = self.files.find(offset)
        if f is None or f.closed:
            return None
        pos = offset - f.file_from_offset
        n = min(max_bytes, f.wrote_position - pos)
        return (f.fd, pos, n) if n > 0 else None

    def roll_next_file(self, offset: int) -> int:
        """Start of the file after the one holding ``offset`` (``rollNextFile``)."""
        return offset + self.file_size - offset % self.file_size

    # ------------------------------------------------------------------ walk
    def walk(self, offset: int, *, verify: bool) -> Iterator[ScanItem]:
        """Records, BLANKs and finally the reason to stop, from the record boundary ``offset``
        to the end of the written data.

        Stops after the first item of kind ``end`` (damage, a zero tail, or a record not yet
        whole) or when the data ends on a record boundary (no ``end`` item then).
        """
        window = self.window
        while True:
            f = self.files.find(offset)
            if f is None:
                return
            data_end = f.wrote_position
            pos = offset - f.file_from_offset
            if pos >= data_end:
                return
            take = min(window, data_end - pos)
            buf = f.read(pos, take)
            window_cut = pos + take < data_end
            next_offset = None
            for item in _codec.scan(buf, offset, verify=verify):
                if item.kind == "record":
                    yield item
                    offset = item.offset + item.size
                elif item.kind == "blank":
                    yield item
                    next_offset = f.file_from_offset + f.size
                    break
                else:
                    need = max(item.size, END_FILE_MIN_BLANK_LENGTH)
                    fits = item.offset + need <= f.file_from_offset + data_end
                    if item.incomplete and window_cut and fits:
                        # the window cut the record: read again from it, wide enough
                        window = max(window, item.size)
                        next_offset = item.offset
                        break
                    yield item
                    return
            if next_offset is not None:
                offset = next_offset
            elif not window_cut:
                # this file's data ends on a record boundary without a BLANK: nothing follows
                return

    def last_record_end(self, start_offset: int, *, verify: bool) -> tuple[int, ScanItem | None]:
        """Walk from ``start_offset`` to the end of the valid data; returns the offset just past
        the last whole valid record (or BLANK) and the ``end`` item that stopped the walk."""
        end = start_offset
        stop: ScanItem | None = None
        for item in self.walk(start_offset, verify=verify):
            if item.kind == "record":
                end = item.offset + item.size
            elif item.kind == "blank":
                end = self.roll_next_file(item.offset)
            else:
                stop = item
        return end, stop

    def close(self) -> None:
        self.files.close()
