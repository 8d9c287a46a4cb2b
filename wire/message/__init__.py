# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Messages as RocketMQ carries and stores them.

* :mod:`.properties` — the properties string (U+0001 / U+0002), property names, Java's string
  hash and ``HashMap`` order;
* :mod:`.sysflag` — sysFlag bits, body compression, the body CRC;
* :mod:`.record` — the stored record (CommitLog entry, PULL / VIEW_MESSAGE_BY_ID / QUERY_MESSAGE
  bodies), v1 and v2, IPv4 and IPv6 hosts;
* :mod:`.ids` — offset message ids and UNIQ_KEY ids;
* :mod:`.batch` — the SEND_BATCH_MESSAGE body and its expansion into records;
* :mod:`.delay` — the delay level (DELAY) as the send path and the store's dispatch read it.
"""

from __future__ import annotations

from .batch import (
    BATCH_BODY,
    BATCH_ENTRY,
    BATCH_ENTRY_OVERHEAD,
    BatchEntry,
    decode_batch,
    decode_batch_construct,
    encode_batch,
    expand_batch,
)
from .delay import (
    SCHEDULE_TOPIC,
    capped_delay_level,
    delay_level_queue_id,
    delay_time_level,
    deliver_timestamp,
    java_parse_int,
    schedule_tags_code,
)
from .ids import (
    OffsetMsgId,
    UniqId,
    UniqIdGenerator,
    create_offset_msg_id,
    create_uniq_id,
    decode_offset_msg_id,
    decode_uniq_id,
    month_start_ms,
)
from .properties import (
    MAX_PROPERTIES_LENGTH,
    NAME_VALUE_SEPARATOR,
    PROPERTY_SEPARATOR,
    SYSTEM_PROPERTY_NAMES,
    MessageConst,
    decode_properties,
    encode_properties,
    java_string_hash,
)
from .record import (
    BLANK_MAGIC_CODE,
    CRC32_RESERVED_LEN,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    MIN_RECORD_SIZE,
    STORED_MESSAGE,
    Buffer,
    HostPort,
    StoredMessage,
    check_crc32_property,
    decode_messages,
    decode_stored_message,
    decode_stored_message_construct,
    encode_messages,
    encode_record_fields,
    encode_stored_message,
    encode_stored_message_construct,
    iter_stored_messages,
    stored_message_size,
    topic_length_size,
)
from .sysflag import (
    COMPRESS_MSG_BODY_OVER_HOWMUCH,
    CompressionType,
    MessageSysFlag,
    TransactionType,
    body_crc,
    compress_body,
    compression_type,
    decompress_body,
    transaction_type,
)

__all__ = [
    "BATCH_BODY",
    "BATCH_ENTRY",
    "BATCH_ENTRY_OVERHEAD",
    "BLANK_MAGIC_CODE",
    "COMPRESS_MSG_BODY_OVER_HOWMUCH",
    "CRC32_RESERVED_LEN",
    "MAX_PROPERTIES_LENGTH",
    "MESSAGE_MAGIC_CODE",
    "MESSAGE_MAGIC_CODE_V2",
    "MIN_RECORD_SIZE",
    "NAME_VALUE_SEPARATOR",
    "PROPERTY_SEPARATOR",
    "SCHEDULE_TOPIC",
    "STORED_MESSAGE",
    "SYSTEM_PROPERTY_NAMES",
    "BatchEntry",
    "Buffer",
    "CompressionType",
    "HostPort",
    "MessageConst",
    "MessageSysFlag",
    "OffsetMsgId",
    "StoredMessage",
    "TransactionType",
    "UniqId",
    "UniqIdGenerator",
    "body_crc",
    "capped_delay_level",
    "check_crc32_property",
    "compress_body",
    "compression_type",
    "create_offset_msg_id",
    "create_uniq_id",
    "decode_batch",
    "decode_batch_construct",
    "decode_messages",
    "decode_offset_msg_id",
    "decode_properties",
    "decode_stored_message",
    "decode_stored_message_construct",
    "decode_uniq_id",
    "decompress_body",
    "delay_level_queue_id",
    "delay_time_level",
    "deliver_timestamp",
    "encode_batch",
    "encode_messages",
    "encode_properties",
    "encode_record_fields",
    "encode_stored_message",
    "encode_stored_message_construct",
    "expand_batch",
    "iter_stored_messages",
    "java_parse_int",
    "java_string_hash",
    "month_start_ms",
    "schedule_tags_code",
    "stored_message_size",
    "topic_length_size",
    "transaction_type",
]
