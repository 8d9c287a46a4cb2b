# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl ha status --watch`` end to end: a real master and slave (processes), the slave frozen
while the master takes more than ``haSlaveFallbehindMax``, the real mqctl redrawing (JSON lines):
the redraws show the slave behind, its lag in bytes and in time growing; thawed, it catches up and
the redraws reach in sync with no lag; Ctrl-C ends the watch with exit 0."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.broker.helpers import send_request
from tests.ha.servers import OurProcess, OurServers, our_servers  # noqa: F401 - a fixture
from tests.peers.harness import mqctl_argv
from wire import ResponseCode
from wire.aio import connect

#: the master calls a slave more than this many bytes behind not in sync
FALLBEHIND = 1 << 20
BODY = 4000


async def _send(port: int, n: int, start: int) -> set[int]:
    conn = await connect("127.0.0.1", port, timeout=10)
    try:
        replies = await asyncio.gather(*[
            conn.request(send_request("WatchTopic", f"w-{start + i:06d}-".encode() + b"w" * BODY,
                                      queue_id=i % 4), timeout=30) for i in range(n)])
    finally:
        await conn.aclose()
    return {r.code for r in replies}


def _lines(proc: subprocess.Popen[str]) -> tuple[queue.Queue[str | None], threading.Thread]:
    """The watch's stdout lines, read by a thread (None at its end)."""
    q: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            q.put(line)
        q.put(None)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return q, thread


def _redraws(q: queue.Queue[str | None], until: Callable[[dict[str, Any]], bool], timeout: float,
             seen: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The master's status of each redraw (appended to ``seen``) until one satisfies ``until``."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"no redraw satisfied the condition in {timeout}s; last: {seen[-1:]}"
        try:
            line = q.get(timeout=left)
        except queue.Empty:
            continue
        assert line is not None, f"the watch ended; redraws: {seen}"
        statuses = json.loads(line)
        assert isinstance(statuses, list) and len(statuses) == 1, line
        status = statuses[0]
        seen.append(status)
        yield status
        if until(status):
            return


def _slave(status: dict[str, Any]) -> dict[str, Any] | None:
    slaves = status.get("slaves") or []
    return slaves[0] if slaves else None


def _watch_catch_up(q: queue.Queue[str | None], slave: OurProcess, master_port: int,
                    seen: list[dict[str, Any]]) -> None:
    # the slave connected and holds what the master holds
    for _ in _redraws(q, lambda s: (c := _slave(s)) is not None and c["diff"] == 0 and c["in_sync"], 60, seen):
        pass
    slave.freeze()
    try:
        assert asyncio.run(_send(master_port, 600, 50)) == {ResponseCode.SUCCESS}  # ~2.4 MB
        behind: list[dict[str, Any]] = []
        for s in _redraws(q, lambda s: len(behind) >= 3, 30, seen):
            c = _slave(s)
            if c is not None and not c["in_sync"]:
                behind.append(c)
    finally:
        slave.thaw()
    assert all(c["diff"] >= FALLBEHIND for c in behind), behind
    lags = [c["lag_ms"] for c in behind]
    assert lags == sorted(lags) and lags[-1] > lags[0] > 0, lags  # the time behind keeps growing
    caught: list[dict[str, Any]] = []
    for s in _redraws(q, lambda s: bool(caught), 60, seen):
        c = _slave(s)
        if c is not None and c["diff"] == 0:
            caught.append(c)
    assert caught[0]["in_sync"] and caught[0]["lag_ms"] == 0
    assert caught[0]["ack_offset"] == seen[-1]["master_commit_log_max_offset"]


def test_watch_redraws_a_catch_up_until_in_sync(our_servers: OurServers) -> None:  # noqa: F811
    master: OurProcess = our_servers.broker(name="broker-watch", haSlaveFallbehindMax=str(FALLBEHIND),
                                            haSendHeartbeatInterval="1000")
    slave = our_servers.broker(name="broker-watch", role="SLAVE", haMasterAddress=master.ha_addr,
                               haSendHeartbeatInterval="1000")
    assert asyncio.run(_send(master.port, 50, 0)) == {ResponseCode.SUCCESS}
    env = {**os.environ, "MQCTL_CONFIG": os.devnull}
    env.pop("NAMESRV_ADDR", None)
    seen: list[dict[str, Any]] = []
    with subprocess.Popen([*mqctl_argv(), "-o", "json", "ha", "status", "-b", master.addr, "--watch", "0.3"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as watch:
        q, pump = _lines(watch)
        try:
            _watch_catch_up(q, slave, master.port, seen)
            watch.send_signal(signal.SIGINT)
            assert watch.wait(timeout=20) == 0
            assert watch.stderr is not None and "Traceback" not in watch.stderr.read()
        finally:
            if watch.poll() is None:
                watch.kill()
                watch.wait()
            pump.join(10)
    assert len(seen) >= 5, seen


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
