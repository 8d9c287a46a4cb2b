# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Exit codes and the errors that carry them to the CLI boundary.

- 0: success (also a closed output pipe: ``mqctl … | head -1`` ends quietly);
- 1: a server answered an error, what was asked for does not exist, a change did not take, a
  verdict failed, input did not decode, or the output cannot be written;
- 2: usage: bad arguments, options or config file values;
- 3: cannot connect, timed out, or the peer is not a RocketMQ server.

A command that asks several servers follows one rule when some do not answer
(:func:`mqctl.runner.finish`): 3 when each of those could not be reached or did not answer in
time, 1 when one of them answered an error (docs/cli.md, "Partial answers").
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3


class CliError(Exception):
    """An error to print as one line on stderr, exiting with ``exit_code``."""

    exit_code = EXIT_FAILURE

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(CliError):
    exit_code = EXIT_USAGE


class ConnectionFailed(CliError):
    exit_code = EXIT_CONNECTION


def exit_code_of(exc: BaseException) -> int | None:
    """The exit code for an error raised by the admin library or by :mod:`wire`, or ``None``
    for anything else (a bug, reported as an internal error)."""
    from wire.admin.errors import AdminError, BadRequest
    from wire.errors import WireError

    if isinstance(exc, WireError):
        from wire.aio import RemotingIOError

        # cannot connect, the connection closed under us, or no answer in time
        return EXIT_CONNECTION if isinstance(exc, RemotingIOError) else EXIT_FAILURE
    if isinstance(exc, AdminError):
        return EXIT_USAGE if isinstance(exc, BadRequest) else EXIT_FAILURE
    return None
