# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The admin client on real sockets: name-server failover, timeouts, error answers, serialize
type, one connection per address shared by concurrent requests."""

from __future__ import annotations

import asyncio
import socket

import pytest

from wire import RemotingCommand, RequestCode, ResponseCode, SerializeType
from wire.admin.client import AdminClient, gather_map, split_addr
from wire.admin.errors import ServerError
from wire.aio import ConnectError, RequestTimeout, start_server


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


async def _server(answer):
    seen: list[tuple[RemotingCommand, object]] = []

    def handler(conn, req):
        seen.append((req, conn))
        return answer(req)

    srv = await start_server(handler, "127.0.0.1", 0)
    return srv, seen


def test_failover_skips_dead_and_silent_name_servers():
    async def main():
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        good, seen = await _server(lambda req: req.response(ResponseCode.SUCCESS, body=b'{"topicList":["T"]}'))
        addrs = [f"127.0.0.1:{_closed_port()}", f"127.0.0.1:{silent.getsockname()[1]}", f"127.0.0.1:{good.port}"]
        async with good, AdminClient(addrs, timeout=0.3) as client:
            resp = await client.namesrv(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
            assert resp.body == b'{"topicList":["T"]}'
            # the one that answered is asked first from now on
            await client.namesrv(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
            assert len(seen) == 2 and client._preferred == 2
        silent.close()

    run(main())


def test_an_error_answer_does_not_fail_over():
    async def main():
        bad, seen_bad = await _server(lambda req: req.response(ResponseCode.TOPIC_NOT_EXIST, "no route\nSee faq"))
        good, seen_good = await _server(lambda req: req.response(ResponseCode.SUCCESS))
        async with bad, good, AdminClient([f"127.0.0.1:{bad.port}", f"127.0.0.1:{good.port}"]) as client:
            with pytest.raises(ServerError) as info:
                await client.namesrv(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "X"})
            assert (info.value.code, info.value.code_name, info.value.remark) == (17, "TOPIC_NOT_EXIST",
                                                                                 "no route\nSee faq")
            assert str(info.value).startswith(f"TOPIC_NOT_EXIST(17) from 127.0.0.1:{bad.port} to "
                                              "GET_ROUTEINFO_BY_TOPIC: no route")
            assert len(seen_bad) == 1 and seen_good == []

    run(main())


def test_all_name_servers_down():
    async def main():
        addrs = [f"127.0.0.1:{_closed_port()}", f"127.0.0.1:{_closed_port()}"]
        async with AdminClient(addrs, timeout=0.5) as client:
            with pytest.raises(ConnectError, match="no name server answered"):
                await client.namesrv(RequestCode.GET_BROKER_CLUSTER_INFO)
        async with AdminClient(addrs[:1], timeout=0.5) as client:
            with pytest.raises(ConnectError, match="cannot connect"):
                await client.namesrv(RequestCode.GET_BROKER_CLUSTER_INFO)

    run(main())


def test_timeout_and_serialize_type():
    async def main():
        srv, seen = await _server(lambda req: None)  # never answers
        async with srv, AdminClient([], timeout=0.2, serialize="rocketmq") as client:
            with pytest.raises(RequestTimeout, match=r"within 0\.2s"):
                await client.invoke(f"127.0.0.1:{srv.port}", RequestCode.GET_BROKER_RUNTIME_INFO)
            assert seen[0][0].serialize_type is SerializeType.ROCKETMQ

    run(main())


def test_concurrent_requests_share_one_connection():
    async def main():
        async def slow(req):
            await asyncio.sleep(0.05)
            return req.response(ResponseCode.SUCCESS, ext_fields={"n": req.ext_fields["n"]})

        srv, seen = await _server(slow)
        addr = f"127.0.0.1:{srv.port}"
        async with srv, AdminClient([]) as client:
            results = await gather_map(list(range(20)), lambda n: client.call(addr, 300, {"n": n}))
            assert [r.ext_fields["n"] for r in results] == [str(n) for n in range(20)]
            assert len({id(conn) for _, conn in seen}) == 1

    run(main())


def test_gather_map_keeps_failures_in_place():
    async def main():
        async def one(n):
            if n % 2:
                raise ServerError(1, "odd", addr="a:1", request_code=28)
            return n

        out = await gather_map([0, 1, 2, 3], one, limit=2)
        assert out[0] == 0 and out[2] == 2 and isinstance(out[1], ServerError) and isinstance(out[3], ServerError)

    run(main())


@pytest.mark.parametrize("addr, expected", [("10.0.0.1:9876", ("10.0.0.1", 9876)), ("[::1]:10911", ("::1", 10911))])
def test_split_addr(addr, expected):
    assert split_addr(addr) == expected


@pytest.mark.parametrize("addr", ["nohost", "h:0", "h:70000", "h:x"])
def test_split_addr_rejects(addr):
    with pytest.raises(ConnectError):
        split_addr(addr)
