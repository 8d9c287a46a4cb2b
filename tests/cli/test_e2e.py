# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The real ``mqctl`` process against reference servers.

A name server and two brokers (broker-a, broker-b of one cluster) run in this test process on
ephemeral ports, on an event loop in a background thread; every test runs ``.venv/bin/mqctl``
as a subprocess against them, as an operator would, and checks its exit code and output. A
consumer and a producer are simulated on the same loop (heartbeats and offset commits, as the
Java client sends them) so that the connection and progress commands have something to show.
``cluster up/status/down`` start their own processes on free ports.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MQCTL = ROOT / ".venv" / "bin" / "mqctl"


def mqctl_cmd() -> list[str]:
    if MQCTL.exists():
        return [str(MQCTL)]
    return [sys.executable, "-m", "mqctl.app"]


def run_mqctl(*args: str, timeout: float = 60, input: str | None = None,
              stdout: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real mqctl (no config file, no $NAMESRV_ADDR); ``stdout`` names a file to write to."""
    env = {**os.environ, "TZ": "UTC", "MQCTL_CONFIG": os.devnull}
    env.pop("NAMESRV_ADDR", None)
    if stdout is None:
        return subprocess.run([*mqctl_cmd(), *args], capture_output=True, text=True, timeout=timeout, env=env,
                              input=input)
    with open(stdout, "w") as out:
        return subprocess.run([*mqctl_cmd(), *args], stdout=out, stderr=subprocess.PIPE, text=True,
                              timeout=timeout, env=env, input=input)


class Servers:
    """Reference servers (and simulated clients) on an event loop in a background thread."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.stack = contextlib.AsyncExitStack()
        self.ns: Any = None
        self.brokers: list[Any] = []

    def call(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> None:
        self.thread.start()
        self.call(self._start())

    async def _start(self) -> None:
        from reference_broker.broker import Broker
        from reference_broker.config import BrokerConfig, NamesrvConfig
        from reference_broker.namesrv import NameServer

        ns_cfg = NamesrvConfig(overrides={"kvConfigPath": str(self.root / "ns" / "kvConfig.json"),
                                          "configStorePath": str(self.root / "ns" / "namesrv.properties")})
        self.ns = await self.stack.enter_async_context(NameServer(ns_cfg, host="127.0.0.1", port=0))
        for name in ("broker-a", "broker-b"):
            cfg = BrokerConfig(overrides={
                "storePathRootDir": str(self.root / name), "brokerName": name,
                "brokerClusterName": "E2ECluster", "namesrvAddr": self.ns.address, "brokerIP1": "127.0.0.1",
                "brokerIP2": "127.0.0.1", "mappedFileSizeCommitLog": str(1 << 20),
                "mappedFileSizeConsumeQueue": str(20 * 1000), "maxHashSlotNum": "1000", "maxIndexNum": "4000"})
            self.brokers.append(await self.stack.enter_async_context(Broker(cfg, host="127.0.0.1", port=0)))

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.call(self.stack.aclose())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    @property
    def namesrv(self) -> str:
        return str(self.ns.address)

    def broker_addr(self, i: int) -> str:
        return str(self.brokers[i].address)


def ok(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    r = run_mqctl(*args, **kw)
    assert r.returncode == 0, f"mqctl {' '.join(args)} exited {r.returncode}: {r.stderr}"
    return r


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()[1:] if line.strip()]


def wait_for(predicate: Any, what: str, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


# ---------------------------------------------------------------------- simulated clients


async def _heartbeat_client(addr: str, topic: str) -> Any:
    """A connection that heartbeats as a Java client with producer group PG1 and push consumer
    group CG1 subscribed to ``topic`` (HEART_BEAT 34), then commits offset 1 on queue 0
    (UPDATE_CONSUMER_OFFSET 15)."""
    from wire import RemotingCommand
    from wire.aio import connect
    from wire.bodies import (
        ConsumeFromWhere,
        ConsumerData,
        ConsumeType,
        HeartbeatData,
        MessageModel,
        ProducerData,
        SubscriptionData,
    )

    host, _, port = addr.rpartition(":")
    conn = await connect(host, int(port))
    hb = HeartbeatData(
        client_id="127.0.0.1@e2e", producer_data_set=(ProducerData(group_name="PG1"),),
        consumer_data_set=(ConsumerData(
            group_name="CG1", consume_type=ConsumeType.CONSUME_PASSIVELY, message_model=MessageModel.CLUSTERING,
            consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
            subscription_data_set=(SubscriptionData(topic=topic, sub_string="*"),)),))
    resp = await conn.request(RemotingCommand.request(34, {}, hb.encode()))
    assert resp.code == 0, resp
    resp = await conn.request(RemotingCommand.request(
        15, {"consumerGroup": "CG1", "topic": topic, "queueId": 0, "commitOffset": 1}))
    assert resp.code == 0, resp
    return conn


# ---------------------------------------------------------------------- the commands


def test_cluster_list(servers):
    r = ok("-n", servers.namesrv, "cluster", "list")
    got = rows(r.stdout)
    assert [row[:4] for row in got] == [["E2ECluster", "broker-a", "0", servers.broker_addr(0)],
                                        ["E2ECluster", "broker-b", "0", servers.broker_addr(1)]]
    assert all(row[4] == "V4_9_8" for row in got)
    doc = json.loads(ok("-n", servers.namesrv, "-o", "json", "cluster", "list", "-c", "E2ECluster").stdout)
    assert [b["addr"] for b in doc["brokers"]] == [servers.broker_addr(0), servers.broker_addr(1)]
    more = ok("-n", servers.namesrv, "cluster", "list", "--more")
    assert "#InTotalYest" in more.stdout
    r = run_mqctl("-n", servers.namesrv, "cluster", "list", "-c", "NoSuchCluster")
    assert r.returncode == 1 and "NoSuchCluster" in r.stderr and r.stderr.count("\n") == 1


def test_topic_lifecycle(servers):
    ns = servers.namesrv
    r = ok("-n", ns, "topic", "create", "E2ETopic", "-c", "E2ECluster", "-r", "4", "-w", "4")
    assert r.stdout.count("success.") == 2
    ok("-n", ns, "topic", "update", "E2ETopic", "-b", servers.broker_addr(0), "-r", "2", "-w", "2")
    route = json.loads(ok("-n", ns, "-o", "json", "topic", "route", "E2ETopic").stdout)
    queues = {q["brokerName"]: q["writeQueueNums"] for q in route["queueDatas"]}
    assert queues == {"broker-a": 2, "broker-b": 4}
    assert "E2ETopic" in ok("-n", ns, "topic", "list").stdout.split()
    listing = json.loads(ok("-n", ns, "-o", "json", "topic", "list", "-c").stdout)
    assert {"topic": "E2ETopic", "cluster": "E2ECluster", "groups": []} in listing
    assert ok("-n", ns, "topic", "clusters", "E2ETopic").stdout == "E2ECluster\n"
    r = ok("-n", ns, "topic", "perm", "E2ETopic", "-p", "R", "-b", servers.broker_addr(1))
    assert r.stdout == f"update topic perm from 6 to 4 in {servers.broker_addr(1)} success.\n"
    table = ok("-n", ns, "topic", "route", "E2ETopic").stdout
    assert ["broker-b", "4", "4", "4", "(R--)", "0"] in [line.split() for line in table.splitlines()]
    ok("-n", ns, "topic", "perm", "E2ETopic", "-p", "6", "-c", "E2ECluster")
    status = rows(ok("-n", ns, "topic", "status", "E2ETopic").stdout)
    assert len(status) == 6
    r = ok("-n", ns, "topic", "delete", "E2ETopic")
    assert r.stdout.splitlines() == ["delete topic [E2ETopic] from cluster [E2ECluster] success.",
                                     "delete topic [E2ETopic] from NameServer success."]
    r = run_mqctl("-n", ns, "topic", "route", "E2ETopic")
    assert r.returncode == 1 and "TOPIC_NOT_EXIST" in r.stderr


def test_messages(servers):
    ns = servers.namesrv
    ok("-n", ns, "topic", "create", "MsgTopic", "-b", servers.broker_addr(0), "-r", "2", "-w", "2")
    sent = []
    for i in range(3):
        r = ok("-n", ns, "-o", "json", "message", "send", "-t", "MsgTopic", "-p", f"body {i}", "-k", f"k{i} kk",
               "-c", "tagE")
        sent.append(json.loads(r.stdout))
    assert {s["status"] for s in sent} == {"SEND_OK"}
    r = ok("-n", ns, "message", "send", "-t", "MsgTopic", "-p", "pinned", "-b", "broker-a", "-q", "1")
    assert rows(r.stdout)[0][:3] == ["broker-a", "1", "SEND_OK"]
    r = run_mqctl("-n", ns, "message", "send", "-t", "MsgTopic", "--file", "/dev/null")
    assert r.returncode == 2 and r.stderr == "error: --file /dev/null: the file is empty\n"
    r = ok("-n", ns, "message", "send", "-t", "MsgTopic", "-p", "-", input="from stdin")
    assert rows(r.stdout)[0][2] == "SEND_OK"
    first = sent[0]
    detail = ok("-n", ns, "message", "query", "--id", first["offset_msg_id"]).stdout
    assert f"MsgId:             {first['msg_id']}" in detail and "Body:              body 0" in detail
    assert "Broker Name:       broker-a" in detail
    by_key = rows(ok("-n", ns, "message", "query", "-k", "k1", "-t", "MsgTopic").stdout)
    assert [r[0] for r in by_key] == [sent[1]["msg_id"]]
    uniq = ok("-n", ns, "message", "query", "-u", sent[2]["msg_id"], "-t", "MsgTopic").stdout
    assert "Body:              body 2" in uniq
    off = ok("-n", ns, "message", "query", "--offset", str(first["queue_offset"]), "-t", "MsgTopic",
             "-b", "broker-a", "-q", str(first["queue_id"])).stdout
    assert f"OffsetID:          {first['offset_msg_id']}" in off
    consumed = json.loads(ok("-n", ns, "-o", "json", "message", "consume", "-t", "MsgTopic").stdout)
    bodies = sorted(m["body_text"] for m in consumed["messages"])
    assert bodies == ["body 0", "body 1", "body 2", "from stdin", "pinned"]
    hexed = ok("-n", ns, "message", "consume", "-t", "MsgTopic", "-b", "broker-a", "-q", "1", "--hex").stdout
    assert "70696e6e6564" in hexed
    assert len(json.loads(ok("-n", ns, "-o", "json", "message", "consume", "-t", "MsgTopic", "-c", "2").stdout)
               ["messages"]) == 2
    r = run_mqctl("-n", ns, "message", "query", "-k", "nothing", "-t", "MsgTopic")
    assert r.returncode == 1 and "no message" in r.stderr
    auto = json.loads(ok("-n", ns, "-o", "json", "message", "send", "-t", "AutoTopic", "-p", "x").stdout)
    assert auto["auto_create"] is True and auto["status"] == "SEND_OK"


def test_consumer_and_producer(servers):
    ns = servers.namesrv
    ok("-n", ns, "topic", "create", "ConsTopic", "-b", servers.broker_addr(0), "-r", "2", "-w", "2")
    for i in range(4):
        ok("-n", ns, "message", "send", "-t", "ConsTopic", "-p", f"m{i}", "-b", "broker-a", "-q", "0")
    conn = servers.call(_heartbeat_client(servers.broker_addr(0), "ConsTopic"))
    try:
        progress = wait_for(lambda: (r := run_mqctl("-n", ns, "consumer", "progress", "-g", "CG1")).returncode == 0
                            and r, "consumer progress of CG1")
        table = [row for row in rows(progress.stdout) if row and row[0] == "ConsTopic"]
        assert ["ConsTopic", "broker-a", "0", "4", "1", "3"] == table[0][:6]
        assert progress.stdout.splitlines()[-1] == "Diff Total: 3"
        groups = rows(ok("-n", ns, "consumer", "progress").stdout)
        assert ["CG1", "1", "V4_9_8", "PUSH", "CLUSTERING", "0", "3"] in groups
        c = ok("-n", ns, "consumer", "connection", "-g", "CG1").stdout
        assert "127.0.0.1@e2e" in c and "ConsumeType: CONSUME_PASSIVELY" in c
        assert ["ConsTopic", "*"] in [line.split() for line in c.splitlines()]
        p = ok("-n", ns, "producer", "connection", "-g", "PG1", "-t", "ConsTopic").stdout
        assert rows("#\n" + p)[1][:2] == ["0001", "127.0.0.1@e2e"]
    finally:
        servers.call(conn.aclose())
    r = run_mqctl("-n", ns, "consumer", "connection", "-g", "NoGroup")
    assert r.returncode == 1


def test_subscription_groups(servers):
    ns = servers.namesrv
    r = ok("-n", ns, "consumer", "group", "create", "-g", "SubG", "-c", "E2ECluster", "--retry-max-times", "5")
    assert r.stdout.count("success.") == 2 and "retryMaxTimes=5" in r.stdout
    ok("-n", ns, "consumer", "group", "update", "-g", "SubG", "-b", servers.broker_addr(0), "--broadcast")
    r = ok("-n", ns, "consumer", "group", "delete", "-g", "SubG", "-c", "E2ECluster")
    assert r.stdout.count("from broker") == 2


def test_broker_status_and_config(servers):
    ns, a = servers.namesrv, servers.broker_addr(0)
    status = json.loads(ok("-n", ns, "-o", "json", "broker", "status", "-b", a).stdout)
    assert status["brokerVersionDesc"] == "V4_9_8"
    both = json.loads(ok("-n", ns, "-o", "json", "broker", "status", "-c", "E2ECluster").stdout)
    assert [t["broker_name"] for t in both] == ["broker-a", "broker-b"]
    r = ok("-n", ns, "broker", "config", "set", "-b", a, "flushIntervalCommitLog=700")
    assert r.stdout == f"update broker config success, {a}\n"
    got = rows(ok("-n", ns, "broker", "config", "get", "-b", a, "flushIntervalCommitLog", "brokerName").stdout)
    assert sorted(got) == [["brokerName", "broker-a"], ["flushIntervalCommitLog", "700"]]
    ok("-n", ns, "broker", "config", "set", "-c", "E2ECluster", "flushIntervalCommitLog=500")
    cfgs = json.loads(ok("-n", ns, "-o", "json", "broker", "config", "get", "-c", "E2ECluster",
                         "flushIntervalCommitLog").stdout)
    assert [c["table"] for c in cfgs] == [{"flushIntervalCommitLog": "500"}] * 2


def test_namesrv_commands(servers):
    ns = servers.namesrv
    cfg = json.loads(ok("-n", ns, "-o", "json", "namesrv", "config", "get").stdout)
    assert "kvConfigPath" in cfg
    ok("-n", ns, "namesrv", "config", "set", "orderMessageEnable=true")
    assert rows(ok("-n", ns, "namesrv", "config", "get", "orderMessageEnable").stdout) == [
        ["orderMessageEnable", "true"]]
    ok("-n", ns, "namesrv", "config", "set", "orderMessageEnable=false")
    assert ok("-n", ns, "namesrv", "kv", "put", "E2E_NS", "k", "v 1").stdout == \
        "create or update kv config to namespace success.\n"
    assert ok("-n", ns, "namesrv", "kv", "get", "E2E_NS", "k").stdout == "v 1\n"
    assert json.loads(ok("-n", ns, "-o", "json", "namesrv", "kv", "list", "E2E_NS").stdout) == {"k": "v 1"}
    ok("-n", ns, "namesrv", "kv", "delete", "E2E_NS", "k")
    r = run_mqctl("-n", ns, "namesrv", "kv", "get", "E2E_NS", "k")
    assert r.returncode == 1 and r.stderr.startswith(f"error: QUERY_NOT_FOUND(22) from {ns} to GET_KV_CONFIG:")
    r = ok("-n", ns, "topic", "create", "OrdTopic", "-c", "E2ECluster", "-w", "3", "--order")
    assert "set orderConf. isOrder=true, orderConf=[broker-a:3;broker-b:3]" in r.stdout
    assert ok("-n", ns, "namesrv", "kv", "get", "ORDER_TOPIC_CONFIG", "OrdTopic").stdout == "broker-a:3;broker-b:3\n"
    ok("-n", ns, "topic", "update", "OrdTopic", "-b", servers.broker_addr(0), "-w", "2", "--order")
    assert ok("-n", ns, "namesrv", "kv", "get", "ORDER_TOPIC_CONFIG", "OrdTopic").stdout == "broker-a:2;broker-b:3\n"
    ok("-n", ns, "topic", "create", "PermTopic", "-c", "E2ECluster")
    r = ok("-n", ns, "namesrv", "write-perm", "wipe", "broker-a")
    assert r.stdout.startswith(f"wipe write perm of broker[broker-a] in name server[{ns}] OK, ")
    route = json.loads(ok("-n", ns, "-o", "json", "topic", "route", "PermTopic").stdout)
    assert {q["brokerName"]: q["perm"] for q in route["queueDatas"]} == {"broker-a": 4, "broker-b": 6}
    r = ok("-n", ns, "namesrv", "write-perm", "add", "broker-a")
    assert r.stdout.startswith(f"add write perm of broker[broker-a] in name server[{ns}] OK, ")


def test_ha_status_of_a_reference_broker(servers):
    # the reference broker answers GET_BROKER_HA_STATUS (a 4.9.x one does not: tests/interop)
    a = servers.broker_addr(0)
    r = run_mqctl("-n", servers.namesrv, "ha", "status", "-b", a)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = [line.split(None, 1) for line in r.stdout.splitlines()]
    assert lines[0] == ["#MasterAddr", a] and ["#SlaveNum", "0"] in lines
    assert not any(line[0] == "#Source" for line in lines)
    # an address the name server does not list is asked all the same
    stray = f"127.0.0.1:{servers.brokers[1].port}"
    r = run_mqctl("-n", f"127.0.0.1:{free_port()}", "--timeout", "2", "ha", "status", "-b", stray)
    assert r.returncode == 0 and r.stdout.startswith(f"#MasterAddr                {stray}\n"), r.stdout + r.stderr


def test_namesrv_failover(servers):
    dead = f"127.0.0.1:{free_port()}"
    r = ok("-n", f"{dead};{servers.namesrv}", "topic", "list")
    assert "TBW102" in r.stdout.split()


def test_store_inspect_reference_store(servers):
    ok("-n", servers.namesrv, "message", "send", "-t", "StoreTopic", "-p", "stored", "-b", "broker-b", "-q", "0")
    r = ok("store", "inspect", str(servers.root / "broker-b"), "--messages")
    assert "StoreTopic" in r.stdout and "stored" in r.stdout
    doc = json.loads(ok("-o", "json", "store", "inspect", str(servers.root / "broker-b")).stdout)
    assert doc["problems"] == [] and doc["records"] >= 1 and doc["abort_file"] is True
    assert any(q["topic"] == "StoreTopic" for q in doc["consume_queues"])


# ---------------------------------------------------------------------- exit codes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_exit_code_3_when_nothing_listens():
    port = free_port()
    r = run_mqctl("-n", f"127.0.0.1:{port}", "cluster", "list")
    assert r.returncode == 3 and r.stdout == ""
    assert r.stderr.startswith(f"error: cannot connect to 127.0.0.1:{port}") and r.stderr.count("\n") == 1


def test_exit_code_3_on_timeout():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        r = run_mqctl("-n", f"127.0.0.1:{s.getsockname()[1]}", "--timeout", "0.5", "topic", "list")
    assert r.returncode == 3 and "within 0.5s" in r.stderr


def test_exit_code_2_on_usage():
    r = run_mqctl("topic", "route")
    assert r.returncode == 2 and r.stdout == ""
    r = run_mqctl("-o", "csv", "topic", "list")
    assert r.returncode == 2


def test_exit_code_1_on_server_error(servers):
    r = run_mqctl("-n", servers.namesrv, "producer", "connection", "-g", "Nobody", "-t", "TBW102")
    assert r.returncode == 1 and "the producer group[Nobody] not exist" in r.stderr


def test_no_traceback_anywhere(servers):
    for args in (("topic", "status", "NoTopic"), ("message", "query", "--id", "zz"), ("store", "inspect", "/")):
        r = run_mqctl("-n", servers.namesrv, *args)
        assert r.returncode in (1, 2) and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr


# ---------------------------------------------------------------------- local cluster


def _free_base(offsets: tuple[int, ...] = (0, 20)) -> tuple[int, int]:
    """A name-server port and a broker port P such that, for each offset o, P+o-2, P+o and P+o+1
    (VIP, remoting, HA) are all free, below the kernel's ephemeral range, where no outgoing
    connection of another process can take one before the servers bind them."""
    from tests.javakit import free_ports

    wanted = [o + d for o in offsets for d in (-2, 0, 1)]
    while True:  # the name server's port must not be one of the brokers' (each is free, not yet bound)
        ns, base = free_ports(0), free_ports(*wanted)
        if ns - base not in wanted:
            return ns, base


@pytest.mark.slow
def test_cluster_up_status_down(tmp_path):
    pytest.importorskip("reference_broker.broker")
    ns_port, base = _free_base()
    d = tmp_path / "cluster"
    r = ok("cluster", "up", "--dir", str(d), "--layout", "2m-noslave", "--namesrv-port", str(ns_port),
           "--broker-port", str(base), "--cluster-name", "UpCluster", timeout=90)
    try:
        assert [row[:5] for row in rows(r.stdout.split("\n", 1)[1])] == [
            ["namesrv", "namesrv", f"127.0.0.1:{ns_port}", row_pid(r, "namesrv"), "answering"],
            ["broker-a", "master", f"127.0.0.1:{base}", row_pid(r, "broker-a"), "answering"],
            ["broker-b", "master", f"127.0.0.1:{base + 20}", row_pid(r, "broker-b"), "answering"]]
        assert "broker-a" in (d / "broker-a.properties").read_text()
        listed = rows(ok("-n", f"127.0.0.1:{ns_port}", "cluster", "list").stdout)
        assert [row[:4] for row in listed] == [["UpCluster", "broker-a", "0", f"127.0.0.1:{base}"],
                                               ["UpCluster", "broker-b", "0", f"127.0.0.1:{base + 20}"]]
        status = json.loads(ok("-o", "json", "cluster", "status", "--dir", str(d)).stdout)
        assert status["running"] is True
        again = run_mqctl("cluster", "up", "--dir", str(d), "--namesrv-port", str(ns_port),
                          "--broker-port", str(base))
        assert again.returncode == 1 and "already running" in again.stderr
        busy = run_mqctl("cluster", "up", "--dir", str(tmp_path / "other"), "--namesrv-port", str(ns_port),
                         "--broker-port", str(base))
        assert busy.returncode == 1 and f"port {ns_port} on 127.0.0.1 is in use" in busy.stderr
    finally:
        down = run_mqctl("cluster", "down", "--dir", str(d), timeout=60)
    assert down.returncode == 0, down.stderr
    assert [row[4] for row in rows(down.stdout.split("\n", 1)[1])] == ["stopped"] * 3
    for port in (ns_port, base, base + 20):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0
    r = run_mqctl("cluster", "status", "--dir", str(d))
    assert r.returncode == 1 and "no local cluster" in r.stderr
    r = ok("store", "inspect", str(d / "store" / "broker-a"))
    assert "Abort file:  absent" in r.stdout
    shutil.rmtree(d, ignore_errors=True)


def row_pid(r: subprocess.CompletedProcess[str], name: str) -> str:
    for line in r.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == name:
            return parts[3]
    raise AssertionError(name)


def test_rocketmq_serialization_and_trace(servers):
    ns = servers.namesrv
    r = ok("-n", ns, "--serialize", "rocketmq", "-v", "cluster", "list")
    assert [row[1] for row in rows(r.stdout)] == ["broker-a", "broker-b"]
    trace = r.stderr.splitlines()
    assert trace[0] == f"-> {ns} GET_BROKER_CLUSTER_INFO(106) {{}}"
    assert trace[1].startswith(f"<- {ns} SUCCESS(0) ") and " body " in trace[1]
    assert sum(line.startswith("-> ") and "GET_BROKER_RUNTIME_INFO(28)" in line for line in trace) == 2
    sent = json.loads(ok("-n", ns, "--serialize", "rocketmq", "-o", "json", "message", "send", "-t", "BinTopic",
                         "-p", "binary header").stdout)
    got = ok("-n", ns, "--serialize", "rocketmq", "message", "query", "--id", sent["offset_msg_id"]).stdout
    assert "Body:              binary header" in got
