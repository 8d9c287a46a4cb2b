# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Plain ACL administration: accounts (UPDATE_AND_CREATE_ACL_CONFIG 50, DELETE_ACL_CONFIG 51),
the global white addresses (UPDATE_GLOBAL_WHITE_ADDRS_CONFIG 53), the ACL files' versions
(GET_BROKER_CLUSTER_ACL_INFO 52) and the whole configuration (GET_BROKER_CLUSTER_ACL_CONFIG 54),
for one broker or every master of a cluster (mqadmin updateAclConfig, deleteAclConfig,
updateGlobalWhiteAddr, clusterAclConfigVersion, getAclConfig).

The client must itself be allowed to send them: give it credentials
(``AdminClient(credentials=...)``) of an admin account when the brokers check ACL.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..bodies.acl import AclConfig
from ..codes import RequestCode
from ..headers import (
    CreateAccessConfigRequestHeader,
    DeleteAccessConfigRequestHeader,
    GetBrokerAclConfigResponseHeader,
    UpdateGlobalWhiteAddrsConfigRequestHeader,
)
from .broker import targets
from .client import AdminClient, gather_map
from .errors import BadRequest
from .topic import Outcome, outcome

__all__ = ["AclVersion", "BrokerAclConfig", "acl_config", "acl_delete", "acl_update", "acl_versions",
           "acl_white_addrs"]

_PERMS = ("PUB", "SUB", "PUB|SUB", "SUB|PUB", "DENY")


@dataclass(frozen=True, slots=True)
class AclVersion:
    """What a broker says of its ACL files (GET_BROKER_CLUSTER_ACL_INFO)."""

    addr: str
    broker_name: str | None
    cluster_name: str | None
    #: counter and timestamp of the default ACL file
    counter: int | None
    timestamp: int | None
    #: every ACL file of the broker -> (counter, timestamp)
    files: dict[str, tuple[int, int]]
    error: str | None = None
    #: the error is a connection failure or a timeout, not an answer
    unreachable: bool = False


@dataclass(frozen=True, slots=True)
class BrokerAclConfig:
    """A broker's ACL configuration (GET_BROKER_CLUSTER_ACL_CONFIG)."""

    addr: str
    config: AclConfig | None
    error: str | None = None
    #: the error is a connection failure or a timeout, not an answer
    unreachable: bool = False


def _check_perms(name: str, entries: Sequence[str]) -> None:
    for entry in entries:
        resource, sep, perm = entry.partition("=")
        if not sep or not resource.strip() or perm.strip() not in _PERMS:
            raise BadRequest(f"{name} {entry!r}: expected RESOURCE=PERM with PERM one of {', '.join(_PERMS)}")


async def acl_update(client: AdminClient, *, access_key: str, secret_key: str,
                     white_remote_address: str | None = None, admin: bool = False,
                     default_topic_perm: str | None = None,
                     default_group_perm: str | None = None, topic_perms: Sequence[str] | None = None,
                     group_perms: Sequence[str] | None = None, broker: str | None = None,
                     cluster: str | None = None) -> tuple[Outcome, ...]:
    """Create or update an account on the broker, or on every master of the cluster."""
    if len(access_key) <= 6 or len(secret_key) <= 6:
        raise BadRequest("the access key and the secret key must be longer than 6 characters")
    for name, perm in (("--default-topic-perm", default_topic_perm),
                       ("--default-group-perm", default_group_perm)):
        if perm is not None and perm not in _PERMS:
            raise BadRequest(f"{name} must be one of {', '.join(_PERMS)}, not {perm!r}")
    _check_perms("--topic-perm", topic_perms or ())
    _check_perms("--group-perm", group_perms or ())
    header = CreateAccessConfigRequestHeader(
        access_key=access_key, secret_key=secret_key, white_remote_address=white_remote_address, admin=admin,
        default_topic_perm=default_topic_perm, default_group_perm=default_group_perm,
        topic_perms=None if topic_perms is None else ",".join(topic_perms),
        group_perms=None if group_perms is None else ",".join(group_perms))
    return await _to_masters(client, RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, header, broker, cluster)


