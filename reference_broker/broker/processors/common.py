# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What the processors share: the handler type, topic validation, disk usage, fast number parsing."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

from wire import RemotingCommand, ResponseCode
from wire.aio import HandlerResult, RemotingConnection
from wire.bodies import MessageQueue

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = [
    "NOT_SET_REMARK",
    "BrokerHandler",
    "SlowPath",
    "fast_int",
    "fast_long",
    "java_bool",
    "peer_addr",
    "queue_of",
    "response",
    "validate_topic",
]

#: the remark of ``RemotingCommand.createResponseCommand(null)``, which the answers Java makes that
#: way keep after their code is set to SUCCESS
NOT_SET_REMARK = "not set any response code"

#: ``handler(broker, connection, request)`` → response, None, or an awaitable of either
BrokerHandler = Callable[["Broker", RemotingConnection, RemotingCommand], HandlerResult]

_TOPIC_CHARS = re.compile(r"[%|a-zA-Z0-9_-]+")
#: ``TopicValidator.TOPIC_MAX_LENGTH``
TOPIC_MAX_LENGTH = 127


class SlowPath(Exception):
    """A header value the fast parser leaves to the typed header classes."""


def fast_int(text: str) -> int:
    """A non-negative decimal int as Java reads it, or :class:`SlowPath` for anything else
    (signs, other spellings, values near the int range): the caller then parses through
    :mod:`wire.headers`, which gives the exact Java result or the exact error."""
    if len(text) <= 9 and text.isdigit() and text.isascii():
        return int(text)
    raise SlowPath(text)


def fast_long(text: str) -> int:
    """:func:`fast_int` for longs."""
    if len(text) <= 18 and text.isdigit() and text.isascii():
        return int(text)
    raise SlowPath(text)


def java_bool(text: str | None) -> bool:
    """``Boolean.parseBoolean``."""
    return text is not None and text != "false" and (text == "true" or text.lower() == "true")


@lru_cache(maxsize=4096)
def validate_topic(topic: str | None) -> str | None:
    """``TopicValidator.validateTopic``: the SYSTEM_ERROR remark for a bad name, or None."""
    if topic is None or not topic.strip():
        return "The specified topic is blank."
    if not _TOPIC_CHARS.fullmatch(topic):
        return "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
    if len(topic) > TOPIC_MAX_LENGTH:
        return "The specified topic is longer than topic max length."
    return None


def queue_of(broker: Broker, topic: str, queue_id: int) -> MessageQueue:
    """The ``MessageQueue`` of one of this broker's queues."""
    return MessageQueue(topic=topic, broker_name=broker.config.broker_name, queue_id=queue_id)


def peer_addr(conn: RemotingConnection) -> str:
    """``RemotingHelper.parseChannelRemoteAddr``: ``ip:port`` of the peer."""
    host, port = conn.peer
    return f"{host}:{port}"


def response(
    req: RemotingCommand,
    code: int = ResponseCode.SUCCESS,
    remark: str | None = None,
    ext: Mapping[str, str] | None = None,
    body: bytes | None = None,
) -> RemotingCommand:
    """The response to ``req`` in its serialize type (4.9.4–4.9.8 rule)."""
    return req.response(code, remark, ext, body)
