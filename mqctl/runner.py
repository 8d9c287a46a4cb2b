# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Running one library operation for a command, once or under ``--watch``.

A command hands :func:`run` an ``async def op(client, **kwargs)`` from :mod:`wire.admin`; the
admin client is built from the global options on ``ctx.obj`` and closed afterwards. Errors are
not caught here: they travel to the boundary in :mod:`mqctl.app`, which prints one line and picks
the exit code.

:func:`watch` repeats the operation every ``seconds`` over the same client (connections are
kept), clearing the terminal and drawing the new result each time, until interrupted. A failed
round is shown as an error line and the loop carries on (a broker being restarted should not end
the watch).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import typer

from .settings import Settings

__all__ = ["check_outcomes", "finish", "print_outcomes", "run", "settings", "warn_failures", "watch"]

R = TypeVar("R")


def settings(ctx: typer.Context) -> Settings:
    """The global options, resolved on first use from what the command line gave (before or
    after the command), the environment, the profile and the defaults (:mod:`mqctl.settings`),
    and kept on the root context (``ctx.obj``)."""
    root = ctx.find_root()
    obj = root.obj if root.obj is not None else ctx.obj
    if isinstance(obj, Settings):
        return obj
    from .app import _GLOBALS_KEY
    from .settings import resolve

    s = resolve(root.meta.get(_GLOBALS_KEY))
    root.obj = s
    return s


def _client(s: Settings) -> Any:
    from wire.admin.client import AdminClient

    trace = s.output.info if s.verbose else None
    return AdminClient(s.namesrv, timeout=s.timeout, serialize=s.serialize, trace=trace,
                       credentials=s.credentials)


def run(ctx: typer.Context, op: Callable[..., Awaitable[R]], /, **kwargs: Any) -> R:
    """Run ``op(client, **kwargs)`` once and return its result."""
    s = settings(ctx)

    async def main() -> R:
        async with _client(s) as client:
            return await op(client, **kwargs)

    return asyncio.run(main())


def watch(ctx: typer.Context, seconds: float | None, op: Callable[..., Awaitable[R]],
          render: Callable[[R], None], /, **kwargs: Any) -> R | None:
    """Render ``op(client, **kwargs)`` once and return it, or every ``seconds`` until Ctrl-C
    (then ``None``: a watch ends with exit 0, whatever its last round showed)."""
    if not seconds:
        result = run(ctx, op, **kwargs)
        render(result)
        return result
    if seconds < 0.1:
        from .errors import UsageError

        raise UsageError("--watch needs at least 0.1 seconds")
    s = settings(ctx)
    out = s.output
    from wire.admin.errors import AdminError
    from wire.errors import WireError

    async def loop() -> None:
        async with _client(s) as client:
            while True:
                started = time.monotonic()
                failure: Exception | None = None
                try:
                    result = await op(client, **kwargs)
                except (WireError, AdminError) as err:
                    failure = err
                out.begin_refresh(f"every {seconds:g}s: {time.strftime('%Y-%m-%d %H:%M:%S')}")
                if failure is not None:
                    out.error(str(failure))
                else:
                    render(result)
                await asyncio.sleep(max(0.0, seconds - (time.monotonic() - started)))

    try:
        asyncio.run(loop())
    except KeyboardInterrupt:
        pass
    return None


def print_outcomes(out: Any, outcomes: Iterable[Any], ok: Callable[[Any], str],
                   failed: Callable[[Any], str]) -> None:
    """One line per outcome (:class:`wire.admin.common.Outcome`), as mqadmin prints them: ``ok(o)``
    on stdout for a server that took the request, ``failed(o)`` as a warning on stderr for one
    that did not (the rule of :func:`finish`)."""
    for o in outcomes:
        if o.ok:
            out.line(ok(o))
        else:
            out.warn(failed(o))


def warn_failures(out: Any, failures: Iterable[Any], label: Callable[[Any], str] | None = None) -> None:
    """One warning line per server that did not answer (``failures``: failed outcomes)."""
    for f in failures:
        out.warn(f"{label(f) if label else f.target}: {f.error}")


def finish(outcomes: Iterable[Any], what: str, *, servers: str = "servers", total: int | None = None) -> None:
    """The one rule for a command that asks several servers (docs/cli.md, "Partial answers"):
    what answered has been shown and each server that did not has had its warning line; the
    command then fails with one line and exit code 3 when every one of those servers could not be
    reached or did not answer in time, 1 when one of them answered an error. ``outcomes`` holds
    one outcome per server (or, with ``total``, only the failed ones)."""
    from .errors import EXIT_CONNECTION, EXIT_FAILURE, CliError

    items = list(outcomes)
    failed = [o for o in items if not o.ok]
    if not failed:
        return
    n = len(items) if total is None else total
    unreachable = sum(1 for o in failed if o.unreachable)
    parts = []
    if unreachable:
        parts.append(f"{unreachable} did not answer")
    if len(failed) > unreachable:
        parts.append(f"{len(failed) - unreachable} answered an error")
    raise CliError(f"{what}: {len(failed)} of {n} {servers} failed ({', '.join(parts)})",
                   exit_code=EXIT_CONNECTION if unreachable == len(failed) else EXIT_FAILURE)


def check_outcomes(outcomes: Iterable[Any], what: str) -> None:
    """:func:`finish` for the outcomes of a write to several servers."""
    finish(outcomes, what)
