# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A live capture of a reference controller-mode cluster (processes): start-up, failover and
rejoin decode to the frame sequence of Java 5.0.0's ``11-controller-startup`` and ``13-failover``.

What the Java captures show and the reference cluster must show too, in this order:

1. the first broker: CONTROLLER_GET_METADATA_INFO, CONTROLLER_REGISTER_BROKER answered with
   itself as master (brokerId 0, masterEpoch 1), then REGISTER_BROKER to the name server;
2. the second broker: CONTROLLER_REGISTER_BROKER answered with the first as master; an AutoSwitch
   HANDSHAKE to the master's HA port whose reply carries the epochs [(1, 0)];
   CONTROLLER_ALTER_SYNC_STATE_SET from the master with both members, answered at epoch 2;
3. after the master's SIGKILL: NOTIFY_BROKER_ROLE_CHANGED (oneway) to the second broker with
   masterEpoch 2, brokerId 0;
4. the old master restarts: CONTROLLER_REGISTER_BROKER answered with the new master at epoch 2; a
   HANDSHAKE to the new master whose reply carries [(1, 0), (2, end of epoch 1)]; an
   ALTER_SYNC_STATE_SET from the new master with both members again.

``MQCTL_WRITE_CAPTURE=path.pcap`` keeps the capture (docs/controller.md's picture was drawn from one).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.broker.helpers import send_request
from tests.controller.test_kill_master import call, max_offset, members, sync_state
from tests.ha.servers import OurServers
from tests.javakit import free_broker_port, free_port
from wire import RemotingCommand, RequestCode
from wire.capture import CommandRow, HaRow, decode_capture

pytestmark = pytest.mark.slow

NAME = "broker-c"


def _can_capture() -> str | None:
    if os.geteuid() != 0:
        return "live capture needs root or CAP_NET_RAW"
    try:
        import scapy  # noqa: F401
    except ImportError:
        return "scapy is not installed"
    return None


def wait(cond: Any, what: str, timeout: float) -> None:
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, f"timed out: {what}"
        time.sleep(0.1)


def test_failover_capture_matches_java_sequence(tmp_path: Path) -> None:
    reason = _can_capture()
    if reason:
        pytest.skip(reason)
    from wire.capture._scapy_io import record_live

    pcap = tmp_path / "ours-controller-failover.pcap"
    with OurServers(tmp_path / "servers") as servers:
        cport = free_port()
        controller = f"127.0.0.1:{cport}"
        ns = servers.namesrv(enableControllerInNamesrv="true", controllerDLegerPeers=f"n0-{controller}",
                             controllerStorePath=str(tmp_path / "controller"))
        pa, pb = free_broker_port(), free_broker_port()
        ports = [ns.port, cport] + [p + d for p in (pa, pb) for d in (-2, 0, 1)]
        done = threading.Event()
        seen = threading.Event()
        recorder = threading.Thread(target=record_live, args=(pcap, ports),
                                    kwargs={"stop": done.is_set, "on_packet": lambda n, size: seen.set()},
                                    daemon=True)
        recorder.start()
        # the capture runs once a request to the name server shows up in it (a sniffer under load
        # takes a while to start)
        wait(lambda: call(ns.addr, RemotingCommand(code=RequestCode.GET_BROKER_CLUSTER_INFO)) is not None
             and seen.wait(0.2), "the capture to start", 30)
        try:
            keys = dict(cluster="DefaultCluster5", name=NAME, role="SLAVE", broker_id=-1,
                        enableControllerMode="true", controllerAddr=controller, allAckInSyncStateSet="true",
                        haSendHeartbeatInterval="1000", syncBrokerMetadataPeriod="1000",
                        checkSyncStateSetPeriod="1000")
            a = servers.broker(namesrv=ns, listenPort=str(pa), **keys)  # type: ignore[arg-type]
            wait(lambda: sync_state(controller, NAME).get("masterAddress") == a.addr, "the first broker is master", 30)
            b = servers.broker(namesrv=ns, listenPort=str(pb), **keys)  # type: ignore[arg-type]
            wait(lambda: members(controller, NAME) == {a.addr, b.addr}, "the slave joins the SyncStateSet", 60)
            for i in range(5):
                assert call(a.addr, send_request("C5Topic", b"m%d" % i, code=10)).code == 0
            common = max_offset(a.addr)
            a.kill()
            wait(lambda: sync_state(controller, NAME).get("masterAddress") == b.addr, "the new master", 30)
            # B takes sends once it has acted on the controller's notice (asynchronous)
            wait(lambda: call(b.addr, send_request("C5Topic", b"n0", code=10)).code == 0, "B takes sends", 30)
            for i in range(1, 5):
                assert call(b.addr, send_request("C5Topic", b"n%d" % i, code=10)).code == 0
            servers.restart(a, graceful=False)
            wait(lambda: members(controller, NAME) == {a.addr, b.addr}, "the old master rejoins", 60)
            time.sleep(1.0)
        finally:
            done.set()
            recorder.join(10)
    if os.environ.get("MQCTL_WRITE_CAPTURE"):
        shutil.copyfile(pcap, os.environ["MQCTL_WRITE_CAPTURE"])

    rows = list(decode_capture(str(pcap)))
    events: list[tuple[str, Any]] = []
    for r in rows:
        if isinstance(r, CommandRow):
            c = r.command
            ext = dict(c.ext_fields or {})
            if not c.is_response and c.code in (RequestCode.CONTROLLER_REGISTER_BROKER,
                                                RequestCode.NOTIFY_BROKER_ROLE_CHANGED,
                                                RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET):
                events.append((c.code_name, (ext, json.loads(c.body) if c.body else None)))
            elif c.is_response and r.request is not None and r.request.command.code in (
                    RequestCode.CONTROLLER_REGISTER_BROKER, RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET):
                events.append((f"{r.request.command.code_name}/answer", ext))
        elif isinstance(r, HaRow) and r.direction == 1 and type(r.message).__name__ == "HandshakeReply":
            events.append(("HANDSHAKE_REPLY", [(e.epoch, e.start_offset) for e in r.message.entries]))
    names = [e[0] for e in events]

    def first(name: str, after: int = 0) -> int:
        return names.index(name, after)

    r1 = first("CONTROLLER_REGISTER_BROKER/answer")
    assert events[r1][1]["brokerId"] == "0" and events[r1][1]["masterEpoch"] == "1"
    r2 = first("CONTROLLER_REGISTER_BROKER/answer", r1 + 1)
    assert events[r2][1]["brokerId"] != "0" and events[r2][1]["masterAddress"] == a.addr
    h1 = first("HANDSHAKE_REPLY", r2)
    assert events[h1][1] == [(1, 0)]
    alter1 = first("CONTROLLER_ALTER_SYNC_STATE_SET/answer", h1)
    assert events[alter1][1]["newSyncStateSetEpoch"] == "2"
    n = first("NOTIFY_BROKER_ROLE_CHANGED", alter1)
    assert events[n][1][0]["masterAddress"] == b.addr and events[n][1][0]["masterEpoch"] == "2"
    assert events[n][1][0]["brokerId"] == "0"
    r3 = first("CONTROLLER_REGISTER_BROKER/answer", n)
    assert events[r3][1]["masterAddress"] == b.addr and events[r3][1]["masterEpoch"] == "2"
    h2 = first("HANDSHAKE_REPLY", r3)
    assert events[h2][1] == [(1, 0), (2, common)]
    first("CONTROLLER_ALTER_SYNC_STATE_SET/answer", h2)
