# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Our reference cluster in a temporary directory: the suite's default target.

:class:`ReferenceCluster` starts a name server, a master (``broker-a``, brokerId 0, ASYNC_MASTER
unless ``master_role`` says SYNC_MASTER) and, unless told otherwise, its slave (brokerId 1), each as
its own process (``python -m conformance._refserver``) on free loopback ports, with RocketMQ's own
properties files and stores in the directory. It returns once the name server lists every broker,
and stops every process it started when it closes (SIGTERM, then SIGKILL), whatever happened; the
directory goes too, unless it was given or ``keep`` is set.
"""

from __future__ import annotations

import contextlib
import os
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


def free_port(*, around: tuple[int, ...] = ()) -> int:
    """A free loopback port ``p`` such that ``p + d`` is free too for every ``d`` in ``around``."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind((HOST, 0))
            port = int(s.getsockname()[1])
        if all(_bindable(port + d) for d in around):
            return port
    raise ReferenceClusterError("no free loopback port found")


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
                 master_role: str = "ASYNC_MASTER", start_timeout: float = 60.0) -> None:
        if master_role not in ("ASYNC_MASTER", "SYNC_MASTER"):
            raise ValueError(f"master_role must be ASYNC_MASTER or SYNC_MASTER, not {master_role!r}")
        self._given = directory is not None
        self.directory = Path(directory) if directory is not None else None
        self.slave = slave
        self.master_role = master_role
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

    def _broker(self, name: str, broker_id: int, namesrv: str) -> tuple[str, dict[str, str]]:
        assert self.directory is not None
        port = free_port(around=(-2, 1))
        store = self.directory / f"store-{name}-{broker_id}"
        values = {
            "brokerClusterName": "DefaultCluster", "brokerName": name, "brokerId": str(broker_id),
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
            ns_port = free_port()
            ns_addr = f"{HOST}:{ns_port}"
            ns_conf = self._write("namesrv", {
                "listenPort": str(ns_port), "kvConfigPath": str(self.directory / "namesrv" / "kvConfig.json"),
                "configStorePath": str(self.directory / "namesrv" / "namesrv.properties")})
            self._spawn("namesrv", "namesrv", ns_conf, ns_addr)
            self._wait(lambda: sync_request(ns_addr, RequestCode.GET_BROKER_CLUSTER_INFO) is not None,
                       "the name server answers")
            members = [(0, *self._broker("broker-a", 0, ns_addr))]
            if self.slave:
                members.append((1, *self._broker("broker-a", 1, ns_addr)))
            for broker_id, addr, values in members:
                self._spawn(f"broker-a-{broker_id}", "broker", self._write(f"broker-a-{broker_id}", values),
                            addr)
            wanted = {addr for _, addr, _ in members}
            self._wait(lambda: wanted <= _listed(ns_addr), "the name server lists every broker")
        except BaseException:
            self.stop()
            raise
        self.target = Target(name="mqctl reference servers", namesrv=ns_addr, broker=members[0][1],
                             slave=members[1][1] if self.slave else None,
                             ha=f"{HOST}:{members[0][2]['haListenPort']}")
        return self.target

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


def _listed(ns_addr: str) -> set[str]:
    from wire.bodies import ClusterInfo

    resp = sync_request(ns_addr, RequestCode.GET_BROKER_CLUSTER_INFO)
    if resp is None or resp.code != 0 or not resp.body:
        return set()
    try:
        info = ClusterInfo.decode(resp.body)
    except WireError:
        return set()
    return {a for d in info.broker_addr_table.values() for a in d.broker_addrs.values()}
