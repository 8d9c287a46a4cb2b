# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Replay: re-send the client traffic of captures to a target and say where the answers differ.

* :mod:`.ingest` — a capture read through :mod:`wire.capture` (the ingest and answer pairing
  ``mqctl pcap`` uses) into connections and steps;
* :mod:`.rules` — the normalisation rules (``rules.yaml``: what varies and why) and the
  field-by-field comparison;
* :mod:`.setup` — the state a capture needs, made on the target through the wire;
* :mod:`.replayer` — the replay itself and its verdicts;
* :func:`replay` puts them together; :func:`learn_volatile` replays twice against one target and
  writes rules for what varied between the two.

A capture recorded while the master's slave was frozen or stopped (a set-up's ``slave`` entry,
the 09-* SYNC_MASTER captures) is replayed only when the caller gives the replay control of the
target's slave (``slave=``, a :data:`SlaveControl`): it is called with the state before such a
capture and with ``up`` before the first capture and before the next capture that needs the slave
as usual (running, connected and in sync). Without it those captures are skipped, with the reason.

Example::

    from conformance.replay import replay
    from conformance.target import Target

    report = replay(["../shared/captures/java-4.9.8/02-topicRoute.pcap"],
                    Target(namesrv="127.0.0.1:9876", broker="127.0.0.1:10911"))
    print(report.counts())
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..target import Target
from .ingest import load_capture
from .replayer import ReplayOptions, Translations, Verdict, replay_captures
from .rules import Rules, load_rules, volatile_rules
from .setup import Setup, SetupError, apply_setup, find_setup, load_setup, settle

__all__ = ["ReplayReport", "SlaveControl", "default_mapping", "learn_volatile", "replay", "replay_async"]

#: puts the target's slave in a state (``up``: running, connected and in sync with its master;
#: ``frozen``: SIGSTOP; ``stopped``) and returns one line saying what it did
SlaveControl = Callable[[str], Awaitable[str]]

#: verdicts that are no finding
OK = frozenset({"match", "explained", "closed-as-recorded", "skipped"})


@dataclass
class ReplayReport:
    target: Target
    captures: list[str]
    verdicts: list[Verdict]
    setup: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.verdicts:
            out[v.verdict] = out.get(v.verdict, 0) + 1
        return out

    @property
    def unexplained(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict not in OK]

    def to_json(self) -> dict[str, Any]:
        return {"suite": "mqctl-conformance-replay", "target": self.target.describe(),
                "captures": self.captures,
                "setup": self.setup, "rules": self.rules, "counts": self.counts(),
                "unexplained": len(self.unexplained), "verdicts": [v.to_json() for v in self.verdicts]}


def default_mapping(target: Target) -> dict[int, str]:
    """Recorded server ports → target addresses by role: the name server ports (9876, 9886) to
    ``namesrv``; the master's (10911 and 30911) to ``broker``, with its VIP channel (10909, 30909)
    at the broker's port − 2 and its HA port (10912, 30912) at ``ha``; the slave's (10921, 31911;
    10919, 31909; HA 10922, 31912 at its port + 1) to ``slave``; the controller's (9878) to
    ``controller``. HA connections are not replayed; their addresses are mapped for the answers
    that name them (a slave's haStatus names its master's HA address)."""
    from wire.aio import split_addr

    out: dict[int, str] = {}

    def vip(addr: str) -> str:
        host, port = split_addr(addr)
        return f"{host}:{port - 2}"

    for ports, addr in (((9876, 9886), target.namesrv), ((10911, 30911), target.broker),
                        ((10921, 31911), target.slave), ((9878,), target.controller)):
        if addr:
            for p in ports:
                out[p] = addr
    for ports, addr in (((10909, 30909), target.broker), ((10919, 31909), target.slave)):
        if addr:
            for p in ports:
                out[p] = vip(addr)
    ha = {(10912, 30912): target.ha, (10922, 31912): None}
    if target.slave:
        host, port = split_addr(target.slave)
        ha[(10922, 31912)] = f"{host}:{port + 1}"
    for ports, addr in ha.items():
        if addr:
            for p in ports:
                out[p] = addr
    return out


def _setups(paths: Sequence[str | Path], setup: str | Path | None) -> dict[str, Setup | None]:
    """The set-up of each capture: the file given (``auto``: looked up beside it, then shipped)."""
    out: dict[str, Setup | None] = {}
    loaded: dict[Path, Setup] = {}
    for p in paths:
        if setup is None:
            out[str(p)] = None
            continue
        found = find_setup(p) if str(setup) == "auto" else Path(setup)
        if found is None:
            out[str(p)] = None
            continue
        if found not in loaded:
            loaded[found] = load_setup(found)
        s = loaded[found]
        out[str(p)] = s if s.applies_to(str(p)) else None
    return out


