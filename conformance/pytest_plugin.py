# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The suite as a pytest plugin, so that it runs in other projects' CI::

    pytest --pyargs conformance --rmq-namesrv 127.0.0.1:9876 [--rmq-broker ADDR] [--rmq-profile 5.0]
           [--rmq-only 'NS-*'] [--rmq-fast] [--rmq-deviations FILE] [--rmq-json FILE] --junitxml report.xml

Every case is one test item, named by its ID (``test_case[NS-ROUTE-003]``), so ``-k`` selects
cases too. Without ``--rmq-namesrv`` our reference cluster is started for the session and graded.

Outcomes map onto pytest's: pass and informational pass; fail (and a MUST that is unimplemented)
fails; non-strict, deviation and a SHOULD that is unimplemented are ``xfail`` with the reason
(``--rmq-strict`` makes non-strict a failure); not-run is a skip with the reason. What a case
observed goes into the item's ``user_properties`` (and so into JUnit XML). The plugin is
registered through the ``pytest11`` entry point, so its options exist wherever mqctl is installed;
it does nothing unless a test asks for the ``conformance_case`` fixture, as
``conformance/test_conformance.py`` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .context import AtEnd
    from .model import Case, CaseResult
    from .runner import RunOptions
    from .target import Target

__all__ = ["ConformanceSession"]

_ROLES = ("namesrv", "broker", "slave", "ha", "controller")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "RocketMQ conformance (pytest --pyargs conformance)")
    for role in _ROLES:
        default = " (default: our reference cluster, started for the session)" if role == "namesrv" else ""
        group.addoption(f"--rmq-{role}", dest=f"rmq_{role}", metavar="HOST:PORT",
                        help=f"the {role} address to grade{default}")
    group.addoption("--rmq-profile", dest="rmq_profile", choices=("4.9", "5.0"),
                    help="grade as 4.9 or 5.0 (default: from the version the servers answer with)")
    group.addoption("--rmq-only", dest="rmq_only", action="append", default=[], metavar="GLOB",
                    help="case IDs or families to run (repeatable)")
    group.addoption("--rmq-skip", dest="rmq_skip", action="append", default=[], metavar="GLOB",
                    help="case IDs or families to leave out (repeatable)")
    group.addoption("--rmq-fast", dest="rmq_fast", action="store_true",
                    help="leave out the cases that wait for minutes")
    group.addoption("--rmq-strict", dest="rmq_strict", action="store_true", help="a missed SHOULD fails")
    group.addoption("--rmq-deviations", dest="rmq_deviations", metavar="FILE",
                    help="known-deviations YAML file")
    group.addoption("--rmq-json", dest="rmq_json", metavar="FILE", help="also write the suite's JSON report")
    group.addoption("--rmq-name", dest="rmq_name", help="the target's name in the JSON report")


class ConformanceSession:
    """One target for the whole pytest session: discovered once, each case run in its own event
    loop, the run's clean-ups and the JSON report at the end."""

    def __init__(self, config: pytest.Config) -> None:
        from .deviations import Deviations, load_deviations
        from .runner import RunOptions

        opt = config.option
        self.config = config
        devs = load_deviations(opt.rmq_deviations) if opt.rmq_deviations else Deviations()
        self.options: RunOptions = RunOptions(fast=opt.rmq_fast, strict=opt.rmq_strict, deviations=devs)
        self.cluster: Any = None
        self._target: Target | None = None
        self.results: list[CaseResult] = []
        self.at_end: list[AtEnd] = []
        self.run_id = ""

    @property
    def target(self) -> Target:
        if self._target is None:
            import secrets

            from .target import Target, discover

            opt = self.config.option
            if opt.rmq_namesrv:
                target = Target(name=opt.rmq_name or opt.rmq_namesrv, profile=opt.rmq_profile,
                                **{r: getattr(opt, f"rmq_{r}") for r in _ROLES})
            else:
                from .refcluster import ReferenceCluster

                self.cluster = ReferenceCluster()
                target = self.cluster.start()
            self.run_id = secrets.token_hex(3)
            self._target = asyncio.run(discover(target))
        return self._target

    def run(self, case: Case) -> CaseResult:
        from .runner import run_case

        result = asyncio.run(run_case(case, self.target, self.options, self.run_id, self.at_end))
        self.results.append(result)
        return result

    def finish(self) -> None:
        try:
            if self.at_end:
                from .runner import clean_up

                asyncio.run(clean_up(self.at_end, self.options.request_timeout))
            if self.config.option.rmq_json and self._target is not None:
                from .report import write_json
                from .runner import Report

                order = {c: i for i, c in enumerate(r.case.id for r in self.results)}
                results = sorted(self.results, key=lambda r: order[r.case.id])
                write_json(Report(self._target, results, self.options, run_id=self.run_id).to_json(),
                           self.config.option.rmq_json)
        finally:
            if self.cluster is not None:
                self.cluster.stop()


_KEY = pytest.StashKey[ConformanceSession]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance: a case of the RocketMQ conformance suite")
    opt = config.option
    # a bad option is a usage error, said once before anything is collected, not a traceback
    if getattr(opt, "rmq_only", None) or getattr(opt, "rmq_skip", None):
        from .registry import select

        try:
            select(opt.rmq_only, opt.rmq_skip)
        except KeyError as err:
            raise pytest.UsageError(f"--rmq-only/--rmq-skip: {err.args[0]}") from None
    if getattr(opt, "rmq_deviations", None):
        from .deviations import DeviationError, load_deviations

        try:
            load_deviations(opt.rmq_deviations)
        except DeviationError as err:
            raise pytest.UsageError(f"--rmq-deviations: {err}") from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_case" not in metafunc.fixturenames:
        return
    from .registry import select

    opt = metafunc.config.option
    cases = select(opt.rmq_only, opt.rmq_skip)
    metafunc.parametrize("conformance_case", cases, ids=[c.id for c in cases])


def _session(config: pytest.Config) -> ConformanceSession:
    if _KEY not in config.stash:
        config.stash[_KEY] = ConformanceSession(config)
    return config.stash[_KEY]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _KEY in config.stash:
        config.stash[_KEY].finish()


@pytest.fixture(scope="session")
def conformance_session(request: pytest.FixtureRequest) -> Iterator[ConformanceSession]:
    yield _session(request.config)


@pytest.fixture
def conformance_run(conformance_session: ConformanceSession, request: pytest.FixtureRequest) -> Any:
    """``conformance_run(case)``: run one case against the session's target and turn its outcome
    into pytest's (see the module docstring)."""
    from .model import Level, Outcome

    def run(case: Case) -> CaseResult:
        result = conformance_session.run(case)
        node = request.node
        node.user_properties.append(("outcome", str(result.outcome)))
        node.user_properties.append(("level", str(case.level)))
        for obs in result.observations:
            node.user_properties.append(("observation", obs))
        what = f"{case.level} {case.id}: {case.requirement}\n{result.detail}"
        o = result.outcome
        if o is Outcome.NOT_RUN:
            pytest.skip(result.detail)
        if o is Outcome.FAIL or (o is Outcome.UNIMPLEMENTED and case.level is Level.MUST):
            pytest.fail(what, pytrace=False)
        if o is Outcome.NON_STRICT and conformance_session.options.strict:
            pytest.fail(what, pytrace=False)
        if o in (Outcome.NON_STRICT, Outcome.DEVIATION, Outcome.UNIMPLEMENTED):
            pytest.xfail(f"{o}: {result.detail}")
        return result

    return run
