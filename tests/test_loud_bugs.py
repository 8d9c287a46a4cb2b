# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The suite's loud-bugs fixture (tests/conftest.py) fails closed: a test during which a handler,
listener or background task fails (an error logged with its traceback, or asyncio's own error)
fails, even though the code under test carried on; an expected error line does not; a test that
provokes one on purpose says so with ``provokes_error_log`` and fails if it never comes."""

from __future__ import annotations

from pathlib import Path

from tests.inner_session import run_session

CASES = '''
import asyncio
import logging

import pytest

from wire import RemotingCommand, ResponseCode
from wire.aio import connect, start_server


def handler(conn, req):
    raise RuntimeError("a bug in a handler")


async def _ask():
    server = await start_server(handler, "127.0.0.1", 0)
    async with server:
        conn = await connect("127.0.0.1", server.port)
        r = await conn.request(RemotingCommand.request(1))
        await conn.aclose()
    return r


def test_handler_bug_fails():
    assert asyncio.run(_ask()).code == ResponseCode.SYSTEM_ERROR


@pytest.mark.provokes_error_log(r"handler failed")
def test_handler_bug_provoked_on_purpose():
    assert asyncio.run(_ask()).code == ResponseCode.SYSTEM_ERROR


@pytest.mark.provokes_error_log(r"handler failed")
def test_provoked_but_never_logged():
    pass


def test_listener_bug_fails():
    try:
        raise KeyError("x")
    except KeyError:
        logging.getLogger("reference_broker.store").exception("dispatch listener %r failed", "fn")


def test_task_exception_never_retrieved_fails():
    async def boom():
        raise ValueError("lost")

    async def main():
        asyncio.ensure_future(boom())
        await asyncio.sleep(0.01)

    asyncio.run(main())
    import gc
    gc.collect()


def test_an_expected_error_line_passes():
    logging.getLogger("reference_broker.store").error("CommitLog flush failed: %s", "disk full")


def test_a_bug_in_teardown_fails(request):
    request.addfinalizer(lambda: logging.getLogger("wire.aio").error("handler failed", exc_info=ValueError("late")))
'''


def test_the_fixture_fails_the_tests_that_log_a_bug(tmp_path: Path) -> None:
    r = run_session(tmp_path, CASES)
    outcome = {}
    for line in r.stdout.splitlines():
        for word in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(f"{word} test_cases.py::"):
                name = line.split()[1].split("::")[-1]
                outcome.setdefault(name, set()).add(word)
    assert outcome == {
        "test_handler_bug_fails": {"FAILED"},
        "test_handler_bug_provoked_on_purpose": {"PASSED"},
        "test_provoked_but_never_logged": {"PASSED", "ERROR"},
        "test_listener_bug_fails": {"FAILED"},
        "test_task_exception_never_retrieved_fails": {"FAILED"},
        "test_an_expected_error_line_passes": {"PASSED"},
        "test_a_bug_in_teardown_fails": {"PASSED", "ERROR"},
    }, r.stdout + r.stderr
    assert "a bug in a handler" in r.stdout and "1 error(s) logged that mean a bug" in r.stdout
