# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The three 09 captures of a Java 4.9.8 SYNC_MASTER, reproduced on reference servers running as
processes (name server, SYNC_MASTER, slave): the same answer codes and the same timings.

* slave up: SEND_OK, each answer after the slave's ack;
* slave frozen (SIGSTOP; its HA connection stays open, no acks): FLUSH_SLAVE_TIMEOUT after
  ``slaveTimeout`` (3,000 ms), the answer still carrying msgId, queueId and queueOffset;
* slave stopped: SLAVE_NOT_AVAILABLE at once, msgId and queueOffset still given.

The expected codes and times are read from the captures themselves (request to answer, per send).
The C++ client (the peer of the captures) then runs each scenario as it did there. It treats any
status but SEND_OK as a failed try: it tries again (three SEND_MESSAGE in all, each answered 12 or
11, as in the frozen and down captures) and then gives up with "No route info of this topic"
(``DefaultMQProducerImpl::sendDefaultImpl`` of rocketmq-client-cpp 2.x)."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.broker.helpers import send_request
from tests.conftest import shared_path
from tests.ha.servers import OurServers
from tests.peers.harness import Peer, require
from wire import RemotingCommand, ResponseCode
from wire.aio import connect
from wire.capture import CommandRow, decode_capture

SEND_CODES = {10, 310}


def capture_answers(name: str) -> list[tuple[int, float]]:
    """(code, seconds from request to answer) of every send answered in a 09 capture."""
    out = []
    for row in decode_capture(shared_path("captures", "java-4.9.8", name)):
        if isinstance(row, CommandRow) and row.request is not None and row.command.is_response \
                and row.request.command.code in SEND_CODES:
            out.append((row.command.code, row.ts_end - row.request.ts_end))
    assert out, f"no send answered in {name}"
    return out


class Cluster:
    def __init__(self, base: Path) -> None:
        self.servers = OurServers(base)
        self.ns = self.servers.namesrv()
        self.master = self.servers.broker(namesrv=self.ns, name="broker-a", role="SYNC_MASTER",
                                          haSendHeartbeatInterval="1000")
        self.slave = self.servers.broker(namesrv=self.ns, name="broker-a", role="SLAVE",
                                         haSendHeartbeatInterval="1000")

    async def sends(self, n: int, topic: str = "SyncTopic") -> list[tuple[RemotingCommand, float]]:
        """``n`` SEND_MESSAGE (code 10, WAIT=true, as the C++ client sends them) and their times."""
        c = await connect("127.0.0.1", self.master.port)
        out = []
        try:
            for i in range(n):
                t0 = time.monotonic()
                r = await c.request(send_request(topic, f"sync9-{i}".encode() * 20, queue_id=i % 4, code=10),
                                    timeout=15)
                out.append((r, time.monotonic() - t0))
        finally:
            await c.aclose()
        return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("sync09"))
    try:
        yield c
    finally:
        c.servers.close()


def _wait_slave_connected(cluster: Cluster, timeout: float = 20.0) -> None:
    """Until a send is answered SEND_OK (the slave is connected and acks)."""
    deadline = time.monotonic() + timeout
    while True:
        (r, _), = asyncio.run(cluster.sends(1, topic="WarmUp"))
        if r.code == ResponseCode.SUCCESS:
            return
        assert time.monotonic() < deadline, f"the slave never acked: last answer {r.code} {r.remark}"
        time.sleep(0.2)


def _cpp_produce(cluster: Cluster, tmp: Path, run_id: str, count: int) -> tuple[list[dict[str, object]], float]:
    """The C++ client's results (sent or send_error, in order) and how long the run took."""
    require("cpp")
    t0 = time.time()
    peer = Peer("cpp", "produce", {"namesrv": cluster.ns.addr, "topic": "SyncTopic", "count": count,
                                   "size": 450, "run_id": run_id, "send_timeout_ms": 10000}, tmp)
    peer.finish(120)
    results = sorted(peer.sent + peer.events("send_error"), key=lambda r: int(r["i"]))  # type: ignore[arg-type]
    return results, max(float(r["t"]) for r in results) - t0  # type: ignore[arg-type]


def _gave_up(results: list[dict[str, object]]) -> bool:
    return all(r["event"] == "send_error" and "No route info of this topic" in str(r["error"]) for r in results)


@pytest.mark.shared
@pytest.mark.peers
def test_09_slave_up(cluster: Cluster, tmp_path: Path) -> None:
    expected = capture_answers("09-sync-master-slave-up.pcap")
    assert {code for code, _ in expected} == {0}
    _wait_slave_connected(cluster)
    got = asyncio.run(cluster.sends(6))
    assert [r.code for r, _ in got] == [0] * 6
    # the Java master answered within a few ms of the slave's ack; so do we
    assert max(t for _, t in got) < max(1.0, 10 * max(t for _, t in expected))
    sent, _ = _cpp_produce(cluster, tmp_path, "sync9", 5)
    assert [s.get("status") for s in sent] == ["SEND_OK"] * 5


@pytest.mark.shared
@pytest.mark.peers
def test_09_slave_frozen(cluster: Cluster, tmp_path: Path) -> None:
    expected = capture_answers("09-sync-master-slave-frozen.pcap")
    assert {code for code, _ in expected} == {12}
    java_wait = statistics.median(t for _, t in expected)
    assert 2.9 < java_wait < 3.5  # slaveTimeout, 3,000 ms
    _wait_slave_connected(cluster)
    cluster.slave.freeze()
    try:
        got = asyncio.run(cluster.sends(3))
        for r, took in got:
            assert r.code == ResponseCode.FLUSH_SLAVE_TIMEOUT, (r.code, r.remark)
            e = r.ext_fields
            assert e.get("msgId") and e.get("queueId") is not None and e.get("queueOffset") is not None
            assert java_wait - 0.3 < took < java_wait + 1.0, (took, java_wait)
        # three tries answered FLUSH_SLAVE_TIMEOUT after slaveTimeout each, then the client gives up
        results, took = _cpp_produce(cluster, tmp_path, "sync9f", 1)
        assert len(results) == 1 and _gave_up(results), results
        assert took > 3 * (java_wait - 0.3), took
    finally:
        cluster.slave.thaw()


@pytest.mark.shared
@pytest.mark.peers
def test_09_slave_down(cluster: Cluster, tmp_path: Path) -> None:
    expected = capture_answers("09-sync-master-slave-down.pcap")
    assert {code for code, _ in expected} == {11}
    assert max(t for _, t in expected) < 0.5
    _wait_slave_connected(cluster)
    cluster.slave.stop()
    deadline = time.monotonic() + 10
    while True:  # until the master has seen the connection close
        (r, took), = asyncio.run(cluster.sends(1))
        if r.code == ResponseCode.SLAVE_NOT_AVAILABLE:
            break
        assert time.monotonic() < deadline, (r.code, r.remark)
    got = asyncio.run(cluster.sends(3))
    for r, took in got:
        assert r.code == ResponseCode.SLAVE_NOT_AVAILABLE
        assert r.ext_fields.get("msgId") and r.ext_fields.get("queueOffset") is not None
        assert took < 0.5
    results, took = _cpp_produce(cluster, tmp_path, "sync9d", 3)
    assert len(results) == 3 and _gave_up(results), results
    assert took < 20

