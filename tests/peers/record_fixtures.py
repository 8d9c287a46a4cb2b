# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Record the real-peer pcaps of ``fixtures/peers/`` (see its README for what each holds).

    .venv/bin/python -m tests.peers.record_fixtures [--out fixtures/peers]

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


SCENARIOS: dict[str, tuple[Callable[[PeerCluster], None], bool]] = {
    # name: (traffic, broker running before the capture starts)
    "peers-broker-registration": (registration, False),
    "peers-cpp-produce-consume": (cpp_traffic, True),
    "peers-alions-produce-consume": (alions_traffic, True),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "fixtures" / "peers")
    parser.add_argument("--only", choices=sorted(SCENARIOS), action="append", help="record just these")
    args = parser.parse_args()
    for kind in ("cpp", "js"):
        if peer_missing(kind):
            raise SystemExit(peer_missing(kind))
    args.out.mkdir(parents=True, exist_ok=True)
    for name, (traffic, broker_first) in SCENARIOS.items():
        if args.only and name not in args.only:
            continue
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
        print(f"{name}: {pcap.stat().st_size} bytes")


if __name__ == "__main__":
    main()
