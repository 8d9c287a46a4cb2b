# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A registration of many topics does not hold the name server's event loop (hostile input), and
the route answers stay Java's: the requests that need the tables wait for it, as for Java's lock.

The bound is counted, not timed: a watchdog client on its own connection asks a question the
tables do not answer (GET_KV_CONFIG) again and again, and after each answer the test notes how
many topics the tables hold. A registration done in one piece shows the count jumping from 0 to
all of them between two answers; done in steps, it moves by at most a few steps' worth.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from reference_broker.config import NamesrvConfig
from reference_broker.namesrv import NameServer, RouteInfoManager
from reference_broker.namesrv.processor import NamesrvContext, process
from reference_broker.namesrv.routeinfo import STEP_TOPICS
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import RemotingConnection, connect
from wire.bodies import DataVersion, RegisterBrokerBody, TopicConfig, TopicConfigSerializeWrapper, TopicList

R = RequestCode
#: enough topics for twenty steps
TOPICS = 20 * STEP_TOPICS
#: the most the topic count may move between two watchdog answers: each answer takes four or five
#: turns of the loop, and the tables get one step per turn (the margin is for a loaded machine,
#: where loopback bytes may show a turn late); done in one piece, the jump is all 20 steps
MAX_JUMP = 10 * STEP_TOPICS
BROKER = "10.0.0.1:10911"


def config(tmp_path: Path) -> NamesrvConfig:
    return NamesrvConfig(overrides={"kvConfigPath": str(tmp_path / "kvConfig.json"),
                                    "configStorePath": str(tmp_path / "namesrv.properties")})


def registration(n: int = TOPICS) -> RemotingCommand:
    table = {f"GateTopic{i}": TopicConfig(topic_name=f"GateTopic{i}", read_queue_nums=4, write_queue_nums=4,
                                          perm=6 if i % 3 else 4) for i in range(n)}
    body = RegisterBrokerBody(topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
        topic_config_table=table, data_version=DataVersion(counter=7, timestamp=7))).encode()
    ext = {"brokerName": "broker-gate", "brokerAddr": BROKER, "clusterName": "GateCluster",
           "haServerAddr": "10.0.0.1:10912", "brokerId": 0, "compressed": False,
           "bodyCrc32": zlib.crc32(body) & 0x7FFFFFFF}
    return RemotingCommand.request(R.REGISTER_BROKER, ext, body)


class Watchdog:
    """Asks GET_KV_CONFIG without pause and notes the topic count after each answer."""

    def __init__(self, ns: NameServer, conn: RemotingConnection) -> None:
        self.ns, self.conn = ns, conn
        self.counts: list[int] = []
        self._stopping = False
        self._task = asyncio.get_running_loop().create_task(self._ask())

    async def _ask(self) -> None:
        question = RemotingCommand.request(R.GET_KV_CONFIG, {"namespace": "watchdog", "key": "missing"})
        while not self._stopping:
            answer = await self.conn.request(question, timeout=60)
            assert answer.code == ResponseCode.QUERY_NOT_FOUND
            self.counts.append(len(self.ns.routes.topic_queue_table))

    async def until(self, seen: Callable[[int], bool], too_late: int | None = None) -> None:
        """Wait for an answer after which the count is one that ``seen`` accepts; a count of
        ``too_late`` first fails (the moment to see has passed)."""
        i = len(self.counts)
        while True:
            while i < len(self.counts):
                if seen(self.counts[i]):
                    return
                assert self.counts[i] != too_late, f"the count went to {too_late} without a count in between"
                i += 1
            assert not self._task.done(), self._task
            await asyncio.sleep(0)

    async def stop(self) -> None:
        # no cancel: on Python 3.11 a cancellation that meets the answer inside wait_for is lost
        self._stopping = True
        await self._task

    def largest_jump(self) -> int:
        return max((abs(b - a) for a, b in itertools.pairwise(self.counts)), default=0)

    def in_between(self, n: int) -> int:
        return sum(1 for c in self.counts if 0 < c < n)


