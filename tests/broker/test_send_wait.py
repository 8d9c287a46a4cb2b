# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A send's WAIT property in SYNC_FLUSH: the broker drops WAIT from the stored properties (as Java
4.9.8 does) but still answers by it (``Message.isWaitStoreMsgOK``): a send with WAIT=false is
answered as soon as it is stored, one with WAIT=true or no WAIT only after the group commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.broker.helpers import client, messages, pull_request, run, running_broker, send_request
from wire import ResponseCode
from wire.message import encode_properties

RC = ResponseCode


@pytest.mark.parametrize(("wait", "extra", "code"), [
    ("false", {}, RC.SUCCESS),
    ("FALSE", {}, RC.SUCCESS),
    ("yes", {}, RC.SUCCESS),  # Boolean.parseBoolean: only "true" is true
    ("true", {}, RC.FLUSH_DISK_TIMEOUT),
    ("TRUE", {}, RC.FLUSH_DISK_TIMEOUT),
    (None, {}, RC.FLUSH_DISK_TIMEOUT),
    # the path that rewrites the properties (a delayed message) answers by WAIT too
    ("false", {"DELAY": "2"}, RC.SUCCESS),
    ("true", {"DELAY": "2"}, RC.FLUSH_DISK_TIMEOUT),
], ids=["false", "FALSE", "yes", "true", "TRUE", "absent", "delay-false", "delay-true"])
def test_sync_flush_answers_by_the_wait_property(tmp_path: Path, wait: str | None, extra: dict[str, str],
                                                 code: int) -> None:
    props = {"KEYS": "k1", "TAGS": "TagA", **extra}
    if wait is not None:
        props["WAIT"] = wait
    req = send_request("WaitTopic", b"body", queue_id=0)
    req = req.replace(ext_fields={**req.ext_fields, "i": encode_properties(props)})

    async def main() -> None:
        async with running_broker(tmp_path, flushDiskType="SYNC_FLUSH", syncFlushTimeout="300") as b:
            c = await client(b)
            # no group commit can end while the flush lock is held: only a send that does not
            # wait for it gets SUCCESS; the others get FLUSH_DISK_TIMEOUT after syncFlushTimeout
            lock = b.store.flusher.lock
            assert lock is not None
            await lock.acquire()
            try:
                r = await c.request(req, timeout=10)
            finally:
                lock.release()
            assert r.code == code, (r.code, r.remark)
            # stored either way, without WAIT in the stored properties
            assert r.ext_fields["msgId"] and r.ext_fields["queueOffset"] == "0"
            if not extra:
                p = await c.request(pull_request("G", "WaitTopic", 0, 0))
                (m,) = messages(p)
                assert m.body == b"body" and "WAIT" not in m.properties
                assert m.properties["KEYS"] == "k1" and m.properties["TAGS"] == "TagA"
            await c.aclose()

    run(main())
