# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Headers of the plain-ACL admin requests a broker serves (4.9.x ``AdminBrokerProcessor``).

Part of :mod:`wire.headers` (import the classes from there); see its module notes for the
rules every class follows. Sources: ``common/.../protocol/header/CreateAccessConfigRequestHeader``,
``DeleteAccessConfigRequestHeader``, ``UpdateGlobalWhiteAddrsConfigRequestHeader`` and
``GetBrokerAclConfigResponseHeader`` (4.9.8; the same in 5.0.0)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..headers import _PB, CustomHeader, _nn, _opt


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateAccessConfigRequestHeader(CustomHeader):
    """UPDATE_AND_CREATE_ACL_CONFIG (50): one account of ``plain_acl.yml``, created or updated.

    ``topicPerms`` and ``groupPerms`` are comma-separated ``resource=PERM`` lists (``UtilAll.split``
    on ``,``); the permissions are ``PUB``, ``SUB``, ``PUB|SUB`` or ``DENY``. ``admin`` is a
    primitive boolean, so Java always sends it.
    """

    access_key: str = field(metadata=_nn("accessKey"))
    secret_key: str | None = _opt("secretKey")
    white_remote_address: str | None = _opt("whiteRemoteAddress")
    admin: bool | None = _opt("admin", _PB, default=False)
    default_topic_perm: str | None = _opt("defaultTopicPerm")
    default_group_perm: str | None = _opt("defaultGroupPerm")
    topic_perms: str | None = _opt("topicPerms")
    group_perms: str | None = _opt("groupPerms")


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteAccessConfigRequestHeader(CustomHeader):
    """DELETE_ACL_CONFIG (51): the account to remove."""

    access_key: str = field(metadata=_nn("accessKey"))


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateGlobalWhiteAddrsConfigRequestHeader(CustomHeader):
    """UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53): the comma-separated addresses that need no
    credentials, and the ACL file to write them to (empty: the default file)."""

    global_white_addrs: str = field(metadata=_nn("globalWhiteAddrs"))
    acl_file_full_path: str = field(metadata=_nn("aclFileFullPath"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetBrokerAclConfigResponseHeader(CustomHeader):
    """The answer to GET_BROKER_CLUSTER_ACL_INFO (52): the data version of the default ACL file
    (``version``, a DataVersion's JSON), of every ACL file (``allAclFileVersion``, a JSON map of
    path to DataVersion), and who answered."""

    version: str = field(metadata=_nn("version"))
    all_acl_file_version: str | None = _opt("allAclFileVersion")
    broker_name: str = field(metadata=_nn("brokerName"))
    broker_addr: str = field(metadata=_nn("brokerAddr"))
    cluster_name: str = field(metadata=_nn("clusterName"))
