# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Delay levels, CONSUMER_SEND_MSG_BACK, retry topics and the DLQ, over real sockets with a short
``messageDelayLevel``."""

from __future__ import annotations

import asyncio
import errno
import logging
from pathlib import Path

import pytest

from reference_broker.broker import schedule
from reference_broker.broker.broker import Broker
from reference_broker.broker.schedule import delivered_message
from tests.broker.helpers import client, messages, pull_request, run, running_broker, send_request
from wire import RemotingCommand, ResponseCode
from wire.aio import RemotingConnection
from wire.bodies import DelayOffsetSerializeWrapper
from wire.message import StoredMessage, create_offset_msg_id, decode_stored_message, encode_stored_message

RC = ResponseCode


async def pull_until(c: RemotingConnection, group: str, topic: str, queue_id: int, offset: int,
                     timeout: float = 8.0) -> list[StoredMessage]:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        r = await c.request(pull_request(group, topic, queue_id, offset))
        if r.code == RC.SUCCESS:
            return messages(r)
        assert loop.time() < end, f"nothing in {topic}:{queue_id} from {offset}: {r.remark}"
        await asyncio.sleep(0.05)


def test_delay_level_delivers_later(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path, messageDelayLevel="1s 2s") as b:
            c = await client(b)
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            r = await c.request(send_request("DelayT", b"later", queue_id=2, extra_props={"DELAY": "1"}))
            assert r.code == RC.SUCCESS and r.ext_fields["queueId"] == "2"
            assert b.store.max_offset("SCHEDULE_TOPIC_XXXX", 0) == 1
            early = await c.request(pull_request("G", "DelayT", 2, 0))
            assert early.code in (RC.PULL_NOT_FOUND, RC.PULL_OFFSET_MOVED)
            (m,) = await pull_until(c, "G", "DelayT", 2, 0)
            assert 0.9 < loop.time() - t0 < 8.0
            assert m.body == b"later" and m.topic == "DelayT" and m.queue_id == 2
            # Java keeps DELAY/REAL_TOPIC/REAL_QID (and WAIT) in the delivered message's properties
            assert m.properties["REAL_TOPIC"] == "DelayT" and m.properties["REAL_QID"] == "2"
            assert m.properties["DELAY"] == "1" and m.properties["CLUSTER"] == "DefaultCluster"
            offsets = await c.request(RemotingCommand.request(45))
            assert DelayOffsetSerializeWrapper.decode(offsets.body).offset_table == {1: 1}
            # a level past the last one is capped
            await c.request(send_request("DelayT", b"capped", queue_id=2, extra_props={"DELAY": "9"}))
            assert b.store.max_offset("SCHEDULE_TOPIC_XXXX", 1) == 1
            await c.aclose()
        text = (tmp_path / "config" / "delayOffset.json").read_text()
        assert DelayOffsetSerializeWrapper.decode(text).offset_table[1] == 1
        # the offsets survive a restart: the first message is not delivered twice
        async with running_broker(tmp_path, messageDelayLevel="1s 2s") as b:
            assert b.schedule.offsets[1] == 1
            c = await client(b)
            (m,) = await pull_until(c, "G", "DelayT", 2, 1)
            assert m.body == b"capped"
            await asyncio.sleep(0.3)
            r = await c.request(pull_request("G", "DelayT", 2, 2))
            assert r.code == RC.PULL_NOT_FOUND
            await c.aclose()

    run(main(), timeout=60)


def test_send_back_retry_then_dlq(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_broker(tmp_path, messageDelayLevel="1s 1s") as b:
            c = await client(b)
            await c.request(send_request("Orig", b"please retry", tags="TagR", keys="key-r", uniq="UNIQ-R"))
            (orig,) = messages(await c.request(pull_request("RG", "Orig", 0, 0)))

            def back(m: StoredMessage, delay: int = 0, max_times: int = 2) -> RemotingCommand:
                return RemotingCommand.request(36, {"offset": m.physical_offset, "group": "RG", "delayLevel": delay,
                                                    "originMsgId": "x", "originTopic": "Orig",
                                                    "unitMode": False, "maxReconsumeTimes": max_times},
                                               version=409)

            r = await c.request(back(orig))
            assert (r.code, r.remark) == (RC.SUCCESS, None)
            retry_tc = b.topics.select("%RETRY%RG")
            assert retry_tc is not None and retry_tc.write_queue_nums == 1
            (first,) = await pull_until(c, "RG", "%RETRY%RG", 0, 0)
            assert first.body == b"please retry" and first.reconsume_times == 1
            p = first.properties
            assert p["RETRY_TOPIC"] == "Orig" and p["TAGS"] == "TagR" and p["KEYS"] == "key-r"
            assert p["ORIGIN_MESSAGE_ID"] == create_offset_msg_id("127.0.0.1", b.port, orig.physical_offset)
            assert p["WAIT"] == "false" and p["DELAY"] == "2"  # 3 + reconsumeTimes, capped at the last level
            assert first.born_timestamp == orig.born_timestamp and first.born_host == orig.born_host
            r = await c.request(back(first, delay=1))
            (second,) = await pull_until(c, "RG", "%RETRY%RG", 0, 1)
            assert second.reconsume_times == 2 and second.properties["ORIGIN_MESSAGE_ID"] == p["ORIGIN_MESSAGE_ID"]
            # reconsumeTimes reached maxReconsumeTimes: the DLQ, at once
            assert (await c.request(back(second))).code == RC.SUCCESS
            dlq_tc = b.topics.select("%DLQ%RG")
            assert dlq_tc is not None and (dlq_tc.write_queue_nums, dlq_tc.perm) == (1, 6)
            (dead,) = messages(await c.request(pull_request("RG", "%DLQ%RG", 0, 0)))
            assert dead.reconsume_times == 3 and dead.properties["DELAY"] == "0" and dead.body == b"please retry"
            # a negative delay level also means the DLQ
            await c.request(back(orig, delay=-1, max_times=16))
            assert b.store.max_offset("%DLQ%RG", 0) == 2
            r = await c.request(back(orig).replace(ext_fields={**back(orig).ext_fields, "offset": "123456789"}))
            assert (r.code, r.remark) == (RC.SYSTEM_ERROR, "look message by offset failed, 123456789")
            # a client sending to the retry topic itself, past the maximum: the DLQ too
            r = await c.request(send_request("%RETRY%RG", b"direct", reconsume_times=5, max_reconsume_times=3))
            assert r.code == RC.SUCCESS and b.store.max_offset("%DLQ%RG", 0) == 3
            await c.aclose()

    run(main(), timeout=60)


def test_delivered_message_keeps_the_record() -> None:
    stored = StoredMessage(
        topic="SCHEDULE_TOPIC_XXXX", body=b"b", queue_id=0, flag=7, born_timestamp=5, store_timestamp=6,
        properties={"DELAY": "1", "REAL_TOPIC": "T", "REAL_QID": "3", "WAIT": "true"}, reconsume_times=2)
    m = delivered_message(decode_stored_message(encode_stored_message(stored)))
    assert m is not None and (m.topic, m.queue_id, m.flag, m.reconsume_times, m.born_timestamp) == ("T", 3, 7, 2, 5)
    assert isinstance(m.properties, str) and "REAL_TOPIC\x01T" in m.properties
    no_real = StoredMessage(topic="SCHEDULE_TOPIC_XXXX", properties={"DELAY": "1"})
    assert delivered_message(no_real) is None


def test_a_delay_level_that_is_not_a_number_fails_the_send(tmp_path: Path) -> None:
    # mirrors CommitLog.asyncPutMessage: getDelayTimeLevel's NumberFormatException answers
    # SYSTEM_ERROR with its text and nothing is stored; a message of a prepared transaction type
    # never reads the level (only ordinary and committed ones are delayed)
    async def main() -> None:
        async with running_broker(tmp_path, messageDelayLevel="1s 2s") as b:
            c = await client(b)
            r = await c.request(send_request("DelayT", b"bad", extra_props={"DELAY": "soon"}))
            assert (r.code, r.remark) == (RC.SYSTEM_ERROR, 'java.lang.NumberFormatException: For input string: "soon"')
            assert b.store.max_offset("DelayT", 0) == 0 and b.store.max_offset("SCHEDULE_TOPIC_XXXX", 0) == 0
            r = await c.request(send_request("DelayT", b"prepared", sys_flag=0x4, extra_props={"DELAY": "soon"}))
            assert r.code == RC.SUCCESS and b.store.commitlog_max_offset() > 0
            await c.aclose()

    run(main(), timeout=60)


def _fail_once(monkeypatch: pytest.MonkeyPatch, b: Broker, exc: Exception) -> list[int]:
    """The store's queue lookup raises ``exc`` the first time the schedule service calls it."""
    real = b.store.queue_message
    calls: list[int] = []

    def lookup(topic: str, queue_id: int, offset: int) -> StoredMessage | None:
        calls.append(offset)
        if len(calls) == 1:
            raise exc
        return real(topic, queue_id, offset)

    monkeypatch.setattr(b.store, "queue_message", lookup)
    return calls


