# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``forceRegister=false`` between our servers and the real Java 4.9.8 ones: the periodic
registration asks QUERY_DATA_VERSION (322) first and sends REGISTER_BROKER only when the name
server says the topic table changed (``BrokerOuterAPI.needRegister``).

* our broker with a Java name server: unchanged, no registration; a new data version, one;
* a Java broker (registerNameServerPeriod=10000) with our name server: its periodic turns ask
  322, our name server answers unchanged, and no REGISTER_BROKER follows the one of its start."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from reference_broker.namesrv import NameServer
from tests.broker.helpers import namesrv_config, running_broker
from tests.javakit import JavaServers
from wire import RemotingCommand, RequestCode
from wire.aio import RemotingConnection

pytestmark = [pytest.mark.shared, pytest.mark.slow]


def test_our_broker_asks_a_java_name_server(java_servers: JavaServers, tmp_path: Path) -> None:
    ns = java_servers.namesrv("4.9.8")

    async def main() -> None:
        async with running_broker(tmp_path, ns.addr, forceRegister="false", brokerName="ours-a") as b:
            registered: list[int] = []
            real = b.outer.register_broker_all

            async def counting(*args, **kw):  # type: ignore[no-untyped-def]
                registered.append(1)
                return await real(*args, **kw)

            b.outer.register_broker_all = counting  # type: ignore[method-assign]
            await b.register_all(force=False)
            assert registered == []  # the Java name server holds this data version
            b.topics.data_version.next_version()
            await b.register_all(force=False)
            assert registered == [1]
            await b.register_all(force=False)
            assert registered == [1]

    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_java_broker_asks_our_name_server(java_servers: JavaServers, tmp_path: Path) -> None:
    seen: Counter[int] = Counter()
    answers: list[RemotingCommand] = []

    async def main() -> None:
        ns = NameServer(namesrv_config(tmp_path / "ns"), port=0)
        handle = ns._handle

        def counting(conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand | None:
            seen[req.code] += 1
            r = handle(conn, req)
            if req.code == RequestCode.QUERY_DATA_VERSION and r is not None:
                answers.append(r)
            return r

        ns._handle = counting  # type: ignore[method-assign]
        await ns.start()
        try:
            broker = await asyncio.to_thread(java_servers.broker, "4.9.8", namesrv=ns.address, name="java-q",
                                             forceRegister="false", registerNameServerPeriod="10000")
            started = seen[RequestCode.REGISTER_BROKER]
            assert started >= 1
            # the first periodic turn comes 10 s after the start, then one every 10 s
            loop = asyncio.get_running_loop()
            end = loop.time() + 45
            while seen[RequestCode.QUERY_DATA_VERSION] < 2 and loop.time() < end:
                await asyncio.sleep(0.2)
            assert seen[RequestCode.QUERY_DATA_VERSION] >= 2, (dict(seen), broker.tail())
            assert seen[RequestCode.REGISTER_BROKER] == started
            assert all(r.code == 0 and r.ext_fields.get("changed") == "false" for r in answers)
        finally:
            await ns.stop()

    asyncio.run(asyncio.wait_for(main(), 120))
