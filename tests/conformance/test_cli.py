# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl conformance``: options reach the library, results are rendered, errors become exit
codes (C5: the run itself is the library's, replaced here by a recorder)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

import conformance.runner
from conformance.model import CaseResult, Outcome
from conformance.registry import get
from conformance.runner import Report, RunOptions
from conformance.target import Target


class FakeRun:
    """Stands in for :func:`conformance.runner.run_suite`: records what it got, returns a report
    with the given outcome for every case."""

    def __init__(self, outcome: Outcome = Outcome.PASS) -> None:
        self.outcome = outcome
        self.calls: list[tuple[Target, list[str], RunOptions]] = []

    async def __call__(self, target: Target, cases: Any, options: RunOptions | None = None,
                       **kw: Any) -> Report:
        cases = list(cases)
        assert options is not None
        self.calls.append((target, [c.id for c in cases], options))
        found = Target(**{**target.__dict__, "profile": target.profile or "4.9", "server_version": 409})
        return Report(found, [CaseResult(c, self.outcome, "why") for c in cases], options, "now", 1.5, "r1")


@pytest.fixture
def fake_run(monkeypatch: pytest.MonkeyPatch) -> FakeRun:
    fake = FakeRun()
    monkeypatch.setattr(conformance.runner, "run_suite", fake)
    monkeypatch.setattr("mqctl.conformance._reachable", lambda target: None)
    return fake


def test_run_passes_options_to_the_library(invoke, fake_run: FakeRun, tmp_path: Path) -> None:
    devs = tmp_path / "d.yaml"
    devs.write_text("deviations:\n  - id: NS-ROUTE-002\n    reason: on purpose\n")
    out = tmp_path / "r.json"
    r = invoke("conformance", "run", "--namesrv", "10.0.0.1:9876", "--broker", "10.0.0.2:10911", "--profile",
               "5.0",
               "--only", "NS-*,BR-SEND-*", "--skip", "NS-EXPIRY-*", "--fast", "--strict", "--deviations",
               str(devs),
               "--json", str(out), "--name", "mine")
    assert r.exit_code == 0, r.output
    ((target, ids, options),) = fake_run.calls
    assert (target.namesrv, target.broker, target.profile, target.name) == ("10.0.0.1:9876", "10.0.0.2:10911",
                                                                           "5.0", "mine")
    assert ids and all(i.startswith(("NS-", "BR-SEND-")) and not i.startswith("NS-EXPIRY") for i in ids)
    assert options.fast and options.strict and options.deviations.reasons == {"NS-ROUTE-002": "on purpose"}
    doc = json.loads(out.read_text())
    assert doc["target"]["name"] == "mine" and doc["passed"] is True
    assert "every MUST passes" in r.output or "every MUST passes" in (r.stderr or "")


def test_run_exit_code_follows_the_verdict(invoke, fake_run: FakeRun, tmp_path: Path) -> None:
    fake_run.outcome = Outcome.FAIL
    junit = tmp_path / "r.xml"
    r = invoke("conformance", "run", "--namesrv", "10.0.0.1:9876", "--only", "NS-KV-001", "--junit-xml",
               str(junit))
    assert r.exit_code == 1
    assert "NS-KV-001" in r.stdout and "fail" in r.stdout
    assert "<failure" in junit.read_text()


def test_run_without_an_address_grades_our_cluster(invoke, fake_run: FakeRun, monkeypatch) -> None:
    started: list[bool] = []

    class Cluster:
        def __init__(self) -> None:
            self.target = Target(name="ours", namesrv="127.0.0.1:1", broker="127.0.0.1:2")

        def __enter__(self) -> Cluster:
            started.append(True)
            return self

        def __exit__(self, *exc: object) -> None:
            started.append(False)

    monkeypatch.setattr("conformance.refcluster.ReferenceCluster", Cluster)
    r = invoke("conformance", "run", "--only", "FRM-RSP-001")
    assert r.exit_code == 0, r.output
    assert started == [True, False]
    assert fake_run.calls[0][0].name == "ours"


@pytest.mark.parametrize(("args", "message"), [
    (("--broker", "127.0.0.1:10911"), "give --namesrv"),
    (("--namesrv", "127.0.0.1:9876", "--profile", "6.0"), "--profile must be 4.9 or 5.0"),
    (("--namesrv", "127.0.0.1:9876", "--only", "NOPE-*"), "matches no case"),
    (("--namesrv", "nohostport"), "not a host:port"),
])
def test_run_usage_errors(main, args, message) -> None:
    rc, _out, err = main("conformance", "run", *args)
    assert rc == 2 and message in err


def test_run_cannot_connect(main) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc, _out, err = main("conformance", "run", "--namesrv", f"127.0.0.1:{port}", "--only", "NS-KV-001")
    assert rc == 3 and "namesrv" in err


def test_bad_deviations_file_is_a_usage_error(main, tmp_path: Path) -> None:
    devs = tmp_path / "d.yaml"
    devs.write_text("deviations:\n  - id: NS-NOPE-001\n    reason: x\n")
    rc, _out, err = main("conformance", "run", "--namesrv", "127.0.0.1:9876", "--deviations", str(devs))
    assert rc == 2 and "not a case ID" in err and "d.yaml" in err


def test_list_and_explain(invoke) -> None:
    r = invoke("-o", "json", "conformance", "list", "--only", "namesrv")
    rows = json.loads(r.stdout)
    assert rows and {row["family"] for row in rows} == {"namesrv"}
    assert {"id", "level", "requirement", "source"} <= set(rows[0])
    r = invoke("conformance", "explain", "ns-route-003")
    assert r.exit_code == 0 and get("NS-ROUTE-003").requirement in r.stdout and "scenario" in r.stdout
    r = invoke("conformance", "explain", "NS-ROUTE-999")
    assert r.exit_code != 0


def test_report_side_by_side(invoke, tmp_path: Path) -> None:
    docs = []
    for name, outcome in (("a", "pass"), ("b", "fail")):
        case = get("NS-KV-001").describe()
        doc = {"suite": "mqctl-conformance", "target": {"name": name, "profile": "4.9"},
               "passed": outcome == "pass",
               "counts": {outcome: 1}, "duration": 1.0, "options": {},
               "results": [{**case, "outcome": outcome, "detail": "", "observations": []}]}
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        docs.append(str(path))
    html = tmp_path / "r.html"
    r = invoke("conformance", "report", *docs, "--html", str(html))
    assert r.exit_code == 0, r.output
    assert "NS-KV-001" in r.stdout and "where the targets differ" in r.stdout
    page = html.read_text()
    assert page.count("<tr class='case") == 1 and ">a<" in page and ">b<" in page


@pytest.fixture
def main(capsys: pytest.CaptureFixture[str]):
    from mqctl import app as app_module

    def run(*args: str) -> tuple[int, str, str]:
        rc = app_module.main(list(args))
        cap = capsys.readouterr()
        return rc, cap.out, cap.err

    return run


def test_replay_passes_options_to_the_library(invoke, monkeypatch, tmp_path: Path) -> None:
    from conformance.replay import ReplayReport
    from conformance.replay.replayer import Verdict
    from conformance.replay.rules import Diff

    calls: list[tuple[list[Path], Target, dict]] = []

    async def fake(paths, target, **kw):
        calls.append((list(paths), target, kw))
        return ReplayReport(target, [str(p) for p in paths], [
            Verdict("a.pcap", 1, 3, "request", 105, "match"),
            Verdict("a.pcap", 1, 5, "request", 28, "differ", [Diff("body.table.x", "1", "2")])], ["made a topic"])

    monkeypatch.setattr("conformance.replay.replay_async", fake)
    monkeypatch.setattr("mqctl.conformance._reachable", lambda target: None)
    cap = tmp_path / "a.pcap"
    cap.write_bytes(b"")
    out = tmp_path / "v.json"
    page = tmp_path / "v.html"
    r = invoke("conformance", "replay", str(cap), "--namesrv", "10.0.0.1:9876", "--map", "10911=10.0.0.2:1",
               "--setup", "none", "--all-connections", "--json", str(out), "--html", str(page))
    assert r.exit_code == 1, r.output  # one difference is unexplained
    ((paths, target, kw),) = calls
    assert paths == [cap] and target.namesrv == "10.0.0.1:9876"
    assert kw["mapping"] == {10911: "10.0.0.2:1"} and kw["setup"] is None and kw["all_connections"]
    assert "body.table.x: recorded '1', got '2'" in r.stdout
    assert json.loads(out.read_text())["unexplained"] == 1
    # the page shows the difference in its cell, not only on hover
    text = page.read_text()
    assert text.count("<tr class='case") == 2 and "1 unexplained" in text
    assert "<div class='dif'>body.table.x: recorded &#x27;1&#x27;, got &#x27;2&#x27;</div>" in text


def _replay_doc(name: str, verdict: str) -> dict[str, Any]:
    diffs = [{"path": "code", "recorded": "0", "got": "17"}] if verdict == "differ" else []
    return {"suite": "mqctl-conformance-replay", "target": {"name": name}, "captures": ["a.pcap"],
            "setup": [], "rules": [], "counts": {"match": 1, verdict: 1} if verdict != "match" else {"match": 2},
            "unexplained": int(verdict == "differ"),
            "verdicts": [{"capture": "a.pcap", "connection": 1, "row": 3, "kind": "request", "code": 105,
                          "code_name": "GET_ROUTEINFO_BY_TOPIC", "verdict": "match", "reason": "", "diffs": []},
                         {"capture": "a.pcap", "connection": 1, "row": 5, "kind": "request", "code": 28,
                          "code_name": "GET_BROKER_RUNTIME_INFO", "verdict": verdict, "reason": "",
                          "diffs": diffs}]}


def test_report_of_replays_side_by_side(invoke, main, tmp_path: Path) -> None:
    paths = []
    for name, verdict in (("ours", "differ"), ("java", "match")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(_replay_doc(name, verdict)))
        paths.append(str(path))
    html = tmp_path / "r.html"
    r = invoke("conformance", "report", *paths, "--html", str(html))
    assert r.exit_code == 0, r.output
    # the counts per target, then the request where one target has a finding and the other not
    assert "findings where the targets differ" in r.stdout and "GET_BROKER_RUNTIME_INFO" in r.stdout
    assert "GET_ROUTEINFO_BY_TOPIC" not in r.stdout
    page = html.read_text()
    assert "<title>RocketMQ capture replay</title>" in page
    assert page.count("<tr class='case") == 2 and page.count("data-diff='1'") == 1
    assert "code: recorded 0, got 17" in page
    # a run's report and a replay's do not go on one page; replays have no JUnit form
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"suite": "mqctl-conformance", "results": []}))
    rc, _out, err = main("conformance", "report", paths[0], str(run))
    assert rc == 2 and "not both" in err
    rc, _out, err = main("conformance", "report", paths[0], "--junit-xml", str(tmp_path / "x.xml"))
    assert rc == 2 and "no JUnit form" in err
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"suite": "something else"}))
    rc, _out, err = main("conformance", "report", str(other))
    assert rc == 2 and "neither a conformance run's report nor a replay's" in err


@pytest.mark.parametrize(("args", "message"), [
    (("--map", "x=1"), "expected PORT=HOST:PORT"),
    (("--map", "10911=nohost"), "not a host:port"),
    (("--setup", "/no/such/file"), "not a file"),
])
def test_replay_usage_errors(main, tmp_path: Path, args, message) -> None:
    cap = tmp_path / "a.pcap"
    cap.write_bytes(b"")
    rc, _out, err = main("conformance", "replay", str(cap), "--namesrv", "127.0.0.1:9876", *args)
    assert rc == 2 and message in err
    rc, _out, err = main("conformance", "replay", str(tmp_path / "missing.pcap"))
    assert rc == 2 and "no such file" in err
