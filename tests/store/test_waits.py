# Licensed under the Apache License, Version 2.0. See LICENSE.
""":func:`reference_broker.store.waits.with_replicas`: the futures of two puts that share a group
commit's future, each with the slaves' future of its own loop pass, are done in the order of the
puts, whatever the order and the loop passes in which the shared futures are done (every
interleaving is tried, on real loop futures), and so are the answers made from them."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from reference_broker.store import PutStatus
from reference_broker.store.waits import with_replicas

OK = PutStatus.PUT_OK


def _schedules(events: tuple[str, ...]) -> list[list[list[str]]]:
    """Every way to complete ``events`` in loop passes: an order (the slaves' futures from the
    head: W1 before W2) cut into passes."""
    out = []
    for order in itertools.permutations(events):
        if order.index("W1") > order.index("W2"):
            continue
        for cuts in itertools.product((False, True), repeat=len(order) - 1):
            passes, current = [], [order[0]]
            for cut, event in zip(cuts, order[1:], strict=True):
                if cut:
                    passes.append(current)
                    current = []
                current.append(event)
            passes.append(current)
            out.append(passes)
    return out


async def _answers(schedule: list[list[str]], *, flushed_first: bool) -> list[int]:
    """The order in which the two puts' answers (a callback on each put's own future) are made."""
    loop = asyncio.get_running_loop()
    flush: asyncio.Future[PutStatus] = loop.create_future()
    slaves = {"W1": loop.create_future(), "W2": loop.create_future()}
    answered: list[int] = []
    one = with_replicas(flush, slaves["W1"])
    if flushed_first:
        # the group commit covered put 1 and put 2 before put 2 asked: its flush is known at once
        flush.set_result(OK)
        await asyncio.sleep(0)
        two = with_replicas(OK, slaves["W2"])
    else:
        two = with_replicas(flush, slaves["W2"])
    one.add_done_callback(lambda _: answered.append(1))
    two.add_done_callback(lambda _: answered.append(2))
    for step in schedule:
        for event in step:
            fut = flush if event == "F" else slaves[event]
            if not fut.done():
                fut.set_result(OK)
        await asyncio.sleep(0)
    for _ in range(4):
        await asyncio.sleep(0)
    assert one.result() is OK and two.result() is OK
    return answered


@pytest.mark.parametrize("flushed_first", [False, True], ids=["one-flush", "flushed-already"])
def test_two_puts_are_answered_in_their_order_whatever_completes_first(flushed_first: bool) -> None:
    schedules = _schedules(("W1", "W2") if flushed_first else ("W1", "W2", "F"))
    assert len(schedules) == (2 if flushed_first else 12)
    wrong = {str(s): got for s in schedules
             if (got := asyncio.run(_answers(s, flushed_first=flushed_first))) != [1, 2]}
    assert not wrong, wrong


def test_the_slaves_status_wins_else_the_flushs_and_a_cancelled_wait_cancels() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()

        def futures(n: int) -> list[asyncio.Future[PutStatus]]:
            return [loop.create_future() for _ in range(n)]

        flush, slaves, late_slaves, cut_flush, cut_slaves, alone = futures(6)
        slave_timeout = with_replicas(flush, slaves)
        disk_timeout = with_replicas(PutStatus.FLUSH_DISK_TIMEOUT, late_slaves)
        cancelled = with_replicas(cut_flush, cut_slaves)
        # ASYNC_FLUSH: no flush to wait for, the slaves' future is the put's
        assert with_replicas(None, alone) is alone
        flush.set_result(OK)
        slaves.set_result(PutStatus.FLUSH_SLAVE_TIMEOUT)
        cut_flush.cancel()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert slave_timeout.result() is PutStatus.FLUSH_SLAVE_TIMEOUT
        # one wait is still open: not answered yet
        assert not disk_timeout.done() and not cancelled.done()
        late_slaves.set_result(OK)
        cut_slaves.set_result(OK)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert disk_timeout.result() is PutStatus.FLUSH_DISK_TIMEOUT
        assert cancelled.cancelled()

    asyncio.run(main())
