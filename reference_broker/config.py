# Licensed under the Apache License, Version 2.0. See LICENSE.
"""RocketMQ's own configuration files: ``broker.properties`` and ``namesrv.properties``.

The files are ``java.util.Properties`` text (``key=value``, ``key: value`` or ``key value``;
``#``/``!`` comments; ``\\`` line continuations and escapes). Java applies every key to its
config beans by reflection and silently ignores the rest; we know every key a 4.9.8 server
knows (:mod:`reference_broker.defaults`), warn about the others, and check the value of every
known key against the type of its default so that a typo fails at start-up with ``file:line``
(numbers as ``Integer.parseInt``/``Long.parseLong`` read them for the key's Java field, in linear
time, and quoted as a short excerpt when they are wrong).

:class:`BrokerConfig` and :class:`NamesrvConfig` hold the whole key/value table (that is what
GET_BROKER_CONFIG / GET_NAMESRV_CONFIG report and UPDATE_* change) and typed properties for the
keys the reference servers act on.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Mapping
from pathlib import Path

from wire._javanum import java_decimal
from wire.bodies.properties import PropertiesLineError, encode_properties, iter_properties
from wire.errors import excerpt

from .defaults import BROKER_DEFAULTS, NAMESRV_DEFAULTS
from .files import string_to_file

__all__ = [
    "BrokerConfig",
    "ConfigError",
    "default_broker_config_path",
    "NamesrvConfig",
    "format_properties",
    "load_properties",
    "parse_properties",
]

#: keys that older RocketMQ releases and many example files still spell the old way
ALIASES = {
    "mapedFileSizeCommitLog": "mappedFileSizeCommitLog",
    "mapedFileSizeConsumeQueue": "mappedFileSizeConsumeQueue",
}

BROKER_ROLES = ("ASYNC_MASTER", "SYNC_MASTER", "SLAVE")
FLUSH_TYPES = ("ASYNC_FLUSH", "SYNC_FLUSH")
#: keys whose value must be one of a fixed set
ENUMS = {"brokerRole": BROKER_ROLES, "flushDiskType": FLUSH_TYPES}
#: String keys whose default looks like a number (deleteWhen is "04", or "04;05" for two hours)
STRING_KEYS = frozenset({"deleteWhen"})
#: numeric keys whose Java field is a long (BrokerConfig and MessageStoreConfig 4.9.8, NamesrvConfig
#: 5.x), and our own byte count; every other numeric key is an int, read with Integer.parseInt
LONG_KEYS = frozenset({
    "brokerId", "shortPollingTimeMills", "consumerFallbehindThreshold", "waitTimeMillsInSendQueue",
    "waitTimeMillsInPullQueue", "waitTimeMillsInHeartbeatQueue", "waitTimeMillsInTransactionQueue",
    "startAcceptSendRequestTimeStamp", "filterDataCleanTimeSpan", "transactionTimeOut",
    "transactionCheckInterval", "flushDelayOffsetInterval", "osPageCacheBusyTimeOutMills",
    "channelNotActiveInterval", "scanNotActiveBrokerInterval", "brokerChannelExpiredTime",
    "serverMaxBufferedBytes",
})
_RANGES = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}
#: our own keys, which Java does not have, with the values they can take (0 turns each off; a
#: negative budget would close every connection holding part of a frame)
_NOT_NEGATIVE = frozenset({"serverMaxBufferedBytes", "serverFrameReadTimeoutSeconds"})
#: integer keys with a narrower range: ports (0 lets the system pick one)
RANGES = {"listenPort": (0, 65535), "haListenPort": (0, 65535)}

#: keys of both reference servers that Java does not have: the bound on the bytes of unfinished
#: frames held over all connections (the connections holding most are closed beyond it), and the
#: seconds a frame may take to arrive once it has begun (0: no bound); see wire.aio
SERVER_EXTRA = {"serverMaxBufferedBytes": str(128 * 1024 * 1024), "serverFrameReadTimeoutSeconds": "30",
                # the address to listen on (NettyServerConfig.bindAddress of 5.x); empty: 127.0.0.1
                "bindAddress": ""}

#: 5.0.0 controller-mode keys (BrokerConfig, MessageStoreConfig) with Java's defaults, except
#: ``storePathEpochFile``: empty means ``<storePathRootDir>/epochFileCheckpoint`` (Java's default,
#: ``~/store/epochFileCheckpoint``, is shared by every broker of a machine)
CONTROLLER_MODE_KEYS = {"enableControllerMode": "false", "controllerAddr": "",
                        "syncBrokerMetadataPeriod": "5000",
                        "checkSyncStateSetPeriod": "5000", "syncControllerMetadataPeriod": "10000",
                        "brokerHeartbeatInterval": "1000", "sendHeartbeatTimeoutMillis": "1000",
                        "storePathEpochFile": "", "allAckInSyncStateSet": "false",
                        "haMaxTimeSlaveNotCatchup": "15000", "syncFromLastFile": "false",
                        "asyncLearner": "false",
                        "inSyncReplicas": "1", "minInSyncReplicas": "1", "totalReplicas": "1"}

#: keys a 4.9.8 broker knows whose Java default is null: GET_BROKER_CONFIG leaves them out until set
NULL_DEFAULT_KEYS = frozenset({"haMasterAddress"})

#: keys of the reference name server beyond NamesrvConfig 4.9.8 (5.x has the first one)
NAMESRV_EXTRA = {"scanNotActiveBrokerInterval": "10000", "brokerChannelExpiredTime": "120000",
                 # plain ACL on the name server's state-changing requests (ours; see docs/servers.md)
                 "aclEnable": "false",
                 # 5.0.0: the controller in the name server's process, and its ControllerConfig keys
                 "enableControllerInNamesrv": "false", "controllerDLegerGroup": "group1",
                 "controllerDLegerPeers": "n0-127.0.0.1:9878", "controllerDLegerSelfId": "n0",
                 "controllerStorePath": "",
                 "enableElectUncleanMaster": "false", "notifyBrokerRoleChanged": "true", **SERVER_EXTRA}

_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


class ConfigError(ValueError):
    """A configuration file or value that cannot be used; the message says where."""


# ----------------------------------------------------------------------------- properties text


def parse_properties(text: str, source: str = "<string>") -> list[tuple[str, str, int]]:
    """Parse ``java.util.Properties`` text into ``(key, value, line number)`` triples."""
    try:
        return list(iter_properties(text))
    except PropertiesLineError as exc:
        raise ConfigError(f"{source}:{exc.line}: {exc.problem.removeprefix('properties: ')}") from None


def format_properties(values: Mapping[str, str]) -> str:
    """``key=value`` lines (``MixAll.properties2String``), escaped where a key or value would not
    read back the same otherwise."""
    return encode_properties(values, escape=True).decode("utf-8")


def load_properties(path: str | Path) -> list[tuple[str, str, int]]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{p}: is a directory, not a properties file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text (byte offset {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{p}: {exc.strerror}") from None
    return parse_properties(text, str(p))


# ----------------------------------------------------------------------------- typed tables


def _kind(default: str) -> str:
    if default in ("true", "false"):
        return "bool"
    if default.lstrip("-").isdigit():
        return "int"
    return "str"


def _check(key: str, value: str, default: str | None, where: str) -> str:
    if key in ENUMS:
        if value not in ENUMS[key]:
            allowed = ", ".join(ENUMS[key])
            raise ConfigError(f"{where}: {key}: expected one of {allowed}, got {excerpt(value)}")
        return value
    kind = _kind(default) if default and key not in STRING_KEYS else "str"
    if kind == "int":
        # Integer.parseInt / Long.parseLong (any Unicode digits, no '_', within the type's range),
        # in linear time whatever the length; Java skips such a value, we say where it is
        java = "long" if key in LONG_KEYS else "int"
        lo, hi = _RANGES[java]
        number = java_decimal(value.strip())
        if number is None or not lo <= number <= hi:
            raise ConfigError(f"{where}: {key}: expected an integer (Java {java}), got {excerpt(value)}")
        if number < 0 and key in _NOT_NEGATIVE:
            raise ConfigError(f"{where}: {key}: expected 0 (off) or more, got {excerpt(value)}")
        bounds = RANGES.get(key)
        if bounds is not None and not bounds[0] <= number <= bounds[1]:
            raise ConfigError(f"{where}: {key}: {number} is out of range ({bounds[0]}-{bounds[1]})")
    elif kind == "bool":
        low = value.strip().lower()
        if low not in ("true", "false"):
            raise ConfigError(f"{where}: {key}: expected true or false, got {excerpt(value)}")
        value = low
    return value.strip() if kind != "str" else value


def check_value(defaults: Mapping[str, str], key: str, value: str, where: str) -> str:
    """``value`` for ``key`` as the configuration would hold it; ConfigError when it does not fit
    the key's type (keys without a default are taken as they are)."""
    key = ALIASES.get(key, key)
    return _check(key, value, defaults[key], where) if key in defaults else value


