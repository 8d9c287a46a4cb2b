# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Our reference cluster in a temporary directory: the suite's default target.

:class:`ReferenceCluster` starts a name server, a master (``broker-a``, brokerId 0, ASYNC_MASTER
unless ``master_role`` says SYNC_MASTER) and, unless told otherwise, its slave (brokerId 1), each as
its own process (``python -m conformance._refserver``) on free loopback ports, with RocketMQ's own
properties files and stores in the directory. It returns once the name server lists every broker,
and stops every process it started when it closes (SIGTERM, then SIGKILL), whatever happened; the
directory goes too, unless it was given or ``keep`` is set.

With ``controller=True`` it is the 5.x layout instead (the one the Java 5.0.0 captures were recorded
on): the name server runs the embedded controller (``enableControllerInNamesrv``), and two replicas of
``broker-c`` in cluster ``DefaultCluster5`` start in controller mode (``brokerId=-1``, role SLAVE),
so the controller elects the master; it returns once the name server lists a master and a slave.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from wire import FrameBuffer, RemotingCommand, RequestCode, WireError, decode_frame, encode_command

from .target import Target

__all__ = ["ReferenceCluster", "ReferenceClusterError", "free_port"]

HOST = "127.0.0.1"


class ReferenceClusterError(RuntimeError):
    """The reference cluster did not start (the message says which process and why)."""


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


_EPHEMERAL = _ephemeral_range()
_rng = random.Random()


def free_port(*, around: tuple[int, ...] = ()) -> int:
    """A free loopback port ``p`` such that ``p + d`` is free too for every ``d`` in ``around``.

    Picked below the kernel's ephemeral range: a port picked there can be taken by some process's
    outgoing connection between this check and the server's bind."""
    offsets = (0, *around)
    low, high = 10240, _EPHEMERAL[0] - 1
    if high - low < 1000:  # an unusual ephemeral range: above it instead
        low, high = _EPHEMERAL[1] + 1, 65000
    for _ in range(500):
        port = _rng.randint(low - min(offsets), high - max(offsets))
        if all(_bindable(port + d) for d in offsets):
            return port
    raise ReferenceClusterError(f"no free loopback ports {offsets} after 500 tries")