async def acl_delete(client: AdminClient, *, access_key: str, broker: str | None = None,
                     cluster: str | None = None) -> tuple[Outcome, ...]:
    """Delete an account."""
    header = DeleteAccessConfigRequestHeader(access_key=access_key)
    return await _to_masters(client, RequestCode.DELETE_ACL_CONFIG, header, broker, cluster)


async def acl_white_addrs(client: AdminClient, *, addresses: Sequence[str], file: str = "",
                          broker: str | None = None, cluster: str | None = None) -> tuple[Outcome, ...]:
    """Replace the global white addresses of an ACL file (``file`` empty: the default one)."""
    header = UpdateGlobalWhiteAddrsConfigRequestHeader(global_white_addrs=",".join(addresses),
                                                       acl_file_full_path=file)
    return await _to_masters(client, RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, header, broker, cluster)


async def _to_masters(client: AdminClient, code: int, header: object, broker: str | None,
                      cluster: str | None) -> tuple[Outcome, ...]:
    members = await targets(client, broker=broker, cluster=cluster, masters_only=True)
    addrs = [m.addr for m in members]
    results = await gather_map(addrs, lambda a: client.call(a, code, header))  # type: ignore[arg-type]
    return tuple(outcome(a, r) for a, r in zip(addrs, results, strict=True))


def _unreachable(exc: Exception) -> bool:
    from ..aio import RemotingIOError

    return isinstance(exc, RemotingIOError)


def _version(text: str | None) -> tuple[int, int] | None:
    try:
        value = json.loads(text or "")
        return int(value["counter"]), int(value["timestamp"])
    except (ValueError, TypeError, KeyError):
        return None


async def acl_versions(client: AdminClient, *, broker: str | None = None,
                       cluster: str | None = None) -> tuple[AclVersion, ...]:
    """GET_BROKER_CLUSTER_ACL_INFO from the broker, or every master of the cluster."""
    members = await targets(client, broker=broker, cluster=cluster, masters_only=True)
    addrs = [m.addr for m in members]
    results = await gather_map(addrs, lambda a: client.call(a, RequestCode.GET_BROKER_CLUSTER_ACL_INFO))
    out = []
    for addr, r in zip(addrs, results, strict=True):
        if isinstance(r, Exception):
            out.append(AclVersion(addr, None, None, None, None, {}, str(r), _unreachable(r)))
            continue
        h = GetBrokerAclConfigResponseHeader.from_ext(r.ext_fields)
        main = _version(h.version)
        files: dict[str, tuple[int, int]] = {}
        try:
            for path, v in (json.loads(h.all_acl_file_version or "{}") or {}).items():
                files[str(path)] = (int(v["counter"]), int(v["timestamp"]))
        except (ValueError, TypeError, KeyError, AttributeError):
            pass
        out.append(AclVersion(addr, h.broker_name, h.cluster_name, main[0] if main else None,
                              main[1] if main else None, files))
    if broker is not None and out[0].error is not None:
        raise results[0]
    return tuple(out)


async def acl_config(client: AdminClient, *, broker: str | None = None,
                     cluster: str | None = None) -> tuple[BrokerAclConfig, ...]:
    """GET_BROKER_CLUSTER_ACL_CONFIG from the broker, or every master of the cluster."""
    members = await targets(client, broker=broker, cluster=cluster, masters_only=True)
    addrs = [m.addr for m in members]
    results = await gather_map(addrs, lambda a: client.call(a, RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG))
    out = []
    for addr, r in zip(addrs, results, strict=True):
        if isinstance(r, Exception):
            out.append(BrokerAclConfig(addr, None, str(r), _unreachable(r)))
        else:
            out.append(BrokerAclConfig(addr, AclConfig.decode(r.body or b"{}")))
    if broker is not None and out[0].error is not None:
        raise results[0]
    return tuple(out)
