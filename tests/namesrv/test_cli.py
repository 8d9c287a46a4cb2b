# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl namesrv start`` end to end: the real process, a real socket, real signals."""

from __future__ import annotations

import asyncio
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import connect

MQCTL = Path(sys.executable).with_name("mqctl")
LISTENING = re.compile(rb"listening on 127\.0\.0\.1:(\d+)")

pytestmark = pytest.mark.skipif(not MQCTL.exists(), reason=f"{MQCTL} is not installed (run ./scripts/bootstrap)")


def mqctl(tmp_path: Path, *args: str) -> list[str]:
    return [str(MQCTL), "namesrv", "start", *args,
            "--set", f"kvConfigPath={tmp_path / 'kvConfig.json'}",
            "--set", f"configStorePath={tmp_path / 'namesrv.properties'}"]


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}


def wait_for_port(proc: subprocess.Popen[bytes], timeout: float = 20) -> tuple[int, bytes]:
    assert proc.stderr is not None
    seen = b""
    end = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stderr, selectors.EVENT_READ)
        while time.monotonic() < end:
            if not sel.select(end - time.monotonic()):
                break
            chunk = os.read(proc.stderr.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
            m = LISTENING.search(seen)
            if m:
                return int(m.group(1)), seen
    proc.kill()
    raise AssertionError(f"the name server did not report its port; stderr: {seen.decode(errors='replace')}")


async def topic_list(port: int) -> RemotingCommand:
    conn = await connect("127.0.0.1", port)
    try:
        return await conn.request(RemotingCommand.request(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))
    finally:
        await conn.aclose()


def test_start_serve_and_stop_on_sigterm(tmp_path: Path) -> None:
    with subprocess.Popen(mqctl(tmp_path, "--listen", "127.0.0.1:0"), stderr=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, env=environment(tmp_path)) as proc:
        try:
            port, _ = wait_for_port(proc)
            resp = asyncio.run(asyncio.wait_for(topic_list(port), 10))
            assert resp.code == ResponseCode.SUCCESS and resp.body == b'{"topicList":[]}'
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(15) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_port_in_use_exits_1_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(mqctl(tmp_path, "--listen", f"127.0.0.1:{port}"), capture_output=True,
                              env=environment(tmp_path), timeout=30)
    assert done.returncode == 1
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "cannot listen" in lines[0], done.stderr


def test_bad_config_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    conf = tmp_path / "namesrv.conf"
    conf.write_text("# a namesrv.properties\nlistenPort=ninety\n")
    done = subprocess.run(mqctl(tmp_path, "-c", str(conf)), capture_output=True, env=environment(tmp_path),
                          timeout=30)
    assert done.returncode == 2
    assert f"{conf}:2" in done.stderr.decode() and "listenPort" in done.stderr.decode()
