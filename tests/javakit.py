# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The one harness for the real Java servers of ``../shared/javakit`` (RocketMQ 4.9.8 and 5.0.0).

Every test that runs a Java name server, broker, controller or ``mqadmin`` goes through this module:

* :class:`JavaServers` starts processes through the kit's own scripts (``bin/mq-namesrv``,
  ``bin/mq-broker``, ``bin/mq-namesrv-controller``), each in its own node dir under the test's temp
  dir, on free loopback ports. A broker needs three: ``listenPort``, ``listenPort-2`` (the VIP
  channel) and ``listenPort+1`` (HA); :func:`free_broker_port` finds a port whose three are free,
  and a start that still loses a port to another process is retried on new ports.
* The start scripts return once the process has logged its "boot success" line.
  :meth:`JavaProcess.signal` sends SIGTERM/SIGKILL/SIGSTOP/SIGCONT by pid (checked against the
  process's ``-Duser.home=NODE_DIR``, as ``bin/mq-stop`` does, so a reused pid is never hit);
  :meth:`JavaProcess.freeze`/:meth:`~JavaProcess.thaw` are the "frozen slave" of the 09 scenarios.
* Whatever happens in the test, every process a :class:`JavaServers` started is stopped when it
  closes (the fixtures close it at teardown; an ``atexit`` hook catches an interrupted session).
* :func:`mqadmin` runs Java's admin tool in the foreground and returns its output.

Fixtures (registered for the whole suite through ``pytest_plugins`` in ``tests/conftest.py``):

``javakit``
    the located kit (session); skips with the reason when ``../shared/javakit`` or ``java`` is absent.
``java_servers``
    a :class:`JavaServers` for one test (its processes stop at the test's end).
``java_servers_module``
    the same for a whole module, for scenarios that can share a JVM's start-up cost (a JVM start takes
    seconds on a shared 2-core machine).

A scenario that needs the kit and cannot find it is skipped with the reason, never silently passed;
suites that must fail closed check :func:`javakit_missing` themselves.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from wire.remoting import RemotingCommand

ROOT = Path(__file__).resolve().parents[1]
KIT = Path(os.environ.get("MQCTL_JAVAKIT", ROOT.parent / "shared" / "javakit"))
VERSIONS = ("4.9.8", "5.0.0")
#: the kit's own bound on a start (START_TIMEOUT, seconds); JVM starts are slow on a loaded machine
START_TIMEOUT = int(os.environ.get("MQCTL_JAVAKIT_START_TIMEOUT", "120"))
#: how long a SIGTERM may take before SIGKILL (RocketMQ's shutdown hooks take 5 to 15 s)
STOP_TIMEOUT = 30.0
#: how many times a start that lost one of its ports to another process is retried on new ports
PORT_RETRIES = 3
HOST = "127.0.0.1"

_dir_counter = itertools.count()
_live: set[JavaProcess] = set()
_live_lock = threading.Lock()


# ------------------------------------------------------------------------------------------ the kit

def javakit_missing() -> str | None:
    """Why the real Java servers cannot run here, or None when they can."""
    if not (KIT / "bin" / "mq-broker").exists():
        return f"{KIT} is absent: the Java interop tests need ../shared/javakit beside the checkout (CI has it)"
    if shutil.which(os.environ.get("JAVA", "java")) is None:
        return "the Java interop tests need `java` (OpenJDK 17) on PATH"
    for version in VERSIONS:
        if not (KIT / f"lib-{version}").is_dir():
            return f"{KIT}/lib-{version} is absent: the kit is incomplete"
    return None


def require_javakit() -> Path:
    """The kit's root, or skip the calling test with the reason."""
    reason = javakit_missing()
    if reason:
        pytest.skip(reason)
    return KIT


# ------------------------------------------------------------------------------------------ ports

def free_port() -> int:
    """A loopback port nothing listens on, below the kernel's ephemeral range
    (:func:`conformance.refcluster.free_port`)."""
    return free_ports(0)


def free_ports(*offsets: int) -> int:
    """A port ``p`` such that ``p + o`` is free for every offset ``o`` (``p`` itself when none)."""
    from conformance.refcluster import free_port as pick

    return pick(around=offsets)


def free_broker_port() -> int:
    """A ``listenPort`` whose VIP (port-2) and HA (port+1) ports are free as well."""
    return free_ports(-2, 0, 1)


# ------------------------------------------------------------------------------------------ processes

def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _stat(pid: int) -> tuple[str, int] | None:
    """The /proc state letter (R, S, T, Z, ...) and start time (clock ticks) of ``pid``, or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split(" ")
    return fields[0], int(fields[19])


def _stat_task(pid: int, tid: str) -> str | None:
    """The state letter of one thread of ``pid``, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split(" ", 1)[0]


class ServerPlaces:
    """Where a server process listens and keeps its store, the same for a Java and a reference one:
    its remoting address, the broker's VIP channel (port - 2) and HA port (port + 1), its store
    directories. Needs ``port``, ``node_dir`` and ``properties``."""

    port: int
    node_dir: Path
    properties: dict[str, str]

    @property
    def addr(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def vip_addr(self) -> str:
        return f"{HOST}:{self.port - 2}"

    @property
    def ha_addr(self) -> str:
        return f"{HOST}:{self.port + 1}"

    @property
    def store_dir(self) -> Path:
        return Path(self.properties.get("storePathRootDir", str(self.node_dir / "store")))

    @property
    def commitlog_dir(self) -> Path:
        return Path(self.properties.get("storePathCommitLog", str(self.store_dir / "commitlog")))


@dataclass(eq=False)
class JavaProcess(ServerPlaces):
    """One Java server the harness started: its role, version, node dir, pid and ports."""

    role: str  #: "namesrv" or "broker" (the kit's pid file name)
    version: str
    node_dir: Path
    pid: int
    port: int
    properties: dict[str, str]
    #: the controller's port, for a name server with the embedded controller
    controller_port: int | None = None
    ready_ms: int | None = None
    stopped: bool = field(default=False)
    #: the pid's start time, read once while the command line showed it is ours: a later pid with
    #: the same number has another start time (an exiting JVM's command line is already empty)
    start_ticks: int | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        stat = _stat(self.pid)
        if stat is not None and f"-Duser.home={self.node_dir}" in _cmdline(self.pid):
            self.start_ticks = stat[1]

    # -- addresses (and ServerPlaces')
    @property
    def controller_addr(self) -> str:
        assert self.controller_port is not None, f"{self.node_dir} runs no controller"
        return f"{HOST}:{self.controller_port}"

    @property
    def stdout_path(self) -> Path:
        return self.node_dir / f"{self.role}.stdout.log"

    def log_path(self, name: str = "broker.log") -> Path:
        """One of RocketMQ's own logs (``broker.log``, ``store.log``, ``namesrv.log``, ...)."""
        return self.node_dir / "logs" / "rocketmqlogs" / name

    # -- state
    @property
    def alive(self) -> bool:
        """Running (or stopped by SIGSTOP), and still the process we started. A JVM's main thread
        turns zombie before its other threads have finished exiting and closed the sockets, so the
        process counts as alive while any of its threads is not a zombie."""
        stat = _stat(self.pid)
        if stat is None or stat[1] != self.start_ticks:
            return False
        try:
            tasks = [t.name for t in Path(f"/proc/{self.pid}/task").iterdir()]
        except OSError:
            return False
        return any((_stat_task(self.pid, t) or "Z") not in ("Z", "X") for t in tasks)

    @property
    def frozen(self) -> bool:
        stat = _stat(self.pid)
        return stat is not None and stat[0] in ("T", "t") and self.alive

    def signal(self, sig: int) -> None:
        """Send ``sig`` to this process (only if it is still ours: a reused pid is never hit)."""
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def freeze(self) -> None:
        """SIGSTOP: the JVM keeps its sockets open and answers nothing (the 09-frozen scenario)."""
        self.signal(signal.SIGSTOP)
        self._wait(lambda: self.frozen or not self.alive, 10.0, "stop")

    def thaw(self) -> None:
        self.signal(signal.SIGCONT)
        self._wait(lambda: not self.frozen, 10.0, "continue")

    def kill(self) -> None:
        """SIGKILL (a crash): no shutdown hook runs, nothing is flushed."""
        self.stop(graceful=False)

    def stop(self, *, graceful: bool = True, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM and wait (SIGKILL after ``timeout``), or SIGKILL at once; idempotent."""
        if self.stopped:
            return
        if self.alive:
            if self.frozen:
                self.signal(signal.SIGCONT)  # a stopped JVM cannot run its shutdown hooks
            self.signal(signal.SIGTERM if graceful else signal.SIGKILL)
            deadline = time.monotonic() + (timeout if graceful else 10.0)
            while self.alive and time.monotonic() < deadline:
                time.sleep(0.1)
            if self.alive:
                self.signal(signal.SIGKILL)
                self._wait(lambda: not self.alive, 10.0, "die")
        self.stopped = True
        with contextlib.suppress(OSError):
            (self.node_dir / f"{self.role}.pid").unlink()
        with _live_lock:
            _live.discard(self)

    def _wait(self, cond: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.role} pid {self.pid} ({self.node_dir}) did not {what} in {timeout}s")
            time.sleep(0.02)

    def wait_log(self, pattern: str, *, name: str = "broker.log", timeout: float = 60.0) -> re.Match[str]:
        """Wait until RocketMQ's log ``name`` has a line matching ``pattern``; return the match."""
        rx = re.compile(pattern)
        path = self.log_path(name)
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError):
                m = rx.search(path.read_text(errors="replace"))
                if m:
                    return m
            if time.monotonic() > deadline:
                raise TimeoutError(f"no line matching {pattern!r} in {path} after {timeout}s")
            if not self.alive:
                raise RuntimeError(f"{self.role} pid {self.pid} died; see {self.stdout_path}")
            time.sleep(0.2)

    def ask(self, request: RemotingCommand, *, timeout: float = 10.0) -> RemotingCommand:
        """One blocking request/response on a fresh connection (:func:`ask`)."""
        return ask(self.addr, request, timeout=timeout)

    def wait_admin_ready(self, request: Callable[[], object] | None = None, *,
                         timeout: float = 30.0) -> object:
        """Wait until the broker answers GET_BROKER_RUNTIME_INFO (28) without failing; return that answer.

        The Java store samples its put statistics once a second from start; until the first sample a
        runtime-info request fails with ``java.util.NoSuchElementException`` (``LinkedList.getLast``
        in StoreStatsService). ``request`` builds the request (to sign it for a broker with ACL on).
        """
        from wire.remoting import RemotingCommand

        build = request or (lambda: RemotingCommand.request(28))
        deadline = time.monotonic() + timeout
        while True:
            reply = self.ask(build())
            assert isinstance(reply, RemotingCommand)
            if not (reply.code == 1 and "NoSuchElementException" in (reply.remark or "")):
                return reply
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.role} {self.addr} still fails runtime info after {timeout}s: "
                                   f"{reply.remark}")
            time.sleep(0.2)

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.stdout_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def ask(addr: str, request: RemotingCommand, *, timeout: float = 10.0) -> RemotingCommand:
    """One blocking request/response with any server at ``host:port`` (ours or Java's) on a fresh
    connection."""
    from wire.remoting import decode_command, encode_command

    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(encode_command(request))
        head = _recv_exact(sock, 4)
        return decode_command(head + _recv_exact(sock, int.from_bytes(head, "big")))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(data)} of {n} bytes")
        data += chunk
    return bytes(data)