def _bindable(port: int) -> bool:
    if not 1024 < port < 65536:
        return False
    with socket.socket() as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def sync_request(addr: str, code: int, timeout: float = 2.0) -> RemotingCommand | None:
    """One request over a blocking socket (start-up checks run outside any event loop)."""
    host, _, port = addr.rpartition(":")
    cmd = RemotingCommand.request(code, opaque=1)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as s:
            s.sendall(encode_command(cmd))
            fb = FrameBuffer()
            while True:
                data = s.recv(65536)
                if not data:
                    return None
                fb.feed(data)
                frame = fb.next_frame()
                if frame is not None:
                    return decode_frame(frame)
    except (OSError, WireError):
        return None


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    addr: str

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class ReferenceCluster:
    """See the module docstring. Use as a context manager; :attr:`target` is what to grade."""

    def __init__(self, directory: str | Path | None = None, *, slave: bool = True, keep: bool = False,
                 master_role: str = "ASYNC_MASTER", controller: bool = False,
                 start_timeout: float = 60.0) -> None:
        if master_role not in ("ASYNC_MASTER", "SYNC_MASTER"):
            raise ValueError(f"master_role must be ASYNC_MASTER or SYNC_MASTER, not {master_role!r}")
        self._given = directory is not None
        self.directory = Path(directory) if directory is not None else None
        self.slave = slave
        self.master_role = master_role
        self.controller = controller
        self.keep = keep
        self.start_timeout = start_timeout
        self.procs: list[_Proc] = []
        self.target: Target | None = None

    def __enter__(self) -> ReferenceCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ start

    def _write(self, name: str, values: dict[str, str]) -> Path:
        assert self.directory is not None
        path = self.directory / f"{name}.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
        return path

    def _spawn(self, name: str, role: str, config: Path, addr: str) -> _Proc:
        assert self.directory is not None
        log = self.directory / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "HOME": str(self.directory)}
        with open(log, "ab") as out:
            popen = subprocess.Popen([sys.executable, "-m", "conformance._refserver", role, str(config)],
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                     cwd=self.directory, env=env, start_new_session=True)
        proc = _Proc(name, popen, log, addr)
        self.procs.append(proc)
        return proc

    def _broker(self, name: str, broker_id: int, namesrv: str, *, cluster: str = "DefaultCluster",
                store_name: str = "") -> tuple[str, dict[str, str]]:
        assert self.directory is not None
        port = free_port(around=(-2, 1))
        store = self.directory / f"store-{store_name or f'{name}-{broker_id}'}"
        values = {
            "brokerClusterName": cluster, "brokerName": name, "brokerId": str(broker_id),
            "brokerRole": "SLAVE" if broker_id else self.master_role, "flushDiskType": "ASYNC_FLUSH",
            "namesrvAddr": namesrv, "brokerIP1": HOST, "brokerIP2": HOST, "listenPort": str(port),
            "haListenPort": str(port + 1), "storePathRootDir": str(store),
            "storePathCommitLog": str(store / "commitlog"), "autoCreateTopicEnable": "true",
            "mappedFileSizeCommitLog": str(10 * 1024 * 1024),
        }
        return f"{HOST}:{port}", values

    def start(self) -> Target:
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="mqctl-conformance-"))
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            ns_port = free_port(around=(2,) if self.controller else ())
            ns_addr = f"{HOST}:{ns_port}"
            ns_values = {
                "listenPort": str(ns_port), "kvConfigPath": str(self.directory / "namesrv" / "kvConfig.json"),
                "configStorePath": str(self.directory / "namesrv" / "namesrv.properties")}
            controller_addr = f"{HOST}:{ns_port + 2}"
            if self.controller:
                ns_values.update({
                    "enableControllerInNamesrv": "true", "controllerDLegerGroup": "group1",
                    "controllerDLegerPeers": f"n0-{controller_addr}", "controllerDLegerSelfId": "n0",
                    "controllerStorePath": str(self.directory / "namesrv" / "controller")})
            self._spawn("namesrv", "namesrv", self._write("namesrv", ns_values), ns_addr)
            self._wait(lambda: sync_request(ns_addr, RequestCode.GET_BROKER_CLUSTER_INFO) is not None,
                       "the name server answers")
            if self.controller:
                members = [self._replica(n, ns_addr, controller_addr) for n in range(2)]
                names = [f"broker-c-n{n}" for n in range(2)]
            else:
                members = [self._broker("broker-a", 0, ns_addr)]
                if self.slave:
                    members.append(self._broker("broker-a", 1, ns_addr))
                names = [f"broker-a-{n}" for n in range(len(members))]
            for name, (addr, values) in zip(names, members, strict=True):
                self._spawn(name, "broker", self._write(name, values), addr)
            wanted = {addr for addr, _ in members}
            self._wait(lambda: _roles(ns_addr, wanted) == {0, 1} if self.controller
                       else wanted <= _listed(ns_addr), "the name server lists every broker")
        except BaseException:
            self.stop()
            raise
        if self.controller:
            ids = _ids(ns_addr)
            master = next(a for a in wanted if ids.get(a) == 0)
            slave = next(a for a in wanted if a != master)
            ha = dict(members)[master]["haListenPort"]
            # our servers answer with one version (V4_9_8) in every mode; in controller mode they are
            # graded by the 5.0 profile, as the Java 5.0.0 servers are
            self.target = Target(name="mqctl reference servers (controller mode)", namesrv=ns_addr,
                                 broker=master, slave=slave, controller=controller_addr, ha=f"{HOST}:{ha}",
                                 profile="5.0")
        else:
            self.target = Target(name="mqctl reference servers", namesrv=ns_addr, broker=members[0][0],
                                 slave=members[1][0] if self.slave else None,
                                 ha=f"{HOST}:{members[0][1]['haListenPort']}")
        return self.target

    def _replica(self, n: int, namesrv: str, controller_addr: str) -> tuple[str, dict[str, str]]:
        """A controller-mode replica of ``broker-c`` (the names of the Java 5.0.0 captures)."""
        assert self.directory is not None
        addr, values = self._broker("broker-c", -1, namesrv, cluster="DefaultCluster5",
                                    store_name=f"broker-c-n{n}")
        values.update({"brokerRole": "SLAVE", "enableControllerMode": "true",
                       "controllerAddr": controller_addr, "allAckInSyncStateSet": "true",
                       "storePathEpochFile": str(Path(values["storePathRootDir"]) / "epochFileCheckpoint")})
        return addr, values

    def _wait(self, ready: object, what: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            for proc in self.procs:
                if proc.popen.poll() is not None:
                    raise ReferenceClusterError(
                        f"reference {proc.name} exited with {proc.popen.returncode} before {what}:\n"
                        f"{proc.tail()}")
            if ready():  # type: ignore[operator]
                return
            if time.monotonic() > deadline:
                tails = "\n".join(f"--- {p.name} ({p.log})\n{p.tail(5)}" for p in self.procs)
                raise ReferenceClusterError(
                    f"timed out after {self.start_timeout:g} s waiting until {what}\n{tails}")
            time.sleep(0.1)

    # ------------------------------------------------------------------ stop

    def stop(self, timeout: float = 15.0) -> None:
        """Stop every process (brokers first), then remove the directory if it was ours."""
        for proc in sorted(self.procs, key=lambda p: p.name == "namesrv"):
            if proc.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.popen.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.popen.kill()
                proc.popen.wait(5)
        self.procs.clear()
        if self.directory is not None and not self._given and not self.keep:
            shutil.rmtree(self.directory, ignore_errors=True)


def _ids(ns_addr: str) -> dict[str, int]:
    """Every broker address the name server lists, with its brokerId."""
    from wire.bodies import ClusterInfo

    resp = sync_request(ns_addr, RequestCode.GET_BROKER_CLUSTER_INFO)
    if resp is None or resp.code != 0 or not resp.body:
        return {}
    try:
        info = ClusterInfo.decode(resp.body)
    except WireError:
        return {}
    return {a: int(i) for d in info.broker_addr_table.values() for i, a in d.broker_addrs.items()}


def _listed(ns_addr: str) -> set[str]:
    return set(_ids(ns_addr))


def _roles(ns_addr: str, addrs: set[str]) -> set[int]:
    """The brokerIds the name server lists for ``addrs`` ({0, 1}: a master and a slave); empty
    until it lists every one of them."""
    ids = _ids(ns_addr)
    return {min(ids[a], 1) for a in addrs} if addrs <= set(ids) else set()
