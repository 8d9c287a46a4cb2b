# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The suite's vocabulary: requirement levels, outcomes, cases and their results.

Outcomes follow Autobahn|Testsuite's grading, plus two of ours:

========================  =====================================================================
``pass``                  the target met the requirement
``non-strict``            a SHOULD was missed (a MUST never grades non-strict)
``informational``         an INFO case: what the target did is recorded, nothing is required
``unimplemented``         the target answered REQUEST_CODE_NOT_SUPPORTED to the request under test
``fail``                  a MUST was missed, or the case errored or timed out (whatever its level:
                          the suite fails closed)
``deviation``             a fail, non-strict or unimplemented outcome the target's known-deviations
                          file lists, with its reason
``not-run``               the case needs something the target does not have (no broker address
                          given, another profile, ``--fast``); the reason is always shown
========================  =====================================================================

A run passes when no case failed and no MUST case is unimplemented (with ``strict``, a
non-strict outcome fails the run too).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import Ctx

__all__ = [
    "FAMILIES",
    "PROFILES",
    "ROLES",
    "Case",
    "CaseFailed",
    "CaseResult",
    "Level",
    "NotApplicable",
    "Outcome",
    "Unimplemented",
]


class Level(enum.StrEnum):
    """How strongly a case's requirement binds (RFC 2119 words; INFO binds nothing)."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    INFO = "INFO"


class Outcome(enum.StrEnum):
    PASS = "pass"
    NON_STRICT = "non-strict"
    INFORMATIONAL = "informational"
    UNIMPLEMENTED = "unimplemented"
    FAIL = "fail"
    DEVIATION = "deviation"
    NOT_RUN = "not-run"


#: the families, in catalogue order: ID prefix → (name, what it covers)
FAMILIES: dict[str, tuple[str, str]] = {
    "FRM": ("framing", "frames, both header serializations, flags, opaques, oneway, malformed frames"),
    "NS": ("namesrv", "broker registration, routes, cluster info, KV config, expiry, unknown codes"),
    "BR": ("broker", "produce and consume: sends, pulls, long polling, offsets, retries, delays, queries"),
    "ADM": ("admin", "the requests mqadmin sends, with the shapes of their bodies"),
    "HA4": ("ha4", "4.x replication with the suite acting as a slave on the master's HA port"),
    "HA5": ("ha5", "5.x AutoSwitch replication with the suite acting as a slave (HANDSHAKE/TRANSFER)"),
    "CTL": ("controller", "the 5.x controller's requests"),
    "ROB": ("robustness", "garbage, oversize lengths, slowloris, many idle connections"),
}

#: the addresses a target can have
ROLES = ("namesrv", "broker", "slave", "ha", "controller")

#: the behaviour profiles: which Java release a target is graded against
PROFILES = ("4.9", "5.0")


class CaseFailed(Exception):
    """The target did not do what the requirement says (raised by the checks of :class:`Ctx`)."""


class Unimplemented(Exception):
    """The target answered REQUEST_CODE_NOT_SUPPORTED to the request the case is about."""


class NotApplicable(Exception):
    """The target cannot be graded by this case (e.g. the broker is not a SYNC_MASTER); the
    message says why and is shown with the ``not-run`` outcome."""


CaseFn = Callable[["Ctx"], Awaitable[None]]


@dataclass(frozen=True)
class Case:
    """One requirement and the scenario that checks it."""

    #: stable identifier, e.g. ``NS-ROUTE-003``; never reused for another requirement
    id: str
    level: Level
    #: the requirement in one line
    requirement: str
    #: where the requirement comes from: a Java class (and method), or a capture
    source: str
    fn: CaseFn = field(repr=False, compare=False)
    #: the target addresses the case talks to
    needs: tuple[str, ...] = ("namesrv",)
    #: the profiles the case applies to
    profiles: tuple[str, ...] = PROFILES
    #: request codes whose REQUEST_CODE_NOT_SUPPORTED answer makes the case ``unimplemented``
    codes: tuple[int, ...] = ()
    #: seconds before the case is failed as timed out
    timeout: float = 20.0
    #: waits for minutes (skipped with ``--fast``)
    slow: bool = False
    #: how much shorter ``--fast`` makes the case, for the documentation ("30 s → 3 s")
    fast_note: str = ""
    #: what the scenario does, beyond the requirement (the docstring of the case function)
    doc: str = ""

    @property
    def family(self) -> str:
        return FAMILIES[self.id.split("-", 1)[0]][0]

    @property
    def prefix(self) -> str:
        return self.id.split("-", 1)[0]

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "family": self.family, "level": str(self.level),
                "requirement": self.requirement,
                "source": self.source, "needs": list(self.needs), "profiles": list(self.profiles),
                "slow": self.slow}


@dataclass
class CaseResult:
    """What one case made of one target."""

    case: Case
    outcome: Outcome
    #: why (the failed check, the error, the deviation's reason, why it did not run)
    detail: str = ""
    #: what was seen on the way (latencies, versions, values of INFO cases)
    observations: list[str] = field(default_factory=list)
    duration: float = 0.0
    #: the outcome before a known deviation turned it into ``deviation``
    graded: Outcome | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.case.describe(), "outcome": str(self.outcome), "detail": self.detail,
                               "observations": list(self.observations), "duration": round(self.duration, 3)}
        if self.graded is not None:
            out["graded"] = str(self.graded)
        return out
