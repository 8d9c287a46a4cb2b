# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The plain-ACL admin requests (``AdminBrokerProcessor``, 4.9.8; GET_BROKER_CLUSTER_ACL_CONFIG
as 5.0.0 serves it). Who may send them is checked before, by the broker's ACL
(:mod:`reference_broker.acl`: an admin account for the four that change the ACL or list its
secrets).

As Java, the answers to UPDATE_AND_CREATE_ACL_CONFIG, DELETE_ACL_CONFIG and
UPDATE_GLOBAL_WHITE_ADDRS_CONFIG are written in the server's serialize type (JSON) on success
(Java writes them itself, outside the normal path) and in the request's on failure. A broker
without ACL answers them with the request's failure code (Java throws a NullPointerException
there, and answers the version request with nothing at all).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wire import DecodeError, RemotingCommand, RequestCode, ResponseCode, SerializeType
from wire.aio import HandlerResult, RemotingConnection
from wire.bodies.acl import AclConfig, PlainAccessConfig
from wire.headers import (
    CreateAccessConfigRequestHeader,
    DeleteAccessConfigRequestHeader,
    GetBrokerAclConfigResponseHeader,
    UpdateGlobalWhiteAddrsConfigRequestHeader,
    response,
)

from ...acl import AclConfigError, AclGuard
from .common import BrokerHandler

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS"]

_NOT_ENABLED = "ACL is not enabled on this broker (aclEnable=false)"


def _split(text: str | None) -> list[str] | None:
    """``UtilAll.split(text, ",")``: null stays null."""
    if text is None:
        return None
    return [part for part in text.split(",") if part] if text else []


def _guard(broker: Broker) -> AclGuard | None:
    return broker.acl


def _ok(req: RemotingCommand) -> RemotingCommand:
    return req.response(ResponseCode.SUCCESS, serialize_type=SerializeType.JSON)


def update_and_create_acl_config(broker: Broker, conn: RemotingConnection,
                                 req: RemotingCommand) -> HandlerResult:
    guard = _guard(broker)
    failed = ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED
    if guard is None:
        return req.response(failed, _NOT_ENABLED)
    h = CreateAccessConfigRequestHeader.from_ext(req.ext_fields)
    config = {"accessKey": h.access_key, "secretKey": h.secret_key,
              "whiteRemoteAddress": h.white_remote_address,
              "admin": bool(h.admin), "defaultTopicPerm": h.default_topic_perm,
              "defaultGroupPerm": h.default_group_perm, "topicPerms": _split(h.topic_perms),
              "groupPerms": _split(h.group_perms)}
    try:
        guard.acl.update_account(config)
    except (AclConfigError, OSError) as exc:
        return req.response(failed, str(exc))
    return _ok(req)


def delete_acl_config(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    guard = _guard(broker)
    failed = ResponseCode.DELETE_ACL_CONFIG_FAILED
    if guard is None:
        return req.response(failed, _NOT_ENABLED)
    h = DeleteAccessConfigRequestHeader.from_ext(req.ext_fields)
    try:
        deleted = guard.acl.delete_account(h.access_key)
    except (AclConfigError, OSError) as exc:
        return req.response(failed, str(exc))
    if not deleted:
        return req.response(failed, f"The accesskey[{h.access_key}] corresponding to accessConfig has been "
                                    "deleted failed.")
    return _ok(req)


def update_global_white_addrs_config(broker: Broker, conn: RemotingConnection,
                                     req: RemotingCommand) -> HandlerResult:
    guard = _guard(broker)
    failed = ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED
    if guard is None:
        return req.response(failed, _NOT_ENABLED)
    h = UpdateGlobalWhiteAddrsConfigRequestHeader.from_ext(req.ext_fields)
    try:
        done = guard.acl.update_global_white(_split(h.global_white_addrs) or [], h.acl_file_full_path or None)
    except (AclConfigError, OSError) as exc:
        return req.response(failed, str(exc))
    if not done:
        return req.response(failed,
                            f"The globalWhiteAddresses[{h.global_white_addrs}] has been updated failed.")
    return _ok(req)


def get_broker_cluster_acl_info(broker: Broker, conn: RemotingConnection,
                                req: RemotingCommand) -> HandlerResult:
    guard = _guard(broker)
    if guard is None:
        return req.response(ResponseCode.SYSTEM_ERROR, _NOT_ENABLED)
    acl = guard.acl
    header = GetBrokerAclConfigResponseHeader(
        version=acl.default_version().to_json(), all_acl_file_version=acl.all_versions_json(),
        broker_name=broker.config.broker_name, broker_addr=broker.address,
        cluster_name=broker.config.cluster_name)
    return response(req, header)


def get_broker_cluster_acl_config(broker: Broker, conn: RemotingConnection,
                                  req: RemotingCommand) -> HandlerResult:
    guard = _guard(broker)
    if guard is None:
        return req.response(ResponseCode.SYSTEM_ERROR, _NOT_ENABLED)
    try:
        white, configs = guard.acl.all_config()
    except (AclConfigError, DecodeError) as exc:
        return req.response(ResponseCode.SYSTEM_ERROR, str(exc))
    body = AclConfig(global_white_addrs=tuple(white), plain_access_configs=tuple(
        PlainAccessConfig(access_key=c["accessKey"], secret_key=c["secretKey"],
                          white_remote_address=c["whiteRemoteAddress"], admin=c["admin"],
                          default_topic_perm=c["defaultTopicPerm"], default_group_perm=c["defaultGroupPerm"],
                          topic_perms=None if c["topicPerms"] is None else tuple(c["topicPerms"]),
                          group_perms=None if c["groupPerms"] is None else tuple(c["groupPerms"]))
        for c in configs))
    return req.response(ResponseCode.SUCCESS, None, None, body.encode())


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.UPDATE_AND_CREATE_ACL_CONFIG: update_and_create_acl_config,
    RequestCode.DELETE_ACL_CONFIG: delete_acl_config,
    RequestCode.GET_BROKER_CLUSTER_ACL_INFO: get_broker_cluster_acl_info,
    RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: update_global_white_addrs_config,
    RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG: get_broker_cluster_acl_config,
}
