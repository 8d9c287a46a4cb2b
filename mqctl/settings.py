# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Global options, resolved once in the root callback and handed to commands on ``ctx.obj``.

Name servers come from ``-n/--namesrv`` (``;``-separated, like mqadmin), else ``NAMESRV_ADDR``,
else the ``namesrv`` of the selected profile in ``~/.config/mqctl/config.yaml`` (or
``$MQCTL_CONFIG``), else ``127.0.0.1:9876``. A profile file looks like::

    default: local
    profiles:
      local: {namesrv: "127.0.0.1:9876", timeout: 3}
      prod:  {namesrv: "10.0.0.1:9876;10.0.0.2:9876", serialize: rocketmq,
              access_key: ops-admin, secret_key: "..."}

ACL credentials (every request is then signed, as Java's ``AclClientRPCHook`` signs) come from
``--access-key``/``--secret-key``, else ``MQCTL_ACCESS_KEY``/``MQCTL_SECRET_KEY`` (and
``MQCTL_SECURITY_TOKEN``), else the profile's ``access_key``/``secret_key``; the key and its
secret come from the same place. The secret is never printed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wire.acl import Credentials

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
    #: sign every request with these (None: unsigned); its repr never shows the secret
    credentials: Credentials | None = None


def credentials(access_key: str | None, secret_key: str | None, prof: dict[str, Any]) -> Credentials | None:
    """The ACL credentials: the options, else the environment, else the profile (a pair from one place)."""
    if access_key is not None or secret_key is not None:
        if not access_key or not secret_key:
            raise UsageError("--access-key and --secret-key go together")
        return Credentials(access_key, secret_key, os.environ.get("MQCTL_SECURITY_TOKEN") or None)
    env_key, env_secret = os.environ.get("MQCTL_ACCESS_KEY"), os.environ.get("MQCTL_SECRET_KEY")
    if env_key or env_secret:
        if not env_key or not env_secret:
            raise UsageError("MQCTL_ACCESS_KEY and MQCTL_SECRET_KEY go together")
        return Credentials(env_key, env_secret, os.environ.get("MQCTL_SECURITY_TOKEN") or None)
    prof_key, prof_secret = prof.get("access_key"), prof.get("secret_key")
    if prof_key is not None or prof_secret is not None:
        if not prof_key or not prof_secret:
            raise UsageError(f"{config_path()}: the profile's access_key and secret_key go together")
        token = prof.get("security_token")
        return Credentials(str(prof_key), str(prof_secret), None if token is None else str(token))
    return None


def resolve(*, namesrv: str | None, timeout: float | None, serialize: str | None, output: str,
            profile: str | None, verbose: int = 0, no_color: bool = False, access_key: str | None = None,
            secret_key: str | None = None) -> Settings:
    prof = load_profile(profile)
    ns = namesrv or os.environ.get("NAMESRV_ADDR") or prof.get("namesrv") or DEFAULT_NAMESRV
    ser = (serialize or prof.get("serialize") or "json").lower()
    if ser not in ("json", "rocketmq"):
        raise UsageError(f"--serialize must be json or rocketmq, not {ser!r}")
    t = timeout if timeout is not None else float(prof.get("timeout", 3.0))
    if t <= 0:
        raise UsageError("--timeout must be positive")
    return Settings(namesrv=split_addrs(str(ns)), timeout=t, serialize=ser,
                    output=Output(output, no_color=no_color), verbose=verbose,
                    credentials=credentials(access_key, secret_key, prof))
