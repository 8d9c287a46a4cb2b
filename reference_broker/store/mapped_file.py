# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Fixed-size memory-mapped files and the queue of them that makes up one log.

Theory of operation
-------------------
Like RocketMQ (``MappedFile``, ``MappedFileQueue``), a log is a directory of files of one fixed
size, each named by the 20-digit decimal offset of its first byte. A file is created at full size
(sparse, ``ftruncate``) and mapped shared: appends are memory copies on the event loop (large
ones, a replica's transfers, ``pwrite`` calls on the descriptor: the same page cache, without a
page fault per page), and the kernel page cache holds them from that moment, so a killed process
loses nothing it wrote; only a machine crash loses what was not flushed. Flushing is
``fdatasync`` of the file descriptor, run off the event loop by the store's flushers;
``fdatasync`` also writes back pages dirtied through the mapping.

A new file is created under a temporary name, sized, and only then renamed to its offset name, so
a process killed while creating it leaves no short file behind (which loading would refuse, as
Java does); loading deletes such leftovers.

Each file keeps a ``wrote_position`` (bytes appended) and a ``flushed_position``. A file that is
loaded from disk starts with both at its size, as Java's ``MappedFileQueue.doLoad`` does; recovery
then moves the last file's positions back to where its valid data ends.

Closing or deleting a file takes the file's I/O lock, which a flusher holds while it syncs, so a
descriptor is never closed under a running ``fdatasync``.

Pre-faulting the pages ahead of the CommitLog's writer is :mod:`.prefault`'s.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import mmap
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from .types import StoreError

__all__ = ["CREATING_SUFFIX", "MappedFile", "MappedFileQueue", "file_name_of", "remove_interrupted_creation"]

log = logging.getLogger("reference_broker.store")

_ZERO_CHUNK = 1 << 20
#: a new file has this suffix until it has its full size
CREATING_SUFFIX = ".creating"


def file_name_of(offset: int) -> str:
    """``UtilAll.offset2FileName``: the offset as 20 decimal digits."""
    return f"{offset:020d}"


def remove_interrupted_creation(path: Path) -> bool:
    """Delete ``path`` if it is a file whose creation a killed process left unfinished."""
    if not path.name.endswith(CREATING_SUFFIX):
        return False
    log.warning("%s: removing a file whose creation was interrupted", path)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return True


def _sync(fd: int) -> None:
    if hasattr(os, "fdatasync"):
        os.fdatasync(fd)
    else:  # pragma: no cover - macOS has no fdatasync
        os.fsync(fd)


