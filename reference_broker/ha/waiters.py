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


class OffsetWaiters(Generic[S]):
    """A FIFO of futures, each answered ``ok`` once an ack covers its range, or ``expired`` when
    its deadline passes first."""

    def __init__(self, ok: S, expired: S) -> None:
        self._ok = ok
        self._expired = expired
        self._queue: deque[tuple[int, int, float, asyncio.Future[S]]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        #: waiters answered ``ok`` / ``expired`` so far, the number of advances that released any,
        #: and the largest batch one advance released
        self.released = 0
        self.expired = 0
        self.batches = 0
        self.largest_batch = 0

    def __len__(self) -> int:
        return len(self._queue)

    def wait(self, begin: int, end: int, timeout_s: float) -> asyncio.Future[S]:
        """A future answered once an ack covers ``[begin, end)``, or ``expired`` after ``timeout_s``."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[S] = loop.create_future()
        if timeout_s <= 0:
            fut.set_result(self._expired)
            self.expired += 1
            return fut
        deadline = loop.time() + timeout_s
        q = self._queue
        item = (begin, end, deadline, fut)
        if q and (q[-1][1] > end or q[-1][2] > deadline):
            # out of order (a timeout changed at run time): keep the queue sorted
            items = sorted([*q, item], key=lambda w: (w[1], w[2]))
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
        range lies in ``[start, ack]``; returns how many."""
        q = self._queue
        if not q or q[0][1] > ack:
            return 0
        kept = []
        n = 0
        while q and q[0][1] <= ack:
            item = q.popleft()
            fut = item[3]
            if fut.done():
                continue
            if item[0] < start:
                kept.append(item)  # this connection was never sent these bytes
                continue
            fut.set_result(self._ok)
            n += 1
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
            self._timer = loop.call_at(min(w[2] for w in self._queue), self._expire)

    def _expire(self) -> None:
        self._timer = None
        q = self._queue
        if not q:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        keep = [w for w in q if w[2] > now and not w[3].done()]
        for *_, deadline, fut in q:
            if deadline <= now and not fut.done():
                fut.set_result(self._expired)
                self.expired += 1
        q.clear()
        q.extend(keep)
        self._arm(loop)

    def close(self, status: S) -> None:
        """Answer every waiter ``status`` (the service stops)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._queue:
            fut = self._queue.popleft()[3]
            if not fut.done():
                fut.set_result(status)
