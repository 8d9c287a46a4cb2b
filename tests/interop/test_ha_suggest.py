# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``suggestWhichBrokerId`` in pull answers, as a Java 4.9.8 master decides it and as ours does, for the
same settings: ``slaveReadEnable`` off (always the master, 0), on with the data in memory (the group's
``brokerId``, 0), and on with the data out of memory (``accessMessageInMemoryMaxRatio`` 0: any read
is "too far behind", the group's ``whichBrokerWhenConsumeSlowly``, 1). The Java broker's settings
are changed at run time with UPDATE_BROKER_CONFIG (Java reads them on every pull); ours start with
them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from reference_broker.broker import Broker
from tests.broker.helpers import broker_config, pull_request, send_request
from tests.javakit import JavaServers
from wire import RemotingCommand, ResponseCode
from wire.aio import connect
from wire.bodies import encode_properties

CASES = {
    "slaveReadEnable=false": {"slaveReadEnable": "false", "accessMessageInMemoryMaxRatio": "0"},
    "in memory": {"slaveReadEnable": "true", "accessMessageInMemoryMaxRatio": "40"},
    "out of memory": {"slaveReadEnable": "true", "accessMessageInMemoryMaxRatio": "0"},
}
EXPECTED = {"slaveReadEnable=false": "0", "in memory": "0", "out of memory": "1"}


async def _suggestions(port: int, settings: dict[str, str] | None) -> list[str]:
    c = await connect("127.0.0.1", port)
    try:
        if settings is not None:
            r = await c.request(RemotingCommand.request(25, None, encode_properties(settings)))
            assert r.code == ResponseCode.SUCCESS, r.remark
        for _ in range(4):
            r = await c.request(send_request("SuggestTopic", b"s" * 200, queue_id=0), timeout=10)
            assert r.code == ResponseCode.SUCCESS, r.remark
        out = []
        for offset in (0, 3):
            r = await c.request(pull_request("SuggestGroup", "SuggestTopic", 0, offset), timeout=10)
            assert r.code == ResponseCode.SUCCESS, (r.code, r.remark)
            out.append(r.ext_fields["suggestWhichBrokerId"])
        return out
    finally:
        await c.aclose()


def test_suggest_which_broker_id_as_java(java_servers: JavaServers, tmp_path: Path) -> None:
    java = java_servers.broker("4.9.8", name="broker-sg")
    java_answers = {case: asyncio.run(_suggestions(java.port, keys)) for case, keys in CASES.items()}

    async def ours(case: str) -> list[str]:
        cfg = broker_config(tmp_path / case.replace(" ", "_").replace("=", "_"), **CASES[case])
        async with Broker(cfg, host="127.0.0.1", port=0) as b:
            return await _suggestions(b.port, None)

    our_answers = {case: asyncio.run(ours(case)) for case in CASES}
    assert our_answers == java_answers
    assert {case: set(a) for case, a in java_answers.items()} == {c: {v} for c, v in EXPECTED.items()}
