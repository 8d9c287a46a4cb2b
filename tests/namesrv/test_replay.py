# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Replay the real 4.9.8 name-server traffic against our name server and compare the answers.

Every request the captures hold for port 9876 (scenarios 01 to 07 and 10, up to the restart of
the servers for scenarios 08, 09 and 04-servers-startup) is sent, byte for byte and in capture
time order, on one connection per captured TCP connection: the brokers' registration
connections stay open from one capture to the next, as they did. Each answer is compared with
the Java name server's: code, remark, ext fields, serialize type and the body bytes. Where Java
sent nothing (oneway registrations, the unknown code 9999), we must not answer either.

What the captures cannot show is traffic between them. Two things happened there and are
accounted for from the data, not ignored:

* topics created between scenario 02 and 03 (registered by periodic registrations nobody
  captured) are part of Java's WIPE/ADD_WRITE_PERM counts: the expected count is Java's minus
  the topics the broker's next full registration lists that no replayed registration carried;
* JsTopic was created before scenario 06 outside any capture: route requests Java answered for
  a topic that no replayed registration had carried yet are not compared (the registrations
  are still replayed, and the later requests for JsTopic are compared).

GET_NAMESRV_CONFIG is compared as a table: the same keys (ours has two more, the scan interval
and the expiry time) with the same values, except the paths of the Java installation.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reference_broker.config import NAMESRV_EXTRA, NamesrvConfig
from reference_broker.namesrv import NameServer
from tests.namesrv.captured import Exchange, exchanges, raw_connections
from wire import DecodeError, FrameBuffer, RemotingCommand, RequestCode, decode_frame, encode_command
from wire.bodies import RegisterBrokerBody, decode_properties

pytestmark = pytest.mark.shared

R = RequestCode

#: the scenarios replayed, in any order (exchanges() sorts by time)
REPLAYED = (
    "01-broker-registration", "02-clusterList", "02-topicList", "02-topicRoute", "02-topicStatus",
    "02-brokerStatus", "02-getBrokerConfig", "02-consumerProgress", "02-topicClusterList",
    "02-getNamesrvConfig", "03-updateTopic", "03-updateSubGroup", "03-updateKvConfig", "03-deleteKvConfig",
    "03-updateTopicPerm", "03-deleteTopic", "03-wipeWritePerm", "03-addWritePerm", "04-rocketmq-clusterList",
    "04-rocketmq-topicRoute", "04-rocketmq-brokerStatus", "04-rocketmq-sendMessage",
    "04-rocketmq-consumeMessage", "05-cpp-produce", "05-cpp-consume", "06-alions-produce",
    "06-alions-consume", "07-sendMessage-tag-key", "07-queryMsgByKey", "07-queryMsgByOffset",
    "07-queryMsgById-offsetId", "07-printMsg", "07-queryMsgByUniqueKey", "10-malformed-frames",
    "10-error-responses",
)
#: paths of the Java installation, which differ from ours by nature
PATH_KEYS = frozenset({"kvConfigPath", "configStorePath", "rocketmqHome"})
#: keys of our name server that the 4.9.8 one does not have
OUR_EXTRA_KEYS = frozenset(NAMESRV_EXTRA)
NO_ANSWER_WAIT = 0.5


@dataclass
class Peer:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    frames: FrameBuffer = field(default_factory=FrameBuffer)

    async def answer(self, opaque: int, timeout: float = 5.0) -> RemotingCommand | None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            frame = self.frames.next_frame()
            if frame is not None:
                cmd = decode_frame(frame)
                if cmd.is_response and cmd.opaque == opaque:
                    return cmd
                continue
            left = end - loop.time()
            if left <= 0:
                return None
            try:
                data = await asyncio.wait_for(self.reader.read(65536), left)
            except TimeoutError:
                return None
            if not data:
                raise AssertionError("the name server closed the connection")
            self.frames.feed(data)

    async def barrier(self) -> None:
        # requests on one connection are handled in order: once this is answered, every
        # request sent before it (a oneway registration included) has been processed
        probe = RemotingCommand.request(R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, opaque=2**31 - 1)
        self.writer.write(encode_command(probe))
        assert await self.answer(probe.opaque) is not None


@dataclass
class Outcome:
    exchange: Exchange
    ours: RemotingCommand | None
    #: the topics our name server routes once the request is handled
    topics_after: frozenset[str] = frozenset()


async def _replay(xs: list[Exchange], tmp_path: Path) -> list[Outcome]:
    cfg = NamesrvConfig(overrides={"kvConfigPath": str(tmp_path / "kvConfig.json"),
                                   "configStorePath": str(tmp_path / "namesrv.properties")})
    outcomes: list[Outcome] = []
    async with NameServer(cfg, port=0) as ns:
        peers: dict[tuple[str, int], Peer] = {}
        for x in xs:
            peer = peers.get(x.conn)
            if peer is None:
                peer = peers[x.conn] = Peer(*await asyncio.open_connection("127.0.0.1", ns.port))
            peer.writer.write(x.raw)
            await peer.writer.drain()
            if x.request.is_oneway:
                await peer.barrier()
                outcomes.append(Outcome(x, None, frozenset(ns.routes.topic_queue_table)))
                continue
            wait = 5.0 if x.response is not None else NO_ANSWER_WAIT
            answer = await peer.answer(x.request.opaque, wait)
            if x.response is None:
                await peer.barrier()  # no answer, and the connection is still served
            outcomes.append(Outcome(x, answer, frozenset(ns.routes.topic_queue_table)))
        for peer in peers.values():
            peer.writer.close()
    return outcomes


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    xs = exchanges(*REPLAYED)
    return asyncio.run(asyncio.wait_for(_replay(xs, tmp_path_factory.mktemp("replay")), 120))


