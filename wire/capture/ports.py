# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Which server port plays which role, and so which protocol a connection speaks.

The defaults are RocketMQ's own (name server 9876, broker 10911, its VIP channel 10909 = 10911 − 2
and HA listener 10912 = 10911 + 1; ``BrokerConfig``/``NettyServerConfig``/``MessageStoreConfig``),
the slave ports of a master/slave pair on one host (10921/10919/10922), and those of the 5.0.0
controller-mode set-up the project's reference captures use (name server 9886, controller 9878,
brokers 30911/31911 with their VIP and HA ports). ``--port ROLE=N`` adds or overrides one.
A port that is in no table is classified by sniffing the connection's first bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["DEFAULT_PORTS", "HA_ROLES", "ROLES", "PortRoles", "parse_port_overrides"]

#: role → protocol
ROLES: dict[str, str] = {
    "namesrv": "remoting",
    "controller": "remoting",
    "broker": "remoting",
    "vip": "remoting",
    "remoting": "remoting",
    "ha": "ha",
    "other": "other",
}
HA_ROLES = frozenset(r for r, p in ROLES.items() if p == "ha")

DEFAULT_PORTS: dict[int, str] = {
    9876: "namesrv",
    9886: "namesrv",
    9878: "controller",
    10911: "broker",
    10921: "broker",
    30911: "broker",
    31911: "broker",
    10909: "vip",
    10919: "vip",
    30909: "vip",
    31909: "vip",
    10912: "ha",
    10922: "ha",
    30912: "ha",
    31912: "ha",
}

_ALIASES = {"nameserver": "namesrv", "ns": "namesrv", "fast": "vip", "slave": "broker", "master": "broker",
            "ignore": "other"}


class PortRoles:
    """A port → role table with the defaults and any overrides."""

    __slots__ = ("_roles",)

    def __init__(self, overrides: Mapping[int, str] | None = None, *, defaults: bool = True) -> None:
        self._roles: dict[int, str] = dict(DEFAULT_PORTS) if defaults else {}
        for port, role in (overrides or {}).items():
            self._roles[int(port)] = _role(role)

    def role(self, port: int) -> str | None:
        return self._roles.get(port)

    def protocol(self, port: int) -> str | None:
        role = self._roles.get(port)
        return None if role is None else ROLES[role]

    def is_server(self, port: int) -> bool:
        return port in self._roles

    def sender_is_client(self, sport: int, dport: int) -> bool:
        """Who opened a connection whose handshake was not captured: the side not on a server port,
        else the side on the higher (ephemeral) port."""
        s, d = sport in self._roles, dport in self._roles
        if s != d:
            return d
        return sport > dport if sport != dport else True

    def ports(self, roles: Iterable[str] | None = None) -> list[int]:
        wanted = None if roles is None else {_role(r) for r in roles}
        return sorted(p for p, r in self._roles.items() if wanted is None or r in wanted)

    def items(self) -> list[tuple[int, str]]:
        return sorted(self._roles.items())


def _role(name: str) -> str:
    role = _ALIASES.get(name.strip().lower(), name.strip().lower())
    if role not in ROLES:
        raise ValueError(f"unknown port role {name!r} (roles: {', '.join(ROLES)})")
    return role


def parse_port_overrides(specs: Iterable[str]) -> dict[int, str]:
    """``["ha=20912", "namesrv=19876,29876"]`` → ``{20912: "ha", 19876: "namesrv", 29876: "namesrv"}``.

    Raises :class:`ValueError` with a one-line reason for a malformed item.
    """
    out: dict[int, str] = {}
    for spec in specs:
        role, sep, ports = spec.partition("=")
        if not sep or not role.strip() or not ports.strip():
            raise ValueError(f"--port {spec!r}: expected ROLE=PORT[,PORT...], e.g. namesrv=9876")
        r = _role(role)
        for p in ports.split(","):
            p = p.strip()
            if not p.isdigit() or not 0 < int(p) < 65536:
                raise ValueError(f"--port {spec!r}: {p!r} is not a port number (1-65535)")
            out[int(p)] = r
    return out
