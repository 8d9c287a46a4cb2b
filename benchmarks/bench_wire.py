# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Codec throughput: frames/s and MB/s of wire's decoders, as ratios to a bare prefix scan.

Usage::

    .venv/bin/python benchmarks/bench_wire.py [--frames 20000] [--repeat 5] [--chunk 65536]

It builds one byte stream per kind of frame, every frame encoded by :mod:`wire` the way the
Java 4.9.x client and broker write it, in both header serializations (JSON and ROCKETMQ):

* ``send``: SEND_MESSAGE_V2 requests with a 1 KiB body and the producer's properties
  (UNIQ_KEY, KEYS, TAGS, WAIT), the short ``a``..``n`` header keys;
* ``send-resp``: their SUCCESS answers (msgId, queueId, queueOffset, MSG_REGION, TRACE_ON);
* ``pull-resp``: PULL_MESSAGE answers carrying 32 stored messages of 1 KiB (about 36 KB each);
* ``route-resp``: GET_ROUTEINFO_BY_TOPIC answers (2 broker names with a master and a slave
  each, 8 queues), the body in fastjson's bare-key form;
* ``cluster-resp``: GET_BROKER_CLUSTER_INFO answers (2 clusters of 2 broker names);
* ``mix``: all of them interleaved as a busy client sees them: 32 sends and their answers per
  pull answer, a route and a cluster answer every 256 frames.

Each stream is then read, in the same run, by:

* **prefix scan** (the baseline): a ``struct.unpack_from(">II")`` loop over the stream that
  only reads each frame's 8-byte prefix and jumps to the next frame — the least any decoder
  must do;
* **frames**: :class:`wire.FrameBuffer` fed ``--chunk``-byte pieces, ``next_frame()`` until
  it needs more (the limits checked, header and body cut out);
* **frames+header**: plus :func:`wire.decode_frame`, the header decoded to a
  :class:`wire.RemotingCommand` (the aim: at least 100,000 frames/s on one core);
* **+typed**: plus the typed custom header (``decode_request_header`` /
  ``decode_response_header``) and the typed body (the 32 stored messages of a pull answer, the
  ``TopicRouteData``, the ``ClusterInfo``);
* **slow path**: the header and the stored records without their fast paths, to show what
  those buy: the ROCKETMQ header and the stored-message record through their construct
  declarations, the JSON header through the general path (``json.loads`` and the checks
  of every field) that takes whatever the fast path declines.

