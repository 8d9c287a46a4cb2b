# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Re-sending captured client traffic to a target and judging the answers.

Theory of operation
-------------------
Each recorded connection that a client opened (:attr:`Connection.background` ones are left out
unless asked for) is replayed on a connection of its own to the address its server port maps to.
Steps go out in capture time order, across connections, each request with a fresh opaque
(:meth:`wire.aio.RemotingConnection.request` pairs the answer with it, as
:mod:`wire.capture` paired the recorded one); addresses of recorded servers in ext fields are
replaced by the target's. A request is awaited before the next step goes out, except a pull with
the suspend flag that the server held (its answer is collected at the end of the capture; one the
capture ended before answering is not waited for), so that effects happen in the recorded order.
Oneway requests are sent oneway. Requests the target sends the client (NOTIFY_CONSUMER_IDS_CHANGED,
…) are answered as the recorded client answered them. A connection
on which the client sent bytes that are no frame is replayed as those bytes.

Verdicts, one per step:

``match``               the answer equals the recorded one under the rules (:mod:`.rules`), or both
                        the recorded server and the target stayed silent
``differ``              it does not (the differences are listed, field by field)
``explained``           it does not, and the set-up file explains why (``expected``)
``missing``             the recorded server answered; the target did not within the time allowed
``extra``               the target answered where the recorded server did not
``closed-as-recorded``  the client's bytes were no frame and the target closed the connection, as
                        the recorded server did
``skipped``             not replayed, with the reason (a ``skip`` of the set-up file, a port not
                        mapped, a pull whose answer the capture does not hold)
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wire import RemotingCommand, RequestCode, WireError
from wire.aio import RemotingConnection, RequestTimeout, connect, split_addr

from ..peer import RawPeer
from .ingest import Capture, Connection, Step
from .rules import Diff, Rules, compare, covered, substitute
from .setup import Setup

__all__ = ["ReplayOptions", "Verdict", "replay_captures"]

R = RequestCode
#: the server ports of the 5.0.0 controller-mode captures (../shared/captures/java-5.0.0)
FIVE_PORTS = frozenset({9886, 9878, 30911, 31911, 30909, 31909, 30912, 31912})
_SENDS = frozenset({R.SEND_MESSAGE, R.SEND_MESSAGE_V2, R.SEND_BATCH_MESSAGE})
#: PullSysFlag suspend bit
_SUSPEND = 2


@dataclass
class Verdict:
    capture: str
    conn: int
    number: int
    kind: str
    code: int | None
    verdict: str
    diffs: list[Diff] = field(default_factory=list)
    reason: str = ""
    server: str = ""
    #: the target's answer (not in the JSON report)
    answer: RemotingCommand | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        name = None
        if self.code is not None:
            try:
                name = RequestCode(self.code).name
            except ValueError:
                name = str(self.code)
        return {"capture": self.capture, "connection": self.conn, "row": self.number, "kind": self.kind,
                "code": self.code, "code_name": name, "server": self.server, "verdict": self.verdict,
                "reason": self.reason, "diffs": [{"path": d.path, "recorded": repr(d.recorded),
                                                  "got": repr(d.got)}
                                                 for d in self.diffs]}


@dataclass(frozen=True)
class ReplayOptions:
    rules: Rules
    #: recorded server port → target address
    mapping: Mapping[int, str]
    setup: Setup | None = None
    #: seconds to wait for an answer the recorded server gave
    timeout: float = 10.0
    #: seconds to wait before deciding the target, as the recorded server, gives no answer
    silence: float = 2.0
    #: replay the background connections between the recorded servers too
    all_connections: bool = False
    #: the target broker's brokerRole and the target's profile (for the set-up's ``requires``)
    broker_role: str | None = None
    profile: str | None = None


class Translations:
    """What a replay learns as it goes: the target's message ids and commit-log offsets for the
    recorded ones (from the answers to the sends it replays), so that later requests naming a
    recorded message (VIEW_MESSAGE_BY_ID, a query by id) name the target's copy of it."""

    def __init__(self) -> None:
        self.msg_ids: dict[str, str] = {}
        self.offsets: dict[str, str] = {}

    def learn(self, recorded: RemotingCommand, got: RemotingCommand) -> None:
        from wire.message import decode_offset_msg_id

        a, b = recorded.ext_fields.get("msgId", ""), got.ext_fields.get("msgId", "")
        for ra, gb in zip(a.split(","), b.split(","), strict=False):
            if not ra or not gb:
                continue
            self.msg_ids[ra] = gb
            try:
                self.offsets[str(decode_offset_msg_id(ra).offset)] = str(decode_offset_msg_id(gb).offset)
            except WireError:
                continue

    def request(self, cmd: RemotingCommand) -> RemotingCommand:
        ext = dict(cmd.ext_fields)
        changed = False
        for k, v in ext.items():
            if v in self.msg_ids:
                ext[k], changed = self.msg_ids[v], True
        if cmd.code == R.VIEW_MESSAGE_BY_ID and ext.get("offset") in self.offsets:
            ext["offset"], changed = self.offsets[ext["offset"]], True
        return cmd.replace(ext_fields=ext) if changed else cmd


