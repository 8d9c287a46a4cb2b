# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Hostile clients at the connection level: large frames are decoded off the event loop, the
bytes of unfinished frames are bounded across a server's connections, and a frame that does not
complete in time closes its connection. Real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from wire import RemotingCommand, ResponseCode, SerializeType, encode_command, fastjson
from wire.aio import BufferBudget, RemotingConnection, connect, start_server
from wire.framing import split_frame
from wire.remoting import decode_frame, decode_frame_off_loop

PREFIX = struct.Struct(">iI")


def run(coro: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def _python_parser(data: bytes) -> Any:
    out: list[Any] = []

    def work() -> None:
        fastjson.prefer_python_parser()
        try:
            out.append(fastjson.loads(data))
        except Exception as exc:
            out.append(exc)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    return out[0]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: Decimal(str(d))),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_json_values, st.booleans())
def test_the_python_parser_reads_json_as_the_c_parser_does(value: Any, ascii_only: bool) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only, default=str).encode()
    assert _python_parser(data) == fastjson.loads(data)


def test_the_python_parser_reads_surrogate_pairs_as_one_character() -> None:
    data = b'{"a":"\\ud83d\\ude00","b":"\\ud83d","c":"\\ude00\\ud83d"}'
    assert _python_parser(data) == json.loads(data) == fastjson.loads(data)


def test_a_large_frame_decodes_the_same_off_the_loop() -> None:
    ext = {f"k{i}": f"v{i}" for i in range(2000)}
    for st_ in SerializeType:
        frame = split_frame(encode_command(RemotingCommand.request(105, ext, b"body", serialize_type=st_)))
        assert decode_frame_off_loop(frame) == decode_frame(frame)
    lenient = b"{code:105,extFields:{topic:'T',n:1},opaque:7}"
    frame = split_frame(PREFIX.pack(4 + len(lenient), len(lenient)) + lenient)
    assert decode_frame_off_loop(frame) == decode_frame(frame)


# ------------------------------------------------------------------ large frames off the loop


def test_large_frames_are_decoded_and_prepared_in_a_worker_thread_in_order() -> None:
    seen: list[tuple[int, str, object]] = []
    prepared_in: list[str] = []

    def prepare(conn: RemotingConnection, req: RemotingCommand) -> object:
        prepared_in.append(threading.current_thread().name)
        return ("decoded", len(req.body or b""))

    def handler(conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        seen.append((req.opaque, threading.current_thread().name, conn.prepared))
        return req.response()

    async def main() -> None:
        server = await start_server(handler, "127.0.0.1", 0, prepare=prepare)
        async with server:
            big_header = {f"k{i}": "v" for i in range(40_000)}  # about 400 KB of header
            frames = [
                encode_command(RemotingCommand.request(1, {"n": "1"}, opaque=1)),
                encode_command(RemotingCommand.request(1, big_header, opaque=2)),
                encode_command(RemotingCommand.request(1, {"n": "3"}, b"x" * 300_000, opaque=3)),
                encode_command(RemotingCommand.request(1, {"n": "4"}, opaque=4)),
            ]
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"".join(frames))  # all at once: the small ones wait their turn
            for _ in frames:
                (total,) = struct.unpack(">i", await reader.readexactly(4))
                await reader.readexactly(total)
            writer.close()

    run(main())
    assert [opaque for opaque, _, _ in seen] == [1, 2, 3, 4]
    main_thread = threading.main_thread().name
    assert all(thread == main_thread for _, thread, _ in seen), "handlers run on the loop"
    assert prepared_in and all(t.startswith("wire-decode") for t in prepared_in)
    assert seen[2][2] == ("decoded", 300_000)  # only the large body was prepared
    assert seen[0][2] is None and seen[1][2] is None and seen[3][2] is None


