# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A local reference cluster run as background processes: ``mqctl cluster up/down/status``.

``up`` writes the configuration of the chosen layout into a directory (``namesrv.properties`` and
one ``broker-x.properties`` per broker, in RocketMQ's own format, as the distribution's
``conf/2m-noslave`` files), starts a detached ``mqctl namesrv start`` and one ``mqctl broker start``
per broker (each in its own session, output in ``logs/``), records the processes in
``cluster.json``, and returns only when the name server answers and lists every broker, each of
which answers too. If anything fails on the way, whatever was started is stopped again.

``down`` sends SIGTERM to the recorded processes (brokers first, so that they unregister from a
running name server) and waits for each to exit; one that outlives the wait is killed. ``status``
says for each process whether it is alive and whether it answers.

The directory is shared with its owner: ``up`` writes a marker file (:data:`MARKER`) listing the
entries it makes in the directory (configs, ``logs``, ``store``, ``namesrv``, the state file) and
whether it made the directory itself, before it writes anything else. ``down --purge`` deletes
exactly those entries (and the directory, when mqctl made it and nothing else is left in it).
``up`` refuses a directory holding anything the marker does not list, unless forced; even then it
never writes over an entry of someone else's that has one of its own names.

The layouts are the distribution's own (``conf/2m-noslave``, ``conf/2m-2s-async``, ``conf/2m-2s-sync``)
with their names and ports: the name server on 9876, broker-a on 10911 (HA 10912), its slave
broker-a-s on 10921, broker-b on 10931 and broker-b-s on 10941 (each broker also takes its port − 2,
the VIP channel, and port + 1, HA). In the 2m-2s layouts the masters are ASYNC_MASTER or SYNC_MASTER
and each slave replicates its master. ``controller`` is the distribution's
``conf/controller/quick-start``: the name server with its embedded controller (on the name server's
port + 2, 9878), and three replicas of broker-c in controller mode (10911, 10921, 10931), whose
roles the controller decides. Ports and the listening address can be moved for tests and for
machines where those ports are taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from wire.admin.errors import AdminError, BadRequest

__all__ = [
    "LAYOUTS",
    "LAYOUT_HELP",
    "BrokerPlan",
    "LAYOUT_KEYS",
    "LocalCluster",
    "LocalClusterError",
    "LocalProcess",
    "cluster_dir",
    "cluster_down",
    "cluster_status",
    "cluster_up",
    "claim_directory",
    "plan",
    "process_freeze",
    "process_start",
    "process_stop",
    "process_thaw",
    "purge_directory",
    "slave_control",
]

STATE_FILE = "cluster.json"
#: lists what mqctl made in a cluster directory (and nothing else is ever deleted by --purge)
MARKER = ".mqctl-cluster"

@dataclass(frozen=True, slots=True)
class BrokerPlan:
    """One broker of a layout: process name, brokerName, brokerId, brokerRole, port offset."""

    name: str
    broker_name: str
    broker_id: int
    role: str
    offset: int
    #: a controller-mode replica (``enableControllerMode``): the controller decides role and id
    controller: bool = False


def _two_masters_two_slaves(role: str) -> tuple[BrokerPlan, ...]:
    return (BrokerPlan("broker-a", "broker-a", 0, role, 0),
            BrokerPlan("broker-a-s", "broker-a", 1, "SLAVE", 10),
            BrokerPlan("broker-b", "broker-b", 0, role, 20),
            BrokerPlan("broker-b-s", "broker-b", 1, "SLAVE", 30))


#: layout name -> its brokers (ports are offsets from ``broker_port``, as the official files have them)
LAYOUTS: dict[str, tuple[BrokerPlan, ...]] = {
    "single": (BrokerPlan("broker-a", "broker-a", 0, "ASYNC_MASTER", 0),),
    "2m-noslave": (BrokerPlan("broker-a", "broker-a", 0, "ASYNC_MASTER", 0),
                   BrokerPlan("broker-b", "broker-b", 0, "ASYNC_MASTER", 20)),
    "2m-2s-async": _two_masters_two_slaves("ASYNC_MASTER"),
    "2m-2s-sync": _two_masters_two_slaves("SYNC_MASTER"),
    "controller": tuple(BrokerPlan(f"broker-c-n{i}", "broker-c", -1, "SLAVE", 10 * i, controller=True)
                        for i in range(3)),
}
#: the embedded controller's port, from the name server's (9876 -> 9878, as in the quick start)
CONTROLLER_PORT_OFFSET = 2
#: what ``--layout`` offers, for the help text
LAYOUT_HELP = ("single: one name server and broker-a; 2m-noslave: broker-a and broker-b; "
               "2m-2s-async: broker-a and broker-b (ASYNC_MASTER), each with a slave; "
               "2m-2s-sync: the same with SYNC_MASTERs; controller: a name server with its embedded "
               "controller and three controller-mode replicas of broker-c.")


