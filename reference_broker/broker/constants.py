# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Names, permissions and texts the 4.9.8 broker uses, spelled as Java spells them.

Sources: ``common/.../topic/TopicValidator.java``, ``common/.../MixAll.java``,
``common/.../constant/PermName.java``, ``common/.../help/FAQUrl.java``,
``common/.../sysflag/PullSysFlag.java`` (``PermName`` and ``TopicSysFlag``: :mod:`wire.topic`).
"""

from __future__ import annotations

# the topic permission and sysFlag bits, the retry and DLQ names and MASTER_ID are wire's (one place
# for all servers and the admin client); they stay importable from here as the broker's code spells
# them (C.PERM_READ)
from wire.topic import (
    DLQ_GROUP_TOPIC_PREFIX,
    MASTER_ID,
    PERM_INHERIT,
    PERM_PRIORITY,
    PERM_READ,
    PERM_WRITE,
    RETRY_GROUP_TOPIC_PREFIX,
    build_topic_sys_flag,
    dlq_topic,
    is_inherited,
    is_readable,
    is_writeable,
    retry_topic,
)

__all__ = [
    "AUTO_CREATE_TOPIC_KEY_TOPIC",
    "CID_ONSAPI_OWNER_GROUP",
    "CID_ONSAPI_PERMISSION_GROUP",
    "CID_ONSAPI_PULL_GROUP",
    "CLIENT_INNER_PRODUCER_GROUP",
    "DLQ_GROUP_TOPIC_PREFIX",
    "DLQ_NUMS_PER_GROUP",
    "FAQ_SUFFIX",
    "FILTERSRV_CONSUMER_GROUP",
    "MASTER_ID",
    "NOT_ALLOWED_SEND_TOPICS",
    "ONS_HTTP_PROXY_GROUP",
    "PERM_INHERIT",
    "PERM_PRIORITY",
    "PERM_READ",
    "PERM_WRITE",
    "REPLY_TOPIC_POSTFIX",
    "RETRY_GROUP_TOPIC_PREFIX",
    "RMQ_SYS_BENCHMARK_TOPIC",
    "RMQ_SYS_OFFSET_MOVED_EVENT",
    "RMQ_SYS_SCHEDULE_TOPIC",
    "RMQ_SYS_SELF_TEST_TOPIC",
    "RMQ_SYS_TRACE_TOPIC",
    "RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC",
    "RMQ_SYS_TRANS_HALF_TOPIC",
    "RMQ_SYS_TRANS_OP_HALF_TOPIC",
    "SCHEDULE_CONSUMER_GROUP",
    "SELF_TEST_CONSUMER_GROUP",
    "SUB_ALL",
    "SYSTEM_TOPIC_PREFIX",
    "TOOLS_CONSUMER_GROUP",
    "PullSysFlag",
    "build_topic_sys_flag",
    "dlq_topic",
    "is_inherited",
    "is_readable",
    "is_sys_consumer_group",
    "is_writeable",
    "perm_to_string",
    "retry_topic",
]

AUTO_CREATE_TOPIC_KEY_TOPIC = "TBW102"
RMQ_SYS_SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
RMQ_SYS_BENCHMARK_TOPIC = "BenchmarkTest"
RMQ_SYS_TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
RMQ_SYS_TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
RMQ_SYS_TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
RMQ_SYS_SELF_TEST_TOPIC = "SELF_TEST_TOPIC"
RMQ_SYS_OFFSET_MOVED_EVENT = "OFFSET_MOVED_EVENT"
SYSTEM_TOPIC_PREFIX = "rmq_sys_"

#: ``TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET``: sending to these answers NO_PERMISSION
NOT_ALLOWED_SEND_TOPICS = frozenset(
    {
        RMQ_SYS_SCHEDULE_TOPIC,
        RMQ_SYS_TRANS_HALF_TOPIC,
        RMQ_SYS_TRANS_OP_HALF_TOPIC,
        RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
        RMQ_SYS_SELF_TEST_TOPIC,
        RMQ_SYS_OFFSET_MOVED_EVENT,
    }
)

TOOLS_CONSUMER_GROUP = "TOOLS_CONSUMER"
SCHEDULE_CONSUMER_GROUP = "SCHEDULE_CONSUMER"
FILTERSRV_CONSUMER_GROUP = "FILTERSRV_CONSUMER"
CLIENT_INNER_PRODUCER_GROUP = "CLIENT_INNER_PRODUCER"
SELF_TEST_CONSUMER_GROUP = "SELF_TEST_C_GROUP"
ONS_HTTP_PROXY_GROUP = "CID_ONS-HTTP-PROXY"
CID_ONSAPI_PERMISSION_GROUP = "CID_ONSAPI_PERMISSION"
CID_ONSAPI_OWNER_GROUP = "CID_ONSAPI_OWNER"
CID_ONSAPI_PULL_GROUP = "CID_ONSAPI_PULL"

REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"
#: ``AbstractSendMessageProcessor.DLQ_NUMS_PER_GROUP``
DLQ_NUMS_PER_GROUP = 1
#: ``SubscriptionData.SUB_ALL``
SUB_ALL = "*"

#: ``FAQUrl.suggestTodo(url)``: every FAQ constant of 4.9.8 holds the same URL, so every hint the
#: broker appends is this text
FAQ_SUFFIX = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


class PullSysFlag:
    """``PullSysFlag`` bits of PULL_MESSAGE's ``sysFlag``."""

    COMMIT_OFFSET = 0x1
    SUSPEND = 0x2
    SUBSCRIPTION = 0x4
    CLASS_FILTER = 0x8
    LITE_PULL_MESSAGE = 0x10




def perm_to_string(perm: int) -> str:
    """``PermName.perm2String``: ``RWX`` with ``-`` for each missing bit."""
    return (
        ("R" if is_readable(perm) else "-")
        + ("W" if is_writeable(perm) else "-")
        + ("X" if is_inherited(perm) else "-")
    )


def is_sys_consumer_group(group: str) -> bool:
    """``MixAll.isSysConsumerGroup``: groups with the ``CID_RMQ_SYS_`` prefix."""
    return group.startswith("CID_RMQ_SYS_")
