# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Running cases against a target and grading them.

Theory of operation
-------------------
:func:`run_suite` first learns what it can about the target (:func:`conformance.target.discover`),
then runs each selected case in its own :class:`~conformance.context.Ctx` with the case's timeout.
Cases run one after another, so that timings mean something; the ``slow`` cases (those that wait
for minutes, e.g. a name server expiring a silent broker after 120 s) only wait, so they start
first and run alongside the others. ``fast`` leaves them out.

Grading fails closed. A case that returns passes (an INFO case is ``informational``); a failed
check is ``fail`` for a MUST and ``non-strict`` for a SHOULD; REQUEST_CODE_NOT_SUPPORTED to the
request under test is ``unimplemented``; **any other exception, and a timeout, is ``fail``**
whatever the level. A case that cannot apply (no address for a role it needs, another profile,
``fast``, a precondition of the target such as its broker role) is ``not-run`` with the reason.
A known-deviations file then turns the listed non-passing outcomes into ``deviation``.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .context import AtEnd, Ctx
from .deviations import Deviations
from .model import Case, CaseFailed, CaseResult, Level, NotApplicable, Outcome, Unimplemented
from .target import Target, discover

__all__ = ["Report", "RunOptions", "clean_up", "grade", "passed", "run_case", "run_suite", "run_suite_sync"]

SUITE = "mqctl-conformance"

#: outcomes a known deviation turns into ``deviation``
_DEVIATABLE = (Outcome.FAIL, Outcome.NON_STRICT, Outcome.UNIMPLEMENTED)


@dataclass(frozen=True)
class RunOptions:
    #: leave out the slow cases and shorten the long waits of the others
    fast: bool = False
    #: a missed SHOULD fails the run
    strict: bool = False
    deviations: Deviations = field(default_factory=Deviations)
    #: multiplies every case's timeout (a loaded machine, a far-away target)
    timeout_scale: float = 1.0
    #: seconds a single request may take
    request_timeout: float = 5.0


@dataclass
class Report:
    """The results of one run against one target."""

    target: Target
    results: list[CaseResult]
    options: RunOptions
    started: str = ""
    duration: float = 0.0
    run_id: str = ""
    #: clean-ups at the end of the run that failed (the target keeps what they should have removed)
    cleanup_errors: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return passed(self.results, strict=self.options.strict)

    def counts(self) -> dict[str, int]:
        out = {str(o): 0 for o in Outcome}
        for r in self.results:
            out[str(r.outcome)] += 1
        return out

    def stale_deviations(self) -> list[str]:
        listed = self.options.deviations.reasons
        return sorted(r.case.id for r in self.results if r.case.id in listed and r.outcome is Outcome.PASS)

    def to_json(self) -> dict[str, Any]:
        from . import __version__

        return {
            "suite": SUITE, "suite_version": __version__, "run_id": self.run_id, "started": self.started,
            "duration": round(self.duration, 3), "target": self.target.describe(),
            "options": {"fast": self.options.fast, "strict": self.options.strict,
                        "deviations": self.options.deviations.source or None,
                        "timeout_scale": self.options.timeout_scale},
            "passed": self.passed, "counts": self.counts(), "stale_deviations": self.stale_deviations(),
            "cleanup_errors": list(self.cleanup_errors),
            "results": [r.to_json() for r in self.results],
        }


class CaseTimeout(Exception):
    """The case ran past its time limit."""

    def __init__(self, limit: float) -> None:
        super().__init__(f"timed out after {limit:g} s")
        self.limit = limit


def passed(results: Iterable[CaseResult], *, strict: bool = False) -> bool:
    """No fail, no MUST unimplemented, and (``strict``) no non-strict outcome."""
    for r in results:
        if r.outcome is Outcome.FAIL:
            return False
        if r.outcome is Outcome.UNIMPLEMENTED and r.case.level is Level.MUST:
            return False
        if strict and r.outcome is Outcome.NON_STRICT:
            return False
    return True


def not_run_reason(case: Case, target: Target, options: RunOptions) -> str | None:
    profile = target.profile or "4.9"
    if profile not in case.profiles:
        return f"profile {'/'.join(case.profiles)} only (the target is graded as {profile})"
    missing = [role for role in case.needs if target.addr(role) is None]
    if missing:
        return "no " + " and no ".join(f"{role} address (--{role})" for role in missing)
    if case.slow and options.fast:
        return "--fast leaves out the cases that wait for minutes"
    return None


