# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Reference broker throughput: sends/s and pulls/s, as ratios to a minimal asyncio server.

Usage::

    .venv/bin/python benchmarks/bench_broker.py [--seconds 3] [--body 1024] [--cases 1x1,4x32,16x64]
    .venv/bin/python benchmarks/bench_broker.py --java [--seconds 10] [--runs 2]

Each server runs in its own process; this process is the load generator, built on :mod:`wire`:
``C`` connections each keep ``W`` requests in flight (``C``x``W``), writing the next pre-encoded
frame as soon as an answer comes back (answers are counted by their length prefixes; one in 64
is cut with :class:`wire.FrameBuffer` and decoded to check its code). Cases, for ASYNC_FLUSH and
SYNC_FLUSH brokers:

* **send**: SEND_MESSAGE_V2 of 1 KiB bodies (UNIQ_KEY, KEYS, TAGS and WAIT properties, as a Java
  producer sends them) to 8 queues of one topic;
* **pull**: PULL_MESSAGE of 32 messages (SUBSCRIPTION flag, ``*``) from the messages the send
  case stored, offsets cycling over the queues; the rate is of messages (32 per answer).

* **C++ peer**: the official C++ client (PyPI ``rocketmq``, when installed) sends ``--cpp`` messages
  with ``send_sync``, one at a time, through a reference name server (the baseline server is
  registered with it as a stand-in broker).

In the same run, the same frames go to a minimal server (:func:`wire.aio.start_server` whose
handler answers SUCCESS with no body, plus the three fields a send answer needs), and the table
shows the broker's rate as a ratio of it. It also shows the CPU time the server process used per
answer (all its threads, from ``/proc``) over the measured window: on a shared machine, where
other work takes cores away and moves the rates, this is the steadier figure of what a request
costs. The broker's resident memory is printed once its cases are done, and when it idles
(``--idle``). No assertions: the figures are for reading. For scale, a Java 4.9.8 broker on a
2-core machine does about 26,700 sends/s at 16x64 and about 235,000 pulled messages/s, and
idles at about 185 MiB RSS.

Side by side with Java (``--java``)
-----------------------------------
The real Java 4.9.8 broker of ``../shared/javakit`` (started through ``tests/javakit.py``: free
ports, its own node dir, stopped at the end whatever happens) and ours run one after the other,
each from the same ``broker.properties`` (one master, 1 GiB CommitLog files, 8 queues,
ASYNC_FLUSH then SYNC_FLUSH), under the same generator: sends 1x1 and 16x64, pulls 4x32 with 32
messages per pull (from what the sends stored), and the RSS of each broker idling after its
start. Both brokers of a flush type run at once and take each case in turns (Java, ours, Java,
ours, ``--runs`` times; the best of each kept), after one warm-up of the JIT and of our caches,
so that a change of the machine's load meets both. Every answer is checked (its code read from
the header), and only successful ones count: Java answers SYSTEM_BUSY when its send queue backs
up. The table (rich) shows both rates, each
broker's CPU per answer and the ratio ours / Java; only ratios from one run mean anything on a
shared machine. The minimal server above takes the send cases in the same turns, and its rate as a
ratio of Java's shows the ceiling of any asyncio server on the machine (at 1x1 the round trip,
not the work, sets the pace).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reference_broker.runtime import run_async  # noqa: E402
from wire import FrameBuffer, RemotingCommand, decode_frame, encode_command  # noqa: E402
from wire.aio import RemotingConnection  # noqa: E402

TOPIC = "BenchTopic"
QUEUES = 8
PULL_BATCH = 32
SAMPLE = 64
_LENGTH = struct.Struct(">i")
_CODE = re.compile(rb'"code":(-?\d+)')
#: answers that count as served: SUCCESS, and a pull that found nothing new (PULL_NOT_FOUND)
_SERVED = (0, 19)


# ----------------------------------------------------------------------------- servers


_SEND_OK = {"msgId": "7F00000100002A9F0000000000000000", "queueId": "0", "queueOffset": "0"}