def test_no_cyclic_collection_runs_while_a_large_frame_is_decoded() -> None:
    """The worker pauses the cyclic collector while it decodes (a 16 MiB body's objects set off
    full collections that held the GIL for up to a second), and the collector runs again after."""
    import gc

    enabled_during: list[bool] = []

    def prepare(conn: RemotingConnection, req: RemotingCommand) -> object:
        enabled_during.append(gc.isenabled())
        return None

    def handler(conn: RemotingConnection, req: RemotingCommand) -> RemotingCommand:
        return req.response()

    async def main() -> None:
        server = await start_server(handler, "127.0.0.1", 0, prepare=prepare)
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(encode_command(RemotingCommand.request(1, {"n": "1"}, b"x" * 300_000, opaque=1)))
            (total,) = struct.unpack(">i", await reader.readexactly(4))
            await reader.readexactly(total)
            writer.close()

    assert gc.isenabled()
    run(main())
    assert enabled_during == [False]
    assert gc.isenabled()


def test_a_large_frame_that_does_not_decode_closes_its_connection() -> None:
    async def main() -> None:
        server = await start_server(lambda c, r: r.response(), "127.0.0.1", 0)
        async with server:
            header = b"{" + b'"k":"v",' * 50_000 + b'"code":1e999999}'
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(PREFIX.pack(4 + len(header), len(header)) + header)
            assert await reader.read() == b""  # closed, no answer
            writer.close()
            other = await connect("127.0.0.1", server.port)
            assert (await other.request(RemotingCommand.request(1))).code == ResponseCode.SUCCESS
            await other.aclose()

    run(main())


# ------------------------------------------------------------------ the budget for unfinished frames


def _send_partial(port: int, held: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(PREFIX.pack(16 * 1024 * 1024 - 8, 2) + b"{}" + b"\0" * (held - 10))
    return s


def test_the_connections_holding_most_are_closed_beyond_the_budget() -> None:
    async def main() -> None:
        server = await start_server(lambda c, r: r.response(), "127.0.0.1", 0, max_buffered=3_000_000)
        async with server:
            loop = asyncio.get_running_loop()
            socks = []

            async def held(expected: list[int]) -> None:
                for _ in range(400):
                    if sorted(server.budget.held.values()) == expected:
                        return
                    await asyncio.sleep(0.02)
                raise AssertionError(f"{sorted(server.budget.held.values())} != {expected}")

            for size, expected in ((400_000, [400_000]), (2_000_000, [400_000, 2_000_000]),
                                   (600_000, [400_000, 600_000, 2_000_000]),
                                   # 4.5 MB would be held: the largest (2 MB) goes, 2.5 MB stay
                                   (1_500_000, [400_000, 600_000, 1_500_000])):
                socks.append(await loop.run_in_executor(None, _send_partial, server.port, size))
                await held(expected)
            assert server.budget.total == 2_500_000 and len(server.connections) == 3
            for s in socks:
                s.close()

    run(main())


def test_a_budget_is_shared_by_the_servers_given_it() -> None:
    async def main() -> None:
        budget = BufferBudget(1_000_000)
        a = await start_server(lambda c, r: r.response(), "127.0.0.1", 0, budget=budget)
        b = await start_server(lambda c, r: r.response(), "127.0.0.1", 0, budget=budget)
        async with a, b:
            loop = asyncio.get_running_loop()
            s1 = await loop.run_in_executor(None, _send_partial, a.port, 700_000)
            s2 = await loop.run_in_executor(None, _send_partial, b.port, 600_000)
            for _ in range(400):
                if list(budget.held.values()) == [600_000] and not a.connections:
                    break
                await asyncio.sleep(0.02)
            # 1.3 MB would be held over the two servers: the connection holding most goes
            assert budget.total == 600_000 and not a.connections and len(b.connections) == 1
            s1.close()
            s2.close()

    run(main())


def test_a_frame_that_does_not_complete_in_time_closes_its_connection() -> None:
    async def main() -> None:
        server = await start_server(lambda c, r: r.response(), "127.0.0.1", 0, frame_timeout=0.5)
        async with server:
            loop = asyncio.get_running_loop()
            slow = await loop.run_in_executor(None, _send_partial, server.port, 1000)
            busy = await connect("127.0.0.1", server.port)
            # a connection whose frames complete is never closed, however long it stays
            for _ in range(15):
                assert (await busy.request(RemotingCommand.request(1))).code == ResponseCode.SUCCESS
                await asyncio.sleep(0.1)
            slow.settimeout(10)
            assert await loop.run_in_executor(None, slow.recv, 1) == b""
            assert not busy.is_closing
            await busy.aclose()
            slow.close()

    run(main())
