# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Shared test fixtures.

``../shared`` (beside the checkout) holds the RocketMQ protocol notes and the real captures. CI has
it; on a fresh clone without it, the tests that need it skip with a reason.

The long runs are marked ``soak``. By default (``MQCTL_SOAK`` unset or 0: what CI runs) each of
them runs a bounded, deterministic sample and says what it left out (the ``ci_sample`` fixture); the
end of the run lists those and the one command that runs everything: ``MQCTL_SOAK=1 scripts/test``
(or ``pytest --soak 1``). ``--soak N`` (``MQCTL_SOAK=N``) runs everything in full and scales the
repeated scenarios N times (repetitions, data size: the ``soak`` fixture, ``MQCTL_SOAK_RUNS``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]

# Property tests check what is decoded, never how fast: hypothesis' per-example deadline is a
# timed assertion, which a loaded CI machine trips at random (speed lives in benchmarks/).
settings.register_profile("mqctl", deadline=None)
settings.load_profile("mqctl")
SHARED = Path(os.environ.get("MQCTL_SHARED", ROOT.parent / "shared"))
CAPTURES = SHARED / "captures"
FIXTURES = ROOT / "fixtures"

# the real Java servers' harness (fixtures javakit, java_servers, java_servers_module)
pytest_plugins = ["tests.javakit"]


#: the command that runs every test in full (scripts/test prints it too)
FULL_RUN = "MQCTL_SOAK=1 scripts/test"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--soak", type=int, default=None, metavar="N",
        help="0 (the default, what CI runs; MQCTL_SOAK sets it): the tests marked soak run a bounded "
             "sample and the run lists what they left out; N >= 1: every test in full, the repeated "
             "scenarios N times (repetitions, data size: the long runs whose figures go in the notes)")


def soak_level(config: pytest.Config) -> int:
    """``--soak`` (else ``MQCTL_SOAK``, else 0): 0 is the CI sample, N >= 1 everything in full."""
    n = config.getoption("--soak")
    if n is None:
        n = int(os.environ.get("MQCTL_SOAK", "0") or 0)
    if n < 0:
        raise pytest.UsageError("--soak (MQCTL_SOAK) must be 0 (the CI sample) or N >= 1 (everything, N times)")
    return int(n)


def pytest_configure(config: pytest.Config) -> None:
    n = soak_level(config)
    if n >= 1:
        # the modules that parametrize their repetitions read it at collection
        os.environ.setdefault("MQCTL_SOAK_RUNS", str(n))


@pytest.fixture(scope="session")
def soak(request: pytest.FixtureRequest) -> int:
    """The scale (>= 1) that slow scenario tests read for their repetitions and sizes: 1 in the CI
    sample and with ``--soak 1``, N with ``--soak N``."""
    return max(1, soak_level(request.config))


class CiSample:
    """What a ``soak`` test runs: everything (:attr:`full`) or its bounded CI sample, whose
    left-out parts it names with :meth:`left_out` (listed at the end of the run)."""

    def __init__(self, full: bool, nodeid: str) -> None:
        self.full = full
        self.nodeid = nodeid

    def left_out(self, what: str) -> None:
        """Note what the CI sample leaves out of this test (only in the sample; never in full)."""
        assert not self.full, "a full run leaves nothing out"
        _LEFT_OUT.append((self.nodeid, what))


_LEFT_OUT: list[tuple[str, str]] = []


@pytest.fixture
def ci_sample(request: pytest.FixtureRequest) -> CiSample:
    """See :class:`CiSample`; only for tests marked ``soak``."""
    if request.node.get_closest_marker("soak") is None:
        raise pytest.UsageError(f"{request.node.nodeid} uses ci_sample: mark it soak")
    return CiSample(soak_level(request.config) >= 1, request.node.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    """The CI sample's report: what the soak tests that ran left out, and how to run everything."""
    if soak_level(config) >= 1:
        terminalreporter.write_sep("=", f"full run (--soak {soak_level(config)}): nothing left out")
        return
    if not _LEFT_OUT:
        return
    terminalreporter.write_sep("=", "CI sample: what the soak tests left out (they ran the rest)")
    for nodeid, what in _LEFT_OUT:
        terminalreporter.write_line(f"{nodeid}: {what}")
    terminalreporter.write_line(f"everything, in full: {FULL_RUN}  (or: pytest --soak 1 ...)")


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the calling test with a clear reason."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} is absent: these tests need ../shared beside the checkout (CI has it)")
    return p