Every figure is the median of ``--repeat`` passes; the baseline and the decoders take turns
within each pass, so a busy spell on a shared machine falls on all of them. Each row shows
frames/s, MB/s and the rate as a fraction of the prefix scan's over the same bytes. No
assertions: the figures are for reading.
"""

from __future__ import annotations

import argparse
import statistics
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wire import (  # noqa: E402
    FrameBuffer,
    RemotingCommand,
    SerializeType,
    decode_frame,
    encode_command,
)
from wire.bodies import BrokerData, ClusterInfo, QueueData, TopicRouteData, decode_body  # noqa: E402
from wire.headers import decode_request_header, decode_response_header  # noqa: E402
from wire.message import (  # noqa: E402
    StoredMessage,
    decode_stored_message_construct,
    encode_messages,
    iter_stored_messages,
)
from wire.remoting import decode_binary_header_construct, decode_json_header  # noqa: E402

TOPIC = "BenchTopic"
BODY = (b"0123456789abcdef" * 64)[:1024]
PREFIX = struct.Struct(">II")
SEND, PULL, ROUTE, CLUSTER = 310, 11, 105, 106


def _answer(code: int, i: int, ser: SerializeType, ext: dict[str, str] | None,
            body: bytes | None = None) -> RemotingCommand:
    """The SUCCESS answer to request ``i`` of ``code``, as a 4.9.8 server writes it."""
    request = RemotingCommand.request(code, opaque=i + 1, serialize_type=ser)
    return request.response(0, None, ext, body, version=409)


def _send(i: int, ser: SerializeType) -> RemotingCommand:
    props = (f"UNIQ_KEY\x01C0A8000100002A9F{i:016X}\x02KEYS\x01order-{i}\x02TAGS\x01TagA"
             "\x02WAIT\x01true")
    ext = {"a": "BenchProducer", "b": TOPIC, "c": "TBW102", "d": "8", "e": str(i % 8), "f": "0",
           "g": str(1_795_000_000_000 + i), "h": "0", "i": props, "j": "0", "k": "false", "m": "false",
           "n": "broker-a"}
    return RemotingCommand.request(SEND, ext, BODY, opaque=i + 1, language="JAVA", version=409,
                                   serialize_type=ser)


def _send_resp(i: int, ser: SerializeType) -> RemotingCommand:
    ext = {"msgId": f"7F00000100002A9F{i * 1200:016X}", "queueId": str(i % 8),
           "queueOffset": str(i // 8), "MSG_REGION": "DefaultRegion", "TRACE_ON": "true"}
    return _answer(SEND, i, ser, ext)


def _pull_resp(i: int, ser: SerializeType) -> RemotingCommand:
    base = i * 32
    msgs = [StoredMessage(topic=TOPIC, body=BODY, queue_id=i % 8, queue_offset=base + k,
                          physical_offset=(base + k) * 1200, born_timestamp=1_795_000_000_000 + k,
                          store_timestamp=1_795_000_000_001 + k, born_host=("10.0.0.7", 52311),
                          store_host=("10.0.0.1", 10911),
                          properties={"UNIQ_KEY": f"0A00000700002A9F{base + k:016X}",
                                      "KEYS": f"order-{base + k}", "TAGS": "TagA", "WAIT": "true",
                                      "CLUSTER": "DefaultCluster", "MIN_OFFSET": "0",
                                      "MAX_OFFSET": str(base + 64)})
            for k in range(32)]
    ext = {"suggestWhichBrokerId": "0", "nextBeginOffset": str(base + 32), "minOffset": "0",
           "maxOffset": str(base + 64)}
    return _answer(PULL, i, ser, ext, encode_messages(msgs))


def _route() -> bytes:
    names = ("broker-a", "broker-b")
    route = TopicRouteData(
        queue_datas=tuple(QueueData(broker_name=n, read_queue_nums=8, write_queue_nums=8, perm=6)
                          for n in names),
        broker_datas=tuple(BrokerData(cluster="DefaultCluster", broker_name=n,
                                      broker_addrs={0: f"10.0.0.{k + 1}:10911", 1: f"10.0.0.{k + 3}:10911"})
                           for k, n in enumerate(names)))
    return route.encode()


def _cluster() -> bytes:
    brokers = {f"broker-{c}{k}": BrokerData(cluster=f"Cluster{c}", broker_name=f"broker-{c}{k}",
                                            broker_addrs={0: f"10.0.{k}.1:10911", 1: f"10.0.{k}.2:10911"})
               for c in "AB" for k in range(2)}
    clusters = {f"Cluster{c}": tuple(f"broker-{c}{k}" for k in range(2)) for c in "AB"}
    return ClusterInfo(broker_addr_table=brokers, cluster_addr_table=clusters).encode()


def _body_resp(body: bytes) -> Callable[[int, SerializeType], RemotingCommand]:
    def make(i: int, ser: SerializeType) -> RemotingCommand:
        return _answer(0, i, ser, None, body)
    return make


# kind -> (the request code the frames carry or answer, whether they are answers, maker)
KINDS: dict[str, tuple[int, bool, Callable[[int, SerializeType], RemotingCommand]]] = {
    "send": (SEND, False, _send),
    "send-resp": (SEND, True, _send_resp),
    "pull-resp": (PULL, True, _pull_resp),
    "route-resp": (ROUTE, True, _body_resp(_route())),
    "cluster-resp": (CLUSTER, True, _body_resp(_cluster())),
}


def _mix_plan(n: int) -> list[str]:
    plan: list[str] = []
    while len(plan) < n:
        for k in range(256):
            if k % 66 == 64:
                plan.append("pull-resp")
            elif k == 128:
                plan.append("route-resp")
            elif k == 192:
                plan.append("cluster-resp")
            else:
                plan.append("send" if k % 2 == 0 else "send-resp")
    return plan[:n]


def build(kind: str, ser: SerializeType, n: int) -> tuple[bytes, list[str]]:
    """The stream of ``n`` frames of ``kind`` (``mix``: interleaved) and the kind of each frame."""
    plan = _mix_plan(n) if kind == "mix" else [kind] * n
    cache: dict[tuple[str, int], bytes] = {}
    out = []
    for i, k in enumerate(plan):
        # pull answers are expensive to build; a handful of distinct ones is enough
        key = (k, i % 8) if k == "pull-resp" else (k, i)
        frame = cache.get(key)
        if frame is None:
            frame = encode_command(KINDS[k][2](key[1], ser))
            cache[key] = frame
        out.append(frame)
    return b"".join(out), plan


# ---- the readers -------------------------------------------------------------------------------

def prefix_scan(data: bytes, _plan: list[str], _chunk: int) -> int:
    unpack, pos, n, count = PREFIX.unpack_from, 0, len(data), 0
    while pos < n:
        total, _word = unpack(data, pos)
        pos += 4 + total
        count += 1
    return count


def _frames(data: bytes, chunk: int):  # type: ignore[no-untyped-def]
    buf = FrameBuffer()
    view = memoryview(data)
    for start in range(0, len(data), chunk):
        buf.feed(view[start:start + chunk])
        while (frame := buf.next_frame()) is not None:
            yield frame


def frames_only(data: bytes, _plan: list[str], chunk: int) -> int:
    return sum(1 for _ in _frames(data, chunk))


def frames_header(data: bytes, _plan: list[str], chunk: int) -> int:
    count = 0
    for frame in _frames(data, chunk):
        decode_frame(frame)
        count += 1
    return count


def frames_typed(data: bytes, plan: list[str], chunk: int) -> int:
    count = 0
    for frame, kind in zip(_frames(data, chunk), plan, strict=True):
        cmd = decode_frame(frame)
        code, is_resp, _ = KINDS[kind]
        if not is_resp:
            decode_request_header(cmd)
        else:
            decode_response_header(code, cmd)
            if code == PULL:
                for _ in iter_stored_messages(cmd.body or b""):
                    pass
            else:
                decode_body(code, True, cmd.body)
        count += 1
    return count


def slow_path(data: bytes, plan: list[str], chunk: int) -> int:
    """The header through its construct declaration (ROCKETMQ) or the general JSON path, and the
    stored records of pull answers through theirs."""
    count = 0
    for frame, kind in zip(_frames(data, chunk), plan, strict=True):
        if frame.serialize_type == SerializeType.ROCKETMQ:
            decode_binary_header_construct(frame.header)
        else:
            # the JSON fast path takes bytes only; anything else goes the general way
            decode_json_header(bytearray(frame.header))
        if kind == "pull-resp":
            body, pos = frame.body, 0
            while pos < len(body):
                msg = decode_stored_message_construct(body, pos)
                pos += msg.total_size
        count += 1
    return count


READERS: dict[str, Callable[[bytes, list[str], int], int]] = {
    "prefix scan": prefix_scan,
    "frames": frames_only,
    "frames+header": frames_header,
    "+typed": frames_typed,
    "slow path": slow_path,
}


def _timed(fn: Callable[[bytes, list[str], int], int], data: bytes, plan: list[str],
           chunk: int) -> float:
    t0 = time.perf_counter()
    count = fn(data, plan, chunk)
    elapsed = time.perf_counter() - t0
    if count != len(plan):
        raise SystemExit(f"{fn.__name__} read {count} frames, expected {len(plan)}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=20_000, help="frames per stream (default 20000)")
    ap.add_argument("--repeat", type=int, default=5, help="passes; the median is shown")
    ap.add_argument("--chunk", type=int, default=65536, help="bytes fed to FrameBuffer at a time")
    ap.add_argument("--kinds", default="send,send-resp,pull-resp,route-resp,cluster-resp,mix",
                    help="comma-separated stream kinds")
    args = ap.parse_args()

    print(f"{args.frames} frames per stream, fed in {args.chunk}-byte pieces, median of "
          f"{args.repeat} passes; ratio = rate / prefix scan rate over the same bytes")
    print(f"{'stream':<22}{'reader':<15}{'frames/s':>13}{'MB/s':>10}{'ratio':>9}")
    for kind in args.kinds.split(","):
        for ser in (SerializeType.JSON, SerializeType.ROCKETMQ):
            n = args.frames if kind != "pull-resp" else max(200, args.frames // 20)
            data, plan = build(kind, ser, n)
            times: dict[str, list[float]] = {name: [] for name in READERS}
            for _ in range(args.repeat):
                for name, fn in READERS.items():
                    times[name].append(_timed(fn, data, plan, args.chunk))
            base = len(plan) / statistics.median(times["prefix scan"])
            label = f"{kind} {ser.name.lower()}"
            for name in READERS:
                t = statistics.median(times[name])
                rate = len(plan) / t
                print(f"{label:<22}{name:<15}{rate:>13,.0f}{len(data) / t / 1e6:>10,.1f}"
                      f"{rate / base:>9.4f}")
                label = ""
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
