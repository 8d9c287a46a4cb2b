# Licensed under the Apache License, Version 2.0. See LICENSE.
"""OffsetWaiters: released by the ack that covers them, in one pass; expired by one timer; a put the
acking connection was never sent is not covered."""

from __future__ import annotations

import asyncio

from reference_broker.ha.waiters import OffsetWaiters
from tests.broker.helpers import run


def waiters() -> OffsetWaiters[str]:
    return OffsetWaiters("OK", "TIMEOUT")


def test_an_ack_releases_every_covered_waiter_at_once() -> None:
    async def main() -> None:
        w = waiters()
        futs = [w.wait(i * 10, i * 10 + 10, 5.0) for i in range(10)]
        assert w.advance(0, 55) == 5
        assert [f.result() for f in futs[:5]] == ["OK"] * 5 and not any(f.done() for f in futs[5:])
        assert w.advance(0, 100) == 5 and (w.batches, w.largest_batch, w.released) == (2, 5, 10)
        assert len(w) == 0

    run(main())


def test_bytes_the_connection_was_not_sent_are_not_covered() -> None:
    async def main() -> None:
        w = waiters()
        old = w.wait(0, 10, 0.2)
        new = w.wait(10, 20, 5.0)
        # a connection whose transfer started at 10 acks 20: the put at 0..10 is not its to confirm
        assert w.advance(10, 20) == 1
        assert new.result() == "OK" and not old.done()
        assert await old == "TIMEOUT" and w.expired == 1

    run(main())


def test_the_timer_expires_in_deadline_order() -> None:
    async def main() -> None:
        w = waiters()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        a = w.wait(0, 10, 0.1)
        b = w.wait(10, 20, 0.3)
        assert await a == "TIMEOUT"
        assert not b.done() and loop.time() - t0 < 0.25
        assert await b == "TIMEOUT" and w.expired == 2 and len(w) == 0

    run(main())


def test_a_shorter_timeout_after_a_longer_one_still_expires_first() -> None:
    async def main() -> None:
        w = waiters()
        long = w.wait(0, 10, 5.0)
        short = w.wait(10, 20, 0.05)
        assert await asyncio.wait_for(short, 1.0) == "TIMEOUT"
        assert not long.done()
        w.close("CLOSED")
        assert long.result() == "CLOSED"

    run(main())


def test_zero_timeout_expires_at_once() -> None:
    async def main() -> None:
        assert (await waiters().wait(0, 1, 0)) == "TIMEOUT"

    run(main())


def test_joined_puts_share_one_future_answered_by_the_ack_that_covers_them_all() -> None:
    async def main() -> None:
        w = waiters()
        first = w.wait(0, 10, 5.0)
        joined = [w.wait(i * 10, i * 10 + 10, 5.0, join=True) for i in range(1, 4)]
        gap = w.wait(50, 60, 5.0, join=True)  # does not continue the range: a waiter of its own
        assert all(f is first for f in joined) and gap is not first and len(w) == 5
        assert w.advance(0, 35) == 0 and not first.done()  # the shared range ends at 40
        assert w.advance(0, 40) == 4 and first.result() == "OK" and not gap.done()
        after = w.wait(60, 70, 5.0, join=True)  # the last waiter is not answered: joins it
        assert after is gap and w.advance(0, 70) == 2 and (w.released, w.batches) == (6, 2)
        late = w.wait(70, 80, 0.05, join=True)  # nothing left to join
        assert await late == "TIMEOUT" and w.expired == 1

    run(main())