def _registered_topics(req: RemotingCommand) -> set[str]:
    if req.code != R.REGISTER_BROKER or req.ext_fields.get("brokerId") != "0" or req.body is None:
        return set()
    return set(RegisterBrokerBody.decode(req.body).topic_config_serialize_wrapper.topic_config_table)


def test_every_request_of_the_captures_was_replayed(replayed: list[Outcome]) -> None:
    captures = {o.exchange.capture for o in replayed}
    # 10-malformed-frames only contributes its background registration
    assert captures == set(REPLAYED)
    codes = {o.exchange.request.code for o in replayed}
    assert {R.REGISTER_BROKER, R.GET_ROUTEINFO_BY_TOPIC, R.GET_BROKER_CLUSTER_INFO,
            R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, R.GET_NAMESRV_CONFIG, R.PUT_KV_CONFIG, R.DELETE_KV_CONFIG,
            R.DELETE_TOPIC_IN_NAMESRV, R.WIPE_WRITE_PERM_OF_BROKER, R.ADD_WRITE_PERM_OF_BROKER, 9999} <= codes


def test_same_answers_as_the_java_name_server(replayed: list[Outcome]) -> None:
    compared = 0
    known: set[str] = set()
    deleted: set[str] = set()
    last_full: set[str] = set()
    created_elsewhere: set[str] = set()
    for o in replayed:
        x, java, ours = o.exchange, o.exchange.response, o.ours
        registered = _registered_topics(x.request)
        known |= registered
        if len(registered) > 1:  # a full registration, not the one-topic increment of a topic update
            last_full = registered
        topic = x.request.ext_fields.get("topic", "")
        if x.request.code == R.DELETE_TOPIC_IN_NAMESRV:
            deleted.add(topic)
        if x.request.code == R.GET_ROUTEINFO_BY_TOPIC and java is not None and java.code == 0 \
                and topic not in known:
            created_elsewhere.add(topic)  # Java knew it from a registration no capture holds
            continue
        where = f"{x.capture} {x.request!r}"
        if java is None:
            assert ours is None, f"{where}: Java sent no answer, we sent {ours!r}"
            continue
        assert ours is not None, f"{where}: no answer"
        compared += 1
        assert (ours.code, ours.remark, ours.serialize_type) == (java.code, java.remark, java.serialize_type), where
        assert ours.flag == java.flag and ours.language == java.language and ours.version == java.version, where
        if x.request.code in (R.WIPE_WRITE_PERM_OF_BROKER, R.ADD_WRITE_PERM_OF_BROKER):
            # topics Java had from registrations nobody captured: registered before, not deleted,
            # yet not routed by us because the full registration that lists them came with a
            # data version Java (and we) had already seen
            between = known - deleted - o.topics_after
            assert between and between <= last_full, where
            (key, count), = java.ext_fields.items()
            assert dict(ours.ext_fields) == {key: str(int(count) - len(between))}, where
        else:
            assert dict(ours.ext_fields) == dict(java.ext_fields), where
        if x.request.code == R.GET_NAMESRV_CONFIG:
            theirs, mine = decode_properties(java.body), decode_properties(ours.body)
            assert set(mine) - set(theirs) == OUR_EXTRA_KEYS, where
            assert {k: v for k, v in mine.items() if k in theirs and k not in PATH_KEYS} == \
                   {k: v for k, v in theirs.items() if k not in PATH_KEYS}, where
        else:
            assert ours.body == java.body, f"{where}: body\n java {java.body!r}\n ours {ours.body!r}"
    assert compared > 70
    # the MANIFEST: "The topic JsTopic was pre-created with mqadmin updateTopic (not in this capture)"
    assert created_elsewhere == {"JsTopic"}


def test_the_routes_of_capture_02(replayed: list[Outcome]) -> None:
    # spelled out for the reader: CapTopic's route after the registrations, as Java sent it
    o = next(o for o in replayed if o.exchange.capture == "02-topicRoute"
             and o.exchange.request.ext_fields.get("topic") == "CapTopic")
    assert o.ours is not None and o.exchange.response is not None
    assert o.ours.body == o.exchange.response.body
    assert b'"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"}' in o.ours.body


def test_malformed_frames_of_the_capture_close_the_connection(tmp_path: Path) -> None:
    # 10-malformed-frames: each bad frame on its own connection; Java closed each without a word
    bad = [c for c in raw_connections("10-malformed-frames") if not _decodes(c.sent)]
    assert len(bad) == 3 and all(c.answered == b"" for c in bad)

    async def main() -> None:
        cfg = NamesrvConfig(overrides={"kvConfigPath": str(tmp_path / "kv.json")})
        async with NameServer(cfg, port=0) as ns:
            keep = Peer(*await asyncio.open_connection("127.0.0.1", ns.port))
            for c in bad:
                reader, writer = await asyncio.open_connection("127.0.0.1", ns.port)
                writer.write(c.sent)
                await writer.drain()
                assert await asyncio.wait_for(reader.read(), 3) == b""
                writer.close()
            await keep.barrier()  # every other connection is still served
            keep.writer.close()
    asyncio.run(asyncio.wait_for(main(), 30))


def _decodes(data: bytes) -> bool:
    fb = FrameBuffer()
    fb.feed(data)
    try:
        frame = fb.next_frame()
        if frame is not None:
            decode_frame(frame)
    except DecodeError:
        return False
    return True
