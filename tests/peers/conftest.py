# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The ``peer_cluster`` fixture: reference servers as processes for the real-peer tests (see harness.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.peers.harness import PeerCluster


@pytest.fixture
def peer_cluster(tmp_path: Path) -> Iterator[Callable[..., PeerCluster]]:
    """A factory: ``peer_cluster(flushDiskType="SYNC_FLUSH", ...)`` starts one cluster."""
    started: list[PeerCluster] = []

    def make(**broker_keys: str) -> PeerCluster:
        root = tmp_path / f"cluster{len(started)}"
        root.mkdir()
        cluster = PeerCluster(root, {k: str(v) for k, v in broker_keys.items()})
        started.append(cluster)
        return cluster.start()

    yield make
    for cluster in started:
        with contextlib.suppress(Exception):
            cluster.stop()
