# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Replication speed: an empty slave's catch-up, and SYNC_MASTER sends, as ratios measured in one run.

Usage::

    .venv/bin/python benchmarks/bench_ha.py [--mb 400] [--body 4096] [--seconds 5] [--no-java]

* **catch-up**: a master holding ``--mb`` MB of 4 KiB messages in 1 GiB CommitLog files (RocketMQ's
  default); an empty slave starts with ``haMasterAddress`` set to it, and the time from its first
  replicated byte to the master's end gives MB/s. The baseline is a plain loopback TCP copy of the
  same number of bytes (1 MiB ``sendall`` into a ``recv_into`` loop) measured in the same run; the
  table shows each pairing as a ratio of it, and when the slave had dispatched everything
  (ConsumeQueues and index, ``dispatchBehindBytes`` 0), which both brokers do behind the copy.
  Pairings: reference master -> reference slave, and, when ``../shared/javakit`` and ``java`` are
  there, Java 4.9.8 master -> Java 4.9.8 slave (and the two mixed pairings with ``--mixed``).
  Java 4.9.8 copies at about 0.07x of loopback on a 2-core machine.
* **sync sends**: 16 connections x 64 sends in flight (``bench_broker``'s load generator, 1 KiB
  bodies, WAIT=true) to a SYNC_MASTER + ASYNC_FLUSH master with its slave connected, as a ratio to
  an ASYNC_MASTER with its slave in the same run: the reference pair, and the Java 4.9.8 pair beside
  it when the kit is there (Java: about 1.0x, its acks come per batch of transfers).

Every server runs in its own process; every process started here is stopped at the end. No
assertions: the figures are for reading.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_broker  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tests.ha.servers import OurServers  # noqa: E402
from tests.javakit import JavaServers, javakit_missing  # noqa: E402
from wire import RemotingCommand  # noqa: E402
from wire.aio import connect  # noqa: E402
from wire.bodies import KVTable  # noqa: E402

GIB = 1 << 30
MB = 1_000_000
console = Console(stderr=True)


# ----------------------------------------------------------------------------- loopback baseline