def _turn_failures(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "executeOnTimeup (level 1) failed" in r.getMessage()]


def test_a_level_outlives_a_disk_error_logged_as_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    # an error the level expects (the disk's, the store's) is one line without a traceback; the
    # level tries again after DELAY_FOR_A_PERIOD and delivers
    monkeypatch.setattr(schedule, "DELAY_FOR_A_PERIOD_S", 0.05)

    async def main() -> None:
        async with running_broker(tmp_path, messageDelayLevel="1s 2s") as b:
            calls = _fail_once(monkeypatch, b, OSError(errno.EIO, "Input/output error"))
            c = await client(b)
            r = await c.request(send_request("DelayT", b"later", extra_props={"DELAY": "1"}))
            assert r.code == RC.SUCCESS
            (m,) = await pull_until(c, "G", "DelayT", 0, 0)
            assert m.body == b"later" and len(calls) >= 2
            await c.aclose()

    run(main(), timeout=60)
    (rec,) = _turn_failures(caplog)
    assert rec.levelno == logging.ERROR and rec.exc_info is None
    assert "Input/output error" in rec.getMessage()


@pytest.mark.provokes_error_log(r"executeOnTimeup \(level 1\) failed")
def test_a_bug_in_a_level_turn_is_logged_with_its_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    # anything else is a bug of ours: its traceback is logged (which fails any test that does not
    # provoke it on purpose), and the level still outlives it
    monkeypatch.setattr(schedule, "DELAY_FOR_A_PERIOD_S", 0.05)

    async def main() -> None:
        async with running_broker(tmp_path, messageDelayLevel="1s 2s") as b:
            _fail_once(monkeypatch, b, KeyError("a bug"))
            c = await client(b)
            r = await c.request(send_request("DelayT", b"later", extra_props={"DELAY": "1"}))
            assert r.code == RC.SUCCESS
            (m,) = await pull_until(c, "G", "DelayT", 0, 0)
            assert m.body == b"later"
            await c.aclose()

    run(main(), timeout=60)
    (rec,) = _turn_failures(caplog)
    assert rec.exc_info is not None and rec.exc_info[0] is KeyError
