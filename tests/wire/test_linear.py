# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Decoding cost is linear in the input size, at every layer.

Nothing is timed: each decoder runs under a counter of the Python bytecode instructions it
executes (``sys.monitoring``'s INSTRUCTION event; a tracer with ``f_trace_opcodes`` on 3.11),
once on an input and once on an input ten times as large of the same shape. Linear work gives about ten times the count (less, for the fixed part); work
that grows with the square of the input gives about a hundred. The shapes are the expensive ones:
many small entries, long strings with escapes, the lenient fastjson forms that the standard
parser declines, long numbers. Conversions done in C (``int()``, ``Decimal()``) are not counted
here; their inputs are bounded before they are called (``wire/_javanum.py``, ``fastjson``'s number
bounds, tested in ``test_hostile_numbers.py``).
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from wire import FrameBuffer, RemotingCommand, SerializeType, decode_frame, encode_command, fastjson
from wire.bodies import (
    BrokerData,
    ClusterInfo,
    ConsumerData,
    ConsumeStats,
    DataVersion,
    HeartbeatData,
    MessageQueue,
    OffsetWrapper,
    PropertiesBody,
    QueueData,
    RegisterBrokerBody,
    SubscriptionData,
    TopicConfig,
    TopicConfigSerializeWrapper,
    TopicRouteData,
)
from wire.ha import decode_ha_stream
from wire.headers import SendMessageRequestHeaderV2
from wire.message import (
    BatchEntry,
    StoredMessage,
    decode_batch,
    decode_messages,
    decode_properties,
    encode_batch,
    encode_messages,
    encode_properties,
)
from wire.remoting import decode_binary_header, decode_json_header, encode_binary_header

#: the larger input is this many times the smaller one
SCALE = 10
#: allowed count ratio: linear is at most SCALE (a fixed part makes it less); quadratic is ~SCALE**2
LIMIT = SCALE * 1.2


def count_ops(fn: Callable[[], object]) -> int:
    """Python bytecode instructions executed by ``fn()`` (in every Python frame it calls)."""
    if sys.version_info >= (3, 12):
        return _count_ops_monitoring(fn)
    return _count_ops_settrace(fn)


def _count_ops_settrace(fn: Callable[[], object]) -> int:
    # Python 3.11: a tracer with opcode events. From 3.12 on, settrace runs on sys.monitoring and
    # a frame's f_trace_opcodes set from its call event misses instructions (3.13 counted 5
    # for a decode that runs thousands), so the counts stopped meaning anything there.
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "opcode":
            count += 1
        return local

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        return local

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(previous)
    return count


def _count_ops_monitoring(fn: Callable[[], object]) -> int:
    # Python 3.12+: sys.monitoring's INSTRUCTION event, once per instruction executed
    mon = sys.monitoring
    tool = next(i for i in range(6) if mon.get_tool(i) is None)
    count = 0

    def on_instruction(code: object, offset: int) -> None:
        nonlocal count
        count += 1

    mon.use_tool_id(tool, "test_linear")
    try:
        mon.register_callback(tool, mon.events.INSTRUCTION, on_instruction)
        mon.set_events(tool, mon.events.INSTRUCTION)
        try:
            fn()
        finally:
            mon.set_events(tool, mon.events.NO_EVENTS)
            mon.register_callback(tool, mon.events.INSTRUCTION, None)
    finally:
        mon.free_tool_id(tool)
    return count


# ------------------------------------------------------------------ shapes: n -> a call


def _json_header(ext: dict[str, Any], **top: Any) -> bytes:
    return json.dumps({"code": 105, "extFields": ext, "flag": 0, "language": "JAVA", "opaque": 1,
                       "version": 409, **top}).encode()


def _single_quoted(n: int) -> bytes:
    entries = ",".join(f"'k{i}':'v\\n{i}'" for i in range(n * 20))
    return ("{'code':105,'extFields':{" + entries + "},'flag':0,'opaque':1}").encode()


def _bare_keys(n: int) -> bytes:
    return ("{code:105,extFields:{" + ",".join(f"k{i}:{i}" for i in range(n * 20)) + "},opaque:1}").encode()


def _binary(n: int, repeat: bool = False) -> bytes:
    ext = {f"key{i}": "v" * (i % 7) for i in range(n * 20)}
    cmd = RemotingCommand.request(105, ext, serialize_type=SerializeType.ROCKETMQ)
    data = encode_binary_header(cmd)
    if repeat:  # every key twice, as the Java client's ACL hook writes a FastCodes header
        entries = data[21:]  # no remark: the ext block length is at 17
        data = data[:17] + struct.pack(">i", 2 * len(entries)) + entries + entries
    return data


def _register(n: int) -> bytes:
    topics = {f"Topic{i}": TopicConfig(topic_name=f"Topic{i}", read_queue_nums=8, write_queue_nums=8)
              for i in range(n * 10)}
    wrapper = TopicConfigSerializeWrapper(topic_config_table=topics, data_version=DataVersion(counter=1, timestamp=2))
    return RegisterBrokerBody(topic_config_serialize_wrapper=wrapper).encode()


def _route(n: int) -> bytes:
    names = [f"broker-{i}" for i in range(n * 5)]
    return TopicRouteData(
        queue_datas=tuple(QueueData(broker_name=b, read_queue_nums=8, write_queue_nums=8, perm=6) for b in names),
        broker_datas=tuple(BrokerData(cluster="C", broker_name=b, broker_addrs={0: "10.0.0.1:10911", 1: "10.0.0.2:10911"})
                           for b in names)).encode()


def _cluster(n: int) -> bytes:
    brokers = {f"b{i}": BrokerData(cluster="C", broker_name=f"b{i}", broker_addrs={0: f"10.0.0.{i % 250}:10911"})
               for i in range(n * 5)}
    return ClusterInfo(broker_addr_table=brokers, cluster_addr_table={"C": tuple(brokers)}).encode()


def _heartbeat(n: int) -> bytes:
    subs = tuple(SubscriptionData(topic=f"T{i}", sub_string="a || b", tags_set=("a", "b"), code_set=(97, 98))
                 for i in range(n * 5))
    return HeartbeatData(client_id="c", consumer_data_set=(ConsumerData(group_name="G", subscription_data_set=subs),)
                         ).encode()


def _consume_stats(n: int) -> bytes:
    table = {MessageQueue(topic="T", broker_name="b", queue_id=i): OffsetWrapper(broker_offset=i, consumer_offset=i)
             for i in range(n * 5)}
    return ConsumeStats(offset_table=table, consume_tps=1.5).encode()


def _records(n: int) -> bytes:
    return encode_messages([StoredMessage(topic="T", body=b"x" * 10, queue_id=0, queue_offset=i,
                                          physical_offset=i * 100, properties={"KEYS": f"k{i}", "UNIQ_KEY": "A" * 32})
                            for i in range(n * 5)])


def _frames_stream(n: int) -> bytes:
    return b"".join(encode_command(RemotingCommand.request(10, {"topic": "T", "k": str(i)}, b"body", opaque=i))
                    for i in range(n * 10))


def _feed(data: bytes, chunk: int) -> object:
    fb = FrameBuffer()
    out = []
    for i in range(0, len(data), chunk):
        fb.feed(data[i:i + chunk])
        out.extend(decode_frame(f) for f in fb)
    return out


def _send_ext(n: int) -> dict[str, str]:
    return {"a": "P", "b": "T", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "1", "h": "0",
            **{f"x{i}": "y" for i in range(n * 20)}}


def _send_ext_long_number(n: int) -> dict[str, str]:
    return {"a": "P", "b": "T", "c": "TBW102", "d": "4", "e": "0" * (n * 6) + "1", "f": "0", "g": "1", "h": "0"}


def _properties_text(n: int) -> bytes:
    return "".join(f"key{i}=value\\u00e9 {i}\\\n  more\n" for i in range(n * 20)).encode()


def _nested(n: int) -> bytes:
    return ("[" * 50 + ",".join(["1.5"] * (n * 50)) + "]" * 50).encode()


def _batch(n: int) -> bytes:
    return encode_batch([BatchEntry(body=b"x", properties={"K": str(i)}) for i in range(n * 10)])


def _reports(n: int) -> bytes:
    return b"".join(struct.pack(">q", i) for i in range(n * 20))


def _compile(text: str) -> object:
    """The SQL92 compiler without its cache (a consumer's selector, compiled by the broker)."""
    from wire import sql92

    return sql92._compiled.__wrapped__(text)  # type: ignore[attr-defined]


def _master_session(data: bytes) -> object:
    from wire.ha.session import V4MasterSession

    session = V4MasterSession()
    for i in range(0, len(data), 1000):
        session.receive_data(data[i:i + 1000], now_ms=i, master_max_offset=1 << 40)
    return session.reports


def _transfers(n: int) -> bytes:
    return b"".join(struct.pack(">qi", i * 16, 16) + b"t" * 16 for i in range(n * 20))


def _slave_session(data: bytes) -> object:
    from wire.ha.session import V4SlaveSession

    session = V4SlaveSession(buffer_size=4096)
    out = 0
    for i in range(0, len(data), 1000):
        piece = data[i:i + 1000]
        view = session.recv_buffer()
        view[:len(piece)] = piece
        out += len(session.received(len(piece), i))
    return out


#: name -> (input of size n, the decoder run on it)
SHAPES: dict[str, tuple[Callable[[int], Any], Callable[[Any], object]]] = {
    "json header, many ext entries": (lambda n: _json_header({f"k{i}": "v" for i in range(n * 20)}),
                                      decode_json_header),
    "json header, general path (numbers and booleans as ext values)": (
        lambda n: _json_header({f"k{i}": (i if i % 2 else True) for i in range(n * 20)}), decode_json_header),
    "json header, long remark with escapes": (lambda n: _json_header({}, remark="\u00e9\n\"\\" * (n * 50)),
                                              decode_json_header),
    "json header, single quotes (fastjson parser)": (_single_quoted, decode_json_header),
    "json header, bare keys (fastjson parser)": (_bare_keys, decode_json_header),
    "rocketmq header, many ext entries": (_binary, decode_binary_header),
    "rocketmq header, repeated keys": (lambda n: _binary(n, repeat=True), decode_binary_header),
    "typed header, many extra keys": (_send_ext, SendMessageRequestHeaderV2.from_ext),
    "typed header, long numeric text": (_send_ext_long_number,
                                        lambda ext: _refused(lambda: SendMessageRequestHeaderV2.from_ext(ext))),
    "body: register broker": (_register, RegisterBrokerBody.decode),
    "body: route": (_route, TopicRouteData.decode),
    "body: cluster info": (_cluster, ClusterInfo.decode),
    "body: heartbeat": (_heartbeat, HeartbeatData.decode),
    "body: consume stats (object keys)": (_consume_stats, ConsumeStats.decode),
    "body: properties": (_properties_text, PropertiesBody.decode),
    "fastjson: nested arrays": (_nested, fastjson.loads),
    "message records": (_records, lambda d: decode_messages(d, verify=True)),
    "message batch": (_batch, decode_batch),
    "message properties": (lambda n: encode_properties({f"k{i}": "v" for i in range(n * 20)}), decode_properties),
    "frames, whole stream": (_frames_stream, lambda d: _feed(d, len(d))),
    "frames, fed 7 bytes at a time": (_frames_stream, lambda d: _feed(d, 7)),
    "ha stream, 4.x reports": (_reports, lambda d: decode_ha_stream(d, "v4", "slave->master")),
    "ha session, a master reading reports": (lambda n: struct.pack(">q", 0) * (n * 20), _master_session),
    "ha session, a slave reading transfers": (_transfers, _slave_session),
    "sql92: IN list": (lambda n: "a IN (" + ",".join(f"'t{i:05d}'" for i in range(n * 100)) + ")", _compile),
    "sql92: AND chain (refused for its depth after the parse)": (
        lambda n: " AND ".join(f"a{i} > {i}" for i in range(n * 60)), lambda t: _refused(lambda: _compile(t))),
    "sql92: string literal with quotes": (lambda n: "a = '" + "it''s " * (n * 100) + "'", _compile),
}


def _refused(fn: Callable[[], object]) -> object:
    try:
        return fn()
    except Exception as exc:
        return exc


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_decoding_work_grows_linearly(shape: str) -> None:
    build, decode = SHAPES[shape]
    small, large = build(4), build(4 * SCALE)
    decode(small)  # caches and lazy imports warm up first
    decode(large)
    ops_small, ops_large = count_ops(lambda: decode(small)), count_ops(lambda: decode(large))
    assert ops_small > 0
    ratio = ops_large / ops_small
    assert ratio <= LIMIT, f"{shape}: {ops_small} -> {ops_large} instructions for {SCALE}x the input ({ratio:.1f}x)"


def test_the_counter_sees_quadratic_work() -> None:
    """The measure itself: a loop that re-scans what it has read is caught."""

    def quadratic(n: int) -> Callable[[], object]:
        def run() -> int:
            seen: list[int] = []
            for i in range(n):
                if i not in [x for x in seen]:  # a Python-level re-scan per element
                    seen.append(i)
            return len(seen)
        return run

    assert count_ops(quadratic(40 * SCALE)) / count_ops(quadratic(40)) > LIMIT