class _Config:
    """A key/value table with defaults, checked overrides and the unknown keys seen."""

    #: keys this table knows whose Java default is null (no default value, taken as given)
    NULL_DEFAULTS: frozenset[str] = frozenset()

    @property
    def max_buffered_bytes(self) -> int:
        return self.int("serverMaxBufferedBytes")

    @property
    def frame_read_timeout_s(self) -> float:
        return float(self.int("serverFrameReadTimeoutSeconds"))

    def __init__(self, defaults: Mapping[str, str], source: str) -> None:
        self.DEFAULTS = defaults
        self.values: dict[str, str] = dict(defaults)
        self.source = source
        #: one "file:line: unknown key" warning per key Java would ignore
        self.unknown: list[str] = []
        #: the keys a file or an override gave (the rest are defaults or computed)
        self.given: set[str] = set()

    def _apply(self, items: Iterable[tuple[str, str, int]], source: str) -> None:
        for key, value, line in items:
            key = ALIASES.get(key, key)
            self.given.add(key)
            where = f"{source}:{line}" if line else source
            if key in self.DEFAULTS:
                self.values[key] = _check(key, value, self.DEFAULTS[key], where)
            elif key in self.NULL_DEFAULTS:
                self.values[key] = value.strip()
            else:
                self.values[key] = value
                self.unknown.append(f"{where}: unknown key {excerpt(key)} (kept, not used)")

    def update(self, changes: Mapping[str, str], source: str = "update") -> None:
        """Apply changes at run time (UPDATE_BROKER_CONFIG); raises ConfigError on a bad value."""
        self._apply(((k, v, 0) for k, v in changes.items()), source)

    def get(self, key: str) -> str:
        return self.values.get(key, self.DEFAULTS.get(key, ""))

    def int(self, key: str) -> int:
        return int(self.get(key))

    def bool(self, key: str) -> bool:
        return self.get(key).strip().lower() == "true"

    def as_properties(self) -> str:
        return format_properties(dict(sorted(self.values.items())))


