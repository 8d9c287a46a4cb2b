# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Global options: one table (:data:`GLOBAL_OPTIONS`) and one typed settings object.

Each global option is declared once, in :data:`GLOBAL_OPTIONS`: its flags, help, how its text is
read and checked, its environment variable and whether a profile may set it. The root command and
every command (after the noun and verb, as mqadmin users type them) accept them all (a command's
own option of the same name wins there: ``pcap decode -o``, ``broker start -n``); the values are
resolved once into a :class:`Settings`, on first use by the command, in this order:

1. the command line (the last occurrence wins, before or after the command);
2. the option's environment variable (``NAMESRV_ADDR`` for ``-n``);
3. the selected profile of ``~/.config/mqctl/config.yaml`` (``$XDG_CONFIG_HOME``, or the file named
   by ``$MQCTL_CONFIG``, which must then exist; ``/dev/null`` means none);
4. the default.

A profile file looks like::

    default: local
    profiles:
      local: {namesrv: "127.0.0.1:9876", timeout: 3}
      prod:  {namesrv: "10.0.0.1:9876;10.0.0.2:9876", serialize: rocketmq,
              access_key: ops-admin, secret_key: "..."}

ACL credentials (every request is then signed, as Java's ``AclClientRPCHook`` signs) are a group
of options resolved from one place: ``--access-key``/``--secret-key`` (with
``MQCTL_SECURITY_TOKEN``), else ``MQCTL_ACCESS_KEY``/``MQCTL_SECRET_KEY``/``MQCTL_SECURITY_TOKEN``,
else the profile's ``access_key``/``secret_key``/``security_token``; half a pair in the first
place that has any of them is a usage error. The secret is never printed, not even in an error.

Every value is checked where it comes from, and a bad one is a usage error (exit 2) that names its
source: the option (``--timeout``), the variable (``$NAMESRV_ADDR``) or the file and line of the
profile (``config.yaml:3: profile 'local': timeout: ...``). A key the file does not know is an error
too (with the nearest known key), so that a misspelling is never silently ignored.

Adding a global option is one :class:`GlobalOption` entry and one :class:`Settings` field of the
same name (options that only make sense together share a ``group``, as the credentials do).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wire.acl import Credentials

from .errors import UsageError
from .output import FORMATS, Output

__all__ = [
    "DEFAULT_NAMESRV",
    "GLOBAL_OPTIONS",
    "GlobalOption",
    "Settings",
    "config_path",
    "load_profile",
    "parse_addr",
    "resolve",
    "split_addrs",
]

DEFAULT_NAMESRV = "127.0.0.1:9876"
SERIALIZE_TYPES = ("json", "rocketmq")


# ---------------------------------------------------------------------- value checks
#
# Each takes the text (or, from a profile, the YAML value) and where it came from, and returns the
# value or raises UsageError naming that place.


def parse_addr(text: str, where: str, *, names: str | None = None) -> str:
    """One ``host:port`` address (``[v6]:port`` too); a usage error naming ``where`` otherwise.
    ``names``: what a word without a port is likely to be instead (``a broker name``)."""
    a = text.strip()
    host, sep, port = a.rpartition(":")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not bare or not port.isdigit():
        hint = f" ({names}, not an address)" if names and not sep and a and not a[0].isdigit() else ""
        raise UsageError(f"{where}: {text!r} is not a host:port address{hint}")
    if not 0 < int(port) < 65536:
        raise UsageError(f"{where}: port {port} of {text!r} is out of range (1-65535)")
    if any(c.isspace() or c in ";,/" for c in bare):
        raise UsageError(f"{where}: {text!r} is not a host:port address")
    return f"{host}:{int(port)}"


def split_addrs(value: str, where: str = "--namesrv") -> list[str]:
    """``;``- (or ``,``-) separated ``host:port`` addresses, at least one."""
    parts = [p for p in str(value).replace(",", ";").split(";")]
    addrs = [parse_addr(p, where) for p in parts if p.strip()]
    if not addrs:
        raise UsageError(f"{where}: no name server address in {value!r}")
    return addrs


def _seconds(value: Any, where: str) -> float:
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: {value!r} is not a number of seconds") from None
    if isinstance(value, bool) or not math.isfinite(t) or t <= 0:
        raise UsageError(f"{where}: {value!r} is not a positive number of seconds")
    return t


def _choice(choices: tuple[str, ...]) -> Callable[[Any, str], str]:
    def check(value: Any, where: str) -> str:
        text = str(value).strip().lower()
        if text not in choices:
            raise UsageError(f"{where}: {value!r} is not one of {', '.join(choices)}")
        return text

    return check


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{where}: expected a non-empty text, not {value!r}")
    return value.strip()


def _key(value: Any, where: str) -> str:
    """An access key, secret or token: text (a YAML number is read as its text), never quoted
    back in an error."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value):
        raise UsageError(f"{where}: expected a non-empty text")
    return str(value)


def _as_is(value: Any, where: str) -> Any:
    return value


@dataclass(frozen=True, slots=True)
class GlobalOption:
    """One global option (see the module docstring)."""

    #: the :class:`Settings` field, and the profile key
    name: str
    flags: tuple[str, ...]
    help: str
    #: checks a value (text from the command line or the environment, any YAML value from a
    #: profile) and returns what the settings hold
    parse: Callable[[Any, str], Any]
    default: Any
    env: str | None = None
    profile: bool = True
    metavar: str | None = None
    #: ``count`` (``-vv``) or ``flag`` (a switch); else the option takes a value
    kind: str = "value"
    #: options of one group come from one place (see :func:`_resolve_group`)
    group: str | None = None
    #: a group member that may be left out (the others must all be given together)
    optional: bool = False


GLOBAL_OPTIONS: tuple[GlobalOption, ...] = (
    GlobalOption("namesrv", ("--namesrv", "-n"), "Name server address(es), ';'-separated. Default: "
                 "$NAMESRV_ADDR, the profile's namesrv, else 127.0.0.1:9876.", split_addrs,
                 [DEFAULT_NAMESRV], env="NAMESRV_ADDR", metavar="ADDR[;ADDR...]"),
    GlobalOption("timeout", ("--timeout",), "Seconds to wait for each connection and answer "
                 "(default: 3).", _seconds, 3.0, metavar="SECONDS"),
    GlobalOption("output", ("--output", "-o"), f"Output format: {', '.join(FORMATS)} (default: table).",
                 _choice(FORMATS), "table", metavar="FORMAT"),
    GlobalOption("serialize", ("--serialize",), "Request header serialization: json or rocketmq "
                 "(default: json).", _choice(SERIALIZE_TYPES), "json", metavar="TYPE"),
    GlobalOption("profile", ("--profile",), "Profile of the config file (~/.config/mqctl/config.yaml).",
                 _text, None, profile=False, metavar="NAME"),
    GlobalOption("verbose", ("--verbose", "-v"), "Trace every request and answer on stderr.", _as_is, 0,
                 profile=False, kind="count"),
    GlobalOption("no_color", ("--no-color",), "Plain output without colour (also with $NO_COLOR set).",
                 _as_is, False, profile=False, kind="flag"),
    GlobalOption("access_key", ("--access-key",), "Sign every request with this ACL access key (with "
                 "--secret-key). Default: $MQCTL_ACCESS_KEY, else the profile's access_key.", _key, None,
                 env="MQCTL_ACCESS_KEY", metavar="KEY", group="credentials"),
    GlobalOption("secret_key", ("--secret-key",), "The access key's secret (never printed). Default: "
                 "$MQCTL_SECRET_KEY, else the profile's secret_key.", _key, None, env="MQCTL_SECRET_KEY",
                 metavar="SECRET", group="credentials"),
    # no option: from the environment, or the profile that gives the keys
    GlobalOption("security_token", (), "The security token sent with the signature.", _key, None,
                 env="MQCTL_SECURITY_TOKEN", group="credentials", optional=True),
)

OPTIONS_BY_NAME = {o.name: o for o in GLOBAL_OPTIONS}


@dataclass
class Settings:
    """The resolved global options (``ctx.obj``)."""

    namesrv: list[str] = field(default_factory=lambda: [DEFAULT_NAMESRV])
    timeout: float = 3.0
    serialize: str = "json"
    output: Output = field(default_factory=Output)
    verbose: int = 0
    no_color: bool = False
    profile: str | None = None
    access_key: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    security_token: str | None = field(default=None, repr=False)
    #: where each value came from (``--timeout``, ``$NAMESRV_ADDR``, ``config.yaml:3``, ``default``)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def credentials(self) -> Credentials | None:
        """What to sign every request with (None: unsigned); its repr never shows the secret."""
        if self.access_key is None or self.secret_key is None:
            return None
        return Credentials(self.access_key, self.secret_key, self.security_token)


# ---------------------------------------------------------------------- the config file


def config_path() -> tuple[Path, bool]:
    """The config file, and whether it was named explicitly (``$MQCTL_CONFIG``: it must exist)."""
    env = os.environ.get("MQCTL_CONFIG")
    if env:
        return Path(env).expanduser(), True
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mqctl" / "config.yaml", False


_TOP_KEYS = ("default", "profiles")


def _nearest(word: str, known: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(known)})"


def load_profile(name: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The selected profile's values (checked) and, for each, ``file:line (profile 'x')``."""
    path, explicit = config_path()
    if str(path) == os.devnull:  # MQCTL_CONFIG=/dev/null: no config file
        if name:
            raise UsageError(f"--profile {name}: $MQCTL_CONFIG is {os.devnull}: there are no profiles")
        return {}, {}
    if not path.is_file():
        if explicit:
            raise UsageError(f"$MQCTL_CONFIG names {path}, which "
                             + ("is not a file" if path.exists() else "does not exist"))
        if name:
            raise UsageError(f"--profile {name}: there is no config file ({path} does not exist)")
        return {}, {}
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        doc = yaml.safe_load(text)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise UsageError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    lines = _key_lines(node)

    def at(*keys: str) -> str:
        return f"{path}:{lines.get(keys, 1)}"

    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise UsageError(f"{path}:1: expected a mapping with 'default' and 'profiles'")
    for key in doc:
        if key not in _TOP_KEYS:
            raise UsageError(f"{at(str(key))}: unknown key {key!r}{_nearest(str(key), list(_TOP_KEYS))}")
    profiles = doc.get("profiles") or {}
    if not isinstance(profiles, dict):
        raise UsageError(f"{at('profiles')}: 'profiles' must be a mapping of profile names")
    chosen = name or doc.get("default")
    if not chosen:
        return {}, {}
    if chosen not in profiles:
        where = f"--profile {chosen}" if name else f"{at('default')}: default"
        raise UsageError(f"{where}: {path} has no profile named {chosen!r} "
                         f"(profiles: {', '.join(map(str, profiles)) or 'none'})")
    prof = profiles[chosen]
    if prof is None:
        return {}, {}
    if not isinstance(prof, dict):
        raise UsageError(f"{at('profiles', chosen)}: profile {chosen!r} must be a mapping")
    known = [o.name for o in GLOBAL_OPTIONS if o.profile]
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, value in prof.items():
        where = f"{at('profiles', chosen, str(key))}: profile {chosen!r}: {key}"
        if key not in known:
            raise UsageError(f"{at('profiles', chosen, str(key))}: profile {chosen!r}: unknown key {key!r}"
                             f"{_nearest(str(key), known)}")
        opt = OPTIONS_BY_NAME[key]
        if opt.name == "namesrv" and isinstance(value, list):
            value = ";".join(map(str, value))
        values[key] = opt.parse(value, where)
        sources[key] = where.rsplit(":", 1)[0]
    return values, sources


def _key_lines(node: Any) -> dict[tuple[str, ...], int]:
    """The line of every mapping key in a composed YAML document, by its path of keys."""
    import yaml

    lines: dict[tuple[str, ...], int] = {}

    def walk(n: Any, keys: tuple[str, ...]) -> None:
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                path = (*keys, str(k.value))
                lines[path] = k.start_mark.line + 1
                walk(v, path)

    walk(node, ())
    return lines


# ---------------------------------------------------------------------- resolution


def resolve(given: dict[str, tuple[Any, str]] | None = None) -> Settings:
    """The settings from the options given on the command line (name -> (raw value, the flag
    used)), the environment, the profile and the defaults; see the module docstring."""
    given = dict(given or {})
    raw_profile = given.get("profile")
    profile = _text(raw_profile[0], raw_profile[1]) if raw_profile is not None else None
    prof_values, prof_sources = load_profile(profile)
    values: dict[str, Any] = {"profile": profile}
    sources: dict[str, str] = {"profile": raw_profile[1] if raw_profile else "default"}
    for group in dict.fromkeys(o.group for o in GLOBAL_OPTIONS if o.group):
        members = [o for o in GLOBAL_OPTIONS if o.group == group]
        _resolve_group(members, given, prof_values, prof_sources, values, sources)
    for opt in GLOBAL_OPTIONS:
        if opt.name == "profile" or opt.group:
            continue
        if opt.name in given:
            raw, flag = given[opt.name]
            values[opt.name], sources[opt.name] = opt.parse(raw, flag), flag
        elif opt.env and os.environ.get(opt.env, "").strip():
            values[opt.name] = opt.parse(os.environ[opt.env], f"${opt.env}")
            sources[opt.name] = f"${opt.env}"
        elif opt.name in prof_values:
            values[opt.name], sources[opt.name] = prof_values[opt.name], prof_sources[opt.name]
        else:
            values[opt.name] = list(opt.default) if isinstance(opt.default, list) else opt.default
            sources[opt.name] = "default"
    no_color = bool(values.pop("no_color")) or "NO_COLOR" in os.environ
    output = Output(values.pop("output"), no_color=no_color)
    return Settings(output=output, no_color=no_color, sources=sources, **values)


def _resolve_group(members: list[GlobalOption], given: dict[str, tuple[Any, str]],
                   prof_values: dict[str, Any], prof_sources: dict[str, str], values: dict[str, Any],
                   sources: dict[str, str]) -> None:
    """The options of one group from the first place that has any of them: the command line (a
    member without an option from its environment variable), else the environment, else the
    profile. Every member that is not optional must be there too."""
    env = {o.name: (os.environ[o.env], f"${o.env}") for o in members
           if o.env and os.environ.get(o.env, "")}
    places: list[tuple[str, dict[str, tuple[Any, str]]]] = [
        ("command line", {o.name: given[o.name] if o.flags else env[o.name] for o in members
                          if (o.name in given if o.flags else o.name in env)}),
        ("environment", env),
        ("profile", {o.name: (prof_values[o.name], prof_sources[o.name]) for o in members
                     if o.name in prof_values}),
    ]
    for place, found in places:
        required = [o for o in members if not o.optional]
        if not any(o.name in found for o in required):
            continue
        missing = [o for o in required if o.name not in found]
        if missing:
            if place == "command line":
                names = " and ".join(o.flags[0] for o in required)
                raise UsageError(f"{names} go together: give both")
            if place == "environment":
                names = " and ".join(f"${o.env}" for o in required)
                raise UsageError(f"{names} go together: set both")
            where = next(iter(found.values()))[1]
            names = " and ".join(o.name for o in required)
            raise UsageError(f"{where}: {names} go together")
        for o in members:
            if o.name in found:
                raw, where = found[o.name]
                values[o.name] = raw if place == "profile" else o.parse(raw, where)
                sources[o.name] = where
            else:
                values[o.name], sources[o.name] = None, "default"
        return
    for o in members:
        values[o.name], sources[o.name] = None, "default"