class LocalClusterError(AdminError):
    """The local cluster cannot be started, stopped or found."""


@dataclass(frozen=True, slots=True)
class LocalProcess:
    """One process of the local cluster."""

    name: str
    role: str
    addr: str
    pid: int | None
    #: ``answering``, ``running`` (alive, no answer), ``exited``, ``stopped``, ``killed``, ``planned``,
    #: ``frozen`` (SIGSTOP, :func:`process_freeze`)
    state: str
    log: str
    config: str
    ports: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Purge:
    """What ``down --purge`` deleted from the directory, and what it left there."""

    #: the entries mqctl made, deleted (names in the directory)
    removed: tuple[str, ...]
    #: the entries mqctl did not make, kept
    kept: tuple[str, ...]
    #: the directory itself was removed (mqctl made it and nothing else was left)
    dir_removed: bool


@dataclass(frozen=True, slots=True)
class LocalCluster:
    dir: str
    layout: str
    cluster_name: str
    namesrv_addr: str
    processes: tuple[LocalProcess, ...]
    #: every process alive and answering
    running: bool = False
    #: set by ``down --purge``
    purge: Purge | None = None


def cluster_dir(path: Path | str | None = None) -> Path:
    """``path``, or the default ``$XDG_DATA_HOME/mqctl/cluster``."""
    if path is not None:
        return Path(path).expanduser().resolve()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "mqctl" / "cluster"


def _broker_properties(b: BrokerPlan, cluster_name: str, host: str, port: int, namesrv_addr: str,
                       store: Path, controller_addr: str | None = None,
                       extra: Mapping[str, str] | None = None) -> str:
    values = {
        "brokerClusterName": cluster_name,
        "brokerName": b.broker_name,
        "brokerId": str(b.broker_id),
        "deleteWhen": "04",
        "fileReservedTime": "48",
        "brokerRole": b.role,
        "flushDiskType": "ASYNC_FLUSH",
        "namesrvAddr": namesrv_addr,
        "brokerIP1": host,
        "brokerIP2": host,
        "listenPort": str(port),
        "haListenPort": str(port + 1),
        "storePathRootDir": str(store),
        "storePathCommitLog": str(store / "commitlog"),
        "autoCreateTopicEnable": "true",
        "mappedFileSizeCommitLog": str(64 * 1024 * 1024),
    }
    if b.controller and controller_addr:
        values.update({"enableControllerMode": "true", "controllerAddr": controller_addr,
                       "allAckInSyncStateSet": "true",
                       "storePathEpochFile": str(store / "epochFileCheckpoint")})
    values.update(extra or {})
    return "".join(f"{k}={v}\n" for k, v in values.items())


#: the broker settings a layout owns (``--broker-set`` may not change them: the cluster's state,
#: its ports and its directory follow from them)
LAYOUT_KEYS = frozenset({"brokerClusterName", "brokerName", "brokerId", "brokerRole", "namesrvAddr",
                         "brokerIP1", "brokerIP2", "listenPort", "haListenPort", "storePathRootDir",
                         "storePathCommitLog", "enableControllerMode", "controllerAddr",
                         "storePathEpochFile"})


#: the addresses a process listening on every interface is reached at (and registered as)
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def advertised_host(host: str) -> str:
    """The address clients are given for processes listening on ``host``: ``host`` itself, or
    127.0.0.1 when that is a wildcard (a broker must not register as 0.0.0.0)."""
    return "127.0.0.1" if host in WILDCARDS else host