def _local_host_name() -> str:
    try:
        return socket.gethostname() or "DEFAULT_BROKER"
    except OSError:
        return "DEFAULT_BROKER"


def parse_delay_levels(text: str) -> list[int]:
    """``"1s 5s 10s 30s 1m … 2h"`` → delays in milliseconds (``ScheduleMessageService.parseDelayLevel``)."""
    out = []
    for word in text.split():
        unit = word[-1:]
        if unit not in _UNIT_MS or not word[:-1].isdigit():
            raise ConfigError(f"messageDelayLevel: bad level {word!r} (expected a number and s/m/h/d)")
        out.append(int(word[:-1]) * _UNIT_MS[unit])
    return out


def default_broker_config_path() -> Path:
    """``BrokerPathConfigHelper``'s default: ``~/store/config/broker.properties`` (where a broker
    started without ``-c`` persists its configuration; not under ``storePathRootDir``)."""
    return Path.home() / "store" / "config" / "broker.properties"


class BrokerConfig(_Config):
    """A broker's configuration (every 4.9.8 key, typed views of the ones the broker uses)."""

    NULL_DEFAULTS = NULL_DEFAULT_KEYS

    def __init__(self, items: Iterable[tuple[str, str, int]] = (), source: str = "<defaults>",
                 overrides: Mapping[str, str] | None = None) -> None:
        super().__init__({**BROKER_DEFAULTS, **SERVER_EXTRA, **CONTROLLER_MODE_KEYS}, source)
        self._apply(items, source)
        if overrides:
            self._apply(((k, v, 0) for k, v in overrides.items()), "--set")
        self._fill_computed()
        self.message_delay_levels  # noqa: B018 - validate at load time

    #: the file UPDATE_BROKER_CONFIG rewrites with the whole configuration (``Configuration``'s
    #: store path: the ``-c`` file, as ``BrokerPathConfigHelper`` records it); None: nowhere
    store_path: str | None = None

    @classmethod
    def load(cls, path: str | Path, overrides: Mapping[str, str] | None = None) -> BrokerConfig:
        cfg = cls(load_properties(path), str(path), overrides)
        cfg.store_path = str(path)
        return cfg

    def persist(self) -> None:
        """``Configuration.persist``: every key written to :attr:`store_path` (``MixAll.string2File``:
        the text goes to ``<file>.tmp`` first, the previous file is kept as ``<file>.bak``).
        Raises OSError when the file cannot be written."""
        if not self.store_path:
            return
        string_to_file(format_properties(self.values), Path(self.store_path))

    def _fill_computed(self) -> None:
        v = self.values
        if not v.get("brokerName"):
            v["brokerName"] = _local_host_name()
        for ip in ("brokerIP1", "brokerIP2"):
            if not v.get(ip):
                v[ip] = "127.0.0.1"
        if not v.get("storePathRootDir"):
            v["storePathRootDir"] = str(Path.home() / "store")
        if not v.get("storePathCommitLog"):
            v["storePathCommitLog"] = str(Path(v["storePathRootDir"]) / "commitlog")
        if not v.get("namesrvAddr"):
            v["namesrvAddr"] = os.environ.get("NAMESRV_ADDR", "")
        if not v.get("rocketmqHome"):
            v["rocketmqHome"] = os.environ.get("ROCKETMQ_HOME", "")
        if not v.get("storePathEpochFile"):
            v["storePathEpochFile"] = str(Path(v["storePathRootDir"]) / "epochFileCheckpoint")
        if self.broker_role == "SLAVE" and self.broker_id == 0 and not self.bool("enableControllerMode"):
            raise ConfigError(f"{self.source}: brokerRole=SLAVE needs brokerId > 0")

    # typed views ------------------------------------------------------------------
    @property
    def cluster_name(self) -> str:
        return self.get("brokerClusterName")

    @property
    def broker_name(self) -> str:
        return self.get("brokerName")

    @property
    def broker_id(self) -> int:
        return self.int("brokerId")

    @property
    def broker_role(self) -> str:
        return self.get("brokerRole")

    @property
    def is_master(self) -> bool:
        return self.broker_role != "SLAVE"

    @property
    def flush_disk_type(self) -> str:
        return self.get("flushDiskType")

    @property
    def sync_flush(self) -> bool:
        return self.flush_disk_type == "SYNC_FLUSH"

    @property
    def namesrv_addrs(self) -> list[str]:
        return [a.strip() for a in self.get("namesrvAddr").split(";") if a.strip()]

    @property
    def listen_port(self) -> int:
        return self.int("listenPort")

    @property
    def ha_listen_port(self) -> int:
        return self.int("haListenPort")

    @property
    def broker_ip1(self) -> str:
        return self.get("brokerIP1")

    @property
    def broker_addr(self) -> str:
        return f"{self.broker_ip1}:{self.listen_port}"

    @property
    def ha_server_addr(self) -> str:
        return f"{self.get('brokerIP2')}:{self.ha_listen_port}"

    @property
    def store_root(self) -> Path:
        return Path(self.get("storePathRootDir"))

    @property
    def commitlog_dir(self) -> Path:
        return Path(self.get("storePathCommitLog"))

    @property
    def mapped_file_size_commitlog(self) -> int:
        return self.int("mappedFileSizeCommitLog")

    @property
    def mapped_file_size_consume_queue(self) -> int:
        # ConsumeQueue files hold whole 20-byte units (MessageStoreConfig.getMappedFileSizeConsumeQueue)
        size = self.int("mappedFileSizeConsumeQueue")
        return (size + 19) // 20 * 20

    @property
    def auto_create_topic(self) -> bool:
        return self.bool("autoCreateTopicEnable")

    @property
    def auto_create_subscription_group(self) -> bool:
        return self.bool("autoCreateSubscriptionGroup")

    @property
    def default_topic_queue_nums(self) -> int:
        return self.int("defaultTopicQueueNums")

    @property
    def max_message_size(self) -> int:
        return self.int("maxMessageSize")

    @property
    def flush_interval_commitlog_ms(self) -> int:
        return self.int("flushIntervalCommitLog")

    @property
    def sync_flush_timeout_ms(self) -> int:
        return self.int("syncFlushTimeout")

    @property
    def file_reserved_hours(self) -> int:
        return self.int("fileReservedTime")

    @property
    def delete_when(self) -> str:
        return self.get("deleteWhen")

    @property
    def register_period_ms(self) -> int:
        return self.int("registerNameServerPeriod")

    @property
    def message_delay_levels(self) -> list[int]:
        return parse_delay_levels(self.get("messageDelayLevel"))

    @property
    def broker_permission(self) -> int:
        return self.int("brokerPermission")

    @property
    def region_id(self) -> str:
        return self.get("regionId")

    @property
    def trace_on(self) -> bool:
        return self.bool("traceOn")


