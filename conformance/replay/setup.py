# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Set-up files: the state a capture was recorded in, made on any target through the wire.

A capture's answers depend on what the server held when it was recorded: topics, messages,
consumer offsets, KV entries. A set-up file (YAML) says what that was; :func:`apply_setup` makes
it on the target with the requests an operator's tools send (UPDATE_AND_CREATE_TOPIC,
UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, SEND_MESSAGE_V2, UPDATE_CONSUMER_OFFSET, PUT_KV_CONFIG), so
it works on any server. The same file says which captures it is for, what a target must be like
for some of them, which requests are not replayed and which differences are known, each with the
reason::

    version: 1
    captures: ["*.pcap"]                 # the capture file names it is for (globs)
    topics:
      - {topic: CapTopic, read: 4, write: 4, perm: 6}
    groups: [CapGroup]
    messages:                            # count messages to each listed queue; the body may use
      - {topic: CapTopic, queues: [0, 1, 2, 3], count: 5, body: "cap {queue} {n}"}   # {queue}, {n}
    offsets:
      - {group: CapGroup, topic: CapTopic, queues: [0, 1, 2, 3], offset: 5}
    kv:
      - {namespace: NS, key: k, value: v}
    settle: {in_sync_slaves: 1}          # wait until the master has a slave in sync (5.x HA status)
    stages:                              # more state, made just before the first capture it names
      - before: ["06-*"]
        topics: [{topic: JsTopic}]
    slave:                               # the state the target's slave must be in for a capture
      - {captures: ["09-sync-master-slave-frozen.pcap"], state: frozen, why: …}   # up, frozen, stopped
    requires:                            # otherwise the captures are not replayed (verdict skipped)
      - {captures: ["09-sync-*"], broker_role: SYNC_MASTER, why: …}
      - {captures: ["12-*"], profile: "5.0", why: …}
    skip:                                # requests not replayed
      - {captures: ["07-queryMsgById-*"], codes: [33], why: …}
    expected:                            # differences that are explained (verdict explained)
      - {captures: ["03-wipeWritePerm.pcap"], codes: [205], paths: [ext.wipeTopicCount], why: …}

