# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The real-peer harness: reference servers as ``mqctl`` processes, and the two peer clients.

:class:`PeerCluster` (made by the ``peer_cluster`` fixture of ``conftest.py``) starts
``mqctl namesrv start`` and ``mqctl broker start`` on free loopback ports with a store under the
test's ``tmp_path``; the fixture stops it at the end of the test. Broker keys are RocketMQ's own
(``flushDiskType``, ``messageDelayLevel``, …) and reach the broker as ``--set KEY=VALUE``.

The peers run as processes too (:class:`Peer`): ``cpp_client.py`` with this interpreter (the C++
client from PyPI ``rocketmq``) and ``js_client.js`` with node (ali-ons from
``tests/peers/js/node_modules``). Each peer process gets its own ``HOME`` (the C++ client writes
its logs under ``$HOME/logs/rocketmq-cpp``); a test that needs a peer that is not installed is
skipped with the reason (``./scripts/bootstrap`` installs both).
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import connect
from wire.bodies import TopicRouteData
from wire.headers import (
    CreateTopicRequestHeader,
    GetRouteInfoRequestHeader,
    QueryConsumerOffsetRequestHeader,
    QueryMessageRequestHeader,
    ViewMessageRequestHeader,
    decode_response_header,
    request,
)
from wire.message import StoredMessage, decode_messages, decode_offset_msg_id

PEERS = Path(__file__).resolve().parent
ROOT = PEERS.parents[1]
ALIONS = PEERS / "js" / "node_modules" / "ali-ons"
KINDS = ("cpp", "js")
SERVER_START_TIMEOUT = 30.0

_counter = itertools.count()


# ------------------------------------------------------------------------------------------ peers

def peer_missing(kind: str) -> str | None:
    """Why the peer ``kind`` cannot run here, or None when it can."""
    if kind == "cpp":
        spec = importlib.util.find_spec("rocketmq")
        if spec is None or spec.origin is None:
            return "the C++ peer (PyPI rocketmq==0.4.4) is not installed: run ./scripts/bootstrap"
        if not (Path(spec.origin).parent / "librocketmq.so").exists():
            return "the installed PyPI rocketmq has no librocketmq.so (only the 0.4.4 wheel bundles it)"
        return None
    if shutil.which("node") is None:
        return "the ali-ons peer needs node (install Node.js >= 18, then ./scripts/bootstrap)"
    if not (ALIONS / "package.json").exists():
        return "ali-ons is not installed under tests/peers/js/node_modules: run ./scripts/bootstrap"
    return None


def require(*kinds: str) -> None:
    for kind in kinds:
        reason = peer_missing(kind)
        if reason:
            pytest.skip(reason)


class Peer:
    """One running driver process; its JSON stdout lines are collected as they come."""

    def __init__(self, kind: str, command: str, args: dict[str, Any], workdir: Path) -> None:
        self.kind = kind
        self.name = f"{kind}-{command}-{next(_counter)}"
        self.home = workdir / self.name
        self.home.mkdir(parents=True)
        argv = [sys.executable, str(PEERS / "cpp_client.py")] if kind == "cpp" else \
            [shutil.which("node") or "node", str(PEERS / "js_client.js")]
        argv.append(command)
        for key, value in args.items():
            option = f"--{key.replace('_', '-')}"
            if value is True and kind == "cpp":
                argv.append(option)  # argparse flags take no value
            elif value is not None and value is not False:
                argv += [option, str(value).lower() if value is True else str(value)]
        self.argv = argv
        self.records: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self.stderr_path = self.home / "stderr.txt"
        env = {**os.environ, "HOME": str(self.home), "ALIONS_PATH": str(ALIONS)}
        with self.stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=env, cwd=self.home)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with (self.home / "stdout.jsonl").open("wb") as copy:  # kept for a failed test's post-mortem
            for line in self.proc.stdout:
                copy.write(line)
                copy.flush()
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                with self._cond:
                    self.records.append(record)
                    self._cond.notify_all()
        self.proc.stdout.close()
        with self._cond:
            self._cond.notify_all()

    def describe(self) -> str:
        err = self.stderr_path.read_text(errors="replace")[-3000:] if self.stderr_path.exists() else ""
        return f"{self.name}: {' '.join(self.argv)}\nexit {self.proc.poll()}\nstderr tail:\n{err}"

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self.records):
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"condition not met within {timeout:g}s\n{self.describe()}")
                self._cond.wait(min(left, 0.5))

    def started(self, timeout: float = 30.0) -> Peer:
        self.wait_for(lambda rs: any(r["event"] == "started" for r in rs), timeout)
        return self

    def wait(self, timeout: float) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"did not finish within {timeout:g}s\n{self.describe()}") from None
        self._reader.join(5)
        return code

    def finish(self, timeout: float, codes: tuple[int, ...] = (0,)) -> Peer:
        code = self.wait(timeout)
        assert code in codes, self.describe()
        return self

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(5)

    def events(self, event: str) -> list[dict[str, Any]]:
        with self._cond:
            return [r for r in self.records if r["event"] == event]

    @property
    def sent(self) -> list[dict[str, Any]]:
        return self.events("sent")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.events("msg")

    def allocation(self, topic: str) -> set[int] | None:
        """The queues of ``topic`` this consumer read after its last rebalance (None: none yet).

        ali-ons: the driver's last ``allocated`` event. C++: the last rebalance of the topic in
        the client's log (a ``current topic is:<topic>`` line, then one ``allocate mq:`` line per
        queue it keeps).
        """
        if self.kind == "js":
            events = self.events("allocated")
            return set(events[-1]["queues"]) if events else None
        last: set[int] | None = None
        current: set[int] | None = None
        for line in self.cpp_log().splitlines():
            if "current topic is:" in line:
                current = set() if line.split("current topic is:", 1)[1].startswith(f"{topic}[") else None
                if current is not None:
                    last = current
            elif current is not None and f"allocate mq:MessageQueue [topic={topic}," in line:
                current.add(int(line.split("queueId=", 1)[1].split("]", 1)[0]))
        return last

    def cpp_log(self) -> str:
        """The C++ client's own log (``$HOME/logs/rocketmq-cpp/*``)."""
        return "".join(p.read_text(errors="replace") for p in sorted(self.home.glob("logs/rocketmq-cpp/*")))


