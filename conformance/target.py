# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What is graded: a target's addresses, its profile, and what the suite learns about it first.

A :class:`Target` names up to five addresses (``namesrv``, ``broker``, ``slave``, ``ha``,
``controller``). Only the name server is needed; :func:`discover` fills in the rest the way an
operator would find them, and says how in ``notes``:

* ``broker``/``slave``: from the name server's cluster info, the master (brokerId 0) and the first
  slave of the first broker name in the first cluster (in name order), unless given;
* ``cluster``/``broker_name``: from the cluster info, else the broker's own configuration;
* ``ha``: the broker's ``brokerIP2`` and ``haListenPort`` from its configuration (GET_BROKER_CONFIG),
  else the broker's port + 1 (RocketMQ's default ``haListenPort``);
* ``controller``: the broker's ``controllerAddr`` when it runs in controller mode (5.x);
* ``profile``: ``5.0`` when the servers answer with a version of V5_0_0 (413) or later, else ``4.9``.

Discovery never fails: what it cannot find stays ``None`` and the cases that need it do not run
(outcome ``not-run``, with the reason); an unreachable name server is left for the cases to fail on.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from typing import Any

from wire import MQVersion, RemotingCommand, RequestCode, WireError
from wire.aio import connect, split_addr

from .model import PROFILES, ROLES

__all__ = ["Target", "discover", "profile_of_version"]


@dataclass(frozen=True)
class Target:
    """A set of servers to grade."""

    name: str = "target"
    namesrv: str | None = None
    broker: str | None = None
    slave: str | None = None
    ha: str | None = None
    controller: str | None = None
    #: ``4.9`` or ``5.0``; ``None``: found by :func:`discover`
    profile: str | None = None
    #: learnt by :func:`discover`
    cluster: str | None = None
    broker_name: str | None = None
    #: the ``version`` field the servers answer with
    server_version: int | None = None
    #: the broker's configuration as GET_BROKER_CONFIG reported it
    broker_config: dict[str, str] = field(default_factory=dict)
    #: how each address was found, for the report
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.profile is not None and self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {', '.join(PROFILES)}, not {self.profile!r}")
        for role in ROLES:
            addr = getattr(self, role)
            if addr is not None:
                split_addr(addr)  # a ConnectError naming the bad address

    def addr(self, role: str) -> str | None:
        if role not in ROLES:
            raise KeyError(role)
        return getattr(self, role)  # type: ignore[no-any-return]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "profile": self.profile, "server_version": self.server_version,
                "version_name": _version_name(self.server_version),
                **{role: getattr(self, role) for role in ROLES},
                "cluster": self.cluster, "broker_name": self.broker_name, "notes": list(self.notes)}


def _version_name(version: int | None) -> str | None:
    if version is None:
        return None
    try:
        return MQVersion(version).name
    except ValueError:
        return str(version)


def profile_of_version(version: int) -> str:
    return "5.0" if version >= int(MQVersion.V5_0_0) else "4.9"


async def _ask(addr: str, code: int, timeout: float) -> RemotingCommand | None:
    host, port = split_addr(addr)
    try:
        conn = await connect(host, port, timeout=timeout, name="conformance")
    except WireError:
        return None
    try:
        return await conn.request(RemotingCommand.request(code), timeout)
    except WireError:
        return None
    finally:
        await conn.aclose()