Set-up files for the captures under ``../shared/captures`` ship in ``conformance/replay/setups/``
(one per folder, named after it); a capture elsewhere is looked up as ``NAME.setup.yaml`` beside
it, then as ``setup.yaml`` in its folder.
"""

from __future__ import annotations

import fnmatch
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wire import RemotingCommand, RequestCode, WireError
from wire.aio import ConnectionPool
from wire.message import encode_properties

__all__ = ["SETUPS", "SLAVE_STATES", "Setup", "SetupError", "SlaveState", "State", "apply_setup",
           "find_setup", "load_setup"]

R = RequestCode
SETUPS = Path(__file__).with_name("setups")
_STATE = ("topics", "groups", "messages", "offsets", "kv")
_KEYS = {"version", "captures", *_STATE, "stages", "settle", "slave", "requires", "skip", "expected"}
#: what a ``slave`` entry may ask of the target's slave
SLAVE_STATES = ("up", "frozen", "stopped")


class SetupError(ValueError):
    """A set-up file that cannot be used, or a set-up the target refused (the message says which)."""


@dataclass(frozen=True)
class Condition:
    """A ``requires``, ``skip`` or ``expected`` entry."""

    captures: tuple[str, ...]
    why: str
    codes: frozenset[int] | None = None
    paths: tuple[str, ...] = ()
    broker_role: str | None = None
    profile: str | None = None

    def covers(self, capture: str, code: int | None = None) -> bool:
        name = Path(capture).name
        if not any(fnmatch.fnmatchcase(name, g) for g in self.captures):
            return False
        return self.codes is None or code in self.codes


@dataclass(frozen=True)
class State:
    """Topics, groups, messages, offsets and KV entries to make (see the module docstring)."""

    topics: tuple[dict[str, Any], ...] = ()
    groups: tuple[str, ...] = ()
    messages: tuple[dict[str, Any], ...] = ()
    offsets: tuple[dict[str, Any], ...] = ()
    kv: tuple[dict[str, Any], ...] = ()
    #: for a stage: the captures it is made before (globs)
    before: tuple[str, ...] = ()


@dataclass(frozen=True)
class SlaveState:
    """A ``slave`` entry: the captures recorded while the master's slave was ``state`` (``up``,
    ``frozen``: SIGSTOP, the HA connection open and silent; ``stopped``: no HA connection)."""

    captures: tuple[str, ...]
    state: str
    why: str

    def covers(self, capture: str) -> bool:
        return any(fnmatch.fnmatchcase(Path(capture).name, g) for g in self.captures)


@dataclass(frozen=True)
class Setup:
    source: str
    captures: tuple[str, ...] = ("*",)
    state: State = State()
    stages: tuple[State, ...] = ()
    #: wait until the target's master has this many slaves in sync (GET_BROKER_HA_STATUS) and, with
    #: a controller, its broker's SyncStateSet has them all (CONTROLLER_GET_SYNC_STATE_DATA)
    settle_in_sync: int = 0
    settle_timeout: float = 60.0
    requires: tuple[Condition, ...] = ()
    skip: tuple[Condition, ...] = ()
    expected: tuple[Condition, ...] = ()
    slave: tuple[SlaveState, ...] = ()

    def slave_state(self, capture: str) -> SlaveState | None:
        """The state the slave must be in for ``capture`` (the first entry covering it), or None."""
        return next((s for s in self.slave if s.covers(capture)), None)

    def applies_to(self, capture: str) -> bool:
        return any(fnmatch.fnmatchcase(Path(capture).name, g) for g in self.captures)

    def unmet(self, capture: str, *, broker_role: str | None, profile: str | None) -> str | None:
        """Why ``capture`` cannot be replayed against a target of that broker role and profile
        (a ``requires`` entry it fails, with the entry's reason), or None."""
        for cond in self.requires:
            if not cond.covers(capture):
                continue
            if cond.broker_role is not None and broker_role != cond.broker_role:
                role = broker_role or "unknown"
                return f"needs a {cond.broker_role} broker (the target's is {role}): {cond.why}"
            if cond.profile is not None and profile != cond.profile:
                return f"needs a {cond.profile} target (graded as {profile or 'unknown'}): {cond.why}"
        return None

    def stages_before(self, capture: str) -> list[State]:
        name = Path(capture).name
        return [s for s in self.stages if any(fnmatch.fnmatchcase(name, g) for g in s.before)]


def _state(doc: dict[str, Any], where: str) -> State:
    for key in ("topics", "messages", "offsets", "kv"):
        items = doc.get(key) or []
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise SetupError(f"{where}: '{key}' is a list of mappings")
    before = doc.get("before") or []
    if not isinstance(before, list):
        raise SetupError(f"{where}: 'before' is a list of capture globs")
    return State(tuple(doc.get("topics") or ()), tuple(map(str, doc.get("groups") or ())),
                 tuple(doc.get("messages") or ()), tuple(doc.get("offsets") or ()),
                 tuple(doc.get("kv") or ()),
                 tuple(map(str, before)))


def _conditions(doc: dict[str, Any], key: str, where: str) -> tuple[Condition, ...]:
    out = []
    for n, item in enumerate(doc.get(key) or [], 1):
        at = f"{where}: {key} entry {n}"
        if not isinstance(item, dict) or not isinstance(item.get("why"), str) or not item["why"].strip():
            raise SetupError(f"{at}: a mapping with a 'why'")
        unknown = set(item) - {"captures", "codes", "paths", "broker_role", "profile", "why"}
        if unknown:
            raise SetupError(f"{at}: unknown keys {sorted(map(str, unknown))}")
        caps = item.get("captures", ["*"])
        codes = item.get("codes")
        if not isinstance(caps, list) or (codes is not None and not isinstance(codes, list)):
            raise SetupError(f"{at}: 'captures' and 'codes' are lists")
        out.append(Condition(tuple(map(str, caps)), " ".join(item["why"].split()),
                             None if codes is None else frozenset(int(c) for c in codes),
                             tuple(map(str, item.get("paths", []))), item.get("broker_role"),
                             None if item.get("profile") is None else str(item["profile"])))
    return tuple(out)


def load_setup(path: str | Path) -> Setup:
    import yaml

    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SetupError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise SetupError(f"{p}: not YAML: {exc}") from None
    if not isinstance(doc, dict) or doc.get("version") != 1:
        raise SetupError(f"{p}: not a set-up file (version: 1)")
    if unknown := set(doc) - _KEYS:
        raise SetupError(f"{p}: unknown keys {sorted(map(str, unknown))}")
    stages = []
    for n, item in enumerate(doc.get("stages") or [], 1):
        if not isinstance(item, dict) or set(item) - {*_STATE, "before"} or not item.get("before"):
            raise SetupError(f"{p}: stage {n}: 'before' and the state keys ({', '.join(_STATE)})")
        stages.append(_state(item, f"{p}: stage {n}"))
    settle = doc.get("settle") or {}
    if not isinstance(settle, dict) or set(settle) - {"in_sync_slaves", "timeout"}:
        raise SetupError(f"{p}: 'settle' takes in_sync_slaves and timeout")
    return Setup(str(p), tuple(doc.get("captures") or ["*"]), _state(doc, str(p)), tuple(stages),
                 int(settle.get("in_sync_slaves", 0)), float(settle.get("timeout", 60)),
                 _conditions(doc, "requires", str(p)), _conditions(doc, "skip", str(p)),
                 _conditions(doc, "expected", str(p)), _slave_states(doc, str(p)))


def _slave_states(doc: dict[str, Any], where: str) -> tuple[SlaveState, ...]:
    out = []
    for n, item in enumerate(doc.get("slave") or [], 1):
        at = f"{where}: slave entry {n}"
        if not isinstance(item, dict) or set(item) - {"captures", "state", "why"}:
            raise SetupError(f"{at}: a mapping of captures, state and why")
        if item.get("state") not in SLAVE_STATES:
            raise SetupError(f"{at}: 'state' is one of {', '.join(SLAVE_STATES)}, not {item.get('state')!r}")
        if not isinstance(item.get("why"), str) or not item["why"].strip():
            raise SetupError(f"{at}: says why")
        caps = item.get("captures")
        if not isinstance(caps, list) or not caps:
            raise SetupError(f"{at}: 'captures' is a list of capture globs")
        out.append(SlaveState(tuple(map(str, caps)), str(item["state"]), " ".join(item["why"].split())))
    return tuple(out)


def find_setup(capture: str | Path) -> Path | None:
    """The set-up file for ``capture``: ``NAME.setup.yaml`` or ``setup.yaml`` beside it, else the
    shipped one named after its folder (``setups/java-4.9.8.yaml`` for ``…/java-4.9.8/x.pcap``)."""
    p = Path(capture)
    for candidate in (p.with_name(p.stem + ".setup.yaml"), p.with_name("setup.yaml"),
                      SETUPS / f"{p.parent.name}.yaml"):
        if candidate.is_file():
            return candidate
    return None


async def _call(pool: ConnectionPool, addr: str, code: int, ext: dict[str, Any] | None = None,
                body: bytes | None = None, *, what: str) -> RemotingCommand:
    try:
        resp = await (await pool.get(addr)).request(RemotingCommand.request(code, ext, body), pool.timeout)
    except WireError as err:
        raise SetupError(f"set-up: {what}: {err}") from None
    if resp.code != 0:
        raise SetupError(f"set-up: {what}: {addr} answered {resp.code_name} ({resp.remark})")
    return resp


def _queues(item: dict[str, Any]) -> Iterable[int]:
    queues = item.get("queues", [item.get("queue", 0)])
    return [int(q) for q in queues]


async def apply_setup(setup: State, *, namesrv: str | None, broker: str, timeout: float = 5.0) -> list[str]:
    """Make a state on the target (``broker`` is the master the topics go to); returns what was
    done, one line each. A refusal raises :class:`SetupError`."""
    import asyncio

    from wire.bodies import TopicRouteData

    done: list[str] = []
    async with ConnectionPool(timeout=timeout, name="conformance set-up") as pool:
        for t in setup.topics:
            topic = str(t["topic"])
            ext = {"topic": topic, "defaultTopic": "TBW102", "readQueueNums": int(t.get("read", 4)),
                   "writeQueueNums": int(t.get("write", 4)), "perm": int(t.get("perm", 6)),
                   "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False}
            await _call(pool, broker, R.UPDATE_AND_CREATE_TOPIC, ext, what=f"topic {topic}")
            if namesrv:
                for _ in range(100):
                    resp = await (await pool.get(namesrv)).request(
                        RemotingCommand.request(R.GET_ROUTEINFO_BY_TOPIC, {"topic": topic}), timeout)
                    if resp.code == 0 and TopicRouteData.decode(resp.body or b"").queue_datas:
                        break
                    await asyncio.sleep(0.1)
            done.append(f"topic {topic} ({ext['readQueueNums']}/{ext['writeQueueNums']}, perm {ext['perm']})")
        for g in setup.groups:
            body = json.dumps({"groupName": g, "consumeEnable": True, "consumeFromMinEnable": True,
                               "consumeBroadcastEnable": True, "retryQueueNums": 1, "retryMaxTimes": 16,
                               "brokerId": 0, "whichBrokerWhenConsumeSlowly": 1,
                               "notifyConsumerIdsChangedEnable": True}).encode()
            await _call(pool, broker, R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, body, what=f"group {g}")
            done.append(f"group {g}")
        for m in setup.messages:
            topic, count = str(m["topic"]), int(m.get("count", 1))
            for q in _queues(m):
                for n in range(count):
                    text = str(m.get("body", "{topic} {queue} {n}")).format(topic=topic, queue=q, n=n)
                    props = {"WAIT": "true", **{str(k): str(v) for k,
                                                v in (m.get("properties") or {}).items()}}
                    ext = {"a": "conformance_setup", "b": topic, "c": "TBW102", "d": 4, "e": q, "f": 0,
                           "g": int(time.time() * 1000), "h": 0, "i": encode_properties(props), "j": 0,
                           "k": False, "m": False}
                    await _call(pool, broker, R.SEND_MESSAGE_V2, ext, text.encode(),
                                what=f"message to {topic}:{q}")
            done.append(f"{count} message(s) to each of {topic}:{list(_queues(m))}")
        for o in setup.offsets:
            for q in _queues(o):
                ext = {"consumerGroup": o["group"], "topic": o["topic"], "queueId": q,
                       "commitOffset": int(o["offset"])}
                await _call(pool, broker, R.UPDATE_CONSUMER_OFFSET, ext, what=f"offset of {o['group']}")
            done.append(f"offset {o['offset']} of {o['group']} on {o['topic']}:{list(_queues(o))}")
        for kv in setup.kv:
            if namesrv:
                ext = {"namespace": kv["namespace"], "key": kv["key"], "value": kv["value"]}
                await _call(pool, namesrv, R.PUT_KV_CONFIG, ext, what=f"KV {kv['namespace']}/{kv['key']}")
                done.append(f"KV {kv['namespace']}/{kv['key']}")
    return done


async def settle(setup: Setup, *, broker: str, controller: str | None, broker_name: str | None,
                 timeout: float = 5.0) -> str:
    """Wait until the target is as settled as ``setup`` asks (see :attr:`Setup.settle_in_sync`);
    raises :class:`SetupError` when it does not get there in time."""
    import asyncio

    from wire.bodies import HARuntimeInfo

    want = setup.settle_in_sync
    loop = asyncio.get_running_loop()
    end = loop.time() + setup.settle_timeout
    seen = "nothing yet"
    async with ConnectionPool(timeout=timeout, name="conformance set-up") as pool:
        while True:
            try:
                conn = await pool.get(broker)
                resp = await conn.request(RemotingCommand.request(R.GET_BROKER_HA_STATUS), timeout)
                in_sync = HARuntimeInfo.decode(resp.body or b"").in_sync_slave_nums if resp.code == 0 else -1
                members = want
                if controller and broker_name:
                    data = await (await pool.get(controller)).request(RemotingCommand.request(
                        R.CONTROLLER_GET_SYNC_STATE_DATA, None, json.dumps([broker_name]).encode()), timeout)
                    table = json.loads(data.body or b"{}").get("inSyncStateTable", {}).get(broker_name, {})
                    members = len(table.get("inSyncMembers") or []) - 1
                seen = f"{in_sync} slave(s) in sync, {members} in the SyncStateSet"
                if in_sync >= want and members >= want:
                    return f"settled: {seen}"
            except (WireError, ValueError) as err:
                seen = str(err)
            if loop.time() > end:
                raise SetupError(f"set-up: the target did not settle in {setup.settle_timeout:g} s ({seen})")
            await asyncio.sleep(0.5)
