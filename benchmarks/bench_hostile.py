# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Hostile clients against the reference servers: stalls of the event loop, and memory.

Usage::

    .venv/bin/python benchmarks/bench_hostile.py [--size 16] [--connections 20] [--checkout DIR]

A name server and a broker are started as processes (``mqctl namesrv start`` / ``broker start``
from ``--checkout``, this checkout by default: give an older checkout to measure it the same way).

**Stalls.** A watchdog client on its own connection asks each server a cheap question every 5 ms
(the name server GET_KV_CONFIG for a missing key, the broker an unknown request code) and records
how long each answer takes. Meanwhile an attacker sends one worst-case frame of each kind, of
``--size`` MiB (less where the server caps it), and waits for its answer or for the connection to
close. Each row shows how long the server took with that frame, and the watchdog's median and
longest answer times while it did: a server that decodes the frame on its event loop makes the
watchdog wait as long as the frame takes.

**Memory.** ``--connections`` clients each send 15 MiB of a 16 MiB frame and stop there. The row
shows the server's resident memory before and after, and how many of those connections the server
closed (its budget for unfinished frames, ``serverMaxBufferedBytes``).

The figures are for reading (docs/servers.md quotes a run); the test suite asserts the bounds
(tests/test_hostile_servers.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import select
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wire import MAX_TOTAL_LENGTH, EncodeError, RemotingCommand, SerializeType, encode_command  # noqa: E402
from wire.bodies import (  # noqa: E402
    ConsumerData,
    DataVersion,
    HeartbeatData,
    RegisterBrokerBody,
    SubscriptionData,
    TopicConfig,
    TopicConfigSerializeWrapper,
)
from wire.message import BatchEntry, encode_batch  # noqa: E402
from wire.remoting import encode_binary_header  # noqa: E402

MIB = 1024 * 1024
PREFIX = struct.Struct(">iI")


# ============================================================================ servers as processes

@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    out: BinaryIO
    drainer: threading.Thread | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss(self) -> int:
        """Resident memory in bytes (VmRSS)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.drainer is not None:
            self.drainer.join(10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        self.out.close()


def _env(checkout: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if checkout.resolve() != ROOT:
        env["PYTHONPATH"] = str(checkout) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _start(argv: list[str], pattern: bytes, log: Path, checkout: Path, timeout: float = 60) -> Server:
    out = log.open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "mqctl.app", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=_env(checkout), cwd=str(checkout))
    assert proc.stderr is not None
    seen = b""
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([proc.stderr], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                break
            chunk = os.read(proc.stderr.fileno(), 65536)
            if not chunk:
                break
            seen += chunk
            out.write(chunk)
            m = re.search(pattern, seen)
            if m:
                drainer = threading.Thread(target=_drain, args=(proc, out), daemon=True)
                drainer.start()
                return Server(proc, int(m.group(1)), log, out, drainer)
    except BaseException:
        proc.kill()
        proc.wait()
        out.close()
        raise
    proc.kill()
    proc.wait()
    out.close()
    if proc.stderr is not None:
        proc.stderr.close()
    raise RuntimeError(f"{argv[0]} did not start: {seen.decode(errors='replace')[-2000:]}")


def _drain(proc: subprocess.Popen[bytes], out: BinaryIO) -> None:
    """Copy the server's log to its file until the process ends."""
    err = proc.stderr
    assert err is not None
    with contextlib.suppress(OSError, ValueError):
        while chunk := os.read(err.fileno(), 65536):
            out.write(chunk)
            out.flush()


def start_namesrv(base: Path, checkout: Path = ROOT, *sets: str) -> Server:
    base.mkdir(parents=True, exist_ok=True)
    argv = ["namesrv", "start", "--listen", "127.0.0.1:0", "--set", f"kvConfigPath={base / 'kv.json'}",
            "--set", f"configStorePath={base / 'namesrv.properties'}"]
    for s in sets:
        argv += ["--set", s]
    return _start(argv, rb"listening on 127\.0\.0\.1:(\d+)", base / "namesrv.log", checkout)


def start_broker(base: Path, namesrv: str, checkout: Path = ROOT, *sets: str) -> Server:
    base.mkdir(parents=True, exist_ok=True)
    conf = base / "broker.properties"
    conf.write_text(f"brokerName=broker-h\nbrokerClusterName=HostileCluster\n"
                    f"storePathRootDir={base / 'store'}\nbrokerIP1=127.0.0.1\n"
                    f"mappedFileSizeCommitLog={64 * MIB}\nautoCreateTopicEnable=true\n"
                    "enablePropertyFilter=true\n")
    argv = ["broker", "start", "-c", str(conf), "--listen", "127.0.0.1:0", "-n", namesrv]
    for s in sets:
        argv += ["--set", s]
    return _start(argv, rb"127\.0\.0\.1:(\d+)\] boot success", base / "broker.log", checkout)


@contextlib.contextmanager
def servers(base: Path, checkout: Path = ROOT, *sets: str) -> Iterator[tuple[Server, Server]]:
    ns = start_namesrv(base / "ns", checkout, *sets)
    try:
        broker = start_broker(base / "broker", f"127.0.0.1:{ns.port}", checkout, *sets)
    except BaseException:
        ns.stop()
        raise
    try:
        yield ns, broker
    finally:
        broker.stop()
        ns.stop()


# ============================================================================ blocking clients

def read_frame(sock: socket.socket) -> bytes | None:
    """One whole frame, or None when the connection closed first."""
    head = _read(sock, 4)
    if head is None:
        return None
    (total,) = struct.unpack(">i", head)
    rest = _read(sock, total)
    return None if rest is None else head + rest


def _read(sock: socket.socket, n: int) -> bytes | None:
    parts = []
    while n:
        try:
            chunk = sock.recv(min(n, 1 << 20))
        except (ConnectionError, TimeoutError, OSError):
            return None
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


class Watchdog(threading.Thread):
    """Asks a cheap question every ``interval`` seconds on its own connection and records
    ``(sent, seconds to answer)``."""

    def __init__(self, port: int, request: RemotingCommand, interval: float = 0.005) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.frame = encode_command(request)
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self.pending_since: float | None = None
        self.stopped = threading.Event()
        self.failed: str | None = None
        #: when the server closed the watchdog's connection (a server that should never do that)
        self.lost: list[float] = []

    def run(self) -> None:
        try:
            while not self.stopped.is_set():
                with socket.create_connection(("127.0.0.1", self.port), timeout=300) as sock:
                    while not self.stopped.is_set():
                        t0 = time.monotonic()
                        self.pending_since = t0
                        sock.sendall(self.frame)
                        if read_frame(sock) is None:
                            # counted as an answer that took until now; a new connection goes on
                            self.samples.append((t0, time.monotonic() - t0))
                            self.lost.append(time.monotonic())
                            break
                        self.pending_since = None
                        self.samples.append((t0, time.monotonic() - t0))
                        self.stopped.wait(self.interval)
        except OSError as exc:
            self.failed = str(exc)

    def during(self, start: float, end: float) -> list[float]:
        """Answer times of the questions that were open at some moment of [start, end]."""
        out = [dt for t0, dt in self.samples if t0 <= end and t0 + dt >= start]
        if self.pending_since is not None and self.pending_since <= end:
            out.append(time.monotonic() - self.pending_since)  # still waiting
        return out

    def stop(self) -> None:
        self.stopped.set()
        self.join(30)


@dataclass
class Outcome:
    kind: str
    server: str
    size: int
    seconds: float
    answer: str
    watchdog: list[float] = field(default_factory=list)

    @property
    def worst(self) -> float:
        return max(self.watchdog, default=0.0)

    @property
    def median(self) -> float:
        return statistics.median(self.watchdog) if self.watchdog else 0.0


def _is_response(frame: bytes) -> bool:
    hlen = struct.unpack_from(">I", frame, 4)[0] & 0xFFFFFF
    header = frame[8:8 + hlen]
    if frame[4] == 0:
        try:
            return bool(json.loads(header).get("flag", 0) & 1)
        except ValueError:
            return True
    return bool(struct.unpack_from(">i", header, 9)[0] & 1)


def attack(port: int, frame: bytes, watchdog: Watchdog, kind: str, server: str,
           timeout: float = 300) -> Outcome:
    """Send ``frame`` on a new connection and wait for its answer (or the close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        time.sleep(0.05)
        start = time.monotonic()
        sock.sendall(frame)
        answer = read_frame(sock)
        while answer is not None and not _is_response(answer):
            answer = read_frame(sock)  # a request the server sends the client (NOTIFY_CONSUMER_IDS_CHANGED)
        end = time.monotonic()
    # let the watchdog's question that was open at the end come back
    deadline = time.monotonic() + timeout
    while (watchdog.pending_since is not None and watchdog.pending_since <= end
           and time.monotonic() < deadline):
        time.sleep(0.01)
    if answer is None:
        text = "connection closed"
    else:
        hlen = struct.unpack_from(">I", answer, 4)[0] & 0xFFFFFF
        header = answer[8:8 + hlen]
        try:
            code = json.loads(header).get("code")
        except ValueError:
            code = struct.unpack_from(">h", header, 0)[0]
        text = f"code {code}"
    return Outcome(kind, server, len(frame), end - start, text, watchdog.during(start, end))


# ============================================================================ worst-case frames

def _frame_of(header: bytes, body: bytes = b"", serialize: int = 0) -> bytes:
    return PREFIX.pack(4 + len(header) + len(body), (serialize << 24) | len(header)) + header + body


def json_header_many_entries(code: int, size: int, **ext: str) -> bytes:
    """Standard JSON with ``size`` bytes of tiny ext entries: json's C parser at its slowest."""
    n = size // 14
    entries = ",".join(f'"k{i}":"v"' for i in range(n))
    fixed = ",".join(f'"{k}":{json.dumps(v)}' for k, v in ext.items())
    text = ('{"code":' + str(code) + ',"extFields":{' + fixed + ("," if fixed else "") + entries
            + '},"flag":0,"language":"JAVA","opaque":1,"version":409}')
    return _frame_of(text.encode())


def fastjson_header_bare_keys(code: int, size: int, **ext: str) -> bytes:
    """fastjson's lenient form (bare keys): the standard parser declines it, ours reads it."""
    n = size // 12
    entries = ",".join(f"k{i}:{i}" for i in range(n))
    fixed = ",".join(f"{k}:{json.dumps(v)}" for k, v in ext.items())
    text = "{code:" + str(code) + ",extFields:{" + fixed + "," + entries + "},flag:0,opaque:1}"
    return _frame_of(text.encode())


def rocketmq_header_many_entries(code: int, size: int, **ext: str) -> bytes:
    entries = {**ext, **{f"{i}": "" for i in range(size // 11)}}
    cmd = RemotingCommand.request(code, entries, serialize_type=SerializeType.ROCKETMQ)
    return _frame_of(encode_binary_header(cmd), b"", 1)


def register_broker(size: int) -> bytes:
    topics = {}
    i = 0
    while i * 200 < size:
        name = f"HostileTopic{i}"
        topics[name] = TopicConfig(topic_name=name, read_queue_nums=8, write_queue_nums=8)
        i += 1
    body = RegisterBrokerBody(topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
        topic_config_table=topics, data_version=DataVersion(counter=1, timestamp=1))).encode()
    ext = {"brokerName": "hostile", "brokerAddr": "127.0.0.9:10911", "clusterName": "HostileCluster",
           "haServerAddr": "127.0.0.9:10912", "brokerId": "0", "compressed": "false", "bodyCrc32": "0"}
    return encode_command(RemotingCommand.request(103, ext, body))


def properties_body(code: int, size: int) -> bytes:
    body = "".join(f"hostileKey{i}=value\\u00e9{i}\n" for i in range(size // 28)).encode()
    return encode_command(RemotingCommand.request(code, {}, body))


def heartbeat(size: int) -> bytes:
    subs = tuple(SubscriptionData(topic=f"T{i}", sub_string="*", sub_version=1) for i in range(size // 130))
    body = HeartbeatData(client_id="hostile", consumer_data_set=(
        ConsumerData(group_name="HostileGroup", consume_type="CONSUME_PASSIVELY", message_model="CLUSTERING",
                     consume_from_where="CONSUME_FROM_LAST_OFFSET", subscription_data_set=subs),)).encode()
    return encode_command(RemotingCommand.request(34, {}, body))


def batch_send(size: int) -> bytes:
    entries = [BatchEntry(body=b"x", properties={}) for _ in range(size // 24)]
    body = encode_batch(entries)
    ext = {"a": "HostileProducer", "b": "HostileTopic", "c": "TBW102", "d": "4", "e": "0", "f": "0",
           "g": "1", "h": "0", "i": "", "j": "0", "k": "false", "m": "true"}
    return encode_command(RemotingCommand.request(320, ext, body))


def sql92_check(size: int) -> bytes:
    """CHECK_CLIENT_CONFIG with a SQL92 selector of about ``size`` characters (an IN list), which
    the broker compiles on its event loop."""
    selector = "a IN (" + ",".join(f"'t{i:07d}'" for i in range(max(1, size // 11))) + ")"
    body = json.dumps({"clientId": "hostile", "group": "HostileGroup", "subscriptionData": {
        "topic": "TBW102", "subString": selector, "expressionType": "SQL92", "subVersion": 0}}).encode()
    return encode_command(RemotingCommand.request(46, {}, body))


def long_number_header(code: int, field: str, digits: int, **ext: str) -> bytes:
    return encode_command(RemotingCommand.request(code, {**ext, field: "\u0661" * digits}))


#: (kind, server, builder of a frame of about ``size`` bytes)
KINDS: list[tuple[str, str, Callable[[int], bytes]]] = [
    ("JSON header, 1e999999 in opaque", "namesrv", lambda _s: _frame_of(
        b'{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1e999999,'
        b'"serializeTypeCurrentRPC":"JSON","version":409}')),
    ("JSON header, many small entries", "namesrv", lambda s: json_header_many_entries(105, s, topic="T")),
    ("fastjson header, bare keys", "namesrv", lambda s: fastjson_header_bare_keys(105, s, topic="T")),
    ("ROCKETMQ header, many small entries", "namesrv",
     lambda s: rocketmq_header_many_entries(105, s, topic="T")),
    ("typed header, Arabic-Indic brokerId", "namesrv", lambda s: long_number_header(
        104, "brokerId", s // 2, brokerName="b", brokerAddr="127.0.0.9:10911", clusterName="C")),
    ("REGISTER_BROKER body", "namesrv", register_broker),
    ("UPDATE_NAMESRV_CONFIG body", "namesrv", lambda s: properties_body(318, s)),
    ("JSON header, many small entries", "broker", lambda s: json_header_many_entries(9999, s)),
    ("fastjson header, bare keys", "broker", lambda s: fastjson_header_bare_keys(9999, s, x="y")),
    ("ROCKETMQ header, many small entries", "broker", lambda s: rocketmq_header_many_entries(9999, s)),
    ("typed header, Arabic-Indic queueId", "broker", lambda s: long_number_header(
        30, "queueId", s // 2, topic="TBW102")),
    ("HEART_BEAT body", "broker", heartbeat),
    ("CHECK_CLIENT_CONFIG, SQL92 selector", "broker", sql92_check),
    ("SEND_BATCH_MESSAGE body (4 MiB cap)", "broker", lambda s: batch_send(min(s, 4 * MIB - 4096))),
]


def _fitting(build: Callable[[int], bytes], size: int) -> bytes:
    """``build(size)``, made smaller until the frame fits the 16 MiB cap (the builders' sizes are
    approximate)."""
    while True:
        try:
            frame = build(size)
        except EncodeError:
            frame = b""
        if frame and len(frame) - 4 <= MAX_TOTAL_LENGTH:
            return frame
        size = int(size * 0.95)


def watchdog_request(server: str) -> RemotingCommand:
    if server == "namesrv":
        return RemotingCommand.request(101, {"namespace": "watchdog", "key": "missing"})  # GET_KV_CONFIG
    return RemotingCommand.request(9999)  # unknown: REQUEST_CODE_NOT_SUPPORTED at once


def run_stalls(ns: Server, broker: Server, size: int, kinds: list[str] | None = None,
               on_row: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    dogs = {"namesrv": Watchdog(ns.port, watchdog_request("namesrv")),
            "broker": Watchdog(broker.port, watchdog_request("broker"))}
    ports = {"namesrv": ns.port, "broker": broker.port}
    for dog in dogs.values():
        dog.start()
    out = []
    try:
        time.sleep(0.3)
        for kind, server, build in KINDS:
            if kinds is not None and kind not in kinds:
                continue
            frame = _fitting(build, size)
            row = attack(ports[server], frame, dogs[server], kind, server)
            out.append(row)
            if on_row is not None:
                on_row(row)
            for dog in dogs.values():
                if dog.failed:
                    raise RuntimeError(f"watchdog: {dog.failed}")
                if dog.lost:
                    row.answer += f"; the server closed the watchdog's connection {len(dog.lost)}x"
                    dog.lost.clear()
    finally:
        for dog in dogs.values():
            dog.stop()
    return out


# ============================================================================ memory

def hold_unfinished(port: int, connections: int, held: int = 15 * MIB, announced: int = 16 * MIB - 8) -> \
        list[socket.socket]:
    """``connections`` sockets, each having sent ``held`` bytes of an ``announced``-byte frame."""
    socks = []
    chunk = b"\x00" * MIB
    for _ in range(connections):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        try:
            s.sendall(PREFIX.pack(announced, len(b"{}")) + b"{}")
            left = held - 10
            while left > 0:
                s.sendall(chunk[:min(left, MIB)])
                left -= min(left, MIB)
        except OSError:
            pass  # closed by the server on the way
        socks.append(s)
    return socks


def closed_count(socks: list[socket.socket], wait: float = 2.0) -> int:
    end = time.monotonic() + wait
    closed = 0
    for s in socks:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            if s.recv(1) == b"":
                closed += 1
        except TimeoutError:
            pass
        except OSError:
            closed += 1
    return closed


def run_memory(server: Server, connections: int, settle: float = 2.0) -> tuple[int, int, int, int]:
    """(RSS before, RSS after, connections sent, connections the server closed)."""
    before = server.rss()
    socks = hold_unfinished(server.port, connections)
    time.sleep(settle)
    after = server.rss()
    closed = closed_count(socks)
    for s in socks:
        s.close()
    return before, after, connections, closed


# ============================================================================ main

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=float, default=16, help="MiB of each worst-case frame (capped at 16)")
    ap.add_argument("--connections", type=int, default=20, help="clients holding an unfinished 16 MiB frame")
    ap.add_argument("--checkout", type=Path, default=ROOT, help="run the servers of this checkout")
    ap.add_argument("--only", choices=("stalls", "memory"), default=None)
    args = ap.parse_args(argv)
    from rich.console import Console
    from rich.table import Table

    console = Console()
    size = min(int(args.size * MIB), 16 * MIB - 1024)
    base = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    try:
        if args.only in (None, "stalls"):
            table = Table(title=f"one worst-case frame of each kind (~{size / MIB:.1f} MiB), {args.checkout}")
            for col in ("server", "frame", "bytes", "server took s", "answer", "watchdog median ms",
                        "watchdog longest ms"):
                table.add_column(col, justify="left" if col in ("server", "frame", "answer") else "right")
            with servers(base / "stalls", args.checkout) as (ns, broker):
                def row(o: Outcome) -> None:
                    console.print(f"  {o.server:8} {o.kind:40} {o.seconds:8.3f} s  watchdog longest "
                                  f"{o.worst * 1000:9.1f} ms")
                for o in run_stalls(ns, broker, size, on_row=row):
                    table.add_row(o.server, o.kind, f"{o.size:,}", f"{o.seconds:.3f}", o.answer,
                                  f"{o.median * 1000:.1f}", f"{o.worst * 1000:.1f}")
            console.print(table)
        if args.only in (None, "memory"):
            table = Table(title=f"{args.connections} connections each holding 15 MiB of a 16 MiB frame")
            for col in ("server", "RSS before MB", "RSS after MB", "connections", "closed by the server"):
                table.add_column(col, justify="right")
            with servers(base / "memory", args.checkout) as (ns, broker):
                for name, server in (("namesrv", ns), ("broker", broker)):
                    before, after, n, closed = run_memory(server, args.connections)
                    table.add_row(name, f"{before / 1e6:.0f}", f"{after / 1e6:.0f}", str(n), str(closed))
            console.print(table)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
