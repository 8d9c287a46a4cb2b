# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Argument helpers shared by the commands that start reference servers."""

from __future__ import annotations

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


def parse_sets(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def parse_listen(listen: str | None, default_port: int) -> tuple[str, int]:
    if not listen:
        return "0.0.0.0", default_port
    host, sep, port = listen.rpartition(":")
    if not sep:
        host, port = listen, str(default_port)
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise UsageError(f"--listen {listen!r}: expected HOST:PORT")
    return host or "0.0.0.0", int(port)


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