@pytest.fixture
def shared() -> Path:
    return shared_path()


# ---------------------------------------------------------------------------------- loud bugs
# Our servers survive their own bugs in production: wire.aio answers SYSTEM_ERROR when a handler
# raises, the store and broker loops carry on when a listener or a periodic task fails. They log
# such a failure with its traceback (log.exception: an error they did not expect), and asyncio logs
# an error for a task whose exception nobody retrieved or a callback that raised. In the test
# suite each of those is a bug: the test that was running fails, with the record in the report.
#
# A test that provokes one on purpose says so, and which ones, with
# ``@pytest.mark.provokes_error_log(r"regex of the messages")``; the records must then appear.

_LOUD_BUGS = pytest.StashKey["_BugRecords"]()


def is_bug_record(record: logging.LogRecord) -> bool:
    """An error logged with its traceback, or any error of asyncio's own loggers."""
    if record.levelno < logging.ERROR:
        return False
    with_traceback = record.exc_info is not None and record.exc_info[0] is not None
    return with_traceback or record.name == "asyncio" or record.name.startswith("asyncio.")


class _BugRecords(logging.Handler):
    def __init__(self, allowed: re.Pattern[str] | None) -> None:
        super().__init__(logging.ERROR)
        self.allowed = allowed
        self.bugs: list[logging.LogRecord] = []
        self.provoked = 0
        self.reported = 0

    def emit(self, record: logging.LogRecord) -> None:
        if not is_bug_record(record):
            return
        if self.allowed is not None and self.allowed.search(record.getMessage()):
            self.provoked += 1
        else:
            self.bugs.append(record)

    def take_report(self) -> str | None:
        new = self.bugs[self.reported:]
        self.reported = len(self.bugs)
        if not new:
            return None
        fmt = logging.Formatter("%(name)s %(levelname)s: %(message)s")
        lines = "\n\n".join(fmt.format(r) for r in new)
        return (f"{len(new)} error(s) logged that mean a bug (a handler, listener or background task "
                f"failed; see tests/conftest.py):\n\n{lines}")


@pytest.fixture(autouse=True)
def loud_bugs(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail the test when a bug is logged while it runs (see the notes above)."""
    marker = request.node.get_closest_marker("provokes_error_log")
    allowed = re.compile(marker.args[0]) if marker is not None else None
    handler = _BugRecords(allowed)
    request.node.stash[_LOUD_BUGS] = handler
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
    report = handler.take_report()
    if report is not None:
        pytest.fail(report, pytrace=False)
    if allowed is not None and not handler.provoked and request.node.stash.get(_PASSED, False):
        pytest.fail(f"provokes_error_log({allowed.pattern!r}): no such error was logged", pytrace=False)


_PASSED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """The test body's own bugs fail the test itself (those of its teardown fail it there)."""
    result = yield
    handler = item.stash.get(_LOUD_BUGS, None)
    report = handler.take_report() if handler is not None else None
    if report is not None:
        pytest.fail(report, pytrace=False)
    item.stash[_PASSED] = True
    return result


# ---------------------------------------------------------------------------- leaked processes
# Every process a test starts, it stops. Each process started in this session inherits
# MQCTL_TEST_SESSION (unless its environment was replaced, and then it is a child of this one), so
# that the daemons that detach from their parent (the Java servers, a local cluster's servers) are
# found too. After each test that started a process (an audit hook counts the starts), the
# session's live processes are listed and the new ones noted as that test's. When the session ends
# (after every other fixture's teardown) the processes still running fail it, each named with its
# pid, its command line and the test that started it, and are then stopped (SIGTERM, SIGKILL after
# 5 s) so that none outlives the run.

_SESSION_VAR = "MQCTL_TEST_SESSION"
_SESSION_ID = f"{os.getpid()}-{time.time_ns()}"
os.environ[_SESSION_VAR] = _SESSION_ID
_SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
                           "os.system", "os.exec", "pty.spawn"})
