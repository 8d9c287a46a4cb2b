# Licensed under the Apache License, Version 2.0. See LICENSE.
"""docs/conformance.md: its catalogue is the one the code generates, and it shows the report."""

from __future__ import annotations

from pathlib import Path

from conformance.catalogue import markdown, update
from conformance.registry import catalogue

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def test_catalogue_in_the_docs_is_current() -> None:
    assert update(DOC, check=True), "run: python -m conformance.catalogue docs/conformance.md"


def test_catalogue_lists_every_case_once() -> None:
    text = markdown()
    for c in catalogue():
        assert text.count(f"`{c.id}`") == 1, c.id


def test_the_screenshot_is_there() -> None:
    shot = DOC.parent / "images" / "conformance-report.png"
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "images/conformance-report.png" in DOC.read_text()
