# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Capture decoding throughput, as ratios to tshark's TCP conversation pass and to scapy's reader.

Usage::

    .venv/bin/python benchmarks/bench_pcap.py [--size-mb 200] [--keep FILE] [--connections 64] [--runs 3]
    .venv/bin/python benchmarks/bench_pcap.py --capture FILE      # time an existing capture

It synthesises a loopback-style capture of at least ``--size-mb`` megabytes: many client
connections to a broker (port 10911) and the name server (9876), each sending
SEND_MESSAGE_V2 requests with 1 KiB bodies and getting the broker's answers, with a PULL_MESSAGE
answered by a 32-message body (about 40 KB, cut into 16 KiB segments) every 100th request, a
heartbeat now and then, and delayed ACKs — the traffic of a busy producer/consumer pair on one host,
both directions, frames cut into TCP segments as a loopback interface does. Every frame is
wire-encoded by :mod:`wire`.

Then, in the same run, it times:

* ``mqctl pcap decode -o jsonl FILE > /dev/null`` and ``mqctl pcap stats FILE`` (the real CLI
  process: every RocketMQ command decoded and written out);
* ``tshark -r FILE -q -z conv,tcp`` (tshark only tracks TCP conversations), installed with apt when
  missing and running as root, else skipped with a note;
* a loop over scapy's ``RawPcapReader`` (records only, no decoding) and over this project's own
  record reader.

and prints MB/s, frames/s and the ratios. With ``--runs N`` every timing is taken N times, the
commands taking turns (decode, stats, tshark, decode, ...) so that a busy spell on a shared machine
falls on all of them, and the median is printed. No assertions: figures are for reading.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wire import RemotingCommand, SerializeType, encode_command  # noqa: E402
from wire.capture.synth import PcapWriter, TcpFlow  # noqa: E402

TSHARK = "tshark -r FILE -q -z conv,tcp"
BODY = bytes(random.Random(7).randrange(32, 127) for _ in range(1024))
PULL_BODY = bytes(random.Random(8).randrange(0, 256) for _ in range(40_000))


def _send(opaque: int, topic: str, producer: str) -> RemotingCommand:
    ext = {"a": producer, "b": topic, "c": "TBW102", "d": "4", "e": str(opaque % 4), "f": "0",
           "g": str(1_795_000_000_000 + opaque), "h": "0",
           "i": f"UNIQ_KEY\x01C0A80001{opaque:024X}\x02WAIT\x01true\x02TAGS\x01tag{opaque % 7}",
           "j": "0", "k": "false", "m": "false", "n": "broker-a"}
    return RemotingCommand.request(310, ext, BODY, opaque=opaque)


def _send_response(req: RemotingCommand, offset: int) -> RemotingCommand:
    return req.response(0, ext_fields={"msgId": f"7F00000100002A9F{offset:016X}",
                                       "queueId": req.ext_fields["e"], "queueOffset": str(offset // 1300),
                                       "TRACE_ON": "true", "MSG_REGION": "DefaultRegion"})


def _pull(opaque: int, topic: str) -> RemotingCommand:
    ext = {"consumerGroup": "BenchGroup", "topic": topic, "queueId": str(opaque % 4),
           "queueOffset": str(opaque), "maxMsgNums": "32", "sysFlag": "6", "commitOffset": "0",
           "suspendTimeoutMillis": "15000", "subVersion": "0", "subscription": "*", "expressionType": "TAG"}
    return RemotingCommand.request(11, ext, None, opaque=opaque, serialize_type=SerializeType.JSON)


def synthesise(path: Path, size_mb: float, connections: int, seed: int = 1) -> tuple[int, int]:
    """Write the capture; returns (records, remoting frames)."""
    rnd = random.Random(seed)
    target = int(size_mb * 1_000_000)
    out = open(path, "wb")  # closed below
    buf = io.BytesIO()
    w = PcapWriter(buf)
    flows = []
    for i in range(connections):
        port = 9876 if i % 16 == 0 else 10911
        flow = TcpFlow(w, ("127.0.0.1", 40000 + i), ("127.0.0.1", port), isn=(rnd.randrange(2**32),
                       rnd.randrange(2**32)), mss=16384 if port == 10911 else 65483)
        flows.append(flow)
    t = 1_795_000_000.0
    for flow in flows:
        flow.handshake(t)
        t += 0.0001
    frames = 0
    opaque = [0] * connections
    written = 0
    offset = 0
    while written < target:
        i = rnd.randrange(connections)
        flow = flows[i]
        opaque[i] += 1
        t += 0.00002
        if flow.ends[1][1] == 9876:
            req = RemotingCommand.request(105, {"topic": f"BenchTopic{i % 8}"}, opaque=opaque[i])
            route = (b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a",'
                     b'"cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a",'
                     b'"perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}')
            resp = req.response(0, body=route)
        elif opaque[i] % 100 == 0:
            req = _pull(opaque[i], f"BenchTopic{i % 8}")
            resp = req.response(0, ext_fields={"suggestWhichBrokerId": "0",
                                               "nextBeginOffset": str(opaque[i] + 32), "minOffset": "0",
                                               "maxOffset": str(opaque[i] + 64)}, body=PULL_BODY)
        elif opaque[i] % 50 == 1:
            req = RemotingCommand.request(34, {}, b'{"clientID":"127.0.0.1@bench","consumerDataSet":[],'
                                                 b'"producerDataSet":[{"groupName":"BenchProducer"}]}',
                                          opaque=opaque[i])
            resp = req.response(0)
        else:
            req = _send(opaque[i], f"BenchTopic{i % 8}", f"BenchProducer{i % 4}")
            offset += 1300
            resp = _send_response(req, offset)
        # each side acknowledges what it received with a bare ACK, as on loopback captures of
        # request/response traffic (about one bare ACK per data segment in the reference captures)
        flow.send(t, 0, encode_command(req))
        t += 0.00005
        flow.send(t, 1, encode_command(resp))
        frames += 2
        if buf.tell() > 1 << 22:
            written += buf.tell()
            out.write(buf.getbuffer())
            buf.seek(0)
            buf.truncate()
    for flow in flows:
        flow.close(t + 0.01)
    out.write(buf.getbuffer())
    out.close()
    return w.records, frames


def _time(cmd: list[str], *, stdout: int | None = subprocess.DEVNULL) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=stdout, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _tshark() -> str | None:
    found = shutil.which("tshark")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print("installing tshark (apt-get) ...", flush=True)
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "-qq", "tshark"], env=env, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return shutil.which("tshark")


