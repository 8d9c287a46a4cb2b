# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Fixtures of the store tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_broker.store import StoreConfig
from tests.store.storeutil import small_config


@pytest.fixture
def cfg(tmp_path: Path) -> StoreConfig:
    return small_config(tmp_path / "store")