class MappedFile:
    """One file of a log: ``size`` bytes mapped shared, starting at log offset ``file_from_offset``."""

    def __init__(self, path: Path, size: int, *, create: bool, file_from_offset: int | None = None) -> None:
        self.path = path
        self.size = size
        self.file_from_offset = int(path.name) if file_from_offset is None else file_from_offset
        opened = path.with_name(path.name + CREATING_SUFFIX) if create else path
        if create:
            try:
                opened.unlink()
            except FileNotFoundError:
                pass
        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
        try:
            fd = os.open(opened, flags, 0o644)
        except OSError as exc:
            raise StoreError(f"{opened}: cannot open: {exc.strerror}") from exc
        try:
            if create:
                # the file gets its name only once it has its size: a process killed in between
                # leaves a *.creating file, never a short file that the next start would refuse
                os.ftruncate(fd, size)
                os.replace(opened, path)
            else:
                actual = os.fstat(fd).st_size
                if actual != size:
                    # mirrors MappedFileQueue.doLoad: a file of another size is refused
                    raise StoreError(
                        f"{path}: {actual} bytes, but the mapped file size is {size}; "
                        "RocketMQ refuses to load such a file (check mappedFileSize* in the config)")
            self.mm = mmap.mmap(fd, size)
        except BaseException:
            os.close(fd)
            if create:
                with contextlib.suppress(OSError):
                    opened.unlink()
            raise
        self.fd = fd
        self.wrote_position = 0 if create else size
        self.flushed_position = 0 if create else size
        #: the store timestamp of the last record appended (CommitLog files; the checkpoint uses it)
        self.store_timestamp = 0
        #: ms of the last append in this process (ConsumeQueue files; search by time uses it)
        self.last_append_ms = 0
        self.first_create_in_queue = False
        self.io_lock = threading.Lock()
        #: held while a prefaulter works on the mapping; closing takes it too
        self.prefault_lock = threading.Lock()
        #: the position up to which pre-faulting has been asked for
        self.prefault_requested = 0
        #: past this write position the next stretch is asked for (see :class:`.prefault.Prefaulter`)
        self.prefault_mark = 0
        self.closed = False

    def __repr__(self) -> str:
        return f"MappedFile({self.path.name}, wrote={self.wrote_position})"

    # ------------------------------------------------------------------ positions
    @property
    def is_full(self) -> bool:
        return self.wrote_position >= self.size

    @property
    def remaining(self) -> int:
        return self.size - self.wrote_position

    @property
    def end_offset(self) -> int:
        """Log offset just past the last byte written."""
        return self.file_from_offset + self.wrote_position

    def last_modified_ms(self) -> int:
        try:
            return int(os.stat(self.path).st_mtime * 1000)
        except OSError:
            return 0

    # ------------------------------------------------------------------ data
    def write(self, position: int, data: bytes | bytearray | memoryview) -> None:
        """Copy ``data`` into the mapping at ``position`` (no position bookkeeping)."""
        end = position + len(data)
        if position < 0 or end > self.size:
            raise StoreError(f"{self.path.name}: write of {len(data)} bytes at {position} overruns the file")
        self.mm[position:end] = data

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Append at ``wrote_position``; returns the position written at."""
        pos = self.wrote_position
        self.write(pos, data)
        self.wrote_position = pos + len(data)
        return pos

    def append_through_file(self, data: bytes | bytearray | memoryview) -> int:
        """:meth:`append` by ``pwrite`` on the descriptor instead of a copy into the mapping.

        The bytes land in the same page cache the mapping shows, so readers of the mapping see
        them and the flushers' ``fdatasync`` writes them back; but the kernel fills fresh pages
        in one pass instead of taking a page fault (a page zeroed, then copied over) for every
        4 KiB of a sparse file: for large appends (a replica's transfers) that is several times
        faster, and the copy runs without the GIL."""
        pos = self.wrote_position
        n = len(data)
        if pos + n > self.size:
            raise StoreError(f"{self.path.name}: write of {n} bytes at {pos} overruns the file")
        view = memoryview(data)
        done = 0
        while done < n:
            try:
                done += os.pwrite(self.fd, view[done:], pos + done)
            except OSError as exc:
                raise StoreError(f"{self.path.name}: cannot write {n - done} bytes at {pos + done}: "
                                 f"{exc.strerror}") from exc
        self.wrote_position = pos + n
        return pos

    def read(self, position: int, size: int) -> bytes:
        return self.mm[position:position + size]

    def view(self, position: int, size: int) -> memoryview:
        """A read-only view; release it before the file may be closed."""
        return memoryview(self.mm)[position:position + size].toreadonly()

    def sync(self) -> None:
        """``fdatasync`` the file; safe to call from a flusher thread."""
        with self.io_lock:
            if not self.closed:
                _sync(self.fd)

    def zero_from(self, position: int, until: int | None = None) -> int:
        """Zero every non-zero byte in ``[position, until)``; returns how many bytes were cleared.

        Used to cut a torn tail so the next append starts on clean bytes and a later scan stops
        there. Holes of the sparse file are skipped without reading them.
        """
        end = self.size if until is None else min(until, self.size)
        cleared = 0
        for start, stop in self._data_extents(position, end):
            pos = start
            while pos < stop:
                n = min(_ZERO_CHUNK, stop - pos)
                chunk = self.mm[pos:pos + n]
                if chunk.count(0) != n:
                    self.mm[pos:pos + n] = bytes(n)
                    cleared += n
                pos += n
        return cleared

    def _data_extents(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        if start >= end:
            return
        seek_data = getattr(os, "SEEK_DATA", None)
        seek_hole = getattr(os, "SEEK_HOLE", None)
        if seek_data is None or seek_hole is None:  # pragma: no cover - not Linux
            yield start, end
            return
        pos = start
        while pos < end:
            try:
                data = os.lseek(self.fd, pos, seek_data)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # no data after pos
                    return
                yield pos, end  # the file system cannot tell: look at every byte
                return
            if data >= end:
                return
            try:
                hole = os.lseek(self.fd, data, seek_hole)
            except OSError:
                hole = end
            yield data, min(hole, end)
            pos = hole

    # ------------------------------------------------------------------ life cycle
    def close(self) -> None:
        with self.io_lock, self.prefault_lock:
            if self.closed:
                return
            self.closed = True
            try:
                self.mm.close()
            except BufferError:
                # views of the mapping are still alive (a pull answer being written, an HA
                # transfer): the mapping stays until the last of them is released, when the
                # mmap object goes and unmaps it; the file may be deleted meanwhile
                log.debug("%s: closed with views of its mapping alive; unmapped when they go", self.path.name)
            finally:
                os.close(self.fd)

    def destroy(self) -> None:
        """Close and delete the file (``MappedFile.destroy``)."""
        self.close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


class MappedFileQueue:
    """The files of one log, in offset order (``MappedFileQueue``)."""

    def __init__(self, directory: Path, file_size: int) -> None:
        self.directory = directory
        self.file_size = file_size
        self.files: list[MappedFile] = []
        #: log offset up to which the data is known to be on disk
        self.flushed_where = 0

    def load(self) -> None:
        """Open every file of the directory (``MappedFileQueue.load``)."""
        if not self.directory.is_dir():
            return
        names = sorted(n for n in os.listdir(self.directory))
        for name in names:
            if remove_interrupted_creation(self.directory / name):
                continue
            if len(name) != 20 or not name.isdigit():
                log.warning("%s: ignoring %r, not a 20-digit offset file name", self.directory, name)
                continue
            f = MappedFile(self.directory / name, self.file_size, create=False)
            if self.files and f.file_from_offset - self.files[-1].file_from_offset != self.file_size:
                log.error("%s: files %s and %s are not adjacent", self.directory,
                          self.files[-1].path.name, name)
            self.files.append(f)

    # ------------------------------------------------------------------ lookups
    def first(self) -> MappedFile | None:
        return self.files[0] if self.files else None

    def last(self) -> MappedFile | None:
        return self.files[-1] if self.files else None

    @property
    def min_offset(self) -> int:
        """First offset held, or -1 without files (``getMinOffset``)."""
        return self.files[0].file_from_offset if self.files else -1

    @property
    def max_offset(self) -> int:
        """Offset just past the data, or 0 without files (``getMaxOffset``)."""
        return self.files[-1].end_offset if self.files else 0

    def find(self, offset: int) -> MappedFile | None:
        """The file holding ``offset`` (``findMappedFileByOffset``)."""
        files = self.files
        if not files:
            return None
        first = files[0].file_from_offset
        if offset < first or offset >= files[-1].file_from_offset + self.file_size:
            return None
        i = (offset - first) // self.file_size
        if i < len(files):
            f = files[i]
            if f.file_from_offset <= offset < f.file_from_offset + self.file_size:
                return f
        for f in files:
            if f.file_from_offset <= offset < f.file_from_offset + self.file_size:
                return f
        return None

    def files_between(self, start: int, end: int) -> list[MappedFile]:
        """The files holding any byte of ``[start, end)``."""
        return [f for f in self.files
                if f.file_from_offset < end and start < f.file_from_offset + self.file_size]

    # ------------------------------------------------------------------ changes
    def create(self, start_offset: int) -> MappedFile:
        """Create the file that starts at ``start_offset`` (which must be file-aligned)."""
        if start_offset % self.file_size:
            raise StoreError(f"{self.directory}: {start_offset} is not a multiple of {self.file_size}")
        self.directory.mkdir(parents=True, exist_ok=True)
        f = MappedFile(self.directory / file_name_of(start_offset), self.file_size, create=True)
        f.first_create_in_queue = not self.files
        self.files.append(f)
        return f

    def last_or_create(self, start_offset: int = 0) -> MappedFile:
        """``getLastMappedFile(startOffset, true)``: the last file, or a new one when there is
        none (at ``start_offset`` rounded down to a file) or the last one is full."""
        last = self.last()
        if last is None:
            return self.create(start_offset - start_offset % self.file_size)
        if last.is_full:
            return self.create(last.file_from_offset + self.file_size)
        return last

    def truncate_dirty(self, offset: int) -> list[MappedFile]:
        """``truncateDirtyFiles``: drop the files wholly after ``offset``, set the positions of
        the file holding it; returns the dropped files (already destroyed)."""
        dropped = []
        for f in list(self.files):
            if f.file_from_offset + self.file_size > offset:
                if offset >= f.file_from_offset:
                    pos = offset - f.file_from_offset
                    f.wrote_position = pos
                    f.flushed_position = min(f.flushed_position, pos)
                else:
                    dropped.append(f)
        self.remove(dropped)
        self.flushed_where = min(self.flushed_where, offset)
        return dropped

    def delete_last(self) -> None:
        last = self.last()
        if last is not None:
            self.remove([last])

    def remove(self, files: Iterable[MappedFile]) -> None:
        """Destroy ``files`` and forget them."""
        gone = list(files)
        for f in gone:
            f.destroy()
        ids = {id(f) for f in gone}
        self.files = [f for f in self.files if id(f) not in ids]

    def close(self) -> None:
        for f in self.files:
            f.close()

    def destroy(self) -> None:
        """Delete every file and the directory (``MappedFileQueue.destroy``)."""
        self.remove(list(self.files))
        self.flushed_where = 0
        try:
            self.directory.rmdir()
        except OSError:
            pass
