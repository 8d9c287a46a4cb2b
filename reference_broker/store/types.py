# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What goes into the store and what comes out: put/get statuses and results.

The enum members copy the Java names (``PutMessageStatus``, ``GetMessageStatus``) so a grep finds
both sides.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from ._codec import StoredMessage, decode_stored_message

__all__ = [
    "GetResult",
    "GetStatus",
    "MessageToStore",
    "PutResult",
    "PutStatus",
    "QueryResult",
    "StoreError",
]


class StoreError(Exception):
    """The store cannot start or go on (bad files on disk, a store already in use, ...)."""


class PutStatus(enum.Enum):
    """``PutMessageStatus``: the outcome of a put."""

    PUT_OK = "PUT_OK"
    #: stored, but not flushed within syncFlushTimeout (SYNC_FLUSH)
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    #: stored, but no slave acknowledged it in time (SYNC_MASTER)
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    #: stored, but no slave was fit to wait for (SYNC_MASTER)
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"
    #: not stored: the store is shut down, a slave, or not writeable
    SERVICE_NOT_AVAILABLE = "SERVICE_NOT_AVAILABLE"
    CREATE_MAPPED_FILE_FAILED = "CREATE_MAPPED_FILE_FAILED"
    #: not stored: topic too long, body too large, record larger than a file
    MESSAGE_ILLEGAL = "MESSAGE_ILLEGAL"
    #: not stored: the properties string is over 32767 bytes
    PROPERTIES_SIZE_EXCEEDED = "PROPERTIES_SIZE_EXCEEDED"
    OS_PAGECACHE_BUSY = "OS_PAGECACHE_BUSY"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"

    @property
    def stored(self) -> bool:
        """Whether the message is in the CommitLog (``PutMessageResult.isOk`` plus the
        timeouts, after which the message is kept)."""
        return self in _STORED


_STORED = frozenset({PutStatus.PUT_OK, PutStatus.FLUSH_DISK_TIMEOUT, PutStatus.FLUSH_SLAVE_TIMEOUT,
                     PutStatus.SLAVE_NOT_AVAILABLE})


class GetStatus(enum.Enum):
    """``GetMessageStatus``: the outcome of a get (see ``MessageStore.get_messages``)."""

    FOUND = "FOUND"
    NO_MATCHED_MESSAGE = "NO_MATCHED_MESSAGE"
    MESSAGE_WAS_REMOVING = "MESSAGE_WAS_REMOVING"
    OFFSET_FOUND_NULL = "OFFSET_FOUND_NULL"
    OFFSET_OVERFLOW_BADLY = "OFFSET_OVERFLOW_BADLY"
    OFFSET_OVERFLOW_ONE = "OFFSET_OVERFLOW_ONE"
    OFFSET_TOO_SMALL = "OFFSET_TOO_SMALL"
    NO_MATCHED_LOGIC_QUEUE = "NO_MATCHED_LOGIC_QUEUE"
    NO_MESSAGE_IN_QUEUE = "NO_MESSAGE_IN_QUEUE"


@dataclass(slots=True)
class MessageToStore:
    """A message as the send handler hands it over (``MessageExtBrokerInner``).

    ``properties`` is either a mapping (written in its order) or the properties string exactly as
    the producer sent it (kept byte for byte). ``born_host``/the store host may be IPv4 or IPv6
    literals; the store sets the matching sysFlag bits.

    A sender that has just parsed the string hands the result over too
    (``parsed_properties``), so the store does not parse it again. Like the property map of
    Java's ``MessageExtBrokerInner`` next to its properties string, it may hold keys the string
    leaves out (the broker drops WAIT from the stored string but keeps it in the map); the
    store reads it (TAGS, KEYS, UNIQ_KEY, DELAY, WAIT) and never writes it: the record holds
    the string.
    """

    topic: str
    queue_id: int
    body: bytes
    born_timestamp: int
    born_host: tuple[str, int]
    flag: int = 0
    properties: Mapping[str, str] | str = field(default_factory=dict)
    sys_flag: int = 0
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0
    #: the properties string already parsed (only read when ``properties`` is the string)
    parsed_properties: Mapping[str, str] | None = None
    #: ``isWaitStoreMsgOK``: False answers a SYNC_FLUSH put without waiting for its flush;
    #: None decides from the WAIT property (absent or "true" ignoring case: wait)
    wait_store_msg_ok: bool | None = None


@dataclass(slots=True)
class PutResult:
    """``PutMessageResult`` + ``AppendMessageResult``: what the send response needs."""

    status: PutStatus
    #: offset msgId (store host + physical offset); for a batch the ids joined with ","
    msg_id: str = ""
    #: consume-queue offset of the (first) message
    queue_offset: int = 0
    #: CommitLog offset of the (first) record
    wrote_offset: int = 0
    #: bytes written (all records of a batch)
    wrote_bytes: int = 0
    store_timestamp: int = 0
    msg_num: int = 1

    @property
    def ok(self) -> bool:
        """``PutMessageResult.isOk``: stored and acknowledged as Java's send path sees it."""
        return self.status.stored


@dataclass
class GetResult:
    """``GetMessageResult``: raw stored records in queue order plus the offsets to report."""

    status: GetStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    #: the stored records; a PULL SUCCESS body is their concatenation
    messages: list[bytes] = field(default_factory=list)
    #: the consume-queue offset of each message
    queue_offsets: list[int] = field(default_factory=list)
    #: ``suggestPullingFromSlave``: the reader is far behind (more than the in-memory share)
    suggest_pull_from_slave: bool = False

    @property
    def message_count(self) -> int:
        return len(self.messages)

    @property
    def buffer_total_size(self) -> int:
        return sum(len(m) for m in self.messages)

    @property
    def body(self) -> bytes:
        """The PULL SUCCESS body: the records back to back."""
        return b"".join(self.messages)

    def stored_messages(self) -> list[StoredMessage]:
        """The records decoded, for a reader inside the broker that needs what is in them (the
        transaction check reads its half and op queues so); a PULL answer sends ``messages``."""
        return [decode_stored_message(m) for m in self.messages]


@dataclass
class QueryResult:
    """``QueryMessageResult``: records found by key plus the index position reported with them."""

    messages: list[bytes] = field(default_factory=list)
    #: ``indexLastUpdateTimestamp``: end timestamp of the newest index file
    index_last_update_timestamp: int = 0
    #: ``indexLastUpdatePhyoffset``: end physical offset of the newest index file
    index_last_update_phyoffset: int = 0
