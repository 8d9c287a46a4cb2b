# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The real peer clients find brokers through our name server.

The C++ client (PyPI ``rocketmq``, version 63) and ali-ons (version 121) both get the legacy
bare-key route form. Each producer asks our name server for its topic's route and must then send
its message to the broker the route names. The broker here is a stand-in that answers sends with
SEND_OK (the reference broker's own peer tests cover the rest); what this checks is that the
clients read our registrations, routes and (for the C++ client) the TBW102 fallback as they
read the Java name server's.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from reference_broker.config import NamesrvConfig
from reference_broker.namesrv import NameServer
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import RemotingConnection, connect, start_server
from wire.bodies import DataVersion, RegisterBrokerBody, TopicConfig, TopicConfigSerializeWrapper
from wire.headers import SendMessageResponseHeader, response

pytestmark = [pytest.mark.peers, pytest.mark.slow]

R = RequestCode
ROOT = Path(__file__).resolve().parents[2]
ALIONS = ROOT / "tests" / "peers" / "js" / "node_modules" / "ali-ons"
SENDS = {R.SEND_MESSAGE, R.SEND_MESSAGE_V2}


class StandInBroker:
    """Answers every send with SEND_OK and anything else with SUCCESS; remembers the sends."""

    def __init__(self) -> None:
        self.sends: list[RemotingCommand] = []
        self.offset = 0

    def handle(self, conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        if req.code in SENDS:
            self.sends.append(req)
            self.offset += 1
            header = SendMessageResponseHeader(msg_id=f"7F00000100002A9F{self.offset:016X}", queue_id=0,
                                               queue_offset=self.offset)
            return response(req, header)
        return req.response(ResponseCode.SUCCESS)


async def register(ns_port: int, broker_port: int, *topics: str) -> RemotingConnection:
    table = {t: TopicConfig(topic_name=t, read_queue_nums=1, write_queue_nums=1, perm=7 if t == "TBW102" else 6)
             for t in topics}
    body = RegisterBrokerBody(topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
        topic_config_table=table, data_version=DataVersion(counter=1, timestamp=1))).encode()
    addr = f"127.0.0.1:{broker_port}"
    conn = await connect("127.0.0.1", ns_port)
    answer = await conn.request(RemotingCommand.request(R.REGISTER_BROKER, {
        "brokerName": "broker-a", "brokerAddr": addr, "clusterName": "DefaultCluster",
        "haServerAddr": "127.0.0.1:1", "brokerId": 0, "compressed": False,
        "bodyCrc32": zlib.crc32(body) & 0x7FFFFFFF}, body))
    assert answer.code == ResponseCode.SUCCESS
    return conn  # kept open: closing it would drop the broker


async def run_peer(argv: list[str], env: dict[str, str], timeout: float = 60) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT, env=env)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    return proc.returncode or 0, out.decode(errors="replace")


async def scenario(tmp_path: Path, topics: tuple[str, ...], argv_for) -> tuple[StandInBroker, int, str]:
    broker = StandInBroker()
    cfg = NamesrvConfig(overrides={"kvConfigPath": str(tmp_path / "kv.json")})
    async with NameServer(cfg, port=0) as ns, await start_server(broker.handle, "127.0.0.1", 0) as bsrv:
        registration = await register(ns.port, bsrv.port, *topics)
        env = {**os.environ, "HOME": str(tmp_path)}
        code, out = await run_peer(argv_for(ns.address), env)
        await registration.aclose()
    return broker, code, out


CPP_PRODUCER = textwrap.dedent("""
    import sys
    from rocketmq.client import Message, Producer
    producer = Producer("PeerGroup", timeout=5000)
    producer.set_namesrv_addr(sys.argv[1])
    producer.start()
    message = Message(sys.argv[2])
    message.set_body("through the reference name server")
    result = producer.send_sync(message)
    print("STATUS", int(result.status), result.msg_id, flush=True)
    producer.shutdown()
""")


@pytest.mark.parametrize("topic", ["PeerTopic", "NewTopic"], ids=["known-topic", "tbw102-fallback"])
def test_cpp_producer_follows_our_route(tmp_path: Path, topic: str) -> None:
    pytest.importorskip("rocketmq.client", reason="the C++ peer (PyPI rocketmq) is not installed")
    script = tmp_path / "produce.py"
    script.write_text(CPP_PRODUCER)

    broker, code, out = asyncio.run(scenario(
        tmp_path, ("PeerTopic", "TBW102"), lambda ns: [sys.executable, str(script), ns, topic]))
    assert code == 0 and "STATUS 0" in out, out
    assert [s.ext_fields["topic"] for s in broker.sends] == [topic]


ALIONS_PRODUCER = textwrap.dedent("""
    const { Producer, Message } = require(process.argv[2]);
    const failing = { request() { throw new Error('no http'); }, requestThunk() { throw new Error('no http'); } };
    (async () => {
      const producer = new Producer({ httpclient: failing, nameSrv: process.argv[3],
                                      producerGroup: 'PeerGroup' });
      await producer.ready();
      const result = await producer.send(new Message('PeerTopic', 'TagA', 'through the reference name server'));
      console.log('STATUS ' + result.sendStatus + ' ' + result.msgId);
      await producer.close();
      process.exit(0);
    })().catch(err => { console.error(err); process.exit(1); });
""")


def test_alions_producer_follows_our_route(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not ALIONS.exists():
        pytest.skip("the ali-ons peer needs node and tests/peers/js/node_modules (npm ci in tests/peers/js)")
    script = tmp_path / "produce.js"
    script.write_text(ALIONS_PRODUCER)

    broker, code, out = asyncio.run(scenario(
        tmp_path, ("PeerTopic",), lambda ns: [node, str(script), str(ALIONS), ns]))
    assert code == 0 and "STATUS SEND_OK" in out, out
    assert [s.ext_fields["b"] for s in broker.sends] == ["PeerTopic"]  # b: the topic in the V2 header
