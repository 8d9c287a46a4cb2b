# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Subscription groups (``SubscriptionGroupManager``), persisted as ``config/subscriptionGroup.json``.

The table starts with the groups Java creates in ``init`` (TOOLS_CONSUMER, FILTERSRV_CONSUMER,
SELF_TEST_C_GROUP and the four ONS groups, those with broadcast consumption enabled). A group
that is looked up but unknown is created with the defaults when ``autoCreateSubscriptionGroup``
is on, or when it is a system group (``CID_RMQ_SYS_`` prefix); every change moves the data version
on and persists the file.
"""

from __future__ import annotations

import logging
from pathlib import Path

from wire.bodies import SubscriptionGroupConfig, SubscriptionGroupWrapper

from . import constants as C
from .configfile import ConfigFile
from .topics import DataVersion

__all__ = ["SubscriptionGroupManager"]

log = logging.getLogger("reference_broker.broker")


class SubscriptionGroupManager(ConfigFile):
    """Group name → :class:`SubscriptionGroupConfig`, with a data version."""

    def __init__(self, path: Path, *, auto_create: bool = True) -> None:
        super().__init__(path)
        self.auto_create = auto_create
        self.data_version = DataVersion()
        self.table: dict[str, SubscriptionGroupConfig] = {}
        for name in (C.TOOLS_CONSUMER_GROUP, C.FILTERSRV_CONSUMER_GROUP, C.SELF_TEST_CONSUMER_GROUP):
            self.table[name] = SubscriptionGroupConfig(group_name=name)
        for name in (
            C.ONS_HTTP_PROXY_GROUP,
            C.CID_ONSAPI_PULL_GROUP,
            C.CID_ONSAPI_PERMISSION_GROUP,
            C.CID_ONSAPI_OWNER_GROUP,
        ):
            self.table[name] = SubscriptionGroupConfig(group_name=name, consume_broadcast_enable=True)

    def find(self, group: str) -> SubscriptionGroupConfig | None:
        """``findSubscriptionGroupConfig``: the group, created on the fly when allowed."""
        cfg = self.table.get(group)
        if cfg is None and (self.auto_create or C.is_sys_consumer_group(group)):
            cfg = SubscriptionGroupConfig(group_name=group)
            self.table[group] = cfg
            log.info("auto create a subscription group, %s", group)
            self.data_version.next_version()
            self.persist()
        return cfg

    def update(self, cfg: SubscriptionGroupConfig) -> None:
        """``updateSubscriptionGroupConfig`` (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP)."""
        name = cfg.group_name or ""
        old = self.table.get(name)
        self.table[name] = cfg
        log.info("%s subscription group %s", "update" if old is not None else "create new", name)
        self.data_version.next_version()
        self.persist()

    def delete(self, group: str) -> bool:
        """``deleteSubscriptionGroupConfig``."""
        if self.table.pop(group, None) is None:
            log.warning("delete subscription group failed, subscription group: %s not exist", group)
            return False
        self.data_version.next_version()
        self.persist()
        return True

    def encode(self) -> str:
        return (
            SubscriptionGroupWrapper(
                subscription_group_table=self.table, data_version=self.data_version.body()
            )
            .encode()
            .decode("utf-8")
        )

    def decode(self, text: str) -> None:
        wrapper = SubscriptionGroupWrapper.decode(text)
        self.table.update(wrapper.subscription_group_table)
        self.data_version.assign(wrapper.data_version)
