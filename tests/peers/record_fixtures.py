# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Record the pcaps of ``fixtures/peers/`` (see its README for what each holds): real clients and
mqctl's admin commands against the reference servers.

    .venv/bin/python -m tests.peers.record_fixtures [--out fixtures/peers] [--only NAME]
    .venv/bin/python -m tests.peers.record_fixtures --expected-only   # the .jsonl files only

Needs root (or CAP_NET_RAW) for ``mqctl pcap record``, both peers, and the default ports 9876,
10911 and 10909 free on 127.0.0.1: the servers listen there so that the captures decode with
the default port roles.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.peers.harness import ROOT, PeerCluster, mqctl_argv, peer_missing

NAMESRV_PORT, BROKER_PORT, VIP_PORT = 9876, 10911, 10909
PCAP_HEADER = 24


@contextmanager
def recording(pcap: Path, log: Path) -> Iterator[None]:
    argv = [*mqctl_argv(), "pcap", "record", "-w", str(pcap)]
    for port in (NAMESRV_PORT, BROKER_PORT, VIP_PORT):
        argv += ["--port", str(port)]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=out)
    time.sleep(6)  # the sniffer is live a while after the process has started (scapy loads slowly)
    if proc.poll() is not None:
        raise SystemExit(f"mqctl pcap record failed:\n{log.read_text()}")
    try:
        yield
        time.sleep(1)  # the last answers and FINs
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    print(log.read_text().strip())


def registration(cluster: PeerCluster) -> None:
    """The broker starts, registers with the name server, and shuts down (UNREGISTER_BROKER)."""
    cluster.start_broker()
    time.sleep(1)
    cluster.stop_broker()


def cpp_traffic(cluster: PeerCluster) -> None:
    """C++ producer to a new topic (TBW102 route, auto-creation), then a C++ push consumer."""
    cluster.cpp("produce", topic="CppPeerTopic", count=3, size="200,200,5000", run_id="cppfix",
                tag="TagC", keys="cppfix-{i}").finish(60)
    cluster.cpp("consume", topic="CppPeerTopic", group="CppPeerGroup", expect=3, timeout=60).finish(90)


def alions_traffic(cluster: PeerCluster) -> None:
    """ali-ons producer (SEND_MESSAGE_V2) to a topic created beforehand, then an ali-ons consumer."""
    cluster.js("produce", topic="JsPeerTopic", count=3, size="200,200,5000", run_id="jsfix",
               tag="TagJ", keys="jsfix-{i}").finish(60)
    cluster.js("consume", topic="JsPeerTopic", group="JsPeerGroup", expect=3, timeout=60).finish(90)


#: the admin commands of ``mqctl-admin-commands``, in order, and the exit code each must give
ADMIN_COMMANDS: list[tuple[list[str], int]] = [
    (["cluster", "list"], 0),
    (["topic", "create", "AdminTopic", "-c", "DefaultCluster", "-r", "4", "-w", "4"], 0),
    (["topic", "route", "AdminTopic"], 0),
    (["--serialize", "rocketmq", "topic", "route", "AdminTopic"], 0),
    (["topic", "route", "NoSuchTopic"], 1),
    (["topic", "list"], 0),
    (["message", "send", "-t", "AdminTopic", "-p", "admin fixture message", "-k", "adminfix-1", "-c", "TagA"], 0),
    (["message", "query", "-t", "AdminTopic", "-k", "adminfix-1"], 0),
    (["topic", "status", "AdminTopic"], 0),
    (["broker", "status", "-b", "127.0.0.1:10911"], 0),
    (["--serialize", "rocketmq", "broker", "config", "get", "-b", "127.0.0.1:10911", "brokerName"], 0),
    (["consumer", "group", "create", "-g", "AdminGroup", "-c", "DefaultCluster"], 0),
    (["consumer", "progress"], 0),
    (["namesrv", "kv", "put", "ADMIN_NS", "k1", "v1"], 0),
    (["--serialize", "rocketmq", "namesrv", "kv", "get", "ADMIN_NS", "k1"], 0),
    (["namesrv", "kv", "delete", "ADMIN_NS", "k1"], 0),
    (["namesrv", "config", "get"], 0),
    (["ha", "status", "-c", "DefaultCluster"], 0),
    (["topic", "delete", "AdminTopic", "-c", "DefaultCluster"], 0),
]


def admin_traffic(cluster: PeerCluster) -> None:
    """mqctl's admin commands against the running servers (see :data:`ADMIN_COMMANDS`)."""
    for args, code in ADMIN_COMMANDS:
        argv = [*mqctl_argv(), "-n", cluster.namesrv, *args]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if done.returncode != code:
            raise SystemExit(f"{' '.join(args)}: exit {done.returncode}, expected {code}\n{done.stderr}")
        time.sleep(0.2)


SCENARIOS: dict[str, tuple[Callable[[PeerCluster], None], bool, tuple[str, ...]]] = {
    # name: (traffic, broker running before the capture starts, peers needed)
    "peers-broker-registration": (registration, False, ()),
    "peers-cpp-produce-consume": (cpp_traffic, True, ("cpp",)),
    "peers-alions-produce-consume": (alions_traffic, True, ("js",)),
    "mqctl-admin-commands": (admin_traffic, True, ()),
}


def write_expected(pcap: Path) -> Path:
    """``<name>.jsonl`` beside the capture: what ``mqctl pcap decode -o jsonl --bodies decoded``
    prints for it, the output ``test_fixture_pcaps`` compares against."""
    out = pcap.with_suffix(".jsonl")
    argv = [*mqctl_argv(), "pcap", "decode", "-o", "jsonl", "--bodies", "decoded", "--strict", str(pcap)]
    done = subprocess.run(argv, capture_output=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"{pcap}: decode failed: {done.stderr.decode(errors='replace')}")
    out.write_bytes(done.stdout)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "fixtures" / "peers")
    parser.add_argument("--only", choices=sorted(SCENARIOS), action="append", help="record just these")
    parser.add_argument("--expected-only", action="store_true",
                        help="record nothing; write each capture's expected decode (.jsonl) again")
    args = parser.parse_args()
    if args.expected_only:
        for name in sorted(SCENARIOS):
            if not args.only or name in args.only:
                print(write_expected(args.out / f"{name}.pcap"))
        return
    chosen = {name: v for name, v in SCENARIOS.items() if not args.only or name in args.only}
    for kind in sorted({k for _, _, kinds in chosen.values() for k in kinds}):
        if peer_missing(kind):
            raise SystemExit(peer_missing(kind))
    args.out.mkdir(parents=True, exist_ok=True)
    for name, (traffic, broker_first, _kinds) in chosen.items():
        pcap = args.out / f"{name}.pcap"
        for _attempt in range(3):
            with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp:
                cluster = PeerCluster(Path(tmp), {}, broker_port=BROKER_PORT, namesrv_port=NAMESRV_PORT)
                try:
                    cluster.start(broker=broker_first)
                    if name == "peers-alions-produce-consume":
                        cluster.create_topic("JsPeerTopic", queues=4)  # ali-ons cannot auto-create it
                    with recording(pcap, Path(tmp) / "record.log"):
                        traffic(cluster)
                finally:
                    cluster.stop()
            # Now and then the sniffer is not live in time and the file stays empty: record again.
            if pcap.stat().st_size > PCAP_HEADER:
                break
        print(f"{name}: {pcap.stat().st_size} bytes; expected decode in {write_expected(pcap).name}")


if __name__ == "__main__":
    main()
