# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Known deviations: a YAML file per target that turns expected failures into ``deviation``.

The file lists case IDs with the reason each is expected to miss its requirement::

    # conformance/deviations/example.yaml
    target: my-broker 1.2           # free text, shown in reports
    deviations:
      - id: NS-UNKNOWN-002
        reason: answers REQUEST_CODE_NOT_SUPPORTED to unknown codes, as 5.x name servers do

A listed case that fails, misses its SHOULD or is unimplemented is graded ``deviation`` (with the
reason); one that passes stays ``pass`` and the report says the entry is stale. An ID the catalogue
does not have, a missing reason, or anything else the file should not hold is an error that names
the file and the entry, so a typo never hides a failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DeviationError", "Deviations", "load_deviations"]


class DeviationError(ValueError):
    """A known-deviations file that cannot be used (the message names file and entry)."""


@dataclass(frozen=True)
class Deviations:
    #: case ID → reason
    reasons: dict[str, str] = field(default_factory=dict)
    source: str = ""
    target: str = ""

    def reason(self, case_id: str) -> str | None:
        return self.reasons.get(case_id)

    def merged(self, other: Deviations) -> Deviations:
        return Deviations({**self.reasons, **other.reasons}, ";".join(s for s in (self.source,
                                                                                  other.source) if s),
                          self.target or other.target)


def _entries(doc: Any, where: str) -> list[tuple[str, Any]]:
    if doc is None:
        return []
    if not isinstance(doc, dict):
        raise DeviationError(f"{where}: expected a mapping with a 'deviations' list")
    unknown = set(doc) - {"target", "deviations"}
    if unknown:
        raise DeviationError(f"{where}: unknown keys {sorted(map(str, unknown))} "
                             "(expected 'target', 'deviations')")
    items = doc.get("deviations") or []
    if not isinstance(items, list):
        raise DeviationError(f"{where}: 'deviations' must be a list of {{id, reason}} entries")
    out = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict) or set(item) - {"id", "reason"}:
            raise DeviationError(f"{where}: entry {n}: expected exactly the keys 'id' and 'reason'")
        out.append((f"{where}: entry {n}", item))
    return out


def load_deviations(path: str | Path, *, known_ids: set[str] | None = None) -> Deviations:
    """Read and check a known-deviations file (see the module docstring)."""
    import yaml

    from .registry import catalogue

    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DeviationError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f":{mark.line + 1}" if mark is not None else ""
        raise DeviationError(f"{p}{at}: not YAML: {getattr(exc, 'problem', exc)}") from None
    ids = known_ids if known_ids is not None else {c.id for c in catalogue()}
    reasons: dict[str, str] = {}
    for where, item in _entries(doc, str(p)):
        case_id, reason = item.get("id"), item.get("reason")
        if not isinstance(case_id, str) or not case_id.strip():
            raise DeviationError(f"{where}: 'id' must be a case ID")
        case_id = case_id.strip().upper()
        if case_id not in ids:
            raise DeviationError(f"{where}: {case_id} is not a case ID of the catalogue")
        if not isinstance(reason, str) or not reason.strip():
            raise DeviationError(f"{where}: {case_id} needs a reason")
        if case_id in reasons:
            raise DeviationError(f"{where}: {case_id} is listed twice")
        reasons[case_id] = " ".join(reason.split())
    target = doc.get("target", "") if isinstance(doc, dict) else ""
    return Deviations(reasons, str(p), str(target or ""))
