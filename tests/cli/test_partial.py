# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The one rule for partial answers (issue 15 items 11 and 23), with real processes: a local
2m-noslave cluster (``mqctl cluster up``) whose broker-b is frozen with SIGSTOP, and every command
that asks several servers. Each shows what answered, marks the silent broker, prints one warning
line for it, and exits 3 (it did not answer in time)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .test_e2e import _free_base, _heartbeat_client, free_port, ok, run_mqctl

pytestmark = pytest.mark.slow

TOPIC = "PartTopic"


class Cluster:
    def __init__(self, root: Path) -> None:
        self.dir = root / "cluster"
        ns_port, base = _free_base()
        self.ns = f"127.0.0.1:{ns_port}"
        self.a = f"127.0.0.1:{base}"
        self.b = f"127.0.0.1:{base + 20}"
        self.ports = ("--namesrv-port", str(ns_port), "--broker-port", str(base))
        self.pids: dict[str, int] = {}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.conns: list[Any] = []

    def up(self) -> None:
        r = ok("-o", "json", "cluster", "up", "--dir", str(self.dir), "--layout", "2m-noslave",
               "--cluster-name", "PartCluster", *self.ports, timeout=120)
        self.pids = {p["name"]: p["pid"] for p in json.loads(r.stdout)["processes"]}
        ok("-n", self.ns, "topic", "create", TOPIC, "-c", "PartCluster", "-r", "2", "-w", "2")
        for i in range(8):
            ok("-n", self.ns, "message", "send", "-t", TOPIC, "-p", f"m{i}", "-k", f"k{i}")
        self.thread.start()
        for addr in (self.a, self.b):  # a consumer of group CG1, known to both brokers
            self.conns.append(asyncio.run_coroutine_threadsafe(
                _heartbeat_client(addr, TOPIC), self.loop).result(30))

    def down(self) -> None:
        with contextlib.suppress(ProcessLookupError, KeyError):
            os.kill(self.pids["broker-b"], signal.SIGCONT)
        for c in self.conns:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(c.aclose(), self.loop).result(10)
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
        self.loop.close()
        run_mqctl("cluster", "down", "--dir", str(self.dir), "--purge", timeout=90)


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    pytest.importorskip("reference_broker.broker")
    c = Cluster(tmp_path_factory.mktemp("partial"))
    try:
        c.up()
        # group CG1 has a retry topic once it is subscribed: wait until the name server routes it
        for _ in range(100):
            if run_mqctl("-n", c.ns, "topic", "route", "%RETRY%CG1").returncode == 0:
                break
        os.kill(c.pids["broker-b"], signal.SIGSTOP)
        yield c
    finally:
        c.down()


def mq(c: Cluster, *args: str) -> Any:
    return run_mqctl("-n", c.ns, "--timeout", "1", *args, timeout=60)


def _one_warning_for_b(c: Cluster, stderr: str) -> None:
    lines = stderr.splitlines()
    warnings = [line for line in lines if line.startswith("warning:")]
    assert len([w for w in warnings if c.b in w]) == 1, stderr
    assert all(c.a not in w for w in warnings), stderr
    assert lines[-1].startswith("error: ") and "did not answer" in lines[-1], stderr


def test_cluster_list(frozen):
    r = mq(frozen, "cluster", "list")
    assert r.returncode == 3
    rows = {line.split()[1]: line.split() for line in r.stdout.splitlines()[1:]}
    assert rows["broker-a"][5] != "-" and rows["broker-b"][4:] == ["-"] * 6
    _one_warning_for_b(frozen, r.stderr)


def test_topic_status(frozen):
    r = mq(frozen, "topic", "status", TOPIC)
    assert r.returncode == 3
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    assert [row[:2] for row in rows] == [["broker-a", "0"], ["broker-a", "1"],
                                         ["broker-b", "0"], ["broker-b", "1"]]
    assert all(row[2] != "-" for row in rows[:2]) and all(row[2:] == ["-", "-", "-"] for row in rows[2:])
    _one_warning_for_b(frozen, r.stderr)


def test_topic_list_with_clusters(frozen):
    r = mq(frozen, "-o", "json", "topic", "list", "-c")
    assert r.returncode == 3
    entry = next(e for e in json.loads(r.stdout) if e["topic"] == TOPIC)
    # the cluster comes from the name server; the groups from broker-a, which answered
    assert entry["cluster"] == "PartCluster" and entry["groups"] == ["CG1"]
    _one_warning_for_b(frozen, r.stderr)


def test_consumer_progress_of_every_group(frozen):
    r = mq(frozen, "consumer", "progress")
    assert r.returncode == 3
    row = next(line.split() for line in r.stdout.splitlines() if line.startswith("CG1 "))
    assert row[1] == "1" and row[2] != "OFFLINE"  # the group is live on broker-a
    _one_warning_for_b(frozen, r.stderr)