# ---------------------------------------------------------------------------------------- servers

def mqctl_argv() -> list[str]:
    script = Path(sys.executable).with_name("mqctl")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from mqctl.app import main; sys.argv[0] = 'mqctl'; main()"]


class ServerProcess:
    """``mqctl namesrv start`` or ``mqctl broker start``, its stderr kept in a log file."""

    def __init__(self, argv: list[str], log: Path, home: Path, ready: re.Pattern[str]) -> None:
        self.argv = argv
        self.log = log
        offset = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                         env={**os.environ, "HOME": str(home)}, cwd=home)
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            text = log.read_bytes()[offset:].decode(errors="replace")
            found = ready.search(text)
            if found:
                self.port = int(found.group("port"))
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"{' '.join(argv)} did not start:\n{text[-3000:]}")
            time.sleep(0.05)

    def stop(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


NAMESRV_READY = re.compile(r"The Name Server boot success\. listening on [^\s]+:(?P<port>\d+)")
BROKER_READY = re.compile(r"The broker\[[^,\]]+, [^\]]+:(?P<port>\d+)\] boot success")


@dataclass
class PeerCluster:
    """A reference name server and broker running as processes for one test."""

    root: Path
    broker_keys: dict[str, str]
    namesrv_proc: ServerProcess | None = None
    broker_proc: ServerProcess | None = None
    broker_port: int = 0  #: 0 picks a free port at the first start; restarts keep the port
    namesrv_port: int = 0
    peers: list[Peer] = field(default_factory=list)

    @property
    def store(self) -> Path:
        return self.root / "store"

    @property
    def namesrv(self) -> str:
        assert self.namesrv_proc is not None
        return f"127.0.0.1:{self.namesrv_proc.port}"

    @property
    def broker(self) -> str:
        return f"127.0.0.1:{self.broker_port}"

    def start(self, *, broker: bool = True) -> PeerCluster:
        home = self.root / "servers"
        home.mkdir(parents=True, exist_ok=True)
        self.namesrv_proc = ServerProcess(
            [*mqctl_argv(), "namesrv", "start", "--listen", f"127.0.0.1:{self.namesrv_port}",
             "--set", f"kvConfigPath={self.root / 'namesrv' / 'kvConfig.json'}",
             "--set", f"configStorePath={self.root / 'namesrv' / 'namesrv.properties'}"],
            self.root / "namesrv.log", home, NAMESRV_READY)
        self.namesrv_port = self.namesrv_proc.port
        if broker:
            self.start_broker()
        return self

    def start_broker(self) -> None:
        """Start the broker; after the first start, on the same port and store (a restart)."""
        keys = {"brokerClusterName": "DefaultCluster", "brokerName": "broker-a", "brokerId": "0",
                "storePathRootDir": str(self.store), "namesrvAddr": self.namesrv, **self.broker_keys}
        argv = [*mqctl_argv(), "broker", "start", "--listen", f"127.0.0.1:{self.broker_port}"]
        for key, value in keys.items():
            argv += ["--set", f"{key}={value}"]
        self.broker_proc = ServerProcess(argv, self.root / "broker.log", self.root / "servers", BROKER_READY)
        self.broker_port = self.broker_proc.port

    def kill_broker(self) -> None:
        assert self.broker_proc is not None
        self.broker_proc.kill()

    def stop_broker(self) -> int:
        assert self.broker_proc is not None
        return self.broker_proc.stop()

    def broker_log(self) -> str:
        return (self.root / "broker.log").read_text(errors="replace")

    def stop(self) -> None:
        for peer in self.peers:
            peer.kill()
        for proc in (self.broker_proc, self.namesrv_proc):
            if proc is not None:
                proc.stop()

    # ---------------------------------------------------------------------------------- peers

    def cpp(self, command: str, **args: Any) -> Peer:
        return self._peer("cpp", command, args)

    def js(self, command: str, **args: Any) -> Peer:
        return self._peer("js", command, args)

    def peer(self, kind: str, command: str, **args: Any) -> Peer:
        return self._peer(kind, command, args)

    def _peer(self, kind: str, command: str, args: dict[str, Any]) -> Peer:
        require(kind)
        peer = Peer(kind, command, {"namesrv": self.namesrv, **args}, self.root / "peers")
        self.peers.append(peer)
        return peer

    # ------------------------------------------------------------------ requests through wire.aio

    def admin(self, cmd: RemotingCommand, timeout: float = 5.0, to: str | None = None) -> RemotingCommand:
        """One request to the broker (or to ``to``) on a fresh connection."""
        async def go() -> RemotingCommand:
            host, port = (to or self.broker).rsplit(":", 1)
            async with await connect(host, int(port)) as conn:
                return await conn.request(cmd, timeout)

        return asyncio.run(go())

    def route(self, topic: str) -> TopicRouteData | None:
        """The name server's route of ``topic`` (None: TOPIC_NOT_EXIST)."""
        answer = self.admin(request(RequestCode.GET_ROUTEINFO_BY_TOPIC, GetRouteInfoRequestHeader(topic=topic)),
                            to=self.namesrv)
        if answer.code == ResponseCode.TOPIC_NOT_EXIST:
            return None
        assert answer.code == ResponseCode.SUCCESS, answer
        return TopicRouteData.decode(answer.body or b"")

    def create_topic(self, topic: str, queues: int = 8) -> None:
        """UPDATE_AND_CREATE_TOPIC (the broker registers the topic before it answers)."""
        answer = self.admin(request(RequestCode.UPDATE_AND_CREATE_TOPIC, CreateTopicRequestHeader(
            topic=topic, default_topic="TBW102", read_queue_nums=queues, write_queue_nums=queues, perm=6,
            topic_filter_type="SINGLE_TAG")))
        assert answer.code == ResponseCode.SUCCESS, answer

    def query_by_key(self, topic: str, key: str) -> list[StoredMessage]:
        """QUERY_MESSAGE by key over the whole time range: the stored records found."""
        answer = self.admin(request(RequestCode.QUERY_MESSAGE, QueryMessageRequestHeader(
            topic=topic, key=key, max_num=32, begin_timestamp=0, end_timestamp=2**62)))
        if answer.code == ResponseCode.QUERY_NOT_FOUND:
            return []
        assert answer.code == ResponseCode.SUCCESS, answer
        return decode_messages(answer.body or b"")

    def view(self, offset_msg_id: str) -> StoredMessage:
        """VIEW_MESSAGE_BY_ID: the stored record an offset msgId points at."""
        offset = decode_offset_msg_id(offset_msg_id).offset
        answer = self.admin(request(RequestCode.VIEW_MESSAGE_BY_ID, ViewMessageRequestHeader(offset=offset)))
        assert answer.code == ResponseCode.SUCCESS, answer
        [record] = decode_messages(answer.body or b"")
        return record

    def committed_offset(self, topic: str, group: str, queue: int) -> int:
        """The broker's committed offset of a group on a queue (-1: none)."""
        answer = self.admin(request(RequestCode.QUERY_CONSUMER_OFFSET, QueryConsumerOffsetRequestHeader(
            topic=topic, queue_id=queue, consumer_group=group)))
        if answer.code != ResponseCode.SUCCESS:
            return -1
        header = decode_response_header(RequestCode.QUERY_CONSUMER_OFFSET, answer)
        return int(header.offset)  # type: ignore[attr-defined]
