# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Plain ACL: ``plain_acl.yml`` files, the accounts they define, and the check of a request
(``PlainPermissionManager``, ``PlainAccessValidator``, ``Permission``, 4.9.8).

Theory of operation
-------------------
**Files.** Under the server's ``rocketmqHome``: ``conf/plain_acl.yml`` (the default file, created
empty when missing, as Java does) and every ``*.yml``/``*.yaml`` below ``conf/acl/`` (not
``conf/tools.yml``, the tools' own credentials). Each file may hold::

    globalWhiteRemoteAddresses: [10.10.103.*]     # these addresses need no credentials at all
    accounts:
      - accessKey: RocketMQ                       # more than 6 characters
        secretKey: 12345678                       # more than 6 characters
        whiteRemoteAddress: 192.168.0.*           # from here, this account needs no signature
        admin: false                              # admins may use the admin request codes
        defaultTopicPerm: DENY                    # PUB, SUB, PUB|SUB or DENY (anything else: DENY)
        defaultGroupPerm: SUB
        topicPerms: [topicA=DENY, topicB=PUB|SUB]
        groupPerms: [groupA=DENY, groupB=PUB|SUB] # a group is its retry topic %RETRY%<group>
    dataVersion: [{counter: 1, timestamp: 1700000000000}]

An access key may be defined in one file only (the first one read keeps it). The files are read
again when one of them changes or appears (``AclFileWatchService`` polls every 5 s).

**A request** (:meth:`PlainAcl.check`) passes when its address (without the port) matches a
global white pattern. Otherwise it needs an ``AccessKey`` the files define; when the address
matches that account's ``whiteRemoteAddress`` it passes as it is. Otherwise its ``Signature``
must be the HmacSHA1 of its other fields and body (:mod:`wire.acl`) under the account's secret;
then, unless the request publishes to ``RMQ_SYS_TRACE_TOPIC``, an admin code needs an admin
account and each topic or group the request names (:data:`RESOURCES`, from
``PlainAccessValidator.parse``) needs a permission that allows what the request does: the
account's own entry for it, else its default. A refusal is an :class:`AclDenied` whose
:meth:`~AclDenied.remark` is the text Java's broker answers with: the ``AclException`` and the
source line that raised it (``RemotingHelper.exceptionSimpleDesc``).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from wire import DecodeError, RemotingCommand, RequestCode
from wire.acl import ACCESS_KEY, SECURITY_TOKEN, SIGNATURE, UNIQUE_MSG_QUERY_FLAG, sign, signed_content
from wire.java import java_hash_order
from wire.topic import RETRY_GROUP_TOPIC_PREFIX

from .addresses import AddressPattern, PatternError, parse_pattern

__all__ = [
    "ADMIN_CODES",
    "AclConfigError",
    "AclDenied",
    "Account",
    "DENY",
    "PUB",
    "SUB",
    "PlainAcl",
    "parse_perm",
]

log = logging.getLogger("reference_broker.acl")

#: ``Permission``'s bits
DENY, ANY, PUB, SUB = 1, 2, 4, 8
RETRY_PREFIX = RETRY_GROUP_TOPIC_PREFIX
#: ``TopicValidator.RMQ_SYS_TRACE_TOPIC``: publishing trace data needs no topic permission
TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
#: ``AclConstants``: keys and secrets must be longer than this
MIN_KEY_LENGTH = 6
#: ``AclFileWatchService.WATCH_INTERVAL``
WATCH_INTERVAL_S = 5.0

_R = RequestCode
#: ``Permission.ADMIN_CODE`` (4.9.8): the request codes only an admin account may use
ADMIN_CODES = frozenset({int(_R.UPDATE_AND_CREATE_TOPIC), int(_R.UPDATE_BROKER_CONFIG),
                         int(_R.DELETE_TOPIC_IN_BROKER), int(_R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP),
                         int(_R.DELETE_SUBSCRIPTIONGROUP)})

# Java's frames, as RemotingHelper.exceptionSimpleDesc appends the first one to the exception
_EXC = "org.apache.rocketmq.acl.common.AclException"
_MANAGER = "org.apache.rocketmq.acl.plain.PlainPermissionManager"
_VALIDATOR = "org.apache.rocketmq.acl.plain.PlainAccessValidator"
FRAME_VALIDATE = {
    "no_key": f"{_MANAGER}.validate(PlainPermissionManager.java:664)",
    "unknown_key": f"{_MANAGER}.validate(PlainPermissionManager.java:668)",
    "signature": f"{_MANAGER}.validate(PlainPermissionManager.java:684)",
    "admin": f"{_MANAGER}.checkPerm(PlainPermissionManager.java:581)",
    "default_perm": f"{_MANAGER}.checkPerm(PlainPermissionManager.java:606)",
    "perm": f"{_MANAGER}.checkPerm(PlainPermissionManager.java:611)",
    "parse": f"{_VALIDATOR}.parse(PlainAccessValidator.java:134)",
}


class AclConfigError(ValueError):
    """An ACL file that cannot be used (the message names the file and what is wrong)."""


class AclDenied(Exception):
    """A refused request: Java's ``AclException`` message and the frame that raised it."""

    def __init__(self, message: str, where: str) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def remark(self) -> str:
        """The remark of Java's SYSTEM_ERROR answer (``RemotingHelper.exceptionSimpleDesc``)."""
        head = f"{_EXC}: {self.message}" if self.message else _EXC
        return f"{head}, {self.where}"


def parse_perm(text: str | None) -> int:
    """``Permission.parsePermFromString``."""
    if text is None:
        return DENY
    return {"PUB": PUB, "SUB": SUB, "PUB|SUB": PUB | SUB, "SUB|PUB": PUB | SUB}.get(text.strip(), DENY)


def check_permission(needed: int, owned: int) -> bool:
    """``Permission.checkPermission``."""
    if owned & DENY:
        return False
    if needed & ANY:
        return bool(owned & (PUB | SUB))
    return bool(needed & owned)


def retry_topic(group: str | None) -> str | None:
    return None if group is None else RETRY_PREFIX + group


def _text(value: Any) -> str | None:
    """A YAML scalar as the string Java's JSON conversion makes of it (``12345678`` -> "12345678")."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Account:
    """One account (``PlainAccessResource`` built by ``buildPlainAccessResource``)."""

    access_key: str
    secret_key: str
    white_remote_address: str | None = None
    admin: bool = False
    default_topic_perm: int = DENY
    default_group_perm: int = DENY
    #: resource (a topic, or a group's retry topic) -> permission bits
    perms: Mapping[str, int] = field(default_factory=dict)
    pattern: AddressPattern = field(default_factory=lambda: parse_pattern(None))
    #: the account as the file wrote it (for GET_BROKER_CLUSTER_ACL_CONFIG)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_config(cls, raw: Mapping[str, Any], where: str) -> Account:
        ak, sk = _text(raw.get("accessKey")), _text(raw.get("secretKey"))
        # mirrors checkPlainAccessConfig
        if ak is None or sk is None or len(ak) <= MIN_KEY_LENGTH or len(sk) <= MIN_KEY_LENGTH:
            raise AclConfigError(f"{where}: the accessKey={ak} and secretKey=*** cannot be null and "
                                 "their length should be longer than 6")
        perms: dict[str, int] = {}
        for key, group in (("groupPerms", True), ("topicPerms", False)):
            for entry in raw.get(key) or []:
                items = [p for p in str(entry).split("=") if p]  # StringUtils.split drops empty parts
                if len(items) != 2:
                    raise AclConfigError(f"{where}: Parse resource permission failed for "
                                         f"{'group' if group else 'topic'}:{entry}")
                name = items[0].strip()
                perms[RETRY_PREFIX + name if group else name] = parse_perm(items[1])
        white = _text(raw.get("whiteRemoteAddress"))
        try:
            pattern = parse_pattern(white)
        except PatternError as exc:
            raise AclConfigError(f"{where}: account {ak}: whiteRemoteAddress {exc}") from None
        admin = raw.get("admin")
        return cls(ak, sk, white, admin is True or _text(admin) == "true",
                   parse_perm(_text(raw.get("defaultTopicPerm"))),
                   parse_perm(_text(raw.get("defaultGroupPerm"))), perms, pattern, dict(raw))


@dataclass
class DataVersion:
    """The ``dataVersion`` of an ACL file (``DataVersion``: a timestamp and a counter)."""

    timestamp: int = field(default_factory=lambda: time.time_ns() // 1_000_000)
    counter: int = 0

    def to_json(self) -> str:
        # fastjson of DataVersion: properties sorted, counter an AtomicLong written as a number
        return json.dumps({"counter": self.counter, "timestamp": self.timestamp}, separators=(",", ":"))


# ---------------------------------------------------------------------------------------- resources

def _ext(name: str) -> Callable[[RemotingCommand], str | None]:
    return lambda req: req.ext_fields.get(name)


#: request code -> the (resource, permission) pairs the request needs (``PlainAccessValidator.parse``)
RESOURCES: dict[int, Callable[[RemotingCommand, Any], list[tuple[str | None, int]]]] = {
    int(_R.SEND_MESSAGE): lambda r, _b: (
        # Java looks up "group" here, which a send header does not have: a retry send needs nothing
        [(retry_topic(r.ext_fields.get("group")), SUB)]
        if (r.ext_fields.get("topic") or "").startswith(RETRY_PREFIX)
        else [(r.ext_fields.get("topic"), PUB)]),
    int(_R.SEND_MESSAGE_V2): lambda r, _b: (
        [(retry_topic(r.ext_fields.get("a")), SUB)] if (r.ext_fields.get("b") or "").startswith(RETRY_PREFIX)
        else [(r.ext_fields.get("b"), PUB)]),
    int(_R.CONSUMER_SEND_MSG_BACK): lambda r, _b: [(retry_topic(r.ext_fields.get("group")), SUB)],
    int(_R.PULL_MESSAGE): lambda r, _b: [(r.ext_fields.get("topic"), SUB),
                                         (retry_topic(r.ext_fields.get("consumerGroup")), SUB)],
    int(_R.QUERY_MESSAGE): lambda r, _b: [(r.ext_fields.get("topic"), SUB)],
    int(_R.HEART_BEAT): lambda r, body: [
        pair for data in body.consumer_data_set
        for pair in [(retry_topic(data.group_name), SUB),
                     *((s.topic, SUB) for s in data.subscription_data_set)]],
    int(_R.UNREGISTER_CLIENT): lambda r, _b: [(retry_topic(r.ext_fields.get("consumerGroup")), SUB)],
    int(_R.GET_CONSUMER_LIST_BY_GROUP): lambda r, _b: [(retry_topic(r.ext_fields.get("consumerGroup")), SUB)],
    int(_R.UPDATE_CONSUMER_OFFSET): lambda r, _b: [(retry_topic(r.ext_fields.get("consumerGroup")), SUB),
                                                   (r.ext_fields.get("topic"), SUB)],
}
#: header keys Java's typed decoding requires (decodeCommandCustomHeader, @CFNotNull) for the
#: codes whose parse decodes the header
_REQUIRED = {
    int(_R.UNREGISTER_CLIENT): ("clientID",),
    int(_R.GET_CONSUMER_LIST_BY_GROUP): ("consumerGroup",),
    int(_R.UPDATE_CONSUMER_OFFSET): ("consumerGroup", "topic", "queueId", "commitOffset"),
}


# ---------------------------------------------------------------------------------------- the ACL

class PlainAcl:
    """The accounts of a server's ACL files, and the check of each request (see the module notes).

    ``home`` is ``rocketmqHome``; ``admin_codes`` the codes that need an admin account (Java's
    ``Permission.ADMIN_CODE`` by default; a server may add its own); ``decode_heartbeat`` reads a
    HEART_BEAT body (the server passes the handler's decoding, so a large body is read once and
    off the event loop)."""

    def __init__(self, home: str | Path | None, *, admin_codes: Iterable[int] = ADMIN_CODES,
                 default_file: str = "conf/plain_acl.yml") -> None:
        self.home = Path(home) if home else None
        self.admin_codes = frozenset(admin_codes)
        self.default_file = (self.home / default_file).resolve() if self.home else None
        self.acl_dir = (self.home / "conf" / "acl").resolve() if self.home else None
        self.tools_file = (self.home / "conf" / "tools.yml").resolve() if self.home else None
        self.accounts: dict[str, Account] = {}
        #: access key -> the file that defines it
        self.files_of: dict[str, Path] = {}
        self.global_white: list[AddressPattern] = []
        self.versions: dict[Path, DataVersion] = {}
        self.files: list[Path] = []
        self._stamps: dict[Path, tuple[int, int]] = {}
        self.watch_interval = WATCH_INTERVAL_S

    # ------------------------------------------------------------------ files

    def acl_files(self) -> list[Path]:
        """``getAllAclFiles``: the YAML files below conf/acl, then the default file."""
        out: list[Path] = []
        if self.acl_dir is not None and self.acl_dir.is_dir():
            for path in sorted(self.acl_dir.rglob("*")):
                if path.suffix in (".yml", ".yaml") and path.is_file() and path.resolve() != self.tools_file:
                    out.append(path.resolve())
        if self.default_file is not None and self.default_file.exists() and self.default_file not in out:
            out.append(self.default_file)
        return out

    def ensure_default_file(self) -> None:
        """``assureAclConfigFilesExist``: an empty default file, so that updates have a place to go."""
        if self.default_file is not None and not self.default_file.exists():
            try:
                self.default_file.parent.mkdir(parents=True, exist_ok=True)
                self.default_file.touch()
            except OSError as exc:
                log.error("cannot create %s: %s", self.default_file, exc)

    def load(self) -> None:
        """Read every ACL file (``PlainPermissionManager.load``); raises :class:`AclConfigError` and
        keeps the previous accounts when a file is wrong."""
        accounts: dict[str, Account] = {}
        files_of: dict[str, Path] = {}
        white: list[AddressPattern] = []
        versions: dict[Path, DataVersion] = {}
        files = self.acl_files()
        stamps = {p: _stamp(p) for p in files}
        for path in files:
            doc = _read_yaml(path)
            for entry in doc.get("globalWhiteRemoteAddresses") or []:
                try:
                    white.append(parse_pattern(_text(entry)))
                except PatternError as exc:
                    raise AclConfigError(f"{path}: globalWhiteRemoteAddresses: {exc}") from None
            for i, raw in enumerate(doc.get("accounts") or []):
                if not isinstance(raw, Mapping):
                    raise AclConfigError(f"{path}: accounts[{i}] is not a mapping")
                account = Account.from_config(raw, f"{path}: accounts[{i}]")
                if account.access_key in files_of:
                    log.warning("the accessKey %s is repeated in multiple ACL files", account.access_key)
                    continue
                accounts[account.access_key] = account
                files_of[account.access_key] = path
            versions[path] = _version_of(doc)
        self.accounts, self.files_of, self.global_white = accounts, files_of, white
        self.versions, self.files, self._stamps = versions, files, stamps

    def changed(self) -> bool:
        """Whether a file appeared, went or changed since the last :meth:`load`."""
        files = self.acl_files()
        return files != self.files or any(_stamp(p) != self._stamps.get(p) for p in files)

    def reload_if_changed(self) -> bool:
        """The watcher's step: load again when the files changed; a bad file is logged and the
        accounts stay as they were. Returns whether they were reloaded."""
        if not self.changed():
            return False
        try:
            self.load()
        except AclConfigError as exc:
            log.error("ACL files changed but cannot be used; the previous accounts stay: %s", exc)
            self._stamps = {p: _stamp(p) for p in self.acl_files()}
            self.files = self.acl_files()
            return False
        log.info("ACL files reloaded: %d accounts, %d global white addresses", len(self.accounts),
                 len(self.global_white))
        return True

    # ------------------------------------------------------------------ checking

    def check(self, request: RemotingCommand, peer_host: str,
              decode_heartbeat: Callable[[RemotingCommand], Any] | None = None) -> None:
        """Raise :class:`AclDenied` unless the request may pass (``validate(parse(...))``: what
        the request needs is worked out first, so a body that does not decode is refused even
        from a white-listed address, as in Java)."""
        ext = request.ext_fields
        resources = self._resources(request, decode_heartbeat) if ext else {}
        for pattern in self.global_white:
            if pattern.matches(peer_host):
                return
        access_key = ext.get(ACCESS_KEY)
        if access_key is None:
            raise AclDenied("No accessKey is configured", FRAME_VALIDATE["no_key"])
        account = self.accounts.get(access_key)
        if account is None:
            raise AclDenied(f"No acl config for {access_key}", FRAME_VALIDATE["unknown_key"])
        if account.pattern.matches(peer_host):
            return
        content = signed_content(ext, request.body, (SIGNATURE, UNIQUE_MSG_QUERY_FLAG))
        if sign(content, account.secret_key) != ext.get(SIGNATURE):
            raise AclDenied(f"Check signature failed for accessKey={access_key}", FRAME_VALIDATE["signature"])
        if resources.get(TRACE_TOPIC) == PUB:
            return
        self._check_perm(request.code, resources, account)

    def _resources(self, request: RemotingCommand,
                   decode_heartbeat: Callable[[RemotingCommand], Any] | None) -> dict[str, int]:
        spec = RESOURCES.get(request.code)
        if spec is None:
            return {}
        for key in _REQUIRED.get(request.code, ()):
            if key not in request.ext_fields:
                # decodeCommandCustomHeader's message, wrapped by parse
                raise AclDenied(f"the custom field <{key}> is null", FRAME_VALIDATE["parse"])
        body = None
        if request.code == _R.HEART_BEAT:
            try:
                body = decode_heartbeat(request) if decode_heartbeat is not None else _heartbeat(request)
            except DecodeError as exc:
                raise AclDenied(str(exc), FRAME_VALIDATE["parse"]) from None
        out: dict[str, int] = {}
        for resource, perm in spec(request, body):
            if resource is not None:
                out[resource] = perm  # a HashMap: the last put wins
        return out

    def _check_perm(self, code: int, needed: Mapping[str, int], account: Account) -> None:
        """``checkPerm``; resources are looked at in Java's HashMap order, so the one a refusal
        names is the one Java names."""
        if code in self.admin_codes and not account.admin:
            raise AclDenied(f"Need admin permission for request code={code}, "
                            f"but accessKey={account.access_key} is not", FRAME_VALIDATE["admin"])
        if not needed:
            return
        if not account.perms and account.admin:
            return
        for resource in java_hash_order(needed):
            perm = needed[resource]
            is_group = resource.startswith(RETRY_PREFIX)
            what = f"group:{resource[len(RETRY_PREFIX):]}" if is_group else f"topic:{resource}"
            if resource not in account.perms:
                owned = account.default_group_perm if is_group else account.default_topic_perm
                if not check_permission(perm, owned):
                    raise AclDenied(f"No default permission for {what}", FRAME_VALIDATE["default_perm"])
                continue
            if not check_permission(perm, account.perms[resource]):
                raise AclDenied(f"No default permission for {what}", FRAME_VALIDATE["perm"])

    # ------------------------------------------------------------------ changes (the admin requests)

    def update_account(self, config: Mapping[str, Any]) -> None:
        """``updateAccessConfig``: create or update an account in the file that defines it (a
        new one goes to the default file), bump that file's version, and load again."""
        ak, sk = _text(config.get("accessKey")), _text(config.get("secretKey"))
        if ak is None or sk is None or len(ak) <= MIN_KEY_LENGTH or len(sk) <= MIN_KEY_LENGTH:
            raise AclConfigError(f"The accessKey={ak} and secretKey=*** cannot be null and length should "
                                 "longer than 6")
        for key in ("topicPerms", "groupPerms"):
            for entry in config.get(key) or []:
                items = [p for p in str(entry).split("=") if p]
                if len(items) != 2:
                    raise AclConfigError(f"Parse Resource format error for {entry}.\nThe expected resource "
                                         "format is 'Res=Perm'. For example: topicA=SUB")
                if items[1].strip() != "DENY" and parse_perm(items[1]) == DENY:
                    raise AclConfigError(f"Parse resource permission error for {entry}.\nThe expected "
                                         "permissions are 'SUB' or 'PUB' or 'SUB|PUB' or 'PUB|SUB'.")
        Account.from_config(config, "the request")  # the same checks as a file's account
        path = self.files_of.get(ak) or self.default_file
        if path is None:
            raise AclConfigError("no rocketmqHome: there is no ACL file to write")
        doc = _read_yaml(path) if path.exists() else {}
        accounts = list(doc.get("accounts") or [])
        for i, existing in enumerate(accounts):
            if isinstance(existing, Mapping) and _text(existing.get("accessKey")) == ak:
                accounts[i] = _merged_account(dict(existing), config)
                break
        else:
            accounts.append(_merged_account({}, config))
        doc["accounts"] = accounts
        self._write(path, doc)

    def delete_account(self, access_key: str) -> bool:
        """``deleteAccessConfig``: False when no file defines the key."""
        path = self.files_of.get(access_key)
        if not access_key or path is None:
            return False
        doc = _read_yaml(path)
        accounts = [a for a in doc.get("accounts") or []
                    if not (isinstance(a, Mapping) and _text(a.get("accessKey")) == access_key)]
        doc["accounts"] = accounts
        self._write(path, doc)
        return True

    def update_global_white(self, addresses: list[str], file: str | None) -> bool:
        """``updateGlobalWhiteAddrsConfig``: False for a file that is not an ACL file of this
        server (we are stricter than Java, which takes any path that starts with the home
        directory, ``..`` included)."""
        path = Path(file).resolve() if file else self.default_file
        if path is None or not path.is_file() or path not in set(self.acl_files()):
            return False
        for entry in addresses:
            try:
                parse_pattern(entry)
            except PatternError:
                return False
        doc = _read_yaml(path)
        doc["globalWhiteRemoteAddresses"] = list(addresses)
        self._write(path, doc)
        return True

    def _write(self, path: Path, doc: dict[str, Any]) -> None:
        version = _version_of(doc) if doc.get("dataVersion") else DataVersion(counter=0)
        # DataVersion.nextVersion: now, and the counter one up
        version = DataVersion(timestamp=time.time_ns() // 1_000_000, counter=version.counter + 1)
        doc["dataVersion"] = [{"counter": version.counter, "timestamp": version.timestamp}]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(yaml.safe_dump(doc, default_flow_style=False, sort_keys=False, allow_unicode=True),
                       encoding="utf-8")
        os.replace(tmp, path)
        self.load()

    # ------------------------------------------------------------------ reading (the admin requests)

    def default_version(self) -> DataVersion:
        if self.default_file is not None and self.default_file in self.versions:
            return self.versions[self.default_file]
        return DataVersion()

    def all_versions_json(self) -> str:
        """``JSON.toJSONString(getDataVersionMap())``."""
        return "{" + ",".join(f"{json.dumps(str(p))}:{v.to_json()}" for p, v in self.versions.items()) + "}"

    def all_config(self) -> tuple[list[str], list[dict[str, Any]]]:
        """``getAllAclConfig``: the global white addresses and the accounts of every file."""
        white: list[str] = []
        configs: list[dict[str, Any]] = []
        seen: set[str] = set()
        for path in self.files:
            doc = _read_yaml(path)
            white.extend(str(w) for w in doc.get("globalWhiteRemoteAddresses") or [])
            for raw in doc.get("accounts") or []:
                if not isinstance(raw, Mapping):
                    continue
                ak = _text(raw.get("accessKey"))
                if ak is None or ak in seen:
                    continue
                seen.add(ak)
                configs.append({
                    "accessKey": ak, "secretKey": _text(raw.get("secretKey")),
                    "whiteRemoteAddress": _text(raw.get("whiteRemoteAddress")),
                    "admin": raw.get("admin") is True or _text(raw.get("admin")) == "true",
                    "defaultTopicPerm": _text(raw.get("defaultTopicPerm")),
                    "defaultGroupPerm": _text(raw.get("defaultGroupPerm")),
                    "topicPerms": [str(t) for t in raw.get("topicPerms") or []] or None,
                    "groupPerms": [str(g) for g in raw.get("groupPerms") or []] or None,
                })
        return white, configs


def _merged_account(existing: dict[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """``createAclAccessConfigMap``: the request's values over the file's."""
    out = existing
    out["accessKey"] = _text(config.get("accessKey"))
    if config.get("secretKey"):
        out["secretKey"] = _text(config["secretKey"])
    if config.get("whiteRemoteAddress") is not None:
        out["whiteRemoteAddress"] = _text(config["whiteRemoteAddress"])
    out["admin"] = bool(config.get("admin"))
    for key in ("defaultTopicPerm", "defaultGroupPerm"):
        if config.get(key):
            out[key] = _text(config[key])
    for key in ("topicPerms", "groupPerms"):
        if config.get(key) is not None:
            out[key] = [str(v) for v in config[key]]
    return out


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise AclConfigError(f"{path}: cannot read: {exc}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise AclConfigError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise AclConfigError(f"{path}: expected a mapping (globalWhiteRemoteAddresses, accounts)")
    return doc


def _version_of(doc: Mapping[str, Any]) -> DataVersion:
    entries = doc.get("dataVersion")
    if isinstance(entries, list) and entries and isinstance(entries[0], Mapping):
        first = entries[0]
        try:
            return DataVersion(timestamp=int(first.get("timestamp", 0)), counter=int(first.get("counter", 0)))
        except (TypeError, ValueError):
            pass
    return DataVersion()


def _heartbeat(request: RemotingCommand) -> Any:
    from wire.bodies import HeartbeatData

    return HeartbeatData.decode(request.body or b"")


#: ext keys that are credentials, not request fields (kept out of logs)
CREDENTIAL_KEYS = frozenset({ACCESS_KEY, SIGNATURE, SECURITY_TOKEN})