class _Live:
    """The replay of one recorded connection."""

    def __init__(self, rec: Connection, addr: str) -> None:
        self.rec = rec
        self.addr = addr
        self.conn: RemotingConnection | None = None

    def handler(self, _conn: RemotingConnection, cmd: RemotingCommand) -> RemotingCommand | None:
        answer = self.rec.client_answers.get(cmd.code)
        if answer is None or cmd.is_oneway:
            return None
        return answer.replace(opaque=cmd.opaque)

    async def get(self, timeout: float) -> RemotingConnection:
        if self.conn is None or self.conn.is_closing:
            host, port = split_addr(self.addr)
            self.conn = await connect(host, port, timeout=timeout, handler=self.handler, name="replay")
        return self.conn

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.aclose()


def _request(step: Step, addresses: Mapping[str, str]) -> RemotingCommand:
    cmd = step.command
    assert cmd is not None
    ext = {k: substitute(v, addresses) for k, v in cmd.ext_fields.items()}
    return cmd.replace(ext_fields=ext)


def _held_pull(cmd: RemotingCommand) -> float | None:
    """The suspend time (s) of a pull with the suspend flag, else None."""
    if cmd.code != R.PULL_MESSAGE:
        return None
    try:
        flags = int(cmd.ext_fields.get("sysFlag", "0"))
        suspend = int(cmd.ext_fields.get("suspendTimeoutMillis", "0"))
    except ValueError:
        return None
    return suspend / 1000 if flags & _SUSPEND else None


async def replay_captures(captures: Sequence[Capture], options: ReplayOptions,
                          translations: Translations | None = None) -> list[Verdict]:
    """Replay every capture in turn (see the module docstring)."""
    out: list[Verdict] = []
    translations = translations or Translations()
    for cap in captures:
        out.extend(await _replay_one(cap, options, translations))
    return out


