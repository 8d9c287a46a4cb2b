# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Transactional messages with 4.9.x semantics: END_TRANSACTION and the check service.

Theory of operation
-------------------
A producer sends a *half* message (properties ``TRAN_MSG=true`` and ``PGROUP``); the send
handler stores it in ``RMQ_SYS_TRANS_HALF_TOPIC`` queue 0 with the real topic and queue in
``REAL_TOPIC``/``REAL_QID`` and the transaction bits cleared
(``TransactionalMessageBridge.parseHalfMessageInner``), where no consumer looks. Then:

* **END_TRANSACTION** (37, oneway from the Java client; ``EndTransactionProcessor``): on a slave
  SLAVE_NOT_AVAILABLE; a pending answer (0) is ignored (no response); commit (8) and rollback (12)
  look the half message up by ``commitLogOffset`` and check that its producer group, queue offset
  (``tranStateTableOffset``) and CommitLog offset are the ones named. A commit stores the message
  again under its real topic and queue (``endMessageTransaction``: the half message's properties
  string kept as it is, the COMMIT transaction type, ``preparedTransactionOffset`` the half's
  CommitLog offset), and, once stored, both outcomes write an *op* record: a message to
  ``RMQ_SYS_TRANS_OP_HALF_TOPIC`` (same queue id as the half) tagged ``d`` whose body is the half
  message's queue offset (``addRemoveTagInTransactionOp``).
* **The check service** (``TransactionalMessageCheckService``, masters only): every
  ``transactionCheckInterval`` it walks the half queues from the offsets of the system group
  ``CID_RMQ_SYS_TRANS`` (``TransactionalMessageServiceImpl.check``): half messages with an op
  record are done; one checked ``transactionCheckMax`` times, or older than the file reserved
  time, is discarded to ``TRANS_CHECK_MAX_TIME_TOPIC``; one stored after the pass began, or
  younger than ``transactionTimeOut`` (or its ``CHECK_IMMUNITY_TIME_IN_SECONDS``), ends the pass;
  any other is written again at the end of the half queue with ``TRANSACTION_CHECK_TIMES``
  counted up, and a producer channel of its group gets a oneway CHECK_TRANSACTION_STATE (39)
  about the new copy, whose body is that message under its real topic and queue
  (``Broker2Client.checkProducerTransactionState``). The producer answers with END_TRANSACTION
  (``fromTransactionCheck=true``). The group offsets of the half and op queues move past what is
  done.
* **Topics**: the first pass creates ``RMQ_SYS_TRANS_HALF_TOPIC`` (1 queue, read-write) in the
  topic table and registers it, as Java's ``fetchMessageQueues`` does; the op topic is never in
  the topic table (Java writes it only to the store); ``TRANS_CHECK_MAX_TIME_TOPIC`` appears with
  the first discard.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import RemotingConnection, RemotingIOError
from wire.errors import DecodeError
from wire.headers import (
    CheckTransactionStateRequestHeader,
    EndTransactionRequestHeader,
    ResumeCheckHalfMessageRequestHeader,
    request,
)
from wire.message import (
    MessageConst,
    MessageSysFlag,
    StoredMessage,
    create_offset_msg_id,
    decode_offset_msg_id,
    encode_stored_message,
)

from ..periodic import log_failure, wait_event
from ..store import GetStatus, MessageToStore, PutResult, PutStatus, StoreError
from . import constants as C
from .props import java_properties_text

if TYPE_CHECKING:
    from .broker import Broker

__all__ = ["CID_SYS_RMQ_TRANS", "REMOVE_TAG", "TransactionService"]

log = logging.getLogger("reference_broker.transaction")