#: how many processes were started so far (the audit hook's count)
_SPAWNS = [0]
#: (pid, start time) -> the test during which the process was first seen
_STARTED_BY: dict[tuple[int, float], str] = {}
#: (start, end, nodeid) of each test run so far, in CLOCK_BOOTTIME seconds (a process first seen
#: between two checks is named by its start time); _RUNNING the one running
_WINDOWS: list[tuple[float, float, str]] = []
_RUNNING: list[tuple[float, str]] = []
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _count_spawns(event: str, _args: tuple[object, ...]) -> None:
    if event in _SPAWN_EVENTS:
        _SPAWNS[0] += 1


sys.addaudithook(_count_spawns)


def _boottime() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """Note the processes each test (its set-up and teardown included) started, and when it ran."""
    spawns = _SPAWNS[0]
    _RUNNING[:] = [(_boottime(), item.nodeid)]
    try:
        return (yield)
    finally:
        start, nodeid = _RUNNING.pop()
        _WINDOWS.append((start, _boottime(), nodeid))
        if _SPAWNS[0] != spawns:
            for pid, (started, _cmd) in session_processes().items():
                _STARTED_BY.setdefault((pid, started), nodeid)


def session_processes() -> dict[int, tuple[float, str]]:
    """The processes this session started that still run, and its own children that exited but
    were never waited for (zombies: a ``Popen`` nobody waited for, which warns "subprocess N is
    still running" when it is collected): pid -> (start time in CLOCK_BOOTTIME seconds, what)."""
    me = os.getpid()
    marker = f"{_SESSION_VAR}={_SESSION_ID}".encode()
    found: dict[int, tuple[float, str]] = {}
    if not os.path.isdir("/proc"):
        return found
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        pid = int(entry.name)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                head, _, tail = f.read().rpartition(b")")
            fields = tail.split()
            child = int(fields[1]) == me
            if fields[0] == b"X" or (fields[0] == b"Z" and not child):
                continue
            if not child and marker not in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                continue
            if fields[0] == b"Z":
                what = f"{head.partition(b'(')[2].decode(errors='replace')}, exited but never waited for"
            else:
                what = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").strip().decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile, or not ours to read
        found[pid] = (int(fields[19]) / _TICKS, what)
    return found


def _started_by(pid: int, start: float) -> str:
    """The test that started the process: the one after which it was first seen, else the one(s)
    running when it started (one clock tick of slack)."""
    nodeid = _STARTED_BY.get((pid, start))
    if nodeid is not None:
        return nodeid
    slack = 1.5 / _TICKS
    windows = _WINDOWS + [(t0, _boottime(), nodeid) for t0, nodeid in _RUNNING]
    hits = [nodeid for t0, t1, nodeid in windows if t0 - slack <= start <= t1 + slack]
    if hits:
        return " or ".join(dict.fromkeys(hits))
    return "before the first test (at collection)" if not windows or start < windows[0][0] else "no test"


def _stop_processes(pids: list[int]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 5.0
        while pids and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)  # reap our own children
            live = session_processes()
            pids = [pid for pid in pids if pid in live]
            time.sleep(0.05)
        if not pids:
            return


@pytest.fixture(scope="session", autouse=True)
def no_process_left() -> Iterator[None]:
    """Fails the session when a process it started still runs after every fixture stopped (see
    the notes above), after a grace for those already shutting down (MQCTL_PROCESS_GRACE
    seconds, 10 by default)."""
    yield
    deadline = time.monotonic() + float(os.environ.get("MQCTL_PROCESS_GRACE", "10"))
    left = session_processes()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = session_processes()
    if not left:
        return
    lines = [f"  pid {pid}, started by {_started_by(pid, start)}: {cmd[:300]}"
             for pid, (start, cmd) in sorted(left.items())]
    _stop_processes(sorted(left))
    pytest.fail(f"{len(left)} process(es) started by the tests still ran at the end of the session "
                "(every process a test starts, it stops; they have now been stopped):\n" + "\n".join(lines),
                pytrace=False)
