# Licensed under the Apache License, Version 2.0. See LICENSE.
"""ROB: hostile or careless peers (garbage, frames announced and never finished, slowloris, a
thousand idle connections, a client that never reads) must not stop a server from serving a
well-behaved client, whose latency the suite measures all along. Each case runs against the name
server and against the broker."""

from __future__ import annotations

import asyncio
import contextlib
import random
import statistics
import struct
import time
from collections.abc import Awaitable, Callable

from wire import RemotingCommand, RequestCode, ResponseCode, encode_command

from ..context import Ctx
from ..model import Level
from ..peer import RawPeer
from ..registry import case

R = RequestCode
ROLES = (("namesrv", "the name server"), ("broker", "the broker"))
#: a probe answered later than this is a failure, unless the probes before the attack were slow
#: already (see :class:`Prober`)
PROBE_LIMIT = 2.0
NETTY = "NettyRemotingServer (one event loop per connection group; NettyDecoder per channel)"


def _probe_command(ctx: Ctx, role: str) -> RemotingCommand:
    if role == "namesrv":
        return ctx.command(R.GET_KV_CONFIG, {"namespace": "conformance", "key": "probe"})
    return ctx.command(R.GET_MAX_OFFSET, {"topic": "SELF_TEST_TOPIC", "queueId": 0})