class NamesrvConfig(_Config):
    """A name server's configuration."""

    def __init__(self, items: Iterable[tuple[str, str, int]] = (), source: str = "<defaults>",
                 overrides: Mapping[str, str] | None = None) -> None:
        defaults = {**NAMESRV_DEFAULTS, **NAMESRV_EXTRA}
        super().__init__(defaults, source)
        self._apply(items, source)
        if overrides:
            self._apply(((k, v, 0) for k, v in overrides.items()), "--set")
        home = Path.home() / "namesrv"
        if not self.values.get("kvConfigPath"):
            self.values["kvConfigPath"] = str(home / "kvConfig.json")
        if not self.values.get("configStorePath"):
            self.values["configStorePath"] = str(home / "namesrv.properties")
        if not self.values.get("rocketmqHome"):
            self.values["rocketmqHome"] = os.environ.get("ROCKETMQ_HOME", "")

    @classmethod
    def load(cls, path: str | Path, overrides: Mapping[str, str] | None = None) -> NamesrvConfig:
        """Read ``path``. As in NamesrvStartup the file is also where UPDATE_NAMESRV_CONFIG writes,
        unless it names another ``configStorePath`` itself (Java would ignore that key)."""
        items = load_properties(path)
        cfg = cls(items, str(path), overrides)
        if not any(key == "configStorePath" for key, _, _ in items):
            cfg.values["configStorePath"] = str(path)
        return cfg

    @property
    def listen_port(self) -> int:
        return self.int("listenPort")

    @property
    def kv_config_path(self) -> Path:
        return Path(self.get("kvConfigPath"))

    @property
    def scan_interval_ms(self) -> int:
        return self.int("scanNotActiveBrokerInterval")

    @property
    def broker_expired_ms(self) -> int:
        return self.int("brokerChannelExpiredTime")

    @property
    def order_message_enable(self) -> bool:
        return self.bool("orderMessageEnable")