async def discover(target: Target, *, timeout: float = 5.0) -> Target:
    """The target with what could be learnt about it (see the module docstring)."""
    from wire.bodies import ClusterInfo, decode_properties

    notes = list(target.notes)
    found: dict[str, Any] = {}
    version: int | None = None
    if target.namesrv:
        resp = await _ask(target.namesrv, RequestCode.GET_BROKER_CLUSTER_INFO, timeout)
        if resp is None:
            notes.append(f"name server {target.namesrv} did not answer GET_BROKER_CLUSTER_INFO")
        else:
            version = resp.version
            info = None
            if resp.code == 0 and resp.body:
                with contextlib.suppress(WireError):
                    info = ClusterInfo.decode(resp.body)
            if info is not None:
                found.update(_members(info, target, notes))
    broker = target.broker or found.get("broker")
    config: dict[str, str] = {}
    if broker:
        resp = await _ask(broker, RequestCode.GET_BROKER_CONFIG, timeout)
        if resp is not None:
            version = resp.version if version is None else version
            if resp.code == 0 and resp.body:
                with contextlib.suppress(WireError, ValueError):
                    config = dict(decode_properties(resp.body))
        if not target.ha:
            host, port = split_addr(broker)
            ha_port = config.get("haListenPort")
            if ha_port and ha_port.isdigit():
                ha_host = config.get("brokerIP2") or host
                found["ha"] = f"{ha_host}:{ha_port}"
                notes.append(f"ha {found['ha']}: the broker's brokerIP2 and haListenPort")
            else:
                found["ha"] = f"{host}:{port + 1}"
                notes.append(f"ha {found['ha']}: the broker's port + 1 (RocketMQ's default haListenPort)")
        if "broker_name" not in found and config.get("brokerName"):
            # the broker is reached through another address than it registers (a proxy, NAT)
            found["cluster"] = config.get("brokerClusterName")
            found["broker_name"] = config["brokerName"]
            notes.append(f"broker {broker} is {found['broker_name']} of {found['cluster']} by its "
                         "configuration")
        controller_mode = config.get("enableControllerMode") == "true" and config.get("controllerAddr")
        if not target.controller and controller_mode:
            found["controller"] = config["controllerAddr"].split(";")[0].strip()
            notes.append(f"controller {found['controller']}: the broker's controllerAddr")
    profile = target.profile
    if profile is None:
        profile = profile_of_version(version) if version is not None else "4.9"
        notes.append(f"profile {profile}: " + (f"the servers answer as {_version_name(version)}"
                                               if version is not None else "no server answered; the default"))
    return replace(target, **{k: v for k, v in found.items() if getattr(target, k, None) is None},
                   profile=profile, server_version=version, broker_config=config, notes=tuple(notes))


def _members(info: Any, target: Target, notes: list[str]) -> dict[str, Any]:
    """The broker, slave, cluster and broker name the cluster info gives for ``target``."""
    out: dict[str, Any] = {}
    names = [(cluster, name) for cluster in sorted(info.cluster_addr_table)
             for name in sorted(info.cluster_addr_table[cluster])]
    if target.broker:
        for cluster, name in names:
            data = info.broker_addr_table.get(name)
            if data is not None and target.broker in data.broker_addrs.values():
                out.update(cluster=cluster, broker_name=name)
                if not target.slave:
                    slaves = sorted((i, a) for i, a in data.broker_addrs.items() if i > 0)
                    if slaves:
                        out["slave"] = slaves[0][1]
                        notes.append(f"slave {slaves[0][1]}: brokerId {slaves[0][0]} of {name} in the "
                                     "cluster info")
                return out
        notes.append(f"broker {target.broker} is not in the name server's cluster info")
        return out
    for cluster, name in names:
        data = info.broker_addr_table.get(name)
        if data is None or 0 not in data.broker_addrs:
            continue
        out.update(cluster=cluster, broker_name=name, broker=data.broker_addrs[0])
        notes.append(f"broker {data.broker_addrs[0]}: the master of {name} ({cluster}) in the cluster info")
        if not target.slave:
            slaves = sorted((i, a) for i, a in data.broker_addrs.items() if i > 0)
            if slaves:
                out["slave"] = slaves[0][1]
                notes.append(f"slave {slaves[0][1]}: brokerId {slaves[0][0]} of {name} in the cluster info")
        return out
    if names:
        notes.append("no broker name of the cluster info has a master (brokerId 0)")
    else:
        notes.append("the name server lists no broker")
    return out
