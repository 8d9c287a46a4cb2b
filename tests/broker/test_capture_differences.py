# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The small differences the Java 4.9.8 captures show, each checked against the recorded answer:
the remark Java leaves on UPDATE_AND_CREATE_TOPIC's success, and the system topics a Java broker
has once its transaction check service has run (RMQ_SYS_TRANS_HALF_TOPIC)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.broker.helpers import client, run, running_cluster
from tests.conftest import shared_path
from tests.pcaputil import Direction, streams
from wire import FrameBuffer, RemotingCommand, ResponseCode, decode_frame
from wire.bodies import TopicList

pytestmark = pytest.mark.shared

MASTER_PORT, SLAVE_PORT = 10911, 10921
Exchange = tuple[int, RemotingCommand, RemotingCommand | None]


def _frames(d: Direction | None) -> list[RemotingCommand]:
    out: list[RemotingCommand] = []
    if d is None:
        return out
    for _, chunk in d.chunks:
        fb = FrameBuffer()
        fb.feed(bytes(chunk))
        while (f := fb.next_frame()) is not None:
            out.append(decode_frame(f))
    return out


def client_exchanges(name: str) -> list[Exchange]:
    """The requests clients sent to the two brokers of a Java 4.9.8 capture on connections opened
    inside it (the brokers' background traffic left out), each with Java's answer."""
    dirs = streams(shared_path("captures", "java-4.9.8", name))
    by_key = {d.key: d for d in dirs}
    out: list[Exchange] = []
    for d in sorted(dirs, key=lambda d: d.first_ts):
        if d.dport not in (MASTER_PORT, SLAVE_PORT) or not d.syn:
            continue
        answers = {r.opaque: r for r in _frames(by_key.get((d.dst, d.dport, d.src, d.sport)))}
        for req in _frames(d):
            out.append((d.dport, req, None if req.is_oneway else answers.get(req.opaque)))
    return out


@pytest.mark.parametrize("name", ["03-updateTopic.pcap", "03-updateTopicPerm.pcap"])
def test_update_and_create_topic_success_remark(tmp_path: Path, name: str) -> None:
    exchanges = [(req, java) for _, req, java in client_exchanges(name) if req.code == 17]
    assert exchanges and all(java is not None for _, java in exchanges)

    async def main() -> None:
        async with running_cluster(tmp_path) as (_, b):
            conn = await client(b)
            for req, java in exchanges:
                assert java is not None
                ours = await conn.request(req)
                assert (ours.code, ours.remark) == (java.code, java.remark) == (0, "not set any response code")
                assert set(ours.ext_fields) == set(java.ext_fields)
            await conn.aclose()

    run(main())


def _java_topic_list() -> set[str]:
    """The topics in the name server's GET_ALL_TOPIC_LIST_FROM_NAMESERVER answer of 02-topicList."""
    for d in streams(shared_path("captures", "java-4.9.8", "02-topicList.pcap")):
        if d.sport != 9876:
            continue
        for _, chunk in d.chunks:
            fb = FrameBuffer()
            fb.feed(bytes(chunk))
            while (f := fb.next_frame()) is not None:
                cmd = decode_frame(f)
                if cmd.is_response and cmd.code == 0 and cmd.body and b"topicList" in cmd.body:
                    return set(TopicList.decode(cmd.body).topic_list)
    raise AssertionError("no topic list in 02-topicList.pcap")


def test_system_topics_after_the_first_transaction_check(tmp_path: Path) -> None:
    # every topic of the recorded name server but those the capture's scenario made
    java = _java_topic_list() - {"CapTopic", "%RETRY%CapGroup"}
    assert "RMQ_SYS_TRANS_HALF_TOPIC" in java

    async def main() -> None:
        async with running_cluster(tmp_path, transactionCheckInterval="200", brokerName="broker-a",
                                   brokerClusterName="DefaultCluster") as (ns, _b):
            conn = await client(ns.port)
            loop = asyncio.get_running_loop()
            end = loop.time() + 20
            while True:
                r = await conn.request(RemotingCommand.request(206))
                assert r.code == ResponseCode.SUCCESS
                ours = set(TopicList.decode(r.body or b"").topic_list)
                if "RMQ_SYS_TRANS_HALF_TOPIC" in ours or loop.time() > end:
                    break
                await asyncio.sleep(0.05)
            await conn.aclose()
            assert java - ours == set()
            assert "RMQ_SYS_TRANS_OP_HALF_TOPIC" not in ours  # not a topic on a Java broker either

    run(main())