def _stop_leftovers() -> None:
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.stop(graceful=False)


atexit.register(_stop_leftovers)


class JavaStartError(RuntimeError):
    pass


class JavaServers:
    """Starts Java servers under ``base`` and stops every one of them at :meth:`close`."""

    def __init__(self, base: Path) -> None:
        self.kit = require_javakit()
        self.base = Path(base)
        self.base.mkdir(parents=True, exist_ok=True)
        self.processes: list[JavaProcess] = []

    # -- lifecycle
    def __enter__(self) -> JavaServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every process started here (brokers first, then name servers); never raises."""
        errors = []
        for proc in sorted(self.processes, key=lambda p: p.role == "namesrv"):
            try:
                proc.stop(graceful=False)
            except Exception as exc:  # keep stopping the others
                errors.append(f"{proc.node_dir}: {exc}")
        if errors:
            raise RuntimeError("could not stop: " + "; ".join(errors))

    def node_dir(self, name: str) -> Path:
        path = self.base / f"{name}-{next(_dir_counter)}"
        path.mkdir(parents=True)
        return path

    # -- starting
    def _launch(self, script: str, version: str, role: str, node: Path, props: dict[str, str],
                controller_port: int | None) -> tuple[JavaProcess | None, str]:
        """Run one start script on ``node``; the process (None if it left no pid) and any failure text."""
        conf = node / "input.properties"
        conf.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        t0 = time.monotonic()
        done = subprocess.run([str(self.kit / "bin" / script), version, str(node), "-c", str(conf)],
                              capture_output=True, text=True, timeout=START_TIMEOUT + 30,
                              env={**os.environ, "START_TIMEOUT": str(START_TIMEOUT)})
        pid_file = node / f"{role}.pid"
        if not pid_file.exists():
            return None, f"{script} {version} {node} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}"
        proc = JavaProcess(role, version, node, int(pid_file.read_text().strip()), int(props["listenPort"]),
                           props, controller_port, int((time.monotonic() - t0) * 1000))
        with _live_lock:
            _live.add(proc)
        self.processes.append(proc)
        if done.returncode == 0 and proc.alive:
            return proc, ""
        output = done.stdout + done.stderr + proc.tail(60)
        proc.stop(graceful=False)
        return None, f"{script} {version} {node} failed (exit {done.returncode}):\n{output[-4000:]}"

    def _start(self, script: str, version: str, role: str, name: str, props: Mapping[str, str],
               pick_ports: Callable[[], dict[str, str]]) -> JavaProcess:
        if version not in VERSIONS:
            raise ValueError(f"version must be one of {VERSIONS}, not {version!r}")
        failure = ""
        for _attempt in range(PORT_RETRIES):
            node = self.node_dir(name)
            ports = pick_ports()
            controller = ports.pop("controller_port", None)
            merged = {**{k: v.replace("@NODE_DIR@", str(node)) for k, v in props.items()}, **ports}
            proc, failure = self._launch(script, version, role, node, merged,
                                         None if controller is None else int(controller))
            if proc is not None:
                return proc
            if "Address already in use" not in failure and "BindException" not in failure:
                break
        raise JavaStartError(failure)

    def namesrv(self, version: str = "4.9.8", **props: str) -> JavaProcess:
        """A name server on a free port; ``props`` are NamesrvConfig/NettyServerConfig keys."""
        return self._start("mq-namesrv", version, "namesrv", "namesrv", props,
                           lambda: {"listenPort": str(free_port())})

    def namesrv_controller(self, version: str = "5.0.0", **props: str) -> JavaProcess:
        """A 5.0.0 name server with the embedded DLedger controller (a one-node group ``n0``)."""

        def ports() -> dict[str, str]:
            controller = free_port()
            return {"listenPort": str(free_port()), "controller_port": str(controller),
                    "controllerDLegerPeers": f"n0-{HOST}:{controller}"}

        defaults = {"enableControllerInNamesrv": "true", "controllerDLegerGroup": "group1",
                    "controllerDLegerSelfId": "n0", "controllerStorePath": "@NODE_DIR@/DledgerController"}
        return self._start("mq-namesrv-controller", version, "namesrv", "namesrv-controller",
                           {**defaults, **props}, ports)

    def broker(self, version: str = "4.9.8", *, namesrv: JavaProcess | str | None = None,
               cluster: str = "DefaultCluster", name: str = "broker-a", broker_id: int = 0,
               role: str = "ASYNC_MASTER", commitlog_file_size: int = 10 * 1024 * 1024,
               **props: str) -> JavaProcess:
        """A broker on free ports (listenPort, -2 VIP, +1 HA); ``props`` are any broker keys.

        ``role`` is ``brokerRole`` (ASYNC_MASTER, SYNC_MASTER, SLAVE); a SLAVE gets brokerId 1
        unless ``broker_id`` says otherwise. Stores go under the node dir; 10 MiB CommitLog files by
        default, as in the kit's examples (``commitlog_file_size=1 << 30`` for RocketMQ's default).
        """
        if role == "SLAVE" and broker_id == 0:
            broker_id = 1
        base = {
            "brokerClusterName": cluster, "brokerName": name, "brokerId": str(broker_id),
            "brokerRole": role, "flushDiskType": "ASYNC_FLUSH",
            "brokerIP1": HOST, "brokerIP2": HOST,
            "storePathRootDir": "@NODE_DIR@/store", "storePathCommitLog": "@NODE_DIR@/store/commitlog",
            "mappedFileSizeCommitLog": str(commitlog_file_size), "autoCreateTopicEnable": "true",
        }
        if namesrv is not None:
            base["namesrvAddr"] = namesrv if isinstance(namesrv, str) else namesrv.addr
        merged = {**base, **{k: str(v) for k, v in props.items()}}
        fixed = merged.pop("listenPort", None)
        proc = self._start("mq-broker", version, "broker", f"broker-{name}-{broker_id}", merged,
                           lambda: {"listenPort": fixed or str(free_broker_port())})
        if merged.get("aclEnable", "false").lower() != "true":
            proc.wait_admin_ready()  # a broker with ACL on: the caller waits with a signed request
        return proc

    def restart(self, proc: JavaProcess, *, graceful: bool = True, **props: str) -> JavaProcess:
        """Stop ``proc`` and start it again on the same node dir, ports and store (``props`` override)."""
        proc.stop(graceful=graceful)
        script = "mq-namesrv-controller" if proc.controller_port is not None else \
            {"namesrv": "mq-namesrv", "broker": "mq-broker"}[proc.role]
        merged = {**proc.properties, **{k: str(v) for k, v in props.items()}}
        again, failure = self._launch(script, proc.version, proc.role, proc.node_dir, merged, proc.controller_port)
        if again is None:
            raise JavaStartError(failure)
        if again.role == "broker" and merged.get("aclEnable", "false").lower() != "true":
            again.wait_admin_ready()
        return again

    def mqadmin(self, version: str, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        """Run Java's ``mqadmin VERSION ARGS...``; its logs go under this harness's base dir."""
        return mqadmin(version, *args, timeout=timeout, home=self.base / "mqadmin-home")


def mqadmin(version: str, *args: str, timeout: float = 120.0,
            home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run Java's admin tool (``bin/mqadmin VERSION ARGS...``) in the foreground; skip without the kit.

    mqadmin's exit code is 0 even when a command fails (it prints the error), so callers check the
    output. ``home`` is its ``user.home`` (logs); the kit's default is a per-user dir under /tmp.
    """
    kit = require_javakit()
    env = dict(os.environ)
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        env["MQADMIN_HOME"] = str(home)
    return subprocess.run([str(kit / "bin" / "mqadmin"), version, *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


# ------------------------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="session")
def javakit() -> Path:
    """The kit's root; skips the test with the reason when the kit or java is absent."""
    return require_javakit()


@pytest.fixture
def java_servers(javakit: Path, tmp_path: Path) -> Iterator[JavaServers]:
    """Java servers for one test; every process it started is stopped at the test's end."""
    servers = JavaServers(tmp_path / "javakit")
    try:
        yield servers
    finally:
        servers.close()


@pytest.fixture(scope="module")
def java_servers_module(javakit: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaServers]:
    """Java servers shared by a module's tests (stopped after its last test)."""
    servers = JavaServers(tmp_path_factory.mktemp("javakit"))
    try:
        yield servers
    finally:
        servers.close()
