# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The replayer: captures read into steps (wire.capture's ingest and pairing), the normalisation
rules, set-up files, and whole replays of the real Java captures against our reference cluster and
against the real Java servers (0 unexplained differences), written to build/conformance/."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from conformance.replay import default_mapping, learn_volatile, replay
from conformance.replay.ingest import load_capture
from conformance.replay.rules import Diff, RuleError, Rules, compare, covered, load_rules
from conformance.replay.setup import SETUPS, SetupError, find_setup, load_setup
from conformance.target import Target
from tests.conftest import FIXTURES, shared_path
from wire import RemotingCommand, RequestCode

# ---------------------------------------------------------------------------- ingest


def test_malformed_frames_become_raw_steps() -> None:
    cap = load_capture(shared_path("captures", "java-4.9.8", "10-malformed-frames.pcap"))
    raw = [c for c in cap.connections if any(s.kind == "raw" for s in c.steps)]
    assert len(raw) == 6
    for conn in raw:
        (step,) = conn.steps
        assert conn.server_closed and conn.syn and not conn.background
        # every byte the client sent, from the frame's length field on
        assert step.raw[:4] in (b"\x00\x00\x00\x18", b"\x7f\xff\xff\xff") or step.raw[4] == 7


def test_steps_answers_and_server_requests() -> None:
    cap = load_capture(shared_path("captures", "java-4.9.8", "06-alions-consume.pcap"))
    client = [c for c in cap.connections if not c.background]
    steps = [s for c in client for s in c.steps]
    assert {s.code for s in steps} >= {RequestCode.PULL_MESSAGE, RequestCode.HEART_BEAT,
                                       RequestCode.QUERY_CONSUMER_OFFSET}
    answered = [s for s in steps if s.recorded is not None]
    assert answered and all(s.recorded.is_response and s.recorded.opaque == s.command.opaque for s in answered)
    # the broker's oneway registrations (after creating the retry topic) are steps, never answered
    oneway = [s for c in cap.connections for s in c.steps if s.kind == "oneway"]
    assert oneway and all(s.code == RequestCode.REGISTER_BROKER and s.recorded is None for s in oneway)
    # the broker's oneway NOTIFY_CONSUMER_IDS_CHANGED travelled the other way
    assert any(r.code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED for c in client for r in c.server_requests)
    # the registrations and slave sync of the brokers are background
    assert all(c.background for c in cap.connections if c not in client)


def test_default_mapping() -> None:
    m = default_mapping(Target(namesrv="127.0.0.1:1", broker="127.0.0.1:1000", slave="127.0.0.1:2000",
                               controller="127.0.0.1:3"))
    assert m[9876] == m[9886] == "127.0.0.1:1" and m[10911] == m[30911] == "127.0.0.1:1000"
    assert m[10909] == "127.0.0.1:998" and m[10921] == "127.0.0.1:2000" and m[9878] == "127.0.0.1:3"


# ---------------------------------------------------------------------------- rules


def _answer(**kw) -> RemotingCommand:
    return RemotingCommand.request(0).response(**kw)


