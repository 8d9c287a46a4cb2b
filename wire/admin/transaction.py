# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A transactional producer: the half message, END_TRANSACTION, and answers to the broker's
CHECK_TRANSACTION_STATE (the Java client's ``TransactionMQProducer``).

Mirrors ``DefaultMQProducerImpl.sendMessageInTransaction`` and ``endTransaction`` of 4.9.8:

1. the producer group is announced to the topic's master brokers with HEART_BEAT (a
   ``producerDataSet`` entry), on the connections the send uses, so that a broker has a channel to
   ask (``ProducerManager.getAvailableChannel``);
2. the message is sent with the properties ``TRAN_MSG=true`` and ``PGROUP=<group>`` and the
   sysFlag TRANSACTION_PREPARED_TYPE; the broker keeps it as a half message;
3. the local outcome goes to the broker as a oneway END_TRANSACTION: ``commit`` (8), ``rollback``
   (12) or ``unknown`` (0, the broker leaves the message pending), with the send's queue offset as
   ``tranStateTableOffset`` and its offset msgId's CommitLog offset;
4. after ``unknown``, the producer waits for the broker's check service: each oneway
   CHECK_TRANSACTION_STATE it receives is answered with END_TRANSACTION
   (``fromTransactionCheck=true``, the offsets the check names) carrying ``check_answer``. The
   wait ends with the first answer that is not ``unknown``, or after ``wait`` seconds.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..aio import RemotingConnection
from ..bodies import HeartbeatData, ProducerData
from ..codes import RequestCode
from ..errors import DecodeError
from ..headers import CheckTransactionStateRequestHeader, EndTransactionRequestHeader
from ..message import MessageConst, MessageSysFlag, decode_offset_msg_id, decode_stored_message
from ..remoting import FLAG_ONEWAY, RemotingCommand
from .client import AdminClient
from .common import route_or_none
from .errors import BadRequest, NotFound
from .message import MessageView, SendResult, _masters, message_by_id, message_send
from .topic import DEFAULT_TOPIC

__all__ = ["OUTCOMES", "CheckAnswered", "TransactionResult", "message_send_transaction", "resume_check"]

#: an outcome name -> ``commitOrRollback`` (``MessageSysFlag`` transaction types)
OUTCOMES = {
    "commit": int(MessageSysFlag.TRANSACTION_COMMIT_TYPE),
    "rollback": int(MessageSysFlag.TRANSACTION_ROLLBACK_TYPE),
    "unknown": 0,
}


@dataclass(frozen=True, slots=True)
class CheckAnswered:
    """One CHECK_TRANSACTION_STATE the broker sent, and what we answered."""

    broker_addr: str
    tran_state_table_offset: int
    commit_log_offset: int
    offset_msg_id: str | None
    answer: str


@dataclass(frozen=True, slots=True)
class TransactionResult:
    send: SendResult
    producer_group: str
    #: the local outcome sent right after the half message
    outcome: str
    #: the checks received while waiting (after ``unknown``)
    checks: tuple[CheckAnswered, ...] = field(default=())

    @property
    def final(self) -> str:
        """What the broker was last told: commit, rollback or unknown."""
        return self.checks[-1].answer if self.checks else self.outcome


def _oneway(cmd: RemotingCommand) -> RemotingCommand:
    """``invokeOneway``: the request with the oneway flag bit."""
    return replace(cmd, flag=cmd.flag | FLAG_ONEWAY)


def _client_id() -> str:
    """``ClientConfig.buildMQClientId``: ip@pid."""
    try:
        ip = socket.gethostbyname(socket.gethostname())
    except OSError:
        ip = "127.0.0.1"
    return f"{ip}@{os.getpid()}"


