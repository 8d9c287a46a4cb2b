# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The bits of a topic's ``perm`` and ``topicSysFlag`` (Java's ``PermName`` and ``TopicSysFlag``),
which the name server, the broker and the admin client all read or write.

``perm`` is read 4, write 2, inherit 1 (a topic created on the fly from the default topic takes
the default topic's config only when it has the inherit bit), priority 8; a broker's own
``brokerPermission`` uses the same bits. ``topicSysFlag`` is unit 1 and "has unit subscription" 2.
"""

from __future__ import annotations

__all__ = [
    "FLAG_UNIT",
    "FLAG_UNIT_SUB",
    "PERM_INHERIT",
    "PERM_PRIORITY",
    "PERM_READ",
    "PERM_WRITE",
    "build_topic_sys_flag",
    "is_inherited",
    "is_readable",
    "is_writeable",
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