#: ``MixAll.CID_SYS_RMQ_TRANS``: the group whose offsets track the half and op queues
CID_SYS_RMQ_TRANS = "CID_RMQ_SYS_TRANS"
#: ``TransactionalMessageUtil.REMOVETAG``: the tag of an op record
REMOVE_TAG = "d"
#: ``TransactionalMessageServiceImpl.MAX_PROCESS_TIME_LIMIT``
MAX_PROCESS_TIME_LIMIT_MS = 60_000
#: ``MAX_RETRY_COUNT_WHEN_HALF_NULL``
MAX_RETRY_COUNT_WHEN_HALF_NULL = 1
#: ``AbstractTransactionalMessageCheckListener.TCMT_QUEUE_NUMS``
TCMT_QUEUE_NUMS = 1

_TRAN_MASK = 0xC
_COMMIT = int(MessageSysFlag.TRANSACTION_COMMIT_TYPE)
_ROLLBACK = int(MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
_NOT_TYPE = 0
_HOST_V6 = int(MessageSysFlag.BORNHOST_V6_FLAG) | int(MessageSysFlag.STOREHOSTADDRESS_V6_FLAG)

_REAL_TOPIC = MessageConst.PROPERTY_REAL_TOPIC
_REAL_QID = MessageConst.PROPERTY_REAL_QUEUE_ID
_PGROUP = MessageConst.PROPERTY_PRODUCER_GROUP
_UNIQ = MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
_CHECK_TIMES = "TRANSACTION_CHECK_TIMES"
_IMMUNITY = "CHECK_IMMUNITY_TIME_IN_SECONDS"
_PREPARED_QUEUE_OFFSET = "TRAN_PREPARED_QUEUE_OFFSET"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _long(text: str) -> int:
    """``getLong``: -1 for what does not parse."""
    try:
        return int(text)
    except ValueError:
        return -1


@dataclass
class _Pull:
    """``PullResult`` as the bridge sees it: FOUND, NO_NEW_MSG, NO_MATCHED_MSG or OFFSET_ILLEGAL."""

    status: str
    next_begin_offset: int
    messages: list[StoredMessage] | None


class TransactionService:
    """``TransactionalMessageServiceImpl`` + bridge + check listener for one broker."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self._task: asyncio.Task[None] | None = None
        #: passes run (tests wait on this)
        self.passes = 0
        self._wake = asyncio.Event()

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Start the check service (``startProcessorByHa``: masters only)."""
        if self._task is None:
            self._wake = asyncio.Event()
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            # the loop ends only when cancelled (it logs and survives anything else)
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def wakeup(self) -> None:
        """Run a pass now (``ServiceThread.wakeup``)."""
        self._wake.set()

    async def _run(self) -> None:
        # mirrors ServiceThread.waitForRunning(interval) then onWaitEnd: the first pass comes one
        # interval after the start
        while True:
            interval = self.broker.config.int("transactionCheckInterval") / 1000.0
            await wait_event(self._wake, max(0.01, interval))
            self._wake.clear()
            try:
                await self.check()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # mirrors TransactionalMessageCheckService: log, go on
                # the store's and the disk's errors are one line; anything else is a bug of ours
                log_failure(log, "Check", exc, (StoreError, OSError))

    # ------------------------------------------------------------------ store access

    def _pull(self, topic: str, queue_id: int, offset: int, n: int) -> _Pull:
        """``TransactionalMessageBridge.getMessage``."""
        r = self.broker.store.get_messages(CID_SYS_RMQ_TRANS, topic, queue_id, offset, n)
        if r.status is GetStatus.FOUND:
            return _Pull("FOUND", r.next_begin_offset, r.stored_messages())
        if r.status is GetStatus.NO_MATCHED_MESSAGE:
            return _Pull("NO_MATCHED_MSG", r.next_begin_offset, None)
        if r.status in (GetStatus.NO_MESSAGE_IN_QUEUE, GetStatus.OFFSET_OVERFLOW_ONE,
                        GetStatus.NO_MATCHED_LOGIC_QUEUE):
            # Java creates a missing queue on demand and answers NO_MESSAGE_IN_QUEUE
            return _Pull("NO_NEW_MSG", r.next_begin_offset, None)
        return _Pull("OFFSET_ILLEGAL", r.next_begin_offset, None)

    def _consume_offset(self, topic: str, queue_id: int) -> int:
        """``fetchConsumeOffset``: the group's offset, else the queue's min offset."""
        offset = self.broker.offsets.query(CID_SYS_RMQ_TRANS, topic, queue_id)
        if offset == -1:
            offset = self.broker.store.min_offset(topic, queue_id)
        return offset

    def _update_offset(self, topic: str, queue_id: int, offset: int) -> None:
        self.broker.offsets.commit(CID_SYS_RMQ_TRANS, topic, queue_id, offset)

    async def _put(self, msg: MessageToStore) -> PutResult:
        put = self.broker.store.put(msg)
        if isinstance(put, PutResult):
            return put
        return await put

    def _host(self) -> tuple[str, int]:
        return self.broker.store_host

    # ------------------------------------------------------------------ op records

    async def delete_prepare_message(self, half: StoredMessage) -> bool:
        """``deletePrepareMessage``: the op record ``d`` with the half's queue offset."""
        values = {MessageConst.PROPERTY_TAGS: REMOVE_TAG, MessageConst.PROPERTY_WAIT_STORE_MSG_OK: "true"}
        # Message(topic, tags, body) puts TAGS then WAIT; the UNIQ_KEY Java sets afterwards goes
        # into the map only, after the string was written
        text = java_properties_text(tuple(values), values)
        op = MessageToStore(C.RMQ_SYS_TRANS_OP_HALF_TOPIC, half.queue_id, str(half.queue_offset).encode(),
                            _now_ms(), self._host(), 0, text, 0, wait_store_msg_ok=False)
        result = await self._put(op)
        if result.status is not PutStatus.PUT_OK:
            log.error("Transaction op message write failed. queueId is %d", half.queue_id)
            return False
        return True

    # ------------------------------------------------------------------ END_TRANSACTION

    async def end_transaction(self, conn: RemotingConnection, req: RemotingCommand,
                              h: EndTransactionRequestHeader) -> RemotingCommand | None:
        """``EndTransactionProcessor.processRequest`` (``h``: the request's decoded header)."""
        if self.broker.is_slave:
            log.warning("Message store is slave mode, so end transaction is forbidden. ")
            return req.response(ResponseCode.SLAVE_NOT_AVAILABLE)
        kind = h.commit_or_rollback
        if kind not in (_COMMIT, _ROLLBACK):
            if kind == _NOT_TYPE:
                log.warning("the producer[%s:%d] left transaction %s pending%s", conn.peer[0], conn.peer[1],
                            h.msg_id, " (check)" if h.from_transaction_check else "")
            return None
        if kind == _ROLLBACK or h.from_transaction_check:
            log.warning("the producer[%s:%d] %s the message %s%s", conn.peer[0], conn.peer[1],
                        "commits" if kind == _COMMIT else "rolls back", h.msg_id,
                        " (answering a check)" if h.from_transaction_check else "")
        half = self.broker.store.message_at(h.commit_log_offset)
        if half is None:
            return req.response(ResponseCode.SYSTEM_ERROR, "Find prepared transaction message failed")
        failed = self._check_prepare_message(req, half, h)
        if failed is not None:
            return failed
        if kind == _ROLLBACK:
            await self.delete_prepare_message(half)
            return req.response(ResponseCode.SUCCESS)
        final = self._end_message(half, h)
        result = await self._put(final)
        response = _final_response(req, result, self.broker.config.max_message_size)
        if response.code == ResponseCode.SUCCESS:
            await self.delete_prepare_message(half)
        return response

    @staticmethod
    def _check_prepare_message(req: RemotingCommand, half: StoredMessage,
                               h: EndTransactionRequestHeader) -> RemotingCommand | None:
        """``checkPrepareMessage``."""
        if half.properties.get(_PGROUP) != h.producer_group:
            return req.response(ResponseCode.SYSTEM_ERROR, "The producer group wrong")
        if half.queue_offset != h.tran_state_table_offset:
            return req.response(ResponseCode.SYSTEM_ERROR, "The transaction state table offset wrong")
        if half.physical_offset != h.commit_log_offset:
            return req.response(ResponseCode.SYSTEM_ERROR, "The commit log offset wrong")
        return None

    @staticmethod
    def _end_message(half: StoredMessage, h: EndTransactionRequestHeader) -> MessageToStore:
        """``endMessageTransaction``: the half message under its real topic and queue. Java writes
        the properties string before it clears REAL_TOPIC, REAL_QID and TRAN_MSG from the map, so
        the stored string keeps them (as the half's string has them, in HashMap order)."""
        props = half.properties
        text = java_properties_text(tuple(props), props)
        sys_flag = (half.sys_flag & ~_TRAN_MASK & ~_HOST_V6) | _COMMIT
        return MessageToStore(
            props.get(_REAL_TOPIC, ""), int(props.get(_REAL_QID, "0")), half.body, half.born_timestamp,
            (half.born_host.host, half.born_host.port), half.flag, text, sys_flag, half.reconsume_times,
            prepared_transaction_offset=h.commit_log_offset, wait_store_msg_ok=False,
        )

    # ------------------------------------------------------------------ the check

    def _half_queues(self) -> list[int]:
        """``fetchMessageQueues`` through ``selectTopicConfig``: the half topic is created (1
        queue, read-write) and registered the first time."""
        tc, created = self.broker.topics.create_in_send_back(
            C.RMQ_SYS_TRANS_HALF_TOPIC, 1, C.PERM_WRITE | C.PERM_READ, 0)
        if created:
            self.broker.register_soon(oneway=True)
        return list(range(tc.read_queue_nums))

    def _fill_op_remove_map(self, remove: dict[int, int], queue_id: int, op_offset: int, mini: int,
                            done: list[int]) -> _Pull:
        """``fillOpRemoveMap``: up to 32 op records from ``op_offset``."""
        pr = self._pull(C.RMQ_SYS_TRANS_OP_HALF_TOPIC, queue_id, op_offset, 32)
        if pr.status in ("OFFSET_ILLEGAL", "NO_MATCHED_MSG"):
            self._update_offset(C.RMQ_SYS_TRANS_OP_HALF_TOPIC, queue_id, pr.next_begin_offset)
            return pr
        if pr.status == "NO_NEW_MSG" or pr.messages is None:
            return pr
        for op in pr.messages:
            half_offset = _long(op.body.decode("utf-8", "replace"))
            if op.properties.get(MessageConst.PROPERTY_TAGS) == REMOVE_TAG:
                if half_offset < mini:
                    done.append(op.queue_offset)
                else:
                    remove[half_offset] = op.queue_offset
            else:
                log.error("Found a illegal tag in opMessageExt= %s", op)
        return pr

    async def check(self) -> None:
        """One pass of ``TransactionalMessageServiceImpl.check``."""
        cfg = self.broker.config
        timeout = cfg.int("transactionTimeOut")
        check_max = cfg.int("transactionCheckMax")
        half_topic, op_topic = C.RMQ_SYS_TRANS_HALF_TOPIC, C.RMQ_SYS_TRANS_OP_HALF_TOPIC
        for qid in self._half_queues():
            start = _now_ms()
            half_offset = self._consume_offset(half_topic, qid)
            op_offset = self._consume_offset(op_topic, qid)
            if half_offset < 0 or op_offset < 0:
                continue
            done: list[int] = []
            remove: dict[int, int] = {}
            pr = self._fill_op_remove_map(remove, qid, op_offset, half_offset, done)
            null_count = 1
            new_offset = half_offset
            i = half_offset
            while True:
                if _now_ms() - start > MAX_PROCESS_TIME_LIMIT_MS:
                    break
                if i in remove:
                    done.append(remove.pop(i))
                else:
                    got = self._pull(half_topic, qid, i, 1)
                    msg = got.messages[0] if got.messages else None
                    if msg is None:
                        null_count += 1
                        if null_count - 1 > MAX_RETRY_COUNT_WHEN_HALF_NULL:
                            break
                        if got.status == "NO_NEW_MSG":
                            break
                        i = new_offset = got.next_begin_offset
                        continue
                    props = dict(msg.properties)
                    order = list(props)
                    if self._need_discard(props, order, check_max) or self._need_skip(msg):
                        await self._resolve_discard(msg, props, order)
                        new_offset = i = i + 1
                        continue
                    if msg.store_timestamp >= start:
                        break
                    age = _now_ms() - msg.born_timestamp
                    immunity = timeout
                    immunity_text = props.get(_IMMUNITY)
                    if immunity_text is not None:
                        immunity = _long(immunity_text)
                        immunity = timeout if immunity == -1 else immunity * 1000
                        if age < immunity and await self._check_prepare_queue_offset(remove, done, msg, props,
                                                                                    order):
                            new_offset = i = i + 1
                            continue
                    elif 0 <= age < immunity:
                        break
                    ops = pr.messages
                    need_check = ((ops is None and age > immunity)
                                  or (ops is not None and ops[-1].born_timestamp - start > timeout)
                                  or age <= -1)
                    if need_check:
                        renewed = await self._put_back(msg, props, order)
                        if renewed is None:
                            continue
                        self._send_check(renewed)
                    else:
                        pr = self._fill_op_remove_map(remove, qid, pr.next_begin_offset, half_offset, done)
                        continue
                new_offset = i = i + 1
            if new_offset != half_offset:
                self._update_offset(half_topic, qid, new_offset)
            new_op = _calculate_op_offset(done, op_offset)
            if new_op != op_offset:
                self._update_offset(op_topic, qid, new_op)
        self.passes += 1

    @staticmethod
    def _need_discard(props: dict[str, str], order: list[str], check_max: int) -> bool:
        """``needDiscard``: counts the checks in TRANSACTION_CHECK_TIMES."""
        text = props.get(_CHECK_TIMES)
        times = 1
        if text is not None:
            try:
                times = int(text)
            except ValueError:
                times = -1
            if times >= check_max:
                return True
            times += 1
        if _CHECK_TIMES not in props:
            order.append(_CHECK_TIMES)
        props[_CHECK_TIMES] = str(times)
        return False

    def _need_skip(self, msg: StoredMessage) -> bool:
        """``needSkip``: born longer ago than the store keeps files."""
        reserved_h = self.broker.config.int("fileReservedTime")
        return _now_ms() - msg.born_timestamp > reserved_h * 3600 * 1000

    def _renewed(self, msg: StoredMessage, props: dict[str, str], order: list[str]) -> MessageToStore:
        """``renewHalfMessageInner``: the half message again, properties written from the map."""
        return MessageToStore(
            msg.topic, msg.queue_id, msg.body, msg.born_timestamp, (msg.born_host.host, msg.born_host.port),
            msg.flag, java_properties_text(tuple(order), props), msg.sys_flag & ~_HOST_V6,
            msg.reconsume_times, wait_store_msg_ok=False,
        )

    async def _put_back(self, msg: StoredMessage, props: dict[str, str],
                        order: list[str]) -> StoredMessage | None:
        """``putBackHalfMsgQueue``: the new copy, as stored (its offsets are what the check names)."""
        result = await self._put(self._renewed(msg, props, order))
        if result.status is not PutStatus.PUT_OK:
            log.error("PutBackToHalfQueueReturnResult write failed, topic: %s, queueId: %d", msg.topic,
                      msg.queue_id)
            return None
        return self.broker.store.message_at(result.wrote_offset)

    async def _check_prepare_queue_offset(self, remove: dict[int, int], done: list[int], msg: StoredMessage,
                                          props: dict[str, str], order: list[str]) -> bool:
        """``checkPrepareQueueOffset``: True skips the message."""
        text = props.get(_PREPARED_QUEUE_OFFSET)
        if text is not None:
            prepared = _long(text)
            if prepared == -1:
                return False
            if prepared in remove:
                done.append(remove.pop(prepared))
                return True
        else:
            order.append(_PREPARED_QUEUE_OFFSET)
            props[_PREPARED_QUEUE_OFFSET] = str(msg.queue_offset)
        # putImmunityMsgBackToHalfQueue
        result = await self._put(self._renewed(msg, props, order))
        return result.status is PutStatus.PUT_OK

    async def _resolve_discard(self, msg: StoredMessage, props: dict[str, str], order: list[str]) -> None:
        """``DefaultTransactionalMessageCheckListener.resolveDiscardMsg``: to
        ``TRANS_CHECK_MAX_TIME_TOPIC``."""
        log.error("MsgExt %s has been checked too many times, so discard it by moving it to system topic "
                  "TRANS_CHECK_MAXTIME_TOPIC", props.get(_UNIQ))
        tc, created = self.broker.topics.create_in_send_back(
            C.RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, TCMT_QUEUE_NUMS, C.PERM_READ | C.PERM_WRITE, 0)
        if created:
            self.broker.register_soon(oneway=True)
        queue_id = random.randrange(99999999) % TCMT_QUEUE_NUMS
        inner = MessageToStore(
            tc.topic_name or C.RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, queue_id, msg.body, msg.born_timestamp,
            (msg.born_host.host, msg.born_host.port), msg.flag, java_properties_text(tuple(order), props),
            msg.sys_flag & ~_HOST_V6, msg.reconsume_times, wait_store_msg_ok=False,
        )
        await self._put(inner)

    async def resume_check(self, req: RemotingCommand, msg_id: str | None) -> RemotingCommand:
        """``AdminBrokerProcessor.resumeCheckHalfMessage``: the message at the offset id written
        again to the half topic, queue 0, with ``TRANSACTION_CHECK_TIMES`` 0 (the properties
        string rewritten from the map, as ``toMessageExtBrokerInner``)."""
        failed = "Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC."
        msg = None
        if msg_id is not None:
            try:
                msg = self.broker.store.message_at(decode_offset_msg_id(msg_id).offset)
            except DecodeError:
                msg = None
        if msg is None:
            log.error(failed)
            return req.response(ResponseCode.SYSTEM_ERROR, failed)
        props = dict(msg.properties)
        order = list(props)
        if _CHECK_TIMES not in props:
            order.append(_CHECK_TIMES)
        props[_CHECK_TIMES] = "0"
        inner = MessageToStore(
            C.RMQ_SYS_TRANS_HALF_TOPIC, 0, msg.body, msg.born_timestamp,
            (msg.born_host.host, msg.born_host.port), msg.flag, java_properties_text(tuple(order), props),
            msg.sys_flag & ~_HOST_V6, msg.reconsume_times, wait_store_msg_ok=False,
        )
        result = await self._put(inner)
        if result.status is not PutStatus.PUT_OK:
            not_put = "Put message back to RMQ_SYS_TRANS_HALF_TOPIC failed."
            log.error(not_put)
            return req.response(ResponseCode.SYSTEM_ERROR, not_put)
        log.info("Put message back to RMQ_SYS_TRANS_HALF_TOPIC. real topic=%s", props.get(_REAL_TOPIC))
        return req.response(ResponseCode.SUCCESS)

    def _send_check(self, msg: StoredMessage) -> None:
        """``sendCheckMessage``: a oneway CHECK_TRANSACTION_STATE to a channel of the group."""
        uniq = msg.properties.get(_UNIQ)
        offset_id = create_offset_msg_id(msg.store_host.host, msg.store_host.port, msg.physical_offset)
        header = CheckTransactionStateRequestHeader(
            tran_state_table_offset=msg.queue_offset, commit_log_offset=msg.physical_offset,
            msg_id=uniq, transaction_id=uniq, offset_msg_id=offset_id)
        real = StoredMessage(
            topic=msg.properties.get(_REAL_TOPIC, msg.topic), body=msg.body, properties=msg.properties,
            queue_id=int(msg.properties.get(_REAL_QID, str(msg.queue_id))), flag=msg.flag,
            queue_offset=msg.queue_offset, physical_offset=msg.physical_offset, sys_flag=msg.sys_flag,
            born_timestamp=msg.born_timestamp, born_host=msg.born_host, store_timestamp=msg.store_timestamp,
            store_host=msg.store_host, reconsume_times=msg.reconsume_times,
            prepared_transaction_offset=msg.prepared_transaction_offset, properties_text=msg.properties_text,
        )
        group = msg.properties.get(_PGROUP, "")
        channel = self.broker.producers.available_channel(group)
        if channel is None:
            log.warning("Check transaction failed, channel is null. groupId=%s", group)
            return
        cmd = request(RequestCode.CHECK_TRANSACTION_STATE, header, encode_stored_message(real), oneway=True)
        try:
            channel.oneway(cmd)
        except (RemotingIOError, OSError) as exc:
            log.error("Check transaction failed because invoke producer exception. group=%s, msgId=%s, "
                      "error=%s", group, offset_id, exc)


def _calculate_op_offset(done: list[int], old: int) -> int:
    """``calculateOpOffset``: past the run of done op offsets that starts at the old offset."""
    new = old
    for v in sorted(done):
        if v == new:
            new += 1
        else:
            break
    return new


def _final_response(req: RemotingCommand, result: PutResult, max_message_size: int) -> RemotingCommand:
    """``sendFinalMessage``: the store's status as END_TRANSACTION's answer."""
    status = result.status
    if status in (PutStatus.PUT_OK, PutStatus.FLUSH_DISK_TIMEOUT, PutStatus.FLUSH_SLAVE_TIMEOUT,
                  PutStatus.SLAVE_NOT_AVAILABLE):
        return req.response(ResponseCode.SUCCESS)
    if status is PutStatus.CREATE_MAPPED_FILE_FAILED:
        return req.response(ResponseCode.SYSTEM_ERROR, "Create mapped file failed.")
    if status in (PutStatus.MESSAGE_ILLEGAL, PutStatus.PROPERTIES_SIZE_EXCEEDED):
        return req.response(
            ResponseCode.MESSAGE_ILLEGAL,
            "The message is illegal, maybe msg body or properties length not matched. msg body length "
            f"limit {max_message_size}B, msg properties length limit 32KB.")
    if status is PutStatus.SERVICE_NOT_AVAILABLE:
        return req.response(ResponseCode.SERVICE_NOT_AVAILABLE, "Service not available now.")
    if status is PutStatus.OS_PAGECACHE_BUSY:
        return req.response(ResponseCode.SYSTEM_ERROR, "OS page cache busy, please try another machine")
    if status is PutStatus.UNKNOWN_ERROR:
        return req.response(ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR")
    return req.response(ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR DEFAULT")


def end_transaction(broker: Broker, conn: RemotingConnection,
                    req: RemotingCommand) -> Awaitable[RemotingCommand | None]:
    """The END_TRANSACTION (37) handler. The header is decoded before the coroutine starts, so
    that one that does not decode is the peer's fault (SYSTEM_ERROR, no traceback) as for the
    other requests."""
    h = EndTransactionRequestHeader.from_ext(req.ext_fields)
    return broker.transactions.end_transaction(conn, req, h)


def resume_check_half_message(broker: Broker, conn: RemotingConnection,
                              req: RemotingCommand) -> Awaitable[RemotingCommand]:
    """The RESUME_CHECK_HALF_MESSAGE (323) handler."""
    h = ResumeCheckHalfMessageRequestHeader.from_ext(req.ext_fields)
    return broker.transactions.resume_check(req, h.msg_id)
