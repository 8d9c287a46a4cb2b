# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What the admin library raises besides :class:`wire.WireError`.

Connection failures and timeouts are :class:`wire.aio.RemotingIOError` subclasses and pass
through unchanged; decoding failures are :class:`wire.DecodeError`.
"""

from __future__ import annotations

__all__ = ["AdminError", "BadRequest", "NotFound", "NotTaken", "ServerError", "ServerNotFound"]


class AdminError(Exception):
    """Root of the admin library's own errors."""


class ServerError(AdminError):
    """A server answered with a response code that is not a success for this request."""

    def __init__(self, code: int, remark: str | None, *, addr: str, request_code: int) -> None:
        from ..codes import RequestCode, ResponseCode

        try:
            name = ResponseCode(code).name
        except ValueError:
            name = "UNKNOWN"
        try:
            req = RequestCode(request_code).name
        except ValueError:
            req = str(request_code)
        self.code = code
        self.code_name = name
        self.remark = (remark or "").strip()
        self.addr = addr
        self.request_code = request_code
        text = f"{name}({code}) from {addr} to {req}"
        super().__init__(f"{text}: {self.remark}" if self.remark else text)


class NotFound(AdminError):
    """The servers answered, but what was asked for does not exist (no route, no such cluster,
    no consume stats, no message)."""


class BadRequest(AdminError):
    """The arguments cannot make a valid request (a malformed message id, an unknown perm)."""


class ServerNotFound(ServerError, NotFound):
    """A server answered that what was asked for does not exist (TOPIC_NOT_EXIST, ...): the
    server's own answer, with its address and the request, as :class:`ServerError` says it."""


class NotTaken(AdminError):
    """A server answered SUCCESS to a change, but reading it back shows the change did not take."""
