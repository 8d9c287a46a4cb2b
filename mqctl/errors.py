# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Exit codes and the errors that carry them to the CLI boundary.

| code | meaning |
| --- | --- |
| 0 | success |
| 1 | the server answered an error, a verdict failed, or input did not decode |
| 2 | usage: bad arguments or options |
| 3 | cannot connect, or timed out |
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
