# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The delay level of a message (its ``DELAY`` property) and what a broker makes of it.

One rule for the two places that read it: the send path, which stores a delayed message in the
schedule topic instead of its own (``CommitLog.asyncPutMessage``), and the store's dispatch, whose
ConsumeQueue unit for such a record carries the time it is due instead of a tag hash
(``CommitLog.checkMessageAndReturnSize``).

* The level is ``Message.getDelayTimeLevel``: the property read by ``Integer.parseInt``, 0 when it
  is absent. A value ``parseInt`` refuses raises :class:`ValueError` with Java's message.
* A level above the last configured one is the last one; level ``n`` is queue ``n - 1`` of
  ``SCHEDULE_TOPIC_XXXX`` (``ScheduleMessageService.delayLevel2QueueId``).
* A scheduled message is due at its store time plus its level's delay
  (``ScheduleMessageService.computeDeliverTimestamp``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .properties import MessageConst

__all__ = [
    "SCHEDULE_TOPIC",
    "capped_delay_level",
    "delay_level_queue_id",
    "delay_time_level",
    "deliver_timestamp",
    "java_parse_int",
    "schedule_tags_code",
]

#: ``TopicValidator.RMQ_SYS_SCHEDULE_TOPIC``: where delayed messages wait
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"

_INT_MIN = -(2**31)
_INT_MAX = 2**31 - 1


def java_parse_int(text: str) -> int:
    """``Integer.parseInt(text)``: an optional sign and decimal digits (any Unicode decimal digit
    of one UTF-16 unit, as ``Character.digit`` takes), within the int range; else
    :class:`ValueError` with ``NumberFormatException``'s message."""
    sign = text[:1]
    digits = text[1:] if sign in ("+", "-") else text
    if digits.isdecimal() and all(ord(c) <= 0xFFFF for c in digits):
        value = -int(digits) if sign == "-" else int(digits)
        if _INT_MIN <= value <= _INT_MAX:
            return value
    raise ValueError(f'For input string: "{text}"')


def delay_time_level(props: Mapping[str, str]) -> int:
    """``Message.getDelayTimeLevel``: the DELAY property as an int, 0 without one."""
    text = props.get(MessageConst.PROPERTY_DELAY_TIME_LEVEL)
    return 0 if text is None else java_parse_int(text)


def capped_delay_level(level: int, max_level: int) -> int:
    """A level past the last one configured is the last one (``asyncPutMessage``)."""
    return max_level if level > max_level else level


def delay_level_queue_id(level: int) -> int:
    """``ScheduleMessageService.delayLevel2QueueId``: the schedule queue of a level."""
    return level - 1


def deliver_timestamp(level: int, store_timestamp: int, delays_ms: Sequence[int]) -> int:
    """``computeDeliverTimestamp``: when a message of ``level`` stored at ``store_timestamp`` is
    due (a level without a delay: one second after its store time)."""
    if 1 <= level <= len(delays_ms):
        return store_timestamp + delays_ms[level - 1]
    return store_timestamp + 1000


def schedule_tags_code(props: Mapping[str, str], store_timestamp: int,
                       delays_ms: Sequence[int]) -> int | None:
    """The tagsCode of a schedule-topic record's unit (``checkMessageAndReturnSize``): its due time,
    or None when it has no DELAY level above 0 (the unit then carries the TAGS hash).

    A DELAY that does not parse is taken as no level: Java's dispatch would stop at such a record,
    and no send path of ours or Java's stores one (they refuse it first)."""
    try:
        level = capped_delay_level(delay_time_level(props), len(delays_ms))
    except ValueError:
        return None
    return deliver_timestamp(level, store_timestamp, delays_ms) if level > 0 else None
