# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Fixtures of the conformance suite's own tests: the artefact directory (build/conformance, kept
after the run: JSON, JUnit and the side-by-side HTML reports of the targets graded and of the
replays), the replay reports written in the session, and a CliRunner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = ROOT / "build" / "conformance"


@pytest.fixture(scope="session")
def artefacts() -> Path:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    return ARTEFACTS


@pytest.fixture(scope="session")
def replays_written() -> list[Path]:
    """The replay reports written in this session (the side-by-side replay page shows them)."""
    return []


@pytest.fixture
def invoke() -> Callable[..., Any]:
    """Run ``mqctl ARGS`` through typer's CliRunner."""
    from typer.testing import CliRunner

    from mqctl import app as app_module
    from mqctl.fastparams import install

    install()
    app_module._register()
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(app_module.app, list(args), catch_exceptions=True)

    return run
