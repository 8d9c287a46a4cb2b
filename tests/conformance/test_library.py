# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The conformance library without any server: the catalogue, grading (failing closed), known
deviations, selection and the report formats."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from conformance.deviations import DeviationError, Deviations, load_deviations
from conformance.model import (
    FAMILIES,
    Case,
    CaseFailed,
    CaseResult,
    Level,
    NotApplicable,
    Outcome,
    Unimplemented,
)
from conformance.registry import catalogue, get, select
from conformance.report import (
    ReportError,
    html_report,
    junit_xml,
    load_replay_report,
    load_report,
    report_kind,
    summary_by_family,
)
from conformance.runner import RunOptions, passed, run_suite
from conformance.target import Target

# ---------------------------------------------------------------------------- the catalogue


def test_catalogue_ids_are_stable_and_complete() -> None:
    cases = catalogue()
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    assert len(cases) >= 120
    for c in cases:
        assert re.fullmatch(r"[A-Z0-9]+-[A-Z0-9]+-\d{3}", c.id), c.id
        assert c.prefix in FAMILIES
        assert c.requirement and "\n" not in c.requirement, c.id
        assert c.source.strip(), f"{c.id} has no source"
        assert c.level in (Level.MUST, Level.SHOULD, Level.INFO)
    families = {c.family for c in cases}
    assert {"framing", "namesrv", "broker", "admin", "robustness"} <= families


def test_select_by_glob_and_family() -> None:
    assert {c.id for c in select(["NS-ROUTE-*"])} == {c.id for c in catalogue() if c.id.startswith("NS-ROUTE-")}
    assert {c.family for c in select(["namesrv"])} == {"namesrv"}
    assert not {c.id for c in select(["FRM-*"], ["FRM-BAD-*"])} & {c.id for c in select(["FRM-BAD-*"])}
    with pytest.raises(KeyError, match="matches no case"):
        select(["NS-ROUET-*"])
    with pytest.raises(KeyError, match="did you mean"):
        get("NS-ROUTE-999")
    assert get("ns-route-003").id == "NS-ROUTE-003"


# ---------------------------------------------------------------------------- grading


def _case(fn, level: Level = Level.MUST, *, timeout: float = 5.0, codes: tuple[int, ...] = ()) -> Case:
    return Case(f"FRM-TEST-{abs(hash(fn.__name__)) % 1000:03d}", level, "a test requirement", "a test",
                fn, needs=(), codes=codes, timeout=timeout)


def _grade(case: Case, options: RunOptions | None = None) -> CaseResult:
    report = asyncio.run(run_suite(Target(), [case], options))
    (result,) = report.results
    return result


async def _ok(ctx) -> None:
    ctx.note("seen")


async def _miss(ctx) -> None:
    ctx.check(False, "the target did the wrong thing")


async def _boom(ctx) -> None:
    raise RuntimeError("a bug in the scenario or a broken target")


async def _slow(ctx) -> None:
    await asyncio.sleep(30)


async def _swallow(ctx) -> None:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        pass  # a scenario that swallows its own cancellation is still timed out


async def _unimplemented(ctx) -> None:
    raise Unimplemented("answered REQUEST_CODE_NOT_SUPPORTED")


async def _not_applicable(ctx) -> None:
    raise NotApplicable("the broker is not a SYNC_MASTER")


@pytest.mark.parametrize(("fn", "level", "outcome"), [
    (_ok, Level.MUST, Outcome.PASS),
    (_ok, Level.INFO, Outcome.INFORMATIONAL),
    (_miss, Level.MUST, Outcome.FAIL),
    (_miss, Level.SHOULD, Outcome.NON_STRICT),
    (_boom, Level.MUST, Outcome.FAIL),
    (_boom, Level.SHOULD, Outcome.FAIL),  # an error is a fail whatever the level: fail closed
    (_unimplemented, Level.MUST, Outcome.UNIMPLEMENTED),
    (_not_applicable, Level.MUST, Outcome.NOT_RUN),
])
def test_grading(fn, level: Level, outcome: Outcome) -> None:
    result = _grade(_case(fn, level))
    assert result.outcome is outcome, result
    if fn is _boom:
        assert "RuntimeError" in result.detail and "test_library.py" not in result.detail
    if fn is _ok:
        assert result.observations == ["seen"]


@pytest.mark.parametrize("fn", [_slow, _swallow])
def test_a_case_that_runs_too_long_fails(fn) -> None:
    result = _grade(_case(fn, Level.SHOULD, timeout=0.3))
    assert result.outcome is Outcome.FAIL and "timed out after 0.3 s" in result.detail


def test_timeout_scale() -> None:
    result = _grade(_case(_slow, timeout=0.2), RunOptions(timeout_scale=2))
    assert result.outcome is Outcome.FAIL and "timed out after 0.4 s" in result.detail


def test_not_run_reasons() -> None:
    case = Case("NS-TEST-001", Level.MUST, "r", "s", _ok, needs=("broker",))
    assert _grade(case).outcome is Outcome.NOT_RUN and "no broker address" in _grade(case).detail
    five = Case("NS-TEST-002", Level.MUST, "r", "s", _ok, needs=(), profiles=("5.0",))
    assert "profile 5.0 only" in _grade(five).detail
    slow = Case("NS-TEST-003", Level.MUST, "r", "s", _ok, needs=(), slow=True)
    assert _grade(slow, RunOptions(fast=True)).outcome is Outcome.NOT_RUN
    assert _grade(slow).outcome is Outcome.PASS


