# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Controller-mode failover: the time from a master's SIGKILL to the controller naming a new master,
the reference controller and brokers beside the Java 5.0.0 ones, measured in one run.

Usage::

    .venv/bin/python benchmarks/bench_election.py [--reps 3] [--no-java]

Each side runs a name server with its embedded controller and two controller-mode brokers of one
broker name, as processes (``allAckInSyncStateSet=true``). Each repetition waits until both
brokers are in the SyncStateSet, SIGKILLs the master, and polls the controller
(CONTROLLER_GET_SYNC_STATE_DATA every 2 ms) until it names the other broker: the figure is that time
(it includes up to one poll). The killed broker is then restarted (it rejoins as a slave) for the
next repetition. The 13-failover capture shows Java 5.0.0 electing ~60 ms after the old master's
connection closed. The table gives the median and the range per side and the ratio of the medians.
No assertions: the figures are for reading.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tests.ha.servers import OurServers  # noqa: E402
from tests.javakit import JavaServers, free_port, javakit_missing  # noqa: E402
from wire import RemotingCommand, RequestCode  # noqa: E402
from wire.aio import connect, split_addr  # noqa: E402

NAME = "broker-e"


async def _state(controller: str) -> dict[str, Any]:
    host, port = split_addr(controller)
    async with await connect(host, port) as c:
        r = await c.request(RemotingCommand(code=RequestCode.CONTROLLER_GET_SYNC_STATE_DATA,
                                            body=json.dumps([NAME]).encode()), timeout=3)
    table: dict[str, dict[str, Any]] = json.loads(r.body or b"{}").get("inSyncStateTable", {})
    return table.get(NAME, {})


def state(controller: str) -> dict[str, Any]:
    try:
        return asyncio.run(_state(controller))
    except OSError:
        return {}


def wait(cond: Any, timeout: float, what: str, step: float = 0.1) -> float:
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(what)
        time.sleep(step)
    return time.monotonic() - t0


#: a kill not followed by an election within this long counts as a run without one
ELECTION_TIMEOUT = 30.0


def measure(servers: Any, controller: str, brokers: list[Any], reps: int, console: Console,
            side: str) -> tuple[list[float], int]:
    """The seconds from each master's SIGKILL to the other broker named master, and how many
    kills were followed by no election within :data:`ELECTION_TIMEOUT` (the Java 5.0.0 controller
    can keep a dead master: docs/protocol/ha-5x.md)."""
    by_addr = {b.addr: b for b in brokers}
    out = []
    missed = 0

    async def poll_until(addr: str) -> float | None:
        host, port = split_addr(controller)
        t0 = time.monotonic()
        async with await connect(host, port) as c:
            while time.monotonic() - t0 < ELECTION_TIMEOUT:
                r = await c.request(RemotingCommand(code=RequestCode.CONTROLLER_GET_SYNC_STATE_DATA,
                                                    body=json.dumps([NAME]).encode()), timeout=3)
                table = json.loads(r.body or b"{}").get("inSyncStateTable", {})
                if table.get(NAME, {}).get("masterAddress") == addr:
                    return time.monotonic() - t0
                await asyncio.sleep(0.002)
        return None

    for i in range(reps):
        wait(lambda: {m["address"] for m in state(controller).get("inSyncMembers") or ()} == set(by_addr),
             120, "both brokers in the SyncStateSet")
        master = state(controller)["masterAddress"]
        other = next(a for a in by_addr if a != master)
        by_addr[master].kill()
        took = asyncio.run(poll_until(other))
        if took is None:
            missed += 1
            console.print(f"[yellow]{side} run {i + 1}: {master} killed, no new master in "
                          f"{ELECTION_TIMEOUT:g} s (not counted)[/yellow]")
        else:
            out.append(took)
            console.print(f"{side} run {i + 1}: {master} killed, {other} master after {took * 1000:.0f} ms")
        restarted = servers.restart(by_addr[master], graceful=False)
        by_addr[master] = restarted
    return out, missed


def ours(base: Path, reps: int, console: Console) -> tuple[list[float], int]:
    with OurServers(base / "ours") as servers:
        cport = free_port()
        controller = f"127.0.0.1:{cport}"
        ns = servers.namesrv(enableControllerInNamesrv="true", controllerDLegerPeers=f"n0-{controller}",
                             controllerStorePath=str(base / "ours-controller"))
        keys = dict(name=NAME, cluster="ElectCluster", role="SLAVE", broker_id=-1,
                    enableControllerMode="true", controllerAddr=controller, allAckInSyncStateSet="true",
                    syncBrokerMetadataPeriod="1000", checkSyncStateSetPeriod="1000",
                    haSendHeartbeatInterval="1000")
        a = servers.broker(namesrv=ns, **keys)  # type: ignore[arg-type]
        wait(lambda: state(controller).get("masterAddress") == a.addr, 30, "a master")
        b = servers.broker(namesrv=ns, **keys)  # type: ignore[arg-type]
        return measure(servers, controller, [a, b], reps, console, "reference")


def java(base: Path, reps: int, console: Console) -> tuple[list[float], int]:
    with JavaServers(base / "java") as servers:
        ns = servers.namesrv_controller("5.0.0")
        controller = ns.controller_addr
        keys = dict(cluster="ElectCluster", name=NAME, broker_id=-1, role="SLAVE",
                    enableControllerMode="true", controllerAddr=controller, allAckInSyncStateSet="true",
                    storePathEpochFile="@NODE_DIR@/store/epochFileCheckpoint")
        a = servers.broker("5.0.0", namesrv=ns, **keys)  # type: ignore[arg-type]
        wait(lambda: state(controller).get("masterAddress") == a.addr, 60, "a master")
        b = servers.broker("5.0.0", namesrv=ns, **keys)  # type: ignore[arg-type]
        return measure(servers, controller, [a, b], reps, console, "Java 5.0.0")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-java", action="store_true")
    args = ap.parse_args()
    console = Console()
    results: dict[str, tuple[list[float], int]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-election-") as d:
            base = Path(d)
            results["reference"] = ours(base, args.reps, console)
            if not args.no_java:
                missing = javakit_missing()
                if missing:
                    console.print(f"[yellow]Java side skipped: {missing}[/yellow]")
                else:
                    results["Java 5.0.0"] = java(base, args.reps, console)
    except TimeoutError as exc:
        console.print(f"[red]bench_election: timed out waiting for {exc}[/red]")
        sys.exit(1)
    table = Table(title="master SIGKILL -> new master named by the controller")
    for col in ("side", "runs", "not elected", "median ms", "min ms", "max ms", "vs Java"):
        table.add_column(col, justify="right" if col != "side" else "left")
    java_times = results.get("Java 5.0.0", ([], 0))[0]
    java_median = statistics.median(java_times) if java_times else None
    for side, (times, missed) in results.items():
        if not times:
            table.add_row(side, "0", str(missed), "-", "-", "-", "-")
            continue
        med = statistics.median(times)
        ratio = f"{med / java_median:.2f}x" if java_median else "-"
        table.add_row(side, str(len(times)), str(missed), f"{med * 1000:.0f}", f"{min(times) * 1000:.0f}",
                      f"{max(times) * 1000:.0f}", ratio)
    console.print(table)
    if any(not times for times, _ in results.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
