# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Global options, resolved once in the root callback and handed to commands on ``ctx.obj``.

Name servers come from ``-n/--namesrv`` (``;``-separated, like mqadmin), else ``NAMESRV_ADDR``,
else the ``namesrv`` of the selected profile in ``~/.config/mqctl/config.yaml`` (or
``$MQCTL_CONFIG``), else ``127.0.0.1:9876``. A profile file looks like::

    default: local
    profiles:
      local: {namesrv: "127.0.0.1:9876", timeout: 3}
      prod:  {namesrv: "10.0.0.1:9876;10.0.0.2:9876", serialize: rocketmq}
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError
from .output import Output

DEFAULT_NAMESRV = "127.0.0.1:9876"


def config_path() -> Path:
    env = os.environ.get("MQCTL_CONFIG")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mqctl" / "config.yaml"


def load_profile(name: str | None) -> dict[str, Any]:
    path = config_path()
    if not path.is_file():
        if name:
            raise UsageError(f"profile {name!r} requested but {path} does not exist")
        return {}
    import yaml

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise UsageError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{path}:1: expected a mapping with 'profiles'")
    profiles = doc.get("profiles") or {}
    chosen = name or doc.get("default")
    if not chosen:
        return {}
    if chosen not in profiles:
        raise UsageError(f"{path}: no profile named {chosen!r} (have: {', '.join(profiles) or 'none'})")
    prof = profiles[chosen]
    if not isinstance(prof, dict):
        raise UsageError(f"{path}: profile {chosen!r} must be a mapping")
    return prof


def split_addrs(value: str) -> list[str]:
    addrs = [a.strip() for a in value.replace(",", ";").split(";") if a.strip()]
    for a in addrs:
        host, _, port = a.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UsageError(f"bad address {a!r}: expected host:port")
    return addrs


@dataclass
class Settings:
    namesrv: list[str] = field(default_factory=lambda: [DEFAULT_NAMESRV])
    timeout: float = 3.0
    serialize: str = "json"
    output: Output = field(default_factory=Output)
    verbose: int = 0


def resolve(*, namesrv: str | None, timeout: float | None, serialize: str | None, output: str,
            profile: str | None, verbose: int = 0, no_color: bool = False) -> Settings:
    prof = load_profile(profile)
    ns = namesrv or os.environ.get("NAMESRV_ADDR") or prof.get("namesrv") or DEFAULT_NAMESRV
    ser = (serialize or prof.get("serialize") or "json").lower()
    if ser not in ("json", "rocketmq"):
        raise UsageError(f"--serialize must be json or rocketmq, not {ser!r}")
    t = timeout if timeout is not None else float(prof.get("timeout", 3.0))
    if t <= 0:
        raise UsageError("--timeout must be positive")
    return Settings(namesrv=split_addrs(str(ns)), timeout=t, serialize=ser,
                    output=Output(output, no_color=no_color), verbose=verbose)