def test_compare_under_rules(tmp_path: Path) -> None:
    rules = load_rules()
    a = _answer(ext_fields={"msgId": "A", "queueId": "1", "queueOffset": "3"})
    b = _answer(ext_fields={"msgId": "B", "queueId": "1", "queueOffset": "9"})
    assert compare(RequestCode.SEND_MESSAGE_V2, a, b, rules) == []
    c = _answer(ext_fields={"msgId": "B", "queueId": "2", "queueOffset": "9"})
    assert [d.path for d in compare(RequestCode.SEND_MESSAGE_V2, a, c, rules)] == ["ext.queueId"]
    # an ext field whose value is not compared must still be there
    d = _answer(ext_fields={"queueId": "1", "queueOffset": "9"})
    assert [d.path for d in compare(RequestCode.SEND_MESSAGE_V2, a, d, rules)] == ["ext.msgId"]
    # the target's address is written back as the recorded one before comparing
    route_a = _answer(body=b'{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911"}}]}')
    route_b = _answer(body=b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:40404"}}]}')
    assert compare(105, route_a, route_b, Rules()) != []
    assert compare(105, route_a, route_b, Rules(), addresses={"127.0.0.1:40404": "127.0.0.1:10911"}) == []


def test_path_globs() -> None:
    assert covered("body[3].physicalOffset", ["body[*].physicalOffset"])
    assert covered("body.table.bootTimestamp", ["body.table.*"])
    assert covered("body.topicList[4]", ["body.topicList"])
    assert not covered("body.tableX", ["body.table"])
    assert str(Diff("code", 0, 17)) == "code: recorded 0, got 17"


@pytest.mark.parametrize(("text", "error"), [
    ("version: 2\n", "not a rules file"),
    ("version: 1\nrules:\n  - codes: [10]\n    ext: [msgId]\n", "says why"),
    ("version: 1\nrules:\n  - why: x\n    body: xml\n", "'body' must be one of"),
    ("version: 1\nrules:\n  - why: x\n    remark: ['(']\n", "bad remark pattern"),
    ("version: 1\nheader: [opaque]\n", "header fields"),
])
def test_bad_rules_files(tmp_path: Path, text: str, error: str) -> None:
    p = tmp_path / "rules.yaml"
    p.write_text(text)
    with pytest.raises(RuleError, match=error):
        load_rules(p)


def test_every_shipped_rule_and_setup_says_why(tmp_path: Path) -> None:
    rules = load_rules()
    assert rules.rules and all(r.why for r in rules.rules)
    setups = [*SETUPS.glob("*.yaml"), FIXTURES / "peers" / "setup.yaml"]
    assert len(setups) >= 3
    for path in setups:
        setup = load_setup(path)
        assert all(c.why for c in (*setup.requires, *setup.skip, *setup.expected))
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ntopic: []\n")
    with pytest.raises(SetupError, match="unknown keys"):
        load_setup(bad)


def test_setup_lookup(tmp_path: Path) -> None:
    shared = Path("/x/java-4.9.8/02-topicRoute.pcap")
    assert find_setup(shared) == SETUPS / "java-4.9.8.yaml"
    cap = tmp_path / "mine.pcap"
    cap.write_bytes(b"")
    assert find_setup(cap) is None
    (tmp_path / "mine.setup.yaml").write_text("version: 1\n")
    assert find_setup(cap) == tmp_path / "mine.setup.yaml"


# ---------------------------------------------------------------------------- whole replays


def _shared(folder: str) -> list[Path]:
    return sorted(shared_path("captures", folder).glob("*.pcap"))


def _check(report, artefacts: Path, name: str, written: list[Path]) -> None:
    (artefacts / f"replay-{name}.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    written.append(artefacts / f"replay-{name}.json")
    bad = [f"{v.capture} row {v.number} {v.verdict}: {'; '.join(map(str, v.diffs[:3])) or v.reason}"
           for v in report.unexplained]
    assert not bad, "\n".join(bad)


@pytest.mark.slow
def test_replay_captures_against_our_cluster(tmp_path: Path, artefacts: Path, replays_written: list[Path]) -> None:
    """The real Java captures and the fixtures (recorded against our servers), in one replay, in
    the order they were recorded."""
    from conformance.refcluster import ReferenceCluster

    fixtures = sorted((FIXTURES / "peers").glob("*.pcap"))
    with ReferenceCluster(tmp_path / "cluster") as cluster:
        assert cluster.target is not None
        report = replay(_shared("java-4.9.8") + _shared("java-5.0.0") + fixtures, cluster.target)
    _check(report, artefacts, "reference", replays_written)
    counts = report.counts()
    assert counts["match"] > 300 and counts["closed-as-recorded"] == 6
    # the 5.0.0 captures need a 5.0 target: skipped with the reason, not compared
    five = {p.name for p in _shared("java-5.0.0")}
    assert all(v.verdict == "skipped" and "5.0" in v.reason for v in report.verdicts if v.capture in five)
    # every fixture with client traffic was replayed (peers-broker-registration holds only a broker's)
    assert {v.capture for v in report.verdicts} >= {f.name for f in fixtures} - {"peers-broker-registration.pcap"}


@pytest.mark.slow
def test_learn_volatile(tmp_path: Path) -> None:
    from conformance.refcluster import ReferenceCluster

    caps = [shared_path("captures", "java-4.9.8", n) for n in ("02-brokerStatus.pcap", "02-topicRoute.pcap")]
    with ReferenceCluster(tmp_path / "cluster", slave=False) as cluster:
        assert cluster.target is not None
        doc = asyncio.run(learn_volatile(caps, cluster.target))
    by_code = {r["codes"][0]: r for r in doc["rules"]}
    # the runtime table's clocks and counters vary; the route does not
    assert RequestCode.GET_BROKER_RUNTIME_INFO in by_code
    assert any(v.startswith("table.") for v in by_code[RequestCode.GET_BROKER_RUNTIME_INFO]["values"])
    assert RequestCode.GET_ROUTEINFO_BY_TOPIC not in by_code
    assert all(r["why"] for r in doc["rules"])
