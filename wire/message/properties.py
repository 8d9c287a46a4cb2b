# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The message properties string, the property names, and Java's string hash.

A message carries its properties as one string (``MessageDecoder.messageProperties2String`` /
``string2messageProperties``): ``name U+0001 value``, entries separated by U+0002, UTF-8 on the
wire. It travels in the ``properties`` (``i``) field of a send header, in each batch entry and in
every stored record.

Two encoder variants exist and both decode the same:

* 4.9.1 – 5.1.x drop the separator after the last entry;
* up to 4.9.0, and again from 5.2.0, every entry ends with U+0002.

The decoder (4.9.1 and later) splits on U+0002, ignores empty pieces, and keeps a piece only when
it holds U+0001 with at least one character before and one after it. A value may itself contain
U+0001 (everything after the first one is the value). Later duplicates win.

Java writes the entries in ``HashMap`` iteration order. :func:`wire.java.java_hash_order` reproduces
that order, so a server written with this package can store byte-identical properties strings.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import EncodeError, decode_utf8
from ..java import java_string_hash

__all__ = [
    "NAME_VALUE_SEPARATOR",
    "PROPERTY_SEPARATOR",
    "MAX_PROPERTIES_LENGTH",
    "MessageConst",
    "SYSTEM_PROPERTY_NAMES",
    "decode_properties",
    "encode_properties",
    "java_string_hash",
]

#: ``MessageDecoder.NAME_VALUE_SEPARATOR``
NAME_VALUE_SEPARATOR = "\x01"
#: ``MessageDecoder.PROPERTY_SEPARATOR``
PROPERTY_SEPARATOR = "\x02"
#: the store keeps the properties' byte length in a signed short (``Short.MAX_VALUE``)
MAX_PROPERTIES_LENGTH = 0x7FFF