def grade(case: Case, exc: BaseException | None) -> tuple[Outcome, str]:
    """The outcome of a case that returned (``exc`` None) or raised ``exc``."""
    if exc is None:
        return (Outcome.INFORMATIONAL if case.level is Level.INFO else Outcome.PASS), ""
    if isinstance(exc, CaseFailed):
        if case.level is Level.MUST:
            return Outcome.FAIL, str(exc)
        if case.level is Level.SHOULD:
            return Outcome.NON_STRICT, str(exc)
        return Outcome.INFORMATIONAL, str(exc)
    if isinstance(exc, Unimplemented):
        return Outcome.UNIMPLEMENTED, str(exc)
    if isinstance(exc, NotApplicable):
        return Outcome.NOT_RUN, str(exc)
    if isinstance(exc, CaseTimeout):
        return Outcome.FAIL, f"timed out after {exc.limit:g} s"
    return Outcome.FAIL, f"error: {type(exc).__name__}: {exc}{_where(exc)}"


def _where(exc: BaseException) -> str:
    """`` (at file:line)`` of the innermost frame of the suite's own code, for a case that errored."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(here)]
    if not frames:
        return ""
    f = frames[-1]
    return f" (at {os.path.relpath(f.filename, os.path.dirname(here))}:{f.lineno})"


async def run_case(case: Case, target: Target, options: RunOptions, run_id: str,
                    at_end: list[AtEnd]) -> CaseResult:
    reason = not_run_reason(case, target, options)
    if reason is not None:
        return CaseResult(case, Outcome.NOT_RUN, reason)
    ctx = Ctx(target, case, run_id, fast=options.fast, request_timeout=options.request_timeout, at_end=at_end)
    t0 = time.monotonic()
    exc: BaseException | None = None
    limit = case.timeout * options.timeout_scale
    deadline = asyncio.timeout(limit)
    try:
        async with deadline:
            await case.fn(ctx)
    except TimeoutError as err:
        exc = CaseTimeout(limit) if deadline.expired() else err
    except Exception as err:
        exc = err
    if deadline.expired() and not isinstance(exc, CaseTimeout):
        # the case swallowed the cancellation that ended it: it timed out all the same
        exc = CaseTimeout(limit)
    duration = time.monotonic() - t0
    errors = await ctx.close()
    outcome, detail = grade(case, exc)
    result = CaseResult(case, outcome, detail, ctx.observations + errors, duration)
    reason = options.deviations.reason(case.id)
    if reason is not None and outcome in _DEVIATABLE:
        result.graded = outcome
        result.outcome = Outcome.DEVIATION
        result.detail = f"{reason} (graded {outcome}: {detail})" if detail else reason
    return result


async def run_suite(target: Target, cases: Iterable[Case], options: RunOptions | None = None, *,
                    on_start: Callable[[Case], None] | None = None,
                    on_result: Callable[[CaseResult], None] | None = None,
                    run_id: str | None = None) -> Report:
    """Run ``cases`` against ``target`` (see the module docstring)."""
    options = options or RunOptions()
    run_id = run_id or secrets.token_hex(3)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    target = await discover(target, timeout=options.request_timeout)
    cases = list(cases)
    order = {c.id: i for i, c in enumerate(cases)}
    results: list[CaseResult] = []
    at_end: list[AtEnd] = []

    async def one(case: Case) -> CaseResult:
        if on_start is not None:
            on_start(case)
        result = await run_case(case, target, options, run_id, at_end)
        if on_result is not None:
            on_result(result)
        return result

    background = [asyncio.ensure_future(one(c)) for c in cases
                  if c.slow and not_run_reason(c, target, options) is None]
    try:
        for case in cases:
            if case.slow and not_run_reason(case, target, options) is None:
                continue
            results.append(await one(case))
        results.extend(await asyncio.gather(*background))
    finally:
        for task in background:
            task.cancel()
        cleanup_errors = await clean_up(at_end, options.request_timeout)
    results.sort(key=lambda r: order[r.case.id])
    return Report(target, results, options, started, time.monotonic() - t0, run_id, cleanup_errors)


async def clean_up(at_end: list[AtEnd], timeout: float) -> list[str]:
    """The run's clean-ups (topics the cases created), after a second for the target's
    dispatching to catch up, over connections of their own; failures are reported, never raised."""
    from wire.aio import ConnectionPool

    errors: list[str] = []
    if not at_end:
        return errors
    await asyncio.sleep(1.0)
    async with ConnectionPool(timeout=timeout, name="conformance clean-up") as pool:
        for fn in at_end:
            try:
                await asyncio.wait_for(fn(pool), 10)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    return errors


def run_suite_sync(target: Target, cases: Iterable[Case], options: RunOptions | None = None,
                   **kw: Any) -> Report:
    """:func:`run_suite` in a new event loop."""
    return asyncio.run(run_suite(target, cases, options, **kw))
