# Licensed under the Apache License, Version 2.0. See LICENSE.
"""SIGKILL of a SYNC_MASTER under load from the real C++ client: every message the client saw SEND_OK
is on the slave afterwards, readable with a pull from the slave.

A SYNC_MASTER answers SEND_OK only once a slave has acknowledged the message's bytes, so nothing
acknowledged can be missing from the slave when the master dies, whenever it dies. Each run starts
a fresh name server, SYNC_MASTER and slave (processes), lets the C++ producer send for a while, kills
the master at a random point, stops the producer, and pulls every queue from the slave.

The repetition count is ``MQCTL_SOAK_RUNS`` (default 1, the bounded sample CI runs); the long run is
``MQCTL_SOAK_RUNS=10 pytest tests/ha/test_kill_sync_master.py -s``, which prints one line per run.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path

import pytest

from tests.broker.helpers import pull_request, send_request
from tests.ha.servers import OurServers
from tests.peers.bodies import mark_of
from tests.peers.harness import Peer, require
from wire import RemotingCommand, ResponseCode
from wire.aio import connect
from wire.bodies import KVTable, TopicConfigSerializeWrapper
from wire.message import decode_messages

pytestmark = [pytest.mark.peers, pytest.mark.slow]

RUNS = int(os.environ.get("MQCTL_SOAK_RUNS", "1"))
TOPIC = "KillTopic"
QUEUES = 4


async def _request(port: int, cmd: RemotingCommand) -> RemotingCommand:
    c = await connect("127.0.0.1", port)
    try:
        return await c.request(cmd, timeout=10)
    finally:
        await c.aclose()


def _runtime(port: int) -> dict[str, str]:
    r = asyncio.run(_request(port, RemotingCommand(code=28)))
    return dict(KVTable.decode(r.body).table) if r.code == ResponseCode.SUCCESS and r.body else {}


def _topics(port: int) -> set[str]:
    r = asyncio.run(_request(port, RemotingCommand(code=21)))
    return set(TopicConfigSerializeWrapper.decode(r.body or b"{}").topic_config_table)


def _pull_all(port: int) -> dict[str, int]:
    """Every message of TOPIC on the broker at ``port``: mark -> count."""

    async def go() -> dict[str, int]:
        c = await connect("127.0.0.1", port)
        seen: dict[str, int] = {}
        try:
            for q in range(QUEUES):
                offset = 0
                while True:
                    r = await c.request(pull_request("KillCheck", TOPIC, q, offset, max_nums=32), timeout=10)
                    if r.code != ResponseCode.SUCCESS:
                        break
                    for m in decode_messages(r.body or b""):
                        mark = mark_of(m.body)
                        seen[mark] = seen.get(mark, 0) + 1
                    offset = int(r.ext_fields["nextBeginOffset"])
        finally:
            await c.aclose()
        return seen

    return asyncio.run(go())


def _wait(cond: object, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out: {what}"
        time.sleep(0.2)


@pytest.mark.parametrize("run", range(RUNS))
def test_sigkill_sync_master_loses_nothing_acknowledged(run: int, tmp_path: Path) -> None:
    require("cpp")
    with OurServers(tmp_path / "servers") as servers:
        ns = servers.namesrv()
        master = servers.broker(namesrv=ns, name="broker-k", role="SYNC_MASTER", haSendHeartbeatInterval="1000")
        slave = servers.broker(namesrv=ns, name="broker-k", role="SLAVE", haSendHeartbeatInterval="1000")
        # the topic exists on the master and, through the slave's 10 s table copy, on the slave
        create = RemotingCommand.request(17, {"topic": TOPIC, "defaultTopic": "TBW102", "readQueueNums": QUEUES,
                                              "writeQueueNums": QUEUES, "perm": 6, "topicFilterType": "SINGLE_TAG",
                                              "topicSysFlag": 0, "order": "false"})
        assert asyncio.run(_request(master.port, create)).code == ResponseCode.SUCCESS
        _wait(lambda: TOPIC in _topics(slave.port), "the slave's copy of the topic table", 30)
        _wait(lambda: asyncio.run(_request(master.port, send_request(TOPIC, b"warm", code=10))).code == 0,
              "the slave's first ack", 30)

        stop = tmp_path / "stop"
        producer = Peer("cpp", "produce", {"namesrv": ns.addr, "topic": TOPIC, "count": 1_000_000, "size": 300,
                                           "run_id": f"kill{run}", "interval_ms": 2, "send_timeout_ms": 3000,
                                           "stop_file": str(stop)}, tmp_path)
        target = random.randint(100, 400)
        producer.wait_for(lambda rs: sum(r["event"] == "sent" for r in rs) >= target, 120)
        master.kill()
        killed_at = time.time()
        time.sleep(1.0)
        stop.touch()
        producer.finish(120, codes=(0,))

        acked = {f"kill{run}:{r['i']}" for r in producer.sent if r["status"] == "SEND_OK"}
        assert len(acked) >= target
        # the slave dispatches what it copied behind the copy: pull once its ConsumeQueues hold all
        _wait(lambda: _runtime(slave.port).get("dispatchBehindBytes") == "0", "the slave's dispatch", 30)
        on_slave = _pull_all(slave.port)
        missing = sorted(acked - set(on_slave))
        sent_after = sum(1 for r in producer.sent if r["t"] > killed_at)
        print(f"run {run}: killed after {target} sends; {len(acked)} SEND_OK, all on the slave: "
              f"{not missing}; {len(on_slave)} distinct messages on the slave; {sent_after} SEND_OK after the kill")
        assert not missing, f"{len(missing)} acknowledged messages are not on the slave, e.g. {missing[:5]}"