def run(main: Callable[[Path], Awaitable[None]], tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(main(tmp_path), 300))


def test_a_registration_of_many_topics_lets_the_loop_serve_other_connections(tmp_path: Path) -> None:
    async def main(tmp: Path) -> None:
        async with NameServer(config(tmp), port=0) as ns:
            dog = Watchdog(ns, await connect("127.0.0.1", ns.port))
            broker = await connect("127.0.0.1", ns.port)
            answer = await broker.request(registration(), timeout=240)
            assert answer.code == ResponseCode.SUCCESS
            await dog.until(lambda c: c == TOPICS)
            await dog.stop()
            # done in one piece, the count went from 0 to TOPICS between two answers
            assert dog.largest_jump() <= MAX_JUMP, (dog.largest_jump(), STEP_TOPICS)
            assert dog.in_between(TOPICS) >= TOPICS // MAX_JUMP
            assert ns.gate.turns >= TOPICS // STEP_TOPICS - 1
    run(main, tmp_path)


def test_route_requests_during_a_registration_get_the_answers_of_after_it(tmp_path: Path) -> None:
    """Java's route queries wait on the tables' lock: no answer shows half a registration."""
    request = registration()
    reference = NamesrvContext(config(tmp_path / "ref"), RouteInfoManager())
    assert process(reference, request) is not None
    route_question = RemotingCommand.request(R.GET_ROUTEINFO_BY_TOPIC, {"topic": f"GateTopic{TOPICS - 1}"})
    java_route = process(reference, route_question)
    assert java_route is not None and java_route.code == ResponseCode.SUCCESS

    async def main(tmp: Path) -> None:
        async with NameServer(config(tmp), port=0) as ns:
            dog = Watchdog(ns, await connect("127.0.0.1", ns.port))
            broker = await connect("127.0.0.1", ns.port)
            admin = await connect("127.0.0.1", ns.port)
            registered = asyncio.ensure_future(broker.request(request, timeout=240))
            await dog.until(lambda c: 0 < c < TOPICS, TOPICS)  # half way through its steps
            assert ns.gate.busy
            topics, route = await asyncio.gather(
                admin.request(RemotingCommand.request(R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER), timeout=60),
                admin.request(route_question, timeout=60))
            assert (await registered).code == ResponseCode.SUCCESS
            await dog.stop()
            assert topics.code == ResponseCode.SUCCESS
            assert len(TopicList.decode(topics.body).topic_list) == TOPICS
            assert route.code == ResponseCode.SUCCESS and route.body == java_route.body
            assert dog.largest_jump() <= MAX_JUMP
    run(main, tmp_path)


def test_a_registration_whose_connection_closes_finishes_then_the_broker_is_dropped_in_steps(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Java finishes a registration it has begun; the closed channel then drops the broker."""
    caplog.set_level(logging.INFO, "reference_broker.namesrv")

    async def main(tmp: Path) -> None:
        async with NameServer(config(tmp), port=0) as ns:
            dog = Watchdog(ns, await connect("127.0.0.1", ns.port))
            broker = await connect("127.0.0.1", ns.port)
            broker.oneway(registration())
            await dog.until(lambda c: 0 < c < TOPICS, TOPICS)
            await broker.aclose()
            await dog.until(lambda c: c == 0)
            await dog.stop()
            # the registration went on past the close (its last act is the broker's live entry)
            said = [r.getMessage() for r in caplog.records]
            registered = next(i for i, m in enumerate(said) if m.startswith("new broker registered: broker-gate"))
            dropped = next(i for i, m in enumerate(said) if m == f"broker {BROKER} dropped: its connection closed")
            assert registered < dropped
            assert dog.largest_jump() <= MAX_JUMP  # and the removal went in steps too
            assert not ns.routes.broker_live_table and not ns.routes.broker_addr_table
            assert not ns.gate.busy
    run(main, tmp_path)
