# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Long polling (``PullRequestHoldService``): PULL_MESSAGE requests parked until data comes.

A pull that finds nothing and carries the SUSPEND flag is parked here under its (topic, queue)
together with a ``retry`` function that runs the pull again without suspending (Java's
``executeRequestWhenWakeup``, which calls ``processRequest`` with ``brokerAllowSuspend=false``).

* The store's dispatch listener calls :meth:`PullRequestHoldService.notify` for every record that
  reaches a consume queue. When the queue's new max offset passes a parked request's offset, the
  request is retried on the next loop iteration (so one put of many records wakes each waiter
  once). ``retry(final=False)`` answers ``None`` when there is still nothing to hand out (Java's
  ``isMatchedByConsumeQueue`` check: a message whose tag the consumer does not want leaves the
  request parked); the request stays parked then.
* When the suspend timeout passes, ``retry(final=True)`` runs and its answer (usually
  PULL_NOT_FOUND) is sent whatever it is.

The parked request is registered synchronously by :meth:`suspend`, before the handler returns,
so a message stored between the empty read and the parking cannot be missed. A parked request
whose connection closes is cancelled by the connection and leaves the table.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from wire import RemotingCommand

__all__ = ["PullRequestHoldService", "Retry"]

log = logging.getLogger("reference_broker.broker")

#: ``retry(final)`` → the response to send, or None to keep waiting (only when not final)
Retry = Callable[[bool], RemotingCommand | None]


@dataclass(eq=False)
class _Parked:
    offset: int
    retry: Retry
    future: asyncio.Future[RemotingCommand | None]
    timer: asyncio.TimerHandle | None = field(default=None)


class PullRequestHoldService:
    """Parked pulls by (topic, queue id); see the module docstring."""

    def __init__(self) -> None:
        self.parked: dict[tuple[str, int], list[_Parked]] = {}
        self._due: set[tuple[str, int]] = set()
        self._scheduled = False

    def __len__(self) -> int:
        return sum(len(v) for v in self.parked.values())

    def suspend(
        self, topic: str, queue_id: int, offset: int, timeout_ms: int, retry: Retry
    ) -> Awaitable[RemotingCommand | None]:
        """Park a pull; the awaitable gives its eventual response."""
        loop = asyncio.get_running_loop()
        p = _Parked(offset, retry, loop.create_future())
        key = (topic, queue_id)
        self.parked.setdefault(key, []).append(p)
        p.timer = loop.call_later(max(0, timeout_ms) / 1000.0, self._expire, key, p)
        return self._wait(key, p)

    async def _wait(self, key: tuple[str, int], p: _Parked) -> RemotingCommand | None:
        try:
            return await p.future
        finally:
            self._drop(key, p)

    def _drop(self, key: tuple[str, int], p: _Parked) -> None:
        if p.timer is not None:
            p.timer.cancel()
        waiting = self.parked.get(key)
        if waiting is not None:
            try:
                waiting.remove(p)
            except ValueError:
                pass
            if not waiting:
                del self.parked[key]

    def notify(self, topic: str, queue_id: int, queue_offset: int, store_timestamp: int) -> None:
        """The store's dispatch listener: a record reached ``queue_offset`` of a queue."""
        key = (topic, queue_id)
        waiting = self.parked.get(key)
        if not waiting:
            return
        newest = queue_offset + 1
        if any(newest > p.offset for p in waiting):
            self._due.add(key)
            if not self._scheduled:
                self._scheduled = True
                asyncio.get_running_loop().call_soon(self._run_due)

    def wake(self, topic: str, queue_id: int) -> None:
        """Retry every request parked on a queue now (``notifyMessageArriving`` without a
        message: used when a queue changes in a way no record reports, e.g. a topic deletion)."""
        key = (topic, queue_id)
        if key in self.parked:
            self._due.add(key)
            if not self._scheduled:
                self._scheduled = True
                asyncio.get_running_loop().call_soon(self._run_due)

    def _run_due(self) -> None:
        self._scheduled = False
        due, self._due = self._due, set()
        for key in due:
            for p in list(self.parked.get(key, ())):
                if not p.future.done():
                    self._attempt(p, final=False)

    def _expire(self, key: tuple[str, int], p: _Parked) -> None:
        if not p.future.done():
            self._attempt(p, final=True)

    @staticmethod
    def _attempt(p: _Parked, final: bool) -> None:
        try:
            response = p.retry(final)
        except Exception as exc:  # the connection turns it into SYSTEM_ERROR, as for any handler
            p.future.set_exception(exc)
            return
        if response is not None or final:
            p.future.set_result(response)

    def cancel_all(self) -> None:
        """Give every parked request its final answer now (broker shutdown)."""
        for key in list(self.parked):
            for p in list(self.parked.get(key, ())):
                if not p.future.done():
                    self._attempt(p, final=True)