def test_consumer_progress_of_one_group(frozen):
    r = mq(frozen, "consumer", "progress", "-g", "CG1")
    assert r.returncode == 3
    rows = [line.split() for line in r.stdout.splitlines()[1:]
            if line.strip() and not line.startswith(("Consume", "Diff"))]
    assert ["-", "broker-b"] == rows[0][:2] and any(row[1] == "broker-a" for row in rows[1:])
    _one_warning_for_b(frozen, r.stderr)


def test_consumer_connection_asks_the_broker_that_answers(frozen):
    r = mq(frozen, "consumer", "connection", "-g", "CG1")
    assert r.returncode == 0, r.stderr
    assert "127.0.0.1@e2e" in r.stdout


def test_message_consume(frozen):
    r = mq(frozen, "-o", "json", "message", "consume", "-t", TOPIC, "-c", "100")
    assert r.returncode == 3
    doc = json.loads(r.stdout)
    assert doc["messages"] and {m["broker_name"] for m in doc["messages"]} == {"broker-a"}
    assert [f["detail"] for f in doc["failures"]] == ["broker-b"]
    _one_warning_for_b(frozen, r.stderr)


@pytest.mark.parametrize("args", [("broker", "status", "-c", "PartCluster"),
                                  ("broker", "config", "get", "-c", "PartCluster", "listenPort"),
                                  ("ha", "status", "-c", "PartCluster")])
def test_broker_commands_of_a_cluster(frozen, args):
    r = mq(frozen, *args)
    assert r.returncode == 3, r.stderr
    assert frozen.a in r.stdout
    _one_warning_for_b(frozen, r.stderr)


def test_message_query_by_key(frozen):
    r = mq(frozen, "message", "query", "-k", "k0", "-t", TOPIC)
    assert r.returncode == 3
    _one_warning_for_b(frozen, r.stderr)


def test_writes_follow_the_same_rule(frozen):
    r = mq(frozen, "topic", "update", TOPIC, "-c", "PartCluster", "-p", "6")
    assert r.returncode == 3
    assert r.stdout.startswith(f"update topic to {frozen.a} success.")
    _one_warning_for_b(frozen, r.stderr)


def test_acl_reads_follow_the_same_rule(main, patch_op):
    """``acl version``/``acl list`` of a cluster with one broker silent: the other's row, one warning,
    exit 3 (they printed an error row and exited 1)."""
    from wire.admin.acl import AclVersion, BrokerAclConfig
    from wire.bodies.acl import AclConfig

    silent = "no answer to GET_BROKER_CLUSTER_ACL_INFO from 10.0.0.2:10911 within 3s"
    patch_op("acl", "acl_versions", (AclVersion("10.0.0.1:10911", "broker-a", "C", 3, 1795341742797, {}),
                                     AclVersion("10.0.0.2:10911", None, None, None, None, {}, silent, True)))
    rc, out, err = main("acl", "version", "-c", "C")
    assert rc == 3 and "broker-a" in out and "10.0.0.2" not in out
    assert err.splitlines() == [f"warning: 10.0.0.2:10911: {silent}",
                                "error: acl version: 1 of 2 brokers failed (1 did not answer)"]
    rc, out, _err = main("-o", "json", "acl", "version", "-c", "C")
    assert rc == 3 and [(r["error"], r["unreachable"]) for r in json.loads(out)] == [(None, False), (silent, True)]
    patch_op("acl", "acl_config", (BrokerAclConfig("10.0.0.1:10911", AclConfig()),
                                   BrokerAclConfig("10.0.0.2:10911", None, "ACL is not enabled", False)))
    rc, out, err = main("acl", "list", "-c", "C")
    assert rc == 1 and "10.0.0.2" not in out
    assert err.splitlines() == ["warning: 10.0.0.2:10911: ACL is not enabled",
                                "error: acl list: 1 of 2 brokers failed (1 answered an error)"]


def test_kv_put_with_one_name_server_down(tmp_path):
    """Issue 15 item 23: the name server that took the entry gets its success line."""
    dead = f"127.0.0.1:{free_port()}"
    with _namesrv(tmp_path) as live:
        r = run_mqctl("-n", f"{live};{dead}", "--timeout", "1", "namesrv", "kv", "put", "NS15", "k", "v")
        assert r.returncode == 3
        assert r.stdout == f"create or update kv config to namespace success, {live}\n"
        warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
        assert len(warnings) == 1 and dead in warnings[0]
        r = run_mqctl("-n", f"{live};{dead}", "namesrv", "kv", "put", "NS15", "k", "v2")
        assert run_mqctl("-n", live, "namesrv", "kv", "get", "NS15", "k").stdout == "v2\n"


@contextlib.contextmanager
def _namesrv(root: Path) -> Iterator[str]:
    from reference_broker.config import NamesrvConfig
    from reference_broker.namesrv import NameServer

    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    stack = contextlib.AsyncExitStack()

    async def start() -> str:
        cfg = NamesrvConfig(overrides={"kvConfigPath": str(root / "kvConfig.json")})
        ns = await stack.enter_async_context(NameServer(cfg, host="127.0.0.1", port=0))
        return str(ns.address)

    try:
        yield asyncio.run_coroutine_threadsafe(start(), loop).result(30)
    finally:
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stack.aclose(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        t.join(10)
        loop.close()