class MessageConst:
    """Property names, spelled as ``common/.../message/MessageConst.java`` spells the constants."""

    PROPERTY_KEYS = "KEYS"
    PROPERTY_TAGS = "TAGS"
    PROPERTY_WAIT_STORE_MSG_OK = "WAIT"
    PROPERTY_DELAY_TIME_LEVEL = "DELAY"
    PROPERTY_RETRY_TOPIC = "RETRY_TOPIC"
    PROPERTY_REAL_TOPIC = "REAL_TOPIC"
    PROPERTY_REAL_QUEUE_ID = "REAL_QID"
    PROPERTY_TRANSACTION_PREPARED = "TRAN_MSG"
    PROPERTY_PRODUCER_GROUP = "PGROUP"
    PROPERTY_MIN_OFFSET = "MIN_OFFSET"
    PROPERTY_MAX_OFFSET = "MAX_OFFSET"
    PROPERTY_BUYER_ID = "BUYER_ID"
    PROPERTY_ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
    PROPERTY_TRANSFER_FLAG = "TRANSFER_FLAG"
    PROPERTY_CORRECTION_FLAG = "CORRECTION_FLAG"
    PROPERTY_MQ2_FLAG = "MQ2_FLAG"
    PROPERTY_RECONSUME_TIME = "RECONSUME_TIME"
    PROPERTY_MSG_REGION = "MSG_REGION"
    PROPERTY_TRACE_SWITCH = "TRACE_ON"
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX = "UNIQ_KEY"
    PROPERTY_EXTEND_UNIQ_INFO = "EXTEND_UNIQ_INFO"
    PROPERTY_MAX_RECONSUME_TIMES = "MAX_RECONSUME_TIMES"
    PROPERTY_CONSUME_START_TIMESTAMP = "CONSUME_START_TIME"
    PROPERTY_INNER_NUM = "INNER_NUM"
    PROPERTY_INNER_BASE = "INNER_BASE"
    DUP_INFO = "DUP_INFO"
    PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS = "CHECK_IMMUNITY_TIME_IN_SECONDS"
    PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET = "TRAN_PREPARED_QUEUE_OFFSET"
    PROPERTY_TRANSACTION_ID = "__transactionId__"
    PROPERTY_TRANSACTION_CHECK_TIMES = "TRANSACTION_CHECK_TIMES"
    PROPERTY_INSTANCE_ID = "INSTANCE_ID"
    PROPERTY_CORRELATION_ID = "CORRELATION_ID"
    PROPERTY_MESSAGE_REPLY_TO_CLIENT = "REPLY_TO_CLIENT"
    PROPERTY_MESSAGE_TTL = "TTL"
    PROPERTY_REPLY_MESSAGE_ARRIVE_TIME = "ARRIVE_TIME"
    PROPERTY_PUSH_REPLY_TIME = "PUSH_REPLY_TIME"
    PROPERTY_CLUSTER = "CLUSTER"
    PROPERTY_MESSAGE_TYPE = "MSG_TYPE"
    PROPERTY_INNER_MULTI_DISPATCH = "INNER_MULTI_DISPATCH"
    PROPERTY_INNER_MULTI_QUEUE_OFFSET = "INNER_MULTI_QUEUE_OFFSET"
    # 5.x additions
    PROPERTY_POP_CK = "POP_CK"
    PROPERTY_POP_CK_OFFSET = "POP_CK_OFFSET"
    PROPERTY_FIRST_POP_TIME = "1ST_POP_TIME"
    PROPERTY_SHARDING_KEY = "__SHARDINGKEY"
    PROPERTY_FORWARD_QUEUE_ID = "PROPERTY_FORWARD_QUEUE_ID"
    PROPERTY_REDIRECT = "REDIRECT"
    PROPERTY_TRACE_CONTEXT = "TRACE_CONTEXT"
    PROPERTY_TIMER_DELAY_SEC = "TIMER_DELAY_SEC"
    PROPERTY_TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
    PROPERTY_BORN_HOST = "__BORNHOST"
    PROPERTY_BORN_TIMESTAMP = "BORN_TIMESTAMP"
    PROPERTY_TRANSIENT_PREFIX = "__RMQ.TRANSIENT."
    PROPERTY_TRANSIENT_TOPIC_CONFIG = "__RMQ.TRANSIENT.TOPIC_SYS_FLAG"
    PROPERTY_TRANSIENT_GROUP_CONFIG = "__RMQ.TRANSIENT.GROUP_SYS_FLAG"
    PROPERTY_TIMER_ENQUEUE_MS = "TIMER_ENQUEUE_MS"
    PROPERTY_TIMER_DEQUEUE_MS = "TIMER_DEQUEUE_MS"
    PROPERTY_TIMER_ROLL_TIMES = "TIMER_ROLL_TIMES"
    PROPERTY_TIMER_OUT_MS = "TIMER_OUT_MS"
    PROPERTY_TIMER_DEL_UNIQKEY = "TIMER_DEL_UNIQKEY"
    PROPERTY_TIMER_DELAY_LEVEL = "TIMER_DELAY_LEVEL"
    PROPERTY_TIMER_DELAY_MS = "TIMER_DELAY_MS"
    #: 5.2+: the record CRC the store appends when ``enabledAppendPropCRC`` is on
    PROPERTY_CRC32 = "__CRC32#"
    PROPERTY_DLQ_ORIGIN_TOPIC = "DLQ_ORIGIN_TOPIC"
    PROPERTY_DLQ_ORIGIN_MESSAGE_ID = "DLQ_ORIGIN_MESSAGE_ID"
    #: separates the keys inside the KEYS property
    KEY_SEPARATOR = " "