def _port_role(offset: int) -> str:
    """What the port ``offset`` from a process's own port is for (a broker's HA and VIP ports, the
    controller embedded in a name server)."""
    return {0: "port", 1: "HA port (listen port + 1)", -2: "VIP port (listen port - 2)",
            CONTROLLER_PORT_OFFSET: f"controller port (name server port + {CONTROLLER_PORT_OFFSET})"}[offset]


def plan(directory: Path, *, layout: str = "single", host: str = "127.0.0.1", namesrv_port: int = 9876,
         broker_port: int = 10911, cluster_name: str = "DefaultCluster") -> LocalCluster:
    """The processes a layout runs, with their addresses, ports and files (nothing is started).
    Every port a process will listen on (a broker's own, its HA port one above and its VIP port
    two below) must be within 1..65535 (:class:`BadRequest` names the option and the port)."""
    if layout not in LAYOUTS:
        raise BadRequest(f"unknown layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    if not 0 < namesrv_port < 65536:
        raise BadRequest(f"--namesrv-port {namesrv_port} is out of range (1-65535)")
    advertised = advertised_host(host)
    ns_addr = f"{advertised}:{namesrv_port}"
    ns_ports: tuple[int, ...] = (namesrv_port,)
    if _has_controller(layout):
        controller_port = namesrv_port + CONTROLLER_PORT_OFFSET
        if not 0 < controller_port < 65536:
            raise BadRequest(f"--namesrv-port {namesrv_port}: the {_port_role(CONTROLLER_PORT_OFFSET)} "
                             f"would be {controller_port}, out of range (1-65535)")
        ns_ports = (namesrv_port, controller_port)
    procs = [LocalProcess("namesrv", "namesrv", ns_addr, None, "planned",
                          str(directory / "logs" / "namesrv.log"),
                          str(directory / "namesrv.properties"), ns_ports)]
    for b in LAYOUTS[layout]:
        port = broker_port + b.offset
        label = "replica" if b.controller else "slave" if b.role == "SLAVE" else "master"
        ports = (port, port + 1, port - 2)
        for p, role in zip(ports, (0, 1, -2), strict=True):
            if not 0 < p < 65536:
                raise BadRequest(f"--broker-port {broker_port}: {b.name}'s {_port_role(role)} would be {p}, "
                                 "out of range (1-65535)")
        procs.append(LocalProcess(b.name, label, f"{advertised}:{port}", None,
                                  "planned", str(directory / "logs" / f"{b.name}.log"),
                                  str(directory / f"{b.name}.properties"), ports))
    return LocalCluster(str(directory), layout, cluster_name, ns_addr, tuple(procs))


def _has_controller(layout: str) -> bool:
    return any(b.controller for b in LAYOUTS.get(layout, ()))


# ---------------------------------------------------------------------- state and processes


def _load(directory: Path) -> LocalCluster | None:
    path = directory / STATE_FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        procs = tuple(LocalProcess(**{**p, "ports": tuple(p.get("ports", ()))}) for p in doc["processes"])
        return LocalCluster(doc["dir"], doc["layout"], doc["cluster_name"], doc["namesrv_addr"], procs)
    except (ValueError, KeyError, TypeError) as exc:
        raise LocalClusterError(f"{path}: not a cluster state file ({exc})") from None


def _save(cluster: LocalCluster) -> None:
    path = Path(cluster.dir) / STATE_FILE
    doc = asdict(cluster)
    doc.pop("running", None)
    doc.pop("purge", None)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def _alive(proc: LocalProcess) -> bool:
    """Whether the recorded pid is still this process (not a reused pid)."""
    if proc.pid is None:
        return False
    try:
        os.kill(proc.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    cmdline = Path(f"/proc/{proc.pid}/cmdline")
    if cmdline.exists():
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            return False
        # an empty command line: the process is still being set up by exec (ours, just spawned)
        if any(args) and not any(a.endswith(b"mqctl.app") for a in args):
            return False
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{proc.pid}/stat").read_text()
            if stat.rsplit(")", 1)[-1].split()[0] == "Z":
                return False
    return True


def _port_free(host: str, port: int) -> OSError | None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            return exc
    return None


def _tail(path: str, lines: int = 5) -> str:
    texts = []
    for p in (Path(path).with_suffix(".out"), Path(path)):
        with contextlib.suppress(OSError):
            texts += p.read_text(encoding="utf-8", errors="replace").splitlines()
    picked = [t for t in texts if t.strip()][-lines:]
    return " | ".join(picked) if picked else "no output"


#: the processes this one started, by pid, until reaped (a ``Popen`` dropped while its process
#: runs warns; a process that calls ``cluster up`` and later stops the cluster itself, as a test
#: does, keeps them here)
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _spawn(args: list[str], out_path: Path, cwd: Path) -> int:
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open(out_path, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "mqctl.app", *args], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True,
                                close_fds=True)
    _CHILDREN[proc.pid] = proc
    return proc.pid


def _reap(pid: int) -> None:
    child = _CHILDREN.get(pid)
    if child is not None:
        if child.poll() is not None:
            del _CHILDREN[pid]
        return
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _reap_exited() -> None:
    """Wait for every process this one started that has exited: one that another process stopped
    (``mqctl conformance replay --local-cluster`` moving a slave, then starting its own) is no
    longer in the cluster's file, and would stay a zombie with its Popen never waited for."""
    for pid, child in list(_CHILDREN.items()):
        if child.poll() is not None:
            del _CHILDREN[pid]


def _stop(proc: LocalProcess, wait: float) -> LocalProcess:
    _reap_exited()
    if not _alive(proc):
        return replace(proc, state="stopped")
    assert proc.pid is not None
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        _reap(proc.pid)
        if not _alive(proc):
            return replace(proc, state="stopped")
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)
    for _ in range(40):
        _reap(proc.pid)
        if not _alive(proc):
            break
        time.sleep(0.05)
    return replace(proc, state="killed")


