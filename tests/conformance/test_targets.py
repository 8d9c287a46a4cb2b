# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The whole suite against three targets: our reference cluster, the real Java 4.9.8 servers (name
server, master, slave) and the real Java 5.0.0 servers in controller mode (name server with the
embedded controller, two brokers). Every MUST passes on each, up to the deviations their files
document; each run's JSON and JUnit XML, the side-by-side HTML page of the three and the
side-by-side page of the replays of the session (replay.html) are written to build/conformance/
(kept after the run).

A SYNC_MASTER with no slave of its own is graded on the SYNC cases of the HA4 family (the suite as
its only slave) beside each 4.x target. Ours runs in full, the cases that wait for minutes included
(they run alongside the others, so they add about two minutes; the CI sample grades ours with
``fast`` too, those left out and slowloris shortened); the Java servers run with ``fast``
(their name servers expire a silent broker 120 s after its registration, the same as ours: checked
when the cases were written, see docs/conformance.md). Before grading, each set of Java servers
replays the captures of its own version while it holds only what they need (``conformance.replay``:
0 unexplained differences).

The CI sample (the default; ``MQCTL_SOAK=1`` grades everything) leaves out of the Java targets'
gradings the cases that wait seconds by design (:data:`WAITS`: a timer, a trickle of bytes, a flood,
a long-polling pull, 40 of the 45 s each Java grading takes), which the reference targets are
graded on in every run: our cluster on all of the 4.9 profile, our controller-mode cluster on the
5.0 profile's own (HA5). Every family still runs its other cases on every target.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.deviations import Deviations, load_deviations
from conformance.model import Level, Outcome
from conformance.registry import catalogue
from conformance.report import (
    html_replay_report,
    html_report,
    junit_xml,
    load_replay_report,
    load_report,
    write_json,
)
from conformance.runner import Report, RunOptions, run_suite_sync
from conformance.target import Target
from tests.conftest import CiSample, shared_path

pytestmark = [pytest.mark.slow, pytest.mark.soak]

DEVIATIONS = Path(__file__).resolve().parents[2] / "conformance" / "deviations"
#: the reports written in this session, in the order of the tests
WRITTEN: list[Path] = []
#: the cases (ID prefixes) that wait seconds by design (see the module docstring)
WAITS = ("BR-DELAY-001", "BR-LONG-002", "BR-RETRY-003", "HA4-ACK-001", "HA4-TR-003", "HA5-TR-002",
         "HA5-TR-003", "ROB-IDLE-", "ROB-LEN-", "ROB-SLOW-", "ROB-UNREAD-")


def _left_out(ci_sample: CiSample, stem: str, waits: tuple[str, ...], graded_on: str, *, profile: str,
              prefix: str = "") -> tuple[str, ...]:
    """The IDs of the cases of ``profile`` (and ``prefix``) the CI sample leaves out of grading
    ``stem`` (none in a full run), noted."""
    if ci_sample.full:
        return ()
    ids = tuple(c.id for c in catalogue()
                if c.id.startswith(waits) and c.id.startswith(prefix) and profile in c.profiles)
    ci_sample.left_out(f"{stem}: {len(ids)} cases that wait seconds by design, graded on {graded_on} only "
                       f"({', '.join(ids)})")
    return ids


def _deviations(name: str) -> Deviations:
    path = DEVIATIONS / f"{name}.yaml"
    return load_deviations(path) if path.exists() else Deviations()


def _grade(target: Target, artefacts: Path, stem: str, *, fast: bool, prefix: str = "",
           leave_out: tuple[str, ...] = ()) -> Report:
    """The catalogue (or its cases whose ID starts with ``prefix``, but those in ``leave_out``)
    against ``target``, with the target's deviations file; its JSON and JUnit XML written as
    ``stem``."""
    cases = [c for c in catalogue() if c.id.startswith(prefix) and c.id not in leave_out]
    report = run_suite_sync(target, cases, RunOptions(fast=fast, deviations=_deviations(stem)))
    doc = report.to_json()
    write_json(doc, artefacts / f"{stem}.json")
    WRITTEN.append(artefacts / f"{stem}.json")
    (artefacts / f"{stem}.xml").write_text(junit_xml(doc), encoding="utf-8")
    return report


def _check(report: Report) -> None:
    bad = [f"{r.case.id} {r.outcome}: {r.detail}" for r in report.results
           if r.outcome is Outcome.FAIL or (r.outcome is Outcome.UNIMPLEMENTED and r.case.level is Level.MUST)]
    assert not bad, "\n".join(bad)
    assert report.passed
    # every case that did not run says why, and only for a reason that is no failure of the target
    for r in report.results:
        if r.outcome is Outcome.NOT_RUN:
            assert r.detail.startswith(("profile ", "no ", "--fast")), f"{r.case.id}: {r.detail}"
    assert not report.stale_deviations(), f"deviations listed but passing: {report.stale_deviations()}"
    assert not report.cleanup_errors, report.cleanup_errors