def test_run_verdict() -> None:
    def r(outcome: Outcome, level: Level = Level.MUST) -> CaseResult:
        return CaseResult(_case(_ok, level), outcome)

    assert passed([r(Outcome.PASS), r(Outcome.NON_STRICT, Level.SHOULD), r(Outcome.NOT_RUN),
                   r(Outcome.DEVIATION)])
    assert not passed([r(Outcome.PASS), r(Outcome.FAIL)])
    assert not passed([r(Outcome.UNIMPLEMENTED, Level.MUST)])
    assert passed([r(Outcome.UNIMPLEMENTED, Level.SHOULD)])
    assert not passed([r(Outcome.NON_STRICT, Level.SHOULD)], strict=True)


# ---------------------------------------------------------------------------- deviations


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "deviations.yaml"
    p.write_text(text)
    return p


def test_deviations_turn_failures_into_deviation(tmp_path: Path) -> None:
    case = _case(_miss)
    devs = load_deviations(_write(tmp_path, f"target: t\ndeviations:\n  - id: {case.id}\n    reason: on purpose\n"),
                           known_ids={case.id})
    result = _grade(case, RunOptions(deviations=devs))
    assert result.outcome is Outcome.DEVIATION and result.graded is Outcome.FAIL
    assert result.detail.startswith("on purpose")
    # a listed case that passes stays a pass, and the report calls the entry stale
    ok = Case(case.id, Level.MUST, "r", "s", _ok, needs=())
    report = asyncio.run(run_suite(Target(), [ok], RunOptions(deviations=devs)))
    assert report.results[0].outcome is Outcome.PASS and report.stale_deviations() == [case.id]


@pytest.mark.parametrize(("text", "error"), [
    ("deviations:\n  - id: NS-NOPE-001\n    reason: x\n", "not a case ID"),
    ("deviations:\n  - id: NS-ROUTE-001\n", "needs a reason"),
    ("deviations:\n  - id: NS-ROUTE-001\n    reason: a\n  - id: NS-ROUTE-001\n    reason: b\n",
     "listed twice"),
    ("deviation:\n  - id: NS-ROUTE-001\n", "unknown keys"),
    ("deviations: [\n", "not YAML"),
    ("deviations:\n  - {id: NS-ROUTE-001, reason: x, why: y}\n", "exactly the keys"),
])
def test_bad_deviation_files_are_errors(tmp_path: Path, text: str, error: str) -> None:
    with pytest.raises(DeviationError, match=error):
        load_deviations(_write(tmp_path, text))


def test_shipped_deviation_files_load() -> None:
    import conformance

    for path in (Path(conformance.__file__).parent / "deviations").glob("*.yaml"):
        assert isinstance(load_deviations(path), Deviations)


# ---------------------------------------------------------------------------- reports


def _report_doc() -> dict:
    cases = [_case(_ok), _case(_miss), _case(_boom, Level.SHOULD)]
    cases = [Case(f"FRM-TEST-{i:03d}", c.level, c.requirement, c.source, c.fn, needs=()) for i,
             c in enumerate(cases)]
    report = asyncio.run(run_suite(Target(name="t1"), cases))
    return json.loads(json.dumps(report.to_json()))


def test_json_and_junit() -> None:
    doc = _report_doc()
    assert doc["suite"] == "mqctl-conformance" and doc["passed"] is False
    assert doc["counts"]["pass"] == 1 and doc["counts"]["fail"] == 2
    root = ET.fromstring(junit_xml(doc))
    assert root.get("tests") == "3" and root.get("failures") == "2"
    failures = [tc.get("name") for tc in root.iter("testcase") if tc.find("failure") is not None]
    assert failures == ["FRM-TEST-001", "FRM-TEST-002"]
    rows = summary_by_family(doc)
    assert rows == [r for r in rows if r["family"] == "framing"] and rows[0]["cases"] == 3


def test_html_side_by_side(tmp_path: Path) -> None:
    a = _report_doc()
    b = json.loads(json.dumps(a))
    b["target"]["name"] = "t2"
    b["results"][1]["outcome"] = "pass"
    page = html_report([a, b], title="two <targets>")
    assert "two &lt;targets&gt;" in page
    assert page.count("<tr class='case") == 3
    assert page.count("data-diff='1'") == 1  # FRM-TEST-001 differs
    for name in ("t1", "t2", "FRM-TEST-000", "FAIL"):
        assert name in page


def test_load_report_errors(tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    p.write_text("{}")
    with pytest.raises(ReportError, match="not a conformance report"):
        load_report(p)
    p.write_text("{")
    with pytest.raises(ReportError, match="not JSON"):
        load_report(p)
    with pytest.raises(ReportError, match="cannot read"):
        load_report(tmp_path / "missing.json")


def test_load_replay_report_errors(tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"suite": "mqctl-conformance", "results": []}))
    assert report_kind(p) == "run"
    with pytest.raises(ReportError, match="not a replay report"):
        load_replay_report(p)
    p.write_text(json.dumps({"suite": "mqctl-conformance-replay", "verdicts": [{"capture": "a.pcap"}]}))
    assert report_kind(p) == "replay"
    with pytest.raises(ReportError, match="verdict 0 lacks"):
        load_replay_report(p)
    p.write_text("[]")
    with pytest.raises(ReportError, match="neither"):
        report_kind(p)


def test_failed_check_message_names_expected_and_found() -> None:
    from conformance.context import Ctx

    ctx = Ctx(Target(), _case(_ok), "r")
    with pytest.raises(CaseFailed, match="expected 1, got 2"):
        ctx.equal(2, 1, "x")