# ---------------------------------------------------------------------- probing


async def _probe(cluster: LocalCluster, timeout: float) -> dict[str, bool]:
    """Which processes answer: the name server GET_BROKER_CLUSTER_INFO, a broker
    GET_BROKER_RUNTIME_INFO and its listing in the name server's cluster info."""
    from wire.admin.client import AdminClient
    from wire.admin.common import cluster_info
    from wire.codes import RequestCode
    from wire.errors import WireError

    answers: dict[str, bool] = {}
    async with AdminClient([cluster.namesrv_addr], timeout=timeout) as client:
        registered: set[str] = set()
        try:
            info = await cluster_info(client)
            answers["namesrv"] = True
            for data in info.broker_addr_table.values():
                registered.update(data.broker_addrs.values())
        except (WireError, AdminError):
            answers["namesrv"] = False

        async def broker(p: LocalProcess) -> bool:
            try:
                await client.call(p.addr, RequestCode.GET_BROKER_RUNTIME_INFO)
            except (WireError, AdminError):
                return False
            return p.addr in registered

        brokers = [p for p in cluster.processes if p.role != "namesrv"]
        for p, ok in zip(brokers, await asyncio.gather(*(broker(p) for p in brokers)), strict=True):
            answers[p.name] = ok
    return answers


def _with_states(cluster: LocalCluster, answers: dict[str, bool]) -> LocalCluster:
    procs = []
    for p in cluster.processes:
        if not _alive(p):
            state = "exited" if p.state not in ("stopped", "killed") else p.state
        else:
            state = "answering" if answers.get(p.name) else "running"
        procs.append(replace(p, state=state))
    running = bool(procs) and all(p.state == "answering" for p in procs)
    return replace(cluster, processes=tuple(procs), running=running)


# ---------------------------------------------------------------------- the directory and its marker


def _made_names(cluster: LocalCluster) -> set[str]:
    """The entries ``cluster_up`` makes directly in the cluster's directory. Every file or
    directory it writes lies under one of these names (a new one must be added here, or
    ``--purge`` leaves it behind)."""
    directory = Path(cluster.dir)
    names = {STATE_FILE, Path(STATE_FILE).with_suffix(".tmp").name, "logs", "store", "namesrv"}
    for p in cluster.processes:
        for path in (Path(p.config), Path(p.log)):
            if path.parent == directory:
                names.add(path.name)
        config = Path(p.config)
        if config.parent == directory:
            # a server rewrites its -c file after a configuration change (UPDATE_BROKER_CONFIG,
            # UPDATE_NAMESRV_CONFIG) through FILE.tmp, keeping the previous one as FILE.bak
            names.update({f"{config.name}.tmp", f"{config.name}.bak"})
    return names


