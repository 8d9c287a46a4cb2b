# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Puts that wait for their slaves (``HAService.GroupTransferService``), woken by the ack that
covers them.

Each waiter is a put's CommitLog range ``[begin, end)``, a deadline and a future. Puts on one broker
are appended in CommitLog order on one event loop and wait the same ``slaveTimeout``, so the queue is
sorted by offset and by deadline: an ack releases every waiter it covers in one pass from the head,
and one timer, set for the earliest deadline, expires the rest. Nothing polls: Java's service wakes
every 10 ms and re-checks one request at a time on a 1 s wait, so a busy topic could keep a request
from its turn (apache/rocketmq#1244).

An ack covers a put when the acking connection was *sent* the put's bytes: its range starts at or
after where that connection's transfer started, and ends at or before the ack. (Java counts any
report, the first one too, so a client that connects and claims to hold the master's whole log
answers every waiting put SEND_OK.) The queue knows nothing else about acks: the 4.x service
advances it with each slave's acks; a controller-mode service can advance it with the offset all
its in-sync replicas hold.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

__all__ = ["OffsetWaiters"]

S = TypeVar("S")


class _Waiter(Generic[S]):
    """One entry of the queue: a range, its deadline, its future, and how many puts share it."""

    __slots__ = ("begin", "deadline", "end", "future", "puts")

    def __init__(self, begin: int, end: int, deadline: float, future: asyncio.Future[S], puts: int) -> None:
        self.begin = begin
        self.end = end
        self.deadline = deadline
        self.future = future
        self.puts = puts


class OffsetWaiters(Generic[S]):
    """A FIFO of futures, each answered ``ok`` once an ack covers its range, or ``expired`` when
    its deadline passes first. Puts made together (in one pass of the loop, one after the other
    in the CommitLog) may share one future: ``wait(..., join=True)`` extends the last waiter's
    range to cover the new put, and the ack that covers them all answers them with one callback
    each, as the puts of one group commit share its future."""

    def __init__(self, ok: S, expired: S) -> None:
        self._ok = ok
        self._expired = expired
        self._queue: deque[_Waiter[S]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        #: puts answered ``ok`` / ``expired`` so far, the number of advances that released any,
        #: and the largest batch (in puts) one advance released
        self.released = 0
        self.expired = 0
        self.batches = 0
        self.largest_batch = 0

    def __len__(self) -> int:
        return sum(w.puts for w in self._queue)

    def wait(self, begin: int, end: int, timeout_s: float, *, join: bool = False,
             puts: int = 1) -> asyncio.Future[S]:
        """A future answered once an ack covers ``[begin, end)``, or ``expired`` after ``timeout_s``;
        ``puts`` is how many puts share it (a run of puts waits with one range). With ``join``, a
        put that continues the last waiter's range (``begin`` is its end) and is not answered yet
        shares its future and its deadline (the caller joins only puts made together, so the
        deadlines differ by microseconds)."""
        q = self._queue
        if join and q:
            last = q[-1]
            if last.end == begin and end >= begin and not last.future.done():
                last.end = end
                last.puts += puts
                return last.future
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[S] = loop.create_future()
        if timeout_s <= 0:
            fut.set_result(self._expired)
            self.expired += puts
            return fut
        deadline = loop.time() + timeout_s
        item = _Waiter(begin, end, deadline, fut, puts)
        if q and (q[-1].end > end or q[-1].deadline > deadline):
            # out of order (a timeout changed at run time): keep the queue sorted
            items = sorted([*q, item], key=lambda w: (w.end, w.deadline))
            q.clear()
            q.extend(items)
            self._arm(loop)
        else:
            q.append(item)
            if self._timer is None:
                self._timer = loop.call_at(deadline, self._expire)
        return fut

    def advance(self, start: int, ack: int) -> int:
        """A connection whose transfer started at ``start`` acks ``ack``: answer every waiter whose
        range lies in ``[start, ack]``; returns how many puts."""
        q = self._queue
        if not q or q[0].end > ack:
            return 0
        kept = []
        n = 0
        while q and q[0].end <= ack:
            item = q.popleft()
            fut = item.future
            if fut.done():
                continue
            if item.begin < start:
                kept.append(item)  # this connection was never sent these bytes
                continue
            fut.set_result(self._ok)
            n += item.puts
        q.extendleft(reversed(kept))
        if n:
            self.released += n
            self.batches += 1
            self.largest_batch = max(self.largest_batch, n)
            if not q and self._timer is not None:
                self._timer.cancel()
                self._timer = None
        return n

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._queue:
            self._timer = loop.call_at(min(w.deadline for w in self._queue), self._expire)

    def _expire(self) -> None:
        self._timer = None
        q = self._queue
        if not q:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        keep = [w for w in q if w.deadline > now and not w.future.done()]
        for w in q:
            if w.deadline <= now and not w.future.done():
                w.future.set_result(self._expired)
                self.expired += w.puts
        q.clear()
        q.extend(keep)
        self._arm(loop)

    def close(self, status: S) -> None:
        """Answer every waiter ``status`` (the service stops)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._queue:
            fut = self._queue.popleft().future
            if not fut.done():
                fut.set_result(status)
