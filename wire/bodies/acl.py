# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Bodies of the plain-ACL admin requests: the ACL configuration a broker reports
(GET_BROKER_CLUSTER_ACL_CONFIG, 54: ``GetBrokerClusterAclConfigResponseBody`` of 5.0.0, with
``PlainAccessConfig`` entries). 4.9.8 brokers do not serve that request."""

from __future__ import annotations

from dataclasses import dataclass

from ._base import BOOL, STR, STR_LIST, JsonBody, Obj, Seq, prop

__all__ = ["AclConfig", "PlainAccessConfig"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlainAccessConfig(JsonBody):
    """One account of ``plain_acl.yml`` (``PlainAccessConfig``)."""

    access_key: str | None = prop("accessKey", STR)
    secret_key: str | None = prop("secretKey", STR)
    white_remote_address: str | None = prop("whiteRemoteAddress", STR)
    admin: bool = prop("admin", BOOL, False)
    default_topic_perm: str | None = prop("defaultTopicPerm", STR)
    default_group_perm: str | None = prop("defaultGroupPerm", STR)
    topic_perms: tuple[str, ...] | None = prop("topicPerms", STR_LIST)
    group_perms: tuple[str, ...] | None = prop("groupPerms", STR_LIST)


@dataclass(frozen=True, slots=True, kw_only=True)
class AclConfig(JsonBody):
    """``GetBrokerClusterAclConfigResponseBody``: the global white addresses and the accounts."""

    global_white_addrs: tuple[str, ...] = prop("globalWhiteAddrs", STR_LIST, ())
    plain_access_configs: tuple[PlainAccessConfig, ...] = prop(
        "plainAccessConfigs", Seq(Obj(PlainAccessConfig)), ())