def test_reference_cluster(artefacts: Path, tmp_path: Path, ci_sample: CiSample) -> None:
    from conformance.refcluster import ReferenceCluster

    # the CI sample grades with --fast: the cases that watch a silent broker for two minutes do not
    # run (tests/namesrv/test_server.py checks the expiry with a 1 s one), and those with a fast
    # variant run that (slowloris trickles for 3 s instead of 20)
    fast = not ci_sample.full
    minutes = {c.id for c in catalogue() if c.slow} if fast else set()
    if fast:
        shortened = [f"{c.id} ({c.fast_note})" for c in catalogue() if c.fast_note]
        ci_sample.left_out(f"reference: graded with --fast: {', '.join(sorted(minutes))} not run (they wait two "
                           f"minutes by design; tests/namesrv/test_server.py checks the expiry with a 1 s one); "
                           f"shortened: {', '.join(shortened)}")
    with ReferenceCluster(tmp_path / "cluster") as cluster:
        assert cluster.target is not None
        report = _grade(cluster.target, artefacts, "reference", fast=fast)
    _check(report)
    ran = {r.case.id for r in report.results if r.outcome is not Outcome.NOT_RUN}
    with ReferenceCluster(tmp_path / "sync", slave=False, master_role="SYNC_MASTER") as cluster:
        assert cluster.target is not None
        _sync_master(replace(cluster.target, name="mqctl reference SYNC_MASTER"), artefacts, "reference-sync")
    ran |= {c.id for c in catalogue() if c.id.startswith("HA4-SYNC-")}
    # everything of the 4.9 profile runs against ours (the slow cases too, the slave's, and the
    # SYNC_MASTER's on a master of their own), but what the CI sample left out
    assert {c.id for c in catalogue() if "4.9" in c.profiles and not set(c.needs) - {
        "namesrv", "broker", "slave", "ha"}} - minutes <= ran


def test_reference_controller_mode(artefacts: Path, tmp_path: Path, replays_written: list[Path],
                                   ci_sample: CiSample) -> None:
    """Our servers in the 5.x layout (the name server with its embedded controller, two replicas in
    controller mode): the Java 5.0.0 captures replay against them as against Java, and the 5.0
    profile passes, the HA5 and controller families included."""
    from conformance.refcluster import ReferenceCluster

    with ReferenceCluster(tmp_path / "controller", controller=True) as cluster:
        target = cluster.target
        assert target is not None and target.controller
        _replay(target, artefacts, "java-5.0.0", replays_written, minimum=15, stem="reference-controller")
        waits = tuple(w for w in WAITS if not w.startswith(("HA4-", "HA5-")))
        report = _grade(target, artefacts, "reference-controller", fast=True,
                        leave_out=_left_out(ci_sample, "reference-controller", waits, "our 4.x cluster", profile="5.0"))
    assert report.target.profile == "5.0" and report.target.controller == target.controller
    _check(report)
    ran = {r.case.id for r in report.results if r.outcome is not Outcome.NOT_RUN}
    five = {c.id for c in catalogue() if c.id.startswith(("HA5-", "CTL-"))}
    assert five and five <= ran, sorted(five - ran)


def test_java_4_9_8(java_servers_module, artefacts: Path, replays_written: list[Path], ci_sample: CiSample) -> None:
    js = java_servers_module
    ns = js.namesrv("4.9.8")
    master = js.broker("4.9.8", namesrv=ns, name="broker-a")
    slave = js.broker("4.9.8", namesrv=ns, name="broker-a", role="SLAVE")
    target = Target(name="Java 4.9.8", namesrv=ns.addr)
    _wait_for_master(target, {master.addr, slave.addr})
    _replay(target, artefacts, "java-4.9.8", replays_written, minimum=250)
    report = _grade(target, artefacts, "java-4.9.8", fast=True,
                    leave_out=_left_out(ci_sample, "java-4.9.8", WAITS, "our 4.x cluster", profile="4.9"))
    assert report.target.profile == "4.9" and report.target.slave == slave.addr
    _check(report)
    # the SYNC_MASTER cases need a SYNC_MASTER whose only slave is the suite: one of its own
    sync = js.broker("4.9.8", namesrv=ns, name="broker-s", role="SYNC_MASTER")
    try:
        _sync_master(Target(name="Java 4.9.8 SYNC_MASTER", namesrv=ns.addr, broker=sync.addr), artefacts,
                     "java-4.9.8-sync")
    finally:
        sync.stop()


def _sync_master(target: Target, artefacts: Path, stem: str) -> None:
    """The SYNC cases of HA4 against a SYNC_MASTER with no slave: they run, and pass."""
    report = _grade(target, artefacts, stem, fast=False, prefix="HA4-SYNC-")
    assert report.target.broker_config.get("brokerRole") == "SYNC_MASTER" and report.target.slave is None
    outcomes = {r.case.id: f"{r.outcome} {r.detail}".strip() for r in report.results}
    assert len(outcomes) >= 3 and all(r.outcome is Outcome.PASS for r in report.results), outcomes


