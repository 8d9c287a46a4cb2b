# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Argument helpers shared by the commands that start reference servers."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Protocol, Self, TypeVar

import typer

from .errors import UsageError


class ServerConfig(Protocol):
    """What :func:`load_server_config` needs of a reference server's configuration class."""

    unknown: list[str]

    def __init__(self, *, overrides: Mapping[str, str] | None = None) -> None: ...

    @classmethod
    def load(cls, path: str | Path, overrides: Mapping[str, str] | None = None) -> Self: ...


C = TypeVar("C", bound=ServerConfig)

#: the options both ``namesrv start`` and ``broker start`` take
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", help="KEY=VALUE overriding the config file; repeatable.")]
LogFileOpt = Annotated[Path | None, typer.Option(help="Also log to this file.")]


def parse_sets(items: list[str] | None, what: str = "--set") -> dict[str, str]:
    """``KEY=VALUE`` items; ``what`` names the option or argument they came from in errors."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{what} {item!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


#: where a reference server listens when nothing says otherwise: this machine only
DEFAULT_HOST = "127.0.0.1"


def parse_listen(listen: str | None, default_port: int, default_host: str = DEFAULT_HOST) -> tuple[str, int]:
    """``--listen HOST:PORT`` (or ``HOST``, or ``:PORT``); what it leaves out comes from the defaults.
    A usage error unless the port is a number from 0 to 65535 and the host one this machine
    resolves."""
    if not listen:
        return default_host, default_port
    host, sep, port = listen.rpartition(":")
    if not sep:
        host, port = listen, str(default_port)
    if not port.isdigit():
        raise UsageError(f"--listen {listen!r}: expected HOST:PORT")
    if not 0 <= int(port) < 65536:
        raise UsageError(f"--listen {listen!r}: port {port} is out of range (0-65535)")
    host = host.strip("[]")
    if host:
        import socket

        try:
            socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError):
            raise UsageError(f"--listen {listen!r}: {host!r} is not an address of this machine") from None
    return host or default_host, int(port)


class ListenConfig(Protocol):
    """What :func:`listen_address` reads of a reference server's configuration."""

    given: set[str]

    @property
    def listen_port(self) -> int: ...

    def get(self, key: str) -> str: ...


def listen_address(listen: str | None, cfg: ListenConfig, *,
                   advertised_key: str | None = None) -> tuple[str, int]:
    """Where a reference server listens: ``--listen``; else the configuration's ``bindAddress``
    (the 5.x key); else, for a broker, the ``brokerIP1`` its configuration names, when that is
    not a loopback address (the address it registers, so the one its clients use); else
    127.0.0.1, so that a server started on a laptop is not reachable from the network by
    accident. The port is ``--listen``'s, else ``listenPort``."""
    host = cfg.get("bindAddress").strip() or DEFAULT_HOST
    if advertised_key and not cfg.get("bindAddress").strip() and advertised_key in cfg.given:
        advertised = cfg.get(advertised_key).strip()
        if advertised and not is_loopback(advertised):
            host = advertised
    return parse_listen(listen, cfg.listen_port, host)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may well resolve to a network interface


def exposure_warning(host: str, acl_enabled: bool, *, ha_port: bool = False) -> str | None:
    """The one warning for a server listening beyond this machine without access control (for
    a broker with ACL, ``ha_port``: its HA port, which ACL does not cover)."""
    if is_loopback(host):
        return None
    if acl_enabled:
        if not ha_port:
            return None
        return (f"warning: listening on {host}: ACL does not cover the HA port (listenPort + 1), which "
                "sends this broker's CommitLog to any client that connects; let only its slaves reach "
                "it (see docs/servers.md, Security).")
    return (f"warning: listening on {host} without ACL: anyone who can reach this port can read and change "
            "the server's configuration, topics and messages. Set aclEnable=true with a plain_acl.yml, or "
            "listen on 127.0.0.1 (see docs/servers.md, Security).")


def port_holder(port: int) -> str | None:
    """Who holds TCP ``port`` here: ``pid N (command line)`` for a listener, ``pid N (…) for a
    connection`` for a socket using it as its local port (an ephemeral client port), when /proc
    tells; else ``None``."""
    import os
    from pathlib import Path

    listening: set[str] = set()
    other: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            # local address "HEX:PORTHEX", state (0A = LISTEN), inode in column 9
            if len(parts) > 9 and int(parts[1].rsplit(":", 1)[1], 16) == port and parts[9] != "0":
                (listening if parts[3] == "0A" else other).add(f"socket:[{parts[9]}]")
    inodes = listening or other
    if not inodes:
        return None
    suffix = "" if listening else " for a connection"
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                    raw = Path(f"/proc/{pid}/cmdline").read_bytes()
                    cmd = raw.replace(b"\0", b" ").decode(errors="replace").strip()
                    return f"pid {pid} ({cmd[:120]}){suffix}"
            except OSError:
                continue
    return "another process"


def check_ports(host: str, ports: list[tuple[int, str]]) -> None:
    """Each ``(port, what)`` can be listened on at ``host``; else one error naming the port, what
    it is for and who holds it (exit 1: the setting is fine, the machine is busy)."""
    import errno
    import socket

    from .errors import CliError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for port, what in ports:
        if port == 0:
            continue
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    holder = port_holder(port)
                    raise CliError(f"cannot listen on {host}:{port} ({what}): the port is in use"
                                   + (f", by {holder}" if holder else "")) from None
                raise CliError(f"cannot listen on {host}:{port} ({what}): {exc.strerror or exc}") from None


def load_server_config(cls: type[C], path: Path | None, overrides: dict[str, str]) -> C:
    """Load a reference server's properties file (or its defaults) with ``--set`` overrides; a bad
    file is a usage error naming file:line, and every key Java would ignore is warned about."""
    from reference_broker.config import ConfigError

    try:
        cfg = cls.load(path, overrides) if path else cls(overrides=overrides)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    import typer

    for warning in cfg.unknown:
        typer.echo(f"warning: {warning}", err=True)
    return cfg
