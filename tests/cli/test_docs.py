# Licensed under the Apache License, Version 2.0. See LICENSE.
"""docs/cli.md against the commands: every example in it runs, in the order of the page, against a
local cluster started the way the page says (``cluster up --layout 2m-2s-async``, on free ports), and
succeeds; where the page shows a table under the example, the table's header is the command's. The
mqadmin table of the page is the alias table of :mod:`mqctl.aliases`.

The page's addresses are the official layout's (name server 127.0.0.1:9876, broker-a :10911 and
its slave :10921, broker-b :10931 and its slave :10941; the HA examples show Java 5.0.0 brokers on :30911/:31911): they are mapped to the
test cluster's. The groups the examples name have a consumer online (simulated on this process's
loop, as the Java client heartbeats and commits), and the topic the page deletes is created first.
The brokers check plain ACL (``--broker-set aclEnable=true``, this machine a global white address,
as the page's acl examples need a broker with ACL on), and a ``$ export`` line of the page sets its
variables for the examples after it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .test_e2e import ROOT, _free_base, mqctl_cmd, ok, run_mqctl

DOC = ROOT / "docs" / "cli.md"


@dataclass
class Example:
    line: int
    command: str
    #: the table header the page shows under the command, when it shows one
    header: list[str] | None
    #: the variables the page's ``$ export`` lines above it have set
    env: dict[str, str]


def examples(text: str) -> list[Example]:
    """Every ``$ mqctl …`` line of a code block, and every ``mqctl …`` line of a ``sh`` block."""
    out: list[Example] = []
    env: dict[str, str] = {}
    block: str | None = None
    lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            block = None if block is not None else line[3:].strip()
            continue
        if block is None:
            continue
        cmd = None
        if line.startswith("$ export "):
            for assignment in shlex.split(line[len("$ export "):]):
                name, _, value = assignment.partition("=")
                env[name] = value
            continue
        if line.startswith("$ mqctl "):
            cmd = line[2:]
        elif block == "sh" and line.startswith("mqctl "):
            cmd = line
        if cmd is None:
            continue
        cmd = re.split(r"\s{2,}#", cmd)[0].strip()
        following = (lines[n] if n < len(lines) else "").split()
        # a table's header: every word a #Column (a key/value line such as #MasterAddr ADDR is not)
        header = following if following and all(w.startswith("#") for w in following) else None
        out.append(Example(n, cmd, header, dict(env)))
    return out


def test_the_page_has_examples_of_every_noun():
    nouns = {e.command.split()[1] if not e.command.split()[1].startswith("-") else
             next(w for w in e.command.split()[1:] if not w.startswith("-") and ":" not in w)
             for e in examples(DOC.read_text())}
    assert {"cluster", "topic", "broker", "consumer", "message", "namesrv", "ha", "stats", "store"} <= nouns


def test_the_mqadmin_table_is_the_alias_table():
    from mqctl.aliases import MQADMIN

    text = DOC.read_text()
    section = text.split("## mqadmin commands", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split(" | ")] for line in section.splitlines()
            if line.startswith("| `")]
    assert [r[0].strip("`") for r in rows] == [a.name for a in MQADMIN]
    for row, alias in zip(rows, MQADMIN, strict=True):
        if alias.path:
            assert row[2] == f"`mqctl {' '.join(alias.path)}`", row
        elif alias.route is None:
            assert row[2] == "—" and row[3] == alias.why.replace("|", "\\|"), row
        release = [v for v in ("4.9.8", "5.0.0") if not alias.since and (v == "5.0.0" or not alias.since_5)]
        release += [f"{alias.since}+"] if alias.since else [] if alias.gone else ["5.3.3"]
        assert row[1] == ", ".join(release), row

    def covers(chosen: list[Any]) -> str:
        return f"{sum(1 for a in chosen if a.covered)} of"

    n498 = [a for a in MQADMIN if not a.since and not a.since_5]
    n500 = [a for a in MQADMIN if not a.since]
    n533 = [a for a in MQADMIN if not a.gone]
    said = " ".join(text.split())
    assert len(MQADMIN) == 95
    assert (f"mqctl covers {sum(1 for a in MQADMIN if a.covered)} of the 95 names: "
            f"{covers(n498)} 4.9.8's {len(n498)}, {covers(n500)} 5.0.0's {len(n500)} and "
            f"{covers(n533)} 5.3.3's {len(n533)}.") in said


# ---------------------------------------------------------------------- running the examples


async def _consumer(addr: str, group: str, topic: str) -> Any:
    """A connection that heartbeats as a Java push consumer of ``group`` on ``topic`` and commits
    offset 0 of each of the topic's four queues (so the group has consume stats)."""
    from wire import RemotingCommand
    from wire.aio import connect
    from wire.bodies import (
        ConsumeFromWhere,
        ConsumerData,
        ConsumeType,
        HeartbeatData,
        MessageModel,
        SubscriptionData,
    )

    host, _, port = addr.rpartition(":")
    conn = await connect(host, int(port))
    hb = HeartbeatData(client_id=f"127.0.0.1@docs-{group}", consumer_data_set=(ConsumerData(
        group_name=group, consume_type=ConsumeType.CONSUME_PASSIVELY, message_model=MessageModel.CLUSTERING,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
        subscription_data_set=(SubscriptionData(topic=topic, sub_string="*"),)),))
    assert (await conn.request(RemotingCommand.request(34, {}, hb.encode()))).code == 0
    for queue in range(4):  # a consumer commits every queue it holds
        await conn.request(RemotingCommand.request(
            15, {"consumerGroup": group, "topic": topic, "queueId": queue, "commitOffset": 0}))
    return conn


class DocsCluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / "cluster"
        ns_port, base = _free_base((0, 10, 20, 30))
        self.ports = {"9876": str(ns_port), "10911": str(base), "10921": str(base + 10), "10931": str(base + 20),
                      "10941": str(base + 30), "30911": str(base), "31911": str(base + 20)}
        self.ns = f"127.0.0.1:{ns_port}"
        home = root / "acl-home"
        (home / "conf").mkdir(parents=True)
        (home / "conf" / "plain_acl.yml").write_text(
            "globalWhiteRemoteAddresses:\n  - 127.0.0.1\n"
            "accounts:\n  - accessKey: rocketmq2\n    secretKey: '12345678'\n    admin: true\n")
        self.up_args = ["--dir", str(self.dir), "--namesrv-port", str(ns_port), "--broker-port", str(base),
                        "--broker-set", "aclEnable=true", "--broker-set", f"rocketmqHome={home}"]
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.conns: list[Any] = []
        self.offset_id: str | None = None

    def consumers(self) -> None:
        self.thread.start()
        for topic in ("OrderTopic", "CapTopic"):
            ok("-n", self.ns, "topic", "create", topic, "-c", "DefaultCluster", "-r", "4", "-w", "4")
        ok("-n", self.ns, "topic", "create", "OldTopic", "-c", "DefaultCluster")
        for group, topic in (("OrderGroup", "OrderTopic"), ("CapGroup", "CapTopic")):
            for addr in (f"127.0.0.1:{self.ports['10911']}", f"127.0.0.1:{self.ports['10931']}"):
                self.conns.append(asyncio.run_coroutine_threadsafe(
                    _consumer(addr, group, topic), self.loop).result(30))
        for group in ("OrderGroup", "CapGroup"):  # the name server routes the retry topic
            deadline = time.monotonic() + 30
            while run_mqctl("-n", self.ns, "topic", "route", f"%RETRY%{group}").returncode != 0:
                assert time.monotonic() < deadline, f"%RETRY%{group} never got a route"
                time.sleep(0.2)

    def close(self) -> None:
        for c in self.conns:
            try:
                asyncio.run_coroutine_threadsafe(c.aclose(), self.loop).result(10)
            except Exception:
                pass
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
        self.loop.close()

    def argv(self, command: str) -> list[str] | None:
        """The example's arguments for the test cluster (``None``: it is the cluster's own up/down)."""
        command = command.split(" | ")[0]  # "| jq …": the shell's part
        command = command.replace("[", "").replace("]", "")
        for port, mine in self.ports.items():
            command = command.replace(f"127.0.0.1:{port}", f"127.0.0.1:{mine}")
        command = command.replace("~/store/broker-a", str(self.dir / "store" / "broker-a"))
        if self.offset_id is not None:
            command = command.replace("7F0000010000754F0000000000000000", self.offset_id)
        args = shlex.split(command)[1:]
        if args[:2] in (["cluster", "up"], ["cluster", "down"]):
            return None
        if args[:2] == ["cluster", "status"]:
            args += ["--dir", str(self.dir)]
        return ["-n", self.ns, *args]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocsCluster]:
    pytest.importorskip("reference_broker.broker")
    c = DocsCluster(tmp_path_factory.mktemp("docs"))
    up = [e for e in examples(DOC.read_text()) if e.command.startswith("mqctl cluster up --layout")]
    assert up, "the page shows how to start a cluster"
    ok(*shlex.split(up[0].command)[1:], *c.up_args, timeout=120)
    try:
        c.consumers()
        yield c
    finally:
        c.close()
        down = [e for e in examples(DOC.read_text()) if e.command.startswith("mqctl cluster down")
                and "--purge" in e.command]
        r = run_mqctl(*shlex.split(down[0].command.replace("[", "").replace("]", ""))[1:], "--dir", str(c.dir),
                      timeout=90)
        assert r.returncode == 0, r.stderr
        left = sorted(p.name for p in c.dir.iterdir()) if c.dir.exists() else []
        assert not c.dir.exists(), f"cluster down --purge left {left}"