async def message_send_transaction(
    client: AdminClient, topic: str, body: bytes, *, outcome: str = "commit", check_answer: str = "commit",
    wait: float = 90.0, producer_group: str | None = None, tags: str | None = None, keys: str | None = None,
    broker: str | None = None, queue: int | None = None, properties: dict[str, str] | None = None,
) -> TransactionResult:
    """Send ``body`` as a transactional message and end it with ``outcome`` (see the module notes)."""
    if outcome not in OUTCOMES or check_answer not in OUTCOMES:
        raise BadRequest(f"a transaction ends with one of {', '.join(OUTCOMES)}")
    group = producer_group or f"mqctl-tx-{int(time.time() * 1000)}"
    checks: list[CheckAnswered] = []
    answered = asyncio.Event()
    heartbeat = HeartbeatData(client_id=_client_id(), producer_data_set=(ProducerData(group_name=group),))

    def on_request(addr: str) -> Callable[[RemotingConnection, RemotingCommand], None]:
        def handle(conn: RemotingConnection, req: RemotingCommand) -> None:
            if req.code != RequestCode.CHECK_TRANSACTION_STATE:
                return None
            h = CheckTransactionStateRequestHeader.from_ext(req.ext_fields)
            uniq = None
            if req.body:
                try:
                    uniq = decode_stored_message(req.body).properties.get(
                        MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
                except DecodeError:  # the answer does not need the body
                    uniq = None
            end = EndTransactionRequestHeader(
                producer_group=group, tran_state_table_offset=h.tran_state_table_offset,
                commit_log_offset=h.commit_log_offset, commit_or_rollback=OUTCOMES[check_answer],
                from_transaction_check=True, msg_id=uniq or h.msg_id or "", transaction_id=h.transaction_id)
            conn.oneway(_oneway(client.command(RequestCode.END_TRANSACTION, end)))
            checks.append(CheckAnswered(addr, h.tran_state_table_offset, h.commit_log_offset,
                                        h.offset_msg_id, check_answer))
            if check_answer != "unknown":
                answered.set()
            return None

        return handle

    # 1. announce the group to the masters the message can go to (the send's connections)
    r = await route_or_none(client, topic) or await route_or_none(client, DEFAULT_TOPIC)
    addrs = sorted(set(_masters(r).values())) if r is not None else []
    for addr in addrs:
        conn = await client.connection(addr)
        conn.handler = on_request(addr)
        await client.call(addr, RequestCode.HEART_BEAT, None, heartbeat.encode())
    # 2. the half message
    props = dict(properties or {})
    props[MessageConst.PROPERTY_TRANSACTION_PREPARED] = "true"
    props[MessageConst.PROPERTY_PRODUCER_GROUP] = group
    sent = await message_send(client, topic, body, tags=tags, keys=keys, broker=broker, queue=queue,
                              producer_group=group, properties=props,
                              sys_flag=int(MessageSysFlag.TRANSACTION_PREPARED_TYPE))
    if sent.broker_addr not in addrs:
        conn = await client.connection(sent.broker_addr)
        conn.handler = on_request(sent.broker_addr)
        await client.call(sent.broker_addr, RequestCode.HEART_BEAT, None, heartbeat.encode())
    # 3. the local outcome, oneway as the Java client sends it
    offset = decode_offset_msg_id(sent.offset_msg_id).offset if sent.offset_msg_id else 0
    end = EndTransactionRequestHeader(
        producer_group=group, tran_state_table_offset=sent.queue_offset or 0, commit_log_offset=offset,
        commit_or_rollback=OUTCOMES[outcome], from_transaction_check=False, msg_id=sent.msg_id,
        transaction_id=sent.transaction_id or sent.msg_id)
    conn = await client.connection(sent.broker_addr)
    conn.oneway(_oneway(client.command(RequestCode.END_TRANSACTION, end)))
    # 4. answer checks while the transaction is open
    if outcome == "unknown" and wait > 0:
        try:
            await asyncio.wait_for(answered.wait(), wait)
        except TimeoutError:
            pass
    else:
        # let the oneway leave before the caller closes the connection
        await conn.drain()
    return TransactionResult(sent, group, outcome, tuple(checks))


async def resume_check(client: AdminClient, msg_id: str, *, topic: str | None = None) -> MessageView:
    """RESUME_CHECK_HALF_MESSAGE (323), as mqadmin resumeCheckHalfMessage
    (``DefaultMQAdminExtImpl.resumeCheckHalfMessage``): the message ``msg_id`` names (an offset
    message id, or with ``topic`` a unique key, typically one the check service moved to
    ``TRANS_CHECK_MAX_TIME_TOPIC``) is written again to its broker's half topic with its check
    count at 0, so that the broker asks its producer group about it again. Returns the message;
    a refusal is a :class:`ServerError` with the broker's remark."""
    from ..headers import ResumeCheckHalfMessageRequestHeader

    found = await message_by_id(client, msg_id, topic=topic)
    if not found:
        raise NotFound(f"no message {msg_id!r}" + (f" in topic {topic!r}" if topic else ""))
    msg = found[0]
    await client.call(msg.store_host, RequestCode.RESUME_CHECK_HALF_MESSAGE,
                      ResumeCheckHalfMessageRequestHeader(msg_id=msg.offset_msg_id))
    return msg
