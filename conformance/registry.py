# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The catalogue: every case, registered once under its stable ID by :func:`case`.

The case modules live in :mod:`conformance.cases` (one per family); :func:`catalogue` imports
them on first use and returns the cases in ID order (family order first). IDs are checked when
they are registered: ``FAMILY-TOPIC-NNN``, a known family, never two cases with one ID.
"""

from __future__ import annotations

import fnmatch
import importlib
import re
from collections.abc import Callable, Iterable

from .model import FAMILIES, PROFILES, ROLES, Case, CaseFn, Level

__all__ = ["case", "catalogue", "get", "select"]

_CASES: dict[str, Case] = {}
_ID = re.compile(r"^[A-Z0-9]+-[A-Z0-9]+-\d{3}$")
_MODULES = ("framing", "namesrv", "broker", "admin", "ha4", "ha5", "controller", "robustness")
_loaded = False


def case(id: str, level: Level | str, requirement: str, *, source: str, needs: Iterable[str] = ("namesrv",),
         profiles: Iterable[str] = PROFILES, codes: Iterable[int] = (), timeout: float = 20.0,
         slow: bool = False, fast_note: str = "", doc: str = "") -> Callable[[CaseFn], CaseFn]:
    """Register the decorated ``async def scenario(ctx)`` as the case ``id``; what the scenario
    does is its docstring, or ``doc`` (for cases made in a loop)."""
    if not _ID.match(id):
        raise ValueError(f"case id {id!r} is not FAMILY-TOPIC-NNN")
    if id.split("-", 1)[0] not in FAMILIES:
        raise ValueError(f"case id {id!r}: unknown family (one of {', '.join(FAMILIES)})")
    needs = tuple(needs)
    profiles = tuple(profiles)
    if unknown := set(needs) - set(ROLES):
        raise ValueError(f"case {id}: unknown roles {sorted(unknown)}")
    if unknown := set(profiles) - set(PROFILES):
        raise ValueError(f"case {id}: unknown profiles {sorted(unknown)}")
    if "\n" in requirement or not requirement.strip():
        raise ValueError(f"case {id}: the requirement is one line")

    def register(fn: CaseFn) -> CaseFn:
        if id in _CASES:
            raise ValueError(f"case id {id} registered twice "
                             f"({_CASES[id].fn.__qualname__}, {fn.__qualname__})")
        text = " ".join((doc or fn.__doc__ or "").split())
        _CASES[id] = Case(id, Level(level), requirement.strip(), source, fn, needs, profiles, tuple(codes),
                          timeout, slow, fast_note, text)
        return fn

    return register


def _load() -> None:
    global _loaded
    if not _loaded:
        for name in _MODULES:
            importlib.import_module(f"conformance.cases.{name}")
        _loaded = True


def _order(c: Case) -> tuple[int, str]:
    return list(FAMILIES).index(c.prefix), c.id


def catalogue() -> list[Case]:
    """Every case, family by family, in ID order."""
    _load()
    return sorted(_CASES.values(), key=_order)


def get(case_id: str) -> Case:
    _load()
    try:
        return _CASES[case_id.upper()]
    except KeyError:
        close = [c for c in _CASES if c.startswith(case_id.upper().rsplit("-", 1)[0])]
        hint = f" (did you mean {', '.join(close[:5])}?)" if close else ""
        raise KeyError(f"no case {case_id!r}{hint}") from None


def select(only: Iterable[str] = (), skip: Iterable[str] = ()) -> list[Case]:
    """The cases whose ID or family matches a glob of ``only`` (all when empty) and none of ``skip``.

    A glob matches the ID (``NS-ROUTE-*``, ``FRM-*``) or the family name (``namesrv``); a glob
    that matches nothing is an error, so a typo never runs an empty suite."""
    cases = catalogue()
    only, skip = [g.upper() for g in only], [g.upper() for g in skip]

    def hit(c: Case, glob: str) -> bool:
        return fnmatch.fnmatchcase(c.id, glob) or fnmatch.fnmatchcase(c.family.upper(), glob)

    for glob in (*only, *skip):
        if not any(hit(c, glob) for c in cases):
            raise KeyError(f"{glob!r} matches no case ID or family")
    if only:
        cases = [c for c in cases if any(hit(c, g) for g in only)]
    return [c for c in cases if not any(hit(c, g) for g in skip)]
