# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The broker-side client requests of the real Java captures, sent in order to a reference
cluster set up as the captures' MANIFEST describes (DefaultCluster/broker-a, a master and a
slave, CapTopic 4/4 with 5 messages per queue consumed by CapGroup, RoTopic with perm 4): the
same response codes as the Java 4.9.8 servers gave, and the same figures where they depend only
on that set-up."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reference_broker.broker import Broker
from tests.broker.helpers import client, running_broker, running_cluster, send_request
from tests.conftest import shared_path
from tests.pcaputil import Direction, streams
from wire import FrameBuffer, RemotingCommand, ResponseCode, decode_frame
from wire.bodies import ConsumeStats, KVTable, PropertiesBody, TopicStatsTable

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
    """The requests clients sent to the two brokers on connections opened inside the capture
    (background traffic between the brokers is left out), each with Java's answer."""
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


async def _set_up(master: Broker) -> None:
    """The state the MANIFEST describes before scenarios 02 and 10."""
    c = await client(master)
    for topic, perm in (("CapTopic", 6), ("RoTopic", 4)):
        r = await c.request(RemotingCommand.request(17, {
            "topic": topic, "defaultTopic": "TBW102", "readQueueNums": 4, "writeQueueNums": 4, "perm": perm,
            "topicFilterType": "SINGLE_TAG", "order": False}))
        assert r.code == ResponseCode.SUCCESS
    for q in range(4):
        for i in range(5):
            assert (await c.request(send_request("CapTopic", f"cap {q} {i}".encode(), queue_id=q))).code == 0
        c.oneway(RemotingCommand.request(15, {"consumerGroup": "CapGroup", "topic": "CapTopic", "queueId": q,
                                              "commitOffset": 5}))
    await c.request(send_request("RoTopic", b"earlier"))
    await c.aclose()


async def _replay(exchanges: list[Exchange], ports: dict[int, int]) -> list[tuple[RemotingCommand,
                                                                                 RemotingCommand | None,
                                                                                 RemotingCommand | None]]:
    results = []
    conns = {}
    for port in ports:
        conns[port] = await client(ports[port])
    for port, req, java in exchanges:
        ours = None
        if req.is_oneway:
            conns[port].oneway(req)
        else:
            ours = await conns[port].request(req, timeout=10)
        results.append((req, java, ours))
    await asyncio.sleep(0.05)
    for c in conns.values():
        await c.aclose()
    return results


def _check_codes(results: list[tuple[RemotingCommand, RemotingCommand | None, RemotingCommand | None]]) -> None:
    for req, java, ours in results:
        if java is None:
            assert ours is None or req.is_oneway, f"{req}: Java did not answer, we did: {ours}"
            continue
        assert ours is not None, f"{req}: no answer"
        assert (ours.code, ours.serialize_type) == (java.code, java.serialize_type), (req, java, ours)


SCENARIO_02 = ["02-brokerStatus.pcap", "02-clusterList.pcap", "02-topicStatus.pcap", "02-getBrokerConfig.pcap",
               "02-consumerProgress.pcap"]


@pytest.mark.parametrize("name", SCENARIO_02)
def test_read_only_admin_captures(tmp_path: Path, name: str) -> None:
    exchanges = client_exchanges(name)
    assert exchanges, name

    async def main() -> None:
        async with running_cluster(tmp_path / "m") as (ns, master), \
                running_broker(tmp_path / "s", ns.address, brokerRole="SLAVE", brokerId="1") as slave:
            await _set_up(master)
            results = await _replay(exchanges, {MASTER_PORT: master.port, SLAVE_PORT: slave.port})
            _check_codes(results)
            for req, java, ours in results:
                if java is None or ours is None or java.code != 0:
                    continue
                if req.code == 28:
                    assert set(KVTable.decode(java.body).table) - set(KVTable.decode(ours.body).table) <= {
                        k for k in KVTable.decode(java.body).table if k.startswith("commitLogDiskRatio_")}
                elif req.code == 26:
                    assert set(PropertiesBody.decode(java.body).table) <= set(PropertiesBody.decode(ours.body).table)
                    assert set(ours.ext_fields) == set(java.ext_fields) == {"version"}
                elif req.code == 202:
                    def offsets(b: bytes) -> dict[int, tuple[int, int]]:
                        return {mq.queue_id: (o.min_offset, o.max_offset)
                                for mq, o in TopicStatsTable.decode(b).offset_table.items()}
                    assert offsets(ours.body) == offsets(java.body) == {q: (0, 5) for q in range(4)}
                elif req.code == 208:
                    def progress(b: bytes) -> dict[tuple[str, int], tuple[int, int]]:
                        return {(mq.topic, mq.queue_id): (o.broker_offset, o.consumer_offset)
                                for mq, o in ConsumeStats.decode(b).offset_table.items()}
                    assert progress(ours.body) == progress(java.body)

    asyncio.run(asyncio.wait_for(main(), 60))


def test_error_response_captures(tmp_path: Path) -> None:
    exchanges = client_exchanges("10-error-responses.pcap")
    assert [req.code for _, req, _ in exchanges] == [9999, 11, 11, 10, 10, 10]

    async def main() -> None:
        async with running_cluster(tmp_path / "m") as (ns, master), \
                running_broker(tmp_path / "s", ns.address, brokerRole="SLAVE", brokerId="1") as slave:
            await _set_up(master)
            results = await _replay(exchanges, {MASTER_PORT: master.port, SLAVE_PORT: slave.port})
            _check_codes(results)
            by_case = [(java, ours) for _, java, ours in results]
            assert all(java is not None and ours is not None for java, ours in by_case)
            unknown, group, badly, ro, schedule, to_slave = by_case
            # 3: the unknown code's remark; 4: the missing group's remark
            for java, ours in (unknown, group, schedule):
                assert ours.remark == java.remark and ours.ext_fields == java.ext_fields
            # 5: OFFSET_OVERFLOW_BADLY with the queue's offsets
            assert badly[1].remark == badly[0].remark == "OFFSET_OVERFLOW_BADLY"
            assert badly[1].ext_fields == badly[0].ext_fields
            # 6: a read-only topic takes the send; the same answer fields
            assert set(ro[1].ext_fields) == set(ro[0].ext_fields)
            assert ro[1].ext_fields["queueOffset"] == ro[0].ext_fields["queueOffset"] == "1"
            # 8: the slave's refusal, up to the disk figures
            j, o = to_slave
            assert j.remark.split("[")[0] == o.remark.split("[")[0] and j.remark.split("]")[1] == o.remark.split("]")[1]
            assert o.ext_fields == j.ext_fields

    asyncio.run(asyncio.wait_for(main(), 60))


def test_malformed_frame_captures(tmp_path: Path) -> None:
    # 10-malformed-frames: the broker closes each connection without an answer
    from tests.broker.helpers import raw_exchange

    dirs = [d for d in streams(shared_path("captures", "java-4.9.8", "10-malformed-frames.pcap"))
            if d.dport == MASTER_PORT and d.syn]
    assert len(dirs) == 3

    async def main() -> None:
        async with running_broker(tmp_path) as b:
            for d in dirs:
                assert await raw_exchange(b.port, bytes(d.data), 1) == []
            c = await client(b)
            assert (await c.request(RemotingCommand.request(28))).code == ResponseCode.SUCCESS
            await c.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))
