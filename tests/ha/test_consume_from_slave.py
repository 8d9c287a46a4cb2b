# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The real clients keep consuming from the slave when the master is gone.

A SYNC_MASTER (so that every SEND_OK message is on the slave) takes a backlog from the C++ producer;
a consumer of each real client (the C++ client and ali-ons) starts reading it, and once it has read
some, the master is killed. The name server drops the master when its connection closes, the
clients' next route has only the slave under the broker name, and they pull the rest from the
slave (``findBrokerAddressInSubscribe``: the master if listed, else a slave). Every acknowledged
message is consumed, by each client."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.broker.helpers import send_request
from tests.ha.servers import OurServers
from tests.peers.harness import Peer, require
from wire import RemotingCommand, ResponseCode
from wire.aio import connect
from wire.bodies import TopicConfigSerializeWrapper

pytestmark = [pytest.mark.peers, pytest.mark.slow]

TOPIC = "SlaveReadTopic"
QUEUES = 4
BACKLOG = 3000


async def _request(port: int, cmd: RemotingCommand) -> RemotingCommand:
    c = await connect("127.0.0.1", port)
    try:
        return await c.request(cmd, timeout=10)
    finally:
        await c.aclose()


def _wait(cond: object, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out: {what}"
        time.sleep(0.1)


@pytest.mark.parametrize("kind", ["cpp", "js"])
def test_consumers_finish_from_the_slave_after_the_master_dies(kind: str, tmp_path: Path) -> None:
    require("cpp", kind)
    with OurServers(tmp_path / "servers") as servers:
        ns = servers.namesrv()
        master = servers.broker(namesrv=ns, name="broker-r", role="SYNC_MASTER", haSendHeartbeatInterval="1000")
        slave = servers.broker(namesrv=ns, name="broker-r", role="SLAVE", haSendHeartbeatInterval="1000")
        create = RemotingCommand.request(17, {"topic": TOPIC, "defaultTopic": "TBW102", "readQueueNums": QUEUES,
                                              "writeQueueNums": QUEUES, "perm": 6, "topicFilterType": "SINGLE_TAG",
                                              "topicSysFlag": 0, "order": "false"})
        assert asyncio.run(_request(master.port, create)).code == ResponseCode.SUCCESS

        def slave_knows_topic() -> bool:
            r = asyncio.run(_request(slave.port, RemotingCommand(code=21)))
            return TOPIC in TopicConfigSerializeWrapper.decode(r.body or b"{}").topic_config_table

        _wait(slave_knows_topic, "the slave's copy of the topic table", 30)
        _wait(lambda: asyncio.run(_request(master.port, send_request(TOPIC, b"warm", code=10))).code == 0,
              "the slave's first ack", 30)
        producer = Peer("cpp", "produce", {"namesrv": ns.addr, "topic": TOPIC, "count": BACKLOG, "size": 500,
                                           "run_id": "backlog"}, tmp_path)
        producer.finish(300)
        acked = {f"backlog:{r['i']}" for r in producer.sent if r["status"] == "SEND_OK"}
        assert len(acked) == BACKLOG

        consumer = Peer(kind, "consume", {"namesrv": ns.addr, "topic": TOPIC, "group": f"SlaveRead{kind}",
                                          "timeout": 240}, tmp_path)
        consumer.wait_for(lambda rs: sum(r["event"] == "msg" for r in rs) >= 100, 120)
        master.kill()
        read_before = len({m["mark"] for m in consumer.messages})
        assert read_before < BACKLOG, "the consumer read everything before the master died: nothing was read from the slave"
        consumer.wait_for(lambda rs: acked <= {r.get("mark") for r in rs}, 180)
        consumer.kill()
        got = {m["mark"] for m in consumer.messages}
        print(f"{kind}: {read_before} read before the master died, {len(got & acked) - read_before} "
              f"after it, from the slave; {len(acked)} acknowledged, all consumed")
        assert acked <= got