def _scapy_loop(path: Path) -> float:
    from scapy.utils import RawPcapReader

    t0 = time.perf_counter()
    n = 0
    with RawPcapReader(str(path)) as reader:
        for _pkt, _meta in reader:
            n += 1
    return time.perf_counter() - t0


def _our_reader(path: Path) -> float:
    from wire.capture import read_records

    t0 = time.perf_counter()
    for _rec in read_records(path):
        pass
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=200.0, help="capture size to synthesise (default 200)")
    ap.add_argument("--connections", type=int, default=64, help="client connections (default 64)")
    ap.add_argument("--keep", type=Path,
                    help="write the capture here and keep it (default: a temporary file)")
    ap.add_argument("--capture", type=Path, help="time this existing capture instead of synthesising one")
    ap.add_argument("--runs", type=int, default=3,
                    help="timings per command, taking turns; the median is shown (default 3)")
    args = ap.parse_args()

    tmp = None
    if args.capture:
        path = args.capture
        records, frames = _count(path)
        print(f"capture: {path} {path.stat().st_size / 1e6:.1f} MB, {records:,} records, {frames:,} rows")
    else:
        if args.keep:
            path = args.keep
        else:
            tmp = tempfile.TemporaryDirectory(prefix="bench_pcap_")
            path = Path(tmp.name) / "bench.pcap"
        t0 = time.perf_counter()
        records, frames = synthesise(path, args.size_mb, args.connections)
        print(f"capture: {path} {path.stat().st_size / 1e6:.1f} MB, {records:,} records, {frames:,} remoting "
              f"frames, {args.connections} connections (synthesised in {time.perf_counter() - t0:.1f} s)")
    mb = path.stat().st_size / 1e6

    mqctl = [sys.executable, "-m", "mqctl.app"]
    tshark = _tshark()
    timings: dict[str, list[float]] = {}
    commands: list[tuple[str, Callable[[], float]]] = [
        ("mqctl pcap decode -o jsonl > /dev/null",
         lambda: _time([*mqctl, "pcap", "decode", "-o", "jsonl", str(path)])),
        ("mqctl pcap stats", lambda: _time([*mqctl, "pcap", "stats", str(path)])),
        ("scapy RawPcapReader loop (records only)", lambda: _scapy_loop(path)),
        ("wire.capture.read_records loop (records only)", lambda: _our_reader(path)),
    ]
    if tshark:
        commands.append((TSHARK, lambda: _time([tshark, "-r", str(path), "-q", "-z", "conv,tcp"])))
    else:
        print("tshark: not installed and cannot install it (needs root and apt-get): tshark ratio skipped")
    for _ in range(max(1, args.runs)):
        for name, run in commands:
            timings.setdefault(name, []).append(run())
    results = [(name, statistics.median(ts)) for name, ts in timings.items()]
    tshark_s = dict(results).get(TSHARK)
    scapy_s = results[2][1]
    print(f"\n{'what':48} {'s':>7} {'MB/s':>8} {'frames/s':>10} {'× tshark':>9} {'× scapy':>8}")
    for name, secs in results:
        ratio_t = f"{tshark_s / secs:9.2f}" if tshark_s else f"{'-':>9}"
        print(f"{name:48} {secs:7.2f} {mb / secs:8.1f} {frames / secs:10,.0f} {ratio_t} "
              f"{scapy_s / secs:8.2f}")
    if args.runs > 1:
        print(f"\nmedians of {args.runs} runs; all runs (s):")
        for name, ts in timings.items():
            print(f"  {name:46} {' '.join(f'{t:.2f}' for t in ts)}")
    print("\n'× tshark' > 1 means faster than tshark's conversation pass; '× scapy' compares with the bare "
          "RawPcapReader loop.")
    if tmp is not None:
        tmp.cleanup()
    return 0


def _count(path: Path) -> tuple[int, int]:
    """(records, rows) of an existing capture, decoded once before the timings."""
    from wire.capture import CaptureDecoder
    from wire.capture.decoder import decode_batches

    dec = CaptureDecoder()
    rows = sum(len(b) for b in decode_batches(path, decoder=dec))
    return dec.records, rows


if __name__ == "__main__":
    raise SystemExit(main())