def loopback_mb_s(total: int, chunk: int = 1 << 20) -> float:
    """MB/s of a plain TCP copy of ``total`` bytes over 127.0.0.1 (one sender thread, one receiver)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    got = [0]

    def receive() -> None:
        conn, _ = srv.accept()
        buf = bytearray(chunk)
        view = memoryview(buf)
        with conn:
            while got[0] < total:
                n = conn.recv_into(view)
                if not n:
                    break
                got[0] += n

    t = threading.Thread(target=receive)
    t.start()
    data = memoryview(bytes(chunk))
    with socket.create_connection(("127.0.0.1", port)) as c:
        t0 = time.perf_counter()
        sent = 0
        while sent < total:
            n = min(chunk, total - sent)
            c.sendall(data[:n])
            sent += n
        t.join()
        took = time.perf_counter() - t0
    srv.close()
    return got[0] / took / MB


# ----------------------------------------------------------------------------- helpers

async def _runtime(port: int) -> dict[str, str]:
    c = await connect("127.0.0.1", port, timeout=5)
    try:
        r = await c.request(RemotingCommand(code=28), timeout=5)
        return dict(KVTable.decode(r.body).table) if r.code == 0 and r.body else {}
    finally:
        await c.aclose()


async def _send_one(port: int) -> int:
    c = await connect("127.0.0.1", port, timeout=5)
    try:
        return (await c.request(RemotingCommand.request(310, {
            "a": "BenchProducer", "b": bench_broker.TOPIC, "c": "TBW102", "d": "8", "e": "0", "f": "0",
            "g": "0", "h": "0", "i": "WAIT\x01true", "j": "0", "k": "false", "m": "false"}, b"x"),
            timeout=10)).code
    finally:
        await c.aclose()


def max_offset(port: int) -> int:
    try:
        return int(asyncio.run(_runtime(port)).get("commitLogMaxOffset", -1))
    except Exception:
        return -1


def fill(port: int, total: int, body: int) -> int:
    """Pipelined sends (16x64) until the master holds ``total`` bytes; returns its end offset."""
    frames = bench_broker.send_frames(body)
    while (end := max_offset(port)) < total:
        left = total - max(end, 0)
        asyncio.run(bench_broker._load(port, frames, 16, 64, max(0.5, min(5.0, left / 40e6))))
    return max_offset(port)


def dispatch_behind(port: int) -> int:
    try:
        return int(asyncio.run(_runtime(port)).get("dispatchBehindBytes", -1))
    except Exception:
        return -1


def catch_up(master: Any, slave_servers: Any, version: str, end: int) -> tuple[float, float, float]:
    """Start an empty slave of ``master``; (MB/s from its first replicated byte to ``end``,
    seconds from its start to the end, seconds from its start until it has dispatched it all:
    ConsumeQueues and index follow the copy on both brokers)."""
    t_start = time.perf_counter()
    slave = slave_servers.broker(version, name=master.properties["brokerName"], role="SLAVE",
                                 commitlog_file_size=GIB, haMasterAddress=master.ha_addr,
                                 haSendHeartbeatInterval="1000")
    first = None
    deadline = time.perf_counter() + 600
    while True:
        now_at = max_offset(slave.port)
        now = time.perf_counter()
        if first is None and now_at > 0:
            first = (now, now_at)
        if now_at >= end:
            break
        if now > deadline:
            raise RuntimeError(f"the slave reached {now_at} of {end} in 600 s")
        time.sleep(0.02)
    assert first is not None
    copied = end - first[1]
    took = max(1e-6, now - first[0])
    while dispatch_behind(slave.port) != 0 and time.perf_counter() < deadline:
        time.sleep(0.02)
    dispatched = time.perf_counter() - t_start
    slave.stop(graceful=False)
    return copied / took / MB, now - t_start, dispatched


@contextlib.contextmanager
def servers(base: Path, java: bool) -> Iterator[tuple[OurServers, JavaServers | None]]:
    ours = OurServers(base / "ours")
    js = JavaServers(base / "java") if java else None
    try:
        yield ours, js
    finally:
        ours.close()
        if js is not None:
            js.close()


def sends_per_second(servers: Any, version: str, role: str, seconds: float, body: int) -> float:
    """Sends/s (16 x 64 in flight) to a ``role`` master of ``servers`` with its slave connected."""
    name = f"bench-{role.lower()}-{version.replace('.', '')}"
    master = servers.broker(version, name=name, role=role, commitlog_file_size=GIB)
    slave = servers.broker(version, name=name, role="SLAVE", commitlog_file_size=GIB,
                           haMasterAddress=master.ha_addr, haSendHeartbeatInterval="1000")
    try:
        frames = bench_broker.send_frames(body)
        # until the slave acks (a SYNC_MASTER answers SEND_OK only then)
        deadline = time.time() + 60
        while asyncio.run(_send_one(master.port)) != 0:
            if time.time() > deadline:
                raise RuntimeError(f"the {version} slave did not connect in 60 s")
            time.sleep(0.2)
        asyncio.run(bench_broker._load(master.port, frames, 4, 4, 0.5))
        # SEND_OK answers only: a Java broker answers SYSTEM_BUSY when a send waited in its queue
        # longer than waitTimeMillsInSendQueue (200 ms), which 1,024 sends in flight can make it do
        rate, _ = asyncio.run(bench_broker._load(master.port, frames, 16, 64, seconds, ok_only=True))
        return rate
    finally:
        slave.stop(graceful=False)
        master.stop(graceful=False)


# ----------------------------------------------------------------------------- main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=400, help="MB the master holds before the slave starts")
    ap.add_argument("--body", type=int, default=4096, help="message body size for the fill")
    ap.add_argument("--seconds", type=float, default=5.0, help="length of each sends/s measurement")
    ap.add_argument("--no-java", action="store_true", help="skip the Java 4.9.8 pairings")
    ap.add_argument("--mixed", action="store_true", help="also the mixed pairings (ours<->Java)")
    ap.add_argument("--dir", default=None, help="where the stores go (default: a temp dir)")
    args = ap.parse_args()
    java = not args.no_java and javakit_missing() is None
    if not args.no_java and not java:
        console.print(f"[yellow]Java pairings skipped: {javakit_missing()}[/]")
    base = Path(tempfile.mkdtemp(prefix="bench-ha-", dir=args.dir))
    total = args.mb * MB
    rows: list[tuple[str, float, float, float]] = []
    send_rows: list[tuple[str, float, float]] = []
    try:
        with console.status("loopback copy"):
            loop_mb_s = max(loopback_mb_s(total) for _ in range(2))
        console.print(f"loopback TCP copy: {loop_mb_s:,.0f} MB/s")
        with servers(base, java) as (ours, js):
            pairings: list[tuple[str, Any, str, Any, str]] = [
                ("reference -> reference", ours, "mqctl", ours, "mqctl")]
            if js is not None:
                pairings.append(("Java 4.9.8 -> Java 4.9.8", js, "4.9.8", js, "4.9.8"))
                if args.mixed:
                    pairings += [("reference -> Java 4.9.8", ours, "mqctl", js, "4.9.8"),
                                 ("Java 4.9.8 -> reference", js, "4.9.8", ours, "mqctl")]
            masters: dict[str, Any] = {}
            for label, m_servers, m_version, s_servers, s_version in pairings:
                if m_version not in masters:
                    with console.status(f"filling a {m_version} master with {args.mb} MB"):
                        m = m_servers.broker(m_version, name=f"bench-{m_version.replace('.', '')}",
                                             commitlog_file_size=GIB)
                        end = fill(m.port, total, args.body)
                    masters[m_version] = (m, end)
                m, end = masters[m_version]
                with console.status(f"catch-up {label}"):
                    rate, wall, dispatched = catch_up(m, s_servers, s_version, end)
                rows.append((label, rate, wall, dispatched))
                console.print(f"{label}: {rate:,.0f} MB/s ({rate / loop_mb_s:.3f}x loopback), "
                              f"{end / MB:,.0f} MB in {wall:.1f} s from the slave's start, "
                              f"dispatched {dispatched:.1f} s")
            for m, _ in masters.values():
                m.stop(graceful=False)
            send_pairs: list[tuple[str, Any, str]] = [("reference", ours, "mqctl")]
            if js is not None:
                send_pairs.append(("Java 4.9.8", js, "4.9.8"))
            for label, srv, version in send_pairs:
                with console.status(f"sends/s, {label} ASYNC_MASTER and SYNC_MASTER"):
                    async_rate = sends_per_second(srv, version, "ASYNC_MASTER", args.seconds, 1024)
                    sync_rate = sends_per_second(srv, version, "SYNC_MASTER", args.seconds, 1024)
                send_rows.append((label, async_rate, sync_rate))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    t = Table(title=f"catch-up of an empty slave ({args.mb} MB, {args.body}-byte messages, 1 GiB files)")
    for col in ("pairing", "MB/s", "x loopback", "s from slave start", "s until dispatched"):
        t.add_column(col, justify="left" if col == "pairing" else "right")
    t.add_row("loopback TCP copy", f"{loop_mb_s:,.0f}", "1.000", "", "")
    for label, rate, wall, dispatched in rows:
        t.add_row(label, f"{rate:,.0f}", f"{rate / loop_mb_s:.3f}", f"{wall:.1f}", f"{dispatched:.1f}")
    out = Console()
    out.print(t)
    s = Table(title="SEND_OK/s, 16 connections x 64 in flight, 1 KiB, ASYNC_FLUSH, slave connected")
    for col in ("broker", "ASYNC_MASTER sends/s", "SYNC_MASTER sends/s", "SYNC / ASYNC"):
        s.add_column(col, justify="left" if col == "broker" else "right")
    for label, async_rate, sync_rate in send_rows:
        s.add_row(label, f"{async_rate:,.0f}", f"{sync_rate:,.0f}", f"{sync_rate / async_rate:.2f}")
    out.print(s)


if __name__ == "__main__":
    main()