class Prober:
    """A well-behaved client asking one cheap question every ``interval`` seconds on its own
    connection; :meth:`verdict` fails the case if any answer was late or missing.

    "Late" is measured against the machine as it is: five probes before the attack give a
    baseline, and a probe during it may take up to ten times the slowest of those, and never less
    than :data:`PROBE_LIMIT` (so that a loaded CI machine does not fail a server that is fine)."""

    def __init__(self, ctx: Ctx, role: str, interval: float = 0.1) -> None:
        self.ctx = ctx
        self.role = role
        self.interval = interval
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self._task: asyncio.Task[None] | None = None
        self._stop = False
        #: probes answered before the attack began
        self.baseline: list[float] = []

    async def _run(self) -> None:
        conn = await self.ctx.connect(self.role)
        # a flag, not only the cancellation: Python 3.11's wait_for can lose a cancellation that
        # arrives as its answer does, and the prober would then ask on for ever
        while not self._stop:
            t0 = time.monotonic()
            try:
                resp = await conn.request(_probe_command(self.ctx, self.role), PROBE_LIMIT * 5)
            except Exception as exc:  # every way a probe can go wrong is a finding
                self.failures.append(f"{type(exc).__name__}: {exc}")
                conn = await self.ctx.connect(self.role)
            else:
                self.latencies.append(time.monotonic() - t0)
                if resp.code == ResponseCode.SYSTEM_BUSY:
                    self.failures.append("answered SYSTEM_BUSY")
            await asyncio.sleep(self.interval)

    async def __aenter__(self) -> Prober:
        self._task = asyncio.ensure_future(self._run())
        loop = asyncio.get_running_loop()
        end = loop.time() + 10
        while len(self.latencies) + len(self.failures) < 5 and loop.time() < end:
            await asyncio.sleep(self.interval)
        self.baseline, self.latencies = self.latencies, []
        self.ctx.check(self.baseline and not self.failures,
                       f"the {self.role} did not answer the probes before the attack: {self.failures[:1]}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._stop = True
        self._task.cancel()
        # wait for it without awaiting it: a cancellation of the case itself must not be swallowed
        await asyncio.wait([self._task])

    def verdict(self, what: str) -> None:
        ctx = self.ctx
        lat = sorted(self.latencies)
        if lat:
            ctx.note(f"{len(lat)} probes during {what}: median {statistics.median(lat) * 1000:.1f} ms, "
                     f"max {lat[-1] * 1000:.1f} ms")
        ctx.check(not self.failures, f"a probe failed during {what}: {self.failures[:1]}")
        ctx.check(lat, f"no probe was answered during {what}")
        limit = max(PROBE_LIMIT, 10 * max(self.baseline))
        ctx.check(lat[-1] <= limit,
                  f"a probe took {lat[-1]:.2f} s during {what} (limit {limit:.2f} s: ten times the slowest "
                  f"of the probes before, {max(self.baseline):.3f} s, and at least {PROBE_LIMIT:g} s)")


def _both(prefix: str, level: Level, requirement: str, source: str, *, timeout: float = 60.0,
          fast_note: str = "", doc: str = "") -> Callable[[Callable[[Ctx, str], Awaitable[None]]], None]:
    """Register ``scenario(ctx, role)`` as ``prefix-001`` (name server) and ``prefix-002`` (broker)."""

    def register(scenario: Callable[[Ctx, str], Awaitable[None]]) -> None:
        for n, (role, who) in enumerate(ROLES, 1):
            def bind(role: str = role) -> Callable[[Ctx], Awaitable[None]]:
                async def run(ctx: Ctx) -> None:
                    await scenario(ctx, role)
                return run

            case(f"{prefix}-{n:03d}", level, requirement.format(who=who), source=source, needs=(role,),
                 timeout=timeout, fast_note=fast_note, doc=doc)(bind())

    return register


@_both(
    "ROB-GARBAGE", Level.MUST,
    "{who} closes a connection that sends 64 KiB of random bytes and keeps answering a well-behaved client "
    "within 2 s",
    source=f"NettyDecoder; {NETTY}",
    doc="Ten connections each write 64 KiB of seeded random bytes (not a frame) while a probe client asks "
        "every 100 ms; each garbage connection must be closed within 5 s, every probe answered within 2 s.",
)
async def garbage(ctx: Ctx, role: str) -> None:
    rng = random.Random(20261122)
    junk = rng.randbytes(64 * 1024)
    total = struct.unpack(">i", junk[:4])[0]
    assert total < 0 or total > 16 * 1024 * 1024, "the seed must give a length the decoder refuses at once"
    async with Prober(ctx, role) as prober:
        peers = [await ctx.raw(role) for _ in range(10)]
        for peer in peers:
            peer.send(junk)
        closed = await asyncio.gather(*(p.wait_closed(5.0) for p in peers))
        await asyncio.sleep(0.3)
    ctx.check(all(closed), f"{closed.count(False)} of 10 garbage connections still open after 5 s")
    prober.verdict("the garbage")


@_both(
    "ROB-LEN", Level.MUST,
    "{who} keeps answering a well-behaved client within 2 s while 20 connections announce 16 MiB frames and "
    "stop after 64 KiB",
    source=f"NettyDecoder (LengthFieldBasedFrameDecoder buffers per channel); {NETTY}",
    timeout=60.0,
    doc="Twenty connections each send a frame prefix announcing 16 MiB − 4 bytes (the largest allowed) and "
        "64 KiB of it, then stall for 2 s; every probe must be answered within 2 s.",
)
async def big_announced(ctx: Ctx, role: str) -> None:
    total = 16 * 1024 * 1024 - 4
    head = struct.pack(">iI", total, 100) + b"{" * (64 * 1024)
    async with Prober(ctx, role) as prober:
        peers = [await ctx.raw(role) for _ in range(20)]
        for peer in peers:
            peer.send(head)
            await peer.drain()
        await asyncio.sleep(2.0)
    prober.verdict("the 16 MiB announcements")


@_both(
    "ROB-SLOW", Level.MUST,
    "{who} keeps answering a well-behaved client within 2 s while 20 connections send their requests one "
    "byte at a time (slowloris), and answers those requests once they are complete",
    source=NETTY,
    timeout=90.0,
    fast_note="--fast: 3 s of trickling instead of 20 s",
    doc="Twenty connections each trickle one valid request, one byte every 200 ms or less (spread over 20 s, "
        "3 s with --fast) while a probe client asks every 100 ms; every probe must be answered within 2 s "
        "and every trickled request answered once its last byte is in.",
)
async def slowloris(ctx: Ctx, role: str) -> None:
    span = 3.0 if ctx.fast else 20.0
    frames = [encode_command(_probe_command(ctx, role).replace(opaque=800 + i)) for i in range(20)]

    async def trickle(peer: RawPeer, data: bytes) -> None:
        step = span / len(data)
        for i in range(len(data)):
            peer.send(data[i:i + 1])
            await peer.drain()
            await asyncio.sleep(step)

    async with Prober(ctx, role) as prober:
        peers = [await ctx.raw(role) for _ in frames]
        await asyncio.gather(*(trickle(p, f) for p, f in zip(peers, frames, strict=True)))
        answers = await asyncio.gather(*(p.response_to(800 + i, 5.0) for i, p in enumerate(peers)))
    prober.verdict(f"{span:g} s of slowloris")
    missing = [i for i, a in enumerate(answers) if a is None]
    ctx.check(not missing, f"{len(missing)} of 20 trickled requests were never answered")


@_both(
    "ROB-IDLE", Level.MUST,
    "{who} accepts 1,000 idle connections, keeps answering a well-behaved client within 2 s, and still "
    "serves the idle connections",
    source=NETTY,
    timeout=90.0,
    doc="Opens 1,000 connections that send nothing (100 at a time) while a probe client asks every 100 ms, "
        "then sends one request on every tenth idle connection; all must be answered.",
)
async def idle_connections(ctx: Ctx, role: str) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    addr = ctx.addr(role)
    peers: list[RawPeer] = []
    sem = asyncio.Semaphore(100)

    async def open_one() -> None:
        async with sem:
            peers.append(await RawPeer.open(addr, 10.0))

    try:
        async with Prober(ctx, role) as prober:
            t0 = time.monotonic()
            results = await asyncio.gather(*(open_one() for _ in range(1000)), return_exceptions=True)
            ctx.note(f"1,000 connections opened in {time.monotonic() - t0:.1f} s")
            errors = [r for r in results if isinstance(r, BaseException)]
            ctx.check(not errors, f"{len(errors)} of 1,000 connections could not be opened: {errors[:1]}")
            await asyncio.sleep(1.0)
            chosen = peers[::10]
            t0 = time.monotonic()
            for i, peer in enumerate(chosen):
                peer.send_command(_probe_command(ctx, role).replace(opaque=5000 + i))
            answers = await asyncio.gather(*(p.response_to(5000 + i, 10.0) for i, p in enumerate(chosen)))
            ctx.note(f"{len(chosen)} requests on idle connections answered in {time.monotonic() - t0:.1f} s")
        prober.verdict("1,000 idle connections")
        ctx.check(all(a is not None for a in answers),
                  f"{sum(a is None for a in answers)} of {len(chosen)} requests on idle connections were not "
                  "answered")
    finally:
        t0 = time.monotonic()
        await asyncio.gather(*(p.close() for p in peers), return_exceptions=True)
        ctx.note(f"closed in {time.monotonic() - t0:.1f} s")


@_both(
    "ROB-UNREAD", Level.SHOULD,
    "{who} keeps answering a well-behaved client within 2 s while another client sends thousands of requests "
    "and never reads the answers",
    source=f"{NETTY}; Netty write buffer water marks",
    timeout=60.0,
    doc="One connection writes 20,000 requests without reading a byte while a probe client asks every "
        "100 ms.",
)
async def unread(ctx: Ctx, role: str) -> None:
    data = encode_command(_probe_command(ctx, role)) * 1000
    async with Prober(ctx, role) as prober:
        peer = await ctx.raw(role)
        for _ in range(20):
            peer.send(data)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(peer.drain(), 1.0)
        await asyncio.sleep(1.0)
    prober.verdict("a client that does not read")
