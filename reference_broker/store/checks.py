# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The checks a put makes before it encodes anything (``CommitLog.asyncPutMessage(s)``'s
``checkMessage``/``checkMessages``): a topic that fits a v1 record, a body and properties within
their limits, host addresses it can store; for a batch, one topic and queue, no transaction or
delay, and a batch body within ``maxMessageSize``. A checked message is :class:`Prepared`: its
topic and properties as the bytes the record will hold, its sysFlag with the host bits, and its
record size."""

from __future__ import annotations

import logging
from collections.abc import Generator, Mapping
from dataclasses import dataclass

from wire.message.delay import delay_time_level

from . import _codec
from ._codec import MessageConst
from .dispatch import TRAN_MASK
from .types import MessageToStore, PutStatus

__all__ = ["MessageChecks", "Prepared"]

log = logging.getLogger("reference_broker.store")

_BORN_V6 = int(_codec.MessageSysFlag.BORNHOST_V6_FLAG)
_STORE_V6 = int(_codec.MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)
_HOST_BITS = _BORN_V6 | _STORE_V6


@dataclass(slots=True)
class Prepared:
    """A checked message: its topic and properties as the UTF-8 bytes the record will hold."""

    msg: MessageToStore
    topic: bytes
    text: bytes
    props: Mapping[str, str]
    sys_flag: int
    size: int
    #: ``isWaitStoreMsgOK``
    wait: bool


def _wait_store_msg_ok(props: Mapping[str, str]) -> bool:
    """``Message.isWaitStoreMsgOK``: absent or ``Boolean.parseBoolean`` true."""
    v = props.get(MessageConst.PROPERTY_WAIT_STORE_MSG_OK)
    return v is None or v.lower() == "true"


def _delayed(props: Mapping[str, str]) -> bool:
    """A DELAY level above 0, or one that is not a number (``getDelayTimeLevel`` would throw)."""
    try:
        return delay_time_level(props) > 0
    except ValueError:
        return True


class MessageChecks:
    """The checks of one store (its ``maxMessageSize``, and whether its own host is IPv6)."""

    __slots__ = ("_max_message_size", "_record_base", "_store_v6")

    def __init__(self, max_message_size: int, store_v6: bool) -> None:
        self._max_message_size = max_message_size
        self._store_v6 = store_v6
        #: record size without body, topic and properties, by the sysFlag host bits
        self._record_base = {bits: _codec.stored_message_size(0, 0, 0, sys_flag=bits)
                             for bits in (0, _BORN_V6, _STORE_V6, _BORN_V6 | _STORE_V6)}

    def prepare(self, msg: MessageToStore) -> Prepared | PutStatus:
        """``checkMessage`` and the record's size: a :class:`Prepared` message, or why it is refused."""
        try:
            topic = msg.topic.encode("utf-8")
            if len(topic) > 0x7F:
                # mirrors checkMessage: v1 records hold the topic length in a signed byte
                return PutStatus.MESSAGE_ILLEGAL
            body_len = len(msg.body)
            if body_len > self._max_message_size:
                return PutStatus.MESSAGE_ILLEGAL
            given = msg.properties
            props: Mapping[str, str]
            if isinstance(given, str):
                text = given
                parsed = msg.parsed_properties
                props = _codec.decode_properties(text) if parsed is None else parsed
            else:
                props = given
                text = _codec.encode_properties(props)
            raw = text.encode("utf-8")
            if len(raw) > _codec.MAX_PROPERTIES_LENGTH:
                return PutStatus.PROPERTIES_SIZE_EXCEEDED
            sys_flag = msg.sys_flag
            if ":" in msg.born_host[0]:
                sys_flag |= _BORN_V6
            if self._store_v6:
                sys_flag |= _STORE_V6
            size = self._record_base[sys_flag & _HOST_BITS] + body_len + len(topic) + len(raw)
        except (ValueError, TypeError, IndexError) as exc:  # not UTF-8-encodable, bad host, ...
            log.warning("message refused: %s", exc)
            return PutStatus.MESSAGE_ILLEGAL
        wait = msg.wait_store_msg_ok
        return Prepared(msg, topic, raw, props, sys_flag, size,
                         _wait_store_msg_ok(props) if wait is None else wait)

    def batch(self, prepared: list[Prepared], cut: int) -> Generator[None, None, PutStatus | None]:
        """``asyncPutMessages``/``checkMessages``: one topic and queue, no transactions or delay,
        and the batch body within the message size limit (pausing after each slice of ``cut``)."""
        first = prepared[0].msg
        topic, queue_id = first.topic, first.queue_id
        sliced = len(prepared) > cut
        # the batch body's size: each entry is its body and properties plus a fixed head
        body_total = 0
        for i, p in enumerate(prepared):
            if sliced and i and i % cut == 0:
                yield
            m = p.msg
            if m.topic != topic or m.queue_id != queue_id or p.sys_flag & TRAN_MASK or _delayed(p.props):
                return PutStatus.MESSAGE_ILLEGAL
            body_total += _codec.BATCH_ENTRY_OVERHEAD + len(m.body) + len(p.text)
        if body_total > self._max_message_size:
            return PutStatus.MESSAGE_ILLEGAL
        return None