def _read_marker(directory: Path) -> tuple[set[str], bool] | None:
    """The names the marker lists and whether mqctl made the directory, or ``None`` without one.
    Only plain names count: a marker cannot point outside its directory."""
    path = directory / MARKER
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        names = {str(n) for n in doc["paths"]}
        created = bool(doc.get("created_dir", False))
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise LocalClusterError(f"{path}: not an mqctl marker file ({exc})") from None
    return {n for n in names if n not in ("", ".", "..") and "/" not in n and "\\" not in n}, created


def _write_marker(directory: Path, names: set[str], created: bool) -> None:
    doc = {"made_by": "mqctl", "created_dir": created, "paths": sorted(names)}
    tmp = directory / f"{MARKER}.tmp"
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    tmp.replace(directory / MARKER)


def _listing(names: list[str], most: int = 5) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def claim_directory(cluster: LocalCluster, *, force: bool = False) -> None:
    """Make sure the cluster may use its directory, create it if needed, and record in the
    marker what mqctl will make there. A directory holding entries the marker does not list is
    refused (:class:`BadRequest`), unless ``force``; an entry of someone else's that has one of
    the names mqctl writes is refused even then."""
    directory = Path(cluster.dir)
    marked = _read_marker(directory)
    ours, created = marked if marked is not None else (set(), False)
    needed = _made_names(cluster)
    if directory.exists() and not directory.is_dir():
        raise BadRequest(f"--dir {directory}: not a directory")
    existing = ({p.name for p in directory.iterdir()} - {MARKER, f"{MARKER}.tmp"}
                if directory.is_dir() else None)
    if existing is None:
        created = True
    else:
        foreign = existing - ours
        clash = sorted(foreign & needed)
        if clash:
            raise BadRequest(f"--dir {directory}: {_listing(clash)} already there and not made by mqctl "
                             "(it would write over them); move them away or choose another directory")
        if foreign and not force:
            listed = _listing(sorted(foreign))
            raise BadRequest(f"--dir {directory} holds files mqctl did not make ({listed}); choose "
                             "an empty or new directory, or give --force to use it anyway "
                             "(mqctl never deletes them, not even with --purge)")
    directory.mkdir(parents=True, exist_ok=True)
    _write_marker(directory, ours | needed, created)


def purge_directory(directory: Path) -> Purge:
    """Delete what the marker lists (then the marker, and the directory when mqctl made it and
    it is empty); everything else stays."""
    marked = _read_marker(directory)
    if marked is None:
        if not directory.exists():
            return Purge((), (), False)
        raise LocalClusterError(f"not purged: {directory} was not made by mqctl (no {MARKER} in it); "
                                "nothing was deleted")
    names, created = marked
    removed = []
    for name in sorted(names):
        path = directory / name
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        else:
            continue
        removed.append(name)
    (directory / MARKER).unlink()
    kept = tuple(sorted(p.name for p in directory.iterdir()))
    dir_removed = False
    if created and not kept:
        directory.rmdir()
        dir_removed = True
    return Purge(tuple(removed), kept, dir_removed)


# ---------------------------------------------------------------------- operations


