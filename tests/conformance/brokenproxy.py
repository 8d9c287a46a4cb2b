# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A deliberately broken target: a TCP proxy in front of a real server that breaks the protocol in
chosen, narrow ways, so that the conformance suite can be shown to fail exactly the cases that
check what was broken (and no other).

Faults (any combination):

* ``pull_offset_moved``: an answer to PULL_MESSAGE with code PULL_OFFSET_MOVED (21) is passed on
  as PULL_NOT_FOUND (19), re-encoded;
* ``keep_open``: when the server closes its side (as it must after a malformed frame), the proxy
  keeps the client's side open and silent;
* ``answer_oneway``: a oneway request is answered by the proxy with a SUCCESS response of its own.

Frames are cut with :class:`wire.FrameBuffer` in both directions to find the requests and answers;
bytes that are not frames (the malformed ones) are passed on untouched. :class:`ProxyProcess` runs
proxies in a process of their own, so that relaying (and decoding) the floods of the robustness
cases does not slow the suite's own probes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from wire import (
    FrameBuffer,
    RemotingCommand,
    RequestCode,
    ResponseCode,
    WireError,
    decode_frame,
    encode_command,
)


@dataclass(frozen=True)
class Faults:
    pull_offset_moved: bool = False
    keep_open: bool = False
    answer_oneway: bool = False


class BrokenProxy:
    """Listens on 127.0.0.1 (a free port) and relays to ``upstream`` with :class:`Faults`."""

    def __init__(self, upstream: tuple[str, int], faults: Faults) -> None:
        self.upstream = upstream
        self.faults = faults
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.writers: set[asyncio.StreamWriter] = set()

    @property
    def addr(self) -> str:
        assert self.server is not None
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def start(self) -> BrokenProxy:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for w in list(self.writers):
            w.close()
        for t in list(self.tasks):
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _serve(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        self.writers.add(cwriter)
        try:
            ureader, uwriter = await asyncio.open_connection(*self.upstream)
        except OSError:
            cwriter.close()
            return
        self.writers.add(uwriter)
        codes: dict[int, int] = {}
        try:
            await asyncio.gather(self._up(creader, uwriter, cwriter, codes),
                                 self._down(ureader, cwriter, codes))
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            uwriter.close()
            cwriter.close()
            self.tasks.discard(task)

    async def _up(self, creader: asyncio.StreamReader, uwriter: asyncio.StreamWriter,
                  cwriter: asyncio.StreamWriter, codes: dict[int, int]) -> None:
        fb: FrameBuffer | None = FrameBuffer()
        pending = bytearray()
        while data := await creader.read(65536):
            if fb is None:
                uwriter.write(data)
                continue
            pending += data
            fb.feed(data)
            try:
                while (frame := fb.next_frame()) is not None:
                    size = 8 + len(frame.header) + len(frame.body)
                    uwriter.write(bytes(pending[:size]))
                    del pending[:size]
                    try:
                        cmd = decode_frame(frame)
                    except WireError:
                        continue
                    if not cmd.is_response:
                        codes[cmd.opaque] = cmd.code
                    if self.faults.answer_oneway and cmd.is_oneway:
                        fake = RemotingCommand.request(cmd.code).response(ResponseCode.SUCCESS)
                        cwriter.write(encode_command(fake.replace(opaque=cmd.opaque)))
            except WireError:
                # not frames any more: pass everything on as it came
                uwriter.write(bytes(pending))
                pending.clear()
                fb = None
        uwriter.close()

    async def _down(self, ureader: asyncio.StreamReader, cwriter: asyncio.StreamWriter,
                    codes: dict[int, int]) -> None:
        fb: FrameBuffer | None = FrameBuffer()
        pending = bytearray()
        while data := await ureader.read(65536):
            if fb is None:
                cwriter.write(data)
                continue
            pending += data
            fb.feed(data)
            try:
                while (frame := fb.next_frame()) is not None:
                    size = 8 + len(frame.header) + len(frame.body)
                    raw = bytes(pending[:size])
                    del pending[:size]
                    cmd = decode_frame(frame)
                    if (self.faults.pull_offset_moved and cmd.is_response
                            and codes.get(cmd.opaque) == RequestCode.PULL_MESSAGE
                            and cmd.code == ResponseCode.PULL_OFFSET_MOVED):
                        raw = encode_command(cmd.replace(code=ResponseCode.PULL_NOT_FOUND))
                    cwriter.write(raw)
            except WireError:
                cwriter.write(bytes(pending))
                pending.clear()
                fb = None
        if self.faults.keep_open:
            # the server closed its side: say nothing, and keep the client's side open
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(3600)
        cwriter.close()


class ProxyProcess:
    """:class:`BrokenProxy` instances for ``upstreams`` in a process of their own (``python -m
    tests.conformance.brokenproxy``), so that relaying the floods of the robustness cases competes
    with the suite for neither its event loop nor its interpreter lock; a context manager whose
    value is the proxies' addresses, in the order of ``upstreams``. The process stops when its
    stdin closes (or, failing that, is killed)."""

    def __init__(self, upstreams: list[tuple[str, int]], faults: Faults) -> None:
        self.args = [f"{h}:{p}" for h, p in upstreams]
        self.faults = [name for name, on in vars(faults).items() if on]
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> list[str]:
        root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.conformance.brokenproxy", "--faults", ",".join(self.faults), *self.args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the addresses, once every proxy listens
        addrs = line.split()
        if len(addrs) != len(self.args):
            self.__exit__()
            raise RuntimeError(f"the proxy process did not start (it said {line!r})")
        return addrs

    def __exit__(self, *exc: object) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()


async def _serve_until_stdin_closes(upstreams: list[tuple[str, int]], faults: Faults) -> None:
    proxies = [await BrokenProxy(u, faults).start() for u in upstreams]
    print(" ".join(p.addr for p in proxies), flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    for proxy in proxies:
        await proxy.close()


def main(argv: list[str]) -> None:
    """``python -m tests.conformance.brokenproxy --faults a,b HOST:PORT...``: prints the proxies'
    addresses on one line, relays until stdin closes."""
    from wire.aio import split_addr

    names = argv[1].split(",") if argv[0] == "--faults" and argv[1] else []
    faults = Faults(**{n: True for n in names})
    asyncio.run(_serve_until_stdin_closes([split_addr(a) for a in argv[2:]], faults))


if __name__ == "__main__":
    main(sys.argv[1:])
