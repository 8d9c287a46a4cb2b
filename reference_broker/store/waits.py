# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A put's waits on a SYNC_MASTER: the group commit and the slaves, one future for the two.

A waiting put (one at a time, or the waiting puts of a run's segment) waits for two futures it
shares with other puts: its group commit's (:meth:`.Flusher.waiter`, one for the puts a flush
covers) and its slaves' (the replica waiter, one for the puts of a loop pass). Its answer is made
from a future of its own, done when both are. The answers of one connection must leave in the
order of its requests (a producer pipelines its sends and Java answers them in order), so how
that future is set matters: see :func:`with_replicas`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from .types import PutStatus

__all__ = ["with_replicas"]

_PUT_OK = PutStatus.PUT_OK


def with_replicas(flushed: PutStatus | asyncio.Future[PutStatus] | None,
                  replicas: Awaitable[PutStatus]) -> asyncio.Future[PutStatus]:
    """The flush (its status, the group commit's future, or None in ASYNC_FLUSH: no flush to wait
    for) and the slaves waited for together, both waits started with the put(s): one future, done
    when both are, with the slaves' status when it is not PUT_OK, else the flush's
    (``CommitLog.asyncPutMessage`` combines them so).

    The futures waited for are shared (one a group commit, one the puts of a loop pass), so the
    answers keep the order of the puts only if every put's own future is set by the same step:
    here, by the *callback* through which the last of its shared futures reaches it, never by
    looking whether the other one is done. A shared future calls back its puts in the order they
    were made, and the flusher and the slaves' acks release their futures from the head, so the
    puts' futures are set in the order of the puts. (A future can be done while its callbacks
    have not run yet: the flush thread's completion may land just before the callback of an ack
    that released a later put, and that put would answer ahead of the earlier ones still waiting
    for the flush's callbacks: tests/broker/test_sync_master_answer_order.py.) A put whose flush
    is known at once (flushed already) still takes that step, so it does not overtake puts that
    wait for a flush; in ASYNC_FLUSH no put waits for one, and the slaves' future is the answer."""
    slaves = asyncio.ensure_future(replicas)
    if flushed is None:
        return slaves
    both: asyncio.Future[PutStatus] = slaves.get_loop().create_future()
    flush_future: asyncio.Future[PutStatus] | None = None
    flush_status = _PUT_OK
    if isinstance(flushed, asyncio.Future):
        flush_future = flushed
    else:
        flush_status = flushed
    left = 1 if flush_future is None else 2

    def settle(_: object) -> None:
        nonlocal left
        left -= 1
        if left or both.done():
            return
        if slaves.cancelled() or (flush_future is not None and flush_future.cancelled()):
            both.cancel()
            return
        replica_status = slaves.result()
        if replica_status is not _PUT_OK:
            both.set_result(replica_status)
        else:
            both.set_result(flush_status if flush_future is None else flush_future.result())

    slaves.add_done_callback(settle)
    if flush_future is not None:
        flush_future.add_done_callback(settle)
    return both
