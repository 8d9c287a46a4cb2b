# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Shared pieces of the broker tests: real brokers and name servers on ephemeral ports, and
requests built the way the Java, C++ and ali-ons clients build them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from reference_broker.broker import Broker
from reference_broker.config import BrokerConfig, NamesrvConfig
from reference_broker.namesrv import NameServer
from wire import FrameBuffer, RemotingCommand, SerializeType, decode_frame
from wire.aio import RemotingConnection, connect
from wire.bodies import ConsumerData, HeartbeatData, ProducerData, SubscriptionData
from wire.message import StoredMessage, decode_messages, encode_properties


def run(coro: Awaitable[Any], timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def broker_config(root: Path, namesrv: str = "", **overrides: str) -> BrokerConfig:
    values = {"storePathRootDir": str(root), "brokerName": "broker-a", "brokerClusterName": "DefaultCluster",
              "namesrvAddr": namesrv, "brokerIP1": "127.0.0.1", "brokerIP2": "127.0.0.1",
              "mappedFileSizeCommitLog": str(1 << 20), "mappedFileSizeConsumeQueue": str(20 * 1000),
              "maxHashSlotNum": "1000", "maxIndexNum": "4000"}
    values.update(overrides)
    return BrokerConfig(overrides=values)


def namesrv_config(root: Path) -> NamesrvConfig:
    return NamesrvConfig(overrides={"kvConfigPath": str(root / "kvConfig.json"),
                                    "configStorePath": str(root / "namesrv.properties")})


@contextlib.asynccontextmanager
async def running_broker(root: Path, namesrv: str = "", **overrides: str) -> AsyncIterator[Broker]:
    async with Broker(broker_config(root, namesrv, **overrides), host="127.0.0.1", port=0) as b:
        yield b


@contextlib.asynccontextmanager
async def running_cluster(tmp: Path, **overrides: str) -> AsyncIterator[tuple[NameServer, Broker]]:
    async with NameServer(namesrv_config(tmp / "ns"), port=0) as ns, \
            running_broker(tmp / "store", ns.address, **overrides) as b:
        yield ns, b


async def client(b: Broker | int, handler: Any = None) -> RemotingConnection:
    port = b if isinstance(b, int) else b.port
    return await connect("127.0.0.1", port, handler=handler)


def send_request(topic: str, body: bytes, *, queue_id: int = 0, tags: str | None = None, keys: str | None = None,
                 uniq: str | None = None, extra_props: dict[str, str] | None = None, code: int = 310,
                 reconsume_times: int = 0, max_reconsume_times: int | None = None, sys_flag: int = 0,
                 default_topic_queue_nums: int = 4, serialize_type: SerializeType = SerializeType.JSON,
                 producer_group: str = "PG", version: int = 409) -> RemotingCommand:
    """A send as the Java client builds it (V2 short keys for 310/320, V1 names for 10)."""
    props: dict[str, str] = {}
    if keys is not None:
        props["KEYS"] = keys
    if uniq is not None:
        props["UNIQ_KEY"] = uniq
    props["WAIT"] = "true"
    if tags is not None:
        props["TAGS"] = tags
    props.update(extra_props or {})
    values: dict[str, Any] = {
        "producerGroup": producer_group, "topic": topic, "defaultTopic": "TBW102",
        "defaultTopicQueueNums": default_topic_queue_nums, "queueId": queue_id, "sysFlag": sys_flag,
        "bornTimestamp": 1795341862223, "flag": 0, "properties": encode_properties(props),
        "reconsumeTimes": reconsume_times, "unitMode": False, "batch": code == 320,
    }
    if max_reconsume_times is not None:
        values["maxReconsumeTimes"] = max_reconsume_times
    if code in (310, 320):
        short = dict(zip(("producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId",
                          "sysFlag", "bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode",
                          "maxReconsumeTimes", "batch"), "abcdefghijklm", strict=True))
        values = {short[k]: v for k, v in values.items()}
    return RemotingCommand.request(code, values, body, serialize_type=serialize_type, version=version)


def pull_request(group: str, topic: str, queue_id: int, offset: int, *, sys_flag: int = 4,
                 max_nums: int = 32, suspend_ms: int = 0, subscription: str = "*", commit_offset: int = 0,
                 sub_version: int = 0, serialize_type: SerializeType = SerializeType.JSON) -> RemotingCommand:
    return RemotingCommand.request(11, {
        "consumerGroup": group, "topic": topic, "queueId": queue_id, "queueOffset": offset,
        "maxMsgNums": max_nums, "sysFlag": sys_flag, "commitOffset": commit_offset,
        "suspendTimeoutMillis": suspend_ms, "subscription": subscription, "subVersion": sub_version,
        "expressionType": "TAG"}, serialize_type=serialize_type)


def heartbeat_request(client_id: str, *, consumer_group: str | None = None, topics: tuple[str, ...] = (),
                      producer_group: str | None = None, sub_string: str = "*",
                      message_model: str = "CLUSTERING") -> RemotingCommand:
    consumers = ()
    if consumer_group is not None:
        subs = tuple(SubscriptionData(topic=t, sub_string=sub_string, sub_version=1) for t in topics)
        consumers = (ConsumerData(group_name=consumer_group, consume_type="CONSUME_PASSIVELY",
                                  message_model=message_model, consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                                  subscription_data_set=subs),)
    producers = (ProducerData(group_name=producer_group),) if producer_group is not None else ()
    body = HeartbeatData(client_id=client_id, consumer_data_set=consumers, producer_data_set=producers).encode()
    return RemotingCommand.request(34, None, body)


def messages(response: RemotingCommand) -> list[StoredMessage]:
    return decode_messages(response.body or b"")


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "condition not reached in time"
        await asyncio.sleep(0.02)


async def raw_exchange(port: int, data: bytes, answers: int, timeout: float = 10) -> list[RemotingCommand]:
    """Write raw bytes on a fresh connection and read ``answers`` frames back (fewer if the
    broker closes the connection first)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await read_frames(reader, FrameBuffer(), answers, timeout)
    finally:
        writer.close()


async def read_frames(reader: asyncio.StreamReader, fb: FrameBuffer, n: int,
                      timeout: float = 10) -> list[RemotingCommand]:
    """Read until at least ``n`` frames are cut (fewer if the peer closes first), each read's
    frames all taken; ``fb`` keeps a frame cut short for the next call."""
    out: list[RemotingCommand] = []
    while len(out) < n:
        chunk = await asyncio.wait_for(reader.read(65536), timeout)
        if not chunk:
            break
        fb.feed(chunk)
        while (f := fb.next_frame()) is not None:
            out.append(decode_frame(f))
    return out