def cluster_up(directory: Path, *, layout: str = "single", host: str = "127.0.0.1",
               namesrv_port: int = 9876, broker_port: int = 10911,
               cluster_name: str = "DefaultCluster", wait: float = 20.0, force: bool = False,
               broker_config: Mapping[str, str] | None = None) -> LocalCluster:
    """Start the layout in ``directory`` and wait until every process answers. A directory
    holding files mqctl did not make is refused unless ``force`` (see :func:`claim_directory`).
    ``broker_config`` is added to every broker's configuration (not the keys of :data:`LAYOUT_KEYS`)."""
    owned = sorted(set(broker_config or {}) & LAYOUT_KEYS)
    if owned:
        raise BadRequest(f"--broker-set {owned[0]}: the layout sets it "
                         "(see --broker-port, --host, --cluster-name)")
    planned = plan(directory, layout=layout, host=host, namesrv_port=namesrv_port,
                   broker_port=broker_port, cluster_name=cluster_name)
    previous = _load(directory)
    if previous is not None:
        alive = [p for p in previous.processes if _alive(p)]
        if alive:
            raise LocalClusterError(
                f"a local cluster is already running from {directory} ("
                + ", ".join(f"{p.name} pid {p.pid}" for p in alive)
                + f"); stop it first with: mqctl cluster down --dir {directory}")
    for p in planned.processes:
        for i, port in enumerate(p.ports):
            busy = _port_free(host or "0.0.0.0", port)
            if busy is not None:
                role = "" if i == 0 else f" ({_port_role(port - p.ports[0])})"
                if busy.errno == errno.EADDRINUSE:
                    from .serving import port_holder

                    holder = port_holder(port)
                    why = "in use" + (f", by {holder}" if holder else "")
                else:
                    why = busy.strerror or str(busy)
                raise LocalClusterError(f"cannot start {p.name}: port {port}{role} on {host} is {why}")
    claim_directory(planned, force=force)
    (directory / "logs").mkdir(exist_ok=True)
    ns = planned.processes[0]
    ns_text = f"listenPort={namesrv_port}\nkvConfigPath={directory / 'namesrv' / 'kvConfig.json'}\n"
    controller_addr = None
    if _has_controller(layout):
        controller_addr = f"{advertised_host(host)}:{namesrv_port + CONTROLLER_PORT_OFFSET}"
        ns_text += (f"enableControllerInNamesrv=true\ncontrollerDLegerGroup=group1\n"
                    f"controllerDLegerPeers=n0-{controller_addr}\ncontrollerDLegerSelfId=n0\n"
                    f"controllerStorePath={directory / 'namesrv' / 'controller'}\n")
    Path(ns.config).write_text(ns_text, encoding="utf-8")
    plans = {b.name: b for b in LAYOUTS[layout]}
    for p in planned.processes[1:]:
        Path(p.config).write_text(_broker_properties(
            plans[p.name], cluster_name, advertised_host(host), p.ports[0], planned.namesrv_addr,
            directory / "store" / p.name, controller_addr, broker_config), encoding="utf-8")

    started: list[LocalProcess] = []
    cluster = planned
    try:
        for p in planned.processes:
            listen = f"{host}:{p.ports[0]}" if ":" not in host else f"[{host}]:{p.ports[0]}"
            cmd = [p.role if p.role == "namesrv" else "broker", "start", "--config", p.config,
                   "--listen", listen, "--log-file", p.log]
            pid = _spawn(cmd, Path(p.log).with_suffix(".out"), directory)
            started.append(replace(p, pid=pid, state="running"))
            cluster = replace(planned, processes=tuple(started) + planned.processes[len(started):])
            _save(cluster)
            _wait_for(cluster, p.name, wait)
        final = _with_states(cluster, asyncio.run(_probe(cluster, 2.0)))
    except BaseException:
        for p in reversed(started):
            _stop(p, 5.0)
        with contextlib.suppress(OSError):
            (directory / STATE_FILE).unlink()
        raise
    _save(final)
    return final


def _wait_for(cluster: LocalCluster, name: str, wait: float) -> None:
    deadline = time.monotonic() + wait
    proc = next(p for p in cluster.processes if p.name == name)
    probing = replace(cluster, processes=tuple(p for p in cluster.processes if p.pid is not None))
    while True:
        if proc.pid is not None:
            _reap(proc.pid)
        if not _alive(proc):
            raise LocalClusterError(f"{name} exited during start-up: {_tail(proc.log)}")
        answers = asyncio.run(_probe(probing, 1.0))
        if answers.get(name):
            return
        if time.monotonic() > deadline:
            raise LocalClusterError(f"{name} did not answer within {wait:g}s: {_tail(proc.log)}")
        time.sleep(0.1)