def test_java_5_0_0(java_servers_module, artefacts: Path, replays_written: list[Path], ci_sample: CiSample) -> None:
    js = java_servers_module
    ns = js.namesrv_controller("5.0.0")
    props = {"enableControllerMode": "true", "controllerAddr": ns.controller_addr,
             "allAckInSyncStateSet": "true",
             "storePathEpochFile": "@NODE_DIR@/store/epochFileCheckpoint",
             "mappedFileSizeTimerLog": "10485760"}
    # the names of the 5.0.0 captures (their MANIFEST), so that they replay against these servers
    nodes = [js.broker("5.0.0", namesrv=ns, cluster="DefaultCluster5", name="broker-c", broker_id=-1,
                       role="SLAVE", **props) for _ in range(2)]
    target = Target(name="Java 5.0.0 (controller mode)", namesrv=ns.addr)
    _wait_for_master(target, {n.addr for n in nodes})
    _replay(target, artefacts, "java-5.0.0", replays_written, minimum=15)
    report = _grade(target, artefacts, "java-5.0.0", fast=True,
                    leave_out=_left_out(ci_sample, "java-5.0.0", tuple(w for w in WAITS if not w.startswith("HA4-")),
                                        "our clusters", profile="5.0"))
    assert report.target.profile == "5.0" and report.target.controller == ns.controller_addr
    _check(report)
    # a 5.0.0 master outside controller mode (DefaultHAService) speaks the 4.x HA frames: HA4-*
    master = js.broker("5.0.0", namesrv=ns, cluster="DefaultCluster5", name="broker-d")
    try:
        _ha4(Target(name="Java 5.0.0 (DefaultHA)", namesrv=ns.addr, broker=master.addr), artefacts,
             "java-5.0.0-defaultha",
             _left_out(ci_sample, "java-5.0.0-defaultha", WAITS, "our 4.x cluster", profile="4.9", prefix="HA4-"))
    finally:
        master.stop()


def _ha4(target: Target, artefacts: Path, stem: str, leave_out: tuple[str, ...]) -> None:
    """The HA4 family alone against ``target`` (but ``leave_out``): every case that applies runs,
    and passes (up to the target's deviations)."""
    report = _grade(target, artefacts, stem, fast=False, prefix="HA4-", leave_out=leave_out)
    _check(report)
    ran = {r.case.id for r in report.results if r.outcome is not Outcome.NOT_RUN}
    assert {"HA4-TR-001", "HA4-TR-002", "HA4-TR-003", "HA4-ACK-001"} - set(leave_out) <= ran, ran


def _replay(target: Target, artefacts: Path, folder: str, written: list[Path], *, minimum: int,
            stem: str = "") -> None:
    """Replay the ../shared captures of ``folder`` against ``target``: nothing unexplained."""
    from conformance.replay import replay

    report = replay(sorted(shared_path("captures", folder).glob("*.pcap")), target)
    out = artefacts / f"replay-{stem or folder}.json"
    out.write_text(json.dumps(report.to_json(), indent=2) + "\n")
    written.append(out)
    bad = [f"{v.capture} row {v.number} {v.verdict}: {'; '.join(map(str, v.diffs[:3])) or v.reason}"
           for v in report.unexplained]
    assert not bad, "\n".join(bad)
    assert report.counts()["match"] >= minimum


def _wait_for_master(target: Target, addrs: set[str], timeout: float = 60.0) -> None:
    """Until the name server lists both nodes, one of them as the master (brokerId 0)."""
    import asyncio
    import time

    from conformance.target import discover

    deadline = time.monotonic() + timeout
    while True:
        found = asyncio.run(discover(target))
        if found.broker in addrs and found.slave in addrs:
            return
        assert time.monotonic() < deadline, f"no master and slave listed after {timeout:g} s: {found.notes}"
        time.sleep(1.0)


def test_side_by_side_report(artefacts: Path, replays_written: list[Path]) -> None:
    """The HTML pages of the targets graded above and of their replays (those that ran in this
    session)."""
    docs = [load_report(path) for path in WRITTEN]
    assert docs, "no target was graded"
    page = html_report(docs, title="RocketMQ conformance: mqctl reference servers and Java")
    (artefacts / "conformance.html").write_text(page, encoding="utf-8")
    assert page.count("<tr class='case") == len(catalogue())
    summary = {d["target"]["name"]: d["counts"] for d in docs}
    (artefacts / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if replays_written:
        replays = [load_replay_report(path) for path in replays_written]
        page = html_replay_report(replays, title="RocketMQ capture replay: mqctl reference servers and Java")
        (artefacts / "replay.html").write_text(page, encoding="utf-8")
        assert page.count("<tr class='case") == len({(v["capture"], v["connection"], v["row"])
                                                     for d in replays for v in d["verdicts"]})