async def replay_async(paths: Sequence[str | Path], target: Target, *, mapping: Mapping[int,
                                                                                        str] | None = None,
                       setup: str | Path | None = "auto", rules: Rules | None = None,
                       all_connections: bool = False, timeout: float = 10.0,
                       slave: SlaveControl | None = None) -> ReplayReport:
    """Replay ``paths`` against ``target`` (see :mod:`.replayer`); the set-ups they need are made
    first, once each, in the order of the captures; ``slave`` puts the target's slave in the state
    a capture was recorded in (see the module notes)."""
    from ..target import discover

    found = await discover(target)
    rules = rules or load_rules()
    mapped = {**default_mapping(found), **(mapping or {})}
    setups = _setups(paths, setup)
    # in the order they were recorded: each capture's server held what the earlier ones left
    captures = sorted((load_capture(p) for p in paths), key=lambda c: c.first_ts)
    report = ReplayReport(found, [c.path for c in captures], [], rules=list(rules.sources))
    made: set[tuple[str, int]] = set()
    translations = Translations()
    role, profile = found.broker_config.get("brokerRole"), found.profile
    slave_now: str | None = None  # unknown until the control has been called once
    for cap in captures:
        s = setups[cap.path]
        wanted = s.slave_state(cap.path) if s is not None else None
        if s is not None and wanted is not None and wanted.state != "up" and slave is None \
                and not s.unmet(cap.path, broker_role=role, profile=profile):
            reason = (f"needs the target's slave {wanted.state}: {wanted.why}; the replay was given no "
                      "control of the slave (a local cluster's, as tests/conformance/test_replay_sync.py)")
            report.verdicts += [
                Verdict(Path(cap.path).name, c.index, st.number, st.kind, st.code, "skipped", reason=reason,
                        server=c.server)
                for c in cap.connections if all_connections or not c.background for st in c.steps]
            continue
        if s is not None and s.unmet(cap.path, broker_role=role, profile=profile):
            # not replayed (every step skipped with the reason): nothing to set up or wait for
            options = ReplayOptions(rules, mapped, s, timeout=timeout, all_connections=all_connections,
                                    broker_role=role, profile=profile)
            report.verdicts += await replay_captures([cap], options, translations)
            continue
        if s is not None:
            due = s.stages_before(cap.path)
            states = [(-1, s.state), *((n, st) for n, st in enumerate(s.stages) if st in due)]
            for n, state in states:
                if (s.source, n) in made:
                    continue
                made.add((s.source, n))
                if slave is not None and slave_now != "up":
                    # the set-up's sends need the slave (a SYNC_MASTER refuses them without it)
                    report.setup.append(f"{Path(s.source).name} (before the set-up): " + await slave("up"))
                    slave_now = "up"
                if not found.broker:
                    raise SetupError("the set-up needs the target's broker (--broker, or a name server that "
                                     "lists it)")
                done = await apply_setup(state, namesrv=found.namesrv, broker=found.broker)
                report.setup += [f"{Path(s.source).name}{'' if n < 0 else f' (before {cap.path})'}: {line}"
                                 for line in done]
        if s is not None and s.settle_in_sync and (s.source, -2) not in made and found.broker:
            made.add((s.source, -2))
            report.setup.append(f"{Path(s.source).name}: " + await settle(
                s, broker=found.broker, controller=found.controller, broker_name=found.broker_name))
        needed = wanted.state if wanted is not None else "up"
        if slave is not None and needed != slave_now:
            report.setup.append(f"{Path(s.source).name if s else 'slave'} (before {Path(cap.path).name}): "
                                + await slave(needed))
            slave_now = needed
        options = ReplayOptions(rules, mapped, s, timeout=timeout, all_connections=all_connections,
                                broker_role=role, profile=profile)
        report.verdicts += await replay_captures([cap], options, translations)
    return report


def replay(paths: Sequence[str | Path], target: Target, **kw: Any) -> ReplayReport:
    """:func:`replay_async` in a new event loop."""
    return asyncio.run(replay_async(paths, target, **kw))


async def learn_volatile(paths: Sequence[str | Path], target: Target, **kw: Any) -> dict[str, Any]:
    """Replay ``paths`` twice against ``target`` and return rules (a YAML-ready document) for every
    answer field that differed between the two replays: what varies on that target by itself
    (the set-ups are made before each replay, as they would be before a run of their own)."""
    from .rules import compare

    first = await replay_async(paths, target, **kw)
    second = await replay_async(paths, target, **kw)
    answers = {(v.capture, v.number): v for v in second.verdicts}
    diffs: dict[int, list[Any]] = {}
    for v in first.verdicts:
        w = answers.get((v.capture, v.number))
        if v.answer is None or w is None or w.answer is None or v.code is None:
            continue
        diffs.setdefault(v.code, []).extend(compare(v.code, v.answer, w.answer, Rules()))
    return volatile_rules({c: d for c, d in diffs.items() if d},
                          f"varied between two replays of {len(paths)} capture(s) against {target.name} "
                          "(learnt with --learn-volatile)")
