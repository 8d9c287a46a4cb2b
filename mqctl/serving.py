# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Argument helpers shared by the commands that start reference servers."""

from __future__ import annotations

from .errors import UsageError


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