#: Names the client refuses as user properties (``MessageConst.STRING_HASH_SET``, 5.x superset).
SYSTEM_PROPERTY_NAMES: frozenset[str] = frozenset({
    MessageConst.PROPERTY_TRACE_SWITCH, MessageConst.PROPERTY_MSG_REGION, MessageConst.PROPERTY_KEYS,
    MessageConst.PROPERTY_TAGS, MessageConst.PROPERTY_WAIT_STORE_MSG_OK,
    MessageConst.PROPERTY_DELAY_TIME_LEVEL, MessageConst.PROPERTY_RETRY_TOPIC,
    MessageConst.PROPERTY_REAL_TOPIC, MessageConst.PROPERTY_REAL_QUEUE_ID,
    MessageConst.PROPERTY_TRANSACTION_PREPARED, MessageConst.PROPERTY_PRODUCER_GROUP,
    MessageConst.PROPERTY_MIN_OFFSET, MessageConst.PROPERTY_MAX_OFFSET, MessageConst.PROPERTY_BUYER_ID,
    MessageConst.PROPERTY_ORIGIN_MESSAGE_ID, MessageConst.PROPERTY_TRANSFER_FLAG,
    MessageConst.PROPERTY_CORRECTION_FLAG, MessageConst.PROPERTY_MQ2_FLAG,
    MessageConst.PROPERTY_RECONSUME_TIME, MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    MessageConst.PROPERTY_MAX_RECONSUME_TIMES, MessageConst.PROPERTY_CONSUME_START_TIMESTAMP,
    MessageConst.PROPERTY_POP_CK, MessageConst.PROPERTY_POP_CK_OFFSET,
    MessageConst.PROPERTY_FIRST_POP_TIME, MessageConst.PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET,
    MessageConst.DUP_INFO, MessageConst.PROPERTY_EXTEND_UNIQ_INFO, MessageConst.PROPERTY_INSTANCE_ID,
    MessageConst.PROPERTY_CORRELATION_ID, MessageConst.PROPERTY_MESSAGE_REPLY_TO_CLIENT,
    MessageConst.PROPERTY_MESSAGE_TTL, MessageConst.PROPERTY_REPLY_MESSAGE_ARRIVE_TIME,
    MessageConst.PROPERTY_PUSH_REPLY_TIME, MessageConst.PROPERTY_CLUSTER,
    MessageConst.PROPERTY_MESSAGE_TYPE, MessageConst.PROPERTY_INNER_MULTI_QUEUE_OFFSET,
    MessageConst.PROPERTY_TIMER_DELAY_MS, MessageConst.PROPERTY_TIMER_DELAY_SEC,
    MessageConst.PROPERTY_TIMER_DELIVER_MS, MessageConst.PROPERTY_TIMER_ENQUEUE_MS,
    MessageConst.PROPERTY_TIMER_DEQUEUE_MS, MessageConst.PROPERTY_TIMER_ROLL_TIMES,
    MessageConst.PROPERTY_TIMER_OUT_MS, MessageConst.PROPERTY_TIMER_DEL_UNIQKEY,
    MessageConst.PROPERTY_TIMER_DELAY_LEVEL, MessageConst.PROPERTY_BORN_HOST,
    MessageConst.PROPERTY_BORN_TIMESTAMP, MessageConst.PROPERTY_DLQ_ORIGIN_TOPIC,
    MessageConst.PROPERTY_DLQ_ORIGIN_MESSAGE_ID, MessageConst.PROPERTY_CRC32,
})


def decode_properties(data: str | bytes | bytearray | memoryview) -> dict[str, str]:
    """Parse a properties string (``MessageDecoder.string2messageProperties``, 4.9.1+).

    Bytes are decoded as UTF-8 first; bytes that are not UTF-8 raise :class:`wire.DecodeError`
    whose offset is the first bad byte.
    """
    if isinstance(data, str):
        text = data
    else:
        text = decode_utf8(bytes(data), 0, "properties")
    out: dict[str, str] = {}
    if not text:
        return out
    # string2messageProperties keeps a piece when its first U+0001 has a character on both sides
    # (its ">= 3 characters" test follows from that): a non-empty name and value around the
    # first separator. Splitting on U+0002 visits the same pieces as its indexOf loop.
    for piece in text.split(PROPERTY_SEPARATOR):
        name, _, value = piece.partition(NAME_VALUE_SEPARATOR)
        if name and value:
            out[name] = value
    return out


def encode_properties(properties: Mapping[str, str | None], *, trailing_separator: bool = False) -> str:
    """Write a properties string in the mapping's order (``messageProperties2String``).

    Entries whose value is ``None`` are skipped, as Java skips null values. ``trailing_separator``
    selects the 5.2+ form (and the ≤4.9.0 form), which ends every entry with U+0002; the default is
    the 4.9.1–5.1 form without the final separator. Names and values are written as given, as
    Java does: a name or value holding a separator or an empty string does not survive a
    decode. Use :func:`wire.java.java_hash_order` for Java's entry order.
    """
    parts = []
    for name, value in properties.items():
        if value is None:
            continue
        if not isinstance(name, str) or not isinstance(value, str):
            raise EncodeError(f"property {name!r}: names and values must be str", field="properties")
        parts.append(name + NAME_VALUE_SEPARATOR + value)
    text = PROPERTY_SEPARATOR.join(parts)
    if trailing_separator and parts:
        text += PROPERTY_SEPARATOR
    return text
