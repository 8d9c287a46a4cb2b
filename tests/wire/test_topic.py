# Licensed under the Apache License, Version 2.0. See LICENSE.
"""PermName and TopicSysFlag bits (wire.topic), with Java's values."""

from __future__ import annotations

import pytest

from reference_broker.broker import constants as C
from wire.topic import (
    FLAG_UNIT,
    FLAG_UNIT_SUB,
    PERM_INHERIT,
    PERM_PRIORITY,
    PERM_READ,
    PERM_WRITE,
    build_topic_sys_flag,
    is_inherited,
    is_readable,
    is_writeable,
)


def test_java_values() -> None:
    assert (PERM_PRIORITY, PERM_READ, PERM_WRITE, PERM_INHERIT) == (8, 4, 2, 1)
    assert (FLAG_UNIT, FLAG_UNIT_SUB) == (1, 2)
    # the broker's constants are these, not copies
    assert (C.PERM_READ, C.PERM_WRITE, C.is_readable, C.build_topic_sys_flag) == (
        PERM_READ, PERM_WRITE, is_readable, build_topic_sys_flag)


@pytest.mark.parametrize("perm", range(16))
def test_perm_tests_read_one_bit_each(perm: int) -> None:
    assert (is_readable(perm), is_writeable(perm), is_inherited(perm)) == (
        bool(perm & 4), bool(perm & 2), bool(perm & 1))


def test_build_topic_sys_flag() -> None:
    assert [build_topic_sys_flag(u, s) for u in (False, True) for s in (False, True)] == [0, 2, 1, 3]


def test_group_topics_and_the_master_id() -> None:
    from wire.admin import common
    from wire.topic import DLQ_GROUP_TOPIC_PREFIX, MASTER_ID, RETRY_GROUP_TOPIC_PREFIX, dlq_topic, retry_topic

    assert (retry_topic("G"), dlq_topic("G"), MASTER_ID) == ("%RETRY%G", "%DLQ%G", 0)
    assert (common.RETRY_PREFIX, common.DLQ_PREFIX) == (RETRY_GROUP_TOPIC_PREFIX, DLQ_GROUP_TOPIC_PREFIX)
    assert C.retry_topic is retry_topic and C.MASTER_ID == MASTER_ID