async def _replay_one(cap: Capture, options: ReplayOptions, translations: Translations) -> list[Verdict]:
    from pathlib import Path

    name = Path(cap.path).name
    setup = options.setup
    verdicts: list[Verdict] = []
    conns = [c for c in cap.connections if options.all_connections or not c.background]
    lacking = setup.unmet(name, broker_role=options.broker_role, profile=options.profile) if setup else None
    if lacking:
        return [Verdict(name, c.index, s.number, s.kind, s.code, "skipped", reason=lacking, server=c.server)
                for c in conns for s in c.steps]
    hosts = [c.server.rpartition(":")[0] for c in cap.connections]
    host = max(set(hosts), key=hosts.count) if hosts else "127.0.0.1"
    addresses = {f"{host}:{port}": addr for port, addr in options.mapping.items()}
    # a target address that stands for several recorded ports is written back as the one this
    # capture's servers use (its set of ports: the 4.9.8 or the 5.0.0 set-up, see default_mapping)
    seen = {c.server_port for c in cap.connections}
    five = bool(seen & FIVE_PORTS)
    back: dict[str, str] = {}
    for port, addr in sorted(options.mapping.items(), key=lambda pa: (pa[0] in seen,
                                                                      (pa[0] in FIVE_PORTS) == five)):
        back[addr] = f"{host}:{port}"
    lives: dict[int, _Live] = {}
    held: list[tuple[asyncio.Task[RemotingCommand], Connection, Step, float]] = []
    for rec, step in cap.steps(conns):
        verdict = Verdict(name, rec.index, step.number, step.kind, step.code, "match", server=rec.server)
        verdicts.append(verdict)
        target_addr = options.mapping.get(rec.server_port)
        if target_addr is None:
            verdict.verdict = "skipped"
            verdict.reason = f"server port {rec.server_port} is not mapped (--map)"
            continue
        skip = setup and next((c for c in setup.skip if c.covers(name, step.code)), None)
        if skip:
            verdict.verdict, verdict.reason = "skipped", skip.why
            continue
        if step.kind == "raw":
            await _raw(step, rec, target_addr, verdict, options)
            continue
        live = lives.get(rec.index)
        if live is None:
            live = lives[rec.index] = _Live(rec, target_addr)
        try:
            conn = await live.get(options.timeout)
        except WireError as err:
            verdict.verdict, verdict.reason = "missing", f"cannot connect: {err}"
            continue
        cmd = translations.request(_request(step, addresses))
        if step.kind == "oneway":
            conn.oneway(cmd)
            verdict.reason = "oneway, as recorded"
            continue
        suspend = _held_pull(cmd)
        if suspend is not None and (step.recorded is None or (step.latency or 0) > 1.0):
            task = asyncio.ensure_future(conn.request(cmd, suspend + options.timeout))
            held.append((task, rec, step, suspend))
            verdict.reason = "held pull"
            continue
        wait = options.timeout if step.recorded is not None else options.silence
        try:
            got: RemotingCommand | None = await conn.request(cmd, wait)
        except RequestTimeout:
            got = None
        except WireError as err:
            verdict.verdict, verdict.reason = "missing", str(err)
            continue
        if got is not None and step.recorded is not None and step.code in _SENDS:
            translations.learn(step.recorded, got)
        _judge(verdict, step, got, options, back, name)
    # the held pulls the capture holds the answers of first; then those it ended before answering,
    # which nothing is compared with: their answer is noted if it came, else the pull is given up
    # (the target still held it, as the recorded server did) rather than waited out
    for task, _rec, step, _suspend in sorted(held, key=lambda h: h[2].recorded is None):
        verdict = next(v for v in verdicts if v.number == step.number and v.capture == name)
        if step.recorded is None:
            got = None
            if task.done() and not task.cancelled() and task.exception() is None:
                got = task.result()
            task.cancel()
            verdict.verdict = "skipped"
            verdict.reason = "a held pull the capture ended before answering" + (
                f"; the target answered {got.code_name}" if got is not None
                else "; the target still held it at the capture's end")
            continue
        try:
            got = await task
        except (RequestTimeout, WireError):
            got = None
        _judge(verdict, step, got, options, back, name)
    await asyncio.gather(*(task for task, *_ in held), return_exceptions=True)
    for live in lives.values():
        await live.close()
    return verdicts


def _judge(verdict: Verdict, step: Step, got: RemotingCommand | None, options: ReplayOptions,
           back: Mapping[str, str], capture: str) -> None:
    verdict.answer = got
    recorded = step.recorded
    code = step.code or 0
    if recorded is None:
        if got is None:
            verdict.reason = "no answer, as recorded"
        else:
            verdict.verdict = "extra"
            verdict.reason = f"answered {got.code_name} where the recorded server did not"
        return
    if got is None:
        verdict.verdict, verdict.reason = "missing", f"no answer within {options.timeout:g} s"
        return
    diffs = compare(code, recorded, got, options.rules, addresses=back)
    if not diffs:
        return
    verdict.diffs = diffs
    setup = options.setup
    explained = []
    for d in diffs:
        cond = None
        if setup is not None:
            cond = next((c for c in setup.expected if c.covers(capture, code) and covered(d.path, c.paths)),
                        None)
        explained.append(cond)
    if all(explained):
        verdict.verdict = "explained"
        verdict.reason = "; ".join(sorted({c.why for c in explained if c is not None}))
    else:
        verdict.verdict = "differ"


async def _raw(step: Step, rec: Connection, addr: str, verdict: Verdict, options: ReplayOptions) -> None:
    try:
        peer = await RawPeer.open(addr, options.timeout)
    except WireError as err:
        verdict.verdict, verdict.reason = "missing", f"cannot connect: {err}"
        return
    try:
        peer.send(step.raw)
        await peer.drain()
        closed = await peer.wait_closed(5.0)
        answers = peer.answers()
    finally:
        await peer.close()
    if answers:
        verdict.verdict = "extra"
        verdict.reason = f"answered {len(answers)} command(s) to bytes that are no frame"
    elif closed and rec.server_closed:
        verdict.verdict, verdict.reason = "closed-as-recorded", "the connection was closed without an answer"
    elif closed:
        verdict.verdict, verdict.reason = "differ", "closed the connection; the recorded server did not"
    elif rec.server_closed:
        verdict.verdict = "differ"
        verdict.reason = "the connection stayed open; the recorded server closed it"
    else:
        verdict.reason = "no answer and the connection open, as recorded"