def cluster_down(directory: Path, *, wait: float = 15.0, purge: bool = False) -> LocalCluster:
    """Stop the processes recorded in ``directory`` (brokers first); with ``purge``, then delete
    what mqctl made there (:func:`purge_directory`). Where no cluster runs, nothing is stopped and
    the result has no processes."""
    cluster = _load(directory)
    if cluster is None:
        # nothing runs from here (never did, or already stopped): down is idempotent
        idle = LocalCluster(str(directory), "", "", "", ())
        return replace(idle, purge=purge_directory(directory)) if purge else idle
    stopped = {p.name: _stop(p, wait) for p in reversed(cluster.processes)}
    result = replace(cluster, processes=tuple(stopped[p.name] for p in cluster.processes), running=False)
    with contextlib.suppress(OSError):
        (directory / STATE_FILE).unlink()
    if purge:
        result = replace(result, purge=purge_directory(directory))
    return result


async def cluster_status(directory: Path, *, timeout: float = 2.0) -> LocalCluster:
    """Each recorded process: alive or not, answering or not."""
    cluster = _load(directory)
    if cluster is None:
        raise LocalClusterError(f"no local cluster in {directory} (no {STATE_FILE}); "
                                "start one with: mqctl cluster up")
    return _with_states(cluster, await _probe(cluster, timeout))


# ---------------------------------------------------------------------- one process at a time


def _process(directory: Path, name: str) -> tuple[LocalCluster, LocalProcess]:
    cluster = _load(directory)
    if cluster is None:
        raise LocalClusterError(f"no local cluster in {directory} (no {STATE_FILE}); "
                                "start one with: mqctl cluster up")
    for p in cluster.processes:
        if p.name == name:
            return cluster, p
    raise LocalClusterError(f"no process {name!r} in the cluster of {directory} "
                            f"(it has {', '.join(p.name for p in cluster.processes)})")


def _replaced(cluster: LocalCluster, proc: LocalProcess) -> LocalCluster:
    changed = replace(cluster, processes=tuple(proc if p.name == proc.name else p for p in cluster.processes))
    _save(changed)
    return changed


def _signal(proc: LocalProcess, sig: signal.Signals) -> None:
    if proc.pid is None or not _alive(proc):
        raise LocalClusterError(f"{proc.name} is not running")
    os.kill(proc.pid, sig)


def process_freeze(directory: Path, name: str) -> LocalProcess:
    """SIGSTOP one process: it keeps its connections open and answers nothing (a hung JVM, a
    paused VM), until :func:`process_thaw`."""
    cluster, proc = _process(directory, name)
    _signal(proc, signal.SIGSTOP)
    frozen = replace(proc, state="frozen")
    _replaced(cluster, frozen)
    return frozen


def process_thaw(directory: Path, name: str) -> LocalProcess:
    """SIGCONT a process :func:`process_freeze` stopped."""
    cluster, proc = _process(directory, name)
    _signal(proc, signal.SIGCONT)
    running = replace(proc, state="running")
    _replaced(cluster, running)
    return running


def process_stop(directory: Path, name: str, *, wait: float = 15.0) -> LocalProcess:
    """Stop one process (SIGTERM, SIGKILL after ``wait`` s; a frozen one is thawed first so that it
    shuts down cleanly); the others keep running and :func:`process_start` starts it again."""
    cluster, proc = _process(directory, name)
    if proc.pid is not None and _alive(proc):
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGCONT)
    stopped = _stop(proc, wait)
    _replaced(cluster, stopped)
    return stopped


def process_start(directory: Path, name: str, *, wait: float = 20.0) -> LocalProcess:
    """Start one stopped process of the cluster again, with its configuration, log and store, on
    the address it is known by, and wait until it answers."""
    cluster, proc = _process(directory, name)
    if _alive(proc):
        raise LocalClusterError(f"{name} is already running (pid {proc.pid})")
    host = proc.addr.rsplit(":", 1)[0].strip("[]")
    for port in proc.ports:
        busy = _port_free(host, port)
        if busy is not None:
            raise LocalClusterError(f"cannot start {name}: port {port} "
                                    f"({_port_role(port - proc.ports[0])}) is {busy.strerror or busy}")
    listen = f"{host}:{proc.ports[0]}" if ":" not in host else f"[{host}]:{proc.ports[0]}"
    cmd = [proc.role if proc.role == "namesrv" else "broker", "start", "--config", proc.config,
           "--listen", listen, "--log-file", proc.log]
    pid = _spawn(cmd, Path(proc.log).with_suffix(".out"), directory)
    started = replace(proc, pid=pid, state="running")
    cluster = _replaced(cluster, started)
    try:
        _wait_for(cluster, name, wait)
    except BaseException:
        _replaced(cluster, _stop(started, 5.0))
        raise
    return started


