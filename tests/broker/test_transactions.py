# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Transactional messages on the reference broker (4.9.x semantics), driven through the library's
transactional producer (wire.admin.transaction) and raw requests: commit, rollback and
unknown-then-check, the op records, the discard after transactionCheckMax checks, the checks
named in END_TRANSACTION, RESUME_CHECK_HALF_MESSAGE, and the system topics appearing as on a Java
broker."""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path

import pytest

from reference_broker.broker import Broker
from tests.broker.helpers import client, run, running_cluster, send_request
from wire import RemotingCommand, ResponseCode
from wire.admin.client import AdminClient
from wire.admin.message import message_consume
from wire.admin.transaction import message_send_transaction, resume_check
from wire.headers import EndTransactionRequestHeader
from wire.message import decode_messages, decode_offset_msg_id

FAST = {"transactionCheckInterval": "200", "transactionTimeOut": "100"}


async def _wait_for(cond, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        assert loop.time() < end, "condition not reached"
        await asyncio.sleep(0.02)


def _queue(b: Broker, topic: str) -> list[tuple[int, bytes, dict[str, str]]]:
    out = []
    for q in b.store.queue_ids(topic):
        r = b.store.get_messages("t", topic, q, 0, 64)
        out += [(m.queue_offset, m.body, dict(m.properties)) for m in decode_messages(b"".join(r.messages))]
    return out


def test_commit_rollback_and_unknown_then_check(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_cluster(tmp_path, **FAST) as (ns, b):
            async with AdminClient([ns.address]) as c:
                results = {}
                for outcome, answer in (("commit", "commit"), ("rollback", "commit"), ("unknown", "commit"),
                                        ("unknown", "rollback")):
                    r = await message_send_transaction(c, "TxTopic", f"{outcome}/{answer}".encode(),
                                                       outcome=outcome, check_answer=answer, wait=20)
                    assert r.send.status == "SEND_OK"
                    results[(outcome, answer)] = r
                assert [len(r.checks) for r in results.values()] == [0, 0, 1, 1]
                assert results[("unknown", "rollback")].final == "rollback"
                await _wait_for(lambda: len(_queue(b, "RMQ_SYS_TRANS_OP_HALF_TOPIC")) == 4)
                got = await message_consume(c, "TxTopic")
                assert sorted(m.body for m in got.messages) == [b"commit/commit", b"unknown/commit"]
                committed = next(m for m in got.messages if m.body == b"commit/commit")
                # the committed message keeps what Java's endMessageTransaction keeps
                assert committed.properties["TRAN_MSG"] == "true"
                assert committed.properties["PGROUP"] == results[("commit", "commit")].producer_group
                assert committed.sys_flag & 0xC == 0x8
            # the half topic exists (first check pass) and is registered; the op topic is not a topic
            assert b.topics.select("RMQ_SYS_TRANS_HALF_TOPIC") is not None
            assert b.topics.select("RMQ_SYS_TRANS_OP_HALF_TOPIC") is None
            ops = _queue(b, "RMQ_SYS_TRANS_OP_HALF_TOPIC")
            assert all(p["TAGS"] == "d" for _, _, p in ops)

    run(main(), 90)


def test_discard_after_check_max(tmp_path: Path) -> None:
    """A producer that never answers: checked transactionCheckMax times, then discarded to
    TRANS_CHECK_MAX_TIME_TOPIC, never delivered."""

    async def main() -> None:
        async with running_cluster(tmp_path, transactionCheckMax="2", **FAST) as (ns, b):
            async with AdminClient([ns.address]) as c:
                r = await message_send_transaction(c, "TxTopic", b"never", outcome="unknown",
                                                   check_answer="unknown", wait=3)
                assert len(r.checks) >= 2
                await _wait_for(lambda: b.topics.select("TRANS_CHECK_MAX_TIME_TOPIC") is not None)
                discarded = _queue(b, "TRANS_CHECK_MAX_TIME_TOPIC")
                assert [body for _, body, _ in discarded] == [b"never"]
                assert discarded[0][2]["TRANSACTION_CHECK_TIMES"] == "2"
                assert b.store.max_offset("TxTopic", r.send.queue_id) == 0
                # mqadmin resumeCheckHalfMessage: back to the half topic with its count at 0, and
                # checked again (nobody answers: discarded again)
                half = b.store.max_offset("RMQ_SYS_TRANS_HALF_TOPIC", 0)
                msg = await resume_check(c, r.send.msg_id, topic="TRANS_CHECK_MAX_TIME_TOPIC")
                assert msg.topic == "TRANS_CHECK_MAX_TIME_TOPIC" and msg.body == b"never"
                assert b.store.max_offset("RMQ_SYS_TRANS_HALF_TOPIC", 0) > half
                again = b.store.queue_message("RMQ_SYS_TRANS_HALF_TOPIC", 0, half)
                assert again is not None and again.body == b"never"
                assert again.properties["TRANSACTION_CHECK_TIMES"] == "0"
                assert again.properties["REAL_TOPIC"] == "TxTopic"
                await _wait_for(lambda: len(_queue(b, "TRANS_CHECK_MAX_TIME_TOPIC")) == 2)
            # an id that names no message: Java's remark
            conn = await client(b)
            for ext in ({}, {"msgId": "nonsense"}, {"msgId": "7F00000100002A9F00000000FFFFFFFF"}):
                ans = await conn.request(RemotingCommand.request(323, ext))
                assert (ans.code, ans.remark) == (
                    ResponseCode.SYSTEM_ERROR,
                    "Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC.")
            await conn.aclose()

    run(main(), 90)


def test_end_transaction_checks_and_slave(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_cluster(tmp_path) as (_, b):
            conn = await client(b)
            sent = await conn.request(send_request("TxTopic", b"half", extra_props={"TRAN_MSG": "true",
                                                                                     "PGROUP": "PG"},
                                                   sys_flag=0x4))
            assert sent.code == ResponseCode.SUCCESS
            offset = decode_offset_msg_id(sent.ext_fields["msgId"]).offset
            qoff = int(sent.ext_fields["queueOffset"])
            # the half message: in the half topic, queue 0, REAL_TOPIC/REAL_QID, no transaction bits
            (m,) = decode_messages(b"".join(b.store.get_messages("t", "RMQ_SYS_TRANS_HALF_TOPIC", 0, 0, 1).messages))
            assert (m.properties["REAL_TOPIC"], m.properties["REAL_QID"], m.sys_flag & 0xC) == ("TxTopic", "0", 0)

            def end(**kw: object) -> RemotingCommand:
                fields: dict = dict(producer_group="PG", tran_state_table_offset=qoff, commit_log_offset=offset,
                                    commit_or_rollback=8, msg_id="X")
                fields.update(kw)
                return RemotingCommand.request(37, EndTransactionRequestHeader(**fields).to_ext())

            for kw, remark in (({"producer_group": "other"}, "The producer group wrong"),
                               ({"tran_state_table_offset": qoff + 1}, "The transaction state table offset wrong"),
                               ({"commit_log_offset": offset + 1}, "Find prepared transaction message failed")):
                r = await conn.request(end(**kw))
                assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, remark)
            r = await conn.request(end())
            assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
            assert b.store.max_offset("TxTopic", 0) == 1
            await conn.aclose()

    run(main(), 60)


def test_force_register_false_asks_query_data_version(tmp_path: Path) -> None:
    """forceRegister=false: the periodic registration asks QUERY_DATA_VERSION (322) first and
    registers only when the name server's data version differs (BrokerOuterAPI.needRegister)."""

    async def main() -> None:
        async with running_cluster(tmp_path, forceRegister="false") as (_, b):
            registered: list[int] = []
            real = b.outer.register_broker_all

            async def counting(*args, **kw):  # type: ignore[no-untyped-def]
                registered.append(1)
                return await real(*args, **kw)

            b.outer.register_broker_all = counting  # type: ignore[method-assign]
            await b.register_all(force=False)
            assert registered == []  # the name server has this data version
            b.topics.data_version.next_version()
            await b.register_all(force=False)
            assert registered == [1]
            await b.register_all(force=False)
            assert registered == [1]

    run(main(), 60)


@pytest.mark.provokes_error_log(r"^Check failed$")
def test_the_check_service_outlives_a_failed_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    # a pass that meets a disk's (or the store's) error logs one line; any other exception is a
    # bug of ours, logged with its traceback; the service goes on with its next pass either way
    async def main() -> None:
        async with running_cluster(tmp_path, **FAST) as (_, b):
            service = b.transactions
            real = service.check
            calls: list[int] = []

            async def check() -> None:
                calls.append(1)
                if len(calls) == 1:
                    raise OSError(errno.EIO, "Input/output error")
                if len(calls) == 2:
                    raise KeyError("a bug")
                await real()

            monkeypatch.setattr(service, "check", check)
            await _wait_for(lambda: len(calls) >= 3)

    run(main(), 60)
    failed = [r for r in caplog.records if r.getMessage().startswith("Check failed")]
    assert [r.exc_info is not None for r in failed] == [False, True]
    assert "Input/output error" in failed[0].getMessage()
