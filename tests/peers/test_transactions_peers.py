# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Transactional messages through our servers, produced by ``mqctl message send --transaction``
(the real command, as a process) and consumed by the real peer clients: the C++ and ali-ons
consumers see the committed messages (commit, and unknown answered commit on the broker's check)
and never the rolled-back ones (rollback, and unknown answered rollback). Neither peer client has
a transactional producer (see the issue notes in docs/servers.md), so mqctl is the producer."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import pytest

from tests.peers.harness import PeerCluster, mqctl_argv, require

pytestmark = [pytest.mark.peers, pytest.mark.slow]

CASES = (("commit", "commit"), ("rollback", "commit"), ("unknown", "commit"), ("unknown", "rollback"))


def test_peers_see_only_committed_transactions(peer_cluster: Callable[..., PeerCluster]) -> None:
    require("cpp", "js")
    cluster = peer_cluster(transactionCheckInterval="500", transactionTimeOut="300")
    topic = "TxPeers"
    cluster.create_topic(topic, queues=4)
    for i, (outcome, answer) in enumerate(CASES):
        done = subprocess.run(
            [*mqctl_argv(), "-n", cluster.namesrv, "-o", "json", "message", "send", "-t", topic,
             "-p", f"tx:{i}:{outcome}/{answer}", "-g", f"TxGroup{i}", "--transaction", outcome,
             "--check-answer", answer, "--wait", "30"],
            capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["send"]["status"] == "SEND_OK"
        assert len(result["checks"]) == (1 if outcome == "unknown" else 0), result
    committed = {"tx:0", "tx:2"}
    cpp = cluster.cpp("consume", topic=topic, group="TxCpp", expect=2, timeout=40, linger=3)
    js = cluster.js("consume", topic=topic, group="TxJs", expect=2, timeout=40, linger=3)
    cpp.finish(60)
    js.finish(60)
    assert {m["mark"] for m in cpp.messages} == committed, cpp.describe()
    assert {m["mark"] for m in js.messages} == committed, js.describe()