def _watch(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """An example with --watch: until its first round is drawn, then Ctrl-C (exit 0, as the page says)."""
    env = {**os.environ, "TZ": "UTC", "MQCTL_CONFIG": os.devnull}
    with subprocess.Popen([*mqctl_cmd(), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env, cwd=cwd) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        return proc.returncode, first + out, err


#: the page's controller examples need a 5.x controller-mode group, which the page's cluster is not;
#: tests/controller/test_cli.py runs each of those commands against one (held below)
CONTROLLER = "mqctl controller "


def test_the_controller_examples_run_in_the_controller_tests():
    text = (ROOT / "tests" / "controller" / "test_cli.py").read_text()
    shown = [ex for ex in examples(DOC.read_text()) if ex.command.startswith(CONTROLLER)]
    assert shown
    for ex in shown:
        assert f'"controller", "{ex.command.split()[2]}"' in text, f"docs/cli.md:{ex.line}: {ex.command}"


def test_every_example_runs(cluster):
    failures = []
    for ex in examples(DOC.read_text()):
        if ex.command.startswith(CONTROLLER):
            continue  # test_the_controller_examples_run_in_the_controller_tests
        argv = cluster.argv(ex.command)
        if argv is None:
            continue  # the cluster's own up and down: the fixture runs them as the page says
        if "--watch" in argv:
            rc, out, err = _watch(argv, cluster.root)
        else:
            env = {**os.environ, **ex.env, "TZ": "UTC", "MQCTL_CONFIG": os.devnull}
            env.pop("NAMESRV_ADDR", None)
            deadline = time.monotonic() + 60
            while True:
                done = subprocess.run([*mqctl_cmd(), *argv], capture_output=True, text=True, env=env, timeout=120,
                                      cwd=cluster.root)
                rc, out, err = done.returncode, done.stdout, done.stderr
                # ha verify right after the page's sends: a slave still copying them is 'behind'
                # (an ASYNC_MASTER answers before its slave has the bytes); wait for it to catch up
                if not (argv[2:4] == ["ha", "verify"] and rc == 1 and " behind" in out
                        and time.monotonic() < deadline):
                    break
                time.sleep(0.5)
        if rc != 0:
            failures.append(f"docs/cli.md:{ex.line}: {ex.command}: exit {rc}: {err.strip()[:300]}")
            continue
        if ex.header is not None and out.splitlines()[:1] and out.splitlines()[0].startswith("#"):
            got = out.splitlines()[0].split()
            if got != ex.header:
                failures.append(f"docs/cli.md:{ex.line}: {ex.command}: header {got} is not the page's {ex.header}")
        if argv[2:4] == ["message", "send"] and cluster.offset_id is None:
            cluster.offset_id = out.splitlines()[1].split()[4]
    assert not failures, "\n".join(failures)


def test_the_exit_code_examples_of_the_page(cluster):
    """The page's exit-code table shows two lines: a missing topic and a name server that is not there."""
    r = run_mqctl("-n", cluster.ns, "topic", "route", "X")
    assert r.returncode == 1 and r.stderr.startswith(f"error: TOPIC_NOT_EXIST(17) from {cluster.ns} to "
                                                     "GET_ROUTEINFO_BY_TOPIC: No topic route info in name server "
                                                     "for the topic: X")
    assert json.loads(ok("-n", cluster.ns, "-o", "json", "cluster", "list").stdout)["brokers"]
