# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Shared test fixtures.

``../shared`` (beside the checkout) holds the RocketMQ protocol notes and the real captures. CI has
it; on a fresh clone without it, the tests that need it skip with a reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]

# Property tests check what is decoded, never how fast: hypothesis' per-example deadline is a
# timed assertion, which a loaded CI machine trips at random (speed lives in benchmarks/).
settings.register_profile("mqctl", deadline=None)
settings.load_profile("mqctl")
SHARED = Path(os.environ.get("MQCTL_SHARED", ROOT.parent / "shared"))
CAPTURES = SHARED / "captures"
FIXTURES = ROOT / "fixtures"

# the real Java servers' harness (fixtures javakit, java_servers, java_servers_module)
pytest_plugins = ["tests.javakit"]


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the calling test with a clear reason."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} is absent: these tests need ../shared beside the checkout (CI has it)")
    return p


@pytest.fixture
def shared() -> Path:
    return shared_path()
