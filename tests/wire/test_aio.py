# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The shared asyncio connection, over real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import struct
import sys

import pytest

from wire import (
    FrameBuffer,
    RemotingCommand,
    ResponseCode,
    SerializeType,
    decode_command,
    decode_frame,
    encode_command,
)
from wire.aio import ConnectError, RemotingConnection, RequestTimeout, connect, start_server
from wire.headers import PullMessageRequestHeader

#: handlers run as eager tasks (Python 3.12+), not wire.aio's 3.11 stand-in
EAGER_TASKS = sys.version_info >= (3, 12)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


async def echo_server(handler=None):
    def default(conn: RemotingConnection, req: RemotingCommand):
        if req.code == 1:
            return req.response(ResponseCode.SUCCESS, remark=f"echo {req.ext_fields.get('x')}")
        if req.code == 2:  # answers later: a held request must not stall the connection
            async def later():
                await asyncio.sleep(0.3)
                return req.response(remark="late")
            return later()
        if req.code == 3:
            raise RuntimeError("boom")
        if req.code == 4:
            conn.state["seen"] = req.ext_fields.get("x")
            return req.response()
        return None  # no answer at all, as the name server does for unknown codes

    server = await start_server(handler or default, "127.0.0.1", 0)
    return server, server.port


def test_request_response_and_serialize_type() -> None:
    async def main():
        server, port = await echo_server()
        async with server:
            conn = await connect("127.0.0.1", port)
            for st in SerializeType:
                resp = await conn.request(RemotingCommand.request(1, {"x": "hi"}, serialize_type=st))
                assert resp.is_response and resp.remark == "echo hi" and resp.serialize_type is st
            await conn.aclose()
    run(main())


def test_slow_request_does_not_block_others_and_responses_match_by_opaque() -> None:
    async def main():
        server, port = await echo_server()
        async with server:
            conn = await connect("127.0.0.1", port)
            slow = asyncio.ensure_future(conn.request(RemotingCommand.request(2)))
            await asyncio.sleep(0.05)
            fast = await conn.request(RemotingCommand.request(1, {"x": "f"}), timeout=0.2)
            assert fast.remark == "echo f" and not slow.done()
            assert (await slow).remark == "late"
            await conn.aclose()
    run(main())


@pytest.mark.provokes_error_log(r"handler failed")
def test_handler_exception_gives_system_error() -> None:
    async def main():
        server, port = await echo_server()
        async with server:
            conn = await connect("127.0.0.1", port)
            resp = await conn.request(RemotingCommand.request(3))
            assert resp.code == ResponseCode.SYSTEM_ERROR and "boom" in resp.remark
            await conn.aclose()
    run(main())


def test_a_request_that_does_not_decode_is_the_peers_fault(caplog: pytest.LogCaptureFixture) -> None:
    # a handler (or its task) that cannot read the request's header raises RemoteProtocolError:
    # SYSTEM_ERROR with its text, as for any failure, but one warning line and no traceback
    # (a bug of ours would fail this test through the loud-bugs fixture)
    def handler(conn: RemotingConnection, req: RemotingCommand):
        if req.code == 5:
            PullMessageRequestHeader.from_ext(req.ext_fields)

        async def later():
            await asyncio.sleep(0)
            PullMessageRequestHeader.from_ext(req.ext_fields)
        return later()

    async def main():
        server, port = await echo_server(handler)
        async with server:
            conn = await connect("127.0.0.1", port)
            for code in (5, 6):
                resp = await conn.request(RemotingCommand.request(code, {"queueId": "x"}))
                assert resp.code == ResponseCode.SYSTEM_ERROR
                assert resp.remark.startswith("DecodeError: ") and "consumerGroup" in resp.remark
            await conn.aclose()
    run(main())
    warnings = [r for r in caplog.records if "does not decode" in r.getMessage()]
    assert len(warnings) == 2 and all(r.levelname == "WARNING" and r.exc_info is None for r in warnings)


def test_no_answer_times_out_and_oneway_gets_nothing() -> None:
    async def main():
        server, port = await echo_server()
        async with server:
            conn = await connect("127.0.0.1", port)
            with pytest.raises(RequestTimeout):
                await conn.request(RemotingCommand.request(9999), timeout=0.3)
            conn.oneway(RemotingCommand.request(1, {"x": "o"}))
            resp = await conn.request(RemotingCommand.request(1, {"x": "after"}))
            assert resp.remark == "echo after"
            await conn.aclose()
    run(main())