async def _serve_baseline() -> None:
    from wire.aio import start_server

    # SUCCESS to everything; sends also get the three fields a client needs to read SEND_OK
    def answer(conn: object, req: RemotingCommand) -> RemotingCommand:
        return req.response(0, None, _SEND_OK if req.code in (10, 310) else None)

    server = await start_server(answer, "127.0.0.1", 0)
    print(server.port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await server.close()


async def _serve_broker(flush: str, root: str, namesrv: str = "") -> None:
    from reference_broker.broker import Broker
    from reference_broker.config import BrokerConfig

    cfg = BrokerConfig(overrides={
        "storePathRootDir": root, "brokerName": "bench-a", "namesrvAddr": namesrv, "flushDiskType": flush,
        "mappedFileSizeCommitLog": str(256 << 20), "autoCreateTopicEnable": "true"})
    async with Broker(cfg, host="127.0.0.1", port=0) as b:
        print(b.port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def _serve_broker_file(path: str, root: str) -> None:
    """Our broker from a RocketMQ ``broker.properties`` (the one the Java broker gets too)."""
    from reference_broker.broker import Broker
    from reference_broker.config import BrokerConfig

    cfg = BrokerConfig.load(path, {"storePathRootDir": root,
                                   "storePathCommitLog": str(Path(root) / "commitlog")})
    async with Broker(cfg, host="127.0.0.1", port=0) as b:
        print(b.port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def _serve_namesrv(root: str) -> None:
    from reference_broker.config import NamesrvConfig
    from reference_broker.namesrv import NameServer

    cfg = NamesrvConfig(overrides={"kvConfigPath": str(Path(root) / "kv.json")})
    async with NameServer(cfg, port=0) as ns:
        print(ns.port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


class Measured:
    """A server process measured through /proc: ``pid`` and ``port``."""

    pid = 0
    port = 0

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process so far (all threads); 0 where /proc is missing."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0


class Server(Measured):
    """A server process of ours; its port comes on its first stdout line, EOF on stdin stops it."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.pid = self.proc.pid
        self.port = int(self.proc.stdout.readline())

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# ----------------------------------------------------------------------------- load generator


class _Pipe(asyncio.Protocol):
    def __init__(self, frames: list[bytes], window: int, stats: dict[str, int], sample: int = 0) -> None:
        self.frames = frames
        #: decode every ``sample``-th answer (SAMPLE by default; 1: every one, so ``ok`` counts them)
        self.sample = sample or SAMPLE
        self.window = window
        self.stats = stats
        self.buf = bytearray()
        self.next = 0
        self.stop = False
        self.transport: asyncio.Transport | None = None
        self.idle = asyncio.get_running_loop().create_future()
        self.outstanding = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        for _ in range(self.window):
            self._send()

    def _send(self) -> None:
        assert self.transport is not None
        self.transport.write(self.frames[self.next])
        self.next = (self.next + 1) % len(self.frames)
        self.outstanding += 1

    def data_received(self, data: bytes) -> None:
        # answers are counted by walking their length prefixes; only the sampled ones are cut
        # out and decoded (through FrameBuffer), so that the load generator's own copying does
        # not take CPU from the server on a small machine (pull answers are ~40 KB each)
        buf = self.buf
        buf += data
        pos, end_of_data = 0, len(buf)
        while end_of_data - pos >= 4:
            end = pos + 4 + _LENGTH.unpack_from(buf, pos)[0]
            if end > end_of_data:
                break
            self.outstanding -= 1
            n = self.stats["answers"] = self.stats["answers"] + 1
            if self.sample == 1:
                # every answer checked: its code read from the JSON header, nothing copied
                head_len = _LENGTH.unpack_from(buf, pos + 4)[0] & 0xFFFFFF
                m = _CODE.search(buf, pos + 8, pos + 8 + head_len)
                if m is None or int(m.group(1)) not in _SERVED:
                    self.stats["errors"] += 1
                else:
                    self.stats["ok"] += 1
            elif n % self.sample == 0:
                fb = FrameBuffer()
                fb.feed(buf[pos:end])
                frame = fb.next_frame()
                if frame is None or decode_frame(frame).code not in _SERVED:
                    self.stats["errors"] += 1
                else:
                    self.stats["ok"] += 1
            pos = end
            if not self.stop:
                self._send()
            elif self.outstanding == 0 and not self.idle.done():
                self.idle.set_result(None)
        del buf[:pos]


async def _load(port: int, frames: list[bytes], conns: int, window: int, seconds: float,
                server: Measured | None = None, *, ok_only: bool = False) -> tuple[float, float]:
    """Answers per second over ``seconds`` (after a short warm-up), and the server's CPU
    microseconds per answer over the same window (0 without ``server``). With ``ok_only`` every
    answer is decoded and only successful ones count (for a server that answers busy under load)."""
    loop = asyncio.get_running_loop()
    stats = {"answers": 0, "errors": 0, "ok": 0}
    key = "ok" if ok_only else "answers"
    pipes: list[_Pipe] = []
    for i in range(conns):
        part = frames[i::conns] or frames
        _, p = await loop.create_connection(lambda part=part: _Pipe(part, window, stats, 1 if ok_only else 0),
                                            "127.0.0.1", port)
        pipes.append(p)
    await asyncio.sleep(min(0.5, seconds / 4))
    start_cpu = server.cpu_seconds() if server else 0.0
    start_n, start_t = stats[key], time.perf_counter()
    await asyncio.sleep(seconds)
    n, t = stats[key], time.perf_counter()
    cpu = server.cpu_seconds() - start_cpu if server else 0.0
    for p in pipes:
        p.stop = True
    for p in pipes:
        if p.outstanding:
            try:
                await asyncio.wait_for(p.idle, 30)
            except TimeoutError:
                pass
        assert p.transport is not None
        p.transport.close()
    if stats["errors"]:
        print(f"  ({stats['errors']} {'' if ok_only else 'sampled '}answers were errors)", file=sys.stderr)
    answers = max(1, n - start_n)
    return answers / (t - start_t), cpu * 1e6 / answers


def send_frames(body_size: int, count: int = 4096) -> list[bytes]:
    body = (b"0123456789abcdef" * (body_size // 16 + 1))[:body_size]
    frames = []
    for i in range(count):
        props = (f"UNIQ_KEY\x01C0A8000100002A9F{i:016X}\x02KEYS\x01order-{i}\x02TAGS\x01TagA"
                 "\x02WAIT\x01true")
        ext = {"a": "BenchProducer", "b": TOPIC, "c": "TBW102", "d": str(QUEUES), "e": str(i % QUEUES),
               "f": "0", "g": str(1_795_000_000_000 + i), "h": "0", "i": props, "j": "0", "k": "false",
               "m": "false"}
        frames.append(encode_command(RemotingCommand.request(310, ext, body, opaque=i + 1)))
    return frames


def pull_frames(per_queue: int) -> list[bytes]:
    frames = []
    top = max(1, per_queue - PULL_BATCH)
    for off in range(0, top, PULL_BATCH):
        for q in range(QUEUES):
            ext = {"consumerGroup": "BenchGroup", "topic": TOPIC, "queueId": str(q), "queueOffset": str(off),
                   "maxMsgNums": str(PULL_BATCH), "sysFlag": "4", "commitOffset": "0",
                   "suspendTimeoutMillis": "0", "subscription": "*", "subVersion": "0",
                   "expressionType": "TAG"}
            frames.append(encode_command(RemotingCommand.request(11, ext, opaque=len(frames) + 1)))
    return frames


async def _max_offset(port: int) -> int:
    from wire.aio import connect

    conn = await connect("127.0.0.1", port)
    try:
        offsets = []
        for q in range(QUEUES):
            r = await conn.request(RemotingCommand.request(30, {"topic": TOPIC, "queueId": str(q)}))
            offsets.append(int(r.ext_fields.get("offset", "0")))
        return min(offsets)
    finally:
        await conn.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--body", type=int, default=1024)
    ap.add_argument("--cases", default="1x1,4x32,16x64")
    ap.add_argument("--flush", default="ASYNC_FLUSH,SYNC_FLUSH")
    ap.add_argument("--dir", default=None, help="where the brokers' stores go (default: a temp dir)")
    ap.add_argument("--idle", type=float, default=0.0,
                    help="seconds to let each broker idle after start before its RSS is read (0: skip)")
    ap.add_argument("--cpp", type=int, default=500,
                    help="sync sends of the C++ peer (PyPI rocketmq) per target; 0 to skip")
    ap.add_argument("--java", action="store_true",
                    help="side by side with the Java 4.9.8 broker of ../shared/javakit (see the notes)")
    ap.add_argument("--runs", type=int, default=1, help="with --java: runs of each case (the best is kept)")
    ap.add_argument("--phases", action="store_true",
                    help="our broker's CPU per pipelined send by phase (read, decode, handle, append, "
                         "dispatch, answer), in process, from a cProfile run scaled by a plain one")
    ap.add_argument("--phase-count", type=int, default=40_000, help="with --phases: sends per run")
    ap.add_argument("--serve", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve is not None:
        if args.serve[0] == "baseline":
            run_async(_serve_baseline())
        elif args.serve[0] == "namesrv":
            run_async(_serve_namesrv(args.serve[1]))
        elif args.serve[0] == "broker-file":
            run_async(_serve_broker_file(*args.serve[1:]))
        else:
            run_async(_serve_broker(*args.serve[1:]))
        return
    if args.phases:
        sys.exit(phases_main(args))
    if args.java:
        args.idle = args.idle or 5.0
        sys.exit(java_main(args))
    cases = [tuple(int(x) for x in c.split("x")) for c in args.cases.split(",")]
    sends = send_frames(args.body)
    base_dir = Path(tempfile.mkdtemp(prefix="bench-broker-", dir=args.dir))
    rows: list[Row] = []
    notes: list[str] = []
    baseline = Server("baseline")
    try:
        base_rates: dict[tuple[str, int, int], tuple[float, float]] = {}
        for c, w in cases:
            base_rates[("send", c, w)] = asyncio.run(
                _load(baseline.port, sends, c, w, args.seconds, baseline))
        for flush in args.flush.split(","):
            broker = Server("broker", flush, str(base_dir / flush))
            try:
                if args.idle:
                    time.sleep(args.idle)
                    notes.append(f"{flush} broker idle after start: {broker.rss_mib():.0f} MiB RSS")
                for c, w in cases:
                    rate, cpu = asyncio.run(_load(broker.port, sends, c, w, args.seconds, broker))
                    rows.append((flush, f"send {c}x{w}", rate, cpu, *base_rates[("send", c, w)]))
                per_queue = asyncio.run(_max_offset(broker.port))
                pulls = pull_frames(per_queue)
                for c, w in cases:
                    key = ("pull", c, w)
                    if key not in base_rates:
                        base, base_cpu = asyncio.run(
                            _load(baseline.port, pulls, c, w, args.seconds, baseline))
                        base_rates[key] = (base * PULL_BATCH, base_cpu)
                    rate, cpu = asyncio.run(_load(broker.port, pulls, c, w, args.seconds, broker))
                    rows.append((flush, f"pull {c}x{w} (msgs)", rate * PULL_BATCH, cpu, *base_rates[key]))
                notes.append(f"{flush} broker after its cases: {broker.rss_mib():.0f} MiB RSS")
            finally:
                broker.stop()
        if args.cpp and _have_cpp_peer():
            rows.extend(_cpp_rows(args, base_dir, baseline.port))
    finally:
        baseline.stop()
        shutil.rmtree(base_dir, ignore_errors=True)
    print(f"{len(sends)} distinct {args.body}-byte sends; {PULL_BATCH} messages per pull; "
          f"{args.seconds:g}s per case; {os.cpu_count()} CPUs; cpu = server CPU us per answer")
    print(f"{'flush':<12} {'case':<22} {'broker/s':>10} {'cpu':>6} {'baseline/s':>11} {'cpu':>6} "
          f"{'ratio':>6}")
    for flush, case, rate, cpu, base, base_cpu in rows:
        print(f"{flush:<12} {case:<22} {rate:>10.0f} {_us(cpu):>6} {base:>11.0f} {_us(base_cpu):>6} "
              f"{rate / base:>6.3f}")
    for note in notes:
        print(note)


#: flush, case, broker rate, broker CPU us per answer, baseline rate, baseline CPU us per answer
Row = tuple[str, str, float, float, float, float]


def _us(cpu: float) -> str:
    return f"{cpu:.1f}" if cpu else "-"


# ----------------------------------------------------------------------------- side by side with Java

#: the cases of the side-by-side run: (kind, connections, window)
JAVA_CASES = (("send", 1, 1), ("send", 16, 64), ("pull", 4, 32))
JAVA_WARMUP = ("send", 16, 64)


def broker_properties(flush: str) -> dict[str, str]:
    """The one broker.properties both brokers run with (store paths are set per broker)."""
    return {
        "brokerClusterName": "DefaultCluster", "brokerName": "bench-a", "brokerId": "0",
        "brokerRole": "ASYNC_MASTER", "flushDiskType": flush, "brokerIP1": "127.0.0.1",
        "brokerIP2": "127.0.0.1", "mappedFileSizeCommitLog": str(1 << 30), "autoCreateTopicEnable": "true",
        "defaultTopicQueueNums": str(QUEUES),
    }


class JavaBroker(Measured):
    """The Java 4.9.8 broker through the one harness, tests/javakit.py (free ports, stopped at close)."""

    def __init__(self, base: Path, props: dict[str, str]) -> None:
        sys.path.insert(0, str(ROOT / "tests"))
        import javakit

        self.servers = javakit.JavaServers(base)
        try:
            rest = {k: v for k, v in props.items()
                    if k not in ("brokerClusterName", "brokerName", "brokerId", "brokerRole",
                                 "mappedFileSizeCommitLog")}
            proc = self.servers.broker("4.9.8", cluster=props["brokerClusterName"], name=props["brokerName"],
                                       role=props["brokerRole"],
                                       commitlog_file_size=int(props["mappedFileSizeCommitLog"]), **rest)
        except BaseException:
            self.servers.close()
            raise
        self.pid, self.port = proc.pid, proc.port

    def stop(self) -> None:
        self.servers.close()


#: flush, case, Java rate and CPU us, ours rate and CPU us, the minimal server's rate (0: not run)
JavaRow = tuple[str, str, float, float, float, float, float]


def _run_case(server: Measured, kind: str, c: int, w: int, frames: list[bytes],
              seconds: float) -> tuple[float, float]:
    """One case on one broker: answers (messages, for pulls) per second, CPU us per each."""
    rate, cpu = asyncio.run(_load(server.port, frames, c, w, seconds, server, ok_only=True))
    if kind == "pull":
        rate, cpu = rate * PULL_BATCH, cpu / PULL_BATCH
    return rate, cpu


def java_main(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    sys.path.insert(0, str(ROOT / "tests"))
    import javakit

    console = Console(width=max(120, Console().width))
    missing = javakit.javakit_missing()
    if missing:
        console.print(f"[red]cannot run side by side:[/red] {missing}")
        return 2
    sends = send_frames(args.body)
    base_dir = Path(tempfile.mkdtemp(prefix="bench-broker-java-", dir=args.dir))
    rows: list[JavaRow] = []
    idle: dict[str, list[float]] = {"Java 4.9.8": [], "ours": []}
    flushes = args.flush.split(",")
    started = time.time()
    try:
        for flush in flushes:
            props = broker_properties(flush)
            prop_file = base_dir / f"broker-{flush}.properties"
            prop_file.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
            # both brokers run at once and take the cases in turns, run by run, so that a change
            # of the machine's load meets both alike (the idle one takes next to no CPU)
            console.print(f"[bold]{flush}[/bold]: starting Java 4.9.8 and ours ...")
            servers: dict[str, JavaBroker | Server] = {}
            try:
                servers["Java 4.9.8"] = JavaBroker(base_dir / f"java-{flush}", props)
                servers["ours"] = Server("broker-file", str(prop_file), str(base_dir / f"ours-{flush}"))
                # the ceiling of a Python server on this machine: the minimal asyncio server, sends only
                servers["minimal"] = Server("baseline")
                if args.idle:
                    time.sleep(args.idle)
                    for who, server in servers.items():
                        if who in idle:
                            idle[who].append(server.rss_mib())
                kind, c, w = JAVA_WARMUP
                for server in servers.values():
                    _run_case(server, kind, c, w, sends, min(args.seconds, 3.0))
                best: dict[tuple[str, str], tuple[float, float]] = {}
                pulls: dict[str, list[bytes]] = {}
                for kind, c, w in JAVA_CASES:
                    name = f"{kind} {c}x{w}"
                    for _ in range(args.runs):
                        for who, server in servers.items():
                            if who == "minimal" and kind != "send":
                                continue
                            if kind == "pull" and who not in pulls:
                                pulls[who] = pull_frames(asyncio.run(_max_offset(server.port)))
                            frames = sends if kind == "send" else pulls[who]
                            rate, cpu = _run_case(server, kind, c, w, frames, args.seconds)
                            if rate > best.get((who, name), (0.0, 0.0))[0]:
                                best[(who, name)] = (rate, cpu)
                    (j, jc), (o, oc) = best[("Java 4.9.8", name)], best[("ours", name)]
                    m = best.get(("minimal", name), (0.0, 0.0))[0]
                    console.print(f"  {name}: Java {j:,.0f}/s, ours {o:,.0f}/s"
                                  + (f", minimal server {m:,.0f}/s" if m else ""))
                    rows.append((flush, name, j, jc, o, oc, m))
            finally:
                for server in servers.values():
                    server.stop()
    finally:
        shutil.rmtree(base_dir, ignore_errors=True)
    load = os.getloadavg()
    table = Table(title=f"broker side by side: Java 4.9.8 vs ours, {args.body}-byte bodies, "
                        f"{args.seconds:g}s x {args.runs} per case")
    for col in ("flush", "case", "Java 4.9.8/s", "Java cpu us", "ours/s", "ours cpu us", "ours / Java",
                "minimal / Java"):
        table.add_column(col, justify="left" if col in ("flush", "case") else "right")
    for flush, name, j, jc, o, oc, m in rows:
        label = name if name.startswith("send") else f"{name} (msgs, {PULL_BATCH}/pull)"
        table.add_row(flush, label, f"{j:,.0f}", f"{jc:.1f}", f"{o:,.0f}", f"{oc:.1f}",
                      f"{o / j:.2f}x" if j else "-", f"{m / j:.2f}x" if j and m else "-")
    if args.idle and idle["ours"] and idle["Java 4.9.8"]:
        j, o = max(idle["Java 4.9.8"]), max(idle["ours"])
        table.add_row("", f"idle RSS after {args.idle:g}s (MiB)", f"{j:.1f}", "", f"{o:.1f}", "",
                      f"{o / j:.2f}x" if j else "-", "")
    console.print(table)
    console.print(f"{os.cpu_count()} CPUs; load average at the end {load[0]:.2f} {load[1]:.2f} "
                  f"{load[2]:.2f}; "
                  f"{time.time() - started:.0f} s in all; cpu = the broker process's CPU (all threads) per "
                  "answer (per message for pulls); minimal = a wire.aio server answering each send "
                  "SUCCESS with nothing stored, the most a Python server does here")
    return 0


# ----------------------------------------------------------------------------- where a send's CPU goes

#: the phases of a request on our broker, each the cumulative time of these functions (file
#: suffix, function name); a phase's own figure leaves out the phases nested inside it
PHASES: dict[str, tuple[tuple[str, str], ...]] = {
    "read": (("wire/_buffer.py", "feed"), ("wire/framing.py", "next_frame")),
    "decode": (("wire/remoting.py", "decode_frame"),),
    "handle": (("reference_broker/broker/broker.py", "_handle"),
               ("reference_broker/broker/broker.py", "_handle_sends")),
    "append": (("reference_broker/store/append.py", "put"),
               ("reference_broker/store/append.py", "put_deferred"),
               ("reference_broker/store/runs.py", "put_run")),
    "dispatch": (("reference_broker/store/dispatch.py", "dispatch"),
                 ("reference_broker/store/dispatch.py", "dispatch_many")),
    "answer": (("wire/aio.py", "_reply"), ("wire/aio.py", "_flush")),
}
#: what each phase contains of the others (their time is taken out of it)
_NESTED = {"handle": ("append",), "append": ("dispatch",)}


class _Sink:
    """A transport that takes the answers and counts their bytes (no socket: only the broker's CPU)."""

    def __init__(self) -> None:
        self.bytes = 0
        #: done at the next write (set by whoever waits for answers)
        self.written: asyncio.Future[None] | None = None

    def write(self, data: bytes) -> None:
        self.bytes += len(data)
        self._wrote()

    def writelines(self, data: list[bytes]) -> None:
        self.bytes += sum(len(d) for d in data)
        self._wrote()

    def _wrote(self) -> None:
        if self.written is not None and not self.written.done():
            self.written.set_result(None)

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("127.0.0.1", 50000) if name in ("peername", "sockname") else default

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


async def _phase_run(flush: str, root: str, count: int, window: int,
                     profile: bool) -> tuple[float, dict[str, float]]:
    """``count`` sends fed to one connection of an in-process broker ``window`` frames per read:
    CPU us per send (process time), and with ``profile`` the cProfile seconds of each phase."""
    import cProfile
    import pstats

    from reference_broker.broker import Broker
    from reference_broker.config import BrokerConfig

    cfg = BrokerConfig(overrides={
        "storePathRootDir": root, "brokerName": "bench-a", "namesrvAddr": "", "flushDiskType": flush,
        "mappedFileSizeCommitLog": str(1 << 30), "autoCreateTopicEnable": "true"})
    frames = send_frames(1024)
    chunks = [b"".join(frames[i:i + window]) for i in range(0, len(frames), window)]
    async with Broker(cfg, host="127.0.0.1", port=0) as b:
        server = b._server
        assert server is not None
        conn = server._factory()
        sink = _Sink()
        conn.connection_made(sink)  # type: ignore[arg-type]
        for chunk in chunks[:8]:  # warm-up: the topic is created, caches filled
            conn.data_received(chunk)
        await asyncio.sleep(0.05)
        prof = cProfile.Profile() if profile else None
        start = time.process_time()
        if prof is not None:
            prof.enable()
        done = 0
        while done < count:
            for chunk in chunks:
                conn.data_received(chunk)
                done += window
                while conn.pending_handlers:
                    # SYNC_FLUSH: idle until the group commit's answers are written (a busy wait,
                    # or a timer polling, would count as our CPU)
                    sink.written = asyncio.get_running_loop().create_future()
                    await sink.written
                if done >= count:
                    break
        if prof is not None:
            prof.disable()
        cpu = time.process_time() - start
        conn.connection_lost(None)
    phases: dict[str, float] = {}
    if prof is not None:
        stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
        for name, funcs in PHASES.items():
            phases[name] = sum(v[3] for (file, _, fn), v in stats.items()
                               if any(file.endswith(f) and fn == want for f, want in funcs))
        phases["total"] = sum(v[2] for v in stats.values())
    return cpu * 1e6 / done, phases


def phases_main(args: argparse.Namespace) -> int:
    """Where a pipelined send's CPU goes on our broker, phase by phase (see ``--phases``)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(120, Console().width))
    base_dir = Path(tempfile.mkdtemp(prefix="bench-broker-phases-", dir=args.dir))
    table = Table(title=f"our broker: CPU per pipelined {args.body}-byte send, by phase (us; "
                        f"{args.phase_count:,} sends fed 64 frames a read, no socket)")
    table.add_column("flush")
    for col in (*PHASES, "other", "total"):
        table.add_column(col, justify="right")
    try:
        for flush in args.flush.split(","):
            n = args.phase_count
            per_msg, _ = run_async(_phase_run(flush, str(base_dir / f"{flush}-plain"), n, 64, False))
            _, prof = run_async(_phase_run(flush, str(base_dir / f"{flush}-prof"), n, 64, True))
            total = prof.pop("total") or 1.0
            own = dict(prof)
            for outer, inner in _NESTED.items():
                own[outer] = prof[outer] - sum(prof[i] for i in inner)
            own["other"] = total - sum(own.values())
            # the profile gives the shares; the plain run the scale (cProfile slows every call)
            cells = [f"{per_msg * own[name] / total:.1f}" for name in (*PHASES, "other")]
            table.add_row(flush, *cells, f"{per_msg:.1f}")
    finally:
        shutil.rmtree(base_dir, ignore_errors=True)
    console.print(table)
    console.print("read: framing the bytes of each read; decode: header decoding; handle: the send "
                  "processor (header fields, checks, properties, the response built); append: the "
                  "store's put (checks, record encoding, the CommitLog write); dispatch: consume queue "
                  "and index; answer: the response encoded and written; other: the loop, coroutines "
                  "and futures, the flush thread (CPU of all threads)")
    return 0


# ----------------------------------------------------------------------------- the C++ peer

CPP_PRODUCER = """
import sys, time
from rocketmq.client import Message, Producer
p = Producer("CppBenchGroup", timeout=10000)
p.set_namesrv_addr(sys.argv[1])
p.start()
body = "x" * int(sys.argv[3])
def send():
    m = Message(sys.argv[2]); m.set_body(body); m.set_keys("k"); m.set_tags("TagA")
    p.send_sync(m)
for _ in range(20):
    send()
n = int(sys.argv[4]); t = time.perf_counter()
for _ in range(n):
    send()
print(n / (time.perf_counter() - t), flush=True)
p.shutdown()
"""


def _have_cpp_peer() -> bool:
    try:
        import rocketmq.client  # noqa: F401
    except (ImportError, OSError):
        return False
    return True


async def _register_stand_in(ns_port: int, broker_port: int) -> RemotingConnection:
    """Register the baseline server with the name server as a broker (keep the connection open)."""
    import zlib

    from wire.aio import connect
    from wire.bodies import DataVersion, RegisterBrokerBody, TopicConfig, TopicConfigSerializeWrapper

    table = {t: TopicConfig(topic_name=t, read_queue_nums=QUEUES, write_queue_nums=QUEUES,
                            perm=7 if t == "TBW102" else 6) for t in ("TBW102", "CppBench")}
    body = RegisterBrokerBody(topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
        topic_config_table=table, data_version=DataVersion(counter=1, timestamp=1))).encode()
    conn = await connect("127.0.0.1", ns_port)
    await conn.request(RemotingCommand.request(103, {
        "brokerName": "bench-a", "brokerAddr": f"127.0.0.1:{broker_port}",
        "clusterName": "DefaultCluster", "haServerAddr": "127.0.0.1:1", "brokerId": 0, "compressed": False,
        "bodyCrc32": zlib.crc32(body) & 0x7FFFFFFF}, body))
    return conn


def _cpp_rate(ns_port: int, args: argparse.Namespace, home: Path) -> float:
    home.mkdir(parents=True, exist_ok=True)
    script = home / "cpp_producer.py"
    script.write_text(CPP_PRODUCER)
    out = subprocess.run([sys.executable, str(script), f"127.0.0.1:{ns_port}", "CppBench", str(args.body),
                          str(args.cpp)], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "HOME": str(home)})
    return float(out.stdout.strip().splitlines()[-1])


def _cpp_rows(args: argparse.Namespace, base_dir: Path, baseline_port: int) -> list[Row]:
    """The C++ peer's sync sends (one producer, one send at a time) through a name server."""
    rows = []
    ns = Server("namesrv", str(base_dir / "ns-base"))
    try:
        async def with_stand_in() -> float:
            conn = await _register_stand_in(ns.port, baseline_port)
            try:
                return await asyncio.get_running_loop().run_in_executor(
                    None, _cpp_rate, ns.port, args, base_dir / "home-base")
            finally:
                await conn.aclose()

        base = asyncio.run(with_stand_in())
    finally:
        ns.stop()
    for flush in args.flush.split(","):
        ns = Server("namesrv", str(base_dir / f"ns-{flush}"))
        broker = Server("broker", flush, str(base_dir / f"cpp-{flush}"), f"127.0.0.1:{ns.port}")
        try:
            rate = _cpp_rate(ns.port, args, base_dir / f"home-{flush}")
            rows.append((flush, "C++ peer sync send", rate, 0.0, base, 0.0))
        finally:
            broker.stop()
            ns.stop()
    return rows


if __name__ == "__main__":
    main()
