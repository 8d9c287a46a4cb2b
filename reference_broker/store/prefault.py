# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Pre-faulting: the pages of the CommitLog's mapped files are faulted in ahead of its writer.

Theory of operation
-------------------
The first write to each page of a sparse mapped file takes a page fault (a page allocated,
zeroed and, on ext4, its block reserved) on the writing thread: on a small VM that costs more
than the copy of the record itself. A :class:`Prefaulter` thread faults the pages in ahead of
the CommitLog's write position (a few MiB ahead, in chunks), with
``madvise(MADV_POPULATE_WRITE)`` called through ctypes so that it runs without the GIL while
the event loop goes on. Java warms its mapped files for the same reason (``warmMappedFile``,
and the pre-allocation of the next file by ``AllocateMappedFileService``), though by writing
zeros; populating leaves the bytes as they are, so it may race the writer without harm. Where
the kernel refuses the advice (before Linux 5.14) the thread gives ``MADV_WILLNEED`` instead,
which is as harmless but does less; touching the pages by writing to them would race the
writer's own writes.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import mmap
import os
from collections.abc import Callable
from typing import cast

from ..periodic import log_failure
from ._syncer import JobThread
from .mapped_file import MappedFile

__all__ = ["MADV_POPULATE_WRITE", "Prefaulter"]

log = logging.getLogger("reference_broker.store")

#: ``MADV_POPULATE_WRITE`` (Linux 5.14): fault pages in writable, as a write would, without
#: changing a byte; Python 3.11's mmap module has no constant for it
MADV_POPULATE_WRITE = 23
_PAGE = mmap.PAGESIZE
#: errnos of a kernel (or file system) that does not know the advice
_REFUSED = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM})


def _libc_madvise() -> Callable[[int, int, int], int] | None:
    """libc's ``madvise``, called through ctypes, which lets go of the GIL for the call."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):  # pragma: no cover - no libc with madvise
        return None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    fn.restype = ctypes.c_int
    return cast("Callable[[int, int, int], int]", fn)


class Prefaulter(JobThread[tuple[MappedFile, int, int]]):
    """A thread that faults the pages of mapped files in ahead of their writer (see the module
    notes). The writer calls :meth:`ahead_of` when its position passes the file's
    ``prefault_mark``; the thread then populates the next stretch, up to ``ahead`` bytes past
    that position, ``chunk`` bytes per call."""

    def __init__(self, ahead: int, chunk: int = 1 << 20, *, advice: int = MADV_POPULATE_WRITE) -> None:
        super().__init__("store-prefault")
        self.ahead = max(0, ahead)
        self.chunk = max(_PAGE, chunk - chunk % _PAGE)
        #: the advice tried first
        self.advice = advice
        #: set once the kernel refused ``advice``: the thread gives MADV_WILLNEED from then on
        self.fallback = False
        #: bytes populated (or advised, after a fallback) so far
        self.done_bytes = 0
        self._madvise = _libc_madvise()

    def start(self) -> None:
        if self.ahead > 0:
            self._start_thread()

    def ahead_of(self, f: MappedFile, position: int) -> None:
        """Ask for the pages of ``f`` from ``position`` to ``ahead`` bytes past it that were not
        asked for yet, and move the file's mark halfway into that stretch."""
        if self._thread is None:
            return
        end = min(f.size, position + self.ahead)
        start = max(position, f.prefault_requested)
        f.prefault_mark = position + self.ahead // 2 if end < f.size else f.size
        if end > start:
            f.prefault_requested = end
            self._jobs.put((f, start, end))

    def _do(self, job: tuple[MappedFile, int, int]) -> None:
        f, start, end = job
        pos = start - start % _PAGE
        while pos < end:
            n = min(self.chunk, end - pos)
            with f.prefault_lock:
                if f.closed:
                    return
                try:
                    self._advise(f, pos, n)
                except Exception as exc:  # the writer does without: it faults the pages itself
                    log_failure(log, f"{f.path.name}: pre-faulting {n} bytes at {pos}", exc, (OSError,))
                    return
            pos += n

    def _advise(self, f: MappedFile, pos: int, n: int) -> None:
        fn = self._madvise
        if fn is not None and not self.fallback:
            # the buffer export ends with the temporary ctypes object, before the call, so the
            # mapping can be closed again (the file's prefault lock keeps it open meanwhile)
            base = ctypes.addressof(ctypes.c_char.from_buffer(f.mm))
            if fn(base + pos, n, self.advice) == 0:
                self.done_bytes += n
                return
            err = ctypes.get_errno()
            if err not in _REFUSED:
                log.warning("%s: madvise(%d) of %d bytes at %d: %s", f.path.name, self.advice, n, pos,
                            os.strerror(err))
                return
            log.info("madvise(%d) refused (%s): pre-faulting falls back to MADV_WILLNEED", self.advice,
                     os.strerror(err))
            self.fallback = True
        f.mm.madvise(mmap.MADV_WILLNEED, pos, n)
        self.done_bytes += n