def test_malformed_frame_closes_only_that_connection() -> None:
    async def main():
        server, port = await echo_server()
        async with server:
            good = await connect("127.0.0.1", port)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(bytes.fromhex("00000065070000617b22636f6465223a3130352c22666c61") + b"x" * 81)
            assert await asyncio.wait_for(reader.read(), 5) == b""  # closed, no answer
            writer.close()
            await writer.wait_closed()
            resp = await good.request(RemotingCommand.request(1, {"x": "still"}))
            assert resp.remark == "echo still"
            await good.aclose()
    run(main())


@pytest.mark.provokes_error_log(r"bug while reading")
def test_a_peer_fault_is_a_warning_and_our_bug_is_an_error(monkeypatch, caplog) -> None:
    # STYLE B4: a malformed frame is the peer's fault (a warning, that connection closed); an
    # exception of ours while reading a good frame is a bug: logged with its traceback at error
    # level, never passed off as the peer's fault
    import logging

    import wire.aio

    real = wire.aio.decode_frame

    def buggy(frame):
        cmd = real(frame)
        if cmd.code == 99:
            raise KeyError("our bug")
        return cmd

    async def main():
        server, port = await echo_server()
        async with server:
            for data, closed_by in ((bytes.fromhex("00000065070000617b22636f6465223a3130352c22666c61")
                                     + b"x" * 81, "peer"),
                                    (encode_command(RemotingCommand.request(99)), "bug")):
                caplog.clear()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(data)
                assert await asyncio.wait_for(reader.read(), 5) == b""
                writer.close()
                await writer.wait_closed()
                records = [r for r in caplog.records if r.name == "wire.aio"]
                if closed_by == "peer":
                    assert [r.levelno for r in records] == [logging.WARNING]
                    assert "closing connection" in records[0].getMessage()
                else:
                    assert [r.levelno for r in records] == [logging.ERROR]
                    assert "bug while reading" in records[0].getMessage()
                    assert records[0].exc_info is not None and records[0].exc_info[0] is KeyError

    monkeypatch.setattr(wire.aio, "decode_frame", buggy)
    with caplog.at_level(logging.WARNING, logger="wire.aio"):
        run(main())


def test_pipelined_requests_on_a_raw_socket() -> None:
    async def main():
        server, port = await echo_server()
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            data = b"".join(encode_command(RemotingCommand.request(1, {"x": str(i)}, opaque=i))
                            for i in range(200))
            writer.write(data)
            got = {}
            while len(got) < 200:
                head = await reader.readexactly(4)
                (n,) = struct.unpack(">i", head)
                cmd = decode_command(head + await reader.readexactly(n))
                got[cmd.opaque] = cmd.remark
            assert got == {i: f"echo {i}" for i in range(200)}
            writer.close()
            await writer.wait_closed()
    run(main())


def test_server_sends_requests_to_a_client_handler() -> None:
    async def main():
        seen = asyncio.get_running_loop().create_future()

        async def on_server(conn, req):
            # the server turns around and asks the client something, as a broker notifies consumers
            answer = await conn.request(RemotingCommand.request(40, {"consumerGroup": "g"}))
            return req.response(remark=f"client said {answer.remark}")

        def on_client(conn, req):
            seen.set_result(req.code)
            return req.response(remark="ok")

        server = await start_server(on_server, "127.0.0.1", 0)
        async with server:
            conn = await connect("127.0.0.1", server.port, handler=on_client)
            resp = await conn.request(RemotingCommand.request(7))
            assert resp.remark == "client said ok" and await seen == 40
            await conn.aclose()
    run(main())


def test_connect_refused_is_a_connect_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectError, match="cannot connect"):
        run(connect("127.0.0.1", port, timeout=1))