async def _ha_in_sync(master: str, timeout: float) -> int:
    """Wait until ``master`` counts a slave in sync (GET_BROKER_HA_STATUS); the count."""
    from wire.admin.client import AdminClient
    from wire.bodies import HARuntimeInfo
    from wire.codes import RequestCode, ResponseCode
    from wire.errors import WireError

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    seen = "no answer"
    async with AdminClient([master], timeout=5.0) as client:
        while loop.time() < end:
            try:
                r = await client.invoke(master, RequestCode.GET_BROKER_HA_STATUS)
                n = -1
                if r.code == ResponseCode.SUCCESS:
                    n = HARuntimeInfo.decode(r.body or b"{}").in_sync_slave_nums
                seen = f"{n} slave(s) in sync"
                if n >= 1:
                    return n
            except WireError as err:
                seen = str(err)
            await asyncio.sleep(0.2)
    raise LocalClusterError(f"the slave of {master} did not get in sync within {timeout:g}s ({seen})")


async def _unlisted(namesrv: str, addr: str, timeout: float) -> None:
    """Wait until the name server no longer lists ``addr`` (a stopped broker has unregistered)."""
    from wire.admin.client import AdminClient
    from wire.admin.common import cluster_info
    from wire.errors import WireError

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    async with AdminClient([namesrv], timeout=5.0) as client:
        while loop.time() < end:
            with contextlib.suppress(WireError):
                info = await cluster_info(client)
                if all(addr not in b.broker_addrs.values() for b in info.broker_addr_table.values()):
                    return
            await asyncio.sleep(0.2)
    raise LocalClusterError(f"the name server {namesrv} still lists {addr} after {timeout:g}s")


def slave_control(directory: Path, slave: str = "broker-a-s", *, wait: float = 60.0) -> Any:
    """An async ``control(state)`` for ``conformance.replay`` (its ``slave=``): puts the local
    cluster's ``slave`` process ``up`` (thawed or started again, then in sync with its master),
    ``frozen`` (SIGSTOP) or ``stopped`` (SIGTERM, then dropped by the name server), and returns a
    line saying what it did. :attr:`state` says where it left the slave, so that a caller can
    thaw it before stopping the cluster."""
    cluster, proc = _process(directory, slave)
    master_name = slave.removesuffix("-s")
    if master_name == slave or master_name not in {p.name for p in cluster.processes}:
        raise LocalClusterError(f"{slave} is not a slave of the layout (its master would be {master_name})")
    _, master = _process(directory, master_name)
    master_addr = master.addr

    class Control:
        state = "up" if _alive(proc) else "stopped"

        async def __call__(self, wanted: str) -> str:
            loop = asyncio.get_running_loop()
            before = self.state
            if before == "frozen" and wanted != "frozen":
                await loop.run_in_executor(None, process_thaw, directory, slave)
                self.state = "up"
            if wanted == "up":
                if before == "stopped":
                    await loop.run_in_executor(None, lambda: process_start(directory, slave, wait=wait))
                self.state = "up"
                in_sync = await _ha_in_sync(master_addr, wait)
                return f"{slave} up ({before} before), {in_sync} slave(s) in sync"
            if wanted == "frozen":
                if before != "up":
                    raise LocalClusterError(f"{slave} is {before}: only a running slave can be frozen")
                await loop.run_in_executor(None, process_freeze, directory, slave)
                self.state = "frozen"
                return f"{slave} frozen (SIGSTOP)"
            if wanted == "stopped":
                done = await loop.run_in_executor(None, lambda: process_stop(directory, slave, wait=wait))
                self.state = "stopped"
                await _unlisted(cluster.namesrv_addr, proc.addr, wait)
                how = "SIGTERM" if done.state == "stopped" else f"SIGKILL: SIGTERM left it running {wait:g}s"
                return f"{slave} stopped ({how}; the name server no longer lists it)"
            raise BadRequest(f"unknown slave state {wanted!r}: expected up, frozen or stopped")

    return Control()
