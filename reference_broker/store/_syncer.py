# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The store's worker threads, and its disk-sync threads: blocking syncs run off the event loop,
answered on it.

A :class:`JobThread` does the jobs put to it, in order, until it is stopped (the syncers and the
:class:`~.prefault.Prefaulter` are such threads). A :class:`SyncThread` is a lighter
``loop.run_in_executor`` for one dedicated thread: a call is one queue put, and its answer is one
``call_soon_threadsafe`` back (no ``concurrent.futures.Future`` chained to an asyncio one, no
executor bookkeeping under its locks): a future (:meth:`SyncThread.run`), or a plain callback
(:meth:`SyncThread.submit`: no future and no task at all). The group commit asks for a sync every
few hundred microseconds, so this is on the SYNC_FLUSH send path.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["JobThread", "SyncThread"]

log = logging.getLogger("reference_broker.store")

#: what to call on the thread, and what to call on the loop with its outcome (None: it returned)
_Job = tuple[Callable[[], object], Callable[[BaseException | None], None]]
J = TypeVar("J")


def _settle(fut: asyncio.Future[None], exc: BaseException | None) -> None:
    if fut.done():
        return
    if exc is None:
        fut.set_result(None)
    else:
        fut.set_exception(exc)


class JobThread(Generic[J]):
    """A daemon thread that does the jobs put to it, in order, until it is stopped."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[J | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Finish the jobs asked for and end the thread."""
        t = self._thread
        if t is not None:
            self._thread = None
            self._jobs.put(None)
            t.join()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            self._do(job)

    def _do(self, job: J) -> None:
        raise NotImplementedError


class SyncThread(JobThread[_Job]):
    """One thread that runs blocking calls in order, each answered by a future of the loop."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._thread is None:
            self._loop = loop
            self._start_thread()

    def run(self, fn: Callable[[], object]) -> asyncio.Future[None]:
        """Run ``fn()`` on the thread; the future ends with its outcome."""
        loop = self._loop
        if loop is None or self._thread is None:
            raise RuntimeError(f"{self.name} is not running")
        fut = loop.create_future()
        self._jobs.put((fn, functools.partial(_settle, fut)))
        return fut

    def submit(self, fn: Callable[[], object], done: Callable[[BaseException | None], None]) -> None:
        """Run ``fn()`` on the thread, then ``done(exception or None)`` on the loop."""
        if self._loop is None or self._thread is None:
            raise RuntimeError(f"{self.name} is not running")
        self._jobs.put((fn, done))

    def _do(self, job: _Job) -> None:
        loop = self._loop
        assert loop is not None
        fn, done = job
        exc: BaseException | None = None
        try:
            fn()
        except BaseException as e:  # handed to the caller, as an executor would
            exc = e
        try:
            loop.call_soon_threadsafe(done, exc)
        except RuntimeError:  # the loop is closed: nobody waits any more
            log.debug("%s: the event loop closed before a sync ended", self.name)
