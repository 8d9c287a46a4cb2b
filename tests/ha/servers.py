# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The reference servers as processes (``mqctl namesrv start`` / ``mqctl broker start``), with the
same shape as :class:`tests.javakit.JavaServers`: so that a scenario runs the same steps whichever
side is ours and whichever is Java's, and so that a slave can be frozen (SIGSTOP) or killed like a
JVM. Each broker gets a free port whose VIP (port - 2) and HA (port + 1) ports are free too; a
restart keeps the port and the store. Every process is stopped when the :class:`OurServers` closes.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.javakit import HOST, PORT_RETRIES, ServerPlaces, free_broker_port, free_port
from tests.peers.harness import BROKER_READY, NAMESRV_READY, ServerProcess, mqctl_argv

_counter = itertools.count()


@dataclass(eq=False)
class OurProcess(ServerPlaces):
    """One reference server process and what a test needs to know about it."""

    role: str  #: "namesrv" or "broker"
    node_dir: Path
    port: int
    properties: dict[str, str]
    proc: ServerProcess | None = None
    version: str = "mqctl"
    history: list[ServerProcess] = field(default_factory=list)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.proc.pid

    @property
    def log_path(self) -> Path:
        return self.node_dir / f"{self.role}.log"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.proc.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive:
            assert self.proc is not None
            self.proc.proc.send_signal(sig)

    def freeze(self) -> None:
        self.signal(signal.SIGSTOP)
        _wait(lambda: _state(self.pid) in ("T", "t") or not self.alive, f"{self.addr} did not stop")

    def thaw(self) -> None:
        self.signal(signal.SIGCONT)
        _wait(lambda: _state(self.pid) not in ("T", "t"), f"{self.addr} did not continue")

    def kill(self) -> None:
        if self.alive:
            self.signal(signal.SIGCONT)
            assert self.proc is not None
            self.proc.kill()

    def stop(self, *, graceful: bool = True) -> None:
        if not self.alive:
            return
        assert self.proc is not None
        if not graceful:
            self.proc.kill()
            return
        self.signal(signal.SIGCONT)
        self.proc.stop()


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split(" ", 1)[0]


def _wait(cond: object, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


class OurServers:
    """Reference name servers and brokers as processes under ``base``; all stopped at :meth:`close`."""

    version = "mqctl"

    def __init__(self, base: Path) -> None:
        self.base = Path(base)
        self.base.mkdir(parents=True, exist_ok=True)
        self.processes: list[OurProcess] = []

    def __enter__(self) -> OurServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for p in sorted(self.processes, key=lambda p: p.role == "namesrv"):
            with contextlib.suppress(Exception):
                p.stop(graceful=False)

    def _node(self, name: str) -> Path:
        d = self.base / f"{name}-{next(_counter)}"
        d.mkdir(parents=True)
        return d

    def namesrv(self, version: str = "mqctl", **props: str) -> OurProcess:
        node = self._node("namesrv")
        p = OurProcess("namesrv", node, free_port(), {"kvConfigPath": str(node / "kvConfig.json"),
                                                      "configStorePath": str(node / "namesrv.properties"),
                                                      **props})
        self.processes.append(p)
        self._start(p, free_port)
        return p

    def broker(self, version: str = "mqctl", *, namesrv: OurProcess | object | str | None = None,
               cluster: str = "DefaultCluster", name: str = "broker-a", broker_id: int = 0,
               role: str = "ASYNC_MASTER", commitlog_file_size: int = 10 * 1024 * 1024,
               **props: str) -> OurProcess:
        if role == "SLAVE" and broker_id == 0:
            broker_id = 1
        node = self._node(f"broker-{name}-{broker_id}")
        ns = namesrv if isinstance(namesrv, str) or namesrv is None else namesrv.addr  # type: ignore[attr-defined]
        values = {"brokerClusterName": cluster, "brokerName": name, "brokerId": str(broker_id),
                  "brokerRole": role, "flushDiskType": "ASYNC_FLUSH", "brokerIP1": HOST, "brokerIP2": HOST,
                  "storePathRootDir": str(node / "store"), "storePathCommitLog": str(node / "store" / "commitlog"),
                  "mappedFileSizeCommitLog": str(commitlog_file_size), "autoCreateTopicEnable": "true",
                  **({"namesrvAddr": ns} if ns else {}), **{k: str(v) for k, v in props.items()}}
        fixed = int(values.pop("listenPort", 0))
        p = OurProcess("broker", node, fixed or free_broker_port(), values)
        self.processes.append(p)
        self._start(p, None if fixed else free_broker_port)
        return p

    def _start(self, p: OurProcess, pick: Callable[[], int] | None) -> None:
        """Launch ``p``; when a port it was given is taken meanwhile, on new ports (``pick``)."""
        for attempt in range(PORT_RETRIES):
            try:
                self._launch(p)
                return
            except AssertionError as exc:
                taken = "Address already in use" in str(exc) or "is not available" in str(exc)
                if pick is None or not taken or attempt == PORT_RETRIES - 1:
                    raise
                p.port = pick()

    def _launch(self, p: OurProcess) -> None:
        if p.role == "namesrv":
            argv = [*mqctl_argv(), "namesrv", "start", "--listen", p.addr]
            ready = NAMESRV_READY
        else:
            argv = [*mqctl_argv(), "broker", "start", "--listen", p.addr]
            ready = BROKER_READY
        for key, value in p.properties.items():
            argv += ["--set", f"{key}={value}"]
        p.proc = ServerProcess(argv, p.log_path, p.node_dir, ready)
        p.history.append(p.proc)

    def restart(self, p: OurProcess, *, graceful: bool = True, **props: str) -> OurProcess:
        """Stop ``p`` and start it again on the same port and store."""
        p.stop(graceful=graceful)
        p.properties.update({k: str(v) for k, v in props.items()})
        self._launch(p)
        return p


@pytest.fixture
def our_servers(tmp_path: Path) -> Iterator[OurServers]:
    servers = OurServers(tmp_path / "ours")
    try:
        yield servers
    finally:
        servers.close()


@pytest.fixture(scope="module")
def our_servers_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OurServers]:
    servers = OurServers(tmp_path_factory.mktemp("ours"))
    try:
        yield servers
    finally:
        servers.close()
