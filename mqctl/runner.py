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

__all__ = ["check_outcomes", "run", "settings", "watch"]

R = TypeVar("R")


def settings(ctx: typer.Context) -> Settings:
    """The global options (``ctx.obj``), or the defaults when a command runs without the root."""
    root = ctx.find_root()
    obj = root.obj if root.obj is not None else ctx.obj
    if isinstance(obj, Settings):
        return obj
    from .settings import resolve

    s = resolve(namesrv=None, timeout=None, serialize=None, output="table", profile=None)
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
          render: Callable[[R], None], /, **kwargs: Any) -> None:
    """Render ``op(client, **kwargs)`` once, or every ``seconds`` until Ctrl-C."""
    if not seconds:
        render(run(ctx, op, **kwargs))
        return
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
        return


def print_outcomes(out: Any, outcomes: Iterable[Any], ok: Callable[[Any], str],
                   failed: Callable[[Any], str], *, warn: bool = False) -> None:
    """One line per outcome (:class:`wire.admin.topic.Outcome`), as mqadmin prints them: ``ok(o)``
    on stdout, or ``failed(o)`` as an error (a warning with ``warn``) on stderr."""
    for o in outcomes:
        if o.ok:
            out.line(ok(o))
        elif warn:
            out.warn(failed(o))
        else:
            out.error(failed(o))


def check_outcomes(outcomes: Iterable[Any], what: str) -> None:
    """Raise the CLI error for the failed ones among ``outcomes`` (:class:`wire.admin.topic.Outcome`):
    exit 3 when every failure is a connection failure, else 1."""
    from .errors import EXIT_CONNECTION, EXIT_FAILURE, CliError

    items = list(outcomes)
    failed = [o for o in items if not o.ok]
    if not failed:
        return
    conn = all(o.unreachable for o in failed)
    raise CliError(f"{what} failed on {len(failed)} of {len(items)}: "
                   + "; ".join(f"{o.target}: {o.error}" for o in failed),
                   exit_code=EXIT_CONNECTION if conn else EXIT_FAILURE)
