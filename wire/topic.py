# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The bits of a topic's ``perm`` and ``topicSysFlag`` (Java's ``PermName`` and ``TopicSysFlag``),
a consumer group's retry and dead-letter topic names, and the broker id of a group's master
(``MixAll``): what the name server, the broker, the HA and controller services and the admin
client all read or write.

``perm`` is read 4, write 2, inherit 1 (a topic created on the fly from the default topic takes
the default topic's config only when it has the inherit bit), priority 8; a broker's own
``brokerPermission`` uses the same bits. ``topicSysFlag`` is unit 1 and "has unit subscription" 2.
"""

from __future__ import annotations

__all__ = [
    "DLQ_GROUP_TOPIC_PREFIX",
    "FLAG_UNIT",
    "FLAG_UNIT_SUB",
    "MASTER_ID",
    "PERM_INHERIT",
    "PERM_PRIORITY",
    "PERM_READ",
    "PERM_WRITE",
    "RETRY_GROUP_TOPIC_PREFIX",
    "build_topic_sys_flag",
    "dlq_topic",
    "is_inherited",
    "is_readable",
    "is_writeable",
    "retry_topic",
]

#: ``PermName.PERM_PRIORITY``
PERM_PRIORITY = 0x8
#: ``PermName.PERM_READ``
PERM_READ = 0x4
#: ``PermName.PERM_WRITE``
PERM_WRITE = 0x2
#: ``PermName.PERM_INHERIT``
PERM_INHERIT = 0x1

#: ``TopicSysFlag.FLAG_UNIT``
FLAG_UNIT = 0x1
#: ``TopicSysFlag.FLAG_UNIT_SUB``
FLAG_UNIT_SUB = 0x2

#: ``MixAll.RETRY_GROUP_TOPIC_PREFIX``: a consumer group's retry topic is this and the group
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
#: ``MixAll.DLQ_GROUP_TOPIC_PREFIX``: a consumer group's dead-letter topic is this and the group
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
#: ``MixAll.MASTER_ID``: broker id 0 is a broker group's master (in routes, registrations, HA)
MASTER_ID = 0


def is_readable(perm: int) -> bool:
    """``PermName.isReadable``."""
    return perm & PERM_READ == PERM_READ


def is_writeable(perm: int) -> bool:
    """``PermName.isWriteable``."""
    return perm & PERM_WRITE == PERM_WRITE


def is_inherited(perm: int) -> bool:
    """``PermName.isInherited``."""
    return perm & PERM_INHERIT == PERM_INHERIT


def build_topic_sys_flag(unit: bool, has_unit_sub: bool) -> int:
    """``TopicSysFlag.buildSysFlag``."""
    return (FLAG_UNIT if unit else 0) | (FLAG_UNIT_SUB if has_unit_sub else 0)


def retry_topic(group: str) -> str:
    """``MixAll.getRetryTopic``."""
    return RETRY_GROUP_TOPIC_PREFIX + group


def dlq_topic(group: str) -> str:
    """``MixAll.getDLQTopic``."""
    return DLQ_GROUP_TOPIC_PREFIX + group
