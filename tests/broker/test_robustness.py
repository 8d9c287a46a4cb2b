# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Requests with arbitrary header values and bodies: every one is answered with a response code
of the protocol, the connection stays usable, and the broker keeps serving normal traffic."""

from __future__ import annotations

import random
from pathlib import Path

from reference_broker.broker import HANDLERS
from tests.broker.helpers import client, messages, pull_request, run, running_broker, send_request
from wire import RemotingCommand, ResponseCode, SerializeType
from wire.headers import REQUEST_HEADERS, header_fields

VALUES = ["", "0", "1", "-1", "7", "2147483648", "99999999999999999999", "+3", "abc", "true", "FALSE",
          "\x01\x02", "TBW102", "%RETRY%G", "SCHEDULE_TOPIC_XXXX", "Fuzz", "a b", "é漢", "1.5", " 4"]
BODIES = [None, b"", b"{", b"{}", b'{"a":1}', b"\x00\x01\x02", b"[1,2]", b'{"clientID":"x","consumerDataSet":[{}]}',
          b"key=value\n", bytes(range(256))]
#: UPDATE_BROKER_CONFIG could legitimately switch writes off; the rest is fair game
SKIP = {25}


def _request(rng: random.Random, code: int) -> RemotingCommand:
    cls = REQUEST_HEADERS.get(code)
    keys = [f.key for f in header_fields(cls)] if cls is not None else []
    ext = {k: rng.choice(VALUES) for k in keys if rng.random() < 0.85}
    if rng.random() < 0.3:
        ext[rng.choice(["x", "AccessKey", "_UNIQUE_KEY_QUERY", "batch", "m"])] = rng.choice(VALUES)
    if code == 11 and "suspendTimeoutMillis" in ext:
        ext["suspendTimeoutMillis"] = "0"  # a valid long timeout would (rightly) park the pull
    st = rng.choice(list(SerializeType))
    return RemotingCommand.request(code, ext, rng.choice(BODIES), serialize_type=st,
                                   version=rng.choice([63, 121, 409]))


def test_arbitrary_requests_get_protocol_answers(tmp_path: Path) -> None:
    rng = random.Random(20261122)
    codes = [*sorted(set(HANDLERS) - SKIP), 9999, 0, -5]
    known = {int(c) for c in ResponseCode}

    async def main() -> None:
        async with running_broker(tmp_path, messageDelayLevel="1s") as b:
            c = await client(b)
            await c.request(send_request("Fuzz", b"seed"))
            for _ in range(600):
                req = _request(rng, rng.choice(codes))
                r = await c.request(req, timeout=10)
                assert r.is_response and r.code in known, (req, r)
                assert r.serialize_type is req.serialize_type or r.code == ResponseCode.SYSTEM_ERROR
            assert not c.is_closing
            assert (await c.request(send_request("Fuzz", b"after"))).code == ResponseCode.SUCCESS
            r = await c.request(pull_request("FuzzG", "Fuzz", 0, 0))
            assert b"after" in [m.body for m in messages(r)]
            await c.aclose()

    run(main(), timeout=120)
