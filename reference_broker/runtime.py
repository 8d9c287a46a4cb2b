# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Running a reference server in the foreground: logging, signals, exit codes.

Both servers follow one shape: ``async with Server(config, host=..., port=...) as srv`` starts it
(``srv.port`` is the bound port, so ``port=0`` gives an ephemeral one for tests) and leaving the
block stops it cleanly. :func:`run_foreground` wraps that for ``mqctl namesrv start`` and
``mqctl broker start``: SIGINT/SIGTERM stop the server and the process exits 0; a port in use
or a server that fails to start exits 1 with one clear line; a bad configuration exits 2.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .config import ConfigError

__all__ = [
    "EXIT_BAD_CONFIG",
    "EXIT_FAILED",
    "GC_GEN0_THRESHOLD",
    "Service",
    "ServiceError",
    "run_async",
    "run_foreground",
    "setup_logging",
    "tune_gc",
]

T = TypeVar("T")

EXIT_FAILED = 1
EXIT_BAD_CONFIG = 2

log = logging.getLogger("reference_broker")


class ServiceError(Exception):
    """A server that cannot start (the message is shown to the operator as is)."""


class Service(Protocol):
    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc: object) -> Any: ...


def setup_logging(log_file: Path | None = None, verbose: int = 0) -> None:
    """Log to stderr, and to ``log_file`` as well when given."""
    level = logging.DEBUG if verbose > 1 else logging.INFO
    fmt = logging.Formatter("%(asctime)s %(levelname)-5s %(name)s: %(message)s")
    root = logging.getLogger()
    root.setLevel(level)
    for h in list(root.handlers):
        root.removeHandler(h)
    err = logging.StreamHandler(sys.stderr)
    err.setFormatter(fmt)
    root.addHandler(err)
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(log_file, encoding="utf-8")
        fh.setFormatter(fmt)
        root.addHandler(fh)


#: the allocations (less deallocations) of container objects between two youngest-generation
#: collections of a server process (CPython's default is 700); see :func:`tune_gc`
GC_GEN0_THRESHOLD = 10_000


def tune_gc() -> None:
    """Raise the youngest generation's collection threshold to :data:`GC_GEN0_THRESHOLD` (never
    lower it). A broker's requests that wait (SYNC_FLUSH sends until the group commit's sync:
    about 270 of them per sync at 16x64) keep their commands, results and answers alive across
    thousands of allocations, so at CPython's 700 the collector ran about 100 times a second and
    promoted them to the older generations, whose full collections walk the whole heap: 1.2-1.4 us
    of collection per SYNC_FLUSH send at 16x64 (ASYNC_FLUSH: 0.02-0.03), against 0.02-0.04 at
    10,000. A server makes little cyclic garbage; reference counting frees the rest."""
    gen0, *older = gc.get_threshold()
    if gen0 < GC_GEN0_THRESHOLD:
        gc.set_threshold(GC_GEN0_THRESHOLD, *older)


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on uvloop's event loop when it is installed (``MQCTL_EVENT_LOOP=asyncio`` opts
    out), else on asyncio's own. uvloop roughly halves the cost of every socket read and write.
    The process's collector is tuned for a server first (:func:`tune_gc`)."""
    tune_gc()
    if os.environ.get("MQCTL_EVENT_LOOP", "").lower() != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run(main)
    return asyncio.run(main)


def _address_in_use(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL)


def run_foreground(make: Callable[[], Service], what: str,
                   on_started: Callable[[Any], None] | None = None) -> int:
    """Run the service made by ``make`` until SIGINT/SIGTERM; return the process exit code."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        async with make() as srv:
            if on_started is not None:
                on_started(srv)
            await stop.wait()
            log.info("%s: shutting down", what)

    try:
        run_async(main())
    except ConfigError as exc:
        log.error("%s: bad configuration: %s", what, exc)
        return EXIT_BAD_CONFIG
    except ServiceError as exc:
        log.error("%s: %s", what, exc)
        return EXIT_FAILED
    except OSError as exc:
        if _address_in_use(exc):
            log.error("%s: cannot listen: %s", what, exc.strerror or exc)
        else:
            log.error("%s: %s", what, exc)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 0
    log.info("%s: stopped", what)
    return 0