class _Transport:
    """Collects what a connection writes, so a test can see which answers one read produced."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.lines: list[list[bytes]] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def writelines(self, data: list[bytes]) -> None:
        self.writes.append(b"".join(data))
        self.lines.append(list(data))

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str):
        return ("127.0.0.1", 1)

    def close(self) -> None:
        self.closing = True

    abort = close

    def frames(self) -> list[RemotingCommand]:
        fb = FrameBuffer()
        fb.feed(b"".join(self.writes))
        return [decode_frame(f) for f in fb]


def _feed(handler, *requests: RemotingCommand) -> tuple[RemotingConnection, _Transport]:
    conn = RemotingConnection(handler)
    transport = _Transport()
    conn.connection_made(transport)
    conn.data_received(b"".join(encode_command(r) for r in requests))
    return conn, transport


def test_coroutines_that_never_suspend_are_answered_in_the_same_read() -> None:
    async def main():
        ran_in: list[object] = []

        async def answer(req: RemotingCommand):
            ran_in.append(asyncio.current_task())
            return req.response(remark=f"r{req.opaque}")

        requests = (RemotingCommand.request(1, opaque=i) for i in (5, 6, 7))
        conn, transport = _feed(lambda c, r: answer(r), *requests)
        # one write, before the loop ever ran again, and nothing was left running: on 3.12+ each
        # ran as an eager task, finished before the call returned; on 3.11 in the caller (here
        # this test's task; a socket's callback runs in none)
        assert len(transport.writes) == 1 and conn.pending_handlers == 0
        if EAGER_TASKS:
            assert len(set(ran_in)) == 3 and all(t is not None and t.done() for t in ran_in)
        else:
            assert ran_in == [asyncio.current_task()] * 3
        assert [(c.opaque, c.remark, c.is_response) for c in transport.frames()] == [
            (5, "r5", True), (6, "r6", True), (7, "r7", True)]
    run(main())


async def _settle(conn: RemotingConnection) -> None:
    while conn.pending_handlers:
        await asyncio.sleep(0.002)
    await asyncio.sleep(0)  # the last answers' write


def test_a_coroutine_that_waits_on_futures_goes_on_where_it_stopped() -> None:
    async def main():
        loop = asyncio.get_running_loop()
        gate = loop.create_future()
        steps: list[object] = []

        async def answer(req: RemotingCommand):
            steps.append("first")
            value = await gate  # the future's result must come back into the coroutine
            steps.append(f"gate {value}")
            await asyncio.sleep(0.01)  # a timer's future
            steps.append(asyncio.current_task())
            return req.response(remark=f"after {value}")

        conn, transport = _feed(lambda c, r: answer(r), RemotingCommand.request(1, opaque=9))
        assert steps == ["first"] and transport.writes == [] and conn.pending_handlers == 1
        # 3.12+: the eager task waits; 3.11: parked on the future, no task made
        assert len(conn._tasks) == (1 if EAGER_TASKS else 0)
        gate.set_result("open")
        await _settle(conn)
        assert steps[:2] == ["first", "gate open"]
        assert (steps[2] is not None) is EAGER_TASKS
        assert [(c.opaque, c.remark) for c in transport.frames()] == [(9, "after open")]
    run(main())


@pytest.mark.skipif(not EAGER_TASKS, reason="handlers run as tasks on Python 3.12+ only (3.11 has no eager tasks)")
def test_handlers_may_use_timeouts_and_requests_of_their_own() -> None:
    # asyncio.timeout (and wait_for, which uses it) needs a current task
    async def main():
        async def answer(req: RemotingCommand):
            async with asyncio.timeout(5):
                await asyncio.sleep(0.001)
            return req.response(remark=f"{asyncio.current_task() is not None}")

        conn, transport = _feed(lambda c, r: answer(r), RemotingCommand.request(1, opaque=3))
        await _settle(conn)
        assert [c.remark for c in transport.frames()] == ["True"]
    run(main())


def test_a_bare_yield_goes_on_as_a_task() -> None:
    async def main():
        steps: list[str] = []

        async def answer(req: RemotingCommand):
            steps.append("first")
            await asyncio.sleep(0)  # yields None: only a task knows to step it again
            steps.append("second")
            await asyncio.sleep(0.005)
            return req.response(remark="done")

        conn, transport = _feed(lambda c, r: answer(r), RemotingCommand.request(1, opaque=4))
        assert steps == ["first"] and len(conn._tasks) == 1
        await _settle(conn)
        assert steps == ["first", "second"] and [c.remark for c in transport.frames()] == ["done"]
    run(main())


@pytest.mark.provokes_error_log(r"handler failed")
def test_coroutine_errors_before_and_after_a_suspension_give_system_error() -> None:
    async def main():
        async def answer(req: RemotingCommand):
            if req.opaque == 1:
                raise ValueError("at once")
            if req.opaque == 2:
                await asyncio.sleep(0.001)
                raise KeyError("later")
            await asyncio.sleep(0)
            raise LookupError("in a task")

        conn, transport = _feed(lambda c, r: answer(r), *(RemotingCommand.request(1, opaque=i) for i in (1, 2, 3)))
        await _settle(conn)
        got = {c.opaque: (c.code, c.remark) for c in transport.frames()}
        assert got == {1: (ResponseCode.SYSTEM_ERROR, "ValueError: at once"),
                       2: (ResponseCode.SYSTEM_ERROR, "KeyError: 'later'"),
                       3: (ResponseCode.SYSTEM_ERROR, "LookupError: in a task")}
    run(main())


def test_suspended_coroutines_are_cancelled_with_their_connection() -> None:
    async def main():
        cleaned: list[str] = []
        store_side = asyncio.get_running_loop().create_future()

        async def answer(req: RemotingCommand):
            try:
                if req.opaque == 3:
                    await store_side  # parked on a future
                else:
                    await asyncio.sleep(0)  # in a task
                    await asyncio.sleep(30)
            except asyncio.CancelledError:
                cleaned.append(f"cancelled {req.opaque}")  # reaches the handler's own frame
                raise
            return req.response()

        conn, transport = _feed(lambda c, r: answer(r), RemotingCommand.request(1, opaque=3),
                                RemotingCommand.request(1, opaque=5))
        await asyncio.sleep(0.01)
        assert conn.pending_handlers == 2
        conn.connection_lost(None)
        await _settle(conn)
        # the awaited future is cancelled, as Task.cancel does, and nobody is answered
        assert sorted(cleaned) == ["cancelled 3", "cancelled 5"] and store_side.cancelled()
        assert transport.writes == []
    run(main())


def test_oneway_coroutines_run_but_get_no_answer() -> None:
    async def main():
        seen: list[int] = []

        async def answer(req: RemotingCommand):
            seen.append(req.opaque)
            return req.response()

        oneway = RemotingCommand.request(1, oneway=True).replace(opaque=4)
        _, transport = _feed(lambda c, r: answer(r), oneway, RemotingCommand.request(1, opaque=8))
        assert seen == [4, 8] and [c.opaque for c in transport.frames()] == [8]
    run(main())


def test_large_bodies_are_written_without_copies() -> None:
    async def main():
        bodies = {i: bytes([i]) * (100_000 if i % 2 else 10) for i in range(1, 9)}

        def answer(conn: RemotingConnection, req: RemotingCommand):
            return req.response(body=bodies[req.opaque])

        _, transport = _feed(answer, *(RemotingCommand.request(11, opaque=i) for i in bodies))
        assert {c.opaque: c.body for c in transport.frames()} == bodies
        # one pass, one writelines: each large body is the very object the handler returned
        (lines,) = transport.lines
        assert len(transport.writes) == 1
        assert [b for b in lines if len(b) >= 100_000] == [bodies[i] for i in (1, 3, 5, 7)]
        assert all(any(b is x for x in lines) for b in (bodies[1], bodies[7]))

        # a small pass is still one joined write
        _, small = _feed(answer, RemotingCommand.request(11, opaque=2), RemotingCommand.request(11, opaque=4))
        assert small.lines == [] and len(small.writes) == 1
    run(main())


def test_large_pipelined_answers_on_a_raw_socket() -> None:
    async def main():
        def answer(conn: RemotingConnection, req: RemotingCommand):
            return req.response(body=bytes([req.opaque % 256]) * (req.opaque * 997))

        server = await start_server(answer, "127.0.0.1", 0)
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"".join(encode_command(RemotingCommand.request(11, opaque=i)) for i in range(1, 120)))
            got = {}
            while len(got) < 119:
                head = await reader.readexactly(4)
                (n,) = struct.unpack(">i", head)
                cmd = decode_command(head + await reader.readexactly(n))
                got[cmd.opaque] = cmd.body
            assert got == {i: bytes([i % 256]) * (i * 997) for i in range(1, 120)}
            writer.close()
            await writer.wait_closed()
    run(main())


def test_an_answer_for_a_closed_connection_is_dropped() -> None:
    async def main():
        def answer(conn: RemotingConnection, req: RemotingCommand):
            conn.close()  # e.g. the handler found the peer misbehaving
            return req.response()

        _, transport = _feed(answer, RemotingCommand.request(1, opaque=1), RemotingCommand.request(1, opaque=2))
        assert transport.closing and transport.writes == []
    run(main())


def test_connection_pool_shares_and_replaces_connections() -> None:
    from wire.aio import ConnectionPool, split_addr

    async def main():
        opened = []
        server = await start_server(lambda c, r: r.response(), "127.0.0.1", 0,
                                    on_connect=lambda c: opened.append(c))
        async with server:
            addr = f"127.0.0.1:{server.port}"
            async with ConnectionPool(timeout=2) as pool:
                conns = await asyncio.gather(*(pool.get(addr) for _ in range(10)))
                assert len({id(c) for c in conns}) == 1
                await asyncio.sleep(0.05)
                assert len(opened) == 1
                conns[0].close()
                await conns[0].wait_closed()
                again = await pool.get(addr)
                assert again is not conns[0] and not again.is_closing
                assert (await again.request(RemotingCommand.request(1))).is_response
                pool.discard(addr)
                assert again.is_closing
            with pytest.raises(ConnectError, match="not a host:port"):
                split_addr("nohost")
            assert split_addr("[::1]:9876") == ("::1", 9876)
    run(main())


@pytest.mark.provokes_error_log(r"handler failed for .*'x': 'bad'")
def test_a_run_answered_later_by_one_future_each_group_in_order() -> None:
    """A batch handler's results: a :class:`LaterRun` at the places of the requests one future
    answers together, a :class:`Later` for one request, and an answer now; a LaterRun whose
    finish raises answers each of its requests SYSTEM_ERROR."""
    from wire.aio import Later, LaterRun, RemotingServer

    futures: dict[str, asyncio.Future[str]] = {}

    def batch(conn: RemotingConnection, reqs: list[RemotingCommand]) -> list[object]:
        loop = asyncio.get_running_loop()
        for name in ("run", "one", "bad"):
            futures[name] = loop.create_future()
        together = [r for r in reqs if r.ext_fields["x"] == "run"]
        run_later = LaterRun(futures["run"], lambda v: [r.response(remark=f"{v} {r.opaque}") for r in together])

        def broken(v: str) -> list[RemotingCommand]:
            raise RuntimeError(f"cannot answer {v}")

        bad_later = LaterRun(futures["bad"], broken)
        out: list[object] = []
        for r in reqs:
            x = r.ext_fields["x"]
            if x == "run":
                out.append(run_later)
            elif x == "bad":
                out.append(bad_later)
            elif x == "one":
                out.append(Later(futures["one"], lambda v, r=r: r.response(remark=f"{v} alone")))
            else:
                out.append(r.response(remark="now"))
        return out

    async def main() -> None:
        server = RemotingServer(lambda conn, req: None, batch=batch, batch_codes=frozenset({7}))  # type: ignore[arg-type]
        await server.start("127.0.0.1", 0)
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            kinds = ["run", "now", "run", "one", "bad", "run", "bad"]
            writer.write(b"".join(encode_command(RemotingCommand.request(7, {"x": k}, opaque=i + 1))
                                  for i, k in enumerate(kinds)))
            fb = FrameBuffer()
            got: list[RemotingCommand] = []

            async def answers(n: int) -> None:
                while len(got) < n:
                    fb.feed(await reader.read(65536))
                    while (f := fb.next_frame()) is not None:
                        got.append(decode_frame(f))

            await answers(1)
            assert [(a.opaque, a.remark) for a in got] == [(2, "now")]  # the others wait for their futures
            futures["one"].set_result("B")
            await answers(2)
            futures["bad"].set_result("C")
            await answers(4)
            futures["run"].set_result("A")
            await answers(7)
            writer.close()
        assert [(a.opaque, a.remark) for a in got[:2]] == [(2, "now"), (4, "B alone")]
        assert sorted(a.opaque for a in got[2:4]) == [5, 7]
        assert all(a.code == ResponseCode.SYSTEM_ERROR and "cannot answer C" in (a.remark or "") for a in got[2:4])
        assert [(a.opaque, a.remark) for a in got[4:]] == [(1, "A 1"), (3, "A 3"), (6, "A 6")]

    run(main())
