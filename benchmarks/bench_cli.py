# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Wall time of whole ``mqctl`` admin commands, against the interpreter's own start-up.

Usage::

    .venv/bin/python benchmarks/bench_cli.py [--runs 21] [--layout single|2m-noslave] [--check]

A local reference cluster is started with ``mqctl cluster up`` on free ports in a temporary
directory (and stopped at the end), a topic is created, and then, interleaved so that machine
noise hits every case alike, each of these runs ``--runs`` times as a fresh process:

* ``python -c pass`` in the same venv: the interpreter floor;
* ``mqctl -o json cluster list``: GET_BROKER_CLUSTER_INFO, then GET_BROKER_RUNTIME_INFO from every
  broker;
* ``mqctl topic route T``: GET_ROUTEINFO_BY_TOPIC, drawn as two tables;
* ``mqctl --help``: the command tree alone, no connection.

The table shows each median and its ratio to the floor. The aim is ``cluster list`` under 0.25 s:
mqadmin, the Java tool it replaces, needs about 5 s per command on a machine of this size (JVM
start-up), so 0.25 s is at most a twentieth of it. ``--check`` exits 1 when the aim is missed.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
MQCTL = VENV_BIN / "mqctl"
AIM_S = 0.25
MQADMIN_S = 5.0


def free_ports() -> tuple[int, int]:
    """A name-server port and a broker port P with P, P+1, P+20 and P+21 free."""
    for _ in range(100):
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", 0))
            b.bind(("127.0.0.1", 0))
            ns, base = a.getsockname()[1], b.getsockname()[1]
        if base + 21 >= 65536:
            continue
        try:
            for p in (base + 1, base + 20, base + 21):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        return ns, base
    raise SystemExit("no free port range found")


def mqctl(*args: str) -> list[str]:
    return [str(MQCTL), *args] if MQCTL.exists() else [sys.executable, "-m", "mqctl.app", *args]


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--layout", default="single", choices=["single", "2m-noslave"])
    ap.add_argument("--check", action="store_true", help="exit 1 when cluster list misses the aim")
    args = ap.parse_args()

    ns_port, broker_port = free_ports()
    ns = f"127.0.0.1:{ns_port}"
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        d = str(Path(tmp) / "cluster")
        up = mqctl("cluster", "up", "--dir", d, "--layout", args.layout, "--namesrv-port", str(ns_port),
                   "--broker-port", str(broker_port))
        started = subprocess.run(up, capture_output=True, text=True)
        if started.returncode != 0:
            raise SystemExit(f"mqctl cluster up failed: {started.stderr.strip()}")
        try:
            create = mqctl("-n", ns, "topic", "create", "BenchTopic", "-c", "DefaultCluster")
            subprocess.run(create, check=True, stdout=subprocess.DEVNULL)
            cases = {
                "python -c pass": [sys.executable, "-c", "pass"],
                "mqctl -o json cluster list": mqctl("-n", ns, "-o", "json", "cluster", "list"),
                "mqctl topic route BenchTopic": mqctl("-n", ns, "topic", "route", "BenchTopic"),
                "mqctl --help": mqctl("--help"),
            }
            for cmd in cases.values():  # warm the file cache and the bytecode
                timed(cmd)
            samples: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(args.runs):
                for name, cmd in cases.items():
                    samples[name].append(timed(cmd))
        finally:
            subprocess.run(mqctl("cluster", "down", "--dir", d), stdout=subprocess.DEVNULL, check=False)

    medians = {name: statistics.median(xs) for name, xs in samples.items()}
    floor = medians["python -c pass"]
    print(f"{args.runs} runs each, {args.layout} reference cluster; medians of wall time")
    print(f"{'command':<32} {'median s':>9} {'x python':>9} {'vs mqadmin':>11}")
    for name, m in medians.items():
        print(f"{name:<32} {m:>9.3f} {m / floor:>9.1f} {m / MQADMIN_S:>10.3f}x")
    cl = medians["mqctl -o json cluster list"]
    verdict = "meets" if cl < AIM_S else "misses"
    print(f"cluster list {cl:.3f} s {verdict} the {AIM_S} s aim "
          f"(1/{MQADMIN_S / AIM_S:.0f} of mqadmin's ~{MQADMIN_S:.0f} s)")
    return 1 if args.check and cl >= AIM_S else 0


if __name__ == "__main__":
    raise SystemExit(main())
